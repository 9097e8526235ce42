/*
 * pack.h - one validated rule pack: the entries of each section, before merging
 * (private to the engine). pack_load.c builds it; rules.c merges packs into a rule set.
 *
 * Packs are validated into "entries" (one per list item of a pack). Entries of every
 * loaded pack are merged by id into the rule set's lists; finalize then resolves names,
 * compiles, and builds the flat public arrays of triage/rules.h from the merged lists.
 *
 * Ownership: a pack and its entries live in the arena given to te_pack_load; the PCRE2
 * objects and matchers it creates are listed in the registry given to it.
 */
#ifndef TE_PACK_H
#define TE_PACK_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "list.h"
#include "matcher.h"
#include "registry.h"
#include "settings.h"
#include "triage/rules.h"
#include "yaml_tree.h"

typedef struct class_rule_entry {
  te_entry hdr;
  const char *category; /* the label as written (a kind or a category) */
  te_origin category_origin;
  te_mref match, unless;
  bool has_match, has_unless;
  const char *from_classifier; /* derived rule: NULL when absent */
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
  te_list categories; /* vocabulary, merged by id */
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
  const char *repository; /* "owner/name"; NULL: none */
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
  te_origin *evidence_origin; /* one per pat.evidence entry; NULL after a load error */
  te_origin *dtype_origin;    /* one per pat.dtype entry; NULL after a load error */
  te_mref riders;             /* chain.riders */
  bool has_riders;
  te_mref merged; /* merge.merged */
  bool has_merged;
  te_origin *shape_format_origin;   /* one per pat.shape_formats entry; NULL after an error */
  te_origin *framework_path_origin; /* one per pat.framework_paths entry (its framework key) */
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
  pcre2_code *code; /* listed in the registry, which releases it */
  size_t n_examples;
  display_example *examples;
} display_entry;

/* The roofline sections (roofline_pack.c): the public form is filled at load, the
 * references (dtype ids, matchers) resolved at finalize. */
typedef struct dtype_entry {
  te_entry hdr;
  te_dtype d;
} dtype_entry;

typedef struct device_entry {
  te_entry hdr;
  te_device d;
  te_device_match *match; /* d.match, writable until finalize */
  te_mref *names;         /* one per match entry; name == NULL && inline_m == NULL: none */
} device_entry;

typedef struct op_cost_entry {
  te_entry hdr;
  te_op_cost c;
  const char *out_dtype; /* id, resolved at finalize; NULL when not given */
  te_origin out_dtype_origin;
} op_cost_entry;

typedef struct model_entry {
  te_entry hdr;
  te_model m;
  te_mref match;
  const char *weight_dtype; /* id, resolved at finalize */
  te_origin weight_dtype_origin;
} model_entry;

/* Every id-keyed list of a pack and of the merged set. */
typedef struct te_sections {
  te_list matchers, classifiers, ladders, rewrites, stages, path_rules, annotation_rules, ranks,
      frameworks, text_hints, key_hints, probes, settings /* setting_entry */, aliases, fusions,
      display_names, dtypes, devices, op_costs, models;
  const char *default_framework;
  te_origin default_framework_origin;
} te_sections;

typedef struct te_pack {
  te_pack_info info;
  te_sections s;
} te_pack;

/* Validates one YAML pack into entries allocated in arena a; matchers and regexes it
 * creates are listed in reg. Returns the pack, or NULL with diagnostics. */
te_pack *te_pack_load(te_arena *a, te_registry *reg, const char *file, const char *buf, size_t len,
                      te_diags *diags);

/* roofline_pack.c: the item parsers of dtypes:, devices:, op_costs: and models:. */
struct te_vctx;
te_entry *te_parse_dtype(struct te_vctx *v, const ty_node *item, const char *what, void *ctx);
te_entry *te_parse_device(struct te_vctx *v, const ty_node *item, const char *what, void *ctx);
te_entry *te_parse_op_cost(struct te_vctx *v, const ty_node *item, const char *what, void *ctx);
te_entry *te_parse_model(struct te_vctx *v, const ty_node *item, const char *what, void *ctx);

/* display_names.c: checks a replacement template against a compiled regex (every $N and
 * ${NAME} must name a group of code); on error writes a message and the byte offset of
 * the bad reference and returns false. */
bool te_display_check_template(const pcre2_code *code, const char *tmpl, size_t *err_offset,
                               char *msg, size_t cap);

#endif
