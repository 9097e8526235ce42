/*
 * cli/rules_cmd.c - the `triage rules check|list|explain|test` sub-commands (see
 * rules_cmd.h); the packs of a run are found and loaded by rules_setup.c.
 */
#include "cli/rules_cmd.h"

#include <stddef.h>
#include <stdio.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/explain.h"
#include "analysis/pipeline.h"
#include "cli/args.h"
#include "cli/common.h"
#include "cli/rules_setup.h"
#include "report/text.h"

/* Explained names and frame texts are short; longer ones are shown truncated. */
#define RULES_TEXT_BYTES 4096

static void print_pack(const te_pack_info *p, FILE *out) {
  fprintf(out, "%s\t%s\t", p->id ? p->id : "?", p->file ? p->file : "?");
  struct {
    const char *label;
    size_t n;
  } counts[] = {
      {"classifier rules", p->n_classifier_rules},
      {"ladder rules", p->n_ladder_rules},
      {"matchers", p->n_matchers},
      {"path rewrites", p->n_path_rewrites},
      {"stage rules", p->n_stage_rules},
      {"rank patterns", p->n_rank_patterns},
      {"framework hints", p->n_framework_hints},
      {"settings", p->n_settings},
      {"kernel-map aliases", p->n_aliases},
      {"fusion patterns", p->n_fusion_patterns},
      {"examples", p->n_examples},
  };
  bool first = true;
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    if (!counts[i].n) continue;
    fprintf(out, "%s%zu %s", first ? "" : ", ", counts[i].n, counts[i].label);
    first = false;
  }
  fprintf(out, "%s\n", first ? "empty" : "");
}

static void explain_category(const te_rules *r, const char *classifier, const char *label,
                             const char *name, FILE *out) {
  const te_class_rule *rule = NULL;
  const char *cat = te_rules_classify(r, classifier, name, &rule);
  if (!cat) {
    fprintf(out, "  %-18s (no classifier '%s' loaded)\n", label, classifier);
    return;
  }
  if (!rule) {
    fprintf(out, "  %-18s %s (default of classifier '%s')\n", label, cat, classifier);
    return;
  }
  char why[512] = "";
  if (rule->match) te_matcher_explain(rule->match, name, strlen(name), why, sizeof why);
  if (rule->from_classifier) {
    size_t used = strlen(why);
    snprintf(why + used, sizeof why - used, "%s%s category '%s'", used ? ", " : "",
             rule->from_classifier, te_rules_kind(r, rule->from_classifier, name));
  }
  char kind[160] = "";
  if (strcmp(rule->kind, cat) != 0) snprintf(kind, sizeof kind, " (kind %s)", rule->kind);
  fprintf(out, "  %-18s %s%s (rule %s/%s, %s:%u; %s)\n", label, cat, kind, classifier, rule->id,
          rule->origin.file, rule->origin.line, why);
}

static void explain_fusions(const te_rules *r, const char *name, FILE *out) {
  size_t hits = 0;
  char why[512];
  size_t len = strlen(name);
  for (size_t i = 0; i < te_rules_fusion_count(r); i++) {
    const te_fusion_pattern *p = te_rules_fusion(r, i);
    if (p->active && te_matcher_explain(p->active, name, len, why, sizeof why)) {
      fprintf(out, "  %-18s %s (active: %s)\n", hits++ ? "" : "fusion patterns:", p->id, why);
      continue;
    }
    for (size_t g = 0; g < p->n_split_groups; g++) {
      if (!p->split_groups[g] ||
          !te_matcher_explain(p->split_groups[g], name, len, why, sizeof why))
        continue;
      fprintf(out, "  %-18s %s (split group %zu of %zu: %s)\n",
              hits++ ? "" : "fusion patterns:", p->id, g + 1, p->n_split_groups, why);
    }
  }
  if (!hits) fprintf(out, "  %-18s none\n", "fusion patterns:");
}

static void explain_name(const te_rules *r, const char *name, FILE *out) {
  char normalized[RULES_TEXT_BYTES], why[512];
  fprintf(out, "%s\n", name);
  explain_category(r, "kernel", "kernel category:", name, out);
  explain_category(r, "overlap", "overlap category:", name, out);
  te_rules_normalize_frame(r, name, normalized, sizeof normalized);
  if (te_rules_ladder(r, "frame_priority")) {
    int score = te_rules_score(r, "frame_priority", name, normalized, why, sizeof why);
    fprintf(out, "  %-18s %d (%s; raw '%s', normalized '%s')\n", "frame priority:", score, why,
            name, normalized);
  }
  if (te_rules_ladder(r, "location_priority")) {
    int score = te_rules_score(r, "location_priority", normalized, normalized, why, sizeof why);
    fprintf(out, "  %-18s %d (%s)\n", "location priority:", score, why);
  }
  explain_fusions(r, name, out);
}

/* What a rules command works on: its word, its operands and the packs to load. */
typedef struct rules_args {
  const char *command;
  const char **operands;
  size_t n_operands;
  cli_list packs; /* --rules in order, then the operands that are packs */
  bool no_defaults;
  const char *compat;
  const char *pattern;
  const cli_common *common; /* the shared options (the analysis of explain --pattern) */
} rules_args;

static triage_rules_setup_options setup_of(const rules_args *a) {
  return (triage_rules_setup_options){a->packs.items, a->packs.n, a->no_defaults, a->compat};
}

static int run_check(te_rules *r, const rules_args *a, FILE *out, FILE *err) {
  (void)a;
  te_diags *d = te_diags_create();
  size_t dead = d ? te_rules_find_dead_rules(r, d) : 0;
  if (d) triage_print_diags(d, err);
  te_diags_destroy(d);
  fprintf(out, "%zu packs OK%s\n", te_rules_pack_count(r), dead ? " (with warnings)" : "");
  return 0;
}

static int run_list(te_rules *r, const rules_args *a, FILE *out, FILE *err) {
  (void)a, (void)err;
  for (size_t i = 0; i < te_rules_pack_count(r); i++) print_pack(te_rules_pack(r, i), out);
  return 0;
}

static const char *const WHY_WORDS[] = {
    [AN_EXPLAIN_FILLED] = "filled",
    [AN_EXPLAIN_GATE] = "not looked for: a gate failed",
    [AN_EXPLAIN_NO_CATEGORY] = "no kernel of that category in the stage",
    [AN_EXPLAIN_NO_MATCH] = "kernels of that category, none the group's matcher hits",
    [AN_EXPLAIN_TAKEN] = "every fitting kernel serves an earlier component"};

/* The pattern as the packs state it: gates, components, saving formula (docs/rules.md). */
static void explain_pattern_static(const te_fusion_pattern *p, FILE *out) {
  fprintf(out, "pattern %s: %s\n", p->id, p->name ? p->name : "");
  fprintf(out, "  gates: framework %s; platform %s; tp %s", p->framework ? p->framework : "any",
          p->platform ? p->platform : "any", p->require_tp ? "" : "any");
  if (p->require_tp) fprintf(out, ">= %ld", p->min_tp_size);
  fprintf(out, "; model include %zu / exclude %zu names", p->n_model_include, p->n_model_exclude);
  if (p->min_arch_cuda > 0 || p->min_arch_rocm > 0)
    fprintf(out, "; min arch cuda %.1f / rocm %.1f", p->min_arch_cuda, p->min_arch_rocm);
  fprintf(out, "; dtype ");
  for (size_t k = 0; k < p->n_dtype; k++) fprintf(out, "%s%s", k ? "|" : "", p->dtype[k]);
  fprintf(out, "%s\n", p->n_dtype ? "" : "any");
  if (p->modes || p->max_tokens || p->n_message_caps || p->single_node)
    fprintf(out, "  trace gates: modes %s%s%s%s; max tokens %ld; message caps %zu TP sizes%s\n",
            p->modes ? "" : "any", p->modes & TE_MODE_EAGER ? " eager" : "",
            p->modes & TE_MODE_GRAPH ? " graph" : "", p->modes & TE_MODE_COMPILE ? " compile" : "",
            p->max_tokens, p->n_message_caps, p->single_node ? "; single node" : "");
  fprintf(out, "  active matcher: %s\n", p->active ? "yes (kernel names)" : "none");
  for (size_t g = 0; g < p->n_split_groups; g++)
    fprintf(out, "  component %zu: evidence %s\n", g + 1,
            p->n_evidence ? p->evidence[g] : "any (keyword in the kernel name)");
  fprintf(out,
          "  saving = sum of the component kernels' time - the largest one's (0 when the "
          "fused path is active)\n");
}

static void explain_pattern_stage(const an_stage_report *st, const an_fuse_explain *x, FILE *out) {
  fprintf(out, "stage %s:\n", st->id);
  fprintf(out, "  gates: framework %s, platform %s, arch %s, tp %s, model %s, dtype %s\n",
          x->framework_ok ? "pass" : "FAIL", x->platform_ok ? "pass" : "FAIL",
          x->arch_ok ? "pass" : "FAIL", x->tp_ok ? "pass" : "FAIL", x->model_ok ? "pass" : "FAIL",
          !x->dtype_checked ? "-"
          : x->dtype_ok     ? "pass"
                            : "FAIL (no evidence kernel of the pattern's format)");
  fprintf(out, "  active: %s\n", x->active ? x->active : "no kernel");
  for (size_t g = 0; g < x->n_components; g++) {
    const an_explain_component *c = &x->components[g];
    fprintf(out, "  component %zu (%s): ", g + 1, c->label ? c->label : "-");
    if (c->why == AN_EXPLAIN_FILLED)
      fprintf(out, "%s (%.1f us)\n", c->kernel, c->us);
    else
      fprintf(out, "none - %s\n", WHY_WORDS[c->why]);
  }
  /* a chain's riders (chain.riders: the Q/K contiguous copies) follow its pieces */
  for (size_t k = x->n_components; x->row && k < x->row->n_related; k++)
    for (size_t i = 0; i < st->n_kernels; i++)
      if (!strcmp(st->kernels[i].name, x->row->related[k]))
        fprintf(out, "  rider: %s (%.1f us)\n", st->kernels[i].name, st->kernels[i].total_us);
  double pct = x->stage_total_us > 0 ? 100.0 / x->stage_total_us : 0;
  fprintf(out, "  related %.1f us (%.2f%%); saving %.1f us (%.2f%%)\n", x->related_us,
          x->related_us * pct, x->saving_us, x->saving_us * pct);
  if (x->row && x->row->state != AN_FUSE_OPPORTUNITY)
    fprintf(out, "  row: %s%s\n", rp_fuse_verdict(x->row),
            x->row->state == AN_FUSE_GATES_UNKNOWN ? " (a gate fact is unknown)" : "");
  if (x->row && x->row->chained_pct < 100.0)
    fprintf(out, "  chain: %.0f%% of the rarest piece's launches are in one chain\n",
            x->row->chained_pct);
  if (x->dropped)
    fprintf(out, "  no row: dropped by de-duplication (%s%s)\n",
            x->dropped_by ? "held or subsumed by row " : "a higher-ranked row holds a kernel",
            x->dropped_by ? x->dropped_by : "");
}

/* Runs the analysis on trace and explains p in each stage with kernels. */
static int explain_pattern_trace(const rules_args *a, const te_rules *r, const te_fusion_pattern *p,
                                 FILE *out, FILE *err) {
  an_run_options o = cli_run_options(a->common);
  o.formal.path = a->operands[0];
  an_error e;
  an_report *rep = NULL;
  if (an_run(&o, r, &rep, &e) != AN_OK) {
    cli_print_run_error(&e, a->operands[0]);
    return 1;
  }
  int rc = 0;
  for (size_t s = 0; s < rep->n_stages && !rc; s++) {
    const an_stage_report *st = &rep->stages[s];
    if (!st->has_kernels) continue;
    an_fuse_explain x;
    if (an_fuse_explain_stage(r, rep, st, p, &x))
      explain_pattern_stage(st, &x, out);
    else
      rc = 1;
    an_fuse_explain_free(&x);
  }
  an_report_destroy(rep);
  if (rc) fprintf(err, "triage: out of memory\n");
  return rc;
}

static int run_explain_pattern(te_rules *r, const rules_args *a, FILE *out, FILE *err) {
  const te_fusion_pattern *p = NULL;
  for (size_t i = 0; i < te_rules_fusion_count(r) && !p; i++)
    if (!strcmp(te_rules_fusion(r, i)->id, a->pattern)) p = te_rules_fusion(r, i);
  if (!p) {
    fprintf(err, "triage: no fusion pattern '%s' in the loaded packs\n", a->pattern);
    return 2;
  }
  explain_pattern_static(p, out);
  return a->n_operands ? explain_pattern_trace(a, r, p, out, err) : 0;
}

static int run_explain(te_rules *r, const rules_args *a, FILE *out, FILE *err) {
  if (a->pattern) return run_explain_pattern(r, a, out, err);
  for (size_t i = 0; i < a->n_operands; i++) explain_name(r, a->operands[i], out);
  return 0;
}

/* The operand errors of explain, found before any pack is read (exit 2), or 0. */
static int explain_usage(const rules_args *a, FILE *err) {
  if (a->pattern && a->n_operands > 1) {
    fprintf(err, "triage: 'rules explain --pattern' takes at most one TRACE\n");
    return 2;
  }
  if (!a->pattern && a->n_operands == 0) {
    fprintf(err, "triage: 'rules explain' needs at least one NAME (see triage rules --help)\n");
    return 2;
  }
  return 0;
}

static int run_test(te_rules *r, const rules_args *a, FILE *out, FILE *err) {
  (void)a;
  te_diags *d = te_diags_create();
  size_t checked = 0;
  te_status st = d ? te_rules_run_examples(r, d, &checked) : TE_ERR_NOMEM;
  triage_print_diags(d, err);
  size_t failures = te_diags_error_count(d) + te_diags_dropped(d);
  fprintf(out, "%zu examples, %zu failures\n", checked, failures);
  te_diags_destroy(d);
  return st == TE_OK && failures == 0 ? 0 : 1;
}

/* An explain operand that names a rule pack: an existing directory, or an existing
 * regular file ending in .yaml / .yml (kernel and frame names never are). */
static bool is_pack_operand(const char *arg) {
  struct stat st;
  if (stat(arg, &st) != 0) return false;
  if (S_ISDIR(st.st_mode)) return true;
  size_t n = strlen(arg);
  return S_ISREG(st.st_mode) &&
         ((n > 5 && !strcmp(arg + n - 5, ".yaml")) || (n > 4 && !strcmp(arg + n - 4, ".yml")));
}

/* Operands of check/list/test are packs to load after the others; explain takes the
 * operands that name a pack file or directory as packs, the rest as names. */
static int add_operand_packs(rules_args *a, bool all_packs) {
  size_t kept = 0;
  for (size_t i = 0; i < a->n_operands; i++) {
    struct stat sb;
    bool trace_dir = a->pattern && !stat(a->operands[i], &sb) && S_ISDIR(sb.st_mode);
    if (!all_packs && (trace_dir || !is_pack_operand(a->operands[i]))) {
      a->operands[kept++] = a->operands[i];
      continue;
    }
    if (!cli_list_push(&a->packs, a->operands[i])) return 1;
  }
  a->n_operands = kept;
  return 0;
}

/* The rules command named by the first word, run on the rest. */
/* The rules commands: check, list and test take packs as operands, explain names. */
static const struct {
  const char *name;
  bool takes_packs;
  int (*run)(te_rules *r, const rules_args *a, FILE *out, FILE *err);
} RULES_COMMANDS[] = {{"check", true, run_check},
                      {"list", true, run_list},
                      {"test", true, run_test},
                      {"explain", false, run_explain}};

/* The rules command named by the first word, run on the rest with the packs loaded. */
static int run_command(const char *argv0, rules_args *a, FILE *out, FILE *err) {
  size_t c = 0, n = sizeof RULES_COMMANDS / sizeof RULES_COMMANDS[0];
  while (c < n && strcmp(RULES_COMMANDS[c].name, a->command)) c++;
  if (c == n) {
    fprintf(err, "triage: unknown rules command '%s' (check, list, explain or test)\n", a->command);
    return 2;
  }
  char pack[PATH_MAX];
  if (add_operand_packs(a, RULES_COMMANDS[c].takes_packs)) {
    fprintf(err, "triage: out of memory\n");
    return 1;
  }
  if (a->compat && !triage_compat_pack(argv0, a->compat, pack, sizeof pack, err)) return 2;
  int rc = RULES_COMMANDS[c].run == run_explain ? explain_usage(a, err) : 0;
  triage_rules_setup_options so = setup_of(a);
  te_rules *r = rc ? NULL : triage_rules_setup(argv0, &so, err);
  if (!rc && !r) rc = 1;
  if (!rc) rc = RULES_COMMANDS[c].run(r, a, out, err);
  te_rules_destroy(r);
  return rc;
}

int cli_rules_run(const cli_invocation *inv, const te_rules *unused, void *args) {
  (void)unused; /* the packs are the command's operands too: it loads its own */
  rules_cli_args *c = args;
  const cli_list *words = &c->common.operands;
  rules_args a = {words->items[0],  words->items + 1, words->n - 1, {0}, c->common.no_default_rules,
                  c->common.compat, c->pattern,       &c->common};
  int rc = 0;
  for (size_t i = 0; !rc && i < c->common.rules.n; i++)
    if (!cli_list_push(&a.packs, c->common.rules.items[i])) rc = 1;
  FILE *out = rc ? NULL : cli_output_open(&c->common);
  if (!out) rc = 1;
  if (!rc) rc = run_command(inv->argv0, &a, out, stderr);
  if (out) {
    int wrc = cli_output_close(out, &c->common, 0);
    if (!rc) rc = wrc;
  }
  cli_list_free(&a.packs);
  return rc;
}

static const cli_option ROWS[] = {
    CLI_STRING_ROW("--pattern", offsetof(rules_cli_args, pattern), "ID",
                   "explain: a fusion pattern's gates, components\n"
                   "and saving; with a TRACE, per stage the kernel\n"
                   "filling each component"),
};
const cli_options CLI_RULES_OPTIONS = CLI_OPTIONS(ROWS);
