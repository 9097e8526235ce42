/*
 * cli/main.c - the triage binary: parse options, load rule packs, (optionally) capture
 * live, run the analysis (an_run), print one report. Exit codes: cli/exit.h.
 */
#include <limits.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pipeline.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/rules_setup.h"
#include "live/live.h"
#include "report/kmap_json.h"
#include "report/report.h"
#include "report/text.h"

#ifndef TRIAGE_VERSION
#define TRIAGE_VERSION "0.1.0"
#endif

/* ------------------------------------------------------------------ memory */

/* The analysis allocates and frees big per-kernel and per-name arrays phase after phase.
 * glibc raises its mmap threshold to the size of each mapped block it frees, so later
 * arrays come from the heap, where freed space stays resident and the next phase's
 * arrays pile on top of it (262,145 kernel names: 157 -> 148 MB at the peak). A fixed
 * threshold keeps every block above it in its own mapping, returned when freed; the
 * read-heavy traces measure the same either way. */
#define TRIAGE_MMAP_THRESHOLD_BYTES (256 * 1024)

static void tune_allocator(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
  (void)mallopt(M_MMAP_THRESHOLD, TRIAGE_MMAP_THRESHOLD_BYTES);
#endif
}

/* ------------------------------------------------------------------ run hooks */

/* ctx of both hooks: the --quiet flag (bool). */
static void *progress_begin(void *ctx, const char *path) {
  const bool *quiet = ctx;
  return triage_progress_create(stderr, path, 0, !*quiet);
}

static void progress_end(void *bar) { triage_progress_destroy(bar); }

/* Warnings of the run, one line each on stderr; none with --quiet (the man page). */
static void print_hint(void *ctx, const an_hint *h) {
  const bool *quiet = ctx;
  if (*quiet) return;
  char line[2048];
  rp_hint_text(h, line, sizeof line);
  fprintf(stderr, "triage: %s\n", line);
}

static void print_error(const an_error *e) {
  fputs("triage: ", stderr);
  if (e->path[0]) fprintf(stderr, "%s: ", e->path);
  if (e->has_offset) fprintf(stderr, "offset %llu: ", (unsigned long long)e->offset);
  fprintf(stderr, "%s\n", e->message);
}

/* ------------------------------------------------------------------ outputs */

static int write_kernel_map(const char *path, const an_report *rep) {
  FILE *f = fopen(path, "w");
  int rc = 0;
  if (!f || rp_kernel_map_write(f, &rep->kernel_map) != 0) rc = 1;
  if (f && fclose(f) != 0) rc = 1;
  if (rc) fprintf(stderr, "triage: %s: cannot write kernel map\n", path);
  return rc;
}

static int render(FILE *out, const triage_options *opt, const an_report *rep,
                  const rp_options *ro) {
  switch (opt->format) {
    case TRIAGE_FORMAT_JSON:
      return rp_json(out, rep, ro);
    case TRIAGE_FORMAT_HTML:
      return rp_html(out, rep, ro);
    default:
      return rp_markdown(out, rep, ro);
  }
}

static int write_report(const triage_options *opt, const an_report *rep, const te_rules *rules) {
  FILE *out = opt->output_path ? fopen(opt->output_path, "w") : stdout;
  if (!out) {
    fprintf(stderr, "triage: %s: cannot open for writing\n", opt->output_path);
    return 1;
  }
  rp_options ro = {triage_options_layout(opt) == TRIAGE_LAYOUT_REFERENCE ? RP_LAYOUT_REFERENCE
                                                                         : RP_LAYOUT_DEFAULT,
                   rules, opt->full_names};
  int wrc = render(out, opt, rep, &ro);
  if (fflush(out) != 0) wrc = -1;
  if (out != stdout && fclose(out) != 0) wrc = -1;
  if (wrc != 0) {
    fprintf(stderr, "triage: %s: write error\n", opt->output_path ? opt->output_path : "stdout");
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------------------ the run */

static int run(const triage_options *opt, const te_rules *rules, const te_framework *forced,
               an_source forced_from, const char *cmdline) {
  an_run_options ro = {0};
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
  ro.rank_workers = opt->workers;
  ro.overlap_table_limit = opt->overlap_table_limit;
  bool quiet = opt->quiet;
  ro.progress = (an_read_hooks){progress_begin, triage_progress_update, progress_end, &quiet};
  ro.hint = print_hint;
  ro.hint_ctx = &quiet;
  an_report *rep = NULL;
  an_error err;
  if (an_run(&ro, rules, &rep, &err) != AN_OK) {
    print_error(&err);
    return TRIAGE_EXIT_BAD_INPUT;
  }
  rep->run.version = TRIAGE_VERSION;
  rep->run.command_line = cmdline;
  int rc = opt->kernel_map_path ? write_kernel_map(opt->kernel_map_path, rep) : 0;
  if (rc == 0) rc = write_report(opt, rep, rules);
  an_report_destroy(rep);
  return rc;
}

/* The whole command line, for the report's provenance (malloc'd; NULL if out of memory). */
static char *command_line(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n), *p = s;
  for (int i = 0; s && i < argc; i++) p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
  return s;
}

/* Rules for the main command: loaded, complete, and --framework known. NULL: exit with
 * *rc. */
static te_rules *analysis_rules(const char *argv0, triage_options *opt, const te_framework **forced,
                                int *rc) {
  triage_rules_setup_options so = {opt->rules_paths, opt->n_rules_paths, opt->no_default_rules,
                                   opt->compat};
  char compat[PATH_MAX];
  if (opt->compat && !triage_compat_pack(argv0, opt->compat, compat, sizeof compat, stderr)) {
    *rc = TRIAGE_EXIT_USAGE; /* a mode that does not exist, like an unknown --framework */
    return NULL;
  }
  te_rules *rules = triage_rules_setup(argv0, &so, stderr);
  *rc = TRIAGE_EXIT_BAD_INPUT;
  if (!rules) return NULL;
  const char *missing = te_rules_settings_missing(rules);
  if (missing) {
    fprintf(stderr,
            "triage: the rule packs set no value for setting '%s' (the default packs "
            "set every one)\n",
            missing);
    te_rules_destroy(rules);
    return NULL;
  }
  opt->live.remote_probe_delay_min_s = te_rules_settings(rules)->live_remote_probe_delay_min_s;
  *forced = NULL;
  if (opt->framework && strcmp(opt->framework, "auto") != 0) {
    *forced = te_rules_framework_lookup(rules, opt->framework);
    if (!*forced) {
      fprintf(stderr, "triage: --framework: unknown framework '%s'\n", opt->framework);
      te_rules_destroy(rules);
      *rc = TRIAGE_EXIT_USAGE;
      return NULL;
    }
  }
  return rules;
}

/* The main command: rules, live capture when asked, the analysis and the report. */
static int analyse(int argc, char **argv, triage_options *opt) {
  const te_framework *forced = NULL;
  int rc;
  te_rules *rules = analysis_rules(argv[0], opt, &forced, &rc);
  if (!rules) return rc;
  an_source forced_from = AN_SOURCE_COMMAND_LINE;
  lv_result live = {0};
  if (lv_wanted(&opt->live)) {
    char lerr[LV_ERR_CAP] = "";
    lv_status lrc = lv_run(&opt->live, rules, opt->quiet ? NULL : stderr, &live, lerr, sizeof lerr);
    if (lrc != LV_OK) {
      fprintf(stderr, "triage: %s\n", lerr);
      te_rules_destroy(rules);
      return triage_exit_for_live(lrc);
    }
    if (live.input) opt->input = live.input;
    if (live.mapping_input) opt->mapping_input = live.mapping_input;
    if (live.formal_input) opt->formal_input = live.formal_input;
    if (!forced && live.framework_id) {
      forced = te_rules_framework_lookup(rules, live.framework_id);
      forced_from = AN_SOURCE_LIVE_CAPTURE;
    }
  }
  char *cmdline = command_line(argc, argv);
  rc = run(opt, rules, forced, forced_from, cmdline);
  free(cmdline);
  lv_result_free(&live);
  te_rules_destroy(rules);
  return rc;
}

int main(int argc, char **argv) {
  tune_allocator();
  if (argc < 2) { /* no input is a usage error; --help is the way to ask for help */
    fprintf(stderr, "triage: no trace given (usage: triage [OPTIONS] TRACE; see triage --help)\n");
    return TRIAGE_EXIT_USAGE;
  }
  int first = strcmp(argv[1], "triage") == 0 ? 2 : 1;
  triage_options opt;
  triage_options_defaults(&opt);
  char err[512] = "";
  int rc;
  switch (triage_options_parse(argc, argv, first, &opt, err, sizeof err)) {
    case CLI_PARSE_OK:
      rc = analyse(argc, argv, &opt);
      break;
    case CLI_PARSE_STOP:
      rc = cli_command_find(opt.command)->run(argv[0], &opt, opt.command_argc, opt.command_argv);
      break;
    case CLI_PARSE_HELP:
      triage_usage(stdout);
      rc = TRIAGE_EXIT_OK;
      break;
    case CLI_PARSE_VERSION:
      printf("triage %s\n", TRIAGE_VERSION);
      rc = TRIAGE_EXIT_OK;
      break;
    default:
      fprintf(stderr, "triage: %s\n", err);
      rc = TRIAGE_EXIT_USAGE;
      break;
  }
  triage_options_free(&opt);
  return rc;
}
