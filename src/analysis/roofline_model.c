/*
 * analysis/roofline_model.c - a known model identified from the trace's content, and its
 * decode GEMM shapes (roofline_model.h, docs/roofline.md "Model dimensions").
 */
#include "analysis/roofline_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/map.h"

#define PROJECTIONS 4 /* per layer: QKV, o_proj, gate_up, down */
#define MAX_TOKENS 1000000
#define MAX_INPUTS 8 /* inputs of one op searched for the lm_head weight */
#define MAX_FITS 4   /* fitting entries counted */

/* ------------------------------------------------------------------ content scan */

/* An entry's vocabulary as text, searched for in every distinct Input Dims. */
typedef struct vocab_text {
  char s[32];
} vocab_text;

/* What one op's Input Dims show of entry m (vocab: its vocabulary as text): the logits
 * [tokens, vocab] as its first input, the lm_head weight [vocab, hidden] (or transposed)
 * as any input. */
static void scan_dims(const char *dims, const te_model *m, const char *vocab, long *tokens,
                      bool *lm_head) {
  if (!strstr(dims, vocab)) return;
  for (size_t k = 0; k < MAX_INPUTS; k++) {
    int64_t d[2];
    size_t rank;
    if (!an_op_input_dims(dims, k, d, 2, &rank) || rank != 2) continue;
    if (k == 0 && !*tokens && d[1] == m->vocab && d[0] >= 1 && d[0] <= MAX_TOKENS)
      *tokens = (long)d[0];
    if ((d[0] == m->vocab && d[1] == m->hidden) || (d[0] == m->hidden && d[1] == m->vocab))
      *lm_head = true;
  }
}

static bool pair_of(const int64_t *d, long a, long b) {
  return (d[0] == a && d[1] == b) || (d[0] == b && d[1] == a);
}

/* Whether one op's Input Dims hold a dense entry's MLP weight: the down projection
 * [hidden, intermediate] or the merged gate_up [2 x intermediate, hidden], either way round.
 * The pair pins the model's width and MLP size together, which a vocabulary and a layer
 * count shared by a family's sizes do not (Qwen3-4B and 8B: 151936 and 36 alike). */
static void scan_shapes(const char *dims, const te_rules *rules, bool *shapes, size_t n) {
  int64_t in[MAX_INPUTS][2];
  size_t m = 0;
  for (size_t k = 0; k < MAX_INPUTS; k++) {
    size_t rank;
    if (an_op_input_dims(dims, k, in[m], 2, &rank) && rank == 2) m++;
  }
  for (size_t e = 0; e < n && m; e++) {
    const te_model *x = te_rules_model_at(rules, e);
    for (size_t k = 0; k < m && !shapes[e] && !x->experts; k++)
      shapes[e] = pair_of(in[k], x->hidden, x->intermediate) ||
                  pair_of(in[k], x->hidden, 2 * x->intermediate);
  }
}

bool an_model_scan_build(const te_rules *rules, const tr_trace *t, an_model_scan *s) {
  memset(s, 0, sizeof *s);
  s->trace = t;
  s->n = te_rules_model_count(rules);
  s->logits_tokens = calloc(s->n + 1, sizeof *s->logits_tokens);
  s->logits_op = calloc(s->n + 1, sizeof *s->logits_op);
  s->lm_head = calloc(s->n + 1, sizeof *s->lm_head);
  s->shapes = calloc(s->n + 1, sizeof *s->shapes);
  vocab_text *vocab = malloc((s->n + 1) * sizeof *vocab); /* printed once, not per dims */
  if (!s->logits_tokens || !s->logits_op || !s->lm_head || !s->shapes || !vocab) {
    free(vocab);
    return false;
  }
  for (size_t m = 0; m < s->n; m++)
    snprintf(vocab[m].s, sizeof vocab[m].s, "%ld", te_rules_model_at(rules, m)->vocab);
  ut_u64map seen = {0}; /* Input Dims string ids already read: ops repeat their shapes */
  size_t n;
  const tr_event *ops = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  bool ok = true;
  for (size_t i = 0; i < n && s->n; i++) {
    tr_str id = tr_event_arg(t, TR_KIND_CPU_OP, &ops[i], TR_ARG_INPUT_DIMS);
    uint64_t one;
    if (!id || ut_u64map_get(&seen, id, &one)) continue;
    if (!ut_u64map_put(&seen, id, 1)) ok = false; /* out of memory: read again, same answer */
    const char *dims = tr_str_get(t, id);
    scan_shapes(dims, rules, s->shapes, s->n);
    for (size_t m = 0; m < s->n; m++) {
      bool had = s->logits_tokens[m] != 0;
      scan_dims(dims, te_rules_model_at(rules, m), vocab[m].s, &s->logits_tokens[m],
                &s->lm_head[m]);
      if (!had && s->logits_tokens[m]) s->logits_op[m] = tr_str_get(t, ops[i].name);
    }
  }
  ut_u64map_free(&seen);
  free(vocab);
  return ok;
}

void an_model_scan_free(an_model_scan *s) {
  free(s->logits_tokens);
  free((void *)s->logits_op);
  free(s->lm_head);
  free(s->shapes);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ identification */

/* Whether dense entry i fits the content: its vocabulary shown, its layers counted. */
static bool fits(const an_model_scan *s, size_t i, const te_model *m, const an_model_layers *l) {
  if (m->experts > 0 || !(s->logits_tokens[i] || s->lm_head[i])) return false;
  size_t cycle = (size_t)(PROJECTIONS * m->layers + 1);
  bool gemms = l->gemm_launches && l->gemm_launches % cycle == 0;
  bool attn = l->attn_launches && l->steps && l->attn_launches == l->steps * (size_t)m->layers;
  return gemms || attn;
}

/* What the content showed of entry i. */
static void evidence(const an_model_scan *s, size_t i, const te_model *m, const an_model_layers *l,
                     an_model_ident *out) {
  size_t cycle = (size_t)(PROJECTIONS * m->layers + 1);
  bool gemms = l->gemm_launches && l->gemm_launches % cycle == 0;
  out->lm_head = s->lm_head[i];
  out->shapes = s->shapes[i];
  out->hidden = m->hidden;
  out->intermediate = m->intermediate;
  out->by_gemms = gemms;
  out->vocab = m->vocab;
  out->layers = m->layers;
  out->launches = gemms ? l->gemm_launches : l->attn_launches;
}

/* The first fitting entry (of fit[0..n)) a hint text names, or -1. */
static long hinted(const te_rules *rules, const size_t *fit, size_t n, const char *const *hints,
                   size_t n_hints, const char **by) {
  for (size_t h = 0; h < n_hints; h++)
    for (size_t j = 0; hints[h] && *hints[h] && j < n; j++) {
      const te_model *m = te_rules_model_at(rules, fit[j]);
      if (m->match && te_matcher_match(m->match, hints[h], strlen(hints[h]))) {
        *by = hints[h];
        return (long)fit[j];
      }
    }
  return -1;
}

/* The entry the first hint text naming one names (whether or not the content fits it), its
 * label and the text into how; nothing when no hint names one. */
static void named_by_hint(const te_rules *rules, const char *const *hints, size_t n_hints,
                          an_model_ident *how) {
  for (size_t h = 0; h < n_hints; h++)
    for (size_t i = 0; hints[h] && *hints[h] && i < te_rules_model_count(rules); i++) {
      const te_model *m = te_rules_model_at(rules, i);
      if (m->match && te_matcher_match(m->match, hints[h], strlen(hints[h]))) {
        how->named = m->label;
        how->hint = hints[h];
        return;
      }
    }
}

/* How much of an entry's shape the content shows: 2 its MLP weight (width and MLP size), 1
 * its lm_head weight (vocabulary and width), 0 only the logits' vocabulary. */
static int tier_of(const an_model_scan *s, size_t i) {
  return s->shapes[i] ? 2 : s->lm_head[i] ? 1 : 0;
}

void an_model_identify(const te_rules *rules, const an_model_scan *s, const an_model_layers *layers,
                       const char *const *hints, size_t n_hints, an_model_plan *plan,
                       an_model_ident *how) {
  memset(plan, 0, sizeof *plan);
  *how = (an_model_ident){.kind = AN_IDENT_NO_FIT};
  size_t fit[MAX_FITS], n = 0;
  /* the more of its shape the content shows, the better an entry fits: the MLP weight
   * outranks the lm_head weight, which outranks the logits' vocabulary alone (Qwen3-8B's
   * [12288, 4096] and [151936, 4096] are not Qwen3-4B's) */
  for (int tier = 2; tier >= 0 && !n; tier--)
    for (size_t i = 0; i < s->n; i++)
      if (tier_of(s, i) == tier && fits(s, i, te_rules_model_at(rules, i), layers) && n < MAX_FITS)
        fit[n++] = i;
  if (!n) return;
  const char *by = NULL;
  long pick = n == 1 ? (long)fit[0] : hinted(rules, fit, n, hints, n_hints, &by);
  how->n_fits = n;
  if (pick < 0) {
    how->kind = AN_IDENT_AMBIGUOUS;
    how->first = te_rules_model_at(rules, fit[0])->label;
    how->other = te_rules_model_at(rules, fit[1])->label;
    return;
  }
  plan->model = te_rules_model_at(rules, (size_t)pick);
  plan->index = (size_t)pick;
  plan->from_hint = by != NULL;
  evidence(s, (size_t)pick, plan->model, layers, how);
  how->kind = by ? AN_IDENT_HINT : AN_IDENT_CONTENT;
  if (!by) { /* the content decided: does a name agree? */
    how->first = plan->model->label;
    named_by_hint(rules, hints, n_hints, how);
    return;
  }
  how->hint = by;
  how->first = plan->model->label;
  how->other = te_rules_model_at(rules, fit[fit[0] == (size_t)pick ? 1 : 0])->label;
}

bool an_model_plan_check(an_model_plan *plan, const an_model_scan *s, size_t gemm_launches,
                         an_model_check *why) {
  const te_model *m = plan->model;
  plan->cycle = (size_t)(PROJECTIONS * m->layers + 1);
  plan->tokens = s->logits_tokens[plan->index];
  *why = (an_model_check){.launches = gemm_launches,
                          .cycle = plan->cycle,
                          .vocab = m->vocab,
                          .hidden = m->hidden,
                          .layers = m->layers,
                          .tokens = plan->tokens};
  if (!m->weight_dtype) {
    why->kind = AN_CHECK_NO_WEIGHT_FORMAT;
    return false;
  }
  if (!plan->tokens) {
    why->kind = AN_CHECK_NO_LOGITS;
    return false;
  }
  if (!gemm_launches || gemm_launches % plan->cycle) {
    why->kind = AN_CHECK_NOT_WHOLE_STEPS;
    return false;
  }
  why->kind = AN_CHECK_DENSE_HELD;
  why->steps = gemm_launches / plan->cycle;
  why->op = s->logits_op[plan->index];
  return true;
}

void an_model_gemm_cost(const an_model_plan *plan, size_t i, an_op_cost *out) {
  const te_model *m = plan->model;
  size_t p = i % plan->cycle;
  double n, k;
  if (p == plan->cycle - 1) {
    n = (double)m->vocab, k = (double)m->hidden; /* lm_head */
  } else if (p % PROJECTIONS < AN_MODEL_ATTN_PROJECTIONS) {
    an_model_attn_projection(m, p % PROJECTIONS, &n, &k);
  } else {
    const bool up = p % PROJECTIONS == AN_MODEL_ATTN_PROJECTIONS; /* gate_up, then down */
    n = up ? 2.0 * (double)m->intermediate : (double)m->hidden;
    k = up ? (double)m->hidden : (double)m->intermediate;
  }
  an_model_projection_cost(m, (double)plan->tokens, n, k, out);
}

void an_model_attn_projection(const te_model *m, size_t p, double *n, double *k) {
  const double q = (double)(m->heads * m->head_dim), h = (double)m->hidden;
  *n = p == 0 ? q + 2.0 * (double)(m->kv_heads * m->head_dim) : h;
  *k = p == 0 ? h : q;
}

void an_model_projection_cost(const te_model *m, double tokens, double n, double k,
                              an_op_cost *out) {
  /* activations in and out in the weights' format (the models listed are BF16 checkpoints) */
  double b = m->weight_dtype->bytes;
  out->flops = 2.0 * tokens * n * k;
  out->bytes = n * k * b + tokens * (n + k) * b;
  out->dtype = m->weight_dtype;
}
