/*
 * report/html_page.h - the page skeleton of the HTML report, filled slot by slot.
 *
 * The skeleton (src/report/html/page.html, embedded at build time) holds slots written
 * as <!--triage:NAME-->. rp_html_page_write fills the three it owns from the embedded
 * assets: csp (the Content-Security-Policy), css and js, copied verbatim so that their
 * SHA-256 in the policy matches. Every other slot (title, version, body) is handed to
 * the caller's fill function, which writes that part of the page; it must escape trace
 * text with report/html_escape.h. docs/html.md lists the markup the body must use.
 *
 * Ownership: borrows out and ctx for the duration of the call.
 */
#ifndef TRIAGE_REPORT_HTML_PAGE_H
#define TRIAGE_REPORT_HTML_PAGE_H

#include <stdio.h>

/* Writes the content of slot `name` ("title", "version" or "body"). Returns 0, or
 * non-zero to abort the page (a write error, or a slot it does not know). */
typedef int (*rp_html_slot_fn)(FILE *out, const char *name, void *ctx);

/* Writes the whole page. Returns 0, or -1 when a write fails, the skeleton is malformed,
 * or fill returned non-zero. */
int rp_html_page_write(FILE *out, rp_html_slot_fn fill, void *ctx);

#endif
