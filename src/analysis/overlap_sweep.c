/*
 * overlap_sweep.c - the sweep line of reference-triage.md §6.3 and the category
 * table the overlap files share.
 *
 * The sweep walks start/end points once (O(n log n) for the sort). Hidden, exclusive and
 * hidden-by-compute time depend only on which *streams* are active, not on which kernel,
 * so they accumulate per stream and each kernel reads the difference of its stream's
 * running totals between its start and end: no per-interval loop over active kernels for
 * them. Only the dominant-partner counter visits the active kernels of each stream, and
 * kernels of one stream rarely overlap, so that stays near one kernel per stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap_internal.h"
#include "util/vec.h"

/* ---------------------------------------------------------------- categories */

void ov_cats_free(ov_cats *c) {
  if (!c) return;
  ut_strmap_free(&c->names);
  free(c->priority);
  free(c->weight);
  free(c->low_roi);
  memset(c, 0, sizeof *c);
  c->compute = -1;
}

long ov_cats_put(ov_cats *c, const te_rules *r, const char *label) {
  size_t len = strlen(label);
  long idx = ut_strmap_find(&c->names, label, len);
  if (idx >= 0) return idx;
  idx = ut_strmap_put(&c->names, label, len);
  if (idx < 0) return -1;
  if ((size_t)idx >= c->cap) { /* three parallel arrays: each grows to the same capacity */
    size_t cp = c->cap, cw = c->cap, cl = c->cap;
    double *p = ut_grow(c->priority, &cp, (size_t)idx + 1, sizeof *p);
    if (!p) return -1;
    c->priority = p;
    double *w = ut_grow(c->weight, &cw, (size_t)idx + 1, sizeof *w);
    if (!w) return -1;
    c->weight = w;
    bool *l = ut_grow(c->low_roi, &cl, (size_t)idx + 1, sizeof *l);
    if (!l) return -1;
    c->low_roi = l;
    c->cap = cp;
  }
  /* A category no pack mentions reads the table's absent values (lowest priority,
   * unweighted). */
  const te_settings *set = te_rules_settings(r);
  c->priority[idx] = te_number_map_get(&set->overlap_category_priority, label);
  c->weight[idx] = te_number_map_get(&set->overlap_weight, label);
  c->low_roi[idx] = te_string_list_has(&set->overlap_low_roi_hidden_categories, label);
  /* "compute" is a role of the overlap model (reference-triage.md §6.3: time hidden by compute),
   * not a name test: the overlap classifier must use that category id for it. */
  if (!strcmp(label, "compute")) c->compute = idx;
  return idx;
}

const char *ov_cats_label(const ov_cats *c, long idx) {
  if (idx < 0 || (size_t)idx >= c->names.n) return "other";
  return c->names.keys[idx];
}

/* ---------------------------------------------------------------- sweep */

typedef struct ov_point {
  double t;
  uint32_t k;    /* kernel index */
  uint8_t start; /* 0 = end, 1 = start, 2 = end of a kernel with no length: at equal
                    times ends sort first, then starts, then those ends, so every kernel
                    starts before it ends (ts + dur can round to ts, e.g. ts 1e17) */
} ov_point;

static int ov_point_cmp(const void *a, const void *b) {
  const ov_point *x = a, *y = b;
  if (x->t < y->t) return -1;
  if (x->t > y->t) return 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->k < y->k ? -1 : (x->k > y->k);
}

/* Active kernels of one stream. */
typedef struct ov_lane {
  uint32_t *k;
  size_t n, cap;
  size_t n_compute; /* active kernels of the compute category */
  long best;        /* kernel with highest (priority, duration), -1 when idle */
  long pos;         /* position in the active-stream list, -1 when idle */
  double hid, exc, hbc; /* running totals, read at kernel start and end */
} ov_lane;

/* Dominant-partner counter of one aggregate: a short list, partners are few. */
typedef struct ov_partners {
  uint32_t *name;
  double *us;
  size_t n, cap;
} ov_partners;

static bool ov_partners_add(ov_partners *p, uint32_t name, double us) {
  for (size_t i = 0; i < p->n; i++)
    if (p->name[i] == name) {
      p->us[i] += us;
      return true;
    }
  if (p->n == p->cap) { /* two parallel arrays of one capacity */
    size_t cn = p->cap, cu = p->cap;
    uint32_t *nm = ut_grow(p->name, &cn, p->n + 1, sizeof *nm);
    if (!nm) return false;
    p->name = nm;
    double *u = ut_grow(p->us, &cu, p->n + 1, sizeof *u);
    if (!u) return false;
    p->us = u;
    p->cap = cn;
  }
  p->name[p->n] = name;
  p->us[p->n] = us;
  p->n++;
  return true;
}

/* True when kernel a outranks b as a dominant partner: category priority, then
 * duration, then the earlier file position (deterministic). */
static bool ov_outranks(const ov_kernel *ks, const ov_cats *cats, uint32_t a, uint32_t b) {
  double pa = cats->priority[ks[a].cat], pb = cats->priority[ks[b].cat];
  if (pa != pb) return pa > pb;
  double da = ks[a].end - ks[a].ts, db = ks[b].end - ks[b].ts;
  if (da != db) return da > db;
  return ks[a].index < ks[b].index;
}

static void ov_lane_rebest(ov_lane *l, const ov_kernel *ks, const ov_cats *cats) {
  l->best = -1;
  for (size_t i = 0; i < l->n; i++)
    if (l->best < 0 || ov_outranks(ks, cats, l->k[i], (uint32_t)l->best)) l->best = l->k[i];
}

void ov_sweep_free(ov_sweep *s) {
  if (!s) return;
  free(s->aggs);
  memset(s, 0, sizeof *s);
}

bool ov_sweep_run(const ov_kernel *ks, size_t n, size_t n_names, size_t n_streams,
                  const ov_cats *cats, ov_sweep *out) {
  memset(out, 0, sizeof *out);
  bool ok = false;
  ov_point *pts = malloc((n ? n : 1) * 2 * sizeof *pts);
  ov_lane *lanes = calloc(n_streams ? n_streams : 1, sizeof *lanes);
  uint32_t *act = malloc((n_streams ? n_streams : 1) * sizeof *act); /* active streams */
  double *snap = malloc((n ? n : 1) * 3 * sizeof *snap);              /* lane totals at start */
  long *agg_of = malloc((n_names ? n_names : 1) * sizeof *agg_of);
  ov_agg *aggs = calloc(n_names ? n_names : 1, sizeof *aggs);
  ov_partners *parts = calloc(n_names ? n_names : 1, sizeof *parts);
  if (!pts || !lanes || !act || !snap || !agg_of || !aggs || !parts) goto done;
  for (size_t s = 0; s < n_streams; s++) lanes[s].best = lanes[s].pos = -1;

  /* Aggregates in first-seen order, representative = longest event (first wins). */
  size_t n_aggs = 0;
  for (size_t i = 0; i < n_names; i++) agg_of[i] = -1;
  for (size_t i = 0; i < n; i++) {
    uint32_t nm = ks[i].name;
    if (agg_of[nm] < 0) {
      agg_of[nm] = (long)n_aggs;
      ov_agg *a = &aggs[n_aggs++];
      a->name = nm;
      a->cat = ks[i].cat;
      a->rep = (long)i;
      a->top_partner_name = -1;
    }
    ov_agg *a = &aggs[agg_of[nm]];
    a->count++;
    a->total_us += ks[i].end - ks[i].ts;
    if (ks[i].end - ks[i].ts > ks[a->rep].end - ks[a->rep].ts) a->rep = (long)i;
  }

  for (size_t i = 0; i < n; i++) {
    pts[2 * i] = (ov_point){ks[i].ts, (uint32_t)i, 1};
    bool empty = !(ks[i].end > ks[i].ts);
    pts[2 * i + 1] = (ov_point){empty ? ks[i].ts : ks[i].end, (uint32_t)i, empty ? 2 : 0};
  }
  qsort(pts, 2 * n, sizeof *pts, ov_point_cmp);

  size_t n_act = 0, n_active_kernels = 0, compute_streams = 0;
  double prev = 0;
  for (size_t p = 0; p < 2 * n; p++) {
    double dt = pts[p].t - prev;
    if (dt > 0 && n_active_kernels > 0) {
      out->busy_us += dt;
      if (n_act >= 2) out->multi_us += dt;
      if (n_act > out->max_streams) out->max_streams = n_act;
      /* The two best streams give every stream its best *other-stream* partner. */
      long top1 = -1, top2 = -1;
      for (size_t a = 0; a < n_act; a++) {
        uint32_t s = act[a];
        uint32_t b = (uint32_t)lanes[s].best;
        if (top1 < 0 || ov_outranks(ks, cats, b, (uint32_t)lanes[top1].best)) {
          top2 = top1;
          top1 = (long)s;
        } else if (top2 < 0 || ov_outranks(ks, cats, b, (uint32_t)lanes[top2].best)) {
          top2 = (long)s;
        }
      }
      for (size_t a = 0; a < n_act; a++) {
        uint32_t s = act[a];
        ov_lane *l = &lanes[s];
        if (n_act < 2) {
          l->exc += dt;
          continue;
        }
        l->hid += dt;
        if (compute_streams - (l->n_compute > 0 ? 1 : 0) > 0) l->hbc += dt;
        long other = (long)s == top1 ? top2 : top1;
        uint32_t dom_name = ks[lanes[other].best].name;
        for (size_t j = 0; j < l->n; j++) {
          long ag = agg_of[ks[l->k[j]].name];
          if (!ov_partners_add(&parts[ag], dom_name, dt)) goto done;
        }
      }
    }
    prev = pts[p].t;
    uint32_t k = pts[p].k;
    ov_lane *l = &lanes[ks[k].stream];
    bool is_compute = cats->compute >= 0 && ks[k].cat == (uint32_t)cats->compute;
    if (pts[p].start == 1) {
      uint32_t *nk = ut_grow(l->k, &l->cap, l->n + 1, sizeof *nk);
      if (!nk) goto done;
      l->k = nk;
      l->k[l->n++] = k;
      if (l->n == 1) {
        l->pos = (long)n_act;
        act[n_act++] = ks[k].stream;
      }
      if (is_compute && l->n_compute++ == 0) compute_streams++;
      if (l->best < 0 || ov_outranks(ks, cats, k, (uint32_t)l->best)) l->best = k;
      n_active_kernels++;
      snap[3 * k] = l->hid;
      snap[3 * k + 1] = l->exc;
      snap[3 * k + 2] = l->hbc;
    } else {
      for (size_t j = 0; j < l->n; j++)
        if (l->k[j] == k) {
          l->k[j] = l->k[--l->n];
          break;
        }
      if (is_compute && --l->n_compute == 0) compute_streams--;
      n_active_kernels--;
      if (l->n == 0) {
        /* swap-remove the stream from the active list */
        uint32_t last = act[--n_act];
        if ((size_t)l->pos < n_act) {
          act[l->pos] = last;
          lanes[last].pos = l->pos;
        }
        l->pos = -1;
        l->best = -1;
      } else if (l->best == (long)k) {
        ov_lane_rebest(l, ks, cats);
      }
      ov_agg *a = &aggs[agg_of[ks[k].name]];
      a->hidden_us += l->hid - snap[3 * k];
      a->exclusive_us += l->exc - snap[3 * k + 1];
      a->hidden_by_compute_us += l->hbc - snap[3 * k + 2];
    }
  }
  for (size_t i = 0; i < n_aggs; i++) {
    ov_partners *pp = &parts[agg_of[aggs[i].name]];
    for (size_t j = 0; j < pp->n; j++)
      if (pp->us[j] > aggs[i].top_partner_us) {
        aggs[i].top_partner_us = pp->us[j];
        aggs[i].top_partner_name = pp->name[j];
      }
  }
  out->aggs = aggs;
  out->n_aggs = n_aggs;
  aggs = NULL;
  ok = true;
done:
  if (parts)
    for (size_t i = 0; i < n_names; i++) {
      free(parts[i].name);
      free(parts[i].us);
    }
  free(parts);
  if (lanes)
    for (size_t s = 0; s < n_streams; s++) free(lanes[s].k);
  free(lanes);
  free(pts);
  free(act);
  free(snap);
  free(agg_of);
  free(aggs);
  if (!ok) ov_sweep_free(out);
  return ok;
}
