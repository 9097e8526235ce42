/*
 * overlap.c - the Overlap Opportunity Table: event extraction and stage pairing
 * (docs/reference.md §6.1), row selection (docs/reference.md §6.4), dependency signal and
 * priority (docs/reference.md §6.6). The sweep is in overlap_sweep.c, the Python scopes in
 * overlap_scope.c.
 *
 * A trace given on both sides (single-trace mode, or the same file as mapping and formal input) is
 * extracted and indexed once: sides are cached by tr_trace pointer.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kmap_internal.h"
#include "analysis/overlap.h"
#include "analysis/overlap_internal.h"
#include "analysis/steps.h"
#include "analysis/summary.h"
#include "analysis/timeline.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/sort.h"
#include "util/vec.h"

/* ---------------------------------------------------------------- small helpers */

char *ov_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static bool ov_is_all(const char *stage) { return !stage || !*stage || !strcmp(stage, "all"); }

/* Stages no pack defines render last, under their id. */
static int ov_stage_order(const te_rules *r, const char *stage) {
  const te_stage *st = te_rules_stage_by_id(r, stage);
  return st ? st->order : INT_MAX;
}

static const char *ov_stage_label(const te_rules *r, const char *stage) {
  const te_stage *st = te_rules_stage_by_id(r, stage);
  return st && st->label ? st->label : stage;
}

/* ---------------------------------------------------------------- sides */

static void ov_side_free(ov_side *s) {
  free(s->ev);
  free(s->name);
  free(s->stream);
  free(s->cat);
  free(s->kid);
  free(s->map_to);
  free(s->extra_to);
  ut_strmap_free(&s->extra);
  ut_strmap_free(&s->streams);
  ov_source_destroy(s->source);
  memset(s, 0, sizeof *s);
}

/* The side's launch context: its view's, shared with the time account and the Ranks
 * summary (NULL without memory: then no context matches). */
static an_launch_context *ov_side_launches(const ov_side *s) {
  return an_trace_view_launches(s->in->view);
}

static bool ov_starts_gpu_or_kernel(const char *cat) {
  return strstr(cat, "kernel") != NULL || strncmp(cat, "gpu_", 4) == 0 ||
         strstr(cat, "xpu_runtime");
}

const char *ov_side_name(const ov_side *s, uint32_t nm) {
  uint32_t k = s->kid[nm];
  return k & OV_EXTRA ? s->extra.keys[k & ~OV_EXTRA] : an_kernel_map_name(s->in->kmap, k);
}

long ov_side_find_name(const ov_side *s, const char *name, size_t len) {
  const an_kernel_map *km = s->in->kmap;
  uint32_t id = km ? an_kernel_map_find_name(km, name, len) : AN_KMAP_NO_NAME;
  if (id != AN_KMAP_NO_NAME)
    return id < s->n_map_to && s->map_to[id] ? (long)s->map_to[id] - 1 : -1;
  long x = ut_strmap_find(&s->extra, name, len);
  return x < 0 ? -1 : (long)s->extra_to[x];
}

/* A new side name of kid `kid` (ov_side.kid): its id, -1 when out of memory. */
static long ov_side_add(ov_side *s, uint32_t kid) {
  uint32_t *k = ut_grow(s->kid, &s->cap_names, s->n_names + 1, sizeof *k);
  if (!k) return -1;
  s->kid = k;
  k[s->n_names] = kid;
  if (!(kid & OV_EXTRA)) s->map_to[kid] = (uint32_t)s->n_names + 1;
  return (long)s->n_names++;
}

/* The side's id of canonical text canon (len bytes), added when new: the kernel map's name
 * of that text, else an extra one (kept as the trace's string raw when it is the same
 * text). -1 when out of memory. */
static long ov_side_put_text(ov_side *s, const char *canon, size_t len, const char *raw) {
  const an_kernel_map *km = s->in->kmap;
  uint32_t id = km ? an_kernel_map_find_name(km, canon, len) : AN_KMAP_NO_NAME;
  if (id != AN_KMAP_NO_NAME) return s->map_to[id] ? (long)s->map_to[id] - 1 : ov_side_add(s, id);
  size_t before = s->extra.n;
  long x = strcmp(canon, raw) == 0 ? ut_strmap_put_borrowed(&s->extra, raw, len)
                                   : ut_strmap_put(&s->extra, canon, len);
  if (x < 0 || (size_t)x < before) return x < 0 ? -1 : (long)s->extra_to[x];
  uint32_t *t = ut_grow(s->extra_to, &s->cap_extra_to, (size_t)x + 1, sizeof *t);
  if (!t) return -1;
  s->extra_to = t;
  long nm = ov_side_add(s, OV_EXTRA | (uint32_t)x);
  if (nm >= 0) t[x] = (uint32_t)nm;
  return nm;
}

/* What ov_side_extract's names read: the kernel map's name ids of the trace's strings (its
 * view of the trace, SIZE_MAX: none), the canonical forms of the others once per string. */
typedef struct ov_names_in {
  size_t view;
  an_hex_mask mask;
  ut_u64map by_raw; /* a string the map did not name -> side name id + 1 */
  char canon[8192];
} ov_names_in;

/* The side's name id of trace string `name`, -1 when out of memory. A string the kernel
 * map canonicalised is its name by id (a load); the others, and a name as long as the
 * canonical buffer (the side's text is then cut there, as the map's is not), by text. */
static long ov_side_name_of(ov_side *s, ov_names_in *ni, tr_str name) {
  const an_kernel_map *km = s->in->kmap;
  uint32_t id =
      ni->view != SIZE_MAX ? an_kernel_map_name_id(km, ni->view, s->t, name) : AN_KMAP_NO_NAME;
  if (id != AN_KMAP_NO_NAME && s->map_to[id]) return (long)s->map_to[id] - 1;
  if (id != AN_KMAP_NO_NAME && strlen(an_kernel_map_name(km, id)) < sizeof ni->canon)
    return ov_side_add(s, id);
  uint64_t nm1;
  if (ut_u64map_get(&ni->by_raw, name, &nm1)) return (long)nm1 - 1;
  const char *raw = tr_str_get(s->t, name);
  an_canonical_name(raw, strlen(raw), ni->mask, ni->canon, sizeof ni->canon);
  long nm = ov_side_put_text(s, ni->canon, strlen(ni->canon), raw);
  return nm >= 0 && ut_u64map_put(&ni->by_raw, name, (uint64_t)nm + 1) ? nm : -1;
}

static bool ov_side_extract(ov_side *s, const an_overlap_trace *in, const te_rules *r,
                            const an_overlap_options *opt) {
  s->t = in->view->trace;
  s->in = in;
  size_t n_all = 0;
  const tr_event *all = tr_trace_events(s->t, TR_KIND_KERNEL, &n_all);
  s->all = all;
  const te_matcher *hint = te_rules_matcher(r, "kernel_hint");
  bool *keep = calloc(n_all ? n_all : 1, sizeof *keep);
  ov_names_in *ni = malloc(sizeof *ni);
  if (in->kmap) {
    s->n_map_to = an_kernel_map_name_count(in->kmap);
    s->map_to = calloc(s->n_map_to ? s->n_map_to : 1, sizeof *s->map_to);
  }
  if (!keep || !ni || (in->kmap && !s->map_to)) {
    free(keep);
    free(ni);
    return false;
  }
  *ni = (ov_names_in){.view = an_kernel_map_view_of(in->kmap, s->t),
                      .mask = an_hex_mask_from_rules(r)};
  /* Detector (docs/reference.md §2.5): the reader's kernel detector, and events it accepted only
   * for carrying a stream must also look like a kernel by name. */
  bool ok = false;
  for (size_t i = 0; i < n_all; i++) {
    const char *cat = tr_str_get(s->t, tr_event_cat(s->t, &all[i]));
    if (!ov_starts_gpu_or_kernel(cat) && hint) {
      const char *nm = tr_str_get(s->t, all[i].name);
      if (!te_matcher_match(hint, nm, strlen(nm))) continue;
    }
    keep[i] = true;
  }
  /* PID choice (the kernel table's, an_pick_pid): the heaviest PID, preferring those the
   * packs' overlap_tp0_process names (TP rank 0). */
  tr_str best = 0;
  bool found = false;
  if (an_pick_pid(s->t, keep, opt ? opt->pid_substring : NULL,
                  te_rules_matcher(r, "overlap_tp0_process"), &best, &found) != AN_OK)
    goto done;
  size_t n_keep = 0;
  for (size_t i = 0; i < n_all; i++) {
    keep[i] = keep[i] && found && tr_event_pid(s->t, &all[i]) == best;
    if (keep[i]) n_keep++;
  }
  s->ev = malloc((n_keep ? n_keep : 1) * sizeof *s->ev);
  s->name = malloc((n_keep ? n_keep : 1) * sizeof *s->name);
  s->stream = malloc((n_keep ? n_keep : 1) * sizeof *s->stream);
  if (!s->ev || !s->name || !s->stream) goto done;
  size_t n_tn = 0;
  const tr_thread_name *tn = tr_trace_thread_names(s->t, &n_tn);
  char buf[64];
  const char *last_stream = NULL;
  long last_st = -1;
  for (size_t i = 0; i < n_all; i++) {
    if (!keep[i]) continue;
    const tr_event *e = &all[i];
    size_t k = s->n;
    s->ev[k] = (uint32_t)i;
    long nm = ov_side_name_of(s, ni, e->name);
    if (nm < 0) goto done;
    s->name[k] = (uint32_t)nm;
    /* Stream (docs/reference.md §6.1): args.stream, args.cuda_stream, the thread's name,
     * "tid=<tid>". */
    const tr_event_ctx *ec = tr_trace_ctx(s->t, e);
    const char *stream = tr_str_get(s->t, ec->stream);
    if (!*stream) {
      const tr_thread_name *hit = NULL;
      for (size_t j = 0; j < n_tn; j++)
        if (tn[j].pid == ec->pid && tn[j].tid == ec->tid) {
          hit = &tn[j];
          break;
        }
      if (hit && hit->name) stream = tr_str_get(s->t, hit->name);
      if (!*stream) {
        snprintf(buf, sizeof buf, "tid=%s", tr_str_get(s->t, ec->tid));
        stream = buf;
      }
    }
    /* most kernels run on the stream of the one before: its index is kept by the
     * trace's text (not the formatted tid, whose buffer is reused) */
    long st = stream == last_stream && stream != buf
                  ? last_st
                  : ut_strmap_put(&s->streams, stream, strlen(stream));
    if (st < 0) goto done;
    last_stream = stream;
    last_st = st;
    s->stream[k] = (uint32_t)st;
    s->n++;
  }
  ok = true;
done:
  free(keep);
  ut_u64map_free(&ni->by_raw);
  free(ni);
  return ok;
}

/* The stage id of kept kernel k (borrowed): the view's path stage, else the kernel's own;
 * read from the view, not kept per kernel. */
static const char *ov_side_stage(const ov_side *s, size_t k) {
  const an_trace_view *v = s->in->view;
  size_t i = s->ev[k];
  const char *stage = v->path_stage;
  if (ov_is_all(stage) && v->kernel_slot && i < v->n_kernel_events)
    stage = an_trace_view_kernel_stage(v, i);
  return ov_is_all(stage) ? "all" : stage;
}

/* Overlap category of a name id, classified once. */
static long ov_side_cat(ov_side *s, uint32_t name, const te_rules *r, ov_cats *cats) {
  if (name >= s->cat_cap) {
    uint32_t *c = ut_grow_zeroed(s->cat, &s->cat_cap, (size_t)name + 1, sizeof *c);
    if (!c) return -1;
    s->cat = c;
  }
  if (!s->cat[name]) {
    /* s->cat is this name's answer: the classifier's own cache would be a second copy.
     * The overlap classes derive from the kernel classifier's, which the kernel map
     * decided for the same canonical name: it is not classified a second time (with
     * 262,144 distinct names, that was a fifth of the run). */
    const char *text = ov_side_name(s, name);
    uint32_t id = s->kid[name];
    int base = -1;
    const char *label = !(id & OV_EXTRA) && an_kernel_map_name_rule(s->in->kmap, id, &base)
                            ? te_rules_classify_once_given(r, "overlap", text, "kernel", base, NULL)
                            : te_rules_classify_once(r, "overlap", text, NULL);
    long idx = ov_cats_put(cats, r, label ? label : "other");
    if (idx < 0 || idx >= UINT32_MAX) return -1;
    s->cat[name] = (uint32_t)idx + 1;
  }
  return (long)s->cat[name] - 1;
}

/* ---------------------------------------------------------------- stage bundles */

static void ov_bundle_free(ov_bundle *b) {
  size_t nn = b->side ? b->side->n_names : 0;
  if (b->done)
    for (size_t i = 0; i < nn; i++) {
      free(b->scope[i]);
      free(b->op[i]);
    }
  free(b->idx);
  free(b->by_name_off);
  free(b->by_name);
  free(b->scope);
  free(b->op);
  free(b->how);
  free(b->done);
  memset(b, 0, sizeof *b);
}

/* Bundles of one side list (docs/reference.md §6.1): traces in order, first trace per stage wins,
 * "all" dropped when a real stage exists, then sorted by stage order. */
static bool ov_bundles_build(ov_side **sides, size_t n_sides, const te_rules *r, ov_bundle **out,
                             size_t *n_out) {
  ov_bundle *bs = NULL;
  size_t nb = 0, cap = 0;
  for (size_t si = 0; si < n_sides; si++) {
    ov_side *s = sides[si];
    for (size_t k = 0; k < s->n; k++) {
      const char *st = ov_side_stage(s, k);
      size_t b = 0;
      /* a stage's kernels share its id's text: compared by address first */
      while (b < nb && bs[b].stage != st && strcmp(bs[b].stage, st)) b++;
      if (b < nb && bs[b].side != s) continue; /* an earlier trace owns this stage */
      if (b == nb) {
        ov_bundle *nbs = ut_grow(bs, &cap, nb + 1, sizeof *nbs);
        if (!nbs) goto fail;
        bs = nbs;
        memset(&bs[nb], 0, sizeof bs[nb]);
        bs[nb].side = s;
        bs[nb].stage = st;
        bs[nb].idx = malloc(s->n * sizeof *bs[nb].idx);
        if (!bs[nb].idx) goto fail;
        nb++;
      }
      bs[b].idx[bs[b].n++] = (uint32_t)k;
    }
  }
  bool real = false;
  for (size_t b = 0; b < nb; b++) real |= !ov_is_all(bs[b].stage);
  if (real) {
    size_t w = 0;
    for (size_t b = 0; b < nb; b++) {
      if (ov_is_all(bs[b].stage))
        ov_bundle_free(&bs[b]);
      else
        bs[w++] = bs[b];
    }
    nb = w;
  }
  /* a bundle of every kernel of its side (one stage) needs no positions: 4 bytes a
   * kernel less while the stage is analysed */
  for (size_t b = 0; b < nb; b++)
    if (bs[b].n == bs[b].side->n) {
      free(bs[b].idx);
      bs[b].idx = NULL;
    }
  for (size_t i = 1; i < nb; i++) { /* insertion sort: stable, a handful of stages */
    ov_bundle tmp = bs[i];
    size_t j = i;
    while (j > 0 && ov_stage_order(r, bs[j - 1].stage) > ov_stage_order(r, tmp.stage)) {
      bs[j] = bs[j - 1];
      j--;
    }
    bs[j] = tmp;
  }
  *out = bs;
  *n_out = nb;
  return true;
fail:
  for (size_t b = 0; b < nb; b++) ov_bundle_free(&bs[b]);
  free(bs);
  return false;
}

/* ---------------------------------------------------------------- dependency signal */

double an_overlap_tight_gap(const te_rules *r, double dur) {
  const te_settings *set = te_rules_settings(r);
  double lo = set->overlap_tight_gap_min_us;
  double hi = set->overlap_tight_gap_max_us;
  double frac = set->overlap_tight_gap_duration_fraction;
  double v = frac * dur;
  if (v > hi) v = hi;
  if (v < lo) v = lo;
  return v;
}

/* Producer/consumer-looking pair (docs/reference.md §6.6), decided by the row kernel's own
 * category through the packs' overlap.producer_consumer.<category> lists. */
static bool ov_producer_consumer(const te_rules *r, const char *cat, const char *nb) {
  return te_string_list_has(te_list_map_get(&te_rules_settings(r)->overlap_producer_consumer, cat),
                            nb);
}

/* ---------------------------------------------------------------- selection */

typedef struct ov_cand {
  size_t agg;
  double key1, key2;
  size_t order;
} ov_cand;

static int ov_cand_cmp(const void *a, const void *b) {
  const ov_cand *x = a, *y = b;
  if (x->key1 != y->key1) return x->key1 > y->key1 ? -1 : 1;
  if (x->key2 != y->key2) return x->key2 > y->key2 ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order); /* stable */
}

void ov_dep_evidence_clear(an_dep_evidence *ev) {
  free(ev->cpu_op);
  free(ev->next_kernel);
  *ev = (an_dep_evidence){0};
}

static void ov_row_free(an_overlap_row *row) {
  free(row->kernel);
  free(row->category);
  free(row->scope);
  free(row->launch_op);
  free(row->staging_op);
  free(row->top_partner);
  free(row->prev_kernel);
  free(row->next_kernel);
  free(row->lever_store[0]);
  free(row->lever_store[1]);
  ov_dep_evidence_clear(&row->dep_evidence);
}

void an_overlap_result_free(an_overlap_result *res) {
  if (!res) return;
  for (size_t i = 0; i < res->n_stages; i++) {
    an_overlap_stage *st = &res->stages[i];
    for (size_t j = 0; j < st->n_rows; j++) ov_row_free(&st->rows[j]);
    free(st->rows);
    for (size_t j = 0; j < st->n_by_category; j++) free(st->by_category[j].category);
    free(st->by_category);
    for (size_t j = 0; j < st->n_alone; j++) free(st->alone[j].kernel);
    free(st->alone);
    free(st->stage);
    free(st->label);
    free(st->formal_path);
    free(st->mapping_path);
  }
  free(res->stages);
  memset(res, 0, sizeof *res);
}

typedef struct ov_stage_ctx {
  const te_rules *r;
  const an_stage_timeline *tl; /* the stage's time account (collective waits), or NULL */
  ov_cats *cats;
  ov_bundle *formal, *map;
  ov_kernel *ks;
  size_t n;
  uint32_t *key_cat; /* ov_cats index per row key (n_keys; a split key takes its name's) */
  size_t cap_key_cat;
  uint32_t *order;  /* kernel positions sorted by (stream, ts, end, position) */
  uint32_t *pos_of; /* position of kernel k in order */
  /* One-time work: the first compute kernel's start (-1: none), and per canonical name the
   * time of its kernels that end by then, summed in kernel order (ov_one_time_prepare) */
  double first_compute;
  double *before_us;
  double *steps_us; /* per canonical name: its kernels' time inside the counted steps */
  /* Review 5 defect 2: a collective's instances split by launch context. Row keys past the
   * side's names are (name, context family) pairs of this stage: key n_names + j is
   * split[j]. The side's names are not grown: its bundles' caches are sized by them. */
  struct ov_split {
    uint32_t base; /* the canonical name id */
    long family;   /* an_launch_context_of index; -1: the rest of a split name */
    bool whole;    /* every instance of the name in the stage is in this family */
    char hit[256]; /* the op or region that named it, on the first instance */
  } * split;
  size_t n_split, n_keys; /* n_keys = the side's names + n_split */
  /* ov_is_copy_engine's last answer, by event category: a stage's kernels share a few
   * categories, and it is asked several times per row */
  struct ov_copy_memo {
    tr_str cat;
    bool known, copy;
  } * copy_memo;
} ov_stage_ctx;

/* The canonical name id of row key id (a split key's name, else the id itself). */
static uint32_t ov_key_base(const ov_stage_ctx *c, uint32_t id) {
  size_t nn = c->formal->side->n_names;
  return id < nn ? id : c->split[id - nn].base;
}

/* The canonical kernel name of row key id (borrowed). */
static const char *ov_key_name(const ov_stage_ctx *c, uint32_t id) {
  return ov_side_name(c->formal->side, ov_key_base(c, id));
}

/* The split entry of row key id, NULL for a plain name. */
static const struct ov_split *ov_key_split(const ov_stage_ctx *c, uint32_t id) {
  size_t nn = c->formal->side->n_names;
  return id < nn ? NULL : &c->split[id - nn];
}

/* The trace event of the stage's kernel i (ks[i] is the formal bundle's i-th kernel). */
static const tr_event *ov_stage_event(const ov_stage_ctx *c, size_t i) {
  return ov_side_event(c->formal->side, ov_bundle_kernel(c->formal, i));
}

/* Positions of one stage's kernels by (stream, ts, end, position): a total order (the
 * position is the file order), so ut_sort's result is the only one. */
static int ov_stream_cmp(const void *pa, const void *pb, void *ctx) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const ov_kernel *ks = ctx, *x = &ks[a], *y = &ks[b];
  if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return a < b ? -1 : (a > b);
}

/* order[0..n) = the kernels ks[0..n) by ov_stream_cmp, without a sort of them all: a
 * counting sort by stream (each stream's kernels keep their order, which is start order:
 * a stream runs its kernels one after the other), then each stream checked and sorted only
 * when it is out of order. The result is the sort's: ov_stream_cmp is a total order. */
static void ov_bucket_by_stream(const ov_kernel *ks, size_t n, uint32_t *order) {
  uint32_t n_streams = 0;
  for (size_t i = 0; i < n; i++)
    if (ks[i].stream >= n_streams) n_streams = ks[i].stream + 1;
  size_t *next = calloc((size_t)n_streams + 1, sizeof *next);
  if (!next) { /* the same order by a sort of them all */
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    ut_sort(order, n, sizeof *order, ov_stream_cmp, (void *)(uintptr_t)ks);
    return;
  }
  for (size_t i = 0; i < n; i++) next[ks[i].stream + 1]++;
  for (uint32_t s = 0; s < n_streams; s++) next[s + 1] += next[s];
  for (size_t i = 0; i < n; i++) order[next[ks[i].stream]++] = (uint32_t)i;
  for (uint32_t s = 0, lo = 0; s < n_streams; lo = (uint32_t)next[s++]) {
    size_t m = next[s] - lo, i = 1; /* next[s]: the stream's end now */
    while (i < m && ov_stream_cmp(&order[lo + i - 1], &order[lo + i], (void *)(uintptr_t)ks) < 0)
      i++;
    if (i < m) ut_sort(order + lo, m, sizeof *order, ov_stream_cmp, (void *)(uintptr_t)ks);
  }
  free(next);
}

/* The overlap category of the stage's kernel i (its row key's). */
static uint32_t ov_kcat(const ov_stage_ctx *c, size_t i) { return c->key_cat[c->ks[i].name]; }

/* First kernel start to last kernel end. */
static double ov_span(const ov_kernel *ks, size_t n) {
  if (!n) return 0;
  double lo = ks[0].ts, hi = ks[0].end;
  for (size_t i = 1; i < n; i++) {
    if (ks[i].ts < lo) lo = ks[i].ts;
    if (ks[i].end > hi) hi = ks[i].end;
  }
  return hi - lo;
}

/* Whether the stage's kernel i is a copy-engine transfer (overlap.copy_engine_event_categories
 * on its trace event's category). */
static bool ov_kernel_is_copy(const ov_stage_ctx *c, size_t i) {
  const tr_event *ev = ov_stage_event(c, i);
  const tr_trace *t = c->formal->side->t;
  return ev && te_string_list_has(&te_rules_settings(c->r)->overlap_copy_engine_event_categories,
                                  tr_str_get(t, tr_event_cat(t, ev)));
}

/* The position (in c->order) of rep's neighbour on its stream on one side (side 0: before),
 * SIZE_MAX when none. A copy-engine transfer's neighbours that are transfers too are
 * stepped over (brief 10 defect 3: memory next to memory is no dataflow, a batch's input
 * copies run back to back): its producer and consumer are the nearest kernels. */
static size_t ov_stream_neighbour(const ov_stage_ctx *c, size_t p, int side, bool skip_copies) {
  const ov_kernel *k = &c->ks[c->order[p]];
  for (size_t at = p;;) {
    if (side == 0 ? at == 0 : at + 1 >= c->n) return SIZE_MAX;
    at = side == 0 ? at - 1 : at + 1;
    size_t q = c->order[at];
    if (c->ks[q].stream != k->stream) return SIZE_MAX;
    if (!skip_copies || !ov_kernel_is_copy(c, q)) return at;
  }
}

/* Fills the dependency fields of row from the representative kernel rep. Under the
 * mechanism rules (O8) a copy-engine transfer's risk comes from dataflow: its nearest
 * kernels on the stream, past other transfers; a host-to-device input copy (matcher
 * dep_input_copy) reads host memory, so no kernel produces it, and its consumer is what a
 * prefetch makes wait on an event: neither side is a risk, both are named. */
static bool ov_dep_signal(ov_stage_ctx *c, size_t rep, const char *scope, const char *op,
                          an_overlap_row *row) {
  const ov_kernel *k = &c->ks[rep];
  double thr = an_overlap_tight_gap(c->r, k->end - k->ts);
  bool risky[2] = {false, false}, unclear[2] = {false, false};
  size_t p = c->pos_of[rep];
  bool copy = te_rules_settings(c->r)->overlap_mechanism_actions && ov_kernel_is_copy(c, rep);
  const te_matcher *input = te_rules_matcher(c->r, "dep_input_copy");
  const char *own = ov_key_name(c, k->name);
  bool host_source = copy && input && te_matcher_match(input, own, strlen(own));
  for (int side = 0; side < 2; side++) {
    size_t at = ov_stream_neighbour(c, p, side, copy);
    if (at == SIZE_MAX) continue;
    size_t q = c->order[at];
    const ov_kernel *nb = &c->ks[q];
    double gap = side == 0 ? k->ts - nb->end : nb->ts - k->end;
    if (gap < 0) gap = 0;
    const char *nb_name = ov_key_name(c, nb->name);
    char **slot = side == 0 ? &row->prev_kernel : &row->next_kernel;
    *slot = ov_strdup(nb_name);
    if (!*slot) return false;
    if (side == 0)
      row->prev_gap_us = gap;
    else
      row->next_gap_us = gap;
    if (gap > thr || host_source) continue;
    ov_scope_result ns = ov_scope_lookup(c->map, nb_name, c->r, c->formal);
    const char *nb_cat = ov_cats_label(c->cats, (long)c->key_cat[nb->name]);
    /* a shared launch op or scope family is dataflow evidence only in the reference's
     * rule: under a graph replay every kernel shares both (O8) */
    bool shared = te_rules_settings(c->r)->overlap_shared_launch_is_dependency;
    bool fam = shared && an_overlap_same_scope_family(scope, ns.scope);
    bool same_op = shared && strcmp(op, OV_NO_OP) && !strcmp(op, ns.op);
    risky[side] = fam || same_op || ov_producer_consumer(c->r, row->category, nb_cat);
    unclear[side] = !risky[side] && (!strcmp(scope, OV_UNMAPPED) || !strcmp(ns.scope, OV_UNMAPPED));
  }
  row->dep_signal = risky[0] && risky[1]       ? AN_DEP_SIGNAL_BOTH
                    : risky[0]                 ? AN_DEP_SIGNAL_PREV
                    : risky[1]                 ? AN_DEP_SIGNAL_NEXT
                    : unclear[0] || unclear[1] ? AN_DEP_SIGNAL_UNCLEAR
                                               : AN_DEP_SIGNAL_LOW;
  row->dep_risk = risky[0] || risky[1]       ? AN_DEP_RISK_HIGH
                  : unclear[0] || unclear[1] ? AN_DEP_RISK_UNCLEAR
                                             : AN_DEP_RISK_LOW;
  return true;
}

/* True when the aggregate's events are copy-engine transfers (by the trace event category
 * of its representative, pack list overlap.copy_engine_event_categories). */
static bool ov_is_copy_engine(const ov_stage_ctx *c, const ov_agg *a) {
  const tr_event *ev = ov_stage_event(c, (size_t)a->rep);
  if (!ev) return false;
  const tr_trace *t = c->formal->side->t;
  struct ov_copy_memo *m = c->copy_memo;
  tr_str cat = tr_event_cat(t, ev);
  if (m && m->known && m->cat == cat) return m->copy;
  bool copy = te_string_list_has(&te_rules_settings(c->r)->overlap_copy_engine_event_categories,
                                 tr_str_get(t, cat));
  if (m) *m = (struct ov_copy_memo){cat, true, copy};
  return copy;
}

/* The stage's first compute start and each name's time before it, in one pass each: asked
 * per copy-engine name, a pass per name was quadratic (60,000 distinct memcpy names took
 * 7 s). False when out of memory. */
static bool ov_one_time_prepare(ov_stage_ctx *c, size_t n_names) {
  c->first_compute = -1;
  for (size_t i = 0; i < c->n; i++)
    if (c->cats->compute >= 0 && ov_kcat(c, i) == (uint32_t)c->cats->compute &&
        (c->first_compute < 0 || c->ks[i].ts < c->first_compute))
      c->first_compute = c->ks[i].ts;
  if (c->first_compute < 0) return true;
  c->before_us = calloc(n_names ? n_names : 1, sizeof *c->before_us);
  if (!c->before_us) return false;
  for (size_t i = 0; i < c->n; i++)
    if (c->ks[i].end <= c->first_compute) c->before_us[c->ks[i].name] += c->ks[i].end - c->ks[i].ts;
  return true;
}

/* Fraction of the aggregate's time that ends before the stage's first compute kernel
 * starts: one-time work (a weight upload) rather than a per-step cost. */
static double ov_before_first_compute(const ov_stage_ctx *c, const ov_agg *a) {
  if (c->first_compute < 0 || a->total_us <= 0) return 0;
  return c->before_us[a->name] / a->total_us;
}

/* Whether kernel k's neighbour on its stream, just before or just after it, is a
 * collective (overlap.collective_categories), whatever the gap between them: in eager mode the
 * launch gaps around a staging copy are far wider than any tight-gap threshold. */
static bool ov_adjacent_collective(const ov_stage_ctx *c, size_t k) {
  size_t p = c->pos_of[k];
  for (int side = 0; side < 2; side++) {
    if (side == 0 ? p == 0 : p + 1 >= c->n) continue;
    const ov_kernel *nb = &c->ks[c->order[side == 0 ? p - 1 : p + 1]];
    uint32_t nb_cat = c->key_cat[nb->name];
    if (nb->stream == c->ks[k].stream && nb_cat < c->cats->names.n && c->cats->collective[nb_cat])
      return true;
  }
  return false;
}

/* Share of the aggregate's instances whose same-stream neighbour is a collective. */
static double ov_adjacent_collective_share(const ov_stage_ctx *c, const ov_agg *a) {
  size_t n = 0, hits = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->ks[i].name != a->name) continue;
    n++;
    hits += ov_adjacent_collective(c, i);
  }
  return n ? (double)hits / (double)n : 0;
}

/* Issue 16 mechanism "staging copy into a communication buffer": a device-to-device copy
 * or copy kernel (matcher staging_copy_kernel) whose sampled instances were launched under
 * a CPU op that fills or drains a collective's buffer (comm_buffer_copy_op), or whose
 * neighbour on its stream is a collective, in at least overlap.staging_copy_min_fraction
 * of them. Issue 31: adjacency, not a tight gap, so eager mode's launch gaps do not hide
 * the copy into and out of a custom all-reduce or symmetric-memory buffer. Such a copy is
 * removed (bucket views, in-place buffers), not overlapped. */
static bool ov_staging_copy(const ov_stage_ctx *c, const ov_agg *a, char *op, size_t cap) {
  const char *name = ov_key_name(c, a->name);
  const te_matcher *km = te_rules_matcher(c->r, "staging_copy_kernel");
  *op = 0;
  if (!km || !te_matcher_match(km, name, strlen(name))) return false;
  const te_settings *set = te_rules_settings(c->r);
  const te_matcher *om = te_rules_matcher(c->r, "comm_buffer_copy_op");
  size_t per = (size_t)set->overlap_sample_per_kernel, step = a->count / per + 1;
  size_t seen = 0, sampled = 0, hits = 0;
  char hit[AN_MAX_STAGING_OP_BYTES];
  /* the buffer op is sampled even when adjacency decides: it names the lever (DDP's
   * reducer copies go with gradient_as_bucket_view=True) */
  for (size_t i = 0; i < c->n && om; i++) {
    if (c->ks[i].name != a->name || seen++ % step) continue;
    sampled++;
    bool in = an_launch_context_match(ov_side_launches(c->formal->side), ov_stage_event(c, i), om,
                                      hit, sizeof hit);
    hits += in;
    if (in && !*op) snprintf(op, cap, "%s", hit);
  }
  if (ov_adjacent_collective_share(c, a) >= set->overlap_staging_copy_min_fraction) return true;
  return sampled && (double)hits >= set->overlap_staging_copy_min_fraction * (double)sampled;
}

/* The collective op that launched a collective row's instances (review 3 defect 3): one
 * kernel name (ncclKernel_SendRecv) serves all-to-all, reduce-scatter, all-reduce and
 * all-gather, so the row is classified by the op that carries most of its sampled time,
 * not by the region around its longest instance. */
typedef struct ov_coll_op {
  char name[256];       /* the op's name (matcher collective_launch_op), "" when none */
  const tr_event *rep;  /* the longest sampled instance it launched */
  size_t hits, sampled; /* sampled launches under it, of all sampled */
} ov_coll_op;

static void ov_collective_op(const ov_stage_ctx *c, const ov_agg *a, ov_coll_op *out) {
  *out = (ov_coll_op){0};
  const te_matcher *m = te_rules_matcher(c->r, "collective_launch_op");
  if (!m) return;
  struct {
    char name[256];
    double us, longest;
    const tr_event *rep;
    size_t hits;
  } ops[AN_MAX_COLLECTIVE_OPS];
  size_t n_ops = 0;
  size_t per = (size_t)te_rules_settings(c->r)->overlap_sample_per_kernel;
  size_t step = a->count / (per ? per : 1) + 1, seen = 0;
  char hit[256];
  for (size_t i = 0; i < c->n; i++) {
    if (c->ks[i].name != a->name || seen++ % step) continue;
    out->sampled++;
    const tr_event *ev = ov_stage_event(c, i);
    if (!an_launch_context_match(ov_side_launches(c->formal->side), ev, m, hit, sizeof hit))
      continue;
    size_t k = 0;
    while (k < n_ops && strcmp(ops[k].name, hit)) k++;
    if (k == n_ops) {
      if (n_ops == AN_MAX_COLLECTIVE_OPS) continue;
      snprintf(ops[k].name, sizeof ops[k].name, "%s", hit);
      ops[k].us = ops[k].longest = 0;
      ops[k].rep = NULL;
      ops[k].hits = 0;
      n_ops++;
    }
    double us = c->ks[i].end - c->ks[i].ts;
    ops[k].us += us;
    ops[k].hits++;
    if (!ops[k].rep || us > ops[k].longest) {
      ops[k].rep = ev;
      ops[k].longest = us;
    }
  }
  size_t best = 0;
  for (size_t k = 1; k < n_ops; k++)
    if (ops[k].us > ops[best].us) best = k;
  if (!n_ops) return;
  snprintf(out->name, sizeof out->name, "%s", ops[best].name);
  out->rep = ops[best].rep;
  out->hits = ops[best].hits;
}

/* A row split by launch context (ov_split_contexts) takes its family's class, with the op
 * or region that named the family as evidence. False when out of memory. */
static bool ov_dep_class_of_family(const ov_stage_ctx *c, const struct ov_split *sp,
                                   an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  const char *id = set->overlap_dependency_context_rules.items[sp->family];
  const te_string_list *cls = te_list_map_get(&set->overlap_dependency_classes, id);
  const te_string_list *label = te_list_map_get(&set->overlap_dependency_context_labels, id);
  row->dep_class = cls && cls->n ? cls->items[0] : "unknown";
  row->dep_rule = id;
  row->launch_context = label && label->n ? label->items[0] : NULL;
  row->dep_evidence.kind = AN_DEP_EV_CPU_OP;
  return (row->dep_evidence.cpu_op = ov_strdup(sp->hit)) != NULL;
}

/* Sets the row's dependency class, the rule that decided and its evidence (issue 16):
 * the packs' context rules (the kernel name or a CPU op around its launch), then a
 * collective feeding a serial consumer (overlap.dependency.serial_consumer_categories) as
 * its next kernel on its stream, then the same-stream adjacency of the dependency
 * signal. Never the launch API or replay scope: under a graph replay every kernel shares
 * them. A collective is read through the collective op that launched most of its time
 * (ov_collective_op, review 3 defect 3): the rules first on that op's own name (an
 * all-to-all is classified as one, whatever optimizer or AccumulateGrad region encloses
 * it), then on the context around an instance that op launched. The evidence is data
 * (an_dep_evidence); the report words it. False when out of memory. */
static bool ov_dep_class(const ov_stage_ctx *c, const ov_agg *a, an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  const te_string_list *rules = &set->overlap_dependency_context_rules;
  an_dep_evidence *ev = &row->dep_evidence;
  const struct ov_split *sp = ov_key_split(c, a->name);
  if (sp && sp->family >= 0) return ov_dep_class_of_family(c, sp, row);
  row->context_rest = sp != NULL; /* read below as one unsplit row is */
  ov_coll_op coll = {0};
  if (te_string_list_has(&set->overlap_collective_categories, row->category))
    ov_collective_op(c, a, &coll);
  const tr_event *rep = coll.rep ? coll.rep : ov_stage_event(c, (size_t)a->rep);
  /* the op's name as evidence is cut where the 512-byte "CPU op <name>" cell cut it */
  char op[505], mname[128];
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < rules->n; i++) {
      snprintf(mname, sizeof mname, "dep_%s", rules->items[i]);
      const te_matcher *m = te_rules_matcher(c->r, mname);
      const te_string_list *cls =
          te_list_map_get(&set->overlap_dependency_classes, rules->items[i]);
      const te_string_list *cats =
          te_list_map_get(&set->overlap_dependency_rule_categories, rules->items[i]);
      if (!m || !cls || !cls->n || (cats && !te_string_list_has(cats, row->category))) continue;
      bool by_name = pass == 0 && te_matcher_match(m, row->kernel, strlen(row->kernel));
      bool by_op =
          pass == 0 && !by_name && *coll.name && te_matcher_match(m, coll.name, strlen(coll.name));
      if (by_op) snprintf(op, sizeof op, "%s", coll.name);
      if (!by_name && !by_op &&
          (pass == 0 ||
           !an_launch_context_match(ov_side_launches(c->formal->side), rep, m, op, sizeof op)))
        continue;
      row->dep_class = cls->items[0];
      row->dep_rule = rules->items[i];
      ev->kind = by_name ? AN_DEP_EV_KERNEL_NAME : AN_DEP_EV_CPU_OP;
      if (by_name) return true;
      if (*coll.name) {
        ev->op_launches = by_op ? coll.hits : 0;
        ev->op_sampled = by_op ? coll.sampled : 0;
      }
      return (ev->cpu_op = ov_strdup(op)) != NULL;
    }
  const ov_kernel *k = &c->ks[a->rep];
  size_t p = c->pos_of[a->rep];
  if (te_string_list_has(&set->overlap_collective_categories, row->category) && p + 1 < c->n) {
    const ov_kernel *nb = &c->ks[c->order[p + 1]];
    const char *nb_name = ov_key_name(c, nb->name);
    const char *kc = te_rules_classify(c->r, "kernel", nb_name, NULL);
    /* the next kernel on its stream, whatever the gap (issue 31): an eager launch gap
     * between the all-reduce and the norm that reads its output changes nothing */
    if (nb->stream == k->stream && kc &&
        te_string_list_has(&set->overlap_dependency_serial_consumer_categories, kc)) {
      row->dep_class = "serial";
      row->dep_rule = "feeds-next-consumer";
      ev->kind = AN_DEP_EV_NEXT_CONSUMER;
      ev->next_category = kc;
      return (ev->next_kernel = ov_strdup(nb_name)) != NULL;
    }
  }
  bool risky = row->dep_risk == AN_DEP_RISK_HIGH;
  row->dep_class = risky                                  ? "serial"
                   : row->dep_risk == AN_DEP_RISK_UNCLEAR ? "unknown"
                                                          : "independent";
  row->dep_rule = "same-stream-adjacency";
  ev->kind = risky                                  ? AN_DEP_EV_TIGHT_NEIGHBOUR
             : row->dep_risk == AN_DEP_RISK_UNCLEAR ? AN_DEP_EV_TIGHT_NO_SCOPE
                                                    : AN_DEP_EV_NO_TIGHT_NEIGHBOUR;
  return true;
}

/* Whether the row's dependency class says it can run beside other work: only then is
 * overlap (or checking dependencies before it) advice. */
static bool ov_independent(const te_settings *set, const an_overlap_row *row) {
  return te_string_list_has(&set->overlap_dependency_independent_classes, row->dep_class);
}

/* A row that no lane beside it can help as it is (review 3: the action follows from the
 * dependency class, then the recoverable time). A collective is restructured: two-batch
 * overlap or async TP give it the lane, the stage lists the options and the row recovers
 * at most the compute beside it. Any other kernel has nothing the overlap table can act
 * on (its fusion, tuning or layout is another table's row): skip, recovering 0. */
void ov_no_lane(const te_settings *set, an_overlap_row *row) {
  bool collective =
      row->category && te_string_list_has(&set->overlap_collective_categories, row->category);
  row->priority = collective ? AN_PRIORITY_P2 : AN_PRIORITY_P4;
  row->recommendation = collective ? AN_RECOMMEND_RESTRUCTURE : AN_RECOMMEND_SKIP;
}

/* Issue 31: the same mechanism gets the same advice. A row without dataflow evidence that
 * it is independent (a serial TP all-reduce feeding its norm, a kernel tightly coupled to
 * its neighbours, one whose dependency is unknown or hard) is not told to overlap or to
 * check its dependencies first, whatever the stage's stream count (ov_no_lane). False
 * when the row is independent, so the reference rule decides. */
static bool ov_no_overlap_without_evidence(const te_settings *set, an_overlap_row *row) {
  if (row->verdict != AN_OVERLAP_HEADROOM || ov_independent(set, row)) return false;
  ov_no_lane(set, row);
  return true;
}

/* Issue 31 (brief 9 defect 1: hta_multistream5's SendRecv "other launches", one instance
 * a step at a different position in each, was P1 "try overlap" at its whole 4.99
 * ms/step): a collective whose time is mostly in instances with no like instance (alone,
 * waits.h) has no floor, so its split into transfer and wait is unknown, and the wait of
 * a late rank is no overlap headroom. Over several counted steps the trace had the chance
 * to compare and did not: no bound is put forward. A one-step capture (a prefill
 * all-gather met once) could not compare at all, and keeps its row as transfer. */
static bool ov_wait_unknown(const ov_stage_ctx *c, const an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  if (row->alone_instances == 0 || !c->tl) return false;
  /* deviation O21: instances a latency-bound floor that waited left unknown were compared
   * (their floor holds wait), one step or many (param_dlrm_rank0_v100's input dist) */
  bool steps = (long)c->tl->n_steps >= set->overlap_wait_unknown_min_steps;
  double unknown = steps ? row->unknown_fraction : row->latency_fraction;
  return unknown >= set->overlap_wait_unknown_min_ratio;
}

/* Deviation O8: the action follows the mechanism. A copy-engine transfer with dataflow
 * evidence that it is independent (input copies can be prefetched) is overlapped on a
 * side stream, unless it is one-time work before the first compute; one coupled to its
 * neighbours is not (review 3: never "serial" and "try overlap"); a serial chain of small kernels
 * (tight producer/consumer neighbours) is what fusion removes; a collective whose exposed
 * time is mostly wait above its steady cost is rank skew. False when no mechanism
 * rule decides, so the reference rule does. */
static bool ov_mechanism_action(const ov_stage_ctx *c, const ov_sweep *sw, const ov_agg *a,
                                an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  if (!set->overlap_mechanism_actions) return false;
  char op[AN_MAX_STAGING_OP_BYTES];
  if (ov_staging_copy(c, a, op, sizeof op)) {
    row->priority = AN_PRIORITY_P1;
    row->recommendation = AN_RECOMMEND_ELIMINATE;
    if (*op) row->staging_op = strdup(op); /* out of memory: the row names no op */
    row->staging_lever = an_summary_lever(c->r, row->staging_op);
    return true;
  }
  /* review-1 defect 8: the priority follows the verdict. A transfer whose exposed part
   * clears the share bar is headroom (that part is what a side stream hides), whatever of
   * it is hidden already; never P1 beside "low-roi-hidden" */
  if (ov_is_copy_engine(c, a)) {
    double exposed_pct =
        sw->busy_us > 0 ? (row->exposed_ms + row->exposed_wait_ms) * 1000.0 / sw->busy_us * 100.0
                        : 0;
    if (ov_before_first_compute(c, a) >= set->overlap_one_time_min_fraction) {
      row->priority = AN_PRIORITY_P4;
      row->recommendation = AN_RECOMMEND_ONE_TIME;
    } else if (!ov_independent(set, row)) {
      ov_no_lane(set, row);
    } else if (row->verdict == AN_OVERLAP_HEADROOM || exposed_pct >= set->overlap_min_share_pct) {
      row->verdict = AN_OVERLAP_HEADROOM;
      row->priority = AN_PRIORITY_P1;
      row->recommendation = AN_RECOMMEND_TRY_OVERLAP;
    } else {
      return false;
    }
    return true;
  }
  if (te_string_list_has(&set->overlap_wait_categories, row->category) &&
      row->exposed_wait_ms > 0 &&
      row->exposed_wait_ms >= set->overlap_wait_min_ratio * row->exposed_ms) {
    row->verdict = AN_OVERLAP_WAIT;
    row->priority = AN_PRIORITY_P2;
    bool bubble =
        row->dep_rule && te_string_list_has(&set->overlap_wait_bubble_rules, row->dep_rule);
    row->recommendation = bubble ? AN_RECOMMEND_PIPELINE_BUBBLE : AN_RECOMMEND_RANK_SKEW;
    return true;
  }
  if (ov_wait_unknown(c, row)) {
    /* brief 11 defect 3: no floor splits its time, so it is neither headroom nor wait */
    row->verdict = AN_OVERLAP_UNSIZED;
    row->priority = AN_PRIORITY_P2;
    row->recommendation = AN_RECOMMEND_WAIT_UNKNOWN;
    return true;
  }
  /* a launch-context family whose class says the collective can run beside other work (an
   * input dist fetched a batch ahead, a gradient reduce only the optimizer reads) is
   * dataflow evidence: its neighbours on the stream do not make it check dependencies */
  if (row->verdict == AN_OVERLAP_HEADROOM && row->launch_context && ov_independent(set, row)) {
    row->priority = AN_PRIORITY_P1;
    row->recommendation = AN_RECOMMEND_TRY_OVERLAP;
    return true;
  }
  if (row->verdict == AN_OVERLAP_HEADROOM && row->dep_risk != AN_DEP_RISK_LOW &&
      te_string_list_has(&set->overlap_serial_chain_fuse_categories, row->category)) {
    row->priority = AN_PRIORITY_P1;
    row->recommendation = AN_RECOMMEND_TRY_FUSION;
    return true;
  }
  return ov_no_overlap_without_evidence(set, row);
}

/* O8: a kernel whose name says it is already fused (matcher already_fused_kernel) is not
 * a split chain: "try fusion" would send the engineer after work that is done. What is
 * left is to overlap it with other work or to fold its neighbours into it. */
static void ov_already_fused(const ov_stage_ctx *c, an_overlap_row *row) {
  if (row->recommendation != AN_RECOMMEND_TRY_FUSION) return;
  const te_matcher *m = te_rules_matcher(c->r, "already_fused_kernel");
  if (!m || !te_matcher_match(m, row->kernel, strlen(row->kernel))) return;
  row->priority = AN_PRIORITY_P4;
  row->recommendation = AN_RECOMMEND_ALREADY_FUSED;
}

/* The streams a stage really runs side by side: its most concurrent streams, or 1 when
 * they overlap for less than overlap.multi_stream_min_pct of the busy time (issue 31: a
 * few side-stream copies do not make a CUDA-graph decode a multi-stream stage). */
size_t ov_lanes(const te_settings *set, const ov_sweep *sw) {
  if (!set->overlap_mechanism_actions) return sw->max_streams;
  bool real =
      sw->busy_us > 0 && sw->multi_us >= set->overlap_multi_stream_min_pct / 100.0 * sw->busy_us;
  return real ? sw->max_streams : 1;
}

/* docs/reference.md §6.6 priority and recommendation, after the mechanism rules (O8). */
static void ov_decide_action(const ov_stage_ctx *c, const ov_sweep *sw, const ov_agg *a,
                             an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  if (row->share_pct < set->overlap_min_share_pct) {
    row->priority = AN_PRIORITY_P5;
    row->recommendation = AN_RECOMMEND_SKIP;
  } else if (ov_mechanism_action(c, sw, a, row)) {
    /* decided by mechanism */
  } else if (row->verdict == AN_OVERLAP_LOW_ROI_HIDDEN) {
    row->priority = AN_PRIORITY_P4;
    row->recommendation = AN_RECOMMEND_SKIP;
  } else if (row->dep_risk == AN_DEP_RISK_LOW) {
    row->priority = AN_PRIORITY_P1;
    row->recommendation = te_string_list_has(&set->overlap_try_overlap_categories, row->category)
                              ? AN_RECOMMEND_TRY_OVERLAP
                              : AN_RECOMMEND_TRY_FUSION;
  } else {
    row->priority = AN_PRIORITY_P2;
    row->recommendation = AN_RECOMMEND_CHECK_DEPS;
  }
  if (set->overlap_mechanism_actions) ov_already_fused(c, row);
  /* A single-stream stage has no lane to overlap on: only a restructuring (the stage's
   * overlap.restructure_options) recovers what overlap would, for a collective. A
   * collective a context rule shows independent (dataflow evidence) needs none: a side
   * stream of its own is the lane. On one stream, stream order serialises everything, so
   * the lack of a tight neighbour says nothing of dataflow: that class is unknown there
   * (review 3: never "independent" and "restructure"). Deviation O31 (brief 13 defect 4):
   * a row not told to overlap has no use for the class, and no tight neighbour is no
   * dataflow evidence (hta_ddp's bucket copies read the all-reduce they follow; a top-k
   * feeds the gather after it): its class reads unknown, whatever its action (eliminate,
   * fuse, skip, wait). */
  row->copy_engine = ov_is_copy_engine(c, a);
  if (!set->overlap_mechanism_actions) return;
  bool overlap_advice = row->recommendation == AN_RECOMMEND_TRY_OVERLAP ||
                        row->recommendation == AN_RECOMMEND_CHECK_DEPS;
  if (row->dep_evidence.kind == AN_DEP_EV_NO_TIGHT_NEIGHBOUR && !overlap_advice)
    row->dep_class = "unknown";
  if (ov_lanes(set, sw) > 1 || row->copy_engine || !overlap_advice) return;
  bool context =
      row->dep_evidence.kind == AN_DEP_EV_KERNEL_NAME || row->dep_evidence.kind == AN_DEP_EV_CPU_OP;
  row->own_lane = row->recommendation == AN_RECOMMEND_TRY_OVERLAP && context &&
                  ov_independent(set, row) &&
                  te_string_list_has(&set->overlap_collective_categories, row->category);
  if (row->own_lane) return;
  if (row->dep_evidence.kind == AN_DEP_EV_NO_TIGHT_NEIGHBOUR) row->dep_class = "unknown";
  ov_no_lane(set, row);
}

/* Whether the time account's collective row ct holds the instances of overlap row r: the
 * same kernel and the same launch-context family (a split row's rest reads the time
 * account's rest; a row the overlap left unsplit takes every family of its kernel). */
static bool ov_same_collective(const an_collective_time *ct, const an_overlap_row *r) {
  if (strcmp(ct->kernel, r->kernel) != 0) return false;
  if (r->launch_context)
    return ct->launch_context && strcmp(ct->launch_context, r->launch_context) == 0;
  return !r->context_rest || !ct->launch_context;
}

/* Issue 31, wait is wait (review 7 defect 1: the W and O tables gave two waits for one
 * row): a collective row's exposed time splits into transfer and the wait of the time
 * account's per-instance model (analysis/waits.h: each instance's duration above the floor
 * of the instances like it, same launch-context family and message size where the trace
 * has it), the one computation the W rows and the straggler read too, not the excess over
 * the row's median instance, which hides the wait when half of the launches wait. Every
 * row, a family of a split kernel too. The time account counts the instances inside the
 * counted steps; the row covers the stage window, so it takes the same share of its time
 * as wait. Wait is taken as exposed first: a waiting instance holds its stream. A row the
 * time account has no instance of keeps the sweep's split. */
static void ov_model_wait(const ov_stage_ctx *c, an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  if (!set->overlap_mechanism_actions || !c->tl ||
      !te_string_list_has(&set->overlap_wait_categories, row->category))
    return;
  int64_t total_ns = 0, wait_ns = 0, unknown_ns = 0, latency_ns = 0;
  bool small = true; /* every message states a latency-bound size */
  for (size_t i = 0; i < c->tl->n_collectives; i++) {
    const an_collective_time *ct = &c->tl->collectives[i];
    if (!ov_same_collective(ct, row)) continue;
    small = small && ct->max_bytes > 0 && ct->max_bytes < set->collectives_latency_bound_bytes;
    total_ns += ct->total_ns;
    wait_ns += ct->wait_ns;
    unknown_ns += ct->unknown_ns;
    latency_ns += ct->latency_unknown_ns;
    row->alone_instances += ct->alone;
    row->latency_instances += ct->latency_bound;
  }
  if (total_ns <= 0) return;
  row->latency_bound_msgs = small;
  row->unknown_fraction = (double)unknown_ns / (double)total_ns;
  row->latency_fraction = (double)latency_ns / (double)total_ns;
  double exposed = row->exposed_ms + row->exposed_wait_ms;
  double wait = (double)wait_ns / (double)total_ns * row->total_us / 1000.0;
  row->exposed_wait_ms = wait < exposed ? wait : exposed;
  row->exposed_ms = exposed - row->exposed_wait_ms;
  /* every instance floored by like ones, some time at the floor: the steady part is
   * measured transfer, not unknown time that may be wait (O30) */
  row->transfer_known = unknown_ns == 0 && wait_ns < total_ns;
}

/* Brief 10 defect 2: a collective told "try overlap" whose stream runs no compute of the
 * stage, while another stream does (NCCL's own stream beside the compute stream: hta_ddp's
 * gradient all-reduce, multistream5's SendRecv), cannot move to another stream: it is on
 * one. What puts compute beside it is a change of when the work is issued, by what
 * launched it: overlap.own_stream_levers by its dependency rule, else default. The
 * stream's kernels are a run of c->order (sorted by stream first). */
static void ov_own_stream(const ov_stage_ctx *c, size_t rep, an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  /* brief 12 defect 1: a copy too (hta_async's pinned input copies ran on a stream of
   * their own with nothing beside them: issued when needed, not a batch ahead) */
  bool mover =
      row->copy_engine ||
      (row->category && te_string_list_has(&set->overlap_collective_categories, row->category));
  if (!set->overlap_mechanism_actions || row->recommendation != AN_RECOMMEND_TRY_OVERLAP ||
      !mover || c->cats->compute < 0)
    return;
  uint32_t stream = c->ks[rep].stream, compute = (uint32_t)c->cats->compute;
  bool other = false;
  for (size_t at = 0; at < c->n; at++) {
    const ov_kernel *k = &c->ks[c->order[at]];
    if (c->key_cat[k->name] != compute) continue;
    if (k->stream == stream) return; /* compute shares its stream: moving it is the lever */
    other = true;
  }
  if (!other) return;
  const te_string_list *own =
      row->dep_rule ? te_list_map_get(&set->overlap_own_stream_levers, row->dep_rule) : NULL;
  if (!own || !own->n) own = te_list_map_get(&set->overlap_own_stream_levers, "default");
  row->own_stream = true;
  row->n_own_stream_levers = own ? own->n : 0;
  row->own_stream_levers = own ? own->items : NULL;
  row->own_stream_levers =
      ov_without_bytes_levers(c->r, row, 1, row->own_stream_levers, &row->n_own_stream_levers);
}

/* Brief 12 defect 1 (hta_async_cpu_to_gpu_a100: 2.66 ms/step of pinned HtoD ran with
 * nothing else on the GPU, yet the row's steady part was 0.65 ms/step and 42.67 ms read
 * "above its median copy (larger copies, not a wait)"): a copy engine shares no SMs, so
 * any kernel or copy on another stream hides a transfer, and the step pays for the time
 * nothing else runs. Every instance is the same transfer, a larger one larger: none of it
 * is a wait for anything, so all of it is the steady cost a prefetch hides. */
static void ov_copy_exposed(const ov_stage_ctx *c, const ov_agg *a, an_overlap_row *row) {
  if (!te_rules_settings(c->r)->overlap_mechanism_actions || !ov_is_copy_engine(c, a)) return;
  row->exposed_ms = a->exclusive_us / 1000.0;
  row->exposed_wait_ms = 0;
  row->covered_us = a->hidden_us;
}

/* Deviation O30: the first lever of what a wait row's measured transfer would take as a
 * headroom row: a collective with dataflow evidence that it is independent is issued
 * where compute runs beside it (overlap.own_stream_levers by its dependency rule), any
 * other one restructured (overlap.restructure_options_by_rule, else restructure_options);
 * a latency-bound collective's levers that move fewer bytes are skipped (O27). */
static void ov_transfer_lever(const ov_stage_ctx *c, an_overlap_row *row) {
  const te_settings *set = te_rules_settings(c->r);
  if (row->verdict != AN_OVERLAP_WAIT || !row->transfer_known || !row->category ||
      !te_string_list_has(&set->overlap_collective_categories, row->category))
    return;
  bool free_to_move = ov_independent(set, row);
  const te_list_map *by =
      free_to_move ? &set->overlap_own_stream_levers : &set->overlap_restructure_options_by_rule;
  const te_string_list *l = row->dep_rule ? te_list_map_get(by, row->dep_rule) : NULL;
  row->transfer_by_rule = l && l->n; /* the mechanism its dependency rule names */
  if (!l || !l->n)
    l = free_to_move ? te_list_map_get(by, "default") : &set->overlap_restructure_options;
  const te_matcher *bytes = te_rules_matcher(c->r, "bytes_lever");
  for (size_t k = 0; l && k < l->n && !row->transfer_lever; k++)
    if (!row->latency_bound_msgs || !bytes ||
        !te_matcher_match(bytes, l->items[k], strlen(l->items[k])))
      row->transfer_lever = l->items[k];
}

/* What a copy-engine row's instances move (their "bytes" arg, where stated) and in what
 * time, and whether it is a host copy (matcher host_link_copy): its rate is judged against
 * the device's host link once the roofline has found the device (an_overlap_copy_rates). */
static void ov_copy_bytes(const ov_stage_ctx *c, const ov_agg *a, an_overlap_row *row) {
  if (!te_rules_settings(c->r)->overlap_mechanism_actions || !ov_is_copy_engine(c, a)) return;
  const te_matcher *host = te_rules_matcher(c->r, "host_link_copy");
  row->host_copy = host && te_matcher_match(host, row->kernel, strlen(row->kernel));
  const tr_trace *t = c->formal->side->t;
  for (size_t i = 0; i < c->n; i++) {
    if (c->ks[i].name != a->name) continue;
    const char *s =
        tr_str_get(t, tr_event_arg(t, TR_KIND_KERNEL, ov_stage_event(c, i), TR_ARG_BYTES));
    double bytes = s ? strtod(s, NULL) : 0;
    if (!(bytes > 0)) continue;
    row->copy_bytes += bytes;
    row->copy_us += c->ks[i].end - c->ks[i].ts;
    if (bytes > row->copy_max_bytes) row->copy_max_bytes = bytes;
  }
}

static bool ov_fill_row(ov_stage_ctx *c, const ov_sweep *sw, const ov_agg *a,
                        an_overlap_verdict verdict, an_overlap_row *row) {
  memset(row, 0, sizeof *row);
  row->prev_gap_us = row->next_gap_us = -1;
  const char *name = ov_key_name(c, a->name);
  row->verdict = verdict;
  row->kernel = ov_strdup(name);
  row->category = ov_strdup(ov_cats_label(c->cats, (long)a->cat));
  row->kernel_category = te_rules_classify(c->r, "kernel", name, NULL);
  row->count = a->count;
  row->total_us = a->total_us;
  row->steps_us = c->steps_us ? c->steps_us[a->name] : a->total_us;
  row->hidden_us = a->hidden_us;
  row->exclusive_us = a->exclusive_us;
  row->hidden_by_compute_us = a->hidden_by_compute_us;
  row->exposed_ms = ov_agg_steady_us(a) / 1000.0;
  row->exposed_wait_ms = ov_agg_wait_us(a) / 1000.0;
  row->exposed_median_us = a->exposed_median_us;
  row->exposed_first_us = a->exposed_first_us;
  row->covered_us = a->hidden_by_compute_us;
  ov_copy_exposed(c, a, row);
  row->share_pct = sw->busy_us > 0 ? a->total_us / sw->busy_us * 100.0 : 0;
  if (a->top_partner_name >= 0) {
    row->top_partner = ov_strdup(ov_key_name(c, (uint32_t)a->top_partner_name));
    row->top_partner_us = a->top_partner_us;
  }
  ov_scope_result sr = ov_scope_lookup(c->map, name, c->r, c->formal);
  row->scope = strcmp(sr.scope, OV_UNMAPPED) ? ov_strdup(sr.scope) : NULL;
  row->launch_op_time_window = !strcmp(sr.op, OV_TIME_WINDOW_OP);
  bool named_op = strcmp(sr.op, OV_NO_OP) && !row->launch_op_time_window;
  row->launch_op = named_op ? ov_strdup(sr.op) : NULL;
  row->scope_source = sr.how;
  const te_matcher *replay = te_rules_matcher(c->r, "graph_replay_launch");
  if (row->scope && row->launch_op && replay &&
      te_rules_settings(c->r)->kernel_table_graph_replay_locations &&
      te_matcher_match(replay, row->launch_op, strlen(row->launch_op)))
    row->scope_kind = AN_LOCATION_GRAPH_REPLAY;
  if (!row->kernel || !row->category || (!row->scope && strcmp(sr.scope, OV_UNMAPPED)) ||
      (!row->launch_op && named_op))
    return false;
  ov_copy_bytes(c, a, row);
  if (!ov_dep_signal(c, (size_t)a->rep, sr.scope, sr.op, row)) return false;
  if (!ov_dep_class(c, a, row)) return false;
  ov_model_wait(c, row);
  ov_decide_action(c, sw, a, row);
  ov_transfer_lever(c, row);
  ov_own_stream(c, (size_t)a->rep, row);
  return true;
}

/* Appends a's row to st, unless its priority is P5 (docs/reference.md section 6.4: P5
 * headroom rows are dropped). false: out of memory. */
static bool ov_append_row(ov_stage_ctx *c, const ov_sweep *sw, const ov_agg *a,
                          an_overlap_verdict verdict, an_overlap_stage *st) {
  an_overlap_row *row = &st->rows[st->n_rows];
  if (!ov_fill_row(c, sw, a, verdict, row)) {
    ov_row_free(row);
    return false;
  }
  if (row->priority == AN_PRIORITY_P5)
    ov_row_free(row);
  else
    st->n_rows++;
  return true;
}

/* The labelled launch-context family of the stage's kernel i (-1: none or unlabelled);
 * hit (cap bytes) receives the op or region that named it. */
static long ov_labelled_family(ov_stage_ctx *c, size_t i, char *hit, size_t cap) {
  an_launch_context *lx = ov_side_launches(c->formal->side);
  const char *cat = ov_cats_label(c->cats, (long)ov_kcat(c, i));
  long f = an_launch_context_of(lx, ov_stage_event(c, i), cat, hit, cap);
  return f >= 0 && an_launch_context_label(lx, f) ? f : -1;
}

/* The row key of (name, family): an existing split entry or a new one. False when out of
 * memory. */
static bool ov_split_key(ov_stage_ctx *c, uint32_t name, long family, bool whole, const char *hit,
                         uint32_t *key) {
  size_t nn = c->formal->side->n_names, j = 0;
  while (j < c->n_split && (c->split[j].base != name || c->split[j].family != family)) j++;
  if (j == c->n_split) {
    struct ov_split *g = realloc(c->split, (c->n_split + 1) * sizeof *g);
    if (!g) return false;
    c->split = g;
    g[j].base = name;
    g[j].family = family;
    g[j].whole = whole;
    snprintf(g[j].hit, sizeof g[j].hit, "%s", hit);
    uint32_t *kc = ut_grow(c->key_cat, &c->cap_key_cat, nn + j + 1, sizeof *kc);
    if (!kc) return false;
    c->key_cat = kc;
    kc[nn + j] = kc[name];
    c->n_split++;
    c->n_keys = nn + c->n_split;
  }
  *key = (uint32_t)(nn + j);
  return true;
}

/* Review 5 defect 2: one collective kernel name (ncclKernel_SendRecv) carries a sharded
 * model's input dist, its pooled-embedding exchange, the DDP gradient reduce and the
 * optimizer's all-gather; one dependency class for the name, from whichever op carried
 * most of a sample, was wrong for most launches. Each collective instance is keyed by its
 * labelled launch-context family (overlap.dependency.context_labels, launch_context.h)
 * before the sweep, so each family is a row of its own with its own time, class and
 * recoverable. The name's sampled instances (overlap.sample_per_kernel) decide first: when
 * they agree, every instance takes their family; when they differ, each instance is read.
 * Off with the reference's actions (its one row per name). False when out of memory. */
static bool ov_split_contexts(ov_stage_ctx *c) {
  const te_settings *set = te_rules_settings(c->r);
  if (!set->overlap_mechanism_actions || !set->overlap_dependency_context_labels.n) return true;
  size_t nn = c->formal->side->n_names, per = (size_t)set->overlap_sample_per_kernel;
  uint32_t *count = calloc(nn ? nn : 1, sizeof *count);
  if (!count) return false;
  for (size_t i = 0; i < c->n; i++)
    if (c->cats->collective[ov_kcat(c, i)]) count[c->ks[i].name]++;
  bool ok = true;
  char hit[256], first_hit[256] = "";
  for (uint32_t nm = 0; nm < nn && ok; nm++) {
    if (!count[nm]) continue;
    size_t step = count[nm] / (per ? per : 1) + 1, seen = 0;
    long first = -2;
    bool mixed = false;
    for (size_t i = 0; i < c->n && !mixed; i++) {
      if (c->ks[i].name != nm || seen++ % step) continue;
      long f = ov_labelled_family(c, i, first == -2 ? first_hit : hit, sizeof hit);
      mixed = first != -2 && f != first;
      if (first == -2) first = f;
    }
    if (!mixed && first < 0) continue; /* no labelled family: the name's one row */
    for (size_t i = 0; i < c->n && ok; i++) {
      if (c->ks[i].name != nm) continue;
      /* a split name's launches under no labelled family are its rest, a row of its own */
      long f = mixed ? ov_labelled_family(c, i, hit, sizeof hit) : first;
      ok = ov_split_key(c, nm, f, !mixed, f >= 0 ? (mixed ? hit : first_hit) : "", &c->ks[i].name);
    }
  }
  free(count);
  return ok;
}

/* The kernels of the formal bundle as the sweep sees them. False when out of memory. */
static bool ov_stage_kernels(ov_stage_ctx *c) {
  ov_bundle *fb = c->formal;
  ov_side *s = fb->side;
  c->ks = malloc((c->n ? c->n : 1) * sizeof *c->ks);
  c->cap_key_cat = s->n_names ? s->n_names : 1;
  c->key_cat = calloc(c->cap_key_cat, sizeof *c->key_cat);
  if (!c->ks || !c->key_cat) return false;
  for (size_t i = 0; i < c->n; i++) {
    size_t k = ov_bundle_kernel(fb, i);
    const tr_event *e = ov_side_event(s, k);
    long cat = ov_side_cat(s, s->name[k], c->r, c->cats);
    if (cat < 0) return false;
    c->ks[i] = (ov_kernel){tr_event_ts(s->t, e), tr_event_ts(s->t, e) + tr_event_dur(s->t, e),
                           s->name[k], s->stream[k]};
    c->key_cat[s->name[k]] = (uint32_t)cat;
  }
  c->n_keys = s->n_names;
  return ov_split_contexts(c);
}

/* The kernels' same-stream order (for the neighbours of the dependency signal), made after
 * the sweep: its 8 bytes a kernel and the sweep's own state were the stage's peak together.
 * False when out of memory. */
static bool ov_stream_order(ov_stage_ctx *c) {
  c->order = malloc((c->n ? c->n : 1) * sizeof *c->order);
  c->pos_of = malloc((c->n ? c->n : 1) * sizeof *c->pos_of);
  if (!c->order || !c->pos_of) return false;
  ov_bucket_by_stream(c->ks, c->n, c->order);
  for (size_t i = 0; i < c->n; i++) c->pos_of[c->order[i]] = (uint32_t)i;
  return true;
}

/* docs/reference.md §6.4 headroom rows: kernels with enough exclusive time, non-compute first,
 * each group by exclusive time x category weight; the first headroom.top_n, P5 rows dropped. Marks
 * their names in is_headroom and appends to st->rows. */
static bool ov_headroom_rows(ov_stage_ctx *c, const ov_sweep *sw, ov_cand *cands, bool *is_headroom,
                             an_overlap_stage *st) {
  const te_settings *set = te_rules_settings(c->r);
  const ov_cats *cats = c->cats;
  size_t nc = 0;
  for (size_t i = 0; i < sw->n_aggs; i++) {
    const ov_agg *a = &sw->aggs[i];
    if (a->total_us <= 0 || a->total_us < set->overlap_headroom_min_total_us ||
        a->exclusive_us / a->total_us < set->overlap_headroom_min_exclusive_ratio)
      continue;
    /* deviation O8: compute (GEMM, attention) is what other work overlaps with */
    if (cats->never_row[a->cat]) continue;
    bool compute = cats->compute >= 0 && a->cat == (uint32_t)cats->compute;
    cands[nc++] = (ov_cand){i, compute ? 0.0 : 1.0, a->exclusive_us * cats->weight[a->cat], i};
  }
  qsort(cands, nc, sizeof *cands, ov_cand_cmp);
  for (size_t i = 0; i < nc && i < (size_t)set->overlap_headroom_top_n; i++) {
    const ov_agg *a = &sw->aggs[cands[i].agg];
    is_headroom[a->name] = true;
    if (!ov_append_row(c, sw, a, AN_OVERLAP_HEADROOM, st)) return false;
  }
  return true;
}

/* docs/reference.md §6.4 low-roi-hidden rows: kernels of the low-roi categories that are mostly
 * hidden, by hidden time (more when compute hides them); the first low_roi_hidden.top_n that are
 * not headroom rows, appended to st->rows. */
static bool ov_low_roi_rows(ov_stage_ctx *c, const ov_sweep *sw, ov_cand *cands,
                            const bool *is_headroom, an_overlap_stage *st) {
  const te_settings *set = te_rules_settings(c->r);
  size_t nc = 0;
  for (size_t i = 0; i < sw->n_aggs; i++) {
    const ov_agg *a = &sw->aggs[i];
    if (!c->cats->low_roi[a->cat] || a->total_us <= 0 ||
        a->total_us < set->overlap_low_roi_hidden_min_total_us ||
        a->hidden_us / a->total_us < set->overlap_low_roi_hidden_min_hidden_ratio)
      continue;
    double h = a->hidden_us;
    double key = h * (1.0 + a->hidden_by_compute_us / (h > 1.0 ? h : 1.0));
    cands[nc++] = (ov_cand){i, key, h / a->total_us, i};
  }
  qsort(cands, nc, sizeof *cands, ov_cand_cmp);
  for (size_t i = 0; i < nc && i < (size_t)set->overlap_low_roi_hidden_top_n; i++) {
    const ov_agg *a = &sw->aggs[cands[i].agg];
    if (is_headroom[a->name]) continue;
    an_overlap_row *row = &st->rows[st->n_rows];
    if (!ov_fill_row(c, sw, a, AN_OVERLAP_LOW_ROI_HIDDEN, row)) {
      ov_row_free(row);
      return false;
    }
    st->n_rows++;
  }
  return true;
}

/* Deviation O9: copy-engine transfers are a lane of their own. Ranked with the kernels by
 * exclusive time x weight, small copies lose every headroom slot to kernels, yet a copy
 * that overlaps nothing is exposed copy time the step pays (prefetch from pinned memory, a
 * side stream). The first overlap.copy_lane.top_n copies that are not rows yet, by exposed
 * time (at least headroom.min_total_us of it), are appended; headroom when their exclusive
 * ratio clears the headroom bar, else low-roi-hidden. */
static bool ov_copy_lane_rows(ov_stage_ctx *c, const ov_sweep *sw, ov_cand *cands,
                              bool *is_headroom, an_overlap_stage *st) {
  const te_settings *set = te_rules_settings(c->r);
  size_t nc = 0;
  for (size_t i = 0; i < sw->n_aggs && set->overlap_copy_lane_top_n > 0; i++) {
    const ov_agg *a = &sw->aggs[i];
    if (is_headroom[a->name] || !ov_is_copy_engine(c, a) || a->total_us <= 0 ||
        a->exposed_us < set->overlap_headroom_min_total_us)
      continue;
    cands[nc++] = (ov_cand){i, a->exposed_us, a->total_us, i};
  }
  qsort(cands, nc, sizeof *cands, ov_cand_cmp);
  for (size_t i = 0; i < nc && i < (size_t)set->overlap_copy_lane_top_n; i++) {
    const ov_agg *a = &sw->aggs[cands[i].agg];
    is_headroom[a->name] = true;
    bool excl = a->exclusive_us / a->total_us >= set->overlap_headroom_min_exclusive_ratio;
    if (!ov_append_row(c, sw, a, excl ? AN_OVERLAP_HEADROOM : AN_OVERLAP_LOW_ROI_HIDDEN, st))
      return false;
  }
  return true;
}

/* --overlap-table-limit first, then the reporting bar (as the kernel table does). */
static void ov_trim_rows(an_overlap_stage *st, const an_overlap_options *opt, double min_share) {
  if (opt && opt->table_limit > 0 && st->n_rows > (size_t)opt->table_limit) {
    for (size_t i = (size_t)opt->table_limit; i < st->n_rows; i++) ov_row_free(&st->rows[i]);
    st->n_rows = (size_t)opt->table_limit;
  }
  size_t w = 0;
  for (size_t i = 0; i < st->n_rows; i++) {
    if (st->rows[i].share_pct < min_share)
      ov_row_free(&st->rows[i]);
    else
      st->rows[w++] = st->rows[i];
  }
  st->n_rows = w;
}

/* The stage's time accounting: kernel time per overlap category, copy-engine transfers
 * apart (and the part of them that is one-time setup before the first compute). */
static bool ov_account_stage(const ov_stage_ctx *c, const ov_sweep *sw, an_overlap_stage *st) {
  st->by_category = calloc(sw->n_aggs ? sw->n_aggs : 1, sizeof *st->by_category);
  if (!st->by_category) return false;
  for (size_t i = 0; i < sw->n_aggs; i++) {
    const ov_agg *a = &sw->aggs[i];
    if (ov_is_copy_engine(c, a)) {
      st->copy_engine_us += a->total_us;
      st->one_time_us += ov_before_first_compute(c, a) * a->total_us;
      continue;
    }
    const char *label = ov_cats_label(c->cats, (long)a->cat);
    size_t j = 0;
    while (j < st->n_by_category && strcmp(st->by_category[j].category, label)) j++;
    if (j == st->n_by_category) {
      if (!(st->by_category[j].category = ov_strdup(label))) return false;
      st->n_by_category++;
    }
    st->by_category[j].kernel_us += a->total_us;
  }
  return true;
}

/* Counted steps of a stage, as every per-step figure counts them (analysis/steps.h:
 * a step nested in another is the same step, steps without kernels and warm-ups are
 * not counted); 0 = unknown. */
static size_t ov_stage_steps(const an_trace_view *v, const te_rules *r, const char *stage) {
  an_steps steps;
  if (ov_is_all(stage) || an_steps_build(v, r, &steps) != AN_OK) return 0;
  size_t n = an_steps_count(&steps, stage);
  an_steps_free(&steps);
  return n;
}

/* Per canonical name, the time of the stage's kernels inside the trace's counted steps
 * (an_steps_kernel_counted: every kernel counts in a trace without steps), as the kernel
 * table's steps_us counts it. NULL without lent steps (c->steps_us then stays NULL: every
 * kernel counts); false when out of memory. */
static bool ov_steps_times(ov_stage_ctx *c, const an_steps *steps) {
  if (!steps) return true;
  const ov_side *s = c->formal->side;
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(s->t, TR_KIND_KERNEL, &nk);
  c->steps_us = calloc(c->n_keys ? c->n_keys : 1, sizeof *c->steps_us);
  if (!c->steps_us) return false;
  for (size_t i = 0; i < c->n; i++)
    if (an_steps_kernel_counted(steps, (size_t)(ov_stage_event(c, i) - kev)))
      c->steps_us[c->ks[i].name] += c->ks[i].end - c->ks[i].ts;
  return true;
}

/* Compute kernel time of the stage: the work other streams' rows could hide under. */
/* The step's time (ms) the rows' recoverable share is of: the time account's span per
 * counted step, else the stage window over its steps (deviation O25). */
static double ov_step_ms(const an_stage_timeline *tl, const an_overlap_stage *st) {
  if (tl && tl->total.span_ns > 0)
    return (double)tl->total.span_ns / 1000.0 / 1000.0 / (double)(tl->n_steps ? tl->n_steps : 1);
  return st->span_us / 1000.0 / (double)(st->n_steps ? st->n_steps : 1);
}

static double ov_compute_us(const ov_cats *cats, const ov_sweep *sw) {
  double us = 0;
  for (size_t i = 0; i < sw->n_aggs; i++)
    if (cats->compute >= 0 && sw->aggs[i].cat == (uint32_t)cats->compute)
      us += sw->aggs[i].total_us;
  return us;
}

/* The kernel category of row key `key`: the kernel map's class of its name (decided once for
 * the run), else the classifier's. */
static const char *ov_kernel_category(const ov_stage_ctx *c, uint32_t key) {
  const ov_side *s = c->formal->side;
  uint32_t id = s->kid[ov_key_base(c, key)];
  const char *cat = id & OV_EXTRA ? NULL : an_kernel_map_name_category(s->in->kmap, id, NULL);
  return cat ? cat : te_rules_classify(c->r, "kernel", ov_key_name(c, key), NULL);
}

/* The exclusive share of each kernel the summary may count in an eager chain (by its
 * kernel category; the summary applies its other filters to the rows it finds here). */
static bool ov_alone_times(const ov_stage_ctx *c, const ov_sweep *sw, an_overlap_stage *st) {
  const te_string_list *chain = &te_rules_settings(c->r)->summary_chain_categories;
  size_t n = 0;
  /* which rows are of a chain category, decided once (a byte a row, not a copy of each
   * name): the count, then the fill */
  bool *in_chain = malloc(sw->n_aggs ? sw->n_aggs : 1);
  if (!in_chain) return false;
  for (size_t i = 0; i < sw->n_aggs; i++) {
    n += in_chain[i] = te_string_list_has(chain, ov_kernel_category(c, sw->aggs[i].name));
  }
  st->alone = calloc(n ? n : 1, sizeof *st->alone);
  bool ok = st->alone != NULL;
  for (size_t i = 0; ok && i < sw->n_aggs; i++) {
    if (!in_chain[i]) continue;
    const ov_agg *a = &sw->aggs[i];
    struct an_overlap_alone *e = &st->alone[st->n_alone];
    ok = (e->kernel = ov_strdup(ov_key_name(c, a->name))) != NULL;
    e->total_us = a->total_us;
    e->exclusive_us = a->exclusive_us;
    st->n_alone += ok;
  }
  free(in_chain);
  return ok;
}

static an_overlap_status ov_analyze_stage(const te_rules *r, ov_cats *cats, ov_bundle *fb,
                                          ov_bundle *mb, const an_overlap_options *opt,
                                          an_overlap_stage *st) {
  an_overlap_status rc = AN_OVERLAP_ERR_NOMEM;
  ov_side *s = fb->side;
  struct ov_copy_memo copy_memo = {0};
  ov_stage_ctx c = {.r = r,
                    .cats = cats,
                    .formal = fb,
                    .map = mb,
                    .n = fb->n,
                    .first_compute = -1,
                    .copy_memo = &copy_memo};
  c.tl = opt && opt->timeline ? an_timeline_stage(opt->timeline, fb->stage) : NULL;
  ov_sweep sw = {0};
  ov_cand *cands = NULL;
  bool *is_headroom = NULL;
  if (!ov_stage_kernels(&c) || !ov_one_time_prepare(&c, c.n_keys) ||
      !ov_steps_times(&c, s->in->steps))
    goto done;
  an_overlap_status sweep_rc =
      ov_sweep_run(c.ks, c.n, c.n_keys, c.key_cat, s->streams.n, cats, &sw);
  if (sweep_rc != AN_OVERLAP_OK) {
    rc = sweep_rc;
    goto done;
  }
  if (!ov_stream_order(&c)) goto done;
  st->busy_us = sw.busy_us;
  st->span_us = ov_span(c.ks, c.n);
  st->multi_stream_us = sw.multi_us;
  st->max_streams = sw.max_streams;
  st->n_kernels = c.n;
  if (!ov_account_stage(&c, &sw, st) || !ov_alone_times(&c, &sw, st)) goto done;
  const te_settings *set = te_rules_settings(r);
  cands = malloc((sw.n_aggs ? sw.n_aggs : 1) * sizeof *cands);
  st->rows = calloc((size_t)(set->overlap_headroom_top_n + set->overlap_low_roi_hidden_top_n +
                             set->overlap_copy_lane_top_n) +
                        1,
                    sizeof *st->rows);
  is_headroom = calloc(c.n_keys ? c.n_keys : 1, sizeof *is_headroom);
  if (!cands || !st->rows || !is_headroom) goto done;
  if (!ov_headroom_rows(&c, &sw, cands, is_headroom, st)) goto done;
  if (!ov_copy_lane_rows(&c, &sw, cands, is_headroom, st)) goto done;
  if (!ov_low_roi_rows(&c, &sw, cands, is_headroom, st)) goto done;
  /* the pipeline lends the steps it built (the tables and the time account count them) */
  st->n_steps = s->in->steps ? an_steps_count(s->in->steps, fb->stage)
                             : ov_stage_steps(s->in->view, r, fb->stage);
  st->step_ms = ov_step_ms(c.tl, st);
  st->compute_us = ov_compute_us(cats, &sw);
  st->lanes = ov_lanes(set, &sw);
  ov_gain_rank(st, st->compute_us, st->lanes, set);
  ov_trim_rows(st, opt, set->overlap_min_share_pct);
  ov_gain_floor(st, set);
  ov_restructure_options(st, set);
  ov_latency_bound_options(st, r);
  rc = AN_OVERLAP_OK;
done:
  ov_sweep_free(&sw);
  free(is_headroom);
  free(cands);
  free(c.ks);
  free(c.key_cat);
  free(c.order);
  free(c.pos_of);
  free(c.before_us);
  free(c.steps_us);
  free(c.split);
  return rc;
}

/* ---------------------------------------------------------------- entry point */

an_overlap_status an_overlap_analyze(const an_overlap_trace *mapping, size_t n_mapping,
                                     const an_overlap_trace *formal, size_t n_formal,
                                     const te_rules *r, const an_overlap_options *opt,
                                     an_overlap_result *out) {
  memset(out, 0, sizeof *out);
  if ((n_mapping && !mapping) || (n_formal && !formal) || !r) return AN_OVERLAP_ERR_ARGS;
  out->single_trace = opt && opt->single_trace;
  out->min_share_pct = te_rules_settings(r)->overlap_min_share_pct;
  an_overlap_status rc = AN_OVERLAP_ERR_NOMEM;
  size_t n_in = n_mapping + n_formal;
  ov_side *sides = calloc(n_in ? n_in : 1, sizeof *sides);
  ov_side **fs = calloc(n_formal ? n_formal : 1, sizeof *fs);
  ov_side **ms = calloc(n_mapping ? n_mapping : 1, sizeof *ms);
  ov_bundle *fb = NULL, *mb = NULL;
  size_t n_sides = 0, n_fb = 0, n_mb = 0;
  ov_cats cats = {0};
  cats.compute = -1;
  if (!sides || !fs || !ms) goto done;
  /* One side per distinct tr_trace: a trace on both sides is extracted once. */
  for (size_t i = 0; i < n_in; i++) {
    const an_overlap_trace *in = i < n_formal ? &formal[i] : &mapping[i - n_formal];
    if (!in->view || !in->view->trace) {
      rc = AN_OVERLAP_ERR_ARGS;
      goto done;
    }
    size_t j = 0;
    while (j < n_sides && sides[j].t != in->view->trace) j++;
    if (j == n_sides) {
      if (!ov_side_extract(&sides[j], in, r, opt)) goto done;
      n_sides++;
    }
    if (i < n_formal)
      fs[i] = &sides[j];
    else
      ms[i - n_formal] = &sides[j];
  }
  if (!ov_bundles_build(fs, n_formal, r, &fb, &n_fb)) goto done;
  if (!ov_bundles_build(ms, n_mapping, r, &mb, &n_mb)) goto done;
  out->stages = calloc(n_fb ? n_fb : 1, sizeof *out->stages);
  if (!out->stages) goto done;
  for (size_t i = 0; i < n_fb; i++) {
    /* docs/reference.md §6.1 pairing: same stage, else the mapping "all" bundle, else the only
     * one. */
    ov_bundle *m = NULL;
    for (size_t j = 0; j < n_mb && !m; j++)
      if (!strcmp(mb[j].stage, fb[i].stage)) m = &mb[j];
    for (size_t j = 0; j < n_mb && !m; j++)
      if (ov_is_all(mb[j].stage)) m = &mb[j];
    if (!m && n_mb == 1) m = &mb[0];
    an_overlap_stage *st = &out->stages[out->n_stages++];
    st->stage = ov_strdup(fb[i].stage);
    st->label = ov_strdup(ov_stage_label(r, fb[i].stage));
    st->order = ov_stage_order(r, fb[i].stage);
    st->formal_path = ov_strdup(tr_trace_path(fb[i].side->t));
    st->mapping_path = m ? ov_strdup(tr_trace_path(m->side->t)) : NULL;
    if (!st->stage || !st->label) goto done;
    an_overlap_status src = ov_analyze_stage(r, &cats, &fb[i], m, opt, st);
    if (src != AN_OVERLAP_OK) {
      rc = src;
      goto done;
    }
  }
  rc = AN_OVERLAP_OK;
done:
  for (size_t i = 0; i < n_fb; i++) ov_bundle_free(&fb[i]);
  for (size_t i = 0; i < n_mb; i++) ov_bundle_free(&mb[i]);
  free(fb);
  free(mb);
  for (size_t i = 0; i < n_sides; i++) ov_side_free(&sides[i]);
  free(sides);
  free(fs);
  free(ms);
  ov_cats_free(&cats);
  if (rc != AN_OVERLAP_OK) an_overlap_result_free(out);
  return rc;
}
