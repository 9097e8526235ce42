/*
 * cli/commands.c - the table of commands and the one way each is run (commands.h).
 */
#include "cli/commands.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/analyse.h"
#include "cli/bundle_cmd.h"
#include "cli/diff.h"
#include "cli/exit.h"
#include "cli/help.h"
#include "cli/merge.h"
#include "cli/options.h"
#include "cli/rules_cmd.h"
#include "util/limits.h"

#ifndef TRIAGE_VERSION
#define TRIAGE_VERSION "0.1.0"
#endif

/* A row: its word, usage forms, summary, the formats it writes, its operands (min, max),
 * its arguments struct and handler; the other members by designator. */
#define COMMAND(word, usage, text, fmts, min, max, args, handler, ...)                   \
  {                                                                                      \
    .name = word, .forms = usage, .summary = text, .formats = fmts, .min_operands = min, \
    .max_operands = max, .args_size = sizeof(args), .run = handler, __VA_ARGS__          \
  }
#define FORMS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ONLY(a, b) (CLI_FORMAT_BIT(TRIAGE_FORMAT_##a) | CLI_FORMAT_BIT(TRIAGE_FORMAT_##b))

/* What a user sees of each command, in one place (the man page and docs/usage.md are
 * checked against it). The analysis comes first: it runs when no command word is given. */
static const cli_command COMMANDS[] = {
    COMMAND("triage",
            FORMS("TRACE", "--mapping-input MAPPING --formal-input FORMAL", "--url URL",
                  "--mapping-url URL --formal-url URL"),
            "Turns PyTorch-profiler (Kineto) traces of LLM inference servers into one triage\n"
            "report: kernel table, overlap-opportunity table and fuse-pattern table.",
            CLI_FORMATS_ALL, 0, SIZE_MAX /* its check names a second TRACE */, triage_options,
            cli_analyse_run, .options = &TRIAGE_OPTIONS, .defaults = triage_options_defaults,
            .check = triage_options_check, .loads_rules = true,
            .description =
                "\n"
                "The default report starts with what to do:\n"
                "  $ triage trace.json.gz\n"
                "  # Triage report            (framework, model, TP, GPU: each with its source)\n"
                "  ## What to try first       1. **Overlap it with other streams**: `kernel` at\n"
                "                                `path.py:120 forward`. **1.20 ms** at stake ...\n"
                "  ## Limits of this trace    (no Python stacks, framework not detected, ...)\n"
                "  ## Stage: decode           time by category; ### Kernels / Overlap / Fusion\n"
                "  ## Legend\n"),
    COMMAND("rules",
            FORMS("check|list|test [PACK...]", "explain [PACK...] NAME...",
                  "explain --pattern ID [PACK...] [TRACE]"),
            "validate, list, explain and self-test the rule packs", 0, 1, SIZE_MAX, rules_cli_args,
            cli_rules_run, .options = &CLI_RULES_OPTIONS,
            .description =
                "  check     validate the default packs plus PACKs; warn about classifier rules\n"
                "            an earlier rule shadows\n"
                "  list      list the loaded packs with their entry counts\n"
                "  explain   how each kernel/frame NAME is classified and scored (operands that\n"
                "            are *.yaml files or directories are packs)\n"
                "  test      run every examples: self-test\n"),
    COMMAND("diff", FORMS("BEFORE AFTER"),
            "what changed between two runs (traces, directories or JSON reports)", CLI_FORMATS_ALL,
            2, 2, diff_args, cli_diff_run, .options = &CLI_DIFF_OPTIONS,
            .defaults = diff_args_defaults, .loads_rules = true,
            .exit_more = "3 a regression beyond noise with --fail-on regression;\n"
                         "             4 runs not comparable (other GPU or world size) with\n"
                         "             --fail-on regression",
            .description =
                "Per stage: GPU time, categories, kernels, fusion and overlap rows, ranks,\n"
                "per step where both runs know their steps; changes below the noise floor\n"
                "(the packs', or the spread of the data) are within noise.\n"),
    COMMAND("merge", FORMS("REPORT..."), "the Ranks section from one-rank JSON reports or traces",
            ONLY(MARKDOWN, JSON), 2, SIZE_MAX, cli_common, cli_merge_run, .loads_rules = true,
            .description =
                "Each REPORT is `triage --rank N --format json DIR` of one rank, or the\n"
                "trace of one rank; the section equals the directory's (docs/scale-out.md).\n"),
    COMMAND("bundle", FORMS("INPUT..."),
            "many reports (traces, directories, JSON reports) in one document",
            ONLY(MARKDOWN, HTML), 1, SIZE_MAX, cli_common, cli_bundle_run, .loads_rules = true,
            .description =
                "A JSON report shows the tables it stored; the HTML page (--format html or\n"
                "-o NAME.html) takes traces and directories.\n"),
};

size_t cli_command_count(void) { return sizeof COMMANDS / sizeof COMMANDS[0]; }

const cli_command *cli_command_at(size_t i) {
  return i < cli_command_count() ? &COMMANDS[i] : NULL;
}

const cli_command *cli_command_find(const char *name) {
  for (size_t i = 0; name && i < cli_command_count(); i++)
    if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
  return NULL;
}

/* The row of any command (or the shared table) naming arg, or NULL. */
static const cli_option *any_option(const char *arg) {
  const cli_option *o = cli_options_find(CLI_SHARED, arg);
  for (size_t i = 0; !o && i < cli_command_count(); i++)
    o = cli_options_find(cli_command_options(&COMMANDS[i]), arg);
  return o;
}

static int push_word(void *args, const char *word, char *err, size_t cap) {
  cli_common *c = args;
  return cli_list_push(&c->operands, word) ? 0 : cli_usage_error(err, cap, "out of memory");
}

static int unknown_option(const void *ctx, const char *arg, char *err, size_t cap) {
  const cli_command *cmd = ctx;
  const char *eq = strchr(arg, '=');
  int len = eq ? (int)(eq - arg) : (int)strlen(arg);
  const char *sp = cmd == &COMMANDS[0] ? "" : " ";
  const char *word = cmd == &COMMANDS[0] ? "" : cmd->name;
  if (any_option(arg))
    return cli_usage_error(err, cap,
                           "'%.*s' is not an option of triage%s%s (see triage%s%s --help)", len,
                           arg, sp, word, sp, word);
  return cli_usage_error(err, cap, "unknown option '%.*s' (see triage%s%s --help)", len, arg, sp,
                         word);
}

cli_options cli_command_options(const cli_command *cmd) {
  return cmd->options ? *cmd->options : (cli_options){NULL, 0};
}

cli_spec cli_command_spec(const cli_command *cmd) {
  return (cli_spec){{cli_command_options(cmd), CLI_SHARED}, push_word, unknown_option, cmd};
}

int cli_command_word(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) return -1;
    if (a[0] != '-' || strcmp(a, "-") == 0) return cli_command_find(a) ? i : -1;
    const cli_option *o = any_option(a);
    if (!o) return -1; /* the analysis says it is unknown */
    if (cli_option_takes_value(o) && !strchr(a, '=')) i++;
  }
  return -1;
}

/* ------------------------------------------------------------------ after the parse */

/* TRIAGE_WORKERS, when --workers is not given. Unset or empty: the online CPUs (0). */
static int workers_from_env(cli_common *c, char *err, size_t cap) {
  const char *v = getenv("TRIAGE_WORKERS");
  if (c->workers || !v || !*v) return 0;
  char *end = NULL;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > (long)AN_MAX_WORKERS)
    return cli_usage_error(err, cap, "TRIAGE_WORKERS: '%s' is not a thread count from 1 to %u", v,
                           AN_MAX_WORKERS);
  c->workers = (int)n;
  return 0;
}

static bool html_name(const char *path) {
  size_t n = path ? strlen(path) : 0;
  return (n >= 5 && strcasecmp(path + n - 5, ".html") == 0) ||
         (n >= 4 && strcasecmp(path + n - 4, ".htm") == 0);
}

/* --format among the command's formats; without it, html for -o *.html when it has html. */
static int check_format(const cli_command *cmd, cli_common *c, char *err, size_t cap) {
  static const char *const WORDS[] = {"markdown", "json", "html"};
  char words[64];
  cli_format_words(cmd->formats, words, sizeof words);
  if (c->format != TRIAGE_FORMAT_UNSET && !cmd->formats)
    return cli_usage_error(err, cap, "--format: triage %s writes text, it takes no --format",
                           cmd->name);
  if (c->format != TRIAGE_FORMAT_UNSET && !(cmd->formats & CLI_FORMAT_BIT(c->format)))
    return cli_usage_error(err, cap, "--format: triage %s writes %s, not '%s'", cmd->name, words,
                           WORDS[c->format]);
  if (c->format == TRIAGE_FORMAT_UNSET)
    c->format = (cmd->formats & CLI_FORMAT_BIT(TRIAGE_FORMAT_HTML)) && html_name(c->output)
                    ? TRIAGE_FORMAT_HTML
                    : TRIAGE_FORMAT_MARKDOWN;
  return 0;
}

static int check_operands(const cli_command *cmd, const cli_common *c, char *err, size_t cap) {
  if (c->operands.n < cmd->min_operands)
    return cli_usage_error(err, cap, "%s needs %s (see triage %s --help)", cmd->name, cmd->forms[0],
                           cmd->name);
  if (c->operands.n > cmd->max_operands)
    return cli_usage_error(err, cap, "unexpected argument '%s' (triage %s takes %s)",
                           c->operands.items[cmd->max_operands], cmd->name, cmd->forms[0]);
  return 0;
}

static int finish(const cli_command *cmd, void *args, char *err, size_t cap) {
  cli_common *c = args;
  int rc = workers_from_env(c, err, cap);
  if (!rc) rc = check_format(cmd, c, err, cap);
  if (!rc) rc = check_operands(cmd, c, err, cap);
  if (!rc && cmd->check) rc = cmd->check(args, err, cap);
  return rc;
}

/* A usage error after a command's word alone that is also a file's name: say how to read
 * the file (`triage diff` with a trace named diff here). */
static void usage_failure(const char *err, int argc, char **argv, int word) {
  struct stat st;
  fprintf(stderr, "triage: %s", err);
  if (word >= 0 && argc == 2 && stat(argv[word], &st) == 0 && S_ISREG(st.st_mode))
    fprintf(stderr, " ('%s' is a command; to read the file of that name, write ./%s)", argv[word],
            argv[word]);
  fputc('\n', stderr);
}

/* Reads the command line into args and runs cmd. */
static int dispatch(const cli_command *cmd, void *args, int argc, char **argv, int word) {
  char err[512] = "";
  cli_spec spec = cli_command_spec(cmd);
  cli_invocation inv = {argv[0], argc, argv};
  switch (cli_parse(&spec, argc, argv, 1, word, args, err, sizeof err)) {
    case CLI_PARSE_OK:
      break;
    case CLI_PARSE_HELP:
      return cli_help(cmd, stdout) < 0 ? TRIAGE_EXIT_BAD_INPUT : TRIAGE_EXIT_OK;
    case CLI_PARSE_VERSION:
      printf("triage %s\n", TRIAGE_VERSION);
      return TRIAGE_EXIT_OK;
    default:
      usage_failure(err, argc, argv, word);
      return TRIAGE_EXIT_USAGE;
  }
  if (finish(cmd, args, err, sizeof err)) {
    usage_failure(err, argc, argv, word);
    return TRIAGE_EXIT_USAGE;
  }
  int rc = TRIAGE_EXIT_OK;
  te_rules *rules = cmd->loads_rules ? cli_rules_load(&inv, args, &rc) : NULL;
  if (rc == TRIAGE_EXIT_OK) rc = cmd->run(&inv, rules, args);
  te_rules_destroy(rules);
  return rc;
}

int cli_main(int argc, char **argv) {
  if (argc < 2) { /* no input is a usage error; --help is the way to ask for help */
    fprintf(stderr, "triage: no trace given (usage: triage [OPTIONS] TRACE; see triage --help)\n");
    return TRIAGE_EXIT_USAGE;
  }
  int word = cli_command_word(argc, argv);
  const cli_command *cmd = word < 0 ? &COMMANDS[0] : cli_command_find(argv[word]);
  void *args = calloc(1, cmd->args_size);
  if (!args) {
    fprintf(stderr, "triage: out of memory\n");
    return TRIAGE_EXIT_BAD_INPUT;
  }
  ((cli_common *)args)->format = TRIAGE_FORMAT_UNSET;
  if (cmd->defaults) cmd->defaults(args);
  int rc = dispatch(cmd, args, argc, argv, word);
  cli_common_free(args);
  free(args);
  return rc;
}
