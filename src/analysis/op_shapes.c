/*
 * analysis/op_shapes.c - launching ops' shapes read once per distinct args (op_shapes.h).
 */
#include "analysis/op_shapes.h"

#include <stdlib.h>
#include <string.h>

#include "triage/hash.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/vec.h"

typedef struct shape_entry {
  size_t view;
  tr_str name, dims, types;
  an_op_shape shape;
  size_t elem_at; /* its element counts in the pool */
} shape_entry;

struct an_op_shapes {
  const te_rules *rules;
  ut_u64map slot; /* mixed key -> entry index */
  shape_entry *v;
  size_t n, cap;
  double *pool; /* every entry's element counts */
  size_t n_pool, cap_pool;
  an_op_shape scratch; /* a hash collision's shapes: read, not remembered */
  double scratch_elems[AN_MAX_OP_INPUTS];
};

an_op_shapes *an_op_shapes_create(const te_rules *rules) {
  an_op_shapes *m = calloc(1, sizeof *m);
  if (m) m->rules = rules;
  return m;
}

void an_op_shapes_destroy(an_op_shapes *m) {
  if (!m) return;
  ut_u64map_free(&m->slot);
  free(m->v);
  free(m->pool);
  free(m);
}

static uint64_t shape_key(size_t view, tr_str name, tr_str dims, tr_str types) {
  uint64_t h = te_hash_mix(((uint64_t)name << 32 | dims) * 0x9e3779b97f4a7c15ull);
  return te_hash_mix(h ^ (((uint64_t)view << 32 | types) * 0xc2b2ae3d27d4eb4full));
}

/* Reads op's shapes into out and elems; false when out of memory. */
static bool read_shape(const an_op_shapes *m, const tr_trace *t, const tr_event *op,
                       an_op_shape *out, double *elems) {
  const te_op_cost *model = te_rules_op_cost(m->rules, tr_str_get(t, op->name));
  const char *dims = tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_DIMS));
  const char *types = tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_TYPE));
  return an_op_shape_read(m->rules, model, dims, types, out, elems);
}

const an_op_shape *an_op_shapes_get(an_op_shapes *m, size_t view, const tr_trace *t,
                                    const tr_event *op, const double **elems) {
  tr_str dims = tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_DIMS);
  tr_str types = tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_TYPE);
  uint64_t key = shape_key(view, op->name, dims, types), at;
  if (ut_u64map_get(&m->slot, key, &at)) {
    const shape_entry *e = &m->v[at];
    if (e->view == view && e->name == op->name && e->dims == dims && e->types == types) {
      *elems = m->pool + e->elem_at;
      return &e->shape;
    }
    *elems = m->scratch_elems; /* a hash collision: read, not remembered */
    return read_shape(m, t, op, &m->scratch, m->scratch_elems) ? &m->scratch : NULL;
  }
  double *pool = ut_grow(m->pool, &m->cap_pool, m->n_pool + AN_MAX_OP_INPUTS, sizeof *pool);
  if (pool) m->pool = pool;
  shape_entry *v = pool ? ut_grow(m->v, &m->cap, m->n + 1, sizeof *v) : NULL;
  if (!v) return NULL;
  m->v = v;
  shape_entry *e = &m->v[m->n];
  *e = (shape_entry){view, op->name, dims, types, {0}, m->n_pool};
  if (!read_shape(m, t, op, &e->shape, m->pool + m->n_pool) || !ut_u64map_put(&m->slot, key, m->n))
    return NULL;
  m->n++;
  m->n_pool += e->shape.n_elems;
  *elems = m->pool + e->elem_at;
  return &e->shape;
}
