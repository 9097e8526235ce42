/*
 * util/sort.h - an in-place sort with a context argument.
 *
 * glibc's qsort is a merge sort that mallocs a buffer as large as the array: on the big
 * arrays of the analysis (event indexes, sweep points) that buffer sat on top of the peak
 * memory (A4 in docs/performance.md). ut_sort is an introsort (median-of-three quicksort,
 * heapsort past 2 log n levels, insertion sort below 16 items) that allocates nothing,
 * after an insertion-sort pass that finishes input already nearly in order in about n
 * comparisons (events read in file order usually are).
 * It is not stable: give it a comparator that is a total order (ties broken by position
 * or another unique field); then its result is the same as any other sort's.
 *
 * Ownership: sorts the caller's array; keeps nothing.
 */
#ifndef TRIAGE_UTIL_SORT_H
#define TRIAGE_UTIL_SORT_H

#include <stddef.h>

typedef int (*ut_sort_cmp)(const void *a, const void *b, void *ctx);

void ut_sort(void *base, size_t n, size_t size, ut_sort_cmp cmp, void *ctx);

#endif
