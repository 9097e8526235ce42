/*
 * fuzz_live_reply.c - libFuzzer harness for parsing inference-server HTTP replies.
 *
 * Live capture (src/live) reads replies from a server it does not control. This harness
 * drives the pure reply parsers of src/live/lv_internal.h that lv_run uses on them:
 * lv_parse_model_id (/v1/models), lv_json_has_list (URL probes with json_list_key),
 * lv_error_text (any error body, shown in a one-line message), plus lv_is_trace_name and
 * lv_url_join on hostile text. /server_info has no parser of its own in src/live yet, so
 * kind 1 also walks a reply the way a server-args object is read and saved.
 * The first input byte picks the kind; the rest is the body (not NUL-terminated).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "live/lv_internal.h"
#include "util/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "fuzz_live_reply: invariant failed: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                               \
    }                                                                                        \
  } while (0)

/* Copies a one-line, printable summary of s into out (what an error message would
 * show), replacing control bytes. */
static void summarize(const char *s, char *out, size_t cap) {
  size_t j = 0;
  for (size_t i = 0; s[i] && j + 1 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    out[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
  }
  out[j] = '\0';
  CHECK(strchr(out, '\n') == NULL);
}

static const char *string_member(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* /server_info: an object of server arguments; collect its keys and print it back the
 * way server_args.json is saved. */
static void server_info(const cJSON *root, char *out, size_t cap) {
  if (!cJSON_IsObject(root)) return;
  size_t nkeys = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, root) {
    if (it->string) summarize(it->string, out, cap);
    nkeys++;
  }
  const char *model = string_member(root, "model_path");
  if (model) summarize(model, out, cap);
  const cJSON *tp = cJSON_GetObjectItemCaseSensitive(root, "tp_size");
  if (cJSON_IsNumber(tp)) (void)tp->valueint;
  char *text = cJSON_PrintUnformatted(root);
  if (text) {
    cJSON *again = cJSON_Parse(text); /* what we save must read back */
    CHECK(again != NULL);
    cJSON_Delete(again);
    cJSON_free(text);
  }
  (void)nkeys;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  unsigned kind = data[0] % 4;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  if (len > LV_MAX_REPLY_BYTES) return 0; /* live capture refuses longer replies */

  char out[512];
  out[0] = '\0';
  switch (kind) {
    case 0: {
      char *id = lv_parse_model_id(body, len);
      if (id) {
        CHECK(id[0] != '\0');
        free(id);
      }
      break;
    }
    case 1: {
      (void)lv_json_has_list(body, len, "data");
      (void)lv_json_has_list(body, len, "models");
      cJSON *root = cJSON_ParseWithLength(body, len);
      if (root) server_info(root, out, sizeof out);
      cJSON_Delete(root);
      break;
    }
    case 2: {
      lv_error_text(body, len, out, sizeof out);
      size_t n = strlen(out);
      CHECK(n < sizeof out);
      CHECK(n <= LV_ERROR_SNIPPET_BYTES);
      for (size_t i = 0; i < n; i++) CHECK((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
      CHECK(n == 0 || (out[0] != ' ' && out[n - 1] != ' '));
      char tiny[8];
      lv_error_text(body, len, tiny, sizeof tiny);
      CHECK(strlen(tiny) < sizeof tiny);
      break;
    }
    default: {
      /* Text a server or a directory listing hands us: file names and URLs. */
      char *text = malloc(len + 1);
      if (!text) return 0;
      memcpy(text, body, len);
      text[len] = '\0';
      (void)lv_is_trace_name(text);
      char *url = lv_url_join(text, "/v1/models");
      free(url);
      url = lv_url_join("http://127.0.0.1:30000", text);
      free(url);
      free(text);
      break;
    }
  }
  return 0;
}
