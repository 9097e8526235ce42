/*
 * roofline_pack.c - the roofline's data as rule-pack sections (docs/roofline.md):
 * `dtypes:` (number formats), `devices:` (peaks per GPU), `op_costs:` (FLOPs and bytes of
 * CPU ops from their shapes) and `models:` (dimensions of known models).
 *
 * pack_load.c calls the item parsers here (every field checked at load, FILE:LINE:COL);
 * rules.c merges the entries by id like every other list; te_roofline_build resolves the
 * references between them at finalize (a dtype id, a named matcher) and builds the arrays
 * the queries read.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "diags.h"
#include "pack_parse.h"
#include "rules_internal.h"
#include "settings.h"

#define MAX_INPUT_INDEX 255 /* an op with more inputs than this is not modelled */
#define MIN_WEIGHT_BITS 1.0 /* expert weights: bits a weight, scales included */
#define MAX_WEIGHT_BITS 64.0
#define MAX_TFLOPS 1e6 /* 1 EFLOP/s: past any single device */
#define MAX_TBS 1000.0
#define MAX_LINK_GBS 1e5
#define MAX_LATENCY_FLOOR_US 1000.0 /* a floor past a millisecond is no launch floor */
#define MAX_UNITS 100000
#define MAX_MODEL_DIM 100000000L

static const char *const k_peaks[TE_PEAK_COUNT] = {"fp64", "fp32", "tf32", "bf16",
                                                   "fp16", "fp8",  "int8", "fp4"};

const char *te_peak_name(te_peak p) { return p >= 0 && p < TE_PEAK_COUNT ? k_peaks[p] : ""; }

/* ---------------------------------------------------------------- small parsers */

/* A peak class name, or "none" (TE_PEAK_NONE); false with an error otherwise. */
static bool get_peak(te_vctx *v, const ty_node *n, te_peak *out) {
  const char *s = te_get_nonempty_str(v, n, "peak");
  if (!s) return false;
  if (!strcmp(s, "none")) {
    *out = TE_PEAK_NONE;
    return true;
  }
  for (int p = 0; p < TE_PEAK_COUNT; p++)
    if (!strcmp(s, k_peaks[p])) {
      *out = (te_peak)p;
      return true;
    }
  te_verr(v, n,
          "unknown peak class '%.40s' (expected none, fp64, fp32, tf32, bf16, fp16, fp8, "
          "int8 or fp4)",
          s);
  return false;
}

/* An input index (0 .. MAX_INPUT_INDEX) at item[key] when present; *out keeps its value
 * (the default) when absent. */
static void opt_index(te_vctx *v, const ty_node *item, const char *key, int *out) {
  const ty_node *n = ty_get(item, key);
  long x;
  if (n && te_get_int(v, n, key, 0, MAX_INPUT_INDEX, &x)) *out = (int)x;
}

/* A required input index. */
static void req_index(te_vctx *v, const ty_node *item, const char *key, const char *what,
                      const te_entry *hdr, int *out) {
  const ty_node *n = te_require(v, item, key, what, hdr);
  long x;
  if (n && te_get_int(v, n, key, 0, MAX_INPUT_INDEX, &x)) *out = (int)x;
}

/* A list of input indices; NULL with *n_out == 0 for an empty list or errors. */
static const int *index_list(te_vctx *v, const ty_node *n, const char *what, size_t *n_out) {
  *n_out = 0;
  if (!te_expect_seq(v, n, what) || !n->n) return NULL;
  int *out = te_arena_alloc(v->a, n->n * sizeof *out);
  for (size_t i = 0; out && i < n->n; i++) {
    long x;
    if (te_get_int(v, n->items[i], what, 0, MAX_INPUT_INDEX, &x)) out[(*n_out)++] = (int)x;
  }
  return out;
}

/* A dtype reference by id (resolved at finalize). */
static const char *dtype_ref(te_vctx *v, const ty_node *item, const char *key, te_origin *origin) {
  const ty_node *n = ty_get(item, key);
  if (!n) return NULL;
  *origin = te_origin_of(v, n);
  return te_get_nonempty_str(v, n, key);
}

/* ---------------------------------------------------------------- dtypes */

te_entry *te_parse_dtype(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "bytes", "peak", "scalar_type", "names", NULL};
  (void)ctx;
  dtype_entry *e = TE_ENTRY_NEW(v, item, what, keys, dtype_entry);
  if (!e) return NULL;
  te_dtype *d = &e->d;
  d->id = e->hdr.id;
  d->origin = e->hdr.origin;
  d->scalar_type = -1;
  const ty_node *x;
  if ((x = te_require(v, item, "bytes", what, &e->hdr)))
    te_get_num(v, x, "bytes", 0.125, 64, &d->bytes);
  if ((x = te_require(v, item, "peak", what, &e->hdr))) get_peak(v, x, &d->peak);
  if ((x = ty_get(item, "scalar_type"))) te_get_int(v, x, "scalar_type", 0, 1000, &d->scalar_type);
  if ((x = te_require(v, item, "names", what, &e->hdr))) {
    d->names = te_get_str_list(v, x, "names", &d->n_names);
    if (!d->n_names && x->kind == TY_SEQ)
      te_verr(v, x, "%s '%s' needs at least one name", what, d->id);
  }
  return &e->hdr;
}

/* ---------------------------------------------------------------- devices */

/* "9.4" -> 94. */
static bool parse_arch(te_vctx *v, const ty_node *n, long *out) {
  const char *s = te_get_nonempty_str(v, n, "arch");
  char *end = NULL;
  if (!s) return false;
  long major = strtol(s, &end, 10);
  if (end != s && *end == '.' && end[1] >= '0' && end[1] <= '9' && !end[2] && major > 0 &&
      major < 100) {
    *out = major * 10 + (end[1] - '0');
    return true;
  }
  te_verr(v, n,
          "arch must be \"MAJOR.MINOR\" (computeMajor.computeMinor, e.g. \"9.4\"), not '%.40s'", s);
  return false;
}

static void parse_memory_range(te_vctx *v, const ty_node *n, te_device_match *m) {
  static const char *const keys[] = {"min", "max", NULL};
  if (!te_expect_map(v, n, "memory_gib")) return;
  te_check_keys(v, n, keys, "memory_gib");
  const ty_node *lo = ty_get(n, "min"), *hi = ty_get(n, "max");
  if (lo) te_get_num(v, lo, "memory_gib.min", 0, 1e6, &m->memory_gib_min);
  if (hi) te_get_num(v, hi, "memory_gib.max", 0, 1e6, &m->memory_gib_max);
  if (!lo || !hi)
    te_verr(v, n, "memory_gib needs 'min' and 'max'");
  else if (m->memory_gib_max < m->memory_gib_min)
    te_verr(v, n, "memory_gib: max is below min");
}

/* One way to recognise the device: a name matcher, or (for a blank name) arch / sms /
 * memory; each condition optional, at least one given. */
static void parse_device_match(te_vctx *v, const ty_node *n, te_device_match *m, te_mref *name) {
  static const char *const keys[] = {"name", "arch", "sms", "memory_gib", NULL};
  m->arch = m->sms = -1;
  if (!te_expect_map(v, n, "a device match")) return;
  te_check_keys(v, n, keys, "a device match");
  const ty_node *x;
  if (!n->n) te_verr(v, n, "a device match needs 'name', 'arch', 'sms' or 'memory_gib'");
  if ((x = ty_get(n, "name"))) te_parse_mref(v, x, "device name", name);
  if ((x = ty_get(n, "arch"))) parse_arch(v, x, &m->arch);
  if ((x = ty_get(n, "sms"))) te_get_int(v, x, "sms", 1, MAX_UNITS, &m->sms);
  if ((x = ty_get(n, "memory_gib"))) parse_memory_range(v, x, m);
}

static void parse_device_matches(te_vctx *v, const ty_node *n, device_entry *e) {
  const ty_node *one = n;
  size_t count = n->kind == TY_SEQ ? n->n : 1;
  if (n->kind == TY_SEQ && !n->n) te_verr(v, n, "device match list is empty");
  e->match = te_arena_alloc(v->a, (count ? count : 1) * sizeof *e->match);
  e->names = te_arena_alloc(v->a, (count ? count : 1) * sizeof *e->names);
  if (!e->match || !e->names) return;
  for (size_t i = 0; i < count; i++) {
    if (n->kind == TY_SEQ) one = n->items[i];
    parse_device_match(v, one, &e->match[i], &e->names[i]);
  }
  e->d.n_match = count;
  e->d.match = e->match;
}

static void parse_peaks(te_vctx *v, const ty_node *n, te_device *d) {
  if (!te_expect_map(v, n, "peak_tflops")) return;
  for (size_t i = 0; i < n->n; i++) {
    const ty_node *k = n->items[2 * i], *val = n->items[2 * i + 1];
    te_peak p;
    if (!get_peak(v, k, &p)) continue;
    if (p == TE_PEAK_NONE) {
      te_verr(v, k, "peak_tflops has no 'none' entry");
      continue;
    }
    te_get_num(v, val, "a peak (TFLOP/s)", 0, MAX_TFLOPS, &d->peak_tflops[p]);
  }
}

static void parse_attainable(te_vctx *v, const ty_node *n, te_device *d) {
  static const char *const keys[] = {"bandwidth", "compute", "basis", NULL};
  if (!te_expect_map(v, n, "attainable")) return;
  te_check_keys(v, n, keys, "attainable");
  const char *const req[] = {"bandwidth", "compute", "basis"};
  double *dst[] = {&d->attainable_bandwidth, &d->attainable_compute};
  for (int i = 0; i < 3; i++) {
    const ty_node *x = ty_get(n, req[i]);
    if (!x)
      te_verr(v, n, "attainable needs '%s'", req[i]);
    else if (i < 2)
      te_get_num(v, x, req[i], 0.01, 1, dst[i]);
    else
      d->attainable_basis = te_get_nonempty_str(v, x, "attainable.basis");
  }
}

/* Optional: a pack of one's own need not state a floor (then no launch is floored). */
static void parse_latency_floor(te_vctx *v, const ty_node *n, te_device *d) {
  static const char *const keys[] = {"us", "matrix_us", "basis", NULL};
  if (!te_expect_map(v, n, "latency_floor")) return;
  te_check_keys(v, n, keys, "latency_floor");
  const ty_node *us = ty_get(n, "us"), *basis = ty_get(n, "basis");
  if (!us || !basis) {
    te_verr(v, n, "latency_floor needs '%s'", us ? "basis" : "us");
    return;
  }
  te_get_num(v, us, "latency_floor.us", 0.01, MAX_LATENCY_FLOOR_US, &d->latency_floor_us);
  const ty_node *matrix = ty_get(n, "matrix_us");
  if (matrix)
    te_get_num(v, matrix, "latency_floor.matrix_us", d->latency_floor_us, MAX_LATENCY_FLOOR_US,
               &d->latency_floor_matrix_us);
  d->latency_floor_basis = te_get_nonempty_str(v, basis, "latency_floor.basis");
}

/* Optional: the part's own attention ceiling (docs/roofline.md "Attention ceiling"), points
 * keyed as roofline.attention_ceiling, each a fraction of the format's dense peak. */
static void parse_attention_ceiling(te_vctx *v, const ty_node *n, te_device *d) {
  static const char *const keys[] = {"points", "basis", NULL};
  if (!te_expect_map(v, n, "attention_ceiling")) return;
  te_check_keys(v, n, keys, "attention_ceiling");
  const ty_node *pts = ty_get(n, "points"), *basis = ty_get(n, "basis");
  if (!pts || !basis) {
    te_verr(v, n, "attention_ceiling needs '%s'", pts ? "basis" : "points");
    return;
  }
  d->attention_ceiling_basis = te_get_nonempty_str(v, basis, "attention_ceiling.basis");
  if (!te_expect_map(v, pts, "attention_ceiling.points") || !pts->n) return;
  const char **k = te_arena_alloc(v->a, pts->n * sizeof *k);
  double *x = te_arena_alloc(v->a, pts->n * sizeof *x);
  if (!k || !x) return;
  size_t m = 0;
  for (size_t i = 0; i < pts->n; i++) {
    const ty_node *key = pts->items[2 * i], *val = pts->items[2 * i + 1];
    const char *s = te_get_nonempty_str(v, key, "an attention_ceiling point");
    if (s && te_choice_index(TE_ATTENTION_CEILING_POINTS, s, strlen(s)) < 0)
      te_verr(v, key, "attention_ceiling point must be one of %s, not '%.40s'",
              TE_ATTENTION_CEILING_POINTS, s);
    else if (s && te_get_num(v, val, "an attention_ceiling fraction", 0, 1, &x[m]))
      k[m++] = s;
  }
  d->attention_ceiling = (te_number_map){m, k, x, 0};
}

te_entry *te_parse_device(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {
      HEADER_KEYS,         "label",         "match",       "sms",        "hbm_tbs",
      "link_gbs",          "host_link_gbs", "peak_tflops", "attainable", "latency_floor",
      "attention_ceiling", "source",        NULL};
  (void)ctx;
  device_entry *e = TE_ENTRY_NEW(v, item, what, keys, device_entry);
  if (!e) return NULL;
  te_device *d = &e->d;
  d->id = e->hdr.id;
  d->origin = e->hdr.origin;
  const ty_node *x;
  if ((x = te_require(v, item, "label", what, &e->hdr)))
    d->label = te_get_nonempty_str(v, x, "label");
  if ((x = te_require(v, item, "match", what, &e->hdr))) parse_device_matches(v, x, e);
  if ((x = te_require(v, item, "sms", what, &e->hdr)))
    te_get_int(v, x, "sms", 1, MAX_UNITS, &d->sms);
  if ((x = te_require(v, item, "hbm_tbs", what, &e->hdr)))
    te_get_num(v, x, "hbm_tbs", 0.01, MAX_TBS, &d->hbm_tbs);
  if ((x = te_require(v, item, "link_gbs", what, &e->hdr)))
    te_get_num(v, x, "link_gbs", 0, MAX_LINK_GBS, &d->link_gbs);
  if ((x = ty_get(item, "host_link_gbs")))
    te_get_num(v, x, "host_link_gbs", 0, MAX_LINK_GBS, &d->host_link_gbs);
  if ((x = te_require(v, item, "peak_tflops", what, &e->hdr))) parse_peaks(v, x, d);
  if ((x = te_require(v, item, "attainable", what, &e->hdr))) parse_attainable(v, x, d);
  if ((x = ty_get(item, "latency_floor"))) parse_latency_floor(v, x, d);
  if ((x = ty_get(item, "attention_ceiling"))) parse_attention_ceiling(v, x, d);
  if ((x = te_require(v, item, "source", what, &e->hdr)))
    d->source = te_get_nonempty_str(v, x, "source");
  return &e->hdr;
}

/* ---------------------------------------------------------------- op costs */

static void parse_gemm(te_vctx *v, const ty_node *n, op_cost_entry *e) {
  static const char *const keys[] = {"a",     "b",         "b_layout",      "bias", "out",
                                     "reads", "out_dtype", "out_dtype_arg", NULL};
  te_op_cost *c = &e->c;
  te_check_keys(v, n, keys, "gemm");
  req_index(v, n, "a", "gemm", &e->hdr, &c->a);
  req_index(v, n, "b", "gemm", &e->hdr, &c->b);
  opt_index(v, n, "bias", &c->bias);
  opt_index(v, n, "out", &c->out);
  opt_index(v, n, "out_dtype_arg", &c->out_dtype_arg);
  const ty_node *x;
  if ((x = ty_get(n, "b_layout"))) {
    const char *s = te_get_nonempty_str(v, x, "b_layout");
    if (s && strcmp(s, "kn") && strcmp(s, "nk"))
      te_verr(v, x, "b_layout must be kn (B is K x N) or nk (B is N x K, a linear weight)");
    c->b_nk = s && !strcmp(s, "nk");
  }
  if ((x = ty_get(n, "reads"))) c->reads = index_list(v, x, "gemm reads", &c->n_reads);
  e->out_dtype = dtype_ref(v, n, "out_dtype", &e->out_dtype_origin);
}

static void parse_grouped(te_vctx *v, const ty_node *n, op_cost_entry *e) {
  static const char *const keys[] = {"tokens",  "topk",          "topk_dim",
                                     "weights", "weight_layout", NULL};
  te_op_cost *c = &e->c;
  te_check_keys(v, n, keys, "grouped_gemm");
  req_index(v, n, "tokens", "grouped_gemm", &e->hdr, &c->tokens);
  req_index(v, n, "topk", "grouped_gemm", &e->hdr, &c->topk);
  c->topk_dim = 1;
  opt_index(v, n, "topk_dim", &c->topk_dim);
  const ty_node *x;
  if ((x = te_require(v, n, "weights", "grouped_gemm", &e->hdr))) {
    c->weights = index_list(v, x, "grouped_gemm weights", &c->n_weights);
    if (!c->n_weights && x->kind == TY_SEQ) te_verr(v, x, "grouped_gemm needs at least one weight");
  }
  if ((x = ty_get(n, "weight_layout"))) {
    const char *s = te_get_nonempty_str(v, x, "weight_layout");
    if (s && strcmp(s, "enk") && strcmp(s, "ekn"))
      te_verr(v, x, "weight_layout must be enk (E x N x K) or ekn (E x K x N)");
    c->weights_kn = s && !strcmp(s, "ekn");
  }
}

static void parse_attention(te_vctx *v, const ty_node *n, op_cost_entry *e) {
  static const char *const keys[] = {"q", "k", "v", "layout", "causal", "causal_arg", NULL};
  te_op_cost *c = &e->c;
  te_check_keys(v, n, keys, "attention");
  req_index(v, n, "q", "attention", &e->hdr, &c->q);
  req_index(v, n, "k", "attention", &e->hdr, &c->k);
  req_index(v, n, "v", "attention", &e->hdr, &c->v);
  opt_index(v, n, "causal_arg", &c->causal_arg);
  const ty_node *x;
  if ((x = ty_get(n, "causal"))) te_get_bool(v, x, "causal", &c->causal);
  if (x && c->causal_arg >= 0) te_verr(v, x, "give 'causal' or 'causal_arg', not both");
  if ((x = te_require(v, n, "layout", "attention", &e->hdr))) {
    const char *s = te_get_nonempty_str(v, x, "layout");
    if (s && strcmp(s, "bhsd") && strcmp(s, "bshd"))
      te_verr(v, x, "layout must be bhsd (SDPA) or bshd (flash attention)");
    c->bshd = s && !strcmp(s, "bshd");
  }
}

static void parse_elementwise(te_vctx *v, const ty_node *n, op_cost_entry *e) {
  static const char *const keys[] = {"reads", "writes", "flops_per_element", NULL};
  te_op_cost *c = &e->c;
  te_check_keys(v, n, keys, "elementwise");
  c->reads_all = true;
  const ty_node *x;
  if ((x = ty_get(n, "reads"))) {
    c->reads_all = x->kind == TY_SCALAR && !strcmp(x->str, "all");
    if (!c->reads_all) c->reads = index_list(v, x, "elementwise reads", &c->n_reads);
  }
  if ((x = ty_get(n, "writes"))) {
    if (x->kind == TY_SCALAR && !strcmp(x->str, "largest"))
      c->writes = TE_WRITES_LARGEST;
    else if (x->kind == TY_SCALAR && !strcmp(x->str, "none"))
      c->writes = TE_WRITES_NONE;
    else if (x->kind == TY_SEQ)
      c->writes = TE_WRITES_LIST, c->write_inputs = index_list(v, x, "writes", &c->n_writes);
    else
      te_verr(v, x, "writes must be largest, none or a list of input indices");
  }
  if ((x = ty_get(n, "flops_per_element")))
    te_get_num(v, x, "flops_per_element", 0, 1e6, &c->flops_per_element);
}

static void parse_gather(te_vctx *v, const ty_node *n, op_cost_entry *e) {
  static const char *const keys[] = {"source",     "index",     "dim", "dim_arg",
                                     "shape_from", "shape_arg", NULL};
  te_op_cost *c = &e->c;
  te_check_keys(v, n, keys, "gather");
  req_index(v, n, "source", "gather", &e->hdr, &c->source);
  opt_index(v, n, "index", &c->index);
  opt_index(v, n, "dim", &c->dim);
  opt_index(v, n, "dim_arg", &c->dim_arg);
  opt_index(v, n, "shape_arg", &c->shape_arg);
  const ty_node *x = ty_get(n, "shape_from");
  if (x) c->shape_from = te_get_nonempty_str(v, x, "shape_from");
  if (x && c->shape_arg < 0) te_verr(v, x, "shape_from needs shape_arg (the child's size list)");
  if (!x && c->index < 0)
    te_verr(v, n, "gather needs index (the index tensor) or shape_from (the output's shape)");
  if (c->dim < 0) c->dim = 0;
}

/* Exactly one of the kinds, with its parameters. */
static void parse_cost_kind(te_vctx *v, const ty_node *item, op_cost_entry *e) {
  static const char *const kinds[] = {"gemm", "grouped_gemm", "attention", "elementwise", "gather"};
  static void (*const parsers[])(te_vctx *, const ty_node *, op_cost_entry *) = {
      parse_gemm, parse_grouped, parse_attention, parse_elementwise, parse_gather};
  int found = -1;
  for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++) {
    const ty_node *n = ty_get(item, kinds[k]);
    if (!n) continue;
    if (found >= 0) {
      te_verr(v, n, "op cost model '%s' gives both '%s' and '%s'", e->hdr.id, kinds[found],
              kinds[k]);
      continue;
    }
    found = k;
    e->c.kind = (te_cost_kind)k;
    if (te_expect_map(v, n, kinds[k])) parsers[k](v, n, e);
  }
  if (found < 0)
    te_verr(v, item,
            "op cost model '%s' needs one of gemm, grouped_gemm, attention, elementwise, gather",
            e->hdr.id);
}

te_entry *te_parse_op_cost(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "ops",         "gemm",   "grouped_gemm",
                                     "attention", "elementwise", "gather", NULL};
  (void)ctx;
  op_cost_entry *e = TE_ENTRY_NEW(v, item, what, keys, op_cost_entry);
  if (!e) return NULL;
  te_op_cost *c = &e->c;
  c->id = e->hdr.id;
  c->origin = e->hdr.origin;
  c->bias = c->out = c->out_dtype_arg = c->causal_arg = -1;
  c->index = c->dim = c->dim_arg = c->shape_arg = -1;
  const ty_node *x;
  if ((x = te_require(v, item, "ops", what, &e->hdr))) {
    c->ops = te_get_str_list(v, x, "ops", &c->n_ops);
    if (!c->n_ops && x->kind == TY_SEQ) te_verr(v, x, "%s '%s' names no op", what, c->id);
  }
  parse_cost_kind(v, item, e);
  return &e->hdr;
}

/* ---------------------------------------------------------------- models */

/* The model's layer_types (the cycle of layer kinds its layers repeat, as its config.json
 * lists them: "sliding" or "full"); a window without them slides on every layer. */
static void layer_types(te_vctx *v, const ty_node *item, const char *what, te_model *m) {
  const ty_node *x = ty_get(item, "layer_types");
  m->layer_cycle = m->sliding_window > 0;
  m->sliding_layers = m->sliding_window > 0;
  if (!x) return;
  size_t n = 0;
  const char **types = te_get_str_list(v, x, "layer_types", &n);
  if (!types && x->kind != TY_SEQ) return; /* not a list: said already */
  if (!n || n > TE_MAX_LAYER_CYCLE) {
    te_verr(v, x, "%s '%s': layer_types needs 1 to %d entries, has %zu", what, m->id,
            TE_MAX_LAYER_CYCLE, n);
    return;
  }
  m->layer_cycle = (long)n;
  m->sliding_layers = 0;
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(types[i], "sliding"))
      m->sliding_layers |= (uint64_t)1 << i;
    else if (strcmp(types[i], "full") != 0)
      te_verr(v, x, "%s '%s': layer type '%s' is neither 'sliding' nor 'full'", what, m->id,
              types[i]);
  }
  if (m->sliding_layers && m->sliding_window <= 0)
    te_verr(v, x, "%s '%s': sliding layers need sliding_window", what, m->id);
}

te_entry *te_parse_model(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const dims[] = {"hidden",   "intermediate",     "layers",        "heads",
                                     "kv_heads", "head_dim",         "vocab",         "experts",
                                     "topk",     "moe_intermediate", "sliding_window"};
  static const char *const keys[] = {
      HEADER_KEYS,        "label",        "match",   "hidden",
      "intermediate",     "layers",       "heads",   "kv_heads",
      "head_dim",         "vocab",        "experts", "topk",
      "moe_intermediate", "weight_dtype", "source",  "expert_weight_bits",
      "sliding_window",   "layer_types",  NULL};
  (void)ctx;
  model_entry *e = TE_ENTRY_NEW(v, item, what, keys, model_entry);
  if (!e) return NULL;
  te_model *m = &e->m;
  m->id = e->hdr.id;
  m->origin = e->hdr.origin;
  long *dst[] = {&m->hidden,   &m->intermediate,     &m->layers,        &m->heads,
                 &m->kv_heads, &m->head_dim,         &m->vocab,         &m->experts,
                 &m->topk,     &m->moe_intermediate, &m->sliding_window};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    const ty_node *x = i < 7 ? te_require(v, item, dims[i], what, &e->hdr) : ty_get(item, dims[i]);
    if (x) te_get_int(v, x, dims[i], i < 7 ? 1 : 0, MAX_MODEL_DIM, dst[i]);
  }
  if ((m->experts > 0) != (m->topk > 0) || (m->experts > 0) != (m->moe_intermediate > 0))
    te_verr(v, item, "%s '%s': experts, topk and moe_intermediate go together", what, m->id);
  if (m->experts > 0 && m->topk > m->experts)
    te_verr(v, item, "%s '%s': topk %ld exceeds its %ld experts", what, m->id, m->topk, m->experts);
  const ty_node *bits = ty_get(item, "expert_weight_bits");
  if (bits && !m->experts)
    te_verr(v, bits, "%s '%s': expert_weight_bits needs experts", what, m->id);
  else if (bits)
    te_get_num(v, bits, "expert_weight_bits", MIN_WEIGHT_BITS, MAX_WEIGHT_BITS,
               &m->expert_weight_bits);
  layer_types(v, item, what, m);
  const ty_node *x;
  if ((x = te_require(v, item, "label", what, &e->hdr)))
    m->label = te_get_nonempty_str(v, x, "label");
  if ((x = te_require(v, item, "match", what, &e->hdr)))
    te_parse_mref(v, x, "model match", &e->match);
  if ((x = te_require(v, item, "source", what, &e->hdr)))
    m->source = te_get_nonempty_str(v, x, "source");
  if (te_require(v, item, "weight_dtype", what, &e->hdr))
    e->weight_dtype = dtype_ref(v, item, "weight_dtype", &e->weight_dtype_origin);
  return &e->hdr;
}

/* ---------------------------------------------------------------- finalize */

typedef struct build_ctx {
  te_rules *r;
  te_diags *d;
  size_t *errors;
} build_ctx;

static void build_error(build_ctx *b, te_origin o, const char *what, const char *id) {
  (*b->errors)++;
  te_diags_add(b->d, TE_SEV_ERROR, o.file, o.line, o.col,
               "%s '%s' is not defined in any pack's "
               "'dtypes:'",
               what, id);
}

static const te_dtype *find_dtype(const te_rules *r, const char *id) {
  for (size_t i = 0; i < r->n_dtypes; i++)
    if (!strcmp(r->dtypes[i]->id, id)) return r->dtypes[i];
  return NULL;
}

/* Each list's public entries, in merged order. */
static const void **entries_of(te_rules *r, const te_list *l, size_t offset, size_t *n) {
  const void **out = te_arena_alloc(r->arena, (l->n ? l->n : 1) * sizeof *out);
  *n = out ? l->n : 0;
  for (size_t i = 0; out && i < l->n; i++) out[i] = (const char *)l->items[i] + offset;
  return out;
}

static int cmp_op_name(const void *a, const void *b) {
  const struct te_op_name *x = a, *y = b;
  return strcmp(x->name, y->name); /* names are distinct */
}

/* The op-name index: every (name, model) pair, sorted; a name modelled twice keeps the
 * later entry of the merged list. */
static bool build_op_names(te_rules *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_op_costs; i++) n += r->op_costs[i]->n_ops;
  r->op_names = te_arena_alloc(r->arena, (n ? n : 1) * sizeof *r->op_names);
  if (!r->op_names) return false;
  for (size_t i = 0; i < r->n_op_costs; i++)
    for (size_t k = 0; k < r->op_costs[i]->n_ops; k++) {
      const char *name = r->op_costs[i]->ops[k];
      size_t at = 0;
      while (at < r->n_op_names && strcmp(r->op_names[at].name, name)) at++;
      r->op_names[at] = (struct te_op_name){name, r->op_costs[i]};
      if (at == r->n_op_names) r->n_op_names++;
    }
  qsort(r->op_names, r->n_op_names, sizeof *r->op_names, cmp_op_name);
  return true;
}

static void resolve_devices(build_ctx *b) {
  const te_list *l = &b->r->merged.devices;
  for (size_t i = 0; i < l->n; i++) {
    device_entry *e = (device_entry *)l->items[i];
    for (size_t k = 0; k < e->d.n_match; k++)
      if (e->names[k].name || e->names[k].inline_m)
        e->match[k].name = te_rules_resolve_ref(b->r, b->d, &e->names[k], b->errors);
  }
}

static void resolve_costs_and_models(build_ctx *b) {
  const te_list *l = &b->r->merged.op_costs;
  for (size_t i = 0; i < l->n; i++) {
    op_cost_entry *e = (op_cost_entry *)l->items[i];
    if (!e->out_dtype) continue;
    e->c.out_dtype = find_dtype(b->r, e->out_dtype);
    if (!e->c.out_dtype) build_error(b, e->out_dtype_origin, "out_dtype", e->out_dtype);
  }
  l = &b->r->merged.models;
  for (size_t i = 0; i < l->n; i++) {
    model_entry *e = (model_entry *)l->items[i];
    e->m.match = te_rules_resolve_ref(b->r, b->d, &e->match, b->errors);
    if (!e->weight_dtype) continue;
    e->m.weight_dtype = find_dtype(b->r, e->weight_dtype);
    if (!e->m.weight_dtype) build_error(b, e->weight_dtype_origin, "weight_dtype", e->weight_dtype);
  }
}

bool te_roofline_build(te_rules *r, te_diags *d, size_t *errors) {
  build_ctx b = {r, d, errors};
  const te_sections *s = &r->merged;
  r->dtypes = (const te_dtype **)entries_of(r, &s->dtypes, offsetof(dtype_entry, d), &r->n_dtypes);
  r->devices =
      (const te_device **)entries_of(r, &s->devices, offsetof(device_entry, d), &r->n_devices);
  r->op_costs =
      (const te_op_cost **)entries_of(r, &s->op_costs, offsetof(op_cost_entry, c), &r->n_op_costs);
  r->models = (const te_model **)entries_of(r, &s->models, offsetof(model_entry, m), &r->n_models);
  if (!r->dtypes || !r->devices || !r->op_costs || !r->models) return false;
  resolve_devices(&b);
  resolve_costs_and_models(&b);
  return build_op_names(r);
}

/* ---------------------------------------------------------------- queries */

static bool ready(const te_rules *r) { return r && r->finalized && !r->failed; }

const te_dtype *te_rules_dtype(const te_rules *r, const char *spelling) {
  for (size_t i = 0; ready(r) && spelling && i < r->n_dtypes; i++)
    for (size_t k = 0; k < r->dtypes[i]->n_names; k++)
      if (!strcmp(r->dtypes[i]->names[k], spelling)) return r->dtypes[i];
  return NULL;
}

const te_dtype *te_rules_dtype_by_id(const te_rules *r, const char *id) {
  return ready(r) && id ? find_dtype(r, id) : NULL;
}

const te_dtype *te_rules_dtype_by_code(const te_rules *r, long code) {
  for (size_t i = 0; ready(r) && code >= 0 && i < r->n_dtypes; i++)
    if (r->dtypes[i]->scalar_type == code) return r->dtypes[i];
  return NULL;
}

static bool match_fits(const te_device_match *m, const char *name, long arch, long sms,
                       double mem) {
  bool blank = !name || !*name;
  if (m->name ? blank || !te_matcher_match(m->name, name, strlen(name)) : !blank) return false;
  if (m->arch >= 0 && m->arch != arch) return false;
  if (m->sms >= 0 && m->sms != sms) return false;
  if (m->memory_gib_max > 0 && (mem < m->memory_gib_min || mem > m->memory_gib_max)) return false;
  return true;
}

const te_device *te_rules_device(const te_rules *r, const char *name, long arch, long sms,
                                 double memory_gib) {
  for (size_t i = 0; ready(r) && i < r->n_devices; i++)
    for (size_t k = 0; k < r->devices[i]->n_match; k++)
      if (match_fits(&r->devices[i]->match[k], name, arch, sms, memory_gib)) return r->devices[i];
  return NULL;
}

size_t te_rules_device_count(const te_rules *r) { return ready(r) ? r->n_devices : 0; }

const te_device *te_rules_device_at(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_devices ? r->devices[i] : NULL;
}

/* libc's bsearch with build_op_names's comparator (see named_matcher in rules.c). */
const te_op_cost *te_rules_op_cost(const te_rules *r, const char *op_name) {
  if (!ready(r) || !op_name) return NULL;
  const struct te_op_name key = {op_name, NULL};
  const struct te_op_name *hit =
      bsearch(&key, r->op_names, r->n_op_names, sizeof *r->op_names, cmp_op_name);
  return hit ? hit->cost : NULL;
}

size_t te_rules_op_cost_count(const te_rules *r) { return ready(r) ? r->n_op_costs : 0; }

const te_op_cost *te_rules_op_cost_at(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_op_costs ? r->op_costs[i] : NULL;
}

const te_model *te_rules_model(const te_rules *r, const char *text) {
  for (size_t i = 0; ready(r) && text && i < r->n_models; i++)
    if (r->models[i]->match && te_matcher_match(r->models[i]->match, text, strlen(text)))
      return r->models[i];
  return NULL;
}

size_t te_rules_model_count(const te_rules *r) { return ready(r) ? r->n_models : 0; }

const te_model *te_rules_model_at(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_models ? r->models[i] : NULL;
}
