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

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TR_NUMBER_SWAR 1 /* the 8-byte tricks below read the first byte as the lowest */
#endif

/* The value of 8 ASCII digits in one word (SWAR: pairs, then quadruples, then the eight,
 * with three multiplies). */
static inline uint32_t tr_eight_digits_value(uint64_t v) {
  v -= 0x3030303030303030ull;
  v = (v * 10) + (v >> 8);
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  return (uint32_t)v;
}

/* m followed by the n decimal digits at p: 8 digits per step. The caller guarantees the
 * result fits (at most 19 significant digits), so no prefix overflows either. */
static inline __attribute__((always_inline)) uint64_t tr_digits_append(uint64_t m, const uint8_t *p,
                                                                       size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    m = m * 100000000ull + tr_eight_digits_value(v);
  }
  for (; n; p++, n--) m = m * 10 + (uint64_t)(*p - '0');
  return m;
}

#ifdef TR_NUMBER_SWAR
/* m followed by the first k (1..7) digits of the word v: the k digits converted as the low
 * end of 8 digits that '0's lead. */
static inline uint64_t tr_digits_append_low(uint64_t m, uint64_t v, unsigned k) {
  static const uint32_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  unsigned sh = 8 * (8 - k);
  v = (v << sh) | (0x3030303030303030ull >> (64 - sh));
  return m * pow10[k] + tr_eight_digits_value(v);
}
#endif

/* tr_digits_append when 8 bytes can be read at p + (n & ~7): the last n % 8 digits are
 * converted in one step too (tr_digits_append_low). */
static inline __attribute__((always_inline)) uint64_t tr_digits_append_wide(uint64_t m,
                                                                            const uint8_t *p,
                                                                            size_t n) {
#ifdef TR_NUMBER_SWAR
  m = tr_digits_append(m, p, n & ~(size_t)7);
  unsigned k = (unsigned)(n & 7);
  if (!k) return m;
  uint64_t v;
  memcpy(&v, p + (n & ~(size_t)7), 8);
  return tr_digits_append_low(m, v, k);
#else
  return tr_digits_append(m, p, n);
#endif
}

#ifdef TR_NUMBER_SWAR
/* How many of the 8 bytes of the word v, from the first, are ASCII digits (0..8). */
static inline unsigned tr_digits_in_word(uint64_t v) {
  uint64_t x = v ^ 0x3030303030303030ull;                           /* a digit becomes 0..9 */
  uint64_t y = (x & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull; /* bit 7: 10 or more */
  uint64_t other = (x | y) & 0x8080808080808080ull;
  return other ? (unsigned)__builtin_ctzll(other) >> 3 : 8u;
}
#endif

/* How many of the 8 bytes at p, from the first, are ASCII digits (0..8). */
static inline unsigned tr_digits_in8(const uint8_t *p) {
#ifdef TR_NUMBER_SWAR
  uint64_t v;
  memcpy(&v, p, 8);
  return tr_digits_in_word(v);
#else
  unsigned n = 0;
  while (n < 8 && (uint8_t)(p[n] - '0') < 10) n++;
  return n;
#endif
}

/* tr_decimal_to_double for k >= 1 (out of line: a division, or 128-bit integers). */
bool tr_decimal_scaled_to_double(uint64_t m, unsigned k, bool neg, double *out);

/* The double nearest to m / 10^k (ties to even), negated when neg (-0.0 for a negative
 * zero). false when it cannot tell without strtod: k > 19 with m past 2^53. A whole
 * number (k = 0: every time of traces in whole microseconds, such as hta's) is one
 * conversion here, not a call per time. */
static inline bool tr_decimal_to_double(uint64_t m, unsigned k, bool neg, double *out) {
  if (k) return tr_decimal_scaled_to_double(m, k, neg, out);
  double d = (double)m; /* one rounding, none below 2^53 */
  *out = neg ? -d : d;
  return true;
}

#endif
