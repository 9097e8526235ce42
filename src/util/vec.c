/* util/vec.c - growing arrays (vec.h). */
#include "util/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
  *cap = nc;
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
