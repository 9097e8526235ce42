/*
 * analysis/ranks_internal.h - what ranks.c (a rank's parts: one per stage of its trace,
 * read from a trace or back from rank data) hands to rank_match.c (the groups, the
 * matched collectives, the waits and the straggler verdict of one stage). Private to
 * src/analysis.
 *
 * Ownership: a part owns its names, arrays and process-group rank lists (rank_part_free);
 * the section's arrays belong to an an_rank_owner (an_rank_own), released with the
 * an_ranks_result.
 */
#ifndef TRIAGE_ANALYSIS_RANKS_INTERNAL_H
#define TRIAGE_ANALYSIS_RANKS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "analysis/strtab.h"
#include "triage/rules.h"
#include "util/map.h"

/* One rank in one stage. */
typedef struct an_rank_part {
  long rank;
  const char *path;  /* borrowed from its summary */
  bool filtered;     /* the trace was filtered to GPU work (analysis/trace_filter.h) */
  size_t gpus;       /* GPUs (processes carrying kernels) its trace holds; this part is one */
  const char *host;  /* the trace's host_name wherever the file states it, borrowed from its
                        summary; NULL when none (or rebuilt from rank data) */
  const char *stage; /* stage id, borrowed from the rules (or the rank data) */
  double busy_us, idle_us, class_us[AN_RANK_MEMORY + 1], collective_us;
  ut_strmap names;      /* canonical kernel names */
  an_rank_kernel *kern; /* parallel to names */
  size_t cap_kern;
  an_rank_coll_kind *kinds; /* what its collectives' instances share */
  ut_strmap contexts;       /* the kinds' launch-context labels, one copy each */
  ut_strmap launchers;      /* the kernels' launching ops' names, one copy each */
  size_t n_kinds, cap_kinds;
  double base_us;            /* the colls' end_us origin: the first one's start */
  an_rank_collective *colls; /* in start order */
  size_t n_colls, cap_colls;
  an_rank_step *steps; /* the stage's counted steps */
  size_t n_steps;
  an_rank_pg *pgs; /* ranks arrays in pg_store */
  long **pg_store; /* the ranks arrays, owned, parallel to pgs */
  size_t n_pgs, cap_pgs, cap_store;
} an_rank_part;

void an_rank_part_free(an_rank_part *p);

/* Every array of a section, freed with the result. */
typedef struct an_rank_owner {
  an_strtab *strings;
  void **allocs;
  size_t n_allocs, cap_allocs;
} an_rank_owner;

/* Records p to be freed with the result; false (p freed) when out of memory or p is
 * NULL. */
bool an_rank_own(an_rank_owner *o, void *p);

/* Groups, matched collectives, waits and stragglers of one stage: parts[0..n) hold its
 * ranks, ascending; rows[i] (filled by the caller) is parts[i]'s row, whose wait_us,
 * wait_share_pct, group and straggler are set here. false when out of memory. */
bool an_rank_match_stage(an_rank_owner *o, an_rank_part *const *parts, size_t n,
                         const te_rules *rules, an_rank_row *rows, an_rank_group **groups,
                         size_t *n_groups);

/* The families of the imbalance rows imb[0..n_imb) each straggler of groups[0..n_groups)
 * runs longer, their excess over its peers, and the cause they make (rank_excess.c):
 * work imbalance when that excess explains ranks.cause_min_share_pct of its delay and its
 * other kernels keep pace. parts[0..n) as for an_rank_match_stage. false when out of
 * memory. */
bool an_rank_excess_cause(an_rank_owner *o, an_rank_part *const *parts, size_t n,
                          const te_rules *rules, an_rank_group *groups, size_t n_groups,
                          const an_imbalance_row *imb, size_t n_imb);

#endif
