/*
 * cli/analyse.c - the analysis command (analyse.h): rule packs, live capture when asked,
 * the analysis (an_run), the report and the kernel map.
 */
#include "cli/analyse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/exit.h"
#include "cli/options.h"
#include "live/live.h"
#include "report/kmap_json.h"
#include "report/report.h"

#ifndef TRIAGE_VERSION
#define TRIAGE_VERSION "0.1.0"
#endif

static int write_kernel_map(const char *path, const an_report *rep) {
  FILE *f = cli_file_open(path);
  if (!f) return TRIAGE_EXIT_BAD_INPUT;
  return cli_file_close(f, path, rp_kernel_map_write(f, &rep->kernel_map));
}

static int render(FILE *out, const triage_options *opt, const an_report *rep,
                  const rp_options *ro) {
  switch (opt->common.format) {
    case TRIAGE_FORMAT_JSON:
      return rp_json(out, rep, ro);
    case TRIAGE_FORMAT_HTML:
      return rp_html(out, rep, ro);
    default:
      return rp_markdown(out, rep, ro);
  }
}

static int write_report(const triage_options *opt, const an_report *rep, const te_rules *rules) {
  FILE *out = cli_output_open(&opt->common);
  if (!out) return TRIAGE_EXIT_BAD_INPUT;
  rp_options ro = {triage_options_layout(opt) == TRIAGE_LAYOUT_REFERENCE ? RP_LAYOUT_REFERENCE
                                                                         : RP_LAYOUT_DEFAULT,
                   rules, opt->full_names};
  return cli_output_close(out, &opt->common, render(out, opt, rep, &ro));
}

static int run(const triage_options *opt, const te_rules *rules, const te_framework *forced,
               an_source forced_from, const char *cmdline) {
  an_run_options ro = cli_run_options(&opt->common);
  if (opt->mapping_input) {
    ro.mapping.path = opt->mapping_input;
    ro.formal.path = opt->formal_input;
  } else {
    ro.formal.path = opt->input;
  }
  ro.framework = forced;
  ro.framework_source = forced_from;
  ro.pid_substring = opt->pid_substring;
  ro.min_share_pct = opt->min_share_pct;
  ro.kernel_table_limit = opt->kernel_table_limit;
  ro.one_rank = opt->rank >= 0;
  ro.rank = opt->rank;
  ro.overlap_table_limit = opt->overlap_table_limit;
  /* only the JSON report carries the one-rank data (rank_data.c) */
  ro.no_rank_data = opt->common.format != TRIAGE_FORMAT_JSON;
  an_report *rep = NULL;
  an_error err;
  if (an_run(&ro, rules, &rep, &err) != AN_OK) {
    cli_print_run_error(&err, NULL);
    return TRIAGE_EXIT_BAD_INPUT;
  }
  rep->run.version = TRIAGE_VERSION;
  rep->run.command_line = cmdline;
  int rc = cli_rank_check(ro.formal.path, opt->rank, rep);
  if (rc == 0 && opt->kernel_map_path) rc = write_kernel_map(opt->kernel_map_path, rep);
  if (rc == 0) rc = write_report(opt, rep, rules);
  an_report_destroy(rep);
  return rc;
}

/* --framework among the packs' frameworks (NULL for auto); false after a usage line. */
static bool forced_framework(const te_rules *rules, const triage_options *opt,
                             const te_framework **forced) {
  *forced = NULL;
  if (!opt->framework || strcmp(opt->framework, "auto") == 0) return true;
  *forced = te_rules_framework_lookup(rules, opt->framework);
  if (!*forced) fprintf(stderr, "triage: --framework: unknown framework '%s'\n", opt->framework);
  return *forced != NULL;
}

/* Live capture when asked: the captured directories become the inputs. */
static int capture(triage_options *opt, const te_rules *rules, lv_result *live,
                   const te_framework **forced, an_source *forced_from) {
  opt->live.remote_probe_delay_min_s = te_rules_settings(rules)->live_remote_probe_delay_min_s;
  char lerr[LV_ERR_CAP] = "";
  lv_status lrc =
      lv_run(&opt->live, rules, opt->common.quiet ? NULL : stderr, live, lerr, sizeof lerr);
  if (lrc != LV_OK) {
    fprintf(stderr, "triage: %s\n", lerr);
    return triage_exit_for_live(lrc);
  }
  if (live->input) opt->input = live->input;
  if (live->mapping_input) opt->mapping_input = live->mapping_input;
  if (live->formal_input) opt->formal_input = live->formal_input;
  if (!*forced && live->framework_id) {
    *forced = te_rules_framework_lookup(rules, live->framework_id);
    *forced_from = AN_SOURCE_LIVE_CAPTURE;
  }
  return TRIAGE_EXIT_OK;
}

int cli_analyse_run(const cli_invocation *inv, const te_rules *rules, void *args) {
  triage_options *opt = args;
  const te_framework *forced = NULL;
  an_source forced_from = AN_SOURCE_COMMAND_LINE;
  lv_result live = {0};
  int rc = forced_framework(rules, opt, &forced) ? TRIAGE_EXIT_OK : TRIAGE_EXIT_USAGE;
  if (rc == TRIAGE_EXIT_OK && lv_wanted(&opt->live))
    rc = capture(opt, rules, &live, &forced, &forced_from);
  if (rc == TRIAGE_EXIT_OK) {
    char *cmdline = cli_command_line(inv, inv->argv[0]);
    rc = run(opt, rules, forced, forced_from, cmdline);
    free(cmdline);
  }
  lv_result_free(&live);
  return rc;
}
