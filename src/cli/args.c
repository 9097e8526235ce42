/*
 * cli/args.c - the table-driven argv parser (args.h).
 */
#include "cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

bool cli_list_push(cli_list *l, const char *s) {
  if (l->n == l->cap) {
    const char **v = ut_grow(l->items, &l->cap, l->n + 1, sizeof *v);
    if (!v) return false;
    l->items = v;
  }
  l->items[l->n++] = s;
  return true;
}

void cli_list_free(cli_list *l) {
  free(l->items);
  *l = (cli_list){0};
}

int cli_usage_error(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return CLI_PARSE_USAGE;
}

bool cli_option_takes_value(const cli_option *o) {
  switch (o->kind) {
    case CLI_FLAG:
    case CLI_SET_INT:
    case CLI_HELP:
    case CLI_VERSION:
    case CLI_HEADING:
      return false;
    default:
      return true;
  }
}

static bool parse_long(const char *s, double lo, double hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || (double)v < lo || (double)v > hi) return false;
  *out = v;
  return true;
}

static bool parse_number(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* Index of word among the choices ("a,b|c": a and b are 0, c is 1), or -1. */
static int choice_index(const char *choices, const char *word) {
  int idx = 0;
  size_t n = strlen(word);
  for (const char *c = choices; *c;) {
    size_t len = strcspn(c, ",|");
    if (len == n && strncmp(c, word, n) == 0) return idx;
    c += len;
    if (*c == '|') idx++;
    if (*c) c++;
  }
  return -1;
}

static int bad_value(const cli_option *o, const char *v, char *err, size_t cap) {
  if (o->kind == CLI_CHOICE)
    return cli_usage_error(err, cap, "%s: expected %s, got '%s'", o->name, o->expect, v);
  return cli_usage_error(err, cap, "%s: expected %s", o->name, o->expect);
}

/* Stores the value v of option o into the member at m. */
static int set_value(char *m, const cli_option *o, const char *v, char *err, size_t cap) {
  long l;
  double x;
  int idx;
  if (!*v && (o->kind == CLI_STRING || o->kind == CLI_LIST))
    return cli_usage_error(err, cap, "%s: empty value", o->name);
  switch (o->kind) {
    case CLI_STRING:
      *(const char **)(void *)m = v;
      return 0;
    case CLI_LIST:
      if (cli_list_push((cli_list *)(void *)m, v)) return 0;
      return cli_usage_error(err, cap, "%s: out of memory", o->name);
    case CLI_INT:
      if (!parse_long(v, o->lo, o->hi, &l)) return bad_value(o, v, err, cap);
      *(int *)(void *)m = (int)l;
      return 0;
    case CLI_LONG:
      if (!parse_long(v, o->lo, o->hi, &l)) return bad_value(o, v, err, cap);
      *(long *)(void *)m = l;
      return 0;
    case CLI_NUMBER:
      if (!parse_number(v, o->lo, o->hi, &x)) return bad_value(o, v, err, cap);
      *(double *)(void *)m = x;
      return 0;
    case CLI_CHOICE:
      if ((idx = choice_index(o->choices, v)) < 0) return bad_value(o, v, err, cap);
      *(int *)(void *)m = idx;
      return 0;
    default:
      break;
  }
  return cli_usage_error(err, cap, "%s: unhandled option", o->name);
}

static bool names(const char *name, const char *arg, size_t len) {
  return name && strlen(name) == len && strncmp(name, arg, len) == 0;
}

const cli_option *cli_options_find(cli_options table, const char *arg) {
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  for (size_t k = 0; k < table.n; k++) {
    const cli_option *o = &table.rows[k];
    if (o->kind != CLI_HEADING && (names(o->name, arg, len) || names(o->alias, arg, len))) return o;
  }
  return NULL;
}

const cli_option *cli_spec_find(const cli_spec *spec, const char *arg) {
  const cli_option *o = NULL;
  for (size_t p = 0; !o && p < sizeof spec->parts / sizeof spec->parts[0]; p++)
    o = cli_options_find(spec->parts[p], arg);
  return o;
}

/* A flag's value, stored without an argument. */
static int set_flag(char *m, const cli_option *o, bool has_value, char *err, size_t cap) {
  if (has_value) return cli_usage_error(err, cap, "%s takes no value", o->name);
  if (o->kind == CLI_FLAG)
    *(bool *)(void *)m = o->value != 0;
  else
    *(int *)(void *)m = o->value;
  return 0;
}

/* One option at argv[*i] (its value may be argv[*i + 1]). */
static int take_option(const cli_spec *spec, int argc, char **argv, int *i, void *args, char *err,
                       size_t cap) {
  const char *a = argv[*i];
  const char *eq = strchr(a, '=');
  const cli_option *o = cli_spec_find(spec, a);
  if (!o) return spec->unknown(spec->ctx, a, err, cap);
  char *member = (char *)args + o->offset;
  if (o->kind == CLI_HELP) return CLI_PARSE_HELP;
  if (o->kind == CLI_VERSION) return CLI_PARSE_VERSION;
  if (!cli_option_takes_value(o)) return set_flag(member, o, eq != NULL, err, cap);
  const char *v;
  if (eq) {
    v = eq + 1;
  } else {
    if (*i + 1 >= argc)
      return cli_usage_error(err, cap, "%s needs a value%s%s%s", o->name, o->metavar ? " (" : "",
                             o->metavar ? o->metavar : "", o->metavar ? ")" : "");
    v = argv[++*i];
  }
  return set_value(member, o, v, err, cap);
}

cli_parse_result cli_parse(const cli_spec *spec, int argc, char **argv, int first, int skip,
                           void *args, char *err, size_t cap) {
  bool dashes = false;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    int rc;
    if (i == skip) continue;
    if (!dashes && strcmp(a, "--") == 0) {
      dashes = true;
      continue;
    }
    if (dashes || a[0] != '-' || strcmp(a, "-") == 0)
      rc = spec->word(args, a, err, cap);
    else
      rc = take_option(spec, argc, argv, &i, args, err, cap);
    if (rc != 0) return (cli_parse_result)rc;
  }
  return CLI_PARSE_OK;
}
