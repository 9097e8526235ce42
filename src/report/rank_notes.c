/* report/rank_notes.c - the notes of a Ranks section (rank_notes.h). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "report/rank_notes.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"
#include "report/text.h"
#include "util/vec.h"

/* Where a note's parts start in its text: each mark opens a part of its kind. */
typedef struct part_mark {
  rp_note_kind kind;
  long at;
} part_mark;

typedef struct part_marks {
  size_t n, cap;
  part_mark *v;
} part_marks;

/* What every note reads: the section, the group a group note is about, the names; and
 * where its parts start (the note's writer marks them). */
typedef struct note_args {
  const an_rank_report *rep;
  const an_rank_group *g;
  const rp_names *nm;
  bool merged; /* some file of the stage holds several GPUs */
  part_marks *marks;
} note_args;

static int mark(part_marks *m, rp_note_kind kind, long at) {
  part_mark *v = at < 0 ? NULL : ut_grow(m->v, &m->cap, m->n + 1, sizeof *v);
  if (!v) return -1;
  m->v = v;
  m->v[m->n++] = (part_mark){kind, at};
  return 0;
}

/* text as a part of its own kind, then text again. */
static int typed(FILE *f, const note_args *a, rp_note_kind kind, const char *text) {
  return mark(a->marks, kind, ftell(f)) || fputs(text, f) == EOF ||
                 mark(a->marks, RP_NOTE_TEXT, ftell(f))
             ? -1
             : 0;
}

/* A kernel name as code: nm's display form, or the full name. */
static int kernel_part(FILE *f, const note_args *a, const char *name) {
  char *shown = a->nm ? rp_names_display(a->nm, name) : NULL;
  int rc = typed(f, a, RP_NOTE_CODE, shown ? shown : name);
  free(shown);
  return rc;
}

int rp_rank_list_md(FILE *f, const long *r, size_t n) {
  bool run = n > 2;
  for (size_t i = 1; i < n && run; i++) run = r[i] == r[i - 1] + 1;
  if (run) return fprintf(f, "%ld-%ld", r[0], r[n - 1]) < 0 ? -1 : 0;
  for (size_t i = 0; i < n; i++)
    if (fprintf(f, "%s%ld", i ? ", " : "", r[i]) < 0) return -1;
  return 0;
}

int rp_kernel_md(FILE *f, const rp_names *nm, const char *name) {
  char *shown = nm ? rp_names_display(nm, name) : NULL;
  int rc = rp_md_code(f, shown ? shown : name);
  free(shown);
  return rc;
}

/* Rows whose trace holds several GPUs (a node's ranks in one file): each row reads one. */
static int gpus_note(FILE *f, const note_args *a) {
  const an_rank_report *rep = a->rep;
  for (size_t i = 0, k = 0; i < rep->n_rows; i++) {
    const an_rank_row *w = &rep->rows[i];
    if (w->gpus < 2) continue;
    if (fprintf(f, "%sank %ld's trace holds the kernels of %zu GPUs", k++ ? "; r" : "R", w->rank,
                w->gpus) < 0)
      return -1;
  }
  return fputs(
             " (several ranks in one file: a node's traces merged). Each row reads the GPU of "
             "its file with the most kernel time, under the file's one distributedInfo.rank: "
             "the ranks of the other GPUs are compared by no row, and the straggler verdicts "
             "speak for the GPUs read only. Profile one trace per rank (every framework's "
             "profiler writes one per worker).",
             f) == EOF
             ? -1
             : 0;
}

/* A group whose process group names ranks the stage lacks: the verdict is the ranks read's. */
static int absent_note(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  if (fputs("Ranks ", f) == EOF || rp_rank_list_md(f, g->ranks, g->n_ranks) != 0 ||
      fprintf(f, ": rank%s ", g->n_absent == 1 ? "" : "s") < 0 ||
      rp_rank_list_md(f, g->absent, g->n_absent) != 0 ||
      fprintf(f,
              " of their process group %s not read (no trace of %s in the directory, one the "
              "reader refused: Limits%s): if the straggler is among them, every rank read "
              "waits for it alike and the loss shows on none, so the verdict speaks for the "
              "ranks read only.",
              g->n_absent == 1 ? "was" : "were", g->n_absent == 1 ? "it" : "them",
              a->merged ? ", or a GPU of a file holding several (above)" : "") < 0)
    return -1;
  return 0;
}

/* " (N.N ms)" */
static int paren_ms(FILE *f, double us) {
  return fputs(" (", f) == EOF || rp_md_ms(f, us, false) || fputs(" ms)", f) == EOF ? -1 : 0;
}

/* Where the others' wait goes: the collective and the step. */
static int wait_where(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  if (!g->wait_kernel) return 0;
  if (fprintf(f, "; %.1f %% of the loss in ", g->wait_kernel_share_pct) < 0) return -1;
  if (g->wait_position && fprintf(f, "collective %zu of the step, ", g->wait_position) < 0)
    return -1;
  if (kernel_part(f, a, g->wait_kernel) != 0) return -1;
  if (g->wait_context && fprintf(f, " (%s)", g->wait_context) < 0) return -1;
  if (!g->worst_step) return 0;
  return fprintf(f, "; the most in step %zu of %zu", g->worst_step, g->n_steps) < 0 ||
                 paren_ms(f, g->worst_step_lost_us)
             ? -1
             : 0;
}

/* A signed difference as printed: under half a microsecond is 0, never "-0.000". */
static double tidy(double us) { return us > -0.5 && us < 0.5 ? 0 : us; }

/* The straggler's first families of excess work (rp_rank_excess's words), a kernel's
 * name as code. */
static int excess_parts(FILE *f, const note_args *a, size_t max) {
  const an_rank_group *g = a->g;
  char times[RP_RANK_EXCESS_BYTES];
  for (size_t i = 0; i < g->n_excess && i < max; i++) {
    const an_rank_excess *x = &g->excess[i];
    if ((i && fputs(", ", f) == EOF) ||
        (x->is_kernel                              ? kernel_part(f, a, x->family)
         : fprintf(f, "%s kernels", x->family) < 0 ? -1
                                                   : 0) ||
        fputs(rp_rank_excess_times(g, x, times, sizeof times), f) == EOF)
      return -1;
  }
  size_t more = g->n_excess > max ? g->n_excess - max : 0;
  return more && fprintf(f, " and %zu more famil%s", more, more == 1 ? "y" : "ies") < 0 ? -1 : 0;
}

/* The largest family left out of the excess: one launch a sampled trace kept
 * (an_rank_group.sampled_out), the others counted. */
static int sampled_out_text(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  const an_rank_excess *x = &g->sampled_out;
  char times[RP_RANK_EXCESS_BYTES], one[32];
  rp_md_number(one, sizeof one, g->sampled_out_max_us / 1000.0);
  if (fputs("; left out as a sampling artifact, not work: ", f) == EOF ||
      (x->is_kernel                              ? kernel_part(f, a, x->family)
       : fprintf(f, "%s kernels", x->family) < 0 ? -1
                                                 : 0) ||
      fputs(rp_rank_excess_times(g, x, times, sizeof times), f) == EOF ||
      fprintf(f,
              ", of which one launch of %s ms that only rank %ld's sampled trace kept: without "
              "it rank %ld's time is within the imbalance bar of the others'",
              one, g->straggler, g->straggler) < 0)
    return -1;
  size_t more = g->n_sampled_out - 1;
  return more && fprintf(f, " (and %zu more such famil%s)", more, more == 1 ? "y" : "ies") < 0 ? -1
                                                                                               : 0;
}

/* Why the straggler is late, from its steps against the others'. */
static int cause_text(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  if (fputs(". Cause: ", f) == EOF || fputs(rp_rank_cause(g->cause), f) == EOF) return -1;
  if (!g->n_steps) return fputs(" (no steps to compare)", f) == EOF ? -1 : 0;
  if (g->cause == AN_CAUSE_IMBALANCE &&
      (fputs(": it runs more work than the others in the imbalance table's kernel families, ", f) ==
           EOF ||
       rp_md_ms(f, g->excess_per_step_us, false) || fputs(" ms per step in all: ", f) == EOF ||
       excess_parts(f, a, 3) ||
       fprintf(f, " (rank %ld against the others' median), ", g->straggler) < 0 ||
       rp_md_ms(f, g->balanced_excess_per_step_us, false) ||
       fprintf(f,
               " ms per step over an even share of the %zu ranks' work (what an even split "
               "moves to its peers); the lever is the split of work across the ranks "
               "(sharding plan, input sizes)",
               g->n_ranks) < 0))
    return -1;
  if (g->cause == AN_CAUSE_IMBALANCE && g->n_sampled_out && sampled_out_text(f, a)) return -1;
  if (g->cause == AN_CAUSE_IMBALANCE && g->n_dropped && g->dropped_sampled)
    return fputs(
               "; a sampled trace of the group dropped collectives its peers ran, so its "
               "compute and host times per step are not compared",
               f) == EOF
               ? -1
               : 0;
  if (g->n_dropped && g->dropped_sampled)
    return fputs(
               " (a sampled trace of the group dropped collectives its peers ran, and so "
               "other kernels: compute and host times are not compared)",
               f) == EOF
               ? -1
               : 0;
  if (fputs(g->cause == AN_CAUSE_IMBALANCE ? "; it arrives " : ": it arrives ", f) == EOF ||
      rp_md_ms(f, g->delay_per_step_us, false) ||
      fputs(" ms late per step; its step starts on the host ", f) == EOF ||
      rp_md_ms(f, tidy(g->host_late_per_step_us), true) ||
      fputs(" ms after the others' and its compute differs from theirs by ", f) == EOF ||
      rp_md_ms(f, tidy(g->extra_compute_per_step_us), true) || fputs(" ms", f) == EOF)
    return -1;
  return 0;
}

/* The evidence of a group that lost time to its ranks' waits, with the cause. */
static int lost_note(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  if (fputs("Ranks ", f) == EOF || rp_rank_list_md(f, g->ranks, g->n_ranks) != 0) return -1;
  if (g->verdict == AN_RANK_STRAGGLER
          ? fprintf(f, ": the others wait for rank %ld", g->straggler) < 0
          : fprintf(f, ": the last rank to arrive changes; %.1f %% of the loss waits for rank %ld",
                    g->last_arrival_pct, g->straggler) < 0)
    return -1;
  if (g->n_steps && (fputs(", ", f) == EOF || rp_md_ms(f, g->lost_per_step_us, false) ||
                     fprintf(f, " ms per step (%.1f %% of the group's GPU time per step)",
                             g->lost_step_share_pct) < 0))
    return -1;
  if (wait_where(f, a) != 0) return -1;
  char ctx[RP_RANK_CONTEXTS_BYTES];
  if (*rp_rank_wait_contexts(g, ctx, sizeof ctx) &&
      fprintf(f, "; by what the collectives were launched for (rank %ld's launches): %s",
              g->ranks[0], ctx) < 0)
    return -1;
  if (g->verdict == AN_RANK_STRAGGLER && cause_text(f, a) != 0) return -1;
  return fputc('.', f) == EOF ? -1 : 0;
}

/* Collectives that ran a different number of times on different ranks. */
static int mismatch_note(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  if (fputs("Ranks ", f) == EOF || rp_rank_list_md(f, g->ranks, g->n_ranks) != 0 ||
      fprintf(f,
              ": %zu collective%s ran a different number of times on different ranks and %s not "
              "matched, e.g. ",
              g->n_count_mismatch, g->n_count_mismatch == 1 ? "" : "s",
              g->n_count_mismatch == 1 ? "is" : "are") < 0 ||
      kernel_part(f, a, g->mismatch_kernel) != 0)
    return -1;
  return fprintf(f, " (%zu to %zu instances).", g->mismatch_min, g->mismatch_max) < 0 ? -1 : 0;
}

/* " (rank 0 lacks 5, rank 1 lacks 5)": the group's members whose traces lack instances. */
static int lacking_ranks(FILE *f, const an_rank_report *rep, const an_rank_group *g) {
  const char *sep = " (";
  for (size_t i = 0; i < rep->n_rows; i++) {
    const an_rank_row *w = &rep->rows[i];
    bool member = false;
    for (size_t k = 0; k < g->n_ranks && !member; k++) member = g->ranks[k] == w->rank;
    if (!member || !w->lacks) continue;
    if (fprintf(f, "%srank %ld lacks %zu", sep, w->rank, w->lacks) < 0) return -1;
    sep = ", ";
  }
  return *sep == ',' && fputc(')', f) == EOF ? -1 : 0;
}

/* The instances a member's trace lacks where its peers ran them in the same step, with
 * the longest. */
static int dropped_note(FILE *f, const note_args *a) {
  const an_rank_group *g = a->g;
  char step[48] = "outside the steps";
  if (g->dropped_step) snprintf(step, sizeof step, "in step %zu", g->dropped_step);
  if (fputs("Ranks ", f) == EOF || rp_rank_list_md(f, g->ranks, g->n_ranks) != 0 ||
      fprintf(f,
              ": %zu collective instance%s a rank's trace lacks where another rank ran %s in the "
              "same step",
              g->n_dropped, g->n_dropped == 1 ? "" : "s", g->n_dropped == 1 ? "it" : "them") < 0 ||
      lacking_ranks(f, a->rep, g) != 0 ||
      fprintf(f, " %s not matched (%s: the gap each leaves is no rank's wait); the longest, ",
              g->n_dropped == 1 ? "is" : "are",
              g->dropped_sampled ? "a sampled trace dropped them" : "the capture lost them") < 0 ||
      kernel_part(f, a, g->dropped_kernel) != 0)
    return -1;
  if ((g->dropped_context || g->dropped_backward) &&
      fprintf(f, " (%s%s%s)", g->dropped_context ? g->dropped_context : "",
              g->dropped_context && g->dropped_backward ? ", " : "",
              g->dropped_backward ? "backward" : "") < 0)
    return -1;
  if (fprintf(f, " %s: rank %ld lacks it, rank %ld ran it for ", step, g->dropped_rank,
              g->dropped_peer) < 0 ||
      rp_md_ms(f, g->dropped_us, false) || fputs(" ms.", f) == EOF)
    return -1;
  return 0;
}

typedef int (*note_fn)(FILE *f, const note_args *a);

/* The parts of text[0..len) as its marks cut it (empty text parts left out), into n. */
static bool cut_parts(const char *text, size_t len, const part_marks *m, rp_rank_note *n) {
  n->parts = calloc(m->n ? m->n : 1, sizeof *n->parts);
  if (!n->parts) return false;
  for (size_t i = 0; i < m->n; i++) {
    size_t from = (size_t)m->v[i].at, to = i + 1 < m->n ? (size_t)m->v[i + 1].at : len;
    if (to <= from && m->v[i].kind == RP_NOTE_TEXT) continue;
    char *t = strndup(text + from, to - from);
    if (!t) return false;
    n->parts[n->n++] = (rp_note_part){m->v[i].kind, t};
  }
  return true;
}

static void note_free(rp_rank_note *n) {
  for (size_t i = 0; i < n->n; i++) free(n->parts[i].text);
  free(n->parts);
  memset(n, 0, sizeof *n);
}

/* One more note: what fn writes, cut into its parts. False when out of memory or a write
 * failed. */
static bool add_note(rp_rank_notes *out, size_t *cap, note_fn fn, const note_args *a) {
  char *text = NULL;
  size_t len = 0;
  part_marks marks = {0};
  note_args own = *a;
  own.marks = &marks;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) return false;
  int rc = mark(&marks, RP_NOTE_TEXT, 0) ? -1 : fn(mem, &own);
  bool ok = fclose(mem) == 0 && rc == 0 && text;
  rp_rank_note note = {0};
  ok = ok && cut_parts(text, len, &marks, &note);
  free(text);
  free(marks.v);
  rp_rank_note *v = ok ? ut_grow(out->notes, cap, out->n + 1, sizeof *v) : NULL;
  if (!v) return note_free(&note), false;
  out->notes = v;
  out->notes[out->n++] = note;
  return true;
}

/* A group's notes: the time it lost, then what was not matched, then what was not read. */
static bool group_notes(rp_rank_notes *out, size_t *cap, const note_args *a) {
  const an_rank_group *g = a->g;
  bool lost = g->n_matched && g->n_ranks >= 2 &&
              (g->verdict == AN_RANK_STRAGGLER || g->verdict == AN_RANK_SPREAD);
  return (!lost || add_note(out, cap, lost_note, a)) &&
         (!g->n_count_mismatch || add_note(out, cap, mismatch_note, a)) &&
         (!g->n_dropped || add_note(out, cap, dropped_note, a)) &&
         (!g->n_absent || add_note(out, cap, absent_note, a));
}

int rp_rank_notes_build(const an_rank_report *rep, const rp_names *nm, rp_rank_notes *out) {
  memset(out, 0, sizeof *out);
  size_t cap = 0;
  note_args a = {rep, NULL, nm, false, NULL};
  for (size_t i = 0; i < rep->n_rows; i++) a.merged = a.merged || rep->rows[i].gpus > 1;
  bool ok = !a.merged || add_note(out, &cap, gpus_note, &a);
  out->n_rows = out->n;
  for (size_t g = 0; ok && g < rep->n_groups; g++) {
    a.g = &rep->groups[g];
    ok = group_notes(out, &cap, &a);
  }
  if (ok) return 0;
  rp_rank_notes_free(out);
  return -1;
}

void rp_rank_notes_free(rp_rank_notes *n) {
  for (size_t i = 0; n && i < n->n; i++) note_free(&n->notes[i]);
  if (n) free(n->notes);
  if (n) memset(n, 0, sizeof *n);
}

int rp_rank_note_md(FILE *f, const rp_rank_note *n) {
  for (size_t i = 0; i < n->n; i++) {
    const rp_note_part *p = &n->parts[i];
    int rc = p->kind == RP_NOTE_CODE   ? rp_md_code(f, p->text)
             : p->kind == RP_NOTE_EMPH ? (fprintf(f, "*%s*", p->text) < 0 ? -1 : 0)
                                       : (fputs(p->text, f) == EOF ? -1 : 0);
    if (rc) return -1;
  }
  return 0;
}
