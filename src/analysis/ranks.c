/* analysis/ranks.c - see ranks.h. */
#include "analysis/ranks.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/coll_message.h"
#include "analysis/collective_names.h"
#include "analysis/kmap_internal.h"
#include "analysis/launch_context.h"
#include "analysis/op_nest.h"
#include "analysis/ranks_internal.h"
#include "analysis/steps.h"
#include "analysis/strtab.h"
#include "analysis/trace_filter.h"
#include "analysis/workers.h"
#include "triage/ascii.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/sort.h"
#include "util/vec.h"

enum { N_CLASSES = AN_RANK_MEMORY + 1 };

/* A rank's trace: one part per stage it ran. */
struct an_rank_summary {
  char *path;
  char *host;    /* NULL when the trace names none */
  bool filtered; /* the trace was filtered to GPU work */
  size_t gpus;   /* processes carrying kernels (Kineto: one per GPU) */
  an_rank_part **parts;
  size_t n_parts, cap_parts;
};

void an_rank_part_free(an_rank_part *p) {
  if (!p) return;
  ut_strmap_free(&p->names);
  ut_strmap_free(&p->contexts);
  ut_strmap_free(&p->launchers);
  free(p->kern);
  free(p->colls);
  free(p->kinds);
  free(p->steps);
  for (size_t i = 0; i < p->n_pgs; i++) free(p->pg_store[i]);
  free(p->pg_store);
  free(p->pgs);
  free(p);
}

static void summary_free(an_rank_summary *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n_parts; i++) an_rank_part_free(s->parts[i]);
  free(s->parts);
  free(s->path);
  free(s->host);
  free(s);
}

static an_rank_part *add_part(an_rank_summary *s, long rank, const char *stage) {
  an_rank_part **v = ut_grow(s->parts, &s->cap_parts, s->n_parts + 1, sizeof *v);
  if (!v) return NULL;
  s->parts = v;
  an_rank_part *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  *p = (an_rank_part){.rank = rank,
                      .path = s->path,
                      .filtered = s->filtered,
                      .host = s->host,
                      .stage = stage,
                      .gpus = s->gpus};
  v[s->n_parts++] = p;
  return p;
}

/* ------------------------------------------------------------------ one rank */

static int cmp_event_ptr(const void *pa, const void *pb, void *trace) {
  const tr_trace *t = trace;
  const tr_event *a = *(const tr_event *const *)pa, *b = *(const tr_event *const *)pb;
  int c = tr_event_ts_cmp(t, a, b);
  if (c) return c;
  return a->index < b->index ? -1 : a->index > b->index;
}

static an_rank_class name_class(const te_rules *rules, const char *category) {
  const te_settings *set = te_rules_settings(rules);
  if (te_string_list_has(&set->ranks_communication_categories, category)) return AN_RANK_COMM;
  if (te_string_list_has(&set->ranks_memory_categories, category)) return AN_RANK_MEMORY;
  return AN_RANK_COMPUTE;
}

/* How one summary names and classifies its kernels. */
typedef struct namer {
  const te_rules *rules;
  an_hex_mask mask;
  /* the kernel map of the views summarised, whose name table decided each name's class
   * already; NULL for a rank read here */
  const an_kernel_map *kmap;
  pthread_mutex_t *lock; /* serialises rules queries across workers; NULL: one thread */
  /* the readers' one copy of each name (under lock), which their summaries borrow: every
   * rank runs the same kernels; NULL: each summary copies its own */
  ut_strmap *shared;
} namer;

static void lock_rules(const namer *nm) {
  if (nm->lock) pthread_mutex_lock(nm->lock);
}

static void unlock_rules(const namer *nm) {
  if (nm->lock) pthread_mutex_unlock(nm->lock);
}

/* The category of a canonical name: the kernel map's for its name id, else the
 * classifier's (under lock). */
static const char *name_category(const namer *nm, const char *name, uint32_t id) {
  const char *category = an_kernel_map_name_category(nm->kmap, id, NULL);
  if (category) return category;
  lock_rules(nm);
  category = te_rules_classify(nm->rules, "kernel", name, NULL);
  unlock_rules(nm);
  return category ? category : "";
}

/* Index of the kernel's canonical name, classifying a new one. -1: no memory. */
static long name_index(an_rank_part *s, const char *raw, const namer *nm) {
  char buf[1024];
  size_t len = an_canonical_name(raw, strlen(raw), nm->mask, buf, sizeof buf);
  if (len >= sizeof buf) len = sizeof buf - 1; /* long names match on their first 1 KiB */
  size_t before = s->names.n;
  /* a name the kernel map saw keeps the map's copy (the map outlives the summary) */
  uint32_t id = an_kernel_map_find_name(nm->kmap, buf, len);
  const char *copy = id != AN_KMAP_NO_NAME ? an_kernel_map_name(nm->kmap, id) : NULL;
  if (!copy && nm->shared && ut_strmap_find(&s->names, buf, len) < 0) {
    lock_rules(nm);
    long k = ut_strmap_put(nm->shared, buf, len);
    copy = k >= 0 ? nm->shared->keys[k] : NULL;
    unlock_rules(nm);
    if (!copy) return -1;
  }
  long idx =
      copy ? ut_strmap_put_borrowed(&s->names, copy, len) : ut_strmap_put(&s->names, buf, len);
  if (idx < 0 || s->names.n == before) return idx;
  an_rank_kernel *kern = ut_grow(s->kern, &s->cap_kern, s->names.n, sizeof *kern);
  if (!kern) return -1;
  s->kern = kern;
  const char *category = name_category(nm, s->names.keys[idx], id);
  s->kern[idx] = (an_rank_kernel){
      s->names.keys[idx], category, name_class(nm->rules, category), 0, 0, 0, NULL, 0};
  return idx;
}

typedef struct edge {
  double t;
  int delta; /* +1 start, -1 end */
  int cls;
} edge;

/* Not a total order (ties of t and delta differ in cls), and it need not be: edges at
 * one instant are dt = 0 apart, so their order adds nothing to any sum. */
static int cmp_edge(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const edge *a = pa, *b = pb;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return a->delta - b->delta; /* ends first: touching kernels leave no gap */
}

/* Busy time split by class: each instant goes to the first class active (compute, then
 * communication, then memory), so the communication share is the exposed part. */
static bool sweep(an_rank_part *s, const tr_trace *t, const tr_event **k, const uint8_t *cls,
                  size_t n) {
  if (!n) return true;
  edge *e = malloc(2 * n * sizeof *e);
  if (!e) return false;
  double first = tr_event_ts(t, k[0]), last = tr_event_ts(t, k[0]) + tr_event_dur(t, k[0]);
  for (size_t i = 0; i < n; i++) {
    double end = tr_event_ts(t, k[i]) + tr_event_dur(t, k[i]);
    e[2 * i] = (edge){tr_event_ts(t, k[i]), 1, cls[i]};
    e[2 * i + 1] = (edge){end, -1, cls[i]};
    if (end > last) last = end;
  }
  ut_sort(e, 2 * n, sizeof *e, cmp_edge, NULL); /* no merge buffer */
  long active[N_CLASSES] = {0};
  for (size_t i = 0; i < 2 * n; i++) {
    if (i > 0) {
      double dt = e[i].t - e[i - 1].t;
      for (int c = 0; c < N_CLASSES && dt > 0; c++)
        if (active[c] > 0) {
          s->class_us[c] += dt;
          s->busy_us += dt;
          break;
        }
    }
    active[e[i].cls] += e[i].delta;
  }
  free(e);
  s->idle_us = last - first > s->busy_us ? last - first - s->busy_us : 0;
  return true;
}

/* ---------------------------------------------------------------- process groups */

static void sort_ranks(long *r, size_t n) {
  for (size_t i = 1; i < n; i++) /* insertion sort: a group is small */
    for (size_t j = i; j > 0 && r[j - 1] > r[j]; j--) {
      long x = r[j];
      r[j] = r[j - 1];
      r[j - 1] = x;
    }
}

/* Index of the part's group with these ranks (ascending), adding it; -1: no memory. */
static long pg_index(an_rank_part *p, const long *ranks, size_t n, bool from_args) {
  for (size_t i = 0; i < p->n_pgs; i++)
    if (p->pgs[i].n_ranks == n && memcmp(p->pgs[i].ranks, ranks, n * sizeof *ranks) == 0)
      return (long)i;
  an_rank_pg *v = ut_grow(p->pgs, &p->cap_pgs, p->n_pgs + 1, sizeof *v);
  if (v) p->pgs = v;
  long **store = v ? ut_grow(p->pg_store, &p->cap_store, p->n_pgs + 1, sizeof *store) : NULL;
  if (store) p->pg_store = store;
  long *copy = store ? malloc((n ? n : 1) * sizeof *copy) : NULL;
  if (!copy) return -1;
  memcpy(copy, ranks, n * sizeof *copy);
  store[p->n_pgs] = copy;
  v[p->n_pgs] = (an_rank_pg){n, copy, from_args};
  return (long)p->n_pgs++;
}

/* A group's backend_config names no GPU backend: a gloo (CPU) group. Absent: unknown,
 * kept. */
static bool cpu_only(const char *backend) {
  if (!backend || !*backend) return false;
  char low[64];
  size_t n = strlen(backend) < sizeof low - 1 ? strlen(backend) : sizeof low - 1;
  te_ascii_lower(low, backend, n);
  low[n] = '\0';
  return !strstr(low, "nccl") && !strstr(low, "rccl") && !strstr(low, "xccl");
}

/* The TP group an_rank_tp_size describes: the smallest NCCL/RCCL group of consecutive
 * ranks, smaller than the world, that holds the trace's rank; NULL when none. */
static const tr_process_group *tp_group(const tr_trace *t) {
  const tr_trace_meta *m = tr_trace_meta_get(t);
  const tr_process_group *best = NULL;
  for (size_t g = 0; g < m->n_groups; g++) {
    const tr_process_group *pg = &m->groups[g];
    size_t n = pg->n_ranks;
    if (n < 2 || (int64_t)n >= m->world_size || cpu_only(tr_str_get(t, pg->backend))) continue;
    bool holds = false, consecutive = true;
    int64_t lo = pg->ranks[0];
    for (size_t i = 0; i < n; i++) {
      holds = holds || pg->ranks[i] == m->rank;
      if (pg->ranks[i] < lo) lo = pg->ranks[i];
    }
    for (size_t i = 0; i < n && consecutive; i++) /* a permutation of lo .. lo + n - 1 */
      consecutive = pg->ranks[i] >= lo && pg->ranks[i] < lo + (int64_t)n;
    for (size_t i = 0; i < n && consecutive; i++)
      for (size_t j = i + 1; j < n && consecutive; j++) consecutive = pg->ranks[i] != pg->ranks[j];
    if (holds && consecutive && (!best || n < best->n_ranks)) best = pg;
  }
  return best;
}

long an_rank_tp_size(const tr_trace *t) {
  const tr_trace_meta *m = tr_trace_meta_get(t);
  if (m->world_size == TR_NO_ID) return 0;
  if (m->rank == TR_NO_ID) return (long)m->world_size;
  const tr_process_group *pg = tp_group(t);
  return pg ? (long)pg->n_ranks : (long)m->world_size;
}

bool an_rank_in_tp_group(const tr_trace *t, long rank) {
  const tr_trace_meta *m = tr_trace_meta_get(t);
  if (m->world_size == TR_NO_ID || m->rank == TR_NO_ID || rank < 0) return false;
  const tr_process_group *pg = tp_group(t);
  if (!pg) return rank < m->world_size; /* TP spans the world */
  for (size_t i = 0; i < pg->n_ranks; i++)
    if (pg->ranks[i] == rank) return true;
  return false;
}

/* The NCCL/RCCL groups of pg_config with more than one rank. */
static bool config_groups(an_rank_part *p, const tr_trace *t) {
  const tr_trace_meta *m = tr_trace_meta_get(t);
  long ranks[TR_MAX_META_ITEMS];
  for (size_t g = 0; g < m->n_groups; g++) {
    const tr_process_group *pg = &m->groups[g];
    if (pg->n_ranks < 2 || pg->n_ranks > TR_MAX_META_ITEMS || cpu_only(tr_str_get(t, pg->backend)))
      continue;
    for (size_t i = 0; i < pg->n_ranks; i++) ranks[i] = (long)pg->ranks[i];
    sort_ranks(ranks, pg->n_ranks);
    if (pg_index(p, ranks, pg->n_ranks, false) < 0) return false;
  }
  return true;
}

/* "[0, 1, 2, 3]" (Process Group Ranks) into ranks; the count, 0 when it is not a list of
 * ranks. */
static size_t parse_ranks(const char *s, long *ranks, size_t cap) {
  size_t n = 0;
  while (*s == ' ') s++;
  if (*s++ != '[') return 0;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ']') return n;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0 || n == cap) return 0;
    ranks[n++] = v;
    s = end;
  }
}

static double arg_number(const tr_trace *t, tr_kind kind, const tr_event *e, tr_arg key) {
  tr_str v = tr_event_arg(t, kind, e, key);
  double x = v ? strtod(tr_str_get(t, v), NULL) : 0;
  return x > 0 && x < 1e18 ? x : 0;
}

/* What a collective's c10d args say: its process group, group size and message. The kernel's
 * own args first; a kernel that states no message takes what recorded its parameters on the
 * host around its launch (msg: record_param_comms' args or first input, the "nccl:*"
 * region's input, coll_message.h), so like instances match across ranks where only the host
 * recorded the message (older PyTorch, a DDP bucket, a TorchRec all-to-all). */
static bool collective_args(an_rank_part *p, const tr_trace *t, const tr_event *e,
                            const an_coll_message *msg, an_rank_coll_kind *k) {
  k->pg = AN_RANK_NO_PG;
  k->nelems = msg->nelems;
  double size = arg_number(t, TR_KIND_KERNEL, e, TR_ARG_GROUP_SIZE);
  if (!size) size = msg->group_size;
  k->group_size = size >= 2 && size <= TR_MAX_META_ITEMS ? (size_t)size : 0;
  tr_str pr = tr_event_arg(t, TR_KIND_KERNEL, e, TR_ARG_PG_RANKS);
  if (!pr && msg->from) pr = tr_event_arg(t, msg->from_kind, msg->from, TR_ARG_PG_RANKS);
  long ranks[TR_MAX_META_ITEMS];
  size_t n = pr ? parse_ranks(tr_str_get(t, pr), ranks, TR_MAX_META_ITEMS) : 0;
  if (n < 2) return true;
  sort_ranks(ranks, n);
  k->pg = pg_index(p, ranks, n, true);
  return k->pg >= 0;
}

/* Index of the part's kind k (added when new); -1 when out of memory. Kinds are few: a
 * model's collectives repeat a handful of sizes. */
static long kind_index(an_rank_part *p, const an_rank_coll_kind *k) {
  for (size_t i = p->n_kinds; i-- > 0;) {
    const an_rank_coll_kind *x = &p->kinds[i];
    if (x->kernel == k->kernel && x->nelems == k->nelems && x->pg == k->pg &&
        x->group_size == k->group_size && x->context == k->context && x->backward == k->backward)
      return (long)i;
  }
  an_rank_coll_kind *v = ut_grow(p->kinds, &p->cap_kinds, p->n_kinds + 1, sizeof *v);
  if (!v) return -1;
  p->kinds = v;
  v[p->n_kinds] = *k;
  return (long)p->n_kinds++;
}

/* ---------------------------------------------------------------- steps */

/* Per step of st: its ordinal among the part's counted steps (-1 for the others); sets
 * up the part's steps and cpu_ts, their CPU starts. */
static int32_t *step_ordinals(an_rank_part *p, const an_steps *st, double **cpu_ts) {
  int32_t *ord = malloc((st->n ? st->n : 1) * sizeof *ord);
  p->n_steps = an_steps_count(st, p->stage);
  p->steps = calloc(p->n_steps ? p->n_steps : 1, sizeof *p->steps);
  *cpu_ts = malloc((p->n_steps ? p->n_steps : 1) * sizeof **cpu_ts);
  if (!ord || !p->steps || !*cpu_ts) {
    free(ord);
    return NULL;
  }
  size_t m = 0;
  for (size_t j = 0; j < st->n; j++) {
    const an_step *x = &st->steps[j];
    bool mine = !x->warmup && x->stage_id && !strcmp(x->stage_id, p->stage);
    ord[j] = mine ? (int32_t)m : -1;
    if (!mine) continue;
    (*cpu_ts)[m] = x->cpu_ts;
    p->steps[m++].sync_us = -1;
  }
  return ord;
}

/* The counted step of kernel e (a pointer into the trace's kernel array), -1 if none. */
static long kernel_step(const an_steps *st, const int32_t *ord, const tr_event *base,
                        const tr_event *e) {
  size_t i = (size_t)(e - base);
  if (i >= st->n_kernel_events || st->kernel_step[i] < 0) return AN_RANK_NO_STEP;
  return ord[st->kernel_step[i]] >= 0 ? ord[st->kernel_step[i]] : AN_RANK_NO_STEP;
}

/* The counted step kernel e counts in as work (an_steps_launched_step: by its launch call,
 * wherever on the GPU it ran), -1 if none. */
static long work_step(const an_steps *st, const tr_trace *t, const int32_t *ord,
                      const tr_event *base, const tr_event *e) {
  long j = an_steps_launched_step(st, t, (size_t)(e - base));
  return j >= 0 && ord[j] >= 0 ? ord[j] : AN_RANK_NO_STEP;
}

/* ---------------------------------------------------------------- kernels */

/* What add_kernels reads beside the kernels. */
typedef struct part_input {
  const tr_trace *t;
  const an_steps *steps;
  const int32_t *ord;          /* step_ordinals */
  const double *cpu_ts;        /* CPU start per counted step */
  const tr_event *base;        /* the trace's kernel array */
  size_t *per_step;            /* collectives seen so far per counted step */
  an_launch_context *launches; /* the trace's launch contexts; NULL: none read */
  const an_op_nest *ops;       /* a filtered trace's CPU-op nest; NULL: launchers not read */
  const namer *nm;
} part_input;

/* The part's copy of a label (NULL stays NULL); false when out of memory. */
static bool context_copy(an_rank_part *s, const char *label, const char **out) {
  long id = label ? ut_strmap_put(&s->contexts, label, strlen(label)) : -1;
  *out = id >= 0 ? s->contexts.keys[id] : NULL;
  return !label || id >= 0;
}

/* The labelled launch-context family of collective e (the one the overlap table and the
 * time account split its rows by), so the straggler's cost can be told by what the
 * collective does: an input dist, an embedding exchange, a gradient reduce. */
static bool collective_context(an_rank_part *s, const part_input *pi, const tr_event *e,
                               const char *category, const char **out) {
  *out = NULL;
  if (!pi->launches) return true;
  lock_rules(pi->nm); /* the pack's matchers */
  long f = an_launch_context_of(pi->launches, e, category, NULL, 0);
  const char *label = f >= 0 ? an_launch_context_label(pi->launches, f) : NULL;
  unlock_rules(pi->nm);
  return context_copy(s, label, out);
}

/* What the host says of a collective: its message (coll_message.h) and whether it was
 * launched in the backward pass. */
typedef struct host_record {
  an_coll_message msg;
  bool backward;
} host_record;

static bool add_collective(an_rank_part *s, const part_input *pi, const tr_event *e, uint32_t idx,
                           const host_record *rec) {
  an_rank_coll_kind k = {.kernel = idx, .backward = rec->backward};
  double dur = tr_event_dur(pi->t, e);
  if (!collective_args(s, pi->t, e, &rec->msg, &k) ||
      !collective_context(s, pi, e, s->kern[idx].category, &k.context))
    return false;
  long kind = kind_index(s, &k);
  an_rank_collective *v =
      kind >= 0 ? ut_grow(s->colls, &s->cap_colls, s->n_colls + 1, sizeof *v) : NULL;
  if (!v) return false;
  s->colls = v;
  if (!s->n_colls) s->base_us = tr_event_ts(pi->t, e);
  long step = kernel_step(pi->steps, pi->ord, pi->base, e);
  an_rank_collective c = {(uint32_t)kind, (int32_t)step, (float)dur,
                          (float)(tr_event_ts(pi->t, e) + dur - s->base_us)};
  if (step >= 0 && ++pi->per_step[step] == 1) /* the step's first collective */
    s->steps[step].sync_us = tr_event_ts(pi->t, e) + dur - pi->cpu_ts[step];
  s->colls[s->n_colls++] = c;
  s->collective_us += dur;
  return true;
}

/* The launch call of kernel e (a pointer into the trace's kernel array), NULL if none. */
static const tr_event *kernel_launch(const part_input *pi, const tr_event *e) {
  size_t i = (size_t)(e - pi->base);
  return an_steps_launch(pi->steps, i);
}

/* The host records of the collectives among k[0..n) (cls communication), in order into rec:
 * their own args, else the host's record around the launch; the ops are indexed around
 * those launches only, outside the rules lock (a pass over the trace's ops: the other
 * workers keep reading), and only the matchers' questions take it. false when out of
 * memory. */
static bool stage_messages(const part_input *pi, const tr_event **k, const uint8_t *cls, size_t n,
                           host_record *rec) {
  const te_rules *rules = pi->nm->rules;
  an_strtab *keys = an_strtab_create(); /* the keys are not kept: the sizes are */
  double *at = malloc((n ? n : 1) * sizeof *at);
  bool ok = keys && at;
  size_t n_at = 0;
  for (size_t i = 0, j = 0; ok && i < n; i++) {
    if (cls[i] != AN_RANK_COMM) continue;
    const tr_event *launch = kernel_launch(pi, k[i]);
    if (launch) at[n_at++] = tr_event_ts(pi->t, launch);
    /* the packs' dtypes are read-only: no lock */
    an_coll_message_args(pi->t, rules, keys, k[i], &rec[j++].msg);
  }
  ut_sort_f64(at, n_at);
  an_coll_messages *host =
      ok && n_at ? an_coll_messages_create(pi->t, rules, keys, NULL, at, n_at) : NULL;
  ok = ok && (!n_at || host);
  const te_matcher *backward = te_rules_matcher(rules, "collective_backward_op");
  lock_rules(pi->nm); /* the matchers' caches */
  for (size_t i = 0, j = 0; ok && i < n; i++) {
    if (cls[i] != AN_RANK_COMM) continue;
    const tr_event *launch = kernel_launch(pi, k[i]);
    host_record *r = &rec[j++];
    if (!r->msg.key) an_coll_message_host(host, launch, &r->msg);
    r->backward = an_coll_messages_under(host, launch, backward);
  }
  unlock_rules(pi->nm);
  an_coll_messages_destroy(host);
  an_strtab_destroy(keys);
  free(at);
  return ok;
}

/* The collectives among k[0..n), with their messages (stage_messages); index_of as in
 * add_kernels. */
static bool add_collectives(an_rank_part *s, const part_input *pi, const tr_event **k,
                            const uint8_t *cls, size_t n, const uint32_t *index_of) {
  size_t n_coll = 0;
  for (size_t i = 0; i < n; i++) n_coll += cls[i] == AN_RANK_COMM;
  if (!n_coll) return true;
  host_record *rec = malloc(n_coll * sizeof *rec);
  bool ok = rec && stage_messages(pi, k, cls, n, rec);
  for (size_t i = 0, j = 0; ok && i < n; i++)
    if (cls[i] == AN_RANK_COMM)
      ok = add_collective(s, pi, k[i], index_of[k[i]->name] - 1, &rec[j++]);
  free(rec);
  return ok;
}

/* The launching op of each of k[0..n) (index_of as in add_kernels) when the trace was
 * filtered: each sample keeps its own launches, and a peer's lacking a kernel is a dropped
 * launch only when that peer ran its launching op as often (an_rank_kernel.launcher).
 * Counts each op instance once however many kernels it launched. false when out of
 * memory. */
static bool add_launchers(an_rank_part *s, const part_input *pi, const tr_event **k, size_t n,
                          const uint32_t *index_of) {
  if (!pi->ops) return true;
  ut_u64map seen = {0};          /* op instances counted, by address */
  size_t *count = NULL, cap = 0; /* instances per launcher, by its index */
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    const tr_event *launch = kernel_launch(pi, k[i]);
    const tr_event *op = launch ? an_op_nest_around(pi->ops, launch) : NULL;
    if (!op) continue;
    const char *name = tr_str_get(pi->t, op->name);
    long id = ut_strmap_put(&s->launchers, name, strlen(name));
    size_t *c = id >= 0 ? ut_grow_zeroed(count, &cap, s->launchers.n, sizeof *c) : NULL;
    if (!(ok = c != NULL)) break;
    count = c;
    uint64_t had;
    if (!ut_u64map_get(&seen, (uintptr_t)op, &had)) {
      ok = ut_u64map_put(&seen, (uintptr_t)op, 1);
      count[id]++;
    }
    an_rank_kernel *kn = &s->kern[index_of[k[i]->name] - 1];
    if (!kn->launcher) kn->launcher = s->launchers.keys[id];
  }
  for (size_t i = 0; ok && i < s->names.n; i++) {
    an_rank_kernel *kn = &s->kern[i];
    if (kn->launcher)
      kn->launcher_ops = count[ut_strmap_find(&s->launchers, kn->launcher, strlen(kn->launcher))];
  }
  ut_u64map_free(&seen);
  free(count);
  return ok;
}

static bool add_kernels(an_rank_part *s, const part_input *pi, const tr_event **k, uint8_t *cls,
                        size_t n, const namer *nm) {
  /* one entry per distinct name, so at most one per kernel and per string of the trace:
   * reserved at that bound (pages never written cost no memory) and trimmed after, where
   * doubling would leave each smaller copy behind as a hole (10 MB at 262,145 names) */
  const tr_trace *t = pi->t;
  size_t n_strings = tr_trace_string_count(t);
  size_t bound = n_strings < n ? n_strings : n;
  uint32_t *index_of = calloc(n_strings ? n_strings : 1, sizeof *index_of); /* tr_str: idx + 1 */
  s->kern = malloc((bound ? bound : 1) * sizeof *s->kern);
  if (!s->kern || !index_of) {
    free(index_of);
    return false;
  }
  s->cap_kern = bound ? bound : 1;
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    tr_str name = k[i]->name;
    if (!(ok = name < n_strings)) break; /* not a string of t: a caller's error */
    if (!index_of[name]) {
      long idx = name_index(s, tr_str_get(t, name), nm);
      if (!(ok = idx >= 0)) break;
      index_of[name] = (uint32_t)idx + 1;
    }
    uint32_t idx = index_of[name] - 1;
    double dur = tr_event_dur(t, k[i]);
    s->kern[idx].total_us += dur;
    s->kern[idx].launches++;
    if (dur > s->kern[idx].max_us) s->kern[idx].max_us = dur;
    cls[i] = (uint8_t)s->kern[idx].cls;
    /* by launch: a pipelined rank's GPU windows cut its queue at arbitrary points */
    long step = work_step(pi->steps, pi->t, pi->ord, pi->base, k[i]);
    if (cls[i] != AN_RANK_COMM && step >= 0) s->steps[step].compute_us += dur;
  }
  ok = ok && add_collectives(s, pi, k, cls, n, index_of) && add_launchers(s, pi, k, n, index_of);
  free(index_of);
  s->kern = ut_shrink(s->kern, &s->cap_kern, s->names.n, sizeof *s->kern);
  /* a rank's summary lives until every rank is read: no doubling slack kept */
  if (s->n_colls) s->colls = ut_shrink(s->colls, &s->cap_colls, s->n_colls, sizeof *s->colls);
  return ok;
}

/* One stage of the view: its kernels in start order, their classes, steps and groups. */
static bool summarize_stage(an_rank_part *p, const an_stage_kernels *sk, const namer *nm,
                            const tr_trace *t, const an_steps *st, an_launch_context *lx,
                            const an_op_nest *ops) {
  size_t n = sk->n, nk = 0;
  const tr_event **k = malloc((n ? n : 1) * sizeof *k);
  uint8_t *cls = malloc(n ? n : 1);
  double *cpu_ts = NULL;
  int32_t *ord = step_ordinals(p, st, &cpu_ts);
  size_t *per_step = calloc(p->n_steps ? p->n_steps : 1, sizeof *per_step);
  bool ok = k && cls && ord && per_step && config_groups(p, t);
  if (ok) {
    memcpy(k, sk->kernels, n * sizeof *k);
    ut_sort(k, n, sizeof *k, cmp_event_ptr, (void *)(uintptr_t)t); /* in order already: one run */
    part_input pi = {t,        st, ord, cpu_ts, tr_trace_events(t, TR_KIND_KERNEL, &nk),
                     per_step, lx, ops, nm};
    ok = add_kernels(p, &pi, k, cls, n, nm) && sweep(p, t, k, cls, n);
  }
  free(cpu_ts);
  free(per_step);
  free(ord);
  free(cls);
  free(k);
  return ok;
}

/* The rank of a trace: its distributedInfo.rank, else the input's. */
static long rank_of(const an_rank_input *in, const tr_trace *t) {
  int64_t meta = tr_trace_meta_get(t)->rank;
  return meta != TR_NO_ID && meta >= 0 && meta <= LONG_MAX ? (long)meta : in->rank;
}

/* The processes of t carrying kernels: Kineto writes a GPU's kernels under its device
 * index, so more than one is a file holding several GPUs (a node's ranks merged into one
 * trace), of which the view reads one. 0 when out of memory. */
static size_t gpu_count(const tr_trace *t) {
  size_t n = 0, gpus = 0;
  const tr_event *k = tr_trace_events(t, TR_KIND_KERNEL, &n);
  ut_u64map pids = {0};
  tr_str last = 0;
  for (size_t i = 0; i < n; i++) {
    tr_str pid = tr_event_pid(t, &k[i]);
    if (i && pid == last) continue; /* a GPU's kernels mostly come together */
    last = pid;
    if (!ut_u64map_put(&pids, pid, 1)) {
      ut_u64map_free(&pids);
      return 0;
    }
  }
  gpus = pids.n;
  ut_u64map_free(&pids);
  return gpus;
}

/* Whether t was filtered down to GPU work (a directory run checks every rank it reads, not
 * only the tables' one: review 7 defect 3's sampled ranks). false when out of memory. */
static bool filtered(const an_trace_view *v, const te_rules *rules, bool *out) {
  const an_trace_filter *f = an_trace_view_filter(v); /* the view's, shared with the Limits */
  if (!f) return false;
  const te_settings *set = te_rules_settings(rules);
  *out = an_trace_filter_says(f, set->report_filtered_min_runtime_calls,
                              set->report_filtered_min_op_pct);
  return true;
}

static an_rank_summary *summarize(const an_rank_input *in, const an_trace_view *v,
                                  const an_steps *lent, const te_rules *rules,
                                  const an_kernel_map *kmap, pthread_mutex_t *lock,
                                  ut_strmap *shared) {
  an_rank_summary *s = calloc(1, sizeof *s);
  an_steps own = {0};
  namer nm = {rules, an_hex_mask_from_rules(rules), kmap, lock, shared};
  bool ok = s && (s->path = strdup(in->path)) != NULL;
  /* the reader keeps the top-level host_name wherever it sits, also after traceEvents,
   * where discovery's probe of the file's head does not look */
  const char *host = ok ? tr_str_get(v->trace, tr_trace_meta_get(v->trace)->host_name) : "";
  if (ok && *host) ok = (s->host = strdup(host)) != NULL;
  if (ok) ok = filtered(v, rules, &s->filtered);
  if (ok) ok = (s->gpus = gpu_count(v->trace)) > 0 || !v->pid;
  if (ok && !lent) {
    lock_rules(&nm);
    ok = an_steps_build(v, rules, &own) == AN_OK;
    unlock_rules(&nm);
  }
  const an_steps *st = lent ? lent : &own;
  long rank = rank_of(in, v->trace);
  /* the view's, shared with the time account and the overlap table */
  an_launch_context *lx = ok ? an_trace_view_launches(v) : NULL;
  ok = ok && lx;
  /* a sample's launching ops (the filter's count built the nest already) */
  const an_op_nest *ops = ok && s->filtered ? an_trace_view_ops(v) : NULL;
  ok = ok && (ops || !s->filtered);
  for (size_t i = 0; ok && i < v->n_stages; i++) {
    an_rank_part *p = add_part(s, rank, v->stages[i].stage->id);
    ok = p && summarize_stage(p, &v->stages[i], &nm, v->trace, st, lx, ops);
  }
  an_steps_free(&own);
  if (!ok) {
    summary_free(s);
    return NULL;
  }
  return s;
}

an_rank_summary *an_rank_summarize(const an_rank_input *in, const an_trace_view *v,
                                   const an_steps *steps, const te_rules *rules,
                                   const an_kernel_map *kmap) {
  return summarize(in, v, steps, rules, kmap, NULL, NULL);
}

/* ------------------------------------------------------------------ plain data */

size_t an_rank_summary_parts(const an_rank_summary *s) { return s ? s->n_parts : 0; }

bool an_rank_summary_data(const an_rank_summary *s, size_t i, an_rank_data *out) {
  if (!s || i >= s->n_parts) return false;
  const an_rank_part *p = s->parts[i];
  *out = (an_rank_data){.rank = p->rank,
                        .path = p->path,
                        .filtered = p->filtered,
                        .gpus = p->gpus,
                        .stage = p->stage,
                        .busy_us = p->busy_us,
                        .idle_us = p->idle_us,
                        .collective_us = p->collective_us,
                        .n_steps = p->n_steps,
                        .steps = p->steps,
                        .n_pgs = p->n_pgs,
                        .pgs = p->pgs,
                        .n_kernels = p->names.n,
                        .kernels = p->kern,
                        .n_kinds = p->n_kinds,
                        .kinds = p->kinds,
                        .base_us = p->base_us,
                        .n_collectives = p->n_colls,
                        .collectives = p->colls};
  memcpy(out->class_us, p->class_us, sizeof p->class_us);
  return true;
}

static bool kinds_from_data(an_rank_part *p, const an_rank_data *d) {
  for (size_t i = 0; i < d->n_kinds; i++) {
    an_rank_coll_kind k = d->kinds[i];
    bool ok = k.kernel < d->n_kernels &&
              (k.pg == AN_RANK_NO_PG || (k.pg >= 0 && (size_t)k.pg < d->n_pgs)) &&
              context_copy(p, k.context, &k.context);
    if (!ok || kind_index(p, &k) != (long)i) return false; /* a repeated kind: not triage's */
  }
  return true;
}

static bool collectives_from_data(an_rank_part *p, const an_rank_data *d) {
  p->colls = malloc((d->n_collectives ? d->n_collectives : 1) * sizeof *p->colls);
  if (!p->colls) return false;
  for (size_t i = 0; i < d->n_collectives; i++) {
    const an_rank_collective *c = &d->collectives[i];
    if (c->kind >= d->n_kinds || c->step < AN_RANK_NO_STEP ||
        (c->step >= 0 && (size_t)c->step >= d->n_steps))
      return false;
    p->colls[i] = *c;
  }
  p->n_colls = p->cap_colls = d->n_collectives;
  p->base_us = d->base_us;
  return true;
}

/* Copies d's arrays into p, checking what a report triage wrote holds. */
static bool part_from_data(an_rank_part *p, const an_rank_data *d) {
  p->cap_kern = d->n_kernels ? d->n_kernels : 1;
  p->kern = calloc(p->cap_kern, sizeof *p->kern);
  p->steps = malloc((d->n_steps ? d->n_steps : 1) * sizeof *p->steps);
  bool ok = p->kern && p->steps;
  for (size_t k = 0; ok && k < d->n_kernels; k++) {
    const an_rank_kernel *x = &d->kernels[k];
    ok = ut_strmap_put(&p->names, x->name, strlen(x->name)) == (long)k && x->cls <= AN_RANK_MEMORY;
    if (ok) /* a repeated name is not a report triage wrote */
      p->kern[k] = (an_rank_kernel){p->names.keys[k],
                                    x->category ? x->category : "",
                                    x->cls,
                                    x->total_us,
                                    x->launches,
                                    x->max_us,
                                    NULL,
                                    0};
    if (ok && x->launcher) { /* the part keeps its own copy */
      long id = ut_strmap_put(&p->launchers, x->launcher, strlen(x->launcher));
      ok = id >= 0;
      if (ok) {
        p->kern[k].launcher = p->launchers.keys[id];
        p->kern[k].launcher_ops = x->launcher_ops;
      }
    }
  }
  for (size_t i = 0; ok && i < d->n_pgs; i++)
    ok = pg_index(p, d->pgs[i].ranks, d->pgs[i].n_ranks, d->pgs[i].from_args) == (long)i;
  if (!ok || !kinds_from_data(p, d) || !collectives_from_data(p, d)) return false;
  p->n_steps = d->n_steps;
  if (d->n_steps) memcpy(p->steps, d->steps, d->n_steps * sizeof *p->steps);
  return true;
}

an_rank_summary *an_rank_summary_from_data(const an_rank_data *d) {
  an_rank_summary *s = calloc(1, sizeof *s);
  bool ok = s && (s->path = strdup(d->path ? d->path : "")) != NULL && d->stage;
  if (ok) s->filtered = d->filtered;
  if (ok) s->gpus = d->gpus;
  an_rank_part *p = ok ? add_part(s, d->rank, d->stage) : NULL;
  if (p) {
    p->busy_us = d->busy_us;
    p->idle_us = d->idle_us;
    p->collective_us = d->collective_us;
    memcpy(p->class_us, d->class_us, sizeof p->class_us);
  }
  if (p && part_from_data(p, d)) return s;
  summary_free(s);
  return NULL;
}

/* ------------------------------------------------------------------ workers */

typedef struct pool {
  const an_rank_input *in;
  an_rank_summary **out;
  size_t *todo; /* indices without a summary yet */
  size_t n_todo, next;
  const te_rules *rules;
  const an_ranks_options *opt;
  pthread_mutex_t lock; /* the rules, next, the failure, warnings and names */
  ut_strmap names;      /* the kernel names of the ranks read here, one copy each */
  an_status status;
  an_ranks_failure *fail;
  an_ranks_failure *unread; /* parallel to in: path set for a file the reader refused */
} pool;

static void locked_warn(void *ctx, const tr_warning *w) {
  pool *p = ctx;
  pthread_mutex_lock(&p->lock);
  p->opt->warn(p->opt->warn_ctx, w);
  pthread_mutex_unlock(&p->lock);
}

static an_status read_one(pool *p, size_t i, tr_error *te) {
  tr_read_options ro = {0};
  ro.chunk_size = p->opt->reader_chunk_size;
  if (p->opt->warn) {
    ro.warn = locked_warn;
    ro.warn_ctx = p;
  }
  tr_trace *t = tr_trace_read(p->in[i].path, &ro, te);
  if (!t) return te->code == TR_ERR_NOMEM ? AN_ERR_NOMEM : AN_ERR_INPUT;
  an_trace_view v;
  pthread_mutex_lock(&p->lock); /* the rules' match caches */
  an_status rc = an_collective_names_split(t, p->rules, NULL);
  if (rc == AN_OK) rc = an_trace_view_build(t, p->in[i].stage, p->rules, NULL, &v);
  pthread_mutex_unlock(&p->lock);
  if (rc == AN_OK) {
    p->out[i] = summarize(&p->in[i], &v, NULL, p->rules, NULL, &p->lock, &p->names);
    if (!p->out[i]) rc = AN_ERR_NOMEM;
    an_trace_view_free(&v);
  }
  tr_trace_destroy(t); /* the events go; the summary stays */
  return rc;
}

static void *worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    bool stop = p->next >= p->n_todo || p->status != AN_OK;
    size_t i = stop ? 0 : p->todo[p->next++];
    pthread_mutex_unlock(&p->lock);
    if (stop) return NULL;
    tr_error te = {0};
    an_status rc = read_one(p, i, &te);
    if (rc == AN_OK) continue;
    pthread_mutex_lock(&p->lock);
    if (rc == AN_ERR_INPUT) { /* the others still make a section; the run says which not */
      p->unread[i] = (an_ranks_failure){p->in[i].path, p->in[i].rank, te};
      pthread_mutex_unlock(&p->lock);
      continue;
    }
    if (p->status == AN_OK) {
      p->status = rc;
      p->fail->path = p->in[i].path;
      p->fail->error = te;
      if (rc == AN_ERR_NOMEM) snprintf(p->fail->error.message, sizeof te.message, "out of memory");
    }
    pthread_mutex_unlock(&p->lock);
  }
}

static an_status read_all(pool *p) {
  an_status rc = an_workers_run(an_workers_count(p->opt->workers, p->n_todo), worker, p);
  return rc != AN_OK ? rc : p->status;
}

/* ------------------------------------------------------------------ the section */

bool an_rank_own(an_rank_owner *o, void *p) {
  if (!p) return false;
  void **v = ut_grow(o->allocs, &o->cap_allocs, o->n_allocs + 1, sizeof *v);
  if (!v) {
    free(p);
    return false;
  }
  o->allocs = v;
  o->allocs[o->n_allocs++] = p;
  return true;
}

static int cmp_imbalance(const void *pa, const void *pb) {
  const an_imbalance_row *a = pa, *b = pb;
  if (a->spread_pct != b->spread_pct) return a->spread_pct > b->spread_pct ? -1 : 1;
  return strcmp(a->kernel, b->kernel);
}

/* One imbalance row candidate: name over the members of group g. */
static bool imbalance_of(an_rank_part *const *parts, const an_rank_row *rows, size_t n, size_t g,
                         const char *name, const te_settings *set, an_imbalance_row *out) {
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    if (rows[i].group != g) continue;
    long idx = ut_strmap_find(&parts[i]->names, name, strlen(name));
    const an_rank_kernel *kn = idx >= 0 ? &parts[i]->kern[idx] : NULL;
    double us = kn ? kn->total_us : 0;
    if (kn && kn->cls == AN_RANK_COMM) return false; /* waits, not work */
    /* a sampled trace drops kernels: one it lacks may have run (review 7: "min 0.000") */
    if (!kn && parts[i]->filtered) return false;
    if (kn) out->category = kn->category;
    if (first || us < out->min_us) out->min_us = us, out->min_rank = rows[i].rank;
    if (first || us > out->max_us) out->max_us = us, out->max_rank = rows[i].rank;
    first = false;
  }
  const an_rank_row *max_row = NULL;
  for (size_t i = 0; i < n; i++)
    if (rows[i].group == g && rows[i].rank == out->max_rank) max_row = &rows[i];
  if (first || out->max_us <= 0 || !max_row) return false;
  out->group = g;
  out->spread_pct = (out->max_us - out->min_us) / out->max_us * 100;
  return out->spread_pct > set->ranks_imbalance_pct &&
         out->max_us >= max_row->busy_us * set->ranks_imbalance_min_share_pct / 100;
}

/* Kernels whose time differs across the ranks of a group by more than ranks.imbalance_pct
 * of the largest (bounded 0-100 %, a kernel missing on a rank is 100 %). */
static bool imbalance(an_rank_owner *o, an_rank_part *const *parts, const an_rank_row *rows,
                      size_t n, size_t ng, const te_rules *rules, an_rank_report *rep) {
  const te_settings *set = te_rules_settings(rules);
  an_imbalance_row *out = NULL;
  size_t n_out = 0, cap = 0;
  for (size_t g = 0; g < ng; g++) {
    ut_strmap seen = {0};
    for (size_t i = 0; i < n; i++) {
      if (rows[i].group != g) continue;
      for (size_t k = 0; k < parts[i]->names.n; k++) {
        const char *name = parts[i]->names.keys[k];
        size_t before = seen.n;
        if (ut_strmap_put(&seen, name, strlen(name)) < 0) goto nomem;
        an_imbalance_row row = {0};
        if (seen.n == before || !imbalance_of(parts, rows, n, g, name, set, &row)) continue;
        an_imbalance_row *v = ut_grow(out, &cap, n_out + 1, sizeof *v);
        if (!v || !(row.kernel = an_strtab_cstr(o->strings, name))) goto nomem;
        out = v;
        out[n_out++] = row;
      }
    }
    ut_strmap_free(&seen);
    continue;
  nomem:
    ut_strmap_free(&seen);
    free(out);
    return false;
  }
  if (n_out) qsort(out, n_out, sizeof *out, cmp_imbalance);
  if (out && !an_rank_own(o, out)) return false;
  rep->imbalance = out;
  rep->n_imbalance = n_out;
  return true;
}

/* Each counted step's work: its kernels' time less its collectives', whose time holds the
 * waits for other ranks (their doing, never this rank's noise). */
static bool step_times(an_rank_owner *o, const an_rank_part *s, an_rank_row *row) {
  if (!s->n_steps) return true;
  double *v = malloc(s->n_steps * sizeof *v);
  if (!an_rank_own(o, v)) return false;
  for (size_t k = 0; k < s->n_steps; k++) v[k] = s->steps[k].compute_us;
  row->step_us = v;
  return true;
}

static bool fill_row(const an_rank_part *s, an_strtab *st, an_rank_row *row) {
  *row = (an_rank_row){.rank = s->rank,
                       .busy_us = s->busy_us,
                       .idle_us = s->idle_us,
                       .n_steps = s->n_steps,
                       .filtered = s->filtered,
                       .gpus = s->gpus};
  row->path = an_strtab_cstr(st, s->path);
  if (s->host && !(row->host = an_strtab_cstr(st, s->host))) return false;
  row->compute_us = s->class_us[AN_RANK_COMPUTE];
  row->communication_us = row->exposed_comm_us = s->class_us[AN_RANK_COMM];
  row->memory_us = s->class_us[AN_RANK_MEMORY];
  row->collective_us = s->collective_us;
  size_t top = SIZE_MAX;
  double total = 0;
  for (size_t k = 0; k < s->names.n; k++) {
    total += s->kern[k].total_us;
    if (top == SIZE_MAX || s->kern[k].total_us > s->kern[top].total_us) top = k;
  }
  if (top != SIZE_MAX) {
    row->top_kernel = an_strtab_cstr(st, s->names.keys[top]);
    row->top_kernel_us = s->kern[top].total_us;
    row->top_kernel_share_pct = total > 0 ? s->kern[top].total_us / total * 100 : 0;
    if (!row->top_kernel) return false;
  }
  return row->path != NULL;
}

/* The section of one stage: parts[0..n) hold its ranks, ascending. */
static bool stage_report(an_rank_owner *o, an_rank_part *const *parts, size_t n,
                         const te_rules *rules, an_rank_report *rep) {
  an_rank_row *rows = calloc(n, sizeof *rows);
  if (!an_rank_own(o, rows)) return false;
  const te_stage *st = te_rules_stage_by_id(rules, parts[0]->stage);
  rep->stage = st && st->id ? st->id : an_strtab_cstr(o->strings, parts[0]->stage);
  rep->rows = rows;
  rep->n_rows = n;
  for (size_t i = 0; i < n; i++)
    if (parts[i]->n_steps > rep->n_steps) rep->n_steps = parts[i]->n_steps;
  bool ok = rep->stage != NULL;
  for (size_t i = 0; i < n && ok; i++)
    ok = fill_row(parts[i], o->strings, &rows[i]) && step_times(o, parts[i], &rows[i]);
  an_rank_group *groups = NULL;
  size_t ng = 0;
  if (ok) ok = an_rank_match_stage(o, parts, n, rules, rows, &groups, &ng);
  rep->groups = groups;
  rep->n_groups = ng;
  if (ok) ok = imbalance(o, parts, rows, n, ng, rules, rep);
  if (ok)
    ok = an_rank_excess_cause(o, parts, n, rules, groups, ng, rep->imbalance, rep->n_imbalance);
  return ok;
}

/* The parts of every summary, by stage order, then rank, then path. */
typedef struct part_order {
  const te_rules *rules;
} part_order;

static int stage_rank(const te_rules *rules, const char *id) {
  const te_stage *st = te_rules_stage_by_id(rules, id);
  return st ? st->order : INT32_MAX;
}

static int cmp_part(const void *pa, const void *pb, void *ctx) {
  const an_rank_part *a = *(an_rank_part *const *)pa, *b = *(an_rank_part *const *)pb;
  const part_order *po = ctx;
  int oa = stage_rank(po->rules, a->stage), ob = stage_rank(po->rules, b->stage);
  if (oa != ob) return oa < ob ? -1 : 1;
  int c = strcmp(a->stage, b->stage);
  if (c) return c;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return strcmp(a->path, b->path);
}

/* Parts of one (stage, rank) after the first (a rank read twice) are left out. */
static size_t unique_parts(an_rank_part **v, size_t n) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!m || v[m - 1]->rank != v[i]->rank || strcmp(v[m - 1]->stage, v[i]->stage) != 0)
      v[m++] = v[i];
  return m;
}

static an_status assemble(an_rank_owner *o, an_rank_summary **sums, size_t n_sums,
                          const te_rules *rules, an_ranks_result *out) {
  size_t n = 0; /* a file the reader refused has no summary */
  for (size_t i = 0; i < n_sums; i++) n += sums[i] ? sums[i]->n_parts : 0;
  an_rank_part **v = malloc((n ? n : 1) * sizeof *v);
  out->reports = calloc(n ? n : 1, sizeof *out->reports);
  if (!v || !out->reports) return free(v), AN_ERR_NOMEM;
  n = 0;
  for (size_t i = 0; i < n_sums; i++)
    for (size_t k = 0; sums[i] && k < sums[i]->n_parts; k++) v[n++] = sums[i]->parts[k];
  part_order po = {rules};
  ut_sort(v, n, sizeof *v, cmp_part, &po);
  n = unique_parts(v, n);
  an_status rc = AN_OK;
  for (size_t i = 0; i < n && rc == AN_OK;) {
    size_t j = i + 1;
    while (j < n && strcmp(v[j]->stage, v[i]->stage) == 0) j++;
    if (j - i >= 2 && !stage_report(o, v + i, j - i, rules, &out->reports[out->n_reports++]))
      rc = AN_ERR_NOMEM;
    i = j;
  }
  free(v);
  return rc;
}

/* The files the reader refused, in input order, into out (which takes the array). */
static void keep_unread(pool *p, size_t n, an_ranks_result *out) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (p->unread[i].path) p->unread[m++] = p->unread[i];
  out->n_unread = m;
  out->unread = p->unread; /* compacted in place */
}

an_status an_ranks_build(const an_rank_input *in, size_t n, an_rank_summary **pre,
                         const te_rules *rules, const an_ranks_options *opt, an_ranks_result *out,
                         an_ranks_failure *fail) {
  memset(out, 0, sizeof *out);
  an_rank_owner *o = calloc(1, sizeof *o);
  an_rank_summary **sums = calloc(n ? n : 1, sizeof *sums);
  pool p = {.in = in, .n_todo = 0, .rules = rules, .opt = opt, .status = AN_OK, .fail = fail};
  if (o) o->strings = an_strtab_create();
  p.todo = malloc((n ? n : 1) * sizeof *p.todo);
  p.unread = calloc(n ? n : 1, sizeof *p.unread);
  out->owned = o;
  if (!o || !o->strings || !sums || !p.todo || !p.unread) {
    for (size_t i = 0; pre && i < n; i++) summary_free(pre[i]);
    free(p.todo);
    free(p.unread);
    free(sums);
    return AN_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    sums[i] = pre ? pre[i] : NULL;
    if (!sums[i]) p.todo[p.n_todo++] = i;
  }
  p.out = sums;
  pthread_mutex_init(&p.lock, NULL);
  an_status rc = read_all(&p);
  pthread_mutex_destroy(&p.lock);
  free(p.todo);
  keep_unread(&p, n, out);
  if (rc == AN_OK) rc = assemble(o, sums, n, rules, out);
  /* the summaries are only needed to build the section */
  for (size_t i = 0; i < n; i++) summary_free(sums[i]);
  free(sums);
  ut_strmap_free(&p.names);
  return rc;
}

void an_ranks_result_free(an_ranks_result *r) {
  if (!r) return;
  free(r->reports);
  free(r->unread);
  an_rank_owner *o = r->owned;
  if (o) {
    for (size_t i = 0; i < o->n_allocs; i++) free(o->allocs[i]);
    free(o->allocs);
    an_strtab_destroy(o->strings);
  }
  free(o);
  memset(r, 0, sizeof *r);
}

void an_rank_summary_free(an_rank_summary *s) { summary_free(s); }
