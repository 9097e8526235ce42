/* util/sort.c - see sort.h. */
#include "util/sort.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/search.h"

/* Items up to this size are swapped through one stack buffer, larger ones in pieces. */
#define SWAP_CHUNK 64u
/* Quicksort keeps a copy of its pivot on the stack; larger items are heap-sorted. */
#define PIVOT_MAX 256u
/* ut_sort_f64 sorts up to this many doubles by insertion, with no buffer. */
#define SHORT_F64 32u

typedef struct sorter {
  size_t size;
  ut_sort_cmp cmp;
  void *ctx;
} sorter;

static unsigned char *at(const sorter *s, unsigned char *b, size_t i) { return b + i * s->size; }

static int cmp_at(const sorter *s, unsigned char *b, size_t i, size_t j) {
  return s->cmp(at(s, b, i), at(s, b, j), s->ctx);
}

/* Items whose size is a multiple of a word are moved a word at a time, each a fixed-size
 * load and store: a memcpy of a size known only at run time is a call into libc per item
 * (three per swap), which was most of the cost of sorting 24- and 32-byte records (the
 * time account's launch lags and host items on hta_async x 2: ~14 M instructions). */
#define MOVE_WORDS(W, dst, src, size)                       \
  for (size_t off_ = 0; off_ < (size); off_ += sizeof(W)) { \
    W w_;                                                   \
    memcpy(&w_, (src) + off_, sizeof w_);                   \
    memcpy((dst) + off_, &w_, sizeof w_);                   \
  }
#define SWAP_WORDS(W, x, y, size)                           \
  for (size_t off_ = 0; off_ < (size); off_ += sizeof(W)) { \
    W u_, v_;                                               \
    memcpy(&u_, (x) + off_, sizeof u_);                     \
    memcpy(&v_, (y) + off_, sizeof v_);                     \
    memcpy((x) + off_, &v_, sizeof v_);                     \
    memcpy((y) + off_, &u_, sizeof u_);                     \
  }

/* Items of no whole number of words, in pieces through a stack buffer (out of line: the
 * buffer's stack guard would cost every swap). */
static void swap_bytes(unsigned char *x, unsigned char *y, size_t size) {
  unsigned char tmp[SWAP_CHUNK];
  for (size_t off = 0; off < size; off += SWAP_CHUNK) {
    size_t k = size - off < SWAP_CHUNK ? size - off : SWAP_CHUNK;
    memcpy(tmp, x + off, k);
    memcpy(x + off, y + off, k);
    memcpy(y + off, tmp, k);
  }
}

static void swap_at(const sorter *s, unsigned char *b, size_t i, size_t j) {
  if (i == j) return;
  unsigned char *x = at(s, b, i), *y = at(s, b, j);
  if (s->size == sizeof(uint32_t)) { /* the id indexes' and call index's positions */
    SWAP_WORDS(uint32_t, x, y, sizeof(uint32_t));
  } else if (s->size % sizeof(uint64_t) == 0) {
    SWAP_WORDS(uint64_t, x, y, s->size);
  } else if (s->size % sizeof(uint32_t) == 0) { /* 28-byte events */
    SWAP_WORDS(uint32_t, x, y, s->size);
  } else {
    swap_bytes(x, y, s->size);
  }
}

static void sift(const sorter *s, unsigned char *b, size_t i, size_t n) {
  for (size_t c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && cmp_at(s, b, c, c + 1) < 0) c++;
    if (cmp_at(s, b, i, c) >= 0) return;
    swap_at(s, b, i, c);
  }
}

static void heap_sort(const sorter *s, unsigned char *b, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift(s, b, i, n);
  for (size_t e = n - 1; e > 0; e--) {
    swap_at(s, b, 0, e);
    sift(s, b, 0, e);
  }
}

/* Hoare partition around the median of b[0], b[mid], b[n-1] (a copy of it in pivot):
 * afterwards b[0..j] <= pivot <= b[j+1..n). Returns j + 1, the size of the left part. */
static size_t partition(const sorter *s, unsigned char *b, size_t n, unsigned char *pivot) {
  size_t mid = n / 2;
  if (cmp_at(s, b, mid, 0) < 0) swap_at(s, b, mid, 0);
  if (cmp_at(s, b, n - 1, 0) < 0) swap_at(s, b, n - 1, 0);
  if (cmp_at(s, b, n - 1, mid) < 0) swap_at(s, b, n - 1, mid);
  memcpy(pivot, at(s, b, mid), s->size);
  size_t i = 0, j = n - 1;
  for (;;) {
    while (s->cmp(at(s, b, i), pivot, s->ctx) < 0) i++;
    while (s->cmp(pivot, at(s, b, j), s->ctx) < 0) j--;
    if (i >= j) return j + 1;
    swap_at(s, b, i++, j--);
  }
}

static void intro_sort(const sorter *s, unsigned char *b, size_t n, unsigned depth,
                       unsigned char *pivot) {
  while (n > 16) {
    if (depth-- == 0) {
      heap_sort(s, b, n);
      return;
    }
    size_t left = partition(s, b, n, pivot);
    if (left < n - left) { /* recurse into the smaller side, loop on the larger */
      intro_sort(s, b, left, depth, pivot);
      b = at(s, b, left);
      n -= left;
    } else {
      intro_sort(s, at(s, b, left), n - left, depth, pivot);
      n = left;
    }
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && cmp_at(s, b, j, j - 1) < 0; j--) swap_at(s, b, j, j - 1);
}

/* ---- input made of a few ascending runs: merged run by run ----
 * Events read in file order usually come in a few ascending runs of the sort key (the
 * real hta_async trace's 40,506 CPU ops by External id are two runs), which introsort
 * pays n log n comparisons for, each a cache miss on a permuted array. Merging the runs
 * costs about n, through a buffer holding the shorter side of each merge after trimming
 * what is already in place; the buffer is capped at a sixteenth of the array, so a bad
 * case costs little memory: longer merges are split until they fit (merge_runs). With
 * more than MAX_RUNS runs averaging fewer than MAX_RUNS_SHARE items (or without memory
 * for the list of a longer run count, or for a merge), it returns false and the caller
 * sorts the array, still a permutation of its input, in full. */
#define MAX_RUNS 64
/* Past MAX_RUNS runs, the array is still merged while its runs average this many items. */
#define MAX_RUNS_SHARE 32u

/* Inline, and one load and store for the common 4- and 8-byte items (the call index's
 * positions): the merges move every item of a run through here. */
static inline void copy_at(const sorter *s, unsigned char *dst, const unsigned char *src) {
  if (s->size == sizeof(uint32_t)) {
    MOVE_WORDS(uint32_t, dst, src, sizeof(uint32_t));
  } else if (s->size % sizeof(uint64_t) == 0) {
    MOVE_WORDS(uint64_t, dst, src, s->size);
  } else if (s->size % sizeof(uint32_t) == 0) {
    MOVE_WORDS(uint32_t, dst, src, s->size);
  } else {
    memcpy(dst, src, s->size);
  }
}

/* First position in [lo, hi) whose item is greater than x (strict: upper bound). */
static size_t upper(const sorter *s, unsigned char *b, size_t lo, size_t hi,
                    const unsigned char *x) {
  size_t first;
  UT_PARTITION_POINT(first, lo, hi, m, s->cmp(x, at(s, b, m), s->ctx) >= 0);
  return first;
}

/* First position in [lo, hi) whose item is not less than x (lower bound). */
static size_t lower(const sorter *s, unsigned char *b, size_t lo, size_t hi,
                    const unsigned char *x) {
  size_t first;
  UT_PARTITION_POINT(first, lo, hi, m, s->cmp(at(s, b, m), x, s->ctx) < 0);
  return first;
}

/* Merges [i, mid) with [mid, j) through tmp holding the left side. */
static void merge_left(const sorter *s, unsigned char *b, size_t i, size_t mid, size_t j,
                       unsigned char *tmp) {
  size_t nl = mid - i, a = 0, r = mid, out = i;
  memcpy(tmp, at(s, b, i), nl * s->size);
  while (a < nl && r < j) {
    if (s->cmp(at(s, b, r), tmp + a * s->size, s->ctx) < 0)
      copy_at(s, at(s, b, out++), at(s, b, r++));
    else
      copy_at(s, at(s, b, out++), tmp + a++ * s->size);
  }
  memcpy(at(s, b, out), tmp + a * s->size, (nl - a) * s->size);
}

/* Merges [i, mid) with [mid, j) through tmp holding the right side, from the back. */
static void merge_right(const sorter *s, unsigned char *b, size_t i, size_t mid, size_t j,
                        unsigned char *tmp) {
  size_t nr = j - mid, a = nr, l = mid, out = j;
  memcpy(tmp, at(s, b, mid), nr * s->size);
  while (a > 0 && l > i) {
    if (s->cmp(tmp + (a - 1) * s->size, at(s, b, l - 1), s->ctx) < 0)
      copy_at(s, at(s, b, --out), at(s, b, --l));
    else
      copy_at(s, at(s, b, --out), tmp + --a * s->size);
  }
  memcpy(at(s, b, i), tmp, a * s->size);
}

/* b[lo, mid) and b[mid, hi) swapped as blocks by three reversals: in place, in order. */
static void reverse(const sorter *s, unsigned char *b, size_t lo, size_t hi) {
  if (s->size == sizeof(uint32_t)) { /* a merge of positions in pieces: a call each was most */
    for (; lo + 1 < hi; lo++, hi--)
      SWAP_WORDS(uint32_t, at(s, b, lo), at(s, b, hi - 1), sizeof(uint32_t));
    return;
  }
  while (lo + 1 < hi) swap_at(s, b, lo++, --hi);
}

/* Rotations shorter than this reverse in place: a buffer's malloc costs more. */
#define ROTATE_BUF_MIN 64u

/* b[lo, mid) and b[mid, hi) swapped as blocks. When the smaller block fits in cap items
 * (the merge buffer's bound: no more memory than a merge takes), through a buffer: each
 * item moved once by memmove, not swapped twice item by item (the host index's and the
 * call index's merges in pieces rotate most of their items at each level). */
static void rotate(const sorter *s, unsigned char *b, size_t lo, size_t mid, size_t hi,
                   size_t cap) {
  size_t nl = mid - lo, nr = hi - mid, k = nl < nr ? nl : nr;
  unsigned char *tmp = k >= ROTATE_BUF_MIN && k <= cap ? malloc(k * s->size) : NULL;
  if (!tmp) {
    reverse(s, b, lo, mid);
    reverse(s, b, mid, hi);
    reverse(s, b, lo, hi);
    return;
  }
  if (nl <= nr) {
    memcpy(tmp, at(s, b, lo), nl * s->size);
    memmove(at(s, b, lo), at(s, b, mid), nr * s->size);
    memcpy(at(s, b, lo + nr), tmp, nl * s->size);
  } else {
    memcpy(tmp, at(s, b, mid), nr * s->size);
    memmove(at(s, b, lo + nr), at(s, b, lo), nl * s->size);
    memcpy(at(s, b, lo), tmp, nr * s->size);
  }
  free(tmp);
}

/* Merges the sorted [lo, mid) and [mid, hi). When the shorter side (after trimming what
 * is in place) passes cap, the longer side is split at its middle item x, the items on
 * either side of x are rotated into place and each half is merged the same way: a few
 * passes of in-order moves instead of a buffer as long as the run (two interleaved
 * threads' CPU ops make runs that overlap all along). False without memory. */
static bool merge_runs(const sorter *s, unsigned char *b, size_t lo, size_t mid, size_t hi,
                       size_t cap) {
  if (lo == mid || mid == hi) return true;
  if (s->cmp(at(s, b, mid - 1), at(s, b, mid), s->ctx) <= 0) return true; /* in order */
  size_t i = upper(s, b, lo, mid, at(s, b, mid));                         /* b[lo, i) stays */
  size_t j = lower(s, b, mid, hi, at(s, b, mid - 1));                     /* b[j, hi) stays */
  size_t shorter = mid - i < j - mid ? mid - i : j - mid;
  if (shorter > cap) {
    size_t m1, m2; /* [m1, mid) and [mid, m2) trade places */
    if (mid - i >= j - mid) {
      m1 = i + (mid - i) / 2;
      m2 = lower(s, b, mid, j, at(s, b, m1));
    } else {
      m2 = mid + (j - mid) / 2;
      m1 = upper(s, b, i, mid, at(s, b, m2));
    }
    rotate(s, b, m1, mid, m2, cap);
    size_t nm = m1 + (m2 - mid);
    return merge_runs(s, b, i, m1, nm, cap) && merge_runs(s, b, nm, m2, j, cap);
  }
  unsigned char *tmp = malloc(shorter * s->size);
  if (!tmp) return false;
  if (mid - i <= j - mid)
    merge_left(s, b, i, mid, j, tmp);
  else
    merge_right(s, b, i, mid, j, tmp);
  free(tmp);
  return true;
}

/* The starts of the ascending runs of b, then n, into run (cap entries): the number of
 * runs, or 0 when there are more than cap - 1. */
static size_t find_runs(const sorter *s, unsigned char *b, size_t n, size_t *run, size_t cap) {
  size_t nruns = 0;
  run[nruns++] = 0;
  for (size_t i = 1; i < n; i++)
    if (cmp_at(s, b, i - 1, i) > 0) {
      if (nruns + 1 == cap) return 0;
      run[nruns++] = i;
    }
  run[nruns] = n;
  return nruns;
}

static bool merge_sorted_runs(const sorter *s, unsigned char *b, size_t n) {
  /* room for MAX_RUNS runs, or for as many as can average MAX_RUNS_SHARE items (a
   * sweep's start and end points, each kernel stream in time order, make hundreds of long
   * runs); the list is only written as far as the runs go */
  size_t stack_runs[MAX_RUNS + 1], *run = stack_runs; /* run k is [run[k], run[k + 1]) */
  size_t cap = MAX_RUNS + 1;
  if (n / MAX_RUNS_SHARE > MAX_RUNS) {
    size_t *heap = malloc((n / MAX_RUNS_SHARE + 1) * sizeof *heap);
    if (heap) run = heap, cap = n / MAX_RUNS_SHARE + 1;
  }
  size_t nruns = find_runs(s, b, n, run, cap);
  bool ok = nruns > 0;
  size_t buf_cap = n / 16 > 1024 ? n / 16 : 1024;
  for (; ok && nruns > 1; nruns = (nruns + 1) / 2) { /* merge neighbours pairwise */
    size_t k = 0;
    for (; ok && k + 1 < nruns; k += 2) {
      ok = merge_runs(s, b, run[k], run[k + 1], run[k + 2], buf_cap);
      run[k / 2] = run[k];
    }
    if (k < nruns) run[k / 2] = run[k];
    run[(nruns + 1) / 2] = n;
  }
  if (run != stack_runs) free(run);
  return ok;
}

void ut_sort(void *base, size_t n, size_t size, ut_sort_cmp cmp, void *ctx) {
  if (n < 2 || size == 0) return;
  sorter s = {size, cmp, ctx};
  if (merge_sorted_runs(&s, base, n)) return;
  if (size > PIVOT_MAX) { /* no room for a pivot copy: heapsort needs none */
    heap_sort(&s, base, n);
    return;
  }
  unsigned char pivot[PIVOT_MAX];
  unsigned depth = 2;
  for (size_t m = n; m > 1; m >>= 1) depth += 2;
  intro_sort(&s, base, n, depth, pivot);
}

/* ---------------------------------------------------------------- 64-bit keys */

static int cmp_u64(const void *pa, const void *pb, void *unused) {
  (void)unused;
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : (a > b);
}

static uint64_t word_at(const unsigned char *p, size_t i) {
  uint64_t w;
  memcpy(&w, p + 8 * i, 8);
  return w;
}

/* Sorts the n 8-byte words at a (read as uint64_t, through memcpy: a may hold doubles)
 * with b as the other buffer of the passes; returns a or b, whichever holds them sorted. */
static unsigned char *radix_words(unsigned char *a, unsigned char *b, size_t n) {
  size_t count[8][256];
  memset(count, 0, sizeof count);
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < 8; k++) count[k][(word_at(a, i) >> (8 * k)) & 0xff]++;
  unsigned char *src = a, *dst = b;
  for (unsigned k = 0; k < 8; k++) {
    size_t *c = count[k];
    if (c[(word_at(src, 0) >> (8 * k)) & 0xff] == n)
      continue; /* one byte value: the order stands */
    size_t sum = 0;
    for (unsigned d = 0; d < 256; d++) {
      size_t m = c[d];
      c[d] = sum;
      sum += m;
    }
    for (size_t i = 0; i < n; i++) {
      uint64_t w = word_at(src, i);
      memcpy(dst + 8 * c[(w >> (8 * k)) & 0xff]++, &w, 8);
    }
    unsigned char *t = src;
    src = dst;
    dst = t;
  }
  return src;
}

void ut_sort_u64(uint64_t *v, size_t n, uint64_t *tmp) {
  if (n < 2) return;
  if (!tmp) {
    ut_sort(v, n, sizeof *v, cmp_u64, NULL);
    return;
  }
  if (radix_words((unsigned char *)v, (unsigned char *)tmp, n) != (unsigned char *)v)
    memcpy(v, tmp, n * sizeof *v);
}

/* A key of d that orders as the doubles do: positives above negatives, a negative's
 * magnitude reversed. */
static uint64_t f64_key(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b >> 63 ? ~b : b | 1ull << 63;
}

static double f64_of_key(uint64_t k) {
  uint64_t b = k >> 63 ? k & ~(1ull << 63) : ~k;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

static int cmp_f64(const void *pa, const void *pb, void *unused) {
  (void)unused;
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : (a > b);
}

/* Insertion sort on the keys' order: below a few dozen values the radix sort's 16 KiB of
 * counts and its buffer cost more than the moves (the overlap sweep sorts one short list
 * per kernel name). */
static void sort_f64_short(double *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    double x = v[i];
    uint64_t k = f64_key(x);
    size_t j = i;
    for (; j > 0 && f64_key(v[j - 1]) > k; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

void ut_sort_f64(double *v, size_t n) {
  if (n < 2) return;
  if (n <= SHORT_F64) {
    sort_f64_short(v, n);
    return;
  }
  /* the keys; v itself is the radix sort's other buffer (n words more, not 2n) */
  uint64_t *key = n <= SIZE_MAX / sizeof *key ? malloc(n * sizeof *key) : NULL;
  if (!key) {
    ut_sort(v, n, sizeof *v, cmp_f64, NULL);
    return;
  }
  for (size_t i = 0; i < n; i++) key[i] = f64_key(v[i]);
  const unsigned char *sorted = radix_words((unsigned char *)key, (unsigned char *)v, n);
  for (size_t i = 0; i < n; i++) v[i] = f64_of_key(word_at(sorted, i));
  free(key);
}

/* ---------------------------------------------------------------- selection */

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : (a > b);
}

static int64_t median3_i64(int64_t a, int64_t b, int64_t c) {
  if (a > b) {
    int64_t t = a;
    a = b;
    b = t;
  }
  return c <= a ? a : c >= b ? b : c;
}

int64_t ut_select_i64(int64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n; /* v[k] lies in [lo, hi) */
  unsigned budget = 2;
  for (size_t m = n; m > 1; m >>= 1) budget += 2;
  while (hi - lo > 16 && budget--) {
    int64_t p = median3_i64(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
    size_t lt = lo, i = lo, gt = hi; /* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
    while (i < gt) {
      int64_t x = v[i];
      if (x < p) {
        v[i++] = v[lt];
        v[lt++] = x;
      } else if (x > p) {
        v[i] = v[--gt];
        v[gt] = x;
      } else {
        i++;
      }
    }
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return p;
  }
  qsort(v + lo, hi - lo, sizeof *v, cmp_i64); /* a short rest, or rounds spent */
  return v[k];
}

/* Reverses the items [lo, hi) of base, byte by byte (no buffer of an item's size). */
static void reverse_items(unsigned char *base, size_t lo, size_t hi, size_t size) {
  for (; hi > lo + 1; lo++, hi--) {
    unsigned char *a = base + lo * size, *b = base + (hi - 1) * size;
    for (size_t k = 0; k < size; k++) {
      unsigned char t = a[k];
      a[k] = b[k];
      b[k] = t;
    }
  }
}

void ut_stable_partition(void *base, size_t n, size_t size, bool (*first)(const void *item)) {
  unsigned char *b = base;
  size_t k = 0; /* items placed ahead so far */
  for (size_t i = 0; i < n; i++) {
    if (!first(b + i * size)) continue;
    if (i > k) { /* rotate [k, i] right by one: item i to k, the others one up, in order */
      reverse_items(b, k, i + 1, size);
      reverse_items(b, k + 1, i + 1, size);
    }
    k++;
  }
}

double ut_median_f64(double *v, size_t n) {
  ut_sort_f64(v, n);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
