/*
 * cli/merge.h - `triage merge REPORT...`: the Ranks section built from per-rank JSON
 * reports (`triage --rank N --format json DIR`, run one job per rank where the traces
 * are; docs/scale-out.md) or one rank's traces. Same numbers as reading the traces at
 * once.
 */
#ifndef TRIAGE_CLI_MERGE_H
#define TRIAGE_CLI_MERGE_H

#include "cli/commands.h"

/* The handler of cli/commands.c's row: args is the cli_common, its operands the inputs. */
int cli_merge_run(const cli_invocation *inv, const te_rules *rules, void *args);

#endif
