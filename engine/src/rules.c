/*
 * rules.c - a rule set: loading packs, merging them by id, finalizing, and the queries of
 * triage/rules.h.
 *
 * Merging is staged: a pack is merged into copies of the lists and the copies replace the
 * originals only when the whole pack merged cleanly, so an invalid pack changes nothing.
 * Lists are arena-backed and never modified in place once shared, which makes the copies
 * cheap (pointer arrays) and the discarded ones harmless.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diags.h"
#include "grow.h"
#include "prefilter.h"
#include "rules_internal.h"
#include "triage/ascii.h"
#include "triage/limits.h"

/* ---------------------------------------------------------------- create / destroy */

te_rules *te_rules_create(void) {
  te_rules *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->arena = te_arena_create();
  r->rank_ctx = te_regex_context();
  if (!r->arena || !r->rank_ctx) {
    te_arena_destroy(r->arena);
    pcre2_match_context_free(r->rank_ctx);
    free(r);
    return NULL;
  }
  return r;
}

void te_rules_lanes_fold(const te_rules *r) {
  if (!r) return;
  for (size_t i = 0; i < r->reg.n_matchers; i++) te_matcher_fold_lanes(r->reg.matchers[i]);
  for (size_t i = 0; r->classifier_caches && i < r->n_classifiers; i++)
    te_lcache_fold(&r->classifier_caches[i]);
  for (size_t i = 0; r->ladder_caches && i < r->n_ladders; i++)
    te_lcache_fold(&r->ladder_caches[i]);
}

void te_rules_destroy(te_rules *r) {
  if (!r) return;
  te_registry_release(&r->reg);
  for (size_t i = 0; r->classifier_caches && i < r->n_classifiers; i++)
    te_lcache_clear(&r->classifier_caches[i]);
  for (size_t i = 0; r->ladder_caches && i < r->n_ladders; i++)
    te_lcache_clear(&r->ladder_caches[i]);
  free(r->classifier_caches);
  free(r->ladder_caches);
  te_token_index_destroy(r->token_index);
  for (size_t i = 0; r->prefilters && i < r->n_classifiers; i++)
    te_prefilter_destroy(r->prefilters[i]);
  free(r->prefilters);
  free(r->packs);
  pcre2_match_context_free(r->rank_ctx);
  te_display_release(r);
  te_arena_destroy(r->arena);
  free(r);
}

/* ---------------------------------------------------------------- merging */

typedef struct merge_ctx {
  te_rules *r;
  te_diags *d;
  size_t errors;
} merge_ctx;

static void place_error(merge_ctx *mc, const te_entry *e, const char *what) {
  mc->errors++;
  te_diags_add(mc->d, TE_SEV_ERROR, e->place_origin.file, e->place_origin.line, e->place_origin.col,
               "%s '%s': %s '%s' names no %s loaded before it", what, e->id,
               e->before ? "before" : "after", e->before ? e->before : e->after, what);
}

/* Adds or replaces e in dst by id; see "Ordered, overridable lists" in docs/rules.md. An
 * explicit before:/after: on an existing id moves the entry there. */
static void merge_one(merge_ctx *mc, te_list *dst, te_entry *e, const char *what) {
  te_arena *a = mc->r->arena;
  long at = te_list_index(dst, e->id);
  const char *anchor = e->before ? e->before : e->after;
  if (at >= 0 && !anchor) {
    dst->items[at] = e;
    return;
  }
  if (at >= 0) te_list_remove(dst, (size_t)at);
  if (!anchor) {
    te_list_push(a, dst, e);
    return;
  }
  long where = te_list_index(dst, anchor);
  if (where < 0) {
    place_error(mc, e, what);
    return;
  }
  te_list_insert(a, dst, (size_t)where + (e->after ? 1u : 0u), e);
}

static void merge_list(merge_ctx *mc, te_list *dst, const te_list *src, const char *what) {
  for (size_t i = 0; i < src->n; i++) merge_one(mc, dst, src->items[i], what);
}

static void merge_classifiers(merge_ctx *mc, te_list *dst, const te_list *src) {
  te_arena *a = mc->r->arena;
  for (size_t i = 0; i < src->n; i++) {
    const classifier_entry *in = (const classifier_entry *)src->items[i];
    const classifier_entry *old = (const classifier_entry *)te_list_find(dst, in->hdr.id);
    classifier_entry *merged = te_arena_alloc(a, sizeof *merged);
    if (!merged) return;
    if (old) {
      *merged = *old;
      merged->rules = te_list_clone(a, &old->rules);
      merged->categories = te_list_clone(a, &old->categories);
      if (in->default_category) {
        merged->default_category = in->default_category;
        merged->default_origin = in->default_origin;
      }
      merged->hdr.before = in->hdr.before;
      merged->hdr.after = in->hdr.after;
      merged->hdr.place_origin = in->hdr.place_origin;
    } else {
      *merged = *in;
      memset(&merged->rules, 0, sizeof merged->rules);
      memset(&merged->categories, 0, sizeof merged->categories);
      if (!in->default_category) {
        mc->errors++;
        te_diags_add(mc->d, TE_SEV_ERROR, in->hdr.origin.file, in->hdr.origin.line,
                     in->hdr.origin.col,
                     "classifier '%s' is defined here first and needs 'default'", in->hdr.id);
      }
    }
    char what[160];
    snprintf(what, sizeof what, "classifier '%s' category", in->hdr.id);
    merge_list(mc, &merged->categories, &in->categories, what);
    snprintf(what, sizeof what, "classifier '%s' rule", in->hdr.id);
    merge_list(mc, &merged->rules, &in->rules, what);
    merge_one(mc, dst, &merged->hdr, "classifier");
  }
}

static void merge_ladders(merge_ctx *mc, te_list *dst, const te_list *src) {
  te_arena *a = mc->r->arena;
  for (size_t i = 0; i < src->n; i++) {
    const ladder_entry *in = (const ladder_entry *)src->items[i];
    const ladder_entry *old = (const ladder_entry *)te_list_find(dst, in->hdr.id);
    ladder_entry *merged = te_arena_alloc(a, sizeof *merged);
    if (!merged) return;
    if (old) {
      *merged = *old;
      merged->rules = te_list_clone(a, &old->rules);
      merged->adjustments = te_list_clone(a, &old->adjustments);
      if (in->has_default) {
        merged->has_default = true;
        merged->default_score = in->default_score;
      }
      if (in->has_penalty) {
        merged->has_penalty = true;
        merged->penalty = in->penalty;
        merged->penalty_match = in->penalty_match;
      }
      merged->hdr.before = in->hdr.before;
      merged->hdr.after = in->hdr.after;
      merged->hdr.place_origin = in->hdr.place_origin;
    } else {
      *merged = *in;
      memset(&merged->rules, 0, sizeof merged->rules);
      memset(&merged->adjustments, 0, sizeof merged->adjustments);
    }
    char what[160];
    snprintf(what, sizeof what, "ladder '%s' rule", in->hdr.id);
    merge_list(mc, &merged->rules, &in->rules, what);
    snprintf(what, sizeof what, "ladder '%s' adjustment", in->hdr.id);
    merge_list(mc, &merged->adjustments, &in->adjustments, what);
    merge_one(mc, dst, &merged->hdr, "ladder");
  }
}

static te_sections sections_clone(te_arena *a, const te_sections *s) {
  te_sections c = *s;
  te_list *lists[] = {&c.matchers,   &c.classifiers, &c.ladders,          &c.rewrites,
                      &c.stages,     &c.path_rules,  &c.annotation_rules, &c.ranks,
                      &c.frameworks, &c.text_hints,  &c.key_hints,        &c.probes,
                      &c.settings,   &c.aliases,     &c.fusions,          &c.display_names,
                      &c.dtypes,     &c.devices,     &c.op_costs,         &c.models};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
    *lists[i] = te_list_clone(a, lists[i]);
  return c;
}

static te_status merge_pack(te_rules *r, te_pack *p, te_diags *diags) {
  for (size_t i = 0; i < r->n_packs; i++) {
    if (p->info.id && r->packs[i]->info.id && !strcmp(p->info.id, r->packs[i]->info.id)) {
      te_diags_add(diags, TE_SEV_ERROR, p->info.file, 1, 1, "pack id '%s' is already used by %s",
                   p->info.id, r->packs[i]->info.file);
      return TE_ERR_INVALID;
    }
  }
  merge_ctx mc = {r, diags, 0};
  te_arena *a = r->arena;
  te_sections next = sections_clone(a, &r->merged);
  const te_sections *in = &p->s;
  merge_list(&mc, &next.matchers, &in->matchers, "named matcher");
  merge_classifiers(&mc, &next.classifiers, &in->classifiers);
  merge_ladders(&mc, &next.ladders, &in->ladders);
  merge_list(&mc, &next.rewrites, &in->rewrites, "path rewrite");
  merge_list(&mc, &next.stages, &in->stages, "stage");
  merge_list(&mc, &next.path_rules, &in->path_rules, "path stage rule");
  merge_list(&mc, &next.annotation_rules, &in->annotation_rules, "annotation stage rule");
  merge_list(&mc, &next.ranks, &in->ranks, "rank pattern");
  merge_list(&mc, &next.frameworks, &in->frameworks, "framework");
  merge_list(&mc, &next.text_hints, &in->text_hints, "text hint");
  merge_list(&mc, &next.key_hints, &in->key_hints, "server-args hint");
  merge_list(&mc, &next.probes, &in->probes, "url probe");
  merge_list(&mc, &next.settings, &in->settings, "setting");
  merge_list(&mc, &next.aliases, &in->aliases, "kernel-map alias");
  merge_list(&mc, &next.fusions, &in->fusions, "fusion pattern");
  merge_list(&mc, &next.display_names, &in->display_names, "display rule");
  merge_list(&mc, &next.dtypes, &in->dtypes, "dtype");
  merge_list(&mc, &next.devices, &in->devices, "device");
  merge_list(&mc, &next.op_costs, &in->op_costs, "op cost model");
  merge_list(&mc, &next.models, &in->models, "model");
  if (in->default_framework) {
    next.default_framework = in->default_framework;
    next.default_framework_origin = in->default_framework_origin;
  }
  if (mc.errors) return TE_ERR_INVALID;
  te_pack **packs = te_grow(r->packs, &r->cap_packs, r->n_packs + 1, sizeof *packs, 8);
  if (!packs) return TE_ERR_NOMEM;
  r->packs = packs;
  r->packs[r->n_packs++] = p;
  r->merged = next;
  return TE_OK;
}

/* ---------------------------------------------------------------- loading */

te_status te_rules_load_buffer(te_rules *r, const char *name, const char *buf, size_t len,
                               te_diags *diags) {
  if (!r || (!buf && len)) return TE_ERR_STATE;
  if (!name) name = "<buffer>";
  if (r->finalized) {
    te_diags_add(diags, TE_SEV_ERROR, name, 0, 0, "rule packs must be loaded before finalize");
    return TE_ERR_STATE;
  }
  if (r->n_packs >= TE_MAX_PACKS) {
    te_diags_add(diags, TE_SEV_ERROR, name, 0, 0, "more than %d rule packs (limit TE_MAX_PACKS)",
                 TE_MAX_PACKS);
    return TE_ERR_LIMIT;
  }
  if (len > TE_MAX_PACK_BYTES) {
    te_diags_add(diags, TE_SEV_ERROR, name, 1, 1,
                 "rule pack is %zu bytes (limit TE_MAX_PACK_BYTES %u)", len,
                 (unsigned)TE_MAX_PACK_BYTES);
    return TE_ERR_LIMIT;
  }
  size_t errors_before = te_diags_total_errors(diags);
  te_pack *p = te_pack_load(r->arena, &r->reg, name, buf ? buf : "", len, diags);
  if (!p) {
    if (!diags || te_diags_total_errors(diags) > errors_before) return TE_ERR_INVALID;
    te_diags_add(diags, TE_SEV_ERROR, name, 0, 0, "out of memory while loading the rule pack");
    return TE_ERR_NOMEM;
  }
  return merge_pack(r, p, diags);
}

/* The capped whole-file read of the engine (src/util/file.c is the one of src/: the
 * engine stands alone), with rule-pack diagnostics. */
static te_status load_file(te_rules *r, const char *path, te_diags *diags) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    te_diags_add(diags, TE_SEV_ERROR, path, 0, 0, "cannot open rule pack: %s", strerror(errno));
    return TE_ERR_IO;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
      (unsigned long long)st.st_size > TE_MAX_PACK_BYTES) {
    fclose(f);
    te_diags_add(diags, TE_SEV_ERROR, path, 1, 1,
                 "rule pack is %llu bytes (limit TE_MAX_PACK_BYTES %u)",
                 (unsigned long long)st.st_size, (unsigned)TE_MAX_PACK_BYTES);
    return TE_ERR_LIMIT;
  }
  /* Read at most one byte past the limit, so a pipe or growing file is refused too. */
  size_t cap = 64 * 1024, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (len == cap) {
      if (cap > TE_MAX_PACK_BYTES) break;
      char *bigger = te_grow(buf, &cap, len + 1, 1, cap);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  bool read_error = ferror(f) != 0;
  fclose(f);
  if (!buf) {
    te_diags_add(diags, TE_SEV_ERROR, path, 0, 0, "out of memory reading the rule pack");
    return TE_ERR_NOMEM;
  }
  if (read_error) {
    free(buf);
    te_diags_add(diags, TE_SEV_ERROR, path, 0, 0, "cannot read rule pack");
    return TE_ERR_IO;
  }
  te_status st2 = te_rules_load_buffer(r, path, buf, len, diags);
  free(buf);
  return st2;
}

static bool is_pack_name(const char *name) {
  size_t n = strlen(name);
  if (name[0] == '.') return false;
  return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml"));
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static te_status worse(te_status a, te_status b) { return a != TE_OK ? a : b; }

te_status te_rules_load_path(te_rules *r, const char *path, te_diags *diags) {
  if (!r || !path) return TE_ERR_STATE;
  struct stat st;
  if (stat(path, &st) != 0) {
    te_diags_add(diags, TE_SEV_ERROR, path, 0, 0, "cannot open rule pack: %s", strerror(errno));
    return TE_ERR_IO;
  }
  if (!S_ISDIR(st.st_mode)) return load_file(r, path, diags);
  DIR *dir = opendir(path);
  if (!dir) {
    te_diags_add(diags, TE_SEV_ERROR, path, 0, 0, "cannot open rule directory: %s",
                 strerror(errno));
    return TE_ERR_IO;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  te_status status = TE_OK;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    if (!is_pack_name(de->d_name)) continue;
    if (n >= TE_MAX_PACKS) {
      te_diags_add(diags, TE_SEV_ERROR, path, 0, 0,
                   "directory holds more than %d rule packs (limit TE_MAX_PACKS)", TE_MAX_PACKS);
      status = TE_ERR_LIMIT;
      break;
    }
    char **v = te_grow(names, &cap, n + 1, sizeof *v, 16);
    if (!v) {
      status = TE_ERR_NOMEM;
      break;
    }
    names = v;
    size_t need = strlen(path) + strlen(de->d_name) + 2;
    names[n] = malloc(need);
    if (!names[n]) {
      status = TE_ERR_NOMEM;
      break;
    }
    size_t plen = strlen(path);
    bool slash = plen > 0 && path[plen - 1] == '/';
    snprintf(names[n], need, "%s%s%s", path, slash ? "" : "/", de->d_name);
    n++;
  }
  closedir(dir);
  if (names) qsort(names, n, sizeof *names, compare_names);
  /* Every pack is loaded even after a failure, so one check reports all broken packs. */
  for (size_t i = 0; i < n; i++) {
    if (status == TE_OK || status == TE_ERR_INVALID || status == TE_ERR_IO)
      status = worse(status, load_file(r, names[i], diags));
    free(names[i]);
  }
  free(names);
  return status;
}

/* ---------------------------------------------------------------- finalize */

typedef struct fin_ctx {
  te_rules *r;
  te_diags *d;
  size_t errors;
} fin_ctx;

static void fin_error(fin_ctx *fc, te_origin o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fin_error(fin_ctx *fc, te_origin o, const char *fmt, ...) {
  fc->errors++;
  va_list ap;
  va_start(ap, fmt);
  te_diags_vadd(fc->d, TE_SEV_ERROR, o.file, o.line, o.col, fmt, ap);
  va_end(ap);
}

static int cmp_named(const void *a, const void *b) {
  const matcher_entry *x = *(const matcher_entry *const *)a, *y = *(const matcher_entry *const *)b;
  return strcmp(x->hdr.id, y->hdr.id);
}

/* The merged named matchers sorted by name (ids are unique after the merge). */
static bool sort_named(te_rules *r) {
  const te_list *ml = &r->merged.matchers;
  r->named_sorted = te_arena_alloc(r->arena, (ml->n ? ml->n : 1) * sizeof *r->named_sorted);
  if (!r->named_sorted) return false;
  for (size_t i = 0; i < ml->n; i++) r->named_sorted[i] = (const matcher_entry *)ml->items[i];
  r->n_named = ml->n;
  qsort(r->named_sorted, r->n_named, sizeof *r->named_sorted, cmp_named);
  return true;
}

/* A named matcher by binary search over the names sorted at the start of finalize
 * (kernel-map sites look two up each; a scan of the merged list was 3 % of a many-names
 * run). libc's bsearch with sort_named's comparator: the engine stands alone, without
 * util/search.h, and needs no hand-written search for an exact key. */
static te_matcher *named_matcher(const te_rules *r, const char *name) {
  matcher_entry key = {.hdr.id = name};
  const matcher_entry *want = &key;
  const matcher_entry *const *hit =
      bsearch(&want, r->named_sorted, r->n_named, sizeof *r->named_sorted, cmp_named);
  return hit ? (*hit)->m : NULL;
}

static void resolve_matcher(fin_ctx *fc, te_matcher *m, unsigned depth);

static const te_matcher *resolve(fin_ctx *fc, te_mref *ref, unsigned depth) {
  if (ref->inline_m) {
    resolve_matcher(fc, ref->inline_m, depth + 1);
    ref->resolved = ref->inline_m;
  } else if (ref->name) {
    ref->resolved = named_matcher(fc->r, ref->name);
    if (!ref->resolved)
      fin_error(fc, ref->origin, "matcher '%s' is not defined in any pack's 'matchers:'",
                ref->name);
  }
  return ref->resolved;
}

const te_matcher *te_rules_resolve_ref(te_rules *r, te_diags *d, te_mref *ref, size_t *errors) {
  fin_ctx fc = {r, d, 0};
  const te_matcher *m = resolve(&fc, ref, 0);
  *errors += fc.errors;
  return m;
}

static void resolve_matcher(fin_ctx *fc, te_matcher *m, unsigned depth) {
  if (!m->has_exclude || depth > TE_MAX_YAML_DEPTH) return;
  /* Named exclusions are resolved but not followed: every named matcher is resolved on
   * its own, and following names here would loop on an exclusion cycle. */
  if (m->exclude.inline_m)
    resolve(fc, &m->exclude, depth);
  else
    resolve(fc, &m->exclude, depth);
}

static void check_exclusion_cycles(fin_ctx *fc) {
  const te_list *l = &fc->r->merged.matchers;
  for (size_t i = 0; i < l->n; i++) {
    const te_matcher *start = ((const matcher_entry *)l->items[i])->m, *m = start;
    for (size_t steps = 0; m && m->has_exclude; steps++) {
      m = m->exclude.resolved;
      if (m == start || steps > l->n) {
        fin_error(fc, start->origin, "named matcher '%s' excludes itself through 'exclude'",
                  start->name);
        break;
      }
    }
  }
}

static const te_framework *framework_by_id(const te_rules *r, const char *id) {
  for (size_t i = 0; i < r->n_frameworks; i++)
    if (!strcmp(r->frameworks[i].id, id)) return &r->frameworks[i];
  return NULL;
}

static void check_framework(fin_ctx *fc, const char *id, te_origin o) {
  if (id && !framework_by_id(fc->r, id))
    fin_error(fc, o, "framework '%s' is not defined in any pack's 'frameworks:'", id);
}

static int stage_order_cmp(const void *a, const void *b) {
  const te_stage *x = a, *y = b;
  return (x->order > y->order) - (x->order < y->order);
}

/* The declared labels of a classifier, as a comma list for diagnostics. */
static void vocabulary_list(const te_classifier *c, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < c->n_categories && used + 1 < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", c->categories[i].id);
  if (used >= cap && cap > 4) snprintf(buf + cap - 4, 4, "...");
}

static void unknown_label(fin_ctx *fc, const te_classifier *c, te_origin o, const char *label) {
  char known[600], msg[900];
  if (!c->n_categories) return; /* reported once: "declares no categories" */
  vocabulary_list(c, known, sizeof known);
  snprintf(msg, sizeof msg, "category '%s' is not declared in classifier '%s' (declared: %s)",
           label, c->id, known);
  fin_error(fc, o, "%s%s", msg, "");
}

/* Vocabulary of one merged classifier: every parent must be a declared top-level label. */
static void build_vocabulary(fin_ctx *fc, classifier_entry *c, te_classifier *out) {
  te_rules *r = fc->r;
  const te_list *l = &c->categories;
  te_category *cats = te_arena_alloc(r->arena, (l->n ? l->n : 1) * sizeof *cats);
  out->categories = cats;
  out->n_categories = cats ? l->n : 0;
  for (size_t i = 0; cats && i < l->n; i++) {
    const category_entry *e = (const category_entry *)l->items[i];
    cats[i] = (te_category){e->hdr.id, e->meaning, e->parent, e->hdr.origin};
  }
  if (!l->n)
    fin_error(fc, c->hdr.origin,
              "classifier '%s' declares no categories (list every label it gives under "
              "'categories:')%s",
              c->hdr.id, "");
  for (size_t i = 0; cats && i < l->n; i++) {
    const category_entry *e = (const category_entry *)l->items[i];
    if (!e->parent) continue;
    const te_category *p = te_classifier_category(out, e->parent);
    if (!p)
      unknown_label(fc, out, e->parent_origin, e->parent);
    else if (p->parent)
      fin_error(fc, e->parent_origin,
                "parent '%s' of category '%s' has a parent itself (one "
                "level of kinds only)",
                e->parent, e->hdr.id);
  }
}

static void build_class_rule(fin_ctx *fc, const te_classifier *c, class_rule_entry *e,
                             te_class_rule *out) {
  out->id = e->hdr.id;
  out->kind = out->category = e->category;
  const te_category *label = e->category ? te_classifier_category(c, e->category) : NULL;
  if (e->category && !label) unknown_label(fc, c, e->category_origin, e->category);
  if (label && label->parent) out->category = label->parent;
  out->match = e->has_match ? resolve(fc, &e->match, 0) : NULL;
  out->unless = e->has_unless ? resolve(fc, &e->unless, 0) : NULL;
  out->from_classifier = e->from_classifier;
  out->n_from_categories = e->n_from;
  out->from_categories = e->from_categories;
  out->origin = e->hdr.origin;
  e->out = out;
}

/* True when classifier `from` is `target` or derives from it through rules' `from`. */
static bool derives_from(const te_list *l, const char *from, const char *target, unsigned depth) {
  if (!strcmp(from, target)) return true;
  const classifier_entry *c = (const classifier_entry *)te_list_find(l, from);
  if (!c || depth > l->n) return false;
  for (size_t k = 0; k < c->rules.n; k++) {
    const char *next = ((const class_rule_entry *)c->rules.items[k])->from_classifier;
    if (next && derives_from(l, next, target, depth + 1)) return true;
  }
  return false;
}

/* Derived rules name another classifier and its labels; no chain may come back. */
static void check_derivations(fin_ctx *fc) {
  te_rules *r = fc->r;
  const te_list *l = &r->merged.classifiers;
  for (size_t i = 0; i < l->n; i++) {
    classifier_entry *c = (classifier_entry *)l->items[i];
    for (size_t k = 0; k < c->rules.n; k++) {
      class_rule_entry *e = (class_rule_entry *)c->rules.items[k];
      if (!e->from_classifier) continue;
      const te_classifier *base = te_rules_classifier_any(r, e->from_classifier);
      if (!base) {
        fin_error(fc, e->from_origin,
                  "from: classifier '%s' is not defined in any pack (rule "
                  "'%s')",
                  e->from_classifier, e->hdr.id);
        continue;
      }
      for (size_t j = 0; j < e->n_from; j++)
        if (!te_classifier_category(base, e->from_categories[j]))
          unknown_label(fc, base, e->from_origins[j], e->from_categories[j]);
      if (derives_from(l, e->from_classifier, c->hdr.id, 0))
        fin_error(fc, e->from_origin,
                  "classifier '%s' derives from itself through 'from' "
                  "(rule '%s')",
                  c->hdr.id, e->hdr.id);
    }
  }
}

/* The first number of the next rule set's classifiers (te_rules.classifier_key0): never 0
 * and never given again. Atomic: rule sets may be finalized on several threads. */
static _Atomic uint64_t next_classifier_key = 1;

static void build_classifiers(fin_ctx *fc) {
  te_rules *r = fc->r;
  const te_list *l = &r->merged.classifiers;
  r->n_classifiers = l->n;
  r->classifier_key0 = atomic_fetch_add(&next_classifier_key, (uint64_t)l->n + 1);
  r->classifiers = te_arena_alloc(r->arena, (l->n ? l->n : 1) * sizeof *r->classifiers);
  for (size_t i = 0; r->classifiers && i < l->n; i++) {
    classifier_entry *c = (classifier_entry *)l->items[i];
    te_classifier *out = &r->classifiers[i];
    out->id = c->hdr.id;
    out->default_category = c->default_category ? c->default_category : "other";
    build_vocabulary(fc, c, out);
    const te_category *d = te_classifier_category(out, out->default_category);
    if (out->n_categories && !d)
      unknown_label(fc, out, c->default_origin, out->default_category);
    else if (d && d->parent)
      fin_error(fc, c->default_origin,
                "default '%s' of classifier '%s' must be a top-level "
                "category (it has a parent)",
                d->id, out->id);
    out->n_rules = c->rules.n;
    te_class_rule *rules = te_arena_alloc(r->arena, (c->rules.n ? c->rules.n : 1) * sizeof *rules);
    out->rules = rules;
    for (size_t k = 0; rules && k < c->rules.n; k++)
      build_class_rule(fc, out, (class_rule_entry *)c->rules.items[k], &rules[k]);
  }
  check_derivations(fc);
}

static void build_ladder_rules(fin_ctx *fc, const te_list *l, te_ladder_rule **out) {
  te_ladder_rule *rules = te_arena_alloc(fc->r->arena, (l->n ? l->n : 1) * sizeof *rules);
  *out = rules;
  for (size_t k = 0; rules && k < l->n; k++) {
    ladder_rule_entry *e = (ladder_rule_entry *)l->items[k];
    rules[k].id = e->hdr.id;
    rules[k].raw = e->has_raw ? resolve(fc, &e->raw, 0) : NULL;
    rules[k].normalized = e->has_normalized ? resolve(fc, &e->normalized, 0) : NULL;
    rules[k].score = e->score;
    rules[k].penalize = e->penalize;
    rules[k].origin = e->hdr.origin;
  }
}

static void build_ladders(fin_ctx *fc) {
  te_rules *r = fc->r;
  const te_list *l = &r->merged.ladders;
  r->n_ladders = l->n;
  r->ladders = te_arena_alloc(r->arena, (l->n ? l->n : 1) * sizeof *r->ladders);
  for (size_t i = 0; r->ladders && i < l->n; i++) {
    ladder_entry *e = (ladder_entry *)l->items[i];
    te_ladder *out = &r->ladders[i];
    out->id = e->hdr.id;
    out->default_score = e->default_score;
    out->penalty = e->has_penalty ? e->penalty : 0;
    out->penalty_match = e->has_penalty ? resolve(fc, &e->penalty_match, 0) : NULL;
    te_ladder_rule *rules = NULL, *adjustments = NULL;
    build_ladder_rules(fc, &e->rules, &rules);
    build_ladder_rules(fc, &e->adjustments, &adjustments);
    out->rules = rules;
    out->n_rules = e->rules.n;
    out->adjustments = adjustments;
    out->n_adjustments = e->adjustments.n;
  }
}

static void build_stages_and_frameworks(fin_ctx *fc) {
  te_rules *r = fc->r;
  const te_sections *s = &r->merged;
  r->n_stages = s->stages.n;
  r->stages = te_arena_alloc(r->arena, (s->stages.n ? s->stages.n : 1) * sizeof *r->stages);
  for (size_t i = 0; r->stages && i < s->stages.n; i++) {
    const stage_entry *e = (const stage_entry *)s->stages.items[i];
    r->stages[i].id = e->hdr.id;
    r->stages[i].label = e->label;
    r->stages[i].order = e->order;
  }
  /* qsort is not stable; stages with equal order keep list order via insertion sort. */
  for (size_t i = 1; r->stages && i < r->n_stages; i++) {
    te_stage cur = r->stages[i];
    size_t j = i;
    while (j > 0 && stage_order_cmp(&r->stages[j - 1], &cur) > 0) {
      r->stages[j] = r->stages[j - 1];
      j--;
    }
    r->stages[j] = cur;
  }
  const te_list *rule_lists[2] = {&s->path_rules, &s->annotation_rules};
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < rule_lists[k]->n; i++) {
      stage_rule_entry *e = (stage_rule_entry *)rule_lists[k]->items[i];
      resolve(fc, &e->match, 0);
      if (!te_list_find(&s->stages, e->stage))
        fin_error(fc, e->stage_origin, "stage '%s' is not defined in any pack's 'stages:'",
                  e->stage);
    }
  }
  r->n_frameworks = s->frameworks.n;
  r->frameworks =
      te_arena_alloc(r->arena, (s->frameworks.n ? s->frameworks.n : 1) * sizeof *r->frameworks);
  for (size_t i = 0; r->frameworks && i < s->frameworks.n; i++) {
    const framework_entry *e = (const framework_entry *)s->frameworks.items[i];
    r->frameworks[i].id = e->hdr.id;
    r->frameworks[i].label = e->label;
    r->frameworks[i].repository = e->repository;
    r->frameworks[i].n_aliases = e->n_aliases;
    r->frameworks[i].aliases = e->aliases;
  }
  if (s->default_framework) {
    r->default_framework = framework_by_id(r, s->default_framework);
    check_framework(fc, s->default_framework, s->default_framework_origin);
  } else if (r->n_frameworks) {
    r->default_framework = &r->frameworks[0];
  }
  for (size_t i = 0; i < s->text_hints.n; i++) {
    text_hint_entry *e = (text_hint_entry *)s->text_hints.items[i];
    check_framework(fc, e->framework, e->framework_origin);
    resolve(fc, &e->match, 0);
  }
  for (size_t i = 0; i < s->key_hints.n; i++) {
    const keys_hint_entry *e = (const keys_hint_entry *)s->key_hints.items[i];
    check_framework(fc, e->framework, e->framework_origin);
  }
  r->n_probes = s->probes.n;
  r->probes = te_arena_alloc(r->arena, (s->probes.n ? s->probes.n : 1) * sizeof *r->probes);
  for (size_t i = 0; r->probes && i < s->probes.n; i++) {
    probe_entry *e = (probe_entry *)s->probes.items[i];
    check_framework(fc, e->framework, e->framework_origin);
    r->probes[i].framework = e->framework;
    r->probes[i].path = e->path;
    r->probes[i].body_match = e->has_body_match ? resolve(fc, &e->body_match, 0) : NULL;
    r->probes[i].json_list_key = e->json_list_key;
    r->probes[i].timeout_s = e->timeout_s;
  }
}

/* Each component's evidence label must be "any" or a category or kind the kernel
 * classifier declares: a typo would make the component unprovable, the pattern silently
 * dead. Without a kernel classifier there is nothing to check against (the analysis
 * refuses such rules). */
static void check_evidence_labels(fin_ctx *fc, const fusion_entry *e) {
  const te_classifier *c = te_rules_classifier_any(fc->r, "kernel");
  if (!c || !c->n_categories) return;
  for (size_t k = 0; k < e->pat.n_evidence; k++) {
    const char *label = e->pat.evidence[k];
    if (!strcmp(label, "any") || te_classifier_category(c, label)) continue;
    char known[600];
    vocabulary_list(c, known, sizeof known);
    fin_error(fc, e->evidence_origin ? e->evidence_origin[k] : e->hdr.origin,
              "evidence '%s' of pattern '%s' is not declared in classifier 'kernel' (declared: "
              "any, %s)",
              label, e->hdr.id, known);
  }
}

/* Each dtype value names the matcher dtype_<value> that tells a kernel of that format
 * from its name; a value without one could never be proven: an error at the value. */
static void resolve_dtypes(fin_ctx *fc, fusion_entry *e) {
  te_fusion_pattern *p = &e->pat;
  const te_matcher **ms = te_arena_alloc(fc->r->arena, (p->n_dtype ? p->n_dtype : 1) * sizeof *ms);
  p->dtype_matchers = ms;
  for (size_t k = 0; ms && k < p->n_dtype; k++) {
    char name[128];
    int n = snprintf(name, sizeof name, "dtype_%s", p->dtype[k]);
    ms[k] = n > 0 && (size_t)n < sizeof name ? named_matcher(fc->r, name) : NULL;
    if (!ms[k])
      fin_error(fc, e->dtype_origin ? e->dtype_origin[k] : e->hdr.origin,
                "dtype '%s' of pattern '%s' names no format: no pack defines matcher '%s'",
                p->dtype[k], e->hdr.id, name);
  }
  if (!ms) p->n_dtype = 0;
}

/* A shape gate's formats are dtype ids (dtypes:); one no pack defines could never hold. */
static void check_shape_formats(fin_ctx *fc) {
  const te_list *l = &fc->r->merged.fusions;
  for (size_t i = 0; i < l->n; i++) {
    const fusion_entry *e = (const fusion_entry *)l->items[i];
    for (size_t k = 0; k < e->pat.n_shape_formats; k++)
      if (!te_rules_dtype_by_id(fc->r, e->pat.shape_formats[k]))
        fin_error(fc, e->shape_format_origin ? e->shape_format_origin[k] : e->hdr.origin,
                  "shape format '%s' of pattern '%s' is no dtype id (dtypes:)",
                  e->pat.shape_formats[k], e->hdr.id);
  }
}

static void build_aliases_and_fusions(fin_ctx *fc) {
  te_rules *r = fc->r;
  const te_sections *s = &r->merged;
  r->n_aliases = s->aliases.n;
  r->aliases = te_arena_alloc(r->arena, (s->aliases.n ? s->aliases.n : 1) * sizeof *r->aliases);
  for (size_t i = 0; r->aliases && i < s->aliases.n; i++) {
    alias_entry *e = (alias_entry *)s->aliases.items[i];
    r->aliases[i].id = e->hdr.id;
    r->aliases[i].trigger = resolve(fc, &e->trigger, 0);
    r->aliases[i].n_tokens = e->n_tokens;
    r->aliases[i].tokens = e->tokens;
  }
  r->n_fusions = s->fusions.n;
  r->fusions = te_arena_alloc(r->arena, (s->fusions.n ? s->fusions.n : 1) * sizeof *r->fusions);
  for (size_t i = 0; r->fusions && i < s->fusions.n; i++) {
    fusion_entry *e = (fusion_entry *)s->fusions.items[i];
    te_fusion_pattern *p = &e->pat;
    r->fusions[i] = p;
    p->active = e->has_active ? resolve(fc, &e->active, 0) : NULL;
    const te_matcher **groups =
        te_arena_alloc(r->arena, (e->n_split ? e->n_split : 1) * sizeof *groups);
    for (size_t k = 0; groups && k < e->n_split; k++) groups[k] = resolve(fc, &e->split[k], 0);
    p->split_groups = groups;
    p->n_split_groups = groups ? e->n_split : 0;
    p->chain_riders = e->has_riders ? resolve(fc, &e->riders, 0) : NULL;
    p->merge_merged = e->has_merged ? resolve(fc, &e->merged, 0) : NULL;
    /* a gate naming no framework could never open: an error, like any dangling name */
    if (p->framework && !framework_by_id(r, p->framework))
      fin_error(fc, e->framework_origin,
                "fusion pattern '%s' is gated on framework '%s', which no pack's 'frameworks:' "
                "defines",
                p->id, p->framework);
    for (size_t k = 0; k < p->n_framework_paths; k++)
      if (!framework_by_id(r, p->framework_paths[k].framework))
        fin_error(fc, e->framework_path_origin[k],
                  "fusion pattern '%s' cites a path for framework '%s', which no pack's "
                  "'frameworks:' defines",
                  p->id, p->framework_paths[k].framework);
    check_evidence_labels(fc, e);
    resolve_dtypes(fc, e);
  }
  for (size_t i = 0; r->fusions && i < s->fusions.n; i++) {
    fusion_entry *e = (fusion_entry *)s->fusions.items[i];
    const te_fusion_pattern **subs =
        te_arena_alloc(r->arena, (e->n_subsumes ? e->n_subsumes : 1) * sizeof *subs);
    size_t n = 0;
    for (size_t k = 0; subs && k < e->n_subsumes; k++) {
      const fusion_entry *t = (const fusion_entry *)te_list_find(&s->fusions, e->subsumes[k]);
      if (!t) {
        fin_error(fc, e->subsumes_origin[k], "subsumes '%s' names no fusion pattern (pattern '%s')",
                  e->subsumes[k], e->hdr.id);
        continue;
      }
      subs[n++] = &t->pat;
    }
    e->pat.subsumes = subs;
    e->pat.n_subsumes = n;
  }
}

/* fuse.model_kernel_families maps a model family to named matchers of kernels only it
 * runs; a name no pack defines would silently never name the model: an error at the
 * family's key. */
static void check_model_kernel_families(fin_ctx *fc) {
  const te_list *l = &fc->r->merged.settings;
  for (size_t i = 0; i < l->n; i++) {
    const setting_entry *e = (const setting_entry *)l->items[i];
    if (!e->map_id || e->def->offset != offsetof(te_settings, fuse_model_kernel_families)) continue;
    for (size_t k = 0; k < e->value.n_items; k++)
      if (!named_matcher(fc->r, e->value.items[k]))
        fin_error(fc, e->hdr.origin,
                  "model family '%s' names matcher '%s', which no pack's 'matchers:' defines",
                  e->map_id, e->value.items[k]);
  }
}

/* One slot per matcher with a `tokens:` list, every entry in one index; the matchers learn
 * their slot only once the index is sealed, so a failure leaves them scanning. */
static bool build_token_index(te_rules *r) {
  size_t n_entries = 0;
  for (size_t i = 0; i < r->reg.n_matchers; i++) n_entries += r->reg.matchers[i]->n_tokens;
  r->token_index = te_token_index_create(n_entries);
  if (!r->token_index) return false;
  uint32_t slot = 0;
  for (size_t i = 0; i < r->reg.n_matchers; i++) {
    const te_matcher *m = r->reg.matchers[i];
    if (!m->n_tokens) continue;
    for (size_t k = 0; k < m->n_tokens; k++)
      if (!te_token_index_add(r->token_index, m->tokens[k], m->token_lens[k], slot)) return false;
    slot++;
  }
  if (!te_token_index_seal(r->token_index)) return false;
  slot = 0;
  for (size_t i = 0; i < r->reg.n_matchers; i++) {
    te_matcher *m = r->reg.matchers[i];
    if (!m->n_tokens) continue;
    m->tindex = r->token_index;
    m->tslot = slot++;
  }
  return true;
}

/* Whether a base decision (rule at, -1: the default) gives one of cr's labels. */
static bool base_label_hits(const te_classifier *base, const te_class_rule *cr, int at) {
  const char *cat = at < 0 ? base->default_category : base->rules[at].category;
  const char *kind = at < 0 ? base->default_category : base->rules[at].kind;
  for (size_t i = 0; i < cr->n_from_categories; i++)
    if (!strcmp(cr->from_categories[i], cat) || !strcmp(cr->from_categories[i], kind)) return true;
  return false;
}

/* Whether derived rule dv accepts its base's decision at (-1: the base's default): bit at + 1
 * of its accept table. */
static bool derived_accepts(const te_derived *dv, int at) {
  size_t bit = (size_t)(at + 1);
  return (dv->accept[bit >> 6] >> (bit & 63)) & 1u;
}

/* Each derived rule's base classifier and which of its decisions the rule accepts: the
 * overlap classifier asked both by name for every kernel name (te_rules_classifier_any
 * and the labels, a few dozen strcmp calls a name). Missing tables (no memory) leave
 * the rules to compare names: the same answers. */
static void build_derived(te_rules *r) {
  if (!r->n_classifiers) return;
  r->derived = te_arena_alloc(r->arena, r->n_classifiers * sizeof *r->derived);
  for (size_t k = 0; r->derived && k < r->n_classifiers; k++) {
    const te_classifier *c = &r->classifiers[k];
    te_derived *dv = te_arena_alloc(r->arena, (c->n_rules ? c->n_rules : 1) * sizeof *dv);
    r->derived[k] = dv;
    for (size_t i = 0; dv && i < c->n_rules; i++) {
      const te_class_rule *cr = &c->rules[i];
      const te_classifier *base =
          cr->from_classifier ? te_rules_classifier_any(r, cr->from_classifier) : NULL;
      dv[i].base = NULL;
      if (!base) continue;
      size_t words = (base->n_rules + 1 + 63) / 64;
      if (!(dv[i].accept = te_arena_alloc(r->arena, words * sizeof *dv[i].accept))) continue;
      memset(dv[i].accept, 0, words * sizeof *dv[i].accept);
      for (int at = -1; at < (int)base->n_rules; at++)
        if (base_label_hits(base, cr, at))
          dv[i].accept[(size_t)(at + 1) >> 6] |= 1ull << ((size_t)(at + 1) & 63);
      dv[i].base = base;
    }
  }
}

/* The one base classifier every deciding rule of c is derived from, with no matcher or
 * exclusion of its own (derived: c's rule tables); NULL when c reads the name. */
static const te_classifier *sole_base(const te_classifier *c, const te_derived *dv) {
  const te_classifier *base = NULL;
  for (size_t i = 0; dv && i < c->n_rules; i++) {
    const te_class_rule *cr = &c->rules[i];
    if (!cr->match && !cr->from_classifier) continue; /* never decides (decide skips it) */
    if (cr->match || cr->unless || !dv[i].base || (base && dv[i].base != base)) return NULL;
    base = dv[i].base;
  }
  return base;
}

/* Each classifier's decision per base decision when its base's decides it (te_by_base):
 * the overlap class of a name whose kernel category is known is then a load, not a
 * subject and five rules (a fifth of the overlap on 262,144 distinct names). Without
 * memory a classifier keeps reading the name: the same answers. */
static void build_by_base(te_rules *r) {
  if (!r->derived ||
      !(r->by_base = te_arena_alloc(r->arena, r->n_classifiers * sizeof *r->by_base)))
    return;
  for (size_t k = 0; k < r->n_classifiers; k++) {
    const te_classifier *c = &r->classifiers[k];
    const te_derived *dv = r->derived[k];
    const te_classifier *base = sole_base(c, dv);
    te_by_base *bb = &r->by_base[k];
    bb->base = NULL;
    if (!base || !(bb->rule = te_arena_alloc(r->arena, (base->n_rules + 1) * sizeof *bb->rule)))
      continue;
    for (int at = -1; at < (int)base->n_rules; at++) {
      int decided = -1;
      for (size_t i = 0; decided < 0 && i < c->n_rules; i++)
        if (dv[i].base && derived_accepts(&dv[i], at)) decided = (int)i;
      bb->rule[at + 1] = decided;
    }
    bb->base = base;
  }
}

/* Each classifier's prefilter (prefilter.h). Without one (out of memory, or a classifier
 * whose every rule must run) the classifier runs every rule: the same answers. */
static void build_prefilters(te_rules *r) {
  if (!r->n_classifiers || !(r->prefilters = calloc(r->n_classifiers, sizeof *r->prefilters)))
    return;
  for (size_t i = 0; i < r->n_classifiers; i++)
    r->prefilters[i] = te_prefilter_build(&r->classifiers[i]);
}

/* A pattern that states no min_share_pct / likely_share_pct takes the packs' defaults
 * (fuse.default_*): settings are known only once every pack is in. */
static void fill_fusion_defaults(te_rules *r) {
  for (size_t i = 0; r->fusions && i < r->n_fusions; i++) {
    te_fusion_pattern *p = r->fusions[i];
    if (isnan(p->min_share_pct)) p->min_share_pct = r->settings.fuse_default_min_share_pct;
    if (isnan(p->likely_share_pct)) p->likely_share_pct = r->settings.fuse_default_likely_share_pct;
  }
}

te_status te_rules_finalize(te_rules *r, te_diags *diags) {
  if (!r) return TE_ERR_STATE;
  if (r->finalized) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "rules are already finalized");
    return TE_ERR_STATE;
  }
  r->finalized = true;
  if (!sort_named(r)) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory");
    r->failed = true;
    return TE_ERR_NOMEM;
  }
  fin_ctx fc = {r, diags, 0};
  const te_list *ml = &r->merged.matchers;
  for (size_t i = 0; i < ml->n; i++) resolve_matcher(&fc, ((matcher_entry *)ml->items[i])->m, 0);
  check_exclusion_cycles(&fc);
  build_classifiers(&fc);
  build_ladders(&fc);
  build_stages_and_frameworks(&fc);
  build_aliases_and_fusions(&fc);
  check_model_kernel_families(&fc);
  if (!te_roofline_build(r, diags, &fc.errors)) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory building roofline data");
    r->failed = true;
    return TE_ERR_NOMEM;
  }
  check_shape_formats(&fc);
  if (!te_display_build(r)) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory building display rules");
    r->failed = true;
    return TE_ERR_NOMEM;
  }
  r->classifier_caches = calloc(r->n_classifiers + 1, sizeof *r->classifier_caches);
  r->ladder_caches = calloc(r->n_ladders + 1, sizeof *r->ladder_caches);
  if (!r->classifier_caches || !r->ladder_caches) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory");
    r->failed = true;
    return TE_ERR_NOMEM;
  }
  r->settings_set = te_arena_alloc(r->arena, te_setting_def_count() * sizeof *r->settings_set);
  if (!r->settings_set ||
      !te_settings_resolve(&r->merged.settings, r->arena, &r->settings, r->settings_set)) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory");
    r->failed = true;
    return TE_ERR_NOMEM;
  }
  fill_fusion_defaults(r);
  r->infos = te_arena_alloc(r->arena, (r->n_packs ? r->n_packs : 1) * sizeof *r->infos);
  for (size_t i = 0; r->infos && i < r->n_packs; i++) r->infos[i] = r->packs[i]->info;
  for (size_t i = 0; i < r->reg.n_matchers; i++) {
    if (te_matcher_prepare(r->reg.matchers[i]) != 0) {
      te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory compiling matchers");
      r->failed = true;
      return TE_ERR_NOMEM;
    }
  }
  if (!build_token_index(r)) {
    te_diags_add(diags, TE_SEV_ERROR, "<rules>", 0, 0, "out of memory indexing token entries");
    r->failed = true;
    return TE_ERR_NOMEM;
  }
  if (fc.errors) {
    r->failed = true;
    return TE_ERR_INVALID;
  }
  build_prefilters(r);
  build_derived(r);
  build_by_base(r);
  return TE_OK;
}

/* ---------------------------------------------------------------- queries */

static bool ready(const te_rules *r) { return r && r->finalized && !r->failed; }

size_t te_rules_pack_count(const te_rules *r) { return r ? r->n_packs : 0; }

const te_pack_info *te_rules_pack(const te_rules *r, size_t i) {
  if (!r || i >= r->n_packs) return NULL;
  return r->infos ? &r->infos[i] : &r->packs[i]->info;
}

const te_matcher *te_rules_matcher(const te_rules *r, const char *name) {
  if (!ready(r) || !name) return NULL;
  return named_matcher(r, name);
}

static bool match_str(const te_matcher *m, const char *s) {
  return m && s && te_matcher_match(m, s, strlen(s));
}

const te_classifier *te_rules_classifier_any(const te_rules *r, const char *id) {
  for (size_t i = 0; r->classifiers && i < r->n_classifiers; i++)
    if (!strcmp(r->classifiers[i].id, id)) return &r->classifiers[i];
  return NULL;
}

const te_classifier *te_rules_classifier(const te_rules *r, const char *id) {
  if (!ready(r) || !id) return NULL;
  return te_rules_classifier_any(r, id);
}

const te_category *te_classifier_category(const te_classifier *c, const char *id) {
  for (size_t i = 0; c && id && i < c->n_categories; i++)
    if (!strcmp(c->categories[i].id, id)) return &c->categories[i];
  return NULL;
}

static int decide(const te_rules *r, const te_classifier *c, te_subject *subj, unsigned depth,
                  bool cached);

/* Classifier c's key in a subject's decisions (te_rules.classifier_key0). */
static uint64_t decision_key(const te_rules *r, const te_classifier *c) {
  return r->classifier_key0 + (uint64_t)(c - r->classifiers);
}

/* Notes c's decision in the subject (a derived classifier's rules ask their base classifier
 * several times for one name); returns it. */
static int remember(const te_rules *r, te_subject *subj, const te_classifier *c, int decided) {
  for (size_t k = 0; k < TE_SUBJECT_DECISIONS; k++)
    if (!subj->decided_by[k]) {
      subj->decided_by[k] = decision_key(r, c);
      subj->decided[k] = decided;
      break;
    }
  return decided;
}

/* A derived rule's condition: the name's category or kind under the base classifier is
 * one of the rule's labels. With the rule's table (build_derived) a bit test, else by
 * the labels' names. */
static bool from_hits(const te_rules *r, const te_class_rule *cr, const te_derived *dv,
                      te_subject *subj, unsigned depth, bool cached) {
  const te_classifier *base = dv ? dv->base : te_rules_classifier_any(r, cr->from_classifier);
  /* finalize refuses derivation cycles; the bound only guards against misuse */
  if (!base || depth > 8) return false;
  int at = decide(r, base, subj, depth + 1, cached);
  if (dv) return derived_accepts(dv, at);
  return base_label_hits(base, cr, at);
}

/* The rules of c that can hit the subject's name, as bits in local (n_local words) or on
 * the heap; NULL when c has no prefilter or memory ran out: every rule then runs. */
static uint64_t *may_gate(const te_rules *r, const te_classifier *c, te_subject *subj,
                          uint64_t *local, size_t n_local) {
  const te_prefilter *pf = r->prefilters ? r->prefilters[c - r->classifiers] : NULL;
  if (!pf || !te_subject_texts(subj)) return NULL;
  size_t words = te_prefilter_words(pf);
  uint64_t *may = words <= n_local ? local : malloc(words * sizeof *may);
  if (may)
    te_prefilter_scan(pf, subj->folded, subj->len, subj->compact, subj->compact_len,
                      te_token_form_mangled(subj->s, subj->len), may);
  return may;
}

/* Index of the deciding rule of c for the subject's name, -1 for the default; cached per
 * classifier unless the caller keeps its own answers (`cached` false: nor are the base
 * classifiers' decisions, which such a caller asks once per name too). Every rule, and every base
 * classifier a derived rule asks, tests the same subject, so the name's token form and token-index
 * hits are computed once. */
static int decide(const te_rules *r, const te_classifier *c, te_subject *subj, unsigned depth,
                  bool cached) {
  uint64_t key = decision_key(r, c);
  for (size_t k = 0; k < TE_SUBJECT_DECISIONS && subj->decided_by[k]; k++)
    if (subj->decided_by[k] == key) return subj->decided[k];
  te_lcache *cache = cached ? &r->classifier_caches[c - r->classifiers] : NULL;
  int decided = -1;
  if (cache && te_lcache_get(cache, subj->s, subj->len, &decided))
    return remember(r, subj, c, decided);
  decided = -1;
  uint64_t may_local[TE_LOCAL_RULE_WORDS];
  uint64_t *may = may_gate(r, c, subj, may_local, TE_LOCAL_RULE_WORDS);
  for (size_t i = te_prefilter_next(may, 0, c->n_rules); i < c->n_rules && decided < 0;
       i = te_prefilter_next(may, i + 1, c->n_rules)) {
    const te_class_rule *cr = &c->rules[i];
    if (!cr->match && !cr->from_classifier) continue;
    if (cr->match && !te_matcher_match_subject(cr->match, subj)) continue;
    const te_derived *dv =
        r->derived && r->derived[c - r->classifiers] ? &r->derived[c - r->classifiers][i] : NULL;
    if (cr->from_classifier && !from_hits(r, cr, dv && dv->base ? dv : NULL, subj, depth, cached))
      continue;
    if (cr->unless && te_matcher_match_subject(cr->unless, subj)) continue;
    decided = (int)i;
  }
  if (may != may_local) free(may);
  if (cache) te_lcache_put(cache, subj->s, subj->len, decided);
  return remember(r, subj, c, decided);
}

/* base: a classifier whose decision of the name is known (base_rule), or NULL. */
static const char *classify(const te_rules *r, const char *id, const char *name,
                            const te_class_rule **rule, bool cached, const te_classifier *base,
                            int base_rule) {
  if (rule) *rule = NULL;
  const te_classifier *c = te_rules_classifier(r, id);
  if (!c) return NULL;
  if (!name) name = "";
  const te_by_base *bb = r->by_base ? &r->by_base[c - r->classifiers] : NULL;
  int decided;
  if (base && bb && bb->base == base) {
    decided = bb->rule[base_rule + 1];
  } else {
    te_subject subj;
    te_subject_init(&subj, name, strlen(name));
    if (base) (void)remember(r, &subj, base, base_rule);
    decided = decide(r, c, &subj, 0, cached);
    te_subject_done(&subj);
  }
  if (decided < 0) return c->default_category;
  if (rule) *rule = &c->rules[decided];
  return c->rules[decided].category;
}

const char *te_rules_classify(const te_rules *r, const char *id, const char *name,
                              const te_class_rule **rule) {
  return classify(r, id, name, rule, true, NULL, -1);
}

const char *te_rules_classify_once(const te_rules *r, const char *id, const char *name,
                                   const te_class_rule **rule) {
  return classify(r, id, name, rule, false, NULL, -1);
}

const char *te_rules_classify_once_given(const te_rules *r, const char *id, const char *name,
                                         const char *base_id, int base_rule,
                                         const te_class_rule **rule) {
  const te_classifier *base = base_id ? te_rules_classifier(r, base_id) : NULL;
  if (base && (base_rule < -1 || base_rule >= (long)base->n_rules)) base = NULL;
  return classify(r, id, name, rule, false, base, base_rule);
}

const char *te_rules_kind(const te_rules *r, const char *id, const char *name) {
  const te_class_rule *rule = NULL;
  const char *cat = te_rules_classify(r, id, name, &rule);
  return rule ? rule->kind : cat;
}

const te_ladder *te_rules_ladder(const te_rules *r, const char *id) {
  if (!ready(r) || !id) return NULL;
  for (size_t i = 0; i < r->n_ladders; i++)
    if (!strcmp(r->ladders[i].id, id)) return &r->ladders[i];
  return NULL;
}

/* raw and norm: the two texts as subjects, shared by every rule of one scoring so that
 * their folded forms and byte pairs are made once (a subject per rule made them for each
 * of a ladder's rules: 17 on average for a Python frame). */
static bool ladder_rule_hits(const te_ladder_rule *lr, te_subject *raw, te_subject *norm) {
  if (lr->raw && !te_matcher_match_subject(lr->raw, raw)) return false;
  if (lr->normalized && !te_matcher_match_subject(lr->normalized, norm)) return false;
  return true;
}

static void appendf(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t cap, const char *fmt, ...) {
  if (!buf || !cap) return;
  size_t used = strlen(buf);
  if (used + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, cap - used, fmt, ap);
  va_end(ap);
}

static int score_uncached(const te_ladder *l, const char *raw, const char *normalized, char *why,
                          size_t why_cap) {
  int score = l->default_score;
  const te_ladder_rule *chosen = NULL;
  te_subject raw_s, norm_s;
  te_subject_init(&raw_s, raw, strlen(raw));
  te_subject_init(&norm_s, normalized, strlen(normalized));
  for (size_t i = 0; i < l->n_rules && !chosen; i++)
    if (ladder_rule_hits(&l->rules[i], &raw_s, &norm_s)) chosen = &l->rules[i];
  if (chosen) {
    score = chosen->score;
    appendf(why, why_cap, "rule '%s' %d", chosen->id, chosen->score);
    if (chosen->penalize && l->penalty_match &&
        (te_matcher_match_subject(l->penalty_match, &norm_s) ||
         te_matcher_match_subject(l->penalty_match, &raw_s))) {
      score -= l->penalty;
      appendf(why, why_cap, ", penalty -%d", l->penalty);
    }
  } else {
    appendf(why, why_cap, "default %d", l->default_score);
  }
  for (size_t i = 0; i < l->n_adjustments; i++) {
    if (!ladder_rule_hits(&l->adjustments[i], &raw_s, &norm_s)) continue;
    score += l->adjustments[i].score;
    appendf(why, why_cap, ", adjustment '%s' %+d", l->adjustments[i].id, l->adjustments[i].score);
  }
  te_subject_done(&raw_s);
  te_subject_done(&norm_s);
  return score;
}

int te_rules_score(const te_rules *r, const char *id, const char *raw, const char *normalized,
                   char *why, size_t why_cap) {
  if (why && why_cap) why[0] = '\0';
  const te_ladder *l = te_rules_ladder(r, id);
  if (!l) {
    appendf(why, why_cap, "no ladder '%s'", id ? id : "");
    return 0;
  }
  /* Callers scoring already-normalised text pass it once; it then serves as both. */
  if (!raw) raw = normalized ? normalized : "";
  if (!normalized) normalized = raw;
  if (why && why_cap) return score_uncached(l, raw, normalized, why, why_cap);
  /* The cache key is both texts separated by a NUL, which neither can contain. */
  size_t raw_len = strlen(raw), norm_len = strlen(normalized), len = raw_len + 1 + norm_len;
  char local[512];
  char *key = len <= sizeof local ? local : malloc(len);
  if (!key) return score_uncached(l, raw, normalized, NULL, 0);
  memcpy(key, raw, raw_len);
  key[raw_len] = '\0';
  memcpy(key + raw_len + 1, normalized, norm_len);
  te_lcache *cache = &r->ladder_caches[l - r->ladders];
  int score;
  if (!te_lcache_get(cache, key, len, &score)) {
    score = score_uncached(l, raw, normalized, NULL, 0);
    te_lcache_put(cache, key, len, score);
  }
  if (key != local) free(key);
  return score;
}

/* Case-insensitive search; returns the offset of the first occurrence or -1. */
static long find_nocase(const char *hay, const char *needle, size_t nlen) {
  size_t hlen = strlen(hay);
  if (nlen == 0 || nlen > hlen) return nlen == 0 ? 0 : -1;
  for (size_t i = 0; i + nlen <= hlen; i++) {
    size_t k = 0;
    while (k < nlen && te_ascii_lower_byte((unsigned char)hay[i + k]) ==
                           te_ascii_lower_byte((unsigned char)needle[k]))
      k++;
    if (k == nlen) return (long)i;
  }
  return -1;
}

size_t te_rules_normalize_path(const te_rules *r, const char *path, char *out, size_t cap) {
  if (!path) path = "";
  if (ready(r)) {
    const te_list *l = &r->merged.rewrites;
    for (size_t i = 0; i < l->n; i++) {
      const rewrite_entry *e = (const rewrite_entry *)l->items[i];
      long at = find_nocase(path, e->find, e->find_len);
      if (at < 0) continue;
      int n = snprintf(out, cap, "%s%s", e->replace, path + at + (long)e->find_len);
      return n < 0 ? 0 : (size_t)n;
    }
  }
  while (*path == '/') path++;
  int n = snprintf(out, cap, "%s", path);
  return n < 0 ? 0 : (size_t)n;
}

size_t te_rules_normalize_frame(const te_rules *r, const char *frame, char *out, size_t cap) {
  if (!frame) frame = "";
  /* "PATH(LINE): FUNC": the first "(digits): " splits path, line and function. */
  for (const char *p = strchr(frame, '('); p; p = strchr(p + 1, '(')) {
    const char *d = p + 1;
    while (isdigit((unsigned char)*d)) d++;
    if (d == p + 1 || d[0] != ')' || d[1] != ':') continue;
    const char *func = d + 2;
    while (*func == ' ') func++;
    size_t path_len = (size_t)(p - frame);
    char *path = malloc(path_len + 1);
    if (!path) break;
    memcpy(path, frame, path_len);
    path[path_len] = '\0';
    size_t need = te_rules_normalize_path(r, path, NULL, 0) + 1;
    char *norm = malloc(need);
    if (!norm) {
      free(path);
      break;
    }
    te_rules_normalize_path(r, path, norm, need);
    int n = snprintf(out, cap, "%s:%.*s %s", norm, (int)(d - p - 1), p + 1, func);
    free(path);
    free(norm);
    return n < 0 ? 0 : (size_t)n;
  }
  int n = snprintf(out, cap, "%s", frame);
  return n < 0 ? 0 : (size_t)n;
}

size_t te_rules_stage_count(const te_rules *r) { return ready(r) ? r->n_stages : 0; }

const te_stage *te_rules_stage(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_stages ? &r->stages[i] : NULL;
}

const te_stage *te_rules_stage_by_id(const te_rules *r, const char *id) {
  if (!ready(r) || !id) return NULL;
  for (size_t i = 0; i < r->n_stages; i++)
    if (!strcmp(r->stages[i].id, id)) return &r->stages[i];
  return NULL;
}

static const te_stage *stage_from(const te_rules *r, const te_list *l, const char *text) {
  if (!ready(r) || !text) return NULL;
  for (size_t i = 0; i < l->n; i++) {
    const stage_rule_entry *e = (const stage_rule_entry *)l->items[i];
    if (match_str(e->match.resolved, text)) return te_rules_stage_by_id(r, e->stage);
  }
  return NULL;
}

const te_stage *te_rules_stage_from_path(const te_rules *r, const char *path_tail) {
  return r ? stage_from(r, &r->merged.path_rules, path_tail) : NULL;
}

const te_stage *te_rules_stage_from_annotation(const te_rules *r, const char *name) {
  return r ? stage_from(r, &r->merged.annotation_rules, name) : NULL;
}

bool te_rules_rank_from_filename(const te_rules *r, const char *name, long *rank) {
  if (!ready(r) || !name) return false;
  const te_list *l = &r->merged.ranks;
  for (size_t i = 0; i < l->n; i++) {
    const rank_entry *e = (const rank_entry *)l->items[i];
    size_t s = 0, end = 0;
    if (!te_regex_run(e->code, r->rank_ctx, name, strlen(name), &s, &end, NULL)) continue;
    if (end <= s || end - s > 18) continue;
    char digits[20];
    memcpy(digits, name + s, end - s);
    digits[end - s] = '\0';
    char *stop = NULL;
    long v = strtol(digits, &stop, 10);
    if (!stop || *stop) continue;
    if (rank) *rank = v;
    return true;
  }
  return false;
}

size_t te_rules_framework_count(const te_rules *r) { return ready(r) ? r->n_frameworks : 0; }

static bool same_spelling(const char *a, const char *b) {
  for (;; a++, b++) {
    char x = *a == '_' ? '-' : (char)te_ascii_lower_byte((unsigned char)*a);
    char y = *b == '_' ? '-' : (char)te_ascii_lower_byte((unsigned char)*b);
    if (x != y) return false;
    if (!x) return true;
  }
}

const te_framework *te_rules_framework_lookup(const te_rules *r, const char *spelling) {
  if (!ready(r) || !spelling) return NULL;
  for (size_t i = 0; i < r->n_frameworks; i++) {
    const te_framework *f = &r->frameworks[i];
    if (same_spelling(f->id, spelling) || same_spelling(f->label, spelling)) return f;
    for (size_t k = 0; k < f->n_aliases; k++)
      if (same_spelling(f->aliases[k], spelling)) return f;
  }
  return NULL;
}

const te_framework *te_rules_framework_default(const te_rules *r) {
  return ready(r) ? r->default_framework : NULL;
}

/* One subject for every hint: the text is folded (and compacted, tokenised) once, not once
 * per hint; most texts are distinct names asked once, which a result cache cannot help. */
const te_framework *te_rules_framework_from_text(const te_rules *r, const char *text) {
  if (!ready(r) || !text) return NULL;
  const te_list *l = &r->merged.text_hints;
  te_subject subj;
  te_subject_init(&subj, text, strlen(text));
  const text_hint_entry *hit = NULL;
  for (size_t i = 0; !hit && i < l->n; i++) {
    const text_hint_entry *e = (const text_hint_entry *)l->items[i];
    if (te_matcher_match_subject(e->match.resolved, &subj)) hit = e;
  }
  te_subject_done(&subj);
  return hit ? framework_by_id(r, hit->framework) : NULL;
}

const te_framework *te_rules_framework_from_keys(const te_rules *r, const char *const *keys,
                                                 size_t n_keys) {
  if (!ready(r) || !keys) return NULL;
  const te_list *l = &r->merged.key_hints;
  for (size_t i = 0; i < l->n; i++) {
    const keys_hint_entry *e = (const keys_hint_entry *)l->items[i];
    for (size_t k = 0; k < e->n_keys; k++)
      for (size_t j = 0; j < n_keys; j++)
        if (keys[j] && !strcmp(keys[j], e->keys[k])) return framework_by_id(r, e->framework);
  }
  return NULL;
}

size_t te_rules_url_probe_count(const te_rules *r) { return ready(r) ? r->n_probes : 0; }

const te_url_probe *te_rules_url_probe(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_probes ? &r->probes[i] : NULL;
}

const te_settings *te_rules_settings(const te_rules *r) { return ready(r) ? &r->settings : NULL; }

const char *te_rules_settings_missing(const te_rules *r) {
  if (!ready(r)) return NULL;
  for (size_t i = 0; i < te_setting_def_count(); i++)
    if (!r->settings_set[i]) return te_setting_def_at(i)->key;
  return NULL;
}

bool te_rules_setting_origin(const te_rules *r, const char *key, te_origin *where) {
  if (!ready(r) || !key) return false;
  const te_entry *e = te_list_find(&r->merged.settings, key);
  if (e && where) *where = e->origin;
  return e != NULL;
}

size_t te_rules_alias_count(const te_rules *r) { return ready(r) ? r->n_aliases : 0; }

const te_alias_group *te_rules_alias(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_aliases ? &r->aliases[i] : NULL;
}

size_t te_rules_fusion_count(const te_rules *r) { return ready(r) ? r->n_fusions : 0; }

const te_fusion_pattern *te_rules_fusion(const te_rules *r, size_t i) {
  return ready(r) && i < r->n_fusions ? r->fusions[i] : NULL;
}
