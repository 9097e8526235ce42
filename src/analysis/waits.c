/*
 * analysis/waits.c - the per-instance wait model (waits.h): one sort of the instances by
 * (group, duration), one floor per group, by duration or per byte.
 */
#include "analysis/waits.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/sort.h"

double an_wait_floor(const double *sorted, size_t m, double floor_pct) {
  if (!m) return 0;
  size_t at = (size_t)(floor_pct / 100.0 * (double)(m - 1));
  return sorted[at < m ? at : m - 1];
}

an_wait_cover an_wait_cover_begin(int64_t start, int64_t wait, int64_t limit) {
  int64_t end = wait > 0 ? start + wait : start;
  return (an_wait_cover){wait, end < limit ? end : limit, start, 0};
}

/* Every event added before started at or before s: those reaching past s cover all of
 * [s, reach), so only the part of [s, e) past reach is new. */
void an_wait_cover_add(an_wait_cover *c, int64_t s, int64_t e) {
  int64_t from = s > c->reach ? s : c->reach, to = e < c->end ? e : c->end;
  if (to <= from) return;
  c->covered += to - from;
  c->reach = to;
}

int64_t an_wait_cover_idle(const an_wait_cover *c) {
  return c->wait > 0 ? c->wait - c->covered : 0;
}

static int by_group_dur(const void *pa, const void *pb, void *ctx) {
  const an_wait_instance *v = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (v[a].group != v[b].group) return v[a].group < v[b].group ? -1 : 1;
  if (v[a].dur_us != v[b].dur_us) return v[a].dur_us < v[b].dur_us ? -1 : 1;
  return a < b ? -1 : (a > b);
}

static int by_bytes(const void *pa, const void *pb, void *ctx) {
  const an_wait_instance *v = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (v[a].bytes != v[b].bytes) return v[a].bytes < v[b].bytes ? -1 : 1;
  return a < b ? -1 : (a > b);
}

/* The floors of group v[ix[0..m)], every instance stating its bytes (waits.h: the envelope
 * of like messages). by: room for m indices, sorted here by bytes; d: room for m doubles,
 * the suffix minima of the durations in that order, and at: room for m indices, the
 * instance each minimum is. */
static void floor_by_envelope(an_wait_instance *v, const uint32_t *ix, size_t m, uint32_t *by,
                              double *d, uint32_t *at, double latency_us) {
  memcpy(by, ix, m * sizeof *by);
  ut_sort(by, m, sizeof *by, by_bytes, v);
  for (size_t k = m; k-- > 0;) {
    bool later = k + 1 < m && d[k + 1] < v[by[k]].dur_us;
    d[k] = later ? d[k + 1] : v[by[k]].dur_us;
    at[k] = later ? at[k + 1] : by[k];
  }
  double latency = v[ix[0]].dur_us < latency_us ? v[ix[0]].dur_us : latency_us;
  double rate = -1; /* the least time per byte of the smaller messages; -1: none yet */
  uint32_t rate_from = AN_WAIT_LATENCY;
  for (size_t lo = 0, hi; lo < m; lo = hi) {
    double bytes = v[by[lo]].bytes;
    for (hi = lo; hi < m && v[by[hi]].bytes == bytes; hi++) {
    }
    double env = d[lo]; /* no message at least this large took less */
    uint32_t from = at[lo];
    if (rate >= 0 && bytes * rate < env) { /* nor, per byte, a smaller one */
      env = bytes * rate;
      from = rate_from;
    }
    if (latency > env) from = AN_WAIT_LATENCY;
    for (size_t k = lo; k < hi; k++) {
      an_wait_instance *w = &v[by[k]];
      double floor = env > latency ? env : latency;
      w->floor_us = floor < w->dur_us ? floor : w->dur_us;
      w->floor_from = floor < w->dur_us ? from : by[k];
      w->wait_us = w->dur_us - w->floor_us;
      w->latency_us = latency;
      double r = w->dur_us / bytes;
      if (rate < 0 || r < rate) {
        rate = r;
        rate_from = by[k];
      }
    }
  }
  for (size_t k = 0; k < m; k++) v[ix[k]].per_byte_us = rate; /* the fastest, shown */
}

/* The floor of group v[ix[0..m)] by its durations (sorted), d room for m doubles. */
static void floor_by_duration(an_wait_instance *v, const uint32_t *ix, size_t m, double *d,
                              double floor_pct) {
  for (size_t k = 0; k < m; k++) d[k] = v[ix[k]].dur_us;
  double floor = an_wait_floor(d, m, floor_pct);
  size_t at = m ? (size_t)(floor_pct / 100.0 * (double)(m - 1)) : 0; /* as an_wait_floor */
  for (size_t k = 0; k < m; k++) {
    an_wait_instance *w = &v[ix[k]];
    w->floor_us = floor;
    w->floor_from = ix[at < m ? at : m - 1];
    w->wait_us = w->dur_us > floor ? w->dur_us - floor : 0;
    w->per_byte_us = w->latency_us = 0;
  }
}

an_status an_wait_model(an_wait_instance *v, size_t n, double floor_pct, double latency_us) {
  if ((!v && n) || !(floor_pct >= 0 && floor_pct <= 100) || !(latency_us >= 0) || n > UINT32_MAX)
    return AN_ERR_ARGS;
  uint32_t *ix = malloc((n ? n : 1) * sizeof *ix), *by = malloc((n ? n : 1) * sizeof *by);
  uint32_t *at = malloc((n ? n : 1) * sizeof *at);
  double *d = malloc((n ? n : 1) * sizeof *d);
  if (!ix || !by || !at || !d) {
    free(ix);
    free(by);
    free(at);
    free(d);
    return AN_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) ix[i] = (uint32_t)i;
  ut_sort(ix, n, sizeof *ix, by_group_dur, v);
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    bool sized = true;
    for (hi = lo; hi < n && v[ix[hi]].group == v[ix[lo]].group; hi++)
      sized = sized && v[ix[hi]].bytes > 0;
    if (sized && hi - lo > 1)
      floor_by_envelope(v, ix + lo, hi - lo, by, d, at, latency_us);
    else
      floor_by_duration(v, ix + lo, hi - lo, d, floor_pct);
    for (size_t k = lo; k < hi; k++) v[ix[k]].alone = hi - lo == 1;
  }
  free(ix);
  free(by);
  free(at);
  free(d);
  return AN_OK;
}
