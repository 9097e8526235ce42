/*
 * test_verdicts.c - verdicts that hold on traces nobody tuned them to (issue 31): the
 * fused path in use, gates read from the trace, the chain gate; each fixture is a small
 * Kineto trace with real kernel names, launch calls and step annotations.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pipeline.h"
#include "cli/rules_setup.h"
#include "default_rules.h"
#include "report/text.h"
#include "run_trace.h"

static te_rules *rules;

static void setup(void) { rules = test_default_rules(); }
static void teardown(void) { te_rules_destroy(rules); }

static an_report *run_framework(const char *fw, const char *data) {
  return test_run_trace(rules, fw, data, strlen(data));
}

/* The reference's compatibility rules (--compat reference); the caller destroys them
 * after the reports made with them. */
static te_rules *reference_rules(void) {
  triage_rules_setup_options so = {.compat = "reference"};
  te_rules *ref = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(ref);
  return ref;
}

/* run_framework under other rules (the compatibility pack's) than the suite's. */
static an_report *run_framework_with(te_rules *with, const char *fw, const char *data) {
  return test_run_trace(with, fw, data, strlen(data));
}

static const an_stage_report *stage_of(const an_report *rep, const char *id) {
  for (size_t s = 0; s < rep->n_stages; s++)
    if (!strcmp(rep->stages[s].id, id)) return &rep->stages[s];
  return NULL;
}

static const an_fuse_row *fuse_in(const an_stage_report *st, const char *id) {
  for (size_t i = 0; st && i < st->n_fuse; i++)
    if (!strcmp(st->fuse[i].pattern_id, id)) return &st->fuse[i];
  return NULL;
}

static const an_fuse_row *fuse_any(const an_report *rep, const char *id) {
  for (size_t s = 0; s < rep->n_stages; s++)
    if (fuse_in(&rep->stages[s], id)) return fuse_in(&rep->stages[s], id);
  return NULL;
}

/* Whether a summary item is the fusion row r. */
static bool summary_names(const an_report *rep, const an_stage_report *st, const an_fuse_row *r) {
  for (size_t i = 0; i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    if (it->kind == AN_SUMMARY_FUSION && !strcmp(it->stage_id, st->id) && &st->fuse[it->row] == r)
      return true;
  }
  return false;
}

/* A kernel on stream st with its launch (correlation c), a launch call on the host
 * thread; K on stream 7; a GPU step annotation. */
#define KS(name, ts, dur, c, st)                                                                 \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #st ",\"ts\":" #ts \
  ",\"dur\":" #dur ",\"args\":{\"stream\":" #st ",\"correlation\":" #c                           \
  "}},"                                                                                          \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,\"tid\":1,"    \
  "\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #c "}}"
#define K(name, ts, dur, c) KS(name, ts, dur, c, 7)
#define STEP(name, ts, dur)                                        \
  "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"" name \
  "\",\"pid\":0,\"tid\":7,"                                        \
  "\"ts\":" #ts ",\"dur\":" #dur "}"
#define H100_TP2                                                             \
  "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2},"  \
  "\"cuda_runtime_version\":12080,\"deviceProperties\":[{\"id\":0,\"name\":" \
  "\"NVIDIA H100 80GB HBM3\",\"computeMajor\":9,\"computeMinor\":0}],"

#define AR "void sglang::cross_device_reduce_1stage<__nv_bfloat16, 2>"
#define NORM "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>"
#define GEMM "nvjet_tst_64x8_64x16_2x1_v_bz_TNT"
#define AR_FUSED                                                                             \
  "void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<"       \
  "(flashinfer::trtllm_allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, true, " \
  "true>"
#define ACT "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> >"

/* A prefill of 15360 tokens runs the split all-reduce + RMSNorm (over SGLang's 2048-token
 * cap), decode runs the fused all-reduce + RMSNorm kernel, the fused add+RMSNorm and
 * SiLU-and-mul kernels run everywhere. */
#define EXTEND_SPLIT                                                                     \
  STEP("step[EXTEND bs=15 toks=15360]", 2000, 3000)                                      \
  "," K(AR, 2010, 300, 21) "," K(NORM, 2320, 100, 22) "," K(GEMM, 2430, 1500, 23) "," K( \
      ACT, 3940, 100, 24) "," K(AR, 4050, 300, 25) "," K(NORM, 4360, 100, 26)
static const char PREFILL_DECODE[] =
    "{" H100_TP2
    "\"traceEvents\":[" STEP("step[DECODE bs=32]", 0, 1000) "," K(AR_FUSED, 10, 30, 1) "," K(
        GEMM, 50, 100, 2) "," K(ACT, 160, 10, 3) "," K(AR_FUSED, 180, 30, 4) "," EXTEND_SPLIT "]}";
static const char PREFILL_ONLY[] = "{" H100_TP2 "\"traceEvents\":[" EXTEND_SPLIT "]}";

/* Issue 31: a fused kernel that runs is never an opportunity. In decode the fused
 * all-reduce + RMSNorm runs (in use); prefill keeps the split, which is a size cap, not a
 * missing path (in use elsewhere); the fused add+RMSNorm and act_and_mul kernels are in
 * use. None of them becomes a summary action. */
Test(fuse, fused_path_in_use_is_never_an_action, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", PREFILL_DECODE);
  const an_stage_report *dec = stage_of(rep, "decode"), *ext = stage_of(rep, "extend");
  cr_assert(dec && ext);
  const an_fuse_row *ar_dec = fuse_in(dec, "flashinfer-allreduce-fusion");
  const an_fuse_row *ar_ext = fuse_in(ext, "flashinfer-allreduce-fusion");
  cr_assert(ar_dec && ar_ext);
  cr_assert_eq(ar_dec->state, AN_FUSE_IN_USE);
  cr_assert_eq(ar_ext->state, AN_FUSE_IN_USE_ELSEWHERE, "the prefill split is a size cap");
  cr_assert(ar_dec->fused_in_use && ar_ext->fused_in_use);
  const an_fuse_row *act = fuse_in(ext, "fused-act-and-mul");
  const an_fuse_row *norm = fuse_in(ext, "fused-add-rmsnorm");
  cr_assert(act && norm && act->fused_in_use && norm->fused_in_use);
  for (size_t s = 0; s < rep->n_stages; s++)
    for (size_t i = 0; i < rep->stages[s].n_fuse; i++)
      if (rep->stages[s].fuse[i].fused_in_use)
        cr_assert_not(summary_names(rep, &rep->stages[s], &rep->stages[s].fuse[i]),
                      "an in-use row (%s) is no action", rep->stages[s].fuse[i].pattern_id);
  an_report_destroy(rep);
}

/* Issue 31 (deviation F12): the fused MoE router family whatever launched it. An SGLang
 * MoE decode on MI300X routed by AITER's fused biased grouped top-k: the router row is the
 * fused path in use, never a summary action. */
#define AITER_GATE "_ZN5aiter26biased_grouped_topk_kernelIfLb1ELb1EEEvPT_S2_PfPiS3_iiiif"
static const char AITER_ROUTED[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 0, 2000) "," K(
        AITER_GATE, 10, 60, 1) "," K(GEMM, 80, 900, 2) "," K(AITER_GATE, 990, 60, 3) "]}";

Test(fuse, fused_router_family_is_in_use, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", AITER_ROUTED);
  const an_fuse_row *r = fuse_any(rep, "fused-moe-grouped-topk-gate");
  cr_assert_not_null(r, "the grouped top-k gate row");
  cr_assert(r->fused_in_use, "AITER's fused gate is the fused path");
  cr_assert_eq(r->state, AN_FUSE_IN_USE);
  for (size_t s = 0; s < rep->n_stages; s++)
    for (size_t i = 0; i < rep->stages[s].n_fuse; i++)
      if (rep->stages[s].fuse[i].fused_in_use)
        cr_assert_not(summary_names(rep, &rep->stages[s], &rep->stages[s].fuse[i]),
                      "an in-use row (%s) is no action", rep->stages[s].fuse[i].pattern_id);
  an_report_destroy(rep);
}

/* The same prefill with no fused kernel anywhere: every step runs 15360 tokens, over the
 * cap, so the split is by design (over cap: kept in the JSON, not printed, no action). */
Test(fuse, size_cap_keeps_the_split, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", PREFILL_ONLY);
  const an_stage_report *ext = stage_of(rep, "extend");
  cr_assert_not_null(ext);
  cr_assert_eq(ext->exec.tokens_min, 15360);
  cr_assert_eq(ext->exec.modes, TE_MODE_EAGER, "launched one by one");
  const an_fuse_row *ar = fuse_in(ext, "flashinfer-allreduce-fusion");
  cr_assert_not_null(ar);
  cr_assert_eq(ar->state, AN_FUSE_OVER_CAP);
  cr_assert_not(ar->shown);
  cr_assert_not(summary_names(rep, ext, ar));
  an_report_destroy(rep);
}

/* Gate facts the trace does not state: the same split with no step annotation (tokens
 * unknown) is a row of confidence unknown, never Confirmed; with a decode step of 32
 * tokens every gate holds. */
#define DECODE_SPLIT(step)                                                                \
  "{" H100_TP2 "\"traceEvents\":[" step K(AR, 10, 300, 1) "," K(NORM, 320, 100, 2) "," K( \
      GEMM, 430, 1500, 3) "," K(AR, 1940, 300, 4) "," K(NORM, 2250, 100, 5) "]}"
static const char SPLIT_NO_TOKENS[] = DECODE_SPLIT("");
static const char SPLIT_32_TOKENS[] = DECODE_SPLIT(STEP("step[DECODE bs=32]", 0, 3000) ",");

Test(fuse, unknown_gate_facts_are_never_confirmed, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", SPLIT_NO_TOKENS);
  const an_fuse_row *ar = fuse_any(rep, "flashinfer-allreduce-fusion");
  cr_assert_not_null(ar);
  cr_assert_eq(ar->state, AN_FUSE_GATES_UNKNOWN);
  cr_assert_eq(ar->confidence, AN_CONFIDENCE_UNKNOWN);
  cr_assert(ar->unknown_gates & AN_GATE_TOKENS);
  cr_assert_eq(rep->run.context.topology.value, AN_TOPOLOGY_SINGLE_NODE,
               "the custom all-reduce only runs inside one node");
  an_report_destroy(rep);
  rep = run_framework("sglang", SPLIT_32_TOKENS);
  ar = fuse_any(rep, "flashinfer-allreduce-fusion");
  cr_assert_not_null(ar);
  cr_assert_eq(ar->state, AN_FUSE_OPPORTUNITY);
  cr_assert_eq(ar->confidence, AN_CONFIDENCE_CONFIRMED);
  cr_assert_eq(ar->unknown_gates, 0);
  an_report_destroy(rep);
}

/* vLLM's RoPE + KV-cache fusion is a torch.compile pass: an eager trace (launch calls, no
 * compiled kernel) does not get it; a compiled decode of 32 tokens does, and a compiled
 * prefill of 8192 tokens is over its 256-token cap. */
#define ROCM "\"hip_runtime_version\":60342134,"
#define ROPE "void vllm::rotary_embedding_kernel<c10::BFloat16, true>"
#define KVW                                                                    \
  "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, " \
  "(vllm::Fp8KVCacheDataType)0>"
#define ATTN "kernel_unified_attention_3d"
#define CAST "triton_poi_fused__to_copy_1"
#define ROPE_KV(step, extra)                                                                  \
  "{" ROCM "\"traceEvents\":[" step "," extra K(ROPE, 10, 20, 1) "," K(KVW, 35, 10, 2) "," K( \
      ATTN, 50, 200, 3) "]}"
static const char VLLM_EAGER[] =
    ROPE_KV(STEP("execute_32_context_0(sq0sk0)_generation_32(sq32sk3000)", 0, 400), "");
static const char VLLM_COMPILED[] = ROPE_KV(
    STEP("execute_32_context_0(sq0sk0)_generation_32(sq32sk3000)", 0, 400), K(CAST, 0, 5, 9) ",");
static const char VLLM_PREFILL[] = ROPE_KV(
    STEP("execute_8192_context_9(sq8155sk8430)_generation_0()", 0, 400), K(CAST, 0, 5, 9) ",");

Test(fuse, mode_and_token_gates, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", VLLM_EAGER);
  cr_assert_null(fuse_any(rep, "vllm-rope-kvcache"), "an eager trace runs no compile pass");
  an_report_destroy(rep);
  rep = run_framework("vllm", VLLM_COMPILED);
  const an_fuse_row *r = fuse_any(rep, "vllm-rope-kvcache");
  cr_assert_not_null(r);
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY);
  cr_assert_eq(rep->stages[0].exec.modes, TE_MODE_EAGER | TE_MODE_COMPILE);
  an_report_destroy(rep);
  rep = run_framework("vllm", VLLM_PREFILL);
  r = fuse_any(rep, "vllm-rope-kvcache");
  cr_assert_not_null(r);
  cr_assert_eq(r->state, AN_FUSE_OVER_CAP, "8192 tokens is over the 256-token cap");
  cr_assert_eq(r->step_tokens, 8192);
  cr_assert_eq(r->cap_tokens, 256);
  an_report_destroy(rep);
}

/* Pieces come from the same layer and stream: a RoPE kernel and a KV-cache write with a
 * GEMM between them are not one chain; right after each other they are. */
#define SROPE "void rotary_embedding_kernel<c10::BFloat16, true>"
#define SKVW "void (anonymous namespace)::store_kvcache<2048l, 4, false, long>"
static const char ROPE_GEMM_KV[] = "{" ROCM "\"traceEvents\":[" K(SROPE, 0, 20, 1) "," K(
    GEMM, 25, 300, 2) "," K(SKVW, 330, 20, 3) "]}";
static const char ROPE_KV_NEXT[] = "{" ROCM "\"traceEvents\":[" K(SROPE, 0, 20, 1) "," K(
    SKVW, 25, 20, 2) "," K(GEMM, 50, 300, 3) "]}";

Test(fuse, chain_gate_pairs_neighbours_only, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", ROPE_GEMM_KV);
  cr_assert_null(fuse_any(rep, "fused-qk-rope-reshape-kv-cache"), "a GEMM between: two layers");
  an_report_destroy(rep);
  rep = run_framework("sglang", ROPE_KV_NEXT);
  const an_fuse_row *r = fuse_any(rep, "fused-qk-rope-reshape-kv-cache");
  cr_assert_not_null(r);
  cr_assert_float_eq(r->chained_pct, 100.0, 1e-9);
  an_report_destroy(rep);
}

/* Audit gap 5: the same pair on two streams (a RoPE on the main stream, the cache write
 * on a side stream right after it in time) is no chain: pieces of one layer run on one
 * stream in launch order. */
static const char ROPE_KV_TWO_STREAMS[] = "{" ROCM "\"traceEvents\":[" K(SROPE, 0, 20, 1) "," KS(
    SKVW, 25, 20, 2, 9) "," K(GEMM, 50, 300, 3) "]}";

Test(fuse, chain_gate_keeps_to_one_stream, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", ROPE_KV_TWO_STREAMS);
  cr_assert_null(fuse_any(rep, "fused-qk-rope-reshape-kv-cache"), "pieces on two streams");
  an_report_destroy(rep);
}

/* RoPE, `between` elementwise kernels (no breaker, no piece), then the cache write, on one
 * stream; the caller frees the trace. */
#define FILLER                                                                        \
  "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, " \
  "at::detail::Array<char*, 2> >"
static char *rope_fillers_kv(long between) {
  size_t cap = 4096 + 512 * (size_t)between, at = 0;
  char *t = malloc(cap);
  cr_assert_not_null(t);
  at += (size_t)snprintf(t, cap, "{" ROCM "\"traceEvents\":[" K(SROPE, 0, 20, 1));
  long ts = 25;
  for (long i = 0; i < between; i++, ts += 10)
    at += (size_t)snprintf(t + at, cap - at, "," KS(FILLER, % ld, 5, % ld, 7), ts, 100 + i, ts,
                           100 + i);
  snprintf(t + at, cap - at, "," KS(SKVW, % ld, 20, 2, 7) "," KS(GEMM, % ld, 300, 3, 7) "]}", ts,
           ts, ts + 25, ts + 25);
  return t;
}

/* The distance half of the chain gate: fuse.chain_max_between kernels between two pieces
 * keep them one chain, one more splits them (the fixture follows the pack's setting). */
Test(fuse, chain_gate_max_between_is_the_distance, .init = setup, .fini = teardown) {
  long most = te_rules_settings(rules)->fuse_chain_max_between;
  cr_assert_gt(most, 0);
  char *near = rope_fillers_kv(most), *far = rope_fillers_kv(most + 1);
  an_report *rep = run_framework("sglang", near);
  const an_fuse_row *r = fuse_any(rep, "fused-qk-rope-reshape-kv-cache");
  cr_assert_not_null(r, "%ld kernels between: one chain", most);
  cr_assert_float_eq(r->chained_pct, 100.0, 1e-9);
  an_report_destroy(rep);
  rep = run_framework("sglang", far);
  cr_assert_null(fuse_any(rep, "fused-qk-rope-reshape-kv-cache"), "%ld kernels between: too far",
                 most + 1);
  an_report_destroy(rep);
  free(near);
  free(far);
}

/* Review-1 defects 4 and 3: a graph-replayed Qwen3 layer (no Python frames) on one stream,
 * in launch order: input add+RMSNorm -> QKV GEMM -> q copy -> q RMSNorm -> k copy -> k
 * RMSNorm -> RoPE -> KV write -> attention. The QK-norm -> RoPE -> KV-write chain is one
 * fusion row whose norm piece is the per-head norm between the QKV GEMM and RoPE (the
 * layer's input add+RMSNorm sits before the GEMM), with the contiguous copies riding
 * along; the summary names the pieces by role, and the copy is no "fuse with neighbour"
 * item of its own. */
#define QNORM                                                                                 \
  "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_" \
  "S4_diiiiiiib"
#define INNORM                                                                                  \
  "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_" \
  "S4_diiiiiiib"
#define QKCOPY                                                                  \
  "void at::native::elementwise_kernel_manual_unroll<128, 8, "                  \
  "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::" \
  "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}>"
#define PAGED "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, 1>"
#define QWEN_LAYER(t, c)                                                                         \
  K(INNORM, t##00, 6, c##0)                                                                      \
  "," K(GEMM, t##10, 25, c##1) "," K(QKCOPY, t##40, 6, c##2) "," K(QNORM, t##50, 5, c##3) "," K( \
      QKCOPY, t##60, 6, c##4) "," K(QNORM, t##70, 5,                                             \
                                    c##5) "," K(SROPE, t##80, 7,                                 \
                                                c##6) "," K(SKVW, t##88, 6,                      \
                                                            c##7) "," K(PAGED, t##95, 4, c##8)
static const char QWEN_DECODE[] =
    "{" ROCM "\"traceEvents\":[" STEP("execute_32_context_0_generation_32", 0, 1000) "," QWEN_LAYER(
        1, 1) "," QWEN_LAYER(2, 2) "," QWEN_LAYER(3, 3) "," QWEN_LAYER(4, 4) "]}";

Test(fuse, the_layer_chain_is_one_fusion_by_launch_order, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", QWEN_DECODE);
  const an_fuse_row *r = fuse_any(rep, "fused-qk-norm-rope-kv-cache");
  cr_assert_not_null(r, "the chain is found without Python frames");
  bool copy = false, qnorm = false;
  for (size_t k = 0; k < r->n_related; k++) {
    cr_assert(!strstr(r->related[k], "Li256ELi16ELb1"), "the input add+RMSNorm is no piece");
    copy |= strstr(r->related[k], "direct_copy") != NULL;
    qnorm |= strstr(r->related[k], "Li64ELi8ELb0") != NULL;
  }
  cr_assert(copy && qnorm, "the per-head norm is the piece, the copies ride along");
  cr_assert_eq(r->n_roles, 4);
  cr_assert_str_eq(r->roles[0], "Q/K contiguous copy");
  /* saving: copies 4 x 12 + norms 4 x 10 + RoPE 4 x 7 + KV write 4 x 6 less the largest
   * piece's pass (the copies, 48 us) */
  cr_assert_float_eq(r->saving_us, 40.0 + 28.0 + 24.0, 1e-6);
  const an_stage_report *st = &rep->stages[0];
  size_t chain_items = 0;
  for (size_t i = 0; i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    for (size_t k = 0; k < it->n_kernels; k++)
      if (strstr(it->kernels[k], "direct_copy")) {
        cr_assert_eq(it->kind, AN_SUMMARY_FUSION, "the copy is part of the chain's item");
        cr_assert_eq(it->n_roles, 4);
        chain_items++;
      }
  }
  cr_assert_eq(chain_items, 1, "one item for the chain");
  size_t cited = 0;
  for (size_t i = 0; st->overlap && i < st->overlap->n_rows; i++) {
    const an_overlap_row *o = &st->overlap->rows[i];
    if (o->recommendation == AN_RECOMMEND_TRY_FUSION)
      cr_assert_neq(o->fusion_partner, AN_PARTNER_NONE);
    /* review 5: a piece of the fusion row is that row's advice, folded and cited, never a
     * second row of the table */
    if (o->fusion_partner == AN_PARTNER_FUSE_ROW) {
      cr_assert(o->cites_fusion && o->below_floor, "%s", o->kernel);
      cited++;
    }
  }
  cr_assert_gt(cited, 0, "the chain's pieces are overlap rows to fold");
  cr_assert_leq(st->overlap->n_cites_fusion, cited,
                "counted once: those not already under the floor");
  an_report_destroy(rep);
}

/* ------------------------------------------------------------------ topology */

/* The default packs and the test pack tests/data/rules/one-node-fusion.yaml (a vLLM
 * all-reduce + RMSNorm fusion with `single_node: true`); the caller destroys them after
 * the reports, which borrow the patterns' ids. */
static te_rules *with_one_node_pack(void) {
  const char *extra[] = {TRIAGE_FIXTURE_DIR "/rules/one-node-fusion.yaml"};
  triage_rules_setup_options so = {.extra = extra, .n_extra = 1};
  te_rules *with = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(with, "the test pack loads");
  return with;
}

/* A rank-set directory (tests/data/ranks, one file per rank, each stating its host_name). */
static an_report *run_ranks_dir(const te_rules *with, const char *dir) {
  an_run_options o = {0};
  o.formal = (an_input){.path = dir};
  o.min_share_pct = -1;
  o.rank_workers = 1;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, with, &rep, &err), AN_OK, "%s", err.message);
  return rep;
}

/* Issue 31, the topology gate: TP 8 over two nodes (ranks 0-3 name gpu-node-00, 4-7
 * gpu-node-01) is multi-node from the group's host names and a one-node fusion is not
 * offered; DP 2 x TP 4 on two nodes keeps each TP group on one node (ranks 0-3 on
 * gpu-node-00), so the same fusion is offered there. */
Test(fuse, topology_from_the_ranks_host_names, .init = setup, .fini = teardown) {
  te_rules *with = with_one_node_pack();
  an_report *rep = run_ranks_dir(with, TRIAGE_FIXTURE_DIR "/ranks/vllm-v1-tp8-2nodes");
  cr_assert_eq(rep->run.context.topology.value, AN_TOPOLOGY_MULTI_NODE);
  cr_assert_eq(rep->run.context.topology.source, AN_SOURCE_RANK_HOSTS);
  cr_assert_null(fuse_any(rep, "test-one-node-allreduce-rmsnorm"), "the TP group spans nodes");
  cr_assert_not_null(fuse_any(rep, "vllm-allreduce-rmsnorm"), "the split itself is there");
  an_report_destroy(rep);
  rep = run_ranks_dir(with, TRIAGE_FIXTURE_DIR "/ranks/vllm-v1-dp2-tp4");
  cr_assert_eq(rep->run.context.topology.value, AN_TOPOLOGY_SINGLE_NODE);
  cr_assert_eq(rep->run.context.topology.source, AN_SOURCE_RANK_HOSTS);
  const an_fuse_row *r = fuse_any(rep, "test-one-node-allreduce-rmsnorm");
  cr_assert_not_null(r, "one node: the fusion is offered");
  cr_assert_not(r->unknown_gates & AN_GATE_TOPOLOGY);
  an_report_destroy(rep);
  te_rules_destroy(with);
}

/* One rank's trace names its own host only: with no collective that only runs inside one
 * node (an RCCL ring all-reduce, not the custom one) the topology is unknown, and aiter's
 * all-reduce fusion, built on its one-node custom all-reduce, is a row of confidence
 * unknown, never Confirmed. */
#define RCCL_AR "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
static const char ROCM_TP2_RCCL[] =
    "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2},\"host_name\":"
    "\"gpu-node-00\"," ROCM
    "\"traceEvents\":[" STEP("step[DECODE bs=32]", 0, 3000) "," K(RCCL_AR, 10, 300, 1) "," K(
        INNORM, 320, 100, 2) "," K(GEMM, 430, 1500, 3) "," K(RCCL_AR, 1940, 300,
                                                             4) "," K(INNORM, 2250, 100, 5) "]}";

Test(fuse, one_rank_topology_is_unknown, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", ROCM_TP2_RCCL);
  cr_assert_eq(rep->run.context.topology.value, AN_TOPOLOGY_UNKNOWN);
  const an_fuse_row *r = fuse_any(rep, "aiter-allreduce-fusion");
  cr_assert_not_null(r);
  cr_assert(r->unknown_gates & AN_GATE_TOPOLOGY);
  cr_assert_eq(r->confidence, AN_CONFIDENCE_UNKNOWN);
  cr_assert_eq(r->state, AN_FUSE_GATES_UNKNOWN);
  an_report_destroy(rep);
}

/* Two SGLang ranks of TP 2 on ROCm (an RCCL ring all-reduce, no custom one) in a
 * directory, rank r's file naming host hosts[r] before its traceEvents list (where Kineto
 * writes distributedInfo) or after it (top-level members may follow the list); the
 * topology of the run. */
static an_topology_fact two_rank_topology(const char *const hosts[2], bool host_after) {
  char dir[] = "/tmp/triage-hosts-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[2][128];
  for (int r = 0; r < 2; r++) {
    char host[96];
    snprintf(host, sizeof host, "\"host_name\":\"%s\"", hosts[r]);
    snprintf(path[r], sizeof path[r], "%s/run-TP-%d.trace.json", dir, r);
    FILE *f = fopen(path[r], "w");
    cr_assert_not_null(f);
    fprintf(
        f,
        "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":%d,\"world_size\":2},%s%s"
        "\"traceEvents\":[" STEP("step[DECODE bs=32]", 0, 3000) "," K(RCCL_AR, 10, 300, 1) "," K(
            INNORM, 320, 100, 2) "," K(GEMM, 430, 1500, 3) "," K(RCCL_AR, 1940, 300,
                                                                 4) "," K(INNORM, 2250, 100,
                                                                          5) "]%s%s}",
        r, host_after ? "" : host, host_after ? "" : ",", host_after ? "," : "",
        host_after ? host : "");
    fclose(f);
  }
  an_run_options o = {0};
  o.formal = (an_input){.path = dir};
  o.min_share_pct = -1;
  o.rank_workers = 1;
  o.framework = te_rules_framework_lookup(rules, "sglang");
  o.framework_source = AN_SOURCE_COMMAND_LINE;
  an_report *rep = NULL;
  an_error err;
  cr_assert_eq(an_run(&o, rules, &rep, &err), AN_OK, "%s", err.message);
  an_topology_fact got = rep->run.context.topology;
  an_report_destroy(rep);
  for (int r = 0; r < 2; r++) remove(path[r]);
  rmdir(dir);
  return got;
}

/* Issue 31 (closing-7 Left): the ranks' host names decide the topology wherever each file
 * states its top-level host_name: before its events (discovery's probe reads it) or after
 * them (the Ranks section's reading of the whole file finds it). */
Test(fuse, host_names_before_or_after_the_events, .init = setup, .fini = teardown) {
  const char *two[2] = {"gpu-node-00", "gpu-node-01"}, *one[2] = {"gpu-node-00", "gpu-node-00"};
  for (int after = 0; after < 2; after++) {
    an_topology_fact t = two_rank_topology(two, after);
    cr_assert_eq(t.value, AN_TOPOLOGY_MULTI_NODE, "host_name %s the events",
                 after ? "after" : "before");
    cr_assert_eq(t.source, AN_SOURCE_RANK_HOSTS);
    t = two_rank_topology(one, after);
    cr_assert_eq(t.value, AN_TOPOLOGY_SINGLE_NODE, "host_name %s the events",
                 after ? "after" : "before");
    cr_assert_eq(t.source, AN_SOURCE_RANK_HOSTS);
  }
}

/* The message-size gate reads the collectives' args: vLLM's FlashInfer all-reduce fusion
 * takes at most 4 MiB at TP 8 (largest cap across Hopper / Blackwell); an NCCL
 * all-reduce of 8192 x 4096 BFloat16 elements (64 MiB) in a compiled prefill is over it;
 * one of 32 x 4096 elements is not. */
#define H100_TP8                                                             \
  "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":8},"  \
  "\"cuda_runtime_version\":12080,\"deviceProperties\":[{\"id\":0,\"name\":" \
  "\"NVIDIA H100 80GB HBM3\",\"computeMajor\":9,\"computeMinor\":0}],"
#define NCCL_AR(ts, nelems, c)                                                                \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL("     \
  "ncclDevKernelArgsStorage<4096ul>)\",\"pid\":0,\"tid\":7,\"ts\":" #ts                       \
  ",\"dur\":300,\"args\":{\"stream\":7,\"correlation\":" #c ",\"In msg nelems\":" #nelems     \
  ",\"Out msg nelems\":" #nelems                                                              \
  ",\"Group size\":8,\"dtype\":\"BFloat16\"}},"                                               \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,\"tid\":1," \
  "\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #c "}}"
#define VNORM "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>"
#define AR_NORM(nelems)                                                                            \
  "{" H100_TP8                                                                                     \
  "\"traceEvents\":[" K(CAST, 0, 5, 9) "," NCCL_AR(10, nelems, 1) "," K(VNORM, 320, 100, 2) "," K( \
      GEMM, 430, 1500, 3) "," NCCL_AR(1940, nelems, 4) "," K(VNORM, 2250, 100, 5) "]}"
static const char AR_BIG[] = AR_NORM(33554432);
static const char AR_SMALL[] = AR_NORM(131072);

Test(fuse, message_cap_from_collective_args, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", AR_BIG);
  const an_fuse_row *r = fuse_any(rep, "vllm-allreduce-rmsnorm");
  cr_assert_not_null(r);
  cr_assert_eq(r->state, AN_FUSE_OVER_CAP, "64 MiB is over the 4 MiB cap at TP 8");
  cr_assert_float_eq(r->message_bytes, 64.0 * 1048576.0, 1e-3);
  an_report_destroy(rep);
  rep = run_framework("vllm", AR_SMALL);
  r = fuse_any(rep, "vllm-allreduce-rmsnorm");
  cr_assert_not_null(r);
  cr_assert_eq(r->state, AN_FUSE_OPPORTUNITY, "256 KiB is under the cap");
  cr_assert_eq(r->unknown_gates, 0);
  an_report_destroy(rep);
}

/* Issue 31 gate: vLLM's all-reduce + RMSNorm pass takes FlashInfer's kernels and caps on
 * CUDA; on ROCm it is another pass (AITER's fused kernel on its custom all-reduce). The
 * same compiled TP-8 split on an MI300X (hip_runtime_version) is never offered as the
 * FlashInfer pattern, and the ROCm pattern is; on the H100 the ROCm pattern is not. */
#define MI300X_TP8                                                               \
  "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":8}," ROCM \
  "\"deviceProperties\":[{\"id\":0,\"name\":\"AMD Instinct MI300X\"}],"
static const char AR_ROCM[] =
    "{" MI300X_TP8
    "\"traceEvents\":[" K(CAST, 0, 5, 9) "," NCCL_AR(10, 131072, 1) "," K(VNORM, 320, 100, 2) "," K(
        GEMM, 430, 1500, 3) "," NCCL_AR(1940, 131072, 4) "," K(VNORM, 2250, 100, 5) "]}";

Test(fuse, flashinfer_fusion_is_not_offered_on_rocm, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", AR_ROCM);
  cr_assert_eq(rep->run.context.platform.value, AN_PLATFORM_ROCM);
  cr_assert_null(fuse_any(rep, "vllm-allreduce-rmsnorm"), "FlashInfer's pass is CUDA's");
  const an_fuse_row *r = fuse_any(rep, "vllm-aiter-allreduce-rmsnorm");
  cr_assert_not_null(r, "the ROCm pass folds the same split");
  cr_assert_not(r->unknown_gates & AN_GATE_PLATFORM);
  an_report_destroy(rep);
  rep = run_framework("vllm", AR_SMALL);
  cr_assert_not_null(fuse_any(rep, "vllm-allreduce-rmsnorm"));
  cr_assert_null(fuse_any(rep, "vllm-aiter-allreduce-rmsnorm"), "AITER's pass is ROCm's");
  an_report_destroy(rep);
}

/* ------------------------------------------------------------------ overlap */

static const an_overlap_row *overlap_row(const an_report *rep, const char *kernel_part) {
  for (size_t s = 0; s < rep->n_stages; s++) {
    const an_overlap_stage *o = rep->stages[s].overlap;
    for (size_t i = 0; o && i < o->n_rows; i++)
      if (strstr(o->rows[i].kernel, kernel_part)) return &o->rows[i];
  }
  return NULL;
}

/* An eager TP-2 decode layer, four times: the staging copy into the custom all-reduce's
 * buffer (copy engine), the all-reduce 40 us later (launch gaps: no tight gap), the
 * fused add+RMSNorm it feeds, a GEMM; a side stream runs one tiny copy under a GEMM
 * (a few hundredths of a percent of the busy time on two streams). */
#define DTOD(ts, c)                                                                             \
  "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"pid\":0," \
  "\"tid\":7,\"ts\":" #ts ",\"dur\":12,\"args\":{\"stream\":7,\"correlation\":" #c              \
  "}},"                                                                                         \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":0,\"tid\":1,"    \
  "\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #c "}}"
#define SIDE(ts)                                                                                \
  "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0," \
  "\"tid\":8,\"ts\":" #ts ",\"dur\":1,\"args\":{\"stream\":8,\"correlation\":99}}"
#define LAYER(t0, t1, t2, t3, c) \
  DTOD(t0, c##1) "," K(AR, t1, 60, c##2) "," K(NORM, t2, 30, c##3) "," K(GEMM, t3, 500, c##4)
static const char EAGER_TP2[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=8]", 0, 9000) "," LAYER(
        1000, 1050, 1150, 1200, 1) "," LAYER(2000, 2050, 2150, 2200,
                                             2) "," LAYER(3000, 3050, 3150, 3200,
                                                          3) "," LAYER(4000, 4050, 4150, 4200,
                                                                       4) "," SIDE(1300) "]}";

/* Issue 31: the copy next to the collective is a staging copy (eliminate) although eager
 * launch gaps defeat the tight-gap test; the serial all-reduce feeding its norm is a
 * restructuring, not "check deps", whatever the side stream's crumbs say about the stream
 * count: it recovers at most its steady exposed time, which the GEMMs beside it could
 * hide once restructured (review 3: a row put forward has something to win); the norm is
 * `norm` in the overlap row as in the kernel table; Exposed + wait + Hidden make the
 * row's time. */
Test(overlap, same_mechanism_same_advice, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", EAGER_TP2);
  const an_overlap_row *copy = overlap_row(rep, "Memcpy DtoD");
  const an_overlap_row *ar = overlap_row(rep, "cross_device_reduce");
  cr_assert(copy && ar);
  cr_assert_eq(copy->recommendation, AN_RECOMMEND_ELIMINATE);
  cr_assert_eq(ar->recommendation, AN_RECOMMEND_RESTRUCTURE);
  cr_assert_eq(ar->priority, AN_PRIORITY_P2);
  cr_assert_gt(ar->recoverable_ms, 0.0);
  cr_assert_leq(ar->recoverable_ms, ar->exposed_ms + 1e-12);
  cr_assert(!ar->below_floor);
  cr_assert_str_eq(ar->dep_class, "serial");
  const an_overlap_row *norm = overlap_row(rep, "FusedAddRMSNorm");
  if (norm) cr_assert_str_eq(norm->kernel_category, "norm");
  for (size_t s = 0; s < rep->n_stages; s++) {
    const an_overlap_stage *o = rep->stages[s].overlap;
    for (size_t i = 0; o && i < o->n_rows; i++) {
      const an_overlap_row *r = &o->rows[i];
      cr_assert_leq((r->exposed_ms + r->exposed_wait_ms) * 1000.0 + r->hidden_by_compute_us,
                    r->total_us + 1e-6, "%s", r->kernel);
    }
  }
  an_report_destroy(rep);
}

/* Wait is wait: eight all-reduces of one message size (the trace's args), five of which
 * wait 360 us for the other ranks. The median instance is a waiting one, so the excess
 * over it is nothing; the time account's per-instance model (floor of the instances of
 * that message size) finds the wait, and the row is rank skew with nothing recoverable. */
#define AR_MSG(ts, dur, c)                                                                    \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" AR "\",\"pid\":0,\"tid\":7,\"ts\":" #ts      \
  ",\"dur\":" #dur ",\"args\":{\"stream\":7,\"correlation\":" #c                              \
  ",\"In msg nelems\":131072,"                                                                \
  "\"Out msg nelems\":131072,\"Group size\":2,\"dtype\":\"BFloat16\"}},"                      \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,\"tid\":1," \
  "\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #c "}}"
#define AR_STEP(t0, t1, t2, t3, d, c) \
  STEP("step[DECODE bs=8]", t0, 900)  \
  "," AR_MSG(t1, d, c##1) "," K(NORM, t2, 20, c##2) "," K(GEMM, t3, 300, c##3)
static const char HALF_WAIT[] = "{" H100_TP2 "\"traceEvents\":[" AR_STEP(
    1000, 1001, 1402, 1430, 400, 1) "," AR_STEP(2000, 2001, 2402, 2430, 400,
                                                 2) "," AR_STEP(3000, 3001, 3402, 3430, 400,
                                                                3) "," AR_STEP(4000, 4001, 4402,
                                                                               4430, 400, 4) "," AR_STEP(5000, 5001, 5402, 5430, 400, 5) "," AR_STEP(6000, 6001, 6042, 6070, 40, 6) "," AR_STEP(7000, 7001, 7042, 7070, 40, 7) "," AR_STEP(8000, 8001, 8042, 8070, 40, 8) "]}";

Test(overlap, wait_from_the_per_instance_model, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", HALF_WAIT);
  const an_overlap_row *ar = overlap_row(rep, "cross_device_reduce");
  cr_assert_not_null(ar);
  cr_assert_eq(ar->verdict, AN_OVERLAP_WAIT);
  cr_assert_eq(ar->recommendation, AN_RECOMMEND_RANK_SKEW);
  cr_assert_float_eq(ar->exposed_wait_ms, 5 * 0.360, 1e-6, "five instances wait 360 us");
  cr_assert_float_eq(ar->recoverable_ms, 0.0, 1e-12);
  /* deviation O30: its steady part, 8 x 40 us at the floor, is measured transfer, not
   * wait: restructured, the GEMMs beside it (8 x 300 us) hide all of it, said under the
   * table and never counted as recoverable */
  cr_assert(ar->transfer_known && ar->transfer_lever);
  const an_overlap_stage *o = rep->stages[0].overlap;
  double per = o->n_steps ? 1.0 / (double)o->n_steps : 1.0;
  cr_assert_float_eq(ar->transfer_bound_ms, 8 * 0.040 * per, 1e-6, "%g", ar->transfer_bound_ms);
  cr_assert_float_eq(ar->transfer_compute_ms, 8 * 0.300 * per, 1e-6, "%g", ar->transfer_compute_ms);
  char *line = rp_overlap_transfer_text(o);
  cr_assert(line && strstr(line, "Transfer beside the wait") && strstr(line, ar->transfer_lever),
            "%s", line ? line : "(none)");
  free(line);
  an_report_destroy(rep);
}

/* Issue 31: NCCL 2.19+ and RCCL run every collective through one generic kernel, so its
 * rows are split by the collective the kernel's args name. A TP-4 rank of a SGLang run on
 * MI300X (real-multirank.md): an eager all-reduce and the logits all-gather carry the args
 * Kineto writes for eager NCCL kernels; a reduce-scatter kernel without them takes the
 * member from its record_param_comms op (same External id, older Kineto); the two
 * all-reduces inside a graph carry only graph id and graph node id and keep the name. */
#define GENERIC "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"
#define COMM(coll, in, out)                                                                \
  "\"Collective name\":\"" coll "\",\"In msg nelems\":" #in ",\"Out msg nelems\":" #out    \
  ",\"Group size\":4,\"dtype\":\"BFloat16\",\"Process Group Name\":\"3\",\"Process Group " \
  "Description\":\"undefined\",\"Process Group Ranks\":\"[0, 1, 2, 3]\","
#define KA(ts, dur, c, args)                                                                    \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" GENERIC "\",\"pid\":0,\"tid\":7,\"ts\":" #ts   \
  ",\"dur\":" #dur ",\"args\":{" args "\"stream\":7,\"External id\":" #c ",\"correlation\":" #c \
  "}},"                                                                                         \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipExtLaunchKernel\",\"pid\":0,"           \
  "\"tid\":1,\"ts\":" #ts ",\"dur\":1,\"args\":{\"External id\":" #c ",\"correlation\":" #c "}}"
#define OP(name, ts, dur, c, args)                                                         \
  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":0,\"tid\":1,\"ts\":" #ts \
  ",\"dur\":" #dur ",\"args\":{" args "\"External id\":" #c "}}"
#define GRAPH_NODE(ts, dur, c, node)                                                          \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" GENERIC "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
  ",\"dur\":" #dur ",\"args\":{\"graph id\":1,\"graph node id\":" #node                       \
  ",\"stream\":7,\"correlation\":" #c "}}"
#define MI300X_TP4                                                          \
  "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":4}," \
  "\"deviceProperties\":[{\"id\":0,\"name\":\"AMD Instinct MI300X\"}],"
/* A name past AN_MAX_COLLECTIVE_WORD with characters no row key takes: cut, never refused. */
#define LONG_COLLECTIVE "all_to_all-v.0123456789012345678901234567890123456789012345678901234567"
#define LONG_KEY GENERIC " [all_to_allv0123456789012345678901234567890123456]"
static const char GENERIC_COLLECTIVES[] =
    "{" MI300X_TP4 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 0, 2000) "," KA(
        10, 40, 1, COMM("allreduce", 131072, 131072)) "," K(GEMM, 60, 200, 2) "," KA(270, 40, 3,
        COMM("allreduce", 131072, 131072)) "," OP("record_param_comms", 300, 5, 4,
        COMM("_reduce_scatter_base", 131072, 32768)) "," KA(320, 30, 4, "") "," KA(360, 90, 5,
        COMM("_allgather_base", 37984, 151936)) "," GRAPH_NODE(500, 40, 6, 12) "," GRAPH_NODE(600,
        40, 6, 14) "," "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipGraphLaunch\",\"pid\":0,"
    "\"tid\":1,\"ts\":480,\"dur\":5,\"args\":{\"correlation\":6}}," KA(700, 20, 7,
    COMM(LONG_COLLECTIVE, 1024, 1024)) "]}";

static size_t generic_rows(const an_stage_report *st, const char **names, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < st->n_kernels; i++)
    if (strstr(st->kernels[i].name, "ncclDevKernel_Generic_1") && n < cap)
      names[n++] = st->kernels[i].name;
  return n;
}

static bool has_name(const char **names, size_t n, const char *want) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(names[i], want)) return true;
  return false;
}

Test(names, generic_collectives_split_by_their_collective, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("sglang", GENERIC_COLLECTIVES);
  const an_stage_report *st = stage_of(rep, "decode");
  cr_assert_not_null(st);
  const char *names[8];
  size_t n = generic_rows(st, names, 8);
  cr_assert_eq(n, 5, "all-reduce, all-gather, reduce-scatter, all-to-all, the graph's: %zu", n);
  cr_assert(has_name(names, n, LONG_KEY), "letters, digits and _ of the name, at most 48");
  cr_assert(has_name(names, n, GENERIC " [allreduce]"));
  cr_assert(has_name(names, n, GENERIC " [_allgather_base]"));
  cr_assert(has_name(names, n, GENERIC " [_reduce_scatter_base]"), "from its CPU op");
  /* issue 31: graph nodes carry no collective, and say so */
  cr_assert(has_name(names, n, GENERIC " [unsplit: graph replay]"), "graph nodes keyed apart");
  cr_assert_not(has_name(names, n, GENERIC), "no generic row passes for one collective");
  const an_stage_timeline *tl = st->timeline;
  size_t colls = 0;
  for (size_t i = 0; tl && i < tl->n_collectives; i++)
    colls += strstr(tl->collectives[i].kernel, "ncclDevKernel_Generic_1") != NULL;
  cr_assert_eq(colls, 5, "the time model holds each collective to its own floor");
  an_report_destroy(rep);
}

/* The reference's compatibility pack keeps one row for them (deviation C13). */
Test(names, generic_collectives_one_row_in_compat, .init = setup, .fini = teardown) {
  te_rules *ref = reference_rules();
  an_report *rep = run_framework_with(ref, "sglang", GENERIC_COLLECTIVES);
  const char *names[8];
  size_t n = 0;
  for (size_t s = 0; s < rep->n_stages; s++) n += generic_rows(&rep->stages[s], names + n, 8 - n);
  cr_assert_eq(n, 1, "one generic row: %zu", n);
  cr_assert_str_eq(names[0], GENERIC);
  an_report_destroy(rep);
  te_rules_destroy(ref);
}

/* ------------------------------------------------------------------ locations */

/* A vLLM full-graph decode step (the vllm_gptoss_decode_fullgraph shape): the model
 * runner's _model_forward replays a graph (cuda_graph.py __call__ -> graphs.py replay ->
 * cudaGraphLaunch) whose two GEMMs have no frame of their layer; then an eager GEMM
 * launched from a vLLM layer (cudaLaunchKernel under layers/utils.py). */
#define PYF(name, ts, dur)                                                         \
  "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/venv/site-packages/" name \
  "\","                                                                            \
  "\"pid\":0,\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur "}"
#define GRAPH_LAUNCH(ts, c)                                                                  \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":0,\"tid\":1," \
  "\"ts\":" #ts ",\"dur\":5,\"args\":{\"correlation\":" #c "}}"
#define GK(name, ts, dur, c)                                                               \
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
  ",\"dur\":" #dur ",\"args\":{\"stream\":7,\"correlation\":" #c "}}"
/* vLLM's model runner replaying a graph three times (correlations 51-53): the frames
 * of the runner (open for runner_dur us), cuda_graph.py __call__ and graphs.py replay. */
#define RUNNER_REPLAYS_THREE(runner_dur)                                           \
  PYF("vllm/v1/worker/gpu_model_runner.py(3102): _model_forward", 100, runner_dur) \
  "," PYF("vllm/compilation/cuda_graph.py(208): __call__", 110, 100) "," PYF(      \
      "torch/cuda/graphs.py(139): replay", 120,                                    \
      80) "," GRAPH_LAUNCH(130, 51) "," GRAPH_LAUNCH(140, 52) "," GRAPH_LAUNCH(150, 53)
#define REPLAYED "nvjet_tst_128x64_64x4_1x2_h_bz_coopB_TNT"
#define EAGER_GEMM "nvjet_tst_64x8_64x16_2x1_v_bz_TNT"
static const char FULL_GRAPH_DECODE[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 900, 2000) ","
    RUNNER_REPLAYS_THREE(200) ","
    PYF("vllm/model_executor/layers/utils.py(122): rocm_unquantized_gemm_impl", 400, 50) ","
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,\"tid\":1,"
    "\"ts\":410,\"dur\":5,\"args\":{\"correlation\":54}},"
    GK(REPLAYED, 1000, 300, 51) "," GK(REPLAYED, 1400, 300, 52) "," GK(REPLAYED, 1800, 300, 53) ","
    GK(EAGER_GEMM, 2300, 100, 54) "]}";

static const an_kernel_row *kernel_row(const an_report *rep, const char *name) {
  for (size_t s = 0; s < rep->n_stages; s++)
    for (size_t i = 0; i < rep->stages[s].n_kernels; i++)
      if (!strcmp(rep->stages[s].kernels[i].name, name)) return &rep->stages[s].kernels[i];
  return NULL;
}

/* Issue 31 (deviation A10): where only the replay's caller exists, the location says it
 * is inside a graph replay of it; an eager launch keeps its plain location; the
 * reference's pack shows both plain. */
Test(locations, graph_replay_location_is_worded, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", FULL_GRAPH_DECODE);
  const an_kernel_row *g = kernel_row(rep, REPLAYED), *e = kernel_row(rep, EAGER_GEMM);
  cr_assert(g && e && g->n_shown_sites == 1 && e->n_shown_sites == 1);
  cr_assert_eq(g->shown_sites[0]->kind, AN_LOCATION_GRAPH_REPLAY);
  cr_assert_eq(e->shown_sites[0]->kind, AN_LOCATION_LAUNCH);
  char *cell = rp_kernel_location_cell(g);
  cr_assert_str_eq(cell,
                   "inside a graph replay of vllm/v1/worker/gpu_model_runner.py:3102 "
                   "_model_forward");
  free(cell);
  cell = rp_kernel_location_cell(e);
  cr_assert_str_eq(cell, "vllm/model_executor/layers/utils.py:122 rocm_unquantized_gemm_impl");
  free(cell);
  for (size_t i = 0; i < rep->n_summary; i++) { /* items at the runner are the replay's */
    const an_summary_item *it = &rep->summary[i];
    if (it->location && strstr(it->location, "gpu_model_runner.py"))
      cr_assert_eq(it->location_kind, AN_LOCATION_GRAPH_REPLAY, "%s", it->location);
  }
  an_report_destroy(rep);

  te_rules *ref = reference_rules();
  rep = run_framework_with(ref, "vllm", FULL_GRAPH_DECODE);
  g = kernel_row(rep, REPLAYED);
  cr_assert(g && g->n_shown_sites == 1);
  cr_assert_eq(g->shown_sites[0]->kind, AN_LOCATION_LAUNCH);
  cell = rp_kernel_location_cell(g);
  cr_assert_str_eq(cell, "vllm/v1/worker/gpu_model_runner.py:3102 _model_forward");
  free(cell);
  an_report_destroy(rep);
  te_rules_destroy(ref);
}

/* The sglang decode shape (review 6 defect 6): the runner's frame both replays the graph
 * and launches an eager copy itself, outside the replay; then a replay with no Python
 * frame at all. */
#define EAGER_COPY "void at::native::elementwise_kernel<128, 4>"
#define BARE_REPLAYED "nvjet_tst_64x64_64x4_1x2_h_bz_TNT"
static const char RUNNER_MIXED_DECODE[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 900, 3000) ","
    RUNNER_REPLAYS_THREE(400) ","
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,\"tid\":1,"
    "\"ts\":410,\"dur\":5,\"args\":{\"correlation\":54}}," GRAPH_LAUNCH(600, 55) ","
    GK(REPLAYED, 1000, 300, 51) "," GK(REPLAYED, 1400, 300, 52) "," GK(REPLAYED, 1800, 300, 53) ","
    GK(EAGER_COPY, 2300, 20, 54) "," GK(BARE_REPLAYED, 2400, 200, 55) "]}";

/* An item's location kind comes from its own kernels' sites: the GEMM's item is inside
 * the replay although an eager copy launches from the same runner line; a replay with no
 * Python frame reads "unresolved", not "a graph replay of unresolved". */
Test(locations, item_location_kind_from_its_own_kernels, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", RUNNER_MIXED_DECODE);
  const an_kernel_row *g = kernel_row(rep, REPLAYED), *e = kernel_row(rep, EAGER_COPY);
  const an_kernel_row *b = kernel_row(rep, BARE_REPLAYED);
  cr_assert(g && e && b && g->n_shown_sites == 1 && e->n_shown_sites == 1);
  cr_assert_eq(e->shown_sites[0]->kind, AN_LOCATION_LAUNCH, "the eager copy is not replayed");
  cr_assert_str_eq(e->shown_sites[0]->location, g->shown_sites[0]->location, "one runner line");
  cr_assert(b->n_shown_sites == 0 || b->shown_sites[0]->kind == AN_LOCATION_LAUNCH);
  char *cell = rp_kernel_location_cell(b);
  cr_assert_null(strstr(cell, "graph replay of"), "%s", cell);
  free(cell);
  size_t gemm_items = 0;
  for (size_t i = 0; i < rep->n_summary; i++) {
    const an_summary_item *it = &rep->summary[i];
    for (size_t k = 0; k < it->n_kernels; k++) {
      if (strcmp(it->kernels[k], REPLAYED) != 0) continue;
      gemm_items++;
      cr_assert_eq(it->location_kind, AN_LOCATION_GRAPH_REPLAY, "%s", it->location);
    }
  }
  cr_assert_geq(gemm_items, 1, "the replayed GEMM has an item");
  an_report_destroy(rep);
}

/* Plumbing between the step and the model (issue 31, deviation A9): a compiled piece's
 * kernel launched through torch.compile's trampoline and an Inductor cache module, and a
 * kernel launched by a breakable CUDA-graph wrapper through Inductor's cudagraph_utils.
 * Both under the model's forward, which is the location. */
#define LAUNCH_AT(ts, c)                                                                      \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,\"tid\":1," \
  "\"ts\":" #ts ",\"dur\":5,\"args\":{\"correlation\":" #c "}}"
#define COMPILED_K "triton_poi_fused_add_mul_0"
#define WRAPPED_K "triton_red_fused_rms_norm_1"
static const char PLUMBING_FRAMES[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 900, 2000) ","
    PYF("vllm/v1/worker/gpu_model_runner.py(3102): _model_forward", 100, 700) ","
    PYF("vllm/model_executor/models/llama.py(374): forward", 110, 300) ","
    PYF("vllm/compilation/compile.py(212): trampoline", 120, 200) ","
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/root/.cache/vllm/torch_compile_cache/"
    "inductor_cache/ab/cabcd.py(412): call\",\"pid\":0,\"tid\":1,\"ts\":130,\"dur\":150},"
    LAUNCH_AT(140, 51) "," LAUNCH_AT(150, 52) ","
    PYF("vllm/model_executor/models/llama.py(390): forward", 450, 300) ","
    PYF("vllm/compilation/breakable_cudagraph.py(88): replay", 460, 200) ","
    PYF("torch/_inductor/cudagraph_utils.py(101): run", 470, 150) ","
    LAUNCH_AT(480, 53) ","
    GK(COMPILED_K, 1000, 300, 51) "," GK(COMPILED_K, 1400, 300, 52) ","
    GK(WRAPPED_K, 1800, 300, 53) "]}";

static const char *first_site(const an_report *rep, const char *kernel) {
  const an_kernel_row *r = kernel_row(rep, kernel);
  cr_assert(r && r->n_shown_sites >= 1, "%s has a site", kernel);
  return r->shown_sites[0]->display_location;
}

Test(locations, plumbing_frames_point_at_the_model, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", PLUMBING_FRAMES);
  cr_assert_str_eq(first_site(rep, COMPILED_K), "vllm/model_executor/models/llama.py:374 forward");
  cr_assert_str_eq(first_site(rep, WRAPPED_K), "vllm/model_executor/models/llama.py:390 forward");
  an_report_destroy(rep);

  /* the reference's list has none of them: the innermost plumbing frame wins there */
  te_rules *ref = reference_rules();
  rep = run_framework_with(ref, "vllm", PLUMBING_FRAMES);
  cr_assert_not_null(strstr(first_site(rep, COMPILED_K), "inductor_cache"), "%s",
                     first_site(rep, COMPILED_K));
  an_report_destroy(rep);
  te_rules_destroy(ref);
}

/* Only plumbing around the launch (issue 31: "where only plumbing exists, say so"; audit
 * 12: nothing pinned it): a compiled piece launched through torch.compile's trampoline and
 * an Inductor cache module, with no model frame and no graph replay above them. The
 * location says it is plumbing rather than pointing at the cache module as the launching
 * line (deviation A15); the reference's plain location comes back under compat. */
#define PLUMBING_ONLY_K "triton_poi_fused_add_mul_2"
static const char PLUMBING_ONLY[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 900, 2000) ","
    PYF("vllm/compilation/compile.py(212): trampoline", 120, 200) ","
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/root/.cache/vllm/torch_compile_cache/"
    "inductor_cache/ab/cabcd.py(412): call\",\"pid\":0,\"tid\":1,\"ts\":130,\"dur\":150},"
    LAUNCH_AT(140, 51) "," LAUNCH_AT(150, 52) ","
    GK(PLUMBING_ONLY_K, 1000, 300, 51) "," GK(PLUMBING_ONLY_K, 1400, 300, 52) "]}";

Test(locations, plumbing_only_stack_says_so, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", PLUMBING_ONLY);
  const an_kernel_row *r = kernel_row(rep, PLUMBING_ONLY_K);
  cr_assert(r && r->n_shown_sites == 1);
  cr_assert_eq(r->shown_sites[0]->kind, AN_LOCATION_PLUMBING);
  char *cell = rp_kernel_location_cell(r);
  cr_assert_str_eq(cell,
                   "inside framework plumbing, no model frame: "
                   "vllm/torch_compile_cache/inductor_cache/ab/cabcd.py:412 call");
  free(cell);
  cr_assert_str_eq(rp_location_kind_id(r->shown_sites[0]->kind), "plumbing");
  an_report_destroy(rep);

  te_rules *ref = reference_rules();
  rep = run_framework_with(ref, "vllm", PLUMBING_ONLY);
  r = kernel_row(rep, PLUMBING_ONLY_K);
  cr_assert(r && r->n_shown_sites == 1);
  cr_assert_eq(r->shown_sites[0]->kind, AN_LOCATION_LAUNCH);
  an_report_destroy(rep);
  te_rules_destroy(ref);
}

/* The vLLM full-graph shape with a fused add+RMSNorm among the replayed kernels. */
#define REPLAYED_NORM "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>"
static const char FULL_GRAPH_NORM[] =
    "{" H100_TP2 "\"traceEvents\":[" STEP("step[DECODE bs=32]", 900, 2400) "," RUNNER_REPLAYS_THREE(
        200) "," GRAPH_LAUNCH(160, 54) "," GK(REPLAYED, 1000, 300,
                                              51) "," GK(REPLAYED_NORM, 1400, 300,
                                                         52) "," GK(REPLAYED, 1800, 300,
                                                                    53) "," GK(REPLAYED_NORM, 2200,
                                                                               300, 54) "]}";

/* A fusion row's current location is worded as the kernel table words it (review 6
 * defect 6): inside a graph replay of the runner, in Markdown, JSON and HTML alike. */
Test(locations, fusion_location_says_graph_replay, .init = setup, .fini = teardown) {
  an_report *rep = run_framework("vllm", FULL_GRAPH_NORM);
  const an_fuse_row *f = NULL;
  for (size_t s = 0; s < rep->n_stages && !f; s++)
    for (size_t i = 0; i < rep->stages[s].n_fuse && !f; i++)
      for (size_t k = 0; k < rep->stages[s].fuse[i].n_related; k++)
        if (!strcmp(rep->stages[s].fuse[i].related[k], REPLAYED_NORM)) f = &rep->stages[s].fuse[i];
  cr_assert(f && f->n_locations == 1, "a fusion row on the replayed norm");
  cr_assert_eq(f->location_kinds[0], AN_LOCATION_GRAPH_REPLAY);
  char *cell = rp_fuse_locations_cell(f);
  cr_assert_str_eq(cell,
                   "inside a graph replay of _model_forward @ "
                   "vllm/v1/worker/gpu_model_runner.py:3102");
  free(cell);
  an_report_destroy(rep);
}

/* An SGLang trace whose GEMM ran `n` times: the first `framed` launches under a model
 * layer's Python frame, the rest with no Python frame around their launch (resolved
 * nowhere, the shape of launches from a C++ path or an unprofiled thread). */
static char *partial_site_trace(int n, int framed) {
  size_t cap = 512 + (size_t)n * 320, len = 0;
  char *buf = malloc(cap);
  cr_assert(buf);
  len += (size_t)snprintf(buf + len, cap - len,
                          "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":"
                          "\"/sgl-workspace/sglang/python/sglang/srt/layers/linear.py(450): "
                          "forward\",\"pid\":0,\"tid\":1,\"ts\":0,\"dur\":%d}",
                          framed * 100);
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(
        buf + len, cap - len,
        ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,"
        "\"tid\":1,\"ts\":%d,\"dur\":2,\"args\":{\"correlation\":%d}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" GEMM
        "\",\"pid\":0,\"tid\":7,\"ts\":%d,"
        "\"dur\":50,\"args\":{\"stream\":7,\"correlation\":%d}}",
        i * 100 + 10, i + 1, i * 100 + 20, i + 1);
  len += (size_t)snprintf(buf + len, cap - len, "]}");
  cr_assert_lt(len, cap);
  return buf;
}

/* Issue 31 (deviation A11): a location that 2 of 20 launches resolved to is shown with
 * its coverage and counted in Limits; one that most launches resolved to is shown plain;
 * the reference's pack never says. */
Test(locations, partial_site_shows_its_coverage, .init = setup, .fini = teardown) {
  char *t = partial_site_trace(20, 2);
  an_report *rep = run_framework("sglang", t);
  const an_kernel_row *r = kernel_row(rep, GEMM);
  cr_assert(r && r->n_shown_sites == 1 && r->partial_site);
  char *cell = rp_kernel_location_cell(r);
  cr_assert_str_eq(cell, "python/sglang/srt/layers/linear.py:450 forward (2 of 20 launches)");
  free(cell);
  cr_assert_eq(rep->limits.partial_site_rows, 1);
  char line[256];
  cr_assert(rp_partial_sites_limit(&rep->limits, line, sizeof line));
  cr_assert(strstr(line, "1 kernel row shows a location that covers under 50%"), "%s", line);
  an_report_destroy(rep);
  free(t);

  t = partial_site_trace(20, 15);
  rep = run_framework("sglang", t);
  r = kernel_row(rep, GEMM);
  cr_assert(r && !r->partial_site);
  cr_assert_eq(rep->limits.partial_site_rows, 0);
  cr_assert_null(rp_partial_sites_limit(&rep->limits, line, sizeof line));
  an_report_destroy(rep);
  free(t);

  te_rules *ref = reference_rules();
  t = partial_site_trace(20, 2);
  rep = run_framework_with(ref, "sglang", t);
  r = kernel_row(rep, GEMM);
  cr_assert(r && !r->partial_site);
  cell = rp_kernel_location_cell(r);
  cr_assert_str_eq(cell, "python/sglang/srt/layers/linear.py:450 forward");
  free(cell);
  an_report_destroy(rep);
  free(t);
  te_rules_destroy(ref);
}

/* A generate script's trace (hf_qwen1.5's shape) whose GEMM ran `n` times, the first
 * `warm` before the one profiled step (ProfilerStep#1) with no Python frame around their
 * launch (a warm-up the profiler recorded no stack for), the rest inside the step under
 * the model's frame. */
/* n launches, the first warm of them before the step (no Python frame), of kernel
 * warm_kernel, the rest of GEMM inside the step under the model's frame. */
static char *warmup_site_trace(int n, int warm, const char *warm_kernel) {
  size_t len = 0;
  char *buf = NULL;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f, "a trace in memory");
  /* the step covers the launches after the warm-up, and the model's frame those */
  fprintf(f,
          "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\","
          "\"pid\":0,\"tid\":1,\"ts\":%d,\"dur\":%d},"
          "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/usr/lib/python3/site-packages/"
          "transformers/models/qwen2/modeling_qwen2.py(56): forward\",\"pid\":0,\"tid\":1,"
          "\"ts\":%d,\"dur\":%d}",
          warm * 100, (n - warm) * 100, warm * 100 + 1, (n - warm) * 100 - 2);
  for (int i = 0; i < n; i++)
    fprintf(f,
            ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,"
            "\"tid\":1,\"ts\":%d,\"dur\":2,\"args\":{\"correlation\":%d}},"
            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
            "\"ts\":%d,\"dur\":50,\"args\":{\"stream\":7,\"correlation\":%d}}",
            i * 100 + 10, i + 1, i < warm ? warm_kernel : GEMM, i * 100 + 20, i + 1);
  fputs("]}", f);
  cr_assert_eq(fclose(f), 0);
  return buf;
}

#define FILL "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"

/* Brief 9 defect 6 (deviation A13): hf_qwen1.5's warm-up launches, outside the counted
 * steps and with no Python frame, read "unresolved". A kernel launched only there says
 * where its launches ran; the reference's pack keeps "unresolved". */
Test(locations, warmup_site_says_outside_the_steps, .init = setup, .fini = teardown) {
  char *t = warmup_site_trace(12, 4, FILL);
  an_report *rep = run_framework("sglang", t);
  const an_kernel_row *r = kernel_row(rep, FILL);
  cr_assert(r && r->n_shown_sites == 1, "%zu sites", r ? r->n_shown_sites : 0);
  const an_site *out = r->shown_sites[0];
  cr_assert(!an_location_resolved(out->location) && out->launches == 4,
            "the four warm-up launches are the kernel's one site");
  cr_assert_eq(out->outside_launches, 4);
  cr_assert_eq(out->warmup_launches, 4);
  char *cell = rp_kernel_location_cell(r);
  cr_assert_str_eq(cell, "outside the counted steps (warm-up or setup)");
  free(cell);
  an_report_destroy(rep);
  te_rules *ref = reference_rules();
  rep = run_framework_with(ref, "sglang", t);
  r = kernel_row(rep, FILL);
  cell = rp_kernel_location_cell(r);
  cr_assert(strstr(cell, "unresolved"), "the reference's words: %s", cell);
  free(cell);
  an_report_destroy(rep);
  te_rules_destroy(ref);
  free(t);
}

/* Review 13: beside a site inside the steps, the warm-up-only site is no place in the code,
 * only the step/warm-up split (the steps line states it once): every hf row read "X (site
 * share 69%) / outside the counted steps (site share 31%)". The row shows the model's
 * line alone, without a share; the kernel map keeps both sites; the reference's pack shows
 * both, "unresolved" with its share. */
Test(locations, warmup_site_beside_a_step_site_is_not_shown, .init = setup, .fini = teardown) {
  char *t = warmup_site_trace(12, 4, GEMM);
  an_report *rep = run_framework("sglang", t);
  const an_kernel_row *r = kernel_row(rep, GEMM);
  cr_assert(r && r->entry && r->entry->n_sites == 2, "the map keeps both sites");
  cr_assert_eq(r->n_shown_sites, 1);
  cr_assert(an_location_resolved(r->shown_sites[0]->location));
  cr_assert_not(r->site_share_shown, "one site left: no share");
  char *cell = rp_kernel_location_cell(r);
  cr_assert(strstr(cell, "modeling_qwen2.py:56 forward"), "%s", cell);
  cr_assert_null(strstr(cell, "site share"), "%s", cell);
  cr_assert_null(strstr(cell, "outside the counted steps"), "%s", cell);
  cr_assert_null(strstr(cell, "unresolved"), "%s", cell);
  free(cell);
  an_report_destroy(rep);
  te_rules *ref = reference_rules();
  rep = run_framework_with(ref, "sglang", t);
  r = kernel_row(rep, GEMM);
  cell = rp_kernel_location_cell(r);
  cr_assert(strstr(cell, "unresolved (site share 33%)"), "the reference's words: %s", cell);
  cr_assert(strstr(cell, "modeling_qwen2.py:56 forward (site share 67%)"), "%s", cell);
  free(cell);
  an_report_destroy(rep);
  te_rules_destroy(ref);
  free(t);
}

/* ------------------------------------------------------------------ casts */

#define QKV_GEMM                                                                            \
  "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_" \
  "AFEM1_ASEM1_CLR1_CADS0"
#define O_GEMM "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1"

/* A vLLM decode of 32 tokens on ROCm, 2 steps of `layers` attention blocks as vLLM's
 * gpt-oss runs them (the kernel names and times of vllm_gptoss_decode_fullgraph_amd): the QKV
 * GEMM, a cast kernel `cast` of cast_us, RoPE, the KV-cache write, attention, o_proj; each
 * with its launch call. The caller frees it. */
static char *cast_decode(int layers, const char *cast, double cast_us) {
  static const char *const names[] = {QKV_GEMM, NULL, ROPE, KVW, ATTN, O_GEMM};
  double dur[] = {15.7, cast_us, 6.2, 5.8, 13.5, 10.0};
  size_t len = 0;
  char *buf = NULL;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f, "a trace in memory");
  fputs("{" ROCM "\"traceEvents\":[", f);
  double t = 0;
  int c = 1;
  for (int s = 0; s < 2; s++) {
    double start = t;
    for (int l = 0; l < layers; l++)
      for (size_t k = 0; k < sizeof dur / sizeof *dur; k++, c++) {
        fprintf(f,
                "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":0,"
                "\"tid\":1,\"ts\":%.3f,\"dur\":1,\"args\":{\"correlation\":%d}},"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
                "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"stream\":7,\"correlation\":%d}}",
                c > 1 ? "," : "", t, c, names[k] ? names[k] : cast, t + 2, dur[k], c);
        t += dur[k] + 1;
      }
    fprintf(f,
            ",{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":"
            "\"execute_32_context_0(sq0sk0)_generation_32(sq32sk3000)\",\"pid\":0,\"tid\":7,"
            "\"ts\":%.3f,\"dur\":%.3f}",
            start, t - start + 4);
    t += 50;
  }
  fputs("]}", f);
  cr_assert_eq(fclose(f), 0);
  return buf;
}

static const an_summary_item *cast_item(const an_report *rep) {
  for (size_t i = 0; i < rep->n_summary; i++)
    if (rep->summary[i].action == AN_ACTION_FOLD_CAST) return &rep->summary[i];
  return NULL;
}

/* Review 20 defect 9: a kernel whose fused op list is only a dtype cast (Inductor's
 * triton_poi_fused__to_copy_N), once a layer between the QKV GEMM and RoPE, is an item bound
 * by its time, naming the kernels on either side of it and what a cast before RoPE usually is;
 * a fused kernel that also adds is no cast, and casts under summary.cast_min_pct of the step
 * make no item. */
Test(casts, a_cast_kernel_names_its_neighbours, .init = setup, .fini = teardown) {
  char *t = cast_decode(4, CAST, 13.7);
  an_report *rep = run_framework("vllm", t);
  const an_summary_item *it = cast_item(rep);
  cr_assert_not_null(it, "the cast kernel takes ~20%% of the step");
  cr_expect_eq(it->count, 1);
  cr_expect_float_eq(it->cast_per_step, 4, 1e-9, "one a layer");
  cr_expect_float_eq(it->at_stake_us, 4 * 13.7, 1e-6, "its whole time: no shapes, no fused cost");
  cr_expect_eq(it->cast_fused_us, 0);
  cr_assert_not_null(it->cast_next);
  cr_expect_str_eq(it->cast_next, ROPE);
  cr_expect_float_eq(it->cast_next_pct, 100, 1e-9);
  cr_assert_not_null(it->cast_prev);
  cr_expect(strncmp(it->cast_prev, QKV_GEMM, strlen(QKV_GEMM)) == 0, "%s", it->cast_prev);
  cr_expect_not_null(it->cast_hint, "a cast before RoPE: the packs' hint");
  cr_expect_not_null(it->lever);
  char *md = test_render(rp_markdown, rep, rules);
  cr_expect(strstr(md, "only a dtype cast") && strstr(md, "`vllm::rotary_embedding_kernel`"),
            "the item names the cast and its next kernel");
  free(md);
  an_report_destroy(rep);
  free(t);
  t = cast_decode(4, "triton_poi_fused__to_copy_add_1", 13.7);
  rep = run_framework("vllm", t);
  cr_expect_null(cast_item(rep), "a fused cast + add is no cast alone");
  an_report_destroy(rep);
  free(t);
  t = cast_decode(4, CAST, 0.4); /* 0.7% of the step */
  rep = run_framework("vllm", t);
  cr_expect_null(cast_item(rep), "under summary.cast_min_pct of the step");
  an_report_destroy(rep);
  free(t);
}

/* ------------------------------------------------------------ FP32 embedding tables */

/* FBGEMM's TBE kernels as hta_async_cpu_to_gpu_a100 names them (row dtypes FP32) and as
 * hta_sampled_2ranks does (FP16 tables: emb_t c10::Half). */
#define TBE_CTA(T, G)                                                                        \
  "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<" T \
  ", " G ", " T ", 2ul>(at::GenericPackedTensorAccessor<" G                                  \
  ", 2ul, "                                                                                  \
  "at::RestrictPtrTraits, int>)"
#define TBE_WARP(T, G)                                                                        \
  "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1<" T \
  ", " G ", " T ", 2ul>(at::GenericPackedTensorAccessor<" G                                   \
  ", 2ul, "                                                                                   \
  "at::RestrictPtrTraits, int>)"
#define TBE_FWD(T)                                                   \
  "void split_embedding_codegen_forward_unweighted_kernel<" T ", " T \
  ", float, long, 2ul>"                                              \
  "(at::GenericPackedTensorAccessor<" T ", 1ul, at::RestrictPtrTraits, long>)"
#define TBE_SEGMENTS                                                                    \
  "split_embedding_backward_codegen_rowwise_adagrad_unweighted_find_long_segments(at::" \
  "GenericPackedTensorAccessor<int, 1ul, at::RestrictPtrTraits, int>)"
#define MLP_GEMM "ampere_sgemm_128x128_tn"

/* A TorchRec training step on an A100 on one stream, 3 ProfilerSteps: the TBE forward, an MLP
 * GEMM, the backward's long-segment search, its short runs (warp_per_row) and its long runs
 * (cta_per_row), in FP32 tables (fp32) or FP16 ones. The caller frees it. */
static char *tbe_step(bool fp32) {
  const char *const names[] = {fp32 ? TBE_FWD("float") : TBE_FWD("c10::Half"), MLP_GEMM,
                               TBE_SEGMENTS,
                               fp32 ? TBE_WARP("float", "float") : TBE_WARP("c10::Half", "float"),
                               fp32 ? TBE_CTA("float", "float") : TBE_CTA("c10::Half", "float")};
  const double dur[] = {1500, 2500, 40, 1200, 2200};
  size_t len = 0;
  char *buf = NULL;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f, "a trace in memory");
  fputs(
      "{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA A100-SXM4-80GB\",\"computeMajor\":8,"
      "\"computeMinor\":0}],\"traceEvents\":[",
      f);
  double t = 0;
  int c = 1;
  for (int s = 0; s < 3; s++) {
    double start = t;
    for (size_t k = 0; k < sizeof dur / sizeof *dur; k++) {
      fprintf(f,
              "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,"
              "\"tid\":1,\"ts\":%.3f,\"dur\":4,\"args\":{\"correlation\":%d}},"
              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
              "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"stream\":7,\"correlation\":%d}}",
              c > 1 ? "," : "", t, c, names[k], t + 5, dur[k], c);
      c++;
      t += dur[k] + 6;
    }
    fprintf(f,
            ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":0,"
            "\"tid\":1,\"ts\":%.3f,\"dur\":%.3f}",
            s + 10, start, t - start + 2);
    t += 100;
  }
  fputs("]}", f);
  cr_assert_eq(fclose(f), 0);
  return buf;
}

static const an_summary_item *lever_item(const an_report *rep, const char *id) {
  for (size_t i = 0; i < rep->n_summary + rep->n_leads; i++) {
    const an_summary_item *it = &rep->summary[i];
    if (it->action == AN_ACTION_KERNEL_LEVER && it->lever_op && !strcmp(it->lever_op, id))
      return it;
  }
  return NULL;
}

/* Review 20 defect 8, review 22 defect 1: FBGEMM's TBE kernels whose template arguments
 * name FP32 rows are one item, FP16 tables and pooled output, bound by the share of bytes
 * that change removes (half) of their time alone on the GPU: the forward and both backward
 * kernels, not the segment search nor the GEMM; tables already FP16 make no item. */
Test(levers, fp32_embedding_tables_halve_in_fp16, .init = setup, .fini = teardown) {
  char *t = tbe_step(true);
  an_report *rep = run_framework(NULL, t);
  const an_summary_item *it = lever_item(rep, "tbe_fp16");
  cr_assert_not_null(it, "FP32 TBE kernels take ~66%% of the step");
  cr_expect_eq(it->basis, AN_BASIS_NARROWED);
  cr_expect_eq(it->count, 3, "forward, warp_per_row, cta_per_row");
  cr_expect_float_eq(it->basis_us, 1500 + 1200 + 2200, 1e-6, "their time a step");
  cr_expect_float_eq(it->bytes_kept, 0.5, 1e-12);
  cr_expect_float_eq(it->at_stake_us, (1500 + 1200 + 2200) * 0.5, 1e-6,
                     "half their time: nothing else on the GPU beside them");
  cr_assert_not_null(it->lever_title);
  cr_expect(strstr(it->lever_title, "FP16") != NULL, "%s", it->lever_title);
  cr_assert_not_null(it->lever);
  cr_expect(strstr(it->lever, "weights_precision=SparseType.FP16") != NULL, "%s", it->lever);
  char *md = test_render(rp_markdown, rep, rules);
  cr_expect(strstr(md, it->lever_title) && strstr(md, "keeps 50% of their bytes"),
            "the item states the packs' action and the share its bound keeps");
  free(md);
  an_report_destroy(rep);
  free(t);
  t = tbe_step(false);
  rep = run_framework(NULL, t);
  cr_expect_null(lever_item(rep, "tbe_fp16"), "FP16 tables already");
  an_report_destroy(rep);
  free(t);
}
