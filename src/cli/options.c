/*
 * cli/options.c - command-line parsing into triage_options.
 */
#include "cli/options.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void triage_options_defaults(triage_options *o) {
  memset(o, 0, sizeof *o);
  lv_options_defaults(&o->live);
  o->framework = "auto";
  o->min_share_pct = -1;
  o->format = TRIAGE_FORMAT_MARKDOWN;
}

void triage_options_free(triage_options *o) {
  free(o->rules_paths);
  o->rules_paths = NULL;
  o->n_rules_paths = 0;
}

void triage_usage(FILE *out) {
  fputs(
      "usage: triage [triage] (TRACE | --input TRACE | --url URL\n"
      "              | --mapping-input M|--mapping-url U --formal-input F|--formal-url U)\n"
      "              [options]\n"
      "       triage rules check|list|explain|test ...\n"
      "\n"
      "Turns PyTorch-profiler (Kineto) traces of LLM inference servers into one triage\n"
      "report: kernel table, overlap-opportunity table and fuse-pattern table.\n"
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
      "  --overlap-table-limit N     at most N overlap rows per stage (0 = all)\n"
      "output:\n"
      "  --format markdown|json      report format (default markdown)\n"
      "  --output FILE               write the report to FILE instead of stdout\n"
      "  --kernel-map FILE           also write the mapping kernel map as JSON\n"
      "  --quiet                     no progress output\n"
      "rules:\n"
      "  --rules FILE|DIR            extra rule pack(s), after the defaults (repeatable)\n"
      "  --no-default-rules          do not load the default packs\n"
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

typedef enum kind { K_STR, K_INT, K_LONG, K_DOUBLE, K_FLAG, K_TRI, K_SPECIAL } kind;

typedef struct opt_def {
  const char *name;
  kind k;
  size_t off;
  int flag_value; /* K_FLAG / K_TRI: value stored */
} opt_def;

#define OFF(m) offsetof(triage_options, m)

static const opt_def OPTS[] = {
    {"--input", K_STR, OFF(input), 0},
    {"--mapping-input", K_STR, OFF(mapping_input), 0},
    {"--formal-input", K_STR, OFF(formal_input), 0},
    {"--url", K_STR, OFF(live.url), 0},
    {"--mapping-url", K_STR, OFF(live.mapping_url), 0},
    {"--formal-url", K_STR, OFF(live.formal_url), 0},
    {"--output-dir", K_STR, OFF(live.output_dir), 0},
    {"--mapping-output-dir", K_STR, OFF(live.mapping_output_dir), 0},
    {"--formal-output-dir", K_STR, OFF(live.formal_output_dir), 0},
    {"--profile-prefix", K_STR, OFF(live.profile_prefix), 0},
    {"--mapping-profile-prefix", K_STR, OFF(live.mapping_profile_prefix), 0},
    {"--formal-profile-prefix", K_STR, OFF(live.formal_profile_prefix), 0},
    {"--api-key", K_STR, OFF(live.api_key), 0},
    {"--profile-workload", K_SPECIAL, OFF(live.workload), 0},
    {"--start-step", K_STR, OFF(live.start_step), 0},
    {"--probe-prompt", K_STR, OFF(live.probe_prompt), 0},
    {"--num-steps", K_INT, OFF(live.num_steps), 0},
    {"--warmup-steps", K_INT, OFF(live.warmup_steps), 0},
    {"--probe-requests", K_INT, OFF(live.probe_requests), 0},
    {"--probe-max-new-tokens", K_INT, OFF(live.probe_max_new_tokens), 0},
    {"--probe-delay", K_DOUBLE, OFF(live.probe_delay_s), 0},
    {"--prefill-input-len", K_INT, OFF(live.prefill_input_len), 0},
    {"--prefill-output-len", K_INT, OFF(live.prefill_output_len), 0},
    {"--decode-input-len", K_INT, OFF(live.decode_input_len), 0},
    {"--decode-output-len", K_INT, OFF(live.decode_output_len), 0},
    {"--profile-by-stage", K_TRI, OFF(live.profile_by_stage), 1},
    {"--no-profile-by-stage", K_TRI, OFF(live.profile_by_stage), 0},
    {"--merge-profiles", K_FLAG, OFF(live.merge_profiles), 1},
    {"--no-merge-profiles", K_FLAG, OFF(live.merge_profiles), 0},
    {"--http-timeout", K_DOUBLE, OFF(live.http_timeout_s), 0},
    {"--framework", K_STR, OFF(framework), 0},
    {"--pid-substring", K_STR, OFF(pid_substring), 0},
    {"--min-share", K_DOUBLE, OFF(min_share_pct), 0},
    {"--kernel-table-limit", K_LONG, OFF(kernel_table_limit), 0},
    {"--overlap-table-limit", K_LONG, OFF(overlap_table_limit), 0},
    {"--format", K_SPECIAL, OFF(format), 0},
    {"--output", K_STR, OFF(output_path), 0},
    {"--kernel-map", K_STR, OFF(kernel_map_path), 0},
    {"--quiet", K_FLAG, OFF(quiet), 1},
    {"--rules", K_SPECIAL, OFF(rules_paths), 0},
    {"--no-default-rules", K_FLAG, OFF(no_default_rules), 1},
};

static bool parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static bool parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static int usage_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int usage_err(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return TRIAGE_PARSE_USAGE;
}

static int set_value(triage_options *o, const opt_def *d, const char *v, char *err, size_t cap) {
  char *base = (char *)o;
  long l;
  double x;
  switch (d->k) {
  case K_STR:
    if (!*v) return usage_err(err, cap, "%s: empty value", d->name);
    *(const char **)(base + d->off) = v;
    return 0;
  case K_INT:
    if (!parse_long(v, 0, 100000000L, &l))
      return usage_err(err, cap, "%s: expected a non-negative integer", d->name);
    *(int *)(base + d->off) = (int)l;
    return 0;
  case K_LONG:
    if (!parse_long(v, 0, 1000000000L, &l))
      return usage_err(err, cap, "%s: expected a non-negative integer", d->name);
    *(long *)(base + d->off) = l;
    return 0;
  case K_DOUBLE:
    if (!parse_double(v, 0, 1e9, &x)) return usage_err(err, cap, "%s: expected a non-negative number", d->name);
    if (strcmp(d->name, "--min-share") == 0 && x > 100)
      return usage_err(err, cap, "%s: expected a percentage between 0 and 100", d->name);
    *(double *)(base + d->off) = x;
    return 0;
  case K_SPECIAL:
    if (strcmp(d->name, "--format") == 0) {
      if (strcmp(v, "markdown") == 0 || strcmp(v, "md") == 0) o->format = TRIAGE_FORMAT_MARKDOWN;
      else if (strcmp(v, "json") == 0) o->format = TRIAGE_FORMAT_JSON;
      else return usage_err(err, cap, "--format: expected markdown or json, got '%s'", v);
      return 0;
    }
    if (strcmp(d->name, "--profile-workload") == 0) {
      static const char *const names[] = {"both", "prefill", "decode", "legacy"};
      for (int w = 0; w < 4; w++)
        if (strcmp(v, names[w]) == 0) {
          o->live.workload = (lv_workload)w;
          return 0;
        }
      return usage_err(err, cap, "--profile-workload: expected both, prefill, decode or legacy, got '%s'", v);
    }
    if (strcmp(d->name, "--rules") == 0) {
      if (!*v) return usage_err(err, cap, "%s: empty value", d->name);
      const char **p = realloc(o->rules_paths, (o->n_rules_paths + 1) * sizeof *p);
      if (!p) return usage_err(err, cap, "%s: out of memory", d->name);
      o->rules_paths = p;
      p[o->n_rules_paths++] = v;
      return 0;
    }
    return usage_err(err, cap, "%s: unhandled option", d->name);
  case K_FLAG:
  case K_TRI:
    break;
  }
  return 0;
}

int triage_options_parse(int argc, char **argv, int first, triage_options *o, char *err,
                         size_t cap) {
  const char *positional = NULL;
  bool end_of_opts = false;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (!end_of_opts && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) return TRIAGE_PARSE_HELP;
    if (!end_of_opts && strcmp(a, "--version") == 0) return TRIAGE_PARSE_VERSION;
    if (!end_of_opts && strcmp(a, "--") == 0) {
      end_of_opts = true;
      continue;
    }
    if (end_of_opts || a[0] != '-' || strcmp(a, "-") == 0) {
      if (positional) return usage_err(err, cap, "unexpected argument '%s' (one trace per run; use --mapping-input/--formal-input for two)", a);
      positional = a;
      continue;
    }
    const char *eq = strchr(a, '=');
    size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
    const opt_def *d = NULL;
    for (size_t k = 0; k < sizeof OPTS / sizeof OPTS[0]; k++)
      if (strlen(OPTS[k].name) == nlen && strncmp(OPTS[k].name, a, nlen) == 0) {
        d = &OPTS[k];
        break;
      }
    if (!d) return usage_err(err, cap, "unknown option '%s' (see triage --help)", a);
    if (d->k == K_FLAG || d->k == K_TRI) {
      if (eq) return usage_err(err, cap, "%s takes no value", d->name);
      if (d->k == K_FLAG) *(bool *)((char *)o + d->off) = d->flag_value != 0;
      else *(int *)((char *)o + d->off) = d->flag_value;
      continue;
    }
    const char *v;
    if (eq) v = eq + 1;
    else {
      if (i + 1 >= argc) return usage_err(err, cap, "%s needs a value", d->name);
      v = argv[++i];
    }
    int rc = set_value(o, d, v, err, cap);
    if (rc) return rc;
  }
  if (positional) {
    if (o->input) return usage_err(err, cap, "both a positional trace and --input given ('%s')", positional);
    o->input = positional;
  }
  const lv_options *lv = &o->live;
  bool single = o->input || lv->url;
  bool two = o->mapping_input || lv->mapping_url || o->formal_input || lv->formal_url;
  if (single && two)
    return usage_err(err, cap, "%s", "use either single-trace mode (--input/--url) or two-trace mode (--mapping-*/--formal-*), not both");
  if (single && o->input && lv->url)
    return usage_err(err, cap, "%s", "provide exactly one of --input or --url");
  if (two) {
    if (!!o->mapping_input + !!lv->mapping_url != 1)
      return usage_err(err, cap, "%s", "provide exactly one of --mapping-input or --mapping-url");
    if (!!o->formal_input + !!lv->formal_url != 1)
      return usage_err(err, cap, "%s", "provide exactly one of --formal-input or --formal-url");
  }
  if (!single && !two) return usage_err(err, cap, "%s", "no trace given (TRACE, --input, --url or --mapping-*/--formal-*)");
  o->live.framework = strcmp(o->framework, "auto") != 0 ? o->framework : NULL;
  return TRIAGE_PARSE_OK;
}
