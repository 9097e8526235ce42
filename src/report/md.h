/*
 * report/md.h - Markdown helpers shared by the report's sections.
 *
 * Ownership: rp_md_escape returns malloc'd memory the caller frees.
 */
#ifndef TRIAGE_REPORT_MD_H
#define TRIAGE_REPORT_MD_H

#include <stdio.h>

/* A table cell's text: '|' -> "\|" (it would end the cell), newline -> "<br>" (it
 * would end the row), carriage return dropped. Writes to f; returns -1 on a write error. */
int rp_md_cell_text(FILE *f, const char *s);
/* The same escaping into a new string; NULL when out of memory. */
char *rp_md_escape(const char *s);

#endif
