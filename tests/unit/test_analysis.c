/*
 * Unit tests of the analysis: canonical names, frame normalisation and priority with the
 * default packs, annotation stages, attribution paths, kernel table and fuse matching.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attrib.h"
#include "analysis/diff.h"
#include "analysis/explain.h"
#include "analysis/graph_staging.h"
#include "analysis/id_index.h"
#include "analysis/kernel_map.h"
#include "analysis/kernel_template.h"
#include "analysis/kmap_internal.h"
#include "analysis/pipeline.h"
#include "analysis/ranks.h"
#include "analysis/summary.h"
#include "analysis/summary_internal.h"
#include "analysis/tables.h"
#include "analysis/trace_filter.h"
#include "analysis/trace_view.h"
#include "cli/rules_setup.h"
#include "default_rules.h"
#include "report/text.h"
#include "run_trace.h"

static te_rules *rules;

static void setup(void) { rules = test_default_rules(); }
static void teardown(void) { te_rules_destroy(rules); }

static const char *canon_masked(const char *s, an_hex_mask mask) {
  static char buf[1024];
  an_canonical_name(s, strlen(s), mask, buf, sizeof buf);
  return buf;
}
static const char *canon(const char *s) { return canon_masked(s, AN_MASK_EVERY_HEX); }

/* an_round3 must equal the reference's round trip through text ("%.3f", then strtod) for
 * every double, sign of zero included: ties of exact binary values, values just off a
 * tie, negatives, tiny and huge magnitudes, and a sweep of pseudo-random doubles. */
static double round3_by_text(double x) {
  char buf[512];
  snprintf(buf, sizeof buf, "%.3f", x);
  return strtod(buf, NULL);
}

static void expect_round3(double x) {
  double want = round3_by_text(x), got = an_round3(x);
  cr_assert(memcmp(&want, &got, sizeof want) == 0, "an_round3(%.17g) = %.17g, text gives %.17g", x,
            got, want);
}

Test(round3, equals_the_text_round_trip) {
  const double fixed[] = {
      0,      -0.0,    0.0625,  -0.0625, 0.0005,    0.0015, 2.5e-4,  1.0005,   -1.0005,
      0.1235, 12.3445, 1e-9,    -1e-9,   0.4999999, 1e15,   -1e15,   4.5e12,   4503599627370.4965,
      1e300,  -1e300,  1.0 / 3, 2.0 / 3, 123.4565,  0.0004, -0.0004, 999.9995, 5e-324};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) expect_round3(fixed[i]);
  /* exact ties: k / 2000 for k odd is a tie at three places when it is a binary fraction */
  for (int k = -4000; k <= 4000; k++) {
    expect_round3(k / 16.0);
    expect_round3(k / 2048.0);
    expect_round3(k / 2000.0);
  }
  unsigned long long s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 200000; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    double mag = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
    int scale = (int)(s % 24) - 6;                       /* 1e-6 .. 1e17 */
    double x = mag * pow(10.0, scale) * ((s >> 5) & 1 ? -1 : 1);
    expect_round3(x);
    expect_round3(nextafter(x, 1e300));
  }
}

Test(canonical, cuts_void_parameter_list) {
  cr_assert_str_eq(canon("void foo<int>(int*, 0x7fabc)"), "void foo<int>");
  cr_assert_str_eq(canon("ncclKernel(args)"), "ncclKernel(args)");
  cr_assert_str_eq(canon("  void   bar<(anonymous namespace)::X>(float *)  "),
                   "void bar<(anonymous namespace)::X>");
  cr_assert_str_eq(canon("kernel at 0xDEADbeef"), "kernel at 0xADDR");
  cr_assert_str_eq(canon("void unbalanced)"), "void unbalanced)");
}

/* Tile sizes hold "0x" runs (MT64x160x128, nvjet's 160x128); the reference masks them. */
Test(canonical, reference_mask_takes_every_hex_run) {
  cr_assert_str_eq(canon("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x160x128_MI16x16x1_SN"),
                   "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x16"
                   "0xADDR_MI16x16x1_SN");
  cr_assert_str_eq(canon("nvjet_sm90_tst_160x128_64x4_2x1_v_bz_TNT"),
                   "nvjet_sm90_tst_16"
                   "0xADDR_64x4_2x1_v_bz_TNT");
}

Test(canonical, address_mask_keeps_tile_sizes) {
  const char *tiles[] = {
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x160x128_MI16x16x1_SN_LDSB1",
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT320x224x64_MI16x16x1_SN_LDSB0",
      "nvjet_sm90_tst_160x128_64x4_2x1_v_bz_TNT",
      "cutlass_80_tensorop_s1688gemm_64x64_16x10_nt_align4",
      "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize160x128x32_stage4_warpsize2x2x1",
  };
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++)
    cr_assert_str_eq(canon_masked(tiles[i], AN_MASK_ADDRESSES), tiles[i]);
}

Test(canonical, address_mask_takes_real_addresses) {
  cr_assert_str_eq(canon_masked("void foo<(void*)0x7f3a2c001000>(int)", AN_MASK_ADDRESSES),
                   "void foo<(void*)0xADDR>");
  cr_assert_str_eq(canon_masked("kernel at 0xDEADbeef", AN_MASK_ADDRESSES), "kernel at 0xADDR");
  cr_assert_str_eq(canon_masked("triton_kernel_0x7ffd1234_stream", AN_MASK_ADDRESSES),
                   "triton_kernel_0xADDR_stream");
  cr_assert_str_eq(canon_masked("0x0", AN_MASK_ADDRESSES), "0xADDR");
  /* 17 digits do not fit a pointer: a hash, kept */
  cr_assert_str_eq(canon_masked("k 0x123456789abcdef01", AN_MASK_ADDRESSES),
                   "k 0x123456789abcdef01");
  /* glued to a letter or digit on either side: part of a word, kept */
  cr_assert_str_eq(canon_masked("MT0x10x8 a0x1 0x1g", AN_MASK_ADDRESSES), "MT0x10x8 a0x1 0x1g");
}

/* Two kernels that differ only in a tile size: one row under the reference mask, two
 * under the address mask. */
Test(canonical, tile_sizes_no_longer_merge) {
  char a[256], b[256];
  const char *x = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x160x128_MI16x16x1";
  const char *y = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x160x256_MI16x16x1";
  an_canonical_name(x, strlen(x), AN_MASK_EVERY_HEX, a, sizeof a);
  an_canonical_name(y, strlen(y), AN_MASK_EVERY_HEX, b, sizeof b);
  cr_assert_str_eq(a, b);
  an_canonical_name(x, strlen(x), AN_MASK_ADDRESSES, a, sizeof a);
  an_canonical_name(y, strlen(y), AN_MASK_ADDRESSES, b, sizeof b);
  cr_assert_str_neq(a, b);
}

Test(canonical, mask_comes_from_the_packs, .init = setup, .fini = teardown) {
  /* The shipped packs mask only addresses; the compat pack restores the reference's
   * every-hex mask (rules/70-names.yaml, rules/compat/reference.yaml, deviation A5). */
  cr_assert_eq(an_hex_mask_from_rules(rules), AN_MASK_ADDRESSES);
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  const char *pack = "pack: p\nversion: 1\nsettings: {names: {mask_every_hex: true}}\n";
  cr_assert_eq(te_rules_load_buffer(r, "p.yaml", pack, strlen(pack), d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  cr_assert_eq(an_hex_mask_from_rules(r), AN_MASK_EVERY_HEX);
  te_diags_destroy(d);
  te_rules_destroy(r);
}

/* A name with no whitespace and no "0x" is its own canonical form, under both masks, and
 * the copy agrees with the full rewrite (a trailing space forces it and is trimmed). */
Test(canonical, names_without_spaces_or_hex_are_kept) {
  const char *names[] = {"distinct_kernel_12",
                         "Cijk_Alik_Bljk_BBS_MT64x128x64_MI16x16x1",
                         "void_f<int>(x)",
                         "k\x80\xff<a, b>",
                         "a0",
                         "x0y0",
                         "_ZN5flash15flash_fwd_kernelILi0EEEvNS_6ParamsE",
                         ""};
  const an_hex_mask masks[] = {AN_MASK_ADDRESSES, AN_MASK_EVERY_HEX};
  for (size_t m = 0; m < 2; m++)
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
      char spaced[256], full[256];
      snprintf(spaced, sizeof spaced, "%s ", names[i]);
      an_canonical_name(spaced, strlen(spaced), masks[m], full, sizeof full);
      cr_assert_str_eq(canon_masked(names[i], masks[m]), names[i]);
      cr_assert_str_eq(full, names[i], "the rewrite agrees for '%s'", names[i]);
      cr_assert_eq(an_canonical_name(names[i], strlen(names[i]), masks[m], NULL, 0),
                   strlen(names[i]));
    }
  /* just outside the copy: "0x" and whitespace still rewrite */
  cr_assert_str_eq(canon("k_0x1f"), "k_0xADDR");
  cr_assert_str_eq(canon(" a\t b "), "a b");
}

Test(canonical, reports_full_length) {
  char small[4];
  size_t n = an_canonical_name("abcdefgh", 8, AN_MASK_ADDRESSES, small, sizeof small);
  cr_assert_eq(n, 8);
  cr_assert_str_eq(small, "abc");
}

Test(frames, normalisation_and_priority, .init = setup, .fini = teardown) {
  an_strtab *st = an_strtab_create();
  size_t n = 0;
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("empty", "[]", 2, NULL, &err);
  cr_assert_not_null(t);
  an_resolver *r = an_resolver_create(t, NULL, rules, st);
  const char *norm = NULL;
  int p = an_frame_priority(
      r, "/opt/conda/lib/python3.11/site-packages/sglang/srt/layers/linear.py(450): forward",
      &norm);
  cr_assert_str_eq(norm, "python/sglang/srt/layers/linear.py:450 forward");
  cr_assert_eq(p, 300);
  p = an_frame_priority(r, "/x/python/sglang/srt/model_executor/cuda_graph_runner.py(1193): replay",
                        &norm);
  cr_assert_eq(p, 220);
  p = an_frame_priority(
      r, "/usr/lib/python3/site-packages/torch/nn/modules/module.py(1750): _call_impl", &norm);
  cr_assert_eq(p, 45);
  p = an_frame_priority(r, "threading.py(1016): _bootstrap_inner", &norm);
  cr_assert_eq(p, -20);
  (void)n;
  an_resolver_destroy(r);
  tr_trace_destroy(t);
  an_strtab_destroy(st);
}

/* A small trace: two kernels linked by External id to CPU ops with Python frames, one by
 * correlation only (launch path), one unlinked; annotations name the stages. */
static const char TRACE[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"prefill\",\"pid\":1,\"tid\":1,\"ts\":0,"
    "\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"decode\",\"pid\":0,\"tid\":7,\"ts\":"
    "200,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/w/python/sglang/srt/layers/"
    "linear.py(450): forward\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":50},"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/w/site-packages/torch/nn/modules/"
    "module.py(1750): _call_impl\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":40},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":"
    "10,\"args\":{\"External id\":11}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":6,\"dur\":2,\"args\":{\"correlation\":101,\"External id\":11}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void "
    "gemm_kernel<float>(float*)\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":30,\"args\":{\"stream\":7,"
    "\"correlation\":101,\"External id\":11}},"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/w/python/sglang/srt/layers/"
    "sampler.py(77): forward\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":50},"
    "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":"
    "205,\"dur\":2,\"args\":{\"correlation\":202}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"triton_softmax\",\"pid\":0,\"tid\":7,\"ts\":210,"
    "\"dur\":10,\"args\":{\"stream\":7,\"correlation\":202}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllGather(x)\",\"pid\":0,\"tid\":8,"
    "\"ts\":230,\"dur\":10,\"args\":{\"stream\":8}}"
    "]}";

Test(analysis, stages_and_attribution, .init = setup, .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("t.json", TRACE, sizeof TRACE - 1, NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, NULL, rules, NULL, &v), AN_OK);
  cr_assert_eq(v.n_stages, 2);
  cr_assert_str_eq(v.stages[0].stage->id, "extend");
  cr_assert_eq(v.stages[0].n, 1);
  cr_assert_str_eq(v.stages[1].stage->id, "decode");
  cr_assert_eq(v.stages[1].n, 2);

  an_strtab *st = an_strtab_create();
  an_resolver *r = an_resolver_create(t, NULL, rules, st);
  const tr_event *ks[3] = {v.stages[0].kernels[0], v.stages[1].kernels[0], v.stages[1].kernels[1]};
  an_site_ctx ctx[3];
  cr_assert_eq(an_resolver_resolve(r, ks, 3, ctx), AN_OK);
  /* External id path: the CPU op's frames, highest priority frame */
  cr_assert_str_eq(ctx[0].location, "python/sglang/srt/layers/linear.py:450 forward");
  cr_assert_str_eq(ctx[0].cpu_op, "aten::mm");
  /* correlation launch path */
  cr_assert_str_eq(ctx[1].location, "python/sglang/srt/layers/sampler.py:77 forward");
  cr_assert_str_eq(ctx[1].cpu_op, "cuLaunchKernel");
  /* no link at all */
  cr_assert_str_eq(ctx[2].location, "unresolved");
  cr_assert_str_eq(ctx[2].cpu_op, "");
  an_resolver_destroy(r);

  an_kernel_map *m = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, rules, false, &m), AN_OK);
  const an_kmap_entry *e = an_kernel_map_lookup(m, "extend", "void gemm_kernel<float>");
  cr_assert_not_null(e);
  cr_assert_str_eq(e->best_location, "python/sglang/srt/layers/linear.py:450 forward");
  /* relaxed lookup: prefix relation */
  cr_assert_not_null(an_kernel_map_lookup(m, "decode", "triton_softmax_2"));

  an_kernel_map_destroy(m);
  an_strtab_destroy(st);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
}

Test(analysis, path_stage_wins, .init = setup, .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("t.json", TRACE, sizeof TRACE - 1, NULL, &err);
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, "decode", rules, NULL, &v), AN_OK);
  cr_assert_eq(v.n_stages, 1);
  cr_assert_str_eq(v.stages[0].stage->id, "decode");
  cr_assert_eq(v.stages[0].n, 3);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
}

/* Deviation C9: cuda_sync records (Context Sync, Stream Wait Event) are on the GPU
 * timeline but are not kernels; the packs' matcher not_a_kernel drops them, and the
 * compat pack (which replaces the matcher with one that never hits) counts them again,
 * as the reference does. The kernel table's rows carry the kind of the deciding rule. */
static const char SYNC_TRACE[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void "
    "store_kvcache<__nv_bfloat16>\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":30,\"args\":{\"stream\":"
    "7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_"
    "v1\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":50,\"args\":{\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Context "
    "Sync\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":20,\"args\":{\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait "
    "Event\",\"pid\":0,\"tid\":7,\"ts\":130,\"dur\":1,\"args\":{\"stream\":7}}"
    "]}";

static double stage_total(const te_rules *r, tr_trace *t, size_t *n) {
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, NULL, r, NULL, &v), AN_OK);
  cr_assert_eq(v.n_stages, 1);
  double total = v.stages[0].total_us;
  *n = v.stages[0].n;
  an_trace_view_free(&v);
  return total;
}

Test(analysis, sync_records_are_not_kernels_unless_compat, .init = setup, .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("sync.json", SYNC_TRACE, sizeof SYNC_TRACE - 1, NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  size_t n = 0;
  cr_assert_float_eq(stage_total(rules, t, &n), 80.0, 1e-9);
  cr_assert_eq(n, 2, "the two cuda_sync records are dropped");
  char compat[PATH_MAX];
  cr_assert_not_null(triage_compat_pack("triage", "reference", compat, sizeof compat, stderr));
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *ref = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(ref);
  cr_assert_float_eq(stage_total(ref, t, &n), 101.0, 1e-9);
  cr_assert_eq(n, 4, "the reference counts them");
  te_rules_destroy(ref);
  tr_trace_destroy(t);
}

/* An eager HF model's GEMM: launched by the MLP (modeling_qwen2.py:56) and by the
 * attention projections (modeling_qwen2.py:150), each through nn.Linear's forward
 * (torch/nn/modules/linear.py:125), the frame every caller shares. mlp[i] says which model
 * line launched launch i; the MLP's launches are longer, as real ones are. */
static char *hf_gemm_trace(const bool mlp[6]) {
  size_t cap = 16384, len = 0;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  len += (size_t)snprintf(buf + len, cap - len, "{\"traceEvents\":[");
  for (int i = 0; i < 6; i++) {
    double t = 1000.0 * i;
    len += (size_t)snprintf(
        buf + len, cap - len,
        "%s{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"transformers/models/qwen2/"
        "modeling_qwen2.py(%d): forward\",\"pid\":1,\"tid\":1,\"ts\":%.1f,\"dur\":60},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"torch/nn/modules/"
        "module.py(1743): _call_impl\",\"pid\":1,\"tid\":1,\"ts\":%.1f,\"dur\":50},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"torch/nn/modules/"
        "linear.py(124): forward\",\"pid\":1,\"tid\":1,\"ts\":%.1f,\"dur\":40},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":%."
        "1f,"
        "\"dur\":20,\"args\":{\"External id\":%d}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
        "\"tid\":1,\"ts\":%.1f,\"dur\":5,\"args\":{\"correlation\":%d,\"External id\":%d}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n\","
        "\"pid\":0,\"tid\":7,\"ts\":%.1f,\"dur\":%d,\"args\":{\"stream\":7,\"correlation\":%d,"
        "\"External id\":%d}}",
        i ? "," : "", mlp[i] ? 56 : 150, t, t + 2, t + 4, t + 8, 40 + i, t + 10, 500 + i, 40 + i,
        t + 100, mlp[i] ? 80 : 30, 500 + i, 40 + i);
  }
  len += (size_t)snprintf(buf + len, cap - len, "]}");
  cr_assert_lt(len, cap);
  return buf;
}

static const an_kmap_entry *gemm_entry(te_rules *r, tr_trace *t, an_trace_view *v,
                                       an_kernel_map **m) {
  cr_assert_eq(an_trace_view_build(t, NULL, r, NULL, v), AN_OK);
  cr_assert_eq(an_kernel_map_build(v, 1, r, false, m), AN_OK);
  const an_kmap_entry *e =
      an_kernel_map_lookup(*m, v->stages[0].stage->id, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
  cr_assert_not_null(e);
  return e;
}

/* Review 5/6 defect 3 (deviation A12): the launches are grouped by their own model line,
 * not by the nn.Linear frame they share: the MLP's line carries its 3 x 80 us, the
 * attention's its 3 x 30 us. The reference groups them by the shared frame, one site. */
Test(kernel_map, sites_by_each_launchs_model_line, .init = setup, .fini = teardown) {
  const bool mlp[6] = {false, true, false, true, true, false};
  char *json = hf_gemm_trace(mlp);
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("hf.json", json, strlen(json), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_trace_view v;
  an_kernel_map *m = NULL;
  const an_kmap_entry *e = gemm_entry(rules, t, &v, &m);
  cr_assert_eq(e->n_sites, 2);
  cr_assert_str_eq(e->sites[0].display_location,
                   "transformers/models/qwen2/modeling_qwen2.py:56 forward");
  cr_assert_eq(e->sites[0].launches, 3);
  cr_assert_float_eq(e->sites[0].total_us, 240.0, 1e-9);
  cr_assert_str_eq(e->sites[1].display_location,
                   "transformers/models/qwen2/modeling_qwen2.py:150 forward");
  cr_assert_float_eq(e->sites[1].total_us, 90.0, 1e-9);
  an_kernel_map_destroy(m);
  an_trace_view_free(&v);
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *ref = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(ref);
  e = gemm_entry(ref, t, &v, &m);
  cr_assert_eq(e->n_sites, 1, "the reference: one site, the frame the launches share");
  cr_assert_eq(e->sites[0].launches, 6);
  an_kernel_map_destroy(m);
  an_trace_view_free(&v);
  te_rules_destroy(ref);
  tr_trace_destroy(t);
  free(json);
}

Test(tables, rows_carry_category_and_kind, .init = setup, .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("sync.json", SYNC_TRACE, sizeof SYNC_TRACE - 1, NULL, &err);
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, NULL, rules, NULL, &v), AN_OK);
  an_kernel_map *m = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, rules, false, &m), AN_OK);
  an_tables tb;
  an_tables_options to = {.min_share_pct = -1, .framework_id = "sglang", .tp_size = 1};
  cr_assert_eq(an_tables_build(&v, 1, m, m, rules, &to, &tb), AN_OK);
  const an_kernel_row *conv = &tb.stages[0].rows[0], *kv = &tb.stages[0].rows[1];
  cr_assert_str_eq(conv->category, "gemm");
  cr_assert_str_eq(conv->kind, "convolution");
  cr_assert_str_eq(kv->category, "memory");
  cr_assert_str_eq(kv->kind, "kv_write");
  an_tables_free(&tb);
  an_kernel_map_destroy(m);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
}

/* The kernel table reads its canonical names from the map of its own views: without that
 * map, or with a map of other traces, it refuses instead of spelling names twice. */
Test(tables, need_the_map_of_their_views, .init = setup, .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("sync.json", SYNC_TRACE, sizeof SYNC_TRACE - 1, NULL, &err);
  const char other_json[] =
      "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\","
      "\"name\":\"other_kernel\",\"ts\":1,\"dur\":2,\"pid\":0,"
      "\"tid\":7,\"args\":{\"stream\":7,\"correlation\":1}}]}";
  tr_trace *o = tr_trace_read_buffer("other.json", other_json, sizeof other_json - 1, NULL, &err);
  cr_assert(t && o, "%s", err.message);
  an_trace_view v, ov;
  cr_assert_eq(an_trace_view_build(t, NULL, rules, NULL, &v), AN_OK);
  cr_assert_eq(an_trace_view_build(o, NULL, rules, NULL, &ov), AN_OK);
  an_kernel_map *m = NULL, *om = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, rules, false, &m), AN_OK);
  cr_assert_eq(an_kernel_map_build(&ov, 1, rules, false, &om), AN_OK);
  an_tables tb;
  an_tables_options to = {.min_share_pct = -1, .framework_id = "sglang", .tp_size = 1};
  cr_assert_eq(an_tables_build(&v, 1, m, NULL, rules, &to, &tb), AN_ERR_ARGS);
  cr_assert_eq(an_tables_build(&v, 1, m, om, rules, &to, &tb), AN_ERR_ARGS);
  cr_assert_eq(an_tables_build(&v, 1, om, m, rules, &to, &tb), AN_OK, "the mapping may differ");
  cr_assert_gt(tb.stages[0].n_rows, 0);
  an_tables_free(&tb);
  an_kernel_map_destroy(om);
  an_kernel_map_destroy(m);
  an_trace_view_free(&ov);
  an_trace_view_free(&v);
  tr_trace_destroy(o);
  tr_trace_destroy(t);
}

/* The kernel map's name table: one id per canonical name, found again from its text, with
 * the class the classifier gives that text; the rank summary takes its categories from it
 * and equals one that classifies each name itself. */
Test(kernel_map, name_table_decides_each_name_once, .init = setup, .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("t.json", TRACE, sizeof TRACE - 1, NULL, &err);
  tr_trace *o = tr_trace_read_buffer("sync.json", SYNC_TRACE, sizeof SYNC_TRACE - 1, NULL, &err);
  cr_assert(t && o, "%s", err.message);
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, NULL, rules, NULL, &v), AN_OK);
  an_kernel_map *m = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, rules, false, &m), AN_OK);
  size_t seen = 0;
  for (size_t s = 0; s < v.n_stages; s++)
    for (size_t i = 0; i < v.stages[s].n; i++, seen++) {
      tr_str raw = v.stages[s].kernels[i]->name;
      uint32_t id = an_kernel_map_name_id(m, 0, t, raw);
      const char *name = an_kernel_map_canonical(m, 0, t, raw);
      cr_assert(id != AN_KMAP_NO_NAME && name);
      cr_assert_lt(id, an_kernel_map_name_count(m));
      cr_assert_eq(an_kernel_map_find_name(m, name, strlen(name)), id, "%s", name);
      const char *kind = NULL;
      const char *category = an_kernel_map_name_category(m, id, &kind);
      cr_assert_str_eq(category, te_rules_classify(rules, "kernel", name, NULL), "%s", name);
      cr_assert_str_eq(kind, te_rules_kind(rules, "kernel", name), "%s", name);
    }
  cr_assert_gt(seen, 1);
  cr_assert_eq(an_kernel_map_find_name(m, "never_launched", 14), AN_KMAP_NO_NAME);
  cr_assert_null(an_kernel_map_name_category(m, AN_KMAP_NO_NAME, NULL));
  cr_assert_eq(an_kernel_map_name_id(m, 0, o, 1), AN_KMAP_NO_NAME, "another trace misses");

  an_rank_input in = {"t.json", "all", 0};
  an_rank_summary *with = an_rank_summarize(&in, &v, NULL, rules, m);
  an_rank_summary *without = an_rank_summarize(&in, &v, NULL, rules, NULL);
  cr_assert(with && without);
  cr_assert_eq(an_rank_summary_parts(with), v.n_stages, "one part per stage");
  bool *seen_id = calloc(an_kernel_map_name_count(m) + 1, sizeof *seen_id);
  size_t distinct = 0;
  for (size_t j = 0; j < v.n_stages; j++) {
    an_rank_data a, b;
    cr_assert(an_rank_summary_data(with, j, &a) && an_rank_summary_data(without, j, &b));
    cr_assert_eq(a.n_kernels, b.n_kernels);
    for (size_t k = 0; k < a.n_kernels; k++) {
      cr_assert_str_eq(a.kernels[k].name, b.kernels[k].name);
      uint32_t id = an_kernel_map_find_name(m, a.kernels[k].name, strlen(a.kernels[k].name));
      cr_assert_eq(a.kernels[k].name, an_kernel_map_name(m, id), "the map's copy, borrowed");
      cr_assert_neq(b.kernels[k].name, an_kernel_map_name(m, id), "without a map: its own");
      cr_assert_str_eq(a.kernels[k].category, b.kernels[k].category, "%s", a.kernels[k].name);
      cr_assert_eq(a.kernels[k].cls, b.kernels[k].cls);
      cr_assert_float_eq(a.kernels[k].total_us, b.kernels[k].total_us, 0);
      distinct += !seen_id[id];
      seen_id[id] = true;
    }
  }
  an_rank_data none;
  cr_assert_not(an_rank_summary_data(with, v.n_stages, &none), "no part past the last");
  cr_assert_eq(distinct, an_kernel_map_name_count(m) - 1, "every name but the empty one");
  free(seen_id);
  an_rank_summary_free(with);
  an_rank_summary_free(without);
  an_kernel_map_destroy(m);
  an_trace_view_free(&v);
  tr_trace_destroy(o);
  tr_trace_destroy(t);
}

/* A trace of n kernels, each of a name of its own, from several families the kernel
 * classifier tells apart (GEMMs, collectives, attention, Triton, elementwise, copies) and
 * two the fusion patterns know as fused paths (add + RMSNorm, activation and mul). */
static char *many_names_trace(size_t n, size_t *len) {
  static const char *const fam[][2] = {{"void gemm_kernel_", "<float>(float*)"},
                                       {"ncclDevKernel_AllReduce_Sum_f16_", "(x)"},
                                       {"flash_attn_fwd_kernel_", ""},
                                       {"triton_poi_fused_add_mul_", ""},
                                       {"void at::native::elementwise_kernel<", ">(int)"},
                                       {"Memcpy DtoD ", ""},
                                       {"void flashinfer::norm::FusedAddRMSNormKernel<", "u>(x)"},
                                       {"act_and_mul_kernel_", ""}};
  size_t cap = 256 + n * 192, at = 0;
  char *buf = malloc(cap);
  cr_assert_not_null(buf);
  at += (size_t)snprintf(buf + at, cap - at, "{\"traceEvents\":[");
  for (size_t i = 0; i < n; i++) {
    char name[96];
    const char *const *f = fam[i % (sizeof fam / sizeof fam[0])];
    snprintf(name, sizeof name, "%s%zu%s", f[0], i, f[1]);
    at += (size_t)snprintf(buf + at, cap - at,
                           "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
                           "\"ts\":%zu,\"dur\":1,\"args\":{\"stream\":7}}",
                           i ? "," : "", name, 2 * i);
  }
  at += (size_t)snprintf(buf + at, cap - at, "]}");
  cr_assert_lt(at, cap);
  *len = at;
  return buf;
}

typedef struct classify_job {
  an_kernel_map *m;
  unsigned lane;
} classify_job;

/* many_names_trace(n) read and viewed: the trace (*json its text, *v its view). */
static tr_trace *many_names_view(size_t n, char **json, an_trace_view *v) {
  size_t len = 0;
  *json = many_names_trace(n, &len);
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("many.json", *json, len, NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  cr_assert_eq(an_trace_view_build(t, NULL, rules, NULL, v), AN_OK);
  return t;
}

static void *classify_in_lane(void *arg) {
  classify_job *j = arg;
  cr_assert_eq(te_lane_enter(j->lane), 0);
  an_kernel_map_classify(j->m);
  te_lane_leave();
  return NULL;
}

/* The build in steps, its names classified by two threads at once (each in a lane) beside the
 * sites, gives every name and entry the class the one-call build gives. Enough names that the
 * threads share them out in many chunks. */
Test(kernel_map, names_classified_on_two_threads_as_on_one, .init = setup, .fini = teardown) {
  char *json = NULL;
  an_trace_view v;
  tr_trace *t = many_names_view(3000, &json, &v);
  an_kernel_map *one = NULL, *two = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, rules, false, &one), AN_OK);
  cr_assert_eq(an_kernel_map_gather(&v, 1, rules, false, NULL, &two), AN_OK);
  cr_assert_eq(an_kernel_map_unclassified(two), an_kernel_map_name_count(one));
  classify_job second = {two, 2};
  pthread_t th;
  cr_assert_eq(te_lane_enter(1), 0);
  cr_assert_eq(pthread_create(&th, NULL, classify_in_lane, &second), 0);
  cr_assert_eq(an_kernel_map_sites(two), AN_OK);
  an_kernel_map_classify(two);
  pthread_join(th, NULL);
  te_lane_leave();
  te_rules_lanes_fold(rules);
  cr_assert_eq(an_kernel_map_unclassified(two), 0);
  cr_assert_eq(an_kernel_map_finish(two), AN_OK);
  size_t n = an_kernel_map_name_count(one), categories = 0;
  cr_assert_eq(an_kernel_map_name_count(two), n);
  cr_assert_gt(n, 3000, "every kernel a name of its own, and the empty one");
  const char *last = NULL;
  for (uint32_t id = 0; id < n; id++) {
    const char *name = an_kernel_map_name(one, id);
    cr_assert_str_eq(an_kernel_map_name(two, id), name);
    const char *k1 = NULL, *k2 = NULL;
    const char *c1 = an_kernel_map_name_category(one, id, &k1);
    cr_assert_eq(an_kernel_map_name_category(two, id, &k2), c1, "%s", name);
    cr_assert_eq(k2, k1, "%s", name);
    categories += c1 && c1 != last;
    last = c1;
    const an_kmap_entry *e = an_kernel_map_find(two, NULL, name);
    cr_assert_eq(!e, !an_kernel_map_find(one, NULL, name));
    if (e) cr_assert_eq(e->category, c1, "the entry's category is its name's");
  }
  cr_assert_null(an_kernel_map_name_category(two, 0, NULL), "the empty name was never seen");
  cr_assert_gt(categories, 5, "the families fall in several categories");
  an_kernel_map_destroy(one);
  an_kernel_map_destroy(two);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
  free(json);
}

/* The text every kernel of many_names_trace's fused family of pattern id holds. */
static const char *fused_marker(const char *id) {
  if (!strcmp(id, "fused-add-rmsnorm")) return "FusedAddRMSNormKernel";
  cr_assert_str_eq(id, "fused-act-and-mul", "no other pattern matches those names");
  return "act_and_mul_kernel_";
}

/* The rows of st whose name holds marker. */
static size_t rows_holding(const an_stage_tables *st, const char *marker) {
  size_t n = 0;
  for (size_t i = 0; i < st->n_rows; i++) n += strstr(st->rows[i].name, marker) != NULL;
  return n;
}

/* A stage of many rows tests its fusion probes on two threads (an_tables_options.two_threads)
 * and finds the fusion rows one thread finds, each with the same related kernels. */
Test(tables, fusion_probes_on_two_threads_as_on_one, .init = setup, .fini = teardown) {
  char *json = NULL;
  an_trace_view v;
  tr_trace *t = many_names_view(6000, &json, &v);
  an_kernel_map *m = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, rules, false, &m), AN_OK);
  an_tables one, two;
  an_tables_options to = {.min_share_pct = -1, .framework_id = "sglang", .tp_size = 1};
  cr_assert_eq(an_tables_build(&v, 1, m, m, rules, &to, &one), AN_OK);
  to.two_threads = true;
  cr_assert_eq(an_tables_build(&v, 1, m, m, rules, &to, &two), AN_OK);
  cr_assert_eq(two.n_stages, one.n_stages);
  size_t found = 0;
  for (size_t s = 0; s < one.n_stages; s++) {
    const an_stage_tables *a = &one.stages[s], *b = &two.stages[s];
    cr_assert_geq(a->n_rows, 4096, "a stage of rows enough for two threads");
    cr_assert_eq(b->n_fuse, a->n_fuse);
    for (size_t f = 0; f < a->n_fuse; f++, found++) {
      cr_assert_str_eq(b->fuse[f].pattern_id, a->fuse[f].pattern_id);
      cr_assert_eq(b->fuse[f].n_related, a->fuse[f].n_related, "%s", a->fuse[f].pattern_id);
      cr_assert_float_eq(b->fuse[f].related_us, a->fuse[f].related_us, 0, "every row's bits");
      cr_assert_eq(a->fuse[f].n_related, rows_holding(a, fused_marker(a->fuse[f].pattern_id)),
                   "%s: every kernel of its family, on one thread or two", a->fuse[f].pattern_id);
      for (size_t k = 0; k < a->fuse[f].n_related; k++)
        cr_assert_str_eq(b->fuse[f].related[k], a->fuse[f].related[k]);
    }
  }
  cr_assert_gt(found, 0, "the names' families match some pattern");
  an_tables_free(&one);
  an_tables_free(&two);
  an_kernel_map_destroy(m);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
  free(json);
}

/* A rule set with the "all" stage and nothing else: no classifier, no setting. */
static te_rules *stage_only_rules(void) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  const char *pack = "pack: p\nversion: 1\nstages: [{id: all, label: all, order: 0}]\n";
  cr_assert_eq(te_rules_load_buffer(r, "p.yaml", pack, strlen(pack), d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  te_diags_destroy(d);
  return r;
}

Test(tables, no_kernel_classifier_is_a_rules_error) {
  te_rules *r = stage_only_rules();
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("sync.json", SYNC_TRACE, sizeof SYNC_TRACE - 1, NULL, &err);
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, NULL, r, NULL, &v), AN_OK);
  an_kernel_map *m = NULL;
  cr_assert_eq(an_kernel_map_build(&v, 1, r, false, &m), AN_ERR_RULES,
               "no built-in category: the packs must define the kernel classifier");
  an_tables tb;
  an_tables_options to = {.min_share_pct = -1, .framework_id = "sglang", .tp_size = 1};
  cr_assert_eq(an_tables_build(&v, 1, NULL, NULL, r, &to, &tb), AN_ERR_RULES);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
  te_rules_destroy(r);
}

/* Deviation D8: a TP-4 trace named nothing in particular, without server args, whose
 * first events are CPU ops (the trace sample names no framework) and whose Python frames
 * are SGLang's, with one vLLM module imported among them: the frames vote SGLang, so it
 * is a detected serving framework and world_size is its TP size. The compat pack
 * (framework.frame_sample 0) keeps the packs' default and TP 1, as the reference. */
static char frames_trace[64 * 1024];

static const char *const sglang_frames[] = {
    "vllm/model_executor/layers/activation.py(80): forward",
    "python/sglang/srt/layers/linear.py(450): forward",
    "python/sglang/srt/layers/linear.py(450): forward",
    "python/sglang/srt/models/llama.py(300): forward",
};

/* A TP-4 trace whose events past the sample are n named events of category cat. */
static size_t build_named_trace(const char *cat, const char *const *names, size_t n_names) {
  size_t n = (size_t)snprintf(frames_trace, sizeof frames_trace,
                              "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,"
                              "\"world_size\":4},\"traceEvents\":[");
  for (int i = 0; i < 300; i++) /* past the trace sample's first 256 events */
    n += (size_t)snprintf(frames_trace + n, sizeof frames_trace - n,
                          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::empty\","
                          "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1},",
                          i);
  for (size_t i = 0; i < n_names; i++)
    n += (size_t)snprintf(frames_trace + n, sizeof frames_trace - n,
                          "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\","
                          "\"pid\":1,\"tid\":1,\"ts\":%zu,\"dur\":2},",
                          cat, names[i], 400 + 3 * i);
  n += (size_t)snprintf(frames_trace + n, sizeof frames_trace - n,
                        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"Cijk_Alik_Bljk_BBS_BH\","
                        "\"pid\":0,\"tid\":7,\"ts\":500,\"dur\":30,\"args\":{\"stream\":7}}]}");
  cr_assert_lt(n, sizeof frames_trace);
  return n;
}

static size_t build_frames_trace(const char *const *frames) {
  return build_named_trace("python_function", frames, 4);
}

static void run_named_frames_trace(te_rules *r, const char *name, const char *const *frames,
                                   const char *want_fw, an_source want_src, long want_tp) {
  an_run_options o = {0};
  o.formal = (an_input){.name = name, .data = frames_trace, .len = build_frames_trace(frames)};
  o.min_share_pct = -1;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, r, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_str_eq(rep->run.framework.id, want_fw);
  cr_assert_eq(rep->run.framework.source, want_src);
  cr_assert_eq(rep->run.context.tp_size.value, want_tp);
  an_report_destroy(rep);
}

static void run_frames_trace(te_rules *r, const char *want_fw, an_source want_src, long want_tp) {
  run_named_frames_trace(r, "t.json", sglang_frames, want_fw, want_src, want_tp);
}

Test(pipeline, framework_from_python_frames, .init = setup, .fini = teardown) {
  run_frames_trace(rules, "sglang", AN_SOURCE_PYTHON_FRAMES, 4);
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *compat = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(compat);
  run_frames_trace(compat, "sglang", AN_SOURCE_DEFAULT, 1);
  te_rules_destroy(compat);
}

/* Deviation D9: HF Transformers frames name HF Transformers; what nothing names is generic,
 * never SGLang. D10: the frames outrank a path that names another framework. The compat
 * pack knows no HF Transformers, takes the path first and defaults to SGLang. */
Test(pipeline, framework_hf_transformers_and_generic, .init = setup, .fini = teardown) {
  static const char *const hf[] = {
      "transformers/models/qwen2/modeling_qwen2.py(285): forward",
      "transformers/models/qwen2/modeling_qwen2.py(300): forward",
      "transformers/generation/utils.py(2300): _sample",
      "torch/nn/modules/module.py(1520): _call_impl",
  };
  static const char *const plain[] = {
      "torch/nn/modules/module.py(1520): _call_impl", "train.py(10): main",
      "torch/nn/modules/linear.py(114): forward", "torch/optim/sgd.py(70): step"};
  run_named_frames_trace(rules, "runs/bench.json", hf, "transformers", AN_SOURCE_PYTHON_FRAMES, 1);
  run_named_frames_trace(rules, "runs/vllm_bench.json", hf, "transformers", AN_SOURCE_PYTHON_FRAMES,
                         1);
  run_named_frames_trace(rules, "runs/vllm_bench.json", plain, "vllm", AN_SOURCE_DETECTION_RULE, 4);
  run_named_frames_trace(rules, "t.json", plain, "generic", AN_SOURCE_DEFAULT, 1);
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *compat = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(compat);
  run_named_frames_trace(compat, "runs/vllm_bench.json", hf, "vllm", AN_SOURCE_DETECTION_RULE, 1);
  run_named_frames_trace(compat, "t.json", hf, "sglang", AN_SOURCE_DEFAULT, 1);
  run_named_frames_trace(compat, "t.json", plain, "sglang", AN_SOURCE_DEFAULT, 1);
  te_rules_destroy(compat);
}

/* Deviation D11 (review 13): a training trace with no Python frames names its library by
 * its regions and ops, past the first events: TorchRec's awaitables and pipeline regions
 * outvote the DDP forward that wraps its dense part; DDP alone is DDP. The deciding name is
 * the evidence. The compat pack reads no names: the default. */
static an_report *run_names_trace(te_rules *r, const char *const *names, size_t n_names) {
  size_t n = build_named_trace("user_annotation", names, n_names);
  an_run_options o = {0};
  o.formal = (an_input){.name = "rank0.json", .data = frames_trace, .len = n};
  o.min_share_pct = -1;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, r, &rep, &err), AN_OK, "%s", err.message);
  return rep;
}

Test(pipeline, framework_from_op_and_region_names, .init = setup, .fini = teardown) {
  static const char *const rec[] = {"DistributedDataParallel.forward", "## sparse_data_dist ##",
                                    "## KJTAllToAllTensorsAwaitable wait() ##",
                                    "## PooledEmbeddingsAwaitable wait() ##"};
  static const char *const ddp[] = {"DistributedDataParallel.forward", "## forward ##"};
  an_report *rep = run_names_trace(rules, rec, 4);
  cr_assert_str_eq(rep->run.framework.id, "torchrec");
  cr_assert_eq(rep->run.framework.source, AN_SOURCE_TRACE_CONTENT);
  cr_assert_str_eq(rep->run.framework.evidence, "## sparse_data_dist ##");
  an_report_destroy(rep);
  rep = run_names_trace(rules, ddp, 2);
  cr_assert_str_eq(rep->run.framework.id, "ddp");
  cr_assert_str_eq(rep->run.framework.evidence, "DistributedDataParallel.forward");
  an_report_destroy(rep);
  rep = run_names_trace(rules, ddp + 1, 1);
  cr_assert_str_eq(rep->run.framework.id, "generic");
  cr_assert_eq(rep->run.framework.source, AN_SOURCE_DEFAULT);
  cr_assert_null(rep->run.framework.evidence);
  an_report_destroy(rep);
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *compat = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(compat);
  rep = run_names_trace(compat, rec, 4);
  cr_assert_eq(rep->run.framework.source, AN_SOURCE_DEFAULT);
  an_report_destroy(rep);
  te_rules_destroy(compat);
}

/* D10 and review 4: a framework its first events name comes from the trace's content, and
 * the header says so ("the trace's content"), not "trace metadata" (the trace has no
 * metadata field naming it); a file name naming another framework does not win. */
Test(pipeline, framework_from_first_events_is_trace_content, .init = setup, .fini = teardown) {
  static const char doc[] =
      "{\"traceEvents\":["
      "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"vllm/v1/worker/"
      "gpu_model_runner.py(3380): execute_model\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":50},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"Cijk_Alik_Bljk_BBS_BH\",\"pid\":0,"
      "\"tid\":7,\"ts\":20,\"dur\":30,\"args\":{\"stream\":7}}]}";
  an_run_options o = {0};
  o.formal = (an_input){.name = "runs/sglang_run.json", .data = doc, .len = sizeof doc - 1};
  o.min_share_pct = -1;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_str_eq(rep->run.framework.id, "vllm");
  cr_assert_eq(rep->run.framework.source, AN_SOURCE_TRACE_CONTENT);
  an_report_destroy(rep);
}

/* The pipeline on the same trace: the kernel table rows of the report model. */
/* The run context from the trace's own metadata when there are no server args:
 * distributedInfo.world_size is the TP size, deviceProperties the GPU, the runtime
 * version members the platform; each says where it came from. */
static const char META_TRACE[] =
    "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":4},"
    "\"deviceProperties\":[{\"id\":0,\"name\":\"AMD Instinct "
    "MI300X\",\"computeMajor\":9,\"computeMinor\":4}],"
    "\"hip_runtime_version\":60342134,"
    "\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"Cijk_Alik_Bljk_BBS_BH\",\"pid\":0,\"tid\":7,"
    "\"ts\":20,\"dur\":30,\"args\":{\"stream\":7}}"
    "]}";

Test(pipeline, run_context_from_trace_metadata, .init = setup, .fini = teardown) {
  an_run_options o = {0};
  o.formal = (an_input){.name = "m.json", .data = META_TRACE, .len = sizeof META_TRACE - 1};
  o.min_share_pct = -1;
  o.framework = te_rules_framework_lookup(rules, "sglang");
  o.framework_source = AN_SOURCE_COMMAND_LINE;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  const an_run_context *c = &rep->run.context;
  cr_assert_eq(c->tp_size.value, 4);
  cr_assert_eq(c->tp_size.source, AN_SOURCE_TRACE_METADATA);
  cr_assert_str_eq(c->gpu.value, "AMD Instinct MI300X");
  cr_assert_eq(c->gpu.source, AN_SOURCE_TRACE_METADATA);
  cr_assert_eq(c->platform.value, AN_PLATFORM_ROCM);
  cr_assert_eq(c->platform.source, AN_SOURCE_TRACE_METADATA);
  cr_assert_null(c->model.value);
  cr_assert_eq(c->model.source, AN_SOURCE_UNKNOWN);
  an_report_destroy(rep);
}

/* world_size counts every rank: it is the TP size only for a detected serving framework
 * (fuse.tp_from_world_size_frameworks). A trace whose framework is only the packs' default
 * (a DDP training trace) keeps TP 1, so TP-gated patterns stay closed. */
Test(pipeline, world_size_is_tp_only_for_a_detected_serving_framework, .init = setup,
     .fini = teardown) {
  an_run_options o = {0};
  o.formal = (an_input){.name = "m.json", .data = META_TRACE, .len = sizeof META_TRACE - 1};
  o.min_share_pct = -1;
  o.framework = te_rules_framework_lookup(rules, "sglang");
  o.framework_source = AN_SOURCE_DEFAULT;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_eq(rep->run.context.tp_size.value, 1, "undetected framework: world_size is not TP");
  cr_assert_eq(rep->run.context.tp_size.source, AN_SOURCE_DEFAULT);
  cr_assert_eq(rep->run.context.platform.value, AN_PLATFORM_ROCM, "the platform still is read");
  an_report_destroy(rep);
  /* a serving framework the pack lists, detected from the input: world_size is TP */
  o.framework = te_rules_framework_lookup(rules, "vllm");
  o.framework_source = AN_SOURCE_DETECTION_RULE;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_eq(rep->run.context.tp_size.value, 4);
  cr_assert_eq(rep->run.context.tp_size.source, AN_SOURCE_TRACE_METADATA);
  an_report_destroy(rep);
}

Test(pipeline, kernel_rows_and_provenance, .init = setup, .fini = teardown) {
  an_run_options o = {0};
  o.formal = (an_input){.name = "t.json", .data = TRACE, .len = sizeof TRACE - 1};
  o.min_share_pct = -1;
  o.framework = te_rules_framework_lookup(rules, "sglang");
  o.framework_source = AN_SOURCE_COMMAND_LINE;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_eq(rep->run.mode, AN_MODE_SINGLE);
  cr_assert_str_eq(rep->run.framework.id, "sglang");
  cr_assert_eq(rep->run.framework.source, AN_SOURCE_COMMAND_LINE);
  cr_assert_eq(rep->run.context.tp_size.value, 1);
  cr_assert_eq(rep->run.context.tp_size.source, AN_SOURCE_DEFAULT);
  cr_assert_null(rep->run.context.model.value);
  cr_assert_eq(rep->run.n_formal_inputs, 1);
  cr_assert_str_eq(rep->run.formal_inputs[0], "t.json");
  cr_assert_float_eq(rep->run.kernel_min_share_pct, 1.0, 1e-12, "the packs' bar");
  cr_assert_gt(rep->run.n_packs, 0);
  cr_assert_eq(rep->n_stages, 2);
  const an_stage_report *dec = &rep->stages[1];
  cr_assert_str_eq(dec->id, "decode");
  cr_assert(dec->has_kernels);
  cr_assert_eq(dec->n_kernels, 2);
  cr_assert_str_eq(dec->kernels[0].name, "triton_softmax");
  cr_assert_float_eq(dec->kernels[0].share_pct, 50.0, 1e-9);
  cr_assert_eq(dec->kernels[0].n_shown_sites, 1);
  cr_assert_str_eq(dec->kernels[0].shown_sites[0]->display_location,
                   "python/sglang/srt/layers/sampler.py:77 forward");
  /* the canonical name drops the parameter list; the raw name keeps it */
  cr_assert_str_eq(dec->kernels[1].name, "ncclDevKernel_AllGather(x)");
  cr_assert_str_eq(dec->kernels[1].raw_name, "ncclDevKernel_AllGather(x)");
  cr_assert_str_eq(rep->stages[0].kernels[0].name, "void gemm_kernel<float>");
  cr_assert_str_eq(rep->stages[0].kernels[0].raw_name, "void gemm_kernel<float>(float*)");
  /* no host link: one unresolved site, no CPU op */
  cr_assert_eq(dec->kernels[1].n_shown_sites, 1);
  cr_assert_str_eq(dec->kernels[1].shown_sites[0]->display_location, "unresolved");
  cr_assert_null(dec->kernels[1].shown_sites[0]->top_cpu_op);
  cr_assert_not_null(dec->overlap, "the overlap block of the stage");
  cr_assert_float_eq(dec->gpu_busy_us, 20.0, 1e-9);
  cr_assert_float_eq(dec->gpu_idle_us, 10.0, 1e-9, "span 210..240 minus busy 20");
  an_report_destroy(rep);
}

/* Two-trace mode: the same file under two spellings is read once, a copy of it is read
 * twice (the one progress bar's total counts the bytes of every read); both give the
 * same tables. */
static int n_bars;
static uint64_t bar_total;
static void *count_bar(void *ctx, const char *path) {
  (void)ctx;
  (void)path;
  n_bars++;
  return &bar_total;
}
static void on_bar(void *bar, uint64_t done, uint64_t total) {
  (void)done;
  if (total > *(uint64_t *)bar) *(uint64_t *)bar = total;
}

static an_report *run_pair(const char *formal, const char *mapping) {
  an_run_options o = {0};
  o.formal.path = formal;
  o.mapping.path = mapping;
  o.min_share_pct = -1;
  o.framework = te_rules_framework_lookup(rules, "sglang");
  o.framework_source = AN_SOURCE_COMMAND_LINE;
  o.progress.begin = count_bar;
  o.progress.update = on_bar;
  an_report *rep = NULL;
  an_error err;
  n_bars = 0;
  bar_total = 0;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_eq(n_bars, 1, "one progress bar over every read");
  cr_assert_eq(rep->run.mode, AN_MODE_MAPPING_FORMAL);
  return rep;
}

static void write_file(const char *path) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fwrite(TRACE, 1, sizeof TRACE - 1, f);
  fclose(f);
}

Test(pipeline, same_file_twice_is_read_once, .init = setup, .fini = teardown) {
  char dir[] = "/tmp/triage-pairXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char a[64], b[64], link[64];
  snprintf(a, sizeof a, "%s/t.json", dir);
  snprintf(b, sizeof b, "%s/copy.json", dir);
  snprintf(link, sizeof link, "%s/./t.json", dir);
  write_file(a);
  write_file(b);
  an_report *once = run_pair(a, link);
  cr_expect_eq(bar_total, sizeof TRACE - 1, "one file given twice is read once");
  cr_assert_eq(once->run.n_mapping_inputs, 1);
  an_report *twice = run_pair(a, b);
  cr_expect_eq(bar_total, 2 * (sizeof TRACE - 1), "two files are two reads");
  cr_assert_eq(once->n_stages, twice->n_stages);
  for (size_t i = 0; i < once->n_stages; i++) {
    cr_assert_eq(once->stages[i].n_kernels, twice->stages[i].n_kernels);
    for (size_t k = 0; k < once->stages[i].n_kernels; k++)
      cr_expect_float_eq(once->stages[i].kernels[k].share_pct,
                         twice->stages[i].kernels[k].share_pct, 1e-12);
  }
  an_report_destroy(once);
  an_report_destroy(twice);
  remove(a);
  remove(b);
  remove(dir);
}

/* --min-share replaces the packs' bar once, for the rows and the report alike. */
Test(pipeline, min_share_decided_once, .init = setup, .fini = teardown) {
  an_run_options o = {0};
  o.formal = (an_input){.name = "t.json", .data = TRACE, .len = sizeof TRACE - 1};
  o.min_share_pct = 60;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  cr_assert_float_eq(rep->run.kernel_min_share_pct, 60.0, 1e-12);
  const an_stage_report *dec = &rep->stages[1];
  cr_assert_eq(dec->n_kernels_shown, 0, "both decode rows are at 50%%");
  cr_assert_not(dec->kernels[0].shown);
  an_report_destroy(rep);
}

/* Packs that leave a setting unset cannot run an analysis: a rules error, no report. */
Test(pipeline, unset_setting_is_a_rules_error) {
  te_rules *r = stage_only_rules();
  an_run_options o = {0};
  o.formal = (an_input){.name = "t.json", .data = TRACE, .len = sizeof TRACE - 1};
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, r, &rep, &err), AN_ERR_RULES);
  cr_assert_null(rep);
  cr_assert(strstr(err.message, "set no value for setting 'kernel_table.min_share_pct'"), "%s",
            err.message);
  te_rules_destroy(r);
}

/* ------------------------------------------------------------------ fusion gates */

#define FK(name, ts, dur)                                                                  \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
  ",\"dur\":" #dur ",\"args\":{\"stream\":7}}"

/* RoPE, cache write and a big attention kernel whose name holds kv_cache words; the
 * platform member is spliced in front. */
#define ROPE_KV_EVENTS                                                                             \
  "\"traceEvents\":[" FK("void vllm::rotary_embedding_kernel<c10::BFloat16, true>", 0, 20) "," FK( \
      "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, "                 \
      "(vllm::Fp8KVCacheDataType)0>",                                                              \
      30, 10) "," FK("void paged_attention_kv_cache_kernel<__hip_bfloat16>", 50,                   \
                     200) "," FK("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64", 300,  \
                                 100) "]}"

static const char ROPE_KV_ROCM[] = "{\"hip_runtime_version\":60342134," ROPE_KV_EVENTS;
static const char ROPE_KV_CUDA[] = "{\"cuda_runtime_version\":12080," ROPE_KV_EVENTS;

static an_report *run_vllm(const char *data, size_t len) {
  return test_run_trace(rules, "vllm", data, len);
}

static const an_fuse_row *find_fuse(const an_report *rep, const char *id) {
  for (size_t s = 0; s < rep->n_stages; s++)
    for (size_t i = 0; i < rep->stages[s].n_fuse; i++)
      if (strcmp(rep->stages[s].fuse[i].pattern_id, id) == 0) return &rep->stages[s].fuse[i];
  return NULL;
}

/* Each component takes its own kernel of the right category: the attention kernel whose
 * name says kv_cache is not the cache write; related time is the two components; the
 * saving is the smaller one (the fused kernel does the RoPE work and the write). */
Test(fuse, component_evidence_one_kernel_each, .init = setup, .fini = teardown) {
  an_report *rep = run_vllm(ROPE_KV_ROCM, sizeof ROPE_KV_ROCM - 1);
  const an_fuse_row *r = find_fuse(rep, "vllm-rope-kvcache");
  cr_assert_not_null(r, "split RoPE + cache write on ROCm is reported");
  cr_assert_eq(r->match, AN_FUSION_SPLIT);
  cr_assert_eq(r->n_related, 2);
  cr_assert(strstr(r->related[0], "rotary_embedding") != NULL);
  cr_assert(strstr(r->related[1], "reshape_and_cache") != NULL);
  cr_assert_float_eq(r->related_us, 30.0, 1e-9, "only the component kernels count");
  cr_assert_float_eq(r->saving_us, 10.0, 1e-9, "components except the largest");
  cr_assert_eq(r->n_evidence, 2, "a Confirmed row never shows no evidence");
  an_report_destroy(rep);
}

/* A pattern gated on ROCm stays silent when the trace says CUDA. */
Test(fuse, component_platform_gate, .init = setup, .fini = teardown) {
  an_report *rep = run_vllm(ROPE_KV_CUDA, sizeof ROPE_KV_CUDA - 1);
  cr_assert_eq(rep->run.context.platform.value, AN_PLATFORM_CUDA);
  cr_assert_null(find_fuse(rep, "vllm-rope-kvcache"));
  an_report_destroy(rep);
}

/* Norm + quant: a norm kernel whose template names a quant enum and a weight-only MXFP4
 * GEMM are no quantize component, so there is no split. */
static const char NORM_NOQUANT[] = "{\"traceEvents\":[" FK(
    "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_"
    "24Rmsnorm2dFwdPipelineProblemINS_23Rmsnorm2dFusedQuantEnumE0EEEEEEE",
    0, 30) "," FK("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", 40, 300) "]}";

Test(fuse, component_category_must_fit, .init = setup, .fini = teardown) {
  an_report *rep = run_vllm(NORM_NOQUANT, sizeof NORM_NOQUANT - 1);
  cr_assert_null(find_fuse(rep, "vllm-rmsnorm-quant"));
  an_report_destroy(rep);
}

/* TP from distributedInfo opens a TP gate: split all-reduce + RMSNorm on a TP-4 trace
 * without server args. */
static const char AR_TP4[] =
    "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":4},"
    "\"cuda_runtime_version\":12080,\"traceEvents\":[" FK(
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0,
        50) "," FK("void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>", 60,
                   20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90, 100) "]}";

Test(fuse, component_tp_from_trace, .init = setup, .fini = teardown) {
  an_report *rep = run_vllm(AR_TP4, sizeof AR_TP4 - 1);
  cr_assert_eq(rep->run.context.tp_size.value, 4);
  const an_fuse_row *r = find_fuse(rep, "vllm-allreduce-rmsnorm");
  cr_assert_not_null(r, "TP 4 from the trace opens the gate");
  cr_assert_eq(r->n_related, 2);
  cr_assert_float_eq(r->saving_us, 20.0, 1e-9);
  an_report_destroy(rep);
}

/* dtype gate: an FP8/FP4 pattern needs one evidence kernel of that format, from its name
 * (matchers dtype_fp8 / dtype_fp4). An INT8 quantize kernel fills the quantize component
 * but proves no FP8 split; an FP8 one does. */
static const char RMS_FP8[] =
    "{\"traceEvents\":[" FK("void vllm::rms_norm_kernel<c10::BFloat16>", 0, 30) "," FK(
        "void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, "
        "c10::Float8_e4m3fn>",
        40, 20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90, 100) "]}";
static const char RMS_INT8[] =
    "{\"traceEvents\":[" FK("void vllm::rms_norm_kernel<c10::BFloat16>", 0, 30) "," FK(
        "void vllm::dynamic_scaled_int8_quant_kernel<c10::BFloat16, float>", 40,
        20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90, 100) "]}";

Test(fuse, dtype_gate_needs_a_kernel_of_the_format, .init = setup, .fini = teardown) {
  an_report *rep = run_vllm(RMS_FP8, sizeof RMS_FP8 - 1);
  const an_fuse_row *r = find_fuse(rep, "vllm-rmsnorm-quant");
  cr_assert_not_null(r, "RMSNorm + FP8 quant is an FP8 split");
  cr_assert_eq(r->n_related, 2);
  cr_assert_float_eq(r->saving_us, 20.0, 1e-9);
  an_report_destroy(rep);
  rep = run_vllm(RMS_INT8, sizeof RMS_INT8 - 1);
  cr_assert_null(find_fuse(rep, "vllm-rmsnorm-quant"), "an INT8 quantize kernel is no FP8 proof");
  an_report_destroy(rep);
}

/* The dtype matchers read whole tokens, and an FP8 enum set to 0 means FP8 off. */
Test(fuse, dtype_matchers_read_tokens_and_off_enums, .init = setup, .fini = teardown) {
  const te_matcher *fp8 = te_rules_matcher(rules, "dtype_fp8");
  cr_assert_not_null(fp8);
  static const char *const yes[] = {
      "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
      "(vllm::Fp8KVCacheDataType)1>",
      "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1"};
  static const char *const no[] = {
      "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, "
      "(vllm::Fp8KVCacheDataType)0>",
      "nvjet_tst_64x8_64x16_2x1_v_bz_TNT"};
  for (size_t i = 0; i < 2; i++) {
    cr_assert(te_matcher_match(fp8, yes[i], strlen(yes[i])), "%s", yes[i]);
    cr_assert_not(te_matcher_match(fp8, no[i], strlen(no[i])), "%s", no[i]);
  }
}

/* The run context's model of TRACE with its launch site's file replaced by `to`. */
static void expect_model_from_frame(const char *to, const char *want) {
  char buf[sizeof TRACE + 64];
  const char *from = "sglang/srt/layers/linear.py";
  const char *at = strstr(TRACE, from);
  cr_assert_not_null(at);
  int n = snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - TRACE), TRACE, to, at + strlen(from));
  cr_assert(n > 0 && (size_t)n < sizeof buf);
  an_run_options o = {0};
  o.formal = (an_input){.name = "q.json", .data = buf, .len = (size_t)n};
  o.min_share_pct = -1;
  o.framework = te_rules_framework_lookup(rules, "sglang");
  o.framework_source = AN_SOURCE_COMMAND_LINE;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  if (!want) {
    cr_assert_null(rep->run.context.model.value, "%s", to);
  } else {
    cr_assert_str_eq(rep->run.context.model.value, want, "%s", to);
    cr_assert_eq(rep->run.context.model.source, AN_SOURCE_PYTHON_FRAMES);
  }
  an_report_destroy(rep);
}

/* Model family from the model file in the launch stacks (the Python frames), when server
 * args do not name the model; a helper file under models/ is not a model. A library that
 * keeps a package per model names it by the package whose file carries its name (review 9:
 * hf_qwen1.5_0.5b_chat_h100's transformers/models/qwen2/modeling_qwen2.py said "unknown");
 * a helper package's file does not. */
Test(pipeline, run_context_model_from_frames, .init = setup, .fini = teardown) {
  expect_model_from_frame("sglang/srt/models/qwen3_moe.py", "qwen3_moe");
  expect_model_from_frame("transformers/models/qwen2/modeling_qwen2.py", "qwen2");
  expect_model_from_frame("transformers/models/qwen2_moe/modeling_qwen2_moe.py", "qwen2_moe");
  expect_model_from_frame("sglang/srt/models/utils.py", NULL);
  expect_model_from_frame("sglang/srt/models/deepseek_common/utils.py", NULL);
  expect_model_from_frame("transformers/models/auto/modeling_auto.py", NULL);
}

/* Model family from kernel families when neither server args nor frames name it, and the
 * model gate it opens: NSA's quantize + indexed K-cache split is a DeepSeek-V3.2 feature.
 * The same FP8 quantize and cache-write kernels on an unknown model make no NSA row; with
 * an NSA indexer kernel in the trace the model is deepseek-v3.2 (from kernel names) and
 * the split is reported. */
#define NSA_SPLIT                                                                    \
  FK("void vllm::scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>", 0, 30) \
  "," FK(                                                                            \
      "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "     \
      "(vllm::Fp8KVCacheDataType)1>",                                                \
      40, 20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90, 100)
static const char NSA_UNKNOWN[] = "{\"traceEvents\":[" NSA_SPLIT "]}";
static const char NSA_DSV32[] = "{\"traceEvents\":[" NSA_SPLIT "," FK(
    "void deep_gemm::sm90_fp8_paged_mqa_logits<128u, 64u>", 200, 10) "]}";

static an_report *run_sglang(const char *data, size_t len) {
  return test_run_trace(rules, "sglang", data, len);
}

Test(fuse, model_gate_and_model_from_kernel_families, .init = setup, .fini = teardown) {
  an_report *rep = run_sglang(NSA_UNKNOWN, sizeof NSA_UNKNOWN - 1);
  cr_assert_null(rep->run.context.model.value);
  cr_assert_null(find_fuse(rep, "nsa-fused-quant-index-k-cache"), "no NSA row on another model");
  an_report_destroy(rep);
  rep = run_sglang(NSA_DSV32, sizeof NSA_DSV32 - 1);
  cr_assert_str_eq(rep->run.context.model.value, "deepseek-v3.2");
  cr_assert_eq(rep->run.context.model.source, AN_SOURCE_KERNEL_FAMILY);
  const an_fuse_row *r = find_fuse(rep, "nsa-fused-quant-index-k-cache");
  cr_assert_not_null(r, "the NSA split on a DeepSeek-V3.2 trace");
  cr_assert_eq(r->n_related, 2);
  an_report_destroy(rep);
}

/* Role-aware de-duplication: FlashInfer's FusedAddRMSNormKernel is the fused add+RMSNorm
 * kernel (active row) and the norm piece of a split all-reduce + RMSNorm (TP 2, CUDA). The
 * two rows hold it in different roles, so neither hides the other. */
static const char AR_FUSED_NORM[] =
    "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2},"
    "\"cuda_runtime_version\":12080,\"traceEvents\":[" FK(
        "void sglang::cross_device_reduce_1stage<__nv_bfloat16, 2>", 0,
        50) "," FK("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>", 60,
                   20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90, 100) "]}";

Test(fuse, dedupe_is_role_aware, .init = setup, .fini = teardown) {
  an_report *rep = run_sglang(AR_FUSED_NORM, sizeof AR_FUSED_NORM - 1);
  const an_fuse_row *ar = find_fuse(rep, "flashinfer-allreduce-fusion");
  const an_fuse_row *fa = find_fuse(rep, "fused-add-rmsnorm");
  cr_assert_not_null(ar, "split all-reduce + RMSNorm");
  cr_assert_eq(ar->match, AN_FUSION_SPLIT);
  cr_assert_not_null(fa, "the fused add+RMSNorm kernel is not hidden by the split row");
  cr_assert_eq(fa->match, AN_FUSION_DIRECT);
  cr_assert_float_eq(fa->saving_us, 0.0, 1e-9, "an active fused path saves nothing more");
  /* review 5 defect 7: one kernel, one row. The in-use row holds its fused kernel; the
   * split row counts only the all-reduce and says which row counts the norm */
  cr_assert_float_eq(fa->related_us, 20.0, 1e-9);
  cr_assert_float_eq(ar->related_us, 50.0, 1e-9, "the norm's 20 us are the in-use row's");
  cr_assert_float_eq(ar->shared_us, 20.0, 1e-9);
  bool cited = false;
  for (size_t k = 0; k < ar->n_evidence; k++)
    if (strstr(ar->evidence[k].kernel, "FusedAddRMSNorm"))
      cited =
          ar->evidence[k].counted_in && !strcmp(ar->evidence[k].counted_in, "fused-add-rmsnorm");
  cr_assert(cited, "the split row's evidence names the row that counts the norm");
  an_report_destroy(rep);
}

/* Review 15 defect 1: a fuse row's saving and its basis agree with the Related time the
 * row shows, whichever row counts a shared piece. The largest piece of a split the row
 * counts is its own: saving = related less it; another row's: every piece the row counts
 * goes (saving = related); a smaller piece another row's: saving = related + shared less
 * the largest. */
static double kernel_us(const an_stage_report *st, const char *name) {
  for (size_t k = 0; k < st->n_kernels; k++)
    if (!strcmp(st->kernels[k].name, name)) return st->kernels[k].total_us;
  return -1;
}

static void assert_saving_basis_agrees(const an_report *rep) {
  for (size_t s = 0; s < rep->n_stages; s++)
    for (size_t i = 0; i < rep->stages[s].n_fuse; i++) {
      const an_fuse_row *r = &rep->stages[s].fuse[i];
      double largest = 0;
      for (size_t k = 0; k < r->n_related; k++) {
        double us = kernel_us(&rep->stages[s], r->related[k]);
        if (us > largest) largest = us;
      }
      double want = r->saving_basis == AN_SAVING_PASSES ? r->related_us - largest
                    : r->saving_basis == AN_SAVING_PASSES_LARGEST_ELSEWHERE ? r->related_us
                    : r->saving_basis == AN_SAVING_PASSES_SHARED
                        ? r->related_us + r->shared_us - largest
                        : r->saving_us;
      cr_assert_float_eq(r->saving_us, want, 1e-9, "%s: saving %f, basis %s wants %f",
                         r->pattern_id, r->saving_us, rp_saving_basis(r->saving_basis), want);
      cr_assert((r->saving_largest_in != NULL) ==
                    (r->saving_basis == AN_SAVING_PASSES_LARGEST_ELSEWHERE ||
                     r->saving_basis == AN_SAVING_PASSES_SHARED),
                "%s names the row that counts its shared piece", r->pattern_id);
    }
}

/* vLLM on ROCm under torch.compile: ck_tile's RMSNorm (the fused add + RMSNorm, in use)
 * then the pad Inductor emits for the MoE kernel's hidden size (fuse_act_padding's split) */
static const char NORM_PAD_ROCM[] = "{\"hip_runtime_version\":60342134,\"traceEvents\":[" FK(
    "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_"
    "18Rmsnorm2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE1ELNS_"
    "23Rmsnorm2dFusedQuantEnumE0EEEEEEE",
    0,
    30) "," FK("triton_poi_fused_constant_pad_nd_moe_forward_0", 40,
               10) "," FK("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64", 60, 100) "]}";

Test(fuse, saving_basis_agrees_with_related_time, .init = setup, .fini = teardown) {
  an_report *rep = run_vllm(NORM_PAD_ROCM, sizeof NORM_PAD_ROCM - 1);
  const an_fuse_row *pad = find_fuse(rep, "vllm-add-rmsnorm-pad");
  cr_assert_not_null(pad, "the pad after the norm is fuse_act_padding's split");
  cr_assert_not_null(find_fuse(rep, "vllm-fused-add-rmsnorm"), "the norm is the in-use row's");
  cr_assert_float_eq(pad->related_us, 10.0, 1e-9, "the norm's 30 us are the in-use row's");
  cr_assert_float_eq(pad->saving_us, 10.0, 1e-9, "the pad goes, the norm's pass stays");
  cr_assert_eq(pad->saving_basis, AN_SAVING_PASSES_LARGEST_ELSEWHERE);
  cr_assert_str_eq(pad->saving_largest_in, "vllm-fused-add-rmsnorm");
  assert_saving_basis_agrees(rep);
  an_report_destroy(rep);
  /* the all-reduce (50 us) is the largest piece; the norm (20 us) the in-use row's */
  rep = run_sglang(AR_FUSED_NORM, sizeof AR_FUSED_NORM - 1);
  const an_fuse_row *ar = find_fuse(rep, "flashinfer-allreduce-fusion");
  cr_assert_not_null(ar);
  cr_assert_float_eq(ar->saving_us, 20.0, 1e-9, "the norm's pass goes into the all-reduce");
  cr_assert_eq(ar->saving_basis, AN_SAVING_PASSES_SHARED);
  assert_saving_basis_agrees(rep);
  an_report_destroy(rep);
  /* no shared piece: the plain basis */
  rep = run_vllm(ROPE_KV_ROCM, sizeof ROPE_KV_ROCM - 1);
  cr_assert_eq(find_fuse(rep, "vllm-rope-kvcache")->saving_basis, AN_SAVING_PASSES);
  assert_saving_basis_agrees(rep);
  an_report_destroy(rep);
}

/* rules explain --pattern says when de-duplication dropped a matched pattern, and which
 * reported row did it (here the wider RoPE + reshape + KV-cache pattern subsumes the
 * RoPE + KV-cache store one). */
static const char ROPE_STORE[] = "{\"traceEvents\":[" FK(
    "void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 128u, 8u, 16u, "
    "__nv_bfloat16, long>",
    0, 30) "," FK("set_kv_buffer_kernel", 40, 20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90,
                                                         100) "]}";

Test(fuse, explain_names_the_dedupe_drop, .init = setup, .fini = teardown) {
  an_report *rep = run_sglang(ROPE_STORE, sizeof ROPE_STORE - 1);
  cr_assert_not_null(find_fuse(rep, "fused-qk-rope-reshape-kv-cache"));
  cr_assert_null(find_fuse(rep, "fused-rope-kv-cache-store"));
  const te_fusion_pattern *p = NULL;
  for (size_t i = 0; i < te_rules_fusion_count(rules) && !p; i++)
    if (!strcmp(te_rules_fusion(rules, i)->id, "fused-rope-kv-cache-store"))
      p = te_rules_fusion(rules, i);
  cr_assert_not_null(p);
  const an_stage_report *st = NULL;
  for (size_t s = 0; s < rep->n_stages && !st; s++)
    if (rep->stages[s].has_kernels) st = &rep->stages[s];
  cr_assert_not_null(st);
  an_fuse_explain x;
  cr_assert(an_fuse_explain_stage(rules, rep, st, p, &x));
  cr_assert(x.dtype_ok && x.dtype_checked && x.model_ok);
  cr_assert(x.dropped, "matched, but no row");
  cr_assert_str_eq(x.dropped_by, "fused-qk-rope-reshape-kv-cache");
  an_fuse_explain_free(&x);
  an_report_destroy(rep);
}

/* Minimum-architecture gate (min_arch) and the platform from the device name: FlashInfer's
 * all-reduce fusion needs compute capability 9.0 on CUDA. The same split on an A100 (8.0,
 * no runtime version member: the platform comes from "NVIDIA ...") makes no row; on an
 * H100 (9.0) it does. */
#define AR_ON_GPU(dev)                                                                  \
  "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2},"            \
  "\"deviceProperties\":[" dev "],\"traceEvents\":[" FK(                                \
      "void sglang::cross_device_reduce_1stage<__nv_bfloat16, 2>", 0,                   \
      50) "," FK("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>", 60, \
                 20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90, 100) "]}"
static const char AR_A100[] = AR_ON_GPU(
    "{\"id\":0,\"name\":\"NVIDIA A100-SXM4-80GB\",\"computeMajor\":8,\"computeMinor\":0}");
static const char AR_H100[] = AR_ON_GPU(
    "{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"computeMajor\":9,\"computeMinor\":0}");

Test(fuse, min_arch_gate_and_platform_from_gpu_name, .init = setup, .fini = teardown) {
  an_report *rep = run_sglang(AR_A100, sizeof AR_A100 - 1);
  cr_assert_eq(rep->run.context.platform.value, AN_PLATFORM_CUDA, "platform from the GPU name");
  cr_assert_eq(rep->run.context.arch.value, 80);
  cr_assert_null(find_fuse(rep, "flashinfer-allreduce-fusion"), "below the minimum arch");
  an_report_destroy(rep);
  rep = run_sglang(AR_H100, sizeof AR_H100 - 1);
  cr_assert_eq(rep->run.context.arch.value, 90);
  cr_assert_not_null(find_fuse(rep, "flashinfer-allreduce-fusion"));
  an_report_destroy(rep);
}

/* Of two patterns with the same priority and components that claim the same kernels in
 * the same roles, the one stating more gates (here a platform) is the more specific and
 * wins, although the other comes first in the registry. */
static const char SPEC_PACK[] =
    "pack: spec\nversion: 1\nfusion_patterns:\n"
    "  - {id: spec-plain, name: plain, framework: sglang, candidate_paths: [a.py], priority: 99,\n"
    "     split_groups: [{keywords: [rotary]}, {keywords: [set_kv_buffer]}],\n"
    "     evidence: [rope, kv_write]}\n"
    "  - {id: spec-cuda, name: cuda, framework: sglang, candidate_paths: [a.py], priority: 99,\n"
    "     split_groups: [{keywords: [rotary]}, {keywords: [set_kv_buffer]}],\n"
    "     evidence: [rope, kv_write], platform: cuda}\n";
static const char ROPE_STORE_CUDA[] = "{\"cuda_runtime_version\":12080,\"traceEvents\":[" FK(
    "void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 128u, 8u, 16u, "
    "__nv_bfloat16, long>",
    0, 30) "," FK("set_kv_buffer_kernel", 40, 20) "," FK("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 90,
                                                         100) "]}";

Test(fuse, dedupe_prefers_the_more_specific_pattern, .init = setup, .fini = teardown) {
  te_rules *custom = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_path(custom, TRIAGE_SOURCE_DIR "/rules", d), TE_OK);
  cr_assert_eq(te_rules_load_buffer(custom, "spec.yaml", SPEC_PACK, strlen(SPEC_PACK), d), TE_OK);
  cr_assert_eq(te_rules_finalize(custom, d), TE_OK);
  te_diags_destroy(d);
  te_rules *saved = rules;
  rules = custom;
  an_report *rep = run_sglang(ROPE_STORE_CUDA, sizeof ROPE_STORE_CUDA - 1);
  cr_assert_not_null(find_fuse(rep, "spec-cuda"), "the pattern with a platform gate wins");
  cr_assert_null(find_fuse(rep, "spec-plain"), "same kernels, same roles: dropped");
  an_report_destroy(rep);
  rules = saved;
  te_rules_destroy(custom);
}

/* ------------------------------------------------------------------ id index */

/* CPU ops whose External ids repeat, skip values and come out of order, so the index has
 * ranges of 0, 1 and several entries. */
static char *ids_trace(size_t n, size_t *len) {
  size_t cap = n * 160 + 64, at = 0;
  char *s = malloc(cap);
  cr_assert_not_null(s);
  at += (size_t)snprintf(s + at, cap - at, "{\"traceEvents\":[");
  for (size_t i = 0; i < n; i++) {
    long ext = (long)((i * 7919u) % (n / 2)) * 3; /* every id twice or so, multiples of 3 */
    at += (size_t)snprintf(s + at, cap - at,
                           "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,"
                           "\"tid\":1,\"ts\":%zu,\"dur\":1,\"args\":{\"External id\":%ld}}",
                           i ? "," : "", i, ext);
  }
  at += (size_t)snprintf(s + at, cap - at, "]}");
  *len = at;
  return s;
}

Test(id_index, near_search_finds_the_plain_range_from_any_hint) {
  size_t len, n = 400;
  char *json = ids_trace(n, &len);
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("ids.json", json, len, NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_id_index x;
  cr_assert_eq(an_id_index_build(&x, t, TR_KIND_CPU_OP, AN_ID_EXTERNAL), 0);
  cr_assert_eq(x.n, n);
  size_t hints[] = {0, 1, 7, n / 3, n / 2, n - 1, n, n + 5};
  size_t checked = 0, nonempty = 0;
  for (int64_t id = -2; id <= (int64_t)(n / 2) * 3 + 2; id++) {
    size_t lo, hi;
    an_id_index_range(&x, id, &lo, &hi);
    nonempty += lo < hi;
    for (size_t h = 0; h < sizeof hints / sizeof *hints; h++) {
      size_t hint = hints[h], nlo = 99999, nhi = 99999;
      an_id_index_range_near(&x, id, &hint, &nlo, &nhi);
      cr_assert_eq(nlo, lo, "id %lld from hint %zu: start %zu, want %zu", (long long)id, hints[h],
                   nlo, lo);
      cr_assert_eq(nhi, hi, "id %lld from hint %zu: end %zu, want %zu", (long long)id, hints[h],
                   nhi, hi);
      cr_assert_eq(hint, lo, "the hint moves to the range's start");
      checked++;
    }
    for (size_t i = lo; i < hi; i++)
      cr_assert_eq(tr_event_external_id(t, an_id_index_event(&x, i)), id);
  }
  /* a caller's chain of hints, ids ascending then descending */
  size_t hint = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t k = 0; k <= (int64_t)(n / 2) * 3; k++) {
      int64_t id = pass ? (int64_t)(n / 2) * 3 - k : k;
      size_t lo, hi, nlo, nhi;
      an_id_index_range(&x, id, &lo, &hi);
      an_id_index_range_near(&x, id, &hint, &nlo, &nhi);
      cr_assert(nlo == lo && nhi == hi, "chained id %lld", (long long)id);
    }
  cr_assert_gt(nonempty, n / 4, "most ids in range are present");
  cr_assert_gt(checked, 0);
  an_id_index_free(&x);
  tr_trace_destroy(t);
  free(json);
}

/* The trace's ops by External id keep the ops whose id a kernel carries (its own, or its
 * correlation's through a launch that has both), in id order; the rest are left out. With a
 * kernel id far off, the kernels' ids are searched rather than marked in bits. */
static void check_trace_ids(bool spread) {
  const char *far =
      ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
      "\"ts\":7,\"dur\":1,\"args\":{\"External id\":1000000}}";
  const char *doc0 =
      "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
      "\"dur\":1,\"args\":{\"External id\":3}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,"
      "\"dur\":1,\"args\":{\"External id\":1}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":3,"
      "\"dur\":1,\"args\":{\"External id\":2}},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
      "\"tid\":1,\"ts\":4,\"dur\":1,\"args\":{\"External id\":3,\"correlation\":9}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5,"
      "\"dur\":1,\"args\":{\"External id\":2,\"correlation\":8}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":6,"
      "\"dur\":1,\"args\":{\"correlation\":9}}";
  char doc[2048];
  snprintf(doc, sizeof doc, "%s%s]", doc0, spread ? far : "");
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("ids.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_trace_ids ids;
  cr_assert_eq(an_trace_ids_build(&ids, t), 0);
  cr_assert_eq(ids.ops_by_ext.n, 2);
  cr_expect_str_eq(tr_str_get(t, an_id_index_event(&ids.ops_by_ext, 0)->name), "c");
  cr_expect_str_eq(tr_str_get(t, an_id_index_event(&ids.ops_by_ext, 1)->name), "a");
  size_t lo, hi;
  an_id_index_range(&ids.ops_by_ext, 1, &lo, &hi);
  cr_expect_eq(lo, hi, "no kernel carries id 1");
  cr_expect_eq(ids.launches_by_corr.n, 1);
  an_trace_ids_free(&ids);
  tr_trace_destroy(t);
}

Test(id_index, trace_ids_keep_the_ops_kernels_ask) {
  check_trace_ids(false);
  check_trace_ids(true);
}

/* ---- diff: kernels renamed across the runs (issue 30, review-1 §16) */

/* A one-stage side of kernels (name, category, us, op). */
static an_diff_side_stage renamed_stage(an_diff_kernel *k, size_t n) {
  return (an_diff_side_stage){.stage = "decode", .n_kernels = n, .kernels = k};
}

Test(analysis, diff_pairs_renamed_kernels_by_category_and_cpu_op) {
  te_rules *r = test_default_rules();
  an_diff_kernel b[] = {{"cutlass_80_gemm_a", "gemm", 100, 100, "aten::mm", NULL, 0, 0},
                        {"cutlass_80_gemm_b", "gemm", 50, 50, "aten::mm", NULL, 0, 0},
                        {"ampere_bmm", "gemm", 40, 40, "aten::bmm", NULL, 0, 0},
                        {"rope_old", "rope", 10, 10, "cudaLaunchKernel", NULL, 0, 0},
                        {"same_kernel", "norm", 20, 20, "aten::rms_norm", NULL, 0, 0}};
  an_diff_kernel a[] = {{"volta_sgemm_x", "gemm", 300, 300, "aten::mm", NULL, 0, 0},
                        {"volta_bmm", "gemm", 60, 60, NULL, NULL, 0, 0}, /* graph replay: no op */
                        {"triton_new", "elementwise", 9, 9, NULL, NULL, 0, 0},
                        {"same_kernel", "norm", 20, 20, "aten::rms_norm", NULL, 0, 0}};
  an_diff_side_stage sb = renamed_stage(b, 5), sa = renamed_stage(a, 4);
  /* overlap rows: the renamed GEMM's row only after, the rope row only before */
  an_diff_kernel ob[] = {{"rope_old", "memory", 10, 10, NULL, NULL, 0, 0}};
  an_diff_kernel oa[] = {{"volta_sgemm_x", "compute", 300, 300, NULL, NULL, 0, 0}};
  sb.n_overlaps = 1, sb.overlaps = ob;
  sa.n_overlaps = 1, sa.overlaps = oa;
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = &sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = &sa};
  an_diff_result res;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  const an_diff_stage *s = &res.report.stages[0];
  /* aten::mm pairs with aten::mm; the bmm kernel pairs with the graph-replayed leftover */
  cr_assert_eq(s->n_renamed, 2);
  const an_diff_renamed *mm = &s->renamed[0], *bmm = &s->renamed[1];
  cr_assert_str_eq(mm->cpu_op, "aten::mm");
  cr_assert_eq(mm->n_before, 2);
  cr_assert_eq(mm->n_after, 1);
  cr_assert_str_eq(mm->before_names[0], "cutlass_80_gemm_a");
  cr_assert_float_eq(mm->row.before_us, 150, 1e-9);
  cr_assert_float_eq(mm->row.after_us, 300, 1e-9);
  cr_assert_eq(mm->row.change, AN_DIFF_SLOWER);
  cr_assert_str_eq(bmm->cpu_op, "aten::bmm");
  cr_assert_str_eq(bmm->after_names[0], "volta_bmm");
  /* other categories stay new / removed; a same-name kernel is a kernel row */
  cr_assert_eq(s->n_kernels, 3);
  for (size_t i = 0; i < s->n_kernels; i++) {
    const char *n = s->kernels[i].name;
    an_diff_change c = s->kernels[i].change;
    if (strcmp(n, "rope_old") == 0)
      cr_assert_eq(c, AN_DIFF_REMOVED);
    else if (strcmp(n, "triton_new") == 0)
      cr_assert_eq(c, AN_DIFF_NEW);
    else
      cr_assert_str_eq(n, "same_kernel");
  }
  /* an overlap row whose kernel a renamed group pairs points at the group; a removed
   * kernel's row stays removed */
  cr_assert_eq(s->n_overlaps, 2);
  for (size_t i = 0; i < s->n_overlaps; i++)
    if (strcmp(s->overlaps[i].name, "volta_sgemm_x") == 0)
      cr_assert_eq(s->overlaps[i].renamed_group, 1, "group #1 (aten::mm)");
    else
      cr_assert_eq(s->overlaps[i].renamed_group, 0);
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

/* Session 9 ranks gap 4 (the hta pair's SendRecv: transfer 7.75 -> 20.89 ms/step while its
 * wait fell 14.02 -> 5.66, total +21.9 % under the noise floor, read "within noise"): a
 * collective's transfer is judged on its own, so a wait that fell does not hide a transfer
 * that rose past the noise; a wait move with a steady transfer stays a wait change, and a
 * move under the noise in both stays within noise. */
Test(analysis, diff_a_falling_wait_does_not_hide_a_slower_transfer) {
  te_rules *r = test_default_rules();
  /* us: total 20000 with 14000 wait (transfer 6000) -> 20500 with 6000 (transfer 14500) */
  /* ReduceScatter: total 10000 with 6000 wait (transfer 4000) -> 9900 with 2000 (transfer
   * 7900): the wait's fall is the larger move, the total -1 % is under the floor, and the
   * transfer +97.5 % beyond it still names the row (review 12: one rule under the floor) */
  an_diff_kernel b[] = {
      {"ncclKernel_SendRecv", "communication", 20000, 20000, NULL, NULL, 0, 0},
      {"ncclKernel_AllReduce", "communication", 10000, 10000, NULL, NULL, 0, 0},
      {"ncclKernel_AllGather", "communication", 5000, 5000, NULL, NULL, 0, 0},
      {"ncclKernel_ReduceScatter", "communication", 10000, 10000, NULL, NULL, 0, 0}};
  an_diff_kernel a[] = {
      {"ncclKernel_SendRecv", "communication", 20500, 20500, NULL, NULL, 0, 0},
      {"ncclKernel_AllReduce", "communication", 14000, 14000, NULL, NULL, 0, 0},
      {"ncclKernel_AllGather", "communication", 5050, 5050, NULL, NULL, 0, 0},
      {"ncclKernel_ReduceScatter", "communication", 9900, 9900, NULL, NULL, 0, 0}};
  an_diff_wait wb[] = {{"ncclKernel_SendRecv", 14000},
                       {"ncclKernel_AllReduce", 2000},
                       {"ncclKernel_AllGather", 1000},
                       {"ncclKernel_ReduceScatter", 6000}};
  an_diff_wait wa[] = {{"ncclKernel_SendRecv", 6000},
                       {"ncclKernel_AllReduce", 6000},
                       {"ncclKernel_AllGather", 1040},
                       {"ncclKernel_ReduceScatter", 2000}};
  an_diff_side_stage sb = renamed_stage(b, 4), sa = renamed_stage(a, 4);
  sb.n_waits = sa.n_waits = 4;
  sb.waits = wb, sa.waits = wa;
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = &sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = &sa};
  an_diff_result res;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  const an_diff_stage *s = &res.report.stages[0];
  cr_assert_eq(s->n_kernels, 4);
  for (size_t i = 0; i < s->n_kernels; i++) {
    const an_diff_row *k = &s->kernels[i];
    cr_assert(k->has_wait, "%s", k->name);
    bool sendrecv = !strcmp(k->name, "ncclKernel_SendRecv");
    if (sendrecv || !strcmp(k->name, "ncclKernel_ReduceScatter")) {
      cr_assert_eq(k->change, AN_DIFF_SLOWER, "%s: its transfer moved beyond the floor", k->name);
      /* the total is under the floor: the row says its transfer moved, and by how much */
      cr_assert_eq(k->basis, AN_DIFF_BY_TRANSFER, "%s", k->name);
      cr_assert_float_eq(k->part_pct, sendrecv ? 8500.0 / 6000 * 100 : 3900.0 / 4000 * 100, 1e-9);
    } else if (!strcmp(k->name, "ncclKernel_AllReduce")) {
      cr_assert_eq(k->change, AN_DIFF_WAIT, "the wait moved, the transfer stayed");
      cr_assert_eq(k->basis, AN_DIFF_BY_TOTAL);
    } else {
      cr_assert_eq(k->change, AN_DIFF_SAME);
      cr_assert_eq(k->basis, AN_DIFF_BY_TOTAL);
    }
  }
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

/* The diff of one stage of each side, into res. */
static void diff_one_stage(an_diff_side_stage *sb, an_diff_side_stage *sa, const te_rules *r,
                           an_diff_result *res) {
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = sa};
  cr_assert_eq(an_diff_build(&before, &after, r, res), AN_OK);
}

/* Review 10 (the hta pair: a 59.8 % floor from the test run's 2x step spread; its
 * elementwise category +57.5 % read "within noise" while its kernels at +60-76 % read
 * "slower"): one noise rule, a category moves as its kernels do. The after run's steps of
 * 60 and 140 us set a floor of 92.4 %. elementwise, +70 % (under it), is slower: add and
 * mul, +100 % each, carry 2000 of its 2800 us; memory, +82 %, is within noise: its one
 * kernel beyond the floor carries 1000 of 9000 us; norm, +90 %, is within noise: no kernel
 * of it moved beyond. The floor's run and range are kept for its sentence. */
Test(analysis, diff_a_category_moves_as_its_kernels_do) {
  te_rules *r = test_default_rules();
  static const struct {
    const char *name, *category;
    double before, after;
  } rows[] = {{"add", "elementwise", 1000, 2000}, {"mul", "elementwise", 1000, 2000},
              {"neg", "elementwise", 2000, 2800}, {"copy_a", "memory", 1000, 2000},
              {"copy_b", "memory", 10000, 18000}, {"rms_a", "norm", 1000, 1900},
              {"rms_b", "norm", 1000, 1900}};
  an_diff_kernel b[7], a[7];
  for (size_t i = 0; i < 7; i++) {
    b[i] = (an_diff_kernel){
        rows[i].name, rows[i].category, rows[i].before, rows[i].before, NULL, NULL, 0, 0};
    a[i] = (an_diff_kernel){
        rows[i].name, rows[i].category, rows[i].after, rows[i].after, NULL, NULL, 0, 0};
  }
  double b_steps[] = {100, 100, 100}, a_steps[] = {60, 140, 60, 140};
  an_diff_side_stage sb = renamed_stage(b, 7), sa = renamed_stage(a, 7);
  sb.n_step_us = 3, sb.step_us = b_steps;
  sa.n_step_us = 4, sa.step_us = a_steps;
  an_diff_result res;
  diff_one_stage(&sb, &sa, r, &res);
  const an_diff_stage *s = &res.report.stages[0];
  cr_assert_eq(s->noise_source, AN_NOISE_STEPS);
  cr_assert_float_eq(s->noise_pct, 92.376, 1e-3);
  cr_assert(s->noise_after && s->noise_n == 4);
  cr_assert_float_eq(s->noise_lo_us, 60, 1e-9);
  cr_assert_float_eq(s->noise_hi_us, 140, 1e-9);
  for (size_t i = 0; i < s->n_kernels; i++) {
    const an_diff_row *k = &s->kernels[i];
    bool beyond = !strcmp(k->name, "add") || !strcmp(k->name, "mul") || !strcmp(k->name, "copy_a");
    cr_assert_eq(k->change, beyond ? AN_DIFF_SLOWER : AN_DIFF_SAME, "%s %+.0f %%", k->name,
                 k->delta_pct);
  }
  cr_assert_eq(s->n_categories, 3);
  for (size_t i = 0; i < s->n_categories; i++) {
    const an_diff_row *c = &s->categories[i];
    bool slower = !strcmp(c->name, "elementwise");
    cr_assert_eq(c->change, slower ? AN_DIFF_SLOWER : AN_DIFF_SAME, "%s %+.0f %%", c->name,
                 c->delta_pct);
    cr_assert_eq(i == 0, slower, "changed categories sort first");
    /* under the floor, it says by what: add and mul carry 2000 of its 2800 us */
    cr_assert_eq(c->basis, slower ? AN_DIFF_BY_KERNELS : AN_DIFF_BY_TOTAL, "%s", c->name);
    if (slower) cr_assert_float_eq(c->part_pct, 2000.0 / 2800 * 100, 1e-9);
  }
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

/* A run's number format is its matrix products' by roofline time (rows of other families
 * or without a format do not count), so a run that moved most GEMM time to fp8 states fp8. */
Test(analysis, diff_run_dtype_is_the_gemm_time_weighted_format) {
  te_rules *r = test_default_rules();
  an_diff_kernel b[] = {{"gemm_a", "gemm", 100, 100, "aten::mm", "bf16", 90, 0},
                        {"gemm_b", "gemm", 50, 50, "aten::mm", "bf16", 40, 0},
                        {"attn", "attention", 400, 400, NULL, NULL, 0, 0}};
  an_diff_kernel a[] = {{"gemm_a8", "gemm", 60, 60, "aten::_scaled_mm", "fp8", 60, 0},
                        {"gemm_b8", "gemm", 30, 30, "aten::_scaled_mm", "fp8", 30, 0},
                        {"gemm_c", "gemm", 70, 70, "aten::mm", "bf16", 70, 0}};
  an_diff_side_stage sb = renamed_stage(b, 3), sa = renamed_stage(a, 3);
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = &sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = &sa};
  an_diff_result res;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  cr_assert_str_eq(res.report.inputs[0].gemm_dtype, "bf16");
  cr_assert_float_eq(res.report.inputs[0].gemm_dtype_pct, 100, 1e-9);
  cr_assert_str_eq(res.report.inputs[1].gemm_dtype, "fp8");
  cr_assert_float_eq(res.report.inputs[1].gemm_dtype_pct, 90.0 / 160.0 * 100, 1e-9);
  an_diff_result_free(&res);
  sa = renamed_stage(b + 2, 1); /* no GEMM with a format: unknown, never "differs" */
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  cr_assert_null(res.report.inputs[1].gemm_dtype);
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

Test(analysis, diff_never_pairs_two_known_ops) {
  te_rules *r = test_default_rules();
  an_diff_kernel b[] = {{"k_mm", "gemm", 100, 100, "aten::mm", NULL, 0, 0}};
  an_diff_kernel a[] = {{"k_bmm", "gemm", 100, 100, "aten::bmm", NULL, 0, 0}};
  an_diff_side_stage sb = renamed_stage(b, 1), sa = renamed_stage(a, 1);
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = &sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = &sa};
  an_diff_result res;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  cr_assert_eq(res.report.stages[0].n_renamed, 0);
  cr_assert_eq(res.report.stages[0].n_kernels, 2);
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

Test(analysis, template_split_reads_top_level_arguments) {
  an_template t;
  const char *n =
      "void split_embedding_codegen_forward_unweighted_kernel<float, float, float, "
      "long, 2ul>";
  cr_assert(an_template_split(n, &t));
  cr_assert_eq(t.stem_len, strlen("void split_embedding_codegen_forward_unweighted_kernel"));
  cr_assert_eq(t.n_args, 5);
  cr_assert_eq(t.args[4].len, 3);
  cr_assert_eq(strncmp(t.args[4].text, "2ul", 3), 0);
  cr_assert_str_eq(t.tail, "");
  /* nested lists and a lambda's parentheses stay inside one argument */
  const char *e =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
      "float>, at::detail::Array<char*, 3> >";
  cr_assert(an_template_split(e, &t));
  cr_assert_eq(t.n_args, 3);
  cr_assert_not(an_template_split("ampere_sgemm_128x64_nn", &t));
  cr_assert_not(an_template_split("void k<float, 2ul", &t)); /* unbalanced */
  char many[4 * (AN_TEMPLATE_ARGS_MAX + 1) + 8] = "k<";
  for (unsigned i = 0; i <= AN_TEMPLATE_ARGS_MAX; i++) strcat(many, i ? ", 1" : "1");
  strcat(many, ">");
  cr_assert_not(an_template_split(many, &t)); /* one past AN_TEMPLATE_ARGS_MAX: not split */
  size_t len = strlen(many);                  /* drop the last ", 1": at the limit, split */
  many[len - 4] = '>', many[len - 3] = '\0';
  cr_assert(an_template_split(many, &t));
  cr_assert_eq(t.n_args, AN_TEMPLATE_ARGS_MAX);
  cr_assert_eq(t.args[AN_TEMPLATE_ARGS_MAX - 1].len, 1);
}

/* The embedding (TBE) kernels of HTA's control/test pair: their table width went 2ul ->
 * 5ul while the GPU changed; lambda kernels and shared stems never pair. */
Test(analysis, diff_names_kernels_whose_template_arguments_changed) {
  te_rules *r = test_default_rules();
  an_diff_kernel b[] = {
      {"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>",
       "memory", 15226, 15226, "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function",
       NULL, 0, 0},
      {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<"
       "float, float, float, 2ul>",
       "memory", 36180, 36180, NULL, NULL, 0, 0},
      {"void at::native::index_elementwise_kernel<128, 4, at::native::index_copy_kernel_impl<"
       "at::native::OpaqueType<8> >(at::TensorIterator&, long, long, long)::{lambda(int)#1}>",
       "memory", 40, 40, NULL, NULL, 0, 0},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>", "gemm", 500, 500,
       "aten::mm", NULL, 0, 0},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align1>", "gemm", 400,
       400, "aten::mm", NULL, 0, 0}};
  an_diff_kernel a[] = {
      {"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 5ul>",
       "memory", 27012, 27012, "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function",
       NULL, 0, 0},
      {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<"
       "float, float, float, 5ul>",
       "memory", 60134, 60134, NULL, NULL, 0, 0},
      {"void at::native::index_elementwise_kernel<128, 4, at::native::index_copy_kernel_impl<"
       "at::native::OpaqueType<4> >(at::TensorIterator&, long, long, long)::{lambda(int)#1}>",
       "memory", 30, 30, NULL, NULL, 0, 0},
      {"void cutlass::Kernel<cutlass_70_tensorop_s884gemm_64x64_32x2_nn_align1>", "gemm", 900, 900,
       "aten::mm", NULL, 0, 0}};
  an_diff_side_stage sb = renamed_stage(b, 5), sa = renamed_stage(a, 4);
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = &sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = &sa};
  an_diff_result res;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  const an_diff_stage *s = &res.report.stages[0];
  /* the two TBE kernels only: the lambda pair differs in a functor, the cutlass stem is
   * shared by two kernels before */
  cr_assert_eq(s->n_retemplated, 2);
  cr_assert_str_eq(s->retemplated[0].before_args, "2ul"); /* backward: the larger delta */
  cr_assert_str_eq(s->retemplated[0].after_args, "5ul");
  cr_assert(strstr(s->retemplated[0].after_name, "cta_per_row_1<") != NULL);
  cr_assert_float_eq(s->retemplated[0].row.delta_us, 60134 - 36180, 1e-6);
  cr_assert(strstr(s->retemplated[1].before_name, "forward_unweighted_kernel<") != NULL);
  rp_fact_change ch[RP_FACT_CHANGES];
  size_t n = rp_diff_fact_changes(&res.report, ch);
  cr_assert_eq(n, 1);
  cr_assert_str_eq(ch[0].what, "kernel template arguments");
  cr_assert_str_eq(ch[0].before, "2ul");
  cr_assert(strstr(ch[0].after,
                   "5ul in split_embedding_backward_codegen_rowwise_adagrad_"
                   "unweighted_kernel_cta_per_row_1 and 1 more kernel, +") == ch[0].after,
            "%s", ch[0].after);
  /* the figure is these kernels' own: a renamed row may group them with others */
  cr_assert(strstr(ch[0].after, " in these kernels alone"), "%s", ch[0].after);
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

/* HTA's control/test pair: the test run replays graphs (torch.compile's CUDA-graph trees)
 * and copies each graph's inputs in and outputs out under the op that launches it; those
 * DtoD copies are tied to the graph change, the unrelated GEMM delta is not. */
Test(analysis, diff_ties_graph_copies_to_the_graph_change) {
  te_rules *r = test_default_rules();
  an_diff_kernel b[] = {{"Memcpy DtoD (Device -> Device)", "memory", 2735, 2735, NULL, NULL, 0, 0},
                        {"volta_sgemm_128x32_nt", "gemm", 5000, 5000, "aten::mm", NULL, 0, 0}};
  an_diff_kernel a[] = {
      {"Memcpy DtoD (Device -> Device)", "memory", 92932, 92932, NULL, NULL, 0, 89500},
      {"volta_sgemm_128x32_nt", "gemm", 9000, 9000, "aten::mm", NULL, 0, 0}};
  an_diff_side_stage sb = renamed_stage(b, 2), sa = renamed_stage(a, 2);
  sb.time = (an_diff_time){true, 200000, 100000, 100000, 100000, 0};
  sa.time = (an_diff_time){true, 200000, 100000, 100000, 100000, 28000};
  an_diff_side before = {.label = "b", .n_stages = 1, .stages = &sb};
  an_diff_side after = {.label = "a", .n_stages = 1, .stages = &sa};
  an_diff_result res;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  const an_diff_stage *s = &res.report.stages[0];
  const an_diff_row *dtod = NULL;
  for (size_t i = 0; i < s->n_kernels; i++)
    if (!strcmp(s->kernels[i].name, "Memcpy DtoD (Device -> Device)")) dtod = &s->kernels[i];
  cr_assert_not_null(dtod);
  cr_assert_float_eq(dtod->after_staged_us, 89500, 1e-6);
  cr_assert_float_eq(dtod->before_staged_us, 0, 1e-9);
  /* the total is the analysis's fact, the renderer words it */
  cr_assert_eq(res.report.graph_staged_top, dtod);
  cr_assert_float_eq(res.report.graph_staged_delta_us, 89500, 1e-6);
  cr_assert_not(res.report.graph_staged_per_step, "no counted steps: the runs' totals");
  rp_fact_change ch[RP_FACT_CHANGES];
  size_t n = rp_diff_fact_changes(&res.report, ch);
  cr_assert_eq(n, 1);
  cr_assert_str_eq(ch[0].what, "CUDA/HIP graphs");
  cr_assert(strstr(ch[0].after,
                   "with them +89.500 ms of kernels launched inside the ops that "
                   "replay the graphs") != NULL,
            "%s", ch[0].after);
  cr_assert(strstr(ch[0].after, "mostly Memcpy DtoD") != NULL);
  an_diff_result_free(&res);
  /* no staged copy: the graph change stands alone */
  a[0].staged_us = 0;
  cr_assert_eq(an_diff_build(&before, &after, r, &res), AN_OK);
  cr_assert_null(res.report.graph_staged_top);
  cr_assert_float_eq(res.report.graph_staged_delta_us, 0, 1e-12);
  n = rp_diff_fact_changes(&res.report, ch);
  cr_assert_eq(n, 1);
  cr_assert_null(strstr(ch[0].after, "with them"));
  an_diff_result_free(&res);
  te_rules_destroy(r);
}

/* A rank of HTA's sampled directory: every runtime call launched a kernel or copy and every
 * CPU op holds one (n steps of aten::mm > cudaLaunchKernel > kernel); idle_every: every so
 * many steps an unfiltered trace's cudaEventQuery and an aten::view that launch nothing;
 * stride: the step between the launches' correlation ids (1: dense, as a filtered trace
 * numbers them; a trace that kept every call skips the ids of the calls between). */
static char *launch_trace(int n, int idle_every, int stride) {
  size_t cap = (size_t)n * 700 + 256, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "{\"traceEvents\":[");
  for (int i = 0; i < n; i++) {
    double ts = i * 100.0;
    len += (size_t)snprintf(
        s + len, cap - len,
        "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":%g,"
        "\"dur\":20},{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
        "\"pid\":1,\"tid\":1,\"ts\":%g,\"dur\":5,\"args\":{\"correlation\":%d}},{\"ph\":\"X\","
        "\"cat\":\"kernel\",\"name\":\"ampere_sgemm_128x64_nn\",\"pid\":0,\"tid\":7,\"ts\":%g,"
        "\"dur\":30,\"args\":{\"stream\":7,\"correlation\":%d}}",
        i ? "," : "", ts, ts + 2, 1000 + i * stride, ts + 10, 1000 + i * stride);
    if (idle_every && i % idle_every == 0)
      len += (size_t)snprintf(
          s + len, cap - len,
          ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::view\",\"pid\":1,\"tid\":1,\"ts\":"
          "%g,\"dur\":3},{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaEventQuery\","
          "\"pid\":1,\"tid\":1,\"ts\":%g,\"dur\":1,\"args\":{\"correlation\":%d}}",
          ts + 40, ts + 60, 900000 + i);
  }
  snprintf(s + len, cap - len, "]}");
  return s;
}

static an_trace_filter filter_of(const char *json) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("f.json", json, strlen(json), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_trace_filter f = {0};
  cr_assert_eq(an_trace_filter_add(&f, t), 0);
  tr_trace_destroy(t);
  return f;
}

Test(analysis, trace_filter_tells_a_trace_filtered_to_gpu_work) {
  char *filtered = launch_trace(600, 0, 1), *whole = launch_trace(600, 50, 1),
       *tiny = launch_trace(50, 0, 1);
  an_trace_filter f = filter_of(filtered);
  cr_assert_eq(f.runtime_calls, 600);
  cr_assert_eq(f.gpu_calls, 600);
  cr_assert_eq(f.launching_ops, 600);
  cr_assert(an_trace_filter_says(&f, 500, 95));
  f = filter_of(whole); /* one event query every 50 steps: not filtered */
  cr_assert(f.idle_call);
  cr_assert_eq(f.gpu_calls + 1, f.runtime_calls); /* the first that launched nothing ends it */
  cr_assert_not(an_trace_filter_says(&f, 500, 95));
  /* ids 1000 apart: the kernels' ids too sparse for a bit each, searched; the same counts */
  for (int idle = 0; idle <= 50; idle += 50) {
    char *sparse = launch_trace(600, idle, 1000);
    an_trace_filter g = filter_of(sparse), d = filter_of(idle ? whole : filtered);
    cr_assert_eq(g.runtime_calls, d.runtime_calls);
    cr_assert_eq(g.gpu_calls, d.gpu_calls);
    cr_assert_eq(g.launching_ops, d.launching_ops);
    cr_assert_eq(g.idle_call, d.idle_call);
    free(sparse);
  }
  f = filter_of(tiny); /* too few calls to tell */
  cr_assert_not(an_trace_filter_says(&f, 500, 95));
  f.runtime_calls = f.gpu_calls = 600, f.cpu_ops = 100, f.launching_ops = 90;
  cr_assert_not(an_trace_filter_says(&f, 500, 95)); /* 10 % of the ops launch nothing */
  free(filtered), free(whole), free(tiny);
}

/* torch.compile's CUDA-graph trees (HTA's test run): under CompiledFunction, the inputs are
 * copied into the graph's static buffers (aten::copy_ > cudaMemcpyAsync, a DtoD copy), then
 * cudaGraphLaunch replays the graph; a copy outside it is not staged. */
static const char STAGING_TRACE[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"CompiledFunction\",\"pid\":1,\"tid\":1,\"ts\":0,"
    "\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":1,\"tid\":1,\"ts\":5,"
    "\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":8,\"dur\":5,\"args\":{\"correlation\":11}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,"
    "\"ts\":40,\"dur\":30,\"args\":{\"correlation\":12}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"pid\":0,"
    "\"tid\":7,\"ts\":20,\"dur\":50,\"args\":{\"stream\":7,\"correlation\":11}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"triton_poi_fused_add_0\",\"pid\":0,\"tid\":7,"
    "\"ts\":80,\"dur\":10,\"args\":{\"stream\":7,\"correlation\":12}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":1,\"tid\":1,\"ts\":200,"
    "\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":205,\"dur\":5,\"args\":{\"correlation\":13}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"pid\":0,"
    "\"tid\":7,\"ts\":215,\"dur\":7,\"args\":{\"stream\":7,\"correlation\":13}}"
    "]}";

Test(analysis, graph_staging_counts_copies_inside_the_graph_launching_op, .init = setup,
     .fini = teardown) {
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("g.json", STAGING_TRACE, sizeof STAGING_TRACE - 1, NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_trace_view v;
  cr_assert_eq(an_trace_view_build(t, NULL, rules, NULL, &v), AN_OK);
  cr_assert_eq(an_trace_view_index_ids(&v), AN_OK);
  an_graph_staging g = {0};
  cr_assert_eq(an_graph_staging_add(&g, &v, rules), AN_OK);
  const char *stage = v.stages[0].stage->id;
  /* the first copy only (50 us): the second runs outside CompiledFunction */
  cr_assert_float_eq(an_graph_staging_us(&g, stage, "Memcpy DtoD (Device -> Device)"), 50, 1e-9);
  cr_assert_float_eq(an_graph_staging_us(&g, stage, "triton_poi_fused_add_0"), 0, 1e-9);
  an_graph_staging_free(&g);
  an_trace_view_free(&v);
  tr_trace_destroy(t);
}

/* ---------------------------------------------------------------- pooled items, leads */

/* An idle item of stage "decode" with a named activity, its bound a share of a 10 ms step. */
static an_summary_item small_item(an_summary_kind kind, an_action a, const char *what,
                                  const char *anchor, double us) {
  an_summary_item it = {.kind = kind,
                        .action = a,
                        .stage_id = "decode",
                        .what = what,
                        .at_stake_us = us,
                        .basis_us = 2 * us,
                        .share_pct = us / 100,
                        .score = us,
                        .step_us = 10000,
                        .count = 1,
                        .idle_kind = AN_IDLE_SYNC};
  snprintf(it.anchor, sizeof it.anchor, "%s", anchor);
  return it;
}

/* Review 12 defect 8: two small host stalls of a stage are one item, their sum and their
 * list (SGLang decode's aten::copy_ sync and hipGraphLaunch call); a large one, another
 * stage's and a fusion stay apart; a small hedged item (a host stall with no lever) is a
 * lead; a lone small fusion is neither pooled nor a lead. */
Test(summary_pool, small_items_of_one_root_cause_pool_and_hedged_ones_are_leads, .init = setup,
     .fini = teardown) {
  const te_settings *s = te_rules_settings(rules);
  cr_assert_gt(s->summary_pool_below_pct, 3.4);
  an_summary_item v[6] = {
      small_item(AN_SUMMARY_IDLE, AN_ACTION_HOST_STALL, "big", "idle-decode-9",
                 s->summary_pool_below_pct * 100 + 10),
      small_item(AN_SUMMARY_IDLE, AN_ACTION_REMOVE_SYNC, "aten::copy_", "idle-decode-0", 340),
      small_item(AN_SUMMARY_FUSION, AN_ACTION_ENABLE_FUSION, "rope", "fusion-decode-0", 300),
      small_item(AN_SUMMARY_IDLE, AN_ACTION_HOST_STALL, "hipGraphLaunch", "idle-decode-1", 270),
      small_item(AN_SUMMARY_IDLE, AN_ACTION_HOST_STALL, "other stage", "idle-extend-0", 200),
      small_item(AN_SUMMARY_IDLE, AN_ACTION_HOST_STALL, "region", "idle-decode-2", 100)};
  v[0].lever = "a lever";
  v[1].lever = v[3].lever = "its lever";
  v[4].stage_id = "extend";
  v[5].idle_kind = AN_IDLE_HOST; /* no lever: hedged */
  v[5].what = NULL;              /* ... and no activity named: not pooled */
  an_summary_data out = {0};
  bool nomem = false;
  size_t n = sm_pool_items(s, v, 6, &out, &nomem);
  cr_assert(!nomem);
  cr_assert_eq(n, 5, "%zu items", n);
  cr_assert_eq(v[1].n_pool, 2);
  cr_assert_float_eq(v[1].at_stake_us, 610, 1e-9);
  cr_assert_float_eq(v[1].basis_us, 1220, 1e-9);
  cr_assert_eq(v[1].count, 2);
  cr_assert_str_eq(v[1].pool[0].what, "aten::copy_");
  cr_assert_str_eq(v[1].pool[1].what, "hipGraphLaunch");
  cr_assert_null(v[1].what);
  cr_assert_str_eq(v[1].more[0], "idle-decode-1"); /* the other member's evidence */
  cr_assert_eq(v[0].n_pool, 0);
  cr_assert_eq(v[2].n_pool, 0);
  cr_assert(!v[2].lead);
  cr_assert_eq(v[3].n_pool, 0); /* the other stage's */
  cr_assert_str_eq(v[3].stage_id, "extend");
  cr_assert(v[4].lead);
  cr_assert(!v[0].lead && !v[1].lead && !v[3].lead);
  an_summary_free(&out);
}

/* The settings keyed by summary action (summary.weights, summary.carries_out) accept the
 * ids an_summary_action_id gives, no more, no fewer, in an_action order. */
Test(summary, action_ids_are_the_settings_choices) {
  char ids[512] = "";
  size_t n = 0;
  for (int a = 0; strcmp(an_summary_action_id((an_action)a), "?") != 0; a++)
    n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%s", a ? "|" : "",
                          an_summary_action_id((an_action)a));
  cr_assert_lt(n, sizeof ids);
  cr_assert_str_eq(ids, TE_SUMMARY_ACTION_IDS);
  cr_assert_str_eq(te_setting_def_find("summary.carries_out")->choices, TE_SUMMARY_ACTION_IDS);
  cr_assert_str_eq(te_setting_def_find("summary.weights")->choices, TE_SUMMARY_ACTION_IDS);
}
