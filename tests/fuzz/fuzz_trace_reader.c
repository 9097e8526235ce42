/*
 * fuzz_trace_reader.c - libFuzzer harness for the streaming trace reader.
 *
 * Feeds arbitrary bytes (plain JSON or gzip, recognised by magic bytes) to
 * tr_trace_read_buffer and then walks everything the analysis would read from a trace,
 * so a bad event array or string handle shows up under AddressSanitizer. On failure it
 * checks the error contract of trace.h: a known code and a non-empty, one-line message.
 * Each input is read twice, with the default chunk size and with a tiny one (so every
 * token crosses a chunk boundary somewhere), and both reads must agree: same outcome,
 * same error and offset, same events and kept args. The second read also uses the other gzip
 * inflater (zlib; the first uses ISA-L when the build has it), so the two must agree too. Built
 * with -fsanitize=fuzzer by tests/fuzz/CMakeLists.txt, or as a plain corpus replayer
 * (replay_main.c) by tests/fuzz/replay.cmake.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "trace_same.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Invariant violated: stop so the fuzzer keeps the input. */
#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "fuzz_trace_reader: invariant failed: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                                 \
    }                                                                                          \
  } while (0)

/* Warnings must name the trace and count something. */
static void check_warning(void *ctx, const tr_warning *w) {
  (void)ctx;
  CHECK(w->code == TR_WARN_SKIPPED_EVENTS || w->code == TR_WARN_REPLACED_UTF8);
  CHECK(w->path != NULL && w->count > 0);
}

/* Reads every byte of s so an out-of-bounds or unterminated string is caught. */
static size_t touch(const char *s) {
  CHECK(s != NULL);
  return strlen(s);
}

static void walk(tr_trace *t) {
  size_t total = 0;
  for (int kind = TR_KIND_KERNEL; kind <= TR_KIND_RUNTIME; kind++) {
    size_t n = 0;
    const tr_event *ev = tr_trace_events(t, (tr_kind)kind, &n);
    CHECK(n == 0 || ev != NULL);
    for (size_t i = 0; i < n; i++) {
      total += touch(tr_str_get(t, ev[i].name));
      total += touch(tr_str_get(t, tr_event_cat(t, &ev[i])));
      total += touch(tr_str_get(t, tr_event_pid(t, &ev[i])));
      total += touch(tr_str_get(t, tr_event_tid(t, &ev[i])));
      total += touch(tr_str_get(t, tr_event_stream(t, &ev[i])));
      int64_t corr = tr_event_correlation(t, &ev[i]);
      if (corr != TR_NO_ID) (void)tr_trace_external_for_correlation(t, corr);
      for (int a = 0; a < TR_ARG_COUNT; a++) {
        const char *v = tr_str_get(t, tr_event_arg(t, (tr_kind)kind, &ev[i], (tr_arg)a));
        CHECK(touch(v) <= TR_MAX_ARG_BYTES);
        total += strlen(v);
      }
    }
    CHECK(n <= tr_trace_event_count(t));
  }
  /* Python frames have their own compact array (tr_trace_events returns none). */
  size_t nf = 0;
  const tr_pyframe *pf = tr_trace_pyframes(t, &nf);
  CHECK(nf == 0 || pf != NULL);
  size_t nr = 0;
  const tr_pyframe_run *runs = tr_trace_pyframe_runs(t, &nr);
  CHECK((nf == 0) == (nr == 0) && (nr == 0 || runs[0].first == 0));
  for (size_t j = 0; j < nr; j++) {
    CHECK(j == 0 || (runs[j].first > runs[j - 1].first && runs[j].first < nf));
    total += touch(tr_str_get(t, runs[j].pid));
    total += touch(tr_str_get(t, runs[j].tid));
  }
  for (size_t i = 0; i < nf; i++) {
    total += touch(tr_str_get(t, pf[i].name));
    CHECK(tr_pyframe_run_of(t, i)->first <= i);
    (void)tr_pyframe_dur(t, &pf[i]);
  }
  /* "sorted" must be true only when every thread's frames are in (ts, -end) order: check
   * each frame against its thread's previous one (quadratic, but fuzz inputs are small) */
  if (tr_trace_pyframes_sorted(t))
    for (size_t i = 0; i < nf && i < 4096; i++) {
      const tr_pyframe_run *ri = tr_pyframe_run_of(t, i);
      for (size_t j = i; j-- > 0;) {
        const tr_pyframe_run *rj = tr_pyframe_run_of(t, j);
        if (rj->pid != ri->pid || rj->tid != ri->tid) continue;
        double si = tr_pyframe_ts(t, &pf[i]), sj = tr_pyframe_ts(t, &pf[j]);
        double ei = si + tr_pyframe_dur(t, &pf[i]), ej = sj + tr_pyframe_dur(t, &pf[j]);
        CHECK(sj < si || (sj == si && ej >= ei));
        break;
      }
    }
  size_t nn = 0;
  const tr_str *names = tr_trace_pyframe_names(t, &nn);
  CHECK(nn <= nf && (nn == 0 || names != NULL));
  for (size_t i = 0; i < nn; i++) total += touch(tr_str_get(t, names[i]));
  CHECK(nf <= tr_trace_event_count(t));
  size_t nt = 0;
  const tr_thread_name *th = tr_trace_thread_names(t, &nt);
  CHECK(nt == 0 || th != NULL);
  for (size_t i = 0; i < nt; i++) {
    total += touch(tr_str_get(t, th[i].pid));
    total += touch(tr_str_get(t, th[i].tid));
    total += touch(tr_str_get(t, th[i].name));
  }
  const tr_trace_meta *m = tr_trace_meta_get(t);
  total += touch(tr_str_get(t, m->host_name));
  CHECK(m->n_processes <= TR_MAX_META_ITEMS && (m->n_processes == 0 || m->processes != NULL));
  for (size_t i = 0; i < m->n_processes; i++) {
    total += touch(tr_str_get(t, m->processes[i].pid));
    total += touch(tr_str_get(t, m->processes[i].name));
  }
  total += touch(tr_trace_sample_text(t));
  total += touch(tr_trace_path(t));
  CHECK(tr_trace_skipped_count(t) <= tr_trace_event_count(t));
  /* Interning after reading must work and round-trip. */
  tr_str s = tr_str_intern(t, "fuzz_derived_name", 17);
  CHECK(strcmp(tr_str_get(t, s), "fuzz_derived_name") == 0);
  (void)total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tr_read_options opts;
  memset(&opts, 0, sizeof opts);
  opts.warn = check_warning;
  tr_error err;
  memset(&err, 0, sizeof err);

  tr_trace *t = tr_trace_read_buffer("fuzz-input.json", data, size, &opts, &err);

  /* Again in tiny chunks: 1-64 bytes, picked from the input so every size is tried. */
  int gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  tr_read_options small = opts;
  small.chunk_size = 1 + (size ? data[size - 1] % 64u : 0u);
  if (gzip && small.chunk_size < 16) small.chunk_size += 16; /* a thread hand-off per chunk */
  /* and with the other gzip inflater: zlib, where the first read used ISA-L */
  small.inflater = TR_INFLATE_ZLIB;
  tr_error err2;
  memset(&err2, 0, sizeof err2);
  tr_trace *t2 = tr_trace_read_buffer("fuzz-input.json", data, size, &small, &err2);
  CHECK((t == NULL) == (t2 == NULL));
  if (t && t2) {
    const char *d = trace_diff(t, t2, true);
    if (d) fprintf(stderr, "fuzz_trace_reader: the reads differ: %s\n", d);
    CHECK(d == NULL);
  }
  /* A gzip error may be found before or after a JSON error earlier in the stream,
   * depending on how far ahead the inflate thread ran (regressions/fuzz_trace_reader/
   * gzip-error-order.json.gz): both reads fail, but only then may they differ. */
  if (!t && !t2 && err.code != TR_ERR_GZIP && err2.code != TR_ERR_GZIP) {
    CHECK(err.code == err2.code);
    if (err.code != TR_ERR_NOMEM) {
      CHECK(err.has_offset == err2.has_offset && err.offset == err2.offset);
      CHECK(strcmp(err.message, err2.message) == 0);
    }
  }
  tr_trace_destroy(t2);

  if (t) {
    walk(t);
    tr_trace_destroy(t);
    return 0;
  }
  /* Error contract: a known code and one non-empty line. */
  CHECK(err.code >= TR_ERR_IO && err.code <= TR_ERR_NOMEM);
  size_t len = strnlen(err.message, sizeof err.message);
  CHECK(len > 0 && len < sizeof err.message);
  CHECK(memchr(err.message, '\n', len) == NULL);
  /* A plain (not gzip) input has its offset inside the input or just past its end. */
  if (!gzip && err.has_offset) CHECK(err.offset <= size);
  return 0;
}
