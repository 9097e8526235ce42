/*
 * test_names.c - display names (src/report/names.h): demangling and its bounds, the
 * generic collapse, the packs' family rules, the length cap, and uniqueness within a
 * table on real collisions of the shared traces.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/trace_view.h"
#include "cli/rules_setup.h"
#include "default_rules.h"
#include "report/names.h"
#include "trace/trace.h"

static te_rules *rules;
static rp_names *nm;

static void setup(void) {
  rules = test_default_rules();
  nm = rp_names_create(rules);
  cr_assert_not_null(nm);
}

static void teardown(void) {
  rp_names_destroy(nm);
  te_rules_destroy(rules);
}

/* Characters (UTF-8 code points) of s. */
static size_t chars(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void assert_display(const char *full, const char *want) {
  char *got = rp_names_display(nm, full);
  cr_assert_not_null(got);
  cr_assert_str_eq(got, want, "display of %s", full);
  free(got);
}

static void assert_demangle(const char *in, const char *want) {
  char *got = rp_names_demangle(in);
  cr_assert_not_null(got);
  cr_assert_str_eq(got, want);
  free(got);
}

/* ------------------------------------------------------------------ demangling */

Test(names_demangle, itanium_names) {
  assert_demangle(
      "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_"
      "diiiiiii",
      "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 64, 8, false, "
      "false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, "
      "std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int)");
  assert_demangle("_ZN7cutlass6KernelINS_1XEEEvNT_6ParamsE",
                  "void cutlass::Kernel<cutlass::X>(cutlass::X::Params)");
}

Test(names_demangle, anything_else_comes_back_unchanged) {
  const char *same[] = {
      "Cijk_Alik_Bljk_BBS_BH_MT64x32x256", "void foo<int>(int*)", "", "_Z", "i", "_ZN5aiter",
      "_ZZZZ\xff\xfe",
      /* a newer mangling (template parameter declarations) this demangler lacks */
      "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_"
      "S5_EEEEvPS3_PS4_i"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) assert_demangle(same[i], same[i]);
}

Test(names_demangle, longest_name_is_bounded) {
  /* Over RP_MAX_DEMANGLE_BYTES the demangler is not called (its stack grows with the
   * input): a 1 MiB name of nested components comes back unchanged, at once. */
  size_t len = 1u << 20;
  char *s = malloc(len + 8);
  strcpy(s, "_ZN");
  size_t k = 3;
  while (k + 8 < len) {
    memcpy(s + k, "3abc", 4);
    k += 4;
  }
  strcpy(s + k, "Ev");
  cr_assert_gt(strlen(s), RP_MAX_DEMANGLE_BYTES);
  clock_t t0 = clock();
  assert_demangle(s, s);
  cr_assert_lt((double)(clock() - t0) / CLOCKS_PER_SEC, 1.0);
  free(s);
}

/* B0<A, A>, B1<B0<A, A>, B0<A, A> >, ...: each level doubles the text. */
static char *doubling_name(int levels) {
  char *s = malloc(64 + (size_t)levels * 24);
  strcpy(s, "_Z1f1A");
  for (int k = 0; k < levels; k++) {
    char ref[16];
    int prev = 2 * k - 1; /* substitution index of the previous template, -1 = S_ */
    if (prev < 0)
      snprintf(ref, sizeof ref, "S_");
    else if (prev < 10)
      snprintf(ref, sizeof ref, "S%d_", prev);
    else
      snprintf(ref, sizeof ref, "S%c%c_", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[prev / 36],
               "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[prev % 36]);
    sprintf(s + strlen(s), "2B%dI%s%sE", k % 10, ref, ref);
  }
  return s;
}

Test(names_demangle, exponential_text_stops_at_the_limit) {
  char *small = doubling_name(3);
  char *d = rp_names_demangle(small);
  cr_assert_str_eq(d,
                   "f(A, B0<A, A>, B1<B0<A, A>, B0<A, A> >, B2<B1<B0<A, A>, B0<A, A> >, "
                   "B1<B0<A, A>, B0<A, A> > >)");
  free(d);
  /* 60 levels would be ~2^60 bytes; under 300 input bytes */
  char *bomb = doubling_name(60);
  cr_assert_lt(strlen(bomb), 1000);
  clock_t t0 = clock();
  assert_demangle(bomb, bomb);
  cr_assert_lt((double)(clock() - t0) / CLOCKS_PER_SEC, 2.0);
  free(small);
  free(bomb);
}

/* ------------------------------------------------------------------ one name */

Test(names_display, generic_collapse, .init = setup, .fini = teardown) {
  /* void, parameters and namespaces of short names: as is, minus void and parameters */
  assert_display(
      "void rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, int)",
      "rotary_embedding_kernel<c10::BFloat16, true>");
  assert_display("ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn");
  assert_display("Memset (Device)", "Memset (Device)");
  /* demangled, dtype kept at the outer level */
  assert_display(
      "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_"
      "diiiiiii",
      "aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 64, 8, false, false, "
      "true, 1>");
  /* long: nested arguments collapse, then qualifiers inside arguments go */
  assert_display(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, "
      "at::detail::Array<char*, 2> >(int, at::native::CUDAFunctorOnSelf_add<float>, "
      "at::detail::Array<char*, 2>)",
      "at::native::vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add<\xe2\x80\xa6>, "
      "Array<\xe2\x80\xa6> >");
  /* profiler names of lambdas inside templates: everything but the kernel collapses */
  assert_display(
      "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, "
      "4, "
      "at::native::templates::cuda::uniform_and_transform<float, float, 4ul, "
      "at::CUDAGeneratorImpl*, "
      "at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&,"
      " "
      "double, double, at::CUDAGeneratorImpl*)::{lambda(float)#1}> >(at::TensorIteratorBase&, "
      "at::CUDAGeneratorImpl*)",
      "at::native::(anonymous "
      "namespace)::distribution_elementwise_grid_stride_kernel<\xe2\x80\xa6>");
}

Test(names_display, family_rules_from_the_packs, .init = setup, .fini = teardown) {
  assert_display(
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1_AFEM1",
      "Cijk_Alik_Bljk_BBS MT128x256x32 MI16x16x1");
  assert_display("nvjet_sm90_tst_160x128_64x4_2x1_v_bz_TNT", "nvjet tst 160x128 TNT");
  assert_display(
      "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassIiEEEEEEvNT0_"
      "5KargsE",
      "ck_tile Rmsnorm2dFwd");
}

Test(names_display, cap_is_a_pack_setting_and_never_exceeded, .init = setup, .fini = teardown) {
  char name[2048];
  memset(name, 'k', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  char *d = rp_names_display(nm, name);
  cr_assert_eq(chars(d), 120);
  cr_assert(!strcmp(d + strlen(d) - 3, "\xe2\x80\xa6"));
  free(d);
  te_rules *r = te_rules_create();
  te_diags *dg = te_diags_create();
  const char *pack = "pack: p\nversion: 1\nsettings: {names: {display_max_chars: 50}}\n";
  cr_assert_eq(te_rules_load_buffer(r, "p.yaml", pack, strlen(pack), dg), TE_OK);
  cr_assert_eq(te_rules_finalize(r, dg), TE_OK);
  rp_names *small = rp_names_create(r);
  cr_assert_eq(rp_names_max_chars(small), 50);
  /* a multi-byte character is never cut in half */
  char wide[400] = "";
  for (int i = 0; i < 100; i++) strcat(wide, "\xc3\xa9");
  d = rp_names_display(small, wide);
  cr_assert_eq(chars(d), 50);
  cr_assert(!strncmp(d, "\xc3\xa9", 2) && !strcmp(d + strlen(d) - 3, "\xe2\x80\xa6"));
  free(d);
  rp_names_destroy(small);
  te_diags_destroy(dg);
  te_rules_destroy(r);
}

/* ------------------------------------------------------------------ tables */

static char **table(const char *const *full, size_t n) {
  char **d = rp_names_display_table(nm, full, n);
  cr_assert_not_null(d);
  for (size_t i = 0; i < n; i++) {
    cr_assert_leq(chars(d[i]), 120, "%s", d[i]);
    for (size_t j = 0; j < i; j++)
      cr_assert(strcmp(full[i], full[j]) ? strcmp(d[i], d[j]) != 0 : strcmp(d[i], d[j]) == 0,
                "%s / %s -> %s", full[i], full[j], d[i]);
  }
  return d;
}

/* vllm_gptoss_decode_fullgraph_amd: two Cijk kernels with the same tile (they differ in
 * NTA0 / NTA4 first). */
Test(names_table, tensile_kernels_with_one_tile, .init = setup, .fini = teardown) {
  const char *full[] = {
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_NTA0_NTB0_"
      "GRVWA8",
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_NTA4_NTB0_"
      "GRVWA8",
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1_AFC1_NTA0_NTB0_"
      "GRVWA8"};
  char **d = table(full, 3);
  cr_assert_str_eq(d[0], "Cijk_Alik_Bljk_BBS MT32x32x256 MI16x16x1 [NTA0]");
  cr_assert_str_eq(d[1], "Cijk_Alik_Bljk_BBS MT32x32x256 MI16x16x1 [NTA4]");
  cr_assert_str_eq(d[2], "Cijk_Alik_Bljk_BBS MT16x16x256 MI16x16x1");
  rp_names_table_free(d, 3);
}

/* hta traces: FillFunctor<long> / <int> collapse alike; the collision re-expands them. */
Test(names_table, fill_functors_re_expand, .init = setup, .fini = teardown) {
  const char *full[] = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, "
      "at::detail::Array<char*, 1> >",
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
      "at::detail::Array<char*, 1> >",
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, "
      "at::detail::Array<char*, 1> >"};
  char **d = table(full, 3);
  cr_assert_str_eq(d[0],
                   "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, "
                   "at::detail::Array<char*, 1> >");
  cr_assert_str_eq(d[1],
                   "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
                   "at::detail::Array<char*, 1> >");
  cr_assert_str_eq(d[2], d[0]);
  rp_names_table_free(d, 3);
}

/* Two ck_tile Rmsnorm2dFwd instances differ only in the order of their words: a hash. */
Test(names_table, hash_when_no_word_tells_them_apart, .init = setup, .fini = teardown) {
  const char *full[] = {
      "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_6TraitsILb1ELb0EEEEEEEvNT0_5KargsE",
      "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_6TraitsILb0ELb1EEEEEEEvNT0_5KargsE"};
  char **d = table(full, 2);
  cr_assert(!strncmp(d[0], "ck_tile Rmsnorm2dFwd ~", 22) && strlen(d[0]) == 28, "%s", d[0]);
  cr_assert(!strncmp(d[1], "ck_tile Rmsnorm2dFwd ~", 22) && strlen(d[1]) == 28, "%s", d[1]);
  rp_names_table_free(d, 2);
}

Test(names_table, result_does_not_depend_on_order, .init = setup, .fini = teardown) {
  const char *a[] = {"Cijk_Alik_Bljk_BBS_MT32x32x256_MI16x16x1_X1_Y2",
                     "Cijk_Alik_Bljk_BBS_MT32x32x256_MI16x16x1_X1_Y3",
                     "Cijk_Alik_Bljk_BBS_MT32x32x256_MI16x16x1_X2_Y2", "plain_kernel"};
  const char *b[] = {a[3], a[2], a[0], a[1]};
  char **da = table(a, 4), **db = table(b, 4);
  cr_assert_str_eq(da[3], db[0]);
  cr_assert_str_eq(da[2], db[1]);
  cr_assert_str_eq(da[0], db[2]);
  cr_assert_str_eq(da[1], db[3]);
  rp_names_table_free(da, 4);
  rp_names_table_free(db, 4);
}

/* Names that look alike by construction: every resolution step is needed. */
Test(names_table, adversarial_names_stay_unique, .init = setup, .fini = teardown) {
  enum { N = 64 };
  char buf[N][300];
  const char *full[N];
  for (int i = 0; i < N; i++) {
    if (i % 4 == 0)
      snprintf(buf[i], sizeof buf[i], "k ~%06x", i);
    else if (i % 4 == 1)
      snprintf(buf[i], sizeof buf[i], "%0250d", i);
    else
      snprintf(buf[i], sizeof buf[i], "void f<%d, g<%d> >(int)", i % 3, i);
    full[i] = buf[i];
  }
  rp_names_table_free(table(full, N), N);
  rp_names_table_free(table(full, 0), 0);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every real trace of ../shared: per trace, the canonical kernel names (reference mask)
 * as one table: within the cap and unique. */
Test(names_table, shared_traces, .init = setup, .fini = teardown) {
  const char *dir = TRIAGE_SHARED_DIR "/traces/real";
  DIR *dh = opendir(dir);
  if (!dh) cr_skip_test("no shared traces at %s", dir);
  struct dirent *de;
  size_t traces = 0;
  while ((de = readdir(dh)) != NULL) {
    if (!strstr(de->d_name, ".json")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    tr_error err = {0};
    tr_trace *t = tr_trace_read(path, NULL, &err); /* warnings are not reported */
    cr_assert_not_null(t, "%s", path);
    size_t n = 0;
    const tr_event *ev = tr_trace_events(t, TR_KIND_KERNEL, &n);
    char **canon = calloc(n + 1, sizeof *canon);
    for (size_t i = 0; i < n; i++) {
      const char *raw = tr_str_get(t, ev[i].name);
      size_t need = an_canonical_name(raw, strlen(raw), AN_MASK_EVERY_HEX, NULL, 0);
      canon[i] = malloc(need + 1);
      an_canonical_name(raw, strlen(raw), AN_MASK_EVERY_HEX, canon[i], need + 1);
    }
    /* one table per trace: its distinct names (equal names are checked elsewhere) */
    qsort(canon, n, sizeof *canon, cmp_str);
    size_t nu = 0;
    for (size_t i = 0; i < n; i++) {
      if (nu && !strcmp(canon[nu - 1], canon[i]))
        free(canon[i]);
      else
        canon[nu++] = canon[i];
    }
    rp_names_table_free(table((const char *const *)canon, nu), nu);
    for (size_t i = 0; i < nu; i++) free(canon[i]);
    free(canon);
    tr_trace_destroy(t);
    traces++;
  }
  closedir(dh);
  cr_assert_geq(traces, 10);
}

Test(names_display, refused_manglings_show_their_leading_name, .init = setup, .fini = teardown) {
  /* C++20 template parameter declarations ("Tn") that libiberty cannot demangle: the
   * nested name and "<…>", never the raw mangled text */
  assert_display(
      "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_"
      "S5_EEEEvPS3_PS4_i",
      "sgl_hip::activation::act_and_mul_kernel<\xe2\x80\xa6>");
  assert_display("_Z9my_kernelTnPv", "my_kernel");
  /* a length running past the end is no name: the text stays as it came */
  assert_display("_ZN99shortE", "_ZN99shortE");
}
