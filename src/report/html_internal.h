/*
 * report/html_internal.h - shared state of the HTML renderer (html_report.c writes the
 * page and its sections, html_tables.c the per-stage bar and tables). Private to
 * src/report/.
 *
 * Every write goes through rp_hw_* helpers that remember the first failure in
 * hw->failed, so the section writers read straight through and the caller checks once.
 *
 * Ownership: an rp_hw borrows out, the report and the names; it owns stage_tok.
 */
#ifndef TRIAGE_REPORT_HTML_INTERNAL_H
#define TRIAGE_REPORT_HTML_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/model.h"
#include "report/names.h"

/* The display names of one stage: every kernel name its tables and summary items show
 * (kernel rows first, in row order), so one kernel reads the same everywhere on the
 * page and two kernels never read alike within a stage (as in the Markdown layout). */
typedef struct rp_hw_names {
  const char **full; /* canonical names, borrowed from the model */
  char **shown;
  size_t n;
} rp_hw_names;

typedef struct rp_hw {
  FILE *out;
  const an_report *rep;
  const te_rules *rules; /* NULL: no pack words (stack hints) */
  const rp_names *names;
  bool full_names;          /* --full-names: the tables show full names */
  char **stage_tok;         /* per stage: rp_html_token(id), made unique with "-N" */
  rp_hw_names *stage_names; /* per stage */
  const char *idp;          /* id prefix: "" on a one-report page, "rR-" in a bundle */
  int hd;                   /* heading offset: 0, or 1 inside a bundle's <article> */
  const char *id_suffix;    /* "" or "-K": the K-th Ranks section's ids (rt-K, rank-K-N) */
  bool failed;
} rp_hw;

/* printf of markup the renderer owns (never trace text). */
void rp_hw_printf(rp_hw *hw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Trace text as escaped element text / attribute value (NULL writes nothing). */
void rp_hw_text(rp_hw *hw, const char *s);
/* A class or id token derived from data. */
void rp_hw_token(rp_hw *hw, const char *s);
/* A time in ms: two decimals, more when a non-zero time would print as zero. */
void rp_hw_ms(rp_hw *hw, double us);
/* One part of a stacked bar (rp_hw_stack_bar). */
typedef struct rp_hw_bar_part {
  const char *name; /* its class cat-NAME, its title and its place in the label */
  double us;
  double share_pct; /* in the label (list_shares) and the title (title_share) */
} rp_hw_bar_part;

/* A stacked bar: <svg class="stack">, 1000 units wide for `scale` us, one <rect> per part
 * titled "NAME: T ms" (" (S%)" added with title_share); its aria-label is label, then
 * ": NAME S%, ..." with list_shares. Parts come from part(items, i), i < n. */
typedef struct rp_hw_bar {
  const char *label; /* markup the renderer owns */
  bool list_shares, title_share;
  double scale;
  int height;
  size_t n;
  rp_hw_bar_part (*part)(const void *items, size_t i);
  const void *items;
} rp_hw_bar;

void rp_hw_stack_bar(rp_hw *hw, const rp_hw_bar *bar);
/* <span class="name" title="FULL">SHORT</span>, SHORT given (display form). */
void rp_hw_name_span(rp_hw *hw, const char *full, const char *shown);
/* <span class="cat cat-TOKEN">CAT</span> */
void rp_hw_cat_span(rp_hw *hw, const char *category);
/* A number cell: data-value raw, the text formatted as ms, % or a count. */
void rp_hw_td_ms(rp_hw *hw, double us);
void rp_hw_td_pct(rp_hw *hw, double pct);
void rp_hw_td_count(rp_hw *hw, size_t n);

/* The display form of a kernel name in stage `stage` (the name itself if it is not one
 * of the stage's, or with --full-names). */
const char *rp_hw_shown(const rp_hw *hw, size_t stage, const char *name);

/* The index of the stage with that id, or hw->rep->n_stages when there is none. */
size_t rp_hw_stage_index(const rp_hw *hw, const char *stage_id);

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
} rp_rank_view;

/* <section id="ranks">: verdict, legend, the ranks table with one bar scale (and the
 * collective wait column), the imbalance table; nothing when v is NULL or has no rows. */
void rp_html_ranks(rp_hw *hw, const rp_rank_view *v);
/* One Ranks section per rank table of the model (hw->rep->ranks). */
void rp_html_rank_reports(rp_hw *hw);

/* " <a class="ev" href="#ID">LABEL</a>": a summary item's evidence row by its anchor
 * (an_summary_item.anchor, "kernel-decode-3"): kernel, overlap and fusion rows are
 * k-SID-N, o-SID-N, f-SID-N on the page; time-account rows carry the anchor itself.
 * Nothing when the anchor names no stage of the report. */
void rp_html_evidence(rp_hw *hw, const char *anchor);
/* A stage's time account (html_timeline.c): steps, span = busy + idle, the idle causes
 * (rows idle-STAGE-N) and the collectives (rows wait-STAGE-N); nothing without one. */
void rp_html_timeline(rp_hw *hw, size_t stage_index);

/* One stage section: totals, category bar, kernel, overlap and fusion tables. */
void rp_html_stage(rp_hw *hw, size_t stage_index);

#endif
