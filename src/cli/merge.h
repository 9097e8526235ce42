/*
 * cli/merge.h - `triage merge REPORT.json...`: the Ranks section built from per-rank JSON
 * reports (`triage --rank N --format json DIR` or one rank's trace, run one job per rank
 * where the traces are; docs/scale-out.md). Same numbers as reading the traces at once.
 */
#ifndef TRIAGE_CLI_MERGE_H
#define TRIAGE_CLI_MERGE_H

#include "cli/options.h"

/* argv[0] is "merge". Returns an exit code (cli/exit.h). */
int triage_merge_main(const char *argv0, const triage_options *before, int argc, char **argv);

#endif
