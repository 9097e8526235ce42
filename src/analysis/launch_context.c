/*
 * analysis/launch_context.c - the CPU ops and regions around a kernel's launch and its
 * pack-defined context family (launch_context.h).
 *
 * Events are mostly in time and id order, so per block of 64 runtime calls, launches, CPU
 * ops and regions in file order the least and greatest correlation, or the earliest start
 * and latest end, let a question read the few blocks that can answer instead of every
 * event (a few questions per overlap row were 2 % of a 468 MB cpu_op-heavy run). Without
 * the summaries (out of memory) every block is read: the plain scan, same answers.
 */
#include "analysis/launch_context.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage/settings.h"

struct an_launch_context {
  const tr_trace *t;
  const te_rules *r;
  bool built;                          /* summaries tried (they may still be NULL) */
  int64_t *runtime_corr, *launch_corr; /* per block: least, greatest correlation */
  double *op_span;                     /* CPU ops per block: earliest start, latest end */
  double *region_span;                 /* record_function regions, the same */
};

/* Whether CPU op o spans call's start on call's thread (cc) and m matches its name, which
 * then goes to hit. Time first: few ops span the call, so the context is rarely read. */
static bool lc_op_around(const tr_trace *t, const tr_event *o, const tr_event *call,
                         const tr_event_ctx *cc, const te_matcher *m, char *hit, size_t cap) {
  if (o->ts > call->ts || o->ts + tr_event_dur(t, o) < call->ts) return false;
  const tr_event_ctx *oc = tr_trace_ctx(t, o);
  if (oc->pid != cc->pid || oc->tid != cc->tid) return false;
  const char *nm = tr_str_get(t, o->name);
  if (!te_matcher_match(m, nm, strlen(nm))) return false;
  if (hit && cap) snprintf(hit, cap, "%s", nm);
  return true;
}

#define LC_BLOCK 64u

static size_t lc_blocks(size_t n) { return (n + LC_BLOCK - 1) / LC_BLOCK; }

static size_t lc_block_end(size_t k, size_t n) {
  return (k + 1) * LC_BLOCK < n ? (k + 1) * LC_BLOCK : n;
}

/* Per block of the kind's events in file order: the least and greatest correlation
 * (none: an empty interval, INT64_MAX then INT64_MIN). NULL when out of memory. */
static int64_t *lc_corr_blocks(const tr_trace *t, tr_kind kind) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  size_t nb = lc_blocks(n);
  int64_t *b = malloc((nb ? nb : 1) * 2 * sizeof *b);
  if (!b) return NULL;
  for (size_t k = 0; k < nb; k++) {
    b[2 * k] = INT64_MAX;
    b[2 * k + 1] = INT64_MIN;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t c = tr_event_correlation(t, &ev[i]);
    if (c == TR_NO_ID) continue;
    int64_t *lo = &b[2 * (i / LC_BLOCK)], *hi = lo + 1;
    if (c < *lo) *lo = c;
    if (c > *hi) *hi = c;
  }
  return b;
}

/* Per block of the kind's events in file order: the earliest start and the latest end.
 * NULL when out of memory. */
static double *lc_span_blocks(const tr_trace *t, tr_kind kind) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  double *b = malloc((lc_blocks(n) ? lc_blocks(n) : 1) * 2 * sizeof *b);
  if (!b) return NULL;
  for (size_t i = 0; i < n; i++) {
    double *span = &b[2 * (i / LC_BLOCK)];
    double end = ev[i].ts + tr_event_dur(t, &ev[i]); /* the sum the question compares */
    if (i % LC_BLOCK == 0 || ev[i].ts < span[0]) span[0] = ev[i].ts;
    if (i % LC_BLOCK == 0 || end > span[1]) span[1] = end;
  }
  return b;
}

/* The first event of the kind in file order with correlation corr, or NULL, reading only
 * the blocks whose interval holds corr (every block without summaries). */
static const tr_event *lc_first_with(const tr_trace *t, tr_kind kind, const int64_t *blocks,
                                     int64_t corr) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  for (size_t k = 0; k < lc_blocks(n); k++) {
    if (blocks && (corr < blocks[2 * k] || corr > blocks[2 * k + 1])) continue;
    for (size_t i = k * LC_BLOCK; i < lc_block_end(k, n); i++)
      if (tr_event_correlation(t, &ev[i]) == corr) return &ev[i];
  }
  return NULL;
}

/* Whether an event of the kind (CPU ops or record_function regions) encloses call and
 * m matches it, reading only the blocks whose span holds call's start (every block
 * without summaries). */
static bool lc_kind_around(const tr_trace *t, tr_kind kind, const double *spans,
                           const tr_event *call, const te_matcher *m, char *hit, size_t cap) {
  size_t n = 0;
  const tr_event *ops = tr_trace_events(t, kind, &n);
  const tr_event_ctx *cc = tr_trace_ctx(t, call);
  for (size_t k = 0; k < lc_blocks(n); k++) {
    const double *span = spans ? &spans[2 * k] : NULL;
    if (span && (span[0] > call->ts || span[1] < call->ts)) continue;
    for (size_t i = k * LC_BLOCK; i < lc_block_end(k, n); i++)
      if (lc_op_around(t, &ops[i], call, cc, m, hit, cap)) return true;
  }
  return false;
}

an_launch_context *an_launch_context_create(const tr_trace *t, const te_rules *r) {
  an_launch_context *x = calloc(1, sizeof *x);
  if (x) *x = (an_launch_context){.t = t, .r = r};
  return x;
}

static void lc_summaries_free(an_launch_context *x) {
  free(x->runtime_corr);
  free(x->launch_corr);
  free(x->op_span);
  free(x->region_span);
  x->runtime_corr = x->launch_corr = NULL;
  x->op_span = x->region_span = NULL;
}

void an_launch_context_destroy(an_launch_context *x) {
  if (!x) return;
  lc_summaries_free(x);
  free(x);
}

/* Built on the first question; without memory for all four, none (every block is read). */
static void lc_summaries(an_launch_context *x) {
  if (x->built) return;
  x->built = true;
  x->runtime_corr = lc_corr_blocks(x->t, TR_KIND_RUNTIME);
  x->launch_corr = lc_corr_blocks(x->t, TR_KIND_LAUNCH);
  x->op_span = lc_span_blocks(x->t, TR_KIND_CPU_OP);
  x->region_span = lc_span_blocks(x->t, TR_KIND_USER_ANNOTATION);
  if (!x->runtime_corr || !x->launch_corr || !x->op_span || !x->region_span) lc_summaries_free(x);
}

/* The host call that launched kernel event e (runtime calls first, then launches), or
 * NULL. */
static const tr_event *lc_call(an_launch_context *x, const tr_event *e) {
  int64_t corr = tr_event_correlation(x->t, e);
  if (corr == TR_NO_ID) return NULL;
  lc_summaries(x);
  const tr_event *call = lc_first_with(x->t, TR_KIND_RUNTIME, x->runtime_corr, corr);
  return call ? call : lc_first_with(x->t, TR_KIND_LAUNCH, x->launch_corr, corr);
}

/* The CPU ops, then the record_function regions around call, each in file order. */
static bool lc_around(const an_launch_context *x, const tr_event *call, const te_matcher *m,
                      char *hit, size_t cap) {
  return lc_kind_around(x->t, TR_KIND_CPU_OP, x->op_span, call, m, hit, cap) ||
         lc_kind_around(x->t, TR_KIND_USER_ANNOTATION, x->region_span, call, m, hit, cap);
}

bool an_launch_context_match(an_launch_context *x, const tr_event *e, const te_matcher *m,
                             char *hit, size_t cap) {
  if (!x || !m) return false;
  const tr_event *call = lc_call(x, e);
  return call && lc_around(x, call, m, hit, cap);
}

long an_launch_context_of(an_launch_context *x, const tr_event *e, const char *category, char *hit,
                          size_t cap) {
  if (!x) return -1;
  const te_settings *set = te_rules_settings(x->r);
  const te_string_list *rules = &set->overlap_dependency_context_rules;
  const char *name = tr_str_get(x->t, e->name);
  const tr_event *call = NULL;
  bool looked = false;
  char mname[128];
  for (size_t i = 0; i < rules->n; i++) {
    const te_string_list *cats =
        te_list_map_get(&set->overlap_dependency_rule_categories, rules->items[i]);
    if (category && cats && !te_string_list_has(cats, category)) continue;
    snprintf(mname, sizeof mname, "dep_%s", rules->items[i]);
    const te_matcher *m = te_rules_matcher(x->r, mname);
    if (!m) continue;
    if (te_matcher_match(m, name, strlen(name))) {
      if (hit && cap) snprintf(hit, cap, "%s", name);
      return (long)i;
    }
    if (!looked) call = lc_call(x, e), looked = true; /* one lookup for every rule */
    if (call && lc_around(x, call, m, hit, cap)) return (long)i;
  }
  return -1;
}

const char *an_launch_context_rule(const an_launch_context *x, long idx) {
  const te_string_list *rules = &te_rules_settings(x->r)->overlap_dependency_context_rules;
  return idx >= 0 && (size_t)idx < rules->n ? rules->items[idx] : NULL;
}

const char *an_launch_context_label(const an_launch_context *x, long idx) {
  const char *id = an_launch_context_rule(x, idx);
  const te_string_list *l =
      id ? te_list_map_get(&te_rules_settings(x->r)->overlap_dependency_context_labels, id) : NULL;
  return l && l->n ? l->items[0] : NULL;
}
