/*
 * report/item_text.c - one "What to try first" item's line as parts (item_text.h): the
 * action, what it names (an activity or pattern, the kernels, the location), the bound and
 * its basis, and the evidence rows. Every format renders these parts, so the Markdown, the
 * HTML and the JSON report say the same words.
 */
#include "report/item_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "report/md.h"
#include "report/text.h"
#include "report/timeline_report.h"
#include "util/buf.h"
#include "util/limits.h"

/* Kernels an item's line names; past them a count (the evidence row has them all). */
#define ITEM_KERNELS_NAMED 3u

static void text(rp_part_fn fn, void *ctx, const char *s) { fn(ctx, RP_PART_TEXT, s, NULL); }

/* A wait item whose action is the Ranks section's (the straggler's, or the spread's): its
 * kernels are the collectives the others wait in, not the straggler's work, and the line
 * says so and names the rank waited for (hta_sampled_2ranks: "the straggler's kernels run
 * longer than its peers'" followed by `ncclKernel_SendRecv...` read as the rank's long
 * kernel, where its embedding kernels are). The opening words into b, or false. */
static bool rank_wait_lead(const an_summary_item *it, char *b, size_t cap) {
  const an_rank_group *g = it->rank_group;
  if (it->kind != AN_SUMMARY_WAIT || !g || (!it->imbalance && it->rank_group_partial)) return false;
  if (g->verdict == AN_RANK_STRAGGLER)
    snprintf(b, cap, " (the others wait for rank %ld in ", g->straggler);
  else if (g->verdict == AN_RANK_SPREAD && !it->imbalance)
    snprintf(b, cap, " (the ranks wait for one another in ");
  else
    return false;
  return true;
}

/* What the item names: the CPU activity or pattern, a chain's roles or the kernels, then
 * the location. */
static void subject(const an_summary_item *it, rp_part_fn fn, void *ctx) {
  char b[64];
  const char *lead = "";
  const char *what = rp_item_subject(it, &lead);
  if (what) {
    snprintf(b, sizeof b, " %s", lead);
    text(fn, ctx, b);
    fn(ctx, RP_PART_NAME, what, NULL);
  }
  if (it->n_roles) { /* a chain's pieces by role; its fusion row lists the kernels */
    text(fn, ctx, what ? ": " : " ");
    for (size_t k = 0; k < it->n_roles; k++) {
      if (k) text(fn, ctx, ", ");
      text(fn, ctx, it->roles[k]);
    }
    snprintf(b, sizeof b, " (%zu kernels)", it->n_kernels);
    text(fn, ctx, b);
  } else if (it->n_kernels && !it->n_pool) { /* a pool's basis lists its members */
    bool ranks = rank_wait_lead(it, b, sizeof b);
    text(fn, ctx, ranks ? b : what ? ": " : " ");
    for (size_t k = 0; k < it->n_kernels && k < ITEM_KERNELS_NAMED; k++) {
      if (k) text(fn, ctx, ", ");
      fn(ctx, RP_PART_KERNEL, it->kernels[k], it->stage_id);
    }
    if (it->n_kernels > ITEM_KERNELS_NAMED) {
      snprintf(b, sizeof b, " and %zu more", it->n_kernels - ITEM_KERNELS_NAMED);
      text(fn, ctx, b);
    }
    if (ranks) text(fn, ctx, ")");
  }
  const an_idle_cause *untraced = rp_item_untraced(it);
  if (untraced) { /* where the thread went untraced: the ops around its longest stretch */
    text(fn, ctx, " after ");
    fn(ctx, RP_PART_NAME, untraced->before, NULL);
    text(fn, ctx, ", before ");
    fn(ctx, RP_PART_NAME, untraced->after, NULL);
  }
  if (it->location) {
    snprintf(b, sizeof b, " %s ", rp_item_location_lead(it->location_kind));
    text(fn, ctx, b);
    fn(ctx, RP_PART_LOCATION, it->location, NULL);
  }
}

/* ": at most X ms/step (S% of the Y ms step)", or what an unbounded item's kernels take. */
static void bound(const an_summary_item *it, rp_part_fn fn, void *ctx) {
  char t[48], s[32], tail[192];
  bool unbounded = it->basis == AN_BASIS_UNBOUNDED; /* no stake: no bound exists */
  rp_fmt_ms(t, sizeof t, unbounded ? it->basis_us : it->at_stake_us);
  strcat(t, " ms/step");
  rp_fmt_ms(s, sizeof s, it->step_us);
  text(fn, ctx,
       it->graph_unrecorded           ? ": no bound; the GPU idle it leaves unmeasured: "
       : an_summary_capture_again(it) ? ": no bound; the GPU idle it cannot explain: "
       : unbounded                    ? ": no bound yet; its kernels take "
                                      : ": at most ");
  fn(ctx, RP_PART_BOUND, t, NULL);
  /* a batch item's saving is GEMM time per step's worth of tokens: the step itself does
   * not shorten (review of fusion's 403aa96: "ms/step" alone reads as a shorter step) */
  snprintf(tail, sizeof tail, " (%.1f%% of the %s ms %s%s)", it->share_pct, s,
           it->n_steps ? "step" : "stage window: no steps",
           it->basis == AN_BASIS_BATCH
               ? ", for each step's worth of tokens: more tokens a step, not a shorter step"
               : "");
  text(fn, ctx, tail);
}

/* The item's stage label for an anchor of the item's own stage ("PREFIX<stage id>-ROW"),
 * so every link of an item names the stage alike (review 5: "K1 in extend/prefill" beside
 * "K2 in extend"); NULL, the anchor's own stage id, for another stage's anchor. */
static const char *own_stage_label(const an_summary_item *it, const char *anchor) {
  const char *dash = strchr(anchor, '-'), *last = strrchr(anchor, '-');
  size_t n = strlen(it->stage_id);
  bool own = dash && last > dash && (size_t)(last - dash - 1) == n &&
             strncmp(dash + 1, it->stage_id, n) == 0;
  return own ? it->stage_label : NULL;
}

static void link(const an_summary_item *it, const char *anchor, rp_part_fn fn, void *ctx) {
  char label[160];
  rp_evidence_label(anchor, own_stage_label(it, anchor), label, sizeof label);
  fn(ctx, RP_PART_LINK, label, anchor);
}

/* The evidence: the time-account rows the item sums (the first RP_ITEM_ROWS_SHOWN, with
 * the part of each it takes, the rest counted), else its own row; then the rows merged in
 * (the first AN_ITEM_MORE linked, the rest counted). */
static void evidence(const an_summary_item *it, rp_part_fn fn, void *ctx) {
  char id[64], g[32], b[96];
  text(fn, ctx, " Evidence: ");
  rp_fmt_ms(g, sizeof g, it->least_gap_us);
  for (size_t k = 0; k < it->n_rows && k < RP_ITEM_ROWS_SHOWN; k++) {
    if (k) text(fn, ctx, ", ");
    rp_item_row_anchor(it, k, id, sizeof id);
    link(it, id, fn, ctx);
    if (it->rows[k].part == AN_PART_ALL) continue;
    snprintf(b, sizeof b, " (its gaps %s %s ms)",
             it->rows[k].part == AN_PART_LONG ? "of at least" : "under", g);
    text(fn, ctx, b);
  }
  if (it->n_rows > RP_ITEM_ROWS_SHOWN) {
    snprintf(b, sizeof b, " and %zu more rows (the JSON report's item rows)",
             it->n_rows - RP_ITEM_ROWS_SHOWN);
    text(fn, ctx, b);
  }
  if (!it->n_rows) link(it, it->anchor, fn, ctx);
  for (size_t k = 0; k < it->n_more; k++) {
    text(fn, ctx, ", ");
    link(it, it->more[k], fn, ctx);
  }
  if (it->more_left) { /* merged rows past AN_ITEM_MORE: counted, never silently cut */
    snprintf(b, sizeof b, " and %zu more row%s of the same root cause", it->more_left,
             it->more_left == 1 ? "" : "s");
    text(fn, ctx, b);
  }
}

bool rp_item_alternative(const an_summary_item *it, an_summary_item *alt) {
  if (it->alt_us <= 0) return false;
  *alt = (an_summary_item){.kind = it->kind,
                           .action = AN_ACTION_FEWER_BYTES,
                           .basis = AN_BASIS_PRECISION,
                           .stage_id = it->stage_id,
                           .stage_label = it->stage_label,
                           .roofline = it->roofline,
                           .what = it->roofline ? it->roofline->family : NULL,
                           .count = it->alt_count,
                           .at_stake_us = it->alt_us,
                           .basis_us = it->alt_basis_us,
                           .detail_us = it->alt_mem_us,
                           .step_us = it->step_us,
                           .n_steps = it->n_steps,
                           .share_pct = it->step_us > 0 ? it->alt_us / it->step_us * 100.0 : 0,
                           .prec_terms = it->prec_terms,
                           .prec_peak_pct = it->prec_peak_pct,
                           .prec_peak_tflops = it->prec_peak_tflops,
                           .prec_fp8_tflops = it->prec_fp8_tflops};
  return true;
}

/* " Alternative: ACTION: at most X ms/step (S% of the step); basis: B. Both together at
 * most Y ms/step." on a tuning item whose kernels FP8 also speeds up: one item per kernel
 * set (issue 28), tuning first (no numerics change), FP8 with its own bound. */
static void alternative(const an_summary_item *it, an_workload w, rp_part_fn fn, void *ctx) {
  an_summary_item alt;
  if (!rp_item_alternative(it, &alt)) return;
  char b[96], t[48];
  text(fn, ctx, " Alternative: ");
  text(fn, ctx, rp_summary_action(&alt, w));
  text(fn, ctx, ": at most ");
  rp_fmt_ms(t, sizeof t, alt.at_stake_us);
  strcat(t, " ms/step");
  fn(ctx, RP_PART_BOUND, t, NULL);
  snprintf(b, sizeof b, " (%.1f%% of the step); basis: ", alt.share_pct);
  text(fn, ctx, b);
  rp_summary_basis_parts(&alt, w, fn, ctx);
  rp_fmt_ms(t, sizeof t, it->together_us);
  snprintf(b, sizeof b, ". Both together: at most %s ms/step.", t);
  text(fn, ctx, b);
}

/* " Not additive with ACTION on LINK, the same kernels (merged into this item: at most X
 * ms/step) ..." when an item of another action on the same kernels was merged in
 * (an_summary_item.not_additive): the action is named, since it has no item of its own;
 * " With it, ACTION on LINK (... at most X ms/step more ...)" when it counts other launches
 * of them (not_additive_adds), with its lever and the two bounds' sum. */
static void not_additive(const an_summary_item *it, rp_part_fn fn, void *ctx) {
  if (!it->not_additive[0]) return;
  char t[48], b[200];
  bool adds = it->not_additive_adds; /* other launches of the same kernels: the bounds add */
  const char *a = rp_merged_action(it);
  snprintf(b, sizeof b, adds ? ". With it, \"%s\" on " : ". Not additive with \"%s\" on ", a);
  text(fn, ctx, b);
  link(it, it->not_additive, fn, ctx);
  rp_fmt_ms(t, sizeof t, it->not_additive_us);
  if (!adds) {
    snprintf(b, sizeof b,
             ", the same kernels (merged into this item, no item of its own: at most %s ms/step): "
             "both bounds count the same time.",
             t);
    text(fn, ctx, b);
    return;
  }
  snprintf(b, sizeof b,
           " (merged into this item: at most %s ms/step more, on launches this item's bound "
           "leaves out",
           t);
  text(fn, ctx, b);
  if (it->not_additive_lever) {
    text(fn, ctx, "; lever: ");
    text(fn, ctx, it->not_additive_lever);
  }
  rp_fmt_ms(t, sizeof t, it->at_stake_us + it->not_additive_us);
  snprintf(b, sizeof b, "): the two count different launches, so together at most %s ms/step.", t);
  text(fn, ctx, b);
}

void rp_item_parts(const an_summary_item *it, an_workload w, rp_part_fn fn, void *ctx) {
  fn(ctx, RP_PART_ACTION, rp_summary_action(it, w), NULL);
  subject(it, fn, ctx);
  bound(it, fn, ctx);
  text(fn, ctx, "; basis: ");
  rp_summary_basis_parts(it, w, fn, ctx);
  text(fn, ctx, ".");
  alternative(it, w, fn, ctx);
  evidence(it, fn, ctx);
  not_additive(it, fn, ctx); /* after the evidence: its row stays the evidence's first */
}

static void plain(void *ctx, rp_part part, const char *s, const char *ref) {
  (void)part;
  (void)ref;
  ut_buf_add(ctx, s);
}

char *rp_item_text(const an_summary_item *it, an_workload w) {
  ut_buf b = {0};
  rp_item_parts(it, w, plain, &b);
  if (ut_buf_str(&b)) return b.p; /* the buffer's text, handed over */
  ut_buf_free(&b);
  return NULL;
}
