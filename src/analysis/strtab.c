/*
 * analysis/strtab.c - interning table and a 64-bit key map.
 */
#include "analysis/strtab.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_BYTES (256u * 1024u)

typedef struct block {
  struct block *next;
  size_t used, cap;
  char data[];
} block;

struct an_strtab {
  block *blocks;
  const char **slots; /* open addressing over interned strings */
  size_t *lens;
  size_t n, cap;
};

uint64_t an_hash_bytes(const void *p, size_t n) {
  /* FNV-1a: short strings, no adversarial cost beyond linear probing */
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ull;
  }
  return h;
}

an_strtab *an_strtab_create(void) { return calloc(1, sizeof(an_strtab)); }

void an_strtab_destroy(an_strtab *t) {
  if (!t) return;
  for (block *b = t->blocks; b;) {
    block *nx = b->next;
    free(b);
    b = nx;
  }
  free(t->slots);
  free(t->lens);
  free(t);
}

static char *arena_alloc(an_strtab *t, size_t n) {
  if (!t->blocks || t->blocks->cap - t->blocks->used < n) {
    size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
    block *b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->next = t->blocks;
    b->used = 0;
    b->cap = cap;
    t->blocks = b;
  }
  char *p = t->blocks->data + t->blocks->used;
  t->blocks->used += n;
  return p;
}

static int grow(an_strtab *t) {
  size_t nc = t->cap ? t->cap * 2 : 1024;
  const char **ns = calloc(nc, sizeof *ns);
  size_t *nl = calloc(nc, sizeof *nl);
  if (!ns || !nl) {
    free(ns);
    free(nl);
    return -1;
  }
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i]) continue;
    size_t h = (size_t)an_hash_bytes(t->slots[i], t->lens[i]) & (nc - 1);
    while (ns[h]) h = (h + 1) & (nc - 1);
    ns[h] = t->slots[i];
    nl[h] = t->lens[i];
  }
  free(t->slots);
  free(t->lens);
  t->slots = ns;
  t->lens = nl;
  t->cap = nc;
  return 0;
}

const char *an_strtab_intern(an_strtab *t, const char *s, size_t len) {
  if (!t) return NULL;
  if ((t->n + 1) * 2 > t->cap && grow(t) != 0) return NULL;
  size_t h = (size_t)an_hash_bytes(s, len) & (t->cap - 1);
  while (t->slots[h]) {
    if (t->lens[h] == len && memcmp(t->slots[h], s, len) == 0) return t->slots[h];
    h = (h + 1) & (t->cap - 1);
  }
  char *p = arena_alloc(t, len + 1);
  if (!p) return NULL;
  memcpy(p, s, len);
  p[len] = '\0';
  t->slots[h] = p;
  t->lens[h] = len;
  t->n++;
  return p;
}

const char *an_strtab_cstr(an_strtab *t, const char *s) { return an_strtab_intern(t, s, strlen(s)); }

/* ------------------------------------------------------------------ u64 map */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

void *an_u64map_get(const an_u64map *m, uint64_t key) {
  if (!m->cap) return NULL;
  size_t h = (size_t)mix64(key) & (m->cap - 1);
  while (m->vals[h]) {
    if (m->keys[h] == key) return m->vals[h];
    h = (h + 1) & (m->cap - 1);
  }
  return NULL;
}

int an_u64map_put(an_u64map *m, uint64_t key, void *val) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    uint64_t *nk = calloc(nc, sizeof *nk);
    void **nv = calloc(nc, sizeof *nv);
    if (!nk || !nv) {
      free(nk);
      free(nv);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->vals[i]) continue;
      size_t h = (size_t)mix64(m->keys[i]) & (nc - 1);
      while (nv[h]) h = (h + 1) & (nc - 1);
      nk[h] = m->keys[i];
      nv[h] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = nc;
  }
  size_t h = (size_t)mix64(key) & (m->cap - 1);
  while (m->vals[h]) {
    if (m->keys[h] == key) {
      m->vals[h] = val;
      return 0;
    }
    h = (h + 1) & (m->cap - 1);
  }
  m->keys[h] = key;
  m->vals[h] = val;
  m->n++;
  return 0;
}

void an_u64map_free(an_u64map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}
