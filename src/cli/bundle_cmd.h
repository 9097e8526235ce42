/*
 * cli/bundle_cmd.h - `triage bundle INPUT...`: many reports (traces, profile directories
 * or JSON reports) in one Markdown document (report/bundle_report.h). Not to be confused
 * with analysis/trace_view.c, the per-trace view of the analysis.
 */
#ifndef TRIAGE_CLI_BUNDLE_CMD_H
#define TRIAGE_CLI_BUNDLE_CMD_H

#include "cli/commands.h"

/* The handler of cli/commands.c's row: args is the cli_common, its operands the inputs. */
int cli_bundle_run(const cli_invocation *inv, const te_rules *rules, void *args);

#endif
