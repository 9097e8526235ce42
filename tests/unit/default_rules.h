/* The unit tests' default rule packs: the repository's rules/ loaded as the CLI loads them.
 * The caller owns the handle (te_rules_destroy). Criterion's assertion fails the test when
 * the packs do not load. Header-only: each test binary is one source file. */
#ifndef TRIAGE_TESTS_DEFAULT_RULES_H
#define TRIAGE_TESTS_DEFAULT_RULES_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/rules_setup.h"

static inline te_rules *test_default_rules(void) {
  setenv("TRIAGE_RULES_DIR", TRIAGE_SOURCE_DIR "/rules", 1);
  triage_rules_setup_options so = {0};
  te_rules *r = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(r, "default packs must load");
  return r;
}

#endif
