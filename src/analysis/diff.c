/* analysis/diff.c - see diff.h. */
#include "analysis/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph_staging.h"
#include "analysis/kernel_template.h"
#include "util/map.h"
#include "util/vec.h"

/* The Ranks rows of stage id in r (none for a one-rank run). */
static bool side_ranks(const an_report *r, const char *id, an_diff_side_stage *d) {
  for (size_t i = 0; i < r->n_ranks; i++) {
    const an_rank_report *rr = &r->ranks[i];
    if (strcmp(rr->stage, id) != 0) continue;
    d->ranks = calloc(rr->n_rows ? rr->n_rows : 1, sizeof *d->ranks);
    if (!d->ranks) return false;
    for (size_t k = 0; k < rr->n_rows; k++) {
      const an_rank_row *w = &rr->rows[k];
      an_diff_rank *x = &d->ranks[d->n_ranks++];
      *x = (an_diff_rank){w->rank, an_round3(w->busy_us), an_round3(w->wait_us), w->straggler, 0,
                          NULL};
      /* as the JSON report writes them, so a side read back from it compares the same */
      if (w->step_us && w->n_steps && !(x->step_us = malloc(w->n_steps * sizeof *x->step_us)))
        return false;
      for (size_t j = 0; x->step_us && j < w->n_steps; j++)
        x->step_us[x->n_step_us++] = an_round3(w->step_us[j]);
    }
    return true;
  }
  return true;
}

/* The ranks of r's Ranks sections (the most rows of one stage). */
static size_t report_ranks(const an_report *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_ranks; i++)
    if (r->ranks[i].n_rows > n) n = r->ranks[i].n_rows;
  return n;
}

/* The stage's time account: its counted steps, each step's work (an_step_account.work_us:
 * the kernel time launched in it less its collectives', not its window's kernel time: a
 * pipelined run's windows cut its queue at arbitrary points and collectives hold the
 * other ranks' lateness, so those spread where the work does not), its collectives'
 * waits. */
static bool side_timeline(const an_stage_timeline *tl, an_diff_side_stage *d) {
  if (!tl) return true;
  const an_time_account *t = &tl->total;
  d->time = (an_diff_time){true,
                           an_round3((double)t->span_ns / 1000.0),
                           an_round3((double)t->busy_ns / 1000.0),
                           an_round3((double)t->idle_ns / 1000.0),
                           an_round3((double)t->kernel_ns / 1000.0),
                           an_round3((double)t->graph_kernel_ns / 1000.0)};
  d->n_steps = tl->n_steps;
  d->n_cut_steps = tl->n_cut;
  d->step_us = malloc((tl->n_steps ? tl->n_steps : 1) * sizeof *d->step_us);
  d->waits = malloc((tl->n_collectives ? tl->n_collectives : 1) * sizeof *d->waits);
  if (!d->step_us || !d->waits) return false;
  for (size_t i = 0; i < tl->n_steps; i++)
    d->step_us[d->n_step_us++] = an_round3(tl->steps[i].work_us);
  /* the account's own per-instance wait (analysis/waits.h), as the single-run report's
   * collectives table and its JSON "wait_us" give it: one wait model, never a second */
  for (size_t i = 0; i < tl->n_collectives; i++) { /* a kernel's launch-context rows: one */
    const an_collective_time *c = &tl->collectives[i];
    size_t j = 0;
    while (j < d->n_waits && strcmp(d->waits[j].name, c->kernel)) j++;
    if (j == d->n_waits) d->waits[d->n_waits++] = (an_diff_wait){c->kernel, 0};
    d->waits[j].wait_us = an_round3(d->waits[j].wait_us + (double)c->wait_ns / 1000.0);
  }
  return true;
}

/* The launching CPU op of a kernel row: its first site's that has one (sites are ranked;
 * the JSON report's "sites" list them in this order). */
static const char *row_cpu_op(const an_kernel_row *kr) {
  for (size_t i = 0; kr->entry && i < kr->entry->n_sites; i++)
    if (kr->entry->sites[i].top_cpu_op) return kr->entry->sites[i].top_cpu_op;
  return NULL;
}

bool an_diff_matrix_family(const char *family) {
  return family && (!strcmp(family, "gemm") || !strcmp(family, "grouped_gemm"));
}

static bool side_stage(const an_stage_report *st, const an_report *r, an_diff_side_stage *d) {
  d->stage = st->id;
  d->n_steps = st->overlap ? st->overlap->n_steps : 0;
  if (!side_timeline(st->timeline, d)) return false;
  d->kernels = calloc(st->n_kernels ? st->n_kernels : 1, sizeof *d->kernels);
  d->fusions = calloc(st->n_fuse ? st->n_fuse : 1, sizeof *d->fusions);
  size_t n_ov = st->overlap ? st->overlap->n_rows : 0;
  d->overlaps = calloc(n_ov ? n_ov : 1, sizeof *d->overlaps);
  if (!d->kernels || !d->fusions || !d->overlaps || !side_ranks(r, st->id, d)) return false;
  /* times as the JSON report writes them, so a side read back from it compares the same */
  for (size_t k = 0; k < st->n_kernels; k++) {
    const an_kernel_row *kr = &st->kernels[k];
    const an_roofline *f = an_row_roofline(st, kr);
    bool gemm = f && f->dtype && an_diff_matrix_family(f->family);
    d->kernels[d->n_kernels++] =
        (an_diff_kernel){kr->name,
                         kr->category,
                         an_round3(kr->total_us),
                         an_round3(kr->steps_us),
                         row_cpu_op(kr),
                         gemm ? f->dtype : NULL,
                         gemm ? an_round3(f->time_us) : 0,
                         an_round3(an_graph_staging_us(st->graph_staging, st->id, kr->name))};
  }
  for (size_t k = 0; k < st->n_fuse; k++)
    if (st->fuse[k].shown)
      d->fusions[d->n_fusions++] = (an_diff_kernel){st->fuse[k].pattern_id,
                                                    NULL,
                                                    an_round3(st->fuse[k].related_us),
                                                    an_round3(st->fuse[k].related_us),
                                                    NULL,
                                                    NULL,
                                                    0,
                                                    0};
  for (size_t k = 0; k < n_ov; k++) {
    const an_overlap_row *o = &st->overlap->rows[k];
    /* not printed in the report, so not compared; a piece of a fusion row or of the chain
     * is named under the table */
    if (o->below_floor && !o->cites_fusion) continue;
    d->overlaps[d->n_overlaps++] =
        (an_diff_kernel){o->kernel, o->category, o->total_us, o->total_us, NULL, NULL, 0, 0};
  }
  return true;
}

static int cmp_long(const void *pa, const void *pb) {
  long a = *(const long *)pa, b = *(const long *)pb;
  return (a > b) - (a < b);
}

/* The ranks of a directory whose trace the reader refused (the run's hints say which). */
static bool side_unread(const an_report *r, an_diff_side *out) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_hints; i++) n += r->hints[i].code == AN_HINT_RANK_UNREAD;
  if (!n) return true;
  if (!(out->unread = malloc(n * sizeof *out->unread))) return false;
  for (size_t i = 0; i < r->n_hints; i++)
    if (r->hints[i].code == AN_HINT_RANK_UNREAD)
      out->unread[out->n_unread++] = (long)r->hints[i].count;
  qsort(out->unread, out->n_unread, sizeof *out->unread, cmp_long);
  return true;
}

an_status an_diff_side_from_report(const an_report *r, const char *label, an_diff_side *out) {
  memset(out, 0, sizeof *out);
  out->label = label;
  /* a directory run read every rank: those are its files, not only the tables' rank */
  bool dir = r->run.mode != AN_MODE_MAPPING_FORMAL && r->run.n_rank_inputs > 1;
  size_t n_files = dir ? r->run.n_rank_inputs : r->run.n_formal_inputs;
  const char *const *files = dir ? r->run.rank_inputs : r->run.formal_inputs;
  out->files = calloc(n_files + 1, sizeof *out->files);
  out->stages = calloc(r->n_stages ? r->n_stages : 1, sizeof *out->stages);
  if (!out->stages || !out->files) return AN_ERR_NOMEM;
  for (size_t i = 0; i < n_files; i++) out->files[i] = files[i];
  out->n_files = n_files;
  out->framework = r->run.framework.label;
  out->framework_defaulted = r->run.framework.source == AN_SOURCE_DEFAULT;
  out->model = r->run.context.model.value;
  out->world_size = r->limits.world_size;
  out->rank = r->limits.trace_rank;
  out->device = r->limits.trace_device;
  out->host = r->limits.trace_host;
  out->gpu = r->run.context.gpu.value;
  out->n_ranks = report_ranks(r);
  out->only_rank = -1;
  if (!side_unread(r, out)) return AN_ERR_NOMEM;
  for (size_t i = 0; i < r->n_stages; i++) {
    if (!r->stages[i].has_kernels) continue;
    if (!side_stage(&r->stages[i], r, &out->stages[out->n_stages++])) return AN_ERR_NOMEM;
  }
  return AN_OK;
}

void an_diff_side_free(an_diff_side *s) {
  for (size_t i = 0; s && s->stages && i < s->n_stages; i++) {
    for (size_t k = 0; s->stages[i].ranks && k < s->stages[i].n_ranks; k++)
      free(s->stages[i].ranks[k].step_us);
    free(s->stages[i].kernels);
    free(s->stages[i].fusions);
    free(s->stages[i].overlaps);
    free(s->stages[i].ranks);
    free(s->stages[i].step_us);
    free(s->stages[i].waits);
  }
  if (s) free(s->stages);
  if (s) free(s->files);
  if (s) free(s->unread);
  if (s) memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ noise */

/* Relative standard deviation (sd / mean) of v[0..n); 0 with fewer than min values. */
static double rel_sd(const double *v, size_t n, size_t min) {
  if (n < min || n < 2) return 0;
  double mean = 0, var = 0;
  for (size_t i = 0; i < n; i++) mean += v[i];
  mean /= (double)n;
  for (size_t i = 0; i < n; i++) var += (v[i] - mean) * (v[i] - mean);
  var /= (double)(n - 1);
  return mean > 0 ? sqrt(var) / mean : 0;
}

typedef struct floor_t {
  double pct, us;
} floor_t;

/* A spread the data show: relative standard deviation x of n values v, from the steps of
 * the tables' trace or of one rank, of one run. */
typedef struct spread {
  double x;
  an_noise_source src;
  bool after;
  long rank; /* AN_NOISE_RANK_STEPS: whose steps */
  const double *v;
  size_t n;
} spread;

/* Takes the spread of v[0..n) when it is wider than *best. */
static void wider(spread *best, const double *v, size_t n, size_t min, an_noise_source src,
                  bool after, long rank) {
  double x = rel_sd(v, n, min);
  if (x > best->x) *best = (spread){x, src, after, rank, v, n};
}

/* The widest spread across steps of a stage: the tables' trace's of either run, and,
 * between two profile directories, each rank's read in both runs (rank r before with
 * rank r after). Never the spread across ranks: ranks differ by design (their share of
 * the work), which is no noise between two runs. */
static spread stage_spread(const an_diff_side_stage *b, const an_diff_side_stage *a,
                           const te_settings *set) {
  size_t min = (size_t)set->diff_spread_min_steps;
  spread best = {0, AN_NOISE_PACKS, false, -1, NULL, 0};
  /* after first: of two equal spreads, the after run's is said */
  if (a) wider(&best, a->step_us, a->n_step_us, min, AN_NOISE_STEPS, true, -1);
  if (b) wider(&best, b->step_us, b->n_step_us, min, AN_NOISE_STEPS, false, -1);
  if (!b || !a || b->n_ranks < 2 || a->n_ranks < 2) return best;
  for (size_t i = 0; i < b->n_ranks; i++) {
    const an_diff_rank *x = &b->ranks[i], *y = NULL;
    for (size_t k = 0; k < a->n_ranks && !y; k++)
      if (a->ranks[k].rank == x->rank) y = &a->ranks[k];
    if (!y) continue; /* a rank one run lacks is not compared */
    wider(&best, y->step_us, y->n_step_us, min, AN_NOISE_RANK_STEPS, true, y->rank);
    wider(&best, x->step_us, x->n_step_us, min, AN_NOISE_RANK_STEPS, false, x->rank);
  }
  return best;
}

/* The stage's floor: the packs', raised to sigma relative standard deviations of the
 * widest spread across steps (its source, run, rank and range into out). */
static floor_t stage_floor(const an_diff_side_stage *b, const an_diff_side_stage *a,
                           const te_settings *set, an_diff_stage *out) {
  spread sp = stage_spread(b, a, set);
  double data_pct = set->diff_noise_sigma * sp.x * 100;
  floor_t f = {set->diff_noise_floor_pct, set->diff_noise_floor_us};
  out->noise_source = AN_NOISE_PACKS;
  out->noise_rank = -1;
  if (data_pct > f.pct) {
    f.pct = data_pct;
    out->noise_source = sp.src;
    out->noise_after = sp.after;
    out->noise_rank = sp.rank;
    out->noise_n = sp.n;
    for (size_t i = 0; i < sp.n; i++) {
      out->noise_lo_us = i == 0 || sp.v[i] < out->noise_lo_us ? sp.v[i] : out->noise_lo_us;
      out->noise_hi_us = i == 0 || sp.v[i] > out->noise_hi_us ? sp.v[i] : out->noise_hi_us;
    }
  }
  return f;
}

/* ------------------------------------------------------------------ comparing */

typedef struct owned {
  an_diff_stage *stages;
  size_t n_stages;
  an_diff_row **arrays; /* every row array, freed with the result */
  size_t n_arrays, cap_arrays;
  an_diff_rank_row **rank_arrays;
  size_t n_rank_arrays, cap_rank_arrays;
  void **blobs; /* other blocks the rows point into (renamed groups, their names) */
  size_t n_blobs, cap_blobs;
} owned;

static bool beyond(double before, double d, floor_t f) {
  return fabs(d) >= f.us && fabs(d) >= before * f.pct / 100;
}

static an_diff_change change_of(an_diff_row *r, bool in_before, bool in_after, floor_t f) {
  r->basis = AN_DIFF_BY_TOTAL;
  r->part_pct = 0;
  if (!in_before) return AN_DIFF_NEW;
  if (!in_after) return AN_DIFF_REMOVED;
  double d = r->after_us - r->before_us;
  if (r->has_wait) { /* the larger of its two moves names it: the wait, or the transfer */
    double tb = r->before_us - r->before_wait_us, ta = r->after_us - r->after_wait_us;
    double dw = r->after_wait_us - r->before_wait_us, dt = ta - tb;
    bool total = beyond(r->before_us, d, f);
    /* judged on its own: a wait that fell can hide a transfer that rose past the noise in a
     * total within it (the hta pair's SendRecv: transfer 7.75 -> 20.89 ms/step, wait 14.02
     * -> 5.66, total +21.9 % under a 59.8 % floor read "within noise"); under the floor the
     * row then says its transfer moved (review 12: "slower" at +21.9 % contradicted it) */
    if (beyond(tb, dt, f) && (fabs(dt) > fabs(dw) || !total)) {
      if (!total) r->basis = AN_DIFF_BY_TRANSFER, r->part_pct = tb > 0 ? dt / tb * 100 : 0;
      return dt > 0 ? AN_DIFF_SLOWER : AN_DIFF_FASTER;
    }
    return total ? AN_DIFF_WAIT : AN_DIFF_SAME;
  }
  if (!beyond(r->before_us, d, f)) return AN_DIFF_SAME;
  return d > 0 ? AN_DIFF_SLOWER : AN_DIFF_FASTER;
}

static void finish_row(an_diff_row *r, bool inb, bool ina, floor_t f) {
  r->delta_us = r->after_us - r->before_us;
  r->delta_pct = r->before_us > 0 ? r->delta_us / r->before_us * 100 : 0;
  r->change = change_of(r, inb, ina, f);
}

static int cmp_rows(const void *pa, const void *pb) {
  const an_diff_row *a = pa, *b = pb;
  bool ca = a->change != AN_DIFF_SAME, cb = b->change != AN_DIFF_SAME;
  if (ca != cb) return ca ? -1 : 1;
  if (fabs(a->delta_us) != fabs(b->delta_us)) return fabs(a->delta_us) > fabs(b->delta_us) ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* The scale of each side's times (1 / steps when compared per step) and the waits. */
typedef struct sides {
  const an_diff_side_stage *b, *a;
  double scale_b, scale_a;
  bool per_step; /* kernels count their time inside the counted steps */
} sides;

static double wait_of(const an_diff_side_stage *s, const char *name, bool *found) {
  for (size_t i = 0; s && i < s->n_waits; i++)
    if (strcmp(s->waits[i].name, name) == 0) return *found = true, s->waits[i].wait_us;
  *found = false;
  return 0;
}

/* The wait of a side's kernels named key (by_category: of its kernels of category key),
 * and whether the side knows any. */
static double side_wait(const an_diff_side_stage *s, const char *key, bool by_category,
                        bool *found) {
  if (!by_category) return wait_of(s, key, found);
  double w = 0;
  *found = false;
  for (size_t i = 0; s && i < s->n_kernels; i++) {
    bool f = false;
    const char *cat = s->kernels[i].category ? s->kernels[i].category : "";
    double x = strcmp(cat, key) == 0 ? wait_of(s, s->kernels[i].name, &f) : 0;
    w += x;
    *found = *found || f;
  }
  return w;
}

/* Rows of collectives (or their categories) whose wait both sides know: the wait part of
 * each side. */
static void add_waits(an_diff_row *r, const sides *sd, bool by_category) {
  bool fb = false, fa = false;
  double wb = side_wait(sd->b, r->name, by_category, &fb);
  double wa = side_wait(sd->a, r->name, by_category, &fa);
  if (!fb || !fa) return;
  r->has_wait = true;
  r->before_wait_us = wb * sd->scale_b;
  r->after_wait_us = wa * sd->scale_a;
}

typedef struct keyed {
  ut_strmap keys;
  double *bu, *au;
  double *bs, *as; /* the staged part (graph_staging.h) */
  bool *inb, *ina;
  const char **cat;
} keyed;

static const char *key_of(const an_diff_kernel *k, bool by_category) {
  return by_category ? (k->category ? k->category : "") : k->name;
}

/* Sums each side's rows by key (kernel name or category), scaled. */
static bool sum_by_key(keyed *x, const an_diff_kernel *v, size_t n, bool after, bool by_category,
                       const sides *sd) {
  double scale = after ? sd->scale_a : sd->scale_b;
  for (size_t i = 0; i < n; i++) {
    const char *key = key_of(&v[i], by_category);
    long k = ut_strmap_put(&x->keys, key, strlen(key));
    if (k < 0) return false;
    double us = (sd->per_step ? v[i].steps_us : v[i].total_us) * scale;
    (after ? x->au : x->bu)[k] += us;
    /* the staged share of the row's time, on the compared basis */
    if (v[i].staged_us > 0 && v[i].total_us > 0)
      (after ? x->as : x->bs)[k] +=
          us * (v[i].staged_us < v[i].total_us ? v[i].staged_us / v[i].total_us : 1);
    (after ? x->ina : x->inb)[k] = true;
    if (!x->cat[k]) x->cat[k] = v[i].category;
  }
  return true;
}

/* The rows' names point at the sides' strings, not the map's copies. */
static void repoint(an_diff_row *rows, const keyed *x, const an_diff_kernel *v, size_t n,
                    bool by_category) {
  for (size_t i = 0; i < n; i++) {
    const char *key = key_of(&v[i], by_category);
    long k = ut_strmap_find(&x->keys, key, strlen(key));
    if (k >= 0 && rows[k].name == x->keys.keys[k]) rows[k].name = key;
  }
}

static void keyed_free(keyed *x) {
  ut_strmap_free(&x->keys);
  free(x->bu);
  free(x->au);
  free(x->bs);
  free(x->as);
  free(x->inb);
  free(x->ina);
  free(x->cat);
}

/* Rows of two lists keyed by name (after's order of first sight, then before's leftovers).
 * by_category: sum by category instead of name. NULL when out of memory. */
static an_diff_row *compare(const an_diff_kernel *b, size_t nb, const an_diff_kernel *a, size_t na,
                            bool by_category, const sides *sd, floor_t f, size_t *n_out) {
  size_t cap = nb + na + 1;
  keyed x = {{0},
             calloc(cap, sizeof(double)),
             calloc(cap, sizeof(double)),
             calloc(cap, sizeof(double)),
             calloc(cap, sizeof(double)),
             calloc(cap, 1),
             calloc(cap, 1),
             calloc(cap, sizeof(char *))};
  an_diff_row *rows = NULL;
  bool ok = x.bu && x.au && x.bs && x.as && x.inb && x.ina && x.cat &&
            sum_by_key(&x, a, na, true, by_category, sd) &&
            sum_by_key(&x, b, nb, false, by_category, sd);
  if (ok) rows = calloc(x.keys.n + 1, sizeof *rows);
  for (size_t k = 0; rows && k < x.keys.n; k++) {
    rows[k] = (an_diff_row){.name = x.keys.keys[k],
                            .category = by_category ? NULL : x.cat[k],
                            .before_us = x.bu[k],
                            .after_us = x.au[k],
                            .before_staged_us = x.bs[k],
                            .after_staged_us = x.as[k]};
    add_waits(&rows[k], sd, by_category);
    finish_row(&rows[k], x.inb[k], x.ina[k], f);
  }
  if (rows) repoint(rows, &x, a, na, by_category), repoint(rows, &x, b, nb, by_category);
  *n_out = rows ? x.keys.n : 0;
  if (rows && x.keys.n) qsort(rows, x.keys.n, sizeof *rows, cmp_rows);
  keyed_free(&x);
  return rows;
}

/* One noise rule for kernels and categories (review 10: the hta pair's elementwise
 * category, +57.5 % under a 59.8 % floor, read "within noise" while its kernels at
 * +60-76 % read "slower"): a category is no surer than its kernels, so it moves as they
 * do: slower (faster) when its kernels that changed beyond the floor that way, new (gone)
 * ones included, carry diff.category_kernels_pct of its change, else within noise. A
 * category of collectives keeps its wait judgement (change_of); rows re-sorted. */
static void judge_categories(an_diff_row *c, size_t nc, const an_diff_row *k, size_t nk,
                             double share_pct, floor_t f) {
  for (size_t i = 0; i < nc; i++) {
    an_diff_row *r = &c[i];
    if (r->has_wait || r->change == AN_DIFF_NEW || r->change == AN_DIFF_REMOVED) continue;
    bool up = r->delta_us > 0;
    double moved = 0;
    for (size_t j = 0; j < nk; j++) {
      if (strcmp(k[j].category ? k[j].category : "", r->name) != 0) continue;
      an_diff_change x = k[j].change;
      if (up ? x == AN_DIFF_SLOWER || x == AN_DIFF_NEW
             : x == AN_DIFF_FASTER || x == AN_DIFF_REMOVED)
        moved += k[j].delta_us;
    }
    double carried = r->delta_us != 0 ? moved / r->delta_us * 100 : 0;
    bool most = r->delta_us != 0 && carried >= share_pct;
    r->change = !most ? AN_DIFF_SAME : up ? AN_DIFF_SLOWER : AN_DIFF_FASTER;
    /* a category under the floor that moves says by what (review 12: elementwise +57.5 %
     * "slower" under a 59.8 % floor beside norm +19.7 % "not resolved" read as two rules) */
    if (most && !beyond(r->before_us, r->delta_us, f))
      r->basis = AN_DIFF_BY_KERNELS, r->part_pct = carried;
  }
  if (nc) qsort(c, nc, sizeof *c, cmp_rows);
}

/* Keeps p (any owned block) until the result is freed; false (p freed) when out of memory. */
static bool keep_blob(owned *o, void *p) {
  void **v = p ? ut_grow(o->blobs, &o->cap_blobs, o->n_blobs + 1, sizeof *v) : NULL;
  if (!v) {
    free(p);
    return false;
  }
  o->blobs = v;
  o->blobs[o->n_blobs++] = p;
  return true;
}

static bool keep(owned *o, an_diff_row *rows) {
  an_diff_row **v = ut_grow(o->arrays, &o->cap_arrays, o->n_arrays + 1, sizeof *v);
  if (!v || !rows) {
    if (v) o->arrays = v;
    free(rows);
    return false;
  }
  o->arrays = v;
  o->arrays[o->n_arrays++] = rows;
  return true;
}

/* Fusion and overlap rows: only those that appeared or went away (a row in both runs is
 * the kernel table's business). */
static size_t only_appeared_or_gone(an_diff_row *rows, size_t n) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i].change == AN_DIFF_NEW || rows[i].change == AN_DIFF_REMOVED) rows[m++] = rows[i];
  return m;
}

/* The kernel row named name among the compared kernels, or NULL. */
static const an_diff_row *kernel_row(const an_diff_row *k, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(k[i].name, name) == 0) return &k[i];
  return NULL;
}

/* An overlap row only one run lists, whose kernel runs in both: not new or removed work,
 * only an overlap row that came or went; its times are the kernel's in each run. */
static void mark_still_running(an_diff_row *ov, size_t n, const an_diff_row *k, size_t nk) {
  for (size_t i = 0; i < n; i++) {
    const an_diff_row *kr = kernel_row(k, nk, ov[i].name);
    if (!kr || kr->change == AN_DIFF_NEW || kr->change == AN_DIFF_REMOVED) continue;
    ov[i].still_runs = true;
    ov[i].before_us = kr->before_us;
    ov[i].after_us = kr->after_us;
    ov[i].delta_us = kr->delta_us;
    ov[i].delta_pct = kr->delta_pct;
    ov[i].has_wait = kr->has_wait;
    ov[i].before_wait_us = kr->before_wait_us;
    ov[i].after_wait_us = kr->after_wait_us;
  }
}

/* ------------------------------------------------------------------ renamed kernels */

static bool among(const char *const *names, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

/* An overlap row only one run lists whose kernel a renamed group pairs with the other
 * run's kernels (another GPU picked another kernel for the same op): the row is the
 * renamed work's, not new or removed work, so it points at the group (review 3: the
 * diff paired TBE backward kernels as renamed and still called their forward "new"). */
static void mark_renamed(an_diff_row *ov, size_t n, const an_diff_renamed *g, size_t ng) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < ng && !ov[i].still_runs && !ov[i].renamed_group; k++) {
      bool after = ov[i].change == AN_DIFF_NEW;
      if (among(after ? g[k].after_names : g[k].before_names, after ? g[k].n_after : g[k].n_before,
                ov[i].name))
        ov[i].renamed_group = k + 1;
    }
}

/* The launching CPU op of side s's kernel name; NULL when none is linked or the launch is a
 * runtime call (cudaLaunchKernel, cudaGraphLaunch, hipLaunchKernel...): that names no op. */
static const char *op_of(const an_diff_side_stage *s, const char *name) {
  for (size_t i = 0; s && i < s->n_kernels; i++) {
    if (strcmp(s->kernels[i].name, name) != 0) continue;
    const char *op = s->kernels[i].cpu_op;
    bool runtime = op && (strncmp(op, "cuda", 4) == 0 || strncmp(op, "hip", 3) == 0);
    return runtime ? NULL : op;
  }
  return NULL;
}

typedef struct renames {
  an_diff_row *k; /* the stage's kernel rows */
  size_t n;
  const char **ops; /* per row: its launching op, or NULL */
  int *group;       /* per row: its group, -1 none */
  size_t n_groups;
} renames;

static bool rename_candidate(const renames *c, size_t i) {
  an_diff_change ch = c->k[i].change;
  return c->group[i] < 0 && c->k[i].category && (ch == AN_DIFF_NEW || ch == AN_DIFF_REMOVED);
}

/* Row i has row j's category and, unless any_op, its known op. */
static bool same_key(const renames *c, size_t i, size_t j, bool any_op) {
  if (strcmp(c->k[i].category, c->k[j].category) != 0) return false;
  const char *a = c->ops[i], *b = c->ops[j];
  return any_op || (a && b && strcmp(a, b) == 0);
}

/* Groups the candidates keyed as row j when both runs have some. any_op (the second pass):
 * the category's leftovers, when the ops they know are one op at most (kernels under
 * aten::mm before and graph-replayed after pair; aten::mm and aten::bmm never do). */
static void try_group(renames *c, size_t j, bool any_op) {
  size_t nb = 0, na = 0;
  const char *op = NULL;
  for (size_t i = 0; i < c->n; i++) {
    if (!rename_candidate(c, i) || !same_key(c, i, j, any_op)) continue;
    if (op && c->ops[i] && strcmp(op, c->ops[i]) != 0) return;
    if (c->ops[i]) op = c->ops[i];
    *(c->k[i].change == AN_DIFF_NEW ? &na : &nb) += 1;
  }
  if (!nb || !na) return;
  for (size_t i = 0; i < c->n; i++)
    if (rename_candidate(c, i) && same_key(c, i, j, any_op)) c->group[i] = (int)c->n_groups;
  c->n_groups++;
}

static int cmp_renamed(const void *pa, const void *pb) {
  const an_diff_renamed *a = pa, *b = pb;
  if (fabs(a->row.delta_us) != fabs(b->row.delta_us))
    return fabs(a->row.delta_us) > fabs(b->row.delta_us) ? -1 : 1;
  return strcmp(a->category, b->category);
}

/* Group g's row: the summed times of its kernels, their names time descending (the rows
 * are |delta| descending, and a new or removed row's delta is its time). */
static void fill_group(const renames *c, int g, const char **names, an_diff_renamed *out,
                       floor_t f) {
  size_t m = 0;
  *out = (an_diff_renamed){0};
  for (int side = 0; side < 2; side++) {
    const char **first = names + m;
    for (size_t i = 0; i < c->n; i++) {
      if (c->group[i] != g || (c->k[i].change == AN_DIFF_NEW) != (side == 1)) continue;
      names[m++] = c->k[i].name;
      out->category = c->k[i].category;
      if (c->ops[i]) out->cpu_op = c->ops[i];
      if (side)
        out->row.after_us += c->k[i].after_us, out->n_after++;
      else
        out->row.before_us += c->k[i].before_us, out->n_before++;
    }
    *(side ? &out->after_names : &out->before_names) = first;
  }
  out->row.name = out->after_names[0];
  out->row.category = out->category;
  finish_row(&out->row, true, true, f);
}

/* Kernels only one run has, paired by category and launching op into renamed groups; the
 * grouped rows leave the kernel rows. */
static bool pair_renamed(owned *o, const sides *sd, floor_t f, an_diff_stage *out, an_diff_row *k) {
  renames c = {k, out->n_kernels, calloc(out->n_kernels + 1, sizeof(char *)),
               malloc((out->n_kernels + 1) * sizeof(int)), 0};
  const char **names = calloc(out->n_kernels + 1, sizeof *names);
  an_diff_renamed *g = calloc(out->n_kernels + 1, sizeof *g);
  bool ok = keep_blob(o, names) & keep_blob(o, g);
  ok = ok && c.ops && c.group;
  for (size_t i = 0; ok && i < c.n; i++) {
    c.group[i] = -1;
    c.ops[i] = op_of(k[i].change == AN_DIFF_NEW ? sd->a : sd->b, k[i].name);
  }
  for (int pass = 0; ok && pass < 2; pass++)
    for (size_t j = 0; j < c.n; j++)
      if (rename_candidate(&c, j) && (pass || c.ops[j])) try_group(&c, j, pass == 1);
  size_t used = 0, m = 0;
  for (int i = 0; ok && i < (int)c.n_groups; i++) {
    fill_group(&c, i, names + used, &g[i], f);
    used += g[i].n_before + g[i].n_after;
  }
  for (size_t i = 0; ok && i < c.n; i++)
    if (c.group[i] < 0) k[m++] = k[i];
  if (ok) out->n_kernels = m, out->n_renamed = c.n_groups, out->renamed = g;
  if (ok && c.n_groups) qsort(g, c.n_groups, sizeof *g, cmp_renamed);
  free(c.ops);
  free(c.group);
  return ok;
}

/* ------------------------------------------------------------------ template changes */

/* The one row of k[0..n) only `side` (new: after) has whose name shares t's stem, or -1
 * when none or more than one does. */
static long only_stem_row(const an_diff_row *k, size_t n, const char *name, size_t stem_len,
                          an_diff_change side) {
  long hit = -1;
  for (size_t j = 0; j < n; j++) {
    if (k[j].change != side || strncmp(k[j].name, name, stem_len) != 0 ||
        k[j].name[stem_len] != '<')
      continue;
    if (hit >= 0) return -1;
    hit = (long)j;
  }
  return hit;
}

/* The arguments of `own` that differ from `other`'s, ", "-joined (an owned copy). */
static char *differing_args(owned *o, const an_template *own, const an_template *other) {
  size_t len = 1;
  for (size_t i = 0; i < own->n_args; i++)
    if (an_template_arg_differs(own, other, i)) len += own->args[i].len + 2;
  char *s = malloc(len), *p = s;
  if (!s || !keep_blob(o, s)) return NULL;
  for (size_t i = 0; i < own->n_args; i++) {
    if (!an_template_arg_differs(own, other, i)) continue;
    if (p != s) *p++ = ',', *p++ = ' ';
    memcpy(p, own->args[i].text, own->args[i].len);
    p += own->args[i].len;
  }
  *p = '\0';
  return s;
}

static int cmp_retemplated(const void *pa, const void *pb) {
  const an_diff_retemplate *a = pa, *b = pb;
  if (fabs(a->row.delta_us) != fabs(b->row.delta_us))
    return fabs(a->row.delta_us) > fabs(b->row.delta_us) ? -1 : 1;
  return strcmp(a->after_name, b->after_name);
}

/* Kernels only one run has that pair, one to one, by their name but for plain template
 * arguments (a table width 2ul -> 5ul): the same kernel re-instantiated, which the run facts
 * name; read before the renamed groups take the rows (review 5: the embedding kernels'
 * 2ul -> 5ul went unsaid, grouped as "renamed"). */
static bool pair_retemplated(owned *o, floor_t f, an_diff_stage *out, const an_diff_row *k,
                             size_t n) {
  an_diff_retemplate *v = calloc(n + 1, sizeof *v);
  if (!v || !keep_blob(o, v)) return false;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    an_template tb, ta;
    if (k[i].change != AN_DIFF_REMOVED || !an_template_split(k[i].name, &tb)) continue;
    long j = only_stem_row(k, n, k[i].name, tb.stem_len, AN_DIFF_NEW);
    if (j < 0 || only_stem_row(k, n, k[i].name, tb.stem_len, AN_DIFF_REMOVED) != (long)i ||
        !an_template_split(k[j].name, &ta) ||
        !an_template_same_kernel(k[i].name, &tb, k[j].name, &ta))
      continue;
    an_diff_retemplate *x = &v[m++];
    *x = (an_diff_retemplate){.before_name = k[i].name,
                              .after_name = k[j].name,
                              .stem_len = tb.stem_len,
                              .before_args = differing_args(o, &tb, &ta),
                              .after_args = differing_args(o, &ta, &tb)};
    if (!x->before_args || !x->after_args) return false;
    x->row = (an_diff_row){.name = k[j].name,
                           .category = k[j].category,
                           .before_us = k[i].before_us,
                           .after_us = k[j].after_us};
    finish_row(&x->row, true, true, f);
  }
  if (m) qsort(v, m, sizeof *v, cmp_retemplated);
  out->retemplated = v;
  out->n_retemplated = m;
  return true;
}

/* A side's stage time and its collectives' wait, scaled. */
static void stage_sum(const an_diff_side_stage *s, const sides *sd, double scale, double *total,
                      double *wait) {
  *total = *wait = 0;
  for (size_t i = 0; s && i < s->n_kernels; i++)
    *total += (sd->per_step ? s->kernels[i].steps_us : s->kernels[i].total_us) * scale;
  for (size_t i = 0; s && i < s->n_waits; i++) *wait += s->waits[i].wait_us * scale;
}

/* A stage time judged by its time less its collectives' wait: that is its work, not a
 * transfer. */
static void stage_basis(an_diff_row *r) {
  if (r->basis == AN_DIFF_BY_TRANSFER) r->basis = AN_DIFF_BY_WORK;
}

static an_diff_row stage_total(const char *id, const sides *sd, floor_t f) {
  an_diff_row r = {.name = id};
  stage_sum(sd->b, sd, sd->scale_b, &r.before_us, &r.before_wait_us);
  stage_sum(sd->a, sd, sd->scale_a, &r.after_us, &r.after_wait_us);
  r.has_wait = sd->b && sd->a && sd->b->n_waits && sd->a->n_waits;
  if (!r.has_wait) r.before_wait_us = r.after_wait_us = 0;
  finish_row(&r, sd->b != NULL, sd->a != NULL, f);
  stage_basis(&r);
  return r;
}

static const an_diff_rank *find_rank(const an_diff_side_stage *s, long rank) {
  for (size_t i = 0; i < s->n_ranks; i++)
    if (s->ranks[i].rank == rank) return &s->ranks[i];
  return NULL;
}

/* Rank rows of a stage both runs saw with several ranks: before's ranks, then the ranks
 * only after has; the others (a one-rank side) get none. */
static bool diff_ranks(owned *o, const an_diff_side_stage *b, const an_diff_side_stage *a,
                       an_diff_stage *out) {
  if (!b || !a || b->n_ranks < 2 || a->n_ranks < 2) return true;
  an_diff_rank_row *rows = calloc(b->n_ranks + a->n_ranks, sizeof *rows);
  an_diff_rank_row **v =
      rows ? ut_grow(o->rank_arrays, &o->cap_rank_arrays, o->n_rank_arrays + 1, sizeof *v) : NULL;
  if (!v) {
    free(rows);
    return false;
  }
  o->rank_arrays = v;
  o->rank_arrays[o->n_rank_arrays++] = rows;
  size_t n = 0;
  for (size_t side = 0; side < 2; side++) {
    const an_diff_side_stage *s = side ? a : b;
    for (size_t i = 0; i < s->n_ranks; i++) {
      long rank = s->ranks[i].rank;
      if (side && find_rank(b, rank)) continue; /* already a row */
      const an_diff_rank *x = find_rank(b, rank), *y = find_rank(a, rank);
      an_diff_rank_row *r = &rows[n++];
      *r = (an_diff_rank_row){.rank = rank, .in_before = x != NULL, .in_after = y != NULL};
      if (x) r->before_busy_us = x->busy_us, r->before_wait_us = x->wait_us;
      if (y) r->after_busy_us = y->busy_us, r->after_wait_us = y->wait_us;
      r->before_straggler = x && x->straggler;
      r->after_straggler = y && y->straggler;
      r->delta_busy_us = r->after_busy_us - r->before_busy_us;
    }
  }
  out->ranks = rows;
  out->n_ranks = n;
  return true;
}

/* Per step when both runs know their steps, else over the stage. */
static sides stage_sides(const an_diff_side_stage *b, const an_diff_side_stage *a,
                         an_diff_stage *out) {
  out->before_steps = b ? b->n_steps : 0;
  out->after_steps = a ? a->n_steps : 0;
  out->per_step = out->before_steps && out->after_steps;
  sides sd = {b, a, 1, 1, out->per_step};
  if (out->per_step) sd.scale_b = 1.0 / (double)out->before_steps;
  if (out->per_step) sd.scale_a = 1.0 / (double)out->after_steps;
  return sd;
}

/* Span, busy and idle per step (the time account's), when both runs know them; and the
 * share of each run's kernel time replayed from graphs. */
static void stage_time(const sides *sd, floor_t f, an_diff_stage *out) {
  const an_diff_time *tb = sd->b ? &sd->b->time : NULL, *ta = sd->a ? &sd->a->time : NULL;
  out->before_graph_pct = tb && tb->kernel_us > 0 ? tb->graph_kernel_us / tb->kernel_us * 100 : -1;
  out->after_graph_pct = ta && ta->kernel_us > 0 ? ta->graph_kernel_us / ta->kernel_us * 100 : -1;
  out->has_time = tb && ta && tb->known && ta->known;
  if (!out->has_time) return;
  out->span = (an_diff_row){.name = "span",
                            .before_us = tb->span_us * sd->scale_b,
                            .after_us = ta->span_us * sd->scale_a};
  out->busy = (an_diff_row){.name = "busy",
                            .before_us = tb->busy_us * sd->scale_b,
                            .after_us = ta->busy_us * sd->scale_a};
  out->idle = (an_diff_row){.name = "idle",
                            .before_us = tb->idle_us * sd->scale_b,
                            .after_us = ta->idle_us * sd->scale_a};
  /* a step longer only because its collectives wait longer for other ranks is a wait
   * change, as the collectives' own rows are */
  out->span.has_wait = out->busy.has_wait = out->total.has_wait;
  out->span.before_wait_us = out->busy.before_wait_us = out->total.before_wait_us;
  out->span.after_wait_us = out->busy.after_wait_us = out->total.after_wait_us;
  finish_row(&out->span, true, true, f);
  finish_row(&out->busy, true, true, f);
  finish_row(&out->idle, true, true, f);
  stage_basis(&out->span);
  stage_basis(&out->busy);
}

static bool diff_stage(owned *o, const an_diff_side_stage *b, const an_diff_side_stage *a,
                       const te_settings *set, an_diff_stage *out) {
  static const an_diff_kernel none[1];
  sides sd = stage_sides(b, a, out);
  floor_t f = stage_floor(b, a, set, out);
  out->before_cut_steps = b ? b->n_cut_steps : 0;
  out->after_cut_steps = a ? a->n_cut_steps : 0;
  out->noise_pct = f.pct;
  out->noise_us = f.us;
  out->unresolved = f.pct > set->diff_resolve_max_floor_pct;
  const an_diff_kernel *bk = b ? b->kernels : none, *ak = a ? a->kernels : none;
  size_t nbk = b ? b->n_kernels : 0, nak = a ? a->n_kernels : 0;
  out->stage = a ? a->stage : b->stage;
  out->total = stage_total(out->stage, &sd, f);
  stage_time(&sd, f, out);
  an_diff_row *k = compare(bk, nbk, ak, nak, false, &sd, f, &out->n_kernels);
  an_diff_row *c = compare(bk, nbk, ak, nak, true, &sd, f, &out->n_categories);
  an_diff_row *fu = compare(b ? b->fusions : none, b ? b->n_fusions : 0, a ? a->fusions : none,
                            a ? a->n_fusions : 0, false, &sd, f, &out->n_fusions);
  an_diff_row *ov = compare(b ? b->overlaps : none, b ? b->n_overlaps : 0, a ? a->overlaps : none,
                            a ? a->n_overlaps : 0, false, &sd, f, &out->n_overlaps);
  bool ok = keep(o, k) & keep(o, c) & keep(o, fu) & keep(o, ov);
  if (!ok || !diff_ranks(o, b, a, out)) return false;
  judge_categories(c, out->n_categories, k, out->n_kernels, set->diff_category_kernels_pct, f);
  out->n_fusions = only_appeared_or_gone(fu, out->n_fusions);
  out->n_overlaps = only_appeared_or_gone(ov, out->n_overlaps);
  mark_still_running(ov, out->n_overlaps, k, out->n_kernels);
  if (!pair_retemplated(o, f, out, k, out->n_kernels) || !pair_renamed(o, &sd, f, out, k))
    return false;
  mark_renamed(ov, out->n_overlaps, out->renamed, out->n_renamed);
  out->overlaps = ov;
  out->kernels = k;
  out->categories = c;
  out->fusions = fu;
  return true;
}

static const an_diff_side_stage *find_stage(const an_diff_side *s, const char *id) {
  for (size_t i = 0; i < s->n_stages; i++)
    if (strcmp(s->stages[i].stage, id) == 0) return &s->stages[i];
  return NULL;
}

/* What a CI gate reads: regressions (step spans, stage totals and kernel rows) of runs
 * that compare, step-count notes. */
static void tally(an_diff_report *r) {
  for (size_t i = 0; i < r->n_stages; i++) {
    const an_diff_stage *s = &r->stages[i];
    r->n_regressions += s->has_time && s->span.change == AN_DIFF_SLOWER;
    r->n_regressions += s->total.change == AN_DIFF_SLOWER;
    for (size_t k = 0; k < s->n_kernels; k++)
      r->n_regressions += s->kernels[k].change == AN_DIFF_SLOWER;
    for (size_t k = 0; k < s->n_renamed; k++)
      r->n_regressions += s->renamed[k].row.change == AN_DIFF_SLOWER;
    bool both = s->before_steps && s->after_steps;
    r->n_steps_differ += both && s->before_steps != s->after_steps;
    r->n_steps_unknown += !both && (s->before_steps || s->after_steps);
  }
  r->n_slower = r->n_regressions;
  r->reading = r->incomparable                                ? AN_DIFF_READ_DIRECTION
               : (r->identity_differs & AN_DIFF_RANK_DIFFERS) ? AN_DIFF_READ_OTHER_RANK
                                                              : AN_DIFF_READ_REGRESSIONS;
  if (r->reading != AN_DIFF_READ_REGRESSIONS) r->n_regressions = 0;
}

/* The kernel rows' change in the part launched inside graph-launching ops, over every
 * stage, with the row that moved most (an_diff_report.graph_staged_*). */
static void graph_staged(an_diff_report *r) {
  double best = 0;
  r->graph_staged_delta_us = 0;
  r->graph_staged_top = NULL;
  r->graph_staged_per_step = true;
  for (size_t i = 0; i < r->n_stages; i++) {
    const an_diff_stage *s = &r->stages[i];
    for (size_t k = 0; k < s->n_kernels; k++) {
      const an_diff_row *x = &s->kernels[k];
      double d = x->after_staged_us - x->before_staged_us;
      if (x->change == AN_DIFF_SAME || d == 0) continue;
      r->graph_staged_delta_us += d;
      r->graph_staged_per_step = r->graph_staged_per_step && s->per_step;
      if (fabs(d) > best) best = fabs(d), r->graph_staged_top = x;
    }
  }
}

/* Whose traces the tables read, where both sides state it: another rank, host or GPU. */
static unsigned identity_differs(const an_diff_input *b, const an_diff_input *a) {
  unsigned why = 0;
  if (b->rank >= 0 && a->rank >= 0 && b->rank != a->rank) why |= AN_DIFF_RANK_DIFFERS;
  if (b->host && a->host && strcmp(b->host, a->host) != 0) why |= AN_DIFF_HOST_DIFFERS;
  if (b->device >= 0 && a->device >= 0 && b->device != a->device) why |= AN_DIFF_DEVICE_DIFFERS;
  return why;
}

/* Other hardware or another world size: the runs do not compare kernel by kernel. */
static unsigned incomparable(const an_diff_input *b, const an_diff_input *a) {
  unsigned why = 0;
  if (b->gpu && a->gpu && strcmp(b->gpu, a->gpu) != 0) why |= AN_DIFF_GPU_DIFFERS;
  if (b->world_size > 0 && a->world_size > 0 && b->world_size != a->world_size)
    why |= AN_DIFF_WORLD_DIFFERS;
  return why;
}

/* A run's share of kernel time (in its counted steps) replayed from graphs; -1 unknown. */
static double graph_pct(const an_diff_side *s) {
  double k = 0, g = 0;
  for (size_t i = 0; i < s->n_stages; i++)
    if (s->stages[i].time.known)
      k += s->stages[i].time.kernel_us, g += s->stages[i].time.graph_kernel_us;
  return k > 0 ? g / k * 100 : -1;
}

/* A run's number format: the one of most roofline time among its matrix-product kernel
 * rows (every stage), with its share of their time; NULL when none has one. */
static const char *gemm_dtype(const an_diff_side *s, double *share_pct) {
  const char *best = NULL;
  double best_us = 0, all_us = 0;
  for (size_t i = 0; i < s->n_stages; i++)
    for (size_t k = 0; k < s->stages[i].n_kernels; k++) {
      const an_diff_kernel *x = &s->stages[i].kernels[k];
      if (!x->dtype) continue;
      all_us += x->gemm_us;
      if (best && !strcmp(best, x->dtype)) continue;
      double us = 0; /* this format's time: few formats, few rows */
      for (size_t j = 0; j < s->n_stages; j++)
        for (size_t m = 0; m < s->stages[j].n_kernels; m++) {
          const an_diff_kernel *y = &s->stages[j].kernels[m];
          if (y->dtype && !strcmp(y->dtype, x->dtype)) us += y->gemm_us;
        }
      if (!best || us > best_us) best = x->dtype, best_us = us;
    }
  *share_pct = all_us > 0 ? best_us / all_us * 100 : 0;
  return best;
}

static void fill_inputs(an_diff_report *r, const an_diff_side *before, const an_diff_side *after) {
  const an_diff_side *side[2] = {before, after};
  for (int i = 0; i < 2; i++) {
    const an_diff_side *x = side[i];
    double dtype_pct = 0;
    const char *dtype = gemm_dtype(x, &dtype_pct);
    r->inputs[i] = (an_diff_input){.path = x->label,
                                   .kind = x->kind ? x->kind : "trace",
                                   .n_files = x->n_files,
                                   .files = x->files,
                                   .framework = x->framework,
                                   .model = x->model,
                                   .gpu = x->gpu,
                                   .framework_defaulted = x->framework_defaulted,
                                   .n_ranks = x->n_ranks,
                                   .world_size = x->world_size,
                                   .rank = x->rank,
                                   .device = x->device,
                                   .host = x->host,
                                   .only_rank = x->only_rank,
                                   .n_unread = x->n_unread,
                                   .unread = x->unread,
                                   .graph_pct = graph_pct(x),
                                   .gemm_dtype = dtype,
                                   .gemm_dtype_pct = dtype_pct};
  }
  r->incomparable = incomparable(&r->inputs[0], &r->inputs[1]);
  r->identity_differs = identity_differs(&r->inputs[0], &r->inputs[1]);
}

an_status an_diff_build(const an_diff_side *before, const an_diff_side *after,
                        const te_rules *rules, an_diff_result *out) {
  memset(out, 0, sizeof *out);
  const te_settings *set = te_rules_settings(rules);
  owned *o = calloc(1, sizeof *o);
  size_t cap = before->n_stages + after->n_stages;
  if (o) o->stages = calloc(cap ? cap : 1, sizeof *o->stages);
  out->owned = o;
  if (!o || !o->stages) return AN_ERR_NOMEM;
  for (size_t i = 0; i < after->n_stages; i++) /* after's stages, then those it lost */
    if (!diff_stage(o, find_stage(before, after->stages[i].stage), &after->stages[i], set,
                    &o->stages[o->n_stages++]))
      return AN_ERR_NOMEM;
  for (size_t i = 0; i < before->n_stages; i++)
    if (!find_stage(after, before->stages[i].stage) &&
        !diff_stage(o, &before->stages[i], NULL, set, &o->stages[o->n_stages++]))
      return AN_ERR_NOMEM;
  for (size_t i = 0; i < o->n_stages; i++) {
    const te_stage *st = te_rules_stage_by_id(rules, o->stages[i].stage);
    o->stages[i].label = st && st->label ? st->label : o->stages[i].stage;
  }
  out->report = (an_diff_report){
      .before = before->label, .after = after->label, .n_stages = o->n_stages, .stages = o->stages};
  fill_inputs(&out->report, before, after);
  out->report.noise_floor_pct = set->diff_noise_floor_pct;
  out->report.noise_floor_us = set->diff_noise_floor_us;
  out->report.category_kernels_pct = set->diff_category_kernels_pct;
  out->report.resolve_max_floor_pct = set->diff_resolve_max_floor_pct;
  tally(&out->report);
  graph_staged(&out->report);
  return AN_OK;
}

void an_diff_result_free(an_diff_result *r) {
  owned *o = r ? r->owned : NULL;
  if (o) {
    for (size_t i = 0; i < o->n_arrays; i++) free(o->arrays[i]);
    free(o->arrays);
    for (size_t i = 0; i < o->n_rank_arrays; i++) free(o->rank_arrays[i]);
    free(o->rank_arrays);
    for (size_t i = 0; i < o->n_blobs; i++) free(o->blobs[i]);
    free(o->blobs);
    free(o->stages);
    free(o);
  }
  if (r) memset(r, 0, sizeof *r);
}
