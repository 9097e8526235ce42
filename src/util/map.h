/*
 * util/map.h - the hash maps of the analysis: a 64-bit key -> 64-bit value map, a string
 * -> dense index map (indices 0, 1, 2, ... in insertion order, which keeps every "first
 * seen wins" tie-break of the reference), and a counter of strings built on it.
 *
 * Open addressing with linear probing, load <= 3/4 for the u64 map (17-byte slots: at 1/2,
 * 262,145 names needed a 17 MB map) and <= 1/2 for the string map (4-byte slots). Keys are
 * not adversarial enough to need a keyed hash: a trace is input, but probing stays linear
 * in the worst case.
 *
 * Ownership: each map owns its arrays (and ut_strmap its key copies, which never move:
 * keys[i] stays valid until ut_strmap_free); *_free releases them and leaves an empty
 * map. A zeroed struct is an empty map.
 */
#ifndef TRIAGE_UTIL_MAP_H
#define TRIAGE_UTIL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

/* FNV-1a of n bytes. */
uint64_t ut_hash_bytes(const void *p, size_t n);
/* A hash of text s (len bytes) for tables keyed by text, eight bytes a step and mixed so
 * that its low bits depend on every byte (ut_hash_bytes, a byte at a time, was a third of
 * a string map insert of a ~20-byte kernel name). Its value must decide nothing but where a
 * key sits: it differs between byte orders. */
uint32_t ut_hash_text(const char *s, size_t len);

/* ---------------------------------------------------------------- u64 -> u64 */

/* Key and value side by side, so a probe reads one cache line; key 0 marks a free slot
 * (calloc'd slots are free without a pass over them), and the key 0 itself is kept
 * beside the slots. Zero-initialised = empty. */
typedef struct ut_u64map_slot {
  uint64_t key, val;
} ut_u64map_slot;

typedef struct ut_u64map {
  ut_u64map_slot *slots;
  size_t n, cap; /* n counts the key 0 too */
  bool has_zero;
  uint64_t zero_val;
} ut_u64map;

/* True with *val when key is present. */
bool ut_u64map_get(const ut_u64map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces. Returns false when out of memory. */
bool ut_u64map_put(ut_u64map *m, uint64_t key, uint64_t val);
void ut_u64map_free(ut_u64map *m);

/* ---------------------------------------------------------------- string -> index */

typedef struct ut_strmap {
  const char **keys; /* copies (or borrowed keys, ut_strmap_put_borrowed), by index */
  uint32_t *hashes;  /* each key's hash, by index: probes compare it first, growth reuses it */
  size_t n, cap;
  uint32_t *slots; /* index + 1; 0 = empty */
  size_t n_slots;
  ut_arena arena; /* the key copies; blocks double from 64 bytes, so a small map costs one */
} ut_strmap;

/* Index of key (len bytes); inserts it when absent. -1 only when out of memory. */
long ut_strmap_put(ut_strmap *m, const char *key, size_t len);
/* ut_strmap_put for a key that outlives the map and holds a NUL at key[len]: a new key
 * is kept as that pointer, not copied. */
long ut_strmap_put_borrowed(ut_strmap *m, const char *key, size_t len);
/* Index of key or -1. */
long ut_strmap_find(const ut_strmap *m, const char *key, size_t len);
void ut_strmap_free(ut_strmap *m);

/* ---------------------------------------------------------------- set of texts */

/* Which items of a caller's table have equal texts, by hash: slots hold an item's index + 1
 * (0 = empty) and the texts stay the caller's (no key copies, no key array: at 262,145
 * names 2 MB of slots, where a string map's keys and hashes were 3 MB more), a power of
 * two of slots at most 3/4 full. Ownership: the set borrows items, whose texts must not
 * change while it is used; ut_textset_free releases the slots. */
typedef struct ut_textset {
  uint32_t *slots;
  size_t mask;
  const char *(*text)(const void *items, size_t i); /* item i's text */
  const void *items;
} ut_textset;

/* A set with room for n items (ut_textset_put at most n times). False when out of memory. */
bool ut_textset_init(ut_textset *t, size_t n, const char *(*text)(const void *, size_t),
                     const void *items);
/* The first item put whose text equals item i's, else i, now put. */
size_t ut_textset_put(ut_textset *t, size_t i);
/* The item put whose text is s, or SIZE_MAX. */
size_t ut_textset_find(const ut_textset *t, const char *s);
void ut_textset_free(ut_textset *t);

/* ---------------------------------------------------------------- counter */

/* Counts per string; the most common wins, the first inserted among equals (Python's
 * Counter.most_common order). */
typedef struct ut_counter {
  ut_strmap keys;
  size_t *counts;
  size_t cap;
} ut_counter;

bool ut_counter_add(ut_counter *c, const char *key, size_t times);
/* Most common key or NULL when empty; borrowed from the counter. */
const char *ut_counter_top(const ut_counter *c);
void ut_counter_free(ut_counter *c);

#endif
