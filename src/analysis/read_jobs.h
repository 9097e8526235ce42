/*
 * analysis/read_jobs.h - reading a run's trace files, several at once.
 *
 * A run's inputs are often several files: the prefill and decode traces of a profile
 * directory, a mapping trace beside a formal one. They are independent until the views
 * are built, so they are read on worker threads (the CPUs, or --workers), while the
 * caller keeps everything order-dependent: it replays each job's warnings and builds the
 * views in job order, so the report and the warnings do not depend on which read
 * finished first.
 *
 * Ownership: the jobs array and its paths and buffers belong to the caller; a job's
 * trace belongs to the caller once an_read_jobs returns; an_read_job_clear frees what a
 * job still holds (its trace, unless the caller took it, and its warnings).
 */
#ifndef TRIAGE_ANALYSIS_READ_JOBS_H
#define TRIAGE_ANALYSIS_READ_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/pipeline.h"
#include "trace/trace.h"

/* One trace to read, and what reading it gave. */
typedef struct an_read_job {
  const char *path; /* as named: the file ("-" = standard input), or the buffer's name */
  const void *data; /* non-NULL: read this buffer instead of the file */
  size_t len;
  tr_trace *trace; /* out: NULL when the read failed (te says why) */
  tr_error te;
  tr_warning *warns; /* out: the read's warnings, in the reader's order */
  size_t n_warns, cap_warns;
  uint64_t done, total; /* progress of this read */
} an_read_job;

/* Reads every job, up to `workers` at once (0 = the online CPUs; one at a time when a job
 * reads standard input), with one progress bar (hooks, may be empty) named `label` over
 * all of them. A job's failure is in the job; the return is AN_ERR_NOMEM only when the
 * workers could not be set up (no job was read). */
an_status an_read_jobs(an_read_job *jobs, size_t n, unsigned workers, size_t chunk_size,
                       const an_read_hooks *hooks, const char *label);

/* Frees a job's trace (when still held) and warnings. */
void an_read_job_clear(an_read_job *j);

#endif
