/*
 * analysis/fuse_internal.h - pieces of the fuse table shared by tables.c and the fuse_*.c
 * files (issue 31): the execution facts and gates a pattern reads from the trace
 * (fuse_context.c) and the chain of a split's pieces on one stream (fuse_chain.c). Not a
 * public API: the pipeline calls an_tables_build (analysis/tables.h).
 *
 * Ownership: an_fuse_seq owns its arrays and its views' layer resolvers
 * (an_fuse_seq_free; an_fuse_seq_release frees the resolvers alone); every other pointer
 * is borrowed from the tables, views and rules it was made from.
 */
#ifndef TRIAGE_ANALYSIS_FUSE_INTERNAL_H
#define TRIAGE_ANALYSIS_FUSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"
#include "analysis/op_shapes.h"
#include "analysis/steps.h"
#include "analysis/tables.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

/* ---------------------------------------------------------------- execution facts */

/* How the stage's kernels of every view ran: modes and tokens per step (model.h), from
 * each view's steps (steps[i] for views[i]: launch calls and step annotations). */
an_exec_facts an_exec_facts_of_stage(const an_trace_view *views, const an_steps *steps,
                                     size_t n_views, const te_stage *stage, const te_rules *r);

/* Per row of the stage, the largest message of its collective kernels: "In msg nelems"
 * times the element size of "dtype" (fuse.dtype_bytes); 0 where the args do not say.
 * ev_row as for an_fuse_seq_build. NULL when out of memory. */
double *an_fuse_message_bytes(const an_trace_view *views, size_t n_views, const an_stage_tables *st,
                              const uint32_t *ev_row, size_t n_ev, const te_rules *r);

/* The gates of p that read the execution context. False when one fails (no row: the
 * stage runs in a mode the fused path does not, the TP group spans nodes, a TP size the
 * fused path does not take); else *unknown holds the an_gate_fact bits the trace left
 * unknown and *over_cap whether every step is above the pattern's token cap. */
bool an_fuse_context_gates(const te_fusion_pattern *p, const an_exec_facts *x,
                           const an_tables_options *opt, unsigned *unknown, bool *over_cap);
/* The message-size gate on a matched row's kernels (rows[0..n) of st): false when the
 * fused path does not take the run's TP size; else *unknown gains AN_GATE_MESSAGE when
 * no kernel states its message, *over_cap is set when the largest one (*bytes) is above
 * the cap (*cap_bytes; both 0 without a cap). */
bool an_fuse_message_gate(const te_fusion_pattern *p, const an_stage_tables *st, const size_t *rows,
                          size_t n, long tp, unsigned *unknown, bool *over_cap, double *bytes,
                          double *cap_bytes);

/* What the launching op of a row's kernel states (the shape gate): the last dimension of
 * its smallest tensor and that tensor's format; known false when no launch of the row
 * has an op with shapes. */
typedef struct an_piece_shape {
  bool known;
  double last_dim;
  const te_dtype *dtype; /* borrowed from the rules */
} an_piece_shape;

/* Per row of the stage, what its kernels' first launching op with shapes states, for the
 * rows a shape-gated piece may be (their category or kind is the piece's evidence label);
 * NULL when out of memory. ev_row as for an_fuse_seq_build; shapes: the stage's memo of
 * launching ops' shapes, its views in order. */
an_piece_shape *an_fuse_row_shapes(const an_trace_view *views, size_t n_views,
                                   const an_stage_tables *st, const uint32_t *ev_row, size_t n_ev,
                                   const te_rules *r, an_op_shapes *shapes);

/* A matched row's state from what was found (model.h an_fuse_state). */
an_fuse_state an_fuse_state_of(bool active_here, bool active_elsewhere, bool over_cap,
                               unsigned unknown);

/* ---------------------------------------------------------------- chains */

/* A stage's kernels as rows, stream by stream in start order: the input of the chain
 * gate. lane_start[l] .. lane_start[l + 1] are lane l's kernels (a lane is one stream of
 * one view). */
typedef struct an_fuse_seq {
  uint32_t *row; /* kernel-table row of each kernel */
  size_t n;
  size_t *lane_start; /* n_lanes + 1 */
  size_t n_lanes;
  /* each kernel's event and view (in the views given to an_fuse_seq_build, borrowed: the
   * chain gate asks their Python frames for its layer) */
  const tr_event **ev;
  uint32_t *view;
  const an_trace_view *views;
  size_t n_views;
  const te_rules *rules;
  an_strtab *strings;
  /* per view: its resolver (attrib.h), made on the first chain query that asks a kernel's
   * layer and kept for the next ones (it sorts the view's Python frames when made); NULL:
   * not yet. The chain queries of one seq run on one thread at a time. */
  struct an_resolver **res;
  /* the layer of each kernel asked so far (seq_layers' memo, by position; made on the
   * first question, dropped with the resolvers): chain patterns ask about the same
   * kernels, and each question swept the view's frames */
  struct an_seq_layers *layers;
} an_fuse_seq;

/* Builds the sequence of one stage. ev_row: the row of each kernel of the stage, in the
 * order the views list them (view by view, each in start order). False when out of
 * memory (seq is then empty). */
bool an_fuse_seq_build(an_fuse_seq *seq, const an_trace_view *views, size_t n_views,
                       const te_stage *stage, const uint32_t *ev_row, size_t n_ev,
                       const te_rules *rules, an_strtab *strings);
void an_fuse_seq_free(an_fuse_seq *seq);
/* Frees the seq's resolvers (after the stage's chain queries: their frame tables are
 * the size of the trace's); a later query makes them again. */
void an_fuse_seq_release(an_fuse_seq *seq);

/* One piece of a split: the rows that may play it (largest first, at most
 * AN_MAX_CHAIN_CANDIDATES). */
typedef struct an_chain_piece {
  size_t n;
  size_t rows[AN_MAX_CHAIN_CANDIDATES];
} an_chain_piece;

/* What a chain search is told. */
typedef struct an_chain_query {
  const an_stage_tables *st;
  const an_fuse_seq *seq;
  const an_chain_piece *pieces;
  size_t n_pieces;
  long max_between;               /* kernels allowed between two pieces */
  bool unordered;                 /* pieces in any order (else group order = launch order) */
  const te_string_list *breakers; /* categories that end a chain */
  const char *const *labels;      /* the pieces' categories or kinds: never breakers */
  size_t n_labels;
  /* per kernel-table row: a rider of the chain (pattern chain.riders), or NULL: none. A
   * rider between two pieces, or right before the first, rides along instead of counting
   * as a kernel between */
  const bool *rider;
} an_chain_query;

/* The riders the best chain took along (distinct rows, in first-seen order). */
typedef struct an_chain_riders {
  size_t n;
  size_t rows[AN_MAX_CHAIN_RIDERS];
} an_chain_riders;

/* What the module frames said of the chains (brief 13 defect 3, deviation F18): of the
 * best tuple's chains, how many had every piece in a known layer (one layer, since chains
 * across two are dropped), and how many chains of any tuple were dropped so. */
typedef struct an_chain_layers {
  size_t by_frames, chains;
  size_t across;
} an_chain_layers;

/* The rows that most often form a whole chain (out[0..n_pieces)), and how many chains
 * there are for each launch of the tuple's rarest piece (*fraction, at most 1). False when no chain
 * was seen, or out of memory. accept (may be NULL) refuses a tuple (the dtype gate). */
bool an_chain_best(const an_chain_query *q, bool (*accept)(const size_t *rows, void *ctx),
                   void *ctx, size_t *out, double *fraction, an_chain_riders *riders,
                   an_chain_layers *layers);

/* ---------------------------------------------------------------- GEMM merges */

/* One run of sibling GEMMs (fuse_merge.c): launches on one stream that read one input. */
typedef struct an_merge_run {
  size_t n;
  uint32_t rows[AN_MAX_MERGE_SIBLINGS]; /* each sibling's kernel-table row, launch order */
  double n_out[AN_MAX_MERGE_SIBLINGS];  /* each sibling's N */
  double us_of[AN_MAX_MERGE_SIBLINGS];  /* each sibling's time (all its op's kernels) */
  double m, k;                          /* the shared input [M x K] */
  const te_dtype *dtype;                /* its format (borrowed from the rules) */
  double us, flops;                     /* the siblings' time and FLOPs */
  /* each sibling's first kernel (borrowed from the trace, read while the runs are found) */
  const tr_event *kernels[AN_MAX_MERGE_SIBLINGS];
  /* the Python location of its first resolved sibling (the function that owns them all,
   * the module gate's check; interned in the strtab), NULL: none resolved */
  const char *location;
} an_merge_run;

/* The rate of one GEMM op of the stage: FLOP per us over all its kernels. */
typedef struct an_merge_rate {
  const te_dtype *dtype;
  double flops, rate; /* rate: once sorted, the best of its format up to these FLOPs */
} an_merge_rate;

/* The sibling runs of one merge pattern in one stage, and the rates of the stage's GEMM
 * ops (the bound's basis), sorted by format and FLOPs. */
typedef struct an_merge_runs {
  an_merge_run *runs;
  size_t n, cap;
  an_merge_rate *rates;
  size_t n_rates, cap_rates;
} an_merge_runs;

/* The runs of merge pattern p in the stage (ev_row as for an_fuse_seq_build; shapes: the
 * stage's memo of launching ops' shapes, its views in order); strings interns the Python
 * locations the module-frame check resolves. False when out of memory (out is then
 * empty). */
bool an_fuse_merge_runs(const an_trace_view *views, size_t n_views, const te_stage *stage,
                        const uint32_t *ev_row, size_t n_ev, const te_rules *r,
                        const te_fusion_pattern *p, an_op_shapes *shapes, an_strtab *strings,
                        an_merge_runs *out);
/* The best rate (FLOP per us) a GEMM op of format dtype and at most max_flops FLOPs reaches
 * in the stage, 0 when none. */
double an_merge_best_rate(const an_merge_runs *m, const te_dtype *dtype, double max_flops);
void an_merge_runs_free(an_merge_runs *m);

#endif
