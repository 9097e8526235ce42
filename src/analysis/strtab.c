/*
 * analysis/strtab.c - interning table for the analysis.
 */
#include "analysis/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "trace/intern.h"

/* The trace module's interner serves here too: one arena + open-addressing table in the
 * library instead of two. Equal strings still get the same pointer (""s share the
 * interner's static empty string). */
struct an_strtab {
  tr_intern *in;
};

an_strtab *an_strtab_create(void) {
  an_strtab *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->in = tr_intern_create();
  if (!t->in) {
    free(t);
    return NULL;
  }
  return t;
}

void an_strtab_destroy(an_strtab *t) {
  if (!t) return;
  tr_intern_destroy(t->in);
  free(t);
}

const char *an_strtab_intern(an_strtab *t, const char *s, size_t len) {
  if (!t) return NULL;
  uint32_t id = tr_intern_put(t->in, s, len);
  return id == UINT32_MAX ? NULL : tr_intern_get(t->in, id);
}

const char *an_strtab_cstr(an_strtab *t, const char *s) {
  return an_strtab_intern(t, s, strlen(s));
}
