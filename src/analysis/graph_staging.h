/*
 * analysis/graph_staging.h - GPU work launched inside the CPU op that launches a CUDA/HIP
 * graph: the copies a graph replay needs around it. A graph reads its inputs from the
 * static buffers it was captured with and writes to static outputs, so the op that
 * replays it first copies the new inputs in and clones the outputs out (torch.compile's
 * CUDA-graph trees do both under CompiledFunction / CompiledFunctionBackward, the op that
 * holds the cudaGraphLaunch). Such copies come and go with graphs: a diff whose runs
 * differ in graph use ties their delta to that change (review 5 defect 6).
 *
 * Ownership: the set owns its arrays and copies of the stage ids and kernel names
 * (an_graph_staging_free); it borrows the rules.
 */
#ifndef TRIAGE_ANALYSIS_GRAPH_STAGING_H
#define TRIAGE_ANALYSIS_GRAPH_STAGING_H

#include <stddef.h>

#include "analysis/model.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"
#include "util/map.h"

/* GPU time per (stage id, canonical kernel name) of launches inside a graph-launching op. */
typedef struct an_graph_staging {
  ut_strmap keys; /* "stage\x1fname" */
  double *us;
  size_t cap;
} an_graph_staging;

/* Adds the staged launches of v's stages (kernels of the view's stages whose launch call
 * lies inside a CPU op that also holds a graph launch, matcher graph_replay_launch; the
 * replayed kernels themselves are not staged). A trace without a graph launch costs one
 * pass over its launch calls. AN_ERR_NOMEM. */
an_status an_graph_staging_add(an_graph_staging *g, const an_trace_view *v, const te_rules *rules);

/* The staged GPU time of kernel name (canonical) in stage id; 0 when none. */
double an_graph_staging_us(const an_graph_staging *g, const char *stage, const char *name);

void an_graph_staging_free(an_graph_staging *g);

#endif
