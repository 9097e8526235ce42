/*
 * report/html_ranks.c - the Ranks section of the HTML page: one row per rank with a
 * stacked bar of its time split on one scale for every rank (the widest rank is 1000 in
 * the viewBox), the straggler marked (docs/html.md, "Ranks").
 *
 * It draws an rp_rank_view, not the model: the per-rank model (an_rank_report) is the
 * ranks work's and is not declared yet. When it lands, one adapter from an_rank_report
 * to rp_rank_view (labels, the parts of each rank's time, the straggler's index, the
 * verdict sentence from text.c) is all the page needs; the drawing is tested now
 * (tests/unit/test_html.c, html_ranks).
 */
#include "report/html_internal.h"

#define BAR_SCALE 1000.0
#define BAR_HEIGHT 16

static double busy_of(const rp_rank_view_row *r) {
  double t = 0;
  for (size_t i = 0; i < r->n_parts; i++) t += r->parts[i].us;
  return t;
}

static void rank_bar(rp_hw *hw, const rp_rank_view_row *r, double widest) {
  rp_hw_printf(hw, "<td class=\"bar\"><svg class=\"stack\" viewBox=\"0 0 1000 %d\" "
                   "preserveAspectRatio=\"none\" role=\"img\" aria-label=\"time split:",
               BAR_HEIGHT);
  double busy = busy_of(r), x = 0;
  for (size_t i = 0; i < r->n_parts; i++) {
    rp_hw_printf(hw, "%s ", i ? "," : "");
    rp_hw_text(hw, r->parts[i].name);
    rp_hw_printf(hw, " %.1f%%", busy > 0 ? 100.0 * r->parts[i].us / busy : 0.0);
  }
  rp_hw_printf(hw, "\">");
  for (size_t i = 0; i < r->n_parts && widest > 0; i++) {
    double w = BAR_SCALE * r->parts[i].us / widest;
    rp_hw_printf(hw, "<rect class=\"cat-");
    rp_hw_token(hw, r->parts[i].name);
    rp_hw_printf(hw, "\" x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"%d\"><title>", x, w, BAR_HEIGHT);
    rp_hw_text(hw, r->parts[i].name);
    rp_hw_printf(hw, ": ");
    rp_hw_ms(hw, r->parts[i].us);
    rp_hw_printf(hw, " ms</title></rect>");
    x += w;
  }
  rp_hw_printf(hw, "</svg></td>");
}

static void rank_row(rp_hw *hw, size_t i, const rp_rank_view_row *r, double widest) {
  rp_hw_printf(hw, "<tr id=\"rank-%zu\"%s><th scope=\"row\" data-value=\"%ld\">", i,
               r->straggler ? " class=\"straggler\"" : "", r->rank);
  rp_hw_text(hw, r->label);
  if (r->straggler) rp_hw_printf(hw, " <span class=\"badge badge-straggler\">straggler</span>");
  rp_hw_printf(hw, "</th>");
  rank_bar(hw, r, widest);
  rp_hw_td_ms(hw, busy_of(r));
  for (size_t p = 0; p < r->n_parts; p++) rp_hw_td_ms(hw, r->parts[p].us);
  rp_hw_printf(hw, "<td>");
  if (r->top_kernel) {
    rp_hw_name_span(hw, r->top_kernel, r->top_kernel_shown ? r->top_kernel_shown : r->top_kernel);
    rp_hw_printf(hw, " <span class=\"muted\">%.1f%%</span>", r->top_share_pct);
  }
  rp_hw_printf(hw, "</td></tr>");
}

/* The legend and the part columns follow the first rank's parts: every rank of one view
 * has the same parts in the same order (the adapter's contract). */
static void ranks_head(rp_hw *hw, const rp_rank_view_row *first) {
  rp_hw_printf(hw, "<ul class=\"legend\">");
  for (size_t i = 0; first && i < first->n_parts; i++) {
    rp_hw_printf(hw, "<li class=\"cat-");
    rp_hw_token(hw, first->parts[i].name);
    rp_hw_printf(hw, "\"><span class=\"sw\"></span>");
    rp_hw_text(hw, first->parts[i].name);
    rp_hw_printf(hw, "</li>");
  }
  rp_hw_printf(hw, "</ul><div class=\"table-wrap\"><table class=\"data sortable ranks\" id=\"rt\">"
                   "<thead><tr><th>Rank</th><th data-sort=\"none\">Time split</th>"
                   "<th class=\"num\">GPU busy (ms)</th>");
  for (size_t i = 0; first && i < first->n_parts; i++) {
    rp_hw_printf(hw, "<th class=\"num\">");
    rp_hw_text(hw, first->parts[i].name);
    rp_hw_printf(hw, " (ms)</th>");
  }
  rp_hw_printf(hw, "<th>Top kernel</th></tr></thead><tbody>");
}

void rp_html_ranks(rp_hw *hw, const rp_rank_view *v) {
  if (!v || v->n == 0) return;
  double widest = 0;
  for (size_t i = 0; i < v->n; i++)
    if (busy_of(&v->rows[i]) > widest) widest = busy_of(&v->rows[i]);
  rp_hw_printf(hw, "<section id=\"ranks\" class=\"ranks\"><h2>Ranks</h2><p class=\"verdict\">");
  rp_hw_text(hw, v->verdict);
  rp_hw_printf(hw, "</p>");
  ranks_head(hw, &v->rows[0]);
  for (size_t i = 0; i < v->n; i++) rank_row(hw, i, &v->rows[i], widest);
  rp_hw_printf(hw, "</tbody></table></div></section>");
}
