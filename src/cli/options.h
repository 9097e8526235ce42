/*
 * cli/options.h - the analysis command's arguments (`triage TRACE`): its own option rows,
 * the defaults and the mode checks. The shared options are in the leading cli_common
 * (cli/common.h); the command itself is cli/analyse.c.
 *
 * Ownership: string members point into argv (never freed); the lists of the cli_common
 * are freed by cli_common_free.
 */
#ifndef TRIAGE_CLI_OPTIONS_H
#define TRIAGE_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/args.h"
#include "cli/common.h"
#include "live/live.h"

/* --layout; TRIAGE_LAYOUT_UNSET: none given (then --compat reference implies reference). */
typedef enum triage_layout {
  TRIAGE_LAYOUT_UNSET = -1,
  TRIAGE_LAYOUT_DEFAULT = 0,
  TRIAGE_LAYOUT_REFERENCE = 1
} triage_layout;

typedef struct triage_options {
  cli_common common; /* first: the shared rows store into it */
  /* inputs */
  const char *input;         /* single-trace: file, directory or "-" (--input or TRACE) */
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
  /* output */
  int layout;                  /* triage_layout */
  const char *kernel_map_path; /* --kernel-map FILE */
  bool full_names;             /* --full-names: full kernel names in tables */
} triage_options;

/* The analysis's own option rows. */
extern const cli_options TRIAGE_OPTIONS;

/* Defaults after the struct is zeroed (args is a triage_options). */
void triage_options_defaults(void *args);
/* The positional TRACE, then single-trace or two-trace mode with exactly one source per
 * side: 0, or CLI_PARSE_USAGE with err. */
int triage_options_check(void *args, char *err, size_t cap);
/* The layout to render: --layout, else reference with --compat reference, else default. */
triage_layout triage_options_layout(const triage_options *o);

#endif
