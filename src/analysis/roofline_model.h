/*
 * analysis/roofline_model.h - a known model (rules `models:`) identified from the trace's
 * content, and the decode GEMM shapes of a dense one, for a graph-replayed stage with no
 * launching CPU ops and no mapping trace (docs/roofline.md "Model dimensions"). Private to
 * the roofline.
 *
 * Identification reads the trace, never a path first: an entry fits when a CPU op shows
 * its vocabulary (the logits [tokens, vocab], or the lm_head weight [vocab, hidden]) and
 * the stage's per-layer launches count its layers (replayed dense GEMMs whole steps of
 * 4 x layers + 1, or attention launches one a layer a step). When exactly one entry fits
 * it is identified from the content; when several fit (same vocabulary and depth: Qwen3-4B
 * and 8B), a hint text (server args' model path, input paths, the Python frames' model)
 * may pick one of them, and the basis says so; a hint naming an entry the content does not
 * fit is never used. Entries whose MLP weight (width and MLP size) a CPU op shows outrank
 * those whose lm_head weight it shows, which outrank the logits' vocabulary alone; where the
 * content decided, the name a hint gives (agreeing or not) is kept to be said. The dense
 * GEMM plan then needs the logits' rows (every decode GEMM's
 * M) and whole steps of replayed GEMMs (an_model_plan_check).
 *
 * Ownership: the scan owns its arrays (an_model_scan_free); plans borrow the rules' models.
 */
#ifndef TRIAGE_ANALYSIS_ROOFLINE_MODEL_H
#define TRIAGE_ANALYSIS_ROOFLINE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "analysis/op_cost.h"
#include "trace/trace.h"
#include "triage/rules.h"

/* What one trace's CPU ops show of each models: entry (parallel to te_rules_model_at). */
typedef struct an_model_scan {
  const tr_trace *trace;
  size_t n;
  long *logits_tokens;    /* rows of an op's [tokens, vocab] input; 0: none */
  const char **logits_op; /* that op's name (borrowed from the trace) */
  bool *lm_head;          /* an op's input is [vocab, hidden] or [hidden, vocab] */
  bool *shapes;           /* an op's input is its MLP weight: [hidden, intermediate] or [2 x
                             intermediate, hidden], either way round (dense entries) */
} an_model_scan;

/* Scans trace t once for every entry; false when out of memory. */
bool an_model_scan_build(const te_rules *rules, const tr_trace *t, an_model_scan *s);
void an_model_scan_free(an_model_scan *s);

/* The per-layer launches of a stage block, the content that counts a model's layers. */
typedef struct an_model_layers {
  size_t gemm_launches; /* replayed dense GEMMs without shapes */
  size_t attn_launches; /* attention launches (roofline_attn.h) */
  size_t steps;         /* steps of the block with attention sums */
} an_model_layers;

typedef struct an_model_plan {
  const te_model *model; /* NULL: none identified */
  size_t index;          /* its position in the rules (and the scan) */
  bool from_hint;        /* several entries fit the content; a hint text picked this one */
  long tokens;           /* rows of the logits op (0: not found) */
  size_t cycle;          /* GEMM launches a step: 4 x layers + 1 */
} an_model_plan;

/* Identifies the dense entry the content of s fits (layers: the block's counts), a hint
 * text picking among several. how gets how, or why none was (its hint borrows hints'
 * text). */
void an_model_identify(const te_rules *rules, const an_model_scan *s, const an_model_layers *layers,
                       const char *const *hints, size_t n_hints, an_model_plan *plan,
                       an_model_ident *how);

/* Whether the identified plan costs the block's replayed GEMMs: the logits' rows and
 * whole steps of them. why gets what was checked or what failed (its op borrows the
 * scanned trace's name). */
bool an_model_plan_check(an_model_plan *plan, const an_model_scan *s, size_t gemm_launches,
                         an_model_check *why);

/* The cost of the i-th replayed GEMM launch of the stage (0-based, in start order). */
void an_model_gemm_cost(const an_model_plan *plan, size_t i, an_op_cost *out);

/* The attention's projections of a layer, in launch order: QKV (p 0: N = (heads + 2
 * kv_heads) head_dim, K = hidden), then o_proj (p 1: N = hidden, K = heads head_dim). */
#define AN_MODEL_ATTN_PROJECTIONS 2
void an_model_attn_projection(const te_model *m, size_t p, double *n, double *k);

/* One projection of model m (weights N x K in its weight format) over tokens rows: the
 * weights read once, the activations in and out in the same format. */
void an_model_projection_cost(const te_model *m, double tokens, double n, double k,
                              an_op_cost *out);

#endif
