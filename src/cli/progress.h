/*
 * cli/progress.h - a one-line progress bar on a terminal while a trace is read.
 *
 * Shows "label  read/total MB  pct%  rate MB/s" on the given stream (stderr), redrawn at
 * most every 100 ms, and only once the read has lasted 0.5 s, so small traces print
 * nothing. It is silent unless enabled is true and the stream is a terminal; callers
 * pass enabled = !quiet. The bytes are whatever the reader reports: for gzip input the
 * compressed bytes consumed out of the file size (tr_read_options.progress).
 *
 * Ownership: triage_progress_create allocates; triage_progress_destroy frees (and
 * finishes first if needed). The label is copied. A NULL progress is valid everywhere
 * and does nothing, so an allocation failure only loses the bar.
 *
 * Use with the trace reader:
 *   triage_progress *bar = triage_progress_create(stderr, path, 0, !opts.quiet);
 *   ropts.progress = triage_progress_update; ropts.progress_ctx = bar;
 *   tr_trace *t = tr_trace_read(path, &ropts, &err);
 *   triage_progress_destroy(bar);   (clears the line before anything else is printed)
 */
#ifndef TRIAGE_CLI_PROGRESS_H
#define TRIAGE_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct triage_progress triage_progress;

/* tty: the stream to draw on (normally stderr). label: shown first (a path is shortened
 * to its last component). total: expected bytes, 0 = unknown (the reader's own total,
 * passed to each update, takes precedence when non-zero). Returns NULL when disabled,
 * when tty is not a terminal, or when out of memory. */
triage_progress *triage_progress_create(FILE *tty, const char *label, uint64_t total, bool enabled);

/* Progress callback with the signature of tr_read_options.progress; ctx is the
 * triage_progress (may be NULL). */
void triage_progress_update(void *ctx, uint64_t done, uint64_t total);

/* Erases the bar line (if one was drawn) so the next output starts on a clean line. */
void triage_progress_finish(triage_progress *p);

/* Finishes and frees. NULL is fine. */
void triage_progress_destroy(triage_progress *p);

#endif
