/*
 * trace/reader.c - single-pass streaming scanner for Kineto Chrome-trace JSON.
 *
 * Why hand-written instead of a JSON library: the traces are multi-GB, and a DOM (or
 * even a per-event DOM) costs an allocation per value and a second pass. This scanner
 * touches every decompressed byte once, copies only the strings an event keeps, skips
 * everything else (deep args, deviceProperties) without materialising it, and nests
 * through an explicit stack so hostile nesting cannot overflow the C stack.
 *
 * Errors inside the scanner leave through longjmp to tr_trace_read_source: it keeps the
 * per-byte hot path free of status checks. Everything the scanner allocates hangs off
 * the heap-allocated reader state, so the jump leaks nothing.
 */
#include "trace/trace.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "trace/args_internal.h"
#include "trace/fast_event.h"
#include "trace/idmap.h"
#include "trace/intern.h"
#include "trace/keys.h"
#include "trace/number.h"
#include "trace/source.h"
#include "triage/ascii.h"
#include "triage/hash.h"
#include "util/search.h"
#include "util/vec.h"

#define N_KINDS 7
#define PROGRESS_STEP (4ull << 20)

/* ------------------------------------------------------------------ trace */

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
  tr_ctxtab ctx;     /* the distinct (cat, pid, tid, stream) of the events */
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
  uint64_t n_events, n_skipped, json_bytes, first_skip_off, utf8_replaced, n_fast;
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

/* ------------------------------------------------------------------ reader state */

typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;

/* Texts whose test answers the reader remembers (a trace has a handful of categories
 * and of runtime-call names), and their longest length. */
#define MEMO_SLOTS 16u
#define MEMO_TEXT 64u

/* The answers of one test on short texts, for the last MEMO_SLOTS texts asked. A text
 * holding a NUL (an escaped \u0000) is never kept: the C-string tests stop there. */
typedef struct text_memo {
  struct {
    char s[MEMO_TEXT];
    size_t n;
    unsigned value;
  } slot[MEMO_SLOTS];
  unsigned n, next;
} text_memo;

typedef struct rd {
  tr_source *src;
  const uint8_t *p, *end, *chunk;
  const tr_block_masks *masks; /* of the chunk, for the fast path (NULL: none) */
  char *scratch;               /* FE_SCRATCH_BYTES for the fast path (fe_chunk) */
  fe_shapes *shapes;           /* the event shapes the fast path learnt */
  uint64_t chunk_off;
  bool eof;
  jmp_buf jb;
  tr_error *err;
  tr_trace *t;
  const tr_read_options *opts;
  uint64_t next_progress;
  /* scratch */
  sbuf key, num, ph, name, cat, pid, tid, stream, argname, argval, lc, catlc;
  /* the last number's text: in the current chunk, or in num when it crossed chunks; valid
   * until the next refill, not NUL-terminated */
  const char *nump;
  size_t numn;
  /* its value when num_exact (set by the fast path): num_mantissa(r) / 10^num_frac,
   * negated if num_neg; the text has num_int_len digits before the point */
  unsigned num_int_len, num_frac;
  bool num_neg, num_exact;
  /* last interned cat / pid / tid / stream: consecutive events nearly always repeat them */
  struct icache {
    char s[32];
    size_t n;
    tr_str id; /* 0 = empty */
  } ic_cat, ic_pid, ic_tid, ic_stream;
  /* what classify needs from an event's category (CAT_* bits), and whether a runtime
   * call's name says launch: every event asked the same substring tests of its own copy */
  text_memo cat_memo, launch_memo;
  /* context + 1 of the last event of each kind (0 = none yet): kernels, CPU ops and
   * runtime calls interleave in the file, but each kind mostly repeats its own */
  uint32_t last_ctx[N_KINDS];
  /* the current event's kept args (tr_arg): their text, which are present, and which were
   * dropped for their length */
  sbuf argv[TR_ARG_COUNT];
  uint32_t arg_mask, arg_dropped;
  /* per kept arg: its interned text when the memo knew it (0: intern argv), and the memo
   * entry (slot, generation) that wants the id once interned (slot -1: none) */
  tr_str arg_id[TR_ARG_COUNT];
  int arg_slot[TR_ARG_COUNT];
  uint32_t arg_gen[TR_ARG_COUNT];
  struct arg_memo *memo; /* ARG_MEMO_SLOTS entries, made on first use */
  uint32_t memo_gen;
  /* current event */
  uint64_t ev_off;
  bool has_name, has_cat, has_pid, has_tid, has_argname;
  bool name_bad;   /* "name" present but not a string */
  int stream_prio; /* 0 none, 1 from cuda_stream, 2 from stream */
  int ts_state, dur_state;
  double ts, dur;
  int64_t ext, corr;
  bool sampling;
  /* scan_string: keep at most str_cap bytes (0 = all, up to TR_MAX_STRING_BYTES); set
   * str_cut when more were skipped */
  size_t str_cap;
  bool str_cut, key_cut;
  /* probe mode: stop at the first sign of a trace (tr_trace_probe) */
  bool probe;
  int probe_result;
} rd;

/* Bytes that a string can hold verbatim on the fast path: printable ASCII other than
 * the quote and the backslash. Everything else (escapes, UTF-8, controls) goes the slow
 * way, which validates and repairs. */
static const uint8_t k_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static uint64_t rd_off(const rd *r) { return r->chunk_off + (uint64_t)(r->p - r->chunk); }

static _Noreturn void rd_fail_at(rd *r, int code, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static _Noreturn void rd_fail_at(rd *r, int code, uint64_t off, const char *fmt, ...) {
  r->err->code = code;
  r->err->has_offset = true;
  r->err->offset = off;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err->message, sizeof r->err->message, fmt, ap);
  va_end(ap);
  longjmp(r->jb, 1);
}

static _Noreturn void rd_nomem(rd *r) {
  r->err->code = TR_ERR_NOMEM;
  r->err->has_offset = false;
  r->err->offset = 0;
  snprintf(r->err->message, sizeof r->err->message, "out of memory");
  longjmp(r->jb, 1);
}

static void rd_progress(rd *r) {
  if (r->opts && r->opts->progress)
    r->opts->progress(r->opts->progress_ctx, tr_source_consumed(r->src), tr_source_total(r->src));
}

static int rd_refill(rd *r) {
  if (r->eof) return 0;
  r->chunk_off += (uint64_t)(r->end - r->chunk);
  const uint8_t *d;
  size_t n;
  int rc = tr_source_next(r->src, &d, &n, r->err);
  if (rc < 0) longjmp(r->jb, 1);
  if (rc == 0) {
    r->eof = true;
    r->chunk = r->p = r->end;
    r->masks = NULL;
    return 0;
  }
  r->chunk = r->p = d;
  r->end = d + n;
  r->masks = tr_source_masks(r->src);
  if (r->chunk_off >= r->next_progress) {
    r->next_progress = r->chunk_off + PROGRESS_STEP;
    rd_progress(r);
  }
  return 1;
}

/* Next byte without consuming it, -1 at the end. */
static inline int rd_peek(rd *r) {
  if (r->p < r->end || rd_refill(r)) return *r->p;
  return -1;
}

static void describe(int c, char *buf, size_t cap) {
  if (c < 0)
    snprintf(buf, cap, "end of input");
  else if (c >= 0x21 && c < 0x7f)
    snprintf(buf, cap, "'%c'", c);
  else
    snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
}

static _Noreturn void rd_expected(rd *r, const char *what) {
  char got[32];
  describe(rd_peek(r), got, sizeof got);
  rd_fail_at(r, TR_ERR_JSON, rd_off(r), "expected %s, found %s", what, got);
}

static void skip_ws_slow(rd *r) {
  for (;;) {
#ifdef __SSE2__
    /* pretty-printed traces indent every member ("\n      "): 16 bytes per step */
    while (r->end - r->p >= 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)r->p);
      __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
      unsigned bits = (unsigned)_mm_movemask_epi8(ws);
      if (bits != 0xFFFFu) {
        r->p += __builtin_ctz(~bits);
        return;
      }
      r->p += 16;
    }
#endif
    while (r->p < r->end) {
      uint8_t c = *r->p;
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      r->p++;
    }
    if (!rd_refill(r)) return;
  }
}

/* Kineto writes one space after ',' and ':' or none: decided here without a loop. */
static inline void skip_ws(rd *r) {
  const uint8_t *p = r->p;
  /* p < end first: before the first chunk p and end are NULL, and NULL + 1 is undefined */
  if (p < r->end) {
    if (*p > ' ') return;
    if (r->end - p > 1 && *p == ' ' && p[1] > ' ') {
      r->p = p + 1;
      return;
    }
  }
  skip_ws_slow(r);
}

/* ------------------------------------------------------------------ scratch buffers */

static void sb_grow(rd *r, sbuf *b, size_t extra) {
  if (b->n + extra > TR_MAX_STRING_BYTES)
    rd_fail_at(r, TR_ERR_LIMIT, rd_off(r), "string longer than %u bytes (TR_MAX_STRING_BYTES)",
               (unsigned)TR_MAX_STRING_BYTES);
  char *p = ut_grow(b->p, &b->cap, b->n + extra + 1, 1);
  if (!p) rd_nomem(r);
  b->p = p;
}

/* Room for extra more bytes plus the NUL; the common case stays inline. */
static inline void sb_reserve(rd *r, sbuf *b, size_t extra) {
  if (b->n + extra + 1 > b->cap) sb_grow(r, b, extra);
}

static inline void sb_put(rd *r, sbuf *b, const void *s, size_t n) {
  sb_reserve(r, b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void sb_clear(rd *r, sbuf *b) {
  b->n = 0;
  sb_reserve(r, b, 0);
  b->p[0] = '\0';
}

static void sb_free(sbuf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/* ------------------------------------------------------------------ strings */

static void put_utf8(rd *r, sbuf *out, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp == 0) cp = 0xFFFD; /* a NUL would cut the C string */
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  sb_put(r, out, u, n);
}

static void put_replacement(rd *r, sbuf *out) {
  r->t->utf8_replaced++;
  put_utf8(r, out, 0xFFFD);
}

static int next_byte_in_string(rd *r) {
  if (r->p < r->end || rd_refill(r)) return *r->p++;
  rd_fail_at(r, TR_ERR_JSON, rd_off(r), "unterminated string (end of input)");
}

static uint32_t read_hex4(rd *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int c = rd_peek(r);
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      rd_expected(r, "4 hex digits after \\u");
    r->p++;
    v = v * 16u + (uint32_t)d;
  }
  return v;
}

/* Handles an escape after its backslash. out NULL = skipping. A high surrogate must be
 * followed by a "\u" low surrogate; a lone half becomes U+FFFD and the escape after it
 * is handled normally. */
static void string_escape(rd *r, sbuf *out) {
  uint32_t high = 0;
  int c = next_byte_in_string(r);
  for (;;) {
    if (c != 'u') {
      if (high && out) put_replacement(r, out);
      char lit;
      switch (c) {
        case '"':
          lit = '"';
          break;
        case '\\':
          lit = '\\';
          break;
        case '/':
          lit = '/';
          break;
        case 'b':
          lit = '\b';
          break;
        case 'f':
          lit = '\f';
          break;
        case 'n':
          lit = '\n';
          break;
        case 'r':
          lit = '\r';
          break;
        case 't':
          lit = '\t';
          break;
        default:
          r->p--; /* point at the bad escape character */
          rd_fail_at(r, TR_ERR_JSON, rd_off(r), "invalid escape in string");
      }
      if (out) sb_put(r, out, &lit, 1);
      return;
    }
    uint32_t cp = read_hex4(r);
    if (high) {
      if (cp >= 0xDC00 && cp <= 0xDFFF) {
        if (out) put_utf8(r, out, 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00));
        return;
      }
      if (out) put_replacement(r, out);
      high = 0;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      high = cp;
      if (rd_peek(r) != '\\') {
        if (out) put_replacement(r, out);
        return;
      }
      r->p++;
      c = next_byte_in_string(r);
      continue;
    }
    if (out) {
      if (cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
        put_replacement(r, out);
      else
        put_utf8(r, out, cp);
    }
    return;
  }
}

/* One invalid or truncated UTF-8 sequence after its lead byte becomes one U+FFFD (the
 * maximal-subpart rule); the byte that broke it is left for the next round. */
static void string_utf8(rd *r, sbuf *out, uint8_t lead) {
  int need;
  int lo = 0x80, hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF)
    need = 1;
  else if (lead == 0xE0)
    need = 2, lo = 0xA0;
  else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF)
    need = 2;
  else if (lead == 0xED)
    need = 2, hi = 0x9F;
  else if (lead == 0xF0)
    need = 3, lo = 0x90;
  else if (lead >= 0xF1 && lead <= 0xF3)
    need = 3;
  else if (lead == 0xF4)
    need = 3, hi = 0x8F;
  else {
    put_replacement(r, out);
    return;
  }
  char buf[4];
  int n = 0;
  buf[n++] = (char)lead;
  for (int i = 0; i < need; i++) {
    int c = rd_peek(r);
    if (c < lo || c > hi) {
      put_replacement(r, out);
      return;
    }
    r->p++;
    buf[n++] = (char)c;
    lo = 0x80;
    hi = 0xBF;
  }
  sb_put(r, out, buf, (size_t)n);
}

/* End of the run of plain bytes (k_plain) starting at s, or e. SSE2 (baseline on
 * x86-64) tests 16 bytes per step: a byte stops the run if it is the quote, the
 * backslash, or below 0x20 or above 0x7f (one signed compare catches both). */
static inline const uint8_t *plain_end(const uint8_t *s, const uint8_t *e) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (e - s >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                _mm_cmplt_epi8(v, space));
    unsigned bits = (unsigned)_mm_movemask_epi8(stop);
    if (bits) return s + __builtin_ctz(bits);
    s += 16;
  }
#endif
  while (s < e && k_plain[*s]) s++;
  return s;
}

/* First quote or backslash in [s, e), or e: what skipping a string looks for (UTF-8 and
 * control bytes need no check when nothing is stored). */
static inline const uint8_t *quote_or_backslash(const uint8_t *s, const uint8_t *e) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  while (e - s >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    unsigned bits = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
    if (bits) return s + __builtin_ctz(bits);
    s += 16;
  }
#endif
  while (s < e && *s != '"' && *s != '\\') s++;
  return s;
}

/* Stores a run of plain bytes, or stops storing once r->str_cap is passed. Returns the
 * buffer to go on with (NULL = skip the rest). */
static sbuf *store_run(rd *r, sbuf *out, const uint8_t *s, size_t run) {
  if (r->str_cap && out->n + run > r->str_cap) {
    r->str_cut = true;
    return NULL;
  }
  sb_put(r, out, s, run);
  return out;
}

/* Scans a string whose opening quote is consumed. out NULL = skip without storing, at
 * any length: skipping costs no memory, so TR_MAX_STRING_BYTES applies only to what is
 * stored. With r->str_cap set, a stored string longer than str_cap is not an error:
 * storing stops, the rest is skipped and r->str_cut is set (member names, sample text). */
static void scan_string(rd *r, sbuf *out) {
  r->str_cut = false;
  if (out) sb_clear(r, out);
  for (;;) {
    const uint8_t *s = out ? plain_end(r->p, r->end) : quote_or_backslash(r->p, r->end);
    size_t run = (size_t)(s - r->p);
    if (run) {
      if (out) out = store_run(r, out, r->p, run);
      r->p = s;
      if (r->str_cut && !out) continue; /* s may be a byte only the storing path handles */
    }
    if (s == r->end) {
      if (!rd_refill(r))
        rd_fail_at(r, TR_ERR_JSON, rd_off(r), "unterminated string (end of input)");
      continue;
    }
    uint8_t c = *r->p++;
    if (c == '"') return;
    if (c == '\\') {
      string_escape(r, out);
    } else if (c < 0x80) {
      /* only reached when storing: controls pass through (Kineto writes raw tabs), except
       * NUL, which would cut the C string */
      if (c == 0) {
        put_replacement(r, out);
      } else {
        char ch = (char)c;
        sb_put(r, out, &ch, 1);
      }
    } else {
      string_utf8(r, out, c);
    }
    if (out && r->str_cap && out->n > r->str_cap) {
      r->str_cut = true;
      out = NULL;
    }
  }
}

/* ------------------------------------------------------------------ scalars */

static inline bool is_num_char(int c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* The slow path of scan_number: a number running to the chunk's end is gathered across
 * chunks into r->num (NUL-terminated). Returns its text. */
static const char *scan_number_slow(rd *r, uint64_t start) {
  sbuf *b = &r->num;
  b->n = 0;
  for (;;) {
    const uint8_t *s = r->p, *e = r->end;
    while (s < e && is_num_char(*s)) s++;
    if (s > r->p) {
      if (b->n + (size_t)(s - r->p) > TR_MAX_NUMBER_CHARS)
        rd_fail_at(r, TR_ERR_LIMIT, start, "number longer than %u characters (TR_MAX_NUMBER_CHARS)",
                   (unsigned)TR_MAX_NUMBER_CHARS);
      sb_put(r, b, r->p, (size_t)(s - r->p));
      r->p = s;
    }
    if (s < e || !rd_refill(r)) break;
  }
  sb_reserve(r, b, 0);
  b->p[b->n] = '\0';
  return b->p;
}

static inline bool is_digit(uint8_t c) { return (uint8_t)(c - '0') < 10; }

/* Length of the run of ASCII digits at p (p < e). SSE2 classifies 16 bytes at once: a
 * Kineto timestamp is 13-17 digits, an id 1-10. */
static inline size_t digit_run(const uint8_t *p, const uint8_t *e) {
  size_t n = 0;
#ifdef __SSE2__
  if (e - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    unsigned bits = (unsigned)_mm_movemask_epi8(digit);
    if (bits != 0xFFFFu) return (size_t)__builtin_ctz(~bits);
    n = 16;
  }
#endif
  while (p + n < e && is_digit(p[n])) n++;
  return n;
}

/* The fast path of scan_number: one pass over the JSON number grammar inside the chunk
 * that also gathers the decimal mantissa, so converting it later needs no second pass.
 * r->num_exact says the value is exactly num_mantissa / 10^num_frac (negated with num_neg):
 * no exponent and at most 19 significant digits. false (nothing consumed) for anything
 * unusual: a number running to the chunk's end, bad grammar, over-long text. */
static inline bool scan_number_fast(rd *r, bool *is_int) {
  const uint8_t *q = r->p, *e = r->end;
  bool neg = q < e && *q == '-';
  q += neg;
  if (q == e) return false;
  const uint8_t *ip = q, *fp = q;
  size_t ni = digit_run(q, e), nf = 0;
  if (ni == 0 || (ni > 1 && *ip == '0')) return false; /* no digit, or a leading zero */
  q += ni;
  *is_int = true;
  if (q < e && *q == '.') {
    *is_int = false;
    fp = ++q;
    if (q == e || (nf = digit_run(q, e)) == 0) return false;
    q += nf;
  }
  bool exact = true;
  if (q < e && (*q == 'e' || *q == 'E')) {
    *is_int = false;
    exact = false;
    q++;
    if (q < e && (*q == '+' || *q == '-')) q++;
    size_t ne = q < e ? digit_run(q, e) : 0;
    if (ne == 0) return false;
    q += ne;
  }
  if (q == e || is_num_char(*q) || (size_t)(q - r->p) > TR_MAX_NUMBER_CHARS) return false;
  /* significant digits: all of them, less the zeros that lead 0.000123 */
  size_t lead = 0;
  if (*ip == '0')
    while (lead < nf && fp[lead] == '0') lead++;
  size_t sig = (*ip == '0' ? 0 : ni) + nf - lead;
  r->num_exact = exact && sig <= 19;
  r->num_int_len = (unsigned)ni;
  r->num_frac = (unsigned)nf;
  r->num_neg = neg;
  r->nump = (const char *)r->p;
  r->numn = (size_t)(q - r->p);
  r->p = q;
  return true;
}

/* The digits of the last number (fast path, num_exact) as one integer: computed only
 * for the numbers that are kept, most (Ev Idx, Python id, ...) are not. */
static uint64_t num_mantissa(const rd *r) {
  const uint8_t *ip = (const uint8_t *)r->nump + r->num_neg;
  uint64_t m = tr_digits_append(0, ip, r->num_int_len);
  return r->num_frac ? tr_digits_append(m, ip + r->num_int_len + 1, r->num_frac) : m;
}

/* Scans a number, leaves its text in r->nump / r->numn and checks the JSON grammar.
 * Returns true for an integer (no fraction, no exponent). A number that ends inside the
 * current chunk (all but the rare one crossing a chunk boundary) is checked in place
 * instead of being copied first. */
static bool scan_number(rd *r) {
  bool fast_int;
  if (scan_number_fast(r, &fast_int)) return fast_int;
  /* the general path finds the same number and reports errors */
  r->num_exact = false;
  uint64_t start = rd_off(r);
  const char *t;
  size_t n;
  const uint8_t *q = r->p;
  while (q < r->end && is_num_char(*q)) q++;
  if (q < r->end) {
    n = (size_t)(q - r->p);
    if (n > TR_MAX_NUMBER_CHARS)
      rd_fail_at(r, TR_ERR_LIMIT, start, "number longer than %u characters (TR_MAX_NUMBER_CHARS)",
                 (unsigned)TR_MAX_NUMBER_CHARS);
    t = (const char *)r->p;
    r->p = q;
  } else {
    t = scan_number_slow(r, start);
    n = r->num.n;
  }
  r->nump = t;
  r->numn = n;
  size_t i = 0;
  bool is_int = true;
  if (i < n && t[i] == '-') i++;
  if (i < n && t[i] == '0') {
    i++;
  } else if (i < n && t[i] >= '1' && t[i] <= '9') {
    while (i < n && t[i] >= '0' && t[i] <= '9') i++;
  } else {
    goto bad;
  }
  if (i < n && t[i] == '.') {
    is_int = false;
    i++;
    if (!(i < n && t[i] >= '0' && t[i] <= '9')) goto bad;
    while (i < n && t[i] >= '0' && t[i] <= '9') i++;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    is_int = false;
    i++;
    if (i < n && (t[i] == '+' || t[i] == '-')) i++;
    if (!(i < n && t[i] >= '0' && t[i] <= '9')) goto bad;
    while (i < n && t[i] >= '0' && t[i] <= '9') i++;
  }
  if (i != n) goto bad;
  return is_int;
bad:
  rd_fail_at(r, TR_ERR_JSON, start, "invalid number '%.*s'", (int)(n < 40 ? n : 40), t);
}

static void scan_literal(rd *r, const char *word) {
  uint64_t start = rd_off(r);
  for (const char *w = word; *w; w++) {
    if (rd_peek(r) != *w)
      rd_fail_at(r, TR_ERR_JSON, start, "invalid literal (expected '%s')", word);
    r->p++;
  }
}

/* The last number as a NUL-terminated string (copied into r->num when it is a view of
 * the chunk). */
static const char *number_cstr(rd *r) {
  if (r->nump != r->num.p) {
    sb_clear(r, &r->num);
    sb_put(r, &r->num, r->nump, r->numn);
    r->nump = r->num.p;
  }
  return r->num.p;
}

/* Decimal text (JSON number grammar, NUL-terminated) to double: a mantissa of at most 19
 * significant digits is converted exactly (number.h), anything else by strtod. */
static double text_to_double(rd *r, const char *s, size_t n) {
  double d;
  if (r->num_exact && s == r->nump &&
      tr_decimal_to_double(num_mantissa(r), r->num_frac, r->num_neg, &d))
    return d;
  size_t i = 0;
  bool neg = false;
  if (i < n && s[i] == '-') neg = true, i++;
  uint64_t m = 0;
  int digits = 0, frac = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (digits < 19) m = m * 10 + (uint64_t)(s[i] - '0');
    if (m || digits) digits++;
    if (digits > 19) goto slow;
    i++;
  }
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      m = m * 10 + (uint64_t)(s[i] - '0');
      if (m || digits) digits++;
      if (digits > 19) goto slow;
      frac++;
      i++;
    }
  }
  if (i == n && tr_decimal_to_double(m, (unsigned)frac, neg, &d)) return d;
slow:
  return strtod(number_cstr(r), NULL);
}

/* Numeric string (Kineto sometimes quotes ts/dur) to double; false if not a number. */
static bool string_to_double(const char *s, double *out) {
  char *end;
  while (*s == ' ' || *s == '\t') s++;
  if (!*s) return false;
  double d = strtod(s, &end);
  if (end == s) return false;
  while (*end == ' ' || *end == '\t') end++;
  if (*end) return false;
  *out = d;
  return true;
}

/* Integer ids (External id, correlation). Out of int64 range, fractional or sentinel-
 * valued ids count as absent: a wrong id would silently join unrelated events. */
static bool text_to_id(const char *s, bool is_int, int64_t *out) {
  if (is_int) {
    const char *p = s;
    bool neg = *p == '-';
    if (neg) p++;
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
      uint64_t d = (uint64_t)(*p - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    if (*p) return false;
    if (!neg && v > (uint64_t)INT64_MAX) return false;
    if (neg && v > (uint64_t)INT64_MAX) return false; /* INT64_MIN is TR_NO_ID */
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
  }
  double d;
  if (!string_to_double(s, &d) || !isfinite(d) || d != floor(d) || fabs(d) >= 9.2e18) return false;
  *out = (int64_t)d;
  return true;
}

/* ------------------------------------------------------------------ values */

enum { V_STRING, V_NUMBER_INT, V_NUMBER_FLOAT, V_TRUE, V_FALSE, V_NULL, V_CONTAINER };

/* Called right after a container's opening bracket is consumed (always from the current
 * chunk, so p - 1 is the bracket): the error points at the bracket. */
static void check_depth(rd *r, unsigned depth) {
  if (depth > TR_MAX_JSON_DEPTH)
    rd_fail_at(r, TR_ERR_LIMIT, rd_off(r) - 1,
               "JSON nested deeper than %u levels (TR_MAX_JSON_DEPTH)",
               (unsigned)TR_MAX_JSON_DEPTH);
}

static int scan_scalar(rd *r, int c, sbuf *sout) {
  switch (c) {
    case '"':
      r->p++;
      scan_string(r, sout);
      return V_STRING;
    case 't':
      scan_literal(r, "true");
      return V_TRUE;
    case 'f':
      scan_literal(r, "false");
      return V_FALSE;
    case 'n':
      scan_literal(r, "null");
      return V_NULL;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return scan_number(r) ? V_NUMBER_INT : V_NUMBER_FLOAT;
      rd_expected(r, "a JSON value");
  }
}

/* Skips a scalar starting with c (the byte at r->p). Inline for the two that fill the
 * skipped args of a cpu_op (Input type strings, Input Dims integers): a string without
 * escapes and a plain integer, each ending inside the chunk, are stepped over here; the
 * rest go through scan_scalar, which checks and reports what these checks would. */
static inline int skip_scalar(rd *r, int c) {
  const uint8_t *p = r->p, *e = r->end;
  if (c == '"') {
    const uint8_t *q = quote_or_backslash(p + 1, e);
    if (q < e && *q == '"') {
      r->p = q + 1;
      r->str_cut = false;
      return V_STRING;
    }
  } else if (is_digit((uint8_t)c)) {
    size_t n = digit_run(p, e);
    if ((n == 1 || c != '0') && (size_t)(e - p) > n && !is_num_char(p[n]) &&
        n <= TR_MAX_NUMBER_CHARS) {
      r->p = p + n;
      return V_NUMBER_INT;
    }
  }
  return scan_scalar(r, c, NULL);
}

/* Skips the container whose opening bracket was just consumed. parent_depth is the depth
 * of the value holding it. Iterative with an explicit stack: nesting costs one byte per
 * level, never C stack. */
static void skip_container(rd *r, uint8_t open, unsigned depth) {
  uint8_t stack[TR_MAX_JSON_DEPTH + 1];
  size_t sp = 0;
  check_depth(r, depth);
  stack[sp++] = open;
  bool first = true;
  for (;;) {
    skip_ws(r);
    int c = rd_peek(r);
    uint8_t top = stack[sp - 1];
    if (first && c == (top == '{' ? '}' : ']')) {
      r->p++;
      goto closed;
    }
    if (top == '{') {
      if (c != '"') rd_expected(r, first ? "a member name or '}'" : "a member name");
      r->p++;
      scan_string(r, NULL);
      skip_ws(r);
      if (rd_peek(r) != ':') rd_expected(r, "':' after member name");
      r->p++;
      skip_ws(r);
      c = rd_peek(r);
    }
    if (c == '{' || c == '[') {
      r->p++;
      check_depth(r, depth + sp);
      stack[sp++] = (uint8_t)c;
      first = true;
      continue;
    }
    skip_scalar(r, c);
    for (;;) { /* after a value */
      skip_ws(r);
      c = rd_peek(r);
      top = stack[sp - 1];
      if (c == ',') {
        r->p++;
        first = false;
        break;
      }
      if (c != (top == '{' ? '}' : ']')) rd_expected(r, top == '{' ? "',' or '}'" : "',' or ']'");
      r->p++;
    closed:
      if (--sp == 0) return;
    }
  }
}

/* Reads one value at depth; strings go to sout (NULL = skip), numbers to r->num,
 * containers are skipped. Leading whitespace must already be skipped. */
static int read_value(rd *r, unsigned depth, sbuf *sout) {
  int c = rd_peek(r);
  if (c == '{' || c == '[') {
    r->p++;
    skip_container(r, (uint8_t)c, depth);
    return V_CONTAINER;
  }
  return sout ? scan_scalar(r, c, sout) : skip_scalar(r, c);
}

static void expect_colon_slow(rd *r) {
  skip_ws(r);
  if (rd_peek(r) != ':') rd_expected(r, "':' after member name");
  r->p++;
  skip_ws(r);
}

/* Inline: it runs once per member (a million times on a cpu_op-heavy trace), and the
 * common case is a compare or two. */
static inline void expect_colon(rd *r) {
  const uint8_t *p = r->p;
  /* Kineto's '": "' and a compact '":"', each decided in one step */
  if (p < r->end && r->end - p > 2 && p[0] == ':' && (p[1] > ' ' || (p[1] == ' ' && p[2] > ' '))) {
    r->p = p + 1 + (p[1] == ' ');
    return;
  }
  expect_colon_slow(r);
}

static bool next_member_slow(rd *r, char close);

/* After a member or element: true if another follows, false at the closing bracket.
 * Inline for the common ', ' or ',' (see expect_colon). */
static inline bool next_member(rd *r, char close) {
  const uint8_t *p = r->p;
  if (p < r->end && r->end - p > 2 && p[0] == ',' && (p[1] > ' ' || (p[1] == ' ' && p[2] > ' '))) {
    r->p = p + 1 + (p[1] == ' '); /* ', ' or ',' then the next token */
    return true;
  }
  return next_member_slow(r, close);
}

static bool next_member_slow(rd *r, char close) {
  skip_ws(r);
  int c = rd_peek(r);
  if (c == ',') {
    r->p++;
    skip_ws(r);
    return true;
  }
  if (c == close) {
    r->p++;
    return false;
  }
  rd_expected(r, close == '}' ? "',' or '}'" : "',' or ']'");
}

/* Longest member name key_code (or the top level's "traceEvents") recognises: a longer
 * name needs no storing to be classified ("Process Group Description"). */
#define KEY_MAX_CLASSIFIED 25u

/* Reads a member name whose opening quote is consumed and returns its key_code. A name
 * of plain bytes that ends inside the chunk (nearly all of them) is classified in place;
 * otherwise it is scanned into r->key (escapes, chunk boundaries and errors all go
 * through scan_string), keeping at most KEY_MAX_CLASSIFIED + 1 bytes, or up to
 * SAMPLE_STRING_CAP when keep (the sample text wants the name; r->key_cut says it was
 * longer). Names are never refused for their length: they are not stored. */
static int scan_key(rd *r, bool keep) {
  if (!keep) {
    const uint8_t *s = plain_end(r->p, r->end);
    if (s < r->end && *s == '"') {
      int code = key_code((const char *)r->p, (size_t)(s - r->p));
      r->p = s + 1;
      return code;
    }
  }
  r->str_cap = keep ? SAMPLE_STRING_CAP : KEY_MAX_CLASSIFIED + 1u;
  scan_string(r, &r->key);
  r->str_cap = 0;
  r->key_cut = r->str_cut;
  return r->key_cut ? K_OTHER : key_code(r->key.p, r->key.n);
}

static bool key_is(const sbuf *k, const char *lit, size_t n) {
  return k->n == n && memcmp(k->p, lit, n) == 0;
}
#define KEY_IS(k, lit) key_is((k), lit, sizeof(lit) - 1)

/* ------------------------------------------------------------------ event fields */

static void sample_add(rd *r, const char *s, size_t n) {
  tr_trace *t = r->t;
  if (n == 0 || t->sample_len + n + 2 > TR_MAX_SAMPLE_BYTES) return;
  if (t->sample_len + n + 2 > t->sample_cap) {
    char *p = ut_grow(t->sample, &t->sample_cap, t->sample_len + n + 2, 1);
    if (!p) rd_nomem(r);
    t->sample = p;
  }
  if (t->sample_len) t->sample[t->sample_len++] = ' ';
  memcpy(t->sample + t->sample_len, s, n);
  t->sample_len += n;
  t->sample[t->sample_len] = '\0';
}

/* Numbers as text the way Python prints what json.load made of them: integers as given
 * (except "-0", which is int 0), floats as given. */
static void number_text(rd *r, int type, sbuf *out) {
  sb_clear(r, out);
  if (type == V_NUMBER_INT && r->numn == 2 && memcmp(r->nump, "-0", 2) == 0)
    sb_put(r, out, "0", 1);
  else
    sb_put(r, out, r->nump, r->numn);
}

/* pid / tid / stream: strings kept, numbers as text; anything else is absent. */
static bool read_textual(rd *r, unsigned depth, sbuf *out) {
  int type = read_value(r, depth, out);
  if (type == V_STRING) return true;
  if (type == V_NUMBER_INT || type == V_NUMBER_FLOAT) {
    number_text(r, type, out);
    return true;
  }
  return false;
}

static int read_time(rd *r, unsigned depth, double *out) {
  int type = read_value(r, depth, &r->argval);
  double d;
  if (type == V_NUMBER_INT || type == V_NUMBER_FLOAT)
    d = text_to_double(r, r->nump, r->numn);
  else if (type == V_STRING) {
    if (!string_to_double(r->argval.p, &d)) return F_BAD;
  } else if (type == V_NULL) {
    return F_BAD;
  } else {
    return F_BAD;
  }
  if (!isfinite(d) || d < 0) return F_BAD;
  *out = d;
  return F_OK;
}

static int64_t read_id(rd *r, unsigned depth) {
  int type = read_value(r, depth, &r->argval);
  int64_t v;
  if (type == V_NUMBER_INT && r->num_exact) { /* the common case */
    uint64_t m = num_mantissa(r);
    if (m <= (uint64_t)INT64_MAX) return r->num_neg ? -(int64_t)m : (int64_t)m;
  }
  if (type == V_NUMBER_INT || type == V_NUMBER_FLOAT) {
    if (text_to_id(number_cstr(r), type == V_NUMBER_INT, &v)) return v;
  } else if (type == V_STRING) {
    if (text_to_id(r->argval.p, false, &v)) return v;
  }
  return TR_NO_ID;
}

/* ------------------------------------------------------------------ kept args */

_Static_assert(TR_MAX_ARG_BYTES * 8u <= TR_MAX_STRING_BYTES,
               "a kept arg's text and one escaped string past it fit a scratch buffer");

/* Appends n bytes to a kept arg's text, or gives up on it (NULL) when that would pass
 * TR_MAX_ARG_BYTES; NULL stays NULL, so the value is scanned to its end storing nothing. */
static sbuf *arg_put(rd *r, sbuf *o, const void *s, size_t n) {
  if (!o || o->n + n > TR_MAX_ARG_BYTES) return NULL;
  sb_put(r, o, s, n);
  return o;
}

/* A decoded string as JSON text, escaped as json.dumps(ensure_ascii=False) does. */
static sbuf *put_json_string(rd *r, sbuf *o, const char *s, size_t n) {
  o = arg_put(r, o, "\"", 1);
  for (size_t i = 0; i < n && o;) {
    size_t j = i;
    while (j < n && (uint8_t)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') j++;
    o = arg_put(r, o, s + i, j - i);
    if (j == n) break;
    uint8_t c = (uint8_t)s[j];
    char esc[8];
    const char *short_esc = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\n' ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                            : c == '\b' ? "\\b"
                            : c == '\f' ? "\\f"
                                        : NULL;
    if (!short_esc) snprintf(esc, sizeof esc, "\\u%04x", c);
    o = arg_put(r, o, short_esc ? short_esc : esc, strlen(short_esc ? short_esc : esc));
    i = j + 1;
  }
  return arg_put(r, o, "\"", 1);
}

/* A string inside a kept container, its opening quote consumed. Plain bytes that end in
 * the chunk are their own JSON text; anything else is decoded, then escaped again. */
static sbuf *capture_string(rd *r, sbuf *o) {
  if (!o) {
    scan_string(r, NULL);
    return NULL;
  }
  const uint8_t *s = plain_end(r->p, r->end);
  if (s < r->end && *s == '"') {
    o = arg_put(r, o, r->p - 1, (size_t)(s - r->p) + 2); /* both quotes */
    r->p = s + 1;
    return o;
  }
  r->str_cap = TR_MAX_ARG_BYTES;
  scan_string(r, &r->argval);
  r->str_cap = 0;
  return r->str_cut ? NULL : put_json_string(r, o, r->argval.p, r->argval.n);
}

static sbuf *capture_scalar(rd *r, sbuf *o, int c) {
  if (c == '"') {
    r->p++;
    return capture_string(r, o);
  }
  int type = scan_scalar(r, c, NULL);
  if (type == V_TRUE) return arg_put(r, o, "true", 4);
  if (type == V_FALSE) return arg_put(r, o, "false", 5);
  if (type == V_NULL) return arg_put(r, o, "null", 4);
  return arg_put(r, o, r->nump, r->numn);
}

/* Writes the container whose opening bracket was just consumed to o as compact JSON
 * (tr_event_arg); NULL when its text passed TR_MAX_ARG_BYTES. The walk and its errors are
 * skip_container's. */
static sbuf *capture_container(rd *r, sbuf *o, uint8_t open, unsigned depth) {
  uint8_t stack[TR_MAX_JSON_DEPTH + 1];
  size_t sp = 0;
  check_depth(r, depth);
  stack[sp++] = open;
  o = arg_put(r, o, &open, 1);
  bool first = true;
  for (;;) {
    skip_ws(r);
    int c = rd_peek(r);
    uint8_t top = stack[sp - 1], close = top == '{' ? '}' : ']';
    if (first && c == close) {
      r->p++;
      o = arg_put(r, o, &close, 1);
      goto closed;
    }
    if (top == '{') {
      if (c != '"') rd_expected(r, first ? "a member name or '}'" : "a member name");
      r->p++;
      o = capture_string(r, o);
      skip_ws(r);
      if (rd_peek(r) != ':') rd_expected(r, "':' after member name");
      r->p++;
      skip_ws(r);
      o = arg_put(r, o, ": ", 2);
      c = rd_peek(r);
    }
    if (c == '{' || c == '[') {
      r->p++;
      check_depth(r, depth + sp);
      stack[sp++] = (uint8_t)c;
      o = arg_put(r, o, &(char){(char)c}, 1);
      first = true;
      continue;
    }
    o = capture_scalar(r, o, c);
    for (;;) { /* after a value */
      skip_ws(r);
      c = rd_peek(r);
      top = stack[sp - 1];
      close = top == '{' ? '}' : ']';
      if (c == ',') {
        r->p++;
        o = arg_put(r, o, ", ", 2);
        first = false;
        break;
      }
      if (c != close) rd_expected(r, top == '{' ? "',' or '}'" : "',' or ']'");
      r->p++;
      o = arg_put(r, o, &close, 1);
    closed:
      if (--sp == 0) return o;
    }
  }
}

/* The memo of kept containers. A model's ops repeat a few shapes: the same bytes of
 * "Input Dims" and "Input type" come back on nearly every CPU op, so the compact text of
 * a container, and its interned id, are remembered by the exact bytes of the file. Only
 * a container that lies whole in the chunk, in printable ASCII with strings free of
 * escapes, is remembered: the same bytes then parse the same way, with the same errors
 * (none: only a container that was read is remembered) and no UTF-8 repair to count. */
#define ARG_MEMO_SLOTS 4096u
#define ARG_MEMO_RAW 1024u /* longest file text remembered */
#define ARG_MEMO_DEPTH 16u

struct arg_memo {
  uint64_t hash;
  uint32_t gen; /* 0: empty */
  tr_str id;    /* 0 until interned for a stored event */
  unsigned key;
  char *raw, *text; /* raw: the file's bytes; text: the compact JSON (one allocation) */
  size_t raw_n, text_n, cap;
};

/* First byte in [s, e) that is a bracket, a quote, a backslash or past ASCII, or e. */
static inline const uint8_t *next_structural(const uint8_t *s, const uint8_t *e) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  const __m128i lower = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  while (e - s >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i vl = _mm_or_si128(v, lower); /* '[' ']' -> '{' '}' */
    __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(vl, open), _mm_cmpeq_epi8(vl, close)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
    unsigned bits = (unsigned)_mm_movemask_epi8(_mm_or_si128(hit, v));
    if (bits) return s + __builtin_ctz(bits);
    s += 16;
  }
#endif
  for (; s < e; s++) {
    uint8_t c = *s;
    if (c == '[' || c == ']' || c == '{' || c == '}' || c == '"' || c == '\\' || c >= 0x80)
      return s;
  }
  return e;
}

/* End of the container whose bracket is at s, when all of it is in [s, e) and can be
 * remembered (see above); NULL otherwise. Not a validator: a text that is not JSON is
 * never in the memo, so its extent only has to be found for JSON. */
static const uint8_t *plain_container_end(const uint8_t *s, const uint8_t *e) {
  unsigned depth = 0;
  for (const uint8_t *p = s; (p = next_structural(p, e)) < e; p++) {
    if (*p == '"') {
      p = plain_end(p + 1, e);
      if (p == e || *p != '"') return NULL;
    } else if (*p == '[' || *p == '{') {
      if (++depth > ARG_MEMO_DEPTH) return NULL;
    } else if (*p == ']' || *p == '}') {
      if (--depth == 0) return p + 1;
    } else {
      return NULL;
    }
  }
  return NULL;
}

static uint64_t memo_hash(unsigned k, const uint8_t *raw, size_t n) {
  return te_hash_text((const char *)raw, n) ^ ((uint64_t)k * 0x9e3779b97f4a7c15ull);
}

static struct arg_memo *memo_entry(rd *r, uint64_t h) {
  if (!r->memo && !(r->memo = calloc(ARG_MEMO_SLOTS, sizeof *r->memo))) rd_nomem(r);
  return &r->memo[h % ARG_MEMO_SLOTS];
}

/* Whether kept arg k's container of n bytes at raw was seen; if so, its text or id is
 * taken (store_args interns the text when the id is not known yet). */
static bool memo_lookup(rd *r, unsigned k, uint64_t h, const uint8_t *raw, size_t n) {
  struct arg_memo *m = memo_entry(r, h);
  if (!m->gen || m->hash != h || m->key != k || m->raw_n != n || memcmp(m->raw, raw, n) != 0)
    return false;
  r->arg_slot[k] = (int)(m - r->memo);
  r->arg_gen[k] = m->gen;
  r->arg_id[k] = m->id;
  if (!m->id) {
    sb_clear(r, &r->argv[k]);
    sb_put(r, &r->argv[k], m->text, m->text_n);
  }
  return true;
}

/* Remembers kept arg k's container (raw, n bytes) and its compact text. */
static void memo_store(rd *r, unsigned k, uint64_t h, const uint8_t *raw, size_t n) {
  struct arg_memo *m = memo_entry(r, h);
  const sbuf *text = &r->argv[k];
  if (n + text->n > m->cap) {
    char *p = ut_grow(m->raw, &m->cap, n + text->n, 1);
    if (!p) rd_nomem(r);
    m->raw = p;
  }
  memcpy(m->raw, raw, n);
  m->text = m->raw + n;
  memcpy(m->text, text->p, text->n);
  m->raw_n = n;
  m->text_n = text->n;
  m->hash = h;
  m->key = k;
  m->id = 0;
  m->gen = ++r->memo_gen ? r->memo_gen : ++r->memo_gen; /* 0 marks an empty entry */
  r->arg_slot[k] = (int)(m - r->memo);
  r->arg_gen[k] = m->gen;
}

/* The id kept arg k was interned as, for its memo entry if that is still the same. */
static void memo_note_id(rd *r, unsigned k, tr_str id) {
  if (r->arg_slot[k] < 0) return;
  struct arg_memo *m = &r->memo[r->arg_slot[k]];
  if (m->gen == r->arg_gen[k]) m->id = id;
}

static void memo_free(rd *r) {
  if (!r->memo) return;
  for (size_t i = 0; i < ARG_MEMO_SLOTS; i++) free(r->memo[i].raw);
  free(r->memo);
  r->memo = NULL;
}

/* A kept container, its bracket next in the chunk: from the memo, else read (and
 * remembered when it can be). NULL when its text passed TR_MAX_ARG_BYTES. */
static sbuf *capture_kept_container(rd *r, unsigned k, unsigned depth) {
  const uint8_t *start = r->p;
  uint64_t start_off = rd_off(r);
  const uint8_t *end = plain_container_end(start, r->end);
  size_t n = end ? (size_t)(end - start) : 0;
  uint64_t h = 0;
  if (end && n <= ARG_MEMO_RAW) {
    h = memo_hash(k, start, n);
    if (memo_lookup(r, k, h, start, n)) {
      r->p = end;
      return &r->argv[k];
    }
  }
  uint8_t open = *r->p++;
  sbuf *o = capture_container(r, &r->argv[k], open, depth);
  /* read to exactly the end found: the chunk did not change, start is still valid */
  if (o && end && n <= ARG_MEMO_RAW && rd_off(r) == start_off + n) memo_store(r, k, h, start, n);
  return o;
}

/* The value of kept arg k (tr_event_arg) into r->argv[k]: 1 stored, 0 absent (null, an
 * empty string, a value of another kind), -1 dropped for its length. While sampling, a
 * string value goes to the sample text as any other arg's does. */
static int capture_value(rd *r, unsigned k, unsigned depth, bool sample) {
  sbuf *out = &r->argv[k];
  sb_clear(r, out);
  r->arg_id[k] = 0;
  r->arg_slot[k] = -1;
  int c = rd_peek(r);
  if (c == '"') {
    r->p++;
    r->str_cap = sample ? SAMPLE_STRING_CAP : TR_MAX_ARG_BYTES;
    scan_string(r, out);
    r->str_cap = 0;
    if (sample && !r->str_cut) sample_add(r, out->p, out->n);
    if (r->str_cut || out->n > TR_MAX_ARG_BYTES) return -1;
    return out->n > 0;
  }
  if (c == '{' || c == '[') return capture_kept_container(r, k, depth) ? 1 : -1;
  int type = scan_scalar(r, c, NULL);
  if (type == V_NULL) return 0;
  const char *word = type == V_TRUE ? "true" : type == V_FALSE ? "false" : NULL;
  sb_put(r, out, word ? word : r->nump, word ? strlen(word) : r->numn);
  return 1;
}

static void capture_arg(rd *r, unsigned k, unsigned depth, bool sample) {
  int got = capture_value(r, k, depth, sample);
  uint32_t bit = 1u << k;
  /* a member repeated in one args object: the last one wins */
  r->arg_mask = got > 0 ? r->arg_mask | bit : r->arg_mask & ~bit;
  r->arg_dropped = got < 0 ? r->arg_dropped | bit : r->arg_dropped & ~bit;
}

static void parse_args(rd *r, unsigned depth) {
  check_depth(r, depth);
  skip_ws(r);
  if (rd_peek(r) == '}') {
    r->p++;
    return;
  }
  unsigned n_args = 0;
  do {
    if (rd_peek(r) != '"') rd_expected(r, "a member name");
    r->p++;
    bool sample = r->sampling && n_args < SAMPLE_ARGS;
    int key = scan_key(r, sample); /* sampling needs the name's text in r->key */
    expect_colon(r);
    n_args++;
    if (sample && !r->key_cut) sample_add(r, r->key.p, r->key.n);
    if (key == K_EXTERNAL_ID) {
      r->ext = read_id(r, depth + 1);
    } else if (key == K_CORRELATION) {
      r->corr = read_id(r, depth + 1);
    } else if (key == K_STREAM || key == K_CUDA_STREAM) {
      /* "stream" wins over "cuda_stream" whatever their order */
      int prio = key == K_STREAM ? 2 : 1;
      if (prio > r->stream_prio && read_textual(r, depth + 1, &r->stream)) {
        r->stream_prio = prio;
        if (sample) sample_add(r, r->stream.p, r->stream.n);
      } else if (prio <= r->stream_prio) {
        read_value(r, depth + 1, NULL);
      }
    } else if (key == K_NAME) {
      int type = read_value(r, depth + 1, &r->argname);
      r->has_argname = type == V_STRING;
      if (sample && r->has_argname) sample_add(r, r->argname.p, r->argname.n);
    } else if (key >= K_ARG0) {
      capture_arg(r, (unsigned)(key - K_ARG0), depth + 1, sample);
    } else if (sample) {
      /* an over-long value is left out of the sample, not refused */
      r->str_cap = SAMPLE_STRING_CAP;
      int type = read_value(r, depth + 1, &r->argval);
      r->str_cap = 0;
      if (type == V_STRING && !r->str_cut) sample_add(r, r->argval.p, r->argval.n);
    } else {
      read_value(r, depth + 1, NULL);
    }
  } while (next_member(r, '}'));
}

/* ------------------------------------------------------------------ classification */

static bool contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Lower-cased copy (ASCII) of b into out; returns its text. */
static const char *lower_into(rd *r, sbuf *out, const sbuf *b) {
  sb_clear(r, out);
  sb_reserve(r, out, b->n);
  te_ascii_lower(out->p, b->p, b->n);
  out->n = b->n;
  out->p[b->n] = '\0';
  return out->p;
}

/* Lower-cased copy (ASCII) of b into r->lc. */
static const char *lower(rd *r, const sbuf *b) { return lower_into(r, &r->lc, b); }

static bool is_metadata_name(const char *name) {
  return strcmp(name, "process_name") == 0 || strcmp(name, "thread_name") == 0 ||
         strcmp(name, "process_sort_index") == 0 || strcmp(name, "thread_sort_index") == 0;
}

/* What classify asks of a category. The substring tests are on the lower-cased category
 * (so legacy "Kernel" counts), the exact ones on the category as written. */
enum {
  CAT_NOT_KERNEL = 1 << 0,     /* holds python_function, cpu_op or trace */
  CAT_ANNOTATION = 1 << 1,     /* holds annotation */
  CAT_KERNEL = 1 << 2,         /* holds kernel, or starts with gpu_ */
  CAT_XPU_RUNTIME_LC = 1 << 3, /* lower-cased, is xpu_runtime */
  CAT_CPU_OP = 1 << 4,         /* is cpu_op */
  CAT_CUDA_RT = 1 << 5,        /* is cuda_runtime or cuda_driver */
  CAT_XPU_RUNTIME = 1 << 6,    /* is xpu_runtime */
  CAT_PYTHON = 1 << 7,         /* is python_function */
  CAT_USER_ANN = 1 << 8,       /* is user_annotation */
  CAT_GPU_USER_ANN = 1 << 9    /* is gpu_user_annotation */
};

static unsigned cat_bits(rd *r) {
  const char *cat = r->cat.p;
  /* lower-cased in its own buffer: lower() reuses r->lc for names */
  const char *lc = lower_into(r, &r->catlc, &r->cat);
  unsigned bits = 0;
  if (contains(lc, "python_function") || contains(lc, "cpu_op") || contains(lc, "trace"))
    bits |= CAT_NOT_KERNEL;
  if (contains(lc, "annotation")) bits |= CAT_ANNOTATION;
  if (contains(lc, "kernel") || starts_with(lc, "gpu_")) bits |= CAT_KERNEL;
  if (strcmp(lc, "xpu_runtime") == 0) bits |= CAT_XPU_RUNTIME_LC;
  if (strcmp(cat, "cpu_op") == 0) bits |= CAT_CPU_OP;
  if (strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0) bits |= CAT_CUDA_RT;
  if (strcmp(cat, "xpu_runtime") == 0) bits |= CAT_XPU_RUNTIME;
  if (strcmp(cat, "python_function") == 0) bits |= CAT_PYTHON;
  if (strcmp(cat, "user_annotation") == 0) bits |= CAT_USER_ANN;
  if (strcmp(cat, "gpu_user_annotation") == 0) bits |= CAT_GPU_USER_ANN;
  return bits;
}

static bool memo_get(const text_memo *m, const sbuf *b, unsigned *value) {
  for (unsigned i = 0; i < m->n; i++)
    if (m->slot[i].n == b->n && memcmp(m->slot[i].s, b->p, b->n) == 0) {
      *value = m->slot[i].value;
      return true;
    }
  return false;
}

static void memo_put(text_memo *m, const sbuf *b, unsigned value) {
  if (b->n >= MEMO_TEXT || memchr(b->p, '\0', b->n)) return;
  unsigned i = m->next;
  m->next = (m->next + 1) % MEMO_SLOTS;
  if (m->n < MEMO_SLOTS) m->n++;
  memcpy(m->slot[i].s, b->p, b->n);
  m->slot[i].n = b->n;
  m->slot[i].value = value;
}

/* cat_bits of the event's category, remembered. */
static unsigned cat_profile_of(rd *r) {
  unsigned bits;
  if (memo_get(&r->cat_memo, &r->cat, &bits)) return bits;
  bits = cat_bits(r);
  memo_put(&r->cat_memo, &r->cat, bits);
  return bits;
}

/* Whether a runtime call's name holds "launch" in any case, remembered per name. */
static bool names_a_launch(rd *r) {
  unsigned yes;
  if (memo_get(&r->launch_memo, &r->name, &yes)) return yes;
  yes = contains(lower(r, &r->name), "launch");
  memo_put(&r->launch_memo, &r->name, yes);
  return yes;
}

/* The reference's kernel-table detector (docs/reference.md 2.5). A dur that is present
 * but unusable is treated as positive here so the event is counted as skipped rather
 * than silently dropped. */
static bool is_gpu_kernel(rd *r, unsigned cat) {
  bool dur_pos = r->dur_state == F_BAD || (r->dur_state == F_OK && r->dur > 0);
  if (!dur_pos || r->ts_state == F_ABSENT) return false;
  const char *name = r->name.p;
  if (is_metadata_name(name)) return false;
  if (cat & CAT_NOT_KERNEL) return false;
  if ((cat & CAT_ANNOTATION) || starts_with(name, "## call ")) return false;
  if (cat & CAT_KERNEL) return true;
  if ((cat & CAT_XPU_RUNTIME_LC) && contains(lower(r, &r->name), "enqueuekernellaunch"))
    return true;
  const char *name_lc = lower(r, &r->name);
  if (contains(name_lc, ".py(") || starts_with(name_lc, "python/") ||
      starts_with(name_lc, "nn.module:"))
    return false;
  return r->stream_prio > 0;
}

/* Category of a kept "X" event, or -1 to drop it. */
static int classify(rd *r) {
  const char *cat = r->cat.p;
  /* The two commonest categories, decided without the general tests below (which give
   * the same answer: is_gpu_kernel is false for both, then the exact matches pick them). */
  if (r->cat.n == 15 && memcmp(cat, "python_function", 15) == 0) return TR_KIND_PYFRAME;
  if (r->cat.n == 6 && memcmp(cat, "cpu_op", 6) == 0) return TR_KIND_CPU_OP;
  unsigned bits = cat_profile_of(r);
  if (is_gpu_kernel(r, bits)) return TR_KIND_KERNEL;
  if (bits & CAT_CPU_OP) return TR_KIND_CPU_OP;
  bool cuda_rt = (bits & CAT_CUDA_RT) != 0;
  if (cuda_rt && r->corr != TR_NO_ID && names_a_launch(r)) return TR_KIND_LAUNCH;
  if (bits & CAT_PYTHON) return TR_KIND_PYFRAME;
  if (bits & CAT_USER_ANN) return TR_KIND_USER_ANNOTATION;
  if (bits & CAT_GPU_USER_ANN) return TR_KIND_GPU_ANNOTATION;
  if ((cuda_rt || (bits & CAT_XPU_RUNTIME)) && r->corr != TR_NO_ID) return TR_KIND_RUNTIME;
  return -1;
}

/* ------------------------------------------------------------------ storing */

static tr_str intern(rd *r, const sbuf *b, bool present) {
  if (!present || b->n == 0) return 0;
  uint32_t id = tr_intern_put(r->t->in, b->p, b->n);
  if (id == UINT32_MAX) rd_nomem(r);
  return id;
}

/* intern() through a one-entry cache of the field's last value (same ids, fewer hashes). */
static tr_str intern_cached(rd *r, const sbuf *b, bool present, struct icache *c) {
  if (!present || b->n == 0) return 0;
  if (c->id && c->n == b->n && memcmp(c->s, b->p, b->n) == 0) return c->id;
  tr_str id = intern(r, b, true);
  c->id = 0;
  if (b->n <= sizeof c->s) {
    memcpy(c->s, b->p, b->n);
    c->n = b->n;
    c->id = id;
  }
  return id;
}

static void corr_put(rd *r, int64_t corr, int64_t ext) {
  tr_trace *t = r->t;
  uint32_t ck = tr_id_encode(&t->corr_base, corr), ek = tr_id_encode(&t->ext_base, ext);
  /* later events win, as a dict assignment would: a later pair overwrites the marker */
  if (ck != TR_OFF_WIDE) {
    if (t->n_corr_pairs == t->cap_corr_pairs) {
      size_t cap = t->cap_corr_pairs;
      struct corr_pair *p = ut_grow(t->corr_pairs, &cap, t->n_corr_pairs + 1, sizeof *p);
      if (!p) rd_nomem(r);
      t->corr_pairs = p;
      t->cap_corr_pairs = cap;
    }
    t->corr_pairs[t->n_corr_pairs++] = (struct corr_pair){ck, ek};
  }
  if ((ck == TR_OFF_WIDE || ek == TR_OFF_WIDE) && tr_map64_put(&t->corr_map_wide, corr, ext) != 0)
    rd_nomem(r);
}

/* 32-bit offset of an event's id; an id outside the window is kept in wide by index. */
static uint32_t store_id(rd *r, tr_idbase *b, tr_map64 *wide, int64_t id, uint32_t index) {
  uint32_t off = tr_id_encode(b, id);
  if (off == TR_OFF_WIDE && tr_map64_put(wide, index, id) != 0) rd_nomem(r);
  return off;
}

/* dur as whole nanoseconds; one that is not exactly that is kept in wide under key (an
 * event's index, a frame's position). */
static uint32_t store_dur(rd *r, tr_map64 *wide, double dur, int64_t key) {
  uint32_t ns = tr_dur_encode(dur);
  if (ns != TR_DUR_WIDE) return ns;
  int64_t bits;
  memcpy(&bits, &dur, sizeof bits);
  if (tr_map64_put(wide, key, bits) != 0) rd_nomem(r);
  return ns;
}

/* The dur store_dur kept under key (0.0 if none). */
static double wide_dur(const tr_map64 *wide, int64_t key) {
  int64_t bits;
  double dur = 0.0;
  if (tr_map64_get(wide, key, &bits)) memcpy(&dur, &bits, sizeof dur);
  return dur;
}

/* Position of c in the context table, trying the last context of the same kind first. */
static uint32_t event_ctx(rd *r, int kind, const tr_event_ctx *c) {
  uint32_t pos = tr_ctxtab_put(&r->t->ctx, c, &r->last_ctx[kind]);
  if (pos == UINT32_MAX) rd_nomem(r);
  return pos;
}

static void push_event(rd *r, int kind, const tr_event *e) {
  ev_vec *v = &r->t->ev[kind];
  if (v->n == v->cap) {
    tr_event *p = ut_grow(v->v, &v->cap, v->n + 1, sizeof *p);
    if (!p) rd_nomem(r);
    v->v = p;
  }
  v->v[v->n++] = *e;
}

static int64_t frame_thread_key(tr_str pid, tr_str tid) {
  return (int64_t)(((uint64_t)pid << 32) | tid);
}

/* A frame on another thread than the previous frame starts a run; v->prev becomes the
 * thread's previous frame. */
static void note_pyframe_thread(rd *r, py_vec *v, tr_str pid, tr_str tid) {
  if (v->n_runs) {
    const tr_pyframe_run *last = &v->runs[v->n_runs - 1];
    if (last->pid == pid && last->tid == tid) {
      v->prev = v->n - 1;
      return;
    }
    if (tr_map64_put(&v->thread_last, frame_thread_key(last->pid, last->tid), (int64_t)v->n - 1))
      rd_nomem(r);
  }
  int64_t prev;
  v->prev =
      tr_map64_get(&v->thread_last, frame_thread_key(pid, tid), &prev) ? (size_t)prev : SIZE_MAX;
  if (v->n_runs == v->cap_runs) {
    tr_pyframe_run *p = ut_grow(v->runs, &v->cap_runs, v->n_runs + 1, sizeof *p);
    if (!p) rd_nomem(r);
    v->runs = p;
  }
  v->runs[v->n_runs++] = (tr_pyframe_run){(uint32_t)v->n, pid, tid};
}

/* A frame (ts, dur) after its thread's previous one keeps the thread in (ts, -end) order
 * when it starts later, or at the same time and ends no later (file order breaks ties). */
static void check_pyframe_order(const tr_trace *t, py_vec *v, double ts, double dur) {
  if (v->unsorted || v->prev == SIZE_MAX) return;
  const tr_pyframe *a = &v->v[v->prev];
  if (a->ts < ts) return;
  if (a->ts == ts && a->ts + tr_pyframe_dur(t, a) >= ts + dur) return;
  v->unsorted = true;
}

static void note_pyframe_name(rd *r, py_vec *v, tr_str name) {
  if (name / 64 >= v->seen_words) {
    uint64_t *p = ut_grow_zeroed(v->seen, &v->seen_words, name / 64 + 1, sizeof *p);
    if (!p) rd_nomem(r);
    v->seen = p;
  }
  if (v->seen[name / 64] >> (name % 64) & 1) return;
  v->seen[name / 64] |= 1ull << (name % 64);
  if (v->n_names == v->cap_names) {
    tr_str *p = ut_grow(v->names, &v->cap_names, v->n_names + 1, sizeof *p);
    if (!p) rd_nomem(r);
    v->names = p;
  }
  v->names[v->n_names++] = name;
}

static void push_pyframe(rd *r, double ts, double dur, tr_str name, tr_str pid, tr_str tid) {
  py_vec *v = &r->t->py;
  if (v->n == v->cap) {
    tr_pyframe *p = ut_grow(v->v, &v->cap, v->n + 1, sizeof *p);
    if (!p) rd_nomem(r);
    v->v = p;
  }
  note_pyframe_thread(r, v, pid, tid);
  check_pyframe_order(r->t, v, ts, dur);
  note_pyframe_name(r, v, name);
  uint32_t code = store_dur(r, &v->dur_wide, dur, (int64_t)v->n);
  v->v[v->n++] = (tr_pyframe){ts, name, code};
}

static void push_thread_name(rd *r) {
  tr_trace *t = r->t;
  if (t->n_tn == t->cap_tn) {
    tr_thread_name *p = ut_grow(t->tn, &t->cap_tn, t->n_tn + 1, sizeof *p);
    if (!p) rd_nomem(r);
    t->tn = p;
  }
  tr_thread_name *tn = &t->tn[t->n_tn++];
  tn->pid = intern(r, &r->pid, r->has_pid);
  tn->tid = intern(r, &r->tid, r->has_tid);
  tn->name = intern(r, &r->argname, r->has_argname);
}

/* ph "M" process_name: the first TR_MAX_META_ITEMS are kept (tr_trace_meta). */
static void push_process_name(rd *r) {
  tr_trace *t = r->t;
  if (t->n_procs >= TR_MAX_META_ITEMS) return;
  if (t->n_procs == t->cap_procs) {
    tr_process_name *p = ut_grow(t->procs, &t->cap_procs, t->n_procs + 1, sizeof *p);
    if (!p) rd_nomem(r);
    t->procs = p;
  }
  t->procs[t->n_procs++] =
      (tr_process_name){intern(r, &r->pid, r->has_pid), intern(r, &r->argname, true)};
}

/* The kept args of the event just pushed (the last of its kind), as one arg set. */
static void store_args(rd *r, int kind) {
  tr_trace *t = r->t;
  if (r->arg_dropped) t->args_dropped += (uint64_t)__builtin_popcount(r->arg_dropped);
  if (!r->arg_mask) return;
  tr_str vals[TR_ARG_COUNT] = {0};
  for (unsigned k = 0; k < TR_ARG_COUNT; k++) {
    if (!(r->arg_mask >> k & 1u)) continue;
    vals[k] = r->arg_id[k];
    if (!vals[k]) memo_note_id(r, k, vals[k] = intern(r, &r->argv[k], true));
  }
  uint32_t id = tr_argtab_put(&t->args, r->arg_mask, vals);
  if (id == UINT32_MAX) rd_nomem(r);
  if (tr_argidx_add(&t->argidx[kind], (uint32_t)(t->ev[kind].n - 1), id) != 0) rd_nomem(r);
}

static void count_skipped(rd *r) {
  if (r->t->n_skipped++ == 0) r->t->first_skip_off = r->ev_off;
}

/* ------------------------------------------------------------------ run metadata */

/* Longest member name the metadata parser compares (top-level names included:
 * "hip_runtime_version" is 19). A longer name is none of them and is not stored. */
#define META_KEY_CAP 32u

/* A member name of a metadata object, its opening quote consumed, then the colon:
 * returns the name, or "" when it is longer than any name compared. */
static const char *meta_key(rd *r) {
  r->str_cap = META_KEY_CAP;
  scan_string(r, &r->key);
  r->str_cap = 0;
  expect_colon(r);
  return r->str_cut ? "" : r->key.p;
}

/* A string value interned, 0 for any other value (skipped). */
static tr_str meta_string(rd *r, unsigned depth) {
  r->str_cap = SAMPLE_STRING_CAP;
  int type = read_value(r, depth, &r->argval);
  bool cut = r->str_cut;
  r->str_cap = 0;
  return type == V_STRING && !cut ? intern(r, &r->argval, true) : 0;
}

/* Iterates a JSON object whose '{' is the next byte: calls member(r, key, depth + 1, ctx)
 * for each member, which must consume the value. Any other value is skipped. */
static void meta_object(rd *r, unsigned depth, void (*member)(rd *, const char *, unsigned, void *),
                        void *ctx) {
  if (rd_peek(r) != '{') {
    read_value(r, depth, NULL);
    return;
  }
  r->p++;
  check_depth(r, depth);
  skip_ws(r);
  if (rd_peek(r) == '}') {
    r->p++;
    return;
  }
  do {
    if (rd_peek(r) != '"') rd_expected(r, "a member name");
    r->p++;
    member(r, meta_key(r), depth + 1, ctx);
  } while (next_member(r, '}'));
}

/* Iterates a JSON list whose '[' is the next byte: calls element(r, i, depth + 1, ctx)
 * for each element, which must consume it. Any other value is skipped. */
static void meta_list(rd *r, unsigned depth, void (*element)(rd *, size_t, unsigned, void *),
                      void *ctx) {
  if (rd_peek(r) != '[') {
    read_value(r, depth, NULL);
    return;
  }
  r->p++;
  check_depth(r, depth);
  skip_ws(r);
  if (rd_peek(r) == ']') {
    r->p++;
    return;
  }
  size_t i = 0;
  do element(r, i++, depth + 1, ctx);
  while (next_member(r, ']'));
}

static void device_member(rd *r, const char *key, unsigned depth, void *ctx) {
  tr_device *d = ctx;
  if (strcmp(key, "id") == 0)
    d->id = read_id(r, depth);
  else if (strcmp(key, "name") == 0)
    d->name = meta_string(r, depth);
  else if (strcmp(key, "computeMajor") == 0)
    d->compute_major = read_id(r, depth);
  else if (strcmp(key, "computeMinor") == 0)
    d->compute_minor = read_id(r, depth);
  else if (strcmp(key, "warpSize") == 0)
    d->warp_size = read_id(r, depth);
  else if (strcmp(key, "numSms") == 0)
    d->num_sms = read_id(r, depth);
  else if (strcmp(key, "totalGlobalMem") == 0)
    d->total_mem = read_id(r, depth);
  else
    read_value(r, depth, NULL);
}

static void device_element(rd *r, size_t i, unsigned depth, void *ctx) {
  (void)ctx;
  tr_trace *t = r->t;
  if (i >= TR_MAX_META_ITEMS || rd_peek(r) != '{') {
    read_value(r, depth, NULL);
    return;
  }
  tr_device *p = ut_grow(t->devices, &t->cap_devices, t->meta.n_devices + 1, sizeof *p);
  if (!p) rd_nomem(r);
  t->devices = p;
  tr_device *d = &p[t->meta.n_devices++];
  *d = (tr_device){.id = TR_NO_ID,
                   .compute_major = TR_NO_ID,
                   .compute_minor = TR_NO_ID,
                   .warp_size = TR_NO_ID,
                   .num_sms = TR_NO_ID,
                   .total_mem = TR_NO_ID};
  meta_object(r, depth, device_member, d);
}

static void rank_element(rd *r, size_t i, unsigned depth, void *ctx) {
  tr_process_group *g = ctx;
  int64_t v = read_id(r, depth);
  if (i >= TR_MAX_META_ITEMS || v == TR_NO_ID) return;
  int64_t *p = ut_grow(g->ranks, &r->t->cap_ranks, g->n_ranks + 1, sizeof *p);
  if (!p) rd_nomem(r);
  p[g->n_ranks++] = v;
  g->ranks = p;
}

static void group_member(rd *r, const char *key, unsigned depth, void *ctx) {
  tr_process_group *g = ctx;
  if (strcmp(key, "pg_name") == 0)
    g->name = meta_string(r, depth);
  else if (strcmp(key, "pg_desc") == 0)
    g->desc = meta_string(r, depth);
  else if (strcmp(key, "backend_config") == 0)
    g->backend = meta_string(r, depth);
  else if (strcmp(key, "pg_size") == 0)
    g->size = read_id(r, depth);
  else if (strcmp(key, "ranks") == 0 && !g->n_ranks)
    meta_list(r, depth, rank_element, g);
  else
    read_value(r, depth, NULL);
}

static void group_element(rd *r, size_t i, unsigned depth, void *ctx) {
  (void)ctx;
  tr_trace *t = r->t;
  if (i >= TR_MAX_META_ITEMS || rd_peek(r) != '{') {
    read_value(r, depth, NULL);
    return;
  }
  tr_process_group *p = ut_grow(t->groups, &t->cap_groups, t->meta.n_groups + 1, sizeof *p);
  if (!p) rd_nomem(r);
  t->groups = p;
  tr_process_group *g = &p[t->meta.n_groups++];
  *g = (tr_process_group){.size = TR_NO_ID};
  t->cap_ranks = 0; /* the new group's ranks start empty */
  meta_object(r, depth, group_member, g);
}

static void distributed_member(rd *r, const char *key, unsigned depth, void *ctx) {
  tr_trace_meta *m = ctx;
  if (strcmp(key, "rank") == 0)
    m->rank = read_id(r, depth);
  else if (strcmp(key, "world_size") == 0)
    m->world_size = read_id(r, depth);
  else if (strcmp(key, "backend") == 0)
    m->backend = meta_string(r, depth);
  else if (strcmp(key, "pg_config") == 0 && !m->n_groups)
    meta_list(r, depth, group_element, NULL);
  else
    read_value(r, depth, NULL);
}

/* A top-level member other than traceEvents (its name in r->key, colon consumed): the
 * run metadata is read, everything else skipped. The runtime version members name the
 * platform; a trace naming both keeps the first seen. */
static void parse_top_member(rd *r) {
  static const char *const rocm[] = {"hip_runtime_version", "roctracer_version",
                                     "hip_driver_version"};
  static const char *const cuda[] = {"cuda_runtime_version", "cupti_version",
                                     "cuda_driver_version"};
  tr_trace_meta *m = &r->t->meta;
  const char *key = r->str_cut ? "" : r->key.p;
  if (strcmp(key, "distributedInfo") == 0) {
    meta_object(r, 2, distributed_member, m);
  } else if (strcmp(key, "deviceProperties") == 0 && !m->n_devices) {
    meta_list(r, 2, device_element, NULL);
  } else if (strcmp(key, "host_name") == 0) {
    m->host_name = meta_string(r, 2);
  } else {
    for (size_t i = 0; i < 3 && m->platform == TR_PLATFORM_UNKNOWN; i++) {
      if (strcmp(key, rocm[i]) == 0) m->platform = TR_PLATFORM_ROCM;
      if (strcmp(key, cuda[i]) == 0) m->platform = TR_PLATFORM_CUDA;
    }
    read_value(r, 2, NULL);
  }
  m->devices = r->t->devices;
  m->groups = r->t->groups;
}

/* ------------------------------------------------------------------ events */

/* Counts an event and resets the fields its members fill; returns its index. */
static uint64_t event_begin(rd *r) {
  tr_trace *t = r->t;
  if (t->n_events >= TR_MAX_EVENTS)
    rd_fail_at(r, TR_ERR_LIMIT, r->ev_off, "more than %llu events (TR_MAX_EVENTS)",
               (unsigned long long)TR_MAX_EVENTS);
  uint64_t index = t->n_events++;
  r->sampling = index < SAMPLE_EVENTS;
  r->has_name = r->has_cat = r->has_pid = r->has_tid = r->has_argname = false;
  r->name_bad = false;
  r->stream_prio = 0;
  r->ts_state = r->dur_state = F_ABSENT;
  r->ext = r->corr = TR_NO_ID;
  r->arg_mask = r->arg_dropped = 0;
  r->ph.n = 0;
  sb_clear(r, &r->ph);
  return index;
}

/* The members of an event, its '{' consumed, through its '}'. */
static void event_members(rd *r, unsigned depth) {
  skip_ws(r);
  if (rd_peek(r) == '}') {
    r->p++;
  } else {
    do {
      if (rd_peek(r) != '"') rd_expected(r, "a member name");
      r->p++;
      int key = scan_key(r, false);
      expect_colon(r);
      unsigned d = depth + 1;
      if (key == K_PH) {
        if (read_value(r, d, &r->ph) != V_STRING) sb_clear(r, &r->ph);
      } else if (key == K_NAME) {
        r->has_name = read_value(r, d, &r->name) == V_STRING;
        r->name_bad = !r->has_name;
      } else if (key == K_CAT) {
        r->has_cat = read_value(r, d, &r->cat) == V_STRING;
      } else if (key == K_PID) {
        r->has_pid = read_textual(r, d, &r->pid);
      } else if (key == K_TID) {
        r->has_tid = read_textual(r, d, &r->tid);
      } else if (key == K_TS) {
        r->ts_state = read_time(r, d, &r->ts);
      } else if (key == K_DUR) {
        r->dur_state = read_time(r, d, &r->dur);
      } else if (key == K_ARGS && rd_peek(r) == '{') {
        r->p++;
        parse_args(r, d);
      } else {
        read_value(r, d, NULL);
      }
    } while (next_member(r, '}'));
  }
}

/* What the members of the event at index said: classified, then stored or dropped. */
static void event_end(rd *r, uint64_t index) {
  if (!r->has_name) sb_clear(r, &r->name);
  if (!r->has_cat) sb_clear(r, &r->cat);
  if (r->sampling) {
    sample_add(r, r->name.p, r->name.n);
    sample_add(r, r->cat.p, r->cat.n);
    if (r->has_pid) sample_add(r, r->pid.p, r->pid.n);
  }
  if (r->ext != TR_NO_ID && r->corr != TR_NO_ID) corr_put(r, r->corr, r->ext);
  if (r->ph.n != 1) return;
  if (r->ph.p[0] == 'M') {
    if (strcmp(r->name.p, "thread_name") == 0 && r->has_argname) push_thread_name(r);
    if (strcmp(r->name.p, "process_name") == 0 && r->has_argname) push_process_name(r);
    return;
  }
  if (r->ph.p[0] != 'X') return;
  int kind = classify(r);
  if (kind < 0 && !r->name_bad) return;
  /* a name that is not a string (a number, an object) is a wrong type, not an empty name */
  if (r->name_bad || r->ts_state != F_OK || r->dur_state == F_BAD) {
    count_skipped(r);
    return;
  }
  if (kind == TR_KIND_PYFRAME) {
    tr_str name = intern(r, &r->name, true);
    /* cat is always "python_function": intern it with the first frame only, so string
     * ids come out as they would if every frame carried it */
    if (r->t->py.n == 0) (void)intern(r, &r->cat, true);
    tr_str pid = intern_cached(r, &r->pid, r->has_pid, &r->ic_pid);
    tr_str tid = intern_cached(r, &r->tid, r->has_tid, &r->ic_tid);
    push_pyframe(r, r->ts, r->dur_state == F_OK ? r->dur : 0.0, name, pid, tid);
    return;
  }
  tr_event e;
  e.ts = r->ts;
  e.index = (uint32_t)index;
  e.dur_ns = store_dur(r, &r->t->dur_wide, r->dur_state == F_OK ? r->dur : 0.0, e.index);
  e.ext_off = store_id(r, &r->t->ext_base, &r->t->ext_wide, r->ext, e.index);
  e.corr_off = store_id(r, &r->t->corr_base, &r->t->corr_wide, r->corr, e.index);
  e.name = intern(r, &r->name, true);
  if (r->ext == TR_NO_ID && r->corr != TR_NO_ID) r->t->corr_wanted = true;
  tr_event_ctx c;
  c.cat = intern_cached(r, &r->cat, true, &r->ic_cat);
  c.pid = intern_cached(r, &r->pid, r->has_pid, &r->ic_pid);
  c.tid = intern_cached(r, &r->tid, r->has_tid, &r->ic_tid);
  c.stream = intern_cached(r, &r->stream, r->stream_prio > 0, &r->ic_stream);
  e.ctx = event_ctx(r, kind, &c);
  push_event(r, kind, &e);
  if (r->arg_mask | r->arg_dropped) store_args(r, kind);
}

/* One element of traceEvents, its '{' consumed: the byte scanner. */
static void parse_event(rd *r, unsigned depth) {
  check_depth(r, depth);
  uint64_t index = event_begin(r);
  event_members(r, depth);
  event_end(r, index);
}

static void put_text(rd *r, sbuf *b, fe_text s) {
  b->n = 0;
  sb_put(r, b, s.p, s.n);
}

/* The fields of an event the fast path read, as event_members would leave them. */
static void event_load(rd *r, const fe_event *ev) {
  put_text(r, &r->ph, ev->ph);
  r->has_name = ev->has_name;
  r->name_bad = ev->name_bad;
  if (ev->has_name) put_text(r, &r->name, ev->name);
  r->has_cat = ev->has_cat;
  if (ev->has_cat) put_text(r, &r->cat, ev->cat);
  r->has_pid = ev->has_pid;
  if (ev->has_pid) put_text(r, &r->pid, ev->pid);
  r->has_tid = ev->has_tid;
  if (ev->has_tid) put_text(r, &r->tid, ev->tid);
  r->ts_state = ev->ts_state;
  r->ts = ev->ts;
  r->dur_state = ev->dur_state;
  r->dur = ev->dur;
  r->ext = ev->ext;
  r->corr = ev->corr;
  r->stream_prio = ev->stream_prio;
  if (ev->stream_prio) put_text(r, &r->stream, ev->stream);
  r->has_argname = ev->has_argname;
  if (ev->has_argname) put_text(r, &r->argname, ev->argname);
  r->arg_mask = ev->arg_mask;
  r->arg_dropped = ev->arg_dropped;
  for (uint32_t m = ev->arg_mask; m; m &= m - 1) {
    unsigned k = (unsigned)__builtin_ctz(m);
    put_text(r, &r->argv[k], ev->arg[k]);
    r->arg_id[k] = 0; /* store_args interns the text */
    r->arg_slot[k] = -1;
  }
}

/* The event at r->p (its '{') through the fast path, when the chunk has masks. false: the
 * fast path did not take it and nothing changed. */
static bool event_fast(rd *r) {
  if (!r->masks || r->t->n_events >= TR_MAX_EVENTS) return false;
  if (!r->scratch && !(r->scratch = malloc(FE_SCRATCH_BYTES))) rd_nomem(r);
  if (!r->shapes && !(r->shapes = fe_shapes_create())) rd_nomem(r);
  fe_chunk c = {r->chunk, (size_t)(r->end - r->chunk), r->masks, r->scratch, FE_SCRATCH_BYTES,
                r->shapes};
  fe_event ev;
  size_t end;
  bool sampling = r->t->n_events < SAMPLE_EVENTS;
  if (!fe_parse_event(&c, (size_t)(r->p - r->chunk), sampling, &ev, &end)) return false;
  uint64_t index = event_begin(r);
  for (unsigned i = 0; i < ev.n_sample; i++) sample_add(r, ev.sample[i].p, ev.sample[i].n);
  event_load(r, &ev);
  r->p = r->chunk + end;
  event_end(r, index);
  r->t->n_fast++;
  return true;
}

/* The traceEvents array, its '[' consumed. */
static void parse_events(rd *r, unsigned depth) {
  check_depth(r, depth);
  skip_ws(r);
  if (rd_peek(r) == ']') {
    r->p++;
    return;
  }
  do {
    r->ev_off = rd_off(r);
    if (rd_peek(r) == '{') {
      if (!event_fast(r)) {
        r->p++;
        parse_event(r, depth + 1);
      }
    } else {
      /* not an event object: nothing to analyse, but say so (and it still counts
       * against TR_MAX_EVENTS, or [0,0,...] would bypass the limit) */
      if (r->t->n_events >= TR_MAX_EVENTS)
        rd_fail_at(r, TR_ERR_LIMIT, r->ev_off, "more than %llu events (TR_MAX_EVENTS)",
                   (unsigned long long)TR_MAX_EVENTS);
      read_value(r, depth + 1, NULL);
      r->t->n_events++;
      count_skipped(r);
    }
  } while (next_member(r, ']'));
}

static void parse_document(rd *r) {
  skip_ws(r);
  /* a UTF-8 byte-order mark is harmless; skip it */
  if (rd_peek(r) == 0xEF) {
    r->p++;
    if (rd_peek(r) != 0xBB) rd_expected(r, "'{' or '['");
    r->p++;
    if (rd_peek(r) != 0xBF) rd_expected(r, "'{' or '['");
    r->p++;
    skip_ws(r);
  }
  int c = rd_peek(r);
  if (c < 0) rd_fail_at(r, TR_ERR_JSON, 0, "empty input");
  if (c == '[') {
    r->p++;
    if (r->probe) {
      skip_ws(r);
      r->probe_result = rd_peek(r) == '{';
      longjmp(r->jb, 1);
    }
    parse_events(r, 1);
  } else if (c == '{') {
    r->p++;
    bool found = false;
    skip_ws(r);
    if (rd_peek(r) == '}') {
      r->p++;
    } else {
      do {
        if (rd_peek(r) != '"') rd_expected(r, "a member name");
        r->p++;
        r->str_cap = META_KEY_CAP;
        scan_string(r, &r->key);
        r->str_cap = 0;
        expect_colon(r);
        if (!r->str_cut && KEY_IS(&r->key, "traceEvents")) {
          if (found)
            rd_fail_at(r, TR_ERR_SHAPE, rd_off(r),
                       "\"traceEvents\" appears twice in the top-level object");
          if (rd_peek(r) != '[')
            rd_fail_at(r, TR_ERR_SHAPE, rd_off(r), "\"traceEvents\" is not a list");
          r->p++;
          if (r->probe) {
            r->probe_result = 1;
            longjmp(r->jb, 1);
          }
          parse_events(r, 2);
          found = true;
        } else {
          parse_top_member(r);
        }
      } while (next_member(r, '}'));
    }
    if (!found)
      rd_fail_at(r, TR_ERR_SHAPE, 0,
                 "not a trace: the top-level object has no \"traceEvents\" list");
  } else if (c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
    rd_fail_at(r, TR_ERR_SHAPE, rd_off(r),
               "not a trace: the top level is a single value, not an object or an event list");
  } else {
    rd_expected(r, "'{' or '[' at the start of a trace");
  }
  skip_ws(r);
  if (rd_peek(r) >= 0) rd_expected(r, "end of input after the top-level value");
}

/* ------------------------------------------------------------------ API */

static void trace_free_contents(tr_trace *t) {
  for (int k = 0; k < N_KINDS; k++) free(t->ev[k].v);
  free(t->py.v);
  free(t->py.runs);
  tr_map64_free(&t->py.dur_wide);
  tr_map64_free(&t->py.thread_last);
  free(t->py.names);
  free(t->py.seen);
  free(t->tn);
  tr_map64_free(&t->ext_wide);
  tr_map64_free(&t->corr_wide);
  tr_map64_free(&t->dur_wide);
  tr_ctxtab_free(&t->ctx);
  tr_map32_free(&t->corr_map);
  tr_map64_free(&t->corr_map_wide);
  free(t->corr_pairs);
  free(t->sample);
  for (size_t i = 0; i < t->meta.n_groups; i++) free(t->groups[i].ranks);
  free(t->groups);
  free(t->devices);
  free(t->procs);
  tr_argtab_free(&t->args);
  for (int k = 0; k < N_KINDS; k++) tr_argidx_free(&t->argidx[k]);
  tr_intern_destroy(t->in);
  free(t->path);
}

void tr_trace_destroy(tr_trace *t) {
  if (!t) return;
  trace_free_contents(t);
  free(t);
}

static void rd_free(rd *r) {
  sbuf *bufs[] = {&r->key, &r->num,    &r->ph,      &r->name,   &r->cat, &r->pid,
                  &r->tid, &r->stream, &r->argname, &r->argval, &r->lc,  &r->catlc};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) sb_free(bufs[i]);
  for (size_t k = 0; k < TR_ARG_COUNT; k++) sb_free(&r->argv[k]);
  free(r->scratch);
  fe_shapes_destroy(r->shapes);
  memo_free(r);
  free(r);
}

/* The correlation map from the pairs, when a stored event will ask it (corr_pairs). -1
 * when out of memory. */
static int map_correlations(tr_trace *t) {
  if (!t->corr_wanted) {
    t->corr_pairs =
        ut_shrink(t->corr_pairs, &t->cap_corr_pairs, t->n_corr_pairs, sizeof *t->corr_pairs);
    return 0;
  }
  for (size_t i = 0; i < t->n_corr_pairs; i++)
    if (tr_map32_put(&t->corr_map, t->corr_pairs[i].corr, t->corr_pairs[i].ext) != 0) return -1;
  free(t->corr_pairs);
  t->corr_pairs = NULL;
  t->n_corr_pairs = t->cap_corr_pairs = 0;
  return 0;
}

/* After a successful read: trims the arrays to their length and seals the context table,
 * which the accessors then read through t->head. */
static void shrink_to_fit(tr_trace *t) {
  for (int k = 0; k < N_KINDS; k++) {
    ev_vec *v = &t->ev[k];
    v->v = ut_shrink(v->v, &v->cap, v->n, sizeof *v->v);
  }
  tr_ctxtab_seal(&t->ctx);
  t->head.ctx = t->ctx.v;
  t->head.ext_base = t->ext_base.base;
  t->head.corr_base = t->corr_base.base;
  py_vec *pv = &t->py;
  tr_map64_free(&pv->thread_last); /* read-time only */
  free(pv->seen);
  pv->seen = NULL;
  pv->seen_words = 0;
  pv->v = ut_shrink(pv->v, &pv->cap, pv->n, sizeof *pv->v);
  pv->runs = ut_shrink(pv->runs, &pv->cap_runs, pv->n_runs, sizeof *pv->runs);
  pv->names = ut_shrink(pv->names, &pv->cap_names, pv->n_names, sizeof *pv->names);
  /* a dense index that cannot be allocated leaves the sparse one, which answers the same */
  for (int k = 0; k < N_KINDS; k++) (void)tr_argidx_seal(&t->argidx[k], t->ev[k].n);
  tr_argtab_seal(&t->args);
  t->procs = ut_shrink(t->procs, &t->cap_procs, t->n_procs, sizeof *t->procs);
  t->meta.processes = t->procs;
  t->meta.n_processes = t->n_procs;
}

/* The only setjmp: scanner errors land here with r->err filled. */
static int run_parse(rd *r) {
  if (setjmp(r->jb) != 0) return -1;
  parse_document(r);
  return 0;
}

/* Reads from an open source; takes ownership of src. */
static tr_trace *read_source(const char *name, tr_source *src, const tr_read_options *opts,
                             tr_error *err) {
  tr_trace *t = calloc(1, sizeof *t);
  rd *r = calloc(1, sizeof *r);
  if (t) {
    t->path = strdup(name ? name : "");
    t->in = tr_intern_create();
    t->meta.rank = t->meta.world_size = TR_NO_ID;
  }
  if (!t || !r || !t->path || !t->in) {
    if (t) tr_trace_destroy(t);
    free(r);
    tr_source_close(src);
    tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
    return NULL;
  }
  r->src = src;
  r->t = t;
  r->err = err;
  r->opts = opts;
  r->next_progress = PROGRESS_STEP;
  if (run_parse(r) != 0) {
    tr_source_close(r->src);
    rd_free(r);
    tr_trace_destroy(t);
    return NULL;
  }
  t->json_bytes = rd_off(r);
  rd_progress(r);
  tr_source_close(r->src);
  rd_free(r);
  shrink_to_fit(t);
  if (map_correlations(t) != 0) {
    tr_trace_destroy(t);
    tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
    return NULL;
  }
  if (opts && opts->warn) {
    if (t->n_skipped) {
      tr_warning w = {TR_WARN_SKIPPED_EVENTS, t->path, t->n_skipped, t->first_skip_off};
      opts->warn(opts->warn_ctx, &w);
    }
    if (t->utf8_replaced) {
      tr_warning w = {TR_WARN_REPLACED_UTF8, t->path, t->utf8_replaced, 0};
      opts->warn(opts->warn_ctx, &w);
    }
  }
  return t;
}

/* The source a read wants: chunks and inflater as asked, and masks for the fast path at
 * the SIMD level of tr_scanner (none for BYTES). */
static tr_source_opts source_opts(const tr_read_options *opts, bool threaded) {
  static const tr_simd_level forced[] = {[TR_SCANNER_SCALAR] = TR_SIMD_SCALAR,
                                         [TR_SCANNER_SSE2] = TR_SIMD_SSE2,
                                         [TR_SCANNER_NEON] = TR_SIMD_NEON,
                                         [TR_SCANNER_AVX2] = TR_SIMD_AVX2};
  tr_scanner scanner = opts ? opts->scanner : TR_SCANNER_AUTO;
  tr_source_opts so = {opts ? opts->chunk_size : 0, threaded,
                       opts ? opts->inflater : TR_INFLATE_AUTO, true, tr_simd_level_get()};
  bool level_asked = scanner >= TR_SCANNER_SCALAR && scanner <= TR_SCANNER_AVX2;
  if (level_asked && tr_simd_level_available(forced[scanner]))
    so.level = forced[scanner];
  else if ((scanner != TR_SCANNER_AUTO && !level_asked) || so.level == TR_SIMD_OFF)
    so.index = false; /* BYTES (or an unknown value), or AUTO with TRIAGE_SIMD=off */
  return so;
}

tr_trace *tr_trace_read(const char *path, const tr_read_options *opts, tr_error *err) {
  tr_error dummy;
  if (!err) err = &dummy;
  memset(err, 0, sizeof *err);
  tr_source_opts so = source_opts(opts, true);
  tr_source *src = tr_source_open_path(path, &so, err);
  if (!src) return NULL;
  return read_source(path, src, opts, err);
}

tr_trace *tr_trace_read_buffer(const char *name, const void *buf, size_t len,
                               const tr_read_options *opts, tr_error *err) {
  tr_error dummy;
  if (!err) err = &dummy;
  memset(err, 0, sizeof *err);
  tr_source_opts so = source_opts(opts, true);
  tr_source *src = tr_source_open_buffer(buf, len, &so, err);
  if (!src) return NULL;
  return read_source(name, src, opts, err);
}

const char *tr_trace_path(const tr_trace *t) { return t->path; }

const char *tr_str_get(const tr_trace *t, tr_str s) { return tr_intern_get(t->in, s); }
size_t tr_trace_string_count(const tr_trace *t) { return tr_intern_count(t->in); }

tr_str tr_str_intern(tr_trace *t, const char *s, size_t len) {
  uint32_t id = tr_intern_put(t->in, s, len);
  return id == UINT32_MAX ? 0 : id;
}

void tr_trace_rename_event(tr_trace *t, tr_kind kind, size_t i, tr_str name) {
  if ((unsigned)kind < N_KINDS && i < t->ev[kind].n) t->ev[kind].v[i].name = name;
}

const tr_event *tr_trace_events(const tr_trace *t, tr_kind kind, size_t *n) {
  if ((unsigned)kind >= N_KINDS) {
    if (n) *n = 0;
    return NULL;
  }
  if (n) *n = t->ev[kind].n;
  return t->ev[kind].v;
}

const tr_pyframe *tr_trace_pyframes(const tr_trace *t, size_t *n) {
  if (n) *n = t->py.n;
  return t->py.v;
}

bool tr_trace_pyframes_sorted(const tr_trace *t) { return !t->py.unsorted; }

const tr_str *tr_trace_pyframe_names(const tr_trace *t, size_t *n) {
  if (n) *n = t->py.n_names;
  return t->py.names;
}

const tr_pyframe_run *tr_trace_pyframe_runs(const tr_trace *t, size_t *n) {
  if (n) *n = t->py.n_runs;
  return t->py.runs;
}

const tr_pyframe_run *tr_pyframe_run_of(const tr_trace *t, size_t i) {
  size_t past; /* past the last run with first <= i (run 0 starts the trace) */
  UT_PARTITION_POINT(past, 1, t->py.n_runs, k, t->py.runs[k].first <= i);
  return &t->py.runs[past - 1];
}

double tr_pyframe_dur_wide(const tr_trace *t, const tr_pyframe *f) {
  return wide_dur(&t->py.dur_wide, (int64_t)(f - t->py.v));
}

const tr_thread_name *tr_trace_thread_names(const tr_trace *t, size_t *n) {
  if (n) *n = t->n_tn;
  return t->tn;
}

/* The External id offset of the last pair with correlation offset ck. */
static bool last_pair(const tr_trace *t, uint32_t ck, uint32_t *ek) {
  for (size_t i = t->n_corr_pairs; i-- > 0;)
    if (t->corr_pairs[i].corr == ck) {
      *ek = t->corr_pairs[i].ext;
      return true;
    }
  return false;
}

int64_t tr_trace_external_for_correlation(const tr_trace *t, int64_t correlation) {
  if (correlation == TR_NO_ID) return TR_NO_ID;
  uint32_t ck = tr_id_find(&t->corr_base, correlation), ek;
  int64_t ext;
  if (ck != TR_OFF_WIDE) {
    if (!(t->corr_wanted ? tr_map32_get(&t->corr_map, ck, &ek) : last_pair(t, ck, &ek)))
      return TR_NO_ID;
    if (ek == TR_OFF_ABSENT) return TR_NO_ID;
    if (ek != TR_OFF_WIDE) return tr_id_decode(&t->ext_base, ek);
  }
  return tr_map64_get(&t->corr_map_wide, correlation, &ext) ? ext : TR_NO_ID;
}

static int64_t event_id(const tr_idbase *b, const tr_map64 *wide, uint32_t off, uint32_t index) {
  if (off == TR_OFF_ABSENT) return TR_NO_ID;
  if (off != TR_OFF_WIDE) return tr_id_decode(b, off);
  int64_t v;
  return tr_map64_get(wide, index, &v) ? v : TR_NO_ID;
}

int64_t tr_event_id_slow(const tr_trace *t, const tr_event *e, bool correlation) {
  return correlation ? event_id(&t->corr_base, &t->corr_wide, e->corr_off, e->index)
                     : event_id(&t->ext_base, &t->ext_wide, e->ext_off, e->index);
}

double tr_event_dur_wide(const tr_trace *t, const tr_event *e) {
  return wide_dur(&t->dur_wide, e->index);
}

static const char *const k_arg_keys[TR_ARG_COUNT] = {[TR_ARG_INPUT_DIMS] = "Input Dims",
                                                     [TR_ARG_INPUT_TYPE] = "Input type",
                                                     [TR_ARG_CONCRETE_INPUTS] = "Concrete Inputs",
                                                     [TR_ARG_IN_MSG_NELEMS] = "In msg nelems",
                                                     [TR_ARG_OUT_MSG_NELEMS] = "Out msg nelems",
                                                     [TR_ARG_GROUP_SIZE] = "Group size",
                                                     [TR_ARG_DTYPE] = "dtype",
                                                     [TR_ARG_PG_NAME] = "Process Group Name",
                                                     [TR_ARG_PG_DESC] = "Process Group Description",
                                                     [TR_ARG_PG_RANKS] = "Process Group Ranks",
                                                     [TR_ARG_COLLECTIVE_NAME] = "Collective name",
                                                     [TR_ARG_BYTES] = "bytes"};

const char *tr_arg_key(tr_arg key) { return (unsigned)key < TR_ARG_COUNT ? k_arg_keys[key] : ""; }

tr_str tr_event_arg(const tr_trace *t, tr_kind kind, const tr_event *e, tr_arg key) {
  if ((unsigned)kind >= N_KINDS || (unsigned)key >= TR_ARG_COUNT || !e) return 0;
  const ev_vec *v = &t->ev[kind];
  uintptr_t at = (uintptr_t)e, base = (uintptr_t)v->v;
  if (at < base || at >= base + v->n * sizeof *e || (at - base) % sizeof *e) return 0;
  uint32_t id = tr_argidx_get(&t->argidx[kind], (at - base) / sizeof *e);
  return tr_argtab_value(&t->args, id, key);
}

uint64_t tr_trace_args_dropped(const tr_trace *t) { return t->args_dropped; }

const char *tr_trace_sample_text(const tr_trace *t) { return t->sample ? t->sample : ""; }
const tr_trace_meta *tr_trace_meta_get(const tr_trace *t) { return &t->meta; }
uint64_t tr_trace_event_count(const tr_trace *t) { return t->n_events; }
uint64_t tr_trace_skipped_count(const tr_trace *t) { return t->n_skipped; }
uint64_t tr_trace_json_bytes(const tr_trace *t) { return t->json_bytes; }
uint64_t tr_trace_fast_count(const tr_trace *t) { return t->n_fast; }

int tr_trace_probe(const char *path) { return tr_trace_probe_rank(path, NULL); }

int tr_trace_probe_rank(const char *path, int64_t *rank) {
  if (rank) *rank = TR_NO_ID;
  tr_error err;
  memset(&err, 0, sizeof err);
  /* small chunks, no thread: a probe usually stops within the first few hundred bytes */
  tr_source_opts so = {64u * 1024u, false, TR_INFLATE_AUTO, false, TR_SIMD_SCALAR};
  tr_source *src = tr_source_open_path(path, &so, &err);
  if (!src) return 0;
  rd *r = calloc(1, sizeof *r);
  tr_trace *t = calloc(1, sizeof *t);
  if (t) {
    t->in = tr_intern_create();
    t->meta.rank = t->meta.world_size = TR_NO_ID;
  }
  int result = 0;
  if (r && t && t->in) {
    r->src = src;
    r->t = t;
    r->err = &err;
    r->probe = true;
    r->next_progress = UINT64_MAX;
    if (run_parse(r) != 0) result = r->probe_result;
    /* the members before traceEvents were read whole: Kineto writes distributedInfo there */
    if (rank && result == 1) *rank = t->meta.rank;
    rd_free(r);
  } else {
    free(r);
  }
  tr_source_close(src);
  tr_trace_destroy(t);
  return result;
}
