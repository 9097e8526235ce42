/* analysis/read_jobs.c - see read_jobs.h. */
#include "analysis/read_jobs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/workers.h"
#include "util/vec.h"

typedef struct read_pool {
  an_read_job *jobs;
  size_t n, next;
  size_t chunk_size;
  const an_read_hooks *hooks;
  void *bar;            /* the one progress bar, or NULL */
  pthread_mutex_t lock; /* next, every job's done/total, the bar */
} read_pool;

typedef struct job_ctx {
  read_pool *pool;
  an_read_job *job;
} job_ctx;

/* The reader calls it on the reading thread after the read: the job keeps a copy, the
 * caller replays it in job order. A warning that cannot be kept is lost, not the read. */
static void keep_warning(void *ctx, const tr_warning *w) {
  an_read_job *j = ((job_ctx *)ctx)->job;
  tr_warning *v = ut_grow(j->warns, &j->cap_warns, j->n_warns + 1, sizeof *v);
  if (!v) return;
  j->warns = v;
  j->warns[j->n_warns] = *w;
  j->warns[j->n_warns++].path = j->path; /* the reader's copy is borrowed for the call */
}

/* One bar over all jobs: bytes read so far over the bytes known. */
static void on_progress(void *ctx, uint64_t done, uint64_t total) {
  job_ctx *c = ctx;
  read_pool *p = c->pool;
  pthread_mutex_lock(&p->lock);
  c->job->done = done;
  c->job->total = total;
  uint64_t all_done = 0, all_total = 0;
  for (size_t i = 0; i < p->n; i++) {
    all_done += p->jobs[i].done;
    all_total += p->jobs[i].total;
  }
  p->hooks->update(p->bar, all_done, all_total);
  pthread_mutex_unlock(&p->lock);
}

static void read_one(read_pool *p, an_read_job *j) {
  job_ctx c = {p, j};
  tr_read_options ro = {0};
  ro.chunk_size = p->chunk_size;
  ro.warn = keep_warning;
  ro.warn_ctx = &c;
  if (p->bar && p->hooks->update) {
    ro.progress = on_progress;
    ro.progress_ctx = &c;
  }
  j->trace = j->data ? tr_trace_read_buffer(j->path, j->data, j->len, &ro, &j->te)
                     : tr_trace_read(j->path, &ro, &j->te);
}

static void *worker(void *arg) {
  read_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    an_read_job *j = p->next < p->n ? &p->jobs[p->next++] : NULL;
    pthread_mutex_unlock(&p->lock);
    if (!j) return NULL;
    read_one(p, j);
  }
}

static bool reads_stdin(const an_read_job *jobs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!jobs[i].data && strcmp(jobs[i].path, "-") == 0) return true;
  return false;
}

an_status an_read_jobs(an_read_job *jobs, size_t n, unsigned workers, size_t chunk_size,
                       const an_read_hooks *hooks, const char *label) {
  read_pool p = {.jobs = jobs, .n = n, .chunk_size = chunk_size, .hooks = hooks};
  if (hooks->begin) p.bar = hooks->begin(hooks->ctx, n == 1 ? jobs[0].path : label);
  /* two readers of one standard input would each get part of it */
  size_t count = n > 1 && reads_stdin(jobs, n) ? 1 : an_workers_count(workers, n);
  pthread_mutex_init(&p.lock, NULL);
  an_status rc = count == 1 ? (worker(&p), AN_OK) : an_workers_run(count, worker, &p);
  pthread_mutex_destroy(&p.lock);
  if (hooks->end) hooks->end(p.bar);
  return rc;
}

void an_read_job_clear(an_read_job *j) {
  if (j->trace) tr_trace_destroy(j->trace);
  free(j->warns);
  memset(j, 0, sizeof *j);
}
