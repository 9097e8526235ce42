/*
 * settings.c - the table of settings (triage/settings.h), value validation and
 * resolution into te_settings.
 */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage/limits.h"

static const te_setting_def TABLE[] = {
#define TE_SETTING_ROW(member, key, type, min, max, absent, choices, meaning) \
  {key, TE_SETTING_##type, min, max, absent, choices, meaning, offsetof(te_settings, member)},
    TE_SETTINGS(TE_SETTING_ROW)
#undef TE_SETTING_ROW
};
#define N_ROWS (sizeof TABLE / sizeof TABLE[0])

size_t te_setting_def_count(void) { return N_ROWS; }

const te_setting_def *te_setting_def_at(size_t i) { return i < N_ROWS ? &TABLE[i] : NULL; }

const te_setting_def *te_setting_def_find(const char *key) {
  for (size_t i = 0; key && i < N_ROWS; i++)
    if (strcmp(TABLE[i].key, key) == 0) return &TABLE[i];
  return NULL;
}

bool te_setting_is_group(const char *key) {
  size_t n = key ? strlen(key) : 0;
  for (size_t i = 0; n && i < N_ROWS; i++)
    if (strncmp(TABLE[i].key, key, n) == 0 && TABLE[i].key[n] == '.') return true;
  return false;
}

const char *te_setting_type_name(te_setting_type t) {
  switch (t) {
    case TE_SETTING_NUMBER:
      return "a number";
    case TE_SETTING_INT:
      return "a whole number";
    case TE_SETTING_BOOL:
      return "true or false";
    case TE_SETTING_ENUM:
      return "one of its choices";
    case TE_SETTING_LIST:
      return "a list of strings";
    case TE_SETTING_NUMBER_MAP:
      return "a mapping of ids to numbers";
    case TE_SETTING_LIST_MAP:
      return "a mapping of ids to lists of strings";
  }
  return "?";
}

double te_number_map_get(const te_number_map *m, const char *id) {
  for (size_t i = 0; id && i < m->n; i++)
    if (strcmp(m->keys[i], id) == 0) return m->values[i];
  return m->absent;
}

const te_string_list *te_list_map_get(const te_list_map *m, const char *id) {
  for (size_t i = 0; id && i < m->n; i++)
    if (strcmp(m->keys[i], id) == 0) return &m->values[i];
  return NULL;
}

bool te_string_list_has(const te_string_list *l, const char *item) {
  /* the first bytes first: most items differ there, and the lists are asked of every
   * kernel row (a stage of many distinct names asks millions of times) */
  for (size_t i = 0; l && item && i < l->n; i++)
    if (l->items[i][0] == item[0] && strcmp(l->items[i], item) == 0) return true;
  return false;
}

/* ---------------------------------------------------------------- parsing */

static bool is_null(const ty_node *n) {
  return n->kind == TY_SCALAR && n->plain &&
         (n->len == 0 || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
          !strcmp(n->str, "Null") || !strcmp(n->str, "NULL"));
}

static const char *shape(const ty_node *n) {
  if (n->kind == TY_MAP) return "a mapping";
  if (n->kind == TY_SEQ) return "a list";
  return is_null(n) ? "null" : "a scalar";
}

/* A plain scalar YAML reads as a number (strtod's hex, inf and nan excluded). */
static bool scalar_number(const ty_node *n, double *out) {
  if (n->kind != TY_SCALAR || !n->plain || n->len == 0) return false;
  char c = n->str[0];
  if (!(isdigit((unsigned char)c) || c == '-' || c == '+' || c == '.')) return false;
  errno = 0;
  char *end = NULL;
  double x = strtod(n->str, &end);
  if (errno || end == n->str || *end || !isfinite(x)) return false;
  *out = x;
  return true;
}

static const ty_node *parse_number(const te_setting_def *def, const ty_node *n, bool whole,
                                   double *out, char *msg, size_t cap) {
  double x;
  if (!scalar_number(n, &x)) {
    snprintf(msg, cap, "must be %s, not %s%.40s%s", whole ? "a whole number" : "a number",
             n->kind == TY_SCALAR ? "'" : "", n->kind == TY_SCALAR ? n->str : shape(n),
             n->kind == TY_SCALAR ? "'" : "");
    return n;
  }
  if (whole && x != floor(x)) {
    snprintf(msg, cap, "must be a whole number, not %g", x);
    return n;
  }
  if (x < def->min || x > def->max) {
    snprintf(msg, cap, "must be between %g and %g, not %g", def->min, def->max, x);
    return n;
  }
  *out = x;
  return NULL;
}

static const ty_node *parse_bool(const ty_node *n, bool *out, char *msg, size_t cap) {
  static const char *const yes[] = {"true", "True", "TRUE"}, *const no[] = {"false", "False",
                                                                            "FALSE"};
  for (size_t i = 0; n->kind == TY_SCALAR && n->plain && i < 3; i++) {
    if (!strcmp(n->str, yes[i])) return *out = true, NULL;
    if (!strcmp(n->str, no[i])) return *out = false, NULL;
  }
  snprintf(msg, cap, "must be true or false, not %s", shape(n));
  return n;
}

int te_choice_index(const char *choices, const char *s, size_t len) {
  int idx = 0;
  for (const char *c = choices; c && *c; idx++) {
    const char *bar = strchr(c, '|');
    size_t n = bar ? (size_t)(bar - c) : strlen(c);
    if (n == len && strncmp(c, s, len) == 0) return idx;
    c = bar ? bar + 1 : c + n;
  }
  return -1;
}

bool te_setting_id_allowed(const te_setting_def *def, const char *id, char *msg, size_t cap) {
  if (!def->choices || te_choice_index(def->choices, id, strlen(id)) >= 0) return true;
  snprintf(msg, cap, "must be one of %s, not '%.40s'", def->choices, id);
  return false;
}

static const ty_node *parse_choice(const te_setting_def *def, const ty_node *n, int *out, char *msg,
                                   size_t cap) {
  int idx =
      n->kind == TY_SCALAR && !is_null(n) ? te_choice_index(def->choices, n->str, n->len) : -1;
  if (idx >= 0) return *out = idx, NULL;
  snprintf(msg, cap, "must be one of %s, not %s%.40s%s", def->choices ? def->choices : "",
           n->kind == TY_SCALAR ? "'" : "", n->kind == TY_SCALAR ? n->str : shape(n),
           n->kind == TY_SCALAR ? "'" : "");
  return n;
}

static const ty_node *parse_list(const te_setting_def *def, const ty_node *n, te_arena *a,
                                 te_setting_value *out, char *msg, size_t cap) {
  if (n->kind != TY_SEQ) {
    snprintf(msg, cap, "must be a list of strings, not %s", shape(n));
    return n;
  }
  out->items = n->n ? te_arena_alloc(a, n->n * sizeof *out->items) : NULL;
  if (n->n && !out->items) {
    snprintf(msg, cap, "out of memory");
    return n;
  }
  for (size_t i = 0; i < n->n; i++) {
    const ty_node *it = n->items[i];
    if (it->kind != TY_SCALAR || is_null(it) || it->len == 0) {
      snprintf(msg, cap, "entries must be non-empty strings, not %s",
               it->kind == TY_SCALAR && !is_null(it) ? "empty" : shape(it));
      return it;
    }
    if (it->len > TE_MAX_PATTERN_LEN) {
      snprintf(msg, cap, "entry is %zu bytes long (limit TE_MAX_PATTERN_LEN %d)", it->len,
               TE_MAX_PATTERN_LEN);
      return it;
    }
    if (def->choices && te_choice_index(def->choices, it->str, it->len) < 0) {
      snprintf(msg, cap, "entries must be one of %s, not '%.40s'", def->choices, it->str);
      return it;
    }
    out->items[out->n_items++] = it->str;
  }
  return NULL;
}

const ty_node *te_setting_parse(const te_setting_def *def, const ty_node *n, te_arena *a,
                                te_setting_value *out, char *msg, size_t cap) {
  memset(out, 0, sizeof *out);
  double x = 0;
  const ty_node *bad = NULL;
  switch (def->type) {
    case TE_SETTING_NUMBER:
    case TE_SETTING_NUMBER_MAP:
      bad = parse_number(def, n, false, &out->number, msg, cap);
      break;
    case TE_SETTING_INT:
      bad = parse_number(def, n, true, &x, msg, cap);
      out->integer = (long)x;
      break;
    case TE_SETTING_BOOL:
      bad = parse_bool(n, &out->boolean, msg, cap);
      break;
    case TE_SETTING_ENUM:
      bad = parse_choice(def, n, &out->choice, msg, cap);
      break;
    case TE_SETTING_LIST:
    case TE_SETTING_LIST_MAP:
      bad = parse_list(def, n, a, out, msg, cap);
      break;
  }
  return bad;
}

/* ---------------------------------------------------------------- resolution */

static void *member(te_settings *s, const te_setting_def *def) { return (char *)s + def->offset; }

static void store_plain(te_settings *s, const te_setting_def *def, const te_setting_value *v) {
  void *m = member(s, def);
  switch (def->type) {
    case TE_SETTING_NUMBER:
      *(double *)m = v->number;
      break;
    case TE_SETTING_INT:
      *(long *)m = v->integer;
      break;
    case TE_SETTING_BOOL:
      *(bool *)m = v->boolean;
      break;
    case TE_SETTING_ENUM:
      *(int *)m = v->choice;
      break;
    case TE_SETTING_LIST:
      ((te_string_list *)m)->n = v->n_items;
      ((te_string_list *)m)->items = v->items;
      break;
    case TE_SETTING_NUMBER_MAP:
    case TE_SETTING_LIST_MAP:
      break;
  }
}

/* The ids of one map row, in merged order, into the member's arrays. */
static bool store_map(const te_list *entries, te_arena *a, te_settings *s,
                      const te_setting_def *def) {
  size_t n = 0;
  for (size_t i = 0; i < entries->n; i++) {
    const setting_entry *e = (const setting_entry *)entries->items[i];
    if (e->def == def && e->map_id) n++;
  }
  const char **keys = te_arena_alloc(a, (n ? n : 1) * sizeof *keys);
  double *numbers = te_arena_alloc(a, (n ? n : 1) * sizeof *numbers);
  te_string_list *lists = te_arena_alloc(a, (n ? n : 1) * sizeof *lists);
  if (!keys || !numbers || !lists) return false;
  size_t k = 0;
  for (size_t i = 0; i < entries->n; i++) {
    const setting_entry *e = (const setting_entry *)entries->items[i];
    if (e->def != def || !e->map_id) continue;
    keys[k] = e->map_id;
    numbers[k] = e->value.number;
    lists[k].n = e->value.n_items;
    lists[k].items = e->value.items;
    k++;
  }
  if (def->type == TE_SETTING_NUMBER_MAP) {
    te_number_map *m = member(s, def);
    *m = (te_number_map){n, keys, numbers, def->absent};
  } else {
    te_list_map *m = member(s, def);
    *m = (te_list_map){n, keys, lists};
  }
  return true;
}

bool te_settings_resolve(const te_list *entries, te_arena *a, te_settings *out, bool *set) {
  memset(out, 0, sizeof *out);
  for (size_t r = 0; r < N_ROWS; r++) {
    set[r] = false;
    if (TABLE[r].type == TE_SETTING_NUMBER_MAP)
      ((te_number_map *)member(out, &TABLE[r]))->absent = TABLE[r].absent;
  }
  for (size_t i = 0; i < entries->n; i++) {
    const setting_entry *e = (const setting_entry *)entries->items[i];
    set[e->def - TABLE] = true;
    if (!e->map_id) store_plain(out, e->def, &e->value);
  }
  for (size_t r = 0; r < N_ROWS; r++)
    if ((TABLE[r].type == TE_SETTING_NUMBER_MAP || TABLE[r].type == TE_SETTING_LIST_MAP) &&
        !store_map(entries, a, out, &TABLE[r]))
      return false;
  return true;
}
