/*
 * triage/hash.h - string hashing for open-addressing tables: the engine's match caches,
 * arena strings and token index, and the trace's intern table (src/trace/intern.c). One
 * hash for all of them, public because the trace layer sits above the engine.
 *
 * Slots are picked by the low bits (h & mask), and kernel names often differ only in
 * their last bytes (kernel_1, kernel_2, ...): every hash ends with murmur3's finaliser,
 * which makes the low bits depend on every input bit.
 */
#ifndef TRIAGE_HASH_H
#define TRIAGE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t te_hash_mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

/* Eight bytes per step (a byte-wise hash was a tenth of a run on many distinct names,
 * each hashed by every cache that meets it). */
static inline uint64_t te_hash_text(const char *s, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  memcpy(&tail, s + i, len - i);
  return te_hash_mix((h ^ tail) * 0xc4ceb9fe1a85ec53ull);
}

#endif
