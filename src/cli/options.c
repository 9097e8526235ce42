/*
 * cli/options.c - the analysis command's own options (one table, parsed by cli/args.c)
 * and its mode checks.
 */
#include "cli/options.h"

#include <string.h>

_Static_assert(sizeof(lv_workload) == sizeof(int), "CLI_CHOICE stores an int");

void triage_options_defaults(void *args) {
  triage_options *o = args;
  lv_options_defaults(&o->live);
  o->framework = "auto";
  o->min_share_pct = -1;
  o->rank = -1;
  o->layout = TRIAGE_LAYOUT_UNSET;
}

triage_layout triage_options_layout(const triage_options *o) {
  if (o->layout != TRIAGE_LAYOUT_UNSET) return (triage_layout)o->layout;
  /* the reference compatibility pack comes with the reference's layout */
  return o->common.compat && strcmp(o->common.compat, "reference") == 0 ? TRIAGE_LAYOUT_REFERENCE
                                                                        : TRIAGE_LAYOUT_DEFAULT;
}

#define OFF(m) offsetof(triage_options, m)
#define HEADING(text) CLI_HEADING_ROW(text)
#define STRING(n, m, mv, h) CLI_STRING_ROW(n, OFF(m), mv, h)
#define INT(n, m, h)                                                                             \
  {                                                                                              \
    .name = n, .kind = CLI_INT, .offset = OFF(m), .hi = 1e8, .expect = "a non-negative integer", \
    .metavar = "N", .help = h                                                                    \
  }
#define LONG(n, m, h)                                                                             \
  {                                                                                               \
    .name = n, .kind = CLI_LONG, .offset = OFF(m), .hi = 1e9, .expect = "a non-negative integer", \
    .metavar = "N", .help = h                                                                     \
  }
#define SECONDS(n, m, h)                                                              \
  {                                                                                   \
    .name = n, .kind = CLI_NUMBER, .offset = OFF(m), .hi = 1e9,                       \
    .expect = "a non-negative number of seconds up to 1e9", .metavar = "S", .help = h \
  }
#define FLAG(n, m, v, h) CLI_FLAG_ROW(n, OFF(m), v, h)
#define SET(n, m, v, h) CLI_SET_INT_ROW(n, OFF(m), v, h)

static const cli_option ROWS[] = {
    HEADING("inputs:"),
    STRING("--input", input, "TRACE",
           "the trace: .json, .json.gz, profile directory\nor - (the same as TRACE)"),
    STRING("--mapping-input", mapping_input, "PATH", "graph-off / readable trace (source mapping)"),
    STRING("--formal-input", formal_input, "PATH", "graph-on / real-serving trace (timing)"),
    HEADING("analysis:"),
    STRING("--framework", framework, "NAME",
           "auto (default), sglang, vllm, trtllm,\ntokenspeed or an alias"),
    STRING("--pid-substring", pid_substring, "S",
           "overlap table: only processes whose pid\ncontains S"),
    {.name = "--min-share",
     .kind = CLI_NUMBER,
     .offset = OFF(min_share_pct),
     .hi = 100,
     .expect = "a percentage between 0 and 100",
     .metavar = "PCT",
     .help = "kernel-table render bar (default from rules: 1.0)"},
    LONG("--kernel-table-limit", kernel_table_limit, "at most N kernel rows per stage (0 = all)"),
    LONG("--rank", rank,
         "analyse only rank N of a multi-rank directory\n"
         "(default: the lowest rank's tables, and every\n"
         "rank in the Ranks section)"),
    LONG("--overlap-table-limit", overlap_table_limit,
         "at most N overlap rows per stage (0 = all)"),
    HEADING("output:"),
    {.name = "--layout",
     .kind = CLI_CHOICE,
     .offset = OFF(layout),
     .choices = "default|reference",
     .expect = "default or reference",
     .help = "report layout (default: summary first, per-stage\n"
             "tables, legend; reference: the reference tool's\n"
             "layout byte for byte; --compat reference\n"
             "implies it)"},
    FLAG("--full-names", full_names, 1,
         "full kernel names in the tables (default: short\n"
         "display names; JSON always has full names)"),
    STRING("--kernel-map", kernel_map_path, "FILE", "also write the mapping kernel map as JSON"),
    HEADING("live capture (docs/live.md):"),
    STRING("--url", live.url, "URL", "capture from a running server, then analyse"),
    STRING("--mapping-url", live.mapping_url, "URL", "two-trace capture: the mapping server"),
    STRING("--formal-url", live.formal_url, "URL", "two-trace capture: the formal server"),
    STRING("--output-dir", live.output_dir, "DIR", "where the server writes the trace"),
    STRING("--mapping-output-dir", live.mapping_output_dir, "DIR", "the same, mapping capture"),
    STRING("--formal-output-dir", live.formal_output_dir, "DIR", "the same, formal capture"),
    STRING("--profile-prefix", live.profile_prefix, "P", "trace name prefix (triage-trace)"),
    STRING("--mapping-profile-prefix", live.mapping_profile_prefix, "P",
           "the same, mapping capture"),
    STRING("--formal-profile-prefix", live.formal_profile_prefix, "P", "the same, formal capture"),
    STRING("--api-key", live.api_key, "KEY", "Authorization: Bearer KEY"),
    INT("--num-steps", live.num_steps, "steps profiled (5)"),
    INT("--warmup-steps", live.warmup_steps, "steps before the profile (10)"),
    INT("--probe-requests", live.probe_requests, "requests sent while profiling (1)"),
    STRING("--probe-prompt", live.probe_prompt, "TEXT", "prompt of the legacy workload"),
    INT("--probe-max-new-tokens", live.probe_max_new_tokens,
        "tokens per probe request (max(64, 8 x steps))"),
    SECONDS("--probe-delay", live.probe_delay_s, "wait after starting the profiler (0.5)"),
    {.name = "--profile-workload",
     .kind = CLI_CHOICE,
     .offset = OFF(live.workload),
     .choices = "both|prefill|decode|legacy",
     .expect = "both, prefill, decode or legacy",
     .help = "which stages to profile (both)"},
    INT("--prefill-input-len", live.prefill_input_len, "prefill prompt tokens (4090)"),
    INT("--prefill-output-len", live.prefill_output_len, "prefill output tokens (1)"),
    INT("--decode-input-len", live.decode_input_len, "decode prompt tokens (1)"),
    INT("--decode-output-len", live.decode_output_len, "decode output tokens (2048)"),
    STRING("--start-step", live.start_step, "N", "SGLang: the step to start profiling at"),
    SET("--profile-by-stage", live.profile_by_stage, 1, "one profile per stage"),
    SET("--no-profile-by-stage", live.profile_by_stage, 0, "one profile for all stages"),
    FLAG("--merge-profiles", live.merge_profiles, 1, "ask the server to merge its profiles"),
    FLAG("--no-merge-profiles", live.merge_profiles, 0, "keep the server's profiles apart"),
    SECONDS("--http-timeout", live.http_timeout_s, "per-request cap (default per step)"),
};

const cli_options TRIAGE_OPTIONS = CLI_OPTIONS(ROWS);

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

int triage_options_check(void *args, char *err, size_t cap) {
  triage_options *o = args;
  const cli_list *words = &o->common.operands;
  if (words->n > 1)
    return cli_usage_error(err, cap,
                           "unexpected argument '%s' (one trace per run; use "
                           "--mapping-input/--formal-input for two)",
                           words->items[1]);
  if (words->n && o->input)
    return cli_usage_error(err, cap, "both a positional trace and --input given ('%s')",
                           words->items[0]);
  if (words->n) o->input = words->items[0];
  if (check_modes(o, err, cap)) return CLI_PARSE_USAGE;
  o->live.framework = strcmp(o->framework, "auto") != 0 ? o->framework : NULL;
  return 0;
}
