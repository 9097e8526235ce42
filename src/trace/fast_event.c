/* trace/fast_event.c - see fast_event.h.
 *
 * Speed comes from three things: the cursor (a block's offset and its token bits) stays
 * in registers, because everything on the way of a common event is inlined into
 * fe_parse_event and the out-of-line helpers get a copy of it; the common values are
 * decided in a few instructions (a key by its length and bytes, an integer of up to 8
 * digits by one 8-byte test, a string by the special bits of its blocks); and a value
 * nobody keeps is only checked, never converted. */
#include "trace/fast_event.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "trace/keys.h"
#include "trace/number.h"
#include "trace/trace.h"

#define HOT static inline __attribute__((always_inline))
#define COLD static __attribute__((noinline))

/* Every step that meets something the fast path does not take gives up the event. */
#define TRY(x)              \
  do {                      \
    if (!(x)) return false; \
  } while (0)

enum { T_STRING, T_INT, T_FLOAT, T_TRUE, T_FALSE, T_NULL, T_CONTAINER };

/* ------------------------------------------------------------------ tokens */

/* Where a kept container's compact JSON is written (fe_chunk.scratch). */
typedef struct fe_out {
  char *p;
  size_t n, cap;
} fe_out;

/* Where the value of a member read token by token lies: its first token (at), the token
 * after it (after), and which member it is (key, in args or not): what a shape is made
 * of (see shapes below). */
typedef struct fe_hole {
  uint32_t at, after;
  uint8_t key, in_args;
} fe_hole;

typedef struct fe_rec {
  fe_hole h[FE_SHAPE_HOLES];
  unsigned n;
  bool full; /* more values than a shape holds: none is made */
} fe_rec;

/* A kept container found to be compact JSON (memo_find): its text, n bytes (0: none), the
 * id the reader gave that text (fe_memo_id; 0: none yet), and how many texts the slot has
 * taken (gen). A text's bytes decide what a walk over it finds (its tokens are those of its
 * bytes, the index having been outside any string at its first), so a container whose
 * bytes are these is that text. */
typedef struct memo_slot {
  uint8_t n;
  char text[FE_MEMO_TEXT + 1]; /* lit_eq reads 8 bytes of a text shorter than 8 */
  uint32_t id, gen;
} memo_slot;

#define MEMO_BITS 10
_Static_assert(FE_MEMO_SLOTS == 1u << MEMO_BITS, "a slot per value of the hash's top bits");
_Static_assert(FE_MEMO_TEXT <= UINT8_MAX && FE_MEMO_TEXT + 1 >= 8, "memo_slot.n, lit_eq");

/* A cursor over the tokens of one chunk: the block at base and its tokens not consumed;
 * where kept containers are written; where values are noted (NULL: not noted); the kept
 * containers remembered (NULL: none). */
typedef struct cur {
  const uint8_t *buf;
  const tr_block_masks *m;
  size_t len, base;
  uint64_t bits;
  fe_out *out;
  fe_rec *rec;
  memo_slot *memo;
} cur;

/* The next token, consumed; false at the chunk's end. */
HOT bool next(cur *c, size_t *pos) {
  while (__builtin_expect(!c->bits, 0)) {
    c->base += TR_BLOCK;
    if (c->base >= c->len) return false;
    c->bits = c->m[c->base / TR_BLOCK].tok;
  }
  *pos = c->base + (size_t)__builtin_ctzll(c->bits);
  c->bits &= c->bits - 1;
  return true;
}

/* Puts the cursor on the tokens from offset p on (none when p is the chunk's end: the
 * masks stop at its last block, and may hold another chunk's bits past it). */
HOT void seek(cur *c, size_t p) {
  c->base = p - p % TR_BLOCK;
  c->bits = p < c->len ? c->m[p / TR_BLOCK].tok & (~0ull << (p % TR_BLOCK)) : 0;
}

/* The next token, not consumed; the chunk's length when there is none. */
HOT size_t peek(cur *c) {
  while (__builtin_expect(!c->bits, 0)) {
    if (c->base + TR_BLOCK >= c->len) return c->len;
    c->base += TR_BLOCK;
    c->bits = c->m[c->base / TR_BLOCK].tok;
  }
  return c->base + (size_t)__builtin_ctzll(c->bits);
}

/* Whether a byte of [a, b) is special (structural.h). */
COLD bool special_in(const tr_block_masks *m, size_t a, size_t b) {
  if (a >= b) return false;
  size_t first = a / TR_BLOCK, last = (b - 1) / TR_BLOCK;
  uint64_t lo = ~0ull << (a % TR_BLOCK), hi = ~0ull >> (TR_BLOCK - 1 - (b - 1) % TR_BLOCK);
  if (first == last) return (m[first].special & lo & hi) != 0;
  if (m[first].special & lo) return true;
  for (size_t i = first + 1; i < last; i++)
    if (m[i].special) return true;
  return (m[last].special & hi) != 0;
}

/* The text between the quotes at open and close holds no special byte. Most blocks hold
 * none at all, which decides it at once. */
HOT bool plain(const cur *c, size_t open, size_t close) {
  size_t a = open / TR_BLOCK, b = close / TR_BLOCK;
  if (b - a <= 1 && !(c->m[a].special | c->m[b].special)) return true;
  return !special_in(c->m, open + 1, close);
}

HOT bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
HOT bool is_digit(uint8_t c) { return (uint8_t)(c - '0') < 10; }

#ifdef __SSE2__
/* Whether the 16 bytes at a and b are the same. */
HOT bool same16(const uint8_t *a, const char *b) {
  __m128i x = _mm_loadu_si128((const __m128i *)(const void *)a);
  __m128i y = _mm_loadu_si128((const __m128i *)(const void *)b);
  return _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) == 0xFFFF;
}
#endif

/* Whether the 8 bytes at a and b differ. */
HOT uint64_t diff8(const uint8_t *a, const char *b) {
  uint64_t x, y;
  memcpy(&x, a, 8);
  memcpy(&y, b, 8);
  return x ^ y;
}

/* Whether the n bytes at a, of which room can be read, are lit's (which can be read 8
 * bytes past n): 8 bytes per compare (16 with SSE2), the last ones overlapping or masked;
 * up to 16 bytes (most member names with their punctuation) in two compares without a
 * loop, up to 32 (", \"args\": {\"Python parent id\": ") likewise with SSE2. */
HOT bool lit_eq(const uint8_t *a, size_t room, const char *lit, size_t n) {
  if (n >= 8) {
    if (n <= 16) return !(diff8(a, lit) | diff8(a + n - 8, lit + n - 8));
#ifdef __SSE2__
    if (n <= 32) return (int)same16(a, lit) & (int)same16(a + n - 16, lit + n - 16);
    for (size_t i = 0; i + 16 < n; i += 16)
      if (!same16(a + i, lit + i)) return false;
    return same16(a + n - 16, lit + n - 16);
#endif
    for (size_t i = 0; i + 8 < n; i += 8)
      if (diff8(a + i, lit + i)) return false;
    return !diff8(a + n - 8, lit + n - 8);
  }
  uint64_t x, y;
#ifdef TR_NUMBER_SWAR
  if (room >= 8) {
    memcpy(&x, a, 8);
    memcpy(&y, lit, 8);
    return ((x ^ y) & ((1ull << (8 * n)) - 1)) == 0;
  }
#endif
  (void)room;
  return memcmp(a, lit, n) == 0;
}

/* The slot of the container whose first byte is at t: a hash of the FE_MEMO_WINDOW bytes
 * from there, which may go past its end (the same text followed otherwise takes another
 * slot, no more); NULL near the chunk's end. */
HOT memo_slot *memo_at(const cur *c, size_t t) {
  if (!c->memo || c->len - t < FE_MEMO_WINDOW) return NULL;
  uint64_t w[FE_MEMO_WINDOW / 8];
  memcpy(w, c->buf + t, sizeof w);
  uint64_t h = w[0] * 0x9E3779B97F4A7C15ull;
  for (unsigned i = 1; i < FE_MEMO_WINDOW / 8; i++) h = (h ^ w[i]) * 0xFF51AFD7ED558CCDull;
  return &c->memo[h >> (64 - MEMO_BITS)];
}

/* The slot and the text it holds now, as fe_event.arg_memo notes them. */
HOT fe_memo memo_ref(const cur *c, const memo_slot *m) {
  return (fe_memo){(uint16_t)(m - c->memo + 1), m->gen};
}

/* The container at the token t when its bytes are the remembered text of its slot: *text
 * its bytes, the cursor past it, as walk_container in WALK_CANON would leave them, and *ref
 * the slot (ref->slot 0: not remembered). */
HOT bool memo_find(cur *c, size_t t, fe_text *text, fe_memo *ref) {
  const memo_slot *m = memo_at(c, t);
  if (!m || !m->n || c->len - t < m->n || !lit_eq(c->buf + t, c->len - t, m->text, m->n))
    return false;
  *text = (fe_text){(const char *)c->buf + t, m->n};
  seek(c, t + m->n);
  *ref = memo_ref(c, m);
  return true;
}

/* Remembers the container of n bytes at t, just found to be compact JSON, in the slot
 * *ref then notes (ref->slot 0: not remembered). */
HOT void memo_put(const cur *c, size_t t, size_t n, fe_memo *ref) {
  memo_slot *m = n <= FE_MEMO_TEXT ? memo_at(c, t) : NULL;
  if (!m) return;
  m->n = (uint8_t)n;
  memcpy(m->text, c->buf + t, n);
  m->id = 0;
  m->gen++;
  *ref = memo_ref(c, m);
}

/* ------------------------------------------------------------------ strings */

/* The closing quote of the string whose opening quote is the token at open: the next
 * token. */
HOT bool string_end(cur *c, size_t open, size_t *close) {
  (void)open;
  return next(c, close) && c->buf[*close] == '"';
}

static bool is_hex(uint8_t c) { return is_digit(c) || (uint8_t)((c | 0x20) - 'a') < 6; }

/* Whether each backslash of [p, e) starts an escape JSON allows: all the byte scanner
 * checks in a string it skips (UTF-8 and control bytes are not looked at). */
COLD bool escapes_valid(const uint8_t *p, const uint8_t *e) {
  while ((p = memchr(p, '\\', (size_t)(e - p))) != NULL) {
    if (++p == e) return false;
    switch (*p) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        p++;
        break;
      case 'u':
        TRY(e - p > 4 && is_hex(p[1]) && is_hex(p[2]) && is_hex(p[3]) && is_hex(p[4]));
        p += 5;
        break;
      default:
        return false;
    }
  }
  return true;
}

HOT bool skip_string(cur *c, size_t open) {
  size_t close;
  TRY(string_end(c, open, &close));
  return plain(c, open, close) || escapes_valid(c->buf + open + 1, c->buf + close);
}

/* A string the reader stores: plain printable ASCII (escapes and UTF-8 are decoded and
 * repaired by the byte scanner) and of a bounded length. */
HOT bool kept_string(cur *c, size_t open, fe_text *s) {
  size_t close;
  TRY(string_end(c, open, &close) && plain(c, open, close));
  s->p = (const char *)c->buf + open + 1;
  s->n = close - open - 1;
  return s->n <= FE_MAX_KEPT_STRING;
}

/* ------------------------------------------------------------------ numbers */

typedef struct num {
  fe_text text;
  const uint8_t *ip, *fp; /* the integer and fraction digits */
  size_t ni, nf;
  bool neg, is_int, exact; /* exact: no exponent, at most 19 significant digits */
  uint64_t m;              /* shape_number: the digits' value, when exact */
} num;

HOT size_t digit_run(const uint8_t *p, const uint8_t *e) {
  const uint8_t *s = p;
  while (e - p >= 8) {
    unsigned k = tr_digits_in8(p);
    p += k;
    if (k < 8) return (size_t)(p - s);
  }
  while (p < e && is_digit(*p)) p++;
  return (size_t)(p - s);
}

/* digit_run, with *m followed by the digits counted, each word converted as it is counted
 * (the value is the caller's only for at most 19 significant digits: past them it wraps). */
HOT size_t digit_run_value(const uint8_t *p, const uint8_t *e, uint64_t *m) {
  const uint8_t *s = p;
#ifdef TR_NUMBER_SWAR
  while (e - p >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    unsigned k = tr_digits_in_word(v);
    if (k < 8) {
      if (k) *m = tr_digits_append_low(*m, v, k);
      return (size_t)(p + k - s);
    }
    *m = *m * 100000000ull + tr_eight_digits_value(v);
    p += 8;
  }
#endif
  for (; p < e && is_digit(*p); p++) *m = *m * 10 + (uint64_t)(*p - '0');
  return (size_t)(p - s);
}

/* tr_digits_append, a word at a time to the last digit when the chunk lets it read so far. */
HOT uint64_t digits_value(const cur *c, uint64_t m, const uint8_t *p, size_t n) {
  if ((size_t)(c->buf + c->len - (p + (n & ~(size_t)7))) >= 8)
    return tr_digits_append_wide(m, p, n);
  return tr_digits_append(m, p, n);
}

/* [a, lim) is exactly an integer of 1 to 8 digits without a leading zero: the ids and
 * indexes most args hold. One 8-byte test (the bytes past the number read as '0'). */
HOT bool short_int(const cur *c, size_t a, size_t lim) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  size_t n = lim - a;
  if (n - 1 >= 8 || c->len - a < 8 || (c->buf[a] == '0' && n > 1)) return false;
  uint64_t v, keep = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
  memcpy(&v, c->buf + a, 8);
  v = (v & keep) | (0x3030303030303030ull & ~keep);
  uint8_t eight[8];
  memcpy(eight, &v, 8);
  return tr_eight_digits(eight);
#else
  (void)c, (void)a, (void)lim;
  return false;
#endif
}

/* The number in JSON's grammar that starts at a, read no further than lim: its text ends
 * at the first byte that cannot continue it. */
COLD bool number_scan(const cur *c, size_t a, size_t lim, num *out) {
  const uint8_t *p = c->buf + a, *e = c->buf + lim;
  bool neg = *p == '-';
  p += neg;
  TRY(p < e && is_digit(*p));
  const uint8_t *ip = p, *fp = p;
  size_t ni = *p == '0' ? 1 : digit_run(p, e), nf = 0;
  p += ni;
  bool is_int = true, exact = true;
  if (p < e && *p == '.') {
    is_int = false;
    fp = ++p;
    nf = digit_run(p, e);
    TRY(nf > 0);
    p += nf;
  }
  if (p < e && (*p | 0x20) == 'e') {
    is_int = exact = false;
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    size_t ne = digit_run(p, e);
    TRY(ne > 0);
    p += ne;
  }
  size_t len = (size_t)(p - (c->buf + a));
  TRY(len <= TR_MAX_NUMBER_CHARS);
  size_t lead = 0; /* the zeros that lead 0.000123 are not significant */
  if (*ip == '0')
    while (lead < nf && fp[lead] == '0') lead++;
  size_t sig = (*ip == '0' ? 0 : ni) + nf - lead;
  *out = (num){{(const char *)c->buf + a, len},       ip, fp, ni, nf, neg, is_int,
               exact && sig <= TR_DECIMAL_MAX_DIGITS, 0};
  return true;
}

/* The number that starts at the token a and ends before lim, the next token: JSON's
 * grammar, then nothing but whitespace. */
HOT bool number_at(const cur *c, size_t a, size_t lim, num *out) {
  TRY(number_scan(c, a, lim, out));
  size_t e = a + out->text.n;
  return e == lim || is_ws(c->buf[e]);
}

/* A time as Kineto writes it: digits, then perhaps a point and digits, ending right at
 * lim, at most 19 digits in all; its double from one pass. false: number_at decides. */
HOT bool plain_decimal(const cur *c, size_t a, size_t lim, double *out) {
  const uint8_t *p = c->buf + a, *e = c->buf + lim, *ip = p, *fp;
  if (*p == '0')
    p++;
  else
    p += digit_run(p, e);
  size_t ni = (size_t)(p - ip), nf = 0;
  fp = p;
  if (p < e && *p == '.') {
    fp = ++p;
    nf = digit_run(p, e);
    p += nf;
    if (nf == 0) return false;
  }
  if (p != e || ni == 0 || ni + nf > TR_DECIMAL_MAX_DIGITS) return false;
  return tr_decimal_to_double(digits_value(c, digits_value(c, 0, ip, ni), fp, nf), (unsigned)nf,
                              false, out);
}

static uint64_t mantissa(const num *n) {
  return tr_digits_append(tr_digits_append(0, n->ip, n->ni), n->fp, n->nf);
}

/* The number's double, as lexer.c's lx_text_to_double makes it. */
static bool number_double(const num *n, double *out) {
  if (n->exact && tr_decimal_to_double(mantissa(n), (unsigned)n->nf, n->neg, out)) return true;
  char text[64];
  TRY(n->text.n < sizeof text);
  memcpy(text, n->text.p, n->text.n);
  text[n->text.n] = '\0';
  *out = strtod(text, NULL);
  return true;
}

static bool literal_at(const cur *c, size_t a, size_t lim, int *type) {
  static const char *const words[] = {"true", "false", "null"};
  static const int types[] = {T_TRUE, T_FALSE, T_NULL};
  const uint8_t *p = c->buf + a;
  size_t room = lim - a;
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if (room < n || memcmp(p, words[i], n) != 0) continue;
    TRY(room == n || is_ws(p[n]));
    *type = types[i];
    return true;
  }
  return false;
}

/* ------------------------------------------------------------------ values */

typedef struct val {
  int type;
  fe_text s; /* T_STRING */
  num n;     /* T_INT, T_FLOAT */
} val;

static bool skip_container(cur *c, size_t open);

/* A scalar that is no string at the token t: a number or a literal. */
COLD bool scalar_at(cur *c, size_t t, val *v) {
  size_t lim = peek(c);
  uint8_t ch = c->buf[t];
  if (ch == '-' || is_digit(ch)) {
    TRY(number_at(c, t, lim, &v->n));
    v->type = v->n.is_int ? T_INT : T_FLOAT;
    return true;
  }
  return literal_at(c, t, lim, &v->type);
}

/* The value whose first token is t, out of line; kept: a string is stored. The caller's
 * cursor is copied in and out, so its own stays in registers. */
COLD bool value_slow(cur *c, size_t t, bool kept, val *v) {
  uint8_t ch = c->buf[t];
  if (ch == '"') {
    v->type = T_STRING;
    return kept ? kept_string(c, t, &v->s) : skip_string(c, t);
  }
  if (ch == '{' || ch == '[') {
    v->type = T_CONTAINER;
    return skip_container(c, t);
  }
  return scalar_at(c, t, v);
}

HOT bool value_at(cur *c, size_t t, bool kept, val *v) {
  cur copy = *c;
  bool ok = value_slow(&copy, t, kept, v);
  *c = copy;
  return ok;
}

/* Checks and steps over a value nobody keeps: a plain string or a short integer here,
 * anything else out of line. */
HOT bool skip_value(cur *c, size_t t) {
  uint8_t ch = c->buf[t];
  if (ch == '"') {
    size_t close;
    TRY(string_end(c, t, &close));
    if (plain(c, t, close)) return true;
    return escapes_valid(c->buf + t + 1, c->buf + close);
  }
  if (is_digit(ch) && short_int(c, t, peek(c))) return true;
  val v;
  return value_at(c, t, false, &v);
}

/* After a member name's token at t: the name (plain), the colon, and *value the token
 * that starts the value. */
HOT bool member_key(cur *c, size_t t, int *key, size_t *value, fe_text *name) {
  size_t close, colon;
  TRY(c->buf[t] == '"' && string_end(c, t, &close) && plain(c, t, close));
  *name = (fe_text){(const char *)c->buf + t + 1, close - t - 1};
  *key = key_code(name->p, name->n);
  TRY(next(c, &colon) && c->buf[colon] == ':');
  return next(c, value);
}

/* After a member or an element: 1 with *t the next one's first token, 0 with *t the
 * closing bracket close, -1 for anything else. */
HOT int next_item(cur *c, uint8_t close, size_t *t) {
  if (!next(c, t)) return -1;
  if (c->buf[*t] == ',') return next(c, t) ? 1 : -1;
  return c->buf[*t] == close ? 0 : -1;
}

/* A container is walked to skip it (WALK_SKIP), to take its text as it is in the file
 * when that is already the compact JSON a kept arg stores (WALK_CANON), or to write that
 * text to the cursor's fe_out (WALK_BUILD). */
enum { WALK_SKIP, WALK_CANON, WALK_BUILD };

HOT bool emit(fe_out *o, const void *s, size_t n) {
  TRY(o->n + n <= o->cap);
  memcpy(o->p + o->n, s, n);
  o->n += n;
  return true;
}

/* A bracket, comma or colon into the built text, with json.dumps's separators. */
HOT bool emit_mark(fe_out *o, uint8_t ch) {
  if (ch == ',') return emit(o, ", ", 2);
  if (ch == ':') return emit(o, ": ", 2);
  return emit(o, &ch, 1);
}

/* With WALK_CANON, whether the tokens a then b of a container leave the text as json.dumps
 * writes it: one space after ',' and ':', no other whitespace. (a is never an opening
 * quote: a string is stepped over whole.) */
HOT bool canon_gap(const cur *c, size_t a, size_t b) {
  uint8_t ch = c->buf[a];
  if (ch == ',' || ch == ':') return b == a + 2 && c->buf[a + 1] == ' ';
  if (ch == '"' || ch == '{' || ch == '[' || ch == '}' || ch == ']') return b == a + 1;
  return !is_ws(c->buf[b - 1]); /* a scalar ends right at the next token */
}

/* The next token of a container walk into *t: with WALK_CANON checked against the last
 * one, with WALK_BUILD written when it is a bracket, comma or colon (strings and scalars
 * are written whole by their own steps). */
HOT bool walk_next(cur *c, size_t *t, size_t *last, int mode) {
  TRY(next(c, t) && (mode != WALK_CANON || canon_gap(c, *last, *t)));
  *last = *t;
  uint8_t ch = c->buf[*t];
  if (mode == WALK_BUILD &&
      (ch == ',' || ch == ':' || ch == '{' || ch == '}' || ch == '[' || ch == ']'))
    return emit_mark(c->out, ch);
  return true;
}

/* After a member or an element of a walk: 1 with *t the next one's first token, 0 with
 * *t the closing bracket close, -1 for anything else. */
HOT int walk_item(cur *c, uint8_t close, size_t *t, size_t *last, int mode) {
  if (!walk_next(c, t, last, mode)) return -1;
  if (c->buf[*t] == ',') return walk_next(c, t, last, mode) ? 1 : -1;
  return c->buf[*t] == close ? 0 : -1;
}

/* A string in a walk, its opening quote the token t: kept whole (plain: its text is its
 * JSON) unless skipping, where valid escapes do. */
HOT bool walk_string(cur *c, size_t t, size_t *last, int mode) {
  size_t close;
  TRY(string_end(c, t, &close));
  *last = close;
  if (plain(c, t, close)) return mode != WALK_BUILD || emit(c->out, c->buf + t, close - t + 1);
  return mode == WALK_SKIP && escapes_valid(c->buf + t + 1, c->buf + close);
}

/* A scalar in a walk: checked, and written as the file has it (WALK_BUILD). A short
 * integer right before the next token (the sizes of Input Dims) takes one word test. */
HOT bool walk_scalar(cur *c, size_t t, int mode) {
  if (is_digit(c->buf[t])) {
    size_t lim = peek(c);
    if (short_int(c, t, lim)) return mode != WALK_BUILD || emit(c->out, c->buf + t, lim - t);
  }
  val v;
  TRY(scalar_at(c, t, &v));
  if (mode != WALK_BUILD) return true;
  if (v.type == T_INT || v.type == T_FLOAT) return emit(c->out, v.n.text.p, v.n.text.n);
  if (v.type == T_TRUE) return emit(c->out, "true", 4);
  return v.type == T_FALSE ? emit(c->out, "false", 5) : emit(c->out, "null", 4);
}

/* Walks the container whose opening bracket is the token at open, checking it as the
 * byte scanner's skip_container does, in a mode (see WALK_SKIP); *end: its closing
 * bracket. The open containers are bits of a word (1 = an object). */
static bool walk_container(cur *c, size_t open, int mode, size_t *end) {
  uint64_t objs = c->buf[open] == '{';
  unsigned depth = 1;
  size_t t, last = open;
  if (mode == WALK_BUILD) TRY(emit_mark(c->out, c->buf[open]));
  TRY(walk_next(c, &t, &last, mode));
  bool empty = c->buf[t] == ((objs & 1) ? '}' : ']');
  for (;;) {
    if (!empty) {
      if (objs & 1) {
        TRY(c->buf[t] == '"' && walk_string(c, t, &last, mode));
        TRY(walk_next(c, &t, &last, mode) && c->buf[t] == ':');
        TRY(walk_next(c, &t, &last, mode));
      }
      uint8_t ch = c->buf[t];
      if (ch == '{' || ch == '[') {
        TRY(depth < FE_MAX_DEPTH);
        objs = objs << 1 | (ch == '{');
        depth++;
        TRY(walk_next(c, &t, &last, mode));
        empty = c->buf[t] == ((objs & 1) ? '}' : ']');
        continue;
      }
      TRY(ch == '"' ? walk_string(c, t, &last, mode) : walk_scalar(c, t, mode));
      int more = walk_item(c, (objs & 1) ? '}' : ']', &t, &last, mode);
      TRY(more >= 0);
      if (more) continue;
    }
    /* t closes the innermost container; close the ones it ends */
    for (;;) {
      objs >>= 1;
      if (--depth == 0) {
        *end = t;
        return true;
      }
      int more = walk_item(c, (objs & 1) ? '}' : ']', &t, &last, mode);
      TRY(more >= 0);
      if (more) break;
    }
    empty = false;
  }
}

/* A container nobody keeps (a kernel's grid and block): remembered as a kept one is when
 * it is compact JSON, which a skip accepts too; walked to skip it otherwise. */
static bool skip_container(cur *c, size_t open) {
  size_t end;
  fe_text text;
  fe_memo ref;
  if (memo_find(c, open, &text, &ref)) return true;
  cur copy = *c;
  if (walk_container(&copy, open, WALK_CANON, &end)) {
    *c = copy;
    memo_put(c, open, end - open + 1, &ref);
    return true;
  }
  return walk_container(c, open, WALK_SKIP, &end);
}

/* ------------------------------------------------------------------ event members */

/* pid, tid, stream: a string as it is, a number as its text (Python prints the integer
 * -0 as 0); *has = false for anything else. */
HOT bool read_textual(cur *c, size_t t, fe_text *out, bool *has) {
  *has = true;
  if (c->buf[t] == '"') return kept_string(c, t, out);
  size_t lim = peek(c);
  if (short_int(c, t, lim)) {
    *out = (fe_text){(const char *)c->buf + t, lim - t};
    return true;
  }
  val v;
  TRY(value_at(c, t, true, &v));
  if (v.type == T_STRING)
    *out = v.s;
  else if (v.type == T_INT && v.n.text.n == 2 && memcmp(v.n.text.p, "-0", 2) == 0)
    *out = (fe_text){"0", 1};
  else if (v.type == T_INT || v.type == T_FLOAT)
    *out = v.n.text;
  else
    *has = false;
  return true;
}

/* ts, dur. A numeric string is left to the byte scanner. */
HOT bool read_time(cur *c, size_t t, int *state, double *out) {
  if (is_digit(c->buf[t]) && plain_decimal(c, t, peek(c), out)) {
    *state = F_OK; /* m / 10^k: finite and not negative */
    return true;
  }
  TRY(c->buf[t] != '"');
  val v;
  TRY(value_at(c, t, false, &v));
  *state = F_BAD;
  if (v.type != T_INT && v.type != T_FLOAT) return true;
  double d;
  TRY(number_double(&v.n, &d));
  if (isfinite(d) && !(d < 0)) {
    *state = F_OK;
    *out = d;
  }
  return true;
}

/* External id, correlation: an integer in int64, else absent. A string or a fraction is
 * left to the byte scanner. */
HOT bool read_id(cur *c, size_t t, int64_t *out) {
  TRY(c->buf[t] != '"');
  size_t lim = peek(c);
  if (short_int(c, t, lim)) {
    *out = (int64_t)tr_digits_append(0, c->buf + t, lim - t);
    return true;
  }
  val v;
  TRY(value_at(c, t, false, &v));
  TRY(v.type != T_FLOAT);
  *out = TR_NO_ID;
  if (v.type == T_INT && v.n.exact) {
    uint64_t m = mantissa(&v.n);
    if (m <= (uint64_t)INT64_MAX) *out = v.n.neg ? -(int64_t)m : (int64_t)m;
  }
  return true;
}

/* args.stream / args.cuda_stream: "stream" wins over "cuda_stream" whatever their order. */
HOT bool read_stream(cur *c, int key, size_t t, fe_event *ev) {
  int prio = key == K_STREAM ? 2 : 1;
  if (prio <= ev->stream_prio) return skip_value(c, t);
  fe_text s;
  bool has;
  TRY(read_textual(c, t, &s, &has));
  if (has) {
    ev->stream = s;
    ev->stream_prio = prio;
  }
  return true;
}

/* A string the reader keeps, or *is = false for any other value. */
HOT bool read_string(cur *c, size_t t, fe_text *out, bool *is) {
  *is = c->buf[t] == '"';
  if (*is) return kept_string(c, t, out);
  return skip_value(c, t);
}

/* The value of kept arg k, as parse_args's capture_value reads it: 1 with *text, 0 absent
 * (null, an empty string), -1 dropped for its length; *memo the slot of a remembered
 * container (slot 0: none). The byte scanner decodes strings
 * and writes containers as compact JSON; here a string must be plain and a container
 * already compact, so the file's bytes are the text. */
HOT bool kept_arg_value(cur *c, size_t t, fe_text *text, int *got, fe_memo *memo) {
  uint8_t ch = c->buf[t];
  memo->slot = 0;
  const char *p = (const char *)c->buf + t;
  if (ch == '"') {
    size_t close;
    TRY(string_end(c, t, &close) && plain(c, t, close));
    *text = (fe_text){p + 1, close - t - 1};
    *got = text->n > TR_MAX_ARG_BYTES ? -1 : text->n > 0;
    return true;
  }
  if (ch == '{' || ch == '[') {
    *got = 1;
    if (memo_find(c, t, text, memo)) return true;
    cur copy = *c;
    size_t close;
    if (walk_container(&copy, t, WALK_CANON, &close)) {
      *c = copy;
      *text = (fe_text){p, close - t + 1};
      memo_put(c, t, text->n, memo);
      return close - t < TR_MAX_ARG_BYTES;
    }
    /* laid out otherwise (or not JSON): written anew */
    copy = *c;
    size_t from = c->out->n;
    TRY(walk_container(&copy, t, WALK_BUILD, &close));
    *c = copy;
    *text = (fe_text){c->out->p + from, c->out->n - from};
    return text->n <= TR_MAX_ARG_BYTES;
  }
  val v;
  TRY(value_at(c, t, false, &v));
  *got = v.type != T_NULL;
  if (v.type == T_TRUE) *text = (fe_text){"true", 4};
  if (v.type == T_FALSE) *text = (fe_text){"false", 5};
  if (v.type == T_INT || v.type == T_FLOAT) *text = v.n.text;
  return true;
}

HOT bool args_member(cur *c, int key, size_t t, fe_event *ev) {
  if (key >= K_ARG0) {
    fe_text text;
    int got;
    fe_memo memo;
    TRY(kept_arg_value(c, t, &text, &got, &memo));
    uint32_t bit = 1u << (key - K_ARG0);
    /* a member repeated in one args object: the last one wins */
    ev->arg_mask = got > 0 ? ev->arg_mask | bit : ev->arg_mask & ~bit;
    ev->arg_dropped = got < 0 ? ev->arg_dropped | bit : ev->arg_dropped & ~bit;
    if (got > 0) {
      ev->arg[key - K_ARG0] = text;
      ev->arg_memo[key - K_ARG0] = memo;
    }
    return true;
  }
  switch (key) {
    case K_EXTERNAL_ID:
      return read_id(c, t, &ev->ext);
    case K_CORRELATION:
      return read_id(c, t, &ev->corr);
    case K_STREAM:
    case K_CUDA_STREAM:
      return read_stream(c, key, t, ev);
    case K_NAME:
      return read_string(c, t, &ev->argname, &ev->has_argname);
    default:
      return skip_value(c, t);
  }
}

static void sample_piece(fe_event *ev, fe_text s) {
  if (ev->n_sample < sizeof ev->sample / sizeof ev->sample[0]) ev->sample[ev->n_sample++] = s;
}

/* One member of args while sampling: args_member, and what parse_args adds to the sample
 * for the first SAMPLE_ARGS members: the name, then a string value (the stream and
 * args.name when they are taken). */
COLD bool args_member_sampled(cur *c, int key, fe_text name, size_t t, fe_event *ev) {
  if (ev->n_args++ >= SAMPLE_ARGS) return args_member(c, key, t, ev);
  TRY(name.n <= SAMPLE_STRING_CAP);
  sample_piece(ev, name);
  if (key == K_STREAM || key == K_CUDA_STREAM || key == K_NAME) {
    int prio = ev->stream_prio;
    TRY(args_member(c, key, t, ev));
    if (key != K_NAME && ev->stream_prio != prio) sample_piece(ev, ev->stream);
    if (key == K_NAME && ev->has_argname) sample_piece(ev, ev->argname);
    return true;
  }
  if (key != K_EXTERNAL_ID && key != K_CORRELATION && c->buf[t] == '"') {
    cur copy = *c;
    size_t close;
    TRY(string_end(&copy, t, &close) && plain(&copy, t, close));
    TRY(close - t - 1 <= SAMPLE_STRING_CAP);
    sample_piece(ev, (fe_text){(const char *)c->buf + t + 1, close - t - 1});
  }
  return args_member(c, key, t, ev);
}

/* Notes the value of a member at the token at (rec_value) and, once read, the token after
 * it (rec_after), when the cursor notes values. */
HOT void rec_value(cur *c, int key, bool in_args, size_t at) {
  fe_rec *r = c->rec;
  if (!r || r->full) return;
  if (r->n == FE_SHAPE_HOLES) {
    r->full = true;
    return;
  }
  r->h[r->n++] = (fe_hole){(uint32_t)at, 0, (uint8_t)key, in_args};
}

HOT void rec_after(cur *c) {
  if (c->rec && !c->rec->full) c->rec->h[c->rec->n - 1].after = (uint32_t)peek(c);
}

/* The members of the args object whose '{' was the last token. */
HOT bool read_args(cur *c, fe_event *ev) {
  size_t t;
  TRY(next(c, &t));
  if (c->buf[t] == '}') return true;
  for (;;) {
    int key;
    fe_text name;
    TRY(member_key(c, t, &key, &t, &name));
    rec_value(c, key, true, t);
    if (__builtin_expect(ev->sampling, 0)) {
      cur copy = *c;
      bool ok = args_member_sampled(&copy, key, name, t, ev);
      *c = copy;
      TRY(ok);
    } else {
      TRY(args_member(c, key, t, ev));
    }
    rec_after(c);
    int more = next_item(c, '}', &t);
    if (more <= 0) return more == 0;
  }
}

HOT bool event_member(cur *c, int key, size_t t, fe_event *ev) {
  bool is;
  switch (key) {
    case K_PH:
      TRY(read_string(c, t, &ev->ph, &is));
      if (!is) ev->ph = (fe_text){"", 0};
      return true;
    case K_NAME:
      TRY(read_string(c, t, &ev->name, &ev->has_name));
      ev->name_bad = !ev->has_name;
      return true;
    case K_CAT:
      return read_string(c, t, &ev->cat, &ev->has_cat);
    case K_PID:
      return read_textual(c, t, &ev->pid, &ev->has_pid);
    case K_TID:
      return read_textual(c, t, &ev->tid, &ev->has_tid);
    case K_TS:
      return read_time(c, t, &ev->ts_state, &ev->ts);
    case K_DUR:
      return read_time(c, t, &ev->dur_state, &ev->dur);
    case K_ARGS:
      if (c->buf[t] == '{') return read_args(c, ev);
      return skip_value(c, t);
    default:
      return skip_value(c, t);
  }
}

static void ev_reset(fe_event *ev, bool sampling) {
  ev->ph = (fe_text){"", 0};
  ev->has_name = ev->name_bad = ev->has_cat = ev->has_pid = ev->has_tid = ev->has_argname = false;
  ev->ts_state = ev->dur_state = F_ABSENT;
  ev->ext = ev->corr = TR_NO_ID;
  ev->stream_prio = 0;
  ev->arg_mask = ev->arg_dropped = 0;
  ev->sampling = sampling;
  ev->n_args = ev->n_sample = 0;
}

/* The event token by token; *end: just past its '}'. */
static bool parse_tokens(cur *c, size_t off, bool sampling, fe_event *ev, size_t *end) {
  size_t t;
  seek(c, off);
  /* the event's '{' must be a token: the masks are in step with the byte scanner */
  TRY(next(c, &t) && t == off && c->buf[t] == '{');
  ev_reset(ev, sampling);
  TRY(next(c, &t));
  if (c->buf[t] != '}') {
    for (;;) {
      int key;
      fe_text name;
      TRY(member_key(c, t, &key, &t, &name));
      bool args = key == K_ARGS && c->buf[t] == '{'; /* its members are noted one by one */
      if (!args) rec_value(c, key, false, t);
      TRY(event_member(c, key, t, ev));
      if (!args) rec_after(c);
      int more = next_item(c, '}', &t);
      TRY(more >= 0);
      if (!more) break;
    }
  }
  *end = t + 1;
  return true;
}

/* ------------------------------------------------------------------ shapes */

/* Kineto writes the events of one kind alike: the same members in the same order, with
 * the same spacing; only their values differ. A shape is such an event's bytes with its
 * values cut out: literal pieces (member names, punctuation, whitespace, and the values
 * of ph and cat, which hardly vary and tell the shapes apart at their first bytes) and
 * the values between them, each with how to read it. An event whose literal pieces are
 * byte for byte a shape's, and whose values read as the shape's readers read them, is
 * JSON a token walk would accept, with the same members, read the same way: the readers
 * do what event_member and args_member do for the member and the kind of value (string,
 * number) the shape was learnt with, and a value of another kind fails the match. The
 * common ones (times, ids, names, numbers and strings nobody keeps) are read straight
 * from the bytes; the rest (containers, kept args, streams, literals) through the member
 * functions at a cursor. Shapes are learnt from the events read token by token, the
 * least recently matched replaced. */

enum {
  P_END,      /* no value: the literal ends the event */
  P_SKIP_NUM, /* a number nobody keeps */
  P_SKIP_STR, /* a string nobody keeps */
  P_STR,      /* a string kept: ph, name, cat, pid, tid, args.name */
  P_NUM_TEXT, /* pid, tid: a number as its text */
  P_TIME,     /* ts, dur */
  P_ID,       /* External id, correlation */
  P_MEMBER    /* anything else: the member functions, at a cursor */
};

/* ph or cat: a string inside a piece's literal, off bytes from its start, len bytes. */
typedef struct fixed {
  uint8_t key;
  uint16_t off, len;
} fixed;

/* Up to this many ph and cat values lie in one literal (more: no shape is made). */
#define FIXED_PER_PIECE 2u

/* One step of a shape: a literal (bytes[off, off + len)), the ph and cat values inside it,
 * then a value read by kind (P_END: none, the last piece). One piece per member, not one
 * per literal and one per value: the loop over pieces and its dispatch were a third of a
 * match. */
typedef struct piece {
  uint8_t kind, key, in_args, n_fixed;
  uint16_t off, len;
  fixed f[FIXED_PER_PIECE];
} piece;

typedef struct shape {
  piece p[FE_SHAPE_HOLES + 1];
  unsigned n;
  size_t n_bytes;
  char bytes[FE_SHAPE_BYTES + 8]; /* lit_eq reads 8 bytes past a piece */
} shape;

struct fe_shapes {
  memo_slot memo[FE_MEMO_SLOTS]; /* the kept containers remembered */
  shape s[FE_SHAPES];
  unsigned n;
  uint8_t order[FE_SHAPES]; /* most recently matched first */
  /* The shape the last event matched, and per shape the one that matched the event after
   * it the last time: Kineto's kinds follow each other in patterns (an op, its runtime
   * call, the call's flow), which the order of recency misses on every change of kind. */
  uint8_t last, next[FE_SHAPES];
  /* prefix[a][b]: how many first pieces shapes a and b have alike (piece_eq) */
  uint8_t prefix[FE_SHAPES][FE_SHAPES];
};

fe_shapes *fe_shapes_create(void) { return calloc(1, sizeof(fe_shapes)); }
void fe_shapes_destroy(fe_shapes *s) { free(s); }

/* The slot of ref while it holds the text it held then (it may have taken another one
 * since, even within the event: two containers whose bytes choose one slot). */
static memo_slot *memo_holding(fe_shapes *s, fe_memo ref) {
  if (!s || ref.slot == 0 || ref.slot > FE_MEMO_SLOTS) return NULL;
  memo_slot *m = &s->memo[ref.slot - 1];
  return m->gen == ref.gen ? m : NULL;
}

uint32_t fe_memo_id(fe_shapes *s, fe_memo ref) {
  const memo_slot *m = memo_holding(s, ref);
  return m ? m->id : 0;
}

void fe_memo_set_id(fe_shapes *s, fe_memo ref, uint32_t id) {
  memo_slot *m = memo_holding(s, ref);
  if (m) m->id = id;
}

/* The string whose opening quote is at *p: its text, plain when kept (else with valid
 * escapes); *p moves past its closing quote, the next token. */
HOT bool shape_string(cur *c, size_t *p, bool kept, fe_text *s) {
  size_t close;
  TRY(c->buf[*p] == '"');
  seek(c, *p + 1);
  TRY(string_end(c, *p, &close));
  *s = (fe_text){(const char *)c->buf + *p + 1, close - *p - 1};
  bool ok = plain(c, *p, close) ? (!kept || s->n <= FE_MAX_KEPT_STRING)
                                : !kept && escapes_valid(c->buf + *p + 1, c->buf + close);
  *p = close + 1;
  return ok;
}

/* The number at *p, in JSON's grammar; *p moves past it (what follows is the next
 * literal's to check). An integer of at most 8 digits takes one word test; an integer or
 * a decimal without an exponent (ids past 8 digits, times in microseconds) a word per 8
 * digits; the rest (a sign, an exponent, a leading zero, a text past
 * TR_MAX_NUMBER_CHARS) go to number_scan. */
HOT bool shape_number(const cur *c, size_t *p, num *n) {
  size_t a = *p;
  const uint8_t *b = c->buf + a, *e = c->buf + c->len;
  if (e - b > 8) {
    unsigned k = tr_digits_in8(b);
    uint8_t next = b[k];
    uint64_t m = 0;
    size_t ni = k;
    if (k == 8) { /* the value as the digits are counted: they are not read again */
      m = tr_digits_append(0, b, 8);
      ni += digit_run_value(b + 8, e, &m);
    } else if (k) {
      m = tr_digits_append_wide(0, b, k);
    }
    if (k && k < 8 && (b[0] != '0' || k == 1) && next != '.' && (next | 0x20) != 'e') {
      *n = (num){{(const char *)b, k}, b, b, k, 0, false, true, true, m};
      *p = a + k;
      return true;
    }
    size_t nf = 0;
    const uint8_t *q = b + ni, *fp = b;
    if (ni && (b[0] != '0' || ni == 1) && q < e) {
      bool is_int = *q != '.';
      if (!is_int) {
        fp = ++q;
        nf = digit_run_value(q, e, &m);
        q += nf;
      }
      if ((is_int || nf) && q < e && (*q | 0x20) != 'e' && (size_t)(q - b) <= TR_MAX_NUMBER_CHARS) {
        size_t lead = 0; /* the zeros that lead 0.000123 are not significant */
        if (b[0] == '0')
          while (lead < nf && fp[lead] == '0') lead++;
        size_t sig = (b[0] == '0' ? 0 : ni) + nf - lead;
        *n = (num){{(const char *)b, (size_t)(q - b)}, b, fp, ni, nf, false, is_int,
                   sig <= TR_DECIMAL_MAX_DIGITS,       m};
        *p = (size_t)(q - c->buf);
        return true;
      }
    }
  }
  TRY(number_scan(c, a, c->len, n));
  n->m = n->exact ? mantissa(n) : 0;
  *p = a + n->text.n;
  return true;
}

/* A string value kept in a field of ev, as event_member / args_member keep it. */
static void shape_set_string(fe_event *ev, const piece *q, fe_text s) {
  if (q->in_args) {
    ev->has_argname = true; /* args.name */
    ev->argname = s;
    return;
  }
  switch (q->key) {
    case K_PH:
      ev->ph = s;
      break;
    case K_NAME:
      ev->has_name = true;
      ev->name_bad = false;
      ev->name = s;
      break;
    case K_CAT:
      ev->has_cat = true;
      ev->cat = s;
      break;
    case K_PID:
      ev->has_pid = true;
      ev->pid = s;
      break;
    default: /* K_TID */
      ev->has_tid = true;
      ev->tid = s;
      break;
  }
}

/* The value of piece q at *p, read into ev; *p moves past it. */
HOT bool shape_value(cur *c, const piece *q, size_t *p, fe_event *ev) {
  fe_text s;
  num n;
  switch (q->kind) {
    case P_SKIP_STR:
      return shape_string(c, p, false, &s);
    case P_STR:
      TRY(shape_string(c, p, true, &s));
      shape_set_string(ev, q, s);
      return true;
    case P_SKIP_NUM:
      return shape_number(c, p, &n);
    case P_NUM_TEXT: /* pid, tid: Python prints the integer -0 as 0 */
      TRY(shape_number(c, p, &n));
      s = n.is_int && n.text.n == 2 && n.text.p[0] == '-' && n.text.p[1] == '0' ? (fe_text){"0", 1}
                                                                                : n.text;
      shape_set_string(ev, q, s);
      return true;
    case P_TIME: {
      double d;
      TRY(shape_number(c, p, &n) && !n.neg && n.exact &&
          tr_decimal_to_double(n.m, (unsigned)n.nf, false, &d));
      *(q->key == K_TS ? &ev->ts_state : &ev->dur_state) = F_OK;
      *(q->key == K_TS ? &ev->ts : &ev->dur) = d;
      return true;
    }
    case P_ID: {
      TRY(shape_number(c, p, &n) && n.is_int);
      int64_t v = TR_NO_ID;
      if (n.exact) {
        if (n.m <= (uint64_t)INT64_MAX) v = n.neg ? -(int64_t)n.m : (int64_t)n.m;
      }
      *(q->key == K_EXTERNAL_ID ? &ev->ext : &ev->corr) = v;
      return true;
    }
    default: { /* P_MEMBER */
      size_t t;
      seek(c, *p);
      TRY(next(c, &t) && t == *p);
      TRY(q->in_args ? args_member(c, q->key, t, ev) : event_member(c, q->key, t, ev));
      size_t after = peek(c); /* the value ends where the whitespace before it starts */
      while (after > *p && is_ws(c->buf[after - 1])) after--;
      *p = after;
      return true;
    }
  }
}

/* Where a match stands: the cursor, the next byte to read (p) and the next piece (i). */
typedef struct mstate {
  cur c;
  size_t p;
  unsigned i;
} mstate;

enum { M_MATCHED, M_LITERAL, M_VALUE };

/* The ph and cat values inside the literal of piece q, which begins at lit. */
static void shape_fixed(const piece *q, const uint8_t *lit, fe_event *ev) {
  for (unsigned f = 0; f < q->n_fixed; f++) {
    fe_text s = {(const char *)lit + q->f[f].off, q->f[f].len};
    if (q->f[f].key == K_PH) {
      ev->ph = s;
    } else {
      ev->has_cat = true;
      ev->cat = s;
    }
  }
}

/* Reads the event by shape sh from piece st->i on. M_MATCHED: all of it; M_LITERAL: the
 * bytes differ from the literal of piece st->i, and *st is as it was before it, so
 * another shape whose first st->i pieces are sh's can go on from there (it would have
 * read them the same way); M_VALUE: a value did not read (*st is spoilt). */
static int shape_run(const shape *sh, mstate *st, fe_event *ev) {
  cur c = st->c; /* a copy, kept in registers */
  size_t p = st->p;
  unsigned i = st->i;
  for (; i < sh->n; i++) {
    const piece *q = &sh->p[i];
    if (c.len - p < q->len || !lit_eq(c.buf + p, c.len - p, sh->bytes + q->off, q->len)) {
      *st = (mstate){c, p, i};
      return M_LITERAL;
    }
    if (q->n_fixed) shape_fixed(q, c.buf + p, ev);
    p += q->len;
    /* a literal may end at the chunk's end */
    if (q->kind != P_END && (p >= c.len || !shape_value(&c, q, &p, ev))) return M_VALUE;
  }
  *st = (mstate){c, p, i};
  return M_MATCHED;
}

/* Whether piece a of shape x and piece b of shape y read alike. */
static bool piece_eq(const shape *x, const piece *a, const shape *y, const piece *b) {
  if (a->kind != b->kind || a->key != b->key || a->in_args != b->in_args || a->len != b->len ||
      a->n_fixed != b->n_fixed || memcmp(x->bytes + a->off, y->bytes + b->off, a->len) != 0)
    return false;
  for (unsigned f = 0; f < a->n_fixed; f++)
    if (a->f[f].key != b->f[f].key || a->f[f].off != b->f[f].off || a->f[f].len != b->f[f].len)
      return false;
  return true;
}

static uint8_t common_prefix(const shape *x, const shape *y) {
  unsigned n = 0;
  while (n < x->n && n < y->n && n < UINT8_MAX && piece_eq(x, &x->p[n], y, &y->p[n])) n++;
  return (uint8_t)n;
}

/* A piece: the literal of the n bytes at bytes with the ph and cat values inside it, then
 * the value q (q.kind, q.key, q.in_args) reads. */
static bool shape_add(shape *sh, const uint8_t *bytes, size_t n, piece q, const fixed *f,
                      unsigned n_fixed) {
  if (sh->n == sizeof sh->p / sizeof sh->p[0]) return false;
  if (sh->n_bytes + n > FE_SHAPE_BYTES || n > UINT16_MAX) return false;
  memcpy(sh->bytes + sh->n_bytes, bytes, n);
  q.off = (uint16_t)sh->n_bytes;
  q.len = (uint16_t)n;
  sh->n_bytes += n;
  q.n_fixed = (uint8_t)n_fixed;
  memcpy(q.f, f, n_fixed * sizeof *f);
  sh->p[sh->n++] = q;
  return true;
}

/* How a shape reads the value of member key whose first byte is first. */
static uint8_t shape_reader(int key, bool in_args, uint8_t first) {
  bool is_str = first == '"', is_num = first == '-' || is_digit(first);
  if (in_args) {
    if (key == K_EXTERNAL_ID || key == K_CORRELATION) return is_num ? P_ID : P_MEMBER;
    if (key == K_NAME) return is_str ? P_STR : P_MEMBER;
    if (key == K_STREAM || key == K_CUDA_STREAM || key >= K_ARG0) return P_MEMBER;
  } else {
    if (key == K_NAME || key == K_PH || key == K_CAT) return is_str ? P_STR : P_MEMBER;
    if (key == K_PID || key == K_TID) return is_str ? P_STR : is_num ? P_NUM_TEXT : P_MEMBER;
    if (key == K_TS || key == K_DUR) return is_num ? P_TIME : P_MEMBER;
    if (key == K_ARGS) return P_MEMBER;
  }
  return is_str ? P_SKIP_STR : is_num ? P_SKIP_NUM : P_MEMBER;
}

/* The shape of the event [off, end) read token by token, whose values rec noted. Values
 * of ph and cat stay in the literal around them (fixed, read after it). */
static bool shape_learn(shape *sh, const uint8_t *buf, size_t off, size_t end, const fe_rec *rec) {
  fixed fx[FIXED_PER_PIECE];
  unsigned n_fixed = 0;
  size_t lit = off;
  sh->n = 0;
  sh->n_bytes = 0;
  for (unsigned i = 0; i <= rec->n; i++) {
    const fe_hole *h = i < rec->n ? &rec->h[i] : NULL;
    size_t vend = h ? h->after : 0; /* the value's end: before the whitespace ahead of after */
    while (h && vend > h->at && is_ws(buf[vend - 1])) vend--;
    if (h && (h->key == K_PH || h->key == K_CAT) && !h->in_args && buf[h->at] == '"') {
      if (n_fixed == FIXED_PER_PIECE || vend - 1 - lit > UINT16_MAX) return false;
      fx[n_fixed++] =
          (fixed){(uint8_t)h->key, (uint16_t)(h->at + 1 - lit), (uint16_t)(vend - h->at - 2)};
      continue;
    }
    size_t stop = h ? h->at : end;
    piece q = {0};
    if (h)
      q = (piece){.kind = shape_reader(h->key, h->in_args, buf[h->at]),
                  .key = (uint8_t)h->key,
                  .in_args = h->in_args};
    if (stop <= lit || !shape_add(sh, buf + lit, stop - lit, q, fx, n_fixed)) return false;
    n_fixed = 0;
    if (!h) return true;
    lit = vend;
  }
  return false;
}

/* Whether the event at off begins with the first literal of sh, as shape_run checks it:
 * when the shape guessed first does not match, most others differ there, and are passed
 * over for a compare, not a run (its cursor copied in and out). The guess is run at once:
 * it mostly matches, and the compare would be made twice. */
HOT bool first_literal(const shape *sh, const cur *c, size_t off) {
  const piece *q = &sh->p[0];
  return c->len - off >= q->len && lit_eq(c->buf + off, c->len - off, sh->bytes + q->off, q->len);
}

/* Reads the event at st by the shapes other than skip, most recently matched first, from
 * a state the shape from read (FE_SHAPES: none). A shape whose literal differs hands over
 * to the next one that begins with the same pieces, at that literal: the pieces before it
 * are read once, however many shapes are tried (cpu_ops whose args differ share everything
 * up to them). *k: the shape that matched. */
static int shapes_try(fe_shapes *ss, mstate *st, fe_event *ev, unsigned from, unsigned skip,
                      uint8_t *k) {
  for (unsigned i = 0; i < ss->n; i++) {
    *k = ss->order[i];
    const shape *sh = &ss->s[*k];
    /* a shape passed over here begins unlike every later st: no need to come back */
    if (*k == skip || !sh->n || (from < FE_SHAPES && ss->prefix[from][*k] < st->i)) continue;
    if (!st->i && !first_literal(sh, &st->c, st->p)) continue; /* st->p: the event's '{' */
    int res = shape_run(sh, st, ev);
    if (res != M_LITERAL) return res;
    from = *k;
  }
  return M_LITERAL;
}

/* The event at off read by the shape that followed the last one matched the last time,
 * then by the others (shapes_try). Shapes that begin alike but read a value by another
 * kind of reader have a shorter common prefix than what the guess read, so when nothing
 * goes on from the guess the others are tried from the event's start, as if there had
 * been no guess. The cursor is a copy, kept in registers. */
static bool shapes_match(fe_shapes *ss, cur *cp, size_t off, fe_event *ev, size_t *end) {
  /* the event's '{' must be a token: the masks are in step with the byte scanner */
  TRY(ss->n && (cp->m[off / TR_BLOCK].tok >> (off % TR_BLOCK) & 1));
  ev_reset(ev, false);
  mstate st = {*cp, off, 0};
  uint8_t guess = ss->next[ss->last], k = guess;
  int res = M_LITERAL;
  if (guess < ss->n && ss->s[guess].n) {
    res = shape_run(&ss->s[guess], &st, ev);
    if (res == M_LITERAL) res = shapes_try(ss, &st, ev, guess, guess, &k);
    if (res == M_LITERAL && st.i) { /* read again, from the start */
      ev_reset(ev, false);
      st = (mstate){*cp, off, 0};
      res = shapes_try(ss, &st, ev, FE_SHAPES, guess, &k);
    }
  } else {
    res = shapes_try(ss, &st, ev, FE_SHAPES, FE_SHAPES, &k);
  }
  if (res != M_MATCHED) return false; /* the token walk reads it, or the byte scanner */
  *cp = st.c;
  *end = st.p; /* the last piece is a literal ending with the event's '}' */
  ss->next[ss->last] = k;
  ss->last = k;
  unsigned at = 0;
  while (ss->order[at] != k) at++;
  if (at) { /* to the front */
    memmove(ss->order + 1, ss->order, at);
    ss->order[0] = k;
  }
  return true;
}

static void shapes_learn(fe_shapes *ss, const uint8_t *buf, size_t off, size_t end,
                         const fe_rec *rec) {
  if (rec->full) return;
  bool room = ss->n < FE_SHAPES;
  uint8_t k = room ? (uint8_t)ss->n : ss->order[FE_SHAPES - 1]; /* new, or the least recent */
  if (!shape_learn(&ss->s[k], buf, off, end, rec))
    ss->s[k].n = 0; /* matches nothing */
  else if (room)
    ss->n++;
  for (unsigned j = 0; j < ss->n; j++)
    ss->prefix[k][j] = ss->prefix[j][k] = common_prefix(&ss->s[k], &ss->s[j]);
  if (!ss->s[k].n) return;
  memmove(ss->order + 1, ss->order, ss->n - 1);
  ss->order[0] = k;
}

bool fe_parse_event(const fe_chunk *ch, size_t off, bool sampling, fe_event *ev, size_t *end) {
  TRY(off < ch->len);
  fe_out out = {ch->scratch, 0, ch->scratch_cap};
  cur c = {ch->buf, ch->masks, ch->len, 0, 0, &out, NULL, ch->shapes ? ch->shapes->memo : NULL};
  bool shapes = ch->shapes && !sampling && ch->len <= UINT32_MAX;
  if (shapes && shapes_match(ch->shapes, &c, off, ev, end)) return true;
  fe_rec rec;
  rec.n = 0;
  rec.full = false;
  out.n = 0;
  c.rec = shapes ? &rec : NULL;
  TRY(parse_tokens(&c, off, sampling, ev, end));
  if (shapes) shapes_learn(ch->shapes, ch->buf, off, *end, &rec);
  return true;
}

/* ------------------------------------------------------------------ reading ahead */

enum { AF_NAME = 1, AF_NAME_BAD = 2, AF_CAT = 4, AF_PID = 8, AF_TID = 16, AF_ARGNAME = 32 };

/* s as a span of the chunk; false when it lies elsewhere (a container written anew into
 * the scratch, a constant such as the "0" of a pid written -0). */
static bool span_of(const fe_chunk *c, fe_text s, fe_span *out) {
  if (!s.n) {
    *out = (fe_span){0, 0};
    return true;
  }
  uintptr_t a = (uintptr_t)c->buf, p = (uintptr_t)s.p;
  if (p < a || p - a > c->len || s.n > c->len - (p - a)) return false;
  *out = (fe_span){(uint32_t)(p - a), (uint32_t)s.n};
  return true;
}

bool fe_ahead_list_reserve(fe_ahead_list *l, size_t recs, size_t args) {
  if (recs > l->cap) {
    fe_ahead_rec *v = realloc(l->v, recs * sizeof *v);
    if (!v) return false;
    l->v = v;
    l->cap = recs;
  }
  if (args > l->cap_args) {
    fe_span *v = realloc(l->args, args * sizeof *v);
    if (v) l->args = v;
    fe_memo *m = v ? realloc(l->memo, args * sizeof *m) : NULL;
    if (m) l->memo = m;
    if (!m) return false; /* cap_args stays what both arrays hold */
    l->cap_args = args;
  }
  return true;
}

/* Room for one more record and its args (at most TR_ARG_COUNT: counting them first was a
 * call to libgcc's popcount per event without -mpopcnt). */
static bool ahead_room(fe_ahead_list *l) {
  if (l->n < l->cap && l->cap_args - l->n_args >= TR_ARG_COUNT) return true;
  return fe_ahead_list_reserve(
      l, l->n < l->cap ? l->cap : 2 * l->cap + 256,
      l->cap_args - l->n_args >= TR_ARG_COUNT ? l->cap_args : 2 * l->cap_args + 256);
}

/* Appends the record of ev, read at [off, end). -1: out of memory; 0: not recordable
 * (a text outside the chunk), nothing appended; 1: appended. */
static int ahead_put(const fe_chunk *c, size_t off, size_t end, const fe_event *ev,
                     fe_ahead_list *l) {
  if (!ahead_room(l)) return -1;
  fe_ahead_rec *r = &l->v[l->n];
  fe_span none = {0, 0};
  r->name = r->cat = r->pid = r->tid = r->stream = r->argname = none;
  bool ok = span_of(c, ev->ph, &r->ph);
  if (ev->has_name) ok &= span_of(c, ev->name, &r->name);
  if (ev->has_cat) ok &= span_of(c, ev->cat, &r->cat);
  if (ev->has_pid) ok &= span_of(c, ev->pid, &r->pid);
  if (ev->has_tid) ok &= span_of(c, ev->tid, &r->tid);
  if (ev->stream_prio) ok &= span_of(c, ev->stream, &r->stream);
  if (ev->has_argname) ok &= span_of(c, ev->argname, &r->argname);
  fe_span *a = l->args + l->n_args;
  fe_memo *mo = l->memo + l->n_args;
  unsigned n_args = 0;
  for (uint32_t m = ev->arg_mask; m; m &= m - 1, n_args++) {
    unsigned k = (unsigned)__builtin_ctz(m);
    ok &= span_of(c, ev->arg[k], &a[n_args]);
    mo[n_args] = ev->arg_memo[k];
  }
  if (!ok) return 0;
  r->off = (uint32_t)off;
  r->end = (uint32_t)end;
  r->ts = ev->ts_state == F_OK ? ev->ts : 0.0; /* unset otherwise */
  r->dur = ev->dur_state == F_OK ? ev->dur : 0.0;
  r->ext = ev->ext;
  r->corr = ev->corr;
  r->arg_mask = ev->arg_mask;
  r->arg_dropped = ev->arg_dropped;
  r->args = (uint32_t)l->n_args;
  r->ts_state = (uint8_t)ev->ts_state;
  r->dur_state = (uint8_t)ev->dur_state;
  r->stream_prio = (uint8_t)ev->stream_prio;
  r->flags = (uint8_t)((ev->has_name ? AF_NAME : 0) | (ev->name_bad ? AF_NAME_BAD : 0) |
                       (ev->has_cat ? AF_CAT : 0) | (ev->has_pid ? AF_PID : 0) |
                       (ev->has_tid ? AF_TID : 0) | (ev->has_argname ? AF_ARGNAME : 0));
  l->n++;
  l->n_args += n_args;
  return 1;
}

/* The '{' of the first object at or after from whose tokens before it are '}' and ','
 * (c->len: none). */
static size_t next_after_brace_comma(cur *c, size_t from) {
  uint8_t b1 = 0, b2 = 0; /* the last two tokens' bytes */
  size_t t;
  seek(c, from);
  while (next(c, &t)) {
    uint8_t b = c->buf[t];
    if (b == '{' && b1 == ',' && b2 == '}') return t;
    b2 = b1;
    b1 = b;
  }
  return c->len;
}

void fe_ahead_read(const fe_chunk *ch, size_t from, fe_ahead_list *out) {
  out->n = out->n_args = 0;
  if (ch->len > UINT32_MAX) return;
  cur c = {ch->buf, ch->masks, ch->len, 0, 0, NULL, NULL, NULL};
  size_t off = next_after_brace_comma(&c, from), end, t;
  fe_event ev;
  while (off < ch->len && fe_parse_event(ch, off, false, &ev, &end)) {
    if (ahead_put(ch, off, end, &ev, out) < 0) return;
    seek(&c, end);
    if (!next(&c, &t) || c.buf[t] != ',' || !next(&c, &t) || c.buf[t] != '{') return;
    off = t;
  }
}

void fe_ahead_event(const fe_ahead_list *l, const fe_ahead_rec *r, const uint8_t *buf,
                    fe_event *ev) {
#define SPAN_TEXT(s) ((fe_text){(const char *)buf + (s).off, (s).n})
  ev->ph = SPAN_TEXT(r->ph);
  ev->name = SPAN_TEXT(r->name);
  ev->cat = SPAN_TEXT(r->cat);
  ev->pid = SPAN_TEXT(r->pid);
  ev->tid = SPAN_TEXT(r->tid);
  ev->stream = SPAN_TEXT(r->stream);
  ev->argname = SPAN_TEXT(r->argname);
  ev->has_name = r->flags & AF_NAME;
  ev->name_bad = r->flags & AF_NAME_BAD;
  ev->has_cat = r->flags & AF_CAT;
  ev->has_pid = r->flags & AF_PID;
  ev->has_tid = r->flags & AF_TID;
  ev->has_argname = r->flags & AF_ARGNAME;
  ev->ts_state = r->ts_state;
  ev->dur_state = r->dur_state;
  ev->ts = r->ts;
  ev->dur = r->dur;
  ev->ext = r->ext;
  ev->corr = r->corr;
  ev->stream_prio = r->stream_prio;
  ev->arg_mask = r->arg_mask;
  ev->arg_dropped = r->arg_dropped;
  const fe_span *a = l->args + r->args;
  const fe_memo *mo = l->memo + r->args;
  for (uint32_t m = r->arg_mask; m; m &= m - 1, a++, mo++) {
    unsigned k = (unsigned)__builtin_ctz(m);
    ev->arg[k] = SPAN_TEXT(*a);
    ev->arg_memo[k] = (fe_memo){mo->slot ? (uint16_t)(mo->slot | FE_MEMO_AHEAD) : 0, mo->gen};
  }
#undef SPAN_TEXT
  ev->sampling = false;
  ev->n_args = ev->n_sample = 0;
}

void fe_ahead_list_free(fe_ahead_list *l) {
  free(l->v);
  free(l->args);
  free(l->memo);
  *l = (fe_ahead_list){0};
}
