/*
 * analysis/roofline_attn.c - attention launch costs from the step annotation's sums
 * (roofline_attn.h, docs/roofline.md "Attention from the step's sums").
 */
#include "analysis/roofline_attn.h"

#include <stdint.h>
#include <string.h>

#define FLOPS_PER_PAIR_PER_DIM 4.0 /* QK^T and PV: a multiply-add (2 FLOPs) each */
#define FP8_BYTES 1.0

bool an_attn_kernel(const te_rules *rules, const char *name) {
  const te_matcher *m = te_rules_matcher(rules, AN_ATTN_KERNEL_MATCHER);
  return m && name && te_matcher_match(m, name, strlen(name));
}

/* Whether layer slides (its window's keys only), by the model's cycle of layer types. */
static bool layer_slides(const te_model *m, size_t layer) {
  if (m->sliding_window <= 0 || m->layer_cycle <= 0) return false;
  return (m->sliding_layers >> (layer % (size_t)m->layer_cycle)) & 1u;
}

/* How many of the model's layers slide. */
static long sliding_layers(const te_model *m) {
  long n = 0;
  for (long l = 0; l < m->layers; l++) n += layer_slides(m, (size_t)l);
  return n;
}

/* One layer's attention launch: q query tokens against kv KV tokens, pairs score pairs. */
static void attn_cost(const te_model *m, double q, double kv, double pairs, bool fp8,
                      an_op_cost *cost) {
  const double act = m->weight_dtype->bytes, kvb = fp8 ? FP8_BYTES : act;
  const double qd = (double)(m->heads * m->head_dim), kvd = (double)(m->kv_heads * m->head_dim);
  cost->flops = FLOPS_PER_PAIR_PER_DIM * qd * pairs;
  /* K and V of every KV token read; the queries read and the outputs written */
  cost->bytes = kv * 2.0 * kvd * kvb + q * 2.0 * qd * act;
  cost->dtype = m->weight_dtype;
}

/* Which fact is missing, AN_ATTN_HELD when none. */
static an_attn_check_kind missing(const te_model *m, const an_exec_facts *x, size_t steps,
                                  size_t launches, size_t fp8) {
  if (!m) return AN_ATTN_NO_MODEL;
  if (!m->weight_dtype) return AN_ATTN_NO_WEIGHT_FORMAT;
  if (!x->steps_with_attn || !steps) return AN_ATTN_NO_SUMS;
  if (fp8 && fp8 != launches) return AN_ATTN_KV_FORMATS;
  if (launches != steps * (size_t)m->layers) return AN_ATTN_LAUNCHES;
  return AN_ATTN_HELD;
}

bool an_attn_plan_make(const te_model *m, const an_exec_facts *x, size_t steps, size_t launches,
                       size_t fp8, an_attn_plan *plan, an_attn_check *why) {
  memset(plan, 0, sizeof *plan);
  *why = (an_attn_check){.kind = missing(m, x, steps, launches, fp8)};
  why->launches = launches;
  why->steps = steps;
  if (m) {
    why->model = m->label;
    why->window = m->sliding_window;
    why->heads = m->heads, why->kv_heads = m->kv_heads, why->head_dim = m->head_dim;
    why->layers = m->layers;
  }
  if (why->kind != AN_ATTN_HELD) return false;
  const double n = (double)x->steps_with_attn; /* every view's steps: the mean step */
  const double q = x->attn_q_tokens / n, kv = x->attn_kv_tokens / n, pairs = x->attn_pairs / n;
  plan->model = m;
  attn_cost(m, q, kv, pairs, fp8 != 0, &plan->cost);
  why->q_tokens = q, why->kv_tokens = kv, why->pairs = pairs;
  why->kv_fp8 = fp8 != 0;
  why->kv_dtype = m->weight_dtype->id;
  why->window_layers = sliding_layers(m);
  if (why->window_layers) {
    /* a sequence's window reads the keys of its last sq + window - 1 positions at most,
     * each query row scores window keys at most */
    const double w = (double)m->sliding_window, seqs = x->attn_seqs / n;
    const double reach = seqs > 0 ? q + seqs * (w - 1) : kv; /* no count: no bound */
    why->window_kv_tokens = kv < reach ? kv : reach;
    why->window_pairs = pairs < q * w ? pairs : q * w;
    attn_cost(m, q, why->window_kv_tokens, why->window_pairs, fp8 != 0, &plan->window_cost);
  }
  return true;
}

void an_attn_launch_cost(const an_attn_plan *plan, size_t i, an_op_cost *out) {
  const te_model *m = plan->model;
  size_t layer = m->layers > 0 ? i % (size_t)m->layers : 0;
  *out = layer_slides(m, layer) ? plan->window_cost : plan->cost;
}
