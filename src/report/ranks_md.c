/* report/ranks_md.c - the Ranks section (ranks_report.h). */
#include "report/ranks_report.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"
#include "report/names.h"

/* One unit per column, stated in the header; cells carry bare numbers (md.h). */
static const char RANK_HEAD[] =
    "| Rank | GPU busy (ms) | Compute (ms) | Exposed communication (ms) | Memory (ms) | "
    "Idle (ms) | Collective wait (ms) | Wait (% of busy) | Top kernel | Top kernel (% of kernel "
    "time) |\n"
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n";
static const char GROUP_HEAD[] =
    "| Ranks | Matched collectives | Waits for rank | GPU time the others lose (ms) | Per step "
    "(ms) | Steps | Share of the group's GPU time (%) | Verdict |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
static const char IMB_HEAD[] =
    "| Kernel | Category | Ranks | Min (ms) | Min on rank | Max (ms) | Max on rank | Spread (% "
    "of max) |\n"
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n";

/* "0-3" for a run of ranks, "0, 2, 5" otherwise. */
static int rank_list(FILE *f, const long *r, size_t n) {
  bool run = n > 2;
  for (size_t i = 1; i < n && run; i++) run = r[i] == r[i - 1] + 1;
  if (run) return fprintf(f, "%ld-%ld", r[0], r[n - 1]) < 0 ? -1 : 0;
  for (size_t i = 0; i < n; i++)
    if (fprintf(f, "%s%ld", i ? ", " : "", r[i]) < 0) return -1;
  return 0;
}

/* " | " then a time in ms. */
static int ms(FILE *f, double us) {
  return fputs(" | ", f) == EOF || rp_md_ms(f, us, false) != 0 ? -1 : 0;
}

static int pct(FILE *f, double p) {
  return fputs(" | ", f) == EOF || rp_md_pct(f, p, false) != 0 ? -1 : 0;
}

/* A kernel name as a code span: its display form when nm is given, else the full name. */
static int kernel_cell(FILE *f, const rp_names *nm, const char *name) {
  char *shown = nm ? rp_names_display(nm, name) : NULL;
  int rc = rp_md_code(f, shown ? shown : name);
  free(shown);
  return rc;
}

static int rank_row(FILE *f, const rp_names *nm, const an_rank_row *w) {
  if (fprintf(f, "| %ld%s", w->rank, w->straggler ? " (straggler)" : "") < 0 || ms(f, w->busy_us) ||
      ms(f, w->compute_us) || ms(f, w->exposed_comm_us) || ms(f, w->memory_us) ||
      ms(f, w->idle_us) || ms(f, w->wait_us) || pct(f, w->wait_share_pct) || fputs(" | ", f) == EOF)
    return -1;
  if (!w->top_kernel) return fputs("- | - |\n", f) == EOF ? -1 : 0;
  return kernel_cell(f, nm, w->top_kernel) || pct(f, w->top_kernel_share_pct) ||
                 fputs(" |\n", f) == EOF
             ? -1
             : 0;
}

static int group_row(FILE *f, const an_rank_group *g) {
  if (fputs("| ", f) == EOF || rank_list(f, g->ranks, g->n_ranks) != 0) return -1;
  if (g->n_ranks < 2 || !g->n_matched)
    return fprintf(f, " | %zu | - | - | - | - | - | no collectives to compare |\n", g->n_matched) <
                   0
               ? -1
               : 0;
  if (fprintf(f, " | %zu | %ld", g->n_matched, g->straggler) < 0 || ms(f, g->lost_us)) return -1;
  if (g->n_steps ? ms(f, g->lost_per_step_us) || fprintf(f, " | %zu", g->n_steps) < 0
                 : fputs(" | - | -", f) == EOF)
    return -1;
  return pct(f, g->lost_share_pct) ||
                 fprintf(f, " | %s |\n",
                         g->has_straggler ? "straggler" : "no straggler (below the bar)") < 0
             ? -1
             : 0;
}

static int imbalance_row(FILE *f, const rp_names *nm, const an_rank_report *rep,
                         const an_imbalance_row *x) {
  const an_rank_group *g = &rep->groups[x->group];
  if (fputs("| ", f) == EOF || kernel_cell(f, nm, x->kernel) != 0 || fputs(" | ", f) == EOF ||
      rp_md_cell_text(f, x->category) != 0 || fputs(" | ", f) == EOF ||
      rank_list(f, g->ranks, g->n_ranks) != 0)
    return -1;
  return ms(f, x->min_us) || fprintf(f, " | %ld", x->min_rank) < 0 || ms(f, x->max_us) ||
                 fprintf(f, " | %ld", x->max_rank) < 0 || pct(f, x->spread_pct) ||
                 fputs(" |\n", f) == EOF
             ? -1
             : 0;
}

static int stage_section(FILE *f, const rp_names *nm, const an_rank_report *rep) {
  if (fprintf(f,
              "\n## Ranks: %s\n\n%zu ranks. Collective wait: per matched collective, the "
              "rank's time minus the fastest rank's.\n\n",
              rep->stage, rep->n_rows) < 0 ||
      fputs(RANK_HEAD, f) == EOF)
    return -1;
  for (size_t i = 0; i < rep->n_rows; i++)
    if (rank_row(f, nm, &rep->rows[i]) != 0) return -1;
  if (fprintf(f, "\n### Stragglers: %s\n\n", rep->stage) < 0 || fputs(GROUP_HEAD, f) == EOF)
    return -1;
  for (size_t g = 0; g < rep->n_groups; g++)
    if (group_row(f, &rep->groups[g]) != 0) return -1;
  if (fprintf(f, "\n### Imbalance: %s\n\n", rep->stage) < 0) return -1;
  if (!rep->n_imbalance)
    return fputs("No kernel differs across ranks above the bar.\n", f) == EOF ? -1 : 0;
  if (fputs(IMB_HEAD, f) == EOF) return -1;
  for (size_t i = 0; i < rep->n_imbalance; i++)
    if (imbalance_row(f, nm, rep, &rep->imbalance[i]) != 0) return -1;
  return 0;
}

int rp_ranks_markdown(FILE *out, const an_report *r, const rp_names *nm) {
  for (size_t i = 0; i < r->n_ranks; i++)
    if (stage_section(out, nm, &r->ranks[i]) != 0) return -1;
  return 0;
}

/* ------------------------------------------------------------------ JSON */

static double r3(double x) { return an_round3(x); }

static bool row_json(cJSON *a, const an_rank_row *w) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(a, o);
  return cJSON_AddNumberToObject(o, "rank", (double)w->rank) &&
         cJSON_AddStringToObject(o, "path", w->path) &&
         cJSON_AddNumberToObject(o, "busy_us", r3(w->busy_us)) &&
         cJSON_AddNumberToObject(o, "idle_us", r3(w->idle_us)) &&
         cJSON_AddNumberToObject(o, "compute_us", r3(w->compute_us)) &&
         cJSON_AddNumberToObject(o, "communication_us", r3(w->communication_us)) &&
         cJSON_AddNumberToObject(o, "memory_us", r3(w->memory_us)) &&
         cJSON_AddNumberToObject(o, "collective_us", r3(w->collective_us)) &&
         cJSON_AddNumberToObject(o, "exposed_comm_us", r3(w->exposed_comm_us)) &&
         cJSON_AddNumberToObject(o, "wait_us", r3(w->wait_us)) &&
         cJSON_AddNumberToObject(o, "wait_share_pct", r3(w->wait_share_pct)) &&
         (w->top_kernel ? cJSON_AddStringToObject(o, "top_kernel", w->top_kernel)
                        : cJSON_AddNullToObject(o, "top_kernel")) &&
         cJSON_AddNumberToObject(o, "top_kernel_us", r3(w->top_kernel_us)) &&
         cJSON_AddNumberToObject(o, "top_kernel_share_pct", r3(w->top_kernel_share_pct)) &&
         cJSON_AddNumberToObject(o, "group", (double)w->group) &&
         cJSON_AddBoolToObject(o, "straggler", w->straggler);
}

static bool group_json(cJSON *a, const an_rank_group *g) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(a, o);
  cJSON *rs = cJSON_AddArrayToObject(o, "ranks");
  for (size_t i = 0; rs && i < g->n_ranks; i++) {
    cJSON *n = cJSON_CreateNumber((double)g->ranks[i]);
    if (!n) return false;
    cJSON_AddItemToArray(rs, n);
  }
  return rs && cJSON_AddNumberToObject(o, "matched", (double)g->n_matched) &&
         cJSON_AddNumberToObject(o, "unmatched", (double)g->n_unmatched) &&
         cJSON_AddBoolToObject(o, "has_straggler", g->has_straggler) &&
         (g->n_ranks >= 2 && g->n_matched
              ? cJSON_AddNumberToObject(o, "straggler", (double)g->straggler)
              : cJSON_AddNullToObject(o, "straggler")) &&
         cJSON_AddNumberToObject(o, "lost_us", r3(g->lost_us)) &&
         cJSON_AddNumberToObject(o, "lost_share_pct", r3(g->lost_share_pct)) &&
         cJSON_AddNumberToObject(o, "steps", (double)g->n_steps) &&
         cJSON_AddNumberToObject(o, "lost_per_step_us", r3(g->lost_per_step_us));
}

static bool imbalance_json(cJSON *a, const an_imbalance_row *x) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(a, o);
  return cJSON_AddStringToObject(o, "kernel", x->kernel) &&
         cJSON_AddStringToObject(o, "category", x->category ? x->category : "") &&
         cJSON_AddNumberToObject(o, "group", (double)x->group) &&
         cJSON_AddNumberToObject(o, "min_us", r3(x->min_us)) &&
         cJSON_AddNumberToObject(o, "max_us", r3(x->max_us)) &&
         cJSON_AddNumberToObject(o, "min_rank", (double)x->min_rank) &&
         cJSON_AddNumberToObject(o, "max_rank", (double)x->max_rank) &&
         cJSON_AddNumberToObject(o, "spread_pct", r3(x->spread_pct));
}

static bool stage_json(cJSON *a, const an_rank_report *rep) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(a, o);
  if (!cJSON_AddStringToObject(o, "stage", rep->stage)) return false;
  cJSON *rows = cJSON_AddArrayToObject(o, "rows");
  cJSON *groups = cJSON_AddArrayToObject(o, "groups");
  cJSON *imb = cJSON_AddArrayToObject(o, "imbalance");
  if (!rows || !groups || !imb) return false;
  for (size_t i = 0; i < rep->n_rows; i++)
    if (!row_json(rows, &rep->rows[i])) return false;
  for (size_t i = 0; i < rep->n_groups; i++)
    if (!group_json(groups, &rep->groups[i])) return false;
  for (size_t i = 0; i < rep->n_imbalance; i++)
    if (!imbalance_json(imb, &rep->imbalance[i])) return false;
  return true;
}

int rp_ranks_json(cJSON *report, const an_report *r) {
  cJSON *a = cJSON_AddArrayToObject(report, "ranks");
  if (!a) return -1;
  for (size_t i = 0; i < r->n_ranks; i++)
    if (!stage_json(a, &r->ranks[i])) return -1;
  return 0;
}

/* ------------------------------------------------------------------ rank data */

/* [name, category, class, total_us] */
static cJSON *kernel_json(const an_rank_kernel *k) {
  cJSON *x = cJSON_CreateArray();
  cJSON *v[4] = {cJSON_CreateString(k->name), cJSON_CreateString(k->category ? k->category : ""),
                 cJSON_CreateNumber((double)k->cls), cJSON_CreateNumber(k->total_us)};
  for (int j = 0; j < 4; j++)
    if (!x || !v[j] || !cJSON_AddItemToArray(x, v[j])) {
      for (int i = j; i < 4; i++) cJSON_Delete(v[i]);
      cJSON_Delete(x);
      return NULL;
    }
  return x;
}

/* [kernel index, duration_us] */
static cJSON *collective_json(const an_rank_collective *c) {
  const double v[2] = {(double)c->kernel, c->dur_us};
  return cJSON_CreateDoubleArray(v, 2);
}

/* The members after the lists; durations are written unrounded: merge must reproduce the
 * direct run exactly. */
static cJSON *data_tail_json(const an_rank_data *d) {
  cJSON *o = cJSON_CreateObject();
  if (o && cJSON_AddNumberToObject(o, "rank", (double)d->rank) &&
      cJSON_AddStringToObject(o, "path", d->path) &&
      cJSON_AddStringToObject(o, "stage", d->stage) &&
      cJSON_AddNumberToObject(o, "busy_us", d->busy_us) &&
      cJSON_AddNumberToObject(o, "idle_us", d->idle_us) &&
      cJSON_AddNumberToObject(o, "compute_us", d->class_us[AN_RANK_COMPUTE]) &&
      cJSON_AddNumberToObject(o, "communication_us", d->class_us[AN_RANK_COMM]) &&
      cJSON_AddNumberToObject(o, "memory_us", d->class_us[AN_RANK_MEMORY]) &&
      cJSON_AddNumberToObject(o, "collective_us", d->collective_us) &&
      cJSON_AddNumberToObject(o, "steps", (double)d->n_steps))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *group_item(const void *group, size_t i) {
  return cJSON_CreateNumber((double)((const long *)group)[i]);
}

static cJSON *kernel_item(const void *kernels, size_t i) {
  return kernel_json((const an_rank_kernel *)kernels + i);
}

static cJSON *collective_item(const void *colls, size_t i) {
  return collective_json((const an_rank_collective *)colls + i);
}

/* One rank's data, its kernel and collective lists one element at a time (a rank may
 * have hundreds of thousands of each). */
static bool data_stream(rp_jstream *w, const an_rank_data *d) {
  rp_jstream_object_open(w);
  bool ok = rp_jstream_list(w, "group", d->n_group, group_item, d->group) &&
            rp_jstream_list(w, "kernels", d->n_kernels, kernel_item, d->kernels) &&
            rp_jstream_list(w, "collectives", d->n_collectives, collective_item, d->collectives);
  cJSON *tail = ok ? data_tail_json(d) : NULL;
  rp_jstream_members(w, tail);
  rp_jstream_object_close(w);
  cJSON_Delete(tail);
  return ok && tail;
}

bool rp_rank_data_stream(rp_jstream *w, const an_report *r) {
  if (!r->n_rank_data) return true;
  bool ok = true;
  rp_jstream_key(w, "rank_data");
  rp_jstream_array_open(w);
  for (size_t i = 0; ok && i < r->n_rank_data; i++) ok = data_stream(w, &r->rank_data[i]);
  rp_jstream_array_close(w);
  return ok;
}

int rp_ranks_json_document(FILE *out, const an_report *r) {
  cJSON *root = cJSON_CreateObject();
  int rc = root && rp_ranks_json(root, r) == 0 ? 0 : -1;
  char *text = rc == 0 ? cJSON_Print(root) : NULL;
  rc = text && fputs(text, out) != EOF && fputc('\n', out) != EOF ? 0 : -1;
  free(text);
  cJSON_Delete(root);
  return rc;
}

static bool keep_alloc(void ***owned, size_t *n, void *p) {
  void **v = p ? realloc(*owned, (*n + 1) * sizeof *v) : NULL;
  if (!v) {
    free(p);
    return false;
  }
  *owned = v;
  v[(*n)++] = p;
  return true;
}

static double num(const cJSON *o, const char *k, bool *ok) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(x)) *ok = false;
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static bool read_arrays(const cJSON *e, an_rank_data *d, void ***owned, size_t *n_owned) {
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(e, "group");
  const cJSON *ks = cJSON_GetObjectItemCaseSensitive(e, "kernels");
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(e, "collectives");
  if (!cJSON_IsArray(g) || !cJSON_IsArray(ks) || !cJSON_IsArray(cs)) return false;
  long *group = malloc(((size_t)cJSON_GetArraySize(g) + 1) * sizeof *group);
  an_rank_kernel *k = malloc(((size_t)cJSON_GetArraySize(ks) + 1) * sizeof *k);
  an_rank_collective *c = malloc(((size_t)cJSON_GetArraySize(cs) + 1) * sizeof *c);
  if (!keep_alloc(owned, n_owned, group) | !keep_alloc(owned, n_owned, k) |
      !keep_alloc(owned, n_owned, c))
    return false;
  const cJSON *x;
  cJSON_ArrayForEach(x, g) {
    if (!cJSON_IsNumber(x)) return false;
    group[d->n_group++] = (long)x->valuedouble;
  }
  cJSON_ArrayForEach(x, ks) {
    const cJSON *v[4] = {cJSON_GetArrayItem(x, 0), cJSON_GetArrayItem(x, 1),
                         cJSON_GetArrayItem(x, 2), cJSON_GetArrayItem(x, 3)};
    if (!cJSON_IsString(v[0]) || !cJSON_IsString(v[1]) || !cJSON_IsNumber(v[2]) ||
        !cJSON_IsNumber(v[3]) || v[2]->valuedouble < 0 || v[2]->valuedouble > AN_RANK_MEMORY)
      return false;
    k[d->n_kernels++] = (an_rank_kernel){v[0]->valuestring, v[1]->valuestring,
                                         (an_rank_class)v[2]->valueint, v[3]->valuedouble};
  }
  cJSON_ArrayForEach(x, cs) {
    const cJSON *i = cJSON_GetArrayItem(x, 0), *u = cJSON_GetArrayItem(x, 1);
    if (!cJSON_IsNumber(i) || !cJSON_IsNumber(u) || i->valuedouble < 0) return false;
    c[d->n_collectives++] = (an_rank_collective){(size_t)i->valuedouble, u->valuedouble};
  }
  d->group = group;
  d->kernels = k;
  d->collectives = c;
  return true;
}

int rp_rank_data_read(const cJSON *doc, an_rank_data **data, size_t *n, void ***owned,
                      size_t *n_owned, char *msg, size_t cap) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "rank_data");
  if (!cJSON_IsArray(list)) {
    snprintf(msg, cap,
             "no \"rank_data\": not a one-rank JSON report (triage --rank N --format json)");
    return -1;
  }
  const cJSON *e;
  size_t i = 0;
  cJSON_ArrayForEach(e, list) {
    an_rank_data *v = realloc(*data, (*n + 1) * sizeof *v);
    if (!v) return snprintf(msg, cap, "out of memory"), -1;
    *data = v;
    an_rank_data *d = &v[(*n)++];
    memset(d, 0, sizeof *d);
    bool ok = true;
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
    const cJSON *stage = cJSON_GetObjectItemCaseSensitive(e, "stage");
    d->rank = (long)num(e, "rank", &ok);
    d->busy_us = num(e, "busy_us", &ok);
    d->idle_us = num(e, "idle_us", &ok);
    d->class_us[AN_RANK_COMPUTE] = num(e, "compute_us", &ok);
    d->class_us[AN_RANK_COMM] = num(e, "communication_us", &ok);
    d->class_us[AN_RANK_MEMORY] = num(e, "memory_us", &ok);
    d->collective_us = num(e, "collective_us", &ok);
    double steps = num(e, "steps", &ok);
    d->n_steps = steps >= 0 && steps < 1e12 ? (size_t)steps : 0;
    ok = ok && cJSON_IsString(path) && cJSON_IsString(stage) && d->rank >= 0;
    if (ok) d->path = path->valuestring, d->stage = stage->valuestring;
    if (!ok || !read_arrays(e, d, owned, n_owned)) {
      snprintf(msg, cap, "rank_data[%zu] is malformed", i);
      return -1;
    }
    i++;
  }
  return 0;
}

void rp_rank_data_free(void **owned, size_t n_owned) {
  for (size_t i = 0; i < n_owned; i++) free(owned[i]);
  free(owned);
}
