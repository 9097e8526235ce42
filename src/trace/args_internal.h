/*
 * trace/args_internal.h - the selected event args a trace keeps (private to src/trace;
 * the public view is tr_event_arg in trace.h).
 *
 * Most events carry none of the kept args (trace.h, tr_arg), and those that do repeat a
 * few combinations (a model's layers launch the same shapes again and again). So the
 * values of one event are stored as an "arg set": the mask of the keys present followed
 * by their interned values, each distinct set once in a pool. An event refers to its set
 * through a per-kind index: sparse (position in the kind's array, set) pairs, turned into
 * one set id per event as soon as that is smaller, while reading (cpu_op-heavy traces: 2
 * bytes a cpu_op instead of 8 when every set id fits in 16 bits, as a few thousand sets
 * do, else 4), and back after it when the pairs are smaller after all.
 *
 * Ownership: a tr_argtab / tr_argidx owns its arrays; *_free releases them. A zeroed
 * struct is empty.
 */
#ifndef TRIAGE_TRACE_ARGS_INTERNAL_H
#define TRIAGE_TRACE_ARGS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h" /* tr_str, tr_arg */

_Static_assert(TR_ARG_COUNT <= 32, "an arg set's mask is 32 bits");

/* The distinct arg sets of a trace. pool[id - 1] is the mask of the keys present, the
 * values follow in key order; the hash slots hold id (0 = free), load at most 1/2. */
typedef struct tr_argtab {
  uint32_t *pool;
  size_t n_pool, cap_pool;
  uint32_t *slots;
  size_t n_slots, n_sets;
} tr_argtab;

/* Which set each event of one kind has. */
typedef struct tr_argidx {
  struct tr_argpair {
    uint32_t pos, set;
  } * pairs; /* ascending pos; freed when the dense form is made */
  size_t n, cap;
  uint32_t *dense;   /* set id by position (0 = none; none past n_dense), or NULL */
  uint16_t *dense16; /* the same while every set id fits in 16 bits (then dense is NULL) */
  size_t n_dense, cap_dense;
} tr_argidx;

/* Id (>= 1) of the set holding vals[k] for every k with mask bit k (each non-zero);
 * UINT32_MAX when out of memory. */
uint32_t tr_argtab_put(tr_argtab *tab, uint32_t mask, const tr_str vals[TR_ARG_COUNT]);
/* The value of key in set id (0 when absent or id is 0). */
tr_str tr_argtab_value(const tr_argtab *tab, uint32_t id, tr_arg key);
/* Frees the hash slots: a finished table is only read. */
void tr_argtab_seal(tr_argtab *tab);
void tr_argtab_free(tr_argtab *tab);

/* Notes that the event at pos (ascending across calls) has set id. -1 when out of memory. */
int tr_argidx_add(tr_argidx *ix, uint32_t pos, uint32_t id);
/* After the read: n_events is the kind's count. Keeps the smaller form; -1 when out of
 * memory (the form there is is kept and stays valid). */
int tr_argidx_seal(tr_argidx *ix, size_t n_events);
/* The set id of the event at pos, 0 when it has none. */
uint32_t tr_argidx_get(const tr_argidx *ix, size_t pos);
void tr_argidx_free(tr_argidx *ix);

#endif
