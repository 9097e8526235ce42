/* report/diff_md.c - triage diff output and JSON report sides (diff_report.h). */
#include "report/diff_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_stream.h"
#include "report/md.h"
#include "report/names.h"
#include "report/text.h"
#include "util/file.h"

/* How a change is worded: the diff's reading (an_diff_report.reading, the low bits) and
 * WORD_UNRESOLVED, the stage's floor is too wide to tell a change from noise
 * (an_diff_stage.unresolved), so a row within it is not resolved rather than "within
 * noise". */
enum { WORD_READING = 3u, WORD_UNRESOLVED = 4u };
static const char *change_word(an_diff_change c, unsigned how) {
  return rp_diff_change_word((an_diff_reading)(how & WORD_READING), c, how & WORD_UNRESOLVED);
}

/* The words of a stage's rows: the diff's, and whether its floor resolves a change. */
static unsigned stage_words(const an_diff_report *d, const an_diff_stage *s) {
  return (unsigned)d->reading | (s->unresolved ? WORD_UNRESOLVED : 0);
}

/* The shared columns of every row: before, after, delta (ms), delta (%), change. A new
 * row has no relative change ("-"). */
static int cols_md(FILE *f, const an_diff_row *r, unsigned how) {
  bool ok = fputs(" | ", f) != EOF && rp_md_ms(f, r->before_us, false) == 0 &&
            fputs(" | ", f) != EOF && rp_md_ms(f, r->after_us, false) == 0 &&
            fputs(" | ", f) != EOF && rp_md_ms(f, r->delta_us, true) == 0 && fputs(" | ", f) != EOF;
  if (ok)
    ok = r->change == AN_DIFF_NEW && !r->still_runs ? fputs("-", f) != EOF
                                                    : rp_md_pct(f, r->delta_pct, true) == 0;
  char buf[RP_DIFF_WORD_BYTES], basis[RP_DIFF_BASIS_BYTES];
  const char *word = rp_diff_overlap_word(r, change_word(r->change, how), buf, sizeof buf);
  ok = ok && fprintf(f, " | %s", rp_diff_basis_word(r, word, basis, sizeof basis)) >= 0;
  if (ok && r->has_wait) /* the wait part of a collective: a wait change is no regression */
    ok = fputs(" (wait ", f) != EOF && rp_md_ms(f, r->before_wait_us, false) == 0 &&
         fputs(" -> ", f) != EOF && rp_md_ms(f, r->after_wait_us, false) == 0 &&
         fputs(")", f) != EOF;
  return ok && fputs(" |\n", f) != EOF ? 0 : -1;
}

/* The columns' unit: per step when the stage's runs both know their steps. printf
 * formats: "%%" is one percent sign. */
static const char *unit_of(bool per_step) { return per_step ? "ms/step" : "ms"; }
#define COLS_HEAD " Before (%s) | After (%s) | Delta (%s) | Delta (%%) | Change |\n"
#define COLS_ARGS(per_step) unit_of(per_step), unit_of(per_step), unit_of(per_step)
#define COLS_RULE " ---: | ---: | ---: | ---: | --- |\n"

/* Display names of n rows' names (kernels), or NULL (then the full names are shown). */
static char **display_names(const rp_names *nm, const an_diff_row *r, size_t n) {
  if (!nm || !n) return NULL;
  const char **full = malloc(n * sizeof *full);
  if (!full) return NULL;
  for (size_t i = 0; i < n; i++) full[i] = r[i].name;
  char **shown = rp_names_display_table(nm, full, n);
  free(full);
  return shown;
}

/* Kernel (or overlap) rows [from, to) of r, numbered from 1 when numbered. */
static int kernel_table(FILE *f, const rp_names *nm, const an_diff_row *r, size_t from, size_t to,
                        unsigned how, const char *first_col, bool per_step) {
  char **shown = display_names(nm, r + from, to - from);
  int rc = fprintf(f, "\n| # | %s | Category |" COLS_HEAD "| ---: | --- | --- |" COLS_RULE,
                   first_col, COLS_ARGS(per_step)) < 0
               ? -1
               : 0;
  for (size_t i = from; i < to && rc == 0; i++) {
    rc = fprintf(f, "| %zu | ", i - from + 1) < 0 ||
                 rp_md_code(f, shown ? shown[i - from] : r[i].name) != 0 ||
                 fputs(" | ", f) == EOF ||
                 rp_md_cell_text(f, r[i].category ? r[i].category : "-") != 0
             ? -1
             : cols_md(f, &r[i], how);
  }
  if (shown) rp_names_table_free(shown, to - from);
  return rc;
}

static int categories_md(FILE *f, const an_diff_stage *s, unsigned how) {
  if (fprintf(f, "\n### Categories: %s\n\n| Category |" COLS_HEAD "| --- |" COLS_RULE, s->label,
              COLS_ARGS(s->per_step)) < 0)
    return -1;
  for (size_t i = 0; i < s->n_categories; i++)
    if (fputs("| ", f) == EOF ||
        rp_md_cell_text(f, s->categories[i].name[0] ? s->categories[i].name : "-") != 0 ||
        cols_md(f, &s->categories[i], how) != 0)
      return -1;
  return 0;
}

/* Kernels beyond the noise floor (they sort first), then those within it. */
static int kernels_md(FILE *f, const rp_names *nm, const an_diff_stage *s, unsigned how,
                      double resolve_max_pct) {
  size_t changed = 0;
  while (changed < s->n_kernels && s->kernels[changed].change != AN_DIFF_SAME) changed++;
  if (fprintf(f, "\n### Kernels that changed: %s\n", s->label) < 0) return -1;
  if (!changed && fputs("\nNo kernel changed beyond the noise floor.\n", f) == EOF) return -1;
  if (changed && kernel_table(f, nm, s->kernels, 0, changed, how, "Kernel", s->per_step) != 0)
    return -1;
  if (changed == s->n_kernels) return 0;
  if (!s->unresolved && fprintf(f, "\n### Kernels within noise: %s\n", s->label) < 0) return -1;
  if (s->unresolved &&
      fprintf(f,
              "\n### Kernels not resolved: %s\n\nThe stage's noise floor (%.1f %%) is wider than "
              "%g %% (`diff.resolve_max_floor_pct`): the diff cannot tell a change under it from "
              "noise, so these kernels' changes are neither regressions nor ruled out.\n",
              s->label, s->noise_pct, resolve_max_pct) < 0)
    return -1;
  return kernel_table(f, nm, s->kernels, changed, s->n_kernels, how, "Kernel", s->per_step);
}

/* Fusion patterns (overlap: overlap rows, with their overlap category) that appeared or
 * went away, or one sentence saying none did. */
static int appeared_md(FILE *f, const rp_names *nm, const an_diff_stage *s, bool overlap,
                       unsigned how) {
  const an_diff_row *r = overlap ? s->overlaps : s->fusions;
  size_t n = overlap ? s->n_overlaps : s->n_fusions;
  if (fprintf(f, "\n### %s: %s\n", overlap ? "Overlap rows" : "Fusion patterns", s->label) < 0)
    return -1;
  if (!n)
    return fprintf(f, "\nNo %s appeared or went away.\n",
                   overlap ? "overlap row" : "fusion pattern") < 0
               ? -1
               : 0;
  if (overlap) return kernel_table(f, nm, r, 0, n, how, "Overlap row (kernel)", s->per_step);
  if (fprintf(f,
              "\nTimes are the patterns' related kernel time.\n\n| Fusion pattern |" COLS_HEAD
              "| --- |" COLS_RULE,
              COLS_ARGS(s->per_step)) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (fputs("| ", f) == EOF || rp_md_code(f, r[i].name) != 0 || cols_md(f, &r[i], how) != 0)
      return -1;
  return 0;
}

/* Ranks of the stage, when both runs have several: busy time and collective wait per rank,
 * and which rank the others waited for in each run. */
static int ranks_md(FILE *f, const an_diff_stage *s) {
  if (!s->n_ranks) return 0;
  if (fprintf(f,
              "\n### Ranks: %s\n\n| Rank | Busy before (ms) | Busy after (ms) | Busy delta (ms) | "
              "Wait before (ms) | Wait after (ms) | Straggler |\n"
              "| ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
              s->label) < 0)
    return -1;
  long sb = -1, sa = -1;
  for (size_t i = 0; i < s->n_ranks; i++) {
    const an_diff_rank_row *r = &s->ranks[i];
    if (r->before_straggler && sb < 0) sb = r->rank;
    if (r->after_straggler && sa < 0) sa = r->rank;
    if (fprintf(f, "| %ld | ", r->rank) < 0 ||
        (r->in_before           ? rp_md_ms(f, r->before_busy_us, false)
         : fputs("-", f) == EOF ? -1
                                : 0) ||
        fputs(" | ", f) == EOF ||
        (r->in_after            ? rp_md_ms(f, r->after_busy_us, false)
         : fputs("-", f) == EOF ? -1
                                : 0) ||
        fputs(" | ", f) == EOF || rp_md_ms(f, r->delta_busy_us, true) != 0 ||
        fputs(" | ", f) == EOF || rp_md_ms(f, r->before_wait_us, false) != 0 ||
        fputs(" | ", f) == EOF || rp_md_ms(f, r->after_wait_us, false) != 0 ||
        fprintf(f, " | %s |\n", rp_diff_straggler_word(r) ? rp_diff_straggler_word(r) : "-") < 0)
      return -1;
  }
  char b[32] = "none", a[32] = "none";
  if (sb >= 0) snprintf(b, sizeof b, "rank %ld", sb);
  if (sa >= 0) snprintf(a, sizeof a, "rank %ld", sa);
  char cmp[RP_RANKS_COMPARED_BYTES];
  return fprintf(f, "\nStraggler (the rank the others wait for): %s before, %s after%s.\n\n%s\n", b,
                 a, sb == sa ? " (unchanged)" : " (changed)",
                 rp_diff_ranks_compared(s, cmp, sizeof cmp)) < 0
             ? -1
             : 0;
}

/* A data floor's own sentence (review 10: the hta pair's test run, its GPU time per step
 * varying 2x, set a 59.8 % floor without saying so): which run's steps or ranks, their
 * range, and what the floor then cannot resolve. */
static int spread_md(FILE *f, const an_diff_stage *s) {
  if (s->noise_source == AN_NOISE_PACKS || !s->noise_n) return 0;
  const char *run = s->noise_after ? "after" : "before";
  int n = s->noise_source == AN_NOISE_RANK_STEPS
              ? fprintf(f,
                        " Rank %ld's work per step in the %s run (its kernel time less its "
                        "collectives') ranges from ",
                        s->noise_rank, run)
              : fprintf(f,
                        " The %s run's work per step (the kernel time launched in it less its "
                        "collectives') ranges from ",
                        run);
  if (n < 0 || rp_md_ms(f, s->noise_lo_us, false) || fputs(" to ", f) == EOF ||
      rp_md_ms(f, s->noise_hi_us, false))
    return -1;
  double ratio = s->noise_lo_us > 0 ? s->noise_hi_us / s->noise_lo_us : 0;
  if (ratio > 0 && fprintf(f, " ms (%.1fx)", ratio) < 0) return -1;
  if (ratio <= 0 && fputs(" ms", f) == EOF) return -1;
  return fprintf(f,
                 " over its %zu steps: that spread sets the stage's floor, so a kernel's "
                 "change under %.1f %% is not resolved here (neither a regression nor ruled "
                 "out); profile more steps, or steadier ones (the same batch and phase), to "
                 "resolve smaller ones.",
                 s->noise_n, s->noise_pct) < 0
             ? -1
             : 0;
}

/* A run whose steps' kernels ran on into the next step's GPU window: its spans per step are
 * not its work (review 16 defect 2). */
static int pipelined_md(FILE *f, const an_diff_stage *s) {
  const size_t cut[2] = {s->before_cut_steps, s->after_cut_steps};
  const size_t steps[2] = {s->before_steps, s->after_steps};
  for (int i = 0; i < 2; i++)
    if (cut[i] &&
        fprintf(f,
                " The %s run is pipelined: in %zu of its %zu steps kernels ran on past the step's "
                "end into the next step's GPU window, so its GPU span per step (Step time) "
                "holds its neighbours' work; its work per step (the kernel time launched in "
                "each) does not, and is what the floor reads.",
                i ? "after" : "before", cut[i], steps[i]) < 0)
      return -1;
  return 0;
}

/* Steps of each run (times per step when both are known) and the stage's noise floor. */
static int steps_md(FILE *f, const an_diff_stage *s) {
  if (fputs("\nSteps: ", f) == EOF) return -1;
  if (!s->before_steps && !s->after_steps && fputs("unknown in both runs", f) == EOF) return -1;
  if ((s->before_steps || s->after_steps) &&
      fprintf(f, "%zu before, %zu after", s->before_steps, s->after_steps) < 0)
    return -1;
  if (fputs(s->per_step ? " (times per step)" : " (times over the stage)", f) == EOF) return -1;
  if (fprintf(f, ". Noise floor: %.1f %% (%s) or %g us.", s->noise_pct,
              rp_diff_noise_source(s->noise_source), s->noise_us) < 0)
    return -1;
  return spread_md(f, s) || pipelined_md(f, s) || fputc('\n', f) == EOF ? -1 : 0;
}

/* A group's kernels of one side: the largest (its display name), and how many more. */
static int renamed_names_md(FILE *f, const rp_names *nm, const char *const *names, size_t n) {
  char **shown = nm ? rp_names_display_table(nm, names, 1) : NULL;
  int rc = rp_md_code(f, shown ? shown[0] : names[0]);
  if (shown) rp_names_table_free(shown, 1);
  if (rc != 0) return -1;
  return n > 1 && fprintf(f, " and %zu more", n - 1) < 0 ? -1 : 0;
}

/* Kernels only one run has, paired by category and launching CPU op: one row per group. */
static int renamed_md(FILE *f, const rp_names *nm, const an_diff_stage *s, unsigned how) {
  if (!s->n_renamed) return 0;
  if (fprintf(f,
              "\n### Kernels renamed: %s\n\nKernels only one run has, paired by category and "
              "launching CPU op (another GPU or library picks other kernels for the same op); "
              "each group's times are summed, and its kernels are not listed as new or "
              "removed.\n\n| # | Category | CPU op | Before kernels | After kernels |" COLS_HEAD
              "| ---: | --- | --- | --- | --- |" COLS_RULE,
              s->label, COLS_ARGS(s->per_step)) < 0)
    return -1;
  for (size_t i = 0; i < s->n_renamed; i++) {
    const an_diff_renamed *g = &s->renamed[i];
    if (fprintf(f, "| %zu | ", i + 1) < 0 || rp_md_cell_text(f, g->category) != 0 ||
        fputs(" | ", f) == EOF || rp_md_cell_text(f, g->cpu_op ? g->cpu_op : "not linked") ||
        fputs(" | ", f) == EOF || renamed_names_md(f, nm, g->before_names, g->n_before) ||
        fputs(" | ", f) == EOF || renamed_names_md(f, nm, g->after_names, g->n_after) ||
        cols_md(f, &g->row, how) != 0)
      return -1;
  }
  return 0;
}

static int stage_md(FILE *f, const rp_names *nm, const an_diff_report *d, const an_diff_stage *s,
                    unsigned how) {
  const an_diff_row *t = &s->total;
  const char *unit = unit_of(s->per_step);
  char part[RP_DIFF_BASIS_BYTES];
  rp_diff_basis_part(t, part, sizeof part);
  /* the stage's verdict, bold where its rows count (a direction between runs that do not
   * compare, or between two ranks, is no verdict) */
  const char *bold = (how & WORD_READING) == AN_DIFF_READ_REGRESSIONS ? "**" : "";
  if (fprintf(f, "\n## Stage: %s\n", s->label) < 0 || steps_md(f, s) ||
      fprintf(f, "\nGPU time%s (sum of kernel time): ", s->per_step ? " per step" : "") < 0 ||
      rp_md_ms(f, t->before_us, false) || fprintf(f, " %s before, ", unit) < 0 ||
      rp_md_ms(f, t->after_us, false) || fprintf(f, " %s after: ", unit) < 0 ||
      rp_md_ms(f, t->delta_us, true) || fprintf(f, " %s (", unit) < 0 ||
      rp_md_pct(f, t->delta_pct, true) ||
      fprintf(f, " %%), %s%s%s%s%s.\n", bold, change_word(t->change, how), bold, *part ? ": " : "",
              part) < 0)
    return -1;
  if (categories_md(f, s, how) || kernels_md(f, nm, s, how, d->resolve_max_floor_pct) ||
      renamed_md(f, nm, s, how) || appeared_md(f, nm, s, false, how) ||
      appeared_md(f, nm, s, true, how))
    return -1;
  return ranks_md(f, s);
}

typedef struct ranked {
  const an_diff_stage *stage;
  const an_diff_row *row;
  const an_diff_renamed *group; /* a renamed group's row; NULL: a kernel row */
} ranked;

static int cmp_ranked(const void *pa, const void *pb) {
  const ranked *a = pa, *b = pb;
  double x = fabs(a->row->delta_us), y = fabs(b->row->delta_us);
  if (x != y) return x > y ? -1 : 1;
  int c = strcmp(a->stage->stage, b->stage->stage);
  return c ? c : strcmp(a->row->name, b->row->name);
}

/* The changed kernel rows and renamed groups of every stage into r (NULL: only counted);
 * how many. */
static size_t changed_rows(const an_diff_report *d, ranked *r) {
  size_t m = 0;
  for (size_t i = 0; i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    for (size_t k = 0; k < s->n_kernels; k++)
      if (s->kernels[k].change != AN_DIFF_SAME && r)
        r[m++] = (ranked){s, &s->kernels[k], NULL};
      else
        m += s->kernels[k].change != AN_DIFF_SAME;
    for (size_t k = 0; k < s->n_renamed; k++)
      if (s->renamed[k].row.change != AN_DIFF_SAME && r)
        r[m++] = (ranked){s, &s->renamed[k].row, &s->renamed[k]};
      else
        m += s->renamed[k].row.change != AN_DIFF_SAME;
  }
  return m;
}

/* A Biggest changes row's kernel cell: the kernel, or a renamed group's kernels on both
 * sides. */
static int ranked_kernel_md(FILE *f, const rp_names *nm, const ranked *r) {
  const an_diff_renamed *g = r->group;
  if (g)
    return fputs("renamed: ", f) == EOF || renamed_names_md(f, nm, g->before_names, g->n_before) ||
                   fputs(" -> ", f) == EOF || renamed_names_md(f, nm, g->after_names, g->n_after)
               ? -1
               : 0;
  char *shown = nm ? rp_names_display(nm, r->row->name) : NULL;
  int rc = rp_md_code(f, shown ? shown : r->row->name);
  free(shown);
  return rc;
}

/* The kernels and renamed groups that changed most, over every stage: the first thing to
 * read; at most rows of them (diff.biggest_rows). */
static int biggest_md(FILE *f, const rp_names *nm, const an_diff_report *d, size_t rows) {
  size_t n = changed_rows(d, NULL);
  if (fputs("\n## Biggest changes\n", f) == EOF) return -1;
  if (!n) return fputs("\nNo kernel changed beyond the noise floor.\n", f) == EOF ? -1 : 0;
  ranked *r = malloc(n * sizeof *r);
  if (!r) return -1;
  size_t m = changed_rows(d, r);
  qsort(r, m, sizeof *r, cmp_ranked);
  if (m > rows) m = rows;
  bool all_steps = true;
  for (size_t i = 0; i < d->n_stages; i++) all_steps = all_steps && d->stages[i].per_step;
  int rc = fprintf(f,
                   "\n| # | Stage | Kernel | Category |" COLS_HEAD
                   "| ---: | --- | --- | --- |" COLS_RULE,
                   COLS_ARGS(all_steps)) < 0
               ? -1
               : 0;
  for (size_t i = 0; i < m && rc == 0; i++) {
    const char *cat = r[i].group ? r[i].group->category : r[i].row->category;
    rc = fprintf(f, "| %zu | ", i + 1) < 0 || rp_md_cell_text(f, r[i].stage->label) != 0 ||
                 fputs(" | ", f) == EOF || ranked_kernel_md(f, nm, &r[i]) != 0 ||
                 fputs(" | ", f) == EOF || rp_md_cell_text(f, cat ? cat : "-") != 0
             ? -1
             : cols_md(f, r[i].row, (unsigned)d->reading);
  }
  free(r);
  return rc;
}

/* A run fact cell: the value, or "unknown". */
static int fact_cell(FILE *f, const char *v) {
  return fputs(" | ", f) == EOF || rp_md_cell_text(f, v ? v : "unknown") != 0 ? -1 : 0;
}

/* One sentence naming the run facts that differ (a hardware or model change explains
 * every row below it), or nothing. */
static int facts_differ_md(FILE *f, const an_diff_report *d) {
  rp_fact_change ch[RP_FACT_CHANGES];
  size_t n = rp_diff_fact_changes(d, ch);
  for (size_t k = 0; k < n; k++)
    if (fputs(k ? "; " : "\nThe runs differ in: ", f) == EOF ||
        fprintf(f, "%s (", ch[k].what) < 0 || rp_md_cell_text(f, ch[k].before) ||
        fputs(" -> ", f) == EOF || rp_md_cell_text(f, ch[k].after) || fputs(")", f) == EOF)
      return -1;
  return n == 0 || fputs(".\n", f) != EOF ? 0 : -1;
}

/* The biggest regression (the step span first, then the stage total, then kernels), for
 * the verdict line. */
static const an_diff_row *worst_regression(const an_diff_report *d, const an_diff_stage **st) {
  const an_diff_row *w = NULL;
  for (size_t i = 0; i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    if (s->has_time && s->span.change == AN_DIFF_SLOWER && (!w || s->span.delta_pct > w->delta_pct))
      w = &s->span, *st = s;
  }
  for (size_t i = 0; !w && i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    if (s->total.change == AN_DIFF_SLOWER && (!w || s->total.delta_pct > w->delta_pct))
      w = &s->total, *st = s;
  }
  const an_diff_row *k = NULL; /* kernels and renamed groups (named by their largest after) */
  for (size_t i = 0; !w && i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    for (size_t j = 0; j < s->n_kernels + s->n_renamed; j++) {
      const an_diff_row *r = j < s->n_kernels ? &s->kernels[j] : &s->renamed[j - s->n_kernels].row;
      if (r->change == AN_DIFF_SLOWER && (!k || r->delta_us > k->delta_us)) k = r, *st = s;
    }
  }
  return w ? w : k;
}

/* The verdict of runs that do not compare: why, and what the rows below still say. */
static int incomparable_md(FILE *f, unsigned why) {
  return fprintf(f,
                 "\n**Verdict: not comparable: %s**; a kernel's time on other "
                 "hardware or with the work split over another number of ranks is not a "
                 "regression. The tables below describe what changed: a time beyond the noise "
                 "floor is longer or shorter, and none of their rows counts as a regression. "
                 "%s\n",
                 rp_diff_incomparable_why(why), rp_diff_incomparable_todo(why)) < 0
             ? -1
             : 0;
}

/* The tables' traces of two ranks: the verdict says so first, and counts no regression. */
static int other_rank_md(FILE *f, const an_diff_report *d) {
  const an_diff_input *b = &d->inputs[0], *a = &d->inputs[1];
  if (d->incomparable)
    return fprintf(f, "The traces are also of different ranks (rank %ld -> rank %ld).\n", b->rank,
                   a->rank) < 0
               ? -1
               : 0;
  return fprintf(f,
                 "\n**Verdict: no regression counted: the traces are of different ranks (rank "
                 "%ld -> rank %ld)**; %zu row%s slower beyond noise, which between two ranks of "
                 "a job may be their share of the work or their waits for each other rather than "
                 "a change between the runs.\n",
                 b->rank, a->rank, d->n_slower, d->n_slower == 1 ? " is" : "s are") < 0
             ? -1
             : 0;
}

/* One line a CI job summary leads with: regression or not, and the biggest one. */
static int verdict_md(FILE *f, const rp_names *nm, const an_diff_report *d) {
  bool other_rank = d->identity_differs & AN_DIFF_RANK_DIFFERS;
  if (d->incomparable)
    return incomparable_md(f, d->incomparable) || (other_rank && other_rank_md(f, d)) ? -1 : 0;
  if (other_rank) return other_rank_md(f, d);
  const an_diff_stage *st = NULL;
  const an_diff_row *w = worst_regression(d, &st);
  if (!w) return fputs("\n**Verdict: no regression beyond noise.**\n", f) == EOF ? -1 : 0;
  if (fprintf(f, "\n**Verdict: %zu regression%s beyond noise**; the biggest: %s ", d->n_regressions,
              d->n_regressions == 1 ? "" : "s", st->label) < 0)
    return -1;
  bool whole = w == &st->total || w == &st->span;
  char *shown = nm && !whole ? rp_names_display(nm, w->name) : NULL;
  int rc = whole ? fputs(w == &st->span ? "step span" : "GPU time", f) == EOF ? -1 : 0
                 : rp_md_code(f, shown ? shown : w->name);
  free(shown);
  if (rc || fputs(" ", f) == EOF || rp_md_pct(f, w->delta_pct, true) ||
      fprintf(f, " %%%s.\n", st->per_step ? " per step" : "") < 0)
    return -1;
  return 0;
}

/* After the verdict: the stages whose floor is too wide to resolve a change under it (a
 * verdict of "no regression" says nothing about changes that small there). */
static int unresolved_md(FILE *f, const an_diff_report *d) {
  size_t n = 0;
  for (size_t i = 0; i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    if (!s->unresolved) continue;
    if (fprintf(f, "%s%s (floor %.1f %%)", n++ ? ", " : "\nNot resolved: stage ", s->label,
                s->noise_pct) < 0)
      return -1;
  }
  if (!n) return 0;
  return fprintf(f,
                 ": %s noise floor is wider than %g %% (`diff.resolve_max_floor_pct`), so the "
                 "diff cannot tell a change under it from noise; such rows read \"not "
                 "resolved\": neither a regression nor ruled out, unless a part of them moved "
                 "beyond the floor (their change names it).\n",
                 n == 1 ? "its" : "each one's", d->resolve_max_floor_pct) < 0
             ? -1
             : 0;
}

/* Warnings a reader must see before the numbers: runs of different step counts. */
static int warnings_md(FILE *f, const an_diff_report *d) {
  for (size_t i = 0; i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    bool both = s->before_steps && s->after_steps;
    if (both && s->before_steps != s->after_steps &&
        fprintf(f,
                "\n> Warning: %s: the runs profiled different numbers of steps (%zu before, %zu "
                "after); its times are compared per step.\n",
                s->label, s->before_steps, s->after_steps) < 0)
      return -1;
    if (!both && (s->before_steps || s->after_steps) &&
        fprintf(f,
                "\n> Warning: %s: only the %s run's steps are known; its times are compared "
                "over the stage, whatever the steps each run profiled.\n",
                s->label, s->before_steps ? "before" : "after") < 0)
      return -1;
  }
  return 0;
}

static int inputs_md(FILE *f, const an_diff_report *d) {
  if (fputs("# Triage diff\n\n| Side | Input | Kind | Trace files | Ranks | Framework | Model "
            "| GPU |\n| --- | --- | --- | ---: | ---: | --- | --- | --- |\n",
            f) == EOF)
    return -1;
  for (int i = 0; i < 2; i++) {
    const an_diff_input *in = &d->inputs[i];
    if (fprintf(f, "| %s | ", i ? "After" : "Before") < 0 ||
        rp_md_code(f, in->path ? in->path : (i ? d->after : d->before)) != 0 ||
        fprintf(f, " | %s | %zu | %zu", in->kind ? in->kind : "trace", in->n_files,
                in->n_ranks ? in->n_ranks : 1) < 0 ||
        fact_cell(f, in->framework) ||
        (in->framework_defaulted && fputs(" (default: not detected)", f) == EOF) ||
        fact_cell(f, in->model) || fact_cell(f, in->gpu) || fputs(" |\n", f) == EOF)
      return -1;
  }
  char who[RP_IDENTITY_BYTES], read[RP_RANKS_READ_BYTES];
  if (rp_diff_identity(d, who, sizeof who) && fprintf(f, "\n%s\n", who) < 0) return -1;
  if (rp_diff_ranks_read(d, read, sizeof read) && fprintf(f, "\n%s\n", read) < 0) return -1;
  if (facts_differ_md(f, d) != 0) return -1;
  const char *moved[2] = {rp_diff_change_id(d->reading, AN_DIFF_SLOWER),
                          rp_diff_change_id(d->reading, AN_DIFF_FASTER)};
  return fprintf(f,
                 "\nNoise floor: per stage, a change smaller than %g %% of the before time or "
                 "%g us (packs: `diff.noise_floor_pct`, `diff.noise_floor_us`), or than twice "
                 "the spread of the stage's work across its steps when that is larger "
                 "(`diff.noise_sigma`; a step's work: the kernel time launched in it less its "
                 "collectives', whose time holds the other ranks' lateness; between profile "
                 "directories, each rank's, rank by rank: ranks differ by design), is within "
                 "noise, never a "
                 "regression. A category "
                 "moves as its kernels do: %s or %s when its kernels that changed "
                 "beyond the floor that way carry %g %% of its change "
                 "(`diff.category_kernels_pct`), else within noise. A row under the floor "
                 "that moves does so by a part of it beyond the floor, and its change names "
                 "that part: a collective's transfer, its time less its wait for other ranks "
                 "(\"%s: transfer +169.4 %%\"), or a category's kernels. A "
                 "collective whose transfer stayed while its wait for other ranks moved is a "
                 "wait change. Kernels are matched by canonical name; times are per step "
                 "where both runs know their steps, else summed over the stage.\n",
                 d->noise_floor_pct, d->noise_floor_us, moved[0], moved[1], d->category_kernels_pct,
                 moved[0]) < 0
             ? -1
             : 0;
}

/* One before -> after (delta) cell of the step-time table. */
static int time_cell(FILE *f, const an_diff_row *r) {
  return fputs(" | ", f) == EOF || rp_md_ms(f, r->before_us, false) || fputs(" -> ", f) == EOF ||
                 rp_md_ms(f, r->after_us, false) || fputs(" (", f) == EOF ||
                 rp_md_ms(f, r->delta_us, true) || fputs(")", f) == EOF
             ? -1
             : 0;
}

/* The time account of each stage in both runs, before any kernel: what a step costs (span
 * = busy + idle), so a kernel-time sum that counts concurrent streams twice is not the
 * first figure read. */
static int step_time_md(FILE *f, const an_diff_report *d) {
  size_t n = 0;
  for (size_t i = 0; i < d->n_stages; i++) n += d->stages[i].has_time;
  if (!n) return 0;
  if (fputs("\n## Step time\n\nFrom each run's time account: span = GPU busy + idle, per step "
            "where both runs know their steps (else over the stage), before -> after (delta), "
            "in ms.\n\n| Stage | Steps | Span | Busy | Idle | Span change |\n"
            "| --- | --- | --- | --- | --- | --- |\n",
            f) == EOF)
    return -1;
  char basis[RP_DIFF_BASIS_BYTES];
  for (size_t i = 0; i < d->n_stages; i++) {
    const an_diff_stage *s = &d->stages[i];
    if (!s->has_time) continue;
    if (fprintf(f, "| %s | %zu -> %zu%s", s->label, s->before_steps, s->after_steps,
                s->per_step ? "" : " (times over the stage)") < 0 ||
        time_cell(f, &s->span) || time_cell(f, &s->busy) || time_cell(f, &s->idle) ||
        fprintf(f, " | %s |\n",
                rp_diff_basis_word(&s->span, change_word(s->span.change, stage_words(d, s)), basis,
                                   sizeof basis)) < 0)
      return -1;
  }
  return 0;
}

int rp_diff_markdown(FILE *out, const an_diff_report *d, const rp_options *o) {
  rp_names *nm = o && !o->full_names ? rp_names_create(o->rules) : NULL;
  size_t rows = o && o->rules ? (size_t)te_rules_settings(o->rules)->diff_biggest_rows : SIZE_MAX;
  int rc = inputs_md(out, d) || verdict_md(out, nm, d) || unresolved_md(out, d) ||
                   step_time_md(out, d) || warnings_md(out, d) || biggest_md(out, nm, d, rows)
               ? -1
               : 0;
  for (size_t i = 0; i < d->n_stages && rc == 0; i++)
    rc = stage_md(out, nm, d, &d->stages[i], stage_words(d, &d->stages[i]));
  rp_names_destroy(nm);
  return rc;
}

/* ------------------------------------------------------------------ JSON */

/* What judged a row under the floor (an_diff_basis); "total" is never written. */
static const char *basis_id(an_diff_basis b) {
  return b == AN_DIFF_BY_TRANSFER  ? "transfer"
         : b == AN_DIFF_BY_WORK    ? "work"
         : b == AN_DIFF_BY_KERNELS ? "kernels"
                                   : "total";
}

static cJSON *row_json(const an_diff_row *r, an_diff_reading how) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddStringToObject(o, "name", r->name) ||
      !(r->category ? cJSON_AddStringToObject(o, "category", r->category)
                    : cJSON_AddNullToObject(o, "category")) ||
      !cJSON_AddNumberToObject(o, "before_us", an_round3(r->before_us)) ||
      !cJSON_AddNumberToObject(o, "after_us", an_round3(r->after_us)) ||
      !cJSON_AddNumberToObject(o, "delta_us", an_round3(r->delta_us)) ||
      !cJSON_AddNumberToObject(o, "delta_pct", an_round3(r->delta_pct)) ||
      !cJSON_AddStringToObject(o, "change", rp_diff_change_id(how, r->change)) ||
      (r->still_runs && !cJSON_AddBoolToObject(o, "still_runs", true)) ||
      (r->renamed_group &&
       !cJSON_AddNumberToObject(o, "renamed_group", (double)r->renamed_group)) ||
      (r->basis != AN_DIFF_BY_TOTAL &&
       (!cJSON_AddStringToObject(o, "basis", basis_id(r->basis)) ||
        !cJSON_AddNumberToObject(o, "basis_pct", an_round3(r->part_pct)))) ||
      (r->has_wait &&
       (!cJSON_AddNumberToObject(o, "before_wait_us", an_round3(r->before_wait_us)) ||
        !cJSON_AddNumberToObject(o, "after_wait_us", an_round3(r->after_wait_us))))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static const char *noise_source_id(an_noise_source s) {
  return s == AN_NOISE_STEPS ? "steps" : s == AN_NOISE_RANK_STEPS ? "rank_steps" : "packs";
}

/* The time account's span, busy and idle of both runs (null when a run has none). */
static bool stage_time_json(cJSON *head, const an_diff_stage *s, an_diff_reading how) {
  if (!s->has_time) return cJSON_AddNullToObject(head, "time") != NULL;
  cJSON *t = cJSON_AddObjectToObject(head, "time");
  const an_diff_row *rows[3] = {&s->span, &s->busy, &s->idle};
  for (int i = 0; t && i < 3; i++) {
    cJSON *x = row_json(rows[i], how);
    if (!x) return false;
    cJSON_AddItemToObject(t, rows[i]->name, x);
  }
  return t != NULL;
}

/* A data floor's run and the range of its values (none under the packs' floor). */
static bool spread_json(cJSON *nf, const an_diff_stage *s) {
  if (s->noise_source == AN_NOISE_PACKS || !s->noise_n) return true;
  cJSON *x = cJSON_AddObjectToObject(nf, "spread");
  return x && cJSON_AddStringToObject(x, "run", s->noise_after ? "after" : "before") &&
         (s->noise_source != AN_NOISE_RANK_STEPS ||
          cJSON_AddNumberToObject(x, "rank", (double)s->noise_rank)) &&
         cJSON_AddNumberToObject(x, "values", (double)s->noise_n) &&
         cJSON_AddNumberToObject(x, "low_us", an_round3(s->noise_lo_us)) &&
         cJSON_AddNumberToObject(x, "high_us", an_round3(s->noise_hi_us));
}

/* "cut_steps": each run's steps whose kernels ran into the next step's window (pipelined) */
static bool cut_steps_json(cJSON *head, const an_diff_stage *s) {
  cJSON *c = cJSON_AddObjectToObject(head, "cut_steps");
  return c && cJSON_AddNumberToObject(c, "before", (double)s->before_cut_steps) &&
         cJSON_AddNumberToObject(c, "after", (double)s->after_cut_steps);
}

/* steps (before, after, per_step) and the stage's noise floor */
static bool stage_head_json(cJSON *head, const an_diff_stage *s, an_diff_reading how) {
  if (!stage_time_json(head, s, how)) return false;
  cJSON *st = cJSON_AddObjectToObject(head, "steps");
  cJSON *nf = st ? cJSON_AddObjectToObject(head, "noise_floor") : NULL;
  return nf && cJSON_AddNumberToObject(st, "before", (double)s->before_steps) &&
         cJSON_AddNumberToObject(st, "after", (double)s->after_steps) &&
         cJSON_AddBoolToObject(st, "per_step", s->per_step) && cut_steps_json(head, s) &&
         cJSON_AddNumberToObject(nf, "pct", an_round3(s->noise_pct)) &&
         cJSON_AddNumberToObject(nf, "us", s->noise_us) &&
         cJSON_AddStringToObject(nf, "source", noise_source_id(s->noise_source)) &&
         cJSON_AddBoolToObject(nf, "resolves", !s->unresolved) && spread_json(nf, s);
}

/* A row list with the diff's reading, for the streamed item makers. */
typedef struct rows_of {
  const void *rows;
  an_diff_reading how;
} rows_of;

static cJSON *row_item(const void *list, size_t i) {
  const rows_of *l = list;
  return row_json((const an_diff_row *)l->rows + i, l->how);
}

static bool text_or_null(cJSON *o, const char *k, const char *v) {
  return v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

static cJSON *names_json(const char *const *names, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; i++) {
    cJSON *x = cJSON_CreateString(names[i]);
    if (!x) return cJSON_Delete(a), NULL;
    cJSON_AddItemToArray(a, x);
  }
  return a;
}

/* A renamed group: its row (name: the largest kernel after), its op and both sides' kernels. */
static cJSON *renamed_item(const void *list, size_t i) {
  const rows_of *l = list;
  const an_diff_renamed *g = (const an_diff_renamed *)l->rows + i;
  cJSON *o = row_json(&g->row, l->how);
  cJSON *b = o ? names_json(g->before_names, g->n_before) : NULL;
  cJSON *a = b ? names_json(g->after_names, g->n_after) : NULL;
  if (!a || !text_or_null(o, "cpu_op", g->cpu_op)) {
    cJSON_Delete(o), cJSON_Delete(b), cJSON_Delete(a);
    return NULL;
  }
  cJSON_AddItemToObject(o, "before_kernels", b);
  cJSON_AddItemToObject(o, "after_kernels", a);
  return o;
}

/* A kernel whose template arguments changed: its row (name: the kernel after), the kernel
 * before and the arguments that differ. */
static cJSON *retemplated_item(const void *list, size_t i) {
  const rows_of *l = list;
  const an_diff_retemplate *x = (const an_diff_retemplate *)l->rows + i;
  cJSON *o = row_json(&x->row, l->how);
  if (o && cJSON_AddStringToObject(o, "before_kernel", x->before_name) &&
      cJSON_AddStringToObject(o, "before_args", x->before_args) &&
      cJSON_AddStringToObject(o, "after_args", x->after_args))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *rank_json(const an_diff_rank_row *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddNumberToObject(o, "rank", (double)r->rank) ||
      !cJSON_AddBoolToObject(o, "in_before", r->in_before) ||
      !cJSON_AddBoolToObject(o, "in_after", r->in_after) ||
      !cJSON_AddNumberToObject(o, "before_busy_us", an_round3(r->before_busy_us)) ||
      !cJSON_AddNumberToObject(o, "after_busy_us", an_round3(r->after_busy_us)) ||
      !cJSON_AddNumberToObject(o, "delta_busy_us", an_round3(r->delta_busy_us)) ||
      !cJSON_AddNumberToObject(o, "before_wait_us", an_round3(r->before_wait_us)) ||
      !cJSON_AddNumberToObject(o, "after_wait_us", an_round3(r->after_wait_us)) ||
      !cJSON_AddBoolToObject(o, "before_straggler", r->before_straggler) ||
      !cJSON_AddBoolToObject(o, "after_straggler", r->after_straggler)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static bool ranks_json(cJSON *o, const an_diff_stage *s) {
  cJSON *a = cJSON_AddArrayToObject(o, "ranks");
  for (size_t i = 0; a && i < s->n_ranks; i++) {
    cJSON *x = rank_json(&s->ranks[i]);
    if (!x) return false;
    cJSON_AddItemToArray(a, x);
  }
  return a != NULL;
}

/* One stage: total, ids, then its row lists, streamed. */
static bool stage_stream(rp_jstream *w, const an_diff_stage *s, an_diff_reading how) {
  cJSON *head = cJSON_CreateObject(), *tail = cJSON_CreateObject(), *t = row_json(&s->total, how);
  bool ok = head && tail && t;
  if (ok) cJSON_AddItemToObject(head, "total", t);
  if (!ok) cJSON_Delete(t);
  ok = ok && cJSON_AddStringToObject(head, "stage", s->stage) &&
       cJSON_AddStringToObject(head, "label", s->label ? s->label : s->stage) &&
       stage_head_json(head, s, how) && ranks_json(tail, s);
  rp_jstream_object_open(w);
  rp_jstream_members(w, ok ? head : NULL);
  /* the row lists one row at a time (a stage may have hundreds of thousands) */
  const rows_of cats = {s->categories, how}, kernels = {s->kernels, how},
                renamed = {s->renamed, how}, retemplated = {s->retemplated, how},
                fusions = {s->fusions, how}, overlaps = {s->overlaps, how};
  ok = ok && rp_jstream_list(w, "categories", s->n_categories, row_item, &cats) &&
       rp_jstream_list(w, "kernels", s->n_kernels, row_item, &kernels) &&
       rp_jstream_list(w, "renamed", s->n_renamed, renamed_item, &renamed) &&
       rp_jstream_list(w, "retemplated", s->n_retemplated, retemplated_item, &retemplated) &&
       rp_jstream_list(w, "fusions", s->n_fusions, row_item, &fusions) &&
       rp_jstream_list(w, "overlaps", s->n_overlaps, row_item, &overlaps);
  rp_jstream_members(w, ok ? tail : NULL);
  rp_jstream_object_close(w);
  cJSON_Delete(head);
  cJSON_Delete(tail);
  return ok;
}

/* The ranks of a directory side whose trace the reader refused. */
static bool unread_json(cJSON *o, const an_diff_input *in) {
  cJSON *a = cJSON_AddArrayToObject(o, "unread_ranks");
  for (size_t k = 0; a && k < in->n_unread; k++) {
    cJSON *x = cJSON_CreateNumber((double)in->unread[k]);
    if (!x) return false;
    cJSON_AddItemToArray(a, x);
  }
  return a != NULL;
}

/* inputs (each side: path, kind, trace files, run facts), noise_floor and the change
 * labels. */
static bool head_json(cJSON *root, const an_diff_report *d) {
  cJSON *inputs = cJSON_AddObjectToObject(root, "inputs");
  for (int i = 0; inputs && i < 2; i++) {
    const an_diff_input *in = &d->inputs[i];
    cJSON *o = cJSON_AddObjectToObject(inputs, i ? "after" : "before");
    cJSON *files = o ? cJSON_AddArrayToObject(o, "files") : NULL;
    if (!files || !cJSON_AddStringToObject(o, "path", i ? d->after : d->before) ||
        !cJSON_AddStringToObject(o, "kind", in->kind ? in->kind : "trace") ||
        !text_or_null(o, "framework", in->framework) || !text_or_null(o, "model", in->model) ||
        !text_or_null(o, "gpu", in->gpu) ||
        !cJSON_AddBoolToObject(o, "framework_defaulted", in->framework_defaulted) ||
        !cJSON_AddNumberToObject(o, "ranks", (double)(in->n_ranks ? in->n_ranks : 1)) ||
        !cJSON_AddNumberToObject(o, "world_size", (double)in->world_size) ||
        !(in->rank >= 0 ? cJSON_AddNumberToObject(o, "rank", (double)in->rank)
                        : cJSON_AddNullToObject(o, "rank")) ||
        !text_or_null(o, "host", in->host) ||
        !(in->only_rank >= 0 ? cJSON_AddNumberToObject(o, "only_rank", (double)in->only_rank)
                             : cJSON_AddNullToObject(o, "only_rank")) ||
        !unread_json(o, in) ||
        !(in->device >= 0 ? cJSON_AddNumberToObject(o, "device", (double)in->device)
                          : cJSON_AddNullToObject(o, "device")) ||
        !(in->graph_pct >= 0 ? cJSON_AddNumberToObject(o, "graph_pct", an_round3(in->graph_pct))
                             : cJSON_AddNullToObject(o, "graph_pct")) ||
        !text_or_null(o, "gemm_dtype", in->gemm_dtype) ||
        !cJSON_AddNumberToObject(o, "gemm_dtype_pct", an_round3(in->gemm_dtype_pct)))
      return false;
    for (size_t k = 0; k < in->n_files; k++) {
      cJSON *x = cJSON_CreateString(in->files[k]);
      if (!x) return false;
      cJSON_AddItemToArray(files, x);
    }
  }
  cJSON *nf = inputs ? cJSON_AddObjectToObject(root, "noise_floor") : NULL;
  cJSON *labels = nf ? cJSON_AddObjectToObject(root, "labels") : NULL;
  if (!labels || !cJSON_AddNumberToObject(nf, "pct", d->noise_floor_pct) ||
      !cJSON_AddNumberToObject(nf, "us", d->noise_floor_us) ||
      !cJSON_AddNumberToObject(nf, "category_kernels_pct", d->category_kernels_pct))
    return false;
  cJSON *why = cJSON_AddArrayToObject(root, "not_comparable"); /* empty: the runs compare */
  if (!why ||
      ((d->incomparable & AN_DIFF_GPU_DIFFERS) &&
       !cJSON_AddItemToArray(why, cJSON_CreateString("gpu"))) ||
      ((d->incomparable & AN_DIFF_WORLD_DIFFERS) &&
       !cJSON_AddItemToArray(why, cJSON_CreateString("world_size"))))
    return false;
  cJSON *who = cJSON_AddArrayToObject(root, "identity_differs"); /* empty: same, or unknown */
  static const struct {
    unsigned bit;
    const char *id;
  } ids[] = {{AN_DIFF_RANK_DIFFERS, "rank"},
             {AN_DIFF_HOST_DIFFERS, "host"},
             {AN_DIFF_DEVICE_DIFFERS, "device"}};
  for (size_t k = 0; who && k < sizeof ids / sizeof ids[0]; k++)
    if ((d->identity_differs & ids[k].bit) &&
        !cJSON_AddItemToArray(who, cJSON_CreateString(ids[k].id)))
      return false;
  if (!who) return false;
  if (!cJSON_AddNumberToObject(root, "regressions", (double)d->n_regressions) ||
      !cJSON_AddNumberToObject(root, "steps_differ", (double)d->n_steps_differ) ||
      !cJSON_AddNumberToObject(root, "steps_unknown", (double)d->n_steps_unknown))
    return false;
  for (int c = AN_DIFF_SAME; c < AN_DIFF_CHANGES; c++)
    if (!cJSON_AddStringToObject(labels, rp_diff_change_id(d->reading, (an_diff_change)c),
                                 rp_diff_change_word(d->reading, (an_diff_change)c, false)))
      return false;
  /* a "same" row of a stage whose floor does not resolve it (noise_floor.resolves false) */
  if (!cJSON_AddStringToObject(labels, "unresolved",
                               rp_diff_change_word(d->reading, AN_DIFF_SAME, true)) ||
      !cJSON_AddNumberToObject(nf, "resolve_max_pct", d->resolve_max_floor_pct))
    return false;
  return true;
}

int rp_diff_json(FILE *out, const an_diff_report *d) {
  rp_jstream w;
  rp_jstream_begin(&w, out);
  bool ok = true;
  rp_jstream_key(&w, "stages");
  rp_jstream_array_open(&w);
  for (size_t i = 0; ok && i < d->n_stages; i++) ok = stage_stream(&w, &d->stages[i], d->reading);
  rp_jstream_array_close(&w);
  cJSON *head = ok ? cJSON_CreateObject() : NULL;
  ok = head && cJSON_AddStringToObject(head, "before", d->before) &&
       cJSON_AddStringToObject(head, "after", d->after) && head_json(head, d);
  rp_jstream_members(&w, ok ? head : NULL);
  cJSON_Delete(head);
  return rp_jstream_end(&w, ok);
}

/* ------------------------------------------------------------------ JSON report sides */

/* String member k of o, or NULL. */
static const char *json_text(const cJSON *o, const char *k) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* Number member k of o, or fallback. */
static double json_num(const cJSON *o, const char *k, double fallback) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(x) ? x->valuedouble : fallback;
}

/* A kernel row's launching CPU op: its first site's that names one (as the model's). */
static const char *site_cpu_op(const cJSON *kernel) {
  const cJSON *site;
  cJSON_ArrayForEach(site, cJSON_GetObjectItemCaseSensitive(kernel, "sites")) {
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(site, "top_cpu_op");
    if (cJSON_IsString(op)) return op->valuestring;
  }
  return NULL;
}

static bool kernels_of(const cJSON *list, const char *name_key, bool only_shown,
                       an_diff_kernel **out, size_t *n) {
  *out = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof **out);
  if (!*out) return false;
  const cJSON *k;
  cJSON_ArrayForEach(k, list) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(k, name_key);
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(k, "category");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(k, only_shown ? "related_us" : "total_us");
    const cJSON *in_steps = cJSON_GetObjectItemCaseSensitive(k, "steps_us");
    const cJSON *shown = cJSON_GetObjectItemCaseSensitive(k, "shown");
    if (!cJSON_IsString(nm) || !cJSON_IsNumber(us)) return false;
    if (only_shown && !cJSON_IsTrue(shown)) continue;
    /* an overlap row under the recoverable floor is not printed, so not compared; a piece
     * of a fusion row or of the chain is named under the table */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "below_floor")) &&
        !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "cites_fusion")))
      continue;
    const cJSON *roof = cJSON_GetObjectItemCaseSensitive(k, "roofline");
    const char *dtype = json_text(roof, "dtype");
    bool gemm = dtype && an_diff_matrix_family(json_text(roof, "family"));
    (*out)[(*n)++] =
        (an_diff_kernel){nm->valuestring,
                         cJSON_IsString(cat) ? cat->valuestring : NULL,
                         us->valuedouble,
                         cJSON_IsNumber(in_steps) ? in_steps->valuedouble : us->valuedouble,
                         site_cpu_op(k),
                         gemm ? dtype : NULL,
                         gemm ? json_num(roof, "time_us", 0) : 0,
                         json_num(k, "graph_staging_us", 0)};
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

/* A stage's time account (its "timeline"): steps, each step's GPU time, the collectives'
 * waits, as an_diff_side_from_report reads them from the model. */
static bool timeline_of(const cJSON *stage, an_diff_side_stage *d) {
  const cJSON *tl = cJSON_GetObjectItemCaseSensitive(stage, "timeline");
  if (!cJSON_IsObject(tl)) return true;
  const cJSON *steps = cJSON_GetObjectItemCaseSensitive(tl, "steps");
  const cJSON *colls = cJSON_GetObjectItemCaseSensitive(tl, "collectives");
  double n = json_num(tl, "steps_counted", 0), cut = json_num(tl, "cut_steps", 0);
  d->n_steps = n >= 0 && n < 1e12 ? (size_t)n : 0;
  d->n_cut_steps = cut >= 0 && cut <= n ? (size_t)cut : 0;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(tl, "total");
  if (cJSON_IsObject(t))
    d->time = (an_diff_time){true,
                             json_num(t, "span_us", 0),
                             json_num(t, "busy_us", 0),
                             json_num(t, "idle_us", 0),
                             json_num(t, "kernel_us", 0),
                             json_num(t, "graph_kernel_us", 0)};
  d->step_us = malloc(((size_t)cJSON_GetArraySize(steps) + 1) * sizeof *d->step_us);
  d->waits = malloc(((size_t)cJSON_GetArraySize(colls) + 1) * sizeof *d->waits);
  if (!d->step_us || !d->waits) return false;
  const cJSON *x;
  /* a report older than work_us gives its window's kernel time */
  cJSON_ArrayForEach(x, steps) d->step_us[d->n_step_us++] =
      json_num(x, "work_us", json_num(x, "kernel_us", 0));
  cJSON_ArrayForEach(x, colls) {
    const char *k = json_text(x, "kernel");
    double wait = json_num(x, "wait_us", -1);
    if (!k || wait < 0 || wait > 1e15) continue;
    d->waits[d->n_waits++] = (an_diff_wait){k, wait};
  }
  return true;
}

/* The counted steps of stage id (its overlap block's "steps"), 0 when unknown. */
static size_t overlap_steps(const cJSON *doc, const char *id) {
  const cJSON *ov = cJSON_GetObjectItemCaseSensitive(doc, "overlap");
  const cJSON *s;
  cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(ov, "stages")) {
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(s, "stage");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "steps");
    if (cJSON_IsString(sid) && strcmp(sid->valuestring, id) == 0 && cJSON_IsNumber(n) &&
        n->valuedouble >= 0 && n->valuedouble < 1e12)
      return (size_t)n->valuedouble;
  }
  return 0;
}

/* The traces behind a report (inputs.ranks of a directory run, else inputs.formal),
 * borrowed from the document. */
static bool report_files(const cJSON *doc, an_diff_side *side) {
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(doc, "inputs");
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(inputs, "ranks"); /* a directory run */
  if (!cJSON_IsArray(list)) list = cJSON_GetObjectItemCaseSensitive(inputs, "formal");
  side->files = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *side->files);
  if (!side->files) return false;
  const cJSON *f;
  cJSON_ArrayForEach(f, list) if (cJSON_IsString(f)) side->files[side->n_files++] = f->valuestring;
  return true;
}

/* A rank row's step_us (each counted step's work); none when the report lacks it. */
static bool report_step_us(const cJSON *steps, an_diff_rank *x) {
  int n = cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0;
  if (n <= 0) return true;
  if (!(x->step_us = malloc((size_t)n * sizeof *x->step_us))) return false;
  const cJSON *v;
  cJSON_ArrayForEach(v, steps) {
    if (cJSON_IsNumber(v)) x->step_us[x->n_step_us++] = v->valuedouble;
  }
  return true;
}

/* The rows of stage id's Ranks section (report "ranks"): rank, busy and wait time, its
 * steps' work, straggler. Rows lacking a member are skipped. */
static bool report_ranks(const cJSON *doc, const char *id, an_diff_side_stage *d) {
  const cJSON *sec;
  cJSON_ArrayForEach(sec, cJSON_GetObjectItemCaseSensitive(doc, "ranks")) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(sec, "stage");
    if (!cJSON_IsString(st) || strcmp(st->valuestring, id) != 0) continue;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(sec, "rows");
    d->ranks = calloc((size_t)cJSON_GetArraySize(rows) + 1, sizeof *d->ranks);
    if (!d->ranks) return false;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
      const cJSON *rank = cJSON_GetObjectItemCaseSensitive(r, "rank");
      const cJSON *busy = cJSON_GetObjectItemCaseSensitive(r, "busy_us");
      const cJSON *wait = cJSON_GetObjectItemCaseSensitive(r, "wait_us");
      if (!cJSON_IsNumber(rank) || !cJSON_IsNumber(busy) || !cJSON_IsNumber(wait)) continue;
      an_diff_rank *x = &d->ranks[d->n_ranks++];
      *x = (an_diff_rank){(long)rank->valuedouble,
                          busy->valuedouble,
                          wait->valuedouble,
                          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "straggler")),
                          0,
                          NULL};
      if (!report_step_us(cJSON_GetObjectItemCaseSensitive(r, "step_us"), x)) return false;
    }
    return true;
  }
  return true;
}

/* Whether path starts as a triage JSON report does: '{', then "mode" as the first member
 * (the report writes it first, and reformatting keeps the order). A trace starts with
 * other members, or gzip bytes: it is neither read whole nor parsed as a document. */
static bool starts_like_report(const char *path) {
  FILE *f = fopen(path, "rb");
  char head[64];
  size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
  if (f) fclose(f);
  head[n] = '\0';
  const char *p = head + strspn(head, " \t\r\n");
  if (*p++ != '{') return false;
  p += strspn(p, " \t\r\n");
  return strncmp(p, "\"mode\"", 6) == 0;
}

int rp_json_report_parse(const char *path, size_t max_bytes, cJSON **doc) {
  *doc = NULL;
  char *text = NULL;
  size_t n = 0;
  int err_no = 0;
  if (!starts_like_report(path)) return 0;
  switch (ut_read_file(path, max_bytes, &text, &n, &err_no)) {
    case UT_FILE_OK:
      break;
    case UT_FILE_TOO_BIG:
      return -2;
    case UT_FILE_NOMEM:
      return -1;
    default:
      return 0; /* unreadable: the trace reader says why */
  }
  *doc = cJSON_ParseWithLength(text, n);
  free(text);
  if (cJSON_IsObject(*doc) && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(*doc, "stages")) &&
      cJSON_GetObjectItemCaseSensitive(*doc, "mode"))
    return 1;
  cJSON_Delete(*doc);
  *doc = NULL;
  return 0; /* not a triage report: a trace */
}

int rp_diff_side_from_doc(const cJSON *doc, const char *path, an_diff_side *side, char *msg,
                          size_t cap) {
  memset(side, 0, sizeof *side);
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(doc, "stages");
  side->label = path;
  side->kind = "report";
  side->framework = json_text(doc, "framework");
  const char *fw_src =
      json_text(cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(doc, "provenance"), "framework"),
                "source");
  side->framework_defaulted = fw_src && strcmp(fw_src, "default") == 0;
  side->model = json_text(doc, "model");
  double ws = json_num(cJSON_GetObjectItemCaseSensitive(doc, "limits"), "world_size", 0);
  side->world_size = ws > 0 && ws < 1e9 ? (long)ws : 0;
  const cJSON *lim = cJSON_GetObjectItemCaseSensitive(doc, "limits");
  double rank = json_num(lim, "trace_rank", -1), dev = json_num(lim, "trace_device", -1);
  side->rank = rank >= 0 && rank < 1e9 ? (long)rank : -1;
  side->device = dev >= 0 && dev < 1e9 ? (long)dev : -1;
  side->only_rank = -1; /* a report says neither --rank nor which rank files failed */
  side->host = json_text(lim, "trace_host");
  side->gpu = json_text(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "context"), "gpu"),
      "value");
  side->stages = calloc((size_t)cJSON_GetArraySize(stages) + 1, sizeof *side->stages);
  if (!side->stages || !report_files(doc, side)) return -1;
  const cJSON *s;
  cJSON_ArrayForEach(s, stages) {
    an_diff_side_stage *d = &side->stages[side->n_stages++];
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "stage");
    bool ok = cJSON_IsString(id) &&
              kernels_of(cJSON_GetObjectItemCaseSensitive(s, "kernels"), "name", false, &d->kernels,
                         &d->n_kernels) &&
              kernels_of(cJSON_GetObjectItemCaseSensitive(s, "fuse"), "id", true, &d->fusions,
                         &d->n_fusions) &&
              kernels_of(overlap_rows(doc, id->valuestring), "kernel", false, &d->overlaps,
                         &d->n_overlaps);
    if (ok && !report_ranks(doc, id->valuestring, d)) return -1;
    if (ok) d->n_steps = overlap_steps(doc, id->valuestring);
    if (ok && !timeline_of(s, d)) return -1;
    if (d->n_ranks > side->n_ranks) side->n_ranks = d->n_ranks;
    if (!ok) {
      snprintf(msg, cap, "stage %zu of the report lacks its stage, kernel, fuse or overlap members",
               side->n_stages - 1);
      return -1;
    }
    d->stage = id->valuestring;
  }
  return 0;
}
