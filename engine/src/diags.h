/*
 * diags.h - private helpers to append to a caller's te_diags.
 */
#ifndef TE_DIAGS_H
#define TE_DIAGS_H

#include <stdarg.h>

#include "triage/rules.h"

/* Appends one diagnostic (message built printf-style). Past TE_MAX_DIAGNOSTICS the
 * diagnostic is only counted. A NULL list is allowed and ignores everything. */
void te_diags_add(te_diags *d, te_severity sev, const char *file, unsigned line, unsigned col,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void te_diags_vadd(te_diags *d, te_severity sev, const char *file, unsigned line, unsigned col,
                   const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* Errors reported so far, including those past TE_MAX_DIAGNOSTICS that were not stored
 * (te_diags_error_count counts stored ones only). */
size_t te_diags_total_errors(const te_diags *d);

#endif
