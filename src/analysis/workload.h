/*
 * analysis/workload.h - what kind of run a trace is (serving, training, micro-benchmark),
 * from the trace's own evidence, so the summary never gives serving advice to a training
 * step or a benchmark.
 *
 * In order: a CPU op or annotation the packs' workload_training matcher names (backward
 * ops, autograd engine calls, optimizer steps) makes it training; a step annotation the
 * workload_serving matcher names (SGLang step[...], vLLM execute_...), server args, or a
 * serving framework named by the inputs (not the packs' default) make it serving, a
 * framework the workload_offline_framework matcher names (HF Transformers: a generate
 * script, no server) inference; steps
 * that are one repeated top-level call (analysis/steps.h) make it a micro-benchmark;
 * else unknown.
 *
 * Ownership: the evidence string is interned in the caller's string table.
 */
#ifndef TRIAGE_ANALYSIS_WORKLOAD_H
#define TRIAGE_ANALYSIS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "analysis/steps.h"
#include "analysis/strtab.h"
#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_workload_input {
  tr_trace *const *traces; /* the formal traces */
  const an_steps *steps;   /* parallel to traces */
  size_t n;
  const char *framework_id; /* the framework the run detected */
  const char *framework_label;
  an_source framework_source; /* where from (AN_SOURCE_DEFAULT: nothing named it) */
} an_workload_input;

/* The shape of the run's steps from its attention ops (the packs' op cost models of kind
 * attention: SDPA, flash forward) inside the counted steps (every op without steps): the
 * query and key tensors' batch and sequence lengths (layout from the model: (B, H, S, D)
 * or (B, S, H, D)). The most common shape, with how many calls share it; phase unknown
 * when no such op has shapes (record_shapes off, graph replay, a paged kernel's op). */
an_step_shape an_step_shape_detect(const an_workload_input *in, const te_rules *rules,
                                   an_strtab *strings);

/* Whether the run executed torch.compile'd code: the first CPU op or annotation the packs'
 * compiled_region matcher names, else the first kernel their compiled_kernel matcher names
 * (an Inductor kernel); not compiled when neither. */
an_compiled_fact an_compiled_detect(const an_workload_input *in, const te_rules *rules,
                                    an_strtab *strings);

/* The workload of a run; evidence NULL when unknown or on out of memory. */
an_workload_fact an_workload_detect(const an_workload_input *in, const te_rules *rules,
                                    an_strtab *strings);

#endif
