/*
 * report/layout_md.h - the default Markdown layout (docs/report.md); report.c keeps the
 * reference layout and dispatches on rp_options.layout.
 *
 * Ownership: the model and rules are borrowed for the call.
 */
#ifndef TRIAGE_REPORT_LAYOUT_MD_H
#define TRIAGE_REPORT_LAYOUT_MD_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/model.h"
#include "triage/rules.h"

/* rules may be NULL (no family display rules, no stack hints); full_names: print full
 * kernel names instead of display names. Returns 0, or -1 on a write or allocation error. */
int rp_layout_markdown(FILE *f, const an_report *r, const te_rules *rules, bool full_names);

#endif
