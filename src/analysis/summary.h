/*
 * analysis/summary.h - the report's "What to try first" list, the per-stage time by
 * category and the trace limits, computed from an assembled report model.
 *
 * Every item is an action with a bound per step (docs/report.md "What to try first"):
 * what the action can win in one step at most, the basis of that bound (idle under a named
 * CPU activity, collective wait above a floor, a roofline fraction, a fusion's saving, a
 * chain's kernel time, an overlap row's recoverable time), and its evidence rows. One item
 * per root cause: rows of the same kernel merge into the best-scored item. A stage whose
 * GPU idles most of each step for the host or for other ranks gets no GPU-side items.
 *
 * Ownership: an_summary_build fills the arrays it allocates into *out; an_summary_free
 * releases them. The items point into the report's rows (kernel names, locations) and the
 * stages' time accounts.
 */
#ifndef TRIAGE_ANALYSIS_SUMMARY_H
#define TRIAGE_ANALYSIS_SUMMARY_H

#include "analysis/model.h"
#include "triage/rules.h"
#include "triage/settings.h"

typedef struct an_summary_data {
  an_summary_item *items;
  size_t n_items;
  const char **kernels;         /* the items' kernel lists */
  an_item_row *rows;            /* the items' time-account rows */
  an_category_time *categories; /* all stages' categories, stage after stage */
  size_t n_categories;
  an_summary_item *pooled; /* the pooled items' members, their kernels and rows */
  const char **pool_kernels;
  an_item_row *pool_rows;
} an_summary_data;

/* Builds the summary items (ranked, merged and capped) and each stage's category times
 * (stages get their n_categories/categories set; hence the non-const stages). */
an_status an_summary_build(an_report *rep, an_stage_report *stages, const te_rules *rules,
                           an_summary_data *out);
/* Fills rep->limits from the model (short window: report.short_window_ms). */
void an_summary_limits(an_report *rep, const te_settings *s);
/* Numbers the filtered-queued stage's re-profile item among rep's items
 * (an_trace_limits.filtered_queued_item); an_summary_build calls it once they are final. */
void an_summary_reprofile_item(an_report *rep);
/* Whether an item's action is to capture again: the re-capture item of a trace that lost
 * graph-replayed work (graph_unrecorded), or the re-profile item of a trace filtered or
 * sampled to GPU work (a dependency item of idle kind filtered). Capturing wins nothing
 * itself, so it has no bound (basis unbounded, basis_us the idle it leaves unmeasured or
 * unexplained) and comes before every other item (blind review 19 defect 3:
 * hta_sampled_2ranks' "profile again unfiltered" read "at most 283.65 ms/step"). */
bool an_summary_capture_again(const an_summary_item *it);
/* Whether a fusion item's path is in a framework release with a switch the packs state
 * (since.switch) and no port to another platform: its action is to upgrade to that release
 * and set the switch, not a port (review 19 defect 12: vLLM's pass_config rows read "Port the
 * upstream fused path"). */
bool an_summary_upgrade(const an_summary_item *it);
void an_summary_free(an_summary_data *d);

/* Whether stage st launches its kernels one by one (its graph-replayed share of the kernel
 * time under summary.chain_max_graph_pct): its elementwise chains are fusion candidates. */
bool an_summary_eager(const te_rules *rules, const an_stage_report *st);

/* The lever the packs name for an operation (summary.levers: matcher lever_ID names it),
 * or NULL (op NULL too). Borrowed from the rules. */
const char *an_summary_lever(const te_rules *rules, const char *op);
/* Whether kernel row r of st is a piece of an eager elementwise or copy chain, which a
 * compiler or fused kernel folds (summary.chain_categories, not an excluded kind, not an
 * already fused kernel, not chain_exclude_kernel, not a collective). */
bool an_summary_chain_row(const te_rules *rules, const an_stage_report *st, const an_kernel_row *r);
/* The same by the row alone (its category, kind, name and opaque launches): a link of the
 * chains as they ran (analysis/chain_runs.h), which sees no collective among its kinds. */
bool an_summary_chain_link(const te_rules *rules, const an_kernel_row *r);
/* The id of an action in summary.weights ("sync", "tune", ...). */
const char *an_summary_action_id(an_action a);
/* The part of an item's time its basis names a part of (the JSON report's first_us): a
 * wait's first collective of each step, a chain's time under opaque ops, a fold's largest
 * piece; 0 for the other bases. */
double an_summary_item_part_us(const an_summary_item *it);
/* The anchor of an evidence row, "KIND-STAGE-ROW" with the stage kept to [a-z0-9-]
 * ("kernel-decode-3"): the summary's items, the Markdown and the HTML rows agree on it. */
void an_summary_anchor(char *out, size_t cap, const char *kind, const char *stage, size_t row);

#endif
