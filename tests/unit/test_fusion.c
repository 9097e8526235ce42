/*
 * test_fusion.c - the fusion families read from shapes and gates (session 11): the GEMM
 * merge family (fuse_merge.c, deviation F13). Each fixture is a small Kineto trace shaped
 * like the real ones: CPU ops with Input Dims and Input type, their launch calls and the
 * kernels by External id and correlation, one stream.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pipeline.h"
#include "cli/rules_setup.h"
#include "default_rules.h"
#include "report/text.h"
#include "report/timeline_report.h"
#include "run_trace.h"

static te_rules *rules;

static void setup(void) { rules = test_default_rules(); }
static void teardown(void) { te_rules_destroy(rules); }

/* The report of one trace under rules r (the framework detected). */
static an_report *report_of(te_rules *r, const char *data) {
  return test_run_trace(r, NULL, data, strlen(data));
}

/* The report of one trace under the suite's rules, framework fw given on the command line. */
static an_report *report_fw(const char *fw, const char *data) {
  return test_run_trace(rules, fw, data, strlen(data));
}

/* The row of pattern id in any stage, or NULL. */
static const an_fuse_row *row_of(const an_report *rep, const char *id) {
  for (size_t s = 0; s < rep->n_stages; s++)
    for (size_t i = 0; i < rep->stages[s].n_fuse; i++)
      if (!strcmp(rep->stages[s].fuse[i].pattern_id, id)) return &rep->stages[s].fuse[i];
  return NULL;
}

/* Whether one trace under rules r (framework fw given, or NULL: detected) has no row of
 * pattern id: its report made, asked and freed. */
static bool no_row(te_rules *r, const char *fw, const char *data, const char *id) {
  an_report *rep = test_run_trace(r, fw, data, strlen(data));
  bool none = row_of(rep, id) == NULL;
  an_report_destroy(rep);
  return none;
}

/* ---------------------------------------------------------------- GEMM merges */

/* A kernel launched by a CPU op that recorded its shapes: the op on the host thread at
 * host time h, its launch call inside it (correlation ext * 10 + 5), the kernel at GPU
 * time g on stream 0 (External id ext), as a ROCm Kineto trace writes them. */
#define OPK(op, dims, types, kname, h, g, dur, ext) \
  OPKL("hipExtModuleLaunchKernel", op, dims, types, kname, h, g, dur, ext)
/* OPK with the launch call named (cudaLaunchKernel on CUDA). */
#define OPKL(launch, op, dims, types, kname, h, g, dur, ext)                                       \
  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" op "\",\"pid\":0,\"tid\":1,\"ts\":" #h            \
  ",\"dur\":0.8,\"args\":{\"External id\":" #ext ",\"Input Dims\":" dims ",\"Input type\":" types  \
  "}},{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" launch                                   \
  "\",\"pid\":0,"                                                                                  \
  "\"tid\":1,\"ts\":" #h ".1,\"dur\":0.5,\"args\":{\"External id\":" #ext ",\"correlation\":" #ext \
  "5}},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" kname "\",\"pid\":0,\"tid\":0,\"ts\":" #g     \
  ",\"dur\":" #dur ",\"args\":{\"External id\":" #ext ",\"stream\":0,\"correlation\":" #ext "5}}"
#define BF "\"c10::BFloat16\""
#define BF3 "[" BF ", " BF ", " BF "]"
#define CIJK "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1"
/* aten::mm(x [M, K], w [K, N], out [M, N]) as Inductor's extern mm calls it */
#define MM(n_out, g, dur, ext)                                                                    \
  OPK("aten::mm", "[[32768, 2048], [2048, " #n_out "], [32768, " #n_out "]]", BF3, CIJK, 10##ext, \
      g, dur, ext)
#define NORM(g, ext)                                        \
  OPK("triton_red_fused_add_mean_mul_pow_rsqrt_0",          \
      "[[8, 4096, 2048], [2048], [8, 4096, 2048], [], []]", \
      "[" BF ", " BF ", " BF ", \"Scalar\", \"Scalar\"]",   \
      "triton_red_fused_add_mean_mul_pow_rsqrt_0", 10##ext, g, 80, ext)
/* SDPA's flash forward reads Q, K and V: three [32768 x 2048] outputs */
#define ATTN(g, ext)                                                          \
  OPK("aten::_flash_attention_forward",                                       \
      "[[8, 4096, 16, 128], [8, 4096, 16, 128], [8, 4096, 16, 128], [], []]", \
      "[" BF ", " BF ", " BF ", \"\", \"\"]", "attn_fwd", 10##ext, g, 3600, ext)
/* an elementwise op on one [32768 x 2048] tensor: reads the last GEMM's output alone */
#define SCALE(g, ext)                                                          \
  OPK("triton_poi_fused_mul_0", "[[32768, 2048], []]", "[" BF ", \"Scalar\"]", \
      "triton_poi_fused_mul_0", 10##ext, g, 60, ext)
#define SILU_MUL(g, ext)                                                                           \
  OPK("triton_poi_fused__unsafe_view_mul_silu_2", "[[8, 4096, 8192], [32768, 8192], []]",          \
      "[" BF ", " BF ", \"Scalar\"]", "triton_poi_fused__unsafe_view_mul_silu_2", 10##ext, g, 520, \
      ext)
#define MI300X                                                                 \
  "\"hip_runtime_version\":60342134,\"deviceProperties\":[{\"id\":0,\"name\":" \
  "\"AMD Instinct MI300X\",\"computeMajor\":9,\"computeMinor\":4}],"

/* One transformer block as torch.compile runs it: norm, Q, K, V (three [32768x2048] x
 * [2048x2048] GEMMs), what reads them (between), o_proj, gate and up ([2048x8192] each),
 * SiLU x mul. */
#define BLOCK(between)                                                                         \
  "{" MI300X "\"traceEvents\":[" NORM(1000, 11) "," MM(2048, 1100, 600, 12) "," MM(            \
      2048, 1700, 560, 13) "," MM(2048, 2260, 560,                                             \
                                  14) "," between                                              \
                                      "," MM(2048, 6000, 530, 16) "," NORM(6540, 17) "," MM(   \
                                          8192, 6640, 1780, 18) "," MM(8192, 8420, 1970,       \
                                                                       19) "," SILU_MUL(10400, \
                                                                                        20) "]}"

static const char BLOCK_ATTN[] = BLOCK(ATTN(2830, 15));
static const char BLOCK_CHAIN[] = BLOCK(SCALE(2830, 15));

/* Q, K, V and gate, up are each one run of siblings: one row, whose time is theirs (not
 * o_proj's, though it shares their kernel name and shapes), and whose bound is their time
 * less each merged GEMM at the best rate of a GEMM of at most twice its FLOPs. */
Test(merge, sibling_gemms_are_one_merge_row, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_ATTN);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r, "Q/K/V and gate/up read one input each");
  cr_assert(r->merge && r->shown);
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY);
  double qkv = 600 + 560 + 560, gate_up = 1780 + 1970;
  cr_assert_float_eq(r->related_us, qkv + gate_up, 1e-6, "%f", r->related_us);
  double f_qkv = 3 * 2.0 * 32768 * 2048 * 2048, f_gu = 2 * 2.0 * 32768 * 2048 * 8192;
  /* gate (1.1 TFLOP in 1780 us) is the fastest GEMM of at most twice either merged one's
   * FLOPs (QKV 0.82, gate+up 2.2 TFLOP); down's 8192-wide input makes no sibling */
  double rate = 2.0 * 32768 * 2048 * 8192 / 1780;
  double want = (qkv - f_qkv / rate) + (gate_up - f_gu / rate);
  cr_assert_float_eq(r->saving_us, want, 1e-6, "%f, want %f", r->saving_us, want);
  char *why = rp_fuse_rationale(r);
  cr_assert(strstr(why, "[32768x2048] x N 2048+2048+2048 bf16 (1 run)"), "%s", why);
  cr_assert(strstr(why, "[32768x2048] x N 8192+8192 bf16 (1 run)"), "%s", why);
  free(why);
  an_report_destroy(rep);
}

/* The merge row's GEMMs are its item's: the merged GEMM runs at the stage's best GEMM rate,
 * tuned, so no tuning item counts their headroom again ("merge and tune" is one root
 * cause; tracelens: a 1.30 ms/step tuning item over the same kernels). */
static const char SLOW_QKV[] =
    "{" MI300X "\"traceEvents\":[" NORM(1000, 11) "," MM(2048, 1100, 1800, 12) "," MM(
        2048, 2950, 1800, 13) "," MM(2048, 4800, 1800, 14) "," ATTN(6650, 15) "," MM(2048, 10300,
                                                                                   530, 16) "," NORM(10840, 17) "," MM(8192, 10940, 1780,
                                                                         18) "," MM(8192, 12720, 1970, 19) "," SILU_MUL(14700, 20) "]}";

Test(merge, merged_gemms_leave_the_tuning_item, .init = setup, .fini = teardown) {
  /* Q, K and V at a third of gate's rate: their kernel's tuning headroom outranks the merge */
  an_report *rep = report_of(rules, SLOW_QKV);
  size_t merges = 0;
  for (size_t i = 0; i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    merges += it->action == AN_ACTION_MERGE_GEMMS;
    for (size_t k = 0; it->action == AN_ACTION_TUNE_KERNEL && k < it->n_kernels; k++)
      cr_assert(strcmp(it->kernels[k], CIJK), "item %zu tunes the merged GEMMs", i + 1);
  }
  cr_assert_eq(merges, 1);
  an_report_destroy(rep);
}

/* N == K: Q's output is shaped like the input, so K could read it (fc2(fc1(x))). Without a
 * kernel right after them that reads all three outputs (attention does), Q/K/V are no
 * run; gate and up (N != K) still are. */
Test(merge, a_possible_chain_needs_a_joint_consumer, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_CHAIN);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_float_eq(r->related_us, 1780 + 1970, 1e-6, "gate and up only: %f", r->related_us);
  cr_assert_eq(r->n_merge_shapes, 1, "gate and up only");
  cr_assert_eq(r->merge_shapes[0].n_out[0], 8192);
  an_report_destroy(rep);
}

/* A kernel between two siblings that holds a tensor of the input's size may write it (an
 * in-place add on x): Q is cut off; K and V, which both read x after it, stay a run. */
static const char QKV_WRITE[] =
    "{" MI300X "\"traceEvents\":[" NORM(1000, 11) "," MM(2048, 1100, 600, 12) "," OPK(
        "aten::add_", "[[32768, 2048], [32768, 2048], []]", "[" BF ", " BF ", \"Scalar\"]",
        "triton_poi_fused_add_0", 1050, 1700, 40,
        21) "," MM(2048, 1750, 560, 13) "," MM(2048, 2310, 560, 14) "," ATTN(2880, 15) "]}";

Test(merge, a_write_of_the_input_ends_the_run, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, QKV_WRITE);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_float_eq(r->related_us, 560 + 560, 1e-6, "K and V: %f", r->related_us);
  cr_assert_eq(r->n_merge_shapes, 1);
  cr_assert_eq(r->merge_shapes[0].n, 2, "K and V");
  an_report_destroy(rep);
}

/* cuBLAS on CUDA often clears the output with a memset the GEMM op launches first: the op
 * is one sibling, and its GEMM kernel (its longest), not the memset, is the row's evidence
 * (review 11: hf_qwen's merge row named `Memset (Device)` as its kernel). */
#define MEMSET(g, ext)                                                                            \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemsetAsync\",\"pid\":0,\"tid\":1,"      \
  "\"ts\":10" #ext ".05,\"dur\":0.02,\"args\":{\"External id\":" #ext ",\"correlation\":" #ext    \
  "4}},{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":0,"    \
  "\"ts\":" #g ",\"dur\":3,\"args\":{\"External id\":" #ext ",\"stream\":0,\"correlation\":" #ext \
  "4}}"
static const char GATE_UP_MEMSET[] =
    "{" MI300X
    "\"traceEvents\":[" NORM(6540, 17) "," MEMSET(6630, 18) "," MM(8192, 6640, 1780, 18) "," MEMSET(
        8410, 19) "," MM(8192, 8420, 1970, 19) "," SILU_MUL(10400, 20) "]}";

Test(merge, the_gemm_kernel_not_a_memset_is_the_evidence, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, GATE_UP_MEMSET);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r, "gate and up read one input");
  cr_assert_float_eq(r->related_us, 1780 + 3 + 1970 + 3, 1e-6, "%f", r->related_us);
  cr_assert_eq(r->n_related, 1);
  cr_assert_str_eq(r->related[0], CIJK);
  an_report_destroy(rep);
}

/* A serving step runs the merged projections (QKVParallelLinear, MergedColumnParallel-
 * Linear): one [2048 x 4096] QKV GEMM and one [2048 x 16384] gate_up GEMM per input. No
 * siblings, no row. */
static const char MERGED[] = "{" MI300X "\"traceEvents\":[" NORM(1000, 11) "," OPK(
    "aten::mm", "[[32768, 2048], [2048, 6144], [32768, 6144]]", BF3, CIJK, 1012, 1100, 1500,
    12) "," ATTN(2700, 15) "," MM(2048, 6400, 530,
                                  16) "," NORM(6940, 17) "," OPK("aten::mm",
                                                                 "[[32768, 2048], [2048, 16384], "
                                                                 "[32768, 16384]]",
                                                                 BF3, CIJK, 1018, 7040, 3600,
                                                                 18) "," SILU_MUL(10700, 20) "]}";

Test(merge, merged_projections_make_no_row, .init = setup, .fini = teardown) {
  cr_assert(no_row(rules, NULL, MERGED, "merge-sibling-gemms"));
}

/* A trace of GEMM ops on one stream: ms[i] is op i's M (its input [M x 2048], N 1024); an M
 * of 0 is a kernel no op launched (its writes are unknown: it ends a run). */
static char *gemm_trace(const long *ms, size_t n) {
  size_t cap = 4096 + n * 1024, len = 0;
  char *t = malloc(cap);
  cr_assert_not_null(t);
  len += (size_t)snprintf(t, cap, "{" MI300X "\"traceEvents\":[");
  for (size_t i = 0; i < n; i++) {
    long ext = (long)i + 1, g = 1000 + (long)i * 100;
    if (ms[i])
      len += (size_t)snprintf(
          t + len, cap - len,
          "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":0,\"tid\":1,"
          "\"ts\":%ld,\"dur\":0.8,\"args\":{\"External id\":%ld,\"Input Dims\":[[%ld, 2048], "
          "[2048, 1024], [%ld, 1024]],\"Input type\":" BF3 "}},",
          i ? "," : "", 10 + ext, ext, ms[i], ms[i]);
    else if (i)
      len += (size_t)snprintf(t + len, cap - len, ",");
    len += (size_t)snprintf(t + len, cap - len,
                            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" CIJK
                            "\",\"pid\":0,\"tid\":0,"
                            "\"ts\":%ld,\"dur\":90,\"args\":{\"External id\":%ld,\"stream\":0,"
                            "\"correlation\":%ld}}",
                            g, ms[i] ? ext : 900 + ext, 500 + ext);
  }
  snprintf(t + len, cap - len, "]}");
  return t;
}

/* The caps (util/limits.h): a run holds at most AN_MAX_MERGE_SIBLINGS siblings (nine
 * GEMMs on one input: a run of the cap, the ninth alone is none), and a row states at most
 * AN_MAX_MERGE_SHAPES shapes (the fifth is counted). */
Test(merge, caps_end_runs_and_count_shapes, .init = setup, .fini = teardown) {
  long nine[AN_MAX_MERGE_SIBLINGS + 1];
  for (size_t i = 0; i <= AN_MAX_MERGE_SIBLINGS; i++) nine[i] = 32768;
  char *t = gemm_trace(nine, AN_MAX_MERGE_SIBLINGS + 1);
  an_report *rep = report_of(rules, t);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_eq(r->merge_shapes[0].n, AN_MAX_MERGE_SIBLINGS);
  cr_assert_float_eq(r->related_us, 90.0 * AN_MAX_MERGE_SIBLINGS, 1e-6, "%f", r->related_us);
  an_report_destroy(rep);
  free(t);
  long pairs[3 * (AN_MAX_MERGE_SHAPES + 1)];
  for (size_t i = 0; i <= AN_MAX_MERGE_SHAPES; i++)
    pairs[3 * i] = pairs[3 * i + 1] = 4096 * ((long)i + 1), pairs[3 * i + 2] = 0;
  t = gemm_trace(pairs, 3 * (AN_MAX_MERGE_SHAPES + 1));
  rep = report_of(rules, t);
  r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_eq(r->n_merge_shapes, AN_MAX_MERGE_SHAPES);
  cr_assert_eq(r->merge_more, 1);
  cr_assert_float_eq(r->related_us, 2 * 90.0 * (AN_MAX_MERGE_SHAPES + 1), 1e-6);
  an_report_destroy(rep);
  free(t);
}

/* A Python frame on the host thread around the op at host time h (with_stack). */
#define PYF(name, ts, id)                                      \
  "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"" name \
  "\",\"pid\":0,\"tid\":1,"                                    \
  "\"ts\":" #ts ",\"dur\":1.0,\"args\":{\"Python id\":" #id ",\"Python parent id\":0}}"
/* gate and up ([2048 x 8192] each, N != K) called from frames f1 and f2 */
#define TWO_PROJ(f1, f2)                                                                  \
  "{" MI300X "\"traceEvents\":[" PYF(f1, 1010.9, 1) "," MM(8192, 1100, 1780, 11) "," PYF( \
      f2, 1011.9, 2) "," MM(8192, 2900, 1970, 12) "]}"
static const char ONE_MODULE[] =
    TWO_PROJ("demo/llm/model.py(20): forward", "demo/llm/model.py(21): forward");
static const char TWO_MODULES[] =
    TWO_PROJ("demo/llm/model.py(20): forward", "demo/llm/heads.py(40): project");

/* Where stacks exist, siblings come from one module: two calls of one forward (lines 20
 * and 21) are siblings; the same shapes from two functions are not. */
Test(merge, siblings_share_their_module_frame, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, ONE_MODULE);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r, "one forward, two projections");
  cr_assert_float_eq(r->related_us, 1780 + 1970, 1e-6);
  an_report_destroy(rep);
  cr_assert(no_row(rules, NULL, TWO_MODULES, "merge-sibling-gemms"),
            "two modules' GEMMs are no siblings");
}

/* --compat reference: the reference has no merge family (deviation F13). */
Test(merge, compat_reference_has_no_merge_row, .init = setup, .fini = teardown) {
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *ref = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(ref);
  cr_assert(no_row(ref, NULL, BLOCK_ATTN, "merge-sibling-gemms"));
  te_rules_destroy(ref);
}

/* HF eager's attention (review 11 defect 3): Q, K and V are N == K GEMMs, then RoPE reads
 * Q as heads ([batch, heads, tokens, head_dim], tokens x batch = M, heads x head_dim = N).
 * A chain of layers (fc2(fc1(x))) is not split into heads: the projections of one
 * attention are siblings. */
#define ROPE(g, ext)                                                              \
  OPK("aten::mul", "[[8, 16, 4096, 128], [8, 1, 4096, 128]]", "[" BF ", " BF "]", \
      "at::native::elementwise_kernel<128, 4, BinaryFunctor<c10::BFloat16>>", 10##ext, g, 40, ext)
static const char BLOCK_ROPE[] = BLOCK(ROPE(2830, 15));
/* one head of the whole width ([8, 4096, 1, 2048]) is a reshape, not a split into heads */
static const char BLOCK_ONE_HEAD[] =
    BLOCK(OPK("aten::mul", "[[8, 4096, 1, 2048], []]", "[" BF ", \"Scalar\"]",
              "triton_poi_fused_mul_0", 1015, 2830, 60, 15));

Test(merge, heads_split_by_rope_make_qkv_siblings, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_ROPE);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_float_eq(r->related_us, 600 + 560 + 560 + 1780 + 1970, 1e-6, "%f", r->related_us);
  cr_assert_eq(r->n_merge_shapes, 2, "Q/K/V and gate/up");
  an_report_destroy(rep);
  rep = report_of(rules, BLOCK_ONE_HEAD);
  r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_float_eq(r->related_us, 1780 + 1970, 1e-6, "gate and up only: %f", r->related_us);
  an_report_destroy(rep);
}

/* Review 11 defect 7: the table's related time is not the win. The row carries its saving
 * per step and the basis; and its evidence kernel, which also runs o_proj (not a sibling),
 * states the siblings' part of it, so the evidence adds up to the row's share. */
Test(merge, saving_per_step_and_evidence_add_up, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_ATTN);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_eq(r->saving_basis, AN_SAVING_MERGED);
  /* no step markers: the stage window is the one step */
  cr_assert_float_eq(r->saving_step_us, r->saving_us, 1e-6, "%f", r->saving_step_us);
  cr_assert(r->saving_us > 0 && r->saving_us < r->related_us);
  cr_assert_eq(r->n_evidence, 1);
  const an_fuse_evidence *e = &r->evidence[0];
  cr_assert_str_eq(e->kernel, CIJK);
  cr_assert_float_eq(e->own_pct, r->share_pct, 1e-6, "%f vs %f", e->own_pct, r->share_pct);
  cr_assert(e->share_pct > e->own_pct, "the kernel also runs o_proj");
  char *cell = rp_fuse_evidence_cell(r);
  cr_assert(strstr(cell, "% of its "), "%s", cell);
  free(cell);
  an_report_destroy(rep);
}

/* Review 11 defect 8: merges whose saving is a sliver of the stage (a long attention
 * kernel beside them: 0.8% saving) stay in the JSON report but are neither shown nor an
 * action. */
static const char BLOCK_DWARFED[] =
    "{" MI300X "\"traceEvents\":[" NORM(1000, 11) "," MM(2048, 1100, 600, 12) "," MM(
        2048, 1700, 560, 13) "," MM(2048, 2260, 560, 14) "," ATTN(2830, 15) "," MM(2048, 6000, 530,
                                                                                 16) "," NORM(6540, 17) "," MM(8192, 6640, 1780, 18) "," MM(8192, 8420, 1970,
                                                                       19) "," SILU_MUL(10400,
                                                                                        20) "," OPK("aten::_flash_attention_forward", "[[8, 4096, 16, 128], [8, 4096, 16, 128], [8, 4096, 16, 128], [], []]", "[" BF ", " BF ", " BF ", \"\", \"\"]", "attn_fwd_long", 1030, 11000, 60000, 30) "]}";

Test(merge, a_small_saving_is_no_shown_row, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_DWARFED);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r, "kept in the JSON report");
  double pct = r->saving_us / rep->stages[0].kernel_total_us * 100.0;
  cr_assert(pct > 0 && pct < 1.0, "saving %f%%", pct);
  cr_assert_not(r->shown);
  for (size_t i = 0; i < rep->n_summary; i++)
    cr_assert_neq(rep->summary[i].action, AN_ACTION_MERGE_GEMMS, "item %zu", i + 1);
  an_report_destroy(rep);
}

/* Review 11 defect 8: a training step (the autograd engine runs) gets no merge row: the
 * pattern's workloads are serving and inference. */
#define AUTOGRAD                                                                      \
  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: " \
  "torch::autograd::AccumulateGrad\",\"pid\":0,\"tid\":1,\"ts\":1200,\"dur\":5,\"args\":{}}"
static const char BLOCK_TRAINING[] = BLOCK(ATTN(2830, 15) "," AUTOGRAD);

Test(merge, a_training_step_has_no_merge_row, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_TRAINING);
  cr_assert_eq(rep->run.workload.value, AN_WORKLOAD_TRAINING);
  cr_assert_null(row_of(rep, "merge-sibling-gemms"));
  an_report_destroy(rep);
}

/* Review 11 defect 8: vLLM's merged layers are cited on a vLLM trace only; the generic path
 * (one nn.Linear of the concatenated weights) everywhere. */
Test(merge, a_framework_layer_is_cited_on_its_framework, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, BLOCK_ATTN);
  const an_fuse_row *r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  for (size_t i = 0; i < r->n_candidate_paths; i++) {
    cr_assert_null(strstr(r->candidate_paths[i], "vllm"), "%s", r->candidate_paths[i]);
    cr_assert_null(r->candidate_repos[i], "a generic recipe is in no framework's repository");
  }
  cr_assert_geq(r->n_candidate_paths, 1);
  an_report_destroy(rep);
  rep = report_fw("vllm", BLOCK_ATTN);
  r = row_of(rep, "merge-sibling-gemms");
  cr_assert_not_null(r);
  cr_assert_geq(r->n_candidate_paths, 2);
  cr_assert(strstr(r->candidate_paths[0], "QKVParallelLinear"), "%s", r->candidate_paths[0]);
  /* vLLM's own layer is in vLLM's repository (frameworks: repository), the recipe in none */
  cr_assert_str_eq(r->candidate_repos[0], "vllm-project/vllm");
  cr_assert_null(r->candidate_repos[r->n_candidate_paths - 1]);
  char *cell = rp_fuse_candidates_cell(r, true);
  cr_assert_not_null(strstr(cell, "vllm-project/vllm: vllm/model_executor/layers/linear.py"), "%s",
                     cell);
  free(cell);
  cell = rp_fuse_candidates_cell(r, false);
  cr_assert_null(strstr(cell, "vllm-project"), "the reference layout names no repository");
  free(cell);
  an_report_destroy(rep);
}

/* ---------------------------------------------------------------- QK-norm gate */

/* A vLLM Qwen3-8B decode step of 32 tokens under torch.compile on H100, one layer after
 * another: Inductor's RMSNorm of the layer input (weight [4096]), the QKV GEMM, Inductor's
 * per-head Q/K RMSNorm (its weight is one head: [HD]), vLLM's RoPE, FlashAttention, o_proj.
 * The kernels launch one by one (cudaLaunchKernel): an eager + compile stage. */
#define CUDA_H100                                                            \
  "\"cuda_runtime_version\":12080,\"deviceProperties\":[{\"id\":0,\"name\":" \
  "\"NVIDIA H100 80GB HBM3\",\"computeMajor\":9,\"computeMinor\":0}],"
#define VSTEP(ts, dur)                                                                           \
  "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"execute_context_0(0)_generation_32(" \
  "32)\",\"pid\":0,\"tid\":7,\"ts\":" #ts ",\"dur\":" #dur "}"
#define CU(op, dims, types, kname, h, g, dur, ext) \
  OPKL("cudaLaunchKernel", op, dims, types, kname, h, g, dur, ext)
#define T16 "\"c10::BFloat16\""
#define QKNORM_NAME "triton_red_fused__to_copy_mean_mul_pow_rsqrt_view_1"
#define QWEN3_LAYER(h, g, e0, e1, e2, e3, e4, e5, qk_dims, qk_types)                              \
  CU("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "[[32, 4096], [32, 4096], [4096]]",    \
     "[" T16 ", " T16 ", " T16 "]", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", h##0,   \
     g##000, 6, e0)                                                                               \
  "," CU(                                                                                         \
      "aten::mm", "[[32, 4096], [4096, 6144]]", "[" T16 ", " T16 "]",                             \
      "nvjet_tst_64x8_64x16_2x1_v_bz_TNT", h##1, g##010, 40,                                      \
      e1) "," CU("triton_red_fused__to_copy_mean_mul_pow_rsqrt_view_1", qk_dims, qk_types,        \
                 QKNORM_NAME, h##2, g##055, 5,                                                    \
                 e2) "," CU("_C::rotary_embedding",                                               \
                            "[[32], [32, 4096], [32, 1024], [40960, 128], []]",                   \
                            "[\"long int\", " T16 ", " T16 ", " T16 ", \"Scalar\"]",              \
                            "void vllm::rotary_embedding_kernel<c10::BFloat16, true>", h##3,      \
                            g##062, 4,                                                            \
                            e3) "," CU("_vllm_fa2_C::varlen_fwd",                                 \
                                       "[[32, 32, 128], [2048, 16, 8, 128], [2048, 16, 8, 128]]", \
                                       "[" T16 ", " T16 ", " T16 "]",                             \
                                       "void "                                                    \
                                       "flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<" \
                                       "128, 64, 128, 4, false, "                                 \
                                       "false, cutlass::bfloat16_t>, false, true, false, false, " \
                                       "true, true, false, false>("                               \
                                       "flash::Flash_fwd_params)",                                \
                                       h##4, g##070, 30,                                          \
                                       e4) "," CU("aten::mm", "[[32, 4096], [4096, 4096]]",       \
                                                  "[" T16 ", " T16 "]",                           \
                                                  "nvjet_tst_64x8_64x16_2x1_v_bz_TNT", h##5,      \
                                                  g##104, 30, e5)
#define QWEN3_STEP(platform, qk_dims, qk_types)                       \
  "{" platform "\"traceEvents\":[" VSTEP(1000, 2000) "," QWEN3_LAYER( \
      10, 1, 11, 12, 13, 14, 15, 16, qk_dims,                         \
      qk_types) "," QWEN3_LAYER(20, 2, 21, 22, 23, 24, 25, 26, qk_dims, qk_types) "]}"
#define QK128 "[[32, 6144], [128], [128]]"
#define QK_BF16 "[" T16 ", " T16 ", " T16 "]"

static const char QWEN3_128[] = QWEN3_STEP(CUDA_H100, QK128, QK_BF16);
static const char QWEN3_96[] = QWEN3_STEP(CUDA_H100, "[[32, 4608], [96], [96]]", QK_BF16);
static const char QWEN3_FP32[] = QWEN3_STEP(CUDA_H100, QK128, "[\"float\", \"float\", \"float\"]");
static const char QWEN3_ROCM[] = QWEN3_STEP(MI300X, QK128, QK_BF16);
static const char QWEN3_NO_SHAPES[] = QWEN3_STEP(CUDA_H100, "[]", "[]");

/* The gate holds: head dim 128 in BF16, on CUDA, under torch.compile: vLLM's fused QK-norm
 * + RoPE is an opportunity, and the row says which shape it read. */
Test(qknorm, the_gate_holds_for_head_dim_128_bf16_cuda, .init = setup, .fini = teardown) {
  an_report *rep = report_fw("vllm", QWEN3_128);
  const an_fuse_row *r = row_of(rep, "vllm-qknorm-rope");
  cr_assert_not_null(r, "Q/K norm right before RoPE, one head wide");
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY);
  cr_assert_eq(r->unknown_gates, 0);
  cr_assert_float_eq(r->piece_last_dim, 128, 1e-9);
  cr_assert_str_eq(r->piece_format, "bf16");
  bool norm = false;
  for (size_t k = 0; k < r->n_related; k++) norm |= !strcmp(r->related[k], QKNORM_NAME);
  cr_assert(norm, "the per-head norm is the piece, not the layer's input norm");
  an_report_destroy(rep);
}

/* The gate fails each way: a head dim the kernel is not built for (96), an FP32 model: no
 * row. A ROCm run is no failure (brief 12 defect 4): the pass registers AITER's RMSNorm
 * and RoPE ops there too. */
Test(qknorm, the_gate_fails_on_head_dim_or_format, .init = setup, .fini = teardown) {
  const char *const fails[] = {QWEN3_96, QWEN3_FP32};
  const char *const why[] = {"head dim 96", "fp32"};
  for (size_t i = 0; i < 2; i++)
    cr_assert(no_row(rules, "vllm", fails[i], "vllm-qknorm-rope"), "%s: no row", why[i]);
  an_report *rep = report_fw("vllm", QWEN3_ROCM);
  const an_fuse_row *r = row_of(rep, "vllm-qknorm-rope");
  cr_assert_not_null(r, "ROCm: AITER's ops are registered too");
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY);
  an_report_destroy(rep);
}

/* Without record_shapes the Q/K norm's op states no shapes: the head dim is unknown, so the
 * row is "unknown", never Confirmed, and names the fact. */
Test(qknorm, no_shapes_leave_the_row_unknown, .init = setup, .fini = teardown) {
  an_report *rep = report_fw("vllm", QWEN3_NO_SHAPES);
  const an_fuse_row *r = row_of(rep, "vllm-qknorm-rope");
  cr_assert_not_null(r);
  cr_assert_eq(r->state, AN_FUSE_GATES_UNKNOWN);
  cr_assert_eq(r->confidence, AN_CONFIDENCE_UNKNOWN);
  cr_assert(r->unknown_gates & AN_GATE_SHAPE);
  an_report_destroy(rep);
}

/* Brief 12 defect 4: newer vLLM's QKNormRoPEFusionPass registers AITER's patterns on ROCm
 * too, and on ROCm QkNormRopeKvCacheFusionPass folds the cache write in as well: a layer
 * whose Q/K norm, RoPE and reshape_and_cache run split under torch.compile on MI300X is one
 * row, the AITER triple, which the two narrower rows' patterns give way to. On CUDA the
 * triple has no pass: the QK-norm + RoPE row stands. Decode of 32 tokens (under the 256
 * token cap). */
#define VSTEP32(ts, dur)                                                                         \
  "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"execute_32_context_0(0)_generation_" \
  "32(32)\",\"pid\":0,\"tid\":7,\"ts\":" #ts ",\"dur\":" #dur "}"
#define KV_WRITE(h, g, e)                                                                      \
  CU("_C_cache_ops::reshape_and_cache_flash",                                                  \
     "[[32, 8, 128], [32, 8, 128], [2048, 16, 8, 128], [2048, 16, 8, 128], [32], [], [], []]", \
     "[" T16 ", " T16 ", " T16 ", " T16 ", \"long int\", \"\", \"\", \"\"]",                   \
     "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, "              \
     "(vllm::Fp8KVCacheDataType)0>",                                                           \
     h, g, 3, e)
#define QWEN3_KV_STEP(platform)                                                                  \
  "{" platform "\"traceEvents\":[" VSTEP32(1000, 2000) "," QWEN3_LAYER(                          \
      10, 1, 11, 12, 13, 14, 15, 16, QK128,                                                      \
      QK_BF16) "," KV_WRITE(150, 1066, 17) "," QWEN3_LAYER(20, 2, 21, 22, 23, 24, 25, 26, QK128, \
                                                           QK_BF16) "," KV_WRITE(250, 2066,      \
                                                                                 27) "]}"
static const char QWEN3_KV_ROCM[] = QWEN3_KV_STEP(MI300X);
static const char QWEN3_KV_CUDA[] = QWEN3_KV_STEP(CUDA_H100);

Test(qknorm, rocm_aiter_folds_the_cache_write_in, .init = setup, .fini = teardown) {
  an_report *rep = report_fw("vllm", QWEN3_KV_ROCM);
  const an_fuse_row *r = row_of(rep, "vllm-qknorm-rope-kvcache");
  cr_assert_not_null(r, "Q/K norm, RoPE and the cache write of each layer on ROCm");
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY, "state %d, unknown %u", r->state, r->unknown_gates);
  cr_assert_eq(r->n_roles, 3);
  cr_assert_null(row_of(rep, "vllm-qknorm-rope"), "the triple supersedes it");
  cr_assert_null(row_of(rep, "vllm-rope-kvcache"), "the triple supersedes it");
  an_report_destroy(rep);
  rep = report_fw("vllm", QWEN3_KV_CUDA);
  cr_assert_null(row_of(rep, "vllm-qknorm-rope-kvcache"), "an AITER pass: no row on CUDA");
  cr_assert_not_null(row_of(rep, "vllm-qknorm-rope"));
  an_report_destroy(rep);
}

/* ---------------------------------------------------------------- layers from module frames */

/* Brief 13 defect 3 (deviation F18): SGLang's Qwen3-8B prefill on MI300X, a with_stack
 * trace whose module frames name each decoder layer ("nn.Module: Qwen3DecoderLayer_0" ..
 * "_35"). The shared trace, not a fixture: the chain gate and the shape gate read what a
 * real profiler wrote. */
#define SGLANG_PREFILL TRIAGE_SHARED_DIR "/traces/real/sglang_qwen3_8b_prefilldecode_mi300x.json.gz"

/* The report of a shared trace under the default packs and one inline pack (NULL: none);
 * NULL when the shared tree is absent. */
static an_report *shared_report(const char *path, const char *pack, te_rules **out) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fclose(f);
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_path(r, TRIAGE_SOURCE_DIR "/rules", d), TE_OK);
  if (pack) cr_assert_eq(te_rules_load_buffer(r, "test.yaml", pack, strlen(pack), d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK, "the test pack loads");
  te_diags_destroy(d);
  an_run_options o = {0};
  o.formal = (an_input){.path = path};
  o.min_share_pct = -1;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, r, &rep, &err), AN_OK, "%s", err.message);
  *out = r;
  return rep;
}

/* The shared SGLang prefill trace's report (shared_report). */
static an_report *sglang_prefill(const char *pack, te_rules **out) {
  return shared_report(SGLANG_PREFILL, pack, out);
}

/* The shared prefill's Q/K-norm chain row (skips the test without the shared tree). */
static const an_fuse_row *prefill_qk_row(te_rules **r, an_report **rep) {
  *rep = sglang_prefill(NULL, r);
  if (!*rep) cr_skip_test("no shared trace at %s", SGLANG_PREFILL);
  const an_fuse_row *f = row_of(*rep, "fused-qk-norm-rope-kv-cache");
  cr_assert_not_null(f);
  return f;
}

/* Each layer's Q/K norm, RoPE and cache write are one chain, and the module frames say
 * so: every chain of the row's tuple has each piece inside one decoder layer, and none
 * was dropped for straddling two. */
Test(layers, module_frames_place_the_qk_chain_in_one_layer) {
  te_rules *r = NULL;
  an_report *rep = NULL;
  const an_fuse_row *f = prefill_qk_row(&r, &rep);
  cr_assert_geq(f->chains, 36, "one chain a layer at least: %zu", f->chains);
  cr_assert_eq(f->chains_by_frames, f->chains, "%zu of %zu placed by frames", f->chains_by_frames,
               f->chains);
  cr_assert_eq(f->chains_across_layers, 0);
  an_report_destroy(rep);
  te_rules_destroy(r);
}

/* A pattern whose pieces are a layer's SiLU-and-mul and the add + RMSNorm that opens the
 * next layer: with no breaker and room for the down projection between them, the kernels
 * between would take them for one chain; the module frames place them in two layers, so
 * there is no chain and no row. */
static const char CROSS_LAYER[] =
    "pack: t\nversion: 1\nfusion_patterns:\n"
    "  - id: test-cross-layer\n    name: \"act-and-mul, then the next norm\"\n"
    "    framework: sglang\n    origin: mainline\n    candidate_paths: [\"x.py\"]\n"
    "    split_groups:\n"
    "    - keywords: [\"act_and_mul_kernel\"]\n      compact: true\n"
    "    - keywords: [\"add_rmsnorm_quant_kernelIDF16bDF16bLi256\"]\n      compact: true\n"
    "    evidence: [any, any]\n"
    "    chain: {max_between: 4, breakers: [communication]}\n"
    "    min_share_pct: 0.1\n    likely_share_pct: 1.0\n    priority: 1\n";

Test(layers, pieces_in_two_layers_are_no_chain) {
  te_rules *r = NULL;
  an_report *rep = sglang_prefill(CROSS_LAYER, &r);
  if (!rep) cr_skip_test("no shared trace at %s", SGLANG_PREFILL);
  cr_assert_null(row_of(rep, "test-cross-layer"), "a layer's end and the next one's start");
  an_report_destroy(rep);
  te_rules_destroy(r);
  /* the same trace with no frame taken for a layer: the kernels between decide, and they
   * chain the two */
  char pack[2048];
  snprintf(pack, sizeof pack, "%smatchers:\n  layer_module_frame:\n    regex: ['(*FAIL)']\n",
           CROSS_LAYER);
  rep = sglang_prefill(pack, &r);
  const an_fuse_row *f = row_of(rep, "test-cross-layer");
  cr_assert_not_null(f, "without module frames the kernels between chain them");
  cr_assert_gt(f->chains, 0);
  cr_assert_eq(f->chains_by_frames, 0);
  an_report_destroy(rep);
  te_rules_destroy(r);
}

/* The shape gate on the shared trace (F14/F16 were pinned by fixtures only): the SGLang
 * chain gated like vLLM's QK-norm + RoPE, on the Q/K norm piece. Qwen3-8B's head dim is
 * 128 in BF16: the gate reads both from the norm's op (aiter::rmsnorm, weight [128]) and
 * holds; a gate for head dim 96 alone fails: no row. */
#define SHAPE_PACK(dims)                                                                    \
  "pack: t\nversion: 1\nfusion_patterns:\n"                                                 \
  "  - id: fused-qk-norm-rope-kv-cache\n    name: \"Fused QK RMSNorm + RoPE + KV cache "    \
  "write\"\n    framework: sglang\n    origin: mainline\n    candidate_paths: [\"x.py\"]\n" \
  "    split_groups:\n"                                                                     \
  "    - keywords: [\"rmsnorm\"]\n      compact: true\n"                                    \
  "    - keywords: [\"rotary\"]\n      compact: true\n"                                     \
  "    - keywords: [\"store_kvcache\"]\n      compact: true\n"                              \
  "    evidence: [norm, rope, kv_write]\n"                                                  \
  "    shape: {piece: 0, last_dims: " dims                                                  \
  ", formats: [bf16]}\n"                                                                    \
  "    min_share_pct: 0.5\n    likely_share_pct: 2.0\n    priority: 50\n"

Test(layers, the_shape_gate_reads_the_shared_trace) {
  te_rules *r = NULL;
  an_report *rep = sglang_prefill(SHAPE_PACK("[64, 128, 256]"), &r);
  if (!rep) cr_skip_test("no shared trace at %s", SGLANG_PREFILL);
  const an_fuse_row *f = row_of(rep, "fused-qk-norm-rope-kv-cache");
  cr_assert_not_null(f, "head dim 128, bf16: the gate holds");
  cr_assert_float_eq(f->piece_last_dim, 128, 1e-9, "%g", f->piece_last_dim);
  cr_assert_str_eq(f->piece_format, "bf16");
  cr_assert_eq(f->unknown_gates & AN_GATE_SHAPE, 0);
  an_report_destroy(rep);
  te_rules_destroy(r);
  rep = sglang_prefill(SHAPE_PACK("[96]"), &r);
  cr_assert_null(row_of(rep, "fused-qk-norm-rope-kv-cache"), "head dim 96 only: no row");
  an_report_destroy(rep);
  te_rules_destroy(r);
}

/* ---------------------------------------------------------------- MoE routing */

/* Review 15 defect 3: an eager MoE layer routes its 16 tokens as moe_microbench_b300 does:
 * the router GEMM, torch.topk over the logits (its select kernel, then the sort of what it
 * chose), torch.softmax over the chosen weights, the expert weights gathered for bmm. The
 * logits' last dimension is the number of experts (router) or the vocabulary (a sampler's
 * softmax + top-k). */
#define TOPK_NAME "void at::native::sbtopk::gatherTopK<c10::BFloat16, unsigned int, 2, false>"
#define SORT_NAME                                                              \
  "void at::native::bitonicSortKVInPlace<2, -1, 16, 16, c10::BFloat16, long, " \
  "at::native::GTOp<c10::BFloat16, true>, unsigned int>"
#define SOFTMAX_NAME                                                                       \
  "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, " \
  "1, false, false>"
/* one routed layer: host times h0.., GPU times g000.., External ids e1..e6 */
#define ROUTE_AT(n, h, g, e)                                                                       \
  CU("aten::mm", "[[16, 512], [512, " #n "]]", "[" T16 ", " T16 "]",                               \
     "nvjet_tst_64x8_64x16_2x1_v_bz_TNT", h##0, g##000, 4, e##1)                                   \
  "," CU("aten::topk", "[[16, " #n "], []]", "[" T16 ", \"Scalar\"]", TOPK_NAME, h##1, g##010, 7,  \
         e##2) "," CU("aten::sort", "[[16, 2], []]", "[" T16 ", \"Scalar\"]", SORT_NAME, h##2,     \
                      g##020, 7,                                                                   \
                      e##3) "," CU("aten::softmax", "[[16, 2], [], []]",                           \
                                   "[" T16 ", \"Scalar\", \"\"]", SOFTMAX_NAME, h##3, g##030, 2,   \
                                   e##4) "," CU("aten::index", "[[64, 512, 1024], []]",            \
                                                "[" T16 ", \"\"]",                                 \
                                                "void at::native::vectorized_gather_kernel<16, "   \
                                                "long>",                                           \
                                                h##4, g##040, 26,                                  \
                                                e##5) "," CU("aten::bmm",                          \
                                                             "[[32, 1, 512], [32, 512, 1024]]",    \
                                                             "[" T16 ", " T16 "]",                 \
                                                             "nvjet_tst_128x8_64x16_2x1_v_bz_NNT", \
                                                             h##5, g##070, 6, e##6)

static const char ROUTER[] = "{" CUDA_H100 "\"traceEvents\":[" ROUTE_AT(64, 100, 2, 3) "]}";
static const char SAMPLER[] = "{" CUDA_H100 "\"traceEvents\":[" ROUTE_AT(151936, 100, 2, 3) "]}";
/* vLLM's fused router (topk_softmax) beside a sampler's softmax + top-k */
static const char FUSED_ROUTER[] =
    "{" CUDA_H100 "\"traceEvents\":[" ROUTE_AT(151936, 100, 2, 3) "," CU(
        "_moe_C::topk_softmax", "[[16, 2], [16, 2], [16, 64]]", "[\"float\", \"int\", " T16 "]",
        "void vllm::moe::topkGatingSoftmax<8, 64, 4, 8, 32, "
        "int>(float const*, bool const*, float*, int, int*, "
        "int*, int, int, int)",
        1060, 2080, 3, 37) "]}";

/* The same layer twice, the step annotation around the first only (the second a warm-up
 * outside it): the saving per step is half the stage's, and the fusion table gives both */
static const char ROUTER_STEP[] = "{" CUDA_H100 "\"traceEvents\":[" VSTEP(1990, 200) "," ROUTE_AT(
    64, 100, 2, 3) "," ROUTE_AT(64, 110, 3, 4) "]}";

Test(routing, a_saving_per_step_also_gives_the_stages, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, ROUTER_STEP);
  const an_fuse_row *r = row_of(rep, "moe-routing-topk-softmax");
  cr_assert_not_null(r);
  cr_assert_float_eq(r->saving_us, 2 * (7 + 2), 1e-9, "%f", r->saving_us);
  cr_assert_float_eq(r->saving_step_us, 7 + 2, 1e-9, "%f", r->saving_step_us);
  char *md = test_render(rp_markdown, rep, rules);
  cr_assert(strstr(md, "| 9.00 (pieces but the largest; 18.00 over the stage) |"), "%s", md);
  free(md);
  an_report_destroy(rep);
}

/* The router's top-k (and its sort) and softmax are one row, whose saving is their time
 * but the largest piece's; the gate read the top-k op's last dimension: 64 experts. */
Test(routing, a_top_k_over_the_experts_and_softmax_are_one_routing_row, .init = setup,
     .fini = teardown) {
  an_report *rep = report_of(rules, ROUTER);
  const an_fuse_row *r = row_of(rep, "moe-routing-topk-softmax");
  cr_assert_not_null(r, "top-k over 64 experts, then softmax: the eager router");
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY);
  cr_assert_eq(r->n_related, 3, "top-k, its sort (a rider) and the softmax");
  cr_assert_float_eq(r->related_us, 7 + 7 + 2, 1e-9, "%f", r->related_us);
  cr_assert_float_eq(r->saving_us, 7 + 2, 1e-9, "every piece but the largest");
  cr_assert_float_eq(r->piece_last_dim, 64, 1e-9, "%g", r->piece_last_dim);
  an_report_destroy(rep);
  /* the same over the vocabulary is a sampler's softmax + top-k, no router: no row */
  cr_assert(no_row(rules, NULL, SAMPLER, "moe-routing-topk-softmax"));
}

/* Where the fused router runs, routing is fused already: the row is in use, never an
 * opportunity, whatever else runs a softmax and a top-k. */
Test(routing, a_fused_router_is_in_use, .init = setup, .fini = teardown) {
  an_report *rep = report_of(rules, FUSED_ROUTER);
  const an_fuse_row *r = row_of(rep, "moe-routing-topk-softmax");
  cr_assert_not_null(r);
  cr_assert(r->fused_in_use);
  cr_assert_float_eq(r->saving_us, 0, 1e-9);
  for (size_t i = 0; i < rep->n_summary; i++)
    cr_assert_neq(rep->summary[i].kind, AN_SUMMARY_FUSION, "no fusion item");
  an_report_destroy(rep);
}

/* ---------------------------------------------------------------- platform ports */

/* Review 17 defect 2: SGLang's fused QK-norm paths are gated on CUDA, so on ROCm a row of
 * theirs is no switch to turn on. A pattern that names what to port on a platform
 * (platform_ports) gives, on a run of that platform, origin port citing those texts and an
 * item that says to port it; on another platform the tree's paths stand. */
static const char PORT_PACK[] =
    "pack: port-test\n"
    "version: 1\n"
    "fusion_patterns:\n"
    "  - id: test-rope-attn-port\n"
    "    name: Test RoPE + attention\n"
    "    origin: mainline\n"
    "    candidate_paths: [\"python/test/fused_rope_attn.py\"]\n"
    "    platform_ports:\n"
    "      rocm: [\"the ROCm kernel to port\"]\n"
    "    split_groups:\n"
    "    - keywords: [\"rotary_embedding_kernel\"]\n"
    "      examples: {match: [\"void vllm::rotary_embedding_kernel<c10::BFloat16, true>\"], "
    "no_match: [\"nvjet_tst_64x8_64x16_2x1_v_bz_TNT\"]}\n"
    "    - keywords: [\"flash_fwd_splitkv_kernel\"]\n"
    "      examples: {match: [\"flash::flash_fwd_splitkv_kernel<T>\"], "
    "no_match: [\"nvjet_tst_64x8_64x16_2x1_v_bz_TNT\"]}\n"
    "    min_share_pct: 0.0\n"
    "    likely_share_pct: 0.0\n"
    "    priority: 100\n";

static te_rules *port_rules(void) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_path(r, TRIAGE_SOURCE_DIR "/rules", d), TE_OK);
  cr_assert_eq(te_rules_load_buffer(r, "port.yaml", PORT_PACK, strlen(PORT_PACK), d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK, "the port pack loads");
  te_diags_destroy(d);
  return r;
}

Test(ports, a_path_the_platform_lacks_is_a_port) {
  te_rules *r = port_rules();
  an_report *rep = test_run_trace(r, "vllm", QWEN3_ROCM, strlen(QWEN3_ROCM));
  const an_fuse_row *f = row_of(rep, "test-rope-attn-port");
  cr_assert_not_null(f, "RoPE and attention of each layer, split");
  cr_assert_eq(f->origin, AN_FUSION_PORT);
  cr_assert_eq(f->port_platform, AN_PLATFORM_ROCM);
  cr_assert_eq(f->n_candidate_paths, 1);
  cr_assert_str_eq(f->candidate_paths[0], "the ROCm kernel to port", "not the tree's path");
  cr_assert_str_eq(rp_fusion_origin(f->origin), "port");
  char *why = rp_fuse_rationale(f);
  cr_assert(strstr(why, "does not serve ROCm"), "%s", why);
  free(why);
  /* the item says to port it (the fixture's step waits for the host, so it has no fusion
   * item of its own: the words, from an item of the row's kind) */
  an_summary_item it = {.kind = AN_SUMMARY_FUSION,
                        .action = AN_ACTION_PORT_FUSION,
                        .port_platform = f->port_platform,
                        .what = f->pattern_name};
  cr_assert(strstr(rp_summary_action(&it, AN_WORKLOAD_SERVING), "Port the fused path to ROCm"));
  it.port_platform = AN_PLATFORM_UNKNOWN;
  cr_assert_str_eq(rp_summary_action(&it, AN_WORKLOAD_SERVING), "Port the upstream fused path");
  /* review 19 defect 12: a path a release has, with its switch, is an upgrade and the switch;
   * a path of another platform stays a port whatever its since says */
  it.since_version = "0.17";
  it.since_switch = "-cc.pass_config.fuse_rope_kvcache=True";
  cr_assert(strstr(rp_summary_action(&it, AN_WORKLOAD_SERVING), "Upgrade the framework"));
  char since[256];
  rp_since_text("vLLM", it.since_version, NULL, it.since_switch, since, sizeof since);
  cr_assert(strstr(since, "set `-cc.pass_config.fuse_rope_kvcache=True`"), "%s", since);
  it.port_platform = AN_PLATFORM_ROCM;
  cr_assert(strstr(rp_summary_action(&it, AN_WORKLOAD_SERVING), "Port the fused path to ROCm"));
  an_report_destroy(rep);
  rep = test_run_trace(r, "vllm", QWEN3_128, strlen(QWEN3_128));
  f = row_of(rep, "test-rope-attn-port");
  cr_assert_not_null(f);
  cr_assert_eq(f->origin, AN_FUSION_MAINLINE, "CUDA: the tree's path serves it");
  cr_assert_str_eq(f->candidate_paths[0], "python/test/fused_rope_attn.py");
  an_report_destroy(rep);
  te_rules_destroy(r);
}

/* Review 17 defect 4: SGLang's Qwen3-8B prefill on MI300X runs each per-head Q/K norm
 * (aiter's add_rmsnorm_quant<64, 8>) on a contiguous copy of Q or K; its tuning item read
 * "lever: none the packs know". The fusion row's chain took the copies along, so the norm
 * they feed is its fed piece, and the tuning item of that kernel names the pattern's lever
 * (a norm reading the strided views, or the fused kernel). */
Test(layers, the_norm_a_copy_feeds_names_its_lever) {
  te_rules *r = NULL;
  an_report *rep = NULL;
  const an_fuse_row *f = prefill_qk_row(&r, &rep);
  cr_assert_not_null(f->fed_piece, "the chain took the Q/K copies along");
  cr_assert(strstr(f->fed_piece, "add_rmsnorm_quant_kernel"), "%s", f->fed_piece);
  cr_assert_not_null(f->fed_lever);
  bool tuned = false;
  for (size_t i = 0; i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    for (size_t k = 0; k < it->n_kernels; k++)
      if (it->action == AN_ACTION_TUNE_KERNEL && !strcmp(it->kernels[k], f->fed_piece)) {
        tuned = true;
        cr_assert_eq(it->lever, f->fed_lever, "item %zu names the copy's lever", i + 1);
      }
  }
  cr_assert(tuned, "the norm has a tuning item");
  an_report_destroy(rep);
  te_rules_destroy(r);
}

/* Review 17 defect 3: SGLang's Qwen3-8B decode capture runs its zero-overhead batch
 * scheduler (resolve_future_token_ids_kernel, overlap_utils.py's frames), yet its host
 * stalls were told to check the server runs with it. A lever path the run shows in use
 * (summary.lever_in_use, matcher lever_ID_in_use) says it is on and what remains. */
#define SGLANG_DECODE TRIAGE_SHARED_DIR "/traces/real/sglang_qwen3_8b_decode_mi300x.json.gz"
Test(levers, a_path_the_capture_shows_on_says_so) {
  te_rules *r = NULL;
  an_report *rep = shared_report(SGLANG_DECODE, NULL, &r);
  if (!rep) cr_skip_test("no shared trace at %s", SGLANG_DECODE);
  size_t on = 0;
  for (size_t i = 0; i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    /* an item's own lever, or its pooled members' (the read back's item is never pooled,
     * review 22 defect 6) */
    for (size_t k = 0; k <= it->n_pool; k++) {
      const char *l = k < it->n_pool ? it->pool[k].lever : it->lever;
      if (!l || !strstr(l, "zero-overhead")) continue;
      on++;
      cr_assert(strstr(l, "is on in this capture"), "%s", l);
      cr_assert_null(strstr(l, "check the server runs with it"), "%s", l);
    }
  }
  cr_assert_geq(on, 2, "the graph launch's and the designed wait's levers");
  an_report_destroy(rep);
  te_rules_destroy(r);
}
