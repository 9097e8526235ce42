/*
 * report/html_assets.h - the HTML report's template files, embedded at build time.
 *
 * cmake/embed-html.cmake turns src/report/html/{page.html,report.css,report.js} into a
 * generated C file (build/generated/report_html_assets.c), so the installed binary needs
 * no data files. Each array is the file's bytes followed by one NUL that `len` does not
 * count. Everything here is static, read-only data: nothing to free.
 */
#ifndef TRIAGE_REPORT_HTML_ASSETS_H
#define TRIAGE_REPORT_HTML_ASSETS_H

#include <stddef.h>

typedef struct rp_html_asset {
  const unsigned char *bytes; /* file contents, then a NUL not counted in len */
  size_t len;
  const char *name; /* file name under src/report/html/, for messages and tests */
} rp_html_asset;

extern const rp_html_asset rp_html_page; /* skeleton with <!--triage:NAME--> slots */
extern const rp_html_asset rp_html_css;  /* copied verbatim into <style> */
extern const rp_html_asset rp_html_js;   /* copied verbatim into <script> */

/* Content-Security-Policy for the page: no fetch of any kind; only the embedded script
 * and style run, allowed by their SHA-256. */
extern const char rp_html_csp[];

#endif
