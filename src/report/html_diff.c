/*
 * report/html_diff.c - the HTML page of `triage diff` (docs/html.md, "Diff"): per stage
 * the GPU time before and after with its change, two stacked bars by category on one
 * scale, the kernel changes (status new, gone, regress, improve, noise; filterable by
 * category and status) and the fusion patterns that appeared or went away. Everything
 * comes from the an_diff_report; trace text goes out escaped.
 */
#include <stdlib.h>
#include <string.h>

#include "report/html_page.h"
#include "report/html_writer.h"
#include "report/report.h"
#include "report/text.h"

#define BAR_HEIGHT 20

/* The status words are the style sheet's classes (status-new, ...). Runs that do not
 * compare say which way a time moved, never regress or improve (review 13). */
static const char *status_word(an_diff_reading how, an_diff_change c) {
  bool direction = how == AN_DIFF_READ_DIRECTION;
  switch (c) {
    case AN_DIFF_SLOWER:
      return direction ? "longer" : "regress";
    case AN_DIFF_FASTER:
      return direction ? "shorter" : "improve";
    case AN_DIFF_NEW:
      return "new";
    case AN_DIFF_REMOVED:
      return "gone";
    case AN_DIFF_WAIT:
      return "wait";
    case AN_DIFF_SAME:
      break;
  }
  return "noise";
}

static rp_hw_bar_part before_part(const void *items, size_t i) {
  const an_diff_row *c = &((const an_diff_row *)items)[i];
  return (rp_hw_bar_part){c->name, c->before_us, 0};
}

static rp_hw_bar_part after_part(const void *items, size_t i) {
  const an_diff_row *c = &((const an_diff_row *)items)[i];
  return (rp_hw_bar_part){c->name, c->after_us, 0};
}

/* One side's categories as a stacked bar; scale: the larger side's total. */
static void side_bar(rp_hw *hw, const an_diff_stage *s, bool after, double scale) {
  rp_hw_bar bar = {after ? "GPU time by category, after" : "GPU time by category, before",
                   false,
                   false,
                   scale,
                   BAR_HEIGHT,
                   s->n_categories,
                   after ? after_part : before_part,
                   s->categories};
  rp_hw_printf(hw, "<span class=\"side\">%s</span>", after ? "after" : "before");
  rp_hw_stack_bar(hw, &bar);
}

/* A delta's class: up (bad) or down (good), none where the runs do not compare. */
static const char *delta_dir(an_diff_reading how, double delta_us) {
  if (how == AN_DIFF_READ_DIRECTION) return "";
  return delta_us > 0 ? " up" : delta_us < 0 ? " down" : "";
}

static void delta_td(rp_hw *hw, const an_diff_row *r, an_diff_reading how) {
  const char *dir = delta_dir(how, r->delta_us);
  rp_hw_printf(hw, "<td data-value=\"%.6g\" class=\"delta%s\">%s", r->delta_us, dir,
               r->delta_us > 0 ? "+" : "");
  rp_hw_ms(hw, r->delta_us);
  rp_hw_printf(hw, "</td>");
}

/* Before/after cells: empty for the side a kernel is missing from (sorts last). */
static void side_tds(rp_hw *hw, const an_diff_row *r) {
  if (r->change == AN_DIFF_NEW)
    rp_hw_printf(hw, "<td></td>");
  else
    rp_hw_td_ms(hw, r->before_us);
  if (r->change == AN_DIFF_REMOVED)
    rp_hw_printf(hw, "<td></td>");
  else
    rp_hw_td_ms(hw, r->after_us);
}

static void kernel_rows(rp_hw *hw, const an_diff_stage *s, const char *tok, an_diff_reading how) {
  const char **full = malloc((s->n_kernels ? s->n_kernels : 1) * sizeof *full);
  char **shown = NULL;
  if (full) {
    for (size_t i = 0; i < s->n_kernels; i++) full[i] = s->kernels[i].name;
    shown = rp_names_display_table(hw->names, full, s->n_kernels);
  }
  if (!shown) {
    free(full);
    hw->failed = true;
    return;
  }
  for (size_t i = 0; i < s->n_kernels; i++) {
    const an_diff_row *r = &s->kernels[i];
    const char *st = status_word(how, r->change), *cat = r->category ? r->category : "other";
    rp_hw_printf(hw, "<tr id=\"d-%s-%zu\" data-cat=\"", tok, i);
    rp_hw_text(hw, cat);
    rp_hw_printf(hw, "\" data-status=\"%s\"><td>", st);
    rp_hw_name_span(hw, r->name, hw->full_names ? r->name : shown[i]);
    rp_hw_printf(hw, "</td><td>");
    rp_hw_cat_span(hw, cat);
    rp_hw_printf(hw, "</td>");
    side_tds(hw, r);
    delta_td(hw, r, how);
    rp_hw_printf(hw, "<td><span class=\"status status-%s\">%s</span>", st, st);
    char part[RP_DIFF_BASIS_BYTES]; /* a change under the floor names the part that moved */
    if (*rp_diff_basis_part(r, part, sizeof part)) {
      rp_hw_printf(hw, " <span class=\"muted\">");
      rp_hw_text(hw, part);
      rp_hw_printf(hw, "</span>");
    }
    rp_hw_printf(hw, "</td></tr>");
  }
  rp_names_table_free(shown, s->n_kernels);
  free(full);
}

static void kernel_table(rp_hw *hw, const an_diff_stage *s, const char *tok, an_diff_reading how) {
  rp_hw_printf(
      hw,
      "<h3 id=\"kernels-%s\">Kernel changes</h3><div class=\"table-wrap\">"
      "<table class=\"data sortable diff kernels\" id=\"dk-%s\" data-facets=\"cat status\">"
      "<thead><tr><th>Kernel</th><th>Category</th><th class=\"num\">Before (ms)</th>"
      "<th class=\"num\">After (ms)</th><th class=\"num\" aria-sort=\"descending\">"
      "Δ (ms)</th><th>Status</th></tr></thead><tbody>",
      tok, tok);
  kernel_rows(hw, s, tok, how);
  if (s->n_kernels == 0)
    rp_hw_printf(hw, "<tr class=\"empty\"><td colspan=\"6\">no kernels</td></tr>");
  rp_hw_printf(hw, "</tbody></table></div>");
}

static void fusion_table(rp_hw *hw, const an_diff_stage *s, const char *tok, an_diff_reading how) {
  if (s->n_fusions == 0) return;
  rp_hw_printf(hw,
               "<h3 id=\"fusion-%s\">Fusion patterns that appeared or went away</h3>"
               "<div class=\"table-wrap\"><table class=\"data sortable diff\" id=\"df-%s\">"
               "<thead><tr><th>Pattern</th><th class=\"num\">Before (ms)</th><th class=\"num\">"
               "After (ms)</th><th class=\"num\">Δ (ms)</th><th>Status</th></tr></thead><tbody>",
               tok, tok);
  for (size_t i = 0; i < s->n_fusions; i++) {
    const an_diff_row *r = &s->fusions[i];
    rp_hw_printf(hw, "<tr id=\"df-%s-%zu\"><td>", tok, i);
    rp_hw_text(hw, r->name);
    rp_hw_printf(hw, "</td>");
    side_tds(hw, r);
    delta_td(hw, r, how);
    rp_hw_printf(hw, "<td><span class=\"status status-%s\">%s</span></td></tr>",
                 status_word(how, r->change), status_word(how, r->change));
  }
  rp_hw_printf(hw, "</tbody></table></div>");
}

/* One side's kernels of a renamed group: the largest (full name on hover) and how many more. */
static void renamed_names_td(rp_hw *hw, const char *const *names, size_t n) {
  char **shown = rp_names_display_table(hw->names, names, 1);
  rp_hw_printf(hw, "<td>");
  rp_hw_name_span(hw, names[0], hw->full_names || !shown ? names[0] : shown[0]);
  if (n > 1) rp_hw_printf(hw, " and %zu more", n - 1);
  rp_hw_printf(hw, "</td>");
  if (shown) rp_names_table_free(shown, 1);
}

/* Kernels only one run has, paired by category and launching CPU op (analysis/diff.c). */
static void renamed_table(rp_hw *hw, const an_diff_stage *s, const char *tok, an_diff_reading how) {
  if (s->n_renamed == 0) return;
  rp_hw_printf(hw,
               "<h3 id=\"renamed-%s\">Kernels renamed (paired by category and CPU op)</h3>"
               "<div class=\"table-wrap\"><table class=\"data sortable diff\" id=\"dr-%s\">"
               "<thead><tr><th>Category</th><th>CPU op</th><th>Before kernels</th>"
               "<th>After kernels</th><th class=\"num\">Before (ms)</th><th class=\"num\">"
               "After (ms)</th><th class=\"num\">Δ (ms)</th><th>Status</th></tr></thead><tbody>",
               tok, tok);
  for (size_t i = 0; i < s->n_renamed; i++) {
    const an_diff_renamed *g = &s->renamed[i];
    const char *st = status_word(how, g->row.change);
    rp_hw_printf(hw, "<tr id=\"dr-%s-%zu\"><td>", tok, i);
    rp_hw_cat_span(hw, g->category);
    rp_hw_printf(hw, "</td><td>");
    rp_hw_text(hw, g->cpu_op ? g->cpu_op : "not linked");
    rp_hw_printf(hw, "</td>");
    renamed_names_td(hw, g->before_names, g->n_before);
    renamed_names_td(hw, g->after_names, g->n_after);
    side_tds(hw, &g->row);
    delta_td(hw, &g->row, how);
    rp_hw_printf(hw, "<td><span class=\"status status-%s\">%s</span></td></tr>", st, st);
  }
  rp_hw_printf(hw, "</tbody></table></div>");
}

/* Overlap rows (by kernel) that appeared or went away, names shortened as in the kernel
 * table, full name on hover. */
static void overlap_table(rp_hw *hw, const an_diff_stage *s, const char *tok, an_diff_reading how) {
  if (s->n_overlaps == 0) return;
  const char **full = malloc(s->n_overlaps * sizeof *full);
  char **shown = NULL;
  for (size_t i = 0; full && i < s->n_overlaps; i++) full[i] = s->overlaps[i].name;
  if (full) shown = rp_names_display_table(hw->names, full, s->n_overlaps);
  if (!shown) {
    free(full);
    hw->failed = true;
    return;
  }
  rp_hw_printf(hw,
               "<h3 id=\"overlap-%s\">Overlap rows that appeared or went away</h3>"
               "<div class=\"table-wrap\"><table class=\"data sortable diff\" id=\"do-%s\">"
               "<thead><tr><th>Kernel</th><th>Category</th><th class=\"num\">Before (ms)</th>"
               "<th class=\"num\">After (ms)</th><th class=\"num\">Δ (ms)</th><th>Status</th>"
               "</tr></thead><tbody>",
               tok, tok);
  for (size_t i = 0; i < s->n_overlaps; i++) {
    const an_diff_row *r = &s->overlaps[i];
    const char *st = status_word(how, r->change);
    rp_hw_printf(hw, "<tr id=\"do-%s-%zu\"><td>", tok, i);
    rp_hw_name_span(hw, r->name, hw->full_names ? r->name : shown[i]);
    rp_hw_printf(hw, "</td><td>");
    rp_hw_cat_span(hw, r->category ? r->category : "other");
    rp_hw_printf(hw, "</td>");
    side_tds(hw, r);
    delta_td(hw, r, how);
    char buf[RP_DIFF_WORD_BYTES];
    rp_hw_printf(hw, "<td><span class=\"status status-%s\">%s</span></td></tr>", st,
                 rp_diff_overlap_word(r, st, buf, sizeof buf));
  }
  rp_hw_printf(hw, "</tbody></table></div>");
  rp_names_table_free(shown, s->n_overlaps);
  free(full);
}

static bool same_floor(const an_diff_stage *x, const an_diff_stage *y) {
  return x->noise_pct == y->noise_pct && x->noise_us == y->noise_us &&
         x->noise_source == y->noise_source;
}

/* The noise floor in force (review 13: the note gave the packs' 3 % while the stage's
 * floor, 59.8 % from its steps, was only in the stage's note): the stages' one floor, or
 * each stage's. */
static void floor_note(rp_hw *hw, const an_diff_report *d) {
  bool one = true;
  for (size_t i = 1; i < d->n_stages; i++) one = one && same_floor(&d->stages[0], &d->stages[i]);
  if (!d->n_stages) {
    rp_hw_printf(hw,
                 "<p class=\"note\">Noise floor: a change smaller than %g %% of the before time "
                 "or %g us is within noise, never a regression.</p>",
                 d->noise_floor_pct, d->noise_floor_us);
    return;
  }
  if (one) {
    const an_diff_stage *s = &d->stages[0];
    rp_hw_printf(hw,
                 "<p class=\"note\">Noise floor: a change smaller than %.1f %% of the before "
                 "time or %g us (%s",
                 s->noise_pct, s->noise_us, rp_diff_noise_source(s->noise_source));
    if (s->noise_source != AN_NOISE_PACKS)
      rp_hw_printf(hw, ", wider than the packs' %g %%", d->noise_floor_pct);
    rp_hw_printf(hw, ") is within noise, never a regression.</p>");
    return;
  }
  rp_hw_printf(hw,
               "<p class=\"note\">Noise floor, per stage (the packs' %g %% or %g us, or twice "
               "the spread of the stage's data when wider): a change smaller than it is within "
               "noise, never a regression: ",
               d->noise_floor_pct, d->noise_floor_us);
  for (size_t i = 0; i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    rp_hw_printf(hw, "%s", i ? "; " : "");
    rp_hw_text(hw, s->label ? s->label : s->stage);
    rp_hw_printf(hw, " %.1f %% or %g us (%s)", s->noise_pct, s->noise_us,
                 rp_diff_noise_source(s->noise_source));
  }
  rp_hw_printf(hw, ".</p>");
}

/* The two inputs (kind, trace files, run facts), a sentence naming the facts that differ
 * (a GPU or model change explains every row below it) and the noise floor. */
static void inputs_block(rp_hw *hw, const an_diff_report *d) {
  rp_hw_printf(hw,
               "<table class=\"inputs\" id=\"inputs\"><thead><tr><th>Side</th><th>Input</th>"
               "<th>Kind</th><th>Trace files</th><th>Framework</th><th>Model</th><th>GPU</th>"
               "</tr></thead><tbody>");
  for (int i = 0; i < 2; i++) {
    const an_diff_input *in = &d->inputs[i];
    const char *facts[3] = {in->framework, in->model, in->gpu};
    rp_hw_printf(hw, "<tr><td>%s</td><td><code>", i ? "After" : "Before");
    rp_hw_text(hw, in->path ? in->path : (i ? d->after : d->before));
    rp_hw_printf(hw, "</code></td><td>");
    rp_hw_text(hw, in->kind ? in->kind : "trace");
    rp_hw_printf(hw, "</td><td>%zu</td>", in->n_files);
    for (int k = 0; k < 3; k++) {
      rp_hw_printf(hw, "<td>");
      rp_hw_text(hw, facts[k] ? facts[k] : "unknown");
      if (k == 0 && in->framework_defaulted) rp_hw_printf(hw, " (default: not detected)");
      rp_hw_printf(hw, "</td>");
    }
    rp_hw_printf(hw, "</tr>");
  }
  rp_hw_printf(hw, "</tbody></table>");
  char who[RP_IDENTITY_BYTES], read[RP_RANKS_READ_BYTES];
  if (rp_diff_identity(d, who, sizeof who)) {
    rp_hw_printf(hw, "<p class=\"facts-differ\">");
    rp_hw_text(hw, who);
    rp_hw_printf(hw, "</p>");
  }
  if (rp_diff_ranks_read(d, read, sizeof read)) {
    rp_hw_printf(hw, "<p class=\"facts-differ\">");
    rp_hw_text(hw, read);
    rp_hw_printf(hw, "</p>");
  }
  rp_fact_change ch[RP_FACT_CHANGES];
  size_t n = rp_diff_fact_changes(d, ch);
  for (size_t k = 0; k < n; k++) {
    rp_hw_printf(hw, k ? "; %s (" : "<p class=\"facts-differ\">The runs differ in: %s (",
                 ch[k].what);
    rp_hw_text(hw, ch[k].before);
    rp_hw_printf(hw, " → ");
    rp_hw_text(hw, ch[k].after);
    rp_hw_printf(hw, ")");
  }
  if (n) rp_hw_printf(hw, ".</p>");
  if (d->incomparable)
    rp_hw_printf(hw,
                 "<p class=\"facts-differ\">Not comparable: %s; a kernel's time on "
                 "other hardware or with the work split over another number of ranks is not a "
                 "regression, and no row counts as one: a time beyond the noise floor is "
                 "longer or shorter. %s</p>",
                 rp_diff_incomparable_why(d->incomparable),
                 rp_diff_incomparable_todo(d->incomparable));
  floor_note(hw, d);
}

static void rank_side_td(rp_hw *hw, bool present, double us) {
  if (present)
    rp_hw_td_ms(hw, us);
  else
    rp_hw_printf(hw, "<td></td>");
}

/* The stage's ranks in both runs (busy, collective wait, straggler), when both have several. */
static void ranks_table(rp_hw *hw, const an_diff_stage *s, const char *tok) {
  if (!s->n_ranks) return;
  rp_hw_printf(hw,
               "<h3>Ranks</h3><div class=\"tablewrap\"><table class=\"data ranks\" "
               "id=\"rk-%s\"><thead><tr><th>Rank</th><th>Busy before (ms)</th>"
               "<th>Busy after (ms)</th><th>Busy delta (ms)</th><th>Wait before (ms)</th>"
               "<th>Wait after (ms)</th><th>Straggler</th></tr></thead><tbody>",
               tok);
  for (size_t i = 0; i < s->n_ranks; i++) {
    const an_diff_rank_row *r = &s->ranks[i];
    const char *who = rp_diff_straggler_word(r) ? rp_diff_straggler_word(r) : "";
    rp_hw_printf(hw, "<tr%s><td>%ld</td>", *who ? " class=\"straggler\"" : "", r->rank);
    rank_side_td(hw, r->in_before, r->before_busy_us);
    rank_side_td(hw, r->in_after, r->after_busy_us);
    rp_hw_td_ms(hw, r->delta_busy_us);
    rp_hw_td_ms(hw, r->before_wait_us);
    rp_hw_td_ms(hw, r->after_wait_us);
    rp_hw_printf(hw, "<td>%s</td></tr>", who);
  }
  char cmp[RP_RANKS_COMPARED_BYTES];
  rp_hw_printf(hw, "</tbody></table></div><p class=\"note\">");
  rp_hw_text(hw, rp_diff_ranks_compared(s, cmp, sizeof cmp));
  rp_hw_printf(hw, "</p>");
}

static void stage_section(rp_hw *hw, const an_diff_stage *s, const char *tok, an_diff_reading how) {
  const an_diff_row *t = &s->total;
  rp_hw_printf(hw, "<section class=\"stage diff\" id=\"stage-%s\" data-stage=\"", tok);
  rp_hw_text(hw, s->stage);
  rp_hw_printf(hw, "\"><h2>Stage: ");
  rp_hw_text(hw, s->stage);
  rp_hw_printf(hw, " — ");
  rp_hw_ms(hw, t->before_us);
  rp_hw_printf(hw, " ms → ");
  rp_hw_ms(hw, t->after_us);
  rp_hw_printf(hw, " ms <span class=\"delta%s\">%+.1f%%</span></h2>", delta_dir(how, t->delta_us),
               t->delta_pct);
  double scale = t->before_us > t->after_us ? t->before_us : t->after_us;
  rp_hw_printf(hw, "<figure class=\"catbar diffbars\" id=\"bar-%s\">", tok);
  side_bar(hw, s, false, scale);
  side_bar(hw, s, true, scale);
  rp_hw_printf(hw, "</figure>");
  if (s->unresolved) /* the "noise" status of its rows is not resolved, not within noise */
    rp_hw_printf(hw,
                 "<p class=\"facts-differ\">Not resolved: this stage's noise floor (%.1f %%) "
                 "is too wide to tell a change under it from noise; its rows marked noise are "
                 "neither regressions nor ruled out.</p>",
                 s->noise_pct);
  kernel_table(hw, s, tok, how);
  renamed_table(hw, s, tok, how);
  fusion_table(hw, s, tok, how);
  overlap_table(hw, s, tok, how);
  ranks_table(hw, s, tok);
  rp_hw_printf(hw, "</section>");
}

typedef struct diff_page {
  rp_hw hw;
  const an_diff_report *d;
  const char *version, *command_line;
} diff_page;

static void diff_body(diff_page *p) {
  rp_hw *hw = &p->hw;
  rp_hw_printf(hw,
               "<main><header class=\"report-head\" id=\"top\"><h1>triage diff</h1>"
               "<p class=\"subtitle\">Before: <code>");
  rp_hw_text(hw, p->d->before);
  rp_hw_printf(hw, "</code> → After: <code>");
  rp_hw_text(hw, p->d->after);
  rp_hw_printf(hw, "</code></p>");
  inputs_block(hw, p->d);
  rp_hw_printf(hw,
               "</header><section id=\"summary\" class=\"summary\">"
               "<h2>Changes by stage</h2><ol>");
  for (size_t i = 0; i < p->d->n_stages; i++) {
    rp_hw_printf(hw, "<li><a class=\"ev\" href=\"#stage-%s\">", hw->stage_tok[i]);
    rp_hw_text(hw, p->d->stages[i].stage);
    rp_hw_printf(hw, ": %+.1f%%</a></li>", p->d->stages[i].total.delta_pct);
  }
  rp_hw_printf(hw, "</ol></section>");
  for (size_t i = 0; i < p->d->n_stages && !hw->failed; i++)
    stage_section(hw, &p->d->stages[i], hw->stage_tok[i], p->d->reading);
  rp_hw_printf(hw,
               "</main><footer id=\"footer\" class=\"page-foot\"><dl><dt>triage</dt>"
               "<dd id=\"triage-version\">");
  rp_hw_text(hw, p->version ? p->version : "unknown");
  rp_hw_printf(hw, "</dd><dt>Command</dt><dd><code class=\"cmdline\">");
  rp_hw_text(hw, p->command_line);
  rp_hw_printf(hw, "</code></dd></dl></footer>");
}

static int fill_diff(FILE *out, const char *name, void *ctx) {
  diff_page *p = ctx;
  p->hw.out = out;
  if (strcmp(name, "version") == 0)
    rp_hw_text(&p->hw, p->version);
  else if (strcmp(name, "title") == 0)
    rp_hw_printf(&p->hw, "triage diff");
  else if (strcmp(name, "body") == 0)
    diff_body(p);
  else
    return -1;
  return p->hw.failed ? -1 : 0;
}

/* Stage ids as tokens, "-INDEX" on a collision (as the report's). */
static char **diff_tokens(const an_diff_report *d) {
  char **tok = calloc(d->n_stages ? d->n_stages : 1, sizeof *tok);
  for (size_t i = 0; tok && i < d->n_stages; i++) {
    size_t n = strlen(d->stages[i].stage ? d->stages[i].stage : "");
    tok[i] = malloc(n + 24);
    if (!tok[i]) break;
    size_t k = 0;
    for (const char *c = d->stages[i].stage ? d->stages[i].stage : ""; *c; c++)
      tok[i][k++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || *c == '_' || *c == '-')
                        ? *c
                        : '_';
    if (k == 0) tok[i][k++] = '_';
    tok[i][k] = '\0';
    for (size_t j = 0; j < i; j++)
      if (strcmp(tok[j], tok[i]) == 0) sprintf(tok[i] + k, "-%zu", i);
  }
  return tok;
}

int rp_html_diff(FILE *out, const an_diff_report *d, const rp_options *o, const char *version,
                 const char *command_line) {
  const te_rules *rules = o ? o->rules : NULL;
  rp_names *names = rp_names_create(rules);
  char **tok = diff_tokens(d);
  bool ok = names && tok;
  for (size_t i = 0; ok && i < d->n_stages; i++) ok = tok[i] != NULL;
  diff_page p = {{out, NULL, rules, names, o && o->full_names, tok, NULL, "", 0, "", false},
                 d,
                 version,
                 command_line};
  int rc = ok ? rp_html_page_write(out, fill_diff, &p) : -1;
  for (size_t i = 0; tok && i < d->n_stages; i++) free(tok[i]);
  free(tok);
  rp_names_destroy(names);
  return rc;
}
