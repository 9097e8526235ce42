/* Unit tests of the pure parts of live capture: the bytes triage sends to each
 * framework, how it reads replies, URL joining, trace-name recognition, limits. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "live/live.h"
#include "live/lv_internal.h"

static cJSON *parse(char *s) {
  cr_assert_not_null(s);
  cJSON *o = cJSON_Parse(s);
  free(s);
  cr_assert_not_null(o);
  return o;
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  cr_assert(cJSON_IsString(v), "member %s is not a string", k);
  return v->valuestring;
}

Test(live_url, join_normalises_slashes) {
  char *u = lv_url_join("http://127.0.0.1:30000/", "/start_profile");
  cr_assert_str_eq(u, "http://127.0.0.1:30000/start_profile");
  free(u);
  u = lv_url_join("http://127.0.0.1:30000", "v1/models");
  cr_assert_str_eq(u, "http://127.0.0.1:30000/v1/models");
  free(u);
  u = lv_url_join("http://h:1/prefix//", "//generate");
  cr_assert_str_eq(u, "http://h:1/prefix/generate");
  free(u);
  u = lv_url_join("http://h:1/?x=1#frag", "/generate");
  cr_assert_str_eq(u, "http://h:1/generate");
  free(u);
}

Test(live_body, sglang_start_profile) {
  lv_sglang_start s = {"/tmp/out/prefill", 6, false, true, "triage-trace-prefill", "3"};
  cJSON *o = parse(lv_body_sglang_start(&s));
  cr_assert_str_eq(str(o, "output_dir"), "/tmp/out/prefill");
  cr_assert_str_eq(str(o, "num_steps"), "6"); /* a string, as SGLang's client sends */
  cr_assert_str_eq(str(o, "profile_prefix"), "triage-trace-prefill");
  cr_assert_str_eq(str(o, "start_step"), "3");
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "profile_by_stage")));
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "merge_profiles")));
  const cJSON *acts = cJSON_GetObjectItem(o, "activities");
  cr_assert_eq(cJSON_GetArraySize(acts), 2);
  cr_assert_str_eq(cJSON_GetArrayItem(acts, 0)->valuestring, "CPU");
  cr_assert_str_eq(cJSON_GetArrayItem(acts, 1)->valuestring, "GPU");
  cJSON_Delete(o);
}

Test(live_body, sglang_start_profile_omits_unset) {
  lv_sglang_start s = {"/d", 0, true, false, "p", NULL};
  cJSON *o = parse(lv_body_sglang_start(&s));
  cr_assert_null(cJSON_GetObjectItem(o, "start_step"));
  cr_assert_null(cJSON_GetObjectItem(o, "num_steps"));
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "profile_by_stage")));
  cJSON_Delete(o);
}

Test(live_body, tokenspeed_start_profile) {
  cJSON *o = parse(lv_body_tokenspeed_start("/srv/ts/decode", "ts-triage-decode"));
  cr_assert_str_eq(str(o, "output_dir"), "/srv/ts/decode");
  cr_assert_str_eq(str(o, "profile_id"), "ts-triage-decode");
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "with_stack")));
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "record_shapes")));
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "activities")), 2);
  cJSON_Delete(o);
}

Test(live_body, sglang_generate) {
  cJSON *o = parse(lv_body_sglang_generate("profile_probe_3 profile", 3, 1));
  cr_assert_str_eq(str(o, "text"), "profile_probe_3 profile");
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "stream")));
  const cJSON *sp = cJSON_GetObjectItem(o, "sampling_params");
  cr_assert_eq(cJSON_GetObjectItem(sp, "sampling_seed")->valuedouble, 3.0);
  cr_assert_eq(cJSON_GetObjectItem(sp, "temperature")->valuedouble, 0.0);
  cr_assert_eq(cJSON_GetObjectItem(sp, "max_new_tokens")->valuedouble, 1.0);
  cJSON_Delete(o);
}

Test(live_body, chat_and_completion) {
  cJSON *o = parse(lv_body_chat("Qwen/Qwen3-8B", "hi \"there\"", 2048));
  cr_assert_str_eq(str(o, "model"), "Qwen/Qwen3-8B");
  const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "messages"), 0);
  cr_assert_str_eq(str(m, "role"), "user");
  cr_assert_str_eq(str(m, "content"), "hi \"there\"");
  cr_assert_eq(cJSON_GetObjectItem(o, "max_tokens")->valuedouble, 2048.0);
  cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "stream")));
  cJSON_Delete(o);
  o = parse(lv_body_completion("m", "p", 7));
  cr_assert_str_eq(str(o, "prompt"), "p");
  cr_assert_str_eq(str(o, "model"), "m");
  cr_assert_eq(cJSON_GetObjectItem(o, "max_tokens")->valuedouble, 7.0);
  cJSON_Delete(o);
  /* No model known: the member is left out rather than sent empty. */
  o = parse(lv_body_completion(NULL, "p", 7));
  cr_assert_null(cJSON_GetObjectItem(o, "model"));
  cJSON_Delete(o);
}

Test(live_prompt, unique_first_word_and_length) {
  char *p = lv_make_prompt(4, 12);
  cr_assert_str_eq(p, "profile_probe_12 profile profile profile");
  free(p);
  p = lv_make_prompt(1, 0);
  cr_assert_str_eq(p, "profile_probe_0");
  free(p);
  p = lv_make_prompt(4090, 1);
  size_t words = 1;
  for (const char *q = p; *q; q++) words += *q == ' ';
  cr_assert_eq(words, 4090);
  free(p);
}

Test(live_prompt, limits) {
  cr_assert_null(lv_make_prompt(0, 0));
  cr_assert_null(lv_make_prompt(LV_MAX_PROMPT_WORDS + 1, 0));
  char *p = lv_make_prompt(LV_MAX_PROMPT_WORDS, 0);
  cr_assert_not_null(p);
  free(p);
}

Test(live_reply, model_id) {
  const char *b =
      "{\"object\":\"list\",\"data\":[{\"id\":\"Qwen/Qwen3-8B\",\"object\":\"model\"},"
      "{\"id\":\"other\"}]}";
  char *id = lv_parse_model_id(b, strlen(b));
  cr_assert_str_eq(id, "Qwen/Qwen3-8B");
  free(id);
  const char *bad[] = {"",
                       "[]",
                       "{\"data\":{}}",
                       "{\"data\":[]}",
                       "{\"data\":[{\"id\":5}]}",
                       "{\"data\":[{\"id\":\"\"}]}",
                       "{\"data\":[{\"id\":\"x\"",
                       "null"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_null(lv_parse_model_id(bad[i], strlen(bad[i])), "case %zu", i);
  cr_assert_null(lv_parse_model_id(NULL, 0));
}

Test(live_reply, json_list) {
  const char *b = "{\"data\":[]}";
  cr_assert(lv_json_has_list(b, strlen(b), "data"));
  cr_assert_not(lv_json_has_list(b, strlen(b), "models"));
  const char *c = "{\"data\":{}}";
  cr_assert_not(lv_json_has_list(c, strlen(c), "data"));
  cr_assert_not(lv_json_has_list("<html>", 6, "data"));
}

Test(live_reply, error_text_from_json) {
  char out[LV_ERROR_SNIPPET_BYTES + 1];
  const char *b1 = "{\"error\":{\"message\":\"invalid api key\",\"type\":\"x\"}}";
  lv_error_text(b1, strlen(b1), out, sizeof out);
  cr_assert_str_eq(out, "invalid api key");
  const char *b2 = "{\"detail\":\"Not Found\"}";
  lv_error_text(b2, strlen(b2), out, sizeof out);
  cr_assert_str_eq(out, "Not Found");
  const char *b3 = "{\"detail\":[{\"loc\":[\"body\"],\"msg\":\"field required\"}]}";
  lv_error_text(b3, strlen(b3), out, sizeof out);
  cr_assert_str_eq(out, "field required");
  const char *b4 = "{\"message\":\"profiling already\\nin progress\"}";
  lv_error_text(b4, strlen(b4), out, sizeof out);
  cr_assert_str_eq(out, "profiling already in progress");
}

Test(live_reply, error_text_from_plain_body) {
  char out[LV_ERROR_SNIPPET_BYTES + 1];
  const char *b = "  Internal Server Error:\r\n\ttorch profiler failed  ";
  lv_error_text(b, strlen(b), out, sizeof out);
  cr_assert_str_eq(out, "Internal Server Error: torch profiler failed");
  lv_error_text("", 0, out, sizeof out);
  cr_assert_str_eq(out, "");
  char big[5000];
  memset(big, 'x', sizeof big);
  lv_error_text(big, sizeof big, out, sizeof out);
  cr_assert_eq(strlen(out), LV_ERROR_SNIPPET_BYTES);
  char tiny[4];
  lv_error_text(b, strlen(b), tiny, sizeof tiny);
  cr_assert_str_eq(tiny, "Int");
}

Test(live_files, trace_names) {
  cr_assert(lv_is_trace_name("triage-trace-prefill-1.5-TP-0.trace.json.gz"));
  cr_assert(lv_is_trace_name("host_12.34.pt.trace.json"));
  cr_assert(lv_is_trace_name("trace.json"));
  cr_assert_not(lv_is_trace_name("server_args.json"));
  cr_assert_not(lv_is_trace_name("config.json"));
  cr_assert_not(lv_is_trace_name(".tmp-x.trace.json.gz"));
  cr_assert_not(lv_is_trace_name("trace.json.gz.part"));
  cr_assert_not(lv_is_trace_name("notes.txt"));
}

Test(live_fw, ids_and_hints) {
  cr_assert_eq(lv_fw_from_id("vllm"), LV_FW_VLLM);
  cr_assert_eq(lv_fw_from_id("tllm"), LV_FW_NONE); /* aliases are the rule packs' job */
  cr_assert_str_eq(lv_fw_label(LV_FW_TRTLLM), "TensorRT-LLM");
  char h[768];
  cr_assert(strstr(lv_enable_hint(LV_FW_VLLM, "/p", h, sizeof h),
                   "--profiler-config '{\"profiler\":\"torch\",\"torch_profiler_dir\":\"/p\"}'"));
  cr_assert(strstr(h, "VLLM_TORCH_PROFILER_DIR"));
  lv_enable_hint(LV_FW_TRTLLM, "/p", h, sizeof h);
  cr_assert(strstr(h, "TLLM_PROFILE_START_STOP") && strstr(h, "TLLM_TORCH_PROFILE_TRACE"));
  lv_enable_hint(LV_FW_SGLANG, "/p", h, sizeof h);
  cr_assert(strstr(h, "SGLANG_TORCH_PROFILER_DIR"));
  lv_enable_hint(LV_FW_TOKENSPEED, NULL, h, sizeof h);
  cr_assert(strstr(h, "/start_profile"));
}

Test(live_http, refused_is_classified) {
  /* Port 1 on loopback: nothing listens there in a test environment. */
  lv_http h = {NULL, false};
  lv_reply r;
  lv_http_status s = lv_http_request(&h, "GET", "http://127.0.0.1:1/v1/models", NULL, 5, &r);
  cr_assert_eq(s, LV_HTTP_REFUSED, "status %d (%s)", s, r.error);
  lv_reply_free(&r);
}

Test(live_run, refuses_without_url) {
  lv_options o;
  memset(&o, 0, sizeof o);
  lv_result res;
  char err[256];
  cr_assert_not(lv_wanted(&o));
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_FAIL);
  cr_assert(strstr(err, "--url"));
}

Test(live_run, unreachable_names_the_url) {
  lv_options o;
  memset(&o, 0, sizeof o);
  o.url = "http://127.0.0.1:1/";
  o.framework = "sglang";
  o.num_steps = 2;
  o.workload = LV_WORKLOAD_BOTH;
  o.profile_by_stage = -1;
  o.prefill_input_len = 16;
  o.decode_input_len = 1;
  lv_result res;
  char err[LV_ERR_CAP];
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_FAIL);
  cr_assert_str_eq(err, "cannot connect to http://127.0.0.1:1/ (connection refused)");
  cr_assert_null(res.input);
}

Test(live_run, unusable_values_are_usage_errors_before_any_request) {
  lv_options o;
  memset(&o, 0, sizeof o);
  o.url = "http://127.0.0.1:1/"; /* never contacted: validation comes first */
  o.framework = "sglang";
  o.num_steps = 5;
  o.workload = LV_WORKLOAD_BOTH;
  o.prefill_input_len = 16;
  o.decode_input_len = 1;
  lv_result res;
  char err[LV_ERR_CAP];
  o.warmup_steps = LV_MAX_REQUESTS_PER_STAGE;
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_USAGE);
  cr_assert(strstr(err, "--warmup-steps"), "%s", err);
  /* Just at the limit: warm-up plus 5 capture requests of the prefill stage. */
  o.warmup_steps = LV_MAX_REQUESTS_PER_STAGE - 5;
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_FAIL);
  o.warmup_steps = 1;
  o.prefill_input_len = LV_MAX_PROMPT_WORDS + 1;
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_USAGE);
  cr_assert(strstr(err, "--prefill-input-len"), "%s", err);
  o.prefill_input_len = 16;
  o.workload = LV_WORKLOAD_DECODE;
  o.decode_input_len = 0;
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_USAGE);
  cr_assert(strstr(err, "--decode-input-len"), "%s", err);
  o.workload = (lv_workload)7; /* not a workload */
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_USAGE);
  o.workload = LV_WORKLOAD_LEGACY;
  o.num_steps = 0;
  cr_assert_eq(lv_run(&o, NULL, NULL, &res, err, sizeof err), LV_USAGE);
}

#include <sys/stat.h>
#include <unistd.h>

static void touch(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

Test(live_files, snapshot_sees_new_and_rewritten_files) {
  char dir[] = "/tmp/triage-test-live-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char a[256], b[256], sub[256], c[256], side[256];
  snprintf(a, sizeof a, "%s/a.trace.json", dir);
  snprintf(b, sizeof b, "%s/b.pt.trace.json.gz", dir);
  snprintf(sub, sizeof sub, "%s/run/x", dir);
  snprintf(c, sizeof c, "%s/run/x/c.trace.json", dir);
  snprintf(side, sizeof side, "%s/server_args.json", dir);
  touch(a, "{}");
  touch(side, "{}");
  lv_snapshot before, now, fresh;
  cr_assert_eq(lv_snapshot_take(dir, 3, &before), 0);
  cr_assert_eq(before.n, 1); /* server_args.json is not a trace */
  touch(b, "{}");
  touch(a, "{\"traceEvents\":[]}"); /* rewritten in place: size changes */
  cr_assert_eq(lv_mkdirs(sub), 0);
  touch(c, "{}");
  cr_assert_eq(lv_snapshot_take(dir, 3, &now), 0);
  cr_assert_eq(lv_snapshot_new(&before, &now, &fresh), 0);
  cr_assert_eq(fresh.n, 3);
  lv_snapshot_free(&now);
  lv_snapshot_free(&fresh);
  /* Depth 1: only direct children. */
  cr_assert_eq(lv_snapshot_take(dir, 1, &now), 0);
  cr_assert_eq(now.n, 2);
  lv_snapshot_free(&now);
  /* A missing directory is an empty snapshot, not an error (the server creates it). */
  cr_assert_eq(lv_snapshot_take("/nonexistent/triage/dir", 3, &now), 0);
  cr_assert_eq(now.n, 0);
  lv_snapshot_free(&before);
  remove(c);
  remove(b);
  remove(a);
  remove(side);
  snprintf(c, sizeof c, "%s/run", dir);
  rmdir(sub);
  rmdir(c);
  rmdir(dir);
}

Test(live_files, mkdirs_refuses_a_file_in_the_way) {
  char dir[] = "/tmp/triage-test-live-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char f[256], under[300];
  snprintf(f, sizeof f, "%s/file", dir);
  touch(f, "x");
  cr_assert_eq(lv_mkdirs(f), -1);
  snprintf(under, sizeof under, "%s/file/sub", dir);
  cr_assert_eq(lv_mkdirs(under), -1);
  remove(f);
  rmdir(dir);
}
