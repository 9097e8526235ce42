/*
 * analysis/roofline_moe.c - grouped expert GEMM costs from a mixture-of-experts model's
 * facts (roofline_moe.h, docs/roofline.md "Mixture-of-experts GEMMs").
 */
#include "analysis/roofline_moe.h"

#include <math.h>
#include <string.h>

#define PROJECTIONS 2 /* per layer: gate/up, then down */
#define BITS_PER_BYTE 8.0

bool an_moe_gemm_kernel(const te_rules *rules, const char *name) {
  const te_matcher *m = te_rules_matcher(rules, AN_MOE_GEMM_MATCHER);
  return m && name && te_matcher_match(m, name, strlen(name));
}

double an_moe_active_experts(long experts, long topk, long tokens) {
  if (experts <= 0 || topk <= 0 || tokens <= 0) return 0;
  double miss = 1.0 - (double)topk / (double)experts; /* one token misses a given expert */
  return (double)experts * (1.0 - pow(miss > 0 ? miss : 0, (double)tokens));
}

/* Why entry m does not fit (AN_MOE_MISFIT_NONE when it does). */
static an_moe_misfit misfit(const te_model *m, bool lm_head, size_t steps, size_t launches) {
  if (!m->weight_dtype) return AN_MOE_MISFIT_NO_WEIGHT_FORMAT;
  if (!lm_head) return AN_MOE_MISFIT_NO_LM_HEAD;
  if (launches != steps * (size_t)(PROJECTIONS * m->layers)) return AN_MOE_MISFIT_LAUNCHES;
  return AN_MOE_MISFIT_NONE;
}

bool an_moe_plan_find(const te_rules *rules, const an_model_scan *scan, long tokens, size_t steps,
                      size_t gemm_launches, an_moe_plan *plan, an_model_check *why) {
  memset(plan, 0, sizeof *plan);
  *why = (an_model_check){.launches = gemm_launches, .steps = steps, .tokens = tokens};
  if (tokens <= 0 || !steps) {
    why->kind = AN_CHECK_MOE_NO_TOKENS;
    return false;
  }
  const te_model *fit = NULL, *other = NULL;
  for (size_t i = 0; i < te_rules_model_count(rules); i++) {
    const te_model *m = te_rules_model_at(rules, i);
    if (m->experts <= 0) continue;
    an_moe_misfit w = misfit(m, scan->lm_head[i], steps, gemm_launches);
    if (!w && !fit)
      fit = m;
    else if (!w)
      other = m;
    else if (!why->misfit)
      why->misfit = w;
  }
  if (!fit) {
    why->kind = AN_CHECK_MOE_NO_FIT;
    return false;
  }
  if (other) {
    why->kind = AN_CHECK_MOE_AMBIGUOUS;
    why->fit = fit->label;
    why->other = other->label;
    return false;
  }
  plan->model = fit;
  plan->tokens = tokens;
  plan->steps = steps;
  plan->cycle = (size_t)(PROJECTIONS * fit->layers);
  plan->active = an_moe_active_experts(fit->experts, fit->topk, tokens);
  why->kind = AN_CHECK_MOE_HELD;
  why->vocab = fit->vocab;
  why->hidden = fit->hidden;
  why->layers = fit->layers;
  why->topk = fit->topk;
  why->experts = fit->experts;
  why->active = plan->active;
  return true;
}

void an_moe_gemm_cost(const an_moe_plan *plan, size_t i, an_op_cost *out) {
  const te_model *m = plan->model;
  const double h = (double)m->hidden, inter = (double)m->moe_intermediate;
  const bool up = i % PROJECTIONS == 0; /* gate/up: N = 2 I, K = H; down: N = H, K = I */
  const double n = up ? 2.0 * inter : h, k = up ? h : inter;
  const double act = (double)m->weight_dtype->bytes; /* checked by misfit */
  const double bits = m->expert_weight_bits > 0 ? m->expert_weight_bits : act * BITS_PER_BYTE;
  const double routed = (double)plan->tokens * (double)m->topk; /* (token, expert) rows */
  out->flops = 2.0 * routed * n * k;
  /* the active experts' weights, and each routed row's activations in and out */
  out->bytes = plan->active * n * k * bits / BITS_PER_BYTE + routed * (n + k) * act;
  out->dtype = m->weight_dtype; /* the activations' format: the weights are dequantized to it */
}

/* Per layer: the attention's projections, then the router (when replayed as a GEMM). */
#define DENSE_WITH_ROUTER (AN_MODEL_ATTN_PROJECTIONS + 1)

bool an_moe_dense_fit(an_moe_plan *plan, size_t launches) {
  const size_t layers = plan->steps * (size_t)plan->model->layers;
  plan->dense_per_layer = 0;
  if (launches && launches == layers * DENSE_WITH_ROUTER)
    plan->dense_per_layer = DENSE_WITH_ROUTER;
  else if (launches && launches == layers * AN_MODEL_ATTN_PROJECTIONS)
    plan->dense_per_layer = AN_MODEL_ATTN_PROJECTIONS;
  return plan->dense_per_layer != 0;
}

void an_moe_dense_cost(const an_moe_plan *plan, size_t i, an_op_cost *out) {
  const te_model *m = plan->model;
  size_t p = plan->dense_per_layer ? i % plan->dense_per_layer : 0;
  double n = (double)m->experts, k = (double)m->hidden; /* the router */
  if (p < AN_MODEL_ATTN_PROJECTIONS) an_model_attn_projection(m, p, &n, &k);
  an_model_projection_cost(m, (double)plan->tokens, n, k, out);
}
