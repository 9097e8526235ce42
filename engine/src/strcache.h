/*
 * strcache.h - a bounded map from a string's bytes to a small integer, for memoising
 * match results per distinct string.
 *
 * Kernel and frame names repeat millions of times in a trace but are few distinct, so
 * remembering each answer once makes matching cost per distinct name. When the cache
 * reaches TE_MATCH_CACHE_MAX entries it starts over instead of growing: re-matching
 * costs time, never unbounded memory. A trace with hundreds of thousands of distinct
 * names is the hard case, so keys live in a few large blocks (one free per block when
 * the cache starts over, not one per key) and the hash is mixed before masking (names
 * that differ only in trailing digits would otherwise crowd neighbouring slots). (Not
 * src/util/map.h: the engine stands alone, and this map is bounded and starts over,
 * which the analysis maps must not.)
 *
 * Ownership: the cache owns copies of its keys; te_strcache_clear frees everything.
 */
#ifndef TE_STRCACHE_H
#define TE_STRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct te_strcache_slot {
  const char *key; /* NULL = free slot */
  uint32_t len;
  int32_t value;
  uint64_t hash;
} te_strcache_slot;

typedef struct te_strcache_block te_strcache_block; /* key storage, private */

typedef struct te_strcache {
  te_strcache_slot *slots;
  size_t cap, used;
  te_strcache_block *blocks;
} te_strcache; /* zero-initialised = empty */

bool te_strcache_get(const te_strcache *c, const char *s, size_t len, int *value);
/* Best effort: out of memory (or a key over 4 GB) simply leaves the string uncached. */
void te_strcache_put(te_strcache *c, const char *s, size_t len, int value);
void te_strcache_clear(te_strcache *c);

#endif
