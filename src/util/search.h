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

#include <stdbool.h>
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

/* The first index i in [0, n) with v[i] >= x (v ascending; n when none), searched from
 * `hint` in steps that double, then narrowed by the partition point: a caller asking about
 * times in about ascending order (events in file order against sorted probe times) finds
 * the answer a few entries from its last one in log d compares, d entries away, where a
 * binary search over all of v took log n. The answer is the same either way. */
static inline size_t ut_lower_bound_near_f64(const double *v, size_t n, size_t hint, double x) {
  size_t at = hint < n ? hint : n, lo, hi, step = 1;
  if (at < n && v[at] < x) { /* the answer lies after at */
    lo = at + 1;
    while (lo + step - 1 < n && v[lo + step - 1] < x) {
      lo += step;
      step *= 2;
    }
    hi = lo + step - 1 < n ? lo + step - 1 : n;
  } else { /* at or before at */
    hi = at;
    while (hi >= step && v[hi - step] >= x) {
      hi -= step;
      step *= 2;
    }
    lo = hi >= step ? hi - step + 1 : 0;
  }
  size_t out;
  UT_PARTITION_POINT(out, lo, hi, i, v[i] < x);
  return out;
}

/* Whether [a, b] holds one of v[0..n) (ascending), *hint being the first index at or
 * after a asked before (0 at first) and becoming this one's. */
static inline bool ut_holds_near_f64(const double *v, size_t n, size_t *hint, double a, double b) {
  *hint = ut_lower_bound_near_f64(v, n, *hint, a);
  return *hint < n && v[*hint] <= b;
}

#endif
