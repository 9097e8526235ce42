/*
 * regex_literals.h - the literals a regex's matches must contain, for the classifier
 * prefilter (prefilter.h; private to the engine).
 *
 * A rule's regex needs PCRE2 only on a name that holds one of its required literals
 * (`^triton_[a-z]+_fused_` needs "_fused_" or "triton_"; `(?:^|::)transpose(?:_\w+)*<`
 * needs "transpose"). The answer is a set of strings, one of which occurs in every text
 * the regex matches. They are lower-cased: the prefilter looks for them in the
 * lower-cased text, which serves caseless and case-sensitive regexes alike (a text
 * holding "Gemm" holds "gemm" once folded), since the engine compiles no UTF mode and
 * PCRE2's caseless bytes are then the ASCII letters.
 *
 * The extraction is conservative: a construct it does not follow ((?x), \Q, \x,
 * callouts, (*VERB)s, recursion, a '{' that is not a plain quantifier) yields no set, and
 * the regex then always runs. Lookarounds and character classes add nothing (a class may
 * be one of several bytes), nor does a back reference (some text); an optional or
 * repeated-from-zero piece breaks a literal.
 *
 * Ownership: the set is held in the caller's te_literal_set (fixed arrays, no heap).
 */
#ifndef TE_REGEX_LITERALS_H
#define TE_REGEX_LITERALS_H

#include <stdbool.h>
#include <stddef.h>

#include "triage/limits.h" /* TE_LITERAL_SET_MAX, TE_LITERAL_MAX_LEN */

typedef struct te_literal_set {
  size_t n;
  unsigned char len[TE_LITERAL_SET_MAX];
  char s[TE_LITERAL_SET_MAX][TE_LITERAL_MAX_LEN];
} te_literal_set;

/* Fills *out with lower-cased literals one of which every match of the regex src (PCRE2
 * syntax) contains, each non-empty. False when there is no such set: the regex can match
 * without any literal, or uses a construct the extraction does not follow. */
bool te_regex_required(const char *src, te_literal_set *out);

#endif
