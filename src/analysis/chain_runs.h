/*
 * analysis/chain_runs.h - the eager elementwise and copy chains of a stage as they ran
 * (review 10 defect 1).
 *
 * A compiler (torch.compile) or a hand-fused kernel fuses the elementwise and copy launches
 * that run back to back between two kernels it cannot fold in: an RMSNorm ladder (casts,
 * pow, mean, add, rsqrt, two muls) between an attention output projection and the next
 * GEMM, a RoPE ladder (mul, cat, neg, add) between the QKV GEMM and attention. So the chain
 * is a run of launches, not a set of kernel names: on one stream, in start order (= launch
 * order), a run of chain links (an_summary_chain_link) inside the counted steps; any other
 * kernel (a GEMM, attention, a collective, a KV write) or a launch outside the counted steps
 * ends it. Each run of two launches or more folds into one fused kernel, which still makes
 * about one pass: its longest launch's time. A lone link between two GEMMs folds into
 * nothing.
 *
 * Ownership: reads the views, steps and map it is given, and writes the stages of `tables`.
 */
#ifndef TRIAGE_ANALYSIS_CHAIN_RUNS_H
#define TRIAGE_ANALYSIS_CHAIN_RUNS_H

#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/opaque_ops.h"
#include "analysis/steps.h"
#include "analysis/tables.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

/* Sets the chain record of every stage of `tables` from the formal views (kmap: their
 * kernel map, which named the rows; steps: parallel to the views, NULL when every launch
 * counts; probes: the views' opaque-op probes, shared with an_opaque_steps). Runs after
 * an_opaque_steps (a row launched only under opaque ops is no link).
 * AN_ERR_NOMEM when out of memory. */
an_status an_chain_runs_build(const an_trace_view *views, size_t n_views, const an_steps *steps,
                              const an_kernel_map *kmap, const te_rules *rules,
                              an_opaque_probes *probes, an_tables *tables);

#endif
