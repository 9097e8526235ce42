/*
 * trace/trace.h - one Kineto (PyTorch profiler) Chrome trace, read by streaming.
 *
 * The reader never holds the file or a DOM of it in memory: it scans the JSON once and
 * keeps only the events the analysis uses, as compact structs with interned strings.
 * Memory therefore grows with the events kept, not with the JSON text.
 *
 * Ownership: tr_trace_read allocates a tr_trace that owns every event array and every
 * string (one arena per trace); tr_trace_destroy frees it all. Strings returned by
 * tr_str() are borrowed and live as long as the trace.
 */
#ifndef TRIAGE_TRACE_H
#define TRIAGE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* the reader and source use stdio through this header */

#include "util/limits.h"

/* Interned string handle; 0 is the empty / absent string. */
typedef uint32_t tr_str;

#define TR_NO_ID INT64_MIN /* External id / correlation absent */
/* tr_event's id offsets (trace/idmap.h): no id, and an id outside the 32-bit window */
#define TR_OFF_ABSENT UINT32_MAX
#define TR_OFF_WIDE (UINT32_MAX - 1u)

/* A dur stored as a count of nanoseconds; TR_DUR_WIDE marks one kept in full elsewhere.
 * Read durations with tr_event_dur / tr_pyframe_dur, never from the fields. */
#define TR_DUR_WIDE UINT32_MAX
/* An event's start as a 48-bit signed count from the trace's origin (trace/idmap.h),
 * TR_TS_WIDE marking one kept in full elsewhere; its context position in 16 bits,
 * TR_CTX_WIDE marking one kept elsewhere. Read them with tr_event_ts and tr_trace_ctx. */
#define TR_TS_WIDE (-(INT64_C(1) << 47))
#define TR_CTX_WIDE UINT16_MAX

/* What an event is to the analysis. Decided while reading (rules in trace/kineto.c,
 * following docs/reference.md §2.5). */
typedef enum tr_kind {
  TR_KIND_KERNEL = 0,          /* GPU kernel, gpu_memcpy, gpu_memset, XPU launch */
  TR_KIND_CPU_OP = 1,          /* cat cpu_op */
  TR_KIND_LAUNCH = 2,          /* cuda_runtime / cuda_driver with "launch" and correlation */
  TR_KIND_PYFRAME = 3,         /* cat python_function */
  TR_KIND_USER_ANNOTATION = 4, /* cat user_annotation (CPU) */
  TR_KIND_GPU_ANNOTATION = 5,  /* cat gpu_user_annotation */
  TR_KIND_RUNTIME = 6          /* other cuda_runtime/cuda_driver/xpu_runtime with correlation */
} tr_kind;

/* One complete ("X") event. ts and dur are microseconds as in the file (read them with
 * tr_event_ts and tr_event_dur). 28 bytes, as cpu_op-heavy traces keep millions of them:
 * the kind is implied by the per-kind array an event sits in; ts is an exact count of
 * nanoseconds (of microseconds in a trace of epoch-based whole microseconds) from a
 * per-trace origin, in 48 bits (TR_TS_WIDE: the exact double is in a side table); cat,
 * pid, tid and stream, few distinct per trace (threads x categories x streams), are
 * shared through a per-trace table the event indexes in 16 bits (TR_CTX_WIDE: the
 * position is in a side table); dur is a count of nanoseconds (TR_DUR_WIDE: the exact
 * double is in a side table); the two ids are 32-bit offsets from a per-trace base (an
 * id that does not fit goes to a side table). Read those through tr_event_ts,
 * tr_event_dur, tr_event_cat / _pid / _tid / _stream and tr_event_external_id /
 * tr_event_correlation, never from the fields. */
typedef struct tr_event {
  tr_str name;
  uint32_t dur_ns;   /* private: dur in nanoseconds or TR_DUR_WIDE (tr_event_dur) */
  uint32_t index;    /* position among all events of the file (stable tie-break) */
  uint32_t ext_off;  /* private: args["External id"] (tr_event_external_id) */
  uint32_t corr_off; /* private: args.correlation (tr_event_correlation) */
  uint32_t ts_lo;    /* private: the start's count, low 32 bits (tr_event_ts) */
  int16_t ts_hi;     /* private: its high 16 bits */
  uint16_t ctx;      /* private: the (cat, pid, tid, stream) tuple's position (tr_trace_ctx) */
} tr_event;
_Static_assert(sizeof(tr_event) == 28, "tr_event is 28 bytes: see the comment above");

/* What an event shares with the other events of its thread, category and stream. */
typedef struct tr_event_ctx {
  tr_str cat;
  tr_str pid;    /* textual pid: "1234" or "[TP00-DP01] 1234" */
  tr_str tid;    /* textual tid */
  tr_str stream; /* args.stream, else args.cuda_stream (as text); 0 if neither */
} tr_event_ctx;

/* One Python frame (cat python_function, ph "X"). Python-heavy traces keep millions of
 * them (a third of the JSON's events, and most of the memory triage holds), so a frame
 * keeps only what the analysis reads, in 16 bytes: no External id, correlation, stream or
 * cat (always "python_function"); its pid and tid are those of its tr_pyframe_run; its
 * position in tr_trace_pyframes is its file order; dur as in idmap.h (tr_pyframe_dur). */
typedef struct tr_pyframe {
  double ts_us; /* private: read with tr_pyframe_ts */
  tr_str name;
  uint32_t dur_ns; /* private: read with tr_pyframe_dur */
} tr_pyframe;

/* Frames [first, the next run's first) share this pid and tid. Kineto writes the frames
 * of a thread together, so there are about as many runs as threads. */
typedef struct tr_pyframe_run {
  uint32_t first;
  tr_str pid, tid;
} tr_pyframe_run;

/* Thread metadata: ph "M", name "thread_name". */
typedef struct tr_thread_name {
  tr_str pid, tid, name;
} tr_thread_name;

typedef struct tr_trace tr_trace; /* opaque */

/* Run metadata Kineto writes beside traceEvents (the top-level members distributedInfo,
 * deviceProperties and the runtime version numbers). Read on the cold path; absent
 * values stay unset. Strings are interned (tr_str_get); arrays live as long as the trace. */
typedef enum tr_platform {
  TR_PLATFORM_UNKNOWN = 0,
  TR_PLATFORM_CUDA = 1, /* cuda_runtime_version / cupti_version / cuda_driver_version */
  TR_PLATFORM_ROCM = 2  /* hip_runtime_version / roctracer_version / hip_driver_version */
} tr_platform;

typedef struct tr_device {
  int64_t id;            /* TR_NO_ID when absent */
  tr_str name;           /* "NVIDIA H100 80GB HBM3"; 0 when absent or empty */
  int64_t compute_major; /* TR_NO_ID when absent (ROCm writes 9.4 for gfx942) */
  int64_t compute_minor;
  int64_t warp_size; /* 64 on AMD GPUs; TR_NO_ID when absent */
  int64_t num_sms;
  int64_t total_mem; /* totalGlobalMem in bytes; TR_NO_ID when absent */
} tr_device;

/* One entry of distributedInfo.pg_config. */
typedef struct tr_process_group {
  tr_str name;    /* pg_name, e.g. "0" */
  tr_str desc;    /* pg_desc, e.g. "default_pg" */
  tr_str backend; /* backend_config, e.g. "cuda:nccl", "cpu:gloo,cuda:gloo"; 0 when absent */
  int64_t size;   /* pg_size, TR_NO_ID when absent */
  size_t n_ranks; /* at most TR_MAX_META_ITEMS kept */
  int64_t *ranks; /* borrowed; read only */
} tr_process_group;

/* Process metadata: ph "M", name "process_name" (e.g. "VLLM::Worker_TP0"), in file order;
 * a pid named twice appears twice. */
typedef struct tr_process_name {
  tr_str pid, name;
} tr_process_name;

typedef struct tr_trace_meta {
  int64_t rank;       /* distributedInfo.rank, TR_NO_ID when absent */
  int64_t world_size; /* distributedInfo.world_size, TR_NO_ID when absent */
  tr_str backend;     /* distributedInfo.backend ("nccl") */
  size_t n_groups;
  const tr_process_group *groups;
  size_t n_devices;
  const tr_device *devices;
  tr_platform platform; /* from the runtime version members only */
  tr_str host_name;     /* the top-level "host_name" string; 0 when absent */
  size_t n_processes;   /* at most TR_MAX_META_ITEMS kept */
  const tr_process_name *processes;
} tr_trace_meta;

/* Why reading failed. offset is the byte offset in the (decompressed) JSON stream where
 * the problem was found; for gzip errors, the offset in the compressed file. */
typedef struct tr_error {
  int code; /* 0 = none; see TR_ERR_* */
  uint64_t offset;
  bool has_offset;
  char message[512];
} tr_error;

enum {
  TR_ERR_IO = 1,    /* cannot open/read */
  TR_ERR_GZIP = 2,  /* corrupt or truncated gzip */
  TR_ERR_JSON = 3,  /* malformed JSON */
  TR_ERR_SHAPE = 4, /* valid JSON, not a trace (no traceEvents list, ...) */
  TR_ERR_LIMIT = 5, /* a limit of util/limits.h exceeded */
  TR_ERR_NOMEM = 6
};

/* gzip inflater. AUTO is ISA-L's igzip when triage was built with it (pkg-config
 * libisal, CMake option TRIAGE_USE_ISAL), else zlib; both give the same bytes. */
typedef enum tr_inflater { TR_INFLATE_AUTO = 0, TR_INFLATE_ZLIB = 1 } tr_inflater;

/* The JSON scanner. AUTO: the SIMD fast path (trace/structural.h, trace/fast_event.h)
 * for the events it takes, the byte scanner for the rest, at the best SIMD level of the
 * machine (TRIAGE_SIMD=scalar|sse2|avx2|neon in the environment caps it, TRIAGE_SIMD=off
 * makes AUTO mean BYTES); BYTES: the byte scanner alone, the reference the fast path is
 * tested against; SCALAR ... AVX2: the fast path at that level when the machine has it
 * (else as AUTO), for the tests. All give the same trace, and the same error at the same
 * offset. */
typedef enum tr_scanner {
  TR_SCANNER_AUTO = 0,
  TR_SCANNER_BYTES = 1,
  TR_SCANNER_SCALAR = 2,
  TR_SCANNER_SSE2 = 3,
  TR_SCANNER_NEON = 4,
  TR_SCANNER_AVX2 = 5
} tr_scanner;

/* true when this build has ISA-L (so TR_INFLATE_AUTO and TR_INFLATE_ZLIB differ). */
bool tr_inflate_has_isal(void);

/* Something the reader tolerated, reported once per trace after a successful read. */
typedef enum tr_warning_code {
  TR_WARN_SKIPPED_EVENTS = 1, /* events with unusable fields were skipped */
  TR_WARN_REPLACED_UTF8 = 2   /* invalid UTF-8 sequences or NULs became U+FFFD */
} tr_warning_code;

typedef struct tr_warning {
  tr_warning_code code;
  const char *path; /* the trace as named to the reader; borrowed for the call */
  uint64_t count;   /* events skipped / sequences replaced */
  uint64_t offset;  /* TR_WARN_SKIPPED_EVENTS: byte offset of the first one */
} tr_warning;

typedef struct tr_read_options {
  /* Called now and then with bytes consumed / total (total 0 if unknown). May be NULL. */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
  /* Called once per warning after the read; NULL = warnings are not reported (the
   * reader never prints). */
  void (*warn)(void *ctx, const tr_warning *w);
  void *warn_ctx;
  /* Decompressed bytes per chunk handed to the scanner; 0 = default (1 MiB). Tests and
   * fuzzers use tiny chunks so every token crosses a chunk boundary somewhere. */
  size_t chunk_size;
  /* gzip inflater; 0 (TR_INFLATE_AUTO) = the fastest this build has. */
  tr_inflater inflater;
  /* JSON scanner; 0 (TR_SCANNER_AUTO) = the fast path where it applies. */
  tr_scanner scanner;
  /* Parsing ahead on the inflate thread (gzip input, fast path): 0 = the share of each
   * chunk that keeps both threads busy, chosen as they run (TRIAGE_AHEAD=off|1...64 in the
   * environment overrides 0, for A/B runs); TR_AHEAD_OFF = none; 1 ... TR_AHEAD_ALL =
   * always that many 64ths of each chunk's end (tests). The trace is the same. */
  unsigned ahead;
} tr_read_options;
#define TR_AHEAD_ALL 64u
#define TR_AHEAD_OFF 65u

/* Reads path ("-" = standard input). gzip is recognised by magic bytes (multi-member
 * supported). The top level is an object with "traceEvents" or a bare event array.
 * Returns NULL and fills err on failure. */
tr_trace *tr_trace_read(const char *path, const tr_read_options *opts, tr_error *err);
/* Same, from a memory buffer (used by fuzzers and tests). */
tr_trace *tr_trace_read_buffer(const char *name, const void *buf, size_t len,
                               const tr_read_options *opts, tr_error *err);
void tr_trace_destroy(tr_trace *t);
/* 1 when path looks like a trace: a top-level object whose "traceEvents" is a list, or a
 * list whose first element is an object. Stops scanning as soon as that is known (used by
 * directory discovery on *.json files without a trace suffix). 0 otherwise, including
 * unreadable or malformed files. */
int tr_trace_probe(const char *path);
/* tr_trace_probe that also gives distributedInfo.rank when the file states it before its
 * traceEvents list (Kineto does), else TR_NO_ID; rank may be NULL. */
int tr_trace_probe_rank(const char *path, int64_t *rank);
/* tr_trace_probe_rank that also copies the top-level host_name into host (host_cap bytes,
 * NUL-terminated; "" when the file states none before its traceEvents list, as Kineto
 * writes it beside distributedInfo, or when it does not fit). host may be NULL. */
int tr_trace_probe_head(const char *path, int64_t *rank, char *host, size_t host_cap);

const char *tr_trace_path(const tr_trace *t);
const char *tr_str_get(const tr_trace *t, tr_str s); /* "" for 0 */
/* Interns s in the trace's string table (used by analysis for derived names). */
tr_str tr_str_intern(tr_trace *t, const char *s, size_t len);
/* Renames event i of tr_trace_events(t, kind) to name (a string of t): analysis keys a
 * kernel by what it runs where the file's name does not say it (analysis/collective_names.h);
 * done before any view of the trace is built. */
void tr_trace_rename_event(tr_trace *t, tr_kind kind, size_t i, tr_str name);
/* Strings interned so far: every tr_str of the trace is below this. */
size_t tr_trace_string_count(const tr_trace *t);

/* All kept events of a kind, in file order. Python frames are not tr_events: for
 * TR_KIND_PYFRAME this returns NULL with *n = 0; use tr_trace_pyframes. */
const tr_event *tr_trace_events(const tr_trace *t, tr_kind kind, size_t *n);
/* All kept Python frames (TR_KIND_PYFRAME), in file order. */
const tr_pyframe *tr_trace_pyframes(const tr_trace *t, size_t *n);
/* Their threads, in frame order; the first run starts at frame 0. */
const tr_pyframe_run *tr_trace_pyframe_runs(const tr_trace *t, size_t *n);
/* True when each thread's frames, in file order, are already in the order attribution and
 * the overlap scope need: by start, and by end descending (outer first) at equal starts.
 * Kineto writes them so; the consumers then skip checking and sorting. */
bool tr_trace_pyframes_sorted(const tr_trace *t);
/* The distinct frame names, in order of first appearance. */
const tr_str *tr_trace_pyframe_names(const tr_trace *t, size_t *n);
/* The run of frame i (i < the frame count), by binary search. */
const tr_pyframe_run *tr_pyframe_run_of(const tr_trace *t, size_t i);
/* Start of a frame of t in microseconds, exactly the double read from the file. */
static inline double tr_pyframe_ts(const tr_trace *t, const tr_pyframe *f) {
  (void)t; /* the trace will hold what a compact start needs to be decoded */
  return f->ts_us;
}
/* Duration of a frame of t, exactly the double read from the file (0 when absent). The
 * count of nanoseconds is decoded inline; a wide one is looked up. */
double tr_pyframe_dur_wide(const tr_trace *t, const tr_pyframe *f);
static inline double tr_pyframe_dur(const tr_trace *t, const tr_pyframe *f) {
  return f->dur_ns != TR_DUR_WIDE ? (double)f->dur_ns / 1000.0 : tr_pyframe_dur_wide(t, f);
}
const tr_thread_name *tr_trace_thread_names(const tr_trace *t, size_t *n);
/* dur of an event whose dur_ns is TR_DUR_WIDE (0.0 if it has none). */
double tr_event_dur_wide(const tr_trace *t, const tr_event *e);
/* dur of an event of t in microseconds, the same double as the file's text gave (0.0
 * when absent). count / 1000.0 is exact: see tr_dur_encode in idmap.h. */
static inline double tr_event_dur(const tr_trace *t, const tr_event *e) {
  return e->dur_ns != TR_DUR_WIDE ? (double)e->dur_ns / 1000.0 : tr_event_dur_wide(t, e);
}

/* Private to src/trace: struct tr_trace begins with this, so the accessors below can
 * read the context table inline. Set once the read has finished; owned by the trace. */
typedef struct tr_trace_head {
  const tr_event_ctx *ctx;      /* indexed by tr_event.ctx */
  uint64_t ext_base, corr_base; /* an id offset below TR_OFF_WIDE is id - base */
  /* a start's count plus ts_origin, divided by ts_div (1000: the counts are nanoseconds;
   * 1: microseconds), is the start; set with the first event stored */
  int64_t ts_origin;
  double ts_div;
} tr_trace_head;

static inline const tr_trace_head *tr_trace_head_of(const tr_trace *t) {
  return (const tr_trace_head *)(const void *)t;
}

/* The 48-bit count of an event's start, sign-extended. */
static inline int64_t tr_event_ts_count(const tr_event *e) {
  return (int64_t)e->ts_hi * 4294967296 + (int64_t)e->ts_lo;
}
double tr_event_ts_wide(const tr_trace *t, const tr_event *e); /* private */
/* Start of an event of t in microseconds, exactly the double read from the file: the count
 * is stored only when this quotient gives that double back (trace/idmap.h). */
static inline double tr_event_ts(const tr_trace *t, const tr_event *e) {
  int64_t c = tr_event_ts_count(e);
  if (c == TR_TS_WIDE) return tr_event_ts_wide(t, e);
  const tr_trace_head *h = tr_trace_head_of(t);
  return (double)(h->ts_origin + c) / h->ts_div;
}

/* The order of the starts of two events of t (-1, 0, 1), as their tr_event_ts compare:
 * for sorts and searches, which then decode no start unless one is kept wide. Counts
 * compare as their starts do: each decodes to its start, monotonically, and one start
 * always encodes to one count. */
static inline int tr_event_ts_cmp(const tr_trace *t, const tr_event *a, const tr_event *b) {
  int64_t ca = tr_event_ts_count(a), cb = tr_event_ts_count(b);
  if (ca == TR_TS_WIDE || cb == TR_TS_WIDE) {
    double x = tr_event_ts(t, a), y = tr_event_ts(t, b);
    return (x > y) - (x < y);
  }
  return (ca > cb) - (ca < cb);
}

uint32_t tr_event_ctx_wide(const tr_trace *t, const tr_event *e); /* private */
/* The (cat, pid, tid, stream) of an event of t; borrowed, lives as long as t. */
static inline const tr_event_ctx *tr_trace_ctx(const tr_trace *t, const tr_event *e) {
  return &tr_trace_head_of(t)->ctx[e->ctx != TR_CTX_WIDE ? e->ctx : tr_event_ctx_wide(t, e)];
}
static inline tr_str tr_event_cat(const tr_trace *t, const tr_event *e) {
  return tr_trace_ctx(t, e)->cat;
}
static inline tr_str tr_event_pid(const tr_trace *t, const tr_event *e) {
  return tr_trace_ctx(t, e)->pid;
}
static inline tr_str tr_event_tid(const tr_trace *t, const tr_event *e) {
  return tr_trace_ctx(t, e)->tid;
}
static inline tr_str tr_event_stream(const tr_trace *t, const tr_event *e) {
  return tr_trace_ctx(t, e)->stream;
}

/* args["External id"] / args.correlation of an event of t, TR_NO_ID if absent. Inline:
 * sorting events by id reads them millions of times; an absent or wide id is looked up. */
int64_t tr_event_id_slow(const tr_trace *t, const tr_event *e, bool correlation); /* private */
static inline int64_t tr_event_external_id(const tr_trace *t, const tr_event *e) {
  return e->ext_off < TR_OFF_WIDE ? (int64_t)(tr_trace_head_of(t)->ext_base + e->ext_off)
                                  : tr_event_id_slow(t, e, false);
}
static inline int64_t tr_event_correlation(const tr_trace *t, const tr_event *e) {
  return e->corr_off < TR_OFF_WIDE ? (int64_t)(tr_trace_head_of(t)->corr_base + e->corr_off)
                                   : tr_event_id_slow(t, e, true);
}
/* External id recovered from a correlation through any event carrying both, or TR_NO_ID. */
int64_t tr_trace_external_for_correlation(const tr_trace *t, int64_t correlation);
/* Frees what tr_trace_external_for_correlation reads when no stored event has a
 * correlation without an External id: it then answers TR_NO_ID for every correlation. The
 * analysis asks only about such events' correlations and calls this once a trace is read:
 * a launch-heavy trace whose events all carry both ids keeps a pair per launch that nothing
 * asks about (4 MB on a 468 MB trace, through every phase). */
void tr_trace_drop_unasked_correlations(tr_trace *t);

/* The event args the reader keeps; every other member of args is skipped unstored.
 * Shapes of CPU ops (the op cost models read them) and the message of collectives and
 * copies (the time model and the ranks read them):
 *   TR_ARG_INPUT_DIMS ... CONCRETE_INPUTS  cpu_op "Input Dims", "Input type",
 *                                          "Concrete Inputs";
 *   TR_ARG_IN_MSG_NELEMS ... TR_ARG_BYTES  "In msg nelems", "Out msg nelems", "Group size",
 *                                          "dtype", "Process Group Name" / "Description"
 *                                          / "Ranks", "Collective name" (NCCL kernels and
 *                                          Kineto's record_param_comms op), "bytes"
 *                                          (gpu_memcpy, gpu_memset);
 *   TR_ARG_WAIT_ON_STREAM, _RECORD_CORR   "wait_on_stream",
 *                                          "wait_on_cuda_event_record_corr_id" (cat cuda_sync
 *                                          "Stream Wait Event": the stream waited for and the
 *                                          correlation of the cudaEventRecord waited on; the
 *                                          waiting stream is the event's stream).
 * Each is kept wherever a stored event (any tr_kind but TR_KIND_PYFRAME) has it. */
typedef enum tr_arg {
  TR_ARG_INPUT_DIMS = 0,
  TR_ARG_INPUT_TYPE,
  TR_ARG_CONCRETE_INPUTS,
  TR_ARG_IN_MSG_NELEMS,
  TR_ARG_OUT_MSG_NELEMS,
  TR_ARG_GROUP_SIZE,
  TR_ARG_DTYPE,
  TR_ARG_PG_NAME,
  TR_ARG_PG_DESC,
  TR_ARG_PG_RANKS,
  TR_ARG_COLLECTIVE_NAME,
  TR_ARG_BYTES,
  TR_ARG_WAIT_ON_STREAM,
  TR_ARG_WAIT_ON_RECORD_CORR,
  TR_ARG_COUNT
} tr_arg;

/* The member name of key in the file ("Input Dims"); "" for an unknown key. */
const char *tr_arg_key(tr_arg key);

/* The value of args[key] of e, an event of t's tr_trace_events(t, kind) array (a pointer
 * into that array, not a copy), as an interned string borrowed from t; 0 when the event
 * has no such member, when e is not in that array, or when the value was dropped:
 *   - a string: decoded (escapes, UTF-8 repaired as for names), e.g. dtype "Float",
 *     "Process Group Ranks" "[0, 1]";
 *   - a number: its text as written ("2049000");
 *   - true / false: that word; null: absent; an empty string: absent (0);
 *   - a list or object: compact JSON, as Python's json.dumps(v, ensure_ascii=False)
 *     writes it: separators ", " and ": ", no other whitespace, numbers as written,
 *     strings re-escaped (\" \\ and \u00XX for control bytes), e.g. Input Dims
 *     "[[32, 4096], [4096]]", so a parser reads back exactly the file's values.
 * A value longer than TR_MAX_ARG_BYTES (as stored) is dropped: absent, and counted in
 * tr_trace_args_dropped. A member repeated in one args object: the last one wins. */
tr_str tr_event_arg(const tr_trace *t, tr_kind kind, const tr_event *e, tr_arg key);
/* Kept args dropped for their length (see tr_event_arg). */
uint64_t tr_trace_args_dropped(const tr_trace *t);

/* Text sample for framework detection: names, cats, pids, first 8 arg keys and string
 * values of the first 256 events, space-separated. */
const char *tr_trace_sample_text(const tr_trace *t);

/* The trace's run metadata (never NULL for a trace that was read). */
const tr_trace_meta *tr_trace_meta_get(const tr_trace *t);

/* Counters. */
uint64_t tr_trace_event_count(const tr_trace *t);   /* all events seen */
uint64_t tr_trace_skipped_count(const tr_trace *t); /* unusable events skipped */
uint64_t tr_trace_json_bytes(const tr_trace *t);    /* decompressed bytes scanned */
uint64_t tr_trace_fast_count(const tr_trace *t);    /* events the SIMD fast path read */
uint64_t tr_trace_ahead_count(const tr_trace *t);   /* ... of them, parsed ahead (ahead) */

#endif
