/* trace/args.c - the kept event args: distinct arg sets and each kind's index (see
 * args_internal.h). */
#include "trace/args_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "triage/hash.h"
#include "util/search.h"
#include "util/vec.h"

#define SLOTS_MIN 64u

/* Bits set in m (SWAR: the build targets no popcount instruction, and a libgcc call per
 * lookup showed in profiles). */
static inline unsigned bits_set(uint32_t m) {
  m = m - ((m >> 1) & 0x55555555u);
  m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
  return (((m + (m >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

/* Words of the set starting at pool[at]: its mask, then one value per key present. */
static size_t set_words(const uint32_t *pool, size_t at) { return 1u + bits_set(pool[at]); }

/* A set is a few words (a mask and one to a dozen ids): mixed a word at a time. */
static uint64_t set_hash(const uint32_t *words, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++) h = (h ^ words[i]) * 0xff51afd7ed558ccdull;
  return te_hash_mix(h);
}

static bool same_set(const uint32_t *a, const uint32_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* Slot of the set words[0..n) (its id, or the free slot where it belongs). */
static size_t find_slot(const tr_argtab *tab, const uint32_t *words, size_t n, uint64_t h) {
  size_t mask = tab->n_slots - 1, i = (size_t)h & mask;
  for (; tab->slots[i]; i = (i + 1) & mask) {
    const uint32_t *set = tab->pool + (tab->slots[i] - 1u);
    if (set[0] == words[0] && same_set(set + 1, words + 1, n - 1)) break;
  }
  return i;
}

static int grow_slots(tr_argtab *tab) {
  size_t n = tab->n_slots ? tab->n_slots * 2 : SLOTS_MIN;
  uint32_t *slots = calloc(n, sizeof *slots);
  if (!slots) return -1;
  uint32_t *old = tab->slots;
  size_t n_old = tab->n_slots;
  tab->slots = slots;
  tab->n_slots = n;
  for (size_t j = 0; j < n_old; j++) {
    if (!old[j]) continue;
    size_t at = old[j] - 1u, w = set_words(tab->pool, at);
    size_t i = (size_t)set_hash(tab->pool + at, w) & (n - 1);
    while (slots[i]) i = (i + 1) & (n - 1);
    slots[i] = old[j];
  }
  free(old);
  return 0;
}

uint32_t tr_argtab_put(tr_argtab *tab, uint32_t mask, const tr_str vals[TR_ARG_COUNT]) {
  uint32_t words[1 + TR_ARG_COUNT];
  size_t n = 0;
  words[n++] = mask;
  /* the keys present, lowest first: a loop over every key cost ~40 instructions a set */
  for (uint32_t m = mask & (uint32_t)((1ull << TR_ARG_COUNT) - 1u); m; m &= m - 1)
    words[n++] = vals[__builtin_ctz(m)];
  if ((tab->n_sets + 1) * 2 > tab->n_slots && grow_slots(tab) != 0) return UINT32_MAX;
  uint64_t h = set_hash(words, n);
  size_t i = find_slot(tab, words, n, h);
  if (tab->slots[i]) return tab->slots[i];
  if (tab->n_pool + n >= UINT32_MAX) return UINT32_MAX;
  if (tab->n_pool + n > tab->cap_pool) {
    uint32_t *p = ut_grow(tab->pool, &tab->cap_pool, tab->n_pool + n, sizeof *p);
    if (!p) return UINT32_MAX;
    tab->pool = p;
  }
  uint32_t id = (uint32_t)tab->n_pool + 1u;
  memcpy(tab->pool + tab->n_pool, words, n * sizeof *words);
  tab->n_pool += n;
  tab->slots[i] = id;
  tab->n_sets++;
  return id;
}

tr_str tr_argtab_value(const tr_argtab *tab, uint32_t id, tr_arg key) {
  if (!id || (unsigned)key >= TR_ARG_COUNT) return 0;
  const uint32_t *set = tab->pool + (id - 1u);
  uint32_t bit = 1u << key;
  if (!(set[0] & bit)) return 0;
  return set[1 + bits_set(set[0] & (bit - 1u))];
}

void tr_argtab_seal(tr_argtab *tab) {
  free(tab->slots);
  tab->slots = NULL;
  tab->n_slots = 0;
  tab->pool = ut_shrink(tab->pool, &tab->cap_pool, tab->n_pool, sizeof *tab->pool);
}

void tr_argtab_free(tr_argtab *tab) {
  free(tab->pool);
  free(tab->slots);
  memset(tab, 0, sizeof *tab);
}

/* The dense form's entry width: 2 bytes while every set id fits, else 4. */
static size_t dense_width(const tr_argidx *ix) {
  return ix->dense16 ? sizeof *ix->dense16 : sizeof *ix->dense;
}

/* The dense form's entries widened to 32 bits (a set id past 16 bits came). -1 when out of
 * memory. */
static int widen(tr_argidx *ix) {
  uint32_t *d = malloc((ix->cap_dense ? ix->cap_dense : 1) * sizeof *d);
  if (!d) return -1;
  for (size_t i = 0; i < ix->n_dense; i++) d[i] = ix->dense16[i];
  free(ix->dense16);
  ix->dense16 = NULL;
  ix->dense = d;
  return 0;
}

/* Sets entry pos of the dense form, the entries it adds before pos left 0. */
static int dense_put(tr_argidx *ix, uint32_t pos, uint32_t id) {
  if (ix->dense16 && id > UINT16_MAX && widen(ix) != 0) return -1;
  size_t w = dense_width(ix), cap = ix->cap_dense;
  char *v = ix->dense16 ? (void *)ix->dense16 : (void *)ix->dense;
  if (pos >= cap && !(v = ut_grow(v, &cap, (size_t)pos + 1, w))) return -1;
  if (pos > ix->n_dense) memset(v + ix->n_dense * w, 0, ((size_t)pos - ix->n_dense) * w);
  if (w == sizeof *ix->dense16) {
    ix->dense16 = (uint16_t *)(void *)v;
    ix->dense16[pos] = (uint16_t)id;
  } else {
    ix->dense = (uint32_t *)(void *)v;
    ix->dense[pos] = id;
  }
  ix->cap_dense = cap;
  if ((size_t)pos >= ix->n_dense) ix->n_dense = (size_t)pos + 1;
  return 0;
}

/* The pairs so far as the dense form over n events (in 16 bits when every id fits). -1
 * when out of memory (the pairs stay). */
static int to_dense(tr_argidx *ix, size_t n) {
  uint32_t most = 0;
  for (size_t i = 0; i < ix->n; i++)
    if (ix->pairs[i].set > most) most = ix->pairs[i].set;
  size_t w = most <= UINT16_MAX ? sizeof *ix->dense16 : sizeof *ix->dense;
  void *d = calloc(n ? n : 1, w);
  if (!d) return -1;
  if (w == sizeof *ix->dense16) {
    ix->dense16 = d;
    for (size_t i = 0; i < ix->n; i++) ix->dense16[ix->pairs[i].pos] = (uint16_t)ix->pairs[i].set;
  } else {
    ix->dense = d;
    for (size_t i = 0; i < ix->n; i++) ix->dense[ix->pairs[i].pos] = ix->pairs[i].set;
  }
  free(ix->pairs);
  ix->pairs = NULL;
  ix->n = ix->cap = 0;
  ix->n_dense = ix->cap_dense = n;
  return 0;
}

/* The dense form's non-zero entries as pairs. -1 when out of memory (the dense form stays). */
static int to_pairs(tr_argidx *ix, size_t n_set) {
  struct tr_argpair *p = malloc((n_set ? n_set : 1) * sizeof *p);
  if (!p) return -1;
  size_t n = 0;
  for (size_t i = 0; i < ix->n_dense; i++) {
    uint32_t set = ix->dense16 ? ix->dense16[i] : ix->dense[i];
    if (set) p[n++] = (struct tr_argpair){(uint32_t)i, set};
  }
  free(ix->dense16);
  free(ix->dense);
  ix->dense16 = NULL;
  ix->dense = NULL;
  ix->n_dense = ix->cap_dense = 0;
  ix->pairs = p;
  ix->n = ix->cap = n;
  return 0;
}

/* A pair costs 8 bytes, a dense entry 2 or 4. While reading, the pairs become the dense
 * form once they are larger (a quarter of the events so far have args, in 16 bits): a
 * cpu_op-heavy trace then never holds 8 bytes an op. */
int tr_argidx_add(tr_argidx *ix, uint32_t pos, uint32_t id) {
  if (ix->dense || ix->dense16) return dense_put(ix, pos, id);
  if (ix->n == ix->cap) {
    struct tr_argpair *p = ut_grow(ix->pairs, &ix->cap, ix->n + 1, sizeof *p);
    if (!p) return -1;
    ix->pairs = p;
  }
  ix->pairs[ix->n++] = (struct tr_argpair){pos, id};
  if (ix->n * sizeof *ix->pairs >= ((size_t)pos + 1) * sizeof *ix->dense16)
    (void)to_dense(ix, (size_t)pos + 1); /* out of memory: the pairs go on */
  return 0;
}

/* After the read: the smaller form (the dense one when no larger), trimmed. */
int tr_argidx_seal(tr_argidx *ix, size_t n_events) {
  if (ix->dense || ix->dense16) {
    size_t n_set = 0;
    for (size_t i = 0; i < ix->n_dense; i++)
      n_set += (ix->dense16 ? ix->dense16[i] : ix->dense[i]) != 0;
    if (n_set * sizeof *ix->pairs < ix->n_dense * dense_width(ix)) return to_pairs(ix, n_set);
    if (ix->dense16)
      ix->dense16 = ut_shrink(ix->dense16, &ix->cap_dense, ix->n_dense, sizeof *ix->dense16);
    else
      ix->dense = ut_shrink(ix->dense, &ix->cap_dense, ix->n_dense, sizeof *ix->dense);
    return 0;
  }
  uint32_t most = 0;
  for (size_t i = 0; i < ix->n; i++)
    if (ix->pairs[i].set > most) most = ix->pairs[i].set;
  size_t width = most <= UINT16_MAX ? sizeof *ix->dense16 : sizeof *ix->dense;
  if (ix->n * sizeof *ix->pairs < n_events * width || n_events == 0) {
    ix->pairs = ut_shrink(ix->pairs, &ix->cap, ix->n, sizeof *ix->pairs);
    return 0;
  }
  return to_dense(ix, n_events);
}

uint32_t tr_argidx_get(const tr_argidx *ix, size_t pos) {
  if (ix->dense16) return pos < ix->n_dense ? ix->dense16[pos] : 0;
  if (ix->dense) return pos < ix->n_dense ? ix->dense[pos] : 0;
  size_t lo; /* the first pair with pos >= the asked one */
  UT_PARTITION_POINT(lo, 0, ix->n, m, ix->pairs[m].pos < pos);
  return lo < ix->n && ix->pairs[lo].pos == pos ? ix->pairs[lo].set : 0;
}

void tr_argidx_free(tr_argidx *ix) {
  free(ix->pairs);
  free(ix->dense);
  free(ix->dense16);
  memset(ix, 0, sizeof *ix);
}
