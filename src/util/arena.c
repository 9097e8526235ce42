/* util/arena.c - see arena.h. */
#include "util/arena.h"

#include <stdlib.h>

struct ut_arena_block {
  ut_arena_block *next;
  size_t used, cap;
  /* data follows, 8-byte aligned by the struct's size */
};

void *ut_arena_alloc(ut_arena *a, size_t n) {
  n = (n + 7u) & ~(size_t)7u;
  ut_arena_block *b = a->blocks;
  if (!b || b->cap - b->used < n) {
    size_t cap = a->next ? a->next : UT_ARENA_FIRST, max = a->max ? a->max : UT_ARENA_MAX;
    a->next = cap < max ? cap * 2 : cap;
    if (cap < n) cap = n;
    b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = a->blocks;
    a->blocks = b;
  }
  void *p = (char *)(b + 1) + b->used;
  b->used += n;
  return p;
}

void ut_arena_free(ut_arena *a) {
  for (ut_arena_block *b = a->blocks, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  a->blocks = NULL;
}
