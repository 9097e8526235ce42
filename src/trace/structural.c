/* trace/structural.c - see structural.h. */
#include "trace/structural.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TR_X86 1
#endif
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>
#define TR_NEON 1
#endif

/* The byte classes of one block, before strings are known. */
typedef struct raw_masks {
  uint64_t quote;  /* '"' */
  uint64_t bslash; /* '\\' */
  uint64_t ws;     /* ' ' '\t' '\n' '\r' */
  uint64_t op;     /* { } [ ] : , */
  uint64_t odd;    /* below 0x20 or from 0x80 */
} raw_masks;

/* ------------------------------------------------------------------ classifiers */

enum { C_QUOTE = 1, C_BSLASH = 2, C_WS = 4, C_OP = 8, C_ODD = 16 };

static uint8_t g_class[256];
static pthread_once_t g_class_once = PTHREAD_ONCE_INIT;

static void class_init(void) {
  for (int c = 0; c < 256; c++) {
    uint8_t k = 0;
    if (c == '"') k |= C_QUOTE;
    if (c == '\\') k |= C_BSLASH;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') k |= C_WS;
    if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',') k |= C_OP;
    if (c < 0x20 || c >= 0x80) k |= C_ODD;
    g_class[c] = k;
  }
}

/* The reference: one table lookup per byte. */
static void classify_scalar(const uint8_t *b, raw_masks *m) {
  uint64_t q = 0, s = 0, w = 0, o = 0, d = 0;
  for (unsigned i = 0; i < TR_BLOCK; i++) {
    uint64_t k = g_class[b[i]];
    q |= (k & 1) << i;
    s |= ((k >> 1) & 1) << i;
    w |= ((k >> 2) & 1) << i;
    o |= ((k >> 3) & 1) << i;
    d |= ((k >> 4) & 1) << i;
  }
  *m = (raw_masks){q, s, w, o, d};
}

#if defined(TR_X86) && defined(__SSE2__)
/* 16 bytes per step. '[' and '{' differ only in bit 0x20, as do ']' and '}': one compare
 * of the byte with 0x20 set finds both. The signed compare below 0x20 also catches the
 * bytes from 0x80 (negative as signed). */
static inline void classify_sse2(const uint8_t *b, raw_masks *m) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), nl = _mm_set1_epi8('\n'),
                cr = _mm_set1_epi8('\r');
  const __m128i colon = _mm_set1_epi8(':'), comma = _mm_set1_epi8(','), lbrace = _mm_set1_epi8('{'),
                rbrace = _mm_set1_epi8('}');
  raw_masks r = {0, 0, 0, 0, 0};
  for (unsigned i = 0; i < 4; i++) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * i));
    __m128i up = _mm_or_si128(v, sp);
    __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, tab)),
                              _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, cr)));
    __m128i op = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, colon), _mm_cmpeq_epi8(v, comma)),
                              _mm_or_si128(_mm_cmpeq_epi8(up, lbrace), _mm_cmpeq_epi8(up, rbrace)));
    unsigned sh = 16 * i;
    r.quote |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << sh;
    r.bslash |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash)) << sh;
    r.ws |= (uint64_t)(unsigned)_mm_movemask_epi8(ws) << sh;
    r.op |= (uint64_t)(unsigned)_mm_movemask_epi8(op) << sh;
    r.odd |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(v, sp)) << sh;
  }
  *m = r;
}
#endif

#if defined(TR_X86) && defined(TRIAGE_HAVE_AVX2)
#define TR_AVX2 1
/* As classify_sse2, 32 bytes per step; whitespace by one table lookup (vpshufb on the
 * low nibble: each of the four whitespace bytes has its own low nibble, and a byte from
 * 0x80 looks up 0, which equals no such byte). */
__attribute__((target("avx2"))) static inline void classify_avx2(const uint8_t *b, raw_masks *m) {
  const __m256i ws_table =
      _mm256_setr_epi8(' ', -1, -1, -1, -1, -1, -1, -1, -1, '\t', '\n', -1, -1, '\r', -1, -1, ' ',
                       -1, -1, -1, -1, -1, -1, -1, -1, '\t', '\n', -1, -1, '\r', -1, -1);
  const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');
  const __m256i sp = _mm256_set1_epi8(' '), colon = _mm256_set1_epi8(':'),
                comma = _mm256_set1_epi8(','), lbrace = _mm256_set1_epi8('{'),
                rbrace = _mm256_set1_epi8('}');
  raw_masks r = {0, 0, 0, 0, 0};
  for (unsigned i = 0; i < 2; i++) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32 * i));
    __m256i up = _mm256_or_si256(v, sp);
    __m256i ws = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(ws_table, v), v);
    __m256i op = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(v, colon), _mm256_cmpeq_epi8(v, comma)),
        _mm256_or_si256(_mm256_cmpeq_epi8(up, lbrace), _mm256_cmpeq_epi8(up, rbrace)));
    unsigned sh = 32 * i;
    r.quote |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, quote)) << sh;
    r.bslash |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, bslash)) << sh;
    r.ws |= (uint64_t)(uint32_t)_mm256_movemask_epi8(ws) << sh;
    r.op |= (uint64_t)(uint32_t)_mm256_movemask_epi8(op) << sh;
    r.odd |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(sp, v)) << sh;
  }
  *m = r;
}
#endif

#ifdef TR_NEON
/* The 64 compare results (0xFF / 0) of four vectors as one mask: each lane keeps its bit
 * of a byte, then three rounds of pairwise adds gather them. */
static inline uint64_t neon_mask(uint8x16_t a, uint8x16_t b, uint8x16_t c, uint8x16_t d) {
  const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  uint8x16_t s0 = vpaddq_u8(vandq_u8(a, bit), vandq_u8(b, bit));
  uint8x16_t s1 = vpaddq_u8(vandq_u8(c, bit), vandq_u8(d, bit));
  s0 = vpaddq_u8(s0, s1);
  s0 = vpaddq_u8(s0, s0);
  return vgetq_lane_u64(vreinterpretq_u64_u8(s0), 0);
}

static inline void classify_neon(const uint8_t *b, raw_masks *m) {
  uint8x16_t v[4], q[4], s[4], w[4], o[4], d[4];
  for (unsigned i = 0; i < 4; i++) {
    v[i] = vld1q_u8(b + 16 * i);
    uint8x16_t up = vorrq_u8(v[i], vdupq_n_u8(0x20));
    q[i] = vceqq_u8(v[i], vdupq_n_u8('"'));
    s[i] = vceqq_u8(v[i], vdupq_n_u8('\\'));
    w[i] = vorrq_u8(vorrq_u8(vceqq_u8(v[i], vdupq_n_u8(' ')), vceqq_u8(v[i], vdupq_n_u8('\t'))),
                    vorrq_u8(vceqq_u8(v[i], vdupq_n_u8('\n')), vceqq_u8(v[i], vdupq_n_u8('\r'))));
    o[i] = vorrq_u8(vorrq_u8(vceqq_u8(v[i], vdupq_n_u8(':')), vceqq_u8(v[i], vdupq_n_u8(','))),
                    vorrq_u8(vceqq_u8(up, vdupq_n_u8('{')), vceqq_u8(up, vdupq_n_u8('}'))));
    d[i] = vorrq_u8(vcltq_u8(v[i], vdupq_n_u8(0x20)), vcgeq_u8(v[i], vdupq_n_u8(0x80)));
  }
  m->quote = neon_mask(q[0], q[1], q[2], q[3]);
  m->bslash = neon_mask(s[0], s[1], s[2], s[3]);
  m->ws = neon_mask(w[0], w[1], w[2], w[3]);
  m->op = neon_mask(o[0], o[1], o[2], o[3]);
  m->odd = neon_mask(d[0], d[1], d[2], d[3]);
}
#endif

/* ------------------------------------------------------------------ strings and scalars */

/* The bytes escaped by a backslash. Walks the backslashes that are not escaped
 * themselves, in order: each escapes the byte after it. *carry: the block's first byte is
 * escaped; on return, whether the next block's is. Costs one step per backslash, which
 * traces rarely hold (blocks without one cost a test). */
static inline uint64_t escaped_bits(uint64_t bs, uint64_t *carry) {
  uint64_t esc = *carry;
  *carry = 0;
  uint64_t b = bs & ~esc;
  while (b) {
    unsigned i = (unsigned)__builtin_ctzll(b);
    if (i == 63) {
      *carry = 1;
      break;
    }
    esc |= 2ull << i;
    b &= ~(3ull << i);
  }
  return esc;
}

/* Bit i = the XOR of bits 0..i: 1 from an opening quote up to, not including, the
 * closing one. */
static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

/* What the tail block needs to correct the carried state (see index_tail). */
typedef struct block_bits {
  uint64_t esc, scalar;
} block_bits;

/* A block's masks from its byte classes and the state carried from the block before it
 * (updated), and what the tail block needs. One body made twice: with the shift-and-XOR
 * prefix (every level) and with the carry-less multiply (the AVX2 level). */
#define DEFINE_FINISH_BLOCK(name, attr, prefix)                                           \
  attr static inline block_bits name(tr_struct_state *st, const raw_masks *m,             \
                                     tr_block_masks *out) {                               \
    uint64_t esc = (m->bslash | st->escaped) ? escaped_bits(m->bslash, &st->escaped) : 0; \
    uint64_t quote = m->quote & ~esc;                                                     \
    uint64_t in = prefix(quote) ^ st->in_string;                                          \
    st->in_string = (uint64_t)((int64_t)in >> 63);                                        \
    uint64_t scalar = ~(m->op | m->ws | quote | in);                                      \
    uint64_t start = scalar & ~((scalar << 1) | st->scalar);                              \
    st->scalar = scalar >> 63;                                                            \
    out->tok = (m->op & ~in) | quote | start;                                             \
    out->special = (m->bslash | m->odd) & in;                                             \
    return (block_bits){esc, scalar};                                                     \
  }

DEFINE_FINISH_BLOCK(finish_block, , prefix_xor)

#if defined(TR_X86) && defined(TRIAGE_HAVE_AVX2)
/* prefix_xor in one carry-less multiply by all ones (every CPU with AVX2 has PCLMULQDQ). */
__attribute__((target("pclmul"))) static inline uint64_t prefix_xor_clmul(uint64_t x) {
  __m128i v = _mm_set_epi64x(0, (long long)x);
  return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(v, _mm_set1_epi8((char)0xFF), 0));
}

DEFINE_FINISH_BLOCK(finish_block_clmul, __attribute__((target("avx2,pclmul"))), prefix_xor_clmul)
#endif

/* ------------------------------------------------------------------ the loops */

/* The last n < 64 bytes, padded with spaces. Padding changes nothing before it, but the
 * carried state must be that after byte n - 1: a backslash there escapes the first byte
 * of the next chunk, not a pad byte, and a scalar there continues into it. */
#define INDEX_TAIL(classify, finish)       \
  do {                                     \
    uint8_t pad[TR_BLOCK];                 \
    memset(pad, ' ', sizeof pad);          \
    memcpy(pad, buf, n);                   \
    raw_masks m;                           \
    classify(pad, &m);                     \
    block_bits bb = finish(&s, &m, masks); \
    s.escaped = (bb.esc >> n) & 1;         \
    s.scalar = (bb.scalar >> (n - 1)) & 1; \
  } while (0)

/* The carried state is a local (kept in registers), written back once. */
#define INDEX_LOOP(classify, finish)                                 \
  do {                                                               \
    tr_struct_state s = *st;                                         \
    for (; n >= TR_BLOCK; n -= TR_BLOCK, buf += TR_BLOCK, masks++) { \
      raw_masks m;                                                   \
      classify(buf, &m);                                             \
      (void)finish(&s, &m, masks);                                   \
    }                                                                \
    if (n) INDEX_TAIL(classify, finish);                             \
    *st = s;                                                         \
  } while (0)

static void index_scalar(tr_struct_state *st, const uint8_t *buf, size_t n, tr_block_masks *masks) {
  INDEX_LOOP(classify_scalar, finish_block);
}

#if defined(TR_X86) && defined(__SSE2__)
static void index_sse2(tr_struct_state *st, const uint8_t *buf, size_t n, tr_block_masks *masks) {
  INDEX_LOOP(classify_sse2, finish_block);
}
#endif

#ifdef TR_AVX2
__attribute__((target("avx2,pclmul"))) static void index_avx2(tr_struct_state *st,
                                                              const uint8_t *buf, size_t n,
                                                              tr_block_masks *masks) {
  INDEX_LOOP(classify_avx2, finish_block_clmul);
}
#endif

#ifdef TR_NEON
static void index_neon(tr_struct_state *st, const uint8_t *buf, size_t n, tr_block_masks *masks) {
  INDEX_LOOP(classify_neon, finish_block);
}
#endif

/* ------------------------------------------------------------------ dispatch */

static const char *const k_names[] = {"scalar", "sse2", "neon", "avx2"};

const char *tr_simd_level_name(tr_simd_level level) {
  if (level == TR_SIMD_OFF) return "off";
  return (unsigned)level < sizeof k_names / sizeof k_names[0] ? k_names[level] : "?";
}

int tr_simd_level_available(tr_simd_level level) {
  switch (level) {
    case TR_SIMD_SCALAR:
      return 1;
#if defined(TR_X86) && defined(__SSE2__)
    case TR_SIMD_SSE2:
      return 1;
#endif
#ifdef TR_AVX2
    case TR_SIMD_AVX2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
#endif
#ifdef TR_NEON
    case TR_SIMD_NEON:
      return 1;
#endif
    default:
      return 0;
  }
}

static tr_simd_level g_level;
static pthread_once_t g_level_once = PTHREAD_ONCE_INIT;

static void level_init(void) {
  tr_simd_level best = TR_SIMD_SCALAR;
  for (int l = TR_SIMD_SSE2; l <= TR_SIMD_AVX2; l++)
    if (tr_simd_level_available((tr_simd_level)l)) best = (tr_simd_level)l;
  /* a cap asked for in the environment, when this machine has that level */
  const char *want = getenv("TRIAGE_SIMD");
  for (int l = TR_SIMD_SCALAR; want && l <= TR_SIMD_AVX2; l++)
    if (strcmp(want, k_names[l]) == 0 && tr_simd_level_available((tr_simd_level)l))
      best = (tr_simd_level)l;
  g_level = want && strcmp(want, "off") == 0 ? TR_SIMD_OFF : best;
}

tr_simd_level tr_simd_level_get(void) {
  pthread_once(&g_level_once, level_init);
  return g_level;
}

void tr_struct_index_at(tr_simd_level level, tr_struct_state *st, const uint8_t *buf, size_t n,
                        tr_block_masks *masks) {
  pthread_once(&g_class_once, class_init);
  switch (level) {
#ifdef TR_AVX2
    case TR_SIMD_AVX2:
      index_avx2(st, buf, n, masks);
      return;
#endif
#if defined(TR_X86) && defined(__SSE2__)
    case TR_SIMD_SSE2:
      index_sse2(st, buf, n, masks);
      return;
#endif
#ifdef TR_NEON
    case TR_SIMD_NEON:
      index_neon(st, buf, n, masks);
      return;
#endif
    default:
      index_scalar(st, buf, n, masks);
      return;
  }
}

void tr_struct_index(tr_struct_state *st, const uint8_t *buf, size_t n, tr_block_masks *masks) {
  tr_struct_index_at(tr_simd_level_get(), st, buf, n, masks);
}
