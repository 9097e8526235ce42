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

#include <stddef.h>

typedef int (*ut_sort_cmp)(const void *a, const void *b, void *ctx);

void ut_sort(void *base, size_t n, size_t size, ut_sort_cmp cmp, void *ctx);

#endif
