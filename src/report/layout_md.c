/*
 * report/layout_md.c - the default Markdown layout (layout_md.h, docs/report.md):
 * header with provenance, "What to try first", hints where the trace limits the
 * analysis, then per stage the time by category and the kernel, overlap and fusion
 * tables under real headings, and a legend.
 *
 * Numbers: each table picks one unit (ms when its largest time reaches 1 ms, else us),
 * stated in its column heads; a non-zero time or share never prints as zero. Every
 * share of a stage has one denominator, the stage's kernel-time sum (its GPU busy time
 * for a stage with only an overlap block), stated in the stage's first line.
 * Names: display names (report/names.h), unique over all tables of one stage, in code
 * spans so '<' '>' stay literal on GitHub and in a pager; keys stay full (JSON).
 */
#include "report/layout_md.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap.h"
#include "analysis/summary.h"
#include "report/legend.h"
#include "report/md.h"
#include "report/names.h"
#include "report/ranks_report.h"
#include "report/stage_names.h"
#include "report/text.h"
#include "report/timeline_report.h"

/* ---------------------------------------------------------------- numbers */

typedef struct unit {
  const char *name;
  double per_us;
} unit;

static unit unit_for(double max_us) {
  return max_us >= 1000.0 ? (unit){"ms", 1000.0} : (unit){"us", 1.0};
}

/* The headline's unit: ms, or us for a span that rounds to 0.00 ms (review 12 on
 * hta_triton_tiny: "span 0.00 ms = GPU busy 0.00 ms + idle 0.00 ms" hid a 1.76 us kernel). */
static unit headline_unit(double span_us) {
  return rp_prints_in_us(span_us) ? (unit){"us", 1.0} : (unit){"ms", 1000.0};
}

static void fmt_time(char *b, size_t cap, double us, unit u) {
  rp_md_number(b, cap, us / u.per_us);
}

/* ---------------------------------------------------------------- names */

/* Display names of every kernel a stage's tables show (report/stage_names.h: the HTML
 * reads the same set). */
typedef rp_stage_names stage_names;

static const char *names_get(const stage_names *s, const char *full) {
  return rp_stage_names_get(s, full);
}

/* A code span, with a longer fence when the text holds a backtick; '|' escaped. */
static void code_span(FILE *f, const char *s) {
  const char *fence = strchr(s, '`') ? "`` " : "`";
  const char *close = strchr(s, '`') ? " ``" : "`";
  fputs(fence, f);
  rp_md_cell_text(f, s);
  fputs(close, f);
}

/* ---------------------------------------------------------------- header */

static void fact_row(FILE *f, const char *what, const char *value, const char *from) {
  fprintf(f, "| %s | ", what);
  rp_md_cell_text(f, value);
  fprintf(f, " | %s |\n", from);
}

/* A framework nothing detected is shown as not detected: its rules (the packs' default)
 * serve only framework-specific hints, and the row says so. */
static void framework_row(FILE *f, const char *what, const an_framework_fact *fw) {
  if (fw->source != AN_SOURCE_DEFAULT && fw->evidence) { /* the name that decided it */
    fprintf(f, "| %s | ", what);
    rp_md_cell_text(f, fw->label);
    fputs(" | trace (", f);
    code_span(f, fw->evidence);
    fputs(") |\n", f);
    return;
  }
  if (fw->source != AN_SOURCE_DEFAULT) {
    fact_row(f, what, fw->label, rp_source(fw->source));
    return;
  }
  fprintf(f,
          "| %s | not detected | nothing in the inputs names it (framework-specific rules use "
          "the packs' default, ",
          what);
  rp_md_cell_text(f, fw->label);
  fputs(") |\n", f);
}

static void inputs_row(FILE *f, const char *what, const char *const *v, size_t n,
                       const char *from) {
  fprintf(f, "| %s | ", what);
  for (size_t i = 0; i < n; i++) {
    if (i) fputs("<br>", f);
    code_span(f, v[i]);
  }
  fprintf(f, " | %s |\n", from);
}

/* The workload kind and the name that decided it. */
static void workload_row(FILE *f, const an_workload_fact *w) {
  fprintf(f, "| Workload | %s | ", rp_workload(w->value));
  if (w->evidence && w->source == AN_SOURCE_TRACE_CONTENT) {
    fputs("trace (", f);
    code_span(f, w->evidence);
    fputs(") |\n", f);
  } else if (w->evidence) {
    fprintf(f, "%s (", rp_source(w->source));
    rp_md_cell_text(f, w->evidence);
    fputs(") |\n", f);
  } else {
    fputs("nothing in the trace says |\n", f);
  }
}

/* torch.compile'd code the run executed, and the name that shows it (no row when none). */
static void compiled_row(FILE *f, const an_compiled_fact *c) {
  if (!c->compiled) return;
  fputs(c->by_kernel ? "| Compiled | torch.compile (an Inductor kernel) | trace ("
                     : "| Compiled | torch.compile | trace (",
        f);
  code_span(f, c->evidence);
  fputs(") |\n", f);
}

static void provenance(FILE *f, const an_report *r) {
  const an_provenance *p = &r->run;
  bool two = p->mode == AN_MODE_MAPPING_FORMAL;
  fputs("| Run | Value | From |\n| --- | --- | --- |\n", f);
  framework_row(f, "Framework", &p->framework);
  if (two && p->mapping_framework.id != p->framework.id)
    framework_row(f, "Mapping framework", &p->mapping_framework);
  const an_run_context *c = &p->context;
  char model_from[RP_MODEL_TEXT_BYTES];
  fprintf(f, "| Model | ");
  rp_md_cell_text(f, c->model.value ? c->model.value : "unknown");
  fputs(" | ", f);
  rp_md_cell_text(f, rp_model_from(r, model_from, sizeof model_from));
  fputs(" |\n", f);
  char tp[32];
  snprintf(tp, sizeof tp, "%ld", c->tp_size.value);
  fact_row(f, "TP size", tp, rp_source(c->tp_size.source));
  char gpu_buf[RP_GPU_BYTES];
  const char *gpu = rp_gpu(c, gpu_buf, sizeof gpu_buf);
  fact_row(f, "GPU", gpu ? gpu : "unknown", rp_source(c->gpu.source));
  fact_row(f, "Platform", rp_platform(c->platform.value), rp_source(c->platform.source));
  workload_row(f, &p->workload);
  char shape[160], shape_from[256];
  if (rp_step_shape(&p->step_shape, p->workload.value, shape, sizeof shape, shape_from,
                    sizeof shape_from)) {
    fputs("| Step shape | ", f);
    rp_md_cell_text(f, shape);
    fputs(" | Input Dims of ", f);
    code_span(f, p->step_shape.op);
    fputs(" (", f);
    rp_md_cell_text(f, shape_from);
    fputs(") |\n", f);
  }
  compiled_row(f, &p->compiled);
  fact_row(f, "Mode", rp_mode(p), "inputs");
  if (two) inputs_row(f, "Mapping traces", p->mapping_inputs, p->n_mapping_inputs, "command line");
  size_t n_in = 0;
  const char *const *in = rp_input_traces(p, &n_in);
  inputs_row(f, two ? "Formal traces" : "Input traces", in, n_in,
             in == p->rank_inputs ? "directory" : "command line");
  if (r->limits.ranks_compared) {
    char ranks[128];
    snprintf(ranks, sizeof ranks, "%ld (tables: the lowest rank; Ranks section: every rank)",
             r->limits.ranks_analysed);
    fact_row(f, "Ranks read", ranks, "directory");
  }
  if (p->version) fact_row(f, "triage", p->version, "build");
}

/* What the stage's idle outside the steps is, from its longest gap (an_stage_timeline
 * outside_*; brief 12 defect 1): where it lies and what the host sat in across it, so that
 * nobody reads it as a lever; nothing when no gap of timeline.long_gap_us holds it. */
static void outside_idle_note(FILE *f, const an_stage_timeline *tl) {
  if (!tl->outside_gaps || tl->outside_longest_ns <= 0) return;
  static const char *const where[] = {"before the steps", "between steps", "after the steps"};
  const char *at = where[tl->outside_where <= AN_OUTSIDE_AFTER ? tl->outside_where : 1];
  if (tl->outside_gaps == 1)
    fprintf(f, " (%.2f ms of it in one gap %s", (double)tl->outside_longest_ns / 1e6, at);
  else
    fprintf(f, " (%.2f ms of it in %zu gaps of at least %g ms; the longest, %.2f ms, %s",
            (double)tl->outside_idle_ns / 1e6, tl->outside_gaps, (double)tl->outside_min_ns / 1e6,
            (double)tl->outside_longest_ns / 1e6, at);
  if (!tl->outside_call || 2 * tl->outside_call_ns < tl->outside_longest_ns) {
    fputs(", with no host call across most of it; no per-step bound counts it)", f);
    return;
  }
  fprintf(f, ", while a thread that issues GPU work sat %.2f ms in ",
          (double)tl->outside_call_ns / 1e6);
  code_span(f, tl->outside_call);
  if (tl->outside_op) {
    fputs(" under ", f);
    code_span(f, tl->outside_op);
  }
  if (tl->outside_location) {
    fputs(" at ", f);
    rp_md_cell_text(f, tl->outside_location);
  }
  fputs(tl->outside_blocking
            ? ": a call that returns when GPU work ends, across an idle GPU, so the work it "
              "waited on is not in the trace (a previous batch, work before the capture); not "
              "idle of the counted steps, and no per-step bound counts it)"
        : tl->outside_setup
            ? ": one-time setup (allocation, initialisation) outside the counted steps; no "
              "per-step bound counts it)"
            : ": host work outside the counted steps; no per-step bound counts it)",
        f);
}

/* A stage's headline from its time account: per step, as the time account and the summary
 * count it, and what the steps leave out. */
static void step_headline(FILE *f, const an_stage_report *st, bool first) {
  const an_stage_timeline *tl = st->timeline;
  double n = tl->n_steps ? (double)tl->n_steps : 1.0;
  const an_time_account *a = &tl->total;
  unit u = headline_unit((double)a->span_ns / 1e3 / n);
  double k = 1e3 * u.per_us * n; /* ns per printed unit, per step */
  fprintf(f,
          "%s- **%s**: per %s, span %.2f %s = GPU busy %.2f %s + idle %.2f %s (kernel time "
          "%.2f %s)",
          first ? "\n" : "", st->label, tl->n_steps ? "step" : "stage window (no steps)",
          (double)a->span_ns / k, u.name, (double)a->busy_ns / k, u.name, (double)a->idle_ns / k,
          u.name, (double)a->kernel_ns / k, u.name);
  if (tl->n_steps) fprintf(f, " over %zu step%s", tl->n_steps, tl->n_steps == 1 ? "" : "s");
  if (tl->host_exceeds) /* the GPU span is a sliver of the step (review 14 defect 2) */
    fprintf(f, "; the host's work spans %.2f ms a step, %.0fx the GPU span: host-bound",
            (double)a->host_ns / 1e6 / n, (double)a->host_ns / (double)a->span_ns);
  double busy_out = st->gpu_busy_us - (double)a->busy_ns / 1e3,
         idle_out = st->gpu_idle_us - (double)a->idle_ns / 1e3;
  if (st->overlap && (busy_out >= 5 || idle_out >= 5)) {
    fprintf(f, "; outside %s, the trace window adds GPU busy %.2f ms and idle %.2f ms",
            tl->n_steps ? "the steps" : "it", busy_out > 0 ? busy_out / 1000.0 : 0,
            idle_out > 0 ? idle_out / 1000.0 : 0);
    if (idle_out >= 5) outside_idle_note(f, tl);
  }
  fputc('\n', f);
}

static void busy_lines(FILE *f, const an_report *r) {
  bool any = false;
  for (size_t i = 0; i < r->n_stages; i++) {
    const an_stage_report *st = &r->stages[i];
    if (st->timeline && st->timeline->total.span_ns > 0) {
      step_headline(f, st, !any);
      any = true;
      continue;
    }
    if (!st->overlap) continue;
    unit u = unit_for(st->gpu_busy_us);
    char busy[32], idle[32];
    fmt_time(busy, sizeof busy, st->gpu_busy_us, u);
    fmt_time(idle, sizeof idle, st->gpu_idle_us, u);
    fprintf(f, "%s- **%s**: GPU busy %s %s, idle %s %s (kernel time %.2f ms)\n", any ? "" : "\n",
            st->label, busy, u.name, idle, u.name, st->kernel_total_us / 1000.0);
    any = true;
  }
}

/* ---------------------------------------------------------------- summary */

static const stage_names *names_of(const an_report *r, const stage_names *all, const char *id) {
  for (size_t i = 0; i < r->n_stages; i++)
    if (strcmp(r->stages[i].id, id) == 0) return &all[i];
  return NULL;
}

/* The display names of the layout, for the summary and the time account. */
typedef struct name_ctx {
  const an_report *r;
  const stage_names *all;
} name_ctx;

static const char *display_name(const void *ctx, const char *stage_id, const char *full) {
  const name_ctx *c = ctx;
  const stage_names *nm = names_of(c->r, c->all, stage_id);
  return nm ? names_get(nm, full) : full;
}

/* ---------------------------------------------------------------- hints */

static void stack_hint(FILE *f, const an_report *r, const te_rules *rules) {
  fputs(
      "- **No Python stacks.** No kernel resolved to a Python location, so locations read "
      "`unresolved`. Record the trace with `with_stack=True`:\n",
      f);
  if (!rules) return;
  const te_list_map *m = &te_rules_settings(rules)->report_stack_hints;
  /* a defaulted framework is a guess: give the generic way */
  const te_string_list *l =
      r->limits.framework_defaulted ? NULL : te_list_map_get(m, r->run.framework.id);
  if (!l) l = te_list_map_get(m, "other");
  for (size_t i = 0; l && i < l->n; i++) fprintf(f, "  - %s\n", l->items[i]);
}

/* What keeps launches from a roofline (docs/roofline.md): an unknown GPU, or per stage
 * the launches without shapes, by cause. */
static void roofline_limits(FILE *f, const an_report *r) {
  const an_roofline_device *d = &r->roofline_device;
  if (d->gpu && !d->id) {
    fputs("- **No roofline.** The GPU `", f);
    rp_md_cell_text(f, *d->gpu ? d->gpu : "(blank name)");
    fprintf(f,
            "` (arch %ld, %ld SMs) is not in the device pack: add it under `devices:` in a "
            "rules pack (rules/75-roofline.yaml, docs/roofline.md).\n",
            d->arch, d->sms);
    return;
  }
  const an_roofline_model *m = &r->roofline_model;
  char from[RP_MODEL_TEXT_BYTES], check[RP_MODEL_TEXT_BYTES], attn[RP_ATTENTION_TEXT_BYTES];
  const char *checked = rp_model_check(m, check, sizeof check);
  const char *how = rp_model_ident(&m->from, from, sizeof from);
  const char *attention = rp_attention_check(&m->attention, attn, sizeof attn);
  if (m->id && checked) {
    fprintf(f, "- **Model dimensions.** %s (%s), identified by ", m->label, m->source);
    rp_md_cell_text(f, how ? how : "?");
    fputs(m->used ? ": the replayed GEMMs take its shapes; checked: "
                  : ": not used for the replayed GEMMs: ",
          f);
    rp_md_cell_text(f, checked);
    fputs(".\n", f);
  } else if (checked) {
    fputs("- **Model dimensions.** None used for the replayed GEMMs: ", f);
    rp_md_cell_text(f, checked);
    fputs(".\n", f);
  }
  if (attention) {
    fputs(m->attention_used ? "- **Attention from the step's sums.** "
                            : "- **Attention from the step's sums.** No roofline: ",
          f);
    rp_md_cell_text(f, attention);
    fputs(".\n", f);
  }
  for (size_t i = 0; d->id && i < r->n_stages; i++) {
    const an_stage_report *st = &r->stages[i];
    char *line = rp_roofline_stage_limit(st);
    if (line) fprintf(f, "- **Roofline (%s).** %s\n", st->label, line);
    free(line);
  }
}

/* What the stages' time accounts cannot tell, with the figures (the same words as HTML's). */
static void steps_limits(FILE *f, const an_report *r, const te_rules *rules) {
  for (size_t i = 0; i < r->n_stages; i++)
    for (int c = 0; c < RP_CHECKS; c++) {
      char title[160];
      char *text =
          rp_stage_limit(&r->stages[i], rules, (rp_stage_check)c, true, title, sizeof title);
      if (text) fprintf(f, "- **%s.** %s\n", title, text);
      free(text);
    }
}

static void hints(FILE *f, const an_report *r, const te_rules *rules) {
  const an_trace_limits *l = &r->limits;
  char rank_line[512];
  const char *ranks = rp_ranks_limit(l, rank_line, sizeof rank_line);
  char site_line[256];
  const char *sites = rp_partial_sites_limit(l, site_line, sizeof site_line);
  char filter_line[RP_FILTERED_BYTES];
  const char *filtered = rp_filtered_limit(r, filter_line, sizeof filter_line);
  char short_line[RP_SHORT_WINDOW_BYTES];
  const char *short_window = rp_short_window_limit(l, short_line, sizeof short_line);
  char wait_line[RP_OUTSIDE_WAIT_BYTES];
  const char *wait = rp_outside_wait_limit(l, wait_line, sizeof wait_line);
  if (!l->no_python_stacks && !l->framework_defaulted && !ranks && !short_window && !wait &&
      !sites && !filtered && !r->n_hints && !rp_roofline_limited(r) &&
      !rp_stage_checks_failed(r, rules))
    return;
  fputs("\n## Limits of this trace\n\n", f);
  if (l->no_python_stacks) stack_hint(f, r, rules);
  if (l->framework_defaulted)
    fprintf(f,
            "- **Framework not detected.** Nothing in the inputs names the framework, so the "
            "report names none; only framework-specific rules (fusion patterns, hints) use the "
            "packs' default, %s. Pass `--framework` to name it.%s\n",
            r->run.framework.label, rp_workload_note(r->run.workload.value));
  if (ranks)
    fprintf(f, "- **%s.** %c%s\n", ranks, toupper((unsigned char)*rank_line), rank_line + 1);
  if (short_window)
    fprintf(f, "- **Short capture window.** %c%s\n", toupper((unsigned char)*short_line),
            short_line + 1);
  if (wait) fprintf(f, "- **Blocking wait outside the steps.** %s\n", wait_line);
  if (sites) fprintf(f, "- **Partial locations.** %s\n", sites);
  if (filtered)
    fprintf(f, "- **%s.** %c%s\n", filtered, toupper((unsigned char)*filter_line), filter_line + 1);
  roofline_limits(f, r);
  steps_limits(f, r, rules);
  for (size_t i = 0; i < r->n_hints; i++) {
    char line[1024];
    rp_hint_text(&r->hints[i], line, sizeof line);
    fputs("- ", f);
    rp_md_cell_text(f, line);
    fputc('\n', f);
  }
}

/* ---------------------------------------------------------------- stages */

static void categories(FILE *f, const an_stage_report *st, const te_rules *rules) {
  if (!st->n_categories) return;
  unit u = unit_for(st->categories[0].total_us);
  fprintf(f, "\nTime by category (%s): ", u.name);
  for (size_t i = 0; i < st->n_categories; i++) {
    const an_category_time *c = &st->categories[i];
    char t[32], s[32];
    fmt_time(t, sizeof t, c->total_us, u);
    rp_fmt_share(s, sizeof s, c->share_pct);
    fprintf(f, "%s%s %s (%s)", i ? " · " : "", c->category, t, s);
  }
  fputc('\n', f);
  char *steps = rp_step_categories(st, rules);
  if (steps) fprintf(f, "\n%s\n", steps);
  free(steps);
}

static void anchor_cell(FILE *f, const char *kind, const char *stage_id, size_t row, char letter) {
  char id[64]; /* the summary items' anchors (analysis/summary.h) */
  an_summary_anchor(id, sizeof id, kind, stage_id, row);
  fprintf(f, "| <a id=\"%s\"></a>%c%zu | ", id, letter, row + 1);
}

/* "### WHAT: STAGE (shares of 1.36 ms kernel time)": the denominator in every heading. */
static void table_heading(FILE *f, const char *what, const an_stage_report *st) {
  char t[32];
  unit u = unit_for(rp_stage_share_base_us(st));
  fmt_time(t, sizeof t, rp_stage_share_base_us(st), u);
  fprintf(f, "\n### %s: %s (shares of %s %s %s)\n\n", what, st->label, t, u.name,
          st->has_kernels ? "kernel time" : "GPU busy time");
}

static void kernel_table(FILE *f, const an_stage_report *st, const stage_names *nm) {
  table_heading(f, "Kernels", st);
  if (!st->n_kernels_shown) {
    fputs("No kernel row cleared the share bar.\n", f);
    return;
  }
  /* one unit for both time columns (review 10: a us total beside an ms per-step figure) */
  unit u = unit_for(st->kernels[0].total_us);
  fprintf(f,
          "| # | Kernel | Category | GPU time (%s) | Per step (%s) | Share | Launches | %% of "
          "bound | Python location | CPU op |\n| ---: | --- | --- | ---: | ---: | ---: | ---: | "
          "---: | --- | --- |\n",
          u.name, u.name);
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    if (!r->shown) continue;
    char t[32], p[32], s[32];
    fmt_time(t, sizeof t, r->total_us, u);
    fmt_time(p, sizeof p, rp_kernel_per_step_us(st, r), u);
    rp_fmt_share(s, sizeof s, rp_stage_share_pct(st, r->total_us));
    anchor_cell(f, "kernel", st->id, i, 'K');
    code_span(f, names_get(nm, r->name));
    char roof[48];
    rp_roofline_cell(an_row_roofline(st, r), roof, sizeof roof);
    fprintf(f, " | %s | %s | %s | %s | %zu | %s | ", r->category, t, p, s, r->launches, roof);
    char *loc = rp_kernel_location_cell(r), *op = rp_kernel_cpu_op_cell(r);
    rp_md_cell_text(f, loc ? loc : "?");
    fputs(" | ", f);
    rp_md_cell_text(f, op ? op : "?");
    fputs(" |\n", f);
    free(loc);
    free(op);
  }
}

static double overlap_max_us(const an_overlap_stage *o) {
  double m = 0;
  for (size_t i = 0; i < o->n_rows; i++)
    if (o->rows[i].total_us > m) m = o->rows[i].total_us;
  return m;
}

/* The lines docs/overlap.md promises under each overlap table: how much of the busy time
 * ran on several streams and how many at most, and the exposed time of each row printed
 * (its steady cost plus its wait), in the table's unit. They are totals over the stage
 * window, like the table's time columns; a stage with steps says so, since its Recoverable
 * column and its time account are per step (review 4: a 2-step total under a per-step
 * account read as one step). */
/* Eliminate rows whose copies ran under a buffer op the packs name a lever for (DDP's
 * reducer copies: gradient_as_bucket_view=True), one line each. */
static void staging_lines(FILE *f, const an_overlap_stage *o, const te_rules *rules) {
  for (size_t i = 0; rules && i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    const char *lever = r->below_floor ? NULL : r->staging_lever;
    if (!lever) continue;
    fprintf(f, "\nO%zu %s: its copies run under ", i + 1, rp_recommendation(r->recommendation));
    code_span(f, r->staging_op);
    fprintf(f, ": %s.\n", lever);
  }
}

static void overlap_lines(FILE *f, const an_overlap_stage *o, unit u, const te_rules *rules) {
  char b[32], m[32];
  fmt_time(b, sizeof b, o->busy_us, u);
  fmt_time(m, sizeof m, o->multi_stream_us, u);
  fprintf(f,
          "\n%sGPU busy %s %s; on several streams at once %s %s (%.1f%%); max concurrent streams "
          "%zu.\n",
          o->n_steps ? "Over the stage window, not per step: " : "", b, u.name, m, u.name,
          o->busy_us > 0 ? o->multi_stream_us / o->busy_us * 100.0 : 0.0, o->max_streams);
  size_t shown = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (r->below_floor) continue;
    char x[32], w[32];
    fmt_time(x, sizeof x, r->exposed_ms * 1000.0, u);
    fmt_time(w, sizeof w, r->exposed_wait_ms * 1000.0, u);
    if (!shown++) fprintf(f, "Exposed by row, steady + wait (%s):", u.name);
    fprintf(f, "%s O%zu %s + %s%s", shown > 1 ? ";" : "", i + 1, x, w,
            r->exposed_wait_ms > 0 ? rp_overlap_excess_word(r, rules) : "");
  }
  if (shown) fputs(".\n", f);
}

/* The rows folded under the recoverable floor, counted in one line (after lead, when the
 * stage has no other row). */
static void overlap_floor_line(FILE *f, const an_overlap_stage *o, const char *lead,
                               const char *before) {
  char bar[96];
  rp_overlap_bar_text(o, bar, sizeof bar);
  fprintf(f, "%s%s%s%zu row%s below %s recoverable (kept in the JSON report).\n", before, lead,
          *lead ? ": " : "", o->n_below_floor, o->n_below_floor == 1 ? "" : "s", bar);
}

/* The rows folded as pieces of a fusion row: that row is their advice and bound. */
/* The rows folded as pieces of the eager chain: the chain item is their advice and bound;
 * each states its time, of the chain's (review 7 defects 6, 7). */
static void overlap_chain_line(FILE *f, const an_overlap_stage *o, const stage_names *nm,
                               bool compiled) {
  size_t k = 0;
  double per = 1.0 / (double)(o->n_steps ? o->n_steps : 1);
  char x[32], c[32];
  rp_fmt_ms(c, sizeof c, o->chain_ms * 1000.0);
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    /* a piece under the recoverable floor is counted with the floor's rows */
    if (!r->cites_fusion || r->fusion_partner != AN_PARTNER_EAGER_CHAIN ||
        an_overlap_row_under_bar(o, r))
      continue;
    fputs(k++        ? "; "
          : compiled ? "\nPieces of the eager elementwise chain, whose advice (fuse the chain: a "
                       "wider compiled region, or fused kernels) and bound are the chain's (not "
                       "repeated here): "
                     : "\nPieces of the eager elementwise chain, whose advice (fuse the chain: "
                       "torch.compile, or fused kernels) and bound are the chain's (not repeated "
                       "here): ",
          f);
    code_span(f, names_get(nm, r->kernel));
    rp_fmt_ms(x, sizeof x, r->steps_us * per);
    fprintf(f, " (%s of the chain's %s ms%s)", x, c,
            o->n_steps ? "/step" : "/step (stage window: no steps)");
  }
  if (k) fputs(".\n", f);
}

static void overlap_cited_line(FILE *f, const an_report *rep, const an_stage_report *st,
                               const stage_names *nm) {
  const an_overlap_stage *o = st->overlap;
  overlap_chain_line(f, o, nm, rep->run.compiled.compiled);
  size_t k = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (!r->cites_fusion || !r->fusion_pattern) continue;
    size_t n = 0;
    for (size_t j = 0; j < st->n_fuse && !n; j++)
      if (!strcmp(st->fuse[j].pattern_name, r->fusion_pattern)) n = j + 1;
    fputs(k++ ? "; "
              : "\nPieces of a fusion row, whose advice and bound they are (not repeated "
                "here): ",
          f);
    code_span(f, names_get(nm, r->kernel));
    if (n) fprintf(f, " ([F%zu](#fusion-%s-%zu))", n, st->id, n - 1);
  }
  if (k) fputs(".\n", f);
}

/* A line of report/text.c's words under a table, after a blank line (owned: freed). */
static void text_line(FILE *f, char *line) {
  if (line) fprintf(f, "\n%s\n", line);
  free(line);
}

static void overlap_table(FILE *f, const an_report *rep, const an_stage_report *st,
                          const stage_names *nm, const te_rules *rules) {
  table_heading(f, "Overlap opportunities", st);
  const an_overlap_stage *o = st->overlap;
  if (!o) {
    fputs(rep->run.overlap_off ? "No overlap analysis for a single trace (the packs turn it "
                                 "off); use mapping-formal mode.\n"
                               : "No overlap block for this stage.\n",
          f);
    return;
  }
  if (!o->n_rows) {
    fprintf(f, "No row cleared the %.1f%% reporting bar.\n", rep->run.overlap_min_share_pct);
    return;
  }
  if (o->n_below_floor + o->n_cites_fusion == o->n_rows) { /* nothing to put forward */
    if (o->n_below_floor) overlap_floor_line(f, o, "No row to put forward", "");
    if (!o->n_below_floor) fputs("No row to put forward.\n", f);
    overlap_cited_line(f, rep, st, nm);
    return;
  }
  unit u = unit_for(overlap_max_us(o));
  /* recoverable time is per step when the stage has step markers (analysis/model.h) */
  fprintf(f,
          "| # | Priority | Verdict | Kernel | Python scope | GPU time (%s) | Exposed (%s) | "
          "Hidden (%s) | Recoverable (%s%s) | Share | Dep risk | Dependency (evidence) | "
          "Recommendation |\n"
          "| ---: | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n",
          u.name, u.name, u.name, u.name, o->n_steps ? "/step" : "");
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (r->below_floor) continue; /* counted in the line below the table */
    char t[32], x[32], h[32], g[32], s[32];
    fmt_time(t, sizeof t, r->total_us, u);
    fmt_time(x, sizeof x, r->exposed_ms * 1000.0, u);
    /* hidden under other work on another stream (compute; for a copy-engine transfer,
     * anything): with the exposed time and its wait it partitions the row's time, so
     * Exposed + Hidden never exceeds GPU time */
    fmt_time(h, sizeof h, r->covered_us, u);
    fmt_time(g, sizeof g, r->recoverable_ms * 1000.0, u);
    rp_fmt_share(s, sizeof s, rp_stage_share_pct(st, r->total_us));
    anchor_cell(f, "overlap", st->id, i, 'O');
    fprintf(f, "%s | %s | ", rp_priority(r->priority), rp_verdict(r->verdict));
    code_span(f, names_get(nm, r->kernel));
    if (rp_launch_context(r)) { /* one of the rows a collective's launch contexts split */
      fputs(" — ", f);
      rp_md_cell_text(f, rp_launch_context(r));
    }
    fprintf(f, " | %s", rp_location_lead(r->scope_kind));
    rp_md_cell_text(f, rp_scope(r));
    fprintf(f, " | %s | %s | %s | %s | %s | %s | ", t, x, h, g, s, rp_dep_risk(r->dep_risk));
    if (r->dep_class) {
      rp_md_cell_text(f, r->dep_class);
      fputs(" (", f);
      char ev[RP_DEP_EVIDENCE_BYTES];
      const char *said = rp_dep_evidence(r, rules, ev, sizeof ev);
      rp_md_cell_text(f, said ? said : "?");
      fputc(')', f);
    } else {
      fputc('-', f);
    }
    fprintf(f, " | %s", rp_recommendation(r->recommendation));
    size_t item = rp_overlap_row_item(rep, st->id, i);
    if (item) fprintf(f, " (item %zu)", item); /* the item is its advice and bound */
    fputs(" |\n", f);
  }
  overlap_lines(f, o, u, rules);
  staging_lines(f, o, rules);
  text_line(f, rp_overlap_restructure_text(o));
  text_line(f, rp_overlap_bound_text(o));
  text_line(f, rp_overlap_transfer_text(o));
  text_line(f, rp_overlap_copy_rate_text(o));
  text_line(f, rp_overlap_shared_compute_text(o));
  text_line(f, rp_overlap_wait_unknown_text(
                   o, rep->limits.ranks_compared ? rep->limits.ranks_analysed : 1));
  text_line(f, rp_overlap_own_stream_text(o));
  bool wait = false;
  for (size_t i = 0; i < o->n_rows; i++) wait |= o->rows[i].verdict == AN_OVERLAP_WAIT;
  /* wait is time lost to other ranks: the Ranks section measures it per rank; slow
   * mid-step rows alone are not (O22) */
  if (rp_overlap_slow_mid_step_text(o))
    fprintf(f, "\n%s\n", rp_overlap_slow_mid_step_text(o));
  else if (wait && rep->n_ranks)
    fprintf(f,
            "\nWait rows are time lost to other ranks (rank skew, pipeline bubble), not "
            "headroom: see [Ranks: %s](#ranks-%s).\n",
            st->id, st->id);
  else if (wait)
    fputs(
        "\nWait rows are time lost to other ranks (rank skew, pipeline bubble), not headroom: "
        "read every rank's trace for the Ranks section.\n",
        f);
  if (rp_overlap_gpu_waits(o)) fprintf(f, "\n%s\n", rp_overlap_gpu_waits(o));
  if (rp_overlap_unrecorded(st)) fprintf(f, "\n%s\n", rp_overlap_unrecorded(st));
  if (o->n_below_floor) overlap_floor_line(f, o, "", "\n");
  overlap_cited_line(f, rep, st, nm);
}

static void fuse_evidence(FILE *f, const an_stage_report *st, const an_fuse_row *r,
                          const stage_names *nm) {
  for (size_t k = 0; k < r->n_evidence; k++) {
    char s[32];
    rp_fmt_share(s, sizeof s, r->evidence[k].share_pct);
    if (k) fputs("<br>", f);
    code_span(f, names_get(nm, r->evidence[k].kernel));
    /* one kernel, one row: another row counts this one's time */
    size_t by = rp_fuse_row_number(st->fuse, st->n_fuse, r->evidence[k].counted_in);
    char own[48] = "";
    if (r->evidence[k].own_pct > 0) { /* the row holds some of the kernel's launches */
      char o[32];
      rp_fmt_share(o, sizeof o, r->evidence[k].own_pct);
      snprintf(own, sizeof own, "%s of its ", o);
    }
    if (by)
      fprintf(f, " (%s%s, counted in F%zu)", own, s, by);
    else
      fprintf(f, " (%s%s)", own, s);
  }
  if (!r->n_evidence) fputc('-', f);
}

static double fuse_max_us(const an_stage_report *st) {
  double m = 0;
  for (size_t i = 0; i < st->n_fuse; i++)
    if (st->fuse[i].shown && st->fuse[i].related_us > m) m = st->fuse[i].related_us;
  return m;
}

static void fuse_cells(FILE *f, const an_fuse_row *r) {
  char *cells[] = {rp_fuse_locations_cell(r), rp_fuse_candidates_cell(r, true),
                   rp_fuse_rationale(r)};
  for (size_t k = 0; k < 3; k++) {
    fputs(" | ", f);
    rp_md_cell_text(f, cells[k] ? cells[k] : "?");
    free(cells[k]);
  }
  fputs(" |\n", f);
}

/* Review 11 defect 7: the estimated saving per step beside the related time (which is
 * not the win), and its basis; "-" where there is nothing to save. */
static void saving_cell(FILE *f, const an_stage_report *st, const an_fuse_row *r, unit u) {
  if (r->saving_basis == AN_SAVING_NONE || r->saving_step_us <= 0) {
    fputs("- | ", f);
    return;
  }
  char t[32], whole[32], over[64] = "";
  fmt_time(t, sizeof t, r->saving_step_us, u);
  /* review 15 defect 1: the basis reads off Related GPU time, which is the stage's; a
   * saving per step that is not the stage's (several steps, work outside them) also says
   * the stage's, so that the two columns meet (moe_microbench: 9.34 a step, 28.06 in all) */
  fmt_time(whole, sizeof whole, r->saving_us, u);
  if (strcmp(whole, t) != 0) snprintf(over, sizeof over, "; %s over the stage", whole);
  /* the row whose time holds the shared piece, by its number */
  size_t by = rp_fuse_row_number(st->fuse, st->n_fuse, r->saving_largest_in);
  if (r->saving_basis == AN_SAVING_PASSES_LARGEST_ELSEWHERE && by)
    fprintf(f, "%s (every piece it counts; the largest, counted in F%zu, stays%s) | ", t, by, over);
  else if (r->saving_basis == AN_SAVING_PASSES_SHARED && by)
    fprintf(f, "%s (pieces but the largest, F%zu's piece included%s) | ", t, by, over);
  else
    fprintf(f, "%s (%s%s) | ", t, rp_saving_basis_text(r->saving_basis), over);
}

static void fuse_table(FILE *f, const an_stage_report *st, const stage_names *nm) {
  table_heading(f, "Fusion opportunities", st);
  if (!st->n_fuse_shown) {
    fputs("No source-backed fusion pattern matched this stage.\n", f);
    return;
  }
  unit u = unit_for(fuse_max_us(st));
  fprintf(f,
          "| # | Pattern | Confidence | Origin | Related GPU time (%s) | Share | Saving per step "
          "(%s) | Evidence kernels (share) | Current Python location | Candidate fused path | "
          "Rationale |\n"
          "| ---: | --- | --- | --- | ---: | ---: | ---: | --- | --- | --- | --- |\n",
          u.name, u.name);
  for (size_t i = 0; i < st->n_fuse; i++) {
    const an_fuse_row *r = &st->fuse[i];
    if (!r->shown) continue;
    char t[32], s[32];
    fmt_time(t, sizeof t, r->related_us, u);
    rp_fmt_share(s, sizeof s, rp_stage_share_pct(st, r->related_us));
    anchor_cell(f, "fusion", st->id, i, 'F');
    rp_md_cell_text(f, r->pattern_name);
    fprintf(f, " | %s | %s | %s | %s | ", rp_fuse_verdict(r), rp_fusion_origin(r->origin), t, s);
    saving_cell(f, st, r, u);
    fuse_evidence(f, st, r, nm);
    fuse_cells(f, r);
  }
}

static void stage(FILE *f, const an_report *rep, size_t si, const stage_names *all,
                  const te_rules *rules) {
  const an_stage_report *st = &rep->stages[si];
  const stage_names *names = &all[si];
  fprintf(f, "\n## Stage: %s\n\n", st->label);
  char t[32];
  unit u = unit_for(rp_stage_share_base_us(st));
  fmt_time(t, sizeof t, rp_stage_share_base_us(st), u);
  fprintf(f, "Every share in this stage is of its %s: **%s %s**.\n",
          st->has_kernels ? "kernel-time sum" : "GPU busy time", t, u.name);
  categories(f, st, rules);
  name_ctx nc = {rep, all};
  rp_timeline_markdown(f, rep, st, display_name, &nc);
  if (st->has_kernels) kernel_table(f, st, names);
  if (st->xpu_launch_rows)
    fputs(
        "\n> Intel XPU: rows are `urEnqueueKernelLaunch` runtime events; GPU time is host "
        "launch-dispatch time, not device execution.\n",
        f);
  overlap_table(f, rep, st, names, rules);
  if (st->has_kernels) fuse_table(f, st, names);
}

/* ---------------------------------------------------------------- legend */

/* The entries' marks are Markdown's already (report/legend.h). */
static void legend(FILE *f) {
  size_t n;
  const rp_legend_entry *e = rp_legend(&n);
  fputs("\n## Legend\n\n", f);
  for (size_t i = 0; i < n; i++) fprintf(f, "- **%s**: %s\n", e[i].term, e[i].text);
}

/* ---------------------------------------------------------------- entry */

static void all_names_free(stage_names *all, size_t n) {
  for (size_t i = 0; all && i < n; i++) rp_stage_names_free(&all[i]);
  free(all);
}

/* Display names per stage, computed once: the summary and the tables print the same. */
static stage_names *all_names(const an_report *r, const rp_names *nm) {
  stage_names *all = calloc(r->n_stages + 1, sizeof *all);
  for (size_t i = 0; all && i < r->n_stages; i++) {
    if (rp_stage_names_build(&all[i], r, i, nm) != 0) {
      all_names_free(all, i);
      return NULL;
    }
  }
  return all;
}

int rp_layout_markdown(FILE *f, const an_report *r, const te_rules *rules, bool full_names) {
  rp_names *nm = full_names ? NULL : rp_names_create(rules);
  stage_names *all = (full_names || nm) ? all_names(r, nm) : NULL;
  if (!all) {
    rp_names_destroy(nm);
    return -1;
  }
  fputs("# Triage report\n\n", f);
  provenance(f, r);
  busy_lines(f, r);
  name_ctx nc = {r, all};
  rp_summary_markdown(f, r, display_name, &nc);
  hints(f, r, rules);
  for (size_t i = 0; i < r->n_stages; i++) stage(f, r, i, all, rules);
  int rc = rp_ranks_markdown(f, r, nm);
  legend(f);
  all_names_free(all, r->n_stages);
  rp_names_destroy(nm);
  return rc != 0 || ferror(f) ? -1 : 0;
}
