/*
 * trace/number.h - decimal numbers of the JSON text to integers and doubles, exactly and
 * without strtod (private to src/trace).
 *
 * Kineto writes times as decimals with at most three fractional digits
 * ("4909913692199.694", or 19 significant digits for epoch microseconds). Such a number is
 * an integer mantissa m and a count k of fractional digits; the double of the text is
 * the one nearest m / 10^k, which tr_decimal_to_double computes exactly (strtod, which
 * the reader used before for mantissas past 2^53, gives the same double: both round to
 * nearest, ties to even).
 */
#ifndef TRIAGE_TRACE_NUMBER_H
#define TRIAGE_TRACE_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Most significant digits a mantissa holds (10^19 - 1 < 2^64). */
#define TR_DECIMAL_MAX_DIGITS 19u

/* Whether the 8 bytes at p are all ASCII digits. */
static inline bool tr_eight_digits(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return (((v & 0xF0F0F0F0F0F0F0F0ull) |
           (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) == 0x3333333333333333ull);
}

/* m followed by the n decimal digits at p: 8 digits per step (SWAR: pairs, then
 * quadruples, then the eight, with three multiplies). The caller guarantees the result
 * fits (at most 19 significant digits), so no prefix overflows either. */
static inline uint64_t tr_digits_append(uint64_t m, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    v -= 0x3030303030303030ull;
    v = (v * 10) + (v >> 8);
    v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
        32;
    m = m * 100000000ull + (uint32_t)v;
  }
  for (; n; p++, n--) m = m * 10 + (uint64_t)(*p - '0');
  return m;
}

/* The double nearest to m / 10^k (ties to even), negated when neg (-0.0 for a negative
 * zero). false when it cannot tell without strtod: k > 19 with m past 2^53. */
bool tr_decimal_to_double(uint64_t m, unsigned k, bool neg, double *out);

#endif
