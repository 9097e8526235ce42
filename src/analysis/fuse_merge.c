/*
 * analysis/fuse_merge.c - the GEMM merge family of the fuse table (pattern `merge:`,
 * docs/rules.md "GEMM merges", deviation F13): sibling GEMMs that read one input. Q, K and
 * V as three [M x K] x [K x N] GEMMs, or gate and up as two, each read the layer's norm
 * output again and each runs below the rate one wider GEMM reaches; vLLM's and SGLang's
 * QKVParallelLinear / MergedColumnParallelLinear run them as one.
 *
 * Evidence comes from the shapes alone (no kernel names): each kernel's launching CPU op
 * (trace_view.h) and its gemm cost model (op_costs pack) give M (leading dims folded), K,
 * N and the format. On one stream, in launch order, GEMMs of the same [M, K] and format
 * are siblings when at most the pattern's max_between kernels sit between two of them and
 * none of those can write the input: each has a launching op with Input Dims, none of
 * whose tensors has the input's element count (an op writes a tensor it holds). A kernel
 * with no op or no shapes ends the run: its writes are unknown.
 *
 * An earlier sibling whose output is shaped like the input (N = K) may be the later one's
 * input: a chain (fc2(fc1(x))), not siblings. Such a run counts only when the kernel right
 * after it reads every sibling's output jointly (attention reading Q, K and V; SiLU x mul
 * reading gate and up): one input of each sibling's [M x N] size in its op's Input Dims.
 *
 * Where the trace has Python stacks, siblings come from one module: the frames their
 * kernels resolve to (attrib.h) name the same function of the same file (q_proj, k_proj and
 * v_proj are called from one attention forward, at different lines); a run whose resolved
 * siblings come from different functions is no run.
 *
 * The bound of a run is its time less the merged GEMM's FLOPs at the best GEMM rate the
 * stage reaches in the same format (the basis the row names).
 */
#include "analysis/fuse_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attrib.h"
#include "analysis/kmap_internal.h"
#include "analysis/op_shapes.h"
#include "util/map.h"
#include "util/vec.h"

/* What one kernel of the stage is to the merge search. */
typedef struct kfact {
  const tr_event *e;  /* the kernel */
  const tr_event *op; /* its launching op, NULL when none */
  bool gemm;          /* a costed, unbatched GEMM launch */
  bool shapes;        /* its op's Input Dims parse (a non-GEMM kernel) */
  double m, n, k;     /* gemm */
  const te_dtype *dtype;
  double us;
  const double *elems; /* non-GEMM: the tensor inputs' element counts (the memo's, until
                          the next kernel's facts) */
  size_t n_elems;
  const char *dims; /* non-GEMM: its op's Input Dims (borrowed from the trace) */
} kfact;

/* One stream's open run. */
typedef struct open_run {
  an_merge_run run;
  const tr_event *last_op; /* the last sibling's op: its other kernels (split-K) join it */
  double last_us;          /* the time of the kernel that stands for the last sibling */
  long between;            /* kernels since the last sibling */
  bool chainable;          /* a sibling's output is shaped like the input (N == K) */
  bool joint; /* the kernel right after the last sibling reads every sibling's output */
  bool heads; /* ... or reads a sibling's output split into attention heads */
} open_run;

/* The facts of kernel e of view vi, whose launching op is ops[at] (AN_NO_OP: none); false
 * when out of memory. */
static bool fact_of(const an_trace_view *v, size_t vi, const tr_event *e, uint32_t at,
                    an_op_shapes *shapes, kfact *f) {
  size_t n_ops;
  memset(f, 0, sizeof *f);
  f->us = tr_event_dur(v->trace, e);
  f->e = e;
  if (at == AN_NO_OP) return true;
  const tr_event *op = f->op = tr_trace_events(v->trace, TR_KIND_CPU_OP, &n_ops) + at;
  const an_op_shape *sh = an_op_shapes_get(shapes, vi, v->trace, op, &f->elems);
  if (!sh) return false;
  const an_gemm_shape *g = &sh->gemm;
  if (sh->is_gemm && g->batch == 1 && g->m > 0 && g->k > 0) {
    f->gemm = true;
    f->m = g->m, f->n = g->n, f->k = g->k, f->dtype = g->dtype;
    f->elems = NULL;
    return true;
  }
  f->shapes = sh->parsed;
  f->n_elems = sh->parsed ? sh->n_elems : 0;
  if (f->shapes)
    f->dims = tr_str_get(v->trace, tr_event_arg(v->trace, TR_KIND_CPU_OP, op, TR_ARG_INPUT_DIMS));
  return true;
}

/* Whether f's op holds a tensor of `elems` elements (it may write it). */
static bool holds(const kfact *f, double elems) {
  for (size_t i = 0; i < f->n_elems; i++)
    if (f->elems[i] == elems) return true;
  return false;
}

/* Whether f's op reads one distinct input of each sibling's [M x N] output. */
static bool reads_all(const kfact *f, const an_merge_run *run) {
  bool used[AN_MAX_OP_INPUTS] = {false};
  for (size_t s = 0; s < run->n; s++) {
    size_t i = 0;
    while (i < f->n_elems && (used[i] || f->elems[i] != run->m * run->n_out[s])) i++;
    if (i == f->n_elems) return false;
    used[i] = true;
  }
  return true;
}

/* Whether a tensor of dims d (rank 4) is an [M x N] output split into heads: batch x heads
 * x tokens x head_dim ([b, h, s, d] after the transpose) or batch x tokens x heads x
 * head_dim, tokens folded with the batch into M and heads x head_dim = N, more than one of
 * each. */
static bool head_split(const int64_t *d, double m, double n) {
  double b = (double)d[0], x = (double)d[1], y = (double)d[2], z = (double)d[3];
  return (b * y == m && x * z == n && x > 1 && z > 1) ||
         (b * x == m && y * z == n && y > 1 && z > 1);
}

/* Whether f's op reads one sibling's [M x N] output split into attention heads (RoPE on
 * Q or K, the attention reading Q): the siblings are the projections of one attention,
 * which all read the layer's input, not a chain of layers. */
static bool reads_heads(const kfact *f, const an_merge_run *run) {
  for (size_t i = 0; f->dims && i < f->n_elems; i++)
    for (size_t s = 0; s < run->n; s++) {
      int64_t d[AN_MAX_SHAPE_RANK];
      size_t rank = 0;
      if (f->elems[i] == run->m * run->n_out[s] &&
          an_op_input_dims(f->dims, i, d, AN_MAX_SHAPE_RANK, &rank) && rank == 4 &&
          head_split(d, run->m, run->n_out[s]))
        return true;
    }
  return false;
}

static bool push_run(an_merge_runs *out, const open_run *o) {
  if (o->run.n < 2 || (o->chainable && !o->joint && !o->heads)) return true;
  an_merge_run *g = ut_grow(out->runs, &out->cap, out->n + 1, sizeof *g);
  if (!g) return false;
  out->runs = g;
  out->runs[out->n++] = o->run;
  return true;
}

static void start_run(open_run *o, const kfact *f, uint32_t row) {
  memset(o, 0, sizeof *o);
  o->run.m = f->m, o->run.k = f->k, o->run.dtype = f->dtype;
  o->run.rows[0] = row;
  o->run.kernels[0] = f->e;
  o->run.n_out[0] = f->n;
  o->run.us_of[0] = f->us;
  o->run.n = 1;
  o->run.us = f->us;
  o->run.flops = 2 * f->m * f->n * f->k;
  o->chainable = f->n == f->k;
  o->last_op = f->op;
  o->last_us = f->us;
}

static bool sibling_of(const open_run *o, const kfact *f) {
  return o->run.n && o->run.n < AN_MAX_MERGE_SIBLINGS && f->m == o->run.m && f->k == o->run.k &&
         f->dtype == o->run.dtype;
}

/* One kernel of a stream through its open run; false when out of memory. */
static bool step(open_run *o, const kfact *f, uint32_t row, long max_between, an_merge_runs *out) {
  if (f->gemm && o->run.n && f->op == o->last_op) { /* one op, several kernels: one sibling */
    o->run.us += f->us;
    o->run.us_of[o->run.n - 1] += f->us;
    if (f->us > o->last_us) { /* its longest kernel stands for it, not a memset before it */
      o->run.rows[o->run.n - 1] = row;
      o->run.kernels[o->run.n - 1] = f->e;
      o->last_us = f->us;
    }
    return true;
  }
  if (f->gemm && sibling_of(o, f)) {
    size_t s = o->run.n++;
    o->run.rows[s] = row;
    o->run.kernels[s] = f->e;
    o->run.n_out[s] = f->n;
    o->run.us_of[s] = f->us;
    o->run.us += f->us;
    o->run.flops += 2 * f->m * f->n * f->k;
    o->chainable |= f->n == f->k;
    o->between = 0;
    o->last_op = f->op;
    o->last_us = f->us;
    return true;
  }
  if (o->run.n && o->between == 0) {
    o->joint = f->shapes && reads_all(f, &o->run);
    o->heads = f->shapes && o->chainable && reads_heads(f, &o->run);
  }
  bool ends = f->gemm || !f->shapes || holds(f, o->run.m * o->run.k) || ++o->between > max_between;
  if (o->run.n && ends) {
    if (!push_run(out, o)) return false;
    memset(o, 0, sizeof *o);
  }
  if (f->gemm) start_run(o, f, row);
  return true;
}

/* The rate of one GEMM op (FLOP per us over all its kernels); false when out of memory. */
static bool note_rate(an_merge_runs *out, const te_dtype *dtype, double flops, double us) {
  if (us <= 0 || flops <= 0) return true;
  an_merge_rate *g = ut_grow(out->rates, &out->cap_rates, out->n_rates + 1, sizeof *g);
  if (!g) return false;
  out->rates = g;
  out->rates[out->n_rates++] = (an_merge_rate){dtype, flops, flops / us};
  return true;
}

static int cmp_rate(const void *a, const void *b) {
  const an_merge_rate *x = a, *y = b;
  if (x->dtype != y->dtype) return (uintptr_t)x->dtype < (uintptr_t)y->dtype ? -1 : 1;
  return x->flops < y->flops ? -1 : x->flops > y->flops ? 1 : 0;
}

/* Sorts the rates by format and FLOPs; each then holds the best of its format up to its
 * FLOPs (a running maximum), which an_merge_best_rate finds by bisection. */
static void rates_finish(an_merge_runs *m) {
  if (m->n_rates) qsort(m->rates, m->n_rates, sizeof *m->rates, cmp_rate);
  for (size_t i = 1; i < m->n_rates; i++)
    if (m->rates[i].dtype == m->rates[i - 1].dtype && m->rates[i - 1].rate > m->rates[i].rate)
      m->rates[i].rate = m->rates[i - 1].rate;
}

/* One stream of a view: its open run and the GEMM op whose kernels it is adding up (the
 * op's rate counts all of them: a split-K GEMM's second kernel is no GEMM of its own). */
typedef struct lane {
  open_run open;
  const tr_event *op;
  const te_dtype *dtype;
  double flops, us;
} lane;

/* Kernel f into its lane's rate account. */
static bool lane_rate(an_merge_runs *out, lane *l, const kfact *f) {
  if (f->gemm && f->op == l->op) {
    l->us += f->us;
    return true;
  }
  if (l->op && !note_rate(out, l->dtype, l->flops, l->us)) return false;
  l->op = f->gemm ? f->op : NULL;
  l->dtype = f->dtype;
  l->flops = 2 * f->m * f->n * f->k;
  l->us = f->us;
  return true;
}

/* The runs of one view's kernels of the stage (block b of view vi; ev_row from position *k
 * on). */
static bool view_runs(const an_trace_view *v, size_t vi, size_t b, const uint32_t *ev_row,
                      size_t *k, an_op_shapes *shapes, long max_between, an_merge_runs *out) {
  const an_stage_kernels *sk = &v->stages[b];
  const uint32_t *ops = an_trace_view_stage_ops(v, b);
  ut_u64map ids = {0}; /* stream -> index into lanes */
  lane *lanes = NULL;
  size_t n_lanes = 0, cap = 0;
  kfact f;
  bool ok = ops != NULL;
  for (size_t i = 0; ok && i < sk->n; i++, (*k)++) {
    uint64_t at, stream = tr_event_stream(v->trace, sk->kernels[i]);
    if (!ut_u64map_get(&ids, stream, &at)) {
      lane *g = ut_grow(lanes, &cap, n_lanes + 1, sizeof *g);
      ok = g && ut_u64map_put(&ids, stream, n_lanes);
      if (!ok) break;
      lanes = g;
      memset(&lanes[n_lanes], 0, sizeof *lanes);
      at = n_lanes++;
    }
    ok = fact_of(v, vi, sk->kernels[i], ops[i], shapes, &f) && lane_rate(out, &lanes[at], &f) &&
         step(&lanes[at].open, &f, ev_row[*k], max_between, out);
  }
  for (size_t l = 0; ok && l < n_lanes; l++) {
    if (lanes[l].op) ok = note_rate(out, lanes[l].dtype, lanes[l].flops, lanes[l].us);
    ok = ok && push_run(out, &lanes[l].open);
  }
  free(lanes);
  ut_u64map_free(&ids);
  return ok;
}

/* Whether at s a line number starts: digits right after ':' or '(' ("path:20 forward",
 * "path(20): forward"). */
static bool line_at(const char *s) {
  return (*s == ':' || *s == '(') && isdigit((unsigned char)s[1]);
}

/* Whether two frames name the same function of the same file: equal once their line
 * numbers are left out. */
static bool same_function(const char *a, const char *b) {
  while (*a && *b) {
    bool la = line_at(a), lb = line_at(b);
    if (la != lb || *a++ != *b++) return false;
    while (la && isdigit((unsigned char)*a)) a++;
    while (lb && isdigit((unsigned char)*b)) b++;
  }
  return *a == *b;
}

/* Whether the run's resolved siblings name one function (unresolved ones say nothing);
 * *first: the first resolved location, NULL none. */
static bool one_module(const an_site_ctx *loc, size_t n, const char **where) {
  const char *first = NULL;
  for (size_t s = 0; s < n; s++) {
    if (!an_location_resolved(loc[s].location)) continue;
    if (!first)
      first = loc[s].location;
    else if (!same_function(first, loc[s].location))
      return false;
  }
  *where = first;
  return true;
}

/* Each resolved location of loc[0..n) as the kernel table displays it (kmap_internal.h
 * an_display_location). Locations and stacks are interned, so a (location, stack) pair met
 * again (most siblings share their callers: hf x 5, 600 kernels) is answered from the
 * first: a memo by stack, used when the location is the same too. False when out of
 * memory. */
static bool display_locations(const te_rules *r, an_strtab *strings, an_site_ctx *loc, size_t n) {
  const te_matcher *pref = te_rules_matcher(r, "preferred_location");
  const te_matcher *low = te_rules_matcher(r, "low_signal");
  ut_u64map seen = {0}; /* stack -> index + 1 of the first kernel with it, in loc */
  const char **from = malloc((n ? n : 1) * sizeof *from); /* each kernel's location before */
  bool ok = from != NULL;
  for (size_t s = 0; ok && s < n; s++) {
    from[s] = loc[s].location;
    if (!loc[s].stack) continue;
    uint64_t key = (uint64_t)(uintptr_t)loc[s].stack, first;
    bool known = ut_u64map_get(&seen, key, &first);
    if (known && from[first - 1] == from[s]) {
      loc[s].location = loc[first - 1].location;
      continue;
    }
    loc[s].location = an_display_location(r, pref, low, strings, from[s], loc[s].stack);
    ok = loc[s].location && (known || ut_u64map_put(&seen, key, s + 1));
  }
  ut_u64map_free(&seen);
  free(from);
  return ok;
}

/* Drops the runs out->runs[from..n) of view v whose siblings' Python frames name different
 * functions. The siblings of every run are resolved in one call: the resolver sweeps each
 * thread's frames once per call, so a call per run swept them once per run (hf x 5: 120
 * calls, 13 % of the run). False when out of memory. */
static bool module_gate(const an_trace_view *v, const te_rules *r, an_strtab *strings,
                        an_merge_runs *out, size_t from) {
  if (from == out->n) return true;
  size_t n = 0;
  for (size_t i = from; i < out->n; i++) n += out->runs[i].n;
  const tr_event **kernels = malloc(n * sizeof *kernels);
  an_site_ctx *loc = malloc(n * sizeof *loc);
  an_resolver *res = kernels && loc ? an_resolver_create(v->trace, v->ids, r, strings) : NULL;
  bool ok = res != NULL;
  n = 0;
  for (size_t i = from; ok && i < out->n; i++)
    for (size_t s = 0; s < out->runs[i].n; s++) kernels[n++] = out->runs[i].kernels[s];
  ok = ok && an_resolver_resolve(res, kernels, n, loc) == AN_OK;
  /* each launch at its model line, as the kernel table shows it: the resolver's frame can
   * be nn.Linear's forward, which every projection shares (review 12 defect 4) */
  ok = ok && display_locations(r, strings, loc, n);
  size_t kept = from;
  n = 0;
  for (size_t i = from; ok && i < out->n; i++) {
    an_merge_run run = out->runs[i];
    if (one_module(&loc[n], run.n, &run.location)) out->runs[kept++] = run;
    n += run.n;
  }
  an_resolver_destroy(res);
  free(kernels);
  free(loc);
  if (ok) out->n = kept;
  return ok;
}

bool an_fuse_merge_runs(const an_trace_view *views, size_t n_views, const te_stage *stage,
                        const uint32_t *ev_row, size_t n_ev, const te_rules *r,
                        const te_fusion_pattern *p, an_op_shapes *shapes, an_strtab *strings,
                        an_merge_runs *out) {
  memset(out, 0, sizeof *out);
  size_t k = 0;
  bool ok = true;
  for (size_t v = 0; ok && v < n_views; v++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[v], stage->id);
    size_t from = out->n;
    if (sk && k + sk->n <= n_ev)
      ok = view_runs(&views[v], v, (size_t)(sk - views[v].stages), ev_row, &k, shapes,
                     p->merge_max_between, out) &&
           module_gate(&views[v], r, strings, out, from);
  }
  if (!ok) an_merge_runs_free(out);
  if (ok) rates_finish(out);
  return ok;
}

double an_merge_best_rate(const an_merge_runs *m, const te_dtype *dtype, double max_flops) {
  size_t lo = 0, hi = m->n_rates; /* the last entry of dtype with flops <= max_flops */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const an_merge_rate *r = &m->rates[mid];
    bool before =
        (uintptr_t)r->dtype < (uintptr_t)dtype || (r->dtype == dtype && r->flops <= max_flops);
    if (before)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo && m->rates[lo - 1].dtype == dtype ? m->rates[lo - 1].rate : 0;
}

void an_merge_runs_free(an_merge_runs *m) {
  free(m->rates);
  free(m->runs);
  memset(m, 0, sizeof *m);
}
