/* cli/bundle_cmd.c - see bundle_cmd.h. */
#include "cli/bundle_cmd.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/exit.h"
#include "report/bundle_report.h"
#include "util/limits.h"

/* The HTML page renders report models only: a JSON report read back has none. */
static int write_html(FILE *out, const cli_common *a, const rp_bundle_entry *e,
                      const rp_options *ro) {
  size_t n = a->operands.n;
  const an_report **reps = calloc(n, sizeof *reps);
  if (!reps) return -1;
  for (size_t i = 0; i < n; i++) reps[i] = e[i].report;
  int w = rp_html_bundle(out, reps, a->operands.items, n, ro);
  free(reps);
  return w;
}

static int render(const cli_common *a, const rp_bundle_entry *e, const te_rules *rules) {
  bool html = a->format == TRIAGE_FORMAT_HTML;
  for (size_t i = 0; html && i < a->operands.n; i++)
    if (!e[i].report) {
      fprintf(stderr,
              "triage: %s: a JSON report cannot go into an HTML bundle; give its trace or "
              "directory\n",
              e[i].input);
      return TRIAGE_EXIT_BAD_INPUT;
    }
  FILE *out = cli_output_open(a);
  if (!out) return TRIAGE_EXIT_BAD_INPUT;
  rp_options ro = {RP_LAYOUT_DEFAULT, rules, false};
  int w = html ? write_html(out, a, e, &ro) : rp_bundle_markdown(out, e, a->operands.n, &ro);
  return cli_output_close(out, a, w);
}

int cli_bundle_run(const cli_invocation *inv, const te_rules *rules, void *args) {
  (void)inv;
  const cli_common *a = args;
  size_t n = a->operands.n;
  int rc = TRIAGE_EXIT_OK;
  rp_bundle_entry *e = calloc(n, sizeof *e);
  cli_input *in = calloc(n, sizeof *in);
  if (!e || !in) rc = TRIAGE_EXIT_BAD_INPUT, fprintf(stderr, "triage: out of memory\n");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    rc = cli_input_load(a, rules, a->operands.items[i], CLI_REPORT_LIMIT(TR_MAX_SMALL_JSON_BYTES),
                        &in[i]);
    e[i] = (rp_bundle_entry){in[i].path, in[i].report, in[i].doc};
  }
  if (rc == 0) rc = render(a, e, rules);
  for (size_t i = 0; in && i < n; i++) cli_input_free(&in[i]);
  free(in);
  free(e);
  return rc;
}
