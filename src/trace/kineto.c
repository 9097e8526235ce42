/*
 * trace/kineto.c - the Kineto mapping: what the JSON of a Chrome-trace means to triage.
 *
 * The lexer (lexer.h) reads the JSON text; this file gives it meaning. The top level is
 * an event list or an object with "traceEvents" (its run metadata read: distributedInfo,
 * deviceProperties, the runtime versions); each event's members fill the fields of the
 * current event (the fast path of fast_event.c fills the same fields from the chunk's
 * masks), which are classified (kernel, CPU op, launch, Python frame, annotations) and
 * stored in the tr_trace (trace_internal.h) or dropped; the kept args (tr_event_arg) are
 * captured as compact JSON, remembered by their bytes.
 *
 * Why hand-written instead of a JSON library: the traces are multi-GB, and a DOM (or
 * even a per-event DOM) costs an allocation per value and a second pass. The reader
 * touches every decompressed byte once, copies only the strings an event keeps, skips
 * everything else (deep args, deviceProperties) without materialising it, and nests
 * through an explicit stack so hostile nesting cannot overflow the C stack.
 *
 * Errors of the lexer and of the mapping leave through longjmp to run_parse, the only
 * setjmp: everything the reader allocates hangs off its heap-allocated state, so the jump
 * leaks nothing.
 */
#include "trace/trace.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
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
#include "trace/lexer.h"
#include "trace/source.h"
#include "trace/trace_internal.h"
#include "triage/ascii.h"
#include "triage/hash.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ reader state */

/* Texts whose test answers the reader remembers (a trace has a handful of categories
 * and of runtime-call names), and their longest length. */
#define MEMO_SLOTS 16u
#define MEMO_TEXT 64u

/* Event names interned lately (name_id): 2^NAME_CACHE_BITS slots, and the shortest name
 * that takes one (a shorter one is hashed by the table at once). Eight: the three words
 * the slot is chosen by lie inside the name (cpu_op names such as aten::addmm hashed and
 * probed in the table cost ~160 instructions, a cache hit ~40). */
#define NAME_CACHE_BITS 12
#define NAME_CACHE_MIN 8u

/* The answers of one test on short texts, for the last MEMO_SLOTS texts asked. */
typedef struct text_memo {
  struct {
    char s[MEMO_TEXT];
    size_t n;
    unsigned value;
  } slot[MEMO_SLOTS];
  unsigned n, next;
} text_memo;

typedef struct rd {
  lx_lexer lx;       /* the JSON text (lexer.h) */
  char *scratch;     /* FE_SCRATCH_BYTES for the fast path (fe_chunk) */
  fe_shapes *shapes; /* the event shapes the fast path learnt */
  /* events read ahead on the inflate thread (NULL: none), and those of the chunk at
   * ah_chunk - 1 (its offset; 0: none yet): the list (NULL: none) and the next record */
  struct ahead *ahead;
  uint64_t ah_chunk;
  const fe_ahead_list *ah_list;
  size_t ah_cursor;
  tr_trace *t;
  /* scratch */
  lx_buf key, ph, name, cat, pid, tid, stream, argname, argval, lc, catlc;
  /* last interned cat / pid / tid / stream per kind: consecutive events of a kind nearly
   * always repeat them (kernels, CPU ops and runtime calls interleave) */
  struct icache {
    char s[32];
    size_t n;
    tr_str id; /* 0 = empty */
  } ic_cat[N_KINDS], ic_pid[N_KINDS], ic_tid[N_KINDS], ic_stream[N_KINDS];
  /* what classify needs from an event's category (CAT_* bits), and whether a runtime
   * call's name says launch: every event asked the same substring tests of its own copy */
  text_memo cat_memo, launch_memo;
  /* the id of a name interned lately per slot (name_id; 0 = none): a trace repeats a few
   * thousand frame and kernel names, each long */
  tr_str name_cache[1u << NAME_CACHE_BITS];
  /* context + 1 of the last event of each kind (0 = none yet): kernels, CPU ops and
   * runtime calls interleave in the file, but each kind mostly repeats its own */
  uint32_t last_ctx[N_KINDS];
  /* the current event's kept args (tr_arg): their text, which are present, and which were
   * dropped for their length */
  lx_buf argv[TR_ARG_COUNT];
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
  bool key_cut; /* scan_key kept only the start of the name (lx_lexer.str_cut) */
  /* probe mode: stop at the first sign of a trace (tr_trace_probe) */
  bool probe;
  int probe_result;
} rd;
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
/* Longest member name key_code (or the top level's "traceEvents") recognises: a longer
 * name needs no storing to be classified ("wait_on_cuda_event_record_corr_id"). */
#define KEY_MAX_CLASSIFIED 33u

/* Reads a member name whose opening quote is consumed and returns its key_code. A name
 * of plain bytes that ends inside the chunk (nearly all of them) is classified in place;
 * otherwise it is scanned into r->key (escapes, chunk boundaries and errors all go
 * through lx_scan_string), keeping at most KEY_MAX_CLASSIFIED + 1 bytes, or up to
 * SAMPLE_STRING_CAP when keep (the sample text wants the name; r->key_cut says it was
 * longer). Names are never refused for their length: they are not stored. */
static int scan_key(rd *r, bool keep) {
  lx_lexer *x = &r->lx;
  if (!keep) {
    const uint8_t *s = lx_plain_end(x->p, x->end);
    if (s < x->end && *s == '"') {
      int code = key_code((const char *)x->p, (size_t)(s - x->p));
      x->p = s + 1;
      return code;
    }
  }
  x->str_cap = keep ? SAMPLE_STRING_CAP : KEY_MAX_CLASSIFIED + 1u;
  lx_scan_string(x, &r->key);
  x->str_cap = 0;
  r->key_cut = x->str_cut;
  return r->key_cut ? K_OTHER : key_code(r->key.p, r->key.n);
}

static bool key_is(const lx_buf *k, const char *lit, size_t n) {
  return k->n == n && memcmp(k->p, lit, n) == 0;
}
#define KEY_IS(k, lit) key_is((k), lit, sizeof(lit) - 1)

/* ------------------------------------------------------------------ event fields */

static void sample_add(rd *r, const char *s, size_t n) {
  tr_trace *t = r->t;
  if (n == 0 || t->sample_len + n + 2 > TR_MAX_SAMPLE_BYTES) return;
  if (t->sample_len + n + 2 > t->sample_cap) {
    char *p = ut_grow(t->sample, &t->sample_cap, t->sample_len + n + 2, 1);
    if (!p) lx_nomem(&r->lx);
    t->sample = p;
  }
  if (t->sample_len) t->sample[t->sample_len++] = ' ';
  memcpy(t->sample + t->sample_len, s, n);
  t->sample_len += n;
  t->sample[t->sample_len] = '\0';
}

/* Numbers as text the way Python prints what json.load made of them: integers as given
 * (except "-0", which is int 0), floats as given. */
static void number_text(rd *r, int type, lx_buf *out) {
  lx_lexer *x = &r->lx;
  lx_buf_clear(x, out);
  if (type == LX_NUMBER_INT && x->numn == 2 && memcmp(x->nump, "-0", 2) == 0)
    lx_buf_put(x, out, "0", 1);
  else
    lx_buf_put(x, out, x->nump, x->numn);
}

/* pid / tid / stream: strings kept, numbers as text; anything else is absent. */
static bool read_textual(rd *r, unsigned depth, lx_buf *out) {
  int type = lx_read_value(&r->lx, depth, out);
  if (type == LX_STRING) return true;
  if (type == LX_NUMBER_INT || type == LX_NUMBER_FLOAT) {
    number_text(r, type, out);
    return true;
  }
  return false;
}

static int read_time(rd *r, unsigned depth, double *out) {
  lx_lexer *x = &r->lx;
  int type = lx_read_value(x, depth, &r->argval);
  double d;
  if (type == LX_NUMBER_INT || type == LX_NUMBER_FLOAT)
    d = lx_text_to_double(x, x->nump, x->numn);
  else if (type == LX_STRING) {
    if (!string_to_double(r->argval.p, &d)) return F_BAD;
  } else if (type == LX_NULL) {
    return F_BAD;
  } else {
    return F_BAD;
  }
  if (!isfinite(d) || d < 0) return F_BAD;
  *out = d;
  return F_OK;
}

static int64_t read_id(rd *r, unsigned depth) {
  lx_lexer *x = &r->lx;
  int type = lx_read_value(x, depth, &r->argval);
  int64_t v;
  if (type == LX_NUMBER_INT && x->num_exact) { /* the common case */
    uint64_t m = lx_num_mantissa(x);
    if (m <= (uint64_t)INT64_MAX) return x->num_neg ? -(int64_t)m : (int64_t)m;
  }
  if (type == LX_NUMBER_INT || type == LX_NUMBER_FLOAT) {
    if (text_to_id(lx_number_cstr(x), type == LX_NUMBER_INT, &v)) return v;
  } else if (type == LX_STRING) {
    if (text_to_id(r->argval.p, false, &v)) return v;
  }
  return TR_NO_ID;
}

/* ------------------------------------------------------------------ kept args */

_Static_assert(TR_MAX_ARG_BYTES * 8u <= TR_MAX_STRING_BYTES,
               "a kept arg's text and one escaped string past it fit a scratch buffer");

/* Appends n bytes to a kept arg's text, or gives up on it (NULL) when that would pass
 * TR_MAX_ARG_BYTES; NULL stays NULL, so the value is scanned to its end storing nothing. */
static lx_buf *arg_put(rd *r, lx_buf *o, const void *s, size_t n) {
  if (!o || o->n + n > TR_MAX_ARG_BYTES) return NULL;
  lx_buf_put(&r->lx, o, s, n);
  return o;
}

/* A decoded string as JSON text, escaped as json.dumps(ensure_ascii=False) does. */
static lx_buf *put_json_string(rd *r, lx_buf *o, const char *s, size_t n) {
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
static lx_buf *capture_string(rd *r, lx_buf *o) {
  lx_lexer *x = &r->lx;
  if (!o) {
    lx_scan_string(x, NULL);
    return NULL;
  }
  const uint8_t *s = lx_plain_end(x->p, x->end);
  if (s < x->end && *s == '"') {
    o = arg_put(r, o, x->p - 1, (size_t)(s - x->p) + 2); /* both quotes */
    x->p = s + 1;
    return o;
  }
  x->str_cap = TR_MAX_ARG_BYTES;
  lx_scan_string(x, &r->argval);
  x->str_cap = 0;
  return x->str_cut ? NULL : put_json_string(r, o, r->argval.p, r->argval.n);
}

static lx_buf *capture_scalar(rd *r, lx_buf *o, int c) {
  lx_lexer *x = &r->lx;
  if (c == '"') {
    x->p++;
    return capture_string(r, o);
  }
  int type = lx_scan_scalar(x, c, NULL);
  if (type == LX_TRUE) return arg_put(r, o, "true", 4);
  if (type == LX_FALSE) return arg_put(r, o, "false", 5);
  if (type == LX_NULL) return arg_put(r, o, "null", 4);
  return arg_put(r, o, x->nump, x->numn);
}

/* Writes the container whose opening bracket was just consumed to o as compact JSON
 * (tr_event_arg); NULL when its text passed TR_MAX_ARG_BYTES. The walk and its errors are
 * lx_skip_container's. */
static lx_buf *capture_container(rd *r, lx_buf *o, uint8_t open, unsigned depth) {
  lx_lexer *x = &r->lx;
  uint8_t stack[TR_MAX_JSON_DEPTH + 1];
  size_t sp = 0;
  lx_check_depth(x, depth);
  stack[sp++] = open;
  o = arg_put(r, o, &open, 1);
  bool first = true;
  for (;;) {
    lx_skip_ws(x);
    int c = lx_peek(x);
    uint8_t top = stack[sp - 1], close = top == '{' ? '}' : ']';
    if (first && c == close) {
      x->p++;
      o = arg_put(r, o, &close, 1);
      goto closed;
    }
    if (top == '{') {
      if (c != '"') lx_expected(x, first ? "a member name or '}'" : "a member name");
      x->p++;
      o = capture_string(r, o);
      lx_skip_ws(x);
      if (lx_peek(x) != ':') lx_expected(x, "':' after member name");
      x->p++;
      lx_skip_ws(x);
      o = arg_put(r, o, ": ", 2);
      c = lx_peek(x);
    }
    if (c == '{' || c == '[') {
      x->p++;
      lx_check_depth(x, depth + sp);
      stack[sp++] = (uint8_t)c;
      o = arg_put(r, o, &(char){(char)c}, 1);
      first = true;
      continue;
    }
    o = capture_scalar(r, o, c);
    for (;;) { /* after a value */
      lx_skip_ws(x);
      c = lx_peek(x);
      top = stack[sp - 1];
      close = top == '{' ? '}' : ']';
      if (c == ',') {
        x->p++;
        o = arg_put(r, o, ", ", 2);
        first = false;
        break;
      }
      if (c != close) lx_expected(x, top == '{' ? "',' or '}'" : "',' or ']'");
      x->p++;
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
      p = lx_plain_end(p + 1, e);
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
  if (!r->memo && !(r->memo = calloc(ARG_MEMO_SLOTS, sizeof *r->memo))) lx_nomem(&r->lx);
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
    lx_buf_clear(&r->lx, &r->argv[k]);
    lx_buf_put(&r->lx, &r->argv[k], m->text, m->text_n);
  }
  return true;
}

/* Remembers kept arg k's container (raw, n bytes) and its compact text. */
static void memo_store(rd *r, unsigned k, uint64_t h, const uint8_t *raw, size_t n) {
  struct arg_memo *m = memo_entry(r, h);
  const lx_buf *text = &r->argv[k];
  if (n + text->n > m->cap) {
    char *p = ut_grow(m->raw, &m->cap, n + text->n, 1);
    if (!p) lx_nomem(&r->lx);
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
static lx_buf *capture_kept_container(rd *r, unsigned k, unsigned depth) {
  lx_lexer *x = &r->lx;
  const uint8_t *start = x->p;
  uint64_t start_off = lx_off(x);
  const uint8_t *end = plain_container_end(start, x->end);
  size_t n = end ? (size_t)(end - start) : 0;
  uint64_t h = 0;
  if (end && n <= ARG_MEMO_RAW) {
    h = memo_hash(k, start, n);
    if (memo_lookup(r, k, h, start, n)) {
      x->p = end;
      return &r->argv[k];
    }
  }
  uint8_t open = *x->p++;
  lx_buf *o = capture_container(r, &r->argv[k], open, depth);
  /* read to exactly the end found: the chunk did not change, start is still valid */
  if (o && end && n <= ARG_MEMO_RAW && lx_off(x) == start_off + n) memo_store(r, k, h, start, n);
  return o;
}

/* The value of kept arg k (tr_event_arg) into r->argv[k]: 1 stored, 0 absent (null, an
 * empty string, a value of another kind), -1 dropped for its length. While sampling, a
 * string value goes to the sample text as any other arg's does. */
static int capture_value(rd *r, unsigned k, unsigned depth, bool sample) {
  lx_lexer *x = &r->lx;
  lx_buf *out = &r->argv[k];
  lx_buf_clear(x, out);
  r->arg_id[k] = 0;
  r->arg_slot[k] = -1;
  int c = lx_peek(x);
  if (c == '"') {
    x->p++;
    x->str_cap = sample ? SAMPLE_STRING_CAP : TR_MAX_ARG_BYTES;
    lx_scan_string(x, out);
    x->str_cap = 0;
    if (sample && !x->str_cut) sample_add(r, out->p, out->n);
    if (x->str_cut || out->n > TR_MAX_ARG_BYTES) return -1;
    return out->n > 0;
  }
  if (c == '{' || c == '[') return capture_kept_container(r, k, depth) ? 1 : -1;
  int type = lx_scan_scalar(x, c, NULL);
  if (type == LX_NULL) return 0;
  const char *word = type == LX_TRUE ? "true" : type == LX_FALSE ? "false" : NULL;
  lx_buf_put(x, out, word ? word : x->nump, word ? strlen(word) : x->numn);
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
  lx_lexer *x = &r->lx;
  lx_check_depth(x, depth);
  lx_skip_ws(x);
  if (lx_peek(x) == '}') {
    x->p++;
    return;
  }
  unsigned n_args = 0;
  do {
    if (lx_peek(x) != '"') lx_expected(x, "a member name");
    x->p++;
    bool sample = r->sampling && n_args < SAMPLE_ARGS;
    int key = scan_key(r, sample); /* sampling needs the name's text in r->key */
    lx_expect_colon(x);
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
        lx_read_value(x, depth + 1, NULL);
      }
    } else if (key == K_NAME) {
      int type = lx_read_value(x, depth + 1, &r->argname);
      r->has_argname = type == LX_STRING;
      if (sample && r->has_argname) sample_add(r, r->argname.p, r->argname.n);
    } else if (key >= K_ARG0) {
      capture_arg(r, (unsigned)(key - K_ARG0), depth + 1, sample);
    } else if (sample) {
      /* an over-long value is left out of the sample, not refused */
      x->str_cap = SAMPLE_STRING_CAP;
      int type = lx_read_value(x, depth + 1, &r->argval);
      x->str_cap = 0;
      if (type == LX_STRING && !x->str_cut) sample_add(r, r->argval.p, r->argval.n);
    } else {
      lx_read_value(x, depth + 1, NULL);
    }
  } while (lx_next_member(x, '}'));
}

/* ------------------------------------------------------------------ classification */

static bool contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* The tests below take a text by its length: no text holds a NUL (the lexer decodes an
 * escaped one to U+FFFD; the fast path keeps plain ASCII only), so they answer as the
 * C-string tests they replaced. */
static bool text_is(fe_text s, const char *lit) {
  size_t n = strlen(lit);
  return s.n == n && memcmp(s.p, lit, n) == 0;
}

static bool text_starts(fe_text s, const char *prefix) {
  size_t n = strlen(prefix);
  return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Lower-cased copy (ASCII) of s into out; returns its text. */
static const char *lower_into(rd *r, lx_buf *out, fe_text s) {
  lx_buf_clear(&r->lx, out);
  lx_buf_reserve(&r->lx, out, s.n);
  te_ascii_lower(out->p, s.p, s.n);
  out->n = s.n;
  out->p[s.n] = '\0';
  return out->p;
}

/* Lower-cased copy (ASCII) of s into r->lc. */
static const char *lower(rd *r, fe_text s) { return lower_into(r, &r->lc, s); }

static bool is_metadata_name(fe_text name) {
  return text_is(name, "process_name") || text_is(name, "thread_name") ||
         text_is(name, "process_sort_index") || text_is(name, "thread_sort_index");
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

static unsigned cat_bits(rd *r, fe_text cat) {
  /* lower-cased in its own buffer: lower() reuses r->lc for names */
  const char *lc = lower_into(r, &r->catlc, cat);
  unsigned bits = 0;
  if (contains(lc, "python_function") || contains(lc, "cpu_op") || contains(lc, "trace"))
    bits |= CAT_NOT_KERNEL;
  if (contains(lc, "annotation")) bits |= CAT_ANNOTATION;
  if (contains(lc, "kernel") || starts_with(lc, "gpu_")) bits |= CAT_KERNEL;
  if (strcmp(lc, "xpu_runtime") == 0) bits |= CAT_XPU_RUNTIME_LC;
  if (text_is(cat, "cpu_op")) bits |= CAT_CPU_OP;
  if (text_is(cat, "cuda_runtime") || text_is(cat, "cuda_driver")) bits |= CAT_CUDA_RT;
  if (text_is(cat, "xpu_runtime")) bits |= CAT_XPU_RUNTIME;
  if (text_is(cat, "python_function")) bits |= CAT_PYTHON;
  if (text_is(cat, "user_annotation")) bits |= CAT_USER_ANN;
  if (text_is(cat, "gpu_user_annotation")) bits |= CAT_GPU_USER_ANN;
  return bits;
}

static bool memo_get(const text_memo *m, fe_text s, unsigned *value) {
  for (unsigned i = 0; i < m->n; i++)
    if (m->slot[i].n == s.n && memcmp(m->slot[i].s, s.p, s.n) == 0) {
      *value = m->slot[i].value;
      return true;
    }
  return false;
}

static void memo_put(text_memo *m, fe_text s, unsigned value) {
  if (s.n >= MEMO_TEXT) return;
  unsigned i = m->next;
  m->next = (m->next + 1) % MEMO_SLOTS;
  if (m->n < MEMO_SLOTS) m->n++;
  memcpy(m->slot[i].s, s.p, s.n);
  m->slot[i].n = s.n;
  m->slot[i].value = value;
}

/* cat_bits of the event's category, remembered. */
static unsigned cat_profile_of(rd *r, fe_text cat) {
  unsigned bits;
  if (memo_get(&r->cat_memo, cat, &bits)) return bits;
  bits = cat_bits(r, cat);
  memo_put(&r->cat_memo, cat, bits);
  return bits;
}

/* Whether a runtime call's name holds "launch" in any case, remembered per name. */
static bool names_a_launch(rd *r, fe_text name) {
  unsigned yes;
  if (memo_get(&r->launch_memo, name, &yes)) return yes;
  yes = contains(lower(r, name), "launch");
  memo_put(&r->launch_memo, name, yes);
  return yes;
}

/* The reference's kernel-table detector (docs/reference.md 2.5). A dur that is present
 * but unusable is treated as positive here so the event is counted as skipped rather
 * than silently dropped. */
static bool is_gpu_kernel(rd *r, unsigned cat, fe_text name) {
  bool dur_pos = r->dur_state == F_BAD || (r->dur_state == F_OK && r->dur > 0);
  if (!dur_pos || r->ts_state == F_ABSENT) return false;
  if (is_metadata_name(name)) return false;
  if (cat & CAT_NOT_KERNEL) return false;
  if ((cat & CAT_ANNOTATION) || text_starts(name, "## call ")) return false;
  if (cat & CAT_KERNEL) return true;
  if ((cat & CAT_XPU_RUNTIME_LC) && contains(lower(r, name), "enqueuekernellaunch")) return true;
  /* the name tests below can only say no: without a stream the answer is no already (a
   * runtime call, which has none, is not lower-cased here) */
  if (r->stream_prio <= 0) return false;
  const char *name_lc = lower(r, name);
  if (contains(name_lc, ".py(") || starts_with(name_lc, "python/") ||
      starts_with(name_lc, "nn.module:"))
    return false;
  return true;
}

/* Category of a kept "X" event of category cat and name name, or -1 to drop it. */
static int classify(rd *r, fe_text cat, fe_text name) {
  /* The two commonest categories, decided without the general tests below (which give
   * the same answer: is_gpu_kernel is false for both, then the exact matches pick them). */
  if (text_is(cat, "python_function")) return TR_KIND_PYFRAME;
  if (text_is(cat, "cpu_op")) return TR_KIND_CPU_OP;
  unsigned bits = cat_profile_of(r, cat);
  if (is_gpu_kernel(r, bits, name)) return TR_KIND_KERNEL;
  if (bits & CAT_CPU_OP) return TR_KIND_CPU_OP;
  bool cuda_rt = (bits & CAT_CUDA_RT) != 0;
  if (cuda_rt && r->corr != TR_NO_ID && names_a_launch(r, name)) return TR_KIND_LAUNCH;
  if (bits & CAT_PYTHON) return TR_KIND_PYFRAME;
  if (bits & CAT_USER_ANN) return TR_KIND_USER_ANNOTATION;
  if (bits & CAT_GPU_USER_ANN) return TR_KIND_GPU_ANNOTATION;
  if ((cuda_rt || (bits & CAT_XPU_RUNTIME)) && r->corr != TR_NO_ID) return TR_KIND_RUNTIME;
  return -1;
}

/* ------------------------------------------------------------------ storing */

/* The text's id, 0 for an empty text (an absent field reads as empty). */
static tr_str intern_text(rd *r, fe_text s) {
  if (s.n == 0) return 0;
  uint32_t id = tr_intern_put(r->t->in, s.p, s.n);
  if (id == UINT32_MAX) lx_nomem(&r->lx);
  return id;
}

/* Whether the first w and the last w of the n bytes at a and b agree (w <= n <= 2w: the
 * two loads cover all n, reading no byte outside them). */
static inline __attribute__((always_inline)) bool ends_agree(const char *a, const char *b, size_t n,
                                                             size_t w) {
  uint64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  memcpy(&x0, a, w);
  memcpy(&y0, b, w);
  memcpy(&x1, a + n - w, w);
  memcpy(&y1, b + n - w, w);
  return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}

/* Whether the n bytes at a and b agree: from 4 to 16 bytes (most names, and the pids,
 * tids and categories intern_cached meets) in two overlapping loads of each, else memcmp. */
static inline bool same_text(const char *a, const char *b, size_t n) {
  if (n >= 8 && n <= 16) return ends_agree(a, b, n, 8);
  if (n >= 4 && n < 8) return ends_agree(a, b, n, 4);
  return memcmp(a, b, n) == 0;
}

/* intern_text of an event's name through name_cache, whose slot a hash of the name's
 * length and three of its words picks (its first, middle and last 8 bytes: frame names
 * share their starts, addresses and line numbers sit at their ends): a name met lately is
 * one compare with its stored text, not a hash of all its bytes and a probe of the
 * table. Names that share the slot take turns in it; the ids are the table's either way. */
static tr_str name_id(rd *r, fe_text s) {
  if (s.n < NAME_CACHE_MIN) return intern_text(r, s);
  uint64_t a, b, c;
  memcpy(&a, s.p, 8);
  memcpy(&b, s.p + s.n / 2 - 4, 8);
  memcpy(&c, s.p + s.n - 8, 8);
  uint64_t h = ((a * 0x9E3779B97F4A7C15ull) ^ b) * 0xFF51AFD7ED558CCDull;
  h = (h ^ c ^ s.n) * 0xC4CEB9FE1A85EC53ull;
  tr_str *slot = &r->name_cache[h >> (64 - NAME_CACHE_BITS)];
  if (*slot) {
    size_t n;
    const char *p = tr_intern_text(r->t->in, *slot, &n);
    if (n == s.n && same_text(p, s.p, n)) return *slot;
  }
  return *slot = intern_text(r, s);
}

/* A buffer's text as a view; empty when the field is not present. */
static fe_text buf_text(const lx_buf *b, bool present) {
  return present ? (fe_text){b->p, b->n} : (fe_text){NULL, 0};
}

static tr_str intern(rd *r, const lx_buf *b, bool present) {
  return intern_text(r, buf_text(b, present));
}

/* intern_text through a one-entry cache of the field's last value (same ids, fewer
 * hashes). */
static inline __attribute__((always_inline)) tr_str intern_cached(rd *r, fe_text s,
                                                                  struct icache *c) {
  if (s.n == 0) return 0;
  if (c->id && c->n == s.n && same_text(c->s, s.p, s.n)) return c->id;
  tr_str id = intern_text(r, s);
  c->id = 0;
  if (s.n <= sizeof c->s) {
    memcpy(c->s, s.p, s.n);
    c->n = s.n;
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
      if (!p) lx_nomem(&r->lx);
      t->corr_pairs = p;
      t->cap_corr_pairs = cap;
    }
    t->corr_pairs[t->n_corr_pairs++] = (struct corr_pair){ck, ek};
  }
  if ((ck == TR_OFF_WIDE || ek == TR_OFF_WIDE) && tr_map64_put(&t->corr_map_wide, corr, ext) != 0)
    lx_nomem(&r->lx);
}

/* 32-bit offset of an event's id; an id outside the window is kept in wide by index. */
static uint32_t store_id(rd *r, tr_idbase *b, tr_map64 *wide, int64_t id, uint32_t index) {
  uint32_t off = tr_id_encode(b, id);
  if (off == TR_OFF_WIDE && tr_map64_put(wide, index, id) != 0) lx_nomem(&r->lx);
  return off;
}

/* dur as whole nanoseconds; one that is not exactly that is kept in wide under key (an
 * event's index, a frame's position). */
static uint32_t store_dur(rd *r, tr_map64 *wide, double dur, int64_t key) {
  uint32_t ns = tr_dur_encode(dur);
  if (ns != TR_DUR_WIDE) return ns;
  int64_t bits;
  memcpy(&bits, &dur, sizeof bits);
  if (tr_map64_put(wide, key, bits) != 0) lx_nomem(&r->lx);
  return ns;
}

/* e's start as a count (idmap.h); one that is not exactly a count is kept in ts_wide by
 * e's index. */
static void store_ts(rd *r, tr_event *e, double ts) {
  tr_trace *t = r->t;
  int64_t c = tr_ts_encode(&t->head, &t->ts_set, ts);
  if (c == TR_TS_WIDE) {
    int64_t bits;
    memcpy(&bits, &ts, sizeof bits);
    if (tr_map64_put(&t->ts_wide, e->index, bits) != 0) lx_nomem(&r->lx);
  }
  e->ts_lo = (uint32_t)(uint64_t)c;
  e->ts_hi = (int16_t)((c - (int64_t)e->ts_lo) / 4294967296); /* |c| <= 2^47: it fits */
}

/* Position of c in the context table, trying the last context of the same kind first. */
static uint32_t event_ctx(rd *r, int kind, const tr_event_ctx *c) {
  uint32_t pos = tr_ctxtab_put(&r->t->ctx, c, &r->last_ctx[kind]);
  if (pos == UINT32_MAX) lx_nomem(&r->lx);
  return pos;
}

static void push_event(rd *r, int kind, const tr_event *e) {
  ev_vec *v = &r->t->ev[kind];
  if (v->n == v->cap) {
    tr_event *p = ut_grow(v->v, &v->cap, v->n + 1, sizeof *p);
    if (!p) lx_nomem(&r->lx);
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
      lx_nomem(&r->lx);
  }
  int64_t prev;
  v->prev =
      tr_map64_get(&v->thread_last, frame_thread_key(pid, tid), &prev) ? (size_t)prev : SIZE_MAX;
  if (v->n_runs == v->cap_runs) {
    tr_pyframe_run *p = ut_grow(v->runs, &v->cap_runs, v->n_runs + 1, sizeof *p);
    if (!p) lx_nomem(&r->lx);
    v->runs = p;
  }
  v->runs[v->n_runs++] = (tr_pyframe_run){(uint32_t)v->n, pid, tid};
}

/* A frame (ts, dur) after its thread's previous one keeps the thread in (ts, -end) order
 * when it starts later, or at the same time and ends no later (file order breaks ties). */
static void check_pyframe_order(const tr_trace *t, py_vec *v, double ts, double dur) {
  if (v->unsorted || v->prev == SIZE_MAX) return;
  const tr_pyframe *a = &v->v[v->prev];
  double a_ts = tr_pyframe_ts(t, a);
  if (a_ts < ts) return;
  if (a_ts == ts && a_ts + tr_pyframe_dur(t, a) >= ts + dur) return;
  v->unsorted = true;
}

static void note_pyframe_name(rd *r, py_vec *v, tr_str name) {
  if (name / 64 >= v->seen_words) {
    uint64_t *p = ut_grow_zeroed(v->seen, &v->seen_words, name / 64 + 1, sizeof *p);
    if (!p) lx_nomem(&r->lx);
    v->seen = p;
  }
  if (v->seen[name / 64] >> (name % 64) & 1) return;
  v->seen[name / 64] |= 1ull << (name % 64);
  if (v->n_names == v->cap_names) {
    tr_str *p = ut_grow(v->names, &v->cap_names, v->n_names + 1, sizeof *p);
    if (!p) lx_nomem(&r->lx);
    v->names = p;
  }
  v->names[v->n_names++] = name;
}

static void push_pyframe(rd *r, double ts, double dur, tr_str name, tr_str pid, tr_str tid) {
  py_vec *v = &r->t->py;
  if (v->n == v->cap) {
    tr_pyframe *p = ut_grow(v->v, &v->cap, v->n + 1, sizeof *p);
    if (!p) lx_nomem(&r->lx);
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
    if (!p) lx_nomem(&r->lx);
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
    if (!p) lx_nomem(&r->lx);
    t->procs = p;
  }
  t->procs[t->n_procs++] =
      (tr_process_name){intern(r, &r->pid, r->has_pid), intern(r, &r->argname, true)};
}

/* Kept arg k of the byte scanner's event: the id its memo entry knew, else its text
 * interned (and told to the entry). */
static tr_str scanned_arg_id(rd *r, unsigned k) {
  if (r->arg_id[k]) return r->arg_id[k];
  tr_str id = intern(r, &r->argv[k], true);
  memo_note_id(r, k, id);
  return id;
}

static tr_str ahead_arg_id(rd *r, fe_text text, fe_memo memo);

/* Kept arg text of an event the fast path read: the id its remembered container (memo,
 * slot 0: none) knew, else the text interned (and told to the container's slot). */
static tr_str fast_arg_id(rd *r, fe_text text, fe_memo memo) {
  if (!memo.slot) return intern_text(r, text);
  if (memo.slot & FE_MEMO_AHEAD) return ahead_arg_id(r, text, memo);
  tr_str id = fe_memo_id(r->shapes, memo);
  if (id) return id;
  id = intern_text(r, text);
  fe_memo_set_id(r->shapes, memo, id);
  return id;
}

/* The kept args of the event just pushed (the last of its kind), as one arg set: those of
 * mask, dropped those that were cut for their length; their texts (text, the fast path's
 * views, with their memo slots) or, with text NULL, the byte scanner's (scanned_arg_id). */
static void store_args(rd *r, int kind, uint32_t mask, uint32_t dropped, const fe_text *text,
                       const fe_memo *memo) {
  tr_trace *t = r->t;
  if (dropped) t->args_dropped += (uint64_t)__builtin_popcount(dropped);
  if (!mask) return;
  tr_str vals[TR_ARG_COUNT] = {0};
  for (uint32_t m = mask; m; m &= m - 1) { /* the present keys only */
    unsigned k = (unsigned)__builtin_ctz(m);
    vals[k] = text ? fast_arg_id(r, text[k], memo[k]) : scanned_arg_id(r, k);
  }
  uint32_t id = tr_argtab_put(&t->args, mask, vals);
  if (id == UINT32_MAX) lx_nomem(&r->lx);
  if (tr_argidx_add(&t->argidx[kind], (uint32_t)(t->ev[kind].n - 1), id) != 0) lx_nomem(&r->lx);
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
  lx_lexer *x = &r->lx;
  x->str_cap = META_KEY_CAP;
  lx_scan_string(x, &r->key);
  x->str_cap = 0;
  lx_expect_colon(x);
  return x->str_cut ? "" : r->key.p;
}

/* A string value interned, 0 for any other value (skipped). */
static tr_str meta_string(rd *r, unsigned depth) {
  lx_lexer *x = &r->lx;
  x->str_cap = SAMPLE_STRING_CAP;
  int type = lx_read_value(x, depth, &r->argval);
  bool cut = x->str_cut;
  x->str_cap = 0;
  return type == LX_STRING && !cut ? intern(r, &r->argval, true) : 0;
}

/* Iterates a JSON object whose '{' is the next byte: calls member(r, key, depth + 1, ctx)
 * for each member, which must consume the value. Any other value is skipped. */
static void meta_object(rd *r, unsigned depth, void (*member)(rd *, const char *, unsigned, void *),
                        void *ctx) {
  if (lx_peek(&r->lx) != '{') {
    lx_read_value(&r->lx, depth, NULL);
    return;
  }
  r->lx.p++;
  lx_check_depth(&r->lx, depth);
  lx_skip_ws(&r->lx);
  if (lx_peek(&r->lx) == '}') {
    r->lx.p++;
    return;
  }
  do {
    if (lx_peek(&r->lx) != '"') lx_expected(&r->lx, "a member name");
    r->lx.p++;
    member(r, meta_key(r), depth + 1, ctx);
  } while (lx_next_member(&r->lx, '}'));
}

/* Iterates a JSON list whose '[' is the next byte: calls element(r, i, depth + 1, ctx)
 * for each element, which must consume it. Any other value is skipped. */
static void meta_list(rd *r, unsigned depth, void (*element)(rd *, size_t, unsigned, void *),
                      void *ctx) {
  if (lx_peek(&r->lx) != '[') {
    lx_read_value(&r->lx, depth, NULL);
    return;
  }
  r->lx.p++;
  lx_check_depth(&r->lx, depth);
  lx_skip_ws(&r->lx);
  if (lx_peek(&r->lx) == ']') {
    r->lx.p++;
    return;
  }
  size_t i = 0;
  do element(r, i++, depth + 1, ctx);
  while (lx_next_member(&r->lx, ']'));
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
    lx_read_value(&r->lx, depth, NULL);
}

static void device_element(rd *r, size_t i, unsigned depth, void *ctx) {
  (void)ctx;
  tr_trace *t = r->t;
  if (i >= TR_MAX_META_ITEMS || lx_peek(&r->lx) != '{') {
    lx_read_value(&r->lx, depth, NULL);
    return;
  }
  tr_device *p = ut_grow(t->devices, &t->cap_devices, t->meta.n_devices + 1, sizeof *p);
  if (!p) lx_nomem(&r->lx);
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
  if (!p) lx_nomem(&r->lx);
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
    lx_read_value(&r->lx, depth, NULL);
}

static void group_element(rd *r, size_t i, unsigned depth, void *ctx) {
  (void)ctx;
  tr_trace *t = r->t;
  if (i >= TR_MAX_META_ITEMS || lx_peek(&r->lx) != '{') {
    lx_read_value(&r->lx, depth, NULL);
    return;
  }
  tr_process_group *p = ut_grow(t->groups, &t->cap_groups, t->meta.n_groups + 1, sizeof *p);
  if (!p) lx_nomem(&r->lx);
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
    lx_read_value(&r->lx, depth, NULL);
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
  const char *key = r->lx.str_cut ? "" : r->key.p;
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
    lx_read_value(&r->lx, 2, NULL);
  }
  m->devices = r->t->devices;
  m->groups = r->t->groups;
}

/* ------------------------------------------------------------------ events */

/* Counts an event and resets the fields its members fill; returns its index. */
static uint64_t event_begin(rd *r) {
  tr_trace *t = r->t;
  if (t->n_events >= TR_MAX_EVENTS)
    lx_fail_at(&r->lx, TR_ERR_LIMIT, r->ev_off, "more than %llu events (TR_MAX_EVENTS)",
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
  lx_buf_clear(&r->lx, &r->ph);
  return index;
}

/* The members of an event, its '{' consumed, through its '}'. */
static void event_members(rd *r, unsigned depth) {
  lx_lexer *x = &r->lx;
  lx_skip_ws(x);
  if (lx_peek(x) == '}') {
    x->p++;
  } else {
    do {
      if (lx_peek(x) != '"') lx_expected(x, "a member name");
      x->p++;
      int key = scan_key(r, false);
      lx_expect_colon(x);
      unsigned d = depth + 1;
      if (key == K_PH) {
        if (lx_read_value(x, d, &r->ph) != LX_STRING) lx_buf_clear(x, &r->ph);
      } else if (key == K_NAME) {
        r->has_name = lx_read_value(x, d, &r->name) == LX_STRING;
        r->name_bad = !r->has_name;
      } else if (key == K_CAT) {
        r->has_cat = lx_read_value(x, d, &r->cat) == LX_STRING;
      } else if (key == K_PID) {
        r->has_pid = read_textual(r, d, &r->pid);
      } else if (key == K_TID) {
        r->has_tid = read_textual(r, d, &r->tid);
      } else if (key == K_TS) {
        r->ts_state = read_time(r, d, &r->ts);
      } else if (key == K_DUR) {
        r->dur_state = read_time(r, d, &r->dur);
      } else if (key == K_ARGS && lx_peek(x) == '{') {
        x->p++;
        parse_args(r, d);
      } else {
        lx_read_value(x, d, NULL);
      }
    } while (lx_next_member(x, '}'));
  }
}

/* The texts a kept event stores, as views: of the byte scanner's buffers, or of the
 * chunk's bytes when the fast path read the event (event_fast_store). An empty text is an
 * absent field. */
typedef struct kept_texts {
  fe_text name, cat, pid, tid, stream;
  uint32_t arg_mask, arg_dropped;
  const fe_text *argv;     /* the kept args' texts; NULL: the byte scanner's (store_args) */
  const fe_memo *arg_memo; /* with argv: their remembered containers (fe_event.arg_memo) */
} kept_texts;

/* Stores an event of a kept kind whose fields checked out: a Python frame, or a tr_event
 * with its context and kept args. */
static void store_event(rd *r, int kind, uint64_t index, const kept_texts *k) {
  if (kind == TR_KIND_PYFRAME) {
    tr_str name = name_id(r, k->name);
    /* cat is always "python_function": intern it with the first frame only, so string
     * ids come out as they would if every frame carried it */
    if (r->t->py.n == 0) (void)intern_text(r, k->cat);
    tr_str pid = intern_cached(r, k->pid, &r->ic_pid[kind]);
    tr_str tid = intern_cached(r, k->tid, &r->ic_tid[kind]);
    push_pyframe(r, r->ts, r->dur_state == F_OK ? r->dur : 0.0, name, pid, tid);
    return;
  }
  tr_event e;
  e.index = (uint32_t)index;
  store_ts(r, &e, r->ts);
  e.dur_ns = store_dur(r, &r->t->dur_wide, r->dur_state == F_OK ? r->dur : 0.0, e.index);
  e.ext_off = store_id(r, &r->t->ext_base, &r->t->ext_wide, r->ext, e.index);
  e.corr_off = store_id(r, &r->t->corr_base, &r->t->corr_wide, r->corr, e.index);
  e.name = name_id(r, k->name);
  if (r->ext == TR_NO_ID && r->corr != TR_NO_ID) r->t->corr_wanted = true;
  tr_event_ctx c;
  c.cat = intern_cached(r, k->cat, &r->ic_cat[kind]);
  c.pid = intern_cached(r, k->pid, &r->ic_pid[kind]);
  c.tid = intern_cached(r, k->tid, &r->ic_tid[kind]);
  c.stream = intern_cached(r, k->stream, &r->ic_stream[kind]);
  uint32_t pos = event_ctx(r, kind, &c);
  e.ctx = pos < TR_CTX_WIDE ? (uint16_t)pos : TR_CTX_WIDE;
  if (pos >= TR_CTX_WIDE && tr_map64_put(&r->t->ctx_wide, e.index, pos) != 0) lx_nomem(&r->lx);
  push_event(r, kind, &e);
  if (k->arg_mask | k->arg_dropped)
    store_args(r, kind, k->arg_mask, k->arg_dropped, k->argv, k->arg_memo);
}

/* A kept-phase ("X") event whose fields are in r (ts, dur, ids, stream) and whose texts
 * are k's: classified, then stored, counted as skipped, or dropped. */
static void event_keep(rd *r, uint64_t index, const kept_texts *k, bool name_bad) {
  int kind = classify(r, k->cat, k->name);
  if (kind < 0 && !name_bad) return;
  /* a name that is not a string (a number, an object) is a wrong type, not an empty name */
  if (name_bad || r->ts_state != F_OK || r->dur_state == F_BAD) {
    count_skipped(r);
    return;
  }
  store_event(r, kind, index, k);
}

/* What the members of the event at index said: classified, then stored or dropped. */
static void event_end(rd *r, uint64_t index) {
  if (!r->has_name) lx_buf_clear(&r->lx, &r->name);
  if (!r->has_cat) lx_buf_clear(&r->lx, &r->cat);
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
  kept_texts k = {buf_text(&r->name, true),
                  buf_text(&r->cat, true),
                  buf_text(&r->pid, r->has_pid),
                  buf_text(&r->tid, r->has_tid),
                  buf_text(&r->stream, r->stream_prio > 0),
                  r->arg_mask,
                  r->arg_dropped,
                  NULL,
                  NULL};
  event_keep(r, index, &k, r->name_bad);
}

/* One element of traceEvents, its '{' consumed: the byte scanner. */
static void parse_event(rd *r, unsigned depth) {
  lx_check_depth(&r->lx, depth);
  uint64_t index = event_begin(r);
  event_members(r, depth);
  event_end(r, index);
}

static void put_text(rd *r, lx_buf *b, fe_text s) {
  b->n = 0;
  lx_buf_put(&r->lx, b, s.p, s.n);
}

/* The times, ids and stream choice of an event the fast path read, into the reader's
 * fields (what classify and store_event read besides the texts). */
static void event_load_numbers(rd *r, const fe_event *ev) {
  r->ts_state = ev->ts_state;
  r->ts = ev->ts;
  r->dur_state = ev->dur_state;
  r->dur = ev->dur;
  r->ext = ev->ext;
  r->corr = ev->corr;
  r->stream_prio = ev->stream_prio;
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
  event_load_numbers(r, ev);
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

/* event_end for an event the fast path read, not sampled, and not of phase "M" (rare:
 * event_end reads those): its texts are interned where they lie in the chunk, not copied
 * into the reader's buffers first. */
static void event_fast_end(rd *r, uint64_t index, const fe_event *ev) {
  if (ev->ext != TR_NO_ID && ev->corr != TR_NO_ID) corr_put(r, ev->corr, ev->ext);
  if (ev->ph.n != 1 || ev->ph.p[0] != 'X') return;
  event_load_numbers(r, ev);
  fe_text none = {"", 0};
  kept_texts k = {ev->has_name ? ev->name : none,
                  ev->has_cat ? ev->cat : none,
                  ev->has_pid ? ev->pid : none,
                  ev->has_tid ? ev->tid : none,
                  ev->stream_prio ? ev->stream : none,
                  ev->arg_mask,
                  ev->arg_dropped,
                  ev->arg,
                  ev->arg_memo};
  event_keep(r, index, &k, ev->name_bad);
}

/* Reading ahead (source.h tr_source_ahead_fn, fast_event.h fe_ahead_read): the inflate
 * thread's own shapes and scratch, and the events it read of each ring slot's chunk. It
 * writes a slot's records before the reader gets the slot, and the reader reads them while
 * it holds the slot, so the ring's hand-over (under its mutex) orders the two. All of it is
 * allocated by the reader's thread before the read, and small at first: a first allocation
 * on the inflate thread would give it an allocator arena of its own, and large first
 * reservations in the heap stayed resident too (+0.4-1.1 MB of peak RSS on the suite
 * either way; a record array grows where its first block is). */
#define AHEAD_RECS 256u  /* records a slot has room for at first (grown as needed) */
#define AHEAD_SPANS 256u /* kept args' spans likewise */
typedef struct ahead {
  fe_shapes *shapes;
  char *scratch;
  fe_ahead_list slot[TR_SOURCE_RING];
  /* the reader's own: the id it gave the text each slot of the reading-ahead shapes held
   * (gen; id 0: none yet), as fe_memo_id does for its shapes. An event read ahead lost its
   * remembered containers before, and the reader interned their texts again (hta x 2 at a
   * share of 32: +8.6 M instructions). */
  struct ahead_id {
    uint32_t gen;
    tr_str id;
  } ids[FE_MEMO_SLOTS];
} ahead;

/* tr_source_ahead_fn, on the inflate thread: the events of the last share of the chunk. */
static void ahead_read(void *ctx, unsigned slot, const uint8_t *buf, size_t len,
                       const tr_block_masks *masks, unsigned share) {
  ahead *a = ctx;
  fe_ahead_list *l = &a->slot[slot];
  l->n = l->n_args = 0;
  if (!share) return;
  fe_chunk c = {buf, len, masks, a->scratch, FE_SCRATCH_BYTES, a->shapes};
  fe_ahead_read(&c, len - (size_t)((uint64_t)len * share / TR_SOURCE_SHARE), l);
}

static void ahead_free(ahead *a) {
  if (!a) return;
  fe_shapes_destroy(a->shapes);
  free(a->scratch);
  for (unsigned i = 0; i < TR_SOURCE_RING; i++) fe_ahead_list_free(&a->slot[i]);
  free(a);
}

/* fast_arg_id for a remembered container of the reading-ahead shapes: a slot holds one text
 * per generation, so the id is the one given that slot and generation, if any. */
static tr_str ahead_arg_id(rd *r, fe_text text, fe_memo memo) {
  struct ahead_id *e = &r->ahead->ids[(memo.slot & ~FE_MEMO_AHEAD) - 1];
  if (e->id && e->gen == memo.gen) return e->id;
  tr_str id = intern_text(r, text);
  *e = (struct ahead_id){memo.gen, id};
  return id;
}

/* The event at offset off of the lexer's chunk as the inflate thread read it ahead: *ev
 * and *end as fe_parse_event would give them (not sampling). false: not read ahead. */
static bool ahead_take(rd *r, size_t off, fe_event *ev, size_t *end) {
  lx_lexer *x = &r->lx;
  if (r->ah_chunk != x->chunk_off + 1) { /* a new chunk */
    int slot = tr_source_slot(x->src);
    r->ah_chunk = x->chunk_off + 1;
    r->ah_list = slot >= 0 ? &r->ahead->slot[slot] : NULL;
    r->ah_cursor = 0;
  }
  if (!r->ah_list) return false;
  const fe_ahead_rec *rec = fe_ahead_find(r->ah_list, &r->ah_cursor, off);
  if (!rec) return false;
  fe_ahead_event(r->ah_list, rec, x->chunk, ev);
  *end = rec->end;
  return true;
}

/* The event at r->lx.p (its '{') through the fast path, when the chunk has masks. false: the
 * fast path did not take it and nothing changed. */
static bool event_fast(rd *r) {
  lx_lexer *x = &r->lx;
  if (!x->masks || r->t->n_events >= TR_MAX_EVENTS) return false;
  if (!r->scratch && !(r->scratch = malloc(FE_SCRATCH_BYTES))) lx_nomem(x);
  if (!r->shapes && !(r->shapes = fe_shapes_create())) lx_nomem(x);
  fe_chunk c = {x->chunk, (size_t)(x->end - x->chunk), x->masks, r->scratch, FE_SCRATCH_BYTES,
                r->shapes};
  fe_event ev;
  size_t end;
  bool sampling = r->t->n_events < SAMPLE_EVENTS;
  size_t off = (size_t)(x->p - x->chunk);
  bool taken = !sampling && r->ahead && ahead_take(r, off, &ev, &end);
  if (!taken && !fe_parse_event(&c, off, sampling, &ev, &end)) return false;
  uint64_t index = event_begin(r);
  x->p = x->chunk + end;
  r->t->n_fast++;
  r->t->n_ahead += taken;
  if (!sampling && !(ev.ph.n == 1 && ev.ph.p[0] == 'M')) {
    event_fast_end(r, index, &ev);
    return true;
  }
  for (unsigned i = 0; i < ev.n_sample; i++) sample_add(r, ev.sample[i].p, ev.sample[i].n);
  event_load(r, &ev);
  event_end(r, index);
  return true;
}

/* The traceEvents array, its '[' consumed. */
static void parse_events(rd *r, unsigned depth) {
  lx_lexer *x = &r->lx;
  lx_check_depth(x, depth);
  lx_skip_ws(x);
  if (lx_peek(x) == ']') {
    x->p++;
    return;
  }
  do {
    r->ev_off = lx_off(x);
    if (lx_peek(x) == '{') {
      if (!event_fast(r)) {
        x->p++;
        parse_event(r, depth + 1);
      }
    } else {
      /* not an event object: nothing to analyse, but say so (and it still counts
       * against TR_MAX_EVENTS, or [0,0,...] would bypass the limit) */
      if (r->t->n_events >= TR_MAX_EVENTS)
        lx_fail_at(x, TR_ERR_LIMIT, r->ev_off, "more than %llu events (TR_MAX_EVENTS)",
                   (unsigned long long)TR_MAX_EVENTS);
      lx_read_value(x, depth + 1, NULL);
      r->t->n_events++;
      count_skipped(r);
    }
  } while (lx_next_member(x, ']'));
}

static void parse_document(rd *r) {
  lx_lexer *x = &r->lx;
  lx_skip_ws(x);
  /* a UTF-8 byte-order mark is harmless; skip it */
  if (lx_peek(x) == 0xEF) {
    x->p++;
    if (lx_peek(x) != 0xBB) lx_expected(x, "'{' or '['");
    x->p++;
    if (lx_peek(x) != 0xBF) lx_expected(x, "'{' or '['");
    x->p++;
    lx_skip_ws(x);
  }
  int c = lx_peek(x);
  if (c < 0) lx_fail_at(x, TR_ERR_JSON, 0, "empty input");
  if (c == '[') {
    x->p++;
    if (r->probe) {
      lx_skip_ws(x);
      r->probe_result = lx_peek(x) == '{';
      longjmp(x->jb, 1);
    }
    parse_events(r, 1);
  } else if (c == '{') {
    x->p++;
    bool found = false;
    lx_skip_ws(x);
    if (lx_peek(x) == '}') {
      x->p++;
    } else {
      do {
        if (lx_peek(x) != '"') lx_expected(x, "a member name");
        x->p++;
        x->str_cap = META_KEY_CAP;
        lx_scan_string(x, &r->key);
        x->str_cap = 0;
        lx_expect_colon(x);
        if (!x->str_cut && KEY_IS(&r->key, "traceEvents")) {
          if (found)
            lx_fail_at(x, TR_ERR_SHAPE, lx_off(x),
                       "\"traceEvents\" appears twice in the top-level object");
          if (lx_peek(x) != '[')
            lx_fail_at(x, TR_ERR_SHAPE, lx_off(x), "\"traceEvents\" is not a list");
          x->p++;
          if (r->probe) {
            r->probe_result = 1;
            longjmp(x->jb, 1);
          }
          parse_events(r, 2);
          found = true;
        } else {
          parse_top_member(r);
        }
      } while (lx_next_member(x, '}'));
    }
    if (!found)
      lx_fail_at(x, TR_ERR_SHAPE, 0,
                 "not a trace: the top-level object has no \"traceEvents\" list");
  } else if (c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
    lx_fail_at(x, TR_ERR_SHAPE, lx_off(x),
               "not a trace: the top level is a single value, not an object or an event list");
  } else {
    lx_expected(x, "'{' or '[' at the start of a trace");
  }
  lx_skip_ws(x);
  if (lx_peek(x) >= 0) lx_expected(x, "end of input after the top-level value");
}
static void rd_free(rd *r) {
  lx_buf *bufs[] = {&r->key, &r->lx.num, &r->ph,      &r->name,   &r->cat, &r->pid,
                    &r->tid, &r->stream, &r->argname, &r->argval, &r->lc,  &r->catlc};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) lx_buf_free(bufs[i]);
  for (size_t k = 0; k < TR_ARG_COUNT; k++) lx_buf_free(&r->argv[k]);
  free(r->scratch);
  fe_shapes_destroy(r->shapes);
  memo_free(r);
  free(r);
}

/* The only setjmp: scanner errors land here with r->lx.err filled. */
static int run_parse(rd *r) {
  if (setjmp(r->lx.jb) != 0) return -1;
  parse_document(r);
  return 0;
}

/* Reads from an open source; takes ownership of src. */
static tr_trace *read_source(const char *name, tr_source *src, ahead *a,
                             const tr_read_options *opts, tr_error *err) {
  tr_trace *t = tr_trace_new(name);
  rd *r = calloc(1, sizeof *r);
  if (!t || !r) {
    tr_trace_destroy(t);
    free(r);
    tr_source_close(src);
    ahead_free(a);
    tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
    return NULL;
  }
  r->lx.src = src;
  r->ahead = a;
  r->t = t;
  r->lx.err = err;
  r->lx.opts = opts;
  r->lx.next_progress = LX_PROGRESS_STEP;
  if (run_parse(r) != 0) {
    tr_source_close(r->lx.src);
    ahead_free(a);
    rd_free(r);
    tr_trace_destroy(t);
    return NULL;
  }
  t->json_bytes = lx_off(&r->lx);
  t->utf8_replaced = r->lx.utf8_replaced;
  lx_progress(&r->lx);
  tr_source_close(r->lx.src);
  ahead_free(a);
  rd_free(r);
  if (tr_trace_seal(t) != 0) {
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
  tr_source_opts so = {opts ? opts->chunk_size : 0,
                       threaded,
                       opts ? opts->inflater : TR_INFLATE_AUTO,
                       true,
                       tr_simd_level_get(),
                       NULL,
                       NULL,
                       0};
  bool level_asked = scanner >= TR_SCANNER_SCALAR && scanner <= TR_SCANNER_AVX2;
  if (level_asked && tr_simd_level_available(forced[scanner]))
    so.level = forced[scanner];
  else if ((scanner != TR_SCANNER_AUTO && !level_asked) || so.level == TR_SIMD_OFF)
    so.index = false; /* BYTES (or an unknown value), or AUTO with TRIAGE_SIMD=off */
  return so;
}

/* TRIAGE_AHEAD in the environment, read once: "off" (TR_AHEAD_OFF), a share of 1 to
 * TR_AHEAD_ALL (fixed), anything else 0 (chosen by the threads' CPU times). For A/B runs. */
static unsigned g_ahead_env;
static pthread_once_t g_ahead_once = PTHREAD_ONCE_INIT;
static void ahead_env_read(void) {
  const char *v = getenv("TRIAGE_AHEAD");
  if (!v) return;
  if (strcmp(v, "off") == 0) {
    g_ahead_env = TR_AHEAD_OFF;
    return;
  }
  char *e;
  unsigned long n = strtoul(v, &e, 10);
  if (*v && !*e && n >= 1 && n <= TR_AHEAD_ALL) g_ahead_env = (unsigned)n;
}
static unsigned ahead_env(void) {
  pthread_once(&g_ahead_once, ahead_env_read);
  return g_ahead_env;
}

/* The reading ahead a read with the source options so wants (NULL: none: the fast path
 * is off, or opts say so, or out of memory), set in so. */
static ahead *ahead_new(const tr_read_options *opts, tr_source_opts *so) {
  unsigned share = opts ? opts->ahead : 0;
  if (!share) share = ahead_env();
  if (!so->index || share >= TR_AHEAD_OFF) return NULL;
  ahead *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  bool ok = (a->shapes = fe_shapes_create()) && (a->scratch = malloc(FE_SCRATCH_BYTES));
  for (unsigned i = 0; ok && i < TR_SOURCE_RING; i++)
    ok = fe_ahead_list_reserve(&a->slot[i], AHEAD_RECS, AHEAD_SPANS);
  if (!ok) { /* reading ahead is optional */
    ahead_free(a);
    return NULL;
  }
  so->ahead = ahead_read;
  so->ahead_ctx = a;
  so->ahead_share = share;
  return a;
}

tr_trace *tr_trace_read(const char *path, const tr_read_options *opts, tr_error *err) {
  tr_error dummy;
  if (!err) err = &dummy;
  memset(err, 0, sizeof *err);
  tr_source_opts so = source_opts(opts, true);
  ahead *a = ahead_new(opts, &so);
  tr_source *src = tr_source_open_path(path, &so, err);
  if (!src) {
    ahead_free(a);
    return NULL;
  }
  return read_source(path, src, a, opts, err);
}

tr_trace *tr_trace_read_buffer(const char *name, const void *buf, size_t len,
                               const tr_read_options *opts, tr_error *err) {
  tr_error dummy;
  if (!err) err = &dummy;
  memset(err, 0, sizeof *err);
  tr_source_opts so = source_opts(opts, true);
  ahead *a = ahead_new(opts, &so);
  tr_source *src = tr_source_open_buffer(buf, len, &so, err);
  if (!src) {
    ahead_free(a);
    return NULL;
  }
  return read_source(name, src, a, opts, err);
}

/* A host name as the file states it; one that does not fit is dropped (""), since a cut
 * name could make two hosts look like one. */
static void copy_host(char *host, size_t cap, const char *name) {
  size_t n = strlen(name);
  if (n >= cap) n = 0;
  memcpy(host, name, n);
  host[n] = '\0';
}

int tr_trace_probe(const char *path) { return tr_trace_probe_rank(path, NULL); }

int tr_trace_probe_rank(const char *path, int64_t *rank) {
  return tr_trace_probe_head(path, rank, NULL, 0);
}

int tr_trace_probe_head(const char *path, int64_t *rank, char *host, size_t host_cap) {
  if (rank) *rank = TR_NO_ID;
  if (host && host_cap) *host = '\0';
  tr_error err;
  memset(&err, 0, sizeof err);
  /* small chunks, no thread: a probe usually stops within the first few hundred bytes */
  tr_source_opts so = {64u * 1024u, false, TR_INFLATE_AUTO, false, TR_SIMD_SCALAR, NULL, NULL, 0};
  tr_source *src = tr_source_open_path(path, &so, &err);
  if (!src) return 0;
  rd *r = calloc(1, sizeof *r);
  tr_trace *t = tr_trace_new(path);
  int result = 0;
  if (r && t) {
    r->lx.src = src;
    r->t = t;
    r->lx.err = &err;
    r->probe = true;
    r->lx.next_progress = UINT64_MAX;
    if (run_parse(r) != 0) result = r->probe_result;
    /* the members before traceEvents were read whole: Kineto writes distributedInfo there */
    if (rank && result == 1) *rank = t->meta.rank;
    if (host && host_cap && result == 1)
      copy_host(host, host_cap, tr_str_get(t, t->meta.host_name));
    rd_free(r);
  } else {
    free(r);
  }
  tr_source_close(src);
  tr_trace_destroy(t);
  return result;
}
