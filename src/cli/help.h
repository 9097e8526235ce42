/*
 * cli/help.h - usage lines and --help, written from the command table and the option
 * rows (cli/commands.h, cli/args.h): nothing here repeats an option or a usage line.
 *
 * Ownership: nothing is retained; buffers are the caller's.
 */
#ifndef TRIAGE_CLI_HELP_H
#define TRIAGE_CLI_HELP_H

#include <stddef.h>
#include <stdio.h>

#include "cli/commands.h"

/* "triage diff [options] BEFORE AFTER": the form-th usage line of cmd (forms[form]). */
void cli_synopsis(const cli_command *cmd, size_t form, char *buf, size_t cap);

/* The --help of cmd; the analysis's also lists every command. Returns < 0 on a write
 * error. */
int cli_help(const cli_command *cmd, FILE *out);

#endif
