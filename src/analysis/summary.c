/*
 * analysis/summary.c - "What to try first", time by category, trace limits (summary.h).
 *
 * Per stage: what a step is (steps, mean span, in-step share of the kernel time, eager or
 * graph, bottleneck), then the candidates (summary_items.c), each with a bound per step.
 * Then across stages: score = summary.weights[action] * bound; best first; an item that
 * names a kernel an earlier item named is the same root cause and merges into it (its
 * evidence anchor kept); GPU-side items of a bottlenecked stage are left out; the best
 * summary.max_items remain. Ties break by kind, then anchor, so the list is stable.
 */
#include "analysis/summary.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary_internal.h"
#include "util/vec.h"

static const char *const KIND_IDS[AN_SUMMARY_KINDS] = {"kernel", "overlap", "fusion",
                                                       "idle",   "wait",    "host"};

/* In an_action order; the packs' settings keyed by action take these as their choices
 * (TE_SUMMARY_ACTION_IDS, held equal by test_summary). */
static const char *const ACTION_IDS[] = {
    "tune",         "overlap",      "fusion_neighbour", "check_deps",
    "fusion",       "port",         "eliminate",        "sync",
    "stall",        "launch_bound", "rank_skew",        "chain",
    "fewer_bytes",  "dependency",   "investigate",      "slow_collective",
    "kernel_lever", "merge",        "fold_gemm",        "batch",
    "fp32",         "fold_cast"};
#define N_ACTIONS (sizeof ACTION_IDS / sizeof *ACTION_IDS)
_Static_assert(N_ACTIONS == AN_ACTION_FOLD_CAST + 1, "an id per action");

const char *an_summary_action_id(an_action a) {
  return (size_t)a < N_ACTIONS ? ACTION_IDS[a] : "?";
}

double an_summary_item_part_us(const an_summary_item *it) {
  switch (it->basis) {
    case AN_BASIS_WAIT:
      return it->first_wait_us;
    case AN_BASIS_CHAIN:
      return it->opaque_us;
    case AN_BASIS_FOLDED:
      return it->largest_us;
    case AN_BASIS_IDLE:
      return it->folded_wait_us;
    default:
      return 0;
  }
}

/* ---------------------------------------------------------------- items */

void an_summary_anchor(char *out, size_t cap, const char *kind, const char *stage, size_t row) {
  char st[32];
  size_t j = 0;
  for (const char *p = stage; *p && j + 1 < sizeof st; p++) {
    char ch = *p;
    if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
    st[j++] = ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) ? ch : '-';
  }
  st[j] = 0;
  snprintf(out, cap, "%s-%s-%zu", kind, st, row);
}

static const char *resolved(const char *loc) { return an_location_resolved(loc) ? loc : NULL; }

/* How the kernel table shows location loc for kernel row r: kind when one of its shown
 * sites has it (found), else untouched. */
static bool row_site_kind(const an_kernel_row *r, const char *loc, an_location_kind *kind) {
  for (size_t k = 0; r && k < r->n_shown_sites; k++) {
    const an_site *s = r->shown_sites[k];
    if (strcmp(loc, s->location) != 0 && strcmp(loc, s->display_location) != 0) continue;
    *kind = s->kind;
    return true;
  }
  return false;
}

/* How the kernel table shows an item's location (issue 31): a graph replay's (or
 * plumbing's) when every site with it among the item's own kernels is one, so an item on
 * a model runner under a full-graph replay says it is inside that replay even where an
 * eager kernel elsewhere in the stage launches from the same line. With no kernel of its
 * own listed, the item takes every kernel of the stage. */
static an_location_kind location_kind(const sm_ctx *c, size_t item) {
  const an_summary_item *it = &c->v[item];
  if (!it->location) return AN_LOCATION_LAUNCH;
  size_t from = c->koff[item], to = item + 1 < c->n ? c->koff[item + 1] : c->nk;
  an_location_kind all = AN_LOCATION_LAUNCH;
  bool seen = false;
  for (size_t i = 0; i < (from < to ? to - from : c->g.st->n_kernels); i++) {
    const an_kernel_row *r = from < to ? sm_row_of(c, c->kpool[from + i]) : &c->g.st->kernels[i];
    an_location_kind kind;
    if (!row_site_kind(r, it->location, &kind)) continue;
    if (kind == AN_LOCATION_LAUNCH || (seen && kind != all)) return AN_LOCATION_LAUNCH;
    all = kind;
    seen = true;
  }
  return all;
}

/* The location kinds of the stage's items c->v[from..], once their kernels are listed. */
static void stage_location_kinds(sm_ctx *c, size_t from) {
  for (size_t i = from; i < c->n; i++) {
    an_summary_kind k = c->v[i].kind;
    /* an idle or wait item's location is the host's, never a kernel site's */
    if (k == AN_SUMMARY_KERNEL || k == AN_SUMMARY_FUSION || k == AN_SUMMARY_OVERLAP)
      c->v[i].location_kind = location_kind(c, i);
  }
}

an_summary_item *sm_add(sm_ctx *c, an_summary_kind kind, an_action action, size_t row,
                        const char *location, double bound_us, an_bound_basis basis,
                        double basis_us) {
  const sm_stage *g = &c->g;
  /* an unbounded item has no bound: its basis time (the category's) is its share and,
   * weighted, its rank */
  const bool unbounded = basis == AN_BASIS_UNBOUNDED;
  const double figure = unbounded ? basis_us : bound_us;
  double share = g->step_us > 0 ? figure / g->step_us * 100.0 : 0;
  if (figure <= 0 || share < c->s->summary_min_share_pct ||
      (!unbounded && figure < c->s->summary_min_bound_us))
    return NULL;
  an_summary_item *v = ut_grow(c->v, &c->cap, c->n + 1, sizeof *v);
  if (v) c->v = v;
  size_t *o = v ? ut_grow(c->koff, &c->cap_off, c->n + 1, sizeof *o) : NULL;
  if (o) c->koff = o;
  size_t *ro = o ? ut_grow(c->roff, &c->cap_roff, c->n + 1, sizeof *ro) : NULL;
  if (ro) c->roff = ro;
  if (!v || !o || !ro) {
    c->nomem = true;
    return NULL;
  }
  c->koff[c->n] = c->nk;
  c->roff[c->n] = c->nr;
  an_summary_item *it = &c->v[c->n++];
  *it = (an_summary_item){.kind = kind,
                          .action = action,
                          .compiled_run = c->rep->run.compiled.compiled,
                          .stage_id = g->st->id,
                          .stage_label = g->st->label,
                          .row = row,
                          .location = resolved(location),
                          .at_stake_us = unbounded ? 0 : bound_us,
                          .share_pct = share,
                          .basis = basis,
                          .basis_us = basis_us,
                          .step_us = g->step_us,
                          .n_steps = g->n_steps};
  it->score = te_number_map_get(&c->s->summary_weights, an_summary_action_id(action)) * figure;
  an_summary_anchor(it->anchor, sizeof it->anchor, KIND_IDS[kind], g->st->id, row);
  return it;
}

void sm_item_kernel(sm_ctx *c, const char *kernel) {
  const char **p = ut_grow(c->kpool, &c->capk, c->nk + 1, sizeof *p);
  if (!p) {
    c->nomem = true;
    return;
  }
  c->kpool = p;
  c->kpool[c->nk++] = kernel;
  c->v[c->n - 1].n_kernels++;
}

void sm_item_row(sm_ctx *c, size_t row, an_row_part part) {
  an_item_row *p = ut_grow(c->rpool, &c->capr, c->nr + 1, sizeof *p);
  if (!p) {
    c->nomem = true;
    return;
  }
  c->rpool = p;
  c->rpool[c->nr++] = (an_item_row){row, part};
  c->v[c->n - 1].n_rows++;
}

double sm_row_per_step(const sm_ctx *c, const an_kernel_row *r) { return r->steps_us * c->g.per; }

const an_kernel_row *sm_row_of(const sm_ctx *c, const char *name) {
  for (size_t i = 0; name && i < c->g.st->n_kernels; i++)
    if (c->g.st->kernels[i].name == name || !strcmp(c->g.st->kernels[i].name, name))
      return &c->g.st->kernels[i];
  return NULL;
}

/* ---------------------------------------------------------------- the stage */

/* What a step of the stage is; false when the stage has no time account. */
static bool stage_facts(const sm_ctx *c, const an_stage_report *st, sm_stage *g) {
  const an_stage_timeline *tl = st->timeline;
  *g = (sm_stage){.st = st};
  if (!tl || tl->total.span_ns <= 0) return false;
  const an_time_account *a = &tl->total;
  g->n_steps = tl->n_steps;
  g->per = 1.0 / (double)(tl->n_steps ? tl->n_steps : 1);
  g->step_us = (double)a->span_ns / 1000.0 * g->per;
  double steps = 0;
  for (size_t i = 0; i < st->n_kernels; i++) steps += st->kernels[i].steps_us;
  g->in_step = st->kernel_total_us > 0 ? steps / st->kernel_total_us : 1;
  g->eager = an_summary_eager(c->rules, st);
  int64_t host = a->idle_by_kind_ns[AN_IDLE_SYNC] + a->idle_by_kind_ns[AN_IDLE_HOST] +
                 a->idle_by_kind_ns[AN_IDLE_LAUNCH] + a->idle_by_kind_ns[AN_IDLE_ALLOC] +
                 a->idle_by_kind_ns[AN_IDLE_BLOCKED];
  if (g->eager) host += a->idle_by_kind_ns[AN_IDLE_SHORT]; /* launch spacing, as the items' */
  g->host_idle_us = (double)host / 1000.0 * g->per;
  g->all_idle_us = (double)a->idle_ns / 1000.0 * g->per;
  int64_t queued = an_account_queued_ns(a);
  g->queued_idle_us = (double)queued / 1000.0 * g->per;
  /* "mostly" of the idle the gate counts: a step idle mostly for queued work is not
   * launch-bound however its host part splits */
  int64_t launch =
      a->idle_by_kind_ns[AN_IDLE_LAUNCH] + (g->eager ? a->idle_by_kind_ns[AN_IDLE_SHORT] : 0);
  g->launch_bound = host > 0 && 2 * launch >= host + queued;
  g->alloc_bound = host > 0 && 2 * a->idle_by_kind_ns[AN_IDLE_ALLOC] > host + queued;
  g->wait_us = (double)a->collective_wait_ns / 1000.0 * g->per;
  /* every idle kind that stalls the step counts (brief 12 defect 4: hta_multistream5's
   * step is 51% idle with graph work queued, and its overlap item was still put forward) */
  g->bottleneck =
      g->step_us > 0 && (g->host_idle_us + g->queued_idle_us + g->wait_us) / g->step_us * 100.0 >=
                            c->s->summary_bottleneck_idle_pct;
  g->host_bound = g->bottleneck && g->host_idle_us >= g->queued_idle_us + g->wait_us;
  return true;
}

static void stage_items(sm_ctx *c) {
  sm_idle_items(c);
  sm_host_block_item(c);
  sm_wait_items(c);
  sm_roofline_items(c);
  sm_precision_item(c);
  sm_batch_item(c);
  sm_fp32_item(c);
  sm_gemm_rate(c);
  sm_chain_item(c);
  sm_kernel_lever_items(c);
  sm_cast_item(c);
  sm_fusion_items(c);
  sm_overlap_items(c);
  sm_transfer_items(c);
  sm_investigate_items(c); /* last: it looks for the categories the others left unbounded */
}

/* ---------------------------------------------------------------- ranking */

/* Bounded items first (a figure without a bound is not advice); then the items whose
 * evidence a trace's filter leaves whole before the host items of a trace filtered or
 * sampled to GPU work (host_filtered: their cause rests on the host work the filter kept,
 * their bound is a lower one and the calls it dropped may hold a sync; review 12 defect 4:
 * hta_sampled_2ranks' 30 ms optimizer stall ranked above the rebalance item every rank's
 * trace supports); then by score. */
static int by_score(const void *pa, const void *pb) {
  const an_summary_item *a = pa, *b = pb;
  /* a trace that lost graph-replayed work, or one filtered to GPU work whose idle it cannot
   * explain: capturing again comes before any other action */
  bool ca = an_summary_capture_again(a), cb = an_summary_capture_again(b);
  if (ca != cb) return ca ? -1 : 1;
  bool ua = a->basis == AN_BASIS_UNBOUNDED, ub = b->basis == AN_BASIS_UNBOUNDED;
  if (ua != ub) return ua ? 1 : -1;
  if (a->host_filtered != b->host_filtered) return a->host_filtered ? 1 : -1;
  /* a throughput lever (the decode batch: more tokens a step, at a latency cost) after
   * the items that shorten the step (review 20 defect 4: ranked first on sglang decode
   * above the GEMM tuning that wins per step) */
  bool ta = a->basis == AN_BASIS_BATCH, tb = b->basis == AN_BASIS_BATCH;
  if (ta != tb) return ta ? 1 : -1;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  if (a->kind != b->kind) return a->kind > b->kind ? -1 : 1; /* time account first */
  return strcmp(a->anchor, b->anchor);
}

static bool gpu_side(const an_summary_item *it) {
  return it->kind == AN_SUMMARY_KERNEL || it->kind == AN_SUMMARY_OVERLAP ||
         it->kind == AN_SUMMARY_FUSION;
}

/* Items that launch fewer kernels (a fusion pattern, a fused chain, a lever removing or
 * folding kernels; not one narrowing their dtype, which launches as many): on a
 * launch-bound step they shorten the step as a graph does, so the bottleneck gate keeps
 * them. */
static bool fewer_kernels(const an_summary_item *it) {
  return it->kind == AN_SUMMARY_FUSION || it->action == AN_ACTION_FUSE_CHAIN ||
         (it->action == AN_ACTION_KERNEL_LEVER && it->basis != AN_BASIS_NARROWED);
}

/* Two overlap items of one collective's rows split by launch context (an input dist and a
 * gradient reduce of ncclKernel_SendRecv): unlike work, each its own root cause. */
static bool split_apart(const an_summary_item *a, const an_summary_item *b) {
  /* the rest of the launches (no labelled family) is a context of its own (review 9: the
   * gradient reduce's item linked the rest row it quotes nothing of) */
  bool ca = a->what || a->context_rest, cb = b->what || b->context_rest;
  return a->kind == AN_SUMMARY_OVERLAP && b->kind == AN_SUMMARY_OVERLAP && ca && cb &&
         a->partner == AN_PARTNER_NONE && b->partner == AN_PARTNER_NONE &&
         (a->context_rest != b->context_rest || (a->what && b->what && strcmp(a->what, b->what)));
}

/* Items whose root cause is not their kernels: a wait (the rank the others wait for, not
 * the collective that absorbs it, so a fusion of that collective leaves the wait where it
 * is) and a precision item or a narrowing lever's (the format: tuning those kernels leaves
 * it where it is). */
static bool own_root(const an_summary_item *it) {
  return it->kind == AN_SUMMARY_WAIT || it->basis == AN_BASIS_PRECISION ||
         it->basis == AN_BASIS_NARROWED;
}

/* The kept item that names one of its kernels, or NULL (never for an own_root item). */
static an_summary_item *same_root(an_summary_item *kept, size_t n, const an_summary_item *it) {
  if (own_root(it)) return NULL;
  for (size_t i = 0; i < n; i++) { /* any stage: one kernel is one root cause */
    if (own_root(&kept[i]) || split_apart(&kept[i], it)) continue;
    for (size_t a = 0; a < kept[i].n_kernels; a++)
      for (size_t b = 0; b < it->n_kernels; b++)
        if (kept[i].kernels[a] == it->kernels[b] || !strcmp(kept[i].kernels[a], it->kernels[b]))
          return &kept[i];
  }
  return NULL;
}

void sm_more(an_summary_item *into, const char *anchor) {
  for (size_t i = 0; i < into->n_more; i++)
    if (!strcmp(into->more[i], anchor)) return;
  if (!strcmp(into->anchor, anchor)) return;
  if (into->n_more >= AN_ITEM_MORE) {
    into->more_left++; /* still merged: the line says how many it does not link */
    return;
  }
  snprintf(into->more[into->n_more++], sizeof into->more[0], "%s", anchor);
}

void sm_item_more(an_summary_item *it, const char *kind, const char *stage_id, size_t row) {
  char a[sizeof it->more[0]];
  an_summary_anchor(a, sizeof a, kind, stage_id, row);
  sm_more(it, a);
}

/* summary.carries_out typed once: bit m of by[a] when action a carries out action m's
 * lever itself (a fusion removes the passes whose bytes a bandwidth-bound item would cut). */
typedef struct sm_carried {
  uint32_t by[N_ACTIONS];
} sm_carried;
_Static_assert(N_ACTIONS <= sizeof(uint32_t) * CHAR_BIT, "an action's set in one word");

static bool action_of(const char *id, size_t *out) {
  for (size_t a = 0; a < N_ACTIONS; a++)
    if (!strcmp(ACTION_IDS[a], id)) return *out = a, true;
  return false; /* the packs' validation admits only ACTION_IDS */
}

static sm_carried carried_of(const te_settings *s) {
  sm_carried c = {{0}};
  const te_list_map *m = &s->summary_carries_out;
  for (size_t i = 0; i < m->n; i++) {
    size_t into, merged;
    if (!action_of(m->keys[i], &into)) continue;
    for (size_t k = 0; k < m->values[i].n; k++)
      if (action_of(m->values[i].items[k], &merged)) c.by[into] |= UINT32_C(1) << merged;
  }
  return c;
}

static bool carries_out(const sm_carried *c, an_action into, an_action merged) {
  return (size_t)into < N_ACTIONS && (size_t)merged < N_ACTIONS && (c->by[into] >> merged & 1u);
}

/* A GEMM merge and a roofline tuning item on the same kernels, either way round: one item
 * (one kernel, one root cause), but the two count different launches, so their bounds add:
 * the tuning item counts only the launches an acting merge row leaves (summary_roofline.c,
 * merged_share), and the merge's bound counts the rest, the merged GEMM at the best rate of
 * its format (review 16 defect 1: tracelens' QKV merge held three of the QKV kernel's four
 * launches, and the tuning of its o_proj launch and of the down GEMM was "not additive,
 * both bounds count the same time"). */
static bool merge_and_tune(const an_summary_item *a, const an_summary_item *b) {
  bool merge_a = a->kind == AN_SUMMARY_FUSION && a->action == AN_ACTION_MERGE_GEMMS;
  bool merge_b = b->kind == AN_SUMMARY_FUSION && b->action == AN_ACTION_MERGE_GEMMS;
  bool tune_a = a->basis == AN_BASIS_ROOFLINE && a->action == AN_ACTION_TUNE_KERNEL;
  bool tune_b = b->basis == AN_BASIS_ROOFLINE && b->action == AN_ACTION_TUNE_KERNEL;
  return (merge_a && tune_b) || (tune_a && merge_b);
}

/* A kept overlap row gives way to a better-supported action on the same kernels: a fusion
 * pattern (a fused path exists), a roofline or an eliminate verdict; the row stays as
 * evidence. Other items keep their action and take the row as evidence. */
static void merge_into(const sm_carried *carried, an_summary_item *into,
                       const an_summary_item *it) {
  bool adopt = into->kind == AN_SUMMARY_OVERLAP && into->action != AN_ACTION_ELIMINATE &&
               (it->kind == AN_SUMMARY_FUSION || it->action == AN_ACTION_ELIMINATE ||
                it->basis == AN_BASIS_ROOFLINE);
  if (!adopt) {
    if (it->action != into->action && !carries_out(carried, into->action, it->action) &&
        it->at_stake_us > into->not_additive_us) {
      snprintf(into->not_additive, sizeof into->not_additive, "%s", it->anchor);
      into->not_additive_us = it->at_stake_us;
      into->not_additive_action = it->action;
      into->not_additive_adds = merge_and_tune(into, it);
      into->not_additive_lever = into->not_additive_adds ? it->lever : NULL;
      into->not_additive_port = it->port_platform;
      into->not_additive_upgrade = an_summary_upgrade(it);
    }
    sm_more(into, it->anchor);
    for (size_t i = 0; i < it->n_more; i++) sm_more(into, it->more[i]);
    into->more_left += it->more_left;
    return;
  }
  an_summary_item was = *into;
  *into = *it;
  into->n_more = 0;
  into->more_left = 0;
  sm_more(into, was.anchor);
  for (size_t i = 0; i < was.n_more; i++) sm_more(into, was.more[i]);
  for (size_t i = 0; i < it->n_more; i++) sm_more(into, it->more[i]);
  into->more_left += was.more_left + it->more_left;
}

/* A kernel-lever item the bottleneck gate drops is still named by the banner (the first:
 * items arrive by score): the change removes kernels outright, a hint worth keeping. */
static void note_dropped_lever(an_bottleneck *b, const an_summary_item *it) {
  if (!b->stage_label || b->lever_id || it->action != AN_ACTION_KERNEL_LEVER ||
      it->basis != AN_BASIS_REMOVED) /* a fold keeps one kernel: nothing removed outright */
    return;
  b->lever_id = it->lever_op;
  b->lever = it->lever;
  b->lever_us = it->basis_us;
  b->lever_alone_us = it->detail_us;
}

/* The FP32 matmul item the bottleneck gate drops is still named by the banner, as what comes
 * once the host is fixed (review 20 defect 6: hta_ddp's FP32/TF32 CNN had no mixed-precision
 * lead behind its host-bound step). */
static void note_dropped_fp32(an_bottleneck *b, const an_summary_item *it) {
  if (!b->stage_label || b->fp32_us > 0 || it->action != AN_ACTION_FP32_MATMUL) return;
  b->fp32 = it->fp32;
  b->fp32_us = it->at_stake_us;
  b->fp32_lever = it->lever;
}

/* Sorts, merges same-root items, drops GPU-side items of bottlenecked stages (counting
 * them in rep->bottleneck). */
static size_t rank_items(an_report *rep, an_summary_item *v, size_t n, const bool *stage_bneck,
                         const bool *stage_launch, const sm_carried *carried) {
  if (n > 1) qsort(v, n, sizeof *v, by_score);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    size_t si = 0;
    while (si < rep->n_stages && strcmp(rep->stages[si].id, v[i].stage_id) != 0) si++;
    if (si < rep->n_stages && stage_bneck[si] && gpu_side(&v[i]) &&
        !(stage_launch[si] && fewer_kernels(&v[i]))) {
      if (rep->bottleneck.stage_label) rep->bottleneck.dropped++;
      note_dropped_lever(&rep->bottleneck, &v[i]);
      note_dropped_fp32(&rep->bottleneck, &v[i]);
      continue;
    }
    an_summary_item *root = same_root(v, m, &v[i]);
    if (root) {
      merge_into(carried, root, &v[i]);
      continue;
    }
    v[m++] = v[i];
  }
  if (m > 1) qsort(v, m, sizeof *v, by_score); /* an adopted action brings its own bound */
  return m;
}

/* The smaller leads after the numbered items, each part in rank order. */
static int by_lead(const void *pa, const void *pb) {
  const an_summary_item *a = pa, *b = pb;
  if (a->lead != b->lead) return a->lead ? 1 : -1;
  return by_score(pa, pb);
}

/* Pools small items of one root cause, puts the leads after the numbered items and caps
 * each part: the cap counts bounded items; the unbounded ones (at most one per large
 * category) follow them, so a dominant cost nothing bounds is never cut. */
static size_t pool_and_cap(sm_ctx *c, an_summary_item *v, size_t m, an_summary_data *out,
                           size_t *n_leads) {
  m = sm_pool_items(c->s, v, m, out, &c->nomem);
  if (m > 1) qsort(v, m, sizeof *v, by_lead);
  size_t kept = 0, bounded = 0, leads = 0;
  for (size_t i = 0; i < m; i++) {
    /* the batch item ranks after the per-step items (by_score), outside the cap too */
    bool unbounded = v[i].basis == AN_BASIS_UNBOUNDED || v[i].basis == AN_BASIS_BATCH;
    size_t *count = v[i].lead ? &leads : &bounded;
    if (!unbounded && *count >= (size_t)c->s->summary_max_items) continue;
    *count += !unbounded;
    v[kept++] = v[i];
  }
  *n_leads = leads;
  return kept - leads;
}

/* The leads among v[n..n + leads) whose bound exceeds a bounded numbered item's of v[0..n)
 * (the least: items rank by bound times weight), an_report.leads_above. */
static size_t leads_above(const an_summary_item *v, size_t n, size_t leads) {
  double least = -1;
  for (size_t i = 0; i < n; i++)
    if (v[i].basis != AN_BASIS_UNBOUNDED && v[i].basis != AN_BASIS_BATCH &&
        (least < 0 || v[i].at_stake_us < least))
      least = v[i].at_stake_us;
  size_t above = 0;
  for (size_t i = n; least >= 0 && i < n + leads; i++) above += v[i].at_stake_us > least;
  return above;
}

/* The number of the tuning item among v[0..n), other than v[self], whose evidence holds row
 * anchor a; 0: none. A fold item (and a tuning item with a fold after it) links the GEMM it
 * folds into as evidence too, so the first item holding the GEMM's row can be the fold
 * itself: it would follow and name itself. */
static size_t tuning_item_of(const an_summary_item *v, size_t n, size_t self, const char *a) {
  for (size_t i = 0; i < n; i++) {
    if (i == self || v[i].action != AN_ACTION_TUNE_KERNEL) continue;
    if (!strcmp(v[i].anchor, a)) return i + 1;
    for (size_t k = 0; k < v[i].n_more; k++)
      if (!strcmp(v[i].more[k], a)) return i + 1;
  }
  return 0;
}

/* A fold item depends on the tuning item of the GEMM it folds into (review 19 defect 4: its
 * break-even is against the tuned GEMM): it comes after that item, whatever their bounds,
 * and each item with a fold names that item's number. A tuning item with a fold after it
 * (fold_then) stays where its own bound puts it: its kernel fix depends on nothing. */
static void order_folds(an_summary_item *v, size_t n) {
  for (size_t i = 0; i < n;) {
    size_t j =
        v[i].fold_anchor[0] && !v[i].fold_then ? tuning_item_of(v, n, i, v[i].fold_anchor) : 0;
    if (j <= i + 1) {
      i++;
      continue;
    }
    an_summary_item x = v[i]; /* after v[j - 1]: the items between move up one */
    memmove(&v[i], &v[i + 1], (j - 1 - i) * sizeof *v);
    v[j - 1] = x;
  }
  for (size_t i = 0; i < n; i++)
    v[i].fold_after = v[i].fold_anchor[0] ? tuning_item_of(v, n, i, v[i].fold_anchor) : 0;
}

static void note_bottleneck(an_report *rep, const sm_stage *g) {
  if (!g->bottleneck || rep->bottleneck.stage_label || g->step_us <= 0) return;
  rep->bottleneck = (an_bottleneck){.stage_label = g->st->label,
                                    .idle_pct = g->host_idle_us / g->step_us * 100.0,
                                    .all_idle_pct = g->all_idle_us / g->step_us * 100.0,
                                    .queued_pct = g->queued_idle_us / g->step_us * 100.0,
                                    .wait_pct = g->wait_us / g->step_us * 100.0,
                                    .lead = g->st->timeline->launch_lead,
                                    .launch_bound = g->launch_bound,
                                    .alloc_bound = g->alloc_bound};
}

/* With no numbered item, the host-overhead lead of each stage whose host spans more than
 * its GPU (sm_host_overhead_lead), after the n leads kept; returns the leads. */
static size_t host_overhead_leads(sm_ctx *c, an_report *rep, size_t n) {
  c->n = n; /* the items kept: the new ones follow them */
  for (size_t i = 0; i < rep->n_stages && !c->nomem; i++) {
    if (!stage_facts(c, &rep->stages[i], &c->g)) continue;
    sm_host_overhead_lead(c);
  }
  for (size_t i = n; i < c->n; i++) {
    c->v[i].kernels = c->kpool;
    c->v[i].rows = c->rpool;
  }
  return c->n;
}

static an_status build_items(an_report *rep, an_stage_report *stages, const te_rules *rules,
                             an_summary_data *out) {
  sm_ctx c = {.rep = rep,
              .rules = rules,
              .s = te_rules_settings(rules),
              .workload = rep->run.workload.value};
  bool *bneck = calloc(2 * (rep->n_stages + 1), sizeof *bneck);
  if (!bneck || !sm_levers_resolve(&c)) {
    free(bneck);
    sm_levers_free(&c);
    return AN_ERR_NOMEM;
  }
  bool *launch = bneck + rep->n_stages + 1;
  for (size_t i = 0; i < rep->n_stages; i++) {
    if (!stage_facts(&c, &rep->stages[i], &c.g)) continue;
    bneck[i] = c.g.bottleneck;
    launch[i] = c.g.launch_bound;
    note_bottleneck(rep, &c.g);
    c.to = &stages[i]; /* rep->stages, writable */
    size_t first = c.n;
    stage_items(&c);
    if (!c.nomem) stage_location_kinds(&c, first);
  }
  for (size_t i = 0; i < c.n; i++) {
    c.v[i].kernels = c.kpool + c.koff[i];
    c.v[i].rows = c.rpool + c.roff[i];
  }
  sm_carried carried = carried_of(c.s);
  size_t n = c.nomem ? 0 : rank_items(rep, c.v, c.n, bneck, launch, &carried), leads = 0;
  if (!c.nomem) n = pool_and_cap(&c, c.v, n, out, &leads);
  if (!c.nomem && !n) leads = host_overhead_leads(&c, rep, leads);
  if (!c.nomem) order_folds(c.v, n);
  free(bneck);
  sm_levers_free(&c);
  free(c.koff);
  free(c.roff);
  out->items = c.v;
  out->n_items = n + leads;
  out->kernels = c.kpool;
  out->rows = c.rpool;
  rep->summary = c.v;
  rep->n_summary = c.nomem ? 0 : n;
  rep->n_leads = c.nomem ? 0 : leads;
  rep->leads_above = c.nomem ? 0 : leads_above(c.v, n, leads);
  return c.nomem ? AN_ERR_NOMEM : AN_OK;
}

/* ---------------------------------------------------------------- categories */

static int by_time(const void *pa, const void *pb) {
  const an_category_time *a = pa, *b = pb;
  if (a->total_us != b->total_us) return a->total_us > b->total_us ? -1 : 1;
  return strcmp(a->category, b->category);
}

static size_t stage_categories(const an_stage_report *st, an_category_time *v) {
  size_t n = 0;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    size_t k = 0;
    while (k < n && strcmp(v[k].category, r->category) != 0) k++;
    if (k == n) v[n++] = (an_category_time){r->category, 0, 0, 0, 0};
    v[k].total_us += r->total_us;
    v[k].steps_us += r->steps_us;
    v[k].kernels++;
  }
  for (size_t k = 0; k < n; k++)
    v[k].share_pct = st->kernel_total_us > 0 ? v[k].total_us / st->kernel_total_us * 100.0 : 0;
  qsort(v, n, sizeof *v, by_time);
  return n;
}

static an_status build_categories(an_stage_report *stages, size_t n_stages, an_summary_data *out) {
  size_t cap = 0;
  for (size_t i = 0; i < n_stages; i++) cap += stages[i].n_kernels;
  out->categories = calloc(cap ? cap : 1, sizeof *out->categories);
  if (!out->categories) return AN_ERR_NOMEM;
  for (size_t i = 0; i < n_stages; i++) {
    an_category_time *v = out->categories + out->n_categories;
    size_t n = stage_categories(&stages[i], v);
    stages[i].categories = v;
    stages[i].n_categories = n;
    out->n_categories += n;
  }
  return AN_OK;
}

bool an_summary_capture_again(const an_summary_item *it) {
  return it->graph_unrecorded ||
         (it->action == AN_ACTION_DEPENDENCY && it->idle_kind == AN_IDLE_FILTERED);
}

bool an_summary_upgrade(const an_summary_item *it) {
  return it->action == AN_ACTION_PORT_FUSION && it->since_switch &&
         it->port_platform == AN_PLATFORM_UNKNOWN;
}

void an_summary_reprofile_item(an_report *rep) {
  an_trace_limits *l = &rep->limits;
  l->filtered_queued_item = 0;
  for (size_t i = 0; l->filtered_queued_stage_id && i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    if (an_summary_capture_again(it) && !it->graph_unrecorded &&
        !strcmp(it->stage_id, l->filtered_queued_stage_id)) {
      l->filtered_queued_item = i + 1;
      return;
    }
  }
}

an_status an_summary_build(an_report *rep, an_stage_report *stages, const te_rules *rules,
                           an_summary_data *out) {
  memset(out, 0, sizeof *out);
  an_status rc = build_categories(stages, rep->n_stages, out);
  if (rc == AN_OK) rc = build_items(rep, stages, rules, out);
  if (rc == AN_OK) an_summary_reprofile_item(rep);
  return rc;
}

/* ---------------------------------------------------------------- limits */

static bool any_resolved(const an_kmap_payload *p) {
  for (size_t i = 0; i < p->n; i++)
    for (size_t k = 0; k < p->entries[i].n_sites; k++)
      if (resolved(p->entries[i].sites[k].location)) return true;
  return false;
}

/* The filtered stage whose GPU idle with its next work queued (dependency, event wait) is
 * the largest share of its span (an_trace_limits.filtered_queued_stage), kept when that
 * share reaches report.filtered_queued_min_pct. */
static void filtered_queued(an_report *rep, const te_settings *s) {
  an_trace_limits *l = &rep->limits;
  const an_stage_report *top = NULL;
  double us = 0, pct = 0;
  for (size_t i = 0; l->filtered && i < rep->n_stages; i++) {
    const an_stage_report *st = &rep->stages[i];
    const an_stage_timeline *tl = st->timeline;
    if (!st->host_filtered || !tl || tl->total.span_ns <= 0) continue;
    const an_time_account *a = &tl->total;
    int64_t q = a->idle_by_kind_ns[AN_IDLE_DEPENDENCY] + a->idle_by_kind_ns[AN_IDLE_EVENT_WAIT] +
                a->idle_by_kind_ns[AN_IDLE_OUTSIDE] + a->idle_by_kind_ns[AN_IDLE_FILTERED];
    double share = (double)q * 100.0 / (double)a->span_ns;
    if (top && share <= pct) continue;
    top = st;
    pct = share;
    us = (double)q / 1000.0 / (double)(tl->n_steps ? tl->n_steps : 1);
  }
  if (!top || pct < s->report_filtered_queued_min_pct) return;
  l->filtered_queued_stage = top->label;
  l->filtered_queued_stage_id = top->id;
  l->filtered_queued_us = us;
  l->filtered_queued_pct = pct;
}

/* The first stage whose captured work is under report.short_window_ms: the GPU span of its
 * counted steps, summed (its time account's), else without steps its window's; never the
 * trace window, whose idle outside the steps (a wait for a previous batch before the step)
 * says nothing of steady state (review 22 defect 7: SGLang decode's one 10.45 ms step went
 * unflagged behind 463 ms of idle before it, where vLLM decode's 10.74 ms step was). */
static void short_window(an_report *rep, const te_settings *s) {
  an_trace_limits *l = &rep->limits;
  for (size_t i = 0; i < rep->n_stages; i++) {
    const an_stage_timeline *tl = rep->stages[i].timeline;
    const an_overlap_stage *o = rep->stages[i].overlap;
    double us = tl ? (double)tl->total.span_ns / 1000.0 : o ? o->span_us : 0;
    if (us > 0 && us < s->report_short_window_ms * 1000.0) {
      l->short_window_stage = rep->stages[i].label;
      l->short_window_us = us;
      l->short_window_steps = tl ? tl->n_steps : 0;
      return;
    }
  }
}

/* The first stage whose longest outside gap a blocking call spans most of (the header's
 * "a call that returns when GPU work ends, across an idle GPU"): a Limits line of its own. */
static void outside_wait(an_report *rep) {
  an_trace_limits *l = &rep->limits;
  for (size_t i = 0; i < rep->n_stages; i++) {
    const an_stage_timeline *tl = rep->stages[i].timeline;
    if (tl && tl->outside_gaps && tl->outside_blocking && tl->outside_call &&
        2 * tl->outside_call_ns >= tl->outside_longest_ns) {
      l->outside_wait_stage = rep->stages[i].label;
      l->outside_wait = tl;
      return;
    }
  }
}

void an_summary_limits(an_report *rep, const te_settings *s) {
  an_trace_limits *l = &rep->limits;
  /* the global payload holds every stage's entries */
  l->no_python_stacks = !any_resolved(&rep->kernel_map.global);
  l->framework_defaulted = rep->run.framework.source == AN_SOURCE_DEFAULT;
  l->site_min_coverage = s->kernel_table_site_min_coverage;
  for (size_t i = 0; i < rep->n_stages; i++)
    for (size_t k = 0; k < rep->stages[i].n_kernels; k++)
      l->partial_site_rows +=
          rep->stages[i].kernels[k].shown && rep->stages[i].kernels[k].partial_site;
  l->ranks_analysed = (long)rep->run.n_formal_inputs;
  /* the TP size counts ranks only when something stated it (server args, trace metadata) */
  const an_count_fact *tp = &rep->run.context.tp_size;
  l->ranks_expected =
      tp->source != AN_SOURCE_DEFAULT && tp->source != AN_SOURCE_UNKNOWN ? tp->value : 0;
  /* A Ranks section read the directory's ranks: the limit is the ranks the directory
   * lacks, counted against the run's world size (the TP size misses DP replicas). */
  for (size_t i = 0; i < rep->n_ranks; i++) {
    l->ranks_compared = true;
    if ((long)rep->ranks[i].n_rows > l->ranks_analysed)
      l->ranks_analysed = (long)rep->ranks[i].n_rows;
  }
  if (l->ranks_compared && l->world_size > 0) l->ranks_expected = l->world_size;
  short_window(rep, s);
  outside_wait(rep);
  filtered_queued(rep, s);
}

void an_summary_free(an_summary_data *d) {
  free(d->items);
  free(d->kernels);
  free(d->rows);
  free(d->categories);
  free(d->pooled);
  free(d->pool_kernels);
  free(d->pool_rows);
  memset(d, 0, sizeof *d);
}
