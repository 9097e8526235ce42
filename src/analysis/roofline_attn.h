/*
 * analysis/roofline_attn.h - the cost of a paged / flash attention launch (decode and
 * extend) from the attention sums the step annotation states and the model's heads,
 * KV heads and head_dim (docs/roofline.md "Attention from the step's sums"). Private to
 * the roofline.
 *
 * Under graph replay an attention launch has no shapes, and even an eager paged-attention
 * op's Input Dims show the whole KV pool, not the sequence lengths. vLLM's step annotation
 * (execute_<T>_context_<n>(sq..sk..sqsq..sqsk..)_generation_<n>(...), kept by SGLang on
 * ROCm too) states per phase the sums over sequences of the query tokens sq, the KV tokens
 * sk, sq^2 and sq*sk: one attention launch (one layer) reads sum(sk) KV tokens of
 * 2 x kv_heads x head_dim values, reads the queries and writes the outputs of sum(sq)
 * tokens of heads x head_dim values, and scores sum(sq*sk) - sum(sq*(sq-1))/2 causal
 * (query, key) pairs, 4 x heads x head_dim FLOPs each (QK^T and PV). The launches costed
 * are the kernels of the matcher attention_kv_read (one a layer a step: the one that reads
 * the KV cache; a split-KV reduce kernel beside it is not); their count must be layers x
 * steps. Any missing fact leaves them without a roofline and names the fact.
 *
 * A model with sliding-window layers (te_model.layer_cycle, sliding_layers) costs the i-th
 * launch of a step as its layer (i mod layers): a sliding layer reads at most
 * min(sum sk, sum sq + sequences x (window - 1)) KV tokens and scores at most
 * min(pairs, sum sq x window) pairs. The sums give no sequence's own length, so those are
 * upper estimates: the bytes and FLOPs never understate, nor the achieved rate.
 *
 * Ownership: the plan borrows the rules' model.
 */
#ifndef TRIAGE_ANALYSIS_ROOFLINE_ATTN_H
#define TRIAGE_ANALYSIS_ROOFLINE_ATTN_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "analysis/op_cost.h"
#include "triage/rules.h"

/* The matchers naming the kernels that read the KV cache once a layer, and those that
 * read an FP8 KV cache (one byte a value instead of the model's format). */
#define AN_ATTN_KERNEL_MATCHER "attention_kv_read"
#define AN_ATTN_FP8_MATCHER "attention_kv_fp8"

typedef struct an_attn_plan {
  const te_model *model;
  an_op_cost cost;        /* of one launch of a full layer: one layer of the mean step */
  an_op_cost window_cost; /* of one launch of a sliding layer (the model's window) */
} an_attn_plan;

/* One point of roofline.attention_ceiling: the best published forward rate at a masking,
 * head_dim and KV length, as a fraction of the format's dense peak. */
typedef struct an_attn_point {
  bool causal;
  double head_dim, kv_len, frac;
} an_attn_point;

/* The points of a ceiling map (the device's attention_ceiling, else the settings'
 * roofline.attention_ceiling), parsed once (keys "causal/64/512", validated against
 * TE_ATTENTION_CEILING_POINTS), sorted by masking, head_dim and length; *n their count.
 * NULL with *n 0 when the map is empty; false when out of memory. Free with free(). */
bool an_attn_ceiling_make(const te_number_map *m, an_attn_point **out, size_t *n);

/* Where a shape's fraction was read: the curve's head_dim and its shortest KV length (a
 * shape below either takes a figure its source measured at a larger shape, which a smaller
 * one does not exceed: an upper bound). */
typedef struct an_attn_at {
  double curve_dim, shortest;
} an_attn_at;

/* The fraction at an attention shape: the curve of its masking at the largest head_dim at
 * or below it (else the smallest), its KV length interpolated in log2 between that curve's
 * points and clamped to its ends; 0 when no curve. at (optional) gets the curve read. */
double an_attn_ceiling_frac(const an_attn_point *p, size_t n, bool causal, double head_dim,
                            double kv_len, an_attn_at *at);

/* The cost of the i-th attention launch of the block (launch order: layer i mod layers). */
void an_attn_launch_cost(const an_attn_plan *plan, size_t i, an_op_cost *out);

/* Whether a kernel (its full name) is an attention launch the plan costs. */
bool an_attn_kernel(const te_rules *rules, const char *name);

/* The plan of a stage block: model m (NULL: none identified), the stage's facts x with
 * steps of this block's trace, its attention launches (fp8: how many read an FP8 KV
 * cache). True when every fact is there; why gets the basis, or the fact missing (its
 * ident left empty: the caller knows how m was identified). */
bool an_attn_plan_make(const te_model *m, const an_exec_facts *x, size_t steps, size_t launches,
                       size_t fp8, an_attn_plan *plan, an_attn_check *why);

#endif
