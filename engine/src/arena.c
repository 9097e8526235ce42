/* arena.c - see arena.h. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "triage/hash.h"

#define ARENA_BLOCK_BYTES (64u * 1024u)
#define ARENA_ALIGN 16u

typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} arena_block;

typedef struct intern_slot {
  const char *str;
  size_t len;
  uint64_t hash;
} intern_slot;

struct te_arena {
  arena_block *blocks;
  intern_slot *slots; /* open addressing, power-of-two capacity */
  size_t n_slots, n_used;
};

te_arena *te_arena_create(void) { return calloc(1, sizeof(te_arena)); }

void te_arena_destroy(te_arena *a) {
  if (!a) return;
  arena_block *b = a->blocks;
  while (b) {
    arena_block *next = b->next;
    free(b);
    b = next;
  }
  free(a->slots);
  free(a);
}

void *te_arena_alloc(te_arena *a, size_t size) {
  size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (size == 0) size = ARENA_ALIGN;
  arena_block *b = a->blocks;
  if (!b || b->cap - b->used < size) {
    /* Oversized requests get a block of their own so the current block keeps serving. */
    size_t cap = size > ARENA_BLOCK_BYTES ? size : ARENA_BLOCK_BYTES;
    arena_block *nb = malloc(sizeof(arena_block) + cap);
    if (!nb) return NULL;
    nb->used = 0;
    nb->cap = cap;
    if (b && size > ARENA_BLOCK_BYTES) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->blocks = nb;
    }
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *te_arena_dup(te_arena *a, const void *src, size_t size) {
  if (size == 0) return NULL;
  void *p = te_arena_alloc(a, size);
  if (p) memcpy(p, src, size);
  return p;
}

static int intern_grow(te_arena *a) {
  size_t n = a->n_slots ? a->n_slots * 2 : 256;
  intern_slot *slots = calloc(n, sizeof(intern_slot));
  if (!slots) return -1;
  for (size_t i = 0; i < a->n_slots; i++) {
    if (!a->slots[i].str) continue;
    size_t j = (size_t)a->slots[i].hash & (n - 1);
    while (slots[j].str) j = (j + 1) & (n - 1);
    slots[j] = a->slots[i];
  }
  free(a->slots);
  a->slots = slots;
  a->n_slots = n;
  return 0;
}

const char *te_arena_intern_n(te_arena *a, const char *s, size_t len) {
  if ((a->n_used + 1) * 2 > a->n_slots && intern_grow(a) != 0) return NULL;
  uint64_t h = te_hash_text(s, len);
  size_t j = (size_t)h & (a->n_slots - 1);
  while (a->slots[j].str) {
    if (a->slots[j].hash == h && a->slots[j].len == len && memcmp(a->slots[j].str, s, len) == 0)
      return a->slots[j].str;
    j = (j + 1) & (a->n_slots - 1);
  }
  char *copy = te_arena_alloc(a, len + 1);
  if (!copy) return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  a->slots[j].str = copy;
  a->slots[j].len = len;
  a->slots[j].hash = h;
  a->n_used++;
  return copy;
}

const char *te_arena_intern(te_arena *a, const char *s) {
  return s ? te_arena_intern_n(a, s, strlen(s)) : NULL;
}
