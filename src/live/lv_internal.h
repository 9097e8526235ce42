/*
 * live/lv_internal.h - pieces of live capture shared between its files and the unit
 * tests: the HTTP client, the request bodies and reply parsing of each framework's
 * contract, and the trace-directory watching.
 *
 * Ownership: every char * returned by a function here is heap memory the caller frees
 * (free()); lv_reply owns its body (lv_reply_free). Pointers passed in are borrowed.
 */
#ifndef TRIAGE_LV_INTERNAL_H
#define TRIAGE_LV_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/limits.h"

/* ---------------------------------------------------------------- frameworks */

/* The four HTTP contracts live capture knows. */
typedef enum lv_fw {
  LV_FW_SGLANG = 0,
  LV_FW_VLLM,
  LV_FW_TRTLLM,
  LV_FW_TOKENSPEED,
  LV_FW_NONE
} lv_fw;

/* Contract for a canonical framework id ("sglang", ...), LV_FW_NONE if unknown. */
lv_fw lv_fw_from_id(const char *id);
const char *lv_fw_id(lv_fw fw);
const char *lv_fw_label(lv_fw fw);
/* How to start that framework's server with the profiler endpoints (one sentence,
 * static storage); dir is the output directory to quote, or NULL. Written into buf. */
const char *lv_enable_hint(lv_fw fw, const char *dir, char *buf, size_t cap);

/* ---------------------------------------------------------------- interruption */

/* Set by the SIGINT handler lv_run installs; everything that waits polls it. */
extern volatile sig_atomic_t lv_interrupted;

/* ---------------------------------------------------------------- HTTP */

typedef enum lv_http_status {
  LV_HTTP_OK = 0,          /* a reply arrived (any HTTP code: check code) */
  LV_HTTP_REFUSED = 1,     /* nothing listens (ECONNREFUSED) */
  LV_HTTP_CONNECT = 2,     /* other connect failure: resolve, route, connect timeout */
  LV_HTTP_TIMEOUT = 3,     /* connected but the reply took longer than the timeout */
  LV_HTTP_TOO_BIG = 4,     /* reply over LV_MAX_REPLY_BYTES */
  LV_HTTP_INTERRUPTED = 5, /* lv_interrupted was set */
  LV_HTTP_ERROR = 6        /* anything else; detail in lv_reply.error */
} lv_http_status;

typedef struct lv_reply {
  lv_http_status status;
  long code;  /* HTTP status code, 0 when no reply */
  char *body; /* NUL-terminated, may be NULL */
  size_t len;
  char error[256]; /* transport-level detail for status != LV_HTTP_OK */
} lv_reply;

typedef struct lv_http {
  const char *api_key;   /* NULL = no Authorization header */
  bool ignore_interrupt; /* for the stop_profile sent after Ctrl-C */
} lv_http;

/* One request. method "GET" or "POST"; json_body NULL = no body (POST sends an empty
 * body with no Content-Type). timeout_s bounds the whole exchange. Returns reply->status. */
lv_http_status lv_http_request(const lv_http *h, const char *method, const char *url,
                               const char *json_body, double timeout_s, lv_reply *reply);
void lv_reply_free(lv_reply *r);

/* ---------------------------------------------------------------- protocol (pure) */

/* base + path with exactly one '/' between them; base's query/fragment are not kept.
 * Returns NULL on allocation failure. */
char *lv_url_join(const char *base, const char *path);

/* Prompt: `words` words, the first "profile_probe_<index>", the rest "profile".
 * NULL when words < 1 or > LV_MAX_PROMPT_WORDS. */
char *lv_make_prompt(long words, long index);
/* Legacy prompt: the user's text, unchanged. */

typedef struct lv_sglang_start {
  const char *output_dir;
  long num_steps; /* sent as a string; <= 0 = not sent */
  bool profile_by_stage;
  bool merge_profiles;
  const char *profile_prefix;
  const char *start_step; /* NULL = not sent */
} lv_sglang_start;

char *lv_body_sglang_start(const lv_sglang_start *s);
char *lv_body_tokenspeed_start(const char *output_dir, const char *profile_id);
char *lv_body_sglang_generate(const char *text, long seed, long max_new_tokens);
char *lv_body_chat(const char *model, const char *text, long max_tokens);
char *lv_body_completion(const char *model, const char *text, long max_tokens);

/* First model id of a /v1/models reply ({"data":[{"id":...}]}), or NULL. */
char *lv_parse_model_id(const char *body, size_t len);
/* True when body is a JSON object whose member `key` is an array. */
bool lv_json_has_list(const char *body, size_t len, const char *key);
/* The server's explanation of an error reply, one line, at most LV_ERROR_SNIPPET_BYTES
 * bytes: a JSON "message"/"detail"/"error" string (also nested error.message) when the
 * body has one, else the body's first bytes with control characters turned to spaces.
 * Writes "" for an empty body. */
void lv_error_text(const char *body, size_t len, char *out, size_t cap);

/* ---------------------------------------------------------------- trace files */

/* True for names triage reads as traces (*.json, *.json.gz) minus the side files
 * (server_args.json, metadata.json, config.json). */
bool lv_is_trace_name(const char *name);

/* A set of (path, mtime, size) of the trace files under one directory. */
typedef struct lv_file {
  char *path;
  int64_t mtime_ns;
  int64_t size;
} lv_file;
typedef struct lv_snapshot {
  lv_file *files;
  size_t n, cap;
} lv_snapshot;

/* Lists trace files under dir down to max_depth (1 = direct children). A missing
 * directory gives an empty snapshot. Returns 0, or -1 on allocation failure. */
int lv_snapshot_take(const char *dir, int max_depth, lv_snapshot *out);
void lv_snapshot_free(lv_snapshot *s);
/* Files of now that are absent from before or changed (mtime or size) since. The
 * result's paths are copies. */
int lv_snapshot_new(const lv_snapshot *before, const lv_snapshot *now, lv_snapshot *out);

/* Sleeps ms milliseconds in short slices; returns false early when interrupted. */
bool lv_sleep_ms(long ms);

/* mkdir -p. Returns 0 or -1 (errno set). */
int lv_mkdirs(const char *path);

#endif
