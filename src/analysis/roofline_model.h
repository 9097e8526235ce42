/*
 * analysis/roofline_model.h - decode GEMM shapes from a known model's dimensions, for a
 * graph-replayed stage with no launching CPU ops and no mapping trace (docs/roofline.md
 * "Model dimensions"). Private to the roofline.
 *
 * The model is identified from text the run holds (rules `models:`), then checked against
 * the trace before anything is claimed: a CPU op of the trace must show the logits
 * [tokens, vocab] with the model's vocabulary (its first dimension is every decode GEMM's
 * M: one token a sequence), and the stage's replayed GEMM launches must be whole steps of
 * the dense decoder's sequence: per layer QKV, o_proj, gate_up, down, then lm_head
 * (4 x layers + 1 each). A check that fails leaves every launch without shapes and says
 * why (an_roofline_model.check).
 *
 * Ownership: the plan borrows the rules' model; check text is copied into the strtab.
 */
#ifndef TRIAGE_ANALYSIS_ROOFLINE_MODEL_H
#define TRIAGE_ANALYSIS_ROOFLINE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "analysis/op_cost.h"
#include "analysis/strtab.h"
#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_model_plan {
  const te_model *model; /* NULL: no model identified */
  const char *from;      /* the text that named it */
  long tokens;           /* rows of the logits op (0: not found) */
  size_t cycle;          /* GEMM launches a step: 4 x layers + 1 */
} an_model_plan;

/* The first text (in order) a models: entry matches; plan->model NULL when none. */
void an_model_plan_identify(const te_rules *rules, const char *const *texts, size_t n,
                            an_model_plan *plan);

/* Checks the plan against trace t and the count of replayed GEMM launches of the stage;
 * true when every check holds. why gets what was checked or what failed. */
bool an_model_plan_check(an_model_plan *plan, const tr_trace *t, size_t gemm_launches, char *why,
                         size_t cap);

/* The cost of the i-th replayed GEMM launch of the stage (0-based, in start order). */
void an_model_gemm_cost(const an_model_plan *plan, size_t i, an_op_cost *out);

#endif
