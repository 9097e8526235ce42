/* report/bundle_md.c - see bundle_report.h. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "report/bundle_report.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"

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

/* A JSON report's kernel tables: the rows it marked shown. */
static int json_tables(FILE *f, const cJSON *doc) {
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(doc, "stages"), *st;
  cJSON_ArrayForEach(st, stages) {
    if (fputs("\n##### ", f) == EOF ||
        rp_md_cell_text(f, json_str(st, "label", json_str(st, "stage", "?"))) != 0 ||
        fputs("\n\n| Kernel | Category | GPU time | Share | Launches |\n"
              "| --- | --- | ---: | ---: | ---: |\n",
              f) == EOF)
      return -1;
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(st, "kernels")) {
      if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "shown"))) continue;
      const cJSON *us = cJSON_GetObjectItemCaseSensitive(k, "total_us");
      const cJSON *sh = cJSON_GetObjectItemCaseSensitive(k, "share_pct");
      const cJSON *la = cJSON_GetObjectItemCaseSensitive(k, "launches");
      if (fputs("| ", f) == EOF || rp_md_cell_text(f, json_str(k, "name", "?")) != 0 ||
          fputs(" | ", f) == EOF || rp_md_cell_text(f, json_str(k, "category", "?")) != 0 ||
          fprintf(f, " | %.2f ms | %.1f%% | %.0f |\n",
                  cJSON_IsNumber(us) ? us->valuedouble / 1000 : 0,
                  cJSON_IsNumber(sh) ? sh->valuedouble : 0,
                  cJSON_IsNumber(la) ? la->valuedouble : 0) < 0)
        return -1;
    }
  }
  return 0;
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
  if (fputs("(from a JSON report: its kernel tables)\n", f) == EOF) return -1;
  return json_tables(f, e->doc);
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
