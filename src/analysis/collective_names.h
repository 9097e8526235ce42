/*
 * analysis/collective_names.h - generic NCCL/RCCL kernels keyed by their collective.
 *
 * NCCL 2.19+ and RCCL launch many collectives through one generic kernel
 * (`ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)`): its name no longer says
 * all-reduce or all-gather, so the tables would sum unlike collectives into one row and
 * the time model would hold both to one floor. An eagerly launched kernel carries its
 * collective in args["Collective name"] (`allreduce`, `_allgather_base`); one
 * without it takes the member from the CPU op of its External id (Kineto's
 * record_param_comms). The kernels of the matcher generic_collective_kernel are renamed
 * "NAME [collective]" once, right after the read, so every table, the time model and the
 * Ranks section key them apart. A kernel inside a CUDA graph carries no args and its
 * graph launch (matcher graph_replay_launch) no collective: it is keyed
 * "NAME [unsplit: graph replay]" (issue 31), apart from the eager ones and saying what
 * is not known, instead of passing for one collective. The reference's compatibility pack
 * empties the matcher (deviation C10): one row for every collective, as the reference.
 *
 * Ownership: the trace is modified in place (its kernels' names; new names are interned
 * in it); nothing is kept.
 */
#ifndef TRIAGE_ANALYSIS_COLLECTIVE_NAMES_H
#define TRIAGE_ANALYSIS_COLLECTIVE_NAMES_H

#include <stddef.h>

#include "analysis/model.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* The bracketed word of a generic kernel inside a graph replay. */
#define AN_UNSPLIT_REPLAY "unsplit: graph replay"

/* Renames the generic collective kernels of t; *renamed (may be NULL) counts them.
 * AN_OK, or AN_ERR_NOMEM (t then keeps the names renamed so far: each is whole). */
an_status an_collective_names_split(tr_trace *t, const te_rules *rules, size_t *renamed);

#endif
