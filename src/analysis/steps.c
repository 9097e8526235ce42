/*
 * analysis/steps.c - the step windows of a trace (steps.h).
 *
 * One pass over the annotations of each kind (the matcher's answer kept per string id, so
 * each distinct name is matched once), one sort of the matches, one index of launch calls
 * by correlation (a radix sort of packed keys when the correlations span less than 2^32,
 * as a profiler's counter does; else a comparison sort) and one binary search per kernel: O(n log
 * n) in the events. The pipeline builds a trace's steps once and lends them to the time account,
 * the overlap table, the fusion gates and the rank summary.
 */
#include "analysis/steps.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/search.h"
#include "util/sort.h"

typedef struct span {
  double ts, end;
  tr_str name;
  uint32_t index; /* file position: a total order */
} span;

typedef struct span_list {
  span *v;
  size_t n;
} span_list;

static int cmp_span(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const span *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if (a->end != b->end) return a->end > b->end ? -1 : 1; /* the outer one first */
  return a->index < b->index ? -1 : (a->index > b->index);
}

static span span_of(const tr_trace *t, const tr_event *e) {
  double dur = tr_event_dur(t, e);
  return (span){e->ts, e->ts + (dur > 0 ? dur : 0), e->name, e->index};
}

/* Keeps the outermost spans (sorted first): one starting inside a kept one is the same
 * step (vLLM's execute_model around gpu_model_runner: forward), so kept spans are
 * disjoint. */
static void keep_outermost(span_list *l) {
  ut_sort(l->v, l->n, sizeof *l->v, cmp_span, NULL);
  size_t m = 0;
  for (size_t i = 0; i < l->n; i++)
    if (m == 0 || l->v[i].ts >= l->v[m - 1].end) l->v[m++] = l->v[i];
  l->n = m;
}

/* Whether the matcher names string s, asked once per string id (memo: 0 unasked, 1 no,
 * 2 yes; NULL asks every time). */
static bool names_step(const tr_trace *t, const te_matcher *m, uint8_t *memo, tr_str s) {
  if (memo && memo[s]) return memo[s] == 2;
  const char *name = tr_str_get(t, s);
  bool hit = te_matcher_match(m, name, strlen(name));
  if (memo) memo[s] = hit ? 2 : 1;
  return hit;
}

/* The events of a kind the matcher names, outermost kept. false: out of memory. */
static bool matched_spans(const tr_trace *t, tr_kind kind, const te_matcher *m, uint8_t *memo,
                          span_list *out) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  out->n = 0;
  out->v = malloc((n ? n : 1) * sizeof *out->v);
  if (!out->v) return false;
  for (size_t i = 0; i < n; i++)
    if (names_step(t, m, memo, ev[i].name)) out->v[out->n++] = span_of(t, &ev[i]);
  keep_outermost(out);
  return true;
}

/* Top-level user annotations when they are one name repeated at least min_repeats
 * times (a benchmark's calls); else none. false: out of memory. */
static bool iteration_spans(const tr_trace *t, long min_repeats, span_list *out) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, TR_KIND_USER_ANNOTATION, &n);
  out->n = 0;
  out->v = malloc((n ? n : 1) * sizeof *out->v);
  if (!out->v) return false;
  for (size_t i = 0; i < n; i++) out->v[out->n++] = span_of(t, &ev[i]);
  keep_outermost(out);
  for (size_t i = 1; i < out->n; i++)
    if (out->v[i].name != out->v[0].name) out->n = 0;
  if (out->n < (size_t)(min_repeats > 0 ? min_repeats : 1)) out->n = 0;
  return true;
}

/* User annotations (else GPU annotations) a stage rule places, outermost kept: a trace
 * that marks each step only with its stage ("prefill", "decode" per step). false: out of
 * memory. */
static bool stage_spans(const tr_trace *t, const te_rules *rules, an_step_source *src,
                        span_list *out) {
  static const tr_kind kinds[2] = {TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  for (int k = 0; k < 2; k++) {
    size_t n = 0;
    const tr_event *ev = tr_trace_events(t, kinds[k], &n);
    free(out->v);
    out->n = 0;
    out->v = malloc((n ? n : 1) * sizeof *out->v);
    if (!out->v) return false;
    for (size_t i = 0; i < n; i++)
      if (te_rules_stage_from_annotation(rules, tr_str_get(t, ev[i].name)))
        out->v[out->n++] = span_of(t, &ev[i]);
    keep_outermost(out);
    *src = k ? AN_STEPS_GPU_ANNOTATION : AN_STEPS_STAGE_ANNOTATION;
    if (out->n) break;
  }
  return true;
}

/* A candidate marker: the spans of one marker kind and the kernel time they hold. */
typedef struct candidate {
  span_list l;
  an_step_source src;
  double covered_us;
} candidate;

/* The step_annotation and measure_annotation kinds, in the order that wins ties. */
static const struct {
  const char *matcher;
  tr_kind kind;
  an_step_source src;
} marker_order[] = {{"step_annotation", TR_KIND_USER_ANNOTATION, AN_STEPS_CPU_ANNOTATION},
                    {"step_annotation", TR_KIND_CPU_OP, AN_STEPS_CPU_OP},
                    {"step_annotation", TR_KIND_GPU_ANNOTATION, AN_STEPS_GPU_ANNOTATION},
                    {"measure_annotation", TR_KIND_USER_ANNOTATION, AN_STEPS_MEASURE_ANNOTATION}};

/* Those, then the repeated annotation and the stage annotations. */
#define MAX_CANDIDATES (sizeof marker_order / sizeof marker_order[0] + 2)

static void free_candidates(candidate *c, size_t n) {
  for (size_t k = 0; k < n; k++) free(c[k].l.v);
}

/* Every marker kind with spans, in the order that wins ties: the step_annotation matcher's
 * user annotations, CPU ops and GPU annotations, the measure_annotation matcher's user
 * annotations (a benchmark's measured regions), one repeated top-level annotation, the
 * annotations a stage rule places. false: out of memory. */
static bool find_candidates(const tr_trace *t, const te_rules *rules, candidate *c, size_t *n) {
  size_t n_str = tr_trace_string_count(t);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1);
  bool ok = memo != NULL;
  *n = 0;
  for (size_t k = 0; ok && k < sizeof marker_order / sizeof marker_order[0]; k++) {
    const te_matcher *m = te_rules_matcher(rules, marker_order[k].matcher);
    if (!m) continue;
    if (k && strcmp(marker_order[k].matcher, marker_order[k - 1].matcher))
      memset(memo, 0, n_str ? n_str : 1); /* the memo answers one matcher */
    c[*n] = (candidate){{0}, marker_order[k].src, 0};
    ok = matched_spans(t, marker_order[k].kind, m, memo, &c[*n].l);
    if (ok && c[*n].l.n)
      ++*n;
    else
      free(c[*n].l.v);
  }
  free(memo);
  if (ok) {
    c[*n] = (candidate){{0}, AN_STEPS_ITERATION, 0};
    ok = iteration_spans(t, te_rules_settings(rules)->steps_iteration_min_repeats, &c[*n].l);
    if (ok && c[*n].l.n)
      ++*n;
    else
      free(c[*n].l.v);
  }
  if (ok) {
    c[*n] = (candidate){{0}, AN_STEPS_NONE, 0};
    ok = stage_spans(t, rules, &c[*n].src, &c[*n].l);
    if (ok && c[*n].l.n)
      ++*n;
    else
      free(c[*n].l.v);
  }
  return ok;
}

/* ---------------------------------------------------------------- launches */

typedef struct launch_ref {
  int64_t corr;
  const tr_event *e;
} launch_ref;

static int cmp_launch(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const launch_ref *a = pa, *b = pb;
  if (a->corr != b->corr) return a->corr < b->corr ? -1 : 1;
  return a->e->index < b->e->index ? -1 : (a->e->index > b->e->index);
}

/* Launch and runtime calls by correlation (memcpys are issued by runtime calls): for each
 * correlation the call first in file order. Only calls whose correlation is that of a
 * kernel looked up are kept (corr_filter): a launch-heavy trace has twice as many other
 * runtime calls (event queries, attribute calls), each with a correlation no kernel has.
 * A profiler's correlations are a counter, so they span far less than 2^32: each call is
 * then one 8-byte key, its correlation less the least kernel correlation above its entry
 * number, sorted by a radix sort in a few passes (the comparison sort of 16-byte records
 * this replaces was most of the steps' cost on a launch-heavy trace). Wider correlations
 * take the records and the comparison sort. Either way a correlation's calls sit side by
 * side and the first in file order is chosen, so the answer is the same call. */
typedef struct launch_index {
  const tr_event *ev[2]; /* launches, runtime calls */
  size_t n0;             /* entry e < n0 is launch e, else runtime call e - n0 */
  int64_t lo;            /* least correlation (keys) */
  uint64_t *key;         /* (correlation - lo) << 32 | entry, sorted; NULL: records */
  launch_ref *v;         /* (correlation, call), sorted by cmp_launch */
  size_t n;
} launch_index;

/* The correlations of the kernels looked up: their range, and a bit per correlation in it
 * when that bitmap is no larger than the keys of every call it may spare. */
typedef struct corr_filter {
  int64_t lo, hi; /* lo > hi: no kernel has one */
  uint64_t *bits;
} corr_filter;

#define CORR_WORD_BITS (CHAR_BIT * sizeof(uint64_t)) /* correlations a bitmap word holds */

static bool corr_filter_build(const an_trace_view *v, size_t n_calls, corr_filter *f) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  *f = (corr_filter){INT64_MAX, INT64_MIN, NULL};
  for (size_t i = 0; i < nk && i < v->n_kernel_events; i++) {
    int64_t corr = v->kernel_stage[i] ? tr_event_correlation(v->trace, &kev[i]) : TR_NO_ID;
    if (corr == TR_NO_ID) continue;
    if (corr < f->lo) f->lo = corr;
    if (corr > f->hi) f->hi = corr;
  }
  if (f->lo > f->hi || (uint64_t)f->hi - (uint64_t)f->lo >= (uint64_t)n_calls * CORR_WORD_BITS)
    return true; /* a bit per correlation would outweigh a key per call */
  size_t words = (size_t)(((uint64_t)f->hi - (uint64_t)f->lo) / CORR_WORD_BITS + 1);
  if (!(f->bits = calloc(words, sizeof *f->bits))) return false;
  for (size_t i = 0; i < nk && i < v->n_kernel_events; i++) {
    int64_t corr = v->kernel_stage[i] ? tr_event_correlation(v->trace, &kev[i]) : TR_NO_ID;
    uint64_t d = (uint64_t)corr - (uint64_t)f->lo;
    if (corr != TR_NO_ID) f->bits[d / CORR_WORD_BITS] |= 1ull << (d % CORR_WORD_BITS);
  }
  return true;
}

static bool corr_wanted(const corr_filter *f, int64_t corr) {
  if (corr == TR_NO_ID || corr < f->lo || corr > f->hi) return false;
  uint64_t d = (uint64_t)corr - (uint64_t)f->lo;
  return !f->bits || (f->bits[d / CORR_WORD_BITS] >> (d % CORR_WORD_BITS) & 1);
}

static const tr_event *entry_event(const launch_index *x, uint32_t entry) {
  return entry < x->n0 ? &x->ev[0][entry] : &x->ev[1][entry - x->n0];
}

/* The packed keys when the kernels' correlations and the entries fit in 32 bits each. 1:
 * built, 0: too wide (use the records), -1: out of memory. */
static int launch_keys(const tr_trace *t, launch_index *x, const size_t n[2],
                       const corr_filter *f) {
  if (f->lo <= f->hi &&
      ((uint64_t)f->hi - (uint64_t)f->lo > UINT32_MAX || n[0] + n[1] > UINT32_MAX))
    return 0;
  x->key = malloc((n[0] + n[1] + 1) * sizeof *x->key);
  if (!x->key) return -1;
  x->lo = f->lo;
  for (size_t j = 0; j < 2; j++)
    for (size_t i = 0; i < n[j]; i++) {
      int64_t corr = tr_event_correlation(t, &x->ev[j][i]);
      if (corr_wanted(f, corr))
        x->key[x->n++] = ((uint64_t)corr - (uint64_t)f->lo) << 32 | (uint64_t)(j ? n[0] + i : i);
    }
  uint64_t *tmp = malloc((x->n + 1) * sizeof *tmp);
  ut_sort_u64(x->key, x->n, tmp); /* without tmp: a comparison sort, same result */
  free(tmp);
  return 1;
}

/* false: out of memory. */
static bool launch_index_build(const an_trace_view *v, launch_index *x) {
  static const tr_kind kinds[] = {TR_KIND_LAUNCH, TR_KIND_RUNTIME};
  const tr_trace *t = v->trace;
  size_t n[2];
  memset(x, 0, sizeof *x);
  for (size_t j = 0; j < 2; j++) x->ev[j] = tr_trace_events(t, kinds[j], &n[j]);
  x->n0 = n[0];
  corr_filter f;
  if (!corr_filter_build(v, n[0] + n[1], &f)) return false;
  int keys = launch_keys(t, x, n, &f);
  if (keys) {
    free(f.bits);
    return keys > 0;
  }
  x->v = malloc((n[0] + n[1] + 1) * sizeof *x->v);
  for (size_t j = 0; x->v && j < 2; j++)
    for (size_t i = 0; i < n[j]; i++) {
      int64_t corr = tr_event_correlation(t, &x->ev[j][i]);
      if (corr_wanted(&f, corr)) x->v[x->n++] = (launch_ref){corr, &x->ev[j][i]};
    }
  free(f.bits);
  if (!x->v) return false;
  ut_sort(x->v, x->n, sizeof *x->v, cmp_launch, NULL);
  return true;
}

static void launch_index_free(launch_index *x) {
  free(x->key);
  free(x->v);
}

static const tr_event *launch_of(const launch_index *x, int64_t corr) {
  if (corr == TR_NO_ID) return NULL;
  size_t at;
  if (x->key) {
    if (corr < x->lo || (uint64_t)corr - (uint64_t)x->lo > UINT32_MAX) return NULL;
    uint64_t c = (uint64_t)corr - (uint64_t)x->lo;
    UT_PARTITION_POINT(at, 0, x->n, i, x->key[i] >> 32 < c);
    const tr_event *first = NULL; /* the entries of c: launches first, so by file position */
    for (; at < x->n && x->key[at] >> 32 == c; at++) {
      const tr_event *e = entry_event(x, (uint32_t)x->key[at]);
      if (!first || e->index < first->index) first = e;
    }
    return first;
  }
  UT_PARTITION_POINT(at, 0, x->n, i, x->v[i].corr < corr);
  return at < x->n && x->v[at].corr == corr ? x->v[at].e : NULL;
}

/* ---------------------------------------------------------------- kernels */

/* The span holding t (spans disjoint, by start), or -1. */
static int32_t span_at(const span_list *l, double t) {
  size_t lo; /* the first span starting after t */
  UT_PARTITION_POINT(lo, 0, l->n, i, l->v[i].ts <= t);
  return lo > 0 && t <= l->v[lo - 1].end ? (int32_t)(lo - 1) : -1;
}

/* The launch call of each kernel of the view's process (out->launch, out->n_kernel_events,
 * out->kernel_step allocated); *found: how many have one. */
static bool find_launches(const an_trace_view *v, an_steps *out, size_t *found) {
  const tr_trace *t = v->trace;
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(t, TR_KIND_KERNEL, &nk);
  launch_index li;
  bool ok = launch_index_build(v, &li);
  out->n_kernel_events = nk;
  out->kernel_step = malloc((nk ? nk : 1) * sizeof *out->kernel_step);
  out->launch = calloc(nk ? nk : 1, sizeof *out->launch);
  ok = ok && out->kernel_step && out->launch;
  *found = 0;
  for (size_t i = 0; ok && i < nk && i < v->n_kernel_events; i++)
    if (v->kernel_stage[i] && (out->launch[i] = launch_of(&li, tr_event_correlation(t, &kev[i]))))
      ++*found;
  launch_index_free(&li);
  return ok;
}

/* Whether CPU-window steps take kernels by their launch call: the trace records launches
 * (GPU windows place a kernel where it starts). */
static bool by_launch(an_step_source src, size_t found) {
  return src != AN_STEPS_GPU_ANNOTATION && found > 0;
}

/* The time that places kernel i among step spans: its launch call's start by launch, else
 * its own start. */
static double placed_at(const an_steps *s, const tr_event *kev, size_t i, bool launch) {
  return launch && s->launch[i] ? s->launch[i]->ts : kev[i].ts;
}

/* Kernel time (us) of the view's process that a candidate's spans hold, and the whole. A
 * kernel without a launch record counts where it starts (the GPU-time placement below). */
static double covered_us(const an_trace_view *v, const an_steps *s, const candidate *c,
                         size_t found, double *total) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  bool launch = by_launch(c->src, found);
  double in = 0;
  *total = 0;
  for (size_t i = 0; i < nk && i < v->n_kernel_events; i++) {
    if (!v->kernel_stage[i]) continue;
    double dur = tr_event_dur(v->trace, &kev[i]);
    *total += dur > 0 ? dur : 0;
    if (span_at(&c->l, placed_at(s, kev, i, launch)) >= 0) in += dur > 0 ? dur : 0;
  }
  return in;
}

/* The marker kind whose spans hold the most kernel time; a kind earlier in the order keeps
 * the choice unless a later one holds steps.marker_margin_pct more of the whole. Returns
 * its index (0 when none); *pct: its coverage. */
static size_t choose_marker(const an_trace_view *v, const te_rules *rules, const an_steps *s,
                            candidate *c, size_t n, size_t found, double *pct) {
  double margin = te_rules_settings(rules)->steps_marker_margin_pct, total = 0;
  size_t best = 0;
  for (size_t k = 0; k < n; k++) {
    c[k].covered_us = covered_us(v, s, &c[k], found, &total);
    if (k && c[k].covered_us > c[best].covered_us + margin / 100.0 * total) best = k;
  }
  *pct = n && total > 0 ? c[best].covered_us / total * 100.0 : 0;
  return best;
}

/* Each kernel of the view's process: its step. A CPU window holds the kernels launched
 * inside it. When the trace records launches, a kernel without one was launched before the
 * capture began (a previous step's tail) or lost its link: placed by GPU time afterwards
 * (place_unlinked); a trace without launch records places kernels where they start, as
 * GPU windows do. */
static void assign_kernels(const an_trace_view *v, const span_list *l, bool launch, an_steps *out) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  for (size_t i = 0; i < nk; i++) {
    out->kernel_step[i] = -1;
    if (i >= v->n_kernel_events || !v->kernel_stage[i] || (launch && !out->launch[i])) continue;
    out->kernel_step[i] = span_at(l, placed_at(out, kev, i, launch));
  }
}

/* Kernels launched (without launch records: started) under a warm-up annotation (matcher
 * warmup_annotation) are one-time setup: in no step, counted apart. In a trace without
 * step markers the warm-up marks where the measured part begins: whatever was launched
 * before the last warm-up ended (input copies, allocator growth, the warm-up calls) is
 * setup too; with steps, what was launched so before the first step. */
static bool mark_setup(const an_trace_view *v, const te_rules *rules, double first_step_ts,
                       an_steps *out) {
  const te_matcher *m = te_rules_matcher(rules, "warmup_annotation");
  if (!m) return true;
  size_t n_str = tr_trace_string_count(v->trace), nk = 0;
  uint8_t *memo = calloc(n_str ? n_str : 1, 1);
  span_list l = {0};
  bool ok = memo && matched_spans(v->trace, TR_KIND_USER_ANNOTATION, m, memo, &l);
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  for (size_t i = 0; ok && l.n && i < nk && i < out->n_kernel_events; i++) {
    if (i >= v->n_kernel_events || !v->kernel_stage[i]) continue;
    double at = out->launch[i] ? out->launch[i]->ts : kev[i].ts;
    if (span_at(&l, at) >= 0 || (at <= l.v[l.n - 1].end && at < first_step_ts))
      out->kernel_step[i] = AN_STEP_SETUP;
  }
  free(memo);
  free(l.v);
  return ok;
}

/* ---------------------------------------------------------------- steps */

/* The stage of most of each step's kernel time (ties: the rules' earlier stage). */
static bool step_stages(const an_trace_view *v, const te_rules *rules, an_steps *s) {
  size_t n_st = te_rules_stage_count(rules), nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  double *us = calloc(s->n * n_st + 1, sizeof *us);
  if (!us) return false;
  for (size_t i = 0; i < nk && i < s->n_kernel_events; i++) {
    if (s->kernel_step[i] < 0) continue;
    size_t slot = 0; /* the view's stage ids are the rules' own strings */
    while (slot < n_st && te_rules_stage(rules, slot)->id != v->kernel_stage[i]) slot++;
    if (slot < n_st) us[(size_t)s->kernel_step[i] * n_st + slot] += tr_event_dur(v->trace, &kev[i]);
  }
  for (size_t j = 0; j < s->n; j++) {
    size_t best = 0;
    for (size_t slot = 1; slot < n_st; slot++)
      if (us[j * n_st + slot] > us[j * n_st + best]) best = slot;
    s->steps[j].stage_id = n_st ? te_rules_stage(rules, best)->id : NULL;
  }
  free(us);
  return true;
}

/* Kernel count, time and GPU window of each step. */
static void step_windows(const an_trace_view *v, an_steps *s) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  for (size_t i = 0; i < nk && i < s->n_kernel_events; i++) {
    if (s->kernel_step[i] < 0) continue;
    an_step *st = &s->steps[s->kernel_step[i]];
    double dur = tr_event_dur(v->trace, &kev[i]), end = kev[i].ts + (dur > 0 ? dur : 0);
    if (!st->n_kernels || kev[i].ts < st->gpu_ts) st->gpu_ts = kev[i].ts;
    if (!st->n_kernels || end > st->gpu_end) st->gpu_end = end;
    st->n_kernels++;
    st->kernel_us += dur;
  }
}

/* Steps by GPU window start (for place_unlinked). */
static int cmp_gpu_start(const void *pa, const void *pb, void *ctx) {
  const an_steps *s = ctx;
  const an_step *a = &s->steps[*(const int32_t *)pa], *b = &s->steps[*(const int32_t *)pb];
  if (a->gpu_ts != b->gpu_ts) return a->gpu_ts < b->gpu_ts ? -1 : 1;
  return *(const int32_t *)pa < *(const int32_t *)pb ? -1 : 1;
}

/* A kernel of a CPU-window step trace whose launch record is missing (the flow link lost,
 * a stream lagging behind its launches) belongs to the step whose GPU window it starts in,
 * by its GPU time: without this a step keeps only its linked kernels and per-step figures
 * leave the rest out. Returns how many were placed; windows then need recounting. */
static size_t place_unlinked(const an_trace_view *v, an_steps *s) {
  size_t nk = 0, m = 0, placed = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  int32_t *by = malloc((s->n ? s->n : 1) * sizeof *by);
  if (!by) return 0; /* out of memory: unlinked kernels stay outside */
  for (size_t j = 0; j < s->n; j++)
    if (s->steps[j].n_kernels) by[m++] = (int32_t)j;
  ut_sort(by, m, sizeof *by, cmp_gpu_start, s);
  for (size_t i = 0; m && i < nk && i < s->n_kernel_events; i++) {
    if (s->kernel_step[i] != -1 || s->launch[i] || i >= v->n_kernel_events || !v->kernel_stage[i])
      continue;
    size_t a; /* past the last window starting at or before the kernel */
    UT_PARTITION_POINT(a, 0, m, k, s->steps[by[k]].gpu_ts <= kev[i].ts);
    if (a && kev[i].ts < s->steps[by[a - 1]].gpu_end) {
      s->kernel_step[i] = by[a - 1];
      placed++;
    }
  }
  free(by);
  return placed;
}

/* Resets the windows' kernel counts before step_windows counts them again. */
static void reset_counts(an_steps *s) {
  for (size_t j = 0; j < s->n; j++) {
    s->steps[j].n_kernels = 0;
    s->steps[j].kernel_us = 0;
  }
}

/* Where a kernel starting at t runs among disjoint GPU windows [lo, hi) (the last one
 * closed), or -1. */
static int32_t gpu_window_at(const double *lo, const double *hi, const int32_t *step, size_t n,
                             double t) {
  size_t a; /* the first window starting after t */
  UT_PARTITION_POINT(a, 0, n, i, lo[i] <= t);
  if (!a) return -1;
  size_t j = a - 1;
  return t < hi[j] || (j + 1 == n && t <= hi[j]) ? step[j] : -1;
}

/* When the GPU windows of steps overlap (a step's kernels still run after the next step's
 * first kernel started: a pipelined trainer, a graph queued behind other streams), each
 * step's window ends where the next one's begins and every kernel of the process belongs
 * to the window it starts in, so no GPU time is in two steps and no idle is counted twice.
 * Returns whether the windows were cut; false also when out of memory (windows stay). */
static bool disjoint_windows(const an_trace_view *v, an_steps *s) {
  size_t m = 0;
  bool overlap = false;
  for (size_t j = 0, prev = SIZE_MAX; j < s->n; j++) {
    if (!s->steps[j].n_kernels) continue;
    if (prev != SIZE_MAX && s->steps[prev].gpu_end > s->steps[j].gpu_ts) overlap = true;
    prev = j;
    m++;
  }
  if (!overlap) return false;
  double *lo = malloc(m * sizeof *lo), *hi = malloc(m * sizeof *hi);
  int32_t *step = malloc(m * sizeof *step);
  bool ok = lo && hi && step;
  m = 0;
  for (size_t j = 0; ok && j < s->n; j++)
    if (s->steps[j].n_kernels) step[m++] = (int32_t)j;
  for (size_t q = 0; ok && q < m; q++) {
    const an_step *st = &s->steps[step[q]];
    lo[q] = q && hi[q - 1] > st->gpu_ts ? hi[q - 1] : st->gpu_ts;
    double next = q + 1 < m ? s->steps[step[q + 1]].gpu_ts : st->gpu_end;
    hi[q] = next < st->gpu_end ? next : st->gpu_end;
    if (hi[q] < lo[q]) hi[q] = lo[q];
  }
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  for (size_t i = 0; ok && i < nk && i < s->n_kernel_events; i++)
    if (s->kernel_step[i] != AN_STEP_SETUP)
      s->kernel_step[i] = i < v->n_kernel_events && v->kernel_stage[i]
                              ? gpu_window_at(lo, hi, step, m, kev[i].ts)
                              : -1;
  if (ok) reset_counts(s);
  free(lo);
  free(hi);
  free(step);
  return ok;
}

/* Drops the steps without kernels and renumbers the kernels' steps. */
static void drop_empty(an_steps *s) {
  int32_t *to = malloc((s->n ? s->n : 1) * sizeof *to);
  size_t m = 0;
  for (size_t j = 0; j < s->n; j++) {
    if (to) to[j] = s->steps[j].n_kernels ? (int32_t)m : -1;
    if (s->steps[j].n_kernels) s->steps[m++] = s->steps[j];
  }
  if (!to) return; /* out of memory: empty steps stay; they count no kernel */
  for (size_t i = 0; i < s->n_kernel_events; i++)
    if (s->kernel_step[i] >= 0) s->kernel_step[i] = to[s->kernel_step[i]];
  s->n = m;
  free(to);
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : (a > b);
}

/* The first step of each stage is a warm-up when its GPU window is at least ratio times
 * the median window of the stage's other steps. */
static void mark_warmups(an_steps *s, double ratio) {
  double *w = malloc((s->n ? s->n : 1) * sizeof *w);
  for (size_t j = 0; w && ratio > 0 && j < s->n; j++) {
    bool first = true;
    for (size_t p = 0; p < j && first; p++) first = s->steps[p].stage_id != s->steps[j].stage_id;
    if (!first) continue;
    size_t m = 0;
    for (size_t q = j + 1; q < s->n; q++)
      if (s->steps[q].stage_id == s->steps[j].stage_id)
        w[m++] = s->steps[q].gpu_end - s->steps[q].gpu_ts;
    if (!m) continue;
    qsort(w, m, sizeof *w, cmp_double);
    double med = m % 2 ? w[m / 2] : (w[m / 2 - 1] + w[m / 2]) / 2;
    s->steps[j].warmup = med > 0 && s->steps[j].gpu_end - s->steps[j].gpu_ts >= ratio * med;
  }
  free(w);
}

an_status an_steps_build(const an_trace_view *v, const te_rules *rules, an_steps *out) {
  memset(out, 0, sizeof *out);
  candidate c[MAX_CANDIDATES];
  size_t n_c = 0, found = 0;
  if (!find_candidates(v->trace, rules, c, &n_c)) {
    free_candidates(c, n_c);
    return AN_ERR_NOMEM;
  }
  bool ok = find_launches(v, out, &found);
  size_t best = ok ? choose_marker(v, rules, out, c, n_c, found, &out->coverage_pct) : 0;
  span_list l = n_c ? c[best].l : (span_list){0};
  out->source = n_c ? c[best].src : AN_STEPS_NONE;
  out->n_markers = n_c;
  out->steps = calloc(l.n ? l.n : 1, sizeof *out->steps);
  bool launch = by_launch(out->source, found);
  ok = ok && out->steps;
  if (ok) assign_kernels(v, &l, launch, out);
  ok = ok && mark_setup(v, rules, l.n ? l.v[0].ts : INFINITY, out);
  out->n = ok ? l.n : 0;
  for (size_t j = 0; j < out->n; j++) {
    out->steps[j].name = tr_str_get(v->trace, l.v[j].name);
    out->steps[j].cpu_ts = l.v[j].ts;
    out->steps[j].cpu_end = l.v[j].end;
  }
  free_candidates(c, n_c);
  if (ok) {
    step_windows(v, out);
    if (launch && (out->placed_by_gpu_time = place_unlinked(v, out))) {
      reset_counts(out);
      step_windows(v, out);
    }
    if ((out->cut_windows = disjoint_windows(v, out))) step_windows(v, out);
    ok = step_stages(v, rules, out);
  }
  if (ok) drop_empty(out);
  if (ok) mark_warmups(out, te_rules_settings(rules)->steps_warmup_ratio);
  if (ok && !out->n) out->source = AN_STEPS_NONE;
  if (!ok) an_steps_free(out);
  return ok ? AN_OK : AN_ERR_NOMEM;
}

void an_steps_free(an_steps *s) {
  free(s->steps);
  free(s->kernel_step);
  free(s->launch);
  memset(s, 0, sizeof *s);
}

size_t an_steps_count(const an_steps *s, const char *stage_id) {
  size_t n = 0;
  for (size_t j = 0; j < s->n; j++)
    n += !s->steps[j].warmup && (!stage_id || !strcmp(s->steps[j].stage_id, stage_id));
  return n;
}

bool an_steps_kernel_setup(const an_steps *s, size_t i) {
  return i < s->n_kernel_events && s->kernel_step && s->kernel_step[i] == AN_STEP_SETUP;
}

bool an_steps_kernel_counted(const an_steps *s, size_t i) {
  if (!s->n) return !an_steps_kernel_setup(s, i);
  if (i >= s->n_kernel_events || s->kernel_step[i] < 0) return false;
  return !s->steps[s->kernel_step[i]].warmup;
}

const char *an_step_source_id(an_step_source src) {
  static const char *const id[] = {
      "none",      "step_annotation",  "step_cpu_op",       "gpu_annotation",
      "iteration", "stage_annotation", "measure_annotation"};
  return (size_t)src < sizeof id / sizeof id[0] ? id[src] : "none";
}
