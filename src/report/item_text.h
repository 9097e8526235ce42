/*
 * report/item_text.h - the words of one "What to try first" item, written once for every
 * format (review 9 defect 2: the JSON report's item said other words than the Markdown and
 * HTML ones). rp_item_parts emits an item's line as parts; the Markdown list, the HTML list
 * and the JSON report's "text" and "evidence" render those same parts.
 *
 * Ownership: a part's strings live for the callback's call only; rp_item_text's string is
 * the caller's to free.
 */
#ifndef TRIAGE_REPORT_ITEM_TEXT_H
#define TRIAGE_REPORT_ITEM_TEXT_H

#include "analysis/model.h"

typedef enum rp_part {
  RP_PART_ACTION = 0,  /* the action (bold in Markdown) */
  RP_PART_TEXT = 1,    /* words and punctuation */
  RP_PART_NAME = 2,    /* a name the trace gives: an activity, a pattern (code) */
  RP_PART_KERNEL = 3,  /* a kernel's full name: each format shows its display name */
  RP_PART_BOUND = 4,   /* the figure of the bound, "0.73 ms/step" (bold in Markdown) */
  RP_PART_BASIS = 5,   /* the basis phrase; the names in it are in backticks */
  RP_PART_LINK = 6,    /* an evidence row: text is its label, ref its anchor */
  RP_PART_LOCATION = 7 /* a Python location "path:line func" (code) */
} rp_part;

typedef void (*rp_part_fn)(void *ctx, rp_part part, const char *text, const char *ref);

/* Emits item it's line from its action to its last evidence link; the list's numbering and
 * the line's end are the format's own. */
void rp_item_parts(const an_summary_item *it, an_workload w, rp_part_fn fn, void *ctx);

/* A tuning item's FP8 alternative (an_summary_item.alt_us) as a precision item of its
 * own, for its words (action, basis); false when it has none. */
bool rp_item_alternative(const an_summary_item *it, an_summary_item *alt);

/* The item's line as plain text (names and kernels as they are, links by their label), the
 * JSON report's "text"; malloc'd, NULL when out of memory. */
char *rp_item_text(const an_summary_item *it, an_workload w);

#endif
