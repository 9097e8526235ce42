/*
 * analysis/id_index.h - the events of one kind that carry an id, sorted by that id.
 *
 * Attribution finds a kernel's CPU op by External id and its launch by correlation; the
 * overlap scope does the same. Both need the events with a given id in start order, so
 * an index holds the positions of the events that have the id, sorted by (id, ts,
 * position): 4 bytes an event, where a copy of id and ts took 24 (15 MB on a cpu_op-heavy
 * 468 MB trace) and glibc's qsort of pointers took 16 with its merge buffer. ut_sort
 * needs no buffer as large as the index (util/sort.h) and, the order being total, gives
 * what any sort would.
 *
 * Ownership: an index borrows the trace (which must outlive it) and owns its positions;
 * an_id_index_free releases them. The struct belongs to the caller.
 */
#ifndef TRIAGE_ANALYSIS_ID_INDEX_H
#define TRIAGE_ANALYSIS_ID_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

typedef enum an_id_kind { AN_ID_EXTERNAL = 0, AN_ID_CORRELATION = 1 } an_id_kind;

typedef struct an_id_index {
  const tr_trace *t;
  const tr_event *evs; /* tr_trace_events of the kind */
  an_id_kind id;
  uint32_t *pos; /* positions in evs, sorted */
  size_t n;
} an_id_index;

/* Builds the index of the kind's events that have the id. 0, or -1 out of memory (x is
 * then empty and may be freed). */
int an_id_index_build(an_id_index *x, const tr_trace *t, tr_kind kind, an_id_kind id);
void an_id_index_free(an_id_index *x);

/* The i-th event in index order. */
static inline const tr_event *an_id_index_event(const an_id_index *x, size_t i) {
  return &x->evs[x->pos[i]];
}

/* [*lo, *hi): the entries whose id is `id` (empty when none). */
void an_id_index_range(const an_id_index *x, int64_t id, size_t *lo, size_t *hi);
/* The same range, searched from *hint (0 at first) in log d steps when it lies d entries
 * away: a caller looking ids up in about ascending order (attribution, kernel by kernel)
 * keeps one hint per index. *hint becomes *lo. */
void an_id_index_range_near(const an_id_index *x, int64_t id, size_t *hint, size_t *lo, size_t *hi);

/* The two indexes attribution and the overlap scope search: CPU ops by External id,
 * launches by correlation. One per trace, built once and lent to both. Every search of
 * ops_by_ext is for a kernel's External id (its own, else its correlation's), so it holds
 * only the ops whose id a kernel of the trace carries: most CPU ops launch nothing (1.8 of
 * 2.4 MB on a cpu_op-heavy 468 MB trace). */
typedef struct an_trace_ids {
  an_id_index ops_by_ext, launches_by_corr;
} an_trace_ids;

/* The launch call of kernel k of trace t (by its correlation), or NULL when the trace has
 * none (launched before the capture, runtime events not kept) or ids is NULL. */
const tr_event *an_trace_ids_launch_of(const an_trace_ids *ids, const tr_trace *t,
                                       const tr_event *k);
/* The same, the index searched from *hint (0 at first, then set by each call): kernels
 * asked in time order have correlations in about ascending order. */
const tr_event *an_trace_ids_launch_of_near(const an_trace_ids *ids, const tr_trace *t,
                                            const tr_event *k, size_t *hint);

/* 0, or -1 out of memory (ids is then empty and may be freed). */
int an_trace_ids_build(an_trace_ids *ids, const tr_trace *t);
void an_trace_ids_free(an_trace_ids *ids);
/* The indexes a consumer searches: lent when not NULL (they must outlive the consumer),
 * else built into own (zero-initialised; the caller frees it with an_trace_ids_free).
 * NULL when out of memory. */
const an_trace_ids *an_trace_ids_lend(const an_trace_ids *lent, an_trace_ids *own,
                                      const tr_trace *t);

#endif
