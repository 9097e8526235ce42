/*
 * matcher.h - the compiled form of one matcher mapping (docs/rules.md, "Matchers").
 *
 * A matcher is built while a pack is validated (regexes are compiled then, so syntax
 * errors point into the pack), JIT-compiled at finalize, and then only read - except for
 * its result cache, which is why queries are thread-compatible rather than thread-safe.
 *
 * Ownership: the te_matcher struct and its pattern arrays live in the rule set's arena;
 * the PCRE2 codes, match data and cache are heap objects released by te_matcher_release,
 * which te_rules_destroy calls for every matcher it created.
 */
#ifndef TE_MATCHER_H
#define TE_MATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triage/limits.h"
#include "triage/rules.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "strcache.h"
#include "token_index.h"
#include "tokens.h"

/* A matcher position in a pack: an inline mapping, or the name of a named matcher
 * resolved at finalize. */
typedef struct te_mref {
  const char *name;     /* NULL for an inline matcher */
  te_matcher *inline_m; /* NULL for a name */
  te_origin origin;     /* where the position was written */
  const te_matcher *resolved;
} te_mref;

typedef struct te_example {
  const char *text;
  bool should_match;
  te_origin origin;
} te_example;

struct te_matcher {
  const char *name; /* named matcher name, or NULL for inline */
  te_origin origin;
  bool case_sensitive;
  bool compact;
  size_t n_keywords, n_words, n_tokens, n_prefixes, n_regex;
  const char **keywords; /* lower-cased unless case_sensitive */
  size_t *keyword_lens;
  const char **compact_keywords; /* alnum-only lower-case form, for compact mode */
  size_t *compact_lens;
  const char **words;
  size_t *word_lens;
  const char **tokens; /* lower-case alphanumerics; hit whole runs of name tokens (tokens.h) */
  size_t *token_lens;
  /* The rule set's index of all token entries and this matcher's slot in it (set at
   * finalize; NULL before, and for a matcher without tokens): a subject answers every
   * matcher of the index in one pass (token_index.h). */
  const te_token_index *tindex;
  uint32_t tslot;
  const char **prefixes;
  size_t *prefix_lens;
  const char **regex_src;
  pcre2_code **regex;
  te_mref exclude; /* name == NULL && inline_m == NULL when absent */
  bool has_exclude;
  size_t n_examples;
  te_example *examples;
  /* Mutable state behind a const te_matcher (queries take const pointers): JIT, cache
   * and limit counters. Allocated with the matcher; NULL only while it is built. */
  struct te_matcher_state *st;
};

/* Three byte pairs of a literal (first, middle, last), as bits of a subject's pair set
 * (te_subject.pairs); TE_NO_PROBE for a literal shorter than two bytes. */
#define TE_NO_PROBE 0xffffu
typedef struct te_probe {
  uint16_t at[3];
} te_probe;

/* A regex's JIT state. A regex (a matcher's, a display rule's) is JIT-compiled on its
 * first run, not when the rules are finalized: most of the packs' regexes are for other
 * frameworks or shapes and never run on a given trace, and compiling all of them was a
 * sixth of the start-up. Zero is TE_JIT_UNTRIED. */
enum { TE_JIT_UNTRIED, TE_JIT_COMPILING, TE_JIT_ON, TE_JIT_OFF };

/* Whether re runs JIT-compiled (through pcre2_jit_match, which skips the checks
 * pcre2_match repeats on every call: a third of a cheap regex's cost), compiling it on the
 * first call; *jit is its TE_JIT_* state. Two lanes may run the same regex first at once:
 * the one that claims the state compiles while the other waits, so every run sees the
 * regex as an eager compile would have left it. JIT is an optimisation: where it is
 * unavailable the interpreter runs the same pattern under the same limits. */
bool te_regex_jit_once(_Atomic unsigned char *jit, pcre2_code *re);

/* How one regex runs, decided at prepare. */
typedef struct te_regex_plan {
  _Atomic unsigned char jit; /* TE_JIT_*, te_regex_jit_once */
  /* For a pattern anchored at the start whose first byte is fixed ('^triton_'): that
   * byte, lower-cased, since a text starting otherwise cannot match and most kernel names
   * meet such a pattern only to fail there; -1 for any other pattern. */
  int anchored_first;
} te_regex_plan;

typedef struct te_matcher_state {
  pcre2_match_data *match_data;
  pcre2_match_context *match_ctx;
  te_lcache cache;
  size_t limit_misses;
  size_t lane_misses[TE_LANES]; /* counted in a lane; te_rules_lanes_fold adds them up */
  bool prepared;
  te_regex_plan *plans; /* per regex; heap, at prepare */
  /* per keyword, compact keyword and word (case-insensitive matchers only): a literal
   * whose pairs are not all in the text cannot be in it, so most literals are rejected
   * with three bit tests instead of a scan (heap, built at prepare) */
  te_probe *kw_probe, *ckw_probe, *word_probe;
} te_matcher_state;

/* Plans the regexes (each is JIT-compiled on its first run) and creates the match
 * context. Returns 0 or -1 (no memory). */
int te_matcher_prepare(const te_matcher *m);
/* The match without consulting or filling the cache (for callers that cache a whole
 * decision, such as a classifier). */
bool te_matcher_match_uncached(const te_matcher *m, const char *s, size_t len);

#define TE_PAIR_BITS 1024 /* hashed byte pairs of a subject's folded and compact text */

/* One string tested against several matchers (a classifier's rules, a kernel row against
 * the fusion patterns): its lower-cased and compact forms, its token form and which
 * token matchers of the rule set's index it hits are computed once, on the first matcher
 * that needs each (triage/rules.h has the public handle). te_subject_done frees them. */
#define TE_SUBJECT_DECISIONS 4

struct te_subject {
  const char *s;
  size_t len;
  char *folded, *compact; /* lower-cased s and its lower-case alphanumerics; NULL = not yet */
  size_t compact_len;
  char *text_heap; /* the forms' block when longer than text_local */
  te_token_form tf;
  bool tf_built, tf_failed;
  const te_token_index *ti; /* the index `hits` answers; NULL until computed */
  uint64_t *hits;           /* bit per slot of ti: hits_local or heap */
  /* classifier decisions already made for this text (rules.c): a derived classifier's
   * rules ask the base classifier once each, and the answer does not change; keyed by the
   * classifier's never-reused number (te_rules.classifier_key0), 0 = free */
  uint64_t decided_by[TE_SUBJECT_DECISIONS];
  int decided[TE_SUBJECT_DECISIONS];
  unsigned literal_uses; /* case-insensitive literal matchers that met the subject */
  /* the id of the matcher group (te_matcher_group) `may` answers: ids are never reused,
   * so bits computed for a destroyed group never answer a later one; 0 until computed */
  uint64_t may_group;
  uint64_t *may; /* bit per matcher of that group: may_local or heap */
  bool pairs_built;
  uint64_t hits_local[TE_SUBJECT_LOCAL_HITS];
  uint64_t may_local[TE_LOCAL_RULE_WORDS];
  /* which byte pairs the folded ([0]) and compact ([1]) text hold (matcher.c,
   * subject_pairs), once pairs_built */
  uint64_t pairs[2][TE_PAIR_BITS / 64];
  char text_local[TE_SUBJECT_LOCAL_TEXT];
};
void te_subject_init(te_subject *subj, const char *s, size_t len);
/* Builds the subject's folded and compact texts (for the classifier prefilter); false
 * when out of memory. */
bool te_subject_texts(te_subject *subj);
void te_subject_done(te_subject *subj);
/* Frees the heap objects of m (not m itself: it lives in the arena). */
void te_matcher_release(te_matcher *m);
/* Regex runs that hit a PCRE2 limit and were treated as no-match. */
size_t te_matcher_limit_misses(const te_matcher *m);
/* Only when no lane runs (rules.h, te_lane_enter): the lanes' cached answers and limit
 * misses join m's own. */
void te_matcher_fold_lanes(const te_matcher *m);

/* Runs a compiled regex under the limits; true on a match, captures into ovector when
 * ovector_out is non-NULL (first capture group as [start, end)). */
bool te_regex_run(pcre2_code *code, pcre2_match_context *ctx, const char *s, size_t len,
                  size_t *group1_start, size_t *group1_end, bool *limit_hit);
/* A match context carrying the limits of triage/limits.h; caller frees it. */
pcre2_match_context *te_regex_context(void);

#endif
