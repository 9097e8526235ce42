/*
 * util/buf.h - a growing string buffer. An allocation failure is sticky: later appends do
 * nothing and ut_buf_str returns NULL, so a caller checks once at the end. Also the text
 * a stream writer produces, as a string (ut_write_to_string).
 *
 * Ownership: the buffer owns its text; ut_buf_free releases it. ut_write_to_string
 * returns malloc'd text the caller frees.
 */
#ifndef TRIAGE_UTIL_BUF_H
#define TRIAGE_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct ut_buf {
  char *p;  /* NUL-terminated once anything was added */
  size_t n; /* bytes of text */
  size_t cap;
  bool oom;
} ut_buf;

void ut_buf_addn(ut_buf *b, const char *s, size_t n);
void ut_buf_add(ut_buf *b, const char *s);
void ut_buf_addf(ut_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the text, keeping the memory. */
void ut_buf_clear(ut_buf *b);
/* The text ("" when empty), or NULL after an allocation failure. */
const char *ut_buf_str(const ut_buf *b);
void ut_buf_free(ut_buf *b);

/* What write(stream, s) writes, as a NUL-terminated malloc'd string (so an escaper that
 * writes to a FILE also gives strings); NULL when out of memory or write returns
 * non-zero. */
char *ut_write_to_string(int (*write)(FILE *stream, const char *s), const char *s);

#endif
