/*
 * fuzz_analysis.c - libFuzzer harness for the whole single-trace pipeline.
 *
 * fuzz_trace_reader stops at the reader; the analysis then does arithmetic, sorting and
 * string work on whatever values a trace holds (infinite or huge timestamps, negative
 * or overlapping durations, duplicated ids, odd names). This harness reads the input as
 * a trace and runs what `triage TRACE` runs (an_run: stage view, kernel map, kernel and
 * fuse tables, overlap table), then renders Markdown, JSON and the kernel map into a
 * sink. The default rule packs are loaded once ($TRIAGE_RULES_DIR, else the source
 * tree's rules/).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pipeline.h"
#include "report/kmap_json.h"
#include "report/report.h"
#include "triage/rules.h"

#ifndef TRIAGE_SOURCE_DIR
#define TRIAGE_SOURCE_DIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "fuzz_analysis: invariant failed: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

static FILE *sink(void) {
  static FILE *f;
  if (!f) f = fopen("/dev/null", "w");
  return f;
}

/* The default packs, loaded and finalized once per process. */
static const te_rules *rules(void) {
  static te_rules *r;
  if (r) return r;
  const char *dir = getenv("TRIAGE_RULES_DIR");
  if (!dir || !*dir) dir = TRIAGE_SOURCE_DIR "/rules";
  te_diags *d = te_diags_create();
  r = te_rules_create();
  CHECK(r && d);
  if (te_rules_load_path(r, dir, d) != TE_OK || te_rules_finalize(r, d) != TE_OK) {
    fprintf(stderr, "fuzz_analysis: cannot load the rule packs of %s\n", dir);
    abort();
  }
  te_diags_destroy(d);
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const te_rules *R = rules();
  an_run_options o;
  memset(&o, 0, sizeof o);
  o.formal.name = "fuzz.trace.json";
  o.formal.data = data;
  o.formal.len = size;
  o.min_share_pct = -1;
  an_report *rep = NULL;
  an_error err;
  an_status st = an_run(&o, R, &rep, &err);
  if (st != AN_OK) { /* unreadable, or nothing to analyse: one message, no report */
    CHECK(st == AN_ERR_INPUT || st == AN_ERR_NOMEM);
    CHECK(rep == NULL && err.message[0] != '\0');
    return 0;
  }
  CHECK(rep->run.n_formal_inputs == 1 && rep->n_stages > 0);
  rp_options ro = {(rp_layout)(size % 2), R, size % 3 == 0};
  CHECK(rp_markdown(sink(), rep, &ro) == 0);
  CHECK(rp_json(sink(), rep, &ro) == 0);
  CHECK(rp_html(sink(), rep, &ro) == 0);
  CHECK(rp_kernel_map_write(sink(), &rep->kernel_map) == 0);
  an_report_destroy(rep);
  return 0;
}
