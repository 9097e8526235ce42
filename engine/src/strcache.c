/* strcache.c - see strcache.h. */
#include "strcache.h"

#include <stdlib.h>
#include <string.h>

#include "triage/hash.h"
#include "triage/limits.h"

/* Key blocks grow with use: a cache of a few names stays small, a full one makes a few
 * dozen allocations instead of 262,144. */
#define KEY_BLOCK_MIN (4u * 1024u)
#define KEY_BLOCK_MAX (1u * 1024u * 1024u)

struct te_strcache_block {
  te_strcache_block *next;
  size_t used, cap;
  /* key bytes follow */
};

/* The slot holding s, or the empty slot where it would go. */
static te_strcache_slot *find(const te_strcache *c, const char *s, size_t len, uint64_t h) {
  size_t mask = c->cap - 1;
  for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
    te_strcache_slot *slot = &c->slots[j];
    if (!slot->key) return slot;
    if (slot->hash == h && slot->len == len && memcmp(slot->key, s, len) == 0) return slot;
  }
}

bool te_strcache_get(const te_strcache *c, const char *s, size_t len, int *value) {
  if (!c->cap) return false;
  te_strcache_slot *slot = find(c, s, len, te_hash_text(s, len));
  if (!slot->key) return false;
  *value = slot->value;
  return true;
}

static bool grow(te_strcache *c) {
  size_t cap = c->cap ? c->cap * 2 : 64;
  te_strcache_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < c->cap; i++) {
    if (!c->slots[i].key) continue;
    size_t j = (size_t)c->slots[i].hash & (cap - 1);
    while (slots[j].key) j = (j + 1) & (cap - 1);
    slots[j] = c->slots[i];
  }
  free(c->slots);
  c->slots = slots;
  c->cap = cap;
  return true;
}

/* A copy of s in the key blocks (a zero-length key still gets a distinct non-NULL
 * pointer), or NULL without memory. */
static const char *store_key(te_strcache *c, const char *s, size_t len) {
  te_strcache_block *b = c->blocks;
  if (!b || b->cap - b->used < len + 1) {
    size_t cap = b ? b->cap * 2 : KEY_BLOCK_MIN;
    if (cap > KEY_BLOCK_MAX) cap = KEY_BLOCK_MAX;
    if (cap < len + 1) cap = len + 1;
    b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->next = c->blocks;
    b->used = 0;
    b->cap = cap;
    c->blocks = b;
  }
  char *p = (char *)(b + 1) + b->used;
  memcpy(p, s, len);
  p[len] = '\0';
  b->used += len + 1;
  return p;
}

void te_strcache_clear(te_strcache *c) {
  te_strcache_block *b = c->blocks;
  while (b) {
    te_strcache_block *next = b->next;
    free(b);
    b = next;
  }
  free(c->slots);
  memset(c, 0, sizeof *c);
}

void te_strcache_put(te_strcache *c, const char *s, size_t len, int value) {
  if (len > UINT32_MAX) return;
  if (c->used >= TE_MATCH_CACHE_MAX) te_strcache_clear(c);
  if ((c->used + 1) * 2 > c->cap && !grow(c)) return;
  uint64_t h = te_hash_text(s, len);
  te_strcache_slot *slot = find(c, s, len, h);
  if (slot->key) {
    slot->value = value;
    return;
  }
  const char *key = store_key(c, s, len);
  if (!key) return;
  slot->key = key;
  slot->len = (uint32_t)len;
  slot->hash = h;
  slot->value = value;
  c->used++;
}
