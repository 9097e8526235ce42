/*
 * strcache.h - a bounded map from a string's bytes to a small integer, for memoising
 * match results per distinct string.
 *
 * Kernel and frame names repeat millions of times in a trace but are few distinct, so
 * remembering each answer once makes matching cost per distinct name. When the cache
 * holds TE_MATCH_CACHE_MAX strings it stops admitting new ones: the strings it holds
 * stay answered, the rest are matched each time. (Starting over instead made a trace of
 * one name more than the bound miss on every name, in every pass the analysis makes over
 * its names.) A trace with hundreds of thousands of distinct names is the hard case, so
 * an entry is small: an 8-byte slot (hash and key offset) and the key with its length
 * and value in one growing buffer, not a pointer-sized record and a malloc per key. The
 * hash is mixed before masking (names that differ only in trailing digits would
 * otherwise crowd neighbouring slots). (Not src/util/map.h: the engine stands alone, and
 * this map is bounded, which the analysis maps must not be.)
 *
 * Ownership: the cache owns copies of its keys; te_strcache_clear frees everything.
 */
#ifndef TE_STRCACHE_H
#define TE_STRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct te_strcache_slot {
  uint32_t hash;
  uint32_t at; /* offset of the entry in keys, plus one; 0 = free slot */
} te_strcache_slot;

typedef struct te_strcache {
  te_strcache_slot *slots;
  size_t cap, used;
  char *keys; /* entries: uint32 length, int32 value, the key's bytes, padded to 4 */
  size_t keys_used, keys_cap;
} te_strcache; /* zero-initialised = empty */

bool te_strcache_get(const te_strcache *c, const char *s, size_t len, int *value);
/* Best effort: out of memory (or keys past 4 GB in all) simply leaves the string
 * uncached. */
void te_strcache_put(te_strcache *c, const char *s, size_t len, int value);
void te_strcache_clear(te_strcache *c);
/* Puts every entry of src into dst (as te_strcache_put: dst's bound holds). */
void te_strcache_add_all(te_strcache *dst, const te_strcache *src);

/* Lanes (rules.h, te_lane_enter): up to TE_LANES threads querying one rule set at once.
 * te_lane_now is the calling thread's lane, 0 outside any (then it is the rule set's only
 * querying thread). */
#define TE_LANES 2
extern _Thread_local unsigned te_lane_now;

/* A cache lanes share. Outside lanes it is the one map. In a lane the shared map is only
 * read and the lane's answers go to a map of its own, made on its first answer and touched
 * by that lane alone; te_lcache_fold adds them to the shared map once the lanes ended.
 * (zero-initialised = empty) */
typedef struct te_lcache {
  te_strcache shared;
  te_strcache *lane[TE_LANES];
} te_lcache;

bool te_lcache_get(const te_lcache *c, const char *s, size_t len, int *value);
void te_lcache_put(te_lcache *c, const char *s, size_t len, int value);
/* Only when no lane runs: the lanes' answers join the shared map. */
void te_lcache_fold(te_lcache *c);
void te_lcache_clear(te_lcache *c);

#endif
