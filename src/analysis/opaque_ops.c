/*
 * analysis/opaque_ops.c - the kernels launched under an op a compiler cannot fuse through
 * (opaque_ops.h).
 *
 * Per view: the counted launches of the chain-category rows, each with its launch call;
 * then each call's enclosing ops, innermost first, by the view's op nest (op_nest.h,
 * an_trace_view_ops), asked of the matcher once per name; each kernel's answer is kept for
 * the chain runs, which ask many of the same kernels.
 */
#include "analysis/opaque_ops.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/id_index.h"
#include "analysis/kmap_internal.h"
#include "analysis/op_nest.h"
#include "util/map.h"
#include "util/sort.h"
#include "util/vec.h"

/* A counted launch of a chain-category row: its launch call, time and row. */
typedef struct cand {
  const tr_event *kernel, *call;
  double dur;
  an_kernel_row *row;
} cand;

typedef struct view_work {
  const an_trace_view *v;
  const an_kernel_map *kmap;
  size_t vi;
  const te_matcher *opaque;
  cand *c;
  size_t n, cap;
} view_work;

/* The ops around a view's launch calls, asked of the matcher once per op name. */
struct an_opaque_probe {
  const an_trace_view *v;
  const te_matcher *opaque;
  const an_op_nest *nest;
  uint8_t *memo; /* by string id: 0 unasked, 1 no, 2 yes */
  size_t n_str;
  const tr_event *kernels; /* the trace's kernel events, which `answer` is parallel to */
  uint8_t *answer;         /* by kernel: 0 unasked, 1 not opaque, 2 opaque */
  size_t n_kernels;
  size_t hint;        /* where the nest's last search ended: launches come in about time order */
  size_t launch_hint; /* the same, of the launches by correlation */
};

/* Row of canonical name (by pointer: the rows hold the map's copies) -> index + 1, for
 * the stage's rows of a chain category only. */
static bool chain_rows(const an_stage_tables *st, const te_rules *rules, ut_u64map *rows) {
  const te_string_list *cats = &te_rules_settings(rules)->summary_chain_categories;
  for (size_t i = 0; i < st->n_rows; i++)
    if (te_string_list_has(cats, st->rows[i].category) &&
        !ut_u64map_put(rows, (uint64_t)(uintptr_t)st->rows[i].name, i + 1))
      return false;
  return true;
}

/* The counted launches of one stage block of the view whose rows are in `rows`. */
static bool collect_block(view_work *w, const an_steps *steps, const an_stage_kernels *sk,
                          an_stage_tables *st, const ut_u64map *rows) {
  size_t n_all = 0, hint = 0; /* the block's kernels in time order */
  const tr_event *all = tr_trace_events(w->v->trace, TR_KIND_KERNEL, &n_all);
  for (size_t i = 0; i < sk->n; i++) {
    const tr_event *k = sk->kernels[i];
    if (steps && !an_steps_kernel_counted(steps, (size_t)(k - all))) continue;
    const char *name = an_kernel_map_canonical(w->kmap, w->vi, w->v->trace, k->name);
    uint64_t row;
    if (!name || !ut_u64map_get(rows, (uint64_t)(uintptr_t)name, &row)) continue;
    const tr_event *call = an_trace_ids_launch_of_near(w->v->ids, w->v->trace, k, &hint);
    if (!call) continue;
    cand *c = ut_grow(w->c, &w->cap, w->n + 1, sizeof *c);
    if (!c) return false;
    w->c = c;
    w->c[w->n++] = (cand){k, call, tr_event_dur(w->v->trace, k), &st->rows[row - 1]};
  }
  return true;
}

/* Whether op (a CPU op of the view's trace) is one the matcher names, asked once per name. */
static bool opaque_op(an_opaque_probe *p, const tr_event *op) {
  tr_str s = op->name;
  if (s < p->n_str && p->memo[s]) return p->memo[s] == 2;
  const char *name = tr_str_get(p->v->trace, s);
  bool hit = te_matcher_match(p->opaque, name, strlen(name));
  if (s < p->n_str) p->memo[s] = hit ? 2 : 1;
  return hit;
}

static void probe_destroy(an_opaque_probe *p);

static an_status probe_create(const an_trace_view *v, const te_rules *rules,
                              an_opaque_probe **out) {
  *out = NULL;
  const te_matcher *opaque = te_rules_matcher(rules, "chain_exclude_op");
  if (!opaque || !v->trace || !v->ids) return AN_OK; /* no launch calls to follow */
  an_opaque_probe *p = calloc(1, sizeof *p);
  if (p) {
    *p = (an_opaque_probe){.v = v,
                           .opaque = opaque,
                           .nest = an_trace_view_ops(v),
                           .n_str = tr_trace_string_count(v->trace)};
    p->memo = calloc(p->n_str ? p->n_str : 1, 1);
    p->kernels = tr_trace_events(v->trace, TR_KIND_KERNEL, &p->n_kernels);
    p->answer = calloc(p->n_kernels ? p->n_kernels : 1, 1);
  }
  if (!p || !p->memo || !p->answer || !p->nest) {
    probe_destroy(p);
    return AN_ERR_NOMEM;
  }
  *out = p;
  return AN_OK;
}

static void probe_destroy(an_opaque_probe *p) {
  if (!p) return;
  free(p->memo);
  free(p->answer);
  free(p);
}

/* Whether launch call `call` ran under an op the matcher names (its enclosing ops,
 * innermost first). */
static bool call_opaque(an_opaque_probe *p, const tr_event *call) {
  long e = an_op_nest_around_entry_near(p->nest, call, &p->hint);
  for (; e >= 0 && !opaque_op(p, an_op_nest_op(p->nest, e));) e = an_op_nest_parent(p->nest, e);
  return e >= 0;
}

/* The answer for `kernel`, whose launch call is `call` (NULL: not looked up yet). */
static bool kernel_opaque(an_opaque_probe *p, const tr_event *kernel, const tr_event *call) {
  size_t k = (size_t)(kernel - p->kernels);
  if (k < p->n_kernels && p->answer[k]) return p->answer[k] == 2;
  if (!call) call = an_trace_ids_launch_of_near(p->v->ids, p->v->trace, kernel, &p->launch_hint);
  bool opaque = call && call_opaque(p, call);
  if (k < p->n_kernels) p->answer[k] = opaque ? 2 : 1;
  return opaque;
}

bool an_opaque_probe_launch(an_opaque_probe *p, const tr_event *kernel) {
  return p && kernel_opaque(p, kernel, NULL);
}

struct an_opaque_probes {
  an_opaque_probe **view;
  size_t n;
};

an_status an_opaque_probes_create(const an_trace_view *views, size_t n_views, const te_rules *rules,
                                  an_opaque_probes **out) {
  an_opaque_probes *ps = calloc(1, sizeof *ps);
  *out = NULL;
  if (!ps || !(ps->view = calloc(n_views ? n_views : 1, sizeof *ps->view))) {
    free(ps);
    return AN_ERR_NOMEM;
  }
  ps->n = n_views;
  for (size_t vi = 0; vi < n_views; vi++) {
    if (views[vi].trace && probe_create(&views[vi], rules, &ps->view[vi]) != AN_OK) {
      an_opaque_probes_destroy(ps);
      return AN_ERR_NOMEM;
    }
  }
  *out = ps;
  return AN_OK;
}

an_opaque_probe *an_opaque_probes_view(an_opaque_probes *ps, size_t vi) {
  return ps && vi < ps->n ? ps->view[vi] : NULL;
}

void an_opaque_probes_destroy(an_opaque_probes *ps) {
  if (!ps) return;
  for (size_t vi = 0; vi < ps->n; vi++) probe_destroy(ps->view[vi]);
  free(ps->view);
  free(ps);
}

/* Adds each candidate launched under an opaque op to its row's opaque_steps_us. */
static void split_launches(view_work *w, an_opaque_probe *p) {
  for (size_t i = 0; p && i < w->n; i++)
    if (kernel_opaque(p, w->c[i].kernel, w->c[i].call)) w->c[i].row->opaque_steps_us += w->c[i].dur;
}

static bool split_view(view_work *w, const an_steps *steps, const te_rules *rules,
                       an_opaque_probe *probe, an_tables *tables) {
  bool ok = true;
  for (size_t b = 0; ok && b < w->v->n_stages; b++) {
    an_stage_tables *st = an_tables_stage(tables, w->v->stages[b].stage->id);
    ut_u64map rows = {0};
    ok = !st ||
         (chain_rows(st, rules, &rows) && collect_block(w, steps, &w->v->stages[b], st, &rows));
    ut_u64map_free(&rows);
  }
  if (ok) split_launches(w, probe);
  return ok;
}

an_status an_opaque_steps(const an_trace_view *views, size_t n_views, const an_steps *steps,
                          const an_kernel_map *kmap, const te_rules *rules,
                          an_opaque_probes *probes, an_tables *tables) {
  const te_matcher *opaque = te_rules_matcher(rules, "chain_exclude_op");
  bool ok = true;
  for (size_t vi = 0; ok && opaque && vi < n_views; vi++) {
    if (!views[vi].trace || !views[vi].ids) continue; /* no launch calls to follow */
    view_work w = {.v = &views[vi], .kmap = kmap, .vi = vi, .opaque = opaque};
    ok =
        split_view(&w, steps ? &steps[vi] : NULL, rules, an_opaque_probes_view(probes, vi), tables);
    free(w.c);
  }
  return ok ? AN_OK : AN_ERR_NOMEM;
}
