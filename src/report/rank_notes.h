/*
 * report/rank_notes.h - the notes of a Ranks section, written once for every format
 * (audit 12: the HTML section lacked the not-read ranks the Markdown names): files
 * holding several GPUs, the straggler's evidence and cause, collectives not matched
 * (counts that differ, instances a sampled trace dropped) and process-group ranks not
 * read (no trace in the directory, or one the reader refused). A note's text uses one
 * inline mark, `code` (Markdown's), which each renderer turns into its own.
 *
 * Ownership: rp_rank_notes owns its texts (rp_rank_notes_free); the model and the names
 * are borrowed for the call.
 */
#ifndef TRIAGE_REPORT_RANK_NOTES_H
#define TRIAGE_REPORT_RANK_NOTES_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/model.h"
#include "report/names.h"

typedef struct rp_rank_notes {
  size_t n;
  char **text;   /* one list item each, without its bullet or line end */
  size_t n_rows; /* the first n_rows are about the rank table's rows (files holding several
                    GPUs); the others about the groups (stragglers, not matched, not read) */
} rp_rank_notes;

/* The notes of rep in the order the reports print them; kernel names are nm's display
 * forms, or the full names when nm is NULL. 0, or -1 when out of memory (out empty). */
int rp_rank_notes_build(const an_rank_report *rep, const rp_names *nm, rp_rank_notes *out);
void rp_rank_notes_free(rp_rank_notes *n);

/* Markdown pieces the Ranks tables share with the notes: ranks as "0-3" for a run, "0, 2,
 * 5" otherwise; a kernel name as a code span (nm's display form, or the full name when nm
 * is NULL). 0, or -1 on a write error. */
int rp_rank_list_md(FILE *f, const long *r, size_t n);
int rp_kernel_md(FILE *f, const rp_names *nm, const char *name);

#endif
