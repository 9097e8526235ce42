/* Unit tests for the structural scanner (src/trace/structural.c): every SIMD level gives
 * the masks of a byte-at-a-time lexer, on random and real input, cut into chunks of any
 * length. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace/number.h"
#include "trace/structural.h"

/* ------------------------------------------------------------------ the reference lexer */

/* The masks by definition (structural.h), one byte at a time, with its own state. */
typedef struct ref_state {
  bool in_string, escaped, scalar;
} ref_state;

static void ref_index(ref_state *st, const uint8_t *buf, size_t n, tr_block_masks *masks) {
  memset(masks, 0, (n + TR_BLOCK - 1) / TR_BLOCK * sizeof *masks);
  for (size_t i = 0; i < n; i++) {
    uint8_t c = buf[i];
    uint64_t bit = 1ull << (i % TR_BLOCK);
    tr_block_masks *m = &masks[i / TR_BLOCK];
    bool escaped = st->escaped;
    st->escaped = c == '\\' && !escaped;
    bool quote = c == '"' && !escaped;
    if (st->in_string) {
      if (c == '\\' || c < 0x20 || c >= 0x80) m->special |= bit;
      if (quote) {
        m->tok |= bit;
        st->in_string = false;
      }
      st->scalar = false;
      continue;
    }
    bool op = c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',';
    bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (quote) {
      m->tok |= bit;
      st->in_string = true;
      st->scalar = false;
    } else if (op) {
      m->tok |= bit;
      st->scalar = false;
    } else if (ws) {
      st->scalar = false;
    } else {
      if (!st->scalar) m->tok |= bit;
      st->scalar = true;
    }
  }
}

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64*: reproducible, no libc state */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Indexes buf in chunks whose lengths come from cuts (cycled), at level, into masks laid
 * out per chunk; compares each chunk with the reference. */
static void check_level(tr_simd_level level, const uint8_t *buf, size_t n, const size_t *cuts,
                        size_t n_cuts) {
  tr_struct_state st = {0, 0, 0};
  ref_state rs = {false, false, false};
  size_t off = 0, k = 0;
  tr_block_masks got[64], want[64];
  while (off < n) {
    size_t len = cuts[k++ % n_cuts];
    if (len > n - off) len = n - off;
    if (len > sizeof got / sizeof got[0] * TR_BLOCK) len = sizeof got / sizeof got[0] * TR_BLOCK;
    tr_struct_index_at(level, &st, buf + off, len, got);
    ref_index(&rs, buf + off, len, want);
    for (size_t b = 0; b < (len + TR_BLOCK - 1) / TR_BLOCK; b++) {
      cr_assert_eq(got[b].tok, want[b].tok,
                   "%s: tok of block %zu of the chunk at %zu (len %zu): %016llx, want %016llx",
                   tr_simd_level_name(level), b, off, len, (unsigned long long)got[b].tok,
                   (unsigned long long)want[b].tok);
      cr_assert_eq(got[b].special, want[b].special, "%s: special of block %zu at %zu",
                   tr_simd_level_name(level), b, off);
    }
    cr_assert_eq(st.in_string != 0, rs.in_string, "%s: in_string after %zu",
                 tr_simd_level_name(level), off + len);
    cr_assert_eq(st.escaped != 0, rs.escaped, "%s: escaped after %zu", tr_simd_level_name(level),
                 off + len);
    cr_assert_eq(st.scalar != 0, rs.scalar, "%s: scalar after %zu", tr_simd_level_name(level),
                 off + len);
    off += len;
  }
}

static void check_all_levels(const uint8_t *buf, size_t n, const size_t *cuts, size_t n_cuts) {
  for (int l = TR_SIMD_SCALAR; l <= TR_SIMD_AVX2; l++)
    if (tr_simd_level_available((tr_simd_level)l))
      check_level((tr_simd_level)l, buf, n, cuts, n_cuts);
}

/* ------------------------------------------------------------------ tests */

Test(structural, hand_made_cases) {
  static const char *const cases[] = {
      "{\"ph\": \"X\", \"name\": \"a\\\"b\", \"ts\": 12.5, \"args\": {\"x\": [1, -2e3, true]}}",
      "\"\\\\\" \"\\\\\\\"\" x \\\"y\\\\\"z\"",
      "[1,2 ,3\t,\n4\r]  nul tru\x01\x80 \"\x01\xff\"",
      "\"a string that runs to the end of the input and past the first block of sixty-four "
      "bytes, \\u00e9 and all\"",
      "",
      "\\",
      "\"",
  };
  size_t cuts[] = {1, 2, 3, 5, 63, 64, 65, 127, 128, 4096};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++)
      check_all_levels((const uint8_t *)cases[i], strlen(cases[i]), &cuts[c], 1);
}

Test(structural, random_bytes_in_random_chunks) {
  /* an alphabet dense in what the lexer decides on, and every other byte now and then */
  static const char alpha[] = "{}[]:,\"\"\"\\\\ \t\n\r a1-.e\x01\x1f\x7f\x80\xc3\xff";
  uint8_t buf[3000];
  for (int round = 0; round < 400; round++) {
    size_t n = rnd() % sizeof buf;
    for (size_t i = 0; i < n; i++)
      buf[i] = rnd() % 16 ? (uint8_t)alpha[rnd() % (sizeof alpha - 1)] : (uint8_t)rnd();
    size_t cuts[8];
    for (size_t c = 0; c < 8; c++) cuts[c] = 1 + rnd() % (c < 4 ? 70 : 700);
    check_all_levels(buf, n, cuts, 8);
  }
}

Test(structural, backslash_runs_across_blocks) {
  /* runs of 1..130 backslashes ending at every offset around a block edge, then a quote */
  uint8_t buf[512];
  for (size_t run = 1; run <= 130; run++)
    for (size_t end = 60; end < 70; end++) {
      if (end < run) continue;
      memset(buf, 'a', sizeof buf);
      buf[0] = '"';
      memset(buf + end - run + 1, '\\', run);
      buf[end + 1] = '"';
      buf[end + 3] = '"';
      size_t whole = sizeof buf, cut = end + 1;
      check_all_levels(buf, sizeof buf, &whole, 1);
      check_all_levels(buf, sizeof buf, &cut, 1);
    }
}

Test(structural, real_trace_in_chunks) {
  const char *path = TRIAGE_SHARED_DIR "/traces/real/hta_triton_tiny_a100.json.gz";
  gzFile f = gzopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  static uint8_t buf[1 << 16];
  int n = gzread(f, buf, sizeof buf);
  gzclose(f);
  cr_assert_gt(n, 1000);
  size_t cuts[] = {4096, 1000, 64, 1, 777};
  check_all_levels(buf, (size_t)n, cuts, 5);
}

Test(structural, level_from_the_environment) {
  /* the level in use is one this machine has, and the one TRIAGE_SIMD names when it has it */
  tr_simd_level l = tr_simd_level_get();
  cr_assert(tr_simd_level_available(l));
  const char *want = getenv("TRIAGE_SIMD");
  for (int k = TR_SIMD_SCALAR; want && k <= TR_SIMD_AVX2; k++)
    if (strcmp(want, tr_simd_level_name((tr_simd_level)k)) == 0 &&
        tr_simd_level_available((tr_simd_level)k))
      cr_assert_eq(l, (tr_simd_level)k, "TRIAGE_SIMD=%s but the level is %s", want,
                   tr_simd_level_name(l));
}

/* ------------------------------------------------------------------ numbers */

/* tr_decimal_to_double(m, k) against strtod on the text of m / 10^k. */
static void check_decimal(uint64_t m, unsigned k, bool neg) {
  char text[64], digits[32];
  snprintf(digits, sizeof digits, "%llu", (unsigned long long)m);
  size_t n = strlen(digits);
  if (k >= n) { /* 0.000ddd */
    snprintf(text, sizeof text, "%s0.%0*d%s", neg ? "-" : "", (int)(k - n), 0, digits);
    if (k == n) snprintf(text, sizeof text, "%s0.%s", neg ? "-" : "", digits);
  } else {
    snprintf(text, sizeof text, "%s%.*s%s%s", neg ? "-" : "", (int)(n - k), digits, k ? "." : "",
             digits + n - k);
  }
  double want = strtod(text, NULL), got = 0.0;
  bool ok = tr_decimal_to_double(m, k, neg, &got);
  if (!ok) {
    cr_assert(k > 19 && m > (1ull << 53), "refused %s", text);
    return;
  }
  cr_assert(memcmp(&got, &want, sizeof got) == 0, "%s: got %.17g, strtod %.17g", text, got, want);
}

Test(number, decimal_to_double_equals_strtod) {
  /* timestamps of every width around 2^53 and 2^63, three fractional digits and more */
  for (int i = 0; i < 200000; i++) {
    uint64_t m = rnd();
    unsigned width = 1 + (unsigned)(rnd() % 19);
    uint64_t lim = 1;
    for (unsigned w = 0; w < width; w++) lim *= 10;
    m %= lim;
    unsigned k = (unsigned)(rnd() % (i % 4 ? 4 : 23));
    check_decimal(m, k, rnd() & 1);
  }
  /* exact ties: an odd 54-bit o over 2^k is halfway between two doubles, and its decimal
   * text is m = o * 5^k over 10^k */
  for (int i = 0; i < 20000; i++) {
    uint64_t o = (1ull << 53) + 2 * (rnd() % (1ull << 52)) + 1, five = 1;
    for (unsigned k = 1; k <= 4; k++) {
      five *= 5;
      check_decimal(o * five, k, false);
    }
  }
  /* and around them */
  for (int i = 0; i < 20000; i++) {
    uint64_t m = (1ull << 53) + (rnd() % (1ull << 60));
    for (unsigned k = 1; k <= 19; k++) check_decimal(m, k, false);
    check_decimal(m | 1, 0, false);
  }
  check_decimal(0, 3, true);
  check_decimal(10000000000000000000ull - 1, 19, false);
  check_decimal(10000000000000000000ull - 1, 3, false);
  check_decimal(1ull << 53, 22, false);
}
