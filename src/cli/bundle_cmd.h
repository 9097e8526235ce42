/*
 * cli/bundle_cmd.h - `triage bundle INPUT...`: many reports (traces, profile directories
 * or JSON reports) in one Markdown document (report/bundle_report.h). Not to be confused
 * with analysis/bundle.c, the per-trace view of the analysis.
 */
#ifndef TRIAGE_CLI_BUNDLE_CMD_H
#define TRIAGE_CLI_BUNDLE_CMD_H

#include "cli/commands.h"

extern const cli_command cli_bundle_command;

#endif
