/*
 * overlap_scope.c - the Python scope of an overlap row (docs/reference.md §6.5), in one file:
 * the mapping trace's frame index (a kernel event's best scope), the votes of sampled
 * events, of the kernel maps and of the formal payload that decide a kernel name's scope
 * (ov_scope_lookup), and the scope text (display, parts, families).
 *
 * A scope is the best frame of the chain of *meaningful* Python frames active when the
 * kernel was issued: at the start of its CPU op (External id), else at its launch
 * (correlation), else at the GPU timestamp on any thread. Frames of one thread nest, so
 * each frame stores its enclosing frame: the frames active at time t are the last frame
 * started at or before t and its ancestors that have not ended yet. A query is a binary
 * search plus a walk of the nesting depth, instead of a scan of the thread's frames.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/id_index.h"
#include "analysis/kmap_internal.h"
#include "analysis/overlap.h"
#include "analysis/overlap_internal.h"
#include "util/arena.h"
#include "util/map.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

/* Nesting deeper than this is not a Python stack (a broken trace); the walk stops. */
#define OV_MAX_CHAIN 256
#define OV_SCOPE_CAP 1024
static bool ov_kmap_has_location(const an_kmap_entry *en) {
  return en && en->best_location && *en->best_location && an_location_resolved(en->best_location);
}

/* ---------------------------------------------------------------- indexes */

_Static_assert(TR_MAX_EVENTS <= INT32_MAX, "frame positions must fit ov_source.parent");

struct ov_source {
  const tr_trace *t;
  const te_rules *r;
  const te_matcher *ignore, *not_meaningful, *meaningful, *fallback;
  const tr_pyframe *py;
  size_t n_py;
  ut_strmap threads; /* "pid:tid" -> dense index */
  /* Frames bucketed by thread, each bucket by (ts, -end, file order): the frame at
   * position i is py[ev[i]], or py[i] when ev is NULL (the reader saw every thread's
   * frames in order and each thread in one run, so buckets are file order). 4 or 8 bytes
   * a frame: start and end are read from the frame itself. */
  uint32_t *ev;
  int32_t *parent;    /* position of the enclosing frame, -1 at the top */
  size_t *thread_off; /* frames of thread i: [thread_off[i], thread_off[i + 1]) */
  /* the view's id indexes, or own_ids when the caller lent none */
  const an_id_index *op_by_ext, *launch_by_corr;
  an_trace_ids own_ids;
  /* Scratch for one chain. */
  const tr_pyframe *chain[OV_MAX_CHAIN];
  /* What ov_best_scope asks of each frame name, worked out once per name: a chain holds
   * the same few hundred frames for every kernel of a step (vLLM x 10: 5,280 path
   * normalisations and pattern tests per call of 208, 4 % of the run) */
  ut_u64map facts_of; /* name -> index in facts */
  struct ov_name_facts *facts;
  size_t n_facts, cap_facts;
  ut_arena text; /* the facts' canonical paths */
};

/* A frame name's canonical path (te_rules_normalize_path), whether it is a meaningful
 * scope (not ignored or not-meaningful, and meaningful) and a fallback one, and its
 * overlap_scope score. */
typedef struct ov_name_facts {
  const char *canon;
  long score;
  bool meaningful, fallback;
} ov_name_facts;

static const tr_pyframe *ov_frame_at(const ov_source *s, size_t i) {
  return &s->py[s->ev ? s->ev[i] : i];
}
static double ov_fts(const ov_source *s, size_t i) {
  return tr_pyframe_ts(s->t, ov_frame_at(s, i));
}
static double ov_frame_end(const ov_source *s, const tr_pyframe *e) {
  return tr_pyframe_ts(s->t, e) + tr_pyframe_dur(s->t, e);
}
static double ov_fend(const ov_source *s, size_t i) { return ov_frame_end(s, ov_frame_at(s, i)); }

/* Within one thread's bucket: (ts, -end, ev). ctx: the source whose frames they are
 * (ut_sort's context, not a global: sources may be built on two threads at once). */
static int ov_frame_cmp(const void *a, const void *b, void *ctx) {
  const ov_source *s = ctx;
  uint32_t ix = *(const uint32_t *)a, iy = *(const uint32_t *)b;
  const tr_pyframe *x = &s->py[ix], *y = &s->py[iy];
  double tx = tr_pyframe_ts(s->t, x), ty = tr_pyframe_ts(s->t, y);
  if (tx != ty) return tx < ty ? -1 : 1;
  double ex = ov_frame_end(s, x), ey = ov_frame_end(s, y);
  if (ex != ey) return ex > ey ? -1 : 1; /* outer frame first */
  return ix < iy ? -1 : (ix > iy);
}

static long ov_thread_find(const ov_source *s, tr_str pid, tr_str tid) {
  char key[32];
  int len = snprintf(key, sizeof key, "%u:%u", (unsigned)pid, (unsigned)tid);
  return ut_strmap_find(&s->threads, key, (size_t)len);
}

void ov_source_destroy(ov_source *s) {
  if (!s) return;
  ut_strmap_free(&s->threads);
  free(s->ev);
  free(s->parent);
  free(s->thread_off);
  an_trace_ids_free(&s->own_ids);
  ut_u64map_free(&s->facts_of);
  free(s->facts);
  ut_arena_free(&s->text);
  free(s);
}

/* The dense index of a run's thread ("pid:tid"), growing thread_off while counting. */
static long ov_run_thread(ov_source *s, const tr_pyframe_run *run, bool counting, size_t *n_count) {
  char key[32];
  int len = snprintf(key, sizeof key, "%u:%u", (unsigned)run->pid, (unsigned)run->tid);
  long th = ut_strmap_put(&s->threads, key, (size_t)len);
  if (th < 0 || !counting || (size_t)th + 2 <= *n_count) return th;
  size_t *p = ut_grow_zeroed(s->thread_off, n_count, (size_t)th + 2, sizeof *p);
  if (!p) return -1;
  s->thread_off = p;
  return th;
}

/* Frames per thread in first-appearance order of the threads: counts into thread_off,
 * then offsets. One "pid:tid" lookup per run. */
static bool ov_count_threads(ov_source *s, const tr_pyframe_run *runs, size_t nruns) {
  size_t n_count = 0; /* capacity of s->thread_off while counting */
  for (size_t j = 0; j < nruns; j++) {
    long th = ov_run_thread(s, &runs[j], true, &n_count);
    if (th < 0) return false;
    size_t end = j + 1 < nruns ? runs[j + 1].first : s->n_py;
    s->thread_off[th + 1] += end - runs[j].first;
  }
  if (!s->thread_off && !(s->thread_off = calloc(1, sizeof *s->thread_off))) return false;
  for (size_t t2 = 0; t2 < s->threads.n; t2++) s->thread_off[t2 + 1] += s->thread_off[t2];
  return true;
}

/* Frames bucketed by thread in file order (stable), then each bucket sorted only if it
 * is not already: Kineto writes a thread's frames in (start, -end) order, and a qsort of
 * millions of frames was a tenth of the run (docs/performance.md). Same result as one
 * qsort, since ov_frame_cmp is a total order. When the reader saw every thread's frames
 * in order and each thread in one run, the buckets are the file order: no ev at all. */
static bool ov_bucket_frames(ov_source *s) {
  size_t nruns;
  const tr_pyframe_run *runs = tr_trace_pyframe_runs(s->t, &nruns);
  if (!ov_count_threads(s, runs, nruns)) return false;
  if (tr_trace_pyframes_sorted(s->t) && s->threads.n == nruns) return true;
  s->ev = malloc((s->n_py ? s->n_py : 1) * sizeof *s->ev);
  size_t *fill = malloc((s->threads.n ? s->threads.n : 1) * sizeof *fill);
  if (!s->ev || !fill) {
    free(fill);
    return false;
  }
  memcpy(fill, s->thread_off, s->threads.n * sizeof *fill);
  for (size_t j = 0; j < nruns; j++) {
    long th = ov_run_thread(s, &runs[j], false, NULL);
    size_t end = j + 1 < nruns ? runs[j + 1].first : s->n_py;
    for (size_t i = runs[j].first; i < end; i++) s->ev[fill[th]++] = (uint32_t)i;
  }
  free(fill);
  for (size_t t2 = 0; t2 < s->threads.n && !tr_trace_pyframes_sorted(s->t); t2++) {
    size_t lo = s->thread_off[t2], hi = s->thread_off[t2 + 1];
    bool in_order = true;
    for (size_t i = lo + 1; i < hi && in_order; i++)
      in_order = ov_frame_cmp(&s->ev[i - 1], &s->ev[i], s) < 0;
    if (!in_order) ut_sort(s->ev + lo, hi - lo, sizeof *s->ev, ov_frame_cmp, s);
  }
  return true;
}

/* Parent links: a stack of open frames per thread; a frame's parent is the innermost
 * frame still open when it starts. The stack grows to the deepest nesting only, and holds
 * each open frame's end, read once when it is pushed. */
static bool ov_link_parents(ov_source *s) {
  typedef struct open_frame {
    int32_t at;
    double end;
  } open_frame;
  open_frame *stack = NULL;
  size_t stack_cap = 0;
  for (size_t th = 0; th < s->threads.n; th++) {
    size_t depth = 0;
    for (size_t i = s->thread_off[th]; i < s->thread_off[th + 1]; i++) {
      const tr_pyframe *f = ov_frame_at(s, i);
      double ts = tr_pyframe_ts(s->t, f);
      while (depth && stack[depth - 1].end < ts) depth--;
      s->parent[i] = depth ? stack[depth - 1].at : -1;
      if (depth == stack_cap) {
        open_frame *p = ut_grow(stack, &stack_cap, depth + 1, sizeof *p);
        if (!p) {
          free(stack);
          return false;
        }
        stack = p;
      }
      stack[depth++] = (open_frame){(int32_t)i, ov_frame_end(s, f)};
    }
  }
  free(stack);
  return true;
}

ov_source *ov_source_create(const tr_trace *t, const an_trace_ids *ids, const te_rules *r) {
  ov_source *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->t = t;
  s->r = r;
  s->ignore = te_rules_matcher(r, "scope_ignore");
  s->not_meaningful = te_rules_matcher(r, "scope_not_meaningful");
  s->meaningful = te_rules_matcher(r, "scope_meaningful");
  s->fallback = te_rules_matcher(r, "scope_fallback");
  s->py = tr_trace_pyframes(t, &s->n_py);
  s->parent = malloc((s->n_py ? s->n_py : 1) * sizeof *s->parent);
  if (!s->parent || !ov_bucket_frames(s) || !ov_link_parents(s)) goto fail;
  if (!(ids = an_trace_ids_lend(ids, &s->own_ids, t))) goto fail;
  s->op_by_ext = &ids->ops_by_ext;
  s->launch_by_corr = &ids->launches_by_corr;
  return s;
fail:
  ov_source_destroy(s);
  return NULL;
}

/* Frames of thread th active at t (start <= t + eps, end >= t - eps), outermost first,
 * appended to s->chain from position n. Returns the new count. */
static size_t ov_active_frames(ov_source *s, size_t th, double t, double eps, size_t n) {
  size_t lo; /* the first frame starting after t + eps */
  UT_PARTITION_POINT(lo, s->thread_off[th], s->thread_off[th + 1], m, ov_fts(s, m) <= t + eps);
  if (lo == s->thread_off[th]) return n;
  size_t first = n;
  size_t steps = 0;
  for (long f = (long)lo - 1; f >= 0 && steps < OV_MAX_CHAIN; f = s->parent[f], steps++) {
    if (ov_fend(s, (size_t)f) >= t - eps && n < OV_MAX_CHAIN)
      s->chain[n++] = ov_frame_at(s, (size_t)f);
  }
  for (size_t a = first, b = n ? n - 1 : 0; a < b;
       a++, b--) { /* innermost-first -> outermost-first */
    const tr_pyframe *tmp = s->chain[a];
    s->chain[a] = s->chain[b];
    s->chain[b] = tmp;
  }
  return n;
}

static bool ov_hit(const te_matcher *m, const char *raw, const char *canon) {
  if (!m) return false;
  return te_matcher_match(m, raw, strlen(raw)) || te_matcher_match(m, canon, strlen(canon));
}

/* With no matcher the test falls back to "a Python frame", so a pack that leaves the
 * matcher out still gets scopes. */
static bool ov_hit_or_py(const te_matcher *m, const char *canon) {
  if (!m) return strstr(canon, ".py(") != NULL;
  return te_matcher_match(m, canon, strlen(canon));
}

/* The facts of frame name `name`: remembered ones, else worked out and remembered; when
 * memory runs out, worked out into *tmp (its path in tmp_text, of tmp_cap bytes: a
 * longer path is cut) and not remembered, valid until the next call. */
static const ov_name_facts *ov_facts(ov_source *s, tr_str name, ov_name_facts *tmp, char *tmp_text,
                                     size_t tmp_cap) {
  uint64_t at;
  if (ut_u64map_get(&s->facts_of, name, &at)) return &s->facts[at];
  const char *raw = tr_str_get(s->t, name);
  te_rules_normalize_path(s->r, raw, tmp_text, tmp_cap);
  *tmp = (ov_name_facts){
      tmp_text, te_rules_score(s->r, "overlap_scope", tmp_text, tmp_text, NULL, 0),
      !ov_hit(s->not_meaningful, raw, tmp_text) && !ov_hit(s->ignore, raw, tmp_text) &&
          ov_hit_or_py(s->meaningful, tmp_text),
      ov_hit_or_py(s->fallback, tmp_text)};
  size_t len = strlen(tmp_text) + 1;
  char *copy = ut_arena_alloc(&s->text, len);
  ov_name_facts *v = ut_grow(s->facts, &s->cap_facts, s->n_facts + 1, sizeof *v);
  if (v) s->facts = v;
  if (!copy || !v || !ut_u64map_put(&s->facts_of, name, s->n_facts)) return tmp;
  memcpy(copy, tmp_text, len);
  tmp->canon = copy;
  v[s->n_facts] = *tmp;
  return &v[s->n_facts++];
}

/* Best scope of the meaningful frames among chain[0..n) (outermost first); when none is
 * meaningful and allow_fallback, of the fallback frames. Writes the canonical scope into
 * out. Returns false when the chain holds no usable frame. */
static bool ov_best_scope(ov_source *s, size_t n, bool allow_fallback, char *out, size_t cap) {
  size_t depth = (size_t)te_rules_settings(s->r)->overlap_scope_chain_depth;
  char text[1024];
  ov_name_facts tmp;
  const tr_pyframe *keep[OV_MAX_CHAIN];
  size_t n_keep = 0;
  for (int pass = 0; pass < (allow_fallback ? 2 : 1) && n_keep == 0; pass++) {
    for (size_t i = 0; i < n; i++) {
      const ov_name_facts *f = ov_facts(s, s->chain[i]->name, &tmp, text, sizeof text);
      if (pass == 0 ? f->meaningful : f->fallback) keep[n_keep++] = s->chain[i];
    }
  }
  if (n_keep == 0) return false;
  size_t from = n_keep > depth ? n_keep - depth : 0;
  long best_score = 0;
  bool have = false;
  for (size_t i = from; i < n_keep; i++) {
    const ov_name_facts *f = ov_facts(s, keep[i]->name, &tmp, text, sizeof text);
    long score = (long)(i - from) + f->score;
    if (!have || score > best_score) {
      have = true;
      best_score = score;
      snprintf(out, cap, "%s", f->canon);
    }
  }
  return true;
}

/* Among events with key `key`, the one whose thread chain yields a scope and whose start
 * is closest to the kernel start (first wins ties). */
static bool ov_context_by_key(ov_source *s, const an_id_index *idx, int64_t key, double kernel_ts,
                              char *scope, size_t scope_cap, char *op, size_t op_cap) {
  if (key == TR_NO_ID) return false;
  bool found = false, have_op = false;
  double best_dist = 0, op_dist = 0;
  char cand[1024];
  size_t lo, hi;
  an_id_index_range(idx, key, &lo, &hi);
  for (size_t i = lo; i < hi; i++) {
    const tr_event *e = an_id_index_event(idx, i);
    double dist = fabs(tr_event_ts(s->t, e) - kernel_ts);
    if (!found && (!have_op || dist < op_dist)) { /* op name even without frames */
      have_op = true;
      op_dist = dist;
      snprintf(op, op_cap, "%s", tr_str_get(s->t, e->name));
    }
    const tr_event_ctx *ec = tr_trace_ctx(s->t, e);
    long th = ov_thread_find(s, ec->pid, ec->tid);
    if (th < 0) continue;
    size_t n = ov_active_frames(s, (size_t)th, tr_event_ts(s->t, e), 0, 0);
    if (!ov_best_scope(s, n, true, cand, sizeof cand)) continue;
    if (!found || dist < best_dist) {
      found = true;
      best_dist = dist;
      snprintf(scope, scope_cap, "%s", cand);
      snprintf(op, op_cap, "%s", tr_str_get(s->t, e->name));
    }
  }
  return found;
}

ov_scope_how ov_source_scope(ov_source *s, const tr_event *k, char *scope, size_t scope_cap,
                             char *op, size_t op_cap) {
  if (op_cap) op[0] = '\0';
  int64_t ext = tr_event_external_id(s->t, k), corr = tr_event_correlation(s->t, k);
  if (ext == TR_NO_ID && corr != TR_NO_ID) ext = tr_trace_external_for_correlation(s->t, corr);
  if (ov_context_by_key(s, s->op_by_ext, ext, tr_event_ts(s->t, k), scope, scope_cap, op, op_cap))
    return OV_SCOPE_CPU_OP;
  /* Deviation O1 (docs/deviations.md): the reference compared a lower-cased launch name with
   * mixed-case names, so this step never ran; launch events are already classified by
   * the reader. overlap.launch_scope_fallback false skips it as the reference does. */
  char cpu_op[512];
  snprintf(cpu_op, sizeof cpu_op, "%s", op);
  op[0] = '\0';
  if (te_rules_settings(s->r)->overlap_launch_scope_fallback &&
      ov_context_by_key(s, s->launch_by_corr, corr, tr_event_ts(s->t, k), scope, scope_cap, op,
                        op_cap)) {
    /* docs/reference.md §4.2: the CPU op's name when one matched, else the launch's. */
    if (cpu_op[0]) snprintf(op, op_cap, "%s", cpu_op);
    return OV_SCOPE_LAUNCH;
  }
  /* Time window: Python frames of every thread around the GPU timestamp. */
  size_t n = 0;
  double eps = te_rules_settings(s->r)->attribution_time_tolerance_us;
  for (size_t th = 0; th < s->threads.n && n < OV_MAX_CHAIN; th++)
    n = ov_active_frames(s, th, tr_event_ts(s->t, k), eps, n);
  if (n > 1) { /* outermost first across threads: order by start (insertion sort, short) */
    for (size_t i = 1; i < n; i++) {
      const tr_pyframe *e = s->chain[i];
      size_t j = i;
      while (j > 0 && tr_pyframe_ts(s->t, s->chain[j - 1]) > tr_pyframe_ts(s->t, e)) {
        s->chain[j] = s->chain[j - 1];
        j--;
      }
      s->chain[j] = e;
    }
  }
  if (ov_best_scope(s, n, false, scope, scope_cap)) {
    snprintf(op, op_cap, "%s", OV_TIME_WINDOW_OP);
    return OV_SCOPE_TIME_WINDOW;
  }
  /* No scope: name the CPU op, else the launch (the kernel map's "unresolved" site
   * carries the same names), so "same launch op" still links repeated kernels. */
  if (cpu_op[0]) snprintf(op, op_cap, "%s", cpu_op);
  return OV_SCOPE_NONE;
}

/* ---------------------------------------------------------------- a kernel name's scope */

static bool ov_bundle_index_names(ov_bundle *b) {
  if (b->by_name_off) return true;
  size_t nn = b->side->n_names;
  b->by_name_off = calloc(nn + 1, sizeof *b->by_name_off);
  b->by_name = malloc((b->n ? b->n : 1) * sizeof *b->by_name);
  b->scope = calloc(nn ? nn : 1, sizeof *b->scope);
  b->op = calloc(nn ? nn : 1, sizeof *b->op);
  b->how = calloc(nn ? nn : 1, sizeof *b->how);
  b->done = calloc(nn ? nn : 1, sizeof *b->done);
  size_t *fill = calloc(nn ? nn : 1, sizeof *fill);
  if (!b->by_name_off || !b->by_name || !b->scope || !b->op || !b->how || !b->done || !fill) {
    free(fill);
    return false;
  }
  for (size_t i = 0; i < b->n; i++) b->by_name_off[b->side->name[ov_bundle_kernel(b, i)] + 1]++;
  for (size_t i = 0; i < nn; i++) b->by_name_off[i + 1] += b->by_name_off[i];
  for (size_t i = 0; i < b->n; i++) {
    uint32_t k = ov_bundle_kernel(b, i), nm = b->side->name[k];
    b->by_name[b->by_name_off[nm] + fill[nm]++] = k;
  }
  free(fill);
  return true;
}

/* Deviation: the reference shows mapping-chain scopes as "path(line): func" and kernel-map
 * scopes as "path:line func" in the same column. Every scope is shown in the kernel
 * table's "path:line func" form so the two tables read alike. */
static char *ov_scope_display(const char *chain) {
  const char *close = strstr(chain, "): ");
  const char *open = close;
  while (open && open > chain && *open != '(') open--;
  if (!close || !open || *open != '(' || open == chain) return ov_strdup(chain);
  for (const char *d = open + 1; d < close; d++)
    if (*d < '0' || *d > '9') return ov_strdup(chain);
  size_t n = strlen(chain) + 1;
  char *out = malloc(n);
  if (!out) return NULL;
  snprintf(out, n, "%.*s:%.*s %s", (int)(open - chain), chain, (int)(close - open - 1), open + 1,
           close + 3);
  return out;
}

/* The formal stage payload (exact stage, else "all", else the only one: docs/reference.md
 * §6.5 pick_stage_value) entry of `kernel`, its sites voting with their launch counts. */
/* Formal sites vote with their launch counts (docs/reference.md §6.5), except sites launched by a
 * graph replay (matcher graph_replay_launch on the site's CPU op, deviation O3): those
 * all sit under the replay call and would out-vote the mapping trace's real evidence. */
static void ov_formal_payload_votes(const ov_bundle *formal, const char *kernel, const te_rules *r,
                                    ut_counter *scopes, ut_counter *ops) {
  const te_matcher *replay = te_rules_matcher(r, "graph_replay_launch");
  const an_kernel_map *km = formal->side->in->kmap;
  const an_kmap_entry *en = an_kernel_map_find(km, formal->stage, kernel);
  if (!en && an_kernel_map_stage_count(km) > 0) {
    bool have_stage = false, have_all = false;
    for (size_t i = 0; i < an_kernel_map_stage_count(km); i++) {
      const char *id = an_kernel_map_stage_id(km, i);
      if (strcmp(id, formal->stage) == 0) have_stage = true;
      if (strcmp(id, "all") == 0) have_all = true;
    }
    if (!have_stage && have_all)
      en = an_kernel_map_find(km, "all", kernel);
    else if (!have_stage && an_kernel_map_stage_count(km) == 1)
      en = an_kernel_map_find(km, an_kernel_map_stage_id(km, 0), kernel);
  }
  if (!en) return;
  bool best_ok = ov_kmap_has_location(en);
  if (en->n_sites == 0) {
    if (best_ok) ut_counter_add(scopes, en->best_location, 1);
    return;
  }
  for (size_t i = 0; i < en->n_sites; i++) {
    const an_site *st = &en->sites[i];
    if (replay && st->top_cpu_op &&
        te_matcher_match(replay, st->top_cpu_op, strlen(st->top_cpu_op)))
      continue;
    const char *loc = st->location && st->location[0] ? st->location
                      : best_ok                       ? en->best_location
                                                      : "";
    size_t n = st->launches ? st->launches : 1;
    if (loc[0] && an_location_resolved(loc)) ut_counter_add(scopes, loc, n);
    if (st->top_cpu_op && st->top_cpu_op[0]) ut_counter_add(ops, st->top_cpu_op, n);
  }
}

/* The location the reference's kernel-map payload stores as a site's "display_location"
 * (docs/reference.md §4.3): the highest-priority frame (ties -> deepest) of the site's most
 * common stack, else the raw location. Unlike the docs/reference.md §4.2 display rule
 * (an_site.display_location, what the kernel table shows) the stack wins even over a preferred raw
 * location, so a graph-replayed site yields the replay frame. Writes "" when neither is usable. */
static void ov_site_stack_location(const te_rules *r, const an_site *st, char *out, size_t cap) {
  out[0] = '\0';
  int bp = 0;
  for (const char *p = st->stack; p && *p;) {
    const char *q = strstr(p, "->");
    size_t len = q ? (size_t)(q - p) : strlen(p);
    while (len && (*p == ' ' || *p == '\t')) p++, len--;
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
    char tmp[OV_SCOPE_CAP];
    if (len < sizeof tmp) {
      memcpy(tmp, p, len);
      tmp[len] = '\0';
      int pr = an_location_priority(r, tmp);
      if (pr > 0 && (!out[0] || pr >= bp)) {
        snprintf(out, cap, "%s", tmp);
        bp = pr;
      }
    }
    if (!q) break;
    p = q + 2;
  }
  if (!out[0] && an_location_resolved(st->location)) snprintf(out, cap, "%s", st->location);
}

/* docs/reference.md §6.5 kernel-map fallback for one sampled mapping event with no scope chain:
 * the mapping kernel map's entry votes its best location once and each site its stack
 * location (ov_site_stack_location) with the site's launch count. Returns whether it
 * voted. */
static bool ov_kmap_fallback_votes(const ov_bundle *map, const char *name, const te_rules *r,
                                   ut_counter *scopes) {
  const an_kmap_entry *en = an_kernel_map_lookup(map->side->in->kmap, map->stage, name);
  if (!ov_kmap_has_location(en)) return false;
  ut_counter_add(scopes, en->best_location, 1);
  char loc[OV_SCOPE_CAP];
  for (size_t i = 0; i < en->n_sites; i++) {
    ov_site_stack_location(r, &en->sites[i], loc, sizeof loc);
    if (loc[0] && en->sites[i].launches > 0) ut_counter_add(scopes, loc, en->sites[i].launches);
  }
  return true;
}

/* The votes of the sampled mapping events of name nm (docs/reference.md §6.5): each event's scope
 * (and its CPU op), or, without one, the mapping kernel map's votes. *best_how: the best way any
 * event found its scope (OV_SCOPE_NONE when none did); *kmap_voted: the kernel map voted. */
static void ov_sample_votes(ov_bundle *map, long nm, const te_rules *r, ut_counter *scopes,
                            ut_counter *ops, int *best_how, bool *kmap_voted) {
  size_t lo = map->by_name_off[nm], n = map->by_name_off[nm + 1] - lo;
  size_t per = (size_t)te_rules_settings(r)->overlap_sample_per_kernel;
  char scope[OV_SCOPE_CAP], op[512];
  size_t last = (size_t)-1;
  for (size_t i = 0; i < (n < per ? n : per); i++) {
    size_t j = i;
    if (n > per)
      j = (size_t)nearbyint((double)i * (double)(n - 1) / (double)(per - 1 ? per - 1 : 1));
    if (j == last) continue;
    last = j;
    const tr_event *e = ov_side_event(map->side, map->by_name[lo + j]);
    op[0] = '\0';
    ov_scope_how how = ov_source_scope(map->side->source, e, scope, sizeof scope, op, sizeof op);
    if (how == OV_SCOPE_NONE) {
      /* A CPU op without Python frames still names the launch op (docs/reference.md §6.6 "same
       * best launch op"). */
      if (op[0]) ut_counter_add(ops, op, 1);
      if (map->side->in->kmap &&
          ov_kmap_fallback_votes(map, ov_side_name(map->side, (uint32_t)nm), r, scopes))
        *kmap_voted = true;
      continue;
    }
    if (*best_how == OV_SCOPE_NONE || (int)how < *best_how) *best_how = (int)how;
    ut_counter_add(scopes, scope, 1);
    ut_counter_add(ops, op, 1);
  }
}

/* Decides the scope, op and source of name nm of a mapping bundle once: the most common
 * vote (mapping events, kernel map, formal payload), else the mapping kernel map's best
 * location. */
static void ov_decide_scope(ov_bundle *map, long nm, const char *kernel, const te_rules *r,
                            const ov_bundle *formal) {
  ut_counter scopes = {0}, ops = {0};
  int best_how = OV_SCOPE_NONE;
  bool kmap_voted = false;
  ov_sample_votes(map, nm, r, &scopes, &ops, &best_how, &kmap_voted);
  /* overlap.formal_payload_votes: the formal stage payload's sites vote next to the
   * mapping votes, graph-replay sites excepted (O3); false = mapping evidence only. */
  if (te_rules_settings(r)->overlap_formal_payload_votes && formal && formal->side->in->kmap)
    ov_formal_payload_votes(formal, kernel, r, &scopes, &ops);
  const char *top = ut_counter_top(&scopes);
  const char *top_op = ut_counter_top(&ops);
  if (top_op) map->op[nm] = ov_strdup(top_op);
  if (top) {
    /* overlap.uniform_scope_spelling false (compat reference, O4): the winning vote's own
     * spelling, as the reference shows it */
    map->scope[nm] = te_rules_settings(r)->overlap_uniform_scope_spelling ? ov_scope_display(top)
                                                                          : ov_strdup(top);
    map->how[nm] = best_how == OV_SCOPE_CPU_OP   ? AN_SCOPE_MAPPING
                   : best_how == OV_SCOPE_LAUNCH ? AN_SCOPE_LAUNCH
                   : best_how == OV_SCOPE_NONE
                       ? (kmap_voted ? AN_SCOPE_KERNEL_MAP : AN_SCOPE_FORMAL)
                       : AN_SCOPE_TIME_WINDOW;
  } else if (map->side->in->kmap) {
    const an_kmap_entry *en = an_kernel_map_lookup(map->side->in->kmap, map->stage, kernel);
    if (ov_kmap_has_location(en)) {
      map->scope[nm] = ov_strdup(en->best_location);
      map->how[nm] = AN_SCOPE_KERNEL_MAP;
    }
  }
  ut_counter_free(&scopes);
  ut_counter_free(&ops);
}

ov_scope_result ov_scope_lookup(ov_bundle *map, const char *kernel, const te_rules *r,
                                const ov_bundle *formal) {
  ov_scope_result res = {OV_UNMAPPED, OV_NO_OP, AN_SCOPE_NONE};
  if (map) {
    if (!map->side->source)
      map->side->source = ov_source_create(map->side->t, map->side->in->view->ids, r);
    long nm = ov_side_find_name(map->side, kernel, strlen(kernel));
    /* docs/reference.md §4.3 relaxed lookup among mapping kernels */
    if (nm < 0 && map->side->in->kmap) {
      const an_kmap_entry *en = an_kernel_map_lookup(map->side->in->kmap, map->stage, kernel);
      if (en && en->name) nm = ov_side_find_name(map->side, en->name, strlen(en->name));
    }
    if (nm >= 0 && map->side->source && ov_bundle_index_names(map)) {
      if (!map->done[nm]) {
        map->done[nm] = true;
        ov_decide_scope(map, nm, kernel, r, formal);
      }
      if (map->op[nm]) res.op = map->op[nm];
      if (map->scope[nm]) {
        res.scope = map->scope[nm];
        res.how = map->how[nm];
        return res;
      }
    }
  }
  if (formal && formal->side->in->kmap) {
    const an_kmap_entry *en = an_kernel_map_lookup(formal->side->in->kmap, formal->stage, kernel);
    if (ov_kmap_has_location(en)) {
      res.scope = en->best_location; /* owned by the formal kernel map, which outlives the rows */
      res.how = AN_SCOPE_FORMAL;
    }
  }
  return res;
}

/* ---------------------------------------------------------------- scope text */

/* Splits "path(N): func" (mapping chain form) or "path:N func" (kernel-map form) into
 * path and function; false when the text has neither shape. */
static bool ov_scope_parts(const char *s, char *path, size_t pcap, char *func, size_t fcap) {
  const char *paren = strstr(s, "): ");
  if (paren) {
    const char *open = paren;
    while (open > s && *open != '(') open--;
    if (*open == '(' && open > s) {
      snprintf(path, pcap, "%.*s", (int)(open - s), s);
      snprintf(func, fcap, "%s", paren + 3);
      return true;
    }
  }
  const char *sp = strrchr(s, ' ');
  if (sp) {
    const char *colon = sp;
    while (colon > s && *colon != ':') colon--;
    if (*colon == ':' && colon > s) {
      snprintf(path, pcap, "%.*s", (int)(colon - s), s);
      snprintf(func, fcap, "%s", sp + 1);
      return true;
    }
  }
  return false;
}

bool an_overlap_same_scope_family(const char *a, const char *b) {
  if (!a || !b || !strcmp(a, OV_UNMAPPED) || !strcmp(b, OV_UNMAPPED)) return false;
  char pa[OV_SCOPE_CAP], fa[OV_SCOPE_CAP], pb[OV_SCOPE_CAP], fb[OV_SCOPE_CAP];
  bool ka = ov_scope_parts(a, pa, sizeof pa, fa, sizeof fa);
  bool kb = ov_scope_parts(b, pb, sizeof pb, fb, sizeof fb);
  if (!ka || !kb) return !strcmp(a, b);
  return !strcmp(pa, pb) || !strcmp(fa, fb);
}
