/*
 * analysis/strtab.c - interning table and a 64-bit key map.
 */
#include "analysis/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "trace/intern.h"

/* The trace module's interner serves here too: one arena + open-addressing table in the
 * library instead of two. Equal strings still get the same pointer (""s share the
 * interner's static empty string). */
struct an_strtab {
  tr_intern *in;
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

an_strtab *an_strtab_create(void) {
  an_strtab *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->in = tr_intern_create();
  if (!t->in) {
    free(t);
    return NULL;
  }
  return t;
}

void an_strtab_destroy(an_strtab *t) {
  if (!t) return;
  tr_intern_destroy(t->in);
  free(t);
}

const char *an_strtab_intern(an_strtab *t, const char *s, size_t len) {
  if (!t) return NULL;
  uint32_t id = tr_intern_put(t->in, s, len);
  return id == UINT32_MAX ? NULL : tr_intern_get(t->in, id);
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
