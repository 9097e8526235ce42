/*
 * report/bundle_report.h - `triage bundle`: many reports in one Markdown document (title,
 * table of contents, one section per input, grouped by model and framework).
 *
 * An entry is a report model (a trace or directory analysed now; rendered in full) or a
 * JSON report read back (its run facts, kernel, overlap and fuse tables and Ranks rows
 * rendered from the JSON rows).
 * Ownership: entries are borrowed for the call.
 */
#ifndef TRIAGE_REPORT_BUNDLE_REPORT_H
#define TRIAGE_REPORT_BUNDLE_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/model.h"
#include "report/report.h"

typedef struct rp_bundle_entry {
  const char *input;       /* as named on the command line */
  const an_report *report; /* or NULL, then doc */
  const cJSON *doc;        /* a --format json report */
} rp_bundle_entry;

/* 0, or -1 on a write or allocation error. */
int rp_bundle_markdown(FILE *out, const rp_bundle_entry *e, size_t n, const rp_options *o);

#endif
