/*
 * registry.h - every matcher and standalone regex a rule set created while loading packs
 * (private to the engine).
 *
 * Matchers and entries live in the rule set's arena, but their PCRE2 objects and match
 * caches are heap memory; the registry lists them so te_rules_destroy can release them
 * (and finalize can JIT-compile every matcher once), including those of packs that
 * failed validation and were never merged.
 *
 * Ownership: the registry owns its two arrays and releases the objects listed in them.
 */
#ifndef TE_REGISTRY_H
#define TE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "matcher.h"

typedef struct te_registry {
  te_matcher **matchers;
  size_t n_matchers, cap_matchers;
  pcre2_code **codes; /* standalone regexes: rank patterns, display rules */
  size_t n_codes, cap_codes;
} te_registry;

/* Lists m / code for release; false when out of memory (the caller releases it). */
bool te_registry_add_matcher(te_registry *g, te_matcher *m);
bool te_registry_add_code(te_registry *g, pcre2_code *code);
/* Releases every listed object and the arrays. */
void te_registry_release(te_registry *g);

#endif
