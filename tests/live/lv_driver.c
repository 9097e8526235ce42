/*
 * lv_driver.c - test-only front end to lv_run: takes the live flags the tests use,
 * runs the capture and prints what lv_run returned as KEY=VALUE lines on stdout, so
 * run_live_tests.py can check the capture layer (directories, files, server_args.json,
 * messages, exit codes) independently of the analysis behind the CLI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/exit.h"
#include "live/live.h"
#include "triage/rules.h"

static te_rules *load_rules(void) {
  const char *dir = getenv("TRIAGE_RULES_DIR");
  if (!dir) return NULL;
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  if (te_rules_load_path(r, dir, d) != TE_OK || te_rules_finalize(r, d) != TE_OK) {
    fprintf(stderr, "lv_driver: cannot load rules from %s\n", dir);
    te_rules_destroy(r);
    r = NULL;
  }
  te_diags_destroy(d);
  return r;
}

int main(int argc, char **argv) {
  lv_options o;
  lv_options_defaults(&o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define STR(flag, field)           \
  if (strcmp(a, flag) == 0 && v) { \
    o.field = v;                   \
    i++;                           \
    continue;                      \
  }
#define INT(flag, field)           \
  if (strcmp(a, flag) == 0 && v) { \
    o.field = atoi(v);             \
    i++;                           \
    continue;                      \
  }
    STR("--url", url)
    STR("--mapping-url", mapping_url)
    STR("--formal-url", formal_url)
    STR("--output-dir", output_dir)
    STR("--mapping-output-dir", mapping_output_dir)
    STR("--formal-output-dir", formal_output_dir)
    STR("--profile-prefix", profile_prefix)
    STR("--api-key", api_key)
    if (strcmp(a, "--profile-workload") == 0 && v) {
      static const char *const names[] = {"both", "prefill", "decode", "legacy"};
      int w = 0;
      while (w < 4 && strcmp(v, names[w]) != 0) w++;
      if (w == 4) {
        fprintf(stderr, "lv_driver: unknown workload %s\n", v);
        return 2;
      }
      o.workload = (lv_workload)w;
      i++;
      continue;
    }
    STR("--start-step", start_step)
    STR("--framework", framework)
    INT("--num-steps", num_steps)
    INT("--warmup-steps", warmup_steps)
    INT("--probe-requests", probe_requests)
    INT("--prefill-input-len", prefill_input_len)
    INT("--decode-output-len", decode_output_len)
    if (strcmp(a, "--http-timeout") == 0 && v) {
      o.http_timeout_s = atof(v);
      i++;
      continue;
    }
    if (strcmp(a, "--probe-delay") == 0 && v) {
      o.probe_delay_s = atof(v);
      i++;
      continue;
    }
    if (strcmp(a, "--profile-by-stage") == 0) {
      o.profile_by_stage = 1;
      continue;
    }
    if (strcmp(a, "--no-profile-by-stage") == 0) {
      o.profile_by_stage = 0;
      continue;
    }
    fprintf(stderr, "lv_driver: unknown argument %s\n", a);
    return 2;
  }
  te_rules *rules = load_rules();
  if (rules) o.remote_probe_delay_min_s = te_rules_settings(rules)->live_remote_probe_delay_min_s;
  lv_result res;
  char err[1024];
  if (o.framework && strcmp(o.framework, "auto") == 0) o.framework = NULL;
  lv_status rc = lv_run(&o, rules, stderr, &res, err, sizeof err);
  if (rc != LV_OK) {
    fprintf(stderr, "triage: %s\n", err);
  } else {
    printf("input=%s\nmapping_input=%s\nformal_input=%s\nserver_args=%s\nframework=%s\n",
           res.input ? res.input : "", res.mapping_input ? res.mapping_input : "",
           res.formal_input ? res.formal_input : "",
           res.server_args_path ? res.server_args_path : "", res.framework_id);
  }
  lv_result_free(&res);
  te_rules_destroy(rules);
  return triage_exit_for_live(rc);
}
