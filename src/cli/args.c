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

int cli_usage_error(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return CLI_PARSE_USAGE;
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

static int list_append(void *opts, const cli_option *o, const char *v, char *err, size_t cap) {
  const char ***items = (const char ***)(void *)((char *)opts + o->offset);
  size_t *n = (size_t *)(void *)((char *)opts + o->offset2);
  const char **p = realloc(*items, (*n + 1) * sizeof *p);
  if (!p) return cli_usage_error(err, cap, "%s: out of memory", o->name);
  *items = p;
  p[(*n)++] = v;
  return 0;
}

/* Stores the value v of option o. */
static int set_value(void *opts, const cli_option *o, const char *v, char *err, size_t cap) {
  char *member = (char *)opts + o->offset;
  long l;
  double x;
  int idx;
  if (!*v && (o->kind == CLI_STRING || o->kind == CLI_LIST))
    return cli_usage_error(err, cap, "%s: empty value", o->name);
  switch (o->kind) {
    case CLI_STRING:
      *(const char **)(void *)member = v;
      return 0;
    case CLI_LIST:
      return list_append(opts, o, v, err, cap);
    case CLI_INT:
      if (!parse_long(v, o->lo, o->hi, &l)) return bad_value(o, v, err, cap);
      *(int *)(void *)member = (int)l;
      return 0;
    case CLI_LONG:
      if (!parse_long(v, o->lo, o->hi, &l)) return bad_value(o, v, err, cap);
      *(long *)(void *)member = l;
      return 0;
    case CLI_NUMBER:
      if (!parse_number(v, o->lo, o->hi, &x)) return bad_value(o, v, err, cap);
      *(double *)(void *)member = x;
      return 0;
    case CLI_CHOICE:
      if ((idx = choice_index(o->choices, v)) < 0) return bad_value(o, v, err, cap);
      *(int *)(void *)member = idx;
      return 0;
    case CLI_FLAG:
    case CLI_SET_INT:
    case CLI_HELP:
    case CLI_VERSION:
      break;
  }
  return cli_usage_error(err, cap, "%s: unhandled option", o->name);
}

static const cli_option *find(const cli_spec *spec, const char *arg, size_t len) {
  for (size_t k = 0; k < spec->n_options; k++) {
    const cli_option *o = &spec->options[k];
    if ((strlen(o->name) == len && strncmp(o->name, arg, len) == 0) ||
        (o->alias && strlen(o->alias) == len && strncmp(o->alias, arg, len) == 0))
      return o;
  }
  return NULL;
}

/* One option at argv[*i] (its value may be argv[*i + 1]). */
static int take_option(const cli_spec *spec, int argc, char **argv, int *i, void *opts, char *err,
                       size_t cap) {
  const char *a = argv[*i];
  const char *eq = strchr(a, '=');
  const cli_option *o = find(spec, a, eq ? (size_t)(eq - a) : strlen(a));
  if (!o) return cli_usage_error(err, cap, "unknown option '%s'%s", a, spec->unknown_suffix);
  switch (o->kind) {
    case CLI_HELP:
      return CLI_PARSE_HELP;
    case CLI_VERSION:
      return CLI_PARSE_VERSION;
    case CLI_FLAG:
    case CLI_SET_INT:
      if (eq) return cli_usage_error(err, cap, "%s takes no value", o->name);
      if (o->kind == CLI_FLAG)
        *(bool *)(void *)((char *)opts + o->offset) = o->value != 0;
      else
        *(int *)(void *)((char *)opts + o->offset) = o->value;
      return 0;
    default:
      break;
  }
  const char *v;
  if (eq) {
    v = eq + 1;
  } else {
    if (*i + 1 >= argc)
      return cli_usage_error(err, cap, "%s needs %s", o->name, o->metavar ? o->metavar : "a value");
    v = argv[++*i];
  }
  return set_value(opts, o, v, err, cap);
}

cli_parse_result cli_parse(const cli_spec *spec, int argc, char **argv, int first, void *opts,
                           int *stop, char *err, size_t cap) {
  bool dashes = false;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    int rc;
    if (!dashes && strcmp(a, "--") == 0) {
      dashes = true;
      continue;
    }
    if (dashes || a[0] != '-' || strcmp(a, "-") == 0)
      rc = spec->word(opts, a, dashes, err, cap);
    else
      rc = take_option(spec, argc, argv, &i, opts, err, cap);
    if (rc == CLI_PARSE_STOP && stop) *stop = i;
    if (rc != 0) return (cli_parse_result)rc;
  }
  return CLI_PARSE_OK;
}
