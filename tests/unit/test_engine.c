/*
 * test_engine.c - the rules engine through its public API (triage/rules.h): matchers,
 * overrides, queries, diagnostics, self-tests, and every broken pack of tests/rules/broken.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matcher.h"        /* engine-internal: the token index slot of a matcher */
#include "prefilter.h"      /* engine-internal: the classifier prefilter */
#include "regex_literals.h" /* engine-internal: a regex's required literals */
#include "rules_internal.h" /* engine-internal: every matcher of a rule set */
#include "settings.h"       /* engine-internal: value parsing */
#include "strcache.h"       /* engine-internal: the match-result cache */
#include "triage/ascii.h"
#include "triage/rules.h"
#include "yaml_tree.h"

/* A rule set built from inline packs; asserts every pack loads and finalizes. */
static te_rules *rules_from(const char *const *packs, size_t n) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert(r && d);
  for (size_t i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "pack%zu.yaml", i);
    te_status st = te_rules_load_buffer(r, name, packs[i], strlen(packs[i]), d);
    if (st != TE_OK) {
      char buf[1024];
      te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
      cr_assert_fail("pack %zu: %s: %s", i, te_status_str(st), buf);
    }
  }
  te_status st = te_rules_finalize(r, d);
  if (st != TE_OK) {
    char buf[1024];
    te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
    cr_assert_fail("finalize: %s: %s", te_status_str(st), buf);
  }
  te_diags_destroy(d);
  return r;
}

static te_rules *rules_from1(const char *pack) { return rules_from(&pack, 1); }

/* Loads one pack expected to fail; returns its diagnostics (caller destroys). */
static te_diags *failing(const char *pack, te_status *status) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  te_status st = te_rules_load_buffer(r, "bad.yaml", pack, strlen(pack), d);
  if (st == TE_OK) st = te_rules_finalize(r, d);
  if (status) *status = st;
  te_rules_destroy(r);
  return d;
}

static const te_matcher *named(te_rules *r, const char *name) {
  const te_matcher *m = te_rules_matcher(r, name);
  cr_assert_not_null(m, "matcher %s", name);
  return m;
}

static bool hit(const te_matcher *m, const char *s) { return te_matcher_match(m, s, strlen(s)); }

/* ---------------------------------------------------------------- matchers */

static const char *const matcher_pack =
    "pack: m\n"
    "version: 1\n"
    "matchers:\n"
    "  kw: {keywords: [nccl, All_Reduce]}\n"
    "  wd: {words: [add, cat]}\n"
    "  px: {prefixes: ['python/sglang/']}\n"
    "  rx: {regex: ['FlashAttn\\w*Sm\\d+']}\n"
    "  rx_cs: {regex: ['^Gemm'], case_sensitive: true}\n"
    "  kw_cs: {keywords: [Gemm], case_sensitive: true}\n"
    "  cp: {keywords: [fused_add_rmsnorm], compact: true}\n"
    "  plain: {keywords: [fused_add_rmsnorm]}\n"
    "  ex: {keywords: [flash], exclude: {keywords: [flashinfer]}}\n"
    "  ex_named: {keywords: [copy], exclude: compute}\n"
    "  compute: {keywords: [gemm, cutlass]}\n"
    "  tk: {tokens: [rmsnorm, quant, fp8, all_reduce, kv-cache]}\n"
    "  tk_junk: {tokens: [enum e]}\n"
    "  evil: {regex: ['^(a+)+$']}\n";

Test(engine_matcher, keywords_are_case_insensitive_substrings) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "kw");
  cr_assert(hit(m, "ncclDevKernel_AllReduce"));
  cr_assert(hit(m, "NCCL"));
  cr_assert(hit(m, "xx_all_reduce_yy"));
  cr_assert_not(hit(m, "allreduce"));
  cr_assert_not(hit(m, ""));
  cr_assert(te_matcher_match(m, "ncclXYZ", 4), "length limits the text, not NUL");
  cr_assert_not(te_matcher_match(m, "ncclXYZ", 3));
  te_rules_destroy(r);
}

Test(engine_matcher, words_need_non_alphanumeric_neighbours) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "wd");
  cr_assert(hit(m, "fused_add_rmsnorm"));
  cr_assert(hit(m, "add"));
  cr_assert(hit(m, "ADD kernel"));
  cr_assert(hit(m, "torch.cat(x)"));
  cr_assert_not(hit(m, "addmm"));
  cr_assert_not(hit(m, "fad4dd"));
  cr_assert_not(hit(m, "concat"));
  cr_assert(hit(m, "add3dd add"), "a later occurrence may qualify");
  te_rules_destroy(r);
}

Test(engine_matcher, tokens_hit_whole_camel_digit_and_separator_tokens) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "tk");
  cr_assert(hit(m, "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>"),
            "CamelCase acronym run RMS|Norm");
  cr_assert(hit(m, "rms_norm_kernel"), "an entry may span separated tokens");
  cr_assert(hit(m, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  cr_assert(hit(m, "per_token_quant_fp8"));
  cr_assert(hit(m, "__nv_fp8_e4m3"), "letters and digits are separate tokens");
  cr_assert(hit(m, "KVCacheWrite"), "KV|Cache");
  cr_assert_not(hit(m, "rocm_unquantized_gemm_impl"), "quant inside unquantized");
  cr_assert_not(hit(m, "quantize_kernel"), "quant is not a whole token of quantize");
  cr_assert_not(hit(m, "rmsnorms"));
  cr_assert_not(hit(m, "xfp8"), "xfp|8: fp8 does not start at a token");
  te_rules_destroy(r);
}

Test(engine_matcher, tokens_read_length_prefixed_identifiers_of_mangled_names) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "tk");
  cr_assert(
      hit(m, "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_"));
  /* the type codes between identifiers are no words: "Lb0E" etc. never form "quant" */
  cr_assert_not(hit(m, "_ZN5aiter12gelu_kernelIDF16bLi64EEEvPT0_"));
  /* a literal value E1E after an enum type is not a length: no junk token "E" */
  const char *ck = "_ZN7ck_tile6kentryILNS_14FusedQuantEnumE1ENS_9RmsNorm2dEEEvT_";
  cr_assert(hit(m, ck));
  cr_assert_not(hit(named(r, "tk_junk"), ck));
  /* a name that only looks mangled falls back to plain tokens */
  cr_assert(hit(m, "_Z_rmsnorm"));
  te_rules_destroy(r);
}

Test(engine_matcher, tokens_entry_without_alphanumerics_is_an_error) {
  te_status st;
  te_diags *d = failing("pack: p\nversion: 1\nmatchers:\n  t: {tokens: ['_-']}\n", &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert(strstr(te_diags_get(d, 0)->message, "no letter or digit"), "%s",
            te_diags_get(d, 0)->message);
  cr_assert_eq(te_diags_get(d, 0)->line, 4);
  te_diags_destroy(d);
}

Test(engine_matcher, prefixes_anchor_at_start) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "px");
  cr_assert(hit(m, "python/sglang/srt/x.py:1 f"));
  cr_assert(hit(m, "Python/SGLang/x"));
  cr_assert_not(hit(m, "/python/sglang/x"));
  cr_assert_not(hit(m, "python/sglan"));
  te_rules_destroy(r);
}

Test(engine_matcher, regex_caseless_unless_case_sensitive) {
  te_rules *r = rules_from1(matcher_pack);
  cr_assert(hit(named(r, "rx"), "cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>"));
  cr_assert(hit(named(r, "rx"), "flashattnfwdsm80"));
  cr_assert_not(hit(named(r, "rx"), "FlashAttnFwd"));
  cr_assert(hit(named(r, "rx_cs"), "Gemm_kernel"));
  cr_assert_not(hit(named(r, "rx_cs"), "gemm_kernel"));
  cr_assert(hit(named(r, "kw_cs"), "xGemm"));
  cr_assert_not(hit(named(r, "kw_cs"), "xgemm"));
  te_rules_destroy(r);
}

Test(engine_matcher, compact_compares_alphanumerics_only) {
  te_rules *r = rules_from1(matcher_pack);
  cr_assert(hit(named(r, "cp"), "void flashinfer::norm::FusedAddRMSNormKernel<8u>"));
  cr_assert(hit(named(r, "cp"), "fused_add_rmsnorm"));
  cr_assert_not(hit(named(r, "plain"), "FusedAddRMSNormKernel"));
  cr_assert_not(hit(named(r, "cp"), "FusedAddLayerNorm"));
  te_rules_destroy(r);
}

Test(engine_matcher, exclude_inline_and_named) {
  te_rules *r = rules_from1(matcher_pack);
  cr_assert(hit(named(r, "ex"), "flash_attn_fwd"));
  cr_assert_not(hit(named(r, "ex"), "flashinfer::norm"));
  cr_assert(hit(named(r, "ex_named"), "memcpy_copy_kernel"));
  cr_assert_not(hit(named(r, "ex_named"), "cutlass_copy_kernel"));
  char why[200];
  cr_assert_not(te_matcher_explain(named(r, "ex"), "flashinfer", 10, why, sizeof why));
  cr_assert(strstr(why, "exclusion"), "why: %s", why);
  te_rules_destroy(r);
}

Test(engine_matcher, empty_matcher_is_an_error) {
  te_status st;
  te_diags *d = failing("pack: p\nversion: 1\nmatchers:\n  nothing: {keywords: []}\n", &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert_eq(te_diags_get(d, 0)->line, 4);
  cr_assert_eq(te_diags_get(d, 0)->col, 12);
  cr_assert(strstr(te_diags_get(d, 0)->message, "needs at least one of"), "%s",
            te_diags_get(d, 0)->message);
  te_diags_destroy(d);
}

Test(engine_matcher, explain_names_the_entry) {
  te_rules *r = rules_from1(matcher_pack);
  char why[200];
  cr_assert(te_matcher_explain(named(r, "kw"), "xx_ALL_REDUCE", 13, why, sizeof why));
  cr_assert_str_eq(why, "keyword 'all_reduce'");
  cr_assert(te_matcher_explain(named(r, "cp"), "FusedAddRMSNorm", 15, why, sizeof why));
  cr_assert_str_eq(why, "compact keyword 'fused_add_rmsnorm'");
  te_rules_destroy(r);
}

Test(engine_matcher, cached_results_stay_correct) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "kw");
  /* Many distinct strings, each asked twice, interleaved: cache hits and misses must
   * agree with the uncached answer. */
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 5000; i++) {
      char s[64];
      snprintf(s, sizeof s, "%s_%d", i % 3 ? "kernel" : "nccl", i);
      cr_assert_eq(hit(m, s), i % 3 == 0, "%s round %d", s, round);
    }
  }
  te_rules_destroy(r);
}

Test(engine_matcher, catastrophic_regex_gives_up_quickly) {
  te_rules *r = rules_from1(matcher_pack);
  const te_matcher *m = named(r, "evil");
  size_t n = 20000;
  char *s = malloc(n + 2);
  memset(s, 'a', n);
  s[n] = 'b';
  s[n + 1] = '\0';
  clock_t t0 = clock();
  cr_assert_not(te_matcher_match(m, s, n + 1));
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  cr_assert_lt(secs, 5.0, "took %.2fs", secs);
  cr_assert_gt(te_matcher_limit_misses(m), 0, "the miss is counted");
  cr_assert(te_matcher_match(m, s, n), "all-'a' text still matches");
  free(s);
  te_rules_destroy(r);
}

/* Every byte value, at every offset and length around the 16-byte blocks: only 'A'..'Z'
 * change, bytes past the length are untouched, and folding in place gives the same. */
Test(engine_ascii, lowers_capitals_only) {
  unsigned char src[300], dst[300], inplace[300];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 7 + 3);
  for (size_t off = 0; off < 3; off++)
    for (size_t n = 0; n + off <= 290; n += (n < 40 ? 1 : 13)) {
      memset(dst, 0xAA, sizeof dst);
      memcpy(inplace, src, sizeof src);
      te_ascii_lower((char *)dst + off, (const char *)src + off, n);
      te_ascii_lower((char *)inplace + off, (const char *)inplace + off, n);
      for (size_t i = 0; i < n; i++) {
        unsigned char c = src[off + i], want = c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
        cr_assert_eq(dst[off + i], want, "byte %u at %zu of %zu", c, i, n);
        cr_assert_eq(inplace[off + i], want);
      }
      cr_assert_eq(dst[off + n], 0xAA, "nothing written past the length");
    }
}

/* ---------------------------------------------------------------- classifiers, ladders */

static const char *const base_pack =
    "pack: base\n"
    "version: 1\n"
    "matchers:\n"
    "  compute_like: {keywords: [gemm, cutlass, nvjet]}\n"
    "  low_signal: {keywords: [__call__]}\n"
    "classifiers:\n"
    "  - id: kernel\n"
    "    default: other\n"
    "    rules:\n"
    "      - {id: comm, category: communication, match: {keywords: [nccl]}}\n"
    "      - {id: memory-weak, category: memory, match: {keywords: [copy]}, unless: compute_like}\n"
    "      - {id: gemm, category: gemm, match: {keywords: [gemm, nvjet]}}\n"
    "    categories: [{id: communication, meaning: c}, {id: memory, meaning: m},\n"
    "                 {id: gemm, meaning: g}, {id: other, meaning: o}]\n"
    "ladders:\n"
    "  - id: frame_priority\n"
    "    default: 0\n"
    "    penalty: {match: low_signal, amount: 80}\n"
    "    rules:\n"
    "      - {id: noise, raw: {prefixes: ['threading.py(']}, score: -20}\n"
    "      - {id: sglang, normalized: {prefixes: [python/sglang/]}, score: 300, penalize: true}\n"
    "      - {id: both, raw: {keywords: ['.py(']}, normalized: {keywords: [vllm/]}, score: 285}\n"
    "    adjustments:\n"
    "      - {id: mixin, raw: {keywords: [mixin.py]}, score: -20}\n"
    "path_rewrites:\n"
    "  - {id: sglang-python, find: python/sglang/}\n"
    "  - {id: trtllm-dash, find: tensorrt-llm/, replace: tensorrt_llm/}\n"
    "  - {id: sglang-any, find: sglang/, replace: python/sglang/}\n"
    "settings:\n"
    "  kernel_table: {min_share_pct: 1.0}\n"
    "  overlap:\n"
    "    weight: {communication: 1.3}\n"
    "    low_roi_hidden: {categories: [elementwise, memory]}\n";

Test(engine_classify, first_hit_wins_and_unless_blocks) {
  te_rules *r = rules_from1(base_pack);
  const te_class_rule *rule = NULL;
  cr_assert_str_eq(te_rules_classify(r, "kernel", "ncclAllReduce_copy", &rule), "communication");
  cr_assert_str_eq(rule->id, "comm");
  cr_assert_eq(rule->origin.line, 10);
  cr_assert_str_eq(te_rules_classify(r, "kernel", "copy_kernel", &rule), "memory");
  cr_assert_str_eq(te_rules_classify(r, "kernel", "cutlass_copy_gemm", &rule), "gemm");
  cr_assert_str_eq(rule->id, "gemm");
  cr_assert_str_eq(te_rules_classify(r, "kernel", "mystery", &rule), "other");
  cr_assert_null(rule);
  cr_assert_null(te_rules_classify(r, "no-such-classifier", "x", &rule));
  te_rules_destroy(r);
}

/* The uncached form decides as the cached one, and leaves the classifier's cache as it
 * was: its callers keep their own answer per name. */
Test(engine_classify, once_agrees_and_leaves_the_cache_alone) {
  te_rules *r = rules_from1(base_pack);
  const char *names[] = {"ncclAllReduce_copy", "copy_kernel", "cutlass_copy_gemm", "mystery", ""};
  const te_strcache *cache = &r->classifier_caches[0].shared;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const te_class_rule *once_rule = NULL, *rule = NULL;
    const char *once = te_rules_classify_once(r, "kernel", names[i], &once_rule);
    cr_assert_eq(cache->used, i, "the uncached form added nothing");
    cr_assert_str_eq(once, te_rules_classify(r, "kernel", names[i], &rule), "%s", names[i]);
    cr_assert_eq(once_rule, rule, "%s: the same deciding rule", names[i]);
    cr_assert_eq(cache->used, i + 1, "the cached form remembers %s", names[i]);
  }
  cr_assert_null(te_rules_classify_once(r, "no-such-classifier", "x", NULL));
  te_rules_destroy(r);
}

Test(engine_ladder, score_rules_penalty_and_adjustments) {
  te_rules *r = rules_from1(base_pack);
  char why[256];
  cr_assert_eq(te_rules_score(r, "frame_priority", "threading.py(12): run", "threading.py:12 run",
                              why, sizeof why),
               -20);
  cr_assert_eq(te_rules_score(r, "frame_priority", "/x/sglang/a.py(1): f", "python/sglang/a.py:1 f",
                              NULL, 0),
               300);
  cr_assert_eq(te_rules_score(r, "frame_priority", "/x/sglang/a.py(1): __call__",
                              "python/sglang/a.py:1 __call__", why, sizeof why),
               220);
  cr_assert(strstr(why, "penalty"), "why: %s", why);
  cr_assert_eq(te_rules_score(r, "frame_priority", "/x/sglang/mixin.py(1): f",
                              "python/sglang/mixin.py:1 f", why, sizeof why),
               280);
  cr_assert(strstr(why, "adjustment 'mixin'"), "why: %s", why);
  /* both conditions must hit */
  cr_assert_eq(te_rules_score(r, "frame_priority", "/a/vllm/x.py(3): f", "vllm/x.py:3 f", NULL, 0),
               285);
  cr_assert_eq(te_rules_score(r, "frame_priority", "vllm/x.py:3 f", "vllm/x.py:3 f", NULL, 0), 0);
  cr_assert_eq(te_rules_score(r, "frame_priority", "unrelated", NULL, NULL, 0), 0);
  cr_assert_eq(te_rules_score(r, "no-ladder", "x", "x", NULL, 0), 0);
  te_rules_destroy(r);
}

Test(engine_paths, normalize_path_and_frame) {
  te_rules *r = rules_from1(base_pack);
  char out[256];
  te_rules_normalize_path(r, "/usr/lib/python3/site-packages/sglang/srt/x.py", out, sizeof out);
  cr_assert_str_eq(out, "python/sglang/srt/x.py");
  te_rules_normalize_path(r, "/work/Python/SGLang/srt/x.py", out, sizeof out);
  cr_assert_str_eq(out, "python/sglang/srt/x.py");
  te_rules_normalize_path(r, "/src/TensorRT-LLM/tensorrt_llm/a.py", out, sizeof out);
  cr_assert_str_eq(out, "tensorrt_llm/tensorrt_llm/a.py");
  te_rules_normalize_path(r, "///usr/lib/torch/nn.py", out, sizeof out);
  cr_assert_str_eq(out, "usr/lib/torch/nn.py");
  size_t need = te_rules_normalize_path(r, "/a/sglang/long/path.py", out, 8);
  cr_assert_eq(need, strlen("python/sglang/long/path.py"));
  cr_assert_eq(strlen(out), 7, "truncated and terminated");
  te_rules_normalize_frame(r, "/opt/sglang/srt/model_runner.py(2000): forward", out, sizeof out);
  cr_assert_str_eq(out, "python/sglang/srt/model_runner.py:2000 forward");
  te_rules_normalize_frame(r, "<built-in method cat of type object>", out, sizeof out);
  cr_assert_str_eq(out, "<built-in method cat of type object>");
  te_rules_destroy(r);
}

/* First diagnostic of a pack that must fail: position and message (defined below). */
static void expect_first(const char *pack, unsigned line, unsigned col, const char *needle);

Test(engine_settings, typed_values_resolved_at_finalize) {
  te_rules *r = rules_from1(base_pack);
  const te_settings *s = te_rules_settings(r);
  cr_assert_not_null(s);
  cr_assert_float_eq(s->kernel_table_min_share_pct, 1.0, 1e-12);
  cr_assert_float_eq(te_number_map_get(&s->overlap_weight, "communication"), 1.3, 1e-12);
  /* an id the packs do not mention reads the table's absent value */
  cr_assert_float_eq(te_number_map_get(&s->overlap_weight, "compute"), 1.0, 1e-12);
  cr_assert_float_eq(te_number_map_get(&s->overlap_category_priority, "compute"), 0.0, 1e-12);
  cr_assert_eq(s->overlap_low_roi_hidden_categories.n, 2);
  cr_assert_str_eq(s->overlap_low_roi_hidden_categories.items[1], "memory");
  cr_assert(te_string_list_has(&s->overlap_low_roi_hidden_categories, "elementwise"));
  cr_assert_not(te_string_list_has(&s->overlap_low_roi_hidden_categories, "compute"));
  te_origin o;
  cr_assert(te_rules_setting_origin(r, "overlap.low_roi_hidden.categories", &o));
  cr_assert_str_eq(o.file, "pack0.yaml");
  cr_assert_eq(o.line, 33);
  cr_assert_eq(o.col, 22);
  cr_assert_not(te_rules_setting_origin(r, "overlap", &o));
  /* base_pack sets a few keys only: the first unset one is named */
  cr_assert_str_eq(te_rules_settings_missing(r), "kernel_table.sites_shown");
  te_rules_destroy(r);
}

/* ---------------------------------------------------------------- vocabulary, kinds, derived */

static const char *const vocab_pack =
    "pack: v\n"
    "version: 1\n"
    "classifiers:\n"
    "  - id: kernel\n"
    "    default: other\n"
    "    categories:\n"
    "      - {id: gemm, meaning: dense matrix products}\n"
    "      - {id: memory, meaning: data movement}\n"
    "      - {id: other, meaning: none of the above}\n"
    "      - {id: convolution, parent: gemm, meaning: convolutions}\n"
    "      - {id: kv_write, parent: memory, meaning: KV-cache writes}\n"
    "    rules:\n"
    "      - {id: kv, category: kv_write, match: {tokens: [store_kvcache]}}\n"
    "      - {id: conv, category: convolution, match: {tokens: [conv, fprop]}}\n"
    "      - {id: gemm, category: gemm, match: {tokens: [gemm, cijk]}}\n"
    "      - {id: copy, category: memory, match: {tokens: [copy]}}\n"
    "  - id: overlap\n"
    "    default: other\n"
    "    categories:\n"
    "      - {id: compute, meaning: matrix compute}\n"
    "      - {id: memory, meaning: data movement}\n"
    "      - {id: conv, meaning: convolutions only}\n"
    "      - {id: other, meaning: none of the above}\n"
    "    rules:\n"
    "      - {id: conv, category: conv, from: {classifier: kernel, categories: [convolution]}}\n"
    "      - {id: compute, category: compute, from: {classifier: kernel, categories: [gemm]}}\n"
    "      - id: small-copy\n"
    "        category: other\n"
    "        from: {classifier: kernel, categories: [memory]}\n"
    "        match: {tokens: [tiny]}\n"
    "      - {id: memory, category: memory, from: {classifier: kernel, categories: [memory]}}\n";

Test(engine_vocabulary, a_kind_reports_its_parent_category) {
  te_rules *r = rules_from1(vocab_pack);
  const te_class_rule *rule = NULL;
  cr_assert_str_eq(te_rules_classify(r, "kernel", "sm80_xmma_fprop_implicit_gemm", &rule), "gemm");
  cr_assert_str_eq(rule->id, "conv");
  cr_assert_str_eq(rule->kind, "convolution");
  cr_assert_str_eq(te_rules_kind(r, "kernel", "sm80_xmma_fprop_implicit_gemm"), "convolution");
  cr_assert_str_eq(te_rules_kind(r, "kernel", "Cijk_Alik_Bljk"), "gemm",
                   "top-level: kind == category");
  cr_assert_str_eq(te_rules_classify(r, "kernel", "void store_kvcache<half>", NULL), "memory");
  cr_assert_str_eq(te_rules_kind(r, "kernel", "unknown_kernel"), "other", "default");
  const te_classifier *c = te_rules_classifier(r, "kernel");
  cr_assert_eq(c->n_categories, 5);
  const te_category *k = te_classifier_category(c, "kv_write");
  cr_assert(k && k->parent && !strcmp(k->parent, "memory"));
  cr_assert_str_eq(k->meaning, "KV-cache writes");
  cr_assert_null(te_classifier_category(c, "gemmm"));
  te_rules_destroy(r);
}

Test(engine_vocabulary, derived_rules_follow_the_base_category_or_kind) {
  te_rules *r = rules_from1(vocab_pack);
  cr_assert_str_eq(te_rules_classify(r, "overlap", "sm80_xmma_fprop_implicit_gemm", NULL), "conv",
                   "a kind in from: matches that kind only");
  cr_assert_str_eq(te_rules_classify(r, "overlap", "Cijk_Alik_Bljk", NULL), "compute");
  cr_assert_str_eq(te_rules_classify(r, "overlap", "void store_kvcache<half>", NULL), "memory",
                   "a category in from: matches its kinds too");
  cr_assert_str_eq(te_rules_classify(r, "overlap", "tiny_copy", NULL), "other",
                   "from: and match: must both hit");
  cr_assert_str_eq(te_rules_classify(r, "overlap", "copy_kernel", NULL), "memory");
  cr_assert_str_eq(te_rules_classify(r, "overlap", "unknown_kernel", NULL), "other");
  te_rules_destroy(r);
}

/* A derived classifier given the base classifier's decision (the kernel map's, for the
 * overlap classes) decides as when it asks the base itself, for every name, and reads
 * the given decision rather than classifying again: a different one changes the answer.
 * A base that names no classifier, or a decision out of range, is ignored. */
Test(engine_vocabulary, derived_once_given_the_base_decision) {
  te_rules *r = rules_from1(vocab_pack);
  const char *names[] = {"sm80_xmma_fprop_implicit_gemm",
                         "Cijk_Alik_Bljk",
                         "tiny_copy",
                         "copy_kernel",
                         "unknown_kernel",
                         "void store_kvcache<half>"};
  const te_classifier *kernel = te_rules_classifier(r, "kernel");
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const te_class_rule *rule = NULL;
    te_rules_classify_once(r, "kernel", names[i], &rule);
    int base = rule ? (int)(rule - kernel->rules) : -1;
    const te_class_rule *got = NULL, *want = NULL;
    const char *given = te_rules_classify_once_given(r, "overlap", names[i], "kernel", base, &got);
    cr_assert_str_eq(given, te_rules_classify_once(r, "overlap", names[i], &want), "%s", names[i]);
    cr_assert_eq(got, want, "%s: the same deciding rule", names[i]);
  }
  /* rule 2 of kernel is gemm: an unknown name read as a GEMM is overlap compute */
  cr_assert_str_eq(kernel->rules[2].category, "gemm");
  cr_assert_str_eq(te_rules_classify_once_given(r, "overlap", "unknown_kernel", "kernel", 2, NULL),
                   "compute");
  cr_assert_str_eq(te_rules_classify_once_given(r, "overlap", "Cijk_Alik_Bljk", "kernel", -1, NULL),
                   "other", "the default given: not classified again");
  cr_assert_str_eq(te_rules_classify_once_given(r, "overlap", "Cijk_Alik_Bljk", "kernel", 99, NULL),
                   "compute", "out of range: ignored, the base is asked");
  cr_assert_str_eq(te_rules_classify_once_given(r, "overlap", "Cijk_Alik_Bljk", "nope", -1, NULL),
                   "compute", "no such base: ignored");
  cr_assert_null(te_rules_classify_once_given(r, "no-such-classifier", "x", "kernel", -1, NULL));
  te_rules_destroy(r);
}

/* Two classifiers derived from `kernel` with the same rules: "pure" has nothing else, so
 * it decides from the base's decision alone (rules.c, build_by_base); "reads" has one more
 * rule with a matcher, so it reads the name as before. The order matters: a kind first,
 * then its category, then two categories. DERIVED_CLASSES is what the two share. */
#define DERIVED_CLASSES                                                                         \
  "    default: other\n"                                                                        \
  "    categories:\n"                                                                           \
  "      - {id: conv, meaning: convolutions}\n"                                                 \
  "      - {id: compute, meaning: matrix compute}\n"                                            \
  "      - {id: moved, meaning: data movement or other}\n"                                      \
  "      - {id: other, meaning: none of the above}\n"                                           \
  "    rules:\n"                                                                                \
  "      - {id: conv, category: conv, from: {classifier: kernel, categories: [convolution]}}\n" \
  "      - {id: compute, category: compute, from: {classifier: kernel, categories: [gemm]}}\n"  \
  "      - {id: moved, category: moved, from: {classifier: kernel, categories: [memory, "       \
  "other]}}\n"
static const char *const derived_pack_extra =
    "pack: d\n"
    "version: 1\n"
    "classifiers:\n"
    "  - id: pure\n" DERIVED_CLASSES "  - id: reads\n" DERIVED_CLASSES
    "      - {id: never, category: other, match: {tokens: [zzz_never_a_kernel]}}\n";

/* A classifier derived wholly from its base, given the base's decision, answers as one
 * that reads the name (the same rules plus a matcher that never hits): for every base
 * decision, the default included, whatever the name; and as it does when it asks the
 * base itself. */
Test(engine_vocabulary, wholly_derived_decides_from_the_base_alone) {
  const char *packs[] = {vocab_pack, derived_pack_extra};
  te_rules *r = rules_from(packs, 2);
  const te_classifier *kernel = te_rules_classifier(r, "kernel");
  cr_assert_not_null(kernel);
  const char *names[] = {"unknown_kernel", "sm80_xmma_fprop_implicit_gemm", "tiny_copy"};
  for (int at = -1; at < (int)kernel->n_rules; at++)
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
      const te_class_rule *got = NULL, *want = NULL;
      const char *pure = te_rules_classify_once_given(r, "pure", names[i], "kernel", at, &got);
      const char *reads = te_rules_classify_once_given(r, "reads", names[i], "kernel", at, &want);
      cr_assert_str_eq(pure, reads, "base rule %d, %s", at, names[i]);
      cr_assert_str_eq(got ? got->id : "-", want ? want->id : "-", "base rule %d, %s", at,
                       names[i]);
    }
  cr_assert_str_eq(te_rules_classify_once_given(r, "pure", "unknown_kernel", "kernel", 1, NULL),
                   "conv", "the given decision (conv), not the name's (the default)");
  cr_assert_str_eq(te_rules_classify_once_given(r, "pure", "x", "kernel", -1, NULL), "moved",
                   "the base's default category is a label too");
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    cr_assert_str_eq(te_rules_classify_once(r, "pure", names[i], NULL),
                     te_rules_classify_once(r, "reads", names[i], NULL), "%s", names[i]);
  te_rules_destroy(r);
}

/* A derived classifier asked once leaves its base classifier's cache alone too (the
 * kernel map asks each kernel name once; a base cache would copy every name), and
 * decides as the cached form does. */
Test(engine_vocabulary, derived_once_caches_no_base_decision) {
  te_rules *r = rules_from1(vocab_pack);
  const char *names[] = {"sm80_xmma_fprop_implicit_gemm", "Cijk_Alik_Bljk", "tiny_copy",
                         "copy_kernel", "unknown_kernel"};
  const te_strcache *base = &r->classifier_caches[0].shared,
                    *derived = &r->classifier_caches[1].shared;
  cr_assert_str_eq(r->classifiers[0].id, "kernel");
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const char *once = te_rules_classify_once(r, "overlap", names[i], NULL);
    cr_assert_eq(base->used, 0, "%s: no base decision cached", names[i]);
    cr_assert_eq(derived->used, i, "%s: no decision of its own cached", names[i]);
    cr_assert_str_eq(once, te_rules_classify(r, "overlap", names[i], NULL), "%s", names[i]);
    cr_assert_eq(derived->used, i + 1);
    te_lcache_clear(&r->classifier_caches[0]); /* the cached form filled the base one */
  }
  te_rules_destroy(r);
}

Test(engine_vocabulary, labels_that_name_nothing_are_errors) {
  te_status st;
  te_diags *d = failing(
      "pack: p\nversion: 1\nclassifiers:\n  - id: kernel\n    default: other\n"
      "    categories: [{id: other, meaning: o}, {id: conv, parent: gemm, meaning: c}]\n"
      "    rules:\n      - {id: g, category: gemmm, match: {tokens: [gemm]}}\n",
      &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert_eq(te_diags_count(d), 2);
  char buf[512];
  te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
  cr_assert(
      strstr(buf, "bad.yaml:6:62: error: category 'gemm' is not declared in classifier 'kernel'"),
      "%s", buf);
  te_diag_format(te_diags_get(d, 1), buf, sizeof buf);
  cr_assert(strstr(buf,
                   "bad.yaml:8:27: error: category 'gemmm' is not declared in classifier "
                   "'kernel' (declared: other, conv)"),
            "%s", buf);
  te_diags_destroy(d);
  d = failing(
      "pack: p\nversion: 1\nclassifiers:\n  - id: kernel\n    default: other\n"
      "    rules: []\n",
      &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert(strstr(te_diags_get(d, 0)->message, "declares no categories"), "%s",
            te_diags_get(d, 0)->message);
  te_diags_destroy(d);
}

Test(engine_vocabulary, derivation_cycles_and_unknown_bases_are_errors) {
  te_status st;
  te_diags *d = failing(
      "pack: p\nversion: 1\nclassifiers:\n"
      "  - id: a\n    default: x\n    categories: [{id: x, meaning: x}]\n"
      "    rules: [{id: r, category: x, from: {classifier: b, categories: [x]}}]\n"
      "  - id: b\n    default: x\n    categories: [{id: x, meaning: x}]\n"
      "    rules: [{id: r, category: x, from: {classifier: a, categories: [x]}}]\n"
      "  - id: c\n    default: x\n    categories: [{id: x, meaning: x}]\n"
      "    rules: [{id: r, category: x, from: {classifier: nope, categories: [x]}}]\n",
      &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert_eq(te_diags_count(d), 3);
  cr_assert(strstr(te_diags_get(d, 0)->message, "classifier 'a' derives from itself"));
  cr_assert(strstr(te_diags_get(d, 1)->message, "classifier 'b' derives from itself"));
  cr_assert(strstr(te_diags_get(d, 2)->message, "from: classifier 'nope' is not defined"));
  cr_assert_eq(te_diags_get(d, 2)->line, 15);
  te_diags_destroy(d);
}

Test(engine_vocabulary, dead_rules_are_warnings_at_the_rule) {
  const char *pack =
      "pack: d\nversion: 1\nclassifiers:\n  - id: kernel\n    default: other\n"
      "    categories: [{id: norm, meaning: n}, {id: quantize, meaning: q}, {id: other, meaning: "
      "o}]\n"
      "    rules:\n"
      "      - {id: norm, category: norm, match: {tokens: [rmsnorm]}}\n"
      "      - id: norm-quant\n"
      "        category: quantize\n"
      "        match: {tokens: [rmsnorm_quant], examples: {match: [add_rmsnorm_quant_kernel]}}\n"
      "      - id: quant\n"
      "        category: quantize\n"
      "        match: {tokens: [quant], examples: {match: [add_rmsnorm_quant_kernel, "
      "quant_fp8]}}\n";
  te_rules *r = rules_from1(pack);
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_find_dead_rules(r, d), 1, "quant still decides quant_fp8");
  const te_diag *g = te_diags_get(d, 0);
  cr_assert_eq(g->severity, TE_SEV_WARNING);
  cr_assert_eq(g->line, 9);
  cr_assert(strstr(g->message, "rule 'kernel/norm-quant' is dead") &&
                strstr(g->message, "earlier rule 'norm'"),
            "%s", g->message);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_settings, default_packs_set_every_key) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_path(r, TRIAGE_SOURCE_DIR "/rules", d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  cr_assert_null(te_rules_settings_missing(r), "default packs leave '%s' unset",
                 te_rules_settings_missing(r));
  for (size_t i = 0; i < te_setting_def_count(); i++)
    cr_assert(te_rules_setting_origin(r, te_setting_def_at(i)->key, NULL), "%s",
              te_setting_def_at(i)->key);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_settings, later_pack_replaces_one_map_id) {
  const char *packs[] = {
      "pack: a\nversion: 1\nsettings:\n  overlap:\n    weight: {memory: 2, compute: 0.5}\n"
      "    producer_consumer: {memory: [compute]}\n",
      "pack: b\nversion: 1\nsettings:\n  overlap: {weight: {memory: 3}}\n"};
  te_rules *r = rules_from(packs, 2);
  const te_settings *s = te_rules_settings(r);
  cr_assert_float_eq(te_number_map_get(&s->overlap_weight, "memory"), 3.0, 1e-12);
  cr_assert_float_eq(te_number_map_get(&s->overlap_weight, "compute"), 0.5, 1e-12);
  cr_assert_eq(s->overlap_weight.n, 2);
  cr_assert(
      te_string_list_has(te_list_map_get(&s->overlap_producer_consumer, "memory"), "compute"));
  cr_assert_null(te_list_map_get(&s->overlap_producer_consumer, "compute"));
  te_rules_destroy(r);
}

Test(engine_settings, unknown_key_wrong_type_and_range_are_file_line_col_errors) {
  expect_first("pack: p\nversion: 1\nsettings:\n  overlap:\n    min_share: 1\n", 5, 5,
               "unknown setting 'overlap.min_share'");
  expect_first("pack: p\nversion: 1\nsettings:\n  kernel_table: {sites_shown: 2.5}\n", 4, 31,
               "setting 'kernel_table.sites_shown' must be a whole number, not 2.5");
  expect_first("pack: p\nversion: 1\nsettings:\n  kernel_table: {min_share_pct: 250}\n", 4, 33,
               "must be between 0 and 100, not 250");
  expect_first("pack: p\nversion: 1\nsettings:\n  overlap: {launch_scope_fallback: 1}\n", 4, 36,
               "setting 'overlap.launch_scope_fallback' must be true or false");
  expect_first("pack: p\nversion: 1\nsettings:\n  overlap: {try_overlap_categories: x}\n", 4, 37,
               "must be a list of strings, not a scalar");
  expect_first("pack: p\nversion: 1\nsettings:\n  overlap: {weight: {memory: x}}\n", 4, 30,
               "setting 'overlap.weight.memory' must be a number, not 'x'");
  expect_first("pack: p\nversion: 1\nsettings:\n  overlap: {weight: 1}\n", 4, 21,
               "setting 'overlap.weight' must be a mapping of ids to numbers");
  expect_first("pack: p\nversion: 1\nsettings:\n  overlap: 1\n", 4, 12,
               "'overlap' is a group of settings and must be a mapping");
  /* a map keyed by summary action: its ids and its entries are the choices */
  expect_first("pack: p\nversion: 1\nsettings:\n  summary: {carries_out: {chain: [fuse]}}\n", 4, 35,
               "setting 'summary.carries_out.chain' entries must be one of tune|");
  expect_first("pack: p\nversion: 1\nsettings:\n  summary: {carries_out: {chian: []}}\n", 4, 27,
               "setting 'summary.carries_out': id must be one of tune|");
  expect_first("pack: p\nversion: 1\nsettings:\n  summary: {weights: {tunes: 1}}\n", 4, 23,
               "setting 'summary.weights': id must be one of tune|");
}

/* The enum type has no row yet (report.layout will be the first): checked on its own. */
Test(engine_settings, enum_values_by_choice) {
  te_setting_def def = {"report.layout", TE_SETTING_ENUM, 0, 0, 0, "default|reference", "", 0};
  te_arena *a = te_arena_create();
  ty_error err;
  ty_node *root = ty_parse(a, a, "[default, reference, sideways, [x]]", 35, &err);
  cr_assert_not_null(root);
  te_setting_value v;
  char msg[200];
  cr_assert_null(te_setting_parse(&def, root->items[0], a, &v, msg, sizeof msg));
  cr_assert_eq(v.choice, 0);
  cr_assert_null(te_setting_parse(&def, root->items[1], a, &v, msg, sizeof msg));
  cr_assert_eq(v.choice, 1);
  cr_assert_eq(te_setting_parse(&def, root->items[2], a, &v, msg, sizeof msg), root->items[2]);
  cr_assert_str_eq(msg, "must be one of default|reference, not 'sideways'");
  cr_assert_eq(te_setting_parse(&def, root->items[3], a, &v, msg, sizeof msg), root->items[3]);
  cr_assert_str_eq(msg, "must be one of default|reference, not a list");
  te_arena_destroy(a);
}

/* ---------------------------------------------------------------- overrides */

static const char *const override_pack =
    "pack: user\n"
    "version: 1\n"
    "matchers:\n"
    "  low_signal: {keywords: [forward]}\n"
    "classifiers:\n"
    "  - id: kernel\n"
    "    default: unknown\n"
    "    rules:\n"
    "      - {id: memory-weak, category: memory, match: {keywords: [fill]}}\n"
    "      - {id: cublas-lt, category: cublas_lt, match: {keywords: [nvjet]}, before: gemm}\n"
    "      - {id: last, category: misc, match: {keywords: [misc]}}\n"
    "      - {id: first, category: firsts, match: {keywords: [nccl_first]}, before: comm}\n"
    "      - {id: after-comm, category: aftercomm, match: {keywords: [aftercomm]}, after: comm}\n"
    "    categories: [{id: unknown, meaning: u}, {id: cublas_lt, meaning: c},\n"
    "                 {id: misc, meaning: m}, {id: firsts, meaning: f}, {id: aftercomm, meaning: "
    "a}]\n"
    "ladders:\n"
    "  - id: frame_priority\n"
    "    penalty: {match: low_signal, amount: 100}\n"
    "    rules:\n"
    "      - {id: sglang, normalized: {prefixes: [python/sglang/]}, score: 500, penalize: true}\n"
    "settings:\n"
    "  kernel_table: {min_share_pct: 2.5}\n";

Test(engine_override, replace_in_place_and_insert) {
  const char *packs[] = {base_pack, override_pack};
  te_rules *r = rules_from(packs, 2);
  const te_classifier *c = te_rules_classifier(r, "kernel");
  cr_assert_not_null(c);
  const char *want[] = {"first", "comm", "after-comm", "memory-weak", "cublas-lt", "gemm", "last"};
  cr_assert_eq(c->n_rules, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < c->n_rules; i++) cr_assert_str_eq(c->rules[i].id, want[i], "rule %zu", i);
  cr_assert_str_eq(c->default_category, "unknown");
  cr_assert_str_eq(te_rules_classify(r, "kernel", "nvjet_tst_64x8", NULL), "cublas_lt");
  cr_assert_str_eq(te_rules_classify(r, "kernel", "copy_kernel", NULL), "unknown",
                   "the replaced memory-weak rule no longer knows 'copy'");
  cr_assert_str_eq(te_rules_classify(r, "kernel", "fill_kernel", NULL), "memory");
  cr_assert_str_eq(c->rules[3].origin.file, "pack1.yaml");
  /* named matcher, ladder rule, penalty and settings: the later pack wins */
  cr_assert_eq(te_rules_score(r, "frame_priority", "/s/sglang/a.py(1): forward",
                              "python/sglang/a.py:1 forward", NULL, 0),
               400);
  cr_assert_eq(te_rules_score(r, "frame_priority", "/s/sglang/a.py(1): __call__",
                              "python/sglang/a.py:1 __call__", NULL, 0),
               500);
  cr_assert_float_eq(te_rules_settings(r)->kernel_table_min_share_pct, 2.5, 1e-12);
  cr_assert_float_eq(te_number_map_get(&te_rules_settings(r)->overlap_weight, "communication"), 1.3,
                     1e-12);
  cr_assert_eq(te_rules_pack_count(r), 2);
  cr_assert_str_eq(te_rules_pack(r, 1)->id, "user");
  te_rules_destroy(r);
}

Test(engine_override, invalid_pack_merges_nothing) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_buffer(r, "base.yaml", base_pack, strlen(base_pack), d), TE_OK);
  const char *bad =
      "pack: bad\nversion: 1\nclassifiers:\n  - id: kernel\n    rules:\n"
      "      - {id: gemm, category: broken, match: {keywords: [x]}}\n"
      "      - {id: y, category: z, match: {keywords: [q]}, after: nope}\n";
  cr_assert_eq(te_rules_load_buffer(r, "bad.yaml", bad, strlen(bad), d), TE_ERR_INVALID);
  cr_assert_eq(te_diags_error_count(d), 1);
  cr_assert_str_eq(te_diags_get(d, 0)->file, "bad.yaml");
  cr_assert_eq(te_diags_get(d, 0)->line, 7);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  cr_assert_str_eq(te_rules_classify(r, "kernel", "gemm_x", NULL), "gemm");
  cr_assert_eq(te_rules_pack_count(r), 1);
  cr_assert_eq(te_rules_load_buffer(r, "late.yaml", base_pack, strlen(base_pack), d), TE_ERR_STATE,
               "loading after finalize is refused");
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_override, new_classifier_needs_default) {
  te_status st;
  te_diags *d = failing("pack: p\nversion: 1\nclassifiers:\n  - id: k\n    rules: []\n", &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert(strstr(te_diags_get(d, 0)->message, "needs 'default'"));
  te_diags_destroy(d);
}

/* ---------------------------------------------------------------- stages, ranks, frameworks */

static const char *const stage_pack =
    "pack: s\n"
    "version: 1\n"
    "stages:\n"
    "  - {id: all, label: all, order: 2}\n"
    "  - {id: extend, label: extend/prefill, order: 0}\n"
    "  - {id: decode, label: decode, order: 1}\n"
    "stage_rules:\n"
    "  path:\n"
    "    - {id: extend-path, stage: extend, match: {regex: ['[-_](extend|prefill)']}}\n"
    "  annotation:\n"
    "    - {id: decode-ann, stage: decode, match: {keywords: [decode]}}\n"
    "rank_patterns:\n"
    "  - {id: tp, regex: '(?:^|[_-])tp(\\d+)(?:[_.-]|$)'}\n"
    "  - {id: rank, regex: 'rank[-_]?(\\d+)'}\n"
    "frameworks:\n"
    "  - {id: sglang, label: SGLang, aliases: [sgl]}\n"
    "  - {id: trtllm, label: TensorRT-LLM, aliases: [tensorrt_llm, trt]}\n"
    "framework_hints:\n"
    "  default: sglang\n"
    "  text:\n"
    "    - {id: trt-text, framework: trtllm, match: {keywords: [tensorrt_llm]}}\n"
    "  server_args_keys:\n"
    "    - {id: trt-keys, framework: trtllm, keys: [max_batch_size, kv_cache_config]}\n"
    "  url_probes:\n"
    "    - {id: info, framework: sglang, path: /server_info, body_match: {keywords: "
    "[tokenizer_path]}, timeout_s: 60}\n"
    "kernel_map_aliases:\n"
    "  - {id: memset, trigger: {prefixes: [memset]}, tokens: [memset]}\n";

Test(engine_stages, order_and_lookup) {
  te_rules *r = rules_from1(stage_pack);
  cr_assert_eq(te_rules_stage_count(r), 3);
  cr_assert_str_eq(te_rules_stage(r, 0)->id, "extend");
  cr_assert_str_eq(te_rules_stage(r, 2)->id, "all");
  cr_assert_str_eq(te_rules_stage_by_id(r, "decode")->label, "decode");
  cr_assert_str_eq(te_rules_stage_from_path(r, "out/run_prefill/trace.json.gz")->id, "extend");
  cr_assert_null(te_rules_stage_from_path(r, "out/run/trace.json.gz"));
  cr_assert_str_eq(te_rules_stage_from_annotation(r, "DECODE_step")->id, "decode");
  te_rules_destroy(r);
}

Test(engine_stages, rank_from_filename) {
  te_rules *r = rules_from1(stage_pack);
  long rank = -1;
  cr_assert(te_rules_rank_from_filename(r, "host-TP3-decode.trace.json.gz", &rank));
  cr_assert_eq(rank, 3);
  cr_assert(te_rules_rank_from_filename(r, "trace_rank-12.json", &rank));
  cr_assert_eq(rank, 12);
  cr_assert_not(te_rules_rank_from_filename(r, "stp3x.json", &rank));
  te_rules_destroy(r);
}

Test(engine_frameworks, lookup_hints_probes) {
  te_rules *r = rules_from1(stage_pack);
  cr_assert_eq(te_rules_framework_count(r), 2);
  cr_assert_str_eq(te_rules_framework_lookup(r, "TensorRT_LLM")->id, "trtllm");
  cr_assert_str_eq(te_rules_framework_lookup(r, "TRT")->id, "trtllm");
  cr_assert_str_eq(te_rules_framework_lookup(r, "SGL")->id, "sglang");
  cr_assert_null(te_rules_framework_lookup(r, "vllm"));
  cr_assert_str_eq(te_rules_framework_default(r)->id, "sglang");
  cr_assert_str_eq(te_rules_framework_from_text(r, "/opt/TensorRT_LLM/x")->id, "trtllm");
  cr_assert_null(te_rules_framework_from_text(r, "nothing here"));
  const char *keys[] = {"model_path", "kv_cache_config"};
  cr_assert_str_eq(te_rules_framework_from_keys(r, keys, 2)->id, "trtllm");
  cr_assert_null(te_rules_framework_from_keys(r, keys, 1));
  cr_assert_eq(te_rules_url_probe_count(r), 1);
  const te_url_probe *p = te_rules_url_probe(r, 0);
  cr_assert_str_eq(p->path, "/server_info");
  cr_assert_float_eq(p->timeout_s, 60.0, 1e-12);
  cr_assert(hit(p->body_match, "{\"tokenizer_path\": 1}"));
  cr_assert_eq(te_rules_alias_count(r), 1);
  cr_assert(hit(te_rules_alias(r, 0)->trigger, "memset32_aligned"));
  te_rules_destroy(r);
}

/* ---------------------------------------------------------------- fusion patterns */

Test(engine_fusion, fields_and_subsumes) {
  const char *pack = "pack: f\nversion: 1\nfrusion: 1\n";
  te_status st;
  te_diags *d = failing(pack, &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert(strstr(te_diags_get(d, 0)->message, "unknown key 'frusion'"));
  te_diags_destroy(d);
  const char *good =
      "pack: f\nversion: 1\nframeworks: [{id: sglang}]\nfusion_patterns:\n"
      "  - id: a\n    name: A\n    framework: sglang\n    origin: inflight\n"
      "    candidate_paths: [x.py, y.py]\n    active: {keywords: [fused_a]}\n"
      "    split_groups: [{keywords: [rope]}, {keywords: [cache]}]\n"
      "    model_include: [qwen3]\n    model_exclude: [qwen3.5]\n    tp: {min: 2, required: true}\n"
      "    min_share_pct: 0.4\n    likely_share_pct: 2\n    priority: 90\n    subsumes: [b]\n"
      "    rationale_hint: hint\n"
      "  - {id: b, name: B, enabled: false}\n";
  te_rules *r = rules_from1(good);
  cr_assert_eq(te_rules_fusion_count(r), 2);
  const te_fusion_pattern *a = te_rules_fusion(r, 0);
  cr_assert_str_eq(a->name, "A");
  cr_assert_eq(a->origin, TE_ORIGIN_INFLIGHT);
  cr_assert_eq(a->n_candidate_paths, 2);
  cr_assert_eq(a->n_split_groups, 2);
  cr_assert(hit(a->split_groups[1], "kv_cache_write"));
  cr_assert_eq(a->min_tp_size, 2);
  cr_assert(a->require_tp);
  cr_assert_float_eq(a->min_share_pct, 0.4, 1e-12);
  cr_assert_eq(a->priority, 90);
  cr_assert_eq(a->n_subsumes, 1);
  cr_assert_eq(a->subsumes[0], te_rules_fusion(r, 1));
  cr_assert_str_eq(a->model_exclude[0], "qwen3.5");
  cr_assert_null(te_rules_fusion(r, 1)->active); /* enabled: false: no evidence, no row */
  te_rules_destroy(r);
}

/* ---------------------------------------------------------------- examples */

Test(engine_examples, classifier_and_matcher_examples) {
  const char *pack =
      "pack: e\nversion: 1\n"
      "matchers:\n"
      "  compute_like:\n"
      "    keywords: [gemm]\n"
      "    examples: {match: [gemm_x, not_listed_kernel], no_match: [memcpy]}\n"
      "classifiers:\n"
      "  - id: kernel\n"
      "    default: other\n"
      "    rules:\n"
      "      - id: comm\n"
      "        category: communication\n"
      "        match:\n"
      "          keywords: [nccl, broadcast]\n"
      "          examples:\n"
      "            match: [ncclKernel, gemm_broadcast]\n"
      "            no_match: [memcpy]\n"
      "      - id: gemm\n"
      "        category: gemm\n"
      "        match: {keywords: [gemm], examples: {match: [gemm_x], no_match: [ncclgemm]}}\n"
      "    categories: [{id: communication, meaning: c}, {id: gemm, meaning: g}, {id: other, "
      "meaning: o}]\n";
  te_rules *r = rules_from1(pack);
  te_diags *d = te_diags_create();
  size_t n = 0;
  cr_assert_eq(te_rules_run_examples(r, d, &n), TE_ERR_INVALID);
  cr_assert_eq(n, 8);
  /* gemm_broadcast is classified by the whole classifier: comm comes first, so it is
   * communication and passes; ncclgemm is decided by comm, so gemm's no_match holds.
   * The named matcher's second match example is wrong on purpose. */
  cr_assert_eq(te_diags_count(d), 1, "got %zu", te_diags_count(d));
  const te_diag *g = te_diags_get(d, 0);
  cr_assert_eq(g->line, 6);
  cr_assert(strstr(g->message,
                   "example 'not_listed_kernel' should match named matcher "
                   "'compute_like' but does not"),
            "%s", g->message);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_examples, failing_classifier_example_names_rule) {
  const char *pack =
      "pack: e\nversion: 1\n"
      "classifiers:\n"
      "  - id: kernel\n"
      "    default: other\n"
      "    rules:\n"
      "      - {id: comm, category: communication, match: {keywords: [nccl]}}\n"
      "      - id: gemm\n"
      "        category: gemm\n"
      "        match:\n"
      "          keywords: [gemm]\n"
      "          examples: {match: [nccl_gemm], no_match: [plain_gemm]}\n"
      "    categories: [{id: communication, meaning: c}, {id: gemm, meaning: g}, {id: other, "
      "meaning: o}]\n";
  te_rules *r = rules_from1(pack);
  te_diags *d = te_diags_create();
  size_t n = 0;
  cr_assert_eq(te_rules_run_examples(r, d, &n), TE_ERR_INVALID);
  cr_assert_eq(n, 2);
  cr_assert_eq(te_diags_count(d), 2);
  char buf[512];
  te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
  cr_assert_str_eq(buf,
                   "pack0.yaml:12:30: error: example 'nccl_gemm' should match classifier "
                   "rule 'kernel/gemm' but does not (classified 'communication' by rule comm)");
  te_diag_format(te_diags_get(d, 1), buf, sizeof buf);
  cr_assert(strstr(buf,
                   "pack0.yaml:12:53: error: example 'plain_gemm' should not match "
                   "classifier rule 'kernel/gemm' but does"),
            "%s", buf);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

/* ---------------------------------------------------------------- diagnostics */

Test(engine_diags, every_problem_is_reported_with_position) {
  const char *pack =
      "pack: many\n"
      "version: 1\n"
      "classifiers:\n"
      "  - id: kernel\n"
      "    default: other\n"
      "    rules:\n"
      "      - {id: a, category: x, match: {keywords: [a], regex: ['ok', 'bad(']}}\n"
      "      - {id: b, match: {keywords: [b]}, colour: red}\n"
      "      - {id: a, category: y, match: {keywords: [c]}}\n"
      "ladders:\n"
      "  - {id: l, rules: [{id: r, score: 1.5}]}\n";
  te_status st;
  te_diags *d = failing(pack, &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  struct {
    unsigned line, col;
    const char *text;
  } want[] = {
      {7, 72, "bad regex 'bad('"},
      {8, 41, "unknown key 'colour'"},
      {8, 9, "needs 'category'"},
      {11, 36, "score must be a whole number"},
  };
  size_t nwant = sizeof want / sizeof want[0];
  cr_assert_eq(te_diags_count(d), nwant, "got %zu diagnostics", te_diags_count(d));
  for (size_t i = 0; i < nwant; i++) {
    const te_diag *g = te_diags_get(d, i);
    cr_assert_eq(g->line, want[i].line, "diag %zu: %u:%u %s", i, g->line, g->col, g->message);
    cr_assert_eq(g->col, want[i].col, "diag %zu: %u:%u %s", i, g->line, g->col, g->message);
    cr_assert(strstr(g->message, want[i].text), "diag %zu: %s", i, g->message);
  }
  te_diags_destroy(d);
}

Test(engine_diags, duplicate_id_in_one_pack) {
  te_status st;
  te_diags *d =
      failing("pack: p\nversion: 1\nframeworks:\n  - {id: a}\n  - {id: b}\n  - {id: a}\n", &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert_eq(te_diags_get(d, 0)->line, 6);
  cr_assert(strstr(te_diags_get(d, 0)->message, "duplicate id 'a'"));
  te_diags_destroy(d);
}

Test(engine_diags, format_and_limits) {
  char big[64];
  te_diag diag = {TE_SEV_WARNING, "f.yaml", 3, 4, "msg"};
  int n = te_diag_format(&diag, big, sizeof big);
  cr_assert_str_eq(big, "f.yaml:3:4: warning: msg");
  cr_assert_eq(n, (int)strlen(big));
  char tiny[5];
  cr_assert_eq(te_diag_format(&diag, tiny, sizeof tiny), n);
  cr_assert_str_eq(tiny, "f.ya");
  /* an oversized pack is refused before parsing */
  size_t len = TE_MAX_PACK_BYTES + 1;
  char *buf = malloc(len);
  memset(buf, '#', len);
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_buffer(r, "huge.yaml", buf, len, d), TE_ERR_LIMIT);
  cr_assert(strstr(te_diags_get(d, 0)->message, "TE_MAX_PACK_BYTES"));
  free(buf);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_diags, alias_count_limit) {
  /* Aliases that expand to little are still refused past TE_MAX_YAML_ALIASES. */
  char pack[8192] = "pack: p\nversion: 1\nsettings:\n  a: &a [x]\n  b: [";
  for (int i = 0; i < TE_MAX_YAML_ALIASES + 1; i++) strcat(pack, "*a, ");
  strcat(pack, "*a]\n");
  te_status st;
  te_diags *d = failing(pack, &st);
  cr_assert_eq(st, TE_ERR_INVALID);
  cr_assert(strstr(te_diags_get(d, 0)->message, "TE_MAX_YAML_ALIASES"), "%s",
            te_diags_get(d, 0)->message);
  te_diags_destroy(d);
}

/* ---------------------------------------------------------------- broken corpus */

Test(engine_broken, every_broken_pack_gives_its_first_diagnostic) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/rules/broken/expected.tsv", TRIAGE_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  char line[512];
  size_t cases = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, "\n")] = '\0';
    char *name = strtok(line, "\t"), *pos = strtok(NULL, "\t"), *needle = strtok(NULL, "\t");
    cr_assert(name && pos && needle, "malformed expected.tsv line");
    unsigned want_line = 0, want_col = 0;
    cr_assert_eq(sscanf(pos, "%u:%u", &want_line, &want_col), 2);
    char file[1024];
    snprintf(file, sizeof file, "%s/tests/rules/broken/%s", TRIAGE_SOURCE_DIR, name);
    te_rules *r = te_rules_create();
    te_diags *d = te_diags_create();
    te_status st = te_rules_load_path(r, file, d);
    if (st == TE_OK) st = te_rules_finalize(r, d);
    cr_assert(st == TE_ERR_INVALID || st == TE_ERR_LIMIT, "%s: status %s", name, te_status_str(st));
    const te_diag *g = te_diags_get(d, 0);
    cr_assert_not_null(g, "%s: no diagnostic", name);
    cr_assert_eq(g->severity, TE_SEV_ERROR);
    cr_assert_str_eq(g->file, file);
    cr_assert_eq(g->line, want_line, "%s: line %u, want %u (%s)", name, g->line, want_line,
                 g->message);
    cr_assert_eq(g->col, want_col, "%s: col %u, want %u (%s)", name, g->col, want_col, g->message);
    cr_assert(strstr(g->message, needle), "%s: '%s' lacks '%s'", name, g->message, needle);
    te_diags_destroy(d);
    te_rules_destroy(r);
    cases++;
  }
  fclose(f);
  cr_assert_geq(cases, 11);
}

/* ---------------------------------------------------------------- the shipped packs */

static te_rules *default_rules(void) {
  const char *dir = getenv("TRIAGE_RULES_DIR");
  char fallback[1024];
  if (!dir || !*dir) {
    snprintf(fallback, sizeof fallback, "%s/rules", TRIAGE_SOURCE_DIR);
    dir = fallback;
  }
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  te_status st = te_rules_load_path(r, dir, d);
  if (st == TE_OK) st = te_rules_finalize(r, d);
  char buf[1024] = "";
  if (te_diags_count(d)) te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
  cr_assert_eq(st, TE_OK, "%s: %s", te_status_str(st), buf);
  te_diags_destroy(d);
  return r;
}

/* The compat pack must decide every classifier rule the reference has not: each rule of
 * the kernel and overlap classifiers, after it loads, comes from the compat pack (a
 * reference rule, or a default rule replaced by one that never hits). A rule added to
 * the defaults without its compat entry would leak a new judgement into --compat. */
Test(engine_defaults, compat_pack_decides_every_classifier_rule) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  const char *dir = getenv("TRIAGE_RULES_DIR");
  char defaults[1024], compat[1100];
  snprintf(defaults, sizeof defaults, "%s", dir && *dir ? dir : TRIAGE_SOURCE_DIR "/rules");
  snprintf(compat, sizeof compat, "%s/compat/reference.yaml", defaults);
  cr_assert_eq(te_rules_load_path(r, defaults, d), TE_OK);
  cr_assert_eq(te_rules_load_path(r, compat, d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  const char *ids[] = {"kernel", "overlap"};
  for (size_t k = 0; k < 2; k++) {
    const te_classifier *c = te_rules_classifier(r, ids[k]);
    cr_assert_not_null(c);
    for (size_t i = 0; i < c->n_rules; i++)
      cr_assert(strstr(c->rules[i].origin.file, "compat/reference.yaml"),
                "classifier rule '%s/%s' (%s) has no entry in the compat pack", ids[k],
                c->rules[i].id, c->rules[i].origin.file);
  }
  te_diags_destroy(d);
  te_rules_destroy(r);
}

/* The token index (token_index.h) answers a token matcher with one pass over the name; an
 * explanation still scans the matcher's own entries. Both must agree for every token
 * matcher of the shipped packs on every name of the kernel zoo, its CamelCase, mangled
 * and digit-glued spellings included, and on a few edge cases. */
Test(engine_defaults, token_index_agrees_with_entry_scan) {
  te_rules *r = default_rules();
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/rules/kernel-zoo.tsv", TRIAGE_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  char line[4096];
  size_t names = 0, indexed = 0, hits = 0;
  const char *extra[] = {
      "",        "a",         "_Z",      "_ZN5aiter24add_rmsnorm_quant_kernelIfEEvv",
      "RMSNorm", "fp8fp8fp8", "x_____y", "AllReduce_RMSNorm_FP8Quant"};
  size_t n_extra = sizeof extra / sizeof extra[0];
  for (size_t e = 0;; e++) {
    const char *name;
    if (e < n_extra) {
      name = extra[e];
    } else {
      if (!fgets(line, sizeof line, f)) break;
      if (line[0] == '#') continue;
      line[strcspn(line, "\t\n")] = '\0';
      name = line;
    }
    names++;
    for (size_t i = 0; i < r->reg.n_matchers; i++) {
      const te_matcher *m = r->reg.matchers[i];
      if (!m->n_tokens) continue;
      cr_assert_not_null(m->tindex, "token matcher %zu is in the index", i);
      indexed++;
      char why[256];
      bool by_scan = te_matcher_explain(m, name, strlen(name), why, sizeof why);
      bool by_index = te_matcher_match_uncached(m, name, strlen(name));
      cr_assert_eq(by_index, by_scan, "matcher %s on '%s': index %d, scan %d (%s)",
                   m->name ? m->name : "(inline)", name, by_index, by_scan, why);
      hits += by_index;
    }
  }
  fclose(f);
  cr_assert_gt(names, 700, "the zoo was read");
  cr_assert_gt(hits, 500, "the comparison covers hits, not only misses");
  cr_assert_gt(indexed, names * 30, "the token matchers were compared (%zu per name)",
               indexed / names);
  te_rules_destroy(r);
}

/* The byte-pair prefilter of literal matchers (matcher.c) only skips scans that cannot
 * hit: for every keyword-only matcher of the shipped packs, the match equals a plain
 * substring search of the lower-cased name (and of its alphanumerics, when compact), on
 * every name of the kernel zoo and its row texts. */
static bool plain_keyword_hit(const te_matcher *m, const char *name) {
  size_t n = strlen(name), k = 0;
  char *low = malloc(n + 1), *cmp = malloc(n + 1);
  cr_assert(low && cmp);
  for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)name[i]);
  for (size_t i = 0; i < n; i++)
    if (isalnum((unsigned char)name[i])) cmp[k++] = low[i];
  cmp[k] = '\0';
  bool hit = false;
  for (size_t i = 0; !hit && i < m->n_keywords; i++) {
    hit = strstr(low, m->keywords[i]) != NULL;
    if (!hit && m->compact && m->compact_lens[i]) hit = strstr(cmp, m->compact_keywords[i]) != NULL;
  }
  free(low);
  free(cmp);
  return hit;
}

Test(engine_defaults, pair_prefilter_never_hides_a_keyword) {
  te_rules *r = default_rules();
  char path[1024], line[4096], row[4200];
  snprintf(path, sizeof path, "%s/tests/rules/kernel-zoo.tsv", TRIAGE_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  size_t compared = 0, hits = 0;
  te_subject *subj = te_subject_create();
  cr_assert_not_null(subj);
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    line[strcspn(line, "\t\n")] = '\0';
    snprintf(row, sizeof row, "%s python/sglang/srt/layers/x.py:12 fused_add_rmsnorm aten::mm",
             line);
    const char *texts[] = {line, row};
    for (size_t t = 0; t < 2; t++) {
      /* one subject for every matcher, as a classifier or the fusion rows use it: its
       * pair sets are built at the second literal matcher and filter from then on */
      te_subject_set(subj, texts[t], strlen(texts[t]));
      for (size_t i = 0; i < r->reg.n_matchers; i++) {
        const te_matcher *m = r->reg.matchers[i];
        if (!m->n_keywords || m->case_sensitive || m->n_words || m->n_tokens || m->n_prefixes ||
            m->n_regex || m->has_exclude)
          continue;
        bool want = plain_keyword_hit(m, texts[t]);
        cr_assert_eq(te_matcher_match_subject(m, subj), want, "matcher %s on '%s'",
                     m->name ? m->name : "(inline)", texts[t]);
        compared++;
        hits += want;
      }
      cr_assert(subj->pairs_built, "the pair sets were in use");
    }
  }
  te_subject_destroy(subj);
  fclose(f);
  cr_assert_gt(compared, 10000, "keyword matchers were compared");
  cr_assert_gt(hits, 700, "the comparison covers hits (%zu)", hits);
  te_rules_destroy(r);
}

/* A regex matcher skips PCRE2 when its pattern is anchored on a first byte the text does
 * not start with (matcher.c, plan_of): for every regex-only matcher of the shipped packs,
 * the answer equals a plain pcre2_match of each pattern, on every name of the kernel zoo
 * and on its first letter's other case (the test compares case-insensitively, so it must
 * not refuse a caseless pattern's match). */
static bool plain_regex_hit(const te_matcher *m, const char *s) {
  pcre2_match_data *md = pcre2_match_data_create(1, NULL);
  cr_assert_not_null(md);
  bool hit = false;
  for (size_t i = 0; !hit && i < m->n_regex; i++)
    hit = pcre2_match(m->regex[i], (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL) >= 0;
  pcre2_match_data_free(md);
  return hit;
}

Test(engine_defaults, anchored_regex_skip_agrees_with_pcre2) {
  te_rules *r = default_rules();
  char path[1024], line[4096];
  snprintf(path, sizeof path, "%s/tests/rules/kernel-zoo.tsv", TRIAGE_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  size_t compared = 0, hits = 0, skippable = 0;
  for (size_t i = 0; i < r->reg.n_matchers; i++) {
    const te_matcher *m = r->reg.matchers[i];
    cr_assert_eq(te_matcher_prepare(m), 0);
    for (size_t k = 0; k < m->n_regex; k++) skippable += m->st->plans[k].anchored_first >= 0;
  }
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    line[strcspn(line, "\t\n")] = '\0';
    for (int variant = 0; variant < 2; variant++) {
      if (variant && isalpha((unsigned char)line[0]))
        line[0] = (char)(isupper((unsigned char)line[0]) ? tolower((unsigned char)line[0])
                                                         : toupper((unsigned char)line[0]));
      for (size_t i = 0; i < r->reg.n_matchers; i++) {
        const te_matcher *m = r->reg.matchers[i];
        if (!m->n_regex || m->n_keywords || m->n_words || m->n_tokens || m->n_prefixes ||
            m->has_exclude)
          continue;
        bool want = plain_regex_hit(m, line);
        cr_assert_eq(te_matcher_match_uncached(m, line, strlen(line)), want, "matcher %s on '%s'",
                     m->name ? m->name : "(inline)", line);
        compared++;
        hits += want;
      }
    }
  }
  fclose(f);
  cr_assert_gt(skippable, 10, "anchored patterns were planned (%zu)", skippable);
  cr_assert_gt(compared, 5000, "regex matchers were compared (%zu)", compared);
  cr_assert_gt(hits, 50, "the comparison covers hits (%zu)", hits);
  te_rules_destroy(r);
}

Test(engine_defaults, default_packs_load_and_pass_examples) {
  te_rules *r = default_rules();
  cr_assert_gt(te_rules_pack_count(r), 0);
  te_diags *d = te_diags_create();
  size_t n = 0;
  te_status st = te_rules_run_examples(r, d, &n);
  char buf[1024] = "";
  if (te_diags_count(d)) te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
  cr_assert_eq(st, TE_OK, "%zu failures, first: %s", te_diags_count(d), buf);
  cr_assert_gt(n, 0);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_defaults, user_pack_reclassifies_without_rebuild) {
  const char *dir = getenv("TRIAGE_RULES_DIR");
  char fallback[1024], user[1024];
  if (!dir || !*dir) {
    snprintf(fallback, sizeof fallback, "%s/rules", TRIAGE_SOURCE_DIR);
    dir = fallback;
  }
  snprintf(user, sizeof user, "%s/tests/rules/packs/cublas-lt.yaml", TRIAGE_SOURCE_DIR);
  const char *name = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT";
  te_rules *r = default_rules();
  cr_assert_str_eq(te_rules_classify(r, "kernel", name, NULL), "gemm");
  te_rules_destroy(r);
  r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_path(r, dir, d), TE_OK);
  cr_assert_eq(te_rules_load_path(r, user, d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  const te_class_rule *rule = NULL;
  cr_assert_str_eq(te_rules_classify(r, "kernel", name, &rule), "cublas_lt");
  cr_assert_str_eq(rule->origin.file, user);
  cr_assert_str_eq(te_rules_classify(r, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", NULL),
                   "communication", "other rules are untouched");
  te_diags_destroy(d);
  te_rules_destroy(r);
}

/* ---------------------------------------------------------------- more refusals */

static void expect_first(const char *pack, unsigned line, unsigned col, const char *needle) {
  te_status st;
  te_diags *d = failing(pack, &st);
  cr_assert_eq(st, TE_ERR_INVALID, "status %s", te_status_str(st));
  const te_diag *g = te_diags_get(d, 0);
  cr_assert_not_null(g);
  cr_assert(strstr(g->message, needle), "'%s' lacks '%s'", g->message, needle);
  cr_assert_eq(g->line, line, "%u:%u %s", g->line, g->col, g->message);
  cr_assert_eq(g->col, col, "%u:%u %s", g->line, g->col, g->message);
  te_diags_destroy(d);
}

Test(engine_refusals, yaml_structure) {
  expect_first("pack: p\nversion: 1\n---\npack: q\n", 3, 1, "exactly one YAML document");
  expect_first("pack: p\nversion: 1\npack: q\n", 3, 1, "duplicate key 'pack'");
  expect_first("pack: p\nversion: 1\nsettings:\n  a: *nowhere\n", 4, 6, "names no anchor");
  expect_first("pack: p\nversion: 1\nsettings: &s\n  a: [*s]\n", 4, 7, "contains it");
  expect_first("pack: p\nversion: 1\n? [a, b]\n: c\n", 3, 3, "mapping keys must be plain");
  expect_first("# only a comment\n", 1, 1, "empty rule pack");
  expect_first("pack: p\nversion: 1\ndescription: \"a\\0b\"\n", 3, 14, "NUL");
}

Test(engine_refusals, references_and_cycles) {
  expect_first(
      "pack: p\nversion: 1\nmatchers:\n  a: {keywords: [x], exclude: b}\n"
      "  b: {keywords: [y], exclude: a}\n",
      4, 6, "excludes itself");
  expect_first("pack: p\nversion: 1\nframework_hints:\n  default: nosuch\n", 4, 12,
               "framework 'nosuch' is not defined");
  expect_first("pack: p\nversion: 1\nrank_patterns:\n  - {id: r, regex: 'tp\\d+'}\n", 4, 20,
               "needs a capture group");
}

Test(engine_refusals, pack_ids_are_unique) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  const char *p = "pack: same\nversion: 1\n";
  cr_assert_eq(te_rules_load_buffer(r, "a.yaml", p, strlen(p), d), TE_OK);
  cr_assert_eq(te_rules_load_buffer(r, "b.yaml", p, strlen(p), d), TE_ERR_INVALID);
  cr_assert(strstr(te_diags_get(d, 0)->message, "already used by a.yaml"));
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  cr_assert_eq(te_rules_pack_count(r), 1);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

Test(engine_refusals, queries_before_finalize_are_safe) {
  te_rules *r = te_rules_create();
  cr_assert_null(te_rules_classify(r, "kernel", "x", NULL));
  cr_assert_eq(te_rules_score(r, "frame_priority", "x", NULL, NULL, 0), 0);
  cr_assert_null(te_rules_settings(r));
  cr_assert_null(te_rules_settings_missing(r));
  cr_assert_null(te_rules_framework_default(r));
  size_t n = 7;
  cr_assert_eq(te_rules_run_examples(r, NULL, &n), TE_ERR_STATE);
  cr_assert_eq(n, 0);
  te_rules_destroy(r);
}

/* ---- the match-result cache */

Test(engine_strcache, keeps_values_by_exact_bytes) {
  te_strcache c = {0};
  int v = -7;
  cr_assert_not(te_strcache_get(&c, "a", 1, &v));
  te_strcache_put(&c, "a", 1, 3);
  te_strcache_put(&c, "a\0b", 3, -1); /* keys may hold NULs (ladder keys do) */
  te_strcache_put(&c, "", 0, 5);
  cr_assert(te_strcache_get(&c, "a", 1, &v) && v == 3);
  cr_assert(te_strcache_get(&c, "a\0b", 3, &v) && v == -1);
  cr_assert(te_strcache_get(&c, "", 0, &v) && v == 5);
  cr_assert_not(te_strcache_get(&c, "a\0c", 3, &v));
  cr_assert_not(te_strcache_get(&c, "ab", 2, &v));
  te_strcache_put(&c, "a", 1, 4); /* a second put replaces the value */
  cr_assert(te_strcache_get(&c, "a", 1, &v) && v == 4);
  cr_assert_eq(c.used, 3);
  te_strcache_clear(&c);
  cr_assert_not(te_strcache_get(&c, "a", 1, &v));
}

/* In a lane the shared map is only read; the lane's answers are its own until folded. */
Test(engine_strcache, a_lane_keeps_its_answers_until_folded) {
  te_lcache c = {0};
  int v = 0;
  te_lcache_put(&c, "shared", 6, 1); /* outside lanes: the shared map */
  cr_assert_eq(c.shared.used, 1);
  cr_assert_eq(te_lane_enter(2), 0);
  cr_assert(te_lcache_get(&c, "shared", 6, &v) && v == 1, "a lane reads the shared map");
  te_lcache_put(&c, "mine", 4, 2);
  cr_assert_eq(c.shared.used, 1, "a lane leaves the shared map alone");
  cr_assert(c.lane[1] && c.lane[1]->used == 1 && !c.lane[0]);
  cr_assert(te_lcache_get(&c, "mine", 4, &v) && v == 2);
  te_lane_leave();
  cr_assert_eq(te_lane_enter(1), 0);
  cr_assert_not(te_lcache_get(&c, "mine", 4, &v), "another lane does not see it");
  te_lane_leave();
  cr_assert_eq(te_lane_enter(3), -1, "lanes are 1 and 2");
  cr_assert_eq(te_lane_now, 0);
  te_lcache_fold(&c);
  cr_assert(!c.lane[1] && c.shared.used == 2);
  cr_assert(te_lcache_get(&c, "mine", 4, &v) && v == 2, "folded into the shared map");
  te_lcache_clear(&c);
}

/* Two threads classifying the same names at once, each in its lane, answer as one thread
 * does; after the fold the shared caches hold every name. */
typedef struct lane_job {
  const te_rules *r;
  unsigned lane;
  const char *const *names;
  size_t n;
  const char *got[64];
} lane_job;

static void *classify_in_lane(void *arg) {
  lane_job *j = arg;
  if (te_lane_enter(j->lane) != 0) return NULL;
  for (int round = 0; round < 50; round++)
    for (size_t i = 0; i < j->n; i++) {
      j->got[i] = te_rules_classify(j->r, "kernel", j->names[i], NULL);
      (void)te_matcher_match(te_rules_matcher(j->r, "regexy"), j->names[i], strlen(j->names[i]));
    }
  te_lane_leave();
  return NULL;
}

Test(engine_lanes, two_threads_answer_as_one) {
  static const char pack[] =
      "pack: p\nversion: 1\n"
      "matchers:\n  regexy: {regex: ['^(nccl|cutlass).*(copy|gemm)$']}\n"
      "classifiers:\n  - id: kernel\n    default: other\n    rules:\n"
      "      - {id: comm, category: communication, match: {regex: [nccl]}}\n"
      "      - {id: gemm, category: gemm, match: {regex: ['gemm|xmma']}}\n"
      "      - {id: copy, category: memory, match: {keywords: [copy]}}\n"
      "    categories: [{id: communication, meaning: c}, {id: gemm, "
      "meaning: g}, {id: memory, meaning: m}, {id: other, meaning: o}]\n";
  const char *names[] = {
      "ncclAllReduce_copy", "copy_kernel", "cutlass_copy_gemm", "mystery", "sm80_xmma_fprop", "",
      "elementwise_add"};
  size_t n = sizeof names / sizeof *names;
  te_rules *one = rules_from1(pack), *r = rules_from1(pack);
  lane_job a = {r, 1, names, n, {0}}, b = {r, 2, names, n, {0}};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, classify_in_lane, &b), 0);
  classify_in_lane(&a);
  pthread_join(th, NULL);
  cr_assert_eq(r->classifier_caches[0].shared.used, 0, "nothing put in the shared map in lanes");
  te_rules_lanes_fold(r);
  cr_assert_eq(r->classifier_caches[0].shared.used, n, "the fold keeps every answer once");
  for (size_t i = 0; i < n; i++) {
    const char *want = te_rules_classify(one, "kernel", names[i], NULL);
    cr_assert_str_eq(a.got[i], want, "%s", names[i]);
    cr_assert_str_eq(b.got[i], want, "%s", names[i]);
    cr_assert_str_eq(te_rules_classify(r, "kernel", names[i], NULL), want, "%s", names[i]);
  }
  te_rules_destroy(one);
  te_rules_destroy(r);
}

/* A full cache keeps what it holds and admits nothing new: a trace with one name more
 * than the bound still finds every name but one on its later passes. */
Test(engine_strcache, full_cache_keeps_its_names) {
  te_strcache c = {0};
  char key[32];
  for (unsigned i = 0; i <= TE_MATCH_CACHE_MAX; i++) {
    int n = snprintf(key, sizeof key, "distinct_kernel_%u", i);
    te_strcache_put(&c, key, (size_t)n, (int)(i % 3));
  }
  cr_assert_eq(c.used, TE_MATCH_CACHE_MAX);
  int v = -1;
  for (unsigned i = 0; i < TE_MATCH_CACHE_MAX; i += 997) {
    int n = snprintf(key, sizeof key, "distinct_kernel_%u", i);
    cr_assert(te_strcache_get(&c, key, (size_t)n, &v), "lost %s", key);
    cr_assert_eq(v, (int)(i % 3));
  }
  int n = snprintf(key, sizeof key, "distinct_kernel_%u", TE_MATCH_CACHE_MAX);
  cr_assert_not(te_strcache_get(&c, key, (size_t)n, &v));
  te_strcache_put(&c, "distinct_kernel_0", 17, 9); /* held names still update */
  cr_assert(te_strcache_get(&c, "distinct_kernel_0", 17, &v) && v == 9);
  te_strcache_clear(&c);
}

/* ---- the classifier prefilter (prefilter.h, regex_literals.h) ---- */

/* The literal set of src as one sorted, '|'-joined string ("" when there is none). */
static const char *literals_of(const char *src, char *buf, size_t cap) {
  te_literal_set set;
  buf[0] = '\0';
  if (!te_regex_required(src, &set)) return buf;
  const char *sorted[TE_LITERAL_SET_MAX];
  for (size_t i = 0; i < set.n; i++) sorted[i] = set.s[i];
  for (size_t i = 1; i < set.n; i++)
    for (size_t j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
      const char *t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  for (size_t i = 0; i < set.n; i++) {
    size_t used = strlen(buf);
    snprintf(buf + used, cap - used, "%s%s", i ? "|" : "", sorted[i]);
  }
  return buf;
}

Test(engine_regex_literals, what_each_construct_requires) {
  static const struct {
    const char *re, *want;
  } cases[] = {
      /* literal runs; the best of several is the one whose shortest string is longest */
      {"gemm", "gemm"},
      {"^triton_[a-z]+_fused_", "triton_"},
      {"ab[xy]cdef", "cdef"},
      {"\\d+cudnn_\\d+x\\d+", "cudnn_"},
      /* alternations: every branch must require something; exact branches multiply out */
      {"(?:dispatch|combine|notify)", "combine|dispatch|notify"},
      {"ep::(?:\\w+::)*\\w*?(?:dispatch|combine|notify)", "combine|dispatch|notify"},
      {"pa_(?:bf16|fp16)", "pa_bf16|pa_fp16"},
      {"abc|x[0-9]+yz", "abc|yz"},
      {"abc|x*", ""},
      {"a|b*", ""},
      /* optional and repeated pieces */
      {"ab?c", "abc|ac"},
      {"^_fwd_(?:grouped_)?kernel(?:_stage\\d\\w*|_unified)?$", "_fwd_grouped_kernel|_fwd_kernel"},
      {"(?:xy)+z", "xy"},
      {"(?:xyz){2,3}w", "xyz"},
      {"(?:xyz){0,3}w", "w"},
      {"abc*", "ab"},
      /* classes and escapes: a class is any of several bytes; escaped punctuation is text */
      {"[Gg]emm", "emm"},
      {"a[]x]bcd", "bcd"},
      {"\\.cu\\b", ".cu"},
      {"\\bmma\\b", "mma"},
      {"x\\dyz", "yz"},
      /* letters fold: caseless and case-sensitive patterns are looked for lower-cased */
      {"(?i)GEMM", "gemm"},
      {"Gemm|GEMM|Gemv", "gemm|gemv"},
      {"(?i:Norm)Kernel", "normkernel"},
      {"^kernel_cutlass_kernel_\\w*?(?:Gemm|GEMM)[A-Za-z0-9]*_object_at_",
       "kernel_cutlass_kernel_"},
      /* zero-width pieces add nothing and keep neighbours adjacent */
      {"(?=foo)bar", "bar"},
      {"(?<!x)ab(?#note)cd", "abcd"},
      {"^(?!.*fp8).*Fp8KVCacheDataType\\)0(?!\\d)", "fp8kvcachedatatype)0"},
      {"(?!foo)", ""},
      {"(?<name>ab)c", "abc"},
      /* a name in quotes: the open quote is the close mark too (review 13: the name was
       * read as text, "tag'abcdef", and the rule left out for names it matches) */
      {"(?'tag'abc)def", "abcdef"},
      {"(?P<tag>abc)def", "abcdef"},
      /* what the extraction does not follow gives no set: the regex always runs */
      {"(?x)foo bar", ""},
      {"\\Qa.b\\E", ""},
      {"a{2,x}", ""},
      {"\\x41bc", ""},
      /* a back reference is some text: it parts its neighbours */
      {"(ab)x\\1yz", "abx"},
      {"(?<n>abc)\\k<n>defg", "defg"},
      {"(?<x>a)b\\k'x'cde", "cde"},
      {"(?<x>abc)\\g'x'd", "abc"},
      {"(abc)\\g{1}d", "abc"},
      {"(abc)\\g-1d", "abc"},
      {"(ab)\\g", ""},
      {"(*UTF)abc", ""},
      {"(?R)abc", ""},
      {"abc(", ""},
      {".*", ""},
  };
  char buf[1024];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_expect_str_eq(literals_of(cases[i].re, buf, sizeof buf), cases[i].want, "regex %s",
                     cases[i].re);
}

/* Past each literal limit (triage/limits.h) the regex has no set, and runs on every name;
 * at the limit it still has one. */
Test(engine_regex_literals, past_the_limits_the_regex_always_runs) {
  char re[1024], buf[1024];
  /* an alternation of TE_LITERAL_SET_MAX strings, then one more */
  for (size_t width = TE_LITERAL_SET_MAX; width <= TE_LITERAL_SET_MAX + 1; width++) {
    size_t n = (size_t)snprintf(re, sizeof re, "(?:");
    for (size_t i = 0; i < width; i++)
      n += (size_t)snprintf(re + n, sizeof re - n, "%sk%02zu", i ? "|" : "", i);
    snprintf(re + n, sizeof re - n, ")");
    literals_of(re, buf, sizeof buf);
    if (width == TE_LITERAL_SET_MAX)
      cr_expect_eq(strlen(buf), 4 * width - 1, "%zu strings: %s", width, buf);
    else
      cr_expect_str_eq(buf, "", "%zu strings", width);
  }
  /* TE_LITERAL_MAX_DEPTH nested groups, then one more */
  for (size_t depth = TE_LITERAL_MAX_DEPTH; depth <= TE_LITERAL_MAX_DEPTH + 1; depth++) {
    size_t n = 0;
    for (size_t i = 0; i < depth; i++) re[n++] = '(';
    memcpy(re + n, "gemm", 4);
    n += 4;
    for (size_t i = 0; i < depth; i++) re[n++] = ')';
    re[n] = '\0';
    cr_expect_str_eq(literals_of(re, buf, sizeof buf), depth == TE_LITERAL_MAX_DEPTH ? "gemm" : "",
                     "%zu levels", depth);
  }
  /* a literal run longer than a string holds */
  memset(re, 'a', 2 * TE_LITERAL_MAX_LEN);
  re[2 * TE_LITERAL_MAX_LEN] = '\0';
  literals_of(re, buf, sizeof buf);
  cr_expect_eq(strlen(buf), TE_LITERAL_MAX_LEN - 1, "a run of %d bytes: '%s'",
               2 * TE_LITERAL_MAX_LEN, buf);
}

/* The zoo's names, then spellings the zoo lacks (upper-cased, mangled, empty). */
static size_t zoo_names(char ***out) {
  char path[1024], line[4096];
  snprintf(path, sizeof path, "%s/tests/rules/kernel-zoo.tsv", TRIAGE_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  static const char *const extra[] = {"",
                                      "a",
                                      "_Z",
                                      "_ZN5aiter24add_rmsnorm_quant_kernelIfEEvv",
                                      "_ZN4vllm15rms_norm_kernelEv",
                                      "distinct_kernel_7",
                                      "TRITON_POI_FUSED_ADD_0",
                                      "KERNEL_CUTLASS_KERNEL_GEMM_OBJECT_AT_"};
  size_t n = 0, cap = 2048;
  char **names = malloc(cap * sizeof *names);
  cr_assert_not_null(names);
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) names[n++] = strdup(extra[i]);
  while (fgets(line, sizeof line, f) && n + 2 < cap) {
    if (line[0] == '#') continue;
    line[strcspn(line, "\t\n")] = '\0';
    names[n++] = strdup(line);
    for (char *c = line; *c; c++) *c = (char)toupper((unsigned char)*c);
    names[n++] = strdup(line);
  }
  fclose(f);
  *out = names;
  return n;
}

static void zoo_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Soundness of the extraction on real patterns: every text a shipped regex matches holds
 * one of its literals once lower-cased. */
Test(engine_defaults, regex_literals_occur_in_every_match) {
  te_rules *r = default_rules();
  char **names;
  size_t n = zoo_names(&names), extracted = 0, regexes = 0, matches = 0;
  pcre2_match_data *md = pcre2_match_data_create(1, NULL);
  cr_assert_not_null(md);
  for (size_t i = 0; i < r->reg.n_matchers; i++) {
    const te_matcher *m = r->reg.matchers[i];
    for (size_t k = 0; k < m->n_regex; k++) {
      te_literal_set set;
      regexes++;
      if (!te_regex_required(m->regex_src[k], &set)) continue;
      extracted++;
      for (size_t j = 0; j < n; j++) {
        if (pcre2_match(m->regex[k], (PCRE2_SPTR)names[j], strlen(names[j]), 0, 0, md, NULL) < 0)
          continue;
        matches++;
        char low[4096];
        snprintf(low, sizeof low, "%s", names[j]);
        te_ascii_lower(low, low, strlen(low));
        bool found = false;
        for (size_t l = 0; !found && l < set.n; l++) found = strstr(low, set.s[l]) != NULL;
        cr_assert(found, "'%s' matches %s but holds none of its literals", names[j],
                  m->regex_src[k]);
      }
    }
  }
  pcre2_match_data_free(md);
  cr_assert_gt(extracted * 10, regexes * 7, "most shipped regexes give literals (%zu of %zu)",
               extracted, regexes);
  cr_assert_gt(matches, 200, "the comparison covers matches (%zu)", matches);
  zoo_free(names, n);
  te_rules_destroy(r);
}

/* Every classifier decides every name as it does with every rule run and derived rules
 * comparing label names: the prefilter only leaves out rules that cannot hit, and a
 * derived rule's table (build_derived) holds the answers of the names. */
static void prefilter_agrees(te_rules *r, char **names, size_t n, size_t *skipped) {
  for (size_t c = 0; c < r->n_classifiers; c++) {
    const char *id = r->classifiers[c].id;
    for (size_t j = 0; j < n; j++) {
      const te_class_rule *with = NULL, *without = NULL;
      const char *cat = te_rules_classify_once(r, id, names[j], &with);
      te_prefilter **kept = r->prefilters;
      te_derived **tables = r->derived;
      r->prefilters = NULL;
      r->derived = NULL;
      const char *all = te_rules_classify_once(r, id, names[j], &without);
      r->prefilters = kept;
      r->derived = tables;
      cr_assert_eq(with, without, "classifier %s on '%s': rule %s with the prefilter, %s without",
                   id, names[j], with ? with->id : "(default)",
                   without ? without->id : "(default)");
      cr_assert_str_eq(cat, all);
      if (kept && kept[c]) {
        uint64_t may[64] = {0};
        te_subject subj;
        te_subject_init(&subj, names[j], strlen(names[j]));
        cr_assert(te_subject_texts(&subj));
        te_prefilter_scan(kept[c], subj.folded, subj.len, subj.compact, subj.compact_len,
                          te_token_form_mangled(names[j], strlen(names[j])), may);
        for (size_t i = 0; i < r->classifiers[c].n_rules; i++)
          *skipped += !((may[i >> 6] >> (i & 63)) & 1u);
        te_subject_done(&subj);
      }
    }
  }
}

Test(engine_defaults, classifier_prefilter_never_changes_a_decision) {
  te_rules *r = default_rules();
  char **names;
  size_t n = zoo_names(&names), skipped = 0;
  const te_classifier *kernel = te_rules_classifier(r, "kernel");
  cr_assert_not_null(kernel);
  cr_assert(r->prefilters && r->prefilters[kernel - r->classifiers],
            "the kernel classifier has a prefilter");
  prefilter_agrees(r, names, n, &skipped);
  cr_assert_gt(skipped, n * kernel->n_rules / 2, "most rules are left out (%zu)", skipped);
  zoo_free(names, n);
  te_rules_destroy(r);
}

/* Past TE_PREFILTER_MAX_STATES a classifier has no prefilter and runs every rule. */
Test(engine_prefilter, past_the_state_limit_every_rule_runs) {
  /* entries part within three letters, then run on: ~9 states each */
  size_t entries = TE_PREFILTER_MAX_STATES / 4, cap = entries * 16 + 1024;
  char *pack = malloc(cap);
  cr_assert_not_null(pack);
  size_t used =
      (size_t)snprintf(pack, cap,
                       "pack: big\nversion: 1\nclassifiers:\n  - id: wide\n"
                       "    default: other\n"
                       "    categories: [{id: hit, meaning: h}, {id: other, meaning: o}]\n"
                       "    rules:\n      - id: many\n        category: hit\n"
                       "        match:\n          keywords: [");
  for (size_t i = 0; i < entries; i++)
    used +=
        (size_t)snprintf(pack + used, cap - used, "%s%c%c%cqqqqqqqqq", i ? ", " : "",
                         'a' + (int)(i % 26), 'a' + (int)(i / 26 % 26), 'a' + (int)(i / 676 % 26));
  snprintf(pack + used, cap - used, "]\n");
  te_rules *r = rules_from1(pack);
  free(pack);
  const te_classifier *c = te_rules_classifier(r, "wide");
  cr_assert_not_null(c);
  cr_assert_null(r->prefilters[c - r->classifiers], "no prefilter past the limit");
  cr_assert_str_eq(te_rules_classify_once(r, "wide", "x_hbaqqqqqqqqq_y", NULL), "hit");
  cr_assert_str_eq(te_rules_classify_once(r, "wide", "nothing", NULL), "other");
  te_rules_destroy(r);
}

/* The display rules' prefilter only skips regexes that cannot match: every zoo name (its
 * spellings included) and every display rule's own example displays the same, by the
 * same rule, with and without it. */
static void display_of(te_rules *r, const char *name, char *out, size_t cap,
                       const te_display_rule **rule) {
  *rule = NULL;
  out[0] = '\0';
  te_rules_display_name(r, name, strlen(name), out, cap, NULL, rule);
}

Test(engine_defaults, display_prefilter_never_changes_a_name) {
  te_rules *r = default_rules();
  cr_assert_not_null(r->display_prefilter, "the display rules have a prefilter");
  char **names;
  size_t n = zoo_names(&names), shown = 0;
  for (size_t i = 0; i < r->n_display_rules; i++) /* the examples after the zoo */
    for (size_t k = 0; k < r->display_entries[i]->n_examples; k++) {
      names = realloc(names, (n + 1) * sizeof *names);
      cr_assert_not_null(names);
      names[n++] = strdup(r->display_entries[i]->examples[k].name);
    }
  for (size_t j = 0; j < n; j++) {
    char with[4096], without[4096];
    const te_display_rule *by_with, *by_without;
    display_of(r, names[j], with, sizeof with, &by_with);
    te_prefilter *kept = r->display_prefilter;
    r->display_prefilter = NULL;
    display_of(r, names[j], without, sizeof without, &by_without);
    r->display_prefilter = kept;
    cr_assert_eq(by_with, by_without, "'%s': rule %s with the prefilter, %s without", names[j],
                 by_with ? by_with->id : "(none)", by_without ? by_without->id : "(none)");
    cr_assert_str_eq(with, without, "'%s'", names[j]);
    shown += by_with != NULL;
  }
  cr_assert_gt(shown, 30, "the comparison covers names a rule displays (%zu)", shown);
  zoo_free(names, n);
  te_rules_destroy(r);
}

/* A matcher group answers as each of its matchers would: the shipped packs' matchers in
 * two groups (each other one), on every zoo name, both groups asked about one subject in
 * turn (the second group finds the first's bits and runs its matchers). */
Test(engine_defaults, matcher_group_answers_as_its_matchers) {
  te_rules *r = default_rules();
  char **names;
  size_t n = zoo_names(&names), nm = r->reg.n_matchers, hits = 0, skipped = 0;
  const te_matcher **ms = calloc(nm + 1, sizeof *ms);
  cr_assert_not_null(ms);
  for (size_t i = 0; i < nm; i++) ms[i] = r->reg.matchers[i];
  te_matcher_group *g[2] = {te_matcher_group_create(ms, nm + 1), /* a NULL entry last */
                            te_matcher_group_create(ms, nm / 2)};
  cr_assert(g[0] && g[1]);
  te_subject *subj = te_subject_create(), *plain = te_subject_create();
  cr_assert(subj && plain);
  for (size_t j = 0; j < n; j++) {
    te_subject_set(subj, names[j], strlen(names[j]));
    te_subject_set(plain, names[j], strlen(names[j]));
    for (size_t i = 0; i < nm; i++) {
      size_t k = i % 2 && i < nm / 2 ? 1 : 0;
      bool want = te_matcher_match_subject(ms[i], plain);
      cr_assert_eq(te_matcher_group_match(g[k], i, subj), want, "matcher %zu (%s) on '%s'", i,
                   ms[i]->name ? ms[i]->name : "(inline)", names[j]);
      hits += want;
    }
    cr_assert_not(te_matcher_group_match(g[0], nm, subj), "a NULL entry never hits");
    skipped += subj->may_group != 0;
  }
  cr_assert_gt(hits, 1000, "the comparison covers hits (%zu)", hits);
  cr_assert_gt(skipped, 0, "the group's pass was made");
  te_subject_destroy(subj);
  te_subject_destroy(plain);
  te_matcher_group_destroy(g[0]);
  te_matcher_group_destroy(g[1]);
  free(ms);
  zoo_free(names, n);
  te_rules_destroy(r);
}

/* A subject asked about a group keeps that group's bits; after the group's destroy, a
 * group made next (which may take the freed memory) over the same matchers in the other
 * order must not be answered with them (whole-change review 13: the bits were keyed by
 * the prefilter's address). The shipped matchers, repeated past the bits a subject holds
 * in place (TE_LOCAL_RULE_WORDS): its answer is on the heap. */
Test(engine_defaults, a_later_group_never_reads_a_destroyed_groups_bits) {
  te_rules *r = default_rules();
  char **names;
  size_t n = zoo_names(&names), n_shipped = r->reg.n_matchers, hits = 0, reused = 0;
  size_t nm = 64 * TE_LOCAL_RULE_WORDS + 1 > n_shipped ? 64 * TE_LOCAL_RULE_WORDS + 1 : n_shipped;
  const te_matcher **fwd = calloc(nm, sizeof *fwd), **rev = calloc(nm, sizeof *rev);
  cr_assert(fwd && rev);
  for (size_t i = 0; i < nm; i++) rev[nm - 1 - i] = fwd[i] = r->reg.matchers[i % n_shipped];
  te_subject *subj = te_subject_create(), *plain = te_subject_create();
  cr_assert(subj && plain);
  for (size_t j = 0; j < n; j += 7) { /* every 7th name: a group is built per name */
    te_subject_set(subj, names[j], strlen(names[j]));
    te_subject_set(plain, names[j], strlen(names[j]));
    te_matcher_group *a = te_matcher_group_create(fwd, nm);
    cr_assert_not_null(a);
    for (size_t i = 0; i < nm; i++) (void)te_matcher_group_match(a, i, subj);
    uintptr_t was = (uintptr_t)a;
    te_matcher_group_destroy(a);
    te_matcher_group *b = te_matcher_group_create(rev, nm);
    cr_assert_not_null(b);
    reused += (uintptr_t)b == was;
    for (size_t i = 0; i < nm; i++) {
      bool want = te_matcher_match_subject(rev[i], plain);
      cr_assert_eq(te_matcher_group_match(b, i, subj), want, "matcher %zu on '%s'", i, names[j]);
      hits += want;
    }
    te_matcher_group_destroy(b);
  }
  cr_assert_gt(hits, 100, "the comparison covers hits (%zu)", hits);
  cr_log_info("the later group took the destroyed one's memory %zu times", reused);
  te_subject_destroy(subj);
  te_subject_destroy(plain);
  free(fwd);
  free(rev);
  zoo_free(names, n);
  te_rules_destroy(r);
}
