/*
 * analysis/kernel_map.h - the kernel map (docs/reference.md §4.3): for every
 * stage and for all stages together ("global"), each canonical kernel name with its
 * category and its launch sites (Python location, CPU op, stack), plus the stage-aware
 * relaxed lookup the kernel table and the overlap table use to find a formal kernel's
 * entry in the mapping traces.
 *
 * Ownership: an_kernel_map_build returns a map the caller destroys with
 * an_kernel_map_destroy. The map owns every entry and string (one arena); it borrows the
 * te_rules it was built with (lookups score with its ladders), which must outlive it.
 * The traces are only read during the build; nothing of them is kept. Entry pointers
 * stay valid until destroy.
 */
#ifndef TRIAGE_ANALYSIS_KERNEL_MAP_H
#define TRIAGE_ANALYSIS_KERNEL_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "analysis/steps.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

typedef struct an_kernel_map an_kernel_map; /* opaque */

/* Builds the map from the views of the mapping traces (the inputs in single-trace mode): every
 * kernel of every stage block is attributed (docs/reference.md §4.2) and aggregated per canonical
 * name x location. sample: at most kernel_map.sample_per_kernel kernels per name and stage, evenly
 * spaced (the reference samples for non-SGLang mapping passes). AN_ERR_RULES when the packs
 * define no `kernel` classifier. */
an_status an_kernel_map_build(const an_trace_view *views, size_t n_views, const te_rules *rules,
                              bool sample, an_kernel_map **out);
/* As an_kernel_map_build, with the step windows of each view (steps parallel to views, or
 * NULL): each site also counts its launches outside every counted step and, of those, the
 * ones before the first (an_site.outside_launches, warmup_launches). */
an_status an_kernel_map_build_steps(const an_trace_view *views, size_t n_views,
                                    const te_rules *rules, bool sample, const an_steps *steps,
                                    an_kernel_map **out);
/* an_kernel_map_build_steps in steps, for a caller with a second thread: the kernel
 * classifier's decision of each distinct name is independent of the others and of the
 * sites (many distinct names: 340 M instructions, beside 134 M of the sites'). gather reads
 * the views (*out: a map no query may read yet, destroyed by the caller on any failure);
 * then an_kernel_map_sites on one thread and an_kernel_map_classify, which shares the names
 * out a chunk at a time, on it after the sites and at once on another (each thread in a lane
 * of its own, rules.h); an_kernel_map_finish once both are done. One thread calling them in
 * that order builds the same map. an_kernel_map_unclassified: how many names are left. */
an_status an_kernel_map_gather(const an_trace_view *views, size_t n_views, const te_rules *rules,
                               bool sample, const an_steps *steps, an_kernel_map **out);
void an_kernel_map_classify(an_kernel_map *m);
size_t an_kernel_map_unclassified(an_kernel_map *m);
an_status an_kernel_map_sites(an_kernel_map *m);
an_status an_kernel_map_finish(an_kernel_map *m);
void an_kernel_map_destroy(an_kernel_map *m);

/* Stage payloads, in first-seen order (which is stage order for discovered inputs). */
size_t an_kernel_map_stage_count(const an_kernel_map *m);
const char *an_kernel_map_stage_id(const an_kernel_map *m, size_t i);
/* Exact key of one payload (stage NULL = global), or NULL. */
const an_kmap_entry *an_kernel_map_find(const an_kernel_map *m, const char *stage,
                                        const char *name);

/* Relaxed lookup inside one payload (docs/reference.md §4.3): exact key, then case-insensitive
 * prefix relation (score = shorter length) or containment (half score), then a long common prefix
 * of the compacted names (kernel_map.long_*), then alias token groups (te_rules_alias). NULL when
 * nothing qualifies. */
const an_kmap_entry *an_kernel_map_lookup_payload(const an_kernel_map *m, const char *stage,
                                                  const char *name);
/* Stage-aware lookup for a formal kernel: the stage's payload, then the "all" payload,
 * then the global one, each searched with the relaxed lookup. */
const an_kmap_entry *an_kernel_map_lookup(const an_kernel_map *m, const char *stage,
                                          const char *name);

/* The map as payloads (the --kernel-map document); valid until destroy. */
void an_kernel_map_view(const an_kernel_map *m, an_kmap_view *out);

#endif
