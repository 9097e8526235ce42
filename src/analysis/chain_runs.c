/*
 * analysis/chain_runs.c - the eager chains as runs of launches (chain_runs.h).
 *
 * Per view and stage block: its kernels in start order, each on its stream's lane; a lane
 * holds its open run (launches, time, longest launch) and closes it at a kernel that is no
 * link, or at the block's end. The same walk notes the kernels right before and after each
 * cast launch on its stream (an_chain_runs.cast_*): the neighbour that could absorb it.
 */
#include "analysis/chain_runs.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/kmap_internal.h"
#include "analysis/opaque_ops.h"
#include "analysis/summary.h"
#include "util/map.h"
#include "util/vec.h"

/* The open run of one stream, and its last counted kernel (for the casts' neighbours). */
typedef struct lane {
  size_t n;
  double sum, max;
  int32_t step;     /* the step its launches belong to: the next step's forward is another run */
  const char *last; /* canonical name of its last kernel inside the counted steps; NULL: none */
  bool after_cast;  /* that kernel is a cast */
} lane;

/* A stage's cast launches and, by canonical name, how often each kernel ran right after one
 * and right before one on its stream. */
typedef struct cast_tally {
  size_t launches;
  ut_u64map next, prev;
} cast_tally;

typedef struct block_work {
  const an_trace_view *v;
  size_t vi;
  const an_kernel_map *kmap;
  const an_steps *steps;
  an_opaque_probe *opaque; /* NULL: no launch is under an opaque op */
  const ut_u64map *links;  /* canonical name (pointer) -> 1: a chain link of the stage */
  const ut_u64map *casts;  /* canonical name (pointer) -> 1: a cast kernel of the stage */
  cast_tally *tally;
  ut_u64map lanes; /* stream -> index + 1 into lane */
  lane *lane;
  size_t n_lanes, cap;
  an_chain_runs *out;
} block_work;

static void close_run(an_chain_runs *out, lane *l) {
  if (l->n >= 2) { /* one link alone folds into nothing */
    out->runs++;
    out->launches += l->n;
    out->time_us += l->sum;
    out->largest_us += l->max;
  }
  l->n = 0;
  l->sum = l->max = 0;
}

/* The lane of stream s, opened on first use; NULL when out of memory. */
static lane *lane_of(block_work *w, uint64_t s) {
  uint64_t i = 0;
  if (ut_u64map_get(&w->lanes, s, &i)) return &w->lane[i - 1];
  lane *v = ut_grow(w->lane, &w->cap, w->n_lanes + 1, sizeof *v);
  if (!v) return NULL;
  w->lane = v;
  w->lane[w->n_lanes] = (lane){0};
  if (!ut_u64map_put(&w->lanes, s, ++w->n_lanes)) return NULL;
  return &w->lane[w->n_lanes - 1];
}

static bool tally(ut_u64map *m, const char *name) {
  uint64_t n = 0;
  ut_u64map_get(m, (uint64_t)(uintptr_t)name, &n);
  return ut_u64map_put(m, (uint64_t)(uintptr_t)name, n + 1);
}

/* Notes kernel `name` of lane l for the casts' neighbours (inside the counted steps only): the
 * kernel after a cast on its stream, the one before a cast. */
static bool cast_step(block_work *w, lane *l, const char *name, bool counted) {
  uint64_t hit = 0;
  bool cast = counted && name && ut_u64map_get(w->casts, (uint64_t)(uintptr_t)name, &hit);
  bool ok = !(l->after_cast && counted && name) || tally(&w->tally->next, name);
  if (cast) {
    w->tally->launches++;
    ok = ok && (!l->last || tally(&w->tally->prev, l->last));
  }
  l->after_cast = cast;
  l->last = counted ? name : NULL;
  return ok;
}

static bool walk_block(block_work *w, const an_stage_kernels *sk) {
  size_t n_all = 0;
  const tr_event *all = tr_trace_events(w->v->trace, TR_KIND_KERNEL, &n_all);
  for (size_t i = 0; i < sk->n; i++) {
    const tr_event *k = sk->kernels[i];
    lane *l = lane_of(w, tr_event_stream(w->v->trace, k));
    if (!l) return false;
    const char *name = an_kernel_map_canonical(w->kmap, w->vi, w->v->trace, k->name);
    uint64_t hit = 0;
    size_t idx = (size_t)(k - all);
    bool counted = !w->steps || an_steps_kernel_counted(w->steps, idx);
    if (!cast_step(w, l, name, counted)) return false;
    /* a launch under an op a compiler cannot fuse through is no link (opaque_ops.h) */
    if (!counted || !name || !ut_u64map_get(w->links, (uint64_t)(uintptr_t)name, &hit) ||
        an_opaque_probe_launch(w->opaque, k)) {
      close_run(w->out, l);
      continue;
    }
    int32_t step = w->steps && w->steps->kernel_step && idx < w->steps->n_kernel_events
                       ? w->steps->kernel_step[idx]
                       : -1;
    if (l->n && l->step != step) close_run(w->out, l);
    l->step = step;
    double dur = tr_event_dur(w->v->trace, k);
    l->n++;
    l->sum += dur;
    if (dur > l->max) l->max = dur;
  }
  for (size_t i = 0; i < w->n_lanes; i++) close_run(w->out, &w->lane[i]);
  return true;
}

/* The stage's chain links and its cast kernels (matcher cast_kernel) by canonical name (the
 * rows hold the map's copies). A row is asked once a block, so the cast matcher is asked
 * through a subject, which remembers no answer: te_matcher_match's cache would keep every
 * distinct kernel name until the run ends (262,145 names: +8.2 MB of heap at the peak,
 * docs/performance.md, issue 32 session 20). */
static bool links_of(const an_stage_tables *st, const te_rules *rules, te_subject *subj,
                     ut_u64map *links, ut_u64map *casts) {
  const te_matcher *cast = te_rules_matcher(rules, "cast_kernel");
  for (size_t i = 0; i < st->n_rows; i++) {
    uint64_t key = (uint64_t)(uintptr_t)st->rows[i].name;
    if (an_summary_chain_link(rules, &st->rows[i]) && !ut_u64map_put(links, key, 1)) return false;
    if (!cast) continue;
    te_subject_set(subj, st->rows[i].name, strlen(st->rows[i].name));
    if (te_matcher_match_subject(cast, subj) && !ut_u64map_put(casts, key, 1)) return false;
  }
  return true;
}

/* The name m counts most often (on a tie the name first in byte order: the map's slots
 * follow the names' addresses, which move between runs, and the report must not), NULL when
 * empty; *n its count. */
static const char *most_common(const ut_u64map *m, size_t *n) {
  const char *best = NULL;
  uint64_t most = 0;
  for (size_t i = 0; i < m->cap; i++) {
    const ut_u64map_slot *e = &m->slots[i];
    const char *name = (const char *)(uintptr_t)e->key;
    if (!e->key || e->val < most || (e->val == most && best && strcmp(name, best) > 0)) continue;
    most = e->val;
    best = name;
  }
  *n = (size_t)most;
  return best;
}

static void cast_finish(an_chain_runs *out, cast_tally *t) {
  out->cast_launches = t->launches;
  out->cast_next = most_common(&t->next, &out->cast_next_n);
  out->cast_prev = most_common(&t->prev, &out->cast_prev_n);
  ut_u64map_free(&t->next);
  ut_u64map_free(&t->prev);
}

an_status an_chain_runs_build(const an_trace_view *views, size_t n_views, const an_steps *steps,
                              const an_kernel_map *kmap, const te_rules *rules,
                              an_opaque_probes *probes, an_tables *tables) {
  cast_tally *tallies = calloc(tables->n_stages ? tables->n_stages : 1, sizeof *tallies);
  te_subject *subj = te_subject_create();
  bool ok = tallies && subj;
  for (size_t s = 0; s < tables->n_stages; s++) tables->stages[s].chain = (an_chain_runs){0};
  for (size_t vi = 0; ok && vi < n_views; vi++) {
    const an_trace_view *v = &views[vi];
    an_opaque_probe *opaque = an_opaque_probes_view(probes, vi);
    for (size_t b = 0; ok && v->trace && b < v->n_stages; b++) {
      an_stage_tables *st = an_tables_stage(tables, v->stages[b].stage->id);
      if (!st) continue;
      ut_u64map links = {0}, casts = {0};
      block_work w = {.v = v,
                      .vi = vi,
                      .kmap = kmap,
                      .steps = steps ? &steps[vi] : NULL,
                      .opaque = opaque,
                      .links = &links,
                      .casts = &casts,
                      .tally = &tallies[st - tables->stages],
                      .out = &st->chain};
      ok = links_of(st, rules, subj, &links, &casts) && walk_block(&w, &v->stages[b]);
      ut_u64map_free(&w.lanes);
      free(w.lane);
      ut_u64map_free(&links);
      ut_u64map_free(&casts);
    }
  }
  for (size_t s = 0; tallies && s < tables->n_stages; s++)
    cast_finish(&tables->stages[s].chain, &tallies[s]);
  free(tallies);
  te_subject_destroy(subj);
  return ok ? AN_OK : AN_ERR_NOMEM;
}
