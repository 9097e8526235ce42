/*
 * trace/lexer.h - the JSON lexer under the Kineto reader (private to src/trace).
 *
 * Streams the JSON text of a tr_source chunk by chunk: whitespace, member names,
 * strings (escapes decoded, UTF-8 checked and repaired), numbers (checked against the
 * JSON grammar, the mantissa gathered in the same pass), literals, and whole containers
 * skipped through an explicit stack. It knows nothing of Kineto: kineto.c maps what it
 * reads to trace events.
 *
 * Errors leave through longjmp to the setjmp of the lexer's owner (x->jb), with x->err
 * filled: it keeps the per-byte hot path free of status checks. Everything the lexer
 * allocates hangs off the owner's heap-allocated state, so the jump leaks nothing.
 *
 * The per-token functions are static inline here, the rest in lexer.c: the reader calls
 * the small ones once per member, and a call across translation units would cost their
 * inlining (docs/performance.md, "the reader split", has the instruction counts).
 *
 * Ownership: an lx_lexer borrows its source, error record and options; lx_buf buffers
 * (its own num and the owner's) are freed with lx_buf_free.
 */
#ifndef TRIAGE_TRACE_LEXER_H
#define TRIAGE_TRACE_LEXER_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "trace/number.h"
#include "trace/source.h"
#include "trace/trace.h"

/* Decompressed bytes between two progress calls (tr_read_options.progress). */
#define LX_PROGRESS_STEP (4ull << 20)

/* A growing NUL-terminated text: the lexer's scratch and its owner's. */
typedef struct lx_buf {
  char *p;
  size_t n, cap;
} lx_buf;

typedef struct lx_lexer {
  tr_source *src;
  const uint8_t *p, *end, *chunk;
  const tr_block_masks *masks; /* of the chunk, for the reader's fast path (NULL: none) */
  uint64_t chunk_off;
  bool eof;
  jmp_buf jb;
  tr_error *err;
  const tr_read_options *opts;
  uint64_t next_progress;
  /* the last number's text: in the current chunk, or in num when it crossed chunks; valid
   * until the next refill, not NUL-terminated */
  lx_buf num;
  const char *nump;
  size_t numn;
  /* its value when num_exact (set by the fast path): lx_num_mantissa(x) / 10^num_frac,
   * negated if num_neg; the text has num_int_len digits before the point */
  unsigned num_int_len, num_frac;
  bool num_neg, num_exact;
  /* lx_scan_string: keep at most str_cap bytes (0 = all, up to TR_MAX_STRING_BYTES); set
   * str_cut when more were skipped */
  size_t str_cap;
  bool str_cut;
  uint64_t utf8_replaced; /* invalid UTF-8 sequences and lone surrogates made U+FFFD */
} lx_lexer;

/* What lx_read_value and lx_scan_scalar found. */
enum { LX_STRING, LX_NUMBER_INT, LX_NUMBER_FLOAT, LX_TRUE, LX_FALSE, LX_NULL, LX_CONTAINER };

/* Bytes that a string can hold verbatim on the fast path: printable ASCII other than
 * the quote and the backslash. Everything else (escapes, UTF-8, controls) goes the slow
 * way, which validates and repairs. */
extern const uint8_t lx_plain[256];

/* Fills x->err (code, offset off, the message) and jumps to x->jb. */
_Noreturn void lx_fail_at(lx_lexer *x, int code, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* TR_ERR_NOMEM, without an offset. */
_Noreturn void lx_nomem(lx_lexer *x);
/* "expected WHAT, found X" at the current byte (TR_ERR_JSON). */
_Noreturn void lx_expected(lx_lexer *x, const char *what);

/* Tells tr_read_options.progress how far the source is. */
void lx_progress(lx_lexer *x);
/* The next chunk: 1, or 0 at the end of input (x->eof); a source error jumps. */
int lx_refill(lx_lexer *x);
/* Whitespace of any length and across chunks (lx_skip_ws takes the common case). */
void lx_skip_ws_slow(lx_lexer *x);

/* Room for extra more bytes and the NUL in b; past TR_MAX_STRING_BYTES a TR_ERR_LIMIT. */
void lx_buf_grow(lx_lexer *x, lx_buf *b, size_t extra);
void lx_buf_free(lx_buf *b);

/* Scans a string whose opening quote is consumed. out NULL = skip without storing, at
 * any length: skipping costs no memory, so TR_MAX_STRING_BYTES applies only to what is
 * stored. With x->str_cap set, a stored string longer than str_cap is not an error:
 * storing stops, the rest is skipped and x->str_cut is set (member names, sample text). */
void lx_scan_string(lx_lexer *x, lx_buf *out);

/* The last number as a NUL-terminated string (copied into x->num when it is a view of
 * the chunk). */
const char *lx_number_cstr(lx_lexer *x);
/* Decimal text (JSON number grammar, NUL-terminated) to double: a mantissa of at most 19
 * significant digits is converted exactly (number.h), anything else by strtod. */
double lx_text_to_double(lx_lexer *x, const char *s, size_t n);

/* Scans the scalar starting with c (the byte at x->p): a string into sout (NULL: skipped),
 * a number into x->nump / x->numn, a literal; returns its LX_ kind. Anything else is an
 * error. */
int lx_scan_scalar(lx_lexer *x, int c, lx_buf *sout);

/* Skips the container whose opening bracket was just consumed. parent_depth is the depth
 * of the value holding it. Iterative with an explicit stack: nesting costs one byte per
 * level, never C stack. */
void lx_skip_container(lx_lexer *x, uint8_t open, unsigned depth);

/* The general cases of lx_expect_colon and lx_next_member (whitespace, chunk ends, errors). */
void lx_expect_colon_slow(lx_lexer *x);
bool lx_next_member_slow(lx_lexer *x, char close);

/* ------------------------------------------------------------------ inline */

static inline uint64_t lx_off(const lx_lexer *x) {
  return x->chunk_off + (uint64_t)(x->p - x->chunk);
}

/* Next byte without consuming it, -1 at the end. */
static inline int lx_peek(lx_lexer *x) {
  if (x->p < x->end || lx_refill(x)) return *x->p;
  return -1;
}

/* Kineto writes one space after ',' and ':' or none: decided here without a loop. */
static inline void lx_skip_ws(lx_lexer *x) {
  const uint8_t *p = x->p;
  /* p < end first: before the first chunk p and end are NULL, and NULL + 1 is undefined */
  if (p < x->end) {
    if (*p > ' ') return;
    if (x->end - p > 1 && *p == ' ' && p[1] > ' ') {
      x->p = p + 1;
      return;
    }
  }
  lx_skip_ws_slow(x);
}

/* Room for extra more bytes plus the NUL; the common case stays inline. */
static inline void lx_buf_reserve(lx_lexer *x, lx_buf *b, size_t extra) {
  if (b->n + extra + 1 > b->cap) lx_buf_grow(x, b, extra);
}

static inline void lx_buf_put(lx_lexer *x, lx_buf *b, const void *s, size_t n) {
  lx_buf_reserve(x, b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static inline void lx_buf_clear(lx_lexer *x, lx_buf *b) {
  b->n = 0;
  lx_buf_reserve(x, b, 0);
  b->p[0] = '\0';
}

/* End of the run of plain bytes (lx_plain) starting at s, or e. SSE2 (baseline on
 * x86-64) tests 16 bytes per step: a byte stops the run if it is the quote, the
 * backslash, or below 0x20 or above 0x7f (one signed compare catches both). */
static inline const uint8_t *lx_plain_end(const uint8_t *s, const uint8_t *e) {
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
  while (s < e && lx_plain[*s]) s++;
  return s;
}

/* First quote or backslash in [s, e), or e: what skipping a string looks for (UTF-8 and
 * control bytes need no check when nothing is stored). */
static inline const uint8_t *lx_quote_or_backslash(const uint8_t *s, const uint8_t *e) {
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

static inline bool lx_is_num_char(int c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static inline bool lx_is_digit(uint8_t c) { return (uint8_t)(c - '0') < 10; }

/* Length of the run of ASCII digits at p (p < e). SSE2 classifies 16 bytes at once: a
 * Kineto timestamp is 13-17 digits, an id 1-10. */
static inline size_t lx_digit_run(const uint8_t *p, const uint8_t *e) {
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
  while (p + n < e && lx_is_digit(p[n])) n++;
  return n;
}

/* The digits of the last number (fast path, num_exact) as one integer: computed only
 * for the numbers that are kept, most (Ev Idx, Python id, ...) are not. */
static inline uint64_t lx_num_mantissa(const lx_lexer *x) {
  const uint8_t *ip = (const uint8_t *)x->nump + x->num_neg;
  uint64_t m = tr_digits_append(0, ip, x->num_int_len);
  return x->num_frac ? tr_digits_append(m, ip + x->num_int_len + 1, x->num_frac) : m;
}

/* Called right after a container's opening bracket is consumed (always from the current
 * chunk, so p - 1 is the bracket): the error points at the bracket. */
static inline void lx_check_depth(lx_lexer *x, unsigned depth) {
  if (depth > TR_MAX_JSON_DEPTH)
    lx_fail_at(x, TR_ERR_LIMIT, lx_off(x) - 1,
               "JSON nested deeper than %u levels (TR_MAX_JSON_DEPTH)",
               (unsigned)TR_MAX_JSON_DEPTH);
}

/* Skips a scalar starting with c (the byte at x->p). Inline for the two that fill the
 * skipped args of a cpu_op (Input type strings, Input Dims integers): a string without
 * escapes and a plain integer, each ending inside the chunk, are stepped over here; the
 * rest go through lx_scan_scalar, which checks and reports what these checks would. */
static inline int lx_skip_scalar(lx_lexer *x, int c) {
  const uint8_t *p = x->p, *e = x->end;
  if (c == '"') {
    const uint8_t *q = lx_quote_or_backslash(p + 1, e);
    if (q < e && *q == '"') {
      x->p = q + 1;
      x->str_cut = false;
      return LX_STRING;
    }
  } else if (lx_is_digit((uint8_t)c)) {
    size_t n = lx_digit_run(p, e);
    if ((n == 1 || c != '0') && (size_t)(e - p) > n && !lx_is_num_char(p[n]) &&
        n <= TR_MAX_NUMBER_CHARS) {
      x->p = p + n;
      return LX_NUMBER_INT;
    }
  }
  return lx_scan_scalar(x, c, NULL);
}

/* Reads one value at depth; strings go to sout (NULL = skip), numbers to x->nump / x->numn,
 * containers are skipped. Leading whitespace must already be skipped. */
static inline int lx_read_value(lx_lexer *x, unsigned depth, lx_buf *sout) {
  int c = lx_peek(x);
  if (c == '{' || c == '[') {
    x->p++;
    lx_skip_container(x, (uint8_t)c, depth);
    return LX_CONTAINER;
  }
  return sout ? lx_scan_scalar(x, c, sout) : lx_skip_scalar(x, c);
}

/* Inline: it runs once per member (a million times on a cpu_op-heavy trace), and the
 * common case is a compare or two. */
static inline void lx_expect_colon(lx_lexer *x) {
  const uint8_t *p = x->p;
  /* Kineto's '": "' and a compact '":"', each decided in one step */
  if (p < x->end && x->end - p > 2 && p[0] == ':' && (p[1] > ' ' || (p[1] == ' ' && p[2] > ' '))) {
    x->p = p + 1 + (p[1] == ' ');
    return;
  }
  lx_expect_colon_slow(x);
}

/* After a member or element: true if another follows, false at the closing bracket.
 * Inline for the common ', ' or ',' (see lx_expect_colon). */
static inline bool lx_next_member(lx_lexer *x, char close) {
  const uint8_t *p = x->p;
  if (p < x->end && x->end - p > 2 && p[0] == ',' && (p[1] > ' ' || (p[1] == ' ' && p[2] > ' '))) {
    x->p = p + 1 + (p[1] == ' '); /* ', ' or ',' then the next token */
    return true;
  }
  return lx_next_member_slow(x, close);
}

#endif
