/*
 * arena.h - bump allocator and string interning for one rule set.
 *
 * Everything a te_rules builds lives until te_rules_destroy, so individual frees would
 * only add bookkeeping: an arena hands out memory and releases it all at once. Interned
 * strings let rule ids be compared and deduplicated cheaply across packs.
 *
 * The engine library stands alone (it must not depend on src/), so this is its own arena
 * rather than src/trace/intern.h, which serves triage_core.
 *
 * Ownership: te_arena owns every block it returned; te_arena_destroy frees them all.
 */
#ifndef TE_ARENA_H
#define TE_ARENA_H

#include <stddef.h>

typedef struct te_arena te_arena;

te_arena *te_arena_create(void);
void te_arena_destroy(te_arena *a);
/* Zeroed memory aligned for any type, or NULL when out of memory. */
void *te_arena_alloc(te_arena *a, size_t size);
/* A NUL-terminated copy of s[0..len), shared with every earlier equal string. */
const char *te_arena_intern_n(te_arena *a, const char *s, size_t len);
const char *te_arena_intern(te_arena *a, const char *s);
/* Copies n pointers into arena memory (NULL when n == 0). */
void *te_arena_dup(te_arena *a, const void *src, size_t size);

#endif
