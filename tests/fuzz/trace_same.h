/*
 * trace_same.h - whether two reads of one input hold the same trace: everything the
 * analysis can ask of a tr_trace, compared value by value (the fuzz harnesses and the
 * scanner tests share it).
 *
 * trace_diff(a, b, ids) returns NULL when they agree, else one line naming the first
 * difference (a static buffer, overwritten by the next call). With ids, the string ids
 * must agree too: two scanners of one build intern the same strings in the same order,
 * which keeps every id, and so every report, the same.
 */
#ifndef TRIAGE_TESTS_TRACE_SAME_H
#define TRIAGE_TESTS_TRACE_SAME_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"

static char trace_diff_msg[512];

static const char *trace_diff_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *trace_diff_at(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(trace_diff_msg, sizeof trace_diff_msg, fmt, ap);
  va_end(ap);
  return trace_diff_msg;
}

static bool trace_same_double(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* The strings behind two ids (and with ids, the ids) agree. */
static bool trace_same_str(const tr_trace *a, tr_str sa, const tr_trace *b, tr_str sb, bool ids) {
  return (!ids || sa == sb) && strcmp(tr_str_get(a, sa), tr_str_get(b, sb)) == 0;
}

#define TRACE_SAME_STR(x, y, what, i)       \
  if (!trace_same_str(a, (x), b, (y), ids)) \
  return trace_diff_at("%s of item %zu", what, (size_t)(i))

static const char *trace_diff_event(const tr_trace *a, const tr_event *ea, const tr_trace *b,
                                    const tr_event *eb, tr_kind kind, size_t i, bool ids) {
  if (!trace_same_double(tr_event_ts(a, ea), tr_event_ts(b, eb)) ||
      !trace_same_double(tr_event_dur(a, ea), tr_event_dur(b, eb)))
    return trace_diff_at("ts or dur of event %zu of kind %d", i, (int)kind);
  if (tr_event_external_id(a, ea) != tr_event_external_id(b, eb) ||
      tr_event_correlation(a, ea) != tr_event_correlation(b, eb) || ea->index != eb->index)
    return trace_diff_at("ids or index of event %zu of kind %d", i, (int)kind);
  int64_t corr = tr_event_correlation(a, ea);
  if (tr_trace_external_for_correlation(a, corr) != tr_trace_external_for_correlation(b, corr))
    return trace_diff_at("External id for the correlation of event %zu of kind %d", i, (int)kind);
  TRACE_SAME_STR(ea->name, eb->name, "name", i);
  TRACE_SAME_STR(tr_event_cat(a, ea), tr_event_cat(b, eb), "cat", i);
  TRACE_SAME_STR(tr_event_pid(a, ea), tr_event_pid(b, eb), "pid", i);
  TRACE_SAME_STR(tr_event_tid(a, ea), tr_event_tid(b, eb), "tid", i);
  TRACE_SAME_STR(tr_event_stream(a, ea), tr_event_stream(b, eb), "stream", i);
  for (int k = 0; k < TR_ARG_COUNT; k++)
    TRACE_SAME_STR(tr_event_arg(a, kind, ea, (tr_arg)k), tr_event_arg(b, kind, eb, (tr_arg)k),
                   tr_arg_key((tr_arg)k), i);
  return NULL;
}

static const char *trace_diff_frames(const tr_trace *a, const tr_trace *b, bool ids) {
  size_t fa = 0, fb = 0, ra = 0, rb = 0, na = 0, nb = 0;
  const tr_pyframe *pa = tr_trace_pyframes(a, &fa), *pb = tr_trace_pyframes(b, &fb);
  if (fa != fb) return trace_diff_at("frames: %zu and %zu", fa, fb);
  for (size_t i = 0; i < fa; i++) {
    TRACE_SAME_STR(pa[i].name, pb[i].name, "frame name", i);
    if (!trace_same_double(tr_pyframe_ts(a, &pa[i]), tr_pyframe_ts(b, &pb[i])) ||
        !trace_same_double(tr_pyframe_dur(a, &pa[i]), tr_pyframe_dur(b, &pb[i])))
      return trace_diff_at("ts or dur of frame %zu", i);
  }
  const tr_pyframe_run *xa = tr_trace_pyframe_runs(a, &ra), *xb = tr_trace_pyframe_runs(b, &rb);
  if (ra != rb) return trace_diff_at("frame runs: %zu and %zu", ra, rb);
  for (size_t i = 0; i < ra; i++) {
    if (xa[i].first != xb[i].first) return trace_diff_at("start of frame run %zu", i);
    TRACE_SAME_STR(xa[i].pid, xb[i].pid, "frame run pid", i);
    TRACE_SAME_STR(xa[i].tid, xb[i].tid, "frame run tid", i);
  }
  const tr_str *sa = tr_trace_pyframe_names(a, &na), *sb = tr_trace_pyframe_names(b, &nb);
  if (na != nb) return trace_diff_at("distinct frame names: %zu and %zu", na, nb);
  for (size_t i = 0; i < na; i++) TRACE_SAME_STR(sa[i], sb[i], "distinct frame name", i);
  if (tr_trace_pyframes_sorted(a) != tr_trace_pyframes_sorted(b)) return "frames sorted flag";
  return NULL;
}

static const char *trace_diff_meta(const tr_trace *a, const tr_trace *b, bool ids) {
  size_t ta = 0, tb = 0;
  const tr_thread_name *xa = tr_trace_thread_names(a, &ta), *xb = tr_trace_thread_names(b, &tb);
  if (ta != tb) return trace_diff_at("thread names: %zu and %zu", ta, tb);
  for (size_t i = 0; i < ta; i++) {
    TRACE_SAME_STR(xa[i].pid, xb[i].pid, "thread name pid", i);
    TRACE_SAME_STR(xa[i].tid, xb[i].tid, "thread name tid", i);
    TRACE_SAME_STR(xa[i].name, xb[i].name, "thread name", i);
  }
  const tr_trace_meta *ma = tr_trace_meta_get(a), *mb = tr_trace_meta_get(b);
  if (ma->rank != mb->rank || ma->world_size != mb->world_size || ma->platform != mb->platform ||
      ma->n_devices != mb->n_devices || ma->n_groups != mb->n_groups ||
      ma->n_processes != mb->n_processes)
    return "run metadata";
  TRACE_SAME_STR(ma->backend, mb->backend, "backend", 0);
  TRACE_SAME_STR(ma->host_name, mb->host_name, "host_name", 0);
  for (size_t i = 0; i < ma->n_devices; i++) {
    const tr_device *da = &ma->devices[i], *db = &mb->devices[i];
    if (da->id != db->id || da->compute_major != db->compute_major ||
        da->compute_minor != db->compute_minor || da->warp_size != db->warp_size ||
        da->num_sms != db->num_sms)
      return trace_diff_at("device %zu", i);
    TRACE_SAME_STR(da->name, db->name, "device name", i);
  }
  for (size_t i = 0; i < ma->n_groups; i++) {
    const tr_process_group *ga = &ma->groups[i], *gb = &mb->groups[i];
    if (ga->size != gb->size || ga->n_ranks != gb->n_ranks ||
        (ga->n_ranks && memcmp(ga->ranks, gb->ranks, ga->n_ranks * sizeof *ga->ranks) != 0))
      return trace_diff_at("process group %zu", i);
    TRACE_SAME_STR(ga->name, gb->name, "process group name", i);
    TRACE_SAME_STR(ga->desc, gb->desc, "process group desc", i);
  }
  for (size_t i = 0; i < ma->n_processes; i++) {
    TRACE_SAME_STR(ma->processes[i].pid, mb->processes[i].pid, "process pid", i);
    TRACE_SAME_STR(ma->processes[i].name, mb->processes[i].name, "process name", i);
  }
  return NULL;
}

static const char *trace_diff(const tr_trace *a, const tr_trace *b, bool ids) {
  if (tr_trace_event_count(a) != tr_trace_event_count(b) ||
      tr_trace_skipped_count(a) != tr_trace_skipped_count(b) ||
      tr_trace_json_bytes(a) != tr_trace_json_bytes(b) ||
      tr_trace_args_dropped(a) != tr_trace_args_dropped(b))
    return "event, skipped, byte or dropped-arg counts";
  if (ids && tr_trace_string_count(a) != tr_trace_string_count(b))
    return trace_diff_at("string counts: %zu and %zu", tr_trace_string_count(a),
                         tr_trace_string_count(b));
  for (int kind = TR_KIND_KERNEL; kind <= TR_KIND_RUNTIME; kind++) {
    size_t na = 0, nb = 0;
    const tr_event *ea = tr_trace_events(a, (tr_kind)kind, &na);
    const tr_event *eb = tr_trace_events(b, (tr_kind)kind, &nb);
    if (na != nb) return trace_diff_at("events of kind %d: %zu and %zu", kind, na, nb);
    for (size_t i = 0; i < na; i++) {
      const char *d = trace_diff_event(a, &ea[i], b, &eb[i], (tr_kind)kind, i, ids);
      if (d) return d;
    }
  }
  const char *d = trace_diff_frames(a, b, ids);
  if (!d) d = trace_diff_meta(a, b, ids);
  if (!d && strcmp(tr_trace_sample_text(a), tr_trace_sample_text(b)) != 0) d = "sample text";
  return d;
}

#undef TRACE_SAME_STR

#endif
