/*
 * strcache.h - a bounded map from a string's bytes to a small integer, for memoising
 * match results per distinct string.
 *
 * Kernel and frame names repeat millions of times in a trace but are few distinct, so
 * remembering each answer once makes matching cost per distinct name. When the cache
 * reaches TE_MATCH_CACHE_MAX entries it starts over instead of growing: re-matching
 * costs time, never unbounded memory. (Not src/util/map.h: the engine stands alone, and
 * this map is bounded and starts over, which the analysis maps must not.)
 *
 * Ownership: the cache owns copies of its keys; te_strcache_clear frees everything.
 */
#ifndef TE_STRCACHE_H
#define TE_STRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct te_strcache_slot {
  char *key;
  size_t len;
  uint64_t hash;
  int value;
} te_strcache_slot;

typedef struct te_strcache {
  te_strcache_slot *slots;
  size_t cap, used;
} te_strcache; /* zero-initialised = empty */

bool te_strcache_get(const te_strcache *c, const char *s, size_t len, int *value);
/* Best effort: out of memory simply leaves the string uncached. */
void te_strcache_put(te_strcache *c, const char *s, size_t len, int value);
void te_strcache_clear(te_strcache *c);

#endif
