/*
 * report/text.h - the words and cells of the report, from the model's values and enums
 * (shared by the Markdown and JSON renderers, so both say the same thing).
 *
 * Ownership: functions returning char * return malloc'd text the caller frees (NULL when
 * out of memory); const char * results are static.
 */
#ifndef TRIAGE_REPORT_TEXT_H
#define TRIAGE_REPORT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "triage/rules.h"

/* Kernel table: the shown sites joined by "<br>" (with " (site share N%)" when several
 * candidates), the entry's best location without sites, "unresolved" without an entry. */
char *rp_kernel_location_cell(const an_kernel_row *r);
/* How a row shows site s: its display location, or (kernel_table.outside_steps_sites) for
 * an unresolved site all of whose launches ran outside the counted steps, "outside the
 * counted steps (warm-up or setup)" (before the first) or "outside the counted steps". */
const char *rp_site_location(const an_kernel_row *r, const an_site *s);
/* The words before a location of this kind: "" for a launch site, "inside a CUDA-graph
 * replay of " for a graph replay's (issue 31); static text. */
const char *rp_location_lead(an_location_kind kind);
/* The same before a summary item's location: "at", or "inside a graph replay of". */
const char *rp_item_location_lead(an_location_kind kind);
/* " (N of M launches)" (" ... in the kernel map" when M is not the row's own count)
 * into buf when the row's shown sites cover under kernel_table.site_min_coverage of its
 * mapped launches; NULL otherwise. */
const char *rp_site_coverage(const an_kernel_row *r, char *buf, size_t cap);
/* The Limits line on rows with such partial sites, into buf; NULL when none. */
const char *rp_partial_sites_limit(const an_trace_limits *l, char *buf, size_t cap);
/* The JSON id of the kind: "launch" or "graph-replay". */
const char *rp_location_kind_id(an_location_kind kind);
/* The shown sites' CPU ops joined by "<br>", or "-". */
char *rp_kernel_cpu_op_cell(const an_kernel_row *r);

/* The one denominator of every Share a stage's tables show, in every format: the stage's
 * kernel-time sum (its GPU busy time when it has no kernels). */
double rp_stage_share_base_us(const an_stage_report *st);
/* us as a share of it, in percent (0 when the stage has no time). */
double rp_stage_share_pct(const an_stage_report *st, double us);

/* Fuse table cells. */
char *rp_fuse_evidence_cell(const an_fuse_row *r); /* "name (x.y%)<br>..." or "-" */
/* A fuse row's saving basis: its JSON id ("passes", "merged-gemm", "none") and the words
 * the fusion table writes beside the saving per step. */
const char *rp_saving_basis(an_saving_basis b);
const char *rp_saving_basis_text(an_saving_basis b);
char *rp_fuse_locations_cell(const an_fuse_row *r); /* "func @ path:line<br>..." or "-" */
/* The candidate paths joined by <br>, or "-"; with_repos: each path of a stated repository
 * as "owner/name: path" (the reference layout has none). */
char *rp_fuse_candidates_cell(const an_fuse_row *r, bool with_repos);
char *rp_fuse_rationale(const an_fuse_row *r); /* the sentence, then the hint */
/* "needs vLLM >= 0.16.0 (vllm-project/vllm#30976), a version the trace does not state": the
 * release a fused path's switch needs (a pattern's since; review 18 defect 10), then ": upgrade
 * to it and set `SWITCH`" when the pattern states the switch (sw; review 19 defect 12); ""
 * when version is NULL. */
void rp_since_text(const char *framework, const char *version, const char *change, const char *sw,
                   char *b, size_t cap);
char *rp_fuse_status(const an_fuse_row *r);      /* "mainline direct", "pending split" */
const char *rp_fuse_confidence(an_confidence c); /* "Confirmed", "Candidate", "unknown" */
/* The Confidence cell: "in use", "in use (other stage)", "over cap", else the confidence. */
const char *rp_fuse_verdict(const an_fuse_row *r);
const char *rp_fuse_state(an_fuse_state s);       /* "opportunity", "in-use", ... (JSON) */
const char *rp_gate_fact(unsigned bit);           /* "tokens per step", ...; NULL for no one bit */
const char *rp_fusion_origin(an_fusion_origin o); /* "mainline", "upstream", "inflight" */
/* "path:line func" -> "func @ path:line"; other text unchanged. */
char *rp_location_func_at(const char *loc);

/* Roofline words (docs/roofline.md). */
const char *rp_limiter(an_limiter l);                   /* "memory", "compute" */
const char *rp_shape_source(an_shape_source s);         /* "op", "mapping", "model" */
const char *rp_attainable_basis(an_attainable_basis b); /* "trace", "family", "device" */
/* The roofline's model records in words (report/roofline_text.c), in buf; NULL when there
 * is nothing to say: how the model was identified or why none was; what its checks
 * found (a model that was not identified: why); attention from the step's sums (its
 * basis or the fact missing, then how the model was identified). */
#define RP_MODEL_TEXT_BYTES 768
#define RP_MODEL_NAMED_BYTES 320
#define RP_ATTENTION_TEXT_BYTES 1100
const char *rp_model_ident(const an_model_ident *m, char *buf, size_t cap);
/* The Run table's "From" of the model: where the roofline identified the model the run
 * names, what decided it (the content's shapes, or a name among models the content fits
 * alike) and whether a name agrees; else the source's words (rp_source). */
const char *rp_model_from(const an_report *r, char *buf, size_t cap);
const char *rp_model_check(const an_roofline_model *m, char *buf, size_t cap);
const char *rp_attention_check(const an_attn_check *a, char *buf, size_t cap);
/* The kernel table's roofline cell: "64% mem" (the bound's share of the time and the
 * limiter), or "-" without a roofline. Writes at most cap bytes. */
void rp_roofline_cell(const an_roofline *f, char *out, size_t cap);
/* The cell's detail (the HTML cell's title): the limiter and family, the achieved rates,
 * the fraction of the attainable rate and its basis, the launches with shapes of the row's
 * launches and where their shapes came from. Writes at most cap bytes. */
void rp_roofline_detail(const an_roofline *f, size_t launches, char *out, size_t cap);
/* The Limits: whether anything keeps launches from a roofline (an unknown GPU, a known
 * model's dimensions used or refused, launches of a stage without shapes), and a stage's
 * line: "978 of 1707 launches have shapes (12 from the mapping trace). Without: 509 with
 * no launching CPU op (...); ...." (NULL when every launch has one, or out of memory). */
bool rp_roofline_limited(const an_report *r);
char *rp_roofline_stage_limit(const an_stage_report *st);

/* Overlap table words. */
const char *rp_priority(an_priority p);             /* "P1" ... */
const char *rp_verdict(an_overlap_verdict v);       /* "headroom", "low-roi-hidden" */
const char *rp_dep_risk(an_dep_risk d);             /* "low", "high", "unclear" */
const char *rp_dep_signal(an_dep_signal s);         /* "both-side serial risk", ... */
const char *rp_recommendation(an_recommendation r); /* "try overlap", ... */
const char *rp_scope_source(an_scope_source s);     /* "mapping", "launch", ... */
const char *rp_scope(const an_overlap_row *r);      /* the scope, or "unmapped" */
/* The row's category as the stage's kernel table shows it (the overlap class without it). */
const char *rp_overlap_category(const an_overlap_row *r);
const char *rp_launch_op(const an_overlap_row *r); /* the op, "time-window fallback" or "n/a" */
/* What a "try fusion" row folds into: its fusion row's pattern name, or the eager chain
 * in words; NULL when it names none. */
const char *rp_fusion_partner(const an_overlap_row *r);
/* The evidence of the row's dependency class in words ("kernel name", "CPU op <op>",
 * "next on its stream: <category> <name cut to overlap.evidence_name_chars>", ...), in
 * buf; NULL when the row has none. rules NULL: names are not cut. */
#define RP_DEP_EVIDENCE_BYTES 512
const char *rp_dep_evidence(const an_overlap_row *r, const te_rules *rules, char *buf, size_t cap);
/* What an overlap row's exposed time above its steady cost is, after the figure: "" for a
 * kernel or collective (its wait), " above its median copy (...)" for a copy (a pageable
 * one's staging through host memory, larger copies): static text. */
const char *rp_overlap_excess_word(const an_overlap_row *r, const te_rules *rules);
/* The launch-context family an overlap row of a split collective names ("input dist",
 * "other launches" for its rest), NULL for a row holding the whole kernel name. */
const char *rp_launch_context(const an_overlap_row *r);
/* The printed number (F1 = 1) of the stage's fuse row of pattern_id among rows[0..n), 0
 * when none. */
size_t rp_fuse_row_number(const an_fuse_row *rows, size_t n, const char *pattern_id);

/* Provenance and summary words. */
const char *rp_source(an_source s); /* "server args", "default (...)", ... */
const char *rp_action(an_action a); /* "Overlap it with other streams", ... */
/* A launch item's labels, one source for its title (timeline_report.c launch_action) and
 * its JSON action (rp_item_action): the host-bound one only where the time account says the
 * step waits on the host (an_summary_item.host_bound), else the gaps named for what they
 * are (blind review 20 defect 2). */
#define RP_LAUNCH_BOUND "Launch-bound"
#define RP_HOST_BOUND_STEP "Host-bound step"
#define RP_LAUNCH_GAPS "Close the launch gaps"
/* the launch item's generic lever (rp_action) */
#define RP_LAUNCH_CAPTURE ": capture the step in a CUDA graph or torch.compile"
/* What a summary item names (its what, or the eager chain it fuses into); NULL: none. */
const char *rp_item_what(const an_summary_item *it);
/* The subject an item's line leads with, in every format: its what, with the word before
 * it in *lead ("under " a host stall's op, "issued by " a dependency's, else ""); NULL
 * for none and for a wait item (its kernels name the collective). */
const char *rp_item_subject(const an_summary_item *it, const char **lead);
const char *rp_summary_kind(an_summary_kind k); /* "kernel", "overlap", "fusion" */
const char *rp_platform(an_platform p);         /* "CUDA", "ROCm", "unknown" */
/* A share of a table's time as the Markdown tables print it: one decimal, and "<0.1%" for
 * one above 0 that would print as 0.0% (layout_md.c's tables, timeline_md.c's causes). */
void rp_fmt_share(char *b, size_t cap, double pct);
/* Whether a time of us microseconds prints in microseconds: above 0 and under
 * RP_PRINT_US_BELOW_US (util/limits.h, 5 us) it would round to 0.00 ms (review 12: "span
 * 0.00 ms" hid hta_triton_tiny's 1.76 us kernel). One rule for the Markdown headline and
 * both formats' short-window line. */
bool rp_prints_in_us(double us);
/* A source's id, as JSON's "source" and HTML's provenance class say it ("server-args",
 * "device-pack", ...; "unknown" for none). */
const char *rp_source_id(an_source s);
/* The run's GPU: its name, or a blank-name device the device pack placed in words
 * ("AMD Instinct MI300X (device pack: blank name, arch 9.4, 304 CUs)", in buf); NULL:
 * unknown. */
#define RP_GPU_BYTES 256
const char *rp_gpu(const an_run_context *c, char *buf, size_t cap);
/* How the run was given: "mapping-formal", "directory" (every rank of a profile directory
 * read: rank_inputs), else "single-trace". */
const char *rp_mode(const an_provenance *p);
/* The traces the run read: a directory's every rank, else the formal inputs. */
const char *const *rp_input_traces(const an_provenance *p, size_t *n);
/* " A training workload gets no serving advice: ..." (leading space), or "" for a serving
 * or unknown workload: what the report leaves out for a workload that serves no model. */
const char *rp_workload_note(an_workload w);

/* The bottleneck banner after its stage label: ": 97% of each step is GPU idle ... so 3 such
 * items are left out here (...)." (no left-out clause when none was left out) into buf;
 * returns buf. Markdown and HTML word it alike. */
#define RP_BOTTLENECK_BYTES 1536
const char *rp_bottleneck_tail(const an_bottleneck *b, char *buf, size_t cap);
/* The line of a stage whose GEMMs run near their attainable rate (an_gemm_rate.near), after
 * its head RP_GEMM_RATE_HEAD and the stage label: ": GEMMs hold 64.0% of the kernel time,
 * all of it in kernels at 80-90% of their attainable rate (...): little to win from tuning
 * them, at most ..." into buf; returns buf. Markdown and HTML word it alike. */
#define RP_GEMM_RATE_HEAD "GEMMs near their attainable rate in "
#define RP_GEMM_RATE_BYTES 512
const char *rp_gemm_rate_tail(const an_gemm_rate *g, char *buf, size_t cap);
/* The line under an overlap table of the stage the GPU waits in (an_overlap_stage
 * gpu_waits), NULL for any other: why its rows are not P1. */
const char *rp_overlap_gpu_waits(const an_overlap_stage *o);
/* The line under the overlap table of a stage whose trace lost graph-replayed work
 * (an_stage_timeline.graph_unrecorded), NULL for any other: its exposed times and waits are
 * unmeasured (review 17 defect 1: hta_multistream5's O1 read 111 ms exposed). */
const char *rp_overlap_unrecorded(const an_stage_report *st);
/* Lines under an overlap table, worded alike in every format (plain text, caller frees;
 * NULL when the stage has none): the restructure options, the stage's when every printed
 * restructure row has that list, else each row's own ("Options for O1: ...; For O2:
 * ..."); the rows whose wait is unknown (an alone collective, recommendation "wait
 * unknown"); how the rows behind compute shared it, when some row got less than its own
 * bound (NULL also then, and out of memory). */
char *rp_overlap_restructure_text(const an_overlap_stage *o);
/* The "What to try first" item (1-based) whose evidence is overlap row `row` of stage
 * stage_id (its own anchor or one of its merged rows'), 0 when none: a row put forward
 * there says "item N" rather than repeating the item (brief 9 defect 4). */
size_t rp_overlap_row_item(const an_report *rep, const char *stage_id, size_t row);
/* ranks_read: the ranks a Ranks section compared (limits.ranks_analysed when
 * limits.ranks_compared; 1 or less: one rank's trace): the line's advice follows what was
 * read. Owned by the caller; NULL when no row's wait is unknown. */
char *rp_overlap_wait_unknown_text(const an_overlap_stage *o, long ranks_read);
/* The stage's bar for putting a row forward, into buf: "0.01 ms/step", or with
 * overlap.recoverable.min_step_pct "0.01 ms/step or 0.2% of the step" (deviation O25). */
void rp_overlap_bar_text(const an_overlap_stage *o, char *buf, size_t cap);
/* The printed "try overlap" collective rows already on a stream of their own (brief 10
 * defect 2), each with what puts compute beside it (an_overlap_row.own_stream_levers);
 * NULL when none (and out of memory). Owned by the caller. */
char *rp_overlap_own_stream_text(const an_overlap_stage *o);

/* The note under a stage's table when its only wait rows say "slow mid-step (wait)"
 * (deviation O22), else NULL: those rows are no late rank's wait. Static text. */
const char *rp_overlap_slow_mid_step_text(const an_overlap_stage *o);
char *rp_overlap_shared_compute_text(const an_overlap_stage *o);
/* The basis of each printed row's bound behind compute (brief 12): the lesser of its
 * exposed time and the compute another stream could run beside it, and which binds; NULL
 * when no printed row hides behind compute (and out of memory). Owned by the caller. */
char *rp_overlap_bound_text(const an_overlap_stage *o);
/* The rate of each printed host copy row whose instances state their bytes, and for a slow
 * copy (copy_slow) what to look for (brief 12 defect 1); NULL when no printed row has
 * bytes (and out of memory); a pageable copy (copy_pageable, decided by the analysis) is told
 * to pin. Owned by the caller. */
char *rp_overlap_copy_rate_text(const an_overlap_stage *o);
/* What to change for a host copy under the copy-rate bar: pin pageable memory, else look
 * for what shares or slows the link; the overlap note's and the summary item's words.
 * Static text. */
const char *rp_copy_lever(bool pageable);
/* The wait rows whose steady part is measured transfer with a bound over the stage's bar
 * (deviation O30): what their action would hide of it, and with what lever; NULL when none
 * (and out of memory). Owned by the caller. */
char *rp_overlap_transfer_text(const an_overlap_stage *o);

/* Ranks section words: a group's verdict ("straggler", "wait spread across ranks", ...),
 * the JSON id of a verdict ("straggler", "spread", ...), the cause of a straggler
 * ("host", "GPU", "work imbalance", "unknown"; JSON ids "host", "gpu", "imbalance",
 * "unknown"), how a group was found (words, and
 * JSON ids "pg-args", "group-size", "tp-group", "co-moving", "all-ranks"). */
const char *rp_rank_verdict(an_rank_verdict v);
const char *rp_rank_verdict_id(an_rank_verdict v);
/* A straggler's mark in a rank table of rr, into b: "straggler of the N read" when the
 * run's world size (world, 0: not stated) holds more ranks than the table, so a straggler
 * reads as one of those read, as the prose says (review 14 defect 4), else "straggler";
 * returns b. */
#define RP_RANK_STRAGGLER_BYTES 48
const char *rp_rank_straggler(const an_rank_report *rr, long world, char *b, size_t cap);
const char *rp_rank_cause(an_rank_cause c);
const char *rp_rank_cause_id(an_rank_cause c);
const char *rp_rank_group_source(an_rank_group_source s);
const char *rp_rank_group_source_id(an_rank_group_source s);
/* The straggler's first `max` families of excess work (an_rank_excess) in words, into b;
 * returns b ("" when it has none). */
#define RP_RANK_EXCESS_BYTES 640
const char *rp_rank_excess(const an_rank_group *g, size_t max, char *b, size_t cap);
/* One family's times after its name: " 125.31 ms against 72.28 ms (1.7x, +26.51
 * ms/step)"; returns b (the Ranks notes write the name as a code part of their own). */
const char *rp_rank_excess_times(const an_rank_group *g, const an_rank_excess *x, char *b,
                                 size_t cap);

/* The word of a diff row's change as the diff reads (an_diff_report.reading): "slower
 * (regression)" when the runs compare, "slower" between two ranks, "longer" when the runs
 * do not compare (likewise "faster", "shorter"); "new", "removed", "wait change"; a row
 * within its floor "within noise", or "not resolved" in a stage whose floor resolves no
 * change (an_diff_stage.unresolved). */
const char *rp_diff_change_word(an_diff_reading how, an_diff_change c, bool unresolved);
/* The JSON id of a change (schemas/diff.schema.json): "same", "slower", "faster", "new",
 * "removed", "wait"; "longer" and "shorter" for the slower and faster rows of runs that do
 * not compare. */
const char *rp_diff_change_id(an_diff_reading how, an_diff_change c);

/* The change words of a diff's overlap row that came or went though its work did not: its
 * kernel runs in both runs ("now an overlap row (ran before too)"), or a renamed group
 * pairs it ("the renamed kernels' overlap row (Kernels renamed #2)"); else plain. */
#define RP_DIFF_WORD_BYTES 96
const char *rp_diff_overlap_word(const an_diff_row *r, const char *plain, char *buf, size_t cap);

/* The change word of a diff row whose change is under the floor but a part of it moved
 * beyond it (an_diff_row.basis): word, then that part ("slower: transfer +169.4 %", "slower:
 * its kernels beyond the floor carry 93 % of it"); else word itself. */
#define RP_DIFF_BASIS_BYTES 128
const char *rp_diff_basis_word(const an_diff_row *r, const char *word, char *buf, size_t cap);
/* The part alone ("transfer +169.4 %"), or "" for a row judged by its own change. */
const char *rp_diff_basis_part(const an_diff_row *r, char *buf, size_t cap);

/* What the Ranks table's times cover: "times are totals over the capture's 2 steps", or
 * "times are totals over the capture" when the steps are unknown, or "times are one
 * step's" for one step; returns buf. */
#define RP_RANK_SPAN_BYTES 160
const char *rp_rank_span(const an_rank_report *rep, char *buf, size_t cap);

/* Where the others' wait for a group's rank goes, by the launch-context family of the
 * collectives it is spent in: "pooled embedding exchange 40.12 ms/step (65%), input dist
 * 12.00 ms/step (19%), other launches 9.53 ms/step (16%)" (ms in all when the steps are
 * unknown; families that lost nothing left out); "" when the group has no labelled family.
 * Returns buf. */
#define RP_RANK_CONTEXTS_BYTES 640
const char *rp_rank_wait_contexts(const an_rank_group *g, char *buf, size_t cap);

/* The short-capture-window limit's sentence in buf (lower-case first letter): the stage
 * whose counted steps' GPU span is under report.short_window_ms, how many steps and that
 * span; NULL when no stage is so short. */
#define RP_SHORT_WINDOW_BYTES 320
const char *rp_short_window_limit(const an_trace_limits *l, char *buf, size_t cap);

/* The blocking-wait-outside-the-steps limit's sentence in buf (upper-case first letter;
 * an_trace_limits outside_wait); NULL when none. */
#define RP_OUTSIDE_WAIT_BYTES 900
const char *rp_outside_wait_limit(const an_trace_limits *l, char *buf, size_t cap);

/* The limit of the ranks read: its title ("One rank of many", "Ranks missing") with its
 * sentence in buf, or NULL when every rank of the run was read (or nothing says how many). */
const char *rp_ranks_limit(const an_trace_limits *l, char *buf, size_t cap);

/* The limit of a trace filtered to GPU work (an_trace_limits.filtered): its title
 * ("Filtered trace") with its sentence in buf; in a directory run, how many of the ranks
 * read are filtered, naming them, and "Filtered ranks" when the tables' rank is not but
 * others are; then the collectives the Ranks section finds a rank's trace lacks (the
 * longest named: the gap it leaves is neither idle to remove nor a wait); NULL when none is. */
#define RP_FILTERED_BYTES 2048
const char *rp_filtered_limit(const an_report *r, char *buf, size_t cap);

/* The line above "What to try first" of a trace filtered or sampled to GPU work (review 12
 * defect 4): the stage's idle with its next work queued, which no item bounds there (it may
 * be work the sampler dropped, as the collectives a peer ran and this rank lacks), and that
 * its host items follow the others; NULL when the tables' trace is not filtered. */
#define RP_FILTERED_TOP_BYTES 1024
const char *rp_filtered_top(const an_report *r, char *buf, size_t cap);

/* A hint as one line, "PATH: warning: MESSAGE" (no trailing newline), into buf; returns
 * the length it wanted (snprintf contract). */
int rp_hint_text(const an_hint *h, char *buf, size_t cap);

/* The run facts that differ between a diff's inputs (framework, model, GPU, world size,
 * GEMM number format, CUDA/HIP graphs: a fact one run does not know counts as differing
 * only for the first three), then the kernels' template arguments that changed (one fact
 * per change, at most RP_TEMPLATE_FACTS, the largest first). Fills up to RP_FACT_CHANGES
 * in that order and returns how many; the texts are copies ("unknown" for a fact a run
 * lacks). */
#define RP_TEMPLATE_FACTS 2
#define RP_FACT_CHANGES (6 + RP_TEMPLATE_FACTS)
typedef struct rp_fact_change {
  const char *what;
  char before[160], after[320];
} rp_fact_change;
size_t rp_diff_fact_changes(const an_diff_report *d, rp_fact_change out[RP_FACT_CHANGES]);
/* Why a diff's runs do not compare (an_diff_report.incomparable bits): "the GPU differs",
 * "the world size differs", "the GPU and the world size differ"; "" for none. */
const char *rp_diff_incomparable_why(unsigned why);
/* What to do about it: "Profile both runs on the same GPU (with the same world size) to
 * compare them."; "" for none. */
const char *rp_diff_incomparable_todo(unsigned why);
/* A diff's sentence on whose traces the tables read, when both sides state it and it
 * differs (an_diff_report.identity_differs): another rank (no row counts as a regression;
 * compare the same rank: with --rank N when a side is a profile directory, else profile
 * it), or the same rank on another host or GPU. NULL when nothing differs; buf holds the
 * text. */
#define RP_IDENTITY_BYTES 1024
const char *rp_diff_identity(const an_diff_report *d, char *buf, size_t cap);
/* Which ranks of a diff's directory sides were not read: a directory read for one rank
 * (--rank N), ranks whose trace the reader refused; NULL when nothing says so. */
#define RP_RANKS_READ_BYTES 1024
const char *rp_diff_ranks_read(const an_diff_report *d, char *buf, size_t cap);
/* A stage's ranks compared rank by rank (in both runs) and those only one run has; ""
 * when the stage has no Ranks rows. Returns buf. */
#define RP_RANKS_COMPARED_BYTES 1024
const char *rp_diff_ranks_compared(const an_diff_stage *s, char *buf, size_t cap);
/* Where a diff stage's noise floor comes from, in words: "the packs' floor", "twice the
 * spread across steps", ... */
const char *rp_diff_noise_source(an_noise_source s);
/* Which run of a diff ranks row waited on it: "both runs", "before", "after", or NULL. */
const char *rp_diff_straggler_word(const an_diff_rank_row *r);

#endif
