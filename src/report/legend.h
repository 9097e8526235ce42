/*
 * report/legend.h - the Legend at the end of every report, written once for every format.
 * An entry's text uses three inline marks only, `code`, **bold** and *em* (Markdown's),
 * which each renderer turns into its own (the HTML: rp_hw_marked); C escapes aside, the
 * text is plain. The entries are fixed words, no judgement and no trace text: marks in
 * them are the report's own.
 *
 * Ownership: the entries are static; the caller borrows them.
 */
#ifndef TRIAGE_REPORT_LEGEND_H
#define TRIAGE_REPORT_LEGEND_H

#include <stddef.h>

typedef struct rp_legend_entry {
  const char *term; /* the word or column head it defines */
  const char *text; /* its definition, with `code`, **bold** and *em* marks */
} rp_legend_entry;

/* The entries in the order the reports print them; *n receives their number. */
const rp_legend_entry *rp_legend(size_t *n);

#endif
