/*
 * report/overlap_report.h - the Overlap Opportunity Table of a report model (Markdown
 * and JSON).
 *
 * Ownership: nothing is retained; the model is borrowed for the call.
 */
#ifndef TRIAGE_REPORT_OVERLAP_REPORT_H
#define TRIAGE_REPORT_OVERLAP_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/model.h"
#include "triage/rules.h"

/* Prints the whole section: the "Overlap Opportunity Table" heading, the mode line (none
 * when r->run.overlap_off), then
 * per stage with rows (bare when every such stage is "all", else "##### <label>" blocks)
 * the table and a busy-time line; the placeholder row when no stage has rows. Ends with
 * a newline and no trailing blank line. Returns 0, or -1 on a write error. */
int rp_overlap_markdown(FILE *out, const an_report *r);

/* Adds member "overlap" to report (an object); a run without overlap analysis
 * (r->run.overlap_off) gives mode "off" and no stages. rules: the packs whose settings
 * word the evidence (rp_dep_evidence; NULL: names not cut). Returns 0, or -1 when out of
 * memory. */
int rp_overlap_json(cJSON *report, const an_report *r, const te_rules *rules);

#endif
