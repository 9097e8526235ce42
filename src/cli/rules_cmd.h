/*
 * cli/rules_cmd.h - the `triage rules check|list|explain|test` sub-commands.
 *
 * Ownership: nothing here is allocated for the caller; cli_rules_run loads and frees the
 * packs it checks, lists or explains.
 */
#ifndef TRIAGE_CLI_RULES_CMD_H
#define TRIAGE_CLI_RULES_CMD_H

#include "cli/commands.h"
#include "triage/rules.h"

/* `triage rules check|list|explain|test ...` (the arguments of the command's row): check,
 * list and test take packs as operands; explain takes packs (existing *.yaml / *.yml
 * files or directories) and names, or --pattern ID and a TRACE. check also warns about
 * dead classifier rules. Exit status: 0 ok, 1 invalid packs / failing examples, 2 usage
 * (an unknown --compat name included). */
typedef struct rules_cli_args {
  cli_common common;
  const char *pattern; /* explain --pattern ID */
} rules_cli_args;

/* Its own option rows (--pattern). */
extern const cli_options CLI_RULES_OPTIONS;

/* The handler of cli/commands.c's row: args is a rules_cli_args, its first operand the rules
 * command; it loads its packs itself (rules is NULL): its operands may be packs too. */
int cli_rules_run(const cli_invocation *inv, const te_rules *rules, void *args);

#endif
