/*
 * analysis/roofline_attn.c - attention launch costs from the step annotation's sums
 * (roofline_attn.h, docs/roofline.md "Attention from the step's sums").
 */
#include "analysis/roofline_attn.h"

#include <stdio.h>
#include <string.h>

#define FLOPS_PER_PAIR_PER_DIM 4.0 /* QK^T and PV: a multiply-add (2 FLOPs) each */
#define FP8_BYTES 1.0

bool an_attn_kernel(const te_rules *rules, const char *name) {
  const te_matcher *m = te_rules_matcher(rules, AN_ATTN_KERNEL_MATCHER);
  return m && name && te_matcher_match(m, name, strlen(name));
}

/* Which fact is missing, NULL when none. */
static const char *missing(const te_model *m, const an_exec_facts *x, size_t steps, size_t launches,
                           size_t fp8, char *buf, size_t cap) {
  if (!m) return "no model identified from the trace (its heads, KV heads and head_dim)";
  if (!m->weight_dtype) return "the model entry states no weight format";
  if (m->sliding_window > 0) {
    snprintf(buf, cap,
             "%s has sliding-window layers (%ld tokens): their KV reads need each sequence's "
             "length, the step sums give only totals",
             m->label, m->sliding_window);
    return buf;
  }
  if (!x->steps_with_attn || !steps)
    return "the step annotations state no attention sums (the sequence lengths)";
  if (fp8 && fp8 != launches) return "the attention kernels disagree on the KV cache's format";
  if (launches != steps * (size_t)m->layers) {
    snprintf(buf, cap, "%zu attention launches are not one a layer (%ld) in each of %zu step(s)",
             launches, m->layers, steps);
    return buf;
  }
  return NULL;
}

bool an_attn_plan_make(const te_model *m, const an_exec_facts *x, size_t steps, size_t launches,
                       size_t fp8, an_attn_plan *plan, char *why, size_t cap) {
  memset(plan, 0, sizeof *plan);
  char buf[256];
  const char *w = missing(m, x, steps, launches, fp8, buf, sizeof buf);
  if (w) {
    snprintf(why, cap, "%s", w);
    return false;
  }
  const double n = (double)x->steps_with_attn; /* every view's steps: the mean step */
  const double q = x->attn_q_tokens / n, kv = x->attn_kv_tokens / n, pairs = x->attn_pairs / n;
  const double act = m->weight_dtype->bytes, kvb = fp8 ? FP8_BYTES : act;
  const double qd = (double)(m->heads * m->head_dim), kvd = (double)(m->kv_heads * m->head_dim);
  plan->model = m;
  plan->cost.flops = FLOPS_PER_PAIR_PER_DIM * qd * pairs;
  /* K and V of every KV token read; the queries read and the outputs written */
  plan->cost.bytes = kv * 2.0 * kvd * kvb + q * 2.0 * qd * act;
  plan->cost.dtype = m->weight_dtype;
  snprintf(why, cap,
           "%.0f query and %.0f KV tokens, %.0f causal score pairs a step (step annotation "
           "sums); %s: %ld heads, %ld KV heads, head_dim %ld, KV cache in %s; %zu launches = "
           "%zu step(s) x %ld layers",
           q, kv, pairs, m->label, m->heads, m->kv_heads, m->head_dim,
           fp8 ? "fp8" : m->weight_dtype->id, launches, steps, m->layers);
  return true;
}
