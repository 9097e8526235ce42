/* Unit tests for the SIMD scanner: the structural masks (src/trace/structural.c) of every
 * SIMD level against a byte-at-a-time lexer, on random and real input cut into chunks of
 * any length; the exact decimal conversion (number.c) against strtod; and the fast path
 * (fast_event.c) against the byte scanner on every trace, fixture and corpus entry. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fuzz/trace_same.h"
#include "gzip_member.h"
#include "trace/number.h"
#include "trace/structural.h"
#include "trace/trace.h"

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

/* The shared reference tree (../shared) is beside a developer's checkout, not every
 * clone: without it the tests that read its traces are skipped, as golden/shared is. */
static void need_shared(void) {
  struct stat st;
  if (stat(TRIAGE_SHARED_DIR "/traces/real", &st) != 0)
    cr_skip_test("no shared traces at %s", TRIAGE_SHARED_DIR "/traces/real");
}

Test(structural, real_trace_in_chunks) {
  need_shared();
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
  const char *want = getenv("TRIAGE_SIMD");
  if (want && strcmp(want, "off") == 0) { /* the byte scanner alone */
    cr_assert_eq(l, TR_SIMD_OFF, "TRIAGE_SIMD=off but the level is %s", tr_simd_level_name(l));
    return;
  }
  cr_assert(tr_simd_level_available(l));
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

/* ------------------------------------------------------------------ the two scanners */

/* Every input the repository and the shared tree hold, read by the byte scanner and by
 * the fast path at every SIMD level this machine has, at several chunk sizes (so events
 * cross chunk boundaries and the fast path must hand over and pick up again): the same
 * trace with the same string ids, or the same error at the same offset. */

typedef struct warned {
  uint64_t skipped, skipped_off, replaced;
} warned;

static void note_warning(void *ctx, const tr_warning *w) {
  warned *n = ctx;
  if (w->code == TR_WARN_SKIPPED_EVENTS) {
    n->skipped = w->count;
    n->skipped_off = w->offset;
  } else {
    n->replaced = w->count;
  }
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  *len = n;
  return buf;
}

/* The options of a read (ahead: tr_read_options.ahead; TR_AHEAD_OFF: the reader's thread
 * parses every event), its warnings noted in *w; *w and *err emptied. */
static tr_read_options read_options(tr_scanner scanner, size_t chunk, unsigned ahead, tr_error *err,
                                    warned *w) {
  tr_read_options o;
  memset(&o, 0, sizeof o);
  o.scanner = scanner;
  o.chunk_size = chunk;
  o.ahead = ahead;
  o.warn = note_warning;
  o.warn_ctx = w;
  memset(w, 0, sizeof *w);
  memset(err, 0, sizeof *err);
  return o;
}

static tr_trace *read_ahead(const uint8_t *buf, size_t len, tr_scanner scanner, size_t chunk,
                            unsigned ahead, tr_error *err, warned *w) {
  tr_read_options o = read_options(scanner, chunk, ahead, err, w);
  return tr_trace_read_buffer("input", buf, len, &o, err);
}

static tr_trace *read_with(const uint8_t *buf, size_t len, tr_scanner scanner, size_t chunk,
                           tr_error *err, warned *w) {
  return read_ahead(buf, len, scanner, chunk, TR_AHEAD_OFF, err, w);
}

/* The fast path at each SIMD level this machine has (AUTO is one of them). */
static const tr_scanner k_levels[] = {TR_SCANNER_SCALAR, TR_SCANNER_SSE2, TR_SCANNER_NEON,
                                      TR_SCANNER_AVX2};
static const tr_simd_level k_level_of[] = {TR_SIMD_SCALAR, TR_SIMD_SSE2, TR_SIMD_NEON,
                                           TR_SIMD_AVX2};

/* The file at path read from the file itself (the source's ring on its second thread,
 * plain JSON too), as read_ahead reads a buffer. */
static tr_trace *read_file(const char *path, size_t chunk, unsigned ahead, tr_error *err,
                           warned *w) {
  tr_read_options o = read_options(TR_SCANNER_AUTO, chunk, ahead, err, w);
  return tr_trace_read(path, &o, err);
}

/* The byte scanner's read of buf against the fast path's (scanner, chunk size); with buf
 * NULL, the fast path's read of the file at path. */
static void check_one(const char *path, const uint8_t *buf, size_t len, const tr_trace *ref,
                      const tr_error *e0, const warned *w0, tr_scanner scanner, size_t chunk,
                      unsigned ahead) {
  tr_error e1;
  warned w1;
  tr_trace *t = buf ? read_ahead(buf, len, scanner, chunk, ahead, &e1, &w1)
                    : read_file(path, chunk, ahead, &e1, &w1);
  cr_assert_eq(ref == NULL, t == NULL, "%s (scanner %d, chunk %zu): one read failed: %s%s", path,
               (int)scanner, chunk, e0->message, e1.message);
  if (ref) {
    const char *d = trace_diff(ref, t, true);
    cr_assert_null(d, "%s (scanner %d, chunk %zu): %s", path, (int)scanner, chunk, d);
    cr_assert(memcmp(w0, &w1, sizeof w1) == 0, "%s: warnings differ", path);
  } else if (e0->code != TR_ERR_GZIP) {
    cr_assert(
        e0->code == e1.code && e0->offset == e1.offset && strcmp(e0->message, e1.message) == 0,
        "%s (scanner %d, chunk %zu): '%s' at %llu, fast '%s' at %llu", path, (int)scanner, chunk,
        e0->message, (unsigned long long)e0->offset, e1.message, (unsigned long long)e1.offset);
  }
  tr_trace_destroy(t);
}

/* Shares of each chunk parsed ahead on the inflate thread (tr_read_options.ahead). */
static const unsigned k_ahead[] = {TR_AHEAD_ALL, 24};

/* Reading ahead (gzip input only: a plain buf is gzipped first) against the byte scanner,
 * at each of k_ahead with the default chunk and small_chunk (0: none; the smallest chunks
 * would only time the thread hand-over of each). */
static size_t check_ahead(const char *path, const uint8_t *buf, size_t len, size_t small_chunk) {
  size_t gz_len = len, compared = 0;
  uint8_t *gz =
      len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b ? NULL : gzip_member(buf, len, &gz_len);
  const uint8_t *in = gz ? gz : buf;
  tr_error e0;
  warned w0;
  tr_trace *ref = read_with(in, gz_len, TR_SCANNER_BYTES, 0, &e0, &w0);
  for (size_t a = 0; a < sizeof k_ahead / sizeof k_ahead[0]; a++) {
    check_one(path, in, gz_len, ref, &e0, &w0, TR_SCANNER_AUTO, 0, k_ahead[a]);
    compared++;
    if (small_chunk) {
      check_one(path, in, gz_len, ref, &e0, &w0, TR_SCANNER_AUTO, small_chunk, k_ahead[a]);
      compared++;
    }
  }
  tr_trace_destroy(ref);
  free(gz);
  return compared;
}

/* path read by the byte scanner, then by the fast path at every level with each of
 * chunks, by the default one (AUTO) with each of small_chunks, and with reading ahead. */
static size_t check_buffer(const char *path, const uint8_t *buf, size_t len, const size_t *chunks,
                           size_t n_chunks, const size_t *small_chunks, size_t n_small) {
  size_t compared = 0;
  tr_error e0;
  warned w0;
  tr_trace *ref = read_with(buf, len, TR_SCANNER_BYTES, 0, &e0, &w0);
  for (size_t l = 0; l < sizeof k_levels / sizeof k_levels[0]; l++) {
    if (!tr_simd_level_available(k_level_of[l])) continue;
    for (size_t c = 0; c < n_chunks; c++, compared++)
      check_one(path, buf, len, ref, &e0, &w0, k_levels[l], chunks[c], TR_AHEAD_OFF);
  }
  for (size_t c = 0; c < n_small; c++, compared++)
    check_one(path, buf, len, ref, &e0, &w0, TR_SCANNER_AUTO, small_chunks[c], TR_AHEAD_OFF);
  tr_trace_destroy(ref);
  return compared + check_ahead(path, buf, len, n_small ? small_chunks[0] : 0);
}

/* A plain file (its bytes buf) read from its path, which goes through the source's second
 * thread as gzip does (a buffer is read in place), against the byte scanner's read of
 * buf: without and with reading ahead, in the default chunk and in small_chunk (0: none). */
static size_t check_file(const char *path, const uint8_t *buf, size_t len, size_t small_chunk) {
  if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) return 0; /* gzip: as its buffer */
  static const unsigned ahead[] = {TR_AHEAD_OFF, TR_AHEAD_ALL, 24};
  size_t compared = 0;
  tr_error e0;
  warned w0;
  tr_trace *ref = read_with(buf, len, TR_SCANNER_BYTES, 0, &e0, &w0);
  for (size_t a = 0; a < sizeof ahead / sizeof ahead[0]; a++) {
    check_one(path, NULL, 0, ref, &e0, &w0, TR_SCANNER_AUTO, 0, ahead[a]);
    compared++;
    if (small_chunk) {
      check_one(path, NULL, 0, ref, &e0, &w0, TR_SCANNER_AUTO, small_chunk, ahead[a]);
      compared++;
    }
  }
  tr_trace_destroy(ref);
  return compared;
}

static size_t check_same(const char *path, const size_t *chunks, size_t n_chunks,
                         const size_t *small_chunks, size_t n_small) {
  size_t len;
  uint8_t *buf = slurp(path, &len);
  size_t compared = check_buffer(path, buf, len, chunks, n_chunks, small_chunks, n_small) +
                    check_file(path, buf, len, n_small ? small_chunks[0] : 0);
  free(buf);
  return compared;
}

/* Every regular file under dir whose name ends in one of the suffixes. */
static size_t check_tree(const char *dir, const size_t *chunks, size_t n_chunks,
                         const size_t *small_chunks, size_t n_small) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      n += check_tree(path, chunks, n_chunks, small_chunks, n_small);
    } else if (S_ISREG(st.st_mode) && !strstr(de->d_name, ".md") && !strstr(de->d_name, ".py") &&
               !strstr(de->d_name, ".yaml") && !strstr(de->d_name, ".txt")) {
      n += check_same(path, chunks, n_chunks, small_chunks, n_small);
    }
  }
  closedir(d);
  return n;
}

Test(scanners, shared_traces) {
  need_shared();
  /* the real traces are large: the default chunk, and one that cuts events often */
  size_t chunks[] = {0}, small[] = {65536 + 7};
  size_t n = check_tree(TRIAGE_SHARED_DIR "/traces", chunks, 1, small, 1);
  cr_assert_gt(n, 0, "no shared trace found under %s", TRIAGE_SHARED_DIR "/traces");
}

Test(scanners, fast_path_reads_nearly_every_event) {
  need_shared();
  /* past the sampled first 256, a Python-heavy, a CPU-op-heavy (pretty-printed) and a mixed
   * trace are read by the fast path but for the events that cross a chunk's end; with
   * TRIAGE_SIMD=off AUTO reads none there, and the best level is asked for by name */
  bool off = tr_simd_level_get() == TR_SIMD_OFF;
  tr_scanner fast = TR_SCANNER_SCALAR;
  for (int l = TR_SIMD_SSE2; off && l <= TR_SIMD_AVX2; l++)
    if (tr_simd_level_available((tr_simd_level)l)) fast = (tr_scanner)(TR_SCANNER_SCALAR + l);
  static const char *const names[] = {"sglang_qwen3_8b_prefilldecode_mi300x.json.gz",
                                      "hta_async_cpu_to_gpu_a100.json.gz",
                                      "hf_qwen1.5_0.5b_chat_h100.json.gz"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/real/%s", TRIAGE_SHARED_DIR, names[i]);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    tr_error err;
    warned w;
    tr_trace *t = read_with(buf, len, off ? fast : TR_SCANNER_AUTO, 0, &err, &w);
    cr_assert_not_null(t, "%s: %s", path, err.message);
    uint64_t n = tr_trace_event_count(t), on_fast = tr_trace_fast_count(t);
    cr_assert_gt(on_fast * 100, (n - 256) * 99, "%s: %llu of %llu events on the fast path", path,
                 (unsigned long long)on_fast, (unsigned long long)n);
    tr_trace_destroy(t);
    if (off) {
      t = read_with(buf, len, TR_SCANNER_AUTO, 0, &err, &w);
      cr_assert_eq(tr_trace_fast_count(t), 0, "TRIAGE_SIMD=off: AUTO is the byte scanner");
      tr_trace_destroy(t);
    }
    t = read_with(buf, len, TR_SCANNER_BYTES, 0, &err, &w);
    cr_assert_eq(tr_trace_fast_count(t), 0);
    tr_trace_destroy(t);
    free(buf);
  }
}

Test(scanners, reading_ahead_takes_its_share) {
  need_shared();
  /* the events of each chunk's end the inflate thread parsed are read from its records (not
   * the sampled first 256, nor the event after each chunk's start it cannot find); none
   * when it is off, and the same trace either way (shared_traces) */
  const char *path = TRIAGE_SHARED_DIR "/traces/real/sglang_qwen3_8b_prefilldecode_mi300x.json.gz";
  size_t len;
  uint8_t *buf = slurp(path, &len);
  static const unsigned shares[] = {TR_AHEAD_OFF, 16, TR_AHEAD_ALL};
  static const unsigned lo[] = {0, 15, 90}, hi[] = {0, 35, 100}; /* percent of the events */
  for (size_t i = 0; i < sizeof shares / sizeof shares[0]; i++) {
    tr_error err;
    warned w;
    tr_trace *t = read_ahead(buf, len, TR_SCANNER_AUTO, 0, shares[i], &err, &w);
    cr_assert_not_null(t, "%s: %s", path, err.message);
    uint64_t n = tr_trace_event_count(t), a = tr_trace_ahead_count(t);
    bool fast = tr_simd_level_get() != TR_SIMD_OFF;
    cr_assert(a * 100 >= (fast ? lo[i] : 0) * n && a * 100 <= (fast ? hi[i] : 0) * n,
              "share %u: %llu of %llu events read ahead", shares[i], (unsigned long long)a,
              (unsigned long long)n);
    tr_trace_destroy(t);
  }
  free(buf);
}

Test(scanners, fixtures_and_corpora) {
  static const char *const dirs[] = {
      TRIAGE_FIXTURE_DIR,
      TRIAGE_SOURCE_DIR "/tests/fuzz/corpus/fuzz_trace_reader",
      TRIAGE_SOURCE_DIR "/tests/fuzz/regressions/fuzz_trace_reader",
      TRIAGE_SOURCE_DIR "/tests/fuzz/corpus/fuzz_scanner",
      TRIAGE_SOURCE_DIR "/tests/fuzz/regressions/fuzz_scanner",
      TRIAGE_SOURCE_DIR "/tests/bad-input/cases",
  };
  size_t chunks[] = {0, 777}, small[] = {4096 + 1, 64, 7};
  size_t n = 0;
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
    n += check_tree(dirs[i], chunks, 2, small, 3);
  cr_assert_gt(n, 100);
}

/* More than tenths / 10 of the events of buf[0, n) went through the fast path. */
static void assert_fast_share(const uint8_t *buf, size_t n, tr_scanner scanner, unsigned tenths) {
  tr_error err;
  warned w;
  tr_trace *t = read_with(buf, n, scanner, 0, &err, &w);
  cr_assert_not_null(t, "%s", err.message);
  cr_assert_gt(tr_trace_fast_count(t) * 10, tr_trace_event_count(t) * tenths,
               "%llu of %llu on the fast path", (unsigned long long)tr_trace_fast_count(t),
               (unsigned long long)tr_trace_event_count(t));
  tr_trace_destroy(t);
}

/* A buffer of cap bytes that opens an events array, *n its length. */
static char *open_events(size_t cap, size_t *n) {
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  *n = (size_t)snprintf(buf, cap, "{\"traceEvents\": [\n");
  return buf;
}

/* Closes the events array of buf[0, n), checks every event read as the byte scanner
 * reads it (at every level, whole and in chunks), that more than tenths / 10 of them went
 * through the fast path, and frees buf. */
static void check_events(const char *name, char *buf, size_t n, size_t cap, tr_scanner scanner,
                         unsigned tenths) {
  n += (size_t)snprintf(buf + n, cap - n, "\n]}\n");
  size_t chunks[] = {0, 4096 + 3}, small[] = {777};
  check_buffer(name, (const uint8_t *)buf, n, chunks, 2, small, 1);
  assert_fast_share((const uint8_t *)buf, n, scanner, tenths);
  free(buf);
}

/* The args of cpu_op i in one of five member sets. */
static void op_args(char *a, size_t cap, unsigned shape, unsigned i) {
  unsigned id = 1000 + i, dim = i % 7;
  switch (shape) {
    case 0:
      snprintf(a, cap, "\"External id\": %u, \"Input Dims\": [[%u, 8]], \"Ev Idx\": %u", id, dim,
               i);
      break;
    case 1:
      snprintf(a, cap,
               "\"External id\": %u, \"Input Dims\": [[%u, 8]], \"Input type\": [\"float\"], "
               "\"Ev Idx\": %u",
               id, dim, i);
      break;
    case 2:
      snprintf(a, cap, "\"External id\": %u, \"Record function id\": %u, \"Ev Idx\": %u", id, dim,
               i);
      break;
    case 3:
      snprintf(a, cap, "\"External id\": %u, \"Record function id\": %u", id, dim);
      break;
    default:
      snprintf(a, cap, "\"External id\": %u, \"Ev Idx\": %u, \"Input Dims\": [[%u]]", id, i, dim);
      break;
  }
}

/* cpu_ops alike up to their args, which differ in which members they have, where the
 * fast path's shapes part (a shape hands over to one that begins the same at the literal
 * they differ in): every event read as the byte scanner reads it, in any order, at any
 * point of the args, with the odd event no shape reads (an escape in its name) between. */
Test(scanners, shapes_that_part_in_their_args) {
  size_t cap = 1u << 20, n = 0;
  char *buf = open_events(cap, &n);
  for (unsigned i = 0; i < 2000; i++) {
    unsigned shape = (unsigned)(rnd() % 5);
    char a[256];
    op_args(a, sizeof a, shape, i);
    const char *name = rnd() % 50 ? "aten::mm" : "aten::\\u00e9mm"; /* an escape: no shape */
    n += (size_t)snprintf(buf + n, cap - n,
                          "%s  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 7, "
                          "\"tid\": 7, \"ts\": %u.%03u, \"dur\": 2.5, \"args\": {%s}}",
                          i ? ",\n" : "", name, 1000 + 3 * i, i % 1000, a);
    cr_assert_lt(n, cap - 1024);
  }
  /* and the fast path took nearly all of them */
  check_events("shapes_that_part_in_their_args", buf, n, cap, TR_SCANNER_SCALAR, 8);
}

/* Kinds of event that follow each other in a pattern, as Kineto writes them (an op, its
 * runtime call, the call's flow start, its kernel, the flow's end), now and then out of
 * turn, so the shape guessed from the last one matched is often the wrong one; and two
 * ops alike in their literals but for one member read by another kind of reader (the
 * External id a number, a string or null; a dims container or a number), which part at a
 * value, not at a literal: the shape guessed may read an event's first pieces and fail at
 * a literal where only a shape of a shorter common prefix goes on. Every event read as the
 * byte scanner reads it, and nearly all on the fast path. */
Test(scanners, shapes_guessed_from_the_last_kind) {
  size_t cap = 1u << 21, n = 0;
  char *buf = open_events(cap, &n);
  for (unsigned i = 0; i < 6000; i++) {
    unsigned kind = rnd() % 8 ? i % 5 : (unsigned)(rnd() % 5), id = 100 + i / 5;
    char a[128], e[32], d[32], ev[512];
    unsigned pick = rnd() % 6 ? 0 : (unsigned)(rnd() % 3);
    if (pick == 2)
      snprintf(e, sizeof e, "null");
    else
      snprintf(e, sizeof e, pick ? "\"e%u\"" : "%u", id);
    if (rnd() % 4)
      snprintf(d, sizeof d, "[[%u, 8]]", i % 9);
    else
      snprintf(d, sizeof d, "%u", i % 9);
    switch (kind) {
      case 0:
        snprintf(a, sizeof a, "\"External id\": %s, \"Input Dims\": %s, \"Ev Idx\": %u", e, d, i);
        snprintf(ev, sizeof ev,
                 "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 7, "
                 "\"tid\": 7, \"ts\": %u, \"dur\": 9, \"args\": {%s}}",
                 1000 + 3 * i, a);
        break;
      case 1:
        snprintf(ev, sizeof ev,
                 "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                 "\"pid\": 7, \"tid\": 7, \"ts\": %u, \"dur\": 4, \"args\": {\"External id\": %u, "
                 "\"cbid\": 211, \"correlation\": %u}}",
                 1000 + 3 * i, id, id);
        break;
      case 2:
      case 4:
        snprintf(ev, sizeof ev,
                 "{\"ph\": \"%s\", \"id\": %u, \"pid\": 7, \"tid\": 7, \"ts\": %u, \"cat\": "
                 "\"async_cpu_to_gpu\", \"name\": \"async_gpu\", \"bp\": \"e\"}",
                 kind == 2 ? "s" : "f", id, 1000 + 3 * i);
        break;
      default:
        snprintf(ev, sizeof ev,
                 "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, "
                 "\"ts\": %u.5, \"dur\": 3.25, \"args\": {\"External id\": %u, \"stream\": 7, "
                 "\"correlation\": %u, \"grid\": [%u, 1, 1]}}",
                 2000 + 3 * i, id, id, 1 + i % 3);
        break;
    }
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ",\n" : "", ev);
    cr_assert_lt(n, cap - 1024);
  }
  check_events("shapes_guessed_from_the_last_kind", buf, n, cap, TR_SCANNER_AUTO, 9);
}

/* Kernels alike but for one letter of a member name (its case flipped), in literals of a
 * shape of every length class (", \"ts\": " 8 bytes, ", \"Group size\": " up to 16,
 * ", \"args\": {\"External id\": " up to 32, the first one past 32), members the reader
 * keeps, with letters in each compare word: a shape's literal compare must see a
 * difference in any byte, or it would read "duR" as dur. Now and then an event whose first literal
 * holds four ph and cat values (more than a shape piece takes: the token walk reads it). Every
 * event read as the byte scanner reads it, and most of them on the fast path. */
Test(scanners, literals_that_differ_in_one_letter) {
  size_t cap = 1u << 21, n = 0;
  char *buf = open_events(cap, &n);
  for (unsigned i = 0; i < 4000; i++) {
    char ev[512];
    int len = snprintf(ev, sizeof ev, "%s", i ? ",\n" : "");
    bool four = rnd() % 40 == 0; /* ph, cat, ph, cat in the first literal */
    if (four)
      len += snprintf(ev + len, sizeof ev - (size_t)len, "{\"ph\": \"X\", \"cat\": \"cpu_op\", ");
    len +=
        snprintf(ev + len, sizeof ev - (size_t)len,
                 "%s\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"f\", \"pid\": 7, \"tid\": 7, "
                 "\"ts\": %u.5, \"dur\": 1.25, \"args\": {\"External id\": %u, \"Group size\": 2, "
                 "\"Python id\": %u, \"Process Group Description\": \"pg\", "
                 "\"correlation\": %u}}",
                 four ? "" : "{", 100 + i, i / 7, i, i);
    if (rnd() % 3 == 0) { /* flip the case of one letter of a member name */
      size_t at = (size_t)(rnd() % (size_t)len);
      for (size_t k = 0; k < (size_t)len; k++, at = (at + 1) % (size_t)len) {
        const char *quote = strchr(ev + at, '"'); /* a key's closing quote comes before ':' */
        if (ev[at] >= 'a' && ev[at] <= 'z' && quote && quote[1] == ':') {
          ev[at] = (char)(ev[at] - 'a' + 'A');
          break;
        }
      }
    }
    cr_assert_lt(n + (size_t)len, cap - 64);
    memcpy(buf + n, ev, (size_t)len);
    n += (size_t)len;
  }
  check_events("literals_that_differ_in_one_letter", buf, n, cap, TR_SCANNER_AUTO, 5);
}

/* Python frames alike but for their numbers, which a shape reads straight from the bytes:
 * integers and decimals of 1 to 22 digits (ids past 8 digits, integer times in
 * microseconds, mantissas past 19 digits), a leading zero, a sign, an exponent; every event
 * read as the byte scanner reads it. Then one number past TR_MAX_NUMBER_CHARS in a value
 * nobody keeps, an integer and a decimal: the same error at the same offset from both. */
static size_t frame_events(char *buf, size_t cap, unsigned n_events, size_t long_at, bool frac) {
  size_t n = (size_t)snprintf(buf, cap, "{\"traceEvents\": [\n");
  for (unsigned i = 0; i < n_events; i++) {
    char id[40], x[64];
    unsigned digits = 1 + (unsigned)(rnd() % 22);
    id[0] = (char)('1' + rnd() % 9);
    for (unsigned d = 1; d < digits; d++) id[d] = (char)('0' + rnd() % 10);
    id[digits] = '\0';
    static const char *const odd[] = {"0", "0.000125", "-17", "1e3", "2.5E-2", "0.5", "-0.0"};
    if (rnd() % 4 == 0)
      snprintf(x, sizeof x, "%s", odd[rnd() % 7]);
    else
      snprintf(x, sizeof x, "%s.%03u", id, (unsigned)(rnd() % 1000));
    n += (size_t)snprintf(buf + n, cap - n,
                          "%s{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f%u\", "
                          "\"pid\": 7, \"tid\": 7, \"ts\": %s, \"dur\": %u.5, \"args\": "
                          "{\"Python id\": %s, \"x\": %s}}",
                          i ? ",\n" : "", i % 3, rnd() % 2 ? id : x, i % 50, id, x);
    if (i == long_at) {
      n += (size_t)snprintf(buf + n, cap - n,
                            ",\n{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f0\", "
                            "\"pid\": 7, \"tid\": 7, \"ts\": 5.5, \"dur\": 1.5, \"args\": "
                            "{\"Python id\": 9, \"x\": 1");
      for (unsigned d = 0; d < TR_MAX_NUMBER_CHARS + 10; d++) buf[n++] = (char)('0' + d % 10);
      if (frac) n += (size_t)snprintf(buf + n, cap - n, ".25");
      n += (size_t)snprintf(buf + n, cap - n, "}}");
    }
    cr_assert_lt(n, cap - 2 * TR_MAX_NUMBER_CHARS);
  }
  n += (size_t)snprintf(buf + n, cap - n, "\n]}\n");
  return n;
}

Test(scanners, numbers_of_every_length_in_shaped_events) {
  size_t cap = 1u << 21;
  char *buf = malloc(cap);
  size_t chunks[] = {0, 4096 + 3}, small[] = {777};
  size_t n = frame_events(buf, cap, 3000, SIZE_MAX, false);
  check_buffer("numbers_of_every_length", (const uint8_t *)buf, n, chunks, 2, small, 1);
  for (int frac = 0; frac < 2; frac++) {
    n = frame_events(buf, cap, 600, 400, frac);
    check_buffer("a number past TR_MAX_NUMBER_CHARS", (const uint8_t *)buf, n, chunks, 2, small, 1);
    tr_error err;
    warned w;
    tr_trace *t = read_with((const uint8_t *)buf, n, TR_SCANNER_AUTO, 0, &err, &w);
    cr_assert_null(t, "a number past TR_MAX_NUMBER_CHARS is refused");
    cr_assert_eq(err.code, TR_ERR_LIMIT, "%s", err.message);
  }
  free(buf);
}

/* CPU ops and kernels whose containers (kept Input Dims, Input type and Concrete Inputs,
 * unkept grid) come from a small pool, so the fast path meets each text again and takes it
 * as the one it remembers: texts that begin alike and part before, at and past the bytes
 * that choose their slot, compact ones and ones laid out otherwise (written anew, or walked
 * to skip them), one with an escape (the byte scanner's), one longer than a remembered
 * text. Every event read as the byte scanner reads it; then a container that begins as a
 * remembered one but does not close: the same error at the same offset from both. */
static const char *const k_dims[] = {
    "[[1, 8], [8]]",
    "[[1, 8], [8], []]",
    "[[1, 8],[8]]",
    "[ [1, 8], [8]]",
    "[[1024, 512], [], [512], [512], [], [7]]",
    "[[1024, 512], [], [512], [512], [], [8]]",
    "[[1024, 512], [], [512], [512], [], [7], [1024, 512], [], [512], [512], [], [7], [1024, "
    "512], [], [512], [512], [], [7], [1024, 512], [], [512], [512], [], [7]]",
    "{\"a\": [1, 2], \"b\": {\"c\": null}}",
    "{\"a\": [1, 2], \"b\": {\"c\": true}}",
    "{\"a\": [1, 2], \"b\" : {\"c\": null}}",
};
static const char *const k_types[] = {"[\"float\", \"\"]", "[\"float\", \"Scalar\"]",
                                      "[\"fl\\u006fat\"]", "[\"float\",  \"\"]", "[]"};
static const char *const k_grids[] = {"[108, 1, 1]", "[108,1,1]", "[108, 1, 2]", "[\n1, 1, 1]"};

static size_t container_events(char *buf, size_t cap, unsigned n_events, const char *bad) {
  size_t n = (size_t)snprintf(buf, cap, "{\"traceEvents\": [\n");
  for (unsigned i = 0; i < n_events; i++) {
    const char *sep = i ? ",\n" : "";
    if (rnd() % 4 == 0)
      n += (size_t)snprintf(buf + n, cap - n,
                            "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
                            "\"tid\": 7, \"ts\": %u.5, \"dur\": 1.5, \"args\": {\"correlation\": "
                            "%u, \"grid\": %s, \"block\": %s, \"stream\": 7}}",
                            sep, 100 + i, i, k_grids[rnd() % 4], k_grids[rnd() % 4]);
    else
      n += (size_t)snprintf(
          buf + n, cap - n,
          "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 7, \"tid\": "
          "7, \"ts\": %u.5, \"dur\": 2.5, \"args\": {\"External id\": %u, \"Input Dims\": %s, "
          "\"Input type\": %s, \"Concrete Inputs\": %s}}",
          sep, 100 + i, i, k_dims[rnd() % 10], k_types[rnd() % 5], k_dims[rnd() % 10]);
    if (bad && i == n_events / 2)
      n += (size_t)snprintf(buf + n, cap - n,
                            ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
                            "\"pid\": 7, \"tid\": 7, \"ts\": 5.5, \"dur\": 2.5, \"args\": "
                            "{\"External id\": 5, \"Input Dims\": %s}}",
                            bad);
    cr_assert_lt(n, cap - 1024);
  }
  n += (size_t)snprintf(buf + n, cap - n, "\n]}\n");
  return n;
}

Test(scanners, containers_seen_before) {
  size_t cap = 1u << 21;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  size_t chunks[] = {0, 4096 + 3}, small[] = {777};
  size_t n = container_events(buf, cap, 4000, NULL);
  check_buffer("containers_seen_before", (const uint8_t *)buf, n, chunks, 2, small, 1);
  assert_fast_share((const uint8_t *)buf, n, TR_SCANNER_AUTO, 5);
  static const char *const bad[] = {"[[1, 8], [8]}", "[[1, 8], [8]",
                                    "[[1024, 512], [], [512], [512], [], [7]]]",
                                    "[[1024, 512], [], [512], [512], [], [7}]"};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    n = container_events(buf, cap, 600, bad[b]);
    check_buffer(bad[b], (const uint8_t *)buf, n, chunks, 2, small, 1);
    tr_error err;
    warned w;
    tr_trace *t = read_with((const uint8_t *)buf, n, TR_SCANNER_AUTO, 0, &err, &w);
    cr_assert_null(t, "%s: not JSON", bad[b]);
    cr_assert_eq(err.code, TR_ERR_JSON, "%s", err.message);
  }
  free(buf);
}

/* Two kept containers of one event whose first 32 bytes choose the same slot (found by
 * search: the slot is the top byte of memo_at's hash): the second takes the slot from the
 * first before the reader interns either, so the first's text must not be given the id
 * the slot knows by then. Each order, again and again; every arg as the byte scanner
 * reads it. */
Test(scanners, containers_that_share_a_slot_in_one_event) {
  static const char *const a = "[[1024, 512], [], [512], [1], [512]]",
                           *const b = "[[1024, 512], [], [512], [19], [512]]";
  size_t cap = 1u << 20, n = 0;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  n += (size_t)snprintf(buf + n, cap - n, "{\"traceEvents\": [\n");
  for (unsigned i = 0; i < 1000; i++) {
    bool swap = rnd() % 2;
    n += (size_t)snprintf(buf + n, cap - n,
                          "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": "
                          "7, \"tid\": 7, \"ts\": %u.5, \"dur\": 2.5, \"args\": {\"External id\": "
                          "%u, \"Input Dims\": %s, \"Concrete Inputs\": %s}}",
                          i ? ",\n" : "", 100 + i, i, swap ? b : a, swap ? a : b);
    cr_assert_lt(n, cap - 1024);
  }
  n += (size_t)snprintf(buf + n, cap - n, "\n]}\n");
  size_t chunks[] = {0, 4096 + 3}, small[] = {777};
  check_buffer("containers_that_share_a_slot_in_one_event", (const uint8_t *)buf, n, chunks, 2,
               small, 1);
  assert_fast_share((const uint8_t *)buf, n, TR_SCANNER_AUTO, 8);
  free(buf);
}
