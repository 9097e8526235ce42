/*
 * cli/commands.h - the sub-commands of the binary (`triage rules ...`).
 *
 * Adding one: a row in the table of commands.c (name, usage line, handler) and the
 * handler. The main parser stops at the first word that names a command when no trace
 * has been named yet; the options before the word (--rules, --compat, ...) are parsed as
 * usual and handed over, the words after it go to the handler as its argv.
 */
#ifndef TRIAGE_CLI_COMMANDS_H
#define TRIAGE_CLI_COMMANDS_H

#include <stddef.h>

#include "cli/options.h"

typedef struct cli_command {
  const char *name;
  const char *usage; /* the line `triage --help` shows after "triage " */
  /* Runs the command: argv[0] is its name. Returns the exit status (cli/exit.h). */
  int (*run)(const char *argv0, const triage_options *before, int argc, char **argv);
} cli_command;

const cli_command *cli_command_find(const char *name);
size_t cli_command_count(void);
const cli_command *cli_command_at(size_t i);

#endif
