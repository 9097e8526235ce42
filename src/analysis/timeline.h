/*
 * analysis/timeline.h - the time account of a run: per stage and per step, where the GPU's
 * time went (docs/report.md "The time account").
 *
 * A window is one counted step of a trace (analysis/steps.h: warm-ups and kernels outside
 * every step are left out), or, in a trace without steps, one stage of it. In a window:
 *   - span = busy + idle exactly (integer nanoseconds): busy is the union of the kernel,
 *     memcpy and memset intervals over all streams, idle the gaps between them; the
 *     window runs from its first kernel's start to its last kernel's end, so the capture
 *     edges never count. A stream whose first kernel of the step waited through a gap for
 *     work outside the step (launched before the gap, started after it: the previous
 *     batch) opens the window; what ran before it is outside;
 *   - each gap of at least timeline.gap_min_us is split by what the launching thread of
 *     the next kernel did (timeline_internal.h): sync, host, launch, dependency;
 *   - a kernel that starts before its predecessor on its stream ended (programmatic
 *     dependent launch) waits for the overlapping part (pdl_wait);
 *   - each collective instance is transfer plus wait (analysis/waits.h): groups by message
 *     size, else by position in the step (collectives.position_min_steps), else by name.
 * A stage's account is the sum of its windows.
 *
 * Ownership: an_timeline_build returns an an_timeline the caller destroys; it owns every
 * account, step and cause array. Strings (kernel names, causes, locations) are interned
 * in the caller's an_strtab; step names and trace paths are borrowed from the inputs;
 * stage ids from the rules.
 */
#ifndef TRIAGE_ANALYSIS_TIMELINE_H
#define TRIAGE_ANALYSIS_TIMELINE_H

#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/steps.h"
#include "analysis/strtab.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

typedef struct an_timeline_input {
  const an_trace_view *view;
  const an_steps *steps;
  const char *path; /* the trace as named (borrowed; must outlive the timeline) */
  /* The kernel map of these views, and this view's index in it (NULL: none): a kernel's
   * canonical name and category are read from it instead of being decided again. */
  const an_kernel_map *kmap;
  size_t kmap_view;
  /* The view's CPU-op nest is being built on another thread (an_trace_view_ops_ahead): the
   * collectives' host messages take it only if built, else index the few ops they ask
   * about, rather than wait or build it a second time. False: they build it. */
  bool nest_ahead;
} an_timeline_input;

typedef struct an_timeline an_timeline; /* opaque */

an_status an_timeline_build(const an_timeline_input *in, size_t n, const te_rules *rules,
                            an_strtab *strings, an_timeline **out);
void an_timeline_destroy(an_timeline *tl);

/* The traces are filtered or sampled to GPU work (analysis/trace_filter.h): queued work
 * nothing in them holds (idle kind outside) is read as GPU work the filter dropped (idle
 * kind filtered; review 14 defect 3). Call once, before the accounts are read. */
void an_timeline_mark_filtered(an_timeline *tl);

/* The account of a stage, or NULL when the stage ran no kernel. */
const an_stage_timeline *an_timeline_stage(const an_timeline *tl, const char *stage_id);

#endif
