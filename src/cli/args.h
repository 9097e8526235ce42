/*
 * cli/args.h - the one argv parser of the binary: table-driven options for every command.
 *
 * A command's spec is made of option tables (its own options, then the options every
 * command shares, cli/common.h); each row names the option, its kind, where the value
 * goes in the command's arguments struct, bounds or choices, and its line of --help
 * (cli/help.c writes usage and --help from the same rows). The parser walks argv once:
 * "--flag VALUE" and "--flag=VALUE", "--" ends the options, "-" is a word; words go to
 * the spec's word handler. One argument may be skipped (the command's word).
 *
 * Ownership: values point into argv; a cli_list's array is malloc'd (cli_list_free).
 */
#ifndef TRIAGE_CLI_ARGS_H
#define TRIAGE_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/* A growing list of strings (option values, words): items borrowed, the array owned. */
typedef struct cli_list {
  const char **items;
  size_t n, cap;
} cli_list;

/* Appends s; false when out of memory (the list unchanged). */
bool cli_list_push(cli_list *l, const char *s);
void cli_list_free(cli_list *l);

typedef enum cli_kind {
  CLI_STRING = 0, /* const char *, non-empty */
  CLI_INT,        /* int in [lo, hi] */
  CLI_LONG,       /* long in [lo, hi] */
  CLI_NUMBER,     /* double in [lo, hi] */
  CLI_FLAG,       /* bool = value (no argument) */
  CLI_SET_INT,    /* int = value (no argument) */
  CLI_CHOICE,     /* int = index of the argument in choices ("a|b|c") */
  CLI_LIST,       /* appended to the cli_list at offset */
  CLI_HELP,       /* stops the walk with CLI_PARSE_HELP */
  CLI_VERSION,    /* stops the walk with CLI_PARSE_VERSION */
  CLI_HEADING     /* not an option: a heading of --help ("live capture:"), in help */
} cli_kind;

typedef struct cli_option {
  const char *name;  /* "--output" */
  const char *alias; /* "-o", or NULL */
  cli_kind kind;
  size_t offset;       /* of the member in the command's arguments struct */
  int value;           /* CLI_FLAG / CLI_SET_INT: the value stored */
  double lo, hi;       /* CLI_INT, CLI_LONG, CLI_NUMBER */
  const char *choices; /* CLI_CHOICE: accepted words, '|'-separated; several words may
                          share an index with ',' ("markdown,md|json") */
  const char *expect;  /* how a bad value is described ("a non-negative integer") */
  const char *metavar; /* the value in --help and in "needs METAVAR"; NULL = "a value" */
  const char *help;    /* its line(s) in --help ('\n' breaks a line) */
} cli_option;

/* Rows of the common kinds; off is offsetof the member in the arguments struct. */
#define CLI_HEADING_ROW(text) \
  { .kind = CLI_HEADING, .help = text }
#define CLI_STRING_ROW(n, off, mv, h) \
  { .name = n, .kind = CLI_STRING, .offset = off, .metavar = mv, .help = h }
#define CLI_LIST_ROW(n, off, mv, h) \
  { .name = n, .kind = CLI_LIST, .offset = off, .metavar = mv, .help = h }
#define CLI_FLAG_ROW(n, off, v, h) \
  { .name = n, .kind = CLI_FLAG, .offset = off, .value = v, .help = h }
#define CLI_SET_INT_ROW(n, off, v, h) \
  { .name = n, .kind = CLI_SET_INT, .offset = off, .value = v, .help = h }

/* Whether the option reads a value (an argument of its own, or "=VALUE"). */
bool cli_option_takes_value(const cli_option *o);

typedef enum cli_parse_result {
  CLI_PARSE_OK = 0,
  CLI_PARSE_USAGE = 2, /* one line in err; exit 2 */
  CLI_PARSE_HELP = 3,
  CLI_PARSE_VERSION = 4
} cli_parse_result;

/* One option table of a spec. */
typedef struct cli_options {
  const cli_option *rows;
  size_t n;
} cli_options;

#define CLI_OPTIONS(table) \
  { table, sizeof table / sizeof table[0] }

typedef struct cli_spec {
  cli_options parts[2]; /* searched in order: the command's own, then the shared ones */
  /* Called for each word (positional argument); returns 0 to go on, or CLI_PARSE_USAGE
   * with err filled. */
  int (*word)(void *args, const char *word, char *err, size_t cap);
  /* Called for an option no part has; fills err and returns CLI_PARSE_USAGE. */
  int (*unknown)(const void *ctx, const char *option, char *err, size_t cap);
  const void *ctx; /* of unknown */
} cli_spec;

/* The row of spec naming arg ("--x", "--x=V" or an alias), or NULL. */
const cli_option *cli_spec_find(const cli_spec *spec, const char *arg);
/* The row of table naming arg, or NULL. */
const cli_option *cli_options_find(cli_options table, const char *arg);

/* Parses argv[first..argc) into args, passing over argv[skip] (-1: none). */
cli_parse_result cli_parse(const cli_spec *spec, int argc, char **argv, int first, int skip,
                           void *args, char *err, size_t cap);

/* Writes a usage error into err; returns CLI_PARSE_USAGE. */
int cli_usage_error(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
