/* analysis/trace_filter.c - see trace_filter.h. */
#include "analysis/trace_filter.h"

#include <stdlib.h>

#include "analysis/id_index.h"
#include "analysis/op_nest.h"

/* Counts the runtime calls of kind k whose correlation a GPU event carries; false at the
 * first that none does (the trace is then not filtered). */
static bool calls_launch(an_trace_filter *f, const tr_trace *t, const an_id_index *gpu, tr_kind k) {
  size_t n = 0, hint = 0;
  const tr_event *ev = tr_trace_events(t, k, &n);
  for (size_t i = 0; i < n; i++) {
    size_t lo = 0, hi = 0;
    f->runtime_calls++;
    an_id_index_range_near(gpu, tr_event_correlation(t, &ev[i]), &hint, &lo, &hi);
    if (lo == hi) return false;
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
  an_id_index gpu;
  if (an_id_index_build(&gpu, t, TR_KIND_KERNEL, AN_ID_CORRELATION) != 0) return -1;
  f->traces++;
  bool all = calls_launch(f, t, &gpu, TR_KIND_LAUNCH) && calls_launch(f, t, &gpu, TR_KIND_RUNTIME);
  an_id_index_free(&gpu);
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
