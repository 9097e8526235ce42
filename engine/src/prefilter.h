/*
 * prefilter.h - which of a classifier's rules can hit a name, from one pass over it
 * (private to the engine).
 *
 * A classifier tries its rules in order; a name that hits none of them (most names of a
 * trace with many distinct kernels) paid every rule's matcher: ~250 instructions each,
 * PCRE2 runs included, for ~30 rules. Yet a matcher can only hit a name that holds one
 * of its literals: a keyword, word or prefix in the lower-cased name, a regex's required
 * literal (regex_literals.h) there too, a compact keyword or a `tokens:` entry in the
 * name's lower-case alphanumerics (a run of whole tokens is a substring of them, except
 * in an Itanium-mangled name, whose tokens come from its identifiers alone). The
 * prefilter holds every such literal of every rule in one Aho-Corasick automaton, runs
 * it once over each of the two texts, and marks the rules whose literals occur. The
 * classifier then runs only those rules' matchers, in order: the same first hit, since
 * a rule left out could not have hit.
 *
 * A rule is always run when its matcher has a regex without a required literal, an
 * empty literal, or no matcher at all (a derived rule: `from:` another classifier).
 * The display rules (display_names.c: the first whose regex matches a name shows it)
 * are gated the same way by their regexes' literals.
 *
 * Ownership: the prefilter owns its tables; it keeps no pointer into the rule set.
 * Read-only once built, so scans are thread-safe.
 */
#ifndef TE_PREFILTER_H
#define TE_PREFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triage/rules.h"

typedef struct te_prefilter te_prefilter;

/* The prefilter of c's rules; NULL when every rule would run anyway, past
 * TE_PREFILTER_MAX_STATES, or out of memory (the classifier then runs every rule). */
te_prefilter *te_prefilter_build(const te_classifier *c);
/* The prefilter of n regexes (PCRE2 sources), rule i gated by regex i's required
 * literals (the display rules); NULL as te_prefilter_build. Scans pass no compact text. */
te_prefilter *te_prefilter_build_regexes(const char *const *src, size_t n);
/* The prefilter of n matchers (te_matcher_group), rule i gated by matcher i's own
 * patterns (its exclusion can only turn a hit down); NULL as te_prefilter_build. */
te_prefilter *te_prefilter_build_matchers(const te_matcher *const *ms, size_t n);
void te_prefilter_destroy(te_prefilter *pf);

/* Words of the rule mask te_prefilter_scan fills: (rules + 63) / 64. */
size_t te_prefilter_words(const te_prefilter *pf);

/* Sets may[] (te_prefilter_words words) to the rules that can hit the name whose
 * lower-cased text is folded[0..flen) and lower-case alphanumerics compact[0..clen);
 * mangled: the name is Itanium-mangled (te_token_form_mangled). */
void te_prefilter_scan(const te_prefilter *pf, const char *folded, size_t flen, const char *compact,
                       size_t clen, bool mangled, uint64_t *may);

/* The first rule from i on that may (NULL: every rule) marks; n when none is left. */
static inline size_t te_prefilter_next(const uint64_t *may, size_t i, size_t n) {
  while (may && i < n) {
    uint64_t rest = may[i >> 6] >> (i & 63);
    if (rest) return i + (size_t)__builtin_ctzll(rest);
    i = (i | 63) + 1;
  }
  return i < n ? i : n;
}

#endif
