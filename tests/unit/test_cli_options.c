/*
 * test_cli_options.c - the command model (cli/commands.h): every command with every
 * shared option, before and after its word (the effect, or the refusal that names it);
 * every option of one command refused by the others in both places; the option tables
 * themselves; --help; and the man page and docs/usage.md against the tables.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/help.h"

/* ------------------------------------------------------------------ running the CLI */

typedef struct result {
  int rc;
  char *out, *err;
} result;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc(1, (size_t)n + 1);
  cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return s;
}

/* `triage LINE` (words split on spaces) through cli_main in a child, run in the source
 * tree; stdout and stderr captured. */
static result run_cli(const char *line) {
  char *copy = strdup(line), *argv[64], *save = NULL;
  int argc = 0;
  argv[argc++] = (char *)"triage";
  for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    cr_assert_lt(argc, 63);
    argv[argc++] = w;
  }
  argv[argc] = NULL;
  char o_path[] = "/tmp/triage-opt-out-XXXXXX", e_path[] = "/tmp/triage-opt-err-XXXXXX";
  int fo = mkstemp(o_path), fe = mkstemp(e_path);
  cr_assert(fo >= 0 && fe >= 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    dup2(fo, STDOUT_FILENO);
    dup2(fe, STDERR_FILENO);
    if (chdir(TRIAGE_SOURCE_DIR) != 0) _exit(99);
    int rc = cli_main(argc, argv);
    fflush(NULL);
    _exit(rc);
  }
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  close(fo);
  close(fe);
  free(copy);
  result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(o_path), slurp(e_path)};
  unlink(o_path);
  unlink(e_path);
  return r;
}

static void result_free(result *r) {
  free(r->out);
  free(r->err);
}

/* ------------------------------------------------------------------ shared options */

#define OUT_FILE "@OUT" /* replaced by a path of this process */
#define RANKS "tests/data/ranks/sglang-decode-slow2-tp4/1700000016.016-TP-"
#define UTF8 "tests/bad-input/cases/invalid-utf8.json"

/* What each command is run on when the case does not say. */
static const struct {
  const char *command, *operands;
} BASE[] = {
    {"triage", "tests/data/llama_tp2"},
    {"rules", "list"},
    {"diff", "tests/data/diff/generated/before tests/data/diff/generated/after"},
    {"merge", RANKS "0.trace.json.gz " RANKS "1.trace.json.gz"},
    {"bundle", "tests/data/llama_tp2"},
};

/* One shared option given to one command: the exit status, a text that must be in
 * stdout, stderr or the output file ("out", "err", "file"), and one that must not be in
 * stderr (a warning --quiet silences). */
typedef struct option_case {
  const char *option; /* the row's name */
  const char *command;
  const char *given;    /* the option as typed, with its value */
  const char *operands; /* NULL: BASE */
  int rc;
  const char *where, *want, *not_in_err;
} option_case;

#define REFUSED_FORMAT(cmd, value, text) \
  { "--format", cmd, "--format " value, NULL, 2, "err", text, NULL }
#define BROKEN_PACK \
  "--rules tests/rules/broken/bad-regex.yaml", NULL, 1, "err", "bad-regex.yaml:5:30: error"
#define NO_COMPAT \
  "--compat nothing", NULL, 2, "err", "--compat: unknown compatibility mode 'nothing'"
#define NO_DEFAULTS "--no-default-rules", NULL, 1, "err", "the rule packs set no value for setting"
#define BAD_WORKERS \
  "--workers 0", NULL, 2, "err", "--workers: expected a thread count from 1 to 256"
#define QUIET_DIFF "--quiet", UTF8 " " UTF8

static const option_case CASES[] = {
    {"--format", "triage", "--format json", NULL, 0, "out", "{\n\t\"mode\":", NULL},
    {"--format", "triage", "--format html", NULL, 0, "out", "<!DOCTYPE html>", NULL},
    {"--format", "diff", "--format json", NULL, 0, "out", "{\n\t\"stages\":", NULL},
    {"--format", "diff", "--format html", NULL, 0, "out", "<!DOCTYPE html>", NULL},
    {"--format", "merge", "--format json", NULL, 0, "out", "{\n\t\"ranks\":", NULL},
    REFUSED_FORMAT("merge", "html", "--format: triage merge writes markdown|json, not 'html'"),
    REFUSED_FORMAT("bundle", "json", "--format: triage bundle writes markdown|html, not 'json'"),
    {"--format", "bundle", "--format html", NULL, 0, "out", "<!DOCTYPE html>", NULL},
    REFUSED_FORMAT("rules", "json", "--format: triage rules writes text, it takes no --format"),
    {"--output", "triage", "-o " OUT_FILE, NULL, 0, "file", "# Triage report\n", NULL},
    {"--output", "triage", "--output=" OUT_FILE ".html", NULL, 0, "file", "<!DOCTYPE html>", NULL},
    {"--output", "rules", "-o " OUT_FILE, NULL, 0, "file", "10-kernel-categories.yaml", NULL},
    {"--output", "diff", "-o " OUT_FILE, NULL, 0, "file", "# Triage diff\n", NULL},
    {"--output", "diff", "--output " OUT_FILE ".htm", NULL, 0, "file", "<!DOCTYPE html>", NULL},
    {"--output", "merge", "-o " OUT_FILE, NULL, 0, "file", "# Triage ranks\n", NULL},
    {"--output", "merge", "--output=" OUT_FILE ".html", NULL, 0, "file", "# Triage ranks\n", NULL},
    {"--output", "bundle", "-o " OUT_FILE, NULL, 0, "file", "# Triage bundle\n", NULL},
    {"--output", "bundle", "--output " OUT_FILE ".html", NULL, 0, "file", "<!DOCTYPE html>", NULL},
    {"--rules", "triage", BROKEN_PACK, NULL},
    {"--rules", "rules", BROKEN_PACK, NULL},
    {"--rules", "diff", BROKEN_PACK, NULL},
    {"--rules", "merge", BROKEN_PACK, NULL},
    {"--rules", "bundle", BROKEN_PACK, NULL},
    {"--no-default-rules", "triage", NO_DEFAULTS, NULL},
    {"--no-default-rules", "rules", "--no-default-rules", NULL, 0, "out", "", NULL},
    {"--no-default-rules", "diff", NO_DEFAULTS, NULL},
    {"--no-default-rules", "merge", NO_DEFAULTS, NULL},
    {"--no-default-rules", "bundle", NO_DEFAULTS, NULL},
    {"--compat", "triage", NO_COMPAT, NULL},
    {"--compat", "triage", "--compat reference", NULL, 0, "out", "Triage View\n", NULL},
    {"--compat", "rules", NO_COMPAT, NULL},
    {"--compat", "rules", "--compat reference", NULL, 0, "out", "compat-reference\t", NULL},
    {"--compat", "diff", NO_COMPAT, NULL},
    {"--compat", "merge", NO_COMPAT, NULL},
    {"--compat", "bundle", NO_COMPAT, NULL},
    {"--quiet", "triage", "--quiet", UTF8, 0, "out", "# Triage report", "warning"},
    {"--quiet", "rules", "--quiet", "explain --pattern fused-add-rmsnorm " UTF8, 0, "out",
     "stage all:", "warning"},
    {"--quiet", "diff", QUIET_DIFF, 0, "out", "# Triage diff", "warning"},
    {"--quiet", "merge", QUIET_DIFF, 1, "err", "is given twice", "warning"},
    {"--quiet", "bundle", QUIET_DIFF, 0, "out", "# Triage bundle", "warning"},
    {"--workers", "triage", BAD_WORKERS, NULL},
    {"--workers", "triage", "--workers 1", NULL, 0, "out", "# Triage report", NULL},
    {"--workers", "rules", BAD_WORKERS, NULL},
    {"--workers", "rules", "--workers 256", NULL, 0, "out", "10-kernel-categories.yaml", NULL},
    {"--workers", "diff", BAD_WORKERS, NULL},
    {"--workers", "diff", "--workers=1", NULL, 0, "out", "# Triage diff", NULL},
    {"--workers", "merge", BAD_WORKERS, NULL},
    {"--workers", "merge", "--workers 2", NULL, 0, "out", "# Triage ranks", NULL},
    {"--workers", "bundle", BAD_WORKERS, NULL},
    {"--workers", "bundle", "--workers 1", NULL, 0, "out", "# Triage bundle", NULL},
    {"--help", "triage", "--help", NULL, 0, "out", "usage: triage [options] TRACE\n", NULL},
    {"--help", "rules", "-h", NULL, 0, "out", "usage: triage rules [options] check", NULL},
    {"--help", "diff", "--help", NULL, 0, "out", "usage: triage diff [options] BEFORE AFTER\n",
     NULL},
    {"--help", "merge", "-h", NULL, 0, "out", "usage: triage merge [options] REPORT...\n", NULL},
    {"--help", "bundle", "--help", NULL, 0, "out", "usage: triage bundle [options] INPUT...\n",
     NULL},
    {"--version", "triage", "--version", NULL, 0, "out", "triage 0.", NULL},
    {"--version", "rules", "--version", NULL, 0, "out", "triage 0.", NULL},
    {"--version", "diff", "--version", NULL, 0, "out", "triage 0.", NULL},
    {"--version", "merge", "--version", NULL, 0, "out", "triage 0.", NULL},
    {"--version", "bundle", "--version", NULL, 0, "out", "triage 0.", NULL},
};

static const char *base_operands(const char *command) {
  for (size_t i = 0; i < sizeof BASE / sizeof BASE[0]; i++)
    if (!strcmp(BASE[i].command, command)) return BASE[i].operands;
  cr_assert_fail("no operands for command %s", command);
  return NULL;
}

/* The option as typed with OUT_FILE made a path of this process (so runs of several
 * build trees at once do not meet), and that path, or "" when it names none. */
static void with_out_file(const char *given, char *typed, size_t cap, char *path, size_t pcap) {
  const char *p = strstr(given, OUT_FILE);
  path[0] = '\0';
  if (!p) {
    snprintf(typed, cap, "%s", given);
    return;
  }
  snprintf(path, pcap, "/tmp/triage-test-option-%d%s", (int)getpid(), p + strlen(OUT_FILE));
  snprintf(typed, cap, "%.*s%s", (int)(p - given), given, path);
}

/* Runs c with the option before (before = true) or after the command's word and its
 * operands. */
static void check_case(const option_case *c, bool before) {
  const char *word = strcmp(c->command, "triage") ? c->command : "";
  const char *ops = c->operands ? c->operands : base_operands(c->command);
  char line[1024], given[512], path[256];
  with_out_file(c->given, given, sizeof given, path, sizeof path);
  if (before)
    snprintf(line, sizeof line, "%s %s %s", given, word, ops);
  else
    snprintf(line, sizeof line, "%s %s %s", word, ops, given);
  const char *file = path[0] ? path : NULL;
  if (file) unlink(file);
  result r = run_cli(line);
  cr_assert_eq(r.rc, c->rc, "triage %s: exit %d, want %d; stderr: %s", line, r.rc, c->rc, r.err);
  const char *text = !strcmp(c->where, "out") ? r.out : !strcmp(c->where, "err") ? r.err : NULL;
  char *written = file ? slurp(file) : NULL;
  if (file) {
    cr_assert_not_null(written, "triage %s: no %s", line, file);
    cr_assert_str_eq(r.out, "", "triage %s: stdout not empty with an output file", line);
    text = written;
    unlink(file);
  }
  cr_assert(strstr(text, c->want), "triage %s: '%s' not in %s:\n%.2000s", line, c->want, c->where,
            text);
  if (c->not_in_err)
    cr_assert_null(strstr(r.err, c->not_in_err), "triage %s: stderr has '%s': %s", line,
                   c->not_in_err, r.err);
  free(written);
  result_free(&r);
}

/* Every command with every shared option, before and after its word. */
Test(cli_options, shared_options_everywhere, .timeout = 300) {
  for (size_t i = 0; i < cli_command_count(); i++) {
    const cli_command *cmd = cli_command_at(i);
    for (size_t k = 0; k < CLI_SHARED.n; k++) {
      const char *name = CLI_SHARED.rows[k].name;
      size_t cases = 0;
      for (size_t j = 0; j < sizeof CASES / sizeof CASES[0]; j++) {
        if (strcmp(CASES[j].option, name) || strcmp(CASES[j].command, cmd->name)) continue;
        check_case(&CASES[j], true);
        check_case(&CASES[j], false);
        cases++;
      }
      cr_assert_gt(cases, 0, "no case for %s with command %s", name, cmd->name);
    }
  }
}

/* Without --quiet the inputs of the --quiet cases do warn (so the cases prove something). */
Test(cli_options, quiet_cases_warn_without_it) {
  for (size_t j = 0; j < sizeof CASES / sizeof CASES[0]; j++) {
    if (strcmp(CASES[j].option, "--quiet")) continue;
    char line[1024];
    const char *word = strcmp(CASES[j].command, "triage") ? CASES[j].command : "";
    snprintf(line, sizeof line, "%s %s", word, CASES[j].operands);
    result r = run_cli(line);
    cr_assert(strstr(r.err, "warning: replaced 3 invalid UTF-8"), "triage %s: %s", line, r.err);
    result_free(&r);
  }
}

/* ------------------------------------------------------------------ other commands' options */

static bool takes(const cli_command *cmd, const char *name) {
  return cli_options_find(cli_command_options(cmd), name) || cli_options_find(CLI_SHARED, name);
}

/* An option of one command given to another is refused, before and after the word, with
 * a usage error naming it. */
Test(cli_options, foreign_options_refused, .timeout = 300) {
  for (size_t i = 0; i < cli_command_count(); i++) {
    const cli_command *cmd = cli_command_at(i);
    const char *word = i ? cmd->name : "";
    for (size_t j = 0; j < cli_command_count(); j++) {
      cli_options t = cli_command_options(cli_command_at(j));
      for (size_t k = 0; k < t.n; k++) {
        const cli_option *o = &t.rows[k];
        if (o->kind == CLI_HEADING || takes(cmd, o->name)) continue;
        const char *value = cli_option_takes_value(o) ? " X" : "";
        char want[256], line[1024];
        snprintf(want, sizeof want, "triage: '%s' is not an option of triage%s%s", o->name,
                 i ? " " : "", word);
        for (int before = 0; before < 2; before++) {
          if (before)
            snprintf(line, sizeof line, "%s%s %s %s", o->name, value, word,
                     base_operands(cmd->name));
          else
            snprintf(line, sizeof line, "%s %s %s%s", word, base_operands(cmd->name), o->name,
                     value);
          result r = run_cli(line);
          cr_assert_eq(r.rc, 2, "triage %s: exit %d", line, r.rc);
          cr_assert(strstr(r.err, want), "triage %s: %s", line, r.err);
          result_free(&r);
        }
      }
    }
  }
}

/* The defects of the old parser (issue 33), each now an error or the effect asked for. */
Test(cli_options, word_and_operand_errors) {
  result r = run_cli("diff tests/data/llama_tp2");
  cr_assert_eq(r.rc, 2);
  cr_assert(strstr(r.err, "triage: diff needs BEFORE AFTER"), "%s", r.err);
  result_free(&r);
  r = run_cli("diff a b c");
  cr_assert_eq(r.rc, 2);
  cr_assert(strstr(r.err, "unexpected argument 'c' (triage diff takes BEFORE AFTER)"), "%s", r.err);
  result_free(&r);
  r = run_cli("--bogus diff a b");
  cr_assert_eq(r.rc, 2);
  cr_assert(strstr(r.err, "unknown option '--bogus' (see triage --help)"), "%s", r.err);
  result_free(&r);
  r = run_cli("merge a");
  cr_assert_eq(r.rc, 2);
  cr_assert(strstr(r.err, "merge needs REPORT..."), "%s", r.err);
  result_free(&r);
  /* `triage triage TRACE` is the analysis (the reference's first word); `triage TRACE`
   * with a trace file named like a command is read as ./NAME */
  r = run_cli("triage --quiet tests/data/llama_tp2");
  cr_assert_eq(r.rc, 0, "%s", r.err);
  cr_assert(!strncmp(r.out, "# Triage report\n", 16));
  result_free(&r);
  r = run_cli("--quiet -- tests/data/llama_tp2");
  cr_assert_eq(r.rc, 0, "%s", r.err);
  result_free(&r);
}

/* A trace file named like a command word: the command runs, and its usage error says how
 * to read the file. */
Test(cli_options, trace_named_like_a_command) {
  char dir[] = "/tmp/triage-test-word-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cp %s/tests/bad-input/cases/good.trace.json %s/triage && cd %s && "
           "TRIAGE_RULES_DIR=%s/rules %s/triage triage 2>err; echo $? > rc; "
           "TRIAGE_RULES_DIR=%s/rules %s/triage --quiet ./triage > out",
           TRIAGE_SOURCE_DIR, dir, dir, TRIAGE_SOURCE_DIR, TRIAGE_BINARY_DIR, TRIAGE_SOURCE_DIR,
           TRIAGE_BINARY_DIR);
  cr_assert_eq(system(cmd), 0);
  char path[600];
  snprintf(path, sizeof path, "%s/err", dir);
  char *err = slurp(path);
  cr_assert(strstr(err, "no trace given") && strstr(err, "write ./triage"), "%s", err);
  snprintf(path, sizeof path, "%s/rc", dir);
  char *rc = slurp(path);
  cr_assert_str_eq(rc, "2\n");
  snprintf(path, sizeof path, "%s/out", dir);
  char *out = slurp(path);
  cr_assert(!strncmp(out, "# Triage report\n", 16), "%s", out);
  free(err);
  free(rc);
  free(out);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

/* ------------------------------------------------------------------ the tables */

/* Each option name has one meaning: no two rows of one spec share it, an own option never
 * shadows a shared one, and one name takes a value in every command or in none (the word
 * search relies on it). */
Test(cli_options, tables_are_consistent) {
  for (size_t i = 0; i < cli_command_count(); i++) {
    const cli_command *cmd = cli_command_at(i);
    cli_spec spec = cli_command_spec(cmd);
    for (size_t p = 0; p < 2; p++)
      for (size_t k = 0; k < spec.parts[p].n; k++) {
        const cli_option *o = &spec.parts[p].rows[k];
        if (o->kind == CLI_HEADING) continue;
        cr_assert_eq(cli_spec_find(&spec, o->name), o, "%s: %s is in two rows", cmd->name, o->name);
        cr_assert(o->help && *o->help, "%s: %s has no help line", cmd->name, o->name);
        for (size_t j = 0; j < cli_command_count(); j++) {
          const cli_option *other =
              cli_options_find(cli_command_options(cli_command_at(j)), o->name);
          if (other)
            cr_assert_eq(cli_option_takes_value(other), cli_option_takes_value(o),
                         "%s takes a value in one command only", o->name);
        }
      }
    cr_assert(cmd->forms && cmd->forms[0], "%s has no usage form", cmd->name);
    cr_assert(cmd->min_operands <= cmd->max_operands);
  }
  cr_assert_str_eq(cli_command_at(0)->name, "triage");
}

static char *help_of(const cli_command *cmd) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  cr_assert_eq(cli_help(cmd, f), 0);
  fclose(f);
  return text;
}

/* --help holds every option the command takes, in 80 columns. */
Test(cli_options, help_lists_every_option) {
  for (size_t i = 0; i < cli_command_count(); i++) {
    const cli_command *cmd = cli_command_at(i);
    char *text = help_of(cmd);
    for (const char *line = text; *line; line += strcspn(line, "\n") + 1)
      cr_assert_leq(strcspn(line, "\n"), 80, "%s --help: %.*s", cmd->name, (int)strcspn(line, "\n"),
                    line);
    cli_spec spec = cli_command_spec(cmd);
    for (size_t p = 0; p < 2; p++)
      for (size_t k = 0; k < spec.parts[p].n; k++) {
        const cli_option *o = &spec.parts[p].rows[k];
        if (o->kind == CLI_HEADING || (!strcmp(o->name, "--format") && !cmd->formats)) continue;
        char want[80];
        snprintf(want, sizeof want, " %s", o->name);
        cr_assert(strstr(text, want), "%s --help lacks %s", cmd->name, o->name);
      }
    free(text);
  }
}

/* ------------------------------------------------------------------ the documents */

/* The text of a roff line as man shows it: font escapes dropped, "\-" as "-". */
static void unroff(char *s) {
  char *w = s;
  for (const char *r = s; *r;) {
    if (r[0] == '\\' && r[1] == 'f' && r[2]) {
      r += 3;
    } else if (r[0] == '\\' && (r[1] == '-' || r[1] == '&')) {
      if (r[1] == '-') *w++ = '-';
      r += 2;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

/* The lines between the first line equal to start and the next equal to end. */
static size_t block_lines(const char *text, const char *start, const char *end, char **lines,
                          size_t cap) {
  const char *p = strstr(text, start);
  cr_assert_not_null(p, "no '%s'", start);
  p += strlen(start);
  size_t n = 0;
  while (*p && strncmp(p, end, strlen(end)) != 0 && n < cap) {
    size_t len = strcspn(p, "\n");
    lines[n] = strndup(p, len);
    n++;
    p += len + (p[len] ? 1 : 0);
  }
  return n;
}

/* Every usage line of the tables stands in the block, and every line of the block is one
 * of them. */
static void check_synopsis(const char *doc, char **lines, size_t n) {
  char want[512];
  size_t forms = 0;
  for (size_t i = 0; i < cli_command_count(); i++) {
    const cli_command *cmd = cli_command_at(i);
    for (size_t f = 0; cmd->forms[f]; f++, forms++) {
      cli_synopsis(cmd, f, want, sizeof want);
      bool found = false;
      for (size_t k = 0; k < n && !found; k++) found = !strcmp(lines[k], want);
      cr_assert(found, "%s: its synopsis lacks '%s'", doc, want);
    }
  }
  cr_assert_eq(n, forms, "%s: %zu synopsis lines, the tables have %zu", doc, n, forms);
}

static bool option_char(char c) {
  return (c >= 'a' && c <= 'z') || c == '-' || (c >= '0' && c <= '9');
}

/* Every option of every table is named in doc, and every "--word" doc names is one. */
static void check_options_named(const char *doc, const char *text) {
  for (size_t i = 0; i < cli_command_count(); i++) {
    cli_spec spec = cli_command_spec(cli_command_at(i));
    for (size_t p = 0; p < 2; p++)
      for (size_t k = 0; k < spec.parts[p].n; k++) {
        const cli_option *o = &spec.parts[p].rows[k];
        if (o->kind == CLI_HEADING) continue;
        char want[80];
        snprintf(want, sizeof want, "%s", o->name);
        const char *hit = text;
        bool found = false;
        while (!found && (hit = strstr(hit, want))) {
          found = !option_char(hit[strlen(want)]);
          hit++;
        }
        cr_assert(found, "%s does not name %s", doc, o->name);
      }
  }
  for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
    if ((p > text && option_char(p[-1])) || p[2] < 'a' || p[2] > 'z') continue;
    size_t len = 2;
    while (option_char(p[len])) len++;
    if (len == 2) continue;
    char name[80];
    snprintf(name, sizeof name, "%.*s", (int)len, p);
    bool known = false;
    for (size_t i = 0; i < cli_command_count() && !known; i++) {
      cli_spec spec = cli_command_spec(cli_command_at(i));
      known = cli_spec_find(&spec, name) != NULL;
    }
    cr_assert(known, "%s names %s, which no command takes", doc, name);
  }
}

Test(cli_options, man_page_matches_the_tables) {
  char *text = slurp(TRIAGE_SOURCE_DIR "/docs/triage.1");
  cr_assert_not_null(text);
  unroff(text);
  char *lines[64];
  size_t n = block_lines(text, ".SH SYNOPSIS\n.nf\n", ".fi\n", lines, 64);
  check_synopsis("docs/triage.1", lines, n);
  for (size_t i = 0; i < n; i++) free(lines[i]);
  check_options_named("docs/triage.1", text);
  free(text);
}

Test(cli_options, usage_md_matches_the_tables) {
  char *text = slurp(TRIAGE_SOURCE_DIR "/docs/usage.md");
  cr_assert_not_null(text);
  char *lines[64];
  size_t n = block_lines(text, "# Using triage\n\n```\n", "```\n", lines, 64);
  check_synopsis("docs/usage.md", lines, n);
  for (size_t i = 0; i < n; i++) free(lines[i]);
  check_options_named("docs/usage.md", text);
  free(text);
}
