/* analysis/workers.c - see workers.h. */
#include "analysis/workers.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/limits.h"

size_t an_workers_count(unsigned requested, size_t n_jobs) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t want = requested ? requested : (cpus > 0 ? (size_t)cpus : 1);
  if (want > AN_MAX_WORKERS) want = AN_MAX_WORKERS;
  if (want > n_jobs) want = n_jobs;
  return want ? want : 1;
}

an_status an_workers_run(size_t count, void *(*fn)(void *), void *arg) {
  pthread_t *th = calloc(count ? count : 1, sizeof *th);
  if (!th) return AN_ERR_NOMEM;
  size_t started = 0;
  for (; started < count; started++)
    if (pthread_create(&th[started], NULL, fn, arg) != 0) break;
  if (started == 0) fn(arg); /* no thread: work here */
  for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(th);
  return AN_OK;
}
