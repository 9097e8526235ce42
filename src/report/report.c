/*
 * report/report.c - markdown and JSON rendering of the triage report.
 */
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "report/kmap_json.h"
#include "report/overlap_report.h"

static const char XPU_NOTE[] =
    "> Note (Intel XPU): this trace has no device-execution timeline; rows are "
    "`urEnqueueKernelLaunch` runtime events, so the **GPU time** column is host "
    "launch-dispatch time, not device-execution time. High launch counts here indicate "
    "eager-mode launch overhead (no graph capture / torch.compile).";

char *rp_md_escape(const char *s) {
  size_t n = 0;
  for (const char *p = s; *p; p++) n += *p == '|' ? 2 : *p == '\n' ? 4 : 1;
  char *o = malloc(n + 1);
  if (!o) return NULL;
  char *q = o;
  for (const char *p = s; *p; p++) {
    if (*p == '|') {
      *q++ = '\\';
      *q++ = '|';
    } else if (*p == '\n') {
      memcpy(q, "<br>", 4);
      q += 4;
    } else if (*p != '\r') {
      *q++ = *p;
    }
  }
  *q = '\0';
  return o;
}

static int cell(FILE *f, const char *s) {
  char *e = rp_md_escape(s ? s : "");
  if (!e) return -1;
  int rc = fprintf(f, " %s |", e) < 0 ? -1 : 0;
  free(e);
  return rc;
}

static int row_cells(FILE *f, const char *const *cells, size_t n) {
  if (fputc('|', f) == EOF) return -1;
  for (size_t i = 0; i < n; i++)
    if (cell(f, cells[i]) != 0) return -1;
  return fputc('\n', f) == EOF ? -1 : 0;
}

static const char KT_HEAD[] =
    "| Kernel | Category | GPU time | Share | Launches | Python location (site share) | CPU op |\n"
    "| --- | --- | ---: | ---: | ---: | --- | --- |\n";
static const char FUSE_HEAD[] =
    "| Pattern | Confidence | Related GPU time | Share | Evidence kernels | Current kernel Python "
    "location | Candidate fused Python path | Rationale |\n"
    "| --- | --- | ---: | ---: | --- | --- | --- | --- |\n";

static void fmt_ms(char *buf, size_t cap, double us) { snprintf(buf, cap, "%.2f ms", us / 1000.0); }
static void fmt_pct(char *buf, size_t cap, double pct) { snprintf(buf, cap, "%.1f%%", pct); }

static bool bare_layout(const an_tables *t, bool fuse) {
  for (size_t i = 0; i < t->n_stages; i++) {
    const an_stage_tables *st = &t->stages[i];
    size_t n = fuse ? st->n_fuse_shown : st->n_shown;
    if (n && strcmp(st->stage->id, "all") != 0) return false;
  }
  return true;
}

static int kernel_rows(FILE *f, const an_stage_tables *st) {
  for (size_t i = 0; i < st->n_rows; i++) {
    const an_kt_row *r = &st->rows[i];
    if (!r->shown) continue;
    char ms[64], pct[32], launches[32];
    fmt_ms(ms, sizeof ms, r->total_us);
    fmt_pct(pct, sizeof pct, r->share_pct);
    snprintf(launches, sizeof launches, "%zu", r->launches);
    const char *cells[] = {r->name, r->category, ms, pct, launches, r->location_cell, r->cpu_op_cell};
    if (row_cells(f, cells, 7) != 0) return -1;
  }
  if (st->xpu && fprintf(f, "\n%s\n", XPU_NOTE) < 0) return -1;
  return 0;
}

static int fuse_rows(FILE *f, const an_stage_tables *st) {
  for (size_t i = 0; i < st->n_fuse; i++) {
    const an_fuse_row *r = &st->fuse[i];
    if (!r->shown) continue;
    char ms[64], pct[32];
    fmt_ms(ms, sizeof ms, r->related_us);
    fmt_pct(pct, sizeof pct, r->share_pct);
    const char *cells[] = {r->pattern->name, r->confidence, ms, pct, r->evidence,
                           r->locations, r->candidate_path, r->rationale};
    if (row_cells(f, cells, 8) != 0) return -1;
  }
  return 0;
}

static int section(FILE *f, const rp_report *r, bool fuse) {
  const an_tables *t = r->tables;
  const char *head = fuse ? FUSE_HEAD : KT_HEAD;
  size_t total = 0;
  for (size_t i = 0; i < t->n_stages; i++) total += fuse ? t->stages[i].n_fuse_shown : t->stages[i].n_shown;
  if (!total) {
    if (fputs(head, f) == EOF) return -1;
    if (fuse)
      return fputs("| No medium-confidence source-backed fusion opportunity matched this trace. "
                   "| - | - | - | - | - | - | - |\n", f) == EOF ? -1 : 0;
    return fprintf(f, "| No kernel rows at or above %.1f%% share. | - | - | - | - | - | - |\n",
                   r->kernel_min_share_pct) < 0 ? -1 : 0;
  }
  bool bare = bare_layout(t, fuse);
  bool first = true;
  for (size_t i = 0; i < t->n_stages; i++) {
    const an_stage_tables *st = &t->stages[i];
    if (!(fuse ? st->n_fuse_shown : st->n_shown)) continue;
    if (!bare) {
      if (!first && fputc('\n', f) == EOF) return -1;
      if (fprintf(f, "##### %s\n", st->stage->label) < 0) return -1;
    }
    first = false;
    if (fputs(head, f) == EOF) return -1;
    if ((fuse ? fuse_rows(f, st) : kernel_rows(f, st)) != 0) return -1;
  }
  return 0;
}

static int join_line(FILE *f, const char *label, const char *const *v, size_t n) {
  if (fputs(label, f) == EOF) return -1;
  for (size_t i = 0; i < n; i++)
    if (fprintf(f, "%s%s", i ? ", " : "", v[i]) < 0) return -1;
  return fputc('\n', f) == EOF ? -1 : 0;
}

static int body(FILE *f, const rp_report *r) {
  if (fputs("Triage View\n", f) == EOF) return -1;
  if (fprintf(f, "Mode: %s\n", r->two_trace ? "mapping-formal" : "single-trace") < 0) return -1;
  if (r->two_trace && r->mapping_framework_label &&
      strcmp(r->mapping_framework_label, r->framework_label) != 0) {
    if (fprintf(f, "Mapping framework: %s\nFormal framework: %s\n", r->mapping_framework_label,
                r->framework_label) < 0)
      return -1;
  } else if (fprintf(f, "Framework: %s\n", r->framework_label) < 0) {
    return -1;
  }
  if (r->two_trace) {
    if (join_line(f, "Mapping traces: ", r->mapping_inputs, r->n_mapping_inputs) ||
        join_line(f, "Formal traces: ", r->formal_inputs, r->n_formal_inputs))
      return -1;
  } else if (join_line(f, "Input traces: ", r->inputs, r->n_inputs)) {
    return -1;
  }
  if (r->model && fprintf(f, "Model: %s\n", r->model) < 0) return -1;
  if (fputs("\nKernel Table\n", f) == EOF || section(f, r, false)) return -1;
  if (fputc('\n', f) == EOF) return -1;
  if (r->overlap) {
    if (rp_overlap_markdown(f, r->overlap) != 0) return -1;
  } else {
    if (fprintf(f,
                "Overlap Opportunity Table\n"
                "| Priority | Verdict | Kernel | Python scope | Formal signal | Dep risk | Recommendation |\n"
                "| --- | --- | --- | --- | --- | --- | --- |\n"
                "| - | - | No rows cleared the %.1f%% reporting bar. Use mapping/formal mode for "
                "overlap attribution. | - | - | - | - |\n",
                r->overlap_min_share_pct) < 0)
      return -1;
  }
  if (fputs("\nFuse Opportunity Table\n", f) == EOF || section(f, r, true)) return -1;
  return 0;
}

int rp_markdown(FILE *out, const rp_report *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return -1;
  int rc = body(m, r);
  if (fclose(m) != 0) rc = -1;
  if (rc == 0) {
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t')) len--;
    if (fwrite(buf, 1, len, out) != len || fputc('\n', out) == EOF) rc = -1;
  }
  free(buf);
  return rc;
}

/* ------------------------------------------------------------------ JSON */

static cJSON *str_array(const char *const *v, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; i++) {
    cJSON *s = cJSON_CreateString(v[i]);
    if (!s) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, s);
  }
  return a;
}

static bool add_str_or_null(cJSON *o, const char *k, const char *v) {
  return v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

static const char *origin_name(te_origin_kind o) {
  return o == TE_ORIGIN_UPSTREAM ? "upstream" : o == TE_ORIGIN_INFLIGHT ? "inflight" : "mainline";
}

static cJSON *stage_json(const an_stage_tables *st) {
  cJSON *s = cJSON_CreateObject();
  if (!s) return NULL;
  if (!cJSON_AddStringToObject(s, "stage", st->stage->id) ||
      !cJSON_AddStringToObject(s, "label", st->stage->label) ||
      !cJSON_AddNumberToObject(s, "kernel_total_us", an_round3(st->total_us)) ||
      !cJSON_AddBoolToObject(s, "xpu_launch_rows", st->xpu))
    goto fail;
  cJSON *ks = cJSON_AddArrayToObject(s, "kernels");
  if (!ks) goto fail;
  for (size_t i = 0; i < st->n_rows; i++) {
    const an_kt_row *r = &st->rows[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) goto fail;
    cJSON_AddItemToArray(ks, o);
    if (!cJSON_AddStringToObject(o, "name", r->name) ||
        !cJSON_AddStringToObject(o, "category", r->category) ||
        !cJSON_AddNumberToObject(o, "total_us", an_round3(r->total_us)) ||
        !cJSON_AddNumberToObject(o, "max_us", an_round3(r->max_us)) ||
        !cJSON_AddNumberToObject(o, "launches", (double)r->launches) ||
        !cJSON_AddNumberToObject(o, "share_pct", an_round3(r->share_pct)) ||
        !cJSON_AddBoolToObject(o, "shown", r->shown) ||
        !cJSON_AddStringToObject(o, "location", r->location_cell) ||
        !cJSON_AddStringToObject(o, "cpu_op", r->cpu_op_cell))
      goto fail;
    cJSON *sites = r->entry ? rp_kmap_sites_json(r->entry) : cJSON_CreateArray();
    if (!sites) goto fail;
    cJSON_AddItemToObject(o, "sites", sites);
    if (!add_str_or_null(o, "best_location", r->entry ? r->entry->best_location : NULL)) goto fail;
  }
  cJSON *fs = cJSON_AddArrayToObject(s, "fuse");
  if (!fs) goto fail;
  for (size_t i = 0; i < st->n_fuse; i++) {
    const an_fuse_row *r = &st->fuse[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) goto fail;
    cJSON_AddItemToArray(fs, o);
    cJSON *paths = str_array(r->pattern->candidate_paths, r->pattern->n_candidate_paths);
    cJSON *rel = str_array(r->related, r->n_related);
    if (!paths || !rel) {
      cJSON_Delete(paths);
      cJSON_Delete(rel);
      goto fail;
    }
    cJSON_AddItemToObject(o, "candidate_paths", paths);
    cJSON_AddItemToObject(o, "related_kernels", rel);
    if (!cJSON_AddStringToObject(o, "id", r->pattern->id) ||
        !cJSON_AddStringToObject(o, "pattern", r->pattern->name) ||
        !cJSON_AddStringToObject(o, "origin", origin_name(r->pattern->origin)) ||
        !cJSON_AddStringToObject(o, "confidence", r->confidence) ||
        !cJSON_AddStringToObject(o, "status", r->status) ||
        !cJSON_AddBoolToObject(o, "active_match", r->active_match) ||
        !cJSON_AddNumberToObject(o, "related_us", an_round3(r->related_us)) ||
        !cJSON_AddNumberToObject(o, "share_pct", an_round3(r->share_pct)) ||
        !cJSON_AddBoolToObject(o, "shown", r->shown) ||
        !cJSON_AddStringToObject(o, "evidence", r->evidence) ||
        !cJSON_AddStringToObject(o, "current_locations", r->locations) ||
        !cJSON_AddStringToObject(o, "rationale", r->rationale))
      goto fail;
  }
  return s;
fail:
  cJSON_Delete(s);
  return NULL;
}

int rp_json(FILE *out, const rp_report *r) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return -1;
  int rc = -1;
  if (!cJSON_AddStringToObject(root, "mode", r->two_trace ? "mapping-formal" : "single-trace") ||
      !cJSON_AddStringToObject(root, "framework", r->framework_label) ||
      !add_str_or_null(root, "framework_id", r->framework_id) ||
      !add_str_or_null(root, "mapping_framework",
                       r->two_trace ? (r->mapping_framework_label ? r->mapping_framework_label
                                                                  : r->framework_label)
                                    : NULL) ||
      !add_str_or_null(root, "model", r->model))
    goto done;
  cJSON *inputs = cJSON_AddObjectToObject(root, "inputs");
  if (!inputs) goto done;
  cJSON *a = r->two_trace ? str_array(r->mapping_inputs, r->n_mapping_inputs)
                          : str_array(r->inputs, r->n_inputs);
  cJSON *b = r->two_trace ? str_array(r->formal_inputs, r->n_formal_inputs)
                          : str_array(r->inputs, r->n_inputs);
  if (!a || !b) {
    cJSON_Delete(a);
    cJSON_Delete(b);
    goto done;
  }
  cJSON_AddItemToObject(inputs, "mapping", a);
  cJSON_AddItemToObject(inputs, "formal", b);
  if (!cJSON_AddNumberToObject(root, "kernel_min_share_pct", r->kernel_min_share_pct)) goto done;
  cJSON *stages = cJSON_AddArrayToObject(root, "stages");
  if (!stages) goto done;
  for (size_t i = 0; i < r->tables->n_stages; i++) {
    cJSON *s = stage_json(&r->tables->stages[i]);
    if (!s) goto done;
    cJSON_AddItemToArray(stages, s);
  }
  if (rp_overlap_json(root, r->overlap) != 0) goto done;
  char *text = cJSON_Print(root);
  if (!text) goto done;
  rc = (fputs(text, out) == EOF || fputc('\n', out) == EOF) ? -1 : 0;
  free(text);
done:
  cJSON_Delete(root);
  return rc;
}
