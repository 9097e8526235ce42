/* Unit tests for input discovery and server_args loading (src/trace/discover.c). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/discover.h"

static te_rules *g_rules;

/* Default rule packs: TRIAGE_RULES_DIR (set by ctest), else the source tree's rules/. */
static void load_rules(void) {
  const char *dir = getenv("TRIAGE_RULES_DIR");
  if (!dir || !*dir) dir = TRIAGE_SOURCE_DIR "/rules";
  g_rules = te_rules_create();
  te_diags *d = te_diags_create();
  te_status st = te_rules_load_path(g_rules, dir, d);
  if (st == TE_OK) st = te_rules_finalize(g_rules, d);
  if (st != TE_OK) {
    char buf[512] = "";
    if (te_diags_count(d)) te_diag_format(te_diags_get(d, 0), buf, sizeof buf);
    te_diags_destroy(d);
    cr_assert_fail("cannot load rule packs from %s: %s %s", dir, te_status_str(st), buf);
  }
  te_diags_destroy(d);
}

static void free_rules(void) { te_rules_destroy(g_rules); }

TestSuite(trace_discover, .init = load_rules, .fini = free_rules);

static const char *k_trace =
    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": "
    "1}]}";

static char g_tmp[256];

static void make_tmp(void) {
  snprintf(g_tmp, sizeof g_tmp, "/tmp/trace_discover_XXXXXX");
  cr_assert_not_null(mkdtemp(g_tmp));
}

static void rm_tmp(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  cr_expect_eq(system(cmd), 0);
}

/* Writes rel under g_tmp (creating one level of sub-directory) with mtime base+age. */
static void put(const char *rel, const char *content, long mtime) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
  char *slash = strrchr(path, '/');
  *slash = 0;
  mkdir(path, 0755);
  *slash = '/';
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  fputs(content, f);
  fclose(f);
  struct timespec ts[2] = {{1700000000 + mtime, 0}, {1700000000 + mtime, 0}};
  cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static const char *base(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static tr_input_set discover_ok(const char *input) {
  tr_input_set s;
  tr_error err;
  int rc = tr_discover(input, g_rules, &s, &err);
  cr_assert_eq(rc, 0, "discover %s: %s", input, err.message);
  return s;
}

Test(trace_discover, synthetic_staged_two_stages_rank0) {
  cr_assert_eq(chdir(TRIAGE_FIXTURE_DIR), 0);
  tr_input_set s = discover_ok("traces/synthetic/staged/");
  cr_assert_eq(s.n, 2);
  /* the exact form the reference prints on the "Input traces:" line */
  cr_expect_str_eq(s.files[0].path,
                   "traces/synthetic/staged/prefill/triage-trace-prefill-TP-0.trace.json.gz");
  cr_expect_str_eq(s.files[1].path,
                   "traces/synthetic/staged/decode/triage-trace-decode-TP-0.trace.json.gz");
  cr_expect_str_eq(s.files[0].stage_id, "extend");
  cr_expect_str_eq(s.files[1].stage_id, "decode");
  cr_expect_eq(s.files[0].rank, 0);
  cr_expect_eq(s.files[1].rank, 0);
  cr_expect_str_eq(s.trace_dir, "traces/synthetic/staged");
  cr_assert_not_null(s.server_args_path);
  cr_expect_str_eq(s.server_args_path, "traces/synthetic/staged/server_args.json");
  tr_input_set_free(&s);
  s = discover_ok("./traces//synthetic/staged");
  cr_assert_eq(s.n, 2);
  cr_expect_str_eq(s.files[0].path,
                   "traces/synthetic/staged/prefill/triage-trace-prefill-TP-0.trace.json.gz");
  tr_input_set_free(&s);
}

Test(trace_discover, single_file_input) {
  cr_assert_eq(chdir(TRIAGE_FIXTURE_DIR), 0);
  tr_input_set s =
      discover_ok("traces/synthetic/staged/decode/triage-trace-decode-TP-1.trace.json.gz");
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(s.files[0].path,
                   "traces/synthetic/staged/decode/triage-trace-decode-TP-1.trace.json.gz");
  cr_expect_str_eq(s.files[0].stage_id, "decode");
  cr_expect_eq(s.files[0].rank, 1);
  cr_expect_str_eq(s.trace_dir, "traces/synthetic/staged/decode");
  cr_assert_not_null(s.server_args_path, "server_args.json one level up");
  cr_expect_str_eq(s.server_args_path, "traces/synthetic/staged/server_args.json");
  tr_input_set_free(&s);
  s = discover_ok("llama_tp2/llama_tp2.trace.json");
  cr_expect_str_eq(s.files[0].stage_id, "all");
  cr_expect_str_eq(s.server_args_path, "llama_tp2/server_args.json");
  tr_input_set_free(&s);
}

Test(trace_discover, stdin_input) {
  tr_input_set s = discover_ok("-");
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(s.files[0].path, "-");
  cr_expect_str_eq(s.files[0].stage_id, "all");
  cr_expect_null(s.trace_dir);
  cr_expect_null(s.server_args_path);
  tr_input_set_free(&s);
}

Test(trace_discover, missing_and_empty) {
  tr_input_set s;
  tr_error err;
  cr_expect_eq(tr_discover("/nonexistent/nowhere", g_rules, &s, &err), TR_ERR_IO);
  cr_expect_str_eq(err.message, "no such file or directory");
  make_tmp();
  put("notes.json", "{\"a\": 1}", 0);
  put("server_args.json", k_trace, 0);
  put("readme.txt", "x", 0);
  cr_expect_eq(tr_discover(g_tmp, g_rules, &s, &err), TR_ERR_IO);
  char want[600];
  snprintf(want, sizeof want, "no trace files found under %s", g_tmp);
  cr_expect_str_eq(err.message, want);
  rm_tmp();
}

Test(trace_discover, merged_files_dropped_unless_alone) {
  make_tmp();
  put("merged-all.trace.json", k_trace, 5);
  put("run.trace.json", k_trace, 1);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "run.trace.json");
  tr_input_set_free(&s);
  rm_tmp();
  make_tmp();
  put("merged-all.trace.json", k_trace, 5);
  s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "merged-all.trace.json");
  tr_input_set_free(&s);
  rm_tmp();
}

Test(trace_discover, lowest_rank_kept_rankless_dropped) {
  make_tmp();
  put("plain.trace.json", k_trace, 9);
  put("run-TP-2.trace.json", k_trace, 1);
  put("run-TP-1.trace.json", k_trace, 2);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "run-TP-1.trace.json");
  cr_expect_eq(s.files[0].rank, 1);
  tr_input_set_free(&s);
  rm_tmp();
}

Test(trace_discover, newest_file_per_stage_then_stage_order) {
  make_tmp();
  put("a-decode.trace.json", k_trace, 1);
  put("b-decode.trace.json", k_trace, 3);
  put("c-decode.trace.json", k_trace, 2);
  put("z-extend.trace.json", k_trace, 0);
  put("y-extend.trace.json", k_trace, -1);
  put("plain.trace.json", k_trace, -5);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 3);
  cr_expect_str_eq(base(s.files[0].path), "z-extend.trace.json");
  cr_expect_str_eq(base(s.files[1].path), "b-decode.trace.json");
  cr_expect_str_eq(base(s.files[2].path), "plain.trace.json");
  cr_expect_str_eq(s.files[2].stage_id, "all");
  cr_expect_eq(s.files[0].rank, -1);
  tr_input_set_free(&s);
  rm_tmp();
}

Test(trace_discover, newest_run_subdirectory) {
  make_tmp();
  put("run1/a.trace.json", k_trace, 10);
  put("run1/b.trace.json", k_trace, 11);
  put("run2/c.trace.json", k_trace, 20);
  put("server_args.json", "{\"model\": \"m\"}", 0);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "c.trace.json");
  char want[600];
  snprintf(want, sizeof want, "%s/run2", g_tmp);
  cr_expect_str_eq(s.trace_dir, want);
  snprintf(want, sizeof want, "%s/server_args.json", g_tmp);
  cr_assert_not_null(s.server_args_path);
  cr_expect_str_eq(s.server_args_path, want, "found in the parent of the trace dir");
  tr_input_set_free(&s);
  rm_tmp();
}

Test(trace_discover, json_files_accepted_only_when_they_hold_a_trace) {
  make_tmp();
  put("events.json", "[{\"ph\": \"X\"}]", 1);
  put("empty-list.json", "[]", 2);
  put("scalars.json", "[1, 2]", 3);
  put("notes.json", "{\"a\": {\"traceEvents\": []}}", 4);
  put("late.json", "{\"deviceProperties\": [{\"x\": [1, {}]}], \"traceEvents\": [", 5);
  put("metadata.json", k_trace, 6);
  put("config.json", k_trace, 7);
  tr_input_set s = discover_ok(g_tmp);
  /* both accepted files are unstaged and rank-less: the newest wins */
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "late.json");
  tr_input_set_free(&s);
  cr_expect_eq(tr_trace_probe(TRIAGE_FIXTURE_DIR "/traces/real/hta_triton_tiny_a100.json.gz"), 1);
  char p[600];
  snprintf(p, sizeof p, "%s/events.json", g_tmp);
  cr_expect_eq(tr_trace_probe(p), 1);
  snprintf(p, sizeof p, "%s/scalars.json", g_tmp);
  cr_expect_eq(tr_trace_probe(p), 0);
  snprintf(p, sizeof p, "%s/notes.json", g_tmp);
  cr_expect_eq(tr_trace_probe(p), 0);
  rm_tmp();
}

Test(trace_discover, recursive_staged_subdirectories) {
  make_tmp();
  put("p/run-prefill-TP-0.trace.json", k_trace, 1);
  put("p/run-prefill-TP-1.trace.json", k_trace, 2);
  put("d/run-decode-TP-0.trace.json", k_trace, 3);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 2);
  cr_expect_str_eq(s.files[0].stage_id, "extend");
  cr_expect_str_eq(base(s.files[0].path), "run-prefill-TP-0.trace.json");
  cr_expect_str_eq(s.files[1].stage_id, "decode");
  cr_expect_str_eq(s.trace_dir, g_tmp);
  tr_input_set_free(&s);
  rm_tmp();
}

Test(trace_discover, path_stage) {
  cr_expect_str_eq(tr_path_stage(g_rules, "a/b/prefill/x.trace.json"), "extend");
  cr_expect_str_eq(tr_path_stage(g_rules, "run/TRACE-1700-DECODE.trace.json.gz"), "decode");
  cr_expect_str_eq(tr_path_stage(g_rules, "run_prefill_decode/x.json"), "extend");
  cr_expect_str_eq(tr_path_stage(g_rules, "single/llama_tp2.trace.json"), "all");
  /* only the last 6 components count */
  cr_expect_str_eq(tr_path_stage(g_rules, "/x/prefill/1/2/3/4/5/6.json"), "all");
  cr_expect_str_eq(tr_path_stage(g_rules, "/x/prefill/2/3/4/5/6.json"), "extend");
  cr_expect_str_eq(tr_path_stage(NULL, "prefill/x.json"), "all");
}

Test(trace_discover, server_args) {
  tr_server_args a;
  tr_error err;
  cr_assert_eq(
      tr_server_args_load(TRIAGE_FIXTURE_DIR "/traces/synthetic/staged/server_args.json", &a, &err),
      0, "%s", err.message);
  cr_expect_str_eq(a.model_path, "meta-llama/Llama-3.1-8B-Instruct");
  cr_expect_geq(a.n_keys, 1);
  cr_expect_not_null(strstr(a.json_text, "Llama"));
  tr_server_args_free(&a);
  make_tmp();
  put("m.json", "{\"model\": \"org/m\", \"tp_size\": 4, \"attention_backend\": \"fa3\"}", 0);
  put("bad.json", "{\"model\": ", 0);
  put("list.json", "[1]", 0);
  char p[600];
  snprintf(p, sizeof p, "%s/m.json", g_tmp);
  cr_assert_eq(tr_server_args_load(p, &a, &err), 0);
  cr_expect_str_eq(a.model_path, "org/m");
  cr_expect_eq(a.tp_size, 4);
  cr_assert_eq(a.n_keys, 3);
  cr_expect_str_eq(a.keys[2], "attention_backend");
  tr_server_args_free(&a);
  snprintf(p, sizeof p, "%s/bad.json", g_tmp);
  cr_expect_eq(tr_server_args_load(p, &a, &err), TR_ERR_JSON);
  snprintf(p, sizeof p, "%s/list.json", g_tmp);
  cr_expect_eq(tr_server_args_load(p, &a, &err), TR_ERR_SHAPE);
  snprintf(p, sizeof p, "%s/none.json", g_tmp);
  cr_expect_eq(tr_server_args_load(p, &a, &err), TR_ERR_IO);
  rm_tmp();
}

/* vLLM V1: one folder per node, dpD_ppP_tpT_dcpC_epE_rankR (rank 4 is tp0 too), plus the
 * API server's rank-less CPU trace. Rank 0 is the one analysed; every rank is listed. */
Test(trace_discover, vllm_v1_ranks_across_node_folders) {
  make_tmp();
  put("node0/dp0_pp0_tp0_dcp0_ep0_rank0.1700.pt.trace.json", k_trace, 1);
  put("node0/dp0_pp0_tp1_dcp0_ep1_rank1.1701.pt.trace.json", k_trace, 2);
  put("node0/host0_3999.async_llm.1702.pt.trace.json", k_trace, 9);
  put("node1/dp1_pp0_tp0_dcp0_ep2_rank2.1703.pt.trace.json", k_trace, 3);
  put("node1/dp1_pp0_tp1_dcp0_ep3_rank3.1704.pt.trace.json", k_trace, 4);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "dp0_pp0_tp0_dcp0_ep0_rank0.1700.pt.trace.json");
  cr_expect_eq(s.files[0].rank, 0);
  cr_assert_eq(s.n_rank_files, 4, "the async_llm trace is no rank");
  for (size_t i = 0; i < 4; i++) cr_expect_eq(s.rank_files[i].rank, (long)i);
  cr_expect_str_eq(base(s.rank_files[2].path), "dp1_pp0_tp0_dcp0_ep2_rank2.1703.pt.trace.json");
  tr_input_set_free(&s);
  tr_error err;
  cr_assert_eq(tr_discover_rank(g_tmp, g_rules, 3, &s, &err), 0, "%s", err.message);
  cr_assert_eq(s.n, 1);
  cr_expect_eq(s.files[0].rank, 3);
  cr_expect_eq(s.n_rank_files, 4);
  tr_input_set_free(&s);
  cr_expect_eq(tr_discover_rank(g_tmp, g_rules, 7, &s, &err), TR_ERR_IO);
  cr_expect(strstr(err.message, "no trace of rank 7") != NULL, "%s", err.message);
  rm_tmp();
}

/* Two runs in two folders (rank 0 in both) stay two runs: the newest one is used. */
Test(trace_discover, repeated_ranks_in_two_folders_are_two_runs) {
  make_tmp();
  put("old/x-TP-0.trace.json", k_trace, 1);
  put("old/x-TP-1.trace.json", k_trace, 2);
  put("new/x-TP-0.trace.json", k_trace, 5);
  put("new/x-TP-1.trace.json", k_trace, 6);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect(strstr(s.files[0].path, "/new/") != NULL, "%s", s.files[0].path);
  cr_assert_eq(s.n_rank_files, 2);
  cr_expect(strstr(s.rank_files[1].path, "/new/") != NULL);
  tr_input_set_free(&s);
  rm_tmp();
}

/* HTA-style rank-R and SGLang -TP-N-DP-M-EP-K names. */
Test(trace_discover, rank_name_forms) {
  long r = -1;
  cr_expect(te_rules_rank_from_filename(g_rules, "sampled_rank-1.json.gz", &r));
  cr_expect_eq(r, 1);
  cr_expect(te_rules_rank_from_filename(g_rules, "17-TP-3-DP-1-EP-3.trace.json.gz", &r));
  cr_expect_eq(r, 3);
  cr_expect(
      te_rules_rank_from_filename(g_rules, "dp1_pp0_tp0_dcp0_ep4_rank4.1.pt.trace.json.gz", &r));
  cr_expect_eq(r, 4);
  cr_expect(te_rules_rank_from_filename(g_rules, "dp1_pp0_tp2_rank6.pt.trace.json", &r));
  cr_expect_eq(r, 6);
  cr_expect(te_rules_rank_from_filename(g_rules, "trace_rank5.json", &r));
  cr_expect_eq(r, 5);
  cr_expect_not(
      te_rules_rank_from_filename(g_rules, "host0_3999.async_llm.17.pt.trace.json.gz", &r));
}

/* No rank in any file name: distributedInfo.rank (before traceEvents) decides. */
Test(trace_discover, distributed_info_rank_fallback) {
  make_tmp();
  put("a.trace.json",
      "{\"distributedInfo\": {\"rank\": 1, \"world_size\": 2}, \"traceEvents\": []}", 5);
  put("b.trace.json",
      "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, \"traceEvents\": []}", 1);
  tr_input_set s = discover_ok(g_tmp);
  cr_assert_eq(s.n, 1);
  cr_expect_str_eq(base(s.files[0].path), "b.trace.json", "rank 0, though a.trace.json is newer");
  cr_expect_eq(s.files[0].rank, 0);
  cr_assert_eq(s.n_rank_files, 2);
  cr_expect_str_eq(base(s.rank_files[1].path), "a.trace.json");
  tr_input_set_free(&s);
  rm_tmp();
}
