/*
 * analysis/waits.h - the per-instance wait model of collectives: a collective instance
 * takes its transfer time plus the time it waits for the other ranks to arrive. The
 * transfer time is what the fastest comparable instances take (the floor); the rest of
 * an instance's duration is wait:
 *
 *     floor(group) = the floor_pct percentile of the durations of the group's instances
 *     wait         = duration - floor   (never negative)
 *
 * When every instance of a group states its message in bytes, the floor is the envelope
 * of like messages instead (review 7 defect 1: floors by equal sizes made a message of a
 * size no other instance had its own floor, so a 112-float all-reduce taking 601 us waited
 * 0):
 *
 *     envelope(b) = min over the group's instances j of duration_j x max(1, b / bytes_j)
 *     latency     = min(latency_us, the group's fastest instance)
 *     floor       = min(duration, max(latency, envelope(bytes)))
 *
 * A transfer's time never falls as its message grows, and its time per byte never rises
 * (a fixed cost plus a rate): so no instance needs longer than a like message at least as
 * large took, nor than a smaller one took scaled up by size. The floor is an upper bound
 * of the transfer time and the wait a lower bound of what the slowest link or the latest
 * rank added. A rate taken from the large messages alone would hold a small message to a
 * speed its fixed cost never lets it reach, and call that cost wait (review 8: ddp's
 * bucket all-reduce read as rank skew). floor_pct applies to the groups floored by their
 * durations; the envelope takes the least (one sort by bytes, O(m log m)).
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
                      one is floored by the envelope */
  double per_byte_us, latency_us; /* out: the group's fastest time per byte (shown) and its
                                     fixed cost (us); 0 when it is floored by durations */
  bool alone;                     /* out: the group has no other instance (wait unknown) */
  /* out: the instance whose time sets the floor (an index into v: the percentile instance,
   * the like message's, itself when its own time is under the envelope), AN_WAIT_LATENCY
   * when the fixed cost latency_us sets it. Shown as where the floor came from. */
  uint32_t floor_from;
} an_wait_instance;

#define AN_WAIT_LATENCY UINT32_MAX

/* Fills the out members of v[0..n). floor_pct in [0, 100]: 0 is the fastest instance of a
 * group floored by its durations, 50 its median (lower); latency_us >= 0, the fixed cost
 * of an envelope floor. O(n log n). AN_ERR_NOMEM, AN_ERR_ARGS. */
an_status an_wait_model(an_wait_instance *v, size_t n, double floor_pct, double latency_us);

/* The floor of a sorted list of m durations: the value at index floor(pct / 100 * (m - 1)). */
double an_wait_floor(const double *sorted, size_t m, double floor_pct);

/* Where a collective's wait lies and what it leaves the GPU doing (review 18 defect 6: a
 * wait the step absorbs is no win). A collective kernel spins until its peers arrive, then
 * transfers: its wait is the first part of it, [start, start + wait). The part of that no
 * other GPU event covers is time the GPU spent on nothing but the wait; the rest ran
 * beside other work that holds the step anyway.
 *
 * The other GPU events come in order of start, one at a time (an_wait_cover_add); the
 * cover keeps two numbers, not their intervals: holding every collective's intervals until
 * the waits were known cost 18 MB on hta15 (15 copies of hta_async). */
typedef struct an_wait_cover {
  int64_t wait;    /* ns */
  int64_t end;     /* of [start, start + wait) clipped to the collective's end */
  int64_t reach;   /* the latest end of the events added so far, at least start */
  int64_t covered; /* the part of [start, end) they cover */
} an_wait_cover;

/* The cover of wait ns from start, clipped to limit (the collective's end); none yet. */
an_wait_cover an_wait_cover_begin(int64_t start, int64_t wait, int64_t limit);
/* Adds event [s, e); events come in order of s. */
void an_wait_cover_add(an_wait_cover *c, int64_t s, int64_t e);
/* The part of the wait no event added covers; 0 for a wait <= 0. */
int64_t an_wait_cover_idle(const an_wait_cover *c);

#endif
