/*
 * analysis/summary.h - the report's "What to try first" list, the per-stage time by
 * category and the trace limits, computed from an assembled report model.
 *
 * Each table has ONE function giving a row's GPU time at stake, so changing what counts
 * (e.g. an overlap row's exposed time, a fusion's estimated saving) is a one-line change.
 *
 * Ownership: an_summary_build fills the arrays it allocates into *out; an_summary_free
 * releases them. The items point into the report's rows (kernel names, locations).
 */
#ifndef TRIAGE_ANALYSIS_SUMMARY_H
#define TRIAGE_ANALYSIS_SUMMARY_H

#include "analysis/model.h"
#include "triage/settings.h"

double an_kernel_at_stake(const an_kernel_row *r);
double an_overlap_at_stake(const an_overlap_row *r, size_t n_steps);
double an_fuse_at_stake(const an_fuse_row *r);

typedef struct an_summary_data {
  an_summary_item *items;
  size_t n_items;
  an_category_time *categories; /* all stages' categories, stage after stage */
  size_t n_categories;
} an_summary_data;

/* Builds the summary items (ranked and capped) and each stage's category times (stages
 * get their n_categories/categories set; hence the non-const stages). */
an_status an_summary_build(an_report *rep, an_stage_report *stages, const te_settings *s,
                           an_summary_data *out);
/* Fills rep->limits from the model (short window: report.short_window_ms). */
void an_summary_limits(an_report *rep, const te_settings *s);
void an_summary_free(an_summary_data *d);

#endif
