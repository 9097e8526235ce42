/*
 * analysis/workload.c - the workload kind of a run (workload.h). One pass over the CPU ops
 * and annotations of each trace, the matcher asked once per distinct name.
 */
#include "analysis/workload.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/op_cost.h"
#include "util/limits.h"

/* The first event name of the kinds the matcher names, or NULL. */
static const char *first_named(const tr_trace *t, const te_matcher *m, const tr_kind *kinds,
                               size_t n_kinds) {
  if (!m) return NULL;
  size_t n_str = tr_trace_string_count(t);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1); /* 0 unasked, 1 no, 2 yes */
  /* the memo is this scan's cache; the matcher's own (te_matcher_match) would keep every
   * distinct name of the trace (262,145 kernel names: +12 MB on bench.py's many names) */
  te_subject *subj = te_subject_create();
  const char *hit = NULL;
  for (size_t k = 0; memo && subj && !hit && k < n_kinds; k++) {
    size_t n = 0;
    const tr_event *ev = tr_trace_events(t, kinds[k], &n);
    for (size_t i = 0; !hit && i < n; i++) {
      uint8_t *x = &memo[ev[i].name];
      if (!*x) {
        const char *name = tr_str_get(t, ev[i].name);
        te_subject_set(subj, name, strlen(name));
        *x = te_matcher_match_subject(m, subj) ? 2 : 1;
      }
      if (*x == 2) hit = tr_str_get(t, ev[i].name);
    }
  }
  te_subject_destroy(subj);
  free(memo);
  return hit;
}

/* The first event name of those kinds the matcher names in any of the run's traces. */
static const char *first_in_run(const an_workload_input *in, const te_matcher *m,
                                const tr_kind *kinds, size_t n_kinds) {
  const char *e = NULL;
  for (size_t i = 0; !e && i < in->n; i++) e = first_named(in->traces[i], m, kinds, n_kinds);
  return e;
}

static an_workload_fact fact(an_workload w, const char *evidence, an_source src, an_strtab *st) {
  return (an_workload_fact){w, evidence ? an_strtab_cstr(st, evidence) : NULL, src};
}

an_workload_fact an_workload_detect(const an_workload_input *in, const te_rules *rules,
                                    an_strtab *strings) {
  static const tr_kind ops[] = {TR_KIND_CPU_OP, TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  static const tr_kind annotations[] = {TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  const te_matcher *train = te_rules_matcher(rules, "workload_training");
  const te_matcher *serve = te_rules_matcher(rules, "workload_serving");
  const te_matcher *offline = te_rules_matcher(rules, "workload_offline_framework");
  const te_matcher *bench = te_rules_matcher(rules, "workload_benchmark");
  const char *e;
  if ((e = first_in_run(in, train, ops, 3)))
    return fact(AN_WORKLOAD_TRAINING, e, AN_SOURCE_TRACE_CONTENT, strings);
  if ((e = first_in_run(in, serve, annotations, 2)))
    return fact(AN_WORKLOAD_SERVING, e, AN_SOURCE_TRACE_CONTENT, strings);
  if ((e = first_in_run(in, bench, annotations, 2)))
    return fact(AN_WORKLOAD_MICROBENCHMARK, e, AN_SOURCE_TRACE_CONTENT, strings);
  an_source fs = in->framework_source;
  if (fs != AN_SOURCE_DEFAULT && fs != AN_SOURCE_UNKNOWN && in->framework_label) {
    const char *id = in->framework_id ? in->framework_id : "";
    bool script = offline && te_matcher_match(offline, id, strlen(id));
    return fact(script ? AN_WORKLOAD_INFERENCE : AN_WORKLOAD_SERVING, in->framework_label, fs,
                strings);
  }
  bool iterations = in->n > 0;
  for (size_t i = 0; i < in->n; i++)
    iterations = iterations && in->steps[i].source == AN_STEPS_ITERATION;
  if (iterations && in->steps[0].n)
    return fact(AN_WORKLOAD_MICROBENCHMARK, in->steps[0].steps[0].name, AN_SOURCE_TRACE_CONTENT,
                strings);
  return (an_workload_fact){AN_WORKLOAD_UNKNOWN, NULL, AN_SOURCE_UNKNOWN};
}

an_compiled_fact an_compiled_detect(const an_workload_input *in, const te_rules *rules,
                                    an_strtab *strings) {
  static const tr_kind ops[] = {TR_KIND_CPU_OP, TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  static const tr_kind kernels[] = {TR_KIND_KERNEL};
  an_compiled_fact f = {0};
  const char *e = first_in_run(in, te_rules_matcher(rules, "compiled_region"), ops, 3);
  if (!e) {
    e = first_in_run(in, te_rules_matcher(rules, "compiled_kernel"), kernels, 1);
    f.by_kernel = e != NULL;
  }
  f.evidence = e ? an_strtab_cstr(strings, e) : NULL;
  f.compiled = f.evidence != NULL;
  return f;
}

/* ---------------------------------------------------------------- step shape */

/* One attention call's (batch, query tokens, key tokens), from its model's q and k. */
typedef struct shape_seen {
  long batch, tokens, kv;
  const char *op;
  size_t calls;
} shape_seen;

/* An attention op's query and key: (B, H, S, D), or (B, S, H, D) when bshd. */
#define ATTN_RANK 4u

/* The (batch, sequence) of input i of an attention op laid out as its model says. */
static bool batch_seq(const char *dims, int i, bool bshd, long *b, long *s) {
  int64_t d[AN_MAX_SHAPE_RANK];
  size_t rank = 0;
  if (i < 0 || !an_op_input_dims(dims, (size_t)i, d, AN_MAX_SHAPE_RANK, &rank) || rank != ATTN_RANK)
    return false;
  *b = (long)d[0];
  *s = (long)d[bshd ? 1 : 2];
  return *b > 0 && *s > 0;
}

/* Whether CPU op e runs inside a counted step of s (every op with no steps). */
static bool in_counted_step(const an_steps *s, double ts) {
  bool any = false;
  for (size_t j = 0; j < s->n; j++) {
    if (s->steps[j].warmup) continue;
    any = true;
    if (ts >= s->steps[j].cpu_ts && ts <= s->steps[j].cpu_end) return true;
  }
  return !any;
}

/* Counts trace t's attention calls by shape into v (at most cap distinct, *n of them). */
static void trace_shapes(const tr_trace *t, const an_steps *s, const te_rules *rules, shape_seen *v,
                         size_t cap, size_t *n) {
  size_t ne = 0, n_str = tr_trace_string_count(t);
  const tr_event *ev = tr_trace_events(t, TR_KIND_CPU_OP, &ne);
  const te_op_cost **memo = calloc(n_str ? n_str : 1, sizeof *memo); /* by name */
  uint8_t *asked = calloc(n_str ? n_str : 1, 1);
  for (size_t i = 0; memo && asked && i < ne; i++) {
    tr_str name = ev[i].name;
    if (!asked[name]) {
      const te_op_cost *m = te_rules_op_cost(rules, tr_str_get(t, name));
      memo[name] = m && m->kind == TE_COST_ATTENTION ? m : NULL;
      asked[name] = 1;
    }
    const te_op_cost *m = memo[name];
    long b, sq, bk, sk;
    const char *dims =
        m ? tr_str_get(t, tr_event_arg(t, TR_KIND_CPU_OP, &ev[i], TR_ARG_INPUT_DIMS)) : NULL;
    if (!dims || !in_counted_step(s, tr_event_ts(t, &ev[i])) ||
        !batch_seq(dims, m->q, m->bshd, &b, &sq) || !batch_seq(dims, m->k, m->bshd, &bk, &sk) ||
        bk != b || sq > sk)
      continue;
    /* by op too: an SDPA op and the flash forward it calls both have a model */
    const char *op = tr_str_get(t, name);
    size_t k = 0;
    while (k < *n && (v[k].batch != b || v[k].tokens != sq || v[k].kv != sk || strcmp(v[k].op, op)))
      k++;
    if (k == *n && *n == cap) continue; /* past the distinct shapes kept: not counted */
    if (k == *n) v[(*n)++] = (shape_seen){b, sq, sk, op, 0};
    v[k].calls++;
  }
  free(memo);
  free(asked);
}

an_step_shape an_step_shape_detect(const an_workload_input *in, const te_rules *rules,
                                   an_strtab *strings) {
  shape_seen v[16];
  size_t n = 0;
  for (size_t i = 0; i < in->n; i++)
    trace_shapes(in->traces[i], &in->steps[i], rules, v, sizeof v / sizeof *v, &n);
  an_step_shape out = {AN_PHASE_UNKNOWN, 0, 0, 0, NULL, 0, 0, false};
  for (size_t i = 0; i < in->n; i++)
    for (size_t j = 0; j < in->steps[i].n; j++) out.in_steps |= !in->steps[i].steps[j].warmup;
  size_t best = 0;
  for (size_t k = 0; k < n; k++) {
    if (v[k].calls > v[best].calls) best = k;
    size_t j = 0; /* a shape another op showed first is not a new one */
    while (j < k && (v[j].batch != v[k].batch || v[j].tokens != v[k].tokens || v[j].kv != v[k].kv))
      j++;
    out.shapes += j == k;
  }
  if (!n) return out;
  const shape_seen *x = &v[best];
  out.phase = x->tokens == 1 && x->kv > 1 ? AN_PHASE_DECODE
              : x->tokens == x->kv        ? AN_PHASE_PREFILL
                                          : AN_PHASE_EXTEND;
  out.batch = x->batch;
  out.tokens = x->tokens;
  out.kv_tokens = x->kv;
  out.op = an_strtab_cstr(strings, x->op);
  out.ops = x->calls;
  return out;
}
