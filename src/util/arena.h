/*
 * util/arena.h - bump allocation in blocks that grow, freed all at once: the string
 * copies of the trace's intern table and of the string map live here instead of one
 * malloc each (a trace of 262,145 kernel names is that many mallocs and frees otherwise).
 *
 *   ut_arena a = {.next = 64 * 1024, .max = 8 * 1024 * 1024};   // or {0}: small blocks
 *   char *p = ut_arena_alloc(&a, n);
 *   ...
 *   ut_arena_free(&a);
 *
 * Ownership: an arena owns its blocks; every pointer it returned stays valid (it never
 * moves) until ut_arena_free, which leaves an empty arena.
 */
#ifndef TRIAGE_UTIL_ARENA_H
#define TRIAGE_UTIL_ARENA_H

#include <stddef.h>

typedef struct ut_arena_block ut_arena_block;

typedef struct ut_arena {
  ut_arena_block *blocks; /* newest first */
  size_t next;            /* bytes of the next block (0: UT_ARENA_FIRST); doubles */
  size_t max;             /* the largest block (0: UT_ARENA_MAX) */
} ut_arena;

#define UT_ARENA_FIRST 64u
#define UT_ARENA_MAX (64u * 1024u)

/* n bytes, 8-byte aligned; a request larger than the next block gets a block of its own
 * size. NULL when out of memory. */
void *ut_arena_alloc(ut_arena *a, size_t n);
void ut_arena_free(ut_arena *a);

#endif
