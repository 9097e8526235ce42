/*
 * analysis/bundle.h - the per-trace view every table is computed from: the chosen
 * process, each kernel's stage, and the kernels of each stage in start order
 * (reference-triage.md §2.3 and §2.5).
 *
 * Kernel identity (an_canonical_name) lives here too because every table keys kernels
 * by it.
 *
 * Ownership: an_trace_view_build fills a caller-provided an_trace_view. The view owns
 * its arrays (stages, kernel pointers, kernel_stage) and frees them in
 * an_trace_view_free; it borrows the tr_trace (which must outlive the view) and the
 * te_rules (stage ids and labels point into the rules, valid until te_rules_destroy).
 * The const tr_event pointers point into the trace's event arrays.
 */
#ifndef TRIAGE_ANALYSIS_BUNDLE_H
#define TRIAGE_ANALYSIS_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* Canonical kernel name (reference-triage.md §2.5): whitespace runs folded to one space and the
 * ends trimmed, every hex literal 0x[0-9a-fA-F]+ replaced by 0xADDR, and when the name
 * starts with "void " and ends with ')', the trailing balanced parameter list cut off
 * (plus the whitespace before it). Writes at most cap bytes into out (always
 * NUL-terminated when cap > 0) and returns the full length (snprintf contract). */
size_t an_canonical_name(const char *name, size_t len, char *out, size_t cap);

/* The kernels of one stage of one trace. */
typedef struct an_stage_kernels {
  const te_stage *stage;     /* borrowed from the rules */
  size_t n;
  const tr_event **kernels;  /* sorted by (ts, index) */
  double total_us;           /* sum of kernel durations (the share denominator) */
} an_stage_kernels;

typedef struct an_trace_view {
  tr_trace *trace;           /* borrowed */
  tr_str pid;                /* chosen process; 0 when the trace has no kernels */
  /* Stage the path names (id), or NULL when it names none ("all"). */
  const char *path_stage;
  /* Stages that hold kernels, in te_stage order. A leftover "all" group of a file whose
   * stages come from annotations is dropped when it holds less than
   * stage.min_all_share_pct of that file's kernel time. */
  size_t n_stages;
  an_stage_kernels *stages;
  /* Parallel to tr_trace_events(trace, TR_KIND_KERNEL, &n): the stage id of each kernel
   * event of the chosen pid (path stage, else annotation stage, else "all"), NULL for
   * kernels of other processes. Dropped "all" kernels keep "all" here. */
  size_t n_kernel_events;
  const char **kernel_stage;
  double kernel_total_us;    /* all kernels of the chosen pid */
} an_trace_view;

/* Process choice (reference-triage.md §2.5, kernel helper): among pids carrying kernels (optionally
 * only those containing pid_substring), the largest total kernel duration, where a pid
 * matching preferred (the packs' tp0_process; may be NULL) beats any pid without; the
 * first seen among equals. keep (parallel to the trace's kernel events; NULL = all)
 * limits the kernels counted. *found is false when no pid qualifies. */
an_status an_pick_pid(const tr_trace *t, const bool *keep, const char *pid_substring,
                      const te_matcher *preferred, tr_str *out, bool *found);
/* an_pick_pid over every kernel; 0 when there is none (or out of memory). */
tr_str an_choose_pid(const tr_trace *t, const char *pid_substring, const te_matcher *preferred);

/* Builds the view. path_stage_id: the stage the file's path names (from discovery,
 * tr_path_stage), or NULL / "all" when it names none; then annotations decide per kernel
 * (External id match, probe inside a merged GPU window then a CPU window, nearest window
 * within stage.nearest_window_us, else "all"). pid_substring may be NULL. On failure
 * *out is left empty (safe to free). */
an_status an_trace_view_build(tr_trace *t, const char *path_stage_id, const te_rules *rules,
                              const char *pid_substring, an_trace_view *out);
void an_trace_view_free(an_trace_view *v);

/* The stage block of v with stage id, or NULL. */
const an_stage_kernels *an_trace_view_stage(const an_trace_view *v, const char *stage_id);

#endif
