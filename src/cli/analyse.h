/*
 * cli/analyse.h - the analysis: `triage TRACE` (or `triage triage TRACE`, the reference
 * tool's spelling). Rule packs, live capture when asked, an_run, one report; its
 * arguments are cli/options.h.
 */
#ifndef TRIAGE_CLI_ANALYSE_H
#define TRIAGE_CLI_ANALYSE_H

#include "cli/commands.h"

/* The handler of cli/commands.c's row: args is a triage_options (cli/options.h). */
int cli_analyse_run(const cli_invocation *inv, const te_rules *rules, void *args);

#endif
