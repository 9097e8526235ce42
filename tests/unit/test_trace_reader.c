/* Unit tests for the streaming trace reader (src/trace/kineto.c, lexer.c, trace.c, source.c,
 * intern.c). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip_member.h"
#include "trace/idmap.h"
#include "trace/intern.h"
#include "trace/source.h"
#include "trace/trace.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

/* ------------------------------------------------------------------ helpers */

/* gzip with one member per piece of the text (split at the given byte positions). */
static unsigned char *gzip_multi(const char *text, const size_t *cuts, size_t n_cuts,
                                 size_t *out_len) {
  size_t len = strlen(text), total = 0, prev = 0;
  unsigned char *all = NULL;
  for (size_t i = 0; i <= n_cuts; i++) {
    size_t end = i < n_cuts ? cuts[i] : len;
    size_t ml;
    unsigned char *m = gzip_member(text + prev, end - prev, &ml);
    all = realloc(all, total + ml);
    memcpy(all + total, m, ml);
    total += ml;
    free(m);
    prev = end;
  }
  *out_len = total;
  return all;
}

static tr_trace *read_str(const char *json, size_t chunk, tr_error *err) {
  tr_read_options o;
  memset(&o, 0, sizeof o);
  o.chunk_size = chunk;
  return tr_trace_read_buffer("test.json", json, strlen(json), &o, err);
}

static tr_trace *read_ok(const char *json) {
  tr_error err;
  tr_trace *t = read_str(json, 0, &err);
  cr_assert_not_null(t, "read failed: %s (offset %llu)", err.message,
                     (unsigned long long)err.offset);
  return t;
}

static size_t count(const tr_trace *t, tr_kind k) {
  size_t n;
  if (k == TR_KIND_PYFRAME)
    tr_trace_pyframes(t, &n);
  else
    tr_trace_events(t, k, &n);
  return n;
}

static const tr_event *first(const tr_trace *t, tr_kind k) {
  size_t n;
  const tr_event *e = tr_trace_events(t, k, &n);
  cr_assert_gt(n, 0, "no event of kind %d", (int)k);
  return e;
}

/* The warnings of one read, in the order the reader reported them. */
typedef struct warnings {
  tr_warning w[4];
  char path[64];
  size_t n;
} warnings;

static void collect_warning(void *ctx, const tr_warning *w) {
  warnings *ws = ctx;
  cr_assert_lt(ws->n, 4, "too many warnings");
  ws->w[ws->n] = *w;
  snprintf(ws->path, sizeof ws->path, "%s", w->path);
  ws->w[ws->n++].path = ws->path;
}

/* Reads doc as NAME with its warnings collected into *ws. */
static tr_trace *read_capturing_warnings(const char *name, const char *doc, warnings *ws) {
  memset(ws, 0, sizeof *ws);
  tr_read_options o;
  memset(&o, 0, sizeof o);
  o.warn = collect_warning;
  o.warn_ctx = ws;
  tr_error err;
  tr_trace *t = tr_trace_read_buffer(name, doc, strlen(doc), &o, &err);
  cr_assert_not_null(t, "%s", err.message);
  return t;
}

/* A canonical text dump of everything the reader keeps, for equivalence tests. */
static char *dump(const tr_trace *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  for (int k = 0; k < 7; k++) {
    size_t n;
    const tr_event *e = tr_trace_events(t, (tr_kind)k, &n);
    for (size_t i = 0; i < n; i++)
      fprintf(f, "%d|%.17g|%.17g|%lld|%lld|%s|%s|%s|%s|%s|%u\n", k, tr_event_ts(t, &e[i]),
              tr_event_dur(t, &e[i]), (long long)tr_event_external_id(t, &e[i]),
              (long long)tr_event_correlation(t, &e[i]), tr_str_get(t, e[i].name),
              tr_str_get(t, tr_event_cat(t, &e[i])), tr_str_get(t, tr_event_pid(t, &e[i])),
              tr_str_get(t, tr_event_tid(t, &e[i])), tr_str_get(t, tr_event_stream(t, &e[i])),
              e[i].index);
    for (size_t i = 0; i < n; i++)
      for (int a = 0; a < TR_ARG_COUNT; a++)
        if (tr_event_arg(t, (tr_kind)k, &e[i], (tr_arg)a))
          fprintf(f, "A|%d|%zu|%s|%s\n", k, i, tr_arg_key((tr_arg)a),
                  tr_str_get(t, tr_event_arg(t, (tr_kind)k, &e[i], (tr_arg)a)));
  }
  size_t np;
  const tr_pyframe *py = tr_trace_pyframes(t, &np);
  for (size_t i = 0; i < np; i++) {
    const tr_pyframe_run *run = tr_pyframe_run_of(t, i);
    fprintf(f, "P|%.17g|%.17g|%s|%s|%s\n", tr_pyframe_ts(t, &py[i]), tr_pyframe_dur(t, &py[i]),
            tr_str_get(t, py[i].name), tr_str_get(t, run->pid), tr_str_get(t, run->tid));
  }
  size_t n;
  const tr_thread_name *tn = tr_trace_thread_names(t, &n);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "T|%s|%s|%s\n", tr_str_get(t, tn[i].pid), tr_str_get(t, tn[i].tid),
            tr_str_get(t, tn[i].name));
  const tr_trace_meta *m = tr_trace_meta_get(t);
  for (size_t i = 0; i < m->n_processes; i++)
    fprintf(f, "M|%s|%s\n", tr_str_get(t, m->processes[i].pid),
            tr_str_get(t, m->processes[i].name));
  fprintf(f, "H|%s|%llu\n", tr_str_get(t, m->host_name),
          (unsigned long long)tr_trace_args_dropped(t));
  fprintf(f, "S|%s\nN|%llu|%llu\n", tr_trace_sample_text(t),
          (unsigned long long)tr_trace_event_count(t),
          (unsigned long long)tr_trace_skipped_count(t));
  fclose(f);
  return buf;
}

static const char *k_doc =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU \\u00e9\", \"x\": "
    "[[1,2],[3,{\"a\":null}]]}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 7, \"tid\": 9, \"args\": {\"name\": "
    "\"stream 7\"}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 100, \"tid\": 100, "
    "\"ts\": 10.5, \"dur\": 4,"
    "   \"args\": {\"External id\": 11, \"Input Dims\": [[4, 4], [4, 4]], \"Ev Idx\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, "
    "\"tid\": 100, \"ts\": 11, \"dur\": 2,"
    "   \"args\": {\"External id\": 11, \"correlation\": 501}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm<float>(float*)\", \"pid\": 0, "
    "\"tid\": 7, \"ts\": 2413669097444.592, \"dur\": 1.76,"
    "   \"args\": {\"correlation\": 501, \"stream\": 7, \"grid\": [1, 1, 1]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"model.py(12): forward\", \"pid\": "
    "100, \"tid\": 100, \"ts\": 9, \"dur\": 8, \"args\": {\"Python id\": 2}},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step[DECODE bs=32]\", \"pid\": "
    "100, \"tid\": 100, \"ts\": 8, \"dur\": 20},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"decode\", \"pid\": 0, "
    "\"tid\": 7, \"ts\": 2413669097444, \"dur\": 3},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": "
    "100, \"tid\": 100, \"ts\": 30, \"dur\": 1, \"args\": {\"correlation\": 502}},\n"
    "  {\"ph\": \"f\", \"id\": 501, \"pid\": 0, \"tid\": 7, \"ts\": 11, \"cat\": \"ac2g\", "
    "\"name\": \"ac2g\", \"bp\": \"e\"},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 40, \"dur\": 2, \"args\": {\"stream\": 7}}\n"
    " ],\n"
    " \"distributedInfo\": {\"rank\": 0}, \"traceName\": \"x\"}\n";

/* ------------------------------------------------------------------ equivalence */

/* find answers what put stored, stores nothing, and keeps answering across growth. */
Test(trace_intern, find_agrees_with_put_and_stores_nothing) {
  tr_intern *in = tr_intern_create();
  cr_assert_not_null(in);
  char key[32];
  for (unsigned i = 0; i < 5000; i++) { /* several slot-table growths */
    snprintf(key, sizeof key, "name_%u", i);
    cr_assert_eq(tr_intern_find(in, key, strlen(key)), UINT32_MAX, "%s: not stored yet", key);
    uint32_t id = tr_intern_put(in, key, strlen(key));
    cr_assert_eq(id, i + 1);
    cr_assert_eq(tr_intern_find(in, key, strlen(key)), id);
  }
  size_t n = tr_intern_count(in);
  for (unsigned i = 0; i < 5000; i += 97) {
    snprintf(key, sizeof key, "name_%u", i);
    cr_assert_eq(tr_intern_find(in, key, strlen(key)), i + 1);
    cr_assert_eq(tr_intern_find(in, key, strlen(key) - 1), i < 10 ? UINT32_MAX : i / 10 + 1,
                 "a prefix is its own string");
  }
  cr_assert_eq(tr_intern_find(in, "", 0), 0);
  cr_assert_eq(tr_intern_find(in, "name_5000", 9), UINT32_MAX);
  cr_assert_eq(tr_intern_count(in), n, "find stored nothing");
  tr_intern_destroy(in);
}

/* tr_intern_text is tr_intern_get and tr_intern_len in one call, unknown ids included. */
Test(trace_intern, text_is_get_and_len) {
  tr_intern *in = tr_intern_create();
  cr_assert_not_null(in);
  uint32_t a = tr_intern_put(in, "aten::addmm", 11), b = tr_intern_put(in, "x", 1);
  const uint32_t ids[] = {0, a, b, b + 1, UINT32_MAX};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
    size_t n = 99;
    const char *p = tr_intern_text(in, ids[i], &n);
    cr_assert_str_eq(p, tr_intern_get(in, ids[i]));
    cr_assert_eq(n, tr_intern_len(in, ids[i]));
  }
  tr_intern_destroy(in);
}

/* Names of 4 to 16 bytes (the reader's name cache compares them as two overlapping words
 * since session 13, in 4,096 slots that 6,000 names must share) and pids and tids of five
 * digits that differ from the last one in a middle or the last byte only (the one-entry
 * caches, two overlapping 4-byte loads) all read back as written, met once and again. */
Test(trace_reader, names_and_pids_that_differ_in_one_byte) {
  enum { NAMES = 6000, EVENTS = 2 * NAMES };
  static const char *const pids[] = {"10000", "10100", "10001"};
  size_t cap = (size_t)EVENTS * 160 + 64, len = 0;
  char *json = malloc(cap);
  cr_assert_not_null(json);
  len += (size_t)snprintf(json + len, cap - len, "{\"traceEvents\": [\n");
  for (unsigned e = 0; e < EVENTS; e++) {
    unsigned i = e < NAMES ? e : EVENTS - 1 - e; /* each name twice, the second pass reversed */
    int width = 3 + (int)(i % 13);               /* "k" and 3 to 15 digits: 4 to 16 bytes */
    len += (size_t)snprintf(json + len, cap - len,
                            "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"k%0*u\", "
                            "\"pid\": %s, \"tid\": \"%s\", \"ts\": %u, \"dur\": 1}\n",
                            e ? "," : "", width, i, pids[e % 3], pids[(e / 2) % 3], e);
  }
  len += (size_t)snprintf(json + len, cap - len, "]}\n");
  cr_assert_lt(len, cap);
  tr_trace *t = read_ok(json);
  size_t n;
  const tr_event *ev = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  cr_assert_eq(n, EVENTS);
  for (unsigned e = 0; e < EVENTS; e++) {
    unsigned i = e < NAMES ? e : EVENTS - 1 - e;
    char want[32];
    snprintf(want, sizeof want, "k%0*u", 3 + (int)(i % 13), i);
    cr_assert_str_eq(tr_str_get(t, ev[e].name), want, "event %u", e);
    cr_assert_str_eq(tr_str_get(t, tr_event_pid(t, &ev[e])), pids[e % 3], "event %u", e);
    cr_assert_str_eq(tr_str_get(t, tr_event_tid(t, &ev[e])), pids[(e / 2) % 3], "event %u", e);
  }
  tr_trace_destroy(t);
  free(json);
}

Test(trace_reader, basic_document) {
  tr_trace *t = read_ok(k_doc);
  cr_expect_eq(count(t, TR_KIND_KERNEL), 2);
  cr_expect_eq(count(t, TR_KIND_CPU_OP), 1);
  cr_expect_eq(count(t, TR_KIND_LAUNCH), 1);
  cr_expect_eq(count(t, TR_KIND_PYFRAME), 1);
  cr_expect_eq(count(t, TR_KIND_USER_ANNOTATION), 1);
  cr_expect_eq(count(t, TR_KIND_GPU_ANNOTATION), 1);
  cr_expect_eq(count(t, TR_KIND_RUNTIME), 1);
  cr_expect_eq(tr_trace_event_count(t), 10);
  cr_expect_eq(tr_trace_skipped_count(t), 0);
  const tr_event *k = first(t, TR_KIND_KERNEL);
  cr_expect_str_eq(tr_str_get(t, k->name), "void gemm<float>(float*)");
  cr_expect_str_eq(tr_str_get(t, tr_event_stream(t, k)), "7");
  cr_expect_str_eq(tr_str_get(t, tr_event_pid(t, k)), "0");
  cr_expect_eq(tr_event_ts(t, k), 2413669097444.592);
  cr_expect_eq(tr_event_dur(t, k), 1.76);
  cr_expect_eq(tr_event_correlation(t, k), 501);
  cr_expect_eq(tr_event_external_id(t, k), TR_NO_ID);
  cr_expect_eq(k->index, 3);
  cr_expect_eq(tr_trace_external_for_correlation(t, 501), 11);
  cr_expect_eq(tr_trace_external_for_correlation(t, 502), TR_NO_ID);
  size_t n;
  const tr_thread_name *tn = tr_trace_thread_names(t, &n);
  cr_assert_eq(n, 1);
  cr_expect_str_eq(tr_str_get(t, tn[0].pid), "7");
  cr_expect_str_eq(tr_str_get(t, tn[0].tid), "9");
  cr_expect_str_eq(tr_str_get(t, tn[0].name), "stream 7");
  cr_expect_eq(tr_trace_json_bytes(t), strlen(k_doc));
  const char *s = tr_trace_sample_text(t);
  cr_expect(strstr(s, "aten::mm") && strstr(s, "cpu_op") && strstr(s, "External id") &&
                strstr(s, "Ev Idx") && strstr(s, "model.py(12): forward"),
            "sample: %s", s);
  tr_trace_destroy(t);
}

Test(trace_reader, plain_gzip_multimember_and_chunk_sizes_agree) {
  tr_trace *ref = read_ok(k_doc);
  char *want = dump(ref);
  tr_trace_destroy(ref);
  size_t len = strlen(k_doc);
  size_t gl, ml;
  unsigned char *gz = gzip_member(k_doc, len, &gl);
  size_t cuts[] = {1, 17, 200, 201, len / 2, len - 3};
  unsigned char *multi = gzip_multi(k_doc, cuts, sizeof cuts / sizeof cuts[0], &ml);
  /* also: zero padding after the last member is tolerated, as gzip(1) does */
  unsigned char *padded = malloc(ml + 16);
  memcpy(padded, multi, ml);
  memset(padded + ml, 0, 16);
  size_t chunks[] = {0, 1, 2, 3, 7, 64, 4096};
  struct {
    const void *buf;
    size_t len;
    const char *what;
  } inputs[] = {
      {k_doc, len, "plain"}, {gz, gl, "gzip"}, {multi, ml, "multi"}, {padded, ml + 16, "padded"}};
  /* both gzip inflaters (ISA-L when built with it, and zlib) */
  tr_inflater inflaters[] = {TR_INFLATE_AUTO, TR_INFLATE_ZLIB};
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0] * 2; c++) {
      tr_read_options o;
      memset(&o, 0, sizeof o);
      o.chunk_size = chunks[c / 2];
      o.inflater = inflaters[c % 2];
      tr_error err;
      tr_trace *t = tr_trace_read_buffer("x", inputs[i].buf, inputs[i].len, &o, &err);
      cr_assert_not_null(t, "%s chunk %zu: %s", inputs[i].what, chunks[c / 2], err.message);
      char *got = dump(t);
      cr_expect_str_eq(got, want, "%s chunk %zu inflater %zu differs", inputs[i].what,
                       chunks[c / 2], c % 2);
      cr_expect_eq(tr_trace_json_bytes(t), len);
      free(got);
      tr_trace_destroy(t);
    }
  }
  free(want);
  free(gz);
  free(multi);
  free(padded);
}

Test(trace_reader, gzip_file_and_magic_not_name) {
  size_t gl;
  unsigned char *gz = gzip_member(k_doc, strlen(k_doc), &gl);
  char path[] = "/tmp/trace_reader_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "wb");
  fwrite(gz, 1, gl, f);
  fclose(f);
  tr_error err;
  tr_read_options o;
  memset(&o, 0, sizeof o);
  tr_trace *t = tr_trace_read(path, &o, &err);
  cr_assert_not_null(t, "%s", err.message);
  cr_expect_eq(count(t, TR_KIND_KERNEL), 2);
  cr_expect_str_eq(tr_trace_path(t), path);
  tr_trace_destroy(t);
  unlink(path);
  free(gz);
}

Test(trace_reader, missing_file_is_io_error) {
  tr_error err;
  tr_trace *t = tr_trace_read("/nonexistent/dir/x.json", NULL, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_IO);
  cr_expect_str_eq(err.message, "no such file or directory");
}

/* ------------------------------------------------------------------ shapes */

Test(trace_reader, bare_array_top_level) {
  tr_trace *t = read_ok(
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2,\"pid\":0,\"tid\":1}]");
  cr_expect_eq(count(t, TR_KIND_KERNEL), 1);
  tr_trace_destroy(t);
  t = read_ok("  [ ]  ");
  cr_expect_eq(tr_trace_event_count(t), 0);
  tr_trace_destroy(t);
}

Test(trace_reader, trace_events_after_other_keys_and_key_order) {
  /* members of an event in any order: cat after name, ph last */
  tr_trace *t = read_ok(
      "{\"deviceProperties\":[{\"a\":{\"b\":[1,2,{}]}}],\"schemaVersion\":1,"
      "\"traceEvents\":[{\"args\":{\"stream\":3},\"dur\":5,\"ts\":1,\"name\":\"k\",\"cat\":"
      "\"kernel\",\"ph\":\"X\"}]}");
  cr_expect_eq(count(t, TR_KIND_KERNEL), 1);
  cr_expect_str_eq(tr_str_get(t, tr_event_stream(t, first(t, TR_KIND_KERNEL))), "3");
  tr_trace_destroy(t);
}

Test(trace_reader, shape_errors) {
  const char *cases[] = {"{\"traceEvents\": {}}",
                         "{\"traceEvents\": 3}",
                         "42",
                         "\"str\"",
                         "null",
                         "{\"schemaVersion\": 1}",
                         "{}",
                         "{\"traceEvents\": [], \"traceEvents\": []}"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tr_error err;
    tr_trace *t = read_str(cases[i], 0, &err);
    cr_expect_null(t, "%s accepted", cases[i]);
    cr_expect_eq(err.code, TR_ERR_SHAPE, "%s: code %d (%s)", cases[i], err.code, err.message);
    tr_trace_destroy(t);
  }
}

Test(trace_reader, empty_input) {
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("e", "", 0, NULL, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_JSON);
  cr_expect(err.has_offset);
  cr_expect_eq(err.offset, 0);
  cr_expect_str_eq(err.message, "empty input");
  t = read_str(" \n\t ", 0, &err);
  cr_assert_null(t);
  cr_expect_str_eq(err.message, "empty input");
}

/* ------------------------------------------------------------------ JSON errors */

Test(trace_reader, truncated_json_reports_offset) {
  const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"abc";
  size_t chunks[] = {0, 1, 5};
  for (size_t c = 0; c < 3; c++) {
    tr_error err;
    tr_trace *t = read_str(doc, chunks[c], &err);
    cr_assert_null(t);
    cr_expect_eq(err.code, TR_ERR_JSON);
    cr_expect(err.has_offset);
    cr_expect_eq(err.offset, strlen(doc), "offset %llu", (unsigned long long)err.offset);
    cr_expect(strstr(err.message, "unterminated string") != NULL, "%s", err.message);
  }
  tr_error err;
  tr_trace *t = read_str("{\"traceEvents\": [{\"ph\": \"X\"}", 0, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_JSON);
  cr_expect_eq(err.offset, 28);
  cr_expect(strstr(err.message, "expected ',' or ']'") != NULL, "%s", err.message);
}

Test(trace_reader, syntax_errors_say_what_was_expected) {
  struct {
    const char *doc;
    uint64_t off;
    const char *msg;
  } cases[] = {
      {"[{\"ph\" \"X\"}]", 7, "expected ':'"},
      {"[{\"ph\": \"X\",}]", 12, "expected a member name"},
      {"[1,]", 3, "expected a JSON value"},
      {"[{\"a\": tru}]", 7, "invalid literal"},
      {"[{\"a\": 01}]", 7, "invalid number"},
      {"[{\"a\": \"\\x\"}]", 9, "invalid escape"},
      {"[{\"a\": \"\\u12G4\"}]", 12, "hex digits"},
      /* skipped values (args members, array elements) are stepped over on a fast path
       * that must still refuse what the full scanner refuses */
      {"[{\"args\": {\"x\": [[01]]}}]", 18, "invalid number"},
      {"[{\"args\": {\"x\": 1.}}]", 16, "invalid number"},
      {"[{\"args\": {\"x\": [1e]}}]", 17, "invalid number"},
      {"[{\"args\": {\"x\": [12x]}}]", 19, "expected ',' or ']'"},
      {"[{\"args\": {\"x\": [\"a\\x\"]}}]", 20, "invalid escape"},
      {"[{\"args\": {\"x\": \"abc}}]", 23, "unterminated string"},
      {"[] x", 3, "expected end of input"},
      {"x", 0, "expected '{' or '['"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tr_error err;
    tr_trace *t = read_str(cases[i].doc, 0, &err);
    cr_expect_null(t, "%s accepted", cases[i].doc);
    cr_expect_eq(err.code, TR_ERR_JSON, "%s: code %d", cases[i].doc, err.code);
    cr_expect_eq(err.offset, cases[i].off, "%s: offset %llu", cases[i].doc,
                 (unsigned long long)err.offset);
    cr_expect(strstr(err.message, cases[i].msg) != NULL, "%s: message '%s'", cases[i].doc,
              err.message);
    tr_trace_destroy(t);
  }
}

Test(trace_reader, deep_nesting_is_a_limit_not_a_crash) {
  size_t depth = 200000;
  char *doc = malloc(2 * depth + 16);
  size_t n = 0;
  doc[n++] = '[';
  for (size_t i = 0; i < depth; i++) doc[n++] = '[';
  for (size_t i = 0; i < depth; i++) doc[n++] = ']';
  doc[n++] = ']';
  doc[n] = 0;
  tr_error err;
  tr_trace *t = read_str(doc, 0, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_LIMIT, "%s", err.message);
  cr_expect_eq(err.offset, TR_MAX_JSON_DEPTH, "offset %llu", (unsigned long long)err.offset);
  /* the same depth inside an event's args, and inside an object */
  n = 0;
  n += (size_t)sprintf(doc, "[{\"args\":");
  for (size_t i = 0; i < depth; i++) doc[n++] = '[';
  doc[n] = 0;
  t = read_str(doc, 0, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_LIMIT, "code %d: %s", err.code, err.message);
  free(doc);
  /* just under the limit is fine */
  char *ok = malloc(2 * TR_MAX_JSON_DEPTH + 8);
  n = 0;
  for (size_t i = 0; i < TR_MAX_JSON_DEPTH; i++) ok[n++] = '[';
  for (size_t i = 0; i < TR_MAX_JSON_DEPTH; i++) ok[n++] = ']';
  ok[n] = 0;
  t = read_str(ok, 0, &err);
  cr_expect_not_null(t, "%s", err.message);
  tr_trace_destroy(t);
  free(ok);
}

Test(trace_reader, long_string_is_a_limit) {
  size_t len = TR_MAX_STRING_BYTES + 10;
  char *doc = malloc(len + 64);
  size_t n = (size_t)sprintf(doc, "[{\"name\": \"");
  memset(doc + n, 'a', len);
  n += len;
  strcpy(doc + n, "\"}]");
  tr_error err;
  tr_trace *t = read_str(doc, 0, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_LIMIT, "%s", err.message);
  free(doc);
}

/* Skipping costs no memory, so a skipped value (or member name) of any length is read
 * past: TR_MAX_STRING_BYTES applies only to what is stored (issue 15). Also in the
 * sample's first events and across chunk boundaries. */
Test(trace_reader, long_skipped_strings_are_not_a_limit) {
  size_t big = 5u * 1024u * 1024u;
  char *doc = malloc(2 * big + 512);
  size_t n =
      (size_t)sprintf(doc,
                      "{\"%s\": 1, \"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\","
                      "\"name\":\"aten::mm\",\"ts\":1,\"dur\":2,\"args\":{\"Input Dims\": \"",
                      "k");
  memset(doc + n, '[', big);
  n += big;
  n += (size_t)sprintf(doc + n, "\", \"");
  memset(doc + n, 'x', big);
  n += big;
  strcpy(doc + n, "\u00e9\": 3, \"External id\": 4}}]}");
  size_t chunks[] = {0, 7, 4096};
  for (size_t c = 0; c < 3; c++) {
    tr_error err;
    tr_trace *t = read_str(doc, chunks[c], &err);
    cr_assert_not_null(t, "chunk %zu: %s", chunks[c], err.message);
    const tr_event *e = first(t, TR_KIND_CPU_OP);
    cr_expect_str_eq(tr_str_get(t, e->name), "aten::mm");
    cr_expect_eq(tr_event_external_id(t, e), 4);
    cr_expect_lt(strlen(tr_trace_sample_text(t)), 4096u, "over-long values stay out of the sample");
    tr_trace_destroy(t);
  }
  free(doc);
}

/* ------------------------------------------------------------------ gzip errors */

Test(trace_reader, truncated_gzip_reports_compressed_offset) {
  size_t gl;
  unsigned char *gz = gzip_member(k_doc, strlen(k_doc), &gl);
  size_t cut = gl / 2;
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.gz", gz, cut, NULL, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_GZIP, "%s", err.message);
  cr_expect(err.has_offset);
  cr_expect_eq(err.offset, cut, "offset %llu", (unsigned long long)err.offset);
  cr_expect(strstr(err.message, "truncated") != NULL, "%s", err.message);
  /* missing trailer only */
  t = tr_trace_read_buffer("t.gz", gz, gl - 4, NULL, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_GZIP);
  /* corrupt body */
  gz[gl / 2] ^= 0x55;
  gz[gl / 2 + 1] ^= 0xff;
  t = tr_trace_read_buffer("t.gz", gz, gl, NULL, &err);
  cr_assert_null(t);
  cr_expect(err.code == TR_ERR_GZIP || err.code == TR_ERR_JSON, "code %d: %s", err.code,
            err.message);
  free(gz);
  /* garbage after a member */
  unsigned char *g2 = gzip_member(k_doc, strlen(k_doc), &gl);
  g2 = realloc(g2, gl + 3);
  memcpy(g2 + gl, "xyz", 3);
  t = tr_trace_read_buffer("t.gz", g2, gl + 3, NULL, &err);
  cr_assert_null(t);
  cr_expect_eq(err.code, TR_ERR_GZIP);
  cr_expect_eq(err.offset, gl);
  free(g2);
}

/* ISA-L and zlib must agree on every outcome: the same events for good input, the same
 * error (code, compressed offset) for truncated, corrupt and trailing-garbage input. In
 * a build without ISA-L both runs use zlib and the test still checks the error paths. */
static void expect_inflaters_agree(const void *buf, size_t len, const char *what) {
  tr_error e1, e2;
  tr_read_options o;
  memset(&o, 0, sizeof o); /* no warn sink: warnings are not reported */
  o.inflater = TR_INFLATE_AUTO;
  tr_trace *a = tr_trace_read_buffer("x", buf, len, &o, &e1);
  o.inflater = TR_INFLATE_ZLIB;
  tr_trace *b = tr_trace_read_buffer("x", buf, len, &o, &e2);
  cr_assert_eq(a != NULL, b != NULL, "%s: one inflater failed: %s / %s", what, e1.message,
               e2.message);
  if (a) {
    char *da = dump(a), *db = dump(b);
    cr_expect_str_eq(da, db, "%s: events differ between inflaters", what);
    cr_expect_eq(tr_trace_json_bytes(a), tr_trace_json_bytes(b), "%s", what);
    free(da);
    free(db);
  } else {
    cr_expect_eq(e1.code, e2.code, "%s: %s / %s", what, e1.message, e2.message);
    /* A bad CRC-32 is found by zlib after the CRC field, by ISA-L after the whole
     * 8-byte trailer (it checks CRC and length together): both point into the trailer. */
    bool trailer = strstr(e1.message, "data check") != NULL;
    uint64_t slack = trailer ? 4 : 0;
    if (e1.code == TR_ERR_GZIP)
      cr_expect(e1.offset >= e2.offset && e1.offset - e2.offset <= slack,
                "%s: offsets %llu / %llu (%s / %s)", what, (unsigned long long)e1.offset,
                (unsigned long long)e2.offset, e1.message, e2.message);
  }
  tr_trace_destroy(a);
  tr_trace_destroy(b);
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  fclose(f);
  return buf;
}

Test(trace_reader, isal_and_zlib_agree) {
  const char *dir = TRIAGE_SHARED_DIR "/traces/real";
  DIR *d = opendir(dir);
  int n = 0;
  while (d) {
    struct dirent *de = readdir(d);
    if (!de) break;
    if (!strstr(de->d_name, ".json.gz")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    size_t len = 0;
    unsigned char *buf = slurp(path, &len);
    cr_assert_not_null(buf, "%s", path);
    expect_inflaters_agree(buf, len, de->d_name);
    n++;
    free(buf);
  }
  if (d) closedir(d);
  /* damaged gzip: truncated at many points, a flipped byte anywhere, garbage after it */
  size_t gl;
  unsigned char *gz = gzip_member(k_doc, strlen(k_doc), &gl);
  char what[64];
  for (size_t cut = 0; cut < gl; cut += 7) {
    snprintf(what, sizeof what, "cut at %zu", cut);
    expect_inflaters_agree(gz, cut, what);
  }
  for (size_t at = 10; at < gl; at += 13) {
    gz[at] ^= 0x5a;
    snprintf(what, sizeof what, "byte %zu flipped", at);
    expect_inflaters_agree(gz, gl, what);
    gz[at] ^= 0x5a;
  }
  unsigned char *tail = malloc(gl + 3);
  memcpy(tail, gz, gl);
  memcpy(tail + gl, "\x1f\x8bx", 3);
  expect_inflaters_agree(tail, gl + 3, "bad second member");
  free(tail);
  free(gz);
  cr_expect(n >= 12 || !d, "only %d shared gzip traces", n);
}

/* ------------------------------------------------------------------ fields */

Test(trace_reader, pids_and_tids_as_text) {
  tr_trace *t = read_ok(
      "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":\"[TP00-DP01] "
      "1234\",\"tid\":\"stream 7\",\"ts\":1,\"dur\":1},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1234,\"tid\":-0,\"ts\":1,\"dur\":1},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"pid\":12.5,\"tid\":1e3,\"ts\":1,\"dur\":1}"
      ","
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"pid\":null,\"ts\":1,\"dur\":1}]");
  size_t n;
  const tr_event *e = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  cr_assert_eq(n, 4);
  cr_expect_str_eq(tr_str_get(t, tr_event_pid(t, &e[0])), "[TP00-DP01] 1234");
  cr_expect_str_eq(tr_str_get(t, tr_event_tid(t, &e[0])), "stream 7");
  cr_expect_str_eq(tr_str_get(t, tr_event_pid(t, &e[1])), "1234");
  cr_expect_str_eq(tr_str_get(t, tr_event_tid(t, &e[1])), "0");
  cr_expect_str_eq(tr_str_get(t, tr_event_pid(t, &e[2])), "12.5");
  cr_expect_str_eq(tr_str_get(t, tr_event_tid(t, &e[2])), "1e3");
  cr_expect_eq(tr_event_pid(t, &e[3]), 0);
  cr_expect_eq(tr_event_pid(t, &e[0]), tr_str_intern(t, "[TP00-DP01] 1234", 16), "interned once");
  tr_trace_destroy(t);
}

/* One event of the compact-record test: NULL members are left out of the JSON. */
typedef struct odd_event {
  const char *cat, *pid, *tid, *stream, *dur;
} odd_event;

static const odd_event k_odd[] = {
    {"cpu_op", "1", "10", NULL, "0.0001"},    /* finer than a nanosecond: side table */
    {"cpu_op", "1", "10", NULL, "5000000.0"}, /* longer than 2^32 ns: side table */
    {"cpu_op", "2", "10", NULL, "123.4567"},  /* four decimals: side table */
    {"cpu_op", "2", "11", NULL, "-0.0"},      /* -0 must stay -0 */
    {"cpu_op", "1", "10", NULL, NULL},        /* absent: 0.0 */
    {"cpu_op", "[TP00] 3", "x", NULL, "1.001"}, {"kernel", "0", "7", "7", "2.25"},
    {"kernel", "0", "7", "8", "4294.967295"}, /* the largest count */
    {"kernel", "0", "8", "7", "7.0000001"},   /* side table, in another kind's array */
    {"gpu_memcpy", "0", "7", "7", "3"},         {"cpu_op", "1", "10", NULL, "0"},
};
#define N_ODD (sizeof k_odd / sizeof k_odd[0])

/* A member "key":"value" and its comma, or nothing for a NULL value. */
static void odd_member(char *buf, size_t cap, const char *key, const char *val, bool quote) {
  if (!val) return;
  size_t n = strlen(buf);
  snprintf(buf + n, cap - n, quote ? "\"%s\":\"%s\"," : "\"%s\":%s,", key, val);
}

static char *odd_trace(void) {
  size_t cap = N_ODD * 256 + 16;
  char *json = calloc(1, cap);
  strcat(json, "[");
  for (size_t i = 0; i < N_ODD; i++) {
    char ev[256] = "";
    const odd_event *o = &k_odd[i];
    odd_member(ev, sizeof ev, "cat", o->cat, true);
    odd_member(ev, sizeof ev, "pid", o->pid, true);
    odd_member(ev, sizeof ev, "tid", o->tid, true);
    odd_member(ev, sizeof ev, "dur", o->dur, false);
    size_t n = strlen(ev);
    if (o->stream) snprintf(ev + n, sizeof ev - n, "\"args\":{\"stream\":%s},", o->stream);
    n = strlen(ev);
    snprintf(ev + n, sizeof ev - n, "\"ph\":\"X\",\"name\":\"e%zu\",\"ts\":%zu}", i, i + 1);
    strcat(json, i ? ",{" : "{");
    strcat(json, ev);
  }
  strcat(json, "]");
  return json;
}

/* The event of t named e<i>, from any kind's array. */
static const tr_event *odd_find(const tr_trace *t, size_t i) {
  char want[32];
  snprintf(want, sizeof want, "e%zu", i);
  for (int k = 0; k <= TR_KIND_RUNTIME; k++) {
    size_t n;
    const tr_event *e = tr_trace_events(t, (tr_kind)k, &n);
    for (size_t j = 0; j < n; j++)
      if (strcmp(tr_str_get(t, e[j].name), want) == 0) return &e[j];
  }
  return NULL;
}

static void odd_check(const tr_trace *t) {
  for (size_t i = 0; i < N_ODD; i++) {
    const odd_event *o = &k_odd[i];
    const tr_event *e = odd_find(t, i);
    cr_assert_not_null(e, "event e%zu kept", i);
    double want = o->dur ? strtod(o->dur, NULL) : 0.0, got = tr_event_dur(t, e);
    cr_expect(memcmp(&want, &got, sizeof want) == 0, "e%zu dur %.17g, want %.17g", i, got, want);
    cr_expect_str_eq(tr_str_get(t, tr_event_cat(t, e)), o->cat, "e%zu cat", i);
    cr_expect_str_eq(tr_str_get(t, tr_event_pid(t, e)), o->pid, "e%zu pid", i);
    cr_expect_str_eq(tr_str_get(t, tr_event_tid(t, e)), o->tid, "e%zu tid", i);
    cr_expect_str_eq(tr_str_get(t, tr_event_stream(t, e)), o->stream ? o->stream : "",
                     "e%zu stream", i);
  }
}

Test(trace_reader, compact_records_keep_durations_and_contexts) {
  char *json = odd_trace();
  size_t chunks[] = {0, 1, 7};
  for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
    tr_error err;
    tr_trace *t = read_str(json, chunks[c], &err);
    cr_assert_not_null(t, "read failed: %s", err.message);
    cr_expect_eq(count(t, TR_KIND_CPU_OP), 7);
    cr_expect_eq(count(t, TR_KIND_KERNEL), 4);
    odd_check(t);
    tr_trace_destroy(t);
  }
  free(json);
}

Test(trace_reader, numeric_string_times) {
  tr_trace *t = read_ok(
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":\"1234.5\",\"dur\":\" "
      "2.25\",\"args\":{}}]");
  const tr_event *e = first(t, TR_KIND_KERNEL);
  cr_expect_eq(tr_event_ts(t, e), 1234.5);
  cr_expect_eq(tr_event_dur(t, e), 2.25);
  tr_trace_destroy(t);
}

Test(trace_reader, unusable_times_are_skipped_counted_and_warned_once) {
  const char *doc =
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ok\",\"ts\":1,\"dur\":2},\n"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"neg\",\"ts\":1,\"dur\":-2},\n"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"text\",\"ts\":\"soon\",\"dur\":2},\n"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"huge\",\"ts\":1e999,\"dur\":2},\n"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"nots\",\"dur\":2},\n"
      "{\"ph\":\"X\",\"cat\":\"ac2g\",\"name\":\"dropped anyway\",\"ts\":-1,\"dur\":-2},\n"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"zero\",\"ts\":1,\"dur\":0}]";
  warnings ws;
  tr_trace *t = read_capturing_warnings("f.json", doc, &ws);
  cr_expect_eq(count(t, TR_KIND_KERNEL), 1);
  cr_expect_eq(count(t, TR_KIND_CPU_OP), 0);
  cr_expect_eq(tr_trace_skipped_count(t), 4);
  uint64_t off = (uint64_t)(strstr(doc, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"neg\"") - doc);
  cr_assert_eq(ws.n, 1, "one warning for all skipped events");
  cr_expect_eq(ws.w[0].code, TR_WARN_SKIPPED_EVENTS);
  cr_expect_str_eq(ws.w[0].path, "f.json");
  cr_expect_eq(ws.w[0].count, 4);
  cr_expect_eq(ws.w[0].offset, off);
  tr_trace_destroy(t);
}

Test(trace_reader, name_of_wrong_type_is_skipped_not_emptied) {
  const char *doc =
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ok\",\"ts\":1,\"dur\":2},\n"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":42,\"ts\":1,\"dur\":2}]";
  warnings ws;
  tr_trace *t = read_capturing_warnings("n.json", doc, &ws);
  cr_expect_eq(count(t, TR_KIND_KERNEL), 1, "the numeric-named kernel must not be kept");
  cr_expect_eq(tr_trace_skipped_count(t), 1);
  cr_assert_eq(ws.n, 1);
  cr_expect_eq(ws.w[0].code, TR_WARN_SKIPPED_EVENTS);
  cr_expect_eq(ws.w[0].count, 1);
  tr_trace_destroy(t);
}

Test(trace_reader, huge_and_odd_ids) {
  tr_trace *t = read_ok(
      "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":{\"External "
      "id\":99999999999999999999,\"x\":1e999}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"ts\":1,\"dur\":1,\"args\":{\"External "
      "id\":1e30}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"ts\":1,\"dur\":1,\"args\":{\"External "
      "id\":7.0}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"ts\":1,\"dur\":1,\"args\":{\"External "
      "id\":\"42\"}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"e\",\"ts\":1,\"dur\":1,\"args\":{\"External "
      "id\":-9223372036854775808}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"f\",\"ts\":1,\"dur\":1,\"args\":{\"External "
      "id\":7.5}}]");
  size_t n;
  const tr_event *e = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  cr_assert_eq(n, 6);
  cr_expect_eq(tr_event_external_id(t, &e[0]), TR_NO_ID);
  cr_expect_eq(tr_event_external_id(t, &e[1]), TR_NO_ID);
  cr_expect_eq(tr_event_external_id(t, &e[2]), 7);
  cr_expect_eq(tr_event_external_id(t, &e[3]), 42);
  cr_expect_eq(tr_event_external_id(t, &e[4]), TR_NO_ID);
  cr_expect_eq(tr_event_external_id(t, &e[5]), TR_NO_ID);
  cr_expect_eq(tr_trace_skipped_count(t), 0);
  tr_trace_destroy(t);
}

static const char *kernel_name_of(const char *doc) {
  static char name[256];
  tr_trace *t = read_ok(doc);
  name[0] = 0;
  size_t n;
  const tr_event *e = tr_trace_events(t, TR_KIND_KERNEL, &n);
  if (n) snprintf(name, sizeof name, "%s", tr_str_get(t, e[0].name));
  tr_trace_destroy(t);
  return name;
}

Test(trace_reader, escapes_and_utf8_repair) {
  const char *doc =
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1,"
      "\"name\":\"a\\u00e9\\ud83d\\ude00\\ud800x\\udc00\\u0000\\n\\\"\\/\\\\b\xff"
      "c\xc3(\xe2\x82\xac\"}]";
  /* é, 😀, lone high -> FFFD then x, lone low -> FFFD, NUL -> FFFD, \n, ", /, \, b,
   * invalid 0xff -> FFFD, c, truncated 2-byte sequence -> FFFD then (, valid € */
  const char *want =
      "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd\n\"/\\b\xef\xbf\xbd"
      "c\xef\xbf\xbd(\xe2\x82\xac";
  cr_expect_str_eq(kernel_name_of(doc), want);
  /* the same across chunk boundaries of every size */
  for (size_t c = 1; c < 12; c++) {
    tr_error err;
    tr_trace *t = read_str(doc, c, &err);
    cr_assert_not_null(t, "%s", err.message);
    cr_expect_str_eq(tr_str_get(t, first(t, TR_KIND_KERNEL)->name), want, "chunk %zu", c);
    tr_trace_destroy(t);
  }
  /* high surrogate followed by another escape */
  cr_expect_str_eq(kernel_name_of("[{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1,\"name\":"
                                  "\"\\ud800\\n\\ud800\\ud83d\\ude00\"}]"),
                   "\xef\xbf\xbd\n\xef\xbf\xbd\xf0\x9f\x98\x80");
}

Test(trace_reader, utf8_replacement_is_warned) {
  const char *doc =
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":1,\"dur\":1,\"name\":\"bad\xc0\xaf\"}]";
  warnings ws;
  tr_trace *t = read_capturing_warnings("u.json", doc, &ws);
  cr_expect_str_eq(tr_str_get(t, first(t, TR_KIND_KERNEL)->name), "bad\xef\xbf\xbd\xef\xbf\xbd");
  cr_assert_eq(ws.n, 1);
  cr_expect_eq(ws.w[0].code, TR_WARN_REPLACED_UTF8);
  cr_expect_eq(ws.w[0].count, 2);
  tr_trace_destroy(t);
}

/* ------------------------------------------------------------------ classification */

#define EV(cat, name, args)                                                                     \
  "[{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"ts\":5,\"dur\":3,\"args\":{" args \
  "}}]"

static int kind_of(const char *doc) {
  tr_trace *t = read_ok(doc);
  int kind = -1;
  for (int k = 0; k < 7; k++)
    if (count(t, (tr_kind)k)) kind = k;
  tr_trace_destroy(t);
  return kind;
}

Test(trace_reader, kernel_detector) {
  cr_expect_eq(kind_of(EV("kernel", "void foo<int>(int*)", "")), TR_KIND_KERNEL);
  cr_expect_eq(kind_of(EV("Kernel", "legacy", "")), TR_KIND_KERNEL, "legacy category");
  cr_expect_eq(kind_of(EV("gpu_memcpy", "Memcpy DtoD", "")), TR_KIND_KERNEL);
  cr_expect_eq(kind_of(EV("gpu_memset", "Memset", "")), TR_KIND_KERNEL);
  cr_expect_eq(
      kind_of(EV("xpu_runtime", "urEnqueueKernelLaunch", "\"correlation\":1,\"External id\":2")),
      TR_KIND_KERNEL, "XPU launch");
  cr_expect_eq(kind_of(EV("xpu_runtime", "urEnqueueMemcpy", "\"correlation\":1")), TR_KIND_RUNTIME);
  cr_expect_eq(kind_of(EV("mystery", "some_op", "\"stream\":7")), TR_KIND_KERNEL,
               "stream fallback");
  cr_expect_eq(kind_of(EV("mystery", "some_op", "\"cuda_stream\":7")), TR_KIND_KERNEL);
  cr_expect_eq(kind_of(EV("mystery", "some_op", "\"stream\":null")), -1);
  cr_expect_eq(kind_of(EV("mystery", "some_op", "")), -1);
  cr_expect_eq(kind_of(EV("mystery", "model.py(12): fwd", "\"stream\":7")), -1, "python scope");
  cr_expect_eq(kind_of(EV("mystery", "Python/x", "\"stream\":7")), -1);
  cr_expect_eq(kind_of(EV("mystery", "nn.Module: Linear", "\"stream\":7")), -1);
  cr_expect_eq(kind_of(EV("kernel", "thread_name", "")), -1, "metadata name");
  cr_expect_eq(kind_of(EV("gpu_user_annotation", "decode", "\"stream\":7")),
               TR_KIND_GPU_ANNOTATION);
  cr_expect_eq(kind_of(EV("Trace", "x", "\"stream\":7")), -1);
  cr_expect_eq(kind_of(EV("kernel", "## call foo", "")), -1);
  cr_expect_eq(kind_of("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":5,\"dur\":0}]"), -1,
               "dur 0");
  cr_expect_eq(kind_of("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"dur\":4}]"), -1,
               "no ts");
  cr_expect_eq(kind_of("[{\"ph\":\"B\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":5,\"dur\":4}]"), -1,
               "not X");
}

Test(trace_reader, other_kinds) {
  cr_expect_eq(kind_of(EV("cpu_op", "aten::mm", "")), TR_KIND_CPU_OP);
  cr_expect_eq(kind_of(EV("cuda_runtime", "cudaLaunchKernel", "\"correlation\":4")),
               TR_KIND_LAUNCH);
  cr_expect_eq(kind_of(EV("cuda_driver", "cuLaunchKernel", "\"correlation\":4")), TR_KIND_LAUNCH);
  cr_expect_eq(kind_of(EV("cuda_runtime", "cudaGraphLaunch", "\"correlation\":4")), TR_KIND_LAUNCH);
  cr_expect_eq(kind_of(EV("cuda_runtime", "cudaLaunchKernel", "")), -1,
               "launch without correlation");
  cr_expect_eq(kind_of(EV("cuda_runtime", "cudaMemcpyAsync", "\"correlation\":4")),
               TR_KIND_RUNTIME);
  cr_expect_eq(kind_of(EV("python_function", "x.py(1): f", "")), TR_KIND_PYFRAME);
  cr_expect_eq(kind_of(EV("user_annotation", "ProfilerStep#1", "")), TR_KIND_USER_ANNOTATION);
  cr_expect_eq(kind_of(EV("Operator", "aten::mm", "")), -1, "legacy Operator is not cpu_op");
}

/* The reader remembers what it asked of the last few categories and runtime-call names
 * (MEMO_SLOTS each). Events of more categories and names than it remembers, in one file,
 * in turns, with the same category carrying different names and args, long names and
 * names holding a NUL, must be classified as each is alone. */
Test(trace_reader, categories_in_turns_classify_as_alone) {
  static const char *const evs[] = {
      "\"cat\":\"kernel\",\"name\":\"k\"",
      "\"cat\":\"Kernel\",\"name\":\"legacy\"",
      "\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy\"",
      "\"cat\":\"xpu_runtime\",\"name\":\"urEnqueueKernelLaunch\",\"args\":{\"correlation\":1}",
      "\"cat\":\"xpu_runtime\",\"name\":\"urEnqueueMemcpy\",\"args\":{\"correlation\":1}",
      "\"cat\":\"mystery\",\"name\":\"some_op\",\"args\":{\"stream\":7}",
      "\"cat\":\"mystery\",\"name\":\"model.py(12): fwd\",\"args\":{\"stream\":7}",
      "\"cat\":\"gpu_user_annotation\",\"name\":\"decode\"",
      "\"cat\":\"Trace\",\"name\":\"x\",\"args\":{\"stream\":7}",
      "\"cat\":\"kernel\",\"name\":\"## call foo\"",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\",\"args\":{\"correlation\":4}",
      "\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\"",
      "\"cat\":\"Operator\",\"name\":\"aten::mm\"",
      "\"cat\":\"ac2g\",\"name\":\"flow\",\"args\":{\"cuda_stream\":3}",
      "\"cat\":\"cpu_op\",\"name\":\"aten::mm\"",
      "\"cat\":\"kernel_a\",\"name\":\"a\"",
      "\"cat\":\"odd_b\",\"name\":\"b\",\"args\":{\"stream\":1}",
      "\"cat\":\"odd_c\",\"name\":\"c\"",
      "\"cat\":\"gpu_memset\",\"name\":\"Memset\"",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchCooperativeKernel\",\"args\":{\"correlation\":"
      "4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaEventRecord\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamWaitEvent\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaMemsetAsync\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaEventQuery\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaMalloc\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaFree\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernelEx\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaPeekAtLastError\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":"
      "\"cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags\","
      "\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":"
      "\"cudaVeryLongRuntimeCallNameThatPassesTheMemoTextLengthLaunch"
      "Kernel\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cuda\\u0000Launch\",\"args\":{\"correlation\":4}",
      "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunch\\u0000x\",\"args\":{\"correlation\":4}",
  };
  enum { N = sizeof evs / sizeof evs[0], ROUNDS = 3 };
  size_t want[7] = {0};
  char one[512], *doc = malloc(ROUNDS * N * 160 + 8);
  cr_assert_not_null(doc);
  size_t n = 0;
  doc[n++] = '[';
  for (size_t i = 0; i < N; i++) {
    snprintf(one, sizeof one, "[{\"ph\":\"X\",\"ts\":5,\"dur\":3,%s}]", evs[i]);
    int k = kind_of(one);
    if (k >= 0) want[k] += ROUNDS;
  }
  for (size_t round = 0; round < ROUNDS; round++)
    for (size_t i = 0; i < N; i++)
      n += (size_t)sprintf(doc + n, "%s{\"ph\":\"X\",\"ts\":5,\"dur\":3,%s}", n > 1 ? "," : "",
                           evs[i]);
  doc[n++] = ']';
  doc[n] = '\0';
  tr_trace *t = read_ok(doc);
  for (int k = 0; k < 7; k++) cr_expect_eq(count(t, (tr_kind)k), want[k], "kind %d", k);
  cr_expect_gt(want[TR_KIND_KERNEL], 0);
  tr_trace_destroy(t);
  free(doc);
}

/* Ids are stored as 32-bit offsets from a per-trace base; ids far from the first one go
 * to a side table. Both must read back exactly, in events and in the correlation map,
 * and a later pair must win over an earlier one whichever table either went to. The map
 * is built only when a kernel lacks its External id (mapped), else the pairs are scanned:
 * both must answer alike. */
static void check_ids_outside_the_window(bool mapped) {
  const long long ids[] = {5, 4294967296LL * 3,       -4611686018427387904LL, 9223372036854775807LL,
                           6, -9223372036854775807LL, 2147483652LL,           -2147483644LL};
  char doc[4096];
  size_t n = 0;
  doc[n++] = '[';
  for (size_t i = 0; i < 8; i++)
    n += (size_t)sprintf(doc + n,
                         "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                         "\"ts\":1,\"dur\":1,\"args\":{\"correlation\":%lld,\"External id\":%lld}}",
                         i ? "," : "", ids[i], ids[7 - i]);
  /* later pairs for correlations 5 (compact -> wide value) and 3*2^32 (wide -> compact) */
  n += (size_t)sprintf(doc + n, ",{\"ph\":\"f\",\"args\":{\"correlation\":5,\"External id\":%lld}}",
                       ids[3]);
  n += (size_t)sprintf(doc + n, ",{\"ph\":\"f\",\"args\":{\"correlation\":%lld,\"External id\":8}}",
                       ids[1]);
  if (mapped)
    n += (size_t)sprintf(doc + n,
                         ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,"
                         "\"dur\":1,\"args\":{\"correlation\":7}}");
  n += (size_t)sprintf(doc + n, "]");
  tr_trace *t = read_ok(doc);
  size_t ne;
  const tr_event *e = tr_trace_events(t, TR_KIND_LAUNCH, &ne);
  cr_assert_eq(ne, 8);
  for (size_t i = 0; i < 8; i++) {
    cr_expect_eq(tr_event_correlation(t, &e[i]), ids[i], "event %zu", i);
    cr_expect_eq(tr_event_external_id(t, &e[i]), ids[7 - i], "event %zu", i);
  }
  cr_expect_eq(tr_trace_external_for_correlation(t, 5), ids[3]);
  cr_expect_eq(tr_trace_external_for_correlation(t, ids[1]), 8);
  for (size_t i = 2; i < 8; i++)
    cr_expect_eq(tr_trace_external_for_correlation(t, ids[i]), ids[7 - i], "corr %zu", i);
  cr_expect_eq(tr_trace_external_for_correlation(t, 7), TR_NO_ID);
  cr_expect_eq(tr_trace_external_for_correlation(t, 4294967296LL * 5), TR_NO_ID);
  cr_expect_eq(sizeof(tr_event), 28u);
  tr_trace_destroy(t);
}

Test(trace_reader, ids_outside_the_32_bit_window) {
  check_ids_outside_the_window(false);
  check_ids_outside_the_window(true);
}

Test(trace_reader, correlation_map_from_any_event) {
  tr_trace *t = read_ok(
      "[{\"ph\":\"X\",\"cat\":\"xpu_runtime\",\"name\":\"urEnqueueKernelLaunch\",\"ts\":1,\"dur\":"
      "1,"
      "\"args\":{\"correlation\":900,\"External id\":1}},"
      "{\"ph\":\"f\",\"args\":{\"correlation\":901,\"External id\":2}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":1,\"dur\":1,"
      "\"args\":{\"External id\":3,\"correlation\":902}}]");
  cr_expect_eq(tr_trace_external_for_correlation(t, 900), 1);
  cr_expect_eq(tr_trace_external_for_correlation(t, 901), 2);
  cr_expect_eq(tr_trace_external_for_correlation(t, 902), 3);
  cr_expect_eq(tr_trace_external_for_correlation(t, 903), TR_NO_ID);
  tr_trace_destroy(t);
  /* many entries (forces rehash) */
  char *doc = malloc(64 * 5000 + 16);
  size_t n = 0;
  doc[n++] = '[';
  for (int i = 0; i < 5000; i++)
    n += (size_t)sprintf(doc + n, "%s{\"args\":{\"correlation\":%d,\"External id\":%d}}",
                         i ? "," : "", i * 7, i);
  doc[n++] = ']';
  doc[n] = 0;
  t = read_ok(doc);
  for (int i = 0; i < 5000; i++) cr_expect_eq(tr_trace_external_for_correlation(t, i * 7), i);
  tr_trace_destroy(t);
  free(doc);
}

/* The pairs go when no stored event asks them (every event with a correlation has its
 * External id), and stay when one does. */
Test(trace_reader, unasked_correlations_dropped) {
  const char *both =
      "[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
      "\"ts\":1,\"dur\":1,\"args\":{\"correlation\":900,\"External id\":1}},"
      "{\"ph\":\"f\",\"args\":{\"correlation\":8589934592,\"External id\":2}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":2,\"dur\":1,"
      "\"args\":{\"correlation\":900,\"External id\":1}}]";
  tr_trace *t = read_ok(both);
  cr_expect_eq(tr_trace_external_for_correlation(t, 900), 1);
  cr_expect_eq(tr_trace_external_for_correlation(t, 8589934592LL), 2);
  tr_trace_drop_unasked_correlations(t);
  cr_expect_eq(tr_trace_external_for_correlation(t, 900), TR_NO_ID);
  cr_expect_eq(tr_trace_external_for_correlation(t, 8589934592LL), TR_NO_ID);
  tr_trace_destroy(t);
  t = read_ok(
      "[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
      "\"ts\":1,\"dur\":1,\"args\":{\"correlation\":900,\"External id\":1}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":2,\"dur\":1,"
      "\"args\":{\"correlation\":900}}]");
  tr_trace_drop_unasked_correlations(t);
  cr_expect_eq(tr_trace_external_for_correlation(t, 900), 1);
  tr_trace_destroy(t);
}

static int progress_calls;
static uint64_t progress_last;
static void on_progress(void *ctx, uint64_t done, uint64_t total) {
  (void)ctx;
  progress_calls++;
  progress_last = done;
  cr_expect_leq(done, total);
}

Test(trace_reader, progress_callback) {
  size_t n_ev = 200000;
  char *doc = malloc(n_ev * 64 + 16);
  size_t n = 0;
  doc[n++] = '[';
  for (size_t i = 0; i < n_ev; i++)
    n += (size_t)sprintf(
        doc + n, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%zu\",\"ts\":%zu,\"dur\":1}",
        i ? "," : "", i % 100, i);
  doc[n++] = ']';
  doc[n] = 0;
  tr_read_options o;
  memset(&o, 0, sizeof o);
  o.progress = on_progress;
  progress_calls = 0;
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("p", doc, n, &o, &err);
  cr_assert_not_null(t);
  cr_expect_geq(progress_calls, 2, "calls %d for %zu bytes", progress_calls, n);
  cr_expect_eq(progress_last, n);
  cr_expect_eq(count(t, TR_KIND_CPU_OP), n_ev);
  tr_trace_destroy(t);
  free(doc);
}

/* ------------------------------------------------------------------ smoke */

Test(trace_reader, all_shared_real_traces_read) {
  const char *dir = TRIAGE_SHARED_DIR "/traces/real";
  DIR *d = opendir(dir);
  if (!d) cr_skip_test("no shared traces at %s", dir);
  struct dirent *de;
  int n = 0;
  while ((de = readdir(d))) {
    if (!strstr(de->d_name, ".json")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    tr_error err;
    tr_trace *t = tr_trace_read(path, NULL, &err);
    cr_expect_not_null(t, "%s: %s", de->d_name, err.message);
    if (t) {
      cr_expect_gt(count(t, TR_KIND_KERNEL), 0, "%s has no kernels", de->d_name);
      cr_expect_eq(tr_trace_skipped_count(t), 0);
      n++;
    }
    tr_trace_destroy(t);
  }
  closedir(d);
  cr_expect_geq(n, 14);
}

/* Run metadata beside traceEvents: distributedInfo (rank, world size, backend, process
 * groups with their ranks), deviceProperties and the runtime version members naming the
 * platform; the same at every chunk size, before or after traceEvents. */
static const char *k_meta_doc =
    "{\"schemaVersion\": 1, \"hip_runtime_version\": 70253211,"
    " \"deviceProperties\": [{\"id\": 0, \"name\": \"AMD Instinct MI300X\", \"computeMajor\": 9,"
    " \"computeMinor\": 4, \"warpSize\": 64, \"numSms\": 304, \"totalGlobalMem\": 206141652992,"
    " \"extra\": [1, {\"x\": 2}]},"
    " {\"id\": 1, \"name\": \"\"}],"
    " \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": "
    "7,"
    " \"ts\": 1, \"dur\": 2, \"args\": {\"stream\": 7}}],"
    " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8,"
    " \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"pg_size\": 8,"
    " \"ranks\": [0, 1, 2, 3, 4, 5, 6, 7]}, {\"pg_name\": \"1\", \"ranks\": \"oops\","
    " \"backend_config\": \"cpu:gloo,cuda:gloo\"}],"
    " \"nccl_version\": \"2.17.1\"}, \"cupti_version\": 18}";

Test(trace_reader, run_metadata) {
  for (size_t chunk = 1; chunk <= 4096; chunk = chunk < 16 ? chunk + 1 : chunk * 3) {
    tr_error err = {0};
    tr_trace *t = read_str(k_meta_doc, chunk, &err);
    cr_assert_not_null(t, "chunk %zu: %s", chunk, err.message);
    const tr_trace_meta *m = tr_trace_meta_get(t);
    cr_expect_eq(m->rank, 3);
    cr_expect_eq(m->world_size, 8);
    cr_expect_str_eq(tr_str_get(t, m->backend), "nccl");
    cr_expect_eq(m->platform, TR_PLATFORM_ROCM, "the first version member decides");
    cr_assert_eq(m->n_devices, 2);
    cr_expect_str_eq(tr_str_get(t, m->devices[0].name), "AMD Instinct MI300X");
    cr_expect_eq(m->devices[0].compute_major, 9);
    cr_expect_eq(m->devices[0].compute_minor, 4);
    cr_expect_eq(m->devices[0].warp_size, 64);
    cr_expect_eq(m->devices[0].num_sms, 304);
    cr_expect_eq(m->devices[0].total_mem, 206141652992);
    cr_expect_eq(m->devices[1].total_mem, TR_NO_ID);
    cr_expect_eq(m->devices[1].name, 0, "an empty name is absent");
    cr_expect_eq(m->devices[1].warp_size, TR_NO_ID);
    cr_assert_eq(m->n_groups, 2);
    cr_expect_str_eq(tr_str_get(t, m->groups[0].desc), "default_pg");
    cr_expect_eq(m->groups[0].size, 8);
    cr_assert_eq(m->groups[0].n_ranks, 8);
    cr_expect_eq(m->groups[0].ranks[7], 7);
    cr_expect_eq(m->groups[1].n_ranks, 0, "ranks that are not a list are skipped");
    cr_expect_eq(m->groups[0].backend, 0, "no backend_config");
    cr_expect_str_eq(tr_str_get(t, m->groups[1].backend), "cpu:gloo,cuda:gloo");
    cr_expect_eq(count(t, TR_KIND_KERNEL), 1);
    tr_trace_destroy(t);
  }
}

Test(trace_reader, run_metadata_absent_or_odd) {
  tr_trace *t = read_ok(
      "{\"distributedInfo\": [1, 2], \"deviceProperties\": {\"id\": 0},"
      " \"traceEvents\": []}");
  const tr_trace_meta *m = tr_trace_meta_get(t);
  cr_expect_eq(m->rank, TR_NO_ID);
  cr_expect_eq(m->world_size, TR_NO_ID);
  cr_expect_eq(m->n_devices, 0);
  cr_expect_eq(m->n_groups, 0);
  cr_expect_eq(m->platform, TR_PLATFORM_UNKNOWN);
  tr_trace_destroy(t);
  t = read_ok("[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}]");
  cr_expect_eq(tr_trace_meta_get(t)->rank, TR_NO_ID, "a bare event list has no metadata");
  tr_trace_destroy(t);
}

/* Just over TR_MAX_META_ITEMS: the extra devices and ranks are skipped, the trace is read
 * (metadata lists only inform; they never refuse a trace). */
Test(trace_reader, run_metadata_lists_are_capped) {
  size_t n = TR_MAX_META_ITEMS + 1u, cap = 64 + n * 40;
  char *doc = malloc(cap);
  cr_assert_not_null(doc);
  size_t len = (size_t)snprintf(doc, cap, "{\"deviceProperties\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(doc + len, cap - len, "%s{\"id\": %zu}", i ? "," : "", i);
  len += (size_t)snprintf(doc + len, cap - len,
                          "], \"distributedInfo\": {\"pg_config\": [{\"ranks\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(doc + len, cap - len, "%s%zu", i ? "," : "", i);
  snprintf(doc + len, cap - len, "]}]}, \"traceEvents\": []}");
  tr_trace *t = read_ok(doc);
  const tr_trace_meta *m = tr_trace_meta_get(t);
  cr_expect_eq(m->n_devices, TR_MAX_META_ITEMS);
  cr_expect_eq(m->devices[TR_MAX_META_ITEMS - 1].id, (int64_t)TR_MAX_META_ITEMS - 1);
  cr_assert_eq(m->n_groups, 1);
  cr_expect_eq(m->groups[0].n_ranks, TR_MAX_META_ITEMS);
  tr_trace_destroy(t);
  free(doc);
}

/* A dur is stored as whole nanoseconds only when decoding gives back the same double. */
Test(trace_reader, dur_codes_decode_to_the_same_double) {
  static const struct {
    const char *text;
    bool wide;
  } cases[] = {{"0", false},        {"12.345", false}, {"1.5", false},     {"4294966.999", false},
               {"5000000.0", true}, {"0.0001", true},  {"123.4567", true}, {"-1", true},
               {"-0.0", true},      {"nan", true},     {"inf", true},      {"4294967.295", true}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double d = strtod(cases[i].text, NULL);
    uint32_t c = tr_dur_encode(d);
    cr_expect_eq(c == TR_DUR_WIDE, cases[i].wide, "%s", cases[i].text);
    if (c != TR_DUR_WIDE) cr_expect(memcmp(&(double){c / 1000.0}, &d, sizeof d) == 0);
  }
  /* every count written with three decimals comes back as that count */
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t ns = (uint32_t)(x % 4294967000u);
    char text[32];
    snprintf(text, sizeof text, "%u.%03u", ns / 1000u, ns % 1000u);
    cr_assert_eq(tr_dur_encode(strtod(text, NULL)), ns, "%s", text);
  }
}

/* Frames keep 16 bytes: their durations come back as the very doubles of the file, and
 * their threads as runs of consecutive frames. */
Test(trace_reader, frames_keep_exact_durations_and_threads) {
  static const char *durs[] = {"8", "0.0001", "5000000.0", "123.4567", "-0.0", "12.345"};
  char json[4096];
  size_t len = (size_t)snprintf(json, sizeof json, "[");
  for (size_t i = 0; i < 6; i++)
    len += (size_t)snprintf(json + len, sizeof json - len,
                            "%s{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"f%zu\","
                            "\"pid\":1,\"tid\":%d,\"ts\":%zu.5,\"dur\":%s}",
                            i ? "," : "", i, i < 2 || i == 4 ? 7 : 8, i, durs[i]);
  snprintf(json + len, sizeof json - len,
           ",{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"g\",\"pid\":1,\"tid\":8,"
           "\"ts\":9}]");
  tr_trace *t = read_ok(json);
  size_t n, nr;
  const tr_pyframe *f = tr_trace_pyframes(t, &n);
  const tr_pyframe_run *runs = tr_trace_pyframe_runs(t, &nr);
  cr_assert_eq(n, 7);
  for (size_t i = 0; i < 6; i++) {
    double want = strtod(durs[i], NULL), got = tr_pyframe_dur(t, &f[i]);
    cr_expect(memcmp(&want, &got, sizeof got) == 0, "frame %zu: %s", i, durs[i]);
  }
  cr_expect_eq(tr_pyframe_dur(t, &f[6]), 0.0);
  cr_assert_eq(nr, 4); /* tid 7, 8, 7, 8 */
  static const uint32_t first[] = {0, 2, 4, 5};
  for (size_t j = 0; j < nr; j++) cr_expect_eq(runs[j].first, first[j]);
  cr_expect_str_eq(tr_str_get(t, tr_pyframe_run_of(t, 3)->tid), "8");
  cr_expect_str_eq(tr_str_get(t, tr_pyframe_run_of(t, 4)->tid), "7");
  cr_expect_str_eq(tr_str_get(t, tr_pyframe_run_of(t, 6)->pid), "1");
  tr_trace_destroy(t);
}

/* The reader notes whether each thread's frames come in (start, -end) order, across the
 * runs of a thread, and the distinct frame names in order of first appearance. */
static tr_trace *frames_of(const char *const *frames, size_t n) {
  char json[4096];
  size_t len = (size_t)snprintf(json, sizeof json, "[");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(json + len, sizeof json - len,
                            "%s{\"ph\":\"X\",\"cat\":\"python_function\",\"pid\":1,%s}",
                            i ? "," : "", frames[i]);
  snprintf(json + len, sizeof json - len, "]");
  return read_ok(json);
}

Test(trace_reader, frames_sorted_flag_and_first_names) {
  static const char *in_order[] = {
      "\"tid\":1,\"name\":\"a\",\"ts\":1,\"dur\":10", "\"tid\":2,\"name\":\"b\",\"ts\":0,\"dur\":9",
      "\"tid\":1,\"name\":\"b\",\"ts\":1,\"dur\":10", /* same start and end: file order */
      "\"tid\":1,\"name\":\"c\",\"ts\":1,\"dur\":4",  /* same start, ends sooner: inner */
      "\"tid\":2,\"name\":\"a\",\"ts\":0.5,\"dur\":1"};
  tr_trace *t = frames_of(in_order, 5);
  cr_expect(tr_trace_pyframes_sorted(t));
  size_t n;
  const tr_str *names = tr_trace_pyframe_names(t, &n);
  cr_assert_eq(n, 3);
  cr_expect_str_eq(tr_str_get(t, names[0]), "a");
  cr_expect_str_eq(tr_str_get(t, names[1]), "b");
  cr_expect_str_eq(tr_str_get(t, names[2]), "c");
  tr_trace_destroy(t);
  /* thread 1 goes back in time after thread 2's run */
  static const char *late[] = {"\"tid\":1,\"name\":\"a\",\"ts\":5,\"dur\":1",
                               "\"tid\":2,\"name\":\"b\",\"ts\":9,\"dur\":1",
                               "\"tid\":1,\"name\":\"c\",\"ts\":4,\"dur\":1"};
  t = frames_of(late, 3);
  cr_expect(!tr_trace_pyframes_sorted(t));
  tr_trace_destroy(t);
  /* same start, the later frame ends later: an outer frame after its inner one */
  static const char *outer_late[] = {"\"tid\":1,\"name\":\"a\",\"ts\":5,\"dur\":1",
                                     "\"tid\":1,\"name\":\"b\",\"ts\":5,\"dur\":2"};
  t = frames_of(outer_late, 2);
  cr_expect(!tr_trace_pyframes_sorted(t));
  tr_trace_destroy(t);
}

/* ------------------------------------------------------------------ kept args */

/* The kept args (trace.h tr_arg) of every kind of value, spread over lines and escaped in
 * the file, with process_name metadata and host_name after traceEvents. */
static const char *k_args_doc =
    "{\"traceEvents\": [\n"
    " {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"tid\": 0,"
    "  \"args\": {\"name\": \"VLLM::Worker_TP0\"}},\n"
    " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 7, \"tid\": 7,"
    "  \"ts\": 1, \"dur\": 5, \"args\": {\"External id\": 11,"
    "  \"Input Dims\": [\n   [1024],\n   [8944,1024] ,[ ], []\n  ],"
    "  \"Input type\": [\"c10::BFloat16\", \"a\\\"b\\\\c\", \"\\u00e9\\t\\u0001\", \"\"],"
    "  \"Input Strides\": [[1], [1024, 1]],"
    "  \"Concrete Inputs\": [\"\", \"1\", true, null, -0, 1.5e3, {\"k\" :[1,{\"z\":false}]}]}},\n"
    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce\", \"pid\": 0,"
    "  \"tid\": 7, \"ts\": 2, \"dur\": 3, \"args\": {\"correlation\": 5, \"stream\": 7,"
    "  \"Collective name\": \"allreduce\", \"In msg nelems\": 2049000, \"Out msg nelems\": 2049000,"
    "  \"Group size\": 2, \"dtype\": \"Float\", \"Process Group Name\": \"0\","
    "  \"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"[0, 1]\"}},\n"
    " {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7,"
    "  \"ts\": 6, \"dur\": 1, \"args\": {\"stream\": 7, \"bytes\": 4000, \"bytes\": 8192,"
    "  \"dtype\": null}},\n"
    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"plain\", \"pid\": 0, \"tid\": 7, \"ts\": 8,"
    "  \"dur\": 1, \"args\": {\"stream\": 7, \"dtype\": \"\"}},\n"
    " {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", \"pid\": 0,"
    "  \"tid\": 24, \"ts\": 9, \"dur\": 2, \"args\": {\"External id\": 1389,"
    "  \"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": 20,"
    "  \"wait_on_cuda_event_record_corr_id\": 1385, \"wait_on_cuda_event_id\": 19,"
    "  \"stream\": 24, \"correlation\": 1389, \"device\": 0, \"context\": 1}}\n"
    "], \"host_name\": \"node-\\u00e9\"}";

static const char *arg_of(const tr_trace *t, tr_kind k, size_t i, tr_arg a) {
  size_t n;
  const tr_event *e = tr_trace_events(t, k, &n);
  cr_assert_lt(i, n);
  return tr_str_get(t, tr_event_arg(t, k, &e[i], a));
}

static void check_kept_args(const tr_trace *t, size_t chunk) {
  cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 0, TR_ARG_INPUT_DIMS),
                   "[[1024], [8944, 1024], [], []]", "chunk %zu", chunk);
  cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 0, TR_ARG_INPUT_TYPE),
                   "[\"c10::BFloat16\", \"a\\\"b\\\\c\", \"\xc3\xa9\\t\\u0001\", \"\"]",
                   "chunk %zu", chunk);
  cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 0, TR_ARG_CONCRETE_INPUTS),
                   "[\"\", \"1\", true, null, -0, 1.5e3, {\"k\": [1, {\"z\": false}]}]",
                   "chunk %zu", chunk);
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_COLLECTIVE_NAME), "allreduce");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_IN_MSG_NELEMS), "2049000");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_OUT_MSG_NELEMS), "2049000");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_GROUP_SIZE), "2");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_DTYPE), "Float");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_PG_NAME), "0");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_PG_DESC), "default_pg");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_PG_RANKS), "[0, 1]");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 0, TR_ARG_INPUT_DIMS), "", "not on this event");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 1, TR_ARG_BYTES), "8192", "the last one wins");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 1, TR_ARG_DTYPE), "", "null is absent");
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 2, TR_ARG_DTYPE), "", "so is an empty string");
  /* a stream's wait on an event (cat cuda_sync): which stream and which record it waits on */
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 3, TR_ARG_WAIT_ON_STREAM), "20", "chunk %zu", chunk);
  cr_expect_str_eq(arg_of(t, TR_KIND_KERNEL, 3, TR_ARG_WAIT_ON_RECORD_CORR), "1385", "chunk %zu",
                   chunk);
  const tr_trace_meta *m = tr_trace_meta_get(t);
  cr_expect_str_eq(tr_str_get(t, m->host_name), "node-\xc3\xa9");
  cr_assert_eq(m->n_processes, 1);
  cr_expect_str_eq(tr_str_get(t, m->processes[0].pid), "7");
  cr_expect_str_eq(tr_str_get(t, m->processes[0].name), "VLLM::Worker_TP0");
  cr_expect_eq(tr_trace_args_dropped(t), 0);
}

Test(trace_reader, kept_args_at_every_chunk_size) {
  for (size_t chunk = 1; chunk <= 4096; chunk = chunk < 64 ? chunk + 1 : chunk * 2) {
    tr_error err = {0};
    tr_trace *t = read_str(k_args_doc, chunk, &err);
    cr_assert_not_null(t, "chunk %zu: %s", chunk, err.message);
    check_kept_args(t, chunk);
    tr_trace_destroy(t);
  }
}

/* The accessor answers only for events of the array it is given. */
Test(trace_reader, kept_args_need_the_event_in_its_array) {
  tr_trace *t = read_ok(k_args_doc);
  size_t n;
  const tr_event *ops = tr_trace_events(t, TR_KIND_CPU_OP, &n);
  cr_expect_neq(tr_event_arg(t, TR_KIND_CPU_OP, &ops[0], TR_ARG_INPUT_DIMS), 0);
  tr_event copy = ops[0];
  cr_expect_eq(tr_event_arg(t, TR_KIND_CPU_OP, &copy, TR_ARG_INPUT_DIMS), 0, "a copy");
  cr_expect_eq(tr_event_arg(t, TR_KIND_KERNEL, &ops[0], TR_ARG_INPUT_DIMS), 0, "another kind");
  cr_expect_eq(tr_event_arg(t, TR_KIND_CPU_OP, &ops[0], TR_ARG_COUNT), 0, "no such key");
  cr_expect_eq(tr_event_arg(t, TR_KIND_CPU_OP, NULL, TR_ARG_INPUT_DIMS), 0);
  cr_expect_str_eq(tr_arg_key(TR_ARG_PG_DESC), "Process Group Description");
  cr_expect_str_eq(tr_arg_key(TR_ARG_COUNT), "");
  tr_trace_destroy(t);
}

/* Many CPU ops with shapes (the dense index) among ops without, and two kernels with args
 * among many without (the sparse index; the first kernel's args made it dense while
 * reading): every event answers its own. `distinct` shapes: a few keep every set id in 16
 * bits, one per op takes them past it. */
static void check_dense_and_sparse(size_t n, size_t distinct) {
  size_t cap = n * 200 + 64, len = 0;
  char *doc = malloc(cap);
  len += (size_t)snprintf(doc + len, cap - len, "[");
  for (size_t i = 0; i < n; i++) {
    bool shaped = i % 3 != 0;
    len += (size_t)snprintf(
        doc + len, cap - len,
        "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"ts\":%zu,\"dur\":1,"
        "\"args\":{%s%zu%s}},",
        i ? "," : "", i, shaped ? "\"Input Dims\":[[" : "\"x\":", i % distinct, shaped ? "]]" : "");
    len += (size_t)snprintf(doc + len, cap - len,
                            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":%zu,\"dur\":1,"
                            "\"args\":{\"bytes\":%s}}",
                            i, i == 1234 || i == 0 ? "77" : "null");
  }
  snprintf(doc + len, cap - len, "]");
  tr_trace *t = read_ok(doc);
  for (size_t i = 0; i < n; i++) {
    char want[32] = "";
    if (i % 3) snprintf(want, sizeof want, "[[%zu]]", i % distinct);
    cr_assert_str_eq(arg_of(t, TR_KIND_CPU_OP, i, TR_ARG_INPUT_DIMS), want, "op %zu", i);
    cr_assert_str_eq(arg_of(t, TR_KIND_KERNEL, i, TR_ARG_BYTES), i == 1234 || i == 0 ? "77" : "",
                     "k %zu", i);
  }
  tr_trace_destroy(t);
  free(doc);
}

Test(trace_reader, kept_args_dense_and_sparse) {
  check_dense_and_sparse(3000, 7);
  check_dense_and_sparse(60000, 60000);
}

/* A kept arg longer than TR_MAX_ARG_BYTES as stored is dropped and counted, as a list or
 * a string, at every chunk size; the one at the limit is kept, and the event's other args
 * stay. */
Test(trace_reader, kept_args_past_the_limit) {
  size_t lim = TR_MAX_ARG_BYTES, cap = 4 * lim + 1024;
  char *doc = malloc(cap), *at = malloc(lim + 1);
  size_t len = (size_t)snprintf(doc, cap, "[");
  /* "[1, 1, ...]" of exactly lim bytes: 3 bytes an element after the first */
  size_t k = (lim - 2 + 2) / 3, n = 0;
  at[n++] = '[';
  for (size_t i = 0; i < k; i++) n += (size_t)snprintf(at + n, lim + 1 - n, i ? ", 1" : "1");
  at[n++] = ']';
  at[n] = '\0';
  size_t pad = lim - n; /* make it exact: widen the first number */
  cr_assert_lt(pad, 3);
  memmove(at + 1 + pad, at + 1, n);
  memset(at + 1, '1', pad);
  cr_assert_eq(strlen(at), lim);
  len += (size_t)snprintf(doc + len, cap - len,
                          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1,"
                          "\"args\":{\"Input Dims\":%s,\"Input type\":\"t\"}},",
                          at);
  len += (size_t)snprintf(doc + len, cap - len,
                          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"ts\":2,\"dur\":1,"
                          "\"args\":{\"Input Dims\":[%s],\"Input type\":\"t\"}},",
                          at);
  len += (size_t)snprintf(doc + len, cap - len,
                          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"ts\":3,\"dur\":1,"
                          "\"args\":{\"Concrete Inputs\":\"%*s\"}}]",
                          (int)lim + 1, "s");
  for (size_t chunk = 0; chunk <= 4096; chunk = chunk ? chunk * 4 : 1) {
    tr_error err = {0};
    tr_trace *t = read_str(doc, chunk, &err);
    cr_assert_not_null(t, "chunk %zu: %s", chunk, err.message);
    cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 0, TR_ARG_INPUT_DIMS), at, "chunk %zu", chunk);
    cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 1, TR_ARG_INPUT_DIMS), "", "chunk %zu", chunk);
    cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 1, TR_ARG_INPUT_TYPE), "t");
    cr_expect_str_eq(arg_of(t, TR_KIND_CPU_OP, 2, TR_ARG_CONCRETE_INPUTS), "");
    cr_expect_eq(tr_trace_args_dropped(t), 2, "chunk %zu", chunk);
    tr_trace_destroy(t);
  }
  free(doc);
  free(at);
}

/* Bad JSON inside a kept arg fails as it does anywhere else: the same message and offset
 * as in an arg that is skipped. */
Test(trace_reader, kept_args_report_bad_json_like_skipped_ones) {
  static const char *bad[] = {"[1, 2", "[1,, 2]", "{\"a\" 1}", "[tru]", "[\"x]", "[01]", "{1: 2}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char kept[256], skipped[256];
    snprintf(kept, sizeof kept,
             "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1,"
             "\"args\":{\"Input Dims\":%s}}]",
             bad[i]);
    snprintf(skipped, sizeof skipped,
             "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1,"
             "\"args\":{\"Input Dimz\":%s}}]",
             bad[i]);
    tr_error e1 = {0}, e2 = {0};
    tr_trace *t1 = read_str(kept, 3, &e1), *t2 = read_str(skipped, 3, &e2);
    cr_expect_null(t1, "%s", bad[i]);
    cr_expect_null(t2, "%s", bad[i]);
    cr_expect_eq(e1.code, e2.code, "%s", bad[i]);
    cr_expect_eq(e1.offset, e2.offset, "%s", bad[i]);
    cr_expect_str_eq(e1.message, e2.message, "%s", bad[i]);
    tr_trace_destroy(t1);
    tr_trace_destroy(t2);
  }
}

/* The reader finds a name met lately by its length and its first, middle and last 8 bytes
 * before it hashes the whole name: names alike in those (they share the reader's slot) but
 * for one byte elsewhere, names of 15, 16 and 17 bytes, frames and kernels in a scrambled
 * order. Every event keeps its own name, and equal names get one id. */
Test(trace_reader, names_alike_but_for_one_byte) {
  enum { N_NAMES = 19, N_EVENTS = 3000 };
  char names[N_NAMES][48];
  for (unsigned i = 0; i < 16; i++) /* 39 bytes: the words at 0, 15 and 31 alike */
    snprintf(names[i], sizeof names[i], "frame://%cx%c____MIDDLE__xxxx%cxx%c__END__0",
             'a' + (int)(i % 2), 'a' + (int)(i / 2 % 2), 'a' + (int)(i / 4 % 2),
             'a' + (int)(i / 8 % 2));
  snprintf(names[16], sizeof names[16], "%s", "fifteen_bytes_x");
  snprintf(names[17], sizeof names[17], "%s", "sixteen_bytes_xx");
  snprintf(names[18], sizeof names[18], "%s", "seventeen_bytes_x");
  size_t cap = (size_t)N_EVENTS * 200, len = 0;
  char *json = malloc(cap);
  cr_assert_not_null(json);
  unsigned pick[N_EVENTS], kernel[N_EVENTS];
  uint32_t seed = 12345;
  len += (size_t)snprintf(json + len, cap - len, "[");
  for (unsigned i = 0; i < N_EVENTS; i++) {
    seed = seed * 1103515245u + 12345u;
    pick[i] = (seed >> 8) % N_NAMES;
    kernel[i] = (seed >> 20) % 3 == 0;
    len += (size_t)snprintf(json + len, cap - len,
                            "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %u.5, \"dur\": 1%s}",
                            i ? ", " : "", kernel[i] ? "kernel" : "python_function", names[pick[i]],
                            i, kernel[i] ? ", \"args\": {\"stream\": 7}" : "");
  }
  snprintf(json + len, cap - len, "]");
  tr_trace *t = read_ok(json);
  size_t n_frames, n_kernels, f = 0, k = 0;
  const tr_pyframe *frames = tr_trace_pyframes(t, &n_frames);
  const tr_event *kernels = tr_trace_events(t, TR_KIND_KERNEL, &n_kernels);
  tr_str id_of[N_NAMES] = {0};
  for (unsigned i = 0; i < N_EVENTS; i++) {
    tr_str id = kernel[i] ? kernels[k++].name : frames[f++].name;
    cr_assert_str_eq(tr_str_get(t, id), names[pick[i]], "event %u", i);
    if (!id_of[pick[i]]) id_of[pick[i]] = id;
    cr_assert_eq(id, id_of[pick[i]], "event %u: one name, one id", i);
  }
  cr_assert_eq(f, n_frames);
  cr_assert_eq(k, n_kernels);
  tr_trace_destroy(t);
  free(json);
}

/* ------------------------------------------------------------------ compact starts */

/* Kernels at the given ts texts, in order, one per thread when threads (a context each). */
static char *kernels_at(const char *const *ts, size_t n, bool threads) {
  size_t cap = 64 + n * 128, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "[");
  for (size_t i = 0; i < n; i++)
    len +=
        (size_t)snprintf(s + len, cap - len,
                         "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":%zu,"
                         "\"ts\":%s,\"dur\":1}",
                         i ? "," : "", threads ? i : 0, ts[i]);
  snprintf(s + len, cap - len, "]");
  return s;
}

/* Every start reads back as the very double strtod makes of its text, sign of zero
 * included: whole nanoseconds near the first start as counts, the rest (a fourth
 * decimal, far from the first start, huge, -0) from the side table. */
static void expect_starts(const char *const *ts, size_t n) {
  char *json = kernels_at(ts, n, false);
  tr_trace *t = read_ok(json);
  size_t m = 0;
  const tr_event *e = tr_trace_events(t, TR_KIND_KERNEL, &m);
  cr_assert_eq(m, n);
  for (size_t i = 0; i < n; i++) {
    double want = strtod(ts[i], NULL), got = tr_event_ts(t, &e[i]);
    cr_expect(memcmp(&want, &got, sizeof want) == 0, "ts %s read back as %.17g", ts[i], got);
  }
  tr_trace_destroy(t);
  free(json);
}

Test(trace_reader, starts_in_nanoseconds_read_back_exactly) {
  static const char *const ts[] = {"2413669097444.592",
                                   "2413669097444.593",
                                   "2413669097443",
                                   "2413669097444.5925",
                                   "2413669097444.5",
                                   "2413569097444.001",
                                   "2900000000000.001",
                                   "1.5",
                                   "-0",
                                   "1e15",
                                   "1e16",
                                   "9007199254740.991"};
  expect_starts(ts, sizeof ts / sizeof *ts);
  static const char *const small[] = {"0", "0.001", "140737488355.327", "140737488355.328",
                                      "0.0001"};
  expect_starts(small, sizeof small / sizeof *small);
}

Test(trace_reader, epoch_microsecond_starts_read_back_exactly) {
  static const char *const ts[] = {"1695840000000000",   "1695840000000123",    "1695839999999877",
                                   "1695840000000001.5", "1695840000000001.25", "12.5",
                                   "4909913692199.694"};
  expect_starts(ts, sizeof ts / sizeof *ts);
}

Test(trace_reader, count_encoding_round_trips) {
  tr_trace_head h = {.ts_div = 1000.0};
  bool set = false;
  cr_expect_eq(tr_ts_encode(&h, &set, 4909913692199.694), 0);
  cr_expect(set);
  cr_expect_eq(h.ts_div, 1000.0);
  cr_expect_eq(h.ts_origin, 4909913692199694);
  cr_expect_eq(tr_ts_encode(&h, &set, 4909913692200.0), 306);
  cr_expect_eq(tr_ts_encode(&h, &set, 4909913692199.0), -694);
  cr_expect_eq(tr_ts_encode(&h, &set, 4909913692197.5), -2194);
  cr_expect_eq(tr_ts_encode(&h, &set, NAN), TR_TS_WIDE);
  cr_expect_eq(tr_ts_encode(&h, &set, 4.5e15), TR_TS_WIDE);
  /* the last count inside 2^47 of the origin, and the first outside */
  cr_expect_eq(tr_ts_encode(&h, &set, (4909913692199694.0 + 140737488355327.0) / 1000.0),
               140737488355327);
  cr_expect_eq(tr_ts_encode(&h, &set, (4909913692199694.0 + 140737488355328.0) / 1000.0),
               TR_TS_WIDE);
  tr_trace_head e = {.ts_div = 1000.0};
  set = false;
  cr_expect_eq(tr_ts_encode(&e, &set, 1695840000000000.0), 0);
  cr_expect_eq(e.ts_div, 1.0); /* past 2^53 ns: whole microseconds */
  cr_expect_eq(tr_ts_encode(&e, &set, 1695840000000007.0), 7);
  cr_expect_eq(tr_ts_encode(&e, &set, 1695840000000007.5), TR_TS_WIDE);
  tr_trace_head f = {.ts_div = 1000.0};
  set = false;
  cr_expect_eq(tr_ts_encode(&f, &set, 1.0), 0);
  cr_expect_eq(tr_ts_encode(&f, &set, 1.2345), TR_TS_WIDE); /* a fourth decimal */
  cr_expect_eq(tr_ts_encode(&f, &set, -0.0), TR_TS_WIDE);   /* 0 / 1000 is +0 */
  cr_expect_eq(tr_ts_encode(&f, &set, 0.0), -1000);
}

/* Past 65,534 contexts, an event's context position is kept beside it, and reads back. */
Test(trace_reader, contexts_past_sixteen_bits) {
  enum { N = 66000 };
  const char **ts = malloc(N * sizeof *ts);
  for (size_t i = 0; i < N; i++) ts[i] = "1000.5";
  char *json = kernels_at(ts, N, true);
  tr_trace *t = read_ok(json);
  size_t n = 0;
  const tr_event *e = tr_trace_events(t, TR_KIND_KERNEL, &n);
  cr_assert_eq(n, N);
  char want[32];
  for (size_t i = 0; i < N; i += (i < 65530 ? 997 : 1)) {
    snprintf(want, sizeof want, "%zu", i);
    cr_expect_str_eq(tr_str_get(t, tr_event_tid(t, &e[i])), want, "event %zu", i);
    cr_expect_str_eq(tr_str_get(t, tr_event_cat(t, &e[i])), "kernel", "event %zu", i);
    cr_expect_eq(tr_event_ts(t, &e[i]), 1000.5);
  }
  tr_trace_destroy(t);
  free(json);
  free(ts);
}

/* A chunk is borrowed until the next call. Under AddressSanitizer (-DTRIAGE_SANITIZE=ON)
 * its buffer is freed then, a buffer's chunks too (copies), so a name kept pointing into a
 * chunk is a use after free ASan reports in every test and end-to-end run; elsewhere a
 * buffer's chunks are read in place. */
Test(trace_source, a_chunk_is_freed_when_its_borrow_ends) {
  static const char json[] =
      "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a_kernel_name\"},"
      "{\"ph\":\"X\",\"name\":\"another_kernel_name\"}]}";
  tr_error err = {0};
  tr_source *src =
      tr_source_open_buffer(json, sizeof json - 1, &(tr_source_opts){.chunk = 32}, &err);
  cr_assert_not_null(src, "%s", err.message);
  const uint8_t *first = NULL, *next = NULL;
  size_t n = 0;
  cr_assert_eq(tr_source_next(src, &first, &n, &err), 1);
  cr_assert_eq(n, 32);
  cr_assert_eq(memcmp(first, json, n), 0);
#if defined(__SANITIZE_ADDRESS__)
  cr_assert_neq((const void *)first, (const void *)json, "a copy, freed at the next call");
  cr_assert_not(__asan_address_is_poisoned(first));
  cr_assert_eq(tr_source_next(src, &next, &n, &err), 1);
  cr_assert(__asan_address_is_poisoned(first), "the first chunk's buffer is freed");
#else
  cr_assert_eq((const void *)first, (const void *)json, "read in place");
  cr_assert_eq(tr_source_next(src, &next, &n, &err), 1);
#endif
  cr_assert_eq(memcmp(next, json + 32, n), 0);
  tr_source_close(src);
}
