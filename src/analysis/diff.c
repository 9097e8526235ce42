/* analysis/diff.c - see diff.h. */
#include "analysis/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/map.h"

/* The Ranks rows of stage id in r (none for a one-rank run). */
static bool side_ranks(const an_report *r, const char *id, an_diff_side_stage *d) {
  for (size_t i = 0; i < r->n_ranks; i++) {
    const an_rank_report *rr = &r->ranks[i];
    if (strcmp(rr->stage, id) != 0) continue;
    d->ranks = calloc(rr->n_rows ? rr->n_rows : 1, sizeof *d->ranks);
    if (!d->ranks) return false;
    for (size_t k = 0; k < rr->n_rows; k++) {
      const an_rank_row *w = &rr->rows[k];
      d->ranks[d->n_ranks++] = (an_diff_rank){w->rank, w->busy_us, w->wait_us, w->straggler};
    }
    return true;
  }
  return true;
}

an_status an_diff_side_from_report(const an_report *r, const char *label, an_diff_side *out) {
  memset(out, 0, sizeof *out);
  out->label = label;
  out->files = calloc(r->run.n_formal_inputs + 1, sizeof *out->files);
  out->stages = calloc(r->n_stages ? r->n_stages : 1, sizeof *out->stages);
  if (!out->stages || !out->files) return AN_ERR_NOMEM;
  for (size_t i = 0; i < r->run.n_formal_inputs; i++) out->files[i] = r->run.formal_inputs[i];
  out->n_files = r->run.n_formal_inputs;
  out->framework = r->run.framework.label;
  out->framework_defaulted = r->run.framework.source == AN_SOURCE_DEFAULT;
  out->model = r->run.context.model.value;
  out->gpu = r->run.context.gpu.value;
  for (size_t i = 0; i < r->n_stages; i++) {
    const an_stage_report *st = &r->stages[i];
    if (!st->has_kernels) continue;
    an_diff_side_stage *d = &out->stages[out->n_stages++];
    d->stage = st->id;
    d->kernels = calloc(st->n_kernels ? st->n_kernels : 1, sizeof *d->kernels);
    d->fusions = calloc(st->n_fuse ? st->n_fuse : 1, sizeof *d->fusions);
    size_t n_ov = st->overlap ? st->overlap->n_rows : 0;
    d->overlaps = calloc(n_ov ? n_ov : 1, sizeof *d->overlaps);
    if (!d->kernels || !d->fusions || !d->overlaps || !side_ranks(r, st->id, d))
      return AN_ERR_NOMEM;
    for (size_t k = 0; k < st->n_kernels; k++)
      d->kernels[d->n_kernels++] =
          (an_diff_kernel){st->kernels[k].name, st->kernels[k].category, st->kernels[k].total_us};
    for (size_t k = 0; k < st->n_fuse; k++)
      if (st->fuse[k].shown)
        d->fusions[d->n_fusions++] =
            (an_diff_kernel){st->fuse[k].pattern_id, NULL, st->fuse[k].related_us};
    for (size_t k = 0; k < n_ov; k++) {
      const an_overlap_row *o = &st->overlap->rows[k];
      if (o->below_floor) continue; /* not printed in the report, so not compared */
      d->overlaps[d->n_overlaps++] = (an_diff_kernel){o->kernel, o->category, o->total_us};
    }
  }
  return AN_OK;
}

void an_diff_side_free(an_diff_side *s) {
  for (size_t i = 0; s && s->stages && i < s->n_stages; i++) {
    free(s->stages[i].kernels);
    free(s->stages[i].fusions);
    free(s->stages[i].overlaps);
    free(s->stages[i].ranks);
  }
  if (s) free(s->stages);
  if (s) free(s->files);
  if (s) memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ comparing */

typedef struct owned {
  an_diff_stage *stages;
  size_t n_stages;
  an_diff_row **arrays; /* every row array, freed with the result */
  size_t n_arrays;
  an_diff_rank_row **rank_arrays;
  size_t n_rank_arrays;
} owned;

typedef struct floor_t {
  double pct, us;
} floor_t;

static an_diff_change change_of(double before, double after, bool in_before, bool in_after,
                                floor_t f) {
  if (!in_before) return AN_DIFF_NEW;
  if (!in_after) return AN_DIFF_REMOVED;
  double d = after - before;
  if (fabs(d) < f.us || fabs(d) < before * f.pct / 100) return AN_DIFF_SAME;
  return d > 0 ? AN_DIFF_SLOWER : AN_DIFF_FASTER;
}

static an_diff_row make_row(const char *name, const char *cat, double b, double a, bool inb,
                            bool ina, floor_t f) {
  an_diff_row r = {name, cat, b, a, a - b, b > 0 ? (a - b) / b * 100 : 0, AN_DIFF_SAME};
  r.change = change_of(b, a, inb, ina, f);
  return r;
}

static int cmp_rows(const void *pa, const void *pb) {
  const an_diff_row *a = pa, *b = pb;
  bool ca = a->change != AN_DIFF_SAME, cb = b->change != AN_DIFF_SAME;
  if (ca != cb) return ca ? -1 : 1;
  if (fabs(a->delta_us) != fabs(b->delta_us)) return fabs(a->delta_us) > fabs(b->delta_us) ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* Rows of two lists keyed by name (after's order of first sight, then before's leftovers).
 * by_category: sum by category instead of name. NULL when out of memory. */
static an_diff_row *compare(const an_diff_kernel *b, size_t nb, const an_diff_kernel *a, size_t na,
                            bool by_category, floor_t f, size_t *n_out) {
  ut_strmap keys = {0};
  size_t cap = nb + na;
  double *bu = calloc(cap ? cap : 1, sizeof *bu), *au = calloc(cap ? cap : 1, sizeof *au);
  bool *inb = calloc(cap ? cap : 1, 1), *ina = calloc(cap ? cap : 1, 1);
  const char **cat = calloc(cap ? cap : 1, sizeof *cat);
  an_diff_row *rows = NULL;
  bool ok = bu && au && inb && ina && cat;
  for (size_t side = 0; side < 2 && ok; side++) {
    const an_diff_kernel *v = side ? b : a;
    size_t n = side ? nb : na;
    for (size_t i = 0; i < n && ok; i++) {
      const char *key = by_category ? (v[i].category ? v[i].category : "") : v[i].name;
      long k = ut_strmap_put(&keys, key, strlen(key));
      if (!(ok = k >= 0)) break;
      (side ? bu : au)[k] += v[i].total_us;
      (side ? inb : ina)[k] = true;
      if (!cat[k]) cat[k] = v[i].category;
    }
  }
  if (ok) rows = calloc(keys.n ? keys.n : 1, sizeof *rows);
  for (size_t k = 0; rows && k < keys.n; k++)
    rows[k] = make_row(keys.keys[k], by_category ? NULL : cat[k], bu[k], au[k], inb[k], ina[k], f);
  /* names point into the map's copies: re-point them at the sides' strings */
  for (size_t side = 0; rows && side < 2; side++) {
    const an_diff_kernel *v = side ? b : a;
    size_t n = side ? nb : na;
    for (size_t i = 0; i < n; i++) {
      const char *key = by_category ? (v[i].category ? v[i].category : "") : v[i].name;
      long k = ut_strmap_find(&keys, key, strlen(key));
      if (k >= 0 && rows[k].name == keys.keys[k]) rows[k].name = key;
    }
  }
  *n_out = rows ? keys.n : 0;
  if (rows && keys.n) qsort(rows, keys.n, sizeof *rows, cmp_rows);
  ut_strmap_free(&keys);
  free(bu);
  free(au);
  free(inb);
  free(ina);
  free(cat);
  return rows;
}

static bool keep(owned *o, an_diff_row *rows) {
  an_diff_row **v = realloc(o->arrays, (o->n_arrays + 1) * sizeof *v);
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

static double stage_total(const an_diff_side_stage *s) {
  double t = 0;
  for (size_t i = 0; s && i < s->n_kernels; i++) t += s->kernels[i].total_us;
  return t;
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
  an_diff_rank_row **v = rows ? realloc(o->rank_arrays, (o->n_rank_arrays + 1) * sizeof *v) : NULL;
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

static bool diff_stage(owned *o, const an_diff_side_stage *b, const an_diff_side_stage *a,
                       floor_t f, an_diff_stage *out) {
  static const an_diff_kernel none[1];
  const an_diff_kernel *bk = b ? b->kernels : none, *ak = a ? a->kernels : none;
  size_t nbk = b ? b->n_kernels : 0, nak = a ? a->n_kernels : 0;
  out->stage = a ? a->stage : b->stage;
  out->total = make_row(out->stage, NULL, stage_total(b), stage_total(a), b != NULL, a != NULL, f);
  an_diff_row *k = compare(bk, nbk, ak, nak, false, f, &out->n_kernels);
  an_diff_row *c = compare(bk, nbk, ak, nak, true, f, &out->n_categories);
  an_diff_row *fu = compare(b ? b->fusions : none, b ? b->n_fusions : 0, a ? a->fusions : none,
                            a ? a->n_fusions : 0, false, f, &out->n_fusions);
  an_diff_row *ov = compare(b ? b->overlaps : none, b ? b->n_overlaps : 0, a ? a->overlaps : none,
                            a ? a->n_overlaps : 0, false, f, &out->n_overlaps);
  bool ok = keep(o, k) & keep(o, c) & keep(o, fu) & keep(o, ov);
  if (!ok) return false;
  if (!diff_ranks(o, b, a, out)) return false;
  out->n_fusions = only_appeared_or_gone(fu, out->n_fusions);
  out->n_overlaps = only_appeared_or_gone(ov, out->n_overlaps);
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

an_status an_diff_build(const an_diff_side *before, const an_diff_side *after,
                        const te_rules *rules, an_diff_result *out) {
  memset(out, 0, sizeof *out);
  const te_settings *set = te_rules_settings(rules);
  floor_t f = {set->diff_noise_floor_pct, set->diff_noise_floor_us};
  owned *o = calloc(1, sizeof *o);
  size_t cap = before->n_stages + after->n_stages;
  if (o) o->stages = calloc(cap ? cap : 1, sizeof *o->stages);
  out->owned = o;
  if (!o || !o->stages) return AN_ERR_NOMEM;
  for (size_t i = 0; i < after->n_stages; i++) /* after's stages, then those it lost */
    if (!diff_stage(o, find_stage(before, after->stages[i].stage), &after->stages[i], f,
                    &o->stages[o->n_stages++]))
      return AN_ERR_NOMEM;
  for (size_t i = 0; i < before->n_stages; i++)
    if (!find_stage(after, before->stages[i].stage) &&
        !diff_stage(o, &before->stages[i], NULL, f, &o->stages[o->n_stages++]))
      return AN_ERR_NOMEM;
  for (size_t i = 0; i < o->n_stages; i++) {
    const te_stage *st = te_rules_stage_by_id(rules, o->stages[i].stage);
    o->stages[i].label = st && st->label ? st->label : o->stages[i].stage;
  }
  out->report = (an_diff_report){
      .before = before->label, .after = after->label, .n_stages = o->n_stages, .stages = o->stages};
  const an_diff_side *sides[2] = {before, after};
  for (int i = 0; i < 2; i++)
    out->report.inputs[i] =
        (an_diff_input){sides[i]->label,     sides[i]->kind ? sides[i]->kind : "trace",
                        sides[i]->n_files,   sides[i]->files,
                        sides[i]->framework, sides[i]->model,
                        sides[i]->gpu,       sides[i]->framework_defaulted};
  out->report.noise_floor_pct = f.pct;
  out->report.noise_floor_us = f.us;
  return AN_OK;
}

void an_diff_result_free(an_diff_result *r) {
  owned *o = r ? r->owned : NULL;
  if (o) {
    for (size_t i = 0; i < o->n_arrays; i++) free(o->arrays[i]);
    free(o->arrays);
    for (size_t i = 0; i < o->n_rank_arrays; i++) free(o->rank_arrays[i]);
    free(o->rank_arrays);
    free(o->stages);
    free(o);
  }
  if (r) memset(r, 0, sizeof *r);
}
