/* report/ranks_md.c - the Ranks section (ranks_report.h). */
#include "report/ranks_report.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"
#include "report/names.h"
#include "report/rank_notes.h"
#include "report/text.h"

/* One unit per column, stated in the header; cells carry bare numbers (md.h). */
static const char RANK_HEAD[] =
    "| Rank | GPU busy (ms) | Compute (ms) | Exposed communication (ms) | Memory (ms) | "
    "Idle (ms) | Collective wait (ms) | Wait (% of busy) | Top kernel | Top kernel (% of kernel "
    "time) |\n"
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n";
static const char GROUP_HEAD[] =
    "| Ranks | Group from | Matched collectives | Waits for rank | GPU time the others lose (ms) "
    "| Per step (ms) | Steps | Share of the group's GPU time (%) | Verdict |\n"
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
static const char IMB_HEAD[] =
    "| Kernel | Category | Ranks | Min (ms) | Min on rank | Max (ms) | Max on rank | Spread (% "
    "of max) |\n"
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n";

/* " | " then a time in ms. */
static int ms(FILE *f, double us) {
  return fputs(" | ", f) == EOF || rp_md_ms(f, us, false) != 0 ? -1 : 0;
}

static int pct(FILE *f, double p) {
  return fputs(" | ", f) == EOF || rp_md_pct(f, p, false) != 0 ? -1 : 0;
}

/* A rank's row; mark: the straggler's (rp_rank_straggler). */
static int rank_row(FILE *f, const rp_names *nm, const an_rank_row *w, const char *mark) {
  if ((w->straggler ? fprintf(f, "| %ld (%s)", w->rank, mark) : fprintf(f, "| %ld", w->rank)) < 0 ||
      (w->gpus > 1 && fprintf(f, " (1 of its file's %zu GPUs)", w->gpus) < 0) ||
      ms(f, w->busy_us) || ms(f, w->compute_us) || ms(f, w->exposed_comm_us) ||
      ms(f, w->memory_us) || ms(f, w->idle_us) || ms(f, w->wait_us) || pct(f, w->wait_share_pct) ||
      fputs(" | ", f) == EOF)
    return -1;
  if (!w->top_kernel) return fputs("- | - |\n", f) == EOF ? -1 : 0;
  return rp_kernel_md(f, nm, w->top_kernel) || pct(f, w->top_kernel_share_pct) ||
                 fputs(" |\n", f) == EOF
             ? -1
             : 0;
}

static int group_row(FILE *f, const an_rank_group *g) {
  if (fputs("| ", f) == EOF || rp_rank_list_md(f, g->ranks, g->n_ranks) != 0 ||
      fprintf(f, " | %s | %zu", rp_rank_group_source(g->source), g->n_matched) < 0)
    return -1;
  if (g->n_ranks < 2 || !g->n_matched)
    return fprintf(f, " | - | - | - | - | - | %s |\n", rp_rank_verdict(g->verdict)) < 0 ? -1 : 0;
  if (fprintf(f, " | %ld", g->straggler) < 0 || ms(f, g->lost_us)) return -1;
  if (g->n_steps ? ms(f, g->lost_per_step_us) || fprintf(f, " | %zu", g->n_steps) < 0
                 : fputs(" | - | -", f) == EOF)
    return -1;
  if (pct(f, g->lost_share_pct) || fprintf(f, " | %s", rp_rank_verdict(g->verdict)) < 0) return -1;
  if (g->n_absent &&
      (fputs("; not read: ", f) == EOF || rp_rank_list_md(f, g->absent, g->n_absent) != 0))
    return -1;
  return fputs(" |\n", f) == EOF ? -1 : 0;
}

static int imbalance_row(FILE *f, const rp_names *nm, const an_rank_report *rep,
                         const an_imbalance_row *x) {
  const an_rank_group *g = &rep->groups[x->group];
  if (fputs("| ", f) == EOF || rp_kernel_md(f, nm, x->kernel) != 0 || fputs(" | ", f) == EOF ||
      rp_md_cell_text(f, x->category) != 0 || fputs(" | ", f) == EOF ||
      rp_rank_list_md(f, g->ranks, g->n_ranks) != 0)
    return -1;
  return ms(f, x->min_us) || fprintf(f, " | %ld", x->min_rank) < 0 || ms(f, x->max_us) ||
                 fprintf(f, " | %ld", x->max_rank) < 0 || pct(f, x->spread_pct) ||
                 fputs(" |\n", f) == EOF
             ? -1
             : 0;
}

static int stage_section(FILE *f, const rp_names *nm, const an_rank_report *rep, long world) {
  char over[RP_RANK_SPAN_BYTES];
  if (fprintf(f,
              "\n## Ranks: %s\n\n%zu ranks; %s. Collective wait: per matched collective, the "
              "rank's time minus the fastest rank's.\n\n",
              rep->stage, rep->n_rows, rp_rank_span(rep, over, sizeof over)) < 0 ||
      fputs(RANK_HEAD, f) == EOF)
    return -1;
  char mark[RP_RANK_STRAGGLER_BYTES];
  rp_rank_straggler(rep, world, mark, sizeof mark);
  for (size_t i = 0; i < rep->n_rows; i++)
    if (rank_row(f, nm, &rep->rows[i], mark) != 0) return -1;
  rp_rank_notes notes;
  if (rp_rank_notes_build(rep, nm, &notes) != 0) return -1;
  int rc = 0; /* the rows' notes under the rank table, the groups' under theirs */
  for (size_t i = 0; i < notes.n_rows && rc == 0; i++)
    rc = fputs("\n- ", f) == EOF || rp_rank_note_md(f, &notes.notes[i]) || fputc('\n', f) == EOF
             ? -1
             : 0;
  if (rc == 0 &&
      (fprintf(f, "\n### Stragglers: %s\n\n", rep->stage) < 0 || fputs(GROUP_HEAD, f) == EOF))
    rc = -1;
  for (size_t g = 0; g < rep->n_groups && rc == 0; g++) rc = group_row(f, &rep->groups[g]);
  if (rc == 0 && notes.n > notes.n_rows && fputc('\n', f) == EOF) rc = -1;
  for (size_t i = notes.n_rows; i < notes.n && rc == 0; i++)
    rc = fputs("- ", f) == EOF || rp_rank_note_md(f, &notes.notes[i]) || fputc('\n', f) == EOF ? -1
                                                                                               : 0;
  rp_rank_notes_free(&notes);
  if (rc != 0) return -1;
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
    if (stage_section(out, nm, &r->ranks[i], r->limits.world_size) != 0) return -1;
  return 0;
}

/* ------------------------------------------------------------------ JSON */

static double r3(double x) { return an_round3(x); }

/* Each counted step's GPU time of a rank (the diff's floor within a rank). */
static bool step_us_json(cJSON *o, const an_rank_row *w) {
  cJSON *a = cJSON_AddArrayToObject(o, "step_us");
  for (size_t k = 0; a && w->step_us && k < w->n_steps; k++) {
    cJSON *x = cJSON_CreateNumber(r3(w->step_us[k]));
    if (!x) return false;
    cJSON_AddItemToArray(a, x);
  }
  return a != NULL;
}

static bool row_json(cJSON *a, const an_rank_row *w) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(a, o);
  return cJSON_AddNumberToObject(o, "rank", (double)w->rank) &&
         cJSON_AddStringToObject(o, "path", w->path) &&
         cJSON_AddNumberToObject(o, "busy_us", r3(w->busy_us)) &&
         cJSON_AddNumberToObject(o, "idle_us", r3(w->idle_us)) &&
         cJSON_AddNumberToObject(o, "steps", (double)w->n_steps) && step_us_json(o, w) &&
         cJSON_AddNumberToObject(o, "compute_us", r3(w->compute_us)) &&
         cJSON_AddNumberToObject(o, "communication_us", r3(w->communication_us)) &&
         cJSON_AddNumberToObject(o, "memory_us", r3(w->memory_us)) &&
         cJSON_AddNumberToObject(o, "collective_us", r3(w->collective_us)) &&
         cJSON_AddNumberToObject(o, "exposed_comm_us", r3(w->exposed_comm_us)) &&
         cJSON_AddNumberToObject(o, "wait_us", r3(w->wait_us)) &&
         cJSON_AddNumberToObject(o, "wait_share_pct", r3(w->wait_share_pct)) &&
         cJSON_AddNumberToObject(o, "lacks", (double)w->lacks) &&
         (w->gpus < 2 || cJSON_AddNumberToObject(o, "gpus", (double)w->gpus)) &&
         (w->top_kernel ? cJSON_AddStringToObject(o, "top_kernel", w->top_kernel)
                        : cJSON_AddNullToObject(o, "top_kernel")) &&
         cJSON_AddNumberToObject(o, "top_kernel_us", r3(w->top_kernel_us)) &&
         cJSON_AddNumberToObject(o, "top_kernel_share_pct", r3(w->top_kernel_share_pct)) &&
         cJSON_AddNumberToObject(o, "group", (double)w->group) &&
         cJSON_AddBoolToObject(o, "straggler", w->straggler);
}

static bool nullable_string(cJSON *o, const char *k, const char *v) {
  return v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

/* The loss by launch-context family. */
static bool wait_contexts_json(cJSON *o, const an_rank_group *g) {
  cJSON *a = cJSON_AddArrayToObject(o, "wait_contexts");
  for (size_t i = 0; a && i < g->n_wait_contexts; i++) {
    const an_rank_wait_context *x = &g->wait_contexts[i];
    cJSON *e = cJSON_CreateObject();
    if (!e) return false;
    cJSON_AddItemToArray(a, e);
    if (!nullable_string(e, "context", x->context) ||
        !cJSON_AddNumberToObject(e, "lost_us", r3(x->lost_us)) ||
        !cJSON_AddNumberToObject(e, "lost_per_step_us", r3(x->lost_per_step_us)))
      return false;
  }
  return a != NULL;
}

/* "dropped": the instances a member lacks where its peers ran them in the same step, with
 * the longest; null when none. */
static bool dropped_json(cJSON *o, const an_rank_group *g) {
  if (!g->n_dropped) return cJSON_AddNullToObject(o, "dropped") != NULL;
  cJSON *d = cJSON_AddObjectToObject(o, "dropped");
  return d && cJSON_AddNumberToObject(d, "instances", (double)g->n_dropped) &&
         cJSON_AddBoolToObject(d, "sampled", g->dropped_sampled) &&
         nullable_string(d, "kernel", g->dropped_kernel) &&
         nullable_string(d, "context", g->dropped_context) &&
         cJSON_AddBoolToObject(d, "backward", g->dropped_backward) &&
         cJSON_AddNumberToObject(d, "step", (double)g->dropped_step) &&
         cJSON_AddNumberToObject(d, "rank", (double)g->dropped_rank) &&
         cJSON_AddNumberToObject(d, "ran_on", (double)g->dropped_peer) &&
         cJSON_AddNumberToObject(d, "us", r3(g->dropped_us));
}

/* The families the straggler runs longer than its peers, and their summed excess. */
static bool excess_json(cJSON *o, const an_rank_group *g) {
  cJSON *a = cJSON_AddArrayToObject(o, "excess");
  for (size_t i = 0; a && i < g->n_excess; i++) {
    const an_rank_excess *x = &g->excess[i];
    cJSON *e = cJSON_CreateObject();
    if (!e) return false;
    cJSON_AddItemToArray(a, e);
    if (!cJSON_AddStringToObject(e, "family", x->family) ||
        !cJSON_AddBoolToObject(e, "is_kernel", x->is_kernel) ||
        !nullable_string(e, "category", x->category) ||
        !cJSON_AddNumberToObject(e, "straggler_us", r3(x->straggler_us)) ||
        !cJSON_AddNumberToObject(e, "peers_us", r3(x->peers_us)) ||
        !cJSON_AddNumberToObject(e, "per_step_us", r3(x->per_step_us)) ||
        !cJSON_AddNumberToObject(e, "straggler_left_us", r3(x->straggler_left_us)) ||
        !cJSON_AddNumberToObject(e, "peers_left_us", r3(x->peers_left_us)))
      return false;
  }
  cJSON *so = a ? cJSON_AddObjectToObject(o, "sampled_out") : NULL;
  const an_rank_excess *x = &g->sampled_out;
  bool ok = so && cJSON_AddNumberToObject(so, "families", (double)g->n_sampled_out) &&
            nullable_string(so, "family", g->n_sampled_out ? x->family : NULL) &&
            cJSON_AddBoolToObject(so, "is_kernel", g->n_sampled_out && x->is_kernel) &&
            cJSON_AddNumberToObject(so, "straggler_us", r3(x->straggler_us)) &&
            cJSON_AddNumberToObject(so, "peers_us", r3(x->peers_us)) &&
            cJSON_AddNumberToObject(so, "launch_us", r3(g->sampled_out_max_us));
  return ok && cJSON_AddNumberToObject(o, "excess_per_step_us", r3(g->excess_per_step_us)) &&
         cJSON_AddNumberToObject(o, "balanced_excess_per_step_us",
                                 r3(g->balanced_excess_per_step_us));
}

/* The straggler's evidence and cause. */
static bool group_evidence_json(cJSON *o, const an_rank_group *g) {
  return cJSON_AddNumberToObject(o, "last_arrival_pct", r3(g->last_arrival_pct)) &&
         wait_contexts_json(o, g) &&
         cJSON_AddNumberToObject(o, "lost_step_share_pct", r3(g->lost_step_share_pct)) &&
         nullable_string(o, "wait_kernel", g->wait_kernel) &&
         nullable_string(o, "wait_context", g->wait_context) &&
         cJSON_AddNumberToObject(o, "wait_position", (double)g->wait_position) &&
         cJSON_AddNumberToObject(o, "wait_kernel_share_pct", r3(g->wait_kernel_share_pct)) &&
         cJSON_AddNumberToObject(o, "worst_step", (double)g->worst_step) &&
         cJSON_AddNumberToObject(o, "worst_step_lost_us", r3(g->worst_step_lost_us)) &&
         cJSON_AddStringToObject(o, "cause", rp_rank_cause_id(g->cause)) &&
         cJSON_AddNumberToObject(o, "delay_per_step_us", r3(g->delay_per_step_us)) &&
         cJSON_AddNumberToObject(o, "extra_compute_per_step_us",
                                 r3(g->extra_compute_per_step_us)) &&
         cJSON_AddNumberToObject(o, "host_late_per_step_us", r3(g->host_late_per_step_us)) &&
         excess_json(o, g) &&
         cJSON_AddNumberToObject(o, "count_mismatches", (double)g->n_count_mismatch) &&
         nullable_string(o, "mismatch_kernel", g->mismatch_kernel) &&
         cJSON_AddNumberToObject(o, "mismatch_min", (double)g->mismatch_min) &&
         cJSON_AddNumberToObject(o, "mismatch_max", (double)g->mismatch_max) && dropped_json(o, g);
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
  cJSON *ab = g->n_absent ? cJSON_AddArrayToObject(o, "absent_ranks") : NULL;
  for (size_t i = 0; ab && i < g->n_absent; i++) {
    cJSON *n = cJSON_CreateNumber((double)g->absent[i]);
    if (!n) return false;
    cJSON_AddItemToArray(ab, n);
  }
  if (g->n_absent && !ab) return false;
  return rs && cJSON_AddStringToObject(o, "source", rp_rank_group_source_id(g->source)) &&
         cJSON_AddNumberToObject(o, "matched", (double)g->n_matched) &&
         cJSON_AddNumberToObject(o, "unmatched", (double)g->n_unmatched) &&
         cJSON_AddStringToObject(o, "verdict", rp_rank_verdict_id(g->verdict)) &&
         cJSON_AddBoolToObject(o, "has_straggler", g->has_straggler) &&
         (g->n_ranks >= 2 && g->n_matched
              ? cJSON_AddNumberToObject(o, "straggler", (double)g->straggler)
              : cJSON_AddNullToObject(o, "straggler")) &&
         cJSON_AddNumberToObject(o, "lost_us", r3(g->lost_us)) &&
         cJSON_AddNumberToObject(o, "lost_share_pct", r3(g->lost_share_pct)) &&
         cJSON_AddNumberToObject(o, "steps", (double)g->n_steps) &&
         cJSON_AddNumberToObject(o, "lost_per_step_us", r3(g->lost_per_step_us)) &&
         group_evidence_json(o, g);
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
  if (!cJSON_AddStringToObject(o, "stage", rep->stage) ||
      !cJSON_AddNumberToObject(o, "steps", (double)rep->n_steps))
    return false;
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

int rp_ranks_json_document(FILE *out, const an_report *r) {
  cJSON *root = cJSON_CreateObject();
  int rc = root && rp_ranks_json(root, r) == 0 ? 0 : -1;
  char *text = rc == 0 ? cJSON_Print(root) : NULL;
  rc = text && fputs(text, out) != EOF && fputc('\n', out) != EOF ? 0 : -1;
  free(text);
  cJSON_Delete(root);
  return rc;
}
