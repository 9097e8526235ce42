/*
 * analysis/op_nest.c - the innermost CPU op around an event of its thread (op_nest.h).
 */
#include "analysis/op_nest.h"
#include "util/search.h"

#include <stdlib.h>
#include <string.h>

#include "util/sort.h"
#include "util/vec.h"

static double end_of(const an_op_nest *x, const tr_event *e) {
  return tr_event_ts(x->t, e) + tr_event_dur(x->t, e);
}

static int cmp_op(const void *a, const void *b, void *ctx) {
  const an_op_nest *x = ctx;
  const tr_event *p = &x->ops[*(const uint32_t *)a], *q = &x->ops[*(const uint32_t *)b];
  if (p->ctx != q->ctx || p->ctx == TR_CTX_WIDE) { /* one context: one thread */
    const tr_event_ctx *cp = tr_trace_ctx(x->t, p), *cq = tr_trace_ctx(x->t, q);
    if (cp->pid != cq->pid) return cp->pid < cq->pid ? -1 : 1;
    if (cp->tid != cq->tid) return cp->tid < cq->tid ? -1 : 1;
  }
  int c = tr_event_ts_cmp(x->t, p, q);
  if (c) return c;
  double ep = end_of(x, p), eq = end_of(x, q);
  if (ep != eq) return ep > eq ? -1 : 1; /* the enclosing op first at equal starts */
  return p->index < q->index ? -1 : p->index > q->index;
}

/* Notes that entry i's enclosing op is entry p (-1: none). False when out of memory. */
static bool set_parent(an_op_nest *x, size_t i, int32_t p, size_t *cap_far) {
  if (p < 0 || i - (size_t)p < AN_NEST_FAR) {
    x->up[i] = p < 0 ? 0 : (uint16_t)(i - (size_t)p);
    return true;
  }
  x->up[i] = AN_NEST_FAR;
  an_op_nest_far *f = ut_grow(x->far, cap_far, x->n_far + 1, sizeof *f);
  if (!f) return false;
  x->far = f;
  x->far[x->n_far++] = (an_op_nest_far){(uint32_t)i, p};
  return true;
}

/* The entries themselves instead of up and far, when those are the larger (more than a
 * quarter of the ops far). False when out of memory. */
static bool unfold_parents(an_op_nest *x) {
  if (x->n * sizeof *x->up + x->n_far * sizeof *x->far <= x->n * sizeof *x->parent) return true;
  int32_t *parent = malloc((x->n ? x->n : 1) * sizeof *parent);
  if (!parent) return false;
  for (size_t i = 0; i < x->n; i++) parent[i] = (int32_t)an_op_nest_parent(x, (long)i);
  free(x->up);
  free(x->far);
  x->up = NULL;
  x->far = NULL;
  x->n_far = 0;
  x->parent = parent;
  return true;
}

long an_op_nest_far_parent(const an_op_nest *x, long entry) {
  size_t lo;
  UT_PARTITION_POINT(lo, 0, x->n_far, m, x->far[m].entry < (uint32_t)entry);
  return lo < x->n_far && x->far[lo].entry == (uint32_t)entry ? x->far[lo].parent : -1;
}

/* Parent links in one pass over each thread's ops (sorted: a thread's ops are one run):
 * the ops still open at an op's start form a stack, each above the one enclosing it; those
 * ending before the op ends are closed, and the top encloses it. Each op's end is read
 * once, when it is pushed. False when out of memory. */
static bool link_parents(an_op_nest *x) {
  typedef struct open_op {
    int32_t at;
    double end;
  } open_op;
  open_op *stack = NULL;
  size_t depth = 0, cap = 0, cap_far = 0;
  tr_str pid = 0, tid = 0;
  uint16_t ctx = TR_CTX_WIDE; /* the op before's: one context, one thread */
  for (size_t i = 0; i < x->n; i++) {
    const tr_event *op = &x->ops[x->pos[i]];
    double end = end_of(x, op);
    if (!i || op->ctx != ctx || ctx == TR_CTX_WIDE) {
      const tr_event_ctx *c = tr_trace_ctx(x->t, op);
      if (!i || c->pid != pid || c->tid != tid) depth = 0; /* another thread */
      pid = c->pid, tid = c->tid, ctx = op->ctx;
    }
    while (depth && stack[depth - 1].end < end) depth--;
    open_op *v = depth < cap ? stack : ut_grow(stack, &cap, depth + 1, sizeof *v);
    if (!v || !set_parent(x, i, depth ? stack[depth - 1].at : -1, &cap_far)) {
      free(stack);
      return false;
    }
    stack = v;
    stack[depth++] = (open_op){(int32_t)i, end};
  }
  free(stack);
  return unfold_parents(x);
}

/* The index over every event of the kind (all), or over those spanning one of at[0..n_at). */
static int build(an_op_nest *x, const tr_trace *t, tr_kind kind, bool all, const double *at,
                 size_t n_at) {
  size_t n = 0;
  *x = (an_op_nest){.t = t};
  x->ops = tr_trace_events(t, kind, &n);
  if (n > INT32_MAX) n = 0; /* positions are 32-bit: no fallback past them */
  x->n = 0;
  x->pos = malloc((n ? n : 1) * sizeof *x->pos);
  if (!x->pos) return -1;
  size_t hint = 0; /* ops come in file order, mostly in time order */
  for (size_t i = 0; i < n; i++)
    if (all ||
        ut_holds_near_f64(at, n_at, &hint, tr_event_ts(x->t, &x->ops[i]), end_of(x, &x->ops[i])))
      x->pos[x->n++] = (uint32_t)i;
  x->up = malloc((x->n ? x->n : 1) * sizeof *x->up);
  if (!x->up) {
    an_op_nest_free(x);
    return -1;
  }
  ut_sort(x->pos, x->n, sizeof *x->pos, cmp_op, x);
  if (link_parents(x)) return 0;
  an_op_nest_free(x);
  return -1;
}

int an_op_nest_build(an_op_nest *x, const tr_trace *t) {
  return build(x, t, TR_KIND_CPU_OP, true, NULL, 0);
}

int an_op_nest_build_at(an_op_nest *x, const tr_trace *t, const double *at, size_t n_at) {
  return build(x, t, TR_KIND_CPU_OP, false, at, n_at);
}

int an_op_nest_build_regions_at(an_op_nest *x, const tr_trace *t, const double *at, size_t n_at) {
  return build(x, t, TR_KIND_USER_ANNOTATION, false, at, n_at);
}

void an_op_nest_free(an_op_nest *x) {
  free(x->pos);
  free(x->up);
  free(x->far);
  free(x->parent);
  x->pos = NULL;
  x->up = NULL;
  x->far = NULL;
  x->parent = NULL;
  x->n_far = 0;
  x->n = 0;
}

/* Whether op p sorts at or before (pid, tid, ts). key is ts as an event's start count
 * (tr_event_ts_count), or TR_TS_WIDE: counts compare as the starts do unless one is kept
 * wide (trace.h), so a search for an event's start decodes none. */
static inline bool at_or_before(const an_op_nest *x, const tr_event *p, tr_str pid, tr_str tid,
                                int64_t key, double ts) {
  const tr_event_ctx *c = tr_trace_ctx(x->t, p);
  if (c->pid != pid) return c->pid < pid;
  if (c->tid != tid) return c->tid < tid;
  int64_t count = tr_event_ts_count(p);
  if (count != TR_TS_WIDE && key != TR_TS_WIDE) return count <= key;
  return tr_event_ts(x->t, p) <= ts;
}

/* The sorted entry of CPU op `op`, or -1 when it is not one of the index's ops. */
static long entry_of(const an_op_nest *x, const tr_event *op) {
  tr_str pid = tr_event_pid(x->t, op), tid = tr_event_tid(x->t, op);
  size_t lo; /* first op sorting after (pid, tid, op->ts): op is among those before it */
  int64_t key = tr_event_ts_count(op);
  double ts = tr_event_ts(x->t, op);
  UT_PARTITION_POINT(lo, 0, x->n, mid, at_or_before(x, &x->ops[x->pos[mid]], pid, tid, key, ts));
  for (size_t i = lo; i-- > 0;) {
    const tr_event *e = &x->ops[x->pos[i]];
    if (tr_event_pid(x->t, e) != pid || tr_event_tid(x->t, e) != tid ||
        tr_event_ts_cmp(x->t, e, op) != 0)
      break;
    if (e == op) return (long)i;
  }
  return -1;
}

const tr_event *an_op_nest_enclosing(const an_op_nest *x, const tr_event *op) {
  long i = entry_of(x, op);
  long p = i >= 0 ? an_op_nest_parent(x, i) : -1;
  return p >= 0 ? &x->ops[x->pos[p]] : NULL;
}

const tr_event *an_op_nest_child(const an_op_nest *x, const tr_event *op, const char *name) {
  long i = entry_of(x, op);
  if (i < 0) return NULL;
  /* its descendants follow it in the sorted order, up to the first op it does not hold */
  for (size_t k = (size_t)i + 1; k < x->n && an_op_nest_parent(x, (long)k) >= i; k++) {
    const tr_event *e = &x->ops[x->pos[k]];
    if (an_op_nest_parent(x, (long)k) == i && !strcmp(tr_str_get(x->t, e->name), name)) return e;
  }
  return NULL;
}

/* The first sorted entry after (pid, tid, key/ts) (at_or_before fails there), searched
 * from `hint` in steps that double, then by the partition point (ut_lower_bound_near_f64's
 * walk): callers asking in about time order (launch calls in kernel order) find it a few
 * entries from their last answer. The same answer as a search of the whole index. */
static size_t first_after_near(const an_op_nest *x, tr_str pid, tr_str tid, int64_t key, double ts,
                               size_t hint) {
#define HOLDS(i) at_or_before(x, &x->ops[x->pos[i]], pid, tid, key, ts)
  size_t n = x->n, at = hint < n ? hint : n, lo, hi, step = 1, out;
  if (at < n && HOLDS(at)) { /* the answer lies after at */
    lo = at + 1;
    while (lo + step - 1 < n && HOLDS(lo + step - 1)) {
      lo += step;
      step *= 2;
    }
    hi = lo + step - 1 < n ? lo + step - 1 : n;
  } else { /* at or before at */
    hi = at;
    while (hi >= step && !HOLDS(hi - step)) {
      hi -= step;
      step *= 2;
    }
    lo = hi >= step ? hi - step + 1 : 0;
  }
  UT_PARTITION_POINT(out, lo, hi, i, HOLDS(i));
#undef HOLDS
  return out;
}

/* The innermost op around `at` given lo, the first sorted entry after at's (pid, tid,
 * start): an op spanning it starts at or before it, so it encloses the last op that does:
 * walk up from that one to the first that still spans it. */
static long around_from(const an_op_nest *x, const tr_event *at, size_t lo) {
  tr_str pid = tr_event_pid(x->t, at), tid = tr_event_tid(x->t, at);
  double at_ts = tr_event_ts(x->t, at);
  for (long i = (long)lo - 1; i >= 0; i = an_op_nest_parent(x, i)) {
    const tr_event *op = &x->ops[x->pos[i]];
    if (tr_event_pid(x->t, op) != pid || tr_event_tid(x->t, op) != tid) return -1;
    if (end_of(x, op) >= at_ts) return i;
  }
  return -1;
}

long an_op_nest_around_entry(const an_op_nest *x, const tr_event *at) {
  tr_str pid = tr_event_pid(x->t, at), tid = tr_event_tid(x->t, at);
  size_t lo; /* first op sorting after (pid, tid, at->ts) */
  int64_t key = tr_event_ts_count(at);
  double at_ts = tr_event_ts(x->t, at);
  UT_PARTITION_POINT(lo, 0, x->n, mid, at_or_before(x, &x->ops[x->pos[mid]], pid, tid, key, at_ts));
  return around_from(x, at, lo);
}

long an_op_nest_around_entry_near(const an_op_nest *x, const tr_event *at, size_t *hint) {
  *hint = first_after_near(x, tr_event_pid(x->t, at), tr_event_tid(x->t, at), tr_event_ts_count(at),
                           tr_event_ts(x->t, at), *hint);
  return around_from(x, at, *hint);
}

const tr_event *an_op_nest_around(const an_op_nest *x, const tr_event *at) {
  long i = an_op_nest_around_entry(x, at);
  return i >= 0 ? an_op_nest_op(x, i) : NULL;
}

/* Whether op p runs on thread (pid, tid). */
static bool on_thread(const an_op_nest *x, const tr_event *p, tr_str pid, tr_str tid) {
  return tr_event_pid(x->t, p) == pid && tr_event_tid(x->t, p) == tid;
}

bool an_op_nest_hole(const an_op_nest *x, tr_str pid, tr_str tid, double a, double b,
                     an_op_hole *out) {
  size_t k; /* first op sorting after (pid, tid, a) */
  UT_PARTITION_POINT(k, 0, x->n, mid,
                     at_or_before(x, &x->ops[x->pos[mid]], pid, tid, TR_TS_WIDE, a));
  /* the thread's last outermost op starting at or before a encloses the last op that does */
  const tr_event *last = NULL;
  for (long i = (long)k - 1; i >= 0; i = an_op_nest_parent(x, i)) {
    const tr_event *op = &x->ops[x->pos[i]];
    if (!on_thread(x, op, pid, tid)) break;
    last = op;
  }
  double cover = last ? end_of(x, last) : a;
  *out = (an_op_hole){0, 0, NULL, NULL};
  for (size_t i = k;; i++) {
    const tr_event *op = i < x->n ? &x->ops[x->pos[i]] : NULL;
    double ts = op ? tr_event_ts(x->t, op) : b;
    bool in = op && on_thread(x, op, pid, tid) && ts < b;
    double from = cover > a ? cover : a, to = in ? ts : b;
    if (to > from && to - from > out->end - out->ts)
      *out = (an_op_hole){from, to, last, in ? op : NULL};
    if (!in) break;
    if (ts >= cover) last = op; /* an outermost op (one under `last` starts before) */
    if (end_of(x, op) > cover) cover = end_of(x, op);
  }
  return out->end > out->ts;
}
