/* trace/lexer.c - see lexer.h. */
#include "trace/lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/vec.h"

const uint8_t lx_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* ------------------------------------------------------------------ input and errors */

static void describe(int c, char *buf, size_t cap) {
  if (c < 0)
    snprintf(buf, cap, "end of input");
  else if (c >= 0x21 && c < 0x7f)
    snprintf(buf, cap, "'%c'", c);
  else
    snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
}

_Noreturn void lx_fail_at(lx_lexer *x, int code, uint64_t off, const char *fmt, ...) {
  x->err->code = code;
  x->err->has_offset = true;
  x->err->offset = off;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->err->message, sizeof x->err->message, fmt, ap);
  va_end(ap);
  longjmp(x->jb, 1);
}

_Noreturn void lx_nomem(lx_lexer *x) {
  x->err->code = TR_ERR_NOMEM;
  x->err->has_offset = false;
  x->err->offset = 0;
  snprintf(x->err->message, sizeof x->err->message, "out of memory");
  longjmp(x->jb, 1);
}

void lx_progress(lx_lexer *x) {
  if (x->opts && x->opts->progress)
    x->opts->progress(x->opts->progress_ctx, tr_source_consumed(x->src), tr_source_total(x->src));
}

int lx_refill(lx_lexer *x) {
  if (x->eof) return 0;
  x->chunk_off += (uint64_t)(x->end - x->chunk);
  const uint8_t *d;
  size_t n;
  int rc = tr_source_next(x->src, &d, &n, x->err);
  if (rc < 0) longjmp(x->jb, 1);
  if (rc == 0) {
    x->eof = true;
    x->chunk = x->p = x->end;
    x->masks = NULL;
    return 0;
  }
  x->chunk = x->p = d;
  x->end = d + n;
  x->masks = tr_source_masks(x->src);
  if (x->chunk_off >= x->next_progress) {
    x->next_progress = x->chunk_off + LX_PROGRESS_STEP;
    lx_progress(x);
  }
  return 1;
}

_Noreturn void lx_expected(lx_lexer *x, const char *what) {
  char got[32];
  describe(lx_peek(x), got, sizeof got);
  lx_fail_at(x, TR_ERR_JSON, lx_off(x), "expected %s, found %s", what, got);
}

void lx_skip_ws_slow(lx_lexer *x) {
  for (;;) {
#ifdef __SSE2__
    /* pretty-printed traces indent every member ("\n      "): 16 bytes per step */
    while (x->end - x->p >= 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)x->p);
      __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
      unsigned bits = (unsigned)_mm_movemask_epi8(ws);
      if (bits != 0xFFFFu) {
        x->p += __builtin_ctz(~bits);
        return;
      }
      x->p += 16;
    }
#endif
    while (x->p < x->end) {
      uint8_t c = *x->p;
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      x->p++;
    }
    if (!lx_refill(x)) return;
  }
}

void lx_buf_grow(lx_lexer *x, lx_buf *b, size_t extra) {
  if (b->n + extra > TR_MAX_STRING_BYTES)
    lx_fail_at(x, TR_ERR_LIMIT, lx_off(x), "string longer than %u bytes (TR_MAX_STRING_BYTES)",
               (unsigned)TR_MAX_STRING_BYTES);
  char *p = ut_grow(b->p, &b->cap, b->n + extra + 1, 1);
  if (!p) lx_nomem(x);
  b->p = p;
}

void lx_buf_free(lx_buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/* ------------------------------------------------------------------ strings */

static void put_utf8(lx_lexer *x, lx_buf *out, uint32_t cp) {
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
  lx_buf_put(x, out, u, n);
}

static void put_replacement(lx_lexer *x, lx_buf *out) {
  x->utf8_replaced++;
  put_utf8(x, out, 0xFFFD);
}

static int next_byte_in_string(lx_lexer *x) {
  if (x->p < x->end || lx_refill(x)) return *x->p++;
  lx_fail_at(x, TR_ERR_JSON, lx_off(x), "unterminated string (end of input)");
}

static uint32_t read_hex4(lx_lexer *x) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int c = lx_peek(x);
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      lx_expected(x, "4 hex digits after \\u");
    x->p++;
    v = v * 16u + (uint32_t)d;
  }
  return v;
}

/* Handles an escape after its backslash. out NULL = skipping. A high surrogate must be
 * followed by a "\u" low surrogate; a lone half becomes U+FFFD and the escape after it
 * is handled normally. */
static void string_escape(lx_lexer *x, lx_buf *out) {
  uint32_t high = 0;
  int c = next_byte_in_string(x);
  for (;;) {
    if (c != 'u') {
      if (high && out) put_replacement(x, out);
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
          x->p--; /* point at the bad escape character */
          lx_fail_at(x, TR_ERR_JSON, lx_off(x), "invalid escape in string");
      }
      if (out) lx_buf_put(x, out, &lit, 1);
      return;
    }
    uint32_t cp = read_hex4(x);
    if (high) {
      if (cp >= 0xDC00 && cp <= 0xDFFF) {
        if (out) put_utf8(x, out, 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00));
        return;
      }
      if (out) put_replacement(x, out);
      high = 0;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      high = cp;
      if (lx_peek(x) != '\\') {
        if (out) put_replacement(x, out);
        return;
      }
      x->p++;
      c = next_byte_in_string(x);
      continue;
    }
    if (out) {
      if (cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
        put_replacement(x, out);
      else
        put_utf8(x, out, cp);
    }
    return;
  }
}

/* One invalid or truncated UTF-8 sequence after its lead byte becomes one U+FFFD (the
 * maximal-subpart rule); the byte that broke it is left for the next round. */
static void string_utf8(lx_lexer *x, lx_buf *out, uint8_t lead) {
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
    put_replacement(x, out);
    return;
  }
  char buf[4];
  int n = 0;
  buf[n++] = (char)lead;
  for (int i = 0; i < need; i++) {
    int c = lx_peek(x);
    if (c < lo || c > hi) {
      put_replacement(x, out);
      return;
    }
    x->p++;
    buf[n++] = (char)c;
    lo = 0x80;
    hi = 0xBF;
  }
  lx_buf_put(x, out, buf, (size_t)n);
}

/* Stores a run of plain bytes, or stops storing once x->str_cap is passed. Returns the
 * buffer to go on with (NULL = skip the rest). */
static lx_buf *store_run(lx_lexer *x, lx_buf *out, const uint8_t *s, size_t run) {
  if (x->str_cap && out->n + run > x->str_cap) {
    x->str_cut = true;
    return NULL;
  }
  lx_buf_put(x, out, s, run);
  return out;
}

void lx_scan_string(lx_lexer *x, lx_buf *out) {
  x->str_cut = false;
  if (out) lx_buf_clear(x, out);
  for (;;) {
    const uint8_t *s = out ? lx_plain_end(x->p, x->end) : lx_quote_or_backslash(x->p, x->end);
    size_t run = (size_t)(s - x->p);
    if (run) {
      if (out) out = store_run(x, out, x->p, run);
      x->p = s;
      if (x->str_cut && !out) continue; /* s may be a byte only the storing path handles */
    }
    if (s == x->end) {
      if (!lx_refill(x))
        lx_fail_at(x, TR_ERR_JSON, lx_off(x), "unterminated string (end of input)");
      continue;
    }
    uint8_t c = *x->p++;
    if (c == '"') return;
    if (c == '\\') {
      string_escape(x, out);
    } else if (c < 0x80) {
      /* only reached when storing: controls pass through (Kineto writes raw tabs), except
       * NUL, which would cut the C string */
      if (c == 0) {
        put_replacement(x, out);
      } else {
        char ch = (char)c;
        lx_buf_put(x, out, &ch, 1);
      }
    } else {
      string_utf8(x, out, c);
    }
    if (out && x->str_cap && out->n > x->str_cap) {
      x->str_cut = true;
      out = NULL;
    }
  }
}

/* ------------------------------------------------------------------ numbers */

/* The slow path of scan_number: a number running to the chunk's end is gathered across
 * chunks into x->num (NUL-terminated). Returns its text. */
static const char *scan_number_slow(lx_lexer *x, uint64_t start) {
  lx_buf *b = &x->num;
  b->n = 0;
  for (;;) {
    const uint8_t *s = x->p, *e = x->end;
    while (s < e && lx_is_num_char(*s)) s++;
    if (s > x->p) {
      if (b->n + (size_t)(s - x->p) > TR_MAX_NUMBER_CHARS)
        lx_fail_at(x, TR_ERR_LIMIT, start, "number longer than %u characters (TR_MAX_NUMBER_CHARS)",
                   (unsigned)TR_MAX_NUMBER_CHARS);
      lx_buf_put(x, b, x->p, (size_t)(s - x->p));
      x->p = s;
    }
    if (s < e || !lx_refill(x)) break;
  }
  lx_buf_reserve(x, b, 0);
  b->p[b->n] = '\0';
  return b->p;
}

/* The fast path of scan_number: one pass over the JSON number grammar inside the chunk
 * that also gathers the decimal mantissa, so converting it later needs no second pass.
 * x->num_exact says the value is exactly lx_num_mantissa / 10^num_frac (negated with num_neg):
 * no exponent and at most 19 significant digits. false (nothing consumed) for anything
 * unusual: a number running to the chunk's end, bad grammar, over-long text. */
static inline bool scan_number_fast(lx_lexer *x, bool *is_int) {
  const uint8_t *q = x->p, *e = x->end;
  bool neg = q < e && *q == '-';
  q += neg;
  if (q == e) return false;
  const uint8_t *ip = q, *fp = q;
  size_t ni = lx_digit_run(q, e), nf = 0;
  if (ni == 0 || (ni > 1 && *ip == '0')) return false; /* no digit, or a leading zero */
  q += ni;
  *is_int = true;
  if (q < e && *q == '.') {
    *is_int = false;
    fp = ++q;
    if (q == e || (nf = lx_digit_run(q, e)) == 0) return false;
    q += nf;
  }
  bool exact = true;
  if (q < e && (*q == 'e' || *q == 'E')) {
    *is_int = false;
    exact = false;
    q++;
    if (q < e && (*q == '+' || *q == '-')) q++;
    size_t ne = q < e ? lx_digit_run(q, e) : 0;
    if (ne == 0) return false;
    q += ne;
  }
  if (q == e || lx_is_num_char(*q) || (size_t)(q - x->p) > TR_MAX_NUMBER_CHARS) return false;
  /* significant digits: all of them, less the zeros that lead 0.000123 */
  size_t lead = 0;
  if (*ip == '0')
    while (lead < nf && fp[lead] == '0') lead++;
  size_t sig = (*ip == '0' ? 0 : ni) + nf - lead;
  x->num_exact = exact && sig <= 19;
  x->num_int_len = (unsigned)ni;
  x->num_frac = (unsigned)nf;
  x->num_neg = neg;
  x->nump = (const char *)x->p;
  x->numn = (size_t)(q - x->p);
  x->p = q;
  return true;
}

/* Scans a number, leaves its text in x->nump / x->numn and checks the JSON grammar.
 * Returns true for an integer (no fraction, no exponent). A number that ends inside the
 * current chunk (all but the rare one crossing a chunk boundary) is checked in place
 * instead of being copied first. */
static bool scan_number(lx_lexer *x) {
  bool fast_int;
  if (scan_number_fast(x, &fast_int)) return fast_int;
  /* the general path finds the same number and reports errors */
  x->num_exact = false;
  uint64_t start = lx_off(x);
  const char *t;
  size_t n;
  const uint8_t *q = x->p;
  while (q < x->end && lx_is_num_char(*q)) q++;
  if (q < x->end) {
    n = (size_t)(q - x->p);
    if (n > TR_MAX_NUMBER_CHARS)
      lx_fail_at(x, TR_ERR_LIMIT, start, "number longer than %u characters (TR_MAX_NUMBER_CHARS)",
                 (unsigned)TR_MAX_NUMBER_CHARS);
    t = (const char *)x->p;
    x->p = q;
  } else {
    t = scan_number_slow(x, start);
    n = x->num.n;
  }
  x->nump = t;
  x->numn = n;
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
  lx_fail_at(x, TR_ERR_JSON, start, "invalid number '%.*s'", (int)(n < 40 ? n : 40), t);
}

static void scan_literal(lx_lexer *x, const char *word) {
  uint64_t start = lx_off(x);
  for (const char *w = word; *w; w++) {
    if (lx_peek(x) != *w)
      lx_fail_at(x, TR_ERR_JSON, start, "invalid literal (expected '%s')", word);
    x->p++;
  }
}

const char *lx_number_cstr(lx_lexer *x) {
  if (x->nump != x->num.p) {
    lx_buf_clear(x, &x->num);
    lx_buf_put(x, &x->num, x->nump, x->numn);
    x->nump = x->num.p;
  }
  return x->num.p;
}

double lx_text_to_double(lx_lexer *x, const char *s, size_t n) {
  double d;
  if (x->num_exact && s == x->nump &&
      tr_decimal_to_double(lx_num_mantissa(x), x->num_frac, x->num_neg, &d))
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
  return strtod(lx_number_cstr(x), NULL);
}

/* ------------------------------------------------------------------ values */

int lx_scan_scalar(lx_lexer *x, int c, lx_buf *sout) {
  switch (c) {
    case '"':
      x->p++;
      lx_scan_string(x, sout);
      return LX_STRING;
    case 't':
      scan_literal(x, "true");
      return LX_TRUE;
    case 'f':
      scan_literal(x, "false");
      return LX_FALSE;
    case 'n':
      scan_literal(x, "null");
      return LX_NULL;
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return scan_number(x) ? LX_NUMBER_INT : LX_NUMBER_FLOAT;
      lx_expected(x, "a JSON value");
  }
}

void lx_skip_container(lx_lexer *x, uint8_t open, unsigned depth) {
  uint8_t stack[TR_MAX_JSON_DEPTH + 1];
  size_t sp = 0;
  lx_check_depth(x, depth);
  stack[sp++] = open;
  bool first = true;
  for (;;) {
    lx_skip_ws(x);
    int c = lx_peek(x);
    uint8_t top = stack[sp - 1];
    if (first && c == (top == '{' ? '}' : ']')) {
      x->p++;
      goto closed;
    }
    if (top == '{') {
      if (c != '"') lx_expected(x, first ? "a member name or '}'" : "a member name");
      x->p++;
      lx_scan_string(x, NULL);
      lx_skip_ws(x);
      if (lx_peek(x) != ':') lx_expected(x, "':' after member name");
      x->p++;
      lx_skip_ws(x);
      c = lx_peek(x);
    }
    if (c == '{' || c == '[') {
      x->p++;
      lx_check_depth(x, depth + sp);
      stack[sp++] = (uint8_t)c;
      first = true;
      continue;
    }
    lx_skip_scalar(x, c);
    for (;;) { /* after a value */
      lx_skip_ws(x);
      c = lx_peek(x);
      top = stack[sp - 1];
      if (c == ',') {
        x->p++;
        first = false;
        break;
      }
      if (c != (top == '{' ? '}' : ']')) lx_expected(x, top == '{' ? "',' or '}'" : "',' or ']'");
      x->p++;
    closed:
      if (--sp == 0) return;
    }
  }
}

void lx_expect_colon_slow(lx_lexer *x) {
  lx_skip_ws(x);
  if (lx_peek(x) != ':') lx_expected(x, "':' after member name");
  x->p++;
  lx_skip_ws(x);
}

bool lx_next_member_slow(lx_lexer *x, char close) {
  lx_skip_ws(x);
  int c = lx_peek(x);
  if (c == ',') {
    x->p++;
    lx_skip_ws(x);
    return true;
  }
  if (c == close) {
    x->p++;
    return false;
  }
  lx_expected(x, close == '}' ? "',' or '}'" : "',' or ']'");
}
