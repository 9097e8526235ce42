/*
 * report/names.c - display names of kernels; see names.h and docs/names.md.
 *
 * A name goes through: demangling (libiberty's callback demangler, stopped by a longjmp
 * out of the callback once its text passes RP_MAX_DEMANGLED_BYTES: the callback API
 * allocates nothing, so leaving it early leaks nothing), then either the first matching
 * `display_names:` rule of the packs or the generic collapse, then the length cap.
 */
#include "report/names.h"

#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/params.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */
#define ELLIPSIS_BYTES 3
/* Forms of one name, most detailed first (see name_forms). */
#define N_FORMS 4
/* A disambiguating word longer than this says less than a hash. */
#define MAX_TOKEN_CHARS 24
/* The smallest cap that leaves room for a name and a disambiguating suffix. */
#define MIN_MAX_CHARS 40
/* The largest cap and collapse length (the settings table's upper bound of both). */
#define MAX_DISPLAY_CHARS 100000

struct rp_names {
  const te_rules *rules;
  size_t max_chars;      /* names.display_max_chars */
  size_t collapse_chars; /* names.display_collapse_chars */
};

/* ------------------------------------------------------------------ strings */

/* The built string of b (owned by the caller), or NULL when out of memory. */
static char *buf_take(ut_buf *b) {
  if (b->oom) {
    ut_buf_free(b);
    return NULL;
  }
  if (!b->p) return strdup("");
  return b->p;
}

static char *dup_n(const char *s, size_t len) {
  char *p = malloc(len + 1);
  if (!p) return NULL;
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

static bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }
static bool is_word(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_alnum(unsigned char c) { return is_word(c) && c != '_'; }

/* Characters (UTF-8 code points; a stray continuation byte counts with its lead). */
static size_t n_chars(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += !is_cont((unsigned char)*s);
  return n;
}

/* Byte length of the first k characters of s. */
static size_t chars_prefix(const char *s, size_t k) {
  size_t i = 0;
  while (s[i] && k) {
    i++;
    while (s[i] && is_cont((unsigned char)s[i])) i++;
    k--;
  }
  return i;
}

/* s cut to at most max characters, ending in "…" when cut; then suffix (which must fit).
 * Takes ownership of s. */
static char *fit(char *s, size_t max, const char *suffix) {
  if (!s) return NULL;
  size_t room = max - n_chars(suffix);
  /* most names fit as they are: kept, not copied (a copy per name of a stage of many
   * distinct kernels is megabytes at the run's peak) */
  if (!*suffix && n_chars(s) <= room) return s;
  ut_buf b = {0};
  if (n_chars(s) <= room) {
    ut_buf_add(&b, s);
  } else {
    size_t keep = chars_prefix(s, room - 1);
    while (keep && s[keep - 1] == ' ') keep--;
    ut_buf_addn(&b, s, keep);
    ut_buf_addn(&b, ELLIPSIS, ELLIPSIS_BYTES);
  }
  ut_buf_add(&b, suffix);
  free(s);
  return buf_take(&b);
}

/* ------------------------------------------------------------------ demangling */

typedef struct dm_sink {
  ut_buf text;
  jmp_buf stop;
} dm_sink;

static void dm_collect(const char *s, size_t len, void *opaque) {
  dm_sink *k = opaque;
  if (k->text.oom || k->text.n + len > RP_MAX_DEMANGLED_BYTES) longjmp(k->stop, 1);
  ut_buf_addn(&k->text, s, len);
}

char *rp_names_demangle(const char *name) {
  size_t len = strlen(name);
  if (len < 3 || len > RP_MAX_DEMANGLE_BYTES || name[0] != '_' || name[1] != 'Z')
    return strdup(name);
  /* On the heap, so nothing the longjmp skips over lives in a register. */
  dm_sink *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  bool ok = false;
  if (setjmp(k->stop) == 0)
    ok = cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_ANSI, dm_collect, k) != 0;
  char *out = ok && !k->text.oom && k->text.n ? k->text.p : NULL;
  if (!out) {
    free(k->text.p);
    out = strdup(name);
  }
  free(k);
  return out;
}

/* The leading name of a mangled name the demangler refused (newer manglings, such as
 * C++20 template parameter declarations "Tn", that libiberty predates): its source names
 * joined by "::", and "<…>" when template arguments follow. Enough to tell what the kernel
 * is; the arguments are what the display collapses anyway. NULL when there is none. */
static char *nested_name_prefix(const char *m) {
  if (strncmp(m, "_Z", 2) != 0) return NULL;
  const char *p = m + 2;
  bool nested = *p == 'N';
  if (nested) p++;
  while (*p == 'r' || *p == 'V' || *p == 'K' || *p == 'R' || *p == 'O') p++;
  ut_buf b = {0};
  size_t parts = 0;
  while (*p >= '1' && *p <= '9') {
    char *end;
    unsigned long len = strtoul(p, &end, 10);
    if (len > strnlen(end, len + 1) || len == 0) break;
    if (parts++) ut_buf_add(&b, "::");
    ut_buf_addn(&b, end, len);
    p = end + len;
    if (!nested) break;
  }
  if (parts && *p == 'I') {
    ut_buf_add(&b, "<");
    ut_buf_addn(&b, ELLIPSIS, ELLIPSIS_BYTES);
    ut_buf_add(&b, ">");
  }
  if (!parts || b.oom) {
    free(b.p);
    return NULL;
  }
  return buf_take(&b);
}

/* ------------------------------------------------------------------ generic collapse */

/* Without a leading "void " and a trailing parameter list "(...)" that follows the name
 * directly ("Memset (Device)" keeps its parenthesis). */
static char *strip_void_and_params(const char *s) {
  while (*s == ' ') s++;
  if (!strncmp(s, "void ", 5)) s += 5;
  size_t n = strlen(s);
  while (n && s[n - 1] == ' ') n--;
  size_t params = ut_params_start(s, n);
  if (params < n && params > 0 && s[params - 1] != ' ') n = params;
  return dup_n(s, n);
}

/* True when the angle brackets of s nest properly (never below zero, zero at the end). */
static bool brackets_balanced(const char *s) {
  long depth = 0;
  for (; *s; s++) {
    if (*s == '<')
      depth++;
    else if (*s == '>' && --depth < 0)
      return false;
  }
  return depth == 0;
}

/* Drops the qualifier just written before "::" inside template arguments
 * ("at::native::FillFunctor" -> "FillFunctor"). */
static void drop_qualifier(ut_buf *b) {
  static const char anon[] = "(anonymous namespace)";
  size_t k = b->n;
  while (k && is_word((unsigned char)b->p[k - 1])) k--;
  if (k == b->n && k >= sizeof anon - 1 &&
      !memcmp(b->p + k - (sizeof anon - 1), anon, sizeof anon - 1))
    k -= sizeof anon - 1;
  b->n = k;
  if (b->p) b->p[k] = '\0';
}

/* Template arguments deeper than keep_depth become "<…>"; with strip_ns, qualifiers
 * inside template arguments are dropped. s must have balanced brackets. */
static char *collapse(const char *s, int keep_depth, bool strip_ns) {
  ut_buf b = {0};
  int depth = 0;
  for (size_t i = 0; s[i]; i++) {
    char c = s[i];
    if (c == '<' && depth == keep_depth) {
      ut_buf_add(&b, "<" ELLIPSIS ">");
      for (int d = 0; s[i]; i++) { /* skip to the matching '>' */
        if (s[i] == '<')
          d++;
        else if (s[i] == '>' && --d == 0)
          break;
      }
      if (!s[i]) break;
      continue;
    }
    if (c == '<')
      depth++;
    else if (c == '>')
      depth--;
    if (strip_ns && depth > 0 && c == ':' && s[i + 1] == ':') {
      drop_qualifier(&b);
      i++;
      continue;
    }
    ut_buf_addn(&b, &c, 1);
  }
  return buf_take(&b);
}

/* The forms of a name without a display rule, most detailed first: as is (no "void ",
 * no parameters), nested template arguments collapsed, qualifiers inside template
 * arguments dropped too, all template arguments collapsed. A name without template
 * arguments has four equal forms: one text, shared (forms_share). */
static size_t generic_forms(const char *demangled, char *forms[N_FORMS]) {
  char *plain = strip_void_and_params(demangled);
  if (!plain) return 0;
  forms[0] = plain;
  bool templ = strchr(plain, '<') && brackets_balanced(plain);
  forms[1] = templ ? collapse(plain, 1, false) : plain;
  forms[2] = templ ? collapse(plain, 1, true) : plain;
  forms[3] = templ ? collapse(plain, 0, false) : plain;
  return N_FORMS;
}

/* ------------------------------------------------------------------ one name */

static size_t clamp_chars(long v, size_t lo) {
  return v < (long)lo ? lo : v > MAX_DISPLAY_CHARS ? MAX_DISPLAY_CHARS : (size_t)v;
}

rp_names *rp_names_create(const te_rules *rules) {
  rp_names *nm = calloc(1, sizeof *nm);
  if (!nm) return NULL;
  nm->rules = rules;
  /* Without a finalized rule set nothing collapses or caps a display short of the
   * largest value the settings table allows. A pack that leaves a key unset reads 0,
   * which the clamps turn into the smallest sensible value. */
  const te_settings *set = rules ? te_rules_settings(rules) : NULL;
  long max = set ? set->names_display_max_chars : MAX_DISPLAY_CHARS;
  long collapse_at = set ? set->names_display_collapse_chars : MAX_DISPLAY_CHARS;
  nm->max_chars = clamp_chars(max, MIN_MAX_CHARS);
  nm->collapse_chars = clamp_chars(collapse_at, 1);
  return nm;
}

void rp_names_destroy(rp_names *nm) { free(nm); }

size_t rp_names_max_chars(const rp_names *nm) { return nm->max_chars; }

/* The display rule's form of demangled, or NULL when no rule matches (*oom on failure). */
static char *rule_form(const rp_names *nm, const char *demangled, bool *oom) {
  char small[256];
  size_t need = 0, len = strlen(demangled);
  if (!nm->rules ||
      !te_rules_display_name(nm->rules, demangled, len, small, sizeof small, &need, NULL))
    return NULL;
  char *out = malloc(need + 1);
  if (!out) {
    *oom = true;
    return NULL;
  }
  if (need < sizeof small)
    memcpy(out, small, need + 1);
  else
    te_rules_display_name(nm->rules, demangled, len, out, need + 1, NULL, NULL);
  return out;
}

/* A form equal to the one before it shares its text (the four generic forms of a name
 * without template arguments are one text): one copy per distinct form, which matters at
 * a table of hundreds of thousands of names. Shared forms stand side by side, and a run of
 * them (already shared) moves as one. */
static void forms_share(char *forms[N_FORMS], size_t n) {
  for (size_t i = 1; i < n; i++) {
    char *f = forms[i];
    if (f == forms[i - 1] || strcmp(f, forms[i - 1]) != 0) continue;
    free(f);
    for (size_t j = i; j < n && forms[j] == f; j++) forms[j] = forms[i - 1];
  }
}

/* Frees each text of forms once (forms_share), except keep's. */
static void forms_free(char *forms[N_FORMS], size_t n, const char *keep) {
  for (size_t i = 0; i < n; i++)
    if (forms[i] != keep && (i == 0 || forms[i] != forms[i - 1])) free(forms[i]);
}

/* Fills forms (each within the cap, most detailed first) and *chosen, the form shown
 * by default: a display rule's form when one matches, else the first generic form of at
 * most collapse_chars characters (else the most compact). Returns the number of forms,
 * 0 when out of memory. *demangled_out receives the demangled name (caller frees), NULL
 * when that is full itself. */
static size_t name_forms(const rp_names *nm, const char *full, char *forms[N_FORMS], size_t *chosen,
                         char **demangled_out) {
  /* a name that is not mangled is its own demangled text: read in place, not copied (a
   * copy, a compare and a free per name of a table of many distinct names) */
  char *d = NULL;
  if (full[0] == '_' && full[1] == 'Z') {
    d = rp_names_demangle(full);
    if (!d) return 0;
    if (strcmp(d, full) == 0) { /* not demangled: its leading name, if it has one */
      char *prefix = nested_name_prefix(full);
      free(d);
      d = prefix;
    }
  }
  const char *text = d ? d : full;
  bool oom = false;
  size_t n = 0;
  char *rule = rule_form(nm, text, &oom);
  if (rule) {
    forms[0] = rule;
    n = 1;
    *chosen = 0;
  } else if (!oom) {
    n = generic_forms(text, forms);
    *chosen = n ? n - 1 : 0;
    for (size_t i = 0; i < n; i++)
      if (forms[i] && n_chars(forms[i]) <= nm->collapse_chars) {
        *chosen = i;
        break;
      }
  }
  bool missing = false; /* a generic form ran out of memory */
  for (size_t i = 0; i < n; i++) missing = missing || !forms[i];
  /* equal texts fit alike: each text is fitted once, a shared one takes the fitted text of
   * the slot before (also NULL, when that fit ran out of memory) */
  if (!missing) forms_share(forms, n);
  const char *unfit = NULL; /* forms[i - 1] before its fit */
  for (size_t i = 0; !missing && i < n; i++) {
    if (i && forms[i] == unfit) {
      forms[i] = forms[i - 1];
      continue;
    }
    unfit = forms[i];
    forms[i] = fit(forms[i], nm->max_chars, "");
    if (!forms[i]) oom = true;
  }
  oom = oom || missing;
  if (oom || !n) {
    forms_free(forms, n, NULL);
    free(d);
    return 0;
  }
  forms_share(forms, n);
  *demangled_out = d;
  return n;
}

char *rp_names_display(const rp_names *nm, const char *full) {
  char *forms[N_FORMS] = {0}, *d = NULL;
  size_t chosen = 0, n = name_forms(nm, full, forms, &chosen, &d);
  if (!n) return NULL;
  forms_free(forms, n, forms[chosen]);
  free(d);
  return forms[chosen];
}

/* ------------------------------------------------------------------ one table */

/* One distinct full name of a table. */
typedef struct tname {
  const char *full;
  char *demangled; /* NULL when it is full itself (tname_demangled) */
  char *forms[N_FORMS];
  size_t n_forms, chosen;
  /* one of forms (borrowed), or a copy with a suffix (owned): a table of many names
   * holds one text per name, not a copy of its form besides */
  char *display;
  bool own_display;
  char *given; /* the display handed to the table's result (its first row of the name) */
} tname;

static const char *tname_demangled(const tname *x) { return x->demangled ? x->demangled : x->full; }

/* Shows s: a form of x's (borrowed) or a new text (owned). */
static void tname_show(tname *x, char *s, bool own) {
  if (x->own_display) free(x->display);
  x->display = s;
  x->own_display = own;
}

static int cmp_display(const void *a, const void *b) {
  const tname *x = *(const tname *const *)a, *y = *(const tname *const *)b;
  int c = strcmp(x->display, y->display);
  return c ? c : strcmp(x->full, y->full);
}

/* True when some name outside [g, g + n) of the sorted view shows s. */
static bool shown_elsewhere(tname **by, size_t total, size_t g, size_t n, const char *s) {
  for (size_t i = 0; i < total; i++)
    if ((i < g || i >= g + n) && !strcmp(by[i]->display, s)) return true;
  return false;
}

static char *form_at(const tname *x, size_t lvl) {
  return x->forms[lvl < x->n_forms ? lvl : x->n_forms - 1];
}

/* Re-expands a collision group, level by level from the most compact below the current
 * ones: a member whose form at a level differs from the other unresolved members' forms
 * there and from every display of the table takes it. Returns -1 when out of memory. */
static int try_expand(tname **by, size_t total, size_t g, size_t n) {
  size_t top = 0, left = n;
  bool *done = calloc(n, sizeof *done);
  if (!done) return -1;
  for (size_t k = 0; k < n; k++)
    if (by[g + k]->chosen > top) top = by[g + k]->chosen;
  for (size_t lvl = top; left > 1 && lvl-- > 0;) {
    for (size_t a = 0; a < n; a++) {
      if (done[a]) continue;
      char *fx = form_at(by[g + a], lvl);
      bool unique = !shown_elsewhere(by, total, g, n, fx);
      for (size_t b = 0; unique && b < n; b++)
        if (b != a &&
            (done[b] ? !strcmp(fx, by[g + b]->display) : !strcmp(fx, form_at(by[g + b], lvl))))
          unique = false;
      if (!unique) continue;
      tname_show(by[g + a], fx, false); /* one of its own forms */
      done[a] = true;
      left--;
    }
  }
  free(done);
  return left <= 1;
}

/* True when s holds tok (tlen bytes) as a whole word of letters and digits. */
static bool has_token(const char *s, const char *tok, size_t tlen) {
  for (const char *p = s; *p;) {
    while (*p && !is_alnum((unsigned char)*p)) p++;
    const char *q = p;
    while (*q && is_alnum((unsigned char)*q)) q++;
    if ((size_t)(q - p) == tlen && !memcmp(p, tok, tlen)) return true;
    p = q;
  }
  return false;
}

/* Copies the word p (len bytes) into tok when it may disambiguate x in its group: no
 * other member has it. */
static bool unique_word(tname **by, size_t g, size_t n, const tname *x, const char *p, size_t len,
                        bool skip, char *tok, size_t cap) {
  bool unique = !skip && len && len <= MAX_TOKEN_CHARS && len < cap;
  for (size_t k = 0; unique && k < n; k++)
    if (by[g + k] != x && has_token(tname_demangled(by[g + k]), p, len)) unique = false;
  if (unique) {
    memcpy(tok, p, len);
    tok[len] = '\0';
  }
  return unique;
}

/* The first word of x's demangled name that no other member of its group has; a word
 * with a letter when there is one (a bare number says little on its own). */
static bool unique_token(tname **by, size_t g, size_t n, const tname *x, char *tok, size_t cap) {
  for (int pass = 0; pass < 2; pass++)
    for (const char *p = tname_demangled(x); *p;) {
      while (*p && !is_alnum((unsigned char)*p)) p++;
      const char *q = p;
      bool letter = false;
      for (; *q && is_alnum((unsigned char)*q); q++) letter = letter || *q > '9';
      if (unique_word(by, g, n, x, p, (size_t)(q - p), pass == 0 && !letter, tok, cap)) return true;
      p = q;
    }
  return false;
}

/* 24-bit FNV-1a of s, as 6 hex digits: stable across runs and platforms. (Not
 * util/map.h's 64-bit ut_hash_bytes: this value is printed, and a 32-bit FNV folded to 24
 * bits is what docs/names.md and the tests show.) */
static void short_hash(const char *s, char out[8]) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  snprintf(out, 8, "%06x", (unsigned)((h ^ (h >> 24)) & 0xffffffu));
}

/* Gives each member of a collision group a suffix made by step (0: a word of its own,
 * 1: its hash, 2: its rank in the group). */
static bool add_suffixes(const rp_names *nm, tname **by, size_t g, size_t n, int step) {
  for (size_t k = 0; k < n; k++) {
    tname *x = by[g + k];
    char tok[MAX_TOKEN_CHARS + 1], suffix[MAX_TOKEN_CHARS + 8];
    if (step == 0 && !unique_token(by, g, n, x, tok, sizeof tok)) continue;
    if (step == 1) short_hash(x->full, tok);
    if (step == 0)
      snprintf(suffix, sizeof suffix, " [%s]", tok);
    else if (step == 1)
      snprintf(suffix, sizeof suffix, " ~%s", tok);
    else
      snprintf(suffix, sizeof suffix, " #%zu", k + 1);
    char *base = strdup(x->display);
    char *s = fit(base, nm->max_chars, suffix);
    if (!s) return false;
    tname_show(x, s, true);
  }
  return true;
}

/* One resolution step (0: re-expand, 1: word, 2: hash, 3: rank) over every collision
 * group. Returns false when out of memory. */
static bool resolve_step(const rp_names *nm, tname **by, size_t total, int step) {
  qsort(by, total, sizeof *by, cmp_display);
  for (size_t g = 0; g < total;) {
    size_t n = 1;
    while (g + n < total && !strcmp(by[g + n]->display, by[g]->display)) n++;
    if (n > 1 && step == 0 && try_expand(by, total, g, n) < 0) return false;
    if (n > 1 && step > 0 && !add_suffixes(nm, by, g, n, step - 1)) return false;
    g += n;
  }
  return true;
}

static const char *display_at(const void *items, size_t i) {
  return ((tname *const *)items)[i]->display;
}

/* How many names show a display some other name shows too (total less the distinct
 * displays): counted in a set of the displays, so a table without a collision, the usual
 * case, is never sorted. -1 when out of memory. */
static long collisions(tname **by, size_t total) {
  ut_textset seen;
  if (!ut_textset_init(&seen, total, display_at, by)) return -1;
  long left = 0;
  for (size_t i = 0; i < total; i++) left += ut_textset_put(&seen, i) != i;
  ut_textset_free(&seen);
  return left;
}

/* Makes the displays of the distinct names unique: re-expansion, then words, hashes and
 * ranks, each only where the previous step left a collision. A rank can only meet an
 * unrelated display that ends in the same rank; ranks repeat until none is left. */
static bool resolve(const rp_names *nm, tname **by, size_t total) {
  for (int step = 0; step < 4; step++) {
    long left = collisions(by, total);
    if (left <= 0) return left == 0;
    if (!resolve_step(nm, by, total, step)) return false;
  }
  for (size_t round = 0; round < total; round++) {
    long left = collisions(by, total);
    if (left <= 0) return left == 0;
    if (!resolve_step(nm, by, total, 3)) return false;
  }
  return true;
}

static void tnames_free(tname *u, size_t n) {
  for (size_t i = 0; u && i < n; i++) {
    forms_free(u[i].forms, u[i].n_forms, u[i].given);
    free(u[i].demangled);
    if (u[i].own_display && u[i].display != u[i].given) free(u[i].display);
  }
  free(u);
}

static const char *full_at(const void *items, size_t i) { return ((const char *const *)items)[i]; }

/* The distinct names of full, in order of first sight, with their forms; of[i] the index
 * of full[i]'s. (The order does not matter: every step orders the names by display, then
 * full name, a total order.) */
static tname *distinct_names(const rp_names *nm, const char *const *full, size_t n, size_t *nu,
                             uint32_t *of) {
  tname *u = calloc(n ? n : 1, sizeof *u);
  ut_textset index = {0}; /* full name -> its first row */
  bool ok = u && ut_textset_init(&index, n, full_at, full);
  *nu = 0;
  for (size_t i = 0; ok && i < n; i++) {
    size_t first = ut_textset_put(&index, i);
    if (first != i) {
      of[i] = of[first];
      continue;
    }
    of[i] = (uint32_t)*nu;
    tname *x = &u[(*nu)++];
    x->full = full[i];
    x->n_forms = name_forms(nm, x->full, x->forms, &x->chosen, &x->demangled);
    x->display = x->n_forms ? x->forms[x->chosen] : NULL;
    ok = x->display != NULL;
  }
  ut_textset_free(&index);
  if (!ok) {
    tnames_free(u, *nu);
    return NULL;
  }
  return u;
}

char **rp_names_display_table(const rp_names *nm, const char *const *full, size_t n) {
  size_t nu = 0;
  uint32_t *of = malloc((n ? n : 1) * sizeof *of);
  tname *u = of ? distinct_names(nm, full, n, &nu, of) : NULL;
  tname **by = u ? malloc((nu ? nu : 1) * sizeof *by) : NULL;
  char **out = by ? calloc(n ? n : 1, sizeof *out) : NULL;
  bool ok = out != NULL;
  for (size_t i = 0; ok && i < nu; i++) by[i] = &u[i];
  if (ok) ok = resolve(nm, by, nu);
  /* the first row of a name takes its display (tnames_free then keeps it), the others a
   * copy */
  for (size_t i = 0; ok && i < n; i++) {
    tname *x = &u[of[i]];
    ok = (out[i] = x->given ? strdup(x->given) : (x->given = x->display)) != NULL;
  }
  free(of);
  free(by);
  tnames_free(u, nu);
  if (!ok) {
    rp_names_table_free(out, n);
    return NULL;
  }
  return out;
}

void rp_names_table_free(char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
}
