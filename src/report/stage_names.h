/*
 * report/stage_names.h - the display names of one stage, shared by every format.
 *
 * Every kernel name a stage's tables, summary items and time account can print (all
 * kernel rows first, in row order, then the overlap, fusion, collective and summary
 * names) goes through one rp_names_display_table call, so one kernel reads the same in
 * Markdown and HTML and two kernels never read alike within a stage. (Review 5: the two
 * formats built the set apart, so a collision resolved differently: a hash suffix in the
 * HTML, none in the Markdown.)
 *
 * Ownership: full is a malloc'd array of strings borrowed from the report (which must
 * outlive it); shown is an rp_names table (NULL in full-names mode); index is a set over
 * full. rp_stage_names_free releases the three. Built once, a set is only read after: two
 * threads may look names up in it at once.
 */
#ifndef TRIAGE_REPORT_STAGE_NAMES_H
#define TRIAGE_REPORT_STAGE_NAMES_H

#include <stddef.h>

#include "analysis/model.h"
#include "report/names.h"
#include "util/map.h"

typedef struct rp_stage_names {
  const char **full; /* canonical names; full[i] is kernel row i for i < n_kernels */
  char **shown;      /* display names, or NULL: every name is shown in full */
  size_t n;
  ut_textset index; /* full name -> its i (a lookup is a hash, not a pass over the set) */
} rp_stage_names;

/* The names of stage si of r; nm NULL: full names. Returns 0, or -1 out of memory (s is
 * then empty and needs no free). */
int rp_stage_names_build(rp_stage_names *s, const an_report *r, size_t si, const rp_names *nm);

/* The name to print for full (full itself when it is not in the set or names are full). */
const char *rp_stage_names_get(const rp_stage_names *s, const char *full);

void rp_stage_names_free(rp_stage_names *s);

#endif
