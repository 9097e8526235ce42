/*
 * analysis/trace_filter.h - whether a trace was filtered down to the events that put work
 * on the GPU (HTA's trace filters and sampling keep a CPU op only when it leads to a
 * kernel, a runtime call only when it launched one). An unfiltered PyTorch trace always
 * records runtime calls that launch nothing (event queries and records, attribute reads,
 * allocations, stream waits) and CPU ops that launch nothing (views, empty, the
 * optimizer's bookkeeping): when every runtime call launched GPU work and (nearly) every
 * CPU op holds a runtime call of its thread, the host work that launched nothing was dropped, and
 * GPU idle in which the launching thread recorded nothing is that dropped work, not work
 * outside the profiler's view.
 *
 * Ownership: plain counts; borrows nothing.
 */
#ifndef TRIAGE_ANALYSIS_TRACE_FILTER_H
#define TRIAGE_ANALYSIS_TRACE_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/op_nest.h"
#include "trace/trace.h"

typedef struct an_trace_filter {
  size_t traces;        /* traces counted */
  size_t runtime_calls; /* runtime calls with a correlation id (launches and others) */
  size_t gpu_calls;     /* of them, those whose correlation id a GPU event carries */
  size_t cpu_ops;       /* CPU ops (cat cpu_op) */
  size_t launching_ops; /* of them, those whose span holds a runtime call of their thread;
                           counted only when every runtime call put work on the GPU */
  bool idle_call;       /* a runtime call launched nothing: not filtered (counts partial) */
} an_trace_filter;

/* Adds t's counts to f. A runtime call that launched nothing ends the count early: the
 * trace is not filtered, and its ops need no look. 0, or -1 out of memory. */
int an_trace_filter_add(an_trace_filter *f, const tr_trace *t);

/* an_trace_filter_add in two halves, for a caller that holds t's CPU-op nest (the trace
 * view lends its own): the runtime calls, 1 when every one put work on the GPU (then the
 * ops are to be counted), 0 when one did not, -1 out of memory; then the CPU ops, by
 * nest (t's, of every op: an_op_nest_build), 0 or -1 out of memory. */
int an_trace_filter_calls(an_trace_filter *f, const tr_trace *t);
int an_trace_filter_ops(an_trace_filter *f, const tr_trace *t, const an_op_nest *nest);

/* Adds the counts of g (other traces) to f, as an_trace_filter_add of its traces would. */
void an_trace_filter_merge(an_trace_filter *f, const an_trace_filter *g);

/* Whether the counts say filtered: at least min_calls runtime calls, every one of them put
 * work on the GPU, and at least min_op_pct % of the CPU ops hold one (a filter keeps the
 * odd trivial op nested in a kept one: HTA's sampled ranks keep 4 aten::result_type of
 * 2329 ops; real unfiltered traces hold a call in 14-67 % of their ops). */
bool an_trace_filter_says(const an_trace_filter *f, long min_calls, double min_op_pct);

#endif
