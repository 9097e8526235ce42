/* trace/number.c - see number.h. */
#include "trace/number.h"

/* Exact powers of ten: as doubles up to 10^22 (the largest a double holds exactly), as
 * integers up to 10^19. */
static const double k_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const uint64_t k_pow10_int[] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

#ifdef __SIZEOF_INT128__
/* 2^e as a double, for -1022 <= e <= 1023. */
static double pow2(int e) {
  uint64_t bits = (uint64_t)(1023 + e) << 52;
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* m / 10^k rounded to nearest, ties to even, for m > 2^53 and 1 <= k <= 19: the quotient
 * of m * 2^64 by 10^k in 128-bit integers (at least 54 bits of it, since m > 2^53 and
 * 10^k < 2^64), cut to 53 bits; the cut bits and the remainder decide the rounding. */
static double divide_exact(uint64_t m, unsigned k) {
  uint64_t d = k_pow10_int[k];
  unsigned __int128 n = (unsigned __int128)m << 64;
  unsigned __int128 q = n / d;
  bool rest = n % d != 0;
  uint64_t hi = (uint64_t)(q >> 64);
  int bits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)q);
  int shift = bits - 53; /* >= 1 */
  uint64_t mant = (uint64_t)(q >> shift);
  unsigned __int128 cut = q & (((unsigned __int128)1 << shift) - 1);
  unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
  if (cut > half || (cut == half && (rest || (mant & 1)))) mant++; /* 2^53 stays exact */
  return (double)mant * pow2(shift - 64);
}
#endif

bool tr_decimal_scaled_to_double(uint64_t m, unsigned k, bool neg, double *out) {
  double d;
  if (k == 0) {
    d = (double)m; /* as tr_decimal_to_double: one rounding, none below 2^53 */
  } else if (m <= (1ull << 53) && k <= 22) {
    d = (double)m / k_pow10[k]; /* both exact: one rounding */
  } else {
#ifdef __SIZEOF_INT128__
    if (k > 19) return false;
    d = divide_exact(m, k);
#else
    return false;
#endif
  }
  *out = neg ? -d : d;
  return true;
}
