/*
 * analysis/roofline_attn.c - attention launch costs from the step annotation's sums
 * (roofline_attn.h, docs/roofline.md "Attention from the step's sums"), and the shape
 * ceiling of an attention row (roofline.attention_ceiling, "Attention ceiling").
 */
#include "analysis/roofline_attn.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FLOPS_PER_PAIR_PER_DIM 4.0 /* QK^T and PV: a multiply-add (2 FLOPs) each */
#define FP8_BYTES 1.0
/* A step's attention is causal-shaped when its scored pairs are under this share of
 * sum(sq*sk): midway between an unmasked batch (all of them) and square causal sequences
 * (sq = sk: half of them); chunks over a long cached prefix score nearly all. */
#define CAUSAL_PAIRS_SHARE 0.75

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

/* One layer's attention launch: q query tokens against kv KV tokens, pairs score pairs;
 * its ceiling's shape (roofline.attention_ceiling): a query row sees kv_len keys on average
 * (the step's sum(sq*sk) over its query tokens: one sequence's length when all are alike). */
static void attn_cost(const te_model *m, double q, double kv, double pairs, double kv_len,
                      bool causal, bool fp8, an_op_cost *cost) {
  const double act = m->weight_dtype->bytes, kvb = fp8 ? FP8_BYTES : act;
  const double qd = (double)(m->heads * m->head_dim), kvd = (double)(m->kv_heads * m->head_dim);
  cost->flops = FLOPS_PER_PAIR_PER_DIM * qd * pairs;
  /* K and V of every KV token read; the queries read and the outputs written */
  cost->bytes = kv * 2.0 * kvd * kvb + q * 2.0 * qd * act;
  cost->dtype = m->weight_dtype;
  cost->attn_head_dim = (double)m->head_dim;
  cost->attn_kv_len = kv_len;
  cost->attn_causal = causal;
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
  const double qk = x->attn_qk / n, kv_len = q > 0 ? qk / q : 0;
  const bool causal = pairs < CAUSAL_PAIRS_SHARE * qk;
  plan->model = m;
  attn_cost(m, q, kv, pairs, kv_len, causal, fp8 != 0, &plan->cost);
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
    attn_cost(m, q, why->window_kv_tokens, why->window_pairs, kv_len < w ? kv_len : w, causal,
              fp8 != 0, &plan->window_cost);
  }
  return true;
}

void an_attn_launch_cost(const an_attn_plan *plan, size_t i, an_op_cost *out) {
  const te_model *m = plan->model;
  size_t layer = m->layers > 0 ? i % (size_t)m->layers : 0;
  *out = layer_slides(m, layer) ? plan->window_cost : plan->cost;
}

/* ------------------------------------------------------------------ shape ceiling */

static int cmp_point(const void *a, const void *b) {
  const an_attn_point *x = a, *y = b;
  if (x->causal != y->causal) return x->causal ? -1 : 1;
  if (x->head_dim != y->head_dim) return x->head_dim < y->head_dim ? -1 : 1;
  return (x->kv_len > y->kv_len) - (x->kv_len < y->kv_len);
}

bool an_attn_ceiling_make(const te_number_map *m, an_attn_point **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!m->n) return true;
  an_attn_point *p = calloc(m->n, sizeof *p);
  if (!p) return false;
  size_t k = 0;
  for (size_t i = 0; i < m->n; i++) { /* "causal/64/512": the table's choices hold the form */
    const char *key = m->keys[i], *slash = strchr(key, '/');
    if (!slash) continue;
    char *end = NULL;
    double d = strtod(slash + 1, &end);
    if (!end || *end != '/') continue;
    static const char causal[] = "causal/";
    bool c = !strncmp(key, causal, sizeof causal - 1);
    p[k++] = (an_attn_point){c, d, strtod(end + 1, NULL), m->values[i]};
  }
  qsort(p, k, sizeof *p, cmp_point);
  *out = p;
  *n = k;
  return true;
}

double an_attn_ceiling_frac(const an_attn_point *p, size_t n, bool causal, double head_dim,
                            double kv_len, an_attn_at *at) {
  double below = 0, least = 0; /* the curve: the largest head_dim at or below it, else the
                                  smallest */
  for (size_t i = 0; i < n; i++) {
    if (p[i].causal != causal) continue;
    if (p[i].head_dim <= head_dim && p[i].head_dim > below) below = p[i].head_dim;
    if (least == 0 || p[i].head_dim < least) least = p[i].head_dim;
  }
  double dim = below > 0 ? below : least;
  const an_attn_point *lo = NULL, *hi = NULL; /* the points around kv_len on that curve */
  double shortest = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i].causal != causal || p[i].head_dim != dim) continue;
    if (shortest == 0) shortest = p[i].kv_len; /* sorted by length within a curve */
    if (p[i].kv_len <= kv_len) lo = &p[i];
    if (p[i].kv_len >= kv_len && !hi) hi = &p[i];
  }
  if (at) *at = (an_attn_at){dim, shortest};
  if (!lo || !hi) return lo ? lo->frac : hi ? hi->frac : 0;
  if (hi->kv_len <= lo->kv_len) return lo->frac;
  double t = log2(kv_len / lo->kv_len) / log2(hi->kv_len / lo->kv_len);
  return lo->frac + t * (hi->frac - lo->frac);
}
