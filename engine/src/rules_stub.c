/* Temporary stubs so other modules link while the engine lands. Replaced by the real
 * implementation in the following commits. */
#include "triage/rules.h"

#include <stdio.h>
#include <stdlib.h>

struct te_diags { size_t n; };
struct te_rules { int unused; };

const char *te_status_str(te_status s) { (void)s; return "not implemented"; }
te_diags *te_diags_create(void) { return calloc(1, sizeof(te_diags)); }
void te_diags_destroy(te_diags *d) { free(d); }
size_t te_diags_count(const te_diags *d) { (void)d; return 0; }
size_t te_diags_error_count(const te_diags *d) { (void)d; return 0; }
const te_diag *te_diags_get(const te_diags *d, size_t i) { (void)d; (void)i; return NULL; }
int te_diag_format(const te_diag *diag, char *buf, size_t cap) {
  return snprintf(buf, cap, "%s:%u:%u: error: %s", diag->file, diag->line, diag->col, diag->message);
}
te_rules *te_rules_create(void) { return calloc(1, sizeof(te_rules)); }
void te_rules_destroy(te_rules *r) { free(r); }
te_status te_rules_load_path(te_rules *r, const char *path, te_diags *diags) { (void)r; (void)path; (void)diags; return TE_OK; }
te_status te_rules_load_buffer(te_rules *r, const char *name, const char *buf, size_t len, te_diags *diags) { (void)r; (void)name; (void)buf; (void)len; (void)diags; return TE_OK; }
te_status te_rules_finalize(te_rules *r, te_diags *diags) { (void)r; (void)diags; return TE_OK; }
size_t te_rules_pack_count(const te_rules *r) { (void)r; return 0; }
const te_pack_info *te_rules_pack(const te_rules *r, size_t i) { (void)r; (void)i; return NULL; }
bool te_matcher_match(const te_matcher *m, const char *s, size_t len) { (void)m; (void)s; (void)len; return false; }
bool te_matcher_explain(const te_matcher *m, const char *s, size_t len, char *why, size_t cap) { (void)m; (void)s; (void)len; if (cap) why[0] = 0; return false; }
const te_matcher *te_rules_matcher(const te_rules *r, const char *name) { (void)r; (void)name; return NULL; }
const te_classifier *te_rules_classifier(const te_rules *r, const char *id) { (void)r; (void)id; return NULL; }
const char *te_rules_classify(const te_rules *r, const char *id, const char *name, const te_class_rule **rule) { (void)r; (void)id; (void)name; if (rule) *rule = NULL; return "other"; }
const te_ladder *te_rules_ladder(const te_rules *r, const char *id) { (void)r; (void)id; return NULL; }
int te_rules_score(const te_rules *r, const char *id, const char *raw, const char *normalized, char *why, size_t why_cap) { (void)r; (void)id; (void)raw; (void)normalized; if (why_cap) why[0] = 0; return 0; }
size_t te_rules_normalize_path(const te_rules *r, const char *path, char *out, size_t cap) { (void)r; return (size_t)snprintf(out, cap, "%s", path); }
size_t te_rules_stage_count(const te_rules *r) { (void)r; return 0; }
const te_stage *te_rules_stage(const te_rules *r, size_t i) { (void)r; (void)i; return NULL; }
const te_stage *te_rules_stage_by_id(const te_rules *r, const char *id) { (void)r; (void)id; return NULL; }
const te_stage *te_rules_stage_from_path(const te_rules *r, const char *p) { (void)r; (void)p; return NULL; }
const te_stage *te_rules_stage_from_annotation(const te_rules *r, const char *n) { (void)r; (void)n; return NULL; }
bool te_rules_rank_from_filename(const te_rules *r, const char *name, long *rank) { (void)r; (void)name; (void)rank; return false; }
size_t te_rules_framework_count(const te_rules *r) { (void)r; return 0; }
const te_framework *te_rules_framework(const te_rules *r, size_t i) { (void)r; (void)i; return NULL; }
const te_framework *te_rules_framework_lookup(const te_rules *r, const char *s) { (void)r; (void)s; return NULL; }
const te_framework *te_rules_framework_default(const te_rules *r) { (void)r; return NULL; }
const te_framework *te_rules_framework_from_text(const te_rules *r, const char *t) { (void)r; (void)t; return NULL; }
const te_framework *te_rules_framework_from_keys(const te_rules *r, const char *const *k, size_t n) { (void)r; (void)k; (void)n; return NULL; }
size_t te_rules_url_probe_count(const te_rules *r) { (void)r; return 0; }
const te_url_probe *te_rules_url_probe(const te_rules *r, size_t i) { (void)r; (void)i; return NULL; }
double te_rules_setting(const te_rules *r, const char *key, double dflt) { (void)r; (void)key; return dflt; }
bool te_rules_has_setting(const te_rules *r, const char *key) { (void)r; (void)key; return false; }
size_t te_rules_setting_list(const te_rules *r, const char *key, const char *const **items) { (void)r; (void)key; if (items) *items = NULL; return 0; }
size_t te_rules_alias_count(const te_rules *r) { (void)r; return 0; }
const te_alias_group *te_rules_alias(const te_rules *r, size_t i) { (void)r; (void)i; return NULL; }
size_t te_rules_fusion_count(const te_rules *r) { (void)r; return 0; }
const te_fusion_pattern *te_rules_fusion(const te_rules *r, size_t i) { (void)r; (void)i; return NULL; }
te_status te_rules_run_examples(const te_rules *r, te_diags *diags, size_t *n) { (void)r; (void)diags; if (n) *n = 0; return TE_OK; }
