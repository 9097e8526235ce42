/*
 * report/timeline_md.c - "What to try first" and each stage's "Time account" in the
 * default Markdown layout (timeline_report.h, docs/report.md). Every time is in ms per
 * step, so an item's bound and its evidence row print the same number.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "report/md.h"
#include "report/text.h"
#include "report/timeline_report.h"
#include "util/limits.h"

/* ---------------------------------------------------------------- summary */

static void item_names(FILE *f, const an_summary_item *it, rp_name_fn name, const void *ctx) {
  size_t shown = it->n_kernels < 3 ? it->n_kernels : 3;
  for (size_t k = 0; k < shown; k++) {
    if (k) fputs(", ", f);
    rp_md_code(f, name(ctx, it->stage_id, it->kernels[k]));
  }
  if (it->n_kernels > shown) fprintf(f, " and %zu more", it->n_kernels - shown);
}

/* What the item names: the CPU activity, the pattern, the kernels; then the location. */
static void item_subject(FILE *f, const an_summary_item *it, rp_name_fn name, const void *ctx) {
  bool any = false;
  const char *lead = "";
  const char *what = rp_item_subject(it, &lead);
  if (what) {
    fprintf(f, " %s", lead);
    rp_md_code(f, what);
    any = true;
  }
  if (it->n_roles) { /* a chain's pieces by role; its fusion row lists the kernels */
    fputs(any ? ": " : " ", f);
    for (size_t k = 0; k < it->n_roles; k++) fprintf(f, "%s%s", k ? ", " : "", it->roles[k]);
    fprintf(f, " (%zu kernels)", it->n_kernels);
  } else if (it->n_kernels) {
    fputs(any ? ": " : " ", f);
    item_names(f, it, name, ctx);
  }
  if (it->location) {
    fprintf(f, " %s ", rp_item_location_lead(it->location_kind));
    rp_md_code(f, it->location);
  }
}

/* The item's stage label for an anchor of the item's own stage ("PREFIX<stage id>-ROW"),
 * so every link of an item names the stage alike (review 5: "K1 in extend/prefill" beside
 * "K2 in extend"); NULL, the anchor's own stage id, for another stage's anchor. */
static const char *own_stage_label(const an_summary_item *it, const char *anchor) {
  const char *dash = strchr(anchor, '-'), *last = strrchr(anchor, '-');
  size_t n = strlen(it->stage_id);
  bool own = dash && last > dash && (size_t)(last - dash - 1) == n &&
             strncmp(dash + 1, it->stage_id, n) == 0;
  return own ? it->stage_label : NULL;
}

/* The time-account rows the item sums, the part of each it takes, and how many more the
 * JSON report lists. */
static void item_rows(FILE *f, const an_summary_item *it) {
  char label[160], id[64], g[32];
  rp_fmt_ms(g, sizeof g, it->least_gap_us);
  for (size_t k = 0; k < it->n_rows && k < RP_ITEM_ROWS_SHOWN; k++) {
    rp_item_row_anchor(it, k, id, sizeof id);
    rp_evidence_label(id, own_stage_label(it, id), label, sizeof label);
    fprintf(f, "%s[%s](#%s)", k ? ", " : " Evidence: ", label, id);
    if (it->rows[k].part != AN_PART_ALL)
      fprintf(f, " (its gaps %s %s ms)", it->rows[k].part == AN_PART_LONG ? "of at least" : "under",
              g);
  }
  if (it->n_rows > RP_ITEM_ROWS_SHOWN)
    fprintf(f, " and %zu more rows (the JSON report's item rows)", it->n_rows - RP_ITEM_ROWS_SHOWN);
}

static void item_evidence(FILE *f, const an_summary_item *it) {
  char label[160];
  if (it->n_rows) {
    item_rows(f, it);
  } else {
    rp_evidence_label(it->anchor, it->stage_label, label, sizeof label);
    fprintf(f, " Evidence: [%s](#%s)", label, it->anchor);
  }
  for (size_t k = 0; k < it->n_more; k++) {
    rp_evidence_label(it->more[k], own_stage_label(it, it->more[k]), label, sizeof label);
    fprintf(f, ", [%s](#%s)", label, it->more[k]);
  }
  fputc('\n', f);
}

static void summary_line(FILE *f, size_t i, const an_summary_item *it, an_workload w,
                         rp_name_fn name, const void *ctx) {
  char bound[160], basis[RP_BASIS_BYTES];
  rp_summary_bound(it, true, bound, sizeof bound);
  rp_summary_basis(it, basis, sizeof basis);
  fprintf(f, "%zu. **%s**", i + 1, rp_summary_action(it, w));
  item_subject(f, it, name, ctx);
  fprintf(f, ": %s; basis: ", bound);
  rp_md_cell_text(f, basis);
  fputc('.', f);
  item_evidence(f, it);
}

static void bottleneck_line(FILE *f, const an_bottleneck *b) {
  if (!b->stage_label) return;
  char tail[RP_BOTTLENECK_BYTES];
  fprintf(f, "**The GPU waits in %s**%s\n\n", b->stage_label,
          rp_bottleneck_tail(b, tail, sizeof tail));
}

void rp_summary_markdown(FILE *f, const an_report *r, rp_name_fn name, const void *ctx) {
  fputs("\n## What to try first\n\n", f);
  bottleneck_line(f, &r->bottleneck);
  if (!r->n_summary) {
    fputs("No action has a bound over the summary's bar (settings summary.*, docs/report.md).\n",
          f);
    return;
  }
  fputs(
      "Each item: the action, at most what it can win per step, and the basis of that bound "
      "(docs/report.md). Ranked by bound times a weight per action (summary.weights).\n\n",
      f);
  for (size_t i = 0; i < r->n_summary; i++)
    summary_line(f, i, &r->summary[i], r->run.workload.value, name, ctx);
}

/* ---------------------------------------------------------------- time account */

static void steps_line(FILE *f, const an_stage_timeline *tl) {
  char out[32];
  rp_fmt_ms(out, sizeof out, (double)tl->outside_ns / 1000.0);
  if (!tl->n_steps)
    fputs(
        "No step markers: the stage's window (first kernel start to last kernel end) is the "
        "step.",
        f);
  else
    fprintf(f, "%zu step%s counted (`", tl->n_steps, tl->n_steps == 1 ? "" : "s");
  if (tl->n_steps) {
    rp_md_cell_text(f, tl->steps[0].name);
    fprintf(f, "`%s)", tl->n_steps > 1 ? ", ..." : "");
    if (tl->n_warmup)
      fprintf(f, ", %zu warm-up step%s left out", tl->n_warmup, tl->n_warmup == 1 ? "" : "s");
    fputc('.', f);
  }
  int64_t other_ns = tl->outside_ns - tl->setup_ns;
  if (tl->setup_ns > 0) {
    char su[32];
    rp_fmt_ms(su, sizeof su, (double)tl->setup_ns / 1000.0);
    fprintf(f,
            " One-time setup (kernels launched under a warm-up annotation%s): %s ms, not "
            "counted.",
            tl->n_steps ? "" : " or before the last one ended", su);
  }
  if (other_ns > 0) {
    rp_fmt_ms(out, sizeof out, (double)other_ns / 1000.0);
    fprintf(f,
            " Kernel time outside the counted steps (a previous step's tail, work between "
            "steps, warm-ups): %s ms, not counted.",
            out);
  }
  if (tl->placed_by_gpu_time)
    fprintf(f,
            " %zu kernel%s without a launch record %s placed by GPU time, in the step whose GPU "
            "window %s start%s in.",
            tl->placed_by_gpu_time, tl->placed_by_gpu_time == 1 ? "" : "s",
            tl->placed_by_gpu_time == 1 ? "is" : "are", tl->placed_by_gpu_time == 1 ? "it" : "they",
            tl->placed_by_gpu_time == 1 ? "s" : "");
  if (other_ns > 0)
    fprintf(f, " The counted %s %.1f%% of the stage's kernel time%s.",
            tl->n_steps ? "steps hold" : "window holds", rp_step_coverage_pct(tl),
            tl->setup_ns > 0 ? " outside the setup" : "");
  fputc('\n', f);
}

static void account_line(FILE *f, const an_stage_timeline *tl) {
  const an_time_account *a = &tl->total;
  char s[32], b[32], i[32], k[32], p[32];
  rp_fmt_ms(s, sizeof s, rp_per_step_us(tl, a->span_ns));
  rp_fmt_ms(b, sizeof b, rp_per_step_us(tl, a->busy_ns));
  rp_fmt_ms(i, sizeof i, rp_per_step_us(tl, a->idle_ns));
  rp_fmt_ms(k, sizeof k, rp_per_step_us(tl, a->kernel_ns));
  rp_fmt_ms(p, sizeof p, rp_per_step_us(tl, a->pdl_wait_ns));
  double idle_pct = a->span_ns ? (double)a->idle_ns / (double)a->span_ns * 100.0 : 0;
  fprintf(f, "\nPer step: span **%s ms** = GPU busy %s ms + idle %s ms (%.1f%%).", s, b, i,
          idle_pct);
  if (a->kernel_ns > a->busy_ns) {
    char o[32];
    rp_fmt_ms(o, sizeof o, rp_per_step_us(tl, a->kernel_ns - a->busy_ns));
    fprintf(f, " Kernel time (%s ms) exceeds busy time by %s ms: kernels run concurrently.", k, o);
  }
  if (a->pdl_wait_ns > 0)
    fprintf(f,
            " Of the kernel time, %s ms/step is a kernel waiting on its stream's predecessor "
            "(programmatic dependent launch).",
            p);
  if (a->graph_kernel_ns > 0 && a->kernel_ns > 0)
    fprintf(f, " %.0f%% of the kernel time is graph-replayed.",
            (double)a->graph_kernel_ns / (double)a->kernel_ns * 100.0);
  fputc('\n', f);
}

static void cause_row(FILE *f, const an_stage_timeline *tl, const an_idle_cause *c, const char *id,
                      size_t row, double step_us) {
  char t[32], g[32];
  double us = rp_per_step_us(tl, c->idle_ns);
  rp_fmt_ms(t, sizeof t, us);
  rp_fmt_ms(g, sizeof g, (double)c->max_gap_ns / 1000.0);
  fprintf(f, "| <a id=\"%s\"></a>I%zu | %s | ", id, row + 1, rp_idle_kind(c->kind));
  if (c->what)
    rp_md_code(f, c->what);
  else
    fputc('-', f);
  fputs(" | ", f);
  rp_md_cell_text(f, c->location ? c->location : "-");
  double pct = step_us > 0 ? us / step_us * 100.0 : 0;
  fprintf(f, " | %s | ", t);
  if (pct > 0 && pct < 0.05)
    fputs("<0.1%", f);
  else
    fprintf(f, "%.1f%%", pct);
  fprintf(f, " | %zu | %s |\n", c->gaps, g);
}

static void causes_table(FILE *f, const an_report *r, const an_stage_report *st) {
  const an_stage_timeline *tl = st->timeline;
  const an_time_account *a = &tl->total;
  if (!a->n_causes) return;
  double step_us = rp_per_step_us(tl, a->span_ns);
  fputs(
      "\n| # | Idle cause | CPU op or call | Python location | Idle (ms/step) | Share of step | "
      "Gaps | Longest (ms) |\n| ---: | --- | --- | --- | ---: | ---: | ---: | ---: |\n",
      f);
  size_t hidden = 0;
  int64_t hidden_ns = 0;
  for (size_t i = 0; i < a->n_causes; i++) {
    char id[64];
    an_summary_anchor(id, sizeof id, "idle", st->id, i);
    if (i < RP_TIMELINE_CAUSES_SHOWN || rp_summary_links_to(r, id)) {
      cause_row(f, tl, &a->causes[i], id, i, step_us);
    } else {
      hidden++;
      hidden_ns += a->causes[i].idle_ns;
    }
  }
  char t[32];
  rp_fmt_ms(t, sizeof t, rp_per_step_us(tl, hidden_ns));
  if (hidden)
    fprintf(f, "\n%zu more cause%s (%s ms/step) in the JSON report.\n", hidden,
            hidden == 1 ? "" : "s", t);
}

static void collectives_table(FILE *f, const an_stage_report *st, rp_name_fn name,
                              const void *ctx) {
  const an_stage_timeline *tl = st->timeline;
  if (!tl->n_collectives) return;
  fputs(
      "\n| # | Collective | Instances/step | Time (ms/step) | Transfer (ms/step) | Wait "
      "(ms/step) | First of step, wait (ms/step) | Floor (us) | Floor from |\n"
      "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
      f);
  double n = (double)(tl->n_steps ? tl->n_steps : 1);
  for (size_t i = 0; i < tl->n_collectives; i++) {
    const an_collective_time *c = &tl->collectives[i];
    char id[64], t[32], x[32], w[32], fw[32], from[160];
    an_summary_anchor(id, sizeof id, "wait", st->id, i);
    rp_fmt_ms(t, sizeof t, rp_per_step_us(tl, c->total_ns));
    rp_fmt_ms(x, sizeof x, rp_per_step_us(tl, rp_collective_transfer_ns(c)));
    rp_floor_from(from, sizeof from, c);
    rp_fmt_ms(w, sizeof w, rp_per_step_us(tl, c->wait_ns));
    rp_fmt_ms(fw, sizeof fw, rp_per_step_us(tl, c->first_wait_ns));
    fprintf(f, "| <a id=\"%s\"></a>W%zu | ", id, i + 1);
    rp_md_code(f, name(ctx, st->id, c->kernel));
    if (rp_collective_context(c)) { /* one of the rows a collective's launch contexts split */
      fputs(" — ", f);
      rp_md_cell_text(f, rp_collective_context(c));
    }
    fprintf(f, " | %.1f | %s | %s | %s | %s | %.1f | %s |\n", (double)c->instances / n, t, x, w, fw,
            (double)c->floor_ns / 1000.0, from);
  }
}

void rp_timeline_markdown(FILE *f, const an_report *r, const an_stage_report *st, rp_name_fn name,
                          const void *ctx) {
  const an_stage_timeline *tl = st->timeline;
  if (!tl) return;
  fprintf(f, "\n### Time account: %s (per step)\n\n", st->label);
  steps_line(f, tl);
  account_line(f, tl);
  causes_table(f, r, st);
  collectives_table(f, st, name, ctx);
}
