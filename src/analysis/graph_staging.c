/* analysis/graph_staging.c - see graph_staging.h. */
#include "analysis/graph_staging.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/id_index.h"
#include "analysis/op_nest.h"
#include "util/vec.h"

typedef struct staging_ctx {
  const tr_trace *t;
  const te_matcher *graph; /* graph_replay_launch */
  const an_trace_view *v;
  const an_op_nest *nest;   /* the view's (an_trace_view_ops), asked at the first graph launch */
  const tr_event **holders; /* the CPU ops that hold a graph launch, sorted by address */
  size_t n_holders;
  an_id_index calls; /* runtime calls that are not launches (cudaMemcpyAsync) by correlation */
} staging_ctx;

static bool is_graph_launch(const staging_ctx *c, const tr_event *launch) {
  const char *name = tr_str_get(c->t, launch->name);
  return c->graph && te_matcher_match(c->graph, name, strlen(name));
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (const tr_event *const *)a,
            y = (uintptr_t) * (const tr_event *const *)b;
  return x < y ? -1 : x > y;
}

/* The ops around the trace's graph launches; false when out of memory. None: no graph. */
static bool find_holders(staging_ctx *c) {
  size_t n = 0, cap = 0;
  const tr_event *ev = tr_trace_events(c->t, TR_KIND_LAUNCH, &n);
  tr_str last_no = 0; /* launch names repeat: skip the matcher for the last non-graph name */
  for (size_t i = 0; i < n; i++) {
    if (ev[i].name == last_no) continue;
    if (!is_graph_launch(c, &ev[i])) {
      last_no = ev[i].name;
      continue;
    }
    if (!c->nest && !(c->nest = an_trace_view_ops(c->v))) return false;
    const tr_event *op = an_op_nest_around(c->nest, &ev[i]);
    if (!op) continue;
    const tr_event **v = ut_grow(c->holders, &cap, c->n_holders + 1, sizeof *v);
    if (!v) return false;
    c->holders = v;
    c->holders[c->n_holders++] = op;
  }
  if (c->n_holders) qsort(c->holders, c->n_holders, sizeof *c->holders, cmp_ptr);
  return true;
}

static bool holds_graph(const staging_ctx *c, const tr_event *op) {
  return bsearch(&op, c->holders, c->n_holders, sizeof *c->holders, cmp_ptr) != NULL;
}

/* The call that put kernel k (a kernel, copy or set) on the GPU: a launch, else another
 * runtime call (cudaMemcpyAsync), by correlation; NULL when none. */
static const tr_event *call_of(const staging_ctx *c, const an_trace_ids *ids, const tr_event *k) {
  const tr_event *launch = an_trace_ids_launch_of(ids, c->t, k);
  if (launch) return launch;
  int64_t corr = tr_event_correlation(c->t, k);
  size_t lo = 0, hi = 0;
  if (corr == TR_NO_ID) return NULL;
  an_id_index_range(&c->calls, corr, &lo, &hi);
  return lo < hi ? an_id_index_event(&c->calls, lo) : NULL;
}

/* Whether kernel k was launched inside a graph-launching op (and is not itself replayed). */
static bool staged(const staging_ctx *c, const an_trace_ids *ids, const tr_event *k) {
  const tr_event *call = call_of(c, ids, k);
  if (!call || is_graph_launch(c, call)) return false;
  for (long e = an_op_nest_around_entry(c->nest, call); e >= 0; e = an_op_nest_parent(c->nest, e))
    if (holds_graph(c, an_op_nest_op(c->nest, e))) return true;
  return false;
}

static bool add_us(an_graph_staging *g, const char *stage, const char *name, double us) {
  char key[1024];
  int len = snprintf(key, sizeof key, "%s\x1f%s", stage, name);
  if (len < 0 || (size_t)len >= sizeof key) return true; /* an absurd name: not counted */
  long i = ut_strmap_put(&g->keys, key, (size_t)len);
  double *v = i >= 0 ? ut_grow_zeroed(g->us, &g->cap, (size_t)i + 1, sizeof *v) : NULL;
  if (!v) return false;
  g->us = v;
  g->us[i] += us;
  return true;
}

static bool add_stage(an_graph_staging *g, const staging_ctx *c, const an_trace_view *v,
                      const an_stage_kernels *sk, an_hex_mask mask) {
  for (size_t i = 0; i < sk->n; i++) {
    const tr_event *k = sk->kernels[i];
    if (!staged(c, v->ids, k)) continue;
    const char *raw = tr_str_get(c->t, k->name);
    char canon[1024]; /* a longer name is not counted: no row would match a cut one */
    if (an_canonical_name(raw, strlen(raw), mask, canon, sizeof canon) >= sizeof canon) continue;
    if (!add_us(g, sk->stage->id, canon, tr_event_dur(c->t, k))) return false;
  }
  return true;
}

an_status an_graph_staging_add(an_graph_staging *g, const an_trace_view *v, const te_rules *rules) {
  staging_ctx c = {.t = v->trace, .graph = te_rules_matcher(rules, "graph_replay_launch"), .v = v};
  bool ok = c.graph && v->trace && v->ids ? find_holders(&c) : true;
  an_hex_mask mask = an_hex_mask_from_rules(rules);
  if (ok && c.n_holders)
    ok = an_id_index_build(&c.calls, c.t, TR_KIND_RUNTIME, AN_ID_CORRELATION) == 0;
  for (size_t s = 0; ok && c.n_holders && s < v->n_stages; s++)
    ok = add_stage(g, &c, v, &v->stages[s], mask);
  an_id_index_free(&c.calls);
  free(c.holders);
  return ok ? AN_OK : AN_ERR_NOMEM;
}

double an_graph_staging_us(const an_graph_staging *g, const char *stage, const char *name) {
  char key[1024];
  int len = snprintf(key, sizeof key, "%s\x1f%s", stage, name);
  if (!g || len < 0 || (size_t)len >= sizeof key) return 0;
  long i = ut_strmap_find(&g->keys, key, (size_t)len);
  return i >= 0 ? g->us[i] : 0;
}

void an_graph_staging_free(an_graph_staging *g) {
  ut_strmap_free(&g->keys);
  free(g->us);
  memset(g, 0, sizeof *g);
}
