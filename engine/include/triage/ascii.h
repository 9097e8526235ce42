/*
 * triage/ascii.h - ASCII case folding for the engine's subjects and the layers above
 * (trace names and categories, kernel-map keys, fusion gates). One routine instead of a
 * byte loop in each: folding every name once per module was a visible part of runs with
 * many distinct kernel names. Public because the trace layer sits above the engine.
 *
 * Only 'A'..'Z' change, whatever the locale: names are bytes, and a rule pack must match
 * the same way on every machine.
 */
#ifndef TRIAGE_ASCII_H
#define TRIAGE_ASCII_H

#include <stddef.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* c lower-cased if it is an ASCII capital. */
static inline unsigned char te_ascii_lower_byte(unsigned char c) {
  return (unsigned)(c - 'A') < 26u ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* dst[0..n) = src[0..n) with ASCII capitals lower-cased; dst may be src. No NUL added. */
static inline void te_ascii_lower(char *dst, const char *src, size_t n) {
  size_t i = 0;
#ifdef __SSE2__
  /* bytes >= 0x80 compare as negative, so they stay as they are */
  const __m128i before_a = _mm_set1_epi8('A' - 1), after_z = _mm_set1_epi8('Z' + 1);
  const __m128i to_lower = _mm_set1_epi8('a' - 'A');
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
    __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, before_a), _mm_cmplt_epi8(v, after_z));
    _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm_add_epi8(v, _mm_and_si128(upper, to_lower)));
  }
#endif
  for (; i < n; i++) dst[i] = (char)te_ascii_lower_byte((unsigned char)src[i]);
}

#endif
