/*
 * display_names.c - the `display_names:` section: compact display forms of kernel-name
 * families (hipBLASLt/Tensile, nvjet, CUTLASS, ck_tile, cuDNN, ...), as data.
 *
 * pack_load.c validates the entries (regex compiled there, so syntax errors point into
 * the pack; the replacement template is checked here against the compiled regex);
 * rules.c merges them by id like every other list. This file builds the finalized rule
 * array, answers te_rules_display_name and runs the entries' examples.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diags.h"
#include "prefilter.h"
#include "rules_internal.h"
#include "triage/ascii.h"
#include "triage/limits.h"

/* Longest group name a template may use (PCRE2 allows 32 code units). */
#define GROUP_NAME_MAX 64

/* ---------------------------------------------------------------- templates */

/* One `$` reference of a template. */
typedef struct tmpl_ref {
  size_t span;      /* bytes the reference takes in the template; 0 = syntax error */
  bool dollar;      /* "$$": a literal '$' */
  long group;       /* group number, or -1 when the reference is by name */
  const char *name; /* ${NAME}, not NUL-terminated */
  size_t name_len;
} tmpl_ref;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_name_char(char c) {
  return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Parses the reference that starts at t[0] == '$'. */
static tmpl_ref parse_ref(const char *t) {
  tmpl_ref ref = {0, false, -1, NULL, 0};
  if (t[1] == '$') {
    ref.span = 2;
    ref.dollar = true;
  } else if (is_digit(t[1])) {
    ref.span = 2;
    ref.group = t[1] - '0';
  } else if (t[1] == '{') {
    size_t k = 2;
    while (is_name_char(t[k]) && k < 2 + GROUP_NAME_MAX) k++;
    if (t[k] != '}' || k == 2) return ref;
    ref.span = k + 1;
    bool numeric = true;
    for (size_t i = 2; i < k; i++) numeric = numeric && is_digit(t[i]);
    if (numeric && k - 2 <= 4) {
      ref.group = strtol(t + 2, NULL, 10);
    } else if (!is_digit(t[2])) {
      ref.name = t + 2;
      ref.name_len = k - 2;
    } else {
      ref.span = 0; /* "${12a}" or a number too long to be a group */
    }
  }
  return ref;
}

/* Group number of a reference in code, or -1 when code has no such group. */
static long ref_group(const pcre2_code *code, const tmpl_ref *ref) {
  uint32_t captures = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &captures);
  if (!ref->name) return ref->group <= (long)captures ? ref->group : -1;
  char name[GROUP_NAME_MAX + 1];
  memcpy(name, ref->name, ref->name_len);
  name[ref->name_len] = '\0';
  int n = pcre2_substring_number_from_name(code, (PCRE2_SPTR)name);
  return n >= 0 ? n : -1;
}

bool te_display_check_template(const pcre2_code *code, const char *tmpl, size_t *err_offset,
                               char *msg, size_t cap) {
  for (size_t i = 0; tmpl[i]; i++) {
    if (tmpl[i] != '$') continue;
    tmpl_ref ref = parse_ref(tmpl + i);
    *err_offset = i;
    if (!ref.span) {
      snprintf(msg, cap, "'$' must be followed by a digit, {GROUP} or another '$'");
      return false;
    }
    if (!ref.dollar && ref_group(code, &ref) < 0) {
      snprintf(msg, cap, "'%.*s' names no capture group of the regex", (int)ref.span, tmpl + i);
      return false;
    }
    i += ref.span - 1;
  }
  return true;
}

typedef struct outbuf {
  char *p;
  size_t cap, n; /* n counts every byte, also those past cap */
} outbuf;

static void out_add(outbuf *o, const char *s, size_t len) {
  if (o->cap && o->n < o->cap - 1) {
    size_t room = o->cap - 1 - o->n;
    memcpy(o->p + o->n, s, len < room ? len : room);
  }
  o->n += len;
}

/* Expands a template checked at load time against the match in md. */
static void expand(const pcre2_code *code, const char *tmpl, const char *subject,
                   pcre2_match_data *md, outbuf *o) {
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
  uint32_t pairs = pcre2_get_ovector_count(md);
  size_t lit = 0;
  for (size_t i = 0;; i++) {
    if (tmpl[i] != '$' && tmpl[i] != '\0') continue;
    out_add(o, tmpl + lit, i - lit);
    if (!tmpl[i]) break;
    tmpl_ref ref = parse_ref(tmpl + i);
    if (!ref.span) ref.span = 1; /* unreachable for a checked template; stay safe */
    if (ref.dollar) {
      out_add(o, "$", 1);
    } else {
      long g = ref_group(code, &ref);
      if (g >= 0 && (uint32_t)g < pairs && ov[2 * g] != PCRE2_UNSET)
        out_add(o, subject + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
    }
    i += ref.span - 1;
    lit = i + 1;
  }
  if (o->cap) o->p[o->n < o->cap - 1 ? o->n : o->cap - 1] = '\0';
}

/* The expansion with whitespace runs folded to one space and the ends trimmed, so an
 * optional group that did not match leaves no stray space. Copied into out (snprintf
 * contract); returns its length, or (size_t)-1 when out of memory. */
static size_t tidy_expansion(const pcre2_code *code, const char *tmpl, const char *subject,
                             pcre2_match_data *md, char *out, size_t cap) {
  outbuf count = {NULL, 0, 0};
  expand(code, tmpl, subject, md, &count);
  char *raw = malloc(count.n + 1);
  if (!raw) return (size_t)-1;
  outbuf full = {raw, count.n + 1, 0};
  expand(code, tmpl, subject, md, &full);
  size_t n = 0;
  bool space = false;
  for (size_t i = 0; i < full.n; i++) {
    char c = raw[i];
    bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (ws) {
      space = n > 0;
      continue;
    }
    if (space) raw[n++] = ' ';
    space = false;
    raw[n++] = c;
  }
  if (cap) {
    size_t m = n < cap - 1 ? n : cap - 1;
    memcpy(out, raw, m);
    out[m] = '\0';
  }
  free(raw);
  return n;
}

/* ---------------------------------------------------------------- build and query */

/* The plan of a display regex (compiled case-sensitive, without UTF: te_display_plan);
 * it is JIT-compiled on its first run. */
static void display_plan_init(te_display_plan *plan, const pcre2_code *code) {
  atomic_init(&plan->jit, TE_JIT_UNTRIED);
  plan->first = -1;
  uint32_t options = 0, first_type = 0, first = 0;
  if (pcre2_pattern_info(code, PCRE2_INFO_ALLOPTIONS, &options) == 0 &&
      (options & PCRE2_ANCHORED) && !(options & PCRE2_CASELESS) &&
      pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODETYPE, &first_type) == 0 && first_type == 1 &&
      pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODEUNIT, &first) == 0 && first < 256)
    plan->first = (int)first;
}

bool te_display_build(te_rules *r) {
  const te_list *l = &r->merged.display_names;
  size_t n = l->n ? l->n : 1;
  r->display_rules = te_arena_alloc(r->arena, n * sizeof *r->display_rules);
  r->display_entries = te_arena_alloc(r->arena, n * sizeof *r->display_entries);
  r->display_md = calloc(n, sizeof *r->display_md);
  r->display_plan = calloc(n, sizeof *r->display_plan);
  r->n_display_md = r->display_md ? l->n : 0;
  r->display_ctx = te_regex_context();
  if (!r->display_rules || !r->display_entries || !r->display_md || !r->display_plan ||
      !r->display_ctx)
    return false;
  for (size_t i = 0; i < l->n; i++) {
    const display_entry *e = (const display_entry *)l->items[i];
    display_plan_init(&r->display_plan[i], e->code);
    if (!(r->display_md[i] = pcre2_match_data_create_from_pattern(e->code, NULL))) return false;
    te_display_rule *out = &r->display_rules[i];
    out->id = e->hdr.id;
    out->regex = e->regex_src;
    out->replace = e->replace;
    out->origin = e->hdr.origin;
    r->display_entries[i] = e;
  }
  r->n_display_rules = l->n;
  /* without it (no memory, no literal) every rule runs: the same names */
  const char **src = malloc(n * sizeof *src);
  for (size_t i = 0; src && i < l->n; i++) src[i] = r->display_entries[i]->regex_src;
  if (src) r->display_prefilter = te_prefilter_build_regexes(src, l->n);
  free(src);
  return true;
}

void te_display_release(te_rules *r) {
  for (size_t i = 0; i < r->n_display_md; i++) pcre2_match_data_free(r->display_md[i]);
  free(r->display_md);
  free(r->display_plan);
  r->display_md = NULL;
  r->display_plan = NULL;
  r->n_display_md = 0;
  pcre2_match_context_free(r->display_ctx);
  r->display_ctx = NULL;
  te_prefilter_destroy(r->display_prefilter);
  r->display_prefilter = NULL;
}

static bool display_ready(const te_rules *r) {
  return r && r->finalized && !r->failed && r->display_ctx;
}

size_t te_rules_display_rule_count(const te_rules *r) {
  return display_ready(r) ? r->n_display_rules : 0;
}

const te_display_rule *te_rules_display_rule(const te_rules *r, size_t i) {
  return i < te_rules_display_rule_count(r) ? &r->display_rules[i] : NULL;
}

/* The display rules whose regexes can match name (te_prefilter_scan of its lower-cased
 * text), as bits in local (n_local words) or on the heap; NULL: every rule runs. */
static uint64_t *display_gate(const te_rules *r, const char *name, size_t len, uint64_t *local,
                              size_t n_local) {
  const te_prefilter *pf = r->display_prefilter;
  if (!pf) return NULL;
  char small[256], *folded = len <= sizeof small ? small : malloc(len);
  size_t words = te_prefilter_words(pf);
  uint64_t *may = words <= n_local ? local : malloc(words * sizeof *may);
  if (folded && may) {
    te_ascii_lower(folded, name, len);
    te_prefilter_scan(pf, folded, len, NULL, 0, false, may);
  } else if (may != local) {
    free(may);
    may = NULL;
  } else {
    may = NULL;
  }
  if (folded != small) free(folded);
  return may;
}

/* The first display rule from i on whose regex matches name, with its match data filled;
 * n when none does. */
static size_t first_match(const te_rules *r, const char *name, size_t len, const uint64_t *may,
                          size_t i, size_t n) {
  for (i = te_prefilter_next(may, i, n); i < n; i = te_prefilter_next(may, i + 1, n)) {
    const display_entry *e = r->display_entries[i];
    te_display_plan *plan = &r->display_plan[i];
    if (plan->first >= 0 && (!len || (unsigned char)name[0] != plan->first)) continue;
    pcre2_match_data *md = r->display_md[i];
    int rc = te_regex_jit_once(&plan->jit, e->code)
                 ? pcre2_jit_match(e->code, (PCRE2_SPTR)name, len, 0, 0, md, r->display_ctx)
                 : pcre2_match(e->code, (PCRE2_SPTR)name, len, 0, 0, md, r->display_ctx);
    if (rc >= 0) return i;
  }
  return n;
}

bool te_rules_display_name(const te_rules *r, const char *name, size_t len, char *out, size_t cap,
                           size_t *full_len, const te_display_rule **rule) {
  size_t n_rules = te_rules_display_rule_count(r);
  if (!n_rules) return false;
  uint64_t may_local[TE_LOCAL_RULE_WORDS];
  uint64_t *may = display_gate(r, name, len, may_local, TE_LOCAL_RULE_WORDS);
  size_t i = first_match(r, name, len, may, 0, n_rules);
  if (may != may_local) free(may);
  if (i == n_rules) return false;
  const display_entry *e = r->display_entries[i];
  size_t n = tidy_expansion(e->code, e->replace, name, r->display_md[i], out, cap);
  if (n == (size_t)-1) return false;
  if (full_len) *full_len = n;
  if (rule) *rule = &r->display_rules[i];
  return true;
}

/* ---------------------------------------------------------------- examples */

/* Checks one example: the whole rule list must decide it by rule e with display ex->display. */
static bool check_example(const te_rules *r, const display_entry *e, const display_example *ex,
                          te_diags *d) {
  size_t need = 0;
  const te_display_rule *by = NULL;
  char small[256];
  char *got = small;
  bool hit = te_rules_display_name(r, ex->name, strlen(ex->name), small, sizeof small, &need, &by);
  if (hit && need >= sizeof small && (got = malloc(need + 1)) != NULL)
    te_rules_display_name(r, ex->name, strlen(ex->name), got, need + 1, NULL, NULL);
  if (!got) got = small;
  bool ok = hit && by && !strcmp(by->id, e->hdr.id) && !strcmp(got, ex->display);
  if (!ok)
    te_diags_add(
        d, TE_SEV_ERROR, ex->origin.file, ex->origin.line, ex->origin.col,
        "example '%.200s' should display as '%.200s' by display rule '%s' but %s%.200s%s%s%s",
        ex->name, ex->display, e->hdr.id, hit ? "displays as '" : "no display rule matches",
        hit ? got : "", hit ? "' (rule '" : "", hit && by ? by->id : "", hit ? "')" : "");
  if (got != small) free(got);
  return ok;
}

size_t te_display_run_examples(const te_rules *r, te_diags *d, size_t *n_checked) {
  size_t failed = 0;
  for (size_t i = 0; i < te_rules_display_rule_count(r); i++) {
    const display_entry *e = r->display_entries[i];
    for (size_t k = 0; k < e->n_examples; k++) {
      (*n_checked)++;
      if (!check_example(r, e, &e->examples[k], d)) failed++;
    }
  }
  return failed;
}
