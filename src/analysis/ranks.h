/*
 * analysis/ranks.h - the Ranks section (issues 12, 30): a summary per rank trace (one
 * part per stage of its own step markers or path), read in parallel, then per stage the
 * rank table, the groups that run collectives together, their matched collectives and
 * waits, the straggler with its evidence and cause, and kernel imbalance
 * (rank_match.c; docs/scale-out.md).
 *
 * Memory stays bounded: a worker holds the events of one trace at a time and keeps only
 * its summary (class times, per-kernel totals, the collectives in order with their
 * message, group and step, the steps' compute and idle).
 *
 * Threads: the te_rules are thread-compatible only, so every rules query (stage view,
 * steps, classification) runs under one lock; reading and inflating, the bulk of the
 * time, run in parallel.
 *
 * Ownership: summaries are created by an_rank_summarize or by an_ranks_build and freed
 * by an_ranks_result_free (an_ranks_build takes ownership of the ones passed in); a
 * summary made with a kernel map borrows that map's names. The result owns every string
 * and array of its reports.
 */
#ifndef TRIAGE_ANALYSIS_RANKS_H
#define TRIAGE_ANALYSIS_RANKS_H

#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/steps.h"
#include "analysis/trace_view.h"
#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_rank_summary an_rank_summary; /* opaque */

/* The TP size of the trace's rank from its process groups (distributedInfo.pg_config):
 * the frameworks lay ranks out with TP innermost, so the TP group is the smallest NCCL/RCCL
 * group of consecutive ranks that holds the rank and is smaller than the world (vLLM DP 2 x
 * TP 4: [4, 5, 6, 7], never the world's 8); with none such, the world size (TP spans every
 * rank, or the trace states no rank); 0 when it states no world size. Gloo groups and
 * groups of one never count. */
long an_rank_tp_size(const tr_trace *t);
/* Whether rank is in the trace's own rank's TP group (an_rank_tp_size's group; the whole
 * world when that is the group); false when the trace states no rank or world size. */
bool an_rank_in_tp_group(const tr_trace *t, long rank);

typedef struct an_rank_input {
  const char *path;
  const char *stage; /* the stage its path names (borrowed from the rules), or "all" */
  long rank;         /* from discovery; the trace's distributedInfo.rank wins */
} an_rank_input;

/* Summarises one rank from a trace already read and its view (the pipeline's own rank).
 * steps, when not NULL, are the view's step windows already built (an_steps_build of v
 * with the same rules; borrowed for the call), so they are not built a second time.
 * kmap, when not NULL, is a kernel map built from v among its views: the categories its
 * name table decided are taken instead of classifying each name again, and the names it
 * holds are its copies, so it must outlive the summary. NULL when out of memory. */
an_rank_summary *an_rank_summarize(const an_rank_input *in, const an_trace_view *v,
                                   const an_steps *steps, const te_rules *rules,
                                   const an_kernel_map *kmap);

/* The stages a summary holds (one part each, in the view's stage order). */
size_t an_rank_summary_parts(const an_rank_summary *s);
/* The plain data of part i of a summary (borrowing its strings and arrays: keep s
 * alive; false when i is out of range), and a one-part summary rebuilt from such data (a
 * per-rank JSON report read back; NULL when out of memory or the data is inconsistent). */
bool an_rank_summary_data(const an_rank_summary *s, size_t i, an_rank_data *out);
an_rank_summary *an_rank_summary_from_data(const an_rank_data *d);

/* For a summary an_ranks_build never received. */
void an_rank_summary_free(an_rank_summary *s);

typedef struct an_ranks_options {
  unsigned workers;         /* threads; 0 = the online CPUs (<= AN_MAX_WORKERS) */
  size_t reader_chunk_size; /* tr_read_options.chunk_size */
  void (*warn)(void *ctx, const tr_warning *w); /* called under the lock; may be NULL */
  void *warn_ctx;
} an_ranks_options;

/* Why a rank could not be read: its path (borrowed from the input), its rank (from
 * discovery) and the reader's error. */
typedef struct an_ranks_failure {
  const char *path;
  long rank;
  tr_error error;
} an_ranks_failure;

typedef struct an_ranks_result {
  size_t n_reports;
  an_rank_report *reports; /* one per stage with two ranks or more, in stage order */
  /* Rank files the reader refused (truncated, malformed, not a trace): left out of the
   * section, which compares the others, rather than ending the run (a directory of 16
   * ranks with one cut-off file still has a straggler to find). In input order. */
  size_t n_unread;
  an_ranks_failure *unread;
  void *owned; /* private */
} an_ranks_result;

/* in: every rank file (any order: the parts are sorted by stage order, then rank). pre:
 * parallel to in, a summary already made for an input or NULL (taken over either way).
 * A (stage, rank) given twice counts once, the first path in order. A file the reader
 * refuses is listed in out->unread and left out. Returns AN_OK or AN_ERR_NOMEM (fail says
 * which file was being read). */
an_status an_ranks_build(const an_rank_input *in, size_t n, an_rank_summary **pre,
                         const te_rules *rules, const an_ranks_options *opt, an_ranks_result *out,
                         an_ranks_failure *fail);
void an_ranks_result_free(an_ranks_result *r);

#endif
