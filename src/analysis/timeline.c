/*
 * analysis/timeline.c - the time account (timeline.h): windows of each trace, the sweep of
 * each window's kernels, the gaps' causes (timeline_host.c), the collectives' waits
 * (waits.h), then the sums per stage.
 *
 * Cost: the kernels of each trace are bucketed by window and sorted (O(n log n)), and once
 * more for the windows that hold a collective once the waits are known (collective_idle);
 * the host index covers only the threads that launched a gap's next kernel; everything
 * else is linear. No second pass over the file: only the kept events are read.
 */
#include "analysis/timeline.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/coll_message.h"
#include "analysis/kmap_internal.h"
#include "analysis/launch_context.h"
#include "analysis/timeline_internal.h"
#include "analysis/waits.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/search.h"
#include "util/sort.h"
#include "util/vec.h"

/* Longest canonical name classified (longer names match on their first part). */
#define TL_NAME_MAX 1024

/* A kernel of a window while it is accounted; its launch call, collective name and message
 * are looked up from its position when needed (kernel_launch, sweep): 24 bytes, not 56, for
 * the widest window. */
typedef struct tl_kernel {
  int64_t start, end;
  tr_str stream;
  uint32_t pos; /* among the trace's kernel events, which are in file order: a total order;
                   TL_TAIL: the previous step's kernels running on (tl_tail) */
} tl_kernel;

#define TL_TAIL UINT32_MAX

/* Where steps' windows were cut (steps.h: window_end), the kernels of a step that run past
 * its window's end: the union of their parts after it, [start, end), busy time of the
 * next step's window (`to`), so the steps partition the time: nothing in two steps. */
typedef struct tl_tail {
  const an_step *to;
  int64_t start, end;
} tl_tail;

typedef struct tl_window {
  size_t stage; /* rules stage slot */
  const an_step *step;
  const char *path;
  an_time_account acc;
  size_t cause_lo, cause_hi; /* its causes in tl->causes */
  /* Collective kernel time launched in its step, wherever the kernels ran: the part of
   * an_step.launched_us that holds waits for other ranks (an_step_account.work_us) */
  int64_t launched_comm_ns;
} tl_window;

/* Busy time of a stage outside the counted windows' idle: a window's span (its own idle is
 * in-step) or a kernel outside every window, opened by the GPU event at pos (a window's
 * first kernel). The gaps of their union are the stage's idle outside the steps. */
typedef struct tl_busy {
  size_t stage;
  int64_t start, end;
  uint32_t pos;
  bool window; /* a window's span */
} tl_busy;

typedef struct tl_coll {
  size_t window;
  const char *name;
  uint32_t ordinal;    /* among the window's instances of the same name */
  bool first;          /* the window's first collective */
  const char *msg;     /* its message, NULL when the trace has no such args */
  double bytes;        /* its message in bytes, 0 when no size or format says it */
  const char *context; /* its labelled launch-context family (launch_context.h), or NULL */
  int64_t start, dur, floor;
  uint32_t pos; /* its GPU event (tl_kernel.pos) */
  /* the part of its wait no other GPU event of its window covers (collective_idle) */
  int64_t idle_wait;
  double wait_us;
  double per_byte_us, latency_us; /* its group's per-byte floor (waits.h), 0 none */
  bool alone;                     /* no like instance: its wait is unknown */
  an_floor_basis basis;
  uint8_t unknown;     /* why alone: TL_FEW, TL_UNSIZED, TL_LATENCY, else 0 */
  uint32_t floor_from; /* the instance (tl->coll, sorted) whose time set the floor, or
                          AN_WAIT_LATENCY */
  uint32_t like;       /* instances in its group */
  bool lower;          /* alone, yet a like message in its step took less: its wait_us is a
                          lower bound (like_in_step_waits), the rest unknown */
} tl_coll;

enum { TL_FEW = 1, TL_UNSIZED = 2, TL_LATENCY = 3 };

typedef struct i64_vec {
  int64_t *v;
  size_t n, cap;
} i64_vec;

/* A window's causes by (kind, what, location), open addressing: slot[i] is an index into
 * tl->causes or SIZE_MAX. */
typedef struct cause_table {
  size_t *slot;
  size_t cap; /* a power of two */
} cause_table;

/* Which window each kernel of a trace counts in (kernel_window), kept past the trace's
 * account: its collectives' idle parts need their waits, known once every trace is in
 * (collective_idle). */
typedef struct tl_trace_windows {
  long *step_window;  /* by step: window index or -1 */
  long *stage_window; /* by stage slot (trace without steps): window index or -1 */
  size_t first_window;
} tl_trace_windows;

typedef struct tl_stage_work {
  i64_vec gaps, kernels; /* lengths, for the medians */
  size_t n_steps;
  size_t cause_lo, cause_hi; /* the stage's merged causes in tl->causes */
} tl_stage_work;

struct an_timeline {
  const te_rules *rules;
  const te_settings *set;
  an_strtab *strings;
  size_t n_st;               /* rules stages */
  an_stage_timeline *stages; /* by stage slot */
  bool *ran;                 /* the stage ran kernels */
  tl_stage_work *work;       /* by stage slot, while building */
  tl_window *win;
  size_t n_win, cap_win;
  tl_coll *coll;
  size_t n_coll, cap_coll;
  tl_portion *por; /* the portions of the windows split but not yet gathered (gather_causes) */
  size_t n_por, cap_por;
  size_t gathered;         /* the windows before it have their causes */
  cause_table cause_slots; /* gather_causes' table, kept for the next window */
  an_idle_cause *causes;
  size_t n_causes, cap_causes;
  an_step_account *steps;
  an_collective_time *colls;
  size_t *coll_stage; /* the stage slot of each row */
  size_t n_colls;
  size_t n_traces;        /* inputs accounted */
  tl_trace_windows *maps; /* by input, while building */
};

static const char NOT_COLLECTIVE[] = "";
/* 1 byte per us is 1e6 B/s, 1e-3 GB/s */
#define US_PER_BYTE_TO_GBPS 1e-3

/* ---------------------------------------------------------------- small helpers */

/* Room for `more` values, exactly: the count is known. */
static bool i64_reserve(i64_vec *x, size_t more) {
  int64_t *p = ut_reserve(x->v, &x->cap, x->n + more, sizeof *p);
  if (!p) return false;
  x->v = p;
  return true;
}

static bool i64_push(i64_vec *x, int64_t v) {
  int64_t *p = ut_grow(x->v, &x->cap, x->n + 1, sizeof *p);
  if (!p) return false;
  x->v = p;
  x->v[x->n++] = v;
  return true;
}

/* The lower median of v[0..n) (reordered in place), 0 when empty. */
static int64_t median(int64_t *v, size_t n) { return n ? ut_select_i64(v, n, (n - 1) / 2) : 0; }

static size_t stage_slot(const an_timeline *tl, const char *stage_id) {
  size_t s = 0;
  while (s < tl->n_st && te_rules_stage(tl->rules, s)->id != stage_id) s++;
  return s;
}

/* ---------------------------------------------------------------- one trace */

typedef struct tl_trace {
  const an_timeline_input *in;
  const tr_trace *t;
  const char **coll_name; /* by string id: canonical name, NOT_COLLECTIVE, or NULL: unasked */
  const char **coll_cat;  /* by string id: a collective's category, once coll_name is set */
  uint8_t *graph_call;    /* by string id: 0 unasked, 1 no, 2 a graph launch call */
  const te_matcher *graph_matcher; /* graph_replay_launch, looked up once */
  const tr_event *kev;             /* the trace's kernel events */
  long *step_window;               /* by step: window index or -1 */
  long *stage_window;              /* by stage slot (trace without steps): window index or -1 */
  size_t first_window;
  tl_gap *gaps;
  size_t n_gaps, cap_gaps;
  tl_busy *busy; /* the stages' busy parts outside the windows' idle (outside_gaps) */
  size_t n_busy, cap_busy;
  tl_gap *outside; /* the long gaps of their union (tl_gap.outside) */
  size_t n_outside, cap_outside;
  an_coll_messages *messages; /* the host's messages, made when a kernel states none */
  bool messages_asked;
  bool nomem;    /* a busy part could not be kept (kernel_window) */
  int64_t ahead; /* tl_gap.ahead so far, in window order */
  /* each stage's streams' median launch lag in the counted steps (launch_leads), by stage
   * slot then stream */
  struct tl_stream_lag *lags;
  size_t n_lags;
  /* rules_slot's last question (0: none) and its answer */
  uint16_t memo_view_slot;
  size_t memo_slot;
} tl_trace;

static const char *collective_name(an_timeline *tl, tl_trace *c, tr_str name);

/* The lookup of the messages recorded on the host (coll_message.h) around the launch calls
 * of the collective kernels that state no message, the only times message_key asks about:
 * the CPU ops by the view's nest (an_trace_view_ops: the opaque-op split, the roofline,
 * graph staging and the filter counts walk the same one), the regions by a pass over them
 * and a sort of those few. While another thread builds the nest (nest_ahead), the one
 * built already, else the ops around those times like the regions: sorting every CPU op
 * here held the time account, the longest serial phase (hta15: ~22 ms). NULL: out of
 * memory. */
static an_coll_messages *host_messages(an_timeline *tl, tl_trace *c) {
  size_t nk = 0, n = 0;
  const tr_event *kev = tr_trace_events(c->t, TR_KIND_KERNEL, &nk);
  const an_steps *s = c->in->steps;
  double *at = malloc((nk ? nk : 1) * sizeof *at);
  if (!at) return NULL;
  for (size_t i = 0; i < nk && i < s->n_kernel_events; i++)
    if (an_steps_launch(s, i) && collective_name(tl, c, kev[i].name) &&
        !tr_event_arg(c->t, TR_KIND_KERNEL, &kev[i], TR_ARG_IN_MSG_NELEMS))
      at[n++] = tr_event_ts(c->t, an_steps_launch(s, i));
  ut_sort_f64(at, n);
  const an_trace_view *v = c->in->view;
  const an_op_nest *ops = c->in->nest_ahead ? an_trace_view_ops_built(v) : an_trace_view_ops(v);
  an_coll_messages *m = !ops && !c->in->nest_ahead
                            ? NULL /* out of memory */
                            : an_coll_messages_create(c->t, tl->rules, tl->strings, ops, at, n);
  free(at);
  return m;
}

/* A collective kernel's message from its args ("In msg nelems", "Group size", "dtype"), else
 * from what recorded its parameters on the host (coll_message.h), as one interned key; NULL
 * when the trace records neither. *bytes: its size in bytes, 0 when no size and format say
 * it. */
static const char *message_key(an_timeline *tl, tl_trace *c, const tr_event *k,
                               const tr_event *launch, double *bytes) {
  an_coll_message m;
  if (!an_coll_message_args(c->t, tl->rules, tl->strings, k, &m) && launch) {
    if (!c->messages_asked) {
      c->messages_asked = true;
      c->messages = host_messages(tl, c); /* out of memory: no sizes */
    }
    an_coll_message_host(c->messages, launch, &m);
  }
  *bytes = m.key ? m.bytes : 0;
  return m.key;
}

/* Whether a launch call replays a graph (matcher graph_replay_launch). */
static bool graph_launch(tl_trace *c, const tr_event *launch) {
  const te_matcher *m = c->graph_matcher;
  if (!launch || !m) return false;
  uint8_t *x = &c->graph_call[launch->name];
  if (!*x) {
    const char *name = tr_str_get(c->t, launch->name);
    *x = te_matcher_match(m, name, strlen(name)) ? 2 : 1;
  }
  return *x == 2;
}

/* The canonical name of a collective kernel, NULL for any other. */
static const char *collective_name(an_timeline *tl, tl_trace *c, tr_str name) {
  if (!c->coll_name[name]) {
    char buf[TL_NAME_MAX];
    const char *canon = buf, *cat = NULL;
    size_t len = 0;
    /* the kernel map decided every kernel name of its views once: a name per distinct
     * kernel classified again cost 7% of a run on 262,145 distinct names */
    uint32_t id = an_kernel_map_name_id(c->in->kmap, c->in->kmap_view, c->t, name);
    if (id != AN_KMAP_NO_NAME) {
      canon = an_kernel_map_name(c->in->kmap, id);
      cat = an_kernel_map_name_category(c->in->kmap, id, NULL);
      len = canon ? strlen(canon) : 0;
    }
    if (!cat || !canon) {
      const char *raw = tr_str_get(c->t, name);
      canon = buf;
      len = an_canonical_name(raw, strlen(raw), an_hex_mask_from_rules(tl->rules), buf, sizeof buf);
      if (len >= sizeof buf) len = sizeof buf - 1;
      cat = te_rules_classify(tl->rules, "kernel", buf, NULL);
    }
    c->coll_cat[name] = cat;
    c->coll_name[name] = te_string_list_has(&tl->set->ranks_communication_categories, cat)
                             ? an_strtab_intern(tl->strings, canon, len)
                             : NOT_COLLECTIVE;
    if (!c->coll_name[name]) return NULL; /* out of memory: counted as compute */
  }
  return c->coll_name[name] == NOT_COLLECTIVE ? NULL : c->coll_name[name];
}

static long add_window(an_timeline *tl, size_t stage, const an_step *step, const char *path) {
  tl_window *w = ut_grow(tl->win, &tl->cap_win, tl->n_win + 1, sizeof *w);
  if (!w) return -2;
  tl->win = w;
  tl->win[tl->n_win] = (tl_window){stage, step, path, {0}, 0, 0, 0};
  tl->ran[stage] = true;
  if (step) tl->work[stage].n_steps++;
  return (long)tl->n_win++;
}

/* The trace's windows: its counted steps, else one per stage that ran kernels. */
static bool make_windows(an_timeline *tl, tl_trace *c) {
  const an_steps *s = c->in->steps;
  const an_trace_view *v = c->in->view;
  for (size_t j = 0; j < s->n; j++) {
    size_t slot = stage_slot(tl, s->steps[j].stage_id);
    if (slot == tl->n_st) continue;
    if (s->steps[j].warmup) {
      tl->stages[slot].n_warmup++;
      continue;
    }
    if ((c->step_window[j] = add_window(tl, slot, &s->steps[j], c->in->path)) < -1) return false;
    an_stage_timeline *st = &tl->stages[slot];
    if (!st->marker) { /* the first trace's steps describe the stage's */
      st->marker = an_step_source_id(s->source);
      st->marker_kinds = s->n_markers;
    }
    if (s->source != AN_STEPS_GPU_ANNOTATION)
      st->marker_ns += tl_ns(s->steps[j].cpu_end) - tl_ns(s->steps[j].cpu_ts);
    st->marker_nested += s->steps[j].nested;
    if (tl_ns(s->steps[j].nested_us) > st->marker_nested_ns)
      st->marker_nested_ns = tl_ns(s->steps[j].nested_us);
    if (s->steps[j].other && tl_ns(s->steps[j].other_us) > st->marker_other_ns) {
      /* the trace's string: interned, it outlives the trace */
      if (!(st->marker_other = an_strtab_cstr(tl->strings, s->steps[j].other))) return false;
      st->marker_other_ns = tl_ns(s->steps[j].other_us);
    }
    if (s->steps[j].nested) /* every step with a nested marker launched only inside it */
      st->marker_nested_all = (st->marker_nested == s->steps[j].nested || st->marker_nested_all) &&
                              s->steps[j].nested_launches_all;
  }
  for (size_t j = 0; j < s->n; j++) { /* kernels placed by GPU time, once per stage */
    size_t slot = stage_slot(tl, s->steps[j].stage_id);
    if (slot < tl->n_st && s->placed_by_gpu_time && !tl->stages[slot].placed_by_gpu_time)
      tl->stages[slot].placed_by_gpu_time = s->placed_by_gpu_time;
  }
  for (size_t k = 0; !s->n && k < v->n_stages; k++) {
    size_t slot = stage_slot(tl, v->stages[k].stage->id);
    if (slot == tl->n_st || !v->stages[k].n) continue;
    if ((c->stage_window[slot] = add_window(tl, slot, NULL, c->in->path)) < -1) return false;
  }
  return true;
}

/* The window of kernel event i, or -1 (outside every counted step, or not a kernel). */
static long window_of(const tl_trace *c, size_t i, size_t slot) {
  const an_steps *s = c->in->steps;
  if (an_steps_kernel_setup(s, i)) return -1;
  if (!s->n) return c->stage_window[slot];
  int32_t j = i < s->n_kernel_events ? s->kernel_step[i] : -1;
  return j < 0 ? -1 : c->step_window[j];
}

static int cmp_kernel(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const tl_kernel *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end > b->end ? -1 : 1;
  return a->pos < b->pos ? -1 : (a->pos > b->pos);
}

/* The launch call of a kernel (NULL when the trace has none). */
static const tr_event *kernel_launch(const tl_trace *c, const tl_kernel *k) {
  const an_steps *s = c->in->steps;
  return an_steps_launch(s, k->pos);
}

/* The length of [x0, x1) inside [a, b), 0 when they do not meet. */
static int64_t overlap_ns(int64_t x0, int64_t x1, int64_t a, int64_t b) {
  int64_t lo = x0 > a ? x0 : a, hi = x1 < b ? x1 : b;
  return hi > lo ? hi - lo : 0;
}

/* ---------------------------------------------------------------- one window */

/* A stream seen in a window: its latest kernel end (same-stream overlap). */
typedef struct lane {
  tr_str stream;
  int64_t end;
  uint32_t pos; /* the event that ends last on the stream so far */
} lane;

typedef struct lanes {
  lane *v;
  size_t n, cap;
} lanes;

/* The lane of a stream, added at end -1 when new (NULL: out of memory). */
static lane *lane_of(lanes *l, tr_str stream) {
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].stream == stream) return &l->v[i];
  lane *v = ut_grow(l->v, &l->cap, l->n + 1, sizeof *v);
  if (!v) return NULL;
  l->v = v;
  l->v[l->n] = (lane){stream, -1, 0};
  return &l->v[l->n++];
}

/* Whether kernel k, opening a gap that started at g0, is its stream's first kernel of the
 * window and waited through the gap for work outside it: launched before the gap's second
 * half, so most of the gap it sat queued. */
static bool waited_outside(const tl_trace *c, const tl_kernel *k, int64_t g0, bool first_of_stream,
                           int64_t gap_min) {
  const tr_event *launch = first_of_stream ? kernel_launch(c, k) : NULL;
  if (!launch || k->start - g0 < gap_min) return false;
  int64_t queued_from = tl_ns(tr_event_ts(c->t, launch)); /* the call's start: issued then */
  return queued_from <= g0 + (k->start - g0) / 2;
}

/* The first kernel the window keeps: the last stream opener that waited for outside work
 * (timeline.h) when the kernels before it are at most lead_in_pct of the window's kernel
 * time (else the opener is a side stream waiting on its own step's event), else 0. */
static size_t window_start(const tl_trace *c, const tl_kernel *k, size_t n, int64_t gap_min,
                           double lead_in_pct, lanes *l) {
  size_t cut = 0;
  int64_t uend = n ? k[0].end : 0, total = 0, lead_in = 0;
  l->n = 0;
  for (size_t i = 0; i < n; i++) {
    if (k[i].pos == TL_TAIL) { /* busy, not a kernel of the window */
      if (k[i].end > uend) uend = k[i].end;
      continue;
    }
    size_t before = l->n;
    lane *ln = lane_of(l, k[i].stream);
    if (!ln) return 0;
    if (i > 0 && k[i].start > uend && waited_outside(c, &k[i], uend, l->n > before, gap_min)) {
      cut = i;
      lead_in = total;
    }
    if (k[i].end > uend) uend = k[i].end;
    total += k[i].end - k[i].start;
  }
  return (double)lead_in * 100.0 <= lead_in_pct * (double)total ? cut : 0;
}

typedef struct sweep_out {
  an_time_account *acc;
  tl_trace *c;
  size_t window;
  tl_stage_work *work;
  int64_t span0; /* the window's first kernel's start (tl_gap.span0) */
} sweep_out;

static bool add_gap(an_timeline *tl, sweep_out *o, int64_t g0, tr_str prev, const tl_kernel *next) {
  int64_t gap = next->start - g0;
  if (gap < tl_ns(tl->set->timeline_gap_min_us)) {
    o->acc->idle_by_kind_ns[AN_IDLE_SHORT] += gap;
    o->acc->n_short_gaps++;
    if (gap > o->acc->short_max_ns) o->acc->short_max_ns = gap;
    return true;
  }
  o->acc->n_gaps++;
  tl_gap *v = ut_grow(o->c->gaps, &o->c->cap_gaps, o->c->n_gaps + 1, sizeof *v);
  if (!v) return false;
  o->c->gaps = v;
  /* an alloc stall's release lead lies after the previous counted step (tl_gap.lead_from) */
  double from = tl->win[o->window].step ? -INFINITY : NAN;
  if (from == -INFINITY && o->window > o->c->first_window && tl->win[o->window - 1].step)
    from = tl->win[o->window - 1].step->cpu_end;
  o->c->gaps[o->c->n_gaps++] = (tl_gap){o->window,    g0,    next->start, kernel_launch(o->c, next),
                                        next->stream, false, from,        o->c->ahead,
                                        o->span0,     prev};
  return i64_push(&o->work->gaps, gap);
}

/* The labelled launch-context family of collective kernel event e (launch_context.h: the
 * input dist, the gradient reduce of a DDP hook, ...), as the overlap table splits the
 * collective's rows; NULL when none or unlabelled, or out of memory. */
static const char *launch_family(tl_trace *c, const tr_event *e) {
  an_launch_context *lx = an_trace_view_launches(c->in->view); /* the view's, shared */
  long f = an_launch_context_of(lx, e, c->coll_cat[e->name], NULL, 0);
  return f >= 0 ? an_launch_context_label(lx, f) : NULL;
}

/* A collective kernel k of canonical name `name`. */
/* The window of the step kernel e counts in an_step.launched_us (the step holding its launch
 * call, else its start), or -1: placed by GPU time, or in a warm-up or no step. */
static long launch_window(const tl_trace *c, const tl_kernel *k) {
  long j = an_steps_launched_step(c->in->steps, c->t, k->pos);
  return j < 0 ? -1 : c->step_window[j];
}

static bool add_collective(an_timeline *tl, sweep_out *o, const tl_kernel *k, const char *name,
                           bool first) {
  const tr_event *e = &o->c->kev[k->pos];
  const char *context = launch_family(o->c, e);
  uint32_t ordinal = 0;
  for (size_t i = tl->n_coll; i-- > 0 && tl->coll[i].window == o->window;)
    ordinal += tl->coll[i].name == name && tl->coll[i].context == context;
  double bytes = 0;
  const char *msg = message_key(tl, o->c, e, kernel_launch(o->c, k), &bytes);
  int64_t dur = tl_ns(tr_event_dur(o->c->t, e)); /* whole, where a cut window clips k */
  dur = dur > 0 ? dur : 0;
  tl_coll *v = ut_grow(tl->coll, &tl->cap_coll, tl->n_coll + 1, sizeof *v);
  if (!v) return false;
  tl->coll = v;
  tl->coll[tl->n_coll++] = (tl_coll){.window = o->window,
                                     .name = name,
                                     .ordinal = ordinal,
                                     .first = first,
                                     .msg = msg,
                                     .bytes = msg ? bytes : 0,
                                     .context = context,
                                     .start = k->start,
                                     .dur = dur,
                                     .pos = k->pos,
                                     .basis = AN_FLOOR_NAME};
  o->acc->collective_ns += dur;
  long w = launch_window(o->c, k);
  if (w >= 0) tl->win[w].launched_comm_ns += dur;
  return true;
}

/* Whether neither of the trace's GPU events a and b is a copy-engine transfer (the packs'
 * overlap.copy_engine_event_categories): only a kernel launches early on its predecessor
 * (programmatic dependent launch); a copy or memset overlapping its stream's neighbour is
 * the two clocks' skew (a DtoH copy 2 us into the reduction it reads, on an sm80 GPU that
 * has no such launch). Called for the rare overlaps only. */
static bool both_kernels(const an_timeline *tl, const tl_trace *c, uint32_t a, uint32_t b) {
  const te_string_list *copies = &tl->set->overlap_copy_engine_event_categories;
  const char *ca = tr_str_get(c->t, tr_event_cat(c->t, &c->kev[a]));
  const char *cb = tr_str_get(c->t, tr_event_cat(c->t, &c->kev[b]));
  return ca && cb && !te_string_list_has(copies, ca) && !te_string_list_has(copies, cb);
}

/* Busy, idle and gaps, same-stream overlap and collectives of sorted kernels k[0..n). */
static bool sweep(an_timeline *tl, sweep_out *o, const tl_kernel *k, size_t n, lanes *l) {
  an_time_account *a = o->acc;
  int64_t seg = k[0].start, uend = k[0].end;
  tr_str ustream = k[0].stream; /* the stream of the kernel that ends at uend */
  bool ok = true, first_coll = true;
  const int64_t pdl_min = tl_ns(tl->set->timeline_same_stream_overlap_min_us);
  const int64_t lead_min = tl_ns(tl->set->timeline_launch_gap_max_us);
  l->n = 0;
  for (size_t i = 0; ok && i < n; i++) {
    if (i > 0 && k[i].start > uend) {
      a->busy_ns += uend - seg;
      ok = add_gap(tl, o, uend, ustream, &k[i]);
      seg = k[i].start;
    }
    if (k[i].end > uend) {
      uend = k[i].end;
      ustream = k[i].stream;
    }
    a->kernel_ns += k[i].end - k[i].start;
    if (k[i].pos == TL_TAIL) continue; /* the previous step's kernels: busy, no kernel here */
    lane *ln = lane_of(l, k[i].stream);
    if (!ln) return false;
    int64_t early = (ln->end < k[i].end ? ln->end : k[i].end) - k[i].start;
    if (early > 0 && early >= pdl_min && both_kernels(tl, o->c, ln->pos, k[i].pos))
      a->pdl_wait_ns += early; /* under pdl_min: clock rounding */
    if (k[i].end > ln->end) {
      ln->end = k[i].end;
      ln->pos = k[i].pos;
    }
    const tr_event *L = kernel_launch(o->c, &k[i]);
    if (graph_launch(o->c, L)) a->graph_kernel_ns += k[i].end - k[i].start;
    /* queued past one launch's cost: the host is ahead of the GPU (tl_gap.ahead) */
    if (L && k[i].start - tl_ns(tr_event_ts(o->c->t, L) + tr_event_dur(o->c->t, L)) >= lead_min &&
        k[i].start > o->c->ahead)
      o->c->ahead = k[i].start;
    a->n_kernels++;
    ok = ok && i64_push(&o->work->kernels, k[i].end - k[i].start);
    const char *coll = ok ? collective_name(tl, o->c, o->c->kev[k[i].pos].name) : NULL;
    if (coll) {
      ok = add_collective(tl, o, &k[i], coll, first_coll);
      first_coll = false;
    }
  }
  a->busy_ns += uend - seg;
  a->span_ns = uend - k[0].start;
  a->idle_ns = a->span_ns - a->busy_ns;
  return ok;
}

/* Window w's kernels k[0..*n) take the previous step's tail when it runs on into this
 * step (k has room for one more), from this step's first start to its own window's end;
 * then the part of its own kernels past that end (cut windows) becomes the next step's
 * tail (tail->to set), clipped off here. */
static void pass_tails(const tl_trace *c, const tl_window *win, tl_kernel *k, size_t *n,
                       tl_tail *tail) {
  const an_steps *s = c->in->steps;
  const an_step *st = win->step;
  if (!st) return;
  int64_t clip = st->window_end < INFINITY ? tl_ns(st->window_end) : INT64_MAX;
  int64_t from = tl_ns(st->gpu_ts), to = tail->end < clip ? tail->end : clip;
  if (tail->to == st && from < to) k[(*n)++] = (tl_kernel){from, to, 0, TL_TAIL};
  *tail = (tl_tail){NULL, 0, 0};
  if (clip == INT64_MAX || st + 1 >= s->steps + s->n) return;
  for (size_t i = 0; i < *n; i++)
    if (k[i].end > clip) {
      *tail = (tl_tail){st + 1, clip, k[i].end > tail->end ? k[i].end : tail->end};
      k[i].end = k[i].start < clip ? clip : k[i].start;
    }
}

/* Stage slot's busy part [start, end) opened by GPU event pos (tl_busy). */
static bool add_busy(tl_trace *c, size_t slot, int64_t start, int64_t end, uint32_t pos,
                     bool window) {
  tl_busy *v = ut_grow(c->busy, &c->cap_busy, c->n_busy + 1, sizeof *v);
  if (!v) return false;
  c->busy = v;
  c->busy[c->n_busy++] = (tl_busy){slot, start, end, pos, window};
  return true;
}

/* ---------------------------------------------------------------- graph replays' holes */

/* A gap between nodes of one graph replay: from the end of its nodes so far to its next. */
typedef struct tl_hole {
  int64_t start, end;
} tl_hole;

static int cmp_hole(const void *pa, const void *pb, void *unused) {
  (void)unused;
  const tl_hole *a = pa, *b = pb;
  return a->start < b->start ? -1 : a->start > b->start;
}

static int64_t kernel_corr(const tl_trace *c, const tl_kernel *k) {
  return k->pos == TL_TAIL ? TR_NO_ID : tr_event_correlation(c->t, &c->kev[k->pos]);
}

/* The slot of correlation id corr among 2^bits (a multiplicative hash). */
static size_t corr_slot(int64_t corr, unsigned bits) {
  return (size_t)(((uint64_t)corr * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* How many of window kernels k[0..n) have a correlation id in each of 2^*bits slots
 * (corr_slot), up to 2; NULL out of memory. A kernel alone in its slot shares its id with
 * no other: it opens no replay gap. */
static uint8_t *corr_counts(const tl_trace *c, const tl_kernel *k, size_t n, unsigned *bits) {
  for (*bits = 1; ((size_t)1 << *bits) < 2 * n; ++*bits) {
  }
  uint8_t *count = calloc((size_t)1 << *bits, 1);
  for (size_t i = 0; count && i < n; i++) {
    int64_t corr = kernel_corr(c, &k[i]);
    uint8_t *x = corr == TR_NO_ID ? NULL : &count[corr_slot(corr, *bits)];
    if (x && *x < 2) ++*x;
  }
  return count;
}

/* The gaps of at least gap_min between nodes of one graph replay among window kernels
 * k[0..n) (by start), into *out by start: a replay's nodes share its launch's correlation
 * id, which no other launch gives two events. Only kernels whose id another may share
 * (corr_counts) go through the map: an eager trace's every kernel was a put, 4.2 M
 * instructions of hta_async x 2's time account. False when out of memory. */
static bool replay_gaps(const tl_trace *c, const tl_kernel *k, size_t n, int64_t gap_min,
                        tl_hole **out, size_t *n_out) {
  ut_u64map last = {0}; /* correlation -> the latest end of the replay's nodes so far */
  size_t cap = 0;
  unsigned bits = 0;
  uint8_t *count = corr_counts(c, k, n, &bits);
  bool ok = count != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    int64_t corr = kernel_corr(c, &k[i]);
    if (corr == TR_NO_ID || count[corr_slot(corr, bits)] < 2) continue;
    uint64_t v = 0;
    bool seen = ut_u64map_get(&last, (uint64_t)corr, &v);
    int64_t end = (int64_t)v;
    if (seen && k[i].start - end >= gap_min) {
      tl_hole *h = ut_grow(*out, &cap, *n_out + 1, sizeof *h);
      if (!(ok = h != NULL)) break;
      *out = h;
      h[(*n_out)++] = (tl_hole){end, k[i].start};
    }
    if (!seen || k[i].end > end) ok = ut_u64map_put(&last, (uint64_t)corr, (uint64_t)k[i].end);
  }
  ut_u64map_free(&last);
  free(count);
  if (ok && *n_out) ut_sort(*out, *n_out, sizeof **out, cmp_hole, NULL);
  return ok;
}

/* The idle inside one graph replay of window account a: of each gap between its nodes
 * (replay_gaps), the time no stream ran (the window's gaps g[0..ng), in order) and the
 * time other streams did (review 18 defect 7: hta_multistream5's 27.63 ms between a memset
 * and the next node held 1.80 ms of input-dist and NCCL work: the idle around it counts, the
 * work does not, and it is a second reading, a captured wait on another stream). */
static bool replay_holes(an_timeline *tl, tl_trace *c, an_time_account *a, const tl_kernel *k,
                         size_t n, const tl_gap *g, size_t ng) {
  tl_hole *h = NULL;
  size_t nh = 0, j = 0;
  if (!replay_gaps(c, k, n, tl_ns(tl->set->timeline_gap_min_us), &h, &nh)) return false;
  for (size_t i = 0; i < nh; i++) {
    while (j < ng && g[j].g1 <= h[i].start) j++;
    int64_t idle = 0;
    for (size_t x = j; x < ng && g[x].g0 < h[i].end; x++)
      idle += overlap_ns(g[x].g0, g[x].g1, h[i].start, h[i].end);
    a->graph_hole_busy_ns += h[i].end - h[i].start - idle;
    if (!idle) continue; /* filled by another stream: a hand-off, no lost node */
    a->graph_hole_ns += idle;
    a->n_graph_holes++;
    if (h[i].end - h[i].start > a->graph_hole_max_ns) a->graph_hole_max_ns = h[i].end - h[i].start;
  }
  free(h);
  return true;
}

/* One stage slot and stream's launch lags (a kernel's start less its launch call's start)
 * over its window kernels with a launch record (launch_leads). */
typedef struct tl_lag_group {
  uint32_t stage;
  tr_str stream;
  i64_vec lags;
} tl_lag_group;

/* The account pass's lag groups, found by key (stage slot << 32 | stream); last: the group
 * of the previous lag (a window's kernels run on few streams). */
typedef struct tl_lags {
  tl_lag_group *g;
  size_t n, cap, last;
  ut_u64map of;
} tl_lags;

/* What a pass over a trace's windows (each_window) carries from one window to the next. */
typedef struct window_pass {
  tl_tail tail; /* the previous step's kernels running on (pass_tails) */
  lanes l;      /* the account's streams, their room reused */
  /* collective_idle: window w's collectives are tl->coll[ix[off[w]..off[w + 1])] */
  const size_t *off;
  const uint32_t *ix;
  tl_lags *lags; /* the account's pass: its kernels' launch lags so far; else NULL */
} window_pass;

/* The lag group of stage slot `stage` and stream `stream`, added when new (NULL: out of
 * memory). */
static tl_lag_group *lag_group_of(tl_lags *x, uint32_t stage, tr_str stream) {
  if (x->n && x->g[x->last].stage == stage && x->g[x->last].stream == stream) return &x->g[x->last];
  uint64_t key = (uint64_t)stage << 32 | stream, v;
  if (!ut_u64map_get(&x->of, key, &v)) {
    tl_lag_group *g = ut_grow(x->g, &x->cap, x->n + 1, sizeof *g);
    if (!g) return NULL;
    x->g = g;
    x->g[x->n] = (tl_lag_group){stage, stream, {NULL, 0, 0}};
    if (!ut_u64map_put(&x->of, key, x->n)) return NULL;
    v = x->n++;
  }
  x->last = (size_t)v;
  return &x->g[v];
}

/* Window w's kernels k[0..n) with a launch record: their launch lags into their groups of
 * x, taken in the account's pass rather than in a second pass over the trace's kernels.
 * False when out of memory. */
static bool gather_lags(const tl_trace *c, const tl_window *win, const tl_kernel *k, size_t n,
                        tl_lags *x) {
  for (size_t i = 0; x && i < n; i++) {
    const tr_event *L = an_steps_launch(c->in->steps, k[i].pos);
    if (!L) continue;
    tl_lag_group *g = lag_group_of(x, (uint32_t)win->stage, k[i].stream);
    if (!g || !i64_push(&g->lags, k[i].start - tl_ns(tr_event_ts(c->t, L)))) return false;
  }
  return true;
}

/* Accounts one window's kernels (sorted in place; k has room for one more: the previous
 * step's tail); what precedes its start is outside. */
static bool account_window(an_timeline *tl, tl_trace *c, size_t w, tl_kernel *k, size_t n,
                           window_pass *p) {
  tl_window *win = &tl->win[w];
  tl_tail *tail = &p->tail;
  lanes *l = &p->l;
  if (!gather_lags(c, win, k, n, p->lags)) return false;
  pass_tails(c, win, k, &n, tail);
  if (tail->to) {
    tl->stages[win->stage].n_cut++;
    tl->stages[win->stage].cut_ns += tail->end - tail->start;
  }
  if (!n) return true;
  ut_sort(k, n, sizeof *k, cmp_kernel, NULL);
  size_t cut = window_start(c, k, n, tl_ns(tl->set->timeline_gap_min_us),
                            tl->set->timeline_lead_in_max_pct, l);
  bool ok = true;
  for (size_t i = 0; i < cut; i++)
    if (k[i].pos != TL_TAIL) {
      tl->stages[win->stage].outside_ns += k[i].end - k[i].start;
      ok = ok && add_busy(c, win->stage, k[i].start, k[i].end, k[i].pos, false);
    }
  size_t gaps_before = tl->work[win->stage].gaps.n, kernels_before = tl->work[win->stage].kernels.n;
  size_t own = cut; /* a tail opens no gap's next kernel: the first of its own */
  while (own < n && k[own].pos == TL_TAIL) own++;
  sweep_out o = {&win->acc, c, w, &tl->work[win->stage], own < n ? k[own].start : INT64_MIN};
  size_t gap0 = c->n_gaps; /* the window's own gaps follow */
  if (!ok || !sweep(tl, &o, k + cut, n - cut, l)) return false;
  if (!replay_holes(tl, c, &win->acc, k + cut, n - cut, c->gaps + gap0, c->n_gaps - gap0))
    return false;
  uint32_t first = own < n ? k[own].pos : TL_TAIL;
  if (first != TL_TAIL &&
      !add_busy(c, win->stage, k[cut].start, k[cut].start + win->acc.span_ns, first, true))
    return false;
  i64_vec *g = &tl->work[win->stage].gaps, *kv = &tl->work[win->stage].kernels;
  /* medians of the window from copies: the stage's medians need the values unsorted */
  size_t ng = g->n - gaps_before, nk = kv->n - kernels_before;
  int64_t *tmp = malloc(((ng > nk ? ng : nk) + 1) * sizeof *tmp);
  if (!tmp) return false;
  if (ng) memcpy(tmp, g->v + gaps_before, ng * sizeof *tmp); /* no gaps: no array yet */
  win->acc.median_gap_ns = median(tmp, ng);
  if (nk) memcpy(tmp, kv->v + kernels_before, nk * sizeof *tmp);
  win->acc.median_kernel_ns = median(tmp, nk);
  free(tmp);
  return true;
}

/* The account's stage slot of a kernel whose view slot is vs (> 0): the view's slot is 1 +
 * the stage's index among the rules' stages, which are the account's: checked, so a view
 * of other rules still finds its stage by id. The last answer is kept: kernels come in
 * runs of one stage, and the engine's stage lookup was a third of kernel_window's cost. */
static size_t rules_slot(const an_timeline *tl, tl_trace *c, uint16_t vs) {
  if (vs == c->memo_view_slot) return c->memo_slot;
  const char *stage = c->in->view->slot_stage[vs];
  size_t slot = vs - 1u;
  if (slot >= tl->n_st || te_rules_stage(tl->rules, slot)->id != stage)
    slot = stage_slot(tl, stage);
  c->memo_view_slot = vs;
  return c->memo_slot = slot;
}

/* Kernel event i, in no window of stage slot, counted outside the windows (kernel_window's
 * first pass). */
static void count_outside(an_timeline *tl, tl_trace *c, size_t i, size_t slot) {
  int64_t dur = tl_ns(tr_event_dur(c->t, &c->kev[i])), ts = tl_ns(tr_event_ts(c->t, &c->kev[i]));
  tl->stages[slot].outside_ns += dur;
  if (an_steps_kernel_setup(c->in->steps, i)) tl->stages[slot].setup_ns += dur;
  if (!add_busy(c, slot, ts, ts + (dur > 0 ? dur : 0), (uint32_t)i, false)) c->nomem = true;
}

/* The window of kernel event i counted from the trace's first, or -1. count: kernel time
 * outside every window is added to its stage (once per kernel: the first pass). */
static long kernel_window(an_timeline *tl, tl_trace *c, size_t i, bool count) {
  const an_trace_view *v = c->in->view;
  if (!an_trace_view_kernel_stage(v, i)) return -1;
  size_t slot = rules_slot(tl, c, v->kernel_slot[i]);
  long w = slot < tl->n_st ? window_of(c, i, slot) : -1;
  if (count && w < 0 && slot < tl->n_st) count_outside(tl, c, i, slot);
  return w < 0 ? -1 : w - (long)c->first_window;
}

typedef bool window_fn(an_timeline *tl, tl_trace *c, size_t w, tl_kernel *k, size_t n,
                       window_pass *p);

/* Buckets the trace's kernels by window (a counting sort of their positions), then hands
 * each window, in order, a copy of its kernels (fn): the copies of one window at a time,
 * not of the whole trace. count: the account's pass (kernel_window), where the stages'
 * kernel lengths get their exact room first. */
static bool each_window(an_timeline *tl, tl_trace *c, bool count, window_fn *fn, window_pass *p) {
  size_t nk = 0, w0 = c->first_window, nw = tl->n_win - w0; /* the trace's windows */
  c->kev = tr_trace_events(c->t, TR_KIND_KERNEL, &nk);
  size_t *off = calloc(nw + 2, sizeof *off), widest = 0;
  if (!off) return false;
  for (size_t i = 0; i < nk; i++) {
    long w = kernel_window(tl, c, i, count);
    if (w >= 0) off[w + 1]++;
  }
  bool ok = !c->nomem;
  for (size_t w = 0; ok && w < nw; w++) {
    widest = off[w + 1] > widest ? off[w + 1] : widest;
    ok = !count || i64_reserve(&tl->work[tl->win[w0 + w].stage].kernels, off[w + 1]);
  }
  for (size_t w = 1; w <= nw; w++) off[w] += off[w - 1];
  uint32_t *order = malloc((off[nw] ? off[nw] : 1) * sizeof *order);
  tl_kernel *k = malloc((widest + 1) * sizeof *k); /* and a tail */
  ok = ok && order && k;
  for (size_t i = 0; ok && i < nk; i++) {
    long w = kernel_window(tl, c, i, false);
    if (w >= 0) order[off[w]++] = (uint32_t)i;
  }
  for (size_t w = nw; ok && w > 0; w--) off[w] = off[w - 1]; /* back to starts */
  off[0] = 0;
  for (size_t w = 0; ok && w < nw; w++) {
    size_t n = off[w + 1] - off[w];
    for (size_t j = 0; j < n; j++) {
      uint32_t i = order[off[w] + j];
      int64_t s = tl_ns(tr_event_ts(c->t, &c->kev[i])), d = tl_ns(tr_event_dur(c->t, &c->kev[i]));
      k[j] = (tl_kernel){s, s + (d > 0 ? d : 0), tr_event_stream(c->t, &c->kev[i]), i};
    }
    ok = fn(tl, c, w0 + w, k, n, p);
  }
  free(off);
  free(order);
  free(k);
  return ok;
}

static bool launch_leads(an_timeline *tl, tl_trace *c, tl_lags *x);

/* The account's pass over the trace's windows, and the launch leads of the lags it took. */
static bool account_kernels(an_timeline *tl, tl_trace *c) {
  tl_lags lags = {0};
  window_pass p = {{NULL, 0, 0}, {0}, NULL, NULL, &lags};
  bool ok = each_window(tl, c, true, account_window, &p) && launch_leads(tl, c, &lags);
  free(p.l.v);
  for (size_t i = 0; i < lags.n; i++) free(lags.g[i].lags.v);
  free(lags.g);
  ut_u64map_free(&lags.of);
  return ok;
}

static bool gather_causes(an_timeline *tl, size_t w_end, const tl_extra *extras);

static int cmp_busy(const void *pa, const void *pb) {
  const tl_busy *a = pa, *b = pb;
  if (a->stage != b->stage) return a->stage < b->stage ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end > b->end ? -1 : 1;
  return a->pos < b->pos ? -1 : (a->pos > b->pos);
}

/* The gaps of at least timeline.long_gap_us in each stage's busy parts outside the
 * windows' idle (tl_busy: windows' spans and the kernels outside every window), into
 * c->outside: the stage's idle outside the steps that one gap holds, never launch spacing.
 * O(m log m) in those parts (a window is one). */
static bool outside_gaps(an_timeline *tl, tl_trace *c) {
  if (c->n_busy > 1) qsort(c->busy, c->n_busy, sizeof *c->busy, cmp_busy);
  const int64_t min = tl_ns(tl->set->timeline_long_gap_us);
  const an_steps *s = c->in->steps;
  int64_t uend = 0;
  for (size_t i = 0; i < c->n_busy; i++) {
    const tl_busy *b = &c->busy[i];
    bool same = i > 0 && c->busy[i - 1].stage == b->stage;
    if (same && b->start - uend >= min) {
      tl_gap *v = ut_grow(c->outside, &c->cap_outside, c->n_outside + 1, sizeof *v);
      if (!v) return false;
      c->outside = v;
      c->outside[c->n_outside++] = (tl_gap){b->stage,
                                            uend,
                                            b->start,
                                            an_steps_launch(s, b->pos),
                                            tr_event_stream(c->t, &c->kev[b->pos]),
                                            true,
                                            NAN,
                                            INT64_MIN,
                                            INT64_MIN,
                                            0};
    }
    if (!same || b->end > uend) uend = b->end;
  }
  return true;
}

/* Adds what the host did across outside gap g to its stage (an_stage_timeline outside_*):
 * the sum and count, and the longest gap's call. ext: the stage's counted windows in this
 * trace, their first start and last end (first_windows). */
static void add_outside(an_timeline *tl, tl_host *h, const tl_gap *g, const int64_t ext[2]) {
  an_stage_timeline *st = &tl->stages[g->window];
  int64_t ns = g->g1 - g->g0;
  st->outside_idle_ns += ns;
  st->outside_gaps++;
  st->outside_min_ns = tl_ns(tl->set->timeline_long_gap_us);
  if (ns <= st->outside_longest_ns) return;
  tl_outside x;
  if (!tl_host_outside(h, g, &x)) x = (tl_outside){0};
  st->outside_longest_ns = ns;
  st->outside_where = g->g1 <= ext[0]   ? AN_OUTSIDE_BEFORE
                      : g->g0 >= ext[1] ? AN_OUTSIDE_AFTER
                                        : AN_OUTSIDE_BETWEEN;
  st->outside_call = x.call;
  st->outside_op = x.op;
  st->outside_location = x.location;
  st->outside_call_ns = x.call_ns;
  st->outside_blocking = x.blocking;
  st->outside_setup = x.setup;
}

/* Each stage's counted windows in the trace, by slot: [2 slot] their first start
 * (INT64_MAX: none), [2 slot + 1] their last end (INT64_MIN: none). NULL: out of memory. */
static int64_t *first_windows(const an_timeline *tl, const tl_trace *c) {
  int64_t *ext = malloc(2 * (tl->n_st + 1) * sizeof *ext);
  for (size_t s = 0; ext && s <= tl->n_st; s++) {
    ext[2 * s] = INT64_MAX;
    ext[2 * s + 1] = INT64_MIN;
  }
  for (size_t i = 0; ext && i < c->n_busy; i++) {
    const tl_busy *b = &c->busy[i];
    if (b->window && b->start < ext[2 * b->stage]) ext[2 * b->stage] = b->start;
    if (b->window && b->end > ext[2 * b->stage + 1]) ext[2 * b->stage + 1] = b->end;
  }
  return ext;
}

/* The portions of gap g: what the host did in it, appended to tl->por. */
static bool split_gap(an_timeline *tl, tl_host *h, const tl_gap *g) {
  tl_portion p[TL_MAX_PORTIONS];
  size_t n = tl_host_split(h, g, p);
  tl_portion *v = ut_grow(tl->por, &tl->cap_por, tl->n_por + n, sizeof *v);
  if (!v) return false;
  tl->por = v;
  memcpy(tl->por + tl->n_por, p, n * sizeof *p);
  tl->n_por += n;
  return true;
}

/* ---------------------------------------------------------------- launch leads */

/* A stream's median launch lag in one stage's counted steps. */
typedef struct tl_stream_lag {
  size_t stage;
  tr_str stream;
  int64_t median_ns;
} tl_stream_lag;

static int lag_group_order(const void *a, const void *b, void *ctx) {
  (void)ctx;
  const tl_lag_group *x = a, *y = b;
  if (x->stage != y->stage) return x->stage < y->stage ? -1 : 1;
  return (x->stream > y->stream) - (x->stream < y->stream);
}

/* The median launch lag of stream `stream` in stage slot `stage` (launch_leads), or -1
 * when none of its kernels there has a launch record: searched, c->lags coming by stage
 * then stream (launch_leads sorts the groups). */
static int64_t stream_lag(const tl_trace *c, size_t stage, tr_str stream) {
  const tl_stream_lag *l = c->lags;
  size_t i;
  UT_PARTITION_POINT(i, 0, c->n_lags, m,
                     l[m].stage < stage || (l[m].stage == stage && l[m].stream < stream));
  return i < c->n_lags && l[i].stage == stage && l[i].stream == stream ? l[i].median_ns : -1;
}

/* Of one stage and stream's lags g (reordered): their median kept as the stream's
 * (c->lags), and as the stage's launch lead (an_launch_lead) with their 90th percentile
 * when it has the most kernels of the stage so far (best; a collective stream's few long
 * kernels say little of how far the host runs ahead); the first trace of a stage sets its
 * lead. Two selections, not a sort of every lag. */
static void lag_group(an_timeline *tl, tl_trace *c, tl_lag_group *g, size_t *best) {
  size_t n = g->lags.n;
  if (n < (size_t)tl->set->timeline_launch_lead_min_kernels) return;
  int64_t med = ut_select_i64(g->lags.v, n, (n - 1) / 2);
  c->lags[c->n_lags++] = (tl_stream_lag){g->stage, g->stream, med};
  an_launch_lead *l = &tl->stages[g->stage].launch_lead;
  if (n <= best[g->stage] || (l->n && !best[g->stage])) return; /* an earlier trace's */
  best[g->stage] = n;
  *l = (an_launch_lead){
      .stream = an_strtab_cstr(tl->strings, tr_str_get(c->t, g->stream)),
      .n = n,
      .median_ns = med,
      .p90_ns = ut_select_i64(g->lags.v, n, (n - 1) * 9 / 10),
      .ahead = med >= tl_ns(tl->set->timeline_launch_gap_max_us),
  };
}

/* Each stage's streams' launch lags over the counted steps' kernels with a launch record
 * (x, gather_lags), their groups sorted by stage then stream: their medians (c->lags: what a
 * kernel without a record likely waited, idle_within) and the busiest stream's as the
 * stage's launch lead. False when out of memory. */
static bool launch_leads(an_timeline *tl, tl_trace *c, tl_lags *x) {
  size_t *best = calloc(tl->n_st + 1, sizeof *best);
  c->lags = malloc((x->n ? x->n : 1) * sizeof *c->lags);
  bool ok = best && c->lags;
  if (ok && x->n > 1) ut_sort(x->g, x->n, sizeof *x->g, lag_group_order, NULL);
  for (size_t i = 0; ok && i < x->n; i++) lag_group(tl, c, &x->g[i], best);
  free(best);
  return ok;
}

/* ---------------------------------------------------------------- blocking reads back */

/* GPU idle with nothing on any stream inside [a, b) of window w: the part of its gaps there
 * (c->gaps come by window, then by time). */
static int64_t idle_within(const an_timeline *tl, const tl_trace *c, size_t w, int64_t a,
                           int64_t b) {
  size_t lo;
  UT_PARTITION_POINT(lo, 0, c->n_gaps, mid,
                     c->gaps[mid].window < w || (c->gaps[mid].window == w && c->gaps[mid].g1 <= a));
  int64_t idle = 0;
  for (size_t i = lo; i < c->n_gaps && c->gaps[i].window == w && c->gaps[i].g0 < b; i++) {
    const tl_gap *g = &c->gaps[i];
    /* from the launch call of the kernel that ends the gap on, that kernel sat queued: the
     * host had issued it, so waiting less could not have filled that part (blind review 19
     * defect 1: hta_multistream5's kernels start a median 163 ms after their launch) */
    int64_t end = g->g1, lts = INT64_MAX;
    if (g->launch) lts = tl_ns(tr_event_ts(c->t, g->launch));
    /* a kernel without a launch record (launched before the capture, or its call not kept)
     * was likely issued its stream's median launch lag before it ran (review 19: the
     * first step's graph-replayed kernels of hta_multistream5 have no launch call in the
     * trace, and their stream runs kernels a median 163 ms after issuing them) */
    int64_t lag = g->launch ? -1 : stream_lag(c, tl->win[w].stage, g->stream);
    if (lag >= 0) lts = g->g1 - lag;
    if (lts < end) end = lts > g->g0 ? lts : g->g0;
    idle += overlap_ns(g->g0, end, a, b);
  }
  return idle;
}

/* Of read back r's call, in one pass over the trace's kernels: the copy's stream's own GPU
 * time inside it (its events there, clipped), returned; and, when b is given, into it the
 * other stream whose GPU work ended last inside the call before its copy started, and how
 * long before the copy. */
static int64_t readback_streams(an_timeline *tl, const tl_trace *c, const tl_readback *r,
                                an_host_block *b) {
  size_t nk = 0;
  const tr_event *kev = tr_trace_events(c->t, TR_KIND_KERNEL, &nk);
  tr_str own = tr_event_stream(c->t, &kev[r->copy]);
  int64_t copy = tl_ns(tr_event_ts(c->t, &kev[r->copy])), last = INT64_MIN, busy = 0;
  size_t at = nk;
  for (size_t i = 0; i < nk; i++) {
    bool mine = tr_event_stream(c->t, &kev[i]) == own;
    if (!mine && !b) continue; /* the other streams' only for the call that names one */
    int64_t s = tl_ns(tr_event_ts(c->t, &kev[i])), e = s + tl_ns(tr_event_dur(c->t, &kev[i]));
    if (!mine) {
      if (e >= r->ts && e <= copy && e > last) last = e, at = i;
      continue;
    }
    busy += overlap_ns(s, e, r->ts, r->end);
  }
  if (!b) return busy;
  b->waited_on =
      at < nk ? an_strtab_cstr(tl->strings, tr_str_get(c->t, tr_event_stream(c->t, &kev[at])))
              : NULL;
  b->waited_gap_ns = at < nk ? copy - last : 0;
  return busy;
}

/* Whether reads back a and b are of one group: one call under one CPU op and region. */
static bool one_group(const tl_readback *a, const tl_readback *b) {
  return a->call == b->call && a->op == b->op && a->region == b->region;
}

/* Adds read back r of window w to host block b (its group's). */
static void add_readback(an_timeline *tl, tl_trace *c, size_t w, const tl_readback *r,
                         an_host_block *b) {
  int64_t ns = r->end - r->ts, copy_ts = tl_ns(tr_event_ts(c->t, &c->kev[r->copy]));
  bool longest = !b->n || ns > b->max_ns; /* its call names what the copy waited on */
  if (longest) {
    b->bytes = r->bytes == TR_NO_ID ? -1 : r->bytes;
    b->max_ns = ns;
    b->location = r->location;
  }
  if (!b->n || ns < b->min_ns) b->min_ns = ns;
  b->call = r->call, b->op = r->op, b->region = r->region;
  b->copy = an_strtab_cstr(tl->strings, tr_str_get(c->t, c->kev[r->copy].name));
  b->stream =
      an_strtab_cstr(tl->strings, tr_str_get(c->t, tr_event_stream(c->t, &c->kev[r->copy])));
  b->n++;
  b->blocked_ns += ns;
  b->idle_ns += idle_within(tl, c, w, r->ts, r->end);
  b->stream_ns += readback_streams(tl, c, r, longest ? b : NULL);
  b->queued_ns += copy_ts > r->ts ? copy_ts - r->ts : 0;
}

/* Stage slot s's group of the trace's reads back r[0..n) that blocked longest (its first
 * member's index, -1: none) and, into *sum, that time; win[i]: r[i]'s window or -1. */
static long longest_group(const an_timeline *tl, const tl_readback *r, const long *win, size_t n,
                          size_t s, int64_t *sum) {
  long best = -1;
  *sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (win[i] < 0 || tl->win[win[i]].stage != s || !r[i].call) continue;
    int64_t t = 0;
    for (size_t j = 0; j < n; j++)
      if (win[j] >= 0 && tl->win[win[j]].stage == s && one_group(&r[i], &r[j]))
        t += r[j].end - r[j].ts;
    if (t > *sum) *sum = t, best = (long)i;
  }
  return best;
}

/* The trace's long blocking reads back (tl_host_readbacks) into their stages' host blocks
 * (an_host_block): per stage, the group that blocked longest; another trace's group of the
 * same stage adds to it when it is the same, else the longer one stays. False when out of
 * memory. */
static bool host_blocks(an_timeline *tl, tl_trace *c, tl_host *h) {
  size_t n = 0;
  const tl_readback *r = tl_host_readbacks(h, &n);
  long *win = n ? malloc(n * sizeof *win) : NULL;
  if (n && !win) return false;
  for (size_t i = 0; i < n; i++) { /* the account's window (kernel_window: the trace's) */
    long w = kernel_window(tl, c, r[i].copy, false);
    win[i] = w < 0 ? -1 : w + (long)c->first_window;
  }
  for (size_t s = 0; s < tl->n_st; s++) {
    int64_t sum;
    long g = longest_group(tl, r, win, n, s, &sum);
    an_host_block *b = &tl->stages[s].host_block;
    const tl_readback kept = {.call = b->call, .op = b->op, .region = b->region};
    bool other = b->n && g >= 0 && !one_group(&kept, &r[g]);
    if (g < 0 || (other && b->blocked_ns >= sum)) continue;
    if (other) *b = (an_host_block){0};
    for (size_t j = 0; j < n; j++)
      if (win[j] >= 0 && tl->win[win[j]].stage == s && one_group(&r[g], &r[j]))
        add_readback(tl, c, (size_t)win[j], &r[j], b);
  }
  free(win);
  return true;
}

/* What the host did in each gap of the trace, gathered into its windows' causes window by
 * window (the gaps come in window order): the portions of one window are held at a time,
 * where holding the whole trace's cost more in fresh pages than the split itself. */
static bool split_gaps(an_timeline *tl, tl_trace *c) {
  if (!c->n_gaps && !c->n_outside) return true;
  /* the outside gaps after the windows' (the host index takes them in one array) */
  tl_gap *v = ut_grow(c->gaps, &c->cap_gaps, c->n_gaps + c->n_outside, sizeof *v);
  if (!v) return false;
  c->gaps = v;
  if (c->n_outside) memcpy(c->gaps + c->n_gaps, c->outside, c->n_outside * sizeof *c->outside);
  tl_host *h =
      tl_host_create(c->in->view, tl->rules, tl->strings, c->gaps, c->n_gaps + c->n_outside);
  int64_t *first = h ? first_windows(tl, c) : NULL;
  bool ok = first != NULL;
  size_t nx = 0;
  for (size_t i = 0; ok && i < c->n_gaps; i++) {
    if (i && c->gaps[i].window != c->gaps[i - 1].window)
      ok = gather_causes(tl, c->gaps[i].window, tl_host_extras(h, &nx));
    ok = ok && split_gap(tl, h, &c->gaps[i]);
  }
  if (ok && c->n_gaps)
    ok = gather_causes(tl, c->gaps[c->n_gaps - 1].window + 1, tl_host_extras(h, &nx));
  for (size_t i = 0; ok && i < c->n_outside; i++)
    add_outside(tl, h, &c->outside[i], first + 2 * c->outside[i].window);
  ok = ok && host_blocks(tl, c, h);
  free(first);
  tl_host_destroy(h);
  return ok;
}

/* A step's host extent while it is measured: its first and last CPU event's times (us) and
 * the time its threads sat in synchronising calls (matcher host_sync), waiting for GPU work,
 * not working (sglang's 463 ms hipMemcpyWithStream waiting for the previous batch). */
typedef struct extent {
  double lo, hi, wait;
} extent;

/* The first step starting after ts. *hint: the last answer, checked first (a thread's
 * events come in time order, most of them in the step of the event before). */
static size_t step_after(const an_steps *s, double ts, size_t *hint) {
  size_t j = *hint;
  if (j <= s->n && (!j || s->steps[j - 1].cpu_ts <= ts) && (j == s->n || s->steps[j].cpu_ts > ts))
    return j;
  UT_PARTITION_POINT(j, 0, s->n, m, s->steps[m].cpu_ts <= ts);
  return *hint = j;
}

/* Widens step j's extent by CPU event e when it starts inside the step's marker, clipped to
 * it; sync: e is a synchronising call. hint: step_after's. */
static void widen_extent(const an_steps *s, const tr_trace *t, const tr_event *e, bool sync,
                         extent *x, size_t *hint) {
  double ts = tr_event_ts(t, e), end = ts + tr_event_dur(t, e);
  size_t j = step_after(s, ts, hint);
  if (!j || ts >= s->steps[j - 1].cpu_end) return;
  const an_step *st = &s->steps[j - 1];
  extent *w = &x[j - 1];
  if (end > st->cpu_end) end = st->cpu_end;
  if (ts < w->lo) w->lo = ts;
  if (end > w->hi) w->hi = end;
  if (sync) w->wait += end - ts;
}

/* Whether CPU event e is a synchronising call (matcher host_sync); memo by name id. */
static bool sync_call(const tl_trace *c, const te_matcher *m, uint8_t *memo, const tr_event *e) {
  if (!m) return false;
  uint8_t *x = &memo[e->name];
  if (!*x) {
    const char *name = tr_str_get(c->t, e->name);
    *x = name && te_matcher_match(m, name, strlen(name)) ? 2 : 1;
  }
  return *x == 2;
}

/* Each counted step's host extent (an_time_account.host_ns): from the first CPU op, launch or
 * runtime call of a thread that launches GPU work inside its marker to the last one's end,
 * less the time those threads sat in synchronising calls (waiting for GPU work).
 * A step whose GPU span is a sliver of it waits for the host outside the time account
 * (review 14 defect 2: hta_triton_tiny's 1.8 us kernel in a 1.4 ms compiled region read
 * "busy 0.0018 + idle 0"). Steps from GPU annotations have no host marker. */
static bool host_extents(an_timeline *tl, const tl_trace *c) {
  const an_steps *s = c->in->steps;
  if (!s->n || s->source == AN_STEPS_GPU_ANNOTATION) return true;
  static const tr_kind kinds[] = {TR_KIND_CPU_OP, TR_KIND_LAUNCH, TR_KIND_RUNTIME};
  const te_matcher *sync = te_rules_matcher(tl->rules, "host_sync");
  size_t n_str = tr_trace_string_count(c->t);
  ut_u64map th = {0};
  extent *x = malloc(s->n * sizeof *x);
  uint8_t *memo = calloc(n_str ? n_str : 1, 1);
  bool ok = x && memo;
  for (size_t j = 0; ok && j < s->n; j++) x[j] = (extent){INFINITY, -INFINITY, 0};
  size_t nl = 0;
  const tr_event *L = tr_trace_events(c->t, TR_KIND_LAUNCH, &nl);
  uint64_t prev = 0; /* launches come in runs of one thread: one put a run */
  for (size_t i = 0; ok && i < nl; i++) {
    uint64_t key = (uint64_t)tr_event_pid(c->t, &L[i]) << 32 | tr_event_tid(c->t, &L[i]);
    if (!i || key != prev) ok = ut_u64map_put(&th, prev = key, 1);
  }
  for (size_t k = 0; ok && k < sizeof kinds / sizeof *kinds; k++) {
    size_t n = 0;
    const tr_event *e = tr_trace_events(c->t, kinds[k], &n);
    uint64_t v, last = UINT64_MAX;
    size_t hint = 0;
    bool in = false; /* events come in runs of one thread */
    for (size_t i = 0; i < n; i++) {
      uint64_t key = (uint64_t)tr_event_pid(c->t, &e[i]) << 32 | tr_event_tid(c->t, &e[i]);
      if (key != last) in = ut_u64map_get(&th, key, &v), last = key;
      /* a CPU op around a sync waits as long: only runtime and launch calls are asked */
      if (in)
        widen_extent(s, c->t, &e[i], kinds[k] != TR_KIND_CPU_OP && sync_call(c, sync, memo, &e[i]),
                     x, &hint);
    }
  }
  for (size_t j = 0; ok && j < s->n; j++)
    if (c->step_window[j] >= 0 && x[j].hi - x[j].lo > x[j].wait)
      tl->win[c->step_window[j]].acc.host_ns = tl_ns(x[j].hi - x[j].lo - x[j].wait);
  ut_u64map_free(&th);
  free(x);
  free(memo);
  return ok;
}

/* The dispatch speed of trace c's host (an_stage_timeline.dispatch_ratio) from d[k], the
 * times (ns) of each op of the reference map, into every stage c's windows count that has
 * none yet; ratio: room for one per op. */
static void dispatch_into(an_timeline *tl, const tl_trace *c, i64_vec *d, double *ratio) {
  const te_number_map *ref = &tl->set->timeline_dispatch_reference_us;
  size_t n = 0, top = SIZE_MAX;
  for (size_t k = 0; k < ref->n; k++) {
    if (d[k].n < (size_t)tl->set->timeline_dispatch_min_calls || ref->values[k] <= 0) continue;
    ratio[n++] = (double)median(d[k].v, d[k].n) / 1000.0 / ref->values[k];
    if (top == SIZE_MAX || d[k].n > d[top].n) top = k;
  }
  if (n < (size_t)tl->set->timeline_dispatch_min_kinds || top == SIZE_MAX) return;
  double r = ut_median_f64(ratio, n);
  int64_t op_ns = median(d[top].v, d[top].n); /* after the ratios: it reorders d[top] */
  for (size_t w = c->first_window; w < tl->n_win; w++) {
    an_stage_timeline *st = &tl->stages[tl->win[w].stage];
    if (st->dispatch_ratio > 0) continue;
    st->dispatch_ratio = r;
    st->dispatch_kinds = n;
    st->dispatch_op = ref->keys[top];
    st->dispatch_op_calls = d[top].n;
    st->dispatch_op_us = (double)op_ns / 1000.0;
    st->dispatch_op_ref_us = ref->values[top];
  }
}

/* Times each CPU op of trace c named in timeline.dispatch_reference_us (ops that launch
 * nothing: their own time is the host's dispatch) and sets the stages' dispatch speed. */
static bool dispatch_speed(an_timeline *tl, const tl_trace *c) {
  const te_number_map *ref = &tl->set->timeline_dispatch_reference_us;
  if (!ref->n) return true;
  size_t n_str = tr_trace_string_count(c->t), n_ops = 0;
  const tr_event *ops = tr_trace_events(c->t, TR_KIND_CPU_OP, &n_ops);
  size_t *which = calloc(n_str ? n_str : 1, sizeof *which); /* by name: 0 unasked, 1 none, 2 + k */
  i64_vec *d = calloc(ref->n, sizeof *d);
  double *ratio = malloc(ref->n * sizeof *ratio);
  bool ok = which && d && ratio;
  for (size_t i = 0; ok && i < n_ops; i++) {
    tr_str name = ops[i].name;
    if (name >= n_str) continue;
    if (!which[name]) {
      const char *s = tr_str_get(c->t, name);
      which[name] = 1;
      for (size_t k = 0; s && k < ref->n && which[name] == 1; k++)
        if (!strcmp(s, ref->keys[k])) which[name] = 2 + k;
    }
    if (which[name] >= 2) ok = i64_push(&d[which[name] - 2], tl_ns(tr_event_dur(c->t, &ops[i])));
  }
  if (ok) dispatch_into(tl, c, d, ratio);
  for (size_t k = 0; d && k < ref->n; k++) free(d[k].v);
  free(d);
  free(ratio);
  free(which);
  return ok;
}

static bool account_trace(an_timeline *tl, const an_timeline_input *in, tl_trace_windows *map) {
  tl_trace c = {.in = in,
                .t = in->view->trace,
                .graph_matcher = te_rules_matcher(tl->rules, "graph_replay_launch"),
                .ahead = INT64_MIN,
                .first_window = tl->n_win};
  size_t n_str = tr_trace_string_count(c.t), n_steps = in->steps->n;
  c.coll_name = calloc(n_str ? n_str : 1, sizeof *c.coll_name);
  c.coll_cat = calloc(n_str ? n_str : 1, sizeof *c.coll_cat);
  c.graph_call = calloc(n_str ? n_str : 1, 1);
  c.step_window = malloc((n_steps ? n_steps : 1) * sizeof *c.step_window);
  c.stage_window = malloc((tl->n_st + 1) * sizeof *c.stage_window);
  bool ok = c.coll_name && c.coll_cat && c.graph_call && c.step_window && c.stage_window;
  for (size_t j = 0; ok && j < n_steps; j++) c.step_window[j] = -1;
  for (size_t j = 0; ok && j <= tl->n_st; j++) c.stage_window[j] = -1;
  ok = ok && make_windows(tl, &c) && account_kernels(tl, &c) && host_extents(tl, &c) &&
       outside_gaps(tl, &c) && dispatch_speed(tl, &c);
  an_coll_messages_destroy(c.messages); /* only the collectives' messages asked it */
  c.messages = NULL;
  ok = ok && split_gaps(tl, &c) && gather_causes(tl, tl->n_win, NULL);
  free(c.lags);
  free(c.coll_name);
  free(c.coll_cat);
  free(c.graph_call);
  *map = (tl_trace_windows){c.step_window, c.stage_window, c.first_window}; /* freed by work_free */
  free(c.gaps);
  free(c.busy);
  free(c.outside);
  return ok;
}

/* ---------------------------------------------------------------- causes */

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y ? -1 : (x > y);
}

static int cmp_str0(const char *a, const char *b) {
  if (!a || !b) return a ? 1 : b ? -1 : 0;
  return strcmp(a, b);
}

/* Causes by idle time descending, then kind, what, location, where untraced: a stable
 * order. */
static int cmp_cause(const void *pa, const void *pb) {
  const an_idle_cause *a = pa, *b = pb;
  if (a->idle_ns != b->idle_ns) return a->idle_ns > b->idle_ns ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  int c = cmp_str0(a->what, b->what);
  c = c ? c : cmp_str0(a->location, b->location);
  c = c ? c : cmp_str0(a->before, b->before);
  return c ? c : cmp_str0(a->after, b->after);
}

/* A new cause keyed as portion x (kind, what, location, where untraced). */
static an_idle_cause *new_cause_of(an_timeline *tl, const an_idle_cause *x) {
  an_idle_cause *v = ut_grow(tl->causes, &tl->cap_causes, tl->n_causes + 1, sizeof *v);
  if (!v) return NULL;
  tl->causes = v;
  tl->causes[tl->n_causes] = (an_idle_cause){.kind = x->kind,
                                             .what = x->what,
                                             .location = x->location,
                                             .before = x->before,
                                             .after = x->after};
  return &tl->causes[tl->n_causes++];
}

static an_idle_cause *new_cause(an_timeline *tl, an_idle_kind kind, const char *what,
                                const char *loc) {
  return new_cause_of(tl, &(an_idle_cause){.kind = kind, .what = what, .location = loc});
}

static void count_into(an_idle_cause *c, int64_t ns, int64_t long_min_ns) {
  c->idle_ns += ns;
  c->gaps++;
  if (ns > c->max_gap_ns) c->max_gap_ns = ns;
  if (ns >= long_min_ns) {
    c->long_ns += ns;
    c->long_gaps++;
  }
}

/* Adds drain x into d (an_drain; x with no queue is none): the deepest queue's sync names
 * the sum. */
static void add_drain(an_drain *d, const an_drain *x) {
  if (x->queue_ns <= 0) return;
  d->ns += x->ns;
  d->gaps += x->gaps;
  if (x->queue_ns > d->queue_ns) {
    d->queue_ns = x->queue_ns;
    d->what = x->what;
    d->location = x->location;
  }
}

/* A vote of ns for the dependency lead (region, child) of cause c: the ns-weighted majority
 * of its portions' leads wins (Boyer-Moore), so a blocking call recurring in every step
 * outranks one spanning the single longest gap. */
static void vote_lead(an_idle_cause *c, const tl_extra *x, int64_t ns) {
  if (c->child == x->child && c->region == x->region && c->lead_call == x->call) {
    c->lead_ns += ns;
  } else if (c->lead_ns >= ns) {
    c->lead_ns -= ns;
  } else {
    c->region = x->region;
    c->child = x->child;
    c->lead_call = x->call;
    c->lead_kind = x->lead;
    c->lead_ns = ns - c->lead_ns;
  }
}

/* Folds the queued causes of [lo, tl->n_causes) with no launch record (what NULL: their
 * next kernel was launched before the capture) into the queued cause of a launch call whose
 * lead is the same blocking call: one cause, one row (review 12 defect 2: one of
 * hta_multistream5's 64 ms gaps under the same aten::to was a row apart). The folded ones
 * are removed; order is left to the caller's sort. */
static void fold_unlaunched(an_timeline *tl, size_t lo) {
  for (size_t i = lo; i < tl->n_causes;) {
    an_idle_cause *u = &tl->causes[i], *into = NULL;
    for (size_t j = lo; u->kind == AN_IDLE_OUTSIDE && !u->what && u->lead_call && j < tl->n_causes;
         j++) {
      an_idle_cause *c = &tl->causes[j];
      if (c->kind == AN_IDLE_OUTSIDE && c->what && c->lead_call == u->lead_call &&
          c->child == u->child && c->region == u->region && (!into || c->idle_ns > into->idle_ns))
        into = c;
    }
    if (!into) {
      i++;
      continue;
    }
    into->idle_ns += u->idle_ns;
    into->gaps += u->gaps;
    into->long_ns += u->long_ns;
    into->long_gaps += u->long_gaps;
    into->lead_ns += u->lead_ns;
    if (u->max_gap_ns > into->max_gap_ns) {
      into->max_gap_ns = u->max_gap_ns;
      into->queued_ns = u->queued_ns; /* its longest gap's: no launch call, unknown */
    }
    *u = tl->causes[--tl->n_causes]; /* i again: the last cause moved here */
  }
}

static size_t cause_hash(const tl_portion *x) {
  uint64_t h = (uint64_t)(uintptr_t)x->what * 0x9E3779B97F4A7C15u ^
               (uint64_t)(uintptr_t)x->location * 0xC2B2AE3D27D4EB4Fu ^
               (uint64_t)(uintptr_t)x->before * 0x165667B19E3779F9u ^
               (uint64_t)(uintptr_t)x->after * 0x27D4EB2F165667C5u ^ (uint64_t)x->kind;
  return (size_t)(h ^ h >> 29);
}

/* The window's cause of portion x, added when new (NULL: out of memory). The strings are
 * interned, so equal causes have equal pointers. */
/* The designed wait extra e names into cause c: its frame and its blocking call. */
static void designed_into(an_idle_cause *c, const tl_extra *e) {
  c->designed = e->designed;
  c->designed_call = e->designed_call;
  c->designed_op = e->designed_op;
  c->designed_copy = e->designed_copy;
  c->designed_bytes = e->designed_bytes;
}

/* The same from another window's cause x of one key. */
static void designed_from(an_idle_cause *c, const an_idle_cause *x) {
  designed_into(c, &(tl_extra){.designed = x->designed,
                               .designed_call = x->designed_call,
                               .designed_op = x->designed_op,
                               .designed_copy = x->designed_copy,
                               .designed_bytes = x->designed_bytes});
}

static an_idle_cause *cause_for(an_timeline *tl, cause_table *t, const tl_portion *x) {
  size_t i = cause_hash(x) & (t->cap - 1);
  for (; t->slot[i] != SIZE_MAX; i = (i + 1) & (t->cap - 1)) {
    an_idle_cause *c = &tl->causes[t->slot[i]];
    if (c->kind == x->kind && c->what == x->what && c->location == x->location &&
        c->before == x->before && c->after == x->after)
      return c;
  }
  an_idle_cause *c = new_cause_of(tl, &(an_idle_cause){.kind = x->kind,
                                                       .what = x->what,
                                                       .location = x->location,
                                                       .before = x->before,
                                                       .after = x->after});
  if (c) t->slot[i] = (size_t)(c - tl->causes);
  return c;
}

/* A table of at least twice n slots, emptied; false when out of memory. */
static bool cause_table_reset(cause_table *t, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  if (cap > t->cap) { /* both powers of two: doubling reaches cap exactly */
    size_t *v = ut_grow(t->slot, &t->cap, cap, sizeof *v);
    if (!v) return false;
    t->slot = v;
  }
  memset(t->slot, 0xff, t->cap * sizeof *t->slot); /* SIZE_MAX: empty */
  return true;
}

/* The short gaps of a window as one cause (they name none). */
static bool short_cause(an_timeline *tl, const tl_window *win) {
  int64_t short_ns = win->acc.idle_by_kind_ns[AN_IDLE_SHORT];
  if (!short_ns) return true;
  an_idle_cause *c = new_cause(tl, AN_IDLE_SHORT, NULL, NULL);
  if (!c) return false;
  c->idle_ns = short_ns;
  c->gaps = win->acc.n_short_gaps;
  c->max_gap_ns = win->acc.short_max_ns;
  return true;
}

/* The causes of windows [tl->gathered, w_end) from their portions, all of tl->por (plus
 * their short gaps), sorted; the portions are then dropped. extras: the host index's, which
 * a portion's extra indexes (NULL when no portion is held). A window's equal causes gather
 * in one pass through a table, not a sort of its portions. */
static bool gather_causes(an_timeline *tl, size_t w_end, const tl_extra *extras) {
  cause_table *t = &tl->cause_slots;
  size_t p = 0;
  bool ok = true;
  for (size_t w = tl->gathered; ok && w < w_end; w++) {
    tl_window *win = &tl->win[w];
    win->cause_lo = tl->n_causes;
    size_t end = p;
    while (end < tl->n_por && tl->por[end].window == w) end++;
    ok = cause_table_reset(t, end - p);
    for (; ok && p < end; p++) {
      const tl_portion *x = &tl->por[p];
      an_idle_cause *c = cause_for(tl, t, x);
      if (!(ok = c != NULL)) break;
      if (x->extra && x->kind == AN_IDLE_OUTSIDE)
        vote_lead(c, &extras[x->extra - 1], x->ns);
      else if (x->extra && (extras[x->extra - 1].region || extras[x->extra - 1].child) &&
               (x->ns > c->max_gap_ns || (x->kind == AN_IDLE_SETUP && !c->child))) {
        /* the longest long gap's region and child; a setup cause's release lead from any
         * of its gaps (release_extra) */
        c->region = extras[x->extra - 1].region;
        c->child = extras[x->extra - 1].child;
      }
      if (x->untraced_ns && x->ns > c->max_gap_ns) {
        c->untraced_ns = x->untraced_ns;
        c->unrecorded_calls = x->unrecorded_calls;
        c->corr_from = x->corr_from;
        c->corr_to = x->corr_to;
        c->event_stream = x->event_stream;
        c->event_on_stream = x->event_on_stream;
      }
      if (x->ns > c->max_gap_ns) c->queued_ns = x->queued_ns; /* of its longest gap */
      if (x->extra && extras[x->extra - 1].designed) designed_into(c, &extras[x->extra - 1]);
      add_drain(&c->drain,
                &(an_drain){x->ns, 1, x->drain_what, x->drain_location, x->drain_queue_ns});
      count_into(c, x->ns, tl_ns(tl->set->timeline_long_gap_us));
      win->acc.idle_by_kind_ns[x->kind] += x->ns;
    }
    if (ok) fold_unlaunched(tl, win->cause_lo);
    ok = ok && short_cause(tl, win);
    win->cause_hi = tl->n_causes;
    if (ok && win->cause_hi - win->cause_lo > 1) /* none: tl->causes may not exist yet */
      qsort(tl->causes + win->cause_lo, win->cause_hi - win->cause_lo, sizeof *tl->causes,
            cmp_cause);
  }
  tl->gathered = w_end;
  tl->n_por = 0;
  return ok;
}

/* A setup cause of a step window: its stage, what it names and where it is. */
typedef struct setup_use {
  size_t stage;
  const char *what;
  size_t window, cause;
} setup_use;

static int cmp_setup_use(const void *pa, const void *pb) {
  const setup_use *a = pa, *b = pb;
  if (a->stage != b->stage) return a->stage < b->stage ? -1 : 1;
  int c = cmp_ptr(a->what, b->what);
  if (c) return c;
  return a->window < b->window ? -1 : (a->window > b->window);
}

/* Whether uses u[lo, hi) (one stage and call) stall the GPU in enough of the stage's
 * steps (timeline.setup_recurring_min_pct, at least two) to be a per-step loss. */
static bool recurs(const an_timeline *tl, const setup_use *u, size_t lo, size_t hi) {
  size_t windows = 0;
  for (size_t i = lo; i < hi; i++) windows += i == lo || u[i].window != u[i - 1].window;
  double steps = (double)tl->work[u[lo].stage].n_steps;
  return windows >= 2 &&
         (double)windows * 100.0 >= tl->set->timeline_setup_recurring_min_pct * steps;
}

/* Whether a setup cause names a setup call (matcher setup_call: allocation, initialisation)
 * rather than a launch call long enough to load a module. */
static bool names_setup_call(const te_matcher *setup_call, const char *what) {
  return !setup_call || !what || te_matcher_match(setup_call, what, strlen(what));
}

/* Re-kinds a setup cause of a counted step: a setup call (matcher setup_call) is the
 * allocator stalling that step (alloc); a launch call long enough to load a module in
 * every step is a graph still submitting (launch). */
static void rekind(an_timeline *tl, const te_matcher *setup_call, const setup_use *x) {
  tl_window *win = &tl->win[x->window];
  an_idle_cause *c = &tl->causes[x->cause];
  c->kind = names_setup_call(setup_call, c->what) ? AN_IDLE_ALLOC : AN_IDLE_LAUNCH;
  win->acc.idle_by_kind_ns[AN_IDLE_SETUP] -= c->idle_ns;
  win->acc.idle_by_kind_ns[c->kind] += c->idle_ns;
}

/* Setup inside a counted step is no one-time setup (one-off setup before the first step,
 * or in a warm-up, lies outside every step): a setup call there is the caching allocator
 * growing inside what the capture measures (review 10 defect 2: hta_alexnet's one measured
 * forward spends 21.8 of its 27.2 ms in cudaMalloc), alloc with an item, in one step or in
 * all; a module-loading launch call is a graph still submitting when it recurs across the
 * steps, else it stays setup (a lazy load happens once per process). Its causes are
 * re-kinded (rekind), each window's causes sorted again. */
static bool setup_in_steps(an_timeline *tl) {
  size_t n = 0;
  for (size_t i = 0; i < tl->n_causes; i++) n += tl->causes[i].kind == AN_IDLE_SETUP;
  if (!n) return true;
  setup_use *u = malloc(n * sizeof *u);
  if (!u) return false;
  n = 0;
  for (size_t w = 0; w < tl->n_win; w++)
    for (size_t i = tl->win[w].cause_lo; tl->win[w].step && i < tl->win[w].cause_hi; i++)
      if (tl->causes[i].kind == AN_IDLE_SETUP)
        u[n++] = (setup_use){tl->win[w].stage, tl->causes[i].what, w, i};
  qsort(u, n, sizeof *u, cmp_setup_use);
  const te_matcher *setup_call = te_rules_matcher(tl->rules, "setup_call");
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    for (hi = lo + 1; hi < n && u[hi].stage == u[lo].stage && u[hi].what == u[lo].what;) hi++;
    bool per_step = names_setup_call(setup_call, u[lo].what) || recurs(tl, u, lo, hi);
    for (size_t i = lo; i < hi && per_step; i++) rekind(tl, setup_call, &u[i]);
  }
  free(u);
  for (size_t w = 0; w < tl->n_win; w++) {
    size_t lo = tl->win[w].cause_lo, hi = tl->win[w].cause_hi;
    if (hi - lo > 1) qsort(tl->causes + lo, hi - lo, sizeof *tl->causes, cmp_cause);
  }
  return true;
}

/* Same cause, by content (interned strings: pointers). */
static int cmp_cause_key(const void *pa, const void *pb) {
  const an_idle_cause *a = pa, *b = pb;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  int c = cmp_ptr(a->what, b->what);
  c = c ? c : cmp_ptr(a->location, b->location);
  c = c ? c : cmp_ptr(a->before, b->before);
  return c ? c : cmp_ptr(a->after, b->after);
}

/* A stage's causes: its windows' causes merged. */
static bool stage_causes(an_timeline *tl, size_t slot, size_t *lo, size_t *hi) {
  size_t n = 0;
  for (size_t w = 0; w < tl->n_win; w++)
    if (tl->win[w].stage == slot) n += tl->win[w].cause_hi - tl->win[w].cause_lo;
  an_idle_cause *tmp = malloc((n ? n : 1) * sizeof *tmp);
  if (!tmp) return false;
  n = 0;
  for (size_t w = 0; w < tl->n_win; w++)
    for (size_t i = tl->win[w].cause_lo; tl->win[w].stage == slot && i < tl->win[w].cause_hi; i++)
      tmp[n++] = tl->causes[i];
  if (n > 1) qsort(tmp, n, sizeof *tmp, cmp_cause_key);
  *lo = tl->n_causes;
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    an_idle_cause *c = &tl->causes[tl->n_causes - 1];
    if (i == 0 || cmp_cause_key(&tmp[i], &tmp[i - 1])) {
      ok = (c = new_cause_of(tl, &tmp[i])) != NULL;
      if (!ok) break;
    }
    c->idle_ns += tmp[i].idle_ns;
    c->gaps += tmp[i].gaps;
    c->long_ns += tmp[i].long_ns;
    c->long_gaps += tmp[i].long_gaps;
    if (c->kind == AN_IDLE_OUTSIDE && tmp[i].child)
      vote_lead(c,
                &(tl_extra){.region = tmp[i].region,
                            .child = tmp[i].child,
                            .call = tmp[i].lead_call,
                            .lead = tmp[i].lead_kind},
                tmp[i].lead_ns);
    else if ((tmp[i].region || tmp[i].child) && tmp[i].max_gap_ns >= c->max_gap_ns) {
      c->region = tmp[i].region;
      c->child = tmp[i].child;
    }
    if (tmp[i].untraced_ns && tmp[i].max_gap_ns >= c->max_gap_ns) {
      c->untraced_ns = tmp[i].untraced_ns;
      c->unrecorded_calls = tmp[i].unrecorded_calls;
      c->corr_from = tmp[i].corr_from;
      c->corr_to = tmp[i].corr_to;
      c->event_stream = tmp[i].event_stream;
      c->event_on_stream = tmp[i].event_on_stream;
    }
    if (tmp[i].max_gap_ns >= c->max_gap_ns) c->queued_ns = tmp[i].queued_ns;
    if (tmp[i].designed) designed_from(c, &tmp[i]);
    add_drain(&c->drain, &tmp[i].drain);
    if (tmp[i].max_gap_ns > c->max_gap_ns) c->max_gap_ns = tmp[i].max_gap_ns;
  }
  free(tmp);
  if (ok) fold_unlaunched(tl, *lo);
  *hi = tl->n_causes;
  if (ok && *hi - *lo > 1) qsort(tl->causes + *lo, *hi - *lo, sizeof *tl->causes, cmp_cause);
  return ok;
}

/* ---------------------------------------------------------------- collectives */

/* The message an instance's group is keyed by: none for one floored per byte (every
 * instance of its collective and context stating bytes shares a group), else its message
 * (equal sizes). */
static const char *group_msg(const tl_coll *x) { return x->bytes > 0 ? "" : x->msg; }

/* Instances by (stage, name, basis, then message or position): a group's instances side by
 * side. */
static int cmp_coll(const void *pa, const void *pb, void *ctx) {
  const an_timeline *tl = ctx;
  const tl_coll *a = pa, *b = pb;
  size_t sa = tl->win[a->window].stage, sb = tl->win[b->window].stage;
  if (sa != sb) return sa < sb ? -1 : 1;
  int c = strcmp(a->name, b->name);
  if (c || (c = cmp_str0(a->context, b->context))) return c;
  if (a->basis != b->basis) return a->basis < b->basis ? -1 : 1;
  if (a->basis == AN_FLOOR_MESSAGE && (c = strcmp(group_msg(a), group_msg(b)))) return c;
  if (a->basis == AN_FLOOR_POSITION && a->ordinal != b->ordinal)
    return a->ordinal < b->ordinal ? -1 : 1;
  return a->window < b->window ? -1 : (a->window > b->window);
}

static bool same_group(const an_timeline *tl, const tl_coll *a, const tl_coll *b) {
  return tl->win[a->window].stage == tl->win[b->window].stage && a->name == b->name &&
         a->context == b->context && a->basis == b->basis &&
         (a->basis != AN_FLOOR_MESSAGE || (a->bytes > 0) == (b->bytes > 0)) &&
         (a->basis != AN_FLOOR_MESSAGE || a->bytes > 0 || a->msg == b->msg) &&
         (a->basis != AN_FLOOR_POSITION || a->ordinal == b->ordinal);
}

/* A step's first collective absorbs the other ranks' late arrival (waits.h); when a rank
 * is late in every step, the first position's own floor is that skew, not a transfer. Its
 * transfer is what the same collective takes at the step's later positions when those do
 * the same work (their floors agree within collectives.first_same_work_ratio): a first
 * instance of a position-basis group then gets the floor of its collective's other
 * instances when that is lower. wi and tl->coll are parallel, sorted by cmp_coll. */
static int cmp_wi_dur(const void *pa, const void *pb, void *ctx) {
  const an_wait_instance *wi = ctx;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (wi[a].dur_us != wi[b].dur_us) return wi[a].dur_us < wi[b].dur_us ? -1 : 1;
  return a < b ? -1 : (a > b);
}

static bool first_position_floors(an_timeline *tl, an_wait_instance *wi) {
  uint32_t *rest = malloc(tl->n_coll * sizeof *rest);
  double *d = malloc(tl->n_coll * sizeof *d);
  if (!rest || !d) {
    free(rest);
    free(d);
    return false;
  }
  size_t min_like = (size_t)tl->set->collectives_floor_min_instances;
  for (size_t lo = 0, hi; lo < tl->n_coll; lo = hi) {
    const tl_coll *a = &tl->coll[lo];
    size_t m = 0, positions = 0;       /* later instances, and their distinct positions */
    double lo_floor = 0, hi_floor = 0; /* the later positions' floors */
    for (hi = lo; hi < tl->n_coll; hi++) {
      const tl_coll *b = &tl->coll[hi];
      if (b->name != a->name || b->context != a->context || b->basis != a->basis ||
          tl->win[b->window].stage != tl->win[a->window].stage)
        break;
      if (b->first) continue;
      positions += !m || b->ordinal != tl->coll[hi - 1].ordinal;
      if (!m || wi[hi].floor_us < lo_floor) lo_floor = wi[hi].floor_us;
      if (!m || wi[hi].floor_us > hi_floor) hi_floor = wi[hi].floor_us;
      rest[m++] = (uint32_t)hi;
    }
    /* one later position cannot show that the positions do the same work, nor fewer like
     * instances than a floor needs */
    if (a->basis != AN_FLOOR_POSITION || positions < 2 || m < min_like ||
        hi_floor > lo_floor * tl->set->collectives_first_same_work_ratio)
      continue;
    ut_sort(rest, m, sizeof *rest, cmp_wi_dur, wi);
    for (size_t k = 0; k < m; k++) d[k] = wi[rest[k]].dur_us;
    double floor = an_wait_floor(d, m, tl->set->collectives_floor_pct);
    size_t at = (size_t)(tl->set->collectives_floor_pct / 100.0 * (double)(m - 1)); /* its */
    for (size_t i = lo; i < hi; i++)
      if (tl->coll[i].first && (wi[i].floor_us > floor || wi[i].alone)) {
        if (floor < wi[i].floor_us) {
          wi[i].floor_us = floor;
          wi[i].floor_from = rest[at < m ? at : m - 1];
        }
        wi[i].wait_us = wi[i].dur_us - wi[i].floor_us;
        wi[i].alone = false; /* compared with the later positions */
        tl->coll[i].unknown = 0;
      }
  }
  free(rest);
  free(d);
  return true;
}

/* An instance is unknown when it is alone, for any reason. */
static void mark_unknown(an_timeline *tl, an_wait_instance *wi, size_t i, uint8_t why) {
  tl->coll[i].unknown = why;
  wi[i].floor_us = wi[i].dur_us;
  wi[i].wait_us = 0;
  wi[i].alone = true;
  wi[i].floor_from = (uint32_t)i;
}

/* A group of fewer than collectives.floor_min_instances like instances cannot tell transfer
 * from wait (two samples of one context can both be mostly wait: hta_sampled_2ranks' input
 * dist all-to-all of 384 elements took 21.1 and 30.7 ms in its two steps), nor can a group
 * floored by name alone (no message size, no position in a step: unlike messages share a
 * name): their time is unknown, as a group of one's. wi and tl->coll are parallel, sorted
 * by cmp_coll (groups side by side). */
static void unknown_groups(an_timeline *tl, an_wait_instance *wi) {
  size_t min_like = (size_t)tl->set->collectives_floor_min_instances;
  for (size_t lo = 0, hi; lo < tl->n_coll; lo = hi) {
    for (hi = lo; hi < tl->n_coll && wi[hi].group == wi[lo].group; hi++) {
    }
    uint8_t why = tl->coll[lo].basis == AN_FLOOR_NAME ? TL_UNSIZED
                  : hi - lo < min_like || hi - lo < 2 ? TL_FEW
                                                      : 0;
    for (size_t i = lo; i < hi; i++) {
      tl->coll[i].like = (uint32_t)(hi - lo);
      tl->coll[i].unknown = 0;
      if (why) mark_unknown(tl, wi, i, why);
    }
  }
}

/* A floor set by a latency-bound message (under collectives.latency_bound_bytes: its time
 * is the fixed cost, not a transfer of its bytes) that itself took more than
 * collectives.latency_floor_max_ratio x the fixed cost waited too: it measures no
 * transfer, so the instances it floors have an unknown split (param_dlrm_rank0_v100's
 * input dist: a 13.5 KB all-to-all of 131 us floored a 1032 us one). A floor near the
 * fixed cost measures it, and the wait above it stays wait. After unknown_groups: the
 * instances it left known, wi and tl->coll parallel. */
static void latency_bound_floors(an_timeline *tl, an_wait_instance *wi) {
  double max_us = tl->set->collectives_latency_floor_max_ratio * tl->set->collectives_latency_us;
  for (size_t i = 0; i < tl->n_coll; i++) {
    uint32_t j = wi[i].floor_from;
    if (tl->coll[i].unknown || wi[i].alone || j == AN_WAIT_LATENCY || j >= tl->n_coll) continue;
    const tl_coll *f = &tl->coll[j];
    if (f->basis != AN_FLOOR_MESSAGE || f->bytes <= 0 ||
        f->bytes >= tl->set->collectives_latency_bound_bytes || wi[j].dur_us <= max_us)
      continue;
    mark_unknown(tl, wi, i, TL_LATENCY);
  }
}

/* The message an alone instance shares with its like ones in a step: its size, else its
 * message key (interned: pointers compare). */
static int cmp_like_in_step(const void *pa, const void *pb, void *ctx) {
  const an_timeline *tl = ctx;
  const tl_coll *a = &tl->coll[*(const uint32_t *)pa], *b = &tl->coll[*(const uint32_t *)pb];
  if (a->window != b->window) return a->window < b->window ? -1 : 1;
  int c = strcmp(a->name, b->name);
  if (c || (c = cmp_str0(a->context, b->context))) return c;
  if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
  if ((c = cmp_ptr(a->msg, b->msg))) return c;
  if (a->dur != b->dur) return a->dur < b->dur ? -1 : 1;
  return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

static bool like_in_step(const tl_coll *a, const tl_coll *b) {
  return a->window == b->window && a->name == b->name && a->context == b->context &&
         a->bytes == b->bytes && a->msg == b->msg;
}

/* Brief 11 defect 1 (deviation O27): where no floor can be taken (a group under
 * collectives.floor_min_instances, a floor that is a latency-bound message's wait), like
 * instances in one step still bound the wait from below: the same collective and
 * launch-context family moving the same message in the same step does the same transfer,
 * so a slower one waited at least the difference (param_dlrm_rank0_v100's pooled
 * embedding exchange: two 6144-float all-to-alls of 2146 and 514 us in one step, at least
 * 1632 us of wait). The fastest's own split stays unknown (it may have waited too), and so
 * does that part of the others. Only instances that state their message; after the floors,
 * wi and tl->coll parallel. O(n log n). */
static bool like_in_step_waits(an_timeline *tl, an_wait_instance *wi) {
  uint32_t *ix = malloc((tl->n_coll ? tl->n_coll : 1) * sizeof *ix);
  if (!ix) return false;
  size_t m = 0;
  for (size_t i = 0; i < tl->n_coll; i++)
    if (wi[i].alone && tl->coll[i].msg && tl->coll[i].unknown != TL_UNSIZED) ix[m++] = (uint32_t)i;
  ut_sort(ix, m, sizeof *ix, cmp_like_in_step, tl);
  for (size_t lo = 0, hi; lo < m; lo = hi) {
    const tl_coll *fast = &tl->coll[ix[lo]]; /* the run's fastest */
    for (hi = lo + 1; hi < m && like_in_step(&tl->coll[ix[hi]], fast); hi++) {
      tl_coll *x = &tl->coll[ix[hi]];
      if (x->dur <= fast->dur) continue;
      x->lower = true;
      wi[ix[hi]].wait_us = (double)(x->dur - fast->dur) / 1000.0;
    }
  }
  free(ix);
  return true;
}

/* Transfer and wait of every instance (waits.h), added to its window's account. */
static bool collective_waits(an_timeline *tl) {
  if (!tl->n_coll) return true;
  long min_steps = tl->set->collectives_position_min_steps;
  for (size_t i = 0; i < tl->n_coll; i++) {
    bool by_position = (long)tl->work[tl->win[tl->coll[i].window].stage].n_steps >= min_steps;
    tl->coll[i].basis = tl->coll[i].msg ? AN_FLOOR_MESSAGE
                        : by_position   ? AN_FLOOR_POSITION
                                        : AN_FLOOR_NAME;
  }
  ut_sort(tl->coll, tl->n_coll, sizeof *tl->coll, cmp_coll, tl);
  an_wait_instance *wi = malloc(tl->n_coll * sizeof *wi);
  if (!wi) return false;
  uint64_t group = 0;
  for (size_t i = 0; i < tl->n_coll; i++) {
    if (i > 0 && !same_group(tl, &tl->coll[i], &tl->coll[i - 1])) group++;
    wi[i] = (an_wait_instance){
        .group = group, .dur_us = (double)tl->coll[i].dur / 1000.0, .bytes = tl->coll[i].bytes};
  }
  bool ok = an_wait_model(wi, tl->n_coll, tl->set->collectives_floor_pct,
                          tl->set->collectives_latency_us) == AN_OK;
  if (ok) unknown_groups(tl, wi);
  if (ok) latency_bound_floors(tl, wi);
  ok = ok && first_position_floors(tl, wi) && like_in_step_waits(tl, wi);
  for (size_t i = 0; ok && i < tl->n_coll; i++) {
    tl_coll *x = &tl->coll[i];
    x->wait_us = wi[i].wait_us;
    x->floor = tl_ns(wi[i].floor_us);
    x->per_byte_us = wi[i].per_byte_us;
    x->latency_us = wi[i].latency_us;
    x->alone = wi[i].alone;
    x->floor_from = wi[i].floor_from;
    an_time_account *a = &tl->win[x->window].acc;
    a->collective_wait_ns += tl_ns(x->wait_us);
    if (x->first) a->first_collective_wait_ns += tl_ns(x->wait_us);
    /* an alone instance's time past its wait's lower bound is unknown */
    if (x->first && x->alone) a->first_collective_unknown_ns += x->dur - tl_ns(x->wait_us);
    if (x->first) a->first_collective_ns += x->dur;
  }
  free(wi);
  return ok;
}

/* Window w's collectives' idle parts (an_wait_cover): the other GPU events of its kernels k
 * (the previous step's tail and the kernels before the window's start included: they hold
 * the GPU too), in order of start, from the latest start that can still reach the
 * collective. */
static bool idle_window(an_timeline *tl, tl_trace *c, size_t w, tl_kernel *k, size_t n,
                        window_pass *p) {
  pass_tails(c, &tl->win[w], k, &n, &p->tail);
  if (!n || p->off[w] == p->off[w + 1]) return true;
  ut_sort(k, n, sizeof *k, cmp_kernel, NULL);
  int64_t longest = 0; /* no event starting earlier than this before a time runs at it */
  for (size_t i = 0; i < n; i++)
    if (k[i].end - k[i].start > longest) longest = k[i].end - k[i].start;
  for (size_t j = p->off[w]; j < p->off[w + 1]; j++) {
    tl_coll *x = &tl->coll[p->ix[j]];
    an_wait_cover cv = an_wait_cover_begin(x->start, tl_ns(x->wait_us), x->start + x->dur);
    size_t a;
    UT_PARTITION_POINT(a, 0, n, i, k[i].start < x->start - longest);
    for (size_t i = a; i < n && k[i].start < cv.end; i++)
      if (k[i].pos != x->pos) an_wait_cover_add(&cv, k[i].start, k[i].end);
    x->idle_wait = an_wait_cover_idle(&cv);
    tl->win[w].acc.collective_idle_wait_ns += x->idle_wait;
  }
  return true;
}

/* The idle part of every collective's wait, once the waits are known: a second pass over
 * each trace's windows that hold a collective (idle_window), one window's kernels at a
 * time, rather than each collective's intervals held from its window's account to here. */
static bool collective_idle(an_timeline *tl, const an_timeline_input *in) {
  if (!tl->n_coll) return true;
  size_t *off = calloc(tl->n_win + 1, sizeof *off);
  uint32_t *ix = malloc(tl->n_coll * sizeof *ix);
  bool ok = off && ix;
  for (size_t j = 0; ok && j < tl->n_coll; j++) off[tl->coll[j].window + 1]++;
  for (size_t w = 0; ok && w < tl->n_win; w++) off[w + 1] += off[w];
  for (size_t j = 0; ok && j < tl->n_coll; j++) ix[off[tl->coll[j].window]++] = (uint32_t)j;
  for (size_t w = tl->n_win; ok && w > 0; w--) off[w] = off[w - 1]; /* back to starts */
  if (ok) off[0] = 0;
  window_pass p = {{NULL, 0, 0}, {0}, off, ix, NULL};
  for (size_t t = 0; ok && t < tl->n_traces; t++) {
    const tl_trace_windows *m = &tl->maps[t];
    size_t w_end = t + 1 < tl->n_traces ? tl->maps[t + 1].first_window : tl->n_win;
    if (off[w_end] == off[m->first_window]) continue; /* no collective */
    tl_trace c = {.in = &in[t],
                  .t = in[t].view->trace,
                  .step_window = m->step_window,
                  .stage_window = m->stage_window,
                  .first_window = m->first_window};
    p.tail = (tl_tail){NULL, 0, 0};
    ok = each_window(tl, &c, false, idle_window, &p);
  }
  free(off);
  free(ix);
  return ok;
}

static int cmp_coll_row(const void *pa, const void *pb) {
  const an_collective_time *a = pa, *b = pb;
  if (a->wait_ns != b->wait_ns) return a->wait_ns > b->wait_ns ? -1 : 1;
  int c = strcmp(a->kernel, b->kernel);
  return c ? c : cmp_str0(a->launch_context, b->launch_context);
}

/* Where row r's floor comes from: instance x's, the least of the row's known ones so far
 * (step_no: each window's number among its stage's counted steps, 0 none). */
static bool row_floor(an_timeline *tl, an_collective_time *r, const tl_coll *x,
                      const size_t *step_no) {
  if (x->alone || x->floor >= r->floor_ns) return true;
  r->floor_ns = x->floor;
  r->floor_like = x->like;
  r->floor_fixed = x->floor_from == AN_WAIT_LATENCY;
  r->floor_step = r->floor_trace = NULL;
  r->floor_step_no = 0;
  if (r->floor_fixed) return true;
  const tl_window *w = &tl->win[tl->coll[x->floor_from].window];
  if (w->step && !(r->floor_step = an_strtab_cstr(tl->strings, w->step->name))) return false;
  r->floor_step_no = step_no[tl->coll[x->floor_from].window];
  r->floor_trace = tl->n_traces > 1 ? w->path : NULL;
  return true;
}

/* Each window's number among its stage's counted steps (1-based; 0: not a step). NULL: out
 * of memory. */
static size_t *window_step_numbers(const an_timeline *tl) {
  size_t *no = calloc(tl->n_win + 1, sizeof *no), *count = calloc(tl->n_st + 1, sizeof *count);
  for (size_t w = 0; no && count && w < tl->n_win; w++)
    if (tl->win[w].step) no[w] = ++count[tl->win[w].stage];
  free(count);
  return no;
}

/* One row per (stage, collective, launch-context family) into tl->colls; the instances are
 * sorted by stage, name and family (collective_waits). A collective whose launches are split
 * by family keeps the rest, those of no labelled family, as a row of its own
 * (context_rest), as the overlap table does. */
static bool collective_rows(an_timeline *tl) {
  tl->colls = calloc(tl->n_coll ? tl->n_coll : 1, sizeof *tl->colls);
  tl->coll_stage = calloc(tl->n_coll ? tl->n_coll : 1, sizeof *tl->coll_stage);
  size_t *step_no = window_step_numbers(tl);
  bool ok = tl->colls && tl->coll_stage && step_no;
  an_collective_time *r = NULL;
  for (size_t i = 0; ok && i < tl->n_coll; i++) {
    const tl_coll *x = &tl->coll[i];
    const tl_coll *prev = i ? &tl->coll[i - 1] : NULL;
    if (!prev || prev->name != x->name || prev->context != x->context ||
        tl->win[prev->window].stage != tl->win[x->window].stage) {
      tl->coll_stage[tl->n_colls] = tl->win[x->window].stage;
      r = &tl->colls[tl->n_colls++];
      *r = (an_collective_time){.kernel = x->name,
                                .basis = x->basis,
                                .floor_ns = INT64_MAX,
                                .launch_context = x->context};
      /* the rest (no family) sorts first: a family row after it splits the name */
      if (x->context && tl->n_colls > 1 && r[-1].kernel == x->name && !r[-1].launch_context &&
          tl->coll_stage[tl->n_colls - 2] == tl->coll_stage[tl->n_colls - 1])
        r[-1].context_rest = true;
    }
    int64_t wait = tl_ns(x->wait_us);
    /* -1 while building: an instance stated no size (collective_rows' last loop: 0) */
    if (r->max_bytes >= 0) r->max_bytes = x->bytes <= 0 ? -1 : fmax(r->max_bytes, x->bytes);
    r->instances++;
    r->total_ns += x->dur;
    r->wait_ns += wait;
    r->idle_wait_ns += x->idle_wait;
    if (x->first) r->first_wait_ns += wait;
    ok = row_floor(tl, r, x, step_no);
    if (wait > r->max_wait_ns) r->max_wait_ns = wait;
    if (x->alone) {
      r->alone++;
      r->unknown_ns += x->dur - wait;
      r->lower += x->lower;
      r->few += x->unknown == TL_FEW;
      r->unsized += x->unknown == TL_UNSIZED;
      r->latency_bound += x->unknown == TL_LATENCY;
      if (x->unknown == TL_LATENCY) r->latency_unknown_ns += x->dur - wait;
    }
    if (x->basis == AN_FLOOR_MESSAGE && x->bytes > 0 && !x->alone) {
      /* floored per byte: one such group a row (its collective and context) */
      r->floor_latency_us = x->latency_us;
      r->floor_gbps = x->per_byte_us > 0 ? US_PER_BYTE_TO_GBPS / x->per_byte_us : 0;
    }
  }
  for (size_t i = 0; i < tl->n_colls; i++) {
    if (tl->colls[i].floor_ns == INT64_MAX) tl->colls[i].floor_ns = 0; /* every one alone */
    if (tl->colls[i].max_bytes < 0) tl->colls[i].max_bytes = 0;
  }
  free(step_no);
  return ok;
}

/* ---------------------------------------------------------------- stages */

static void add_account(an_time_account *t, const an_time_account *a) {
  t->span_ns += a->span_ns;
  t->busy_ns += a->busy_ns;
  t->idle_ns += a->idle_ns;
  t->kernel_ns += a->kernel_ns;
  t->pdl_wait_ns += a->pdl_wait_ns;
  t->graph_kernel_ns += a->graph_kernel_ns;
  t->collective_ns += a->collective_ns;
  t->collective_wait_ns += a->collective_wait_ns;
  t->collective_idle_wait_ns += a->collective_idle_wait_ns;
  t->first_collective_wait_ns += a->first_collective_wait_ns;
  t->first_collective_ns += a->first_collective_ns;
  t->first_collective_unknown_ns += a->first_collective_unknown_ns;
  t->host_ns += a->host_ns;
  for (int k = 0; k < AN_IDLE_KINDS; k++) t->idle_by_kind_ns[k] += a->idle_by_kind_ns[k];
  t->n_kernels += a->n_kernels;
  t->n_gaps += a->n_gaps;
  t->n_short_gaps += a->n_short_gaps;
  if (a->short_max_ns > t->short_max_ns) t->short_max_ns = a->short_max_ns;
  t->graph_hole_ns += a->graph_hole_ns;
  t->graph_hole_busy_ns += a->graph_hole_busy_ns;
  t->n_graph_holes += a->n_graph_holes;
  if (a->graph_hole_max_ns > t->graph_hole_max_ns) t->graph_hole_max_ns = a->graph_hole_max_ns;
}

/* The stages' merged causes; then every account's pointer into tl->causes, which no
 * longer grows. */
static bool link_causes(an_timeline *tl) {
  for (size_t s = 0; s < tl->n_st; s++)
    if (!stage_causes(tl, s, &tl->work[s].cause_lo, &tl->work[s].cause_hi)) return false;
  for (size_t w = 0; w < tl->n_win; w++) {
    tl_window *win = &tl->win[w];
    win->acc.causes = tl->causes + win->cause_lo;
    win->acc.n_causes = win->cause_hi - win->cause_lo;
  }
  for (size_t s = 0; s < tl->n_st; s++) {
    tl->stages[s].total.causes = tl->causes + tl->work[s].cause_lo;
    tl->stages[s].total.n_causes = tl->work[s].cause_hi - tl->work[s].cause_lo;
  }
  return true;
}

/* A step window's work (an_step_account.work_us). */
static double work_us(const tl_window *win) {
  double us = win->step->launched_us - (double)win->launched_comm_ns / 1000.0;
  return us > 0 ? us : 0;
}

/* The stage's idle after syncs that drained the queue before its steps (its causes'
 * an_drain), told only from timeline.drain_min_pct of its span on. */
static void stage_drain(const an_timeline *tl, an_time_account *t) {
  for (size_t i = 0; i < t->n_causes; i++) add_drain(&t->drain, &t->causes[i].drain);
  if ((double)t->drain.ns * 100.0 < tl->set->timeline_drain_min_pct * (double)t->span_ns)
    t->drain = (an_drain){0};
}

/* Each stage's sum, medians and steps (its windows that are steps, in window order). */
static bool assemble(an_timeline *tl) {
  if (!link_causes(tl)) return false;
  tl->steps = calloc(tl->n_win + 1, sizeof *tl->steps);
  if (!tl->steps) return false;
  size_t at = 0;
  for (size_t s = 0; s < tl->n_st; s++) {
    an_stage_timeline *st = &tl->stages[s];
    st->steps = tl->steps + at;
    for (size_t w = 0; w < tl->n_win; w++) {
      const tl_window *win = &tl->win[w];
      if (win->stage != s) continue;
      add_account(&st->total, &win->acc);
      if (!win->step) continue;
      const char *name = an_strtab_cstr(tl->strings, win->step->name); /* outlives the trace */
      if (!name) return false;
      tl->steps[at++] =
          (an_step_account){name,      win->step->cpu_ts, win->step->gpu_ts, win->step->cpu_end,
                            win->path, work_us(win),      win->acc};
      st->n_steps++;
    }
    st->total.median_gap_ns = median(tl->work[s].gaps.v, tl->work[s].gaps.n);
    st->host_exceeds = st->total.host_ns > 0 &&
                       (double)st->total.host_ns >=
                           tl->set->timeline_host_extent_min_ratio * (double)st->total.span_ns;
    st->total.median_kernel_ns = median(tl->work[s].kernels.v, tl->work[s].kernels.n);
    double steps = (double)(st->n_steps ? st->n_steps : 1);
    st->graph_unrecorded =
        st->total.graph_hole_ns > 0 &&
        (double)st->total.graph_hole_ns * 100.0 >=
            tl->set->timeline_graph_hole_min_pct * (double)st->total.span_ns &&
        (double)st->total.n_graph_holes >= tl->set->timeline_graph_hole_min_per_step * steps;
    stage_drain(tl, &st->total);
    st->launch_lead.queued_ns = an_account_queued_ns(&st->total);
  }
  return true;
}

/* Each stage's collective rows: a slice of tl->colls (rows come stage by stage). */
static void link_collectives(an_timeline *tl) {
  for (size_t i = 0; i < tl->n_colls;) {
    size_t j = i;
    while (j < tl->n_colls && tl->coll_stage[j] == tl->coll_stage[i]) j++;
    an_stage_timeline *st = &tl->stages[tl->coll_stage[i]];
    qsort(tl->colls + i, j - i, sizeof *tl->colls, cmp_coll_row);
    st->collectives = tl->colls + i;
    st->n_collectives = j - i;
    i = j;
  }
}

static void work_free(an_timeline *tl) {
  for (size_t s = 0; tl->work && s < tl->n_st; s++) {
    free(tl->work[s].gaps.v);
    free(tl->work[s].kernels.v);
  }
  free(tl->work);
  tl->work = NULL;
  free(tl->coll);
  tl->coll = NULL;
  for (size_t i = 0; tl->maps && i < tl->n_traces; i++) {
    free(tl->maps[i].step_window);
    free(tl->maps[i].stage_window);
  }
  free(tl->maps);
  tl->maps = NULL;
  free(tl->por);
  tl->por = NULL;
  free(tl->cause_slots.slot);
  tl->cause_slots = (cause_table){NULL, 0};
}

an_status an_timeline_build(const an_timeline_input *in, size_t n, const te_rules *rules,
                            an_strtab *strings, an_timeline **out) {
  *out = NULL;
  an_timeline *tl = calloc(1, sizeof *tl);
  if (!tl) return AN_ERR_NOMEM;
  tl->rules = rules;
  tl->set = te_rules_settings(rules);
  tl->strings = strings;
  tl->n_st = te_rules_stage_count(rules);
  tl->stages = calloc(tl->n_st + 1, sizeof *tl->stages);
  tl->ran = calloc(tl->n_st + 1, sizeof *tl->ran);
  tl->work = calloc(tl->n_st + 1, sizeof *tl->work);
  bool ok = tl->stages && tl->ran && tl->work;
  tl->n_traces = n;
  tl->maps = calloc(n ? n : 1, sizeof *tl->maps);
  ok = ok && tl->maps;
  for (size_t i = 0; ok && i < n; i++) ok = account_trace(tl, &in[i], &tl->maps[i]);
  ok = ok && setup_in_steps(tl) && collective_waits(tl) && collective_idle(tl, in) &&
       assemble(tl) && collective_rows(tl);
  if (ok) link_collectives(tl);
  work_free(tl);
  if (!ok) {
    an_timeline_destroy(tl);
    return AN_ERR_NOMEM;
  }
  *out = tl;
  return AN_OK;
}

void an_timeline_destroy(an_timeline *tl) {
  if (!tl) return;
  work_free(tl);
  free(tl->stages);
  free(tl->ran);
  free(tl->win);
  free(tl->causes);
  free(tl->steps);
  free(tl->colls);
  free(tl->coll_stage);
  free(tl);
}

const an_stage_timeline *an_timeline_stage(const an_timeline *tl, const char *stage_id) {
  if (!tl || !stage_id) return NULL;
  for (size_t s = 0; s < tl->n_st; s++)
    if (!strcmp(te_rules_stage(tl->rules, s)->id, stage_id))
      return tl->ran[s] ? &tl->stages[s] : NULL;
  return NULL;
}

/* Moves the idle of kind outside in account a to kind filtered. */
static void filtered_account(an_time_account *a) {
  a->idle_by_kind_ns[AN_IDLE_FILTERED] += a->idle_by_kind_ns[AN_IDLE_OUTSIDE];
  a->idle_by_kind_ns[AN_IDLE_OUTSIDE] = 0;
}

void an_timeline_mark_filtered(an_timeline *tl) {
  if (!tl) return;
  for (size_t i = 0; i < tl->n_causes; i++)
    if (tl->causes[i].kind == AN_IDLE_OUTSIDE) tl->causes[i].kind = AN_IDLE_FILTERED;
  for (size_t w = 0; w < tl->n_win; w++) filtered_account(&tl->win[w].acc);
  for (size_t s = 0; s < tl->n_st; s++) filtered_account(&tl->stages[s].total);
  for (size_t i = 0; tl->steps && i < tl->n_win; i++) filtered_account(&tl->steps[i].account);
}
