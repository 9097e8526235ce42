/* report/diff_md.c - triage diff output and JSON report sides (diff_report.h). */
#include "report/diff_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"
#include "util/file.h"

static const char *change_word(an_diff_change c) {
  switch (c) {
    case AN_DIFF_SLOWER:
      return "slower (regression)";
    case AN_DIFF_FASTER:
      return "faster";
    case AN_DIFF_NEW:
      return "new";
    case AN_DIFF_REMOVED:
      return "removed";
    case AN_DIFF_SAME:
      break;
  }
  return "within noise";
}

static int row_md(FILE *f, const an_diff_row *r, bool with_cat) {
  if (fputs("| ", f) == EOF || rp_md_cell_text(f, r->name) != 0) return -1;
  if (with_cat &&
      (fputs(" | ", f) == EOF || rp_md_cell_text(f, r->category ? r->category : "-") != 0))
    return -1;
  return fprintf(f, " | %.3f ms | %.3f ms | %+.3f ms | %+.1f%% | %s |\n", r->before_us / 1000,
                 r->after_us / 1000, r->delta_us / 1000, r->delta_pct, change_word(r->change)) < 0
             ? -1
             : 0;
}

/* Fusion patterns (overlap: overlap rows, with their overlap category) that appeared or
 * went away, or one sentence saying none did. */
static int appeared_md(FILE *f, const an_diff_row *r, size_t n, bool overlap) {
  if (!n)
    return fprintf(f, "\nNo %s appeared or went away.\n",
                   overlap ? "overlap row" : "fusion pattern") < 0
               ? -1
               : 0;
  if (fputs(overlap ? "\n| Overlap row (kernel) | Category | Before | After | Delta | Delta % | "
                      "Change |\n| --- | --- | ---: | ---: | ---: | ---: | --- |\n"
                    : "\n| Fusion pattern | Before | After | Delta | Delta % | Change |\n"
                      "| --- | ---: | ---: | ---: | ---: | --- |\n",
            f) == EOF)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (row_md(f, &r[i], overlap) != 0) return -1;
  return 0;
}

static int stage_md(FILE *f, const an_diff_stage *s) {
  const an_diff_row *t = &s->total;
  if (fprintf(f, "\n##### %s\n\nTotal GPU time: %.3f ms -> %.3f ms (%+.3f ms, %+.1f%%): %s\n",
              s->stage, t->before_us / 1000, t->after_us / 1000, t->delta_us / 1000, t->delta_pct,
              change_word(t->change)) < 0)
    return -1;
  if (fputs("\n| Category | Before | After | Delta | Delta % | Change |\n"
            "| --- | ---: | ---: | ---: | ---: | --- |\n",
            f) == EOF)
    return -1;
  for (size_t i = 0; i < s->n_categories; i++)
    if (row_md(f, &s->categories[i], false) != 0) return -1;
  if (fputs("\n| Kernel | Category | Before | After | Delta | Delta % | Change |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | --- |\n",
            f) == EOF)
    return -1;
  for (size_t i = 0; i < s->n_kernels; i++)
    if (row_md(f, &s->kernels[i], true) != 0) return -1;
  return appeared_md(f, s->fusions, s->n_fusions, false) ||
                 appeared_md(f, s->overlaps, s->n_overlaps, true)
             ? -1
             : 0;
}

int rp_diff_markdown(FILE *out, const an_diff_report *d) {
  if (fprintf(out, "Triage Diff\nBefore: %s\nAfter: %s\n", d->before, d->after) < 0) return -1;
  for (size_t i = 0; i < d->n_stages; i++)
    if (stage_md(out, &d->stages[i]) != 0) return -1;
  return 0;
}

/* ------------------------------------------------------------------ JSON */

static const char *change_id(an_diff_change c) {
  static const char *const ids[] = {"same", "slower", "faster", "new", "removed"};
  return ids[c];
}

static cJSON *row_json(const an_diff_row *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddStringToObject(o, "name", r->name) ||
      !(r->category ? cJSON_AddStringToObject(o, "category", r->category)
                    : cJSON_AddNullToObject(o, "category")) ||
      !cJSON_AddNumberToObject(o, "before_us", an_round3(r->before_us)) ||
      !cJSON_AddNumberToObject(o, "after_us", an_round3(r->after_us)) ||
      !cJSON_AddNumberToObject(o, "delta_us", an_round3(r->delta_us)) ||
      !cJSON_AddNumberToObject(o, "delta_pct", an_round3(r->delta_pct)) ||
      !cJSON_AddStringToObject(o, "change", change_id(r->change))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static bool rows_json(cJSON *o, const char *key, const an_diff_row *r, size_t n) {
  cJSON *a = cJSON_AddArrayToObject(o, key);
  for (size_t i = 0; a && i < n; i++) {
    cJSON *x = row_json(&r[i]);
    if (!x) return false;
    cJSON_AddItemToArray(a, x);
  }
  return a != NULL;
}

int rp_diff_json(FILE *out, const an_diff_report *d) {
  cJSON *root = cJSON_CreateObject();
  cJSON *stages = root ? cJSON_AddArrayToObject(root, "stages") : NULL;
  bool ok = stages && cJSON_AddStringToObject(root, "before", d->before) &&
            cJSON_AddStringToObject(root, "after", d->after);
  for (size_t i = 0; ok && i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    cJSON *o = cJSON_CreateObject(), *t = row_json(&s->total);
    ok = o && t;
    if (o) cJSON_AddItemToArray(stages, o);
    if (t && o)
      cJSON_AddItemToObject(o, "total", t);
    else
      cJSON_Delete(t);
    ok = ok && cJSON_AddStringToObject(o, "stage", s->stage) &&
         rows_json(o, "categories", s->categories, s->n_categories) &&
         rows_json(o, "kernels", s->kernels, s->n_kernels) &&
         rows_json(o, "fusions", s->fusions, s->n_fusions) &&
         rows_json(o, "overlaps", s->overlaps, s->n_overlaps);
  }
  char *text = ok ? cJSON_Print(root) : NULL;
  int rc = text && fputs(text, out) != EOF && fputc('\n', out) != EOF ? 0 : -1;
  free(text);
  cJSON_Delete(root);
  return rc;
}

/* ------------------------------------------------------------------ JSON report sides */

static bool kernels_of(const cJSON *list, const char *name_key, bool only_shown,
                       an_diff_kernel **out, size_t *n) {
  *out = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof **out);
  if (!*out) return false;
  const cJSON *k;
  cJSON_ArrayForEach(k, list) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(k, name_key);
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(k, "category");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(k, only_shown ? "related_us" : "total_us");
    const cJSON *shown = cJSON_GetObjectItemCaseSensitive(k, "shown");
    if (!cJSON_IsString(nm) || !cJSON_IsNumber(us)) return false;
    if (only_shown && !cJSON_IsTrue(shown)) continue;
    (*out)[(*n)++] = (an_diff_kernel){
        nm->valuestring, cJSON_IsString(cat) ? cat->valuestring : NULL, us->valuedouble};
  }
  return true;
}

/* The overlap table rows of stage id in a JSON report (its "overlap" block), or NULL. */
static const cJSON *overlap_rows(const cJSON *doc, const char *id) {
  const cJSON *ov = cJSON_GetObjectItemCaseSensitive(doc, "overlap");
  const cJSON *s;
  cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(ov, "stages")) {
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(s, "stage");
    if (cJSON_IsString(sid) && strcmp(sid->valuestring, id) == 0)
      return cJSON_GetObjectItemCaseSensitive(s, "rows");
  }
  return NULL;
}

int rp_diff_side_read(const char *path, an_diff_side *side, cJSON **doc, char *msg, size_t cap) {
  memset(side, 0, sizeof *side);
  *doc = NULL;
  char *text = NULL;
  size_t n = 0;
  int err_no = 0;
  if (ut_read_file(path, 64u << 20, &text, &n, &err_no) != UT_FILE_OK) return 0;
  *doc = cJSON_ParseWithLength(text, n);
  free(text);
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(*doc, "stages");
  if (!cJSON_IsObject(*doc) || !cJSON_IsArray(stages) ||
      !cJSON_GetObjectItemCaseSensitive(*doc, "mode")) {
    cJSON_Delete(*doc);
    *doc = NULL;
    return 0; /* not a triage report: a trace */
  }
  side->label = path;
  side->stages = calloc((size_t)cJSON_GetArraySize(stages) + 1, sizeof *side->stages);
  if (!side->stages) return -1;
  const cJSON *s;
  cJSON_ArrayForEach(s, stages) {
    an_diff_side_stage *d = &side->stages[side->n_stages++];
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "stage");
    bool ok = cJSON_IsString(id) &&
              kernels_of(cJSON_GetObjectItemCaseSensitive(s, "kernels"), "name", false, &d->kernels,
                         &d->n_kernels) &&
              kernels_of(cJSON_GetObjectItemCaseSensitive(s, "fuse"), "id", true, &d->fusions,
                         &d->n_fusions) &&
              kernels_of(overlap_rows(*doc, id->valuestring), "kernel", false, &d->overlaps,
                         &d->n_overlaps);
    if (!ok) {
      snprintf(msg, cap, "stage %zu of the report lacks its stage, kernel, fuse or overlap members",
               side->n_stages - 1);
      return -1;
    }
    d->stage = id->valuestring;
  }
  return 1;
}
