/*
 * trace/idmap.h - compact storage of event ids, durations and contexts (private to
 * src/trace).
 *
 * External ids and correlations are int64 in the file but, within one trace, nearly
 * always lie within 2^32 of each other. tr_event therefore holds each as a 32-bit offset
 * from a per-trace base (the first id seen, centred); an id outside that window is
 * stored as TR_OFF_WIDE and its full value goes to a side table keyed by the event's
 * index. The maps are open addressing at a load factor of at most 3/4. (Not
 * util/map.h's ut_u64map: the correlation map is the reader's largest index, and 32-bit
 * keys and values at 3/4 load take under 11 bytes an entry where ut_u64map's 64-bit
 * pairs and used flags at 1/2 load take 34 or more.)
 *
 * Ownership: each map or table owns its arrays; tr_map*_free / tr_ctxtab_free release
 * them (the struct itself belongs to the caller, zero-initialised = empty).
 */
#ifndef TRIAGE_TRACE_IDMAP_H
#define TRIAGE_TRACE_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h" /* tr_event_ctx */

/* TR_OFF_ABSENT (no id, TR_NO_ID) and TR_OFF_WIDE (an id outside the window: see the side
 * table) are in trace.h, whose inline accessors decode offsets. */

/* The window of one id kind: ids in [base, base + TR_OFF_WIDE) are stored as id - base. */
typedef struct tr_idbase {
  uint64_t base; /* unsigned so that id - base wraps instead of overflowing */
  bool set;
} tr_idbase;

/* Offset of id (TR_NO_ID -> TR_OFF_ABSENT, out of the window -> TR_OFF_WIDE). The first
 * id seen sets the base 2^31 below it, so ids on both sides of it fit. */
uint32_t tr_id_encode(tr_idbase *b, int64_t id);
/* Offset of id without setting the base (TR_OFF_WIDE when no base is set yet). */
uint32_t tr_id_find(const tr_idbase *b, int64_t id);
/* The id of an offset that is neither TR_OFF_ABSENT nor TR_OFF_WIDE. */
static inline int64_t tr_id_decode(const tr_idbase *b, uint32_t off) {
  return (int64_t)(b->base + off);
}

/* Durations. Kineto writes dur in microseconds with at most three decimals, so nearly
 * every dur is a whole number of nanoseconds below 2^32 (4.29 s): such a dur is stored as
 * that count, and TR_DUR_WIDE marks one that is not (longer, finer, negative, -0, NaN),
 * whose double goes to a side table. tr_dur_encode returns a count only when count /
 * 1000.0 gives back exactly the same double, so decoding is exact: both the parsed
 * double and the quotient are the double nearest to count / 1000. */
uint32_t tr_dur_encode(double dur);

/* Starts. Kineto writes ts in microseconds with at most three decimals, so a start is a
 * whole number of nanoseconds; starts past 2^53 ns (epoch-based ones) are written as
 * whole microseconds. The first start encoded chooses the unit (nanoseconds; microseconds
 * when it is past 2^53 ns) and the origin (that start), in h (trace.h's tr_trace_head:
 * the inline accessor decodes with them) and *set. tr_ts_encode returns the start's
 * count from the origin when it lies within 2^47 of it (39 hours in nanoseconds) and
 * (origin + count) / ts_div gives back the same double bit for bit (both are then the
 * double nearest to the decimal), else TR_TS_WIDE: the double goes to a side table. */
int64_t tr_ts_encode(tr_trace_head *h, bool *set, double ts);

/* uint32 -> uint32; key UINT32_MAX cannot be stored (it marks free slots). */
typedef struct tr_map32 {
  uint32_t *keys, *vals;
  size_t n, cap;
} tr_map32;
int tr_map32_put(tr_map32 *m, uint32_t key, uint32_t val); /* 0, or -1 out of memory */
bool tr_map32_get(const tr_map32 *m, uint32_t key, uint32_t *val);
void tr_map32_free(tr_map32 *m);

/* int64 -> int64; key INT64_MIN (TR_NO_ID) cannot be stored. */
typedef struct tr_map64 {
  int64_t *keys, *vals;
  size_t n, cap;
} tr_map64;
int tr_map64_put(tr_map64 *m, int64_t key, int64_t val);
bool tr_map64_get(const tr_map64 *m, int64_t key, int64_t *val);
void tr_map64_free(tr_map64 *m);

/* The distinct event contexts of a trace, each stored once; an event keeps its context's
 * position in v. The hash slots hold position + 1 (0 = free), at a load factor of at most
 * 1/2. */
typedef struct tr_ctxtab {
  tr_event_ctx *v;
  size_t n, cap;
  uint32_t *slots;
  size_t n_slots;
} tr_ctxtab;
/* Position of c in the table, added if new; UINT32_MAX when out of memory. *hint is the
 * caller's last answer + 1 (0 = none), tried before the hash and then updated: the
 * reader keeps one per event kind, since each kind mostly repeats its own context while
 * kernels, CPU ops and runtime calls interleave in the file. */
uint32_t tr_ctxtab_put(tr_ctxtab *tab, const tr_event_ctx *c, uint32_t *hint);
/* Frees the hash slots (a finished table is only indexed) and trims v to n entries. */
void tr_ctxtab_seal(tr_ctxtab *tab);
void tr_ctxtab_free(tr_ctxtab *tab);

#endif
