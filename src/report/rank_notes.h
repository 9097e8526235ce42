/*
 * report/rank_notes.h - the notes of a Ranks section, written once for every format
 * (audit 12: the HTML section lacked the not-read ranks the Markdown names): files
 * holding several GPUs, the straggler's evidence and cause, collectives not matched
 * (counts that differ, instances a sampled trace dropped) and process-group ranks not
 * read (no trace in the directory, or one the reader refused). A note is typed parts
 * (text, code, emphasis) that each renderer formats as its own (review 13: the notes were
 * Markdown re-parsed into HTML, so a '*' or '`' in a trace's name became markup).
 *
 * Ownership: rp_rank_notes owns its parts and their texts (rp_rank_notes_free); the model
 * and the names are borrowed for the call.
 */
#ifndef TRIAGE_REPORT_RANK_NOTES_H
#define TRIAGE_REPORT_RANK_NOTES_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/model.h"
#include "report/names.h"

typedef enum rp_note_kind {
  RP_NOTE_TEXT = 0, /* words */
  RP_NOTE_CODE = 1, /* a name as the trace gives it (a kernel, in its display form) */
  RP_NOTE_EMPH = 2  /* emphasis */
} rp_note_kind;

typedef struct rp_note_part {
  rp_note_kind kind;
  char *text;
} rp_note_part;

/* One list item, without its bullet or line end. */
typedef struct rp_rank_note {
  size_t n;
  rp_note_part *parts;
} rp_rank_note;

typedef struct rp_rank_notes {
  size_t n;
  rp_rank_note *notes;
  size_t n_rows; /* the first n_rows are about the rank table's rows (files holding several
                    GPUs); the others about the groups (stragglers, not matched, not read) */
} rp_rank_notes;

/* The notes of rep in the order the reports print them; kernel names are nm's display
 * forms, or the full names when nm is NULL. 0, or -1 when out of memory (out empty). */
int rp_rank_notes_build(const an_rank_report *rep, const rp_names *nm, rp_rank_notes *out);
void rp_rank_notes_free(rp_rank_notes *n);

/* A note in Markdown: its text as it is, code as code spans, emphasis in '*'. 0, or -1 on
 * a write error. */
int rp_rank_note_md(FILE *f, const rp_rank_note *n);

/* Markdown pieces the Ranks tables share with the notes: ranks as "0-3" for a run, "0, 2,
 * 5" otherwise; a kernel name as a code span (nm's display form, or the full name when nm
 * is NULL). 0, or -1 on a write error. */
int rp_rank_list_md(FILE *f, const long *r, size_t n);
int rp_kernel_md(FILE *f, const rp_names *nm, const char *name);

#endif
