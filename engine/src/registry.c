/* registry.c - objects a rule set must release (registry.h). */
#include "registry.h"

#include <stdlib.h>
#include <string.h>

bool te_registry_add_matcher(te_registry *g, te_matcher *m) {
  if (g->n_matchers == g->cap_matchers) {
    size_t cap = g->cap_matchers ? g->cap_matchers * 2 : 64;
    te_matcher **v = realloc(g->matchers, cap * sizeof *v);
    if (!v) return false;
    g->matchers = v;
    g->cap_matchers = cap;
  }
  g->matchers[g->n_matchers++] = m;
  return true;
}

bool te_registry_add_code(te_registry *g, pcre2_code *code) {
  if (g->n_codes == g->cap_codes) {
    size_t cap = g->cap_codes ? g->cap_codes * 2 : 16;
    pcre2_code **v = realloc(g->codes, cap * sizeof *v);
    if (!v) return false;
    g->codes = v;
    g->cap_codes = cap;
  }
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
