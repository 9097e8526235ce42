/* report/rank_data.c - a one-rank run's rank data in JSON, and read back (ranks_report.h). */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/ranks_report.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ rank data */

/* [name, category, class, total_us, launches, max_us], then launcher and launcher_ops
 * when the launcher is known (a filtered trace's) */
static cJSON *kernel_json(const an_rank_kernel *k) {
  cJSON *x = cJSON_CreateArray();
  int n = k->launcher ? 8 : 6;
  cJSON *v[8] = {cJSON_CreateString(k->name),
                 cJSON_CreateString(k->category ? k->category : ""),
                 cJSON_CreateNumber((double)k->cls),
                 cJSON_CreateNumber(k->total_us),
                 cJSON_CreateNumber((double)k->launches),
                 cJSON_CreateNumber(k->max_us),
                 k->launcher ? cJSON_CreateString(k->launcher) : NULL,
                 k->launcher ? cJSON_CreateNumber((double)k->launcher_ops) : NULL};
  for (int j = 0; j < n; j++)
    if (!x || !v[j] || !cJSON_AddItemToArray(x, v[j])) {
      for (int i = j; i < n; i++) cJSON_Delete(v[i]);
      cJSON_Delete(x);
      return NULL;
    }
  return x;
}

/* [kind, step (-1 none), duration_us, end_us]: the floats written exactly */
static cJSON *collective_json(const an_rank_collective *c) {
  const double v[4] = {(double)c->kind, (double)c->step, (double)c->dur_us, (double)c->end_us};
  return cJSON_CreateDoubleArray(v, 4);
}

/* [kernel index, nelems, pg (-1 none), group size], then its launch-context label when it
 * has one, then 1 when it was launched in the backward pass (the label then null when it
 * has none) */
static cJSON *kind_json(const an_rank_coll_kind *k) {
  const double v[4] = {(double)k->kernel, k->nelems, (double)k->pg, (double)k->group_size};
  cJSON *a = cJSON_CreateDoubleArray(v, 4);
  if (!a || (!k->context && !k->backward)) return a;
  cJSON *ctx = k->context ? cJSON_CreateString(k->context) : cJSON_CreateNull();
  if (!ctx || !cJSON_AddItemToArray(a, ctx)) {
    cJSON_Delete(ctx);
    cJSON_Delete(a);
    return NULL;
  }
  cJSON *bw = k->backward ? cJSON_CreateNumber(1) : NULL;
  if (k->backward && (!bw || !cJSON_AddItemToArray(a, bw))) {
    cJSON_Delete(bw);
    cJSON_Delete(a);
    return NULL;
  }
  return a;
}

/* {"ranks": [...], "from_args": bool} */
static cJSON *pg_json(const an_rank_pg *g) {
  cJSON *o = cJSON_CreateObject();
  cJSON *r = o ? cJSON_AddArrayToObject(o, "ranks") : NULL;
  for (size_t i = 0; r && i < g->n_ranks; i++) {
    cJSON *n = cJSON_CreateNumber((double)g->ranks[i]);
    if (!n || !cJSON_AddItemToArray(r, n)) r = NULL, cJSON_Delete(n);
  }
  if (r && cJSON_AddBoolToObject(o, "from_args", g->from_args)) return o;
  cJSON_Delete(o);
  return NULL;
}

/* [compute_us, sync_us] */
static cJSON *step_json(const an_rank_step *st) {
  const double v[2] = {st->compute_us, st->sync_us};
  return cJSON_CreateDoubleArray(v, 2);
}

/* The members after the lists; durations are written unrounded: merge must reproduce the
 * direct run exactly. */
static cJSON *data_tail_json(const an_rank_data *d) {
  cJSON *o = cJSON_CreateObject();
  if (o && cJSON_AddNumberToObject(o, "rank", (double)d->rank) &&
      cJSON_AddStringToObject(o, "path", d->path) &&
      cJSON_AddStringToObject(o, "stage", d->stage) &&
      cJSON_AddNumberToObject(o, "busy_us", d->busy_us) &&
      cJSON_AddNumberToObject(o, "idle_us", d->idle_us) &&
      cJSON_AddNumberToObject(o, "compute_us", d->class_us[AN_RANK_COMPUTE]) &&
      cJSON_AddNumberToObject(o, "communication_us", d->class_us[AN_RANK_COMM]) &&
      cJSON_AddNumberToObject(o, "memory_us", d->class_us[AN_RANK_MEMORY]) &&
      cJSON_AddNumberToObject(o, "collective_us", d->collective_us) &&
      cJSON_AddNumberToObject(o, "base_us", d->base_us) &&
      (!d->filtered || cJSON_AddBoolToObject(o, "filtered", true)) &&
      (d->gpus < 2 || cJSON_AddNumberToObject(o, "gpus", (double)d->gpus)) &&
      cJSON_AddNumberToObject(o, "steps", (double)d->n_steps))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *pg_item(const void *pgs, size_t i) { return pg_json((const an_rank_pg *)pgs + i); }

static cJSON *step_item(const void *steps, size_t i) {
  return step_json((const an_rank_step *)steps + i);
}

static cJSON *kernel_item(const void *kernels, size_t i) {
  return kernel_json((const an_rank_kernel *)kernels + i);
}

static cJSON *kind_item(const void *kinds, size_t i) {
  return kind_json((const an_rank_coll_kind *)kinds + i);
}

static cJSON *collective_item(const void *colls, size_t i) {
  return collective_json((const an_rank_collective *)colls + i);
}

/* One rank's data, its kernel and collective lists one element at a time (a rank may
 * have hundreds of thousands of each). */
static bool data_stream(rp_jstream *w, const an_rank_data *d) {
  rp_jstream_object_open(w);
  bool ok = rp_jstream_list(w, "pgs", d->n_pgs, pg_item, d->pgs) &&
            rp_jstream_list(w, "step_times", d->n_steps, step_item, d->steps) &&
            rp_jstream_list(w, "kernels", d->n_kernels, kernel_item, d->kernels) &&
            rp_jstream_list(w, "kinds", d->n_kinds, kind_item, d->kinds) &&
            rp_jstream_list(w, "collectives", d->n_collectives, collective_item, d->collectives);
  cJSON *tail = ok ? data_tail_json(d) : NULL;
  rp_jstream_members(w, tail);
  rp_jstream_object_close(w);
  cJSON_Delete(tail);
  return ok && tail;
}

bool rp_rank_data_stream(rp_jstream *w, const an_report *r) {
  if (!r->n_rank_data) return true;
  bool ok = true;
  rp_jstream_key(w, "rank_data");
  rp_jstream_array_open(w);
  for (size_t i = 0; ok && i < r->n_rank_data; i++) ok = data_stream(w, &r->rank_data[i]);
  rp_jstream_array_close(w);
  return ok;
}

static bool keep_alloc(rp_owned *owned, void *p) {
  void **v = p ? ut_grow(owned->p, &owned->cap, owned->n + 1, sizeof *v) : NULL;
  if (!v) {
    free(p);
    return false;
  }
  owned->p = v;
  v[owned->n++] = p;
  return true;
}

static double num(const cJSON *o, const char *k, bool *ok) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(x)) *ok = false;
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static bool read_kernels(const cJSON *ks, an_rank_data *d, an_rank_kernel *k) {
  const cJSON *x;
  cJSON_ArrayForEach(x, ks) {
    const cJSON *v[4] = {cJSON_GetArrayItem(x, 0), cJSON_GetArrayItem(x, 1),
                         cJSON_GetArrayItem(x, 2), cJSON_GetArrayItem(x, 3)};
    if (!cJSON_IsString(v[0]) || !cJSON_IsString(v[1]) || !cJSON_IsNumber(v[2]) ||
        !cJSON_IsNumber(v[3]) || v[2]->valuedouble < 0 || v[2]->valuedouble > AN_RANK_MEMORY)
      return false;
    /* launches and the longest: absent in older rank data (0: unknown) */
    const cJSON *n = cJSON_GetArrayItem(x, 4), *m = cJSON_GetArrayItem(x, 5);
    bool inst =
        cJSON_IsNumber(n) && cJSON_IsNumber(m) && n->valuedouble >= 0 && m->valuedouble >= 0;
    /* the launching op and its instances: absent in older rank data (NULL: unknown) */
    const cJSON *l = cJSON_GetArrayItem(x, 6), *lo = cJSON_GetArrayItem(x, 7);
    bool launcher = cJSON_IsString(l) && cJSON_IsNumber(lo) && lo->valuedouble >= 0 &&
                    lo->valuedouble <= (double)SIZE_MAX;
    k[d->n_kernels++] = (an_rank_kernel){v[0]->valuestring,
                                         v[1]->valuestring,
                                         (an_rank_class)v[2]->valueint,
                                         v[3]->valuedouble,
                                         inst ? (size_t)n->valuedouble : 0,
                                         inst ? m->valuedouble : 0,
                                         launcher ? l->valuestring : NULL,
                                         launcher ? (size_t)lo->valuedouble : 0};
  }
  d->kernels = k;
  return true;
}

/* A whole number in [lo, hi] at index i of array x. */
static bool whole_at(const cJSON *x, int i, double lo, double hi, double *out) {
  const cJSON *v = cJSON_GetArrayItem(x, i);
  if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
      v->valuedouble != (double)(long long)v->valuedouble)
    return false;
  *out = v->valuedouble;
  return true;
}

static bool read_kinds(const cJSON *ks, an_rank_data *d, an_rank_coll_kind *k) {
  const cJSON *x;
  cJSON_ArrayForEach(x, ks) {
    double v[5] = {0};
    const cJSON *ne = cJSON_GetArrayItem(x, 1), *ctx = cJSON_GetArrayItem(x, 4);
    int size = cJSON_GetArraySize(x);
    bool label = size >= 5 && cJSON_IsString(ctx);
    if (size < 4 || size > 6 || (size == 5 && !label) ||
        (size == 6 && !label && !cJSON_IsNull(ctx)) || !cJSON_IsNumber(ne) ||
        !whole_at(x, 0, 0, 1e15, &v[0]) || !whole_at(x, 2, -1, 1e9, &v[2]) ||
        !whole_at(x, 3, 0, 1e9, &v[3]) || (size == 6 && !whole_at(x, 5, 0, 1, &v[4])))
      return false;
    k[d->n_kinds++] = (an_rank_coll_kind){
        (size_t)v[0], ne->valuedouble, (long)v[2], (size_t)v[3], label ? ctx->valuestring : NULL,
        v[4] > 0};
  }
  d->kinds = k;
  return true;
}

static bool read_collectives(const cJSON *cs, an_rank_data *d, an_rank_collective *c) {
  const cJSON *x;
  cJSON_ArrayForEach(x, cs) {
    double v[2];
    const cJSON *dur = cJSON_GetArrayItem(x, 2), *end = cJSON_GetArrayItem(x, 3);
    if (cJSON_GetArraySize(x) != 4 || !cJSON_IsNumber(dur) || !cJSON_IsNumber(end) ||
        !whole_at(x, 0, 0, 4e9, &v[0]) || !whole_at(x, 1, -1, 2e9, &v[1]))
      return false;
    c[d->n_collectives++] = (an_rank_collective){(uint32_t)v[0], (int32_t)v[1],
                                                 (float)dur->valuedouble, (float)end->valuedouble};
  }
  d->collectives = c;
  return true;
}

static bool read_pgs(const cJSON *ps, an_rank_data *d, an_rank_pg *g, rp_owned *owned) {
  const cJSON *x;
  cJSON_ArrayForEach(x, ps) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(x, "ranks");
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(x, "from_args");
    if (!cJSON_IsArray(r) || !cJSON_IsBool(fa)) return false;
    long *ranks = malloc(((size_t)cJSON_GetArraySize(r) + 1) * sizeof *ranks);
    if (!keep_alloc(owned, ranks)) return false;
    size_t n = 0;
    for (int i = 0; i < cJSON_GetArraySize(r); i++) {
      double v;
      if (!whole_at(r, i, 0, 1e15, &v) || (n && v <= ranks[n - 1])) return false;
      ranks[n++] = (long)v;
    }
    g[d->n_pgs++] = (an_rank_pg){n, ranks, cJSON_IsTrue(fa)};
  }
  d->pgs = g;
  return true;
}

static bool read_steps(const cJSON *ss, an_rank_data *d, an_rank_step *st) {
  const cJSON *x;
  size_t n = 0;
  cJSON_ArrayForEach(x, ss) {
    const cJSON *a = cJSON_GetArrayItem(x, 0), *b = cJSON_GetArrayItem(x, 1);
    if (cJSON_GetArraySize(x) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b)) return false;
    st[n++] = (an_rank_step){a->valuedouble, b->valuedouble};
  }
  d->steps = st;
  return n == d->n_steps;
}

static bool read_arrays(const cJSON *e, an_rank_data *d, rp_owned *owned) {
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(e, "pgs");
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(e, "step_times");
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(e, "kernels");
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(e, "collectives");
  const cJSON *kk = cJSON_GetObjectItemCaseSensitive(e, "kinds");
  if (!cJSON_IsArray(ps) || !cJSON_IsArray(ss) || !cJSON_IsArray(ks) || !cJSON_IsArray(cs) ||
      !cJSON_IsArray(kk))
    return false;
  an_rank_coll_kind *kind = malloc(((size_t)cJSON_GetArraySize(kk) + 1) * sizeof *kind);
  if (!keep_alloc(owned, kind) || !read_kinds(kk, d, kind)) return false;
  an_rank_pg *g = malloc(((size_t)cJSON_GetArraySize(ps) + 1) * sizeof *g);
  an_rank_step *st = malloc(((size_t)cJSON_GetArraySize(ss) + 1) * sizeof *st);
  an_rank_kernel *k = malloc(((size_t)cJSON_GetArraySize(ks) + 1) * sizeof *k);
  an_rank_collective *c = malloc(((size_t)cJSON_GetArraySize(cs) + 1) * sizeof *c);
  if (!keep_alloc(owned, g) | !keep_alloc(owned, st) | !keep_alloc(owned, k) |
      !keep_alloc(owned, c))
    return false;
  return read_pgs(ps, d, g, owned) && read_steps(ss, d, st) && read_kernels(ks, d, k) &&
         read_collectives(cs, d, c);
}

int rp_rank_data_read(const cJSON *doc, an_rank_data **data, size_t *n, size_t *n_cap,
                      rp_owned *owned, char *msg, size_t cap) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "rank_data");
  if (!cJSON_IsArray(list)) {
    snprintf(msg, cap,
             "no \"rank_data\": not a one-rank JSON report (triage --rank N --format json)");
    return -1;
  }
  an_rank_data *v = ut_grow(*data, n_cap, *n + (size_t)cJSON_GetArraySize(list), sizeof *v);
  if (!v) return snprintf(msg, cap, "out of memory"), -1;
  *data = v;
  const cJSON *e;
  size_t i = 0;
  cJSON_ArrayForEach(e, list) {
    an_rank_data *d = &v[(*n)++];
    memset(d, 0, sizeof *d);
    bool ok = true;
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
    const cJSON *stage = cJSON_GetObjectItemCaseSensitive(e, "stage");
    d->rank = (long)num(e, "rank", &ok);
    d->busy_us = num(e, "busy_us", &ok);
    d->idle_us = num(e, "idle_us", &ok);
    d->class_us[AN_RANK_COMPUTE] = num(e, "compute_us", &ok);
    d->class_us[AN_RANK_COMM] = num(e, "communication_us", &ok);
    d->class_us[AN_RANK_MEMORY] = num(e, "memory_us", &ok);
    d->collective_us = num(e, "collective_us", &ok);
    d->base_us = num(e, "base_us", &ok);
    d->filtered = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "filtered"));
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(e, "gpus"); /* absent: one */
    d->gpus = cJSON_IsNumber(gpus) && gpus->valuedouble >= 2 && gpus->valuedouble < 1e9
                  ? (size_t)gpus->valuedouble
                  : 1;
    double steps = num(e, "steps", &ok);
    d->n_steps = steps >= 0 && steps < 1e12 ? (size_t)steps : 0;
    ok = ok && cJSON_IsString(path) && cJSON_IsString(stage) && d->rank >= 0;
    if (ok) d->path = path->valuestring, d->stage = stage->valuestring;
    if (!ok || !read_arrays(e, d, owned)) {
      snprintf(msg, cap, "rank_data[%zu] is malformed", i);
      return -1;
    }
    i++;
  }
  return 0;
}

void rp_rank_data_free(rp_owned *owned) {
  for (size_t i = 0; i < owned->n; i++) free(owned->p[i]);
  free(owned->p);
  *owned = (rp_owned){0};
}

long rp_report_world_size(const cJSON *doc) {
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(doc, "limits");
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(l, "world_size");
  return cJSON_IsNumber(w) && w->valuedouble > 0 && w->valuedouble < (double)LONG_MAX
             ? (long)w->valuedouble
             : 0;
}
