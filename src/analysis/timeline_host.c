/*
 * analysis/timeline_host.c - what the host was doing while the GPU idled (timeline_internal.h).
 *
 * A gap [g0, g1) ends with a kernel whose launch call ran on some thread at [Lts, Lend).
 * The gap splits into three portions:
 *   host  [g0, Lts)  the thread had not called the launch yet: it was waiting for the GPU
 *                    (a synchronising call that returned when the GPU ran dry: sync), in
 *                    a wait on a collective's result (an awaitable's wait(), a comm op's
 *                    Wait: await, however it spent the time), in
 *                    allocation or initialisation calls for most of it (setup), issuing
 *                    work back to back (at most timeline.launch_gap_max_us: launch), or
 *                    busy with something else (host), named by the innermost CPU op or
 *                    runtime call spanning the portion and the best Python frame (with
 *                    none, where the thread went untraced: the CPU ops around its longest
 *                    stretch with no op, from the view's op nest);
 *   call  [Lts, Lend) the launch call itself (a graph launch still submitting: launch; one
 *                    of timeline.module_load_min_us loading its module: setup);
 *   queue [Lend, g1)  the call had returned: the launch's latency (launch) when the call
 *                    came after the GPU ran dry and this part is short, else the kernel
 *                    waited on another stream or event (dependency).
 * Only the threads that launched gap-ending kernels are indexed: their CPU ops, launch and
 * runtime calls, user annotations and Python frames, sorted by (start, -end) with the enclosing
 * item of each, so the items spanning a time are a binary search plus a walk up the nesting.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/timeline_internal.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

/* Nesting deeper than this is not a stack (a broken trace): walks stop there. */
#define TL_MAX_DEPTH 512

enum { ITEM_FRAME = 0, ITEM_OP = 1, ITEM_LAUNCH = 2, ITEM_RUNTIME = 3, ITEM_ANNOTATION = 4 };

typedef struct item {
  double ts, end;
  uint32_t ref; /* index in its kind's array */
  uint8_t kind;
  int32_t parent; /* enclosing item of the thread, -1 at the top */
} item;

typedef struct thread_items {
  item *v;
  size_t n, cap;
  item *setup; /* the thread's setup calls (matcher setup_call), by start; they do not nest */
  size_t n_setup, cap_setup;
  long *release; /* by setup call: the latest release call up to it (release_probes), or -1 */
  /* the thread's synchronising runtime calls (matcher host_sync) of at least
   * timeline.launch_gap_max_us, by start (they do not nest), and each one's time left to
   * charge (us): the lead it drained (shadow_portion) */
  item *syncs;
  double *left;
  size_t n_syncs, cap_syncs;
  /* the thread's calls that issued a copy over the host link (matcher host_link_copy on the
   * GPU copy), by start; ref: the GPU copy's index among h->kev (collect_host_copies) */
  item *copies;
  size_t n_copies, cap_copies;
} thread_items;

struct tl_host {
  const tr_trace *t;
  const an_trace_view *view; /* its CPU-op nest, asked for an untraced portion (ops) */
  const an_op_nest *ops;
  const te_rules *rules;
  an_strtab *strings;
  const te_matcher *sync, *step, *setup, *await, *pageable, *release, *host_copy;
  const te_matcher *api_frame; /* host_api_frame: a library's wrapper of the call itself */
  const te_matcher *designed;  /* designed_sync_frame: where a framework waits by design */
  const te_matcher *readback;  /* readback_copy: a GPU copy to the host */
  /* by string id, the answers of sync, step and await so far: 0 unasked, 1 no, 2 yes (a gap
   * walks up a nesting chain, each name matched again cost more than the rest of the split) */
  uint8_t *is_sync, *is_step, *is_await;
  size_t n_str; /* their length: the trace's strings when the index was made */
  double launch_gap_max_us, sync_tol_us, setup_min_pct, module_load_min_us, untraced_min_pct;
  long unrecorded_calls_min;
  /* The trace's launch and runtime calls with a correlation id, by (thread, start, id),
   * and by (process, id) only when some thread's ids do not rise with its calls' starts
   * (else calls answers by process too: NULL): built at the first untraced stretch
   * (unrecorded_calls). Each is a call's position among the launch calls, then the
   * runtime calls (call_event), 4 bytes, not a copy of its thread, start and id: two such
   * 24-byte copies of hta15's 370,380 calls were 17.8 MB of its peak (0.157 of its JSON,
   * the bench's limit 0.12). */
  uint32_t *calls, *ids;
  size_t n_calls;
  bool calls_built;
  const tr_event *call_ev[2]; /* the launch calls, the runtime calls */
  size_t n_launch;
  double readback_max_copy_pct;
  ut_u64map threads; /* (pid << 32 | tid) -> index + 1 */
  /* correlation -> index + 1 among the GPU events of the copies to or from pageable host
   * memory (matcher pageable_copy): their runtime calls block the thread that issued them */
  ut_u64map pageable_corr;
  /* the streams' waits on events (cat cuda_sync with wait_on_cuda_event_record_corr_id),
   * by (stream, ts), and the cudaEventRecord calls they wait on: record correlation ->
   * index + 1 among the runtime calls (0 when the trace has none) */
  struct tl_wait {
    tr_str stream, on_stream;
    double ts;
    int64_t record;
  } * waits;
  size_t n_waits;
  ut_u64map records;
  thread_items *th;
  size_t n_th, cap_th;
  /* the long blocking reads back (collect_readbacks): their calls and copies, then what
   * tl_host_readbacks found around each */
  tl_readback *readbacks;
  size_t n_readbacks, cap_readbacks;
  const tr_event *ev[5]; /* by item kind (frames apart) */
  const tr_event *kev;   /* the GPU events (pageable_corr indexes them) */
  const tr_pyframe *py;
  /* The times the queries ask about (each gap's start, that start less the sync tolerance,
   * its launch call's start), sorted: only items spanning one of them are kept, and an
   * item's enclosing items span it too, so the chains asked about are whole. */
  double *probes;
  size_t n_probes;
  double long_gap_us;
  tl_extra *extras; /* of the long host portions split so far */
  size_t n_extras, cap_extras;
  /* per Python frame name met by best_frame: its normalised form (owned) and its
   * frame_priority score; frame_of maps the name's string id to its index */
  struct frame_memo {
    char *norm;
    size_t len;
    int score;
    bool api;      /* matcher host_api_frame: never a location (best_frame) */
    bool designed; /* matcher designed_sync_frame: a framework's designed wait (sync_extra) */
  } * frames;
  size_t n_frames, cap_frames;
  ut_u64map frame_of;
};

static uint64_t thread_key(tr_str pid, tr_str tid) { return (uint64_t)pid << 32 | tid; }

static long thread_of(const tl_host *h, tr_str pid, tr_str tid) {
  uint64_t v;
  return ut_u64map_get(&h->threads, thread_key(pid, tid), &v) ? (long)v - 1 : -1;
}

/* The last thread looked up: events come in runs of one thread, so most lookups of a
 * file-order walk repeat the previous one (a map lookup per event was a third of the
 * host index's cost on a launch-heavy trace). */
typedef struct thread_memo {
  uint64_t key;
  long th;
} thread_memo;
#define THREAD_MEMO_INIT \
  { UINT64_MAX, -1 }

static long thread_memo_of(const tl_host *h, thread_memo *m, tr_str pid, tr_str tid) {
  uint64_t key = thread_key(pid, tid);
  if (key != m->key) *m = (thread_memo){key, thread_of(h, pid, tid)};
  return m->th;
}

static bool add_thread(tl_host *h, const tr_event *e) {
  tr_str pid = tr_event_pid(h->t, e), tid = tr_event_tid(h->t, e);
  if (thread_of(h, pid, tid) >= 0) return true;
  thread_items *v = ut_grow(h->th, &h->cap_th, h->n_th + 1, sizeof *v);
  if (!v) return false;
  h->th = v;
  h->th[h->n_th] = (thread_items){0};
  return ut_u64map_put(&h->threads, thread_key(pid, tid), ++h->n_th);
}

/* Whether [ts, end] holds a probe time. The first probe at or after ts is searched from
 * *hint (the last answer) in steps that double, then narrowed by a binary search: events
 * come in file order, mostly in time order, so the answer is usually a few probes away
 * (a plain binary search over every gap's probes per event was most of this index's
 * cost on a launch-heavy trace). The answer, and so *hint, is the same either way. */
static bool spans_probe(const tl_host *h, size_t *hint, double ts, double end) {
  return ut_holds_near_f64(h->probes, h->n_probes, hint, ts, end);
}

static bool append(thread_items *ti, double ts, double dur, uint32_t ref, uint8_t kind) {
  item *v = ut_grow(ti->v, &ti->cap, ti->n + 1, sizeof *v);
  if (!v) return false;
  ti->v = v;
  ti->v[ti->n++] = (item){ts, ts + (dur > 0 ? dur : 0), ref, kind, -1};
  return true;
}

/* The events of one kind on the indexed threads. */
static bool collect_events(tl_host *h, tr_kind kind, uint8_t item_kind) {
  size_t n = 0;
  const tr_event *ev = tr_trace_events(h->t, kind, &n);
  h->ev[item_kind] = ev;
  size_t hint = 0;
  thread_memo m = THREAD_MEMO_INIT;
  for (size_t i = 0; i < n; i++) { /* the time first: most events span no probe */
    double dur = tr_event_dur(h->t, &ev[i]), ts = tr_event_ts(h->t, &ev[i]);
    if (!spans_probe(h, &hint, ts, ts + (dur > 0 ? dur : 0))) continue;
    long th = thread_memo_of(h, &m, tr_event_pid(h->t, &ev[i]), tr_event_tid(h->t, &ev[i]));
    if (th >= 0 && !append(&h->th[th], ts, dur, (uint32_t)i, item_kind)) return false;
  }
  return true;
}

/* The first frame after frame i of a thread's frames [.., end) that starts at or after e,
 * galloping from i + 1 (most frames hold few others). */
static size_t past_nested(const tr_trace *t, const tr_pyframe *py, size_t i, size_t end, double e) {
  size_t lo = i + 1, step = 1, out;
  while (lo + step - 1 < end && tr_pyframe_ts(t, &py[lo + step - 1]) < e) {
    lo += step;
    step *= 2;
  }
  size_t hi = lo + step - 1 < end ? lo + step - 1 : end;
  UT_PARTITION_POINT(out, lo, hi, k, tr_pyframe_ts(t, &py[k]) < e);
  return out;
}

/* The frames of the indexed threads that span a probe. A thread's frames are its Python
 * call stack over time: when they come by start (tr_trace_pyframes_sorted), those starting
 * inside a frame are called from it and end inside it, so a frame spanning no probe holds
 * none that does, and they are skipped by a search (the walk over every frame of a
 * Python-heavy trace was most of the time account's cost on vLLM). */
static bool collect_frames(tl_host *h) {
  size_t n = 0, nruns = 0;
  h->py = tr_trace_pyframes(h->t, &n);
  const tr_pyframe_run *runs = tr_trace_pyframe_runs(h->t, &nruns);
  bool nested = tr_trace_pyframes_sorted(h->t);
  size_t hint = 0;
  for (size_t j = 0; j < nruns; j++) {
    long th = thread_of(h, runs[j].pid, runs[j].tid);
    size_t end = j + 1 < nruns ? runs[j + 1].first : n;
    for (size_t i = runs[j].first; th >= 0 && i < end;) {
      double ts = tr_pyframe_ts(h->t, &h->py[i]), dur = tr_pyframe_dur(h->t, &h->py[i]);
      double e = ts + (dur > 0 ? dur : 0);
      if (spans_probe(h, &hint, ts, e)) {
        if (!append(&h->th[th], ts, dur, (uint32_t)i, ITEM_FRAME)) return false;
        i++;
      } else {
        i = nested ? past_nested(h->t, h->py, i, end, e) : i + 1;
      }
    }
  }
  return true;
}

/* The runtime calls of the indexed threads that matcher mt names and that last at least
 * min_us, appended to each thread's setup list, or its syncs list (syncs), asked once per
 * name; *added: how many. */
static bool collect_calls(tl_host *h, const te_matcher *mt, double min_us, bool syncs,
                          size_t *added) {
  size_t n = 0, n_str = tr_trace_string_count(h->t);
  const tr_event *ev = tr_trace_events(h->t, TR_KIND_RUNTIME, &n);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1); /* 0 unasked, 1 no, 2 yes */
  bool ok = memo != NULL;
  thread_memo m = THREAD_MEMO_INIT;
  *added = 0;
  for (size_t i = 0; ok && i < n; i++) {
    double dur = tr_event_dur(h->t, &ev[i]);
    if (dur < min_us) continue;
    long th = thread_memo_of(h, &m, tr_event_pid(h->t, &ev[i]), tr_event_tid(h->t, &ev[i]));
    if (th < 0) continue;
    uint8_t *x = &memo[ev[i].name];
    if (!*x) {
      const char *name = tr_str_get(h->t, ev[i].name);
      *x = te_matcher_match(mt, name, strlen(name)) ? 2 : 1;
    }
    if (*x != 2) continue;
    thread_items *ti = &h->th[th];
    item **list = syncs ? &ti->syncs : &ti->setup;
    size_t *len = syncs ? &ti->n_syncs : &ti->n_setup,
           *cap = syncs ? &ti->cap_syncs : &ti->cap_setup;
    item *v = ut_grow(*list, cap, *len + 1, sizeof *v);
    if (!(ok = v != NULL)) break;
    *list = v;
    double ts = tr_event_ts(h->t, &ev[i]);
    v[(*len)++] = (item){ts, ts + (dur > 0 ? dur : 0), (uint32_t)i, ITEM_RUNTIME, -1};
    ++*added;
  }
  free(memo);
  return ok;
}

/* The runtime calls of the indexed threads the setup_call matcher names, whatever their
 * time (a cudaMalloc inside a gap spans no probe). */
static bool collect_setup(tl_host *h) {
  size_t added = 0;
  return !h->setup || collect_calls(h, h->setup, -INFINITY, false, &added);
}

/* The GPU events (h->kev) matcher mt names into by_corr: correlation -> index + 1, the
 * matcher asked once per name. False when out of memory. */
static bool copies_by_corr(tl_host *h, const te_matcher *mt, ut_u64map *by_corr) {
  size_t n = 0, n_str = tr_trace_string_count(h->t);
  const tr_event *ev = h->kev = tr_trace_events(h->t, TR_KIND_KERNEL, &n);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1); /* 0 unasked, 1 no, 2 yes */
  bool ok = memo != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    uint8_t *x = &memo[ev[i].name];
    if (!*x) {
      const char *name = tr_str_get(h->t, ev[i].name);
      *x = te_matcher_match(mt, name, strlen(name)) ? 2 : 1;
    }
    int64_t corr = *x == 2 ? tr_event_correlation(h->t, &ev[i]) : TR_NO_ID;
    if (corr != TR_NO_ID) ok = ut_u64map_put(by_corr, (uint64_t)corr, i + 1);
  }
  free(memo);
  return ok;
}

/* The copies to or from pageable host memory (matcher pageable_copy on the GPU event), by
 * correlation, and the threads that issued them: a thread still copying on the host in one
 * while the GPU idles before a kernel with no launch record stalls the step
 * (blocked_portion). */
static bool collect_pageable(tl_host *h) {
  if (!h->pageable) return true;
  size_t nr = 0;
  bool ok = copies_by_corr(h, h->pageable, &h->pageable_corr);
  const tr_event *rt =
      ok && h->pageable_corr.n ? tr_trace_events(h->t, TR_KIND_RUNTIME, &nr) : NULL;
  uint64_t v;
  for (size_t i = 0; ok && i < nr; i++) {
    int64_t corr = tr_event_correlation(h->t, &rt[i]);
    if (corr != TR_NO_ID && ut_u64map_get(&h->pageable_corr, (uint64_t)corr, &v))
      ok = add_thread(h, &rt[i]);
  }
  return ok;
}

/* The calls to or from pageable memory of at least timeline.long_gap_us whose own GPU copy
 * took under timeline.readback_max_copy_pct of them (tl_readback), each with a probe at its
 * middle so the op, region and frame around it are indexed. After collect_pageable. */
static bool collect_readbacks(tl_host *h) {
  size_t nr = 0;
  const tr_event *rt = h->pageable_corr.n ? tr_trace_events(h->t, TR_KIND_RUNTIME, &nr) : NULL;
  uint64_t v;
  for (size_t i = 0; i < nr; i++) {
    double ts = tr_event_ts(h->t, &rt[i]), dur = tr_event_dur(h->t, &rt[i]);
    int64_t corr = tr_event_correlation(h->t, &rt[i]);
    if (dur < h->long_gap_us || corr == TR_NO_ID ||
        !ut_u64map_get(&h->pageable_corr, (uint64_t)corr, &v))
      continue;
    double gpu = tr_event_dur(h->t, &h->kev[v - 1]);
    if (gpu < 0 || gpu * 100.0 >= h->readback_max_copy_pct * dur) continue; /* it copied */
    if (h->n_readbacks >= AN_MAX_READBACKS) break;
    tl_readback *x = ut_grow(h->readbacks, &h->cap_readbacks, h->n_readbacks + 1, sizeof *x);
    if (!x) return false;
    h->readbacks = x;
    x[h->n_readbacks++] = (tl_readback){.call_ev = (uint32_t)i,
                                        .copy = (uint32_t)(v - 1),
                                        .ts = tl_ns(ts),
                                        .end = tl_ns(ts + dur),
                                        .bytes = TR_NO_ID};
  }
  if (!h->n_readbacks) return true;
  double *p = realloc(h->probes, (h->n_probes + h->n_readbacks + 1) * sizeof *p);
  if (!p) return false;
  h->probes = p;
  for (size_t i = 0; i < h->n_readbacks; i++)
    h->probes[h->n_probes++] =
        ((double)h->readbacks[i].ts + (double)(h->readbacks[i].end - h->readbacks[i].ts) / 2) /
        1000.0;
  return true;
}

/* A decimal integer arg of a kernel-kind event (TR_NO_ID when absent or not one). */
static int64_t int_arg(const tr_trace *t, const tr_event *e, tr_arg key) {
  const char *s = tr_str_get(t, tr_event_arg(t, TR_KIND_KERNEL, e, key));
  char *end;
  long long v = s && *s ? strtoll(s, &end, 10) : 0;
  return s && *s && !*end ? (int64_t)v : TR_NO_ID;
}

static int cmp_wait(const void *pa, const void *pb) {
  const struct tl_wait *a = pa, *b = pb;
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  return a->ts < b->ts ? -1 : (a->ts > b->ts);
}

/* The streams' waits on events (Kineto's cuda_sync "Stream Wait Event" records, kept among
 * the GPU events, which the analysis drops as kernels: matcher not_a_kernel) and the
 * cudaEventRecord calls they wait on (event_wait_portion). A host-side event sync has the
 * same args and no stream (-1): no stream waits there. */
static bool collect_waits(tl_host *h) {
  const te_matcher *sync_cat = te_rules_matcher(h->rules, "not_a_kernel");
  size_t n = 0, nr = 0, n_str = tr_trace_string_count(h->t);
  const tr_event *ev = tr_trace_events(h->t, TR_KIND_KERNEL, &n);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1); /* by category: 0 unasked, 1 no, 2 yes */
  bool ok = memo != NULL;
  size_t cap = 0;
  for (size_t i = 0; ok && sync_cat && i < n; i++) {
    tr_str cat = tr_event_cat(h->t, &ev[i]);
    if (!memo[cat]) {
      const char *s = tr_str_get(h->t, cat);
      memo[cat] = te_matcher_match(sync_cat, s, strlen(s)) ? 2 : 1;
    }
    if (memo[cat] != 2) continue;
    int64_t record = int_arg(h->t, &ev[i], TR_ARG_WAIT_ON_RECORD_CORR);
    const char *stream = tr_str_get(h->t, tr_event_stream(h->t, &ev[i]));
    if (record == TR_NO_ID || record < 0 || !stream || !*stream || *stream == '-')
      continue; /* -1: an event never recorded; a host-side sync */
    struct tl_wait *v = ut_grow(h->waits, &cap, h->n_waits + 1, sizeof *v);
    if (!(ok = v != NULL)) break;
    h->waits = v;
    h->waits[h->n_waits++] =
        (struct tl_wait){tr_event_stream(h->t, &ev[i]),
                         tr_event_arg(h->t, TR_KIND_KERNEL, &ev[i], TR_ARG_WAIT_ON_STREAM),
                         tr_event_ts(h->t, &ev[i]), record};
    ok = ut_u64map_put(&h->records, (uint64_t)record, 0);
  }
  free(memo);
  if (!ok || !h->n_waits) return ok;
  qsort(h->waits, h->n_waits, sizeof *h->waits, cmp_wait);
  const tr_event *rt = tr_trace_events(h->t, TR_KIND_RUNTIME, &nr);
  uint64_t v;
  for (size_t i = 0; ok && i < nr; i++) {
    int64_t corr = tr_event_correlation(h->t, &rt[i]);
    if (corr != TR_NO_ID && ut_u64map_get(&h->records, (uint64_t)corr, &v))
      ok = ut_u64map_put(&h->records, (uint64_t)corr, i + 1);
  }
  return ok;
}

/* (start, -end, kind, ref): a frame encloses the op it calls at equal times. */
static int cmp_item(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const item *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if (a->end != b->end) return a->end > b->end ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  return a->ref < b->ref ? -1 : (a->ref > b->ref);
}

/* Sorts a thread's items and links each to the innermost item still open at its start.
 * The items' room is trimmed first: the gaps' portions are allocated next. */
static bool link_items(thread_items *ti) {
  ti->v = ut_shrink(ti->v, &ti->cap, ti->n, sizeof *ti->v);
  ut_sort(ti->v, ti->n, sizeof *ti->v, cmp_item, NULL);
  int32_t stack[TL_MAX_DEPTH];
  size_t depth = 0;
  for (size_t i = 0; i < ti->n; i++) {
    while (depth && ti->v[stack[depth - 1]].end < ti->v[i].ts) depth--;
    ti->v[i].parent = depth ? stack[depth - 1] : -1;
    if (depth < TL_MAX_DEPTH) stack[depth++] = (int32_t)i;
  }
  return true;
}

static bool make_probes(tl_host *h, const tl_gap *gaps, size_t n) {
  h->probes = malloc((6 * n + 1) * sizeof *h->probes); /* and release_probes' */
  if (!h->probes) return false;
  for (size_t i = 0; i < n; i++) {
    double g0 = (double)gaps[i].g0 / 1000.0;
    if (gaps[i].outside) { /* only its middle is asked (tl_host_outside) */
      h->probes[h->n_probes++] = (double)(gaps[i].g0 + (gaps[i].g1 - gaps[i].g0) / 2) / 1000.0;
      continue;
    }
    h->probes[h->n_probes++] = g0;
    h->probes[h->n_probes++] = g0 - h->sync_tol_us;
    if (!gaps[i].launch) continue;
    double lts = tr_event_ts(h->t, gaps[i].launch), lend = lts + tr_event_dur(h->t, gaps[i].launch);
    h->probes[h->n_probes++] = lts;
    /* the queue portion's start, when inside the gap (blocked_portion) */
    if (lend > g0 && lend < (double)gaps[i].g1 / 1000.0) h->probes[h->n_probes++] = lend;
    /* a long host portion's middle: the longest operation inside it spans it */
    if (lts - g0 >= h->long_gap_us) h->probes[h->n_probes++] = g0 + (lts - g0) / 2;
  }
  return true;
}

/* The thread's latest setup call handing memory back (matcher allocator_release) that
 * ended in (g->lead_from, g->g0]: since the previous counted step, before the GPU ran dry:
 * an alloc stall's lead (tl_extra), -1 when none (a stage window: no step to lead into).
 * By thread_items.release, O(log n). */
static long release_lead(const thread_items *ti, const tl_gap *g) {
  double g0 = (double)g->g0 / 1000.0;
  if (!ti->release || g->lead_from != g->lead_from) return -1;
  size_t lo; /* first call starting at or after g0 */
  UT_PARTITION_POINT(lo, 0, ti->n_setup, mid, ti->setup[mid].ts < g0);
  long r = lo ? ti->release[lo - 1] : -1;
  if (r >= 0 && ti->setup[r].end > g0) r = r ? ti->release[r - 1] : -1; /* spans g0 */
  return r >= 0 && ti->setup[r].end > g->lead_from ? r : -1;
}

/* Each thread's latest release call among its setup calls so far (thread_items.release),
 * then a probe at the middle of each gap's release lead (release_lead), so the annotation
 * around it is indexed; then the probes are sorted. After collect_setup. */
static bool release_probes(tl_host *h, const tl_gap *gaps, size_t n) {
  size_t nr = 0; /* before collect_events: the runtime calls as the trace holds them */
  const tr_event *rt = tr_trace_events(h->t, TR_KIND_RUNTIME, &nr);
  for (size_t t = 0; h->release && t < h->n_th; t++) {
    thread_items *ti = &h->th[t];
    if (!ti->n_setup) continue;
    if (!(ti->release = malloc(ti->n_setup * sizeof *ti->release))) return false;
    for (size_t i = 0; i < ti->n_setup; i++) {
      const char *name = tr_str_get(h->t, rt[ti->setup[i].ref].name);
      ti->release[i] = te_matcher_match(h->release, name, strlen(name)) ? (long)i
                       : i                                              ? ti->release[i - 1]
                                                                        : -1;
    }
  }
  long last_th = -1, last = -1;
  for (size_t i = 0; i < n; i++) {
    if (!gaps[i].launch) continue;
    long th = thread_of(h, tr_event_pid(h->t, gaps[i].launch), tr_event_tid(h->t, gaps[i].launch));
    long r = th >= 0 ? release_lead(&h->th[th], &gaps[i]) : -1;
    if (r < 0 || (th == last_th && r == last)) continue; /* one probe per lead */
    const item *x = &h->th[th].setup[r];
    h->probes[h->n_probes++] = x->ts + (x->end - x->ts) / 2;
    last_th = th;
    last = r;
  }
  ut_sort_f64(h->probes, h->n_probes); /* qsort's calls were most of make_probes */
  return true;
}

/* The calls of the indexed threads that issued a copy over the host link (matcher
 * host_link_copy on the GPU copy), whatever their time, each with its GPU copy
 * (thread_items.copies): what a sync after one under the same CPU op waited for
 * (sync_extra). Only when the packs name syncs. */
static bool collect_host_copies(tl_host *h) {
  if (!h->sync || !h->host_copy) return true;
  size_t nr = 0;
  ut_u64map by_corr = {0};
  bool ok = copies_by_corr(h, h->host_copy, &by_corr);
  const tr_event *rt = ok && by_corr.n ? tr_trace_events(h->t, TR_KIND_RUNTIME, &nr) : NULL;
  thread_memo m = THREAD_MEMO_INIT;
  uint64_t v;
  for (size_t i = 0; ok && i < nr; i++) {
    int64_t corr = tr_event_correlation(h->t, &rt[i]);
    if (corr == TR_NO_ID || !ut_u64map_get(&by_corr, (uint64_t)corr, &v)) continue;
    long th = thread_memo_of(h, &m, tr_event_pid(h->t, &rt[i]), tr_event_tid(h->t, &rt[i]));
    if (th < 0) continue;
    thread_items *ti = &h->th[th];
    item *c = ut_grow(ti->copies, &ti->cap_copies, ti->n_copies + 1, sizeof *c);
    if (!(ok = c != NULL)) break;
    ti->copies = c;
    double ts = tr_event_ts(h->t, &rt[i]);
    c[ti->n_copies++] = (item){ts, ts, (uint32_t)(v - 1), ITEM_RUNTIME, -1};
  }
  ut_u64map_free(&by_corr);
  for (size_t t = 0; ok && t < h->n_th; t++)
    ut_sort(h->th[t].copies, h->th[t].n_copies, sizeof *h->th[t].copies, cmp_item, NULL);
  return ok;
}

/* The synchronising runtime calls of the indexed threads (thread_items.syncs) that blocked
 * at least timeline.launch_gap_max_us, each with a probe at its middle (so the op and frame
 * around it are indexed, shadow_portion): a sync that returned at once drained no queue. */
static bool collect_syncs(tl_host *h) {
  size_t added = 0;
  if (!h->sync) return true;
  bool ok = collect_calls(h, h->sync, h->launch_gap_max_us, true, &added);
  double *p = ok && added ? realloc(h->probes, (h->n_probes + added + 1) * sizeof *p) : h->probes;
  if (!(ok = ok && p)) return false;
  h->probes = p;
  for (size_t t = 0; t < h->n_th; t++) {
    thread_items *ti = &h->th[t];
    if (!ti->n_syncs) continue;
    ut_sort(ti->syncs, ti->n_syncs, sizeof *ti->syncs, cmp_item, NULL);
    if (!(ti->left = malloc(ti->n_syncs * sizeof *ti->left))) return false;
    for (size_t i = 0; i < ti->n_syncs; i++) {
      ti->left[i] = ti->syncs[i].end - ti->syncs[i].ts;
      h->probes[h->n_probes++] = ti->syncs[i].ts + (ti->syncs[i].end - ti->syncs[i].ts) / 2;
    }
  }
  return true;
}

tl_host *tl_host_create(const an_trace_view *view, const te_rules *rules, an_strtab *strings,
                        const tl_gap *gaps, size_t n) {
  tl_host *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  const te_settings *s = te_rules_settings(rules);
  const tr_trace *t = view->trace;
  *h = (tl_host){.t = t,
                 .view = view,
                 .rules = rules,
                 .strings = strings,
                 .sync = te_rules_matcher(rules, "host_sync"),
                 .step = te_rules_matcher(rules, "step_annotation"),
                 .setup = te_rules_matcher(rules, "setup_call"),
                 .await = te_rules_matcher(rules, "host_collective_wait"),
                 .pageable = te_rules_matcher(rules, "pageable_copy"),
                 .release = te_rules_matcher(rules, "allocator_release"),
                 .host_copy = te_rules_matcher(rules, "host_link_copy"),
                 .api_frame = te_rules_matcher(rules, "host_api_frame"),
                 .designed = te_rules_matcher(rules, "designed_sync_frame"),
                 .readback = te_rules_matcher(rules, "readback_copy"),
                 .launch_gap_max_us = s->timeline_launch_gap_max_us,
                 .sync_tol_us = s->timeline_sync_tolerance_us,
                 .setup_min_pct = s->timeline_setup_min_pct,
                 .module_load_min_us = s->timeline_module_load_min_us,
                 .untraced_min_pct = s->timeline_untraced_min_pct,
                 .unrecorded_calls_min = s->timeline_unrecorded_calls_min,
                 .readback_max_copy_pct = s->timeline_readback_max_copy_pct,
                 .long_gap_us = s->timeline_long_gap_us};
  h->n_str = tr_trace_string_count(t);
  h->is_sync = calloc(h->n_str ? h->n_str : 1, 1);
  h->is_step = calloc(h->n_str ? h->n_str : 1, 1);
  h->is_await = calloc(h->n_str ? h->n_str : 1, 1);
  bool ok = h->is_sync && h->is_step && h->is_await && make_probes(h, gaps, n);
  for (size_t i = 0; ok && i < n; i++) ok = !gaps[i].launch || add_thread(h, gaps[i].launch);
  ok = ok && collect_pageable(h) && collect_setup(h); /* every thread it indexes is added */
  ok = ok && collect_readbacks(h);
  ok = ok && collect_host_copies(h);
  for (size_t i = 0; ok && i < h->n_th; i++)
    ut_sort(h->th[i].setup, h->th[i].n_setup, sizeof *h->th[i].setup, cmp_item, NULL);
  ok = ok && collect_syncs(h);
  ok = ok && release_probes(h, gaps, n);
  ok = ok && collect_waits(h);
  ok = ok && collect_events(h, TR_KIND_CPU_OP, ITEM_OP) &&
       collect_events(h, TR_KIND_LAUNCH, ITEM_LAUNCH) &&
       collect_events(h, TR_KIND_RUNTIME, ITEM_RUNTIME) &&
       collect_events(h, TR_KIND_USER_ANNOTATION, ITEM_ANNOTATION) && collect_frames(h);
  for (size_t i = 0; ok && i < h->n_th; i++) ok = link_items(&h->th[i]);
  if (ok) return h;
  tl_host_destroy(h);
  return NULL;
}

void tl_host_destroy(tl_host *h) {
  if (!h) return;
  for (size_t i = 0; i < h->n_th; i++) {
    free(h->th[i].v);
    free(h->th[i].setup);
    free(h->th[i].release);
    free(h->th[i].syncs);
    free(h->th[i].left);
    free(h->th[i].copies);
  }
  free(h->th);
  free(h->probes);
  free(h->extras);
  for (size_t i = 0; i < h->n_frames; i++) free(h->frames[i].norm);
  free(h->frames);
  ut_u64map_free(&h->frame_of);
  free(h->is_sync);
  free(h->is_step);
  free(h->is_await);
  ut_u64map_free(&h->threads);
  ut_u64map_free(&h->pageable_corr);
  ut_u64map_free(&h->records);
  free(h->readbacks);
  free(h->waits);
  free(h->calls);
  free(h->ids);
  free(h);
}

/* ---------------------------------------------------------------- queries */

static tr_str item_name(const tl_host *h, const item *it) {
  return it->kind == ITEM_FRAME ? h->py[it->ref].name : h->ev[it->kind][it->ref].name;
}

/* Whether item it spans [a, b]: an annotation opened inside a frame and closed after it
 * nests under that frame by start, yet the frame does not span what follows. */
static bool spans(const item *it, double a, double b) { return it->ts <= a && it->end >= b; }

/* The innermost item of ti spanning [a, b] (a <= b), or -1. */
static long innermost(const thread_items *ti, double a, double b) {
  size_t lo; /* first item starting after a */
  UT_PARTITION_POINT(lo, 0, ti->n, mid, ti->v[mid].ts <= a);
  long i = (long)lo - 1;
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent)
    if (spans(&ti->v[i], a, b)) return i;
  return -1;
}

/* Frame name s's normalised form and frame_priority score, worked out once per name: the
 * packs' path rewrites searched over a long path, twice a call, were a tenth of the time
 * account's instructions on HF Qwen x 5 (1,345 calls, 9,300 instructions each). NULL when
 * out of memory. */
static const struct frame_memo *frame_of(tl_host *h, tr_str s) {
  uint64_t at;
  if (ut_u64map_get(&h->frame_of, s, &at)) return &h->frames[at];
  char buf[1024];
  const char *raw = tr_str_get(h->t, s);
  size_t len = te_rules_normalize_frame(h->rules, raw, buf, sizeof buf);
  if (len >= sizeof buf) len = sizeof buf - 1;
  struct frame_memo *v = ut_grow(h->frames, &h->cap_frames, h->n_frames + 1, sizeof *v);
  char *norm = v ? malloc(len + 1) : NULL;
  if (v) h->frames = v;
  if (!norm) return NULL;
  memcpy(norm, buf, len + 1);
  v[h->n_frames] =
      (struct frame_memo){norm, len, te_rules_score(h->rules, "frame_priority", raw, buf, NULL, 0),
                          h->api_frame && te_matcher_match(h->api_frame, buf, len),
                          h->designed && te_matcher_match(h->designed, buf, len)};
  if (!ut_u64map_put(&h->frame_of, s, h->n_frames)) {
    free(norm);
    return NULL;
  }
  return &h->frames[h->n_frames++];
}

/* The best Python frame among i and its ancestors spanning [a, b] (frame_priority; ties:
 * the innermost), normalised and interned; NULL when none. A frame of the library's own
 * wrapper of the call (matcher host_api_frame: torch/cuda/__init__.py synchronize) is the
 * call, not where the code makes it: a user cannot act on torch's line, so its caller is
 * the location (review 13: hf's sync read "torch/cuda/__init__.py:975", the harness line
 * that called it was never named). */
static const char *best_frame(tl_host *h, const thread_items *ti, long i, double a, double b) {
  const char *best = NULL;
  int best_score = 0;
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent) {
    if (ti->v[i].kind != ITEM_FRAME || !spans(&ti->v[i], a, b)) continue;
    const struct frame_memo *f = frame_of(h, item_name(h, &ti->v[i]));
    if (!f || f->api || (best && f->score <= best_score)) continue;
    best = an_strtab_intern(h->strings, f->norm, f->len);
    best_score = f->score;
  }
  return best;
}

/* Whether matcher m names item it, asked once per name (memo, by string id). */
static bool item_matches(const tl_host *h, const te_matcher *m, uint8_t *memo, const item *it) {
  tr_str s = item_name(h, it);
  if (!m) return false;
  if (s < h->n_str && memo[s]) return memo[s] == 2;
  const char *name = tr_str_get(h->t, s);
  bool hit = te_matcher_match(m, name, strlen(name));
  if (s < h->n_str) memo[s] = hit ? 2 : 1;
  return hit;
}

/* Whether an annotation item is a step marker (matcher step_annotation): the step itself
 * names no cause. */
static bool names_step(const tl_host *h, const item *it) {
  return item_matches(h, h->step, h->is_step, it);
}

/* The innermost CPU op or runtime call among i and its ancestors, else the innermost user
 * annotation (a step's phase: "## sparse_data_dist ##"); outermost: the outermost CPU op
 * instead (the user-level op around a synchronising call). */
static const char *op_name(tl_host *h, const thread_items *ti, long i, double a, double b,
                           bool outermost) {
  const char *name = NULL, *annotation = NULL;
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent) {
    const item *it = &ti->v[i];
    if (!spans(it, a, b)) continue;
    if (it->kind == ITEM_ANNOTATION && !annotation && !names_step(h, it))
      annotation = tr_str_get(h->t, item_name(h, it));
    if (it->kind == ITEM_FRAME || it->kind == ITEM_ANNOTATION) continue;
    if (outermost && name && it->kind != ITEM_OP) continue;
    name = tr_str_get(h->t, item_name(h, it));
    if (!outermost) break;
  }
  if (!name && !outermost) name = annotation;
  return name ? an_strtab_cstr(h->strings, name) : NULL;
}

/* A synchronising call (matcher host_sync) spanning the moment the GPU ran dry (within
 * timeline.sync_tolerance_us) and returned before the launch: its item, or -1. */
static long sync_item(tl_host *h, const thread_items *ti, double g0, double lts) {
  if (!h->sync) return -1;
  const double probes[2] = {g0, g0 - h->sync_tol_us};
  for (int p = 0; p < 2; p++) {
    long i = innermost(ti, probes[p], probes[p]);
    for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent) {
      const item *it = &ti->v[i];
      if (it->kind == ITEM_FRAME || it->kind == ITEM_ANNOTATION || it->end > lts) continue;
      if (item_matches(h, h->sync, h->is_sync, it)) return i;
    }
  }
  return -1;
}

/* The innermost item among i and its ancestors spanning [a, b] that waits on a collective's
 * result (matcher host_collective_wait), or -1. */
static long await_item(tl_host *h, const thread_items *ti, long i, double a, double b) {
  if (!h->await) return -1;
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent)
    if (spans(&ti->v[i], a, b) && item_matches(h, h->await, h->is_await, &ti->v[i])) return i;
  return -1;
}

/* The time setup calls of the thread take inside [a, b) (us), and the longest of them
 * (*longest, -1 when none). Calls of one thread do not overlap, so their ends ascend too. */
static double setup_time(const thread_items *ti, double a, double b, long *longest) {
  size_t lo; /* first call starting at or after b */
  UT_PARTITION_POINT(lo, 0, ti->n_setup, mid, ti->setup[mid].ts < b);
  double in = 0, best = 0;
  *longest = -1;
  for (size_t i = lo; i-- > 0 && ti->setup[i].end > a;) {
    double s = ti->setup[i].ts > a ? ti->setup[i].ts : a;
    double e = ti->setup[i].end < b ? ti->setup[i].end : b;
    if (e <= s) continue;
    in += e - s;
    if (e - s > best) {
      best = e - s;
      *longest = (long)i;
    }
  }
  return in;
}

static const char *interned(tl_host *h, const thread_items *ti, long i) {
  return an_strtab_cstr(h->strings, tr_str_get(h->t, item_name(h, &ti->v[i])));
}

/* The outermost user annotation spanning [a, b] among i and its ancestors, other than a
 * step marker, or -1. */
static long outer_region(const tl_host *h, const thread_items *ti, long i, double a, double b) {
  long best = -1;
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent)
    if (ti->v[i].kind == ITEM_ANNOTATION && spans(&ti->v[i], a, b) && !names_step(h, &ti->v[i]))
      best = i;
  return best;
}

/* The outermost CPU op, runtime call or annotation under i spanning time m, or -1. */
static long child_at(const thread_items *ti, long i, double m) {
  long best = -1, j = innermost(ti, m, m);
  for (size_t k = 0; j >= 0 && j != i && k < TL_MAX_DEPTH; k++, j = ti->v[j].parent)
    if (ti->v[j].kind != ITEM_FRAME) best = j;
  return j == i ? best : -1; /* not under i: the middle lies outside it */
}

/* Records x as portion p's extra; out of memory, p keeps its cause without it. */
static void add_extra(tl_host *h, const tl_extra *x, tl_portion *p) {
  tl_extra *v = ut_grow(h->extras, &h->cap_extras, h->n_extras + 1, sizeof *v);
  if (!v) return;
  h->extras = v;
  h->extras[h->n_extras++] = *x;
  p->extra = (uint32_t)h->n_extras;
}

/* A long host portion [g0, lts) under item i: its region and longest operation
 * (tl_extra), recorded when it has either. */
static void long_host(tl_host *h, const thread_items *ti, long i, double g0, double lts,
                      tl_portion *p) {
  if (i < 0) return;
  long r = outer_region(h, ti, i, g0, lts), c = child_at(ti, i, g0 + (lts - g0) / 2);
  tl_extra x = {.region = r >= 0 ? interned(h, ti, r) : NULL,
                .child = c >= 0 ? interned(h, ti, c) : NULL};
  if (x.region == p->what) x.region = NULL;
  if (x.region || x.child) add_extra(h, &x, p);
}

static const char *event_name(tl_host *h, const tr_event *e) {
  return e ? an_strtab_cstr(h->strings, tr_str_get(h->t, e->name)) : NULL;
}

/* Call i of h->calls or h->ids, and what the index orders it by. */
static const tr_event *call_event(const tl_host *h, uint32_t i) {
  return i < h->n_launch ? &h->call_ev[0][i] : &h->call_ev[1][i - h->n_launch];
}

static uint64_t call_thread(const tl_host *h, uint32_t i) {
  const tr_event *e = call_event(h, i);
  return thread_key(tr_event_pid(h->t, e), tr_event_tid(h->t, e));
}

static uint64_t call_process(const tl_host *h, uint32_t i) {
  return tr_event_pid(h->t, call_event(h, i));
}

static double call_ts(const tl_host *h, uint32_t i) { return tr_event_ts(h->t, call_event(h, i)); }

static int64_t call_corr(const tl_host *h, uint32_t i) {
  return tr_event_correlation(h->t, call_event(h, i));
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : (a > b); }

/* h->ids' order: process, id, then position */
static int cmp_call_id(const void *pa, const void *pb, void *ctx) {
  const tl_host *h = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  int c = cmp_u64(call_process(h, a), call_process(h, b));
  if (!c) c = cmp_u64((uint64_t)call_corr(h, a), (uint64_t)call_corr(h, b));
  return c ? c : cmp_u64(a, b);
}

/* h->calls' order within one thread: start, id, then position. */
static int cmp_thread_call(const void *pa, const void *pb, void *ctx) {
  const tl_host *h = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  int c = tr_event_ts_cmp(h->t, call_event(h, a), call_event(h, b));
  if (!c) c = cmp_u64((uint64_t)call_corr(h, a), (uint64_t)call_corr(h, b));
  return c ? c : cmp_u64(a, b);
}

typedef struct call_group {
  uint64_t key; /* call_thread */
  size_t at;    /* its size, then where its next call goes, then its end */
} call_group;

static int cmp_group(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const call_group *a = pa, *b = pb;
  return cmp_u64(a->key, b->key);
}

/* The group of thread key among g (slot: key -> index + 1), from *last, the group of the
 * call before: calls come in runs of one thread. -1 when none (out of memory before). */
static long group_of(const ut_u64map *slot, const call_group *g, size_t ng, size_t *last,
                     uint64_t key) {
  uint64_t k = 0;
  if (ng && g[*last].key == key) return (long)*last;
  if (!ut_u64map_get(slot, key, &k)) return -1;
  *last = k - 1;
  return (long)*last;
}

/* The threads of the first n calls with an id (call_event), by key ascending, each .at its
 * start in h->calls; *slot maps a key to its group + 1. NULL out of memory or with none. */
static call_group *call_groups(const tl_host *h, size_t n, ut_u64map *slot, size_t *ng) {
  call_group *g = NULL;
  size_t cap = 0, last = 0;
  *ng = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (call_corr(h, i) <= 0) continue;
    uint64_t key = call_thread(h, i);
    long k = group_of(slot, g, *ng, &last, key);
    if (k >= 0) {
      g[k].at++;
      continue;
    }
    call_group *w = ut_grow(g, &cap, *ng + 1, sizeof *g);
    if (!w || !ut_u64map_put(slot, key, *ng + 1)) {
      free(w ? w : g);
      return NULL;
    }
    g = w;
    g[last = (*ng)++] = (call_group){key, 1};
  }
  ut_sort(g, *ng, sizeof *g, cmp_group, NULL);
  for (size_t k = 0, at = 0; k < *ng; k++) {
    size_t size = g[k].at;
    g[k].at = at;
    at += size;
    if (!ut_u64map_put(slot, g[k].key, k + 1)) {
      free(g);
      return NULL;
    }
  }
  return g;
}

/* Whether the ids of h->calls[a, b), one thread's calls by start, rise with them (a
 * thread's calls take their ids in the order it makes them: every shared trace): then
 * that part of h->calls is in id order too. */
static bool ids_rise(const tl_host *h, size_t a, size_t b) {
  for (size_t i = a + 1; i < b; i++)
    if (call_corr(h, h->calls[i]) < call_corr(h, h->calls[i - 1])) return false;
  return true;
}

/* h->calls: the first n calls with an id, sorted by (thread, start, id, position). In file
 * order the threads interleave and Kineto writes a thread's stretches out of time order
 * (its buffer as it fills), so sorted as they came the merges met hundreds of runs, each
 * overlapping the others all along: on hta_async x 2 the sort asked cmp_call 0.5 million
 * times, 58 M instructions of its 1,144 M. Grouped by thread first (a counting sort that
 * keeps the file order: each thread's launch calls, then its runtime calls), each thread's
 * sort merges a dozen runs, with no thread to compare. False out of memory. */
static bool sort_calls(tl_host *h, size_t n, bool *by_thread) {
  ut_u64map slot = {0};
  size_t ng = 0, last = 0;
  call_group *g = call_groups(h, n, &slot, &ng);
  for (uint32_t i = 0; g && i < n; i++)
    if (call_corr(h, i) > 0) h->calls[g[group_of(&slot, g, ng, &last, call_thread(h, i))].at++] = i;
  *by_thread = true;
  for (size_t k = 0, at = 0; g && k < ng; at = g[k++].at) {
    ut_sort(h->calls + at, g[k].at - at, sizeof *h->calls, cmp_thread_call, h);
    *by_thread = *by_thread && ids_rise(h, at, g[k].at);
  }
  if (g && ng) h->n_calls = g[ng - 1].at; /* the calls with an id, grouped */
  ut_u64map_free(&slot);
  free(g);
  return g || !n;
}

/* h->calls (and h->ids when needed), once; false when the trace has none or memory ran
 * out (the count is then not told). */
static bool index_calls(tl_host *h) {
  if (h->calls_built) return h->n_calls > 0;
  h->calls_built = true;
  size_t nl = 0, nr = 0;
  h->call_ev[0] = tr_trace_events(h->t, TR_KIND_LAUNCH, &nl);
  h->call_ev[1] = tr_trace_events(h->t, TR_KIND_RUNTIME, &nr);
  h->n_launch = nl;
  if (nl + nr >= UINT32_MAX) return false; /* tr_event.index: never */
  h->calls = malloc((nl + nr + 1) * sizeof *h->calls);
  bool by_thread = true;
  if (!h->calls || !sort_calls(h, nl + nr, &by_thread)) {
    h->n_calls = 0;
    return false;
  }
  if (by_thread) return h->n_calls > 0;
  h->ids = malloc((h->n_calls + 1) * sizeof *h->ids);
  if (!h->ids) return false;
  memcpy(h->ids, h->calls, h->n_calls * sizeof *h->ids);
  ut_sort(h->ids, h->n_calls, sizeof *h->ids, cmp_call_id, h);
  return h->n_calls > 0;
}

/* Of process pid's calls in h->calls (its threads side by side, each in id order:
 * ids_rise), how many have ids in (a, b), and (*lo, *hi) its least and greatest id. */
static size_t ids_between_by_thread(const tl_host *h, uint64_t pid, int64_t a, int64_t b,
                                    size_t *all, int64_t *lo, int64_t *hi) {
  const uint32_t *v = h->calls;
  size_t p0, p1, n = 0;
  UT_PARTITION_POINT(p0, 0, h->n_calls, i, call_process(h, v[i]) < pid);
  UT_PARTITION_POINT(p1, p0, h->n_calls, i, call_process(h, v[i]) == pid);
  *all = p1 - p0;
  for (size_t s = p0, e; s < p1; s = e) {
    uint64_t th = call_thread(h, v[s]);
    size_t x, y;
    UT_PARTITION_POINT(e, s, p1, i, call_thread(h, v[i]) == th);
    UT_PARTITION_POINT(x, s, e, i, call_corr(h, v[i]) <= a);
    UT_PARTITION_POINT(y, x, e, i, call_corr(h, v[i]) < b);
    n += y - x;
    if (s == p0 || call_corr(h, v[s]) < *lo) *lo = call_corr(h, v[s]);
    if (s == p0 || call_corr(h, v[e - 1]) > *hi) *hi = call_corr(h, v[e - 1]);
  }
  return n;
}

/* The recorded calls of process pid whose ids lie in (a, b), and (*share) the share of the
 * ids outside [a, b) its recorded calls hold (1 when none is outside: no background). */
static size_t recorded_between(const tl_host *h, uint64_t pid, int64_t a, int64_t b,
                               double *share) {
  size_t all, between;
  int64_t first = 0, last = 0;
  if (!h->ids) {
    between = ids_between_by_thread(h, pid, a, b, &all, &first, &last);
  } else {
    const uint32_t *v = h->ids;
    size_t p0, p1, lo, hi;
    UT_PARTITION_POINT(p0, 0, h->n_calls, i, call_process(h, v[i]) < pid);
    UT_PARTITION_POINT(p1, p0, h->n_calls, i, call_process(h, v[i]) == pid);
    UT_PARTITION_POINT(lo, p0, p1, i, call_corr(h, v[i]) <= a);
    UT_PARTITION_POINT(hi, lo, p1, i, call_corr(h, v[i]) < b);
    all = p1 - p0;
    between = hi - lo;
    if (p1 > p0) {
      first = call_corr(h, v[p0]);
      last = call_corr(h, v[p1 - 1]);
    }
  }
  double outside = (double)all - (double)between - 2; /* a and b are recorded */
  double span = all ? (double)(last - first + 1) - (double)(b - a + 1) : 0;
  *share = outside > 0 && span > 0 ? fmin(1.0, outside / span) : 1.0;
  return between;
}

/* The runtime calls the process ran unrecorded across untraced stretch x of launch call L's
 * thread (tl_portion.unrecorded_calls; review 17 defect 10): correlation ids number the
 * process's calls in order, so of the thread's consecutive calls from the last before x to
 * the first after it, the pair the farthest apart skipped the ids between them. Those the
 * process's recorded calls hold ran on other threads, and so did as many unrecorded ones
 * as recorded calls elsewhere skip alongside them (the share of ids the process records
 * outside the jump: hta_async records 22 %); the rest bound the calls that ran unrecorded in
 * the stretch: at most, since the driver calls inside a runtime call and the calls Kineto
 * drops by design use up ids too, on this thread as well (review 20 defect 7). Only
 * a pair whose time lies mostly in x (timeline.untraced_min_pct) speaks of x (hta_async's
 * backward thread's calls 42 ms apart bracket a 0.43 ms stretch). Told from
 * timeline.unrecorded_calls_min. */
static void unrecorded_calls(tl_host *h, const tr_event *L, const an_op_hole *x, tl_portion *p) {
  if (!index_calls(h)) return;
  const uint32_t *v = h->calls;
  uint64_t th = thread_key(tr_event_pid(h->t, L), tr_event_tid(h->t, L));
  size_t lo, hi, n = h->n_calls;
  UT_PARTITION_POINT(
      lo, 0, n, i,
      call_thread(h, v[i]) < th || (call_thread(h, v[i]) == th && call_ts(h, v[i]) < x->ts));
  UT_PARTITION_POINT(hi, lo, n, i, call_thread(h, v[i]) == th && call_ts(h, v[i]) < x->end);
  if (!lo || call_thread(h, v[lo - 1]) != th || hi >= n || call_thread(h, v[hi]) != th) return;
  size_t best = lo;
  int64_t jump = call_corr(h, v[lo]) - call_corr(h, v[lo - 1]);
  for (size_t k = lo + 1; k <= hi; k++) {
    int64_t d = call_corr(h, v[k]) - call_corr(h, v[k - 1]);
    if (d > jump) {
      best = k;
      jump = d;
    }
  }
  int64_t a = call_corr(h, v[best - 1]), b = call_corr(h, v[best]);
  double ats = call_ts(h, v[best - 1]), bts = call_ts(h, v[best]);
  double in_x = fmin(bts, x->end) - fmax(ats, x->ts);
  if (b - a <= 1 || in_x * 100.0 < h->untraced_min_pct * (bts - ats)) return;
  double share;
  size_t rec = recorded_between(h, tr_event_pid(h->t, L), a, b, &share);
  double skipped = (double)(b - a - 1) - (double)rec;
  double background = (double)rec * (1.0 - share) / share;
  int64_t calls = (int64_t)llround(skipped - background);
  if (calls < h->unrecorded_calls_min) return;
  p->unrecorded_calls = calls;
  p->corr_from = a;
  p->corr_to = b;
}

/* A host portion [g0, lts) that nothing of its thread spans, ended by launch call L: where
 * the thread went untraced (tl_portion before, after), when its longest stretch with no CPU
 * op holds timeline.untraced_min_pct of the portion and the thread ran an op before it: a
 * thread's first op (an autograd engine thread starting its backward) follows no code of
 * that thread the profiler missed, only the thread's start, an edge of its capture. The ops around
 * that stretch locate the code the profiler did not see (review 10:
 * hta_event_sync_multistream's 18.8 ms between its 2nd and 3rd matmul, 96 % of the window, had no
 * item because no op was named). */
static void untraced_host(tl_host *h, const tr_event *L, double g0, double lts, tl_portion *p) {
  if (!h->ops) h->ops = an_trace_view_ops(h->view);
  an_op_hole hole;
  if (!h->ops || lts <= g0 ||
      !an_op_nest_hole(h->ops, tr_event_pid(h->t, L), tr_event_tid(h->t, L), g0, lts, &hole) ||
      !hole.before || (hole.end - hole.ts) * 100.0 < h->untraced_min_pct * (lts - g0))
    return;
  p->before = event_name(h, hole.before);
  p->after = event_name(h, hole.after ? hole.after : L);
  p->untraced_ns = tl_ns(hole.end - hole.ts);
  unrecorded_calls(h, L, &hole, p);
}

/* The event ordering the host issued at the end of untraced host portion p of gap g, before
 * launch call L (review 16 defect 2: hta_event_sync_multistream's 18.6 ms gap ends in a
 * cudaEventRecord and a cudaStreamWaitEvent, stream 24 waiting for stream 20, then the
 * matmul on stream 24): the latest wait of the next kernel's stream enqueued inside the gap
 * before L, on an event the host recorded inside the gap too, while no kernel ran: it
 * released at once, so it ordered the streams and held nothing; the idle is the host's
 * silence before it. p's event_stream / event_on_stream: the waiting stream and the one it
 * waited for. Nothing when there is no such wait. */
static void event_order(tl_host *h, const tl_gap *g, const tr_event *L, tl_portion *p) {
  if (!h->n_waits) return;
  size_t lo; /* first wait on the stream enqueued after the launch call */
  UT_PARTITION_POINT(
      lo, 0, h->n_waits, mid,
      h->waits[mid].stream < g->stream ||
          (h->waits[mid].stream == g->stream && h->waits[mid].ts <= tr_event_ts(h->t, L)));
  if (!lo || h->waits[lo - 1].stream != g->stream) return;
  const struct tl_wait *w = &h->waits[lo - 1];
  uint64_t r = 0;
  size_t nr = 0;
  if (tl_ns(w->ts) < g->g0 || !ut_u64map_get(&h->records, (uint64_t)w->record, &r) || !r) return;
  const tr_event *rec = &tr_trace_events(h->t, TR_KIND_RUNTIME, &nr)[r - 1];
  if (tl_ns(tr_event_ts(h->t, rec)) < g->g0) return; /* recorded before: it may have held */
  p->event_stream = an_strtab_cstr(h->strings, tr_str_get(h->t, w->stream));
  p->event_on_stream =
      w->on_stream ? an_strtab_cstr(h->strings, tr_str_get(h->t, w->on_stream)) : NULL;
}

const tl_extra *tl_host_extras(const tl_host *h, size_t *n) {
  *n = h->n_extras;
  return h->extras;
}

/* The host portion [g0, lts) as await: under a wait on a collective's result (around
 * the sync item s that ended the GPU's work, else around the whole portion), named by that
 * wait; false when none. TorchRec's awaitables sync on the splits, unpack and permute what
 * arrived, launch the backward all-to-all: neither per-op overhead nor a sync to remove, the
 * time follows the collectives (review 6: counted as host work, they inflated the host-bound
 * item's bound). */
static bool await_portion(tl_host *h, const thread_items *ti, long s, double g0, double lts,
                          tl_portion *p) {
  long w = s >= 0 ? await_item(h, ti, s, ti->v[s].ts, ti->v[s].end)
                  : await_item(h, ti, innermost(ti, g0, lts), g0, lts);
  if (w < 0) return false;
  p->kind = AN_IDLE_AWAIT;
  p->what = interned(h, ti, w);
  p->location = best_frame(h, ti, w, ti->v[w].ts, ti->v[w].end);
  return true;
}

/* What sync item s of portion p waited for, as its lever reads it (tl_extra child; review
 * 13: PARAM DLRM's aten::index waited on the copies of its CPU index tensors to the GPU and
 * was told "an output size that depends on the data"): the outermost CPU op around s that
 * is a sync itself (matcher host_sync: aten::item, aten::nonzero: the op needs a value the
 * GPU computes), else the copy over the host link the thread issued under the innermost CPU
 * op around s before it ("Memcpy HtoD (Pageable -> Device)": a CPU tensor copied to the
 * GPU, the thread waiting for the copy), else nothing (an explicit synchronize). */
static void sync_extra(tl_host *h, const thread_items *ti, long s, tl_portion *p) {
  long op = -1, named = -1;
  tl_extra x = {0};
  for (long i = s, k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent) {
    if (ti->v[i].kind != ITEM_OP) continue;
    if (op < 0) op = i;
    if (item_matches(h, h->sync, h->is_sync, &ti->v[i])) named = i;
  }
  if (named >= 0) {
    x.child = interned(h, ti, named);
  } else if (op >= 0 && ti->n_copies) {
    size_t lo; /* first copy call starting after the sync */
    UT_PARTITION_POINT(lo, 0, ti->n_copies, mid, ti->copies[mid].ts <= ti->v[s].ts);
    if (lo && ti->copies[lo - 1].ts >= ti->v[op].ts)
      x.child = event_name(h, &h->kev[ti->copies[lo - 1].ref]);
  }
  if (x.child) add_extra(h, &x, p);
}

/* The Python frame around sync item s where a framework waits by design (matcher
 * designed_sync_frame: SGLang's graph runner reading the batch back while its overlap
 * scheduler keeps the previous batch on the GPU), interned; NULL when none. Such a wait is
 * no sync to remove, and the GPU idle after it is the host's preparation of the next
 * launch (review 13 defect 2). */
static const char *designed_of(tl_host *h, const thread_items *ti, long s) {
  for (long i = s, k = 0; h->designed && i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent) {
    if (ti->v[i].kind != ITEM_FRAME) continue;
    const struct frame_memo *f = frame_of(h, item_name(h, &ti->v[i]));
    if (f && f->designed) return an_strtab_intern(h->strings, f->norm, f->len);
  }
  return NULL;
}

/* The GPU copy thread ti's call item s issued over the host link (thread_items.copies: the
 * call of the same start), as an index + 1 among h->kev; 0: none. */
static uint32_t copy_of(const thread_items *ti, const item *s) {
  size_t lo; /* first copy call starting at or after s */
  UT_PARTITION_POINT(lo, 0, ti->n_copies, mid, ti->copies[mid].ts < s->ts);
  return lo < ti->n_copies && ti->copies[lo].ts == s->ts ? ti->copies[lo].ref + 1 : 0;
}

/* Whether sync item s of thread ti lies in a framework's designed wait (designed_of): then
 * into d that frame and the blocking call itself: its name and outermost CPU op, and when
 * the call read back (its GPU copy matches readback_copy) that copy and its bytes (review
 * 22 defect 6: the read back's own line names them). */
static bool designed_wait(tl_host *h, const thread_items *ti, long s, tl_extra *d) {
  *d = (tl_extra){.designed = designed_of(h, ti, s)};
  if (!d->designed) return false;
  const item *x = &ti->v[s];
  d->designed_call = interned(h, ti, s);
  d->designed_op = op_name(h, ti, s, x->ts, x->end, true);
  if (d->designed_op == d->designed_call) d->designed_op = NULL;
  uint32_t c = x->kind == ITEM_RUNTIME && h->readback ? copy_of(ti, x) : 0;
  const char *copy = c ? event_name(h, &h->kev[c - 1]) : NULL;
  if (copy && te_matcher_match(h->readback, copy, strlen(copy))) { /* a read back */
    d->designed_copy = copy;
    int64_t bytes = int_arg(h->t, &h->kev[c - 1], TR_ARG_BYTES);
    d->designed_bytes = bytes > 0 ? bytes : 0;
  }
  return true;
}

/* Marks portion p as host work after a framework's designed wait d (tl_extra designed_*). */
static void mark_designed(tl_host *h, const tl_extra *d, tl_portion *p) {
  if (!p->extra) {
    add_extra(h, d, p);
    return;
  }
  tl_extra *e = &h->extras[p->extra - 1];
  e->designed = d->designed;
  e->designed_call = d->designed_call;
  e->designed_op = d->designed_op;
  e->designed_copy = d->designed_copy;
  e->designed_bytes = d->designed_bytes;
}

/* Host portion p of gap g in the shadow of a sync (brief 12 defect 2): the thread's latest
 * sync of at least timeline.launch_gap_max_us (thread_items.syncs) returned before the GPU
 * ran dry, and no kernel since sat queued that long (tl_gap.ahead): the queue the sync
 * drained is still empty, so this host work reaches the GPU as idle; without the sync the
 * lead the host had would hide it. The sync's item, named as one spanning the gap is; each
 * sync charges at most the time it blocked, the lead it drained, and only of the window's
 * own work (g->span0). A sync in a framework's designed wait charges none: *designed is
 * its frame, and the gap is the host work after it (review 13 defect 2). */
static bool shadow_portion(tl_host *h, const thread_items *ti, const tl_gap *g, tl_portion *p,
                           tl_extra *designed) {
  double g0 = (double)g->g0 / 1000.0;
  size_t lo; /* first sync starting at or after g0 */
  UT_PARTITION_POINT(lo, 0, ti->n_syncs, mid, ti->syncs[mid].ts < g0);
  long s = -1;
  for (size_t i = lo; i-- > 0;) /* syncs of one thread do not overlap: ends ascend too */
    if (ti->syncs[i].end <= g0) {
      s = (long)i;
      break;
    }
  double us = (double)p->ns / 1000.0;
  if (s < 0 || (g->ahead != INT64_MIN && tl_ns(ti->syncs[s].end) <= g->ahead) || ti->left[s] < us)
    return false;
  /* A sync that returned before the window's own first kernel drained the work before it
   * (a step boundary: the loop reading its last results, a harness between steps): every
   * step of such a loop starts on an empty queue, and its gaps are the host issuing the
   * step's first work, not this sync's shadow (review 14: hf's profiler-step sync); the
   * portion keeps its kind and only notes the drain (review 16 defect 3). */
  bool boundary = g->span0 != INT64_MIN && tl_ns(ti->syncs[s].end) <= g->span0;
  const item *x = &ti->syncs[s];
  double m = x->ts + (x->end - x->ts) / 2; /* collect_syncs' probe */
  long i = innermost(ti, m, m);
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent)
    if (ti->v[i].kind == ITEM_RUNTIME && ti->v[i].ref == x->ref) break;
  if (i < 0 || ti->v[i].kind != ITEM_RUNTIME || ti->v[i].ref != x->ref) return false;
  tl_extra d;
  if (designed_wait(h, ti, i, &d)) { /* the host work's, not the wait's; at a boundary: neither */
    if (!boundary) *designed = d;
    return false;
  }
  ti->left[s] -= us;
  if (boundary) {
    p->drain_what = op_name(h, ti, i, x->ts, x->end, true);
    p->drain_location = best_frame(h, ti, i, x->ts, x->end);
    p->drain_queue_ns = tl_ns(x->end - x->ts);
    return false;
  }
  p->kind = AN_IDLE_SYNC;
  p->what = op_name(h, ti, i, x->ts, x->end, true);
  p->location = best_frame(h, ti, i, x->ts, x->end);
  sync_extra(h, ti, i, p);
  return true;
}

/* Setup portion p of a step's gap g: its release lead (release_lead) as its extra, the call
 * (child) under the innermost annotation around it (region; not the step's own), so the
 * alloc stall names what emptied the caching allocator (brief 12 defect 3). */
static void release_extra(tl_host *h, const thread_items *ti, const tl_gap *g, tl_portion *p) {
  long r = release_lead(ti, g);
  if (r < 0) return;
  const item *x = &ti->setup[r];
  double m = x->ts + (x->end - x->ts) / 2; /* release_probes' probe */
  tl_extra e = {.child =
                    an_strtab_cstr(h->strings, tr_str_get(h->t, h->ev[ITEM_RUNTIME][x->ref].name))};
  for (long i = innermost(ti, m, m), k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent)
    if (ti->v[i].kind == ITEM_ANNOTATION && !names_step(h, &ti->v[i])) {
      e.region = interned(h, ti, i);
      break;
    }
  add_extra(h, &e, p);
}

/* The host portion [g0, lts) before launch call L of gap g: await (under a wait on a
 * collective), sync, setup (mostly allocation or initialisation calls), launch
 * (back-to-back issue) or host. */
static void host_portion(tl_host *h, const thread_items *ti, const tr_event *L, const tl_gap *g,
                         tl_portion *p) {
  double g0 = (double)g->g0 / 1000.0;
  double lts = tr_event_ts(h->t, L);
  long s = sync_item(h, ti, g0, lts);
  if (await_portion(h, ti, s, g0, lts, p)) return;
  tl_extra d = {0};
  if (s >= 0) designed_wait(h, ti, s, &d);
  if (d.designed && ti->v[s].end > g0) /* the host work after the framework's wait names it */
    g0 = ti->v[s].end;
  if (s >= 0 && !d.designed) {
    const item *x = &ti->v[s];
    p->kind = AN_IDLE_SYNC;
    p->what = op_name(h, ti, s, x->ts, x->end, true);
    p->location = best_frame(h, ti, s, x->ts, x->end);
    sync_extra(h, ti, s, p);
    return;
  }
  long su = -1;
  if (lts > g0 && setup_time(ti, g0, lts, &su) * 100.0 >= h->setup_min_pct * (lts - g0) &&
      su >= 0) {
    p->kind = AN_IDLE_SETUP; /* allocator growth, a lazy init: once, not per step */
    p->what =
        an_strtab_cstr(h->strings, tr_str_get(h->t, h->ev[ITEM_RUNTIME][ti->setup[su].ref].name));
    p->location = best_frame(h, ti, innermost(ti, g0, lts), g0, lts);
    release_extra(h, ti, g, p);
    return;
  }
  if (!d.designed && shadow_portion(h, ti, g, p, &d)) return;
  if (lts - g0 <= h->launch_gap_max_us) {
    p->kind = AN_IDLE_LAUNCH; /* one launch's cost: the launch-overhead bucket */
  } else {
    long i = innermost(ti, g0, lts);
    p->kind = AN_IDLE_HOST;
    p->what = op_name(h, ti, i, g0, lts, false);
    p->location = best_frame(h, ti, i, g0, lts);
    if (!p->what && !p->location) {
      untraced_host(h, L, g0, lts, p);
      if (p->untraced_ns) event_order(h, g, L, p);
    } else if (lts - g0 >= h->long_gap_us)
      long_host(h, ti, i, g0, lts, p);
  }
  if (d.designed) mark_designed(h, &d, p);
}

/* The setup calls inside host portion p of gap g (its host part, up to cut: ns), carved
 * out as a setup portion of their own into q when they take at least
 * timeline.launch_gap_max_us but not most of it (then host_portion made all of it setup):
 * one caching-allocator growth is setup wherever it falls, not host work of the gap it
 * shares (review 15 defect 5: hta_event_sync_multistream's third matmul's 208 us cudaMalloc
 * sat inside its 18.8 ms untraced row, its second's 200 us was setup). 1 when carved. */
static size_t setup_part(tl_host *h, const thread_items *ti, const tl_gap *g, int64_t cut,
                         tl_portion *p, tl_portion *q) {
  if (p->kind != AN_IDLE_HOST) return 0;
  long su = -1;
  double t = setup_time(ti, (double)g->g0 / 1000.0, (double)cut / 1000.0, &su);
  int64_t ns = tl_ns(t);
  if (su < 0 || t < h->launch_gap_max_us || ns >= p->ns) return 0;
  const item *x = &ti->setup[su];
  *q = (tl_portion){.window = p->window, .kind = AN_IDLE_SETUP, .ns = ns, .gap_ns = p->gap_ns};
  q->what = an_strtab_cstr(h->strings, tr_str_get(h->t, h->ev[ITEM_RUNTIME][x->ref].name));
  q->location = best_frame(h, ti, innermost(ti, x->ts, x->end), x->ts, x->end);
  release_extra(h, ti, g, q);
  p->ns -= ns;
  return 1;
}

/* The launch-call portion: a long call (a graph launch still submitting) is named. */
static void call_portion(tl_host *h, const thread_items *ti, const tr_event *launch,
                         tl_portion *p) {
  p->kind = AN_IDLE_LAUNCH;
  if ((double)p->ns / 1000.0 <= h->launch_gap_max_us) return;
  if ((double)p->ns / 1000.0 >= h->module_load_min_us)
    p->kind = AN_IDLE_SETUP; /* a first launch loading its module, a first graph upload */
  p->what = an_strtab_cstr(h->strings, tr_str_get(h->t, launch->name));
  double at = tr_event_ts(h->t, launch);
  p->location = best_frame(h, ti, innermost(ti, at, at), at, at);
}

/* The GPU copy of a runtime call to or from pageable memory (its GPU event index + 1), 0
 * when it is none. */
static uint64_t pageable_copy_of(const tl_host *h, const item *it) {
  uint64_t v = 0;
  if (it->kind != ITEM_RUNTIME || !h->pageable_corr.n) return 0;
  int64_t corr = tr_event_correlation(h->t, &h->ev[ITEM_RUNTIME][it->ref]);
  return corr != TR_NO_ID && ut_u64map_get(&h->pageable_corr, (uint64_t)corr, &v) ? v : 0;
}

/* The portion [a, b) of a gap with no launch record of the next kernel as blocked: a
 * thread that issues GPU work sat across all of it in a copy to or from pageable memory
 * (matcher pageable_copy) whose GPU copy had already run, copying on the host, so it issued
 * nothing meanwhile; named by the outermost
 * CPU op around the call (`aten::to`), its region (the outermost annotation) and the GPU
 * copy (tl_extra). False when every thread was free: the work waited on something else.
 * A gap whose next work was already queued is never blocked (tl_host_split): the blocking
 * call waited for that work, as TorchRec's `aten::to` under `## sparse_data_dist ##` did on
 * hta_multistream5, its copy running ~60 ms after each gap (review 10). */
/* The blocking call a thread that issues GPU work sat in across all of [a, b): a copy to
 * or from pageable memory (*copy: its GPU copy's index + 1), with done only one whose GPU
 * copy had run by b; without done also a synchronising call (matcher host_sync; *copy 0).
 * Its index among *tio's items, -1 when none. */
static long blocking_item(tl_host *h, double a, double b, bool done, const thread_items **tio,
                          uint64_t *copy) {
  for (size_t t = 0; t < h->n_th; t++) {
    const thread_items *ti = &h->th[t];
    long i = innermost(ti, a, b);
    for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent) {
      const item *it = &ti->v[i];
      if (it->kind == ITEM_FRAME || it->kind == ITEM_ANNOTATION || !spans(it, a, b)) continue;
      *tio = ti;
      *copy = pageable_copy_of(h, it);
      if (*copy) {
        const tr_event *ce = &h->kev[*copy - 1];
        if (!done || tr_event_ts(h->t, ce) + tr_event_dur(h->t, ce) <= b + h->sync_tol_us) return i;
      } else if (!done && item_matches(h, h->sync, h->is_sync, it)) {
        return i;
      }
    }
  }
  return -1;
}

static bool blocked_portion(tl_host *h, double a, double b, tl_portion *p) {
  /* a sync across the gap waits for GPU work still to come, so it is never the cause; a
   * pageable copy is, once its GPU copy has run: the thread is busy copying on the host,
   * not waiting for the GPU */
  const thread_items *ti = NULL;
  uint64_t copy = 0;
  long i = blocking_item(h, a, b, true, &ti, &copy);
  if (i < 0) return false;
  const item *it = &ti->v[i];
  p->kind = AN_IDLE_BLOCKED;
  p->what = op_name(h, ti, i, it->ts, it->end, true);
  p->location = best_frame(h, ti, i, it->ts, it->end);
  long r = outer_region(h, ti, i, it->ts, it->end);
  tl_extra x = {.region = r >= 0 ? interned(h, ti, r) : NULL,
                .child = an_strtab_cstr(h->strings, tr_str_get(h->t, h->kev[copy - 1].name))};
  add_extra(h, &x, p);
  return true;
}

/* Whether blocking pageable copy it (its GPU copy's index + 1) only read back: its GPU copy
 * took under timeline.readback_max_copy_pct of the call, so the call spent its time waiting
 * for the stream's queued work, not copying (review 13: hta_multistream5's 704-byte
 * device-to-host read of lengths sat 139-146 ms; "pin it" was the wrong lever). */
static bool reads_back(const tl_host *h, const item *it, uint64_t copy) {
  double call = it->end - it->ts, gpu = tr_event_dur(h->t, &h->kev[copy - 1]);
  return call > 0 && gpu >= 0 && gpu * 100.0 < h->readback_max_copy_pct * call;
}

/* A long queue part [a, b) of a gap (queued work waiting): a thread that issues GPU work sat
 * across it in a blocking call, which waited on that work too (the work was queued first,
 * so the call is no cause) but is the lead to what the work waits on: its region and its
 * outermost op (tl_extra), review 11 defect 2 (hta_multistream5's 139-147 ms aten::to under
 * "## sparse_data_dist ##" spans every 64 ms gap). */
static void queue_lead(tl_host *h, double a, double b, tl_portion *p) {
  const thread_items *ti = NULL;
  uint64_t copy = 0;
  long i = blocking_item(h, a, b, false, &ti, &copy);
  if (i < 0) return;
  const item *it = &ti->v[i];
  long r = outer_region(h, ti, i, it->ts, it->end);
  tl_extra x = {.region = r >= 0 ? interned(h, ti, r) : NULL,
                .child = op_name(h, ti, i, it->ts, it->end, true),
                .call = interned(h, ti, i),
                .lead = !copy                     ? AN_LEAD_SYNC
                        : reads_back(h, it, copy) ? AN_LEAD_READBACK
                                                  : AN_LEAD_PAGEABLE_COPY};
  add_extra(h, &x, p);
}

/* The queue part of gap g as an event wait: the next kernel's stream waited on an event
 * (its latest wait enqueued before the launch call L) that the host recorded only inside
 * the gap, and the wait ended as the record ran (within timeline.launch_gap_max_us of the
 * gap's end): kind event_wait, what the waiting stream, child (tl_extra) the stream waited
 * for. False otherwise: a wait on an event recorded long before (hta_event_sync_multistream's)
 * explains nothing, and no cause is made up for it (review 10 defect 3). */
static bool event_wait_portion(tl_host *h, const tl_gap *g, const tr_event *L, tl_portion *p) {
  if (!h->n_waits) return false;
  size_t lo; /* first wait on the stream enqueued after the launch call */
  UT_PARTITION_POINT(
      lo, 0, h->n_waits, mid,
      h->waits[mid].stream < g->stream ||
          (h->waits[mid].stream == g->stream && h->waits[mid].ts <= tr_event_ts(h->t, L)));
  if (!lo || h->waits[lo - 1].stream != g->stream) return false;
  const struct tl_wait *w = &h->waits[lo - 1];
  uint64_t r = 0;
  size_t nr = 0;
  if (!ut_u64map_get(&h->records, (uint64_t)w->record, &r) || !r) return false;
  const tr_event *rec = &tr_trace_events(h->t, TR_KIND_RUNTIME, &nr)[r - 1];
  int64_t ts = tl_ns(tr_event_ts(h->t, rec)),
          end = tl_ns(tr_event_ts(h->t, rec) + tr_event_dur(h->t, rec));
  if (ts < g->g0 || end > g->g1 || (double)(g->g1 - end) / 1000.0 > h->launch_gap_max_us)
    return false;
  p->kind = AN_IDLE_EVENT_WAIT;
  p->what = an_strtab_cstr(h->strings, tr_str_get(h->t, w->stream));
  tl_extra x = {.child = w->on_stream ? an_strtab_cstr(h->strings, tr_str_get(h->t, w->on_stream))
                                      : NULL};
  add_extra(h, &x, p);
  return true;
}

/* The kind of the queue part [.., g1) of gap g, ns long, after its launch call L returned
 * (review 14 defect 3: a dependency needs another stream or an event the trace shows):
 *  - launch: the call came after the GPU ran dry and this part is a launch's latency, or
 *    the kernel sat queued behind its own stream's last kernel and started within a
 *    launch's latency of it (vllm's piecewise graph seams, ~12 us on one stream);
 *  - event_wait: its stream waited on an event the host recorded only in the gap;
 *  - dependency: it started within a launch's latency of another stream's last kernel,
 *    the one that ended the busy stretch (a cross-stream hand-off);
 *  - outside: longer, with nothing the trace shows holding it: no kernel ran on any stream
 *    and a blocking call across it waits on it (review 10 on hta_multistream5: the pageable
 *    DtoH copy ran ~60 ms after each gap), so it is the part's lead, never its cause;
 *    what is the call that queued the work (a graph launch apart from a kernel). */
static an_idle_kind queue_kind(tl_host *h, const tl_gap *g, const tr_event *L, bool latency,
                               int64_t ns, tl_portion *p) {
  if (latency) return AN_IDLE_LAUNCH;
  if (event_wait_portion(h, g, L, p)) return AN_IDLE_EVENT_WAIT;
  if ((double)ns / 1000.0 <= h->launch_gap_max_us)
    return g->prev_stream && g->prev_stream != g->stream ? AN_IDLE_DEPENDENCY : AN_IDLE_LAUNCH;
  p->what = an_strtab_cstr(h->strings, tr_str_get(h->t, L->name));
  if ((double)ns / 1000.0 >= h->long_gap_us)
    queue_lead(h, (double)(g->g1 - ns) / 1000.0, (double)g->g1 / 1000.0, p);
  return AN_IDLE_OUTSIDE;
}

/* The innermost CPU op or runtime call of ti spanning time m, or -1. */
static long call_at(const thread_items *ti, double m) {
  long i = innermost(ti, m, m);
  for (size_t k = 0; i >= 0 && k < TL_MAX_DEPTH; k++, i = ti->v[i].parent)
    if (ti->v[i].kind != ITEM_FRAME && ti->v[i].kind != ITEM_ANNOTATION && spans(&ti->v[i], m, m))
      return i;
  return -1;
}

/* tl_host_outside: the call says what the host did across the GPU's idle (brief 12 defect
 * 1: sglang's 463 ms in hipMemcpyWithStream under aten::copy_ before the step). */
bool tl_host_outside(tl_host *h, const tl_gap *g, tl_outside *out) {
  *out = (tl_outside){0};
  double a = (double)g->g0 / 1000.0, b = (double)g->g1 / 1000.0;
  double m = (double)(g->g0 + (g->g1 - g->g0) / 2) / 1000.0; /* the probe make_probes took */
  long first =
      g->launch ? thread_of(h, tr_event_pid(h->t, g->launch), tr_event_tid(h->t, g->launch)) : -1;
  for (long k = -1; k < (long)h->n_th; k++) { /* the launching thread first */
    long t = k < 0 ? first : k;
    if (t < 0 || (k >= 0 && t == first)) continue;
    const thread_items *ti = &h->th[t];
    long i = call_at(ti, m);
    if (i < 0) continue;
    const item *it = &ti->v[i];
    out->call = interned(h, ti, i);
    out->op = op_name(h, ti, i, it->ts, it->end, true);
    if (out->op == out->call) out->op = NULL;
    out->location = best_frame(h, ti, i, it->ts, it->end);
    out->call_ns = tl_ns((it->end < b ? it->end : b) - (it->ts > a ? it->ts : a));
    out->blocking = item_matches(h, h->sync, h->is_sync, it) || pageable_copy_of(h, it);
    out->setup = h->setup && te_matcher_match(h->setup, out->call, strlen(out->call));
    return true;
  }
  return false;
}

size_t tl_host_split(tl_host *h, const tl_gap *g, tl_portion out[TL_MAX_PORTIONS]) {
  const tr_event *L = g->launch;
  long th = L ? thread_of(h, tr_event_pid(h->t, L), tr_event_tid(h->t, L)) : -1;
  tl_portion base = {
      .window = g->window, .kind = AN_IDLE_UNKNOWN, .ns = g->g1 - g->g0, .gap_ns = g->g1 - g->g0};
  if (th < 0) {
    out[0] = base;
    double a = (double)g->g0 / 1000.0, b = (double)g->g1 / 1000.0;
    /* no launch record (launched before the capture), but a thread that issues GPU work
     * sat across the long gap in a call that returns only once issued GPU work has run: that
     * work was queued, so the gap is queued work waiting, with the call as its lead, as a
     * gap whose launch call the trace has (review 12 defect 2: one of hta_multistream5's
     * three 64 ms gaps was `unknown` beside the two `dependency` ones) */
    if (!blocked_portion(h, a, b, &out[0]) && b - a >= h->long_gap_us) {
      queue_lead(h, a, b, &out[0]);
      if (out[0].extra) out[0].kind = AN_IDLE_OUTSIDE;
    }
    return 1;
  }
  const thread_items *ti = &h->th[th];
  int64_t lts = tl_ns(tr_event_ts(h->t, L)),
          lend = tl_ns(tr_event_ts(h->t, L) + tr_event_dur(h->t, L));
  int64_t cut1 = lts < g->g0 ? g->g0 : lts > g->g1 ? g->g1 : lts;
  int64_t cut2 = lend < cut1 ? cut1 : lend > g->g1 ? g->g1 : lend;
  size_t n = 0;
  if (cut1 > g->g0) {
    out[n] = base;
    out[n].ns = cut1 - g->g0;
    host_portion(h, ti, L, g, &out[n++]);
    n += setup_part(h, ti, g, cut1, &out[n - 1], &out[n]);
  }
  if (cut2 > cut1) {
    out[n] = base;
    out[n].ns = cut2 - cut1;
    call_portion(h, ti, L, &out[n++]);
  }
  if (g->g1 > cut2) { /* after the call: the launch's latency, or a wait for other work */
    int64_t ns = g->g1 - cut2;
    bool latency = cut2 > g->g0 && (double)ns / 1000.0 <= h->launch_gap_max_us;
    out[n] = base;
    out[n].ns = ns;
    out[n].kind = queue_kind(h, g, L, latency, ns, &out[n]);
    if (out[n].kind == AN_IDLE_OUTSIDE || out[n].kind == AN_IDLE_DEPENDENCY ||
        out[n].kind == AN_IDLE_EVENT_WAIT)
      out[n].queued_ns = g->g1 - lend; /* since when it waits (review 15 defect 6) */
    n++;
  }
  return n;
}

/* tl_host_readbacks: each call's item on its thread (the runtime call itself), then the
 * outermost CPU op, the outermost region and the best Python frame around it (review 18
 * defect 8: `aten::to` under `## sparse_data_dist ##`). */
const tl_readback *tl_host_readbacks(tl_host *h, size_t *n) {
  for (size_t r = 0; r < h->n_readbacks; r++) {
    tl_readback *x = &h->readbacks[r];
    x->bytes = int_arg(h->t, &h->kev[x->copy], TR_ARG_BYTES);
    const tr_event *e = &h->ev[ITEM_RUNTIME][x->call_ev];
    long th = thread_of(h, tr_event_pid(h->t, e), tr_event_tid(h->t, e));
    if (th < 0) continue;
    const thread_items *ti = &h->th[th];
    double a = (double)x->ts / 1000.0, b = (double)x->end / 1000.0, m = a + (b - a) / 2;
    long i = innermost(ti, m, m);
    while (i >= 0 && !(ti->v[i].kind == ITEM_RUNTIME && ti->v[i].ref == x->call_ev))
      i = ti->v[i].parent;
    if (i < 0) continue;
    const item *it = &ti->v[i];
    long reg = outer_region(h, ti, i, it->ts, it->end);
    x->call = interned(h, ti, i);
    x->op = op_name(h, ti, i, it->ts, it->end, true);
    if (x->op == x->call) x->op = NULL;
    x->region = reg >= 0 ? interned(h, ti, reg) : NULL;
    x->location = best_frame(h, ti, i, it->ts, it->end);
  }
  *n = h->n_readbacks;
  return h->readbacks;
}
