/*
 * analysis/coll_message.h - the message of a collective kernel: its size, group size and
 * process group, from the kernel's own c10d args ("In msg nelems", "Group size", "dtype",
 * "Process Group Ranks"), else from what recorded its parameters around its launch call on
 * the host:
 *   - the CPU op of matcher collective_message_op (Kineto's record_param_comms): its own
 *     message args (newer PyTorch), else its first input ("Input Dims", "Input type"),
 *     keyed by the op that encloses it (c10d::alltoall_base_, c10d::allreduce_: one kernel
 *     name such as ncclKernel_SendRecv serves several, and their instances are not like
 *     ones, review 3);
 *   - else the record_function region of matcher collective_message_region
 *     ("nccl:all_reduce" in older PyTorch, whose record_param_comms holds a tensor list, as
 *     DDP's gradient buckets do) by its first input.
 * Kernels inside a CUDA graph and custom all-reduce kernels have neither: no message.
 *
 * Users: the time account (its wait floors compare like messages, timeline.c) and the Ranks
 * section (its collective kinds match like instances across ranks, ranks.c), so both read
 * one message per instance.
 *
 * Cost: the ops and regions are indexed only around the launch times the caller names (the
 * collectives whose kernels state no message), one pass over them and a sort of those few;
 * a caller that holds the trace's nest of every op (its view's) lends it instead.
 *
 * Ownership: a lookup borrows the trace, the rules and the string table (all must outlive
 * it) and owns its indexes (an_coll_messages_destroy). Keys are interned in the string
 * table; the events an_coll_message names are the trace's.
 */
#ifndef TRIAGE_ANALYSIS_COLL_MESSAGE_H
#define TRIAGE_ANALYSIS_COLL_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/op_nest.h"
#include "analysis/strtab.h"
#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_coll_message {
  const char *key;      /* "nelems/group size/dtype", or "op:..." from the host; NULL: none */
  double nelems;        /* elements of the message, 0 unknown */
  double bytes;         /* nelems x the dtype's size (the packs' dtypes), 0 unknown */
  double group_size;    /* the "Group size" arg of what stated the message, 0 unknown */
  tr_kind from_kind;    /* the kind of the event that stated it */
  const tr_event *from; /* that event (its args: "Process Group Ranks"); NULL: none */
} an_coll_message;

typedef struct an_coll_messages an_coll_messages; /* opaque */

/* A lookup for trace t whose host side answers for launch calls starting at at[0..n_at)
 * (sorted ascending; the launches of the collectives whose kernels state no message).
 * ops: t's CPU-op nest of every op (borrowed; must outlive the lookup), or NULL to index
 * the ops around at[] only. NULL when out of memory. */
an_coll_messages *an_coll_messages_create(const tr_trace *t, const te_rules *rules,
                                          an_strtab *strings, const an_op_nest *ops,
                                          const double *at, size_t n_at);
void an_coll_messages_destroy(an_coll_messages *m);

/* The message kernel k (an event of the trace's kernel array) states in its own args; false
 * when it states none (out is then empty). rules and strings as for the lookup. */
bool an_coll_message_args(const tr_trace *t, const te_rules *rules, an_strtab *strings,
                          const tr_event *k, an_coll_message *out);

/* The message recorded on the host around launch call `launch` (NULL: none); false when
 * none states one (out is then empty) or out of memory. */
bool an_coll_message_host(an_coll_messages *m, const tr_event *launch, an_coll_message *out);

/* Whether a CPU op named by matcher x (NULL: none) encloses launch call `launch` on its
 * thread (the launch among those the lookup was made for): e.g. the autograd engine's
 * evaluate_function around a backward all-to-all. */
bool an_coll_messages_under(const an_coll_messages *m, const tr_event *launch, const te_matcher *x);

#endif
