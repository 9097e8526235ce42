/* Unit tests of src/util: growing arrays, string buffer, maps, counter, capped file read. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/map.h"
#include "util/params.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

Test(util_vec, grows_by_doubling_and_refuses_overflow) {
  int *a = NULL;
  size_t cap = 0;
  a = ut_grow(a, &cap, 1, sizeof *a);
  cr_assert_not_null(a);
  cr_assert_eq(cap, 8);
  int *b = ut_grow(a, &cap, 9, sizeof *a);
  cr_assert_not_null(b);
  cr_assert_eq(cap, 16);
  a = ut_grow(b, &cap, 16, sizeof *a);
  cr_assert_eq(cap, 16, "room enough: unchanged");
  cr_assert_null(ut_grow(a, &cap, SIZE_MAX / 2, sizeof *a), "size overflow");
  cr_assert_eq(cap, 16, "a failed grow leaves the capacity");
  free(a);
}

/* ut_reserve grows to the count asked, not to a power of two, keeps the items, and leaves
 * an array with room enough alone. */
Test(util_vec, reserves_exactly_and_keeps_the_items) {
  int *a = NULL;
  size_t cap = 0;
  a = ut_reserve(a, &cap, 5, sizeof *a);
  cr_assert_not_null(a);
  cr_assert_eq(cap, 5);
  for (int i = 0; i < 5; i++) a[i] = i * 7;
  int *b = ut_reserve(a, &cap, 1001, sizeof *a);
  cr_assert_not_null(b);
  cr_assert_eq(cap, 1001, "exactly the count, not 1024");
  for (int i = 0; i < 5; i++) cr_assert_eq(b[i], i * 7);
  a = ut_reserve(b, &cap, 300, sizeof *a);
  cr_assert_eq(a, b, "room enough: the same array");
  cr_assert_eq(cap, 1001);
  cr_assert_null(ut_reserve(a, &cap, SIZE_MAX / 2, sizeof *a), "size overflow");
  cr_assert_eq(cap, 1001, "a failed reserve leaves the capacity");
  free(a);
}

static int shout(FILE *f, const char *s) {
  for (; s && *s; s++)
    if (fputc(*s >= 'a' && *s <= 'z' ? *s - 32 : *s, f) == EOF) return -1;
  return 0;
}
static int refuse(FILE *f, const char *s) {
  (void)f;
  (void)s;
  return -1;
}

Test(util_buf, write_to_string) {
  char *t = ut_write_to_string(shout, "ab|c");
  cr_assert_str_eq(t, "AB|C");
  free(t);
  t = ut_write_to_string(shout, NULL);
  cr_assert_str_eq(t, "", "nothing written is the empty string");
  free(t);
  cr_assert_null(ut_write_to_string(refuse, "x"), "a failing writer gives no text");
}

Test(util_buf, appends_and_formats) {
  ut_buf b = {0};
  cr_assert_str_eq(ut_buf_str(&b), "");
  ut_buf_add(&b, "a");
  ut_buf_addn(&b, "bcdef", 2);
  ut_buf_addf(&b, "-%d-%s", 42, "x");
  cr_assert_str_eq(ut_buf_str(&b), "abc-42-x");
  char big[2000];
  memset(big, 'y', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  ut_buf_addf(&b, "%s!", big); /* longer than the formatting scratch */
  cr_assert_eq(b.n, 8 + 1999 + 1);
  cr_assert_eq(ut_buf_str(&b)[b.n - 1], '!');
  ut_buf_clear(&b);
  cr_assert_str_eq(ut_buf_str(&b), "");
  ut_buf_free(&b);
}

Test(util_map, u64_put_get_replace_and_grow) {
  ut_u64map m = {0};
  uint64_t v;
  cr_assert_not(ut_u64map_get(&m, 7, &v));
  for (uint64_t k = 0; k < 5000; k++) cr_assert(ut_u64map_put(&m, k * 3, k));
  cr_assert(ut_u64map_put(&m, 3, 99));
  cr_assert_eq(m.n, 5000);
  cr_assert(ut_u64map_get(&m, 3, &v));
  cr_assert_eq(v, 99);
  cr_assert(ut_u64map_get(&m, 0, &v), "key 0 is a key like any other");
  cr_assert_eq(v, 0);
  cr_assert(ut_u64map_get(&m, 4999 * 3, &v));
  cr_assert_eq(v, 4999);
  cr_assert_not(ut_u64map_get(&m, 1, &v));
  ut_u64map_free(&m);
  cr_assert_not(ut_u64map_get(&m, 3, &v));
}

/* Key 0 marks free slots, so it is kept beside them: it must still count, replace and
 * survive growth like any key, alone or among others. */
Test(util_map, u64_key_zero_and_extremes) {
  ut_u64map m = {0};
  uint64_t v = 1;
  cr_assert_not(ut_u64map_get(&m, 0, &v));
  cr_assert(ut_u64map_put(&m, 0, 5));
  cr_assert_eq(m.n, 1);
  cr_assert(ut_u64map_get(&m, 0, &v) && v == 5);
  cr_assert(ut_u64map_put(&m, 0, 6));
  cr_assert_eq(m.n, 1);
  cr_assert(ut_u64map_put(&m, UINT64_MAX, 7));
  for (uint64_t k = 1; k < 1000; k++) cr_assert(ut_u64map_put(&m, k << 40, k));
  cr_assert_eq(m.n, 1001);
  cr_assert(ut_u64map_get(&m, 0, &v) && v == 6);
  cr_assert(ut_u64map_get(&m, UINT64_MAX, &v) && v == 7);
  cr_assert(ut_u64map_get(&m, 999ull << 40, &v) && v == 999);
  ut_u64map_free(&m);
  cr_assert_not(ut_u64map_get(&m, 0, &v));
}

Test(util_map, strmap_indices_in_insertion_order) {
  ut_strmap m = {0};
  cr_assert_eq(ut_strmap_put(&m, "b", 1), 0);
  cr_assert_eq(ut_strmap_put(&m, "abc", 2), 1, "length-delimited key");
  cr_assert_eq(ut_strmap_put(&m, "b", 1), 0);
  cr_assert_eq(ut_strmap_find(&m, "ab", 2), 1);
  cr_assert_eq(ut_strmap_find(&m, "abc", 3), -1);
  char key[16];
  for (int i = 0; i < 1000; i++) {
    int n = snprintf(key, sizeof key, "k%d", i);
    cr_assert_eq(ut_strmap_put(&m, key, (size_t)n), i + 2);
  }
  cr_assert_str_eq(m.keys[2], "k0");
  ut_strmap_free(&m);
}

static const char *text_at(const void *items, size_t i) { return ((const char *const *)items)[i]; }

/* A set of texts over the caller's table: put answers the first item of an equal text (a
 * scan's answer), find answers an item put or none, and the texts are never copied. */
Test(util_map, textset_answers_as_a_scan) {
  enum { N = 600 };
  static char store[N][16];
  const char *items[N];
  for (int i = 0; i < N; i++) {
    snprintf(store[i], sizeof store[i], "k%d", (i * 7) % 211); /* repeats from item 211 on */
    items[i] = store[i];
  }
  ut_textset t;
  cr_assert(ut_textset_init(&t, N, text_at, items));
  for (size_t i = 0; i < N; i++) {
    size_t first = 0;
    while (strcmp(items[first], items[i]) != 0) first++;
    cr_assert_eq(ut_textset_put(&t, i), first, "item %zu", i);
  }
  cr_assert_eq(ut_textset_find(&t, "k7"), 1);
  cr_assert_eq(ut_textset_find(&t, "k211"), SIZE_MAX, "never put");
  cr_assert_eq(ut_textset_find(&t, NULL), SIZE_MAX);
  ut_textset_free(&t);
  cr_assert_eq(ut_textset_find(&t, "k7"), SIZE_MAX, "a freed set is empty");
}

/* A borrowed key is kept as the caller's pointer, found by its text like a copy, and an
 * equal key put either way later gets the first one's index. */
Test(util_map, strmap_borrowed_keys_are_not_copied) {
  static const char *const words[] = {"alpha", "beta", "gamma", "delta"};
  ut_strmap m = {0};
  cr_assert_eq(ut_strmap_put(&m, "copied", 6), 0);
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(ut_strmap_put_borrowed(&m, words[i], strlen(words[i])), i + 1);
    cr_assert_eq(m.keys[i + 1], words[i], "the pointer itself");
  }
  char beta[] = "beta";
  cr_assert_eq(ut_strmap_put(&m, beta, 4), 2, "an equal key: the borrowed one's index");
  cr_assert_eq(ut_strmap_put_borrowed(&m, "copied", 6), 0);
  cr_assert_neq(m.keys[0], (const char *)"copied", "the first put copied");
  cr_assert_eq(ut_strmap_find(&m, "gamma", 5), 3);
  for (int i = 0; i < 2000; i++) { /* growth keeps them */
    char key[16];
    int n = snprintf(key, sizeof key, "k%d", i);
    cr_assert_eq(ut_strmap_put(&m, key, (size_t)n), i + 5);
  }
  cr_assert_eq(ut_strmap_find(&m, "delta", 5), 4);
  cr_assert_eq(m.keys[4], words[3]);
  ut_strmap_free(&m);
}

/* Arena memory is 8-byte aligned, never moves, and a request larger than the next block
 * gets one of its own; a zeroed arena works and is empty again after ut_arena_free. */
Test(util_arena, aligned_stable_and_any_size) {
  ut_arena a = {0};
  static unsigned char *p[3000];
  for (size_t i = 0; i < 3000; i++) {
    size_t n = i == 1500 ? 200000 : 1 + i % 37;
    p[i] = ut_arena_alloc(&a, n);
    cr_assert_not_null(p[i]);
    cr_assert_eq((uintptr_t)p[i] % 8, 0, "allocation %zu aligned", i);
    memset(p[i], (int)(i & 0xff), n);
  }
  for (size_t i = 0; i < 3000; i++) {
    size_t n = i == 1500 ? 200000 : 1 + i % 37;
    for (size_t k = 0; k < n; k += 97) cr_assert_eq(p[i][k], (unsigned char)(i & 0xff));
  }
  ut_arena_free(&a);
  cr_assert_null(a.blocks);
  cr_assert_not_null(ut_arena_alloc(&a, 10), "usable again");
  ut_arena_free(&a);
}

/* Key copies share growing blocks: every copy keeps its address and text while the map
 * grows, keys longer than a block get one of their own, and lookups find each. */
Test(util_map, strmap_keys_never_move) {
  enum { N = 20000 };
  ut_strmap m = {0};
  static const char *saved[N];
  char *big = malloc(200001);
  cr_assert_not_null(big);
  memset(big, 'q', 200000);
  big[200000] = '\0';
  char key[64];
  for (int i = 0; i < N; i++) {
    size_t n;
    if (i == 777 || i == 15000) {
      n = i == 777 ? 100000 : 200000; /* past the largest block */
      big[n - 1] = (char)('a' + i % 26);
      cr_assert_eq(ut_strmap_put(&m, big, n), i);
      big[n - 1] = 'q';
    } else {
      n = (size_t)snprintf(key, sizeof key, "%0*d", 1 + i % 40, i);
      cr_assert_eq(ut_strmap_put(&m, key, n), i);
    }
    saved[i] = m.keys[i];
  }
  for (int i = 0; i < N; i++) {
    cr_assert_eq(m.keys[i], saved[i], "key %d moved", i);
    size_t n = strlen(m.keys[i]);
    cr_assert_eq(ut_strmap_find(&m, m.keys[i], n), i);
    if (i != 777 && i != 15000) {
      snprintf(key, sizeof key, "%0*d", 1 + i % 40, i);
      cr_assert_str_eq(m.keys[i], key);
    }
  }
  cr_assert_eq(strlen(m.keys[777]), 100000);
  cr_assert_eq(m.keys[15000][199999], (char)('a' + 15000 % 26));
  cr_assert_eq(ut_strmap_find(&m, "nope", 4), -1);
  ut_strmap_free(&m);
  cr_assert_eq(m.n, 0);
  cr_assert_eq(ut_strmap_find(&m, "1", 1), -1, "a freed map is empty");
  free(big);
}

Test(util_map, counter_most_common_first_inserted_wins_ties) {
  ut_counter c = {0};
  cr_assert_null(ut_counter_top(&c));
  cr_assert(ut_counter_add(&c, "x", 1));
  cr_assert(ut_counter_add(&c, "y", 2));
  cr_assert(ut_counter_add(&c, "x", 1));
  cr_assert_str_eq(ut_counter_top(&c), "x", "tie: the first inserted");
  cr_assert(ut_counter_add(&c, "y", 1));
  cr_assert_str_eq(ut_counter_top(&c), "y");
  for (int i = 0; i < 100; i++) {
    char k[8];
    snprintf(k, sizeof k, "z%d", i);
    cr_assert(ut_counter_add(&c, k, 1));
  }
  cr_assert_str_eq(ut_counter_top(&c), "y");
  ut_counter_free(&c);
}

Test(util_file, whole_capped_and_missing) {
  char path[] = "/tmp/triage-test-util-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  cr_assert_eq(write(fd, "hello world", 11), 11);
  close(fd);
  char *data;
  size_t len;
  int e;
  cr_assert_eq(ut_read_file(path, 11, &data, &len, &e), UT_FILE_OK);
  cr_assert_eq(len, 11);
  cr_assert_str_eq(data, "hello world");
  free(data);
  cr_assert_eq(ut_read_file(path, 10, &data, &len, &e), UT_FILE_TOO_BIG);
  cr_assert_null(data);
  unlink(path);
  cr_assert_eq(ut_read_file(path, 10, &data, &len, &e), UT_FILE_IO);
  cr_assert_eq(e, ENOENT);
  cr_assert_eq(ut_read_file("/tmp", 10, &data, &len, &e), UT_FILE_IO, "a directory");
  cr_assert_eq(ut_read_file("/dev/zero", 100000, &data, &len, &e), UT_FILE_TOO_BIG,
               "an endless file stops past the cap");
}

/* ut_sort against qsort with a total order: items of 4, 12 and 100 bytes (moved in 4-byte
 * words), 24 and 32 (in 8-byte words), 13 (by memcpy) and 300 (heap-sorted: no pivot
 * copy), random keys with many repeats, already sorted, reversed, all equal, many short
 * runs, and a block out of place, which the run merge sorts through its right (shape 5) or
 * left (shape 6) buffer, and two or three runs that interleave all along (shapes 7, 8: two
 * threads' ids), which overflow the buffer's cap and are merged in pieces (far fewer
 * comparisons than a full sort's n log n); hundreds of runs of 40 items, still merged
 * (shape 9), and of 20, sorted in full (shape 10). */
typedef struct sort_item {
  uint32_t key, id;
  unsigned char pad[292];
} sort_item;

/* key and id are loaded by memcpy: a 13-byte item sits at any address, where a member
 * access through sort_item would be misaligned (UBSan's alignment check). */
static int cmp_item(const void *a, const void *b) {
  uint32_t x[2], y[2];
  memcpy(x, a, sizeof x);
  memcpy(y, b, sizeof y);
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : (x[1] > y[1]);
}
static int cmp_item_ctx(const void *a, const void *b, void *ctx) {
  ++*(size_t *)ctx;
  return cmp_item(a, b);
}

/* 4-byte items are the key alone: equal keys are equal bytes, so order is total too. */
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : (x > y);
}
static int cmp_u32_ctx(const void *a, const void *b, void *ctx) {
  ++*(size_t *)ctx;
  return cmp_u32(a, b);
}

static void check_sort(size_t n, size_t size, int shape, uint64_t *seed) {
  sort_item *a = calloc(n ? n : 1, sizeof *a), *want = calloc(n ? n : 1, sizeof *a);
  cr_assert(a && want);
  for (size_t i = 0; i < n; i++) {
    *seed ^= *seed << 13, *seed ^= *seed >> 7, *seed ^= *seed << 17;
    uint32_t k = shape == 0   ? (uint32_t)(*seed % 50)
                 : shape == 1 ? (uint32_t)i
                 : shape == 2 ? (uint32_t)(n - i)
                 : shape == 3 ? 7u
                 : shape == 4 ? (uint32_t)(i % 97 ? i + 1000 : i) /* many runs */
                 : shape == 5 ? (uint32_t)(i >= n / 2 && i < n / 2 + n / 32 ? i - n / 4 : i)
                 : shape == 6 ? (uint32_t)(i >= n / 4 && i < n / 4 + n / 32 ? i + n / 2 : i)
                 : shape == 7 ? (uint32_t)(i < n / 2 ? 2 * i : 2 * (i - n / 2) + 1)
                 : shape == 8 ? (uint32_t)(3 * (i % (n / 3 + 1)) + i / (n / 3 + 1))
                 : shape == 9 ? (uint32_t)((i % 40) * 1000 + i / 40)  /* runs of 40 */
                              : (uint32_t)((i % 20) * 1000 + i / 20); /* runs of 20 */
    a[i].key = k;
    a[i].id = (uint32_t)i; /* unique; shuffled below so ties are not already in order */
    a[i].pad[91] = (unsigned char)i;
  }
  for (size_t i = n; i > 1; i--) {
    *seed ^= *seed << 13, *seed ^= *seed >> 7, *seed ^= *seed << 17;
    size_t j = (size_t)(*seed % i);
    uint32_t t = a[i - 1].id;
    a[i - 1].id = a[j].id;
    a[j].id = t;
  }
  /* the compared part of an item of `size` bytes is its first size bytes: key (and id) */
  unsigned char *raw = calloc(n ? n : 1, size), *raw_want = calloc(n ? n : 1, size);
  cr_assert(raw && raw_want);
  for (size_t i = 0; i < n; i++) memcpy(raw + i * size, &a[i], size);
  memcpy(raw_want, raw, n * size);
  size_t calls = 0;
  if (size >= sizeof(uint32_t) * 2) {
    qsort(raw_want, n, size, cmp_item);
    ut_sort(raw, n, size, cmp_item_ctx, &calls);
  } else {
    qsort(raw_want, n, size, cmp_u32);
    ut_sort(raw, n, size, cmp_u32_ctx, &calls);
  }
  cr_expect(memcmp(raw, raw_want, n * size) == 0, "n %zu size %zu shape %d", n, size, shape);
  cr_expect(n < 2 || calls > 0);
  if ((shape == 7 || shape == 8) && n >= 1000) /* merged in pieces: about n per level */
    cr_expect(calls < 8 * n, "n %zu size %zu shape %d: %zu comparisons", n, size, shape, calls);
  if (shape == 9 && n >= 1000) /* past 64 runs, still merged: n per level of log2(n / 40) */
    cr_expect(calls < 12 * n, "n %zu size %zu shape %d: %zu comparisons", n, size, shape, calls);
  free(a);
  free(want);
  free(raw);
  free(raw_want);
}

Test(util, sort_agrees_with_qsort_on_total_orders) {
  static const size_t sizes[] = {4, 12, 13, 24, 32, 100, 300};
  static const size_t counts[] = {0, 1, 2, 3, 15, 16, 17, 100, 1000, 20000};
  uint64_t seed = 88172645463325252ull;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
      for (int shape = 0; shape < 11; shape++) check_sort(counts[c], sizes[s], shape, &seed);
}

static int cmp_i64_plain(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : (x > y);
}

/* ut_select_i64 returns what a sort would put at k: random values with many repeats,
 * sorted, reversed, all equal and an organ pipe (a bad case for a first-last-middle
 * pivot), every k of the short arrays and the ends and median of the long ones; the
 * values are the same multiset afterwards. */
Test(util, select_agrees_with_a_sort) {
  static const size_t counts[] = {1, 2, 3, 16, 17, 33, 1000, 20001};
  uint64_t seed = 88172645463325252ull;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
    for (int shape = 0; shape < 5; shape++) {
      size_t n = counts[c];
      int64_t *v = malloc(n * sizeof *v), *sorted = malloc(n * sizeof *v),
              *work = malloc(n * sizeof *v);
      cr_assert(v && sorted && work);
      for (size_t i = 0; i < n; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        v[i] = shape == 0   ? (int64_t)(seed % 7) - 3
               : shape == 1 ? (int64_t)i
               : shape == 2 ? -(int64_t)i
               : shape == 3 ? 42
                            : (int64_t)(i < n / 2 ? i : n - i);
      }
      memcpy(sorted, v, n * sizeof *v);
      qsort(sorted, n, sizeof *v, cmp_i64_plain);
      for (size_t k = 0; k < n; k += n <= 40 ? 1 : (n - 1) / 2) {
        memcpy(work, v, n * sizeof *v);
        cr_assert_eq(ut_select_i64(work, n, k), sorted[k], "n %zu shape %d k %zu", n, shape, k);
        qsort(work, n, sizeof *v, cmp_i64_plain);
        cr_assert(memcmp(work, sorted, n * sizeof *v) == 0, "a permutation: n %zu", n);
      }
      memcpy(work, v, n * sizeof *v);
      cr_assert_eq(ut_select_i64(work, n, n - 1), sorted[n - 1]);
      free(v);
      free(sorted);
      free(work);
    }
}

static int cmp_u64_plain(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : (x > y);
}

/* ut_sort_u64 equals qsort: random keys over all 64 bits, keys that differ in one byte
 * only (the other passes skipped), nearly sorted runs, equal keys; and without a buffer. */
Test(util, sort_u64_agrees_with_qsort) {
  static const size_t counts[] = {0, 1, 2, 255, 256, 257, 5000};
  uint64_t seed = 88172645463325252ull;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
    for (int shape = 0; shape < 4; shape++)
      for (int buffered = 0; buffered < 2; buffered++) {
        size_t n = counts[c];
        uint64_t *v = malloc((n + 1) * sizeof *v), *want = malloc((n + 1) * sizeof *v),
                 *tmp = malloc((n + 1) * sizeof *v);
        cr_assert(v && want && tmp);
        for (size_t i = 0; i < n; i++) {
          seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
          v[i] = shape == 0   ? seed
                 : shape == 1 ? (seed & 0xff) << 40 | 7
                 : shape == 2 ? ((uint64_t)(i % 300) << 32 | i) /* ascending runs */
                              : 42;
        }
        memcpy(want, v, n * sizeof *v);
        qsort(want, n, sizeof *v, cmp_u64_plain);
        ut_sort_u64(v, n, buffered ? tmp : NULL);
        cr_assert(n == 0 || memcmp(v, want, n * sizeof *v) == 0, "n %zu shape %d buffered %d", n,
                  shape, buffered);
        free(v);
        free(want);
        free(tmp);
      }
}

static int cmp_f64_plain(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : (x > y);
}

/* ut_sort_f64 equals qsort: times of a trace (large positive, nearly sorted), values of both
 * signs with zeros and infinities, and many equal values; lists on both sides of the bound
 * below which it sorts by insertion (32). */
Test(util, sort_f64_agrees_with_qsort) {
  static const size_t counts[] = {0, 1, 2, 3, 31, 32, 33, 257, 5000};
  uint64_t seed = 88172645463325252ull;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
    for (int shape = 0; shape < 3; shape++) {
      size_t n = counts[c];
      double *v = malloc((n + 1) * sizeof *v), *want = malloc((n + 1) * sizeof *v);
      cr_assert(v && want);
      for (size_t i = 0; i < n; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        double r = (double)(seed >> 11) / 9007199254740992.0; /* [0, 1) */
        static const double odd[] = {0.0, -0.0, INFINITY, -INFINITY, -1e-300, 1e300};
        v[i] = shape == 0   ? 1.7e15 + (double)i * 3.5 - r * 40.0
               : shape == 1 ? (i % 7 == 0 ? odd[i / 7 % 6] : (r - 0.5) * 1e6)
                            : (double)(seed % 5) - 2.0;
      }
      memcpy(want, v, n * sizeof *v);
      qsort(want, n, sizeof *v, cmp_f64_plain);
      ut_sort_f64(v, n);
      for (size_t i = 0; i < n; i++)
        cr_assert(v[i] == want[i], "n %zu shape %d at %zu: %g, not %g", n, shape, i, v[i], want[i]);
      free(v);
      free(want);
    }
}

/* The items ut_grow_zeroed adds are zero, the ones there stay, and an array that already
 * holds the index is returned as it is. */
Test(util_vec, grow_zeroed_zeroes_only_the_new_items) {
  size_t cap = 0;
  uint32_t *v = ut_grow_zeroed(NULL, &cap, 3, sizeof *v);
  cr_assert(v && cap >= 3);
  for (size_t i = 0; i < cap; i++) cr_assert_eq(v[i], 0);
  for (size_t i = 0; i < cap; i++) v[i] = (uint32_t)i + 1;
  size_t old = cap;
  cr_assert_eq(ut_grow_zeroed(v, &cap, old, sizeof *v), v, "room enough: unchanged");
  v = ut_grow_zeroed(v, &cap, 1000, sizeof *v);
  cr_assert(v && cap >= 1000);
  for (size_t i = 0; i < old; i++) cr_assert_eq(v[i], i + 1, "kept");
  for (size_t i = old; i < cap; i++) cr_assert_eq(v[i], 0, "item %zu added zero", i);
  free(v);
}

Test(util_vec, shrink_trims_to_the_count_and_keeps_the_items) {
  size_t cap = 0;
  int *a = ut_grow(NULL, &cap, 100, sizeof *a);
  cr_assert_not_null(a);
  for (int i = 0; i < 37; i++) a[i] = i * 3;
  cr_assert_gt(cap, 37);
  a = ut_shrink(a, &cap, 37, sizeof *a);
  cr_expect_eq(cap, 37);
  for (int i = 0; i < 37; i++) cr_expect_eq(a[i], i * 3);
  cr_expect_eq(ut_shrink(a, &cap, 37, sizeof *a), a, "already fits: unchanged");
  cr_expect_eq(ut_shrink(a, &cap, 0, sizeof *a), a, "n 0: unchanged");
  cr_expect_eq(cap, 37);
  free(a);
}

/* UT_PARTITION_POINT against a linear scan: every split of every length up to 40, and
 * sub-ranges; the condition runs at most log2(n) + 1 times. */
Test(util_search, partition_point_agrees_with_a_scan) {
  int a[40];
  for (size_t n = 0; n <= 40; n++)
    for (size_t split = 0; split <= n; split++) {
      for (size_t i = 0; i < n; i++) a[i] = i < split ? 0 : 1;
      size_t got, calls = 0;
      UT_PARTITION_POINT(got, 0, n, m, (calls++, a[m] == 0));
      cr_assert_eq(got, split, "n %zu split %zu", n, split);
      cr_assert_leq(calls, 7);
      size_t lo = n / 3, hi = n - n / 4, want = split < lo ? lo : split > hi ? hi : split;
      UT_PARTITION_POINT(got, lo, hi, m, a[m] == 0);
      cr_assert_eq(got, want, "n %zu [%zu, %zu) split %zu", n, lo, hi, split);
    }
}

/* ut_lower_bound_near_f64 against a scan, from every hint (equal values included), and
 * ut_holds_near_f64 on the ranges either side of each value. */
Test(util_search, lower_bound_near_agrees_with_a_scan) {
  const double v[] = {1, 2, 2, 2, 5, 8, 8, 13, 21, 34, 55, 55};
  const size_t n = sizeof v / sizeof *v;
  for (double x = 0; x <= 56; x += 0.5)
    for (size_t hint = 0; hint <= n + 1; hint++) {
      size_t want = 0;
      while (want < n && v[want] < x) want++;
      cr_assert_eq(ut_lower_bound_near_f64(v, n, hint, x), want, "x %g hint %zu", x, hint);
      size_t h = hint;
      cr_assert_eq(ut_holds_near_f64(v, n, &h, x, x + 0.25), want < n && v[want] <= x + 0.25);
      cr_assert_eq(h, want);
    }
  cr_assert_eq(ut_lower_bound_near_f64(v, 0, 3, 1.0), 0);
}

/* The trailing parameter list: balanced, nested, absent, unbalanced. */
Test(util_params, start_of_the_trailing_list) {
  const char *s = "void f<int>(float*, g(int))";
  cr_assert_eq(ut_params_start(s, strlen(s)), 11);
  cr_assert_eq(ut_params_start("f()", 3), 1);
  cr_assert_eq(ut_params_start("Memset (Device)", 15), 7, "the caller decides on the space");
  cr_assert_eq(ut_params_start("f(int", 5), 5, "no ')' at the end");
  cr_assert_eq(ut_params_start("f)", 2), 2, "unbalanced");
  cr_assert_eq(ut_params_start("", 0), 0);
  cr_assert_eq(ut_params_start("(a)", 3), 0);
}

static bool is_odd(const void *x) { return *(const int *)x % 2 != 0; }

/* The odd items go ahead of the even ones, each group in its first order. */
Test(util, stable_partition_keeps_each_group_in_order) {
  int v[] = {4, 1, 6, 3, 8, 5, 7, 2};
  ut_stable_partition(v, 8, sizeof *v, is_odd);
  int want[] = {1, 3, 5, 7, 4, 6, 8, 2};
  for (int i = 0; i < 8; i++) cr_assert_eq(v[i], want[i], "item %d: %d", i, v[i]);
  ut_stable_partition(v, 0, sizeof *v, is_odd); /* empty: nothing to touch */
}
