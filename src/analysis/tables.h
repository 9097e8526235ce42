/*
 * analysis/tables.h - the Kernel Table (docs/reference.md §5) and the Fuse Opportunity
 * Table (docs/reference.md §7.2), computed per stage from the formal traces' views, with source
 * locations taken from the mapping kernel map. Rows are report-model rows
 * (analysis/model.h): values and flags, no rendered text.
 *
 * Ownership: an_tables_build fills a caller-provided an_tables that owns its arrays and
 * strings (an_tables_free). Entry, site and kernel-name pointers of the rows are borrowed from the
 * kernel maps passed in, which must outlive the tables; stage, category and pattern
 * strings are borrowed from the te_rules.
 */
#ifndef TRIAGE_ANALYSIS_TABLES_H
#define TRIAGE_ANALYSIS_TABLES_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/steps.h"
#include "analysis/strtab.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

typedef struct an_stage_tables {
  const te_stage *stage;
  double total_us; /* kernel-time sum (share denominator) */
  size_t n_rows;
  an_kernel_row *rows;       /* every row, total_us descending */
  size_t n_shown;            /* rows with shown == true */
  const an_site **site_pool; /* the rows' shown_sites point into it */
  size_t n_fuse;
  an_fuse_row *fuse; /* accepted matches, in accepted order */
  size_t n_fuse_shown;
  bool xpu;            /* a shown kernel name is an XPU runtime launch */
  an_exec_facts exec;  /* execution mode and tokens per step (fusion gates) */
  an_chain_runs chain; /* the eager chains as runs of launches (analysis/chain_runs.h) */
  /* fuse table internals (analysis/fuse_internal.h): the kernels stream by stream for the
   * chain gate (NULL without fuse.context_gates), and per pattern whether its fused
   * kernel ran in the stage */
  struct an_fuse_seq *seq;
  bool *pattern_active;
  double *msg_bytes; /* per row: the largest collective message (In msg nelems x dtype), 0
                        when the trace's args do not say */
  struct an_piece_shape *row_shape; /* per row: what its first launching op with shapes
                                       states (the shape gate); NULL when no pattern has one
                                       or without fuse.context_gates */
  size_t n_merge;
  struct an_merge_runs *merge; /* per pattern: a merge pattern's sibling GEMM runs
                                  (fuse_merge.c); NULL without fuse.context_gates */
} an_stage_tables;

typedef struct an_tables {
  size_t n_stages;
  an_stage_tables *stages; /* te_stage order; only stages with kernels */
  an_strtab *strings;      /* owns every derived string */
} an_tables;

typedef struct an_tables_options {
  double min_share_pct;             /* kernel-table bar, already resolved (an_run decides it) */
  long kernel_table_limit;          /* 0 = all */
  const char *framework_id;         /* resolved framework of the formal traces */
  const char *framework_repository; /* its repository ("owner/name"), NULL when not stated */
  const char *framework_label;      /* its label ("vLLM"): a pattern's since names it */
  const char *model_path;           /* run context model, NULL when unknown */
  long tp_size;                     /* run context TP size, 1 when unknown */
  an_platform platform;             /* run context platform, AN_PLATFORM_UNKNOWN when unknown */
  bool component_evidence;          /* fuse.component_evidence: evidence and platform gates apply */
  long arch;                        /* run context compute capability x 10, 0 when unknown */
  const an_steps *steps; /* parallel to the formal views: rows' steps_us; NULL: = total */
  an_topology topology;  /* run context: whether the TP group spans nodes */
  an_workload workload;  /* the run's kind (fusion patterns' workloads: gate) */
  /* a stage of many rows may test its rows' fusion probes on a second thread (each thread in
   * a lane of its own, rules.h): no other thread asks the rules meanwhile, and a thread is
   * to be had (not --workers 1) */
  bool two_threads;
} an_tables_options;

/* formal_views: the formal traces (the inputs in single-trace mode). mapping: the
 * mapping kernel map (stage-aware lookup); formal_payload: the map built from exactly
 * formal_views (may equal mapping): rows take their canonical names from it, and point
 * into it, so it must outlive the tables. AN_ERR_RULES when the packs define no `kernel`
 * classifier (every category comes from the packs; there is no built-in label);
 * AN_ERR_ARGS without formal_payload or when it was built from other views. */
an_status an_tables_build(const an_trace_view *formal_views, size_t n_views,
                          const an_kernel_map *mapping, const an_kernel_map *formal_payload,
                          const te_rules *rules, const an_tables_options *opt, an_tables *out);
void an_tables_free(an_tables *t);
/* Each fuse row's saving per counted step (an_fuse_row.saving_step_us) once the time account
 * of the stage is known: the part of saving_us inside the counted steps (the stage's in-step
 * share of kernel time) over their number, as the summary quotes its bound; tl NULL or no
 * steps: the stage window is the one step. */
void an_fuse_per_step(an_stage_tables *t, const an_stage_timeline *tl);
/* The stage of t whose te_stage id is id, NULL when t has none (a stage with no kernels).
 * Borrowed from t; not const because the analysis passes after an_tables_build fill their
 * record into it. */
an_stage_tables *an_tables_stage(const an_tables *t, const char *id);

#endif
