/* report/json_stream.c - see json_stream.h. */
#include "report/json_stream.h"

#include <stdlib.h>
#include <string.h>

#include "util/limits.h"

_Static_assert(RP_JSON_STREAM_DEPTH < 64, "one bit per depth in has_items and arrays");

void rp_jstream_init(rp_jstream *w, FILE *out) { *w = (rp_jstream){out, 0, 0, 0, true}; }

bool rp_jstream_ok(const rp_jstream *w) { return w->ok; }

void rp_jstream_begin(rp_jstream *w, FILE *out) {
  rp_jstream_init(w, out);
  rp_jstream_object_open(w);
}

int rp_jstream_end(rp_jstream *w, bool ok) {
  rp_jstream_object_close(w);
  if (fputc('\n', w->out) == EOF) ok = false;
  return ok && w->ok ? 0 : -1;
}

static void put(rp_jstream *w, const char *s, size_t n) {
  if (w->ok && n && fwrite(s, 1, n, w->out) != n) w->ok = false;
}

static void tabs(rp_jstream *w, unsigned n) {
  static const char T[] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
  while (n > 0) {
    unsigned k = n < sizeof T - 1 ? n : (unsigned)(sizeof T - 1);
    put(w, T, k);
    n -= k;
  }
}

static bool has_items(const rp_jstream *w) { return (w->has_items >> w->depth) & 1u; }

/* One level in: a container (an array or an object) with nothing in it yet. */
static void enter(rp_jstream *w, bool array) {
  if (w->depth + 1 > RP_JSON_STREAM_DEPTH) {
    w->ok = false;
    return;
  }
  w->depth++;
  uint64_t bit = (uint64_t)1 << w->depth;
  w->has_items &= ~bit;
  w->arrays = array ? w->arrays | bit : w->arrays & ~bit;
}

static void leave(rp_jstream *w) {
  if (w->depth) w->depth--;
}

/* Marks the current container as holding something; true when it already did. */
static bool next_item(rp_jstream *w) {
  bool had = has_items(w);
  w->has_items |= (uint64_t)1 << w->depth;
  return had;
}

/* Before a value: inside an array, the ", " after the element before it; inside an
 * object the value follows its key. */
static void element(rp_jstream *w) {
  if (((w->arrays >> w->depth) & 1u) && next_item(w)) put(w, ", ", 2);
}

void rp_jstream_object_open(rp_jstream *w) {
  element(w);
  put(w, "{\n", 2);
  enter(w, false);
}

void rp_jstream_object_close(rp_jstream *w) {
  if (has_items(w)) put(w, "\n", 1);
  tabs(w, w->depth ? w->depth - 1 : 0);
  put(w, "}", 1);
  leave(w);
}

void rp_jstream_array_open(rp_jstream *w) {
  element(w);
  put(w, "[", 1);
  enter(w, true);
}

void rp_jstream_array_close(rp_jstream *w) {
  put(w, "]", 1);
  leave(w);
}

/* Whether cJSON writes s as it is between quotes (it escapes '"', '\\' and bytes below
 * 0x20 only). */
static bool plain(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == '"' || *p == '\\') return false;
  return true;
}

void rp_jstream_key(rp_jstream *w, const char *key) {
  if (next_item(w)) put(w, ",\n", 2);
  tabs(w, w->depth);
  if (plain(key)) {
    put(w, "\"", 1);
    put(w, key, strlen(key));
    put(w, "\"", 1);
  } else { /* a key from the trace: cJSON's own escapes, as its printer writes keys */
    cJSON *k = cJSON_CreateString(key);
    char *text = k ? cJSON_PrintUnformatted(k) : NULL;
    if (!text) w->ok = false;
    put(w, text ? text : "", text ? strlen(text) : 0);
    free(text);
    cJSON_Delete(k);
  }
  put(w, ":\t", 2);
}

void rp_jstream_value(rp_jstream *w, const cJSON *v) {
  element(w);
  char *text = w->ok ? cJSON_Print(v) : NULL;
  if (!text) {
    w->ok = false;
    return;
  }
  const char *p = text;
  for (const char *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
    put(w, p, (size_t)(nl - p) + 1);
    tabs(w, w->depth);
  }
  put(w, p, strlen(p));
  free(text);
}

bool rp_jstream_value_take(rp_jstream *w, cJSON *v) {
  rp_jstream_value(w, v);
  cJSON_Delete(v);
  return v != NULL;
}

bool rp_jstream_list(rp_jstream *w, const char *key, size_t n, rp_jstream_item item,
                     const void *items) {
  bool ok = true;
  rp_jstream_key(w, key);
  rp_jstream_array_open(w);
  for (size_t i = 0; ok && i < n; i++) ok = rp_jstream_value_take(w, item(items, i));
  rp_jstream_array_close(w);
  return ok;
}

void rp_jstream_members(rp_jstream *w, const cJSON *o) {
  for (const cJSON *c = o ? o->child : NULL; c; c = c->next) {
    rp_jstream_key(w, c->string);
    rp_jstream_value(w, c);
  }
}
