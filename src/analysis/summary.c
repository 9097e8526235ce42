/*
 * analysis/summary.c - "What to try first", time by category, trace limits (summary.h).
 *
 * The ranking (docs/report.md): every candidate row of the three tables of every stage
 * gets score = summary.weights[kind] * its time at stake; the list is the best
 * summary.max_items, ties broken by kind, stage order and row, so it is stable.
 */
#include "analysis/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KIND_IDS[AN_SUMMARY_KINDS] = {"kernel", "overlap", "fusion"};

/* ---------------------------------------------------------------- time at stake */

/* A dominant kernel: all of its time. */
double an_kernel_at_stake(const an_kernel_row *r) { return r->total_us; }
/* An overlap row: its recoverable time (steady exposed cost bounded by the work another
 * stream could run meanwhile; the wait part is rank skew or stalls, not headroom). It is
 * per step when the stage has step markers; the summary compares whole-stage times, so
 * it is scaled back to the stage. */
double an_overlap_at_stake(const an_overlap_row *r, size_t n_steps) {
  return r->recoverable_ms * 1000.0 * (double)(n_steps ? n_steps : 1);
}
/* A fusion: the saving the pattern's formula estimates; a split match whose pattern has
 * no estimate yet falls back to the unfused chain's time (an upper bound); a direct match
 * (the fused kernel already ran) has nothing at stake. */
double an_fuse_at_stake(const an_fuse_row *r) {
  if (r->saving_us > 0) return r->saving_us;
  return r->match == AN_FUSION_SPLIT ? r->related_us : 0;
}

/* ---------------------------------------------------------------- items */

typedef struct item_ctx {
  an_summary_item *v;
  size_t n;
  const te_settings *s;
  const an_stage_report *st;
} item_ctx;

static const char *resolved(const char *loc) {
  return loc && strcmp(loc, "unresolved") != 0 ? loc : NULL;
}

/* Anchor ids keep to [a-z0-9-] so Markdown viewers and HTML agree on them. */
static void anchor(char *out, size_t cap, const char *kind, const char *stage, size_t row) {
  char st[32];
  size_t j = 0;
  for (const char *p = stage; *p && j + 1 < sizeof st; p++) {
    char c = *p;
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    st[j++] = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c : '-';
  }
  st[j] = 0;
  snprintf(out, cap, "%s-%s-%zu", kind, st, row);
}

static void add_item(item_ctx *c, an_summary_kind kind, an_action action, size_t row,
                     const char *const *kernels, size_t n_kernels, const char *loc,
                     double at_stake) {
  double total = c->st->kernel_total_us > 0 ? c->st->kernel_total_us : c->st->gpu_busy_us;
  double share = total > 0 ? at_stake / total * 100.0 : 0;
  if (share < c->s->summary_min_share_pct || at_stake <= 0) return;
  an_summary_item *it = &c->v[c->n++];
  *it = (an_summary_item){kind,    action,        c->st->id, c->st->label, row, n_kernels,
                          kernels, resolved(loc), at_stake,  share,        0,   {0}};
  it->score = te_number_map_get(&c->s->summary_weights, KIND_IDS[kind]) * at_stake;
  anchor(it->anchor, sizeof it->anchor, KIND_IDS[kind], c->st->id, row);
}

static void kernel_items(item_ctx *c) {
  for (size_t i = 0; i < c->st->n_kernels; i++) {
    const an_kernel_row *r = &c->st->kernels[i];
    if (!r->shown || r->share_pct < c->s->summary_kernel_min_share_pct) continue;
    const char *loc = r->n_shown_sites ? r->shown_sites[0]->location
                      : r->entry       ? r->entry->best_location
                                       : NULL;
    add_item(c, AN_SUMMARY_KERNEL, AN_ACTION_TUNE_KERNEL, i, &r->name, 1, loc,
             an_kernel_at_stake(r));
  }
}

static void overlap_items(item_ctx *c) {
  const an_overlap_stage *o = c->st->overlap;
  for (size_t i = 0; o && i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    /* only rows that ask for a change; one-time setup and rank-skew waits are no headroom */
    an_action a;
    switch (r->recommendation) {
      case AN_RECOMMEND_TRY_OVERLAP:
        a = AN_ACTION_TRY_OVERLAP;
        break;
      case AN_RECOMMEND_TRY_FUSION:
        a = AN_ACTION_TRY_FUSION;
        break;
      case AN_RECOMMEND_CHECK_DEPS:
        a = AN_ACTION_CHECK_DEPS;
        break;
      case AN_RECOMMEND_ELIMINATE:
        a = AN_ACTION_ELIMINATE;
        break;
      default:
        continue;
    }
    if (r->verdict != AN_OVERLAP_HEADROOM || r->below_floor) continue;
    add_item(c, AN_SUMMARY_OVERLAP, a, i, (const char *const *)&r->kernel, 1, r->scope,
             an_overlap_at_stake(r, o->n_steps));
  }
}

static void fuse_items(item_ctx *c) {
  for (size_t i = 0; i < c->st->n_fuse; i++) {
    const an_fuse_row *r = &c->st->fuse[i];
    if (!r->shown) continue;
    an_action a = r->origin == AN_FUSION_MAINLINE ? AN_ACTION_ENABLE_FUSION : AN_ACTION_PORT_FUSION;
    add_item(c, AN_SUMMARY_FUSION, a, i, r->related, r->n_related,
             r->n_locations ? r->locations[0] : NULL, an_fuse_at_stake(r));
  }
}

static int by_score(const void *pa, const void *pb) {
  const an_summary_item *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  return strcmp(a->anchor, b->anchor);
}

static size_t candidates(const an_report *rep) {
  size_t n = 0;
  for (size_t i = 0; i < rep->n_stages; i++) {
    const an_stage_report *st = &rep->stages[i];
    n += st->n_kernels + st->n_fuse + (st->overlap ? st->overlap->n_rows : 0);
  }
  return n;
}

static an_status build_items(an_report *rep, const te_settings *s, an_summary_data *out) {
  size_t cap = candidates(rep);
  item_ctx c = {calloc(cap ? cap : 1, sizeof *c.v), 0, s, NULL};
  if (!c.v) return AN_ERR_NOMEM;
  for (size_t i = 0; i < rep->n_stages; i++) {
    c.st = &rep->stages[i];
    kernel_items(&c);
    overlap_items(&c);
    fuse_items(&c);
  }
  qsort(c.v, c.n, sizeof *c.v, by_score);
  if (c.n > (size_t)s->summary_max_items) c.n = (size_t)s->summary_max_items;
  out->items = c.v;
  out->n_items = c.n;
  rep->summary = c.v;
  rep->n_summary = c.n;
  return AN_OK;
}

/* ---------------------------------------------------------------- categories */

static int by_time(const void *pa, const void *pb) {
  const an_category_time *a = pa, *b = pb;
  if (a->total_us != b->total_us) return a->total_us > b->total_us ? -1 : 1;
  return strcmp(a->category, b->category);
}

static size_t stage_categories(const an_stage_report *st, an_category_time *v) {
  size_t n = 0;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    size_t k = 0;
    while (k < n && strcmp(v[k].category, r->category) != 0) k++;
    if (k == n) v[n++] = (an_category_time){r->category, 0, 0, 0};
    v[k].total_us += r->total_us;
    v[k].kernels++;
  }
  for (size_t k = 0; k < n; k++)
    v[k].share_pct = st->kernel_total_us > 0 ? v[k].total_us / st->kernel_total_us * 100.0 : 0;
  qsort(v, n, sizeof *v, by_time);
  return n;
}

static an_status build_categories(an_stage_report *stages, size_t n_stages, an_summary_data *out) {
  size_t cap = 0;
  for (size_t i = 0; i < n_stages; i++) cap += stages[i].n_kernels;
  out->categories = calloc(cap ? cap : 1, sizeof *out->categories);
  if (!out->categories) return AN_ERR_NOMEM;
  for (size_t i = 0; i < n_stages; i++) {
    an_category_time *v = out->categories + out->n_categories;
    size_t n = stage_categories(&stages[i], v);
    stages[i].categories = v;
    stages[i].n_categories = n;
    out->n_categories += n;
  }
  return AN_OK;
}

an_status an_summary_build(an_report *rep, an_stage_report *stages, const te_settings *s,
                           an_summary_data *out) {
  memset(out, 0, sizeof *out);
  an_status rc = build_categories(stages, rep->n_stages, out);
  if (rc == AN_OK) rc = build_items(rep, s, out);
  return rc;
}

/* ---------------------------------------------------------------- limits */

static bool any_resolved(const an_kmap_payload *p) {
  for (size_t i = 0; i < p->n; i++)
    for (size_t k = 0; k < p->entries[i].n_sites; k++)
      if (resolved(p->entries[i].sites[k].location)) return true;
  return false;
}

void an_summary_limits(an_report *rep, const te_settings *s) {
  an_trace_limits *l = &rep->limits;
  /* the global payload holds every stage's entries */
  l->no_python_stacks = !any_resolved(&rep->kernel_map.global);
  l->framework_defaulted = rep->run.framework.source == AN_SOURCE_DEFAULT;
  l->ranks_analysed = (long)rep->run.n_formal_inputs;
  /* the TP size counts ranks only when something stated it (server args, trace metadata) */
  const an_count_fact *tp = &rep->run.context.tp_size;
  l->ranks_expected =
      tp->source != AN_SOURCE_DEFAULT && tp->source != AN_SOURCE_UNKNOWN ? tp->value : 0;
  for (size_t i = 0; i < rep->n_stages; i++) {
    const an_overlap_stage *o = rep->stages[i].overlap;
    if (o && o->span_us > 0 && o->span_us < s->report_short_window_ms * 1000.0) {
      l->short_window_stage = rep->stages[i].label;
      l->short_window_us = o->span_us;
      break;
    }
  }
}

void an_summary_free(an_summary_data *d) {
  free(d->items);
  free(d->categories);
  memset(d, 0, sizeof *d);
}
