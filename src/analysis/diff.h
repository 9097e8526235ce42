/*
 * analysis/diff.h - triage diff: two runs compared per stage (total GPU time, categories,
 * kernels by canonical name, fusion patterns and overlap rows that appeared or went away,
 * ranks), per step when both runs know their steps, against a noise floor the data give
 * (the spread of the per-step GPU time across steps, or across ranks) with the packs'
 * floor (diff.noise_floor_pct, diff.noise_floor_us) as its least. A collective whose
 * transfer stayed and whose wait moved is a wait change, never a regression.
 *
 * A side is plain data: built from a report model (an_diff_side_from_report) or by the
 * report layer from a JSON report. Ownership: a side borrows every string from where it
 * was built (keep that alive) and owns its arrays (an_diff_side_free). The result owns
 * its arrays and borrows the sides' strings.
 */
#ifndef TRIAGE_ANALYSIS_DIFF_H
#define TRIAGE_ANALYSIS_DIFF_H

#include <stddef.h>

#include "analysis/model.h"
#include "triage/rules.h"

typedef struct an_diff_kernel {
  const char *name, *category;
  double total_us;
  double steps_us;    /* inside the counted steps (kernel rows), else total_us */
  const char *cpu_op; /* kernels: the launching CPU op of its first shown site; NULL none */
  const char *dtype;  /* kernels of a matrix-product roofline family: its number format
                         ("bf16"), with gemm_us its roofline time; NULL otherwise */
  double gemm_us;
  double staged_us; /* kernels: of total_us, launched inside graph-launching ops (their
                       copies, analysis/graph_staging.h) */
} an_diff_kernel;

/* One rank row of a side's Ranks section. */
typedef struct an_diff_rank {
  long rank;
  double busy_us, wait_us;
  bool straggler;   /* the rank its group waits for, with a verdict */
  size_t n_step_us; /* each counted step's work (an_rank_row.step_us), owned */
  double *step_us;
} an_diff_rank;

/* The wait part of a collective kernel's time: the time account's per-instance wait
 * (analysis/waits.h), the same the single-run report gives. */
typedef struct an_diff_wait {
  const char *name; /* canonical kernel name */
  double wait_us;
} an_diff_wait;

/* A stage's time account over its counted steps (all 0 when the side has none). */
typedef struct an_diff_time {
  bool known;
  double span_us, busy_us, idle_us;  /* span = busy + idle */
  double kernel_us, graph_kernel_us; /* kernel-time sum, and the part replayed from graphs */
} an_diff_time;

typedef struct an_diff_side_stage {
  const char *stage;
  an_diff_time time; /* the time account's totals over the counted steps */
  size_t n_steps;    /* counted steps; 0 unknown */
  size_t n_step_us;  /* the work of each counted step (an_step_account.work_us), when known */
  double *step_us;
  /* counted steps whose kernels ran past the step's end into the next one's GPU window
   * (an_stage_timeline.n_cut): a pipelined run, whose per-step GPU spans hold their
   * neighbours' work */
  size_t n_cut_steps;
  size_t n_waits; /* collectives' waits, when the side knows them */
  an_diff_wait *waits;
  size_t n_kernels;
  an_diff_kernel *kernels;
  size_t n_fusions;
  an_diff_kernel *fusions; /* shown fusion patterns: id and related time */
  size_t n_overlaps;
  an_diff_kernel *overlaps; /* overlap table rows: kernel, overlap category, total time */
  size_t n_ranks;
  an_diff_rank *ranks; /* the stage's Ranks section rows (0 or 1 rank: none) */
} an_diff_side_stage;

typedef struct an_diff_side {
  const char *label;
  const char *kind; /* "trace", "directory" or "report" (set by whoever builds the side) */
  size_t n_files;
  const char **files; /* the formal trace files behind the side (array owned, strings not) */
  const char *framework, *model, *gpu; /* run facts (framework label); NULL when unknown (a
                                          blank-name GPU: the report names it, rp_gpu) */
  bool framework_defaulted;            /* nothing detected the framework: the packs' default */
  long world_size;                     /* distributedInfo.world_size; 0 unknown */
  long rank, device;                   /* the tables' trace's rank and GPU index; -1 unknown */
  const char *host;                    /* its host_name; NULL unknown */
  long only_rank;  /* a directory read for this rank alone (--rank N); -1 none (set by whoever
                      builds the side: an_diff_side_from_report sets -1) */
  size_t n_unread; /* ranks of a directory whose trace the reader refused (owned, ascending) */
  long *unread;
  size_t n_ranks; /* ranks of its Ranks sections; 0: one rank */
  size_t n_stages;
  an_diff_side_stage *stages;
} an_diff_side;

/* Whether a roofline family ("gemm", "grouped_gemm") is a matrix product: a run's number
 * format is its matrix products'. */
bool an_diff_matrix_family(const char *family);

/* Every kernel row, shown fuse row, overlap row and Ranks row of each stage with kernels,
 * and the report's formal inputs. AN_ERR_NOMEM. */
an_status an_diff_side_from_report(const an_report *r, const char *label, an_diff_side *out);
void an_diff_side_free(an_diff_side *s);

typedef struct an_diff_result {
  an_diff_report report;
  void *owned; /* private */
} an_diff_result;

an_status an_diff_build(const an_diff_side *before, const an_diff_side *after,
                        const te_rules *rules, an_diff_result *out);
void an_diff_result_free(an_diff_result *r);

#endif
