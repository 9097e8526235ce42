/*
 * report/ranks_report.h - the Ranks section of a report model (Markdown and JSON):
 * the per-rank table, the straggler verdict of each group and the kernel imbalance rows.
 *
 * Ownership: nothing is retained; the model is borrowed for the call.
 */
#ifndef TRIAGE_REPORT_RANKS_REPORT_H
#define TRIAGE_REPORT_RANKS_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/model.h"

/* Prints "Ranks" sections, one per stage with ranks; nothing for a one-rank run. Starts
 * with a blank line. Returns 0, or -1 on a write error. */
int rp_ranks_markdown(FILE *out, const an_report *r);

/* Adds member "ranks" (an array, empty for a one-rank run) to report. 0, or -1 when out
 * of memory. */
int rp_ranks_json(cJSON *report, const an_report *r);

#endif
