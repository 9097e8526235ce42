/* registry.c - objects a rule set must release (registry.h). */
#include "registry.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

bool te_registry_add_matcher(te_registry *g, te_matcher *m) {
  te_matcher **v = te_grow(g->matchers, &g->cap_matchers, g->n_matchers + 1, sizeof *v, 64);
  if (!v) return false;
  g->matchers = v;
  g->matchers[g->n_matchers++] = m;
  return true;
}

bool te_registry_add_code(te_registry *g, pcre2_code *code) {
  pcre2_code **v = te_grow(g->codes, &g->cap_codes, g->n_codes + 1, sizeof *v, 16);
  if (!v) return false;
  g->codes = v;
  g->codes[g->n_codes++] = code;
  return true;
}

void te_registry_release(te_registry *g) {
  for (size_t i = 0; i < g->n_matchers; i++) te_matcher_release(g->matchers[i]);
  free(g->matchers);
  for (size_t i = 0; i < g->n_codes; i++) pcre2_code_free(g->codes[i]);
  free(g->codes);
  memset(g, 0, sizeof *g);
}
