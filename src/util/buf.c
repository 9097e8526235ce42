/* util/buf.c - growing string buffer (buf.h). */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

void ut_buf_addn(ut_buf *b, const char *s, size_t n) {
  if (b->oom) return;
  char *p = ut_grow(b->p, &b->cap, b->n + n + 1, 1);
  if (!p) {
    b->oom = true;
    return;
  }
  b->p = p;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void ut_buf_add(ut_buf *b, const char *s) { ut_buf_addn(b, s, strlen(s)); }

void ut_buf_addf(ut_buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    ut_buf_addn(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  ut_buf_addn(b, big, (size_t)n);
  free(big);
}

void ut_buf_clear(ut_buf *b) {
  b->n = 0;
  if (b->p) b->p[0] = '\0';
}

const char *ut_buf_str(const ut_buf *b) { return b->oom ? NULL : b->p ? b->p : ""; }

void ut_buf_free(ut_buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
  b->oom = false;
}

char *ut_write_to_string(int (*write)(FILE *stream, const char *s), const char *s) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) return NULL;
  int rc = write(mem, s);
  if (fclose(mem) != 0 || rc != 0) {
    free(text);
    return NULL;
  }
  return text;
}
