/*
 * util/sort.h - an in-place sort with a context argument.
 *
 * glibc's qsort is a merge sort that mallocs a buffer as large as the array: on the big
 * arrays of the analysis (event indexes, sweep points) that buffer sat on top of the peak
 * memory (A4 in docs/performance.md). ut_sort is an introsort (median-of-three quicksort,
 * heapsort past 2 log n levels, insertion sort below 16 items) that allocates nothing,
 * unless the input is made of ascending runs (events read in file order usually are: a
 * few, or hundreds of long ones): those are merged through a buffer of at most a
 * sixteenth of the array (a longer merge is split into pieces that fit), and past 64
 * runs a list of their starts (one size_t per 32 items at most).
 * It is not stable: give it a comparator that is a total order (ties broken by position
 * or another unique field); then its result is the same as any other sort's.
 *
 * Ownership: sorts the caller's array; keeps nothing (a merge buffer is freed before
 * returning; without memory for it the array is sorted in place).
 */
#ifndef TRIAGE_UTIL_SORT_H
#define TRIAGE_UTIL_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*ut_sort_cmp)(const void *a, const void *b, void *ctx);

void ut_sort(void *base, size_t n, size_t size, ut_sort_cmp cmp, void *ctx);

/* Sorts v[0..n) ascending in O(n): a radix sort, a byte a pass (passes where every key
 * has the same byte are skipped), through tmp (n keys; NULL when none could be had: then
 * ut_sort, the same result in O(n log n)). */
void ut_sort_u64(uint64_t *v, size_t n, uint64_t *tmp);

/* Sorts doubles v[0..n) ascending in O(n): ut_sort_u64 of keys that order as the values do
 * (the sign bit flipped, all bits of a negative one) in a buffer of n it allocates, v being
 * the sort's other buffer (none to be had: ut_sort); a short list by insertion, with no
 * buffer. For the long arrays of times
 * the analysis probes (a comparison sort's calls were most of a sort of gap times) and the
 * many short ones. v holds no NaN; -0.0 sorts before 0.0. */
void ut_sort_f64(double *v, size_t n);

/* The median of v[0..n) (n > 0; the mean of the middle two when n is even), sorting v
 * ascending (ut_sort_f64). */
double ut_median_f64(double *v, size_t n);

/* The value v[k] would hold were v[0..n) sorted ascending (k < n), found in O(n) time on
 * average (a quickselect with three-way partitions, so runs of equal values cost one
 * pass; past 2 log n rounds the rest is sorted, so no input takes quadratic time). v is
 * reordered. A median needs no full sort of what it is taken from. */
int64_t ut_select_i64(int64_t *v, size_t n, size_t k);

/* Moves the items first() holds for ahead of the others, each group keeping its order
 * (ut_sort is not stable). In place, no allocation; O(n * moved) item moves, meant for
 * the short lists of table rows (a row's index is its printed number). */
void ut_stable_partition(void *base, size_t n, size_t size, bool (*first)(const void *item));

#endif
