/*
 * test_engine_cli.c - `triage rules ...` through the command line (cli_main) and the
 * rule-pack setup of cli/rules_setup.h, with stdout/stderr captured.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/rules_setup.h"

typedef struct captured {
  int rc;
  char *out, *err;
} captured;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc(1, (size_t)n + 1);
  cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  unlink(path);
  return s;
}

/* `triage [--rules EXTRA]... [--no-default-rules] rules ARGS...` through cli_main in a
 * child process, its stdout and stderr captured. */
static captured run_rules(const char *const *args, size_t n_args, const char *const *extra,
                          size_t n_extra, bool no_defaults) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = strdup("triage"); /* argv is mutable */
  for (size_t i = 0; i < n_extra; i++) {
    argv[argc++] = strdup("--rules");
    argv[argc++] = strdup(extra[i]);
  }
  if (no_defaults) argv[argc++] = strdup("--no-default-rules");
  argv[argc++] = strdup("rules");
  cr_assert_lt(argc + n_args, 31);
  for (size_t i = 0; i < n_args; i++) argv[argc++] = strdup(args[i]);
  argv[argc] = NULL;
  char o_path[] = "/tmp/triage-rules-out-XXXXXX", e_path[] = "/tmp/triage-rules-err-XXXXXX";
  int fo = mkstemp(o_path), fe = mkstemp(e_path);
  cr_assert(fo >= 0 && fe >= 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    dup2(fo, STDOUT_FILENO);
    dup2(fe, STDERR_FILENO);
    int rc = cli_main(argc, argv);
    fflush(NULL);
    _exit(rc);
  }
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  close(fo);
  close(fe);
  for (int i = 0; i < argc; i++) free(argv[i]);
  captured c = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(o_path), slurp(e_path)};
  return c;
}

static void release(captured *c) {
  free(c->out);
  free(c->err);
}

static const char *source_path(const char *rel, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", TRIAGE_SOURCE_DIR, rel);
  return buf;
}

static void use_default_rules(void) {
  char dir[PATH_MAX];
  if (!getenv("TRIAGE_RULES_DIR"))
    setenv("TRIAGE_RULES_DIR", source_path("rules", dir, sizeof dir), 1);
}

Test(engine_cli, check_defaults_and_broken_pack) {
  use_default_rules();
  const char *check[] = {"check"};
  captured c = run_rules(check, 1, NULL, 0, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  cr_assert(strstr(c.out, " packs OK\n"), "stdout: %s", c.out);
  release(&c);

  char bad[PATH_MAX];
  source_path("tests/rules/broken/bad-regex.yaml", bad, sizeof bad);
  const char *check_bad[] = {"check", bad};
  c = run_rules(check_bad, 2, NULL, 0, false);
  cr_assert_eq(c.rc, 1);
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "%s:5:30: error: regex: bad regex", bad);
  cr_assert(strncmp(c.err, want, strlen(want)) == 0, "stderr: %s", c.err);
  cr_assert_str_eq(c.out, "");
  release(&c);
}

Test(engine_cli, test_runs_examples) {
  use_default_rules();
  const char *test[] = {"test"};
  captured c = run_rules(test, 1, NULL, 0, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  unsigned long n = 0, failures = 1;
  cr_assert_eq(sscanf(c.out, "%lu examples, %lu failures", &n, &failures), 2, "%s", c.out);
  cr_assert_gt(n, 0);
  cr_assert_eq(failures, 0);
  release(&c);
}

Test(engine_cli, failing_example_exits_1) {
  char dir[] = "/tmp/triage-cli-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char pack[PATH_MAX];
  snprintf(pack, sizeof pack, "%s/p.yaml", dir);
  FILE *f = fopen(pack, "w");
  fputs(
      "pack: p\nversion: 1\nmatchers:\n  m:\n    keywords: [gemm]\n"
      "    examples: {match: [memcpy]}\n",
      f);
  fclose(f);
  const char *test[] = {"test", pack};
  captured c = run_rules(test, 2, NULL, 0, true);
  cr_assert_eq(c.rc, 1);
  cr_assert_str_eq(c.out, "1 examples, 1 failures\n");
  char want[PATH_MAX + 128];
  snprintf(want, sizeof want,
           "%s:6:24: error: example 'memcpy' should match named matcher 'm' but does not\n", pack);
  cr_assert_str_eq(c.err, want);
  release(&c);
  unlink(pack);
  rmdir(dir);
}

Test(engine_cli, explain_with_user_pack_changes_category) {
  use_default_rules();
  char user[PATH_MAX];
  source_path("tests/rules/packs/cublas-lt.yaml", user, sizeof user);
  const char *name = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT";
  const char *explain[] = {"explain", name};
  captured c = run_rules(explain, 2, NULL, 0, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  cr_assert(strstr(c.out, "kernel category:   gemm (rule kernel/gemm"), "%s", c.out);
  release(&c);
  const char *extra[] = {user};
  c = run_rules(explain, 2, extra, 1, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  cr_assert(strstr(c.out, "kernel category:   cublas_lt (rule kernel/cublas-lt"), "%s", c.out);
  release(&c);
  /* the same with --rules after the sub-command */
  const char *explain2[] = {"explain", "--rules", user, name};
  c = run_rules(explain2, 4, NULL, 0, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  cr_assert(strstr(c.out, "cublas_lt"), "%s", c.out);
  release(&c);
}

Test(engine_cli, explain_frame_shows_raw_and_normalized) {
  use_default_rules();
  const char *frame =
      "/usr/lib/python3/dist-packages/sglang/srt/layers/layernorm.py(120): forward_cuda";
  const char *explain[] = {"explain", frame};
  captured c = run_rules(explain, 2, NULL, 0, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  cr_assert(strstr(c.out, "normalized 'python/sglang/srt/layers/layernorm.py:120 forward_cuda'"),
            "%s", c.out);
  cr_assert(strstr(c.out, "frame priority:"), "%s", c.out);
  cr_assert(strstr(c.out, "location priority:"), "%s", c.out);
  release(&c);
}

Test(engine_cli, list_prints_each_pack) {
  use_default_rules();
  char user[PATH_MAX];
  source_path("tests/rules/packs/cublas-lt.yaml", user, sizeof user);
  const char *list[] = {"list", user};
  captured c = run_rules(list, 2, NULL, 0, false);
  cr_assert_eq(c.rc, 0, "stderr: %s", c.err);
  char want[PATH_MAX + 128];
  snprintf(want, sizeof want, "\nuser-cublas-lt\t%s\t1 classifier rules, 1 examples\n", user);
  cr_assert(strstr(c.out, want), "stdout: %s", c.out);
  cr_assert(strstr(c.out, "10-kernel-categories.yaml\t"), "stdout: %s", c.out);
  release(&c);
  /* the override alone is not a valid rule set: its classifier has no default */
  c = run_rules(list, 2, NULL, 0, true);
  cr_assert_eq(c.rc, 1);
  cr_assert(strstr(c.err, "classifier 'kernel' is defined here first and needs 'default'"), "%s",
            c.err);
  cr_assert(strstr(c.err,
                   "classifier 'kernel' rule 'cublas-lt': before 'gemm' names no "
                   "classifier 'kernel' rule loaded before it"),
            "%s", c.err);
  release(&c);
}

Test(engine_cli, usage_errors_exit_2) {
  captured c = run_rules(NULL, 0, NULL, 0, true);
  cr_assert_eq(c.rc, 2);
  cr_assert(strstr(c.err, "rules needs check|list|test"), "%s", c.err);
  release(&c);
  const char *bogus[] = {"frobnicate"};
  c = run_rules(bogus, 1, NULL, 0, true);
  cr_assert_eq(c.rc, 2);
  cr_assert(strstr(c.err, "unknown rules command 'frobnicate'"));
  release(&c);
  const char *explain[] = {"explain"};
  c = run_rules(explain, 1, NULL, 0, true);
  cr_assert_eq(c.rc, 2);
  release(&c);
  const char *opt[] = {"check", "--bogus"};
  c = run_rules(opt, 2, NULL, 0, true);
  cr_assert_eq(c.rc, 2);
  cr_assert(strstr(c.err, "unknown option '--bogus' (see triage rules --help)"), "%s", c.err);
  release(&c);
}

Test(engine_cli, default_dir_discovery) {
  char dir[] = "/tmp/triage-dir-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char rules[PATH_MAX], argv0[PATH_MAX], buf[PATH_MAX];
  snprintf(rules, sizeof rules, "%s/rules", dir);
  snprintf(argv0, sizeof argv0, "%s/triage", dir);
  cr_assert_eq(mkdir(rules, 0700), 0);
  setenv("TRIAGE_RULES_DIR", "/somewhere/else", 1);
  cr_assert_str_eq(triage_default_rules_dir(argv0, buf, sizeof buf), "/somewhere/else");
  unsetenv("TRIAGE_RULES_DIR");
  cr_assert_str_eq(triage_default_rules_dir(argv0, buf, sizeof buf), rules);
  cr_assert_null(triage_default_rules_dir(argv0, buf, 4), "too small a buffer is not a path");
  rmdir(rules);
  /* a bad TRIAGE_RULES_DIR fails the setup with a message naming it */
  setenv("TRIAGE_RULES_DIR", dir, 1);
  char *err_text = NULL;
  size_t err_len = 0;
  FILE *err = open_memstream(&err_text, &err_len);
  triage_rules_setup_options defaults = {0};
  te_rules *r = triage_rules_setup(argv0, &defaults, err);
  fclose(err);
  cr_assert_not_null(r, "an empty rules directory loads nothing and is valid");
  te_rules_destroy(r);
  free(err_text);
  rmdir(dir);
  setenv("TRIAGE_RULES_DIR", "/nonexistent/triage-rules", 1);
  err = open_memstream(&err_text, &err_len);
  r = triage_rules_setup(argv0, &defaults, err);
  fclose(err);
  cr_assert_null(r);
  cr_assert(strstr(err_text, "/nonexistent/triage-rules: error: cannot open rule pack"), "%s",
            err_text);
  free(err_text);
  unsetenv("TRIAGE_RULES_DIR");
}
