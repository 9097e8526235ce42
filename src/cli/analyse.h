/*
 * cli/analyse.h - the analysis: `triage TRACE` (or `triage triage TRACE`, the reference
 * tool's spelling). Rule packs, live capture when asked, an_run, one report; its
 * arguments are cli/options.h.
 */
#ifndef TRIAGE_CLI_ANALYSE_H
#define TRIAGE_CLI_ANALYSE_H

#include "cli/commands.h"

extern const cli_command cli_analyse_command;

#endif
