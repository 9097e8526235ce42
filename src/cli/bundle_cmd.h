/*
 * cli/bundle_cmd.h - `triage bundle INPUT...`: many reports (traces, profile directories
 * or JSON reports) in one Markdown document (report/bundle_report.h). Not to be confused
 * with analysis/bundle.c, the per-trace view of the analysis.
 */
#ifndef TRIAGE_CLI_BUNDLE_CMD_H
#define TRIAGE_CLI_BUNDLE_CMD_H

#include "cli/options.h"

/* argv[0] is "bundle". Returns an exit code (cli/exit.h). */
int triage_bundle_main(const char *argv0, const triage_options *before, int argc, char **argv);

#endif
