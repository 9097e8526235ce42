/*
 * triage/rules.h - the rules engine: load, validate, compile and match YAML rule packs.
 *
 * Every heuristic triage applies to a trace (kernel categories, frame priorities, path
 * rewrites, stage and framework hints, overlap thresholds, fusion patterns) lives in a
 * rule pack (the .yaml files of rules/, format in docs/rules.md, schema in
 * schemas/rulepack.schema.json). This library turns packs into compiled, queryable rules. It does
 * no trace I/O, never prints and never exits: every failure is a status code plus diagnostics.
 *
 * Lifecycle:
 *   te_rules *r = te_rules_create();
 *   te_rules_load_path(r, "rules/", diags);      // repeatable; later packs override
 *   te_rules_load_path(r, "custom.yaml", diags);
 *   te_rules_finalize(r, diags);                 // resolve references, compile (PCRE2 JIT)
 *   ... queries (thread-compatible: one te_rules per thread, or external locking,
 *       because matchers cache results) ...
 *   te_rules_destroy(r);
 *
 * Ownership: a te_rules owns everything reachable from it (an arena per rule set, strings
 * interned). Every pointer a query returns (strings, te_matcher, te_fusion_pattern, ...)
 * is borrowed and stays valid until te_rules_destroy. te_diags is owned by the caller.
 */
#ifndef TRIAGE_RULES_H
#define TRIAGE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triage/limits.h"
#include "triage/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum te_status {
  TE_OK = 0,
  TE_ERR_IO = 1,      /* file or directory unreadable */
  TE_ERR_INVALID = 2, /* a pack failed validation: see diagnostics */
  TE_ERR_NOMEM = 3,
  TE_ERR_LIMIT = 4,    /* a limit of triage/limits.h was exceeded */
  TE_ERR_STATE = 5,    /* API misuse, e.g. loading after finalize */
  TE_ERR_NOT_FOUND = 6 /* a query named something no pack defines */
} te_status;

/* Short English text for a status ("invalid rule pack", ...). Static storage. */
const char *te_status_str(te_status s);

/* ---------------------------------------------------------------- diagnostics */

typedef enum te_severity { TE_SEV_ERROR = 0, TE_SEV_WARNING = 1 } te_severity;

/* One problem in one pack. line and col are 1-based (0 when unknown). */
typedef struct te_diag {
  te_severity severity;
  const char *file; /* path as given to the loader, or the buffer name */
  unsigned line;
  unsigned col;
  const char *message; /* no trailing newline, no "error:" prefix */
} te_diag;

typedef struct te_diags te_diags; /* opaque, caller-owned list of diagnostics */

te_diags *te_diags_create(void);
void te_diags_destroy(te_diags *d);
size_t te_diags_count(const te_diags *d);
size_t te_diags_error_count(const te_diags *d);
const te_diag *te_diags_get(const te_diags *d, size_t i); /* borrowed; NULL if i >= count */
/* Diagnostics past TE_MAX_DIAGNOSTICS: counted here, not stored. */
size_t te_diags_dropped(const te_diags *d);
/* Writes "FILE:LINE:COL: error: MESSAGE" (or "warning:") into buf, always NUL-terminated.
 * Returns the length it wanted (snprintf semantics). */
int te_diag_format(const te_diag *diag, char *buf, size_t cap);

/* ---------------------------------------------------------------- rule sets */

typedef struct te_rules te_rules;     /* opaque; create/destroy */
typedef struct te_matcher te_matcher; /* opaque; owned by te_rules */

te_rules *te_rules_create(void);
void te_rules_destroy(te_rules *r);

/* Loads one pack file, or every *.yaml / *.yml file of a directory in name order.
 * Validation problems are appended to diags (all of them, not only the first) and the
 * call returns TE_ERR_INVALID; nothing of an invalid pack is merged. */
te_status te_rules_load_path(te_rules *r, const char *path, te_diags *diags);
/* Same for a pack held in memory; name is used in diagnostics. */
te_status te_rules_load_buffer(te_rules *r, const char *name, const char *buf, size_t len,
                               te_diags *diags);
/* Resolves cross-pack references (subsumes, unless, named matchers), checks duplicates
 * and dangling references, and JIT-compiles every matcher. Queries require it. */
te_status te_rules_finalize(te_rules *r, te_diags *diags);

/* One loaded pack, for `triage rules list`. */
typedef struct te_pack_info {
  const char *id;
  const char *file;
  const char *description;
  size_t n_classifier_rules, n_ladder_rules, n_matchers, n_path_rewrites, n_stage_rules,
      n_rank_patterns, n_framework_hints, n_settings, n_aliases, n_fusion_patterns, n_examples;
} te_pack_info;
size_t te_rules_pack_count(const te_rules *r);
const te_pack_info *te_rules_pack(const te_rules *r, size_t i);

/* Where an entry was defined, for `rules explain` and diagnostics. */
typedef struct te_origin {
  const char *file;
  unsigned line, col;
} te_origin;

/* ---------------------------------------------------------------- matchers */

/* True when s (len bytes, need not be NUL-terminated) matches: any keyword / word /
 * prefix / regex hits and no exclusion hits. Results are cached per distinct string. */
bool te_matcher_match(const te_matcher *m, const char *s, size_t len);
/* Like te_matcher_match, and reports which entry hit (e.g. "keyword 'nccl'"). */
bool te_matcher_explain(const te_matcher *m, const char *s, size_t len, char *why, size_t cap);
/* Regex runs of m that hit the PCRE2 match/depth limit and counted as no-match. */
size_t te_matcher_limit_misses(const te_matcher *m);

/* Lanes: two threads querying one finalized rule set at once. Queries are otherwise
 * thread-compatible only (a matcher's cache and match data, the classifiers' and
 * ladders' caches change as they answer). Each thread that queries while another does
 * enters a lane of its own first (1 or 2), and no thread queries outside a lane
 * meanwhile: the rule set's caches are then only read, and a lane keeps the answers it
 * finds and its regex match data to itself. te_lane_leave after the thread's last query;
 * te_rules_lanes_fold once every lane has been left, so that later queries find what
 * the lanes learnt. The answers are the same in a lane or out of one. Display names
 * (te_rules_display_name) are not asked in lanes. te_lane_enter: 0, or -1 for a bad
 * lane or when out of memory (the thread is then in no lane). */
int te_lane_enter(unsigned lane);
void te_lane_leave(void);
void te_rules_lanes_fold(const te_rules *r);

/* One text tested against many matchers (a kernel row against every fusion pattern):
 * its lower-cased, compact and token forms, and its hits in the rule set's token index,
 * are built once, on the first matcher that needs each. Results are not cached per
 * string (te_matcher_match does that). Ownership: the caller owns the handle and keeps s
 * alive until the next te_subject_set or te_subject_destroy; one handle per thread. */
typedef struct te_subject te_subject;
te_subject *te_subject_create(void);
void te_subject_destroy(te_subject *subj);
/* Points the handle at s[0..len) and forgets the forms of the previous text. */
void te_subject_set(te_subject *subj, const char *s, size_t len);
/* te_matcher_match on the subject's text; false for a NULL matcher or unset subject. */
bool te_matcher_match_subject(const te_matcher *m, te_subject *subj);
/* A fixed list of matchers asked about the same texts (the run context's model-family
 * and single-node scan over every kernel name): one pass over a subject's text tells
 * which of them can hit at all (a literal of theirs occurs in it), and only those run.
 * Answers equal te_matcher_match_subject's. Ownership: the caller owns the group, which
 * borrows the matchers (their rule set must outlive it); queries are thread-compatible.
 * The subject keeps that pass's answer until its next te_subject_set, keyed by the
 * group's id, which no later group is given: a subject may outlive a group and be asked
 * about another (the other's matchers then all run until the next text). */
typedef struct te_matcher_group te_matcher_group;
/* A group of ms[0..n) (NULL entries never hit); NULL when out of memory. */
te_matcher_group *te_matcher_group_create(const te_matcher *const *ms, size_t n);
void te_matcher_group_destroy(te_matcher_group *g);
/* te_matcher_match_subject of the group's matcher i on the subject. */
bool te_matcher_group_match(const te_matcher_group *g, size_t i, te_subject *subj);
/* A named matcher of the `matchers:` section (e.g. "low_signal"), or NULL. */
const te_matcher *te_rules_matcher(const te_rules *r, const char *name);

/* ---------------------------------------------------------------- classifiers */

/* Classifiers map a kernel name to a category: ordered rules, first hit wins.
 *
 * Every label a classifier gives is declared in its vocabulary (`categories:`), with a
 * one-line meaning. A label with a parent is a finer *kind* of that parent: a rule that
 * gives `convolution` (parent `gemm`) reports category `gemm` and kind `convolution`, so
 * tables keep the coarse label while consumers that need the finer one (fusion
 * components, JSON) can read it. A label without a parent is its own kind. */
typedef struct te_category {
  const char *id;
  const char *meaning;
  const char *parent; /* NULL for a top-level category */
  te_origin origin;
} te_category;

typedef struct te_class_rule {
  const char *id;
  const char *category;     /* reported category: the label's parent, else the label */
  const char *kind;         /* the label the rule gives (== category for top-level ones) */
  const te_matcher *match;  /* may be NULL when from_classifier is set */
  const te_matcher *unless; /* may be NULL */
  /* With from_classifier set, the rule also needs the name's category or kind under
   * that classifier to be one of from_categories (derived classifiers: the overlap class
   * follows the kernel category). */
  const char *from_classifier;
  size_t n_from_categories;
  const char *const *from_categories;
  te_origin origin;
} te_class_rule;

typedef struct te_classifier {
  const char *id;               /* "kernel", "overlap" */
  const char *default_category; /* when no rule hits (a declared top-level label) */
  size_t n_rules;
  const te_class_rule *rules;
  size_t n_categories; /* the vocabulary, in declaration order */
  const te_category *categories;
} te_classifier;

const te_classifier *te_rules_classifier(const te_rules *r, const char *id);
/* Category of name under classifier `id`; *rule (optional) gets the deciding rule or NULL
 * for the default. Returns NULL only if the classifier does not exist. */
const char *te_rules_classify(const te_rules *r, const char *id, const char *name,
                              const te_class_rule **rule);
/* te_rules_classify for a caller that keeps its own answer per name: the decision, and
 * that of any base classifier a derived rule asks, is neither looked up in nor added to
 * the classifiers' caches, which would only hold a second copy of every name. */
const char *te_rules_classify_once(const te_rules *r, const char *id, const char *name,
                                   const te_class_rule **rule);
/* te_rules_classify_once for a caller that already holds the name's decision under one
 * base classifier (base_id; base_rule: the deciding rule's index, -1 for the default),
 * e.g. from classifying it with te_rules_classify_once: a derived rule of `id` reads that
 * decision instead of classifying the name again. A base_id that names no classifier,
 * or a base_rule out of range, is ignored (the base is then asked as usual). */
const char *te_rules_classify_once_given(const te_rules *r, const char *id, const char *name,
                                         const char *base_id, int base_rule,
                                         const te_class_rule **rule);
/* The kind (finer label) of name under classifier `id`: the deciding rule's label, else
 * the default. NULL only if the classifier does not exist. */
const char *te_rules_kind(const te_rules *r, const char *id, const char *name);
/* A declared label of classifier c, or NULL. */
const te_category *te_classifier_category(const te_classifier *c, const char *id);

/* Classifier rules none of whose own `match` examples reach them, because an earlier
 * rule of the same classifier decides every one: one warning per such rule, at the
 * rule, naming an example and the rule that took it. Returns how many were found. */
size_t te_rules_find_dead_rules(const te_rules *r, te_diags *diags);

/* ---------------------------------------------------------------- ladders */

/* A ladder scores a string (frame priority, location priority, overlap scope score):
 * the first rule whose matchers all hit gives the base score (minus the ladder's
 * penalty when the rule is penalised and the penalty matcher hits), then every
 * matching adjustment is added. */
typedef struct te_ladder_rule {
  const char *id;
  const te_matcher *raw;        /* tested on the raw text; NULL = no condition */
  const te_matcher *normalized; /* tested on the normalised text; NULL = no condition */
  int score;
  bool penalize; /* subtract the ladder penalty if penalty matcher hits */
  te_origin origin;
} te_ladder_rule;

typedef struct te_ladder {
  const char *id;
  int default_score;
  const te_matcher *penalty_match; /* may be NULL */
  int penalty;
  size_t n_rules;
  const te_ladder_rule *rules;
  size_t n_adjustments;
  const te_ladder_rule *adjustments; /* penalize unused; all hits add their score */
} te_ladder;

const te_ladder *te_rules_ladder(const te_rules *r, const char *id);
/* Score of (raw, normalized) on ladder id. why (optional) receives a one-line reason. */
int te_rules_score(const te_rules *r, const char *id, const char *raw, const char *normalized,
                   char *why, size_t why_cap);

/* ---------------------------------------------------------------- paths */

/* Rewrites a source path to a repo-relative one: the first rewrite (in rule order) whose
 * `find` occurs (case-insensitively) wins and the result is replace + the text after the
 * match; with no hit, leading slashes are stripped. Writes at most cap bytes (always
 * NUL-terminated) and returns the full length. */
size_t te_rules_normalize_path(const te_rules *r, const char *path, char *out, size_t cap);
/* A Python frame name "PATH(LINE): FUNC" becomes "NORMALIZED_PATH:LINE FUNC" (path through
 * te_rules_normalize_path); any other text is copied unchanged. Same buffer contract. */
size_t te_rules_normalize_frame(const te_rules *r, const char *frame, char *out, size_t cap);

/* ---------------------------------------------------------------- stages */

typedef struct te_stage {
  const char *id;    /* "extend", "decode", "all" */
  const char *label; /* "extend/prefill" */
  int order;         /* render order; lower first */
} te_stage;
size_t te_rules_stage_count(const te_rules *r);
const te_stage *te_rules_stage(const te_rules *r, size_t i);
const te_stage *te_rules_stage_by_id(const te_rules *r, const char *id);
/* Stage named by a path (the caller passes the last path components, lower-cased, joined
 * by '/'), or NULL. */
const te_stage *te_rules_stage_from_path(const te_rules *r, const char *path_tail);
/* Stage named by a user/gpu annotation, or NULL. */
const te_stage *te_rules_stage_from_annotation(const te_rules *r, const char *name);

/* TP rank in a trace file name, by the first rank pattern that matches (its first
 * capture group is the rank). Returns false when no pattern matches. */
bool te_rules_rank_from_filename(const te_rules *r, const char *name, long *rank);

/* ---------------------------------------------------------------- frameworks */

typedef struct te_framework {
  const char *id;    /* "sglang", "vllm", "trtllm", "tokenspeed" */
  const char *label; /* "SGLang", "vLLM", "TensorRT-LLM", "TokenSpeed" */
  /* "owner/name" of the repository its fusion patterns' candidate paths are in (the
   * fusion table names it beside each path); NULL: none stated */
  const char *repository;
  size_t n_aliases;
  const char *const *aliases; /* accepted spellings for --framework */
} te_framework;
size_t te_rules_framework_count(const te_rules *r);
/* Canonical framework for a user spelling (case-insensitive, '_' == '-'), or NULL. */
const te_framework *te_rules_framework_lookup(const te_rules *r, const char *spelling);
/* The framework used when detection finds nothing. */
const te_framework *te_rules_framework_default(const te_rules *r);
/* First text hint that occurs in text (paths, server-args JSON, trace samples), or NULL. */
const te_framework *te_rules_framework_from_text(const te_rules *r, const char *text);
/* Framework whose server-args key set intersects keys, in hint order, or NULL. */
const te_framework *te_rules_framework_from_keys(const te_rules *r, const char *const *keys,
                                                 size_t n_keys);

/* Live-capture probe: GET path; the framework matches if the reply succeeds and, when
 * body_match is set, the body matches it; when json_list_key is set, the reply is a JSON
 * object whose member of that name is a list. */
typedef struct te_url_probe {
  const char *framework;
  const char *path;
  const te_matcher *body_match; /* may be NULL */
  const char *json_list_key;    /* may be NULL */
  double timeout_s;
} te_url_probe;
size_t te_rules_url_probe_count(const te_rules *r);
const te_url_probe *te_rules_url_probe(const te_rules *r, size_t i);

/* ---------------------------------------------------------------- settings */

/* The settings the loaded packs set (triage/settings.h), resolved once at finalize; NULL
 * before finalize or after a failed one. A key no pack sets reads zero / empty: callers
 * that need every value check te_rules_settings_missing first. */
const te_settings *te_rules_settings(const te_rules *r);
/* The first key of the settings table no loaded pack sets, or NULL when all are set (the
 * default packs set every key). */
const char *te_rules_settings_missing(const te_rules *r);
/* Where key (a table key, or "<map key>.<id>") was last set; false when no pack sets it. */
bool te_rules_setting_origin(const te_rules *r, const char *key, te_origin *where);

/* ---------------------------------------------------------------- kernel-map aliases */

/* When a formal kernel's compacted name (lower-case alphanumerics) matches trigger, the
 * kernel map is searched for entries containing any of tokens. */
typedef struct te_alias_group {
  const char *id;
  const te_matcher *trigger;
  size_t n_tokens;
  const char *const *tokens;
} te_alias_group;
size_t te_rules_alias_count(const te_rules *r);
const te_alias_group *te_rules_alias(const te_rules *r, size_t i);

/* ---------------------------------------------------------------- fusion patterns */

typedef enum te_origin_kind {
  TE_ORIGIN_MAINLINE = 0,
  TE_ORIGIN_UPSTREAM = 1,
  TE_ORIGIN_INFLIGHT = 2
} te_origin_kind;

/* Execution modes a fused path runs in (te_fusion_pattern.modes, bits). */
typedef enum te_exec_mode {
  TE_MODE_EAGER = 1u << 0,  /* kernels launched one by one from Python */
  TE_MODE_GRAPH = 1u << 1,  /* CUDA / HIP graph replay */
  TE_MODE_COMPILE = 1u << 2 /* torch.compile (Inductor kernels, a compiler's fusion passes) */
} te_exec_mode;

/* Workload kinds a fused path is advice for (te_fusion_pattern.workloads, bits; the run's
 * kind comes from the trace, analysis/workload.h). */
typedef enum te_workload_kind {
  TE_WORKLOAD_SERVING = 1u << 0,   /* a serving framework's steps */
  TE_WORKLOAD_INFERENCE = 1u << 1, /* model generation outside a server */
  TE_WORKLOAD_TRAINING = 1u << 2,  /* backward, optimizer steps */
  TE_WORKLOAD_BENCHMARK = 1u << 3  /* one repeated call, no framework */
} te_workload_kind;

/* A candidate fused path cited only where the run's framework is `framework` (the path is
 * that framework's own layer: vLLM's QKVParallelLinear is no advice for a recsys model). */
typedef struct te_framework_path {
  const char *framework; /* framework id ("vllm") */
  const char *path;
} te_framework_path;

/* What to port where a candidate path does not serve the run's platform (platform_ports;
 * review 17 defect 2: SGLang's fused QK-norm paths are gated on CUDA, so on ROCm the row
 * is a port, not a switch to turn on). */
typedef struct te_platform_port {
  const char *platform; /* "cuda" / "rocm" */
  const char *text;     /* what to port (a kernel, a change), cited instead of the paths */
} te_platform_port;

/* The largest collective message (bytes) a fused path takes at one TP size. */
typedef struct te_size_cap {
  long tp;
  double bytes;
} te_size_cap;

/* Whether a pattern's split pieces must form a chain on one stream (issue 31). */
typedef enum te_chain_mode {
  TE_CHAIN_DEFAULT = 0, /* the settings' fuse.chain_max_between, pieces in group order */
  TE_CHAIN_OFF = 1,     /* no chain gate (pieces may sit anywhere in the stage) */
  TE_CHAIN_ON = 2       /* this pattern's own max_between / ordered */
} te_chain_mode;

typedef struct te_fusion_pattern {
  const char *id;        /* stable id, used by subsumes and overrides */
  const char *name;      /* display name ("Fused residual add + RMSNorm") */
  const char *framework; /* framework gate ("sglang"), NULL = every framework */
  te_origin_kind origin;
  size_t n_candidate_paths;
  const char *const *candidate_paths; /* rendered joined by <br> */
  size_t n_framework_paths;           /* framework_paths: cited only on that framework */
  const te_framework_path *framework_paths;
  size_t n_platform_ports; /* platform_ports: on that platform the paths do not serve: */
  const te_platform_port *platform_ports; /*   the row's origin is "port", citing these */
  const te_matcher *active;               /* evidence the fused path ran; may be NULL */
  size_t n_split_groups;
  const te_matcher *const *split_groups; /* all must hit to prove the unfused chain */
  size_t n_model_include;
  const char *const *model_include;
  size_t n_model_exclude;
  const char *const *model_exclude;
  long min_tp_size;
  bool require_tp;
  size_t n_evidence;           /* 0, or one per split group: the kernel category or kind */
  const char *const *evidence; /*   that group's evidence kernel must have ("any": none) */
  const char *platform;        /* "cuda" / "rocm": the run must be on it; NULL = any */
  double min_share_pct;        /* unstated: setting fuse.default_min_share_pct */
  double likely_share_pct;     /* unstated: setting fuse.default_likely_share_pct */
  int priority;
  size_t n_subsumes;
  const struct te_fusion_pattern *const *subsumes; /* resolved at finalize */
  const char *rationale_hint;
  /* since: the framework release that first has the fused path's switch (a config key or
   * flag the rationale names) and the change that added it, verified in the framework's
   * source (review 18 defect 10); NULL: not stated. A trace states no framework version,
   * so the row says the path needs that release. since_switch: the setting that turns the
   * path on in that release (a vLLM pass_config key's command-line form), NULL: none stated
   * (review 19 defect 12: such a path is an upgrade and a flag, not a port). */
  const char *since_version, *since_change, *since_switch;
  te_origin origin_pos;
  /* dtype gate: 0, or the number formats ("fp8", "fp4") the pattern is about; one of its
   * evidence kernels must be of one of them, as the named matcher dtype_<value> decides
   * from the kernel name (resolved at finalize, one per entry). */
  size_t n_dtype;
  const char *const *dtype;
  const te_matcher *const *dtype_matchers;
  /* minimum-architecture gate: the lowest compute capability (major.minor, as the trace's
   * deviceProperties state it: 9.0 Hopper, 10.0 Blackwell; ROCm 9.4 = gfx942) the fused
   * path runs on, per platform; 0 = no minimum */
  double min_arch_cuda, min_arch_rocm;
  /* Gates read from the trace (docs/rules.md "Gates from the trace"): execution modes the
   * fused path runs in (TE_MODE_* bits; 0 = any); the tokens per step above which the
   * framework keeps the split on purpose (0 = no cap); per TP size, the largest
   * collective message the fused path takes (none = no cap); whether it needs every rank
   * of the TP group on one node. */
  unsigned modes;
  long max_tokens;
  size_t n_message_caps;
  const te_size_cap *message_caps;
  bool single_node;
  /* Chain gate: the split's pieces are one chain on one stream (launch order, at most
   * chain_max_between kernels between two pieces; unordered: in any order). */
  te_chain_mode chain;
  long chain_max_between;
  bool chain_unordered;
  bool has_chain_breakers; /* chain.breakers given: these categories, not the setting's */
  te_string_list chain_breakers;
  /* Riders (review-1 defect 4): kernels the matcher names (on the kernel name) that sit
   * in a chain between its pieces, or just before its first piece, are part of it too
   * (the Q/K contiguous copies an out-of-place Q/K norm needs): the fused kernel removes
   * them, so they count in the row's kernels and its saving. NULL: none. */
  const te_matcher *chain_riders;
  const char *chain_rider_role; /* what a rider is, for the reader ("Q/K contiguous copy") */
  /* Review 17 defect 4: the split group whose piece the riders feed (the per-head norm that
   * reads the Q/K copy; -1: none) and the lever of that piece where a tuning item names it
   * (chain.rider_feeds, chain.rider_lever): the kernel is slow because of the copy it
   * reads, and the fused path or a norm that reads the strided views removes it. */
  long chain_rider_feeds;
  const char *chain_rider_lever;
  /* What each split group's piece is, for the reader (chain.roles: roles[g] for group g;
   * n_roles is 0 or n_split_groups): a chain's summary item names its pieces by role. */
  size_t n_roles;
  const char *const *roles;
  /* Merge family (merge:, docs/rules.md "GEMM merges"): instead of active / split groups,
   * the pattern is sibling GEMMs that read one input (the same [M, K] and number format by
   * their launching ops' Input Dims, on one stream in launch order, at most
   * merge_max_between kernels between two of them and none of those holding a tensor of
   * the input's size). merge_merged (on a sibling's row text: name, location, CPU op)
   * says the merged projection already runs there: no row for that run. The bound's rate is
   * the best a GEMM of the same format reaches in the stage among those of at most
   * merge_comparable times the merged GEMM's FLOPs (a small GEMM does not reach a big one's
   * rate). */
  bool merge;
  long merge_max_between;
  double merge_comparable;
  /* the row is shown (and can be an action) only when its saving is at least this share
   * of the stage's kernel time: a merge of small GEMMs saves little of what it relates */
  double merge_min_saving_pct;
  /* workload gate (workloads:): the kinds the fused path is advice for (te_workload_kind
   * bits; 0 = any). A run of a known kind not listed skips the pattern; unknown passes. */
  unsigned workloads;
  /* Shape gate (shape:, docs/rules.md "Gates from the trace"): the CPU op that launched the
   * piece of split group shape_piece states, by its Input Dims and Input type, the last
   * dimension of its smallest tensor (a per-head norm's weight: the head dim) and that
   * tensor's format; the fused path takes only shape_last_dims (none listed: any) and
   * shape_formats (dtype ids; none: any), and no last dimension above shape_max_last_dim
   * (0: no bound; a MoE router's top-k over its experts, not a sampler's over the
   * vocabulary). No op or no shapes: the fact is unknown. shape_piece -1: no gate. */
  long shape_piece;
  size_t n_shape_last_dims;
  const long *shape_last_dims;
  long shape_max_last_dim;
  size_t n_shape_formats;
  const char *const *shape_formats;
  const te_matcher *merge_merged;
} te_fusion_pattern;

size_t te_rules_fusion_count(const te_rules *r);
const te_fusion_pattern *te_rules_fusion(const te_rules *r, size_t i); /* registry order */

/* ---------------------------------------------------------------- display names */

/* A display rule gives a family of long kernel names a compact display form
 * (`display_names:` in a pack, docs/rules.md). Rules are tried in order on the full,
 * demangled name; the first whose regex matches gives the display: its replacement
 * template with $N / ${N} (capture group N, 0 = the whole match), ${NAME} (named group)
 * and $$ (a dollar sign) expanded; groups that did not take part expand to nothing;
 * whitespace runs of the result fold to one space and its ends are trimmed.
 * Regexes are case-sensitive (use (?i) for a caseless one) and run under the PCRE2
 * limits of triage/limits.h; a run that hits a limit counts as no match. */
typedef struct te_display_rule {
  const char *id;
  const char *regex;   /* PCRE2 source */
  const char *replace; /* template */
  te_origin origin;
} te_display_rule;

size_t te_rules_display_rule_count(const te_rules *r);
const te_display_rule *te_rules_display_rule(const te_rules *r, size_t i); /* rule order */
/* Display form of name (len bytes, need not be NUL-terminated) under the first display
 * rule that matches. Returns false when none matches (out untouched). Otherwise writes
 * at most cap bytes into out (always NUL-terminated when cap > 0), sets *full_len (may be
 * NULL) to the length of the whole expansion and *rule (may be NULL) to the deciding
 * rule, and returns true. */
bool te_rules_display_name(const te_rules *r, const char *name, size_t len, char *out, size_t cap,
                           size_t *full_len, const te_display_rule **rule);

/* ---------------------------------------------------------------- roofline data */

/* The roofline's data (docs/roofline.md): number formats, devices with their peaks, the
 * cost models of CPU ops (FLOPs and bytes from their shapes) and the dimensions of known
 * models. Sections `dtypes:`, `devices:`, `op_costs:` and `models:` (docs/rules.md), each
 * merged by id; validated at load with FILE:LINE:COL diagnostics. */

/* The dense peak classes a device states. */
typedef enum te_peak {
  TE_PEAK_NONE = -1, /* no matrix peak (integer indices, bool) */
  TE_PEAK_FP64 = 0,
  TE_PEAK_FP32 = 1,
  TE_PEAK_TF32 = 2,
  TE_PEAK_BF16 = 3,
  TE_PEAK_FP16 = 4,
  TE_PEAK_FP8 = 5,
  TE_PEAK_INT8 = 6,
  TE_PEAK_FP4 = 7,
  TE_PEAK_COUNT = 8
} te_peak;

/* "fp64" ... "fp4"; "" for TE_PEAK_NONE or an unknown value. */
const char *te_peak_name(te_peak p);

/* A number format as traces spell it (Input type, the dtype arg of collectives). */
typedef struct te_dtype {
  const char *id;   /* "bf16" */
  double bytes;     /* per element (a packed fp4 pair is 1 byte: 0.5) */
  te_peak peak;     /* the device peak a product in this format runs at */
  long scalar_type; /* PyTorch ScalarType code (Concrete Inputs of out_dtype args); -1 none */
  size_t n_names;
  const char *const *names; /* spellings ("c10::BFloat16", "BFloat16"), exact */
  te_origin origin;
} te_dtype;

/* The dtype spelled `spelling` in a trace, by id, or by ScalarType code; NULL when none. */
const te_dtype *te_rules_dtype(const te_rules *r, const char *spelling);
const te_dtype *te_rules_dtype_by_id(const te_rules *r, const char *id);
const te_dtype *te_rules_dtype_by_code(const te_rules *r, long scalar_type);

/* One way to recognise a device from the trace's deviceProperties. */
typedef struct te_device_match {
  const te_matcher *name; /* on the device name; NULL: for a blank name only */
  long arch;              /* computeMajor * 10 + computeMinor; -1: any */
  long sms;               /* numSms (SMs / CUs); -1: any */
  double memory_gib_min;  /* totalGlobalMem in GiB, inclusive; 0 / 0: any */
  double memory_gib_max;
} te_device_match;

typedef struct te_device {
  const char *id, *label;
  size_t n_match;
  const te_device_match *match; /* any one fits */
  long sms;                     /* SMs (NVIDIA) or CUs (AMD) */
  double hbm_tbs;               /* memory bandwidth, TB/s (1e12 bytes/s) */
  double link_gbs;              /* intra-node GPU link bandwidth per GPU as the datasheet states
                                   it (NVLink / Infinity Fabric, both directions), GB/s */
  double host_link_gbs;         /* the host link (PCIe) as the datasheet states it, both
                                   directions, GB/s; 0: not stated */
  double peak_tflops[TE_PEAK_COUNT]; /* dense (no sparsity); 0: the part has none */
  double attainable_bandwidth;       /* fraction of hbm_tbs a well-tuned kernel reaches */
  double attainable_compute;         /* fraction of a peak a well-tuned GEMM reaches */
  const char *attainable_basis;      /* where those fractions come from */
  double latency_floor_us;           /* the shortest time a kernel launch takes on the part
                                        (launch, one HBM round trip, drain); 0: none stated */
  double latency_floor_matrix_us;    /* the same for a matrix-unit launch (GEMM, attention:
                                        tile prologue, pipeline fill, epilogue); 0: none
                                        stated (latency_floor_us applies) */
  const char *latency_floor_basis;   /* where that figure comes from */
  /* The best published attention forward rates on the part, as fractions of the format's
   * dense peak keyed as roofline.attention_ceiling (TE_ATTENTION_CEILING_POINTS), and their
   * source; n 0: none stated (roofline.attention_ceiling applies). */
  te_number_map attention_ceiling;
  const char *attention_ceiling_basis;
  const char *source; /* the datasheet(s) the figures are from */
  te_origin origin;
} te_device;

/* The first device (pack order) one of whose match entries fits: a non-empty name is
 * tested by the entries with a name matcher, a blank name ("" or NULL) by the others;
 * arch, sms and memory_gib (negative: unknown) must fit where an entry states them.
 * NULL when none fits (an unknown GPU gets no roofline). */
const te_device *te_rules_device(const te_rules *r, const char *name, long arch, long sms,
                                 double memory_gib);
size_t te_rules_device_count(const te_rules *r);
const te_device *te_rules_device_at(const te_rules *r, size_t i);

/* How an op's FLOPs and bytes follow from its Input Dims / Input type / Concrete Inputs
 * (docs/roofline.md "Op cost models"). Indices are positions in the op's inputs. */
typedef enum te_cost_kind {
  TE_COST_GEMM = 0,         /* A (..., M, K) x B (K, N) or (N, K); batched when both are 3-D */
  TE_COST_GROUPED_GEMM = 1, /* MoE: tokens x top-k rows through expert weights (E, N, K) */
  TE_COST_ATTENTION = 2,    /* SDPA / flash forward: 4 B H Sq Skv D, halved when causal */
  TE_COST_ELEMENTWISE = 3,  /* bytes read + bytes written; flops_per_element per output */
  TE_COST_GATHER = 4        /* rows of a source copied out by index: the output read and written */
} te_cost_kind;

typedef enum te_cost_writes {
  TE_WRITES_LARGEST = 0, /* one output shaped like the largest input read */
  TE_WRITES_NONE = 1,    /* outputs not counted (reductions: small against the input) */
  TE_WRITES_LIST = 2     /* the inputs in writes (in-place and out= variants) */
} te_cost_writes;

typedef struct te_op_cost {
  const char *id;
  te_cost_kind kind;
  size_t n_ops;
  const char *const *ops; /* CPU op names, exact */
  /* gemm: A, B, bias (-1 none), B laid out (N, K); extra inputs read (scales, in reads);
   * output dtype: out_dtype, else the ScalarType code at Concrete Inputs[out_dtype_arg]
   * (-1 none), else that of the output tensor passed in at `out` (-1 none), else A's */
  int a, b, bias, out;
  bool b_nk;
  const te_dtype *out_dtype;
  int out_dtype_arg;
  /* grouped_gemm: hidden states (T, K) at `tokens`, top-k ids (T, k) at topk (k from
   * dimension topk_dim), expert weights (E, N, K) (weights_kn: (E, K, N)) */
  int tokens, topk, topk_dim;
  bool weights_kn;
  size_t n_weights;
  const int *weights;
  /* attention: q, k, v; layout (B, H, S, D), or (B, S, H, D) when bshd; causal, or read
   * from Concrete Inputs[causal_arg] ("True" / "False"; -1 none) */
  int q, k, v;
  bool bshd, causal;
  int causal_arg;
  /* elementwise (and the gemm's extra reads): inputs read (all tensors when reads_all) */
  bool reads_all;
  size_t n_reads;
  const int *reads;
  te_cost_writes writes;
  size_t n_writes;
  const int *write_inputs;
  double flops_per_element;
  /* gather: the source tensor; the output's shape is the size list at Concrete
   * Inputs[shape_arg] of the op's first child op named shape_from (aten::index restrides
   * its source to the output's shape), else the source with dimension dim (or Concrete
   * Inputs[dim_arg]; -1 none) replaced by the index tensor's elements (index: -1 none) */
  int source, index, dim, dim_arg, shape_arg;
  const char *shape_from;
  te_origin origin;
} te_op_cost;

/* The cost model of a CPU op by exact name (a later entry naming the same op wins), or
 * NULL when none models it. */
const te_op_cost *te_rules_op_cost(const te_rules *r, const char *op_name);
size_t te_rules_op_cost_count(const te_rules *r);
const te_op_cost *te_rules_op_cost_at(const te_rules *r, size_t i);

/* A known model's dimensions (a model pack), for graph-replayed traces without shapes. */
typedef struct te_model {
  const char *id, *label;
  const te_matcher *match; /* on the run's model text (server args model path, family) */
  long hidden, intermediate, layers, heads, kv_heads, head_dim, vocab;
  long experts, topk, moe_intermediate; /* 0 for a dense model */
  long sliding_window;                  /* tokens a sliding-window layer attends to; 0: none */
  /* Which layers slide (the config.json's layer_types): the layers repeat a cycle of
   * layer_cycle types, bit i of sliding_layers set when the cycle's layer i attends to the
   * last sliding_window tokens only (gpt-oss: [sliding, full], cycle 2, bit 0). A model
   * with a window and no layer_types slides on every layer (cycle 1, bit 0); none: 0. */
  long layer_cycle;
  uint64_t sliding_layers;
  double expert_weight_bits; /* bits an expert weight takes, block scales included (MXFP4:
                                4 + 8 / 32 = 4.25); 0: as weight_dtype */
  const te_dtype *weight_dtype;
  const char *source; /* where the dimensions are from (the model's config.json) */
  te_origin origin;
} te_model;

/* The first model (pack order) whose matcher hits text, or NULL. */
const te_model *te_rules_model(const te_rules *r, const char *text);
size_t te_rules_model_count(const te_rules *r);
const te_model *te_rules_model_at(const te_rules *r, size_t i);

/* ---------------------------------------------------------------- self-tests */

/* Runs every `examples:` block of every loaded pack; each mismatch becomes a diagnostic
 * at the example's position. Returns the number of examples checked in *n_checked. */
te_status te_rules_run_examples(const te_rules *r, te_diags *diags, size_t *n_checked);

#ifdef __cplusplus
}
#endif
#endif
