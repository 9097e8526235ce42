/* util/vec.c - growing arrays (vec.h). */
#include "util/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* Arrays from this size on ask for transparent huge pages (2 MiB). Such arrays are
 * mmapped by malloc (cli/main.c fixes its threshold at 256 KiB), and every 4 KiB page of
 * them costs a page fault when first written: the event and frame arrays of a big trace
 * took half the run's faults, and a fault costs more in a VM. With huge pages, one fault
 * maps 2 MiB. */
#define HUGE_ARRAY_BYTES (4u << 20)

/* Advises huge pages for the pages of [p, p + n): for a block malloc mmapped, its whole
 * mapping (the block starts a few bytes into its first page), so the mapping stays one
 * piece that realloc can still grow with mremap (advice on part of it would split it, and
 * realloc would copy). A hint: without THP, or off Linux, nothing changes. */
static void advise_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  uintptr_t page = 4096, a = (uintptr_t)p & ~(page - 1);
  uintptr_t b = ((uintptr_t)p + n + page - 1) & ~(page - 1);
  (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
  (void)p, (void)n;
#endif
}

void *ut_grow(void *items, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap && items) return items;
  size_t nc = *cap ? *cap : 8;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) return NULL;
    nc *= 2;
  }
  if (elem && nc > SIZE_MAX / elem) return NULL;
  void *v = realloc(items, nc * elem);
  if (!v) return NULL;
  if (nc * elem >= HUGE_ARRAY_BYTES) advise_huge(v, nc * elem);
  *cap = nc;
  return v;
}

void *ut_reserve(void *items, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap && items) return items;
  if (elem && need > SIZE_MAX / elem) return NULL;
  void *v = realloc(items, (need ? need : 1) * elem);
  if (!v) return NULL;
  if (need * elem >= HUGE_ARRAY_BYTES) advise_huge(v, need * elem);
  *cap = need;
  return v;
}

void *ut_grow_zeroed(void *items, size_t *cap, size_t need, size_t elem) {
  size_t old = items ? *cap : 0;
  void *v = ut_grow(items, cap, need, elem);
  if (v && *cap > old) memset((char *)v + old * elem, 0, (*cap - old) * elem);
  return v;
}

void *ut_shrink(void *items, size_t *cap, size_t n, size_t elem) {
  if (!items || n == 0 || n >= *cap) return items;
  void *v = realloc(items, n * elem);
  if (!v) return items;
  *cap = n;
  return v;
}
