/*
 * live/live.h - live capture: drive a running inference server's torch profiler over
 * HTTP and return the local directory that holds the traces it wrote.
 *
 * One call to lv_run performs every capture the options ask for (--url, or both
 * --mapping-url and --formal-url): framework detection, warm-up requests, start_profile,
 * probe requests, stop_profile, waiting for the trace files, and (for frameworks that
 * write into a fixed directory) moving the new files into <output-dir>/<stage>/.
 * The returned paths are then analysed exactly like --input / --mapping-input /
 * --formal-input; server args fetched from the server are saved as server_args.json in
 * the returned directory so discovery (which looks in the trace dir and its parent)
 * finds them.
 *
 * The only network traffic is to the URLs the user gave; every request has a timeout
 * and every wait is bounded (limits in util/limits.h).
 *
 * Ownership: lv_result owns every string in it (heap, NUL-terminated); lv_result_free
 * releases them and zeroes the struct. opt and rules are borrowed for the call only.
 */
#ifndef TRIAGE_LIVE_H
#define TRIAGE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "triage/rules.h"

/* What lv_run reports; the CLI turns it into an exit status (cli/exit.h). */
typedef enum lv_status {
  LV_OK = 0,
  LV_FAIL = 1,       /* a one-line message is in err */
  LV_USAGE = 2,      /* an option value is unusable (checked before any request) */
  LV_INTERRUPTED = 3 /* SIGINT during capture; the profiler was stopped first */
} lv_status;

/* Size of err that holds every message lv_run writes (hints quote paths and URLs). */
#define LV_ERR_CAP 1024

/* Which workload stages one capture profiles. */
typedef enum lv_workload {
  LV_WORKLOAD_BOTH = 0, /* a prefill capture, then a decode capture */
  LV_WORKLOAD_PREFILL,
  LV_WORKLOAD_DECODE,
  LV_WORKLOAD_LEGACY /* one capture of free-form prompts (--probe-prompt) */
} lv_workload;

/* Everything a capture can be told (the --url family of flags). Strings are borrowed. */
typedef struct lv_options {
  const char *url;         /* single-trace capture */
  const char *mapping_url; /* two-trace capture (both) */
  const char *formal_url;
  const char *output_dir;
  const char *mapping_output_dir;
  const char *formal_output_dir;
  const char *profile_prefix;
  const char *mapping_profile_prefix;
  const char *formal_profile_prefix;
  const char *api_key;   /* NULL = no Authorization header */
  const char *framework; /* a --framework spelling; NULL = detect */
  lv_workload workload;
  const char *start_step;   /* NULL = not sent */
  const char *probe_prompt; /* legacy workload prompt */
  int num_steps;
  int warmup_steps;
  int probe_requests;
  int probe_max_new_tokens; /* 0 = max(64, 8 * num_steps) */
  double probe_delay_s;
  int prefill_input_len, prefill_output_len;
  int decode_input_len, decode_output_len;
  int profile_by_stage; /* -1 = framework default, 0 off, 1 on */
  bool merge_profiles;
  double http_timeout_s; /* per-request cap; 0 = per-step defaults */
  /* least delay before probing a non-SGLang server (rule setting
   * live.remote_probe_delay_min_s; the environment's TRIAGE_LIVE_MIN_PROBE_DELAY_S wins) */
  double remote_probe_delay_min_s;
} lv_options;

/* The defaults of the reference's capture flags (num_steps 5, warm-up 10, ...). */
void lv_options_defaults(lv_options *o);

typedef struct lv_result {
  char *input;            /* single-trace capture directory, or NULL */
  char *mapping_input;    /* two-trace: mapping capture directory, or NULL */
  char *formal_input;     /* two-trace: formal capture directory, or NULL */
  char *server_args_path; /* server_args.json written for the (formal or single) capture,
                             or NULL when the server did not provide it */
  char *framework_id;     /* canonical framework id used ("sglang", "vllm", ...) */
} lv_result;

/* True when opt asks for live capture (--url, --mapping-url or --formal-url). */
bool lv_wanted(const lv_options *opt);

/* Runs the capture(s). progress (may be NULL) gets one "triage: live: ..." line per
 * phase. Returns LV_OK and fills *out, or LV_FAIL / LV_USAGE / LV_INTERRUPTED with a
 * one-line message (no trailing newline, no "triage: " prefix) in err. On failure *out
 * holds nothing. */
lv_status lv_run(const lv_options *opt, const te_rules *rules, FILE *progress, lv_result *out,
                 char *err, size_t err_cap);

void lv_result_free(lv_result *r);

#endif
