/* analysis/id_index.c - see id_index.h. */
#include "analysis/id_index.h"

#include <stdlib.h>
#include <string.h>

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
  double ta = x->evs[a].ts, tb = x->evs[b].ts;
  if (ta != tb) return ta < tb ? -1 : 1;
  return a < b ? -1 : (a > b);
}

int an_id_index_build(an_id_index *x, const tr_trace *t, tr_kind kind, an_id_kind id) {
  size_t n = 0;
  *x = (an_id_index){t, tr_trace_events(t, kind, &n), id, NULL, 0};
  x->pos = malloc((n ? n : 1) * sizeof *x->pos);
  if (!x->pos) return -1;
  for (size_t i = 0; i < n; i++)
    if (key_of(x, (uint32_t)i) != TR_NO_ID) x->pos[x->n++] = (uint32_t)i;
  ut_sort(x->pos, x->n, sizeof *x->pos, cmp, x);
  return 0;
}

void an_id_index_free(an_id_index *x) {
  free(x->pos);
  x->pos = NULL;
  x->n = 0;
}

void an_id_index_range(const an_id_index *x, int64_t id, size_t *lo, size_t *hi) {
  size_t a = 0, b = x->n;
  while (a < b) { /* first entry with key >= id */
    size_t mid = a + (b - a) / 2;
    if (key_of(x, x->pos[mid]) < id)
      a = mid + 1;
    else
      b = mid;
  }
  *lo = a;
  b = x->n;
  while (a < b) { /* first entry with key > id */
    size_t mid = a + (b - a) / 2;
    if (key_of(x, x->pos[mid]) <= id)
      a = mid + 1;
    else
      b = mid;
  }
  *hi = a;
}

int an_trace_ids_build(an_trace_ids *ids, const tr_trace *t) {
  memset(ids, 0, sizeof *ids);
  if (an_id_index_build(&ids->ops_by_ext, t, TR_KIND_CPU_OP, AN_ID_EXTERNAL) == 0 &&
      an_id_index_build(&ids->launches_by_corr, t, TR_KIND_LAUNCH, AN_ID_CORRELATION) == 0)
    return 0;
  an_trace_ids_free(ids);
  return -1;
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
