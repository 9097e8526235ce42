/*
 * analysis/kmap_internal.h - helpers shared by the kernel map, kernel table and fuse
 * table (not part of the public analysis API).
 */
#ifndef TRIAGE_ANALYSIS_KMAP_INTERNAL_H
#define TRIAGE_ANALYSIS_KMAP_INTERNAL_H

#include <stdbool.h>

#include "analysis/kernel_map.h"
#include "analysis/strtab.h"
#include "trace/trace.h"
#include "triage/rules.h"
#include "util/map.h"

int an_location_priority(const te_rules *rules, const char *loc);
bool an_location_preferred(const te_rules *rules, const char *loc);
/* Canonical name of a trace string, interned in st (NULL when out of memory). */
const char *an_canonical_of(an_strtab *st, const tr_trace *t, tr_str name, an_hex_mask mask);
/* The canonical name the map gave kernel name `name` of trace t, the trace of view `view`
 * (the index into the views it was built from), interned in the map; NULL when the map
 * was built from another trace there or saw no kernel of that name. The kernel table of
 * the same views reads its names here. */
const char *an_kernel_map_canonical(const an_kernel_map *m, size_t view, const tr_trace *t,
                                    tr_str name);

#endif
