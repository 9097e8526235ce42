/* diags.c - the caller-owned diagnostics list, and status texts. */
#include "diags.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* A stored diagnostic: the public record plus the strings it owns (te_diag's members
 * are const for readers). */
typedef struct diag_item {
  te_diag pub;
  char *file, *message;
} diag_item;

struct te_diags {
  diag_item *items;
  size_t n, cap;
  size_t n_errors;         /* stored errors */
  size_t n_dropped_errors; /* errors past TE_MAX_DIAGNOSTICS, counted only */
  size_t n_dropped;
};

const char *te_status_str(te_status s) {
  switch (s) {
    case TE_OK:
      return "ok";
    case TE_ERR_IO:
      return "cannot read rule pack";
    case TE_ERR_INVALID:
      return "invalid rule pack";
    case TE_ERR_NOMEM:
      return "out of memory";
    case TE_ERR_LIMIT:
      return "rule pack limit exceeded";
    case TE_ERR_STATE:
      return "rules used in the wrong state";
    case TE_ERR_NOT_FOUND:
      return "not found";
  }
  return "unknown status";
}

te_diags *te_diags_create(void) { return calloc(1, sizeof(te_diags)); }

void te_diags_destroy(te_diags *d) {
  if (!d) return;
  for (size_t i = 0; i < d->n; i++) {
    free(d->items[i].file);
    free(d->items[i].message);
  }
  free(d->items);
  free(d);
}

size_t te_diags_count(const te_diags *d) { return d ? d->n : 0; }
size_t te_diags_error_count(const te_diags *d) { return d ? d->n_errors : 0; }

const te_diag *te_diags_get(const te_diags *d, size_t i) {
  return (d && i < d->n) ? &d->items[i].pub : NULL;
}

int te_diag_format(const te_diag *diag, char *buf, size_t cap) {
  const char *sev = diag->severity == TE_SEV_WARNING ? "warning" : "error";
  const char *file = diag->file ? diag->file : "<rules>";
  if (buf == NULL) cap = 0;
  if (diag->line == 0)
    return snprintf(buf, cap, "%s: %s: %s", file, sev, diag->message ? diag->message : "");
  return snprintf(buf, cap, "%s:%u:%u: %s: %s", file, diag->line, diag->col, sev,
                  diag->message ? diag->message : "");
}

static char *dup_str(const char *s) {
  size_t n = strlen(s);
  char *p = malloc(n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

void te_diags_add(te_diags *d, te_severity sev, const char *file, unsigned line, unsigned col,
                  const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  te_diags_vadd(d, sev, file, line, col, fmt, ap);
  va_end(ap);
}

void te_diags_vadd(te_diags *d, te_severity sev, const char *file, unsigned line, unsigned col,
                   const char *fmt, va_list ap) {
  if (!d) return;
  if (d->n >= TE_MAX_DIAGNOSTICS) {
    d->n_dropped++;
    if (sev == TE_SEV_ERROR) d->n_dropped_errors++;
    return;
  }
  diag_item *items = te_grow(d->items, &d->cap, d->n + 1, sizeof *items, 16);
  if (!items) return;
  d->items = items;
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  /* Messages quote pack text; a control byte from a binary file must not reach a
   * terminal, so anything outside printable ASCII/UTF-8 is shown as '?'. */
  for (char *p = msg; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  diag_item *item = &d->items[d->n];
  item->file = dup_str(file ? file : "<rules>");
  item->message = dup_str(msg);
  if (!item->file || !item->message) {
    free(item->file);
    free(item->message);
    return;
  }
  item->pub.severity = sev;
  item->pub.line = line;
  item->pub.col = col;
  item->pub.file = item->file;
  item->pub.message = item->message;
  d->n++;
  if (sev == TE_SEV_ERROR) d->n_errors++;
}

size_t te_diags_dropped(const te_diags *d) { return d ? d->n_dropped : 0; }

size_t te_diags_total_errors(const te_diags *d) {
  return d ? d->n_errors + d->n_dropped_errors : 0;
}
