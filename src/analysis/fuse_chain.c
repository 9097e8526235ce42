/*
 * analysis/fuse_chain.c - the chain gate of a split fusion (issue 31, deviation F9): the
 * pieces of one fusion come from the same layer and stream, in launch order and near
 * each other. A RoPE kernel and a KV-cache write are one chain when the write follows
 * the RoPE on its stream a few kernels later; attention and the MoE input quantisation
 * of a later layer are not, since the attention output projection (a GEMM) and the
 * router sit between them.
 *
 * The stage's kernels are laid out stream by stream in start order (on one stream start
 * order is launch order). From each launch of a first-piece candidate the search walks
 * on along its stream: a kernel that can play the next piece takes it; a kernel of a
 * breaker category (fuse.chain_breakers: GEMM, attention, MoE experts, collectives) that
 * plays no piece ends the chain; at most max_between other kernels may sit between two
 * pieces. The tuple of rows seen most often wins. A pattern's riders (chain.riders: the
 * Q/K contiguous copies before an out-of-place Q/K norm) between two pieces, or right before
 * the first, ride along: they do not count as kernels between, and the best tuple takes
 * the riders its chains held (review-1 defect 4: the whole chain is one fusion).
 */
#include "analysis/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/map.h"
#include "util/vec.h"

/* ---------------------------------------------------------------- sequence */

void an_fuse_seq_free(an_fuse_seq *seq) {
  free(seq->row);
  free(seq->lane_start);
  memset(seq, 0, sizeof *seq);
}

/* The dense lane (view, stream) of each kernel; *n_lanes the count. NULL when out of
 * memory. */
static uint32_t *lanes_of(const an_trace_view *views, size_t n_views, const te_stage *stage,
                          size_t n_ev, size_t *n_lanes) {
  uint32_t *lane = malloc((n_ev ? n_ev : 1) * sizeof *lane);
  ut_u64map ids = {0};
  size_t k = 0;
  bool ok = lane != NULL;
  for (size_t v = 0; ok && v < n_views; v++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[v], stage->id);
    for (size_t i = 0; ok && sk && i < sk->n && k < n_ev; i++) {
      uint64_t key = (uint64_t)v << 32 | tr_event_stream(views[v].trace, sk->kernels[i]), id = 0;
      if (!ut_u64map_get(&ids, key, &id)) {
        id = *n_lanes;
        ok = ut_u64map_put(&ids, key, id);
        if (ok) (*n_lanes)++;
      }
      lane[k++] = (uint32_t)id;
    }
  }
  ut_u64map_free(&ids);
  if (!ok || k != n_ev) {
    free(lane);
    return NULL;
  }
  return lane;
}

bool an_fuse_seq_build(an_fuse_seq *seq, const an_trace_view *views, size_t n_views,
                       const te_stage *stage, const uint32_t *ev_row, size_t n_ev) {
  memset(seq, 0, sizeof *seq);
  size_t n_lanes = 0;
  uint32_t *lane = lanes_of(views, n_views, stage, n_ev, &n_lanes);
  seq->row = malloc((n_ev ? n_ev : 1) * sizeof *seq->row);
  seq->lane_start = calloc(n_lanes + 2, sizeof *seq->lane_start);
  if (!lane || !seq->row || !seq->lane_start) {
    free(lane);
    an_fuse_seq_free(seq);
    return false;
  }
  /* a counting sort by lane keeps each view's start order inside the lane */
  for (size_t i = 0; i < n_ev; i++) seq->lane_start[lane[i] + 2]++;
  for (size_t l = 0; l < n_lanes; l++) seq->lane_start[l + 2] += seq->lane_start[l + 1];
  for (size_t i = 0; i < n_ev; i++) seq->row[seq->lane_start[lane[i] + 1]++] = ev_row[i];
  seq->n = n_ev;
  seq->n_lanes = n_lanes;
  free(lane);
  return true;
}

/* ---------------------------------------------------------------- search */

/* Which piece row r can play and has not yet played in the tuple (-1: none). */
static int piece_of(const an_chain_query *q, size_t r, const size_t *tuple, const bool *filled) {
  for (size_t g = 0; g < q->n_pieces; g++) {
    if (filled[g]) continue;
    for (size_t c = 0; c < q->pieces[g].n; c++) {
      if (q->pieces[g].rows[c] != r) continue;
      bool taken = false; /* one kernel plays one piece */
      for (size_t h = 0; h < q->n_pieces; h++) taken |= filled[h] && tuple[h] == r;
      if (!taken) return (int)g;
    }
    if (!q->unordered) return -1; /* in launch order only the next piece may come */
  }
  return -1;
}

/* Whether row r ends a chain it sits in: a breaker category no piece has. */
static bool breaks(const an_chain_query *q, size_t r) {
  const an_kernel_row *row = &q->st->rows[r];
  if (!te_string_list_has(q->breakers, row->category)) return false;
  for (size_t i = 0; i < q->n_labels; i++)
    if (!strcmp(q->labels[i], row->category) || (row->kind && !strcmp(q->labels[i], row->kind)))
      return false;
  return true;
}

static void add_rider(an_chain_riders *rd, size_t r) {
  for (size_t i = 0; i < rd->n; i++)
    if (rd->rows[i] == r) return;
  if (rd->n < AN_MAX_CHAIN_RIDERS) rd->rows[rd->n++] = r;
}

static bool is_rider(const an_chain_query *q, size_t r) { return q->rider && q->rider[r]; }

/* Walks from position p of a lane in direction dir, filling pieces of the tuple; riders
 * met between pieces go to rd. */
static void walk(const an_chain_query *q, size_t lo, size_t hi, size_t p, int dir, size_t *tuple,
                 bool *filled, size_t *n_filled, an_chain_riders *rd) {
  long between = 0;
  an_chain_riders seen = {0}; /* kept only once a piece follows them */
  for (size_t j = p; *n_filled < q->n_pieces;) {
    if (dir > 0 ? j + 1 >= hi : j <= lo) return;
    j = dir > 0 ? j + 1 : j - 1;
    size_t r = q->seq->row[j];
    int g = piece_of(q, r, tuple, filled);
    if (g >= 0) {
      tuple[g] = r;
      filled[g] = true;
      (*n_filled)++;
      between = 0;
      for (size_t i = 0; i < seen.n; i++) add_rider(rd, seen.rows[i]);
      seen.n = 0;
    } else if (is_rider(q, r)) {
      add_rider(&seen, r);
    } else if (breaks(q, r) || ++between > q->max_between) {
      return;
    }
  }
}

/* The riders right before position p of a lane (the copy before the first piece). */
static void riders_before(const an_chain_query *q, size_t lo, size_t p, an_chain_riders *rd) {
  for (size_t j = p; j > lo && is_rider(q, q->seq->row[j - 1]); j--)
    add_rider(rd, q->seq->row[j - 1]);
}

/* The whole tuple starting at position p (a first-piece launch), or false. */
static bool chain_at(const an_chain_query *q, size_t lo, size_t hi, size_t p, size_t *tuple,
                     an_chain_riders *rd) {
  bool filled[TE_MAX_CHAIN_PIECES] = {false};
  size_t n_filled = 1;
  tuple[0] = q->seq->row[p];
  filled[0] = true;
  rd->n = 0;
  walk(q, lo, hi, p, +1, tuple, filled, &n_filled, rd);
  if (q->unordered && n_filled < q->n_pieces) walk(q, lo, hi, p, -1, tuple, filled, &n_filled, rd);
  if (n_filled == q->n_pieces && q->rider) riders_before(q, lo, p, rd);
  return n_filled == q->n_pieces;
}

static bool is_first_piece(const an_chain_query *q, size_t r) {
  for (size_t c = 0; c < q->pieces[0].n; c++)
    if (q->pieces[0].rows[c] == r) return true;
  return false;
}

/* Tuples seen, with their counts (a handful per pattern and stage). */
typedef struct tuple_count {
  size_t rows[TE_MAX_CHAIN_PIECES];
  size_t count;
  an_chain_riders riders; /* the riders its chains held */
} tuple_count;

static bool count_tuple(tuple_count **v, size_t *n, size_t *cap, const size_t *t, size_t k,
                        const an_chain_riders *rd) {
  for (size_t i = 0; i < *n; i++)
    if (!memcmp((*v)[i].rows, t, k * sizeof *t)) {
      (*v)[i].count++;
      for (size_t r = 0; r < rd->n; r++) add_rider(&(*v)[i].riders, rd->rows[r]);
      return true;
    }
  tuple_count *g = ut_grow(*v, cap, *n + 1, sizeof *g);
  if (!g) return false;
  *v = g;
  memset(&(*v)[*n], 0, sizeof **v);
  memcpy((*v)[*n].rows, t, k * sizeof *t);
  (*v)[*n].riders = *rd;
  (*v)[(*n)++].count = 1;
  return true;
}

bool an_chain_best(const an_chain_query *q, bool (*accept)(const size_t *rows, void *ctx),
                   void *ctx, size_t *out, double *fraction, an_chain_riders *riders) {
  *fraction = 0;
  riders->n = 0;
  an_chain_riders rd;
  if (q->n_pieces < 1 || q->n_pieces > TE_MAX_CHAIN_PIECES) return false;
  tuple_count *seen = NULL;
  size_t n_seen = 0, cap = 0;
  size_t tuple[TE_MAX_CHAIN_PIECES];
  bool ok = true;
  for (size_t l = 0; ok && l < q->seq->n_lanes; l++) {
    size_t lo = q->seq->lane_start[l], hi = q->seq->lane_start[l + 1];
    for (size_t p = lo; ok && p < hi; p++)
      if (is_first_piece(q, q->seq->row[p]) && chain_at(q, lo, hi, p, tuple, &rd))
        ok = count_tuple(&seen, &n_seen, &cap, tuple, q->n_pieces, &rd);
  }
  const tuple_count *best = NULL;
  for (size_t i = 0; ok && i < n_seen; i++) {
    if (accept && !accept(seen[i].rows, ctx)) continue;
    if (!best || seen[i].count > best->count) best = &seen[i];
  }
  if (best) {
    memcpy(out, best->rows, q->n_pieces * sizeof *out);
    *riders = best->riders;
    /* of the rarest piece's launches: a norm kernel that also serves the layer's other
     * norm starts a chain only half the time, while every pad it feeds is one */
    size_t launches = SIZE_MAX;
    for (size_t g = 0; g < q->n_pieces; g++)
      if (q->st->rows[best->rows[g]].launches < launches)
        launches = q->st->rows[best->rows[g]].launches;
    double f = launches ? (double)best->count / (double)launches : 0;
    *fraction = f > 1.0 ? 1.0 : f;
  }
  free(seen);
  return best != NULL;
}
