/*
 * cli/options.h - everything the command line can say, parsed once by cli/main.c.
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

typedef enum triage_format { TRIAGE_FORMAT_MARKDOWN = 0, TRIAGE_FORMAT_JSON = 1 } triage_format;

typedef struct triage_options {
  /* inputs */
  const char *input;          /* single-trace: file, directory or "-" */
  const char *mapping_input;  /* two-trace */
  const char *formal_input;
  /* live capture (src/live): the --url family */
  lv_options live;
  /* analysis */
  const char *framework;              /* "auto" or a spelling te_rules_framework_lookup knows */
  const char *pid_substring;
  double min_share_pct;               /* <0 = from rules (kernel_table.min_share_pct) */
  long kernel_table_limit;            /* 0 = all */
  long overlap_table_limit;           /* 0 = all */
  /* output */
  triage_format format;
  const char *output_path;            /* NULL = stdout */
  const char *kernel_map_path;        /* --kernel-map FILE */
  bool quiet;
  /* rules */
  const char **rules_paths;           /* --rules, in order */
  size_t n_rules_paths;
  bool no_default_rules;
} triage_options;

/* Parser results (cli/options.c). */
enum {
  TRIAGE_PARSE_OK = 0,
  TRIAGE_PARSE_USAGE = 2,   /* one-line message in err; exit 2 */
  TRIAGE_PARSE_HELP = 3,    /* --help / -h: print triage_usage, exit 0 */
  TRIAGE_PARSE_VERSION = 4  /* --version */
};

/* Fills *o with the defaults of reference 1.1 (live capture: lv_options_defaults). */
void triage_options_defaults(triage_options *o);
/* Parses argv[first..argc): "--flag VALUE", "--flag=VALUE", one positional trace (same
 * as --input). Also checks the mode rules (single vs two-trace, exactly one source per
 * side). */
int triage_options_parse(int argc, char **argv, int first, triage_options *o, char *err,
                         size_t err_cap);
void triage_options_free(triage_options *o);
void triage_usage(FILE *out);

#endif
