/*
 * cli/args.h - the one argv parser of the binary: table-driven options for the main
 * command and for every sub-command.
 *
 * A spec lists the options a command takes (name, kind, where the value goes in the
 * command's options struct, bounds, choices); the parser walks argv once: "--flag VALUE"
 * and "--flag=VALUE", "--" ends the options, "-" is a word. Words go to the spec's word
 * handler, which may stop the walk (the main command stops at a sub-command's name when
 * no trace has been named yet, so `triage --output rules TRACE` is an output file named
 * "rules", not the rules sub-command).
 *
 * Ownership: values point into argv; CLI_LIST arrays are malloc'd into the options
 * struct (the command frees them).
 */
#ifndef TRIAGE_CLI_ARGS_H
#define TRIAGE_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum cli_kind {
  CLI_STRING = 0, /* const char *, non-empty */
  CLI_INT,        /* int in [lo, hi] */
  CLI_LONG,       /* long in [lo, hi] */
  CLI_NUMBER,     /* double in [lo, hi] */
  CLI_FLAG,       /* bool = value (no argument) */
  CLI_SET_INT,    /* int = value (no argument) */
  CLI_CHOICE,     /* int = index of the argument in choices ("a|b|c") */
  CLI_LIST,       /* appended to a (const char **, size_t) pair at offset, offset2 */
  CLI_HELP,       /* stops the walk with CLI_PARSE_HELP */
  CLI_VERSION     /* stops the walk with CLI_PARSE_VERSION */
} cli_kind;

typedef struct cli_option {
  const char *name;  /* "--output" */
  const char *alias; /* "-h", or NULL */
  cli_kind kind;
  size_t offset;       /* of the member in the command's options struct */
  size_t offset2;      /* CLI_LIST: of the count member */
  int value;           /* CLI_FLAG / CLI_SET_INT: the value stored */
  double lo, hi;       /* CLI_INT, CLI_LONG, CLI_NUMBER */
  const char *choices; /* CLI_CHOICE: accepted words, '|'-separated; several words may
                          share an index with ',' ("markdown,md|json") */
  const char *expect;  /* how a bad value is described ("a non-negative integer") */
  const char *metavar; /* CLI_LIST / value: "needs METAVAR" when missing; NULL = "a value" */
} cli_option;

typedef enum cli_parse_result {
  CLI_PARSE_OK = 0,
  CLI_PARSE_USAGE = 2, /* one line in err; exit 2 */
  CLI_PARSE_HELP = 3,
  CLI_PARSE_VERSION = 4,
  CLI_PARSE_STOP = 5 /* the word handler stopped at *stop (a sub-command) */
} cli_parse_result;

typedef struct cli_spec {
  const cli_option *options;
  size_t n_options;
  /* said after "unknown option 'X'": " (see triage --help)" */
  const char *unknown_suffix;
  /* Called for each word (positional argument) with the options struct; returns 0 to go
   * on, CLI_PARSE_STOP to stop at this word, or CLI_PARSE_USAGE with err filled. */
  int (*word)(void *opts, const char *word, bool after_dashes, char *err, size_t cap);
} cli_spec;

/* Parses argv[first..argc) into opts. *stop receives the index of the word that stopped
 * the walk (CLI_PARSE_STOP). */
cli_parse_result cli_parse(const cli_spec *spec, int argc, char **argv, int first, void *opts,
                           int *stop, char *err, size_t cap);

/* Writes a usage error into err; returns CLI_PARSE_USAGE. */
int cli_usage_error(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
