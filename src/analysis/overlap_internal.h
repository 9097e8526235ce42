/*
 * analysis/overlap_internal.h - pieces of the overlap analysis shared by the overlap*.c
 * files (sweep, selection, source map). Not part of the public API: callers use
 * analysis/overlap.h.
 *
 * Ownership: every array here is owned by the struct that holds it and released by the
 * matching *_free function; const char * members are borrowed (from a tr_trace or from
 * the te_rules) unless a comment says otherwise.
 */
#ifndef TRIAGE_ANALYSIS_OVERLAP_INTERNAL_H
#define TRIAGE_ANALYSIS_OVERLAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/id_index.h"
#include "analysis/launch_context.h"
#include "analysis/model.h"
#include "analysis/overlap.h"
#include "trace/trace.h"
#include "triage/rules.h"
#include "util/map.h"

/* ---------------------------------------------------------------- categories */

/* The overlap classifier's categories, resolved once per run so the sweep compares
 * small integers instead of strings. */
typedef struct ov_cats {
  ut_strmap names;  /* category label -> index */
  double *priority; /* overlap.category_priority.<cat> */
  double *weight;   /* overlap.weight.<cat> */
  bool *low_roi;    /* member of overlap.low_roi_hidden.categories */
  bool *collective; /* member of overlap.collective_categories */
  bool *never_row;  /* member of overlap.never_row_categories */
  size_t cap;
  long compute; /* index of "compute", -1 if never seen */
  /* the label asked last and its index: labels are the packs' (a classifier's category
   * texts), so one pointer is one label, and most names of a stage of many share one */
  const char *last_label;
  long last_idx;
} ov_cats;

void ov_cats_free(ov_cats *c);
/* Index of a category label, registering it (and reading its settings) on first use. */
long ov_cats_put(ov_cats *c, const te_rules *r, const char *label);
const char *ov_cats_label(const ov_cats *c, long idx);

/* ---------------------------------------------------------------- sweep */

/* One kernel of a formal stage, as the sweep sees it (24 bytes: the sweep's largest
 * array). Its overlap category is its name's (the name_cat array beside the kernels), and
 * its position in the array is its file order, the last tie-break. */
typedef struct ov_kernel {
  double ts, end;
  uint32_t name;   /* dense canonical-name index (aggregation key) */
  uint32_t stream; /* dense stream index */
} ov_kernel;

/* Per canonical name, what the sweep measured. */
typedef struct ov_agg { /* 88 bytes, one per name: indices are 32-bit like ov_point.k */
  uint32_t name, cat;
  uint32_t count;
  int32_t top_partner_name; /* canonical name hidden under the longest, -1 if none */
  uint32_t rep;             /* index into the kernel array: longest event (first wins) */
  uint32_t first;           /* index into the kernel array: earliest start (first wins) */
  double total_us, hidden_us, exclusive_us, hidden_by_compute_us;
  /* Time with no compute kernel on another stream of the GPU, summed over the
   * instances; its split (ov_agg_steady_us, ov_agg_wait_us) is computed from it, the
   * median instance and the count rather than kept (16 bytes a name). */
  double exposed_us;
  double exposed_median_us, exposed_first_us; /* median instance; the earliest one */
  double top_partner_us;
} ov_agg;

/* Of an aggregate's exposed time, the steady part: median instance x count (what every
 * instance costs), at most the whole. */
static inline double ov_agg_steady_us(const ov_agg *a) {
  double all = a->exposed_median_us * (double)a->count;
  return all < a->exposed_us ? all : a->exposed_us;
}

/* The excess above the steady part: a few slow instances (rank skew, stalls). */
static inline double ov_agg_wait_us(const ov_agg *a) { return a->exposed_us - ov_agg_steady_us(a); }

typedef struct ov_sweep {
  double busy_us;     /* union of busy time over all streams */
  double multi_us;    /* time with kernels on >= 2 distinct streams */
  size_t max_streams; /* most distinct streams active at once */
  ov_agg *aggs;       /* one per canonical name, in first-seen order */
  size_t n_aggs;
} ov_sweep;

/* Measures busy / overlap time and per-name hidden / exclusive time. kernels must be
 * given in file order (aggregation order follows it, and ties go to the earlier one);
 * they are not modified. name_cat holds the ov_cats index of each of the n_names names.
 * n_names and n_streams bound the dense indices. AN_OVERLAP_ERR_NOMEM, or
 * AN_OVERLAP_ERR_LIMIT past AN_MAX_ACTIVE_KERNELS kernels at once (out is then empty). */
an_overlap_status ov_sweep_run(const ov_kernel *kernels, size_t n, size_t n_names,
                               const uint32_t *name_cat, size_t n_streams, const ov_cats *cats,
                               ov_sweep *out);
void ov_sweep_free(ov_sweep *s);

/* ---------------------------------------------------------------- recoverable time */

/* Recoverable time of one row in ms (per step when n_steps > 0: the row's share inside the
 * counted steps, steps_us of total_us, over n_steps): its steady exposed time,
 * for an action other than fusion or elimination at most the stage's compute time not
 * already hiding it and 0 on a single-stream stage (copy-engine and restructure rows
 * excepted: they bring their lane); 0 for a row that asks for nothing (skip, already
 * fused, one-time setup, a wait) (overlap_gain.c). */
double ov_gain_row(const an_overlap_row *r, double stage_compute_us, size_t max_streams,
                   size_t n_steps);
/* Fills every row's recoverable_ms and, with overlap.recoverable.rank, orders the rows by
 * it (stable). */
void ov_gain_rank(an_overlap_stage *st, double stage_compute_us, size_t lanes,
                  const te_settings *set);
/* The streams a stage really runs side by side (overlap.multi_stream_min_pct). */
size_t ov_lanes(const te_settings *set, const ov_sweep *sw);
/* Marks the rows under overlap.recoverable.floor_ms (one-time and wait rows never) and
 * counts them; a P1 row that recovers nothing becomes P4 (with overlap.mechanism_actions). */
void ov_gain_floor(an_overlap_stage *st, const te_settings *set);
/* Lists overlap.restructure_options under the stage when a restructure row above the floor
 * is a collective (overlap category communication); none otherwise. */
void ov_restructure_options(an_overlap_stage *st, const te_settings *set);
/* Deviation O27: list (n items) without the levers that move fewer bytes (matcher
 * bytes_lever) when row's messages are all latency-bound; the kept ones go to
 * row->lever_store[slot] (owned; the previous one freed). Returns list when nothing is
 * dropped (or out of memory), and sets *n to the kept count. */
const char *const *ov_without_bytes_levers(const te_rules *r, an_overlap_row *row, int slot,
                                           const char *const *list, size_t *n);
/* After ov_restructure_options: each row's options without the bytes levers when its
 * messages are latency-bound; the stage's list follows its first row's. */
void ov_latency_bound_options(an_overlap_stage *st, const te_rules *r);
/* The action of a row no lane beside it can help as it is: restructure (P2) for a
 * collective (overlap.collective_categories), skip (P4) for any other kernel (overlap.c). */
void ov_no_lane(const te_settings *set, an_overlap_row *row);
/* Frees the evidence's strings and resets it to AN_DEP_EV_NONE (overlap.c). */
void ov_dep_evidence_clear(an_dep_evidence *ev);

/* ---------------------------------------------------------------- source map */

/* Python-side indexes of one mapping trace: frames per thread with parent links, CPU
 * ops by External id and launches by correlation. Built once per trace. */
typedef struct ov_source ov_source;

/* ids: the trace's id indexes to borrow (must outlive the source), or NULL to build its
 * own. */
ov_source *ov_source_create(const tr_trace *t, const an_trace_ids *ids, const te_rules *r);
void ov_source_destroy(ov_source *s);

/* How a kernel event got its scope (docs/reference.md §6.5 order). */
typedef enum ov_scope_how {
  OV_SCOPE_NONE = 0,
  OV_SCOPE_CPU_OP = 1,     /* CPU op with the kernel's External id */
  OV_SCOPE_LAUNCH = 2,     /* launch event with the kernel's correlation (deviation O1) */
  OV_SCOPE_TIME_WINDOW = 3 /* Python frames of any thread around the GPU timestamp */
} ov_scope_how;

/* Best scope of one kernel event of the mapping trace. scope and op (cap bytes each)
 * receive the canonical scope ("path(line): func") and the CPU op / launch name. With
 * OV_SCOPE_NONE, op may still name a CPU op that matched but had no Python frames. */
ov_scope_how ov_source_scope(ov_source *s, const tr_event *kernel, char *scope, size_t scope_cap,
                             char *op, size_t op_cap);

/* ---------------------------------------------------------------- sides and stage sets */

/* What an overlap row shows when it has no scope / no launching op. */
#define OV_UNMAPPED "unmapped"
#define OV_NO_OP "n/a"
/* The op vote of a kernel whose scope came from the time window (no op named it): a key
 * no trace's op name holds (a control character), so such kernels still share an op. */
#define OV_TIME_WINDOW_OP "\x01"

/* A malloc'd copy of s (NULL for NULL or out of memory). */
char *ov_strdup(const char *s);

/* The overlap kernels of one trace (docs/reference.md §6.1): detector, chosen PID, stream and
 * stage. */
typedef struct ov_side {
  tr_trace *t;
  const an_overlap_trace *in;
  const tr_event *all; /* the trace's kernel events (ov_side_stage) */
  uint32_t *ev;        /* kept kernels, file order: positions in all (ov_side_event) */
  uint32_t *name;      /* canonical-name id per kept kernel (ov_side_name) */
  uint32_t *stream;    /* stream id per kept kernel (streams below) */
  size_t n;
  /* The side's canonical names, ids dense in first-seen order (n_names). Each one the side's
   * kernel map holds is known by the map's id (kid[id]; map_to[map id]: id + 1, 0 = not the
   * side's), its text the map's: at 262,145 distinct names a map of the side's own (keys,
   * hashes, slots: ~10 MB) sat through the overlap sweep, the run's peak, and each name was
   * canonicalised and hashed again. The rest (kernels the map's stages did not hold, names
   * cut at the side's canonical buffer) are in `extra`; their kid is OV_EXTRA | index there. */
  uint32_t *kid;
  size_t n_names, cap_names;
  uint32_t *map_to;
  size_t n_map_to;
  ut_strmap extra;
  uint32_t *extra_to; /* per `extra` index: the side's name id */
  size_t cap_extra_to;
  ut_strmap streams;
  uint32_t *cat; /* overlap category + 1 per name id, 0 = not yet classified */
  size_t cat_cap;
  ov_source *source; /* built on first use as a mapping trace */
} ov_side;

typedef struct ov_bundle {
  ov_side *side;
  const char *stage;
  uint32_t *idx; /* kept-kernel indices of the side, file order; NULL when the bundle is
                  * every kept kernel of its side (idx[i] would be i: ov_bundle_kernel) */
  size_t n;
  /* name id -> kernels of that name (CSR), built on first use as a mapping bundle */
  size_t *by_name_off;
  uint32_t *by_name;
  /* source-map entries per name id, computed on demand */
  char **scope, **op;
  an_scope_source *how;
  bool *done;
} ov_bundle;

/* A side name's kid: an index into the side's `extra` names, not a kernel-map id. */
#define OV_EXTRA 0x80000000u

/* The canonical text of the side's name id nm (borrowed: the kernel map's, the trace's or
 * the side's copy). */
const char *ov_side_name(const ov_side *s, uint32_t nm);
/* The side's id of canonical name `name` (len bytes), or -1 when none of its kernels has
 * it. */
long ov_side_find_name(const ov_side *s, const char *name, size_t len);

/* The trace event of the side's kept kernel k. */
static inline const tr_event *ov_side_event(const ov_side *s, size_t k) {
  return &s->all[s->ev[k]];
}

/* The side's kept-kernel index of the bundle's i-th kernel. */
static inline uint32_t ov_bundle_kernel(const ov_bundle *b, size_t i) {
  return b->idx ? b->idx[i] : (uint32_t)i;
}

/* Python scope of a kernel name in a mapping bundle (docs/reference.md §6.5): sampled events,
 * each giving its best context (or, without one, the mapping kernel map's votes), plus the formal
 * payload's votes; the most common scope wins. With no vote at all, the mapping then the formal
 * kernel map's best location. */

typedef struct ov_scope_result {
  const char *scope, *op; /* OV_UNMAPPED / OV_NO_OP when none */
  an_scope_source how;
} ov_scope_result;

/* The scope of kernel name `kernel` of the mapping bundle map (NULL: none), with the
 * formal bundle's votes (overlap_scope.c); cached per name in map. */
ov_scope_result ov_scope_lookup(ov_bundle *map, const char *kernel, const te_rules *r,
                                const ov_bundle *formal);

#endif
