/*
 * overlap_md.c - Markdown and JSON rendering of the Overlap Opportunity Table
 * (docs/reference.md §6.7 and §8).
 *
 * The mode line and the busy-time line are plain text lines next to the tables: the
 * report comparer (../shared/tools/compare_reports.py) only reads lines starting with '|'
 * and "#####" headings, and a blank line ends a table, so both lines leave the tables
 * it parses unchanged.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report/md.h"
#include "report/overlap_report.h"
#include "report/text.h"

static const char *const OV_HEADER =
    "| Priority | Verdict | Kernel | Python scope | Formal signal | Dep risk | Recommendation |\n"
    "| --- | --- | --- | --- | --- | --- | --- |\n";

static double ov_pct(double part, double whole) { return whole > 0 ? part / whole * 100.0 : 0.0; }

static void ov_row_md(FILE *out, const an_overlap_row *r) {
  fprintf(out, "| %s | %s | ", rp_priority(r->priority), rp_verdict(r->verdict));
  rp_md_cell_text(out, r->kernel);
  fputs(" | ", out);
  rp_md_cell_text(out, rp_scope(r));
  fprintf(out, " | %.1f us, share %.1f%%, excl %.1f%% / hid %.1f%% | %s | %s |\n", r->total_us,
          r->share_pct, ov_pct(r->exclusive_us, r->total_us), ov_pct(r->hidden_us, r->total_us),
          rp_dep_risk(r->dep_risk), rp_recommendation(r->recommendation));
}

/* Exposed time of each row, in table order: the steady cost (median instance x count) and
 * the wait above it (rank skew / stalls, never headroom). A plain line, so the tables the
 * report comparer reads stay as the reference prints them. */
static void ov_exposed_line(FILE *out, const an_overlap_stage *st) {
  fputs("Exposed ms by row (no compute on another stream; steady + wait):", out);
  for (size_t j = 0; j < st->n_rows; j++)
    fprintf(out, "%s %.3f + %.3f", j ? ";" : "", st->rows[j].exposed_ms,
            st->rows[j].exposed_wait_ms);
  fputc('\n', out);
}

/* Where the stage's time went: busy and idle, kernel time per overlap category, copies
 * (one-time setup apart), and whether exclusive time can mean anything at all. */
static void ov_accounting_line(FILE *out, const an_overlap_stage *st) {
  double idle = st->span_us > st->busy_us ? st->span_us - st->busy_us : 0;
  fprintf(out, "Stage time: busy %.2f ms, idle %.2f ms; kernel time", st->busy_us / 1000.0,
          idle / 1000.0);
  for (size_t j = 0; j < st->n_by_category; j++)
    fprintf(out, "%s %s %.2f ms", j ? "," : "", st->by_category[j].category,
            st->by_category[j].kernel_us / 1000.0);
  fprintf(out, "; copy engine %.2f ms (one-time setup %.2f ms)", st->copy_engine_us / 1000.0,
          st->one_time_us / 1000.0);
  if (st->max_streams <= 1)
    fputs("; never two streams at once: exclusive time is not headroom", out);
  fputc('\n', out);
}

static size_t ov_rows(const an_stage_report *st) { return st->overlap ? st->overlap->n_rows : 0; }

int rp_overlap_markdown(FILE *out, const an_report *r) {
  fputs("Overlap Opportunity Table\n", out);
  /* no analysis ran (overlap.single_trace false): the reference's placeholder, no mode;
   * overlap.plain_lines false: the reference's bytes, no line of ours */
  bool plain = r->run.overlap_plain_lines;
  if (plain && !r->run.overlap_off)
    fprintf(out, "Overlap mode: %s\n",
            r->run.mode == AN_MODE_SINGLE ? "single-trace (the trace is its own mapping)"
                                          : "mapping-formal");
  size_t with_rows = 0;
  bool only_all = true;
  for (size_t i = 0; i < r->n_stages; i++)
    if (ov_rows(&r->stages[i])) {
      with_rows++;
      if (strcmp(r->stages[i].id, "all")) only_all = false;
    }
  if (!with_rows) {
    fputs(OV_HEADER, out);
    fprintf(out,
            "| - | - | No rows cleared the %.1f%% reporting bar. Use mapping/formal mode for "
            "overlap attribution. | - | - | - | - |\n",
            r->run.overlap_min_share_pct);
    return ferror(out) ? -1 : 0;
  }
  bool first = true;
  for (size_t i = 0; i < r->n_stages; i++) {
    const an_overlap_stage *st = r->stages[i].overlap;
    if (!ov_rows(&r->stages[i])) continue;
    if (!first) fputc('\n', out);
    first = false;
    if (!only_all) fprintf(out, "##### %s\n", st->label);
    fputs(OV_HEADER, out);
    for (size_t j = 0; j < st->n_rows; j++) ov_row_md(out, &st->rows[j]);
    if (!plain) continue;
    fprintf(out, "GPU busy %.2f ms; multi-stream %.2f ms (%.1f%%); max concurrent streams %zu\n",
            st->busy_us / 1000.0, st->multi_stream_us / 1000.0,
            ov_pct(st->multi_stream_us, st->busy_us), st->max_streams);
    ov_exposed_line(out, st);
    ov_accounting_line(out, st);
  }
  return ferror(out) ? -1 : 0;
}

/* ---------------------------------------------------------------- JSON */

static cJSON *ov_str_or_null(const char *s) {
  return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* share_pct: of the stage's kernel-time sum, the Markdown's and the HTML's Share (one
 * denominator for every table of a stage); busy_share_pct: of the GPU's busy union, the
 * reference's row share that the row bar (overlap.min_share_pct) reads. */
static cJSON *ov_row_json(const an_stage_report *st, const an_overlap_row *r,
                          const te_rules *rules) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "priority", rp_priority(r->priority));
  cJSON_AddStringToObject(o, "verdict", rp_verdict(r->verdict));
  cJSON_AddStringToObject(o, "kernel", r->kernel);
  /* one category per kernel in every table of a stage: the kernel table's; the overlap
   * model's own class beside it */
  cJSON_AddStringToObject(o, "category", rp_overlap_category(r));
  cJSON_AddStringToObject(o, "overlap_class", r->category);
  cJSON_AddStringToObject(o, "python_scope", rp_scope(r));
  cJSON_AddStringToObject(o, "scope_source", rp_scope_source(r->scope_source));
  cJSON_AddStringToObject(o, "launch_op", rp_launch_op(r));
  cJSON_AddNumberToObject(o, "launches", (double)r->count);
  cJSON_AddNumberToObject(o, "total_us", r->total_us);
  cJSON_AddNumberToObject(o, "steps_us", r->steps_us);
  cJSON_AddNumberToObject(o, "exclusive_us", r->exclusive_us);
  cJSON_AddNumberToObject(o, "hidden_us", r->hidden_us);
  cJSON_AddNumberToObject(o, "hidden_by_compute_us", r->hidden_by_compute_us);
  cJSON_AddNumberToObject(o, "covered_us", r->covered_us);
  cJSON_AddNumberToObject(o, "share_pct", rp_stage_share_pct(st, r->total_us));
  cJSON_AddNumberToObject(o, "busy_share_pct", r->share_pct);
  cJSON_AddNumberToObject(o, "exposed_ms", r->exposed_ms);
  cJSON_AddNumberToObject(o, "exposed_wait_ms", r->exposed_wait_ms);
  cJSON_AddNumberToObject(o, "exposed_median_us", r->exposed_median_us);
  cJSON_AddNumberToObject(o, "exposed_first_us", r->exposed_first_us);
  cJSON_AddNumberToObject(o, "recoverable_ms", r->recoverable_ms);
  cJSON_AddNumberToObject(o, "own_recoverable_ms", r->own_recoverable_ms);
  cJSON_AddNumberToObject(o, "compute_order", r->compute_order);
  cJSON_AddNumberToObject(o, "bound_exposed_ms", r->bound_exposed_ms);
  cJSON_AddNumberToObject(o, "bound_compute_ms", r->bound_compute_ms);
  cJSON_AddNumberToObject(o, "transfer_bound_ms", r->transfer_bound_ms);
  cJSON_AddNumberToObject(o, "transfer_compute_ms", r->transfer_compute_ms);
  cJSON_AddItemToObject(o, "transfer_lever", ov_str_or_null(r->transfer_lever));
  cJSON_AddNumberToObject(o, "alone_instances", (double)r->alone_instances);
  cJSON_AddNumberToObject(o, "unknown_fraction", r->unknown_fraction);
  cJSON_AddNumberToObject(o, "latency_instances", (double)r->latency_instances);
  cJSON_AddNumberToObject(o, "latency_fraction", r->latency_fraction);
  cJSON *ro = cJSON_AddArrayToObject(o, "restructure_options");
  for (size_t j = 0; ro && j < r->n_restructure_options; j++)
    cJSON_AddItemToArray(ro, cJSON_CreateString(r->restructure_options[j]));
  cJSON_AddBoolToObject(o, "own_stream", r->own_stream);
  cJSON *os = cJSON_AddArrayToObject(o, "own_stream_levers");
  for (size_t j = 0; os && j < r->n_own_stream_levers; j++)
    cJSON_AddItemToArray(os, cJSON_CreateString(r->own_stream_levers[j]));
  cJSON_AddBoolToObject(o, "below_floor", r->below_floor);
  cJSON_AddBoolToObject(o, "host_bound", r->host_bound);
  cJSON_AddBoolToObject(o, "latency_bound_messages", r->latency_bound_msgs);
  cJSON_AddBoolToObject(o, "cites_fusion", r->cites_fusion);
  cJSON_AddBoolToObject(o, "copy_engine", r->copy_engine);
  cJSON_AddNumberToObject(o, "copy_bytes", r->copy_bytes);
  cJSON_AddNumberToObject(o, "copy_us", r->copy_us);
  cJSON_AddNumberToObject(o, "copy_max_bytes", r->copy_max_bytes);
  cJSON_AddBoolToObject(o, "host_copy", r->host_copy);
  cJSON_AddNumberToObject(o, "host_link_gbs", r->host_link_gbs);
  cJSON_AddBoolToObject(o, "copy_slow", r->copy_slow);
  cJSON_AddItemToObject(o, "dep_class", ov_str_or_null(r->dep_class));
  cJSON_AddItemToObject(o, "dep_rule", ov_str_or_null(r->dep_rule));
  cJSON_AddItemToObject(o, "launch_context", ov_str_or_null(rp_launch_context(r)));
  char ev[RP_DEP_EVIDENCE_BYTES];
  cJSON_AddItemToObject(o, "dep_evidence",
                        ov_str_or_null(rp_dep_evidence(r, rules, ev, sizeof ev)));
  cJSON_AddItemToObject(o, "fusion_pattern", ov_str_or_null(rp_fusion_partner(r)));
  cJSON_AddNumberToObject(o, "fusion_bound_ms", r->fusion_bound_ms);
  cJSON_AddNumberToObject(o, "exclusive_pct", ov_pct(r->exclusive_us, r->total_us));
  cJSON_AddNumberToObject(o, "hidden_pct", ov_pct(r->hidden_us, r->total_us));
  cJSON_AddStringToObject(o, "dep_risk", rp_dep_risk(r->dep_risk));
  cJSON_AddStringToObject(o, "dep_signal", rp_dep_signal(r->dep_signal));
  cJSON_AddStringToObject(o, "recommendation", rp_recommendation(r->recommendation));
  cJSON_AddItemToObject(o, "top_overlap_partner", ov_str_or_null(r->top_partner));
  cJSON_AddNumberToObject(o, "top_overlap_partner_us", r->top_partner_us);
  cJSON_AddItemToObject(o, "prev_kernel", ov_str_or_null(r->prev_kernel));
  cJSON_AddItemToObject(o, "next_kernel", ov_str_or_null(r->next_kernel));
  if (r->prev_gap_us >= 0)
    cJSON_AddNumberToObject(o, "prev_gap_us", r->prev_gap_us);
  else
    cJSON_AddNullToObject(o, "prev_gap_us");
  if (r->next_gap_us >= 0)
    cJSON_AddNumberToObject(o, "next_gap_us", r->next_gap_us);
  else
    cJSON_AddNullToObject(o, "next_gap_us");
  return o;
}

static cJSON *ov_stage_json(const an_stage_report *rs, const te_rules *rules) {
  const an_overlap_stage *st = rs->overlap;
  cJSON *s = cJSON_CreateObject();
  if (!s) return NULL;
  cJSON_AddStringToObject(s, "stage", st->stage);
  cJSON_AddStringToObject(s, "label", st->label);
  cJSON_AddItemToObject(s, "formal_trace", ov_str_or_null(st->formal_path));
  cJSON_AddItemToObject(s, "mapping_trace", ov_str_or_null(st->mapping_path));
  cJSON_AddNumberToObject(s, "kernels", (double)st->n_kernels);
  cJSON_AddNumberToObject(s, "gpu_busy_us", st->busy_us);
  cJSON_AddNumberToObject(s, "multi_stream_us", st->multi_stream_us);
  cJSON_AddNumberToObject(s, "multi_stream_pct", ov_pct(st->multi_stream_us, st->busy_us));
  cJSON_AddNumberToObject(s, "max_concurrent_streams", (double)st->max_streams);
  cJSON_AddNumberToObject(s, "idle_us", st->span_us > st->busy_us ? st->span_us - st->busy_us : 0);
  cJSON_AddNumberToObject(s, "copy_engine_us", st->copy_engine_us);
  cJSON_AddNumberToObject(s, "one_time_us", st->one_time_us);
  cJSON_AddNumberToObject(s, "steps", (double)st->n_steps);
  cJSON_AddNumberToObject(s, "recoverable_floor_ms", st->recoverable_floor_ms);
  cJSON_AddNumberToObject(s, "recoverable_min_step_pct", st->min_step_pct);
  cJSON_AddNumberToObject(s, "step_ms", st->step_ms);
  cJSON_AddNumberToObject(s, "rows_below_floor", (double)st->n_below_floor);
  cJSON_AddNumberToObject(s, "rows_citing_fusion", (double)st->n_cites_fusion);
  cJSON_AddNumberToObject(s, "chain_ms", st->chain_ms);
  cJSON_AddNumberToObject(s, "shared_compute_ms", st->shared_compute_ms);
  cJSON_AddNumberToObject(s, "rows_sharing_compute", (double)st->n_sharing_compute);
  cJSON *opts = cJSON_AddArrayToObject(s, "restructure_options");
  for (size_t j = 0; opts && j < st->n_restructure_options; j++)
    cJSON_AddItemToArray(opts, cJSON_CreateString(st->restructure_options[j]));
  cJSON *cats = cJSON_AddObjectToObject(s, "kernel_us_by_category");
  for (size_t j = 0; cats && j < st->n_by_category; j++)
    cJSON_AddNumberToObject(cats, st->by_category[j].category, st->by_category[j].kernel_us);
  cJSON *rows = cJSON_AddArrayToObject(s, "rows");
  for (size_t j = 0; rows && j < st->n_rows; j++) {
    cJSON *row = ov_row_json(rs, &st->rows[j], rules);
    if (!row) break;
    cJSON_AddItemToArray(rows, row);
  }
  if (!rows || cJSON_GetArraySize(rows) != (int)st->n_rows) {
    cJSON_Delete(s);
    return NULL;
  }
  return s;
}

int rp_overlap_json(cJSON *report, const an_report *r, const te_rules *rules) {
  cJSON *ov = cJSON_CreateObject();
  if (!ov) return -1;
  cJSON_AddStringToObject(ov, "mode",
                          r->run.overlap_off              ? "off"
                          : r->run.mode == AN_MODE_SINGLE ? "single-trace"
                                                          : "mapping-formal");
  cJSON_AddNumberToObject(ov, "min_share_pct", r->run.overlap_min_share_pct);
  cJSON *stages = cJSON_AddArrayToObject(ov, "stages");
  if (!stages) goto fail;
  for (size_t i = 0; i < r->n_stages; i++) {
    if (!r->stages[i].overlap) continue;
    cJSON *s = ov_stage_json(&r->stages[i], rules);
    if (!s) goto fail;
    cJSON_AddItemToArray(stages, s);
  }
  if (!cJSON_AddItemToObject(report, "overlap", ov)) goto fail;
  return 0;
fail:
  cJSON_Delete(ov);
  return -1;
}
