/*
 * analysis/op_cost.h - FLOPs and bytes of one CPU op from the shapes its trace event
 * recorded (Input Dims, Input type, Concrete Inputs: tr_event_arg), by the op's cost
 * model from the rule packs (te_op_cost, docs/roofline.md "Op cost models").
 *
 * The args are untrusted text: anything that does not parse, a tensor of the wrong rank,
 * a negative or absurd size (util/limits.h AN_MAX_*), dimensions that do not agree
 * (A's K against B's K), a format no dtype names: the op gets no cost (AN_COST_BAD), never
 * a figure built on a guess.
 *
 * Ownership: nothing is allocated; the result's dtype is borrowed from the rules.
 */
#ifndef TRIAGE_ANALYSIS_OP_COST_H
#define TRIAGE_ANALYSIS_OP_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triage/rules.h"

typedef enum an_cost_status {
  AN_COST_OK = 0,
  AN_COST_NO_SHAPES = 1, /* the op has no Input Dims (recorded without record_shapes) */
  AN_COST_BAD = 2        /* shapes that cannot be costed (see above) */
} an_cost_status;

typedef struct an_op_cost {
  double flops, bytes;
  const te_dtype *dtype; /* the format the FLOPs run in (its peak class); NULL: no FLOPs */
  /* an attention op's shape (its roofline.attention_ceiling point): head_dim (0: not an
   * attention op with shapes), KV length, masking */
  double attn_head_dim, attn_kv_len;
  bool attn_causal;
} an_op_cost;

/* The cost of one op by model from its args (NULL or "" when absent): dims is Input
 * Dims, types Input type, concrete Concrete Inputs, each the compact JSON tr_event_arg
 * gives; shape the Concrete Inputs of the op's child a gather model names (shape_from;
 * NULL for other models). */
an_cost_status an_op_cost_eval(const te_rules *rules, const te_op_cost *model, const char *dims,
                               const char *types, const char *concrete, const char *shape,
                               an_op_cost *out);

/* The dimensions of input i of an Input Dims text into dims (at most cap); *rank gets
 * their count. False when the text does not parse or input i is not a flat list of sane
 * dimensions (a tensor list, a negative or absurd size). */
bool an_op_input_dims(const char *dims, size_t i, int64_t *out, size_t cap, size_t *rank);

/* The geometry of a gemm-model op (A (..., M, K) x B): M with A's leading dimensions
 * folded, N, K, the batch (1 unless B is 3-D) and A's format. */
typedef struct an_gemm_shape {
  double batch, m, n, k;
  const te_dtype *dtype;
} an_gemm_shape;

/* What the fusion table reads of one op's shapes (the GEMM merges, fuse_merge.c; the
 * shape gate, fuse_context.c), from one parse of its args. */
typedef struct an_op_shape {
  /* Input Dims parse: n_elems inputs, the element count of each tensor input (a tensor
   * list or a scalar counts 0; an input of no known format counts) */
  bool parsed;
  size_t n_elems;
  /* Input type parses too, model is a gemm model and the shapes multiply */
  bool is_gemm;
  an_gemm_shape gemm;
  /* the last dimension of the smallest tensor input of a known format (a norm's weight,
   * the head dim of a per-head norm) and its format; NULL: no such tensor, or the args do
   * not parse */
  double last_dim;
  const te_dtype *small_dtype;
} an_op_shape;

/* The shape facts of one op from its Input Dims dims and Input type types (NULL or ""
 * when absent) and its cost model (NULL: none), the element counts into elems (room for
 * AN_MAX_OP_INPUTS). Anything that does not parse leaves its facts unset. False only when
 * out of memory. */
bool an_op_shape_read(const te_rules *rules, const te_op_cost *model, const char *dims,
                      const char *types, an_op_shape *out, double *elems);

#endif
