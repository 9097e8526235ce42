/*
 * analysis/op_nest.c - the innermost CPU op around an event of its thread (op_nest.h).
 */
#include "analysis/op_nest.h"
#include "util/search.h"

#include <stdlib.h>

#include "util/sort.h"

static int cmp_op(const void *a, const void *b, void *ctx) {
  const an_op_nest *x = ctx;
  const tr_event *p = &x->ops[*(const uint32_t *)a], *q = &x->ops[*(const uint32_t *)b];
  tr_str pp = tr_event_pid(x->t, p), pq = tr_event_pid(x->t, q);
  tr_str tp = tr_event_tid(x->t, p), tq = tr_event_tid(x->t, q);
  if (pp != pq) return pp < pq ? -1 : 1;
  if (tp != tq) return tp < tq ? -1 : 1;
  if (p->ts != q->ts) return p->ts < q->ts ? -1 : 1;
  double ep = p->ts + tr_event_dur(x->t, p), eq = q->ts + tr_event_dur(x->t, q);
  if (ep != eq) return ep > eq ? -1 : 1; /* the enclosing op first at equal starts */
  return p->index < q->index ? -1 : p->index > q->index;
}

static bool same_thread(const an_op_nest *x, const tr_event *a, const tr_event *b) {
  return tr_event_pid(x->t, a) == tr_event_pid(x->t, b) &&
         tr_event_tid(x->t, a) == tr_event_tid(x->t, b);
}

static double end_of(const an_op_nest *x, const tr_event *e) {
  return e->ts + tr_event_dur(x->t, e);
}

/* Parent links in one pass: the chain of open ops of the current thread, walked from the
 * previous op up to the first that still spans the next op's start. */
static void link_parents(an_op_nest *x) {
  for (size_t i = 0; i < x->n; i++) {
    const tr_event *op = &x->ops[x->pos[i]];
    int32_t p = i ? (int32_t)(i - 1) : -1;
    while (p >= 0 && (!same_thread(x, &x->ops[x->pos[p]], op) ||
                      end_of(x, &x->ops[x->pos[p]]) < end_of(x, op)))
      p = same_thread(x, &x->ops[x->pos[p]], op) ? x->parent[p] : -1;
    x->parent[i] = p;
  }
}

int an_op_nest_build(an_op_nest *x, const tr_trace *t) {
  x->t = t;
  x->ops = tr_trace_events(t, TR_KIND_CPU_OP, &x->n);
  if (x->n > INT32_MAX) x->n = 0; /* positions are 32-bit: no fallback past them */
  x->pos = malloc((x->n ? x->n : 1) * sizeof *x->pos);
  x->parent = malloc((x->n ? x->n : 1) * sizeof *x->parent);
  if (!x->pos || !x->parent) {
    an_op_nest_free(x);
    return -1;
  }
  for (size_t i = 0; i < x->n; i++) x->pos[i] = (uint32_t)i;
  ut_sort(x->pos, x->n, sizeof *x->pos, cmp_op, x);
  link_parents(x);
  return 0;
}

void an_op_nest_free(an_op_nest *x) {
  free(x->pos);
  free(x->parent);
  x->pos = NULL;
  x->parent = NULL;
  x->n = 0;
}

/* Whether op p sorts at or before (pid, tid, ts). */
static bool at_or_before(const an_op_nest *x, const tr_event *p, tr_str pid, tr_str tid,
                         double ts) {
  tr_str pp = tr_event_pid(x->t, p), tp = tr_event_tid(x->t, p);
  if (pp != pid) return pp < pid;
  if (tp != tid) return tp < tid;
  return p->ts <= ts;
}

const tr_event *an_op_nest_around(const an_op_nest *x, const tr_event *at) {
  tr_str pid = tr_event_pid(x->t, at), tid = tr_event_tid(x->t, at);
  size_t lo; /* first op sorting after (pid, tid, at->ts) */
  UT_PARTITION_POINT(lo, 0, x->n, mid, at_or_before(x, &x->ops[x->pos[mid]], pid, tid, at->ts));
  /* an op spanning it starts at or before it, so it encloses the last op that does: walk
   * up from that one to the first that still spans it */
  for (int32_t i = (int32_t)lo - 1; i >= 0; i = x->parent[i]) {
    const tr_event *op = &x->ops[x->pos[i]];
    if (tr_event_pid(x->t, op) != pid || tr_event_tid(x->t, op) != tid) return NULL;
    if (end_of(x, op) >= at->ts) return op;
  }
  return NULL;
}
