/* cli/merge.c - see merge.h. */
#include "cli/merge.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks.h"
#include "cli/exit.h"
#include "report/names.h"
#include "report/ranks_report.h"
#include "util/limits.h"
#include "util/vec.h"

/* The inputs and every rank's data they hold (pointing into them). */
typedef struct loaded {
  cli_input *inputs;
  size_t n_inputs;
  an_rank_data *data;
  size_t n, cap;
  rp_owned owned;
  long world_size; /* the largest the inputs state (limits.world_size), 0: none */
} loaded;

/* A trace's own rank data (a one-rank run keeps it), appended. */
static bool append_report_data(loaded *l, const an_report *rep) {
  for (size_t i = 0; i < rep->n_rank_data; i++) {
    if (l->n == l->cap) {
      an_rank_data *v = ut_grow(l->data, &l->cap, l->n + 1, sizeof *v);
      if (!v) return false;
      l->data = v;
    }
    l->data[l->n++] = rep->rank_data[i];
  }
  return true;
}

static int load_one(const cli_common *a, const te_rules *rules, const char *path, loaded *l) {
  cli_input *in = &l->inputs[l->n_inputs];
  int rc = cli_input_load(a, rules, path, CLI_REPORT_LIMIT(CLI_MAX_RANK_REPORT_BYTES), in);
  if (rc) return rc;
  l->n_inputs++;
  char msg[256] = "out of memory";
  long w = in->doc ? rp_report_world_size(in->doc) : in->report->limits.world_size;
  if (w > l->world_size) l->world_size = w;
  if (in->doc) {
    if (rp_rank_data_read(in->doc, &l->data, &l->n, &l->cap, &l->owned, msg, sizeof msg) == 0)
      return TRIAGE_EXIT_OK;
  } else if (!in->report->n_rank_data) {
    snprintf(msg, sizeof msg, "several ranks: give one rank (triage --rank N --format json)");
  } else if (append_report_data(l, in->report)) {
    return TRIAGE_EXIT_OK;
  }
  fprintf(stderr, "triage: %s: %s\n", path, msg);
  return TRIAGE_EXIT_BAD_INPUT;
}

static void loaded_free(loaded *l) {
  for (size_t i = 0; i < l->n_inputs; i++) cli_input_free(&l->inputs[i]);
  free(l->inputs);
  free(l->data);
  rp_rank_data_free(&l->owned);
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
static int markdown(FILE *out, const loaded *l, const an_report *rep, const te_rules *rules) {
  size_t traces = 0;
  for (size_t i = 0; i < l->n_inputs; i++) traces += l->inputs[i].report != NULL;
  const char *what = !traces ? "JSON reports" : traces == l->n_inputs ? "traces" : "inputs";
  rp_names *nm = rp_names_create(rules);
  int rc = fprintf(out, "# Triage ranks\n\nMerged from %zu one-rank %s (triage merge).\n",
                   l->n_inputs, what) < 0
               ? -1
               : rp_ranks_markdown(out, rep, nm);
  rp_names_destroy(nm);
  return rc;
}

static int render(const cli_common *a, const loaded *l, const an_ranks_result *res,
                  const te_rules *rules) {
  an_report rep = {0};
  rep.n_ranks = res->n_reports;
  rep.ranks = res->reports;
  rep.limits.world_size = l->world_size; /* "straggler of the N read", as the direct run */
  FILE *out = cli_output_open(a);
  if (!out) return TRIAGE_EXIT_BAD_INPUT;
  int rc = a->format == TRIAGE_FORMAT_JSON ? rp_ranks_json_document(out, &rep)
                                           : markdown(out, l, &rep, rules);
  return cli_output_close(out, a, rc);
}

int cli_merge_run(const cli_invocation *inv, const te_rules *rules, void *args) {
  (void)inv;
  const cli_common *a = args;
  int rc = TRIAGE_EXIT_OK;
  loaded l = {0};
  an_ranks_result res = {0};
  l.inputs = calloc(a->operands.n, sizeof *l.inputs);
  if (!l.inputs) rc = TRIAGE_EXIT_BAD_INPUT, fprintf(stderr, "triage: out of memory\n");
  for (size_t i = 0; rc == 0 && i < a->operands.n; i++)
    rc = load_one(a, rules, a->operands.items[i], &l);
  if (rc == 0) rc = build(&l, rules, &res);
  if (rc == 0) rc = render(a, &l, &res, rules);
  an_ranks_result_free(&res);
  loaded_free(&l);
  return rc;
}
