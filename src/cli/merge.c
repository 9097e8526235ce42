/* cli/merge.c - see merge.h. */
#include "cli/merge.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks.h"
#include "cli/args.h"
#include "cli/exit.h"
#include "cli/rules_setup.h"
#include "report/names.h"
#include "report/ranks_report.h"
#include "util/file.h"

typedef struct merge_args {
  const char **reports;
  size_t n_reports;
  int format; /* 0 markdown, 1 json */
  const char *output;
} merge_args;

static int merge_word(void *opts, const char *word, bool after_dashes, char *err, size_t cap) {
  (void)after_dashes;
  merge_args *a = opts;
  const char **v = realloc(a->reports, (a->n_reports + 1) * sizeof *v);
  if (!v) return cli_usage_error(err, cap, "out of memory");
  a->reports = v;
  v[a->n_reports++] = word;
  return 0;
}

static const cli_option MERGE_OPTIONS[] = {
    {"--format", NULL, CLI_CHOICE, offsetof(merge_args, format), 0, 0, 0, 0, "markdown,md|json",
     "markdown or json", NULL},
    {"--output", NULL, CLI_STRING, offsetof(merge_args, output), 0, 0, 0, 0, NULL, NULL, NULL},
    {"--help", "-h", CLI_HELP, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const cli_spec MERGE_SPEC = {MERGE_OPTIONS, sizeof MERGE_OPTIONS / sizeof MERGE_OPTIONS[0],
                                    " for 'merge'", merge_word};

typedef struct loaded {
  cJSON **docs;
  size_t n_docs;
  an_rank_data *data;
  size_t n;
  void **owned;
  size_t n_owned;
} loaded;

static int load_all(const merge_args *a, loaded *l) {
  l->docs = calloc(a->n_reports, sizeof *l->docs);
  if (!l->docs) return fprintf(stderr, "triage: out of memory\n"), TRIAGE_EXIT_BAD_INPUT;
  for (size_t i = 0; i < a->n_reports; i++) {
    char *text = NULL, msg[256] = "cannot read the file";
    size_t len = 0;
    int err_no = 0;
    if (ut_read_file(a->reports[i], (size_t)1 << 30, &text, &len, &err_no) == UT_FILE_OK) {
      l->docs[l->n_docs++] = cJSON_ParseWithLength(text, len);
      if (!l->docs[l->n_docs - 1]) snprintf(msg, sizeof msg, "not JSON");
    }
    free(text);
    if (!l->n_docs || l->n_docs != i + 1 || !l->docs[i] ||
        rp_rank_data_read(l->docs[i], &l->data, &l->n, &l->owned, &l->n_owned, msg, sizeof msg)) {
      fprintf(stderr, "triage: %s: %s\n", a->reports[i], msg);
      return TRIAGE_EXIT_BAD_INPUT;
    }
  }
  return 0;
}

static void loaded_free(loaded *l) {
  for (size_t i = 0; i < l->n_docs; i++) cJSON_Delete(l->docs[i]);
  free(l->docs);
  free(l->data);
  rp_rank_data_free(l->owned, l->n_owned);
}

static const te_rules *g_rules; /* qsort has no context: the stage order's rules */

static int stage_order(const char *id) {
  const te_stage *st = te_rules_stage_by_id(g_rules, id);
  return st ? st->order : INT_MAX;
}

static int cmp_data(const void *pa, const void *pb) {
  const an_rank_data *a = pa, *b = pb;
  int oa = stage_order(a->stage), ob = stage_order(b->stage);
  if (oa != ob) return oa < ob ? -1 : 1;
  int c = strcmp(a->stage, b->stage);
  if (c) return c;
  return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* The section, as a direct run builds it: every rank's summary handed in, none read. */
static int build(loaded *l, const te_rules *rules, an_ranks_result *res) {
  g_rules = rules;
  qsort(l->data, l->n, sizeof *l->data, cmp_data);
  for (size_t i = 1; i < l->n; i++)
    if (l->data[i].rank == l->data[i - 1].rank &&
        strcmp(l->data[i].stage, l->data[i - 1].stage) == 0) {
      fprintf(stderr, "triage: rank %ld of stage %s is given twice (%s, %s)\n", l->data[i].rank,
              l->data[i].stage, l->data[i - 1].path, l->data[i].path);
      return TRIAGE_EXIT_BAD_INPUT;
    }
  an_rank_input *in = calloc(l->n + 1, sizeof *in);
  an_rank_summary **pre = calloc(l->n + 1, sizeof *pre);
  int rc = in && pre ? 0 : TRIAGE_EXIT_BAD_INPUT;
  for (size_t i = 0; rc == 0 && i < l->n; i++) {
    in[i] = (an_rank_input){l->data[i].path, l->data[i].stage, l->data[i].rank};
    if (!(pre[i] = an_rank_summary_from_data(&l->data[i]))) {
      fprintf(stderr, "triage: %s: rank_data is inconsistent\n", l->data[i].path);
      rc = TRIAGE_EXIT_BAD_INPUT;
    }
  }
  an_ranks_options o = {0};
  an_ranks_failure f = {0};
  if (rc == 0 && an_ranks_build(in, l->n, pre, rules, &o, res, &f) != AN_OK) {
    fprintf(stderr, "triage: out of memory\n");
    rc = TRIAGE_EXIT_BAD_INPUT;
  } else if (rc != 0) {
    for (size_t i = 0; pre && i < l->n; i++) an_rank_summary_free(pre[i]);
  }
  free(in);
  free(pre);
  return rc;
}

/* Markdown: a document of its own, so it has its title. */
static int markdown(FILE *out, const merge_args *a, const an_report *rep, const te_rules *rules) {
  rp_names *nm = rp_names_create(rules);
  int rc = fprintf(out, "# Triage ranks\n\nMerged from %zu one-rank JSON reports (triage merge).\n",
                   a->n_reports) < 0
               ? -1
               : rp_ranks_markdown(out, rep, nm);
  rp_names_destroy(nm);
  return rc;
}

static int render(const merge_args *a, const an_ranks_result *res, const te_rules *rules) {
  an_report rep = {0};
  rep.n_ranks = res->n_reports;
  rep.ranks = res->reports;
  FILE *out = a->output ? fopen(a->output, "w") : stdout;
  if (!out) return fprintf(stderr, "triage: cannot write %s\n", a->output), TRIAGE_EXIT_BAD_INPUT;
  int rc = a->format ? rp_ranks_json_document(out, &rep) : markdown(out, a, &rep, rules);
  if (out != stdout && fclose(out) != 0) rc = -1;
  if (rc) fprintf(stderr, "triage: write error\n");
  return rc ? TRIAGE_EXIT_BAD_INPUT : 0;
}

int triage_merge_main(const char *argv0, const triage_options *before, int argc, char **argv) {
  merge_args a = {0};
  char msg[512];
  cli_parse_result pr = cli_parse(&MERGE_SPEC, argc, argv, 1, &a, NULL, msg, sizeof msg);
  if (pr == CLI_PARSE_HELP) {
    puts(
        "usage: triage merge REPORT.json... [--format markdown|json] [--output FILE]\n"
        "Builds the Ranks section from one-rank JSON reports (triage --rank N --format json).");
    free(a.reports);
    return 0;
  }
  if (pr == CLI_PARSE_OK && a.n_reports < 2)
    pr = (cli_parse_result)cli_usage_error(msg, sizeof msg, "merge needs at least two reports");
  if (pr != CLI_PARSE_OK) {
    fprintf(stderr, "triage: %s\n", msg);
    free(a.reports);
    return TRIAGE_EXIT_USAGE;
  }
  triage_rules_setup_options so = {before->rules_paths, before->n_rules_paths,
                                   before->no_default_rules, before->compat};
  te_rules *rules = triage_rules_setup(argv0, &so, stderr);
  if (!rules) return free(a.reports), TRIAGE_EXIT_BAD_INPUT;
  loaded l = {0};
  an_ranks_result res = {0};
  int rc = load_all(&a, &l);
  if (rc == 0) rc = build(&l, rules, &res);
  if (rc == 0) rc = render(&a, &res, rules);
  an_ranks_result_free(&res);
  loaded_free(&l);
  te_rules_destroy(rules);
  free(a.reports);
  return rc;
}
