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

/* Whether name hits m, asked once per distinct name of the trace (seen, by string id
 * below n_str: the answer + 1, 0 not asked; NULL: asked each time; one byte per string of
 * the trace where a map of every kernel name was 12 MB at 262,144 names). The match goes
 * through subj, uncached: the matcher's own cache would hold every name again. */
static bool name_hits(const tr_trace *t, tr_str name, const te_matcher *m, uint8_t *seen,
                      size_t n_str, te_subject *subj) {
  if (name >= n_str) seen = NULL;
  if (seen && seen[name]) return seen[name] == 2;
  const char *s = tr_str_get(t, name);
  if (m && subj) te_subject_set(subj, s, strlen(s));
  bool hit = m && (subj ? te_matcher_match_subject(m, subj) : te_matcher_match(m, s, strlen(s)));
  if (seen) seen[name] = hit ? 2 : 1;
  return hit;
}

/* The te_exec_mode bits of one view's kernels in the stage. A launch by a graph-replay
 * call (matcher graph_replay_launch) is a replay, any other launch an eager one (the
 * launch call of each kernel comes from the steps, by correlation); a kernel
 * torch.compile generated (matcher compiled_kernel) adds compile. */
static unsigned view_modes(const an_trace_view *v, const an_steps *steps,
                           const an_stage_kernels *sk, const te_rules *r) {
  const te_matcher *graph = te_rules_matcher(r, "graph_replay_launch");
  const te_matcher *compiled = te_rules_matcher(r, "compiled_kernel");
  size_t n_all = 0;
  const tr_event *all = tr_trace_events(v->trace, TR_KIND_KERNEL, &n_all);
  size_t n_str = tr_trace_string_count(v->trace);
  uint8_t *launch_seen = calloc(n_str ? n_str : 1, 1), *name_seen = calloc(n_str ? n_str : 1, 1);
  te_subject *subj = te_subject_create(); /* without it: the cached match, same answers */
  unsigned modes = 0;
  for (size_t k = 0; k < sk->n; k++) {
    const tr_event *e = sk->kernels[k];
    if (name_hits(v->trace, e->name, compiled, name_seen, n_str, subj)) modes |= TE_MODE_COMPILE;
    size_t i = (size_t)(e - all);
    const tr_event *call = an_steps_launch(steps, i);
    if (call)
      modes |= name_hits(v->trace, call->name, graph, launch_seen, n_str, subj) ? TE_MODE_GRAPH
                                                                                : TE_MODE_EAGER;
  }
  te_subject_destroy(subj);
  free(launch_seen);
  free(name_seen);
  return modes;
}

/* ---------------------------------------------------------------- tokens */

/* The token count a step annotation states: the number right after the first of the keys
 * it holds; 0 when none. */
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

/* The attention sums of one phase's "N(sqAskBsqsqCsqskD)" at p (past the phase key: N its
 * sequences), added to sum; false when a sum is missing, malformed or inconsistent (sq^2
 * sums below sq). */
#define ATTN_SUM_MAX 1e15 /* past any real step: a bigger figure is not a count */
enum { SUM_SQ, SUM_SK, SUM_SQSQ, SUM_SQSK, N_SUMS };
typedef struct attn_sums {
  double q, kv, pairs, seqs, qk;
} attn_sums;
static bool phase_sums(const char *p, attn_sums *sum) {
  static const char *const names[N_SUMS] = {"sq", "sk", "sqsq", "sqsk"};
  double v[N_SUMS] = {-1, -1, -1, -1}, seqs = 0;
  while (*p >= '0' && *p <= '9' && seqs < ATTN_SUM_MAX) seqs = seqs * 10 + (*p++ - '0');
  if (*p++ != '(') return false;
  while (*p && *p != ')') {
    const char *w = p;
    while (*p >= 'a' && *p <= 'z') p++;
    size_t wn = (size_t)(p - w);
    double n = 0;
    if (!wn || *p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9' && n < ATTN_SUM_MAX) n = n * 10 + (*p++ - '0');
    for (size_t i = 0; i < N_SUMS; i++)
      if (strlen(names[i]) == wn && !strncmp(names[i], w, wn)) v[i] = n;
  }
  if (*p != ')' || v[SUM_SQ] < 0 || v[SUM_SK] < 0 || v[SUM_SQSQ] < v[SUM_SQ] || v[SUM_SQSK] < 0)
    return false;
  /* causal: row i of a sequence sees sk - sq + i keys */
  double pr = v[SUM_SQSK] - (v[SUM_SQSQ] - v[SUM_SQ]) / 2;
  if (pr < 0 || v[SUM_SQ] >= ATTN_SUM_MAX || v[SUM_SK] >= ATTN_SUM_MAX ||
      v[SUM_SQSK] >= ATTN_SUM_MAX || seqs >= ATTN_SUM_MAX)
    return false;
  sum->q += v[SUM_SQ], sum->kv += v[SUM_SK], sum->pairs += pr, sum->seqs += seqs;
  sum->qk += v[SUM_SQSK];
  return true;
}

/* Adds a step annotation's attention sums over the phases of keys to x; a step that names
 * no phase, or one whose sums do not parse, adds nothing. */
static void annotation_attention(const char *name, const te_string_list *keys, an_exec_facts *x) {
  attn_sums sum = {0};
  size_t phases = 0;
  for (size_t k = 0; k < keys->n; k++) {
    const char *at = strstr(name, keys->items[k]);
    if (!at) continue;
    if (!phase_sums(at + strlen(keys->items[k]), &sum)) return;
    phases++;
  }
  if (!phases) return;
  x->attn_q_tokens += sum.q, x->attn_kv_tokens += sum.kv, x->attn_pairs += sum.pairs;
  x->attn_seqs += sum.seqs, x->attn_qk += sum.qk;
  x->steps_with_attn++;
}

/* Folds the token counts of one view's steps of the stage (analysis/steps.h) into x. */
static void view_tokens(const an_steps *steps, const char *stage, const te_rules *r,
                        an_exec_facts *x) {
  const te_string_list *keys = &te_rules_settings(r)->fuse_token_count_keys;
  const te_string_list *phases = &te_rules_settings(r)->roofline_attention_phase_keys;
  for (size_t j = 0; j < steps->n; j++) {
    const an_step *s = &steps->steps[j];
    if (!s->stage_id || strcmp(s->stage_id, stage) != 0) continue;
    annotation_attention(s->name, phases, x);
    long t = annotation_tokens(s->name, keys);
    if (t <= 0) continue;
    if (!x->tokens_min || t < x->tokens_min) x->tokens_min = t;
    if (t > x->tokens_max) x->tokens_max = t;
    x->steps_with_tokens++;
  }
}

an_exec_facts an_exec_facts_of_stage(const an_trace_view *views, const an_steps *steps,
                                     size_t n_views, const te_stage *stage, const te_rules *r) {
  an_exec_facts x = {0};
  for (size_t i = 0; i < n_views; i++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[i], stage->id);
    if (!sk) continue;
    x.modes |= view_modes(&views[i], &steps[i], sk, r);
    view_tokens(&steps[i], stage->id, r, &x);
  }
  return x;
}

/* ---------------------------------------------------------------- piece shapes */

/* The evidence labels of the patterns' shape-gated pieces, collected once (asking every
 * pattern of every row was 4 % of a run of 32,768 distinct names); *any when a piece takes
 * any kernel. NULL when out of memory. */
static const char **shape_labels(const te_rules *r, size_t *n, bool *any) {
  size_t np = te_rules_fusion_count(r);
  const char **v = malloc((np ? np : 1) * sizeof *v);
  *n = 0;
  *any = false;
  for (size_t pi = 0; v && pi < np; pi++) {
    const te_fusion_pattern *p = te_rules_fusion(r, pi);
    if (p->shape_piece < 0) continue;
    const char *want = (size_t)p->shape_piece < p->n_evidence ? p->evidence[p->shape_piece] : "any";
    if (!strcmp(want, "any")) *any = true;
    v[(*n)++] = want;
  }
  return v;
}

/* Whether row may be the shape-gated piece of some pattern: its category or kind is that
 * piece's evidence label (or the label is "any"). */
static bool shape_candidate(const char *const *labels, size_t n, bool any,
                            const an_kernel_row *row) {
  for (size_t i = 0; !any && i < n; i++)
    if ((row->category && !strcmp(row->category, labels[i])) ||
        (row->kind && !strcmp(row->kind, labels[i])))
      return true;
  return any;
}

an_piece_shape *an_fuse_row_shapes(const an_trace_view *views, size_t n_views,
                                   const an_stage_tables *st, const uint32_t *ev_row, size_t n_ev,
                                   const te_rules *r, an_op_shapes *shapes) {
  an_piece_shape *out = calloc(st->n_rows ? st->n_rows : 1, sizeof *out);
  bool *want = calloc(st->n_rows ? st->n_rows : 1, sizeof *want), any;
  size_t n_labels;
  const char **labels = shape_labels(r, &n_labels, &any);
  if (!labels) {
    free(out);
    free(want);
    return NULL;
  }
  for (size_t i = 0; out && want && i < st->n_rows; i++)
    want[i] = shape_candidate(labels, n_labels, any, &st->rows[i]);
  free(labels);
  size_t k = 0;
  bool ok = out && want;
  for (size_t v = 0; ok && v < n_views; v++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[v], st->stage->id);
    const tr_trace *t = views[v].trace;
    size_t n_ops;
    const tr_event *cpu_ops = tr_trace_events(t, TR_KIND_CPU_OP, &n_ops);
    const uint32_t *ops =
        sk ? an_trace_view_stage_ops(&views[v], (size_t)(sk - views[v].stages)) : NULL;
    ok = !sk || ops;
    for (size_t i = 0; ok && sk && i < sk->n && k < n_ev; i++, k++) {
      an_piece_shape *ps = &out[ev_row[k]];
      if (!want[ev_row[k]] || ps->known || ops[i] == AN_NO_OP) continue;
      const double *elems;
      const an_op_shape *sh = an_op_shapes_get(shapes, v, t, &cpu_ops[ops[i]], &elems);
      ok = sh != NULL;
      if (ok && (ps->known = sh->small_dtype != NULL))
        ps->last_dim = sh->last_dim, ps->dtype = sh->small_dtype;
    }
  }
  free(want);
  if (!ok) {
    free(out);
    return NULL;
  }
  return out;
}

/* ---------------------------------------------------------------- messages */

/* The bytes of one collective's message from its args, 0 when they do not say. */
static double message_bytes(const tr_trace *t, const tr_event *e, const te_number_map *sizes) {
  tr_str n = tr_event_arg(t, TR_KIND_KERNEL, e, TR_ARG_IN_MSG_NELEMS);
  tr_str dt = tr_event_arg(t, TR_KIND_KERNEL, e, TR_ARG_DTYPE);
  if (!n || !dt) return 0;
  double elem = te_number_map_get(sizes, tr_str_get(t, dt));
  return elem > 0 ? strtod(tr_str_get(t, n), NULL) * elem : 0;
}

double *an_fuse_message_bytes(const an_trace_view *views, size_t n_views, const an_stage_tables *st,
                              const uint32_t *ev_row, size_t n_ev, const te_rules *r) {
  const te_settings *set = te_rules_settings(r);
  double *out = calloc(st->n_rows ? st->n_rows : 1, sizeof *out);
  size_t k = 0;
  for (size_t v = 0; out && v < n_views; v++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[v], st->stage->id);
    for (size_t i = 0; sk && i < sk->n && k < n_ev; i++, k++) {
      const an_kernel_row *row = &st->rows[ev_row[k]];
      if (!te_string_list_has(&set->ranks_communication_categories, row->category)) continue;
      double b = message_bytes(views[v].trace, sk->kernels[i], &set->fuse_dtype_bytes);
      if (b > out[ev_row[k]]) out[ev_row[k]] = b;
    }
  }
  return out;
}

/* ---------------------------------------------------------------- gates */

/* The cap of p at TP size tp in bytes; -1 when p lists caps but none for tp (its fused
 * path does not take that size), 0 when p has no cap. */
static double message_cap(const te_fusion_pattern *p, long tp) {
  if (!p->n_message_caps) return 0;
  for (size_t i = 0; i < p->n_message_caps; i++)
    if (p->message_caps[i].tp == tp) return p->message_caps[i].bytes;
  return -1;
}

bool an_fuse_message_gate(const te_fusion_pattern *p, const an_stage_tables *st, const size_t *rows,
                          size_t n, long tp, unsigned *unknown, bool *over_cap, double *bytes,
                          double *cap_bytes) {
  double cap = message_cap(p, tp);
  *bytes = *cap_bytes = 0;
  if (cap < 0) return false;
  if (cap == 0) return true;
  double most = 0;
  for (size_t i = 0; st->msg_bytes && i < n; i++)
    if (st->msg_bytes[rows[i]] > most) most = st->msg_bytes[rows[i]];
  if (most <= 0) *unknown |= AN_GATE_MESSAGE;
  if (most > cap) *over_cap = true;
  *bytes = most;
  *cap_bytes = cap;
  return true;
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
  return message_cap(p, opt->tp_size) >= 0;
}

an_fuse_state an_fuse_state_of(bool active_here, bool active_elsewhere, bool over_cap,
                               unsigned unknown) {
  if (active_here) return AN_FUSE_IN_USE;
  if (active_elsewhere) return AN_FUSE_IN_USE_ELSEWHERE;
  if (over_cap) return AN_FUSE_OVER_CAP;
  return unknown ? AN_FUSE_GATES_UNKNOWN : AN_FUSE_OPPORTUNITY;
}
