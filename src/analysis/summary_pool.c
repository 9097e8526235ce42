/*
 * analysis/summary_pool.c - small items of one kind pooled, and the smaller leads
 * (summary_internal.h, docs/report.md "What to try first"; review 12 defect 8).
 *
 * A step's host stalls between GPU work (a sync here, a launch call there, each a few
 * percent of the step) are one root cause: the host on the step's critical path; a
 * framework's fusion passes are one configuration. Items of one stage and one such kind,
 * each under summary.pool_below_pct of the step, become one item: the sum of their bounds,
 * bases, counts, kernels and rows, their evidence, and the members themselves for the line
 * to list. Members of a kind take disjoint time (no two items share a row part or a kernel),
 * so the sum is what they claim together; each keeps its own cause and lever (review 14).
 *
 * An item under summary.lead_below_pct of the step whose lever is hedged (a host stall with
 * no lever named, a lever of summary.hedged_levers whose availability the trace cannot show,
 * a fused path of a framework release the trace does not state) is a lead, not an action:
 * it goes on the unnumbered "Smaller leads" line, whatever its bound against the numbered
 * items' (the report says so when a lead's exceeds the last one's: an_report.leads_above).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "analysis/summary_internal.h"

/* POOL_CHANGE + k: the items of one stage whose actions share change k of
 * summary.shared_changes, whatever their share (review 15 defect 4). */
typedef enum pool_kind { POOL_NONE = 0, POOL_HOST, POOL_FUSION, POOL_CHANGE } pool_kind;

/* The change of summary.shared_changes the item's action is one of, as its index + 1; 0
 * when none. */
static size_t change_of(const te_settings *s, const an_summary_item *it) {
  const te_list_map *m = &s->summary_shared_changes;
  for (size_t k = 0; k < m->n; k++) {
    /* a run that executed compiled code is not told to compile (review 16 defect 1) */
    if (it->compiled_run && te_string_list_has(&s->summary_compile_changes, m->keys[k])) continue;
    if (te_string_list_has(&m->values[k], an_summary_action_id(it->action))) return k + 1;
  }
  return 0;
}

/* The pool an item joins: the items of one change (summary.shared_changes: torch.compile
 * for a launch-bound step and its eager chains), one item with their bounds summed, since
 * one change behind two ranked items read as two changes (review 15 defect 4: hta_async's
 * items 2 and 3, "same lever as item 2"); under the bar, a host stall with a named activity or
 * place (not the allocator's, a kind of its own, nor one folding the collectives' wait; review 13
 * defect 2: SGLang decode's host work after its designed wait, named by its Python
 * frames only, pools with the graph launch's stall as the expert audit does), or a fused path
 * to enable or port (not a GEMM merge: a code change of another kind). */
static size_t pool_of(const te_settings *s, const an_summary_item *it) {
  if (it->basis == AN_BASIS_UNBOUNDED) return POOL_NONE;
  size_t change = change_of(s, it);
  if (change) return POOL_CHANGE + change - 1;
  if (it->share_pct >= s->summary_pool_below_pct) return POOL_NONE;
  /* a read back's idle is one cause with its own lever, the copy (review 22 defect 6) */
  if (it->kind == AN_SUMMARY_IDLE && (it->what || it->location) && it->folded_wait_us <= 0 &&
      it->idle_kind != AN_IDLE_ALLOC && !it->readback &&
      (it->action == AN_ACTION_REMOVE_SYNC || it->action == AN_ACTION_HOST_STALL))
    return POOL_HOST;
  if (it->kind == AN_SUMMARY_FUSION &&
      (it->action == AN_ACTION_ENABLE_FUSION || it->action == AN_ACTION_PORT_FUSION))
    return POOL_FUSION;
  return POOL_NONE;
}

/* The first item after v[i] of its stage and pool, or n. */
static size_t next_member(const te_settings *s, const an_summary_item *v, size_t n, size_t i) {
  size_t k = pool_of(s, &v[i]);
  for (size_t j = i + 1; j < n; j++)
    if (pool_of(s, &v[j]) == k && !strcmp(v[j].stage_id, v[i].stage_id)) return j;
  return n;
}

/* Folds member m into pooled item p: its figures, its anchor and evidence. */
static void absorb(an_summary_item *p, const an_summary_item *m) {
  p->at_stake_us += m->at_stake_us;
  p->share_pct += m->share_pct;
  p->score += m->score;
  p->basis_us += m->basis_us;
  p->count += m->count;
  if (m->detail_us > p->detail_us) p->detail_us = m->detail_us;
  if (!p->not_additive[0] && m->not_additive[0]) { /* the member's note stays the pool's */
    memcpy(p->not_additive, m->not_additive, sizeof p->not_additive);
    p->not_additive_us = m->not_additive_us;
    p->not_additive_adds = m->not_additive_adds;
    p->not_additive_lever = m->not_additive_lever;
  }
  if (!m->n_rows) sm_more(p, m->anchor); /* else its rows are its evidence */
  for (size_t k = 0; k < m->n_more; k++) sm_more(p, m->more[k]);
  p->more_left += m->more_left;
}

/* Space for every pool of v: members, their kernels and rows; false when out of memory. */
static bool reserve(const te_settings *s, const an_summary_item *v, size_t n,
                    an_summary_data *out) {
  size_t members = 0, kernels = 0, rows = 0;
  for (size_t i = 0; i < n; i++)
    if (pool_of(s, &v[i]) != POOL_NONE) {
      members++;
      kernels += v[i].n_kernels;
      rows += v[i].n_rows;
    }
  out->pooled = calloc(members ? members : 1, sizeof *out->pooled);
  out->pool_kernels = calloc(kernels ? kernels : 1, sizeof *out->pool_kernels);
  out->pool_rows = calloc(rows ? rows : 1, sizeof *out->pool_rows);
  return out->pooled && out->pool_kernels && out->pool_rows;
}

/* Pools v[i] with the later members of its stage and pool (two at least); the members are
 * copied out and their places emptied (kind AN_SUMMARY_KINDS). Offsets into out advance. */
static void pool_from(const te_settings *s, an_summary_item *v, size_t n, size_t i,
                      an_summary_data *out, size_t *mo, size_t *ko, size_t *ro) {
  if (next_member(s, v, n, i) == n) return;
  an_summary_item *members = out->pooled + *mo;
  const char **kernels = out->pool_kernels + *ko;
  an_item_row *rows = out->pool_rows + *ro;
  size_t nm = 0, nk = 0, nr = 0;
  for (size_t j = i, next; j < n; j = next) {
    next = next_member(s, v, n, j);
    members[nm++] = v[j];
    for (size_t k = 0; k < v[j].n_kernels; k++) kernels[nk++] = v[j].kernels[k];
    for (size_t k = 0; k < v[j].n_rows; k++) rows[nr++] = v[j].rows[k];
    if (j != i) v[j].kind = AN_SUMMARY_KINDS; /* taken */
  }
  an_summary_item *p = &v[i];
  *p = members[0]; /* its anchor, links and count of links left out, as they are */
  for (size_t k = 1; k < nm; k++) absorb(p, &members[k]);
  size_t change = change_of(s, &members[0]);
  /* a change's pool names the change; a pool under the bar, nothing of one member */
  p->same_change = change ? s->summary_shared_changes.keys[change - 1] : NULL;
  p->what = p->same_change;
  p->location = NULL;
  p->lever = p->lever_op = NULL;
  p->lever_designed = false;
  p->readback = NULL;
  p->lever_op_us = 0;
  p->n_roles = 0;
  p->kernels = kernels;
  p->n_kernels = nk;
  p->rows = rows;
  p->n_rows = nr;
  p->pool = members;
  p->n_pool = nm;
  *mo += nm, *ko += nk, *ro += nr;
}

/* Whether an item's lever rests on a prerequisite the trace cannot confirm, one rule for
 * every lever (blind review 22 defect 4: vLLM decode's upgrade to "a version the trace does
 * not state" was numbered above a lead whose lever was hedged alike): a host stall with no
 * lever named, a lever of summary.hedged_levers, a fused path that needs a framework
 * release the trace does not state (since_version); a pool when every member is. */
static bool hedged(const te_settings *s, const an_summary_item *it) {
  if (it->n_pool) {
    for (size_t k = 0; k < it->n_pool; k++)
      if (!hedged(s, &it->pool[k])) return false;
    return true;
  }
  if ((it->action == AN_ACTION_ENABLE_FUSION || it->action == AN_ACTION_PORT_FUSION) &&
      it->since_version)
    return true;
  if (it->action == AN_ACTION_KERNEL_LEVER)
    return it->lever_op && te_string_list_has(&s->summary_hedged_levers, it->lever_op);
  return it->kind == AN_SUMMARY_IDLE && it->action == AN_ACTION_HOST_STALL &&
         it->idle_kind == AN_IDLE_HOST && !it->lever;
}

size_t sm_pool_items(const te_settings *s, an_summary_item *v, size_t n, an_summary_data *out,
                     bool *nomem) {
  if (!reserve(s, v, n, out)) {
    *nomem = true;
    return 0;
  }
  size_t mo = 0, ko = 0, ro = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i].kind != AN_SUMMARY_KINDS && pool_of(s, &v[i]) != POOL_NONE)
      pool_from(s, v, n, i, out, &mo, &ko, &ro);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].kind == AN_SUMMARY_KINDS) continue;
    v[i].lead = v[i].basis != AN_BASIS_UNBOUNDED && v[i].share_pct < s->summary_lead_below_pct &&
                hedged(s, &v[i]);
    v[m++] = v[i];
  }
  return m;
}
