/*
 * report/html_writer.c - the write helpers of every HTML section writer (html_writer.h):
 * markup, escaped trace text, times, number cells, names, category spans and the
 * stacked bar. Trace text goes out only through rp_html_puts / rp_html_token.
 */
#include "report/html_writer.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_escape.h"
#include "report/report.h"
#include "report/text.h"
#include "triage/settings.h"

void rp_hw_printf(rp_hw *hw, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (vfprintf(hw->out, fmt, ap) < 0) hw->failed = true;
  va_end(ap);
}

void rp_hw_text(rp_hw *hw, const char *s) {
  if (rp_html_puts(hw->out, s) != 0) hw->failed = true;
}

void rp_hw_textn(rp_hw *hw, const char *s, size_t n) {
  if (rp_html_text(hw->out, s, n) != 0) hw->failed = true;
}

void rp_hw_token(rp_hw *hw, const char *s) {
  if (rp_html_token(hw->out, s) != 0) hw->failed = true;
}

void rp_hw_ms(rp_hw *hw, double us) {
  int digits = 2;
  double v = us / 1000.0, step = 0.005; /* half of the last printed digit */
  while (digits < 6 && v != 0 && v < step && v > -step) {
    digits++; /* a non-zero time never prints as 0.00 */
    step /= 10;
  }
  rp_hw_printf(hw, "%.*f", digits, v);
}

/* The bar's aria-label: its text, and each part's share with list_shares. */
static void bar_label(rp_hw *hw, const rp_hw_bar *bar) {
  rp_hw_printf(hw, "%s%s", bar->label, bar->list_shares ? ": " : "");
  for (size_t i = 0; bar->list_shares && i < bar->n; i++) {
    rp_hw_bar_part p = bar->part(bar->items, i);
    rp_hw_printf(hw, "%s", i ? ", " : "");
    rp_hw_text(hw, p.name);
    rp_hw_printf(hw, " %.1f%%", p.share_pct);
  }
}

void rp_hw_stack_bar(rp_hw *hw, const rp_hw_bar *bar) {
  rp_hw_printf(hw,
               "<svg class=\"stack\" viewBox=\"0 0 1000 %d\" preserveAspectRatio=\"none\" "
               "role=\"img\" aria-label=\"",
               bar->height);
  bar_label(hw, bar);
  rp_hw_printf(hw, "\">");
  double x = 0;
  for (size_t i = 0; i < bar->n && bar->scale > 0; i++) {
    rp_hw_bar_part p = bar->part(bar->items, i);
    double w = 1000.0 * p.us / bar->scale;
    rp_hw_printf(hw, "<rect class=\"cat-");
    rp_hw_token(hw, p.name);
    rp_hw_printf(hw, "\" x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"%d\"><title>", x, w,
                 bar->height);
    rp_hw_text(hw, p.name);
    rp_hw_printf(hw, ": ");
    rp_hw_ms(hw, p.us);
    rp_hw_printf(hw, " ms");
    if (bar->title_share) rp_hw_printf(hw, " (%.1f%%)", p.share_pct);
    rp_hw_printf(hw, "</title></rect>");
    x += w;
  }
  rp_hw_printf(hw, "</svg>");
}

/* A mark with no closing one is text. */
void rp_hw_marked(rp_hw *hw, const char *s) {
  static const struct {
    const char *mark, *open, *close;
  } MARKS[] = {{"`", "<code>", "</code>"}, {"**", "<strong>", "</strong>"}, {"*", "<em>", "</em>"}};
  while (*s) {
    size_t plain = strcspn(s, "`*");
    rp_hw_textn(hw, s, plain);
    s += plain;
    if (!*s) break;
    size_t m = 0;
    while (m < 2 && strncmp(s, MARKS[m].mark, strlen(MARKS[m].mark)) != 0) m++;
    size_t ml = strlen(MARKS[m].mark);
    const char *close = strstr(s + ml, MARKS[m].mark);
    if (!close) {
      rp_hw_textn(hw, s, ml);
      s += ml;
      continue;
    }
    rp_hw_printf(hw, "%s", MARKS[m].open);
    rp_hw_textn(hw, s + ml, (size_t)(close - s - ml));
    rp_hw_printf(hw, "%s", MARKS[m].close);
    s = close + ml;
  }
}

void rp_hw_name_span(rp_hw *hw, const char *full, const char *shown) {
  rp_hw_printf(hw, "<span class=\"name\" title=\"");
  rp_hw_text(hw, full);
  rp_hw_printf(hw, "\">");
  rp_hw_text(hw, shown);
  rp_hw_printf(hw, "</span>");
}

void rp_hw_cat_span(rp_hw *hw, const char *category) {
  rp_hw_printf(hw, "<span class=\"cat cat-");
  rp_hw_token(hw, category);
  rp_hw_printf(hw, "\">");
  rp_hw_text(hw, category);
  rp_hw_printf(hw, "</span>");
}

void rp_hw_td_ms(rp_hw *hw, double us) {
  rp_hw_printf(hw, "<td data-value=\"%.6g\">", us);
  rp_hw_ms(hw, us);
  rp_hw_printf(hw, "</td>");
}

void rp_hw_td_pct(rp_hw *hw, double pct) {
  rp_hw_printf(hw, "<td data-value=\"%.6g\">%.1f</td>", pct, pct);
}

void rp_hw_td_count(rp_hw *hw, size_t n) {
  rp_hw_printf(hw, "<td data-value=\"%zu\">%zu</td>", n, n);
}

size_t rp_hw_stage_index(const rp_hw *hw, const char *stage_id) {
  size_t i = 0;
  while (stage_id && i < hw->rep->n_stages && strcmp(hw->rep->stages[i].id, stage_id) != 0) i++;
  return stage_id ? i : hw->rep->n_stages;
}

const char *rp_hw_shown(const rp_hw *hw, size_t stage, const char *name) {
  return hw->stage_names && stage < hw->rep->n_stages
             ? rp_stage_names_get(&hw->stage_names[stage], name)
             : name;
}

/* ------------------------------------------------------------------ display names */
