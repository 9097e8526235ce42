/*
 * analysis/strtab.h - string interning for the analysis: every derived string
 * (canonical names, locations, stacks, rendered cells) is stored once and compared by
 * pointer afterwards.
 *
 * Ownership: an_strtab owns every string it returns (arena blocks); the pointers stay
 * valid until an_strtab_destroy.
 */
#ifndef TRIAGE_ANALYSIS_STRTAB_H
#define TRIAGE_ANALYSIS_STRTAB_H

#include <stddef.h>

typedef struct an_strtab an_strtab;

an_strtab *an_strtab_create(void);
void an_strtab_destroy(an_strtab *t);
/* The interned copy of s (len bytes), NUL-terminated; NULL only when out of memory. */
const char *an_strtab_intern(an_strtab *t, const char *s, size_t len);
const char *an_strtab_cstr(an_strtab *t, const char *s);

#endif
