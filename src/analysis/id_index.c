/* analysis/id_index.c - see id_index.h. */
#include "analysis/id_index.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/search.h"
#include "util/sort.h"

static int64_t key_of(const an_id_index *x, uint32_t p) {
  return x->id == AN_ID_CORRELATION ? tr_event_correlation(x->t, &x->evs[p])
                                    : tr_event_external_id(x->t, &x->evs[p]);
}

/* (id, ts, position): a total order, so ut_sort's result is the only one. */
static int cmp(const void *pa, const void *pb, void *ctx) {
  const an_id_index *x = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  int64_t ka = key_of(x, a), kb = key_of(x, b);
  if (ka != kb) return ka < kb ? -1 : 1;
  int c = tr_event_ts_cmp(x->t, &x->evs[a], &x->evs[b]);
  if (c) return c;
  return a < b ? -1 : (a > b);
}

/* An id as a key that orders as the ids do. */
static uint64_t id_key(int64_t id) { return (uint64_t)id ^ (UINT64_C(1) << 63); }

/* The External ids the kernels of t carry (a kernel without one: its correlation's), as
 * id_key keys, sorted, each once; NULL when out of memory. */
static uint64_t *kernel_ext_keys(const tr_trace *t, size_t *n_out) {
  size_t nk = 0, n = 0;
  const tr_event *kev = tr_trace_events(t, TR_KIND_KERNEL, &nk);
  uint64_t *keys = malloc((nk ? nk : 1) * sizeof *keys);
  uint64_t *tmp = malloc((nk ? nk : 1) * sizeof *tmp);
  if (!keys) {
    free(tmp);
    return NULL;
  }
  for (size_t i = 0; i < nk; i++) {
    int64_t ext = tr_event_external_id(t, &kev[i]), corr = tr_event_correlation(t, &kev[i]);
    if (ext == TR_NO_ID && corr != TR_NO_ID) ext = tr_trace_external_for_correlation(t, corr);
    if (ext != TR_NO_ID) keys[n++] = id_key(ext);
  }
  ut_sort_u64(keys, n, tmp);
  free(tmp);
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++)
    if (!distinct || keys[i] != keys[distinct - 1]) keys[distinct++] = keys[i];
  *n_out = distinct;
  return keys;
}

/* The ids an index keeps: keys[0..n) (id_key, sorted, distinct), and when they are dense
 * enough a bit per key from keys[0] (a test per id instead of a search: ~140 instructions
 * an op on hta). keys NULL: every id. */
#define WORD_BITS (CHAR_BIT * sizeof(uint64_t)) /* ids a word of bits holds */

typedef struct key_set {
  const uint64_t *keys;
  size_t n;
  uint64_t *bits; /* NULL: search keys */
} key_set;

/* The bits of s, when its keys span at most a word's ids a key (8 bytes a key at most). */
static void key_bits(key_set *s) {
  if (!s->n || s->keys[s->n - 1] - s->keys[0] >= (uint64_t)s->n * WORD_BITS) return;
  size_t words = (size_t)((s->keys[s->n - 1] - s->keys[0]) / WORD_BITS) + 1;
  if (!(s->bits = calloc(words, sizeof *s->bits))) return; /* the search answers the same */
  for (size_t i = 0; i < s->n; i++) {
    uint64_t d = s->keys[i] - s->keys[0];
    s->bits[d / WORD_BITS] |= UINT64_C(1) << (d % WORD_BITS);
  }
}

/* Whether id is among the set's. */
static bool wanted(const key_set *s, int64_t id) {
  if (!s) return true;
  uint64_t k = id_key(id);
  if (!s->n || k < s->keys[0] || k > s->keys[s->n - 1]) return false;
  if (s->bits) return s->bits[(k - s->keys[0]) / WORD_BITS] >> ((k - s->keys[0]) % WORD_BITS) & 1;
  size_t at;
  UT_PARTITION_POINT(at, 0, s->n, m, s->keys[m] < k);
  return s->keys[at] == k;
}

/* an_id_index_build over the events whose id is in keys (NULL: all), left out before the
 * sort. */
static int build(an_id_index *x, const tr_trace *t, tr_kind kind, an_id_kind id,
                 const key_set *keys) {
  size_t n = 0;
  *x = (an_id_index){t, tr_trace_events(t, kind, &n), id, NULL, 0};
  x->pos = malloc((n ? n : 1) * sizeof *x->pos);
  if (!x->pos) return -1;
  for (size_t i = 0; i < n; i++) {
    int64_t k = key_of(x, (uint32_t)i);
    if (k != TR_NO_ID && wanted(keys, k)) x->pos[x->n++] = (uint32_t)i;
  }
  if (keys) {
    uint32_t *v = realloc(x->pos, (x->n ? x->n : 1) * sizeof *v);
    if (v) x->pos = v; /* else the longer block stays */
  }
  ut_sort(x->pos, x->n, sizeof *x->pos, cmp, x);
  return 0;
}

int an_id_index_build(an_id_index *x, const tr_trace *t, tr_kind kind, an_id_kind id) {
  return build(x, t, kind, id, NULL);
}

void an_id_index_free(an_id_index *x) {
  free(x->pos);
  x->pos = NULL;
  x->n = 0;
}

/* Whether entry i comes before the place searched: its key is below id, or (through) at
 * most id. The start of id's range is the first entry not before it, the end the first
 * entry not before it "through". */
static bool before(const an_id_index *x, size_t i, int64_t id, bool through) {
  int64_t k = key_of(x, x->pos[i]);
  return through ? k <= id : k < id;
}

/* The first entry in [a, b) not before the place, given that the entries before a are
 * and entry b (when b < n) is not. */
static size_t first_not_before(const an_id_index *x, int64_t id, bool through, size_t a, size_t b) {
  size_t first;
  UT_PARTITION_POINT(first, a, b, m, before(x, m, id, through));
  return first;
}

/* The same, at or after a, found by galloping from a (entries before a are before the
 * place): log d compares for a place d entries on, where a binary search over the index
 * cost log n decodes of scattered events. */
static size_t gallop_from(const an_id_index *x, int64_t id, bool through, size_t a) {
  size_t from = a, b = a, step = 1;
  while (b < x->n && before(x, b, id, through)) {
    a = b + 1;
    b = from + step;
    step *= 2;
  }
  return first_not_before(x, id, through, a, b < x->n ? b : x->n);
}

void an_id_index_range(const an_id_index *x, int64_t id, size_t *lo, size_t *hi) {
  *lo = first_not_before(x, id, false, 0, x->n);
  *hi = gallop_from(x, id, true, *lo); /* an id has a few entries */
}

/* The start of id's range, galloping from h forwards or backwards. */
static size_t start_near(const an_id_index *x, int64_t id, size_t h) {
  if (h < x->n && before(x, h, id, false)) return gallop_from(x, id, false, h + 1);
  size_t b = h, step = 1; /* entry b, when b < n, is not before: the start is at or before b */
  while (b > 0) {
    size_t c = b > step ? b - step : 0;
    if (before(x, c, id, false)) return first_not_before(x, id, false, c + 1, b);
    b = c;
    step *= 2;
  }
  return 0;
}

void an_id_index_range_near(const an_id_index *x, int64_t id, size_t *hint, size_t *lo,
                            size_t *hi) {
  *lo = start_near(x, id, *hint < x->n ? *hint : x->n);
  *hi = gallop_from(x, id, true, *lo);
  *hint = *lo;
}

int an_trace_ids_build(an_trace_ids *ids, const tr_trace *t) {
  memset(ids, 0, sizeof *ids);
  key_set ks = {0};
  uint64_t *keys = kernel_ext_keys(t, &ks.n);
  ks.keys = keys;
  if (keys) key_bits(&ks);
  bool ok = keys && build(&ids->ops_by_ext, t, TR_KIND_CPU_OP, AN_ID_EXTERNAL, &ks) == 0 &&
            an_id_index_build(&ids->launches_by_corr, t, TR_KIND_LAUNCH, AN_ID_CORRELATION) == 0;
  free(ks.bits);
  free(keys);
  if (ok) return 0;
  an_trace_ids_free(ids);
  return -1;
}

/* The first launch of the range that starts at lo, NULL when the range is empty: only its
 * first entry is asked for, so its end is not searched (the entry at lo has the id or the
 * range is empty). */
static const tr_event *first_of(const an_id_index *x, int64_t id, size_t lo) {
  return lo < x->n && key_of(x, x->pos[lo]) == id ? an_id_index_event(x, lo) : NULL;
}

const tr_event *an_trace_ids_launch_of(const an_trace_ids *ids, const tr_trace *t,
                                       const tr_event *k) {
  int64_t corr = tr_event_correlation(t, k);
  if (corr == TR_NO_ID || !ids) return NULL;
  const an_id_index *x = &ids->launches_by_corr;
  return first_of(x, corr, first_not_before(x, corr, false, 0, x->n));
}

const tr_event *an_trace_ids_launch_of_near(const an_trace_ids *ids, const tr_trace *t,
                                            const tr_event *k, size_t *hint) {
  int64_t corr = tr_event_correlation(t, k);
  if (corr == TR_NO_ID || !ids) return NULL;
  const an_id_index *x = &ids->launches_by_corr;
  *hint = start_near(x, corr, *hint < x->n ? *hint : x->n);
  return first_of(x, corr, *hint);
}

void an_trace_ids_free(an_trace_ids *ids) {
  an_id_index_free(&ids->ops_by_ext);
  an_id_index_free(&ids->launches_by_corr);
}

const an_trace_ids *an_trace_ids_lend(const an_trace_ids *lent, an_trace_ids *own,
                                      const tr_trace *t) {
  if (lent) return lent;
  return an_trace_ids_build(own, t) == 0 ? own : NULL;
}
