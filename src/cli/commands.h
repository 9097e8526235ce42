/*
 * cli/commands.h - the commands of the binary, and the one way each is run.
 *
 * Every command is one row of the table in commands.c: the analysis (`triage TRACE`, also
 * spelled `triage triage TRACE` as the reference tool's first word) and the words rules,
 * diff, merge and bundle. A command's option spec is its own option table plus the
 * shared one (cli/common.h: --format, -o/--output, --rules, --no-default-rules, --compat,
 * --quiet, --workers, --help, --version). cli_main finds the command's word (the first
 * word that is not an option's value), then reads every argument before and after it
 * with that spec: an option the command does not take is a usage error naming it (exit
 * 2), never dropped. Usage and --help are written from the same rows (cli/help.c), and
 * test_cli_options checks docs/triage.1 and docs/usage.md against them.
 *
 * Adding a command: its handler `int run(const cli_invocation *inv, const te_rules *rules,
 * void *args)` in a file of its own (rules: the packs of the shared options, loaded by
 * cli_main when the row asks); its arguments struct when it has options of its own (it
 * starts with `cli_common common;`; with none, args is the cli_common) and their table
 * (cli/args.h rows: name, kind, offsetof the member, metavar, help line); one COMMAND row
 * in commands.c (word, usage forms, summary, formats, operand counts, arguments,
 * handler); its SYNOPSIS line and section in docs/triage.1 and docs/usage.md. Adding an
 * option to a command: one row in its table (and its line in the man page).
 *
 * Ownership: the table is static; cli_main owns the arguments struct of the run.
 */
#ifndef TRIAGE_CLI_COMMANDS_H
#define TRIAGE_CLI_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/args.h"
#include "cli/common.h"

typedef struct cli_command {
  const char *name;             /* its word; "triage" for the analysis */
  const char *const *forms;     /* what follows "triage WORD [options]" in usage, NULL-ended */
  const char *summary;          /* one line: triage --help's list, the top of its --help */
  const char *description;      /* more lines of its --help (may be NULL) */
  const cli_options *options;   /* its own option rows, NULL: none (the shared ones follow) */
  unsigned formats;             /* CLI_FORMAT_BIT of each format it writes; 0: none */
  size_t min_operands;          /* words it needs */
  size_t max_operands;          /* words it takes (SIZE_MAX: any number) */
  size_t args_size;             /* of its arguments struct (a cli_common first) */
  void (*defaults)(void *args); /* after the struct is zeroed; may be NULL */
  /* Checks what the rows cannot (modes, operand meanings); 0 or CLI_PARSE_USAGE with err.
   * May be NULL. */
  int (*check)(void *args, char *err, size_t cap);
  /* Whether cli_main loads the packs of the shared options for it (every setting set)
   * and hands them to run; false: run gets NULL (rules loads its own). */
  bool loads_rules;
  /* Runs it; returns the exit status (cli/exit.h). */
  int (*run)(const cli_invocation *inv, const te_rules *rules, void *args);
  /* Its exit statuses beyond 0, 1 and 2, for --help ("3 a regression ..."); may be NULL. */
  const char *exit_more;
} cli_command;

size_t cli_command_count(void);
/* The i-th command (0 is the analysis), or NULL. */
const cli_command *cli_command_at(size_t i);
/* The command whose word is name, or NULL. */
const cli_command *cli_command_find(const char *name);
/* Its own option rows (none when the row has no table). */
cli_options cli_command_options(const cli_command *cmd);
/* Its spec: its own options, then the shared ones. */
cli_spec cli_command_spec(const cli_command *cmd);

/* Index of the command's word in argv (the first word that is no option's value, when it
 * names a command), or -1: the analysis. */
int cli_command_word(int argc, char **argv);

/* The binary: finds the command, reads the command line, runs it. Returns the exit
 * status. */
int cli_main(int argc, char **argv);

#endif
