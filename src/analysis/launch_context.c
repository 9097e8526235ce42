/*
 * analysis/launch_context.c - the CPU ops and regions around a kernel's launch and its
 * pack-defined context family (launch_context.h).
 *
 * Events are mostly in time and id order, so per block of 64 runtime calls, launches, CPU
 * ops and regions in file order the least and greatest correlation, or the earliest start
 * and latest end, let a question read the few blocks that can answer instead of every
 * event (a few questions per overlap row were 2 % of a 468 MB cpu_op-heavy run). The
 * block intervals are the leaves of a tree whose nodes merge two below, so a question
 * descends only where its correlation or time can be, instead of testing every block's
 * interval (the test of every block, 16 bytes of summary per 64 events, was still 4 % of
 * that run: the time account asks about every collective instance). Without the
 * summaries (out of memory) every block is read: the plain scan, same answers.
 */
#include "analysis/launch_context.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage/settings.h"
#include "util/map.h"
#include "util/vec.h"

#define LC_BLOCK 64u
/* levels of a tree of 2^(bits of size_t) leaves: more blocks than memory holds */
#define LC_MAX_LEVELS (CHAR_BIT * sizeof(size_t))

/* Intervals [lo, hi] of keys: per block of events in file order (level 0), then per two
 * nodes of the level below, up to one node. An empty interval is lo > hi. iv NULL: no
 * summaries (every block is read). */
typedef struct lc_tree {
  int64_t *iv; /* 2 per node (lo, hi), level after level from level 0 */
  size_t n_levels;
  size_t off[LC_MAX_LEVELS], len[LC_MAX_LEVELS]; /* per level: first node, node count */
} lc_tree;

/* One answer of an_launch_context_of: the family, and the event whose name matched (the
 * kernel, or the op or region around its launch), NULL with family -1. */
typedef struct lc_answer {
  long family;
  const tr_event *hit;
} lc_answer;

struct an_launch_context {
  const tr_trace *t;
  const te_rules *r;
  bool built;                        /* summaries tried (they may still be absent) */
  lc_tree runtime_corr, launch_corr; /* correlations of runtime calls, of launches */
  lc_tree op_span, region_span;      /* starts and ends of CPU ops, of regions */
  /* an_launch_context_of's answers (the time account, the overlap table and the Ranks
   * summary ask about the same collectives): key (event index << 32 | category index + 1,
   * 0 for none) -> index in answers */
  ut_u64map memo;
  lc_answer *answers;
  size_t n_answers, cap_answers;
  ut_strmap cats; /* the categories asked with */
  /* scratch: the CPU ops, then the regions, around one launch call, in file order */
  const tr_event **around;
  size_t n_around, cap_around;
};

/* Whether CPU op o spans call's start on call's thread (cc) and m matches its name. Time
 * first: few ops span the call, so the context is rarely read. */
static bool lc_op_around(const tr_trace *t, const tr_event *o, const tr_event *call,
                         const tr_event_ctx *cc, const te_matcher *m) {
  double o_ts = tr_event_ts(t, o), at = tr_event_ts(t, call);
  if (o_ts > at || o_ts + tr_event_dur(t, o) < at) return false;
  const tr_event_ctx *oc = tr_trace_ctx(t, o);
  if (oc->pid != cc->pid || oc->tid != cc->tid) return false;
  const char *nm = tr_str_get(t, o->name);
  return te_matcher_match(m, nm, strlen(nm));
}

static size_t lc_blocks(size_t n) { return (n + LC_BLOCK - 1) / LC_BLOCK; }

static size_t lc_block_end(size_t k, size_t n) {
  return (k + 1) * LC_BLOCK < n ? (k + 1) * LC_BLOCK : n;
}

/* A key ordered as the double x is among doubles (no NaN in a trace; -0.0 is 0.0), so one
 * tree holds correlations and times. */
static int64_t lc_time_key(double x) {
  double y = x + 0.0; /* -0.0 + 0.0 is +0.0 */
  int64_t bits;
  memcpy(&bits, &y, sizeof bits);
  return bits >= 0 ? bits : bits ^ INT64_MAX;
}

/* The tree over n events' blocks, level 0 empty intervals; false when out of memory. */
static bool lc_tree_alloc(lc_tree *tr, size_t n) {
  size_t nb = lc_blocks(n) ? lc_blocks(n) : 1, nodes = 0;
  memset(tr, 0, sizeof *tr);
  for (size_t len = nb;; len = (len + 1) / 2) {
    tr->off[tr->n_levels] = nodes;
    tr->len[tr->n_levels++] = len;
    nodes += len;
    if (len == 1) break;
  }
  if (!(tr->iv = malloc(nodes * 2 * sizeof *tr->iv))) return false;
  for (size_t k = 0; k < nb; k++) {
    tr->iv[2 * k] = INT64_MAX;
    tr->iv[2 * k + 1] = INT64_MIN;
  }
  return true;
}

static void lc_tree_widen(int64_t *iv, int64_t lo, int64_t hi) {
  if (lo < iv[0]) iv[0] = lo;
  if (hi > iv[1]) iv[1] = hi;
}

/* The levels above 0, each node the union of its two below. */
static void lc_tree_merge(lc_tree *tr) {
  for (size_t l = 1; l < tr->n_levels; l++)
    for (size_t j = 0; j < tr->len[l]; j++) {
      int64_t *iv = &tr->iv[2 * (tr->off[l] + j)];
      const int64_t *below = &tr->iv[2 * (tr->off[l - 1] + 2 * j)];
      iv[0] = below[0];
      iv[1] = below[1];
      if (2 * j + 1 < tr->len[l - 1]) lc_tree_widen(iv, below[2], below[3]);
    }
}

/* Per block of the kind's events in file order: the least and greatest correlation.
 * false when out of memory. */
static bool lc_corr_tree(const tr_trace *t, tr_kind kind, lc_tree *tr) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  if (!lc_tree_alloc(tr, n)) return false;
  for (size_t i = 0; i < n; i++) {
    int64_t c = tr_event_correlation(t, &ev[i]);
    if (c != TR_NO_ID) lc_tree_widen(&tr->iv[2 * (i / LC_BLOCK)], c, c);
  }
  lc_tree_merge(tr);
  return true;
}

/* Per block of the kind's events in file order: the earliest start and the latest end.
 * false when out of memory. */
static bool lc_span_tree(const tr_trace *t, tr_kind kind, lc_tree *tr) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(t, kind, &n);
  if (!lc_tree_alloc(tr, n)) return false;
  for (size_t i = 0; i < n; i++) {
    double end =
        tr_event_ts(t, &ev[i]) + tr_event_dur(t, &ev[i]); /* the sum the question compares */
    lc_tree_widen(&tr->iv[2 * (i / LC_BLOCK)], lc_time_key(tr_event_ts(t, &ev[i])),
                  lc_time_key(end));
  }
  lc_tree_merge(tr);
  return true;
}

/* What a question does with a block that may hold its answer: true ends the search. */
typedef bool (*lc_block_fn)(size_t block, void *q);

static bool lc_tree_descend(const lc_tree *tr, size_t level, size_t node, int64_t key,
                            lc_block_fn f, void *q) {
  const int64_t *iv = &tr->iv[2 * (tr->off[level] + node)];
  if (key < iv[0] || key > iv[1]) return false;
  if (level == 0) return f(node, q);
  for (size_t c = 2 * node; c < 2 * node + 2 && c < tr->len[level - 1]; c++)
    if (lc_tree_descend(tr, level - 1, c, key, f, q)) return true;
  return false;
}

/* f on the blocks of n events whose interval holds key, in file order, until it returns
 * true (every block without summaries); whether one did. */
static bool lc_blocks_holding(const lc_tree *tr, size_t n, int64_t key, lc_block_fn f, void *q) {
  if (tr->iv) return n && lc_tree_descend(tr, tr->n_levels - 1, 0, key, f, q);
  for (size_t k = 0; k < lc_blocks(n); k++)
    if (f(k, q)) return true;
  return false;
}

/* A question about one kind's events: the first with a correlation, or around a call. */
typedef struct lc_question {
  const tr_trace *t;
  const tr_event *ev;
  size_t n;
  int64_t corr;         /* lc_first_with */
  const tr_event *call; /* lc_kind_around: the call, its context, the matcher */
  const tr_event_ctx *cc;
  const te_matcher *m;
  const tr_event *found;
} lc_question;

static bool lc_block_with_corr(size_t k, void *q) {
  lc_question *x = q;
  for (size_t i = k * LC_BLOCK; i < lc_block_end(k, x->n); i++)
    if (tr_event_correlation(x->t, &x->ev[i]) == x->corr) return (x->found = &x->ev[i]) != NULL;
  return false;
}

static bool lc_block_around(size_t k, void *q) {
  lc_question *x = q;
  for (size_t i = k * LC_BLOCK; i < lc_block_end(k, x->n); i++)
    if (lc_op_around(x->t, &x->ev[i], x->call, x->cc, x->m)) return (x->found = &x->ev[i]) != NULL;
  return false;
}

/* The first event of the kind in file order with correlation corr, or NULL, reading only
 * the blocks whose interval holds corr. */
static const tr_event *lc_first_with(const tr_trace *t, tr_kind kind, const lc_tree *tr,
                                     int64_t corr) {
  lc_question q = {.t = t, .corr = corr};
  q.ev = tr_trace_events(t, kind, &q.n);
  return lc_blocks_holding(tr, q.n, corr, lc_block_with_corr, &q) ? q.found : NULL;
}

/* The first event of the kind (CPU ops or record_function regions) in file order that
 * encloses call and m matches, reading only the blocks whose span holds call's start; NULL
 * when none. */
static const tr_event *lc_kind_around(const tr_trace *t, tr_kind kind, const lc_tree *tr,
                                      const tr_event *call, const te_matcher *m) {
  lc_question q = {.t = t, .call = call, .cc = tr_trace_ctx(t, call), .m = m};
  q.ev = tr_trace_events(t, kind, &q.n);
  return lc_blocks_holding(tr, q.n, lc_time_key(tr_event_ts(t, call)), lc_block_around, &q)
             ? q.found
             : NULL;
}

an_launch_context *an_launch_context_create(const tr_trace *t, const te_rules *r) {
  an_launch_context *x = calloc(1, sizeof *x);
  if (x) *x = (an_launch_context){.t = t, .r = r};
  return x;
}

static void lc_summaries_free(an_launch_context *x) {
  lc_tree *trees[] = {&x->runtime_corr, &x->launch_corr, &x->op_span, &x->region_span};
  for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
    free(trees[i]->iv);
    trees[i]->iv = NULL;
  }
}

void an_launch_context_destroy(an_launch_context *x) {
  if (!x) return;
  lc_summaries_free(x);
  ut_u64map_free(&x->memo);
  free(x->answers);
  ut_strmap_free(&x->cats);
  free(x->around);
  free(x);
}

/* Built on the first question; without memory for all four, none (every block is read). */
static void lc_summaries(an_launch_context *x) {
  if (x->built) return;
  x->built = true;
  if (!lc_corr_tree(x->t, TR_KIND_RUNTIME, &x->runtime_corr) ||
      !lc_corr_tree(x->t, TR_KIND_LAUNCH, &x->launch_corr) ||
      !lc_span_tree(x->t, TR_KIND_CPU_OP, &x->op_span) ||
      !lc_span_tree(x->t, TR_KIND_USER_ANNOTATION, &x->region_span))
    lc_summaries_free(x);
}

/* The host call that launched kernel event e (runtime calls first, then launches), or
 * NULL. */
static const tr_event *lc_call(an_launch_context *x, const tr_event *e) {
  int64_t corr = tr_event_correlation(x->t, e);
  if (corr == TR_NO_ID) return NULL;
  lc_summaries(x);
  const tr_event *call = lc_first_with(x->t, TR_KIND_RUNTIME, &x->runtime_corr, corr);
  return call ? call : lc_first_with(x->t, TR_KIND_LAUNCH, &x->launch_corr, corr);
}

/* The first of the CPU ops, then of the record_function regions around call, each in file
 * order, that m matches; NULL when none. */
static const tr_event *lc_around(const an_launch_context *x, const tr_event *call,
                                 const te_matcher *m) {
  const tr_event *op = lc_kind_around(x->t, TR_KIND_CPU_OP, &x->op_span, call, m);
  return op ? op : lc_kind_around(x->t, TR_KIND_USER_ANNOTATION, &x->region_span, call, m);
}

bool an_launch_context_match(an_launch_context *x, const tr_event *e, const te_matcher *m,
                             char *hit, size_t cap) {
  if (!x || !m) return false;
  const tr_event *call = lc_call(x, e);
  const tr_event *found = call ? lc_around(x, call, m) : NULL;
  if (found && hit && cap) snprintf(hit, cap, "%s", tr_str_get(x->t, found->name));
  return found != NULL;
}

/* A question gathering every event of a kind around a call (lc_gather). */
typedef struct lc_gathering {
  lc_question q;
  an_launch_context *x;
  bool nomem;
} lc_gathering;

static bool lc_block_gather(size_t k, void *q) {
  lc_gathering *g = q;
  lc_question *x = &g->q;
  for (size_t i = k * LC_BLOCK; i < lc_block_end(k, x->n); i++) {
    const tr_event *o = &x->ev[i];
    double o_ts = tr_event_ts(x->t, o), at = tr_event_ts(x->t, x->call);
    if (o_ts > at || o_ts + tr_event_dur(x->t, o) < at) continue;
    const tr_event_ctx *oc = tr_trace_ctx(x->t, o);
    if (oc->pid != x->cc->pid || oc->tid != x->cc->tid) continue;
    an_launch_context *c = g->x;
    const tr_event **v = ut_grow(c->around, &c->cap_around, c->n_around + 1, sizeof *v);
    if (!v) return g->nomem = true; /* stops the descent */
    c->around = v;
    c->around[c->n_around++] = o;
  }
  return false; /* every block holding the call's start */
}

/* x->around: the CPU ops, then the regions, around call on its thread, each in file order
 * (the order lc_around tries them in). False when out of memory. */
static bool lc_gather(an_launch_context *x, const tr_event *call) {
  static const tr_kind kinds[] = {TR_KIND_CPU_OP, TR_KIND_USER_ANNOTATION};
  const lc_tree *trees[] = {&x->op_span, &x->region_span};
  x->n_around = 0;
  for (size_t k = 0; k < 2; k++) {
    lc_gathering g = {.q = {.t = x->t, .call = call, .cc = tr_trace_ctx(x->t, call)}, .x = x};
    g.q.ev = tr_trace_events(x->t, kinds[k], &g.q.n);
    lc_blocks_holding(trees[k], g.q.n, lc_time_key(tr_event_ts(x->t, call)), lc_block_gather, &g);
    if (g.nomem) return false;
  }
  return true;
}

/* The first of x->around that m names, or NULL. */
static const tr_event *lc_around_named(const an_launch_context *x, const te_matcher *m) {
  for (size_t i = 0; i < x->n_around; i++) {
    const char *nm = tr_str_get(x->t, x->around[i]->name);
    if (te_matcher_match(m, nm, strlen(nm))) return x->around[i];
  }
  return NULL;
}

/* an_launch_context_of without the memo. The ops and regions around the launch are gathered
 * once for every rule (each rule read the blocks again); out of memory, each rule asks
 * lc_around as before. */
static lc_answer lc_family(an_launch_context *x, const tr_event *e, const char *category) {
  const te_settings *set = te_rules_settings(x->r);
  const te_string_list *rules = &set->overlap_dependency_context_rules;
  const char *name = tr_str_get(x->t, e->name);
  const tr_event *call = NULL;
  bool looked = false, gathered = false;
  char mname[128];
  for (size_t i = 0; i < rules->n; i++) {
    const te_string_list *cats =
        te_list_map_get(&set->overlap_dependency_rule_categories, rules->items[i]);
    if (category && cats && !te_string_list_has(cats, category)) continue;
    snprintf(mname, sizeof mname, "dep_%s", rules->items[i]);
    const te_matcher *m = te_rules_matcher(x->r, mname);
    if (!m) continue;
    if (te_matcher_match(m, name, strlen(name))) return (lc_answer){(long)i, e};
    if (!looked) { /* one lookup for every rule */
      call = lc_call(x, e), looked = true;
      gathered = call && lc_gather(x, call);
    }
    if (!call) continue;
    const tr_event *found = gathered ? lc_around_named(x, m) : lc_around(x, call, m);
    if (found) return (lc_answer){(long)i, found};
  }
  return (lc_answer){-1, NULL};
}
/* The memo key of (e, category); false when out of memory (the answer is then not
 * remembered). */
static bool lc_memo_key(an_launch_context *x, const tr_event *e, const char *category,
                        uint64_t *key) {
  long cat = category ? ut_strmap_put(&x->cats, category, strlen(category)) : -1;
  if (category && cat < 0) return false;
  *key = (uint64_t)e->index << 32 | (uint64_t)(cat + 1);
  return true;
}

/* Remembers answer a under key (not remembered when out of memory: asked again). */
static void lc_remember(an_launch_context *x, uint64_t key, lc_answer a) {
  lc_answer *v = ut_grow(x->answers, &x->cap_answers, x->n_answers + 1, sizeof *v);
  if (!v) return;
  x->answers = v;
  if (!ut_u64map_put(&x->memo, key, x->n_answers)) return;
  x->answers[x->n_answers++] = a;
}

long an_launch_context_of(an_launch_context *x, const tr_event *e, const char *category, char *hit,
                          size_t cap) {
  if (!x) return -1;
  uint64_t key = 0, at;
  bool keyed = lc_memo_key(x, e, category, &key);
  lc_answer a;
  if (keyed && ut_u64map_get(&x->memo, key, &at)) {
    a = x->answers[at];
  } else {
    a = lc_family(x, e, category);
    if (keyed) lc_remember(x, key, a);
  }
  if (a.hit && hit && cap) snprintf(hit, cap, "%s", tr_str_get(x->t, a.hit->name));
  return a.family;
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
