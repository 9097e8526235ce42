/* util/map.c - hash maps and counter (map.h). */
#include "util/map.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

uint64_t ut_hash_bytes(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* ---------------------------------------------------------------- u64 -> u64 */

/* Integer keys are often small and dense (ids, packed pid/tid): mix before masking. */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

bool ut_u64map_get(const ut_u64map *m, uint64_t key, uint64_t *val) {
  if (!key) {
    if (m->has_zero) *val = m->zero_val;
    return m->has_zero;
  }
  if (!m->cap) return false;
  size_t mask = m->cap - 1;
  for (size_t h = (size_t)mix64(key) & mask; m->slots[h].key; h = (h + 1) & mask)
    if (m->slots[h].key == key) {
      *val = m->slots[h].val;
      return true;
    }
  return false;
}

static bool u64map_grow(ut_u64map *m) {
  size_t nc = m->cap ? m->cap * 2 : 64;
  ut_u64map_slot *ns = calloc(nc, sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].key) continue;
    size_t h = (size_t)mix64(m->slots[i].key) & (nc - 1);
    while (ns[h].key) h = (h + 1) & (nc - 1);
    ns[h] = m->slots[i];
  }
  free(m->slots);
  m->slots = ns;
  m->cap = nc;
  return true;
}

bool ut_u64map_put(ut_u64map *m, uint64_t key, uint64_t val) {
  if (!key) {
    if (!m->has_zero) m->n++;
    m->has_zero = true;
    m->zero_val = val;
    return true;
  }
  if ((m->n + 1) * 4 > m->cap * 3 && !u64map_grow(m)) return false;
  size_t mask = m->cap - 1, h = (size_t)mix64(key) & mask;
  while (m->slots[h].key && m->slots[h].key != key) h = (h + 1) & mask;
  if (!m->slots[h].key) m->n++;
  m->slots[h].key = key;
  m->slots[h].val = val;
  return true;
}

void ut_u64map_free(ut_u64map *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- string -> index */

uint32_t ut_hash_text(const char *s, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)len, w;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    memcpy(&w, s + i, sizeof w);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  w = 0;
  memcpy(&w, s + i, len - i);
  return (uint32_t)mix64(h ^ w);
}

/* A key's copy, in the map's arena (one malloc per block, not per key). */
static char *strmap_copy(ut_strmap *m, const char *key, size_t len) {
  char *copy = ut_arena_alloc(&m->arena, len + 1);
  if (!copy) return NULL;
  memcpy(copy, key, len);
  copy[len] = '\0';
  return copy;
}

static bool key_eq(const char *k, const char *s, size_t len) {
  return strncmp(k, s, len) == 0 && k[len] == '\0';
}

/* The slot holding key (hash h), or the empty slot where it would go. */
static uint32_t *strmap_slot(const ut_strmap *m, const char *key, size_t len, uint32_t h) {
  size_t mask = m->n_slots - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    uint32_t v = m->slots[i];
    if (!v || (m->hashes[v - 1] == h && key_eq(m->keys[v - 1], key, len))) return &m->slots[i];
  }
}

long ut_strmap_find(const ut_strmap *m, const char *key, size_t len) {
  if (!m->n_slots) return -1;
  uint32_t v = *strmap_slot(m, key, len, ut_hash_text(key, len));
  return v ? (long)(v - 1) : -1;
}

static bool strmap_grow(ut_strmap *m) {
  size_t ns = m->n_slots ? m->n_slots * 2 : 64;
  uint32_t *slots = calloc(ns, sizeof *slots);
  if (!slots) return false;
  for (size_t k = 0; k < m->n; k++) {
    size_t i = (size_t)m->hashes[k] & (ns - 1);
    while (slots[i]) i = (i + 1) & (ns - 1);
    slots[i] = (uint32_t)(k + 1);
  }
  free(m->slots);
  m->slots = slots;
  m->n_slots = ns;
  return true;
}

static long strmap_put(ut_strmap *m, const char *key, size_t len, bool borrow) {
  uint32_t h = ut_hash_text(key, len);
  uint32_t *slot = m->n_slots ? strmap_slot(m, key, len, h) : NULL;
  if (slot && *slot) return (long)(*slot - 1);
  if (m->n >= UINT32_MAX - 1) return -1;
  if ((m->n + 1) * 2 > m->n_slots) {
    if (!strmap_grow(m)) return -1;
    slot = strmap_slot(m, key, len, h);
  }
  size_t cap = m->cap;
  const char **keys = ut_grow(m->keys, &cap, m->n + 1, sizeof *keys);
  if (!keys) return -1;
  m->keys = keys;
  cap = m->cap;
  uint32_t *hashes = ut_grow(m->hashes, &cap, m->n + 1, sizeof *hashes);
  if (!hashes) return -1;
  m->hashes = hashes;
  m->cap = cap;
  const char *copy = borrow ? key : strmap_copy(m, key, len);
  if (!copy) return -1;
  m->keys[m->n] = copy;
  m->hashes[m->n] = h;
  *slot = (uint32_t)(m->n + 1);
  return (long)m->n++;
}

long ut_strmap_put(ut_strmap *m, const char *key, size_t len) {
  return strmap_put(m, key, len, false);
}

long ut_strmap_put_borrowed(ut_strmap *m, const char *key, size_t len) {
  return strmap_put(m, key, len, true);
}

void ut_strmap_free(ut_strmap *m) {
  ut_arena_free(&m->arena);
  free(m->keys);
  free(m->hashes);
  free(m->slots);
  memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- set of texts */

bool ut_textset_init(ut_textset *t, size_t n, const char *(*text)(const void *, size_t),
                     const void *items) {
  size_t cap = 8;
  while (cap < n + n / 3 + 1) cap *= 2;
  *t = (ut_textset){calloc(cap, sizeof *t->slots), cap - 1, text, items};
  return t->slots != NULL;
}

/* The slot holding s, or the empty one where it would go. */
static uint32_t *textset_slot(const ut_textset *t, const char *s) {
  for (size_t h = ut_hash_text(s, strlen(s)) & t->mask;; h = (h + 1) & t->mask) {
    uint32_t v = t->slots[h];
    if (!v || !strcmp(t->text(t->items, v - 1), s)) return &t->slots[h];
  }
}

size_t ut_textset_put(ut_textset *t, size_t i) {
  uint32_t *slot = textset_slot(t, t->text(t->items, i));
  if (*slot) return *slot - 1;
  *slot = (uint32_t)i + 1;
  return i;
}

size_t ut_textset_find(const ut_textset *t, const char *s) {
  if (!t->slots || !s) return SIZE_MAX;
  uint32_t v = *textset_slot(t, s);
  return v ? v - 1 : SIZE_MAX;
}

void ut_textset_free(ut_textset *t) {
  free(t->slots);
  *t = (ut_textset){0};
}

/* ---------------------------------------------------------------- counter */

bool ut_counter_add(ut_counter *c, const char *key, size_t times) {
  long i = ut_strmap_put(&c->keys, key, strlen(key));
  if (i < 0) return false;
  if ((size_t)i >= c->cap) {
    size_t *cs = ut_grow_zeroed(c->counts, &c->cap, (size_t)i + 1, sizeof *cs);
    if (!cs) return false;
    c->counts = cs;
  }
  c->counts[i] += times;
  return true;
}

const char *ut_counter_top(const ut_counter *c) {
  long best = -1;
  for (size_t i = 0; i < c->keys.n; i++)
    if (best < 0 || c->counts[i] > c->counts[best]) best = (long)i;
  return best < 0 ? NULL : c->keys.keys[best];
}

void ut_counter_free(ut_counter *c) {
  ut_strmap_free(&c->keys);
  free(c->counts);
  memset(c, 0, sizeof *c);
}
