/*
 * trace/trace_internal.h - the tr_trace object as the Kineto reader fills it and the
 * accessors of trace.c read it (private to src/trace).
 *
 * kineto.c appends to the arrays and side tables while it reads; tr_trace_seal then
 * trims them and builds what a query needs (the context table behind trace.h's inline
 * accessors, the correlation map). Everything else reads through trace.h.
 *
 * Ownership: a tr_trace owns every array, table and string here; tr_trace_destroy
 * (trace.h) frees them all.
 */
#ifndef TRIAGE_TRACE_TRACE_INTERNAL_H
#define TRIAGE_TRACE_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/args_internal.h"
#include "trace/idmap.h"
#include "trace/intern.h"
#include "trace/trace.h"

#define N_KINDS 7

typedef struct ev_vec {
  tr_event *v;
  size_t n, cap;
} ev_vec;

typedef struct py_vec {
  tr_pyframe *v;
  size_t n, cap;
  tr_pyframe_run *runs;
  size_t n_runs, cap_runs;
  tr_map64 dur_wide; /* frame position -> bits of a dur that is not a count (idmap.h) */
  /* Whether each thread's frames come in (ts, -end) order (tr_trace_pyframes_sorted):
   * prev is the current thread's previous frame (SIZE_MAX: none), thread_last the last
   * frame of every thread left (pid << 32 | tid -> position); both only while reading. */
  bool unsorted;
  size_t prev;
  tr_map64 thread_last;
  /* Distinct frame names in order of first appearance, and a bit per string id seen
   * (while reading). */
  tr_str *names;
  size_t n_names, cap_names;
  uint64_t *seen;
  size_t seen_words;
} py_vec;

struct tr_trace {
  tr_trace_head head; /* first: the inline accessors of trace.h read it; head.ctx = ctx.v */
  char *path;
  tr_intern *in;
  ev_vec ev[N_KINDS]; /* ev[TR_KIND_PYFRAME] stays empty: frames live in py */
  py_vec py;
  tr_thread_name *tn;
  size_t n_tn, cap_tn;
  /* event ids as 32-bit offsets (idmap.h); the full value of an id outside its window
   * is in ext_wide / corr_wide under the event's index */
  tr_idbase ext_base, corr_base;
  tr_map64 ext_wide, corr_wide;
  tr_map64 dur_wide; /* event index -> bits of a dur stored as TR_DUR_WIDE */
  tr_map64 ts_wide;  /* event index -> bits of a start stored as TR_TS_WIDE */
  bool ts_set;       /* the starts' unit and origin are chosen (head, tr_ts_encode) */
  tr_ctxtab ctx;     /* the distinct (cat, pid, tid, stream) of the events */
  tr_map64 ctx_wide; /* event index -> context position stored as TR_CTX_WIDE */
  /* correlation -> External id, as offsets; a pair that does not fit in 32 bits is in
   * corr_map_wide (and, when its correlation fits, marked TR_OFF_WIDE in corr_map).
   * While reading, the pairs are only appended to corr_pairs (correlation, External id
   * offsets, in file order): the map is built after the read, and only when a stored
   * event has a correlation without an External id (the analysis asks for no other;
   * Kineto's kernels carry both). Without the map, a query scans the pairs from the end,
   * the later pair winning as it would in the map. */
  tr_map32 corr_map;
  tr_map64 corr_map_wide;
  struct corr_pair {
    uint32_t corr, ext;
  } * corr_pairs;
  size_t n_corr_pairs, cap_corr_pairs;
  bool corr_wanted; /* after the read: the map is built (and corr_pairs freed) */
  char *sample;
  size_t sample_len, sample_cap;
  uint64_t n_events, n_skipped, json_bytes, first_skip_off, utf8_replaced, n_fast, n_ahead;
  /* run metadata (top-level members); meta's arrays point at devices / groups */
  tr_trace_meta meta;
  tr_device *devices;
  tr_process_group *groups;
  size_t cap_devices, cap_groups;
  size_t cap_ranks; /* of the ranks of the group being read (the last one) */
  tr_process_name *procs;
  size_t n_procs, cap_procs;
  /* the kept args (tr_event_arg): distinct sets, and which set each event has */
  tr_argtab args;
  tr_argidx argidx[N_KINDS];
  uint64_t args_dropped;
};

/* An empty trace named path (NULL: ""), its rank and world size unknown; NULL when out of
 * memory. */
tr_trace *tr_trace_new(const char *path);
/* After a successful read: trims the arrays to their length, seals the context table
 * (trace.h's inline accessors read it through t->head) and builds the correlation map
 * when a stored event will ask it. -1 when out of memory. */
int tr_trace_seal(tr_trace *t);

#endif
