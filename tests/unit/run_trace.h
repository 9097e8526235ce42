/* The unit tests' one-call analysis of an in-memory trace: the report an_run makes of
 * data under rules r, with the kernel-table bar of the packs (min_share_pct -1), and with
 * framework fw given as on the command line (NULL: detected from the trace). Criterion's
 * assertion fails the test when the run fails. The caller owns the report
 * (an_report_destroy). Header-only: each test binary is one source file. */
#ifndef TRIAGE_TESTS_RUN_TRACE_H
#define TRIAGE_TESTS_RUN_TRACE_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/pipeline.h"
#include "report/report.h"

static inline an_report *test_run_trace(const te_rules *r, const char *fw, const char *data,
                                        size_t len) {
  an_run_options o = {0};
  o.formal = (an_input){.name = "f.json", .data = data, .len = len};
  o.min_share_pct = -1;
  if (fw) {
    o.framework = te_rules_framework_lookup(r, fw);
    o.framework_source = AN_SOURCE_COMMAND_LINE;
  }
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, r, &rep, &err), AN_OK, "%s", err.message);
  return rep;
}

/* The text renderer fn (rp_markdown, rp_json, ...) writes of report rep under rules r, in
 * the default layout: a malloc'd string the caller frees. */
static inline char *test_render(int (*fn)(FILE *, const an_report *, const rp_options *),
                                const an_report *rep, const te_rules *r) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  rp_options o = {RP_LAYOUT_DEFAULT, r, false};
  cr_assert_eq(fn(f, rep, &o), 0);
  fclose(f);
  return s;
}

#endif
