/* strcache.c - see strcache.h. */
#include "strcache.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "triage/hash.h"
#include "triage/limits.h"

#define KEYS_MIN (4u * 1024u)
#define ENTRY_HEAD 8u /* uint32 length, int32 value */

static uint32_t entry_len(const te_strcache *c, uint32_t at) {
  uint32_t len;
  memcpy(&len, c->keys + at - 1, sizeof len);
  return len;
}

/* The slot holding s, or the empty slot where it would go. */
static te_strcache_slot *find(const te_strcache *c, const char *s, size_t len, uint32_t h) {
  size_t mask = c->cap - 1;
  for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
    te_strcache_slot *slot = &c->slots[j];
    if (!slot->at) return slot;
    if (slot->hash == h && entry_len(c, slot->at) == len &&
        memcmp(c->keys + slot->at - 1 + ENTRY_HEAD, s, len) == 0)
      return slot;
  }
}

bool te_strcache_get(const te_strcache *c, const char *s, size_t len, int *value) {
  if (!c->cap) return false;
  te_strcache_slot *slot = find(c, s, len, (uint32_t)te_hash_text(s, len));
  if (!slot->at) return false;
  int32_t v;
  memcpy(&v, c->keys + slot->at - 1 + sizeof(uint32_t), sizeof v);
  *value = v;
  return true;
}

static bool grow(te_strcache *c) {
  size_t cap = c->cap ? c->cap * 2 : 64;
  te_strcache_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < c->cap; i++) {
    if (!c->slots[i].at) continue;
    size_t j = (size_t)c->slots[i].hash & (cap - 1);
    while (slots[j].at) j = (j + 1) & (cap - 1);
    slots[j] = c->slots[i];
  }
  free(c->slots);
  c->slots = slots;
  c->cap = cap;
  return true;
}

/* Appends the entry of s; its offset plus one, or 0 without memory or past 4 GB. */
static uint32_t store_entry(te_strcache *c, const char *s, size_t len, int value) {
  size_t need = (ENTRY_HEAD + len + 1 + 3u) & ~(size_t)3u;
  if (c->keys_used + need >= UINT32_MAX) return 0;
  char *keys = te_grow(c->keys, &c->keys_cap, c->keys_used + need, 1, KEYS_MIN);
  if (!keys) return 0;
  c->keys = keys;
  char *p = c->keys + c->keys_used;
  uint32_t len32 = (uint32_t)len;
  int32_t v = value;
  memcpy(p, &len32, sizeof len32);
  memcpy(p + sizeof len32, &v, sizeof v);
  memcpy(p + ENTRY_HEAD, s, len);
  p[ENTRY_HEAD + len] = '\0';
  uint32_t at = (uint32_t)c->keys_used + 1;
  c->keys_used += need;
  return at;
}

void te_strcache_clear(te_strcache *c) {
  free(c->keys);
  free(c->slots);
  memset(c, 0, sizeof *c);
}

void te_strcache_put(te_strcache *c, const char *s, size_t len, int value) {
  if (len > UINT32_MAX) return;
  if (c->used < TE_MATCH_CACHE_MAX && (c->used + 1) * 2 > c->cap && !grow(c)) return;
  uint32_t h = (uint32_t)te_hash_text(s, len);
  te_strcache_slot *slot = find(c, s, len, h);
  if (slot->at) {
    int32_t v = value;
    memcpy(c->keys + slot->at - 1 + sizeof(uint32_t), &v, sizeof v);
    return;
  }
  if (c->used >= TE_MATCH_CACHE_MAX) return;
  uint32_t at = store_entry(c, s, len, value);
  if (!at) return;
  slot->hash = h;
  slot->at = at;
  c->used++;
}
