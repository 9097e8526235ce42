/* Unit tests for the roofline: op cost models (analysis/op_cost.c) on the default packs'
 * models, bad shapes, the device pack's matching, and a rule pack overriding a model. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/op_cost.h"
#include "analysis/op_nest.h"
#include "analysis/roofline_attn.h"
#include "analysis/roofline_model.h"
#include "analysis/roofline_moe.h"
#include "report/text.h"
#include "triage/rules.h"
#include "unit/run_trace.h" /* after the others: it asserts with Criterion */
#include "util/limits.h"

static te_rules *g_rules;

static te_rules *load_rules(const char *extra, size_t len) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  cr_assert_eq(te_rules_load_path(r, TRIAGE_SOURCE_DIR "/rules", d), TE_OK);
  if (extra) cr_assert_eq(te_rules_load_buffer(r, "extra.yaml", extra, len, d), TE_OK);
  cr_assert_eq(te_rules_finalize(r, d), TE_OK);
  te_diags_destroy(d);
  return r;
}

static void setup(void) { g_rules = load_rules(NULL, 0); }
static void teardown(void) { te_rules_destroy(g_rules); }

/* The cost of op `op` with its three args; the status. */
static an_cost_status cost(const char *op, const char *dims, const char *types, const char *conc,
                           an_op_cost *out) {
  const te_op_cost *m = te_rules_op_cost(g_rules, op);
  cr_assert_not_null(m, "no model for %s", op);
  return an_op_cost_eval(g_rules, m, dims, types, conc, NULL, out);
}

/* The cost of a gather op whose output's shape is its child's (shape: the child's
 * Concrete Inputs). */
static an_cost_status gather_cost(const char *op, const char *dims, const char *types,
                                  const char *shape, an_op_cost *out) {
  const te_op_cost *m = te_rules_op_cost(g_rules, op);
  cr_assert_not_null(m, "no model for %s", op);
  return an_op_cost_eval(g_rules, m, dims, types, NULL, shape, out);
}

#define BF16 "\"c10::BFloat16\""

/* ------------------------------------------------------------------ formulas */

/* TraceLens's figures for the HF Qwen trace's GEMMs (peers/tracelens GEMM.csv). */
TestSuite(roofline_cost, .init = setup, .fini = teardown);

Test(roofline_cost, gemms_agree_with_tracelens) {
  an_op_cost c;
  cr_assert_eq(
      cost("aten::mm", "[[8944, 1024], [1024, 2816]]", "[" BF16 ", " BF16 "]", "[\"\", \"\"]", &c),
      AN_COST_OK);
  cr_expect_eq(c.flops, 51581550592.0);
  cr_expect_eq(c.bytes, 71.0078125 * 1048576);
  cr_expect_str_eq(c.dtype->id, "bf16");
  cr_assert_eq(cost("aten::addmm", "[[1024], [8944, 1024], [1024, 1024], [], []]",
                    "[" BF16 ", " BF16 ", " BF16 ", \"Scalar\", \"Scalar\"]", NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.flops, 18766086144.0, "2MNK + MN for the bias");
  cr_expect_eq(c.bytes, 36.939453125 * 1048576);
  cr_assert_eq(cost("aten::bmm", "[[1, 32, 1], [1, 1, 559]]", "[\"float\", \"float\"]", NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.flops, 35776.0);
  cr_expect_eq(c.bytes, 73916.0);
}

/* One read of an op's args gives what the GEMM merges and the shape gate each parsed for
 * themselves: the GEMM geometry, every input's element count, the smallest tensor. */
Test(roofline_cost, op_shape_reads_gemm_elems_and_smallest_tensor_at_once) {
  an_op_shape s;
  double elems[AN_MAX_OP_INPUTS];
  const te_op_cost *lin = te_rules_op_cost(g_rules, "aten::linear");
  cr_assert_not_null(lin);
  cr_assert(an_op_shape_read(g_rules, lin, "[[16, 559, 1024], [2816, 1024], []]",
                             "[" BF16 ", " BF16 ", \"\"]", &s, elems));
  cr_expect(s.parsed && s.is_gemm);
  cr_expect_eq(s.gemm.m, 16.0 * 559, "leading dims folded into M");
  cr_expect_eq(s.gemm.n, 2816.0);
  cr_expect_eq(s.gemm.k, 1024.0);
  cr_expect_eq(s.gemm.batch, 1.0);
  cr_expect_str_eq(s.gemm.dtype->id, "bf16");
  cr_assert_eq(s.n_elems, 3);
  cr_expect_eq(elems[0], 16.0 * 559 * 1024);
  cr_expect_eq(elems[1], 2816.0 * 1024);
  cr_expect_eq(elems[2], 0.0, "an empty shape holds no tensor");
  cr_expect_eq(s.last_dim, 1024.0, "both tensors end in K");
  /* a per-head norm: its weight's last dimension is the head dim */
  cr_assert(an_op_shape_read(g_rules, NULL, "[[4, 32, 128], [128], []]",
                             "[" BF16 ", " BF16 ", \"Scalar\"]", &s, elems));
  cr_expect(s.parsed && !s.is_gemm, "no model: no GEMM geometry");
  cr_expect_eq(s.last_dim, 128.0);
  cr_expect_str_eq(s.small_dtype->id, "bf16");
  /* an unknown format: element counts still, no smallest tensor, no geometry */
  cr_assert(an_op_shape_read(g_rules, lin, "[[8, 64], [32, 64]]", "[\"float17\", \"float17\"]", &s,
                             elems));
  cr_expect(s.parsed && !s.is_gemm && !s.small_dtype);
  cr_expect_eq(elems[1], 32.0 * 64);
  /* Input type that does not parse: the counts, nothing that needs the formats */
  cr_assert(an_op_shape_read(g_rules, lin, "[[8, 64], [32, 64]]", "[float]", &s, elems));
  cr_expect(s.parsed && !s.is_gemm && !s.small_dtype && s.n_elems == 2);
  /* no shapes, or shapes that do not parse */
  cr_assert(an_op_shape_read(g_rules, lin, "", NULL, &s, elems));
  cr_expect(!s.parsed && !s.is_gemm && !s.small_dtype);
  cr_assert(an_op_shape_read(g_rules, lin, "[[8, 4]", "[" BF16 "]", &s, elems));
  cr_expect(!s.parsed && !s.small_dtype);
  /* a negative size: the input counts 0 and is no tensor of the op */
  cr_assert(an_op_shape_read(g_rules, lin, "[[8, -1], [4]]", "[" BF16 ", " BF16 "]", &s, elems));
  cr_expect(s.parsed && !s.is_gemm && s.n_elems == 2 && elems[0] == 0.0 && elems[1] == 4.0);
  cr_expect_eq(s.last_dim, 4.0);
}

Test(roofline_cost, linear_folds_leading_dims_and_reads_nk_weights) {
  an_op_cost c;
  cr_assert_eq(cost("aten::linear", "[[16, 559, 1024], [2816, 1024], []]",
                    "[" BF16 ", " BF16 ", \"\"]", NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.flops, 2.0 * 16 * 559 * 2816 * 1024);
  cr_expect_eq(c.bytes, 2.0 * (16 * 559 * 1024 + 2816 * 1024 + 16 * 559 * 2816));
}

Test(roofline_cost, scaled_gemms_take_their_output_format) {
  an_op_cost c;
  /* _scaled_mm: out_dtype at Concrete Inputs[6] as a ScalarType code (15 = bf16) */
  cr_assert_eq(cost("aten::_scaled_mm", "[[128, 4096], [4096, 8192], [], [], [], [], [], []]",
                    "[\"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\", \"float\", \"float\", \"\", "
                    "\"\", \"Scalar\", \"Scalar\"]",
                    "[\"\", \"\", \"\", \"\", \"\", \"\", \"15\", \"False\"]", &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, 128.0 * 4096 + 4096.0 * 8192 + 128.0 * 8192 * 2 + 2 * 4,
               "A, B, the bf16 output and two 0-d float scales");
  cr_expect_str_eq(c.dtype->id, "fp8_e4m3fn", "FLOPs at the fp8 peak");
  /* vLLM cutlass: (out, a, b, a_scales, b_scales, bias): the output format is out's */
  cr_assert_eq(cost("_C::cutlass_scaled_mm",
                    "[[64, 7168], [64, 4096], [4096, 7168], [64, 1], [1, 7168], []]",
                    "[\"c10::Half\", \"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\", \"float\", "
                    "\"float\", \"\"]",
                    NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.flops, 2.0 * 64 * 7168 * 4096);
  cr_expect_eq(c.bytes, 64.0 * 4096 + 4096.0 * 7168 + 64.0 * 7168 * 2 + 64 * 4 + 7168 * 4);
  /* aiter: B is N x K */
  cr_assert_eq(
      cost("aiter::gemm_a8w8_blockscale",
           "[[32, 7168], [4096, 7168], [56, 32], [32, 56], [32, 4096]]",
           "[\"c10::Float8_e4m3fnuz\", \"c10::Float8_e4m3fnuz\", \"float\", \"float\", " BF16 "]",
           NULL, &c),
      AN_COST_OK);
  cr_expect_eq(c.flops, 2.0 * 32 * 4096 * 7168);
}

/* TraceLens's SDPA figure: causal halves the FLOPs; q, k, v and the output move once. */
Test(roofline_cost, attention_forward) {
  an_op_cost c;
  const char *dims =
      "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64], [], [], [], [], "
      "[], [], [], [], [], [], [], []]";
  const char *types = "[" BF16 ", " BF16 ", " BF16
                      ", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", "
                      "\"Scalar\", \"Scalar\", \"Scalar\", \"\", \"\", \"\", \"\"]";
  cr_assert_eq(cost("aten::_flash_attention_forward", dims, types,
                    "[\"\", \"\", \"\", \"\", \"\", \"559\", \"559\", \"0.\", \"True\", \"False\", "
                    "\"0.125\", \"\", \"\", \"\", \"\"]",
                    &c),
               AN_COST_OK);
  cr_expect_eq(c.flops, 10239377408.0);
  cr_expect_eq(c.bytes, 69.875 * 1048576);
  cr_assert_eq(
      cost("aten::_flash_attention_forward", dims, types,
           "[\"\", \"\", \"\", \"\", \"\", \"559\", \"559\", \"0.\", \"False\", \"False\", "
           "\"0.125\", \"\", \"\", \"\", \"\"]",
           &c),
      AN_COST_OK);
  cr_expect_eq(c.flops, 2 * 10239377408.0, "not causal");
  cr_expect_eq(cost("aten::_flash_attention_forward", dims, types, NULL, &c), AN_COST_BAD,
               "causal unknown: no figure");
}

Test(roofline_cost, elementwise_bytes_in_and_out) {
  an_op_cost c;
  /* TraceLens: add (16, 16, 559, 64) bf16 twice -> 52.40625 MiB; mul with a broadcast
   * operand -> 69.909 MiB; copy_ float -> bf16 reads 4 and writes 2 bytes an element */
  cr_assert_eq(cost("aten::add", "[[16, 16, 559, 64], [16, 16, 559, 64], []]",
                    "[" BF16 ", " BF16 ", \"Scalar\"]", NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, 52.40625 * 1048576);
  cr_expect_eq(c.flops, 16.0 * 16 * 559 * 64);
  cr_assert_eq(
      cost("aten::mul", "[[16, 559, 1024], [16, 559, 1]]", "[\"float\", \"float\"]", NULL, &c),
      AN_COST_OK);
  cr_expect_eq(c.bytes, (16.0 * 559 * 1024 * 2 + 16 * 559) * 4);
  cr_assert_eq(cost("aten::copy_", "[[16, 559, 1024], [16, 559, 1024], []]",
                    "[" BF16 ", \"float\", \"Scalar\"]", NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, 16.0 * 559 * 1024 * 6);
  cr_expect_null(c.dtype, "a copy has no FLOPs");
  /* aiter::add_rmsnorm (out, input, residual_in, residual_out, weight, eps) */
  cr_assert_eq(cost("aiter::add_rmsnorm",
                    "[[15360, 4096], [15360, 4096], [15360, 4096], [15360, 4096], [4096], []]",
                    "[" BF16 ", " BF16 ", " BF16 ", " BF16 ", " BF16 ", \"Scalar\"]", NULL, &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, (4.0 * 15360 * 4096 + 4096) * 2);
}

/* MoE: every weight read by the experts the routed rows touch (uniform routing). */
Test(roofline_cost, grouped_gemm) {
  an_op_cost c;
  cr_assert_eq(cost("vllm::inplace_fused_experts",
                    "[[32, 2880], [32, 5760, 2880], [32, 2880, 2880], [32, 4], [32, 4]]",
                    "[" BF16 ", " BF16 ", " BF16 ", \"float\", \"int\"]", NULL, &c),
               AN_COST_OK);
  double rows = 32 * 4, touched = 32 * (1 - pow(31.0 / 32, rows));
  cr_expect_float_eq(c.flops, 2 * rows * 5760 * 2880 + 2 * rows * 2880 * 2880, 1e-9);
  cr_expect_float_eq(
      c.bytes,
      touched * (5760.0 * 2880 + 2880.0 * 2880) * 2 + rows * ((2880 + 5760) + (2880 + 2880)) * 2,
      1e-9);
}

/* Untrusted shapes: never a cost built on a guess, never a crash. */
/* Gathers (moe_microbench_b300: aten::index of expert weights [64, 512, 1024] by 32 routed
 * ids, its as_strided child restriding them to the output [32, 512, 1024]): the output read
 * from the source and written, no FLOPs; index_select from the index tensor's length. */
Test(roofline_cost, gathers_move_their_output_twice) {
  an_op_cost c;
  const char *src = "[[64, 512, 1024], []]", *types = "[" BF16 ", \"\"]";
  cr_assert_eq(gather_cost("aten::index", src, types,
                           "[\"\", \"[32, 512, 1024]\", \"[0, 1024, 1]\", \"\"]", &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, 2.0 * 32 * 512 * 1024 * 2);
  cr_expect_eq(c.flops, 0);
  cr_expect_null(c.dtype);
  cr_expect_eq(gather_cost("aten::index", src, types, NULL, &c), AN_COST_BAD, "no child");
  cr_expect_eq(gather_cost("aten::index", src, types, "[\"\", \"\"]", &c), AN_COST_BAD);
  cr_expect_eq(gather_cost("aten::index", src, types, "[\"\", \"[32, x]\"]", &c), AN_COST_BAD);
  cr_assert_eq(cost("aten::index_select", "[[151936, 896], [], [7]]",
                    "[" BF16 ", \"Scalar\", \"long int\"]", "[\"\", \"0\", \"\"]", &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, 2.0 * 7 * 896 * 2 + 7 * 8);
  cr_assert_eq(cost("aten::index_select", "[[4, 6, 8], [], [3]]",
                    "[\"float\", \"Scalar\", \"long int\"]", "[\"\", \"-1\", \"\"]", &c),
               AN_COST_OK);
  cr_expect_eq(c.bytes, 2.0 * 4 * 6 * 3 * 4 + 3 * 8);
  cr_expect_eq(cost("aten::index_select", "[[4, 6, 8], [], [3]]",
                    "[\"float\", \"Scalar\", \"long int\"]", "[\"\", \"3\", \"\"]", &c),
               AN_COST_BAD, "dim past the rank");
}

Test(roofline_cost, bad_shapes_get_no_cost) {
  an_op_cost c;
  const char *t2 = "[" BF16 ", " BF16 "]";
  const struct {
    const char *dims, *types, *why;
  } bad[] = {
      {"[[32, 4096], [4095, 6144]]", t2, "K does not agree"},
      {"[[32, -4096], [4096, 6144]]", t2, "a negative size"},
      {"[[32], [4096, 6144]]", t2, "A of rank 1"},
      {"[[32, 4096], [4096, 6144]", t2, "unterminated"},
      {"[[32, 4096], \"x\"]", t2, "not dimensions"},
      {"[[32, 4096], [4096, 6144]]", "[" BF16 ", \"c10::Float9\"]", "an unknown format"},
      {"[[32, 4096], [4096, 6144]]", "[" BF16 "]", "a type missing"},
      {"[[99999999999999, 4096], [4096, 6144]]", t2, "an absurd size"},
      {"[[4194305, 4194304], [4194304, 16]]", t2, "past AN_MAX_TENSOR_ELEMENTS"},
      {"[[[32, 4096]], [4096, 6144]]", t2, "a tensor list"},
      {"", t2, "(no shapes)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    an_cost_status st = cost("aten::mm", bad[i].dims, bad[i].types, NULL, &c);
    cr_expect_eq(st, bad[i].dims[0] ? AN_COST_BAD : AN_COST_NO_SHAPES, "%s", bad[i].why);
    cr_expect_eq(c.flops, 0, "%s", bad[i].why);
    cr_expect_eq(c.bytes, 0, "%s", bad[i].why);
  }
}

/* The limits of limits.h: too many inputs, too many dimensions. */
Test(roofline_cost, shapes_past_the_limits) {
  an_op_cost c;
  size_t n = AN_MAX_OP_INPUTS + 1, cap = n * 32 + 64;
  char *dims = malloc(cap), *types = malloc(cap);
  size_t a = (size_t)snprintf(dims, cap, "["), b = (size_t)snprintf(types, cap, "[");
  for (size_t i = 0; i < n; i++) {
    a += (size_t)snprintf(dims + a, cap - a, "%s[8]", i ? ", " : "");
    b += (size_t)snprintf(types + b, cap - b, "%s" BF16, i ? ", " : "");
  }
  snprintf(dims + a, cap - a, "]");
  snprintf(types + b, cap - b, "]");
  cr_expect_eq(cost("aten::add", dims, types, NULL, &c), AN_COST_BAD, "more than AN_MAX_OP_INPUTS");
  char deep[256] = "[[1", *p = deep + 3;
  for (unsigned i = 0; i < AN_MAX_SHAPE_RANK; i++) p += sprintf(p, ", 1");
  strcpy(p, "]]");
  cr_expect_eq(cost("aten::neg", deep, "[" BF16 "]", NULL, &c), AN_COST_BAD,
               "more than AN_MAX_SHAPE_RANK dimensions");
  free(dims);
  free(types);
}

/* ------------------------------------------------------------------ devices */

TestSuite(roofline_device, .init = setup, .fini = teardown);

static const char *device_id(const char *name, long arch, long sms, double gib) {
  const te_device *d = te_rules_device(g_rules, name, arch, sms, gib);
  return d ? d->id : "(none)";
}

/* Every GPU issue 29 names, by the name its driver reports. */
Test(roofline_device, every_listed_gpu) {
  const struct {
    const char *name;
    long arch, sms;
    double gib;
    const char *id;
  } cases[] = {
      {"Tesla V100-SXM2-32GB", 70, 80, 31.7, "v100-sxm2"},
      {"Tesla V100-PCIE-32GB", 70, 80, 31.7, "v100"},
      {"NVIDIA A100-PG509-200", 80, 108, 39.4, "a100-40gb"},
      {"NVIDIA A100-SXM4-40GB", 80, 108, 39.4, "a100-40gb"},
      {"NVIDIA A100-SXM4-80GB", 80, 108, 79.2, "a100-80gb"},
      {"NVIDIA A100 80GB PCIe", 80, 108, 79.2, "a100-80gb-pcie"},
      {"NVIDIA A10", 86, 72, 22, "a10"},
      {"NVIDIA L4", 89, 58, 22, "l4"},
      {"NVIDIA L40S", 89, 142, 44.5, "l40s"},
      {"NVIDIA H100 80GB HBM3", 90, 132, 79.1, "h100-sxm"},
      {"NVIDIA H100 PCIe", 90, 114, 79.1, "h100-pcie"},
      {"NVIDIA H100 NVL", 90, 132, 93, "h100-nvl"},
      {"NVIDIA H200", 90, 132, 140, "h200"},
      {"NVIDIA H200 NVL", 90, 132, 140, "h200-nvl"},
      {"NVIDIA H20", 90, 78, 95, "h20"},
      {"NVIDIA H800", 90, 132, 79, "h800"},
      {"NVIDIA B200", 100, 148, 178, "b200"},
      {"NVIDIA B300 SXM6 AC", 103, 148, 267.7, "b300"},
      {"NVIDIA GB200", 100, 152, 184, "gb200"},
      {"NVIDIA GB300", 103, 160, 277, "gb300"},
      {"NVIDIA GB10", 121, 48, 119, "gb10"},
      {"NVIDIA GeForce RTX 4090", 89, 128, 23.6, "rtx-4090"},
      {"NVIDIA GeForce RTX 5090", 120, 170, 31.4, "rtx-5090"},
      {"AMD Instinct MI250X", 90, 110, 64, "mi250x"},
      {"AMD Instinct MI300X", 94, 304, 192, "mi300x"},
      {"AMD Instinct MI325X", 94, 304, 256, "mi325x"},
      {"AMD Instinct MI355X", 95, 256, 288, "mi355x"},
      /* a blank name: the architecture, CU count and memory decide */
      {"", 94, 304, 191.98, "mi300x"},
      {"", 94, 304, 256, "mi325x"},
      {"", 95, 256, 288, "mi355x"},
      {"", 94, 228, 128, "(none)"},
      {"NVIDIA H30", 90, 132, 80, "(none)"},
      {"AMD Radeon RX 7900 XTX", 110, 96, 24, "(none)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_expect_str_eq(device_id(cases[i].name, cases[i].arch, cases[i].sms, cases[i].gib),
                     cases[i].id, "%s (arch %ld, %ld SMs, %.0f GiB)", cases[i].name, cases[i].arch,
                     cases[i].sms, cases[i].gib);
}

Test(roofline_device, figures_are_dense_and_cited) {
  for (size_t i = 0; i < te_rules_device_count(g_rules); i++) {
    const te_device *d = te_rules_device_at(g_rules, i);
    cr_expect(d->hbm_tbs > 0 && d->sms > 0 && d->source && *d->source, "%s", d->id);
    cr_expect(d->attainable_bandwidth > 0 && d->attainable_bandwidth <= 1, "%s", d->id);
    bool any = false;
    for (int p = 0; p < TE_PEAK_COUNT; p++) any = any || d->peak_tflops[p] > 0;
    cr_expect(any, "%s states no peak", d->id);
  }
  const te_device *h100 = te_rules_device(g_rules, "NVIDIA H100 80GB HBM3", 90, 132, 79);
  cr_assert_not_null(h100);
  cr_expect_float_eq(h100->peak_tflops[TE_PEAK_BF16], 989.4, 1e-9, "dense, not 1979 sparse");
  cr_expect_float_eq(h100->hbm_tbs, 3.35, 1e-9);
}

/* A user pack can re-model an op without knowing the default's id: the later entry wins. */
Test(roofline_device, a_later_pack_models_an_op_anew) {
  static const char pack[] =
      "pack: my-costs\nversion: 1\nop_costs:\n"
      "  - {id: my-mm, ops: [aten::mm], elementwise: {reads: all}}\n";
  te_rules *r = load_rules(pack, sizeof pack - 1);
  const te_op_cost *m = te_rules_op_cost(r, "aten::mm");
  cr_assert_not_null(m);
  cr_expect_str_eq(m->id, "my-mm");
  cr_expect_eq(m->kind, TE_COST_ELEMENTWISE);
  cr_expect_eq(te_rules_op_cost(r, "aten::addmm")->kind, TE_COST_GEMM, "the others stay");
  te_rules_destroy(r);
}

Test(roofline_device, dtypes_by_spelling_id_and_code) {
  cr_assert_not_null(te_rules_dtype(g_rules, "c10::BFloat16"));
  cr_expect_str_eq(te_rules_dtype(g_rules, "BFloat16")->id, "bf16", "the collectives' dtype arg");
  cr_expect_str_eq(te_rules_dtype_by_code(g_rules, 24)->id, "fp8_e4m3fn");
  cr_expect_eq(te_rules_dtype(g_rules, "long int")->peak, TE_PEAK_NONE);
  cr_expect_null(te_rules_dtype(g_rules, "c10::Float9"));
}

/* ------------------------------------------------------------------ model dimensions */

TestSuite(roofline_model, .init = setup, .fini = teardown);

/* A trace whose only CPU op shows logits of `vocab` columns for 4 tokens. */
static tr_trace *logits_trace(long vocab) {
  char doc[512];
  snprintf(doc, sizeof doc,
           "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::argmax\",\"ts\":1,\"dur\":1,"
           "\"args\":{\"Input Dims\":[[4, %ld], [], []],\"Input type\":[\"float\", \"Scalar\", "
           "\"Scalar\"]}}]",
           vocab);
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  return t;
}

/* The scan of a trace (freed by the caller). */
static an_model_scan scan_of(const tr_trace *t) {
  an_model_scan s;
  cr_assert(an_model_scan_build(g_rules, t, &s));
  return s;
}

Test(roofline_model, identified_from_content_a_hint_picking_among_fits) {
  tr_trace *t = logits_trace(151936); /* Qwen3 vocabulary: 4B, 8B, 14B, 32B */
  an_model_scan s = scan_of(t);
  an_model_layers layers = {2 * 145, 0, 0}; /* 36 layers: 4B and 8B */
  const char *texts[] = {NULL, "", "/runs/sglang_qwen3_8b_decode/trace.json.gz", "qwen3"};
  an_model_plan p;
  an_model_ident how;
  an_model_check why;
  char words[RP_MODEL_TEXT_BYTES];
  an_model_identify(g_rules, &s, &layers, texts, 0, &p, &how);
  cr_expect_null(p.model, "two entries fit and nothing tells them apart");
  cr_expect_eq(how.kind, AN_IDENT_AMBIGUOUS);
  cr_expect_eq(how.n_fits, 2);
  cr_expect_str_eq(rp_model_ident(&how, words, sizeof words),
                   "the trace's content fits 2 models: entries (Qwen3-4B, Qwen3-8B) and nothing "
                   "in it tells them apart");
  an_model_identify(g_rules, &s, &layers, texts, 4, &p, &how);
  cr_assert_not_null(p.model);
  cr_expect_str_eq(p.model->id, "qwen3-8b");
  cr_expect(p.from_hint);
  cr_expect_eq(how.kind, AN_IDENT_HINT);
  cr_expect_eq(how.hint, texts[2], "the hint the caller gave, kept as data");
  cr_expect_str_eq(rp_model_ident(&how, words, sizeof words),
                   "the hint `/runs/sglang_qwen3_8b_decode/trace.json.gz` among the entries the "
                   "trace's content fits (logits of vocabulary 151936 in a CPU op's shapes, 36 "
                   "layers from 290 replayed GEMM launches: Qwen3-8B and Qwen3-4B)");
  cr_expect(an_model_plan_check(&p, &s, 2 * 145, &why));
  cr_expect_eq(why.kind, AN_CHECK_DENSE_HELD);
  cr_expect_eq(why.steps, 2);
  cr_expect_str_eq(why.op, "aten::argmax");
  an_roofline_model line = {.check = why};
  cr_expect_str_eq(rp_model_check(&line, words, sizeof words),
                   "vocabulary 151936 and 4 tokens a step from aten::argmax's input; 290 GEMM "
                   "launches = 2 step(s) x (4 per layer x 36 layers + lm_head)");
  cr_expect_eq(p.tokens, 4);
  an_op_cost c;
  an_model_gemm_cost(&p, 2, &c); /* gate_up of layer 0 */
  cr_expect_eq(c.flops, 2.0 * 4 * 24576 * 4096);
  an_model_gemm_cost(&p, 144, &c); /* lm_head */
  cr_expect_eq(c.flops, 2.0 * 4 * 151936 * 4096);
  cr_expect_eq(c.bytes, (151936.0 * 4096 + 4 * (151936.0 + 4096)) * 2);
  cr_expect_not(an_model_plan_check(&p, &s, 146, &why), "146 is no whole step");
  cr_expect_eq(why.kind, AN_CHECK_NOT_WHOLE_STEPS);
  line.check = why;
  cr_expect_str_eq(rp_model_check(&line, words, sizeof words),
                   "146 replayed GEMM launches are not whole steps of 145 (4 per layer x 36 "
                   "layers + lm_head)");
  /* 40 layers (161 a step): only Qwen3-14B fits, no hint needed */
  layers.gemm_launches = 161;
  an_model_identify(g_rules, &s, &layers, NULL, 0, &p, &how);
  cr_assert_not_null(p.model);
  cr_expect_str_eq(p.model->id, "qwen3-14b");
  cr_expect_not(p.from_hint);
  cr_expect_eq(how.kind, AN_IDENT_CONTENT);
  cr_expect_null(how.hint);
  cr_expect_str_eq(rp_model_ident(&how, words, sizeof words),
                   "the trace's content: logits of vocabulary 151936 in a CPU op's shapes, 40 "
                   "layers from 161 replayed GEMM launches");
  an_model_scan_free(&s);
  tr_trace_destroy(t);
}

Test(roofline_model, a_hint_the_content_does_not_fit_is_never_used) {
  tr_trace *t = logits_trace(128256); /* a Llama vocabulary */
  an_model_scan s = scan_of(t);
  an_model_layers layers = {145, 0, 0}; /* 36 layers: no Llama entry has them */
  const char *texts[] = {"/runs/qwen3-8b/trace.json.gz"};
  an_model_plan p;
  an_model_ident how;
  an_model_identify(g_rules, &s, &layers, texts, 1, &p, &how);
  cr_expect_null(p.model);
  cr_expect_eq(how.kind, AN_IDENT_NO_FIT);
  /* a model that was not identified: the check line says why */
  an_roofline_model line = {.from = how, .check = {.kind = AN_CHECK_IDENT}};
  char words[RP_MODEL_TEXT_BYTES];
  cr_expect_str_eq(rp_model_check(&line, words, sizeof words),
                   "no models: entry fits the trace's content (a vocabulary in a CPU op's shapes "
                   "and its layers in the per-layer launches)");
  layers.gemm_launches = 129; /* 32 layers: Llama-3.1-8B */
  an_model_identify(g_rules, &s, &layers, texts, 1, &p, &how);
  cr_assert_not_null(p.model);
  cr_expect_str_eq(p.model->id, "llama-3.1-8b", "the content wins over the path");
  an_model_scan_free(&s);
  tr_trace_destroy(t);
}

Test(roofline_model, the_lm_head_weight_outranks_the_logits_alone) {
  /* the logits fit every Qwen3 entry; the lm_head weight [151936, 4096] only Qwen3-8B */
  static const char doc[] =
      "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::argmax\",\"ts\":1,\"dur\":1,"
      "\"args\":{\"Input Dims\":[[4, 151936], [], []]}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"ts\":3,\"dur\":1,"
      "\"args\":{\"Input Dims\":[[4, 4096], [151936, 4096], []]}}]";
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_model_scan s = scan_of(t);
  an_model_layers layers = {0, 36, 1}; /* 36 attention launches in one step */
  an_model_plan p;
  an_model_ident how;
  an_model_identify(g_rules, &s, &layers, NULL, 0, &p, &how);
  cr_assert_not_null(p.model, "kind %d", how.kind);
  cr_expect_str_eq(p.model->id, "qwen3-8b");
  cr_expect(how.lm_head && !how.by_gemms && how.launches == 36);
  char words[RP_MODEL_TEXT_BYTES];
  cr_expect_str_eq(rp_model_ident(&how, words, sizeof words),
                   "the trace's content: the lm_head weight of vocabulary 151936 in a CPU op's "
                   "shapes, 36 layers from 36 attention launches");
  an_model_scan_free(&s);
  tr_trace_destroy(t);
}

/* Brief 10 defect 2: a vocabulary and a depth shared by a family's sizes (Qwen3-4B and 8B:
 * 151936, 36 layers) leave the name to pick; the MLP weight in a CPU op's shapes (an eager
 * prefill's down projection [hidden, intermediate]) pins width and MLP size, so the content
 * decides, and a name of another size is said to disagree, not followed. */
Test(roofline_model, the_mlp_weight_decides_and_a_disagreeing_name_is_said) {
  static const char doc[] =
      "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::argmax\",\"ts\":1,\"dur\":1,"
      "\"args\":{\"Input Dims\":[[4, 151936], [], []]}},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"ts\":3,\"dur\":1,"
      "\"args\":{\"Input Dims\":[[512, 9728], [2560, 9728], []]}}]";
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_model_scan s = scan_of(t);
  an_model_layers layers = {145, 0, 0}; /* 36 layers */
  const char *texts[] = {"/runs/sglang_qwen3_8b_decode/trace.json.gz"};
  an_model_plan p;
  an_model_ident how;
  an_model_identify(g_rules, &s, &layers, texts, 1, &p, &how);
  cr_assert_not_null(p.model, "kind %d", how.kind);
  cr_expect_str_eq(p.model->id, "qwen3-4b", "the shapes, not the name");
  cr_expect_not(p.from_hint);
  cr_expect_eq(how.kind, AN_IDENT_CONTENT);
  cr_expect(how.shapes && how.hidden == 2560 && how.intermediate == 9728);
  cr_expect_str_eq(how.named, "Qwen3-8B");
  char words[RP_MODEL_TEXT_BYTES];
  cr_expect_str_eq(rp_model_ident(&how, words, sizeof words),
                   "the trace's content: its MLP weight (hidden 2560, intermediate 9728) and "
                   "logits of vocabulary 151936 in a CPU op's shapes, 36 layers from 145 "
                   "replayed GEMM launches; `/runs/sglang_qwen3_8b_decode/trace.json.gz` names "
                   "Qwen3-8B, which the content does not fit: the content decides");
  /* a name of the same model agrees */
  const char *same[] = {"/runs/qwen3-4b/trace.json.gz"};
  an_model_identify(g_rules, &s, &layers, same, 1, &p, &how);
  cr_expect_str_eq(how.named, "Qwen3-4B");
  cr_expect(strstr(rp_model_ident(&how, words, sizeof words),
                   "; `/runs/qwen3-4b/trace.json.gz` names it too") != NULL,
            "%s", words);
  an_model_scan_free(&s);
  tr_trace_destroy(t);
}

/* ------------------------------------------------------------------ attention from sums */

Test(roofline_model, attention_from_step_sums) {
  const te_model *m = NULL;
  for (size_t i = 0; i < te_rules_model_count(g_rules); i++)
    if (!strcmp(te_rules_model_at(g_rules, i)->id, "qwen3-8b")) m = te_rules_model_at(g_rules, i);
  cr_assert_not_null(m);
  /* one decode step of 32 sequences, 32785 KV tokens; sq = 1 each */
  an_exec_facts x = {0};
  x.attn_q_tokens = 32, x.attn_kv_tokens = 32785, x.attn_pairs = 32785, x.steps_with_attn = 1;
  an_attn_plan p;
  an_attn_check why;
  char words[RP_ATTENTION_TEXT_BYTES];
  cr_assert(an_attn_plan_make(m, &x, 1, 36, 0, &p, &why), "kind %d", why.kind);
  cr_expect_float_eq(p.cost.bytes, 32785.0 * 2 * 8 * 128 * 2 + 32.0 * 2 * 32 * 128 * 2, 1);
  cr_expect_float_eq(p.cost.flops, 4.0 * 32 * 128 * 32785, 1);
  cr_expect_eq(why.kind, AN_ATTN_HELD);
  cr_expect_float_eq(why.kv_tokens, 32785.0, 1e-9);
  /* the dense model's identification follows the basis */
  why.ident = (an_model_ident){
      .kind = AN_IDENT_CONTENT, .vocab = 151936, .layers = 36, .launches = 36, .lm_head = true};
  cr_expect_str_eq(rp_attention_check(&why, words, sizeof words),
                   "32 query and 32785 KV tokens, 32785 causal score pairs a step (step "
                   "annotation sums); Qwen3-8B: 32 heads, 8 KV heads, head_dim 128, KV cache in "
                   "bf16; 36 launches = 1 step(s) x 36 layers; the model: the trace's content: "
                   "the lm_head weight of vocabulary 151936 in a CPU op's shapes, 36 layers from "
                   "36 attention launches");
  cr_expect(an_attn_plan_make(m, &x, 1, 36, 36, &p, &why));
  cr_expect_float_eq(p.cost.bytes, 32785.0 * 2 * 8 * 128 + 32.0 * 2 * 32 * 128 * 2, 1, "fp8 KV");
  cr_expect(why.kv_fp8);
  cr_expect(strstr(rp_attention_check(&why, words, sizeof words), "KV cache in fp8;"), "%s", words);
  /* each missing fact is named */
  cr_expect_not(an_attn_plan_make(m, &x, 1, 72, 0, &p, &why));
  cr_expect_eq(why.kind, AN_ATTN_LAUNCHES);
  cr_expect_str_eq(rp_attention_check(&why, words, sizeof words),
                   "72 attention launches are not one a layer (36) in each of 1 step(s)");
  cr_expect_not(an_attn_plan_make(NULL, &x, 1, 36, 0, &p, &why));
  cr_expect_eq(why.kind, AN_ATTN_NO_MODEL);
  why.ident = (an_model_ident){.kind = AN_IDENT_NO_FIT};
  cr_expect_str_eq(rp_attention_check(&why, words, sizeof words),
                   "no model identified from the trace (its heads, KV heads and head_dim): no "
                   "models: entry fits the trace's content (a vocabulary in a CPU op's shapes "
                   "and its layers in the per-layer launches)");
  an_exec_facts none = {0};
  cr_expect_not(an_attn_plan_make(m, &none, 0, 36, 0, &p, &why));
  cr_expect_eq(why.kind, AN_ATTN_NO_SUMS);
  cr_expect(strstr(rp_attention_check(&why, words, sizeof words), "sequence lengths"), "%s", words);
  cr_expect_not(an_attn_plan_make(m, &x, 1, 36, 5, &p, &why));
  cr_expect_eq(why.kind, AN_ATTN_KV_FORMATS);
  cr_expect_str_eq(rp_attention_check(&why, words, sizeof words),
                   "the attention kernels disagree on the KV cache's format");
  an_attn_check none_seen = {0};
  cr_expect_null(rp_attention_check(&none_seen, words, sizeof words), "no attention launch");
  cr_expect(an_attn_kernel(g_rules, "void paged_attention_ll4mi_QKV_mfma16_kernel<0>"));
  cr_expect_not(an_attn_kernel(g_rules, "void paged_attention_ll4mi_reduce_kernel<>"));
}

/* gpt-oss-20b: even layers attend to the last 128 tokens (layer_types [sliding, full]).
 * The decode step of vllm_gptoss_decode_fullgraph_amd: 32 sequences, 55086 KV tokens. */
Test(roofline_model, sliding_layers_cost_their_window_in_launch_order) {
  const te_model *m = NULL;
  for (size_t i = 0; i < te_rules_model_count(g_rules); i++)
    if (!strcmp(te_rules_model_at(g_rules, i)->id, "gpt-oss-20b"))
      m = te_rules_model_at(g_rules, i);
  cr_assert_not_null(m);
  cr_expect_eq(m->layer_cycle, 2);
  cr_expect_eq(m->sliding_layers, 1u, "layer 0 of each pair slides");
  an_exec_facts x = {0};
  x.attn_q_tokens = 32, x.attn_kv_tokens = 55086, x.attn_pairs = 55086, x.attn_seqs = 32;
  x.steps_with_attn = 1;
  an_attn_plan p;
  an_attn_check why;
  cr_assert(an_attn_plan_make(m, &x, 1, 24, 0, &p, &why), "kind %d", why.kind);
  cr_expect_eq(why.window_layers, 12);
  /* a sliding layer reads at most 32 x (1 + 127) keys and scores 32 x 128 pairs */
  cr_expect_float_eq(why.window_kv_tokens, 4096.0, 1e-9);
  cr_expect_float_eq(why.window_pairs, 4096.0, 1e-9);
  const double q_bytes = 32.0 * 2 * 64 * 64 * 2;
  an_op_cost c0, c1, c22, c23;
  an_attn_launch_cost(&p, 0, &c0);
  an_attn_launch_cost(&p, 1, &c1);
  an_attn_launch_cost(&p, 22, &c22);
  an_attn_launch_cost(&p, 24 + 23, &c23); /* the next step's last layer */
  cr_expect_float_eq(c0.bytes, 4096.0 * 2 * 8 * 64 * 2 + q_bytes, 1);
  cr_expect_float_eq(c0.flops, 4.0 * 64 * 64 * 4096, 1);
  cr_expect_float_eq(c1.bytes, 55086.0 * 2 * 8 * 64 * 2 + q_bytes, 1);
  cr_expect_float_eq(c22.bytes, c0.bytes, 1);
  cr_expect_float_eq(c23.bytes, c1.bytes, 1);
  char words[RP_ATTENTION_TEXT_BYTES];
  cr_expect(strstr(rp_attention_check(&why, words, sizeof words),
                   "12 of its layers attend to the last 128 tokens only") != NULL,
            "%s", words);
  /* a prefill phase: the window never reads more than the sequence has */
  an_exec_facts pre = {0};
  pre.attn_q_tokens = 8155, pre.attn_kv_tokens = 8430, pre.attn_seqs = 9;
  pre.attn_pairs = 7671310 - (7475785 - 8155) / 2.0, pre.steps_with_attn = 1;
  cr_assert(an_attn_plan_make(m, &pre, 1, 24, 0, &p, &why));
  cr_expect_float_eq(why.window_kv_tokens, 8430.0, 1e-9);
  cr_expect_float_eq(why.window_pairs, 8155.0 * 128, 1e-9);
  /* no sequence count stated: no window bound on the reads */
  pre.attn_seqs = 0;
  cr_assert(an_attn_plan_make(m, &pre, 1, 24, 0, &p, &why));
  cr_expect_float_eq(why.window_kv_tokens, 8430.0, 1e-9);
}

/* ------------------------------------------------------------------ MoE from model facts */

TestSuite(roofline_moe, .init = setup, .fini = teardown);

/* A trace whose one CPU op shows a weight [rows, cols]. */
static tr_trace *weight_trace(long rows, long cols) {
  char doc[512];
  snprintf(doc, sizeof doc,
           "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"ts\":1,\"dur\":1,"
           "\"args\":{\"Input Dims\":[[32, %ld], [%ld, %ld], []],\"Input type\":[" BF16 ", " BF16
           ", \"\"]}}]",
           cols, rows, cols);
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  return t;
}

Test(roofline_moe, expected_active_experts) {
  /* one token: exactly top-k experts; many tokens: all of them */
  cr_expect_float_eq(an_moe_active_experts(32, 4, 1), 4.0, 1e-12);
  cr_expect_float_eq(an_moe_active_experts(32, 4, 8192), 32.0, 1e-9);
  /* 32 tokens to top-4 of 32: each misses an expert with p 7/8 */
  cr_expect_float_eq(an_moe_active_experts(32, 4, 32), 32.0 * (1 - pow(0.875, 32)), 1e-9);
  cr_expect_eq(an_moe_active_experts(0, 4, 32), 0);
  cr_expect_eq(an_moe_active_experts(32, 4, 0), 0);
}

Test(roofline_moe, found_from_content_then_costed) {
  tr_trace *t = weight_trace(201088, 2880); /* gpt-oss lm_head */
  an_model_scan sc = scan_of(t), *s = &sc;
  an_moe_plan p;
  an_model_check why;
  /* 24 layers x 2 a step: gpt-oss-20b, not the 36-layer 120b */
  cr_assert(an_moe_plan_find(g_rules, s, 32, 1, 48, &p, &why), "kind %d", why.kind);
  cr_expect_str_eq(p.model->id, "gpt-oss-20b");
  cr_expect_eq(p.cycle, 48);
  cr_expect(an_moe_plan_find(g_rules, s, 32, 2, 144, &p, &why));
  cr_expect_str_eq(p.model->id, "gpt-oss-120b");
  cr_expect_eq(why.kind, AN_CHECK_MOE_HELD);
  cr_expect_eq(why.experts, 128);
  an_roofline_model line = {.check = why};
  char words[RP_MODEL_TEXT_BYTES];
  cr_expect_str_eq(rp_model_check(&line, words, sizeof words),
                   "lm_head [201088, 2880] in a CPU op's shapes; 144 grouped GEMM launches = 2 "
                   "step(s) x (gate/up + down) x 36 layers; 32 tokens a step (step annotation) to "
                   "top-4 of 128 experts: 81.7 experts active");
  an_op_cost c;
  cr_assert(an_moe_plan_find(g_rules, s, 32, 1, 48, &p, &why));
  double active = 32.0 * (1 - pow(0.875, 32)), mxfp4 = 4.25 / 8;
  an_moe_gemm_cost(&p, 0, &c); /* layer 0 gate/up: N = 2 x 2880, K = 2880 */
  cr_expect_eq(c.flops, 2.0 * 32 * 4 * 5760 * 2880);
  cr_expect_float_eq(c.bytes, active * 5760 * 2880 * mxfp4 + 32 * 4 * (5760 + 2880) * 2.0, 1);
  cr_expect_str_eq(c.dtype->id, "bf16");
  an_moe_gemm_cost(&p, 47, &c); /* layer 23 down: N = 2880, K = 2880 */
  cr_expect_eq(c.flops, 2.0 * 32 * 4 * 2880 * 2880);
  cr_expect_float_eq(c.bytes, active * 2880 * 2880 * mxfp4 + 32 * 4 * 5760 * 2.0, 1);
  /* the weight bytes of one gate/up launch: about 278 MB of MXFP4 at 31.6 experts */
  an_moe_gemm_cost(&p, 0, &c);
  cr_expect(c.bytes > 275e6 && c.bytes < 285e6, "%g", c.bytes);
  an_model_scan_free(s);
  tr_trace_destroy(t);
}

/* The dense projections replayed beside the grouped GEMMs (vLLM gpt-oss: QKV, o_proj and
 * the router per layer) take the found model's dimensions at the step's tokens, only when
 * they are whole layers of 2 or 3 in every step. */
Test(roofline_moe, dense_projections_beside_the_experts) {
  tr_trace *t = weight_trace(201088, 2880);
  an_model_scan sc = scan_of(t), *s = &sc;
  an_moe_plan p;
  an_model_check why;
  cr_assert(an_moe_plan_find(g_rules, s, 8192, 1, 48, &p, &why)); /* gpt-oss-20b, prefill */
  cr_expect_not(an_moe_dense_fit(&p, 50), "50 launches are not whole layers");
  cr_expect_eq(p.dense_per_layer, 0);
  cr_expect_not(an_moe_dense_fit(&p, 0));
  cr_assert(an_moe_dense_fit(&p, 72));
  cr_expect_eq(p.dense_per_layer, 3);
  an_op_cost c;
  double t8 = 8192;
  an_moe_dense_cost(&p, 0, &c); /* QKV: N = (64 + 2 x 8) x 64 = 5120, K = 2880 */
  cr_expect_eq(c.flops, 2.0 * t8 * 5120 * 2880);
  cr_expect_float_eq(c.bytes, 5120.0 * 2880 * 2 + t8 * (5120 + 2880) * 2, 1);
  cr_expect_str_eq(c.dtype->id, "bf16");
  an_moe_dense_cost(&p, 70, &c); /* layer 23 o_proj: N = 2880, K = 64 x 64 */
  cr_expect_eq(c.flops, 2.0 * t8 * 2880 * 4096);
  an_moe_dense_cost(&p, 71, &c); /* layer 23 router: N = 32 experts, K = 2880 */
  cr_expect_eq(c.flops, 2.0 * t8 * 32 * 2880);
  cr_assert(an_moe_dense_fit(&p, 48)); /* no router GEMM among them */
  cr_expect_eq(p.dense_per_layer, 2);
  an_moe_dense_cost(&p, 47, &c);
  cr_expect_eq(c.flops, 2.0 * t8 * 2880 * 4096);
  why.dense_launches = 72, why.dense_per_layer = 3;
  an_roofline_model line = {.check = why};
  char words[RP_MODEL_TEXT_BYTES];
  cr_expect(strstr(rp_model_check(&line, words, sizeof words),
                   "; 72 dense GEMM launches = 1 step(s) x (QKV, o_proj, router) x 24 layers"),
            "%s", words);
  line.check.dense_launches = 50, line.check.dense_per_layer = 0;
  cr_expect(strstr(rp_model_check(&line, words, sizeof words),
                   "50 dense GEMM launches are not 2 (QKV, o_proj) or 3"),
            "%s", words);
  an_model_scan_free(s);
  tr_trace_destroy(t);
}

Test(roofline_moe, nothing_claimed_without_evidence) {
  tr_trace *t = weight_trace(201088, 2880);
  an_model_scan sc = scan_of(t), *s = &sc;
  an_moe_plan p;
  an_model_check why;
  an_roofline_model line = {0};
  char words[RP_MODEL_TEXT_BYTES];
  cr_expect_not(an_moe_plan_find(g_rules, s, 32, 1, 50, &p, &why), "50 launches");
  cr_expect_eq(why.kind, AN_CHECK_MOE_NO_FIT);
  cr_expect_eq(why.misfit, AN_MOE_MISFIT_LAUNCHES);
  line.check = why;
  cr_expect_str_eq(rp_model_check(&line, words, sizeof words),
                   "no mixture-of-experts entry fits 50 grouped GEMM launches in 1 step(s): the "
                   "grouped GEMM launches are not 2 a layer in each step");
  cr_expect_null(p.model);
  cr_expect_not(an_moe_plan_find(g_rules, s, 0, 1, 48, &p, &why), "no tokens");
  cr_expect_eq(why.kind, AN_CHECK_MOE_NO_TOKENS);
  line.check = why;
  cr_expect_str_eq(rp_model_check(&line, words, sizeof words),
                   "the step annotations state no one token count for the stage's steps");
  an_model_scan_free(s);
  tr_trace_destroy(t);
  t = weight_trace(151936, 4096); /* a Qwen3-8B lm_head: no MoE entry has it */
  sc = scan_of(t);
  cr_expect_not(an_moe_plan_find(g_rules, s, 32, 1, 48, &p, &why));
  cr_expect_eq(why.misfit, AN_MOE_MISFIT_NO_LM_HEAD);
  line.check = why;
  cr_expect(strstr(rp_model_check(&line, words, sizeof words), "lm_head"), "%s", words);
  an_model_scan_free(s);
  tr_trace_destroy(t);
  cr_expect(an_moe_gemm_kernel(g_rules, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu"));
  cr_expect_not(an_moe_gemm_kernel(g_rules, "_finalize_matmul_scatter_bf16"));
}

/* ------------------------------------------------------------------ time nesting */

TestSuite(roofline_nest);

static int cmp_f64(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define OP(name, tid, ts, dur)                                                                    \
  "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts \
  ",\"dur\":" #dur "}"
#define CALL(tid, ts)                                                                            \
  "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":" #tid \
  ",\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #ts ",\"External id\":" #ts "}}"

Test(roofline_nest, innermost_op_of_the_launching_thread) {
  /* thread 7: linear > addmm > (mm, zero_, then later add_); thread 8: one op over
   * everything. zero_ spans no launch call, yet the last op starting before the call at 60
   * is zero_: the whole index walks up from it. */
  const char *doc = "[" OP("aten::linear", 7, 10, 100) "," OP("aten::addmm", 7, 20, 50) ","
      OP("aten::mm", 7, 25, 10) "," OP("aten::zero_", 7, 40, 5) "," OP("aten::add_", 7, 80, 5) ","
      OP("aten::other", 8, 0, 500) ","
      CALL(7, 30) "," CALL(7, 60) "," CALL(7, 82) "," CALL(7, 200) "," CALL(8, 60) "]";
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_op_nest x;
  cr_assert_eq(an_op_nest_build(&x, t), 0);
  size_t n;
  const tr_event *calls = tr_trace_events(t, TR_KIND_LAUNCH, &n);
  cr_assert_eq(n, 5);
  const char *want[] = {"aten::mm", "aten::addmm", "aten::add_", NULL, "aten::other"};
  for (size_t i = 0; i < n; i++) {
    const tr_event *op = an_op_nest_around(&x, &calls[i]);
    if (!want[i])
      cr_expect_null(op, "call %zu", i);
    else
      cr_expect_str_eq(op ? tr_str_get(t, op->name) : "(none)", want[i], "call %zu", i);
    /* searched from any place (the last answer of a caller asking in time order, or none
     * yet), the answer is the same, and the hint moves to where the search ended */
    for (size_t h0 = 0; h0 <= x.n + 1; h0++) {
      size_t hint = h0;
      long e = an_op_nest_around_entry_near(&x, &calls[i], &hint);
      cr_expect_eq(e, an_op_nest_around_entry(&x, &calls[i]), "call %zu from %zu", i, h0);
      cr_expect_leq(hint, x.n, "call %zu from %zu", i, h0);
    }
  }
  /* the index over the ops spanning the calls' starts answers the same at those starts,
   * enclosing ops included, and leaves out zero_ */
  double at[5];
  for (size_t i = 0; i < n; i++) at[i] = tr_event_ts(t, &calls[i]);
  qsort(at, n, sizeof *at, cmp_f64);
  an_op_nest y;
  cr_assert_eq(an_op_nest_build_at(&y, t, at, n), 0);
  cr_expect_eq(y.n, x.n - 1, "kept %zu of %zu ops", y.n, x.n);
  for (size_t i = 0; i < n; i++) {
    const tr_event *whole = an_op_nest_around(&x, &calls[i]),
                   *few = an_op_nest_around(&y, &calls[i]);
    cr_expect_eq(few, whole, "call %zu", i);
    if (whole)
      cr_expect_eq(an_op_nest_enclosing(&y, few), an_op_nest_enclosing(&x, whole), "call %zu", i);
  }
  an_op_nest_free(&y);
  an_op_nest_free(&x);
  tr_trace_destroy(t);
}

/* One op around n flat ones: a child's enclosing op lies up to n entries back, past
 * AN_NEST_FAR from the 65,535th on. Each answers the root either way; more than a quarter
 * far, the nest keeps the entries themselves. */
static void check_flat_children(size_t n, bool unfolded) {
  size_t cap = (n + 2) * 96, len = 0;
  char *doc = malloc(cap);
  len += (size_t)snprintf(doc, cap,
                          "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"root\",\"pid\":1,"
                          "\"tid\":1,\"ts\":0,\"dur\":%zu}",
                          10 * (n + 1));
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(doc + len, cap - len,
                            ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\",\"pid\":1,\"tid\":1,"
                            "\"ts\":%zu,\"dur\":5}",
                            10 * i + 1);
  snprintf(doc + len, cap - len, "]");
  tr_error err;
  tr_trace *t = tr_trace_read_buffer("t.json", doc, strlen(doc), NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  an_op_nest x;
  cr_assert_eq(an_op_nest_build(&x, t), 0);
  cr_assert_eq(x.n, n + 1);
  cr_expect_eq(x.parent != NULL, unfolded, "n %zu: %zu far", n, x.n_far);
  size_t nops;
  const tr_event *ops = tr_trace_events(t, TR_KIND_CPU_OP, &nops);
  cr_expect_eq(an_op_nest_parent(&x, 0), -1);
  for (size_t k = 1; k < x.n; k++) {
    cr_assert_eq(an_op_nest_parent(&x, (long)k), 0, "entry %zu of %zu", k, n);
    cr_assert_eq(an_op_nest_enclosing(&x, an_op_nest_op(&x, (long)k)), &ops[0], "entry %zu", k);
  }
  cr_expect_eq(an_op_nest_child(&x, &ops[0], "c"), &ops[1]);
  an_op_nest_free(&x);
  tr_trace_destroy(t);
  free(doc);
}

Test(roofline_nest, enclosing_op_far_back) {
  check_flat_children(70000, false);
  check_flat_children(100000, true);
}

/* ------------------------------------------------------------------ fold order */

/* One op launching one kernel on stream 7: the CPU op (External id e), its launch call and
 * the kernel (correlation e), as Kineto writes them; host and GPU times in us. */
static size_t launch_event(char *doc, size_t cap, const char *op, const char *dims,
                           const char *launch, const char *kernel, long e, double host, double gpu,
                           double dur) {
  return (size_t)snprintf(
      doc, cap,
      ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
      "\"dur\":20,\"args\":{\"External id\":%ld,\"Input Dims\":%s,\"Input type\":["
      "\"c10::BFloat16\",\"c10::BFloat16\"]}}"
      ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":1,\"tid\":1,"
      "\"ts\":%.3f,\"dur\":5,\"args\":{\"External id\":%ld,\"correlation\":%ld}}"
      ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
      "\"dur\":%.3f,\"args\":{\"External id\":%ld,\"correlation\":%ld,\"stream\":7,"
      "\"device\":0}}",
      op, host, e, dims, launch, host + 10, e, e, kernel, gpu, dur, e, e);
}

/* A SGLang prefill of 8192 tokens on an H100 (HBM3) through a small model's MLP
 * (Qwen1.5-0.5B: hidden 1024, intermediate 2816), 4 layers, 2 steps: cuBLAS's gate_up GEMM
 * [8192, 1024] x [1024, 5632], FlashInfer's SiLU-and-mul on its [8192, 5632] output, the
 * down GEMM [8192, 2816] x [2816, 1024]. The gate_up GEMM runs at gemm_pct of the down
 * GEMM's rate, the activation at act_tbs TB/s: the caller's doc (free it). */
static char *mlp_prefill(double gemm_pct, double act_tbs) {
  static const char *const gate_up = "[[8192, 1024], [1024, 5632]]",
                           *act = "[[8192, 2816], [8192, 5632]]",
                           *down = "[[8192, 2816], [2816, 1024]]";
  const char *g1 =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_"
      "execute_segment_k_off_kernel__5x_cublas";
  const char *g2 =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
      "execute_segment_k_off_kernel__5x_cublas";
  const char *ak =
      "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> "
      ">(__nv_bfloat16*, __nv_bfloat16 const*, int)";
  double down_tflops = 650, down_us = 2.0 * 8192 * 2816 * 1024 / (down_tflops * 1e6);
  double up_us = 2.0 * 8192 * 1024 * 5632 / (down_tflops * gemm_pct / 100 * 1e6);
  double act_us = 8192.0 * (2816 + 5632) * 2 / (act_tbs * 1e6);
  size_t cap = 64 * 1024, len = 0;
  char *doc = malloc(cap);
  cr_assert_not_null(doc);
  len += (size_t)snprintf(doc, cap,
                          "{\"cuda_runtime_version\":12080,\"deviceProperties\":[{\"id\":0,"
                          "\"name\":\"NVIDIA H100 80GB HBM3\",\"computeMajor\":9,"
                          "\"computeMinor\":0,\"numSms\":132}],\"traceEvents\":[");
  double gpu = 1000, host = 0;
  long e = 100;
  for (int s = 0; s < 2; s++) {
    double start = gpu, step = 4 * (up_us + act_us + down_us + 6);
    len += (size_t)snprintf(doc + len, cap - len,
                            "%s{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":"
                            "\"step[EXTEND bs=8 toks=8192]\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
                            "\"dur\":%.3f}",
                            s ? "," : "", start, step + 2);
    for (int l = 0; l < 4; l++) {
      len += launch_event(doc + len, cap - len, "aten::mm", gate_up, "cudaLaunchKernel", g1, e++,
                          host, gpu, up_us);
      gpu += up_us + 2, host += 40;
      len += launch_event(doc + len, cap - len, "sgl_kernel::silu_and_mul", act, "cudaLaunchKernel",
                          ak, e++, host, gpu, act_us);
      gpu += act_us + 2, host += 40;
      len += launch_event(doc + len, cap - len, "aten::mm", down, "cudaLaunchKernel", g2, e++, host,
                          gpu, down_us);
      gpu += down_us + 2, host += 40;
    }
    gpu = start + step + 50;
    host = gpu - 900;
  }
  cr_assert_lt(len + 3, cap);
  snprintf(doc + len, cap - len, "]}");
  return doc;
}

static const an_summary_item *item_of(const an_report *rep, an_action a, size_t *at) {
  for (size_t i = 0; i < rep->n_summary; i++)
    if (rep->summary[i].action == a) {
      *at = i + 1;
      return &rep->summary[i];
    }
  *at = 0;
  return NULL;
}

/* Review 19 defect 4 (fbaa293), on a model whose activation is large beside its GEMMs (a
 * hidden of 1024: SiLU-and-mul moves 1.5 x what the gate_up GEMM's FLOPs take at 1024 B a
 * FLOP ratio): the SiLU-and-mul at its HBM rate folds into the gate_up GEMM (its whole
 * time), and that GEMM, under the tuning bar, has a tuning item that wins less than the
 * fold. The fold still comes after it, names it, and breaks even against the tuned GEMM;
 * with the GEMM at its rate there is no tuning item and the fold breaks even against the
 * GEMM as it runs. */
Test(roofline_fold, a_fold_comes_after_its_gemms_tuning, .init = setup, .fini = teardown) {
  char *doc = mlp_prefill(81, 2.8);
  an_report *rep = test_run_trace(g_rules, "sglang", doc, strlen(doc));
  size_t tune_at, fold_at;
  const an_summary_item *tune = item_of(rep, AN_ACTION_TUNE_KERNEL, &tune_at);
  const an_summary_item *fold = item_of(rep, AN_ACTION_FOLD_GEMM, &fold_at);
  cr_assert_not_null(
      tune,
      "the gate_up GEMM at 81%% of the down GEMM's rate, under the bar past its floors, is tuned");
  cr_assert_not_null(fold, "the SiLU-and-mul at its rate folds into the gate_up GEMM");
  cr_assert_gt(fold->at_stake_us, tune->at_stake_us,
               "the fixture: the fold wins more than the tuning");
  cr_expect_gt(fold_at, tune_at, "the fold comes after the tuning of its GEMM, whatever its bound");
  cr_expect_eq(fold->fold_after, tune_at, "the fold names the item it follows");
  const an_stage_report *st = &rep->stages[0];
  size_t g = fold->fold_row - 1;
  cr_assert_eq(tune->row, g, "the tuning item's evidence is the GEMM the fold folds into");
  /* the GEMM less its own headroom (the tuning item also holds the down GEMM's) */
  const an_roofline *f = an_row_roofline(st, &st->kernels[g]);
  double gemm = fold->fold_us, tuned = fold->fold_tuned_us;
  cr_expect_float_eq(tuned, gemm * (1 - f->headroom_us / f->time_us), 1e-6 * gemm,
                     "the GEMM's time once tuned");
  cr_expect_lt(gemm - tuned, tune->at_stake_us);
  cr_expect_float_eq(fold->fold_breakeven_pct, fold->at_stake_us / tuned * 100.0, 1e-6,
                     "break-even against the tuned GEMM");
  cr_expect(strstr(st->kernels[g].name, "tilesize256x128x64") != NULL, "%s", st->kernels[g].name);
  an_report_destroy(rep);
  free(doc);
  /* the gate_up GEMM at the down GEMM's rate: nothing to tune first */
  doc = mlp_prefill(100, 2.8);
  rep = test_run_trace(g_rules, "sglang", doc, strlen(doc));
  tune = item_of(rep, AN_ACTION_TUNE_KERNEL, &tune_at);
  fold = item_of(rep, AN_ACTION_FOLD_GEMM, &fold_at);
  cr_assert_not_null(fold);
  cr_expect_null(tune);
  cr_expect_eq(fold->fold_after, 0);
  cr_expect_eq(fold->fold_tuned_us, 0);
  cr_expect_float_eq(fold->fold_breakeven_pct, fold->at_stake_us / fold->fold_us * 100.0, 1e-6);
  an_report_destroy(rep);
  free(doc);
}
