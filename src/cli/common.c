/*
 * cli/common.c - the shared options and the steps every command takes the same way
 * (common.h).
 */
#include "cli/common.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__GLIBC__) /* after <stdlib.h>, which defines it: tested by test_cli */
#include <malloc.h>
#endif

#include "cli/exit.h"
#include "cli/progress.h"
#include "cli/rules_setup.h"
#include "report/diff_report.h"
#include "report/text.h"
#include "util/limits.h"

/* 262,145 distinct kernel names: peak RSS 157 -> 148 MB when it was set (bd091ad); lost
 * from 14382eb (main.c tested __GLIBC__ before any header defined it) to this fix. */
#define CLI_MMAP_THRESHOLD_BYTES (256 * 1024)

bool cli_tune_allocator(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
#if defined(M_ARENA_MAX)
  /* One arena for every thread: what the analysis' second thread frees (run_two's steps)
   * stays in an arena of its own otherwise, out of reach of the first thread's later
   * peak (hta15, the frameworks' detection and the step windows at once: +0.27 MB). */
  (void)mallopt(M_ARENA_MAX, 1);
#endif
  return mallopt(M_MMAP_THRESHOLD, CLI_MMAP_THRESHOLD_BYTES) == 1;
#else
  return false;
#endif
}

#define OFF(m) offsetof(cli_common, m)

static const cli_option CLI_SHARED_ROWS[] = {
    {.name = "--format",
     .kind = CLI_CHOICE,
     .offset = OFF(format),
     .choices = "markdown,md|json|html",
     .expect = "markdown, json or html",
     .help = "report format (default markdown, html for\n-o *.html)"},
    {.name = "--output",
     .alias = "-o",
     .kind = CLI_STRING,
     .offset = OFF(output),
     .metavar = "FILE",
     .help = "write to FILE instead of stdout"},
    CLI_LIST_ROW("--rules", OFF(rules), "FILE|DIR",
                 "extra rule packs, after the defaults (repeatable)"),
    CLI_FLAG_ROW("--no-default-rules", OFF(no_default_rules), 1, "do not load the default packs"),
    CLI_STRING_ROW("--compat", OFF(compat), "NAME",
                   "load rules/compat/NAME.yaml after the defaults\n"
                   "(before --rules); reference = the reference\n"
                   "tool's judgements and layout"),
    CLI_FLAG_ROW("--quiet", OFF(quiet), 1, "no progress bar, no warnings"),
    {.name = "--workers",
     .kind = CLI_INT,
     .offset = OFF(workers),
     .lo = 1,
     .hi = AN_MAX_WORKERS,
     .expect = "a thread count from 1 to 256",
     .metavar = "N",
     .help = "threads that read traces (default:\nTRIAGE_WORKERS, else the online CPUs)"},
    {.name = "--help", .alias = "-h", .kind = CLI_HELP, .help = "this text"},
    {.name = "--version", .kind = CLI_VERSION, .help = "print the version"},
};

_Static_assert(AN_MAX_WORKERS == 256, "--workers' expect text names the bound");

const cli_options CLI_SHARED = CLI_OPTIONS(CLI_SHARED_ROWS);

void cli_format_words(unsigned mask, char *buf, size_t cap) {
  static const char *const WORDS[] = {"markdown", "json", "html"};
  size_t n = 0;
  buf[0] = '\0';
  for (int f = TRIAGE_FORMAT_MARKDOWN; f <= TRIAGE_FORMAT_HTML && n < cap; f++)
    if (mask & CLI_FORMAT_BIT(f))
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "|" : "", WORDS[f]);
}

char *cli_command_line(const cli_invocation *inv, const char *lead) {
  size_t n = strlen(lead) + 1;
  for (int i = 1; i < inv->argc; i++) n += strlen(inv->argv[i]) + 1;
  char *s = malloc(n), *p = s;
  if (s) p += sprintf(p, "%s", lead);
  for (int i = 1; s && i < inv->argc; i++) p += sprintf(p, " %s", inv->argv[i]);
  return s;
}

void cli_common_free(cli_common *c) {
  cli_list_free(&c->rules);
  cli_list_free(&c->operands);
}

/* ------------------------------------------------------------------ rule packs */

te_rules *cli_rules_load(const cli_invocation *inv, const cli_common *c, int *rc) {
  char compat[PATH_MAX];
  if (c->compat && !triage_compat_pack(inv->argv0, c->compat, compat, sizeof compat, stderr)) {
    *rc = TRIAGE_EXIT_USAGE; /* a mode that does not exist, like an unknown --framework */
    return NULL;
  }
  triage_rules_setup_options so = {c->rules.items, c->rules.n, c->no_default_rules, c->compat};
  te_rules *rules = triage_rules_setup(inv->argv0, &so, stderr);
  *rc = TRIAGE_EXIT_BAD_INPUT;
  if (!rules) return NULL;
  const char *missing = te_rules_settings_missing(rules);
  if (missing) {
    fprintf(stderr,
            "triage: the rule packs set no value for setting '%s' (the default packs "
            "set every one)\n",
            missing);
    te_rules_destroy(rules);
    return NULL;
  }
  *rc = TRIAGE_EXIT_OK;
  return rules;
}

/* ------------------------------------------------------------------ the analysis */

/* ctx of the hooks: the --quiet flag (bool). */
static void *progress_begin(void *ctx, const char *path) {
  const bool *quiet = ctx;
  return triage_progress_create(stderr, path, 0, !*quiet);
}

static void progress_end(void *bar) { triage_progress_destroy(bar); }

/* Warnings of the run, one line each on stderr; none with --quiet (the man page). */
static void print_hint(void *ctx, const an_hint *h) {
  const bool *quiet = ctx;
  if (*quiet) return;
  char line[2048];
  rp_hint_text(h, line, sizeof line);
  fprintf(stderr, "triage: %s\n", line);
}

/* The hooks' context: whether to stay quiet (never written; the hooks outlive no run). */
static bool quiet_values[2] = {false, true};

an_run_options cli_run_options(const cli_common *c) {
  an_run_options o = {0};
  o.min_share_pct = -1;
  o.rank_workers = (unsigned)c->workers;
  bool *quiet = &quiet_values[c->quiet ? 1 : 0];
  o.progress = (an_read_hooks){progress_begin, triage_progress_update, progress_end, quiet};
  o.hint = print_hint;
  o.hint_ctx = quiet;
  return o;
}

void cli_print_run_error(const an_error *e, const char *path) {
  fputs("triage: ", stderr);
  if (e->path[0] || path) fprintf(stderr, "%s: ", e->path[0] ? e->path : path);
  if (e->has_offset) fprintf(stderr, "offset %llu: ", (unsigned long long)e->offset);
  fprintf(stderr, "%s\n", e->message);
}

/* ------------------------------------------------------------------ inputs */

int cli_rank_check(const char *path, long rank, const an_report *rep) {
  struct stat sb;
  long have = rep->limits.trace_rank;
  if (rank < 0 || !path || !strcmp(path, "-") || have < 0 || have == rank) return TRIAGE_EXIT_OK;
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return TRIAGE_EXIT_OK;
  fprintf(stderr,
          "triage: %s: the trace is of rank %ld (distributedInfo.rank), not rank %ld (--rank "
          "picks a rank of a profile directory)\n",
          path, have, rank);
  return TRIAGE_EXIT_BAD_INPUT;
}

static int analyse_input(const cli_common *c, const te_rules *rules, long rank, cli_input *in) {
  an_run_options o = cli_run_options(c);
  o.formal.path = in->path;
  o.one_rank = rank >= 0;
  o.rank = rank;
  an_error err;
  if (an_run(&o, rules, &in->report, &err) != AN_OK) {
    cli_print_run_error(&err, in->path);
    return TRIAGE_EXIT_BAD_INPUT;
  }
  struct stat sb;
  in->kind =
      stat(in->path, &sb) == 0 && S_ISDIR(sb.st_mode) ? CLI_INPUT_DIRECTORY : CLI_INPUT_TRACE;
  /* a trace side of another rank stays: the diff says the ranks differ */
  return TRIAGE_EXIT_OK;
}

int cli_input_load(const cli_common *c, const te_rules *rules, const char *path,
                   size_t max_report_bytes, const char *limit_name, cli_input *in) {
  return cli_input_load_rank(c, rules, path, -1, max_report_bytes, limit_name, in);
}

int cli_input_load_rank(const cli_common *c, const te_rules *rules, const char *path, long rank,
                        size_t max_report_bytes, const char *limit_name, cli_input *in) {
  *in = (cli_input){.path = path};
  switch (rp_json_report_parse(path, max_report_bytes, &in->doc)) {
    case 1:
      in->kind = CLI_INPUT_REPORT;
      return TRIAGE_EXIT_OK;
    case 0:
      return analyse_input(c, rules, rank, in);
    case -2:
      fprintf(stderr, "triage: %s: a JSON report larger than %zu bytes (%s)\n", path,
              max_report_bytes, limit_name);
      return TRIAGE_EXIT_BAD_INPUT;
    default:
      fprintf(stderr, "triage: %s: out of memory\n", path);
      return TRIAGE_EXIT_BAD_INPUT;
  }
}

void cli_input_free(cli_input *in) {
  an_report_destroy(in->report);
  cJSON_Delete(in->doc);
  *in = (cli_input){0};
}

/* ------------------------------------------------------------------ output */

FILE *cli_file_open(const char *path) {
  if (!path) return stdout;
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "triage: %s: cannot open for writing: %s\n", path, strerror(errno));
  return f;
}

int cli_file_close(FILE *out, const char *path, int write_rc) {
  if (fflush(out) != 0) write_rc = -1;
  if (out != stdout && fclose(out) != 0) write_rc = -1;
  if (write_rc == 0) return TRIAGE_EXIT_OK;
  fprintf(stderr, "triage: %s: write error\n", path ? path : "stdout");
  return TRIAGE_EXIT_BAD_INPUT;
}

FILE *cli_output_open(const cli_common *c) { return cli_file_open(c->output); }

int cli_output_close(FILE *out, const cli_common *c, int write_rc) {
  return cli_file_close(out, c->output, write_rc);
}
