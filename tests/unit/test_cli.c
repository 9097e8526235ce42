/*
 * Tests of the binary's command line: exit codes, the one argv parser (options and
 * sub-commands), --quiet, --compat and --layout.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/common.h"

/* Runs `triage ARGS` in dir (default: the source tree) with TRIAGE_RULES_DIR=rules_dir
 * (default: the source tree's rules/). stdout and stderr (malloc'd) into *out / *err when
 * not NULL. Returns the exit status. */
static int triage_in(const char *dir, const char *rules_dir, const char *args, char **out,
                     char **err) {
  char o_path[] = "/tmp/triage-test-out-XXXXXX", e_path[] = "/tmp/triage-test-err-XXXXXX";
  int fo = mkstemp(o_path), fe = mkstemp(e_path);
  cr_assert(fo >= 0 && fe >= 0);
  close(fo);
  close(fe);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "cd '%s' && TRIAGE_RULES_DIR='%s' %s/triage %s >%s 2>%s",
           dir ? dir : TRIAGE_SOURCE_DIR, rules_dir ? rules_dir : TRIAGE_SOURCE_DIR "/rules",
           TRIAGE_BINARY_DIR, args, o_path, e_path);
  int st = system(cmd);
  char *paths[2] = {o_path, e_path}, **dst[2] = {out, err};
  for (int i = 0; i < 2; i++) {
    if (dst[i]) {
      FILE *f = fopen(paths[i], "rb");
      cr_assert_not_null(f);
      fseek(f, 0, SEEK_END);
      long n = ftell(f);
      fseek(f, 0, SEEK_SET);
      *dst[i] = calloc(1, (size_t)n + 1);
      cr_assert_eq(fread(*dst[i], 1, (size_t)n, f), (size_t)n);
      fclose(f);
    }
    unlink(paths[i]);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(const char *args) { return triage_in(NULL, NULL, args, NULL, NULL); }

/* The binary fixes glibc's mmap threshold (cli_tune_allocator): a glibc build that
 * silently skips it (14382eb: __GLIBC__ tested before any header defined it) keeps freed
 * phases resident (262,145 kernel names: +12 MB at the peak). */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
Test(cli, allocator_tuned_on_glibc) {
#if defined(__GLIBC__) && !defined(TEST_ASAN)
  cr_assert(cli_tune_allocator(), "mallopt(M_MMAP_THRESHOLD) applied");
#elif defined(TEST_ASAN)
  /* AddressSanitizer's allocator replaces glibc's: its mallopt changes nothing, returns 0 */
  cr_assert_not(cli_tune_allocator());
#else
  cr_assert_not(cli_tune_allocator());
#endif
}

Test(cli, exit_codes) {
  cr_assert_eq(run(""), 2);
  cr_assert_eq(run("--help"), 0);
  cr_assert_eq(run("--version"), 0);
  cr_assert_eq(run("--bogus"), 2);
  cr_assert_eq(run("--input a --mapping-input b"), 2);
  cr_assert_eq(run("--mapping-input x"), 2);
  cr_assert_eq(run("--framework nope tests/data/llama_tp2"), 2);
  cr_assert_eq(run("--format xml tests/data/llama_tp2"), 2);
  cr_assert_eq(run("--layout sideways tests/data/llama_tp2"), 2);
  cr_assert_eq(run("--input tests/data/llama_tp2 tests/data/llama_tp2"), 2);
  cr_assert_eq(run("/nonexistent/trace.json"), 1);
  cr_assert_eq(run("tests/data/llama_tp2"), 0);
  cr_assert_eq(run("triage --input tests/data/llama_tp2 --format json"), 0);
}

/* The man page: --quiet prints no progress and no warnings (reader warnings included). */
Test(cli, quiet_silences_reader_warnings) {
  char *loud, *quiet;
  cr_assert_eq(triage_in(NULL, NULL, "tests/bad-input/cases/invalid-utf8.json", NULL, &loud), 0);
  cr_assert(strstr(loud, "warning: replaced 3 invalid UTF-8"), "%s", loud);
  cr_assert_eq(
      triage_in(NULL, NULL, "--quiet tests/bad-input/cases/invalid-utf8.json", NULL, &quiet), 0);
  cr_assert_str_eq(quiet, "");
  free(loud);
  free(quiet);
}

/* An option's value is never a sub-command: `--output rules TRACE` writes the report to a
 * file named "rules", `--pid-substring rules TRACE` analyses TRACE (both ran `triage rules`
 * and exited 2 with the old parser). The sub-command still works where it stands. */
Test(cli, option_value_named_rules_is_not_the_subcommand) {
  char dir[] = "/tmp/triage-test-cli-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char *out, *err;
  cr_assert_eq(
      triage_in(dir, NULL, "--quiet --output rules " TRIAGE_SOURCE_DIR "/tests/data/llama_tp2",
                &out, &err),
      0, "%s", err);
  char path[512];
  snprintf(path, sizeof path, "%s/rules", dir);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "the report went to ./rules");
  cr_assert_gt(st.st_size, 100);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  unlink(path);
  rmdir(dir);
  cr_assert_eq(
      triage_in(NULL, NULL, "--quiet --pid-substring rules tests/data/llama_tp2", &out, &err), 0,
      "%s", err);
  cr_assert(!strncmp(out, "# Triage report\n", 16), "%s", out);
  free(out);
  free(err);
  cr_assert_eq(
      triage_in(NULL, NULL, "--rules tests/rules/packs/cublas-lt.yaml rules list", &out, &err), 0);
  cr_assert(strstr(out, "user-cublas-lt\t"), "%s", out);
  free(out);
  free(err);
  cr_assert_eq(run("--no-default-rules --rules rules rules check"), 0,
               "rule options before the word");
  cr_assert_eq(run("tests/data/llama_tp2 rules"), 2, "a second word after the trace");
}

/* A rules directory with the default packs (links) and compat/test.yaml raising the
 * kernel table's bar to 50%. */
static void make_rules_dir(char *dir) {
  cr_assert_not_null(mkdtemp(dir));
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "for f in %s/rules/*.yaml; do ln -s \"$f\" '%s'/; done && mkdir '%s/compat' && "
           "printf 'pack: compat-test\\nversion: 1\\nsettings:\\n  kernel_table: "
           "{min_share_pct: 50}\\n' > '%s/compat/test.yaml'",
           TRIAGE_SOURCE_DIR, dir, dir, dir);
  cr_assert_eq(system(cmd), 0);
}

static void remove_dir(const char *dir) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

/* --compat NAME loads <rules dir>/compat/NAME.yaml after the defaults and before --rules. */
Test(cli, compat_pack_between_defaults_and_user_rules) {
  char dir[] = "/tmp/triage-test-compat-XXXXXX";
  make_rules_dir(dir);
  char *out, *err;
  cr_assert_eq(triage_in(NULL, dir, "--quiet --compat test tests/data/llama_tp2", &out, &err), 0,
               "%s", err);
  cr_assert(strstr(out, "No kernel row cleared the share bar."), "%s", out);
  free(out);
  free(err);
  char user[600];
  snprintf(user, sizeof user, "%s-user.yaml", dir); /* not in the defaults' directory */
  FILE *f = fopen(user, "w");
  cr_assert_not_null(f);
  fputs("pack: user\nversion: 1\nsettings:\n  kernel_table: {min_share_pct: 1}\n", f);
  fclose(f);
  char args[1024];
  snprintf(args, sizeof args, "--quiet --rules %s --compat test tests/data/llama_tp2", user);
  cr_assert_eq(triage_in(NULL, dir, args, &out, &err), 0, "%s", err);
  cr_assert_null(strstr(out, "No kernel rows"), "--rules comes after --compat");
  free(out);
  free(err);
  cr_assert_eq(triage_in(NULL, dir, "--compat test rules list", &out, &err), 0);
  cr_assert(strstr(out, "compat-test\t"), "%s", out);
  free(out);
  free(err);
  /* an unknown mode is a usage error, like an unknown --framework, here and for 'rules' */
  cr_assert_eq(triage_in(NULL, dir, "--compat nothing tests/data/llama_tp2", NULL, &err), 2);
  cr_assert(strstr(err, "--compat: unknown compatibility mode 'nothing'"), "%s", err);
  free(err);
  cr_assert_eq(triage_in(NULL, dir, "rules check --compat nothing", NULL, &err), 2);
  cr_assert(strstr(err, "--compat: unknown compatibility mode 'nothing'"), "%s", err);
  free(err);
  unlink(user);
  remove_dir(dir);
}

/* The default layout has its own sections; --layout reference (and --compat reference
 * without --layout) prints the reference's layout; --layout wins over --compat. */
Test(cli, layout_default_reference_and_compat) {
  char *a, *b, *c, *d, *e[4];
  cr_assert_eq(triage_in(NULL, NULL, "--quiet --layout default tests/data/llama_tp2", &a, &e[0]),
               0);
  cr_assert_eq(triage_in(NULL, NULL, "--quiet --layout reference tests/data/llama_tp2", &b, &e[1]),
               0);
  cr_assert_eq(triage_in(NULL, NULL, "--quiet --compat reference tests/data/llama_tp2", &c, &e[2]),
               0);
  cr_assert_eq(
      triage_in(NULL, NULL, "--quiet --compat reference --layout default tests/data/llama_tp2", &d,
                &e[3]),
      0);
  cr_assert(!strncmp(a, "# Triage report\n", 16), "%s", a);
  cr_assert(strstr(a, "\n## What to try first\n") && strstr(a, "\n## Legend\n"), "%s", a);
  cr_assert(strstr(a, "\n### Kernels: decode (shares of "), "%s", a);
  cr_assert(!strncmp(b, "Triage View\n", 12), "%s", b);
  cr_assert(!strncmp(c, "Triage View\n", 12), "%s", c);
  cr_assert(!strncmp(d, "# Triage report\n", 16), "%s", d);
  free(a);
  free(b);
  free(c);
  free(d);
  for (int i = 0; i < 4; i++) free(e[i]);
}

/* --full-names prints the full kernel names the default layout shortens. */
Test(cli, full_names) {
  char *a, *b, *e1, *e2;
  cr_assert_eq(triage_in(NULL, NULL, "--quiet tests/data/llama_tp2", &a, &e1), 0);
  cr_assert_eq(triage_in(NULL, NULL, "--quiet --full-names tests/data/llama_tp2", &b, &e2), 0);
  cr_assert_null(strstr(a, "`nvjet_tst_64x8_64x16_2x1_v_bz_TNT`"), "%s", a);
  cr_assert(strstr(b, "`nvjet_tst_64x8_64x16_2x1_v_bz_TNT`"), "%s", b);
  free(a);
  free(b);
  free(e1);
  free(e2);
}

static char *head_of(const char *path, size_t n) {
  char *buf = calloc(1, n + 1);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s not written", path);
  cr_assert_eq(fread(buf, 1, n, f), n);
  fclose(f);
  unlink(path);
  return buf;
}

/* --format html writes the page; without --format, -o FILE.html picks HTML and any other
 * name keeps Markdown; --format wins over the extension. */
Test(cli, html_format_and_output_extension) {
  char *out = NULL;
  cr_assert_eq(triage_in(NULL, NULL, "--quiet --format html tests/data/llama_tp2", &out, NULL), 0);
  cr_assert(strncmp(out, "<!DOCTYPE html>", 15) == 0, "stdout is a page");
  free(out);
  cr_assert_eq(run("--quiet -o /tmp/triage-test-page.HTML tests/data/llama_tp2"), 0);
  out = head_of("/tmp/triage-test-page.HTML", 15);
  cr_assert_str_eq(out, "<!DOCTYPE html>");
  free(out);
  cr_assert_eq(run("--quiet --output /tmp/triage-test-page.md tests/data/llama_tp2"), 0);
  out = head_of("/tmp/triage-test-page.md", 1);
  cr_assert(out[0] != '<' && out[0] != '{', "Markdown, not a page or JSON: %s", out);
  free(out);
  cr_assert_eq(run("--quiet --format json -o /tmp/triage-test-page.html tests/data/llama_tp2"), 0);
  out = head_of("/tmp/triage-test-page.html", 1);
  cr_assert_str_eq(out, "{");
  free(out);
}

/* triage diff -o FILE.html writes the diff page: every kernel row with a status the style
 * sheet knows, the regression of the generated pair marked. */
Test(cli, diff_html_page) {
  const char *page = "/tmp/triage-test-diff.html";
  cr_assert_eq(run("diff tests/data/diff/generated/before tests/data/diff/generated/after "
                   "-o /tmp/triage-test-diff.html"),
               0);
  FILE *f = fopen(page, "rb");
  cr_assert_not_null(f);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  unlink(page);
  cr_assert(strncmp(buf, "<!DOCTYPE html>", 15) == 0);
  const char *body = strstr(buf, "<main>");
  cr_assert_not_null(body);
  cr_assert_not_null(strstr(body, "<table class=\"data sortable diff kernels\" id=\"dk-decode\""));
  cr_assert_not_null(strstr(body, "data-status=\"regress\""), "the slowed GEMM");
  cr_assert_not_null(strstr(body, "data-status=\"gone\""), "the removed rope kernel");
  cr_assert_not_null(strstr(body, "data-status=\"new\""), "the new fused kernel");
  cr_assert_not_null(strstr(body, "<figure class=\"catbar diffbars\""));
}
