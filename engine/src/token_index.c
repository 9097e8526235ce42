/* token_index.c - all `tokens:` entries of a rule set in one table; see token_index.h. */
#include "token_index.h"

#include <stdlib.h>
#include <string.h>

#include "triage/hash.h"

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

typedef struct tix_pair {
  const char *bytes; /* borrowed: the matcher's entry, in the rule set's arena */
  uint32_t len, slot;
} tix_pair;

/* One distinct entry text and the slots of the matchers that list it. */
typedef struct tix_entry {
  uint64_t hash;
  const char *bytes;
  uint32_t len;
  uint32_t first, count; /* into ix->slot_list */
} tix_entry;

struct te_token_index {
  tix_pair *pairs; /* until seal */
  size_t n_pairs, cap_pairs;
  tix_entry *entries;
  size_t n_entries;
  uint32_t *slot_list;
  uint32_t *table; /* entry index + 1; 0 = empty bucket */
  size_t mask;
  size_t max_len;
  bool *has_len; /* has_len[n]: some entry is n bytes long (0..max_len) */
  size_t n_slots;
  bool sealed;
};

/* FNV-1a steps per byte (so the scan extends a run's hash byte by byte), then the run's
 * length and the engine's finaliser (hash.h). */
static uint64_t finish(uint64_t h, size_t len) {
  return te_hash_mix(h ^ (uint64_t)len * 0x9e3779b97f4a7c15ull);
}

static uint64_t hash_bytes(const char *s, size_t len) {
  uint64_t h = FNV_OFFSET;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
  return finish(h, len);
}

te_token_index *te_token_index_create(size_t n_entries) {
  te_token_index *ix = calloc(1, sizeof *ix);
  if (!ix) return NULL;
  ix->pairs = malloc((n_entries ? n_entries : 1) * sizeof *ix->pairs);
  ix->cap_pairs = n_entries;
  if (!ix->pairs) {
    free(ix);
    return NULL;
  }
  return ix;
}

void te_token_index_destroy(te_token_index *ix) {
  if (!ix) return;
  free(ix->pairs);
  free(ix->entries);
  free(ix->slot_list);
  free(ix->table);
  free(ix->has_len);
  free(ix);
}

bool te_token_index_add(te_token_index *ix, const char *entry, size_t elen, uint32_t slot) {
  if (!ix || ix->sealed || !elen || elen > UINT32_MAX || ix->n_pairs == ix->cap_pairs) return false;
  ix->pairs[ix->n_pairs++] = (tix_pair){entry, (uint32_t)elen, slot};
  if (elen > ix->max_len) ix->max_len = elen;
  if ((size_t)slot + 1 > ix->n_slots) ix->n_slots = (size_t)slot + 1;
  return true;
}

static int cmp_pair(const void *a, const void *b) {
  const tix_pair *x = a, *y = b;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  int c = memcmp(x->bytes, y->bytes, x->len);
  if (c) return c;
  return x->slot < y->slot ? -1 : (x->slot > y->slot ? 1 : 0);
}

static bool same_text(const tix_pair *a, const tix_pair *b) {
  return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* Distinct entries from the sorted pairs, each with its run of slots. */
static bool collect_entries(te_token_index *ix) {
  ix->entries = calloc(ix->n_pairs ? ix->n_pairs : 1, sizeof *ix->entries);
  ix->slot_list = calloc(ix->n_pairs ? ix->n_pairs : 1, sizeof *ix->slot_list);
  if (!ix->entries || !ix->slot_list) return false;
  size_t n_slots = 0;
  for (size_t i = 0; i < ix->n_pairs; i++) {
    const tix_pair *p = &ix->pairs[i];
    bool same = i > 0 && same_text(p, &ix->pairs[i - 1]);
    if (same && p->slot == ix->pairs[i - 1].slot) continue; /* listed twice in one matcher */
    if (!same)
      ix->entries[ix->n_entries++] =
          (tix_entry){hash_bytes(p->bytes, p->len), p->bytes, p->len, (uint32_t)n_slots, 0};
    ix->slot_list[n_slots++] = p->slot;
    ix->entries[ix->n_entries - 1].count++;
  }
  return true;
}

bool te_token_index_seal(te_token_index *ix) {
  if (!ix || ix->sealed) return false;
  if (ix->n_pairs) qsort(ix->pairs, ix->n_pairs, sizeof *ix->pairs, cmp_pair);
  if (!collect_entries(ix)) return false;
  size_t cap = 16;
  while (cap < 2 * ix->n_entries) cap *= 2;
  ix->table = calloc(cap, sizeof *ix->table);
  ix->has_len = calloc(ix->max_len + 1, sizeof *ix->has_len);
  if (!ix->table || !ix->has_len) return false;
  ix->mask = cap - 1;
  for (size_t i = 0; i < ix->n_entries; i++) {
    size_t b = (size_t)ix->entries[i].hash & ix->mask;
    while (ix->table[b]) b = (b + 1) & ix->mask;
    ix->table[b] = (uint32_t)i + 1;
    ix->has_len[ix->entries[i].len] = true;
  }
  free(ix->pairs); /* the entries keep what the scan needs */
  ix->pairs = NULL;
  ix->n_pairs = ix->cap_pairs = 0;
  ix->sealed = true;
  return true;
}

size_t te_token_index_slots(const te_token_index *ix) { return ix ? ix->n_slots : 0; }

static const tix_entry *lookup(const te_token_index *ix, const char *s, size_t len, uint64_t h) {
  for (size_t b = (size_t)h & ix->mask;; b = (b + 1) & ix->mask) {
    uint32_t at = ix->table[b];
    if (!at) return NULL;
    const tix_entry *e = &ix->entries[at - 1];
    if (e->hash == h && e->len == len && memcmp(e->bytes, s, len) == 0) return e;
  }
}

void te_token_index_scan(const te_token_index *ix, const te_token_form *f, uint64_t *hits) {
  if (!ix || !ix->sealed || !ix->n_entries) return;
  for (size_t k = 0; k < f->n_tokens; k++) {
    size_t p = f->pos[k];
    size_t end = f->len - p < ix->max_len ? f->len : p + ix->max_len;
    uint64_t h = FNV_OFFSET;
    for (size_t j = p; j < end; j++) {
      h = (h ^ (unsigned char)f->text[j]) * FNV_PRIME;
      size_t len = j + 1 - p;
      /* a run ends where the next token starts (starts[len] is 1 at the end) */
      if (!f->starts[j + 1] || !ix->has_len[len]) continue;
      const tix_entry *e = lookup(ix, f->text + p, len, finish(h, len));
      for (uint32_t i = 0; e && i < e->count; i++) {
        uint32_t s = ix->slot_list[e->first + i];
        hits[s >> 6] |= 1ull << (s & 63);
      }
    }
  }
}
