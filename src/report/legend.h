/*
 * report/legend.h - the Legend at the end of every report, written once for every format.
 * An entry's text uses two inline marks only, `code` and **bold** (Markdown's), which
 * each renderer turns into its own; C escapes aside, the text is plain.
 *
 * Ownership: the entries are static; the caller borrows them.
 */
#ifndef TRIAGE_REPORT_LEGEND_H
#define TRIAGE_REPORT_LEGEND_H

#include <stddef.h>

typedef struct rp_legend_entry {
  const char *term; /* the word or column head it defines */
  const char *text; /* its definition, with `code` and **bold** marks */
} rp_legend_entry;

/* The entries in the order the reports print them; *n receives their number. */
const rp_legend_entry *rp_legend(size_t *n);

#endif
