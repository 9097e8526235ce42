/*
 * analysis/launch_context.h - what launched a kernel: the CPU ops and record_function
 * regions around its host launch call, and the pack's context family of a collective.
 *
 * One kernel name can do unlike work: NCCL's ncclKernel_SendRecv runs a sharded model's
 * input-dist all-to-all (prefetchable a batch ahead), its pooled-embedding exchange (on
 * the step's critical path), the DDP gradient all-reduce launched from the autograd hook
 * and a sharded optimizer's all-gather (review 5 defect 2). The kernel's own External id
 * misses all of that when a C++ hook launched it; the host call that launched it (by
 * correlation, same thread) sits inside the ops and regions that say it. The families
 * are pack data: overlap.dependency.context_rules in order, each with matcher dep_<id>
 * on the kernel name or on an op/region around the launch, its class
 * (overlap.dependency.classes), the overlap categories it applies to
 * (overlap.dependency.rule_categories) and the words a report shows
 * (overlap.dependency.context_labels). The overlap table splits a collective's row by it;
 * the time model keys collective floors by it.
 *
 * Ownership: a context borrows the trace and the rules (both must outlive it) and owns
 * its block summaries; an_launch_context_destroy releases them.
 */
#ifndef TRIAGE_ANALYSIS_LAUNCH_CONTEXT_H
#define TRIAGE_ANALYSIS_LAUNCH_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_launch_context an_launch_context;

/* A context over t's launches; NULL when out of memory. The block summaries that let a
 * question skip most of the trace are built on the first question. */
an_launch_context *an_launch_context_create(const tr_trace *t, const te_rules *r);
void an_launch_context_destroy(an_launch_context *x);

/* True when a CPU op enclosing the host call that launched kernel event e (its runtime or
 * launch event by correlation, same thread) matches m, else a record_function region
 * (user annotation) enclosing it does; the first such op in file order puts its name in
 * hit (cap bytes) when hit is not NULL. Regions count because older PyTorch records the
 * collective itself as one ("nccl:all_to_all" around record_param_comms, no c10d:: op). */
bool an_launch_context_match(an_launch_context *x, const tr_event *e, const te_matcher *m,
                             char *hit, size_t cap);

/* The context family of kernel event e: the index into overlap.dependency.context_rules
 * of the first rule, in the pack's order, that applies to overlap category `category`
 * (NULL: any) and whose matcher names e's kernel or an op/region around its launch; -1
 * when none does. hit (cap bytes, may be NULL) receives what matched. */
long an_launch_context_of(an_launch_context *x, const tr_event *e, const char *category, char *hit,
                          size_t cap);

/* The rule id (context_rules item) of family idx, NULL when out of range. */
const char *an_launch_context_rule(const an_launch_context *x, long idx);
/* The words a report shows for family idx ("input dist", "gradient reduce (DDP hook)"),
 * NULL when the pack gives none: such a family classifies a row but does not split it. */
const char *an_launch_context_label(const an_launch_context *x, long idx);

#endif
