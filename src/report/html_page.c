/*
 * report/html_page.c - walks the embedded page skeleton and fills its slots.
 */
#include "report/html_page.h"

#include <string.h>

#include "report/html_assets.h"

#define SLOT_OPEN "<!--triage:"
#define SLOT_CLOSE "-->"
#define SLOT_NAME_MAX 32

static int put(FILE *out, const void *p, size_t n) { return fwrite(p, 1, n, out) == n ? 0 : -1; }

static int fill_slot(FILE *out, const char *name, rp_html_slot_fn fill, void *ctx) {
  if (strcmp(name, "css") == 0) return put(out, rp_html_css.bytes, rp_html_css.len);
  if (strcmp(name, "js") == 0) return put(out, rp_html_js.bytes, rp_html_js.len);
  if (strcmp(name, "csp") == 0) return put(out, rp_html_csp, strlen(rp_html_csp));
  return fill(out, name, ctx) == 0 ? 0 : -1;
}

int rp_html_page_write(FILE *out, rp_html_slot_fn fill, void *ctx) {
  /* The asset is NUL-terminated and holds no NUL of its own (it is text), so the
   * string functions see all of it. */
  const char *p = (const char *)rp_html_page.bytes;
  const char *slot;
  while ((slot = strstr(p, SLOT_OPEN)) != NULL) {
    const char *name = slot + strlen(SLOT_OPEN);
    const char *end = strstr(name, SLOT_CLOSE);
    size_t len = end ? (size_t)(end - name) : 0;
    if (!end || len == 0 || len >= SLOT_NAME_MAX) return -1;
    char buf[SLOT_NAME_MAX];
    memcpy(buf, name, len);
    buf[len] = '\0';
    if (put(out, p, (size_t)(slot - p)) != 0 || fill_slot(out, buf, fill, ctx) != 0) return -1;
    p = end + strlen(SLOT_CLOSE);
  }
  return put(out, p, strlen(p));
}
