/*
 * cli/rules_setup.h - finding and loading the rule packs of a run, and the
 * `triage rules check|list|explain|test` sub-commands.
 */
#ifndef TRIAGE_CLI_RULES_SETUP_H
#define TRIAGE_CLI_RULES_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "triage/rules.h"

/* Directory of the default packs: $TRIAGE_RULES_DIR, else <dir of the binary>/rules, else
 * <dir of the binary>/../share/triage/rules, else the compiled-in install location.
 * Writes into buf and returns buf, or NULL if none exists. */
const char *triage_default_rules_dir(const char *argv0, char *buf, size_t cap);

/* Path of the compatibility pack NAME: <default rules dir>/compat/NAME.yaml (shipped and
 * installed with the default packs). NAME is letters, digits, '-' and '_'. Returns buf,
 * or NULL after writing one line to err ("--compat: ..."); the caller exits 2. */
const char *triage_compat_pack(const char *argv0, const char *name, char *buf, size_t cap,
                               FILE *err);

/* Loads defaults (unless no_defaults) then each extra path, and finalizes. Diagnostics go
 * to err as "FILE:LINE:COL: error: MESSAGE". Returns NULL when any pack is invalid or
 * unreadable (the caller exits 1). The caller owns the result (te_rules_destroy). */
te_rules *triage_rules_setup(const char *argv0, const char *const *extra, size_t n_extra,
                             bool no_defaults, FILE *err);

/* `triage rules SUBCOMMAND ...`: argv[0] is "rules". extra: packs to load after the
 * defaults (a --compat pack first, then --rules). check, list and test take packs as
 * operands; explain takes packs (existing *.yaml / *.yml files or directories) and
 * names. check also warns about dead classifier rules. Returns the process exit code
 * (0 ok, 1 invalid packs / failing examples, 2 usage). */
int triage_rules_main(const char *argv0, int argc, char **argv, const char *const *extra,
                      size_t n_extra, bool no_defaults, FILE *out, FILE *err);

#endif
