/*
 * analysis/attrib.c - kernel -> Python source location (docs/reference.md §4.2).
 */
#include "analysis/attrib.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/id_index.h"
#include "util/buf.h"
#include "util/map.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

#define NORM_BUF 8192

typedef struct frame_info {
  int prio;
  const char *norm;
} frame_info;

typedef struct range {
  size_t lo, hi;
} range;

struct an_resolver {
  const tr_trace *t;
  const te_rules *rules;
  an_strtab *st;
  const tr_pyframe *frames;
  size_t nf;
  /* frame indices by (thread, start, -end); NULL when the frames are already in that order
   * within each thread's run and each thread is one run: ranges then index frames */
  uint32_t *forder;
  ut_u64map threads; /* thread key -> range index */
  range *ranges;
  size_t nranges;
  /* CPU ops by (External id, start), launches by (correlation, start): the view's,
   * or own_ids when the caller lent none */
  const an_id_index *ops, *launches;
  an_trace_ids own_ids;
  ut_u64map fcache; /* frame name -> finfo index */
  frame_info *finfo;
  size_t nfinfo, capfinfo;
  size_t stack_depth;
  double probe_max;
  double tolerance_us; /* attribution.time_tolerance_us */
  size_t cand_before, cand_after;
  const char *unresolved;
  /* an_resolver_layers: the layer frames, built on its first question: their indices in
   * the (thread, start, -end) order, and each thread's slice of them (by range index, as
   * ranges). The answer is the outermost active layer frame, and the other frames
   * neither are it nor change which one it is, so the sweep passes over the layer frames
   * alone (sglang: a few thousand of 160,000). layers_mode: the sweep answers layers. */
  uint32_t *layer_frames;
  range *layer_ranges;
  size_t n_layer_frames;
  bool layers_ready, layers_mode;
};

static uint64_t thread_key(tr_str pid, tr_str tid) { return ((uint64_t)pid << 32) | tid; }

/* Frames of one thread by (start, -end, file order): outer frames first. ctx: the trace
 * whose frames they are (a frame's dur is read through it; ut_sort's context, not a
 * global, since resolvers may be made on two threads at once). */
static int cmp_frame_idx(const void *a, const void *b, void *ctx) {
  const tr_trace *t = ctx;
  uint32_t ix = *(const uint32_t *)a, iy = *(const uint32_t *)b;
  size_t n;
  const tr_pyframe *frames = tr_trace_pyframes(t, &n);
  const tr_pyframe *x = &frames[ix], *y = &frames[iy];
  double tx = tr_pyframe_ts(t, x), ty = tr_pyframe_ts(t, y);
  if (tx != ty) return tx < ty ? -1 : 1;
  double ex = tx + tr_pyframe_dur(t, x), ey = ty + tr_pyframe_dur(t, y);
  if (ex != ey) return ex > ey ? -1 : 1; /* longer (outer) first */
  return ix < iy ? -1 : (ix > iy);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : (x > y);
}

static size_t run_end(const tr_pyframe_run *runs, size_t nruns, size_t j, size_t nf) {
  return j + 1 < nruns ? runs[j + 1].first : nf;
}

/* The distinct threads of the frame runs, in key order, and their frame counts. */
static int thread_buckets(an_resolver *r, const tr_pyframe_run *runs, size_t nruns, ut_u64map *slot,
                          uint64_t **keys, size_t **count, size_t *nkeys) {
  size_t cap_keys = 0, cap_count = 0;
  uint64_t b;
  for (size_t j = 0; j < nruns; j++) {
    uint64_t k = thread_key(runs[j].pid, runs[j].tid);
    if (!ut_u64map_get(slot, k, &b)) {
      uint64_t *nk = ut_grow(*keys, &cap_keys, *nkeys + 1, sizeof *nk);
      if (!nk) return -1;
      *keys = nk;
      size_t *nc = ut_grow(*count, &cap_count, *nkeys + 1, sizeof *nc);
      if (!nc) return -1;
      *count = nc;
      (*keys)[*nkeys] = k;
      (*count)[*nkeys] = 0;
      b = (*nkeys)++;
      if (!ut_u64map_put(slot, k, b)) return -1;
    }
    (*count)[b] += run_end(runs, nruns, j, r->nf) - runs[j].first;
  }
  if (*nkeys) qsort(*keys, *nkeys, sizeof **keys, cmp_u64);
  return 0;
}

/* The i-th frame in (thread, start, -end) order. */
static uint32_t frame_at(const an_resolver *r, size_t i) {
  return r->forder ? r->forder[i] : (uint32_t)i;
}

/* Fills forder with the frame indices by (thread, start, -end, file order), and ranges /
 * threads with each thread's slice of it. Kineto writes each thread's frames together and
 * already in (start, -end) order, so instead of one qsort of every frame (millions, each
 * comparison two cache misses): bucket the runs by thread key (stable), then sort only
 * the buckets that are not already in order. The result is the same as a full sort:
 * cmp_frame_idx is a total order (file order breaks ties). When the reader saw the frames
 * in order and each thread is one run, there is no forder: each range is its run. */
static int order_frames(an_resolver *r) {
  size_t nruns, nkeys = 0;
  const tr_pyframe_run *runs = tr_trace_pyframe_runs(r->t, &nruns);
  ut_u64map slot = {0}; /* thread key -> bucket */
  uint64_t *keys = NULL, b;
  size_t *count = NULL;
  int rc = -1;
  if (thread_buckets(r, runs, nruns, &slot, &keys, &count, &nkeys) != 0) goto out;
  r->ranges = malloc((nkeys ? nkeys : 1) * sizeof *r->ranges);
  if (!r->ranges) goto out;
  size_t pos = 0; /* count[] becomes each bucket's next free position */
  for (size_t j = 0; j < nkeys; j++) {
    ut_u64map_get(&slot, keys[j], &b);
    r->ranges[j] = (range){pos, pos + count[b]};
    pos += count[b];
    count[b] = r->ranges[j].lo;
    if (!ut_u64map_put(&r->threads, keys[j], j)) goto out;
  }
  r->nranges = nkeys;
  if (tr_trace_pyframes_sorted(r->t) && nkeys == nruns) {
    for (size_t j = 0; j < nruns; j++) {
      ut_u64map_get(&r->threads, thread_key(runs[j].pid, runs[j].tid), &b);
      r->ranges[b] = (range){runs[j].first, run_end(runs, nruns, j, r->nf)};
    }
    rc = 0;
    goto out;
  }
  r->forder = malloc((r->nf ? r->nf : 1) * sizeof *r->forder);
  if (!r->forder) goto out;
  for (size_t j = 0; j < nruns; j++) {
    ut_u64map_get(&slot, thread_key(runs[j].pid, runs[j].tid), &b);
    for (size_t i = runs[j].first; i < run_end(runs, nruns, j, r->nf); i++)
      r->forder[count[b]++] = (uint32_t)i;
  }
  void *t = (void *)(uintptr_t)r->t;
  for (size_t j = 0; j < nkeys; j++) {
    uint32_t *o = r->forder + r->ranges[j].lo;
    size_t n = r->ranges[j].hi - r->ranges[j].lo;
    bool in_order = true;
    for (size_t i = 1; i < n && in_order; i++) in_order = cmp_frame_idx(&o[i - 1], &o[i], t) < 0;
    if (!in_order) ut_sort(o, n, sizeof *o, cmp_frame_idx, t);
  }
  rc = 0;
out:
  free(keys);
  free(count);
  ut_u64map_free(&slot);
  return rc;
}

void an_resolver_destroy(an_resolver *r) {
  if (!r) return;
  free(r->forder);
  ut_u64map_free(&r->threads);
  free(r->ranges);
  an_trace_ids_free(&r->own_ids);
  ut_u64map_free(&r->fcache);
  free(r->layer_frames);
  free(r->layer_ranges);
  free(r->finfo);
  free(r);
}

an_resolver *an_resolver_create(const tr_trace *t, const an_trace_ids *ids, const te_rules *rules,
                                an_strtab *strings) {
  an_resolver *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->t = t;
  r->rules = rules;
  r->st = strings;
  const te_settings *set = te_rules_settings(rules);
  r->stack_depth = (size_t)set->kernel_table_stack_depth;
  r->probe_max = set->attribution_probe_max_us;
  r->tolerance_us = set->attribution_time_tolerance_us;
  r->cand_before = (size_t)set->attribution_candidates_before;
  r->cand_after = (size_t)set->attribution_candidates_after;
  r->unresolved = an_strtab_cstr(strings, "unresolved");
  if (!r->unresolved) goto fail;

  r->frames = tr_trace_pyframes(t, &r->nf);
  if (order_frames(r) != 0) goto fail;

  if (!(ids = an_trace_ids_lend(ids, &r->own_ids, t))) goto fail;
  r->ops = &ids->ops_by_ext;
  r->launches = &ids->launches_by_corr;
  return r;
fail:
  an_resolver_destroy(r);
  return NULL;
}

static const frame_info *frame_lookup(an_resolver *r, tr_str name) {
  uint64_t idx;
  if (ut_u64map_get(&r->fcache, name, &idx)) return &r->finfo[idx];
  frame_info *p = ut_grow(r->finfo, &r->capfinfo, r->nfinfo + 1, sizeof *p);
  if (!p) return NULL;
  r->finfo = p;
  frame_info *fi = &r->finfo[r->nfinfo];
  fi->prio = an_frame_priority(r, tr_str_get(r->t, name), &fi->norm);
  if (!fi->norm) return NULL;
  if (!ut_u64map_put(&r->fcache, name, r->nfinfo++)) return NULL;
  return fi;
}

int an_frame_priority(an_resolver *r, const char *raw, const char **normalized) {
  char buf[NORM_BUF];
  size_t len = te_rules_normalize_frame(r->rules, raw, buf, sizeof buf);
  if (len >= sizeof buf) len = sizeof buf - 1;
  *normalized = an_strtab_intern(r->st, buf, len);
  return te_rules_score(r->rules, "frame_priority", raw, buf, NULL, 0);
}

/* Candidate choice among events[lo, hi) sorted by start (docs/reference.md §4.2 step 1). */
static const tr_event *pick_candidate(const an_resolver *r, const an_id_index *evs, size_t lo,
                                      size_t hi, double kts) {
  double key = kts + r->tolerance_us;
  size_t a; /* bisect_right on start */
  UT_PARTITION_POINT(a, lo, hi, m, tr_event_ts(r->t, an_id_index_event(evs, m)) <= key);
  size_t from = a >= lo + r->cand_before ? a - r->cand_before : lo;
  size_t to = a + r->cand_after < hi ? a + r->cand_after : hi;
  const tr_event *best = NULL;
  double bd = 0;
  for (size_t i = from; i < to; i++) {
    const tr_event *e = an_id_index_event(evs, i);
    if (tr_event_ts(r->t, e) > key) continue;
    double d = tr_event_ts(r->t, e) + tr_event_dur(r->t, e) - kts;
    if (d < 0) d = -d;
    if (!best || d < bd) {
      best = e;
      bd = d;
    }
  }
  if (best) return best;
  for (size_t i = from; i < to; i++) {
    double d = tr_event_ts(r->t, an_id_index_event(evs, i)) - kts;
    if (d < 0) d = -d;
    if (!best || d < bd) {
      best = an_id_index_event(evs, i);
      bd = d;
    }
  }
  return best;
}

static const tr_event *find_by_id(const an_resolver *r, const an_id_index *evs, int64_t id,
                                  double kts, size_t *hint) {
  size_t lo, hi;
  an_id_index_range_near(evs, id, hint, &lo, &hi);
  return lo == hi ? NULL : pick_candidate(r, evs, lo, hi, kts);
}

/* A time on a thread that has frames (a range of forder), for kernel id / 2's CPU op (even
 * id) or launch (odd id). */
typedef struct query {
  uint32_t range;
  uint32_t id;
  double t;
} query;

typedef struct qresult {
  const char *loc;
  const char *stack;
  const char *layer; /* layers_mode: the outermost layer frame around it, NULL: none */
} qresult;

/* (range, t, id): a total order. */
static int cmp_query(const void *a, const void *b, void *unused) {
  (void)unused;
  const query *x = a, *y = b;
  if (x->range != y->range) return x->range < y->range ? -1 : 1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

/* A frame active at the sweep's time: its index, its end (start + dur, read once) and its
 * name's facts (finfo index, NO_INFO until asked; in layers mode 1 for a layer frame). */
typedef struct active_frame {
  uint32_t frame, info;
  double end;
} active_frame;

#define NO_INFO UINT32_MAX

/* Chosen frame and stack of the active frames (docs/reference.md §4.2). */
static bool describe_active(an_resolver *r, active_frame *active, size_t na, qresult *res,
                            ut_buf *sb) {
  res->loc = NULL;
  res->stack = NULL;
  if (!na) return true;
  /* every name's facts first: frame_lookup may grow (realloc) the cache */
  for (size_t i = 0; i < na; i++) {
    if (active[i].info != NO_INFO) continue;
    const frame_info *fi = frame_lookup(r, r->frames[active[i].frame].name);
    if (!fi) return false;
    active[i].info = (uint32_t)(fi - r->finfo);
  }
  const tr_pyframe *best = NULL;
  int bprio = 0;
  const char *bnorm = NULL;
  size_t npos = 0;
  for (size_t i = 0; i < na; i++) {
    const tr_pyframe *f = &r->frames[active[i].frame];
    const frame_info *fi = &r->finfo[active[i].info];
    if (fi->prio > 0) npos++;
    bool better = !best || fi->prio > bprio ||
                  (fi->prio == bprio && (tr_pyframe_ts(r->t, f) > tr_pyframe_ts(r->t, best) ||
                                         (tr_pyframe_ts(r->t, f) == tr_pyframe_ts(r->t, best) &&
                                          tr_pyframe_dur(r->t, f) < tr_pyframe_dur(r->t, best))));
    if (better) {
      best = f;
      bprio = fi->prio;
      bnorm = fi->norm;
    }
  }
  res->loc = bnorm;
  ut_buf_clear(sb);
  if (npos) {
    size_t skip = npos > r->stack_depth ? npos - r->stack_depth : 0, k = 0;
    for (size_t i = 0; i < na; i++) {
      const frame_info *fi = &r->finfo[active[i].info];
      if (fi->prio <= 0) continue;
      if (k++ < skip) continue;
      if (sb->n) ut_buf_add(sb, " -> ");
      ut_buf_add(sb, fi->norm);
    }
    res->stack = ut_buf_str(sb) ? an_strtab_intern(r->st, sb->p, sb->n) : NULL;
  } else {
    res->stack = r->finfo[active[na - 1].info].norm;
  }
  return res->stack != NULL;
}

/* The outermost active frame that is a layer frame (active frames are in start order,
 * outer first; in layers mode every one is a layer frame, info 1). */
static void active_layer(const an_resolver *r, const active_frame *active, size_t na,
                         qresult *res) {
  res->layer = NULL;
  for (size_t i = 0; i < na && !res->layer; i++)
    if (active[i].info == 1) res->layer = tr_str_get(r->t, r->frames[active[i].frame].name);
}

/* The active frames at time t (start <= t <= end, in (start, -end) order), from those at
 * the last query's time (a query's time is at or after the last's): the frames that ended
 * before t leave, the frames of [*fi, hi) starting at or before t come in unless they end
 * before t (most frames start and end between two queries: never held). Whether the set
 * changed; false in *ok when out of memory. */
/* The frames one sweep of a thread runs over: positions [lo, hi) of order (NULL: the
 * positions are the frames' indices), in (start, -end) order. */
typedef struct sweep_seq {
  const uint32_t *order;
  size_t lo, hi;
} sweep_seq;

static bool advance_active(const an_resolver *r, const sweep_seq *sq, size_t *fi, double t,
                           active_frame **active, size_t *na, size_t *cap, bool *ok) {
  size_t m = 0;
  for (size_t a = 0; a < *na; a++)
    if ((*active)[a].end >= t) (*active)[m++] = (*active)[a];
  bool changed = m != *na;
  *na = m;
  for (; *fi < sq->hi; ++*fi) {
    uint32_t f = sq->order ? sq->order[*fi] : (uint32_t)*fi;
    const tr_pyframe *p = &r->frames[f];
    double ts = tr_pyframe_ts(r->t, p);
    if (ts > t) break;
    double end = ts + tr_pyframe_dur(r->t, p);
    if (end < t) continue;
    if (*na == *cap) { /* grown when full: a call per frame was 5 % of hf x 5's instructions */
      active_frame *v = ut_grow(*active, cap, *na + 1, sizeof *v);
      if (!v) {
        *ok = false;
        return changed;
      }
      *active = v;
    }
    (*active)[(*na)++] = (active_frame){f, r->layers_mode ? 1 : NO_INFO, end};
    changed = true;
  }
  return changed;
}

/* Sweeps the frames of each thread once over the sorted queries. An answer depends only on
 * the active frames, so it is worked out again only when they changed. */
static an_status run_queries(an_resolver *r, query *q, size_t nq, qresult *res) {
  ut_sort(q, nq, sizeof *q, cmp_query, NULL); /* no merge buffer */
  active_frame *active = NULL;
  size_t na = 0, cap = 0;
  ut_buf sb = {0};
  an_status rc = AN_OK;
  for (size_t i = 0; i < nq && rc == AN_OK;) {
    size_t j = i;
    while (j < nq && q[j].range == q[i].range) j++;
    const range *rg = r->layers_mode ? &r->layer_ranges[q[i].range] : &r->ranges[q[i].range];
    sweep_seq sq = {r->layers_mode ? r->layer_frames : r->forder, rg->lo, rg->hi};
    size_t fi = sq.lo;
    na = 0;
    qresult last = {0};
    double last_t = 0;
    bool have_last = false;
    for (size_t k = i; k < j; k++) {
      double t = q[k].t;
      if (have_last && t == last_t) {
        res[q[k].id] = last;
        continue;
      }
      bool ok = true;
      bool changed = advance_active(r, &sq, &fi, t, &active, &na, &cap, &ok);
      if (!ok) {
        rc = AN_ERR_NOMEM;
        break;
      }
      if (!have_last || changed) {
        if (r->layers_mode) {
          active_layer(r, active, na, &last);
        } else if (!describe_active(r, active, na, &last, &sb)) {
          rc = AN_ERR_NOMEM;
          break;
        }
      }
      last_t = t;
      have_last = true;
      res[q[k].id] = last;
    }
    i = j;
  }
  free(active);
  ut_buf_free(&sb);
  return rc;
}

/* Adds the query for an event at time t when its thread has frames: a thread without
 * frames locates nothing, so a trace without frames asks nothing. */
static void add_query(const an_resolver *r, const tr_event *e, double t, uint32_t id, query *q,
                      size_t *nq) {
  const tr_event_ctx *c = tr_trace_ctx(r->t, e);
  uint64_t v;
  if (!ut_u64map_get(&r->threads, thread_key(c->pid, c->tid), &v)) return;
  q[(*nq)++] = (query){(uint32_t)v, id, t};
}

/* The CPU op and the launch of each kernel (ops[i], lau[i]; NULL: none) and the sweep's
 * answer for each (*res by query id: 2i the op's frames, 2i + 1 the launch's; *res stays
 * NULL when no thread of them has frames). */
static an_status ask(an_resolver *r, const tr_event *const *kernels, size_t n, const tr_event **ops,
                     const tr_event **lau, qresult **res) {
  *res = NULL;
  query *q = malloc((2 * n + 1) * sizeof *q);
  if (!q) return AN_ERR_NOMEM;
  size_t nq = 0;
  /* kernels come in start order, so their ids mostly ascend: each search starts where
   * the last one of its index ended */
  size_t op_hint = 0, launch_hint = 0;
  for (size_t i = 0; i < n; i++) {
    const tr_event *k = kernels[i];
    int64_t ext = tr_event_external_id(r->t, k), corr = tr_event_correlation(r->t, k);
    if (ext == TR_NO_ID && corr != TR_NO_ID) ext = tr_trace_external_for_correlation(r->t, corr);
    if (ext != TR_NO_ID) ops[i] = find_by_id(r, r->ops, ext, tr_event_ts(r->t, k), &op_hint);
    if (corr != TR_NO_ID)
      lau[i] = find_by_id(r, r->launches, corr, tr_event_ts(r->t, k), &launch_hint);
    if (ops[i]) {
      double half = tr_event_dur(r->t, ops[i]) / 2;
      double t = tr_event_ts(r->t, ops[i]) + (half < r->probe_max ? half : r->probe_max);
      add_query(r, ops[i], t, (uint32_t)(2 * i), q, &nq);
    }
    if (lau[i]) add_query(r, lau[i], tr_event_ts(r->t, lau[i]), (uint32_t)(2 * i + 1), q, &nq);
  }
  an_status rc = AN_OK;
  if (nq) {
    *res = calloc(2 * n + 1, sizeof **res);
    rc = *res ? run_queries(r, q, nq, *res) : AN_ERR_NOMEM;
  }
  free(q);
  return rc;
}

an_status an_resolver_resolve(an_resolver *r, const tr_event *const *kernels, size_t n,
                              an_site_ctx *out) {
  const tr_event **ops = calloc(n ? n : 1, sizeof *ops);
  const tr_event **lau = calloc(n ? n : 1, sizeof *lau);
  qresult *res = NULL; /* by query id; only when a query was asked (all NULL otherwise) */
  an_status rc = ops && lau ? ask(r, kernels, n, ops, lau, &res) : AN_ERR_NOMEM;
  if (rc != AN_OK) goto done;
  for (size_t i = 0; i < n; i++) {
    const char *opname = ops[i] ? tr_str_get(r->t, ops[i]->name) : NULL;
    const char *lname = lau[i] ? tr_str_get(r->t, lau[i]->name) : NULL;
    /* docs/reference.md §4.2: the CPU op column names the CPU op when its frames (or the
     * launch's) locate the kernel; a launch without frames leaves it unresolved under the launch
     * name. */
    const char *cpu;
    if (ops[i] && res && res[2 * i].loc) {
      out[i].location = res[2 * i].loc;
      out[i].stack = res[2 * i].stack;
      cpu = opname;
    } else if (lau[i] && res && res[2 * i + 1].loc) {
      out[i].location = res[2 * i + 1].loc;
      out[i].stack = res[2 * i + 1].stack;
      cpu = opname ? opname : lname;
    } else {
      out[i].location = r->unresolved;
      out[i].stack = NULL;
      cpu = lname ? lname : (opname ? opname : "");
    }
    out[i].cpu_op = an_strtab_cstr(r->st, cpu);
    if (!out[i].cpu_op) {
      rc = AN_ERR_NOMEM;
      goto done;
    }
  }
done:
  free(ops);
  free(lau);
  free(res);
  return rc;
}

/* The frames whose name is_layer marks (a bit per string id below n_str), thread by thread in the
 * frame order, into layer_frames and layer_ranges. False when out of memory. */
static bool layer_frames_of(an_resolver *r, const uint8_t *is_layer, size_t n_str) {
  r->layer_ranges = malloc((r->nranges ? r->nranges : 1) * sizeof *r->layer_ranges);
  if (!r->layer_ranges) return false;
  size_t n = 0, cap = 0; /* grown as met: a few of the frames, not a block for all of them */
  for (size_t j = 0; j < r->nranges; j++) {
    r->layer_ranges[j].lo = n;
    for (size_t i = r->ranges[j].lo; i < r->ranges[j].hi; i++) {
      uint32_t f = frame_at(r, i);
      tr_str name = r->frames[f].name;
      if (name >= n_str || !(is_layer[name / CHAR_BIT] >> (name % CHAR_BIT) & 1)) continue;
      uint32_t *v = n < cap ? r->layer_frames : ut_grow(r->layer_frames, &cap, n + 1, sizeof *v);
      if (!v) return false;
      r->layer_frames = v;
      r->layer_frames[n++] = f;
    }
    r->layer_ranges[j].hi = n;
  }
  r->n_layer_frames = n;
  return true;
}

/* The layer frames of the trace: module frames (matcher layer_module_frame, PyTorch's
 * "nn.Module: Qwen3DecoderLayer_3": the class, then the instance after "_") of a class
 * with several instances in the trace, the model's repeated blocks; a class seen once (the
 * model, its embedding) is no layer. Each distinct frame name is one instance. False when
 * out of memory. */
static bool build_layers(an_resolver *r) {
  r->layers_ready = true;
  const te_matcher *m = te_rules_matcher(r->rules, "layer_module_frame");
  size_t n;
  const tr_str *names = tr_trace_pyframe_names(r->t, &n);
  if (!m || !n) return true;
  ut_strmap classes = {0};
  long *cls = malloc(n * sizeof *cls);      /* per name: its class, -1 when none */
  size_t *count = calloc(n, sizeof *count); /* per class: its instances */
  bool ok = cls && count;
  for (size_t i = 0; ok && i < n; i++) {
    const char *s = tr_str_get(r->t, names[i]);
    size_t len = strlen(s), c = len;
    cls[i] = -1;
    if (!te_matcher_match(m, s, len)) continue;
    while (c > 0 && s[c - 1] >= '0' && s[c - 1] <= '9') c--;
    if (c == len || c < 2 || s[c - 1] != '_') continue; /* no instance number */
    cls[i] = ut_strmap_put(&classes, s, c - 1);
    ok = cls[i] >= 0;
    if (ok) count[cls[i]]++;
  }
  uint8_t *is_layer = NULL; /* bit per string id of the trace: a layer frame's name */
  size_t n_str = tr_trace_string_count(r->t), n_layers = 0;
  if (ok) ok = (is_layer = calloc(n_str / CHAR_BIT + 1, 1)) != NULL;
  for (size_t i = 0; ok && i < n; i++)
    if (cls[i] >= 0 && count[cls[i]] > 1 && names[i] < n_str) {
      is_layer[names[i] / CHAR_BIT] |= (uint8_t)(1u << (names[i] % CHAR_BIT));
      n_layers++;
    }
  ut_strmap_free(&classes);
  free(cls);
  free(count);
  ok = ok && (!n_layers || layer_frames_of(r, is_layer, n_str));
  free(is_layer);
  return ok;
}

an_status an_resolver_layers(an_resolver *r, const tr_event *const *kernels, size_t n,
                             const char **layer) {
  for (size_t i = 0; i < n; i++) layer[i] = NULL;
  if (!r->layers_ready && !build_layers(r)) return AN_ERR_NOMEM;
  if (!r->n_layer_frames) return AN_OK; /* no layer frames: nothing to sweep for */
  const tr_event **ops = calloc(n ? n : 1, sizeof *ops);
  const tr_event **lau = calloc(n ? n : 1, sizeof *lau);
  qresult *res = NULL;
  r->layers_mode = true;
  an_status rc = ops && lau ? ask(r, kernels, n, ops, lau, &res) : AN_ERR_NOMEM;
  r->layers_mode = false;
  for (size_t i = 0; rc == AN_OK && res && i < n; i++)
    layer[i] = res[2 * i].layer ? res[2 * i].layer : res[2 * i + 1].layer;
  free(ops);
  free(lau);
  free(res);
  return rc;
}
