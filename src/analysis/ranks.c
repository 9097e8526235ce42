/* analysis/ranks.c - see ranks.h. */
#include "analysis/ranks.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kmap_internal.h"
#include "analysis/strtab.h"
#include "analysis/workers.h"
#include "triage/limits.h"
#include "util/map.h"
#include "util/sort.h"
#include "util/vec.h"

/* What a rank's kernel counts as in the split (an_rank_class; overlaps go to the lower
 * value first). */
enum { N_CLASSES = AN_RANK_MEMORY + 1 };

typedef struct coll {
  uint32_t name; /* index into names */
  double dur;
} coll;

struct an_rank_summary {
  an_rank_input in;
  char *path;
  int64_t *group; /* the smallest process group holding the rank, ascending */
  size_t n_group; /* 0: unknown */
  double busy_us, idle_us, class_us[N_CLASSES], collective_us;
  size_t n_steps;  /* stage annotations (one per serving step); 0 = unknown */
  ut_strmap names; /* canonical kernel names */
  /* parallel to names: name (the map's key), category (borrowed from the rules), class and
   * total time; an_rank_summary_data lends it as is */
  an_rank_kernel *kern;
  size_t cap_kern;
  coll *colls; /* in start order */
  size_t n_colls, cap_colls;
  /* an_rank_summary_data's arrays */
  an_rank_collective *x_colls;
  long *x_group;
};

static void summary_free(an_rank_summary *s) {
  if (!s) return;
  free(s->path);
  free(s->group);
  ut_strmap_free(&s->names);
  free(s->kern);
  free(s->colls);
  free(s->x_colls);
  free(s->x_group);
  free(s);
}

/* ------------------------------------------------------------------ one rank */

static int cmp_event_ptr(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const tr_event *a = *(const tr_event *const *)pa, *b = *(const tr_event *const *)pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* Every kernel of the view's process (all stages), in start order. */
static const tr_event **view_kernels(const an_trace_view *v, size_t *n) {
  size_t total = 0;
  for (size_t s = 0; s < v->n_stages; s++) total += v->stages[s].n;
  const tr_event **k = malloc((total ? total : 1) * sizeof *k);
  if (!k) return NULL;
  size_t m = 0;
  for (size_t s = 0; s < v->n_stages; s++)
    for (size_t i = 0; i < v->stages[s].n; i++) k[m++] = v->stages[s].kernels[i];
  ut_sort(k, m, sizeof *k, cmp_event_ptr, NULL); /* nearly in order: runs merged */
  *n = m;
  return k;
}

static an_rank_class name_class(const te_rules *rules, const char *category) {
  const te_settings *set = te_rules_settings(rules);
  if (te_string_list_has(&set->ranks_communication_categories, category)) return AN_RANK_COMM;
  if (te_string_list_has(&set->ranks_memory_categories, category)) return AN_RANK_MEMORY;
  return AN_RANK_COMPUTE;
}

/* How one summary names and classifies its kernels. */
typedef struct namer {
  const te_rules *rules;
  an_hex_mask mask;
  /* the kernel map of the views summarised, whose name table decided each name's class
   * already; NULL for a rank read here */
  const an_kernel_map *kmap;
  pthread_mutex_t *lock; /* serialises rules queries across workers; NULL: one thread */
} namer;

/* The category of a canonical name: the kernel map's for its name id, else the
 * classifier's (under lock). */
static const char *name_category(const namer *nm, const char *name, uint32_t id) {
  const char *category = an_kernel_map_name_category(nm->kmap, id, NULL);
  if (category) return category;
  if (nm->lock) pthread_mutex_lock(nm->lock);
  category = te_rules_classify(nm->rules, "kernel", name, NULL);
  if (nm->lock) pthread_mutex_unlock(nm->lock);
  return category ? category : "";
}

/* Index of the kernel's canonical name, classifying a new one. -1: no memory. */
static long name_index(an_rank_summary *s, const char *raw, const namer *nm) {
  char buf[1024];
  size_t len = an_canonical_name(raw, strlen(raw), nm->mask, buf, sizeof buf);
  if (len >= sizeof buf) len = sizeof buf - 1; /* long names match on their first 1 KiB */
  size_t before = s->names.n;
  /* a name the kernel map saw keeps the map's copy (the map outlives the summary) */
  uint32_t id = an_kernel_map_find_name(nm->kmap, buf, len);
  long idx = id == AN_KMAP_NO_NAME
                 ? ut_strmap_put(&s->names, buf, len)
                 : ut_strmap_put_borrowed(&s->names, an_kernel_map_name(nm->kmap, id), len);
  if (idx < 0 || s->names.n == before) return idx;
  an_rank_kernel *kern = ut_grow(s->kern, &s->cap_kern, s->names.n, sizeof *kern);
  if (!kern) return -1;
  s->kern = kern;
  const char *category = name_category(nm, s->names.keys[idx], id);
  s->kern[idx] = (an_rank_kernel){s->names.keys[idx], category, name_class(nm->rules, category), 0};
  return idx;
}

typedef struct edge {
  double t;
  int delta; /* +1 start, -1 end */
  int cls;
} edge;

/* Not a total order (ties of t and delta differ in cls), and it need not be: edges at
 * one instant are dt = 0 apart, so their order adds nothing to any sum. */
static int cmp_edge(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const edge *a = pa, *b = pb;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return a->delta - b->delta; /* ends first: touching kernels leave no gap */
}

/* Busy time split by class: each instant goes to the first class active (compute, then
 * communication, then memory), so the communication share is the exposed part. */
static bool sweep(an_rank_summary *s, const tr_trace *t, const tr_event **k, const uint8_t *cls,
                  size_t n) {
  if (!n) return true;
  edge *e = malloc(2 * n * sizeof *e);
  if (!e) return false;
  double first = k[0]->ts, last = k[0]->ts + tr_event_dur(t, k[0]);
  for (size_t i = 0; i < n; i++) {
    double end = k[i]->ts + tr_event_dur(t, k[i]);
    e[2 * i] = (edge){k[i]->ts, 1, cls[i]};
    e[2 * i + 1] = (edge){end, -1, cls[i]};
    if (end > last) last = end;
  }
  ut_sort(e, 2 * n, sizeof *e, cmp_edge, NULL); /* no merge buffer */
  long active[N_CLASSES] = {0};
  for (size_t i = 0; i < 2 * n; i++) {
    if (i > 0) {
      double dt = e[i].t - e[i - 1].t;
      for (int c = 0; c < N_CLASSES && dt > 0; c++)
        if (active[c] > 0) {
          s->class_us[c] += dt;
          s->busy_us += dt;
          break;
        }
    }
    active[e[i].cls] += e[i].delta;
  }
  free(e);
  s->idle_us = last - first > s->busy_us ? last - first - s->busy_us : 0;
  return true;
}

/* The smallest process group of distributedInfo that holds the rank. */
static bool set_group(an_rank_summary *s, const tr_trace *t) {
  const tr_trace_meta *m = tr_trace_meta_get(t);
  int64_t rank = m->rank != TR_NO_ID ? m->rank : s->in.rank;
  const tr_process_group *best = NULL;
  for (size_t g = 0; g < m->n_groups; g++) {
    const tr_process_group *pg = &m->groups[g];
    bool holds = false;
    for (size_t i = 0; i < pg->n_ranks && !holds; i++) holds = pg->ranks[i] == rank;
    if (holds && (!best || pg->n_ranks < best->n_ranks)) best = pg;
  }
  if (!best) return true;
  s->group = malloc(best->n_ranks * sizeof *s->group);
  if (!s->group) return false;
  memcpy(s->group, best->ranks, best->n_ranks * sizeof *s->group);
  s->n_group = best->n_ranks;
  for (size_t i = 1; i < s->n_group; i++) /* insertion sort: a group is small */
    for (size_t j = i; j > 0 && s->group[j - 1] > s->group[j]; j--) {
      int64_t x = s->group[j];
      s->group[j] = s->group[j - 1];
      s->group[j - 1] = x;
    }
  return true;
}

typedef struct span {
  double ts, end;
} span;

static int cmp_span(const void *pa, const void *pb) {
  const span *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->end > b->end ? -1 : a->end < b->end; /* the outer one first */
}

/* Annotations of one kind that mark a step (matcher step_annotation; without it, those
 * naming a stage), an annotation inside a counted one being the same step (vLLM's
 * execute_model around its gpu_model_runner: forward). Caller holds the lock. */
static size_t steps_of_kind(const tr_trace *t, tr_kind kind, const te_rules *rules) {
  const te_matcher *m = te_rules_matcher(rules, "step_annotation");
  size_t n = 0, found = 0, steps = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  span *sp = malloc((n ? n : 1) * sizeof *sp);
  if (!sp) return 0; /* steps unknown, as for a trace without annotations */
  for (size_t i = 0; i < n; i++) {
    const char *name = tr_str_get(t, ev[i].name);
    bool step = m ? te_matcher_match(m, name, strlen(name))
                  : te_rules_stage_from_annotation(rules, name) != NULL;
    if (step) sp[found++] = (span){ev[i].ts, ev[i].ts + tr_event_dur(t, &ev[i])};
  }
  qsort(sp, found, sizeof *sp, cmp_span);
  double last_end = 0;
  for (size_t i = 0; i < found; i++)
    if (steps == 0 || sp[i].ts >= last_end) {
      steps++;
      last_end = sp[i].end;
    }
  free(sp);
  return steps;
}

/* Steps: the CPU step annotations, else the GPU ones; 0 when the trace has neither
 * (TRT-LLM). */
static size_t count_steps(const tr_trace *t, const te_rules *rules, pthread_mutex_t *lock) {
  static const tr_kind kinds[2] = {TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  size_t steps = 0;
  if (lock) pthread_mutex_lock(lock);
  for (int k = 0; k < 2 && !steps; k++) steps = steps_of_kind(t, kinds[k], rules);
  if (lock) pthread_mutex_unlock(lock);
  return steps;
}

static bool add_kernels(an_rank_summary *s, const tr_trace *t, const tr_event **k, uint8_t *cls,
                        size_t n, const namer *nm) {
  /* one entry per distinct name, so at most one per kernel and per string of the trace:
   * reserved at that bound (pages never written cost no memory) and trimmed after, where
   * doubling would leave each smaller copy behind as a hole (10 MB at 262,145 names) */
  size_t n_strings = tr_trace_string_count(t);
  size_t bound = n_strings < n ? n_strings : n;
  uint32_t *index_of = calloc(n_strings ? n_strings : 1, sizeof *index_of); /* tr_str: idx + 1 */
  s->kern = malloc((bound ? bound : 1) * sizeof *s->kern);
  if (!s->kern || !index_of) {
    free(index_of);
    return false;
  }
  s->cap_kern = bound ? bound : 1;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    tr_str name = k[i]->name;
    if (name >= n_strings) { /* not a string of t: a caller's error */
      ok = false;
      break;
    }
    if (!index_of[name]) {
      long idx = name_index(s, tr_str_get(t, name), nm);
      if (!(ok = idx >= 0)) break;
      index_of[name] = (uint32_t)idx + 1;
    }
    uint32_t idx = index_of[name] - 1;
    double dur = tr_event_dur(t, k[i]);
    s->kern[idx].total_us += dur;
    cls[i] = (uint8_t)s->kern[idx].cls;
    if (cls[i] != AN_RANK_COMM) continue;
    s->collective_us += dur;
    coll *c = ut_grow(s->colls, &s->cap_colls, s->n_colls + 1, sizeof *c);
    if (!(ok = c != NULL)) break;
    s->colls = c;
    s->colls[s->n_colls++] = (coll){idx, dur};
  }
  free(index_of);
  s->kern = ut_shrink(s->kern, &s->cap_kern, s->names.n, sizeof *s->kern);
  return ok;
}

static an_rank_summary *summarize(const an_rank_input *in, const an_trace_view *v,
                                  const te_rules *rules, const an_kernel_map *kmap,
                                  pthread_mutex_t *lock) {
  an_rank_summary *s = calloc(1, sizeof *s);
  size_t n = 0;
  const tr_event **k = s ? view_kernels(v, &n) : NULL;
  uint8_t *cls = k ? malloc(n ? n : 1) : NULL;
  bool ok = cls && (s->path = strdup(in->path)) != NULL;
  if (ok) {
    s->in = *in;
    s->in.path = s->path;
    namer nm = {rules, an_hex_mask_from_rules(rules), kmap, lock};
    ok = set_group(s, v->trace) && add_kernels(s, v->trace, k, cls, n, &nm) &&
         sweep(s, v->trace, k, cls, n);
    s->n_steps = count_steps(v->trace, rules, lock);
  }
  free(cls);
  free(k);
  if (!ok) {
    summary_free(s);
    return NULL;
  }
  return s;
}

an_rank_summary *an_rank_summarize(const an_rank_input *in, const an_trace_view *v,
                                   const te_rules *rules, const an_kernel_map *kmap) {
  return summarize(in, v, rules, kmap, NULL);
}

/* ------------------------------------------------------------------ plain data */

bool an_rank_summary_data(an_rank_summary *s, an_rank_data *out) {
  free(s->x_colls);
  free(s->x_group);
  s->x_colls = malloc((s->n_colls ? s->n_colls : 1) * sizeof *s->x_colls);
  s->x_group = malloc((s->n_group ? s->n_group : 1) * sizeof *s->x_group);
  if (!s->x_colls || !s->x_group) return false;
  for (size_t i = 0; i < s->n_colls; i++)
    s->x_colls[i] = (an_rank_collective){s->colls[i].name, s->colls[i].dur};
  for (size_t i = 0; i < s->n_group; i++) s->x_group[i] = (long)s->group[i];
  *out = (an_rank_data){.rank = s->in.rank,
                        .path = s->path,
                        .stage = s->in.stage,
                        .n_group = s->n_group,
                        .group = s->x_group,
                        .busy_us = s->busy_us,
                        .idle_us = s->idle_us,
                        .collective_us = s->collective_us,
                        .n_steps = s->n_steps,
                        .n_kernels = s->names.n,
                        .kernels = s->kern,
                        .n_collectives = s->n_colls,
                        .collectives = s->x_colls};
  memcpy(out->class_us, s->class_us, sizeof s->class_us);
  return true;
}

an_rank_summary *an_rank_summary_from_data(const an_rank_data *d) {
  an_rank_summary *s = calloc(1, sizeof *s);
  bool ok = s && (s->path = strdup(d->path ? d->path : "")) != NULL;
  if (ok) {
    s->in = (an_rank_input){s->path, d->stage, d->rank};
    s->busy_us = d->busy_us;
    s->idle_us = d->idle_us;
    s->collective_us = d->collective_us;
    s->n_steps = d->n_steps;
    memcpy(s->class_us, d->class_us, sizeof s->class_us);
    s->cap_kern = d->n_kernels ? d->n_kernels : 1;
    s->kern = calloc(s->cap_kern, sizeof *s->kern);
    s->colls = calloc(d->n_collectives ? d->n_collectives : 1, sizeof *s->colls);
    s->group = calloc(d->n_group ? d->n_group : 1, sizeof *s->group);
    ok = s->kern && s->colls && s->group;
  }
  for (size_t k = 0; ok && k < d->n_kernels; k++) {
    const an_rank_kernel *x = &d->kernels[k];
    ok = ut_strmap_put(&s->names, x->name, strlen(x->name)) == (long)k && x->cls <= AN_RANK_MEMORY;
    if (!ok) break; /* a repeated name is not a report triage wrote */
    s->kern[k] =
        (an_rank_kernel){s->names.keys[k], x->category ? x->category : "", x->cls, x->total_us};
  }
  for (size_t i = 0; ok && i < d->n_collectives; i++) {
    ok = d->collectives[i].kernel < d->n_kernels;
    s->colls[i] = (coll){(uint32_t)d->collectives[i].kernel, d->collectives[i].dur_us};
  }
  if (ok) {
    s->n_colls = d->n_collectives;
    s->cap_colls = d->n_collectives;
    for (size_t i = 0; i < d->n_group; i++) s->group[i] = d->group[i];
    s->n_group = d->n_group;
    return s;
  }
  summary_free(s);
  return NULL;
}

/* ------------------------------------------------------------------ workers */

typedef struct pool {
  const an_rank_input *in;
  an_rank_summary **out;
  size_t *todo; /* indices without a summary yet */
  size_t n_todo, next;
  const te_rules *rules;
  const an_ranks_options *opt;
  pthread_mutex_t lock; /* the rules, next, the failure and warnings */
  an_status status;
  an_ranks_failure *fail;
} pool;

static void locked_warn(void *ctx, const tr_warning *w) {
  pool *p = ctx;
  pthread_mutex_lock(&p->lock);
  p->opt->warn(p->opt->warn_ctx, w);
  pthread_mutex_unlock(&p->lock);
}

static an_status read_one(pool *p, size_t i, tr_error *te) {
  tr_read_options ro = {0};
  ro.chunk_size = p->opt->reader_chunk_size;
  if (p->opt->warn) {
    ro.warn = locked_warn;
    ro.warn_ctx = p;
  }
  tr_trace *t = tr_trace_read(p->in[i].path, &ro, te);
  if (!t) return AN_ERR_INPUT;
  an_trace_view v;
  pthread_mutex_lock(&p->lock);
  an_status rc = an_trace_view_build(t, p->in[i].stage, p->rules, NULL, &v);
  pthread_mutex_unlock(&p->lock);
  if (rc == AN_OK) {
    p->out[i] = summarize(&p->in[i], &v, p->rules, NULL, &p->lock);
    if (!p->out[i]) rc = AN_ERR_NOMEM;
    an_trace_view_free(&v);
  }
  tr_trace_destroy(t); /* the events go; the summary stays */
  return rc;
}

static void *worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    bool stop = p->next >= p->n_todo || p->status != AN_OK;
    size_t i = stop ? 0 : p->todo[p->next++];
    pthread_mutex_unlock(&p->lock);
    if (stop) return NULL;
    tr_error te = {0};
    an_status rc = read_one(p, i, &te);
    if (rc == AN_OK) continue;
    pthread_mutex_lock(&p->lock);
    if (p->status == AN_OK) {
      p->status = rc;
      p->fail->path = p->in[i].path;
      p->fail->error = te;
      if (rc == AN_ERR_NOMEM) snprintf(p->fail->error.message, sizeof te.message, "out of memory");
    }
    pthread_mutex_unlock(&p->lock);
  }
}

static an_status read_all(pool *p) {
  an_status rc = an_workers_run(an_workers_count(p->opt->workers, p->n_todo), worker, p);
  return rc != AN_OK ? rc : p->status;
}

/* ------------------------------------------------------------------ the section */

typedef struct owned {
  an_strtab *strings;
  an_rank_summary **sums;
  size_t n_sums;
  void **allocs; /* every array of the reports (they hold const pointers) */
  size_t n_allocs, cap_allocs;
} owned;

/* Records p to be freed with the result; false (p freed) when out of memory. */
static bool own(owned *o, void *p) {
  if (!p) return false;
  void **v = ut_grow(o->allocs, &o->cap_allocs, o->n_allocs + 1, sizeof *v);
  if (!v) {
    free(p);
    return false;
  }
  o->allocs = v;
  o->allocs[o->n_allocs++] = p;
  return true;
}

/* Ranks of the table that share summary i's process group (all of the stage when the
 * trace names none). Writes into ranks (capacity n), returns the count. */
static size_t group_members(an_rank_summary *const *sums, size_t n, size_t i, long *ranks) {
  size_t m = 0;
  for (size_t j = 0; j < n; j++) {
    bool in = sums[i]->n_group == 0;
    for (size_t g = 0; g < sums[i]->n_group && !in; g++) in = sums[i]->group[g] == sums[j]->in.rank;
    if (in) ranks[m++] = sums[j]->in.rank;
  }
  return m;
}

static bool same_ranks(const long *a, size_t na, const long *b, size_t nb) {
  return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

/* Rows sharing a group get the same index; groups hold their member ranks. */
static bool make_groups(owned *o, an_rank_summary *const *sums, size_t n, an_rank_row *rows,
                        an_rank_group **groups_out, size_t *n_groups) {
  an_rank_group *groups = calloc(n, sizeof *groups);
  long *scratch = malloc(n * sizeof *scratch);
  bool ok = own(o, groups) && scratch;
  if (!ok) groups = NULL;
  size_t ng = 0;
  for (size_t i = 0; i < n && ok; i++) {
    size_t m = group_members(sums, n, i, scratch);
    size_t g = 0;
    while (g < ng && !same_ranks(groups[g].ranks, groups[g].n_ranks, scratch, m)) g++;
    if (g == ng) {
      long *r = malloc((m ? m : 1) * sizeof *r);
      if (!(ok = own(o, r))) break;
      memcpy(r, scratch, m * sizeof *r);
      groups[ng++] = (an_rank_group){.n_ranks = m, .ranks = r};
    }
    rows[i].group = g;
  }
  free(scratch);
  *groups_out = groups;
  *n_groups = ng;
  return ok;
}

/* The durations of name (canonical) on summary s, in occurrence order. */
static size_t occurrences(const an_rank_summary *s, const char *name, double *out, size_t cap) {
  long idx = ut_strmap_find(&s->names, name, strlen(name));
  size_t m = 0;
  for (size_t i = 0; idx >= 0 && i < s->n_colls; i++)
    if (s->colls[i].name == (uint32_t)idx) {
      if (m < cap) out[m] = s->colls[i].dur;
      m++;
    }
  return m;
}

/* Wait of each member over the instances of one collective name: for the k-th
 * occurrence on every rank, each rank's duration minus the shortest. */
static bool match_name(an_rank_summary **mem, size_t m, const char *name, double *wait,
                       an_rank_group *g) {
  double **d = calloc(m, sizeof *d);
  size_t *cnt = calloc(m, sizeof *cnt);
  bool ok = d && cnt;
  size_t common = SIZE_MAX;
  for (size_t r = 0; r < m && ok; r++) {
    cnt[r] = occurrences(mem[r], name, NULL, 0);
    d[r] = malloc((cnt[r] ? cnt[r] : 1) * sizeof **d);
    ok = d[r] != NULL;
    if (ok) occurrences(mem[r], name, d[r], cnt[r]);
    if (cnt[r] < common) common = cnt[r];
  }
  for (size_t k = 0; ok && k < common; k++) {
    double lo = d[0][k];
    for (size_t r = 1; r < m; r++)
      if (d[r][k] < lo) lo = d[r][k];
    for (size_t r = 0; r < m; r++) wait[r] += d[r][k] - lo;
  }
  if (ok) {
    g->n_matched += common;
    for (size_t r = 0; r < m; r++) g->n_unmatched += cnt[r] - common;
  }
  for (size_t r = 0; d && r < m; r++) free(d[r]);
  free(d);
  free(cnt);
  return ok;
}

/* Collective names any member ran (first seen order), matched one after another. */
static bool group_waits(an_rank_summary **mem, size_t m, double *wait, an_rank_group *g) {
  ut_strmap seen = {0};
  bool ok = true;
  for (size_t r = 0; r < m && ok; r++)
    for (size_t i = 0; i < mem[r]->n_colls && ok; i++) {
      const char *name = mem[r]->names.keys[mem[r]->colls[i].name];
      size_t before = seen.n;
      ok = ut_strmap_put(&seen, name, strlen(name)) >= 0;
      if (ok && seen.n > before) ok = match_name(mem, m, name, wait, g);
    }
  ut_strmap_free(&seen);
  return ok;
}

/* Waits, the straggler and the others' loss of every group. */
static bool stragglers(an_rank_summary **sums, an_rank_row *rows, size_t n, an_rank_group *groups,
                       size_t ng, double min_share_pct) {
  an_rank_summary **mem = malloc(n * sizeof *mem);
  size_t *at = malloc(n * sizeof *at);
  double *wait = malloc(n * sizeof *wait);
  bool ok = mem && at && wait;
  for (size_t g = 0; g < ng && ok; g++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (rows[i].group == g) mem[m] = sums[i], at[m] = i, wait[m++] = 0;
    ok = group_waits(mem, m, wait, &groups[g]);
    size_t best = 0;
    for (size_t r = 0; r < m && ok; r++) {
      an_rank_row *row = &rows[at[r]];
      row->wait_us = wait[r];
      row->wait_share_pct = row->busy_us > 0 ? wait[r] / row->busy_us * 100 : 0;
      if (wait[r] < wait[best]) best = r; /* ties: the lowest rank */
    }
    if (!ok || m < 2) continue;
    double lost = 0, gpu = 0;
    for (size_t r = 0; r < m; r++) {
      if (r != best) lost += rows[at[r]].wait_us;
      gpu += rows[at[r]].busy_us + rows[at[r]].idle_us;
    }
    an_rank_group *gr = &groups[g];
    gr->n_steps = 0; /* the fewest steps a member saw, when every member saw some */
    for (size_t r = 0; r < m; r++)
      if (r == 0 || mem[r]->n_steps < gr->n_steps) gr->n_steps = mem[r]->n_steps;
    gr->lost_per_step_us = gr->n_steps ? lost / (double)gr->n_steps : 0;
    gr->straggler = rows[at[best]].rank;
    gr->lost_us = lost;
    gr->lost_share_pct = gpu > 0 ? lost / gpu * 100 : 0;
    gr->has_straggler = gr->n_matched > 0 && gr->lost_share_pct >= min_share_pct;
    rows[at[best]].straggler = gr->has_straggler;
  }
  free(mem);
  free(at);
  free(wait);
  return ok;
}

static int cmp_imbalance(const void *pa, const void *pb) {
  const an_imbalance_row *a = pa, *b = pb;
  if (a->spread_pct != b->spread_pct) return a->spread_pct > b->spread_pct ? -1 : 1;
  return strcmp(a->kernel, b->kernel);
}

/* One imbalance row candidate: name over the members of group g. */
static bool imbalance_of(an_rank_summary **sums, const an_rank_row *rows, size_t n, size_t g,
                         const char *name, const te_settings *set, an_imbalance_row *out) {
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    if (rows[i].group != g) continue;
    long idx = ut_strmap_find(&sums[i]->names, name, strlen(name));
    const an_rank_kernel *kn = idx >= 0 ? &sums[i]->kern[idx] : NULL;
    double us = kn ? kn->total_us : 0;
    if (kn && kn->cls == AN_RANK_COMM) return false; /* waits, not work */
    if (kn) out->category = kn->category;
    if (first || us < out->min_us) out->min_us = us, out->min_rank = rows[i].rank;
    if (first || us > out->max_us) out->max_us = us, out->max_rank = rows[i].rank;
    first = false;
  }
  const an_rank_row *max_row = NULL;
  for (size_t i = 0; i < n; i++)
    if (rows[i].group == g && rows[i].rank == out->max_rank) max_row = &rows[i];
  if (first || out->max_us <= 0 || !max_row) return false;
  out->group = g;
  out->spread_pct = (out->max_us - out->min_us) / out->max_us * 100;
  return out->spread_pct > set->ranks_imbalance_pct &&
         out->max_us >= max_row->busy_us * set->ranks_imbalance_min_share_pct / 100;
}

/* Kernels whose time differs across the ranks of a group by more than ranks.imbalance_pct
 * of the largest (bounded 0-100 %, a kernel missing on a rank is 100 %). */
static bool imbalance(owned *o, an_rank_summary **sums, const an_rank_row *rows, size_t n,
                      size_t ng, const te_rules *rules, an_rank_report *rep) {
  an_strtab *st = o->strings;
  const te_settings *set = te_rules_settings(rules);
  an_imbalance_row *out = NULL;
  size_t n_out = 0, cap = 0;
  for (size_t g = 0; g < ng; g++) {
    ut_strmap seen = {0};
    for (size_t i = 0; i < n; i++) {
      if (rows[i].group != g) continue;
      for (size_t k = 0; k < sums[i]->names.n; k++) {
        const char *name = sums[i]->names.keys[k];
        size_t before = seen.n;
        if (ut_strmap_put(&seen, name, strlen(name)) < 0) goto nomem;
        an_imbalance_row row = {0};
        if (seen.n == before || !imbalance_of(sums, rows, n, g, name, set, &row)) continue;
        an_imbalance_row *v = ut_grow(out, &cap, n_out + 1, sizeof *v);
        if (!v || !(row.kernel = an_strtab_cstr(st, name))) goto nomem;
        out = v;
        out[n_out++] = row;
      }
    }
    ut_strmap_free(&seen);
    continue;
  nomem:
    ut_strmap_free(&seen);
    free(out);
    return false;
  }
  if (n_out) qsort(out, n_out, sizeof *out, cmp_imbalance);
  if (out && !own(o, out)) return false;
  rep->imbalance = out;
  rep->n_imbalance = n_out;
  return true;
}

static bool fill_row(const an_rank_summary *s, an_strtab *st, an_rank_row *row) {
  *row = (an_rank_row){.rank = s->in.rank, .busy_us = s->busy_us, .idle_us = s->idle_us};
  row->path = an_strtab_cstr(st, s->path);
  row->compute_us = s->class_us[AN_RANK_COMPUTE];
  row->communication_us = row->exposed_comm_us = s->class_us[AN_RANK_COMM];
  row->memory_us = s->class_us[AN_RANK_MEMORY];
  row->collective_us = s->collective_us;
  size_t top = SIZE_MAX;
  double total = 0;
  for (size_t k = 0; k < s->names.n; k++) {
    total += s->kern[k].total_us;
    if (top == SIZE_MAX || s->kern[k].total_us > s->kern[top].total_us) top = k;
  }
  if (top != SIZE_MAX) {
    row->top_kernel = an_strtab_cstr(st, s->names.keys[top]);
    row->top_kernel_us = s->kern[top].total_us;
    row->top_kernel_share_pct = total > 0 ? s->kern[top].total_us / total * 100 : 0;
    if (!row->top_kernel) return false;
  }
  return row->path != NULL;
}

/* The section of one stage: sums[0..n) hold its ranks, ascending. */
static bool stage_report(owned *o, an_rank_summary **sums, size_t n, const te_rules *rules,
                         an_rank_report *rep) {
  an_strtab *st = o->strings;
  an_rank_row *rows = calloc(n, sizeof *rows);
  if (!own(o, rows)) rows = NULL;
  an_rank_group *groups = NULL;
  size_t ng = 0;
  rep->stage = sums[0]->in.stage;
  rep->rows = rows;
  rep->n_rows = rows ? n : 0;
  bool ok = rows != NULL;
  for (size_t i = 0; i < n && ok; i++) ok = fill_row(sums[i], st, &rows[i]);
  if (ok) ok = make_groups(o, sums, n, rows, &groups, &ng);
  rep->groups = groups;
  rep->n_groups = ng;
  double min_share = te_rules_settings(rules)->ranks_straggler_min_share_pct;
  if (ok) ok = stragglers(sums, rows, n, groups, ng, min_share);
  if (ok) ok = imbalance(o, sums, rows, n, ng, rules, rep);
  return ok;
}

static an_status assemble(owned *o, const te_rules *rules, an_ranks_result *out) {
  size_t n_stages = 0;
  for (size_t i = 0; i < o->n_sums; i++)
    n_stages += i == 0 || strcmp(o->sums[i]->in.stage, o->sums[i - 1]->in.stage) != 0;
  out->reports = calloc(n_stages ? n_stages : 1, sizeof *out->reports);
  if (!out->reports) return AN_ERR_NOMEM;
  for (size_t i = 0; i < o->n_sums;) {
    size_t j = i + 1;
    while (j < o->n_sums && strcmp(o->sums[j]->in.stage, o->sums[i]->in.stage) == 0) j++;
    an_rank_report *rep = &out->reports[out->n_reports++];
    if (!stage_report(o, o->sums + i, j - i, rules, rep)) return AN_ERR_NOMEM;
    i = j;
  }
  return AN_OK;
}

an_status an_ranks_build(const an_rank_input *in, size_t n, an_rank_summary **pre,
                         const te_rules *rules, const an_ranks_options *opt, an_ranks_result *out,
                         an_ranks_failure *fail) {
  memset(out, 0, sizeof *out);
  owned *o = calloc(1, sizeof *o);
  pool p = {.in = in, .n_todo = 0, .rules = rules, .opt = opt, .status = AN_OK, .fail = fail};
  if (o) {
    o->strings = an_strtab_create();
    o->sums = calloc(n ? n : 1, sizeof *o->sums);
    p.todo = malloc((n ? n : 1) * sizeof *p.todo);
  }
  out->owned = o;
  if (!o || !o->strings || !o->sums || !p.todo) {
    for (size_t i = 0; pre && i < n; i++) summary_free(pre[i]);
    free(p.todo);
    return AN_ERR_NOMEM;
  }
  o->n_sums = n;
  for (size_t i = 0; i < n; i++) {
    o->sums[i] = pre ? pre[i] : NULL;
    if (!o->sums[i]) p.todo[p.n_todo++] = i;
  }
  p.out = o->sums;
  pthread_mutex_init(&p.lock, NULL);
  an_status rc = read_all(&p);
  pthread_mutex_destroy(&p.lock);
  free(p.todo);
  if (rc == AN_OK) rc = assemble(o, rules, out);
  /* the summaries are only needed to build the section */
  for (size_t i = 0; i < n; i++) summary_free(o->sums[i]);
  free(o->sums);
  o->sums = NULL;
  return rc;
}

void an_ranks_result_free(an_ranks_result *r) {
  if (!r) return;
  free(r->reports);
  owned *o = r->owned;
  if (o) {
    for (size_t i = 0; i < o->n_allocs; i++) free(o->allocs[i]);
    free(o->allocs);
    an_strtab_destroy(o->strings);
  }
  free(o);
  memset(r, 0, sizeof *r);
}

void an_rank_summary_free(an_rank_summary *s) { summary_free(s); }
