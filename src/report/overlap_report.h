/*
 * report/overlap_report.h - rendering of the Overlap Opportunity Table (markdown and
 * JSON) from an an_overlap_result (analysis/overlap.h).
 *
 * Ownership: nothing is retained; the result is borrowed for the call.
 */
#ifndef TRIAGE_REPORT_OVERLAP_REPORT_H
#define TRIAGE_REPORT_OVERLAP_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/overlap.h"
#include "triage/rules.h"

/* Prints the whole section: the "Overlap Opportunity Table" heading, the mode line, then
 * per stage (bare when every stage with rows is "all", else "##### <label>" blocks) the
 * table and a busy-time line; the placeholder row when no stage has rows. Ends with a
 * newline and no trailing blank line. res may be NULL (placeholder). Returns 0, or -1 on
 * a write error. */
int rp_overlap_markdown(FILE *out, const an_overlap_result *res);

/* Adds member "overlap" to report (an object); res NULL (not computed) gives mode "off"
 * and no stages. Returns 0, or -1 when out of memory. */
int rp_overlap_json(cJSON *report, const an_overlap_result *res);

#endif
