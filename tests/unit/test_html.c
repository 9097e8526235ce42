/*
 * Unit tests of the HTML report's building blocks: the text escaper (every special
 * character, controls, malformed UTF-8, and invariants over random bytes), id/class
 * tokens, the embedded template bytes against the files, the page skeleton walker, and
 * the renderer (rp_html) on real model output: the hostile-names trace stays inert, every
 * row of the model has its id, every summary link names an element of the page.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pipeline.h"
#include "cli/rules_setup.h"
#include "default_rules.h"
#include "report/html_assets.h"
#include "report/html_escape.h"
#include "report/html_internal.h"
#include "report/html_page.h"
#include "report/layout_md.h"
#include "report/report.h"
#include "report/text.h"
#include "run_trace.h"

#define FFFD "\xEF\xBF\xBD"

/* Escapes n bytes into a new string (the caller frees). */
static char *esc_n(const char *s, size_t n) {
  char *buf = NULL;
  size_t size = 0;
  FILE *mem = open_memstream(&buf, &size);
  cr_assert_not_null(mem);
  cr_assert_eq(rp_html_text(mem, s, n), 0);
  cr_assert_eq(fclose(mem), 0);
  return buf;
}

static void check(const char *in, size_t n, const char *want) {
  char *got = esc_n(in, n);
  cr_assert_str_eq(got, want, "input of %zu bytes", n);
  free(got);
}
#define CHECK(in, want) check(in, sizeof(in) - 1, want)

Test(html_escape, plain_text_is_copied) {
  CHECK("nvjet_tst_64x8_64x16 at linear.py:450", "nvjet_tst_64x8_64x16 at linear.py:450");
  CHECK("", "");
}

Test(html_escape, the_five_characters) {
  CHECK("&<>\"'", "&amp;&lt;&gt;&quot;&#39;");
  CHECK("void f<c10::Half, 4>(int&)", "void f&lt;c10::Half, 4&gt;(int&amp;)");
  CHECK("&amp;", "&amp;amp;"); /* already-escaped text is text: escaped again */
}

Test(html_escape, script_and_attribute_payloads) {
  CHECK("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK("x\" onerror=\"alert(1)", "x&quot; onerror=&quot;alert(1)");
  CHECK("x' onmouseover='alert(1)", "x&#39; onmouseover=&#39;alert(1)");
}

Test(html_escape, controls_become_replacement) {
  CHECK("a\tb\nc", "a\tb\nc"); /* tab and newline are text */
  CHECK("a\rb", "a" FFFD "b");
  CHECK("\x01x\x1f\x7f", FFFD "x" FFFD FFFD);
  CHECK("a\0b", "a" FFFD "b"); /* an embedded NUL is a control like the others */
  CHECK("\xC2\x85|\xC2\x9F|\xC2\xA0", FFFD "|" FFFD "|\xC2\xA0"); /* C1 out, NBSP kept */
}

Test(html_escape, valid_utf8_is_kept) {
  CHECK("\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80", "\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80");
  CHECK(
      "a\xE2\x80\xA8"
      "b\xE2\x80\xA9",
      "a\xE2\x80\xA8"
      "b\xE2\x80\xA9");                          /* U+2028/9 */
  CHECK("\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"); /* U+10FFFF, the last code point */
}

Test(html_escape, malformed_utf8_is_replaced_per_byte) {
  CHECK("\xFF", FFFD);
  CHECK("\xC0\xAF", FFFD FFFD);                   /* overlong '/' */
  CHECK("\xE0\x80\xAF", FFFD FFFD FFFD);          /* overlong, 3 bytes */
  CHECK("\xED\xA0\x80", FFFD FFFD FFFD);          /* UTF-16 surrogate */
  CHECK("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* above U+10FFFF */
  CHECK("ab\xE4\xB8", "ab" FFFD FFFD);            /* truncated at the end */
  CHECK("\xE4<\xB8", FFFD "&lt;" FFFD);           /* a special character is never swallowed */
}

Test(html_escape, dup_and_null) {
  char *e = rp_html_escape("<a href=\"x\">");
  cr_assert_str_eq(e, "&lt;a href=&quot;x&quot;&gt;");
  free(e);
  e = rp_html_escape(NULL);
  cr_assert_str_eq(e, "");
  free(e);
}

/* Decodes one well-formed UTF-8 sequence at s, or returns 0. Written independently of
 * the escaper's table, with the code point bounds checked arithmetically. */
static size_t decode(const unsigned char *s, size_t n, unsigned long *cp) {
  size_t len = s[0] < 0x80             ? 1
               : (s[0] & 0xE0) == 0xC0 ? 2
               : (s[0] & 0xF0) == 0xE0 ? 3
               : (s[0] & 0xF8) == 0xF0 ? 4
                                       : 0;
  static const unsigned long min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (!len || len > n) return 0;
  unsigned long v = len == 1 ? s[0] : s[0] & (0x7F >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = v << 6 | (s[i] & 0x3F);
  }
  if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

Test(html_escape, random_bytes_keep_the_invariants) {
  static const char *const entities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
  unsigned long seed = 12345;
  for (int round = 0; round < 2000; round++) {
    unsigned char in[64];
    size_t n = (size_t)(round % 64);
    for (size_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005UL + 1442695040888963407UL;
      /* half printable ASCII with the specials, half any byte */
      in[i] = (seed >> 33) & 1 ? (unsigned char)("<>&\"'ab \t\n\x01\x7f"[(seed >> 40) % 13])
                               : (unsigned char)(seed >> 48);
    }
    char *out = esc_n((const char *)in, n);
    const unsigned char *p = (const unsigned char *)out;
    size_t len = strlen(out);
    for (size_t i = 0; i < len;) {
      unsigned long cp = 0;
      size_t k = decode(p + i, len - i, &cp);
      cr_assert_neq(k, 0, "round %d: malformed UTF-8 at output byte %zu", round, i);
      cr_assert(!(cp < 0x20 && cp != '\t' && cp != '\n') && !(cp >= 0x7F && cp <= 0x9F),
                "round %d: control U+%04lX in the output", round, cp);
      cr_assert(cp != '<' && cp != '>' && cp != '"' && cp != '\'', "round %d: raw %c", round,
                (int)cp);
      if (cp == '&') {
        int known = 0;
        for (size_t e = 0; e < 5; e++)
          known |= strncmp(out + i, entities[e], strlen(entities[e])) == 0;
        cr_assert(known, "round %d: '&' that starts no entity", round);
      }
      i += k;
    }
    free(out);
  }
}

static char *token(const char *s) {
  char *buf = NULL;
  size_t size = 0;
  FILE *mem = open_memstream(&buf, &size);
  cr_assert_eq(rp_html_token(mem, s), 0);
  cr_assert_eq(fclose(mem), 0);
  return buf;
}

Test(html_escape, tokens) {
  static const struct {
    const char *in, *want;
  } cases[] = {{"gemm", "gemm"},
               {"reduce_topk", "reduce_topk"},
               {"extend-path", "extend-path"},
               {"a.b c<\"", "a_b_c__"},
               {"\xC3\xA9", "__"},
               {"", "_"},
               {NULL, "_"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *t = token(cases[i].in);
    cr_assert_str_eq(t, cases[i].want);
    free(t);
  }
}

static char *read_file(const char *rel, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/src/report/html/%s", TRIAGE_SOURCE_DIR, rel);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 4096;
      buf = realloc(buf, cap);
      cr_assert_not_null(buf);
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  *len = n;
  return buf;
}

Test(html_assets, embedded_bytes_equal_the_files) {
  const rp_html_asset *assets[] = {&rp_html_page, &rp_html_css, &rp_html_js};
  for (size_t i = 0; i < 3; i++) {
    size_t n = 0;
    char *file = read_file(assets[i]->name, &n);
    cr_assert_eq(assets[i]->len, n, "%s: %zu bytes embedded, %zu in the file", assets[i]->name,
                 assets[i]->len, n);
    cr_assert(memcmp(assets[i]->bytes, file, n) == 0, "%s differs from its file", assets[i]->name);
    cr_assert_eq(assets[i]->bytes[n], 0, "%s: no NUL after the bytes", assets[i]->name);
    cr_assert_eq(strlen((const char *)assets[i]->bytes), n, "%s holds a NUL", assets[i]->name);
    free(file);
  }
}

Test(html_assets, csp_fetches_nothing_and_pins_script_and_style) {
  cr_assert_not_null(strstr(rp_html_csp, "default-src 'none'"));
  cr_assert_not_null(strstr(rp_html_csp, "script-src 'sha256-"));
  cr_assert_not_null(strstr(rp_html_csp, "style-src 'sha256-"));
  cr_assert_null(strstr(rp_html_csp, "unsafe"));
}

static int fill_ok(FILE *out, const char *name, void *ctx) {
  (*(int *)ctx)++;
  return fprintf(out, "[%s]", name) < 0;
}

static int fill_refuses_body(FILE *out, const char *name, void *ctx) {
  (void)ctx;
  (void)out;
  return strcmp(name, "body") == 0;
}

static char *page(rp_html_slot_fn fn, void *ctx, int *rc) {
  char *buf = NULL;
  size_t size = 0;
  FILE *mem = open_memstream(&buf, &size);
  *rc = rp_html_page_write(mem, fn, ctx);
  cr_assert_eq(fclose(mem), 0);
  return buf;
}

/* The text between `open` and the next `close` in s must equal want exactly. */
static void element_holds(const char *s, const char *open, const rp_html_asset *want) {
  const char *at = strstr(s, open);
  cr_assert_not_null(at, "no %s", open);
  at += strlen(open);
  cr_assert(strncmp(at, (const char *)want->bytes, want->len) == 0, "%s content differs", open);
  cr_assert(strncmp(at + want->len, "</", 2) == 0, "%s not closed right after", open);
}

Test(html_page, slots_are_filled) {
  int calls = 0, rc = 0;
  char *out = page(fill_ok, &calls, &rc);
  cr_assert_eq(rc, 0);
  cr_assert_eq(calls, 3, "title, version and body go to the caller");
  cr_assert_not_null(strstr(out, "<title>[title]</title>"));
  cr_assert_not_null(strstr(out, "content=\"triage [version]\""));
  cr_assert_not_null(strstr(out, "<body>\n[body]\n<script>"));
  cr_assert_null(strstr(out, "<!--triage:"), "a slot was left unfilled");
  element_holds(out, "<style>", &rp_html_css);
  element_holds(out, "<script>", &rp_html_js);
  char meta[4096];
  snprintf(meta, sizeof meta, "http-equiv=\"Content-Security-Policy\" content=\"%s\"", rp_html_csp);
  cr_assert_not_null(strstr(out, meta));
  free(out);
}

Test(html_page, fill_error_aborts) {
  int rc = 0;
  char *out = page(fill_refuses_body, NULL, &rc);
  cr_assert_eq(rc, -1);
  cr_assert_null(strstr(out, "<script>"), "nothing after the failed slot is written");
  free(out);
}

/* ------------------------------------------------------------------ the renderer */

/* The HTML page of one trace with the default packs (the caller frees); *rep_out keeps
 * the model for checks when not NULL (destroy it, then the rules). */
static char *render(const char *trace, te_rules **rules_out, an_report **rep_out) {
  te_rules *rules = test_default_rules();
  an_run_options o = {0};
  o.formal.path = trace;
  o.min_share_pct = -1;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  rep->run.version = "9.9.9";
  rep->run.command_line = "triage --format html \"<b>x</b>\"";
  char *buf = test_render(rp_html, rep, rules);
  *rules_out = rules;
  *rep_out = rep;
  return buf;
}

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, needle)) != NULL; p++) n++;
  return n;
}

Test(html_report, hostile_names_stay_text) {
  te_rules *rules;
  an_report *rep;
  char *out = render(TRIAGE_FIXTURE_DIR "/escape/hostile.trace.json", &rules, &rep);
  cr_assert_eq(count(out, "<script"), 1, "only the embedded script");
  cr_assert_null(strstr(out, "<script>alert"));
  cr_assert_null(strstr(out, "\"onerror"), "an attribute payload closed its quote");
  cr_assert_null(strstr(out, "<svg onload"));
  cr_assert_not_null(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;"),
                     "the payload shows as text");
  cr_assert_not_null(strstr(out, "&lt;b&gt;x&lt;/b&gt;"), "the command line is escaped too");
  cr_assert_null(strstr(out, "style=\""), "the CSP blocks inline style attributes");
  an_report_destroy(rep);
  te_rules_destroy(rules);
  free(out);
}

/* Every kernel, overlap and fusion row of the model has its id on the page, and every
 * summary link points at an id that exists. */
Test(html_report, rows_and_links) {
  te_rules *rules;
  an_report *rep;
  char *out = render(TRIAGE_FIXTURE_DIR "/llama_tp2", &rules, &rep);
  char id[256];
  size_t rows = 0;
  for (size_t s = 0; s < rep->n_stages; s++) {
    const an_stage_report *st = &rep->stages[s];
    for (size_t i = 0; i < st->n_kernels; i++, rows++) {
      snprintf(id, sizeof id, "<tr id=\"k-%s-%zu\"", st->id, i);
      cr_assert_not_null(strstr(out, id), "%s missing", id);
    }
    for (size_t i = 0; i < st->n_fuse; i++) {
      snprintf(id, sizeof id, "<tr id=\"f-%s-%zu\"", st->id, i);
      cr_assert_not_null(strstr(out, id), "%s missing", id);
    }
    for (size_t i = 0; st->overlap && i < st->overlap->n_rows; i++) {
      snprintf(id, sizeof id, "<tr id=\"o-%s-%zu\"", st->id, i);
      cr_assert_not_null(strstr(out, id), "%s missing", id);
    }
  }
  cr_assert_gt(rows, 0);
  cr_assert_gt(rep->n_summary, 0, "the sample has summary items");
  size_t links = 0;
  for (const char *p = out; (p = strstr(p, "href=\"#")) != NULL; links++) {
    p += strlen("href=\"#");
    size_t n = strcspn(p, "\"");
    snprintf(id, sizeof id, " id=\"%.*s\"", (int)n, p);
    cr_assert_not_null(strstr(out, id), "link #%.*s names no element", (int)n, p);
  }
  cr_assert_geq(links, rep->n_summary);
  const char *body = strstr(out, "<main>"); /* the style sheet's comments show markup too */
  cr_assert_not_null(body);
  cr_assert_eq(count(body, "<svg class=\"stack\""), rep->n_stages, "one category bar per stage");
  cr_assert_not_null(strstr(out, "<dd id=\"triage-version\">9.9.9</dd>"));
  an_report_destroy(rep);
  te_rules_destroy(rules);
  free(out);
}

/* Review 3 defect 7: the HTML overlap table is the Markdown's: the rows the Markdown folds
 * under the recoverable floor are the HTML's minor rows (hidden until "show more rows"),
 * the rows it prints are shown, the count line is under both, and the columns carry the
 * same names (Exposed, not Exclusive). */
static void overlap_agrees(const char *trace) {
  te_rules *rules;
  an_report *rep;
  char *html = render(trace, &rules, &rep);
  char *md = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&md, &len);
  cr_assert_eq(rp_layout_markdown(f, rep, rules, false), 0);
  fclose(f);
  cr_assert_null(strstr(html, ">Exclusive"));
  cr_assert_not_null(strstr(html, ">Exposed (ms)</th>"));
  char id[256];
  size_t folded = 0, shown = 0;
  for (size_t s = 0; s < rep->n_stages; s++) {
    const an_overlap_stage *o = rep->stages[s].overlap;
    for (size_t i = 0; o && i < o->n_rows; i++) {
      bool fold = o->rows[i].below_floor;
      folded += fold;
      shown += !fold;
      snprintf(id, sizeof id, "<tr id=\"o-%s-%zu\"%s", rep->stages[s].id, i,
               fold ? " class=\"minor\"" : " data-cat");
      const char *row = strstr(html, id);
      cr_assert_not_null(row, "%s", id);
      snprintf(id, sizeof id, "id=\"overlap-%s-%zu\"", rep->stages[s].id, i);
      cr_assert_eq(strstr(md, id) != NULL, !fold, "%s printed in Markdown iff shown in HTML", id);
      /* one Share denominator in both formats: the stage's kernel-time sum (review 7 #9) */
      double share = o->rows[i].total_us / rep->stages[s].kernel_total_us * 100.0;
      snprintf(id, sizeof id, "<td data-value=\"%.6g\">%.1f</td>", share, share);
      const char *cell = strstr(row, id), *end = strstr(row, "</tr>");
      cr_assert(cell && end && cell < end, "HTML share %s in the row", id);
      snprintf(id, sizeof id, "| %.1f%% |", share);
      cr_assert(fold || strstr(md, id), "Markdown share %s", id);
    }
    if (o && o->n_below_floor) {
      snprintf(id, sizeof id, "%zu row%s below", o->n_below_floor,
               o->n_below_floor == 1 ? "" : "s");
      cr_assert_not_null(strstr(md, id));
      cr_assert_not_null(strstr(html, id));
    }
  }
  cr_assert_gt(shown, 0, "%s has printed rows", trace);
  /* the lines under the table (docs/overlap.md) in both formats */
  cr_assert_eq(count(html, "Exposed by row, steady + wait (ms):"),
               count(md, "Exposed by row, steady + wait ("), "%s", trace);
  cr_assert_eq(count(html, "max concurrent streams"), count(md, "max concurrent streams"));
  cr_assert_gt(folded, 0, "%s has folded rows", trace);
  an_report_destroy(rep);
  te_rules_destroy(rules);
  free(html);
  free(md);
}

Test(html_report, overlap_table_matches_markdown) {
  overlap_agrees(TRIAGE_FIXTURE_DIR "/llama_tp2");
  /* two streams: kernel-time sum above GPU busy, so one denominator shows */
  overlap_agrees(TRIAGE_FIXTURE_DIR "/traces/synthetic/mapping/eager.trace.json");
}

/* The Ranks section draws every rank on one scale (the widest is 1000), marks the
 * straggler, and escapes labels and names. */
Test(html_ranks, one_scale_straggler_marked) {
  rp_rank_part a[] = {{"compute", 600}, {"communication", 200}, {"wait", 200}};
  rp_rank_part b[] = {{"compute", 300}, {"communication", 100}, {"wait", 100}};
  rp_rank_view_row rows[] = {
      {"rank 0", 0, 3, a, true, "gemm<x>", NULL, 40.0, 0, 0},
      {"rank <1>", 1, 3, b, false, NULL, NULL, 0, 0, 0},
  };
  rp_rank_view v = {NULL, "rank 0 holds the others back",    2, rows, false,      0,
                    NULL, "times are totals over <2> steps", 0, NULL, "straggler"};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rp_hw hw = {f, NULL, NULL, NULL, false, NULL, NULL, "", 0, "", false};
  rp_html_ranks(&hw, &v);
  fclose(f);
  cr_assert(!hw.failed);
  cr_assert_not_null(
      strstr(buf,
             "<tr id=\"rank-0\" class=\"straggler\"><th scope=\"row\" data-value=\"0\">"
             "rank 0 <span class=\"badge badge-straggler\">straggler</span></th>"));
  cr_assert_not_null(
      strstr(buf, "<tr id=\"rank-1\"><th scope=\"row\" data-value=\"1\">rank &lt;1&gt;</th>"));
  cr_assert_not_null(strstr(buf, "<rect class=\"cat-compute\" x=\"0.00\" y=\"0\" width=\"600.00\""),
                     "rank 0 is the widest: 1000 units for 1000 us");
  cr_assert_not_null(strstr(buf, "<rect class=\"cat-wait\" x=\"400.00\" y=\"0\" width=\"100.00\""),
                     "rank 1 on the same scale ends at 500");
  cr_assert_not_null(strstr(buf, "title=\"gemm&lt;x&gt;\""));
  cr_assert_eq(count(buf, "<th class=\"num\""), 4, "the span and one column per part");
  cr_assert_not_null(strstr(buf, "<p class=\"muted\">times are totals over &lt;2&gt; steps.</p>"),
                     "what the times cover, escaped, after the verdict");
  free(buf);
  rp_rank_view none = {NULL, "x", 0, NULL, false, 0, NULL, NULL, 0, NULL, NULL};
  f = open_memstream(&buf, &len);
  hw.out = f;
  rp_html_ranks(&hw, &none);
  fclose(f);
  cr_assert_eq(len, 0, "no ranks, no section");
  free(buf);
}

/* One Ranks section of view v, drawn alone (no report): the page text, to free. */
static char *ranks_section(const rp_rank_view *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rp_hw hw = {f, NULL, NULL, NULL, false, NULL, NULL, "", 0, "", false};
  rp_html_ranks(&hw, v);
  fclose(f);
  cr_assert(!hw.failed);
  return buf;
}

/* The section's notes are the Markdown's (report/rank_notes.h), under the ranks table and
 * above the imbalance table: a code part becomes <code>, and every part is text, so a name
 * holding '*', '`' or a bar is never markup (review 13: the notes were Markdown re-parsed
 * into HTML; review 12: the HTML lacked the ranks not read). */
Test(html_ranks, notes_under_the_table) {
  rp_rank_part a[] = {{"compute", 600}};
  rp_rank_view_row rows[] = {
      {"rank 0", 0, 1, a, false, NULL, NULL, 0, 0, 0},
      {"rank 1", 1, 1, a, false, NULL, NULL, 0, 0, 0},
  };
  rp_note_part first[] = {{RP_NOTE_TEXT, "Rank 0's trace holds the kernels of 4 GPUs."}};
  rp_note_part second[] = {{RP_NOTE_TEXT, "Ranks 0, 1: *rank 2* was not read, e.g. "},
                           {RP_NOTE_CODE, "a<b>|c*`d`*"},
                           {RP_NOTE_TEXT, "."}};
  rp_rank_note notes[] = {{1, first}, {3, second}};
  an_imbalance_row imb[] = {{"k", "compute", 0, 100, 180, 80, 1, 0}};
  rp_rank_view v = {NULL, "x", 2, rows, false, 1, imb, NULL, 2, notes, NULL};
  char *buf = ranks_section(&v);
  const char *ul =
      strstr(buf,
             "</table></div><ul class=\"notes rank-notes\"><li>Rank 0&#39;s trace "
             "holds the kernels of 4 GPUs.</li><li>Ranks 0, 1: *rank 2* was not read, e.g. "
             "<code>a&lt;b&gt;|c*`d`*</code>.</li></ul>");
  cr_assert_not_null(ul, "%s", buf);
  cr_assert_gt(strstr(buf, "<h3>Imbalance</h3>") - ul, 0, "the notes come before the imbalance");
  free(buf);
}

/* The Markdown of the same parts: text as it is, the name as a code span (a longer fence
 * around a backtick), so the two formats say the same words. */
Test(html_ranks, notes_in_markdown) {
  rp_note_part parts[] = {{RP_NOTE_TEXT, "e.g. "}, {RP_NOTE_CODE, "k`1`"}, {RP_NOTE_TEXT, "."}};
  rp_rank_note note = {3, parts};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_eq(rp_rank_note_md(f, &note), 0);
  fclose(f);
  cr_assert_str_eq(buf, "e.g. `` k`1` ``.");
  free(buf);
}

/* With the model's data the section adds each rank's collective wait (ms and share) and
 * one imbalance row per kernel: min and max with their ranks, the spread; names escaped. */
Test(html_ranks, wait_column_and_imbalance_rows) {
  rp_rank_part a[] = {{"compute", 600}, {"idle", 400}};
  rp_rank_part b[] = {{"compute", 500}, {"idle", 500}};
  rp_rank_view_row rows[] = {
      {"rank 0", 0, 2, a, true, NULL, NULL, 0, 0, 0},
      {"rank 1", 1, 2, b, false, NULL, NULL, 0, 1234.5, 12.5},
  };
  an_imbalance_row imb[] = {{"moe<expert>", "compute", 0, 100, 180, 80, 1, 0}};
  rp_rank_view v = {NULL, "rank 0 holds the others back", 2, rows, true, 1, imb, NULL, 0, NULL,
                    NULL};
  char *buf = ranks_section(&v);
  cr_assert_not_null(strstr(buf, ">Collective wait (ms)</th><th>Top kernel</th>"));
  cr_assert_not_null(
      strstr(buf, "<td data-value=\"1234.5\">1.23 <span class=\"muted\">12.5%</span></td>"), "%s",
      buf);
  cr_assert_not_null(strstr(buf, "<table class=\"data sortable imbalance\" id=\"ri\">"));
  cr_assert_not_null(strstr(buf, "<tr id=\"imb-0\" data-cat=\"compute\">"));
  cr_assert_not_null(strstr(buf, "title=\"moe&lt;expert&gt;\""));
  cr_assert_not_null(strstr(buf,
                            "<td data-value=\"100\">0.10</td><td data-value=\"1\">1</td>"
                            "<td data-value=\"180\">0.18</td><td data-value=\"0\">0</td>"
                            "<td data-value=\"80\">80.0</td></tr>"),
                     "%s", buf);
  free(buf);
}

/* A multi-rank directory: one Ranks section per rank table of the model, a row per rank,
 * the model's stragglers (and only they) marked. */
Test(html_report, ranks_from_the_model) {
  te_rules *rules;
  an_report *rep;
  char *out = render(TRIAGE_FIXTURE_DIR "/ranks/sglang-decode-slow2-tp4", &rules, &rep);
  cr_assert_gt(rep->n_ranks, 0, "the fixture is a rank set");
  const char *body = strstr(out, "<main>");
  size_t rows = 0, stragglers = 0;
  for (size_t k = 0; k < rep->n_ranks; k++) {
    rows += rep->ranks[k].n_rows;
    for (size_t i = 0; i < rep->ranks[k].n_rows; i++) stragglers += rep->ranks[k].rows[i].straggler;
  }
  cr_assert_gt(stragglers, 0, "rank 2 is slowed in this set");
  cr_assert_eq(count(body, "<section id=\"ranks"), rep->n_ranks);
  cr_assert_eq(count(body, "<tr id=\"rank"), rows);
  cr_assert_eq(count(body, "class=\"straggler\""), stragglers);
  cr_assert_eq(count(body, "badge-straggler\">straggler"), stragglers);
  /* the badge is the Markdown's mark: "straggler", or "straggler of the N read" when the
   * run has ranks the section did not read (review 14 defect 4) */
  for (size_t k = 0; k < rep->n_ranks; k++) {
    char mark[RP_RANK_STRAGGLER_BYTES], badge[96];
    rp_rank_straggler(&rep->ranks[k], rep->limits.world_size, mark, sizeof mark);
    snprintf(badge, sizeof badge, "badge-straggler\">%s</span>", mark);
    cr_assert_not_null(strstr(body, badge), "%s", badge);
  }
  an_report_destroy(rep);
  te_rules_destroy(rules);
  free(out);
}

/* Every id of the page once, every "#x" link naming one of them. */
static void ids_unique_links_resolve(const char *page) {
  const char *body = strstr(page, "<body>");
  cr_assert_not_null(body);
  size_t n = 0;
  for (const char *p = body; (p = strstr(p, " id=\"")) != NULL; n++) {
    p += 5;
    size_t len = strcspn(p, "\"");
    char needle[300];
    snprintf(needle, sizeof needle, " id=\"%.*s\"", (int)len, p);
    cr_assert_eq(count(body, needle), 1, "id %.*s is not unique", (int)len, p);
  }
  cr_assert_gt(n, 10);
  for (const char *p = body; (p = strstr(p, "href=\"#")) != NULL;) {
    p += 7;
    size_t len = strcspn(p, "\"");
    char needle[300];
    snprintf(needle, sizeof needle, " id=\"%.*s\"", (int)len, p);
    cr_assert_not_null(strstr(body, needle), "link #%.*s names no element", (int)len, p);
  }
}

Test(html_report, single_page_ids_are_unique) {
  te_rules *rules;
  an_report *rep;
  char *out = render(TRIAGE_FIXTURE_DIR "/ranks/sglang-decode-slow2-tp4", &rules, &rep);
  ids_unique_links_resolve(out);
  an_report_destroy(rep);
  te_rules_destroy(rules);
  free(out);
}

/* A bundle: contents grouped by model and framework, one article per report with its ids
 * prefixed, so ids stay unique and links resolve. */
Test(html_report, bundle) {
  te_rules *rules, *rules2;
  an_report *a, *b;
  free(render(TRIAGE_FIXTURE_DIR "/llama_tp2", &rules, &a));
  free(render(TRIAGE_FIXTURE_DIR "/escape/hostile.trace.json", &rules2, &b));
  const an_report *reps[] = {a, b, a};
  const char *labels[] = {"llama_tp2", "hostile <b>", "llama_tp2 again"};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rp_options ro = {RP_LAYOUT_DEFAULT, rules, false};
  cr_assert_eq(rp_html_bundle(f, reps, labels, 3, &ro), 0);
  fclose(f);
  ids_unique_links_resolve(buf);
  cr_assert_eq(count(buf, "<article class=\"report\" id=\"r"), 3);
  cr_assert_not_null(strstr(buf, "<tr id=\"r2-k-"), "the third report's rows are prefixed");
  cr_assert_not_null(strstr(buf, "hostile &lt;b&gt;"));
  cr_assert_eq(count(buf, "<span class=\"group\">"), 2, "a and the repeat of a share a group");
  cr_assert_eq(count(buf, "<h1>"), 1, "reports inside a bundle start at h2");
  cr_assert_eq(count(buf, "<footer"), 1);
  free(buf);
  an_report_destroy(a);
  an_report_destroy(b);
  te_rules_destroy(rules);
  te_rules_destroy(rules2);
}
