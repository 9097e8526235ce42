/* cli/bundle_cmd.c - see bundle_cmd.h. */
#include "cli/bundle_cmd.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/pipeline.h"
#include "cli/args.h"
#include "cli/exit.h"
#include "cli/rules_setup.h"
#include "report/bundle_report.h"
#include "report/diff_report.h"

typedef struct bundle_args {
  const char **inputs;
  size_t n_inputs;
  const char *output;
  int format; /* 0 markdown, 1 html; -1 until parsed (then by the --output name) */
} bundle_args;

static int bundle_word(void *opts, const char *word, bool after_dashes, char *err, size_t cap) {
  (void)after_dashes;
  bundle_args *a = opts;
  const char **v = realloc(a->inputs, (a->n_inputs + 1) * sizeof *v);
  if (!v) return cli_usage_error(err, cap, "out of memory");
  a->inputs = v;
  v[a->n_inputs++] = word;
  return 0;
}

static const cli_option BUNDLE_OPTIONS[] = {
    {"--format", NULL, CLI_CHOICE, offsetof(bundle_args, format), 0, 0, 0, 0, "markdown,md|html",
     "markdown or html", NULL},
    {"--output", "-o", CLI_STRING, offsetof(bundle_args, output), 0, 0, 0, 0, NULL, NULL, NULL},
    {"--help", "-h", CLI_HELP, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec BUNDLE_SPEC = {
    BUNDLE_OPTIONS, sizeof BUNDLE_OPTIONS / sizeof BUNDLE_OPTIONS[0], " for 'bundle'", bundle_word};

/* What a bundle entry points at, kept mutable for the release. */
typedef struct held {
  an_report *report;
  cJSON *doc;
} held;

static int load(const char *path, const te_rules *rules, unsigned workers, rp_bundle_entry *e,
                held *h) {
  e->input = path;
  char msg[256] = "";
  int is_report = rp_json_report_parse(path, &h->doc, msg, sizeof msg);
  if (is_report < 0) {
    fprintf(stderr, "triage: %s: %s\n", path, msg[0] ? msg : "out of memory");
    return TRIAGE_EXIT_BAD_INPUT;
  }
  if ((e->doc = h->doc)) return 0;
  an_run_options o = {0};
  o.formal.path = path;
  o.min_share_pct = -1;
  o.rank_workers = workers;
  an_error err;
  an_report *rep = NULL;
  if (an_run(&o, rules, &rep, &err) != AN_OK) {
    if (err.has_offset)
      fprintf(stderr, "triage: %s: offset %llu: %s\n", err.path, (unsigned long long)err.offset,
              err.message);
    else
      fprintf(stderr, "triage: %s: %s\n", err.path[0] ? err.path : path, err.message);
    return TRIAGE_EXIT_BAD_INPUT;
  }
  e->report = h->report = rep;
  return 0;
}

/* The HTML page renders report models only: a JSON report read back has none. */
static int write_html(FILE *out, const bundle_args *a, const rp_bundle_entry *e,
                      const rp_options *ro) {
  const an_report **reps = calloc(a->n_inputs, sizeof *reps);
  if (!reps) return -1;
  for (size_t i = 0; i < a->n_inputs; i++) reps[i] = e[i].report;
  int w = rp_html_bundle(out, reps, a->inputs, a->n_inputs, ro);
  free(reps);
  return w;
}

static int render(const bundle_args *a, const rp_bundle_entry *e, const te_rules *rules) {
  for (size_t i = 0; a->format == 1 && i < a->n_inputs; i++)
    if (!e[i].report) {
      fprintf(stderr,
              "triage: %s: a JSON report cannot go into an HTML bundle; give its trace or "
              "directory\n",
              e[i].input);
      return TRIAGE_EXIT_BAD_INPUT;
    }
  FILE *out = a->output ? fopen(a->output, "w") : stdout;
  rp_options ro = {RP_LAYOUT_DEFAULT, rules, false};
  int w = !out             ? -1
          : a->format == 1 ? write_html(out, a, e, &ro)
                           : rp_bundle_markdown(out, e, a->n_inputs, &ro);
  if (out && out != stdout && fclose(out) != 0) w = -1;
  if (w != 0) fprintf(stderr, "triage: cannot write %s\n", a->output ? a->output : "the bundle");
  return w ? TRIAGE_EXIT_BAD_INPUT : 0;
}

int triage_bundle_main(const char *argv0, const triage_options *before, int argc, char **argv) {
  bundle_args a = {0};
  a.format = -1;
  char msg[512];
  cli_parse_result pr = cli_parse(&BUNDLE_SPEC, argc, argv, 1, &a, NULL, msg, sizeof msg);
  if (pr == CLI_PARSE_HELP) {
    puts(
        "usage: triage bundle INPUT... [--format markdown|html] [-o|--output FILE]\n"
        "Each INPUT is a trace, a profile directory or a JSON report (--format json);\n"
        "the HTML page takes traces and directories.");
    free(a.inputs);
    return 0;
  }
  if (a.format < 0) { /* no --format: -o NAME.html means the page */
    size_t n = a.output ? strlen(a.output) : 0;
    a.format = n >= 5 && strcasecmp(a.output + n - 5, ".html") == 0 ? 1 : 0;
  }
  if (pr == CLI_PARSE_OK && a.n_inputs < 1)
    pr = (cli_parse_result)cli_usage_error(msg, sizeof msg, "bundle needs at least one input");
  if (pr != CLI_PARSE_OK) {
    fprintf(stderr, "triage: %s\n", msg);
    free(a.inputs);
    return TRIAGE_EXIT_USAGE;
  }
  triage_rules_setup_options so = {before->rules_paths, before->n_rules_paths,
                                   before->no_default_rules, before->compat};
  te_rules *rules = triage_rules_setup(argv0, &so, stderr);
  rp_bundle_entry *e = calloc(a.n_inputs, sizeof *e);
  held *h = calloc(a.n_inputs, sizeof *h);
  int rc = rules && e && h ? 0 : TRIAGE_EXIT_BAD_INPUT;
  for (size_t i = 0; rc == 0 && i < a.n_inputs; i++)
    rc = load(a.inputs[i], rules, before->workers, &e[i], &h[i]);
  if (rc == 0) rc = render(&a, e, rules);
  for (size_t i = 0; h && i < a.n_inputs; i++) {
    an_report_destroy(h[i].report);
    cJSON_Delete(h[i].doc);
  }
  free(h);
  free(e);
  te_rules_destroy(rules);
  free(a.inputs);
  return rc;
}
