/* report/bundle_md.c - see bundle_report.h. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "report/bundle_report.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"
#include "report/names.h"
#include "report/text.h"

static const char *json_str(const cJSON *o, const char *k, const char *dflt) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(x) ? x->valuestring : dflt;
}

static const char *model_of(const rp_bundle_entry *e) {
  if (e->report)
    return e->report->run.context.model.value ? e->report->run.context.model.value
                                              : "unknown model";
  return json_str(e->doc, "model", "unknown model");
}

static const char *framework_of(const rp_bundle_entry *e) {
  if (e->report) return e->report->run.framework.label ? e->report->run.framework.label : "unknown";
  return json_str(e->doc, "framework", "unknown");
}

static bool same_group(const rp_bundle_entry *a, const rp_bundle_entry *b) {
  return strcmp(model_of(a), model_of(b)) == 0 && strcmp(framework_of(a), framework_of(b)) == 0;
}

/* Groups in first-seen order; entries of a group in command-line order. */
static size_t *group_order(const rp_bundle_entry *e, size_t n) {
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  bool *done = calloc(n ? n : 1, 1);
  size_t m = 0;
  for (size_t i = 0; order && done && i < n; i++) {
    if (done[i]) continue;
    for (size_t j = i; j < n; j++)
      if (!done[j] && same_group(&e[i], &e[j])) order[m++] = j, done[j] = true;
  }
  free(done);
  return order;
}

/* ------------------------------------------------------------------ JSON reports */

static double json_num(const cJSON *o, const char *k) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const cJSON *json_get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* One text cell ("-" when missing), preceded by " | ". */
static int cell(FILE *f, const char *s) {
  return fputs(" | ", f) == EOF || rp_md_cell_text(f, s && *s ? s : "-") != 0 ? -1 : 0;
}

/* One time cell in ms from a value in us. */
static int ms_cell(FILE *f, double us) {
  return fputs(" | ", f) == EOF || rp_md_ms(f, us, false) != 0 ? -1 : 0;
}

static int pct_cell(FILE *f, double pct) {
  return fputs(" | ", f) == EOF || rp_md_pct(f, pct, false) != 0 ? -1 : 0;
}

/* Display names of the key member of every item of list (only those shown when
 * only_shown), in list order; NULL without names (then full names are shown). */
static char **json_names(const rp_names *nm, const cJSON *list, const char *key, bool only_shown,
                         size_t *n) {
  *n = 0;
  const cJSON *k;
  const char **full = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *full);
  if (!full) return NULL;
  cJSON_ArrayForEach(k, list) if (!only_shown || cJSON_IsTrue(json_get(k, "shown"))) full[(*n)++] =
      json_str(k, key, "?");
  char **shown = nm && *n ? rp_names_display_table(nm, full, *n) : NULL;
  free(full);
  return shown;
}

/* The kernel table: the rows the report marked shown. */
static int json_kernels(FILE *f, const rp_names *nm, const cJSON *st, const char *label) {
  const cJSON *list = json_get(st, "kernels"), *k;
  size_t n = 0, i = 0;
  char **shown = json_names(nm, list, "name", true, &n);
  int rc = fprintf(f,
                   "\n###### Kernels: %s\n\n| # | Kernel | Category | GPU time (ms) | Share (%%) | "
                   "Launches | Python location | CPU op |\n"
                   "| ---: | --- | --- | ---: | ---: | ---: | --- | --- |\n",
                   label) < 0;
  cJSON_ArrayForEach(k, list) {
    if (rc || !cJSON_IsTrue(json_get(k, "shown"))) continue;
    const char *name = shown ? shown[i] : json_str(k, "name", "?");
    rc = fprintf(f, "| K%zu | ", ++i) < 0 || rp_md_code(f, name) ||
         cell(f, json_str(k, "category", NULL)) || ms_cell(f, json_num(k, "total_us")) ||
         pct_cell(f, json_num(k, "share_pct")) ||
         fprintf(f, " | %.0f", json_num(k, "launches")) < 0 ||
         cell(f, json_str(k, "location", NULL)) || cell(f, json_str(k, "cpu_op", NULL)) ||
         fputs(" |\n", f) == EOF;
  }
  if (shown) rp_names_table_free(shown, n);
  return rc ? -1 : 0;
}

/* The overlap table rows of stage id (the report's "overlap" block). */
static int json_overlap(FILE *f, const rp_names *nm, const cJSON *doc, const char *id,
                        const char *label) {
  const cJSON *s, *rows = NULL;
  cJSON_ArrayForEach(s, json_get(json_get(doc, "overlap"), "stages")) {
    if (strcmp(json_str(s, "stage", ""), id) == 0) rows = json_get(s, "rows");
  }
  if (fprintf(f, "\n###### Overlap opportunities: %s\n", label) < 0) return -1;
  if (!cJSON_GetArraySize(rows)) return fputs("\nNo overlap row.\n", f) == EOF ? -1 : 0;
  size_t n = 0, i = 0;
  char **shown = json_names(nm, rows, "kernel", false, &n);
  int rc = fputs(
               "\n| # | Priority | Verdict | Kernel | Category | GPU time (ms) | Exposed (ms) | "
               "Hidden (ms) | Dep risk | Recommendation |\n"
               "| ---: | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |\n",
               f) == EOF;
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    if (rc) break;
    const char *name = shown ? shown[i] : json_str(r, "kernel", "?");
    rc = fprintf(f, "| O%zu", ++i) < 0 || cell(f, json_str(r, "priority", NULL)) ||
         cell(f, json_str(r, "verdict", NULL)) || fputs(" | ", f) == EOF || rp_md_code(f, name) ||
         cell(f, json_str(r, "category", NULL)) || ms_cell(f, json_num(r, "total_us")) ||
         ms_cell(f, json_num(r, "exposed_ms") * 1000) || ms_cell(f, json_num(r, "hidden_us")) ||
         cell(f, json_str(r, "dep_risk", NULL)) || cell(f, json_str(r, "recommendation", NULL)) ||
         fputs(" |\n", f) == EOF;
  }
  if (shown) rp_names_table_free(shown, n);
  return rc ? -1 : 0;
}

/* The fuse table: the rows the report marked shown. */
static int json_fuse(FILE *f, const cJSON *st, const char *label) {
  const cJSON *list = json_get(st, "fuse"), *r;
  size_t shown = 0, i = 0;
  cJSON_ArrayForEach(r, list) shown += cJSON_IsTrue(json_get(r, "shown"));
  if (fprintf(f, "\n###### Fusion opportunities: %s\n", label) < 0) return -1;
  if (!shown) return fputs("\nNo fusion row.\n", f) == EOF ? -1 : 0;
  int rc = fputs(
               "\n| # | Pattern | Confidence | Status | Related time (ms) | Share (%) | "
               "Estimated saving (ms) |\n| ---: | --- | --- | --- | ---: | ---: | ---: |\n",
               f) == EOF;
  cJSON_ArrayForEach(r, list) {
    if (rc || !cJSON_IsTrue(json_get(r, "shown"))) continue;
    rc = fprintf(f, "| F%zu | ", ++i) < 0 || rp_md_code(f, json_str(r, "id", "?")) ||
         fputs(" ", f) == EOF || rp_md_cell_text(f, json_str(r, "pattern", "")) ||
         cell(f, json_str(r, "confidence", NULL)) || cell(f, json_str(r, "status", NULL)) ||
         ms_cell(f, json_num(r, "related_us")) || pct_cell(f, json_num(r, "share_pct")) ||
         ms_cell(f, json_num(r, "estimated_saving_us")) || fputs(" |\n", f) == EOF;
  }
  return rc ? -1 : 0;
}

/* The Ranks rows of a multi-rank report. */
static int json_ranks(FILE *f, const cJSON *doc) {
  const cJSON *sec;
  cJSON_ArrayForEach(sec, json_get(doc, "ranks")) {
    /* a report without "steps" (written before it existed) reads as steps unknown */
    double steps = json_num(sec, "steps"); /* untrusted: kept only when a sane count */
    const an_rank_report span = {.n_steps = steps >= 1 && steps < 1e9 ? (size_t)steps : 0};
    char over[RP_RANK_SPAN_BYTES];
    if (fputs("\n##### Ranks: ", f) == EOF || rp_md_cell_text(f, json_str(sec, "stage", "?")) ||
        fprintf(f, "\n\nThe %s.", rp_rank_span(&span, over, sizeof over)) < 0 ||
        fputs("\n\n| Rank | Busy (ms) | Compute (ms) | Exposed comm (ms) | Memory (ms) | "
              "Idle (ms) | Wait (ms) | Straggler |\n"
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
              f) == EOF)
      return -1;
    const cJSON *r;
    cJSON_ArrayForEach(r, json_get(sec, "rows")) {
      if (fprintf(f, "| %.0f", json_num(r, "rank")) < 0 || ms_cell(f, json_num(r, "busy_us")) ||
          ms_cell(f, json_num(r, "compute_us")) || ms_cell(f, json_num(r, "exposed_comm_us")) ||
          ms_cell(f, json_num(r, "memory_us")) || ms_cell(f, json_num(r, "idle_us")) ||
          ms_cell(f, json_num(r, "wait_us")) ||
          fprintf(f, " | %s |\n", cJSON_IsTrue(json_get(r, "straggler")) ? "yes" : "-") < 0)
        return -1;
    }
  }
  return 0;
}

/* "Value" of a context fact ({"value": ..., "source": ...}) as text. */
static void fact_text(const cJSON *doc, const char *key, char *buf, size_t cap) {
  const cJSON *v = json_get(json_get(json_get(doc, "context"), key), "value");
  if (cJSON_IsString(v))
    snprintf(buf, cap, "%s", v->valuestring);
  else if (cJSON_IsNumber(v))
    snprintf(buf, cap, "%g", v->valuedouble);
  else
    snprintf(buf, cap, "unknown");
}

/* A JSON report in full: its run facts, then per stage the kernel, overlap and fuse
 * tables as the report stored them (rows it marked shown), and its Ranks rows. Headings
 * sit where a nested report's do (three levels down). */
static int json_report(FILE *f, const cJSON *doc, const rp_options *o) {
  static const char *const facts[][2] = {{"tp_size", "TP size"}, {"gpu", "GPU"}};
  if (fputs("#### Triage report\n\n(read back from a JSON report)\n\n| Run | Value |\n"
            "| --- | --- |\n| Framework",
            f) == EOF ||
      cell(f, json_str(doc, "framework", NULL)) || fputs(" |\n| Model", f) == EOF ||
      cell(f, json_str(doc, "model", NULL)) || fputs(" |\n", f) == EOF)
    return -1;
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
    char buf[256];
    fact_text(doc, facts[i][0], buf, sizeof buf);
    if (fprintf(f, "| %s", facts[i][1]) < 0 || cell(f, buf) || fputs(" |\n", f) == EOF) return -1;
  }
  rp_names *nm = o && !o->full_names ? rp_names_create(o->rules) : NULL;
  int rc = 0;
  const cJSON *st;
  cJSON_ArrayForEach(st, json_get(doc, "stages")) {
    const char *label = json_str(st, "label", json_str(st, "stage", "?"));
    if (rc) break;
    rc = fputs("\n##### Stage: ", f) == EOF || rp_md_cell_text(f, label) ||
         fputs("\n\nKernel time: ", f) == EOF ||
         rp_md_ms(f, json_num(st, "kernel_total_us"), false) || fputs(" ms.\n", f) == EOF ||
         json_kernels(f, nm, st, label) ||
         json_overlap(f, nm, doc, json_str(st, "stage", ""), label) || json_fuse(f, st, label);
  }
  rp_names_destroy(nm);
  return rc || json_ranks(f, doc) ? -1 : 0;
}

/* "PREFIX model, framework\n" with the trace-derived text escaped (one line). */
static int group_line(FILE *f, const char *prefix, const rp_bundle_entry *x) {
  return fputs(prefix, f) == EOF || rp_md_cell_text(f, model_of(x)) != 0 || fputs(", ", f) == EOF ||
                 rp_md_cell_text(f, framework_of(x)) != 0 || fputc('\n', f) == EOF
             ? -1
             : 0;
}

/* Each report sits under its bundle section ("### INPUT"): its own headings move three
 * levels down ("# Triage report" becomes "####"), so the contents stay the outline. The
 * report is rendered whole first because its renderer writes headings at fixed levels. */
enum { NESTED_HEADING_SHIFT = 3 };

static int nested_report(FILE *f, const an_report *r, const rp_options *o) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) return -1;
  int rc = rp_markdown(mem, r, o);
  if (fclose(mem) != 0) rc = -1;
  bool line_start = true;
  for (size_t i = 0; rc == 0 && i < len; i++) {
    if (line_start && text[i] == '#' && fprintf(f, "%.*s", NESTED_HEADING_SHIFT, "######") < 0)
      rc = -1;
    if (fputc(text[i], f) == EOF) rc = -1;
    line_start = text[i] == '\n';
  }
  free(text);
  return rc;
}

static int section(FILE *f, const rp_bundle_entry *e, size_t idx, const rp_options *o) {
  if (fprintf(f, "\n<a id=\"input-%zu\"></a>\n### ", idx + 1) < 0 ||
      rp_md_cell_text(f, e->input) != 0 || fputs("\n\n", f) == EOF)
    return -1;
  if (e->report) return nested_report(f, e->report, o);
  return json_report(f, e->doc, o);
}

int rp_bundle_markdown(FILE *out, const rp_bundle_entry *e, size_t n, const rp_options *o) {
  size_t *order = group_order(e, n);
  if (!order) return -1;
  int rc = fprintf(out, "# Triage bundle\n\n%zu reports.\n\n## Contents\n\n", n) < 0 ? -1 : 0;
  for (size_t k = 0; rc == 0 && k < n; k++) {
    const rp_bundle_entry *x = &e[order[k]];
    if (k == 0 || !same_group(x, &e[order[k - 1]])) rc = group_line(out, "- ", x);
    if (rc == 0 && (fputs("  - [", out) == EOF || rp_md_cell_text(out, x->input) != 0 ||
                    fprintf(out, "](#input-%zu)\n", order[k] + 1) < 0))
      rc = -1;
  }
  for (size_t k = 0; rc == 0 && k < n; k++) {
    const rp_bundle_entry *x = &e[order[k]];
    if (k == 0 || !same_group(x, &e[order[k - 1]])) rc = group_line(out, "\n## ", x);
    if (rc == 0) rc = section(out, x, order[k], o);
  }
  free(order);
  return rc;
}
