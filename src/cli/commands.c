/*
 * cli/commands.c - the table of sub-commands (commands.h).
 */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

#include "cli/bundle_cmd.h"
#include "cli/diff.h"
#include "cli/merge.h"
#include "cli/rules_setup.h"

static int run_rules(const char *argv0, const triage_options *before, int argc, char **argv) {
  triage_rules_setup_options so = {before->rules_paths, before->n_rules_paths,
                                   before->no_default_rules, before->compat};
  return triage_rules_main(argv0, argc, argv, &so, stdout, stderr);
}

static const cli_command COMMANDS[] = {
    {"rules", "rules check|list|explain|test ...", run_rules},
    {"diff", "diff BEFORE AFTER [--format markdown|json|html] [-o|--output FILE]",
     triage_diff_main},
    {"merge", "merge REPORT.json... [--format markdown|json] [--output FILE]", triage_merge_main},
    {"bundle", "bundle INPUT... [--format markdown|html] [-o FILE]", triage_bundle_main},
};

size_t cli_command_count(void) { return sizeof COMMANDS / sizeof COMMANDS[0]; }

const cli_command *cli_command_at(size_t i) {
  return i < cli_command_count() ? &COMMANDS[i] : NULL;
}

const cli_command *cli_command_find(const char *name) {
  for (size_t i = 0; name && i < cli_command_count(); i++)
    if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
  return NULL;
}
