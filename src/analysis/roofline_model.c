/*
 * analysis/roofline_model.c - decode GEMM shapes from a known model's dimensions
 * (roofline_model.h, docs/roofline.md "Model dimensions").
 */
#include "analysis/roofline_model.h"

#include <stdio.h>
#include <string.h>

#define PROJECTIONS 4 /* per layer: QKV, o_proj, gate_up, down */
#define MAX_TOKENS 1000000

void an_model_plan_identify(const te_rules *rules, const char *const *texts, size_t n,
                            an_model_plan *plan) {
  memset(plan, 0, sizeof *plan);
  for (size_t i = 0; i < n && !plan->model; i++) {
    if (!texts[i] || !*texts[i]) continue;
    for (size_t m = 0; m < te_rules_model_count(rules) && !plan->model; m++) {
      const te_model *e = te_rules_model_at(rules, m);
      /* a mixture-of-experts model is found from the trace's content (roofline_moe.h) */
      if (e->experts > 0 || !e->match || !te_matcher_match(e->match, texts[i], strlen(texts[i])))
        continue;
      plan->model = e;
      plan->from = texts[i];
    }
  }
  if (!plan->model) plan->from = NULL;
}

/* The logits of the decode step: a CPU op whose first input is [tokens, vocab] with the
 * model's vocabulary (the sampler's argmax / softmax / top-k, or the lm_head's output).
 * Returns the op's name and sets *tokens, or NULL when no op shows it. */
static const char *logits_rows(const tr_trace *t, long vocab, long *tokens) {
  char needle[32];
  snprintf(needle, sizeof needle, ", %ld]", vocab);
  size_t n;
  const tr_event *ops = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  for (size_t i = 0; i < n; i++) {
    const char *dims = tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, &ops[i], TR_ARG_INPUT_DIMS));
    int64_t d[2];
    size_t rank;
    if (!strstr(dims, needle) || !an_op_input_dims(dims, 0, d, 2, &rank) || rank != 2 ||
        d[1] != vocab || d[0] < 1 || d[0] > MAX_TOKENS)
      continue;
    *tokens = (long)d[0];
    return tr_str_get(t, ops[i].name);
  }
  return NULL;
}

bool an_model_plan_check(an_model_plan *plan, const tr_trace *t, size_t gemm_launches, char *why,
                         size_t cap) {
  const te_model *m = plan->model;
  plan->cycle = (size_t)(PROJECTIONS * m->layers + 1);
  if (!m->weight_dtype) {
    snprintf(why, cap, "no weight format");
    return false;
  }
  const char *op = logits_rows(t, m->vocab, &plan->tokens);
  if (!op) {
    snprintf(why, cap, "no CPU op shows the logits [tokens, %ld] of its vocabulary", m->vocab);
    return false;
  }
  if (!gemm_launches || gemm_launches % plan->cycle) {
    snprintf(why, cap,
             "%zu replayed GEMM launches are not whole steps of %zu (4 per layer x %ld "
             "layers + lm_head)",
             gemm_launches, plan->cycle, m->layers);
    return false;
  }
  snprintf(why, cap,
           "vocabulary %ld and %ld tokens a step from %s's input; %zu GEMM launches = "
           "%zu step(s) x (4 per layer x %ld layers + lm_head)",
           m->vocab, plan->tokens, op, gemm_launches, gemm_launches / plan->cycle, m->layers);
  return true;
}

void an_model_gemm_cost(const an_model_plan *plan, size_t i, an_op_cost *out) {
  const te_model *m = plan->model;
  size_t p = i % plan->cycle;
  double n, k;
  if (p == plan->cycle - 1) {
    n = (double)m->vocab, k = (double)m->hidden; /* lm_head */
  } else {
    const double q = (double)(m->heads * m->head_dim);
    const double nk[PROJECTIONS][2] = {
        {q + 2.0 * (double)(m->kv_heads * m->head_dim), (double)m->hidden},
        {(double)m->hidden, q},
        {2.0 * (double)m->intermediate, (double)m->hidden},
        {(double)m->hidden, (double)m->intermediate}};
    n = nk[p % PROJECTIONS][0], k = nk[p % PROJECTIONS][1];
  }
  /* activations in and out in the weights' format (the models listed are BF16 checkpoints) */
  double b = m->weight_dtype->bytes, tok = (double)plan->tokens;
  out->flops = 2.0 * tok * n * k;
  out->bytes = n * k * b + tok * (n + k) * b;
  out->dtype = m->weight_dtype;
}
