/*
 * Unit tests of the step windows (analysis/steps.h) on synthetic timelines shaped like
 * real ones: a host thread with annotations, CPU ops and launch calls, a GPU stream whose
 * kernels carry the launches' correlation ids.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bundle.h"
#include "analysis/steps.h"
#include "cli/rules_setup.h"
#include "trace/trace.h"

static te_rules *rules;

static void setup(void) {
  setenv("TRIAGE_RULES_DIR", TRIAGE_SOURCE_DIR "/rules", 1);
  triage_rules_setup_options so = {0};
  rules = triage_rules_setup("triage", &so, stderr);
  cr_assert_not_null(rules, "default packs must load");
}
static void teardown(void) { te_rules_destroy(rules); }

/* ---------------------------------------------------------------- a trace builder */

typedef struct tb {
  char buf[1 << 16];
  size_t n;
  int corr; /* next correlation id */
} tb;

static void tb_add(tb *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  b->n += (size_t)vsnprintf(b->buf + b->n, sizeof b->buf - b->n, fmt, ap);
  va_end(ap);
  cr_assert_lt(b->n, sizeof b->buf);
}

static void tb_begin(tb *b) {
  b->n = 0;
  b->corr = 1000;
  tb_add(b, "{\"traceEvents\":[");
}

/* A host event on thread 1 of process 1. */
static void host(tb *b, const char *cat, const char *name, double ts, double dur) {
  tb_add(b,
         "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
         "\"dur\":%.3f},",
         cat, name, ts, dur);
}

/* A launch call at ts and its kernel at kts on stream 7; returns the correlation id. */
static int launch(tb *b, const char *kernel, double ts, double kts, double kdur) {
  int c = b->corr++;
  tb_add(b,
         "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
         "\"tid\":1,\"ts\":%.3f,\"dur\":2,\"args\":{\"correlation\":%d}},",
         ts, c);
  tb_add(b,
         "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
         "\"dur\":%.3f,\"args\":{\"stream\":7,\"correlation\":%d}},",
         kernel, kts, kdur, c);
  return c;
}

static tr_trace *tb_read(tb *b) {
  tb_add(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"gpu\"}}]}");
  tr_error err = {0};
  tr_trace *t = tr_trace_read_buffer("synthetic.json", b->buf, b->n, NULL, &err);
  cr_assert_not_null(t, "%s", err.message);
  return t;
}

typedef struct built {
  tr_trace *t;
  an_trace_view v;
  an_steps s;
} built;

static void build(tb *b, built *out) {
  out->t = tb_read(b);
  cr_assert_eq(an_trace_view_build(out->t, NULL, rules, NULL, &out->v), AN_OK);
  cr_assert_eq(an_steps_build(&out->v, rules, &out->s), AN_OK);
}

static void unbuild(built *x) {
  an_steps_free(&x->s);
  an_trace_view_free(&x->v);
  tr_trace_destroy(x->t);
}

/* Step of the kernel named name (the first such event). */
static int32_t step_of(const built *x, const char *name) {
  size_t n = 0;
  const tr_event *k = tr_trace_events(x->t, TR_KIND_KERNEL, &n);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(tr_str_get(x->t, k[i].name), name)) return x->s.kernel_step[i];
  cr_assert_fail("no kernel %s", name);
  return -2;
}

/* ---------------------------------------------------------------- steps */

/* ProfilerStep#6: the previous step's tail runs on the GPU while the new step's CPU
 * window opens with a sync; it was launched before the window, so it is no part of the
 * step, though it runs inside the CPU window. */
Test(steps, profiler_step_leaves_out_the_previous_tail, .init = setup, .fini = teardown) {
  tb b;
  tb_begin(&b);
  launch(&b, "tail_kernel", 10, 100, 400);
  host(&b, "user_annotation", "ProfilerStep#6", 50, 1000);
  host(&b, "cuda_runtime", "cudaDeviceSynchronize", 55, 450);
  launch(&b, "gemm_a", 510, 520, 30);
  launch(&b, "gemm_b", 530, 560, 40);
  launch(&b, "after_step", 1100, 1110, 5);
  built x;
  build(&b, &x);
  cr_assert_eq(x.s.source, AN_STEPS_CPU_ANNOTATION);
  cr_assert_eq(x.s.n, 1);
  const an_step *st = &x.s.steps[0];
  cr_assert_str_eq(st->name, "ProfilerStep#6");
  cr_assert_eq(st->n_kernels, 2);
  cr_assert_float_eq(st->gpu_ts, 520, 1e-9);
  cr_assert_float_eq(st->gpu_end, 600, 1e-9);
  cr_assert_float_eq(st->kernel_us, 70, 1e-9);
  cr_assert_eq(step_of(&x, "tail_kernel"), -1);
  cr_assert_eq(step_of(&x, "gemm_a"), 0);
  cr_assert_eq(step_of(&x, "after_step"), -1);
  cr_assert_str_eq(st->stage_id, "all");
  cr_assert_eq(an_steps_count(&x.s, NULL), 1);
  cr_assert_eq(an_steps_count(&x.s, "decode"), 0);
  unbuild(&x);
}

/* SGLang: execute_..._generation_.. around step[DECODE ...] is one step (the outer one),
 * staged decode by its kernels; an empty step between two (no kernel launched in it) is
 * dropped. */
Test(steps, nested_serving_markers_are_one_step, .init = setup, .fini = teardown) {
  tb b;
  tb_begin(&b);
  host(&b, "user_annotation", "execute_32_context_0(sq0)_generation_32(sq32)", 0, 500);
  host(&b, "user_annotation", "step[DECODE bs=32]", 20, 470);
  launch(&b, "decode_a", 100, 300, 50);
  launch(&b, "decode_b", 110, 350, 50);
  host(&b, "user_annotation", "execute_context_0(0)_generation_0(0)", 600, 50);
  host(&b, "user_annotation", "step[DECODE bs=32]", 700, 400);
  launch(&b, "decode_c", 710, 900, 50);
  built x;
  build(&b, &x);
  cr_assert_eq(x.s.n, 2);
  cr_assert_str_eq(x.s.steps[0].stage_id, "decode");
  cr_assert_str_eq(x.s.steps[1].name, "step[DECODE bs=32]");
  cr_assert_eq(step_of(&x, "decode_b"), 0);
  cr_assert_eq(step_of(&x, "decode_c"), 1);
  cr_assert_eq(an_steps_count(&x.s, "decode"), 2);
  unbuild(&x);
}

/* A micro-benchmark: no step marker, one top-level annotation called three times (a
 * nested one inside each); the first call is a warm-up (its GPU window is several times
 * the others'), flagged and not counted. */
Test(steps, repeated_calls_with_a_warmup, .init = setup, .fini = teardown) {
  tb b;
  tb_begin(&b);
  const double at[3] = {0, 2000, 4000};
  for (int c = 0; c < 3; c++) {
    host(&b, "user_annotation", "MoE[experts=64]", at[c], 900);
    host(&b, "user_annotation", "expert_ffn", at[c] + 10, 500);
    launch(&b, "k1", at[c] + 20, at[c] + 30, 10);
    launch(&b, "k2", at[c] + 40, at[c] + (c ? 60 : 900), 10);
  }
  built x;
  build(&b, &x);
  cr_assert_eq(x.s.source, AN_STEPS_ITERATION);
  cr_assert_eq(x.s.n, 3);
  cr_assert(x.s.steps[0].warmup);
  cr_assert(!x.s.steps[1].warmup && !x.s.steps[2].warmup);
  cr_assert_eq(an_steps_count(&x.s, NULL), 2);
  size_t n = 0;
  tr_trace_events(x.t, TR_KIND_KERNEL, &n);
  size_t counted = 0;
  for (size_t i = 0; i < n; i++) counted += an_steps_kernel_counted(&x.s, i);
  cr_assert_eq(counted, 4);
  unbuild(&x);
}

/* Two different top-level annotations are not iterations: no steps, every kernel counts. */
Test(steps, different_annotations_are_no_steps, .init = setup, .fini = teardown) {
  tb b;
  tb_begin(&b);
  host(&b, "user_annotation", "## forward ##", 0, 100);
  launch(&b, "fwd", 10, 20, 10);
  host(&b, "user_annotation", "## backward ##", 200, 100);
  launch(&b, "bwd", 210, 220, 10);
  built x;
  build(&b, &x);
  cr_assert_eq(x.s.source, AN_STEPS_NONE);
  cr_assert_eq(x.s.n, 0);
  cr_assert(an_steps_kernel_counted(&x.s, 0));
  unbuild(&x);
}

/* Only GPU annotations: the kernels that start inside each window. */
Test(steps, gpu_annotations, .init = setup, .fini = teardown) {
  tb b;
  tb_begin(&b);
  tb_add(&b,
         "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":0,"
         "\"tid\":7,\"ts\":100,\"dur\":100},");
  launch(&b, "in_window", 10, 120, 10);
  launch(&b, "outside", 20, 300, 10);
  built x;
  build(&b, &x);
  cr_assert_eq(x.s.source, AN_STEPS_GPU_ANNOTATION);
  cr_assert_eq(step_of(&x, "in_window"), 0);
  cr_assert_eq(step_of(&x, "outside"), -1);
  unbuild(&x);
}
