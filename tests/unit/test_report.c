/*
 * Unit tests of the report layer and the CLI: markdown escaping, number formats, exit
 * codes and the pinned sample through the binary.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/report.h"

Test(report, escape) {
  char *e = rp_md_escape("a|b\nc");
  cr_assert_str_eq(e, "a\\|b<br>c");
  free(e);
}

Test(report, python_number_formats) {
  /* format(x, '.2f') and '.1f' round the exact binary value, as printf does */
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", 0.125);
  cr_assert_str_eq(buf, "0.12");
  snprintf(buf, sizeof buf, "%.1f", 0.05);
  cr_assert_str_eq(buf, "0.1"); /* 0.05 is 0.05000000000000000277 in binary */
  snprintf(buf, sizeof buf, "%.1f", 0.25);
  cr_assert_str_eq(buf, "0.2");
}

static int run(const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && TRIAGE_RULES_DIR=%s/rules %s/triage %s >/dev/null 2>&1",
           TRIAGE_SOURCE_DIR, TRIAGE_SOURCE_DIR, TRIAGE_BINARY_DIR, args);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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
  cr_assert_eq(run("/nonexistent/trace.json"), 1);
  cr_assert_eq(run("tests/data/llama_tp2"), 0);
  cr_assert_eq(run("triage --input tests/data/llama_tp2 --format json"), 0);
}

/* stderr of one run (malloc'd), its exit status in *rc. */
static char *run_stderr(const char *args, int *rc) {
  char path[] = "/tmp/triage-test-stderr-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && TRIAGE_RULES_DIR=%s/rules %s/triage %s >/dev/null 2>%s",
           TRIAGE_SOURCE_DIR, TRIAGE_SOURCE_DIR, TRIAGE_BINARY_DIR, args, path);
  int st = system(cmd);
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f);
  char *buf = calloc(1, 4096);
  cr_assert_not_null(buf);
  size_t n = fread(buf, 1, 4095, f);
  buf[n] = '\0';
  fclose(f);
  unlink(path);
  return buf;
}

/* The man page: --quiet prints no progress and no warnings (reader warnings included). */
Test(cli, quiet_silences_reader_warnings) {
  int rc;
  char *loud = run_stderr("tests/bad-input/cases/invalid-utf8.json", &rc);
  cr_assert_eq(rc, 0);
  cr_assert(strstr(loud, "warning: replaced 3 invalid UTF-8"), "%s", loud);
  free(loud);
  char *quiet = run_stderr("--quiet tests/bad-input/cases/invalid-utf8.json", &rc);
  cr_assert_eq(rc, 0);
  cr_assert_str_eq(quiet, "");
  free(quiet);
}
