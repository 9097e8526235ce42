/*
 * report/ranks_report.h - the Ranks section of a report model (Markdown and JSON):
 * the per-rank table, the straggler verdict of each group and the kernel imbalance rows.
 *
 * Ownership: nothing is retained; the model is borrowed for the call.
 */
#ifndef TRIAGE_REPORT_RANKS_REPORT_H
#define TRIAGE_REPORT_RANKS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/model.h"
#include "report/json_stream.h"
#include "report/names.h"

/* Prints "Ranks" sections, one per stage with ranks; nothing for a one-rank run. Starts
 * with a blank line. Every table states its units in its header. Kernel names are nm's
 * display forms, or the full names when nm is NULL. Returns 0, or -1 on a write error. */
int rp_ranks_markdown(FILE *out, const an_report *r, const rp_names *nm);

/* Adds member "ranks" (an array, empty for a one-rank run) to report. 0, or -1 when out
 * of memory. */
int rp_ranks_json(cJSON *report, const an_report *r);

/* Writes member "rank_data" of a streamed document (a one-rank run's data for triage
 * merge; absent otherwise). False when out of memory or the write failed. */
bool rp_rank_data_stream(rp_jstream *w, const an_report *r);

/* A document holding only "ranks" (triage merge --format json). */
int rp_ranks_json_document(FILE *out, const an_report *r);

/* The allocations rank data read from JSON points into (the caller's; n of cap used). */
typedef struct rp_owned {
  void **p;
  size_t n, cap;
} rp_owned;

/* Reads the "rank_data" entries of a JSON report (--format json of a one-rank run) into
 * data[*n..] (*n_cap of room, grown with ut_grow); strings and arrays point into doc or
 * are malloc'd into owned (free with rp_rank_data_free). 0, or -1 with msg (not such a
 * report, a malformed entry, out of memory). */
/* The run's world size a one-rank JSON report states (limits.world_size), 0 when none: a
 * merge of such reports compares the ranks read against it, as the direct run does. */
long rp_report_world_size(const cJSON *doc);

int rp_rank_data_read(const cJSON *doc, an_rank_data **data, size_t *n, size_t *n_cap,
                      rp_owned *owned, char *msg, size_t cap);
void rp_rank_data_free(rp_owned *owned);

#endif
