/*
 * report/kmap_json.h - the kernel map as JSON (the --kernel-map file, and the "sites"
 * arrays of the JSON report): {"stages": {stage: payload}, "global": payload}, each
 * payload {"kernels": {name: {"category", "sites", "best_location"}}} (docs/reference.md §4.3).
 *
 * Ownership: nothing is retained; the map is borrowed for the call.
 */
#ifndef TRIAGE_REPORT_KMAP_JSON_H
#define TRIAGE_REPORT_KMAP_JSON_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "analysis/model.h"

/* The sites of one entry as a JSON array; NULL when out of memory. */
cJSON *rp_kmap_sites_json(const an_kmap_entry *e);
/* Writes the whole map as pretty-printed JSON and a newline, one entry at a time (a map
 * of 262,145 names held 1 GB of tree and text whole). 0, or -1 when out of memory or the
 * write failed (what was written stays). */
int rp_kernel_map_write(FILE *out, const an_kmap_view *m);

#endif
