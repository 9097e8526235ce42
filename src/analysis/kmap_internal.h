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
/* Canonical name of a trace string, cached in cache (tr_str -> the interned string). One
 * cache must always be used with the same mask. */
const char *an_canonical_cached(an_strtab *st, ut_u64map *cache, const tr_trace *t, tr_str name,
                                an_hex_mask mask);

#endif
