/*
 * rules_internal.h - the state of a te_rules between loading and querying.
 *
 * Ownership: everything here lives in te_rules.arena except PCRE2 objects and matcher
 * caches, which te_rules_destroy releases through the registry.
 */
#ifndef TE_RULES_INTERNAL_H
#define TE_RULES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "pack.h"
#include "registry.h"
#include "triage/rules.h"

/* How a display rule's regex is run (display_names.c): with pcre2_jit_match once the JIT
 * compiled it (matcher.h te_regex_jit_once: on its first run), and, for an anchored
 * pattern with a fixed first byte, not at all on a name starting otherwise. */
typedef struct te_display_plan {
  _Atomic unsigned char jit; /* TE_JIT_* */
  int first;                 /* the byte an anchored match starts with, -1 when not fixed */
} te_display_plan;

/* A derived rule (`from:` another classifier), resolved at finalize: its base classifier
 * (NULL: the rule is not derived, or its table could not be made) and a bit per base
 * decision, default first then each base rule, set when that decision gives one of the
 * rule's labels. */
typedef struct te_derived {
  const te_classifier *base;
  uint64_t *accept;
} te_derived;

/* A classifier whose every rule is derived from one base classifier, with no matcher and
 * no exclusion of its own (the overlap classes from the kernel categories), decides a
 * name from the base's decision alone: its deciding rule (-1: the default) per base
 * decision, the default first then each base rule, resolved at finalize. base NULL: the
 * classifier reads the name. */
typedef struct te_by_base {
  const te_classifier *base;
  int *rule;
} te_by_base;

struct te_rules {
  te_arena *arena;
  te_sections merged;
  te_pack **packs;
  size_t n_packs, cap_packs;
  te_pack_info *infos; /* copies for te_rules_pack */
  /* every matcher and rank regex any pack created, to release and to compile */
  te_registry reg;
  pcre2_match_context *rank_ctx;
  bool finalized;
  bool failed; /* finalize found errors: queries answer as if no pack were loaded */
  /* public arrays, built at finalize */
  te_classifier *classifiers;
  size_t n_classifiers;
  te_ladder *ladders;
  size_t n_ladders;
  te_stage *stages;
  size_t n_stages;
  te_framework *frameworks;
  size_t n_frameworks;
  const te_framework *default_framework;
  te_url_probe *probes;
  size_t n_probes;
  te_alias_group *aliases;
  size_t n_aliases;
  te_fusion_pattern **fusions;
  size_t n_fusions;
  /* display rules (display_names.c), parallel arrays built at finalize */
  te_display_rule *display_rules;
  const display_entry **display_entries;
  size_t n_display_rules;
  pcre2_match_context *display_ctx;
  /* per display rule, made once: its match data (one per query was most of a query's cost
   * on a table of many names; queries of one rule set are thread-compatible) and its plan
   * (the JIT's own entry when compiled, the first byte of an anchored pattern) */
  pcre2_match_data **display_md;
  te_display_plan *display_plan;
  size_t n_display_md;
  /* which display rules' regexes can match a name (prefilter.h); NULL: every one runs */
  struct te_prefilter *display_prefilter;
  /* roofline data (roofline_pack.c), built at finalize: dtypes, devices and models in
   * list order, op cost models sorted by op name (one per name: the later entry) */
  const te_dtype **dtypes;
  size_t n_dtypes;
  const te_device **devices;
  size_t n_devices;
  const te_op_cost **op_costs;
  size_t n_op_costs;
  struct te_op_name {
    const char *name;
    const te_op_cost *cost;
  } * op_names;
  size_t n_op_names;
  const te_model **models;
  size_t n_models;
  te_settings settings;
  bool *settings_set; /* parallel to the settings table: some pack set that key */
  /* one decision cache per classifier (rule index, -1 = default) and per ladder (score),
   * parallel to classifiers / ladders: one key per distinct name instead of one per
   * matcher the name passes through */
  te_lcache *classifier_caches;
  te_lcache *ladder_caches;
  /* classifier i's key in a subject's decisions (rules.c, decision_key) is
   * classifier_key0 + i: numbers no other rule set is given, where an address may be
   * taken again by a later rule set */
  uint64_t classifier_key0;
  /* per classifier, the automaton that tells which rules can hit a name (prefilter.h);
   * NULL entries (or array): every rule runs */
  struct te_prefilter **prefilters;
  /* per classifier, per rule: the derived rules' tables (NULL: by name, as before) */
  te_derived **derived;
  /* per classifier: its decision from its base's alone, when that decides it (NULL: none) */
  te_by_base *by_base;
  /* every `tokens:` entry of every matcher, for one-pass token matching (token_index.h) */
  te_token_index *token_index;
  /* the named matchers sorted by name at the start of finalize, for every lookup by name
   * (callers look some up per kernel site; a scan of the list was 3 % of a many-names run) */
  const matcher_entry **named_sorted;
  size_t n_named;
};

/* A built classifier by id, before or after finalize succeeded (rules.c). */
const te_classifier *te_rules_classifier_any(const te_rules *r, const char *id);
/* display_names.c: builds the public display-rule array from the merged list (finalize;
 * false: no memory), releases it, and runs the examples of every live display rule
 * (returns the number that failed). */
bool te_display_build(te_rules *r);
void te_display_release(te_rules *r);
size_t te_display_run_examples(const te_rules *r, te_diags *d, size_t *n_checked);

/* rules.c: resolves a matcher reference at finalize (an unknown name is an error at its
 * position, counted in *errors). */
const te_matcher *te_rules_resolve_ref(te_rules *r, te_diags *d, te_mref *ref, size_t *errors);
/* roofline_pack.c: resolves the roofline sections' references and builds their arrays
 * (finalize); false when out of memory. Errors are counted in *errors. */
bool te_roofline_build(te_rules *r, te_diags *d, size_t *errors);

#endif
