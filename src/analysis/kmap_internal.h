/*
 * analysis/kmap_internal.h - helpers shared by the kernel map, kernel table and fuse
 * table (not part of the public analysis API).
 */
#ifndef TRIAGE_ANALYSIS_KMAP_INTERNAL_H
#define TRIAGE_ANALYSIS_KMAP_INTERNAL_H

#include <stdbool.h>

#include "analysis/kernel_map.h"
#include "trace/trace.h"
#include "triage/rules.h"

int an_location_priority(const te_rules *rules, const char *loc);
bool an_location_preferred(const te_rules *rules, const char *loc);
/* The canonical name the map gave kernel name `name` of trace t, the trace of view `view`
 * (the index into the views it was built from), interned in the map; NULL when the map
 * was built from another trace there or saw no kernel of that name. The kernel table of
 * the same views reads its names here. */
const char *an_kernel_map_canonical(const an_kernel_map *m, size_t view, const tr_trace *t,
                                    tr_str name);

#endif
