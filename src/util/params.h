/*
 * util/params.h - the trailing parameter list of a function signature, as demangled
 * kernel names print it ("void f<int>(float*, int)"): the canonical names
 * (analysis/trace_view.c) and the display names (report/names.c) both cut it.
 *
 * Ownership: reads the caller's text; allocates nothing.
 */
#ifndef TRIAGE_UTIL_PARAMS_H
#define TRIAGE_UTIL_PARAMS_H

#include <stddef.h>

/* Where the balanced "(...)" that ends s[0..n) opens: the index of its '(', or n when
 * s[0..n) does not end with ')' or its parentheses do not balance. */
size_t ut_params_start(const char *s, size_t n);

#endif
