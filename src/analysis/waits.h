/*
 * analysis/waits.h - the per-instance wait model of collectives: a collective instance
 * takes its transfer time plus the time it waits for the other ranks to arrive. The
 * transfer time is what the fastest comparable instances take (the floor); the rest of
 * an instance's duration is wait:
 *
 *     floor(group) = the floor_pct percentile of the durations of the group's instances
 *     wait         = duration - floor   (never negative)
 *
 * When every instance of a group states its message in bytes, the floor is per byte
 * instead (review 7 defect 1: floors by equal sizes made a message of a size no other
 * instance had its own floor, so a 112-float all-reduce taking 601 us waited 0):
 *
 *     per_byte     = the floor_pct percentile of duration / bytes (the fastest rate)
 *     latency      = min(latency_us, the group's fastest instance)
 *     floor        = min(duration, max(latency, bytes x per_byte))
 *
 * The rate comes from the instances whose bytes dominate their time (a small message's
 * time per byte is its fixed cost over few bytes: slow); a message no faster link could
 * move in less than the fixed cost takes that cost. Both are lower bounds of its time, so
 * its wait is what the slowest link or the latest rank added.
 *
 * A group of one instance has nothing like it to compare with: its floor is its own
 * duration, and it is marked alone (its split into transfer and wait is unknown).
 *
 * A group holds the instances that do the same work: within one trace, the same
 * collective and launch context with a message size (the trace's args), else the same
 * collective at the same position in every step, else every instance of the collective;
 * across the ranks of a group, one matched instance on every rank (then floor_pct 0 makes
 * the floor the fastest rank's instance, issue 30). The first collective of a step absorbs
 * the arrival skew of the other ranks, so its wait is the skew; a median would hide it.
 *
 * Users: the time account (analysis/timeline.c), the Ranks section's straggler (issue
 * 30) and the overlap table's "rank skew (wait)" verdict (issue 31).
 *
 * Ownership: the caller's array, filled in place; nothing is kept.
 */
#ifndef TRIAGE_ANALYSIS_WAITS_H
#define TRIAGE_ANALYSIS_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"

typedef struct an_wait_instance {
  uint64_t group;  /* instances with the same group share a floor (any key the caller picks) */
  double dur_us;   /* the instance's duration */
  double floor_us; /* out: its floor */
  double wait_us;  /* out: dur_us - floor_us, at least 0 */
  double bytes;    /* its message in bytes, 0 unknown: a group all of whose instances state
                      one is floored per byte */
  double per_byte_us, latency_us; /* out: the group's per-byte floor terms (us per byte,
                                     us); 0 when it is floored by durations */
  bool alone;                     /* out: the group has no other instance (wait unknown) */
} an_wait_instance;

/* Fills the out members of v[0..n). floor_pct in [0, 100]: 0 is the fastest instance (or
 * per-byte time) of the group, 50 its median (lower); latency_us >= 0, the fixed cost of a
 * per-byte floor. O(n log n). AN_ERR_NOMEM, AN_ERR_ARGS. */
an_status an_wait_model(an_wait_instance *v, size_t n, double floor_pct, double latency_us);

/* The floor of a sorted list of m durations: the value at index floor(pct / 100 * (m - 1)). */
double an_wait_floor(const double *sorted, size_t m, double floor_pct);

#endif
