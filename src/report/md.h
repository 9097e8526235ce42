/*
 * report/md.h - Markdown helpers shared by the report's sections.
 *
 * Ownership: rp_md_escape returns malloc'd memory the caller frees.
 */
#ifndef TRIAGE_REPORT_MD_H
#define TRIAGE_REPORT_MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A table cell's text: '|' -> "\|" (it would end the cell), newline -> "<br>" (it
 * would end the row), carriage return dropped. Writes to f; returns -1 on a write error. */
int rp_md_cell_text(FILE *f, const char *s);
/* The same escaping into a new string; NULL when out of memory. */
char *rp_md_escape(const char *s);
/* A code span of s (cell-escaped), with a longer fence when s holds a backtick. -1 on a
 * write error. */
int rp_md_code(FILE *f, const char *s);

/* Units. A table states its unit once, in the column header ("GPU time (ms)"), and its
 * cells carry bare numbers: these write one such number. us is microseconds; signed
 * adds '+' to a positive value (deltas). -1 on a write error. */
int rp_md_ms(FILE *f, double us, bool signed_);
/* A number of the default layout: two decimals, or two significant digits when two
 * decimals would read 0.00 (a non-zero time never prints as zero), into buf. */
void rp_md_number(char *buf, size_t cap, double v);
int rp_md_pct(FILE *f, double pct, bool signed_);

#endif
