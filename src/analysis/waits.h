/*
 * analysis/waits.h - the per-instance wait model of collectives: a collective instance
 * takes its transfer time plus the time it waits for the other ranks to arrive. The
 * transfer time is what the fastest comparable instances take (the floor); the rest of
 * an instance's duration is wait:
 *
 *     floor(group) = the floor_pct percentile of the durations of the group's instances
 *     wait         = duration - floor   (never negative)
 *
 * A group holds the instances that do the same work: within one trace, the same
 * collective with the same message size (the trace's args), else the same collective at
 * the same position in every step, else every instance of the collective; across the
 * ranks of a group, one matched instance on every rank (then floor_pct 0 makes the floor
 * the fastest rank's instance, issue 30). The first collective of a step absorbs the
 * arrival skew of the other ranks, so its wait is the skew; a median would hide it.
 *
 * Users: the time account (analysis/timeline.c), the Ranks section's straggler (issue
 * 30) and the overlap table's "rank skew (wait)" verdict (issue 31).
 *
 * Ownership: the caller's array, filled in place; nothing is kept.
 */
#ifndef TRIAGE_ANALYSIS_WAITS_H
#define TRIAGE_ANALYSIS_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"

typedef struct an_wait_instance {
  uint64_t group;  /* instances with the same group share a floor (any key the caller picks) */
  double dur_us;   /* the instance's duration */
  double floor_us; /* out: its group's floor */
  double wait_us;  /* out: dur_us - floor_us, at least 0 */
} an_wait_instance;

/* Fills floor_us and wait_us of v[0..n). floor_pct in [0, 100]: 0 is the fastest
 * instance of the group, 50 its median (lower). O(n log n). AN_ERR_NOMEM, AN_ERR_ARGS. */
an_status an_wait_model(an_wait_instance *v, size_t n, double floor_pct);

/* The floor of a sorted list of m durations: the value at index floor(pct / 100 * (m - 1)). */
double an_wait_floor(const double *sorted, size_t m, double floor_pct);

#endif
