/*
 * test_display_names.c - the engine's `display_names:` section through triage/rules.h:
 * first-hit order, template expansion, overrides by id, validation with positions, and
 * the examples self-test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "triage/rules.h"

static te_rules *load(const char *const *packs, size_t n) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  for (size_t i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "pack%zu.yaml", i);
    te_status st = te_rules_load_buffer(r, name, packs[i], strlen(packs[i]), d);
    char buf[512] = "";
    if (te_diags_count(d)) te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
    cr_assert_eq(st, TE_OK, "%s", buf);
  }
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  te_diags_destroy(d);
  return r;
}

/* The first diagnostic of a pack that must fail to load, formatted. */
static void first_error(const char *pack, char *buf, size_t cap) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_buffer(r, "bad.yaml", pack, strlen(pack), d), TE_ERR_INVALID);
  cr_assert_gt(te_diags_count(d), 0);
  te_diag_format(te_diags_get(d, 0), buf, cap);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

static const char *display(const te_rules *r, const char *name, const char **rule_id) {
  static char out[256];
  const te_display_rule *rule = NULL;
  size_t full = 0;
  if (!te_rules_display_name(r, name, strlen(name), out, sizeof out, &full, &rule)) return NULL;
  cr_assert_eq(full, strlen(out));
  if (rule_id) *rule_id = rule->id;
  return out;
}

static const char *const base =
    "pack: base\nversion: 1\n"
    "display_names:\n"
    "  - id: cijk\n"
    "    regex: "
    "'^(Cijk_[A-Za-z]+_[A-Za-z]+_[A-Z]+)\\w*?_(?<tile>MT\\d+x\\d+x\\d+)(?:_(MI\\w+?))?_'\n"
    "    replace: '$1 ${tile}   $3 '\n"
    "  - id: any-ck\n"
    "    regex: 'ck_tile::(\\w+)'\n"
    "    replace: 'ck $$ ${1}'\n";

Test(display_rules, first_hit_and_expansion) {
  te_rules *r = load(&base, 1);
  cr_assert_eq(te_rules_display_rule_count(r), 2);
  cr_assert_str_eq(te_rules_display_rule(r, 0)->id, "cijk");
  cr_assert_null(te_rules_display_rule(r, 2));
  const char *id = NULL;
  /* optional group present; whitespace folded and trimmed */
  cr_assert_str_eq(display(r, "Cijk_Alik_Bljk_BBS_BH_SAV_MT64x32x256_MI16x16x1_SN", &id),
                   "Cijk_Alik_Bljk_BBS MT64x32x256 MI16x16x1");
  cr_assert_str_eq(id, "cijk");
  /* optional group absent: no stray space */
  cr_assert_str_eq(display(r, "Cijk_Ailk_Bljk_HHS_MT64x64x32_SN", NULL),
                   "Cijk_Ailk_Bljk_HHS MT64x64x32");
  cr_assert_str_eq(display(r, "void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<x> >", &id),
                   "ck $ kentry");
  cr_assert_str_eq(id, "any-ck");
  cr_assert_null(display(r, "ampere_sgemm_128x64_nn", NULL));
  /* case-sensitive by default */
  cr_assert_null(display(r, "cijk_alik_bljk_bbs_MT64x32x256_", NULL));
  te_rules_destroy(r);
}

Test(display_rules, output_is_cut_but_length_is_full) {
  te_rules *r = load(&base, 1);
  char small[8];
  size_t full = 0;
  cr_assert(te_rules_display_name(r, "Cijk_Ailk_Bljk_HHS_MT64x64x32_SN", 32, small, sizeof small,
                                  &full, NULL));
  cr_assert_str_eq(small, "Cijk_Ai");
  cr_assert_eq(full, strlen("Cijk_Ailk_Bljk_HHS MT64x64x32"));
  te_rules_destroy(r);
}

Test(display_rules, later_pack_overrides_by_id_and_places_new_rules) {
  const char *packs[] = {
      base,
      "pack: user\nversion: 1\n"
      "display_names:\n"
      "  - {id: any-ck, regex: 'ck_tile::kentry<\\d+, ck_tile::(\\w+)<', replace: 'ck_tile $1'}\n"
      "  - {id: first, before: cijk, regex: '^Cijk_Ailk', replace: 'Ailk GEMM'}\n"};
  te_rules *r = load(packs, 2);
  cr_assert_eq(te_rules_display_rule_count(r), 3);
  cr_assert_str_eq(te_rules_display_rule(r, 0)->id, "first");
  cr_assert_str_eq(display(r, "Cijk_Ailk_Bljk_HHS_MT64x64x32_SN", NULL), "Ailk GEMM");
  cr_assert_str_eq(display(r, "void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<x> >", NULL),
                   "ck_tile Rmsnorm2dFwd");
  te_rules_destroy(r);
}

Test(display_rules, validation_names_file_line_col) {
  char buf[512];
  first_error("pack: b\nversion: 1\ndisplay_names:\n  - id: x\n    regex: 'a(b'\n    replace: x\n",
              buf, sizeof buf);
  cr_assert(strstr(buf, "bad.yaml:5:16: error: regex: bad regex 'a(b'"), "%s", buf);
  first_error(
      "pack: b\nversion: 1\ndisplay_names:\n  - id: x\n    regex: '(a)'\n    replace: 'x $2'\n",
      buf, sizeof buf);
  cr_assert(
      strstr(buf,
             "bad.yaml:6:17: error: replace: bad template 'x $2': '$2' names no capture group"),
      "%s", buf);
  first_error("pack: b\nversion: 1\ndisplay_names:\n  - id: x\n    regex: a\n    replace: 'x $'\n",
              buf, sizeof buf);
  cr_assert(strstr(buf, "'$' must be followed by a digit"), "%s", buf);
  first_error("pack: b\nversion: 1\ndisplay_names:\n  - id: x\n    regex: a\n", buf, sizeof buf);
  cr_assert(strstr(buf, "bad.yaml:4:5: error: display rule 'x' needs 'replace'"), "%s", buf);
  first_error("pack: b\nversion: 1\ndisplay_names:\n  - {id: x, regex: a, replace: b, match: c}\n",
              buf, sizeof buf);
  cr_assert(strstr(buf, "unknown key 'match' in display rule"), "%s", buf);
  first_error(
      "pack: b\nversion: 1\ndisplay_names:\n  - {id: x, regex: a, replace: b, examples: [{name: "
      "a}]}\n",
      buf, sizeof buf);
  cr_assert(strstr(buf, "needs 'name' and 'display'"), "%s", buf);
}

Test(display_rules, examples_are_judged_by_the_whole_list) {
  const char *pack =
      "pack: e\nversion: 1\n"
      "display_names:\n"
      "  - id: broad\n"
      "    regex: 'kentry'\n"
      "    replace: 'some kernel'\n"
      "  - id: ck\n"
      "    regex: 'ck_tile::kentry<\\d+, ck_tile::(\\w+)<'\n"
      "    replace: 'ck_tile $1'\n"
      "    examples:\n"
      "      - {name: 'ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<int> >', display: 'ck_tile "
      "Rmsnorm2dFwd'}\n"
      "      - {name: 'plain', display: 'plain'}\n";
  te_rules *r = load(&pack, 1);
  te_diags *d = te_diags_create();
  size_t n = 0;
  cr_assert_eq(te_rules_run_examples(r, d, &n), TE_ERR_INVALID);
  cr_assert_eq(n, 2);
  cr_assert_eq(te_diags_count(d), 2);
  char buf[512];
  te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
  cr_assert_str_eq(
      buf,
      "pack0.yaml:11:9: error: example 'ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<int> >' "
      "should display as 'ck_tile Rmsnorm2dFwd' by display rule 'ck' but displays "
      "as 'some kernel' (rule 'broad')");
  te_diag_format(te_diags_get(d, 1), buf, sizeof buf);
  cr_assert(strstr(buf,
                   "example 'plain' should display as 'plain' by display rule 'ck' but no "
                   "display rule matches"),
            "%s", buf);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(display_rules, no_rules_and_unfinalized_sets_answer_nothing) {
  te_rules *r = te_rules_create();
  char out[16] = "untouched";
  cr_assert_eq(te_rules_display_rule_count(r), 0);
  cr_assert_not(te_rules_display_name(r, "x", 1, out, sizeof out, NULL, NULL));
  cr_assert_str_eq(out, "untouched");
  cr_assert_not(te_rules_display_name(NULL, "x", 1, out, sizeof out, NULL, NULL));
  te_rules_destroy(r);
}
