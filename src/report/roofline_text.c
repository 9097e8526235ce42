/*
 * report/roofline_text.c - the roofline's model records in words (text.h, docs/roofline.md
 * "Model dimensions", "Mixture-of-experts GEMMs", "Attention from the step's sums"): how
 * the model was identified, what its checks found, and the attention basis. The analysis
 * keeps them as data (issue 33); Markdown, HTML and JSON say them alike.
 */
#include <stdio.h>
#include <string.h>

#include "report/text.h"

/* What the content showed of the entry: "... vocabulary V in a CPU op's shapes, L layers
 * from N replayed GEMM launches". */
static void ident_evidence(const an_model_ident *m, char *out, size_t cap) {
  char mlp[96] = "";
  if (m->shapes)
    snprintf(mlp, sizeof mlp, "its MLP weight (hidden %ld, intermediate %ld) and ", m->hidden,
             m->intermediate);
  snprintf(out, cap, "%s%s %ld in a CPU op's shapes, %ld layers from %zu %s launches", mlp,
           m->lm_head ? "the lm_head weight of vocabulary" : "logits of vocabulary", m->vocab,
           m->layers, m->launches, m->by_gemms ? "replayed GEMM" : "attention");
}

/* Whether a name agrees with what the content decided: "; `path` names it too", or the
 * entry it names instead, which the content does not fit. */
static void ident_named(const an_model_ident *m, const char *label, char *out, size_t cap) {
  out[0] = '\0';
  if (!m->named || !m->hint) return;
  if (label && !strcmp(m->named, label))
    snprintf(out, cap, "; `%s` names it too", m->hint);
  else
    snprintf(out, cap, "; `%s` names %s, which the content does not fit: the content decides",
             m->hint, m->named);
}

const char *rp_model_ident(const an_model_ident *m, char *buf, size_t cap) {
  char ev[256], named[RP_MODEL_NAMED_BYTES];
  switch (m->kind) {
    case AN_IDENT_NONE:
      return NULL;
    case AN_IDENT_NO_FIT:
      snprintf(buf, cap,
               "no models: entry fits the trace's content (a vocabulary in a CPU op's shapes "
               "and its layers in the per-layer launches)");
      break;
    case AN_IDENT_AMBIGUOUS:
      snprintf(buf, cap,
               "the trace's content fits %zu models: entries (%s, %s%s) and nothing in it "
               "tells them apart",
               m->n_fits, m->first, m->other, m->n_fits > 2 ? ", ..." : "");
      break;
    case AN_IDENT_CONTENT:
      ident_evidence(m, ev, sizeof ev);
      ident_named(m, m->first, named, sizeof named);
      snprintf(buf, cap, "the trace's content: %s%s", ev, named);
      break;
    case AN_IDENT_HINT:
      ident_evidence(m, ev, sizeof ev);
      snprintf(buf, cap,
               "the hint `%s` among the entries the trace's content fits (%s: %s and %s%s)",
               m->hint, ev, m->first, m->other, m->n_fits > 2 ? " and others" : "");
      break;
    case AN_IDENT_MOE_CONTENT:
      snprintf(buf, cap, "the trace's content");
      break;
  }
  return buf;
}

const char *rp_model_from(const an_report *r, char *buf, size_t cap) {
  const an_text_fact *f = &r->run.context.model;
  const an_roofline_model *m = &r->roofline_model;
  /* the dense GEMMs' identification, else the attention's (a stage whose GEMMs had shapes
   * of their own needed none) */
  const an_model_ident *id = m->from.kind != AN_IDENT_NONE ? &m->from : &m->attention.ident;
  bool ours = f->value && m->label && !strcmp(f->value, m->label);
  if (ours && id->kind == AN_IDENT_HINT) {
    snprintf(buf, cap,
             "the name `%s` only: the trace's content fits %s and %s%s alike (vocabulary %ld, "
             "%ld layers) and shows no GEMM weight shapes to tell them apart",
             id->hint, id->first, id->other, id->n_fits > 2 ? " and others" : "", id->vocab,
             id->layers);
    return buf;
  }
  if (ours && id->kind == AN_IDENT_CONTENT) {
    char ev[256], named[RP_MODEL_NAMED_BYTES];
    ident_evidence(id, ev, sizeof ev);
    ident_named(id, id->first, named, sizeof named);
    snprintf(buf, cap, "the trace's content (%s)%s", ev, named);
    return buf;
  }
  return rp_source(f->source);
}

static const char *moe_misfit(an_moe_misfit m) {
  switch (m) {
    case AN_MOE_MISFIT_NONE:
      break;
    case AN_MOE_MISFIT_NO_WEIGHT_FORMAT:
      return "no weight format";
    case AN_MOE_MISFIT_NO_LM_HEAD:
      return "no CPU op shows its lm_head weight";
    case AN_MOE_MISFIT_LAUNCHES:
      return "the grouped GEMM launches are not 2 a layer in each step";
  }
  return "";
}

/* What the MoE plan found of the replayed dense GEMMs beside the grouped ones. */
static void moe_dense_check(const an_model_check *c, char *out, size_t cap) {
  if (!c->dense_launches)
    out[0] = '\0';
  else if (c->dense_per_layer)
    snprintf(out, cap, "; %zu dense GEMM launches = %zu step(s) x (QKV, o_proj%s) x %ld layers",
             c->dense_launches, c->steps, c->dense_per_layer > 2 ? ", router" : "", c->layers);
  else
    snprintf(out, cap,
             "; %zu dense GEMM launches are not 2 (QKV, o_proj) or 3 (and the router) a layer "
             "in each step: no roofline for them",
             c->dense_launches);
}

const char *rp_model_check(const an_roofline_model *m, char *buf, size_t cap) {
  const an_model_check *c = &m->check;
  switch (c->kind) {
    case AN_CHECK_NONE:
      return NULL;
    case AN_CHECK_IDENT:
      return rp_model_ident(&m->from, buf, cap);
    case AN_CHECK_NO_WEIGHT_FORMAT:
      snprintf(buf, cap, "no weight format");
      break;
    case AN_CHECK_NO_LOGITS:
      snprintf(buf, cap, "no CPU op shows the logits [tokens, %ld] of its vocabulary", c->vocab);
      break;
    case AN_CHECK_NOT_WHOLE_STEPS:
      snprintf(buf, cap,
               "%zu replayed GEMM launches are not whole steps of %zu (4 per layer x %ld "
               "layers + lm_head)",
               c->launches, c->cycle, c->layers);
      break;
    case AN_CHECK_DENSE_HELD:
      snprintf(buf, cap,
               "vocabulary %ld and %ld tokens a step from %s's input; %zu GEMM launches = "
               "%zu step(s) x (4 per layer x %ld layers + lm_head)",
               c->vocab, c->tokens, c->op, c->launches, c->steps, c->layers);
      break;
    case AN_CHECK_MOE_NO_TOKENS:
      snprintf(buf, cap, "the step annotations state no one token count for the stage's steps");
      break;
    case AN_CHECK_MOE_NO_FIT:
      snprintf(buf, cap,
               "no mixture-of-experts entry fits %zu grouped GEMM launches in %zu step(s)%s%s",
               c->launches, c->steps, c->misfit ? ": " : "", moe_misfit(c->misfit));
      break;
    case AN_CHECK_MOE_AMBIGUOUS:
      snprintf(buf, cap, "both %s and %s fit the trace", c->fit, c->other);
      break;
    case AN_CHECK_MOE_HELD: {
      int n = snprintf(buf, cap,
                       "lm_head [%ld, %ld] in a CPU op's shapes; %zu grouped GEMM launches = %zu "
                       "step(s) x (gate/up + down) x %ld layers; %ld tokens a step (step "
                       "annotation) to top-%ld of %ld experts: %.1f experts active",
                       c->vocab, c->hidden, c->launches, c->steps, c->layers, c->tokens, c->topk,
                       c->experts, c->active);
      if (n > 0 && (size_t)n < cap) moe_dense_check(c, buf + n, cap - (size_t)n);
      break;
    }
  }
  return buf;
}

/* The fact an attention check found missing, or its basis, in buf. */
static void attention_fact(const an_attn_check *a, char *buf, size_t cap) {
  switch (a->kind) {
    case AN_ATTN_NONE:
      buf[0] = '\0';
      break;
    case AN_ATTN_NO_MODEL:
      snprintf(buf, cap, "no model identified from the trace (its heads, KV heads and head_dim)");
      break;
    case AN_ATTN_NO_WEIGHT_FORMAT:
      snprintf(buf, cap, "the model entry states no weight format");
      break;
    case AN_ATTN_NO_SUMS:
      snprintf(buf, cap, "the step annotations state no attention sums (the sequence lengths)");
      break;
    case AN_ATTN_KV_FORMATS:
      snprintf(buf, cap, "the attention kernels disagree on the KV cache's format");
      break;
    case AN_ATTN_LAUNCHES:
      snprintf(buf, cap, "%zu attention launches are not one a layer (%ld) in each of %zu step(s)",
               a->launches, a->layers, a->steps);
      break;
    case AN_ATTN_HELD: {
      int n =
          snprintf(buf, cap,
                   "%.0f query and %.0f KV tokens, %.0f causal score pairs a step (step "
                   "annotation sums); %s: %ld heads, %ld KV heads, head_dim %ld, KV cache in "
                   "%s; %zu launches = %zu step(s) x %ld layers",
                   a->q_tokens, a->kv_tokens, a->pairs, a->model, a->heads, a->kv_heads,
                   a->head_dim, a->kv_fp8 ? "fp8" : a->kv_dtype, a->launches, a->steps, a->layers);
      if (a->window_layers && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n,
                 "; %ld of its layers attend to the last %ld tokens only (its layer_types, each "
                 "launch costed as its layer in launch order): at most %.0f KV tokens and %.0f "
                 "score pairs a step each, upper estimates (the sums give no sequence's own "
                 "length)",
                 a->window_layers, a->window, a->window_kv_tokens, a->window_pairs);
      break;
    }
  }
}

const char *rp_attention_check(const an_attn_check *a, char *buf, size_t cap) {
  if (a->kind == AN_ATTN_NONE) return NULL;
  char fact[RP_MODEL_TEXT_BYTES], how[RP_MODEL_TEXT_BYTES];
  attention_fact(a, fact, sizeof fact);
  const char *ident = rp_model_ident(&a->ident, how, sizeof how);
  snprintf(buf, cap, "%s%s%s", fact,
           !ident                        ? ""
           : a->kind == AN_ATTN_NO_MODEL ? ": "
                                         : "; the model: ",
           ident ? ident : "");
  return buf;
}
