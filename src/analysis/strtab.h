/*
 * analysis/strtab.h - string interning for the analysis: every derived string
 * (canonical names, locations, stacks, rendered cells) is stored once and compared by
 * pointer afterwards.
 *
 * Ownership: an_strtab owns every string it returns (arena blocks); the pointers stay
 * valid until an_strtab_destroy.
 */
#ifndef TRIAGE_ANALYSIS_STRTAB_H
#define TRIAGE_ANALYSIS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct an_strtab an_strtab;

an_strtab *an_strtab_create(void);
void an_strtab_destroy(an_strtab *t);
/* The interned copy of s (len bytes), NUL-terminated; NULL only when out of memory. */
const char *an_strtab_intern(an_strtab *t, const char *s, size_t len);
const char *an_strtab_cstr(an_strtab *t, const char *s);

/* Generic 64-bit key -> pointer map (open addressing), used for id indexes. */
typedef struct an_u64map {
  uint64_t *keys;
  void **vals;
  size_t n, cap;
} an_u64map;
void *an_u64map_get(const an_u64map *m, uint64_t key);
/* Returns 0 on success, -1 when out of memory. */
int an_u64map_put(an_u64map *m, uint64_t key, void *val);
void an_u64map_free(an_u64map *m);

uint64_t an_hash_bytes(const void *p, size_t n);

#endif
