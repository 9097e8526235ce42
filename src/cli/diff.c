/* cli/diff.c - see diff.h. */
#include "cli/diff.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/diff.h"
#include "cli/exit.h"
#include "report/diff_report.h"
#include "report/report.h"
#include "report/text.h"
#include "util/limits.h"

#ifndef TRIAGE_VERSION
#define TRIAGE_VERSION "0.1.0"
#endif

static const cli_option DIFF_ROWS[] = {
    {.name = "--fail-on",
     .kind = CLI_CHOICE,
     .offset = offsetof(diff_args, fail_on),
     .choices = "none|regression",
     .expect = "none or regression",
     .metavar = "WHAT",
     .help = "exit 3 when the diff holds a regression\nbeyond the noise floor, 4 when the "
             "runs\nare not comparable (a CI gate)"},
    {.name = "--rank",
     .kind = CLI_LONG,
     .offset = offsetof(diff_args, rank),
     .hi = 1e9,
     .expect = "a non-negative integer",
     .metavar = "N",
     .help = "compare rank N of a side that is a profile\ndirectory (default: its lowest rank)"},
};
const cli_options CLI_DIFF_OPTIONS = CLI_OPTIONS(DIFF_ROWS);

void diff_args_defaults(void *args) { ((diff_args *)args)->rank = -1; }

/* One side: a JSON report read back, else the analysis of a trace or directory (rank
 * `rank` of a directory when >= 0; its GPU named as the report names it, in gpu: a JSON
 * report holds that text). */
static int side_load(const cli_common *a, const te_rules *rules, const char *path, long rank,
                     cli_input *in, an_diff_side *d, char (*gpu)[RP_GPU_BYTES]) {
  int rc = cli_input_load_rank(a, rules, path, rank, CLI_REPORT_LIMIT(TR_MAX_SMALL_JSON_BYTES), in);
  if (rc) return rc;
  char msg[256] = "";
  if (in->doc ? rp_diff_side_from_doc(in->doc, path, d, msg, sizeof msg) != 0
              : an_diff_side_from_report(in->report, path, d) != AN_OK) {
    fprintf(stderr, "triage: %s: %s\n", path, msg[0] ? msg : "out of memory");
    return TRIAGE_EXIT_BAD_INPUT;
  }
  if (!in->doc) d->kind = in->kind == CLI_INPUT_DIRECTORY ? "directory" : "trace";
  if (!in->doc && in->kind == CLI_INPUT_DIRECTORY) d->only_rank = rank; /* -1: every rank */
  if (!in->doc) d->gpu = rp_gpu(&in->report->run.context, *gpu, sizeof *gpu);
  return TRIAGE_EXIT_OK;
}

static int render(const cli_invocation *inv, const cli_common *a, const an_diff_report *d,
                  const te_rules *rules) {
  FILE *out = cli_output_open(a);
  if (!out) return TRIAGE_EXIT_BAD_INPUT;
  rp_options ro = {RP_LAYOUT_DEFAULT, rules, false};
  char *cmdline = NULL;
  int rc = -1;
  switch (a->format) {
    case TRIAGE_FORMAT_HTML:
      if ((cmdline = cli_command_line(inv, "triage")))
        rc = rp_html_diff(out, d, &ro, TRIAGE_VERSION, cmdline);
      break;
    case TRIAGE_FORMAT_JSON:
      rc = rp_diff_json(out, d);
      break;
    default:
      rc = rp_diff_markdown(out, d, &ro);
      break;
  }
  free(cmdline);
  return cli_output_close(out, a, rc);
}

/* --fail-on regression, after the report is written: runs that do not compare cannot pass a
 * gate silently (no row of theirs counts as a regression, so exit 0 would read "no
 * regression"): their own status and one line saying why. */
static int gate(const an_diff_report *d) {
  if (d->incomparable) {
    fprintf(stderr,
            "triage: diff: not comparable (%s): --fail-on regression cannot judge these runs "
            "(exit %d)\n",
            rp_diff_incomparable_why(d->incomparable), TRIAGE_EXIT_NOT_COMPARABLE);
    return TRIAGE_EXIT_NOT_COMPARABLE;
  }
  if (d->identity_differs & AN_DIFF_RANK_DIFFERS) {
    fprintf(stderr,
            "triage: diff: the traces are of different ranks (rank %ld -> rank %ld): "
            "--fail-on regression cannot judge these runs (exit %d)\n",
            d->inputs[0].rank, d->inputs[1].rank, TRIAGE_EXIT_NOT_COMPARABLE);
    return TRIAGE_EXIT_NOT_COMPARABLE;
  }
  return d->n_regressions ? TRIAGE_EXIT_REGRESSION : TRIAGE_EXIT_OK;
}

int cli_diff_run(const cli_invocation *inv, const te_rules *rules, void *args) {
  const diff_args *a = args;
  int rc = TRIAGE_EXIT_OK;
  cli_input in[2] = {0};
  an_diff_side d[2] = {0};
  char gpu[2][RP_GPU_BYTES];
  for (int i = 0; rc == 0 && i < 2; i++)
    rc = side_load(&a->common, rules, a->common.operands.items[i], a->rank, &in[i], &d[i], &gpu[i]);
  an_diff_result res = {0};
  if (rc == 0 && an_diff_build(&d[0], &d[1], rules, &res) != AN_OK) {
    fprintf(stderr, "triage: out of memory\n");
    rc = TRIAGE_EXIT_BAD_INPUT;
  }
  if (rc == 0) rc = render(inv, &a->common, &res.report, rules);
  if (rc == 0 && a->fail_on) rc = gate(&res.report);
  an_diff_result_free(&res);
  for (int i = 0; i < 2; i++) {
    an_diff_side_free(&d[i]);
    cli_input_free(&in[i]);
  }
  return rc;
}
