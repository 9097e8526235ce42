/*
 * report/report.c - which layout writes the Markdown (report.h): the reference layout
 * (reference_md.c) or the default one (layout_md.c), then the trailing whitespace trimmed.
 */
#include "report/report.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/layout_md.h"

int rp_markdown(FILE *out, const an_report *r, const rp_options *o) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return -1;
  bool reference = o && o->layout == RP_LAYOUT_REFERENCE;
  int rc = reference ? rp_reference_markdown(m, r)
                     : rp_layout_markdown(m, r, o ? o->rules : NULL, o && o->full_names);
  if (fclose(m) != 0) rc = -1;
  if (rc == 0) {
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t')) len--;
    if (fwrite(buf, 1, len, out) != len || fputc('\n', out) == EOF) rc = -1;
  }
  free(buf);
  return rc;
}
