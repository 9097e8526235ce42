/* analysis/trace_filter.c - see trace_filter.h. */
#include "analysis/trace_filter.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/id_index.h"
#include "analysis/op_nest.h"

/* The correlations the kernels carry: a bit per id from lo to hi when they are dense
 * enough (at most CORR_SPAN ids of the span a kernel, 32 bytes: correlations number the
 * runtime calls, a hundred or so a kernel where a trace keeps every call), else (bits NULL)
 * the kernels by correlation (index). A call asks only whether a kernel carries its id,
 * which a bit answers where the index was sorted and searched. */
typedef struct gpu_corrs {
  int64_t lo, hi;
  uint64_t *bits;
  an_id_index index;
} gpu_corrs;

#define CORR_BITS (CHAR_BIT * sizeof(uint64_t)) /* ids a word of bits holds */
#define CORR_SPAN 256 /* the bits' memory bound: the answers are the index's either way */

/* 0, or -1 out of memory. */
static int gpu_corrs_build(gpu_corrs *g, const tr_trace *t) {
  size_t n = 0, m = 0;
  const tr_event *k = tr_trace_events(t, TR_KIND_KERNEL, &n);
  *g = (gpu_corrs){INT64_MAX, INT64_MIN, NULL, {0}};
  for (size_t i = 0; i < n; i++) {
    int64_t c = tr_event_correlation(t, &k[i]);
    if (c == TR_NO_ID) continue;
    m++;
    if (c < g->lo) g->lo = c;
    if (c > g->hi) g->hi = c;
  }
  uint64_t span = m ? (uint64_t)g->hi - (uint64_t)g->lo : 0;
  if (m && span / CORR_SPAN < m &&
      (g->bits = calloc((size_t)(span / CORR_BITS) + 1, sizeof *g->bits)) != NULL) {
    for (size_t i = 0; i < n; i++) {
      int64_t c = tr_event_correlation(t, &k[i]);
      uint64_t d = (uint64_t)c - (uint64_t)g->lo;
      if (c != TR_NO_ID) g->bits[d / CORR_BITS] |= UINT64_C(1) << (d % CORR_BITS);
    }
    return 0;
  }
  return an_id_index_build(&g->index, t, TR_KIND_KERNEL, AN_ID_CORRELATION);
}

static void gpu_corrs_free(gpu_corrs *g) {
  if (g->bits)
    free(g->bits);
  else
    an_id_index_free(&g->index);
}

/* Whether a kernel carries correlation c (hint: the index's search, calls in about id
 * order). */
static bool gpu_carries(const gpu_corrs *g, int64_t c, size_t *hint) {
  if (g->bits) {
    if (c == TR_NO_ID || c < g->lo || c > g->hi) return false;
    uint64_t d = (uint64_t)c - (uint64_t)g->lo;
    return g->bits[d / CORR_BITS] >> (d % CORR_BITS) & 1;
  }
  size_t lo = 0, hi = 0;
  an_id_index_range_near(&g->index, c, hint, &lo, &hi);
  return lo != hi;
}

/* Counts the runtime calls of kind k whose correlation a GPU event carries; false at the
 * first that none does (the trace is then not filtered). */
static bool calls_launch(an_trace_filter *f, const tr_trace *t, const gpu_corrs *gpu, tr_kind k) {
  size_t n = 0, hint = 0;
  const tr_event *ev = tr_trace_events(t, k, &n);
  for (size_t i = 0; i < n; i++) {
    f->runtime_calls++;
    if (!gpu_carries(gpu, tr_event_correlation(t, &ev[i]), &hint)) return false;
    f->gpu_calls++;
  }
  return true;
}

/* Marks the CPU ops that hold a runtime call of kind k (the innermost op around the call,
 * and every op enclosing it). */
static void mark_ops(const an_op_nest *nest, const tr_trace *t, tr_kind k, const tr_event *ops,
                     bool *held) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, k, &n);
  size_t hint = 0; /* calls in file order: about time order */
  for (size_t i = 0; i < n; i++)
    for (long e = an_op_nest_around_entry_near(nest, &ev[i], &hint);
         e >= 0 && !held[an_op_nest_op(nest, e) - ops]; e = an_op_nest_parent(nest, e))
      held[an_op_nest_op(nest, e) - ops] = true;
}

int an_trace_filter_ops(an_trace_filter *f, const tr_trace *t, const an_op_nest *nest) {
  size_t n = 0;
  const tr_event *ops = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  f->cpu_ops += n;
  if (!n) return 0;
  bool *held = calloc(n, sizeof *held);
  if (!held) return -1;
  mark_ops(nest, t, TR_KIND_LAUNCH, ops, held);
  mark_ops(nest, t, TR_KIND_RUNTIME, ops, held);
  for (size_t i = 0; i < n; i++) f->launching_ops += held[i];
  free(held);
  return 0;
}

int an_trace_filter_calls(an_trace_filter *f, const tr_trace *t) {
  gpu_corrs gpu;
  if (gpu_corrs_build(&gpu, t) != 0) return -1;
  f->traces++;
  bool all = calls_launch(f, t, &gpu, TR_KIND_LAUNCH) && calls_launch(f, t, &gpu, TR_KIND_RUNTIME);
  gpu_corrs_free(&gpu);
  if (!all) f->idle_call = true;
  return all;
}

int an_trace_filter_add(an_trace_filter *f, const tr_trace *t) {
  int all = an_trace_filter_calls(f, t);
  if (all <= 0) return all;
  an_op_nest nest;
  if (an_op_nest_build(&nest, t) != 0) return -1;
  int rc = an_trace_filter_ops(f, t, &nest);
  an_op_nest_free(&nest);
  return rc;
}

void an_trace_filter_merge(an_trace_filter *f, const an_trace_filter *g) {
  f->traces += g->traces;
  f->runtime_calls += g->runtime_calls;
  f->gpu_calls += g->gpu_calls;
  f->cpu_ops += g->cpu_ops;
  f->launching_ops += g->launching_ops;
  f->idle_call = f->idle_call || g->idle_call;
}

bool an_trace_filter_says(const an_trace_filter *f, long min_calls, double min_op_pct) {
  return f->traces && !f->idle_call &&
         f->runtime_calls >= (size_t)(min_calls > 0 ? min_calls : 1) &&
         f->gpu_calls == f->runtime_calls && f->cpu_ops > 0 &&
         (double)f->launching_ops >= (double)f->cpu_ops * min_op_pct / 100.0;
}
