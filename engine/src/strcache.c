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

void te_strcache_add_all(te_strcache *dst, const te_strcache *src) {
  for (size_t at = 0; at < src->keys_used;) {
    uint32_t len;
    int32_t v;
    memcpy(&len, src->keys + at, sizeof len);
    memcpy(&v, src->keys + at + sizeof len, sizeof v);
    te_strcache_put(dst, src->keys + at + ENTRY_HEAD, len, v);
    at += (ENTRY_HEAD + len + 1 + 3u) & ~(size_t)3u; /* store_entry's padding */
  }
}

/* ---------------------------------------------------------------- lanes */

_Thread_local unsigned te_lane_now;

bool te_lcache_get(const te_lcache *c, const char *s, size_t len, int *value) {
  if (te_strcache_get(&c->shared, s, len, value)) return true;
  const te_strcache *own = te_lane_now ? c->lane[te_lane_now - 1] : NULL;
  return own && te_strcache_get(own, s, len, value);
}

void te_lcache_put(te_lcache *c, const char *s, size_t len, int value) {
  if (!te_lane_now) {
    te_strcache_put(&c->shared, s, len, value);
    return;
  }
  te_strcache **own = &c->lane[te_lane_now - 1];
  if (!*own && !(*own = calloc(1, sizeof **own))) return; /* best effort, as a put is */
  te_strcache_put(*own, s, len, value);
}

void te_lcache_fold(te_lcache *c) {
  for (size_t l = 0; l < TE_LANES; l++) {
    if (!c->lane[l]) continue;
    te_strcache_add_all(&c->shared, c->lane[l]);
    te_strcache_clear(c->lane[l]);
    free(c->lane[l]);
    c->lane[l] = NULL;
  }
}

void te_lcache_clear(te_lcache *c) {
  for (size_t l = 0; l < TE_LANES; l++) {
    if (c->lane[l]) te_strcache_clear(c->lane[l]);
    free(c->lane[l]);
    c->lane[l] = NULL;
  }
  te_strcache_clear(&c->shared);
}
