/*
 * report/html_escape.c - HTML text escaping with UTF-8 validation.
 *
 * Validation matters as much as the five characters: a page declares charset=utf-8,
 * and a stray byte from a trace must not become a different character in one browser
 * than in another, nor a control character the HTML parser reports. So every byte is
 * either part of a well-formed UTF-8 sequence that is not a control, or it is replaced.
 */
#include "report/html_escape.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 when s does not start one
 * (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

static int is_control(const unsigned char *s, size_t len) {
  if (len == 1) return (s[0] < 0x20 && s[0] != '\t' && s[0] != '\n') || s[0] == 0x7F;
  return len == 2 && s[0] == 0xC2 && s[1] <= 0x9F; /* U+0080..U+009F */
}

static const char *entity(unsigned char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&#39;";
    default:
      return NULL;
  }
}

static int put(FILE *out, const void *p, size_t n) { return fwrite(p, 1, n, out) == n ? 0 : -1; }

int rp_html_text(FILE *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t run = 0; /* bytes before i that are copied unchanged, not yet written */
  size_t i = 0;
  while (i < n) {
    size_t len = utf8_len(p + i, n - i);
    const char *sub = len == 1 ? entity(p[i]) : NULL;
    if (len && !sub && !is_control(p + i, len)) {
      run += len;
      i += len;
      continue;
    }
    if (put(out, p + i - run, run) != 0) return -1;
    run = 0;
    if (sub ? put(out, sub, strlen(sub)) : put(out, REPLACEMENT, 3)) return -1;
    i += len ? len : 1;
  }
  return put(out, p + n - run, run);
}

int rp_html_puts(FILE *out, const char *s) { return s ? rp_html_text(out, s, strlen(s)) : 0; }

char *rp_html_escape(const char *s) { return ut_write_to_string(rp_html_puts, s); }

int rp_html_token(FILE *out, const char *s) {
  if (!s || !*s) return put(out, "_", 1);
  for (const char *p = s; *p; p++) {
    char c = *p;
    int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    if (fputc(keep ? c : '_', out) == EOF) return -1;
  }
  return 0;
}
