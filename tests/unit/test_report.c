/*
 * Unit tests of the report layer: the words and cells rendered from the model, hint
 * lines, Markdown escaping.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/md.h"
#include "report/report.h"
#include "report/text.h"

Test(report, escape) {
  char *e = rp_md_escape("a|b\nc");
  cr_assert_str_eq(e, "a\\|b<br>c");
  free(e);
}

Test(report, func_at) {
  char *s = rp_location_func_at("python/sglang/x.py:12 forward");
  cr_assert_str_eq(s, "forward @ python/sglang/x.py:12");
  free(s);
  s = rp_location_func_at("unresolved");
  cr_assert_str_eq(s, "unresolved");
  free(s);
}

/* Hints render as the one-line warnings the CLI prints (docs/errors.md). */
Test(report, hint_lines) {
  char line[256];
  an_hint h = {AN_HINT_SKIPPED_EVENTS, AN_HINT_WARNING, "f.json", 1, 8950, NULL};
  rp_hint_text(&h, line, sizeof line);
  cr_assert_str_eq(line,
                   "f.json: warning: skipped 1 event with unusable fields (first at offset 8950)");
  h.count = 4;
  rp_hint_text(&h, line, sizeof line);
  cr_assert(strstr(line, "skipped 4 events with"), "%s", line);
  an_hint u = {AN_HINT_REPLACED_UTF8, AN_HINT_WARNING, "u.json", 2, 0, NULL};
  rp_hint_text(&u, line, sizeof line);
  cr_assert_str_eq(
      line, "u.json: warning: replaced 2 invalid UTF-8 sequences or NUL characters with U+FFFD");
  an_hint a = {
      AN_HINT_SERVER_ARGS_IGNORED, AN_HINT_WARNING, "d/server_args.json", 0, 0, "malformed JSON"};
  rp_hint_text(&a, line, sizeof line);
  cr_assert_str_eq(line, "d/server_args.json: warning: malformed JSON (server args ignored)");
}

/* The kernel table's cells from a row: shown sites with site shares, CPU ops, and the
 * "unresolved" / "-" of a row without a map entry. */
Test(report, kernel_cells) {
  an_site s[2] = {
      {.display_location = "a.py:1 f", .share_pct_within_kernel = 75, .top_cpu_op = "aten::mm"},
      {.display_location = "b|c.py:2 g", .share_pct_within_kernel = 25}};
  const an_site *shown[2] = {&s[0], &s[1]};
  an_kmap_entry e = {.name = "k", .n_sites = 2, .sites = s, .best_location = "a.py:1 f"};
  an_kernel_row r = {
      .name = "k", .entry = &e, .n_shown_sites = 2, .shown_sites = shown, .site_share_shown = true};
  char *loc = rp_kernel_location_cell(&r), *ops = rp_kernel_cpu_op_cell(&r);
  cr_assert_str_eq(loc, "a.py:1 f (site share 75%)<br>b|c.py:2 g (site share 25%)");
  cr_assert_str_eq(ops, "aten::mm");
  char *esc = rp_md_escape(loc);
  cr_assert_str_eq(esc, "a.py:1 f (site share 75%)<br>b\\|c.py:2 g (site share 25%)");
  free(loc);
  free(ops);
  free(esc);
  an_kernel_row none = {.name = "k"};
  loc = rp_kernel_location_cell(&none);
  ops = rp_kernel_cpu_op_cell(&none);
  cr_assert_str_eq(loc, "unresolved");
  cr_assert_str_eq(ops, "-");
  free(loc);
  free(ops);
}

/* The fuse table's sentence comes from origin, match kind and share. */
Test(report, fuse_rationale) {
  an_fuse_row r = {.pattern_name = "P",
                   .origin = AN_FUSION_MAINLINE,
                   .match = AN_FUSION_DIRECT,
                   .share_pct = 3.14,
                   .rationale_hint = "Hint."};
  char *s = rp_fuse_rationale(&r);
  cr_assert_str_eq(s, "`P` is present in this trace (3.1% related GPU time). Hint.");
  free(s);
  r.origin = AN_FUSION_INFLIGHT;
  r.match = AN_FUSION_SPLIT;
  r.rationale_hint = NULL;
  s = rp_fuse_rationale(&r);
  cr_assert_str_eq(s, "Matches an open upstream path (3.1% related GPU time).");
  free(s);
  s = rp_fuse_status(&r);
  cr_assert_str_eq(s, "pending split");
  free(s);
}
