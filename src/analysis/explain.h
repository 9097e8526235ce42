/* Why a fusion pattern fired or not in one stage of a report (`triage rules explain
 * --pattern NAME TRACE`): the gates, and per component the kernel that filled it or the
 * reason none did. Values only; the CLI words them. Implemented in tables.c, which owns
 * the matching rules this replays. */
#ifndef TRIAGE_ANALYSIS_EXPLAIN_H
#define TRIAGE_ANALYSIS_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/model.h"
#include "triage/rules.h"

typedef enum an_explain_why {
  AN_EXPLAIN_FILLED = 0,  /* kernel holds the component's evidence kernel */
  AN_EXPLAIN_GATE,        /* a gate failed: no component was looked for */
  AN_EXPLAIN_NO_CATEGORY, /* no kernel of the component's category/kind in the stage */
  AN_EXPLAIN_NO_MATCH,    /* kernels of that category, none the group's matcher hits */
  AN_EXPLAIN_TAKEN        /* every fitting kernel already serves an earlier component */
} an_explain_why;

typedef struct an_explain_component {
  const char *label;  /* evidence category/kind, "any", or NULL (text-only match) */
  const char *kernel; /* the evidence kernel, NULL unless FILLED */
  double us;
  an_explain_why why;
  size_t row; /* the kernel's index in the stage's kernels, when FILLED */
} an_explain_component;

typedef struct an_fuse_explain {
  bool framework_ok, platform_ok, tp_ok, model_ok; /* each gate the pattern states */
  bool arch_ok;                                    /* minimum architecture (min_arch) */
  bool by_component;   /* component evidence applies (else the reference's text-only match) */
  bool dtype_ok;       /* no dtype gate, or the active kernel or a component kernel is of
                          one of the pattern's formats */
  bool dtype_checked;  /* the other gates passed, so kernels were looked at for it */
  const char *active;  /* a kernel the active matcher hits (fused path ran), or NULL */
  size_t n_components; /* = split groups */
  an_explain_component *components;
  double related_us, saving_us, stage_total_us;
  /* the pattern matched (gates, evidence, share bar) but the stage's fuse table has no
   * row for it: de-duplication dropped it. dropped_by: the pattern id of the reported row
   * that subsumes it or holds one of its kernels, NULL when none is found */
  bool dropped;
  const char *dropped_by;
  /* the stage's row of the pattern, NULL when none: with fuse.context_gates its state,
   * chain and unknown gates decide, so a split row's components are the row's pieces (the
   * chain gate picks them from the kernels' order on their streams, which a finished
   * report no longer holds) */
  const an_fuse_row *row;
} an_fuse_explain;

/* Replays pattern p on stage st of rep (its run context gives the gates). false on
 * allocation failure. an_fuse_explain_free releases out. */
bool an_fuse_explain_stage(const te_rules *rules, const an_report *rep, const an_stage_report *st,
                           const te_fusion_pattern *p, an_fuse_explain *out);
void an_fuse_explain_free(an_fuse_explain *e);

#endif
