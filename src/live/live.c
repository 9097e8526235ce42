/* live/live.c - entry point of live capture (see live.h). */
#include "live/live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lv_wanted(const triage_options *opt) {
  return opt && (opt->url || opt->mapping_url || opt->formal_url);
}

int lv_run(const triage_options *opt, const te_rules *rules, FILE *progress, lv_result *out,
           char *err, size_t err_cap) {
  (void)opt;
  (void)rules;
  (void)progress;
  if (out) memset(out, 0, sizeof *out);
  snprintf(err, err_cap, "live capture is not implemented yet");
  return LV_FAIL;
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
