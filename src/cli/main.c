/*
 * cli/main.c - the triage binary: parse options, load rule packs, (optionally) capture
 * live, discover and read traces, analyse, print one report.
 *
 * Exit status: 0 report printed; 1 bad input (unreadable trace, broken rules, nothing to
 * analyse); 2 usage error; 130 interrupted live capture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bundle.h"
#include "analysis/kernel_map.h"
#include "analysis/overlap.h"
#include "analysis/tables.h"
#include "cli/exit.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/rules_setup.h"
#include "live/live.h"
#include "report/kmap_json.h"
#include "report/report.h"
#include "trace/discover.h"
#include "trace/trace.h"

#ifndef TRIAGE_VERSION
#define TRIAGE_VERSION "0.1.0"
#endif

/* One side of the analysis: the mapping traces or the formal traces. */
typedef struct side {
  const char *input;
  tr_input_set set;
  tr_trace **traces;
  an_trace_view *views;
  const char **paths;
  size_t n;
  tr_server_args sa;
  bool has_sa;
  const te_framework *fw;
  an_kernel_map *kmap;
} side;

static void side_free(side *s) {
  an_kernel_map_destroy(s->kmap);
  for (size_t i = 0; i < s->n; i++) {
    an_trace_view_free(&s->views[i]);
    tr_trace_destroy(s->traces[i]);
  }
  free(s->views);
  free(s->traces);
  free(s->paths);
  if (s->has_sa) tr_server_args_free(&s->sa);
  tr_input_set_free(&s->set);
  memset(s, 0, sizeof *s);
}

static void report_tr_error(const char *path, const tr_error *e) {
  if (e->has_offset)
    fprintf(stderr, "triage: %s: offset %llu: %s\n", path, (unsigned long long)e->offset, e->message);
  else
    fprintf(stderr, "triage: %s: %s\n", path, e->message[0] ? e->message : "cannot read");
}

/* Reader warnings: one line each on stderr, none with --quiet. */
static void print_trace_warning(void *ctx, const tr_warning *w) {
  (void)ctx;
  if (w->code == TR_WARN_SKIPPED_EVENTS)
    fprintf(stderr, "triage: %s: warning: skipped %llu event%s with unusable fields (first at offset %llu)\n",
            w->path, (unsigned long long)w->count, w->count == 1 ? "" : "s",
            (unsigned long long)w->offset);
  else if (w->code == TR_WARN_REPLACED_UTF8)
    fprintf(stderr, "triage: %s: warning: replaced %llu invalid UTF-8 sequences or NUL characters with U+FFFD\n",
            w->path, (unsigned long long)w->count);
}

/* Discovers and reads one side's traces and builds their views. Returns 0 or 1. */
static int load_side(const char *input, const te_rules *rules, const triage_options *opt,
                     side *s) {
  memset(s, 0, sizeof *s);
  s->input = input;
  tr_error err = {0};
  if (tr_discover(input, rules, &s->set, &err) != 0) {
    report_tr_error(input, &err);
    return 1;
  }
  if (!s->set.n) {
    fprintf(stderr, "triage: %s: no trace files found\n", input);
    return 1;
  }
  s->traces = calloc(s->set.n, sizeof *s->traces);
  s->views = calloc(s->set.n, sizeof *s->views);
  s->paths = calloc(s->set.n, sizeof *s->paths);
  if (!s->traces || !s->views || !s->paths) {
    fprintf(stderr, "triage: %s: out of memory\n", input);
    return 1;
  }
  for (size_t i = 0; i < s->set.n; i++) {
    const char *path = s->set.files[i].path;
    triage_progress *bar = triage_progress_create(stderr, path, 0, !opt->quiet);
    tr_read_options ro = {0};
    ro.progress = triage_progress_update;
    ro.progress_ctx = bar;
    if (!opt->quiet) ro.warn = print_trace_warning;
    memset(&err, 0, sizeof err);
    tr_trace *t = tr_trace_read(path, &ro, &err);
    triage_progress_destroy(bar);
    if (!t) {
      report_tr_error(path, &err);
      return 1;
    }
    s->traces[i] = t;
    s->paths[i] = path;
    s->n = i + 1;
    an_status rc = an_trace_view_build(t, s->set.files[i].stage_id, rules, NULL, &s->views[i]);
    if (rc != AN_OK) {
      fprintf(stderr, "triage: %s: %s\n", path,
              rc == AN_ERR_NOMEM ? "out of memory" : "rule packs define no \"all\" stage");
      return 1;
    }
  }
  if (s->set.server_args_path) {
    memset(&err, 0, sizeof err);
    if (tr_server_args_load(s->set.server_args_path, &s->sa, &err) == 0) s->has_sa = true;
    else if (!opt->quiet)
      fprintf(stderr, "triage: %s: warning: %s (server args ignored)\n", s->set.server_args_path,
              err.message);
  }
  return 0;
}

/* Framework detection (reference 2.4): server args, then path hints, then trace content,
 * then the rules' default. Server-args keys of a non-default framework outrank its text
 * hints (the reference checks TokenSpeed keys before the JSON text). */
static const te_framework *detect_framework(const te_rules *rules, const side *s) {
  const te_framework *dflt = te_rules_framework_default(rules);
  if (s->has_sa) {
    const te_framework *k = te_rules_framework_from_keys(rules, (const char *const *)s->sa.keys,
                                                         s->sa.n_keys);
    const te_framework *t = s->sa.json_text ? te_rules_framework_from_text(rules, s->sa.json_text) : NULL;
    if (k && k != dflt) return k;
    if (t) return t;
    if (k) return k;
  }
  const te_framework *f = te_rules_framework_from_text(rules, s->input);
  if (f) return f;
  for (size_t i = 0; i < s->n; i++)
    if ((f = te_rules_framework_from_text(rules, s->paths[i]))) return f;
  for (size_t i = 0; i < s->n && i < 3; i++)
    if ((f = te_rules_framework_from_text(rules, tr_trace_sample_text(s->traces[i])))) return f;
  return dflt;
}

/* The reference samples the mapping pass for every framework but the ones listed in
 * kernel_map.unsampled_frameworks. */
static bool sampled(const te_rules *rules, const te_framework *fw) {
  return !te_string_list_has(&te_rules_settings(rules)->kernel_map_unsampled_frameworks, fw->id);
}

static size_t side_kernels(const side *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    for (size_t k = 0; k < s->views[i].n_stages; k++) n += s->views[i].stages[k].n;
  return n;
}

static int write_kernel_map(const char *path, const an_kernel_map *m) {
  char *text = rp_kernel_map_json(m);
  if (!text) {
    fprintf(stderr, "triage: %s: out of memory\n", path);
    return 1;
  }
  FILE *f = fopen(path, "w");
  int rc = 0;
  if (!f || fputs(text, f) == EOF || fputc('\n', f) == EOF) rc = 1;
  if (f && fclose(f) != 0) rc = 1;
  if (rc) fprintf(stderr, "triage: %s: cannot write kernel map\n", path);
  free(text);
  return rc;
}

static int run(const triage_options *opt, const te_rules *rules, const te_framework *forced) {
  bool two = opt->mapping_input != NULL;
  side fm = {0}, mp = {0};
  int rc = 1;
  an_tables tables = {0};
  an_overlap_result ov = {0};
  bool have_ov = false;
  FILE *out = NULL;
  const char *formal_input = two ? opt->formal_input : opt->input;
  if (load_side(formal_input, rules, opt, &fm) != 0) goto done;
  if (two && load_side(opt->mapping_input, rules, opt, &mp) != 0) goto done;
  if (!side_kernels(&fm)) {
    fprintf(stderr, "triage: %s: no GPU kernel events to analyse\n", formal_input);
    goto done;
  }
  fm.fw = forced ? forced : detect_framework(rules, &fm);
  const side *ms = two ? &mp : &fm;
  if (two) mp.fw = forced ? forced : detect_framework(rules, &mp);

  an_status st = an_kernel_map_build(ms->views, ms->n, rules, sampled(rules, ms->fw),
                                     two ? &mp.kmap : &fm.kmap);
  if (st == AN_OK && two) st = an_kernel_map_build(fm.views, fm.n, rules, sampled(rules, fm.fw), &fm.kmap);
  if (st != AN_OK) {
    fprintf(stderr, "triage: %s: out of memory\n", formal_input);
    goto done;
  }
  const an_kernel_map *mapping = two ? mp.kmap : fm.kmap;
  const side *sa_side = fm.has_sa ? &fm : (two && mp.has_sa ? &mp : NULL);
  an_tables_options to = {
      .min_share_pct = opt->min_share_pct,
      .kernel_table_limit = opt->kernel_table_limit,
      .framework_id = fm.fw->id,
      .model_path = sa_side ? sa_side->sa.model_path : NULL,
      .tp_size = sa_side ? sa_side->sa.tp_size : 1,
  };
  if (an_tables_build(fm.views, fm.n, mapping, fm.kmap, rules, &to, &tables) != AN_OK) {
    fprintf(stderr, "triage: %s: out of memory\n", formal_input);
    goto done;
  }

  /* overlap table (src/analysis/overlap.c): in single-trace mode the traces are their
   * own mapping */
  an_overlap_trace *ofm = calloc(fm.n, sizeof *ofm);
  an_overlap_trace *omp = calloc(ms->n, sizeof *omp);
  if (!ofm || !omp) {
    free(ofm);
    free(omp);
    fprintf(stderr, "triage: out of memory\n");
    goto done;
  }
  for (size_t i = 0; i < fm.n; i++) ofm[i] = (an_overlap_trace){.view = &fm.views[i], .kmap = fm.kmap};
  for (size_t i = 0; i < ms->n; i++) omp[i] = (an_overlap_trace){.view = &ms->views[i], .kmap = mapping};
  an_overlap_options oo = {.pid_substring = opt->pid_substring,
                           .table_limit = opt->overlap_table_limit,
                           .single_trace = !two};
  an_overlap_status os = an_overlap_analyze(omp, ms->n, ofm, fm.n, rules, &oo, &ov);
  free(ofm);
  free(omp);
  if (os != AN_OVERLAP_OK) {
    fprintf(stderr, "triage: %s: overlap analysis failed (%s)\n", formal_input,
            os == AN_OVERLAP_ERR_NOMEM ? "out of memory" : "bad arguments");
    goto done;
  }
  have_ov = true;

  if (opt->kernel_map_path && write_kernel_map(opt->kernel_map_path, mapping) != 0) goto done;

  rp_report rep = {0};
  rep.two_trace = two;
  rep.framework_label = fm.fw->label;
  rep.framework_id = fm.fw->id;
  rep.mapping_framework_label = two ? mp.fw->label : NULL;
  rep.inputs = fm.paths;
  rep.n_inputs = fm.n;
  rep.mapping_inputs = mp.paths;
  rep.n_mapping_inputs = mp.n;
  rep.formal_inputs = fm.paths;
  rep.n_formal_inputs = fm.n;
  rep.model = sa_side ? sa_side->sa.model_path : NULL;
  rep.tables = &tables;
  rep.overlap = &ov;
  rep.overlap_min_share_pct = te_rules_settings(rules)->overlap_min_share_pct;
  rep.kernel_min_share_pct = opt->min_share_pct >= 0
                                 ? opt->min_share_pct
                                 : te_rules_settings(rules)->kernel_table_min_share_pct;
  out = opt->output_path ? fopen(opt->output_path, "w") : stdout;
  if (!out) {
    fprintf(stderr, "triage: %s: cannot open for writing\n", opt->output_path);
    goto done;
  }
  int wrc = opt->format == TRIAGE_FORMAT_JSON ? rp_json(out, &rep) : rp_markdown(out, &rep);
  if (fflush(out) != 0) wrc = -1;
  if (wrc != 0) {
    fprintf(stderr, "triage: %s: write error\n", opt->output_path ? opt->output_path : "stdout");
    goto done;
  }
  rc = 0;
done:
  if (out && out != stdout && fclose(out) != 0 && rc == 0) {
    fprintf(stderr, "triage: %s: write error\n", opt->output_path);
    rc = 1;
  }
  if (have_ov) an_overlap_result_free(&ov);
  an_tables_free(&tables);
  side_free(&fm);
  side_free(&mp);
  return rc;
}

/* `triage [--rules X]... [--no-default-rules] rules SUBCOMMAND ...`: the rule-pack options
 * may precede the sub-command word, so they are collected up to the first plain word.
 * Returns the sub-command's exit code, or -1 when argv is not a `rules` invocation. */
static int dispatch_rules_subcommand(int argc, char **argv) {
  const char **paths = calloc((size_t)argc, sizeof *paths);
  if (!paths) return 1;
  size_t n = 0;
  bool no_defaults = false;
  int rc = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--rules") == 0 && i + 1 < argc) {
      paths[n++] = argv[++i];
    } else if (strncmp(a, "--rules=", 8) == 0) {
      paths[n++] = a + 8;
    } else if (strcmp(a, "--no-default-rules") == 0) {
      no_defaults = true;
    } else if (a[0] == '-') {
      continue; /* other flags (--quiet, ...) do not change what `rules` does */
    } else {
      if (strcmp(a, "rules") == 0)
        rc = triage_rules_main(argv[0], argc - i, argv + i, paths, n, no_defaults, stdout, stderr);
      break;
    }
  }
  free(paths);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) { /* no input is a usage error; --help is the way to ask for help */
    fprintf(stderr, "triage: no trace given (usage: triage [OPTIONS] TRACE; see triage --help)\n");
    return 2;
  }
  int rules_rc = dispatch_rules_subcommand(argc, argv);
  if (rules_rc >= 0) return rules_rc;
  int first = strcmp(argv[1], "triage") == 0 ? 2 : 1;
  triage_options opt;
  triage_options_defaults(&opt);
  char err[512] = "";
  int prc = triage_options_parse(argc, argv, first, &opt, err, sizeof err);
  if (prc == TRIAGE_PARSE_HELP) {
    triage_usage(stdout);
    triage_options_free(&opt);
    return 0;
  }
  if (prc == TRIAGE_PARSE_VERSION) {
    printf("triage %s\n", TRIAGE_VERSION);
    triage_options_free(&opt);
    return 0;
  }
  if (prc != TRIAGE_PARSE_OK) {
    fprintf(stderr, "triage: %s\n", err);
    triage_options_free(&opt);
    return 2;
  }
  te_rules *rules = triage_rules_setup(argv[0], opt.rules_paths, opt.n_rules_paths,
                                       opt.no_default_rules, stderr);
  if (!rules) {
    triage_options_free(&opt);
    return 1;
  }
  const char *missing = te_rules_settings_missing(rules);
  if (missing) {
    fprintf(stderr, "triage: the rule packs set no value for setting '%s' (the default packs "
                    "set every one)\n", missing);
    te_rules_destroy(rules);
    triage_options_free(&opt);
    return 1;
  }
  opt.live.remote_probe_delay_min_s = te_rules_settings(rules)->live_remote_probe_delay_min_s;
  const te_framework *forced = NULL;
  if (opt.framework && strcmp(opt.framework, "auto") != 0) {
    forced = te_rules_framework_lookup(rules, opt.framework);
    if (!forced) {
      fprintf(stderr, "triage: --framework: unknown framework '%s'\n", opt.framework);
      te_rules_destroy(rules);
      triage_options_free(&opt);
      return 2;
    }
  }
  lv_result live = {0};
  if (lv_wanted(&opt.live)) {
    char lerr[LV_ERR_CAP] = "";
    lv_status lrc = lv_run(&opt.live, rules, opt.quiet ? NULL : stderr, &live, lerr, sizeof lerr);
    if (lrc != LV_OK) {
      fprintf(stderr, "triage: %s\n", lerr);
      te_rules_destroy(rules);
      triage_options_free(&opt);
      return triage_exit_for_live(lrc);
    }
    if (live.input) opt.input = live.input;
    if (live.mapping_input) opt.mapping_input = live.mapping_input;
    if (live.formal_input) opt.formal_input = live.formal_input;
    if (!forced && live.framework_id) forced = te_rules_framework_lookup(rules, live.framework_id);
  }
  int rc = run(&opt, rules, forced);
  lv_result_free(&live);
  te_rules_destroy(rules);
  triage_options_free(&opt);
  return rc;
}
