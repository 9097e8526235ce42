/*
 * analysis/steps.h - the step windows of one trace: which kernels one serving or training
 * step ran, so every per-step figure (time account, ranks, summary bounds) divides by the
 * same steps and leaves out the same tails.
 *
 * A step is a marker of one of these kinds, tried in this order: an annotation the packs'
 * step_annotation matcher names (SGLang step[...], vLLM execute_..._context_.._generation_..,
 * ProfilerStep#N, ...) as a user annotation, a CPU op (older profilers) or a GPU
 * annotation; a benchmark's measured region (matcher measure_annotation: PARAM's
 * [param|...|measure|forward]); one top-level user annotation repeated (a micro-benchmark's
 * call, setting steps.iteration_min_repeats); an annotation that names a stage
 * (stage_rules.annotation: "prefill", "decode" around each step). The kind whose windows
 * hold the most kernel time is chosen; an earlier one keeps the choice unless a later one
 * holds steps.marker_margin_pct more of it, so a marker that covers a corner of the run
 * never wins silently. An annotation inside a counted one is the same step.
 *
 * Each step has its CPU window (the annotation), its GPU window (first start to last end
 * of the kernels launched inside the CPU window, found by correlation -> launch call; in
 * a trace that records launches, a kernel without one was launched before the capture
 * began and is in no step; a trace without launch records, and GPU-annotation steps,
 * place a kernel where it starts) and its stage (the stage of most of its kernel time,
 * from the view). Kernels outside every step window (a previous step's tail, work
 * launched between steps) belong to no step. Steps without kernels are dropped. The
 * first step of a stage whose GPU window is steps.warmup_ratio times the median of the
 * others is a warm-up: flagged, not counted. Kernels launched under a warm-up annotation
 * (matcher warmup_annotation: a benchmark's warm-up calls) are one-time setup: in no step,
 * and out of the stage's window in a trace without steps.
 *
 * Ownership: an_steps_build fills a caller-provided an_steps that owns its arrays
 * (an_steps_free). It borrows the view's trace (names, launch events) and the rules
 * (stage ids): both must outlive it.
 */
#ifndef TRIAGE_ANALYSIS_STEPS_H
#define TRIAGE_ANALYSIS_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"
#include "analysis/trace_view.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* Where the steps came from. */
typedef enum an_step_source {
  AN_STEPS_NONE = 0,              /* no step windows: per-step figures use the stage window */
  AN_STEPS_CPU_ANNOTATION = 1,    /* user annotations the step_annotation matcher names */
  AN_STEPS_CPU_OP = 2,            /* CPU ops of such a name (ProfilerStep#N of older profilers) */
  AN_STEPS_GPU_ANNOTATION = 3,    /* GPU annotations of such a name */
  AN_STEPS_ITERATION = 4,         /* one repeated top-level user annotation */
  AN_STEPS_STAGE_ANNOTATION = 5,  /* user annotations a stage rule places ("decode" per step) */
  AN_STEPS_MEASURE_ANNOTATION = 6 /* a benchmark's measured regions (matcher measure_annotation:
                                     PARAM's [param|...|measure|forward]) */
} an_step_source;

typedef struct an_step {
  const char *name;       /* the annotation's name (borrowed from the trace) */
  double cpu_ts, cpu_end; /* the annotation's window (us); GPU steps: the GPU window */
  double gpu_ts, gpu_end; /* first start and last end of its kernels (us) */
  /* Where its GPU window ends when the windows were cut (cut_windows: the next step's
   * first start); a kernel of it running past that runs on in the next step's window, so
   * the time account clips it there. INFINITY when not cut (or the last). */
  double window_end;
  const char *stage_id; /* stage of most of its kernel time (borrowed from the rules) */
  size_t n_kernels;
  double kernel_us; /* summed kernel durations */
  /* Summed durations of the kernels launched in it (where the trace records launches; else
   * of those starting in its window, before any cut): its work, wherever on the GPU its
   * kernels ran. kernel_us counts what its window holds instead: after a cut, what started
   * there, and the kernels placed by GPU time (a tail launched before the capture), so a
   * pipelined trainer's steps differ by the queue they carry, not by their work. */
  double launched_us;
  bool warmup; /* a warm-up call: not counted in per-step figures */
  /* Markers of its kind that start inside its own (PARAM's inner measure|forward inside
   * the outer one): part of this step, not steps of their own; the longest's length (us). */
  size_t nested;
  double nested_us;
  /* With nested markers: the longest one's start (us); the longest user annotation inside
   * the step's marker but outside that nested one (the harness's work around the measured
   * one: PARAM's [param|clear_cache]; borrowed from the trace, NULL when none) and its
   * length clipped to the step (us); whether every kernel of the step was launched inside
   * the nested one (review 15 defect 2). */
  double nested_ts;
  const char *other;
  double other_us;
  bool nested_launches_all;
} an_step;

typedef struct an_steps {
  an_step_source source;
  /* Marker kinds the trace has (each a candidate) and the share of the view's kernel time
   * the chosen one's windows hold (by launch call, else start), before warm-ups and cuts. */
  size_t n_markers;
  double coverage_pct;
  /* Kernels without a launch record placed by their GPU time in the step whose GPU window
   * they start in (a trace whose flow links are partly missing). */
  size_t placed_by_gpu_time;
  /* Kernels were placed in steps by their launch call (the trace records launches), not
   * by their start: an_step.launched_us counts only kernels with a launch. */
  bool by_launch;
  /* The steps' GPU windows overlapped (kernels launched in one step ran after the next
   * step's first kernel): each window was cut where the next begins (window_end), and
   * kernels belong to the window they start in. */
  bool cut_windows;
  size_t n;
  an_step *steps; /* by CPU start */
  /* Parallel to tr_trace_events(trace, TR_KIND_KERNEL): the step of each kernel of the
   * view's process, -1 outside every step (and for other processes and non-kernels),
   * AN_STEP_SETUP for one-time setup (launched under a warm-up annotation). */
  size_t n_kernel_events;
  int32_t *kernel_step;
  /* Parallel likewise: the host call that launched each kernel (the launch or runtime
   * call with its correlation), read with an_steps_launch: 1 + its position among the
   * trace's launches, then its runtime calls after them, 0 when the trace has none (4
   * bytes a kernel event, where a pointer took 8). */
  uint32_t *launch_at;
  const tr_event *calls[2]; /* the trace's launches and runtime calls */
  size_t n_launches;
} an_steps;

/* The host call that launched kernel event i (parallel to tr_trace_events(trace,
 * TR_KIND_KERNEL)), NULL when the trace has none or i is past the kernel events. */
static inline const tr_event *an_steps_launch(const an_steps *s, size_t i) {
  if (!s->launch_at || i >= s->n_kernel_events || !s->launch_at[i]) return NULL;
  size_t e = s->launch_at[i] - 1u;
  return e < s->n_launches ? &s->calls[0][e] : &s->calls[1][e - s->n_launches];
}

/* Builds the steps of a view's trace (settings steps.*, matcher step_annotation).
 * AN_ERR_NOMEM when out of memory (*out is then empty and may be freed). */
an_status an_steps_build(const an_trace_view *v, const te_rules *rules, an_steps *out);
void an_steps_free(an_steps *s);

/* kernel_step of a kernel launched under a warm-up annotation (matcher warmup_annotation):
 * one-time setup, in no step and, in a trace without steps, out of the stage's window. */
#define AN_STEP_SETUP (-2)

/* The step kernel event i of trace t counts in as work (an_step.launched_us): the step
 * whose window holds its launch call (by_launch), else its start, before any window cut;
 * -1 when none does or it has no launch in a trace that records them (a tail launched
 * before the capture). kernel_step instead says where on the GPU it ran. */
long an_steps_launched_step(const an_steps *s, const tr_trace *t, size_t i);

/* Whether kernel event i is one-time setup (AN_STEP_SETUP). */
bool an_steps_kernel_setup(const an_steps *s, size_t i);

/* The marker kind's id in reports ("step_annotation", ...; "none"). */
const char *an_step_source_id(an_step_source src);

/* Counted steps (warm-ups left out) of a stage; every stage when stage_id is NULL. */
size_t an_steps_count(const an_steps *s, const char *stage_id);
/* Whether kernel event i (index into the trace's kernel events) belongs to a counted
 * step; with no steps at all every kernel of the view's process counts. */
bool an_steps_kernel_counted(const an_steps *s, size_t i);

#endif
