/*
 * analysis/summary_internal.h - the pieces of "What to try first" shared by summary.c
 * (ranking, merging, categories, limits) and summary_items.c (the candidates of each
 * table and of the time account). Prefix sm_ inside the summary files.
 *
 * Ownership: an sm_ctx owns its growing arrays until summary.c hands them to the
 * an_summary_data, and its resolved levers (sm_levers_free); strings and matchers are
 * borrowed from the report and the rules.
 */
#ifndef TRIAGE_ANALYSIS_SUMMARY_INTERNAL_H
#define TRIAGE_ANALYSIS_SUMMARY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "triage/rules.h"
#include "triage/settings.h"

/* What the items of one stage divide by and may say. */
typedef struct sm_stage {
  const an_stage_report *st;
  size_t n_steps;    /* counted steps; 0: the stage window is the step */
  double per;        /* 1 / steps (1 for a window) */
  double step_us;    /* the mean step (the window when it has no steps) */
  double in_step;    /* share of the stage's kernel time inside counted steps */
  bool eager;        /* kernels launched one by one (summary.chain_max_graph_pct) */
  bool bottleneck;   /* host-side idle + collective wait >= summary.bottleneck_idle_pct */
  bool launch_bound; /* most host-side idle is launch spacing (launch gaps, eager short gaps) */
  bool alloc_bound;  /* most host-side idle is the allocator inside the counted steps */
  bool host_bound;   /* the time account says the step waits on the host: the bottleneck
                        gate passes and the host's idle (nothing queued) is most of what
                        it counted (host >= queued + collective wait); an item's own idle
                        never decides it (blind review 20 defect 2) */
  double host_idle_us, wait_us; /* per step */
  double all_idle_us;           /* per step, every idle cause (the time account's idle) */
  /* per step, the idle the GPU spends with its next work issued and waiting (dependency,
   * event waits) or waiting with the host on a collective's result (await): with
   * host_idle_us every idle kind that stalls the step (setup is one-time; short gaps are
   * launch spacing, the host's only in eager mode; unknown has no launch record to say the
   * step waited rather than the capture dropping the call) */
  double queued_idle_us;
} sm_stage;

/* One lever of summary.levers, resolved once per summary (sm_levers_resolve): its text (the
 * pack's first, NULL when it lists none), the text for this run (summary.lever_paths for
 * the run's framework and platform, else the text), its matchers lever_ID and
 * lever_ID_within, _op, _with, _with_kernel, _fused (NULL: the packs have none), and
 * whether it names a sync (summary.sync_levers) or the absence of one
 * (summary.no_sync_levers). */
typedef struct sm_lever {
  const char *id, *text, *run_text;
  const char *title; /* summary.lever_titles' action for a kernel lever; NULL: none */
  double bytes_kept; /* summary.lever_bytes_kept: < 1 a narrowing lever (basis narrowed) */
  const te_matcher *name, *within, *op, *with, *with_kernel, *fused;
  bool sync, no_sync;
} sm_lever;

/* One summary.cast_hints entry, resolved once per summary: its matcher cast_next_ID on the
 * kernel after a cast and its text (entries without either are left out). */
typedef struct sm_cast_hint {
  const te_matcher *next;
  const char *text;
} sm_cast_hint;

typedef struct sm_ctx {
  const an_report *rep; /* its Ranks sections name the rank a wait is for */
  const te_rules *rules;
  const te_settings *s;
  an_workload workload;
  sm_stage g;          /* the stage whose candidates are being made */
  an_stage_report *to; /* the same stage, for what the items leave to the Limits */
  an_summary_item *v;
  size_t n, cap;
  size_t *koff; /* per item: its first kernel in kpool (pointers are fixed at the end) */
  size_t cap_off;
  const char **kpool;
  size_t nk, capk;
  size_t *roff; /* per item: its first time-account row in rpool */
  size_t cap_roff;
  an_item_row *rpool;
  size_t nr, capr;
  bool nomem;
  /* the packs' levers, resolved once (sm_levers_resolve): summary.levers in pack order;
   * summary.kernel_levers as entries of it (those with a text); the texts the time
   * account's items take by role (NULL: none) */
  sm_lever *levers;
  size_t n_levers;
  const sm_lever **kernel_levers;
  size_t n_kernel_levers;
  const char *eager_dispatch, *queued_outside, *designed_sync, *queued_peers, *queued_graph;
  const char *eager_dispatch_compiled; /* eager_dispatch's text for a compiled run */
  /* the packs' matchers the items ask per row or per item, found once (NULL: none):
   * queued_peer_stage, precision_dequant_kernel */
  const te_matcher *peer_stage, *dequant_kernel;
  const te_matcher *graph_launch; /* lever_graph_launch: a queued graph's launch call */
  const te_matcher *fp32_simt, *tf32_matmul, *tf32_gemm; /* the matchers of those names */
  sm_cast_hint *cast_hints; /* summary.cast_hints in pack order, with their matchers */
  size_t n_cast_hints;
} sm_ctx;

/* Resolves the packs' levers into c (its rules, settings and report set): false when out
 * of memory. sm_levers_free releases them. */
bool sm_levers_resolve(
    sm_ctx *c); /* and the matchers items ask per row (peer_stage, dequant_kernel, cast hints) */
void sm_levers_free(sm_ctx *c);

/* Appends an item of the current stage with its bound per step (dropped under the share
 * bar); its kernels are added with sm_item_kernel. NULL when dropped or out of memory. */
an_summary_item *sm_add(sm_ctx *c, an_summary_kind kind, an_action action, size_t row,
                        const char *location, double bound_us, an_bound_basis basis,
                        double basis_us);
void sm_item_kernel(sm_ctx *c, const char *kernel);
/* Adds an evidence row's anchor to item into (not its own, not twice); past AN_ITEM_MORE
 * the row is counted in more_left, which the line states. sm_item_more: the anchor of row
 * `row` of table kind ("kernel", "wait", ...) of stage stage_id. */
void sm_more(an_summary_item *into, const char *anchor);
void sm_item_more(an_summary_item *it, const char *kind, const char *stage_id, size_t row);
/* Adds a time-account row (part) whose figures the last added item sums. */
void sm_item_row(sm_ctx *c, size_t row, an_row_part part);

/* The candidates of the current stage. */
void sm_idle_items(sm_ctx *c);
/* The stage's host blocked in a read back (an_stage_timeline.host_block): one item, bound by
 * the GPU idle inside the calls (review 18 defect 8). */
void sm_host_block_item(sm_ctx *c);
void sm_wait_items(sm_ctx *c);
void sm_fusion_items(sm_ctx *c);
void sm_overlap_items(sm_ctx *c);
/* A wait row's measured transfer that its row's action hides under compute (a pipeline): one
 * overlap item each, bound by an_overlap_row.transfer_bound_ms (review 22 defect 9). */
void sm_transfer_items(sm_ctx *c);
void sm_chain_item(sm_ctx *c);
void sm_kernel_lever_items(sm_ctx *c);
/* Kernels whose fused op list is only a dtype cast (matcher cast_kernel): one item from
 * summary.cast_min_pct of the step (review 20 defect 9). */
void sm_cast_item(sm_ctx *c);
void sm_roofline_items(sm_ctx *c);
/* After sm_roofline_items: the FP8 lever, as the alternative of the tuning items naming its
 * rows and one precision item of the others (summary_roofline.c). */
void sm_precision_item(sm_ctx *c);
/* The batch lever of a decode stage whose weight GEMMs are all memory-bound (review 18
 * defect 9; summary.batch_*). */
void sm_batch_item(sm_ctx *c);
/* The FP32 matmul lever of a stage: TF32 for GEMMs on the CUDA cores, autocast for a stage
 * whose matmuls run in FP32 or TF32 (review 20 defects 3 and 6; summary_fp32.c). */
void sm_fp32_item(sm_ctx *c);
/* How near their attainable rate the stage's GEMMs run, on the stage (an_gemm_rate, review
 * 22 defect 8; summary.gemm_*): no item, a line above them. */
void sm_gemm_rate(sm_ctx *c);
/* Whether matcher m (NULL: none) matches NUL-terminated s (NULL: no). */
bool sm_hits(const te_matcher *m, const char *s);
/* Whether kernel row r is a GEMM on the CUDA cores that a tensor-core format of the run's
 * device speeds up: its lever is the FP32 item's, never a tuning pass. */
bool sm_fp32_simt(const sm_ctx *c, const an_kernel_row *r);
/* The run's device's dense peak of format p (TFLOP/s), 0 when its pack states none or no
 * device. */
double sm_device_peak(const sm_ctx *c, te_peak p);
void sm_investigate_items(sm_ctx *c);
/* The current stage's host-overhead lead (host span over the GPU span), added when no item
 * of the run cleared the bar. */
void sm_host_overhead_lead(sm_ctx *c);

/* Pools the ranked items v[0..n) of one stage and one root cause, each small
 * (summary.pool_below_pct), into one (members, kernels and rows stored in out) and marks
 * the smaller leads (summary.lead_below_pct, a hedged lever); returns the items left.
 * nomem set when out of memory (summary_pool.c). */
struct an_summary_data;
size_t sm_pool_items(const te_settings *s, an_summary_item *v, size_t n,
                     struct an_summary_data *out, bool *nomem);

/* Whether fuse row r of the current stage makes a fusion item. */
bool sm_fusion_acts(const sm_ctx *c, const an_fuse_row *r);

/* A kernel row's per-step time (its time inside counted steps over the step count). */
double sm_row_per_step(const sm_ctx *c, const an_kernel_row *r);
/* Whether kernel name is one of the stage's collectives (its time account's). */
bool sm_is_collective(const sm_ctx *c, const char *name);
/* The stage's kernel row of a canonical name, or NULL. */
const an_kernel_row *sm_row_of(const sm_ctx *c, const char *name);

#endif
