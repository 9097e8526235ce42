/*
 * triage/limits.h - every hard limit of the rules engine (rule packs, matching).
 *
 * Each limit exists so that hostile or careless input (a rule pack written by hand, a
 * string from a trace) fails with a clear message instead of exhausting memory, stack or
 * time. Each one has a test with an input just over it (tests/bad-input). The limits of
 * src/ (traces, analysis, reports, the command line, live capture) are in
 * src/util/limits.h: the engine stands alone and does not hold its callers' limits.
 */
#ifndef TRIAGE_LIMITS_H
#define TRIAGE_LIMITS_H

/* ---- rule packs (engine/) ---- */

/* YAML nesting depth of a rule pack. Real packs nest 6 deep; 64 leaves headroom. */
#define TE_MAX_YAML_DEPTH 64
/* Anchors plus aliases in one pack. Refusing many aliases defeats "billion laughs". */
#define TE_MAX_YAML_ALIASES 64
/* Total YAML nodes one pack may produce after alias expansion. */
#define TE_MAX_YAML_NODES 200000
/* Bytes of one rule-pack file. */
#define TE_MAX_PACK_BYTES (8u * 1024u * 1024u)
/* Length of one keyword or regex source. */
#define TE_MAX_PATTERN_LEN 4096
/* Packs loaded in one run (defaults plus --rules). */
#define TE_MAX_PACKS 256
/* Diagnostics kept per load; further ones are counted, not stored. */
#define TE_MAX_DIAGNOSTICS 1000
/* PCRE2 match limit (backtracking steps) and depth limit (heap frames) for one match.
 * A regex that needs more simply does not match, and the miss is counted. */
#define TE_PCRE2_MATCH_LIMIT 1000000u
#define TE_PCRE2_DEPTH_LIMIT 10000u
/* Distinct strings whose match result one matcher caches. */
#define TE_MATCH_CACHE_MAX 262144u
/* Kernels a fusion pattern's chain gate lets sit between two pieces of one split
 * (chain.max_between). Pieces of one fusion are neighbours; a wider window would pair
 * kernels of different layers. */
#define TE_MAX_CHAIN_BETWEEN 64
/* Pieces (split groups) of one fusion the chain gate follows; patterns with more groups
 * (none of the defaults has more than four) are matched without the chain gate. */
#define TE_MAX_CHAIN_PIECES 8
/* States of one classifier's prefilter automaton (prefilter.h: one state per distinct
 * prefix of the rules' literals; the kernel classifier needs ~3,000). Past it the
 * classifier runs every rule on every name: the same answers, without the shortcut. */
#define TE_PREFILTER_MAX_STATES 16384u

/* Entries of a model's layer_types cycle (one bit each; real models repeat 2 to 6). */
#define TE_MAX_LAYER_CYCLE 64

/* ---- the literals a regex requires (regex_literals.h, for the prefilter) ----
 * Past each of these a regex has no literal set and runs on every name: the same answers
 * without the shortcut, never an error. */

/* Strings in one set: an alternation wider than this gives none. */
#define TE_LITERAL_SET_MAX 16
/* Bytes of one string, NUL included: a longer run of literal text requires its prefix. */
#define TE_LITERAL_MAX_LEN 48
/* Groups nested deeper than this give no set: each level holds a few sets on the stack.
 * The packs' regexes nest at most three deep. */
#define TE_LITERAL_MAX_DEPTH 8

/* ---- working sizes (no input is refused at them) ----
 * Bit sets kept on the stack or inside a te_subject; a larger one is on the heap. */

/* 64-bit words of a prefilter's answer (a bit per rule of a classifier or of the display
 * rules, or per matcher of a group): 512 rules. */
#define TE_LOCAL_RULE_WORDS 8
/* 64-bit words of a subject's token-index hits: 512 token slots. */
#define TE_SUBJECT_LOCAL_HITS 8
/* Bytes of a subject's folded and compact texts: 256 (a kernel name of ~127 bytes). */
#define TE_SUBJECT_LOCAL_TEXT 256

#endif
