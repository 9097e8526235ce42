/*
 * analysis/overlap_partner.c - "try fusion" names its partner (review-1 defect 3, issue 31).
 *
 * The overlap table's sweep sees one kernel at a time: a serial kernel with a tight
 * neighbour looked like something to fuse, whatever it was (an FBGEMM TBE backward that
 * already fuses the optimizer, a foreach optimizer kernel, a layout transform whose fix
 * is channels_last, a memset), and its whole exposed time was offered as the gain. Fusion
 * advice now comes from one mechanism, the fuse table: a row keeps "try fusion" only when
 * a shown fusion row of the same stage (a split the fused path would remove, every gate
 * holding or unknown) holds its kernel as a piece. The row then names that pattern, its
 * dependency is the chain's (serial), and what it can recover is the piece's eliminated
 * memory round trip (its bytes over the HBM bandwidth where its roofline record has
 * them, else its time; nothing for the chain's largest piece, whose pass the fused
 * kernel still makes). A row with no partner has no fusion advice: a kernel the packs
 * know as already fused is "already fused" (P4); any other gets what a serial kernel
 * without dataflow evidence gets elsewhere (ov_no_lane: skip, 0 recoverable).
 *
 * Runs after the kernel, fuse and roofline tables exist (the pipeline's assembly); the
 * overlap table is built before them to keep the peaks of the two apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap_internal.h"
#include "analysis/summary.h"
#include "util/units.h"

/* Whether fuse row f proposes a fusion: a split whose fused path does not run, shown, with
 * a saving, every gate holding or unknown. */
static bool proposes(const an_fuse_row *f) {
  return f->shown && f->match == AN_FUSION_SPLIT && f->saving_us > 0 && !f->fused_in_use &&
         (f->state == AN_FUSE_OPPORTUNITY || f->state == AN_FUSE_GATES_UNKNOWN);
}

static bool holds(const an_fuse_row *f, const char *kernel) {
  for (size_t k = 0; k < f->n_related; k++)
    if (f->related[k] == kernel || !strcmp(f->related[k], kernel)) return true;
  return false;
}

/* The first proposing fuse row of the stage (highest priority first) that holds kernel. */
static const an_fuse_row *partner_of(const an_stage_report *s, const char *kernel) {
  for (size_t i = 0; i < s->n_fuse; i++)
    if (proposes(&s->fuse[i]) && holds(&s->fuse[i], kernel)) return &s->fuse[i];
  return NULL;
}

static const an_kernel_row *kernel_row(const an_stage_report *s, const char *name) {
  for (size_t i = 0; i < s->n_kernels; i++)
    if (s->kernels[i].name == name || !strcmp(s->kernels[i].name, name)) return &s->kernels[i];
  return NULL;
}

/* A fusion partner: a fuse row, or the stage's eager elementwise chain. */
typedef struct partner {
  const an_fuse_row *fuse; /* NULL: the eager chain */
} partner;

/* Whether a kernel row is a piece of the partner. */
static bool piece_of(const te_rules *rules, const an_stage_report *s, const partner *p,
                     const an_kernel_row *k) {
  return p->fuse ? holds(p->fuse, k->name) : an_summary_chain_row(rules, s, k);
}

/* Whether k is the partner's largest piece (the first piece in the kernel rows' time
 * order): the fused kernel still makes its pass. */
static bool largest_piece(const te_rules *rules, const an_stage_report *s, const partner *p,
                          const an_kernel_row *k) {
  for (size_t i = 0; i < s->n_kernels; i++)
    if (piece_of(rules, s, p, &s->kernels[i])) return &s->kernels[i] == k;
  return true;
}

/* What fusing removes of piece k over the stage, in ms (see the file comment). */
static double eliminated_ms(const te_rules *rules, const an_stage_report *s, const partner *p,
                            const an_kernel_row *k, double hbm_tbs) {
  if (largest_piece(rules, s, p, k)) return 0;
  double us = k->total_us;
  const an_roofline *rf = an_row_roofline(s, k);
  if (rf && rf->bytes > 0 && rf->time_us > 0 && hbm_tbs > 0) {
    /* the launches with shapes, scaled to all of the row's launches */
    double trip = rf->bytes / (hbm_tbs * UT_US_PER_S) * (k->total_us / rf->time_us);
    if (trip < us) us = trip;
  }
  return us / 1000.0;
}

/* The partner of a row's kernel: a proposing fuse row that holds it, else the eager
 * chain when the stage launches one by one and has a chain of at least two kernels. */
static bool find_partner(const te_rules *rules, const an_stage_report *s, const an_kernel_row *k,
                         partner *p) {
  const an_fuse_row *f = partner_of(s, k->name);
  if (f) {
    *p = (partner){f};
    return true;
  }
  if (!an_summary_eager(rules, s) || !an_summary_chain_row(rules, s, k)) return false;
  size_t n = 0;
  for (size_t i = 0; i < s->n_kernels && n < 2; i++)
    n += an_summary_chain_row(rules, s, &s->kernels[i]);
  *p = (partner){NULL};
  return n >= 2;
}

/* A row with no partner: already fused by name, else what a serial row with no lane gets
 * (ov_no_lane: nothing to act on, a collective's restructuring apart). */
static void no_partner(const te_rules *rules, an_overlap_row *row) {
  const te_matcher *fused = te_rules_matcher(rules, "already_fused_kernel");
  if (fused && te_matcher_match(fused, row->kernel, strlen(row->kernel))) {
    row->priority = AN_PRIORITY_P4;
    row->recommendation = AN_RECOMMEND_ALREADY_FUSED;
    return;
  }
  ov_no_lane(te_rules_settings(rules), row);
}

/* The row names its partner; its dependency is the chain's. */
static void bind(const te_rules *rules, const an_stage_report *s, const partner *p,
                 const an_kernel_row *k, double hbm_tbs, an_overlap_row *row) {
  ov_dep_evidence_clear(&row->dep_evidence);
  row->dep_evidence.kind = p->fuse ? AN_DEP_EV_FUSION_PIECE : AN_DEP_EV_CHAIN_PIECE;
  row->dep_class = "serial";
  row->dep_rule = "fusion-piece";
  row->fusion_partner = p->fuse ? AN_PARTNER_FUSE_ROW : AN_PARTNER_EAGER_CHAIN;
  row->fusion_pattern = p->fuse ? p->fuse->pattern_name : NULL;
  /* that row, or the summary's chain item, is the advice and its bound (review 7 defect
   * 6: a chain piece put forward as a row of its own repeated the chain item) */
  row->cites_fusion = true;
  row->fusion_bound_ms = eliminated_ms(rules, s, p, k, hbm_tbs);
  row->priority = AN_PRIORITY_P1;
}

/* The eager chain's kernel time of stage s per step (over the stage window without steps),
 * in ms: what a folded chain piece states its part of. */
static double chain_ms(const te_rules *rules, const an_stage_report *s, size_t n_steps) {
  double us = 0;
  for (size_t i = 0; i < s->n_kernels; i++)
    if (an_summary_chain_row(rules, s, &s->kernels[i]))
      us += n_steps ? s->kernels[i].steps_us : s->kernels[i].total_us;
  return us / 1000.0 / (double)(n_steps ? n_steps : 1);
}

void an_overlap_bind_fusion(an_overlap_stage *o, const an_stage_report *s, const te_rules *rules,
                            double hbm_tbs) {
  const te_settings *set = te_rules_settings(rules);
  if (!set->overlap_mechanism_actions) return; /* the reference's rows (--compat) */
  o->chain_ms = an_summary_eager(rules, s) ? chain_ms(rules, s, o->n_steps) : 0;
  bool changed = false;
  for (size_t i = 0; i < o->n_rows; i++) {
    an_overlap_row *row = &o->rows[i];
    if (row->recommendation != AN_RECOMMEND_TRY_FUSION) continue;
    const an_kernel_row *k = kernel_row(s, row->kernel);
    partner p;
    bool found = k && find_partner(rules, s, k, &p);
    if (found) bind(rules, s, &p, k, hbm_tbs, row);
    if (!found) no_partner(rules, row);
    changed = true;
  }
  if (!changed) return;
  ov_gain_rank(o, o->compute_us, o->lanes, set);
  ov_gain_floor(o, set);
  ov_restructure_options(o, set);
  ov_latency_bound_options(o, rules);
}
