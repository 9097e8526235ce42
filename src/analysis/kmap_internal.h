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

/* x rounded to 3 decimals the way Python's round(x, 3) does (exact binary value). */
double an_round3(double x);
int an_location_priority(const te_rules *rules, const char *loc);
bool an_location_preferred(const te_rules *rules, const char *loc);
bool an_location_low_signal(const te_rules *rules, const char *loc);
/* Lower-case alphanumerics of s (malloc'd). */
char *an_compact_dup(const char *s);
/* Canonical name of a trace string, cached in cache (tr_str -> interned string). One cache
 * must always be used with the same mask. */
const char *an_canonical_cached(an_strtab *st, an_u64map *cache, const tr_trace *t, tr_str name,
                                an_hex_mask mask);
/* The sites of an entry as a cJSON array (cJSON *), NULL when out of memory. */
void *an_kmap_entry_sites_json(const an_kmap_entry *e);

#endif
