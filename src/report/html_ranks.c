/*
 * report/html_ranks.c - the Ranks section of the HTML page: one row per rank with a
 * stacked bar of its time split on one scale for every rank (the widest rank is 1000 in
 * the viewBox), the straggler marked (docs/html.md, "Ranks").
 *
 * The drawing reads an rp_rank_view (tested alone: tests/unit/test_html.c, html_ranks);
 * rp_html_rank_reports adapts the model's an_rank_report tables to it: per rank the
 * compute, exposed communication, memory and idle time of its whole trace, the
 * straggler of each collective group marked, the verdict from the groups, each rank's
 * collective wait, and the imbalance rows (kernels whose time differs across the ranks
 * of a group by more than ranks.imbalance_pct).
 */
#include <stdlib.h>
#include <string.h>

#include "report/html_internal.h"
#include "report/rank_notes.h"
#include "report/text.h"

#define BAR_HEIGHT 16

/* The bar length: every part, idle included when the view has it. */
static double busy_of(const rp_rank_view_row *r) {
  double t = 0;
  for (size_t i = 0; i < r->n_parts; i++) t += r->parts[i].us;
  return t;
}

/* A rank's parts, each with its share of the rank's bar. */
typedef struct rank_parts {
  const rp_rank_view_row *row;
  double busy;
} rank_parts;

static rp_hw_bar_part rank_part(const void *items, size_t i) {
  const rank_parts *p = items;
  const rp_rank_part *part = &p->row->parts[i];
  return (rp_hw_bar_part){part->name, part->us, p->busy > 0 ? 100.0 * part->us / p->busy : 0.0};
}

static void rank_bar(rp_hw *hw, const rp_rank_view_row *r, double widest) {
  rank_parts parts = {r, busy_of(r)};
  rp_hw_bar bar = {"time split", true, false, widest, BAR_HEIGHT, r->n_parts, rank_part, &parts};
  rp_hw_printf(hw, "<td class=\"bar\">");
  rp_hw_stack_bar(hw, &bar);
  rp_hw_printf(hw, "</td>");
}

static void rank_row(rp_hw *hw, size_t i, const rp_rank_view *v, double widest) {
  const rp_rank_view_row *r = &v->rows[i];
  rp_hw_printf(hw, "<tr id=\"%srank%s-%zu\"%s><th scope=\"row\" data-value=\"%ld\">", hw->idp,
               hw->id_suffix, i, r->straggler ? " class=\"straggler\"" : "", r->rank);
  rp_hw_text(hw, r->label);
  if (r->straggler) {
    rp_hw_printf(hw, " <span class=\"badge badge-straggler\">");
    rp_hw_text(hw, v->straggler_mark ? v->straggler_mark : "straggler");
    rp_hw_printf(hw, "</span>");
  }
  rp_hw_printf(hw, "</th>");
  rank_bar(hw, r, widest);
  rp_hw_td_ms(hw, busy_of(r));
  for (size_t p = 0; p < r->n_parts; p++) rp_hw_td_ms(hw, r->parts[p].us);
  if (v->has_wait) {
    rp_hw_printf(hw, "<td data-value=\"%.6g\">", r->wait_us);
    rp_hw_ms(hw, r->wait_us);
    rp_hw_printf(hw, " <span class=\"muted\">%.1f%%</span></td>", r->wait_share_pct);
  }
  rp_hw_printf(hw, "<td>");
  if (r->top_kernel) {
    rp_hw_name_span(hw, r->top_kernel, r->top_kernel_shown ? r->top_kernel_shown : r->top_kernel);
    rp_hw_printf(hw, " <span class=\"muted\">%.1f%%</span>", r->top_share_pct);
  }
  rp_hw_printf(hw, "</td></tr>");
}

/* The legend and the part columns follow the first rank's parts: every rank of one view
 * has the same parts in the same order (the adapter's contract). */
static void ranks_head(rp_hw *hw, const rp_rank_view_row *first, bool has_wait) {
  rp_hw_printf(hw, "<ul class=\"legend\">");
  for (size_t i = 0; first && i < first->n_parts; i++) {
    rp_hw_printf(hw, "<li class=\"cat-");
    rp_hw_token(hw, first->parts[i].name);
    rp_hw_printf(hw, "\"><span class=\"sw\"></span>");
    rp_hw_text(hw, first->parts[i].name);
    rp_hw_printf(hw, "</li>");
  }
  rp_hw_printf(hw,
               "</ul><div class=\"table-wrap\"><table class=\"data sortable ranks\" id=\"%srt%s\">"
               "<thead><tr><th>Rank</th><th data-sort=\"none\">Time split</th>"
               "<th class=\"num\" title=\"the parts summed: first kernel start to last end when "
               "idle is one\">Span (ms)</th>",
               hw->idp, hw->id_suffix);
  for (size_t i = 0; first && i < first->n_parts; i++) {
    rp_hw_printf(hw, "<th class=\"num\">");
    rp_hw_text(hw, first->parts[i].name);
    rp_hw_printf(hw, " (ms)</th>");
  }
  if (has_wait)
    rp_hw_printf(hw,
                 "<th class=\"num\" title=\"per matched collective instance: its duration on "
                 "this rank minus the shortest on any rank of the group, summed; share of the "
                 "rank's GPU time\">Collective wait (ms)</th>");
  rp_hw_printf(hw, "<th>Top kernel</th></tr></thead><tbody>");
}

/* Kernels whose time differs across the ranks of one group beyond ranks.imbalance_pct:
 * min and max with their ranks, the spread; names shortened as in the stage's tables. */
static void imbalance_table(rp_hw *hw, const rp_rank_view *v) {
  if (v->n_imbalance == 0) return;
  size_t si = hw->rep ? rp_hw_stage_index(hw, v->title) : 0;
  rp_hw_printf(hw,
               "<h%d>Imbalance</h%d><div class=\"table-wrap\"><table class=\"data sortable "
               "imbalance\" id=\"%sri%s\"><thead><tr><th>Kernel</th><th>Category</th>"
               "<th class=\"num\">Min (ms)</th><th class=\"num\">Min rank</th>"
               "<th class=\"num\">Max (ms)</th><th class=\"num\">Max rank</th>"
               "<th class=\"num\" aria-sort=\"descending\" title=\"(max - min) / min\">"
               "Spread (%%)</th></tr></thead><tbody>",
               3 + hw->hd, 3 + hw->hd, hw->idp, hw->id_suffix);
  for (size_t i = 0; i < v->n_imbalance; i++) {
    const an_imbalance_row *r = &v->imbalance[i];
    const char *cat = r->category ? r->category : "other";
    rp_hw_printf(hw, "<tr id=\"%simb%s-%zu\" data-cat=\"", hw->idp, hw->id_suffix, i);
    rp_hw_text(hw, cat);
    rp_hw_printf(hw, "\"><td>");
    rp_hw_name_span(hw, r->kernel, hw->rep ? rp_hw_shown(hw, si, r->kernel) : r->kernel);
    rp_hw_printf(hw, "</td><td>");
    rp_hw_cat_span(hw, cat);
    rp_hw_printf(hw, "</td>");
    rp_hw_td_ms(hw, r->min_us);
    rp_hw_printf(hw, "<td data-value=\"%ld\">%ld</td>", r->min_rank, r->min_rank);
    rp_hw_td_ms(hw, r->max_us);
    rp_hw_printf(hw, "<td data-value=\"%ld\">%ld</td>", r->max_rank, r->max_rank);
    rp_hw_td_pct(hw, r->spread_pct);
    rp_hw_printf(hw, "</tr>");
  }
  rp_hw_printf(hw, "</tbody></table></div>");
}

/* A note's parts as HTML: a name the trace gives is text in <code>, never markup. */
static void note_html(rp_hw *hw, const rp_rank_note *n) {
  static const char *const tag[] = {NULL, "code", "em"};
  for (size_t i = 0; i < n->n; i++) {
    const rp_note_part *p = &n->parts[i];
    if (tag[p->kind]) rp_hw_printf(hw, "<%s>", tag[p->kind]);
    rp_hw_text(hw, p->text);
    if (tag[p->kind]) rp_hw_printf(hw, "</%s>", tag[p->kind]);
  }
}

void rp_html_ranks(rp_hw *hw, const rp_rank_view *v) {
  if (!v || v->n == 0) return;
  double widest = 0;
  for (size_t i = 0; i < v->n; i++)
    if (busy_of(&v->rows[i]) > widest) widest = busy_of(&v->rows[i]);
  rp_hw_printf(hw, "<section id=\"%sranks%s\" class=\"ranks\"><h%d>Ranks", hw->idp, hw->id_suffix,
               2 + hw->hd);
  if (v->title) {
    rp_hw_printf(hw, " (");
    rp_hw_text(hw, v->title);
    rp_hw_printf(hw, ")");
  }
  rp_hw_printf(hw, "</h%d><p class=\"verdict\">", 2 + hw->hd);
  rp_hw_text(hw, v->verdict);
  rp_hw_printf(hw, "</p>");
  if (v->span) {
    rp_hw_printf(hw, "<p class=\"muted\">");
    rp_hw_text(hw, v->span);
    rp_hw_printf(hw, ".</p>");
  }
  ranks_head(hw, &v->rows[0], v->has_wait);
  for (size_t i = 0; i < v->n; i++) rank_row(hw, i, v, widest);
  rp_hw_printf(hw, "</tbody></table></div>");
  if (v->n_notes) rp_hw_printf(hw, "<ul class=\"notes rank-notes\">");
  for (size_t i = 0; i < v->n_notes; i++) {
    rp_hw_printf(hw, "<li>");
    note_html(hw, &v->notes[i]);
    rp_hw_printf(hw, "</li>");
  }
  if (v->n_notes) rp_hw_printf(hw, "</ul>");
  imbalance_table(hw, v);
  rp_hw_printf(hw, "</section>");
}

/* ------------------------------------------------------------------ from the model */

#define RANK_PARTS 4

/* One sentence per group that loses time to its ranks' waits; the bar's words when none
 * does. */
static size_t group_sentence(const an_rank_group *gr, char *buf, size_t cap, bool first) {
  const char *sep = first ? "" : " ";
  int n = 0;
  if (gr->verdict == AN_RANK_STRAGGLER)
    n = snprintf(buf, cap,
                 "%sRank %ld is the straggler (cause: %s): the other ranks of its group wait "
                 "%.3f ms for it (%.1f%% of their GPU time), %.1f%% of it in collective %zu of "
                 "the step.",
                 sep, gr->straggler, rp_rank_cause(gr->cause), gr->lost_us / 1000.0,
                 gr->lost_share_pct, gr->wait_kernel_share_pct, gr->wait_position);
  else if (gr->verdict == AN_RANK_SPREAD)
    n = snprintf(buf, cap,
                 "%sThe ranks of group %ld-%ld wait %.3f ms for one another (%.1f%% of their "
                 "GPU time), the last to arrive changing from one collective to the next.",
                 sep, gr->ranks[0], gr->ranks[gr->n_ranks - 1], gr->lost_us / 1000.0,
                 gr->lost_share_pct);
  /* what was not matched or not read is in the notes (report/rank_notes.h), as in the
   * Markdown */
  return n > 0 ? (size_t)n : 0;
}

static void verdict_of(const an_rank_report *rr, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t g = 0; g < rr->n_groups && n < cap; g++)
    n += group_sentence(&rr->groups[g], buf + n, cap - n, n == 0);
  if (n == 0)
    snprintf(buf, cap,
             "No straggler: the ranks wait for one another less than the bar "
             "(ranks.straggler_min_share_pct), or have no collectives to compare.");
}

static void rank_report(rp_hw *hw, const an_rank_report *rr, rp_rank_view_row *rows,
                        rp_rank_part (*parts)[RANK_PARTS]) {
  for (size_t i = 0; i < rr->n_rows; i++) {
    const an_rank_row *w = &rr->rows[i];
    parts[i][0] = (rp_rank_part){"compute", w->compute_us};
    parts[i][1] = (rp_rank_part){"communication", w->communication_us};
    parts[i][2] = (rp_rank_part){"memory", w->memory_us};
    parts[i][3] = (rp_rank_part){"idle", w->idle_us};
    size_t si = rp_hw_stage_index(hw, rr->stage);
    rows[i] = (rp_rank_view_row){NULL,
                                 w->rank,
                                 RANK_PARTS,
                                 parts[i],
                                 w->straggler,
                                 w->top_kernel,
                                 w->top_kernel ? rp_hw_shown(hw, si, w->top_kernel) : NULL,
                                 w->top_kernel_share_pct,
                                 w->wait_us,
                                 w->wait_share_pct};
  }
}

void rp_html_rank_reports(rp_hw *hw) {
  for (size_t k = 0; k < hw->rep->n_ranks && !hw->failed; k++) {
    const an_rank_report *rr = &hw->rep->ranks[k];
    rp_rank_view_row *rows = calloc(rr->n_rows ? rr->n_rows : 1, sizeof *rows);
    rp_rank_part(*parts)[RANK_PARTS] = calloc(rr->n_rows ? rr->n_rows : 1, sizeof *parts);
    char *labels = calloc(rr->n_rows ? rr->n_rows : 1, 32);
    if (!rows || !parts || !labels) hw->failed = true;
    if (!hw->failed) {
      rank_report(hw, rr, rows, parts);
      for (size_t i = 0; i < rr->n_rows; i++) {
        snprintf(labels + 32 * i, 32, "rank %ld", rr->rows[i].rank);
        rows[i].label = labels + 32 * i;
      }
      char verdict[1024];
      verdict_of(rr, verdict, sizeof verdict);
      char suffix[32] = "";
      if (k) snprintf(suffix, sizeof suffix, "-%zu", k);
      hw->id_suffix = suffix;
      char span[RP_RANK_SPAN_BYTES], mark[RP_RANK_STRAGGLER_BYTES];
      /* the Markdown's notes, the same list: files holding several GPUs, ranks not read,
       * collectives not matched, the straggler's evidence and cause */
      rp_rank_notes notes;
      if (rp_rank_notes_build(rr, hw->full_names ? NULL : hw->names, &notes) != 0)
        hw->failed = true;
      else
        rp_html_ranks(
            hw, &(rp_rank_view){
                    rr->stage, verdict, rr->n_rows, rows, true, rr->n_imbalance, rr->imbalance,
                    rp_rank_span(rr, span, sizeof span), notes.n, notes.notes,
                    rp_rank_straggler(rr, hw->rep->limits.world_size, mark, sizeof mark)});
      rp_rank_notes_free(&notes);
      hw->id_suffix = "";
    }
    free(rows);
    free(parts);
    free(labels);
  }
}
