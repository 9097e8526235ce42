/*
 * analysis/workers.h - a fixed set of threads running one function (the rank readers and
 * the trace readers of a run). The function pulls its own work from its argument, under
 * the caller's lock, until none is left.
 */
#ifndef TRIAGE_ANALYSIS_WORKERS_H
#define TRIAGE_ANALYSIS_WORKERS_H

#include <stddef.h>

#include "analysis/model.h"

/* How many threads to start for n_jobs: requested (0 = the online CPUs), at most
 * AN_MAX_WORKERS and at most n_jobs (at least 1). */
size_t an_workers_count(unsigned requested, size_t n_jobs);

/* Runs fn(arg) on `count` threads and waits for them. When no thread can be started, fn
 * runs once on the calling thread, so the work is still done. AN_ERR_NOMEM when the
 * thread table cannot be allocated (fn did not run). */
an_status an_workers_run(size_t count, void *(*fn)(void *), void *arg);

#endif
