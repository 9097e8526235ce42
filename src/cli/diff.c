/* cli/diff.c - see diff.h. */
#include "cli/diff.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "analysis/diff.h"
#include "analysis/pipeline.h"
#include "cli/args.h"
#include "cli/exit.h"
#include "cli/rules_setup.h"
#include "report/diff_report.h"
#include "report/report.h"

typedef struct diff_args {
  const char *sides[2];
  int n_sides;
  int format; /* 0 markdown, 1 json, 2 html; -1 until parsed (then by the --output name) */
  const char *output;
} diff_args;

static int diff_word(void *opts, const char *word, bool after_dashes, char *err, size_t cap) {
  (void)after_dashes;
  diff_args *a = opts;
  if (a->n_sides == 2) return cli_usage_error(err, cap, "diff takes two inputs, BEFORE and AFTER");
  a->sides[a->n_sides++] = word;
  return 0;
}

static const cli_option DIFF_OPTIONS[] = {
    {"--format", NULL, CLI_CHOICE, offsetof(diff_args, format), 0, 0, 0, 0, "markdown,md|json|html",
     "markdown, json or html", NULL},
    {"--output", "-o", CLI_STRING, offsetof(diff_args, output), 0, 0, 0, 0, NULL, NULL, NULL},
    {"--help", "-h", CLI_HELP, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec DIFF_SPEC = {DIFF_OPTIONS, sizeof DIFF_OPTIONS / sizeof DIFF_OPTIONS[0],
                                   " for 'diff'", diff_word};

/* One side: a JSON report read back, else the analysis of a trace or directory. */
typedef struct side {
  an_diff_side d;
  cJSON *doc;
  an_report *rep;
} side;

static int load(const char *path, const te_rules *rules, unsigned workers, side *s) {
  char msg[256] = "";
  int rc = rp_diff_side_read(path, &s->d, &s->doc, msg, sizeof msg);
  if (rc < 0) {
    fprintf(stderr, "triage: %s: %s\n", path, msg[0] ? msg : "out of memory");
    return TRIAGE_EXIT_BAD_INPUT;
  }
  if (rc == 1) return 0;
  an_run_options o = {0};
  o.formal.path = path;
  o.min_share_pct = -1;
  o.rank_workers = workers;
  an_error err;
  if (an_run(&o, rules, &s->rep, &err) != AN_OK) {
    if (err.has_offset)
      fprintf(stderr, "triage: %s: offset %llu: %s\n", err.path, (unsigned long long)err.offset,
              err.message);
    else
      fprintf(stderr, "triage: %s: %s\n", err.path[0] ? err.path : path, err.message);
    return TRIAGE_EXIT_BAD_INPUT;
  }
  if (an_diff_side_from_report(s->rep, path, &s->d) != AN_OK) {
    fprintf(stderr, "triage: out of memory\n");
    return TRIAGE_EXIT_BAD_INPUT;
  }
  struct stat sb;
  s->d.kind = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? "directory" : "trace";
  return 0;
}

static void side_free(side *s) {
  an_diff_side_free(&s->d);
  cJSON_Delete(s->doc);
  an_report_destroy(s->rep);
}

/* "triage diff ..." for the page's footer (argv starts at the sub-command's word). */
static void command_line(int argc, char **argv, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "triage");
  for (int i = 0; i < argc && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, " %s", argv[i]);
}

static int render(const diff_args *a, const an_diff_report *d, const te_rules *rules,
                  const char *cmdline) {
  FILE *out = a->output ? fopen(a->output, "w") : stdout;
  if (!out) {
    fprintf(stderr, "triage: cannot write %s\n", a->output);
    return TRIAGE_EXIT_BAD_INPUT;
  }
  rp_options ro = {RP_LAYOUT_DEFAULT, rules, false};
  int rc = a->format == 2   ? rp_html_diff(out, d, &ro, TRIAGE_VERSION, cmdline)
           : a->format == 1 ? rp_diff_json(out, d)
                            : rp_diff_markdown(out, d, &ro);
  if (out != stdout && fclose(out) != 0) rc = -1;
  if (rc != 0) fprintf(stderr, "triage: write error\n");
  return rc ? TRIAGE_EXIT_BAD_INPUT : 0;
}

int triage_diff_main(const char *argv0, const triage_options *before, int argc, char **argv) {
  diff_args a = {0};
  a.format = -1;
  char msg[512];
  cli_parse_result pr = cli_parse(&DIFF_SPEC, argc, argv, 1, &a, NULL, msg, sizeof msg);
  if (pr == CLI_PARSE_HELP) {
    puts(
        "usage: triage diff BEFORE AFTER [--format markdown|json|html] [-o|--output FILE]\n"
        "Each side is a trace, a profile directory or a JSON report (--format json).");
    return 0;
  }
  if (a.format < 0) { /* no --format: -o NAME.html means the page */
    size_t n = a.output ? strlen(a.output) : 0;
    a.format = n >= 5 && strcasecmp(a.output + n - 5, ".html") == 0 ? 2 : 0;
  }
  if (pr == CLI_PARSE_OK && a.n_sides != 2)
    pr = (cli_parse_result)cli_usage_error(msg, sizeof msg, "diff needs BEFORE and AFTER");
  if (pr != CLI_PARSE_OK) {
    fprintf(stderr, "triage: %s\n", msg);
    return TRIAGE_EXIT_USAGE;
  }
  triage_rules_setup_options so = {before->rules_paths, before->n_rules_paths,
                                   before->no_default_rules, before->compat};
  te_rules *rules = triage_rules_setup(argv0, &so, stderr);
  if (!rules) return TRIAGE_EXIT_BAD_INPUT;
  side s[2] = {0};
  int rc = load(a.sides[0], rules, before->workers, &s[0]);
  if (rc == 0) rc = load(a.sides[1], rules, before->workers, &s[1]);
  an_diff_result res = {0};
  if (rc == 0 && an_diff_build(&s[0].d, &s[1].d, rules, &res) != AN_OK) {
    fprintf(stderr, "triage: out of memory\n");
    rc = TRIAGE_EXIT_BAD_INPUT;
  }
  char cmdline[2048];
  command_line(argc, argv, cmdline, sizeof cmdline);
  if (rc == 0) rc = render(&a, &res.report, rules, cmdline);
  an_diff_result_free(&res);
  side_free(&s[0]);
  side_free(&s[1]);
  te_rules_destroy(rules);
  return rc;
}
