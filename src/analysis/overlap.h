/*
 * analysis/overlap.h - the Overlap Opportunity Table (docs/reference.md §6).
 *
 * For every stage of the formal traces, a sweep line measures how much of each kernel's
 * time runs alone on the GPU (exclusive) or under a kernel of another stream (hidden).
 * Kernels with much exclusive time are "headroom" rows (worth overlapping or fusing);
 * small kernels that are already hidden are "low-roi-hidden" rows. Each row gets a
 * Python scope from the mapping traces and a dependency-risk signal from its neighbours
 * on the same stream. Every threshold, weight and keyword comes from the rule packs
 * (classifier "overlap", settings overlap.*, matchers kernel_hint / scope_ignore /
 * scope_not_meaningful / low_signal, ladder overlap_scope): see docs/overlap.md.
 *
 * Single-trace mode: the caller passes the same traces as mapping and formal input (the
 * same tr_trace pointers); each trace is then read for kernels once, not twice.
 *
 * Ownership: an_overlap_analyze fills a caller-provided an_overlap_result whose strings
 * and arrays it owns; an_overlap_result_free releases them. Inputs are borrowed for the
 * duration of the call only (tr_trace is not modified except for tr_str_intern-free
 * lookups; nothing of it is kept in the result).
 */
#ifndef TRIAGE_ANALYSIS_OVERLAP_H
#define TRIAGE_ANALYSIS_OVERLAP_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/trace_view.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* One input trace of one side (mapping or formal), in the order discovery sorted them
 * (stage order, then name): the first trace of a stage wins. */
typedef struct an_overlap_trace {
  /* The trace and its stages (path stage, else per-kernel annotation stage). Borrowed.
   * The same view (same tr_trace) may appear on both sides; it is then read once. The
   * overlap table chooses its own process (it prefers only "TP00"); a kernel of that
   * process the view left unstaged counts as stage "all". */
  const an_trace_view *view;
  /* The kernel map built from this side's traces (mapping side: the mapping kernel map; formal
   * side: the formal traces' own map, the "formal payload"); may be NULL. Used for the relaxed name
   * lookup (docs/reference.md §4.3) of formal kernels among mapping kernels, for the last scope
   * fallback (the map entry's best location) and, formal side, for kernels the mapping traces say
   * nothing about (deviation O3). Borrowed. */
  const an_kernel_map *kmap;
  /* Formal side: the trace's step windows (analysis/steps.h), so recoverable time is per
   * the same steps as the time account and the summary; NULL: the stage annotations are
   * counted instead. Borrowed. */
  const struct an_steps *steps;
} an_overlap_trace;

typedef struct an_overlap_options {
  const char *pid_substring; /* --pid-substring: only PIDs containing it; NULL = any */
  long table_limit;          /* --overlap-table-limit; 0 = no limit */
  bool single_trace;         /* the traces are their own mapping (header line only) */
  /* the time account of the formal traces (analysis/timeline.h), borrowed, or NULL: its
   * per-instance collective waits (analysis/waits.h) split a collective row's exposed
   * time into transfer and wait, and decide "rank skew (wait)" (issue 31) */
  const struct an_timeline *timeline;
} an_overlap_options;

/* The stages (an_overlap_stage and its rows: analysis/model.h) in render order. */
typedef struct an_overlap_result {
  bool single_trace;
  double min_share_pct; /* overlap.min_share_pct, for the placeholder text */
  size_t n_stages;
  an_overlap_stage *stages;
} an_overlap_result;

typedef enum an_overlap_status {
  AN_OVERLAP_OK = 0,
  AN_OVERLAP_ERR_NOMEM = 1,
  AN_OVERLAP_ERR_ARGS = 2,
  AN_OVERLAP_ERR_LIMIT = 3 /* more than AN_MAX_ACTIVE_KERNELS kernels run at once */
} an_overlap_status;

/* Runs docs/reference.md §6.1-§6.6 over the formal traces with scopes from the mapping traces. On
 * failure *out is left empty (safe to free). */
an_overlap_status an_overlap_analyze(const an_overlap_trace *mapping, size_t n_mapping,
                                     const an_overlap_trace *formal, size_t n_formal,
                                     const te_rules *rules, const an_overlap_options *opt,
                                     an_overlap_result *out);
void an_overlap_result_free(an_overlap_result *res);

/* Review defect 3: a "try fusion" row keeps its advice only when a fusion row of the
 * stage s (its fuse table: split, shown, an opportunity) holds its kernel as a piece; it
 * then names that pattern and recovers at most the piece's eliminated memory round trip
 * (hbm_tbs: the device's HBM bandwidth in TB/s, 0 unknown). Other rows lose the advice
 * (already fused, else restructure); the rows are ranked again. Nothing changes without
 * overlap.mechanism_actions (the reference's rows). */
void an_overlap_bind_fusion(an_overlap_stage *o, const an_stage_report *s, const te_rules *rules,
                            double hbm_tbs);

/* Review 3: when the summary found the GPU waiting for the host in stage o (b, from
 * an_summary_build), a P1 row whose saving cannot shorten that step (any GPU-side saving;
 * on a launch-bound step, any but a fusion, which launches fewer kernels) is P2: check the
 * host first. Marks the stage so the report says why. Nothing changes without
 * overlap.mechanism_actions. */
void an_overlap_follow_bottleneck(an_overlap_stage *o, const an_bottleneck *b,
                                  const te_rules *rules);

/* Deviation O22: the wait rows of stage o tell the story the summary's wait item tells
 * (one classification, an_wait_story): on a stage whose wait sits mid-step, a rank-skew
 * row says "slow mid-step (wait)". Nothing changes without overlap.mechanism_actions. */
void an_overlap_follow_waits(an_overlap_stage *o, an_wait_story story, const te_rules *rules);

/* Brief 12 defect 1: the host copy rows of stage o (host_copy, bytes stated) take one
 * direction of the device's host link, host_link_gbs (both directions, the device pack's;
 * 0: not stated, nothing is judged), and are slow under
 * overlap.copy_lane.host_link_min_fraction of it. Nothing changes without
 * overlap.mechanism_actions. */
void an_overlap_copy_rates(an_overlap_stage *o, double host_link_gbs, const te_rules *rules);
/* A copy row's rate in GB/s: copy_bytes / copy_us (bytes per us = MB/s); 0 when it states
 * no time. */
double an_overlap_copy_gbs(const an_overlap_row *r);

/* Whether row r of stage o recovers less than the stage's bar: overlap.recoverable.floor_ms
 * per step, or overlap.recoverable.min_step_pct of the step (deviation O25). */
bool an_overlap_row_under_bar(const an_overlap_stage *o, const an_overlap_row *r);
/* Whether wait row r's measured transfer has a lever and hides at least the stage's bar
 * (transfer_bound_ms; deviation O30): the line under the table, and an item. */
bool an_overlap_transfer_shown(const an_overlap_stage *o, const an_overlap_row *r);

/* docs/reference.md §6.7 pieces, exposed for tests. */
/* Tight-gap threshold for a kernel of duration dur_us. */
double an_overlap_tight_gap(const te_rules *rules, double dur_us);
/* True when two scopes share a family (same path or same function name). */
bool an_overlap_same_scope_family(const char *a, const char *b);

#endif
