/*
 * report/html_escape.h - writing untrusted text (kernel names, Python frames, paths,
 * command lines) into an HTML page.
 *
 * Two contexts are supported, and only two:
 *   - element text and attribute values in double or single quotes: rp_html_text;
 *   - id and class tokens derived from data (categories, stage ids): rp_html_token.
 * There is deliberately no escaper for <script>, <style>, URLs or event-handler
 * attributes: trace text never goes there. The page embeds no JSON either; should it
 * ever, the JSON needs its own escaper ("</" and U+2028/U+2029), not this one.
 *
 * Ownership: the functions borrow their arguments; rp_html_escape returns a malloc'd
 * string the caller frees.
 */
#ifndef TRIAGE_REPORT_HTML_ESCAPE_H
#define TRIAGE_REPORT_HTML_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Writes n bytes of s (NULs included) as HTML text, safe in element content and in a
 * quoted attribute value:
 *   & < > " '                       -> &amp; &lt; &gt; &quot; &#39;
 *   C0 controls but tab and newline, DEL, C1 controls (U+0080..U+009F),
 *   and bytes that are not well-formed UTF-8 (one per byte) -> U+FFFD
 * Everything else, U+2028/U+2029 included, is copied as is. Returns 0, or -1 on a
 * write error. */
int rp_html_text(FILE *out, const char *s, size_t n);

/* rp_html_text of a NUL-terminated string; NULL writes nothing. */
int rp_html_puts(FILE *out, const char *s);

/* The rp_html_text form of s as a new NUL-terminated string (NULL -> ""); NULL when out
 * of memory. For tests and for callers that measure before writing. */
char *rp_html_escape(const char *s);

/* Writes s as a token fit for an id or class value: ASCII letters, digits, '_' and '-'
 * are kept, every other byte becomes '_', and an empty or NULL s becomes "_". Distinct
 * inputs may share a token: use it for looks (class names), and indices for ids that
 * must be unique. Returns 0, or -1 on a write error. */
int rp_html_token(FILE *out, const char *s);

#endif
