/* analysis/rank_match.c - the groups, matched collectives, waits and straggler verdicts
 * of one stage (ranks_internal.h; docs/scale-out.md "How the Ranks section decides").
 *
 * A collective kind is a canonical kernel name with its message size (In msg nelems,
 * 0 when unknown) and the launch-context family of its launches. Each rank resolves the group of
 * each kind it ran: the Process Group Ranks its kernels name, else the largest NCCL group of its
 * pg_config of the kinds' Group size, else the largest such group whose ranks end every instance
 * together (the difference of their ends stays within ranks.same_group_spread_us: one clock offset,
 * whatever it is), else every rank of the stage. A kind is matched over a group by
 * occurrence: the k-th instance on every member; a member's wait in it is its duration
 * minus the fastest member's (the floor). Kinds whose instance counts differ across the
 * members are reported, never truncated.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks_internal.h"
#include "util/map.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

/* The stage's parts and what the passes share. */
typedef struct stage_ctx {
  an_rank_part *const *parts;
  size_t n;
  const te_settings *set;
  ut_strmap kinds;    /* kind_key */
  const char **kname; /* per kind: its canonical name (a part's string) */
  const char **kctx;  /* per kind: its launch-context label (a part's string), NULL none */
  uint32_t *kfam;     /* per kind: its family (the key without the message size) */
  ut_strmap families;
  uint8_t *kback; /* per kind: launched in the backward pass */
  size_t cap_kname, cap_kctx, cap_kfam, cap_kback;
  uint32_t **kmap; /* per part, per kind of the part: the stage's kind */
  uint32_t *count; /* [part * n_kinds + kind]: instances */
  ut_strmap memo;  /* co-movement answers: "kind:ranks" -> 0/1 in memo_val */
  uint8_t *memo_val;
  size_t cap_memo;
} stage_ctx;

typedef struct group {
  long *ranks; /* present ranks, ascending (owned by the owner once kept) */
  size_t n_ranks;
  an_rank_group_source source;
  size_t *members; /* part indices, parallel to ranks */
  double *wait;    /* per member */
  size_t *lacks;   /* per member: instances its trace lacks where a peer ran them in the step */
} group;

typedef struct unit {
  uint32_t kind;
  size_t group;
} unit;

typedef struct groups {
  group *v;
  size_t n, cap;
  unit *units;
  size_t n_units, cap_units;
} groups;

/* ------------------------------------------------------------------ kinds */

static const char *kind_name(const stage_ctx *c, uint32_t k) { return c->kname[k]; }

/* The stage's key of a part's kind: kernel name, message size (when `sized`), group size,
 * launch-context family, direction, group args (its ranks as listed by the args). One kernel
 * name does unlike work (review 7 defect 2: an all-to-all of the pooled exchange against one
 * of the input dist by position): instances are matched within their family, and a family
 * whose counts differ across the ranks is refused, not paired with another's. Length
 * written into key. */
static size_t kind_key(const an_rank_part *pt, const an_rank_coll_kind *k, bool sized, char *key,
                       size_t cap) {
  int len = snprintf(key, cap, "%s%c%.0f%c%zu%c%s%c%c", pt->kern[k->kernel].name, '\x1f',
                     sized ? k->nelems : 0, '\x1f', k->group_size, '\x1f',
                     k->context ? k->context : "", '\x1f', k->backward ? 'b' : 'f');
  const an_rank_pg *g = k->pg != AN_RANK_NO_PG ? &pt->pgs[k->pg] : NULL;
  for (size_t i = 0; g && i < g->n_ranks && len > 0 && (size_t)len < cap; i++)
    len += snprintf(key + len, cap - (size_t)len, "%ld,", g->ranks[i]);
  return len < 0 ? 0 : (size_t)len < cap ? (size_t)len : cap - 1;
}

static bool part_kinds(stage_ctx *c, size_t p) {
  const an_rank_part *pt = c->parts[p];
  char key[2048];
  c->kmap[p] = malloc((pt->n_kinds ? pt->n_kinds : 1) * sizeof **c->kmap);
  if (!c->kmap[p]) return false;
  for (size_t i = 0; i < pt->n_kinds; i++) {
    size_t before = c->kinds.n, len = kind_key(pt, &pt->kinds[i], true, key, sizeof key);
    long id = ut_strmap_put(&c->kinds, key, len);
    if (id < 0) return false;
    if (c->kinds.n > before) {
      const char **v = ut_grow(c->kname, &c->cap_kname, c->kinds.n, sizeof *v);
      if (v) c->kname = v;
      const char **x = v ? ut_grow(c->kctx, &c->cap_kctx, c->kinds.n, sizeof *x) : NULL;
      if (x) c->kctx = x;
      uint32_t *f = x ? ut_grow(c->kfam, &c->cap_kfam, c->kinds.n, sizeof *f) : NULL;
      if (f) c->kfam = f;
      uint8_t *b = f ? ut_grow(c->kback, &c->cap_kback, c->kinds.n, 1) : NULL;
      if (!b) return false;
      c->kback = b;
      len = kind_key(pt, &pt->kinds[i], false, key, sizeof key);
      long fam = ut_strmap_put(&c->families, key, len);
      if (fam < 0) return false;
      v[id] = pt->kern[pt->kinds[i].kernel].name;
      x[id] = pt->kinds[i].context;
      f[id] = (uint32_t)fam;
      b[id] = pt->kinds[i].backward;
    }
    c->kmap[p][i] = (uint32_t)id;
  }
  return true;
}

static void count_kinds(stage_ctx *c) {
  memset(c->count, 0, (c->n * c->kinds.n + 1) * sizeof *c->count);
  for (size_t p = 0; p < c->n; p++)
    for (size_t i = 0; i < c->parts[p]->n_colls; i++)
      c->count[p * c->kinds.n + c->kmap[p][c->parts[p]->colls[i].kind]]++;
}

/* Families whose message sizes are the rank's own: run on two ranks or more, but no size of
 * theirs on two ranks (an all-to-all of uneven splits: each rank sends what its batch holds,
 * 419430400 bytes on one and 339738624 on the other). Their kinds are one kind, matched
 * without the size, where keyed by it they would never meet; a family one of whose sizes
 * two ranks share keeps its sizes (DDP buckets: each is another instance). */
static bool merge_rank_sizes(stage_ctx *c) {
  size_t nk = c->kinds.n, nf = c->families.n;
  uint32_t *first = malloc((nf + 1) * sizeof *first); /* per family: its first kind */
  uint8_t *shared = calloc(nf + 1, 1), *ranks_seen = calloc(nf + 1, 1); /* 1: one, 2: more */
  size_t *on = malloc((nf + 1) * sizeof *on);                           /* the one part */
  bool ok = first && shared && ranks_seen && on;
  for (size_t f = 0; ok && f < nf; f++) first[f] = UINT32_MAX;
  for (uint32_t k = 0; ok && k < nk; k++) {
    uint32_t f = c->kfam[k];
    size_t parts = 0;
    if (first[f] == UINT32_MAX) first[f] = k;
    for (size_t p = 0; p < c->n; p++) {
      if (!c->count[p * nk + k]) continue;
      parts++;
      if (!ranks_seen[f])
        ranks_seen[f] = 1, on[f] = p;
      else if (on[f] != p)
        ranks_seen[f] = 2;
    }
    if (parts >= 2) shared[f] = 1;
  }
  bool merged = false;
  for (size_t p = 0; ok && p < c->n; p++)
    for (size_t i = 0; i < c->parts[p]->n_kinds; i++) {
      uint32_t f = c->kfam[c->kmap[p][i]];
      if (ranks_seen[f] == 2 && !shared[f] && c->kmap[p][i] != first[f])
        c->kmap[p][i] = first[f], merged = true;
    }
  if (ok && merged) count_kinds(c);
  free(first);
  free(shared);
  free(ranks_seen);
  free(on);
  return ok;
}

static bool kind_ids(stage_ctx *c) {
  c->kmap = calloc(c->n, sizeof *c->kmap);
  if (!c->kmap) return false;
  for (size_t p = 0; p < c->n; p++)
    if (!part_kinds(c, p)) return false;
  c->count = calloc(c->n * c->kinds.n + 1, sizeof *c->count);
  if (!c->count) return false;
  count_kinds(c);
  return merge_rank_sizes(c);
}

/* The stage kind of collective i of part p. */
static uint32_t kind_at(const stage_ctx *c, size_t p, size_t i) {
  return c->kmap[p][c->parts[p]->colls[i].kind];
}

/* The durations / ends of kind k on part p, in order (out holds count entries). */
static void instances(const stage_ctx *c, size_t p, uint32_t k, double *dur, double *end) {
  size_t m = 0;
  const an_rank_part *pt = c->parts[p];
  for (size_t i = 0; i < pt->n_colls; i++)
    if (kind_at(c, p, i) == k) {
      if (dur) dur[m] = pt->colls[i].dur_us;
      if (end) end[m] = pt->colls[i].end_us;
      m++;
    }
}

/* ------------------------------------------------------------------ groups */

/* Index of the stage's part of rank r, or SIZE_MAX. Parts are by rank. */
static size_t part_of(const stage_ctx *c, long r) {
  size_t lo;
  UT_PARTITION_POINT(lo, 0, c->n, i, c->parts[i]->rank < r);
  return lo < c->n && c->parts[lo]->rank == r ? lo : SIZE_MAX;
}

/* The ranks of pg present in the stage, into out; the count. */
static size_t present(const stage_ctx *c, const an_rank_pg *pg, long *out) {
  size_t m = 0;
  for (size_t i = 0; i < pg->n_ranks; i++)
    if (part_of(c, pg->ranks[i]) != SIZE_MAX) out[m++] = pg->ranks[i];
  return m;
}

/* Whether parts p and q end kind k's instances together: the median absolute deviation
 * of (end_q - end_p) over their common instances is within the setting. */
static bool end_together(const stage_ctx *c, size_t p, size_t q, uint32_t k, double *a, double *b) {
  size_t na = c->count[p * c->kinds.n + k], nb = c->count[q * c->kinds.n + k];
  size_t m = na < nb ? na : nb;
  if (!m) return false;
  instances(c, p, k, NULL, a);
  instances(c, q, k, NULL, b);
  for (size_t i = 0; i < m; i++) a[i] = b[i] - a[i];
  double mid = ut_median_f64(a, m);
  for (size_t i = 0; i < m; i++) a[i] = fabs(a[i] - mid);
  return ut_median_f64(a, m) <= c->set->ranks_same_group_spread_us;
}

/* Whether every present member of ranks ends kind k together with its first; memoised
 * per (kind, ranks). -1 when out of memory. */
static int co_moving(stage_ctx *c, uint32_t k, const long *ranks, size_t n) {
  char key[64 + 24 * 64];
  int len = snprintf(key, sizeof key, "%u", k);
  for (size_t i = 0; i < n && len > 0 && (size_t)len < sizeof key - 24; i++)
    len += snprintf(key + len, sizeof key - (size_t)len, ",%ld", ranks[i]);
  long id = ut_strmap_find(&c->memo, key, (size_t)len);
  if (id >= 0) return c->memo_val[id];
  size_t p0 = part_of(c, ranks[0]), cnt = 0; /* end_together reads all of each member's */
  for (size_t i = 0; i < n; i++) {
    size_t x = c->count[part_of(c, ranks[i]) * c->kinds.n + k];
    cnt = x > cnt ? x : cnt;
  }
  double *a = malloc((cnt + 1) * sizeof *a), *b = malloc((cnt + 1) * sizeof *b);
  bool together = a && b;
  for (size_t i = 1; i < n && together; i++)
    together = end_together(c, p0, part_of(c, ranks[i]), k, a, b);
  int ok = a && b;
  free(a);
  free(b);
  id = ok ? ut_strmap_put(&c->memo, key, (size_t)len) : -1;
  uint8_t *v = id >= 0 ? ut_grow(c->memo_val, &c->cap_memo, (size_t)id + 1, 1) : NULL;
  if (!v) return -1;
  c->memo_val = v;
  v[id] = together;
  return together;
}

/* The pg_config group (not named by args) of p with most ranks, among those of size
 * `size` when size > 0, else the largest whose present ranks co-move for kind k. Writes
 * its present ranks; their count (0: none). -1 when out of memory. */
static long config_group(stage_ctx *c, size_t p, uint32_t k, size_t size, long *out) {
  const an_rank_part *pt = c->parts[p];
  const an_rank_pg *best = NULL;
  for (size_t i = 0; i < pt->n_pgs; i++) {
    const an_rank_pg *g = &pt->pgs[i];
    if (g->from_args || (size && g->n_ranks != size) || (best && g->n_ranks <= best->n_ranks))
      continue;
    if (!size) {
      size_t m = present(c, g, out);
      int cm = m >= 2 ? co_moving(c, k, out, m) : 0;
      if (cm < 0) return -1;
      if (!cm) continue;
    }
    best = g;
  }
  return best ? (long)present(c, best, out) : 0;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x < y ? -1 : x > y;
}

/* Whether sorted ranks hold r and are consecutive (TP is the innermost parallel
 * dimension of every framework: its groups are runs of ranks; DP and PP groups stride). */
static bool holds_run(const an_rank_pg *g, long r) {
  return g->n_ranks && g->ranks[g->n_ranks - 1] - g->ranks[0] == (long)g->n_ranks - 1 &&
         r >= g->ranks[0] && r <= g->ranks[g->n_ranks - 1];
}

/* Part p's TP group in pg_config: the smallest run of ranks holding it that is smaller
 * than the largest group holding it (the world; an_rank_tp_size's rule). Writes its
 * present ranks when they end kind k's instances together; their count (0: none). -1
 * when out of memory. */
static long tp_group(stage_ctx *c, size_t p, uint32_t k, long *out) {
  const an_rank_part *pt = c->parts[p];
  const an_rank_pg *tp = NULL;
  size_t world = 0;
  for (size_t i = 0; i < pt->n_pgs; i++) {
    const an_rank_pg *g = &pt->pgs[i];
    if (g->from_args || !bsearch(&pt->rank, g->ranks, g->n_ranks, sizeof *g->ranks, cmp_long))
      continue;
    if (g->n_ranks > world) world = g->n_ranks;
    if (holds_run(g, pt->rank) && (!tp || g->n_ranks < tp->n_ranks)) tp = g;
  }
  if (!tp || tp->n_ranks >= world) return 0;
  size_t m = present(c, tp, out);
  int cm = m >= 2 ? co_moving(c, k, out, m) : 0;
  return cm < 0 ? -1 : cm ? (long)m : 0;
}

/* The group of kind k on part p: ranks (present, ascending) into out, the count (< 2:
 * none to match) and the source. Without group args the TP group comes before larger
 * groups: DP replicas can end together for a while (lockstep schedulers, one step), a
 * collective without args is a TP one far more often (custom all-reduce, graph-replayed
 * NCCL). -1 when out of memory. */
static long resolve(stage_ctx *c, size_t p, uint32_t k, long *out, an_rank_group_source *src) {
  const an_rank_part *pt = c->parts[p];
  size_t size = 0;
  for (size_t i = 0; i < pt->n_kinds; i++) {
    const an_rank_coll_kind *x = &pt->kinds[i];
    if (c->kmap[p][i] != k) continue;
    if (x->pg != AN_RANK_NO_PG) {
      *src = AN_GROUP_PG_ARGS;
      return (long)present(c, &pt->pgs[x->pg], out);
    }
    if (x->group_size) size = x->group_size;
  }
  long m = size ? config_group(c, p, k, size, out) : 0;
  *src = AN_GROUP_SIZE_ARG;
  if (m == 0) m = tp_group(c, p, k, out), *src = AN_GROUP_TP;
  if (m == 0) m = config_group(c, p, k, 0, out), *src = AN_GROUP_CO_MOVING;
  if (m != 0) return m;
  bool none = true;
  for (size_t i = 0; i < pt->n_pgs && none; i++) none = pt->pgs[i].from_args;
  if (!none) return 0; /* pg_config names groups, none of which runs it with p */
  for (size_t i = 0; i < c->n; i++) out[i] = c->parts[i]->rank;
  *src = AN_GROUP_ALL_RANKS;
  return (long)c->n;
}

/* Index of the group with these ranks, added (with its members) when new; SIZE_MAX when
 * out of memory. */
static size_t group_index(const stage_ctx *c, groups *gs, const long *ranks, size_t m,
                          an_rank_group_source src) {
  for (size_t g = 0; g < gs->n; g++)
    if (gs->v[g].n_ranks == m && !memcmp(gs->v[g].ranks, ranks, m * sizeof *ranks)) {
      if (src < gs->v[g].source) gs->v[g].source = src;
      return g;
    }
  group *v = ut_grow(gs->v, &gs->cap, gs->n + 1, sizeof *v);
  if (!v) return SIZE_MAX;
  gs->v = v;
  group *g = &v[gs->n];
  *g = (group){malloc(m * sizeof *g->ranks),
               m,
               src,
               malloc(m * sizeof *g->members),
               calloc(m, sizeof *g->wait),
               calloc(m, sizeof *g->lacks)};
  if (!g->ranks || !g->members || !g->wait || !g->lacks) {
    free(g->ranks), free(g->members), free(g->wait), free(g->lacks);
    return SIZE_MAX;
  }
  memcpy(g->ranks, ranks, m * sizeof *ranks);
  for (size_t i = 0; i < m; i++) g->members[i] = part_of(c, ranks[i]);
  return gs->n++;
}

static bool add_unit(groups *gs, uint32_t k, size_t g) {
  for (size_t i = 0; i < gs->n_units; i++)
    if (gs->units[i].kind == k && gs->units[i].group == g) return true;
  unit *v = ut_grow(gs->units, &gs->cap_units, gs->n_units + 1, sizeof *v);
  if (!v) return false;
  gs->units = v;
  v[gs->n_units++] = (unit){k, g};
  return true;
}

/* Every (kind, group) a part of the stage resolves. */
static bool resolve_all(stage_ctx *c, groups *gs) {
  long *ranks = malloc((c->n + 1) * sizeof *ranks);
  bool ok = ranks != NULL;
  for (size_t p = 0; p < c->n && ok; p++)
    for (uint32_t k = 0; k < c->kinds.n && ok; k++) {
      if (!c->count[p * c->kinds.n + k]) continue;
      an_rank_group_source src = AN_GROUP_ALL_RANKS;
      long m = resolve(c, p, k, ranks, &src);
      if (m < 0) ok = false;
      if (m < 2) continue;
      qsort(ranks, (size_t)m, sizeof *ranks, cmp_long);
      size_t g = group_index(c, gs, ranks, (size_t)m, src);
      ok = g != SIZE_MAX && add_unit(gs, k, g);
    }
  free(ranks);
  return ok;
}

/* ------------------------------------------------------------------ matching */

/* The matched instances of a unit: per member, the index of its collective in each (the
 * same instance on every member), cnt of them. */
typedef struct match {
  size_t cnt;
  size_t **idx; /* [member][instance] */
  size_t n_members;
} match;

static void match_free(match *m) {
  for (size_t i = 0; m->idx && i < m->n_members; i++) free(m->idx[i]);
  free(m->idx);
  *m = (match){0};
}

static double dur_of(const stage_ctx *c, const group *g, const match *m, size_t r, size_t i) {
  return c->parts[g->members[r]]->colls[m->idx[r][i]].dur_us;
}

/* Whether every member counts the same steps (one marker per step on every rank): then the
 * s-th step of one is the s-th of the others, and instances are matched within their step. */
static bool steps_line_up(const stage_ctx *c, const group *g) {
  size_t n0 = c->parts[g->members[0]]->n_steps;
  for (size_t r = 1; r < g->n_ranks; r++)
    if (c->parts[g->members[r]]->n_steps != n0) return false;
  return n0 > 0;
}

/* The bucket of collective i of part p: its step, or n_steps outside the counted steps. */
static size_t bucket_of(const an_rank_part *p, size_t i) {
  int32_t st = p->colls[i].step;
  return st >= 0 && (size_t)st < p->n_steps ? (size_t)st : p->n_steps;
}

/* Member r's instances of kind k ordered by bucket (start order within one): into sorted,
 * with start[b]..start[b + 1] those of bucket b (start holds nb + 3 entries). */
static void by_bucket(const stage_ctx *c, size_t pi, uint32_t k, size_t nb, size_t *start,
                      size_t *sorted) {
  const an_rank_part *p = c->parts[pi];
  memset(start, 0, (nb + 3) * sizeof *start);
  for (size_t i = 0; i < p->n_colls; i++)
    if (kind_at(c, pi, i) == k) start[bucket_of(p, i) + 2]++;
  for (size_t b = 3; b < nb + 3; b++) start[b] += start[b - 1];
  for (size_t i = 0; i < p->n_colls; i++)
    if (kind_at(c, pi, i) == k) sorted[start[bucket_of(p, i) + 1]++] = i;
}

/* An instance member r lacks in bucket b where member q ran the longest of its own there
 * (dur). */
static void note_dropped(const stage_ctx *c, const group *g, const unit *u, size_t r, size_t q,
                         size_t b, size_t lacking, double dur, an_rank_group *out, size_t *lacks) {
  const an_rank_part *p = c->parts[g->members[r]];
  out->n_dropped += lacking;
  if (lacks) lacks[r] += lacking;
  out->dropped_sampled = out->dropped_sampled || p->filtered;
  if (out->dropped_kernel && dur <= out->dropped_us) return;
  out->dropped_kernel = kind_name(c, u->kind);
  out->dropped_context = c->kctx[u->kind];
  out->dropped_backward = c->kback[u->kind];
  out->dropped_step = b < p->n_steps ? b + 1 : 0;
  out->dropped_rank = g->ranks[r];
  out->dropped_peer = g->ranks[q];
  out->dropped_us = dur;
}

/* Bucket b of unit u: matched by occurrence when every member has as many instances in it
 * (appended to m), else its instances are unmatched and each member with fewer lacks the
 * difference (noted in out). */
static void match_bucket(const stage_ctx *c, const group *g, const unit *u, size_t b, size_t nb,
                         size_t *const *start, size_t *const *sorted, match *m, an_rank_group *out,
                         size_t *lacks) {
  size_t lo = SIZE_MAX, hi = 0, most = 0;
  for (size_t r = 0; r < g->n_ranks; r++) {
    size_t x = start[r][b + 1] - start[r][b];
    lo = x < lo ? x : lo;
    if (x > hi) hi = x, most = r;
  }
  if (lo == hi) {
    for (size_t r = 0; r < g->n_ranks; r++)
      memcpy(&m->idx[r][m->cnt], &sorted[r][start[r][b]], lo * sizeof **m->idx);
    m->cnt += lo;
    return;
  }
  out->n_unmatched += hi;
  const an_rank_part *q = c->parts[g->members[most]];
  double longest = 0;
  for (size_t j = start[most][b]; j < start[most][b + 1]; j++)
    if (q->colls[sorted[most][j]].dur_us > longest) longest = q->colls[sorted[most][j]].dur_us;
  for (size_t r = 0; r < g->n_ranks; r++) {
    size_t x = start[r][b + 1] - start[r][b];
    if (x < hi && b < nb) note_dropped(c, g, u, r, most, b, hi - x, longest, out, lacks);
  }
  if (b == nb && !out->n_count_mismatch++) /* outside the steps: a capture edge, not a drop */
    out->mismatch_kernel = kind_name(c, u->kind), out->mismatch_min = lo, out->mismatch_max = hi;
}

/* The instances of unit u matched across its group's members. Where the members' steps
 * line up, an instance is matched within its step (the k-th of the step on every member),
 * so one a member's trace lacks (a sampled trace dropped it) is no one's partner, and the
 * instances of steps whose counts differ are noted (in out, and per member in lacks unless
 * NULL); else by occurrence over the stage, the kind refused when its counts differ
 * (mismatch noted in out). false when out of memory. */
static bool unit_match(const stage_ctx *c, const group *g, const unit *u, match *m,
                       an_rank_group *out, size_t *lacks) {
  size_t lo = SIZE_MAX, hi = 0;
  for (size_t i = 0; i < g->n_ranks; i++) {
    size_t x = c->count[g->members[i] * c->kinds.n + u->kind];
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  bool by_step = steps_line_up(c, g);
  *m = (match){.n_members = g->n_ranks, .idx = calloc(g->n_ranks, sizeof *m->idx)};
  bool ok = m->idx != NULL;
  for (size_t r = 0; ok && r < g->n_ranks; r++)
    ok = (m->idx[r] = malloc((hi + 1) * sizeof **m->idx));
  if (!ok) return match_free(m), false;
  if (!by_step) {
    if (lo != hi) {
      if (!out->n_count_mismatch++)
        out->mismatch_kernel = kind_name(c, u->kind), out->mismatch_min = lo,
        out->mismatch_max = hi;
      out->n_unmatched += hi;
      return true;
    }
    for (size_t r = 0; r < g->n_ranks; r++) {
      size_t n = 0, pi = g->members[r];
      for (size_t i = 0; i < c->parts[pi]->n_colls; i++)
        if (kind_at(c, pi, i) == u->kind) m->idx[r][n++] = i;
    }
    m->cnt = lo;
    return true;
  }
  size_t nb = c->parts[g->members[0]]->n_steps; /* + 1: outside the steps */
  size_t **start = calloc(g->n_ranks, sizeof *start), **sorted = calloc(g->n_ranks, sizeof *sorted);
  ok = start && sorted;
  for (size_t r = 0; ok && r < g->n_ranks; r++) {
    start[r] = malloc((nb + 3) * sizeof **start);
    sorted[r] = malloc((hi + 1) * sizeof **sorted);
    ok = start[r] && sorted[r];
    if (ok) by_bucket(c, g->members[r], u->kind, nb, start[r], sorted[r]);
  }
  for (size_t b = 0; ok && b <= nb; b++) match_bucket(c, g, u, b, nb, start, sorted, m, out, lacks);
  for (size_t r = 0; r < g->n_ranks; r++) {
    if (start) free(start[r]);
    if (sorted) free(sorted[r]);
  }
  free(start);
  free(sorted);
  if (!ok) match_free(m);
  return ok;
}

/* The fastest member of instance i (ties: the lowest rank). */
static size_t fastest(const stage_ctx *c, const group *g, const match *m, size_t i) {
  size_t f = 0;
  for (size_t r = 1; r < g->n_ranks; r++)
    if (dur_of(c, g, m, r, i) < dur_of(c, g, m, f, i)) f = r;
  return f;
}

/* Pass 1: every member's wait over the group's matched kinds. */
static bool match_waits(const stage_ctx *c, groups *gs, an_rank_group *out) {
  for (size_t u = 0; u < gs->n_units; u++) {
    group *g = &gs->v[gs->units[u].group];
    match m;
    if (!unit_match(c, g, &gs->units[u], &m, &out[gs->units[u].group], g->lacks)) return false;
    for (size_t i = 0; i < m.cnt; i++) {
      double floor = dur_of(c, g, &m, fastest(c, g, &m, i), i);
      for (size_t r = 0; r < g->n_ranks; r++) g->wait[r] += dur_of(c, g, &m, r, i) - floor;
    }
    out[gs->units[u].group].n_matched += m.cnt;
    match_free(&m);
  }
  return true;
}

/* ------------------------------------------------------------------ evidence */

/* Where the others' wait goes: per (kind, position in the step) and per step of the
 * group's first member; the share spent in instances the straggler s was fastest in. */
typedef struct evidence {
  const an_rank_part *first; /* the group's first member */
  uint32_t *pos;             /* per collective of first: its ordinal in its step, 0 outside */
  double *by_slot;           /* [kind * (max_pos + 1) + position] */
  size_t max_pos;
  double *by_step; /* [step] of the first member */
  size_t n_steps;
  double lost, lost_in_steps, last_arrival;
  an_rank_wait_context *by_context; /* per launch-context label of first's kinds */
  size_t n_contexts, cap_contexts;
  bool labelled; /* some instance has a labelled family */
} evidence;

/* Adds the loss of an instance of first's kind `kind` to its launch-context family. */
static bool add_context(evidence *ev, uint32_t kind, double lost, bool in_step) {
  const char *ctx = ev->first->kinds[kind].context;
  size_t i = 0;
  while (i < ev->n_contexts && ev->by_context[i].context != ctx) i++; /* first's copies */
  if (i == ev->n_contexts) {
    an_rank_wait_context *v =
        ut_grow(ev->by_context, &ev->cap_contexts, ev->n_contexts + 1, sizeof *v);
    if (!v) return false;
    ev->by_context = v;
    v[ev->n_contexts++] = (an_rank_wait_context){ctx, 0, 0};
  }
  ev->labelled = ev->labelled || ctx;
  ev->by_context[i].lost_us += lost;
  if (in_step) ev->by_context[i].lost_per_step_us += lost; /* a sum until publish divides */
  return true;
}

/* Matched instance i of unit u (m), first's collective ci. false when out of memory. */
static bool add_instance(const stage_ctx *c, const group *g, const unit *u, const match *m,
                         size_t i, size_t s, evidence *ev) {
  size_t f = fastest(c, g, m, i), ci = m->idx[0][i];
  double floor = dur_of(c, g, m, f, i), lost = 0;
  for (size_t r = 0; r < g->n_ranks; r++)
    if (r != s) lost += dur_of(c, g, m, r, i) - floor;
  ev->lost += lost;
  if (f == s) ev->last_arrival += lost;
  ev->by_slot[u->kind * (ev->max_pos + 1) + ev->pos[ci]] += lost;
  int32_t step = ev->first->colls[ci].step;
  bool in_step = step >= 0 && (size_t)step < ev->n_steps;
  if (in_step) {
    ev->by_step[step] += lost;
    ev->lost_in_steps += lost;
  }
  return add_context(ev, ev->first->colls[ci].kind, lost, in_step);
}

/* Pass 2 over the units of group gi, with its straggler s (member index). */
static bool collect(const stage_ctx *c, const groups *gs, size_t gi, size_t s, evidence *ev) {
  const group *g = &gs->v[gi];
  an_rank_group scratch = {0};
  for (size_t u = 0; u < gs->n_units; u++) {
    if (gs->units[u].group != gi) continue;
    match m;
    if (!unit_match(c, g, &gs->units[u], &m, &scratch, NULL)) return false;
    bool ok = true;
    for (size_t i = 0; i < m.cnt && ok; i++) ok = add_instance(c, g, &gs->units[u], &m, i, s, ev);
    match_free(&m);
    if (!ok) return false;
  }
  return true;
}

/* The first member's collectives' positions in their steps (counted in start order, as
 * the rank was read) and the evidence's sums. */
static bool evidence_init(const stage_ctx *c, const group *g, evidence *ev) {
  const an_rank_part *p = c->parts[g->members[0]];
  *ev = (evidence){.first = p, .n_steps = p->n_steps};
  ev->pos = malloc((p->n_colls + 1) * sizeof *ev->pos);
  uint32_t *seen = calloc(p->n_steps + 1, sizeof *seen);
  for (size_t i = 0; ev->pos && seen && i < p->n_colls; i++) {
    int32_t st = p->colls[i].step;
    ev->pos[i] = st >= 0 && (size_t)st < p->n_steps ? ++seen[st] : 0;
    if (ev->pos[i] > ev->max_pos) ev->max_pos = ev->pos[i];
  }
  free(seen);
  ev->by_slot = calloc(c->kinds.n * (ev->max_pos + 1) + 1, sizeof *ev->by_slot);
  ev->by_step = calloc(ev->n_steps + 1, sizeof *ev->by_step);
  return ev->pos && ev->by_slot && ev->by_step;
}

static void evidence_free(evidence *ev) {
  free(ev->pos);
  free(ev->by_slot);
  free(ev->by_step);
  free(ev->by_context);
}

static int cmp_context(const void *pa, const void *pb) {
  const an_rank_wait_context *a = pa, *b = pb;
  if (a->lost_us != b->lost_us) return a->lost_us > b->lost_us ? -1 : 1;
  return !a->context ? 1 : !b->context ? -1 : strcmp(a->context, b->context);
}

/* The loss by launch-context family, most first, per step over the counted steps; kept
 * by the owner (labels in its strings). Nothing when no family is labelled: one "other"
 * row would only repeat the total. */
static bool evidence_contexts(an_rank_owner *o, evidence *ev, an_rank_group *out) {
  if (!ev->labelled || !ev->n_contexts) return true;
  for (size_t i = 0; i < ev->n_contexts; i++) {
    an_rank_wait_context *x = &ev->by_context[i];
    x->lost_per_step_us = ev->n_steps ? x->lost_per_step_us / (double)ev->n_steps : 0;
    if (x->context && !(x->context = an_strtab_cstr(o->strings, x->context))) return false;
  }
  qsort(ev->by_context, ev->n_contexts, sizeof *ev->by_context, cmp_context);
  if (!an_rank_own(o, ev->by_context)) return ev->by_context = NULL, false;
  out->wait_contexts = ev->by_context;
  out->n_wait_contexts = ev->n_contexts;
  ev->by_context = NULL; /* the owner's now */
  return true;
}

/* The slot and step that absorb the most; into out. */
static void evidence_top(const stage_ctx *c, const evidence *ev, an_rank_group *out) {
  size_t best = SIZE_MAX, slots = c->kinds.n * (ev->max_pos + 1);
  for (size_t i = 0; i < slots; i++)
    if (ev->by_slot[i] > 0 && (best == SIZE_MAX || ev->by_slot[i] > ev->by_slot[best])) best = i;
  if (best != SIZE_MAX) {
    out->wait_kernel = kind_name(c, (uint32_t)(best / (ev->max_pos + 1)));
    out->wait_context = c->kctx[best / (ev->max_pos + 1)];
    out->wait_position = best % (ev->max_pos + 1);
    out->wait_kernel_share_pct = ev->lost > 0 ? ev->by_slot[best] / ev->lost * 100 : 0;
  }
  for (size_t s = 0; s < ev->n_steps; s++)
    if (ev->by_step[s] > 0 && (!out->worst_step || ev->by_step[s] > out->worst_step_lost_us)) {
      out->worst_step = s + 1;
      out->worst_step_lost_us = ev->by_step[s];
    }
}

/* ------------------------------------------------------------------ cause */

/* Mean over the steps of (the straggler's compute - the others' median): how much
 * longer it computes. */
static double extra_compute(const stage_ctx *c, const group *g, size_t s, size_t n_steps,
                            double *scratch) {
  double sum = 0;
  for (size_t k = 0; k < n_steps; k++) {
    size_t m = 0;
    for (size_t r = 0; r < g->n_ranks; r++)
      if (r != s) scratch[m++] = c->parts[g->members[r]]->steps[k].compute_us;
    sum += c->parts[g->members[s]]->steps[k].compute_us - ut_median_f64(scratch, m);
  }
  return n_steps ? sum / (double)n_steps : 0;
}

/* Mean over the steps with a collective of (the others' median - the straggler's) time
 * from the step's CPU start to the end of its first collective: how much later its step
 * starts on the host than the others' (that end is one instant on every rank). */
static double host_late(const stage_ctx *c, const group *g, size_t s, size_t n_steps,
                        double *scratch) {
  double sum = 0;
  size_t used = 0;
  for (size_t k = 0; k < n_steps; k++) {
    double mine = c->parts[g->members[s]]->steps[k].sync_us;
    size_t m = 0;
    for (size_t r = 0; r < g->n_ranks; r++) {
      double x = c->parts[g->members[r]]->steps[k].sync_us;
      if (r != s && x >= 0) scratch[m++] = x;
    }
    if (mine < 0 || !m) continue;
    sum += ut_median_f64(scratch, m) - mine;
    used++;
  }
  return used ? sum / (double)used : 0;
}

static bool cause_of(const stage_ctx *c, const group *g, size_t s, an_rank_group *out) {
  size_t n_steps = SIZE_MAX;
  for (size_t r = 0; r < g->n_ranks; r++)
    if (c->parts[g->members[r]]->n_steps < n_steps) n_steps = c->parts[g->members[r]]->n_steps;
  out->delay_per_step_us = g->n_ranks > 1 ? out->lost_per_step_us / (double)(g->n_ranks - 1) : 0;
  if (!n_steps || n_steps == SIZE_MAX) return true;
  /* a sampled trace that dropped collectives its peers ran dropped other kernels as well:
   * its compute and the start of its first collective are not what its GPU did, so they are
   * not compared and name no cause (the gap a dropped instance leaves is no one's delay) */
  if (out->n_dropped && out->dropped_sampled) return true;
  double *scratch = malloc(g->n_ranks * sizeof *scratch);
  if (!scratch) return false;
  out->extra_compute_per_step_us = extra_compute(c, g, s, n_steps, scratch);
  out->host_late_per_step_us = host_late(c, g, s, n_steps, scratch);
  free(scratch);
  double bar = out->delay_per_step_us * c->set->ranks_cause_min_share_pct / 100;
  double gpu = out->extra_compute_per_step_us, host = out->host_late_per_step_us;
  if (gpu >= host && gpu > 0 && gpu >= bar) out->cause = AN_CAUSE_GPU;
  if (host > gpu && host > 0 && host >= bar) out->cause = AN_CAUSE_HOST;
  return true;
}

/* ------------------------------------------------------------------ verdicts */

static double gpu_time(const stage_ctx *c, const group *g) {
  double t = 0;
  for (size_t r = 0; r < g->n_ranks; r++)
    t += c->parts[g->members[r]]->busy_us + c->parts[g->members[r]]->idle_us;
  return t;
}

static an_rank_verdict verdict_of(const stage_ctx *c, const an_rank_group *out) {
  if (out->n_ranks < 2 || !out->n_matched)
    return out->n_count_mismatch ? AN_RANK_COUNTS_DIFFER : AN_RANK_NO_COLLECTIVES;
  if (out->lost_share_pct < c->set->ranks_straggler_min_share_pct) return AN_RANK_BELOW_BAR;
  if (out->last_arrival_pct < c->set->ranks_straggler_min_consistency_pct) return AN_RANK_SPREAD;
  return AN_RANK_STRAGGLER;
}

/* The straggler, its loss, evidence, cause and verdict of group gi. */
static bool judge(an_rank_owner *o, const stage_ctx *c, const groups *gs, size_t gi,
                  an_rank_group *out) {
  const group *g = &gs->v[gi];
  size_t s = 0;
  for (size_t r = 1; r < g->n_ranks; r++)
    if (g->wait[r] < g->wait[s]) s = r; /* ties: the lowest rank */
  out->straggler = g->ranks[s];
  evidence ev;
  bool ok = evidence_init(c, g, &ev) && collect(c, gs, gi, s, &ev);
  if (ok) {
    double gpu = gpu_time(c, g);
    out->lost_us = ev.lost;
    out->lost_share_pct = gpu > 0 ? ev.lost / gpu * 100 : 0;
    out->last_arrival_pct = ev.lost > 0 ? ev.last_arrival / ev.lost * 100 : 0;
    out->n_steps = c->parts[g->members[0]]->n_steps;
    out->lost_per_step_us = out->n_steps ? ev.lost_in_steps / (double)out->n_steps : 0;
    double per_step_gpu = out->n_steps ? gpu / (double)out->n_steps : 0;
    out->lost_step_share_pct = per_step_gpu > 0 ? out->lost_per_step_us / per_step_gpu * 100 : 0;
    evidence_top(c, &ev, out);
    ok = cause_of(c, g, s, out) && evidence_contexts(o, &ev, out);
  }
  evidence_free(&ev);
  out->verdict = verdict_of(c, out);
  out->has_straggler = out->verdict == AN_RANK_STRAGGLER;
  if (!out->has_straggler) out->cause = AN_CAUSE_UNKNOWN;
  return ok;
}

/* ------------------------------------------------------------------ rows */

/* Ranks in no group share one (nothing to compare for them). */
static bool leftover_group(const stage_ctx *c, groups *gs) {
  long *ranks = malloc((c->n + 1) * sizeof *ranks);
  if (!ranks) return false;
  size_t m = 0;
  for (size_t p = 0; p < c->n; p++) {
    bool in = false;
    for (size_t g = 0; g < gs->n && !in; g++)
      in = bsearch(&c->parts[p]->rank, gs->v[g].ranks, gs->v[g].n_ranks, sizeof *ranks, cmp_long);
    if (!in) ranks[m++] = c->parts[p]->rank;
  }
  bool ok = !m || group_index(c, gs, ranks, m, AN_GROUP_ALL_RANKS) != SIZE_MAX;
  free(ranks);
  return ok;
}

static void fill_rows(const stage_ctx *c, const groups *gs, const an_rank_group *out,
                      an_rank_row *rows) {
  for (size_t g = 0; g < gs->n; g++)
    for (size_t r = 0; r < gs->v[g].n_ranks; r++) {
      an_rank_row *row = &rows[gs->v[g].members[r]];
      row->wait_us += gs->v[g].wait[r];
      row->lacks += gs->v[g].lacks[r];
      bool better = row->group == SIZE_MAX || out[g].n_matched > out[row->group].n_matched;
      if (better) row->group = g;
      if (out[g].has_straggler && out[g].straggler == row->rank) row->straggler = true;
    }
  for (size_t i = 0; i < c->n; i++)
    rows[i].wait_share_pct = rows[i].busy_us > 0 ? rows[i].wait_us / rows[i].busy_us * 100 : 0;
}

/* Whether sorted ranks hold r. */
static bool holds(const long *ranks, size_t n, long r) {
  return bsearch(&r, ranks, n, sizeof *ranks, cmp_long) != NULL;
}

/* The ranks of g's process group that the stage lacks (an_rank_group.absent): the
 * smallest group of a member (args or pg_config) holding every rank of g, when its other
 * ranks are all absent from the stage. false when out of memory. */
static bool absent_ranks(an_rank_owner *o, const stage_ctx *c, const group *g, an_rank_group *out) {
  if (g->source == AN_GROUP_ALL_RANKS) return true;
  const an_rank_pg *best = NULL;
  for (size_t r = 0; r < g->n_ranks; r++) {
    const an_rank_part *pt = c->parts[g->members[r]];
    for (size_t i = 0; i < pt->n_pgs; i++) {
      const an_rank_pg *pg = &pt->pgs[i];
      if (pg->n_ranks <= g->n_ranks || (best && pg->n_ranks >= best->n_ranks)) continue;
      bool all = true;
      for (size_t k = 0; k < g->n_ranks && all; k++)
        all = holds(pg->ranks, pg->n_ranks, g->ranks[k]);
      if (all) best = pg;
    }
  }
  if (!best) return true;
  for (size_t i = 0; i < best->n_ranks; i++) /* another rank of it runs with other groups */
    if (!holds(g->ranks, g->n_ranks, best->ranks[i]) && part_of(c, best->ranks[i]) != SIZE_MAX)
      return true;
  long *v = malloc((best->n_ranks - g->n_ranks) * sizeof *v);
  if (!an_rank_own(o, v)) return false;
  for (size_t i = 0; i < best->n_ranks; i++)
    if (!holds(g->ranks, g->n_ranks, best->ranks[i])) v[out->n_absent++] = best->ranks[i];
  out->absent = v;
  return true;
}

static bool publish(an_rank_owner *o, const stage_ctx *c, groups *gs, an_rank_row *rows,
                    an_rank_group **out_groups, size_t *n_out) {
  an_rank_group *out = calloc(gs->n + 1, sizeof *out);
  if (!an_rank_own(o, out)) return false;
  bool ok = true;
  for (size_t g = 0; g < gs->n && ok; g++)
    out[g] = (an_rank_group){
        .n_ranks = gs->v[g].n_ranks, .ranks = gs->v[g].ranks, .source = gs->v[g].source};
  if (ok) ok = match_waits(c, gs, out);
  for (size_t g = 0; g < gs->n && ok; g++) ok = judge(o, c, gs, g, &out[g]);
  for (size_t g = 0; g < gs->n && ok; g++) ok = absent_ranks(o, c, &gs->v[g], &out[g]);
  for (size_t g = 0; g < gs->n && ok; g++) { /* the names outlive the stage's maps */
    if (out[g].wait_kernel)
      ok = (out[g].wait_kernel = an_strtab_cstr(o->strings, out[g].wait_kernel));
    if (ok && out[g].wait_context)
      ok = (out[g].wait_context = an_strtab_cstr(o->strings, out[g].wait_context));
    if (ok && out[g].mismatch_kernel)
      ok = (out[g].mismatch_kernel = an_strtab_cstr(o->strings, out[g].mismatch_kernel));
    if (ok && out[g].dropped_kernel)
      ok = (out[g].dropped_kernel = an_strtab_cstr(o->strings, out[g].dropped_kernel));
    if (ok && out[g].dropped_context)
      ok = (out[g].dropped_context = an_strtab_cstr(o->strings, out[g].dropped_context));
  }
  for (size_t g = 0; g < gs->n && ok; g++) { /* the ranks arrays go to the owner */
    ok = an_rank_own(o, gs->v[g].ranks);
    gs->v[g].ranks = NULL;
  }
  for (size_t i = 0; i < c->n; i++) rows[i].group = SIZE_MAX;
  if (ok) fill_rows(c, gs, out, rows);
  *out_groups = out;
  *n_out = gs->n;
  return ok;
}

static void ctx_free(stage_ctx *c, groups *gs) {
  for (size_t p = 0; c->kmap && p < c->n; p++) free(c->kmap[p]);
  free(c->kmap);
  free(c->count);
  ut_strmap_free(&c->kinds);
  free(c->kname);
  free(c->kctx);
  free(c->kfam);
  free(c->kback);
  ut_strmap_free(&c->families);
  ut_strmap_free(&c->memo);
  free(c->memo_val);
  for (size_t g = 0; g < gs->n; g++) {
    free(gs->v[g].ranks);
    free(gs->v[g].members);
    free(gs->v[g].wait);
    free(gs->v[g].lacks);
  }
  free(gs->v);
  free(gs->units);
}

bool an_rank_match_stage(an_rank_owner *o, an_rank_part *const *parts, size_t n,
                         const te_rules *rules, an_rank_row *rows, an_rank_group **out_groups,
                         size_t *n_groups) {
  stage_ctx c = {.parts = parts, .n = n, .set = te_rules_settings(rules)};
  groups gs = {0};
  *out_groups = NULL;
  *n_groups = 0;
  bool ok = kind_ids(&c) && resolve_all(&c, &gs) && leftover_group(&c, &gs) &&
            publish(o, &c, &gs, rows, out_groups, n_groups);
  ctx_free(&c, &gs);
  return ok;
}
