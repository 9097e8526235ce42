/*
 * report/html_report.c - the HTML report (--format html): one self-contained page from
 * the report model, in the markup of docs/html.md. The page skeleton, style sheet and
 * script are embedded (html_page.c); this file writes the header, "What to try first",
 * the notes on the trace, the legend and the footer, and asks html_tables.c for each
 * stage. Trace text goes out only through rp_html_text / rp_html_token.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_escape.h"
#include "report/html_internal.h"
#include "report/html_page.h"
#include "report/item_text.h"
#include "report/legend.h"
#include "report/report.h"
#include "report/text.h"
#include "report/timeline_report.h"
#include "triage/settings.h"
#include "util/limits.h"

static void stage_names_free(rp_hw_names *all, size_t n) {
  for (size_t i = 0; all && i < n; i++) rp_stage_names_free(&all[i]);
  free(all);
}

/* One set per stage, the Markdown layout's (report/stage_names.h). */
static rp_hw_names *stage_names(rp_hw *hw) {
  rp_hw_names *all = calloc(hw->rep->n_stages ? hw->rep->n_stages : 1, sizeof *all);
  for (size_t i = 0; all && i < hw->rep->n_stages; i++) {
    if (rp_stage_names_build(&all[i], hw->rep, i, hw->full_names ? NULL : hw->names) != 0) {
      stage_names_free(all, hw->rep->n_stages);
      return NULL;
    }
  }
  return all;
}

/* ------------------------------------------------------------------ stage tokens */

static char *token_of(const char *s) {
  char *t = malloc(strlen(s ? s : "") + 2);
  if (!t) return NULL;
  size_t n = 0;
  for (const char *p = s ? s : ""; *p; p++) {
    char c = *p;
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-';
    t[n++] = keep ? c : '_';
  }
  if (n == 0) t[n++] = '_';
  t[n] = '\0';
  return t;
}

/* Stage ids as tokens; two stages whose tokens collide get "-INDEX" (docs/html.md). */
static char **stage_tokens(const an_report *r) {
  char **tok = calloc(r->n_stages ? r->n_stages : 1, sizeof *tok);
  for (size_t i = 0; tok && i < r->n_stages; i++) {
    char *t = token_of(r->stages[i].id);
    bool clash = false;
    for (size_t j = 0; t && j < i; j++) clash = clash || strcmp(tok[j], t) == 0;
    if (t && clash) {
      char *u = malloc(strlen(t) + 24);
      if (u) sprintf(u, "%s-%zu", t, i);
      free(t);
      t = u;
    }
    if (!t) {
      for (size_t j = 0; j < i; j++) free(tok[j]);
      free(tok);
      return NULL;
    }
    tok[i] = t;
  }
  return tok;
}

/* ------------------------------------------------------------------ header */

/* The provenance class: the source's id, "none" for none (drawn as a warning). */
static const char *prov_class(an_source s) {
  return s == AN_SOURCE_UNKNOWN ? "none" : rp_source_id(s);
}

/* A fact with its provenance in words (said: NULL for none). */
static void fact_said(rp_hw *hw, const char *term, const char *value, an_source src,
                      const char *said) {
  rp_hw_printf(hw, "<div><dt>%s</dt><dd>", term);
  rp_hw_text(hw, value ? value : "not known");
  if (said) {
    rp_hw_printf(hw, " <span class=\"prov prov-%s\">", prov_class(src));
    rp_hw_text(hw, said);
    rp_hw_printf(hw, "</span>");
  }
  rp_hw_printf(hw, "</dd></div>");
}

static void fact(rp_hw *hw, const char *term, const char *value, an_source src, bool with_prov) {
  fact_said(hw, term, value, src, with_prov ? rp_source(src) : NULL);
}

/* A framework nothing detected reads "not detected"; the packs' default it falls back to
 * serves only framework-specific rules, and the provenance says so. */
static void framework_fact(rp_hw *hw, const an_framework_fact *fw) {
  const char *label = fw->label ? fw->label : fw->id;
  if (fw->source != AN_SOURCE_DEFAULT && fw->evidence) { /* the name that decided it */
    char said[320];
    snprintf(said, sizeof said, "trace (%.300s)", fw->evidence);
    fact_said(hw, "Framework", label, fw->source, said);
    return;
  }
  if (fw->source != AN_SOURCE_DEFAULT) {
    fact(hw, "Framework", label, fw->source, true);
    return;
  }
  rp_hw_printf(hw,
               "<div><dt>Framework</dt><dd>not detected <span class=\"prov prov-default\">"
               "framework-specific rules use the packs' default, ");
  rp_hw_text(hw, label);
  rp_hw_printf(hw, "</span></dd></div>");
}

static void inputs_line(rp_hw *hw, const an_provenance *p) {
  rp_hw_printf(hw, "<p class=\"subtitle\">");
  if (p->mode == AN_MODE_MAPPING_FORMAL)
    rp_hw_printf(hw, "Mapping: ");
  else
    rp_hw_printf(hw, "Inputs: ");
  size_t n_in = p->n_mapping_inputs;
  const char *const *in = p->mapping_inputs;
  if (p->mode != AN_MODE_MAPPING_FORMAL) in = rp_input_traces(p, &n_in);
  for (size_t i = 0; i < n_in; i++) {
    rp_hw_printf(hw, "%s<code>", i ? ", " : "");
    rp_hw_text(hw, in[i]);
    rp_hw_printf(hw, "</code>");
  }
  if (p->mode == AN_MODE_MAPPING_FORMAL) {
    rp_hw_printf(hw, " · Formal: ");
    for (size_t i = 0; i < p->n_formal_inputs; i++) {
      rp_hw_printf(hw, "%s<code>", i ? ", " : "");
      rp_hw_text(hw, p->formal_inputs[i]);
      rp_hw_printf(hw, "</code>");
    }
  }
  rp_hw_printf(hw, "</p>");
}

static void header(rp_hw *hw) {
  const an_provenance *p = &hw->rep->run;
  rp_hw_printf(hw, "<header class=\"report-head\" id=\"%stop\"><h%d>triage report: ", hw->idp,
               1 + hw->hd);
  rp_hw_text(hw, p->context.model.value ? p->context.model.value : "model not known");
  rp_hw_printf(hw, "</h%d>", 1 + hw->hd);
  inputs_line(hw, p);
  rp_hw_printf(hw, "<dl class=\"facts\">");
  framework_fact(hw, &p->framework);
  char model_from[RP_MODEL_TEXT_BYTES];
  fact_said(hw, "Model", p->context.model.value, p->context.model.source,
            rp_model_from(hw->rep, model_from, sizeof model_from));
  char tp[32];
  snprintf(tp, sizeof tp, "%ld", p->context.tp_size.value);
  fact(hw, "TP size", tp, p->context.tp_size.source, true);
  char gpu[RP_GPU_BYTES];
  fact(hw, "GPU", rp_gpu(&p->context, gpu, sizeof gpu), p->context.gpu.source, true);
  fact(hw, "Platform", rp_platform(p->context.platform.value), p->context.platform.source, true);
  char shape[160], shape_from[256], said[400];
  if (rp_step_shape(&p->step_shape, p->workload.value, shape, sizeof shape, shape_from,
                    sizeof shape_from)) {
    snprintf(said, sizeof said, "Input Dims of %s (%s)", p->step_shape.op, shape_from);
    fact_said(hw, "Step shape", shape, AN_SOURCE_TRACE_CONTENT, said);
  }
  if (p->compiled.compiled)
    fact_said(hw, "Compiled", "torch.compile", AN_SOURCE_TRACE_CONTENT, p->compiled.evidence);
  fact(hw, "Mode", p->mode == AN_MODE_MAPPING_FORMAL ? "mapping + formal" : rp_mode(p),
       AN_SOURCE_UNKNOWN, false);
  if (hw->rep->limits.ranks_compared) {
    char ranks[128];
    snprintf(ranks, sizeof ranks, "%ld (tables: the lowest rank; Ranks section: every rank)",
             hw->rep->limits.ranks_analysed);
    fact(hw, "Ranks read", ranks, AN_SOURCE_UNKNOWN, false);
  }
  double total = 0;
  for (size_t i = 0; i < hw->rep->n_stages; i++) total += hw->rep->stages[i].kernel_total_us;
  rp_hw_printf(hw, "<div><dt>Stages</dt><dd>%zu</dd></div><div><dt>GPU kernel time</dt><dd>",
               hw->rep->n_stages);
  rp_hw_ms(hw, total);
  rp_hw_printf(hw, " ms</dd></div></dl></header>");
}

/* ------------------------------------------------------------------ summary */

/* An item's parts as HTML (report/item_text.h): the same words as the Markdown. */
typedef struct html_item {
  rp_hw *hw;
  size_t stage;
  const an_summary_item *it;
} html_item;

static void html_part(void *ctx, rp_part part, const char *s, const char *ref) {
  html_item *h = ctx;
  rp_hw *hw = h->hw;
  switch (part) {
    case RP_PART_ACTION:
      rp_hw_printf(hw, "<span class=\"action\">");
      rp_hw_text(hw, s);
      rp_hw_printf(hw, "</span>");
      return;
    case RP_PART_NAME:
      rp_hw_printf(hw, "<code>");
      rp_hw_text(hw, s);
      rp_hw_printf(hw, "</code>");
      return;
    case RP_PART_LOCATION:
      rp_hw_printf(hw, "<code class=\"loc\">");
      rp_hw_text(hw, s);
      rp_hw_printf(hw, "</code>");
      return;
    case RP_PART_KERNEL:
      rp_hw_name_span(hw, s, rp_hw_shown(hw, h->stage, s));
      return;
    case RP_PART_BOUND:
      rp_hw_printf(hw, "<span class=\"stake\" data-value=\"%.6g\">", h->it->at_stake_us);
      rp_hw_text(hw, s);
      rp_hw_printf(hw, "</span>");
      return;
    case RP_PART_LINK:
      rp_html_evidence(hw, ref, s);
      return;
    case RP_PART_TEXT:
    case RP_PART_BASIS:
      rp_hw_text(hw, s);
      return;
  }
}

static void summary_item(rp_hw *hw, const an_summary_item *it) {
  const char *kind_word = rp_summary_kind(it->kind);
  rp_hw_printf(hw, "<li data-kind=\"%s\"><span class=\"kind\">%s</span>", kind_word, kind_word);
  html_item h = {hw, rp_hw_stage_index(hw, it->stage_id), it};
  rp_item_parts(it, hw->rep->run.workload.value, html_part, &h);
  rp_hw_printf(hw, "</li>");
}

/* When the GPU mostly waits in a stage, the GPU-side items left out (as in the Markdown). */
static void bottleneck(rp_hw *hw) {
  const an_bottleneck *b = &hw->rep->bottleneck;
  if (!b->stage_label) return;
  char tail[RP_BOTTLENECK_BYTES];
  rp_hw_printf(hw, "<p class=\"bottleneck\"><b>The GPU waits in ");
  rp_hw_text(hw, b->stage_label);
  rp_hw_printf(hw, "</b>");
  rp_hw_text(hw, rp_bottleneck_tail(b, tail, sizeof tail));
  rp_hw_printf(hw, "</p>");
}

/* Each stage whose GEMMs run near their attainable rate (as in the Markdown). */
static void gemm_rate_lines(rp_hw *hw) {
  char tail[RP_GEMM_RATE_BYTES];
  for (size_t i = 0; i < hw->rep->n_stages; i++) {
    const an_stage_report *st = &hw->rep->stages[i];
    if (!st->gemm_rate.near) continue;
    rp_hw_printf(hw, "<p class=\"gemm-rate\"><b>" RP_GEMM_RATE_HEAD);
    rp_hw_text(hw, st->label);
    rp_hw_printf(hw, "</b>");
    rp_hw_text(hw, rp_gemm_rate_tail(&st->gemm_rate, tail, sizeof tail));
    rp_hw_printf(hw, "</p>");
  }
}

static void summary(rp_hw *hw) {
  if (hw->rep->n_summary == 0 && hw->rep->n_leads == 0) return;
  rp_hw_printf(hw, "<section id=\"%ssummary\" class=\"summary\"><h%d>What to try first</h%d>",
               hw->idp, 2 + hw->hd, 2 + hw->hd);
  bottleneck(hw);
  char filtered[RP_FILTERED_TOP_BYTES];
  if (rp_filtered_top(hw->rep, filtered, sizeof filtered)) {
    rp_hw_printf(hw, "<p class=\"filtered\">");
    rp_hw_text(hw, filtered);
    rp_hw_printf(hw, "</p>");
  }
  gemm_rate_lines(hw);
  if (hw->rep->n_summary) { /* a lead can stand alone (review 21 defect 10) */
    rp_hw_printf(hw, "<ol>");
    for (size_t i = 0; i < hw->rep->n_summary; i++) summary_item(hw, &hw->rep->summary[i]);
    rp_hw_printf(hw, "</ol>");
  }
  if (hw->rep->n_leads) { /* unnumbered, after the list (as in the Markdown) */
    rp_hw_printf(hw, "<p class=\"leads\">");
    rp_hw_text(hw, rp_leads_intro(hw->rep));
    rp_hw_printf(hw, "</p><ul class=\"leads\">");
    for (size_t i = 0; i < hw->rep->n_leads; i++) {
      const an_summary_item *it = &hw->rep->summary[hw->rep->n_summary + i];
      html_item h = {hw, rp_hw_stage_index(hw, it->stage_id), it};
      rp_hw_printf(hw, "<li class=\"lead\">");
      rp_item_parts(it, hw->rep->run.workload.value, html_part, &h);
      rp_hw_printf(hw, "</li>");
    }
    rp_hw_printf(hw, "</ul>");
  }
  rp_hw_printf(hw, "</section>");
}

/* ------------------------------------------------------------------ notes on the trace */

static void hint_li(rp_hw *hw, const char *level, const char *text) {
  rp_hw_printf(hw, "<li class=\"hint hint-%s\">", level);
  rp_hw_text(hw, text);
  rp_hw_printf(hw, "</li>");
}

/* How to record stacks for this framework: the packs' report.stack_hints (a defaulted
 * framework is a guess, so it gets the generic way). */
static void stack_hint(rp_hw *hw) {
  rp_hw_printf(hw,
               "<li class=\"hint hint-warn\"><b>No Python stacks.</b> No kernel resolved to a "
               "Python location, so locations read <code>unresolved</code>. Record the trace "
               "with <code>with_stack=True</code>");
  const te_string_list *l = NULL;
  if (hw->rules) {
    const te_list_map *m = &te_rules_settings(hw->rules)->report_stack_hints;
    if (!hw->rep->limits.framework_defaulted) l = te_list_map_get(m, hw->rep->run.framework.id);
    if (!l) l = te_list_map_get(m, "other");
  }
  rp_hw_printf(hw, "%s", l && l->n ? ":<ul>" : ".");
  for (size_t i = 0; l && i < l->n; i++) {
    rp_hw_printf(hw, "<li>");
    rp_hw_text(hw, l->items[i]);
    rp_hw_printf(hw, "</li>");
  }
  rp_hw_printf(hw, "%s</li>", l && l->n ? "</ul>" : "");
}

/* What keeps launches from a roofline (docs/roofline.md), as the Markdown Limits say it. */
static void roofline_hints(rp_hw *hw) {
  const an_report *r = hw->rep;
  const an_roofline_device *d = &r->roofline_device;
  char line[1024];
  if (d->gpu && !d->id) {
    snprintf(line, sizeof line,
             "No roofline: the GPU %s (arch %ld, %ld SMs) is not in the device pack: add it "
             "under devices: in a rules pack (rules/75-roofline.yaml, docs/roofline.md).",
             *d->gpu ? d->gpu : "(blank name)", d->arch, d->sms);
    hint_li(hw, "warn", line);
    return;
  }
  const an_roofline_model *m = &r->roofline_model;
  char from[RP_MODEL_TEXT_BYTES], check[RP_MODEL_TEXT_BYTES], attn[RP_ATTENTION_TEXT_BYTES];
  const char *checked = rp_model_check(m, check, sizeof check);
  const char *how = rp_model_ident(&m->from, from, sizeof from);
  const char *attention = rp_attention_check(&m->attention, attn, sizeof attn);
  if (m->id && checked) {
    snprintf(line, sizeof line, "Model dimensions: %s (%s), identified by %s: %s%s.", m->label,
             m->source, how ? how : "?",
             m->used ? "the replayed GEMMs take its shapes; checked: "
                     : "not used for the replayed GEMMs: ",
             checked);
    hint_li(hw, "info", line);
  } else if (checked) {
    snprintf(line, sizeof line, "Model dimensions: none used for the replayed GEMMs: %s.", checked);
    hint_li(hw, "info", line);
  }
  if (attention) {
    snprintf(line, sizeof line, "Attention from the step's sums: %s%s.",
             m->attention_used ? "" : "no roofline: ", attention);
    hint_li(hw, "info", line);
  }
  for (size_t i = 0; d->id && i < r->n_stages; i++) {
    const an_stage_report *st = &r->stages[i];
    char *text = rp_roofline_stage_limit(st);
    if (text) {
      snprintf(line, sizeof line, "Roofline (%s): %s", st->label, text);
      hint_li(hw, "info", line);
    }
    free(text);
  }
}

/* What the stages' time accounts cannot tell (timeline_report.h), as the Markdown Limits
 * word it. */
static void steps_hints(rp_hw *hw) {
  for (size_t i = 0; i < hw->rep->n_stages; i++)
    for (int c = 0; c < RP_CHECKS; c++) {
      char title[160], line[1024];
      char *text = rp_stage_limit(&hw->rep->stages[i], hw->rules, (rp_stage_check)c, false, title,
                                  sizeof title);
      if (!text) continue;
      snprintf(line, sizeof line, "%s: %s", title, text);
      hint_li(hw, "warn", line);
      free(text);
    }
}

static void limit_hints(rp_hw *hw) {
  const an_trace_limits *l = &hw->rep->limits;
  char line[1024];
  if (l->no_python_stacks) stack_hint(hw);
  if (l->framework_defaulted) {
    snprintf(line, sizeof line,
             "Framework not detected: nothing in the inputs names the framework, so the report "
             "names none; only framework-specific rules (fusion patterns, hints) use the packs' "
             "default, %s. Pass --framework to name it.%s",
             hw->rep->run.framework.label ? hw->rep->run.framework.label : "?",
             rp_workload_note(hw->rep->run.workload.value));
    hint_li(hw, "warn", line);
  }
  char ranks_line[400];
  const char *ranks = rp_ranks_limit(l, ranks_line, sizeof ranks_line);
  if (ranks) {
    snprintf(line, sizeof line, "%s: %s", ranks, ranks_line);
    hint_li(hw, "info", line);
  }
  char short_line[RP_SHORT_WINDOW_BYTES];
  if (rp_short_window_limit(l, short_line, sizeof short_line)) {
    snprintf(line, sizeof line, "Short capture window: %s", short_line);
    hint_li(hw, "info", line);
  }
  char wait_line[RP_OUTSIDE_WAIT_BYTES];
  if (rp_outside_wait_limit(l, wait_line, sizeof wait_line)) {
    snprintf(line, sizeof line, "Blocking wait outside the steps: %s", wait_line);
    hint_li(hw, "info", line);
  }
  char sites[256];
  if (rp_partial_sites_limit(l, sites, sizeof sites)) {
    snprintf(line, sizeof line, "Partial locations: %s", sites);
    hint_li(hw, "info", line);
  }
  char filtered[RP_FILTERED_BYTES], filtered_line[RP_FILTERED_BYTES + 64];
  const char *title = rp_filtered_limit(hw->rep, filtered, sizeof filtered);
  if (title) {
    snprintf(filtered_line, sizeof filtered_line, "%s: %s", title, filtered);
    hint_li(hw, "warn", filtered_line);
  }
  roofline_hints(hw);
  steps_hints(hw);
}

static bool has_limits(const an_report *r, const te_rules *rules) {
  const an_trace_limits *l = &r->limits;
  char ranks_line[400];
  return l->no_python_stacks || l->framework_defaulted || l->short_window_stage ||
         l->outside_wait_stage || l->partial_site_rows || l->filtered || l->filtered_ranks ||
         rp_ranks_limit(l, ranks_line, sizeof ranks_line) || rp_roofline_limited(r) ||
         rp_stage_checks_failed(r, rules);
}

static void hints(rp_hw *hw) {
  if (hw->rep->n_hints == 0 && !has_limits(hw->rep, hw->rules)) return;
  rp_hw_printf(hw, "<section id=\"%shints\" class=\"hints\"><h%d>Notes on this trace</h%d><ul>",
               hw->idp, 2 + hw->hd, 2 + hw->hd);
  limit_hints(hw);
  char line[2048];
  for (size_t i = 0; i < hw->rep->n_hints; i++) {
    rp_hint_text(&hw->rep->hints[i], line, sizeof line);
    hint_li(hw, hw->rep->hints[i].level == AN_HINT_WARNING ? "warn" : "info", line);
  }
  rp_hw_printf(hw, "</ul></section>");
}

/* ------------------------------------------------------------------ legend, footer */

/* An entry's text with its marks (`code`, **bold**, *em*: report/legend.h) as HTML; a
 * mark with no closing one is text. */
static void legend(rp_hw *hw) {
  size_t n;
  const rp_legend_entry *e = rp_legend(&n);
  rp_hw_printf(hw, "<section id=\"legend\" class=\"legend-key\"><h2>Legend</h2><dl class=\"key\">");
  for (size_t i = 0; i < n; i++) {
    rp_hw_printf(hw, "<dt>");
    rp_hw_text(hw, e[i].term);
    rp_hw_printf(hw, "</dt><dd>");
    rp_hw_marked(hw, e[i].text);
    rp_hw_printf(hw, "</dd>");
  }
  rp_hw_printf(hw, "</dl></section>");
}

static void footer(rp_hw *hw) {
  const an_provenance *p = &hw->rep->run;
  rp_hw_printf(
      hw,
      "<footer id=\"footer\" class=\"page-foot\"><dl><dt>triage</dt><dd id=\"triage-version\">");
  rp_hw_text(hw, p->version ? p->version : "unknown");
  rp_hw_printf(hw, "</dd><dt>Rule packs</dt><dd><ul class=\"packs\">");
  for (size_t i = 0; i < p->n_packs; i++) {
    rp_hw_printf(hw, "<li><code>");
    rp_hw_text(hw, p->packs[i].file ? p->packs[i].file : p->packs[i].id);
    rp_hw_printf(hw, "</code></li>");
  }
  rp_hw_printf(hw, "</ul></dd><dt>Command</dt><dd><code class=\"cmdline\">");
  rp_hw_text(hw, p->command_line ? p->command_line : "");
  rp_hw_printf(hw, "</code></dd></dl></footer>");
}

/* ------------------------------------------------------------------ the page */

/* One report's sections; a bundle's <article> holds them too (hw->idp, hw->hd). */
static void report_sections(rp_hw *hw) {
  header(hw);
  summary(hw);
  hints(hw);
  for (size_t i = 0; i < hw->rep->n_stages && !hw->failed; i++) rp_html_stage(hw, i);
  rp_html_rank_reports(hw);
}

/* Stage tokens and display names of hw->rep (the per-report state). 0, or -1. */
static int report_begin(rp_hw *hw, const an_report *r) {
  hw->rep = r;
  hw->stage_tok = stage_tokens(r);
  hw->stage_names = hw->stage_tok ? stage_names(hw) : NULL;
  return hw->stage_names ? 0 : -1;
}

static void report_end(rp_hw *hw) {
  stage_names_free(hw->stage_names, hw->rep->n_stages);
  for (size_t i = 0; hw->stage_tok && i < hw->rep->n_stages; i++) free(hw->stage_tok[i]);
  free(hw->stage_tok);
  hw->stage_names = NULL;
  hw->stage_tok = NULL;
}

static int fill(FILE *out, const char *name, void *ctx) {
  rp_hw *hw = ctx;
  hw->out = out;
  if (strcmp(name, "version") == 0)
    rp_hw_text(hw, hw->rep->run.version);
  else if (strcmp(name, "title") == 0) {
    rp_hw_printf(hw, "triage report: ");
    rp_hw_text(hw, hw->rep->run.context.model.value ? hw->rep->run.context.model.value
                                                    : "model not known");
  } else if (strcmp(name, "body") == 0) {
    rp_hw_printf(hw, "<main>");
    report_sections(hw);
    legend(hw);
    rp_hw_printf(hw, "</main>");
    footer(hw);
  } else {
    return -1;
  }
  return hw->failed ? -1 : 0;
}

int rp_html(FILE *out, const an_report *r, const rp_options *o) {
  const te_rules *rules = o ? o->rules : NULL;
  rp_names *names = rp_names_create(rules);
  rp_hw hw = {out, r, rules, names, o && o->full_names, NULL, NULL, "", 0, "", false};
  int rc = names && report_begin(&hw, r) == 0 ? rp_html_page_write(out, fill, &hw) : -1;
  report_end(&hw);
  rp_names_destroy(names);
  return rc;
}

/* ------------------------------------------------------------------ bundle */

typedef struct bundle {
  rp_hw hw;
  const an_report *const *reps;
  const char *const *labels;
  size_t n;
} bundle;

static const char *group_model(const an_report *r) {
  return r->run.context.model.value ? r->run.context.model.value : "model not known";
}

static const char *group_framework(const an_report *r) {
  if (r->run.framework.source == AN_SOURCE_DEFAULT) return "framework not detected";
  return r->run.framework.label ? r->run.framework.label : r->run.framework.id;
}

static bool same_group(const an_report *a, const an_report *b) {
  const char *fa = group_framework(a), *fb = group_framework(b);
  return strcmp(group_model(a), group_model(b)) == 0 && strcmp(fa ? fa : "", fb ? fb : "") == 0;
}

/* Contents grouped by model and framework, groups in first-seen order. */
static void bundle_toc(bundle *b) {
  rp_hw *hw = &b->hw;
  rp_hw_printf(hw, "<nav class=\"toc\" id=\"toc\" aria-label=\"Contents\"><h2>Contents</h2><ol>");
  for (size_t g = 0; g < b->n; g++) {
    bool seen = false;
    for (size_t j = 0; j < g && !seen; j++) seen = same_group(b->reps[j], b->reps[g]);
    if (seen) continue;
    rp_hw_printf(hw, "<li><span class=\"group\">");
    rp_hw_text(hw, group_model(b->reps[g]));
    rp_hw_printf(hw, " · ");
    rp_hw_text(hw, group_framework(b->reps[g]));
    rp_hw_printf(hw, "</span><ol>");
    for (size_t i = g; i < b->n; i++) {
      if (!same_group(b->reps[g], b->reps[i])) continue;
      rp_hw_printf(hw, "<li><a href=\"#r%zu\">", i);
      rp_hw_text(hw, b->labels[i]);
      rp_hw_printf(hw, "</a> <span class=\"meta\">%zu stage%s</span></li>", b->reps[i]->n_stages,
                   b->reps[i]->n_stages == 1 ? "" : "s");
    }
    rp_hw_printf(hw, "</ol></li>");
  }
  rp_hw_printf(hw, "</ol></nav>");
}

static void bundle_body(bundle *b) {
  rp_hw *hw = &b->hw;
  rp_hw_printf(hw,
               "<main><header class=\"page-head\" id=\"top\"><h1>triage bundle: %zu report%s</h1>"
               "</header>",
               b->n, b->n == 1 ? "" : "s");
  bundle_toc(b);
  for (size_t i = 0; i < b->n && !hw->failed; i++) {
    char idp[32];
    snprintf(idp, sizeof idp, "r%zu-", i);
    rp_hw_printf(hw, "<article class=\"report\" id=\"r%zu\">", i);
    if (report_begin(hw, b->reps[i]) != 0) hw->failed = true;
    hw->idp = idp;
    hw->hd = 1;
    if (!hw->failed) report_sections(hw);
    report_end(hw);
    hw->idp = "";
    hw->hd = 0;
    rp_hw_printf(hw, "</article>");
  }
  hw->rep = b->reps[0]; /* the footer names the first report's version, packs and command */
  legend(hw);
  rp_hw_printf(hw, "</main>");
  footer(hw);
}

static int fill_bundle(FILE *out, const char *name, void *ctx) {
  bundle *b = ctx;
  b->hw.out = out;
  if (strcmp(name, "version") == 0)
    rp_hw_text(&b->hw, b->reps[0]->run.version);
  else if (strcmp(name, "title") == 0)
    rp_hw_printf(&b->hw, "triage bundle: %zu reports", b->n);
  else if (strcmp(name, "body") == 0)
    bundle_body(b);
  else
    return -1;
  return b->hw.failed ? -1 : 0;
}

int rp_html_bundle(FILE *out, const an_report *const *reports, const char *const *labels, size_t n,
                   const rp_options *o) {
  if (n == 0) return -1;
  const te_rules *rules = o ? o->rules : NULL;
  rp_names *names = rp_names_create(rules);
  bundle b = {{out, reports[0], rules, names, o && o->full_names, NULL, NULL, "", 0, "", false},
              reports,
              labels,
              n};
  int rc = names ? rp_html_page_write(out, fill_bundle, &b) : -1;
  rp_names_destroy(names);
  return rc;
}
