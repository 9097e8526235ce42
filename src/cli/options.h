/*
 * cli/options.h - everything the command line can say, parsed once (cli/args.h) by
 * triage_options_parse: the options of the main command (analyse a trace), the options
 * that may precede a sub-command word (`triage --rules X rules check`), and which
 * sub-command (cli/commands.h) was named.
 *
 * Ownership: string members point into argv (never freed); the rules_paths array is
 * owned by the struct and released by triage_options_free.
 */
#ifndef TRIAGE_CLI_OPTIONS_H
#define TRIAGE_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "live/live.h"

/* TRIAGE_FORMAT_UNSET: no --format given; the parser then picks html for an --output
 * ending in .html/.htm and markdown otherwise. */
typedef enum triage_format {
  TRIAGE_FORMAT_UNSET = -1,
  TRIAGE_FORMAT_MARKDOWN = 0,
  TRIAGE_FORMAT_JSON = 1,
  TRIAGE_FORMAT_HTML = 2
} triage_format;

/* --layout; TRIAGE_LAYOUT_UNSET: none given (then --compat reference implies reference). */
typedef enum triage_layout {
  TRIAGE_LAYOUT_UNSET = -1,
  TRIAGE_LAYOUT_DEFAULT = 0,
  TRIAGE_LAYOUT_REFERENCE = 1
} triage_layout;

typedef struct triage_options {
  /* inputs */
  const char *trace;         /* the positional TRACE (becomes input) */
  const char *input;         /* single-trace: file, directory or "-" */
  const char *mapping_input; /* two-trace */
  const char *formal_input;
  /* live capture (src/live): the --url family */
  lv_options live;
  /* analysis */
  const char *framework; /* "auto" or a spelling te_rules_framework_lookup knows */
  const char *pid_substring;
  double min_share_pct;     /* <0 = from rules (kernel_table.min_share_pct) */
  long kernel_table_limit;  /* 0 = all */
  long rank;                /* --rank N; -1 = the lowest, with the Ranks section */
  long overlap_table_limit; /* 0 = all */
  unsigned workers;         /* TRIAGE_WORKERS (1..AN_MAX_WORKERS); 0 = the online CPUs */
  /* output */
  int format;                  /* triage_format */
  int layout;                  /* triage_layout */
  const char *output_path;     /* NULL = stdout */
  const char *kernel_map_path; /* --kernel-map FILE */
  bool quiet;
  bool full_names; /* --full-names: full kernel names in tables */
  /* rules */
  const char **rules_paths; /* --rules, in order */
  size_t n_rules_paths;
  bool no_default_rules;
  const char *compat; /* --compat NAME: rules/compat/NAME.yaml */
  /* the sub-command named (cli/commands.h), NULL for the main command */
  const char *command;
  int command_argc; /* argv of the sub-command, its name first */
  char **command_argv;
} triage_options;

/* Parser results: CLI_PARSE_OK (the main command, options checked), CLI_PARSE_STOP (a
 * sub-command: command, command_argc/argv set), CLI_PARSE_USAGE (one line in err),
 * CLI_PARSE_HELP, CLI_PARSE_VERSION (cli/args.h). */
void triage_options_defaults(triage_options *o);
int triage_options_parse(int argc, char **argv, int first, triage_options *o, char *err,
                         size_t err_cap);
void triage_options_free(triage_options *o);
/* The layout to render: --layout, else reference with --compat reference, else default. */
triage_layout triage_options_layout(const triage_options *o);
void triage_usage(FILE *out);

#endif
