/* report/md.c - Markdown cell escaping (md.h). */
#include "report/md.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

int rp_md_cell_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    int rc = *s == '|'    ? fputs("\\|", f)
             : *s == '\n' ? fputs("<br>", f)
             : *s == '\r' ? 0
                          : fputc(*s, f);
    if (rc == EOF) return -1;
  }
  return 0;
}

char *rp_md_escape(const char *s) { return ut_write_to_string(rp_md_cell_text, s); }
