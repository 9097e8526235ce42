/*
 * report/diff_report.h - triage diff: Markdown and JSON of an an_diff_report, and a
 * JSON report (--format json, schemas/report.schema.json) read back as a diff side.
 *
 * Ownership: the renderers retain nothing. rp_diff_side_from_doc fills a side whose
 * strings live in doc (a cJSON document the caller deletes with cJSON_Delete after the
 * side).
 */
#ifndef TRIAGE_REPORT_DIFF_REPORT_H
#define TRIAGE_REPORT_DIFF_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/diff.h"
#include "analysis/model.h"
#include "report/report.h"

/* Markdown: inputs and noise floor, the biggest changes over all stages, then per stage its
 * GPU time, categories, kernels (changed, then within noise), fusion and overlap rows that
 * appeared or went away and, when both runs have several ranks, the ranks. o gives the
 * display names (o->rules; o->full_names for full ones) and the Biggest changes' row count
 * (diff.biggest_rows); o may be NULL (full names, every changed kernel). */
int rp_diff_markdown(FILE *out, const an_diff_report *d, const rp_options *o);
int rp_diff_json(FILE *out, const an_diff_report *d);

/* 1: path is a triage JSON report (an object with "mode" and "stages"), parsed into *doc
 * (the caller deletes it); 0: it is not one (a trace: run the analysis); -1: out of
 * memory; -2: a report larger than max_bytes. A report starts with '{' and "mode" as its
 * first member; nothing else is read whole. */
int rp_json_report_parse(const char *path, size_t max_bytes, cJSON **doc);
/* *side filled from a JSON report (rp_json_report_parse) named path: 0, or -1 for a
 * report without the members a side needs (msg) or out of memory (msg empty). */
int rp_diff_side_from_doc(const cJSON *doc, const char *path, an_diff_side *side, char *msg,
                          size_t cap);

#endif
