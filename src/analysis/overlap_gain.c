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
 * counted: only the steady exposed time is.
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

/* Whether the row's action hides it behind compute another stream runs (an overlap, a
 * prefetch, a restructuring), so that compute bounds it: fusion and elimination remove
 * the row's own pass and need none; a single-stream stage has no lane unless the row
 * brings one (a copy engine, a side stream of its own, a restructuring). */
static bool ov_behind_compute(const an_overlap_row *r, size_t max_streams) {
  if (!ov_gains(r->recommendation) || r->recommendation == AN_RECOMMEND_TRY_FUSION ||
      r->recommendation == AN_RECOMMEND_ELIMINATE)
    return false;
  return max_streams > 1 || r->copy_engine || r->own_lane ||
         r->recommendation == AN_RECOMMEND_RESTRUCTURE;
}

/* What the row's action wins over the stage window (ms) with avail_ms of compute left to
 * hide it behind. */
static double ov_gain_window(const an_overlap_row *r, double avail_ms, size_t max_streams) {
  double rec = r->exposed_ms;
  if (!ov_gains(r->recommendation)) return 0;
  if (r->recommendation != AN_RECOMMEND_TRY_FUSION && r->recommendation != AN_RECOMMEND_ELIMINATE) {
    double avail = ov_behind_compute(r, max_streams) && avail_ms > 0 ? avail_ms : 0;
    if (avail < rec) rec = avail;
  }
  /* fusion removes the piece's memory round trip, not its work (overlap_partner.c) */
  if (r->recommendation == AN_RECOMMEND_TRY_FUSION && r->fusion_partner != AN_PARTNER_NONE &&
      r->fusion_bound_ms < rec)
    rec = r->fusion_bound_ms;
  return rec;
}

/* Per step: the row's share inside the counted steps, over their number (a warm-up or a
 * previous step's tail outside them is no part of a step). */
static double ov_per_step(const an_overlap_row *r, double rec, size_t n_steps) {
  if (n_steps && r->total_us > 0 && r->steps_us < r->total_us)
    rec *= (r->steps_us > 0 ? r->steps_us : 0) / r->total_us;
  return n_steps ? rec / (double)n_steps : rec;
}

double ov_gain_row(const an_overlap_row *r, double stage_compute_us, size_t max_streams,
                   size_t n_steps) {
  double avail = (stage_compute_us - r->hidden_by_compute_us) / 1000.0;
  return ov_per_step(r, ov_gain_window(r, avail, max_streams), n_steps);
}

/* The next row to take its share of the compute: the unserved row behind compute of the
 * best priority (evidence first: a P1 overlap before a P2 restructuring), then the larger
 * bound of its own, then table order; NULL when every such row is served. */
static an_overlap_row *ov_next_sharer(an_overlap_stage *st, size_t lanes) {
  an_overlap_row *best = NULL;
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *r = &st->rows[i];
    if (r->compute_order || !ov_behind_compute(r, lanes)) continue;
    if (!best || r->priority < best->priority ||
        (r->priority == best->priority && r->own_recoverable_ms > best->own_recoverable_ms))
      best = r;
  }
  return best;
}

/* Brief 9 defect 2 (hta_sampled_2ranks: two restructure rows each bounded by all of the
 * stage's 33.78 ms/step of compute): the rows that hide behind compute share it. The
 * budget is the stage's compute less what already hides any of them; each row in turn
 * (ov_next_sharer) takes at most its own bound of what is left, so their recoverable
 * times sum to at most the budget. */
static double ov_share_compute(an_overlap_stage *st, double stage_compute_us, size_t lanes) {
  double budget = stage_compute_us / 1000.0;
  size_t n = 0;
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *r = &st->rows[i];
    r->own_recoverable_ms = r->recoverable_ms;
    r->compute_order = 0;
    r->bound_exposed_ms = r->bound_compute_ms = 0;
    if (ov_behind_compute(r, lanes)) budget -= r->hidden_by_compute_us / 1000.0, n++;
  }
  if (budget < 0) budget = 0;
  st->shared_compute_ms = budget / (double)(st->n_steps ? st->n_steps : 1);
  st->n_sharing_compute = n;
  an_overlap_row *r;
  for (int k = 1; (r = ov_next_sharer(st, lanes)) != NULL; k++) {
    r->compute_order = k;
    double give = ov_gain_window(r, budget, lanes);
    double own_avail = (stage_compute_us - r->hidden_by_compute_us) / 1000.0;
    double own = ov_gain_window(r, own_avail, lanes);
    if (give > own) give = own;
    /* the basis of the bound: its exposed time against the compute it could take */
    double avail = budget < own_avail ? budget : own_avail;
    r->bound_exposed_ms = ov_per_step(r, r->exposed_ms, st->n_steps);
    r->bound_compute_ms = ov_per_step(r, avail > 0 ? avail : 0, st->n_steps);
    budget -= give;
    r->recoverable_ms = ov_per_step(r, give, st->n_steps);
  }
  return budget;
}

/* Deviation O30 (hta_async_cpu_to_gpu_a100: the pooled embedding exchange, 25.72 ms of
 * measured transfer exposed beside 54.79 ms of wait, read only "rank skew (wait)"): a wait
 * row recovers 0, its wait being the wait item's, but the transfer the time account
 * measured in its steady part is no wait: what its action would hide of it, at most the
 * compute the rows behind compute left (left, over the stage window), in table order. */
static void ov_wait_transfer(an_overlap_stage *st, double stage_compute_us, double left) {
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *r = &st->rows[i];
    r->transfer_bound_ms = r->transfer_compute_ms = 0;
    if (!r->transfer_lever || !(r->exposed_ms > 0)) continue;
    double own = (stage_compute_us - r->hidden_by_compute_us) / 1000.0;
    double avail = left < own ? left : own;
    if (avail < 0) avail = 0;
    double hide = r->exposed_ms < avail ? r->exposed_ms : avail;
    left -= hide;
    r->transfer_bound_ms = ov_per_step(r, hide, st->n_steps);
    r->transfer_compute_ms = ov_per_step(r, avail, st->n_steps);
  }
}

void ov_gain_rank(an_overlap_stage *st, double stage_compute_us, size_t lanes,
                  const te_settings *set) {
  for (size_t i = 0; i < st->n_rows; i++)
    st->rows[i].recoverable_ms = ov_gain_row(&st->rows[i], stage_compute_us, lanes, st->n_steps);
  if (set->overlap_mechanism_actions)
    ov_wait_transfer(st, stage_compute_us, ov_share_compute(st, stage_compute_us, lanes));
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

/* Whether the row's action only moves GPU time under other GPU work (an overlap, a
 * prefetch, a restructuring), removing no kernel and no launch. */
static bool ov_moves_gpu_time(const an_overlap_row *r) {
  return r->recommendation == AN_RECOMMEND_TRY_OVERLAP ||
         r->recommendation == AN_RECOMMEND_CHECK_DEPS ||
         r->recommendation == AN_RECOMMEND_RESTRUCTURE;
}

/* Whether a row only reports time it cannot win (a wait for other ranks or a pipeline
 * stage, a wait it cannot size): never folded with the noise, never put forward. */
static bool ov_reports_wait(const an_overlap_row *r) {
  return r->verdict == AN_OVERLAP_WAIT || r->recommendation == AN_RECOMMEND_WAIT_UNKNOWN;
}

/* Whether ms per step is under the stage's bar (an_overlap_row_under_bar). */
static bool under_bar(const an_overlap_stage *st, double ms) {
  double share = st->step_ms > 0 ? ms / st->step_ms * 100.0 : 0;
  return (st->recoverable_floor_ms > 0 && ms < st->recoverable_floor_ms) ||
         (st->min_step_pct > 0 && st->step_ms > 0 && share < st->min_step_pct);
}

bool an_overlap_row_under_bar(const an_overlap_stage *st, const an_overlap_row *r) {
  return under_bar(st, r->recoverable_ms);
}

bool an_overlap_transfer_shown(const an_overlap_stage *st, const an_overlap_row *r) {
  return r->transfer_lever && r->transfer_bound_ms > 0 && !under_bar(st, r->transfer_bound_ms);
}

void ov_gain_floor(an_overlap_stage *st, const te_settings *set) {
  st->recoverable_floor_ms = set->overlap_recoverable_floor_ms;
  st->min_step_pct = set->overlap_mechanism_actions ? set->overlap_recoverable_min_step_pct : 0;
  st->n_below_floor = st->n_cites_fusion = 0;
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *r = &st->rows[i];
    /* review 3: "act" needs something to win. A row whose action recovers nothing here
     * (the largest piece of a fusion, overlap on a stage with no compute beside it) is
     * not put forward as P1: nothing to win there (P4). Brief 11 defect 3: nor is a row
     * that reports a wait (it recovers 0; the summary's wait item is its action, and the
     * row is that item's evidence) */
    if (set->overlap_mechanism_actions &&
        ((r->priority == AN_PRIORITY_P1 && r->recoverable_ms <= 0) || ov_reports_wait(r)))
      r->priority = AN_PRIORITY_P4;
    /* one-time setup is set apart and a wait row reports rank skew / a bubble (or a wait
     * it cannot size), not headroom: neither is folded away with the noise; every other row under
     * the bar is, a restructuring with nothing to hide included (review 3) */
    r->below_floor = r->recommendation != AN_RECOMMEND_ONE_TIME && !ov_reports_wait(r) &&
                     an_overlap_row_under_bar(st, r);
    /* brief 11 defect 2: P1/P2 means worth acting on; a row that would be put forward is
     * P5 under the bar (a P4 row had nothing to win anyway) */
    if (set->overlap_mechanism_actions && r->below_floor && r->priority < AN_PRIORITY_P4)
      r->priority = AN_PRIORITY_P5;
    st->n_below_floor += r->below_floor;
    /* a piece of a fusion row is folded too, cited under the table, not counted as noise */
    if (r->cites_fusion && !r->below_floor) st->n_cites_fusion++;
    r->below_floor = r->below_floor || r->cites_fusion;
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
    /* O30: hiding a wait row's transfer under other GPU work wins nothing either */
    r->transfer_bound_ms = r->transfer_compute_ms = 0;
    bool fewer_kernels = r->recommendation == AN_RECOMMEND_TRY_FUSION;
    /* deviation O26 (brief 11 defect 4: hta_ddp's gradient all-reduce told to overlap in a
     * step idle 76% for the host): hiding a row under other GPU work wins nothing while the
     * step waits for the host, and it removes no launch the host issues: P4, recovering 0
     * (its own bound stays in own_recoverable_ms); elimination and fusion do remove them */
    if (ov_moves_gpu_time(r) && !r->below_floor) {
      r->priority = AN_PRIORITY_P4;
      r->recoverable_ms = 0;
      r->host_bound = true;
      o->n_host_bound++;
      /* deviation O32 (review 17 defect 13: hta_ddp's gradient all-reduce read "try
       * overlap" beside P4 and 0): a row that recovers nothing recommends no action; one
       * already on a stream of its own (DDP's bucket hooks issue the reduce beside the
       * backward on NCCL's stream) is overlapped already */
      r->recommendation =
          r->own_stream ? AN_RECOMMEND_OWN_STREAM_HOST_BOUND : AN_RECOMMEND_NOTHING_TO_GAIN;
    } else if (r->priority == AN_PRIORITY_P1 && !(b->launch_bound && fewer_kernels)) {
      r->priority = AN_PRIORITY_P2;
    }
  }
}

double an_overlap_copy_gbs(const an_overlap_row *r) {
  return r->copy_us > 0 ? r->copy_bytes / r->copy_us / 1000.0 : 0;
}

void an_overlap_copy_rates(an_overlap_stage *o, double host_link_gbs, const te_rules *rules) {
  const te_settings *set = te_rules_settings(rules);
  if (!set->overlap_mechanism_actions || !(host_link_gbs > 0)) return;
  const te_matcher *pageable = te_rules_matcher(rules, "pageable_copy");
  for (size_t i = 0; i < o->n_rows; i++) {
    an_overlap_row *r = &o->rows[i];
    /* a one-time upload is no per-step cost to speed up */
    if (!r->host_copy || !(r->copy_us > 0) || r->recommendation == AN_RECOMMEND_ONE_TIME) continue;
    /* a copy moves one way: half of what the datasheet states for both directions */
    r->host_link_gbs = host_link_gbs / 2.0;
    double gbs = an_overlap_copy_gbs(r);
    r->copy_slow_fraction = set->overlap_copy_lane_host_link_min_fraction;
    r->copy_slow = gbs < r->copy_slow_fraction * r->host_link_gbs;
    r->copy_pageable =
        r->copy_slow && pageable && te_matcher_match(pageable, r->kernel, strlen(r->kernel));
  }
}

void an_overlap_follow_waits(an_overlap_stage *o, an_wait_story story, const te_rules *rules) {
  if (!te_rules_settings(rules)->overlap_mechanism_actions) return;
  o->wait_story = story;
  if (story != AN_WAIT_STORY_MID_STEP && story != AN_WAIT_STORY_IDLE) return;
  for (size_t i = 0; i < o->n_rows; i++)
    if (o->rows[i].recommendation == AN_RECOMMEND_RANK_SKEW)
      o->rows[i].recommendation = AN_RECOMMEND_SLOW_MID_STEP;
}

void ov_restructure_options(an_overlap_stage *st, const te_settings *set) {
  st->n_restructure_options = 0;
  st->restructure_options = NULL;
  /* the options (two-batch overlap, async TP, a fused all-reduce, another parallel layout)
   * move communication: under a compute kernel's restructure row, or on a run with no
   * collective in the table, they advise something the run does not do (review 2); under
   * a folded row they would be a list no printed row asks for (review 3). A row whose
   * dependency rule names options of its own (a recommender's pooled embedding exchange,
   * an optimizer's all-gather) takes those: the LLM serving list is not its lever (review
   * 7 defect 5), and every such row its own (brief 9 defect 3: the 2-rank set's pooled
   * exchange lacked TorchRec's levers when the optimizer's all-gather came first) */
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *r = &st->rows[i];
    r->n_restructure_options = 0;
    r->restructure_options = NULL;
    if (r->recommendation != AN_RECOMMEND_RESTRUCTURE || r->below_floor || !r->category ||
        !te_string_list_has(&set->overlap_collective_categories, r->category))
      continue;
    const te_string_list *own =
        r->dep_rule ? te_list_map_get(&set->overlap_restructure_options_by_rule, r->dep_rule)
                    : NULL;
    const te_string_list *opts = own && own->n ? own : &set->overlap_restructure_options;
    r->n_restructure_options = opts->n;
    r->restructure_options = opts->items;
    if (st->restructure_options) continue;
    st->n_restructure_options = opts->n;
    st->restructure_options = opts->items;
  }
}

const char *const *ov_without_bytes_levers(const te_rules *r, an_overlap_row *row, int slot,
                                           const char *const *list, size_t *n) {
  const te_matcher *bytes = te_rules_matcher(r, "bytes_lever");
  if (!row->latency_bound_msgs || !bytes || !list || !*n) return list;
  const char **kept = malloc(*n * sizeof *kept);
  if (!kept) return list;
  size_t m = 0;
  for (size_t k = 0; k < *n; k++)
    if (!te_matcher_match(bytes, list[k], strlen(list[k]))) kept[m++] = list[k];
  free(row->lever_store[slot]);
  row->lever_store[slot] = kept;
  *n = m;
  return kept;
}

void ov_latency_bound_options(an_overlap_stage *st, const te_rules *r) {
  if (!te_rules_settings(r)->overlap_mechanism_actions) return;
  bool first = true;
  for (size_t i = 0; i < st->n_rows; i++) {
    an_overlap_row *row = &st->rows[i];
    if (!row->n_restructure_options) continue;
    row->restructure_options =
        ov_without_bytes_levers(r, row, 0, row->restructure_options, &row->n_restructure_options);
    if (first) { /* the stage lists its first restructure row's options */
      st->restructure_options = row->restructure_options;
      st->n_restructure_options = row->n_restructure_options;
    }
    first = false;
  }
}
