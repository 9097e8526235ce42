/*
 * util/search.h - the one binary search of the tree: the partition point of a range.
 *
 *   size_t first_late;
 *   UT_PARTITION_POINT(first_late, 0, n, i, starts[i] <= t);
 *
 * sets first_late to the first index i in [lo, hi) at which the condition (an expression
 * of i, the name given as the fourth argument) is false, given that it holds on a prefix
 * of the range and fails on the rest; hi when it holds everywhere. A lower bound is
 * `a[i] < x`, an upper bound `a[i] <= x`; an exact match is a lower bound, then a look at
 * the item found. Each step evaluates the condition once, at the middle of what is left.
 *
 * A macro, not a function taking a callback: the callers sit in per-kernel loops, and the
 * condition reads their own arrays in place.
 *
 * Ownership: nothing is allocated; out, lo and hi are evaluated once, the condition
 * log2(hi - lo) + 1 times at most.
 */
#ifndef TRIAGE_UTIL_SEARCH_H
#define TRIAGE_UTIL_SEARCH_H

#include <stddef.h>

#define UT_PARTITION_POINT(out, lo, hi, i, holds)         \
  do {                                                    \
    size_t ut_pp_lo_ = (lo), ut_pp_hi_ = (hi);            \
    while (ut_pp_lo_ < ut_pp_hi_) {                       \
      size_t i = ut_pp_lo_ + (ut_pp_hi_ - ut_pp_lo_) / 2; \
      if (holds)                                          \
        ut_pp_lo_ = i + 1;                                \
      else                                                \
        ut_pp_hi_ = i;                                    \
    }                                                     \
    (out) = ut_pp_lo_;                                    \
  } while (0)

#endif
