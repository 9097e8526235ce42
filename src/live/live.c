/*
 * live/live.c - live capture: detect the framework behind a URL, run its profiler over
 * HTTP for each workload stage, and leave the traces where discovery finds them.
 *
 * Layout of a capture root R (the directory returned as the input):
 *   R/server_args.json            what the server said about itself (discovery reads it
 *                                 from the trace dir's parent; reference defect 12)
 *   R/prefill/ R/decode/          one directory per workload stage (stage from the path)
 *   R/legacy/                     --profile-workload legacy (returned instead of R, so an
 *                                 older staged run in R cannot mix into it)
 * SGLang and TokenSpeed are told to write into the stage directory; vLLM and TRT-LLM
 * write into their own fixed directory (= --output-dir) and the new files are moved into
 * the stage directory afterwards.
 *
 * Once start_profile succeeded, stop_profile is always sent: on success, on any failure
 * and on Ctrl-C, so triage never leaves a server profiling (and filling its disk).
 */
#include "live/live.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "live/curl_lib.h"
#include "live/lv_internal.h"

/* Per-step default (seconds) of a capture: the packs' live.timeout.NAME_s (the reference
 * flow's); --http-timeout replaces them all. Without packs only LV_MAX_STEP_TIMEOUT_S
 * bounds a step. */
#define LV_T(c, name) \
  ((c)->rules ? te_rules_settings((c)->rules)->live_timeout_##name##_s : LV_MAX_STEP_TIMEOUT_S)

typedef struct lv_ctx {
  const lv_options *opt;
  const te_rules *rules;
  FILE *progress;
  lv_http http;
  char *err;
  size_t err_cap;
} lv_ctx;

/* One URL to capture (single, mapping or formal). */
typedef struct lv_target {
  const char *role; /* "" or "mapping " / "formal " for messages */
  const char *url;
  const char *output_dir;
  const char *prefix;
  /* results, owned */
  lv_fw fw;
  char *root;       /* capture root: stage dirs and server_args.json go here */
  char *server_dir; /* the directory the server writes into (vLLM, TRT-LLM) */
  char *input;
  char *server_args;
  char *model;
  bool use_completions; /* chat failed once: the server only speaks /v1/completions */
} lv_target;

static void lv_target_clear(lv_target *t) {
  free(t->root);
  free(t->server_dir);
  free(t->input);
  free(t->server_args);
  free(t->model);
  t->root = t->server_dir = t->input = t->server_args = t->model = NULL;
}

#if defined(__GNUC__)
#define LV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LV_PRINTF(a, b)
#endif

static void lv_say(const lv_ctx *c, const lv_target *t, const char *fmt, ...) LV_PRINTF(3, 4);
static void lv_say(const lv_ctx *c, const lv_target *t, const char *fmt, ...) {
  if (!c->progress) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(c->progress, "triage: live: %s", t ? t->role : "");
  vfprintf(c->progress, fmt, ap);
  fputc('\n', c->progress);
  fflush(c->progress);
  va_end(ap);
}

static int lv_fail(const lv_ctx *c, const char *fmt, ...) LV_PRINTF(2, 3);
static int lv_fail(const lv_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->err_cap, fmt, ap);
  va_end(ap);
  return lv_interrupted ? LV_INTERRUPTED : LV_FAIL;
}

static double lv_step_timeout(const lv_ctx *c, double dflt) {
  double t = c->opt->http_timeout_s > 0 ? c->opt->http_timeout_s : dflt;
  return t > LV_MAX_STEP_TIMEOUT_S ? LV_MAX_STEP_TIMEOUT_S : t;
}

/* A positive number from the environment, or dflt. Tests use these to run fast. */
static double lv_env_seconds(const char *name, double dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end = NULL;
  double d = strtod(v, &end);
  if (end == v || *end || d < 0 || d > LV_MAX_STEP_TIMEOUT_S) return dflt;
  return d;
}

static double lv_trace_wait(const lv_ctx *c, lv_fw fw) {
  double d = lv_step_timeout(c, fw == LV_FW_SGLANG ? LV_T(c, wait_sglang) : LV_T(c, wait_remote));
  return lv_env_seconds("TRIAGE_LIVE_TRACE_WAIT_S", d);
}

/* Turns a failed exchange into the one-line message. Returns LV_OK when the reply is a
 * 2xx. */
static int lv_check(const lv_ctx *c, const lv_target *t, const char *method, const char *path,
                    const lv_reply *r) {
  switch (r->status) {
    case LV_HTTP_OK:
      break;
    case LV_HTTP_REFUSED:
      return lv_fail(c, "cannot connect to %s (connection refused)", t->url);
    case LV_HTTP_CONNECT:
      return lv_fail(c, "cannot connect to %s (%s)", t->url, r->error);
    case LV_HTTP_INTERRUPTED:
      return lv_fail(c, "interrupted during %s %s", method, path);
    default:
      return lv_fail(c, "%s %s at %s: %s", method, path, t->url, r->error);
  }
  if (r->code >= 200 && r->code < 300) return LV_OK;
  char text[LV_ERROR_SNIPPET_BYTES + 1];
  lv_error_text(r->body, r->len, text, sizeof text);
  return lv_fail(c, "%s %s at %s failed with HTTP %ld%s%s", method, path, t->url, r->code,
                 text[0] ? ": " : "", text);
}

static lv_http_status lv_call(const lv_ctx *c, const lv_target *t, const char *method,
                              const char *path, const char *body, double timeout_s, lv_reply *r) {
  char *url = lv_url_join(t->url, path);
  if (!url) {
    memset(r, 0, sizeof *r);
    r->status = LV_HTTP_ERROR;
    snprintf(r->error, sizeof r->error, "out of memory");
    return r->status;
  }
  lv_http_status s = lv_http_request(&c->http, method, url, body, timeout_s, r);
  free(url);
  return s;
}

/* ---------------------------------------------------------------- framework */

static int lv_resolve_framework(const lv_ctx *c, lv_target *t) {
  const char *want = c->opt->framework;
  if (want && *want && strcmp(want, "auto") != 0) {
    const te_framework *f = c->rules ? te_rules_framework_lookup(c->rules, want) : NULL;
    t->fw = lv_fw_from_id(f ? f->id : want);
    if (t->fw == LV_FW_NONE)
      return lv_fail(c,
                     "framework '%s' has no live-capture support (sglang, vllm, trtllm, "
                     "tokenspeed)",
                     want);
    lv_say(c, t, "using framework %s (--framework) at %s", lv_fw_id(t->fw), t->url);
    return LV_OK;
  }
  size_t n = c->rules ? te_rules_url_probe_count(c->rules) : 0;
  for (size_t i = 0; i < n; i++) {
    const te_url_probe *p = te_rules_url_probe(c->rules, i);
    if (!p || !p->path) continue;
    double to = p->timeout_s > 0 ? p->timeout_s : LV_T(c, info);
    if (c->opt->http_timeout_s > 0 && c->opt->http_timeout_s < to) to = c->opt->http_timeout_s;
    lv_reply r;
    lv_call(c, t, "GET", p->path, NULL, to, &r);
    if (r.status == LV_HTTP_REFUSED || r.status == LV_HTTP_CONNECT ||
        r.status == LV_HTTP_INTERRUPTED) {
      int rc = lv_check(c, t, "GET", p->path, &r);
      lv_reply_free(&r);
      return rc;
    }
    bool hit = r.status == LV_HTTP_OK && r.code >= 200 && r.code < 300;
    if (hit && p->body_match) hit = r.body && te_matcher_match(p->body_match, r.body, r.len);
    if (hit && p->json_list_key) hit = lv_json_has_list(r.body, r.len, p->json_list_key);
    lv_reply_free(&r);
    if (hit && lv_fw_from_id(p->framework) != LV_FW_NONE) {
      t->fw = lv_fw_from_id(p->framework);
      lv_say(c, t, "detected framework %s at %s (GET %s)", lv_fw_id(t->fw), t->url, p->path);
      return LV_OK;
    }
  }
  /* the fallback is the rule packs' default framework, never one chosen here */
  const te_framework *d = c->rules ? te_rules_framework_default(c->rules) : NULL;
  t->fw = d ? lv_fw_from_id(d->id) : LV_FW_NONE;
  if (t->fw == LV_FW_NONE)
    return lv_fail(c,
                   "no detection probe matched at %s and the rule packs name no default "
                   "framework with live-capture support; pass --framework",
                   t->url);
  lv_say(c, t, "no detection probe matched at %s; using the default framework %s", t->url,
         lv_fw_id(t->fw));
  return LV_OK;
}

/* ---------------------------------------------------------------- directories */

static bool lv_ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static char *lv_path_join(const char *a, const char *b) {
  size_t n = strlen(a) + 1 + strlen(b) + 1;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", a, b);
  return p;
}

static char *lv_absolute(const char *p) {
  char buf[PATH_MAX];
  return realpath(p, buf) ? strdup(buf) : NULL;
}

/* Discovery prefers trace files lying directly in the directory it is given over stage
 * sub-directories, so a root that already holds traces (earlier runs, or a vLLM profiler
 * directory in daily use) would hide this capture. Such a root gets a fresh run
 * directory inside it instead; the user's files are left alone. */
static int lv_avoid_stale(const lv_ctx *c, lv_target *t) {
  lv_snapshot old;
  if (lv_snapshot_take(t->root, 1, &old) != 0) return lv_fail(c, "out of memory");
  size_t n = old.n;
  lv_snapshot_free(&old);
  if (n == 0) return LV_OK;
  char name[64];
  time_t now = time(NULL);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(name, sizeof name, "triage-live-%Y%m%d-%H%M%S", &tmv);
  size_t len = strlen(name);
  snprintf(name + len, sizeof name - len, "-%ld", (long)getpid());
  char *run = lv_path_join(t->root, name);
  if (!run) return lv_fail(c, "out of memory");
  if (lv_mkdirs(run) != 0) {
    int e = errno;
    int rc = lv_fail(c, "cannot create %s (%s)", run, strerror(e));
    free(run);
    return rc;
  }
  lv_say(c, t, "%s already holds %zu trace file(s); this capture goes to %s", t->root, n, run);
  free(t->root);
  t->root = run;
  return LV_OK;
}

/* Creates (or adopts) the capture root. trace_file gets the basename when a TRT-LLM
 * output path names a file rather than a directory. */
static int lv_make_root(const lv_ctx *c, lv_target *t, char **trace_file) {
  *trace_file = NULL;
  if (t->output_dir && *t->output_dir) {
    const char *dir = t->output_dir;
    char *owned = NULL;
    /* TLLM_TORCH_PROFILE_TRACE names a file: watch that file, stage dirs beside it.
     * Also for the vLLM flow, because auto-detection takes TRT-LLM for vLLM. */
    if ((t->fw == LV_FW_TRTLLM || t->fw == LV_FW_VLLM) &&
        (lv_ends_with(dir, ".json") || lv_ends_with(dir, ".json.gz"))) {
      if (c->opt->workload == LV_WORKLOAD_BOTH)
        return lv_fail(c,
                       "--profile-workload both requires a directory output path for "
                       "%s (got the file %s), so each stage trace can be labelled; pass "
                       "its directory or a single stage",
                       lv_fw_label(t->fw), dir);
      const char *slash = strrchr(dir, '/');
      *trace_file = strdup(slash ? slash + 1 : dir);
      owned = slash ? strndup(dir, (size_t)(slash - dir) + (slash == dir)) : strdup(".");
      if (!owned || !*trace_file) return lv_fail(c, "out of memory");
      dir = owned;
    }
    if (lv_mkdirs(dir) != 0) {
      int e = errno;
      free(owned);
      return lv_fail(c, "cannot create the output directory %s (%s)", dir, strerror(e));
    }
    t->root = lv_absolute(dir);
    free(owned);
    if (!t->root) return lv_fail(c, "cannot resolve the output directory %s", t->output_dir);
    t->server_dir = strdup(t->root);
    if (!t->server_dir) return lv_fail(c, "out of memory");
    return lv_avoid_stale(c, t);
  }
  if (t->fw == LV_FW_VLLM || t->fw == LV_FW_TRTLLM) {
    char hint[768];
    return lv_fail(c,
                   "%s live capture needs --%soutput-dir: the directory the server writes "
                   "its traces to (%s)",
                   lv_fw_label(t->fw),
                   strcmp(t->role, "mapping ") == 0  ? "mapping-"
                   : strcmp(t->role, "formal ") == 0 ? "formal-"
                                                     : "",
                   lv_enable_hint(t->fw, NULL, hint, sizeof hint));
  }
  const char *tmp = getenv("TMPDIR");
  char tmpl[PATH_MAX];
  snprintf(tmpl, sizeof tmpl, "%s/triage-live-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
           lv_fw_id(t->fw));
  if (!mkdtemp(tmpl))
    return lv_fail(c, "cannot create a temporary directory (%s)", strerror(errno));
  t->root = lv_absolute(tmpl);
  if (!t->root) return lv_fail(c, "out of memory");
  return LV_OK;
}

static int lv_write_file(const char *path, const char *text) {
  /* Written beside and renamed, so a reader never sees half a file. */
  size_t n = strlen(path) + 5;
  char *tmp = malloc(n);
  if (!tmp) return -1;
  snprintf(tmp, n, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(tmp);
    return -1;
  }
  bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  ok = (fclose(f) == 0) && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) remove(tmp);
  free(tmp);
  return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- server facts */

/* Server args (SGLang, TokenSpeed: /server_info) and the model id (/v1/models, for the
 * OpenAI-style requests). Missing facts are not fatal: the report just has no Model line. */
static int lv_server_facts(const lv_ctx *c, lv_target *t, cJSON **args_out) {
  lv_reply r;
  cJSON *args = NULL;
  *args_out = NULL;
  if (t->fw == LV_FW_SGLANG || t->fw == LV_FW_TOKENSPEED) {
    static const char *const paths[] = {"/server_info", "/get_server_info"};
    for (size_t i = 0; i < 2 && !args; i++) {
      lv_call(c, t, "GET", paths[i], NULL, lv_step_timeout(c, LV_T(c, info)), &r);
      if (r.status == LV_HTTP_REFUSED || r.status == LV_HTTP_CONNECT ||
          r.status == LV_HTTP_INTERRUPTED) {
        int rc = lv_check(c, t, "GET", paths[i], &r);
        lv_reply_free(&r);
        return rc;
      }
      if (r.status == LV_HTTP_OK && r.code >= 200 && r.code < 300 && r.body) {
        args = cJSON_ParseWithLength(r.body, r.len);
        if (!cJSON_IsObject(args)) {
          cJSON_Delete(args);
          args = NULL;
        }
      }
      lv_reply_free(&r);
    }
  }
  if (t->fw != LV_FW_SGLANG) {
    lv_call(c, t, "GET", "/v1/models", NULL, lv_step_timeout(c, LV_T(c, info)), &r);
    if (r.status == LV_HTTP_REFUSED || r.status == LV_HTTP_CONNECT ||
        r.status == LV_HTTP_INTERRUPTED ||
        (r.status == LV_HTTP_OK && r.code >= 400 && r.code != 404)) {
      int rc = lv_check(c, t, "GET", "/v1/models", &r);
      lv_reply_free(&r);
      cJSON_Delete(args);
      return rc;
    }
    if (r.status == LV_HTTP_OK && r.code >= 200 && r.code < 300)
      t->model = lv_parse_model_id(r.body, r.len);
    lv_reply_free(&r);
    if (t->model) lv_say(c, t, "model %s", t->model);
  }
  if (!args && t->model) {
    /* Enough for the Model line and model-gated fusion patterns. */
    args = cJSON_CreateObject();
    if (args) cJSON_AddStringToObject(args, "model_path", t->model);
  }
  *args_out = args;
  return LV_OK;
}

/* Saves the server args in the capture root, where discovery looks (trace dir's parent). */
static void lv_save_server_args(const lv_ctx *c, lv_target *t, cJSON *args) {
  if (args) {
    char *text = cJSON_Print(args);
    char *path = lv_path_join(t->root, "server_args.json");
    if (text && path && lv_write_file(path, text) == 0) {
      t->server_args = path;
      path = NULL;
      lv_say(c, t, "saved server args to %s", t->server_args);
    } else {
      lv_say(c, t, "warning: cannot write server_args.json in %s", t->root);
    }
    free(path);
    cJSON_free(text);
  }
}

/* ---------------------------------------------------------------- requests */

static int lv_send(const lv_ctx *c, lv_target *t, const char *text, long seed, long max_tokens) {
  lv_reply r;
  double to = lv_step_timeout(c, LV_T(c, request));
  if (t->fw == LV_FW_SGLANG) {
    char *body = lv_body_sglang_generate(text, seed, max_tokens);
    if (!body) return lv_fail(c, "out of memory");
    lv_call(c, t, "POST", "/generate", body, to, &r);
    free(body);
    int rc = lv_check(c, t, "POST", "/generate", &r);
    lv_reply_free(&r);
    return rc;
  }
  if (!t->use_completions) {
    char *body = lv_body_chat(t->model, text, max_tokens);
    if (!body) return lv_fail(c, "out of memory");
    lv_call(c, t, "POST", "/v1/chat/completions", body, to, &r);
    free(body);
    if (r.status == LV_HTTP_REFUSED || r.status == LV_HTTP_INTERRUPTED) {
      int rc = lv_check(c, t, "POST", "/v1/chat/completions", &r);
      lv_reply_free(&r);
      return rc;
    }
    bool ok = r.status == LV_HTTP_OK && r.code >= 200 && r.code < 300;
    lv_reply_free(&r);
    if (ok) return LV_OK;
    /* Base models have no chat template; the plain completion API still works. */
    t->use_completions = true;
    lv_say(c, t, "/v1/chat/completions failed; using /v1/completions");
  }
  char *body = lv_body_completion(t->model, text, max_tokens);
  if (!body) return lv_fail(c, "out of memory");
  lv_call(c, t, "POST", "/v1/completions", body, to, &r);
  free(body);
  int rc = lv_check(c, t, "POST", "/v1/completions", &r);
  lv_reply_free(&r);
  return rc;
}

/* The stage directory (and plan) name of a single-stage workload. */
static const char *lv_workload_stage(lv_workload w) {
  return w == LV_WORKLOAD_PREFILL ? "prefill" : w == LV_WORKLOAD_DECODE ? "decode" : "legacy";
}

typedef struct lv_plan {
  const char *stage; /* "prefill", "decode", "legacy" */
  long warmup_n, warmup_words, warmup_tokens;
  long capture_n, capture_words, capture_tokens;
  bool legacy_text; /* use --probe-prompt instead of synthetic words */
} lv_plan;

static lv_plan lv_make_plan(const lv_options *o, const char *stage) {
  lv_plan p = {stage, 0, 0, 0, 0, 0, 0, false};
  long warm = o->warmup_steps > 0 ? o->warmup_steps : 0;
  long probes = o->probe_requests > 0 ? o->probe_requests : 1;
  long steps = o->num_steps > 0 ? o->num_steps : 1;
  if (strcmp(stage, "prefill") == 0) {
    p.warmup_n = warm;
    p.warmup_words = p.capture_words = o->prefill_input_len;
    p.warmup_tokens = p.capture_tokens = o->prefill_output_len;
    p.capture_n = probes > steps ? probes : steps;
  } else if (strcmp(stage, "decode") == 0) {
    p.warmup_n = warm > 0 ? 1 : 0;
    p.warmup_words = p.capture_words = o->decode_input_len;
    p.warmup_tokens = warm;
    p.capture_n = probes;
    p.capture_tokens = o->decode_output_len;
  } else {
    long toks =
        o->probe_max_new_tokens > 0 ? o->probe_max_new_tokens : (8 * steps > 64 ? 8 * steps : 64);
    p.legacy_text = true;
    p.warmup_n = warm;
    p.capture_n = probes;
    p.warmup_tokens = p.capture_tokens = toks;
  }
  return p;
}

static int lv_send_batch(const lv_ctx *c, lv_target *t, const lv_plan *p, long n, long words,
                         long tokens, long *seed) {
  for (long i = 0; i < n; i++, (*seed)++) {
    char *text = p->legacy_text ? strdup(c->opt->probe_prompt ? c->opt->probe_prompt : "")
                                : lv_make_prompt(words, *seed);
    if (!text)
      return lv_fail(c, "cannot build a %ld-word prompt (limit %ld)", words,
                     (long)LV_MAX_PROMPT_WORDS);
    int rc = lv_send(c, t, text, *seed, tokens);
    free(text);
    if (rc != LV_OK) return rc;
  }
  return LV_OK;
}

/* ---------------------------------------------------------------- profiler */

/* *maybe_started is set when Ctrl-C cut the request short: it may have reached the server,
 * which then profiles until told to stop, so the caller sends stop_profile all the same. */
static int lv_start_profile(const lv_ctx *c, lv_target *t, const char *stage_dir, const char *stage,
                            bool workload, bool *maybe_started) {
  char prefix[512];
  const char *base = t->prefix ? t->prefix : "triage-trace";
  if (workload)
    snprintf(prefix, sizeof prefix, "%s-%s", base, stage);
  else
    snprintf(prefix, sizeof prefix, "%s", base);
  char *body = NULL;
  if (t->fw == LV_FW_SGLANG) {
    lv_sglang_start s = {0};
    s.output_dir = stage_dir;
    /* SGLang counts the step that trips the stop condition; one guard step keeps
     * num_steps whole steps in the trace. */
    s.num_steps = c->opt->num_steps + (workload ? 1 : 0);
    /* In workload mode the directory names the stage; in legacy mode SGLang's own split
     * is the only stage signal, so it defaults on there. */
    s.profile_by_stage = workload ? false : c->opt->profile_by_stage != 0;
    s.merge_profiles = c->opt->merge_profiles;
    s.profile_prefix = prefix;
    s.start_step = c->opt->start_step;
    body = lv_body_sglang_start(&s);
  } else if (t->fw == LV_FW_TOKENSPEED) {
    body = lv_body_tokenspeed_start(stage_dir, prefix);
  }
  if (t->fw != LV_FW_VLLM && t->fw != LV_FW_TRTLLM && !body) return lv_fail(c, "out of memory");
  lv_reply r;
  double to =
      lv_step_timeout(c, t->fw == LV_FW_SGLANG ? LV_T(c, start_sglang) : LV_T(c, start_remote));
  lv_call(c, t, "POST", "/start_profile", body, to, &r);
  free(body);
  if (r.status == LV_HTTP_OK && (r.code == 404 || r.code == 405)) {
    char hint[768];
    long code = r.code;
    lv_reply_free(&r);
    return lv_fail(c,
                   "the %s server at %s has no profiler endpoint (POST /start_profile "
                   "answered HTTP %ld): %s",
                   lv_fw_label(t->fw), t->url, code,
                   lv_enable_hint(t->fw, t->root, hint, sizeof hint));
  }
  *maybe_started = r.status == LV_HTTP_INTERRUPTED;
  int rc = lv_check(c, t, "POST", "/start_profile", &r);
  lv_reply_free(&r);
  return rc;
}

/* Whether Ctrl-C found a profiler running (for the final message). */
static bool lv_stopped_after_interrupt;

static void lv_stop_profile(const lv_ctx *c, lv_target *t, const char *stage) {
  lv_http h = c->http;
  double to = lv_step_timeout(c, LV_T(c, stop));
  if (lv_interrupted) {
    lv_stopped_after_interrupt = true;
    h.ignore_interrupt = true;
    to = LV_T(c, stop_after_interrupt);
    lv_say(c, t, "interrupted: stopping the profiler at %s", t->url);
  }
  char *url = lv_url_join(t->url, "/stop_profile");
  if (!url) return;
  lv_reply r;
  lv_http_request(&h, "POST", url, NULL, to, &r);
  free(url);
  if (r.status != LV_HTTP_OK || r.code >= 300) {
    /* SGLang stops by itself after num_steps and then rejects stop_profile; the traces
     * are what counts, so this is only reported. */
    char text[LV_ERROR_SNIPPET_BYTES + 1];
    if (r.status == LV_HTTP_OK)
      lv_error_text(r.body, r.len, text, sizeof text);
    else
      snprintf(text, sizeof text, "%.200s", r.error);
    if (r.status == LV_HTTP_OK)
      lv_say(c, t, "note: POST /stop_profile answered HTTP %ld%s%s", r.code, text[0] ? ": " : "",
             text);
    else
      lv_say(c, t, "note: POST /stop_profile: %s", text);
  } else {
    lv_say(c, t, "stage %s: profiler stopped", stage);
  }
  lv_reply_free(&r);
}

/* Waits until new trace files appear under dir and stop growing. only_name restricts to
 * one file name (TRT-LLM's fixed trace path). */
static int lv_wait_traces(const lv_ctx *c, lv_target *t, const char *dir, int depth,
                          const lv_snapshot *before, const char *only_name, lv_snapshot *found) {
  double wait_s = lv_trace_wait(c, t->fw);
  long polls = (long)(wait_s * 1000.0 / (double)LV_POLL_INTERVAL_MS) + 1;
  lv_snapshot prev = {0};
  memset(found, 0, sizeof *found);
  lv_say(c, t, "waiting up to %.0f s for trace files in %s", wait_s, dir);
  for (long i = 0; i <= polls; i++) {
    lv_snapshot now, fresh;
    if (lv_snapshot_take(dir, depth, &now) != 0) return lv_fail(c, "out of memory");
    int rc = lv_snapshot_new(before, &now, &fresh);
    lv_snapshot_free(&now);
    if (rc != 0) {
      lv_snapshot_free(&prev);
      return lv_fail(c, "out of memory");
    }
    if (only_name) {
      size_t k = 0;
      for (size_t j = 0; j < fresh.n; j++) {
        const char *slash = strrchr(fresh.files[j].path, '/');
        if (strcmp(slash ? slash + 1 : fresh.files[j].path, only_name) == 0)
          fresh.files[k++] = fresh.files[j];
        else
          free(fresh.files[j].path);
      }
      fresh.n = k;
    }
    /* Done when something new exists and nothing changed over one poll period (the
     * server may still be compressing, or another rank may still be writing). */
    lv_snapshot delta = {0};
    bool stable = false;
    if (fresh.n > 0 && prev.n == fresh.n) {
      if (lv_snapshot_new(&prev, &fresh, &delta) != 0) {
        lv_snapshot_free(&fresh);
        lv_snapshot_free(&prev);
        return lv_fail(c, "out of memory");
      }
      stable = delta.n == 0;
      lv_snapshot_free(&delta);
    }
    lv_snapshot_free(&prev);
    prev = fresh;
    if (stable) {
      *found = prev;
      return LV_OK;
    }
    if (i < polls && !lv_sleep_ms(LV_POLL_INTERVAL_MS)) break;
  }
  bool partial = prev.n > 0;
  lv_snapshot_free(&prev);
  if (lv_interrupted) return lv_fail(c, "interrupted while waiting for trace files in %s", dir);
  if (t->fw == LV_FW_VLLM || t->fw == LV_FW_TRTLLM)
    return lv_fail(c,
                   "no %strace file appeared in %s after waiting %.0f s; the server must "
                   "write its traces there (%s's profiler directory, visible on this "
                   "machine)",
                   partial ? "complete " : "", dir, wait_s, lv_fw_label(t->fw));
  return lv_fail(c,
                 "no %strace file appeared in %s after waiting %.0f s (the server must be "
                 "able to write there; set TRIAGE_LIVE_TRACE_WAIT_S or --http-timeout to "
                 "wait longer)",
                 partial ? "complete " : "", dir, wait_s);
}

/* Moves the new files into the stage directory (vLLM, TRT-LLM). */
static int lv_move_into(const lv_ctx *c, const lv_snapshot *files, const char *stage_dir) {
  for (size_t i = 0; i < files->n; i++) {
    const char *src = files->files[i].path;
    const char *slash = strrchr(src, '/');
    const char *name = slash ? slash + 1 : src;
    char *dst = lv_path_join(stage_dir, name);
    if (!dst) return lv_fail(c, "out of memory");
    struct stat st;
    if (stat(dst, &st) == 0) {
      /* Same name as an earlier capture's file: keep both. */
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      char uniq[64];
      snprintf(uniq, sizeof uniq, "%lld%09ld-", (long long)ts.tv_sec, ts.tv_nsec);
      free(dst);
      size_t n = strlen(stage_dir) + 1 + strlen(uniq) + strlen(name) + 1;
      dst = malloc(n);
      if (!dst) return lv_fail(c, "out of memory");
      snprintf(dst, n, "%s/%s%s", stage_dir, uniq, name);
    }
    if (rename(src, dst) != 0) {
      int e = errno;
      int rc = lv_fail(c, "cannot move %s to %s (%s)", src, dst, strerror(e));
      free(dst);
      return rc;
    }
    free(dst);
  }
  return LV_OK;
}

/* One stage: warm up, start, probe, stop, wait, place. */
static int lv_capture_stage(const lv_ctx *c, lv_target *t, const char *stage, bool workload,
                            const char *trace_file) {
  lv_plan plan = lv_make_plan(c->opt, stage);
  if (plan.warmup_n + plan.capture_n > LV_MAX_REQUESTS_PER_STAGE)
    return lv_fail(c, "stage %s would send %ld requests (limit %ld)", stage,
                   plan.warmup_n + plan.capture_n, (long)LV_MAX_REQUESTS_PER_STAGE);
  if (!plan.legacy_text && (plan.capture_words < 1 || plan.capture_words > LV_MAX_PROMPT_WORDS))
    return lv_fail(c, "stage %s: input length %ld is outside 1..%ld words", stage,
                   plan.capture_words, (long)LV_MAX_PROMPT_WORDS);
  char *stage_dir = lv_path_join(t->root, stage);
  if (!stage_dir) return lv_fail(c, "out of memory");
  if (lv_mkdirs(stage_dir) != 0) {
    int e = errno;
    int rc = lv_fail(c, "cannot create %s (%s)", stage_dir, strerror(e));
    free(stage_dir);
    return rc;
  }
  bool remote_dir = t->fw == LV_FW_VLLM || t->fw == LV_FW_TRTLLM;
  const char *watch = remote_dir ? t->server_dir : stage_dir;
  int depth = t->fw == LV_FW_SGLANG ? LV_MAX_SCAN_DEPTH : 1;
  lv_snapshot before = {0}, found = {0};
  int rc = LV_OK;
  if (lv_snapshot_take(watch, depth, &before) != 0) rc = lv_fail(c, "out of memory");

  long seed = 0;
  if (rc == LV_OK && plan.warmup_n > 0) {
    lv_say(c, t, "stage %s: %ld warm-up request(s)", stage, plan.warmup_n);
    rc = lv_send_batch(c, t, &plan, plan.warmup_n, plan.warmup_words, plan.warmup_tokens, &seed);
  }
  bool started = false;
  if (rc == LV_OK) {
    bool maybe_started = false;
    rc = lv_start_profile(c, t, stage_dir, stage, workload, &maybe_started);
    started = rc == LV_OK || maybe_started;
    if (rc == LV_OK) lv_say(c, t, "stage %s: profiler started", stage);
  }
  if (rc == LV_OK) {
    double delay = c->opt->probe_delay_s > 0 ? c->opt->probe_delay_s : 0;
    if (t->fw != LV_FW_SGLANG) {
      /* Remote profilers arm asynchronously; requests sent at once are missed. */
      double floor_s =
          lv_env_seconds("TRIAGE_LIVE_MIN_PROBE_DELAY_S", c->opt->remote_probe_delay_min_s);
      if (delay < floor_s) delay = floor_s;
    }
    if (!lv_sleep_ms((long)(delay * 1000.0))) rc = lv_fail(c, "interrupted");
  }
  if (rc == LV_OK) {
    lv_say(c, t, "stage %s: %ld probe request(s)", stage, plan.capture_n);
    rc = lv_send_batch(c, t, &plan, plan.capture_n, plan.capture_words, plan.capture_tokens, &seed);
  }
  if (started) lv_stop_profile(c, t, stage);
  if (rc == LV_OK && lv_interrupted) rc = lv_fail(c, "interrupted");
  if (rc == LV_OK) rc = lv_wait_traces(c, t, watch, depth, &before, trace_file, &found);
  if (rc == LV_OK && remote_dir) rc = lv_move_into(c, &found, stage_dir);
  if (rc == LV_OK) lv_say(c, t, "stage %s: %zu trace file(s) in %s", stage, found.n, stage_dir);
  lv_snapshot_free(&before);
  lv_snapshot_free(&found);
  free(stage_dir);
  return rc;
}

/* ---------------------------------------------------------------- one target */

static int lv_check_options(const lv_ctx *c, const lv_target *t) {
  const lv_options *o = c->opt;
  if (t->fw != LV_FW_SGLANG) {
    /* Only SGLang's start_profile has these knobs; silently dropping them would make
     * the user believe they took effect. */
    if (o->start_step)
      return lv_fail(c, "--start-step is supported for SGLang only (framework is %s)",
                     lv_fw_id(t->fw));
    if (o->merge_profiles)
      return lv_fail(c, "--merge-profiles is supported for SGLang only (framework is %s)",
                     lv_fw_id(t->fw));
    if (o->profile_by_stage == 1)
      return lv_fail(c, "--profile-by-stage is supported for SGLang only (framework is %s)",
                     lv_fw_id(t->fw));
  }
  if (o->num_steps < 1) return lv_fail(c, "--num-steps must be at least 1");
  return LV_OK;
}

static int lv_capture_target(const lv_ctx *c, lv_target *t) {
  int rc = lv_resolve_framework(c, t);
  if (rc == LV_OK) rc = lv_check_options(c, t);
  /* Talk to the server before creating anything, so an unreachable URL leaves no
   * empty temporary directory behind. */
  cJSON *args = NULL;
  if (rc == LV_OK) rc = lv_server_facts(c, t, &args);
  char *trace_file = NULL;
  if (rc == LV_OK) rc = lv_make_root(c, t, &trace_file);
  if (rc == LV_OK) {
    lv_say(c, t, "capture directory %s", t->root);
    lv_save_server_args(c, t, args);
  }
  cJSON_Delete(args);
  lv_workload w = c->opt->workload;
  if (rc == LV_OK) {
    if (w == LV_WORKLOAD_BOTH) {
      rc = lv_capture_stage(c, t, "prefill", true, trace_file);
      if (rc == LV_OK) rc = lv_capture_stage(c, t, "decode", true, trace_file);
    } else {
      rc = lv_capture_stage(c, t, lv_workload_stage(w), w != LV_WORKLOAD_LEGACY, trace_file);
    }
  }
  free(trace_file);
  if (rc == LV_OK) {
    t->input = w == LV_WORKLOAD_LEGACY ? lv_path_join(t->root, "legacy") : strdup(t->root);
    if (!t->input) rc = lv_fail(c, "out of memory");
  }
  return rc;
}

/* Option values that cannot work, caught before any request so nothing is started on
 * the server. The flag named in the message is the one to change. */
static int lv_validate(const lv_ctx *c) {
  const lv_options *o = c->opt;
  if ((unsigned)o->workload > LV_WORKLOAD_LEGACY) {
    lv_fail(c, "unknown profile workload %d", (int)o->workload);
    return LV_USAGE;
  }
  if (o->num_steps < 1) {
    lv_fail(c, "--num-steps must be at least 1 (got %d)", o->num_steps);
    return LV_USAGE;
  }
  static const lv_workload stages[] = {LV_WORKLOAD_PREFILL, LV_WORKLOAD_DECODE, LV_WORKLOAD_LEGACY};
  for (size_t i = 0; i < 3; i++) {
    bool used = o->workload == stages[i] || (o->workload == LV_WORKLOAD_BOTH && i < 2);
    if (!used) continue;
    const char *stage = lv_workload_stage(stages[i]);
    lv_plan p = lv_make_plan(o, stage);
    if (p.warmup_n + p.capture_n > LV_MAX_REQUESTS_PER_STAGE) {
      lv_fail(c,
              "--warmup-steps, --num-steps and --probe-requests ask for %ld requests in the "
              "%s stage (limit %ld)",
              p.warmup_n + p.capture_n, stage, (long)LV_MAX_REQUESTS_PER_STAGE);
      return LV_USAGE;
    }
    if (!p.legacy_text && (p.capture_words < 1 || p.capture_words > LV_MAX_PROMPT_WORDS)) {
      lv_fail(c, "--%s-input-len %ld is outside 1..%ld words", stage, p.capture_words,
              (long)LV_MAX_PROMPT_WORDS);
      return LV_USAGE;
    }
  }
  return LV_OK;
}

/* ---------------------------------------------------------------- entry points */

bool lv_wanted(const lv_options *opt) {
  return opt && (opt->url || opt->mapping_url || opt->formal_url);
}

void lv_options_defaults(lv_options *o) {
  memset(o, 0, sizeof *o);
  o->profile_prefix = "triage-trace";
  o->mapping_profile_prefix = "mapping-trace";
  o->formal_profile_prefix = "formal-trace";
  o->workload = LV_WORKLOAD_BOTH;
  o->probe_prompt =
      "Repeat the word profiler many times with spaces so the server performs "
      "several decode steps. Do not add explanations.";
  o->num_steps = 5;
  o->warmup_steps = 10;
  o->probe_requests = 1;
  o->probe_max_new_tokens = 0;
  o->probe_delay_s = 0.5;
  o->prefill_input_len = 4090;
  o->prefill_output_len = 1;
  o->decode_input_len = 1;
  o->decode_output_len = 2048;
  o->profile_by_stage = -1;
}

static void lv_on_sigint(int sig) {
  (void)sig;
  lv_interrupted = 1;
}

void lv_result_free(lv_result *r) {
  if (!r) return;
  free(r->input);
  free(r->mapping_input);
  free(r->formal_input);
  free(r->server_args_path);
  free(r->framework_id);
  memset(r, 0, sizeof *r);
}

lv_status lv_run(const lv_options *opt, const te_rules *rules, FILE *progress, lv_result *out,
                 char *err, size_t err_cap) {
  memset(out, 0, sizeof *out);
  if (err_cap) err[0] = '\0';
  lv_ctx c = {opt, rules, progress, {opt->api_key, false}, err, err_cap};
  if (!lv_wanted(opt)) return lv_fail(&c, "no --url, --mapping-url or --formal-url given");
  if (opt->url && (opt->mapping_url || opt->formal_url)) {
    lv_fail(&c, "use either --url or --mapping-url/--formal-url, not both");
    return LV_USAGE;
  }
  int vrc = lv_validate(&c);
  if (vrc != LV_OK) return vrc;
  /* libcurl is loaded here, not at start-up (curl_lib.h): a missing library is one more
   * failure before any request, with the loader's reason in err. */
  const lv_curl_api *curl = lv_curl_load(err, err_cap);
  if (!curl) return LV_FAIL;

  lv_target targets[2];
  memset(targets, 0, sizeof targets);
  size_t n = 0;
  if (opt->url)
    targets[n++] = (lv_target){.role = "",
                               .url = opt->url,
                               .output_dir = opt->output_dir,
                               .prefix = opt->profile_prefix ? opt->profile_prefix : "triage-trace",
                               .fw = LV_FW_NONE};
  if (opt->mapping_url)
    targets[n++] = (lv_target){
        .role = "mapping ",
        .url = opt->mapping_url,
        .output_dir = opt->mapping_output_dir,
        .prefix = opt->mapping_profile_prefix ? opt->mapping_profile_prefix : "mapping-trace",
        .fw = LV_FW_NONE};
  if (opt->formal_url)
    targets[n++] = (lv_target){
        .role = "formal ",
        .url = opt->formal_url,
        .output_dir = opt->formal_output_dir,
        .prefix = opt->formal_profile_prefix ? opt->formal_profile_prefix : "formal-trace",
        .fw = LV_FW_NONE};

  struct sigaction sa, old_sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = lv_on_sigint;
  sigemptyset(&sa.sa_mask);
  lv_interrupted = 0;
  lv_stopped_after_interrupt = false;
  sigaction(SIGINT, &sa, &old_sa);
  curl->global_init(CURL_GLOBAL_DEFAULT);

  int rc = LV_OK;
  for (size_t i = 0; i < n && rc == LV_OK; i++) rc = lv_capture_target(&c, &targets[i]);
  if (rc != LV_OK && lv_interrupted) {
    rc = LV_INTERRUPTED;
    snprintf(err, err_cap, "%s",
             lv_stopped_after_interrupt ? "interrupted (the profiler was stopped)"
                                        : "interrupted (no profiler was running)");
  }

  if (rc == LV_OK) {
    for (size_t i = 0; i < n; i++) {
      lv_target *t = &targets[i];
      char **slot = t->url == opt->url           ? &out->input
                    : t->url == opt->mapping_url ? &out->mapping_input
                                                 : &out->formal_input;
      *slot = t->input;
      t->input = NULL;
    }
    /* The formal (timing) capture is the one whose facts the report shows. */
    lv_target *last = &targets[n - 1];
    out->server_args_path = last->server_args;
    last->server_args = NULL;
    out->framework_id = strdup(lv_fw_id(last->fw));
    if (!out->framework_id) {
      lv_result_free(out);
      rc = lv_fail(&c, "out of memory");
    }
  }
  for (size_t i = 0; i < n; i++) lv_target_clear(&targets[i]);
  curl->global_cleanup();
  sigaction(SIGINT, &old_sa, NULL);
  return rc;
}
