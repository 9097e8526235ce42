/*
 * report/html_writer.h - the writer every HTML section shares (rp_hw) and its helpers.
 * Private to src/report/: html_report.c, html_tables.c, html_timeline.c, html_ranks.c and
 * html_diff.c write through it; it calls none of them back.
 *
 * Every write goes through rp_hw_* helpers that remember the first failure in
 * hw->failed, so the section writers read straight through and the caller checks once.
 *
 * Ownership: an rp_hw borrows out, the report and the names; it owns stage_tok.
 */
#ifndef TRIAGE_REPORT_HTML_WRITER_H
#define TRIAGE_REPORT_HTML_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/model.h"
#include "report/names.h"
#include "report/stage_names.h"

/* The display names of one stage, the Markdown layout's (report/stage_names.h). */
typedef rp_stage_names rp_hw_names;

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
/* The first n bytes of s, escaped as rp_hw_text does. */
void rp_hw_textn(rp_hw *hw, const char *s, size_t n);
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
/* The Legend's fixed text (report/legend.h) with its inline marks, `code`, **bold** and
 * *emphasis*, as HTML. Never trace text: a name's `*` or backtick would read as a mark
 * (the Ranks notes are typed parts, report/rank_notes.h, for that reason). */
void rp_hw_marked(rp_hw *hw, const char *s);
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

#endif
