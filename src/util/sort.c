/* util/sort.c - see sort.h. */
#include "util/sort.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Items up to this size are swapped through one stack buffer, larger ones in pieces. */
#define SWAP_CHUNK 64u
/* Quicksort keeps a copy of its pivot on the stack; larger items are heap-sorted. */
#define PIVOT_MAX 256u

typedef struct sorter {
  size_t size;
  ut_sort_cmp cmp;
  void *ctx;
} sorter;

static unsigned char *at(const sorter *s, unsigned char *b, size_t i) { return b + i * s->size; }

static int cmp_at(const sorter *s, unsigned char *b, size_t i, size_t j) {
  return s->cmp(at(s, b, i), at(s, b, j), s->ctx);
}

static void swap_at(const sorter *s, unsigned char *b, size_t i, size_t j) {
  if (i == j) return;
  unsigned char tmp[SWAP_CHUNK], *x = at(s, b, i), *y = at(s, b, j);
  for (size_t off = 0; off < s->size; off += SWAP_CHUNK) {
    size_t k = s->size - off < SWAP_CHUNK ? s->size - off : SWAP_CHUNK;
    memcpy(tmp, x + off, k);
    memcpy(x + off, y + off, k);
    memcpy(y + off, tmp, k);
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

/* Insertion sort while it stays cheap: true when b is sorted within a budget of moves
 * linear in n. Events in file order are nearly sorted by id and time (a few items out of
 * place), which costs introsort n log n comparisons and this about n. When the budget
 * runs out, b is a permutation of its input and the caller sorts it in full. */
static bool nearly_sorted(const sorter *s, unsigned char *b, size_t n) {
  size_t budget = 2 * n + 64;
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && cmp_at(s, b, j, j - 1) < 0; j--) {
      swap_at(s, b, j, j - 1);
      if (--budget == 0) return false;
    }
  return true;
}

void ut_sort(void *base, size_t n, size_t size, ut_sort_cmp cmp, void *ctx) {
  if (n < 2 || size == 0) return;
  sorter s = {size, cmp, ctx};
  if (nearly_sorted(&s, base, n)) return;
  if (size > PIVOT_MAX) { /* no room for a pivot copy: heapsort needs none */
    heap_sort(&s, base, n);
    return;
  }
  unsigned char pivot[PIVOT_MAX];
  unsigned depth = 2;
  for (size_t m = n; m > 1; m >>= 1) depth += 2;
  intro_sort(&s, base, n, depth, pivot);
}
