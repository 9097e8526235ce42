/*
 * report/report.h - the triage report: markdown (reference-triage.md section 8 layout)
 * and one JSON document (schemas/report.schema.json).
 *
 * Ownership: rp_report only borrows; nothing is retained after the call.
 */
#ifndef TRIAGE_REPORT_REPORT_H
#define TRIAGE_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/overlap.h"
#include "analysis/tables.h"

typedef struct rp_report {
  bool two_trace;
  const char *framework_label;         /* formal (or single) framework label */
  const char *mapping_framework_label; /* two-trace: printed separately when it differs */
  const char *framework_id;
  const char *const *inputs;           /* single-trace inputs */
  size_t n_inputs;
  const char *const *mapping_inputs;   /* two-trace */
  size_t n_mapping_inputs;
  const char *const *formal_inputs;
  size_t n_formal_inputs;
  const char *model;                   /* NULL when no server args */
  const an_tables *tables;
  const an_overlap_result *overlap;    /* NULL: placeholder */
  double overlap_min_share_pct;        /* for the placeholder text */
  double kernel_min_share_pct;         /* for the kernel placeholder text */
} rp_report;

/* Markdown cell escaping: '|' -> "\|", newline -> "<br>". Returns a malloc'd string. */
char *rp_md_escape(const char *s);

/* Whole report, rstrip-ped, with a final newline. Returns 0, or -1 on a write or
 * allocation error. */
int rp_markdown(FILE *out, const rp_report *r);
/* Whole report as one JSON document followed by a newline. */
int rp_json(FILE *out, const rp_report *r);

#endif
