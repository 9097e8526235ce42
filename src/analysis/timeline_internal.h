/*
 * analysis/timeline_internal.h - pieces of the time account shared by its files
 * (timeline.c: windows, sweep, collectives; timeline_host.c: what the host did in a gap).
 * Prefix tl_ inside the timeline files.
 *
 * Ownership: a tl_host borrows the trace, the rules and the string table (all must
 * outlive it) and owns its per-thread indexes (tl_host_destroy). The strings of a
 * tl_portion are interned in that table.
 */
#ifndef TRIAGE_ANALYSIS_TIMELINE_INTERNAL_H
#define TRIAGE_ANALYSIS_TIMELINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"
#include "analysis/strtab.h"
#include "analysis/trace_view.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* A gap between kernels of a window: [g0, g1) in nanoseconds, ended by a kernel on
 * `stream` whose launch call is `launch` (NULL when the trace has none). An outside gap
 * lies outside every counted window of its stage (window: the stage slot): only what
 * spans its middle is asked (tl_host_outside). */
typedef struct tl_gap {
  size_t window;
  int64_t g0, g1;
  const tr_event *launch;
  tr_str stream;
  bool outside;
  /* where an alloc stall's release lead may lie from (us): the previous counted step's
   * CPU end, -INFINITY for the trace's first; NAN: a stage window (release_lead) */
  double lead_from;
  /* the start of the latest kernel before it that sat queued at least
   * timeline.launch_gap_max_us after its launch call returned: the host was ahead of the
   * GPU then (INT64_MIN: none so far) */
  int64_t ahead;
  /* the start of its window's span (its first kernel, ns); INT64_MIN for a gap outside the
   * windows. A sync that returned before it drained no work of this window (shadow_portion) */
  int64_t span0;
  /* the stream of the kernel whose end opened the gap (the busy stretch's last): a kernel
   * queued on the same stream waits for nothing else there (0: not known) */
  tr_str prev_stream;
} tl_gap;

/* A part of a gap with one cause. A gap splits into at most four: the host doing
 * something else before it called the launch (less the setup calls inside it, a part of
 * their own), the launch call itself, and the queue after the call returned (the kernel
 * waited on another stream or event). */
typedef struct tl_portion {
  size_t window;
  an_idle_kind kind;
  uint32_t extra;              /* a long host portion's tl_extra: index + 1 (0: none) */
  const char *what, *location; /* interned; NULL when none */
  int64_t ns;
  int64_t gap_ns; /* the whole gap it is part of */
  /* A host portion nothing of its thread spans (no what, no location) where the thread
   * went untraced: its longest stretch with no CPU op (untraced_ns, at least
   * timeline.untraced_min_pct of the portion), between the CPU op that ended last before
   * it and the first after (else the launch call ending the portion).
   * Interned; they key its cause as what and location do (one place in the code, one
   * cause). NULL and 0 otherwise. */
  const char *before, *after;
  int64_t untraced_ns;
  /* Such a portion across whose stretch the process ran runtime calls the trace did not
   * record (timeline.unrecorded_calls_min at least): how many, and the correlation ids of
   * the launching thread's calls either side of the largest jump. 0 otherwise. */
  int64_t unrecorded_calls, corr_from, corr_to;
  /* A queue portion (queued work waiting: dependency, event wait, outside): how long its
   * kernel had sat queued when it ran, from its launch call's return to its start (ns);
   * 0 when the trace has no launch call for it. */
  int64_t queued_ns;
  /* A host portion after a sync that drained the GPU's queue before its step's first
   * kernel (an_drain): the sync's op and Python frame (interned) and the
   * queue it drained (ns, the time it blocked). NULL and 0 otherwise. */
  const char *drain_what, *drain_location;
  int64_t drain_queue_ns;
  /* An untraced host portion that ends in event ordering the host issued inside the gap
   * (event_order): the next kernel's stream and the stream whose event it waited for
   * (interned; the latter NULL when not known). NULL otherwise. */
  const char *event_stream, *event_on_stream;
} tl_portion;
#define TL_MAX_PORTIONS 4

/* What a long host portion (timeline.long_gap_us) says besides its innermost activity:
 * the outermost region around it (a user annotation other than the step's, NULL when
 * none or the activity itself) and the longest operation inside it (the outermost CPU op,
 * runtime call or annotation under the activity at the portion's middle; NULL when the
 * activity ran nothing there). Interned. A queued portion's lead (the blocking call a thread
 * that issues GPU work sat in across it) keeps the call and its kind too. */
typedef struct tl_extra {
  const char *region, *child;
  /* a dependency portion's lead (queue_lead): the blocking runtime call and its kind */
  const char *call;
  an_lead_kind lead;
  /* a sync portion's frame where a framework waits by design (an_idle_cause.designed), and
   * the blocking call of that wait: its name, outermost CPU op, GPU copy and the copy's
   * bytes (0: not stated; an_idle_cause.designed_*) */
  const char *designed;
  const char *designed_call, *designed_op, *designed_copy;
  int64_t designed_bytes;
} tl_extra;

typedef struct tl_host tl_host;

/* Indexes the CPU events (CPU ops, launch and runtime calls, Python frames) of the threads
 * that launched the kernels ending the gaps of the view's trace; the view's CPU-op nest is
 * asked only for a portion its thread left untraced (tl_extra). NULL when out of memory. */
tl_host *tl_host_create(const an_trace_view *view, const te_rules *rules, an_strtab *strings,
                        const tl_gap *gaps, size_t n);
void tl_host_destroy(tl_host *h);
/* Splits a gap into its portions (out[0..return)); their ns sum to the gap. */
size_t tl_host_split(tl_host *h, const tl_gap *g, tl_portion out[TL_MAX_PORTIONS]);
/* What the host did across an outside gap (tl_gap.outside): an_stage_timeline's outside_*
 * fields of one gap. */
typedef struct tl_outside {
  const char *call, *op, *location; /* interned; NULL when none */
  int64_t call_ns;
  bool blocking, setup;
} tl_outside;
/* The innermost CPU op or runtime call spanning the middle of outside gap g on the thread
 * that launched its next kernel, else on another indexed thread; false when none. */
bool tl_host_outside(tl_host *h, const tl_gap *g, tl_outside *out);
/* A call to or from pageable memory of at least timeline.long_gap_us whose own GPU copy
 * took under timeline.readback_max_copy_pct of it: it read a few bytes back and spent its
 * time waiting for the work queued before the copy on its stream (review 18 defect 8:
 * hta_multistream5's 704-byte cudaMemcpyAsync, 139-147 ms a step). call_ev: its index
 * among the runtime calls; copy: its GPU copy's among the GPU events; ts, end: ns; the
 * names (interned; NULL when none) are filled by tl_host_readbacks. */
typedef struct tl_readback {
  uint32_t call_ev, copy;
  int64_t ts, end;
  const char *call, *op, *region, *location;
  int64_t bytes; /* the copy's (TR_NO_ID: not stated) */
} tl_readback;
/* The trace's long blocking reads back (tl_readback), n of them, in call order; h owns them. */
const tl_readback *tl_host_readbacks(tl_host *h, size_t *n);
/* The extras the portions of h's splits index (their extra - 1), n of them; h owns them. */
const tl_extra *tl_host_extras(const tl_host *h, size_t *n);

/* Nanoseconds of a trace time in microseconds (traces carry at most nanosecond digits),
 * rounded half away from zero (llround's answer). Clamped to +-(INT64_MAX / 2) ns (year
 * 2116 as epoch time), so the difference of any two stays an int64_t: a trace's absurd
 * timestamp (1e17 us) must not overflow the account. NaN reads as 0. Inline and without
 * llround's call into libm: the account converts ~330,000 times on hta_async x 2, at 34
 * instructions each through the call. Exact: below the clamp the cast drops the fraction,
 * which a double holds exactly (none past 2^52, where every double is whole). */
static inline int64_t tl_ns(double us) {
  const int64_t lim = INT64_MAX / 2;
  double ns = us * 1000.0;
  if (ns != ns) return 0;
  if (ns >= (double)lim) return lim;
  if (ns <= -(double)lim) return -lim;
  int64_t whole = (int64_t)ns;
  double frac = ns - (double)whole;
  return whole + (frac >= 0.5) - (frac <= -0.5);
}

#endif
