/*
 * analysis/op_nest.h - the CPU op that launched a kernel by time nesting, for traces whose
 * ids do not link them: older Kineto gives a kernel and its launch call an External id
 * equal to their correlation id, in another numbering than the CPU ops' External ids
 * (PARAM DLRM, HTA AlexNet). There the launching op is the innermost CPU op of the launch
 * call's thread whose span holds the launch call's start (ops of one thread nest). Each
 * op keeps its enclosing op: the one asked for is an ancestor of the last op starting at
 * or before the time, so a binary search and a walk up the nesting find it.
 *
 * Ownership: an index borrows the trace (which must outlive it) and owns its positions
 * (an_op_nest_free). The struct belongs to the caller.
 */
#ifndef TRIAGE_ANALYSIS_OP_NEST_H
#define TRIAGE_ANALYSIS_OP_NEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* An entry's enclosing op, when it lies AN_NEST_FAR or more entries back: in far. */
#define AN_NEST_FAR UINT16_MAX
typedef struct an_op_nest_far {
  uint32_t entry;
  int32_t parent;
} an_op_nest_far;

typedef struct an_op_nest {
  const tr_trace *t;
  const tr_event *ops; /* tr_trace_events(TR_KIND_CPU_OP), or of the regions */
  uint32_t *pos;       /* positions in ops, sorted by (pid, tid, start, -end) */
  /* Per sorted entry, its enclosing op (read with an_op_nest_parent): how many entries
   * back it lies, 0 for none, AN_NEST_FAR when in far; an op's children follow it closely
   * (at most 200 entries on the shared traces), so 2 bytes an op where an entry took 4.
   * parent, when not NULL, holds the entries themselves (-1 none) instead: taken when
   * more than a quarter of the ops would be far (one op around thousands of flat ones). */
  uint16_t *up;
  an_op_nest_far *far; /* by entry */
  size_t n_far;
  int32_t *parent;
  size_t n;
} an_op_nest;

/* Builds the index of t's CPU ops. 0, or -1 out of memory (x is then empty). */
int an_op_nest_build(an_op_nest *x, const tr_trace *t);
/* The index over only the ops whose span holds one of the times at[0..n_at) (sorted
 * ascending): one pass over the ops and a sort of the few kept, where the whole index sorts
 * every op. For an event starting at one of those times it answers as the whole index
 * does: the ops around such a time, and the ops enclosing them, all span it (ops of a
 * thread nest), so they are all kept. 0, or -1 out of memory (x is then empty). */
int an_op_nest_build_at(an_op_nest *x, const tr_trace *t, const double *at, size_t n_at);
/* The same over the record_function regions (user annotations, TR_KIND_USER_ANNOTATION)
 * instead of the CPU ops: the queries below then answer with regions (older PyTorch records
 * a collective's message as the region "nccl:all_reduce" around its launch, not as an op). */
int an_op_nest_build_regions_at(an_op_nest *x, const tr_trace *t, const double *at, size_t n_at);
void an_op_nest_free(an_op_nest *x);

/* The innermost CPU op on the thread of `at` (any event) whose span holds at's start, or
 * NULL. */
const tr_event *an_op_nest_around(const an_op_nest *x, const tr_event *at);

/* The walk up from the innermost op around `at` without a search per step, for a caller
 * that visits every enclosing op (an_op_nest_enclosing finds its op's entry by a binary
 * search each time): the entry of the innermost op (as an_op_nest_around), -1 when none;
 * then an_op_nest_parent of an entry, -1 at the outermost; an_op_nest_op of an entry is
 * its op. */
long an_op_nest_around_entry(const an_op_nest *x, const tr_event *at);
/* The same, searched from *hint (0 at first; then the caller's last answer's place, which
 * this sets): for a caller asking about events in about time order, a few steps from the
 * last one instead of a search of every op. */
long an_op_nest_around_entry_near(const an_op_nest *x, const tr_event *at, size_t *hint);
long an_op_nest_far_parent(const an_op_nest *x, long entry); /* private */
static inline long an_op_nest_parent(const an_op_nest *x, long entry) {
  if (x->parent) return x->parent[entry];
  uint16_t d = x->up[entry];
  return d == AN_NEST_FAR ? an_op_nest_far_parent(x, entry) : d ? entry - d : -1;
}
static inline const tr_event *an_op_nest_op(const an_op_nest *x, long entry) {
  return &x->ops[x->pos[entry]];
}

/* The CPU op that encloses CPU op `op` of the index's trace, or NULL (none, or op is not
 * one of its CPU ops). */
const tr_event *an_op_nest_enclosing(const an_op_nest *x, const tr_event *op);

/* The longest stretch of [a, b) in which thread (pid, tid) ran no CPU op: [ts, end), the
 * outermost op that ended last before it (before: NULL when the thread ran none earlier)
 * and the one starting at its end (after: NULL when the stretch runs to b). */
typedef struct an_op_hole {
  double ts, end;
  const tr_event *before, *after;
} an_op_hole;

/* The thread's longest stretch of [a, b) with no CPU op (*out), false when it ran ops
 * through all of it. One search and a walk over the ops starting inside [a, b). */
bool an_op_nest_hole(const an_op_nest *x, tr_str pid, tr_str tid, double a, double b,
                     an_op_hole *out);

/* The first CPU op named `name` that CPU op `op` of the index's trace directly encloses, or
 * NULL. */
const tr_event *an_op_nest_child(const an_op_nest *x, const tr_event *op, const char *name);

#endif
