/* strcache.c - see strcache.h. */
#include "strcache.h"

#include <stdlib.h>
#include <string.h>

#include "triage/limits.h"

static uint64_t hash_text(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

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
  te_strcache_slot *slot = find(c, s, len, hash_text(s, len));
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

void te_strcache_clear(te_strcache *c) {
  for (size_t i = 0; i < c->cap; i++) free(c->slots[i].key);
  free(c->slots);
  c->slots = NULL;
  c->cap = c->used = 0;
}

void te_strcache_put(te_strcache *c, const char *s, size_t len, int value) {
  if (c->used >= TE_MATCH_CACHE_MAX) te_strcache_clear(c);
  if ((c->used + 1) * 2 > c->cap && !grow(c)) return;
  uint64_t h = hash_text(s, len);
  te_strcache_slot *slot = find(c, s, len, h);
  if (slot->key) {
    slot->value = value;
    return;
  }
  slot->key = malloc(len ? len : 1);
  if (!slot->key) return;
  memcpy(slot->key, s, len);
  slot->len = len;
  slot->hash = h;
  slot->value = value;
  c->used++;
}
