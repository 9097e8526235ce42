/*
 * examples.c - te_rules_run_examples: the `examples:` self-tests of every live matcher.
 *
 * Only entries that survived merging are tested: an entry replaced by a later pack is
 * not part of the rule set any more, so its examples say nothing about it. Examples under
 * a classifier rule's inline `match` are judged by the whole classifier (rule order and
 * `unless` included), because what an author means by them is "this kernel lands in
 * this category" (match) or "lands in another category" (no_match); every other example
 * is judged by its own matcher alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diags.h"
#include "rules_internal.h"

typedef struct run_ctx {
  const te_rules *r;
  te_diags *d;
  size_t checked, failed;
} run_ctx;

static void fail(run_ctx *rc, const te_example *ex, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(run_ctx *rc, const te_example *ex, const char *fmt, ...) {
  rc->failed++;
  char msg[1024]; /* fits label (300) + detail (300) + text */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  te_diags_add(rc->d, TE_SEV_ERROR, ex->origin.file, ex->origin.line, ex->origin.col,
               "example '%.200s' %s", ex->text, msg);
}

static void check_matcher(run_ctx *rc, const te_matcher *m, const char *label) {
  if (!m) return;
  for (size_t i = 0; i < m->n_examples; i++) {
    const te_example *ex = &m->examples[i];
    rc->checked++;
    bool hit = te_matcher_match(m, ex->text, strlen(ex->text));
    if (hit != ex->should_match)
      fail(rc, ex,
           ex->should_match ? "should match %s but does not%s" : "should not match %s but does%s",
           label, "");
  }
  if (m->has_exclude && m->exclude.inline_m) {
    char sub[300];
    snprintf(sub, sizeof sub, "%s (exclude)", label);
    check_matcher(rc, m->exclude.inline_m, sub);
  }
}

static void check_inline(run_ctx *rc, const te_mref *ref, const char *label) {
  if (ref->inline_m) check_matcher(rc, ref->inline_m, label);
}

static void check_class_rule(run_ctx *rc, const te_classifier *c, const class_rule_entry *e) {
  char label[300];
  snprintf(label, sizeof label, "classifier rule '%s/%s'", c->id, e->hdr.id);
  const te_matcher *m = e->match.inline_m;
  if (m) {
    for (size_t i = 0; i < m->n_examples; i++) {
      const te_example *ex = &m->examples[i];
      rc->checked++;
      const te_class_rule *by = NULL;
      te_rules_classify(rc->r, c->id, ex->text, &by);
      /* judged by the label the rule gives (its kind), so a finer kind's examples must
       * land in that kind, not just in its parent category */
      const char *kind = te_rules_kind(rc->r, c->id, ex->text);
      char got[300];
      snprintf(got, sizeof got, " (classified '%s' by %s%s)", kind ? kind : "?",
               by ? "rule " : "the default", by ? by->id : "");
      if (ex->should_match && (!kind || strcmp(kind, e->category) != 0))
        fail(rc, ex, "should match %s but does not%s", label, got);
      else if (!ex->should_match && kind && strcmp(kind, e->category) == 0)
        fail(rc, ex, "should not match %s but does%s", label, got);
    }
    if (m->has_exclude && m->exclude.inline_m) {
      char sub[340];
      snprintf(sub, sizeof sub, "%s (exclude)", label);
      check_matcher(rc, m->exclude.inline_m, sub);
    }
  }
  if (e->has_unless) {
    char sub[340];
    snprintf(sub, sizeof sub, "%s (unless)", label);
    check_inline(rc, &e->unless, sub);
  }
}

static void check_ladders(run_ctx *rc) {
  const te_list *l = &rc->r->merged.ladders;
  for (size_t i = 0; i < l->n; i++) {
    const ladder_entry *le = (const ladder_entry *)l->items[i];
    char label[300];
    if (le->has_penalty) {
      snprintf(label, sizeof label, "ladder '%s' penalty", le->hdr.id);
      check_inline(rc, &le->penalty_match, label);
    }
    const te_list *lists[2] = {&le->rules, &le->adjustments};
    for (int k = 0; k < 2; k++) {
      for (size_t j = 0; j < lists[k]->n; j++) {
        const ladder_rule_entry *e = (const ladder_rule_entry *)lists[k]->items[j];
        snprintf(label, sizeof label, "ladder rule '%s/%s' raw", le->hdr.id, e->hdr.id);
        if (e->has_raw) check_inline(rc, &e->raw, label);
        snprintf(label, sizeof label, "ladder rule '%s/%s' normalized", le->hdr.id, e->hdr.id);
        if (e->has_normalized) check_inline(rc, &e->normalized, label);
      }
    }
  }
}

static void check_rest(run_ctx *rc) {
  const te_sections *s = &rc->r->merged;
  char label[300];
  for (size_t i = 0; i < s->matchers.n; i++) {
    const matcher_entry *e = (const matcher_entry *)s->matchers.items[i];
    snprintf(label, sizeof label, "named matcher '%s'", e->hdr.id);
    check_matcher(rc, e->m, label);
  }
  const te_list *stage_lists[2] = {&s->path_rules, &s->annotation_rules};
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < stage_lists[k]->n; i++) {
      const stage_rule_entry *e = (const stage_rule_entry *)stage_lists[k]->items[i];
      snprintf(label, sizeof label, "stage rule '%s'", e->hdr.id);
      check_inline(rc, &e->match, label);
    }
  }
  for (size_t i = 0; i < s->text_hints.n; i++) {
    const text_hint_entry *e = (const text_hint_entry *)s->text_hints.items[i];
    snprintf(label, sizeof label, "framework hint '%s'", e->hdr.id);
    check_inline(rc, &e->match, label);
  }
  for (size_t i = 0; i < s->probes.n; i++) {
    const probe_entry *e = (const probe_entry *)s->probes.items[i];
    snprintf(label, sizeof label, "url probe '%s' body_match", e->hdr.id);
    if (e->has_body_match) check_inline(rc, &e->body_match, label);
  }
  for (size_t i = 0; i < s->aliases.n; i++) {
    const alias_entry *e = (const alias_entry *)s->aliases.items[i];
    snprintf(label, sizeof label, "kernel-map alias '%s' trigger", e->hdr.id);
    check_inline(rc, &e->trigger, label);
  }
  for (size_t i = 0; i < s->fusions.n; i++) {
    const fusion_entry *e = (const fusion_entry *)s->fusions.items[i];
    snprintf(label, sizeof label, "fusion pattern '%s' active", e->hdr.id);
    if (e->has_active) check_inline(rc, &e->active, label);
    for (size_t k = 0; k < e->n_split; k++) {
      snprintf(label, sizeof label, "fusion pattern '%s' split group %zu", e->hdr.id, k + 1);
      check_inline(rc, &e->split[k], label);
    }
    snprintf(label, sizeof label, "fusion pattern '%s' merge.merged", e->hdr.id);
    if (e->has_merged) check_inline(rc, &e->merged, label);
  }
}

te_status te_rules_run_examples(const te_rules *r, te_diags *diags, size_t *n_checked) {
  if (n_checked) *n_checked = 0;
  if (!r || !r->finalized || r->failed) return TE_ERR_STATE;
  run_ctx rc = {r, diags, 0, 0};
  const te_list *cl = &r->merged.classifiers;
  for (size_t i = 0; i < cl->n; i++) {
    const classifier_entry *ce = (const classifier_entry *)cl->items[i];
    const te_classifier *c = te_rules_classifier(r, ce->hdr.id);
    for (size_t k = 0; c && k < ce->rules.n; k++)
      check_class_rule(&rc, c, (const class_rule_entry *)ce->rules.items[k]);
  }
  check_ladders(&rc);
  check_rest(&rc);
  rc.failed += te_display_run_examples(r, diags, &rc.checked);
  if (n_checked) *n_checked = rc.checked;
  return rc.failed ? TE_ERR_INVALID : TE_OK;
}

/* ---------------------------------------------------------------- dead rules */

/* A rule is dead when none of its own match examples reaches it and an earlier rule
 * decides at least one of them: the earlier rule shadows it. (Examples that reach no
 * rule at all are example failures, reported by te_rules_run_examples.) */
static bool dead_rule(const te_rules *r, const te_classifier *c, size_t k,
                      const te_example **ex_out, const te_class_rule **by_out) {
  const te_matcher *m = c->rules[k].match;
  if (!m || m->name) return false; /* a named matcher's examples are its own, not the rule's */
  bool shadowed = false;
  for (size_t i = 0; i < m->n_examples; i++) {
    const te_example *ex = &m->examples[i];
    if (!ex->should_match) continue;
    const te_class_rule *by = NULL;
    te_rules_classify(r, c->id, ex->text, &by);
    if (by == &c->rules[k]) return false;
    if (by && by < &c->rules[k] && !shadowed) {
      shadowed = true;
      *ex_out = ex;
      *by_out = by;
    }
  }
  return shadowed;
}

size_t te_rules_find_dead_rules(const te_rules *r, te_diags *diags) {
  if (!r || !r->finalized || r->failed) return 0;
  size_t found = 0;
  for (size_t i = 0; i < r->n_classifiers; i++) {
    const te_classifier *c = &r->classifiers[i];
    for (size_t k = 0; k < c->n_rules; k++) {
      const te_example *ex = NULL;
      const te_class_rule *by = NULL;
      if (!dead_rule(r, c, k, &ex, &by)) continue;
      found++;
      const te_origin *o = &c->rules[k].origin;
      te_diags_add(diags, TE_SEV_WARNING, o->file, o->line, o->col,
                   "classifier rule '%s/%s' is dead: none of its match examples reaches it "
                   "(e.g. '%.120s' is decided by earlier rule '%s')",
                   c->id, c->rules[k].id, ex->text, by->id);
    }
  }
  return found;
}
