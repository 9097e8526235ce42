/*
 * analysis/summary_items.c - the candidates of "What to try first" for one stage, each an
 * action with a bound per step and the basis of that bound (summary_internal.h):
 *
 *   idle     a sync, a host stall (a named CPU activity: a few gaps per step, of
 *            summary.stall_min_gap_us on average, or a cause's gaps of timeline.long_gap_us),
 *            queued work waiting long on a dependency, or the launch-bound rest of the host-side
 * idle (when it reaches summary.launch_bound_min_pct of the step): the GPU idle each explains; wait
 * the collectives' time above their floors: waiting for other ranks; roofline a kernel below its
 * attainable rate: (1 - achieved / attainable) x its time; at the bandwidth bound: fewer bytes
 * (issue 29's record on the kernel row); chain    eager elementwise and copy kernels
 * (summary.chain_*): their time less the largest pass, which a fused kernel still makes; fusion   a
 * split fusion pattern: its estimated saving (a direct match, the fused kernel already running, is
 * never one); not for training or benchmarks; overlap  a headroom row: its recoverable time, at
 * most the kernel's time in the step (a collective's at most its transfer time); overlapping needs
 * dataflow evidence that the kernel is independent (overlap.dependency.independent_classes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap.h"
#include "analysis/summary.h"
#include "analysis/summary_internal.h"
#include "util/units.h"

/* ---------------------------------------------------------------- idle */

/* "OP DIMS" text a lever's op matcher reads (longer Input Dims are cut: no match) */
#define LEVER_OP_TEXT 512

bool sm_hits(const te_matcher *m, const char *s) {
  return m && s && te_matcher_match(m, s, strlen(s));
}

static double per_step_us(const sm_ctx *c, int64_t ns) { return (double)ns / 1000.0 * c->g.per; }

/* A part of a cause: its idle and gaps (the long part: gaps of timeline.long_gap_us). */
static int64_t part_ns(const an_idle_cause *x, an_row_part part) {
  return part == AN_PART_ALL    ? x->idle_ns
         : part == AN_PART_LONG ? x->long_ns
                                : x->idle_ns - x->long_ns;
}

static size_t part_gaps(const an_idle_cause *x, an_row_part part) {
  return part == AN_PART_ALL    ? x->gaps
         : part == AN_PART_LONG ? x->long_gaps
                                : x->gaps - x->long_gaps;
}

/* The sync the item's gaps follow (an_drain): of its rows (the last item's,
 * all added), the idle after a sync that drained the GPU's queue before the step's first
 * kernel, and the sync of the deepest such queue. The drained idle is not split by part:
 * a row's part counts at most its own time. */
static void drain_note(const sm_ctx *c, an_summary_item *it) {
  const an_time_account *a = &c->g.st->timeline->total;
  int64_t ns = 0;
  for (size_t k = 0; it && k < it->n_rows; k++) {
    const an_item_row *r = &c->rpool[c->nr - it->n_rows + k];
    const an_idle_cause *x = &a->causes[r->row];
    const an_drain *d = &x->drain;
    if (!d->ns) continue;
    int64_t part = part_ns(x, r->part);
    size_t gaps = part_gaps(x, r->part);
    ns += d->ns < part ? d->ns : part;
    it->drained_gaps += d->gaps < gaps ? d->gaps : gaps;
    if ((double)d->queue_ns / 1000.0 > it->drain_queue_us) {
      it->drain_queue_us = (double)d->queue_ns / 1000.0;
      it->drain_what = d->what;
      it->drain_location = d->location;
    }
  }
  if (!it) return;
  it->drained_us = per_step_us(c, ns);
  if (it->drained_us * 100.0 < c->s->timeline_drain_min_pct * c->g.step_us) /* too little */
    it->drained_us = 0;
}

/* An item of a part of cause i: its figures are that part's. */
static an_summary_item *named_idle(sm_ctx *c, const an_idle_cause *x, size_t i, an_action action,
                                   an_row_part part) {
  double us = per_step_us(c, part_ns(x, part));
  an_summary_item *it = sm_add(c, AN_SUMMARY_IDLE, action, i, x->location, us, AN_BASIS_IDLE, us);
  if (!it) return NULL;
  it->what = x->what;
  it->idle_kind = x->kind;
  it->host_filtered = c->g.st->host_filtered;
  it->count = part_gaps(x, part);
  it->detail_us = (double)x->max_gap_ns / 1000.0;
  it->least_gap_us = c->s->timeline_long_gap_us;
  it->timeline = c->g.st->timeline;
  sm_item_row(c, i, part);
  drain_note(c, it);
  return it;
}

/* Causes (parts) whose idle one item sums: a launch-bound pool, or the queued-work stalls
 * of a stage. Its evidence row is the largest member. */
typedef struct pool {
  int64_t ns;
  size_t gaps;
  long row;
  int64_t row_ns;
  an_item_row *m; /* members, at most one per cause */
  size_t n;
} pool;

static void pool_add(pool *p, const an_idle_cause *x, size_t i, an_row_part part) {
  int64_t ns = part_ns(x, part);
  p->ns += ns;
  p->gaps += part_gaps(x, part);
  if (p->m) p->m[p->n++] = (an_item_row){i, part};
  if (p->row < 0 || ns > p->row_ns) {
    p->row = (long)i;
    p->row_ns = ns;
  }
}

/* The pool's item: its figures are its members' sums, every member linked. */
static an_summary_item *pool_item(sm_ctx *c, const pool *p, an_action action,
                                  const char *location) {
  double us = per_step_us(c, p->ns);
  an_summary_item *it =
      sm_add(c, AN_SUMMARY_IDLE, action, (size_t)p->row, location, us, AN_BASIS_IDLE, us);
  if (!it) return NULL;
  it->count = p->gaps;
  it->host_filtered = c->g.st->host_filtered;
  it->timeline = c->g.st->timeline;
  it->least_gap_us = c->s->timeline_long_gap_us;
  for (size_t k = 0; k < p->n; k++) /* the evidence row first */
    if (p->m[k].row == (size_t)p->row) sm_item_row(c, p->m[k].row, p->m[k].part);
  for (size_t k = 0; k < p->n; k++)
    if (p->m[k].row != (size_t)p->row) sm_item_row(c, p->m[k].row, p->m[k].part);
  drain_note(c, it);
  return it;
}

static void stall_lever(const sm_ctx *c, an_summary_item *it);

/* A host stall of a part of cause i: an item, or, when the thread recorded nothing in
 * it, the stage's unseen host time for the Limits. Untraced host work the ops around it
 * locate (an_idle_cause.untraced_ns) is an item of its own: find that work (review 10:
 * hta_event_sync_multistream's 96 % gap had none); not on a trace filtered to GPU work,
 * whose filter dropped what the thread did. */
static void stall(sm_ctx *c, const an_idle_cause *x, size_t i, bool unseen, an_row_part part,
                  pool *stalls, pool *dropped) {
  if (unseen && x->untraced_ns && !c->g.st->host_filtered) {
    named_idle(c, x, i, AN_ACTION_HOST_STALL, part);
    return;
  }
  if (!unseen) {
    if (x->kind == AN_IDLE_HOST) /* grouped by region below */
      stalls->m[stalls->n++] = (an_item_row){i, part};
    else /* inside a launch call: the call's own cost may name a lever (a graph launch) */
      stall_lever(c, named_idle(c, x, i, AN_ACTION_HOST_STALL, part));
    return;
  }
  /* on a filtered trace, host work the filter dropped: the re-profile item's (dropped_item) */
  if (c->g.st->host_filtered) pool_add(dropped, x, i, part);
  c->to->unseen_host_us += per_step_us(c, part_ns(x, part));
  c->to->unseen_host_gaps += part_gaps(x, part);
  if ((double)x->max_gap_ns / 1000.0 > c->to->unseen_host_max_us)
    c->to->unseen_host_max_us = (double)x->max_gap_ns / 1000.0;
}

/* A host or launch cause: a few long stalls are an item of their own; else its long gaps
 * (timeline.long_gap_us, never launch spacing) are a stall item and the rest is pooled as
 * launch cost. With no CPU activity recorded the host was outside the profiler's view:
 * its stalls make no item (graphs cannot remove them, nothing names a lever). */
static void host_cause(sm_ctx *c, const an_idle_cause *x, size_t i, pool *p, pool *stalls,
                       pool *dropped) {
  double mean_gap = x->gaps ? (double)x->idle_ns / 1000.0 / (double)x->gaps : 0;
  bool few = (double)x->gaps * c->g.per <= (double)c->s->summary_stall_max_gaps_per_step;
  /* the thread recorded nothing in these gaps: no lever can be named, the Limits say what
   * to capture instead (report/timeline_report.h, RP_CHECK_UNSEEN_HOST) */
  bool unseen = x->kind == AN_IDLE_HOST && !x->what && !x->location;
  if (few && mean_gap >= c->s->summary_stall_min_gap_us) {
    stall(c, x, i, unseen, AN_PART_ALL, stalls, dropped);
    return;
  }
  if (x->long_gaps) stall(c, x, i, unseen, AN_PART_LONG, stalls, dropped);
  if (x->gaps > x->long_gaps) pool_add(p, x, i, x->long_gaps ? AN_PART_SHORT : AN_PART_ALL);
}

const char *an_summary_lever(const te_rules *rules, const char *op) {
  const te_settings *s = te_rules_settings(rules);
  const te_list_map *l = &s->summary_levers;
  for (size_t k = 0; op && k < l->n; k++) {
    char name[96], within[104];
    snprintf(name, sizeof name, "lever_%s", l->keys[k]);
    snprintf(within, sizeof within, "%s_within", name);
    /* with no stall around the op, neither a sync nor the activity a lever needs is known */
    if (te_string_list_has(&s->summary_sync_levers, l->keys[k]) || te_rules_matcher(rules, within))
      continue;
    if (l->values[k].n && sm_hits(te_rules_matcher(rules, name), op)) return l->values[k].items[0];
  }
  return NULL;
}

/* Whether the text names a framework path the run shows in use (review 17 defect 3: the
 * SGLang decode capture runs its overlap scheduler's frames and kernel, yet was told to
 * check it was on): matcher lever_ID_in_use names a kernel of the run, or the location or
 * stack of one of its shown sites (the framework's own frames). No matcher: not known. */
static bool lever_in_use(const sm_ctx *c, const char *id) {
  char name[96];
  snprintf(name, sizeof name, "lever_%s_in_use", id);
  const te_matcher *m = te_rules_matcher(c->rules, name);
  for (size_t s = 0; m && s < c->rep->n_stages; s++) {
    const an_stage_report *st = &c->rep->stages[s];
    for (size_t k = 0; k < st->n_kernels; k++) {
      const an_kernel_row *r = &st->kernels[k];
      if (sm_hits(m, r->name)) return true;
      for (size_t i = 0; i < r->n_shown_sites; i++)
        if (sm_hits(m, r->shown_sites[i]->location) || sm_hits(m, r->shown_sites[i]->stack))
          return true;
    }
  }
  return false;
}

/* The lever's text for this run: the framework's own path where the packs name one
 * (summary.lever_paths "ID/FRAMEWORK/PLATFORM", either part "any"; review 10: vLLM on ROCm
 * was told "a kernel to write" beside its AITER fused MoE; review 15 defect 3: SGLang's
 * host stalls before its graph replay were told "host work", not its overlap scheduler),
 * else the generic one. Every lever of summary.levers goes through it. */
static const char *lever_text(const sm_ctx *c, const char *id, const char *generic) {
  const an_provenance *run = &c->rep->run;
  const char *fw = run->framework.source == AN_SOURCE_DEFAULT ? NULL : run->framework.id;
  const char *pf = an_platform_id(run->context.platform.value);
  const char *fws[] = {fw, fw, "any"}, *pfs[] = {pf, "any", pf};
  for (size_t i = 0; i < sizeof fws / sizeof *fws; i++) {
    if (!fws[i] || !pfs[i]) continue; /* an unknown framework or platform names no path */
    char key[128];
    snprintf(key, sizeof key, "%s/%s/%s", id, fws[i], pfs[i]);
    const te_string_list *t = te_list_map_get(&c->s->summary_lever_paths, key);
    if (!t || !t->n) continue;
    /* the path the run shows in use: what is left with it on (summary.lever_in_use) */
    const te_string_list *on = te_list_map_get(&c->s->summary_lever_in_use, key);
    return on && on->n && lever_in_use(c, id) ? on->items[0] : t->items[0];
  }
  return generic;
}

/* Whether the stall item's activities (its own, its members' and their regions) hold one
 * lever_ID_within names (no such matcher: yes): "Optimizer.step#SGD.step" for a lever only
 * some optimizer classes have. */
static bool lever_within(const sm_ctx *c, const an_summary_item *it, const sm_lever *lv) {
  const te_matcher *m = lv->within;
  if (!m || sm_hits(m, it->what)) return true;
  const an_idle_cause *v = it->timeline->total.causes;
  for (size_t k = 0; k < it->n_rows; k++) {
    const an_idle_cause *x = &v[c->rpool[c->nr - it->n_rows + k].row];
    if (sm_hits(m, x->what) || sm_hits(m, x->region)) return true;
  }
  return false;
}

/* The first lever (summary.levers, in pack order) whose matcher names op and whose gates
 * hold for the stall item: a lever that names a sync (summary.sync_levers) only on an item
 * whose gap a synchronising call ended (review 10: three foreach ops dispatching with no
 * sync call in their gap were told "a hidden host sync"; a blocked item's host copy ran
 * in full, no wait for the GPU). */
static const char *stall_lever_of(const sm_ctx *c, const an_summary_item *it, const char *op) {
  bool sync = it->action == AN_ACTION_REMOVE_SYNC && it->idle_kind == AN_IDLE_SYNC;
  for (size_t k = 0; op && k < c->n_levers; k++) {
    const sm_lever *lv = &c->levers[k];
    if (!lv->text || !sm_hits(lv->name, op)) continue;
    if (lv->sync && !sync) continue;
    /* a filtered trace dropped the calls that launch nothing: no sync is not shown */
    if (lv->no_sync && c->g.st->host_filtered) continue;
    if (lever_within(c, it, lv)) return lv->run_text;
  }
  return NULL;
}

/* The stall's lever: the longest operation inside its members' longest gaps first (what
 * the host spent the time on; for a sync, what it waited for: the op that is a sync
 * itself, else the copy it waited on), then the activities named; else, for host work after
 * a framework's designed wait (an_idle_cause.designed), the packs' text for that wait
 * (summary.levers designed_sync), lever_op the frame (review 13 defect 2). */
static void stall_lever(const sm_ctx *c, an_summary_item *it) {
  if (!it) return;
  const an_idle_cause *v = it->timeline->total.causes;
  for (int pass = 0; pass < 2 && !it->lever; pass++)
    for (size_t k = 0; k < it->n_rows && !it->lever; k++) {
      const an_idle_cause *x = &v[c->rpool[c->nr - it->n_rows + k].row];
      const char *op = pass ? x->what : x->child;
      if ((it->lever = stall_lever_of(c, it, op))) it->lever_op = op;
    }
  for (size_t k = 0; !it->lever && c->designed_sync && k < it->n_rows; k++) {
    const an_idle_cause *x = &v[c->rpool[c->nr - it->n_rows + k].row];
    if (x->designed) {
      it->lever = c->designed_sync;
      it->lever_op = x->designed;
      it->lever_designed = true;
    }
  }
}

/* Whether the stage's collectives show a peer arriving late: at least
 * summary.straggler_first_min_pct of their wait at the first collective of a step, where a
 * late rank's arrival lands (an_collective_time.first_wait_ns), as the wait items judge it.
 * Late peers show as a busy collective kernel waiting, not as an idle GPU with nothing on
 * any stream: without such a wait the peers are no likely holder (review 16 defect 1:
 * hta_multistream5's first collectives hold 5% of the wait). */
static bool peers_late(const sm_ctx *c, const an_stage_timeline *tl) {
  int64_t first = 0, wait = 0;
  for (size_t i = 0; i < tl->n_collectives; i++) {
    first += tl->collectives[i].first_wait_ns;
    wait += tl->collectives[i].wait_ns;
  }
  return first > 0 && (double)first * 100.0 >= c->s->summary_straggler_first_min_pct * (double)wait;
}

/* The input-distribution or collective stage (matcher queued_peer_stage) the blocking call
 * across one of the item's gaps lies in: its region, else its outermost op; NULL when none. */
static const char *peer_stage(const sm_ctx *c, const an_summary_item *it) {
  const te_matcher *m = c->peer_stage;
  for (size_t k = 0; m && k < it->n_rows; k++) {
    const an_idle_cause *x = &it->timeline->total.causes[c->rpool[c->nr - it->n_rows + k].row];
    if (x->kind != AN_IDLE_OUTSIDE || !x->child) continue; /* no blocking call: no lead */
    if (sm_hits(m, x->region)) return x->region;
    if (sm_hits(m, x->child)) return x->child;
  }
  return NULL;
}

/* The queued-work item's lever when nothing in the trace holds its work (idle kind outside):
 * where to look for it (summary.levers queued_outside), lever_op NULL. A blocking call
 * across its gaps (the cause's lead) waits on that work, so it is not the lever (review 14
 * defect 1: "stop the small read back from waiting" on hta_multistream5 could not win the
 * 139.8 ms/step it was bounded by); but where that call lies in an input-distribution or
 * collective stage, the stage is the likely holder (it waits on its peers or its input
 * pipeline): lever queued_peers, lever_op that stage, and the places to look after it
 * (lever_next; review 15 defect 1: four places listed, the likely one not said). */
static void queue_lever(const sm_ctx *c, an_summary_item *it) {
  const an_idle_cause *x = &it->timeline->total.causes[c->rpool[c->nr - it->n_rows].row];
  if (x->kind != AN_IDLE_OUTSIDE || !c->queued_outside) return;
  const char *stage = peer_stage(c, it);
  const char *peers = stage && peers_late(c, it->timeline) ? c->queued_peers : NULL;
  bool graph = !peers && c->queued_graph && sm_hits(c->graph_launch, x->what);
  it->lever = peers ? peers : graph ? c->queued_graph : c->queued_outside;
  it->lever_op = peers ? stage : graph ? x->what : NULL;
  it->lever_next = peers ? c->queued_outside : NULL;
}

/* The launch-bound pool's lever when its largest member is a named host activity (the
 * host time across its gaps sits in one frame or op, not in launch spacing): the pack's
 * eager-dispatch text (summary.levers eager_dispatch), lever_op the activity (review 12
 * defect 6: hta_ddp's 114.9 ms/step pool said "CPU contention, data loading" while its
 * largest part, 42 %, was DistributedDataParallel.forward dispatching eager ops). */
static void pool_lever(const sm_ctx *c, an_summary_item *it, const an_idle_cause *top) {
  /* a compiled run is not told to compile: its own text (review 16 defect 1) */
  const char *text = it->compiled_run && c->eager_dispatch_compiled ? c->eager_dispatch_compiled
                                                                    : c->eager_dispatch;
  if (top->kind != AN_IDLE_HOST || !top->what || !text) return;
  it->lever = text;
  it->lever_op = top->what;
  /* the part of the bound under that activity: its rows, each by the part the item takes */
  const an_idle_cause *v = it->timeline->total.causes;
  int64_t ns = 0;
  for (size_t k = 0; k < it->n_rows; k++) {
    const an_item_row *r = &c->rpool[c->nr - it->n_rows + k];
    if (v[r->row].what == it->lever_op) ns += part_ns(&v[r->row], r->part);
  }
  it->lever_op_us =
      (double)ns / 1000.0 / (double)(it->timeline->n_steps ? it->timeline->n_steps : 1);
}

/* The region a stall belongs to: its outermost annotation, else its activity. */
static const char *region_of(const an_idle_cause *x) { return x->region ? x->region : x->what; }

/* Whether causes a and b stall in one region: one lies inside an annotation the other is
 * or lies in too. Causes outside any region stay apart (one activity at two Python
 * locations is two places to change). */
static bool same_region(const an_idle_cause *a, const an_idle_cause *b) {
  return a == b || ((a->region || b->region) && region_of(a) == region_of(b));
}

/* Host stalls of one region (one optimizer step, one forward) are one action: one item
 * per region, the sum of its members, the largest its evidence row. g is scratch for
 * the members (stalls->n of them at most). */
static void stall_items(sm_ctx *c, const an_time_account *a, const pool *stalls, an_item_row *g_m) {
  for (size_t k = 0; k < stalls->n; k++) {
    if (stalls->m[k].row == SIZE_MAX) continue; /* in an earlier region's item */
    const an_idle_cause *first = &a->causes[stalls->m[k].row];
    const char *key = region_of(first);
    pool g = {0, 0, -1, 0, g_m, 0};
    for (size_t j = k; j < stalls->n; j++) {
      an_item_row *r = &stalls->m[j];
      if (r->row == SIZE_MAX || !same_region(&a->causes[r->row], first)) continue;
      pool_add(&g, &a->causes[r->row], r->row, r->part);
      if (j > k) r->row = SIZE_MAX;
    }
    const an_idle_cause *top = &a->causes[g.row];
    an_summary_item *it = g.n == 1
                              ? named_idle(c, top, g.m[0].row, AN_ACTION_HOST_STALL, g.m[0].part)
                              : pool_item(c, &g, AN_ACTION_HOST_STALL, top->location);
    if (!it) continue;
    it->idle_kind = AN_IDLE_HOST;
    if (g.n > 1) {
      it->what = key;
      for (size_t j = 0; j < g.n; j++)
        if ((double)a->causes[g.m[j].row].max_gap_ns / 1000.0 > it->detail_us)
          it->detail_us = (double)a->causes[g.m[j].row].max_gap_ns / 1000.0;
    }
    stall_lever(c, it);
  }
}

/* The idle after a framework's designed blocking read back (an_idle_cause.designed: the
 * host's preparation of the next launch and its launch spacing, with the queue the read back
 * drained still empty) is one item per read back, its own line whatever its share: the read
 * back is the cause, the copy its lever (review 22 defect 6: SGLang decode's 256-B device-to-
 * host copy in populate_from_forward_batch was one clause of a pooled host-stall item). Its
 * location is the read back's frame, its subject the call's op; g is scratch for the members
 * (reads->n of them at most); a designed wait that read nothing back (no copy to the host)
 * stays host work with the wait's lever (stall_lever). */
static void readback_items(sm_ctx *c, const an_time_account *a, const pool *reads,
                           an_item_row *g_m) {
  for (size_t k = 0; k < reads->n; k++) {
    if (reads->m[k].row == SIZE_MAX) continue; /* in an earlier read back's item */
    const char *frame = a->causes[reads->m[k].row].designed;
    pool g = {0, 0, -1, 0, g_m, 0};
    for (size_t j = k; j < reads->n; j++) {
      an_item_row *r = &reads->m[j];
      if (r->row == SIZE_MAX || a->causes[r->row].designed != frame) continue;
      pool_add(&g, &a->causes[r->row], r->row, r->part);
      if (j > k) r->row = SIZE_MAX;
    }
    an_summary_item *it = pool_item(c, &g, AN_ACTION_REMOVE_SYNC, frame);
    if (!it) continue;
    const an_idle_cause *top = &a->causes[g.row];
    it->readback = top;
    it->what = top->designed_op ? top->designed_op : top->designed_call;
    it->idle_kind = top->kind;
    for (size_t j = 0; j < g.n; j++)
      if ((double)a->causes[g.m[j].row].max_gap_ns / 1000.0 > it->detail_us)
        it->detail_us = (double)a->causes[g.m[j].row].max_gap_ns / 1000.0;
    it->lever = c->designed_sync;
    it->lever_op = frame;
    it->lever_designed = it->lever != NULL;
  }
}

/* On a trace filtered or sampled to GPU work, the idle it cannot explain is one item: profile
 * the window again unfiltered. Its bound is the queued work nothing the filter kept holds
 * (idle kind filtered: likely dropped kernels) and the host stalls whose host work it dropped
 * (unseen_host_us, which sm_idle_items' host causes counted for the Limits), ranked by that
 * bound like any item (review 14 defect 4: on hta_sampled_2ranks 32 % of the step was queued
 * and 15 % dropped host work, and "re-profile unfiltered" was only in the banner). */
static void dropped_item(sm_ctx *c, const pool *dropped) {
  if (dropped->row < 0 || !c->g.st->host_filtered) return;
  an_summary_item *it = pool_item(c, dropped, AN_ACTION_DEPENDENCY, NULL);
  if (!it) return;
  int64_t queued = 0; /* of its bound, the queued part; the rest is host work dropped */
  for (size_t k = 0; k < dropped->n; k++) {
    const an_idle_cause *x = &c->g.st->timeline->total.causes[dropped->m[k].row];
    if (x->kind == AN_IDLE_FILTERED) queued += part_ns(x, dropped->m[k].part);
  }
  double host = it->at_stake_us - per_step_us(c, queued);
  it->basis_us = it->at_stake_us; /* capturing again wins nothing itself: no bound */
  it->at_stake_us = 0;
  it->basis = AN_BASIS_UNBOUNDED; /* an_summary_capture_again */
  it->idle_kind = AN_IDLE_FILTERED;
  it->host_filtered = false; /* the filter is its subject: ranked by its bound, not after */
  it->dropped_host_us = host;
  const an_trace_limits *l = &c->rep->limits;
  it->ranks_unread = l->world_size > (long)(l->ranks_read > 1 ? l->ranks_read : 1);
  for (size_t k = 0; k < dropped->n; k++) {
    const an_idle_cause *x = &c->g.st->timeline->total.causes[dropped->m[k].row];
    if ((double)x->max_gap_ns / 1000.0 > it->detail_us)
      it->detail_us = (double)x->max_gap_ns / 1000.0;
  }
}

/* On a stage whose trace lost graph-replayed work (an_stage_timeline.graph_unrecorded), its
 * queued-work idle is no wait to find: GPU work the trace did not record may fill it, so the
 * item says to capture again, with no bound (the idle is unmeasured); its basis time is that
 * idle, its rows the queued pool's (review 17 defect 1: hta_multistream5 sent the user to
 * hunt a graph's wait for 57% of the step while its replays had lost their GEMMs). */
static void unrecorded_item(sm_ctx *c, const pool *queued) {
  const an_stage_timeline *tl = c->g.st->timeline;
  double us = per_step_us(c, queued->ns);
  an_summary_item *it = sm_add(c, AN_SUMMARY_IDLE, AN_ACTION_DEPENDENCY, (size_t)queued->row, NULL,
                               0, AN_BASIS_UNBOUNDED, us);
  if (!it) return;
  it->idle_kind = AN_IDLE_OUTSIDE;
  it->graph_unrecorded = true;
  it->timeline = tl;
  it->least_gap_us = c->s->timeline_long_gap_us;
  it->count = queued->gaps;
  it->graph_hole_us = per_step_us(c, tl->total.graph_hole_ns);
  for (size_t k = 0; k < queued->n; k++) /* the largest member first */
    if (queued->m[k].row == (size_t)queued->row)
      sm_item_row(c, queued->m[k].row, queued->m[k].part);
  for (size_t k = 0; k < queued->n; k++) {
    if (queued->m[k].row != (size_t)queued->row)
      sm_item_row(c, queued->m[k].row, queued->m[k].part);
    double g = (double)tl->total.causes[queued->m[k].row].max_gap_ns / 1000.0;
    if (g > it->detail_us) it->detail_us = g;
  }
}

/* sm_host_block_item: a host that sits in a read back far longer than its copy waits for
 * the work queued before the copy on its stream; while it waits it issues nothing, so the
 * GPU idle inside the calls (nothing on any stream) is what the step could win, at most the
 * time blocked (review 18 defect 8: hta_multistream5's host sat 139-147 ms a step in a
 * 704-byte read back under `## sparse_data_dist ##`, named nowhere but as 0.43 ms of sync
 * idle after it). */
void sm_host_block_item(sm_ctx *c) {
  const an_stage_timeline *tl = c->g.st->timeline;
  if (!tl || !tl->host_block.n) return;
  const an_host_block *b = &tl->host_block;
  an_summary_item *it =
      sm_add(c, AN_SUMMARY_HOST, AN_ACTION_REMOVE_SYNC, 0, b->location, per_step_us(c, b->idle_ns),
             AN_BASIS_BLOCKED, per_step_us(c, b->blocked_ns));
  if (!it) return;
  it->host_block = b;
  it->timeline = tl;
  it->what = b->call;
  it->count = b->n;
}

/* sm_host_overhead_lead: a stage whose host work per step spans more than its GPU span,
 * when nothing clears the bar (review 21 defect 10: hta_triton_tiny's host spans 855x its
 * 1.8 us of kernels and the report said only "no action over the bar"): the GPU idles the
 * rest of the host's span, so that is the bound; a share of the GPU span would mean
 * nothing, so the share is of the host span. A lead: the trace cannot say whether the path
 * is hot. */
void sm_host_overhead_lead(sm_ctx *c) {
  const an_stage_timeline *tl = c->g.st->timeline;
  if (!tl || !tl->host_exceeds || tl->total.host_ns <= tl->total.span_ns) return;
  double host_us = per_step_us(c, tl->total.host_ns);
  an_summary_item *it = sm_add(c, AN_SUMMARY_HOST, AN_ACTION_HOST_STALL, 0, NULL,
                               host_us - c->g.step_us, AN_BASIS_IDLE, host_us);
  if (!it) return;
  it->host_overhead = true;
  it->timeline = tl;
  it->step_us = host_us; /* the step as the host spans it */
  it->share_pct = it->at_stake_us / host_us * 100.0;
  it->lead = true;
  /* its evidence: the stage's largest kernel, the GPU work the host's span wraps */
  an_summary_anchor(it->anchor, sizeof it->anchor, "kernel", c->g.st->id, 0);
}

/* The allocator stalling every step: an item of cause i; a release lead before its
 * allocations (an alloc cause's child, release_extra in timeline.c) makes the clear's
 * place its lever: expandable segments or a warm-up before the clear cannot keep blocks the
 * step's own harness hands back (review 19 defect 11: hta_alexnet's [param|clear_cache]). */
static void alloc_item(sm_ctx *c, const an_idle_cause *x, size_t i) {
  an_summary_item *it = named_idle(c, x, i, AN_ACTION_HOST_STALL, AN_PART_ALL);
  if (it) it->alloc_after_release = x->child != NULL;
}

/* The member lists sm_idle_items fills, each of at most one row per cause. */
enum { LIST_LAUNCH, LIST_QUEUED, LIST_STALLS, LIST_REGION, LIST_DROPPED, LIST_READS, LISTS };

void sm_idle_items(sm_ctx *c) {
  const an_time_account *a = &c->g.st->timeline->total;
  const size_t room = a->n_causes + 1;
  an_item_row *m = calloc(LISTS * room, sizeof *m);
  if (!m) {
    c->nomem = true;
    return;
  }
  pool p = {0, 0, -1, 0, m + LIST_LAUNCH * room, 0};
  pool queued = {0, 0, -1, 0, m + LIST_QUEUED * room, 0};
  pool stalls = {0, 0, -1, 0, m + LIST_STALLS * room, 0};
  pool dropped = {0, 0, -1, 0, m + LIST_DROPPED * room, 0};
  pool reads = {0, 0, -1, 0, m + LIST_READS * room, 0};
  for (size_t i = 0; i < a->n_causes; i++) {
    const an_idle_cause *x = &a->causes[i];
    if (x->designed_copy && (x->kind == AN_IDLE_HOST || x->kind == AN_IDLE_LAUNCH))
      pool_add(&reads, x, i, AN_PART_ALL); /* after a designed read back: its item */
    else if (x->kind == AN_IDLE_SYNC || x->kind == AN_IDLE_BLOCKED) /* blocked: in another thread */
      stall_lever(c, named_idle(c, x, i, AN_ACTION_REMOVE_SYNC, AN_PART_ALL));
    else if (x->kind == AN_IDLE_ALLOC) /* the allocator stalls every step */
      alloc_item(c, x, i);
    /* queued work waiting long; not on a trace filtered or sampled to GPU work, which drops
     * kernels too: its gap may be a dropped kernel (review 8; the Limits say so) */
    else if ((x->kind == AN_IDLE_DEPENDENCY || x->kind == AN_IDLE_EVENT_WAIT ||
              x->kind == AN_IDLE_OUTSIDE) &&
             x->long_gaps && !c->g.st->host_filtered)
      pool_add(&queued, x, i, x->long_gaps < x->gaps ? AN_PART_LONG : AN_PART_ALL);
    else if (x->kind == AN_IDLE_FILTERED) /* queued work nothing the filter kept holds */
      pool_add(&dropped, x, i, AN_PART_ALL);
    else if (x->kind == AN_IDLE_SHORT && c->g.eager) /* eager launch spacing under the bar */
      pool_add(&p, x, i, AN_PART_ALL);
    else if (x->kind == AN_IDLE_HOST || x->kind == AN_IDLE_LAUNCH)
      host_cause(c, x, i, &p, &stalls, &dropped);
  }
  stall_items(c, a, &stalls, m + LIST_REGION * room);
  readback_items(c, a, &reads, m + LIST_REGION * room);
  /* queued work is one action whatever call issued it (a graph launch, a kernel launch):
   * find what it waits on */
  const an_idle_cause *top = queued.row >= 0 ? &a->causes[queued.row] : NULL;
  if (top && c->g.st->timeline->graph_unrecorded) {
    unrecorded_item(c, &queued);
    top = NULL;
  }
  an_summary_item *it = top ? pool_item(c, &queued, AN_ACTION_DEPENDENCY, top->location) : NULL;
  if (it) {
    it->what = top->kind == AN_IDLE_EVENT_WAIT ? NULL : top->what; /* a stream issues nothing */
    it->idle_kind = top->kind;
    for (size_t k = 0; k < queued.n; k++) {
      double g = (double)a->causes[queued.m[k].row].max_gap_ns / 1000.0;
      if (g > it->detail_us) it->detail_us = g;
    }
    if (it->n_rows) queue_lever(c, it);
  }
  dropped_item(c, &dropped);
  double us = per_step_us(c, p.ns);
  if (p.row >= 0 && us >= c->s->summary_launch_bound_min_pct / 100.0 * c->g.step_us &&
      (it = pool_item(c, &p, AN_ACTION_LAUNCH_BOUND, NULL))) {
    it->detail_us = (double)a->median_gap_ns / 1000.0;
    it->eager = c->g.eager;
    it->host_bound = c->g.host_bound;
    pool_lever(c, it, &a->causes[p.row]);
    /* each op slow on the host: a slow or contended CPU first (review 17 defect 8) */
    double r = c->g.st->timeline->dispatch_ratio;
    if (r >= c->s->summary_dispatch_slow_ratio) it->dispatch_ratio = r;
  }
  free(m);
}

/* Kendall's rank correlation of v[0..n) with its order: 1 when every later value is larger. */
static double kendall_tau(const double *v, size_t n) {
  double conc = 0, disc = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      conc += v[j] > v[i];
      disc += v[j] < v[i];
    }
  double pairs = (double)n * (double)(n - 1) / 2.0;
  return pairs > 0 ? (conc - disc) / pairs : 0;
}

/* A shape judged of one series (sm_shape_of): the an_summary_item fields it fills. */
typedef struct sm_shape {
  an_wait_shape shape;
  int dir; /* 1 rising, -1 falling, 0 neither */
  double from, to;
  size_t step;
  double lo[2], hi[2];
} sm_shape;

/* Whether b differs from a by at least the pack's share of the larger (both >= 0) and of
 * the mean step (collectives.shape_min_step_pct: jitter around a 0 floor is no change). */
static bool big_change(const sm_ctx *c, double a, double b) {
  double big = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return big > 0 && fabs(b - a) * 100.0 >= c->s->collectives_trend_min_change_pct * big &&
         fabs(b - a) * 100.0 >= c->s->collectives_shape_min_step_pct * c->g.step_us;
}

/* Mean, least and most of v[a..b), and its squared deviations from the mean. */
static double level_of(const double *v, size_t a, size_t b, double *lo, double *hi) {
  double sum = 0;
  *lo = *hi = v[a];
  for (size_t i = a; i < b; i++) {
    sum += v[i];
    if (v[i] < *lo) *lo = v[i];
    if (v[i] > *hi) *hi = v[i];
  }
  double mean = sum / (double)(b - a), sse = 0;
  for (size_t i = a; i < b; i++) sse += (v[i] - mean) * (v[i] - mean);
  return sse;
}

/* One jump (collectives.jump_*): the split of v[0..n) into two levels with the least
 * squared deviation inside them, each of at least jump_min_level_steps steps, whose means
 * differ by jump_min_ratio x the widest range inside a level and by the trend's share. */
static bool jump_of(const sm_ctx *c, const double *v, size_t n, sm_shape *out) {
  size_t min = (size_t)c->s->collectives_jump_min_level_steps, best = 0;
  double best_sse = 0;
  for (size_t k = min; k + min <= n; k++) {
    double lo, hi, sse = level_of(v, 0, k, &lo, &hi) + level_of(v, k, n, &lo, &hi);
    if (!best || sse < best_sse) best = k, best_sse = sse;
  }
  if (!best) return false;
  double m[2] = {0, 0};
  for (size_t i = 0; i < n; i++) m[i >= best] += v[i];
  m[0] /= (double)best;
  m[1] /= (double)(n - best);
  sm_shape s = {
      .shape = AN_SHAPE_JUMP, .dir = m[1] > m[0] ? 1 : -1, .from = m[0], .to = m[1], .step = best};
  level_of(v, 0, best, &s.lo[0], &s.hi[0]);
  level_of(v, best, n, &s.lo[1], &s.hi[1]);
  double wide = s.hi[0] - s.lo[0] > s.hi[1] - s.lo[1] ? s.hi[0] - s.lo[0] : s.hi[1] - s.lo[1];
  if (fabs(m[1] - m[0]) < c->s->collectives_jump_min_ratio * wide || !big_change(c, m[0], m[1]))
    return false;
  *out = s;
  return true;
}

/* The shape of v[0..n), a per-step wait in step order (collectives.trend_* and jump_*):
 * one jump before a sustained trend (a jump also orders the steps), spread when the steps
 * are far apart in no order; AN_SHAPE_NONE under trend_min_steps steps or within noise. */
static sm_shape shape_of(const sm_ctx *c, const double *v, size_t n) {
  sm_shape s = {.shape = AN_SHAPE_NONE};
  if (n < (size_t)c->s->collectives_trend_min_steps || jump_of(c, v, n, &s)) return s;
  double tau = kendall_tau(v, n);
  if (big_change(c, v[0], v[n - 1]) && fabs(tau) >= c->s->collectives_trend_min_tau &&
      (v[n - 1] > v[0]) == (tau > 0))
    return (sm_shape){
        .shape = AN_SHAPE_TREND, .dir = tau > 0 ? 1 : -1, .from = v[0], .to = v[n - 1]};
  size_t most = 0, least = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i] > v[most]) most = i;
    if (v[i] < v[least]) least = i;
  }
  if (big_change(c, v[least], v[most]))
    s = (sm_shape){.shape = AN_SHAPE_SPREAD, .from = v[least], .to = v[most], .step = most};
  return s;
}

/* The wait item's shape across the steps of its stage's first trace, in step order: of
 * the wait at each step's first collective, else of each step's whole collective wait; a
 * jump or trend of either before a spread of either. */
static void wait_trend(sm_ctx *c, an_summary_item *it) {
  const an_stage_timeline *tl = it->timeline;
  size_t n = 0;
  while (n < tl->n_steps && tl->steps[n].trace == tl->steps[0].trace) n++;
  double *v = n ? malloc(n * sizeof *v) : NULL;
  if (!v) {
    c->nomem = n > 0;
    return;
  }
  for (int first = 1; first >= 0 && it->shape != AN_SHAPE_JUMP && it->shape != AN_SHAPE_TREND;
       first--) {
    for (size_t k = 0; k < n; k++) {
      const an_time_account *a = &tl->steps[k].account;
      v[k] = (double)(first ? a->first_collective_wait_ns : a->collective_wait_ns) / 1000.0;
    }
    sm_shape s = shape_of(c, v, n);
    if (s.shape == AN_SHAPE_NONE || (s.shape == AN_SHAPE_SPREAD && it->shape)) continue;
    it->shape = s.shape;
    it->trend = s.dir;
    it->trend_at_first = first;
    it->trend_from_us = s.from;
    it->trend_to_us = s.to;
    it->trend_steps = n;
    it->shape_step = s.step;
    memcpy(it->level_lo_us, s.lo, sizeof s.lo);
    memcpy(it->level_hi_us, s.hi, sizeof s.hi);
  }
  free(v);
}

/* ---------------------------------------------------------------- wait */

/* The Ranks section's group of the tables' rank (the report's first input) in the stage:
 * a directory run knows who the rank waits for. NULL for a one-rank run. */
static const an_rank_group *tables_rank_group(const sm_ctx *c) {
  const an_report *rep = c->rep;
  const char *input = rep->run.n_formal_inputs ? rep->run.formal_inputs[0] : NULL;
  for (size_t i = 0; input && i < rep->n_ranks; i++) {
    const an_rank_report *rr = &rep->ranks[i];
    if (strcmp(rr->stage, c->g.st->id) != 0) continue;
    for (size_t k = 0; k < rr->n_rows; k++)
      if (rr->rows[k].path && !strcmp(rr->rows[k].path, input) && rr->rows[k].group < rr->n_groups)
        return &rr->groups[rr->rows[k].group];
  }
  return NULL;
}

/* The straggler's compute runs longer because it is given more work: the imbalance rows
 * of g (in the stage's Ranks section) whose longest rank is the straggler; the one with
 * the most excess goes on the item, with their count and summed excess. */
static void straggler_imbalance(const sm_ctx *c, const an_rank_group *g, an_summary_item *it) {
  if (!g || g->verdict != AN_RANK_STRAGGLER ||
      (g->extra_compute_per_step_us <= 0 && g->cause != AN_CAUSE_IMBALANCE))
    return;
  for (size_t i = 0; i < c->rep->n_ranks; i++) {
    const an_rank_report *rr = &c->rep->ranks[i];
    if (g < rr->groups || g >= rr->groups + rr->n_groups) continue;
    size_t gi = (size_t)(g - rr->groups);
    for (size_t k = 0; k < rr->n_imbalance; k++) {
      const an_imbalance_row *x = &rr->imbalance[k];
      if (x->group != gi || x->max_rank != g->straggler) continue;
      double excess = x->max_us - x->min_us;
      if (!it->imbalance || excess > it->imbalance->max_us - it->imbalance->min_us)
        it->imbalance = x;
      it->n_imbalance++;
      it->imbalance_excess_us += excess;
    }
  }
}

/* What one rank of the group loses per step to the late arrivals (the Ranks section's
 * cross-rank floor: the fastest rank's instance), 0 without a loss or steps. A rank's own
 * floor (the account's) keeps as transfer a wait that recurs in every step. */
static double rank_loss_per_step(const an_rank_group *g) {
  if (!g || g->n_ranks < 2 || !g->n_steps ||
      (g->verdict != AN_RANK_STRAGGLER && g->verdict != AN_RANK_SPREAD))
    return 0;
  return g->lost_per_step_us / (double)(g->n_ranks - 1);
}

static void link_wait_rows(const sm_ctx *c, an_summary_item *it, size_t coll);

/* Where the stage's wait sits (an_wait_story, deviation O22; the overlap table's wait rows
 * tell the same): a late rank when it sits at the first collective of the step
 * (summary.straggler_first_min_pct of it), or the Ranks section measured whom it waits for,
 * or it read only some ranks of the run (an unread rank may be late at any collective), or
 * the first collectives' own wait is mostly unknown (no floor where a late rank's arrival
 * lands: param_dlrm_rank0_v100's first all-to-all, one rank of eight, cannot rule it out).
 * Wait spread over the step's later collectives, after first ones that ran at their
 * floors, is those collectives running slow. */
static an_wait_story wait_story(const sm_ctx *c, const an_rank_group *rg, bool measured,
                                double first_us, double wait_us) {
  const an_time_account *a = &c->g.st->timeline->total;
  bool first_unknown = a->first_collective_unknown_ns * 2 > a->first_collective_ns;
  bool late = measured || rg || first_unknown ||
              first_us * 100.0 >= c->s->summary_straggler_first_min_pct * wait_us;
  /* deviation O26: on a stage idle for the host or for queued work most of the step (that
   * idle alone clears summary.bottleneck_idle_pct), collectives that wait mid-step wait
   * for ranks that reach them at different times (hta_ddp_nccl_a100: 76% of the step idle
   * for the host; hta_multistream5_a100: 51% with graph work sitting queued) */
  double idle_us = c->g.host_idle_us + c->g.queued_idle_us; /* the bottleneck's idle kinds */
  bool idle =
      c->g.step_us > 0 && idle_us / c->g.step_us * 100.0 >= c->s->summary_bottleneck_idle_pct;
  return wait_us <= 0 ? AN_WAIT_STORY_NONE
         : late       ? AN_WAIT_STORY_LATE_RANK
         : idle       ? AN_WAIT_STORY_IDLE
                      : AN_WAIT_STORY_MID_STEP;
}

/* The stage's idle item of the largest bound (NULL: none cleared the bar). */
static an_summary_item *idle_item(sm_ctx *c) {
  an_summary_item *best = NULL;
  for (size_t i = 0; i < c->n; i++) {
    an_summary_item *it = &c->v[i];
    if (it->kind == AN_SUMMARY_IDLE && !strcmp(it->stage_id, c->g.st->id) &&
        (!best || it->at_stake_us > best->at_stake_us))
      best = it;
  }
  return best;
}

/* Deviation O26 (brief 11 defect 4: "find why collectives run above their floor mid-step"
 * beside a host-bound step was vague, and its cause is the idle): the wait folds into the
 * stage's largest idle item as evidence, with its figure; the W rows and the overlap
 * table's wait rows of those collectives link to it. False when the stage has no idle
 * item to fold into. */
static bool fold_into_idle(sm_ctx *c, double us) {
  an_summary_item *into = idle_item(c);
  if (!into) return false;
  const an_stage_timeline *tl = c->g.st->timeline;
  into->folded_wait_us = us;
  for (size_t i = 0; i < tl->n_collectives; i++) {
    if (tl->collectives[i].wait_ns <= 0) continue;
    sm_item_more(into, "wait", c->g.st->id, i);
    link_wait_rows(c, into, i);
  }
  return true;
}

/* Adds kernel to the last item unless the item names it already (the rows a collective's
 * launch contexts split it into share its name). */
static void item_kernel_once(sm_ctx *c, const char *kernel) {
  for (size_t k = c->nk - c->v[c->n - 1].n_kernels; k < c->nk; k++)
    if (!strcmp(c->kpool[k], kernel)) return;
  sm_item_kernel(c, kernel);
}

/* The least-squares slope of the steps' span on their collective wait over the steps of
 * the stage's first trace (an_summary_item.sensitivity), with their count and ranges into
 * m; false when they are too few or their wait too steady to read it from
 * (collectives.sensitivity_*: m->sens_steps says which), or the slope is above 1: the step
 * grows more than the wait, so other work grows in the same steps and hides the wait's
 * own effect. */
static bool wait_sensitivity(const sm_ctx *c, an_summary_item *m) {
  const an_stage_timeline *tl = c->g.st->timeline;
  size_t n = 0;
  double sx = 0, sy = 0;
  while (n < tl->n_steps && tl->steps[n].trace == tl->steps[0].trace) {
    const an_time_account *a = &tl->steps[n++].account;
    sx += (double)a->collective_wait_ns / 1000.0;
    sy += (double)a->span_ns / 1000.0;
  }
  m->sens_steps = n;
  m->few_steps = n < (size_t)c->s->collectives_sensitivity_min_steps;
  if (m->few_steps) return false;
  double mx = sx / (double)n, my = sy / (double)n, sxy = 0, sxx = 0;
  m->sens_wait_us[0] = m->sens_wait_us[1] = mx;
  m->sens_step_us[0] = m->sens_step_us[1] = my;
  for (size_t k = 0; k < n; k++) {
    double x = (double)tl->steps[k].account.collective_wait_ns / 1000.0;
    double y = (double)tl->steps[k].account.span_ns / 1000.0;
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
    m->sens_wait_us[0] = fmin(m->sens_wait_us[0], x);
    m->sens_wait_us[1] = fmax(m->sens_wait_us[1], x);
    m->sens_step_us[0] = fmin(m->sens_step_us[0], y);
    m->sens_step_us[1] = fmax(m->sens_step_us[1], y);
  }
  double range = m->sens_wait_us[1] - m->sens_wait_us[0];
  if (sxx <= 0 || range * 100.0 < c->s->collectives_sensitivity_min_range_pct * c->g.step_us)
    return false;
  m->sensitivity = sxy / sxx;
  return m->sensitivity <= 1;
}

/* What removing the wait above the floors (above_us per step) wins, with its model into m
 * (review 18 defect 6: a wait the step absorbs wins nothing): where the steps show how the
 * step moves with the wait, that (the slope, at least 0) times the wait; else the part of
 * the wait with nothing else on any stream, the GPU doing only that. */
static double wait_win(const sm_ctx *c, double above_us, an_summary_item *m) {
  m->wait_above_us = above_us;
  m->idle_wait_us =
      fmin(above_us, per_step_us(c, c->g.st->timeline->total.collective_idle_wait_ns));
  if (wait_sensitivity(c, m)) {
    m->wait_model = AN_WAIT_BOUND_SENSITIVITY;
    return fmax(0.0, m->sensitivity) * above_us;
  }
  m->wait_model = AN_WAIT_BOUND_IDLE;
  return m->idle_wait_us;
}

/* Copies wait_win's model from m into it. */
static void set_wait_model(an_summary_item *it, const an_summary_item *m) {
  it->wait_above_us = m->wait_above_us;
  it->wait_model = m->wait_model;
  it->sensitivity = m->sensitivity;
  it->sens_steps = m->sens_steps;
  it->few_steps = m->few_steps;
  memcpy(it->sens_wait_us, m->sens_wait_us, sizeof m->sens_wait_us);
  memcpy(it->sens_step_us, m->sens_step_us, sizeof m->sens_step_us);
  it->idle_wait_us = m->idle_wait_us;
}

/* One item per stage: the waits have one root cause, the rank the others wait for. Its
 * rows are the collectives that wait (all of them when the Ranks section measured the
 * loss). The bound is their wait above their floors; where the Ranks section measured what
 * a rank of the group loses to the straggler it names (its group read whole, or the
 * imbalance its ranks show), that loss instead: fixing it wins no more (nor less: its own
 * floor keeps as transfer a wait that recurs every step); where its cause is work
 * imbalance, at most the straggler's excess over an even share (what rebalancing moves).
 * At most the rows' time. With no such loss, what removing the wait moves the step
 * (wait_win). */
void sm_wait_items(sm_ctx *c) {
  const an_stage_timeline *tl = c->g.st->timeline;
  if (!tl->n_collectives) return;
  const an_rank_group *rg = tables_rank_group(c);
  /* a group that is only the ranks read, of a run with more: its floor may be late too */
  bool partial =
      rg && rg->source == AN_GROUP_ALL_RANKS && c->rep->limits.world_size > (long)rg->n_ranks;
  an_summary_item probe = {0};
  straggler_imbalance(c, rg, &probe);
  double loss = rank_loss_per_step(rg);
  bool measured = loss > 0 && (!partial || probe.imbalance);
  int64_t total = 0, wait = 0;
  for (size_t i = 0; i < tl->n_collectives; i++)
    if (measured || tl->collectives[i].wait_ns > 0) {
      total += tl->collectives[i].total_ns;
      wait += tl->collectives[i].wait_ns;
    }
  double coll = per_step_us(c, total);
  double us = measured ? loss : per_step_us(c, wait);
  /* the basis quotes what the ranks read lose to one another (rank_wait_basis): the item
   * claims no more than that evidence, even where unread ranks may add to it */
  if (loss > 0 && us > loss) us = loss;
  /* rebalancing wins at most what makes the step wait: the work the straggler runs over
   * an even share (the Ranks section's excess families, its cause), capped by that loss
   * (review 10: hta_sampled_2ranks claimed its whole 35.58 ms/step excess against a
   * 16.01 ms/step loss) */
  size_t even_of = rg ? rg->n_ranks : 0;
  double even = rg ? rg->balanced_excess_per_step_us : 0;
  /* of a run with ranks not read, an even split spreads the excess over every rank of the
   * run, not only those read: the straggler keeps 1/world_size of it (the share over the
   * ranks read would understate what it sheds) */
  if (partial && even > 0) {
    even_of = (size_t)c->rep->limits.world_size;
    even = rg->excess_per_step_us * (double)(even_of - 1) / (double)even_of;
  }
  bool balanced = measured && rg->cause == AN_CAUSE_IMBALANCE && even > 0 && even < us;
  if (balanced) us = even;
  if (us > coll) us = coll;
  double first_us = per_step_us(c, tl->total.first_collective_wait_ns);
  /* decided whether or not the item clears the share bar: the rows tell it too */
  c->to->wait_story = wait_story(c, rg, measured, first_us, us);
  if (us <= 0) return;
  if (c->to->wait_story == AN_WAIT_STORY_IDLE && fold_into_idle(c, us)) return;
  an_summary_item model = {.wait_above_us = us};
  if (!measured) us = wait_win(c, us, &model);
  const an_collective_time *top = &tl->collectives[0]; /* wait descending */
  an_summary_item *it =
      sm_add(c, AN_SUMMARY_WAIT, AN_ACTION_RANK_SKEW, 0, NULL, us, AN_BASIS_WAIT, coll);
  if (!it) return;
  set_wait_model(it, &model);
  it->what = top->kernel;
  it->detail_us = (double)top->floor_ns / 1000.0;
  it->first_wait_us = first_us;
  it->first_unknown_us = per_step_us(c, tl->total.first_collective_unknown_ns);
  it->rank_group = rg;
  it->rank_group_partial = partial;
  /* the bound is what the Ranks section gives: the loss, or the even share below it */
  it->rank_balanced = balanced && us >= even;
  it->rank_even_us = even;
  it->rank_even_of = even_of;
  it->rank_measured = loss > 0 && (us >= loss || it->rank_balanced);
  it->timeline = tl;
  straggler_imbalance(c, rg, it);
  /* a sharding change rests on every rank's whole work: of a run with ranks not read, or
   * read from traces filtered or sampled to GPU work, the imbalance is a lead to confirm
   * first (blind review 21 defect 9: 2 of 128 ranks, both sampled) */
  it->rank_unconfirmed = (it->imbalance || (rg && rg->cause == AN_CAUSE_IMBALANCE)) &&
                         (partial || c->rep->limits.filtered_ranks > 0);
  wait_trend(c, it);
  /* an idle-bound stage with no idle item keeps the mid-step item */
  if (c->to->wait_story != AN_WAIT_STORY_LATE_RANK) it->action = AN_ACTION_SLOW_COLLECTIVE;
  it->score = te_number_map_get(&c->s->summary_weights, an_summary_action_id(it->action)) * us;
  for (size_t i = 0; i < tl->n_collectives; i++) {
    if (!measured && tl->collectives[i].wait_ns <= 0) continue;
    it->count += tl->collectives[i].instances;
    item_kernel_once(c, tl->collectives[i].kernel);
    sm_item_row(c, i, AN_PART_ALL);
    link_wait_rows(c, it, i);
  }
}

/* ---------------------------------------------------------------- collectives */

static bool stage_collective(const an_stage_report *st, const char *name) {
  const an_stage_timeline *tl = st->timeline;
  for (size_t i = 0; tl && i < tl->n_collectives; i++)
    if (!strcmp(tl->collectives[i].kernel, name)) return true;
  return false;
}

bool sm_is_collective(const sm_ctx *c, const char *name) { return stage_collective(c->g.st, name); }

/* ---------------------------------------------------------------- chain */

/* A row of the kind a chain holds by its category, kind and name, whatever op launched it. */
static bool link_kind(const te_rules *rules, const an_kernel_row *r) {
  const te_settings *s = te_rules_settings(rules);
  return te_string_list_has(&s->summary_chain_categories, r->category) &&
         !te_string_list_has(&s->summary_chain_exclude_kinds, r->kind) &&
         !sm_hits(te_rules_matcher(rules, "already_fused_kernel"), r->name) &&
         !sm_hits(te_rules_matcher(rules, "chain_exclude_kernel"), r->name);
}

static bool chain_kind_row(const te_rules *rules, const an_stage_report *st,
                           const an_kernel_row *r) {
  return link_kind(rules, r) && !stage_collective(st, r->name);
}

/* Whether every counted launch of the row ran under an op a compiler cannot fuse through
 * (opaque_ops.h): the row stays on its own. */
static bool all_opaque(const an_kernel_row *r) {
  return r->opaque_steps_us > 0 && r->opaque_steps_us >= r->steps_us;
}

bool an_summary_chain_row(const te_rules *rules, const an_stage_report *st,
                          const an_kernel_row *r) {
  return chain_kind_row(rules, st, r) && !all_opaque(r);
}

bool an_summary_chain_link(const te_rules *rules, const an_kernel_row *r) {
  return link_kind(rules, r) && !all_opaque(r);
}

bool an_summary_eager(const te_rules *rules, const an_stage_report *st) {
  const an_time_account *a = st->timeline ? &st->timeline->total : NULL;
  return a && a->kernel_ns > 0 &&
         (double)a->graph_kernel_ns / (double)a->kernel_ns * 100.0 <
             te_rules_settings(rules)->summary_chain_max_graph_pct;
}

/* A kernel row of an eager elementwise or copy chain (an_summary_chain_row). */
static bool chain_row(const sm_ctx *c, const an_kernel_row *r) {
  return an_summary_chain_row(c->rules, c->g.st, r);
}

/* The part of a row's per-step time t that ran with nothing else on the GPU (the overlap
 * sweep's exclusive share); all of t when the stage has no overlap block for it. */
static double alone_per_step(const sm_ctx *c, const an_kernel_row *r, double t) {
  const an_overlap_stage *o = c->g.st->overlap;
  for (size_t i = 0; o && i < o->n_alone; i++)
    if (!strcmp(o->alone[i].kernel, r->name))
      return o->alone[i].total_us > 0 ? t * o->alone[i].exclusive_us / o->alone[i].total_us : t;
  return t;
}

/* Of time t that folding a family's launches removes, the part that shortens the step:
 * only the time a kernel ran with nothing else on the GPU does (alone of the family's
 * sum); a launch beside another stream's kernel (a chain beside NCCL) leaves the step as
 * long (blind review 20 defect 2: hta_async's chains ran 9.50 of their 14.70 ms/step
 * alone, and their whole 7.82 ms/step fold was the bound). The runs do not say which of
 * their launches ran alone, so t counts at the family's share. */
static double exposed_part(double t, double alone, double sum) {
  return sum > 0 && alone < sum ? t * alone / sum : t;
}

/* A chain row's per-step time a fused chain can take: its launches under an op a compiler
 * cannot fuse through (a TorchRec comm op's copies, opaque_ops.h) stay in their own row. */
static double chain_per_step(const sm_ctx *c, const an_kernel_row *r) {
  double t = (r->steps_us - r->opaque_steps_us) * c->g.per;
  return t > 0 ? t : 0;
}

/* Where the chain's time sits (review 10 defect 1: one location, apply_rotary_pos_emb, for
 * RMSNorm, RoPE, MLP and SDPA-copy ladders): each chain row's time split over its shown
 * sites by their share of it, summed by location, the AN_ITEM_FRAMES largest kept in the
 * item with their share of the chain's located time (launches with a Python frame). */
typedef struct frame_time {
  const char *loc;
  double us;
} frame_time;

static void add_frame(frame_time *v, size_t *n, const char *loc, double us) {
  for (size_t i = 0; i < *n; i++)
    if (v[i].loc == loc || !strcmp(v[i].loc, loc)) {
      v[i].us += us;
      return;
    }
  v[(*n)++] = (frame_time){loc, us};
}

/* The sites a row's time spreads over: its map entry's, every one (the shown sites are
 * the first few); without an entry, its shown sites. Site k, with its share of the row. */
static size_t n_row_sites(const an_kernel_row *r) {
  return r->entry && r->entry->total_us > 0 ? r->entry->n_sites : r->n_shown_sites;
}

static const an_site *row_site(const an_kernel_row *r, size_t k, double *share) {
  if (r->entry && r->entry->total_us > 0) {
    *share = r->entry->sites[k].total_us / r->entry->total_us;
    return &r->entry->sites[k];
  }
  *share = r->shown_sites[k]->share_pct_within_kernel / 100.0;
  return r->shown_sites[k];
}

static void chain_frames(sm_ctx *c, an_summary_item *it) {
  size_t cap = 0, n = 0;
  for (size_t i = 0; i < c->g.st->n_kernels; i++)
    if (chain_row(c, &c->g.st->kernels[i])) cap += n_row_sites(&c->g.st->kernels[i]);
  frame_time *v = cap ? malloc(cap * sizeof *v) : NULL;
  if (!v) {
    free(v);
    return; /* out of memory: the item keeps its one location */
  }
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    const an_kernel_row *r = &c->g.st->kernels[i];
    if (!chain_row(c, r)) continue;
    double t = chain_per_step(c, r);
    for (size_t k = 0; k < n_row_sites(r); k++) {
      double share = 0;
      const an_site *s = row_site(r, k, &share);
      if (an_location_resolved(s->location)) add_frame(v, &n, s->location, t * share);
    }
  }
  double located = 0; /* launches with no Python frame (a previous step's tail) say nothing */
  for (size_t k = 0; k < n; k++) located += v[k].us;
  for (size_t k = 0; located > 0 && k < AN_ITEM_FRAMES && k < n; k++) { /* largest first */
    size_t best = k;
    for (size_t j = k + 1; j < n; j++)
      if (v[j].us > v[best].us) best = j;
    frame_time x = v[k];
    v[k] = v[best];
    v[best] = x;
    it->frames[it->n_frames] = v[k].loc;
    it->frame_pct[it->n_frames++] = v[k].us / located * 100.0;
  }
  if (it->n_frames) it->location = it->frames[0];
  free(v);
}

void sm_chain_item(sm_ctx *c) {
  if (!c->g.eager) return;
  double sum = 0, top_t = 0, alone = 0, opaque = 0;
  size_t top = SIZE_MAX, n = 0;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    const an_kernel_row *r = &c->g.st->kernels[i];
    if (!chain_kind_row(c->rules, c->g.st, r)) continue;
    double t = chain_per_step(c, r);
    opaque += sm_row_per_step(c, r) - t;
    if (all_opaque(r)) continue;
    sum += t;
    alone += alone_per_step(c, r, t);
    n++;
    if (r->shown && (top == SIZE_MAX || t > top_t)) { /* the evidence: a row the table shows */
      top_t = t;
      top = i;
    }
  }
  /* one kernel is no chain; no row to show for it; no run of two links: nothing to fold */
  const an_chain_runs *ch = &c->g.st->chain;
  if (n < 2 || top == SIZE_MAX || !ch->runs) return;
  const an_kernel_row *tr = &c->g.st->kernels[top];
  const char *loc = tr->n_shown_sites ? tr->shown_sites[0]->location : NULL;
  /* each run folds into one fused kernel that still makes about its longest launch's pass
   * (review 10 defect 1: one pass for 22 kernels across norms, RoPE, MLP and SDPA copies) */
  double runs = ch->time_us * c->g.per, kept = ch->largest_us * c->g.per;
  double fold = runs > kept ? runs - kept : 0;
  if (fold > sum) fold = sum; /* the rows' in-step time bounds the runs' (opaque launches) */
  an_summary_item *it = sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_FUSE_CHAIN, top, loc,
                               exposed_part(fold, alone, sum), AN_BASIS_CHAIN, sum);
  if (!it) return;
  it->count = n;
  it->detail_us = alone;
  it->chain_fold_us = fold;
  it->opaque_us = opaque;
  it->largest_us = kept;
  it->runs_us = runs;
  it->runs = (size_t)lround((double)ch->runs * c->g.per);
  chain_frames(c, it);
  for (size_t i = 0; i < c->g.st->n_kernels; i++) /* time descending, as the rows are */
    if (chain_row(c, &c->g.st->kernels[i])) sm_item_kernel(c, c->g.st->kernels[i].name);
}

/* ---------------------------------------------------------------- kernel levers */

/* Whether one of row r's launching ops with its Input Dims ("OP DIMS", its roofline
 * shapes) matches m. */
static bool shapes_hit(const sm_ctx *c, const an_kernel_row *r, const te_matcher *m) {
  const an_roofline *f = an_row_roofline(c->g.st, r);
  char text[LEVER_OP_TEXT];
  for (size_t i = 0; f && i < f->n_shapes; i++) {
    snprintf(text, sizeof text, "%s %s", f->shapes[i].op ? f->shapes[i].op : "",
             f->shapes[i].dims ? f->shapes[i].dims : "");
    if (sm_hits(m, text)) return true;
  }
  return false;
}

/* Whether m matches a kernel name, uncached through subj (the matcher's cache would keep
 * a copy of every kernel name asked: 12 MB at 262,144 names); subj NULL (out of memory):
 * the cached match, the same answer. */
static bool name_hits(te_subject *subj, const te_matcher *m, const char *name) {
  if (!subj || !m || !name) return sm_hits(m, name);
  te_subject_set(subj, name, strlen(name));
  return te_matcher_match_subject(m, subj);
}

/* A kernel lever's matchers (sm_lever): lever_ID names the kernels; the optional lever_ID_op
 * gates on their launching op and its shapes, lever_ID_with on another row's op and shapes
 * and lever_ID_with_kernel on another row's name (the work the change folds them into);
 * lever_ID_fused names the one kernel that does their work: such a lever folds its kernels
 * into it (bound: their time less the largest piece), and makes no item where it runs. */
static bool lever_row(const sm_ctx *c, const sm_lever *g, const an_kernel_row *r,
                      te_subject *subj) {
  return name_hits(subj, g->name, r->name) && !sm_is_collective(c, r->name) &&
         (!g->op || shapes_hit(c, r, g->op));
}

/* Whether a kernel row of the stage has a name m matches: each row's name asked once,
 * uncached (name_hits). */
static bool stage_runs(const sm_ctx *c, const te_matcher *m, te_subject *subj) {
  bool hit = false;
  for (size_t i = 0; m && !hit && i < c->g.st->n_kernels; i++)
    hit = name_hits(subj, m, c->g.st->kernels[i].name);
  return hit;
}

/* Whether the stage runs the work a lever's kernels fold into (no partner gate: yes) and
 * not the fused kernel that already does theirs. */
static bool lever_partner(const sm_ctx *c, const sm_lever *g, te_subject *subj) {
  bool with = !g->with;
  for (size_t i = 0; !with && i < c->g.st->n_kernels; i++)
    with = shapes_hit(c, &c->g.st->kernels[i], g->with);
  return with && (!g->with_kernel || stage_runs(c, g->with_kernel, subj)) &&
         !stage_runs(c, g->fused, subj);
}

/* A kernel-lever item's kernels; a narrowing links each row the table shows besides its
 * top one (each moves its share of the bytes), a removal or fold only the top one. */
static void lever_kernels(sm_ctx *c, const sm_lever *g, te_subject *subj, an_summary_item *it,
                          size_t top) {
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    const an_kernel_row *r = &c->g.st->kernels[i];
    if (!lever_row(c, g, r, subj)) continue;
    sm_item_kernel(c, r->name);
    if (it->basis == AN_BASIS_NARROWED && r->shown && i != top)
      sm_item_more(it, "kernel", c->g.st->id, i);
  }
}

/* The kernels of a family a named change removes (summary.kernel_levers: a lever id whose
 * matcher lever_ID names kernels; layout conversions that channels_last makes unneeded,
 * expert-weight gathers a grouped MoE GEMM makes unneeded), folds into one fused kernel
 * (a MoE layer's routing pieces) or narrows to a smaller dtype (summary.lever_bytes_kept:
 * FP32 embedding tables in FP16): one item per family, bounded by their in-step time that
 * ran with nothing else on the GPU (a fold: less the largest piece, which the fused kernel
 * still spends; a narrowing: times the share of bytes it removes), its evidence their
 * largest row the kernel table shows. */
static void kernel_lever(sm_ctx *c, const sm_lever *g, te_subject *subj) {
  if (!g->name || !lever_partner(c, g, subj)) return;
  double sum = 0, alone = 0, max = 0, max_alone = 0;
  size_t n = 0, top = SIZE_MAX;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    const an_kernel_row *r = &c->g.st->kernels[i];
    if (!lever_row(c, g, r, subj)) continue;
    double t = sm_row_per_step(c, r), a = alone_per_step(c, r, t);
    sum += t;
    alone += a;
    if (t > max) {
      max = t;
      max_alone = a;
    }
    n++;
    if (r->shown && top == SIZE_MAX) top = i; /* rows are time-descending */
  }
  bool narrow = g->bytes_kept < 1, fold = !narrow && g->fused != NULL;
  if (!n || top == SIZE_MAX || (fold && n < 2)) return; /* one piece folds into nothing */
  const an_kernel_row *tr = &c->g.st->kernels[top];
  const char *loc = tr->n_shown_sites ? tr->shown_sites[0]->location : NULL;
  /* what goes shortens the step only where it ran alone: a fold keeps the largest piece,
   * and its alone part with it (blind review 20 defect 2); a narrower dtype keeps its
   * share of the bytes, and a memory-bound kernel's time at its present rate with them */
  double bound = narrow ? alone * (1 - g->bytes_kept) : fold ? alone - max_alone : alone;
  an_bound_basis basis = narrow ? AN_BASIS_NARROWED : fold ? AN_BASIS_FOLDED : AN_BASIS_REMOVED;
  an_summary_item *it = sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_KERNEL_LEVER, top, loc,
                               bound > 0 ? bound : 0, basis, sum);
  if (!it) return;
  it->count = n;
  it->detail_us = alone;
  it->lever_title = g->title;
  it->bytes_kept = narrow ? g->bytes_kept : 0;
  if (fold) {
    it->largest_us = max;
    it->largest_alone_us = max_alone;
  }
  it->lever = g->run_text;
  it->lever_op = g->id;
  lever_kernels(c, g, subj, it, top);
}

void sm_kernel_lever_items(sm_ctx *c) {
  te_subject *subj = te_subject_create(); /* the rows' names asked uncached (name_hits) */
  for (size_t k = 0; k < c->n_kernel_levers; k++) kernel_lever(c, c->kernel_levers[k], subj);
  te_subject_destroy(subj);
}

/* ---------------------------------------------------------------- casts */

static const char *role_text(const sm_ctx *c, const char *id);

/* The time per step a fused cast still costs: the cast rows' bytes (their roofline records)
 * at the rate row g, their neighbour, moves bytes; 0 when a cast row or g has no record. */
static double cast_fused_us(const sm_ctx *c, const te_matcher *m, te_subject *subj,
                            const an_kernel_row *g) {
  const an_roofline *fg = g ? an_row_roofline(c->g.st, g) : NULL;
  if (!fg || fg->achieved_tbs <= 0) return 0;
  double bytes = 0;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    const an_kernel_row *r = &c->g.st->kernels[i];
    if (!name_hits(subj, m, r->name)) continue;
    const an_roofline *f = an_row_roofline(c->g.st, r);
    if (!f || f->bytes <= 0 || f->time_us <= 0) return 0;
    bytes += f->bytes * sm_row_per_step(c, r) / f->time_us;
  }
  return bytes / (fg->achieved_tbs * UT_US_PER_S);
}

/* What summary.cast_hints says of a cast before kernel `next` (its matcher cast_next_ID),
 * the first in pack order; NULL: none. */
static const char *cast_hint(const sm_ctx *c, const char *next) {
  for (size_t k = 0; next && k < c->n_cast_hints; k++)
    if (sm_hits(c->cast_hints[k].next, next)) return c->cast_hints[k].text;
  return NULL;
}

/* Review 20 defect 9: a kernel whose fused op list is only a dtype cast (Inductor's
 * triton_poi_fused__to_copy_N: matcher cast_kernel) is a pass over a tensor to change its
 * dtype, which the kernel that reads it (or the one that writes it) could do in its own
 * prologue or epilogue, or which keeping the dtype removes. From summary.cast_min_pct of the
 * step, one item: bound their time alone on the GPU (their whole time goes when the dtype is
 * kept), less their bytes at the next kernel's rate when both are known (what the cast costs
 * folded into it); the neighbours named are the kernels that most often run right after and
 * right before a cast on its stream (an_chain_runs.cast_*), the launches a step set against
 * the model's layers. */
void sm_cast_item(sm_ctx *c) {
  const te_matcher *m = te_rules_matcher(c->rules, "cast_kernel");
  const an_chain_runs *ch = &c->g.st->chain;
  if (!m || !ch->cast_launches || c->g.step_us <= 0) return;
  te_subject *subj = te_subject_create();
  double t = 0, alone = 0;
  size_t n = 0, top = SIZE_MAX;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    const an_kernel_row *r = &c->g.st->kernels[i];
    if (!name_hits(subj, m, r->name) || sm_is_collective(c, r->name)) continue;
    double x = sm_row_per_step(c, r);
    t += x;
    alone += alone_per_step(c, r, x);
    n++;
    if (r->shown && top == SIZE_MAX) top = i; /* rows are time-descending */
  }
  if (!n || top == SIZE_MAX || t / c->g.step_us * 100.0 < c->s->summary_cast_min_pct) {
    te_subject_destroy(subj);
    return;
  }
  const an_kernel_row *next = sm_row_of(c, ch->cast_next);
  double fused = cast_fused_us(c, m, subj, next), whole = alone < t ? alone : t;
  const an_kernel_row *tr = &c->g.st->kernels[top];
  const char *loc = tr->n_shown_sites ? tr->shown_sites[0]->location : NULL;
  an_summary_item *it = sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_FOLD_CAST, top, loc,
                               whole > fused ? whole - fused : 0, AN_BASIS_CAST, t);
  if (it) {
    it->count = n;
    it->detail_us = alone;
    it->cast_per_step = (double)ch->cast_launches * c->g.per;
    it->cast_layers = c->rep->roofline_model.id ? c->rep->roofline_model.check.layers : 0;
    it->cast_next = ch->cast_next;
    it->cast_prev = ch->cast_prev;
    const an_kernel_row *prev = sm_row_of(c, ch->cast_prev);
    it->cast_next_row = next ? (size_t)(next - c->g.st->kernels) + 1 : 0;
    it->cast_prev_row = prev ? (size_t)(prev - c->g.st->kernels) + 1 : 0;
    it->cast_next_pct = (double)ch->cast_next_n / (double)ch->cast_launches * 100.0;
    it->cast_prev_pct = (double)ch->cast_prev_n / (double)ch->cast_launches * 100.0;
    it->cast_fused_us = fused;
    it->lever = role_text(c, "fold_cast");
    it->cast_hint = cast_hint(c, ch->cast_next);
    for (size_t i = 0; i < c->g.st->n_kernels; i++)
      if (name_hits(subj, m, c->g.st->kernels[i].name)) sm_item_kernel(c, c->g.st->kernels[i].name);
    if (next && next->shown) sm_item_more(it, "kernel", c->g.st->id, it->cast_next_row - 1);
  }
  te_subject_destroy(subj);
}

/* ---------------------------------------------------------------- levers, once */

/* Matcher lever_ID + suffix of the packs, or NULL. */
static const te_matcher *lever_matcher(const sm_ctx *c, const char *id, const char *suffix) {
  char name[96];
  snprintf(name, sizeof name, "lever_%s%s", id, suffix);
  return te_rules_matcher(c->rules, name);
}

/* The text for this run (lever_text) of the first summary.levers entry id that lists one,
 * or NULL. */
static const char *role_text(const sm_ctx *c, const char *id) {
  for (size_t k = 0; k < c->n_levers; k++)
    if (c->levers[k].text && !strcmp(c->levers[k].id, id)) return c->levers[k].run_text;
  return NULL;
}

/* summary.cast_hints' matchers cast_next_ID and texts, once per summary (an entry with no
 * text or no matcher names nothing); false when out of memory. */
static bool cast_hints_resolve(sm_ctx *c) {
  const te_list_map *h = &c->s->summary_cast_hints;
  c->cast_hints = calloc(h->n ? h->n : 1, sizeof *c->cast_hints);
  if (!c->cast_hints) return false;
  for (size_t k = 0; k < h->n; k++) {
    char name[96];
    snprintf(name, sizeof name, "cast_next_%s", h->keys[k]);
    const te_matcher *m = te_rules_matcher(c->rules, name);
    if (m && h->values[k].n)
      c->cast_hints[c->n_cast_hints++] = (sm_cast_hint){m, h->values[k].items[0]};
  }
  return true;
}

bool sm_levers_resolve(sm_ctx *c) {
  const te_list_map *l = &c->s->summary_levers;
  const te_string_list *kl = &c->s->summary_kernel_levers;
  c->levers = calloc(l->n ? l->n : 1, sizeof *c->levers);
  c->kernel_levers = calloc(kl->n ? kl->n : 1, sizeof *c->kernel_levers);
  if (!c->levers || !c->kernel_levers) return false;
  for (size_t k = 0; k < l->n; k++) {
    const char *id = l->keys[k];
    const char *text = l->values[k].n ? l->values[k].items[0] : NULL;
    c->levers[c->n_levers++] = (sm_lever){
        .id = id,
        .text = text,
        .run_text = text ? lever_text(c, id, text) : NULL,
        .name = lever_matcher(c, id, ""),
        .within = lever_matcher(c, id, "_within"),
        .op = lever_matcher(c, id, "_op"),
        .with = lever_matcher(c, id, "_with"),
        .with_kernel = lever_matcher(c, id, "_with_kernel"),
        .fused = lever_matcher(c, id, "_fused"),
        .sync = te_string_list_has(&c->s->summary_sync_levers, id),
        .no_sync = te_string_list_has(&c->s->summary_no_sync_levers, id),
        .bytes_kept = te_number_map_get(&c->s->summary_lever_bytes_kept, id),
    };
    const te_string_list *title = te_list_map_get(&c->s->summary_lever_titles, id);
    c->levers[c->n_levers - 1].title = title && title->n ? title->items[0] : NULL;
  }
  /* a kernel lever takes the first entry of its id (te_list_map_get), when it has a text */
  for (size_t i = 0; i < kl->n; i++)
    for (size_t k = 0; k < c->n_levers; k++) {
      if (strcmp(c->levers[k].id, kl->items[i]) != 0) continue;
      if (c->levers[k].text) c->kernel_levers[c->n_kernel_levers++] = &c->levers[k];
      break;
    }
  c->eager_dispatch = role_text(c, "eager_dispatch");
  c->eager_dispatch_compiled = role_text(c, "eager_dispatch_compiled");
  c->queued_outside = role_text(c, "queued_outside");
  c->designed_sync = role_text(c, "designed_sync");
  c->peer_stage = te_rules_matcher(c->rules, "queued_peer_stage");
  c->dequant_kernel = te_rules_matcher(c->rules, "precision_dequant_kernel");
  c->queued_peers = role_text(c, "queued_peers");
  c->queued_graph = role_text(c, "queued_graph");
  c->graph_launch = lever_matcher(c, "graph_launch", "");
  c->fp32_simt = te_rules_matcher(c->rules, "fp32_simt_matmul");
  c->tf32_matmul = te_rules_matcher(c->rules, "tf32_matmul");
  c->tf32_gemm = te_rules_matcher(c->rules, "tf32_gemm");
  return cast_hints_resolve(c);
}

void sm_levers_free(sm_ctx *c) {
  free(c->levers);
  free(c->kernel_levers);
  free(c->cast_hints);
  c->levers = NULL;
  c->kernel_levers = NULL;
  c->cast_hints = NULL;
  c->n_levers = c->n_kernel_levers = c->n_cast_hints = 0;
}

/* ---------------------------------------------------------------- fusion */

bool sm_fusion_acts(const sm_ctx *c, const an_fuse_row *r) {
  /* issue 31: a fused kernel that runs (here or in another stage) or a stage over the
   * fused path's size cap is information, never an action */
  return c->workload != AN_WORKLOAD_TRAINING && c->workload != AN_WORKLOAD_MICROBENCHMARK &&
         r->shown && r->match == AN_FUSION_SPLIT && r->saving_us > 0 && !r->fused_in_use &&
         r->state != AN_FUSE_OVER_CAP;
}

void sm_fusion_items(sm_ctx *c) {
  double scale = c->g.in_step * c->g.per; /* the stage's totals to one step */
  for (size_t i = 0; i < c->g.st->n_fuse; i++) {
    const an_fuse_row *r = &c->g.st->fuse[i];
    if (!sm_fusion_acts(c, r)) continue;
    /* a mainline path that does not serve the run's platform (origin port) is a port too */
    an_action a = r->merge                          ? AN_ACTION_MERGE_GEMMS
                  : r->origin == AN_FUSION_MAINLINE ? AN_ACTION_ENABLE_FUSION
                                                    : AN_ACTION_PORT_FUSION;
    an_summary_item *it =
        sm_add(c, AN_SUMMARY_FUSION, a, i, r->n_locations ? r->locations[0] : NULL,
               r->saving_us * scale, AN_BASIS_SAVING, r->related_us * scale);
    if (!it) continue;
    it->what = r->pattern_name;
    it->since_framework = r->since_framework;
    it->since_version = r->since_version;
    it->since_change = r->since_change;
    it->since_switch = r->since_switch;
    if (r->since_version) it->since_cap_tokens = r->cap_tokens;
    if (r->origin == AN_FUSION_PORT) it->port_platform = r->port_platform;
    it->n_roles = r->n_roles;
    it->roles = r->roles;
    /* a merge's siblings sit in the functions that own them (its runs' locations, the
     * largest saving first): the basis names them all, the item the first */
    for (size_t k = 0; r->merge && k < r->n_locations && it->n_frames < AN_ITEM_FRAMES; k++)
      if (an_location_resolved(r->locations[k])) it->frames[it->n_frames++] = r->locations[k];
    for (size_t k = 0; k < r->n_related; k++) sm_item_kernel(c, r->related[k]);
  }
}

/* ---------------------------------------------------------------- overlap */

static bool overlap_action(an_recommendation rec, an_action *a) {
  switch (rec) {
    case AN_RECOMMEND_TRY_OVERLAP:
      *a = AN_ACTION_TRY_OVERLAP;
      return true;
    case AN_RECOMMEND_TRY_FUSION:
      *a = AN_ACTION_TRY_FUSION;
      return true;
    case AN_RECOMMEND_CHECK_DEPS:
      *a = AN_ACTION_CHECK_DEPS;
      return true;
    case AN_RECOMMEND_ELIMINATE:
      *a = AN_ACTION_ELIMINATE;
      return true;
    default:
      return false;
  }
}

/* Whether time-account row x is one overlap row r stands for: the same collective and, for
 * a row split by launch context, the same context (one unsplit row stands for them all). */
static bool same_collective(const an_collective_time *x, const an_overlap_row *r) {
  if (strcmp(x->kernel, r->kernel) != 0) return false;
  if (r->context_rest) return x->context_rest;
  if (!r->launch_context) return true;
  return x->launch_context && !strcmp(x->launch_context, r->launch_context);
}

/* The overlap table's wait rows of time-account row coll are the wait item's evidence (brief
 * 11 defect 3: a row that recovers 0 and restates the item is not put forward; it reads
 * "(item N)"). */
static void link_wait_rows(const sm_ctx *c, an_summary_item *it, size_t coll) {
  const an_overlap_stage *o = c->g.st->overlap;
  const an_collective_time *x = &c->g.st->timeline->collectives[coll];
  for (size_t i = 0; o && i < o->n_rows; i++)
    if (o->rows[i].verdict == AN_OVERLAP_WAIT && same_collective(x, &o->rows[i]))
      sm_item_more(it, "overlap", c->g.st->id, i);
}

/* The time and the transfer time (its time less its wait and its unknown part) per step of the
 * collective rows overlap row r stands for: its own time in the step, and what overlapping it can
 * hide at most. False when r's kernel is no collective of the stage. Of a collective split by
 * launch context, the row's context only (review 7: a gradient reduce's item quoted the time of
 * every SendRecv). */
static bool collective_per_step(const sm_ctx *c, const an_overlap_row *r, double *total,
                                double *transfer) {
  const an_stage_timeline *tl = c->g.st->timeline;
  int64_t ns = 0, not_transfer = 0;
  bool found = false;
  for (size_t i = 0; tl && i < tl->n_collectives; i++)
    if (same_collective(&tl->collectives[i], r)) {
      ns += tl->collectives[i].total_ns;
      /* instances with no like one are neither transfer nor wait: their time may be a
       * wait, so it hides nothing the row can promise (the time account's Transfer) */
      not_transfer += tl->collectives[i].wait_ns + tl->collectives[i].unknown_ns;
      found = true;
    }
  if (!found) return false;
  *total = per_step_us(c, ns);
  *transfer = per_step_us(c, ns - not_transfer);
  return true;
}

/* Links the time-account rows whose time an overlap item on a collective quotes as its own
 * (collective_per_step): every figure of a basis is in a row it links (review 9). */
static void link_collective_rows(const sm_ctx *c, an_summary_item *it, const an_overlap_row *r) {
  const an_stage_timeline *tl = c->g.st->timeline;
  for (size_t i = 0; tl && i < tl->n_collectives; i++)
    if (same_collective(&tl->collectives[i], r)) sm_item_more(it, "wait", c->g.st->id, i);
}

void sm_overlap_items(sm_ctx *c) {
  const an_overlap_stage *o = c->g.st->overlap;
  for (size_t i = 0; o && i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    an_action a;
    if (r->verdict != AN_OVERLAP_HEADROOM || r->below_floor ||
        !overlap_action(r->recommendation, &a))
      continue;
    bool overlap = a == AN_ACTION_TRY_OVERLAP || a == AN_ACTION_CHECK_DEPS;
    if (overlap && !te_string_list_has(&c->s->overlap_dependency_independent_classes, r->dep_class))
      continue; /* no dataflow evidence that anything can run beside it */
    double basis = r->recoverable_ms * 1000.0;
    const an_kernel_row *kr = sm_row_of(c, r->kernel);
    double own = kr ? sm_row_per_step(c, kr) : INFINITY, transfer = INFINITY;
    collective_per_step(c, r, &own, &transfer);
    if (own < basis) basis = own;
    double bound = basis < transfer ? basis : transfer;
    /* a slow host copy already on a stream of its own: raising its rate to the copy-rate
     * bar wins at most its time less that time at the bar */
    bool rate = a == AN_ACTION_TRY_OVERLAP && r->own_stream && r->copy_slow && isfinite(own);
    double target = r->copy_slow_fraction * r->host_link_gbs;
    double gbs = rate ? an_overlap_copy_gbs(r) : 0;
    if (rate && own * (1.0 - gbs / target) < bound) bound = own * (1.0 - gbs / target);
    /* a fusion names its partner and removes the piece's round trip (overlap_partner.c) */
    bool trip = a == AN_ACTION_TRY_FUSION && r->fusion_partner != AN_PARTNER_NONE;
    if (trip && kr) basis = sm_row_per_step(c, kr);
    an_summary_item *it = sm_add(c, AN_SUMMARY_OVERLAP, a, i, r->scope, bound,
                                 trip ? AN_BASIS_ROUND_TRIP : AN_BASIS_EXPOSED, basis);
    if (!it) continue;
    /* the row's own time in the step, which the recoverable part is of (review 6) */
    if (!trip && isfinite(own)) it->detail_us = own;
    /* a staging copy under a named buffer op: the packs' lever for it (DDP bucket views) */
    if (a == AN_ACTION_ELIMINATE && (it->lever = r->staging_lever)) it->lever_op = r->staging_op;
    /* a collective already on its own stream: what puts compute beside it (brief 10
     * defect 2), not a stream to move to */
    if (a == AN_ACTION_TRY_OVERLAP && r->own_stream && r->n_own_stream_levers && !rate)
      it->lever = r->own_stream_levers[0];
    if (rate) {
      it->copy_gbs = gbs;
      it->copy_target_gbs = target;
      it->copy_at_bar_us = own * gbs / target;
      it->copy_pageable = r->copy_pageable;
    }
    if (trip) it->what = r->fusion_pattern;
    if (trip) it->partner = r->fusion_partner;
    /* one of a collective's rows split by launch context: the item says which */
    if (!trip && r->launch_context) it->what = r->launch_context;
    it->context_rest = !trip && r->context_rest;
    if (!trip && isfinite(own)) link_collective_rows(c, it, r);
    sm_item_kernel(c, r->kernel);
  }
}

/* Review 22 defect 9: a wait row whose steady exposed part is transfer the time account
 * measured (deviation O30: hta_async's pooled embedding exchange, 4.29 ms/step exposed with
 * no compute beside it) recovers 0 in the table, its wait being the wait item's; the
 * transfer is no wait, and what its row's action (transfer_lever: pipeline the exchange
 * with another batch's dense work) hides of it is an item of its own, bound by the lesser
 * of it and the compute beside it the rows above left (an_overlap_row.transfer_bound_ms).
 * Only where the lever is the mechanism its dependency rule names (transfer_by_rule): the
 * stage's generic restructure options (two-batch overlap of a TP all-reduce) stay a line
 * under the table. */
void sm_transfer_items(sm_ctx *c) {
  const an_overlap_stage *o = c->g.st->overlap;
  /* where the GPU waits for the host or queued work, hiding the transfer under other GPU
   * work wins nothing (the overlap model then zeroes the bound: an_overlap_bottleneck) */
  for (size_t i = 0; o && !c->g.bottleneck && i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (r->verdict != AN_OVERLAP_WAIT || !r->transfer_by_rule || !an_overlap_transfer_shown(o, r))
      continue;
    double own = INFINITY, transfer = INFINITY;
    if (!collective_per_step(c, r, &own, &transfer)) continue;
    an_summary_item *it = sm_add(c, AN_SUMMARY_OVERLAP, AN_ACTION_TRY_OVERLAP, i, r->scope,
                                 r->transfer_bound_ms * 1000.0, AN_BASIS_EXPOSED, transfer);
    if (!it) continue;
    it->detail_us = own;
    it->transfer_compute_us = r->transfer_compute_ms * 1000.0;
    it->lever = r->transfer_lever;
    it->what = r->launch_context;
    it->context_rest = r->context_rest;
    link_collective_rows(c, it, r);
    sm_item_kernel(c, r->kernel);
  }
}

/* ---------------------------------------------------------------- investigate */

/* Whether an item of the current stage already names kernel row r. */
static bool named(const sm_ctx *c, const an_kernel_row *r) {
  for (size_t i = 0; i < c->n; i++) {
    const an_summary_item *it = &c->v[i];
    if (strcmp(it->stage_id, c->g.st->id) != 0) continue;
    for (size_t k = 0; k < it->n_kernels; k++)
      if (!strcmp(c->kpool[c->koff[i] + k], r->name)) return true;
  }
  return false;
}

/* Whether kernel row r is a collective the time account floors (some instance has like ones:
 * its time splits into transfer and wait): the wait item models it, and a wait it bounds
 * under the bar is no unmodelled cost (review 18 defect 6: the diff pair's test.json waits
 * 0.98 ms/step with the GPU idle, its collectives' transfer at their floors). */
static bool floored_collective(const sm_ctx *c, const an_kernel_row *r) {
  const an_stage_timeline *tl = c->g.st->timeline;
  for (size_t i = 0; tl && i < tl->n_collectives; i++)
    if (!strcmp(tl->collectives[i].kernel, r->name) &&
        tl->collectives[i].alone < tl->collectives[i].instances)
      return true;
  return false;
}

/* What keeps the stage's kernels without a roofline, the largest cause of its counts. */
static an_unknown unknown_of(const an_roofline_counts *n) {
  size_t other = n->no_op - n->no_op_graph - n->no_launch;
  const size_t v[] = {n->no_op_graph, n->no_launch, other, n->no_model + n->no_shapes};
  size_t best = 0;
  for (size_t i = 1; i < sizeof v / sizeof *v; i++)
    if (v[i] > v[best]) best = i;
  if (!v[best]) return AN_UNKNOWN_DEVICE; /* launches counted, no cause: no device entry */
  return (an_unknown)best;
}

/* A category of the stage with summary.investigate_min_pct of the step (and
 * summary.investigate_min_us) whose kernels have no roofline, are no collectives the time
 * account floors, and that no item names a kernel of (no fusion, overlap or wait bounds
 * it): one unbounded item whose figure is the
 * category's whole time per step, so the dominant cost is never silent. */
static void investigate(sm_ctx *c, const char *category) {
  const an_stage_report *st = c->g.st;
  double t = 0;
  size_t n = 0, first = SIZE_MAX;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    if (strcmp(r->category, category) != 0) continue;
    /* bounded: an item, its roofline, or the wait model */
    if (named(c, r) || an_row_roofline(st, r) || floored_collective(c, r)) return;
    t += sm_row_per_step(c, r);
    n++;
    if (first == SIZE_MAX) first = i;
  }
  if (!n || c->g.step_us <= 0 || t < c->s->summary_investigate_min_us ||
      t / c->g.step_us * 100.0 < c->s->summary_investigate_min_pct)
    return;
  const an_kernel_row *top = &st->kernels[first];
  const char *loc = top->n_shown_sites ? top->shown_sites[0]->location : NULL;
  an_summary_item *it =
      sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_INVESTIGATE, first, loc, 0, AN_BASIS_UNBOUNDED, t);
  if (!it) return;
  it->what = category;
  it->count = n;
  it->unknown = unknown_of(&st->roofline_counts);
  for (size_t i = 0; i < st->n_kernels; i++)
    if (!strcmp(st->kernels[i].category, category) && st->kernels[i].shown)
      sm_item_kernel(c, st->kernels[i].name);
}

void sm_investigate_items(sm_ctx *c) {
  const an_stage_report *st = c->g.st;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const char *cat = st->kernels[i].category;
    size_t j = 0;
    while (j < i && strcmp(st->kernels[j].category, cat) != 0) j++;
    if (j == i) investigate(c, cat); /* each category once, at its first row */
  }
}
