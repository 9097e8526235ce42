/*
 * fuzz_analysis.c - libFuzzer harness for the whole single-trace pipeline.
 *
 * fuzz_trace_reader stops at the reader; the analysis then does arithmetic, sorting and
 * string work on whatever values a trace holds (infinite or huge timestamps, negative
 * or overlapping durations, duplicated ids, odd names). This harness reads the input as
 * a trace and, when it has kernels, runs what `triage TRACE` runs: stage view, kernel
 * map, kernel and fuse tables, overlap table, then renders Markdown and JSON into a
 * sink. The default rule packs are loaded once ($TRIAGE_RULES_DIR, else the source
 * tree's rules/). The steps mirror run() of src/cli/main.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bundle.h"
#include "analysis/kernel_map.h"
#include "analysis/overlap.h"
#include "analysis/tables.h"
#include "report/report.h"
#include "trace/trace.h"
#include "triage/rules.h"

#ifndef TRIAGE_SOURCE_DIR
#define TRIAGE_SOURCE_DIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "fuzz_analysis: invariant failed: %s (line %d)\n", #cond,        \
              __LINE__);                                                               \
      abort();                                                                         \
    }                                                                                  \
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
  tr_read_options ro;
  memset(&ro, 0, sizeof ro);
  tr_error err;
  memset(&err, 0, sizeof err);
  tr_trace *t = tr_trace_read_buffer("fuzz.trace.json", data, size, &ro, &err);
  if (!t) return 0;
  size_t nk = 0;
  (void)tr_trace_events(t, TR_KIND_KERNEL, &nk);
  if (nk == 0) { /* main.c stops here: "no GPU kernel events to analyse" */
    tr_trace_destroy(t);
    return 0;
  }

  an_trace_view view;
  memset(&view, 0, sizeof view);
  an_kernel_map *kmap = NULL;
  an_tables tables;
  memset(&tables, 0, sizeof tables);
  an_overlap_result ov;
  memset(&ov, 0, sizeof ov);
  int have_ov = 0;

  if (an_trace_view_build(t, "all", R, NULL, &view) != AN_OK) goto done;
  if (an_kernel_map_build(&view, 1, R, false, &kmap) != AN_OK) goto done;
  const te_framework *fw = te_rules_framework_default(R);
  CHECK(fw != NULL);
  an_tables_options to = {.min_share_pct = -1, .kernel_table_limit = 0,
                          .framework_id = fw->id, .model_path = NULL, .tp_size = 1};
  if (an_tables_build(&view, 1, kmap, kmap, R, &to, &tables) != AN_OK) goto done;
  an_overlap_trace ot = {.view = &view, .kmap = kmap};
  an_overlap_options oo = {.pid_substring = NULL, .table_limit = 0, .single_trace = true};
  an_overlap_status os = an_overlap_analyze(&ot, 1, &ot, 1, R, &oo, &ov);
  CHECK(os == AN_OVERLAP_OK || os == AN_OVERLAP_ERR_NOMEM);
  have_ov = os == AN_OVERLAP_OK;

  const char *inputs[] = {"fuzz.trace.json"};
  rp_report rep;
  memset(&rep, 0, sizeof rep);
  rep.framework_label = fw->label;
  rep.framework_id = fw->id;
  rep.inputs = inputs;
  rep.n_inputs = 1;
  rep.formal_inputs = inputs;
  rep.n_formal_inputs = 1;
  rep.tables = &tables;
  rep.overlap = have_ov ? &ov : NULL;
  rep.overlap_min_share_pct = te_rules_settings(R)->overlap_min_share_pct;
  rep.kernel_min_share_pct = te_rules_settings(R)->kernel_table_min_share_pct;
  CHECK(rp_markdown(sink(), &rep) == 0);
  CHECK(rp_json(sink(), &rep) == 0);

done:
  if (have_ov) an_overlap_result_free(&ov);
  an_tables_free(&tables);
  an_kernel_map_destroy(kmap);
  an_trace_view_free(&view);
  tr_trace_destroy(t);
  return 0;
}
