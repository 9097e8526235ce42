/*
 * analysis/op_shapes.h - the shapes of launching ops (op_cost.h an_op_shape), read once
 * per distinct (op name, Input Dims, Input type) of each trace and shared by the passes
 * of one stage that read them: the fusion table's shape gate (fuse_context.c) and its
 * GEMM merges (fuse_merge.c). Ops repeat their shapes step after step, so most kernels
 * find their op's shapes already read.
 *
 * Ownership: the memo owns its records; an_op_shapes_get's results are borrowed from it
 * until the next call or an_op_shapes_destroy. The rules are borrowed.
 */
#ifndef TRIAGE_ANALYSIS_OP_SHAPES_H
#define TRIAGE_ANALYSIS_OP_SHAPES_H

#include <stddef.h>

#include "analysis/op_cost.h"
#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_op_shapes an_op_shapes;

/* An empty memo, or NULL when out of memory. */
an_op_shapes *an_op_shapes_create(const te_rules *rules);
void an_op_shapes_destroy(an_op_shapes *m);

/* The shapes of CPU op `op` of trace t (view: the trace's index among those the memo
 * serves, since string ids are per trace) and, in *elems, its inputs' element counts
 * (shape->n_elems of them). NULL when out of memory. */
const an_op_shape *an_op_shapes_get(an_op_shapes *m, size_t view, const tr_trace *t,
                                    const tr_event *op, const double **elems);

#endif
