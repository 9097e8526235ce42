/*
 * analysis/trace_view.h - the per-trace view every table is computed from: the chosen
 * process, each kernel's stage, and the kernels of each stage in start order
 * (docs/reference.md §2.3 and §2.5).
 *
 * Kernel identity (an_canonical_name) lives here too because every table keys kernels
 * by it.
 *
 * Ownership: an_trace_view_build fills a caller-provided an_trace_view. The view owns
 * its arrays (stages, kernel pointers, kernel_slot) and frees them in
 * an_trace_view_free; it borrows the tr_trace (which must outlive the view) and the
 * te_rules (stage ids and labels point into the rules, valid until te_rules_destroy).
 * The const tr_event pointers point into the trace's event arrays.
 */
#ifndef TRIAGE_ANALYSIS_TRACE_VIEW_H
#define TRIAGE_ANALYSIS_TRACE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/id_index.h"
#include "analysis/launch_context.h"
#include "analysis/model.h"
#include "analysis/op_nest.h"
#include "analysis/trace_filter.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* Which hex literals a canonical name masks as 0xADDR. */
typedef enum an_hex_mask {
  /* Only real addresses: "0x" plus 1..16 hex digits with no letter or digit on either
   * side ("(void*)0x7f3a2c001000", "_0xdeadbeef"). Tile sizes such as MT64x160x128 or
   * nvjet's 160x128 are left alone, so kernels that differ there stay distinct rows. */
  AN_MASK_ADDRESSES = 0,
  /* The reference (docs/reference.md §2.5): every run 0x[0-9a-fA-F]+, wherever it stands. */
  AN_MASK_EVERY_HEX = 1
} an_hex_mask;

/* The mask the rule packs ask for: setting names.mask_every_hex (true: every hex run, as
 * the reference does; false: real addresses only). Read it once per table build. */
an_hex_mask an_hex_mask_from_rules(const te_rules *rules);

/* Canonical kernel name (docs/reference.md §2.5): whitespace runs folded to one space and the
 * ends trimmed, hex literals replaced by 0xADDR as mask says, and when the name starts
 * with "void " and ends with ')', the trailing balanced parameter list cut off (plus the
 * whitespace before it). Writes at most cap bytes into out (always NUL-terminated when
 * cap > 0) and returns the full length (snprintf contract). */
size_t an_canonical_name(const char *name, size_t len, an_hex_mask mask, char *out, size_t cap);

/* The kernels of one stage of one trace. */
typedef struct an_stage_kernels {
  const te_stage *stage; /* borrowed from the rules */
  size_t n;
  const tr_event **kernels; /* sorted by (ts, index) */
  double total_us;          /* sum of kernel durations (the share denominator) */
} an_stage_kernels;

typedef struct an_trace_view {
  tr_trace *trace; /* borrowed */
  tr_str pid;      /* chosen process; 0 when the trace has no kernels */
  /* Stage the path names (id), or NULL when it names none ("all"). */
  const char *path_stage;
  /* Stages that hold kernels, in te_stage order. A leftover "all" group of a file whose
   * stages come from annotations is dropped when it holds less than
   * stage.min_all_share_pct of that file's kernel time. */
  size_t n_stages;
  an_stage_kernels *stages;
  /* Parallel to tr_trace_events(trace, TR_KIND_KERNEL, &n): the stage of each kernel event
   * as 1 + its index among the rules' stages, 0 for none (read with
   * an_trace_view_kernel_stage). */
  size_t n_kernel_events;
  uint16_t *kernel_slot;
  const char **slot_stage; /* slot -> stage id (slot 0: NULL), te_rules_stage_count + 1 */
  double kernel_total_us;  /* all kernels of the chosen pid */
  /* The trace's id indexes once an_trace_view_index_ids built them (owned), else NULL:
   * attribution and the overlap scope borrow them instead of each sorting its own. */
  an_trace_ids *ids;
  /* What the passes reading the view share, each made by the first that asks (owned;
   * an_trace_view_launches). NULL on a view that failed to build. */
  struct an_view_shared *shared;
} an_trace_view;

/* The stage id of kernel event i of the view's trace (parallel to tr_trace_events(trace,
 * TR_KIND_KERNEL, &n)): the path stage, else the annotation stage, else "all", borrowed
 * from the rules; NULL for kernels of other processes, for events that are not kernels
 * (pack matcher not_a_kernel) and past the kernel events. Dropped "all" kernels keep
 * "all" here. */
static inline const char *an_trace_view_kernel_stage(const an_trace_view *v, size_t i) {
  return v->kernel_slot && i < v->n_kernel_events ? v->slot_stage[v->kernel_slot[i]] : NULL;
}

/* Builds v->ids (a no-op when built). AN_ERR_NOMEM when out of memory. */
an_status an_trace_view_index_ids(an_trace_view *v);
/* The id indexes of trace t apart from any view (NULL: out of memory), for a view of t
 * built meanwhile on another thread: an_trace_view_adopt_ids gives them to it (freed when
 * it has its own already). */
an_trace_ids *an_trace_view_ids_build(const tr_trace *t);
void an_trace_view_adopt_ids(an_trace_view *v, an_trace_ids *ids);
void an_trace_view_ids_destroy(an_trace_ids *ids); /* NULL: nothing */

/* The launch context of the view's trace (launch_context.h, with the rules the view was
 * built with), made on the first call and kept with the view: the Ranks summary, the time
 * account and the overlap table ask about the same collectives, so its block summaries are
 * built and its answers found once. NULL when out of memory. A view is read by one thread
 * at a time: the context is not locked. */
an_launch_context *an_trace_view_launches(const an_trace_view *v);

/* The filter counts of the view's trace alone (trace_filter.h), counted on the first call
 * and kept with the view: the Limits and the Ranks summary both ask. NULL when out of
 * memory. */
const an_trace_filter *an_trace_view_filter(const an_trace_view *v);

/* The CPU-op nest of the view's trace (op_nest.h, every op), built on the first call and
 * kept with the view: the opaque-op split, the roofline's launching ops, graph staging,
 * the filter counts and the time account's untraced stretches walk the same nest, where
 * each sorted the ops for itself. Unlike the rest of the view, two threads may ask it at
 * once (the pipeline builds it beside the tables, which may ask it): the first builds, the
 * other waits. NULL when out of memory. */
const an_op_nest *an_trace_view_ops(const an_trace_view *v);
/* The nest when some caller built it already, else NULL (nothing is built): for a caller
 * that needs the ops around a few times only and can index just those (op_nest.h
 * an_op_nest_build_at) rather than sort every op early. */
const an_op_nest *an_trace_view_ops_built(const an_trace_view *v);
/* Builds the nest ahead of the passes that may ask it (on another thread), without
 * counting as asked; false when out of memory (the next an_trace_view_ops tries again). */
bool an_trace_view_ops_ahead(const an_trace_view *v);
/* Frees a nest built ahead that no pass asked yet (an_trace_view_ops builds it again when
 * one does): not held through phases that do not need it. While no other thread reads the
 * view. */
void an_trace_view_ops_drop_unasked(an_trace_view *v);

/* The CPU op that launched kernel k of the view's trace: in older Kineto (the kernel's
 * External id is its correlation id) the op around its launch call on the launching
 * thread (an_trace_view_ops), else of the ops with its External id the last to start
 * before it. NULL when none, or when the view's ids are not built. */
const tr_event *an_trace_view_launching_op(const an_trace_view *v, const tr_event *k);

/* The launching op (an_trace_view_launching_op) of each kernel of stage block `block` of
 * the view, in the block's order, as its position among the trace's CPU ops
 * (tr_trace_events(TR_KIND_CPU_OP)) or AN_NO_OP: found for every block on the first call
 * and kept with the view, since the fusion table's shape gate and GEMM merges and the
 * roofline ask about the same kernels. Like the nest, built under the view's lock: the
 * pipeline builds them beside the tables, which ask them. NULL when out of memory, or no
 * such block. */
#define AN_NO_OP UINT32_MAX
const uint32_t *an_trace_view_stage_ops(const an_trace_view *v, size_t block);

/* True when a kernel event is a kernel to the analysis: its event category does not
 * match not_a_kernel (the packs' matcher of that name, e.g. cuda_sync records such as
 * "Context Sync"; NULL keeps every event, as the reference does). */
bool an_is_kernel_event(const tr_trace *t, const tr_event *e, const te_matcher *not_a_kernel);

/* Process choice (docs/reference.md §2.5, kernel helper): among pids carrying kernels
 * (optionally only those containing pid_substring), the largest total kernel duration,
 * where a pid matching preferred (the packs' tp0_process; may be NULL) beats any pid
 * without; the first seen among equals. keep (parallel to the trace's kernel events;
 * NULL = all) limits the kernels counted: the kernel table leaves out the events
 * an_is_kernel_event refuses. *found is false when no pid qualifies. */
an_status an_pick_pid(const tr_trace *t, const bool *keep, const char *pid_substring,
                      const te_matcher *preferred, tr_str *out, bool *found);

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
