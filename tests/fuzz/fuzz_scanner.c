/*
 * fuzz_scanner.c - libFuzzer harness: the SIMD scanner against the byte scanner.
 *
 * Each input (plain JSON or gzip) is read by the byte scanner alone (TR_SCANNER_BYTES,
 * the reference), then by the fast path at every SIMD level this build and machine have
 * with the default chunk size, and at the default level with a small chunk picked from
 * the input (so events cross chunk ends, and the fast path hands them to the byte scanner
 * and picks up after them). Every read must give the same trace (trace_same.h, string ids
 * included) and the same warnings, or fail with the same error at the same offset.
 * Built with -fsanitize=fuzzer by tests/fuzz/CMakeLists.txt, or as a plain corpus replayer
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
#define CHECK(cond, ...)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "fuzz_scanner: invariant failed: %s (line %d): ", #cond, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                                       \
      fputc('\n', stderr);                                                                \
      abort();                                                                            \
    }                                                                                     \
  } while (0)

typedef struct outcome {
  tr_trace *t;
  tr_error err;
  uint64_t warned[3]; /* skipped, offset of the first, replaced */
} outcome;

static void note_warning(void *ctx, const tr_warning *w) {
  uint64_t *n = ctx;
  if (w->code == TR_WARN_SKIPPED_EVENTS) {
    n[0] = w->count;
    n[1] = w->offset;
  } else {
    n[2] = w->count;
  }
}

static void read_as(outcome *o, const uint8_t *data, size_t size, tr_scanner scanner,
                    size_t chunk) {
  tr_read_options opts;
  memset(&opts, 0, sizeof opts);
  memset(o, 0, sizeof *o);
  opts.scanner = scanner;
  opts.chunk_size = chunk;
  opts.warn = note_warning;
  opts.warn_ctx = o->warned;
  o->t = tr_trace_read_buffer("fuzz-input.json", data, size, &opts, &o->err);
}

static void same_outcome(const outcome *ref, const outcome *o, tr_scanner scanner, size_t chunk) {
  CHECK((ref->t == NULL) == (o->t == NULL), "scanner %d chunk %zu: '%s' / '%s'", (int)scanner,
        chunk, ref->err.message, o->err.message);
  if (ref->t) {
    const char *d = trace_diff(ref->t, o->t, true);
    CHECK(d == NULL, "scanner %d chunk %zu: %s", (int)scanner, chunk, d);
    CHECK(memcmp(ref->warned, o->warned, sizeof o->warned) == 0, "scanner %d: warnings",
          (int)scanner);
    return;
  }
  /* a gzip error may be met before or after a JSON error, by how far the inflate thread
   * ran ahead (fuzz_trace_reader.c): then only both failing counts */
  if (ref->err.code == TR_ERR_GZIP || o->err.code == TR_ERR_GZIP) return;
  CHECK(ref->err.code == o->err.code && ref->err.offset == o->err.offset &&
            strcmp(ref->err.message, o->err.message) == 0,
        "scanner %d chunk %zu: '%s' at %llu, fast '%s' at %llu", (int)scanner, chunk,
        ref->err.message, (unsigned long long)ref->err.offset, o->err.message,
        (unsigned long long)o->err.offset);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const tr_scanner levels[] = {TR_SCANNER_SCALAR, TR_SCANNER_SSE2, TR_SCANNER_NEON,
                                      TR_SCANNER_AVX2};
  outcome ref, o;
  read_as(&ref, data, size, TR_SCANNER_BYTES, 0);
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    read_as(&o, data, size, levels[i], 0);
    same_outcome(&ref, &o, levels[i], 0);
    tr_trace_destroy(o.t);
  }
  /* 1..1024 bytes, from the input's last byte and its size */
  size_t chunk = 1 + ((size ? data[size - 1] : 0u) * 4u + size) % 1024u;
  read_as(&o, data, size, TR_SCANNER_AUTO, chunk);
  same_outcome(&ref, &o, TR_SCANNER_AUTO, chunk);
  tr_trace_destroy(o.t);
  tr_trace_destroy(ref.t);
  return 0;
}
