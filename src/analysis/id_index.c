/* analysis/id_index.c - see id_index.h. */
#include "analysis/id_index.h"

#include <stdlib.h>

static int64_t key_of(const an_id_index *x, uint32_t p) {
  return x->id == AN_ID_CORRELATION ? tr_event_correlation(x->t, &x->evs[p])
                                    : tr_event_external_id(x->t, &x->evs[p]);
}

int64_t an_id_index_key(const an_id_index *x, size_t i) { return key_of(x, x->pos[i]); }

/* (id, ts, position): a total order. */
static int cmp(const an_id_index *x, uint32_t a, uint32_t b) {
  int64_t ka = key_of(x, a), kb = key_of(x, b);
  if (ka != kb) return ka < kb ? -1 : 1;
  double ta = x->evs[a].ts, tb = x->evs[b].ts;
  if (ta != tb) return ta < tb ? -1 : 1;
  return a < b ? -1 : (a > b);
}

static void swap(uint32_t *a, uint32_t *b) {
  uint32_t t = *a;
  *a = *b;
  *b = t;
}

static void sift(const an_id_index *x, uint32_t *k, size_t i, size_t n) {
  for (size_t c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && cmp(x, k[c], k[c + 1]) < 0) c++;
    if (cmp(x, k[i], k[c]) >= 0) return;
    swap(&k[i], &k[c]);
  }
}

static void heap_sort(const an_id_index *x, uint32_t *k, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift(x, k, i, n);
  for (size_t e = n - 1; e > 0; e--) {
    swap(&k[0], &k[e]);
    sift(x, k, 0, e);
  }
}

/* Introsort: median-of-three quicksort, heapsort past 2 log n levels, insertion sort
 * below 16. Events come mostly in id order already, which median-of-three handles well. */
static void sort(const an_id_index *x, uint32_t *k, size_t n, unsigned depth) {
  while (n > 16) {
    if (depth-- == 0) {
      heap_sort(x, k, n);
      return;
    }
    size_t mid = n / 2;
    if (cmp(x, k[mid], k[0]) < 0) swap(&k[mid], &k[0]);
    if (cmp(x, k[n - 1], k[0]) < 0) swap(&k[n - 1], &k[0]);
    if (cmp(x, k[n - 1], k[mid]) < 0) swap(&k[n - 1], &k[mid]);
    uint32_t pivot = k[mid];
    size_t i = 0, j = n - 1;
    for (;;) { /* Hoare: k[0..j] <= pivot <= k[j+1..n) */
      while (cmp(x, k[i], pivot) < 0) i++;
      while (cmp(x, pivot, k[j]) < 0) j--;
      if (i >= j) break;
      swap(&k[i++], &k[j--]);
    }
    size_t left = j + 1; /* recurse into the smaller side, loop on the larger */
    if (left < n - left) {
      sort(x, k, left, depth);
      k += left;
      n -= left;
    } else {
      sort(x, k + left, n - left, depth);
      n = left;
    }
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && cmp(x, k[j], k[j - 1]) < 0; j--) swap(&k[j], &k[j - 1]);
}

int an_id_index_build(an_id_index *x, const tr_trace *t, tr_kind kind, an_id_kind id) {
  size_t n = 0;
  *x = (an_id_index){t, tr_trace_events(t, kind, &n), id, NULL, 0};
  x->pos = malloc((n ? n : 1) * sizeof *x->pos);
  if (!x->pos) return -1;
  for (size_t i = 0; i < n; i++)
    if (key_of(x, (uint32_t)i) != TR_NO_ID) x->pos[x->n++] = (uint32_t)i;
  unsigned depth = 2;
  for (size_t m = x->n; m > 1; m >>= 1) depth += 2;
  sort(x, x->pos, x->n, depth);
  return 0;
}

void an_id_index_free(an_id_index *x) {
  free(x->pos);
  x->pos = NULL;
  x->n = 0;
}

void an_id_index_range(const an_id_index *x, int64_t id, size_t *lo, size_t *hi) {
  size_t a = 0, b = x->n;
  while (a < b) { /* first entry with key >= id */
    size_t mid = a + (b - a) / 2;
    if (key_of(x, x->pos[mid]) < id)
      a = mid + 1;
    else
      b = mid;
  }
  *lo = a;
  b = x->n;
  while (a < b) { /* first entry with key > id */
    size_t mid = a + (b - a) / 2;
    if (key_of(x, x->pos[mid]) <= id)
      a = mid + 1;
    else
      b = mid;
  }
  *hi = a;
}
