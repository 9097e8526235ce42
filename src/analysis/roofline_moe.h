/*
 * analysis/roofline_moe.h - the cost of a mixture-of-experts model's grouped expert GEMMs
 * from the model's facts (rules `models:` entries with experts), for launches that have no
 * shapes (graph replay): docs/roofline.md "Mixture-of-experts GEMMs". Private to the
 * roofline.
 *
 * The model is identified from the trace's content alone, never from a path: a CPU op's
 * Input Dims hold the lm_head weight [vocab, hidden] of the entry, and the stage's grouped
 * GEMM launches (matcher moe_grouped_gemm) are 2 x layers a step (per layer the gate/up
 * projection, then the down projection, in launch order). Exactly one entry must fit.
 * The tokens of a step come from the step annotation (fuse.token_count_keys; the stage's
 * steps must agree). The expected experts that hold a token, with T tokens routed to top-k
 * of E experts uniformly, are E x (1 - (1 - k/E)^T); their weights are the bytes read
 * (uniform routing touches the most experts: skew lowers the bytes, so the bound stays an
 * upper one); FLOPs are 2 x T x k x N x K per projection.
 *
 * The same model's dense projections replayed beside them (the attention's QKV and o_proj,
 * then the router, in launch order) take its dimensions at the same T tokens when the
 * stage's replayed dense GEMM launches are whole layers of them in every step.
 *
 * Ownership: the plan borrows the rules' model.
 */
#ifndef TRIAGE_ANALYSIS_ROOFLINE_MOE_H
#define TRIAGE_ANALYSIS_ROOFLINE_MOE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/op_cost.h"
#include "analysis/roofline_model.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* The matcher naming the grouped expert GEMM kernels that launch twice a layer. */
#define AN_MOE_GEMM_MATCHER "moe_grouped_gemm"

typedef struct an_moe_plan {
  const te_model *model;  /* NULL: no entry fits */
  long tokens;            /* tokens of one step */
  size_t cycle;           /* grouped GEMM launches a step: 2 x layers */
  double active;          /* expected experts holding at least one token */
  size_t steps;           /* steps counted in the stage */
  size_t dense_per_layer; /* replayed dense projections a layer (an_moe_dense_fit); 0: none */
} an_moe_plan;

/* Whether a kernel (its full name) is a grouped expert GEMM of the matcher. */
bool an_moe_gemm_kernel(const te_rules *rules, const char *name);

/* Finds the one models: entry with experts that fits the trace scanned: tokens a step (0: unknown),
 * steps counted in the stage, and the stage's grouped GEMM launches without shapes. True
 * when one fits; why gets what was checked, or why nothing is claimed. */
bool an_moe_plan_find(const te_rules *rules, const an_model_scan *scan, long tokens, size_t steps,
                      size_t gemm_launches, an_moe_plan *plan, an_model_check *why);

/* The expected experts holding a token: tokens routed to topk of experts uniformly. */
double an_moe_active_experts(long experts, long topk, long tokens);

/* The cost of the i-th grouped GEMM launch of the stage (0-based, in start order). */
void an_moe_gemm_cost(const an_moe_plan *plan, size_t i, an_op_cost *out);

/* Whether the stage's replayed dense GEMM launches (launches) are the found model's dense
 * projections: QKV and o_proj a layer (2), and the router (3), in every step counted. Sets
 * plan->dense_per_layer (0 when neither fits) and returns whether one fits. */
bool an_moe_dense_fit(an_moe_plan *plan, size_t launches);

/* The cost of the i-th replayed dense GEMM launch of the stage (0-based, in start order):
 * per layer QKV (N = (heads + 2 kv_heads) head_dim, K = hidden), o_proj (N = hidden, K =
 * heads head_dim), the router (N = experts, K = hidden), at the step's tokens. */
void an_moe_dense_cost(const an_moe_plan *plan, size_t i, an_op_cost *out);

#endif
