/*
 * cli/rules_setup.h - finding and loading the rule packs of a run.
 */
#ifndef TRIAGE_CLI_RULES_SETUP_H
#define TRIAGE_CLI_RULES_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/commands.h"
#include "triage/rules.h"

/* Directory of the default packs: $TRIAGE_RULES_DIR, else <dir of the binary>/rules, else
 * <dir of the binary>/../share/triage/rules, else the compiled-in install location.
 * Writes into buf and returns buf, or NULL if none exists. */
const char *triage_default_rules_dir(const char *argv0, char *buf, size_t cap);

/* Path of the compatibility pack NAME: <default rules dir>/compat/NAME.yaml (shipped and
 * installed with the default packs). NAME is letters, digits, '-' and '_'. Returns buf,
 * or NULL after writing one line to err ("--compat: ..."); the caller exits 2 (a usage
 * error: --compat names a mode that does not exist). */
const char *triage_compat_pack(const char *argv0, const char *name, char *buf, size_t cap,
                               FILE *err);

/* Which packs a run loads: the defaults (unless no_defaults), then the compatibility
 * pack <default dir>/compat/<compat>.yaml (--compat), then each extra path (--rules). */
typedef struct triage_rules_setup_options {
  const char *const *extra;
  size_t n_extra;
  bool no_defaults;
  const char *compat; /* NULL = none */
} triage_rules_setup_options;

/* Loads the packs of o and finalizes. Diagnostics go to err as "FILE:LINE:COL: error:
 * MESSAGE". Returns NULL when any pack is invalid or unreadable (the caller exits 1; a
 * --compat name is checked with triage_compat_pack first, which exits 2). The caller owns
 * the result (te_rules_destroy). */
te_rules *triage_rules_setup(const char *argv0, const triage_rules_setup_options *o, FILE *err);

/* Writes each diagnostic of d to err as "FILE:LINE:COL: error: MESSAGE", then how many
 * were dropped (used by the run's setup and by `triage rules check|test`). */
void triage_print_diags(const te_diags *d, FILE *err);

#endif
