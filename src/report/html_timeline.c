/*
 * report/html_timeline.c - a stage's time account in the HTML report (docs/html.md,
 * docs/report.md "The time account"): the counted steps, span = GPU busy + idle per step,
 * the idle causes with the CPU activity under each, and the collectives' transfer and
 * wait. Its rows carry the Markdown's anchors (idle-STAGE-N, wait-STAGE-N), so the
 * summary's evidence links resolve in both formats; rp_html_evidence writes those links.
 * Trace text (step names, CPU ops, Python locations, kernel names) goes out escaped.
 */
#include <string.h>

#include "analysis/summary.h"
#include "report/html_internal.h"
#include "report/timeline_report.h"
#include "util/limits.h"

/* ------------------------------------------------------------------ evidence links */

/* The stage whose anchor spelling is the `len` bytes at `s` (an_summary_anchor lowers
 * and dashes the id), or n_stages. */
static size_t anchor_stage(const rp_hw *hw, const char *s, size_t len) {
  for (size_t i = 0; i < hw->rep->n_stages; i++) {
    char a[64];
    an_summary_anchor(a, sizeof a, "x", hw->rep->stages[i].id, 0);
    size_t al = strlen(a);
    if (al == len + 4 && strncmp(a + 2, s, len) == 0) return i; /* "x-" STAGE "-0" */
  }
  return hw->rep->n_stages;
}

void rp_html_evidence(rp_hw *hw, const char *anchor, const char *label) {
  static const struct {
    const char *kind, *row_prefix; /* NULL: the row's id is the anchor itself */
  } kinds[] = {{"kernel", "k"}, {"overlap", "o"}, {"fusion", "f"},
               {"idle", NULL},  {"wait", NULL},   {"host", NULL}};
  const char *dash = strchr(anchor, '-'), *last = strrchr(anchor, '-');
  if (!dash || last <= dash) {
    rp_hw_text(hw, label);
    return;
  }
  size_t k = 0, kl = (size_t)(dash - anchor);
  while (k < sizeof kinds / sizeof *kinds &&
         (strlen(kinds[k].kind) != kl || strncmp(anchor, kinds[k].kind, kl) != 0))
    k++;
  size_t si = anchor_stage(hw, dash + 1, (size_t)(last - dash - 1));
  if (k == sizeof kinds / sizeof *kinds || si == hw->rep->n_stages) {
    rp_hw_text(hw, label);
    return;
  }
  rp_hw_printf(hw, "<a class=\"ev\" href=\"#%s", hw->idp);
  if (kinds[k].row_prefix) {
    rp_hw_printf(hw, "%s-%s", kinds[k].row_prefix, hw->stage_tok[si]);
    rp_hw_text(hw, last); /* "-ROW" */
  } else {
    rp_hw_text(hw, anchor);
  }
  rp_hw_printf(hw, "\">");
  rp_hw_text(hw, label);
  rp_hw_printf(hw, "</a>");
}

/* ------------------------------------------------------------------ the account */

static void steps_para(rp_hw *hw, const an_stage_timeline *tl) {
  rp_hw_printf(hw, "<p class=\"steps\">");
  if (!tl->n_steps) {
    rp_hw_printf(hw, "%s", RP_NO_STEPS_TEXT);
  } else {
    rp_hw_printf(hw, "%zu step%s counted (<code>", tl->n_steps, tl->n_steps == 1 ? "" : "s");
    rp_hw_text(hw, tl->steps[0].name);
    rp_hw_printf(hw, "</code>%s)", tl->n_steps > 1 ? ", …" : "");
    if (tl->n_warmup)
      rp_hw_printf(hw, ", %zu warm-up step%s left out", tl->n_warmup, tl->n_warmup == 1 ? "" : "s");
    rp_hw_printf(hw, ".");
    char nested[RP_NESTED_BYTES];
    rp_hw_text(hw, rp_nested_markers(tl, nested, sizeof nested));
  }
  if (tl->marker)
    rp_hw_printf(hw, " Step marker: <code>%s</code> (of %zu kind%s in the trace).", tl->marker,
                 tl->marker_kinds, tl->marker_kinds == 1 ? "" : "s");
  if (tl->setup_ns > 0) {
    rp_hw_printf(hw, " One-time setup (kernels launched under a warm-up annotation): ");
    rp_hw_ms(hw, (double)tl->setup_ns / 1000.0);
    rp_hw_printf(hw, " ms, not counted.");
  }
  if (tl->outside_ns > tl->setup_ns) {
    rp_hw_printf(hw,
                 " Kernel time outside the counted steps (a previous step's tail, work between "
                 "steps, warm-ups): ");
    rp_hw_ms(hw, (double)(tl->outside_ns - tl->setup_ns) / 1000.0);
    rp_hw_printf(hw, " ms, not counted; the counted steps hold %.1f%% of the rest.",
                 rp_step_coverage_pct(tl));
  }
  if (tl->placed_by_gpu_time)
    rp_hw_printf(hw, " %zu kernel(s) without a launch record placed by GPU time.",
                 tl->placed_by_gpu_time);
  rp_hw_printf(hw, "</p>");
}

static void account_para(rp_hw *hw, const an_stage_timeline *tl) {
  const an_time_account *a = &tl->total;
  double idle_pct = a->span_ns ? (double)a->idle_ns / (double)a->span_ns * 100.0 : 0;
  rp_hw_printf(hw, "<p class=\"account\">Per step: span <b>");
  rp_hw_ms(hw, rp_per_step_us(tl, a->span_ns));
  rp_hw_printf(hw, " ms</b> = GPU busy ");
  rp_hw_ms(hw, rp_per_step_us(tl, a->busy_ns));
  rp_hw_printf(hw, " ms + idle ");
  rp_hw_ms(hw, rp_per_step_us(tl, a->idle_ns));
  rp_hw_printf(hw, " ms (%.1f%%).", idle_pct);
  if (a->kernel_ns > a->busy_ns) {
    rp_hw_printf(hw, " Kernel time (");
    rp_hw_ms(hw, rp_per_step_us(tl, a->kernel_ns));
    rp_hw_printf(hw, " ms) exceeds busy time by ");
    rp_hw_ms(hw, rp_per_step_us(tl, a->kernel_ns - a->busy_ns));
    rp_hw_printf(hw, " ms: kernels run concurrently.");
  }
  if (a->pdl_wait_ns > 0) {
    rp_hw_printf(hw, " Of the kernel time, ");
    rp_hw_ms(hw, rp_per_step_us(tl, a->pdl_wait_ns));
    rp_hw_printf(hw,
                 " ms/step is a kernel waiting on its stream's predecessor (programmatic "
                 "dependent launch).");
  }
  if (a->graph_kernel_ns > 0 && a->kernel_ns > 0)
    rp_hw_printf(hw, " %.0f%% of the kernel time is graph-replayed.",
                 (double)a->graph_kernel_ns / (double)a->kernel_ns * 100.0);
  char unrec[768]; /* the line names both readings and the other streams' time */
  if (rp_graph_unrecorded_text(tl, unrec, sizeof unrec)) {
    rp_hw_printf(hw, " ");
    rp_hw_text(hw, unrec);
  }
  char host[384];
  if (rp_host_extent_text(tl, host, sizeof host)) {
    rp_hw_printf(hw, " ");
    rp_hw_text(hw, host);
  }
  char lead[384];
  if (rp_launch_lead_text(tl, lead, sizeof lead)) {
    rp_hw_printf(hw, " ");
    rp_hw_text(hw, lead);
  }
  rp_drain_parts d;
  if (rp_drain_sentence(tl, &d)) {
    rp_hw_printf(hw, " ");
    rp_hw_text(hw, d.lead);
    rp_hw_printf(hw, "<code>");
    rp_hw_text(hw, d.what);
    rp_hw_printf(hw, "</code>");
    if (d.location) {
      rp_hw_printf(hw, " at <code>");
      rp_hw_text(hw, d.location);
      rp_hw_printf(hw, "</code>");
    }
    rp_hw_text(hw, d.tail);
  }
  rp_hw_printf(hw, "</p>");
}

static const char CAUSE_HEADS[] =
    "<th>#</th><th>Idle cause</th><th>CPU op or call</th><th>Python location</th>"
    "<th class=\"num\">Idle (ms/step)</th><th class=\"num\">Share of step (%)</th>"
    "<th class=\"num\">Gaps</th><th class=\"num\">Longest (ms)</th>";

static void cause_row(rp_hw *hw, const an_stage_timeline *tl, const an_idle_cause *c,
                      const char *id, size_t row) {
  double us = rp_per_step_us(tl, c->idle_ns), step_us = rp_per_step_us(tl, tl->total.span_ns);
  rp_hw_printf(hw, "<tr id=\"%s%s\"><td>I%zu</td><td>%s</td><td>", hw->idp, id, row + 1,
               rp_idle_kind(c->kind));
  char wb[256];
  const char *what = rp_cause_what(c, wb, sizeof wb);
  if (what) {
    rp_hw_printf(hw, "<code>");
    rp_hw_text(hw, what);
    rp_hw_printf(hw, "</code>");
  } else {
    rp_hw_printf(hw, "-");
  }
  rp_hw_printf(hw, "</td><td class=\"loc\">");
  rp_hw_text(hw, c->location ? c->location : "-");
  rp_hw_printf(hw, "</td>");
  rp_hw_td_ms(hw, us);
  rp_hw_td_pct(hw, step_us > 0 ? us / step_us * 100.0 : 0);
  rp_hw_td_count(hw, c->gaps);
  rp_hw_td_ms(hw, (double)c->max_gap_ns / 1000.0);
  rp_hw_printf(hw, "</tr>");
}

/* The first RP_TIMELINE_CAUSES_SHOWN causes and any a summary item links to; the rest in
 * one line (the JSON report has them all), as in the Markdown. */
static void causes_table(rp_hw *hw, const an_stage_report *st, const char *tok) {
  const an_stage_timeline *tl = st->timeline;
  const an_time_account *a = &tl->total;
  if (!a->n_causes) return;
  rp_hw_printf(hw,
               "<div class=\"table-wrap\"><table class=\"data timeline idle\" id=\"%sit-%s\">"
               "<thead><tr>%s</tr></thead><tbody>",
               hw->idp, tok, CAUSE_HEADS);
  size_t hidden = 0;
  int64_t hidden_ns = 0;
  for (size_t i = 0; i < a->n_causes; i++) {
    char id[64];
    an_summary_anchor(id, sizeof id, "idle", st->id, i);
    if (i < RP_TIMELINE_CAUSES_SHOWN || rp_summary_links_to(hw->rep, id)) {
      cause_row(hw, tl, &a->causes[i], id, i);
    } else {
      hidden++;
      hidden_ns += a->causes[i].idle_ns;
    }
  }
  rp_hw_printf(hw, "</tbody></table></div>");
  if (!hidden) return;
  rp_hw_printf(hw, "<p class=\"more\">%zu more cause%s (", hidden, hidden == 1 ? "" : "s");
  rp_hw_ms(hw, rp_per_step_us(tl, hidden_ns));
  rp_hw_printf(hw, " ms/step) in the JSON report.</p>");
}

static const char COLLECTIVE_HEADS[] =
    "<th>#</th><th>Collective</th><th class=\"num\">Instances/step</th>"
    "<th class=\"num\">Time (ms/step)</th><th class=\"num\">Transfer (ms/step)</th>"
    "<th class=\"num\">Wait (ms/step)</th>"
    "<th class=\"num\" title=\"the first collective of each step absorbs the other ranks' late "
    "arrival\">First of step, wait (ms/step)</th>"
    "<th class=\"num\">Floor (us)</th><th>Floor from</th>";

static void collectives_table(rp_hw *hw, size_t si, const char *tok) {
  const an_stage_report *st = &hw->rep->stages[si];
  const an_stage_timeline *tl = st->timeline;
  if (!tl->n_collectives) return;
  rp_hw_printf(hw,
               "<div class=\"table-wrap\"><table class=\"data timeline collectives\" "
               "id=\"%swt-%s\"><thead><tr>%s</tr></thead><tbody>",
               hw->idp, tok, COLLECTIVE_HEADS);
  double n = (double)(tl->n_steps ? tl->n_steps : 1);
  for (size_t i = 0; i < tl->n_collectives; i++) {
    const an_collective_time *c = &tl->collectives[i];
    char id[64], from[RP_FLOOR_FROM_BYTES];
    an_summary_anchor(id, sizeof id, "wait", st->id, i);
    rp_floor_from(from, sizeof from, c);
    rp_hw_printf(hw, "<tr id=\"%s%s\"><td>W%zu</td><td>", hw->idp, id, i + 1);
    rp_hw_name_span(hw, c->kernel, rp_hw_shown(hw, si, c->kernel));
    if (rp_collective_context(c)) { /* one of the rows a collective's launch contexts split */
      rp_hw_printf(hw, " &mdash; ");
      rp_hw_text(hw, rp_collective_context(c));
    }
    rp_hw_printf(hw, "</td><td data-value=\"%.6g\">%.1f</td>", (double)c->instances / n,
                 (double)c->instances / n);
    rp_hw_td_ms(hw, rp_per_step_us(tl, c->total_ns));
    if (rp_collective_unknown(c) && c->lower) { /* no floor; like messages bound the wait */
      char w[48], fw[48];
      rp_collective_wait_ms(w, sizeof w, tl, c, c->wait_ns);
      rp_collective_wait_ms(fw, sizeof fw, tl, c, c->first_wait_ns);
      rp_hw_printf(hw, "<td>unknown</td><td>");
      rp_hw_text(hw, w);
      rp_hw_printf(hw, "</td><td>");
      rp_hw_text(hw, fw);
      rp_hw_printf(hw, "</td><td>unknown</td><td>");
    } else if (rp_collective_unknown(c)) { /* no floor: transfer, wait and floor unknown */
      rp_hw_printf(hw, "<td>unknown</td><td>unknown</td><td>unknown</td><td>unknown</td><td>");
    } else {
      rp_hw_td_ms(hw, rp_per_step_us(tl, rp_collective_transfer_ns(c)));
      rp_hw_td_ms(hw, rp_per_step_us(tl, c->wait_ns));
      rp_hw_td_ms(hw, rp_per_step_us(tl, c->first_wait_ns));
      rp_hw_printf(hw, "<td data-value=\"%.6g\">%.1f</td><td>", (double)c->floor_ns / 1000.0,
                   (double)c->floor_ns / 1000.0);
    }
    rp_hw_text(hw, from);
    rp_hw_printf(hw, "</td></tr>");
  }
  rp_hw_printf(hw, "</tbody></table></div>");
}

void rp_html_timeline(rp_hw *hw, size_t stage_index) {
  const an_stage_report *st = &hw->rep->stages[stage_index];
  const char *tok = hw->stage_tok[stage_index];
  if (!st->timeline) return;
  rp_hw_printf(hw, "<h%d id=\"%stime-%s\">Time account (per step)</h%d>", 3 + hw->hd, hw->idp, tok,
               3 + hw->hd);
  steps_para(hw, st->timeline);
  account_para(hw, st->timeline);
  char hb[1024], id[96];
  if (rp_host_block_text(st->timeline, hb, sizeof hb)) {
    an_summary_anchor(id, sizeof id, "host", st->id, 0);
    rp_hw_printf(hw, "<p class=\"account\" id=\"%s%s\">", hw->idp, id);
    rp_hw_text(hw, hb);
    rp_hw_printf(hw, "</p>");
  }
  causes_table(hw, st, tok);
  collectives_table(hw, stage_index, tok);
}
