/*
 * util/vec.h - growing arrays by doubling, and trimming them, in one place.
 *
 *   if (n == cap) {
 *     T *v = ut_grow(arr, &cap, n + 1, sizeof *arr);
 *     if (!v) return false;   // arr and cap unchanged
 *     arr = v;
 *   }
 *
 * Ownership: the array is the caller's (malloc/realloc memory, freed with free).
 */
#ifndef TRIAGE_UTIL_VEC_H
#define TRIAGE_UTIL_VEC_H

#include <stddef.h>

/* The array items (elem bytes each, *cap of them) reallocated to hold at least need:
 * the capacity doubles from 8 until it does. Returns the array to use, or NULL when out
 * of memory or when the size would overflow (items stays valid, *cap unchanged). */
void *ut_grow(void *items, size_t *cap, size_t need, size_t elem);

/* The array reallocated to hold exactly need items when it holds fewer (*cap = need): for
 * a count known before filling, where doubling would leave up to half of it unused.
 * Returns the array to use, or NULL when out of memory or on overflow (items stays valid,
 * *cap unchanged). */
void *ut_reserve(void *items, size_t *cap, size_t need, size_t elem);

/* ut_grow for an array indexed by id: the items it adds are zeroed (0 = "none yet"). */
void *ut_grow_zeroed(void *items, size_t *cap, size_t need, size_t elem);

/* The array trimmed to n items (*cap = n) when it holds more room than that; unchanged
 * when n is 0, already fits, or realloc fails (the array stays valid either way). */
void *ut_shrink(void *items, size_t *cap, size_t n, size_t elem);

#endif
