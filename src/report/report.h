/*
 * report/report.h - the triage report from the report model (analysis/model.h):
 * Markdown (the reference layout, docs/reference.md §8) and one JSON document
 * (schemas/report.schema.json). Only src/report/ turns the model into text.
 *
 * Ownership: the model is borrowed for the call; nothing is retained.
 */
#ifndef TRIAGE_REPORT_REPORT_H
#define TRIAGE_REPORT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/model.h"
#include "triage/rules.h"

/* The report layout (--layout, or the --compat reference pack's): the default layout
 * (report/layout_md.h, docs/report.md) or the reference's, byte for byte. */
typedef enum rp_layout { RP_LAYOUT_DEFAULT = 0, RP_LAYOUT_REFERENCE = 1 } rp_layout;

typedef struct rp_options {
  rp_layout layout;
  const te_rules *rules; /* display rules and hint words; NULL: none */
  bool full_names;       /* --full-names: full kernel names in the default layout */
} rp_options;

/* Whole report, rstrip-ped, with a final newline. o may be NULL (default layout).
 * Returns 0, or -1 on a write or allocation error. */
int rp_markdown(FILE *out, const an_report *r, const rp_options *o);
/* Whole report as one JSON document followed by a newline. */
int rp_json(FILE *out, const an_report *r, const rp_options *o);
/* Whole report as one self-contained HTML page (docs/html.md): style and script inline,
 * nothing fetched; trace text escaped. Short display names need o->rules. */
int rp_html(FILE *out, const an_report *r, const rp_options *o);
/* The page of `triage diff` (docs/html.md, "Diff"); version and command_line go to the
 * footer (either may be NULL). Returns 0, or -1. */
int rp_html_diff(FILE *out, const an_diff_report *d, const rp_options *o, const char *version,
                 const char *command_line);
/* n >= 1 reports on one page (triage bundle): contents grouped by model and framework,
 * one <article id="rR"> per report (its ids prefixed "rR-"), labels[i] naming report i
 * in the contents; the footer is the first report's. Returns 0, or -1. */
int rp_html_bundle(FILE *out, const an_report *const *reports, const char *const *labels, size_t n,
                   const rp_options *o);

#endif
