/*
 * fuzz_rule_pack.c - libFuzzer harness for the rule-pack loader.
 *
 * Loads a small fixed base pack, then arbitrary bytes as a second YAML rule pack
 * (te_rules_load_buffer), so the input can override, reorder (before/after) and refer to
 * the base's entries as a user's --rules pack does over the defaults. When both load,
 * finalizes and asks the compiled rules the questions triage asks (classify, score,
 * normalise a path, stages, frameworks, settings, self-tests). Checks the
 * diagnostics contract of rules.h: an invalid pack reports at least one error, and every
 * diagnostic formats as one "FILE:LINE:COL: error|warning: MESSAGE" line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triage/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, "fuzz_rule_pack: invariant failed: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                              \
    }                                                                                       \
  } while (0)

static const char *const kernel_names[] = {
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long> >",
    "nvjet_tst_64x8_64x16_2x1_v_bz_TNT",
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0",
    "Memcpy DtoD (Device -> Device)",
    "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_",
    "_Z99999999999999999999999x_3abc4",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
    "",
};

/* The base pack: one entry of most sections, written for this harness. */
static const char base_pack[] =
    "pack: fuzz-base\n"
    "version: 1\n"
    "matchers:\n"
    "  low_signal: {keywords: [threading.py, runpy]}\n"
    "  compute_like: {keywords: [gemm, nvjet], words: [mma]}\n"
    "classifiers:\n"
    "  - id: kernel\n"
    "    default: other\n"
    "    rules:\n"
    "      - {id: comm, category: communication, match: {keywords: [nccl]}}\n"
    "      - {id: gemm, category: gemm, match: compute_like}\n"
    "      - {id: mem, category: memory, match: {keywords: [memcpy]}, unless: compute_like}\n"
    "ladders:\n"
    "  - id: frame_priority\n"
    "    default: 0\n"
    "    penalty: {match: low_signal, amount: 80}\n"
    "    rules:\n"
    "      - {id: sglang, normalized: {prefixes: ['python/sglang/']}, score: 300, penalize: true}\n"
    "    adjustments:\n"
    "      - {id: mixin, raw: {keywords: [mixin]}, score: -20}\n"
    "path_rewrites:\n"
    "  - {id: sglang-python, find: python/sglang/}\n"
    "stages:\n"
    "  - {id: extend, label: extend/prefill, order: 0}\n"
    "  - {id: decode, label: decode, order: 1}\n"
    "  - {id: all, label: all, order: 2}\n"
    "stage_rules:\n"
    "  path: [{id: extend-path, stage: extend, match: {regex: ['[-_](extend|prefill)']}}]\n"
    "  annotation: [{id: decode-ann, stage: decode, match: {keywords: [decode]}}]\n"
    "rank_patterns:\n"
    "  - {id: tp, regex: '(?:^|[_-])tp(\\d+)(?:[_.-]|$)'}\n"
    "frameworks:\n"
    "  - {id: sglang, label: SGLang, aliases: [sgl]}\n"
    "framework_hints:\n"
    "  default: sglang\n"
    "  text: [{id: sglang-text, framework: sglang, match: {keywords: [sglang]}}]\n"
    "settings:\n"
    "  kernel_table: {min_share_pct: 1.0}\n"
    "  overlap: {low_roi_hidden: {categories: [elementwise, memory]}}\n";

static void check_diags(const te_diags *d) {
  size_t n = te_diags_count(d);
  CHECK(te_diags_error_count(d) <= n);
  for (size_t i = 0; i < n; i++) {
    const te_diag *g = te_diags_get(d, i);
    CHECK(g != NULL);
    CHECK(g->file != NULL && g->message != NULL);
    CHECK(g->message[0] != '\0');
    CHECK(strchr(g->message, '\n') == NULL);
    char line[1024];
    int want = te_diag_format(g, line, sizeof line);
    CHECK(want > 0);
    CHECK(strlen(line) < sizeof line);
    CHECK(strstr(line, ": error: ") != NULL || strstr(line, ": warning: ") != NULL);
  }
  CHECK(te_diags_get(d, n) == NULL);
}

static void query(te_rules *r) {
  char buf[512];
  size_t np = te_rules_pack_count(r);
  for (size_t i = 0; i < np; i++) {
    const te_pack_info *p = te_rules_pack(r, i);
    CHECK(p != NULL && p->id != NULL);
  }
  for (size_t k = 0; k < sizeof kernel_names / sizeof kernel_names[0]; k++) {
    const char *nm = kernel_names[k];
    const te_class_rule *rule = NULL;
    const char *c = te_rules_classify(r, "kernel", nm, &rule);
    if (c) (void)strlen(c);
    c = te_rules_classify(r, "overlap", nm, &rule);
    if (c) (void)strlen(c);
    c = te_rules_kind(r, "kernel", nm);
    if (c) (void)strlen(c);
    (void)te_rules_score(r, "frame_priority", nm, nm, buf, sizeof buf);
    (void)te_rules_score(r, "location_priority", nm, nm, buf, sizeof buf);
    (void)te_rules_score(r, "overlap_scope", nm, nm, buf, sizeof buf);
    size_t len = te_rules_normalize_path(r, nm, buf, sizeof buf);
    (void)len;
    CHECK(strlen(buf) < sizeof buf);
    (void)te_rules_stage_from_path(r, nm);
    (void)te_rules_stage_from_annotation(r, nm);
    (void)te_rules_framework_from_text(r, nm);
    long rank = 0;
    (void)te_rules_rank_from_filename(r, nm, &rank);
    const te_matcher *m = te_rules_matcher(r, "low_signal");
    if (m) (void)te_matcher_explain(m, nm, strlen(nm), buf, sizeof buf);
  }
  te_diags *dead = te_diags_create();
  if (dead) {
    (void)te_rules_find_dead_rules(r, dead);
    te_diags_destroy(dead);
  }
  const char *keys[] = {"tp_size", "attention_backend", "model_path"};
  (void)te_rules_framework_from_keys(r, keys, 3);
  (void)te_rules_framework_lookup(r, "SGLang");
  (void)te_rules_framework_default(r);
  const te_settings *set = te_rules_settings(r);
  CHECK(set != NULL);
  (void)te_rules_settings_missing(r);
  (void)te_number_map_get(&set->overlap_weight, "memory");
  (void)te_list_map_get(&set->overlap_producer_consumer, "memory");
  (void)te_string_list_has(&set->overlap_low_roi_hidden_categories, "memory");
  size_t nf = te_rules_fusion_count(r);
  for (size_t i = 0; i < nf; i++) CHECK(te_rules_fusion(r, i) != NULL);
  te_diags *d = te_diags_create();
  if (d) {
    size_t checked = 0;
    (void)te_rules_run_examples(r, d, &checked);
    check_diags(d);
    te_diags_destroy(d);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  if (!r || !d) {
    te_rules_destroy(r);
    te_diags_destroy(d);
    return 0;
  }
  te_status st = te_rules_load_buffer(r, "base.yaml", base_pack, sizeof base_pack - 1, d);
  CHECK(st == TE_OK);
  st = te_rules_load_buffer(r, "fuzz.yaml", (const char *)data, size, d);
  if (st == TE_ERR_INVALID || st == TE_ERR_LIMIT) CHECK(te_diags_error_count(d) > 0);
  if (st == TE_OK) {
    st = te_rules_finalize(r, d);
    if (st == TE_ERR_INVALID) CHECK(te_diags_error_count(d) > 0);
    if (st == TE_OK) query(r);
  }
  CHECK(te_status_str(st) != NULL);
  check_diags(d);
  te_diags_destroy(d);
  te_rules_destroy(r);
  return 0;
}
