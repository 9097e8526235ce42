/* report/md.c - Markdown cell escaping, code spans and unit cells (md.h). */
#include "report/md.h"

#include <math.h>
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

int rp_md_code(FILE *f, const char *s) {
  bool tick = s && strchr(s, '`');
  if (fputs(tick ? "`` " : "`", f) == EOF || rp_md_cell_text(f, s) != 0) return -1;
  return fputs(tick ? " ``" : "`", f) == EOF ? -1 : 0;
}

/* Milliseconds to the microsecond: the unit of every time column of a diff or Ranks table. */
int rp_md_ms(FILE *f, double us, bool signed_) {
  return fprintf(f, signed_ ? "%+.3f" : "%.3f", us / 1000) < 0 ? -1 : 0;
}

void rp_md_number(char *b, size_t cap, double v) {
  if (v == 0)
    snprintf(b, cap, "0");
  else if (fabs(v) >= 0.005)
    snprintf(b, cap, "%.2f", v);
  else
    snprintf(b, cap, "%.2g", v);
}

int rp_md_pct(FILE *f, double pct, bool signed_) {
  return fprintf(f, signed_ ? "%+.1f" : "%.1f", pct) < 0 ? -1 : 0;
}
