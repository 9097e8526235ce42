/*
 * report/html_tables.c - one stage of the HTML report: its totals, the stacked bar of GPU
 * time by category and the kernel, overlap and fusion tables, in the markup of
 * docs/html.md ("Markup contract"). Everything comes from the model; the script sorts
 * and filters the server-rendered rows.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "report/html_internal.h"
#include "report/text.h"
#include "report/timeline_report.h"

#define BAR_HEIGHT 24

static rp_hw_bar_part category_part(const void *items, size_t i) {
  const an_category_time *c = &((const an_category_time *)items)[i];
  return (rp_hw_bar_part){c->category, c->total_us, c->share_pct};
}

static void stack_bar(rp_hw *hw, const an_stage_report *st) {
  double total = 0;
  for (size_t i = 0; i < st->n_categories; i++) total += st->categories[i].total_us;
  rp_hw_bar bar = {"GPU time by category", true,          true,          total, BAR_HEIGHT,
                   st->n_categories,       category_part, st->categories};
  rp_hw_stack_bar(hw, &bar);
}

static void category_bar(rp_hw *hw, const an_stage_report *st, const char *tok) {
  rp_hw_printf(hw, "<figure class=\"catbar\" id=\"%sbar-%s\" data-table=\"%skt-%s\">", hw->idp, tok,
               hw->idp, tok);
  stack_bar(hw, st);
  rp_hw_printf(hw, "<figcaption><ul class=\"legend\">");
  for (size_t i = 0; i < st->n_categories; i++) {
    const an_category_time *c = &st->categories[i];
    rp_hw_printf(hw, "<li class=\"cat-");
    rp_hw_token(hw, c->category);
    rp_hw_printf(hw, "\" data-cat=\"");
    rp_hw_text(hw, c->category);
    rp_hw_printf(hw, "\"><span class=\"sw\"></span>");
    rp_hw_text(hw, c->category);
    rp_hw_printf(hw, " <b>%.1f%%</b> <span class=\"t\">", c->share_pct);
    rp_hw_ms(hw, c->total_us);
    rp_hw_printf(hw, " ms</span></li>");
  }
  rp_hw_printf(hw, "</ul></figcaption></figure>");
}

/* minor_note: what the table's minor rows (hidden until "show N more rows") are under,
 * NULL for none. */
static void table_open(rp_hw *hw, const char *cls, const char *id_prefix, const char *tok,
                       const char *heads, const char *minor_note) {
  rp_hw_printf(hw, "<div class=\"table-wrap\"><table class=\"data sortable %s\" id=\"%s%s%s\"", cls,
               hw->idp, id_prefix, tok);
  if (minor_note) {
    rp_hw_printf(hw, " data-minor-note=\"");
    rp_hw_text(hw, minor_note);
    rp_hw_printf(hw, "\"");
  }
  rp_hw_printf(hw, "><thead><tr>%s</tr></thead><tbody>", heads);
}

static void table_close(rp_hw *hw, size_t rows, int columns, const char *empty) {
  if (rows == 0)
    rp_hw_printf(hw, "<tr class=\"empty\"><td colspan=\"%d\">%s</td></tr>", columns, empty);
  rp_hw_printf(hw, "</tbody></table></div>");
}

/* ------------------------------------------------------------------ kernels */

static const char KERNEL_HEADS[] =
    "<th>Kernel</th><th>Category</th>"
    "<th class=\"num\" aria-sort=\"descending\" title=\"sum of the kernel's durations\">GPU time "
    "(ms)</th>"
    "<th class=\"num\" title=\"its time inside the counted steps over their number (its GPU time "
    "without steps): what a summary item quotes for it\">Per step (ms)</th>"
    "<th class=\"num\" title=\"of the stage's kernel time\">Share (%)</th>"
    "<th class=\"num\">Launches</th><th class=\"num\">Max (ms)</th>"
    "<th class=\"num\" title=\"roofline time of the launches with shapes over their GPU time; "
    "mem / comp: the limiter\">% of bound</th>"
    "<th>Python location (site share)</th><th>CPU op</th>";

static void kernel_sites(rp_hw *hw, const an_kernel_row *k) {
  rp_hw_printf(hw, "<td class=\"loc\">");
  if (!k->entry)
    rp_hw_printf(hw, "unresolved");
  else if (k->n_shown_sites == 0)
    rp_hw_text(hw, k->entry->best_location);
  for (size_t i = 0; i < k->n_shown_sites; i++) {
    const an_site *s = k->shown_sites[i];
    rp_hw_printf(hw, "%s%s", i ? "<br>" : "", rp_location_lead(s->kind));
    rp_hw_text(hw, rp_site_location(k, s));
    if (k->site_share_shown) rp_hw_printf(hw, " (site share %.1f%%)", s->share_pct_within_kernel);
  }
  char cov[96];
  if (rp_site_coverage(k, cov, sizeof cov)) rp_hw_text(hw, cov);
  rp_hw_printf(hw, "</td><td>");
  size_t ops = 0;
  for (size_t i = 0; i < k->n_shown_sites; i++) {
    if (!k->shown_sites[i]->top_cpu_op) continue;
    rp_hw_printf(hw, "%s<code>", ops++ ? "<br>" : "");
    rp_hw_text(hw, k->shown_sites[i]->top_cpu_op);
    rp_hw_printf(hw, "</code>");
  }
  rp_hw_printf(hw, "%s</td>", ops ? "" : "-");
}

/* "57% mem", its rates and basis in the title; empty without a roofline (sorts last; the
 * Legend and the notes say why: no per-row text on pages of thousands of rows). */
static void kernel_roofline(rp_hw *hw, const an_roofline *f, size_t launches) {
  if (!f) {
    rp_hw_printf(hw, "<td></td>");
    return;
  }
  char cell[48], detail[512];
  rp_roofline_cell(f, cell, sizeof cell);
  rp_roofline_detail(f, launches, detail, sizeof detail);
  rp_hw_printf(hw, "<td data-value=\"%.6g\" title=\"", f->achieved_pct);
  rp_hw_text(hw, detail);
  rp_hw_printf(hw, "\">");
  rp_hw_text(hw, cell);
  rp_hw_printf(hw, "</td>");
}

static void kernel_row(rp_hw *hw, const char *tok, size_t i, const an_stage_report *st,
                       const an_kernel_row *k, const char *shown_name) {
  const an_roofline *roofline = an_row_roofline(st, k);
  rp_hw_printf(hw, "<tr id=\"%sk-%s-%zu\"%s data-cat=\"", hw->idp, tok, i,
               k->shown ? "" : " class=\"minor\"");
  rp_hw_text(hw, k->category);
  rp_hw_printf(hw, "\"><td>");
  rp_hw_name_span(hw, k->raw_name ? k->raw_name : k->name, shown_name);
  rp_hw_printf(hw, "</td><td>");
  rp_hw_cat_span(hw, k->category);
  rp_hw_printf(hw, "</td>");
  rp_hw_td_ms(hw, k->total_us);
  rp_hw_td_ms(hw, rp_kernel_per_step_us(st, k));
  rp_hw_td_pct(hw, k->share_pct);
  rp_hw_td_count(hw, k->launches);
  rp_hw_td_ms(hw, k->max_us);
  kernel_roofline(hw, roofline, k->launches);
  kernel_sites(hw, k);
  rp_hw_printf(hw, "</tr>");
}

static void kernel_table(rp_hw *hw, size_t si, const char *tok) {
  const an_stage_report *st = &hw->rep->stages[si];
  const rp_hw_names *nm = &hw->stage_names[si]; /* kernel rows come first, in row order */
  char note[64];
  snprintf(note, sizeof note, "under %.1f%% share", hw->rep->run.kernel_min_share_pct);
  table_open(hw, "kernels", "kt-", tok, KERNEL_HEADS, note);
  for (size_t i = 0; i < st->n_kernels; i++)
    kernel_row(hw, tok, i, st, &st->kernels[i], nm->shown ? nm->shown[i] : st->kernels[i].name);
  table_close(hw, st->n_kernels, 10, "no kernels in this stage");
}

/* ------------------------------------------------------------------ overlap */

/* The Markdown table's columns under the same names and units (reviews 3 and 5: one table
 * in every format), with the HTML's Category and Launches beside them; %s: "/step" when
 * the stage has steps. */
static const char OVERLAP_HEADS_FMT[] =
    "<th class=\"num\">#</th><th class=\"num\">Priority</th><th>Verdict</th><th>Kernel</th>"
    "<th>Category</th><th>Python scope</th><th class=\"num\">Launches</th>"
    "<th class=\"num\" aria-sort=\"descending\">GPU time (ms)</th>"
    "<th class=\"num\" title=\"steady time with no compute on another stream (median instance x "
    "count); hover a cell for the wait above it\">Exposed (ms)</th>"
    "<th class=\"num\" title=\"time under compute on another stream\">Hidden (ms)</th>"
    "<th class=\"num\" title=\"what the action could win per step, from the row's share inside "
    "the counted steps (over the stage without step markers)\">Recoverable (ms%s)</th>"
    "<th class=\"num\">Share (%%)</th><th>Dep risk</th>"
    "<th title=\"dependency class from dataflow and stream evidence; hover a cell for the "
    "evidence\">Dependency</th><th>Recommendation</th>";

static void overlap_row(rp_hw *hw, size_t si, const char *tok, size_t i, const an_overlap_row *r) {
  rp_hw_printf(hw, "<tr id=\"%so-%s-%zu\"%s data-cat=\"", hw->idp, tok, i,
               r->below_floor ? " class=\"minor\"" : "");
  rp_hw_text(hw, rp_overlap_category(r));
  rp_hw_printf(hw,
               "\"><td data-value=\"%zu\">O%zu</td><td data-value=\"%d\">%s</td><td>%s</td><td>", i,
               i + 1, (int)r->priority, rp_priority(r->priority), rp_verdict(r->verdict));
  rp_hw_name_span(hw, r->kernel, rp_hw_shown(hw, si, r->kernel));
  if (rp_launch_context(r)) { /* one of the rows a collective's launch contexts split */
    rp_hw_printf(hw, " &mdash; ");
    rp_hw_text(hw, rp_launch_context(r));
  }
  rp_hw_printf(hw, "</td><td>");
  rp_hw_cat_span(hw, rp_overlap_category(r));
  rp_hw_printf(hw, "</td><td class=\"loc\">%s", rp_location_lead(r->scope_kind));
  rp_hw_text(hw, rp_scope(r));
  rp_hw_printf(hw, "</td>");
  rp_hw_td_count(hw, r->count);
  rp_hw_td_ms(hw, r->total_us);
  rp_hw_printf(hw, "<td class=\"num\" data-value=\"%.6g\" title=\"+ ", r->exposed_ms * 1000.0);
  rp_hw_ms(hw, r->exposed_wait_ms * 1000.0);
  rp_hw_printf(hw, " ms wait\">");
  rp_hw_ms(hw, r->exposed_ms * 1000.0);
  rp_hw_printf(hw, "</td>");
  rp_hw_td_ms(hw, r->covered_us);
  rp_hw_td_ms(hw, r->recoverable_ms * 1000.0);
  rp_hw_td_pct(hw, rp_stage_share_pct(&hw->rep->stages[si], r->total_us));
  char ev[RP_DEP_EVIDENCE_BYTES];
  const char *said = rp_dep_evidence(r, hw->rules, ev, sizeof ev);
  rp_hw_printf(hw, "<td>%s</td><td title=\"", rp_dep_risk(r->dep_risk));
  rp_hw_text(hw, said ? said : "");
  rp_hw_printf(hw, "\">");
  rp_hw_text(hw, r->dep_class ? r->dep_class : "-");
  rp_hw_printf(hw, "</td><td>%s", rp_recommendation(r->recommendation));
  size_t item = rp_overlap_row_item(hw->rep, hw->rep->stages[si].id, i);
  if (item) rp_hw_printf(hw, " (item %zu)", item); /* the item is its advice and bound */
  rp_hw_printf(hw, "</td></tr>");
}

/* What the Markdown prints under its table: the restructure options, the wait rows'
 * meaning and the rows folded under the floor. */
/* The lines docs/overlap.md promises under the table, as the Markdown prints them: the
 * stage's stream use, each shown row's exposed time (steady + wait), the staging levers. */
static void overlap_stream_notes(rp_hw *hw, const an_overlap_stage *o) {
  size_t rows = 0;
  for (size_t i = 0; i < o->n_rows; i++) rows += !o->rows[i].below_floor;
  if (!rows) return; /* as the Markdown: no shown row, no lines under it */
  rp_hw_printf(hw, "<p class=\"note\">%sGPU busy ",
               o->n_steps ? "Over the stage window, not per step: " : "");
  rp_hw_ms(hw, o->busy_us);
  rp_hw_printf(hw, " ms; on several streams at once ");
  rp_hw_ms(hw, o->multi_stream_us);
  rp_hw_printf(hw, " ms (%.1f%%); max concurrent streams %zu.",
               o->busy_us > 0 ? o->multi_stream_us / o->busy_us * 100.0 : 0.0, o->max_streams);
  size_t shown = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (r->below_floor) continue;
    rp_hw_printf(hw, "%s O%zu ", shown++ ? ";" : " Exposed by row, steady + wait (ms):", i + 1);
    rp_hw_ms(hw, r->exposed_ms * 1000.0);
    rp_hw_printf(hw, " + ");
    rp_hw_ms(hw, r->exposed_wait_ms * 1000.0);
    if (r->exposed_wait_ms > 0) rp_hw_text(hw, rp_overlap_excess_word(r, hw->rules));
  }
  rp_hw_printf(hw, "%s</p>", shown ? "." : "");
  for (size_t i = 0; hw->rules && i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    const char *lever = r->below_floor ? NULL : r->staging_lever;
    if (!lever) continue;
    rp_hw_printf(hw, "<p class=\"note\">O%zu ", i + 1);
    rp_hw_text(hw, rp_recommendation(r->recommendation));
    rp_hw_printf(hw, ": its copies run under <code>");
    rp_hw_text(hw, r->staging_op);
    rp_hw_printf(hw, "</code>: ");
    rp_hw_text(hw, lever);
    rp_hw_printf(hw, ".</p>");
  }
}

/* A note of report/text.c's words (owned: freed), as the Markdown prints it. */
static void note_line(rp_hw *hw, char *line) {
  if (!line) return;
  rp_hw_printf(hw, "<p class=\"note\">");
  rp_hw_text(hw, line);
  rp_hw_printf(hw, "</p>");
  free(line);
}

static void overlap_notes(rp_hw *hw, const an_overlap_stage *o) {
  overlap_stream_notes(hw, o);
  note_line(hw, rp_overlap_restructure_text(o));
  note_line(hw, rp_overlap_bound_text(o));
  note_line(hw, rp_overlap_transfer_text(o));
  note_line(hw, rp_overlap_copy_rate_text(o));
  note_line(hw, rp_overlap_shared_compute_text(o));
  note_line(hw, rp_overlap_wait_unknown_text(
                    o, hw->rep->limits.ranks_compared ? hw->rep->limits.ranks_analysed : 1));
  note_line(hw, rp_overlap_own_stream_text(o));
  bool wait = false;
  for (size_t i = 0; i < o->n_rows; i++) wait |= o->rows[i].verdict == AN_OVERLAP_WAIT;
  if (rp_overlap_slow_mid_step_text(o)) {
    rp_hw_printf(hw, "<p class=\"note\">");
    rp_hw_text(hw, rp_overlap_slow_mid_step_text(o));
    rp_hw_printf(hw, "</p>");
  } else if (wait)
    rp_hw_printf(hw,
                 "<p class=\"note\">Wait rows are time lost to other ranks (rank skew, "
                 "pipeline bubble), not headroom.</p>");
  if (rp_overlap_gpu_waits(o)) {
    rp_hw_printf(hw, "<p class=\"note\">");
    rp_hw_text(hw, rp_overlap_gpu_waits(o));
    rp_hw_printf(hw, "</p>");
  }
  for (size_t i = 0; i < hw->rep->n_stages; i++) /* o's stage: its time account's verdict */
    if (hw->rep->stages[i].overlap == o && rp_overlap_unrecorded(&hw->rep->stages[i])) {
      rp_hw_printf(hw, "<p class=\"note\">");
      rp_hw_text(hw, rp_overlap_unrecorded(&hw->rep->stages[i]));
      rp_hw_printf(hw, "</p>");
    }
  char bar[96];
  rp_overlap_bar_text(o, bar, sizeof bar);
  if (o->n_below_floor)
    rp_hw_printf(hw,
                 "<p class=\"note\">%zu row%s below %s recoverable (shown with \"show more "
                 "rows\").</p>",
                 o->n_below_floor, o->n_below_floor == 1 ? "" : "s", bar);
  if (o->n_cites_fusion)
    rp_hw_printf(hw,
                 "<p class=\"note\">%zu row%s a piece of a fusion row or of the eager chain, "
                 "whose advice and bound it is (shown with \"show more rows\").</p>",
                 o->n_cites_fusion, o->n_cites_fusion == 1 ? " is" : "s are each");
}

static void overlap_table(rp_hw *hw, size_t si, const char *tok) {
  const an_stage_report *st = &hw->rep->stages[si];
  const an_overlap_stage *o = st->overlap;
  char note[128] = "", bar[96];
  if (o && o->n_below_floor) {
    rp_overlap_bar_text(o, bar, sizeof bar);
    snprintf(note, sizeof note, "below %s recoverable", bar);
  } else if (o && o->n_cites_fusion)
    snprintf(note, sizeof note, "pieces of a fusion row");
  char heads[sizeof OVERLAP_HEADS_FMT + 8];
  snprintf(heads, sizeof heads, OVERLAP_HEADS_FMT, o && o->n_steps ? "/step" : "");
  table_open(hw, "overlap", "ot-", tok, heads, *note ? note : NULL);
  size_t n = o ? o->n_rows : 0;
  for (size_t i = 0; i < n; i++) overlap_row(hw, si, tok, i, &o->rows[i]);
  table_close(hw, n, 15,
              hw->rep->run.overlap_off
                  ? "no overlap analysis for a single trace (overlap.single_trace)"
                  : "no overlap rows above the bar");
  if (o) overlap_notes(hw, o);
}

/* ------------------------------------------------------------------ fusion */

static const char FUSION_HEADS[] =
    "<th>Pattern</th><th>Confidence</th><th>Status</th>"
    "<th class=\"num\" aria-sort=\"descending\">Related GPU time (ms)</th>"
    "<th class=\"num\">Share (%)</th><th class=\"num\">Saving per step (ms)</th>"
    "<th>Rationale</th><th data-sort=\"none\">Evidence per component</th>";

static const an_kernel_row *find_kernel(const an_stage_report *st, const char *name) {
  for (size_t i = 0; i < st->n_kernels; i++)
    if (strcmp(st->kernels[i].name, name) == 0) return &st->kernels[i];
  return NULL;
}

static void component_row(rp_hw *hw, size_t si, const char *kernel) {
  const an_kernel_row *k = find_kernel(&hw->rep->stages[si], kernel);
  rp_hw_printf(hw, "<tr><td>");
  rp_hw_text(hw, k ? k->category : "-");
  rp_hw_printf(hw, "</td><td>");
  rp_hw_name_span(hw, k && k->raw_name ? k->raw_name : kernel, rp_hw_shown(hw, si, kernel));
  rp_hw_printf(hw, "</td>");
  if (k) {
    rp_hw_td_ms(hw, k->total_us);
    rp_hw_td_pct(hw, k->share_pct);
  } else {
    rp_hw_printf(hw, "<td></td><td></td>");
  }
  rp_hw_printf(hw, "</tr>");
}

/* A list of locations or paths; kinds (NULL: none) says which location is a graph
 * replay's, worded as the kernel table does. */
static void loc_list(rp_hw *hw, const char *title, const char *const *items,
                     const an_location_kind *kinds, size_t n) {
  rp_hw_printf(hw, "<p>%s</p><ul class=\"loc\">", title);
  for (size_t i = 0; i < n; i++) {
    rp_hw_printf(hw, "<li>%s", kinds ? rp_location_lead(kinds[i]) : "");
    rp_hw_text(hw, items[i]);
    rp_hw_printf(hw, "</li>");
  }
  if (n == 0) rp_hw_printf(hw, "<li>-</li>");
  rp_hw_printf(hw, "</ul>");
}

/* The candidate fused paths, each after its repository when one is stated. */
static void fused_paths(rp_hw *hw, const an_fuse_row *f) {
  rp_hw_printf(hw, "<p>Fused path:</p><ul class=\"loc\">");
  for (size_t i = 0; i < f->n_candidate_paths; i++) {
    const char *repo = f->candidate_repos ? f->candidate_repos[i] : NULL;
    rp_hw_printf(hw, "<li>");
    if (repo) {
      rp_hw_text(hw, repo);
      rp_hw_printf(hw, ": ");
    }
    rp_hw_text(hw, f->candidate_paths[i]);
    rp_hw_printf(hw, "</li>");
  }
  if (!f->n_candidate_paths) rp_hw_printf(hw, "<li>-</li>");
  rp_hw_printf(hw, "</ul>");
}

static void fusion_evidence(rp_hw *hw, size_t si, const an_fuse_row *f) {
  rp_hw_printf(hw,
               "<td class=\"evidence\"><details class=\"evidence\"><summary>%zu evidence "
               "kernel%s</summary><table class=\"components\"><thead><tr>"
               "<th>Component</th><th>Evidence kernel</th><th>GPU time (ms)</th>"
               "<th>Share (%%)</th></tr></thead><tbody>",
               f->n_related, f->n_related == 1 ? "" : "s");
  for (size_t i = 0; i < f->n_related; i++) component_row(hw, si, f->related[i]);
  rp_hw_printf(hw, "</tbody></table>");
  loc_list(hw, "Launched today from:", (const char *const *)f->locations, f->location_kinds,
           f->n_locations);
  fused_paths(hw, f);
  rp_hw_printf(hw, "</details></td>");
}

static void fusion_row(rp_hw *hw, size_t si, const char *tok, size_t i, const an_fuse_row *f) {
  char *status = rp_fuse_status(f), *why = rp_fuse_rationale(f);
  if (!status || !why) hw->failed = true;
  const char *conf = rp_fuse_verdict(f);
  rp_hw_printf(hw, "<tr id=\"%sf-%s-%zu\"%s data-cat=\"%s\"><td>", hw->idp, tok, i,
               f->shown ? "" : " class=\"minor\"", rp_fusion_origin(f->origin));
  rp_hw_text(hw, f->pattern_name ? f->pattern_name : f->pattern_id);
  rp_hw_printf(hw, "</td><td><span class=\"conf-%s\">%s</span></td><td>",
               f->confidence == AN_CONFIDENCE_CONFIRMED ? "confirmed" : "candidate", conf);
  rp_hw_text(hw, status);
  if (f->match == AN_FUSION_DIRECT)
    rp_hw_printf(hw, " <span class=\"badge badge-active\">active</span>");
  rp_hw_printf(hw, "</td>");
  rp_hw_td_ms(hw, f->related_us);
  rp_hw_td_pct(hw, f->share_pct);
  rp_hw_td_ms(hw, f->saving_step_us); /* review 11 defect 7: the win, not the related time */
  rp_hw_printf(hw, "<td class=\"text\">");
  rp_hw_text(hw, why);
  rp_hw_printf(hw, "</td>");
  fusion_evidence(hw, si, f);
  rp_hw_printf(hw, "</tr>");
  free(status);
  free(why);
}

static void fusion_table(rp_hw *hw, size_t si, const char *tok) {
  const an_stage_report *st = &hw->rep->stages[si];
  table_open(hw, "fusion", "ft-", tok, FUSION_HEADS, NULL);
  for (size_t i = 0; i < st->n_fuse; i++) fusion_row(hw, si, tok, i, &st->fuse[i]);
  table_close(hw, st->n_fuse, 7, "no fusion pattern matched");
}

/* ------------------------------------------------------------------ the stage */

void rp_html_stage(rp_hw *hw, size_t stage_index) {
  const an_stage_report *st = &hw->rep->stages[stage_index];
  const char *tok = hw->stage_tok[stage_index];
  rp_hw_printf(hw, "<section class=\"stage\" id=\"%sstage-%s\" data-stage=\"", hw->idp, tok);
  rp_hw_text(hw, st->id);
  rp_hw_printf(hw, "\"><h%d>Stage: ", 2 + hw->hd);
  rp_hw_text(hw, st->label ? st->label : st->id);
  rp_hw_printf(hw, "</h%d><p class=\"stage-totals\">Kernel time ", 2 + hw->hd);
  rp_hw_ms(hw, st->kernel_total_us);
  rp_hw_printf(hw, " ms in %zu kernel%s", st->n_kernels, st->n_kernels == 1 ? "" : "s");
  if (st->overlap) {
    rp_hw_printf(hw, "; GPU busy ");
    rp_hw_ms(hw, st->gpu_busy_us);
    rp_hw_printf(hw, " ms, idle ");
    rp_hw_ms(hw, st->gpu_idle_us);
    rp_hw_printf(hw, " ms");
  }
  rp_hw_printf(hw, ".</p>");
  if (st->n_categories) category_bar(hw, st, tok);
  char *steps = rp_step_categories(st, hw->rules);
  if (steps) {
    rp_hw_printf(hw, "<p class=\"step-categories\">");
    rp_hw_text(hw, steps);
    rp_hw_printf(hw, "</p>");
  }
  free(steps);
  rp_html_timeline(hw, stage_index);
  rp_hw_printf(hw, "<h%d id=\"%skernels-%s\">Kernels</h%d>", 3 + hw->hd, hw->idp, tok, 3 + hw->hd);
  kernel_table(hw, stage_index, tok);
  rp_hw_printf(hw, "<h%d id=\"%soverlap-%s\">Overlap opportunities</h%d>", 3 + hw->hd, hw->idp, tok,
               3 + hw->hd);
  overlap_table(hw, stage_index, tok);
  rp_hw_printf(hw, "<h%d id=\"%sfusion-%s\">Fusion opportunities</h%d>", 3 + hw->hd, hw->idp, tok,
               3 + hw->hd);
  fusion_table(hw, stage_index, tok);
  rp_hw_printf(hw, "</section>");
}
