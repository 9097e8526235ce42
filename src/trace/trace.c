/*
 * trace/trace.c - the tr_trace object: made empty, sealed after a read (trace_internal.h),
 * queried through the accessors of trace.h, destroyed.
 */
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

#include "trace/trace_internal.h"
#include "util/search.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ lifetime */

static void trace_free_contents(tr_trace *t) {
  for (int k = 0; k < N_KINDS; k++) free(t->ev[k].v);
  free(t->py.v);
  free(t->py.runs);
  tr_map64_free(&t->py.dur_wide);
  tr_map64_free(&t->py.thread_last);
  free(t->py.names);
  free(t->py.seen);
  free(t->tn);
  tr_map64_free(&t->ext_wide);
  tr_map64_free(&t->corr_wide);
  tr_map64_free(&t->dur_wide);
  tr_map64_free(&t->ts_wide);
  tr_ctxtab_free(&t->ctx);
  tr_map64_free(&t->ctx_wide);
  tr_map32_free(&t->corr_map);
  tr_map64_free(&t->corr_map_wide);
  free(t->corr_pairs);
  free(t->sample);
  for (size_t i = 0; i < t->meta.n_groups; i++) free(t->groups[i].ranks);
  free(t->groups);
  free(t->devices);
  free(t->procs);
  tr_argtab_free(&t->args);
  for (int k = 0; k < N_KINDS; k++) tr_argidx_free(&t->argidx[k]);
  tr_intern_destroy(t->in);
  free(t->path);
}

tr_trace *tr_trace_new(const char *path) {
  tr_trace *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->path = strdup(path ? path : "");
  t->in = tr_intern_create();
  t->meta.rank = t->meta.world_size = TR_NO_ID;
  t->head.ts_div = 1000.0;
  if (!t->path || !t->in) {
    tr_trace_destroy(t);
    return NULL;
  }
  return t;
}

void tr_trace_destroy(tr_trace *t) {
  if (!t) return;
  trace_free_contents(t);
  free(t);
}

/* The correlation map from the pairs, when a stored event will ask it (corr_pairs). -1
 * when out of memory. */
static int map_correlations(tr_trace *t) {
  if (!t->corr_wanted) {
    t->corr_pairs =
        ut_shrink(t->corr_pairs, &t->cap_corr_pairs, t->n_corr_pairs, sizeof *t->corr_pairs);
    return 0;
  }
  for (size_t i = 0; i < t->n_corr_pairs; i++)
    if (tr_map32_put(&t->corr_map, t->corr_pairs[i].corr, t->corr_pairs[i].ext) != 0) return -1;
  free(t->corr_pairs);
  t->corr_pairs = NULL;
  t->n_corr_pairs = t->cap_corr_pairs = 0;
  return 0;
}

/* Trims the arrays to their length and seals the context table. */
static void shrink_to_fit(tr_trace *t) {
  for (int k = 0; k < N_KINDS; k++) {
    ev_vec *v = &t->ev[k];
    v->v = ut_shrink(v->v, &v->cap, v->n, sizeof *v->v);
  }
  tr_ctxtab_seal(&t->ctx);
  t->head.ctx = t->ctx.v;
  t->head.ext_base = t->ext_base.base;
  t->head.corr_base = t->corr_base.base;
  py_vec *pv = &t->py;
  tr_map64_free(&pv->thread_last); /* read-time only */
  free(pv->seen);
  pv->seen = NULL;
  pv->seen_words = 0;
  pv->v = ut_shrink(pv->v, &pv->cap, pv->n, sizeof *pv->v);
  pv->runs = ut_shrink(pv->runs, &pv->cap_runs, pv->n_runs, sizeof *pv->runs);
  pv->names = ut_shrink(pv->names, &pv->cap_names, pv->n_names, sizeof *pv->names);
  /* a dense index that cannot be allocated leaves the sparse one, which answers the same */
  for (int k = 0; k < N_KINDS; k++) (void)tr_argidx_seal(&t->argidx[k], t->ev[k].n);
  tr_argtab_seal(&t->args);
  t->procs = ut_shrink(t->procs, &t->cap_procs, t->n_procs, sizeof *t->procs);
  t->meta.processes = t->procs;
  t->meta.n_processes = t->n_procs;
}

int tr_trace_seal(tr_trace *t) {
  shrink_to_fit(t);
  return map_correlations(t);
}

/* ------------------------------------------------------------------ accessors */

const char *tr_trace_path(const tr_trace *t) { return t->path; }

const char *tr_str_get(const tr_trace *t, tr_str s) { return tr_intern_get(t->in, s); }
size_t tr_trace_string_count(const tr_trace *t) { return tr_intern_count(t->in); }

tr_str tr_str_intern(tr_trace *t, const char *s, size_t len) {
  uint32_t id = tr_intern_put(t->in, s, len);
  return id == UINT32_MAX ? 0 : id;
}

void tr_trace_rename_event(tr_trace *t, tr_kind kind, size_t i, tr_str name) {
  if ((unsigned)kind < N_KINDS && i < t->ev[kind].n) t->ev[kind].v[i].name = name;
}

const tr_event *tr_trace_events(const tr_trace *t, tr_kind kind, size_t *n) {
  if ((unsigned)kind >= N_KINDS) {
    if (n) *n = 0;
    return NULL;
  }
  if (n) *n = t->ev[kind].n;
  return t->ev[kind].v;
}

const tr_pyframe *tr_trace_pyframes(const tr_trace *t, size_t *n) {
  if (n) *n = t->py.n;
  return t->py.v;
}

bool tr_trace_pyframes_sorted(const tr_trace *t) { return !t->py.unsorted; }

const tr_str *tr_trace_pyframe_names(const tr_trace *t, size_t *n) {
  if (n) *n = t->py.n_names;
  return t->py.names;
}

const tr_pyframe_run *tr_trace_pyframe_runs(const tr_trace *t, size_t *n) {
  if (n) *n = t->py.n_runs;
  return t->py.runs;
}

const tr_pyframe_run *tr_pyframe_run_of(const tr_trace *t, size_t i) {
  size_t past; /* past the last run with first <= i (run 0 starts the trace) */
  UT_PARTITION_POINT(past, 1, t->py.n_runs, k, t->py.runs[k].first <= i);
  return &t->py.runs[past - 1];
}

/* The double store_dur or store_ts kept under key (0.0 if none). */
static double wide_dur(const tr_map64 *wide, int64_t key) {
  int64_t bits;
  double dur = 0.0;
  if (tr_map64_get(wide, key, &bits)) memcpy(&dur, &bits, sizeof dur);
  return dur;
}

double tr_pyframe_dur_wide(const tr_trace *t, const tr_pyframe *f) {
  return wide_dur(&t->py.dur_wide, (int64_t)(f - t->py.v));
}

const tr_thread_name *tr_trace_thread_names(const tr_trace *t, size_t *n) {
  if (n) *n = t->n_tn;
  return t->tn;
}

/* The External id offset of the last pair with correlation offset ck. */
static bool last_pair(const tr_trace *t, uint32_t ck, uint32_t *ek) {
  for (size_t i = t->n_corr_pairs; i-- > 0;)
    if (t->corr_pairs[i].corr == ck) {
      *ek = t->corr_pairs[i].ext;
      return true;
    }
  return false;
}

int64_t tr_trace_external_for_correlation(const tr_trace *t, int64_t correlation) {
  if (correlation == TR_NO_ID) return TR_NO_ID;
  uint32_t ck = tr_id_find(&t->corr_base, correlation), ek;
  int64_t ext;
  if (ck != TR_OFF_WIDE) {
    if (!(t->corr_wanted ? tr_map32_get(&t->corr_map, ck, &ek) : last_pair(t, ck, &ek)))
      return TR_NO_ID;
    if (ek == TR_OFF_ABSENT) return TR_NO_ID;
    if (ek != TR_OFF_WIDE) return tr_id_decode(&t->ext_base, ek);
  }
  return tr_map64_get(&t->corr_map_wide, correlation, &ext) ? ext : TR_NO_ID;
}

void tr_trace_drop_unasked_correlations(tr_trace *t) {
  if (t->corr_wanted) return;
  free(t->corr_pairs);
  t->corr_pairs = NULL;
  t->n_corr_pairs = t->cap_corr_pairs = 0;
  tr_map64_free(&t->corr_map_wide);
}

static int64_t event_id(const tr_idbase *b, const tr_map64 *wide, uint32_t off, uint32_t index) {
  if (off == TR_OFF_ABSENT) return TR_NO_ID;
  if (off != TR_OFF_WIDE) return tr_id_decode(b, off);
  int64_t v;
  return tr_map64_get(wide, index, &v) ? v : TR_NO_ID;
}

int64_t tr_event_id_slow(const tr_trace *t, const tr_event *e, bool correlation) {
  return correlation ? event_id(&t->corr_base, &t->corr_wide, e->corr_off, e->index)
                     : event_id(&t->ext_base, &t->ext_wide, e->ext_off, e->index);
}

double tr_event_dur_wide(const tr_trace *t, const tr_event *e) {
  return wide_dur(&t->dur_wide, e->index);
}

double tr_event_ts_wide(const tr_trace *t, const tr_event *e) {
  return wide_dur(&t->ts_wide, e->index);
}

uint32_t tr_event_ctx_wide(const tr_trace *t, const tr_event *e) {
  int64_t pos = 0;
  (void)tr_map64_get(&t->ctx_wide, e->index, &pos);
  return (uint32_t)pos;
}

static const char *const k_arg_keys[TR_ARG_COUNT] = {
    [TR_ARG_INPUT_DIMS] = "Input Dims",
    [TR_ARG_INPUT_TYPE] = "Input type",
    [TR_ARG_CONCRETE_INPUTS] = "Concrete Inputs",
    [TR_ARG_IN_MSG_NELEMS] = "In msg nelems",
    [TR_ARG_OUT_MSG_NELEMS] = "Out msg nelems",
    [TR_ARG_GROUP_SIZE] = "Group size",
    [TR_ARG_DTYPE] = "dtype",
    [TR_ARG_PG_NAME] = "Process Group Name",
    [TR_ARG_PG_DESC] = "Process Group Description",
    [TR_ARG_PG_RANKS] = "Process Group Ranks",
    [TR_ARG_COLLECTIVE_NAME] = "Collective name",
    [TR_ARG_BYTES] = "bytes",
    [TR_ARG_WAIT_ON_STREAM] = "wait_on_stream",
    [TR_ARG_WAIT_ON_RECORD_CORR] = "wait_on_cuda_event_record_corr_id"};

const char *tr_arg_key(tr_arg key) { return (unsigned)key < TR_ARG_COUNT ? k_arg_keys[key] : ""; }

tr_str tr_event_arg(const tr_trace *t, tr_kind kind, const tr_event *e, tr_arg key) {
  if ((unsigned)kind >= N_KINDS || (unsigned)key >= TR_ARG_COUNT || !e) return 0;
  const ev_vec *v = &t->ev[kind];
  uintptr_t at = (uintptr_t)e, base = (uintptr_t)v->v;
  if (at < base || at >= base + v->n * sizeof *e || (at - base) % sizeof *e) return 0;
  uint32_t id = tr_argidx_get(&t->argidx[kind], (at - base) / sizeof *e);
  return tr_argtab_value(&t->args, id, key);
}

uint64_t tr_trace_args_dropped(const tr_trace *t) { return t->args_dropped; }

const char *tr_trace_sample_text(const tr_trace *t) { return t->sample ? t->sample : ""; }
const tr_trace_meta *tr_trace_meta_get(const tr_trace *t) { return &t->meta; }
uint64_t tr_trace_event_count(const tr_trace *t) { return t->n_events; }
uint64_t tr_trace_skipped_count(const tr_trace *t) { return t->n_skipped; }
uint64_t tr_trace_json_bytes(const tr_trace *t) { return t->json_bytes; }
uint64_t tr_trace_fast_count(const tr_trace *t) { return t->n_fast; }
uint64_t tr_trace_ahead_count(const tr_trace *t) { return t->n_ahead; }
