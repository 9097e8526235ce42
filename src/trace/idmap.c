/* trace/idmap.c - see idmap.h. */
#include "trace/idmap.h"

#include <stdlib.h>
#include <string.h>

#define MAP_MIN_CAP 1024u
#define GOLDEN64 0x9E3779B97F4A7C15ull

uint32_t tr_id_encode(tr_idbase *b, int64_t id) {
  if (id == INT64_MIN) return TR_OFF_ABSENT;
  if (!b->set) {
    b->base = (uint64_t)id - (1ull << 31);
    b->set = true;
  }
  uint64_t d = (uint64_t)id - b->base;
  return d < TR_OFF_WIDE ? (uint32_t)d : TR_OFF_WIDE;
}

uint32_t tr_id_find(const tr_idbase *b, int64_t id) {
  if (id == INT64_MIN) return TR_OFF_ABSENT;
  if (!b->set) return TR_OFF_WIDE;
  uint64_t d = (uint64_t)id - b->base;
  return d < TR_OFF_WIDE ? (uint32_t)d : TR_OFF_WIDE;
}

/* Both maps: 3/4 load keeps linear probes short (ids hash evenly after the multiply)
 * at two thirds of the memory a 1/2 load needs. */
static bool map_full(size_t n, size_t cap) { return (n + 1) * 4 > cap * 3; }

static size_t slot32(uint32_t key, size_t mask) {
  return (size_t)(((uint64_t)key * GOLDEN64) >> 32) & mask;
}

static int map32_grow(tr_map32 *m) {
  size_t cap = m->cap ? m->cap * 2 : MAP_MIN_CAP;
  uint32_t *keys = malloc(cap * sizeof *keys), *vals = malloc(cap * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  memset(keys, 0xFF, cap * sizeof *keys);
  for (size_t j = 0; j < m->cap; j++) {
    if (m->keys[j] == UINT32_MAX) continue;
    size_t i = slot32(m->keys[j], cap - 1);
    while (keys[i] != UINT32_MAX) i = (i + 1) & (cap - 1);
    keys[i] = m->keys[j];
    vals[i] = m->vals[j];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 0;
}

int tr_map32_put(tr_map32 *m, uint32_t key, uint32_t val) {
  if (map_full(m->n, m->cap) && map32_grow(m) != 0) return -1;
  size_t mask = m->cap - 1, i = slot32(key, mask);
  while (m->keys[i] != UINT32_MAX && m->keys[i] != key) i = (i + 1) & mask;
  if (m->keys[i] == UINT32_MAX) m->n++;
  m->keys[i] = key;
  m->vals[i] = val;
  return 0;
}

bool tr_map32_get(const tr_map32 *m, uint32_t key, uint32_t *val) {
  if (!m->cap) return false;
  size_t mask = m->cap - 1, i = slot32(key, mask);
  for (; m->keys[i] != UINT32_MAX; i = (i + 1) & mask) {
    if (m->keys[i] == key) {
      *val = m->vals[i];
      return true;
    }
  }
  return false;
}

void tr_map32_free(tr_map32 *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t slot64(int64_t key, size_t mask) {
  return (size_t)(((uint64_t)key * GOLDEN64) >> 32) & mask;
}

static int map64_grow(tr_map64 *m) {
  size_t cap = m->cap ? m->cap * 2 : MAP_MIN_CAP;
  int64_t *keys = malloc(cap * sizeof *keys), *vals = malloc(cap * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  for (size_t i = 0; i < cap; i++) keys[i] = INT64_MIN;
  for (size_t j = 0; j < m->cap; j++) {
    if (m->keys[j] == INT64_MIN) continue;
    size_t i = slot64(m->keys[j], cap - 1);
    while (keys[i] != INT64_MIN) i = (i + 1) & (cap - 1);
    keys[i] = m->keys[j];
    vals[i] = m->vals[j];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 0;
}

int tr_map64_put(tr_map64 *m, int64_t key, int64_t val) {
  if (map_full(m->n, m->cap) && map64_grow(m) != 0) return -1;
  size_t mask = m->cap - 1, i = slot64(key, mask);
  while (m->keys[i] != INT64_MIN && m->keys[i] != key) i = (i + 1) & mask;
  if (m->keys[i] == INT64_MIN) m->n++;
  m->keys[i] = key;
  m->vals[i] = val;
  return 0;
}

bool tr_map64_get(const tr_map64 *m, int64_t key, int64_t *val) {
  if (!m->cap) return false;
  size_t mask = m->cap - 1, i = slot64(key, mask);
  for (; m->keys[i] != INT64_MIN; i = (i + 1) & mask) {
    if (m->keys[i] == key) {
      *val = m->vals[i];
      return true;
    }
  }
  return false;
}

void tr_map64_free(tr_map64 *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}
