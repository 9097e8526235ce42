/*
 * analysis/pipeline.h - the one entry point from inputs to a report model: discover and
 * read the traces, build the stage views, kernel maps, kernel and fuse tables and the
 * overlap table, and assemble an an_report (analysis/model.h). The CLI, the fuzzers and
 * the tests all run it; src/report/ renders what it returns.
 *
 *   an_run_options o = {0};
 *   o.formal.path = "trace.json.gz";           // single-trace: the input
 *   o.min_share_pct = -1;                      // the packs' kernel_table.min_share_pct
 *   an_report *rep; an_error err;
 *   if (an_run(&o, rules, &rep, &err) == AN_OK) { rp_markdown(stdout, rep, NULL); ... }
 *   an_report_destroy(rep);
 *
 * The library never prints: progress goes to the read hooks, warnings (skipped events,
 * replaced UTF-8, unusable server args) to the hint callback as they happen and into the
 * report's hint list, and a failure is an an_status plus the an_error record.
 *
 * Ownership: an_run returns a report the caller destroys (an_report_destroy) before the
 * rules. Options are borrowed for the call.
 */
#ifndef TRIAGE_ANALYSIS_PIPELINE_H
#define TRIAGE_ANALYSIS_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/model.h"
#include "triage/rules.h"

/* One side's input: a path discovered as the CLI does (file, profile directory or "-"),
 * or, with path NULL and data set, one trace held in memory (tests, fuzzers; unstaged). */
typedef struct an_input {
  const char *path;
  const char *name; /* the in-memory trace's name in messages and the report */
  const void *data;
  size_t len;
} an_input;

/* Progress of each trace read: begin returns a handle (may be NULL) that update and end
 * receive. Any member may be NULL. */
typedef struct an_read_hooks {
  void *(*begin)(void *ctx, const char *path);
  void (*update)(void *handle, uint64_t done, uint64_t total);
  void (*end)(void *handle);
  void *ctx;
} an_read_hooks;

typedef struct an_run_options {
  an_input formal;               /* single-trace: the input; else the formal traces */
  an_input mapping;              /* set (path or data): mapping-formal mode */
  const te_framework *framework; /* NULL: detected per side */
  an_source framework_source;    /* where a given framework came from */
  const char *pid_substring;     /* overlap table: only PIDs containing it; NULL = any */
  double min_share_pct;          /* kernel-table bar; < 0: kernel_table.min_share_pct */
  long kernel_table_limit;       /* 0 = all */
  long overlap_table_limit;      /* 0 = all */
  size_t reader_chunk_size;      /* tr_read_options.chunk_size (0 = default) */
  /* Ranks (single-trace runs on a directory of several ranks): the tables are the lowest
   * rank's and every rank goes into the Ranks section, read by rank_workers threads
   * (0 = the online CPUs). one_rank: only rank `rank` is read, no Ranks section. */
  bool one_rank;
  long rank;
  unsigned rank_workers;
  /* The report will not be read for its rank data (JSON "rank_data", which triage merge
   * reads): a one-rank run then does not summarize its rank for it (an_report.rank_data
   * stays empty; Markdown and HTML show none of it). */
  bool no_rank_data;
  an_read_hooks progress;
  /* Each hint as it happens (also kept in the report); may be NULL. */
  void (*hint)(void *ctx, const an_hint *h);
  void *hint_ctx;
} an_run_options;

/* Why an_run failed: "PATH: offset N: MESSAGE" (path and offset when known). */
typedef struct an_error {
  char path[1024]; /* "" when the failure concerns no one input */
  bool has_offset;
  uint64_t offset; /* byte offset in the (decompressed) trace */
  char message[512];
} an_error;

/* Runs the whole analysis. On success *out is the report; on failure *out is NULL and
 * err says why: AN_ERR_INPUT (unreadable input, no trace files, no kernels), AN_ERR_RULES
 * (the packs lack the "all" stage or leave a setting unset), AN_ERR_NOMEM, AN_ERR_ARGS. */
an_status an_run(const an_run_options *opt, const te_rules *rules, an_report **out, an_error *err);

#endif
