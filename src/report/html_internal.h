/*
 * report/html_internal.h - the section writers of the HTML renderer: html_report.c writes
 * the page and calls html_tables.c (a stage's bar and tables), html_timeline.c (its time
 * account) and html_ranks.c (the Ranks sections); all of them write through
 * html_writer.h. Private to src/report/.
 */
#ifndef TRIAGE_REPORT_HTML_INTERNAL_H
#define TRIAGE_REPORT_HTML_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/model.h"
#include "report/html_writer.h"
#include "report/names.h"
#include "report/rank_notes.h"

/* The Ranks section's input (html_ranks.c): what the page draws per rank. Built from the
 * per-rank model by an adapter once that model exists; every row has the same parts
 * (e.g. compute, communication, wait, idle) in the same order. Borrowed strings. */
typedef struct rp_rank_part {
  const char *name; /* a category class: cat-compute, cat-wait, ... */
  double us;
} rp_rank_part;

typedef struct rp_rank_view_row {
  const char *label; /* "rank 3" */
  long rank;         /* sort key of the first column */
  size_t n_parts;
  const rp_rank_part *parts;
  bool straggler;
  const char *top_kernel, *top_kernel_shown; /* NULL: none */
  double top_share_pct;
  double wait_us, wait_share_pct; /* collective wait (shown when the view has_wait) */
} rp_rank_view_row;

typedef struct rp_rank_view {
  const char *title;   /* shown after "Ranks" (the stage); NULL: none */
  const char *verdict; /* one sentence: which rank holds the others back */
  size_t n;
  const rp_rank_view_row *rows;
  bool has_wait; /* a collective-wait column */
  size_t n_imbalance;
  const an_imbalance_row *imbalance; /* drawn below the ranks table; the model's rows */
  const char *span; /* what the times cover (rp_rank_span), after the verdict; NULL: nothing */
  size_t n_notes;   /* the Markdown's notes (report/rank_notes.h), under the ranks table */
  const rp_rank_note *notes;
  const char *straggler_mark; /* the straggler's badge, the Markdown's (rp_rank_straggler) */
} rp_rank_view;

/* <section id="ranks">: verdict, legend, the ranks table with one bar scale (and the
 * collective wait column), its notes, the imbalance table; nothing when v is NULL or has
 * no rows. */
void rp_html_ranks(rp_hw *hw, const rp_rank_view *v);
/* One Ranks section per rank table of the model (hw->rep->ranks). */
void rp_html_rank_reports(rp_hw *hw);

/* "<a class="ev" href="#ID">LABEL</a>": a summary item's evidence row by its anchor
 * (an_summary_item.anchor, "kernel-decode-3") under the label its line gives it
 * (report/item_text.h): kernel, overlap and fusion rows are k-SID-N, o-SID-N, f-SID-N on
 * the page; time-account rows carry the anchor itself. The label alone when the anchor
 * names no stage of the report. */
void rp_html_evidence(rp_hw *hw, const char *anchor, const char *label);
/* A stage's time account (html_timeline.c): steps, span = busy + idle, the idle causes
 * (rows idle-STAGE-N) and the collectives (rows wait-STAGE-N); nothing without one. */
void rp_html_timeline(rp_hw *hw, size_t stage_index);

/* One stage section: totals, category bar, kernel, overlap and fusion tables. */
void rp_html_stage(rp_hw *hw, size_t stage_index);

#endif
