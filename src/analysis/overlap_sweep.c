/*
 * overlap_sweep.c - the sweep line of docs/reference.md §6.3 and the category
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
#include "util/limits.h"
#include "util/sort.h"
#include "util/vec.h"

/* ---------------------------------------------------------------- categories */

void ov_cats_free(ov_cats *c) {
  if (!c) return;
  ut_strmap_free(&c->names);
  free(c->priority);
  free(c->weight);
  free(c->low_roi);
  free(c->collective);
  free(c->never_row);
  memset(c, 0, sizeof *c);
  c->compute = -1;
}

/* ov_cats_put of a label not asked last. */
static long cats_put(ov_cats *c, const te_rules *r, const char *label) {
  size_t len = strlen(label);
  long idx = ut_strmap_find(&c->names, label, len);
  if (idx >= 0) return idx;
  idx = ut_strmap_put(&c->names, label, len);
  if (idx < 0) return -1;
  if ((size_t)idx >= c->cap) { /* five parallel arrays: each grows to the same capacity */
    size_t cp = c->cap, cw = c->cap, cl = c->cap, cc = c->cap, cn = c->cap;
    double *p = ut_grow(c->priority, &cp, (size_t)idx + 1, sizeof *p);
    if (!p) return -1;
    c->priority = p;
    double *w = ut_grow(c->weight, &cw, (size_t)idx + 1, sizeof *w);
    if (!w) return -1;
    c->weight = w;
    bool *l = ut_grow(c->low_roi, &cl, (size_t)idx + 1, sizeof *l);
    if (!l) return -1;
    c->low_roi = l;
    bool *co = ut_grow(c->collective, &cc, (size_t)idx + 1, sizeof *co);
    if (!co) return -1;
    c->collective = co;
    bool *nr = ut_grow(c->never_row, &cn, (size_t)idx + 1, sizeof *nr);
    if (!nr) return -1;
    c->never_row = nr;
    c->cap = cp;
  }
  /* A category no pack mentions reads the table's absent values (lowest priority,
   * unweighted). */
  const te_settings *set = te_rules_settings(r);
  c->priority[idx] = te_number_map_get(&set->overlap_category_priority, label);
  c->weight[idx] = te_number_map_get(&set->overlap_weight, label);
  c->low_roi[idx] = te_string_list_has(&set->overlap_low_roi_hidden_categories, label);
  c->collective[idx] = te_string_list_has(&set->overlap_collective_categories, label);
  c->never_row[idx] = te_string_list_has(&set->overlap_never_row_categories, label);
  /* "compute" is a role of the overlap model (docs/reference.md §6.3: time hidden by compute),
   * not a name test: the overlap classifier must use that category id for it. */
  if (!strcmp(label, "compute")) c->compute = idx;
  return idx;
}

long ov_cats_put(ov_cats *c, const te_rules *r, const char *label) {
  if (c->last_label && label == c->last_label) return c->last_idx;
  long idx = cats_put(c, r, label);
  if (idx >= 0) {
    c->last_label = label;
    c->last_idx = idx;
  }
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

/* (t, start, k): a total order (a kernel has one point of each kind). */
static int ov_point_cmp(const ov_point *x, const ov_point *y) {
  if (x->t < y->t) return -1;
  if (x->t > y->t) return 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->k < y->k ? -1 : (x->k > y->k);
}

static ov_point ov_start_point(const ov_kernel *ks, uint32_t k) {
  return (ov_point){ks[k].ts, k, 1};
}

static ov_point ov_end_point(const ov_kernel *ks, uint32_t k) {
  bool empty = !(ks[k].end > ks[k].ts);
  return (ov_point){empty ? ks[k].ts : ks[k].end, k, empty ? 2 : 0};
}

/* Kernel indices by start point. */
static int ov_start_cmp(const void *a, const void *b, void *ctx) {
  const ov_kernel *ks = ctx;
  ov_point x = ov_start_point(ks, *(const uint32_t *)a),
           y = ov_start_point(ks, *(const uint32_t *)b);
  return ov_point_cmp(&x, &y);
}

/* A lane's running totals: hidden, exclusive and hidden-by-compute time. */
typedef struct ov_totals {
  double hid, exc, hbc;
} ov_totals;

/* A running kernel of a lane, with the lane's totals when it started. */
typedef struct ov_running {
  uint32_t k;
  ov_totals at;
} ov_running;

/* Active kernels of one stream. */
typedef struct ov_lane {
  ov_running *run;
  size_t n, cap;
  size_t n_compute;     /* active kernels of the compute category */
  long best;            /* kernel with highest (priority, duration), -1 when idle */
  long pos;             /* position in the active-stream list, -1 when idle */
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

void ov_sweep_free(ov_sweep *s) {
  if (!s) return;
  free(s->aggs);
  memset(s, 0, sizeof *s);
}

/* Working state of one sweep: the per-stream lanes, the active-stream list and the
 * per-kernel / per-name arrays the phases below share. */
typedef struct ov_sweep_state {
  const ov_kernel *ks;
  const uint32_t *name_cat; /* ov_cats index per name */
  const ov_cats *cats;
  size_t n, n_names, n_streams;
  /* The points in (t, start, k) order without an array of all 2n of them (32 bytes a
   * kernel): the kernels by start, merged with a min-heap of the running kernels' ends,
   * which holds at most AN_MAX_ACTIVE_KERNELS. */
  uint32_t *starts;
  ov_point *ends;
  size_t n_ends, cap_ends;
  ov_lane *lanes;
  uint32_t *act; /* active streams */
  size_t n_act, n_active_kernels, compute_streams;
  /* Per kernel, its exposed time (no compute kernel on another stream), once it ended;
   * the lane totals at its start live in its lane while it runs (a slot per running
   * kernel, not three doubles per kernel of the stage) */
  double *exposed;
  uint32_t *agg_of; /* canonical name -> aggregate, UINT32_MAX before its first kernel */
  ov_agg *aggs;
  size_t n_aggs;
  ov_partners *parts; /* per aggregate */
} ov_sweep_state;

static size_t ov_nz(size_t n) { return n ? n : 1; }

/* The overlap category of kernel k (its name's). */
static uint32_t ov_kcat(const ov_sweep_state *st, uint32_t k) {
  return st->name_cat[st->ks[k].name];
}

/* True when kernel a outranks b as a dominant partner: category priority, then
 * duration, then the earlier file position (deterministic). */
static bool ov_outranks(const ov_sweep_state *st, uint32_t a, uint32_t b) {
  const ov_kernel *ks = st->ks;
  double pa = st->cats->priority[ov_kcat(st, a)], pb = st->cats->priority[ov_kcat(st, b)];
  if (pa != pb) return pa > pb;
  double da = ks[a].end - ks[a].ts, db = ks[b].end - ks[b].ts;
  if (da != db) return da > db;
  return a < b;
}

static void ov_lane_rebest(ov_lane *l, const ov_sweep_state *st) {
  l->best = -1;
  for (size_t i = 0; i < l->n; i++)
    if (l->best < 0 || ov_outranks(st, l->run[i].k, (uint32_t)l->best)) l->best = l->run[i].k;
}

static bool ov_state_alloc(ov_sweep_state *st) {
  st->starts = malloc(ov_nz(st->n) * sizeof *st->starts);
  st->lanes = calloc(ov_nz(st->n_streams), sizeof *st->lanes);
  st->act = malloc(ov_nz(st->n_streams) * sizeof *st->act);
  st->exposed = malloc(ov_nz(st->n) * sizeof *st->exposed);
  st->agg_of = malloc(ov_nz(st->n_names) * sizeof *st->agg_of);
  st->aggs = calloc(ov_nz(st->n_names), sizeof *st->aggs);
  st->parts = calloc(ov_nz(st->n_names), sizeof *st->parts);
  if (!st->starts || !st->lanes || !st->act || !st->exposed || !st->agg_of || !st->aggs ||
      !st->parts)
    return false;
  for (size_t s = 0; s < st->n_streams; s++) st->lanes[s].best = st->lanes[s].pos = -1;
  return true;
}

static void ov_state_free(ov_sweep_state *st) {
  if (st->parts)
    for (size_t i = 0; i < st->n_names; i++) {
      free(st->parts[i].name);
      free(st->parts[i].us);
    }
  free(st->parts);
  if (st->lanes)
    for (size_t s = 0; s < st->n_streams; s++) free(st->lanes[s].run);
  free(st->lanes);
  free(st->starts);
  free(st->ends);
  free(st->act);
  free(st->exposed);
  free(st->agg_of);
  free(st->aggs);
}

/* Aggregates in first-seen order; the representative is the longest event (first wins). */
static void ov_collect_aggs(ov_sweep_state *st) {
  const ov_kernel *ks = st->ks;
  for (size_t i = 0; i < st->n_names; i++) st->agg_of[i] = UINT32_MAX;
  for (size_t i = 0; i < st->n; i++) {
    uint32_t nm = ks[i].name;
    if (st->agg_of[nm] == UINT32_MAX) {
      st->agg_of[nm] = (uint32_t)st->n_aggs;
      ov_agg *a = &st->aggs[st->n_aggs++];
      a->name = nm;
      a->cat = st->name_cat[nm];
      a->rep = a->first = (uint32_t)i;
      a->top_partner_name = -1;
    }
    ov_agg *a = &st->aggs[st->agg_of[nm]];
    a->count++;
    a->total_us += ks[i].end - ks[i].ts;
    if (ks[i].end - ks[i].ts > ks[a->rep].end - ks[a->rep].ts) a->rep = (uint32_t)i;
    if (ks[i].ts < ks[a->first].ts) a->first = (uint32_t)i;
  }
}

static void ov_sort_starts(ov_sweep_state *st) {
  for (size_t i = 0; i < st->n; i++) st->starts[i] = (uint32_t)i;
  /* kernels come nearly in start order: the runs merge */
  ut_sort(st->starts, st->n, sizeof *st->starts, ov_start_cmp, (void *)(uintptr_t)st->ks);
}

/* The end heap: push a starting kernel's end point, pop the earliest. */
static bool ov_ends_push(ov_sweep_state *st, ov_point e) {
  ov_point *h = ut_grow(st->ends, &st->cap_ends, st->n_ends + 1, sizeof *h);
  if (!h) return false;
  st->ends = h;
  size_t i = st->n_ends++;
  for (; i > 0 && ov_point_cmp(&e, &h[(i - 1) / 2]) < 0; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
  h[i] = e;
  return true;
}

static ov_point ov_ends_pop(ov_sweep_state *st) {
  ov_point *h = st->ends, top = h[0], last = h[--st->n_ends];
  size_t i = 0, n = st->n_ends;
  for (size_t c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && ov_point_cmp(&h[c + 1], &h[c]) < 0) c++;
    if (ov_point_cmp(&h[c], &last) >= 0) break;
    h[i] = h[c];
  }
  if (n) h[i] = last;
  return top;
}

/* The next point: the next start or the earliest running end, whichever comes first. */
static ov_point ov_next_point(ov_sweep_state *st, size_t *next_start) {
  if (*next_start < st->n) {
    ov_point s = ov_start_point(st->ks, st->starts[*next_start]);
    if (!st->n_ends || ov_point_cmp(&s, &st->ends[0]) < 0) {
      ++*next_start;
      return s;
    }
  }
  return ov_ends_pop(st);
}

/* The two active streams whose best kernels rank highest: they give every active stream
 * its best partner on *another* stream. */
static void ov_top_two_streams(const ov_sweep_state *st, long *top1, long *top2) {
  *top1 = *top2 = -1;
  for (size_t a = 0; a < st->n_act; a++) {
    uint32_t s = st->act[a];
    uint32_t b = (uint32_t)st->lanes[s].best;
    if (*top1 < 0 || ov_outranks(st, b, (uint32_t)st->lanes[*top1].best)) {
      *top2 = *top1;
      *top1 = (long)s;
    } else if (*top2 < 0 || ov_outranks(st, b, (uint32_t)st->lanes[*top2].best)) {
      *top2 = (long)s;
    }
  }
}

/* Credits an interval of dt with a constant active set: busy and multi-stream time, each
 * active stream's hidden / exclusive / hidden-by-compute totals, and the partner each
 * active kernel is hidden under. */
static bool ov_account_interval(ov_sweep_state *st, double dt, ov_sweep *out) {
  out->busy_us += dt;
  if (st->n_act >= 2) out->multi_us += dt;
  if (st->n_act > out->max_streams) out->max_streams = st->n_act;
  long top1, top2;
  ov_top_two_streams(st, &top1, &top2);
  for (size_t a = 0; a < st->n_act; a++) {
    uint32_t s = st->act[a];
    ov_lane *l = &st->lanes[s];
    if (st->n_act < 2) {
      l->exc += dt;
      continue;
    }
    l->hid += dt;
    if (st->compute_streams - (l->n_compute > 0 ? 1 : 0) > 0) l->hbc += dt;
    long other = (long)s == top1 ? top2 : top1;
    uint32_t dom_name = st->ks[st->lanes[other].best].name;
    for (size_t j = 0; j < l->n; j++) {
      uint32_t ag = st->agg_of[st->ks[l->run[j].k].name];
      if (!ov_partners_add(&st->parts[ag], dom_name, dt)) return false;
    }
  }
  return true;
}

static bool ov_is_compute(const ov_sweep_state *st, uint32_t k) {
  return st->cats->compute >= 0 && ov_kcat(st, k) == (uint32_t)st->cats->compute;
}

/* A kernel starts: it joins its stream's lane (and the lane the active list) and notes
 * the lane's running totals, which its end subtracts. */
static an_overlap_status ov_kernel_start(ov_sweep_state *st, uint32_t k) {
  if (st->n_active_kernels >= AN_MAX_ACTIVE_KERNELS) return AN_OVERLAP_ERR_LIMIT;
  const ov_kernel *ks = st->ks;
  ov_lane *l = &st->lanes[ks[k].stream];
  ov_running *run = ut_grow(l->run, &l->cap, l->n + 1, sizeof *run);
  if (!run) return AN_OVERLAP_ERR_NOMEM;
  l->run = run;
  l->run[l->n++] = (ov_running){k, {l->hid, l->exc, l->hbc}};
  if (l->n == 1) {
    l->pos = (long)st->n_act;
    st->act[st->n_act++] = ks[k].stream;
  }
  if (ov_is_compute(st, k) && l->n_compute++ == 0) st->compute_streams++;
  if (l->best < 0 || ov_outranks(st, k, (uint32_t)l->best)) l->best = k;
  st->n_active_kernels++;
  return AN_OVERLAP_OK;
}

/* A kernel ends: it leaves its lane and its aggregate receives what the lane's totals
 * grew by while it ran. */
static void ov_kernel_end(ov_sweep_state *st, uint32_t k) {
  const ov_kernel *ks = st->ks;
  ov_lane *l = &st->lanes[ks[k].stream];
  ov_totals at = {l->hid, l->exc, l->hbc}; /* (a kernel always ends in its lane) */
  for (size_t j = 0; j < l->n; j++)
    if (l->run[j].k == k) {
      at = l->run[j].at;
      l->run[j] = l->run[--l->n];
      break;
    }
  if (ov_is_compute(st, k) && --l->n_compute == 0) st->compute_streams--;
  st->n_active_kernels--;
  if (l->n == 0) { /* swap-remove the stream from the active list */
    uint32_t last = st->act[--st->n_act];
    if ((size_t)l->pos < st->n_act) {
      st->act[l->pos] = last;
      st->lanes[last].pos = l->pos;
    }
    l->pos = -1;
    l->best = -1;
  } else if (l->best == (long)k) {
    ov_lane_rebest(l, st);
  }
  ov_agg *a = &st->aggs[st->agg_of[ks[k].name]];
  double hbc = l->hbc - at.hbc;
  a->hidden_us += l->hid - at.hid;
  a->exclusive_us += l->exc - at.exc;
  a->hidden_by_compute_us += hbc;
  double exposed = (ks[k].end - ks[k].ts) - hbc;
  st->exposed[k] = exposed > 0 ? exposed : 0;
}

static double ov_exposed(const ov_sweep_state *st, size_t k) { return st->exposed[k]; }

static void ov_pick_top_partners(ov_sweep_state *st) {
  for (size_t i = 0; i < st->n_aggs; i++) {
    ov_agg *a = &st->aggs[i];
    const ov_partners *pp = &st->parts[i];
    for (size_t j = 0; j < pp->n; j++)
      if (pp->us[j] > a->top_partner_us) {
        a->top_partner_us = pp->us[j];
        a->top_partner_name = (int32_t)pp->name[j];
      }
  }
}

/* An aggregate's exposed time and its split, from its instances' exposed times v[0..c)
 * in ascending order and their median. */
static void ov_set_exposed(ov_agg *a, const double *v, size_t c, double median) {
  double total = 0;
  for (size_t j = 0; j < c; j++) total += v[j];
  a->exposed_us = total;
  a->exposed_median_us = median; /* with the count, the steady / wait split (ov_agg_steady_us) */
}

/* The exposed times of the instances of each name launched more than once, grouped by
 * aggregate (a counting sort): *vals (slots of them) and *start, each aggregate's first
 * slot. False when out of memory. */
static bool ov_group_exposed(const ov_sweep_state *st, size_t slots, size_t **start,
                             double **vals) {
  size_t *at = calloc(st->n_aggs + 1, sizeof *at);
  double *v = malloc(slots * sizeof *v);
  if (!at || !v) {
    free(at);
    free(v);
    return false;
  }
  for (size_t i = 0; i < st->n_aggs; i++)
    at[i + 1] = at[i] + (st->aggs[i].count > 1 ? st->aggs[i].count : 0);
  for (size_t k = 0; k < st->n; k++) {
    size_t ag = (size_t)st->agg_of[st->ks[k].name];
    if (st->aggs[ag].count > 1) v[at[ag]++] = ov_exposed(st, k);
  }
  for (size_t i = st->n_aggs; i > 0; i--) at[i] = at[i - 1]; /* back to group starts */
  at[0] = 0;
  *start = at;
  *vals = v;
  return true;
}

/* Splits each aggregate's exposed time (no compute on another stream) into a steady
 * cost, median instance x count, and the excess above it: the wait that concentrates in
 * a few instances (the first collective of a step waiting for the slowest rank, a stall)
 * and that overlap cannot recover. A name launched once is its only instance and takes
 * no slot in the grouping (with many distinct names, most of them). */
static bool ov_split_exposed(ov_sweep_state *st) {
  size_t slots = 0;
  for (size_t i = 0; i < st->n_aggs; i++) slots += st->aggs[i].count > 1 ? st->aggs[i].count : 0;
  size_t *start = NULL;
  double *vals = NULL;
  if (slots && !ov_group_exposed(st, slots, &start, &vals)) return false;
  for (size_t i = 0; i < st->n_aggs; i++) {
    ov_agg *a = &st->aggs[i];
    double one = ov_exposed(st, (size_t)a->first);
    double *v = a->count > 1 ? vals + start[i] : &one;
    double median = ut_median_f64(v, a->count); /* sorts v ascending */
    ov_set_exposed(a, v, a->count, median);
    a->exposed_first_us = ov_exposed(st, (size_t)a->first);
  }
  free(start);
  free(vals);
  return true;
}

an_overlap_status ov_sweep_run(const ov_kernel *ks, size_t n, size_t n_names,
                               const uint32_t *name_cat, size_t n_streams, const ov_cats *cats,
                               ov_sweep *out) {
  memset(out, 0, sizeof *out);
  ov_sweep_state st = {.ks = ks,
                       .name_cat = name_cat,
                       .cats = cats,
                       .n = n,
                       .n_names = n_names,
                       .n_streams = n_streams};
  an_overlap_status rc = AN_OVERLAP_ERR_NOMEM;
  if (!ov_state_alloc(&st)) goto done;
  ov_collect_aggs(&st);
  ov_sort_starts(&st);
  double prev = 0;
  for (size_t p = 0, next_start = 0; p < 2 * n; p++) {
    ov_point pt = ov_next_point(&st, &next_start);
    double dt = pt.t - prev;
    if (dt > 0 && st.n_active_kernels > 0 && !ov_account_interval(&st, dt, out)) goto done;
    prev = pt.t;
    if (pt.start == 1) {
      an_overlap_status ks_rc = ov_kernel_start(&st, pt.k);
      if (ks_rc != AN_OVERLAP_OK) {
        rc = ks_rc;
        goto done;
      }
      if (!ov_ends_push(&st, ov_end_point(ks, pt.k))) goto done;
    } else {
      ov_kernel_end(&st, pt.k);
    }
  }
  free(st.starts); /* done with; the split below needs memory of its own */
  st.starts = NULL;
  ov_pick_top_partners(&st);
  if (!ov_split_exposed(&st)) goto done;
  out->aggs = st.aggs;
  out->n_aggs = st.n_aggs;
  st.aggs = NULL;
  rc = AN_OVERLAP_OK;
done:
  ov_state_free(&st);
  if (rc != AN_OVERLAP_OK) ov_sweep_free(out);
  return rc;
}
