/*
 * analysis/waits.c - the per-instance wait model (waits.h): one sort of the instances by
 * (group, duration), one floor per group.
 */
#include "analysis/waits.h"

#include <stdlib.h>

#include "util/sort.h"

double an_wait_floor(const double *sorted, size_t m, double floor_pct) {
  if (!m) return 0;
  size_t at = (size_t)(floor_pct / 100.0 * (double)(m - 1));
  return sorted[at < m ? at : m - 1];
}

static int by_group_dur(const void *pa, const void *pb, void *ctx) {
  const an_wait_instance *v = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (v[a].group != v[b].group) return v[a].group < v[b].group ? -1 : 1;
  if (v[a].dur_us != v[b].dur_us) return v[a].dur_us < v[b].dur_us ? -1 : 1;
  return a < b ? -1 : (a > b);
}

an_status an_wait_model(an_wait_instance *v, size_t n, double floor_pct) {
  if ((!v && n) || !(floor_pct >= 0 && floor_pct <= 100) || n > UINT32_MAX) return AN_ERR_ARGS;
  uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
  double *d = malloc((n ? n : 1) * sizeof *d);
  if (!ix || !d) {
    free(ix);
    free(d);
    return AN_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) ix[i] = (uint32_t)i;
  ut_sort(ix, n, sizeof *ix, by_group_dur, v);
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    for (hi = lo; hi < n && v[ix[hi]].group == v[ix[lo]].group; hi++) d[hi - lo] = v[ix[hi]].dur_us;
    double floor = an_wait_floor(d, hi - lo, floor_pct);
    for (size_t k = lo; k < hi; k++) {
      an_wait_instance *w = &v[ix[k]];
      w->floor_us = floor;
      w->wait_us = w->dur_us > floor ? w->dur_us - floor : 0;
    }
  }
  free(ix);
  free(d);
  return AN_OK;
}
