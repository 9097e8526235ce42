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
 * folded, N, K, the batch (1 unless B is 3-D) and A's format. False for another model
 * kind or shapes that do not multiply (as an_op_cost_eval). */
typedef struct an_gemm_shape {
  double batch, m, n, k;
  const te_dtype *dtype;
} an_gemm_shape;
bool an_op_gemm_shape(const te_rules *rules, const te_op_cost *model, const char *dims,
                      const char *types, an_gemm_shape *out);

/* The element count of every tensor input of an Input Dims text (a tensor list or a
 * scalar counts 0) into out (at most cap); the count in *n. False when the text does not
 * parse (absent, malformed, more than cap inputs). */
bool an_op_input_elems(const char *dims, double *out, size_t cap, size_t *n);

/* The last dimension of an op's smallest tensor input (the smallest last dimension among
 * its tensors of a known format: a norm's weight, the head dim of a per-head norm) and
 * that tensor's format. False when the args do not parse or hold no such tensor. */
bool an_op_smallest_tensor(const te_rules *rules, const char *dims, const char *types,
                           double *last_dim, const te_dtype **dtype);

#endif
