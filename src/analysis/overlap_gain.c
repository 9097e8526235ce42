/*
 * overlap_gain.c - recoverable time of the overlap rows (issue 16): what each row's action
 * could win per step, the ranking by it and the floor under which rows collapse.
 *
 * An overlap action (a side stream, prefetch) can only hide a row's exposed time under
 * work that runs meanwhile on another stream: the stage's compute not already hiding the
 * row. A single-stream stage has no such lane until it is restructured (two-batch
 * overlap, async TP), so its overlap rows recover 0. Fusion removes the row's own pass and
 * needs no concurrency: its bound is the exposed time alone. A restructuring makes the lane
 * a collective lacks, so it hides at most the stage's compute. Wait (rank skew) is never
 * counted: only the steady exposed time is. Also the launch context the mechanism and
 * dependency rules read (ov_launch_context).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap_internal.h"
#include "util/sort.h"

/* Whether the row's recommendation asks for a change that wins time (issue 31: a skip,
 * an already fused kernel, one-time setup and a wait for other ranks recover nothing by
 * themselves). */
static bool ov_gains(an_recommendation r) {
  return r == AN_RECOMMEND_TRY_OVERLAP || r == AN_RECOMMEND_TRY_FUSION ||
         r == AN_RECOMMEND_CHECK_DEPS || r == AN_RECOMMEND_ELIMINATE ||
         r == AN_RECOMMEND_RESTRUCTURE;
}

double ov_gain_row(const an_overlap_row *r, double stage_compute_us, size_t max_streams,
                   size_t n_steps) {
  double rec = r->exposed_ms;
  if (!ov_gains(r->recommendation)) return 0;
  /* fusion and elimination remove the row's own pass: no concurrency needed */
  if (r->recommendation != AN_RECOMMEND_TRY_FUSION && r->recommendation != AN_RECOMMEND_ELIMINATE) {
    double avail = (stage_compute_us - r->hidden_by_compute_us) / 1000.0;
    /* a copy-engine transfer can move to a side stream even on a single-stream stage; a
     * restructuring (two-batch overlap, async TP) is what makes the lane, so it hides at
     * most the compute the stage has beside the collective */
    bool lane = max_streams > 1 || r->copy_engine || r->own_lane ||
                r->recommendation == AN_RECOMMEND_RESTRUCTURE;
    if (!lane || avail < 0) avail = 0;
    if (avail < rec) rec = avail;
  }
  /* fusion removes the piece's memory round trip, not its work (overlap_partner.c) */
  if (r->recommendation == AN_RECOMMEND_TRY_FUSION && r->fusion_partner != AN_PARTNER_NONE &&
      r->fusion_bound_ms < rec)
    rec = r->fusion_bound_ms;
  /* per step: the row's share inside the counted steps, over their number (a warm-up
   * or a previous step's tail outside them is no part of a step) */
  if (n_steps && r->total_us > 0 && r->steps_us < r->total_us)
    rec *= (r->steps_us > 0 ? r->steps_us : 0) / r->total_us;
  return n_steps ? rec / (double)n_steps : rec;
}

void ov_gain_rank(an_overlap_stage *st, double stage_compute_us, size_t lanes,
                  const te_settings *set) {
  for (size_t i = 0; i < st->n_rows; i++)
    st->rows[i].recoverable_ms = ov_gain_row(&st->rows[i], stage_compute_us, lanes, st->n_steps);
  if (!set->overlap_recoverable_rank) return;
  for (size_t i = 1; i < st->n_rows; i++) { /* insertion sort: stable, a handful of rows */
    an_overlap_row tmp = st->rows[i];
    size_t j = i;
    while (j > 0 && st->rows[j - 1].recoverable_ms < tmp.recoverable_ms) {
      st->rows[j] = st->rows[j - 1];
      j--;
    }
    st->rows[j] = tmp;
  }
}

/* Rows above the floor go first (ut_stable_partition): a row's index is its printed number
 * (O1, O2, ...), so a row folded into the line under the table leaves no gap. */
static bool above_floor(const void *row) { return !((const an_overlap_row *)row)->below_floor; }

void ov_gain_floor(an_overlap_stage *st, const te_settings *set) {
  st->recoverable_floor_ms = set->overlap_recoverable_floor_ms;
  st->n_below_floor = 0;
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *r = &st->rows[i];
    /* review 3: "act" needs something to win. A row whose action recovers nothing here
     * (the largest piece of a fusion, overlap on a stage with no compute beside it) is
     * not put forward as P1: nothing to win there (P4) */
    if (set->overlap_mechanism_actions && r->priority == AN_PRIORITY_P1 && r->recoverable_ms <= 0)
      r->priority = AN_PRIORITY_P4;
    /* one-time setup is set apart and a wait row reports rank skew / a bubble, not
     * headroom: neither is folded away with the noise; every other row under the floor
     * is, a restructuring with nothing to hide included (review 3) */
    r->below_floor = st->recoverable_floor_ms > 0 && r->recommendation != AN_RECOMMEND_ONE_TIME &&
                     r->verdict != AN_OVERLAP_WAIT && r->recoverable_ms < st->recoverable_floor_ms;
    st->n_below_floor += r->below_floor;
  }
  ut_stable_partition(st->rows, st->n_rows, sizeof *st->rows, above_floor);
}

void an_overlap_follow_bottleneck(an_overlap_stage *o, const an_bottleneck *b,
                                  const te_rules *rules) {
  if (!te_rules_settings(rules)->overlap_mechanism_actions || !b->stage_label || !o->label ||
      strcmp(b->stage_label, o->label) != 0)
    return;
  o->gpu_waits = true;
  o->launch_bound = b->launch_bound;
  for (size_t i = 0; i < o->n_rows; i++) {
    an_overlap_row *r = &o->rows[i];
    bool fewer_kernels = r->recommendation == AN_RECOMMEND_TRY_FUSION;
    if (r->priority == AN_PRIORITY_P1 && !(b->launch_bound && fewer_kernels))
      r->priority = AN_PRIORITY_P2;
  }
}

void ov_restructure_options(an_overlap_stage *st, const te_settings *set) {
  st->n_restructure_options = 0;
  st->restructure_options = NULL;
  /* the options (two-batch overlap, async TP, a fused all-reduce, another parallel layout)
   * move communication: under a compute kernel's restructure row, or on a run with no
   * collective in the table, they advise something the run does not do (review 2); under
   * a folded row they would be a list no printed row asks for (review 3) */
  for (size_t i = 0; i < st->n_rows; i++)
    if (st->rows[i].recommendation == AN_RECOMMEND_RESTRUCTURE && !st->rows[i].below_floor &&
        st->rows[i].category &&
        te_string_list_has(&set->overlap_collective_categories, st->rows[i].category)) {
      st->n_restructure_options = set->overlap_restructure_options.n;
      st->restructure_options = set->overlap_restructure_options.items;
      return;
    }
}

/* Whether CPU op o spans call's start on call's thread (cc) and m matches its name, which
 * then goes to hit. Time first: few ops span the call, so the context is rarely read. */
static bool ov_op_around(const tr_trace *t, const tr_event *o, const tr_event *call,
                         const tr_event_ctx *cc, const te_matcher *m, char *hit, size_t cap) {
  if (o->ts > call->ts || o->ts + tr_event_dur(t, o) < call->ts) return false;
  const tr_event_ctx *oc = tr_trace_ctx(t, o);
  if (oc->pid != cc->pid || oc->tid != cc->tid) return false;
  const char *nm = tr_str_get(t, o->name);
  if (!te_matcher_match(m, nm, strlen(nm))) return false;
  if (hit && cap) snprintf(hit, cap, "%s", nm);
  return true;
}

/* ---------------------------------------------------------------- launch context */

#define OV_LAUNCH_BLOCK 64u

static size_t ov_blocks(size_t n) { return (n + OV_LAUNCH_BLOCK - 1) / OV_LAUNCH_BLOCK; }

static size_t ov_block_end(size_t k, size_t n) {
  return (k + 1) * OV_LAUNCH_BLOCK < n ? (k + 1) * OV_LAUNCH_BLOCK : n;
}

/* Per block of the kind's events in file order: the least and greatest correlation
 * (none: an empty interval, INT64_MAX then INT64_MIN). NULL when out of memory. */
static int64_t *ov_corr_blocks(const tr_trace *t, tr_kind kind) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  size_t nb = ov_blocks(n);
  int64_t *b = malloc((nb ? nb : 1) * 2 * sizeof *b);
  if (!b) return NULL;
  for (size_t k = 0; k < nb; k++) {
    b[2 * k] = INT64_MAX;
    b[2 * k + 1] = INT64_MIN;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t c = tr_event_correlation(t, &ev[i]);
    if (c == TR_NO_ID) continue;
    int64_t *lo = &b[2 * (i / OV_LAUNCH_BLOCK)], *hi = lo + 1;
    if (c < *lo) *lo = c;
    if (c > *hi) *hi = c;
  }
  return b;
}

/* Per block of the kind's events in file order: the earliest start and the latest end.
 * NULL when out of memory. */
static double *ov_span_blocks(const tr_trace *t, tr_kind kind) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  double *b = malloc((ov_blocks(n) ? ov_blocks(n) : 1) * 2 * sizeof *b);
  if (!b) return NULL;
  for (size_t i = 0; i < n; i++) {
    double *span = &b[2 * (i / OV_LAUNCH_BLOCK)];
    double end = ev[i].ts + tr_event_dur(t, &ev[i]); /* the sum the question compares */
    if (i % OV_LAUNCH_BLOCK == 0 || ev[i].ts < span[0]) span[0] = ev[i].ts;
    if (i % OV_LAUNCH_BLOCK == 0 || end > span[1]) span[1] = end;
  }
  return b;
}

bool ov_launch_index_build(ov_launch_index *x, const tr_trace *t) {
  *x = (ov_launch_index){.t = t};
  x->runtime_corr = ov_corr_blocks(t, TR_KIND_RUNTIME);
  x->launch_corr = ov_corr_blocks(t, TR_KIND_LAUNCH);
  x->op_span = ov_span_blocks(t, TR_KIND_CPU_OP);
  x->region_span = ov_span_blocks(t, TR_KIND_USER_ANNOTATION);
  if (!x->runtime_corr || !x->launch_corr || !x->op_span || !x->region_span) {
    ov_launch_index_free(x);
    return false;
  }
  return true;
}

/* Leaves the index without summaries, still bound to its trace. */
void ov_launch_index_free(ov_launch_index *x) {
  free(x->runtime_corr);
  free(x->launch_corr);
  free(x->op_span);
  free(x->region_span);
  *x = (ov_launch_index){.t = x->t};
}

/* The first event of the kind in file order with correlation corr, or NULL, reading only
 * the blocks whose interval holds corr (every block without summaries). */
static const tr_event *ov_first_with(const tr_trace *t, tr_kind kind, const int64_t *blocks,
                                     int64_t corr) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  for (size_t k = 0; k < ov_blocks(n); k++) {
    if (blocks && (corr < blocks[2 * k] || corr > blocks[2 * k + 1])) continue;
    for (size_t i = k * OV_LAUNCH_BLOCK; i < ov_block_end(k, n); i++)
      if (tr_event_correlation(t, &ev[i]) == corr) return &ev[i];
  }
  return NULL;
}

/* Whether an event of the kind (CPU ops or record_function regions) encloses call and
 * m matches it, reading only the blocks whose span holds call's start (every block
 * without summaries). */
static bool ov_kind_around(const tr_trace *t, tr_kind kind, const double *spans,
                           const tr_event *call, const te_matcher *m, char *hit, size_t cap) {
  size_t n = 0;
  const tr_event *ops = tr_trace_events(t, kind, &n);
  const tr_event_ctx *cc = tr_trace_ctx(t, call);
  for (size_t k = 0; k < ov_blocks(n); k++) {
    const double *span = spans ? &spans[2 * k] : NULL;
    if (span && (span[0] > call->ts || span[1] < call->ts)) continue;
    for (size_t i = k * OV_LAUNCH_BLOCK; i < ov_block_end(k, n); i++)
      if (ov_op_around(t, &ops[i], call, cc, m, hit, cap)) return true;
  }
  return false;
}

/* The host call first (runtime calls, then launches), then the CPU ops, then the
 * record_function regions, each in file order, reading only the blocks that can answer:
 * events are mostly in time and id order, so a few blocks hold the candidates. */
bool ov_launch_context(const ov_launch_index *x, const tr_event *e, const te_matcher *m, char *hit,
                       size_t cap) {
  const tr_trace *t = x->t;
  int64_t corr = tr_event_correlation(t, e);
  if (corr == TR_NO_ID || !m) return false;
  const tr_event *call = ov_first_with(t, TR_KIND_RUNTIME, x->runtime_corr, corr);
  if (!call) call = ov_first_with(t, TR_KIND_LAUNCH, x->launch_corr, corr);
  if (!call) return false;
  return ov_kind_around(t, TR_KIND_CPU_OP, x->op_span, call, m, hit, cap) ||
         ov_kind_around(t, TR_KIND_USER_ANNOTATION, x->region_span, call, m, hit, cap);
}
