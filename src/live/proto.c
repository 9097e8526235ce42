/*
 * live/proto.c - what each framework's HTTP contract looks like on the wire: request
 * bodies, reply parsing, URL joining, enablement hints. Pure functions (no I/O), so the
 * unit tests pin the exact bytes triage sends.
 *
 * The endpoint bodies follow docs/reference.md §3; the enablement hints quote
 * the documented server switches so a 404 tells the user what to change.
 */
#include "live/lv_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const lv_fw_ids[] = {"sglang", "vllm", "trtllm", "tokenspeed"};
static const char *const lv_fw_labels[] = {"SGLang", "vLLM", "TensorRT-LLM", "TokenSpeed"};

lv_fw lv_fw_from_id(const char *id) {
  if (!id) return LV_FW_NONE;
  for (int i = 0; i < (int)LV_FW_NONE; i++)
    if (strcmp(id, lv_fw_ids[i]) == 0) return (lv_fw)i;
  return LV_FW_NONE;
}

const char *lv_fw_id(lv_fw fw) { return fw < LV_FW_NONE ? lv_fw_ids[fw] : "unknown"; }
const char *lv_fw_label(lv_fw fw) { return fw < LV_FW_NONE ? lv_fw_labels[fw] : "unknown"; }

const char *lv_enable_hint(lv_fw fw, const char *dir, char *buf, size_t cap) {
  const char *d = dir ? dir : "DIR";
  switch (fw) {
    case LV_FW_SGLANG:
      snprintf(buf, cap,
               "start the SGLang server (python -m sglang.launch_server, which serves POST "
               "/start_profile and /stop_profile) with SGLANG_TORCH_PROFILER_DIR=%s in its "
               "environment, or capture a trace yourself and pass it with --input",
               d);
      break;
    case LV_FW_VLLM:
      snprintf(buf, cap,
               "start vLLM with --profiler-config "
               "'{\"profiler\":\"torch\",\"torch_profiler_dir\":\"%s\"}' (older vLLM: "
               "VLLM_TORCH_PROFILER_DIR=%s in its environment) and pass the same directory "
               "as --output-dir",
               d, d);
      break;
    case LV_FW_TRTLLM:
      snprintf(buf, cap,
               "start trtllm-serve --backend pytorch with TLLM_PROFILE_START_STOP=<start>-<stop> "
               "(e.g. 10-20) and TLLM_TORCH_PROFILE_TRACE=%s/trace.json.gz in its "
               "environment; without /start_profile, send requests yourself and pass the "
               "trace with --input",
               d);
      break;
    case LV_FW_TOKENSPEED:
      snprintf(buf, cap,
               "use a TokenSpeed server that serves POST /start_profile and /stop_profile "
               "(it writes to the output_dir triage sends, else TOKENSPEED_PROFILER_DIR, "
               "else /tmp), or capture a trace yourself and pass it with --input");
      break;
    default:
      snprintf(buf, cap, "this framework has no live-capture contract; use --input");
      break;
  }
  return buf;
}

char *lv_url_join(const char *base, const char *path) {
  size_t bl = strcspn(base, "?#");
  while (bl > 0 && base[bl - 1] == '/') bl--;
  while (*path == '/') path++;
  size_t pl = strlen(path);
  char *u = malloc(bl + 1 + pl + 1);
  if (!u) return NULL;
  memcpy(u, base, bl);
  u[bl] = '/';
  memcpy(u + bl + 1, path, pl);
  u[bl + 1 + pl] = '\0';
  return u;
}

char *lv_make_prompt(long words, long index) {
  if (words < 1 || words > LV_MAX_PROMPT_WORDS || index < 0) return NULL;
  char first[48];
  int fl = snprintf(first, sizeof first, "profile_probe_%ld", index);
  static const char rest[] = " profile";
  size_t n = (size_t)fl + (size_t)(words - 1) * (sizeof rest - 1) + 1;
  char *p = malloc(n);
  if (!p) return NULL;
  memcpy(p, first, (size_t)fl);
  char *w = p + fl;
  for (long i = 1; i < words; i++) {
    memcpy(w, rest, sizeof rest - 1);
    w += sizeof rest - 1;
  }
  *w = '\0';
  return p;
}

/* Prints and frees the object; NULL when any step ran out of memory. */
static char *lv_print(cJSON *o, bool ok) {
  char *s = ok && o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return s;
}

static bool lv_add_str(cJSON *o, const char *k, const char *v) {
  return cJSON_AddStringToObject(o, k, v) != NULL;
}

static bool lv_add_activities(cJSON *o) {
  static const char *const acts[] = {"CPU", "GPU"};
  cJSON *a = cJSON_CreateStringArray(acts, 2);
  if (!a) return false;
  cJSON_AddItemToObject(o, "activities", a);
  return true;
}

char *lv_body_sglang_start(const lv_sglang_start *s) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
  if (ok) ok = lv_add_str(o, "output_dir", s->output_dir);
  if (ok && s->num_steps > 0) {
    /* SGLang's own client sends num_steps as a string; match it. */
    char n[32];
    snprintf(n, sizeof n, "%ld", s->num_steps);
    ok = lv_add_str(o, "num_steps", n);
  }
  if (ok) ok = lv_add_activities(o);
  if (ok) ok = cJSON_AddBoolToObject(o, "profile_by_stage", s->profile_by_stage) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(o, "merge_profiles", s->merge_profiles) != NULL;
  if (ok && s->profile_prefix) ok = lv_add_str(o, "profile_prefix", s->profile_prefix);
  if (ok && s->start_step) ok = lv_add_str(o, "start_step", s->start_step);
  return lv_print(o, ok);
}

char *lv_body_tokenspeed_start(const char *output_dir, const char *profile_id) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
  if (ok) ok = lv_add_str(o, "output_dir", output_dir);
  if (ok) ok = lv_add_activities(o);
  /* with_stack is what makes kernel -> Python attribution possible. */
  if (ok) ok = cJSON_AddBoolToObject(o, "with_stack", 1) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(o, "record_shapes", 0) != NULL;
  if (ok) ok = lv_add_str(o, "profile_id", profile_id);
  return lv_print(o, ok);
}

char *lv_body_sglang_generate(const char *text, long seed, long max_new_tokens) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
  if (ok) ok = lv_add_str(o, "text", text);
  cJSON *sp = ok ? cJSON_AddObjectToObject(o, "sampling_params") : NULL;
  ok = ok && sp;
  if (ok) ok = cJSON_AddNumberToObject(sp, "sampling_seed", (double)seed) != NULL;
  if (ok) ok = cJSON_AddNumberToObject(sp, "temperature", 0.0) != NULL;
  if (ok) ok = cJSON_AddNumberToObject(sp, "max_new_tokens", (double)max_new_tokens) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(o, "stream", 0) != NULL;
  return lv_print(o, ok);
}

char *lv_body_chat(const char *model, const char *text, long max_tokens) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
  if (ok && model) ok = lv_add_str(o, "model", model);
  cJSON *msgs = ok ? cJSON_AddArrayToObject(o, "messages") : NULL;
  cJSON *m = msgs ? cJSON_CreateObject() : NULL;
  ok = ok && m;
  if (ok) {
    cJSON_AddItemToArray(msgs, m);
    ok = lv_add_str(m, "role", "user") && lv_add_str(m, "content", text);
  }
  if (ok) ok = cJSON_AddNumberToObject(o, "temperature", 0.0) != NULL;
  if (ok) ok = cJSON_AddNumberToObject(o, "max_tokens", (double)max_tokens) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(o, "stream", 0) != NULL;
  return lv_print(o, ok);
}

char *lv_body_completion(const char *model, const char *text, long max_tokens) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
  if (ok && model) ok = lv_add_str(o, "model", model);
  if (ok) ok = lv_add_str(o, "prompt", text);
  if (ok) ok = cJSON_AddNumberToObject(o, "temperature", 0.0) != NULL;
  if (ok) ok = cJSON_AddNumberToObject(o, "max_tokens", (double)max_tokens) != NULL;
  if (ok) ok = cJSON_AddBoolToObject(o, "stream", 0) != NULL;
  return lv_print(o, ok);
}

char *lv_parse_model_id(const char *body, size_t len) {
  if (!body) return NULL;
  cJSON *o = cJSON_ParseWithLength(body, len);
  char *id = NULL;
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(o, "data");
  const cJSON *first = cJSON_IsArray(data) ? cJSON_GetArrayItem(data, 0) : NULL;
  const cJSON *jid = cJSON_GetObjectItemCaseSensitive(first, "id");
  if (cJSON_IsString(jid) && jid->valuestring[0]) id = strdup(jid->valuestring);
  cJSON_Delete(o);
  return id;
}

bool lv_json_has_list(const char *body, size_t len, const char *key) {
  if (!body) return false;
  cJSON *o = cJSON_ParseWithLength(body, len);
  bool yes = cJSON_IsObject(o) && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, key));
  cJSON_Delete(o);
  return yes;
}

/* Copies at most LV_ERROR_SNIPPET_BYTES of s into out, whitespace-collapsed, one line. */
static void lv_one_line(const char *s, size_t len, char *out, size_t cap) {
  size_t lim = cap - 1;
  if (lim > LV_ERROR_SNIPPET_BYTES) lim = LV_ERROR_SNIPPET_BYTES;
  size_t o = 0;
  bool space = true; /* drops leading blanks */
  for (size_t i = 0; i < len && o < lim; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20 || ch == 0x7f || ch == ' ') {
      if (!space) out[o++] = ' ';
      space = true;
    } else {
      out[o++] = (char)ch;
      space = false;
    }
  }
  while (o > 0 && out[o - 1] == ' ') o--;
  out[o] = '\0';
}

static const char *lv_json_message(const cJSON *o, int depth) {
  static const char *const keys[] = {"message", "detail", "error", "msg"};
  if (!cJSON_IsObject(o) || depth > 2) return NULL;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    if (cJSON_IsString(v) && v->valuestring[0]) return v->valuestring;
    const char *nested = lv_json_message(v, depth + 1);
    if (nested) return nested;
    /* FastAPI validation errors: "detail": [{"msg": ...}] */
    if (cJSON_IsArray(v)) {
      nested = lv_json_message(cJSON_GetArrayItem(v, 0), depth + 1);
      if (nested) return nested;
    }
  }
  return NULL;
}

void lv_error_text(const char *body, size_t len, char *out, size_t cap) {
  if (cap == 0) return;
  out[0] = '\0';
  if (!body || len == 0) return;
  cJSON *o = cJSON_ParseWithLength(body, len);
  const char *m = lv_json_message(o, 0);
  if (m)
    lv_one_line(m, strlen(m), out, cap);
  else
    lv_one_line(body, len, out, cap);
  cJSON_Delete(o);
}

bool lv_is_trace_name(const char *name) {
  static const char *const side[] = {"server_args.json", "metadata.json", "config.json"};
  for (size_t i = 0; i < sizeof side / sizeof side[0]; i++)
    if (strcmp(name, side[i]) == 0) return false;
  if (name[0] == '.') return false; /* editors' and rsync's temporaries */
  size_t n = strlen(name);
  return (n > 5 && strcmp(name + n - 5, ".json") == 0) ||
         (n > 8 && strcmp(name + n - 8, ".json.gz") == 0);
}
