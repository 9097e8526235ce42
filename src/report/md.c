/* report/md.c - Markdown cell escaping (md.h). */
#include "report/md.h"

#include <stdlib.h>
#include <string.h>

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

char *rp_md_escape(const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return NULL;
  int rc = rp_md_cell_text(m, s);
  if (fclose(m) != 0 || rc != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
