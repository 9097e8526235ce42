/*
 * rules_internal.h - the state of a te_rules between loading and querying.
 *
 * Packs are validated into "entries" (one per list item of a pack). Entries of every
 * loaded pack are merged by id into the rule set's lists; finalize then resolves names,
 * compiles, and builds the flat public arrays of triage/rules.h from the merged lists.
 *
 * Ownership: everything here lives in te_rules.arena except PCRE2 objects and matcher
 * caches, which te_rules_destroy releases through the list of every matcher created.
 */
#ifndef TE_RULES_INTERNAL_H
#define TE_RULES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "matcher.h"
#include "triage/rules.h"

/* First member of every list entry: what the merge needs. */
typedef struct te_entry {
  const char *id;
  const char *before, *after; /* placement of a new id, or NULL */
  te_origin origin;           /* where the entry starts */
  te_origin place_origin;     /* where before:/after: was written */
} te_entry;

/* An arena-backed vector of entries; growing copies, so an old snapshot stays valid. */
typedef struct te_list {
  te_entry **items;
  size_t n, cap;
} te_list;

typedef struct class_rule_entry {
  te_entry hdr;
  const char *category;          /* the label as written (a kind or a category) */
  te_origin category_origin;
  te_mref match, unless;
  bool has_match, has_unless;
  const char *from_classifier;   /* derived rule: NULL when absent */
  te_origin from_origin;
  size_t n_from;
  const char **from_categories;
  te_origin *from_origins;
  te_class_rule *out; /* public form, built at finalize */
} class_rule_entry;

/* One vocabulary label of a classifier (id = label). */
typedef struct category_entry {
  te_entry hdr;
  const char *meaning;
  const char *parent; /* NULL for a top-level category */
  te_origin parent_origin;
} category_entry;

typedef struct classifier_entry {
  te_entry hdr;
  const char *default_category; /* NULL when this pack does not set it */
  te_origin default_origin;
  te_list rules;
  te_list categories;           /* vocabulary, merged by id */
} classifier_entry;

typedef struct ladder_rule_entry {
  te_entry hdr;
  te_mref raw, normalized;
  bool has_raw, has_normalized;
  int score;
  bool penalize;
} ladder_rule_entry;

typedef struct ladder_entry {
  te_entry hdr;
  bool has_default;
  int default_score;
  bool has_penalty;
  te_mref penalty_match;
  int penalty;
  te_list rules, adjustments;
} ladder_entry;

typedef struct rewrite_entry {
  te_entry hdr;
  const char *find, *replace;
  size_t find_len;
} rewrite_entry;

typedef struct stage_entry {
  te_entry hdr;
  const char *label;
  int order;
} stage_entry;

typedef struct stage_rule_entry {
  te_entry hdr;
  const char *stage;
  te_origin stage_origin;
  te_mref match;
} stage_rule_entry;

typedef struct rank_entry {
  te_entry hdr;
  const char *regex_src;
  pcre2_code *code;
} rank_entry;

typedef struct framework_entry {
  te_entry hdr;
  const char *label;
  size_t n_aliases;
  const char **aliases;
} framework_entry;

typedef struct text_hint_entry {
  te_entry hdr;
  const char *framework;
  te_origin framework_origin;
  te_mref match;
} text_hint_entry;

typedef struct keys_hint_entry {
  te_entry hdr;
  const char *framework;
  te_origin framework_origin;
  size_t n_keys;
  const char **keys;
} keys_hint_entry;

typedef struct probe_entry {
  te_entry hdr;
  const char *framework;
  te_origin framework_origin;
  const char *path;
  te_mref body_match;
  bool has_body_match;
  const char *json_list_key;
  double timeout_s;
} probe_entry;

typedef struct setting_entry {
  te_entry hdr; /* id = dotted key */
  bool is_list;
  double number;
  size_t n_items;
  const char **items;
} setting_entry;

typedef struct alias_entry {
  te_entry hdr;
  te_mref trigger;
  size_t n_tokens;
  const char **tokens;
} alias_entry;

typedef struct fusion_entry {
  te_entry hdr;
  te_fusion_pattern pat; /* scalar fields filled at load; matchers/subsumes at finalize */
  te_origin framework_origin;
  te_mref active;
  bool has_active;
  size_t n_split;
  te_mref *split;
  size_t n_subsumes;
  const char **subsumes;
  te_origin *subsumes_origin;
} fusion_entry;

typedef struct matcher_entry {
  te_entry hdr; /* id = matcher name */
  te_matcher *m;
} matcher_entry;

/* One `display_names:` rule (display_names.c). */
typedef struct display_example {
  const char *name, *display;
  te_origin origin;
} display_example;

typedef struct display_entry {
  te_entry hdr;
  const char *regex_src, *replace;
  pcre2_code *code; /* released through te_rules_track_code */
  size_t n_examples;
  display_example *examples;
} display_entry;

/* Every id-keyed list of a pack and of the merged set. */
typedef struct te_sections {
  te_list matchers, classifiers, ladders, rewrites, stages, path_rules, annotation_rules,
      ranks, frameworks, text_hints, key_hints, probes, settings, aliases, fusions,
      display_names;
  const char *default_framework;
  te_origin default_framework_origin;
} te_sections;

typedef struct te_pack {
  te_pack_info info;
  te_sections s;
} te_pack;

struct te_rules {
  te_arena *arena;
  te_sections merged;
  te_pack **packs;
  size_t n_packs;
  te_pack_info *infos; /* copies for te_rules_pack */
  /* every matcher any pack created, to release their PCRE2 objects and caches */
  te_matcher **all_matchers;
  size_t n_all_matchers, cap_all_matchers;
  pcre2_code **codes; /* rank-pattern regexes of every pack */
  size_t n_codes, cap_codes;
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
  /* one decision cache per classifier (rule index, -1 = default) and per ladder (score),
   * parallel to classifiers / ladders: one key per distinct name instead of one per
   * matcher the name passes through */
  te_strcache *classifier_caches;
  te_strcache *ladder_caches;
};

/* list helpers (rules.c) */
bool te_list_push(te_arena *a, te_list *l, te_entry *e);
te_entry *te_list_find(const te_list *l, const char *id);
/* Registers a matcher for release at destroy. */
bool te_rules_track_matcher(te_rules *r, te_matcher *m);
/* Registers a standalone compiled regex for release at destroy. */
bool te_rules_track_code(te_rules *r, pcre2_code *code);

/* A built classifier by id, before or after finalize succeeded (rules.c). */
const te_classifier *te_rules_classifier_any(const te_rules *r, const char *id);
/* display_names.c: checks a replacement template against a compiled regex (every $N and
 * ${NAME} must name a group of code); on error writes a message and the byte offset of
 * the bad reference and returns false. */
bool te_display_check_template(const pcre2_code *code, const char *tmpl, size_t *err_offset,
                               char *msg, size_t cap);
/* Builds the public display-rule array from the merged list (finalize). false: no memory. */
bool te_display_build(te_rules *r);
void te_display_release(te_rules *r);
/* Runs the examples of every live display rule; returns the number that failed. */
size_t te_display_run_examples(const te_rules *r, te_diags *d, size_t *n_checked);

/* Validates one YAML pack (pack_load.c). Returns the pack, or NULL with diagnostics. */
te_pack *te_pack_load(te_rules *r, const char *file, const char *buf, size_t len,
                      te_diags *diags);

#endif
