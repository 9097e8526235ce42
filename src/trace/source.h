/*
 * trace/source.h - the byte stream under the JSON scanner (private to src/trace).
 *
 * Delivers the decompressed trace as a sequence of chunks so nothing ever holds the
 * whole file. gzip is recognised by its magic bytes and may hold several members.
 * A file (gzip, or plain JSON) is read, and gzip inflated, on a second thread into a small
 * ring of chunk buffers, so making chunk N+1 overlaps scanning chunk N; a buffer's plain
 * JSON is handed out in place. When asked, each chunk is also classified into block masks
 * (structural.h) where it is made: on the second thread for a threaded source, so the
 * scanner thread gets them for free.
 *
 * Ownership: a tr_source owns its buffers, thread and file descriptor (not stdin's).
 * A chunk returned by tr_source_next is borrowed until the next call or close.
 */
#ifndef TRIAGE_TRACE_SOURCE_H
#define TRIAGE_TRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/structural.h"
#include "trace/trace.h"

typedef struct tr_source tr_source; /* opaque */

/* Chunks inflated ahead: the ring's slots (tr_source_slot). */
#define TR_SOURCE_RING 4u
/* The whole of a chunk, in the units of tr_source_ahead_fn's share. */
#define TR_SOURCE_SHARE 64u

/* Work the inflate thread takes off the reader's thread: called on it for each chunk of
 * a threaded source with masks, right after the chunk is made and indexed and before the
 * reader gets it (so what it leaves for slot is the reader's to read once it holds the
 * chunk, untouched until the reader has moved on). share (0 ... TR_SOURCE_SHARE) is how
 * much of the chunk's parsing to take: raised while the reader's thread spends more CPU
 * time a chunk than the inflate thread, lowered while it spends less. */
typedef void (*tr_source_ahead_fn)(void *ctx, unsigned slot, const uint8_t *buf, size_t len,
                                   const tr_block_masks *masks, unsigned share);

typedef struct tr_source_opts {
  size_t chunk;             /* decompressed bytes per chunk; 0 = the default (1 MiB) */
  bool threaded;            /* read (and inflate) on a second thread (false for small peeks) */
  tr_inflater inflater;     /* the gzip inflater (tr_read_options.inflater) */
  bool index;               /* classify every chunk into block masks (tr_source_masks) */
  tr_simd_level level;      /* ... at this level (tr_simd_level_available) */
  tr_source_ahead_fn ahead; /* NULL: none */
  void *ahead_ctx;          /* borrowed: must outlive the source */
  unsigned ahead_share;     /* 0: chosen by the threads' CPU times; else always this (tests) */
} tr_source_opts;

/* path "-" is standard input. */
tr_source *tr_source_open_path(const char *path, const tr_source_opts *o, tr_error *err);
tr_source *tr_source_open_buffer(const void *buf, size_t len, const tr_source_opts *o,
                                 tr_error *err);
/* 1 with the next chunk, 0 at the end of input, -1 on error (err filled: TR_ERR_IO or
 * TR_ERR_GZIP with the compressed offset). */
int tr_source_next(tr_source *s, const uint8_t **data, size_t *len, tr_error *err);
/* The masks of the chunk tr_source_next returned last (structural.h), one per 64 bytes,
 * computed on the second thread for a threaded source; NULL when the source does not index.
 * Borrowed like the chunk. */
const tr_block_masks *tr_source_masks(const tr_source *s);
/* The ring slot of the chunk tr_source_next returned last, or -1 when it is not from the
 * ring (a buffer's plain input, an unthreaded source): what tr_source_ahead_fn left for it. */
int tr_source_slot(const tr_source *s);
/* Input (compressed, for gzip) bytes consumed up to the end of the current chunk. */
uint64_t tr_source_consumed(const tr_source *s);
/* Size of the input when known (regular files, buffers), else 0. */
uint64_t tr_source_total(const tr_source *s);
bool tr_source_is_gzip(const tr_source *s);
void tr_source_close(tr_source *s);

/* Fills err (if not NULL) with code, optional offset and a printf-style message. */
void tr_set_error(tr_error *err, int code, bool has_offset, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
