/*
 * analysis/fuse_context.c - the execution facts a fusion pattern's gates read from the
 * trace (issue 31, deviation F9): per stage, the modes its kernels ran in (eager launches,
 * graph replays, torch.compile's kernels) and the tokens of its steps; and the gate
 * verdict of a pattern against them (a gate that fails, a fact the trace left unknown, a
 * stage over the pattern's size cap).
 *
 * Facts come from the trace alone: the launch call of each kernel (by correlation), the
 * kernel names the packs' matcher compiled_kernel hits, and the numbers the step
 * annotations carry after one of fuse.token_count_keys. Why each gate exists and where
 * the frameworks' own caps come from: docs/rules.md "Gates from the trace".
 */
#include "analysis/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/map.h"

/* ---------------------------------------------------------------- modes */

/* The launch call of kernel e (its launch event by correlation), or NULL. */
static const tr_event *launch_of(const an_trace_view *v, const tr_event *e) {
  int64_t corr = tr_event_correlation(v->trace, e);
  if (corr == TR_NO_ID || !v->ids) return NULL;
  size_t lo = 0, hi = 0;
  an_id_index_range(&v->ids->launches_by_corr, corr, &lo, &hi);
  return lo < hi ? an_id_index_event(&v->ids->launches_by_corr, lo) : NULL;
}

/* Whether name hits m, asked once per distinct name of the trace (seen holds the
 * answers + 1). */
static bool name_hits(const an_trace_view *v, tr_str name, const te_matcher *m, ut_u64map *seen) {
  uint64_t a = 0;
  if (ut_u64map_get(seen, name, &a)) return a == 2;
  const char *s = tr_str_get(v->trace, name);
  bool hit = m && te_matcher_match(m, s, strlen(s));
  (void)ut_u64map_put(seen, name, hit ? 2 : 1); /* out of memory: asked again, same answer */
  return hit;
}

/* The te_exec_mode bits of one view's kernels in the stage. A launch by a graph-replay
 * call (matcher graph_replay_launch) is a replay, any other launch an eager one; a
 * kernel torch.compile generated (matcher compiled_kernel) adds compile. */
static unsigned view_modes(const an_trace_view *v, const an_stage_kernels *sk, const te_rules *r) {
  const te_matcher *graph = te_rules_matcher(r, "graph_replay_launch");
  const te_matcher *compiled = te_rules_matcher(r, "compiled_kernel");
  ut_u64map launch_seen = {0}, name_seen = {0};
  unsigned modes = 0;
  for (size_t i = 0; i < sk->n; i++) {
    const tr_event *e = sk->kernels[i];
    if (name_hits(v, e->name, compiled, &name_seen)) modes |= TE_MODE_COMPILE;
    if ((modes & (TE_MODE_EAGER | TE_MODE_GRAPH)) == (TE_MODE_EAGER | TE_MODE_GRAPH)) continue;
    const tr_event *call = launch_of(v, e);
    if (call)
      modes |= name_hits(v, call->name, graph, &launch_seen) ? TE_MODE_GRAPH : TE_MODE_EAGER;
  }
  ut_u64map_free(&launch_seen);
  ut_u64map_free(&name_seen);
  /* compiled kernels without any launch call seen say compile, not how they launched */
  return modes;
}

/* ---------------------------------------------------------------- tokens */

/* The token count an annotation states: the number right after the first of the keys it
 * holds; 0 when none. */
static long annotation_tokens(const char *name, const te_string_list *keys) {
  for (size_t k = 0; k < keys->n; k++) {
    const char *at = strstr(name, keys->items[k]);
    if (!at) continue;
    const char *d = at + strlen(keys->items[k]);
    long n = 0;
    while (*d >= '0' && *d <= '9' && n < 1000000000L) n = n * 10 + (*d++ - '0');
    if (n > 0) return n;
  }
  return 0;
}

/* The stage id of an annotation: the stage rule that places it, else the file's path
 * stage, else "all". */
static const char *annotation_stage(const an_trace_view *v, const te_rules *r, const char *name) {
  const te_stage *st = te_rules_stage_from_annotation(r, name);
  if (st) return st->id;
  return v->path_stage ? v->path_stage : "all";
}

/* Folds the token counts of one view's step annotations of the stage into x. CPU
 * annotations first; GPU ones only when the CPU side has none (the same steps). */
static void view_tokens(const an_trace_view *v, const char *stage, const te_rules *r,
                        an_exec_facts *x) {
  static const tr_kind kinds[2] = {TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  const te_matcher *step = te_rules_matcher(r, "step_annotation");
  const te_string_list *keys = &te_rules_settings(r)->fuse_token_count_keys;
  size_t before = x->steps_with_tokens;
  for (int k = 0; k < 2 && x->steps_with_tokens == before; k++) {
    size_t n = 0;
    const tr_event *ev = tr_trace_events(v->trace, kinds[k], &n);
    for (size_t i = 0; i < n; i++) {
      const char *name = tr_str_get(v->trace, ev[i].name);
      if (step && !te_matcher_match(step, name, strlen(name))) continue;
      if (strcmp(annotation_stage(v, r, name), stage) != 0) continue;
      long t = annotation_tokens(name, keys);
      if (t <= 0) continue;
      if (!x->tokens_min || t < x->tokens_min) x->tokens_min = t;
      if (t > x->tokens_max) x->tokens_max = t;
      x->steps_with_tokens++;
    }
  }
}

an_exec_facts an_exec_facts_of_stage(const an_trace_view *views, size_t n_views,
                                     const te_stage *stage, const te_rules *r) {
  an_exec_facts x = {0};
  for (size_t i = 0; i < n_views; i++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[i], stage->id);
    if (!sk) continue;
    x.modes |= view_modes(&views[i], sk, r);
    view_tokens(&views[i], stage->id, r, &x);
  }
  return x;
}

/* ---------------------------------------------------------------- gates */

/* The message-size gate: a TP size the pattern lists no cap for is one its fused path
 * does not take (fails); a listed one needs the collectives' message bytes, which the
 * trace does not carry yet (unknown). */
static bool message_gate(const te_fusion_pattern *p, long tp, unsigned *unknown) {
  if (!p->n_message_caps) return true;
  for (size_t i = 0; i < p->n_message_caps; i++)
    if (p->message_caps[i].tp == tp) {
      *unknown |= AN_GATE_MESSAGE;
      return true;
    }
  return false;
}

bool an_fuse_context_gates(const te_fusion_pattern *p, const an_exec_facts *x,
                           const an_tables_options *opt, unsigned *unknown, bool *over_cap) {
  *unknown = 0;
  *over_cap = false;
  if (p->platform && opt->platform == AN_PLATFORM_UNKNOWN) *unknown |= AN_GATE_PLATFORM;
  if (p->modes && !x->modes) *unknown |= AN_GATE_MODE;
  if (p->modes && x->modes && !(p->modes & x->modes)) return false;
  if (p->max_tokens && !x->tokens_min) *unknown |= AN_GATE_TOKENS;
  if (p->max_tokens && x->tokens_min > p->max_tokens) *over_cap = true;
  if (p->single_node && opt->topology == AN_TOPOLOGY_MULTI_NODE) return false;
  if (p->single_node && opt->topology == AN_TOPOLOGY_UNKNOWN) *unknown |= AN_GATE_TOPOLOGY;
  return message_gate(p, opt->tp_size, unknown);
}

an_fuse_state an_fuse_state_of(bool active_here, bool active_elsewhere, bool over_cap,
                               unsigned unknown) {
  if (active_here) return AN_FUSE_IN_USE;
  if (active_elsewhere) return AN_FUSE_IN_USE_ELSEWHERE;
  if (over_cap) return AN_FUSE_OVER_CAP;
  return unknown ? AN_FUSE_GATES_UNKNOWN : AN_FUSE_OPPORTUNITY;
}
