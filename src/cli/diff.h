/*
 * cli/diff.h - `triage diff BEFORE AFTER`: each side a trace, a profile directory or a
 * JSON report (--format json); prints the per-stage comparison (analysis/diff.h).
 */
#ifndef TRIAGE_CLI_DIFF_H
#define TRIAGE_CLI_DIFF_H

#include "cli/commands.h"

extern const cli_command cli_diff_command;

#endif
