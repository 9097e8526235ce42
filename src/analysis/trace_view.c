/*
 * analysis/trace_view.c - canonical kernel names, process choice and stage assignment.
 */
#include "analysis/trace_view.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/limits.h"
#include "util/params.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ canonical names */

static bool is_hex(int c) { return isxdigit((unsigned char)c) != 0; }
static bool is_alnum(int c) { return isalnum((unsigned char)c) != 0; }

/* A 64-bit pointer prints as at most 16 hex digits; a longer run is a hash or an id. */
#define AN_ADDRESS_MAX_HEX_DIGITS 16

an_hex_mask an_hex_mask_from_rules(const te_rules *rules) {
  return te_rules_settings(rules)->names_mask_every_hex ? AN_MASK_EVERY_HEX : AN_MASK_ADDRESSES;
}

/* Length of the hex literal starting at name[i] ("0x" plus digits) that mask replaces by
 * 0xADDR, or 0 when there is none. AN_MASK_ADDRESSES takes only a literal that stands
 * alone as a token (no letter or digit on either side) and fits a pointer, so a tile size
 * like MT64x160x128 or nvjet's 160x128 stays intact. */
static size_t masked_hex_len(const char *name, size_t len, size_t i, an_hex_mask mask) {
  if (name[i] != '0' || i + 2 >= len || (name[i + 1] != 'x' && name[i + 1] != 'X') ||
      !is_hex(name[i + 2]))
    return 0;
  size_t j = i + 2;
  while (j < len && is_hex(name[j])) j++;
  if (mask == AN_MASK_EVERY_HEX) return j - i;
  if (i > 0 && is_alnum(name[i - 1])) return 0;
  if (j < len && is_alnum(name[j])) return 0;
  return j - (i + 2) <= AN_ADDRESS_MAX_HEX_DIGITS ? j - i : 0;
}

/* Whether name is its own canonical form: no whitespace (so no "void " prefix either) and
 * no "0x" that could start a hex literal. Most kernel names are, and copying them skips
 * the scratch copy (every module that keys kernels canonicalises every name it meets). */
static bool already_canonical(const char *name, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c <= ' ' || (c == '0' && i + 1 < len && (name[i + 1] | 0x20) == 'x')) return false;
  }
  return true;
}

size_t an_canonical_name(const char *name, size_t len, an_hex_mask mask, char *out, size_t cap) {
  if (already_canonical(name, len)) {
    if (cap) {
      size_t m = len < cap - 1 ? len : cap - 1;
      memcpy(out, name, m);
      out[m] = '\0';
    }
    return len;
  }
  /* First pass into a scratch copy: fold whitespace and rewrite hex literals. The output
   * can only grow by hex rewriting ("0x1" -> "0xADDR"), at most 4 bytes per 3 input. */
  size_t scap = len * 2 + 8;
  char *s = malloc(scap);
  size_t n = 0;
  if (!s) {
    if (cap) out[0] = '\0';
    return 0;
  }
  bool pending_space = false;
  for (size_t i = 0; i < len;) {
    unsigned char c = (unsigned char)name[i];
    if (isspace(c)) {
      pending_space = n > 0;
      i++;
      continue;
    }
    if (pending_space) {
      s[n++] = ' ';
      pending_space = false;
    }
    size_t hex = masked_hex_len(name, len, i, mask);
    if (hex) {
      memcpy(s + n, "0xADDR", 6);
      n += 6;
      i += hex;
      continue;
    }
    s[n++] = (char)c;
    i++;
  }
  /* Cut the trailing balanced parameter list of "void f<...>(...)". */
  size_t params = n >= 5 && memcmp(s, "void ", 5) == 0 ? ut_params_start(s, n) : n;
  if (params < n) {
    n = params;
    while (n > 0 && s[n - 1] == ' ') n--;
  }
  if (cap) {
    size_t m = n < cap - 1 ? n : cap - 1;
    memcpy(out, s, m);
    out[m] = '\0';
  }
  free(s);
  return n;
}

/* ------------------------------------------------------------------ pid choice */

typedef struct pid_sum {
  tr_str pid;
  double total;
} pid_sum;

bool an_is_kernel_event(const tr_trace *t, const tr_event *e, const te_matcher *not_a_kernel) {
  if (!not_a_kernel) return true;
  const char *cat = tr_str_get(t, tr_event_cat(t, e));
  return !te_matcher_match(not_a_kernel, cat, strlen(cat));
}

an_status an_pick_pid(const tr_trace *t, const bool *keep, const char *pid_substring,
                      const te_matcher *preferred, tr_str *out, bool *found) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, TR_KIND_KERNEL, &n);
  pid_sum *sums = NULL;
  size_t ns = 0, cs = 0;
  bool nomem = false;
  for (size_t i = 0; i < n && !nomem; i++) {
    if (keep && !keep[i]) continue;
    size_t k = 0;
    tr_str pid = tr_event_pid(t, &ev[i]);
    /* pids are few; a linear scan with a one-entry cache is enough */
    if (ns && sums[ns - 1].pid == pid)
      k = ns - 1;
    else
      while (k < ns && sums[k].pid != pid) k++;
    if (k == ns) {
      pid_sum *p = ut_grow(sums, &cs, ns + 1, sizeof *p);
      if (!p) {
        nomem = true;
        break;
      }
      sums = p;
      sums[ns++] = (pid_sum){pid, 0};
    }
    sums[k].total += tr_event_dur(t, &ev[i]);
  }
  int best_pref = -1;
  double best_total = -1;
  for (size_t k = 0; k < ns && !nomem; k++) {
    const char *p = tr_str_get(t, sums[k].pid);
    if (pid_substring && *pid_substring && !strstr(p, pid_substring)) continue;
    int pref = preferred && te_matcher_match(preferred, p, strlen(p)) ? 1 : 0;
    if (pref > best_pref || (pref == best_pref && sums[k].total > best_total)) {
      *out = sums[k].pid;
      best_pref = pref;
      best_total = sums[k].total;
    }
  }
  free(sums);
  *found = best_pref >= 0;
  return nomem ? AN_ERR_NOMEM : AN_OK;
}

/* ------------------------------------------------------------------ annotation stages */

typedef struct ann {
  double start, end;
  int64_t ext;
  const te_stage *stage;
  bool gpu;
} ann;

typedef struct window_set {
  ann *w;
  size_t n;
  double *pmax; /* prefix maximum of end */
} window_set;

static int cmp_ann_start(const void *a, const void *b) {
  const ann *x = a, *y = b;
  if (x->start < y->start) return -1;
  if (x->start > y->start) return 1;
  if (x->end < y->end) return -1;
  if (x->end > y->end) return 1;
  return 0;
}

static int cmp_ann_ext(const void *a, const void *b) {
  const ann *x = a, *y = b;
  if (x->ext != y->ext) return x->ext < y->ext ? -1 : 1;
  /* best first: GPU over CPU, then longer */
  if (x->gpu != y->gpu) return x->gpu ? -1 : 1;
  double dx = x->end - x->start, dy = y->end - y->start;
  if (dx > dy) return -1;
  if (dx < dy) return 1;
  return 0;
}

/* Sorted, merged windows of one kind. Takes ownership of w. */
static bool windows_build(ann *w, size_t n, double merge_gap, window_set *out) {
  out->w = w;
  out->n = 0;
  out->pmax = NULL;
  if (!n) return true;
  qsort(w, n, sizeof *w, cmp_ann_start);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && w[m - 1].stage == w[i].stage && w[i].start - w[m - 1].end <= merge_gap) {
      if (w[i].end > w[m - 1].end) w[m - 1].end = w[i].end;
      continue;
    }
    w[m++] = w[i];
  }
  out->n = m;
  out->pmax = malloc(m * sizeof *out->pmax);
  if (!out->pmax) return false;
  double mx = -INFINITY;
  for (size_t i = 0; i < m; i++) {
    if (w[i].end > mx) mx = w[i].end;
    out->pmax[i] = mx;
  }
  return true;
}

/* First window (in start order) containing t, or NULL. */
static const ann *windows_containing(const window_set *ws, double t) {
  size_t lo; /* the first window whose running end reaches t */
  UT_PARTITION_POINT(lo, 0, ws->n, m, ws->pmax[m] < t);
  if (lo < ws->n && ws->w[lo].start <= t) return &ws->w[lo];
  return NULL;
}

/* The window that last started at or before t, while t is within the windows' span:
 * step annotations open a step, and the host launches of a step can run past its
 * annotation's end (until the next step opens). NULL outside the span. */
static const ann *windows_last_started(const window_set *ws, double t) {
  if (!ws->n || t < ws->w[0].start || t > ws->pmax[ws->n - 1]) return NULL;
  size_t lo; /* the first window starting after t */
  UT_PARTITION_POINT(lo, 0, ws->n, m, ws->w[m].start <= t);
  return &ws->w[lo - 1];
}

static double window_distance(const ann *a, double t) {
  if (t < a->start) return a->start - t;
  if (t > a->end) return t - a->end;
  return 0;
}

/* Nearest window to t, checking the neighbours of the bisect point. */
static const ann *windows_nearest(const window_set *ws, double t, double *dist) {
  if (!ws->n) return NULL;
  size_t lo; /* the first window starting after t */
  UT_PARTITION_POINT(lo, 0, ws->n, m, ws->w[m].start <= t);
  const ann *best = NULL;
  double bd = INFINITY;
  size_t from = lo >= 2 ? lo - 2 : 0, to = lo + 2 < ws->n ? lo + 2 : ws->n;
  for (size_t i = from; i < to; i++) {
    double d = window_distance(&ws->w[i], t);
    if (d < bd) {
      bd = d;
      best = &ws->w[i];
    }
  }
  *dist = bd;
  return best;
}

/* ------------------------------------------------------------------ view */

static int cmp_kernel_ptr(const void *a, const void *b, void *trace) {
  const tr_trace *t = trace;
  const tr_event *x = *(const tr_event *const *)a, *y = *(const tr_event *const *)b;
  int c = tr_event_ts_cmp(t, x, y);
  if (c) return c;
  return x->index < y->index ? -1 : (x->index > y->index ? 1 : 0);
}

/* What the passes reading a view share (an_trace_view.shared), each made on first use. */
struct an_view_shared {
  const te_rules *rules;
  an_launch_context *launches;
  an_trace_filter filter;
  bool filter_counted;
  an_op_nest ops;
  /* The nest and the kernels' launching ops are the shared parts built on another thread
   * (the pipeline's, ahead) while this one may ask them: whoever comes first builds one
   * under its lock, its flag is read without it once set (the launching ops may ask the
   * nest: two locks). ops_asked: some pass asked the nest (an_trace_view_ops), so
   * an_trace_view_ops_drop_unasked keeps it. */
  atomic_bool ops_built, ops_asked, kernel_ops_built;
  pthread_mutex_t ops_lock, kernel_ops_lock;
  bool lock_ready, kernel_lock_ready;
  uint32_t *kernel_ops; /* an_trace_view_stage_ops: block after block */
  size_t *block_first;  /* per stage block: its first entry in kernel_ops */
};

void an_trace_view_free(an_trace_view *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n_stages; i++) free(v->stages[i].kernels);
  free(v->stages);
  free(v->kernel_slot);
  free(v->slot_stage);
  an_trace_view_ids_destroy(v->ids);
  if (v->shared) {
    an_launch_context_destroy(v->shared->launches);
    an_op_nest_free(&v->shared->ops);
    if (v->shared->lock_ready) pthread_mutex_destroy(&v->shared->ops_lock);
    if (v->shared->kernel_lock_ready) pthread_mutex_destroy(&v->shared->kernel_ops_lock);
    free(v->shared->kernel_ops);
    free(v->shared->block_first);
  }
  free(v->shared);
  memset(v, 0, sizeof *v);
}

an_launch_context *an_trace_view_launches(const an_trace_view *v) {
  struct an_view_shared *s = v->shared;
  if (s && !s->launches) s->launches = an_launch_context_create(v->trace, s->rules);
  return s ? s->launches : NULL;
}

/* The view's nest, built under its lock by whoever comes first; NULL: out of memory. */
static const an_op_nest *ops_build(struct an_view_shared *s, const tr_trace *t) {
  if (atomic_load_explicit(&s->ops_built, memory_order_acquire)) return &s->ops;
  pthread_mutex_lock(&s->ops_lock);
  bool ok = atomic_load_explicit(&s->ops_built, memory_order_relaxed) ||
            an_op_nest_build(&s->ops, t) == 0;
  if (ok) atomic_store_explicit(&s->ops_built, true, memory_order_release);
  pthread_mutex_unlock(&s->ops_lock);
  return ok ? &s->ops : NULL;
}

const an_op_nest *an_trace_view_ops(const an_trace_view *v) {
  struct an_view_shared *s = v->shared;
  if (!s) return NULL;
  if (!atomic_load_explicit(&s->ops_asked, memory_order_relaxed))
    atomic_store_explicit(&s->ops_asked, true, memory_order_relaxed);
  return ops_build(s, v->trace);
}

bool an_trace_view_ops_ahead(const an_trace_view *v) {
  return v->shared && ops_build(v->shared, v->trace);
}

void an_trace_view_ops_drop_unasked(an_trace_view *v) {
  struct an_view_shared *s = v->shared;
  if (!s || atomic_load(&s->ops_asked) || !atomic_load(&s->ops_built)) return;
  an_op_nest_free(&s->ops);
  atomic_store(&s->ops_built, false);
}

const an_op_nest *an_trace_view_ops_built(const an_trace_view *v) {
  struct an_view_shared *s = v->shared;
  return s && atomic_load_explicit(&s->ops_built, memory_order_acquire) ? &s->ops : NULL;
}

/* Where the searches of a caller asking about kernels in time order last ended: the
 * launches by correlation and the op nest (their _near searches). */
typedef struct view_hints {
  size_t launch, nest;
} view_hints;

/* Older Kineto: the kernel's and its launch call's External id is their correlation id,
 * not a CPU op's; the op around the launch call launched it. NULL for other traces. h: the
 * caller's hints, or NULL. */
static const tr_event *nested_op(const an_trace_view *v, const tr_event *k, view_hints *h) {
  const tr_trace *t = v->trace;
  int64_t corr = tr_event_correlation(t, k);
  if (corr == TR_NO_ID || tr_event_external_id(t, k) != corr) return NULL;
  const tr_event *call = h ? an_trace_ids_launch_of_near(v->ids, t, k, &h->launch)
                           : an_trace_ids_launch_of(v->ids, t, k);
  if (!call || tr_event_external_id(t, call) != corr) return NULL;
  const an_op_nest *nest = an_trace_view_ops(v);
  if (!nest || !h) return nest ? an_op_nest_around(nest, call) : NULL;
  long e = an_op_nest_around_entry_near(nest, call, &h->nest);
  return e >= 0 ? an_op_nest_op(nest, e) : NULL;
}

/* an_trace_view_launching_op, searched from the caller's hints when h is not NULL. */
static const tr_event *launching_op(const an_trace_view *v, const tr_event *k, view_hints *h) {
  const tr_trace *t = v->trace;
  if (!v->ids) return NULL;
  const tr_event *nested = nested_op(v, k, h);
  if (nested) return nested;
  int64_t ext = tr_event_external_id(t, k);
  if (ext == TR_NO_ID) ext = tr_trace_external_for_correlation(t, tr_event_correlation(t, k));
  if (ext == TR_NO_ID) return NULL;
  size_t lo, hi;
  an_id_index_range(&v->ids->ops_by_ext, ext, &lo, &hi);
  const tr_event *best = NULL;
  for (size_t i = lo; i < hi; i++) {
    const tr_event *op = an_id_index_event(&v->ids->ops_by_ext, i);
    if (!best || tr_event_ts(t, op) <= tr_event_ts(t, k)) best = op;
  }
  return best;
}

const tr_event *an_trace_view_launching_op(const an_trace_view *v, const tr_event *k) {
  return launching_op(v, k, NULL);
}

/* The launching op of every kernel of the view into s (an_trace_view_stage_ops); false when
 * out of memory. */
static bool stage_ops_build(const an_trace_view *v, struct an_view_shared *s) {
  size_t n = 0, n_ops;
  const tr_event *ops = tr_trace_events(v->trace, TR_KIND_CPU_OP, &n_ops);
  s->block_first = malloc((v->n_stages ? v->n_stages : 1) * sizeof *s->block_first);
  for (size_t b = 0; s->block_first && b < v->n_stages; b++)
    s->block_first[b] = n, n += v->stages[b].n;
  s->kernel_ops = s->block_first ? malloc((n ? n : 1) * sizeof *s->kernel_ops) : NULL;
  if (!s->kernel_ops) {
    free(s->block_first);
    s->block_first = NULL;
    return false;
  }
  view_hints h = {0, 0}; /* the kernels in time order: their launch calls too, mostly */
  for (size_t b = 0, e = 0; b < v->n_stages; b++)
    for (size_t i = 0; i < v->stages[b].n; i++, e++) {
      const tr_event *op = launching_op(v, v->stages[b].kernels[i], &h);
      s->kernel_ops[e] = op ? (uint32_t)(op - ops) : AN_NO_OP;
    }
  return true;
}

const uint32_t *an_trace_view_stage_ops(const an_trace_view *v, size_t block) {
  struct an_view_shared *s = v->shared;
  if (!s || block >= v->n_stages) return NULL;
  if (!atomic_load_explicit(&s->kernel_ops_built, memory_order_acquire)) {
    pthread_mutex_lock(&s->kernel_ops_lock);
    bool ok = s->kernel_ops || stage_ops_build(v, s);
    if (ok) atomic_store_explicit(&s->kernel_ops_built, true, memory_order_release);
    pthread_mutex_unlock(&s->kernel_ops_lock);
    if (!ok) return NULL;
  }
  return s->kernel_ops + s->block_first[block];
}

const an_trace_filter *an_trace_view_filter(const an_trace_view *v) {
  struct an_view_shared *s = v->shared;
  if (s && !s->filter_counted) {
    memset(&s->filter, 0, sizeof s->filter);
    int all = an_trace_filter_calls(&s->filter, v->trace);
    const an_op_nest *ops = all > 0 ? an_trace_view_ops(v) : NULL;
    if (all < 0 || (all > 0 && (!ops || an_trace_filter_ops(&s->filter, v->trace, ops) != 0)))
      return NULL;
    s->filter_counted = true;
  }
  return s ? &s->filter : NULL;
}

an_trace_ids *an_trace_view_ids_build(const tr_trace *t) {
  an_trace_ids *ids = malloc(sizeof *ids);
  if (!ids || an_trace_ids_build(ids, t) != 0) {
    free(ids);
    return NULL;
  }
  return ids;
}

void an_trace_view_ids_destroy(an_trace_ids *ids) {
  if (!ids) return;
  an_trace_ids_free(ids);
  free(ids);
}

void an_trace_view_adopt_ids(an_trace_view *v, an_trace_ids *ids) {
  if (v->ids)
    an_trace_view_ids_destroy(ids);
  else
    v->ids = ids;
}

an_status an_trace_view_index_ids(an_trace_view *v) {
  if (v->ids) return AN_OK;
  an_trace_ids *ids = an_trace_view_ids_build(v->trace);
  if (!ids) return AN_ERR_NOMEM;
  v->ids = ids;
  return AN_OK;
}

const an_stage_kernels *an_trace_view_stage(const an_trace_view *v, const char *stage_id) {
  for (size_t i = 0; i < v->n_stages; i++)
    if (strcmp(v->stages[i].stage->id, stage_id) == 0) return &v->stages[i];
  return NULL;
}

static int64_t kernel_external(const tr_trace *t, const tr_event *e) {
  int64_t ext = tr_event_external_id(t, e), corr = tr_event_correlation(t, e);
  if (ext != TR_NO_ID) return ext;
  if (corr != TR_NO_ID) return tr_trace_external_for_correlation(t, corr);
  return TR_NO_ID;
}

/* Collects staged annotations of one kind into a fresh array. */
static ann *collect_annotations(const tr_trace *t, const te_rules *rules, tr_kind kind,
                                size_t *n_out, bool *nomem) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  ann *a = malloc((n ? n : 1) * sizeof *a);
  size_t m = 0;
  *n_out = 0;
  if (!a) {
    *nomem = true;
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    const te_stage *st = te_rules_stage_from_annotation(rules, tr_str_get(t, ev[i].name));
    if (!st) continue;
    a[m].start = tr_event_ts(t, &ev[i]);
    double dur = tr_event_dur(t, &ev[i]);
    a[m].end = tr_event_ts(t, &ev[i]) + (dur > 0 ? dur : 0);
    a[m].ext = tr_event_external_id(t, &ev[i]);
    a[m].stage = st;
    a[m].gpu = kind == TR_KIND_GPU_ANNOTATION;
    m++;
  }
  *n_out = m;
  return a;
}

/* Where the annotations of a trace put its kernels: annotations by External id (best
 * first), and the merged GPU and CPU annotation windows. */
typedef struct launch_time {
  int64_t corr;
  double ts;
} launch_time;

typedef struct stage_index {
  ann *by_ext;
  size_t n_ext;
  window_set gpu, cpu;
  launch_time *launches; /* host launch time by correlation, sorted by correlation */
  size_t n_launches;
  double nearest_us;   /* stage.nearest_window_us */
  double tolerance_us; /* attribution.time_tolerance_us */
} stage_index;

static void stage_index_free(stage_index *x) {
  free(x->launches);
  free(x->by_ext);
  free(x->gpu.w);
  free(x->gpu.pmax);
  free(x->cpu.w);
  free(x->cpu.pmax);
}

static int cmp_launch_corr(const void *a, const void *b) {
  const launch_time *x = a, *y = b;
  return x->corr < y->corr ? -1 : (x->corr > y->corr);
}

/* Host launch times by correlation: a CPU (user) annotation window brackets the host
 * launches of a step, while the GPU runs them later, often inside the next step's host
 * window (a long prefill step runs while the host already launches decode). */
static bool launches_index(const tr_trace *t, stage_index *x) {
  /* launches proper, and the other runtime calls with a correlation (hipMemcpyAsync
   * issues the copies) */
  static const tr_kind kinds[] = {TR_KIND_LAUNCH, TR_KIND_RUNTIME};
  size_t n[2] = {0, 0};
  const tr_event *ev[2];
  for (size_t j = 0; j < 2; j++) ev[j] = tr_trace_events(t, kinds[j], &n[j]);
  x->launches = malloc((n[0] + n[1] + 1) * sizeof *x->launches);
  if (!x->launches) return false;
  for (size_t j = 0; j < 2; j++)
    for (size_t i = 0; i < n[j]; i++) {
      int64_t corr = tr_event_correlation(t, &ev[j][i]);
      if (corr != TR_NO_ID)
        x->launches[x->n_launches++] = (launch_time){corr, tr_event_ts(t, &ev[j][i])};
    }
  qsort(x->launches, x->n_launches, sizeof *x->launches, cmp_launch_corr);
  return true;
}

/* Host launch time of kernel k, or NAN when its launch is not in the trace. */
static double launch_ts(const stage_index *x, const tr_trace *t, const tr_event *k) {
  int64_t corr = tr_event_correlation(t, k);
  if (corr == TR_NO_ID) return NAN;
  size_t lo;
  UT_PARTITION_POINT(lo, 0, x->n_launches, m, x->launches[m].corr < corr);
  return lo < x->n_launches && x->launches[lo].corr == corr ? x->launches[lo].ts : NAN;
}

static an_status stage_index_build(const tr_trace *t, const te_rules *rules, stage_index *x) {
  memset(x, 0, sizeof *x);
  const te_settings *set = te_rules_settings(rules);
  x->nearest_us = set->stage_nearest_window_us;
  x->tolerance_us = set->attribution_time_tolerance_us;
  bool nomem = false;
  size_t ng = 0, nc = 0;
  ann *g = collect_annotations(t, rules, TR_KIND_GPU_ANNOTATION, &ng, &nomem);
  ann *c = collect_annotations(t, rules, TR_KIND_USER_ANNOTATION, &nc, &nomem);
  x->by_ext = malloc((ng + nc + 1) * sizeof *x->by_ext);
  if (nomem || !x->by_ext) {
    free(g);
    free(c);
    return AN_ERR_NOMEM;
  }
  for (size_t i = 0; i < ng; i++)
    if (g[i].ext != TR_NO_ID) x->by_ext[x->n_ext++] = g[i];
  for (size_t i = 0; i < nc; i++)
    if (c[i].ext != TR_NO_ID) x->by_ext[x->n_ext++] = c[i];
  qsort(x->by_ext, x->n_ext, sizeof *x->by_ext, cmp_ann_ext);
  bool ok_g = windows_build(g, ng, set->stage_merge_gap_us, &x->gpu);
  bool ok_c = windows_build(c, nc, set->stage_merge_gap_us, &x->cpu);
  bool ok_l = x->cpu.n == 0 || launches_index(t, x);
  return ok_g && ok_c && ok_l ? AN_OK : AN_ERR_NOMEM;
}

/* The stage annotations give kernel k: its External id's annotation, else the GPU window
 * containing its start, else the CPU window last started before its host launch (within
 * the windows' span), else the CPU
 * window containing its start, else the nearest window within stage.nearest_window_us;
 * NULL when none. */
static const te_stage *annotated_stage(const stage_index *x, const tr_trace *t, const tr_event *k) {
  int64_t ext = kernel_external(t, k);
  if (ext != TR_NO_ID && x->n_ext) {
    size_t lo;
    UT_PARTITION_POINT(lo, 0, x->n_ext, m, x->by_ext[m].ext < ext);
    if (lo < x->n_ext && x->by_ext[lo].ext == ext) return x->by_ext[lo].stage;
  }
  double probe = tr_event_ts(t, k) + x->tolerance_us;
  const ann *w = windows_containing(&x->gpu, probe);
  double launched = x->cpu.n ? launch_ts(x, t, k) : NAN;
  if (!w && !isnan(launched)) w = windows_last_started(&x->cpu, launched + x->tolerance_us);
  if (!w) w = windows_containing(&x->cpu, probe);
  if (w) return w->stage;
  double dg = INFINITY, dc = INFINITY;
  const ann *wg = windows_nearest(&x->gpu, tr_event_ts(t, k), &dg);
  const ann *wc = windows_nearest(&x->cpu, tr_event_ts(t, k), &dc);
  w = dg <= dc ? wg : wc;
  return w && (dg <= dc ? dg : dc) <= x->nearest_us ? w->stage : NULL;
}

/* Index of stage st among the rules' stages. */
static size_t stage_slot(const te_rules *rules, const te_stage *st) {
  size_t n = te_rules_stage_count(rules), s = 0;
  while (s < n && te_rules_stage(rules, s) != st) s++;
  return s;
}

/* The stage of every kernel of the chosen pid (path stage, else annotations, else
 * "all"): stage_of[i] (NULL for other pids and for events is_kernel refuses; is_kernel
 * NULL keeps all), counts per rules stage, and the kernel time of the pid (*total) and of
 * its "all" kernels (*total_all). */
static an_status assign_stages(an_trace_view *out, const te_rules *rules, const te_stage *pstage,
                               const te_stage *all, const bool *is_kernel,
                               const te_stage **stage_of, size_t *counts, double *total,
                               double *total_all) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(out->trace, TR_KIND_KERNEL, &nk);
  stage_index x;
  an_status rc = pstage ? AN_OK : stage_index_build(out->trace, rules, &x);
  for (size_t i = 0; rc == AN_OK && i < nk; i++) {
    stage_of[i] = NULL;
    if (tr_event_pid(out->trace, &kev[i]) != out->pid || (is_kernel && !is_kernel[i])) continue;
    const te_stage *st = pstage ? pstage : annotated_stage(&x, out->trace, &kev[i]);
    if (!st) st = all;
    stage_of[i] = st;
    size_t slot = stage_slot(rules, st);
    out->kernel_slot[i] = (uint16_t)(slot + 1);
    double dur = tr_event_dur(out->trace, &kev[i]);
    *total += dur;
    if (st == all) *total_all += dur;
    counts[slot]++;
  }
  if (!pstage) stage_index_free(&x);
  return rc;
}

/* Rules stage indices by (order, then declaration order). */
static void stage_render_order(const te_rules *rules, size_t *ord) {
  size_t n_st = te_rules_stage_count(rules);
  for (size_t s = 0; s < n_st; s++) ord[s] = s;
  for (size_t a = 1; a < n_st; a++) {
    size_t v = ord[a], b = a;
    while (b > 0 && te_rules_stage(rules, ord[b - 1])->order > te_rules_stage(rules, v)->order) {
      ord[b] = ord[b - 1];
      b--;
    }
    ord[b] = v;
  }
}

/* One block per stage holding kernels, in render order, each sorted by start; the "all"
 * block is left out when drop_all. */
static an_status fill_stage_blocks(an_trace_view *out, const te_rules *rules, const te_stage *all,
                                   bool drop_all, const te_stage *const *stage_of,
                                   const size_t *counts) {
  size_t n_st = te_rules_stage_count(rules), nk = 0;
  const tr_event *kev = tr_trace_events(out->trace, TR_KIND_KERNEL, &nk);
  size_t *ord = malloc((n_st + 1) * sizeof *ord);
  out->stages = calloc(n_st + 1, sizeof *out->stages);
  an_status rc = ord && out->stages ? AN_OK : AN_ERR_NOMEM;
  if (rc == AN_OK) stage_render_order(rules, ord);
  for (size_t oi = 0; rc == AN_OK && oi < n_st; oi++) {
    size_t s = ord[oi];
    const te_stage *st = te_rules_stage(rules, s);
    if (!counts[s] || (st == all && drop_all)) continue;
    an_stage_kernels *sk = &out->stages[out->n_stages];
    sk->stage = st;
    sk->kernels = malloc(counts[s] * sizeof *sk->kernels);
    if (!sk->kernels) {
      rc = AN_ERR_NOMEM;
      break;
    }
    out->n_stages++;
    for (size_t i = 0; i < nk; i++)
      if (stage_of[i] == st) {
        sk->kernels[sk->n++] = &kev[i];
        sk->total_us += tr_event_dur(out->trace, &kev[i]);
      }
    ut_sort(sk->kernels, sk->n, sizeof *sk->kernels, cmp_kernel_ptr,
            (void *)(uintptr_t)out->trace); /* runs merged */
  }
  free(ord);
  return rc;
}

/* Which kernel events are kernels to the analysis (the packs' not_a_kernel matcher drops
 * GPU-timeline records such as cuda_sync ones): *out parallel to the trace's kernel
 * events, or NULL when the packs define no such matcher (every event is one). */
static an_status kernel_events(const tr_trace *t, const te_matcher *not_a_kernel, bool **out) {
  *out = NULL;
  if (!not_a_kernel) return AN_OK;
  size_t nk = 0, n_str = tr_trace_string_count(t);
  const tr_event *kev = tr_trace_events(t, TR_KIND_KERNEL, &nk);
  bool *keep = malloc(nk ? nk : 1);
  /* the answer by category string id (0 unasked, 1 no, 2 yes): a trace's kernel events
   * have a few categories, and the matcher cost ~330 instructions an event */
  uint8_t *memo = calloc(n_str ? n_str : 1, 1);
  if (!keep || !memo) {
    free(keep);
    free(memo);
    return AN_ERR_NOMEM;
  }
  for (size_t i = 0; i < nk; i++) {
    tr_str cat = tr_event_cat(t, &kev[i]);
    if (cat < n_str && !memo[cat]) memo[cat] = an_is_kernel_event(t, &kev[i], not_a_kernel) ? 2 : 1;
    keep[i] = cat < n_str ? memo[cat] == 2 : an_is_kernel_event(t, &kev[i], not_a_kernel);
  }
  free(memo);
  *out = keep;
  return AN_OK;
}

an_status an_trace_view_build(tr_trace *t, const char *path_stage_id, const te_rules *rules,
                              const char *pid_substring, an_trace_view *out) {
  memset(out, 0, sizeof *out);
  if (!t || !rules) return AN_ERR_ARGS;
  out->trace = t;
  const te_stage *all = te_rules_stage_by_id(rules, "all");
  if (!all) return AN_ERR_RULES;
  const te_stage *pstage = NULL;
  if (path_stage_id && strcmp(path_stage_id, "all") != 0) {
    pstage = te_rules_stage_by_id(rules, path_stage_id);
    if (pstage) out->path_stage = pstage->id;
  }
  size_t nk = 0;
  tr_trace_events(t, TR_KIND_KERNEL, &nk);
  out->n_kernel_events = nk;
  if (te_rules_stage_count(rules) > AN_MAX_STAGES) return AN_ERR_RULES;
  size_t n_st = te_rules_stage_count(rules);
  out->kernel_slot = calloc(nk ? nk : 1, sizeof *out->kernel_slot);
  out->slot_stage = calloc(n_st + 1, sizeof *out->slot_stage);
  out->shared = calloc(1, sizeof *out->shared);
  if (out->shared) {
    out->shared->lock_ready = pthread_mutex_init(&out->shared->ops_lock, NULL) == 0;
    out->shared->kernel_lock_ready = pthread_mutex_init(&out->shared->kernel_ops_lock, NULL) == 0;
  }
  if (!out->kernel_slot || !out->slot_stage || !out->shared || !out->shared->lock_ready ||
      !out->shared->kernel_lock_ready) {
    an_trace_view_free(out);
    return AN_ERR_NOMEM;
  }
  out->shared->rules = rules;
  for (size_t k = 0; k < n_st; k++) out->slot_stage[k + 1] = te_rules_stage(rules, k)->id;
  bool *is_kernel = NULL;
  an_status rc = kernel_events(t, te_rules_matcher(rules, "not_a_kernel"), &is_kernel);
  bool found = false;
  if (rc == AN_OK)
    rc = an_pick_pid(t, is_kernel, pid_substring, te_rules_matcher(rules, "tp0_process"), &out->pid,
                     &found);
  if (rc != AN_OK || !found) {
    free(is_kernel);
    out->pid = 0;
    if (rc != AN_OK) an_trace_view_free(out);
    return rc;
  }
  const te_stage **stage_of = malloc((nk ? nk : 1) * sizeof *stage_of);
  size_t *counts = calloc(te_rules_stage_count(rules) + 1, sizeof *counts);
  double total = 0, total_all = 0;
  if (!stage_of || !counts) rc = AN_ERR_NOMEM;
  if (rc == AN_OK)
    rc = assign_stages(out, rules, pstage, all, is_kernel, stage_of, counts, &total, &total_all);
  out->kernel_total_us = total;
  /* A leftover "all" group of an annotated trace goes when it is a sliver of its time. */
  bool drop_all = rc == AN_OK && !pstage && total_all < total && total > 0 &&
                  total_all / total * 100.0 < te_rules_settings(rules)->stage_min_all_share_pct;
  if (rc == AN_OK) rc = fill_stage_blocks(out, rules, all, drop_all, stage_of, counts);
  free(counts);
  free(stage_of);
  free(is_kernel);
  if (rc != AN_OK) an_trace_view_free(out);
  return rc;
}
