/*
 * analysis/workload.c - the workload kind of a run (workload.h). One pass over the CPU ops
 * and annotations of each trace, the matcher asked once per distinct name.
 */
#include "analysis/workload.h"

#include <stdlib.h>
#include <string.h>

/* The first event name of the kinds the matcher names, or NULL. */
static const char *first_named(const tr_trace *t, const te_matcher *m, const tr_kind *kinds,
                               size_t n_kinds) {
  if (!m) return NULL;
  size_t n_str = tr_trace_string_count(t);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1); /* 0 unasked, 1 no, 2 yes */
  const char *hit = NULL;
  for (size_t k = 0; memo && !hit && k < n_kinds; k++) {
    size_t n = 0;
    const tr_event *ev = tr_trace_events(t, kinds[k], &n);
    for (size_t i = 0; !hit && i < n; i++) {
      uint8_t *x = &memo[ev[i].name];
      if (!*x) {
        const char *name = tr_str_get(t, ev[i].name);
        *x = te_matcher_match(m, name, strlen(name)) ? 2 : 1;
      }
      if (*x == 2) hit = tr_str_get(t, ev[i].name);
    }
  }
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
