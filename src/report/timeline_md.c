/*
 * report/timeline_md.c - "What to try first" and each stage's "Time account" in the
 * default Markdown layout (timeline_report.h, docs/report.md). Every time is in ms per
 * step, so an item's bound and its evidence row print the same number.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "report/item_text.h"
#include "report/md.h"
#include "report/text.h"
#include "report/timeline_report.h"
#include "util/limits.h"

/* ---------------------------------------------------------------- summary */

/* An item's parts as Markdown (report/item_text.h): the same words as the HTML. */
typedef struct md_item {
  FILE *f;
  rp_name_fn name;
  const void *ctx;
} md_item;

static void md_part(void *ctx, rp_part part, const char *s, const char *ref) {
  const md_item *m = ctx;
  switch (part) {
    case RP_PART_ACTION:
    case RP_PART_BOUND:
      fprintf(m->f, "**%s**", s);
      return;
    case RP_PART_NAME:
    case RP_PART_LOCATION:
      rp_md_code(m->f, s);
      return;
    case RP_PART_KERNEL: /* ref: the item's stage */
      rp_md_code(m->f, m->name(m->ctx, ref, s));
      return;
    case RP_PART_LINK:
      fprintf(m->f, "[%s](#%s)", s, ref);
      return;
    case RP_PART_TEXT:
    case RP_PART_BASIS:
      rp_md_cell_text(m->f, s);
      return;
  }
}

static void summary_line(FILE *f, size_t i, const an_summary_item *it, an_workload w,
                         rp_name_fn name, const void *ctx) {
  md_item m = {f, name, ctx};
  fprintf(f, "%zu. ", i + 1);
  rp_item_parts(it, w, md_part, &m);
  fputc('\n', f);
}

static void bottleneck_line(FILE *f, const an_bottleneck *b) {
  if (!b->stage_label) return;
  char tail[RP_BOTTLENECK_BYTES];
  fprintf(f, "**The GPU waits in %s**%s\n\n", b->stage_label,
          rp_bottleneck_tail(b, tail, sizeof tail));
}

/* Each stage whose GEMMs run near their attainable rate: one line (review 22 defect 8). */
static void gemm_rate_lines(FILE *f, const an_report *r) {
  char tail[RP_GEMM_RATE_BYTES];
  for (size_t i = 0; i < r->n_stages; i++)
    if (r->stages[i].gemm_rate.near)
      fprintf(f, "**" RP_GEMM_RATE_HEAD "%s**%s\n\n", r->stages[i].label,
              rp_gemm_rate_tail(&r->stages[i].gemm_rate, tail, sizeof tail));
}

/* The smaller leads after the numbered items (none: nothing). */
static void leads_markdown(FILE *f, const an_report *r, rp_name_fn name, const void *ctx) {
  if (!r->n_leads) return;
  fprintf(f, "\n%s\n\n", rp_leads_intro(r));
  for (size_t i = 0; i < r->n_leads; i++) {
    md_item m = {f, name, ctx};
    fputs("- ", f);
    rp_item_parts(&r->summary[r->n_summary + i], r->run.workload.value, md_part, &m);
    fputc('\n', f);
  }
}

void rp_summary_markdown(FILE *f, const an_report *r, rp_name_fn name, const void *ctx) {
  fputs("\n## What to try first\n\n", f);
  bottleneck_line(f, &r->bottleneck);
  char filtered[RP_FILTERED_TOP_BYTES];
  if (rp_filtered_top(r, filtered, sizeof filtered)) fprintf(f, "%s\n\n", filtered);
  gemm_rate_lines(f, r);
  if (!r->n_summary) {
    fputs("No action has a bound over the summary's bar (settings summary.*, docs/report.md).\n",
          f);
    leads_markdown(f, r, name, ctx); /* a lead can stand alone (review 21 defect 10) */
    return;
  }
  fputs(
      "Each item: the action, at most what it can win per step, and the basis of that bound "
      "(docs/report.md). Ranked by bound times a weight per action (summary.weights).\n\n",
      f);
  for (size_t i = 0; i < r->n_summary; i++)
    summary_line(f, i, &r->summary[i], r->run.workload.value, name, ctx);
  leads_markdown(f, r, name, ctx);
}

/* ---------------------------------------------------------------- time account */

static void steps_line(FILE *f, const an_stage_timeline *tl) {
  char out[32];
  rp_fmt_ms(out, sizeof out, (double)tl->outside_ns / 1000.0);
  if (!tl->n_steps)
    fputs(RP_NO_STEPS_TEXT, f);
  else
    fprintf(f, "%zu step%s counted (`", tl->n_steps, tl->n_steps == 1 ? "" : "s");
  if (tl->n_steps) {
    rp_md_cell_text(f, tl->steps[0].name);
    fprintf(f, "`%s)", tl->n_steps > 1 ? ", ..." : "");
    if (tl->n_warmup)
      fprintf(f, ", %zu warm-up step%s left out", tl->n_warmup, tl->n_warmup == 1 ? "" : "s");
    fputc('.', f);
    char nested[RP_NESTED_BYTES];
    fputs(rp_nested_markers(tl, nested, sizeof nested), f);
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
  char unrec[768]; /* the line names both readings and the other streams' time */
  if (rp_graph_unrecorded_text(tl, unrec, sizeof unrec)) fprintf(f, " %s", unrec);
  char host[384];
  if (rp_host_extent_text(tl, host, sizeof host)) fprintf(f, " %s", host);
  char lead[384];
  if (rp_launch_lead_text(tl, lead, sizeof lead)) fprintf(f, " %s", lead);
  rp_drain_parts d;
  if (rp_drain_sentence(tl, &d)) {
    fprintf(f, " %s", d.lead);
    rp_md_code(f, d.what);
    if (d.location) {
      fputs(" at ", f);
      rp_md_code(f, d.location);
    }
    fputs(d.tail, f);
  }
  fputc('\n', f);
}

static void cause_row(FILE *f, const an_stage_timeline *tl, const an_idle_cause *c, const char *id,
                      size_t row, double step_us) {
  char t[32], g[32];
  double us = rp_per_step_us(tl, c->idle_ns);
  rp_fmt_ms(t, sizeof t, us);
  rp_fmt_ms(g, sizeof g, (double)c->max_gap_ns / 1000.0);
  fprintf(f, "| <a id=\"%s\"></a>I%zu | %s | ", id, row + 1, rp_idle_kind(c->kind));
  char wb[256];
  const char *what = rp_cause_what(c, wb, sizeof wb);
  if (what)
    rp_md_code(f, what);
  else
    fputc('-', f);
  fputs(" | ", f);
  rp_md_cell_text(f, c->location ? c->location : "-");
  double pct = step_us > 0 ? us / step_us * 100.0 : 0;
  char share[32];
  rp_fmt_share(share, sizeof share, pct);
  fprintf(f, " | %s | %s | %zu | %s |\n", t, share, c->gaps, g);
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
    char id[64], t[32], x[32], w[32], fw[32], fl[32], from[RP_FLOOR_FROM_BYTES];
    an_summary_anchor(id, sizeof id, "wait", st->id, i);
    rp_fmt_ms(t, sizeof t, rp_per_step_us(tl, c->total_ns));
    rp_collective_ms(x, sizeof x, tl, c, rp_collective_transfer_ns(c));
    rp_floor_from(from, sizeof from, c);
    rp_collective_wait_ms(w, sizeof w, tl, c, c->wait_ns);
    rp_collective_wait_ms(fw, sizeof fw, tl, c, c->first_wait_ns);
    if (rp_collective_unknown(c))
      snprintf(fl, sizeof fl, "unknown");
    else
      snprintf(fl, sizeof fl, "%.1f", (double)c->floor_ns / 1000.0);
    fprintf(f, "| <a id=\"%s\"></a>W%zu | ", id, i + 1);
    rp_md_code(f, name(ctx, st->id, c->kernel));
    if (rp_collective_context(c)) { /* one of the rows a collective's launch contexts split */
      fputs(" — ", f);
      rp_md_cell_text(f, rp_collective_context(c));
    }
    fprintf(f, " | %.1f | %s | %s | %s | %s | %s | ", (double)c->instances / n, t, x, w, fw, fl);
    rp_md_cell_text(f, from);
    fputs(" |\n", f);
  }
}

void rp_timeline_markdown(FILE *f, const an_report *r, const an_stage_report *st, rp_name_fn name,
                          const void *ctx) {
  const an_stage_timeline *tl = st->timeline;
  if (!tl) return;
  fprintf(f, "\n### Time account: %s (per step)\n\n", st->label);
  steps_line(f, tl);
  account_line(f, tl);
  char hb[1024], id[96];
  if (rp_host_block_text(tl, hb, sizeof hb)) {
    an_summary_anchor(id, sizeof id, "host", st->id, 0);
    fprintf(f, "\n<a id=\"%s\"></a>", id);
    rp_md_cell_text(f, hb);
    fputc('\n', f);
  }
  causes_table(f, r, st);
  collectives_table(f, st, name, ctx);
}
