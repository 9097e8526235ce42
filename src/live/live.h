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
 * and every wait is bounded (limits in triage/limits.h).
 *
 * Ownership: lv_result owns every string in it (heap, NUL-terminated); lv_result_free
 * releases them and zeroes the struct. opt and rules are borrowed for the call only.
 */
#ifndef TRIAGE_LIVE_H
#define TRIAGE_LIVE_H

#include <stddef.h>
#include <stdio.h>

#include "cli/options.h"
#include "triage/rules.h"

/* Exit status main.c should use for each lv_run result. */
#define LV_OK 0
#define LV_FAIL 1          /* a one-line message is in err */
#define LV_USAGE 2         /* an option value is unusable (checked before any request) */
#define LV_INTERRUPTED 130 /* SIGINT during capture; the profiler was stopped first */

/* Size of err that holds every message lv_run writes (hints quote paths and URLs). */
#define LV_ERR_CAP 1024

typedef struct lv_result {
  char *input;            /* single-trace capture directory, or NULL */
  char *mapping_input;    /* two-trace: mapping capture directory, or NULL */
  char *formal_input;     /* two-trace: formal capture directory, or NULL */
  char *server_args_path; /* server_args.json written for the (formal or single) capture,
                             or NULL when the server did not provide it */
  char *framework_id;     /* canonical framework id used ("sglang", "vllm", ...) */
} lv_result;

/* True when opt asks for live capture (--url, --mapping-url or --formal-url). */
int lv_wanted(const triage_options *opt);

/* Runs the capture(s). progress (may be NULL) gets one "triage: live: ..." line per
 * phase. Returns LV_OK and fills *out, or LV_FAIL / LV_USAGE / LV_INTERRUPTED (use it as
 * the exit status) with a one-line message (no trailing newline, no "triage: " prefix)
 * in err. On failure *out holds nothing. */
int lv_run(const triage_options *opt, const te_rules *rules, FILE *progress, lv_result *out,
           char *err, size_t err_cap);

void lv_result_free(lv_result *r);

#endif
