/*
 * analysis/roofline.c - per-row rooflines from per-launch costs (roofline.h,
 * docs/roofline.md).
 *
 * A launch's cost comes from the CPU op that launched it: the op with the kernel's
 * External id (through its correlation when the kernel has none) that started last
 * before it, costed by the op's model from its shapes. Ops repeat the same shapes, so
 * each trace remembers the cost of every (op name, Input Dims, Input type, Concrete
 * Inputs) it met. A launch with no op (graph replay) takes the mean cost per launch of
 * the mapping trace's launches of the same kernel in the same stage.
 */
#include "analysis/roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kmap_internal.h"
#include "analysis/op_cost.h"
#include "analysis/op_nest.h"
#include "analysis/roofline_attn.h"
#include "analysis/roofline_model.h"
#include "analysis/roofline_moe.h"
#include "triage/hash.h"
#include "util/map.h"
#include "util/sort.h"
#include "util/units.h"
#include "util/vec.h"

#define N_KINDS 5

static const char *const k_families[N_KINDS] = {"gemm", "grouped_gemm", "attention", "elementwise",
                                                "gather"};

/* Why a launch has no cost (an_roofline_counts). */
typedef enum reason {
  R_OK = 0,
  R_NO_OP,
  R_NO_SHAPES,
  R_NO_MODEL,
  R_BAD,
  R_NO_PEAK,
  R_SECONDARY /* another kernel of its op carries the op's cost */
} reason;

/* The cost of one launch, and the op and Input Dims it came from (0: from the mapping). */
typedef struct launch {
  an_op_cost cost;
  te_cost_kind kind;
  tr_str op, dims;
  te_peak peak; /* its format's peak class (launch_peak; TE_PEAK_NONE: none) */
} launch;

/* One remembered op cost of a trace, under its four string ids. */
typedef struct memo_entry {
  tr_str name, dims, types, concrete;
  reason why;
  launch l;
} memo_entry;

typedef struct memo {
  ut_u64map slot; /* mixed key -> entry index */
  memo_entry *v;
  size_t n, cap;
} memo;

/* What the run knows while costing; nest: the time-nesting index of one trace (its
 * view's, asked when a kernel of it first needs it, op_nest.h); sides: the views. */
typedef struct ctx {
  const te_rules *rules;
  const te_device *dev;
  const te_matcher *tf32; /* matcher tf32_matmul (NULL: the packs have none) */
  bool nomem;
  const an_roofline_side *sides[2];
  const an_op_nest *nest;
  const tr_trace *nest_trace;
} ctx;

/* ------------------------------------------------------------------ device */

static double gib_of(int64_t bytes) {
  return bytes == TR_NO_ID || bytes < 0 ? -1.0 : (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

/* The formal traces' first device that states a name or an architecture. */
static const te_device *find_device(const an_roofline_side *fm, const te_rules *rules,
                                    an_strtab *st, an_roofline_device *out) {
  out->arch = out->sms = -1;
  for (size_t i = 0; i < fm->n; i++) {
    const tr_trace *t = fm->views[i].trace;
    const tr_trace_meta *m = tr_trace_meta_get(t);
    for (size_t d = 0; d < m->n_devices; d++) {
      const tr_device *dv = &m->devices[d];
      if (!dv->name && dv->compute_major == TR_NO_ID) continue;
      const char *name = tr_str_get(t, dv->name);
      out->gpu = an_strtab_cstr(st, name);
      if (dv->compute_major != TR_NO_ID && dv->compute_minor >= 0 && dv->compute_minor < 10)
        out->arch = (long)(dv->compute_major * 10 + dv->compute_minor);
      if (dv->num_sms != TR_NO_ID) out->sms = (long)dv->num_sms;
      return te_rules_device(rules, name, out->arch, out->sms, gib_of(dv->total_mem));
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ one launch */

/* The time-nesting index of trace t, its view's (NULL out of memory). */
static const an_op_nest *nest_of(ctx *c, const tr_trace *t) {
  if (c->nest_trace != t) {
    c->nest_trace = t;
    c->nest = NULL;
    for (size_t s = 0; s < 2 && !c->nest; s++)
      for (size_t i = 0; c->sides[s] && i < c->sides[s]->n && !c->nest; i++)
        if (c->sides[s]->views[i].trace == t &&
            !(c->nest = an_trace_view_ops(&c->sides[s]->views[i])))
          c->nomem = true;
  }
  return c->nest;
}

static uint64_t memo_key(tr_str a, tr_str b, tr_str c, tr_str d) {
  uint64_t h = te_hash_mix(((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull);
  return te_hash_mix(h ^ (((uint64_t)c << 32 | d) * 0xc2b2ae3d27d4eb4full));
}

/* The Concrete Inputs of op's child that a gather model reads its output's shape from
 * (model shape_from), or NULL. */
static const char *shape_child(ctx *c, const tr_trace *t, const te_op_cost *model,
                               const tr_event *op) {
  const an_op_nest *nest = model->shape_from ? nest_of(c, t) : NULL;
  const tr_event *child = nest ? an_op_nest_child(nest, op, model->shape_from) : NULL;
  return child ? tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, child, TR_ARG_CONCRETE_INPUTS))
               : NULL;
}

static reason cost_of_op(ctx *c, const tr_trace *t, const tr_event *op, const te_op_cost *model,
                         launch *l) {
  l->op = op->name;
  l->dims = tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_DIMS);
  if (!model) return R_NO_MODEL;
  const char *dims = tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_DIMS));
  const char *types = tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_TYPE));
  const char *conc = tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_CONCRETE_INPUTS));
  l->kind = model->kind;
  const char *shape = shape_child(c, t, model, op);
  an_cost_status st = an_op_cost_eval(c->rules, model, dims, types, conc, shape, &l->cost);
  return st == AN_COST_OK ? R_OK : st == AN_COST_NO_SHAPES ? R_NO_SHAPES : R_BAD;
}

/* cost_of_op through the trace's memo (not for a model whose output's shape is a child
 * op's: the op's own args do not key it). */
static reason op_cost(ctx *c, memo *m, const tr_trace *t, const tr_event *op, launch *l) {
  tr_str k[4] = {op->name, tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_DIMS),
                 tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_INPUT_TYPE),
                 tr_event_arg(t, TR_KIND_CPU_OP, op, TR_ARG_CONCRETE_INPUTS)};
  uint64_t key = memo_key(k[0], k[1], k[2], k[3]), at;
  /* an entry is remembered only for a name whose model takes no child's shape, so a hit
   * answers before the model is looked up by name (a search of the packs' op names: a
   * third of this function's cost on hta) */
  bool hit = ut_u64map_get(&m->slot, key, &at);
  if (hit) {
    const memo_entry *e = &m->v[at];
    if (e->name == k[0] && e->dims == k[1] && e->types == k[2] && e->concrete == k[3]) {
      *l = e->l;
      return e->why;
    }
  }
  const te_op_cost *model = te_rules_op_cost(c->rules, tr_str_get(t, op->name));
  /* a hash collision is not remembered either */
  if (hit || (model && model->shape_from)) return cost_of_op(c, t, op, model, l);
  reason why = cost_of_op(c, t, op, model, l);
  memo_entry *v = ut_grow(m->v, &m->cap, m->n + 1, sizeof *v);
  if (!v || !ut_u64map_put(&m->slot, key, m->n)) {
    if (v) m->v = v;
    c->nomem = true;
    return why;
  }
  m->v = v;
  m->v[m->n++] = (memo_entry){k[0], k[1], k[2], k[3], why, *l};
  return why;
}

static void memo_free(memo *m) {
  ut_u64map_free(&m->slot);
  free(m->v);
  memset(m, 0, sizeof *m);
}

/* The launching op of each kernel of one view (an_trace_view_stage_ops: found once per
 * view, and the fusion table asked first), and which kernels are OP_SECONDARY: another
 * kernel of their op carries the op's cost. The kernels one op launched share its cost: it
 * goes to the longest (a GEMM's, not the workspace memset's; the first among equals). */
#define OP_NONE AN_NO_OP
#define OP_SECONDARY (UINT32_MAX - 1) /* positions stay below it: TR_MAX_EVENTS */

typedef struct view_ops {
  const tr_event *ops;  /* tr_trace_events(TR_KIND_CPU_OP) */
  const uint32_t **pos; /* per stage block: its kernels' op positions; NULL out of memory */
  size_t *first;        /* per stage block: the bit of its first kernel in secondary */
  uint64_t *secondary;  /* bit per kernel of the view: OP_SECONDARY */
  /* by kernel name id: 0 unasked, 1 no, 2 an attention kernel (an array where a map's
   * lookup took most of view_attn's time: 4.7 M instructions on hta_async x 2) */
  uint8_t *attn;
  size_t n_attn;
} view_ops;

/* The entry of kernel i of stage s. */
static uint32_t view_op_at(const view_ops *vo, size_t s, size_t i) {
  if (!vo->pos) return OP_NONE;
  size_t bit = vo->first[s] + i;
  return (vo->secondary[bit >> 6] >> (bit & 63)) & 1u ? OP_SECONDARY : vo->pos[s][i];
}

/* The kernel behind bit `bit` of secondary (stage blocks are few: a scan). */
static const tr_event *view_kernel_at_bit(const an_trace_view *v, const view_ops *vo, size_t bit) {
  size_t s = 0;
  while (s + 1 < v->n_stages && vo->first[s + 1] <= bit) s++;
  return v->stages[s].kernels[bit - vo->first[s]];
}

/* Marks OP_SECONDARY every kernel whose op launched a longer one (or an equal one first).
 * The kernels with an op, as (op position, bit) in one 64-bit key each, sorted: each op's
 * kernels are then a run in bit order, whose first longest one stays. 8 bytes a kernel;
 * a map from op to its longest kernel was 16-32 bytes a kernel at the roofline's peak
 * (hf50: 3 MB). False when out of memory. */
static bool view_ops_mark_secondary(const an_trace_view *v, view_ops *vo) {
  size_t n = 0,
         n_bits = v->n_stages ? vo->first[v->n_stages - 1] + v->stages[v->n_stages - 1].n : 0;
  if (n_bits > UINT32_MAX) return false;
  for (size_t s = 0; s < v->n_stages; s++)
    for (size_t i = 0; i < v->stages[s].n; i++) n += vo->pos[s][i] != OP_NONE;
  uint64_t *by_op = malloc((n ? n : 1) * sizeof *by_op);
  if (!by_op) return false;
  n = 0;
  for (size_t s = 0; s < v->n_stages; s++)
    for (size_t i = 0; i < v->stages[s].n; i++)
      if (vo->pos[s][i] != OP_NONE) by_op[n++] = (uint64_t)vo->pos[s][i] << 32 | (vo->first[s] + i);
  ut_sort_u64(by_op, n, NULL);
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    size_t best = lo;
    double best_dur = tr_event_dur(v->trace, view_kernel_at_bit(v, vo, by_op[lo] & UINT32_MAX));
    for (hi = lo + 1; hi < n && by_op[hi] >> 32 == by_op[lo] >> 32; hi++) {
      double d = tr_event_dur(v->trace, view_kernel_at_bit(v, vo, by_op[hi] & UINT32_MAX));
      if (d > best_dur) best = hi, best_dur = d;
    }
    for (size_t j = lo; j < hi; j++) {
      size_t bit = by_op[j] & UINT32_MAX;
      if (j != best) vo->secondary[bit >> 6] |= 1ull << (bit & 63);
    }
  }
  free(by_op);
  return true;
}

static void view_ops_free(view_ops *vo) {
  free(vo->pos);
  free(vo->first);
  free(vo->secondary);
  free(vo->attn);
  memset(vo, 0, sizeof *vo);
}

static void view_ops_build(ctx *c, const an_trace_view *v, view_ops *vo) {
  size_t n = 0, n_ops, nb = v->n_stages ? v->n_stages : 1;
  vo->ops = tr_trace_events(v->trace, TR_KIND_CPU_OP, &n_ops);
  vo->first = malloc(nb * sizeof *vo->first);
  vo->pos = calloc(nb, sizeof *vo->pos);
  bool ok = vo->first && vo->pos;
  for (size_t s = 0; ok && s < v->n_stages; s++) {
    vo->first[s] = n, n += v->stages[s].n;
    ok = (vo->pos[s] = an_trace_view_stage_ops(v, s)) != NULL;
  }
  ok = ok && (vo->secondary = calloc((n >> 6) + 1, sizeof *vo->secondary));
  if (!ok || !view_ops_mark_secondary(v, vo)) {
    c->nomem = true;
    free(vo->pos); /* no op known: every launch reads as R_NO_OP */
    vo->pos = NULL;
  }
  /* the nest stays: a gather model's output shape (shape_child) asks it again */
}

/* Whether kernel k of the view is an attention kernel (an_attn_kernel: a pattern match),
 * asked once per name: several passes ask it of every kernel. */
static bool view_attn(ctx *c, view_ops *vo, const tr_trace *t, const tr_event *k) {
  if (!vo->attn && (vo->n_attn = tr_trace_string_count(t)) > 0 &&
      !(vo->attn = calloc(vo->n_attn, 1)))
    c->nomem = true;
  uint8_t *x = vo->attn && k->name < vo->n_attn ? &vo->attn[k->name] : NULL;
  if (x && *x) return *x == 2;
  bool yes = an_attn_kernel(c->rules, tr_str_get(t, k->name));
  if (x) *x = yes ? 2 : 1;
  return yes;
}

/* The launch's cost from its own CPU op (kernel i of the view's stage s). */
static reason launch_cost(ctx *c, memo *m, const view_ops *vo, const an_trace_view *v, size_t s,
                          size_t i, launch *l) {
  uint32_t at = view_op_at(vo, s, i);
  if (at == OP_NONE) return R_NO_OP;
  if (at == OP_SECONDARY) return R_SECONDARY;
  return op_cost(c, m, v->trace, &vo->ops[at], l);
}

/* ------------------------------------------------------------------ mapping costs */

/* Mean cost per launch of one kernel in one stage of the mapping traces. */
typedef struct mapped {
  double flops, bytes;
  size_t n;
  const te_dtype *dtype;
  te_cost_kind kind;
} mapped;

typedef struct mapping_costs {
  const an_kernel_map *kmap; /* the mapping's: its canonical name ids key the costs */
  ut_strmap stages;          /* stage id -> stage index */
  ut_u64map at;              /* stage index << 32 | name id -> index in v */
  mapped *v;
  size_t n, cap;
  bool one_stage; /* the mapping traces hold one stage: its costs serve every formal stage */
  const char *stage;
} mapping_costs;

/* The key of (stage, name id), the stage's index added when add; false when the stage is
 * unknown (not add) or out of memory. Ids, not the names' text: a text key was hashed a byte
 * at a time per launch, and kernel names run to hundreds of bytes. */
static bool mapped_key(mapping_costs *mc, const char *stage, uint32_t name, bool add,
                       uint64_t *key) {
  long si = add ? ut_strmap_put(&mc->stages, stage, strlen(stage))
                : ut_strmap_find(&mc->stages, stage, strlen(stage));
  *key = (uint64_t)si << 32 | name;
  return si >= 0 && name != AN_KMAP_NO_NAME;
}

static void mapped_add(ctx *c, mapping_costs *mc, const char *stage, uint32_t name,
                       const launch *l) {
  uint64_t key, at;
  if (!mapped_key(mc, stage, name, true, &key)) {
    c->nomem = true;
    return;
  }
  if (!ut_u64map_get(&mc->at, key, &at)) {
    mapped *v = ut_grow_zeroed(mc->v, &mc->cap, mc->n + 1, sizeof *v);
    if (!v || !ut_u64map_put(&mc->at, key, mc->n)) {
      if (v) mc->v = v;
      c->nomem = true;
      return;
    }
    mc->v = v;
    at = mc->n++;
  }
  mapped *e = &mc->v[at];
  if (!e->n) e->dtype = l->cost.dtype, e->kind = l->kind;
  if (e->dtype != l->cost.dtype) return; /* launches of another format: not mixed in */
  e->flops += l->cost.flops;
  e->bytes += l->cost.bytes;
  e->n++;
}

/* The mapping's mean costs. keep: the mapping's view ops are kept there (the formal side
 * reads the same views), else freed view by view. */
static void mapping_build(ctx *c, const an_roofline_side *mp, mapping_costs *mc, view_ops *keep) {
  memo m = {0};
  view_ops vo = {0};
  mc->kmap = mp->kmap;
  mc->one_stage = true;
  for (size_t i = 0; i < mp->n; i++, memo_free(&m)) {
    const an_trace_view *v = &mp->views[i];
    view_ops_build(c, v, &vo);
    for (size_t s = 0; s < v->n_stages; s++) {
      const an_stage_kernels *sk = &v->stages[s];
      if (mc->stage && strcmp(mc->stage, sk->stage->id)) mc->one_stage = false;
      mc->stage = sk->stage->id;
      for (size_t k = 0; k < sk->n; k++) {
        launch l;
        if (launch_cost(c, &m, &vo, v, s, k, &l) != R_OK) continue;
        uint32_t name = an_kernel_map_name_id(mp->kmap, i, v->trace, sk->kernels[k]->name);
        if (name != AN_KMAP_NO_NAME) mapped_add(c, mc, sk->stage->id, name, &l);
      }
    }
    if (keep)
      keep[i] = vo, memset(&vo, 0, sizeof vo);
    else
      view_ops_free(&vo);
  }
}

/* The entry of (stage, name id) among the mapping's costs, or -1. */
static long mapped_at(mapping_costs *mc, const char *stage, uint32_t name) {
  uint64_t key, at;
  return mapped_key(mc, stage, name, false, &key) && ut_u64map_get(&mc->at, key, &at) ? (long)at
                                                                                      : -1;
}

/* The mapping's mean cost for a formal kernel of stage `stage`, or false. */
static bool mapped_cost(mapping_costs *mc, const char *stage, const char *name, launch *l) {
  if (!mc->v) return false;
  uint32_t id = an_kernel_map_find_name(mc->kmap, name, strlen(name));
  long at = mapped_at(mc, stage, id);
  if (at < 0 && mc->one_stage && mc->stage) at = mapped_at(mc, mc->stage, id);
  if (at < 0 || !mc->v[at].n) return false;
  const mapped *e = &mc->v[at];
  l->cost = (an_op_cost){e->flops / (double)e->n, e->bytes / (double)e->n, e->dtype, 0, 0, false};
  l->kind = e->kind;
  l->op = l->dims = 0;
  return true;
}

static void mapping_free(mapping_costs *mc) {
  ut_strmap_free(&mc->stages);
  ut_u64map_free(&mc->at);
  free(mc->v);
  memset(mc, 0, sizeof *mc);
}

/* ------------------------------------------------------------------ rows */

/* One (op, Input Dims) of a row, in one view's trace. */
typedef struct shape_acc {
  size_t view;
  tr_str op, dims;
  size_t launches;
  double flops, bytes, time;
} shape_acc;

/* The launches of a row that did the same work (equal bytes and FLOPs): the latency floor
 * is weighed per launch, and launches of one work share their time at the attainable rate. */
typedef struct cost_acc {
  double flops, bytes;
  size_t launches;
} cost_acc;

/* What a row's launches with shapes add up to. */
typedef struct row_acc {
  double flops, bytes, time, bound, mem_us, comp_us;
  double steps_time; /* of time, inside the counted steps */
  size_t launches, mapped, modelled, summed;
  shape_acc *shapes;
  size_t n_shapes, cap_shapes;
  cost_acc *costs;
  size_t n_costs, cap_costs;
  ut_u64map cost_of; /* hash of (bytes, FLOPs), probed linearly -> index in costs */
  double kind_time[N_KINDS];
  double peak_flops[TE_PEAK_COUNT]; /* FLOPs per peak class: the row's format is the largest */
  /* the fastest launch that is evidence of a rate on its own (roofline.comparable_launch_us,
   * shapes from its own op): TB/s, and TFLOP/s of each peak class (as the record's rates
   * are computed, so a one-launch row's equals its own) */
  double launch_tbs, launch_tflops[TE_PEAK_COUNT];
  double launch_tbs_us, launch_tflops_us[TE_PEAK_COUNT]; /* those launches' times */
  /* attention launches with a shape and a roofline.attention_ceiling point: their FLOPs,
   * and those FLOPs times the point's fraction, head_dim, KV length, the curve's head_dim
   * and shortest length; causal ones */
  double ceil_flops, ceil_frac, ceil_dim, ceil_kv, ceil_causal, ceil_curve_dim, ceil_shortest;
} row_acc;

/* The bound of one launch; R_NO_PEAK when its FLOPs have no peak on the device. Matrix
 * work runs at its format's peak; elementwise FLOPs run on the vector units, at the FP32
 * peak (their bound is nearly always the memory term). */
static reason launch_bound(const te_device *dev, const launch *l, double *mem_us, double *comp_us) {
  *mem_us = l->cost.bytes / (dev->hbm_tbs * UT_US_PER_S);
  *comp_us = 0;
  if (l->cost.flops <= 0) return R_OK;
  te_peak p = l->kind == TE_COST_ELEMENTWISE ? TE_PEAK_FP32 : l->peak;
  if (p < 0 || dev->peak_tflops[p] <= 0) return R_NO_PEAK;
  *comp_us = l->cost.flops / (dev->peak_tflops[p] * UT_US_PER_S);
  return R_OK;
}

static void count(an_roofline_counts *n, reason why, an_shape_source src) {
  n->launches++;
  switch (why) {
    case R_OK:
      n->with_shapes++;
      n->from_mapping += src == AN_SHAPES_MAPPING;
      n->from_model += src == AN_SHAPES_MODEL || src == AN_SHAPES_STEP_SUMS;
      break;
    case R_NO_OP:
      n->no_op++;
      break;
    case R_NO_SHAPES:
      n->no_shapes++;
      break;
    case R_NO_MODEL:
      n->no_model++;
      break;
    case R_BAD:
      n->bad_shapes++;
      break;
    case R_SECONDARY:
      n->secondary++;
      break;
    default:
      n->no_peak++;
      break;
  }
}

/* The launch under its (op, Input Dims) in the row; false when out of memory. */
static bool shape_add(row_acc *a, size_t view, const launch *l, double dur) {
  if (!l->op) return true;
  size_t i = 0;
  while (i < a->n_shapes &&
         !(a->shapes[i].view == view && a->shapes[i].op == l->op && a->shapes[i].dims == l->dims))
    i++;
  if (i == a->n_shapes) {
    shape_acc *v = ut_grow(a->shapes, &a->cap_shapes, i + 1, sizeof *v);
    if (!v) return false;
    a->shapes = v;
    a->shapes[a->n_shapes++] =
        (shape_acc){view, l->op, l->dims, 0, l->cost.flops, l->cost.bytes, 0};
  }
  a->shapes[i].launches++;
  a->shapes[i].time += dur;
  return true;
}

static uint64_t cost_key(double bytes, double flops) {
  double both[2] = {bytes, flops};
  return ut_hash_bytes(both, sizeof both);
}

/* The launch under its work (bytes, FLOPs) in the row; false when out of memory. */
static bool cost_add(row_acc *a, const launch *l) {
  uint64_t key = cost_key(l->cost.bytes, l->cost.flops), i;
  for (; ut_u64map_get(&a->cost_of, key, &i); key++)
    if (a->costs[i].bytes == l->cost.bytes && a->costs[i].flops == l->cost.flops) {
      a->costs[i].launches++;
      return true;
    }
  cost_acc *v = ut_grow(a->costs, &a->cap_costs, a->n_costs + 1, sizeof *v);
  if (!v) return false;
  a->costs = v;
  a->costs[a->n_costs] = (cost_acc){l->cost.flops, l->cost.bytes, 1};
  return ut_u64map_put(&a->cost_of, key, a->n_costs++);
}

/* A launch whose own time and shapes are evidence of its rate (roofline.comparable_launch_us;
 * a model's or a step sum's shapes are estimates): the row's fastest such launch. A rate past
 * the device's peak is none: a launch that long moves more than a last-level cache holds, so
 * its bytes were over-counted (a broadcast operand) or its FLOPs ran in another format (FP32
 * matmuls on TF32 cores). */
static void launch_evidence(row_acc *a, const te_device *dev, const launch *l, double dur,
                            an_shape_source src, double min_us) {
  if (dur < min_us || dur <= 0 || (src != AN_SHAPES_OP && src != AN_SHAPES_MAPPING)) return;
  double tbs = l->cost.bytes / (dur * UT_US_PER_S);
  if (tbs > a->launch_tbs && tbs <= dev->hbm_tbs) a->launch_tbs = tbs, a->launch_tbs_us = dur;
  te_peak p = l->peak;
  if (p < 0 || l->cost.flops <= 0) return;
  double tflops = l->cost.flops / (dur * UT_US_PER_S);
  if (tflops > a->launch_tflops[p] && tflops <= dev->peak_tflops[p])
    a->launch_tflops[p] = tflops, a->launch_tflops_us[p] = dur;
}

static void row_add(row_acc *a, const launch *l, double dur, double mem_us, double comp_us,
                    an_shape_source src) {
  a->flops += l->cost.flops;
  a->bytes += l->cost.bytes;
  a->time += dur;
  a->mem_us += mem_us;
  a->comp_us += comp_us;
  a->bound += mem_us > comp_us ? mem_us : comp_us;
  a->launches++;
  a->mapped += src == AN_SHAPES_MAPPING;
  a->modelled += src == AN_SHAPES_MODEL;
  a->summed += src == AN_SHAPES_STEP_SUMS;
  a->kind_time[l->kind] += dur;
  if (l->peak >= 0) a->peak_flops[l->peak] += l->cost.flops;
}

/* ------------------------------------------------------------------ the run */

typedef struct stage_work {
  ut_u64map row_of; /* canonical name pointer -> row index */
  row_acc *acc;
} stage_work;

/* The model plans of the (view, stage block) being costed. Dense: identified once,
 * checked per block; MoE: found per block from its content. next: the block's next
 * replayed GEMM launch of each. */
typedef struct model_state {
  an_model_scan scan; /* of the view being costed */
  an_model_plan plan;
  bool usable;
  size_t next;
  an_moe_plan moe;
  bool moe_usable;
  size_t moe_next;
  bool moe_dense;        /* the MoE plan also costs the replayed dense projections */
  size_t moe_dense_next; /* the next replayed dense GEMM launch of the stage */
  an_attn_plan attn;
  bool attn_usable;
  size_t attn_next; /* the block's next attention launch (its layer: sliding or full) */
} model_state;

typedef struct run {
  ctx c;
  an_strtab *strings;
  model_state ms;
  const an_roofline_side *fm;
  an_tables *tables;
  stage_work *work;
  an_roofline_result *out;
  mapping_costs mc;
  view_ops *kept;         /* the mapping's view ops, when it reads the formal side's views */
  an_attn_point *ceiling; /* the device's attention_ceiling, else roofline.attention_ceiling,
                             parsed once */
  size_t n_ceiling;
  const char *ceiling_basis; /* that table's source, as the report cites it */
  double shortest_us;        /* the run's shortest kernel launch: proof of what a launch can take */
  double shortest_matrix_us; /* the same of the launches costed as matrix work */
  const te_matcher *dequant; /* matcher precision_dequant_kernel (NULL: none) */
} run;

static long table_stage(const an_tables *t, const char *id) {
  const an_stage_tables *st = an_tables_stage(t, id);
  return st ? (long)(st - t->stages) : -1;
}

/* Whether a launch without an op is one the model plan costs: its row's category is one
 * of roofline.model_gemm_categories. */
static bool model_gemm(const run *r, size_t s, const char *name) {
  uint64_t row;
  if (!name || !ut_u64map_get(&r->work[s].row_of, (uint64_t)(uintptr_t)name, &row)) return false;
  const te_string_list *cats = &te_rules_settings(r->c.rules)->roofline_model_gemm_categories;
  return te_string_list_has(cats, r->tables->stages[s].rows[row].category);
}

/* A launch with no op: the mapping's cost of its kernel, else a model plan's (raw: the
 * kernel's full name). */
static reason borrowed_cost(run *r, view_ops *vo, size_t vi, size_t s, const tr_event *k,
                            const char *name, size_t attn_i, launch *l, an_shape_source *src) {
  const char *raw = tr_str_get(r->fm->views[vi].trace, k->name);
  if (name && mapped_cost(&r->mc, r->tables->stages[s].stage->id, name, l)) {
    *src = AN_SHAPES_MAPPING;
    return R_OK;
  }
  if (r->ms.attn_usable && view_attn(&r->c, vo, r->fm->views[vi].trace, k)) {
    an_attn_launch_cost(&r->ms.attn, attn_i, &l->cost);
    l->kind = TE_COST_ATTENTION;
    l->op = l->dims = 0;
    *src = AN_SHAPES_STEP_SUMS;
    return R_OK;
  }
  /* the model plans write the work alone: no attention shape (ceiling) beside it */
  l->cost = (an_op_cost){0, 0, NULL, 0, 0, false};
  if (r->ms.moe_usable && an_moe_gemm_kernel(r->c.rules, raw)) {
    an_moe_gemm_cost(&r->ms.moe, r->ms.moe_next++, &l->cost);
    l->kind = TE_COST_GROUPED_GEMM;
  } else if (r->ms.usable && model_gemm(r, s, name)) {
    an_model_gemm_cost(&r->ms.plan, r->ms.next++, &l->cost);
    l->kind = TE_COST_GEMM;
  } else if (r->ms.moe_dense && model_gemm(r, s, name)) {
    an_moe_dense_cost(&r->ms.moe, r->ms.moe_dense_next++, &l->cost);
    l->kind = TE_COST_GEMM;
  } else {
    return R_NO_OP;
  }
  l->op = l->dims = 0;
  *src = AN_SHAPES_MODEL;
  return R_OK;
}

/* Why a launch has no op, from the evidence: no launch call recorded (launched before the
 * capture, or runtime events not kept), a graph launch (replay), else a launch call that
 * no CPU op links to (counted as the rest of no_op). */
static void no_op_cause(const run *r, const an_trace_view *v, const tr_event *k,
                        an_roofline_counts *n) {
  const tr_event *call = an_trace_ids_launch_of(v->ids, v->trace, k);
  const te_matcher *graph = te_rules_matcher(r->c.rules, "graph_replay_launch");
  const char *name = call ? tr_str_get(v->trace, call->name) : NULL;
  if (!call)
    n->no_launch++;
  else if (graph && te_matcher_match(graph, name, strlen(name)))
    n->no_op_graph++;
}

/* Kernel event k's index among its trace's kernel events (an_steps_kernel_counted). */
static size_t kernel_index(const an_trace_view *v, const tr_event *k) {
  size_t n = 0;
  return (size_t)(k - tr_trace_events(v->trace, TR_KIND_KERNEL, &n));
}

/* Work of the matrix units (a GEMM, grouped GEMM or attention): a launch streams its tiles
 * through a pipeline that fills and drains, so its floor is the device's matrix floor. */
static bool matrix_kind(te_cost_kind k) {
  return k == TE_COST_GEMM || k == TE_COST_GROUPED_GEMM || k == TE_COST_ATTENTION;
}

/* One formal launch (kernel i of the view's stage b, the tables' stage s): its cost (own op,
 * else the mapping's), counted and added to its row. */
/* An attention launch with its op's shapes at its roofline.attention_ceiling point (review
 * 19 defect 6): weighed by its FLOPs. */
static void ceiling_add(const run *r, row_acc *a, const an_op_cost *c) {
  if (c->attn_head_dim <= 0 || c->flops <= 0) return;
  an_attn_at at;
  double f = an_attn_ceiling_frac(r->ceiling, r->n_ceiling, c->attn_causal, c->attn_head_dim,
                                  c->attn_kv_len, &at);
  if (f <= 0) return;
  a->ceil_flops += c->flops;
  a->ceil_frac += c->flops * f;
  a->ceil_dim += c->flops * c->attn_head_dim;
  a->ceil_kv += c->flops * c->attn_kv_len;
  a->ceil_causal += c->attn_causal ? c->flops : 0;
  a->ceil_curve_dim += c->flops * at.curve_dim;
  a->ceil_shortest += c->flops * at.shortest;
}

/* The attention ceiling of the run's device: its own published curves (its pack entry's
 * attention_ceiling), else roofline.attention_ceiling (H100's, an estimate elsewhere). */
static bool ceiling_make(run *r) {
  const te_device *d = r->c.dev;
  const te_settings *s = te_rules_settings(r->c.rules);
  bool own = d && d->attention_ceiling.n;
  const te_string_list *why = &s->roofline_attention_ceiling_basis;
  r->ceiling_basis = own ? d->attention_ceiling_basis : why->n ? why->items[0] : NULL;
  return an_attn_ceiling_make(own ? &d->attention_ceiling : &s->roofline_attention_ceiling,
                              &r->ceiling, &r->n_ceiling);
}

/* The peak class of a launch's format: its operands'; a matrix launch of FP32 operands whose kernel
 * runs on the tensor cores in TF32 (matcher tf32_matmul: cuDNN's and CUTLASS's tf32 and s1688
 * kernels) at the TF32 peak where the device states one (the FP32 peak put s1688 GEMMs at 268% of
 * their roofline: its op's inputs say float, its kernel TF32). raw: the kernel's own name. */
static te_peak launch_peak(const ctx *c, const launch *l, const char *raw) {
  te_peak p = l->cost.dtype ? l->cost.dtype->peak : TE_PEAK_NONE;
  if (p == TE_PEAK_FP32 && matrix_kind(l->kind) && c->tf32 && raw &&
      c->dev->peak_tflops[TE_PEAK_TF32] > 0 && te_matcher_match(c->tf32, raw, strlen(raw)))
    return TE_PEAK_TF32;
  return p;
}

static void formal_launch(run *r, memo *m, view_ops *vo, size_t vi, size_t s, size_t b, size_t i) {
  const an_trace_view *v = &r->fm->views[vi];
  const tr_event *k = v->stages[b].kernels[i];
  launch l;
  reason why = launch_cost(&r->c, m, vo, v, b, i, &l);
  const char *name = an_kernel_map_canonical(r->fm->kmap, vi, v->trace, k->name);
  an_shape_source src = AN_SHAPES_OP;
  /* every attention launch of the block counts its layer, costed here or not */
  bool attn = view_attn(&r->c, vo, v->trace, k);
  size_t attn_i = attn ? r->ms.attn_next++ : 0;
  if (why == R_NO_OP) why = borrowed_cost(r, vo, vi, s, k, name, attn_i, &l, &src);
  /* an eager attention op without a model (or shapes: a paged KV pool shows no lengths) */
  if ((why == R_NO_MODEL || why == R_NO_SHAPES) && r->ms.attn_usable && attn) {
    l = (launch){{0}, TE_COST_ATTENTION, 0, 0, TE_PEAK_NONE};
    an_attn_launch_cost(&r->ms.attn, attn_i, &l.cost);
    src = AN_SHAPES_STEP_SUMS;
    why = R_OK;
  }
  double mem_us = 0, comp_us = 0;
  if (why == R_OK) l.peak = launch_peak(&r->c, &l, tr_str_get(v->trace, k->name));
  if (why == R_OK) why = launch_bound(r->c.dev, &l, &mem_us, &comp_us);
  count(&r->out->stages[s].counts, why, src);
  if (why == R_NO_OP) no_op_cause(r, v, k, &r->out->stages[s].counts);
  double dur = tr_event_dur(v->trace, k);
  if (dur > 0 && (r->shortest_us <= 0 || dur < r->shortest_us)) r->shortest_us = dur;
  if (why == R_OK && matrix_kind(l.kind) && dur > 0 &&
      (r->shortest_matrix_us <= 0 || dur < r->shortest_matrix_us))
    r->shortest_matrix_us = dur;
  uint64_t row;
  if (why != R_OK || !name || !ut_u64map_get(&r->work[s].row_of, (uint64_t)(uintptr_t)name, &row))
    return;
  row_acc *a = &r->work[s].acc[row];
  row_add(a, &l, dur, mem_us, comp_us, src);
  ceiling_add(r, a, &l.cost);
  launch_evidence(a, r->c.dev, &l, dur, src,
                  te_rules_settings(r->c.rules)->roofline_comparable_launch_us);
  if (!r->fm->steps || an_steps_kernel_counted(&r->fm->steps[vi], kernel_index(v, k)))
    a->steps_time += dur;
  if (!shape_add(a, vi, &l, dur) || !cost_add(a, &l)) r->c.nomem = true;
}

/* The launches of a stage block the model plans would cost: no op, no mapping cost; a
 * GEMM category (dense, *n) or a grouped expert GEMM kernel (*moe). */
static void replayed_gemms(run *r, view_ops *vo, size_t vi, size_t s, size_t b, size_t *n,
                           size_t *moe) {
  const an_trace_view *v = &r->fm->views[vi];
  const an_stage_kernels *sk = &v->stages[b];
  launch l;
  *n = *moe = 0;
  for (size_t k = 0; k < sk->n; k++) {
    const char *name = an_kernel_map_canonical(r->fm->kmap, vi, v->trace, sk->kernels[k]->name);
    if (view_attn(&r->c, vo, v->trace, sk->kernels[k])) continue;
    if (view_op_at(vo, b, k) != OP_NONE) continue;
    if (name && mapped_cost(&r->mc, sk->stage->id, name, &l)) continue;
    if (an_moe_gemm_kernel(r->c.rules, tr_str_get(v->trace, sk->kernels[k]->name)))
      (*moe)++;
    else
      *n += model_gemm(r, s, name);
  }
}

/* A model identification the report keeps: its hint text interned (the inputs' texts
 * do not outlive the run). */
static an_model_ident kept_ident(run *r, const an_model_ident *how) {
  an_model_ident k = *how;
  if (k.hint && !(k.hint = an_strtab_cstr(r->strings, k.hint))) r->c.nomem = true;
  return k;
}

/* The report's model line from a plan's check: the first block checked, or the first
 * that passes. */
static void model_line(run *r, const te_model *m, const an_model_ident *from, bool used,
                       long tokens, const an_model_check *why, bool hint) {
  an_roofline_model *out = &r->out->model;
  if (out->check.kind && (out->used || !used)) return;
  an_attn_check a = out->attention;
  bool a_used = out->attention_used;
  *out = (an_roofline_model){m ? m->id : NULL,
                             m ? m->label : NULL,
                             kept_ident(r, from),
                             m ? m->source : NULL,
                             used,
                             hint,
                             tokens,
                             *why,
                             a,
                             a_used};
  /* the logits op's name is the trace's: the report outlives it */
  if (why->op && !(out->check.op = an_strtab_cstr(r->strings, why->op))) r->c.nomem = true;
}

/* The report's attention line: the first block with attention launches, or the first
 * whose plan holds. */
static void attention_line(run *r, bool used, const an_attn_check *why) {
  an_roofline_model *out = &r->out->model;
  if (out->attention.kind && (out->attention_used || !used)) return;
  out->attention = *why;
  out->attention.ident = kept_ident(r, &why->ident);
  out->attention_used = used;
}

/* Whether an MoE model's facts cost this stage block's grouped expert GEMMs (found from
 * the trace's content: roofline_moe.h), and its replayed dense projections (dense: their
 * launches). */
static void moe_block(run *r, size_t s, size_t launches, size_t dense) {
  const an_exec_facts *x = &r->tables->stages[s].exec;
  long tokens = x->tokens_min == x->tokens_max ? x->tokens_max : 0;
  size_t steps = r->fm->n ? x->steps_with_tokens / r->fm->n : 0;
  an_model_check why;
  r->ms.moe_usable =
      an_moe_plan_find(r->c.rules, &r->ms.scan, tokens, steps, launches, &r->ms.moe, &why);
  if (r->ms.moe_usable) r->out->stages[s].counts.model_tokens = (size_t)tokens;
  if (r->ms.moe_usable && dense) {
    r->ms.moe_dense = an_moe_dense_fit(&r->ms.moe, dense);
    why.dense_launches = dense;
    why.dense_per_layer = r->ms.moe.dense_per_layer;
  }
  an_model_ident from = {.kind = AN_IDENT_MOE_CONTENT};
  model_line(r, r->ms.moe.model, &from, r->ms.moe_usable, tokens, &why, false);
}

/* The attention launches of a stage block (matcher attention_kv_read) and how many read
 * an FP8 KV cache. */
static size_t attention_launches(run *r, view_ops *vo, const an_trace_view *v,
                                 const an_stage_kernels *sk, size_t *fp8) {
  const te_matcher *f8 = te_rules_matcher(r->c.rules, AN_ATTN_FP8_MATCHER);
  size_t n = 0;
  *fp8 = 0;
  for (size_t k = 0; k < sk->n; k++) {
    if (!view_attn(&r->c, vo, v->trace, sk->kernels[k])) continue;
    const char *raw = tr_str_get(v->trace, sk->kernels[k]->name);
    n++;
    *fp8 += f8 && te_matcher_match(f8, raw, strlen(raw));
  }
  return n;
}

/* Whether the step sums cost this block's attention launches, with the identified model's
 * heads (or the MoE plan's model); how: how the dense model was identified. */
static void attention_block(run *r, size_t s, size_t launches, size_t fp8,
                            const an_model_ident *how) {
  const an_exec_facts *x = &r->tables->stages[s].exec;
  size_t steps = r->fm->n ? x->steps_with_attn / r->fm->n : 0;
  const te_model *m = r->ms.plan.model   ? r->ms.plan.model
                      : r->ms.moe_usable ? r->ms.moe.model
                                         : NULL;
  an_attn_check why;
  r->ms.attn_usable = an_attn_plan_make(m, x, steps, launches, fp8, &r->ms.attn, &why);
  bool dense = m && m == r->ms.plan.model;
  if (!m || dense) why.ident = *how; /* the line says how the model was (not) identified */
  attention_line(r, r->ms.attn_usable, &why);
  an_roofline_model *out = &r->out->model;
  if (r->ms.attn_usable && !out->label) { /* the header's model when no GEMM plan named it */
    out->id = m->id, out->label = m->label, out->source = m->source;
    out->from_hint = dense && r->ms.plan.from_hint;
  }
}

/* The model plans of a stage block: the model identified from the trace's content (a hint
 * picking among several that fit), the dense GEMM plan in roofline.model_stages, the MoE
 * plan, and the attention plan. The first block checked (or the first that passes) gives
 * the report its model lines. */
static void model_block(run *r, view_ops *vo, size_t vi, size_t s, size_t b) {
  const an_stage_kernels *sk = &r->fm->views[vi].stages[b];
  r->ms.usable = r->ms.moe_usable = r->ms.attn_usable = r->ms.moe_dense = false;
  r->ms.next = r->ms.moe_next = r->ms.moe_dense_next = r->ms.attn_next = 0;
  size_t n, moe, fp8;
  replayed_gemms(r, vo, vi, s, b, &n, &moe);
  size_t attn = attention_launches(r, vo, &r->fm->views[vi], sk, &fp8);
  if (moe) moe_block(r, s, moe, n);
  const an_exec_facts *x = &r->tables->stages[s].exec;
  an_model_layers layers = {n, attn, r->fm->n ? x->steps_with_attn / r->fm->n : 0};
  an_model_ident how;
  an_model_identify(r->c.rules, &r->ms.scan, &layers, r->fm->model_texts, r->fm->n_model_texts,
                    &r->ms.plan, &how);
  if (attn) attention_block(r, s, attn, fp8, &how);
  const te_string_list *stages = &te_rules_settings(r->c.rules)->roofline_model_stages;
  if (!te_string_list_has(stages, sk->stage->id) || !n) return;
  if (!r->ms.plan.model) {
    an_model_check why = {.kind = AN_CHECK_IDENT};
    model_line(r, NULL, &how, false, 0, &why, false);
    return;
  }
  an_model_check why;
  r->ms.usable = an_model_plan_check(&r->ms.plan, &r->ms.scan, n, &why);
  if (r->ms.usable) r->out->stages[s].counts.model_tokens = (size_t)r->ms.plan.tokens;
  model_line(r, r->ms.plan.model, &how, r->ms.usable, r->ms.plan.tokens, &why,
             r->ms.plan.from_hint);
}

static void cost_formal(run *r) {
  memo m = {0};
  view_ops vo = {0};
  for (size_t vi = 0; vi < r->fm->n; vi++, memo_free(&m), view_ops_free(&vo)) {
    const an_trace_view *v = &r->fm->views[vi];
    if (r->kept)
      vo = r->kept[vi], memset(&r->kept[vi], 0, sizeof vo);
    else
      view_ops_build(&r->c, v, &vo);
    if (r->fm->scans)
      r->ms.scan = r->fm->scans[vi], memset(&r->fm->scans[vi], 0, sizeof r->ms.scan);
    else if (!an_model_scan_build(r->c.rules, v->trace, &r->ms.scan))
      r->c.nomem = true;
    for (size_t b = 0; b < v->n_stages; b++) {
      long s = table_stage(r->tables, v->stages[b].stage->id);
      if (s >= 0) model_block(r, &vo, vi, (size_t)s, b);
      for (size_t k = 0; s >= 0 && k < v->stages[b].n; k++)
        formal_launch(r, &m, &vo, vi, (size_t)s, b, k);
    }
    an_model_scan_free(&r->ms.scan);
  }
  memo_free(&m);
}

/* The cost kind holding most of the row's time (its family). */
static te_cost_kind row_kind(const row_acc *a) {
  int kind = 0;
  for (int i = 1; i < N_KINDS; i++)
    if (a->kind_time[i] > a->kind_time[kind]) kind = i;
  return (te_cost_kind)kind;
}

/* The row's record from its totals (attainable set later). */
static an_roofline record_of(const row_acc *a) {
  an_roofline rec = {0};
  rec.flops = a->flops;
  rec.bytes = a->bytes;
  rec.launches_with_shapes = a->launches;
  rec.source = a->summed     ? AN_SHAPES_STEP_SUMS
               : a->modelled ? AN_SHAPES_MODEL
               : a->mapped   ? AN_SHAPES_MAPPING
                             : AN_SHAPES_OP;
  rec.time_us = a->time;
  rec.steps_time_us = a->steps_time;
  rec.bound_us = a->bound;
  rec.achieved_pct = a->time > 0 ? a->bound / a->time * 100.0 : 0;
  rec.limiter = a->comp_us > a->mem_us ? AN_LIMIT_COMPUTE : AN_LIMIT_MEMORY;
  rec.mem_term_us = a->mem_us;
  rec.comp_term_us = a->comp_us;
  int p = -1;
  for (int i = 0; i < TE_PEAK_COUNT; i++)
    if (a->peak_flops[i] > 0 && (p < 0 || a->peak_flops[i] > a->peak_flops[p])) p = i;
  rec.dtype = p >= 0 ? te_peak_name((te_peak)p) : NULL;
  rec.launch_tbs = a->launch_tbs;
  rec.launch_tflops = p >= 0 ? a->launch_tflops[p] : 0;
  rec.family = k_families[row_kind(a)];
  rec.achieved_tbs = a->time > 0 ? a->bytes / (a->time * UT_US_PER_S) : 0;
  rec.achieved_tflops = a->time > 0 ? a->flops / (a->time * UT_US_PER_S) : 0;
  if (a->ceil_flops > a->flops / 2) { /* most of its FLOPs at a ceiling point */
    rec.attn_ceiling_frac = a->ceil_frac / a->ceil_flops;
    rec.attn_head_dim = a->ceil_dim / a->ceil_flops;
    rec.attn_kv_len = a->ceil_kv / a->ceil_flops;
    rec.attn_causal = a->ceil_causal > a->ceil_flops / 2;
    rec.attn_curve_dim = a->ceil_curve_dim / a->ceil_flops;
    rec.attn_shortest_kv = a->ceil_shortest / a->ceil_flops;
  }
  return rec;
}

static int cmp_shape_time(const void *a, const void *b) {
  const shape_acc *x = a, *y = b;
  return x->time > y->time ? -1 : x->time < y->time;
}

/* The row's first roofline.shapes_per_row shapes by time, their strings copied out of the
 * traces. */
static bool record_shapes(run *r, row_acc *a, an_roofline *rec) {
  size_t cap = (size_t)te_rules_settings(r->c.rules)->roofline_shapes_per_row;
  if (!a->n_shapes || !cap) return true;
  qsort(a->shapes, a->n_shapes, sizeof *a->shapes, cmp_shape_time);
  size_t n = a->n_shapes < cap ? a->n_shapes : cap;
  an_roofline_shape *out = calloc(n, sizeof *out);
  if (!out) return false;
  for (size_t i = 0; i < n; i++) {
    const shape_acc *sh = &a->shapes[i];
    const tr_trace *t = r->fm->views[sh->view].trace;
    out[i] = (an_roofline_shape){an_strtab_cstr(r->strings, tr_str_get(t, sh->op)),
                                 an_strtab_cstr(r->strings, tr_str_get(t, sh->dims)),
                                 sh->launches,
                                 sh->flops,
                                 sh->bytes,
                                 sh->time};
    if (!out[i].op || !out[i].dims) r->c.nomem = true;
  }
  rec->shapes = out;
  rec->n_shapes = n;
  return true;
}

/* Balanced: neither term is far the larger (roofline.balanced_ratio), so the limiter
 * alone misnames what binds the row (review 12 defect 5). */
static void set_balanced(const run *r, an_roofline *rec) {
  double ratio = an_roofline_terms_ratio(rec);
  rec->balanced = ratio > 0 && ratio <= te_rules_settings(r->c.rules)->roofline_balanced_ratio;
  if (!rec->balanced || rec->family != k_families[TE_COST_ATTENTION]) return;
  /* fused attention near or above the ridge: its FLOPs bound it (an_roofline.fused_flops),
   * so its roofline time is its FLOP term and its % of it the compute fraction (not the
   * larger byte term's: hf_qwen's flash_fwd read '19% comp' at 9% of the bf16 peak) */
  rec->fused_flops = rec->limiter == AN_LIMIT_MEMORY;
  rec->limiter = AN_LIMIT_COMPUTE;
  rec->balanced = false;
  if (!rec->fused_flops) return;
  rec->bound_us = rec->comp_term_us;
  rec->achieved_pct = rec->time_us > 0 ? rec->bound_us / rec->time_us * 100.0 : 0;
}

/* The peak class a record's format names, -1 none. */
static int peak_of(const an_roofline *rec) {
  for (int p = 0; rec->dtype && p < TE_PEAK_COUNT; p++)
    if (!strcmp(rec->dtype, te_peak_name((te_peak)p))) return p;
  return -1;
}

/* The device's peak for a record's limiter (its format's dense peak when compute-bound). */
static double device_peak(const te_device *dev, const an_roofline *rec) {
  if (rec->limiter == AN_LIMIT_MEMORY) return dev->hbm_tbs;
  int p = peak_of(rec);
  return p >= 0 ? dev->peak_tflops[p] : 0;
}

/* A rate over time_us as evidence of what the work streams at (roofline.launch_ramp: a
 * launch takes its floor plus its work at the rate, so the rate evidence gives is its work
 * over its time past its launches' floors, fixed_us): none (0) when the floors hold more
 * than roofline.evidence_max_floor_pct of the time (the rate would be mostly a guess at the
 * fixed cost) or when it passes the peak. Without the ramp, the rate as it is. */
static double past_floor(const te_settings *set, double rate, double time_us, double fixed_us,
                         double peak) {
  if (!set->roofline_launch_ramp || rate <= 0) return rate;
  if (fixed_us >= time_us || fixed_us > time_us * set->roofline_evidence_max_floor_pct / 100.0)
    return 0;
  double v = rate * time_us / (time_us - fixed_us);
  return v <= peak ? v : 0;
}

/* The row's floor (matrix work has its own) and its fastest launch's rate past it. */
static void record_floor(const run *r, const row_acc *a, an_roofline *rec) {
  const an_roofline_device *d = &r->out->device;
  const te_settings *set = te_rules_settings(r->c.rules);
  rec->latency_floor_us = matrix_kind(row_kind(a)) ? d->matrix_floor_us : d->latency_floor_us;
  rec->floor_added = set->roofline_launch_ramp;
  rec->launch_tbs =
      past_floor(set, rec->launch_tbs, a->launch_tbs_us, rec->latency_floor_us, r->c.dev->hbm_tbs);
  int p = peak_of(rec);
  if (p >= 0)
    rec->launch_tflops = past_floor(set, rec->launch_tflops, a->launch_tflops_us[p],
                                    rec->latency_floor_us, r->c.dev->peak_tflops[p]);
}

/* Whether a row's kernel dequantises FP4 weights to its 16-bit format in the kernel: its
 * name says FP4 weights (matcher precision_dequant_kernel) and the device has no FP4 units
 * (its pack states no FP4 peak), so its FLOPs pay the unpacking on top of a native GEMM's. */
static bool dequantising(const run *r, const char *name) {
  return r->dequant && name && r->c.dev->peak_tflops[TE_PEAK_FP4] <= 0 &&
         te_matcher_match(r->dequant, name, strlen(name));
}

static an_status build_records(run *r, size_t s) {
  an_stage_tables *st = &r->tables->stages[s];
  an_roofline_stage *os = &r->out->stages[s];
  os->records = calloc(st->n_rows ? st->n_rows : 1, sizeof *os->records);
  if (!os->records) return AN_ERR_NOMEM;
  for (size_t i = 0; i < st->n_rows; i++) {
    row_acc *a = &r->work[s].acc[i];
    st->rows[i].roofline = 0;
    if (!a->launches || a->time <= 0) continue;
    os->records[os->n] = record_of(a);
    record_floor(r, a, &os->records[os->n]);
    os->records[os->n].dequant = dequantising(r, st->rows[i].name);
    set_balanced(r, &os->records[os->n]);
    if (!record_shapes(r, &r->work[s].acc[i], &os->records[os->n])) return AN_ERR_NOMEM;
    st->rows[i].roofline = (uint32_t)++os->n;
  }
  return AN_OK;
}

/* ------------------------------------------------------------------ attainable */

static double rate_of(const an_roofline *rec) {
  return rec->limiter == AN_LIMIT_COMPUTE ? rec->achieved_tflops : rec->achieved_tbs;
}

/* The row's average rate past its launches' floors (past_floor; unbounded when they hold
 * all of its time: no comparable row is faster than a row that is all fixed cost). */
static double own_rate(const run *r, const an_roofline *rec) {
  const te_settings *set = te_rules_settings(r->c.rules);
  double fixed = rec->latency_floor_us * (double)rec->launches_with_shapes;
  if (!set->roofline_launch_ramp) return rate_of(rec);
  return fixed < rec->time_us ? rate_of(rec) * rec->time_us / (rec->time_us - fixed) : HUGE_VAL;
}

/* The rate a row is evidence of, 0 when none: the larger of its average over its launches
 * (with roofline.comparable_min_us of time over roofline.comparable_min_launches launches)
 * and its fastest launch that is evidence on its own (roofline.comparable_launch_us), each
 * past its launches' floors (past_floor); *by_launch: the launch's, above the row's average. */
static double evidence_rate(const run *r, const an_roofline *rec, bool *by_launch) {
  const te_settings *set = te_rules_settings(r->c.rules);
  bool row = rec->time_us >= set->roofline_comparable_min_us &&
             rec->launches_with_shapes >= (size_t)set->roofline_comparable_min_launches;
  double own = rec->limiter == AN_LIMIT_COMPUTE ? rec->launch_tflops : rec->launch_tbs;
  double fixed = rec->latency_floor_us * (double)rec->launches_with_shapes;
  double avg =
      row ? past_floor(set, rate_of(rec), rec->time_us, fixed, device_peak(r->c.dev, rec)) : 0;
  *by_launch = own > avg && own > own_rate(r, rec);
  return own > avg ? own : avg;
}

/* Same op family and limiter; for compute-bound rows also the same format (bytes per
 * second do not depend on it, FLOPs per second do). */
static bool comparable(const te_settings *set, const an_roofline *a, const an_roofline *b) {
  if (a->limiter != b->limiter) return false;
  bool format = a->dtype == b->dtype || (a->dtype && b->dtype && !strcmp(a->dtype, b->dtype));
  if (a->family != b->family) /* matrix-core FLOPs: roofline.compute_peers of one format */
    return a->limiter == AN_LIMIT_COMPUTE && format && a->family && b->family &&
           te_string_list_has(&set->roofline_compute_peers, a->family) &&
           te_string_list_has(&set->roofline_compute_peers, b->family);
  return a->limiter == AN_LIMIT_MEMORY || format;
}

/* The device's attainable rate for a record: the pack's fraction of its peak. */
static double device_attainable(const te_device *dev, const an_roofline *rec) {
  return device_peak(dev, rec) *
         (rec->limiter == AN_LIMIT_MEMORY ? dev->attainable_bandwidth : dev->attainable_compute);
}

/* Bytes per launch of a record's launches with shapes. */
static double bytes_per_launch(const an_roofline *rec) {
  return rec->launches_with_shapes ? rec->bytes / (double)rec->launches_with_shapes : 0;
}

/* The most bytes per launch a row may move to be evidence of rec's rate: a memory-bound
 * rate is a like-sized launch's (roofline.size_match_factor); HUGE_VAL: any. */
static double size_limit(const run *r, const an_roofline *rec) {
  if (rec->limiter != AN_LIMIT_MEMORY) return HUGE_VAL;
  return bytes_per_launch(rec) * te_rules_settings(r->c.rules)->roofline_size_match_factor;
}

/* The best rate a comparable row of the run moving at most max_bytes a launch is evidence
 * of (evidence_rate), 0 when none; not rec itself when other is set. *stage, *row: that row;
 * *by_launch: the rate is one of its launches'. */
static double best_comparable(const run *r, const an_roofline *rec, bool other, double max_bytes,
                              size_t *stage, size_t *row, bool *by_launch) {
  const te_settings *set = te_rules_settings(r->c.rules);
  double best = 0;
  for (size_t s = 0; s < r->tables->n_stages; s++)
    for (size_t i = 0; i < r->tables->stages[s].n_rows; i++) {
      const an_kernel_row *kr = &r->tables->stages[s].rows[i];
      if (!kr->roofline) continue;
      const an_roofline *o = &r->out->stages[s].records[kr->roofline - 1];
      if ((other && o == rec) || !comparable(set, o, rec) || bytes_per_launch(o) > max_bytes)
        continue;
      bool one = false;
      double rate = evidence_rate(r, o, &one);
      if (rate > best) best = rate, *stage = s, *row = i, *by_launch = one;
    }
  return best;
}

/* The row's time at a rate, summed per launch: with roofline.launch_ramp its floor plus its
 * work at that rate (the latency-bandwidth model: a launch of a few MB pays its fixed cost
 * on top of its stream, so it reaches well under the rate a GB launch shows), else the
 * larger of the two (no launch runs faster than the floor, however little it moves);
 * *floored: the floor's part of it, *n_floored the launches whose work takes less. */
static double time_at(const row_acc *a, bool compute, double rate, double floor, bool ramp,
                      double *floored, size_t *n_floored) {
  double at = 0;
  for (size_t i = 0; i < a->n_costs; i++) {
    const cost_acc *c = &a->costs[i];
    double t = (compute ? c->flops : c->bytes) / rate, n = (double)c->launches;
    if (t < floor) *n_floored += c->launches;
    if (ramp || t < floor) *floored += floor * n;
    at += (ramp ? t + floor : t < floor ? floor : t) * n;
  }
  return at;
}

/* What tuning can win over the row's launches: their time less their time at the
 * attainable rate, each launch at least the latency floor. The row is latency-bound when
 * the floor holds most of that time. At the device pack's rate too: the ceiling of a row
 * measured against its family's lower best observed rate. */
static void set_headroom(const run *r, const row_acc *a, an_roofline *rec) {
  bool ramp = te_rules_settings(r->c.rules)->roofline_launch_ramp;
  double floor = rec->latency_floor_us;
  double rate = rec->attainable * UT_US_PER_S, floored = 0;
  bool compute = rec->limiter == AN_LIMIT_COMPUTE;
  double at = rate > 0 ? time_at(a, compute, rate, floor, ramp, &floored, &rec->floored_launches)
                       : rec->time_us;
  rec->headroom_us = rec->time_us > at ? rec->time_us - at : 0;
  rec->latency_bound = floored > at / 2;
  rec->at_time_us = at;
  rec->floor_time_us = floored;
  /* with the ramp, how near the row runs to what its launches' sizes allow at that rate */
  if (ramp && rate > 0 && rec->time_us > 0) rec->of_attainable_pct = at / rec->time_us * 100.0;
  rec->headroom_device_us = rec->headroom_us;
  if (rec->attainable_basis != AN_ATTAINABLE_FAMILY || rec->device_rate <= 0) return;
  double f2 = 0;
  size_t n2 = 0;
  double dev = time_at(a, compute, rec->device_rate * UT_US_PER_S, floor, ramp, &f2, &n2);
  rec->headroom_device_us = rec->time_us > dev ? rec->time_us - dev : 0;
}

/* The record of row i of stage s (one with a roofline). */
static const an_roofline *row_record(const run *r, size_t s, size_t i) {
  return &r->out->stages[s].records[r->tables->stages[s].rows[i].roofline - 1];
}

/* The class of the row an attainable rate comes from (from; NULL: the device pack's), and
 * whether it is another class than rec's: another op family (a dense GEMM's rate for a
 * grouped one, roofline.compute_peers) or one of them dequantises its weights in the kernel
 * and the other not. Then the rate is parity with that work, an upper bound: no kernel of
 * rec's class is shown reaching it (review 19 defect 5, review 21 defect 3). */
static void set_basis_class(an_roofline *rec, const an_roofline *from) {
  if (!from || from == rec) return;
  rec->basis_family = from->family;
  rec->basis_dequant = from->dequant;
  rec->parity = from->dequant != rec->dequant || !from->family || !rec->family ||
                strcmp(from->family, rec->family) != 0;
}

/* Whether a faster comparable row than rec and its size-matched ones is left out as moving
 * over max_bytes a launch (size_limit), and it is set on rec; size_own: no size-matched row
 * is faster, so the trace shows no rate above rec's own at its size (review 21 defect 4). */
static bool size_unmatched(run *r, an_roofline *rec, double max_bytes, double peer) {
  size_t s = 0, i = 0;
  bool one = false;
  if (max_bytes == HUGE_VAL) return false;
  double own = own_rate(r, rec), any = best_comparable(r, rec, true, HUGE_VAL, &s, &i, &one);
  if (any <= own || any <= peer) return false;
  rec->size_kernel = r->tables->stages[s].rows[i].name;
  rec->size_stage = r->tables->stages[s].stage->label;
  rec->size_row = i;
  rec->size_rate = any;
  rec->size_ratio = bytes_per_launch(row_record(r, s, i)) / bytes_per_launch(rec);
  rec->size_own = peer <= own;
  return rec->size_own;
}

/* The attainable rate: the best comparable row's when it beats the device pack's fraction
 * (the trace proves the part reaches it); else a faster sibling's rate below that fraction
 * (the family's best observed rate: what this work is shown to reach here, review 13
 * defect 4: vLLM's MoE down-projection at 0.89 TB/s beside its gate_up at 2.06); else the
 * pack's fraction (the family's fastest row, or one with no comparable row). */
static void set_attainable(run *r, an_roofline *rec) {
  size_t s = 0, i = 0;
  bool one = false;
  const an_roofline *sibling = NULL, *from = NULL;
  double max = size_limit(r, rec);
  double peer = best_comparable(r, rec, true, max, &s, &i, &one);
  if (peer > own_rate(r, rec)) {
    const an_stage_tables *ps = &r->tables->stages[s];
    sibling = row_record(r, s, i);
    rec->sibling_kernel = ps->rows[i].name;
    rec->sibling_stage = ps->stage->label;
    rec->sibling_row = i;
    rec->sibling_rate = peer;
    rec->sibling_launch = one;
    rec->sibling_family = sibling->family;
  }
  double best = best_comparable(r, rec, false, max, &s, &i, &one);
  double dev = device_attainable(r->c.dev, rec);
  rec->peak = device_peak(r->c.dev, rec);
  /* a compute-bound attention row: at most what the best published kernels reach at its
   * shapes (roofline.attention_ceiling; review 19 defect 6) */
  double shape = rec->attn_ceiling_frac * rec->peak;
  if (rec->limiter == AN_LIMIT_COMPUTE && shape > 0 && shape < dev) {
    rec->pack_rate = dev;
    rec->ceiling_basis = r->ceiling_basis;
    dev = shape;
  }
  rec->device_rate = dev;
  rec->attainable = size_unmatched(r, rec, max, peer) ? own_rate(r, rec) : dev;
  rec->attainable_basis = AN_ATTAINABLE_DEVICE;
  if (best > dev) {
    rec->attainable = best;
    rec->attainable_basis = AN_ATTAINABLE_TRACE;
    rec->attainable_kernel = r->tables->stages[s].rows[i].name;
    from = row_record(r, s, i);
  } else if (rec->sibling_kernel && te_rules_settings(r->c.rules)->roofline_family_attainable) {
    rec->attainable = rec->sibling_rate;
    rec->attainable_basis = AN_ATTAINABLE_FAMILY;
    rec->attainable_kernel = rec->sibling_kernel;
    from = sibling;
  }
  set_basis_class(rec, from);
  double frac = rec->attainable > 0 ? rate_of(rec) / rec->attainable : 1;
  rec->of_attainable_pct = frac * 100.0;
}

/* ------------------------------------------------------------------ entry */

static an_status prepare_stage(run *r, size_t s) {
  const an_stage_tables *st = &r->tables->stages[s];
  stage_work *w = &r->work[s];
  w->acc = calloc(st->n_rows ? st->n_rows : 1, sizeof *w->acc);
  if (!w->acc) return AN_ERR_NOMEM;
  for (size_t i = 0; i < st->n_rows; i++)
    if (!ut_u64map_put(&w->row_of, (uint64_t)(uintptr_t)st->rows[i].name, i)) return AN_ERR_NOMEM;
  return AN_OK;
}

static void work_free(run *r) {
  for (size_t s = 0; r->work && s < r->tables->n_stages; s++) {
    ut_u64map_free(&r->work[s].row_of);
    for (size_t i = 0; r->work[s].acc && i < r->tables->stages[s].n_rows; i++) {
      free(r->work[s].acc[i].shapes);
      free(r->work[s].acc[i].costs);
      ut_u64map_free(&r->work[s].acc[i].cost_of);
    }
    free(r->work[s].acc);
  }
  free(r->work);
  for (size_t i = 0; r->kept && i < r->fm->n; i++) view_ops_free(&r->kept[i]);
  free(r->kept);
  free(r->ceiling);
  mapping_free(&r->mc);
}

/* Every launch counted as having no device (the GPU is unknown): no record. */
static void count_unknown_device(run *r) {
  for (size_t s = 0; s < r->tables->n_stages; s++) {
    an_roofline_counts *n = &r->out->stages[s].counts;
    for (size_t i = 0; i < r->tables->stages[s].n_rows; i++) {
      n->launches += r->tables->stages[s].rows[i].launches;
      r->tables->stages[s].rows[i].roofline = 0;
    }
  }
}

/* The run's per-launch floors: the device pack's, each capped by the run's shortest launch
 * of its class (a kernel the trace shows finishing sooner is proof the part allows it); the
 * matrix floor never under the other (review 7: a 2 us floor on an 8.7 us GEMM launch left
 * half its time as tuning headroom no GEMM can give back). */
static void set_floor(run *r) {
  an_roofline_device *d = &r->out->device;
  d->pack_floor_us = r->c.dev->latency_floor_us;
  d->floor_basis = r->c.dev->latency_floor_basis;
  d->shortest_us = r->shortest_us;
  d->latency_floor_us = d->pack_floor_us;
  if (r->shortest_us > 0 && r->shortest_us < d->latency_floor_us)
    d->latency_floor_us = r->shortest_us;
  d->pack_matrix_floor_us = r->c.dev->latency_floor_matrix_us;
  d->shortest_matrix_us = r->shortest_matrix_us;
  d->matrix_floor_us = d->pack_matrix_floor_us;
  if (r->shortest_matrix_us > 0 && r->shortest_matrix_us < d->matrix_floor_us)
    d->matrix_floor_us = r->shortest_matrix_us;
  if (d->matrix_floor_us < d->latency_floor_us) d->matrix_floor_us = d->latency_floor_us;
}

static an_status run_all(run *r, const an_roofline_side *mapping) {
  an_status rc = AN_OK;
  for (size_t s = 0; rc == AN_OK && s < r->tables->n_stages; s++) rc = prepare_stage(r, s);
  if (rc != AN_OK) return rc;
  /* the same views on both sides (one file as mapping and formal input): their ops once */
  bool same_views =
      mapping && mapping->n && mapping->n == r->fm->n && mapping->views == r->fm->views;
  if (same_views && !(r->kept = calloc(mapping->n, sizeof *r->kept))) return AN_ERR_NOMEM;
  if (mapping && mapping->n) mapping_build(&r->c, mapping, &r->mc, r->kept);
  if (!ceiling_make(r)) return AN_ERR_NOMEM;
  cost_formal(r);
  set_floor(r);
  for (size_t s = 0; rc == AN_OK && s < r->tables->n_stages; s++) rc = build_records(r, s);
  for (size_t s = 0; rc == AN_OK && s < r->tables->n_stages; s++)
    for (size_t i = 0; i < r->out->stages[s].n; i++)
      set_attainable(r, &r->out->stages[s].records[i]);
  for (size_t s = 0; rc == AN_OK && s < r->tables->n_stages; s++)
    for (size_t i = 0; i < r->tables->stages[s].n_rows; i++) {
      uint32_t k = r->tables->stages[s].rows[i].roofline;
      if (k) set_headroom(r, &r->work[s].acc[i], &r->out->stages[s].records[k - 1]);
    }
  return rc == AN_OK && r->c.nomem ? AN_ERR_NOMEM : rc;
}

an_status an_roofline_build(const an_roofline_side *formal, const an_roofline_side *mapping,
                            const te_rules *rules, an_strtab *strings, an_tables *tables,
                            an_roofline_result *out) {
  memset(out, 0, sizeof *out);
  run r = {.c = {rules, NULL, NULL, false, {formal, mapping}, NULL, NULL},
           .strings = strings,
           .fm = formal,
           .tables = tables,
           .out = out};
  out->stages = calloc(tables->n_stages ? tables->n_stages : 1, sizeof *out->stages);
  r.work = calloc(tables->n_stages ? tables->n_stages : 1, sizeof *r.work);
  if (!out->stages || !r.work) {
    free(r.work);
    an_roofline_free(out);
    return AN_ERR_NOMEM;
  }
  out->n_stages = tables->n_stages;
  r.c.dev = find_device(formal, rules, strings, &out->device);
  r.c.tf32 = te_rules_matcher(rules, "tf32_matmul");
  r.dequant = te_rules_matcher(rules, "precision_dequant_kernel");
  an_status rc = AN_OK;
  if (r.c.dev) {
    out->device.id = r.c.dev->id;
    out->device.label = r.c.dev->label;
    out->device.source = r.c.dev->source;
    out->device.hbm_tbs = r.c.dev->hbm_tbs;
    out->device.host_link_gbs = r.c.dev->host_link_gbs;
    out->device.attainable_tbs = r.c.dev->hbm_tbs * r.c.dev->attainable_bandwidth;
    rc = run_all(&r, mapping);
  } else {
    count_unknown_device(&r);
  }
  work_free(&r);
  if (rc != AN_OK) an_roofline_free(out);
  return rc;
}

void an_roofline_free(an_roofline_result *r) {
  for (size_t s = 0; r && s < r->n_stages; s++) {
    for (size_t i = 0; i < r->stages[s].n; i++)
      free((void *)(uintptr_t)r->stages[s].records[i].shapes);
    free(r->stages[s].records);
  }
  if (r) free(r->stages);
  if (r) memset(r, 0, sizeof *r);
}
