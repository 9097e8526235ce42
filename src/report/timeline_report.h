/*
 * report/timeline_report.h - the time account of a report model in words and JSON
 * (docs/report.md "The time account").
 *
 * Ownership: nothing is retained; the model is borrowed for the call. Words are static.
 */
#ifndef TRIAGE_REPORT_TIMELINE_REPORT_H
#define TRIAGE_REPORT_TIMELINE_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/model.h"
#include "report/item_text.h"
#include "triage/rules.h"

const char *rp_idle_kind(an_idle_kind k); /* "sync", "host", "launch", ... (JSON keys) */
/* A cause's activity as the tables name it: c->what, or for an event wait "stream S waits
 * for stream T" written into buf (cap bytes). NULL when none. */
const char *rp_cause_what(const an_idle_cause *c, char *buf, size_t cap);
const char *rp_workload(an_workload w);       /* "serving", "training", ... */
const char *rp_floor_basis(an_floor_basis b); /* "message size", "position in step", "name" */
const char *rp_bound_basis(an_bound_basis b); /* "idle", "wait", "roofline", ... (JSON) */
/* The launch-context family a collective's row stands for when its launches are split ("input
 * dist", or "other launches" for the rest), NULL when the row holds the whole collective. */
const char *rp_collective_context(const an_collective_time *c);
/* The "Floor from" words of a collective's row into buf (cap bytes, RP_FLOOR_FROM_BYTES
 * holds them): its basis, the terms of a per-byte floor ("message size (no like message as
 * large took less; fastest 8.67 GB/s)"), whose instance set the floor ("; from 4 like
 * instances, step 2 (ProfilerStep#1010)", the trace's name when the run has several; "the
 * fixed cost") and its instances whose wait is unknown, by why ("; 2 with too few like
 * instances ...: wait unknown"). */
#define RP_FLOOR_FROM_BYTES 512
void rp_floor_from(char *buf, size_t cap, const an_collective_time *c);
/* Whether every instance of the row is alone: no floor, its transfer and wait unknown. */
bool rp_collective_unknown(const an_collective_time *c);
/* A row's time in ms/step into buf, or "unknown" when rp_collective_unknown. */
void rp_collective_ms(char *buf, size_t cap, const an_stage_timeline *tl,
                      const an_collective_time *c, int64_t ns);
/* A row's wait (ns) as rp_collective_ms, but ">= X" when it is a lower bound from like
 * messages in a step (an_collective_time.lower) on a row with no floor. */
void rp_collective_wait_ms(char *buf, size_t cap, const an_stage_timeline *tl,
                           const an_collective_time *c, int64_t ns);
/* Its transfer: total - wait - the time of instances alone (neither known). */
int64_t rp_collective_transfer_ns(const an_collective_time *c);

/* The stage's "timeline" object: counts, the total account, the collectives and each
 * step's account (its causes cut to RP_TIMELINE_STEP_CAUSES); NULL when out of memory. */
cJSON *rp_timeline_json(const an_stage_timeline *tl);

/* Microseconds of a nanosecond count, exact to the nanosecond in three decimals. */
double rp_ns_us(int64_t ns);

/* ---------------------------------------------------------------- summary words */

/* Whether a summary item names this anchor as its evidence (an idle cause past
 * RP_TIMELINE_CAUSES_SHOWN is still shown when an item links to it). */
bool rp_summary_links_to(const an_report *r, const char *anchor);
/* "all", "long", "short": the part of a time-account row an item sums (JSON). */
const char *rp_row_part(an_row_part p);
/* The anchor of the k-th time-account row item it sums ("idle-decode-3"). */
void rp_item_row_anchor(const an_summary_item *it, size_t k, char *out, size_t cap);
/* The item's action as the reader acts on it (the launch-bound action reads differently
 * for a graph-replayed stage and a training step). */
const char *rp_summary_action(const an_summary_item *it, an_workload w);
/* The item's action label (JSON "action"): its action's (rp_action), a launch item's
 * labelled as its title is (RP_LAUNCH_GAPS where the step is not host-bound). */
const char *rp_item_action(const an_summary_item *it);
/* The words of a port item: to a platform the tree's path does not serve (an item's
 * port_platform), else porting an upstream or in-flight path. */
const char *rp_port_action(an_platform to);
/* The words of the action merged into the item (its not_additive_action): a port in the
 * words its own item would use, else the action's. */
const char *rp_merged_action(const an_summary_item *it);
/* The idle cause of a host-stall item whose launching thread went untraced (its CPU ops
 * around the stretch name where: an_idle_cause.before, after), else NULL. Borrowed from
 * the item's time account. */
const an_idle_cause *rp_item_untraced(const an_summary_item *it);
/* The Run table's step shape: its value ("prefill, 16 x 559 tokens"; outside serving and
 * inference, a step whose queries are its keys is a full-sequence forward) and what of its op's
 * Input Dims tell it ("query and key as batch x sequence, 24 calls in the counted steps"; the
 * renderers put "Input Dims of OP" before it); false when the phase is unknown. */
bool rp_step_shape(const an_step_shape *s, an_workload w, char *value, size_t vcap, char *from,
                   size_t fcap);
/* The phase's id in the JSON report ("prefill", "decode", "extend", "unknown"). */
const char *rp_phase(an_phase p);
/* The stage's time by category per counted step, when its steps hold under
 * report.step_categories_below_pct of its kernel time: "Per counted step (N): gemm 3.86 ms
 * (72.6%) ...; the other X ms ran outside them (...)". Malloc'd (the caller frees it), NULL
 * when not said or out of memory. One wording for every format. */
char *rp_step_categories(const an_stage_report *st, const te_rules *rules);
/* Milliseconds with two decimals, or two significant digits under 0.005 ms. */
void rp_fmt_ms(char *buf, size_t cap, double us);

/* " The steps are the outermost markers of their kind (...)": which marker a counted step
 * is when markers of its kind nest in it (an_stage_timeline.marker_nested), "" when none
 * do (review 12 defect 5: hta_alexnet's two nested measure|forward annotations). */
#define RP_NESTED_BYTES 768
const char *rp_nested_markers(const an_stage_timeline *tl, char *buf, size_t cap);

/* The share of the stage's kernel time, one-time setup left aside, its counted steps (or
 * its window) hold: 100 when nothing is outside. */
double rp_step_coverage_pct(const an_stage_timeline *tl);
/* The counted steps' GPU span over their markers' length (1 when either is unknown). */
double rp_span_marker_ratio(const an_stage_timeline *tl);
/* The time account's sentence when the counted steps' host extent dwarfs their GPU span
 * (an_stage_timeline.host_exceeds), into buf; NULL when it does not. */
const char *rp_host_extent_text(const an_stage_timeline *tl, char *buf, size_t cap);
/* The time account's sentence when the stage's trace lost graph-replayed work
 * (an_stage_timeline.graph_unrecorded), into buf; NULL when it did not. */
const char *rp_graph_unrecorded_text(const an_stage_timeline *tl, char *buf, size_t cap);
/* The time account's sentence on the host blocked in a read back (an_stage_timeline
 * host_block; review 18 defect 8), into buf; NULL when it was not. Its anchor is the
 * host-block item's (host-STAGE-0). */
const char *rp_host_block_text(const an_stage_timeline *tl, char *buf, size_t cap);
/* The time account's sentence on the busiest stream's launch lead (an_launch_lead) when
 * the stage idles with work queued, into buf; NULL otherwise (review 19, Missing). */
const char *rp_launch_lead_text(const an_stage_timeline *tl, char *buf, size_t cap);

/* The time account's sentence when some of its idle follows a sync that drained the GPU's
 * queue before the step's first kernel (an_time_account.drain), in parts around the sync's
 * names, which each format marks as code: lead + what (+ at + location) + tail. false when
 * none. */
typedef struct rp_drain_parts {
  char lead[160], tail[384];
  const char *what, *location;
} rp_drain_parts;
bool rp_drain_sentence(const an_stage_timeline *tl, rp_drain_parts *p);

/* What the Limits say of a stage's time account when it holds (steps.h, timeline.h): the
 * steps hold under steps.min_coverage_pct of the kernel time outside the setup; their GPU
 * span and their markers' length differ by more than steps.span_marker_max_ratio; GPU idle
 * of at least summary.min_share_pct of the step falls in gaps while the launching thread
 * recorded no CPU activity (the profiler did not see the host: no item can name a lever);
 * steps' GPU windows overlapped and were clipped (an_stage_timeline.n_cut). */
typedef enum rp_stage_check {
  RP_CHECK_COVERAGE = 0,
  RP_CHECK_SPAN = 1,
  RP_CHECK_UNSEEN_HOST = 2,
  RP_CHECK_CUT = 3 /* steps' GPU windows overlapped: each clipped where the next begins */
} rp_stage_check;
#define RP_CHECKS 4
bool rp_stage_check_failed(const an_stage_report *st, const te_rules *rules, rp_stage_check c);
/* Whether any stage of r has a check to report. */
bool rp_stage_checks_failed(const an_report *r, const te_rules *rules);
/* The Limits line of a check: its title into title and its sentence, malloc'd (the caller
 * frees it); NULL when the check does not apply or out of memory. md: names as Markdown
 * code spans (cell-escaped), else plain text for a renderer that escapes it. */
char *rp_stage_limit(const an_stage_report *st, const te_rules *rules, rp_stage_check c, bool md,
                     char *title, size_t cap);

/* A kernel row's time per counted step (its steps_us over the stage's counted steps; its
 * whole time without steps): the figure a summary item quotes for it, in every layout
 * but the reference one. */
double rp_kernel_per_step_us(const an_stage_report *st, const an_kernel_row *r);

/* A stage total in ns as us per counted step (the whole stage when it has none). */
double rp_per_step_us(const an_stage_timeline *tl, int64_t ns);
/* The basis of the item's bound in one phrase (no trailing period), into buf (a wait
 * item of a directory run names the straggler, its imbalance and its launch contexts:
 * RP_BASIS_BYTES holds them); w words a pooled item's members' actions. */
#define RP_BASIS_BYTES 2048
/* The time account's line for a stage without steps (one text for every format): its window
 * is the step, and with no marker nothing bounds the host's work around it, so no host
 * extent is measured against its span (review 15 defect 6: said, not left out silently). */
#define RP_NO_STEPS_TEXT                                                                      \
  "No step markers: the stage's window (first kernel start to last kernel end) is the step; " \
  "with no marker nothing bounds the host's work before its first kernel or after its last, " \
  "so that work is not measured against the span (a step marker's CPU window would)."
/* The line before the leads when no item is numbered (review 21 defect 10: a host-overhead
 * lead stands alone), in every format. */
#define RP_LEADS_ALONE_INTRO                                                              \
  "Leads, not ranked: a loss the trace shows whose lever it cannot confirm (whether the " \
  "path is hot, or whether a change is available)."
/* The line before the smaller leads (an_report.n_leads), in every format. */
#define RP_LEADS_INTRO                                                                      \
  "Smaller leads, not ranked: each under summary.lead_below_pct of the step, with a lever " \
  "the trace cannot confirm (a host stall with no lever named, or a change whose "          \
  "availability the trace does not show)."
/* ... when a lead bounds more than the last numbered item (an_report.leads_above). */
#define RP_LEADS_ABOVE_INTRO                                                    \
  RP_LEADS_INTRO                                                                \
  " A lead follows the numbered items even where its bound is the larger: its " \
  "lever waits on what the trace cannot confirm, not on its size."
/* The intro of the leads of r (RP_LEADS_ALONE_INTRO, RP_LEADS_INTRO or
 * RP_LEADS_ABOVE_INTRO). */
const char *rp_leads_intro(const an_report *r);
void rp_summary_basis(const an_summary_item *it, an_workload w, char *buf, size_t cap);
/* The same basis as parts (item_text.h): the names it holds as RP_PART_NAME, which each
 * format prints as code, the words as RP_PART_BASIS. Typed so far for the exposed basis
 * (an overlap or eliminate item and its buffer op); the other bases come as one
 * RP_PART_BASIS with their names in backticks. */
void rp_summary_basis_parts(const an_summary_item *it, an_workload w, rp_part_fn fn, void *ctx);
/* The evidence label of an anchor: "I3 in decode, time account" into buf; stage_label
 * NULL: the stage as the anchor spells it. */
void rp_evidence_label(const char *anchor, const char *stage_label, char *buf, size_t cap);

/* ---------------------------------------------------------------- Markdown */

/* Display name of a full kernel name in a stage (the layout's unique display names). */
typedef const char *(*rp_name_fn)(const void *ctx, const char *stage_id, const char *full);

/* "## What to try first": the bottleneck line, then one line per item. */
void rp_summary_markdown(FILE *f, const an_report *r, rp_name_fn name, const void *ctx);
/* "### Time account: STAGE": the step line, span = busy + idle, the idle causes and the
 * collectives (rows I1.., W1.. anchored idle-STAGE-i, wait-STAGE-i). Nothing without one. */
void rp_timeline_markdown(FILE *f, const an_report *r, const an_stage_report *st, rp_name_fn name,
                          const void *ctx);

#endif
