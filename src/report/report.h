/*
 * report/report.h - the triage report from the report model (analysis/model.h):
 * Markdown (the reference layout, reference-triage.md section 8) and one JSON document
 * (schemas/report.schema.json). Only src/report/ turns the model into text.
 *
 * Ownership: the model is borrowed for the call; nothing is retained.
 */
#ifndef TRIAGE_REPORT_REPORT_H
#define TRIAGE_REPORT_REPORT_H

#include <stdio.h>

#include "analysis/model.h"

/* Whole report, rstrip-ped, with a final newline. Returns 0, or -1 on a write or
 * allocation error. */
int rp_markdown(FILE *out, const an_report *r);
/* Whole report as one JSON document followed by a newline. */
int rp_json(FILE *out, const an_report *r);

#endif
