/*
 * pack_load.c - validating one YAML rule pack into entries (docs/rules.md is the format).
 *
 * Validation never stops at the first problem: every check records a diagnostic and
 * carries on with what it can, so one run of `triage rules check` lists everything
 * wrong with a pack. A pack with any error is returned as NULL and merges nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diags.h"
#include "pack.h"
#include "pack_parse.h"
#include "triage/ascii.h"
#include "yaml_tree.h"

#define MAX_SCORE 1000000
#define MAX_TIMEOUT_S 3600.0

void te_verr(te_vctx *v, const ty_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void te_verr(te_vctx *v, const ty_node *n, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  v->errors++;
  te_diags_add(v->d, TE_SEV_ERROR, v->file, n ? n->line : 0, n ? n->col : 0, "%s", msg);
}

te_origin te_origin_of(const te_vctx *v, const ty_node *n) {
  te_origin o = {v->file, n ? n->line : 0, n ? n->col : 0};
  return o;
}

const char *te_kind_name(const ty_node *n) {
  if (n->kind == TY_MAP) return "a mapping";
  if (n->kind == TY_SEQ) return "a list";
  if (n->plain && n->len == 0) return "empty";
  return "a scalar";
}

bool te_expect_map(te_vctx *v, const ty_node *n, const char *what) {
  if (n->kind == TY_MAP) return true;
  te_verr(v, n, "%s must be a mapping, not %s", what, te_kind_name(n));
  return false;
}

bool te_expect_seq(te_vctx *v, const ty_node *n, const char *what) {
  if (n->kind == TY_SEQ) return true;
  te_verr(v, n, "%s must be a list, not %s", what, te_kind_name(n));
  return false;
}

/* Unknown keys are errors so a typo ("keyword:") never silently disables a rule. */
void te_check_keys(te_vctx *v, const ty_node *map, const char *const *allowed, const char *what) {
  for (size_t i = 0; i < map->n; i++) {
    const ty_node *k = map->items[2 * i];
    bool known = false;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, k->str) == 0) known = true;
    if (known) continue;
    char list[400] = "";
    size_t used = 0;
    for (const char *const *a = allowed; *a && used < sizeof list - 1; a++)
      used +=
          (size_t)snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
    te_verr(v, k, "unknown key '%.80s' in %s (expected one of: %s)", k->str, what, list);
  }
}

bool te_is_null(const ty_node *n) {
  return n->kind == TY_SCALAR && n->plain &&
         (n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
          strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0);
}

const char *te_get_str(te_vctx *v, const ty_node *n, const char *what) {
  if (n->kind != TY_SCALAR || te_is_null(n)) {
    te_verr(v, n, "%s must be a string, not %s", what, te_is_null(n) ? "null" : te_kind_name(n));
    return NULL;
  }
  return n->str;
}

const char *te_get_nonempty_str(te_vctx *v, const ty_node *n, const char *what) {
  const char *s = te_get_str(v, n, what);
  if (s && !*s) {
    te_verr(v, n, "%s must not be empty", what);
    return NULL;
  }
  return s;
}

static bool parse_number(const ty_node *n, double *out) {
  if (n->kind != TY_SCALAR || !n->plain || n->len == 0) return false;
  errno = 0;
  char *end = NULL;
  double x = strtod(n->str, &end);
  if (errno || end == n->str || *end || !isfinite(x)) return false;
  /* strtod accepts hex and "inf"/"nan"; YAML numbers start with a digit, sign or dot. */
  char c = n->str[0];
  if (!(isdigit((unsigned char)c) || c == '-' || c == '+' || c == '.')) return false;
  *out = x;
  return true;
}

bool te_get_num(te_vctx *v, const ty_node *n, const char *what, double lo, double hi, double *out) {
  double x;
  if (!parse_number(n, &x)) {
    te_verr(v, n, "%s must be a number, not %s%.40s%s", what, n->kind == TY_SCALAR ? "'" : "",
            n->kind == TY_SCALAR ? n->str : te_kind_name(n), n->kind == TY_SCALAR ? "'" : "");
    return false;
  }
  if (x < lo || x > hi) {
    te_verr(v, n, "%s must be between %g and %g, not %g", what, lo, hi, x);
    return false;
  }
  *out = x;
  return true;
}

bool te_get_int(te_vctx *v, const ty_node *n, const char *what, long lo, long hi, long *out) {
  double x;
  if (!te_get_num(v, n, what, (double)lo, (double)hi, &x)) return false;
  if (x != floor(x)) {
    te_verr(v, n, "%s must be a whole number, not %g", what, x);
    return false;
  }
  *out = (long)x;
  return true;
}

bool te_get_bool(te_vctx *v, const ty_node *n, const char *what, bool *out) {
  if (n->kind == TY_SCALAR && n->plain) {
    if (!strcmp(n->str, "true") || !strcmp(n->str, "True") || !strcmp(n->str, "TRUE")) {
      *out = true;
      return true;
    }
    if (!strcmp(n->str, "false") || !strcmp(n->str, "False") || !strcmp(n->str, "FALSE")) {
      *out = false;
      return true;
    }
  }
  te_verr(v, n, "%s must be true or false", what);
  return false;
}

/* A list of non-empty strings; NULL with *n_out == 0 for an empty list or an error. */
const char **te_get_str_list(te_vctx *v, const ty_node *n, const char *what, size_t *n_out) {
  *n_out = 0;
  if (!te_expect_seq(v, n, what)) return NULL;
  if (n->n == 0) return NULL;
  const char **items = te_arena_alloc(v->a, n->n * sizeof *items);
  if (!items) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n->n; i++) {
    const ty_node *it = n->items[i];
    const char *s = te_get_nonempty_str(v, it, what);
    if (!s) continue;
    if (it->len > TE_MAX_PATTERN_LEN) {
      te_verr(v, it, "%s entry is %zu bytes long (limit TE_MAX_PATTERN_LEN %d)", what, it->len,
              TE_MAX_PATTERN_LEN);
      continue;
    }
    items[k++] = s;
  }
  *n_out = k;
  return items;
}

/* ---------------------------------------------------------------- matchers */

static te_matcher *parse_matcher(te_vctx *v, const ty_node *n, const char *what);

bool te_parse_mref(te_vctx *v, const ty_node *n, const char *what, te_mref *out) {
  memset(out, 0, sizeof *out);
  out->origin = te_origin_of(v, n);
  if (n->kind == TY_SCALAR && !te_is_null(n)) {
    if (n->len == 0) {
      te_verr(v, n, "%s names no matcher (empty name)", what);
      return false;
    }
    out->name = n->str;
    return true;
  }
  if (n->kind == TY_MAP) {
    out->inline_m = parse_matcher(v, n, what);
    return out->inline_m != NULL;
  }
  te_verr(v, n, "%s must be a matcher mapping or the name of a named matcher, not %s", what,
          te_is_null(n) ? "null" : te_kind_name(n));
  return false;
}

/* Column of byte `offset` of a regex inside its YAML scalar, when that can be known:
 * plain and single-line quoted scalars map bytes to columns directly (a doubled quote in
 * a single-quoted scalar is one byte of the value but two columns). */
static unsigned regex_error_col(const ty_node *n, size_t offset) {
  if (n->line != n->end_line && !n->plain) return n->col;
  if (n->plain) return n->col + (unsigned)offset;
  if (n->single_quoted) {
    unsigned extra = 0;
    for (size_t i = 0; i < offset && i < n->len; i++)
      if (n->str[i] == '\'') extra++;
    return n->col + 1 + (unsigned)offset + extra;
  }
  return n->col + 1 + (unsigned)offset;
}

static pcre2_code *compile_regex(te_vctx *v, const ty_node *n, const char *src, uint32_t flags,
                                 const char *what) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code *re =
      pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED, flags, &code, &offset, NULL);
  if (re) return re;
  PCRE2_UCHAR msg[256];
  if (pcre2_get_error_message(code, msg, sizeof msg) < 0) snprintf((char *)msg, sizeof msg, "?");
  v->errors++;
  te_diags_add(v->d, TE_SEV_ERROR, v->file, n->line, regex_error_col(n, offset),
               "%s: bad regex '%.200s': %s at offset %zu", what, src, (const char *)msg,
               (size_t)offset);
  return NULL;
}

static char *lowered(te_vctx *v, const char *s, size_t len, bool keep_case) {
  char *out = te_arena_alloc(v->a, len + 1);
  if (!out) return NULL;
  if (keep_case)
    memcpy(out, s, len);
  else
    te_ascii_lower(out, s, len);
  return out;
}

static char *compacted(te_vctx *v, const char *s, size_t len, size_t *out_len) {
  char *out = te_arena_alloc(v->a, len + 1);
  size_t k = 0;
  if (!out) return NULL;
  for (size_t i = 0; i < len; i++)
    if (isalnum((unsigned char)s[i])) out[k++] = (char)te_ascii_lower_byte((unsigned char)s[i]);
  *out_len = k;
  return out;
}

static void literal_list(te_vctx *v, const ty_node *n, const char *what, bool keep_case,
                         size_t *count, const char ***items, size_t **lens) {
  const char **src = te_get_str_list(v, n, what, count);
  if (!*count) return;
  *items = te_arena_alloc(v->a, *count * sizeof **items);
  *lens = te_arena_alloc(v->a, *count * sizeof **lens);
  if (!*items || !*lens) {
    *count = 0;
    return;
  }
  for (size_t i = 0; i < *count; i++) {
    (*lens)[i] = strlen(src[i]);
    (*items)[i] = lowered(v, src[i], (*lens)[i], keep_case);
  }
}

/* `tokens:` entries are stored as their lower-case alphanumerics (tokens.h); an entry
 * with none could never hit. */
static void token_list(te_vctx *v, const ty_node *n, te_matcher *m) {
  size_t count = 0;
  const char **src = te_get_str_list(v, n, "tokens", &count);
  if (!count) return;
  m->tokens = te_arena_alloc(v->a, count * sizeof *m->tokens);
  m->token_lens = te_arena_alloc(v->a, count * sizeof *m->token_lens);
  if (!m->tokens || !m->token_lens) return;
  for (size_t i = 0; i < count; i++) {
    size_t len = 0;
    const char *c = compacted(v, src[i], strlen(src[i]), &len);
    if (c && !len) {
      te_verr(v, n->items[i], "tokens entry '%.80s' has no letter or digit", src[i]);
      continue;
    }
    if (!c) continue;
    m->tokens[m->n_tokens] = c;
    m->token_lens[m->n_tokens++] = len;
  }
}

static void parse_examples(te_vctx *v, te_matcher *m, const ty_node *n) {
  static const char *const keys[] = {"match", "no_match", NULL};
  if (!te_expect_map(v, n, "examples")) return;
  te_check_keys(v, n, keys, "examples");
  const ty_node *lists[2] = {ty_get(n, "match"), ty_get(n, "no_match")};
  size_t total = 0;
  for (int k = 0; k < 2; k++) {
    if (lists[k] && !te_expect_seq(v, lists[k], k ? "examples.no_match" : "examples.match"))
      lists[k] = NULL;
    if (lists[k]) total += lists[k]->n;
  }
  if (!total) return;
  m->examples = te_arena_alloc(v->a, total * sizeof *m->examples);
  if (!m->examples) return;
  for (int k = 0; k < 2; k++) {
    if (!lists[k]) continue;
    for (size_t i = 0; i < lists[k]->n; i++) {
      const ty_node *it = lists[k]->items[i];
      const char *s = te_get_str(v, it, "an example");
      if (!s) continue;
      te_example *ex = &m->examples[m->n_examples++];
      ex->text = s;
      ex->should_match = k == 0;
      ex->origin = te_origin_of(v, it);
    }
  }
  v->examples += m->n_examples;
}

static te_matcher *parse_matcher(te_vctx *v, const ty_node *n, const char *what) {
  static const char *const keys[] = {"keywords",       "words",   "tokens",  "prefixes", "regex",
                                     "case_sensitive", "compact", "exclude", "examples", NULL};
  if (!te_expect_map(v, n, what)) return NULL;
  size_t errors_before = v->errors;
  char ctx[160];
  snprintf(ctx, sizeof ctx, "matcher (%s)", what);
  te_check_keys(v, n, keys, ctx);
  te_matcher *m = te_arena_alloc(v->a, sizeof *m);
  if (m) m->st = te_arena_alloc(v->a, sizeof *m->st);
  if (!m || !m->st || !te_registry_add_matcher(v->reg, m)) return NULL;
  m->origin = te_origin_of(v, n);
  const ty_node *x;
  if ((x = ty_get(n, "case_sensitive"))) te_get_bool(v, x, "case_sensitive", &m->case_sensitive);
  if ((x = ty_get(n, "compact"))) te_get_bool(v, x, "compact", &m->compact);
  if ((x = ty_get(n, "keywords")))
    literal_list(v, x, "keywords", m->case_sensitive, &m->n_keywords, &m->keywords,
                 &m->keyword_lens);
  if ((x = ty_get(n, "words")))
    literal_list(v, x, "words", m->case_sensitive, &m->n_words, &m->words, &m->word_lens);
  if ((x = ty_get(n, "tokens"))) token_list(v, x, m);
  if ((x = ty_get(n, "prefixes")))
    literal_list(v, x, "prefixes", m->case_sensitive, &m->n_prefixes, &m->prefixes,
                 &m->prefix_lens);
  if (m->compact && m->n_keywords) {
    m->compact_keywords = te_arena_alloc(v->a, m->n_keywords * sizeof *m->compact_keywords);
    m->compact_lens = te_arena_alloc(v->a, m->n_keywords * sizeof *m->compact_lens);
    if (!m->compact_keywords || !m->compact_lens) return NULL;
    for (size_t i = 0; i < m->n_keywords; i++)
      m->compact_keywords[i] =
          compacted(v, m->keywords[i], m->keyword_lens[i], &m->compact_lens[i]);
  }
  if ((x = ty_get(n, "regex"))) {
    /* One pattern may be written as a plain string; several need a list. */
    size_t count = x->kind == TY_SEQ ? x->n : 1;
    const ty_node *const *nodes = x->kind == TY_SEQ ? (const ty_node *const *)x->items : &x;
    m->regex = te_arena_alloc(v->a, count * sizeof *m->regex);
    m->regex_src = te_arena_alloc(v->a, count * sizeof *m->regex_src);
    if (!m->regex || !m->regex_src) return NULL;
    for (size_t i = 0; i < count; i++) {
      const char *src = te_get_nonempty_str(v, nodes[i], "regex");
      if (!src) continue;
      if (nodes[i]->len > TE_MAX_PATTERN_LEN) {
        te_verr(v, nodes[i], "regex is %zu bytes long (limit TE_MAX_PATTERN_LEN %d)", nodes[i]->len,
                TE_MAX_PATTERN_LEN);
        continue;
      }
      pcre2_code *re =
          compile_regex(v, nodes[i], src, m->case_sensitive ? 0u : PCRE2_CASELESS, "regex");
      if (!re) continue;
      m->regex_src[m->n_regex] = src;
      m->regex[m->n_regex++] = re;
    }
  }
  if ((x = ty_get(n, "exclude"))) {
    m->has_exclude = te_parse_mref(v, x, "exclude", &m->exclude);
  }
  if ((x = ty_get(n, "examples"))) parse_examples(v, m, x);
  /* A matcher with no pattern could never hit: almost certainly a typo or a lost list. */
  if (v->errors == errors_before && !m->n_keywords && !m->n_words && !m->n_tokens &&
      !m->n_prefixes && !m->n_regex)
    te_verr(v, n, "%s needs at least one of keywords, words, tokens, prefixes or regex", ctx);
  return v->errors == errors_before ? m : NULL;
}

/* ---------------------------------------------------------------- lists */

/* Fills the common id/before/after fields; false when the entry is unusable. */
void *te_entry_new(te_vctx *v, const ty_node *item, const char *what, const char *const *keys,
                   size_t size, size_t hdr_offset) {
  te_check_keys(v, item, keys, what);
  char *e = te_arena_alloc(v->a, size);
  if (!e || !te_parse_header(v, item, what, (te_entry *)(e + hdr_offset))) return NULL;
  return e;
}

bool te_parse_header(te_vctx *v, const ty_node *item, const char *what, te_entry *e) {
  e->origin = te_origin_of(v, item);
  const ty_node *id = ty_get(item, "id");
  if (!id) {
    te_verr(v, item, "%s needs an 'id'", what);
    return false;
  }
  e->id = te_get_nonempty_str(v, id, "id");
  const ty_node *before = ty_get(item, "before"), *after = ty_get(item, "after");
  if (before && after)
    te_verr(v, after, "%s '%s' gives both 'before' and 'after'", what, e->id ? e->id : "?");
  if (before) {
    e->before = te_get_nonempty_str(v, before, "before");
    e->place_origin = te_origin_of(v, before);
  } else if (after) {
    e->after = te_get_nonempty_str(v, after, "after");
    e->place_origin = te_origin_of(v, after);
  }
  return e->id != NULL;
}

const ty_node *te_require(te_vctx *v, const ty_node *item, const char *key, const char *what,
                          const te_entry *e) {
  const ty_node *x = ty_get(item, key);
  if (!x) te_verr(v, item, "%s '%s' needs '%s'", what, e->id ? e->id : "?", key);
  return x;
}

void te_parse_list(te_vctx *v, const ty_node *n, const char *what, te_list *out,
                   te_item_parser parse, void *ctx) {
  if (!n) return;
  if (!te_expect_seq(v, n, what)) return;
  for (size_t i = 0; i < n->n; i++) {
    const ty_node *item = n->items[i];
    if (!te_expect_map(v, item, what)) continue;
    size_t errors_before = v->errors;
    te_entry *e = parse(v, item, what, ctx);
    if (!e || v->errors != errors_before) continue;
    te_entry *dup = te_list_find(out, e->id);
    if (dup) {
      te_verr(v, ty_get(item, "id"), "duplicate id '%s' in %s (first at line %u)", e->id, what,
              dup->origin.line);
      continue;
    }
    te_list_push(v->a, out, e);
  }
}

/* `from: {classifier: kernel, categories: [gemm, attention]}` of a derived rule. */
static void parse_from(te_vctx *v, const ty_node *n, class_rule_entry *e) {
  static const char *const keys[] = {"classifier", "categories", NULL};
  if (!te_expect_map(v, n, "from")) return;
  te_check_keys(v, n, keys, "from");
  const ty_node *c = ty_get(n, "classifier"), *l = ty_get(n, "categories");
  if (!c) te_verr(v, n, "from needs 'classifier'");
  if (!l) te_verr(v, n, "from needs 'categories'");
  if (!c || !l) return;
  e->from_classifier = te_get_nonempty_str(v, c, "from.classifier");
  e->from_origin = te_origin_of(v, c);
  e->from_categories = te_get_str_list(v, l, "from.categories", &e->n_from);
  if (!e->n_from) {
    te_verr(v, l, "from.categories must name at least one category");
    return;
  }
  e->from_origins = te_arena_alloc(v->a, l->n * sizeof *e->from_origins);
  if (!e->from_origins) return;
  for (size_t i = 0; i < e->n_from && i < l->n; i++)
    e->from_origins[i] = te_origin_of(v, l->items[i]);
}

static te_entry *parse_class_rule(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "category", "match", "unless", "from", NULL};
  (void)ctx;
  class_rule_entry *e = TE_ENTRY_NEW(v, item, what, keys, class_rule_entry);
  if (!e) return NULL;
  const ty_node *x;
  if ((x = te_require(v, item, "category", what, &e->hdr))) {
    e->category = te_get_nonempty_str(v, x, "category");
    e->category_origin = te_origin_of(v, x);
  }
  if ((x = ty_get(item, "from"))) parse_from(v, x, e);
  /* A derived rule may decide by the other classifier alone; any other rule needs a
   * matcher. */
  if ((x = e->from_classifier ? ty_get(item, "match")
                              : te_require(v, item, "match", what, &e->hdr)))
    e->has_match = te_parse_mref(v, x, "match", &e->match);
  if ((x = ty_get(item, "unless"))) e->has_unless = te_parse_mref(v, x, "unless", &e->unless);
  return &e->hdr;
}

static te_entry *parse_category(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "meaning", "parent", NULL};
  (void)ctx;
  category_entry *e = TE_ENTRY_NEW(v, item, what, keys, category_entry);
  if (!e) return NULL;
  const ty_node *x;
  if ((x = te_require(v, item, "meaning", what, &e->hdr)))
    e->meaning = te_get_nonempty_str(v, x, "meaning");
  if ((x = ty_get(item, "parent"))) {
    e->parent = te_get_nonempty_str(v, x, "parent");
    e->parent_origin = te_origin_of(v, x);
  }
  return &e->hdr;
}

static te_entry *parse_classifier(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "default", "categories", "rules", NULL};
  (void)ctx;
  classifier_entry *e = TE_ENTRY_NEW(v, item, what, keys, classifier_entry);
  if (!e) return NULL;
  const ty_node *x;
  if ((x = ty_get(item, "default"))) {
    e->default_category = te_get_nonempty_str(v, x, "default");
    e->default_origin = te_origin_of(v, x);
  }
  char sub_what[160];
  snprintf(sub_what, sizeof sub_what, "classifier '%s' category", e->hdr.id);
  te_parse_list(v, ty_get(item, "categories"), sub_what, &e->categories, parse_category, NULL);
  snprintf(sub_what, sizeof sub_what, "classifier '%s' rule", e->hdr.id);
  te_parse_list(v, ty_get(item, "rules"), sub_what, &e->rules, parse_class_rule, NULL);
  return &e->hdr;
}

static te_entry *parse_ladder_rule(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const rule_keys[] = {HEADER_KEYS, "raw",      "normalized",
                                          "score",     "penalize", NULL};
  static const char *const adj_keys[] = {HEADER_KEYS, "raw", "normalized", "score", NULL};
  bool adjustment = ctx != NULL;
  te_check_keys(v, item, adjustment ? adj_keys : rule_keys, what);
  ladder_rule_entry *e = te_arena_alloc(v->a, sizeof *e);
  if (!e || !te_parse_header(v, item, what, &e->hdr)) return NULL;
  const ty_node *x;
  long score = 0;
  if ((x = te_require(v, item, "score", what, &e->hdr)) &&
      te_get_int(v, x, "score", -MAX_SCORE, MAX_SCORE, &score))
    e->score = (int)score;
  if ((x = ty_get(item, "raw"))) e->has_raw = te_parse_mref(v, x, "raw", &e->raw);
  if ((x = ty_get(item, "normalized")))
    e->has_normalized = te_parse_mref(v, x, "normalized", &e->normalized);
  if ((x = ty_get(item, "penalize"))) te_get_bool(v, x, "penalize", &e->penalize);
  return &e->hdr;
}

static te_entry *parse_ladder(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "default",     "penalty",
                                     "rules",     "adjustments", NULL};
  static const char *const penalty_keys[] = {"match", "amount", NULL};
  (void)ctx;
  ladder_entry *e = TE_ENTRY_NEW(v, item, what, keys, ladder_entry);
  if (!e) return NULL;
  const ty_node *x;
  long num = 0;
  if ((x = ty_get(item, "default")) && te_get_int(v, x, "default", -MAX_SCORE, MAX_SCORE, &num)) {
    e->has_default = true;
    e->default_score = (int)num;
  }
  if ((x = ty_get(item, "penalty")) && te_expect_map(v, x, "penalty")) {
    te_check_keys(v, x, penalty_keys, "penalty");
    const ty_node *pm = ty_get(x, "match"), *pa = ty_get(x, "amount");
    if (!pm) te_verr(v, x, "penalty needs 'match'");
    if (!pa) te_verr(v, x, "penalty needs 'amount'");
    if (pm && pa && te_parse_mref(v, pm, "penalty.match", &e->penalty_match) &&
        te_get_int(v, pa, "penalty.amount", -MAX_SCORE, MAX_SCORE, &num)) {
      e->has_penalty = true;
      e->penalty = (int)num;
    }
  }
  char sub[160];
  snprintf(sub, sizeof sub, "ladder '%s' rule", e->hdr.id);
  te_parse_list(v, ty_get(item, "rules"), sub, &e->rules, parse_ladder_rule, NULL);
  snprintf(sub, sizeof sub, "ladder '%s' adjustment", e->hdr.id);
  te_parse_list(v, ty_get(item, "adjustments"), sub, &e->adjustments, parse_ladder_rule, e);
  return &e->hdr;
}

static te_entry *parse_rewrite(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "find", "replace", NULL};
  (void)ctx;
  rewrite_entry *e = TE_ENTRY_NEW(v, item, what, keys, rewrite_entry);
  if (!e) return NULL;
  const ty_node *x;
  if ((x = te_require(v, item, "find", what, &e->hdr))) e->find = te_get_nonempty_str(v, x, "find");
  if ((x = ty_get(item, "replace"))) e->replace = te_get_str(v, x, "replace");
  if (e->find) e->find_len = strlen(e->find);
  if (!e->replace) e->replace = e->find;
  return &e->hdr;
}

static te_entry *parse_stage(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "label", "order", NULL};
  (void)ctx;
  stage_entry *e = TE_ENTRY_NEW(v, item, what, keys, stage_entry);
  if (!e) return NULL;
  const ty_node *x;
  long order = 0;
  e->label = e->hdr.id;
  if ((x = ty_get(item, "label"))) e->label = te_get_nonempty_str(v, x, "label");
  if ((x = ty_get(item, "order")) && te_get_int(v, x, "order", -MAX_SCORE, MAX_SCORE, &order))
    e->order = (int)order;
  return &e->hdr;
}

static te_entry *parse_stage_rule(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "stage", "match", NULL};
  (void)ctx;
  stage_rule_entry *e = TE_ENTRY_NEW(v, item, what, keys, stage_rule_entry);
  if (!e) return NULL;
  const ty_node *x;
  if ((x = te_require(v, item, "stage", what, &e->hdr))) {
    e->stage = te_get_nonempty_str(v, x, "stage");
    e->stage_origin = te_origin_of(v, x);
  }
  if ((x = te_require(v, item, "match", what, &e->hdr))) te_parse_mref(v, x, "match", &e->match);
  return &e->hdr;
}

static te_entry *parse_rank(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "regex", NULL};
  (void)ctx;
  rank_entry *e = TE_ENTRY_NEW(v, item, what, keys, rank_entry);
  if (!e) return NULL;
  const ty_node *x = te_require(v, item, "regex", what, &e->hdr);
  if (!x) return &e->hdr;
  e->regex_src = te_get_nonempty_str(v, x, "regex");
  if (!e->regex_src) return &e->hdr;
  e->code = compile_regex(v, x, e->regex_src, PCRE2_CASELESS, "rank pattern");
  if (!e->code) return &e->hdr;
  if (!te_registry_add_code(v->reg, e->code)) {
    pcre2_code_free(e->code);
    return NULL;
  }
  uint32_t captures = 0;
  pcre2_pattern_info(e->code, PCRE2_INFO_CAPTURECOUNT, &captures);
  if (captures < 1)
    te_verr(v, x, "rank pattern '%s' needs a capture group for the rank", e->hdr.id);
  return &e->hdr;
}

static te_entry *parse_framework(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "label", "repository", "aliases", NULL};
  (void)ctx;
  framework_entry *e = TE_ENTRY_NEW(v, item, what, keys, framework_entry);
  if (!e) return NULL;
  const ty_node *x;
  e->label = e->hdr.id;
  if ((x = ty_get(item, "label"))) e->label = te_get_nonempty_str(v, x, "label");
  if ((x = ty_get(item, "repository")) &&
      (e->repository = te_get_nonempty_str(v, x, "repository"))) {
    const char *slash = strchr(e->repository, '/');
    if (!slash || slash == e->repository || !slash[1] || strchr(slash + 1, '/'))
      te_verr(v, x, "repository must be \"owner/name\", not '%.80s'", e->repository);
  }
  if ((x = ty_get(item, "aliases"))) e->aliases = te_get_str_list(v, x, "aliases", &e->n_aliases);
  return &e->hdr;
}

static void framework_ref(te_vctx *v, const ty_node *item, const char *what, const te_entry *hdr,
                          const char **out, te_origin *where) {
  const ty_node *x = te_require(v, item, "framework", what, hdr);
  if (!x) return;
  *out = te_get_nonempty_str(v, x, "framework");
  *where = te_origin_of(v, x);
}

static te_entry *parse_text_hint(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "framework", "match", NULL};
  (void)ctx;
  text_hint_entry *e = TE_ENTRY_NEW(v, item, what, keys, text_hint_entry);
  if (!e) return NULL;
  framework_ref(v, item, what, &e->hdr, &e->framework, &e->framework_origin);
  const ty_node *x;
  if ((x = te_require(v, item, "match", what, &e->hdr))) te_parse_mref(v, x, "match", &e->match);
  return &e->hdr;
}

static te_entry *parse_keys_hint(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "framework", "keys", NULL};
  (void)ctx;
  keys_hint_entry *e = TE_ENTRY_NEW(v, item, what, keys, keys_hint_entry);
  if (!e) return NULL;
  framework_ref(v, item, what, &e->hdr, &e->framework, &e->framework_origin);
  const ty_node *x;
  if ((x = te_require(v, item, "keys", what, &e->hdr)))
    e->keys = te_get_str_list(v, x, "keys", &e->n_keys);
  return &e->hdr;
}

static te_entry *parse_probe(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS,     "framework", "path", "body_match",
                                     "json_list_key", "timeout_s", NULL};
  (void)ctx;
  probe_entry *e = TE_ENTRY_NEW(v, item, what, keys, probe_entry);
  if (!e) return NULL;
  framework_ref(v, item, what, &e->hdr, &e->framework, &e->framework_origin);
  const ty_node *x;
  if ((x = te_require(v, item, "path", what, &e->hdr))) {
    e->path = te_get_nonempty_str(v, x, "path");
    if (e->path && e->path[0] != '/') te_verr(v, x, "url probe path must start with '/'");
  }
  if ((x = ty_get(item, "body_match")))
    e->has_body_match = te_parse_mref(v, x, "body_match", &e->body_match);
  if ((x = ty_get(item, "json_list_key")))
    e->json_list_key = te_get_nonempty_str(v, x, "json_list_key");
  e->timeout_s = 5.0;
  if ((x = ty_get(item, "timeout_s"))) {
    double t;
    if (te_get_num(v, x, "timeout_s", 0.0, MAX_TIMEOUT_S, &t)) {
      if (t <= 0) te_verr(v, x, "timeout_s must be greater than 0");
      e->timeout_s = t;
    }
  }
  return &e->hdr;
}

static te_entry *parse_alias(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "trigger", "tokens", NULL};
  (void)ctx;
  alias_entry *e = TE_ENTRY_NEW(v, item, what, keys, alias_entry);
  if (!e) return NULL;
  const ty_node *x;
  if ((x = te_require(v, item, "trigger", what, &e->hdr)))
    te_parse_mref(v, x, "trigger", &e->trigger);
  if ((x = te_require(v, item, "tokens", what, &e->hdr)))
    e->tokens = te_get_str_list(v, x, "tokens", &e->n_tokens);
  return &e->hdr;
}

static double share_pct(te_vctx *v, const ty_node *item, const char *key, double dflt) {
  const ty_node *x = ty_get(item, key);
  double val = dflt;
  if (x) te_get_num(v, x, key, 0.0, 100.0, &val);
  return val;
}

/* `enabled: false` is how a later pack (the compat pack) turns a pattern off: it replaces
 * the entry by id and, carrying no evidence, can never make a row. Any other pattern needs
 * evidence, or it would be a silent no-op. */
static void check_enabled(te_vctx *v, const ty_node *item, const fusion_entry *e) {
  const ty_node *x = ty_get(item, "enabled");
  bool enabled = true;
  if (x && !te_get_bool(v, x, "enabled", &enabled)) return;
  bool evidence = ty_get(item, "active") || ty_get(item, "split_groups") || ty_get(item, "merge");
  if (!enabled && evidence)
    te_verr(v, x, "a pattern with enabled: false takes no active or split_groups (nor merge)");
  else if (enabled && !evidence && !e->has_active && !e->n_split && !e->pat.merge)
    te_verr(v, item, "a fusion pattern needs active or split_groups, or merge (or enabled: false)");
  if (ty_get(item, "merge") && (ty_get(item, "active") || ty_get(item, "split_groups")))
    te_verr(v, ty_get(item, "merge"), "a merge pattern takes no active or split_groups");
}

/* The gates of a fusion pattern: model, TP, component evidence, dtype, minimum
 * architecture, platform (docs/rules.md, "Gates and component evidence"). */
static void parse_fusion_gates(te_vctx *v, const ty_node *item, fusion_entry *e) {
  static const char *const tp_keys[] = {"min", "required", NULL};
  static const char *const arch_keys[] = {"cuda", "rocm", NULL};
  te_fusion_pattern *p = &e->pat;
  const ty_node *x;
  if ((x = ty_get(item, "model_include")))
    p->model_include = te_get_str_list(v, x, "model_include", &p->n_model_include);
  if ((x = ty_get(item, "model_exclude")))
    p->model_exclude = te_get_str_list(v, x, "model_exclude", &p->n_model_exclude);
  if ((x = ty_get(item, "tp")) && te_expect_map(v, x, "tp")) {
    te_check_keys(v, x, tp_keys, "tp");
    const ty_node *y;
    if ((y = ty_get(x, "min"))) te_get_int(v, y, "tp.min", 0, 1000000, &p->min_tp_size);
    if ((y = ty_get(x, "required"))) te_get_bool(v, y, "tp.required", &p->require_tp);
  }
  if ((x = ty_get(item, "evidence"))) {
    p->evidence = te_get_str_list(v, x, "evidence", &p->n_evidence);
    if (p->evidence && p->n_evidence == x->n) {
      e->evidence_origin = te_arena_alloc(v->a, x->n * sizeof *e->evidence_origin);
      for (size_t i = 0; e->evidence_origin && i < x->n; i++)
        e->evidence_origin[i] = te_origin_of(v, x->items[i]);
    }
    if (p->evidence && p->n_evidence != e->n_split)
      te_verr(v, x, "evidence lists %zu categories for %zu split groups (one per group)",
              p->n_evidence, e->n_split);
  }
  if ((x = ty_get(item, "dtype"))) {
    p->dtype = te_get_str_list(v, x, "dtype", &p->n_dtype);
    if (p->dtype && p->n_dtype == x->n) {
      e->dtype_origin = te_arena_alloc(v->a, x->n * sizeof *e->dtype_origin);
      for (size_t i = 0; e->dtype_origin && i < x->n; i++)
        e->dtype_origin[i] = te_origin_of(v, x->items[i]);
    }
  }
  if ((x = ty_get(item, "min_arch")) && te_expect_map(v, x, "min_arch")) {
    te_check_keys(v, x, arch_keys, "min_arch");
    const ty_node *y;
    if ((y = ty_get(x, "cuda"))) te_get_num(v, y, "min_arch.cuda", 0.0, 100.0, &p->min_arch_cuda);
    if ((y = ty_get(x, "rocm"))) te_get_num(v, y, "min_arch.rocm", 0.0, 100.0, &p->min_arch_rocm);
  }
  if ((x = ty_get(item, "platform"))) {
    p->platform = te_get_str(v, x, "platform");
    if (p->platform && strcmp(p->platform, "cuda") != 0 && strcmp(p->platform, "rocm") != 0)
      te_verr(v, x, "platform must be cuda or rocm, not '%.60s'", p->platform);
  }
}

/* modes: [eager, graph, compile] -> TE_MODE_* bits. */
static void parse_fusion_modes(te_vctx *v, const ty_node *x, te_fusion_pattern *p) {
  size_t n = 0;
  const char **modes = te_get_str_list(v, x, "modes", &n);
  for (size_t i = 0; modes && i < n; i++) {
    if (!strcmp(modes[i], "eager"))
      p->modes |= TE_MODE_EAGER;
    else if (!strcmp(modes[i], "graph"))
      p->modes |= TE_MODE_GRAPH;
    else if (!strcmp(modes[i], "compile"))
      p->modes |= TE_MODE_COMPILE;
    else
      te_verr(v, x->items[i], "modes entries are eager, graph or compile, not '%.60s'", modes[i]);
  }
}

/* max_message_mb: {TP size: MiB} -> per-TP caps in bytes. */
static void parse_message_caps(te_vctx *v, const ty_node *x, te_fusion_pattern *p) {
  if (!te_expect_map(v, x, "max_message_mb") || !x->n) return;
  te_size_cap *caps = te_arena_alloc(v->a, x->n * sizeof *caps);
  if (!caps) return;
  size_t k = 0;
  for (size_t i = 0; i < x->n; i++) {
    long tp = 0;
    double mb = 0;
    if (!te_get_int(v, x->items[2 * i], "max_message_mb key (a TP size)", 1, 1000000, &tp) ||
        !te_get_num(v, x->items[2 * i + 1], "max_message_mb value", 0.0, 1e9, &mb))
      continue;
    caps[k++] = (te_size_cap){tp, mb * 1024.0 * 1024.0};
  }
  p->message_caps = caps;
  p->n_message_caps = k;
}

/* chain: false | {max_between: N, ordered: bool, breakers: [...], riders: matcher,
 * rider_role: text, roles: [text per split group]}. */
static void parse_fusion_chain(te_vctx *v, const ty_node *x, fusion_entry *e) {
  static const char *const keys[] = {"max_between", "ordered",     "breakers",
                                     "riders",      "rider_role",  "roles",
                                     "rider_feeds", "rider_lever", NULL};
  te_fusion_pattern *p = &e->pat;
  bool on = true;
  if (x->kind == TY_SCALAR) {
    if (te_get_bool(v, x, "chain", &on) && !on) p->chain = TE_CHAIN_OFF;
    if (on) te_verr(v, x, "chain is false or a mapping {max_between, ordered, breakers}");
    return;
  }
  if (!te_expect_map(v, x, "chain")) return;
  te_check_keys(v, x, keys, "chain");
  p->chain = TE_CHAIN_ON;
  p->chain_max_between = -1;
  p->chain_rider_feeds = -1;
  const ty_node *y;
  bool ordered = true;
  if ((y = ty_get(x, "max_between")))
    te_get_int(v, y, "chain.max_between", 0, TE_MAX_CHAIN_BETWEEN, &p->chain_max_between);
  if ((y = ty_get(x, "ordered")) && te_get_bool(v, y, "chain.ordered", &ordered))
    p->chain_unordered = !ordered;
  if ((y = ty_get(x, "breakers")) && te_expect_seq(v, y, "chain.breakers")) {
    p->has_chain_breakers = true;
    p->chain_breakers.items = te_get_str_list(v, y, "chain.breakers", &p->chain_breakers.n);
  }
  if ((y = ty_get(x, "riders"))) e->has_riders = te_parse_mref(v, y, "chain.riders", &e->riders);
  if ((y = ty_get(x, "rider_role"))) p->chain_rider_role = te_get_nonempty_str(v, y, "rider_role");
  if ((y = ty_get(x, "rider_feeds")) &&
      te_get_int(v, y, "chain.rider_feeds", 0, (long)(e->n_split ? e->n_split - 1 : 0),
                 &p->chain_rider_feeds) &&
      !e->n_split)
    te_verr(v, y, "chain.rider_feeds names a split group, and the pattern has none");
  if ((y = ty_get(x, "rider_lever")))
    p->chain_rider_lever = te_get_nonempty_str(v, y, "chain.rider_lever");
  if ((y = ty_get(x, "roles"))) {
    p->roles = te_get_str_list(v, y, "chain.roles", &p->n_roles);
    if (p->roles && p->n_roles != e->n_split)
      te_verr(v, y, "chain.roles names %zu pieces, the pattern has %zu split groups", p->n_roles,
              e->n_split);
  }
}

/* merge: {max_between: N, comparable: X, merged: matcher}: the sibling-GEMM family (docs/rules.md
 * "GEMM merges"). */
static void parse_fusion_merge(te_vctx *v, const ty_node *x, fusion_entry *e) {
  static const char *const keys[] = {"max_between", "comparable", "merged", "min_saving_pct", NULL};
  te_fusion_pattern *p = &e->pat;
  if (!te_expect_map(v, x, "merge")) return;
  te_check_keys(v, x, keys, "merge");
  p->merge = true;
  p->merge_max_between = 0;
  p->merge_comparable = 1.0;
  const ty_node *y;
  if ((y = ty_get(x, "comparable")))
    te_get_num(v, y, "merge.comparable", 1.0, 1000.0, &p->merge_comparable);
  if ((y = ty_get(x, "max_between")))
    te_get_int(v, y, "merge.max_between", 0, TE_MAX_CHAIN_BETWEEN, &p->merge_max_between);
  if ((y = ty_get(x, "merged"))) e->has_merged = te_parse_mref(v, y, "merge.merged", &e->merged);
  if ((y = ty_get(x, "min_saving_pct")))
    te_get_num(v, y, "merge.min_saving_pct", 0.0, 100.0, &p->merge_min_saving_pct);
}

/* workloads: [serving, inference, training, benchmark] -> te_workload_kind bits. */
static void parse_fusion_workloads(te_vctx *v, const ty_node *x, te_fusion_pattern *p) {
  static const struct {
    const char *id;
    unsigned bit;
  } kinds[] = {{"serving", TE_WORKLOAD_SERVING},
               {"inference", TE_WORKLOAD_INFERENCE},
               {"training", TE_WORKLOAD_TRAINING},
               {"benchmark", TE_WORKLOAD_BENCHMARK}};
  size_t n = 0;
  const char **ids = te_get_str_list(v, x, "workloads", &n);
  for (size_t i = 0; ids && i < n; i++) {
    size_t k = 0;
    while (k < sizeof kinds / sizeof *kinds && strcmp(ids[i], kinds[k].id) != 0) k++;
    if (k < sizeof kinds / sizeof *kinds)
      p->workloads |= kinds[k].bit;
    else
      te_verr(v, x->items[i],
              "workloads entries are serving, inference, training or benchmark, not '%.60s'",
              ids[i]);
  }
}

/* framework_paths: {framework id: [path, ...]}: candidate paths cited on that framework. */
static void parse_framework_paths(te_vctx *v, const ty_node *x, fusion_entry *e) {
  te_fusion_pattern *p = &e->pat;
  if (!te_expect_map(v, x, "framework_paths") || !x->n) return;
  size_t total = 0;
  for (size_t i = 0; i < x->n; i++)
    if (x->items[2 * i + 1]->kind == TY_SEQ) total += x->items[2 * i + 1]->n;
  te_framework_path *fp = te_arena_alloc(v->a, (total ? total : 1) * sizeof *fp);
  e->framework_path_origin = te_arena_alloc(v->a, (total ? total : 1) * sizeof(te_origin));
  if (!fp || !e->framework_path_origin) return;
  size_t k = 0;
  for (size_t i = 0; i < x->n; i++) {
    const ty_node *key = x->items[2 * i], *val = x->items[2 * i + 1];
    const char *fw = te_get_nonempty_str(v, key, "framework_paths key (a framework id)");
    size_t n = 0;
    const char **paths = te_expect_seq(v, val, "framework_paths value")
                             ? te_get_str_list(v, val, "framework_paths value", &n)
                             : NULL;
    for (size_t j = 0; fw && paths && j < n && k < total; j++) {
      e->framework_path_origin[k] = te_origin_of(v, key);
      fp[k++] = (te_framework_path){fw, paths[j]};
    }
  }
  p->framework_paths = fp;
  p->n_framework_paths = k;
}

/* platform_ports: {cuda|rocm: [what to port, ...]}: the platforms the candidate paths do
 * not serve, and what to port there instead. */
static void parse_platform_ports(te_vctx *v, const ty_node *x, te_fusion_pattern *p) {
  if (!te_expect_map(v, x, "platform_ports") || !x->n) return;
  size_t total = 0;
  for (size_t i = 0; i < x->n; i++)
    if (x->items[2 * i + 1]->kind == TY_SEQ) total += x->items[2 * i + 1]->n;
  te_platform_port *pp = te_arena_alloc(v->a, (total ? total : 1) * sizeof *pp);
  if (!pp) return;
  size_t k = 0;
  for (size_t i = 0; i < x->n; i++) {
    const ty_node *key = x->items[2 * i], *val = x->items[2 * i + 1];
    const char *pf = te_get_nonempty_str(v, key, "platform_ports key (a platform)");
    if (pf && strcmp(pf, "cuda") != 0 && strcmp(pf, "rocm") != 0) {
      te_verr(v, key, "platform_ports keys are cuda or rocm, not '%.60s'", pf);
      continue;
    }
    size_t n = 0;
    const char **texts = te_expect_seq(v, val, "platform_ports value")
                             ? te_get_str_list(v, val, "platform_ports value", &n)
                             : NULL;
    for (size_t j = 0; pf && texts && j < n && k < total; j++)
      pp[k++] = (te_platform_port){pf, texts[j]};
  }
  p->platform_ports = pp;
  p->n_platform_ports = k;
}

/* shape: {piece: N, last_dims: [..], max_last_dim: N, formats: [..]}: the shape gate on one
 * piece's op. */
static void parse_fusion_shape(te_vctx *v, const ty_node *x, fusion_entry *e) {
  static const char *const keys[] = {"piece", "last_dims", "max_last_dim", "formats", NULL};
  te_fusion_pattern *p = &e->pat;
  if (!te_expect_map(v, x, "shape")) return;
  te_check_keys(v, x, keys, "shape");
  const ty_node *y;
  long piece = 0;
  if ((y = ty_get(x, "piece"))) te_get_int(v, y, "shape.piece", 0, TE_MAX_CHAIN_PIECES - 1, &piece);
  if ((size_t)piece >= e->n_split)
    te_verr(v, y ? y : x, "shape.piece %ld names no split group (the pattern has %zu)", piece,
            e->n_split);
  p->shape_piece = piece;
  if ((y = ty_get(x, "last_dims")) && te_expect_seq(v, y, "shape.last_dims") && y->n) {
    long *d = te_arena_alloc(v->a, y->n * sizeof *d);
    for (size_t i = 0; d && i < y->n; i++)
      if (te_get_int(v, y->items[i], "shape.last_dims entry", 1, 1000000, &d[p->n_shape_last_dims]))
        p->n_shape_last_dims++;
    p->shape_last_dims = d;
  }
  if ((y = ty_get(x, "max_last_dim")))
    te_get_int(v, y, "shape.max_last_dim", 1, 1000000, &p->shape_max_last_dim);
  if ((y = ty_get(x, "formats")) && te_expect_seq(v, y, "shape.formats")) {
    p->shape_formats = te_get_str_list(v, y, "shape.formats", &p->n_shape_formats);
    if (p->shape_formats && p->n_shape_formats == y->n) {
      e->shape_format_origin = te_arena_alloc(v->a, y->n * sizeof *e->shape_format_origin);
      for (size_t i = 0; e->shape_format_origin && i < y->n; i++)
        e->shape_format_origin[i] = te_origin_of(v, y->items[i]);
    }
  }
}

/* The gates a pattern reads from the trace's execution context (issue 31). */
static void parse_context_gates(te_vctx *v, const ty_node *item, fusion_entry *e) {
  te_fusion_pattern *p = &e->pat;
  const ty_node *x;
  if ((x = ty_get(item, "modes"))) parse_fusion_modes(v, x, p);
  if ((x = ty_get(item, "max_tokens")))
    te_get_int(v, x, "max_tokens", 1, 1000000000, &p->max_tokens);
  if ((x = ty_get(item, "max_message_mb"))) parse_message_caps(v, x, p);
  if ((x = ty_get(item, "single_node"))) te_get_bool(v, x, "single_node", &p->single_node);
  if ((x = ty_get(item, "chain"))) parse_fusion_chain(v, x, e);
  if ((x = ty_get(item, "merge"))) parse_fusion_merge(v, x, e);
  if ((x = ty_get(item, "shape"))) parse_fusion_shape(v, x, e);
  if ((x = ty_get(item, "workloads"))) parse_fusion_workloads(v, x, &e->pat);
}

/* since: {version, change, switch}: the release that first has the fused path's switch,
 * and that switch. */
static void parse_since(te_vctx *v, const ty_node *x, te_fusion_pattern *p) {
  static const char *const keys[] = {"version", "change", "switch", NULL};
  if (!te_expect_map(v, x, "since")) return;
  te_check_keys(v, x, keys, "since");
  const ty_node *y = ty_get(x, "version");
  if (y)
    p->since_version = te_get_nonempty_str(v, y, "since.version");
  else
    te_verr(v, x, "since needs a version");
  if ((y = ty_get(x, "change"))) p->since_change = te_get_nonempty_str(v, y, "since.change");
  if ((y = ty_get(x, "switch"))) p->since_switch = te_get_nonempty_str(v, y, "since.switch");
}

static te_entry *parse_fusion(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS,       "name",
                                     "framework",       "origin",
                                     "candidate_paths", "active",
                                     "split_groups",    "model_include",
                                     "model_exclude",   "tp",
                                     "min_share_pct",   "likely_share_pct",
                                     "priority",        "subsumes",
                                     "rationale_hint",  "evidence",
                                     "platform",        "enabled",
                                     "dtype",           "min_arch",
                                     "modes",           "max_tokens",
                                     "max_message_mb",  "single_node",
                                     "chain",           "merge",
                                     "shape",           "workloads",
                                     "framework_paths", "platform_ports",
                                     "since",           NULL};
  (void)ctx;
  fusion_entry *e = TE_ENTRY_NEW(v, item, what, keys, fusion_entry);
  if (!e) return NULL;
  te_fusion_pattern *p = &e->pat;
  p->id = e->hdr.id;
  p->origin_pos = e->hdr.origin;
  p->shape_piece = -1;       /* no shape gate unless shape: names a piece */
  p->chain_rider_feeds = -1; /* riders feed no piece unless chain.rider_feeds says */
  const ty_node *x;
  if ((x = te_require(v, item, "name", what, &e->hdr))) p->name = te_get_nonempty_str(v, x, "name");
  if ((x = ty_get(item, "framework"))) {
    p->framework = te_get_nonempty_str(v, x, "framework");
    e->framework_origin = te_origin_of(v, x);
  }
  if ((x = ty_get(item, "origin"))) {
    const char *o = te_get_str(v, x, "origin");
    if (o && !strcmp(o, "mainline"))
      p->origin = TE_ORIGIN_MAINLINE;
    else if (o && !strcmp(o, "upstream"))
      p->origin = TE_ORIGIN_UPSTREAM;
    else if (o && !strcmp(o, "inflight"))
      p->origin = TE_ORIGIN_INFLIGHT;
    else if (o)
      te_verr(v, x, "origin must be mainline, upstream or inflight, not '%.60s'", o);
  }
  if ((x = ty_get(item, "candidate_paths")))
    p->candidate_paths = te_get_str_list(v, x, "candidate_paths", &p->n_candidate_paths);
  if ((x = ty_get(item, "framework_paths"))) parse_framework_paths(v, x, e);
  if ((x = ty_get(item, "platform_ports"))) parse_platform_ports(v, x, p);
  if ((x = ty_get(item, "active"))) e->has_active = te_parse_mref(v, x, "active", &e->active);
  if ((x = ty_get(item, "split_groups")) && te_expect_seq(v, x, "split_groups") && x->n) {
    e->split = te_arena_alloc(v->a, x->n * sizeof *e->split);
    if (!e->split) return NULL;
    for (size_t i = 0; i < x->n; i++)
      if (te_parse_mref(v, x->items[i], "split group", &e->split[e->n_split])) e->n_split++;
  }
  parse_fusion_gates(v, item, e);
  parse_context_gates(v, item, e);
  check_enabled(v, item, e);
  /* unstated: NAN, the packs' fuse.default_* once the settings are resolved (finalize) */
  p->min_share_pct = share_pct(v, item, "min_share_pct", NAN);
  p->likely_share_pct = share_pct(v, item, "likely_share_pct", NAN);
  long priority = 0;
  if ((x = ty_get(item, "priority")) &&
      te_get_int(v, x, "priority", -MAX_SCORE, MAX_SCORE, &priority))
    p->priority = (int)priority;
  if ((x = ty_get(item, "subsumes")) && te_expect_seq(v, x, "subsumes") && x->n) {
    e->subsumes = te_arena_alloc(v->a, x->n * sizeof *e->subsumes);
    e->subsumes_origin = te_arena_alloc(v->a, x->n * sizeof *e->subsumes_origin);
    if (!e->subsumes || !e->subsumes_origin) return NULL;
    for (size_t i = 0; i < x->n; i++) {
      const char *s = te_get_nonempty_str(v, x->items[i], "subsumes entry");
      if (!s) continue;
      e->subsumes_origin[e->n_subsumes] = te_origin_of(v, x->items[i]);
      e->subsumes[e->n_subsumes++] = s;
    }
  }
  if ((x = ty_get(item, "rationale_hint"))) p->rationale_hint = te_get_str(v, x, "rationale_hint");
  if ((x = ty_get(item, "since"))) parse_since(v, x, p);
  return &e->hdr;
}

static te_entry *parse_named_matcher(te_vctx *v, const ty_node *key, const ty_node *val) {
  matcher_entry *e = te_arena_alloc(v->a, sizeof *e);
  if (!e) return NULL;
  e->hdr.id = key->str;
  e->hdr.origin = te_origin_of(v, key);
  if (!key->len) {
    te_verr(v, key, "a named matcher needs a non-empty name");
    return NULL;
  }
  char what[160];
  snprintf(what, sizeof what, "named matcher '%s'", key->str);
  e->m = parse_matcher(v, val, what);
  if (!e->m) return NULL;
  e->m->name = key->str;
  return &e->hdr;
}

/* ---------------------------------------------------------------- display names */

static void parse_display_examples(te_vctx *v, const ty_node *n, display_entry *e) {
  static const char *const keys[] = {"name", "display", NULL};
  if (!te_expect_seq(v, n, "display rule examples") || !n->n) return;
  e->examples = te_arena_alloc(v->a, n->n * sizeof *e->examples);
  if (!e->examples) return;
  for (size_t i = 0; i < n->n; i++) {
    const ty_node *it = n->items[i], *name, *display;
    if (!te_expect_map(v, it, "a display rule example")) continue;
    te_check_keys(v, it, keys, "a display rule example");
    if (!(name = ty_get(it, "name")) || !(display = ty_get(it, "display"))) {
      te_verr(v, it, "a display rule example needs 'name' and 'display'");
      continue;
    }
    display_example *ex = &e->examples[e->n_examples];
    ex->name = te_get_nonempty_str(v, name, "example name");
    ex->display = te_get_str(v, display, "example display");
    ex->origin = te_origin_of(v, it);
    if (ex->name && ex->display) e->n_examples++;
  }
  v->examples += e->n_examples;
}

static te_entry *parse_display(te_vctx *v, const ty_node *item, const char *what, void *ctx) {
  static const char *const keys[] = {HEADER_KEYS, "regex", "replace", "examples", NULL};
  (void)ctx;
  display_entry *e = TE_ENTRY_NEW(v, item, what, keys, display_entry);
  if (!e) return NULL;
  const ty_node *rx = te_require(v, item, "regex", what, &e->hdr);
  const ty_node *rp = te_require(v, item, "replace", what, &e->hdr);
  if (rx) e->regex_src = te_get_nonempty_str(v, rx, "regex");
  if (rp) e->replace = te_get_str(v, rp, "replace");
  const ty_node *x = ty_get(item, "examples");
  if (x) parse_display_examples(v, x, e);
  for (int k = 0; k < 2; k++) {
    const ty_node *s = k ? rp : rx;
    if (s && s->len > TE_MAX_PATTERN_LEN) {
      te_verr(v, s, "%s is %zu bytes long (limit TE_MAX_PATTERN_LEN %d)", k ? "replace" : "regex",
              s->len, TE_MAX_PATTERN_LEN);
      return &e->hdr;
    }
  }
  if (!e->regex_src || !e->replace) return &e->hdr;
  e->code = compile_regex(v, rx, e->regex_src, 0, "regex");
  if (!e->code) return &e->hdr;
  if (!te_registry_add_code(v->reg, e->code)) {
    pcre2_code_free(e->code);
    return NULL;
  }
  char msg[200];
  size_t at = 0;
  if (!te_display_check_template(e->code, e->replace, &at, msg, sizeof msg)) {
    v->errors++;
    te_diags_add(v->d, TE_SEV_ERROR, v->file, rp->line, regex_error_col(rp, at),
                 "replace: bad template '%.200s': %s", e->replace, msg);
  }
  return &e->hdr;
}

/* ---------------------------------------------------------------- settings */

static setting_entry *new_setting(te_vctx *v, const char *id, const ty_node *at,
                                  const te_setting_def *def, const char *map_id) {
  setting_entry *e = te_arena_alloc(v->a, sizeof *e);
  if (!e) return NULL;
  e->hdr.id = te_arena_intern(v->a, id);
  e->hdr.origin = te_origin_of(v, at);
  e->def = def;
  e->map_id = map_id;
  return e->hdr.id ? e : NULL;
}

/* The value of one key (or of one id of a map key); false when it is invalid. */
static bool setting_value(te_vctx *v, const te_setting_def *def, const char *key,
                          const ty_node *val, te_setting_value *out) {
  char msg[400];
  const ty_node *bad = te_setting_parse(def, val, v->a, out, msg, sizeof msg);
  if (bad) te_verr(v, bad, "setting '%s' %s", key, msg);
  return bad == NULL;
}

/* A map-typed key: a marker entry (the pack sets the map), then one entry per id. */
static void parse_setting_map(te_vctx *v, const te_setting_def *def, const char *key,
                              const ty_node *k, const ty_node *val, te_list *out) {
  if (val->kind != TY_MAP) {
    te_verr(v, val, "setting '%s' must be %s", key, te_setting_type_name(def->type));
    return;
  }
  setting_entry *marker = new_setting(v, key, k, def, NULL);
  if (!marker || !te_list_push(v->a, out, &marker->hdr)) return;
  for (size_t i = 0; i < val->n; i++) {
    const ty_node *idk = val->items[2 * i], *idv = val->items[2 * i + 1];
    char id[600];
    int len = snprintf(id, sizeof id, "%s.%s", key, idk->str);
    if (len < 0 || (size_t)len >= sizeof id || !idk->len) {
      te_verr(v, idk, "setting '%s': id '%.80s' is empty or too long", key, idk->str);
      continue;
    }
    char msg[400];
    if (!te_setting_id_allowed(def, idk->str, msg, sizeof msg)) {
      te_verr(v, idk, "setting '%s': id %s", key, msg);
      continue;
    }
    setting_entry *e = new_setting(v, id, idk, def, idk->str);
    if (e && setting_value(v, def, id, idv, &e->value)) te_list_push(v->a, out, &e->hdr);
  }
}

/* Nested mappings flattened to dotted keys; every leaf must be a key of the settings
 * table (triage/settings.h), with a value of its type and range. */
static void parse_settings(te_vctx *v, const ty_node *n, const char *prefix, te_list *out) {
  if (!te_expect_map(v, n, prefix[0] ? prefix : "settings")) return;
  for (size_t i = 0; i < n->n; i++) {
    const ty_node *k = n->items[2 * i], *val = n->items[2 * i + 1];
    char key[512];
    int len = snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", k->str);
    if (len < 0 || (size_t)len >= sizeof key || !k->len) {
      te_verr(v, k, "setting key '%.80s' is empty or too long", k->str);
      continue;
    }
    const te_setting_def *def = te_setting_def_find(key);
    if (def && (def->type == TE_SETTING_NUMBER_MAP || def->type == TE_SETTING_LIST_MAP)) {
      parse_setting_map(v, def, key, k, val, out);
    } else if (def) {
      setting_entry *e = new_setting(v, key, k, def, NULL);
      if (e && setting_value(v, def, key, val, &e->value)) te_list_push(v->a, out, &e->hdr);
    } else if (te_setting_is_group(key) && val->kind == TY_MAP) {
      parse_settings(v, val, key, out);
    } else if (te_setting_is_group(key)) {
      te_verr(v, val, "'%s' is a group of settings and must be a mapping", key);
    } else {
      te_verr(v, k, "unknown setting '%.200s' (the settings table is in docs/rules.md)", key);
    }
  }
}

/* ---------------------------------------------------------------- the pack */

static void count_rules(te_pack *p) {
  te_pack_info *in = &p->info;
  for (size_t i = 0; i < p->s.classifiers.n; i++)
    in->n_classifier_rules += ((classifier_entry *)p->s.classifiers.items[i])->rules.n;
  for (size_t i = 0; i < p->s.ladders.n; i++) {
    ladder_entry *l = (ladder_entry *)p->s.ladders.items[i];
    in->n_ladder_rules += l->rules.n + l->adjustments.n;
  }
  in->n_matchers = p->s.matchers.n;
  in->n_path_rewrites = p->s.rewrites.n;
  in->n_stage_rules = p->s.path_rules.n + p->s.annotation_rules.n;
  in->n_rank_patterns = p->s.ranks.n;
  in->n_framework_hints = p->s.text_hints.n + p->s.key_hints.n + p->s.probes.n;
  for (size_t i = 0; i < p->s.settings.n; i++) { /* values, not map markers */
    const setting_entry *e = (const setting_entry *)p->s.settings.items[i];
    bool map = e->def->type == TE_SETTING_NUMBER_MAP || e->def->type == TE_SETTING_LIST_MAP;
    if (!map || e->map_id) in->n_settings++;
  }
  in->n_aliases = p->s.aliases.n;
  in->n_fusion_patterns = p->s.fusions.n;
}

static void parse_top(te_vctx *v, const ty_node *root, te_pack *p) {
  static const char *const keys[] = {"pack",
                                     "version",
                                     "description",
                                     "matchers",
                                     "classifiers",
                                     "ladders",
                                     "path_rewrites",
                                     "stages",
                                     "stage_rules",
                                     "rank_patterns",
                                     "frameworks",
                                     "framework_hints",
                                     "settings",
                                     "kernel_map_aliases",
                                     "fusion_patterns",
                                     "display_names",
                                     "dtypes",
                                     "devices",
                                     "op_costs",
                                     "models",
                                     NULL};
  static const char *const stage_rule_keys[] = {"path", "annotation", NULL};
  static const char *const hint_keys[] = {"default", "text", "server_args_keys", "url_probes",
                                          NULL};
  if (!te_expect_map(v, root, "a rule pack")) return;
  te_check_keys(v, root, keys, "the rule pack");
  const ty_node *x;
  if (!(x = ty_get(root, "pack")))
    te_verr(v, root, "the rule pack needs 'pack' (its id)");
  else
    p->info.id = te_get_nonempty_str(v, x, "pack");
  long version = 0;
  if (!(x = ty_get(root, "version")))
    te_verr(v, root, "the rule pack needs 'version: 1'");
  else if (te_get_int(v, x, "version", 0, 1000000, &version) && version != 1)
    te_verr(v, x, "unsupported pack version %ld (this triage reads version 1)", version);
  if ((x = ty_get(root, "description"))) p->info.description = te_get_str(v, x, "description");

  if ((x = ty_get(root, "matchers")) && te_expect_map(v, x, "matchers")) {
    for (size_t i = 0; i < x->n; i++) {
      te_entry *e = parse_named_matcher(v, x->items[2 * i], x->items[2 * i + 1]);
      if (e) te_list_push(v->a, &p->s.matchers, e);
    }
  }
  te_parse_list(v, ty_get(root, "classifiers"), "classifier", &p->s.classifiers, parse_classifier,
                NULL);
  te_parse_list(v, ty_get(root, "ladders"), "ladder", &p->s.ladders, parse_ladder, NULL);
  te_parse_list(v, ty_get(root, "path_rewrites"), "path rewrite", &p->s.rewrites, parse_rewrite,
                NULL);
  te_parse_list(v, ty_get(root, "stages"), "stage", &p->s.stages, parse_stage, NULL);
  if ((x = ty_get(root, "stage_rules")) && te_expect_map(v, x, "stage_rules")) {
    te_check_keys(v, x, stage_rule_keys, "stage_rules");
    te_parse_list(v, ty_get(x, "path"), "path stage rule", &p->s.path_rules, parse_stage_rule,
                  NULL);
    te_parse_list(v, ty_get(x, "annotation"), "annotation stage rule", &p->s.annotation_rules,
                  parse_stage_rule, NULL);
  }
  te_parse_list(v, ty_get(root, "rank_patterns"), "rank pattern", &p->s.ranks, parse_rank, NULL);
  te_parse_list(v, ty_get(root, "frameworks"), "framework", &p->s.frameworks, parse_framework,
                NULL);
  if ((x = ty_get(root, "framework_hints")) && te_expect_map(v, x, "framework_hints")) {
    te_check_keys(v, x, hint_keys, "framework_hints");
    const ty_node *d = ty_get(x, "default");
    if (d) {
      p->s.default_framework = te_get_nonempty_str(v, d, "framework_hints.default");
      p->s.default_framework_origin = te_origin_of(v, d);
    }
    te_parse_list(v, ty_get(x, "text"), "text hint", &p->s.text_hints, parse_text_hint, NULL);
    te_parse_list(v, ty_get(x, "server_args_keys"), "server-args hint", &p->s.key_hints,
                  parse_keys_hint, NULL);
    te_parse_list(v, ty_get(x, "url_probes"), "url probe", &p->s.probes, parse_probe, NULL);
  }
  if ((x = ty_get(root, "settings"))) parse_settings(v, x, "", &p->s.settings);
  te_parse_list(v, ty_get(root, "kernel_map_aliases"), "kernel-map alias", &p->s.aliases,
                parse_alias, NULL);
  te_parse_list(v, ty_get(root, "fusion_patterns"), "fusion pattern", &p->s.fusions, parse_fusion,
                NULL);
  te_parse_list(v, ty_get(root, "display_names"), "display rule", &p->s.display_names,
                parse_display, NULL);
  te_parse_list(v, ty_get(root, "dtypes"), "dtype", &p->s.dtypes, te_parse_dtype, NULL);
  te_parse_list(v, ty_get(root, "devices"), "device", &p->s.devices, te_parse_device, NULL);
  te_parse_list(v, ty_get(root, "op_costs"), "op cost model", &p->s.op_costs, te_parse_op_cost,
                NULL);
  te_parse_list(v, ty_get(root, "models"), "model", &p->s.models, te_parse_model, NULL);
}

te_pack *te_pack_load(te_arena *a, te_registry *reg, const char *file, const char *buf, size_t len,
                      te_diags *diags) {
  te_vctx v = {reg, a, te_arena_intern(a, file), diags, 0, 0};
  if (!v.file) return NULL;
  if (len > TE_MAX_PACK_BYTES) {
    te_diags_add(diags, TE_SEV_ERROR, v.file, 1, 1,
                 "rule pack is %zu bytes (limit TE_MAX_PACK_BYTES %u)", len,
                 (unsigned)TE_MAX_PACK_BYTES);
    return NULL;
  }
  /* The YAML tree is scratch: only interned strings and entries outlive validation. */
  te_arena *scratch = te_arena_create();
  if (!scratch) return NULL;
  ty_error err;
  memset(&err, 0, sizeof err);
  ty_node *root = ty_parse(scratch, a, buf, len, &err);
  if (!root) {
    te_diags_add(diags, TE_SEV_ERROR, v.file, err.line, err.col, "%s", err.message);
    te_arena_destroy(scratch);
    return NULL;
  }
  te_pack *p = te_arena_alloc(a, sizeof *p);
  if (p) {
    p->info.file = v.file;
    parse_top(&v, root, p);
    count_rules(p);
    p->info.n_examples = v.examples;
  }
  te_arena_destroy(scratch);
  return v.errors ? NULL : p;
}
