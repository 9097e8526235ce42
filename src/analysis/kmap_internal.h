/*
 * analysis/kmap_internal.h - helpers shared by the kernel map, kernel table and fuse
 * table (not part of the public analysis API).
 */
#ifndef TRIAGE_ANALYSIS_KMAP_INTERNAL_H
#define TRIAGE_ANALYSIS_KMAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/kernel_map.h"
#include "analysis/strtab.h"
#include "trace/trace.h"
#include "triage/rules.h"
#include "util/map.h"

int an_location_priority(const te_rules *rules, const char *loc);
/* The location a site of a launch resolved to loc with Python stack `stack` (the
 * resolver's, NULL: none) is shown at (docs/reference.md 4.2): loc when matcher
 * `preferred` hits it and `low_signal` does not, else the stack's frame of the highest
 * location_priority (the outermost of equals), interned in st; NULL when out of memory.
 * The resolver's frame can be a wrapper every caller shares (torch/nn/modules/linear.py). */
const char *an_display_location(const te_rules *rules, const te_matcher *preferred,
                                const te_matcher *low_signal, an_strtab *st, const char *loc,
                                const char *stack);
/* What the packs say of location texts (matchers preferred_location and low_signal, the
 * location_priority score), each asked on first need and remembered by the text's
 * pointer: locations, stack frames and displays are interned (analysis/strtab.h), so a
 * table of many distinct kernel names launched from a few lines asks each line once, not
 * each site again (262,145 names from one line: ~1,300 instructions a site). Filled as
 * it answers: one per caller, never shared between threads. Ownership: the memo owns its
 * map; the texts it is asked of must stay valid (and unchanged) until an_loc_memo_free. */
typedef struct an_loc_memo {
  const te_rules *rules;
  const te_matcher *preferred, *low_signal; /* looked up once */
  ut_u64map facts;                          /* text pointer -> what is known of it */
} an_loc_memo;
void an_loc_memo_init(an_loc_memo *lm, const te_rules *rules);
void an_loc_memo_free(an_loc_memo *lm);
/* Whether matcher preferred_location (NULL in the packs: none) hits loc. */
bool an_location_preferred(an_loc_memo *lm, const char *loc);
/* The canonical name the map gave kernel name `name` of trace t, the trace of view `view`
 * (the index into the views it was built from), interned in the map; NULL when the map
 * was built from another trace there or saw no kernel of that name. The kernel table of
 * the same views reads its names here. */
const char *an_kernel_map_canonical(const an_kernel_map *m, size_t view, const tr_trace *t,
                                    tr_str name);

/* The map's name table: every canonical kernel name it saw has a dense id (0 ..
 * an_kernel_map_name_count - 1, first seen first; some ids below the count may be unused)
 * and one class, decided once, that the kernel table and the rank summary of the same
 * views read instead of classifying the name again. */
#define AN_KMAP_NO_NAME UINT32_MAX
size_t an_kernel_map_name_count(const an_kernel_map *m);
/* The index of the view of trace t among those the map was built from (an_kernel_map_name_id
 * takes it), or SIZE_MAX when the map was not built from t (or m is NULL). */
size_t an_kernel_map_view_of(const an_kernel_map *m, const tr_trace *t);
/* an_kernel_map_canonical's name as an id, or AN_KMAP_NO_NAME. */
uint32_t an_kernel_map_name_id(const an_kernel_map *m, size_t view, const tr_trace *t, tr_str name);
/* The text of name id (the map's copy, valid until it is destroyed), or NULL. */
const char *an_kernel_map_name(const an_kernel_map *m, uint32_t id);
/* The id of a canonical name's text (len bytes), or AN_KMAP_NO_NAME when the map never saw
 * it. */
uint32_t an_kernel_map_find_name(const an_kernel_map *m, const char *name, size_t len);
/* an_kernel_map_find of name id (an_kernel_map_find_name's) in stage's payload: the entry,
 * or NULL when the stage has none of that name. */
const an_kmap_entry *an_kernel_map_find_id(const an_kernel_map *m, const char *stage, uint32_t id);
/* Category (kernel classifier) of name id, and its finer kind when kind is not NULL (the
 * rule's kind, else the category); NULL for an id the map never classified. */
const char *an_kernel_map_name_category(const an_kernel_map *m, uint32_t id, const char **kind);
/* The `kernel` classifier's deciding rule of name id in *rule (its index, -1 for the
 * default), as te_rules_classify_once_given takes it: a classifier derived from `kernel`
 * (the overlap's) reads it instead of classifying the name again. False for an id the
 * map never classified. */
bool an_kernel_map_name_rule(const an_kernel_map *m, uint32_t id, int *rule);

#endif
