/*
 * report/layout_md.h - the two Markdown layouts: the default one (docs/report.md,
 * layout_md.c) and the reference one (reference_md.c); report.c dispatches on
 * rp_options.layout.
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

/* The reference tool's layout, byte for byte (docs/reference.md §8): its header, the kernel,
 * overlap and fuse tables, full names. Returns 0, or -1 on a write or allocation error. */
int rp_reference_markdown(FILE *f, const an_report *r);

#endif
