/*
 * cli/diff.h - `triage diff BEFORE AFTER`: each side a trace, a profile directory or a
 * JSON report (--format json); prints the per-stage comparison (analysis/diff.h).
 */
#ifndef TRIAGE_CLI_DIFF_H
#define TRIAGE_CLI_DIFF_H

#include "cli/options.h"

/* argv[0] is "diff". Returns an exit code (cli/exit.h). */
int triage_diff_main(const char *argv0, const triage_options *before, int argc, char **argv);

#endif
