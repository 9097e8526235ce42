/*
 * analysis/steps.c - the step windows of a trace (steps.h).
 *
 * One pass over the annotations of each kind (the matcher's answer kept per string id, so
 * each distinct name is matched once), one sort of the matches, one index of launch calls
 * by correlation (a ranked bitmap of the kernels' correlations when they span a few ids per
 * call, as a profiler's counter does; else sorted records) and one lookup per kernel: O(n
 * log n) in the events. The pipeline builds a trace's steps once and lends them
 * to the time account, the overlap table, the fusion gates and the rank summary.
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
  /* spans of its kind starting inside it (keep_outermost dropped them: the same step) and
   * the longest's length (us) */
  uint32_t nested;
  double nested_us;
  double nested_ts; /* the longest nested one's start */
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
  return (span){.ts = tr_event_ts(t, e),
                .end = tr_event_ts(t, e) + (dur > 0 ? dur : 0),
                .name = e->name,
                .index = e->index};
}

/* Keeps the outermost spans (sorted first): one starting inside a kept one is the same
 * step (vLLM's execute_model around gpu_model_runner: forward), so kept spans are
 * disjoint. */
static void keep_outermost(span_list *l) {
  ut_sort(l->v, l->n, sizeof *l->v, cmp_span, NULL);
  size_t m = 0;
  for (size_t i = 0; i < l->n; i++) {
    if (m == 0 || l->v[i].ts >= l->v[m - 1].end) {
      l->v[m++] = l->v[i];
      continue;
    }
    span *in = &l->v[m - 1]; /* counted as part of it (review 12 defect 5) */
    in->nested++;
    if (l->v[i].end - l->v[i].ts > in->nested_us) {
      in->nested_us = l->v[i].end - l->v[i].ts;
      in->nested_ts = l->v[i].ts;
    }
  }
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

/* The events of a kind the matcher names, outermost kept. Counted before the list is
 * made (the memo makes the second pass cheap): a span per CPU op of the kind, most of them
 * no step, was the run's peak of memory on cpu_op-heavy traces. false: out of memory. */
static bool matched_spans(const tr_trace *t, tr_kind kind, const te_matcher *m, uint8_t *memo,
                          span_list *out) {
  size_t n = 0, hits = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  for (size_t i = 0; i < n; i++) hits += names_step(t, m, memo, ev[i].name);
  out->n = 0;
  out->v = malloc((hits ? hits : 1) * sizeof *out->v);
  if (!out->v) return false;
  for (size_t i = 0; i < n && out->n < hits; i++)
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
 * correlation a kernel has, the call first in file order. A profiler's correlations are a
 * counter (the traces seen span 4 to 16 ids per call kept), so a bitmap marks the kernels'
 * correlations and a count of the marks before each word ranks them: one pass over the
 * calls, with no sort, fills a table holding per kernel correlation its first call, and a
 * kernel's lookup is a bit test and a rank. The bitmap is kept in blocks of
 * CORR_BLOCK_BITS correlations, only those holding a kernel's, so captures far apart in
 * one file (merged or repeated) cost 4 bytes per empty block. (Sorted keys of every call
 * were most of the steps' cost on a launch-heavy trace, in stores and a radix sort, then a
 * binary search per kernel.) A launch-heavy trace has twice as many other runtime calls
 * (event queries, attribute calls), each with a correlation no kernel has: the bitmap turns
 * them away. Correlations too spread for the blocks take sorted records of the calls in the
 * kernels' range. Either way the answer is the same call. */
typedef struct launch_index {
  const tr_event *ev[2]; /* launches, runtime calls */
  size_t n0;             /* entry e < n0 is launch e, else runtime call e - n0 */
  int64_t lo, hi;        /* the kernels' correlations: least, greatest (lo > hi: none) */
  uint32_t *block; /* per CORR_BLOCK_BITS from lo: 1 + its block of bits, 0 none; NULL: records */
  uint64_t *bits;  /* CORR_BLOCK_WORDS words a block; bit: a kernel has the correlation */
  uint32_t *rank;  /* per word of bits: the marks in the words before */
  uint32_t *first; /* per kernel correlation by rank: entry + 1 of its first call, 0 none */
  launch_ref *v;   /* (correlation, call), sorted by cmp_launch */
  size_t n;
} launch_index;

#define CORR_WORD_BITS (CHAR_BIT * sizeof(uint64_t)) /* correlations a bitmap word holds */
#define CORR_BLOCK_WORDS 64u                         /* words of a block of the bitmap */
#define CORR_BLOCK_BITS (CORR_BLOCK_WORDS * CORR_WORD_BITS)

/* The correlation of kernel i when the view looks it up, else TR_NO_ID. */
static int64_t kernel_corr(const an_trace_view *v, const tr_event *kev, size_t i) {
  return an_trace_view_kernel_stage(v, i) ? tr_event_correlation(v->trace, &kev[i]) : TR_NO_ID;
}

static void corr_range(const an_trace_view *v, launch_index *x) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  x->lo = INT64_MAX;
  x->hi = INT64_MIN;
  for (size_t i = 0; i < nk && i < v->n_kernel_events; i++) {
    int64_t corr = kernel_corr(v, kev, i);
    if (corr == TR_NO_ID) continue;
    if (corr < x->lo) x->lo = corr;
    if (corr > x->hi) x->hi = corr;
  }
}

/* Bits set in w (SWAR: the build targets no popcount instruction; a libgcc call per call
 * looked up would cost more than the lookup). */
static inline uint64_t bits_set(uint64_t w) {
  w -= (w >> 1) & 0x5555555555555555ull;
  w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
  return (((w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Full) * 0x0101010101010101ull) >> 56;
}

/* The word of the bitmap holding correlation offset d (SIZE_MAX: its block has no mark). */
static size_t corr_word(const launch_index *x, uint64_t d) {
  uint32_t b = x->block[d / CORR_BLOCK_BITS];
  return b ? (size_t)(b - 1) * CORR_BLOCK_WORDS + (size_t)(d % CORR_BLOCK_BITS / CORR_WORD_BITS)
           : SIZE_MAX;
}

/* The rank of correlation corr among the kernels' (bitmap), or -1 when no kernel has it. */
static int64_t corr_rank(const launch_index *x, int64_t corr) {
  if (corr == TR_NO_ID || corr < x->lo || corr > x->hi) return -1;
  uint64_t d = (uint64_t)corr - (uint64_t)x->lo;
  size_t w = corr_word(x, d);
  if (w == SIZE_MAX || !(x->bits[w] >> (d % CORR_WORD_BITS) & 1)) return -1;
  return x->rank[w] + (int64_t)bits_set(x->bits[w] & ((1ull << (d % CORR_WORD_BITS)) - 1));
}

static const tr_event *entry_event(const launch_index *x, uint32_t entry) {
  return entry < x->n0 ? &x->ev[0][entry] : &x->ev[1][entry - x->n0];
}

/* Numbers the blocks holding a kernel's correlation (x->block from 1 to its count, which
 * it returns). */
static size_t mark_blocks(const an_trace_view *v, launch_index *x) {
  size_t nk = 0, nb = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  for (size_t i = 0; i < nk && i < v->n_kernel_events; i++) {
    int64_t corr = kernel_corr(v, kev, i);
    if (corr != TR_NO_ID) x->block[((uint64_t)corr - (uint64_t)x->lo) / CORR_BLOCK_BITS] = 1;
  }
  for (size_t b = 0; b <= ((uint64_t)x->hi - (uint64_t)x->lo) / CORR_BLOCK_BITS; b++)
    if (x->block[b]) x->block[b] = (uint32_t)++nb;
  return nb;
}

/* The bitmap of the kernels' correlations and its ranks, when its blocks' index and words
 * take no more than the records of every call would (one block always may). 1: built, 0:
 * too spread (use the records), -1: out of memory. */
static int corr_bitmap(const an_trace_view *v, launch_index *x, uint64_t calls) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(v->trace, TR_KIND_KERNEL, &nk);
  const uint64_t block_bytes = CORR_BLOCK_WORDS * (sizeof *x->bits + sizeof *x->rank);
  uint64_t room = calls * sizeof(launch_ref) + block_bytes;
  if (x->lo > x->hi || calls >= UINT32_MAX || nk >= UINT32_MAX ||
      ((uint64_t)x->hi - (uint64_t)x->lo) / CORR_BLOCK_BITS >= room / sizeof *x->block)
    return 0;
  size_t n_top = (size_t)(((uint64_t)x->hi - (uint64_t)x->lo) / CORR_BLOCK_BITS + 1);
  if (!(x->block = calloc(n_top, sizeof *x->block))) return -1;
  size_t nb = mark_blocks(v, x);
  if (n_top * sizeof *x->block + nb * block_bytes > room) {
    free(x->block);
    x->block = NULL;
    return 0;
  }
  x->bits = calloc(nb * CORR_BLOCK_WORDS, sizeof *x->bits);
  x->rank = malloc(nb * CORR_BLOCK_WORDS * sizeof *x->rank);
  if (!x->bits || !x->rank) return -1;
  for (size_t i = 0; i < nk && i < v->n_kernel_events; i++) {
    int64_t corr = kernel_corr(v, kev, i);
    uint64_t d = (uint64_t)corr - (uint64_t)x->lo;
    if (corr != TR_NO_ID) x->bits[corr_word(x, d)] |= 1ull << (d % CORR_WORD_BITS);
  }
  uint32_t marks = 0;
  for (size_t w = 0; w < nb * CORR_BLOCK_WORDS; w++) {
    x->rank[w] = marks;
    marks += (uint32_t)bits_set(x->bits[w]);
  }
  return (x->first = calloc(marks ? marks : 1, sizeof *x->first)) ? 1 : -1;
}

/* Each kernel correlation's first call, in one pass over the calls. Launches come before
 * runtime calls in the pass, so a later call replaces an earlier one of the same
 * correlation only when it is earlier in the file. */
static void first_calls(const tr_trace *t, launch_index *x, const size_t n[2]) {
  for (size_t j = 0; j < 2; j++)
    for (size_t i = 0; i < n[j]; i++) {
      const tr_event *e = &x->ev[j][i];
      int64_t r = corr_rank(x, tr_event_correlation(t, e));
      if (r < 0) continue;
      uint32_t *slot = &x->first[r];
      if (!*slot || entry_event(x, *slot - 1)->index > e->index)
        *slot = (uint32_t)(j ? n[0] + i : i) + 1;
    }
}

/* The calls in the kernels' correlation range as records, sorted. false: out of memory. */
static bool launch_records(const tr_trace *t, launch_index *x, const size_t n[2]) {
  x->v = malloc((n[0] + n[1] + 1) * sizeof *x->v);
  if (!x->v) return false;
  for (size_t j = 0; j < 2; j++)
    for (size_t i = 0; i < n[j]; i++) {
      int64_t corr = tr_event_correlation(t, &x->ev[j][i]);
      if (corr != TR_NO_ID && corr >= x->lo && corr <= x->hi)
        x->v[x->n++] = (launch_ref){corr, &x->ev[j][i]};
    }
  ut_sort(x->v, x->n, sizeof *x->v, cmp_launch, NULL);
  return true;
}

/* false: out of memory. */
static bool launch_index_build(const an_trace_view *v, launch_index *x) {
  static const tr_kind kinds[] = {TR_KIND_LAUNCH, TR_KIND_RUNTIME};
  size_t n[2];
  memset(x, 0, sizeof *x);
  for (size_t j = 0; j < 2; j++) x->ev[j] = tr_trace_events(v->trace, kinds[j], &n[j]);
  x->n0 = n[0];
  corr_range(v, x);
  int bitmap = corr_bitmap(v, x, (uint64_t)n[0] + n[1]);
  if (bitmap > 0) first_calls(v->trace, x, n);
  return bitmap ? bitmap > 0 : launch_records(v->trace, x, n);
}

static void launch_index_free(launch_index *x) {
  free(x->block);
  free(x->bits);
  free(x->rank);
  free(x->first);
  free(x->v);
}

/* The entry of a call of the index (a launch or runtime call of its trace). */
static uint32_t entry_of_call(const launch_index *x, const tr_event *call) {
  size_t n0 = x->n0;
  return (uint32_t)(call >= x->ev[0] && call < x->ev[0] + n0 ? (size_t)(call - x->ev[0])
                                                             : n0 + (size_t)(call - x->ev[1]));
}

static const tr_event *launch_of(const launch_index *x, int64_t corr) {
  if (x->block) {
    int64_t r = corr_rank(x, corr);
    return r >= 0 && x->first[r] ? entry_event(x, x->first[r] - 1) : NULL;
  }
  size_t at;
  if (corr == TR_NO_ID) return NULL;
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

/* The launch call of each kernel of the view's process (out->launch_at, out->n_kernel_events,
 * out->kernel_step allocated); *found: how many have one. */
static bool find_launches(const an_trace_view *v, an_steps *out, size_t *found) {
  const tr_trace *t = v->trace;
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(t, TR_KIND_KERNEL, &nk);
  launch_index li;
  bool ok = launch_index_build(v, &li);
  out->n_kernel_events = nk;
  out->kernel_step = malloc((nk ? nk : 1) * sizeof *out->kernel_step);
  out->launch_at = calloc(nk ? nk : 1, sizeof *out->launch_at);
  ok = ok && out->kernel_step && out->launch_at;
  out->calls[0] = li.ev[0];
  out->calls[1] = li.ev[1];
  out->n_launches = li.n0;
  *found = 0;
  for (size_t i = 0; ok && i < nk && i < v->n_kernel_events; i++) {
    const tr_event *call =
        an_trace_view_kernel_stage(v, i) ? launch_of(&li, tr_event_correlation(t, &kev[i])) : NULL;
    if (!call) continue;
    out->launch_at[i] = entry_of_call(&li, call) + 1u;
    ++*found;
  }
  launch_index_free(&li);
  return ok;
}

long an_steps_launched_step(const an_steps *s, const tr_trace *t, size_t i) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(t, TR_KIND_KERNEL, &nk);
  const tr_event *launch = an_steps_launch(s, i);
  if (!s->n || i >= nk || (s->by_launch && !launch)) return -1;
  double at = tr_event_ts(t, launch ? launch : &kev[i]);
  size_t a; /* the first step starting after at */
  UT_PARTITION_POINT(a, 0, s->n, j, s->steps[j].cpu_ts <= at);
  return a && at < s->steps[a - 1].cpu_end ? (long)a - 1 : -1;
}

/* Whether CPU-window steps take kernels by their launch call: the trace records launches
 * (GPU windows place a kernel where it starts). */
static bool by_launch(an_step_source src, size_t found) {
  return src != AN_STEPS_GPU_ANNOTATION && found > 0;
}

/* The time that places kernel i among step spans: its launch call's start by launch, else
 * its own start. */
static double placed_at(const tr_trace *t, const an_steps *s, const tr_event *kev, size_t i,
                        bool launch) {
  const tr_event *call = launch ? an_steps_launch(s, i) : NULL;
  return tr_event_ts(t, call ? call : &kev[i]);
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
    if (!an_trace_view_kernel_stage(v, i)) continue;
    double dur = tr_event_dur(v->trace, &kev[i]);
    *total += dur > 0 ? dur : 0;
    if (span_at(&c->l, placed_at(v->trace, s, kev, i, launch)) >= 0) in += dur > 0 ? dur : 0;
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
    if (!an_trace_view_kernel_stage(v, i) || (launch && !an_steps_launch(out, i))) continue;
    out->kernel_step[i] = span_at(l, placed_at(v->trace, out, kev, i, launch));
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
    if (!an_trace_view_kernel_stage(v, i)) continue;
    const tr_event *call = an_steps_launch(out, i);
    double at = tr_event_ts(v->trace, call ? call : &kev[i]);
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
    while (slot < n_st && te_rules_stage(rules, slot)->id != an_trace_view_kernel_stage(v, i))
      slot++;
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
    double dur = tr_event_dur(v->trace, &kev[i]),
           end = tr_event_ts(v->trace, &kev[i]) + (dur > 0 ? dur : 0);
    if (!st->n_kernels || tr_event_ts(v->trace, &kev[i]) < st->gpu_ts)
      st->gpu_ts = tr_event_ts(v->trace, &kev[i]);
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
    if (s->kernel_step[i] != -1 || an_steps_launch(s, i) || !an_trace_view_kernel_stage(v, i))
      continue;
    size_t a; /* past the last window starting at or before the kernel */
    UT_PARTITION_POINT(a, 0, m, k, s->steps[by[k]].gpu_ts <= tr_event_ts(v->trace, &kev[i]));
    if (a && tr_event_ts(v->trace, &kev[i]) < s->steps[by[a - 1]].gpu_end) {
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
      s->kernel_step[i] = an_trace_view_kernel_stage(v, i)
                              ? gpu_window_at(lo, hi, step, m, tr_event_ts(v->trace, &kev[i]))
                              : -1;
  if (ok) reset_counts(s);
  for (size_t q = 0; ok && q + 1 < m; q++) s->steps[step[q]].window_end = lo[q + 1];
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
    double med = ut_median_f64(w, m);
    s->steps[j].warmup = med > 0 && s->steps[j].gpu_end - s->steps[j].gpu_ts >= ratio * med;
  }
  free(w);
}

/* The step (index) whose marker holds time ts, or -1 (steps by CPU start, disjoint). */
static long step_at(const an_steps *s, double ts) {
  size_t j; /* the first step starting after ts */
  UT_PARTITION_POINT(j, 0, s->n, m, s->steps[m].cpu_ts <= ts);
  return j && ts < s->steps[j - 1].cpu_end ? (long)j - 1 : -1;
}

/* Of each step holding a nested marker of its kind: the longest user annotation inside it
 * but outside that nested one (the harness's work around the measured one: PARAM's
 * [param|clear_cache], 43 ms of hta_alexnet's 79.7 ms outer measure|forward; review 15
 * defect 2), and whether every kernel of the step was launched inside the nested one. */
static void nested_other(const an_trace_view *v, an_steps *s) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(v->trace, TR_KIND_USER_ANNOTATION, &n);
  for (size_t j = 0; j < s->n; j++) s->steps[j].nested_launches_all = s->steps[j].nested > 0;
  for (size_t i = 0; i < n; i++) {
    double ts = tr_event_ts(v->trace, &ev[i]), end = ts + tr_event_dur(v->trace, &ev[i]);
    long j = step_at(s, ts);
    if (j < 0 || !s->steps[j].nested) continue;
    an_step *st = &s->steps[j];
    double in0 = st->nested_ts, in1 = st->nested_ts + st->nested_us;
    if (end > st->cpu_end) end = st->cpu_end;
    if ((ts == st->cpu_ts && end == st->cpu_end) || (ts < in1 && end > in0) ||
        !strcmp(tr_str_get(v->trace, ev[i].name), st->name)) /* the step, a marker of its kind */
      continue;
    if (end - ts > st->other_us) {
      st->other_us = end - ts;
      st->other = tr_str_get(v->trace, ev[i].name);
    }
  }
  for (size_t i = 0; i < s->n_kernel_events; i++) {
    int32_t j = s->kernel_step ? s->kernel_step[i] : -1;
    const tr_event *L = j >= 0 && (size_t)j < s->n ? an_steps_launch(s, i) : NULL;
    if (!L || !s->steps[j].nested) continue;
    double at = tr_event_ts(v->trace, L);
    if (at < s->steps[j].nested_ts || at >= s->steps[j].nested_ts + s->steps[j].nested_us)
      s->steps[j].nested_launches_all = false;
  }
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
  out->by_launch = launch;
  ok = ok && out->steps;
  if (ok) assign_kernels(v, &l, launch, out);
  ok = ok && mark_setup(v, rules, l.n ? l.v[0].ts : INFINITY, out);
  out->n = ok ? l.n : 0;
  for (size_t j = 0; j < out->n; j++) {
    out->steps[j].name = tr_str_get(v->trace, l.v[j].name);
    out->steps[j].cpu_ts = l.v[j].ts;
    out->steps[j].cpu_end = l.v[j].end;
    out->steps[j].window_end = INFINITY;
    out->steps[j].nested = l.v[j].nested;
    out->steps[j].nested_us = l.v[j].nested_us;
    out->steps[j].nested_ts = l.v[j].nested_ts;
  }
  free_candidates(c, n_c);
  if (ok) {
    step_windows(v, out);
    for (size_t j = 0; j < out->n; j++) out->steps[j].launched_us = out->steps[j].kernel_us;
    if (launch && (out->placed_by_gpu_time = place_unlinked(v, out))) {
      reset_counts(out);
      step_windows(v, out);
    }
    if ((out->cut_windows = disjoint_windows(v, out))) step_windows(v, out);
    ok = step_stages(v, rules, out);
  }
  if (ok) drop_empty(out);
  if (ok) nested_other(v, out);
  if (ok) mark_warmups(out, te_rules_settings(rules)->steps_warmup_ratio);
  if (ok && !out->n) out->source = AN_STEPS_NONE;
  if (!ok) an_steps_free(out);
  return ok ? AN_OK : AN_ERR_NOMEM;
}

void an_steps_free(an_steps *s) {
  free(s->steps);
  free(s->kernel_step);
  free(s->launch_at);
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
