/*
 * cli/options.c - the main command's options (one table, parsed by cli/args.c), the mode
 * checks, and the usage text.
 */
#include "cli/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "triage/limits.h"

_Static_assert(sizeof(lv_workload) == sizeof(int), "CLI_CHOICE stores an int");

void triage_options_defaults(triage_options *o) {
  memset(o, 0, sizeof *o);
  lv_options_defaults(&o->live);
  o->framework = "auto";
  o->min_share_pct = -1;
  o->rank = -1;
  o->format = TRIAGE_FORMAT_UNSET;
  o->layout = TRIAGE_LAYOUT_UNSET;
}

void triage_options_free(triage_options *o) {
  free(o->rules_paths);
  o->rules_paths = NULL;
  o->n_rules_paths = 0;
}

triage_layout triage_options_layout(const triage_options *o) {
  if (o->layout != TRIAGE_LAYOUT_UNSET) return (triage_layout)o->layout;
  /* the reference compatibility pack comes with the reference's layout */
  return o->compat && strcmp(o->compat, "reference") == 0 ? TRIAGE_LAYOUT_REFERENCE
                                                          : TRIAGE_LAYOUT_DEFAULT;
}

void triage_usage(FILE *out) {
  fputs(
      "usage: triage [triage] (TRACE | --input TRACE | --url URL\n"
      "              | --mapping-input M|--mapping-url U --formal-input F|--formal-url U)\n"
      "              [options]\n",
      out);
  for (size_t i = 0; i < cli_command_count(); i++)
    fprintf(out, "       triage %s\n", cli_command_at(i)->usage);
  fputs(
      "\n"
      "Turns PyTorch-profiler (Kineto) traces of LLM inference servers into one triage\n"
      "report: kernel table, overlap-opportunity table and fuse-pattern table.\n"
      "\n"
      "The default report starts with what to do:\n"
      "  $ triage trace.json.gz\n"
      "  # Triage report            (framework, model, TP, GPU: each with its source)\n"
      "  ## What to try first       1. **Overlap it with other streams**: `kernel` at\n"
      "                                `path.py:120 forward`. **1.20 ms** at stake ...\n"
      "  ## Limits of this trace    (no Python stacks, framework not detected, ...)\n"
      "  ## Stage: decode           time by category; ### Kernels / Overlap / Fusion\n"
      "  ## Legend\n"
      "\n"
      "inputs:\n"
      "  TRACE, --input TRACE        trace file (.json, .json.gz), profile directory or -\n"
      "  --mapping-input PATH        graph-off / readable trace (source mapping)\n"
      "  --formal-input PATH         graph-on / real-serving trace (timing)\n"
      "analysis:\n"
      "  --framework NAME            auto (default), sglang, vllm, trtllm, tokenspeed, ...\n"
      "  --pid-substring S           overlap table: only processes whose pid contains S\n"
      "  --min-share PCT             kernel-table render bar (default from rules: 1.0)\n"
      "  --kernel-table-limit N      at most N kernel rows per stage (0 = all)\n"
      "  --rank N                    analyse only rank N of a multi-rank directory (default:\n"
      "                              the tables are the lowest rank's, every rank is listed)\n"
      "  --overlap-table-limit N     at most N overlap rows per stage (0 = all)\n"
      "output:\n"
      "  --format markdown|json|html report format (default markdown; html for -o *.html)\n"
      "  --layout default|reference  report layout (default: summary first, per-stage\n"
      "                              tables, legend; reference: the reference tool's\n"
      "                              layout byte for byte; --compat reference implies it)\n"
      "  --full-names                full kernel names in the tables (default: short\n"
      "                              display names; JSON always has full names)\n"
      "  -o, --output FILE           write the report to FILE instead of stdout\n"
      "  --kernel-map FILE           also write the mapping kernel map as JSON\n"
      "  --quiet                     no progress output, no warnings\n"
      "rules:\n"
      "  --rules FILE|DIR            extra rule pack(s), after the defaults (repeatable)\n"
      "  --no-default-rules          do not load the default packs\n"
      "  --compat NAME               load rules/compat/NAME.yaml after the defaults (before\n"
      "                              --rules): reference = the reference tool's judgements\n"
      "live capture:\n"
      "  --url URL | --mapping-url URL --formal-url URL\n"
      "  --output-dir DIR  --mapping-output-dir DIR  --formal-output-dir DIR\n"
      "  --profile-prefix P (triage-trace)  --mapping-profile-prefix P  --formal-profile-prefix P\n"
      "  --api-key KEY  --num-steps N (5)  --warmup-steps N (10)  --probe-requests N (1)\n"
      "  --probe-prompt TEXT  --probe-max-new-tokens N  --probe-delay S (0.5)\n"
      "  --profile-workload both|prefill|decode|legacy (both)\n"
      "  --prefill-input-len N (4090)  --prefill-output-len N (1)\n"
      "  --decode-input-len N (1)  --decode-output-len N (2048)\n"
      "  --start-step N  --[no-]profile-by-stage  --[no-]merge-profiles  --http-timeout S\n"
      "other:\n"
      "  -h, --help                  this text\n"
      "  --version                   print the version\n"
      "\n"
      "exit status: 0 report printed, 1 bad input, 2 usage error\n",
      out);
}

#define OFF(m) offsetof(triage_options, m)
#define STRING(name, m) \
  { name, NULL, CLI_STRING, OFF(m), 0, 0, 0, 0, NULL, NULL, NULL }
#define INT(name, m) \
  { name, NULL, CLI_INT, OFF(m), 0, 0, 0, 1e8, NULL, "a non-negative integer", NULL }
#define LONG(name, m) \
  { name, NULL, CLI_LONG, OFF(m), 0, 0, 0, 1e9, NULL, "a non-negative integer", NULL }
#define NUMBER(name, m, hi, expect) \
  { name, NULL, CLI_NUMBER, OFF(m), 0, 0, 0, hi, NULL, expect, NULL }
#define FLAG(name, m, v) \
  { name, NULL, CLI_FLAG, OFF(m), 0, v, 0, 0, NULL, NULL, NULL }
#define SET(name, m, v) \
  { name, NULL, CLI_SET_INT, OFF(m), 0, v, 0, 0, NULL, NULL, NULL }
#define CHOICE(name, m, choices, expect) \
  { name, NULL, CLI_CHOICE, OFF(m), 0, 0, 0, 0, choices, expect, NULL }

static const cli_option OPTIONS[] = {
    STRING("--input", input),
    STRING("--mapping-input", mapping_input),
    STRING("--formal-input", formal_input),
    STRING("--url", live.url),
    STRING("--mapping-url", live.mapping_url),
    STRING("--formal-url", live.formal_url),
    STRING("--output-dir", live.output_dir),
    STRING("--mapping-output-dir", live.mapping_output_dir),
    STRING("--formal-output-dir", live.formal_output_dir),
    STRING("--profile-prefix", live.profile_prefix),
    STRING("--mapping-profile-prefix", live.mapping_profile_prefix),
    STRING("--formal-profile-prefix", live.formal_profile_prefix),
    STRING("--api-key", live.api_key),
    CHOICE("--profile-workload", live.workload, "both|prefill|decode|legacy",
           "both, prefill, decode or legacy"),
    STRING("--start-step", live.start_step),
    STRING("--probe-prompt", live.probe_prompt),
    INT("--num-steps", live.num_steps),
    INT("--warmup-steps", live.warmup_steps),
    INT("--probe-requests", live.probe_requests),
    INT("--probe-max-new-tokens", live.probe_max_new_tokens),
    NUMBER("--probe-delay", live.probe_delay_s, 1e9, "a non-negative number of seconds up to 1e9"),
    INT("--prefill-input-len", live.prefill_input_len),
    INT("--prefill-output-len", live.prefill_output_len),
    INT("--decode-input-len", live.decode_input_len),
    INT("--decode-output-len", live.decode_output_len),
    SET("--profile-by-stage", live.profile_by_stage, 1),
    SET("--no-profile-by-stage", live.profile_by_stage, 0),
    FLAG("--merge-profiles", live.merge_profiles, 1),
    FLAG("--no-merge-profiles", live.merge_profiles, 0),
    NUMBER("--http-timeout", live.http_timeout_s, 1e9,
           "a non-negative number of seconds up to 1e9"),
    STRING("--framework", framework),
    STRING("--pid-substring", pid_substring),
    NUMBER("--min-share", min_share_pct, 100, "a percentage between 0 and 100"),
    LONG("--kernel-table-limit", kernel_table_limit),
    LONG("--rank", rank),
    LONG("--overlap-table-limit", overlap_table_limit),
    CHOICE("--format", format, "markdown,md|json|html", "markdown, json or html"),
    CHOICE("--layout", layout, "default|reference", "default or reference"),
    {"--output", "-o", CLI_STRING, OFF(output_path), 0, 0, 0, 0, NULL, NULL, NULL},
    STRING("--kernel-map", kernel_map_path),
    FLAG("--quiet", quiet, 1),
    FLAG("--full-names", full_names, 1),
    {"--rules", NULL, CLI_LIST, OFF(rules_paths), OFF(n_rules_paths), 0, 0, 0, NULL, NULL, NULL},
    FLAG("--no-default-rules", no_default_rules, 1),
    STRING("--compat", compat),
    {"--help", "-h", CLI_HELP, 0, 0, 0, 0, 0, NULL, NULL, NULL},
    {"--version", NULL, CLI_VERSION, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

/* A word is the trace, or, when no trace has been named yet and no "--" came before it,
 * a sub-command's name: option values never reach here, so `--output rules TRACE`
 * writes to a file named "rules". */
static int main_word(void *opts, const char *word, bool after_dashes, char *err, size_t cap) {
  triage_options *o = opts;
  if (!o->trace && !o->input && !after_dashes && cli_command_find(word)) return CLI_PARSE_STOP;
  if (o->trace)
    return cli_usage_error(err, cap,
                           "unexpected argument '%s' (one trace per run; use "
                           "--mapping-input/--formal-input for two)",
                           word);
  o->trace = word;
  return 0;
}

static const cli_spec MAIN_SPEC = {OPTIONS, sizeof OPTIONS / sizeof OPTIONS[0],
                                   " (see triage --help)", main_word};

/* Single-trace or two-trace mode, exactly one source per side. */
static int check_modes(const triage_options *o, char *err, size_t cap) {
  const lv_options *lv = &o->live;
  bool single = o->input || lv->url;
  bool two = o->mapping_input || lv->mapping_url || o->formal_input || lv->formal_url;
  if (single && two)
    return cli_usage_error(err, cap,
                           "use either single-trace mode (--input/--url) or two-trace "
                           "mode (--mapping-*/--formal-*), not both");
  if (single && o->input && lv->url)
    return cli_usage_error(err, cap, "provide exactly one of --input or --url");
  if (two && !!o->mapping_input + !!lv->mapping_url != 1)
    return cli_usage_error(err, cap, "provide exactly one of --mapping-input or --mapping-url");
  if (two && !!o->formal_input + !!lv->formal_url != 1)
    return cli_usage_error(err, cap, "provide exactly one of --formal-input or --formal-url");
  if (!single && !two)
    return cli_usage_error(err, cap,
                           "no trace given (TRACE, --input, --url or "
                           "--mapping-*/--formal-*)");
  return 0;
}

/* No --format: the output file's extension says html; anything else is Markdown. */
static int format_for_output(const char *path) {
  size_t n = path ? strlen(path) : 0;
  bool html = (n >= 5 && strcasecmp(path + n - 5, ".html") == 0) ||
              (n >= 4 && strcasecmp(path + n - 4, ".htm") == 0);
  return html ? TRIAGE_FORMAT_HTML : TRIAGE_FORMAT_MARKDOWN;
}

/* TRIAGE_WORKERS: the rank readers' thread count, for every command that reads ranks.
 * Unset or empty: the online CPUs (0). */
static int workers_from_env(triage_options *o, char *err, size_t cap) {
  const char *v = getenv("TRIAGE_WORKERS");
  if (!v || !*v) return 0;
  char *end = NULL;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > (long)AN_MAX_WORKERS)
    return cli_usage_error(err, cap, "TRIAGE_WORKERS: '%s' is not a thread count from 1 to %u", v,
                           AN_MAX_WORKERS);
  o->workers = (unsigned)n;
  return 0;
}

int triage_options_parse(int argc, char **argv, int first, triage_options *o, char *err,
                         size_t cap) {
  int stop = 0;
  cli_parse_result rc = cli_parse(&MAIN_SPEC, argc, argv, first, o, &stop, err, cap);
  if ((rc == CLI_PARSE_OK || rc == CLI_PARSE_STOP) && workers_from_env(o, err, cap))
    return CLI_PARSE_USAGE;
  if (rc == CLI_PARSE_STOP) {
    o->command = argv[stop];
    o->command_argc = argc - stop;
    o->command_argv = argv + stop;
    return rc;
  }
  if (rc != CLI_PARSE_OK) return rc;
  if (o->trace && o->input)
    return cli_usage_error(err, cap, "both a positional trace and --input given ('%s')", o->trace);
  if (o->trace) o->input = o->trace;
  if (check_modes(o, err, cap)) return CLI_PARSE_USAGE;
  if (o->format == TRIAGE_FORMAT_UNSET) o->format = format_for_output(o->output_path);
  o->live.framework = strcmp(o->framework, "auto") != 0 ? o->framework : NULL;
  return CLI_PARSE_OK;
}
