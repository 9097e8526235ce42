/* trace/idmap.c - see idmap.h. */
#include "trace/idmap.h"

#include "trace/trace.h" /* TR_DUR_WIDE */
#include "util/vec.h"

#include <math.h>
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

/* x rounded to the nearest integer (|x| < 2^62) */
static int64_t round_i64(double x) { return (int64_t)(x < 0 ? x - 0.5 : x + 0.5); }

int64_t tr_ts_encode(tr_trace_head *h, bool *set, double ts) {
  /* 4.5e15 us (the year 2112 from the epoch): ts * 1000 and the difference of two such
   * counts stay inside int64 */
  if (!(fabs(ts) < 4.5e15)) return TR_TS_WIDE;
  if (!*set) {
    h->ts_div = fabs(ts) < 9007199254740.0 ? 1000.0 : 1.0; /* below 2^53 ns: nanoseconds */
    h->ts_origin = round_i64(ts * h->ts_div);
    *set = true;
  }
  /* ts lies within half an ulp of the decimal and the product rounds once: the count, if
   * there is one, is the nearest integer to ts * ts_div or one beside it */
  static const int64_t step[] = {0, -1, 1};
  int64_t c = round_i64(ts * h->ts_div) - h->ts_origin;
  for (size_t i = 0; i < sizeof step / sizeof *step; i++) {
    int64_t k = c + step[i];
    if (k <= TR_TS_WIDE || k >= -TR_TS_WIDE) continue;
    double back = (double)(h->ts_origin + k) / h->ts_div;
    if (memcmp(&back, &ts, sizeof ts) == 0) return k;
  }
  return TR_TS_WIDE;
}

uint32_t tr_dur_encode(double dur) {
  /* the bound keeps dur * 1000 + 0.5 below 2^32 - 1 (TR_DUR_WIDE itself is never a count) */
  if (!(dur >= 0.0) || signbit(dur) || dur >= 4294967.0) return TR_DUR_WIDE;
  uint32_t ns = (uint32_t)(dur * 1000.0 + 0.5);
  return (double)ns / 1000.0 == dur ? ns : TR_DUR_WIDE;
}

/* Both maps: 3/4 load keeps linear probes short (ids hash evenly after the multiply)
 * at two thirds of the memory a 1/2 load needs. */
static bool map_full(size_t n, size_t cap) { return (n + 1) * 4 > cap * 3; }

/* The two maps differ only in their key and value types and in the key that marks a free
 * slot, so one definition serves both. Slots: key * golden ratio, high half, masked. */
#define IDMAP_DEFINE(NAME, KEY, VAL, FREE)                              \
  static size_t NAME##_slot(KEY key, size_t mask) {                     \
    return (size_t)(((uint64_t)key * GOLDEN64) >> 32) & mask;           \
  }                                                                     \
                                                                        \
  static int NAME##_grow(tr_##NAME *m) {                                \
    size_t cap = m->cap ? m->cap * 2 : MAP_MIN_CAP;                     \
    KEY *keys = malloc(cap * sizeof *keys);                             \
    VAL *vals = malloc(cap * sizeof *vals);                             \
    if (!keys || !vals) {                                               \
      free(keys);                                                       \
      free(vals);                                                       \
      return -1;                                                        \
    }                                                                   \
    for (size_t i = 0; i < cap; i++) keys[i] = FREE;                    \
    for (size_t j = 0; j < m->cap; j++) {                               \
      if (m->keys[j] == FREE) continue;                                 \
      size_t i = NAME##_slot(m->keys[j], cap - 1);                      \
      while (keys[i] != FREE) i = (i + 1) & (cap - 1);                  \
      keys[i] = m->keys[j];                                             \
      vals[i] = m->vals[j];                                             \
    }                                                                   \
    free(m->keys);                                                      \
    free(m->vals);                                                      \
    m->keys = keys;                                                     \
    m->vals = vals;                                                     \
    m->cap = cap;                                                       \
    return 0;                                                           \
  }                                                                     \
                                                                        \
  int tr_##NAME##_put(tr_##NAME *m, KEY key, VAL val) {                 \
    if (map_full(m->n, m->cap) && NAME##_grow(m) != 0) return -1;       \
    size_t mask = m->cap - 1, i = NAME##_slot(key, mask);               \
    while (m->keys[i] != FREE && m->keys[i] != key) i = (i + 1) & mask; \
    if (m->keys[i] == FREE) m->n++;                                     \
    m->keys[i] = key;                                                   \
    m->vals[i] = val;                                                   \
    return 0;                                                           \
  }                                                                     \
                                                                        \
  bool tr_##NAME##_get(const tr_##NAME *m, KEY key, VAL *val) {         \
    if (!m->cap) return false;                                          \
    size_t mask = m->cap - 1, i = NAME##_slot(key, mask);               \
    for (; m->keys[i] != FREE; i = (i + 1) & mask) {                    \
      if (m->keys[i] == key) {                                          \
        *val = m->vals[i];                                              \
        return true;                                                    \
      }                                                                 \
    }                                                                   \
    return false;                                                       \
  }                                                                     \
                                                                        \
  void tr_##NAME##_free(tr_##NAME *m) {                                 \
    free(m->keys);                                                      \
    free(m->vals);                                                      \
    memset(m, 0, sizeof *m);                                            \
  }

IDMAP_DEFINE(map32, uint32_t, uint32_t, UINT32_MAX)
IDMAP_DEFINE(map64, int64_t, int64_t, INT64_MIN)

/* ------------------------------------------------------------------ contexts */

static bool ctx_eq(const tr_event_ctx *a, const tr_event_ctx *b) {
  return a->cat == b->cat && a->pid == b->pid && a->tid == b->tid && a->stream == b->stream;
}

static size_t ctx_slot(const tr_event_ctx *c, size_t mask) {
  uint64_t h = ((uint64_t)c->cat << 32 | c->pid) * GOLDEN64;
  h = (h ^ ((uint64_t)c->tid << 32 | c->stream)) * GOLDEN64;
  return (size_t)(h >> 32) & mask;
}

/* Doubles the hash slots and rehashes every stored context into them. */
static int ctx_rehash(tr_ctxtab *tab) {
  size_t n_slots = tab->n_slots ? tab->n_slots * 2 : 64;
  while (n_slots < (tab->n + 1) * 2) n_slots *= 2; /* a sealed table starts again */
  uint32_t *slots = calloc(n_slots, sizeof *slots);
  if (!slots) return -1;
  for (size_t k = 0; k < tab->n; k++) {
    size_t i = ctx_slot(&tab->v[k], n_slots - 1);
    while (slots[i]) i = (i + 1) & (n_slots - 1);
    slots[i] = (uint32_t)k + 1;
  }
  free(tab->slots);
  tab->slots = slots;
  tab->n_slots = n_slots;
  return 0;
}

static uint32_t ctx_append(tr_ctxtab *tab, const tr_event_ctx *c, size_t slot) {
  if (tab->n == tab->cap) {
    tr_event_ctx *v = ut_grow(tab->v, &tab->cap, tab->n + 1, sizeof *v);
    if (!v) return UINT32_MAX;
    tab->v = v;
  }
  tab->v[tab->n] = *c;
  tab->slots[slot] = (uint32_t)++tab->n;
  return (uint32_t)(tab->n - 1);
}

/* Position of c through the hash; UINT32_MAX when out of memory. */
static uint32_t ctx_find_or_add(tr_ctxtab *tab, const tr_event_ctx *c) {
  /* at most UINT32_MAX - 1 contexts: positions + 1 must fit the slots */
  if (tab->n >= UINT32_MAX - 1u) return UINT32_MAX;
  if ((tab->n + 1) * 2 > tab->n_slots && ctx_rehash(tab) != 0) return UINT32_MAX;
  size_t mask = tab->n_slots - 1, i = ctx_slot(c, mask);
  for (; tab->slots[i]; i = (i + 1) & mask)
    if (ctx_eq(&tab->v[tab->slots[i] - 1], c)) return tab->slots[i] - 1;
  return ctx_append(tab, c, i);
}

uint32_t tr_ctxtab_put(tr_ctxtab *tab, const tr_event_ctx *c, uint32_t *hint) {
  if (*hint && ctx_eq(&tab->v[*hint - 1], c)) return *hint - 1;
  uint32_t pos = ctx_find_or_add(tab, c);
  if (pos != UINT32_MAX) *hint = pos + 1;
  return pos;
}

void tr_ctxtab_seal(tr_ctxtab *tab) {
  free(tab->slots);
  tab->slots = NULL;
  tab->n_slots = 0;
  tab->v = ut_shrink(tab->v, &tab->cap, tab->n, sizeof *tab->v);
}

void tr_ctxtab_free(tr_ctxtab *tab) {
  free(tab->v);
  free(tab->slots);
  memset(tab, 0, sizeof *tab);
}
