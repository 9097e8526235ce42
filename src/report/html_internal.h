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

typedef struct rp_hw {
  FILE *out;
  const an_report *rep;
  const rp_names *names;
  char **stage_tok;  /* per stage: rp_html_token(id), made unique with "-N" */
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
/* <span class="name" title="FULL">SHORT</span>, SHORT given (display form). */
void rp_hw_name_span(rp_hw *hw, const char *full, const char *shown);
/* <span class="cat cat-TOKEN">CAT</span> */
void rp_hw_cat_span(rp_hw *hw, const char *category);
/* A number cell: data-value raw, the text formatted as ms, % or a count. */
void rp_hw_td_ms(rp_hw *hw, double us);
void rp_hw_td_pct(rp_hw *hw, double pct);
void rp_hw_td_count(rp_hw *hw, size_t n);

/* The stage's token (index into rep->stages), or NULL for an unknown stage id. */
const char *rp_hw_stage_tok(const rp_hw *hw, const char *stage_id);

/* One stage section: totals, category bar, kernel, overlap and fusion tables. */
void rp_html_stage(rp_hw *hw, size_t stage_index);

#endif
