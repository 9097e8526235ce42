/*
 * grow.h - growing arrays for the engine (private to the engine).
 *
 *   if (!(v = te_grow(v, &cap, n + 1, sizeof *v, 16))) return TE_ERR_NOMEM;
 *
 * The engine stands alone, without src/util (docs/design.md), so this is its own growth
 * step rather than util/vec.h's ut_grow: the same doubling, without ut_grow's advice for
 * huge arrays (a rule set's arrays stay small).
 *
 * Ownership: the array stays the caller's; on failure it is untouched (still owned) and
 * NULL comes back.
 */
#ifndef TE_GROW_H
#define TE_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* items with room for need elements of elem bytes: as is when *cap holds them, else
 * reallocated to *cap doubled (from first) until it does; *cap is updated. */
static inline void *te_grow(void *items, size_t *cap, size_t need, size_t elem, size_t first) {
  if (items && need <= *cap) return items;
  size_t nc = *cap ? *cap : first ? first : 1;
  for (; nc < need; nc *= 2)
    if (nc > SIZE_MAX / 2) return NULL;
  if (elem && nc > SIZE_MAX / elem) return NULL;
  void *v = realloc(items, nc * elem);
  if (v) *cap = nc;
  return v;
}

#endif
