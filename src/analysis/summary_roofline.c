/*
 * analysis/summary_roofline.c - the roofline candidates of "What to try first"
 * (summary_internal.h, docs/roofline.md).
 *
 * A kernel below its attainable rate (under roofline.tune_below_pct of it) can be tuned or
 * replaced: its headroom, the time above max(attainable time, latency floor) per launch
 * (a launch cannot beat the device's floor, however little it moves); one at its bandwidth
 * bound moves fewer
 * bytes: half its time at most. The action is one per mechanism, not per kernel: a backend
 * is tuned (or replaced) for all its GEMMs at once, and the bytes of several bandwidth-bound
 * kernels fall by one choice of format. So the kernels of one op family, limiter and action
 * are one item whose bound is the sum of theirs, the family's kernels named as evidence
 * (tuning: only in the families of summary.tune_group_families, one backend each).
 * Once a family has a kernel to tune, its other kernels below their attainable rate join
 * that item with their headroom: the tuning pass covers them too. A row without a record
 * (no shapes, unknown device) gets no item: without evidence a kernel stays in its table.
 *
 * Precision (review 10 defect 2): in a serving run, the GEMM and attention rows whose
 * format is a 16-bit float (summary.precision_families, summary.precision_dtypes; not a
 * kernel already in a lower format, matcher precision_done_kernel) can run in FP8: halving
 * the bytes a memory-bound row moves, or running a compute-bound row at the FP8 peak (where
 * the device has one), wins at most half its time at its present efficiency. It needs
 * summary.precision_min_pct of the step in such rows. One kernel is one item (issue 28;
 * audit 12 gap 1): a tuning item naming such rows takes FP8 as its alternative, with its
 * own bound and the two together; the rows no tuning item names are one precision item.
 * Their per-row "fewer bytes" items give way to it in a serving run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/op_cost.h"
#include "analysis/summary.h"
#include "analysis/summary_internal.h"
#include "util/limits.h"
#include "util/units.h"
#include "util/vec.h"

/* A kernel row's roofline as the summary reads it: its action, what that wins per step,
 * the time it covers per step (its launches with shapes) and its record. */
typedef struct rl_cand {
  size_t row;           /* its kernel row */
  const an_roofline *f; /* NULL: no record, or the row is not a candidate */
  an_action action;
  bool acts;      /* it has an action (its own, or its family's tuning) */
  bool headroom;  /* below its attainable rate, though not under the tuning bar */
  double t, win;  /* per step (t: less the share a merge item holds) */
  double merged;  /* per step: the share a merge item holds */
  double win_dev; /* win at the device pack's attainable rate (the ceiling of a row measured
                     against its family's lower best observed rate) */
  double frac;    /* achieved / attainable */
  double gain;    /* the share of its time tuning wins: its headroom (latency floor included) */
  bool done;      /* already in an item */
  const te_string_list *fold; /* a folding lever's GEMM families (roofline.levers_folding) */
  /* its lever (roofline_lever) and, for a folding one, the kernel's own lever
   * (roofline.levers_unfolded; NULL: none), looked up once per row */
  const char *lever, *unfolded;
} rl_cand;

/* The share of the row's per-step time its launches with shapes cover, on the per-step
 * basis: those inside the counted steps over the row's time there (launches outside them,
 * warm-up ones with no launch record, say nothing of the step). */
static double roofline_coverage(const an_roofline *f, const an_kernel_row *r) {
  double have = r->steps_us > 0 ? f->steps_time_us : f->time_us;
  double all = r->steps_us > 0 ? r->steps_us : r->total_us;
  return all > 0 && have < all ? have / all : 1.0;
}

static const te_matcher *done_matcher(const sm_ctx *c) {
  return te_rules_matcher(c->rules, "precision_done_kernel");
}

double sm_device_peak(const sm_ctx *c, te_peak p) {
  const char *id = c->rep->roofline_device.id;
  for (size_t i = 0; id && i < te_rules_device_count(c->rules); i++) {
    const te_device *d = te_rules_device_at(c->rules, i);
    if (d->id && !strcmp(d->id, id)) return d->peak_tflops[p];
  }
  return 0;
}

/* Whether a compute-bound row's kernel holds FP4 weights the device dequantises to its
 * 16-bit format (no FP4 peak: matcher precision_dequant_kernel): its FLOPs run at the
 * 16-bit peak, so it is no kernel already in a lower format (review 15 defect 4). */
static bool dequantised(const sm_ctx *c, const an_kernel_row *r, const an_roofline *f) {
  const te_matcher *m = c->dequant_kernel;
  return f && f->limiter == AN_LIMIT_COMPUTE && m &&
         te_matcher_match(m, r->name, strlen(r->name)) && sm_device_peak(c, TE_PEAK_FP4) <= 0;
}

/* Whether row r (record f) is one the precision item covers: a serving run, a family and a
 * 16-bit format of the packs, not already in a lower format by its name (unless the device
 * dequantises it). */
static bool precision_row(const sm_ctx *c, const an_kernel_row *r, const an_roofline *f) {
  const te_matcher *done = done_matcher(c);
  return c->workload == AN_WORKLOAD_SERVING && f && f->family && f->dtype &&
         te_string_list_has(&c->s->summary_precision_families, f->family) &&
         te_string_list_has(&c->s->summary_precision_dtypes, f->dtype) &&
         (!(done && te_matcher_match(done, r->name, strlen(r->name))) || dequantised(c, r, f));
}

/* The share of a row's time with shapes that tuning wins: its headroom (latency floor
 * included) over that time. */
static double tune_gain(const an_roofline *f) {
  return f->time_us > 0 ? f->headroom_us / f->time_us : 0;
}

/* The share of kernel row r's time a merge row that makes an item holds (its sibling
 * GEMMs): that item's bound is their time less one merged GEMM at the best rate a GEMM
 * reaches in the stage, the merged GEMM tuned, so the tuning item leaves that share to it
 * (one root cause: "merge and tune"; counting its headroom again would count the tuning
 * twice). The row's other launches (a GEMM of the same kernel that reads another input)
 * stay the tuning item's: the merge row's evidence says which share it holds. */
static double merged_share(const sm_ctx *c, const an_kernel_row *r) {
  double held = 0;
  for (size_t i = 0; i < c->g.st->n_fuse; i++) {
    const an_fuse_row *m = &c->g.st->fuse[i];
    if (!m->merge || !sm_fusion_acts(c, m)) continue;
    bool related = false;
    for (size_t k = 0; k < m->n_related && !related; k++)
      related = m->related[k] == r->name || !strcmp(m->related[k], r->name);
    if (!related) continue;
    double part = 1;
    for (size_t k = 0; k < m->n_evidence; k++) {
      const an_fuse_evidence *e = &m->evidence[k];
      if ((e->kernel == r->name || !strcmp(e->kernel, r->name)) && e->own_pct > 0 &&
          e->share_pct > 0)
        part = e->own_pct / e->share_pct;
    }
    held += part;
  }
  return held < 1 ? held : 1;
}

/* The share of a memory-bound row's time left once its bytes halve: half, or its FLOP
 * term's share of its byte term when that is larger (a balanced row); all of it when it
 * moves no bytes. */
static double fewer_bytes_floor(const an_roofline *f) {
  double half = f->mem_term_us / 2;
  double stays = f->comp_term_us > half ? f->comp_term_us : half;
  return f->mem_term_us > 0 && stays < f->mem_term_us ? stays / f->mem_term_us : 1;
}

/* The matcher name of a levers_running key's tail "LIB" or "LIB/FRAMEWORK" into lib;
 * false when the tail names a framework other than the run's (review 23 defect 4: a
 * backend's switch is one framework's, e.g. vLLM's --moe-backend). */
static bool running_lib(const char *tail, const char *framework, char *lib, size_t size) {
  const char *slash = strchr(tail, '/');
  if (slash && (!framework || strcmp(slash + 1, framework))) return false;
  int len = slash ? (int)(slash - tail) : (int)strlen(tail);
  int n = snprintf(lib, size, "lever_lib_%.*s", len, tail);
  return n > 0 && (size_t)n < size;
}

/* The lever of a tuning item's family on the run's platform (review 13 defects 2 and 3):
 * where its kernel already runs on a library the lever proposes (roofline.levers_running
 * "FAMILY/PLATFORM/LIB[/FRAMEWORK]" whose matcher lever_lib_LIB names the kernel), what is
 * left on that library; else the family's lever (roofline.levers "FAMILY/PLATFORM", then
 * "FAMILY/any"); NULL: none known (the item says so). */
static const char *roofline_lever(const sm_ctx *c, const an_roofline *f, const char *kernel,
                                  const char **taken) {
  *taken = NULL;
  /* review 17 defect 4: a piece fed by a copy its fusion row's chain takes along (the
   * per-head Q/K norm after the Q/K copy) is slow for that copy: the pattern's lever */
  for (size_t i = 0; i < c->g.st->n_fuse; i++) {
    const an_fuse_row *r = &c->g.st->fuse[i];
    if (r->shown && r->fed_lever && !strcmp(r->fed_piece, kernel)) return r->fed_lever;
  }
  if (!f->family) return NULL;
  const char *pf = an_platform_id(c->rep->run.context.platform.value);
  const char *pfs[] = {pf, "any"};
  const te_list_map *run = &c->s->roofline_levers_running;
  for (size_t i = 0; i < sizeof pfs / sizeof *pfs; i++) {
    if (!pfs[i]) continue;
    char key[96];
    int n = snprintf(key, sizeof key, "%s/%s/", f->family, pfs[i]);
    for (size_t k = 0; n > 0 && (size_t)n < sizeof key && k < run->n; k++) {
      if (strncmp(run->keys[k], key, (size_t)n) || !run->values[k].n) continue;
      char lib[96];
      if (!running_lib(run->keys[k] + n, c->rep->run.framework.id, lib, sizeof lib)) continue;
      const te_matcher *m = te_rules_matcher(c->rules, lib);
      if (m && te_matcher_match(m, kernel, strlen(kernel))) {
        *taken = run->keys[k];
        return run->values[k].items[0];
      }
    }
  }
  for (size_t i = 0; i < sizeof pfs / sizeof *pfs; i++) {
    if (!pfs[i]) continue;
    char key[96];
    snprintf(key, sizeof key, "%s/%s", f->family, pfs[i]);
    const te_string_list *t = te_list_map_get(&c->s->roofline_levers, key);
    if (t && t->n) return t->items[0];
  }
  return NULL;
}

/* The GEMM families of a kernel's folding lever (roofline.levers_folding: its lever folds it
 * into the GEMM before it, a GEMM of another library), NULL when its lever does not fold;
 * key: the levers_running key roofline_lever took (NULL: none). */
static const te_string_list *fold_families(const sm_ctx *c, const char *key) {
  const te_string_list *t = key ? te_list_map_get(&c->s->roofline_levers_folding, key) : NULL;
  return t && t->n ? t : NULL;
}

/* The lever of a folding kernel itself (roofline.levers_unfolded), NULL: none stated; key as
 * fold_families'. */
static const char *unfolded_lever(const sm_ctx *c, const char *key) {
  const te_string_list *t = key ? te_list_map_get(&c->s->roofline_levers_unfolded, key) : NULL;
  return t && t->n ? t->items[0] : NULL;
}

/* The tensors of an op's Input Dims text ("[[15360, 4096], [4096, 24576]]"), each by its
 * first and last dimension (scalars, empty lists and inputs an_op_input_dims cannot read
 * left out), at most cap; their count. */
static size_t dims_tensors(const char *s, long (*t)[2], size_t cap) {
  size_t n = 0, rank = 0;
  int64_t d[AN_MAX_SHAPE_RANK];
  for (size_t i = 0; i < AN_MAX_OP_INPUTS && n < cap; i++)
    if (an_op_input_dims(s, i, d, AN_MAX_SHAPE_RANK, &rank) && rank) {
      t[n][0] = (long)d[0];
      t[n++][1] = (long)d[rank - 1];
    }
  return n;
}

/* Whether a GEMM's Input Dims hold an input of m rows and w columns: a tensor of m rows and
 * a tensor with w as its first or last dimension (its output's columns: mm's and addmm's
 * weight [K, w], linear's [w, K]). */
static bool dims_hold(const char *dims, long m, long w) {
  long t[AN_FOLD_TENSORS_MAX][2];
  size_t n = dims_tensors(dims, t, AN_FOLD_TENSORS_MAX);
  bool rows = false, cols = false;
  for (size_t i = 0; i < n; i++) {
    rows = rows || t[i][0] == m;
    cols = cols || t[i][0] == w || t[i][1] == w;
  }
  return rows && cols;
}

/* The GEMM row a folding kernel (record f) folds into: a shown row of one of the families
 * fams whose op's shapes hold the kernel's input, the widest tensor of its largest shape
 * (a gated activation reads the gate_up GEMM's [tokens, 2 x intermediate] output); the
 * largest by time when several do. Index + 1, 0: none (no shapes); *dims its shape. */
static size_t fold_target(const sm_ctx *c, const an_roofline *f, const te_string_list *fams,
                          const char **dims) {
  long t[AN_FOLD_TENSORS_MAX][2], m = 0, w = 0;
  size_t n = f->n_shapes ? dims_tensors(f->shapes[0].dims, t, AN_FOLD_TENSORS_MAX) : 0;
  for (size_t i = 0; i < n; i++)
    if (t[i][1] > w) m = t[i][0], w = t[i][1];
  *dims = NULL;
  if (w <= 0) return 0;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) { /* rows are time-descending */
    const an_kernel_row *r = &c->g.st->kernels[i];
    const an_roofline *g = an_row_roofline(c->g.st, r);
    if (!r->shown || !g || !g->family || !te_string_list_has(fams, g->family)) continue;
    for (size_t k = 0; k < g->n_shapes; k++)
      if (g->shapes[k].dims && dims_hold(g->shapes[k].dims, m, w)) {
        *dims = g->shapes[k].dims;
        return i + 1;
      }
  }
  return 0;
}

/* A row wholly in a merge item keeps its action with no time of its own: a kernel under
 * the tuning bar still makes its family's tuning item for the others (review 13 defect 1:
 * tracelens' QKV GEMM under the bar was left out with its merge, so its family had no
 * kernel to tune while SGLang's had one: the bar and the merge are one rule in both). */
static rl_cand candidate(const sm_ctx *c, const an_kernel_row *r) {
  const an_roofline *f = an_row_roofline(c->g.st, r);
  rl_cand v = {0};
  /* a GEMM on the CUDA cores: a precision flag, not tuning (review 20 defect 3) */
  if (!r->shown || !f || f->of_attainable_pct <= 0 || f->achieved_pct <= 0 || r->total_us <= 0 ||
      sm_is_collective(c, r->name) || sm_fp32_simt(c, r))
    return v;
  v.f = f;
  v.frac = f->of_attainable_pct / 100.0;
  v.gain = tune_gain(f);
  double coverage = roofline_coverage(f, r);
  double held = merged_share(c, r);
  v.t = sm_row_per_step(c, r) * coverage * (1.0 - held);
  v.merged = sm_row_per_step(c, r) * coverage * held;
  double gain_dev = f->time_us > 0 ? f->headroom_device_us / f->time_us : v.gain;
  bool tune = f->of_attainable_pct < c->s->roofline_tune_below_pct;
  const char *key;
  v.lever = roofline_lever(c, f, r->name, &key);
  v.fold = fold_families(c, key);
  v.unfolded = unfolded_lever(c, key);
  /* review 19 defect 4: under the tuning bar a better kernel comes first, the fold after */
  bool unfold = v.fold && tune && v.frac < 1 && v.unfolded;
  if (v.fold && !unfold) { /* review 18 defect 5: the fold removes the kernel, not its headroom */
    v.action = AN_ACTION_FOLD_GEMM;
    v.win = v.win_dev = v.t;
    v.acts = v.t > 0;
  } else if (tune && v.frac < 1) {
    v.action = AN_ACTION_TUNE_KERNEL;
    v.win = v.t * v.gain;
    v.win_dev = v.t * gain_dev;
    v.acts = true;
  } else if (f->limiter == AN_LIMIT_MEMORY && !f->latency_bound && !precision_row(c, r, f)) {
    /* at the bound: half the bytes halve it (a 16-bit GEMM or attention row of a serving
     * run: the precision item's, with its family); a balanced row's FLOP term stays, so
     * fewer bytes win down to it at most */
    v.action = AN_ACTION_FEWER_BYTES;
    v.win = v.t * (1.0 - fewer_bytes_floor(f));
    v.win_dev = v.win;
    v.acts = v.win > 0;
  } else {
    v.headroom = v.frac < 1;
  }
  return v;
}

/* One mechanism: the same action on kernels of one op family and limiter; tuning only in
 * a family one backend serves (summary.tune_group_families). */
static bool same_group(const sm_ctx *c, const rl_cand *a, const rl_cand *b) {
  if (a == b) return true;
  if (a->fold || b->fold) return false; /* one GEMM each */
  if (a->action != b->action || a->f->limiter != b->f->limiter || !a->f->family || !b->f->family ||
      strcmp(a->f->family, b->f->family) != 0)
    return false;
  return a->action != AN_ACTION_TUNE_KERNEL ||
         te_string_list_has(&c->s->summary_tune_group_families, a->f->family);
}

/* A kernel with headroom joins its family's tuning when the family has a kernel to tune:
 * the same backend choice covers it. Such a kernel is compute-bound, or a memory-bound
 * 16-bit GEMM or attention row of a serving run (whose fewer-bytes lever is the tuning
 * item's FP8 alternative): one item per kernel set. */
static void join_tuning(const sm_ctx *c, rl_cand *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!v[i].f || !v[i].headroom) continue;
    rl_cand probe = v[i];
    probe.action = AN_ACTION_TUNE_KERNEL;
    for (size_t j = 0; j < n; j++) {
      if (!v[j].acts || v[j].action != AN_ACTION_TUNE_KERNEL || !same_group(c, &v[j], &probe))
        continue;
      v[i] = probe;
      v[i].acts = true;
      v[i].win = v[i].t * v[i].gain;
      const an_roofline *f = v[i].f;
      v[i].win_dev = f->time_us > 0 ? v[i].t * f->headroom_device_us / f->time_us : v[i].win;
      break;
    }
  }
}

/* A tuning item's kernel the bound takes only to its family's best observed rate, which
 * the ceiling takes to the device pack's: counted, with the two rates. */
static void ceiling_member(an_summary_item *it, const an_roofline *f) {
  it->ceiling_count++;
  if (f->attainable > it->ceiling_from) it->ceiling_from = f->attainable;
  if (f->device_rate > it->ceiling_to) it->ceiling_to = f->device_rate;
}

/* A unit of a tuning item's rates: one shape of a member (its CPU op and Input Dims), or a
 * member row as a whole when it has no shapes (a graph replay's launches costed from the
 * model's dimensions: no op, so no shape; review 19 defect 7). */
typedef struct rl_unit {
  const rl_cand *v;
  const an_roofline_shape *sh; /* NULL: the row as a whole */
} rl_unit;

/* A unit's launches, and its time past their latency floors when roofline.launch_ramp
 * holds (time = floor + work / rate a launch: launches of a few MB pay a larger share of
 * fixed cost, so a rate compared across sizes is the work's, past the floors). */
static size_t unit_launches(const rl_unit *u) {
  return u->sh ? u->sh->launches : u->v->f->launches_with_shapes;
}

static double unit_time(const rl_unit *u) {
  double t = u->sh ? u->sh->time_us : u->v->f->time_us;
  double floors = u->v->f->floor_added ? u->v->f->latency_floor_us * (double)unit_launches(u) : 0;
  return t > floors ? t - floors : 0;
}

/* Its work in its row's limiter (FLOPs compute-bound, bytes memory-bound). */
static double unit_work(const rl_unit *u) {
  const an_roofline *f = u->v->f;
  bool compute = f->limiter == AN_LIMIT_COMPUTE;
  if (!u->sh) return compute ? f->flops : f->bytes;
  return (compute ? u->sh->flops : u->sh->bytes) * (double)u->sh->launches;
}

/* Its rate in the limiter's unit (TFLOP/s compute-bound, TB/s memory-bound). */
static double unit_rate(const rl_unit *u) {
  double t = unit_time(u);
  return t > 0 ? unit_work(u) / (t * UT_US_PER_S) : 0;
}

/* Whether a unit is evidence of a rate: roofline.comparable_min_us of time over
 * comparable_min_launches launches, not a latency-bound row's, and its floors at most
 * roofline.evidence_max_floor_pct of its time (a rate of launches that are mostly fixed
 * cost says they are tiny, not slow: vLLM decode's router GEMM, its sliding-window
 * attention). */
static bool unit_counts(const sm_ctx *c, const rl_unit *u) {
  size_t n = unit_launches(u);
  double t = u->sh ? u->sh->time_us : u->v->f->time_us;
  double floors = u->v->f->latency_floor_us * (double)n;
  return !u->v->f->latency_bound && t >= c->s->roofline_comparable_min_us &&
         n >= (size_t)c->s->roofline_comparable_min_launches &&
         floors <= t * c->s->roofline_evidence_max_floor_pct / 100.0;
}

/* Whether v[j] is in the item of v[i] (group_item marked it done; an earlier item of
 * another group may have marked it too). */
static bool member(const sm_ctx *c, const rl_cand *v, size_t i, size_t j) {
  return v[j].done && v[j].acts && v[j].f && same_group(c, &v[i], &v[j]);
}

/* The k-th unit of member v[j] (its shapes, else the row itself as its one unit); false
 * past its last. */
static bool unit_at(const rl_cand *w, size_t k, rl_unit *u) {
  size_t n = w->f->n_shapes ? w->f->n_shapes : 1;
  if (k >= n) return false;
  *u = (rl_unit){w, w->f->n_shapes ? &w->f->shapes[k] : NULL};
  return true;
}

/* The item's slowest unit (a shape, or a kernel without shapes), when it runs under
 * roofline.outlier_below_pct of the rate each of its sibling units (the item's others)
 * reaches: named, with their rate together (their work over their time) and what tuning
 * that one unit to it wins per step (review 18 defect 4; review 19 defect 7: vLLM decode's MoE down
 * projection at 0.9 TB/s beside its gate_up at 2.07, both graph-replayed with bytes from the
 * model's dimensions). */
static void outlier_shape(const sm_ctx *c, const rl_cand *v, size_t n, size_t i,
                          an_summary_item *it) {
  rl_unit low = {0}, u;
  for (size_t j = i; j < n; j++) /* the slowest counted unit of the item's members */
    for (size_t k = 0; member(c, v, i, j) && unit_at(&v[j], k, &u); k++)
      if (unit_counts(c, &u) && (!low.v || unit_rate(&u) < unit_rate(&low))) low = u;
  if (!low.v) return;
  double work = 0, time = 0, lo = 0, hi = 0;
  size_t sibs = 0;
  for (size_t j = i; j < n; j++)
    for (size_t k = 0; member(c, v, i, j) && unit_at(&v[j], k, &u); k++) {
      if ((u.v == low.v && u.sh == low.sh) || !unit_counts(c, &u)) continue;
      double rate = unit_rate(&u);
      sibs++;
      work += rate * unit_time(&u);
      time += unit_time(&u);
      lo = lo > 0 && lo < rate ? lo : rate;
      hi = hi > rate ? hi : rate;
    }
  double sib = time > 0 ? work / time : 0, rate = unit_rate(&low);
  /* one unit alone below every other (the slowest sibling's rate too): two units at one
   * low rate are a slow group, no outlier (SGLang decode's QKV and o_proj GEMMs, both at
   * 2.0 TB/s beside gate_up at 3.0) */
  if (sib <= 0 || rate >= lo * c->s->roofline_outlier_below_pct / 100.0) return;
  const rl_cand *slow = low.v;
  double per_step = slow->f->time_us > 0 ? slow->t / slow->f->time_us : 0;
  it->outlier = low.sh;
  it->outlier_kernel = !low.sh;
  it->outlier_launches = low.sh ? low.sh->launches : slow->f->launches_with_shapes;
  it->outlier_sibs = sibs;
  it->outlier_row = slow->row;
  it->outlier_rate = rate;
  it->outlier_sib_rate = sib;
  it->outlier_sib_lo = lo;
  it->outlier_sib_hi = hi;
  it->outlier_us = unit_time(&low) * (1 - rate / sib) * per_step;
  it->outlier_top_us = unit_time(&low) * (1 - rate / hi) * per_step;
}

/* A folding kernel's item: the GEMM it folds into and, when a tuning item names that GEMM,
 * its tuned time and that item's row (review 19 defect 4: the fold's break-even is against
 * the tuned GEMM, and the fold comes after the tuning). A kernel under the tuning bar is
 * tuned first (its own lever), the fold following for the time the tuned kernel takes. */
static void fold_item(sm_ctx *c, const rl_cand *v, size_t n, size_t i, an_summary_item *it) {
  it->fold_more_us = v[i].t;
  if (v[i].action == AN_ACTION_TUNE_KERNEL) {
    it->fold_then = true;
    it->fold_lever = it->lever;
    it->lever = v[i].unfolded;
    it->fold_more_us = v[i].t - v[i].win;
  }
  it->fold_row = fold_target(c, v[i].f, v[i].fold, &it->fold_dims);
  if (!it->fold_row) return;
  size_t g = it->fold_row - 1;
  it->fold_us = sm_row_per_step(c, &c->g.st->kernels[g]);
  sm_item_more(it, "kernel", c->g.st->id, g);
  for (size_t k = 0; k < n; k++)
    if (v[k].row == g && v[k].acts && v[k].action == AN_ACTION_TUNE_KERNEL && v[k].win > 0 &&
        v[k].win < it->fold_us) {
      it->fold_tuned_us = it->fold_us - v[k].win;
      an_summary_anchor(it->fold_anchor, sizeof it->fold_anchor, "kernel", c->g.st->id, g);
    }
  double ref = it->fold_tuned_us > 0 ? it->fold_tuned_us : it->fold_us;
  it->fold_breakeven_pct = ref > 0 ? it->fold_more_us / ref * 100.0 : 0;
}

/* The item of the group whose largest kernel is v[i]'s row (rows are time-descending). */
static void group_item(sm_ctx *c, rl_cand *v, size_t n, size_t i) {
  double win = 0, win_dev = 0, t = 0, merged = 0, lo = v[i].f->achieved_pct, hi = lo;
  size_t members = 0;
  for (size_t j = i; j < n; j++) {
    if (!v[j].acts || v[j].done || !same_group(c, &v[i], &v[j])) continue;
    win += v[j].win;
    win_dev += v[j].win_dev;
    t += v[j].t;
    merged += v[j].merged;
    members++;
    if (v[j].f->achieved_pct < lo) lo = v[j].f->achieved_pct;
    if (v[j].f->achieved_pct > hi) hi = v[j].f->achieved_pct;
  }
  const an_kernel_row *r = &c->g.st->kernels[v[i].row];
  const char *loc = r->n_shown_sites ? r->shown_sites[0]->location : NULL;
  an_summary_item *it =
      sm_add(c, AN_SUMMARY_KERNEL, v[i].action, v[i].row, loc, win, AN_BASIS_ROOFLINE, t);
  for (size_t j = i; j < n; j++) {
    if (!v[j].acts || v[j].done || !same_group(c, &v[i], &v[j])) continue;
    v[j].done = true;
    if (!it) continue;
    if (v[j].action == AN_ACTION_TUNE_KERNEL) {
      it->floored_launches += v[j].f->floored_launches;
      it->at_time_us += v[j].f->at_time_us;
      it->floor_time_us += v[j].f->floor_time_us;
    }
    if (v[j].action == AN_ACTION_TUNE_KERNEL && v[j].win_dev > v[j].win) ceiling_member(it, v[j].f);
    sm_item_kernel(c, c->g.st->kernels[v[j].row].name);
    if (j != i) sm_item_more(it, "kernel", c->g.st->id, v[j].row);
  }
  if (!it) return;
  it->basis_pct = hi;
  it->roofline = v[i].f;
  if (v[i].action == AN_ACTION_TUNE_KERNEL) it->merged_us = merged;
  if (v[i].action != AN_ACTION_FEWER_BYTES || v[i].f->balanced) it->lever = v[i].lever;
  if (v[i].fold) fold_item(c, v, n, i, it);
  if (v[i].action == AN_ACTION_TUNE_KERNEL && win_dev > win) it->ceiling_us = win_dev;
  if (v[i].action == AN_ACTION_TUNE_KERNEL) outlier_shape(c, v, n, i, it);
  if (members > 1) {
    it->what = v[i].f->family;
    it->count = members;
    it->basis_pct_lo = lo;
  }
}

/* The candidates are the shown rows with a record, in row order: the others take part in
 * nothing below (a table of 262,144 kernel names held a candidate per row, 15 MB at the
 * run's peak). */
void sm_roofline_items(sm_ctx *c) {
  rl_cand *v = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) {
    rl_cand x = candidate(c, &c->g.st->kernels[i]);
    if (!x.f) continue;
    rl_cand *q = ut_grow(v, &cap, n + 1, sizeof *q);
    if (!q) {
      free(v);
      c->nomem = true;
      return;
    }
    v = q;
    x.row = i;
    v[n++] = x;
  }
  join_tuning(c, v, n);
  for (size_t i = 0; i < n; i++) /* a merge item holds all their time: they anchored only */
    if (v[i].t <= 0) v[i].acts = false;
  for (size_t i = 0; i < n; i++)
    if (v[i].acts && !v[i].done) group_item(c, v, n, i);
  free(v);
}

/* ---------------------------------------------------------------- precision */

/* The device's FP8 dense peak (TFLOP/s), 0 when the pack states none or no device. */
static double fp8_peak(const sm_ctx *c) { return sm_device_peak(c, TE_PEAK_FP8); }

/* The record of kernel row r when it is a member of the precision item, else NULL: a
 * shown precision row that can win (a memory-bound one moves half the bytes; a
 * compute-bound one runs at the FP8 peak only where the device has one above its own). */
static const an_roofline *precision_member(const sm_ctx *c, const an_kernel_row *r, double fp8) {
  const an_roofline *f = an_row_roofline(c->g.st, r);
  bool wins = f && (f->limiter == AN_LIMIT_MEMORY || (f->peak > 0 && fp8 > f->peak));
  return r->shown && wins && precision_row(c, r, f) && !sm_is_collective(c, r->name) ? f : NULL;
}

/* What FP8 wins on a member per step at its present efficiency: half the bytes halve a
 * memory-bound row's time; the FP8 peak cuts a compute-bound row's by 1 - peak / FP8 peak
 * (a half where FP8 doubles the peak, as on H100 and MI300X). */
static double precision_win(const an_roofline *f, double x, double fp8) {
  return f->limiter == AN_LIMIT_MEMORY ? x / 2 : x * (1.0 - f->peak / fp8);
}

/* The term a member's bound is, as an AN_PREC_* bit: the lever FP8 pulls on it. */
static unsigned precision_term(const an_roofline *f) {
  if (f->limiter != AN_LIMIT_MEMORY) return AN_PREC_COMPUTE;
  return f->family && !strcmp(f->family, "attention") ? AN_PREC_KV : AN_PREC_WEIGHTS;
}

/* The precision lever over a set of rows (sel[i]: row i of the stage): what FP8 wins on
 * its members, their time, the memory-bound part, their count and largest row, the terms
 * their bounds are, the compute-bound rows' rate against their 16-bit peak (time-weighted
 * over their launches with shapes), and half of what tuning wins on them: the part FP8 and
 * tuning would both claim (FP8 halves a kernel's time at its present efficiency; tuning
 * then wins its headroom share of the half left). */
typedef struct prec_sum {
  double win, t, mem, tune_half;
  size_t n, top;
  unsigned terms;
  double peak_pct, peak;
} prec_sum;

static prec_sum precision_over(const sm_ctx *c, const bool *sel, double fp8) {
  const an_stage_report *st = c->g.st;
  prec_sum p = {.top = SIZE_MAX};
  double ct = 0, rate = 0;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    const an_roofline *f = sel[i] ? precision_member(c, r, fp8) : NULL;
    if (!f) continue;
    double x = sm_row_per_step(c, r);
    p.t += x;
    p.win += precision_win(f, x, fp8);
    p.tune_half += x * roofline_coverage(f, r) * tune_gain(f) / 2;
    p.terms |= precision_term(f) | (dequantised(c, r, f) ? AN_PREC_DEQUANT : 0u);
    if (p.n++ == 0) p.top = i; /* rows are time-descending */
    if (f->limiter == AN_LIMIT_MEMORY) {
      p.mem += x;
    } else if (f->time_us > 0) {
      ct += f->time_us;
      rate += f->achieved_tflops / f->peak * f->time_us;
      if (f->peak > p.peak) p.peak = f->peak; /* one format: bf16 and fp16 share it */
    }
  }
  if (ct > 0) p.peak_pct = rate / ct * 100.0;
  return p;
}

static void set_terms(an_summary_item *it, const prec_sum *p, double fp8) {
  it->prec_terms = p->terms;
  it->prec_peak_pct = p->peak_pct;
  it->prec_peak_tflops = p->peak;
  it->prec_fp8_tflops = p->peak > 0 ? fp8 : 0;
}

static bool tuning(const an_summary_item *it) {
  return it->basis == AN_BASIS_ROOFLINE && it->action == AN_ACTION_TUNE_KERNEL;
}

/* Marks in sel the precision members among item j's kernels; false: none. */
static bool item_members(const sm_ctx *c, size_t j, double fp8, bool *sel) {
  const an_stage_report *st = c->g.st;
  size_t end = j + 1 < c->n ? c->koff[j + 1] : c->nk;
  bool any = false;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const char *name = st->kernels[i].name;
    sel[i] = false;
    if (!precision_member(c, &st->kernels[i], fp8)) continue;
    for (size_t k = c->koff[j]; k < end && !sel[i]; k++)
      sel[i] = c->kpool[k] == name || !strcmp(c->kpool[k], name);
    any = any || sel[i];
  }
  return any;
}

/* A tuning item of the stage whose kernels FP8 also speeds up takes the FP8 lever as its
 * alternative, with its own bound and what both win together: one item per kernel set
 * (issue 28), the tuning first (it changes no numerics). Its members are marked taken. */
static void tuning_alternative(sm_ctx *c, size_t j, double fp8, bool *sel, bool *taken) {
  an_summary_item *it = &c->v[j];
  if (it->stage_id != c->g.st->id || !tuning(it) || !item_members(c, j, fp8, sel)) return;
  prec_sum p = precision_over(c, sel, fp8);
  if (p.win <= 0) return;
  it->alt_us = p.win;
  it->alt_basis_us = p.t;
  it->alt_mem_us = p.mem;
  it->alt_count = p.n;
  set_terms(it, &p, fp8);
  /* the two bounds less what both claim, at least the larger of them */
  double both = it->at_stake_us + p.win - p.tune_half;
  double most = it->at_stake_us > p.win ? it->at_stake_us : p.win;
  it->together_us = both > most ? both : most;
  for (size_t i = 0; i < c->g.st->n_kernels; i++) taken[i] = taken[i] || sel[i];
}

/* The precision item of the members no tuning item names (a kernel at its attainable rate
 * still moves half the bytes in FP8). */
static void precision_rest(sm_ctx *c, const bool *sel, double fp8) {
  const an_stage_report *st = c->g.st;
  prec_sum p = precision_over(c, sel, fp8);
  if (!p.n) return;
  const an_kernel_row *tr = &st->kernels[p.top];
  const char *loc = tr->n_shown_sites ? tr->shown_sites[0]->location : NULL;
  an_summary_item *it = sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_FEWER_BYTES, p.top, loc, p.win,
                               AN_BASIS_PRECISION, p.t);
  if (!it) return;
  it->count = p.n;
  it->detail_us = p.mem;
  it->roofline = an_row_roofline(st, tr);
  set_terms(it, &p, fp8);
  for (size_t i = 0; i < st->n_kernels; i++) {
    if (!sel[i] || !precision_member(c, &st->kernels[i], fp8)) continue;
    sm_item_kernel(c, st->kernels[i].name);
    const char *fam = an_row_roofline(st, &st->kernels[i])->family; /* one family: named */
    it->what = i == p.top ? fam : it->what && !strcmp(it->what, fam) ? it->what : NULL;
    if (i != p.top) sm_item_more(it, "kernel", st->id, i);
  }
}

/* After the roofline items: when the stage's precision members take
 * summary.precision_min_pct of the step, each tuning item naming some takes FP8 as its
 * alternative, and the rest are one precision item. */
void sm_precision_item(sm_ctx *c) {
  const an_stage_report *st = c->g.st;
  double fp8 = fp8_peak(c);
  bool *sel = calloc(st->n_kernels ? 2 * st->n_kernels : 1, sizeof *sel);
  if (!sel) {
    c->nomem = true;
    return;
  }
  bool *taken = sel + st->n_kernels;
  for (size_t i = 0; i < st->n_kernels; i++) sel[i] = true;
  prec_sum all = precision_over(c, sel, fp8);
  if (all.n && c->g.step_us > 0 &&
      all.t / c->g.step_us * 100.0 >= c->s->summary_precision_min_pct) {
    for (size_t j = 0; j < c->n; j++) tuning_alternative(c, j, fp8, sel, taken);
    for (size_t i = 0; i < st->n_kernels; i++) sel[i] = !taken[i];
    precision_rest(c, sel, fp8);
  }
  free(sel);
}

/* ---------------------------------------------------------------- batch */

/* A row's bytes per step (its launches with shapes, scaled to its time in the steps). */
static double step_bytes(const sm_ctx *c, const an_kernel_row *r, const an_roofline *f) {
  return f->time_us > 0 ? f->bytes * sm_row_per_step(c, r) / f->time_us : 0;
}

/* Review 19 defect 9: the decode step's memory floor, the context of its per-kernel items:
 * the bytes a step must move (its weight GEMMs', summary.batch_families, and its attention's,
 * the KV cache, where the roofline has them) at the device's HBM peak (hbm, bytes per us),
 * and the time those rows take above it: row r's share (gemm: a weight GEMM's). The step's
 * other kernels and its idle are the rest of the gap. */
static void floor_row(const sm_ctx *c, an_summary_item *it, const an_kernel_row *r,
                      const an_roofline *f, bool gemm, double hbm) {
  if (hbm <= 0 || f->bytes <= 0) return;
  double bytes = step_bytes(c, r, f), t = sm_row_per_step(c, r);
  double above = t > bytes / hbm ? t - bytes / hbm : 0;
  *(gemm ? &it->floor_gemm_bytes : &it->floor_attn_bytes) += bytes;
  *(gemm ? &it->floor_gemm_above_us : &it->floor_attn_above_us) += above;
}

/* Review 18 defect 9: a serving decode step whose weight GEMMs (summary.batch_families) are
 * all memory-bound reads each weight once per step for its few tokens. Their time is about
 * flat in the batch until their FLOP term reaches their byte term (the ridge, the least
 * over the rows of bytes' time / FLOPs' time at the device's peaks): a batch factor k
 * (summary.batch_step, at most the ridge) serves k times the tokens in about the same GEMM
 * time, so per step's tokens it wins at most their time x (1 - 1 / k). Needs the batch from
 * the trace (the model plan's tokens a step: decode stages) and those GEMMs at
 * summary.batch_min_pct of the step; none on a stage with a compute-bound one. */
void sm_batch_item(sm_ctx *c) {
  const an_stage_report *st = c->g.st;
  size_t tokens = st->roofline_counts.model_tokens, n = 0, top = SIZE_MAX;
  if (c->workload != AN_WORKLOAD_SERVING || !tokens || c->g.step_us <= 0) return;
  double t = 0, ridge = 0, lo = 0, hi = 0;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    const an_roofline *f = an_row_roofline(st, r);
    if (!f || !f->family || !te_string_list_has(&c->s->summary_batch_families, f->family)) continue;
    if (f->limiter != AN_LIMIT_MEMORY || f->comp_term_us <= 0) return; /* one at the roof */
    double x = f->mem_term_us / f->comp_term_us;
    ridge = n ? (x < ridge ? x : ridge) : x;
    lo = n ? (f->achieved_pct < lo ? f->achieved_pct : lo) : f->achieved_pct;
    hi = n ? (f->achieved_pct > hi ? f->achieved_pct : hi) : f->achieved_pct;
    t += sm_row_per_step(c, r);
    if (n++ == 0) top = i; /* rows are time-descending */
  }
  double k = c->s->summary_batch_step < ridge ? c->s->summary_batch_step : ridge;
  if (!n || k <= 1 || t / c->g.step_us * 100.0 < c->s->summary_batch_min_pct) return;
  const an_kernel_row *tr = &st->kernels[top];
  const char *loc = tr->n_shown_sites ? tr->shown_sites[0]->location : NULL;
  an_summary_item *it = sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_RAISE_BATCH, top, loc,
                               t * (1.0 - 1.0 / k), AN_BASIS_BATCH, t);
  if (!it) return;
  it->count = n;
  it->basis_pct = hi;
  it->basis_pct_lo = lo;
  it->batch_tokens = tokens;
  it->batch_factor = k;
  it->batch_ridge = ridge;
  double hbm =
      c->rep->roofline_device.hbm_tbs * UT_US_PER_S; /* bytes per us (TB/s = bytes/us/1e6) */
  it->floor_hbm_tbs = hbm > 0 ? c->rep->roofline_device.hbm_tbs : 0;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    const an_roofline *f = an_row_roofline(st, r);
    if (!f || !f->family) continue;
    bool gemm = te_string_list_has(&c->s->summary_batch_families, f->family);
    if (gemm || !strcmp(f->family, "attention")) floor_row(c, it, r, f, gemm, hbm);
    /* linked, not its kernels: the tuning and FP8 items of those GEMMs are levers of their
     * own (a larger batch leaves their headroom), so no merge takes them into this one */
    if (gemm && i != top) sm_item_more(it, "kernel", st->id, i);
  }
  if (hbm > 0) it->floor_us = (it->floor_gemm_bytes + it->floor_attn_bytes) / hbm;
}

/* ---------------------------------------------------------------- GEMM rate */

/* Adds a near row's rates to g: at, the share of its time it keeps at the attainable rate. */
static void near_row(an_gemm_rate *g, const an_roofline *f, double at) {
  double pk = f->achieved_pct;
  bool first = g->rows++ == 0;
  g->lo_pct = first || at < g->lo_pct ? at : g->lo_pct;
  g->hi_pct = first || at > g->hi_pct ? at : g->hi_pct;
  g->peak_lo_pct = first || pk < g->peak_lo_pct ? pk : g->peak_lo_pct;
  g->peak_hi_pct = first || pk > g->peak_hi_pct ? pk : g->peak_hi_pct;
  g->dtype = first || (g->dtype && f->dtype && !strcmp(g->dtype, f->dtype)) ? f->dtype : NULL;
  *(f->limiter == AN_LIMIT_MEMORY ? &g->memory : &g->compute) = true;
}

/* Review 22 defect 8: how near the device pack's attainable rate the stage's matmul rows
 * run (an_gemm_rate), on the stage (c->to). Shares are of the rows' time in the stage, as
 * the time by category's; the tuning bound is per step, each row's headroom at that rate
 * over its launches with shapes (a tuning item's ceiling), a merge item's share included:
 * it bounds tuning every GEMM, whichever item names it. */
void sm_gemm_rate(sm_ctx *c) {
  const an_stage_report *st = c->g.st;
  an_gemm_rate g = {.step_us = c->g.step_us, .n_steps = c->g.n_steps};
  double matmul = 0, near = 0;
  size_t with = 0;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    if (!te_string_list_has(&c->s->summary_gemm_rate_categories, r->category) ||
        sm_is_collective(c, r->name))
      continue;
    matmul += r->total_us;
    const an_roofline *f = an_row_roofline(st, r);
    if (!f || f->device_rate <= 0 || f->time_us <= 0 || sm_fp32_simt(c, r)) continue;
    with++;
    double gain = f->headroom_device_us / f->time_us;
    g.tune_us += sm_row_per_step(c, r) * roofline_coverage(f, r) * gain;
    if ((1.0 - gain) * 100.0 < c->s->summary_gemm_near_pct) continue;
    near += r->total_us;
    near_row(&g, f, (1.0 - gain) * 100.0);
  }
  if (!with || matmul <= 0 || st->kernel_total_us <= 0) return;
  g.matmul_pct = matmul / st->kernel_total_us * 100.0;
  g.near_pct = near / matmul * 100.0;
  g.near = g.rows && g.matmul_pct >= c->s->summary_gemm_near_min_pct &&
           g.near_pct >= c->s->summary_gemm_near_share_pct;
  c->to->gemm_rate = g;
}
