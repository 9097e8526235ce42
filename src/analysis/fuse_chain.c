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
 *
 * Where the trace has module frames (with_stack), they decide the layer (brief 13 defect
 * 3, deviation F18): a chain whose pieces were launched inside two instances of the model's
 * repeated block ("nn.Module: Qwen3DecoderLayer_3" and "_4", attrib.h an_resolver_layers)
 * is two layers' kernels and counts for no tuple, whatever ran between them. A piece with
 * no such frame (graph replay, no module frames) leaves it to the kernels between.
 */
#include "analysis/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/attrib.h"

#include "util/map.h"
#include "util/vec.h"

/* ---------------------------------------------------------------- sequence */

/* seq_layers' memo: of[p] is the layer of the kernel at position p, NOT_ASKED before its
 * first question (NULL: it has none). */
struct an_seq_layers {
  const char **of;
};
static const char layer_tags[2]; /* two addresses no layer name has */
#define NOT_ASKED (&layer_tags[0])
#define ASKING (&layer_tags[1])

void an_fuse_seq_release(an_fuse_seq *seq) {
  for (size_t v = 0; seq->res && v < seq->n_views; v++) {
    an_resolver_destroy(seq->res[v]);
    seq->res[v] = NULL;
  }
  if (seq->layers) {
    free(seq->layers->of);
    seq->layers->of = NULL;
  }
}

void an_fuse_seq_free(an_fuse_seq *seq) {
  an_fuse_seq_release(seq);
  free(seq->layers);
  free(seq->res);
  free(seq->row);
  free(seq->lane_start);
  free(seq->ev);
  free(seq->view);
  memset(seq, 0, sizeof *seq);
}

/* The dense lane (view, stream) of each kernel; *n_lanes the count; ev / view: each
 * kernel's event and view. NULL when out of memory. */
static uint32_t *lanes_of(const an_trace_view *views, size_t n_views, const te_stage *stage,
                          size_t n_ev, size_t *n_lanes, const tr_event **ev, uint32_t *view) {
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
      ev[k] = sk->kernels[i];
      view[k] = (uint32_t)v;
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
                       const te_stage *stage, const uint32_t *ev_row, size_t n_ev,
                       const te_rules *rules, an_strtab *strings) {
  memset(seq, 0, sizeof *seq);
  size_t n_lanes = 0;
  const tr_event **ev = malloc((n_ev ? n_ev : 1) * sizeof *ev);
  uint32_t *view = malloc((n_ev ? n_ev : 1) * sizeof *view);
  uint32_t *lane = ev && view ? lanes_of(views, n_views, stage, n_ev, &n_lanes, ev, view) : NULL;
  seq->row = malloc((n_ev ? n_ev : 1) * sizeof *seq->row);
  seq->ev = malloc((n_ev ? n_ev : 1) * sizeof *seq->ev);
  seq->view = malloc((n_ev ? n_ev : 1) * sizeof *seq->view);
  seq->lane_start = calloc(n_lanes + 2, sizeof *seq->lane_start);
  seq->res = calloc(n_views ? n_views : 1, sizeof *seq->res);
  seq->layers = calloc(1, sizeof *seq->layers);
  if (!lane || !seq->row || !seq->ev || !seq->view || !seq->lane_start || !seq->res ||
      !seq->layers) {
    free(lane);
    free(ev);
    free(view);
    an_fuse_seq_free(seq);
    return false;
  }
  /* a counting sort by lane keeps each view's start order inside the lane */
  for (size_t i = 0; i < n_ev; i++) seq->lane_start[lane[i] + 2]++;
  for (size_t l = 0; l < n_lanes; l++) seq->lane_start[l + 2] += seq->lane_start[l + 1];
  for (size_t i = 0; i < n_ev; i++) {
    size_t at = seq->lane_start[lane[i] + 1]++;
    seq->row[at] = ev_row[i];
    seq->ev[at] = ev[i];
    seq->view[at] = view[i];
  }
  seq->n = n_ev;
  seq->n_lanes = n_lanes;
  seq->views = views;
  seq->n_views = n_views;
  seq->rules = rules;
  seq->strings = strings;
  free(lane);
  free(ev);
  free(view);
  return true;
}

/* The layer of the kernel at each position pos[0..n) of the sequence (attrib.h
 * an_resolver_layers), by the resolver of each view that has any (made on its first
 * question, kept in the seq). A kernel's layer is its own (its op's and launch's frames),
 * so each is asked once and remembered: the resolver sweeps a thread's frames once per
 * question. False when out of memory. */
static bool seq_layers(const an_fuse_seq *seq, const size_t *pos, size_t n, const char **layer) {
  struct an_seq_layers *memo = seq->layers;
  if (!memo->of) {
    memo->of = malloc((seq->n ? seq->n : 1) * sizeof *memo->of);
    if (!memo->of) return false;
    for (size_t i = 0; i < seq->n; i++) memo->of[i] = NOT_ASKED;
  }
  const tr_event **k = malloc((n ? n : 1) * sizeof *k);
  size_t *at = malloc((n ? n : 1) * sizeof *at);
  const char **got = malloc((n ? n : 1) * sizeof *got);
  bool ok = k && at && got;
  for (size_t v = 0; ok && v < seq->n_views; v++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (seq->view[pos[i]] == v && memo->of[pos[i]] == NOT_ASKED) {
        memo->of[pos[i]] = ASKING; /* once, though a call names it twice */
        at[m] = pos[i];
        k[m++] = seq->ev[pos[i]];
      }
    if (!m) continue;
    if (!seq->res[v])
      seq->res[v] =
          an_resolver_create(seq->views[v].trace, seq->views[v].ids, seq->rules, seq->strings);
    ok = seq->res[v] && an_resolver_layers(seq->res[v], k, m, got) == AN_OK;
    for (size_t j = 0; j < m; j++) memo->of[at[j]] = ok ? got[j] : NOT_ASKED;
  }
  for (size_t i = 0; ok && i < n; i++) layer[i] = memo->of[pos[i]];
  free(k);
  free(at);
  free(got);
  return ok;
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
                 size_t *at, bool *filled, size_t *n_filled, an_chain_riders *rd) {
  long between = 0;
  an_chain_riders seen = {0}; /* kept only once a piece follows them */
  for (size_t j = p; *n_filled < q->n_pieces;) {
    if (dir > 0 ? j + 1 >= hi : j <= lo) return;
    j = dir > 0 ? j + 1 : j - 1;
    size_t r = q->seq->row[j];
    int g = piece_of(q, r, tuple, filled);
    if (g >= 0) {
      tuple[g] = r;
      at[g] = j;
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

/* The whole tuple starting at position p (a first-piece launch), or false; at: each
 * piece's position. */
static bool chain_at(const an_chain_query *q, size_t lo, size_t hi, size_t p, size_t *tuple,
                     size_t *at, an_chain_riders *rd) {
  bool filled[TE_MAX_CHAIN_PIECES] = {false};
  size_t n_filled = 1;
  tuple[0] = q->seq->row[p];
  at[0] = p;
  filled[0] = true;
  rd->n = 0;
  walk(q, lo, hi, p, +1, tuple, at, filled, &n_filled, rd);
  if (q->unordered && n_filled < q->n_pieces)
    walk(q, lo, hi, p, -1, tuple, at, filled, &n_filled, rd);
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
  size_t by_frames;       /* of count: chains whose every piece has a known layer */
  an_chain_riders riders; /* the riders its chains held */
} tuple_count;

/* One chain found: its tuple, each piece's position, its riders, whether module frames
 * placed every piece in one layer. */
typedef struct chain_seen {
  size_t rows[TE_MAX_CHAIN_PIECES];
  size_t at[TE_MAX_CHAIN_PIECES];
  an_chain_riders riders;
  bool by_frames;
} chain_seen;

/* Drops the chains whose pieces the module frames place in two layers (counted in
 * *across); marks those whose every piece has a known layer. False when out of memory. */
static bool one_layer(const an_chain_query *q, chain_seen *v, size_t *n, size_t *across) {
  size_t np = q->n_pieces, total = *n * np;
  if (!total || !q->seq->views) return true;
  size_t *pos = malloc(total * sizeof *pos);
  const char **layer = malloc(total * sizeof *layer);
  bool ok = pos && layer;
  for (size_t i = 0; ok && i < *n; i++) memcpy(&pos[i * np], v[i].at, np * sizeof *pos);
  ok = ok && seq_layers(q->seq, pos, total, layer);
  size_t kept = 0;
  for (size_t i = 0; ok && i < *n; i++) {
    const char *first = NULL;
    bool split = false, all = true;
    for (size_t g = 0; g < np; g++) {
      const char *l = layer[i * np + g];
      if (!l)
        all = false;
      else if (!first)
        first = l;
      else if (strcmp(first, l) != 0)
        split = true;
    }
    if (split) {
      (*across)++;
      continue;
    }
    v[i].by_frames = all;
    v[kept++] = v[i];
  }
  if (ok) *n = kept;
  free(pos);
  free(layer);
  return ok;
}

static bool count_tuple(tuple_count **v, size_t *n, size_t *cap, const size_t *t, size_t k,
                        const an_chain_riders *rd, bool by_frames) {
  for (size_t i = 0; i < *n; i++)
    if (!memcmp((*v)[i].rows, t, k * sizeof *t)) {
      (*v)[i].count++;
      (*v)[i].by_frames += by_frames;
      for (size_t r = 0; r < rd->n; r++) add_rider(&(*v)[i].riders, rd->rows[r]);
      return true;
    }
  tuple_count *g = ut_grow(*v, cap, *n + 1, sizeof *g);
  if (!g) return false;
  *v = g;
  memset(&(*v)[*n], 0, sizeof **v);
  memcpy((*v)[*n].rows, t, k * sizeof *t);
  (*v)[*n].riders = *rd;
  (*v)[*n].by_frames = by_frames;
  (*v)[(*n)++].count = 1;
  return true;
}

bool an_chain_best(const an_chain_query *q, bool (*accept)(const size_t *rows, void *ctx),
                   void *ctx, size_t *out, double *fraction, an_chain_riders *riders,
                   an_chain_layers *layers) {
  *fraction = 0;
  riders->n = 0;
  *layers = (an_chain_layers){0};
  if (q->n_pieces < 1 || q->n_pieces > TE_MAX_CHAIN_PIECES) return false;
  chain_seen *found = NULL, c = {0};
  size_t n_found = 0, cap_found = 0;
  bool ok = true;
  for (size_t l = 0; ok && l < q->seq->n_lanes; l++) {
    size_t lo = q->seq->lane_start[l], hi = q->seq->lane_start[l + 1];
    for (size_t p = lo; ok && p < hi; p++) {
      if (!is_first_piece(q, q->seq->row[p]) || !chain_at(q, lo, hi, p, c.rows, c.at, &c.riders))
        continue;
      chain_seen *g = ut_grow(found, &cap_found, n_found + 1, sizeof *g);
      ok = g != NULL;
      if (ok) (found = g)[n_found++] = c;
    }
  }
  ok = ok && one_layer(q, found, &n_found, &layers->across);
  tuple_count *seen = NULL;
  size_t n_seen = 0, cap = 0;
  for (size_t i = 0; ok && i < n_found; i++)
    ok = count_tuple(&seen, &n_seen, &cap, found[i].rows, q->n_pieces, &found[i].riders,
                     found[i].by_frames);
  free(found);
  const tuple_count *best = NULL;
  for (size_t i = 0; ok && i < n_seen; i++) {
    if (accept && !accept(seen[i].rows, ctx)) continue;
    if (!best || seen[i].count > best->count) best = &seen[i];
  }
  if (best) {
    memcpy(out, best->rows, q->n_pieces * sizeof *out);
    *riders = best->riders;
    layers->chains = best->count;
    layers->by_frames = best->by_frames;
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
