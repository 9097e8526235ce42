/* trace/intern.c - see intern.h. */
#include "trace/intern.h"

#include <stdlib.h>
#include <string.h>

#include "triage/hash.h"
#include "util/arena.h"
#include "util/vec.h"

/* Arena blocks grow with use so tiny traces stay tiny and big ones make few mallocs. */
#define ARENA_MIN_BLOCK (64u * 1024u)
#define ARENA_MAX_BLOCK (8u * 1024u * 1024u)

typedef struct str_rec {
  const char *s;
  uint32_t len;
  uint32_t hash;
} str_rec;

struct tr_intern {
  ut_arena arena;
  str_rec *recs; /* by id; recs[0] is the empty string */
  size_t n, cap;
  uint32_t *slots; /* ids, 0 = free */
  size_t n_slots;  /* power of two */
};

/* Slots use the low bits; the shared string hash mixes every input bit into them. */
static uint32_t hash_bytes(const char *s, size_t len) { return (uint32_t)te_hash_text(s, len); }

tr_intern *tr_intern_create(void) {
  tr_intern *in = calloc(1, sizeof *in);
  if (!in) return NULL;
  in->arena = (ut_arena){.next = ARENA_MIN_BLOCK, .max = ARENA_MAX_BLOCK};
  in->cap = 1024;
  in->recs = malloc(in->cap * sizeof *in->recs);
  in->n_slots = 2048;
  in->slots = calloc(in->n_slots, sizeof *in->slots);
  if (!in->recs || !in->slots) {
    tr_intern_destroy(in);
    return NULL;
  }
  in->recs[0].s = "";
  in->recs[0].len = 0;
  in->recs[0].hash = 0;
  in->n = 1;
  return in;
}

void tr_intern_destroy(tr_intern *in) {
  if (!in) return;
  ut_arena_free(&in->arena);
  free(in->recs);
  free(in->slots);
  free(in);
}

void *tr_intern_alloc(tr_intern *in, size_t n) { return ut_arena_alloc(&in->arena, n); }

static int grow_slots(tr_intern *in) {
  size_t ns = in->n_slots * 2;
  uint32_t *slots = calloc(ns, sizeof *slots);
  if (!slots) return -1;
  for (size_t id = 1; id < in->n; id++) {
    size_t i = in->recs[id].hash & (ns - 1);
    while (slots[i]) i = (i + 1) & (ns - 1);
    slots[i] = (uint32_t)id;
  }
  free(in->slots);
  in->slots = slots;
  in->n_slots = ns;
  return 0;
}

/* The slot holding s (its id there), or the free slot where it would go (0 there). */
static size_t find_slot(const tr_intern *in, const char *s, size_t len, uint32_t h) {
  size_t mask = in->n_slots - 1;
  size_t i = h & mask;
  for (;;) {
    uint32_t id = in->slots[i];
    if (!id) return i;
    const str_rec *r = &in->recs[id];
    if (r->hash == h && r->len == len && memcmp(r->s, s, len) == 0) return i;
    i = (i + 1) & mask;
  }
}

uint32_t tr_intern_find(const tr_intern *in, const char *s, size_t len) {
  if (len == 0) return 0;
  if (len > UINT32_MAX - 1) return UINT32_MAX;
  uint32_t id = in->slots[find_slot(in, s, len, hash_bytes(s, len))];
  return id ? id : UINT32_MAX;
}

uint32_t tr_intern_put(tr_intern *in, const char *s, size_t len) {
  if (len == 0) return 0;
  if (len > UINT32_MAX - 1) return UINT32_MAX;
  uint32_t h = hash_bytes(s, len);
  size_t i = find_slot(in, s, len, h);
  if (in->slots[i]) return in->slots[i];
  if (in->n >= UINT32_MAX - 1) return UINT32_MAX;
  /* keep the load factor under 1/2 so probes stay short */
  if ((in->n + 1) * 2 > in->n_slots) {
    if (grow_slots(in) != 0) return UINT32_MAX;
    i = find_slot(in, s, len, h);
  }
  if (in->n == in->cap) {
    str_rec *recs = ut_grow(in->recs, &in->cap, in->n + 1, sizeof *recs);
    if (!recs) return UINT32_MAX;
    in->recs = recs;
  }
  char *copy = tr_intern_alloc(in, len + 1);
  if (!copy) return UINT32_MAX;
  memcpy(copy, s, len);
  copy[len] = '\0';
  uint32_t id = (uint32_t)in->n++;
  in->recs[id].s = copy;
  in->recs[id].len = (uint32_t)len;
  in->recs[id].hash = h;
  in->slots[i] = id;
  return id;
}

size_t tr_intern_count(const tr_intern *in) { return in ? in->n : 0; }

const char *tr_intern_get(const tr_intern *in, uint32_t id) {
  if (!in || id >= in->n) return "";
  return in->recs[id].s;
}

const char *tr_intern_text(const tr_intern *in, uint32_t id, size_t *len) {
  if (!in || id >= in->n) {
    *len = 0;
    return "";
  }
  *len = in->recs[id].len;
  return in->recs[id].s;
}

size_t tr_intern_len(const tr_intern *in, uint32_t id) {
  if (!in || id >= in->n) return 0;
  return in->recs[id].len;
}
