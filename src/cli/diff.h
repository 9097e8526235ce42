/*
 * cli/diff.h - `triage diff BEFORE AFTER`: each side a trace, a profile directory or a
 * JSON report (--format json); prints the per-stage comparison (analysis/diff.h).
 */
#ifndef TRIAGE_CLI_DIFF_H
#define TRIAGE_CLI_DIFF_H

#include "cli/commands.h"

/* Its arguments: the shared ones (operands BEFORE AFTER), --fail-on and --rank. */
typedef struct diff_args {
  cli_common common;
  int fail_on; /* 0 none, 1 regression */
  long rank;   /* --rank N: a profile-directory side is read for rank N; -1: its lowest */
} diff_args;

/* Defaults after the struct is zeroed (args is a diff_args). */
void diff_args_defaults(void *args);

/* Its own option rows. */
extern const cli_options CLI_DIFF_OPTIONS;

/* The handler of cli/commands.c's row: args is a diff_args. */
int cli_diff_run(const cli_invocation *inv, const te_rules *rules, void *args);

#endif
