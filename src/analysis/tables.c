/*
 * analysis/tables.c - kernel table (docs/reference.md §5) and fuse table (docs/reference.md
 * §7.2).
 */
#include "analysis/tables.h"
#include "analysis/explain.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fuse_internal.h"
#include "analysis/kmap_internal.h"
#include "triage/ascii.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/map.h"
#include "util/sort.h"

/* ------------------------------------------------------------------ kernel rows */

typedef struct agg {
  const char *name, *raw;
  double total, max;
  double steps; /* inside counted steps */
  size_t launches;
  uint32_t first; /* first-seen order */
  uint32_t id;    /* in the formal map's name table */
} agg;

static int cmp_agg(const void *a, const void *b) {
  const agg *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return x->first < y->first ? -1 : (x->first > y->first ? 1 : 0);
}

/* Whether site s is only the warm-up of a kernel that has a site in the counted steps: an
 * unresolved site all of whose launches ran outside the counted steps is no place in the
 * code, only the step/warm-up split, which the steps line states once for the stage
 * (review 13: every hf row read "X (site share 69%) / outside the counted steps (site
 * share 31%)"). Shown only when the kernel has no other site. */
static bool warmup_only(const an_kernel_row *row, const an_site *s) {
  return row->outside_sites && s->launches && s->outside_launches >= s->launches &&
         !an_location_resolved(s->location);
}

/* The sites a row shows: the preferred ones when any, else all but warm-up-only ones (when
 * another is left); the first cap of them, into pool. Several candidates show each one's
 * share of the kernel. */
static void choose_sites(const te_rules *rules, an_loc_memo *preferred, an_kernel_row *row,
                         size_t cap, const an_site **pool) {
  const an_kmap_entry *e = row->entry;
  row->shown_sites = pool;
  row->outside_sites = te_rules_settings(rules)->kernel_table_outside_steps_sites;
  if (!e) return;
  size_t n_pref = 0, n_warmup = 0;
  for (size_t i = 0; i < e->n_sites; i++) {
    if (an_location_preferred(preferred, e->sites[i].display_location)) n_pref++;
    if (warmup_only(row, &e->sites[i])) n_warmup++;
  }
  bool skip_warmup = !n_pref && n_warmup < e->n_sites;
  size_t k = 0;
  for (size_t i = 0; i < e->n_sites && k < cap; i++) {
    if (n_pref && !an_location_preferred(preferred, e->sites[i].display_location)) continue;
    if (skip_warmup && warmup_only(row, &e->sites[i])) continue;
    pool[k++] = &e->sites[i];
  }
  row->n_shown_sites = k;
  row->site_share_shown = (n_pref ? n_pref : e->n_sites - (skip_warmup ? n_warmup : 0)) > 1;
  /* issue 31: a preferred site that 16 of 3040 launches resolved to is no location of
   * the kernel; the row says how many it covers */
  size_t covered, of;
  an_row_site_coverage(row, &covered, &of);
  double min = te_rules_settings(rules)->kernel_table_site_min_coverage;
  row->partial_site = k && of && (double)covered < min * (double)of;
}

/* The text fusion matchers are written against: "<name> <location cell> <cpu op cell>",
 * the row as the reference's kernel table shows it. A near-copy of the Markdown cells
 * (report/reference_md.c) on purpose: the packs' patterns match this text, so it must not move
 * when a report layout does. The text is copied into a (a row's text is its own: it starts
 * with the row's distinct name, so an interning table would only add its slots). It is
 * built in b, the caller's buffer reused row after row (a buffer grown from empty for
 * each row was 4 % of a run on many distinct names). */
static const char *match_subject(ut_arena *a, ut_buf *b, const an_kernel_row *row) {
  ut_buf_clear(b);
  ut_buf_add(b, row->name);
  ut_buf_add(b, " ");
  if (!row->entry)
    ut_buf_add(b, AN_LOCATION_UNRESOLVED);
  else if (!row->entry->n_sites)
    ut_buf_add(b, row->entry->best_location);
  for (size_t i = 0; i < row->n_shown_sites; i++) {
    if (i) ut_buf_add(b, "<br>");
    ut_buf_add(b, row->shown_sites[i]->display_location);
    if (row->site_share_shown)
      ut_buf_addf(b, " (site share %.0f%%)", row->shown_sites[i]->share_pct_within_kernel);
  }
  ut_buf_add(b, " ");
  size_t n_ops = 0;
  for (size_t i = 0; i < row->n_shown_sites; i++) {
    if (!row->shown_sites[i]->top_cpu_op) continue;
    if (n_ops++) ut_buf_add(b, "<br>");
    ut_buf_add(b, row->shown_sites[i]->top_cpu_op);
  }
  if (!n_ops) ut_buf_add(b, "-");
  char *r = ut_buf_str(b) ? ut_arena_alloc(a, b->n + 1) : NULL;
  if (r) memcpy(r, ut_buf_str(b), b->n + 1);
  return r;
}

/* The location a fuse row lists for a row's site (or for the row without sites). */
static const char *row_location(const an_kernel_row *row, size_t site) {
  if (!row->entry) return AN_LOCATION_UNRESOLVED;
  if (!row->entry->n_sites) return row->entry->best_location;
  return row->entry->sites[site].display_location;
}

/* ------------------------------------------------------------------ fuse table */

typedef struct fmatch {
  an_fuse_row row;
  const te_fusion_pattern *pattern;
  size_t *rows; /* related row indices */
  size_t n_rows;
  const char **roles; /* per related row: "active" or its component label; NULL when
                         component evidence is off (a row then serves one match) */
  int priority;
  size_t span;
  int gates; /* gates the pattern states (model, dtype, platform, TP): its specificity */
  size_t order;
  unsigned shape_unknown; /* AN_GATE_SHAPE when the shape gate's piece states no shapes */
} fmatch;

static int cmp_fmatch(const void *a, const void *b) {
  const fmatch *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->span != y->span) return x->span > y->span ? -1 : 1;
  /* role-aware de-duplication only: of two patterns as wide, the one stating more gates
   * is the more specific (0 for every match otherwise) */
  if (x->gates != y->gates) return x->gates > y->gates ? -1 : 1;
  if (x->n_rows != y->n_rows) return x->n_rows > y->n_rows ? -1 : 1;
  if (x->row.related_us != y->row.related_us) return x->row.related_us > y->row.related_us ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

/* Lower-cased copy of s (NULL stays NULL); *nomem when the copy fails. */
static char *lower_dup(const char *s, bool *nomem) {
  if (!s) return NULL;
  size_t n = strlen(s);
  char *lc = malloc(n + 1);
  if (!lc) {
    *nomem = true;
    return NULL;
  }
  te_ascii_lower(lc, s, n + 1);
  return lc;
}

/* Whether the (lower-case) model path contains word, compared lower-case; -1 when out of
 * memory. */
static int model_mentions(const char *model, const char *word) {
  bool nomem = false;
  char *lw = lower_dup(word, &nomem);
  if (!lw) return -1;
  int hit = strstr(model, lw) != NULL;
  free(lw);
  return hit;
}

static bool model_gate(const te_fusion_pattern *p, const char *model) {
  if (!p->n_model_include && !p->n_model_exclude) return true;
  if (!model || !*model) return false;
  if (p->n_model_include) {
    int any = 0;
    for (size_t i = 0; i < p->n_model_include && !any; i++)
      if ((any = model_mentions(model, p->model_include[i])) < 0) return false;
    if (!any) return false;
  }
  for (size_t i = 0; i < p->n_model_exclude; i++)
    if (model_mentions(model, p->model_exclude[i]) != 0) return false;
  return true;
}

static an_fusion_origin fusion_origin(te_origin_kind o) {
  return o == TE_ORIGIN_UPSTREAM   ? AN_FUSION_UPSTREAM
         : o == TE_ORIGIN_INFLIGHT ? AN_FUSION_INFLIGHT
                                   : AN_FUSION_MAINLINE;
}

static void fuse_row_free(an_fuse_row *r) {
  free(r->candidate_paths);
  free(r->candidate_repos);
  free(r->roles);
  free(r->related);
  free(r->evidence);
  free(r->locations);
  free(r->location_kinds);
}

/* Minimum architecture: the trace's compute capability is at least the pattern's minimum
 * for the run's platform. An unknown platform or architecture passes (the trace did not
 * say); the reference has no such gate (component evidence off: none). */
static bool arch_gate_pass(const te_fusion_pattern *p, const an_tables_options *opt) {
  double min = opt->platform == AN_PLATFORM_CUDA   ? p->min_arch_cuda
               : opt->platform == AN_PLATFORM_ROCM ? p->min_arch_rocm
                                                   : 0;
  return !opt->component_evidence || opt->arch <= 0 || min <= 0 ||
         (double)opt->arch + 1e-9 >= min * 10.0;
}

/* The gates a pattern states that the run context must pass: framework, platform, TP
 * size, model family. An unknown platform passes (the trace did not say). */
/* The run's workload kind as the packs' workloads: gate spells it (0: unknown). */
static unsigned workload_bit(an_workload w) {
  switch (w) {
    case AN_WORKLOAD_SERVING:
      return TE_WORKLOAD_SERVING;
    case AN_WORKLOAD_INFERENCE:
      return TE_WORKLOAD_INFERENCE;
    case AN_WORKLOAD_TRAINING:
      return TE_WORKLOAD_TRAINING;
    case AN_WORKLOAD_MICROBENCHMARK:
      return TE_WORKLOAD_BENCHMARK;
    default:
      return 0;
  }
}

static bool pattern_gates_pass(const te_fusion_pattern *p, const an_tables_options *opt,
                               const char *model_lc) {
  if (p->framework && opt->framework_id && strcmp(p->framework, opt->framework_id) != 0)
    return false;
  /* a fused path for another kind of run (a serving layer on a training trace) is no
   * advice there; an unknown kind passes */
  unsigned w = workload_bit(opt->workload);
  if (p->workloads && opt->component_evidence && w && !(p->workloads & w)) return false;
  if (p->platform && opt->component_evidence && opt->platform != AN_PLATFORM_UNKNOWN &&
      strcmp(p->platform, an_platform_id(opt->platform)) != 0)
    return false;
  if (p->require_tp && opt->tp_size < p->min_tp_size) return false;
  if (!arch_gate_pass(p, opt)) return false;
  return model_gate(p, model_lc);
}

/* Whether a kernel row may be the evidence of a component: its category or its kind is
 * the one the pattern names ("any": every kernel). */
static bool fits_component(const char *want, const an_kernel_row *row) {
  if (!want || strcmp(want, "any") == 0) return true;
  return (row->category && strcmp(row->category, want) == 0) ||
         (row->kind && strcmp(row->kind, want) == 0);
}

static bool name_matches(const te_matcher *m, const an_kernel_row *row) {
  return te_matcher_match(m, row->name, strlen(row->name));
}

/* Whether a kernel is of one of the pattern's number formats (dtype gate): a matcher
 * dtype_<value> of the packs hits its name. A pattern without dtype takes every kernel. */
static bool dtype_fits_subject(const te_fusion_pattern *p, te_subject *name) {
  if (!p->n_dtype) return true;
  for (size_t k = 0; k < p->n_dtype; k++)
    if (p->dtype_matchers[k] && te_matcher_match_subject(p->dtype_matchers[k], name)) return true;
  return false;
}

/* dtype_fits_subject for one row outside the row-by-row pass (a chosen component, an
 * explanation); false also when out of memory, as a failed match. */
static bool dtype_fits(const te_fusion_pattern *p, const an_kernel_row *row) {
  if (!p->n_dtype) return true;
  te_subject *name = te_subject_create();
  if (name) te_subject_set(name, row->name, strlen(row->name));
  bool fits = name && dtype_fits_subject(p, name);
  te_subject_destroy(name);
  return fits;
}

/* The evidence label of split group g: the pattern's, or "any" for a pattern that
 * states none (its groups then need their keyword in the kernel name). */
static const char *component_label(const te_fusion_pattern *p, size_t g) {
  return p->n_evidence ? p->evidence[g] : "any";
}

/* Whether the active matcher reads the kernel name (component evidence: the name alone is
 * the evidence, and a pattern with a dtype gate counts only a kernel of that format) rather
 * than the row text (name, location, CPU op). */
static bool active_reads_name(const te_fusion_pattern *p, const an_tables_options *opt) {
  return opt->component_evidence && (p->n_evidence || p->n_dtype);
}

/* Whether split group g is tested on every row, so its hits are worth computing row by
 * row: always in the reference's split match; with component evidence only for a group
 * whose label is "any" (a labelled group tests just the rows of its category). */
static bool group_on_every_row(const te_fusion_pattern *p, size_t g, const an_tables_options *opt) {
  return !opt->component_evidence || strcmp(component_label(p, g), "any") == 0;
}

/* Which rows the matchers tested on every row hit: each pattern's active matcher and its
 * split groups that group_on_every_row, one bit per (row, pattern slot). They are computed
 * row by row, so a row's text and name are lower-cased, compacted and tokenised once for
 * all patterns instead of once per matcher (docs/performance.md: with 262,144 distinct
 * kernel names, re-reading each name per pattern was a third of the run). */
typedef struct row_hits {
  size_t n_bits;  /* pattern slots per row: one active bit and one per split group */
  size_t words;   /* 64-bit words per row */
  size_t *first;  /* per pattern: its active bit; split group g is first + 1 + g */
  uint64_t *bits; /* n_rows * words */
} row_hits;

static bool row_hit(const row_hits *rh, size_t pi, size_t slot, size_t row) {
  size_t b = rh->first[pi] + slot;
  return (rh->bits[row * rh->words + (b >> 6)] >> (b & 63)) & 1u;
}

/* One matcher tested on every row and the bit it sets, decided once per stage so the row
 * loop reads no pattern settings (with 262,144 distinct names, walking the patterns and
 * comparing labels per row cost more than a tenth of the fuse table). The matchers sit in
 * two groups (te_matcher_group), one per text a row offers, so that one prefilter pass
 * over each text rules out the probes none of whose literals occur in it: a row then
 * costs two passes, not every probe's scans (many distinct names: one probe of 13
 * compact keywords was ~2,700 instructions a row). Building the groups' prefilters costs
 * about what a few dozen rows save (the real traces' stages: 24-29 rows lost 0.03-0.34 M
 * instructions, 174 rows won), so a smaller stage runs each probe's matcher. */
#define FUSE_GROUP_MIN_ROWS 64u
typedef struct row_probe {
  size_t at;       /* the matcher's index in its group */
  size_t dtype_at; /* the pattern's dtype matchers: name group [dtype_at, + n_dtype) */
  size_t n_dtype;  /* 0: no dtype gate */
  bool on_name;    /* reads the kernel name, not the row text */
  size_t bit;
} row_probe;

/* The probes of one stage and their two matcher groups. */
typedef struct row_probes {
  row_probe *pr;
  size_t n;
  const te_matcher **text_ms, **name_ms; /* the groups' matchers, in probe order */
  size_t n_text, n_name;
  te_matcher_group *text_g, *name_g;
} row_probes;

static void row_probes_free(row_probes *rp) {
  te_matcher_group_destroy(rp->text_g);
  te_matcher_group_destroy(rp->name_g);
  free(rp->pr);
  free(rp->text_ms);
  free(rp->name_ms);
  memset(rp, 0, sizeof *rp);
}

/* Appends probe m (on the name or the row text) with its pattern's dtype gate (NULL:
 * none) to rp, whose arrays hold room for it. */
static void probe_add(row_probes *rp, const te_matcher *m, const te_fusion_pattern *dtype,
                      bool on_name, size_t bit) {
  row_probe *x = &rp->pr[rp->n++];
  *x = (row_probe){0, 0, 0, on_name, bit};
  if (on_name)
    rp->name_ms[x->at = rp->n_name++] = m;
  else
    rp->text_ms[x->at = rp->n_text++] = m;
  if (!dtype) return;
  x->dtype_at = rp->n_name;
  x->n_dtype = dtype->n_dtype;
  for (size_t k = 0; k < dtype->n_dtype; k++) rp->name_ms[rp->n_name++] = dtype->dtype_matchers[k];
}

/* The probes of every pattern that passes its gates, in pattern order (at most one per
 * slot of rh), and their groups when the stage has n_rows of FUSE_GROUP_MIN_ROWS or more.
 * False when out of memory. */
static bool row_probes_build(row_probes *rp, const te_rules *rules, const bool *gated,
                             const row_hits *rh, const an_tables_options *opt, size_t n_rows) {
  size_t np = te_rules_fusion_count(rules), n_dtype = 0;
  memset(rp, 0, sizeof *rp);
  for (size_t pi = 0; pi < np; pi++)
    if (gated[pi]) n_dtype += te_rules_fusion(rules, pi)->n_dtype;
  size_t cap = rh->n_bits ? rh->n_bits : 1;
  rp->pr = malloc(cap * sizeof *rp->pr);
  rp->text_ms = malloc(cap * sizeof *rp->text_ms);
  rp->name_ms = malloc((cap + n_dtype) * sizeof *rp->name_ms);
  if (!rp->pr || !rp->text_ms || !rp->name_ms) return false;
  for (size_t pi = 0; pi < np; pi++) {
    const te_fusion_pattern *p = te_rules_fusion(rules, pi);
    if (!gated[pi]) continue;
    size_t b = rh->first[pi];
    bool reads_name = active_reads_name(p, opt);
    if (p->active) probe_add(rp, p->active, reads_name && p->n_dtype ? p : NULL, reads_name, b);
    /* the reference's split match reads the row text; an "any" component the name */
    for (size_t g = 0; g < p->n_split_groups; g++)
      if (group_on_every_row(p, g, opt))
        probe_add(rp, p->split_groups[g], NULL, opt->component_evidence, b + 1 + g);
  }
  if (n_rows < FUSE_GROUP_MIN_ROWS) return true; /* each probe runs its matcher */
  rp->text_g = te_matcher_group_create(rp->text_ms, rp->n_text);
  rp->name_g = te_matcher_group_create(rp->name_ms, rp->n_name);
  return rp->text_g && rp->name_g;
}

/* Whether the group's matcher at (of ms without a group) hits the subject. */
static bool probe_match(const te_matcher_group *g, const te_matcher *const *ms, size_t at,
                        te_subject *subj) {
  return g ? te_matcher_group_match(g, at, subj) : te_matcher_match_subject(ms[at], subj);
}

/* Whether the name is of one of a probe's number formats (dtype_fits_subject through
 * the name group). */
static bool probe_dtype_fits(const row_probes *rp, const row_probe *x, te_subject *name) {
  if (!x->n_dtype) return true;
  for (size_t k = 0; k < x->n_dtype; k++)
    if (probe_match(rp->name_g, rp->name_ms, x->dtype_at + k, name)) return true;
  return false;
}

/* The bits of row i for every probe. */
static void row_hits_fill(row_hits *rh, const row_probes *rp, size_t i, te_subject *text,
                          te_subject *name) {
  uint64_t *row = &rh->bits[i * rh->words];
  for (size_t k = 0; k < rp->n; k++) {
    const row_probe *x = &rp->pr[k];
    bool hit = x->on_name ? probe_match(rp->name_g, rp->name_ms, x->at, name)
                          : probe_match(rp->text_g, rp->text_ms, x->at, text);
    if (hit && probe_dtype_fits(rp, x, name)) row[x->bit >> 6] |= 1ull << (x->bit & 63);
  }
}

static void row_hits_free(row_hits *rh) {
  free(rh->first);
  free(rh->bits);
  memset(rh, 0, sizeof *rh);
}

/* A stage's rows from which their probes run on two threads (an_tables_options.two_threads):
 * a row costs ~1,000-2,000 instructions of matching, so below a few thousand rows the thread's
 * start and the lanes' fold cost about what it takes off (the real traces' stages: 24-174
 * rows); 262,144 distinct names: ~430 M instructions of probes in one stage. */
#define FUSE_TWO_THREADS_MIN_ROWS 4096u
/* Rows a thread takes at a time: either thread takes what the other has not reached. */
#define FUSE_ROWS_CHUNK 64u

/* The rows' probes, shared out in chunks between the threads that run hits_take. */
typedef struct hits_job {
  row_hits *rh;
  const row_probes *rp;
  const an_stage_tables *st;
  const char **texts;
  atomic_size_t next; /* the first row no thread has taken */
} hits_job;

/* Fills the bits of the rows it takes (chunks of FUSE_ROWS_CHUNK) until none is left. False
 * when its subjects cannot be made (out of memory): it then takes no row. */
static bool hits_take(hits_job *j) {
  te_subject *text = te_subject_create(), *name = te_subject_create();
  bool ok = text && name;
  size_t n = j->st->n_rows;
  for (;;) {
    size_t lo = ok ? atomic_fetch_add_explicit(&j->next, FUSE_ROWS_CHUNK, memory_order_relaxed) : n;
    if (lo >= n) break;
    size_t hi = n - lo < FUSE_ROWS_CHUNK ? n : lo + FUSE_ROWS_CHUNK;
    for (size_t i = lo; i < hi; i++) {
      te_subject_set(text, j->texts[i], strlen(j->texts[i]));
      te_subject_set(name, j->st->rows[i].name, strlen(j->st->rows[i].name));
      row_hits_fill(j->rh, j->rp, i, text, name);
    }
  }
  te_subject_destroy(text);
  te_subject_destroy(name);
  return ok;
}

static void *hits_second(void *arg) {
  hits_job *j = arg;
  /* out of memory for its subjects, it takes no row: the first thread takes them all */
  if (te_lane_enter(2) == 0) (void)hits_take(j);
  te_lane_leave();
  return NULL;
}

/* Every row's probe bits: on this thread, with a second one when opt allows it and the
 * stage has FUSE_TWO_THREADS_MIN_ROWS rows (this thread in lane 1, the other in lane 2).
 * False when out of memory. */
static bool hits_all(hits_job *j, const te_rules *rules, const an_tables_options *opt) {
  pthread_t th;
  bool two =
      opt->two_threads && j->st->n_rows >= FUSE_TWO_THREADS_MIN_ROWS && te_lane_enter(1) == 0;
  if (two && !(two = pthread_create(&th, NULL, hits_second, j) == 0)) te_lane_leave();
  bool ok = hits_take(j);
  if (!two) return ok;
  pthread_join(th, NULL);
  te_lane_leave();
  te_rules_lanes_fold(rules);
  return ok;
}

static bool row_hits_build(row_hits *rh, const te_rules *rules, const bool *gated,
                           const an_tables_options *opt, const an_stage_tables *st,
                           const char **texts) {
  size_t np = te_rules_fusion_count(rules);
  memset(rh, 0, sizeof *rh);
  rh->first = calloc(np ? np : 1, sizeof *rh->first);
  if (!rh->first) return false;
  for (size_t pi = 0; pi < np; pi++) {
    rh->first[pi] = rh->n_bits;
    rh->n_bits += 1 + te_rules_fusion(rules, pi)->n_split_groups;
  }
  rh->words = (rh->n_bits + 63) / 64;
  rh->bits = calloc((st->n_rows ? st->n_rows : 1) * (rh->words ? rh->words : 1), sizeof *rh->bits);
  row_probes rp = {0};
  bool ok = rh->bits && row_probes_build(&rp, rules, gated, rh, opt, st->n_rows);
  if (ok && rp.n) {
    hits_job j = {.rh = rh, .rp = &rp, .st = st, .texts = texts};
    ok = hits_all(&j, rules, opt);
  }
  row_probes_free(&rp);
  if (!ok) row_hits_free(rh);
  return ok;
}

/* Rows whose text the active matcher hits (the fused path ran), appended to rel. With
 * components the kernel name alone is the evidence, and a pattern about a number format
 * counts only a fused kernel of that format (row_hits_fill decides which). */
static bool match_active(const te_fusion_pattern *p, const row_hits *rh, size_t pi,
                         const an_stage_tables *st, bool *mark, size_t *rel, size_t *nrel) {
  bool active = false;
  for (size_t i = 0; p->active && i < st->n_rows; i++) {
    if (!row_hit(rh, pi, 0, i)) continue;
    active = true;
    if (!mark[i]) {
      mark[i] = true;
      rel[(*nrel)++] = i;
    }
  }
  return active;
}

/* Whether row i may play split group g of p: its category fits the group's label and the
 * group's matcher hits it (an "any" component by its name only). */
static bool plays_group(const te_fusion_pattern *p, const row_hits *rh, size_t pi, size_t g,
                        const an_stage_tables *st, const char **texts, size_t i) {
  const char *label = component_label(p, g);
  if (!fits_component(label, &st->rows[i])) return false;
  /* a component with a category is proven by the name (its category) and may be placed
   * by its location; an "any" component only by its name */
  return strcmp(label, "any") == 0
             ? row_hit(rh, pi, 1 + g, i)
             : te_matcher_match(p->split_groups[g], texts[i], strlen(texts[i]));
}

/* Whether the chain gate decides p's split in this stage (fuse.context_gates). */
static bool chain_applies(const te_fusion_pattern *p, const an_stage_tables *st) {
  return st->seq && p->chain != TE_CHAIN_OFF && p->n_split_groups >= 2 &&
         p->n_split_groups <= TE_MAX_CHAIN_PIECES;
}

/* The rows that may play group g (not taken), largest first, at most
 * AN_MAX_CHAIN_CANDIDATES (rows are in total_us descending order already). */
static void chain_piece(const te_fusion_pattern *p, const row_hits *rh, size_t pi, size_t g,
                        const an_stage_tables *st, const char **texts, const bool *mark,
                        an_chain_piece *out) {
  out->n = 0;
  for (size_t i = 0; i < st->n_rows && out->n < AN_MAX_CHAIN_CANDIDATES; i++)
    if (!mark[i] && plays_group(p, rh, pi, g, st, texts, i)) out->rows[out->n++] = i;
}

typedef struct dtype_ctx {
  const te_fusion_pattern *p;
  const an_stage_tables *st;
} dtype_ctx;

/* The dtype gate on a chain's rows: one of them is of the pattern's format. */
static bool chain_format(const size_t *rows, void *vctx) {
  const dtype_ctx *c = vctx;
  for (size_t g = 0; g < c->p->n_split_groups; g++)
    if (dtype_fits(c->p, &c->st->rows[rows[g]])) return true;
  return !c->p->n_dtype;
}

/* The chain search of p's pieces over the stage's streams (fuse_chain.c); the best
 * chain's rows go to rel (and are marked) when at least fuse.chain_min_fraction of the
 * rarest piece's launches start one. */
static bool chain_search(const te_fusion_pattern *p, const an_stage_tables *st,
                         const an_chain_piece *pieces, const te_settings *set, bool *mark,
                         size_t *rel, size_t *nrel, double *chained, an_chain_layers *lay) {
  const char *labels[TE_MAX_CHAIN_PIECES];
  for (size_t g = 0; g < p->n_split_groups; g++) labels[g] = component_label(p, g);
  bool *rider = p->chain_riders ? calloc(st->n_rows ? st->n_rows : 1, sizeof *rider) : NULL;
  if (p->chain_riders && !rider) return false;
  for (size_t i = 0; rider && i < st->n_rows; i++)
    rider[i] = !mark[i] && name_matches(p->chain_riders, &st->rows[i]);
  an_chain_query q = {
      .st = st,
      .seq = st->seq,
      .pieces = pieces,
      .n_pieces = p->n_split_groups,
      .max_between = p->chain == TE_CHAIN_ON && p->chain_max_between >= 0
                         ? p->chain_max_between
                         : set->fuse_chain_max_between,
      .unordered = p->chain == TE_CHAIN_ON && p->chain_unordered,
      .breakers = p->has_chain_breakers ? &p->chain_breakers : &set->fuse_chain_breakers,
      .labels = labels,
      .n_labels = p->n_split_groups,
      .rider = rider,
  };
  size_t rows[TE_MAX_CHAIN_PIECES];
  an_chain_riders rd;
  dtype_ctx dc = {p, st};
  bool found = an_chain_best(&q, chain_format, &dc, rows, chained, &rd, lay) &&
               *chained >= set->fuse_chain_min_fraction;
  free(rider);
  if (!found) return false;
  for (size_t g = 0; g < p->n_split_groups; g++) {
    mark[rows[g]] = true;
    rel[(*nrel)++] = rows[g];
  }
  /* the riders after the pieces: the fused kernel removes them too (review-1 defect 4) */
  for (size_t k = 0; k < rd.n; k++)
    if (!mark[rd.rows[k]]) {
      mark[rd.rows[k]] = true;
      rel[(*nrel)++] = rd.rows[k];
    }
  return true;
}

/* Chain gate (issue 31): the split's pieces are the rows that most often form one chain
 * on one stream; at least fuse.chain_min_fraction of the rarest piece's launches must start
 * a whole chain. *chained: that share. */
static bool match_chain(const te_fusion_pattern *p, const row_hits *rh, size_t pi,
                        const an_stage_tables *st, const char **texts, const te_settings *set,
                        bool *mark, size_t *rel, size_t *nrel, double *chained,
                        an_chain_layers *lay) {
  an_chain_piece pieces[TE_MAX_CHAIN_PIECES];
  for (size_t g = 0; g < p->n_split_groups; g++) {
    chain_piece(p, rh, pi, g, st, texts, mark, &pieces[g]);
    if (!pieces[g].n) return false;
  }
  return chain_search(p, st, pieces, set, mark, rel, nrel, chained, lay);
}

/* Component evidence: each split group takes its own kernel, the largest one whose
 * category (from its name) fits the component and whose row the group matches, not already
 * taken by another group (one kernel cannot be two pieces of a split). All groups must
 * find one, and with a dtype gate one of them must be of the pattern's format. With the
 * chain gate the pieces must also form one chain on one stream (match_chain). */
static bool match_components(const te_fusion_pattern *p, const row_hits *rh, size_t pi,
                             const an_stage_tables *st, const char **texts, const te_settings *set,
                             bool *mark, size_t *rel, size_t *nrel, double *chained,
                             an_chain_layers *lay) {
  *chained = 1.0;
  if (chain_applies(p, st))
    return match_chain(p, rh, pi, st, texts, set, mark, rel, nrel, chained, lay);
  size_t before = *nrel;
  bool format = !p->n_dtype;
  for (size_t g = 0; g < p->n_split_groups; g++) {
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < st->n_rows; i++) {
      if (mark[i] || !plays_group(p, rh, pi, g, st, texts, i)) continue;
      if (best == SIZE_MAX || st->rows[i].total_us > st->rows[best].total_us) best = i;
    }
    if (best == SIZE_MAX) break;
    mark[best] = true;
    rel[(*nrel)++] = best;
    if (dtype_fits(p, &st->rows[best])) format = true;
  }
  if (*nrel - before == p->n_split_groups && format) return p->n_split_groups > 0;
  for (size_t k = before; k < *nrel; k++) mark[rel[k]] = false;
  *nrel = before;
  return false;
}

/* The reference's split match: every group hits some row of the row text (name, location,
 * CPU op), any category; all hit rows are related. */
static bool match_split_legacy(const te_fusion_pattern *p, const row_hits *rh, size_t pi,
                               const an_stage_tables *st, bool *mark, size_t *rel, size_t *nrel) {
  bool split = p->n_split_groups > 0;
  size_t before = *nrel;
  for (size_t g = 0; g < p->n_split_groups; g++) {
    bool any = false;
    for (size_t i = 0; i < st->n_rows; i++)
      if (row_hit(rh, pi, 1 + g, i)) {
        any = true;
        if (!mark[i]) {
          mark[i] = true;
          rel[(*nrel)++] = i;
        }
      }
    if (!any) split = false;
  }
  if (!split) *nrel = before; /* split groups only count when all of them hit */
  return split;
}

/* Estimated saving of a split: the component kernels except the largest (the fused kernel
 * does the largest piece's work; the others' separate passes over memory go). An active
 * fused path saves nothing more. docs/rules.md states the formula. */
static double saving_estimate(const an_stage_tables *st, const size_t *rel, size_t nrel,
                              bool active) {
  if (active || nrel < 2) return 0;
  double sum = 0, largest = 0;
  for (size_t k = 0; k < nrel; k++) {
    double us = st->rows[rel[k]].total_us;
    sum += us;
    if (us > largest) largest = us;
  }
  return sum - largest;
}

/* Evidence kernels listed: the first related rows above the evidence bar; with components
 * every component kernel (a Confirmed row never shows none). Deviation F17
 * (fuse.evidence_every_counted): every related row, since the row's time counts them all
 * (sglang decode F1 counted a 0.35 ms Q/K copy in its 1.05 ms and listed three kernels). */
static bool fill_evidence(an_fuse_row *r, bool comp, const an_stage_tables *st, const size_t *rel,
                          size_t nrel, const te_settings *set) {
  bool every = set->fuse_evidence_every_counted;
  size_t ev_rows = every ? nrel : (size_t)set->fuse_evidence_rows;
  r->evidence = calloc(ev_rows ? ev_rows : 1, sizeof *r->evidence);
  for (size_t k = 0; r->evidence && k < nrel && r->n_evidence < ev_rows; k++) {
    const an_kernel_row *row = &st->rows[rel[k]];
    if (!every && !comp && row->share_pct < set->fuse_evidence_min_share_pct) continue;
    r->evidence[r->n_evidence++] = (an_fuse_evidence){row->name, row->share_pct, 0, NULL};
  }
  return r->evidence != NULL;
}

/* Current locations: distinct site locations of the related rows, each with how the
 * kernel table shows it (a location some site launches eagerly is a launch location). */
static bool fill_locations(an_fuse_row *r, const an_stage_tables *st, const size_t *rel,
                           size_t nrel, size_t n_locs) {
  r->locations = calloc(n_locs ? n_locs : 1, sizeof *r->locations);
  r->location_kinds = calloc(n_locs ? n_locs : 1, sizeof *r->location_kinds);
  if (!r->locations || !r->location_kinds) return false;
  for (size_t k = 0; k < nrel && r->n_locations < n_locs; k++) {
    const an_kernel_row *row = &st->rows[rel[k]];
    size_t ns = row->entry ? row->entry->n_sites : 0;
    for (size_t s = 0; s < (ns ? ns : 1) && r->n_locations < n_locs; s++) {
      const char *loc = row_location(row, s);
      an_location_kind kind = ns ? row->entry->sites[s].kind : AN_LOCATION_LAUNCH;
      size_t q = 0;
      while (q < r->n_locations && strcmp(r->locations[q], loc) != 0) q++;
      if (q < r->n_locations) {
        if (kind == AN_LOCATION_LAUNCH) r->location_kinds[q] = AN_LOCATION_LAUNCH;
        continue;
      }
      r->locations[r->n_locations] = loc;
      r->location_kinds[r->n_locations++] = kind;
    }
  }
  return true;
}

/* The pieces of a split by role, for the reader (review-1 defect 4): the riders' role when
 * the chain took riders along, then each split group's (the pattern's roles). None
 * without roles or for a fused path in use. False when out of memory. */
static bool fill_roles(an_fuse_row *r, const te_fusion_pattern *p, const fmatch *m) {
  if (!p->n_roles || r->match != AN_FUSION_SPLIT) return true;
  bool riders = false;
  for (size_t k = 0; m->roles && k < m->n_rows; k++) riders |= !strcmp(m->roles[k], "rider");
  riders = riders && p->chain_rider_role;
  r->roles = malloc((p->n_roles + riders) * sizeof *r->roles);
  if (!r->roles) return false;
  if (riders) r->roles[r->n_roles++] = p->chain_rider_role;
  for (size_t g = 0; g < p->n_roles; g++) r->roles[r->n_roles++] = p->roles[g];
  return true;
}

/* The piece the chain's riders feed and its lever (chain.rider_feeds, chain.rider_lever),
 * when the chain took riders along: a split's related rows are its active kernels, then
 * one per split group in group order, then the riders. */
static void fill_fed(an_fuse_row *r, const te_fusion_pattern *p, const fmatch *m,
                     const an_stage_tables *st) {
  if (!p->chain_rider_lever || p->chain_rider_feeds < 0 || r->match != AN_FUSION_SPLIT || !m->roles)
    return;
  size_t active = 0, riders = 0;
  for (size_t k = 0; k < m->n_rows; k++) {
    active += !strcmp(m->roles[k], "active");
    riders += !strcmp(m->roles[k], "rider");
  }
  size_t at = active + (size_t)p->chain_rider_feeds;
  if (!riders || at >= m->n_rows || !strcmp(m->roles[at], "rider")) return;
  r->fed_piece = st->rows[m->rows[at]].name;
  r->fed_lever = p->chain_rider_lever;
}

/* Whether the pattern names what to port on the run's platform (platform_ports): its
 * candidate paths do not serve it. An unknown platform is no port (the trace did not say);
 * the reference has no platform gates (component evidence off: none). */
static bool ports_on(const te_fusion_pattern *p, const an_tables_options *opt) {
  const char *pf = an_platform_id(opt->platform);
  for (size_t i = 0; opt->component_evidence && pf && i < p->n_platform_ports; i++)
    if (!strcmp(p->platform_ports[i].platform, pf)) return true;
  return false;
}

/* The candidate fused paths a row cites: the pattern's paths for the run's framework (its
 * own layer), then the framework-agnostic ones; on a platform they do not serve, what to
 * port there instead (origin port). An owned array of strings borrowed from the rules;
 * false when out of memory. */
static bool fill_candidates(an_fuse_row *r, const te_fusion_pattern *p,
                            const an_tables_options *opt) {
  const char *framework_id = opt->framework_id;
  size_t n = p->n_candidate_paths + p->n_framework_paths + p->n_platform_ports;
  const char **paths = malloc((n ? n : 1) * sizeof *paths);
  if (!paths) return false;
  size_t k = 0;
  /* a fused kernel that runs here is served here, whatever the pack says */
  if (r->match == AN_FUSION_SPLIT && ports_on(p, opt)) {
    for (size_t i = 0; i < p->n_platform_ports; i++)
      if (!strcmp(p->platform_ports[i].platform, an_platform_id(opt->platform)))
        paths[k++] = p->platform_ports[i].text;
    r->origin = AN_FUSION_PORT;
    r->port_platform = opt->platform;
    r->candidate_paths = paths;
    r->n_candidate_paths = k;
    return true;
  }
  for (size_t i = 0; i < p->n_framework_paths; i++)
    if (framework_id && !strcmp(p->framework_paths[i].framework, framework_id))
      paths[k++] = p->framework_paths[i].path;
  for (size_t i = 0; i < p->n_candidate_paths; i++) paths[k++] = p->candidate_paths[i];
  r->candidate_paths = paths;
  r->n_candidate_paths = k;
  return true;
}

/* The fuse row of a matched pattern: share of the related rows, confidence, evidence. */
static bool fill_match(fmatch *m, const te_fusion_pattern *p, const an_stage_tables *st,
                       bool active, bool comp, const te_settings *set,
                       const an_tables_options *opt) {
  an_fuse_row *r = &m->row;
  double rus = 0;
  for (size_t k = 0; k < m->n_rows; k++) rus += st->rows[m->rows[k]].total_us;
  m->priority = p->priority;
  m->span = p->n_split_groups > 0 ? p->n_split_groups : (p->active ? 1 : 0);
  m->pattern = p;
  r->pattern_id = p->id;
  r->pattern_name = p->name;
  r->origin = fusion_origin(p->origin);
  r->match = active ? AN_FUSION_DIRECT : AN_FUSION_SPLIT;
  r->related_us = rus;
  r->share_pct = st->total_us > 0 ? rus / st->total_us * 100.0 : 0;
  r->saving_us = saving_estimate(st, m->rows, m->n_rows, active);
  r->saving_basis = r->saving_us > 0 ? AN_SAVING_PASSES : AN_SAVING_NONE;
  r->confidence = (active || r->share_pct >= p->likely_share_pct) ? AN_CONFIDENCE_CONFIRMED
                                                                  : AN_CONFIDENCE_CANDIDATE;
  if (!fill_candidates(r, p, opt)) return false;
  r->rationale_hint = p->rationale_hint;
  if (p->since_version) { /* review 18 defect 10: the release the path's switch needs */
    r->since_framework = opt->framework_label;
    r->since_version = p->since_version;
    r->since_change = p->since_change;
    r->since_switch = p->since_switch;
  }
  if (!fill_roles(r, p, m)) return false;
  fill_fed(r, p, m, st);
  r->n_related = m->n_rows;
  r->related = malloc((m->n_rows ? m->n_rows : 1) * sizeof *r->related);
  if (!r->related || !fill_evidence(r, comp, st, m->rows, m->n_rows, set) ||
      !fill_locations(r, st, m->rows, m->n_rows, (size_t)set->fuse_locations))
    return false;
  for (size_t k = 0; k < m->n_rows; k++) r->related[k] = st->rows[m->rows[k]].name;
  return true;
}

/* The role each related row plays in match m: the first n_active rows are fused kernels
 * the active matcher hit, the rest the split's components in group order. The pattern's
 * specificity (gates it states) goes with them: both drive the role-aware de-duplication. */
static bool assign_roles(fmatch *m, const te_fusion_pattern *p, size_t n_active) {
  m->roles = malloc((m->n_rows ? m->n_rows : 1) * sizeof *m->roles);
  if (!m->roles) return false;
  for (size_t k = 0; k < m->n_rows; k++)
    m->roles[k] = k < n_active                       ? "active"
                  : k - n_active < p->n_split_groups ? component_label(p, k - n_active)
                                                     : "rider";
  m->gates = (p->n_model_include > 0) + (p->n_dtype > 0) + (p->platform != NULL) + p->require_tp;
  return true;
}

/* ------------------------------------------------------------------ GEMM merges */

/* Whether no sibling's row text hits the pattern's merged matcher (the merged projection
 * already runs there: that run is no opportunity). */
static bool run_unmerged(const te_fusion_pattern *p, const an_merge_run *run, const char **texts,
                         uint8_t *memo) {
  for (size_t s = 0; p->merge_merged && s < run->n; s++) {
    /* memo: per row, 0 not asked, 1 no match, 2 a match (a stage's runs repeat its rows) */
    uint8_t *m = &memo[run->rows[s]];
    if (!*m) {
      const char *text = texts[run->rows[s]];
      *m = te_matcher_match(p->merge_merged, text, strlen(text)) ? 2 : 1;
    }
    if (*m == 2) return false;
  }
  return true;
}

/* Whether run r has the sibling shape sh. */
static bool same_shape(const an_merge_shape *sh, const an_merge_run *r) {
  return sh->m == r->m && sh->k == r->k && sh->n == r->n &&
         sh->dtype == (r->dtype ? r->dtype->id : NULL) &&
         !memcmp(sh->n_out, r->n_out, r->n * sizeof *r->n_out);
}

/* Run r into the row's sibling shapes. */
static void add_shape(an_fuse_row *row, const an_merge_run *r) {
  size_t k = 0;
  while (k < row->n_merge_shapes && !same_shape(&row->merge_shapes[k], r)) k++;
  if (k < row->n_merge_shapes) {
    row->merge_shapes[k].runs++;
    return;
  }
  if (k == AN_MAX_MERGE_SHAPES) {
    row->merge_more++;
    return;
  }
  an_merge_shape *sh = &row->merge_shapes[row->n_merge_shapes++];
  *sh = (an_merge_shape){r->m, r->k, r->n, {0}, r->dtype ? r->dtype->id : NULL, 1};
  memcpy(sh->n_out, r->n_out, r->n * sizeof *r->n_out);
}

/* rel[0..n) by the siblings' time in each row, the largest first (insertion sort: a
 * handful of GEMM kernels), so the evidence lists the rows that hold most of the merge. */
static void sort_by_own(size_t *rel, size_t n, const double *own) {
  for (size_t i = 1; i < n; i++) {
    size_t cur = rel[i], j = i;
    for (; j > 0 && own[rel[j - 1]] < own[cur]; j--) rel[j] = rel[j - 1];
    rel[j] = cur;
  }
}

/* Review 11 defect 7: a merge row holds only its siblings' launches of a GEMM kernel that
 * also runs other GEMMs; each evidence kernel states the share those launches take, so
 * the evidence adds up to at most the row's own share. */
static void own_shares(an_fuse_row *r, const an_stage_tables *st, const size_t *rel, size_t nrel,
                       const double *own, double tol) {
  for (size_t e = 0; e < r->n_evidence; e++)
    for (size_t k = 0; k < nrel; k++)
      if (st->rows[rel[k]].name == r->evidence[e].kernel) {
        /* all of the kernel's launches (to the time tolerance): its share says it */
        if (st->total_us > 0 && own[rel[k]] < st->rows[rel[k]].total_us - tol)
          r->evidence[e].own_pct = own[rel[k]] / st->total_us * 100.0;
        break;
      }
}

/* A merge row's locations are its runs' (review 12 defect 4: hf's merge item pointed at
 * the MLP line, its GEMM kernel's busiest site, which every GEMM of the stage shares): the
 * functions that own the siblings, by the saving their runs hold, the largest first. */
static bool merge_locations(an_fuse_row *row, const an_merge_runs *mr, const te_fusion_pattern *p,
                            const char **texts, uint8_t *memo, size_t cap) {
  double *saved = calloc(mr->n, sizeof *saved); /* per distinct location, at most a run each */
  const char **loc = malloc(mr->n * sizeof *loc);
  size_t n = 0;
  for (size_t i = 0; saved && loc && i < mr->n; i++) {
    const an_merge_run *r = &mr->runs[i];
    if (!r->location || !run_unmerged(p, r, texts, memo)) continue;
    size_t k = 0;
    while (k < n && strcmp(loc[k], r->location) != 0) k++;
    if (k == n) loc[n++] = r->location;
    double best = an_merge_best_rate(mr, r->dtype, r->flops * p->merge_comparable);
    double merged = best > 0 ? r->flops / best : r->us;
    saved[k] += r->us > merged ? r->us - merged : 0;
  }
  bool ok = saved && loc;
  for (size_t i = 1; i < n; i++) /* insertion sort: a handful of functions */
    for (size_t j = i; j > 0 && saved[j - 1] < saved[j]; j--) {
      double t = saved[j];
      saved[j] = saved[j - 1], saved[j - 1] = t;
      const char *l = loc[j];
      loc[j] = loc[j - 1], loc[j - 1] = l;
    }
  if (n) row->n_locations = 0; /* else no run resolved: the kernels' sites stay */
  for (size_t k = 0; k < n && k < cap; k++) {
    row->locations[row->n_locations] = loc[k];
    row->location_kinds[row->n_locations++] = AN_LOCATION_LAUNCH;
  }
  free(saved);
  free(loc);
  return ok;
}

/* A merge pattern's row (fuse_merge.c): the stage's sibling runs that the merged matcher
 * leaves, their time and the saving of one merged GEMM each. Returns false on allocation
 * failure only; *hit says whether m holds a match. */
static bool match_merge(const te_fusion_pattern *p, size_t pi, an_stage_tables *st,
                        const char **texts, bool *mark, const an_tables_options *opt,
                        const te_settings *set, fmatch *m, bool *hit) {
  *hit = false;
  const an_merge_runs *mr = st->merge && pi < st->n_merge ? &st->merge[pi] : NULL;
  if (!mr || !mr->n) return true;
  size_t nrel = 0;
  size_t *rel = malloc((st->n_rows ? st->n_rows : 1) * sizeof *rel);
  double *own = calloc(st->n_rows ? st->n_rows : 1, sizeof *own); /* siblings' time per row */
  uint8_t *memo = calloc(st->n_rows ? st->n_rows : 1, 1);         /* run_unmerged's, per row */
  if (!rel || !own || !memo) {
    free(rel);
    free(own);
    free(memo);
    return false;
  }
  memset(mark, 0, st->n_rows * sizeof *mark);
  an_fuse_row facts = {0};
  double us = 0, saving = 0;
  for (size_t i = 0; i < mr->n; i++) {
    const an_merge_run *r = &mr->runs[i];
    if (!run_unmerged(p, r, texts, memo)) continue;
    for (size_t s = 0; s < r->n; s++) {
      if (!mark[r->rows[s]]) mark[r->rows[s]] = true, rel[nrel++] = r->rows[s];
      own[r->rows[s]] += r->us_of[s];
    }
    double best = an_merge_best_rate(mr, r->dtype, r->flops * p->merge_comparable);
    double merged = best > 0 ? r->flops / best : r->us;
    us += r->us;
    saving += r->us > merged ? r->us - merged : 0;
    if (best > facts.merge_rate_hi) facts.merge_rate_hi = best;
    if (best > 0 && (facts.merge_rate_lo <= 0 || best < facts.merge_rate_lo))
      facts.merge_rate_lo = best;
    add_shape(&facts, r);
  }
  double share = st->total_us > 0 ? us / st->total_us * 100.0 : 0;
  if (!nrel || share < p->min_share_pct) {
    free(rel);
    free(own);
    free(memo);
    return true;
  }
  sort_by_own(rel, nrel, own);
  m->rows = rel;
  m->n_rows = nrel;
  m->roles = malloc(nrel * sizeof *m->roles);
  *hit = true;
  bool ok = m->roles && fill_match(m, p, st, false, true, set, opt);
  if (ok) own_shares(&m->row, st, rel, nrel, own, set->attribution_time_tolerance_us);
  ok = ok && merge_locations(&m->row, mr, p, texts, memo, (size_t)set->fuse_locations);
  free(own);
  free(memo);
  if (!ok) return false;
  for (size_t k = 0; k < nrel; k++) m->roles[k] = "merge";
  an_fuse_row *row = &m->row;
  row->merge = true;
  row->chained_pct = 100.0; /* one stream, launch order: fuse_merge.c's own gate */
  row->related_us = us;
  row->share_pct = share;
  row->saving_us = saving;
  row->saving_basis = AN_SAVING_MERGED;
  row->confidence =
      share >= p->likely_share_pct ? AN_CONFIDENCE_CONFIRMED : AN_CONFIDENCE_CANDIDATE;
  row->n_merge_shapes = facts.n_merge_shapes;
  row->merge_more = facts.merge_more;
  memcpy(row->merge_shapes, facts.merge_shapes, sizeof facts.merge_shapes);
  row->merge_rate_lo = facts.merge_rate_lo;
  row->merge_rate_hi = facts.merge_rate_hi;
  row->merge_comparable = p->merge_comparable;
  return true;
}

/* Whether v is one of list[0..n) (an empty list takes every value). */
static bool takes_dim(const long *list, size_t n, double v) {
  for (size_t i = 0; i < n; i++)
    if ((double)list[i] == v) return true;
  return n == 0;
}

static bool takes_format(const char *const *list, size_t n, const te_dtype *d) {
  for (size_t i = 0; d && i < n; i++)
    if (!strcmp(list[i], d->id)) return true;
  return n == 0;
}

/* The shape gate (shape:) on the kernel row that plays p's gated piece: false when its op
 * states a last dimension or a format the fused path does not take; the facts go to r, and
 * m->shape_unknown gets AN_GATE_SHAPE when no launch of it states shapes. */
static bool shape_gate(const te_fusion_pattern *p, const an_stage_tables *st, size_t row,
                       fmatch *m) {
  const an_piece_shape *ps = st->row_shape ? &st->row_shape[row] : NULL;
  if (!ps || !ps->known) {
    m->shape_unknown = st->row_shape ? AN_GATE_SHAPE : 0;
    return true;
  }
  m->row.piece_last_dim = ps->last_dim;
  m->row.piece_format = ps->dtype ? ps->dtype->id : NULL;
  return takes_dim(p->shape_last_dims, p->n_shape_last_dims, ps->last_dim) &&
         (p->shape_max_last_dim <= 0 || ps->last_dim <= (double)p->shape_max_last_dim) &&
         takes_format(p->shape_formats, p->n_shape_formats, ps->dtype);
}

/* One pattern against a stage's rows: gates, active / split evidence, share bar. Returns
 * false on allocation failure only; *hit says whether m holds a match. */
static bool match_pattern(const te_fusion_pattern *p, const row_hits *rh, size_t pi,
                          an_stage_tables *st, const char **texts, bool *mark,
                          const an_tables_options *opt, const te_settings *set, fmatch *m,
                          bool *hit) {
  *hit = false;
  double chained = 1.0;
  an_chain_layers lay = {0};
  size_t nr = st->n_rows, nrel = 0;
  m->shape_unknown = 0; /* m may hold what an earlier pattern's miss left */
  m->row.piece_last_dim = 0;
  m->row.piece_format = NULL;
  size_t *rel = malloc((nr ? nr : 1) * sizeof *rel);
  if (!rel) return false;
  memset(mark, 0, nr * sizeof *mark);
  /* the active matcher reads kernel names for patterns with evidence (row_hits_fill); every
   * split is proven kernel by kernel once component evidence is on (a pattern without
   * evidence: labels "any", the keyword in the kernel name) */
  bool comp = p->n_evidence && opt->component_evidence;
  bool active = match_active(p, rh, pi, st, mark, rel, &nrel);
  if (active && st->pattern_active) st->pattern_active[pi] = true;
  size_t n_active = nrel;
  bool split = opt->component_evidence
                   ? match_components(p, rh, pi, st, texts, set, mark, rel, &nrel, &chained, &lay)
                   : match_split_legacy(p, rh, pi, st, mark, rel, &nrel);
  double rus = 0;
  for (size_t k = 0; k < nrel; k++) rus += st->rows[rel[k]].total_us;
  double share = st->total_us > 0 ? rus / st->total_us * 100.0 : 0;
  size_t gated_at = n_active + (size_t)(p->shape_piece >= 0 ? p->shape_piece : 0);
  if (!active && split && p->shape_piece >= 0 && gated_at < nrel &&
      !shape_gate(p, st, rel[gated_at], m))
    split = false; /* the fused path does not take this shape or format */
  if ((!active && !split) || (!active && share < p->min_share_pct)) {
    free(rel);
    return true;
  }
  m->rows = rel;
  m->n_rows = nrel;
  *hit = true;
  if (opt->component_evidence && !assign_roles(m, p, n_active)) return false;
  m->row.chained_pct = chained * 100.0;
  m->row.chains = lay.chains;
  m->row.chains_by_frames = lay.by_frames;
  m->row.chains_across_layers = lay.across;
  return fill_match(m, p, st, active, comp || (opt->component_evidence && split), set, opt);
}

/* Whether match m claims a kernel that the accepted match a already holds in the same
 * role. Without roles (component evidence off) any shared kernel is a conflict, as in the
 * reference. With roles, a fused kernel that is one component of a wider split (FlashInfer
 * FusedAddRMSNorm: the active add+RMSNorm kernel and the norm piece of all-reduce +
 * RMSNorm) is no conflict: both rows are true. */
static bool claims_taken_role(const fmatch *m, const fmatch *a) {
  for (size_t k = 0; k < m->n_rows; k++)
    for (size_t q = 0; q < a->n_rows; q++)
      if (m->rows[k] == a->rows[q] &&
          (!m->roles || !a->roles || strcmp(m->roles[k], a->roles[q]) == 0))
        return true;
  return false;
}

/* De-duplication: in priority order (then the wider, then the more specific pattern), a
 * match that claims a kernel in a role an earlier accepted match holds, or whose pattern
 * an earlier one subsumes, is dropped; the rest become the stage's rows. */
/* Whether every kernel of m is held by an accepted match in the same role: m adds no
 * piece (a fused kernel in use is its own role, "active").
 * With fuse.context_gates a match that claims a kernel another row holds in the same role
 * stays when it brings a piece of its own (RoPE + KV-cache write and QK RMSNorm + RoPE
 * share the RoPE kernel, yet are two fusions); one that adds nothing goes. */
static bool adds_nothing(const fmatch *m, const fmatch *ms, const size_t *accepted, size_t na) {
  for (size_t k = 0; k < m->n_rows; k++) {
    bool held = false;
    for (size_t a = 0; a < na && !held; a++)
      for (size_t q = 0; q < ms[accepted[a]].n_rows && !held; q++)
        held =
            ms[accepted[a]].rows[q] == m->rows[k] && !strcmp(ms[accepted[a]].roles[q], m->roles[k]);
    if (!held) return false;
  }
  return true;
}

/* Shown rows go first (ut_stable_partition): a row's index is its printed number (F1, F2,
 * ...), so a row kept only in the JSON report (over its size cap, under the render floor)
 * leaves no gap in the numbers the reader sees. */
static bool fuse_shown(const void *row) { return ((const an_fuse_row *)row)->shown; }

/* The accepted match (index into accepted) that holds kernel row `row`: the one that
 * holds it as its fused kernel in use (role "active": the row that explains it best),
 * else the first in acceptance order (priority, width, specificity). */
static size_t kernel_owner(const fmatch *ms, const size_t *accepted, size_t na, size_t row) {
  size_t first = na;
  for (size_t a = 0; a < na; a++) {
    const fmatch *m = &ms[accepted[a]];
    for (size_t q = 0; q < m->n_rows; q++) {
      if (m->rows[q] != row) continue;
      if (m->roles && !strcmp(m->roles[q], "active")) return a;
      if (first == na) first = a;
    }
  }
  return first;
}

/* Review 15 defect 1: a split's saving is its pieces' time but the largest piece's (the
 * fused kernel still makes that pass), and a piece another row counts (one kernel, one
 * row) is out of this row's Related time: the basis then says how the saving comes from
 * that time. The largest piece another row's: every piece this row counts goes (saving =
 * related; vLLM's fuse_act_padding beside the fused add + RMSNorm in use saves its pad
 * kernel, all of its own time). A smaller piece another row's: it goes too (saving =
 * related + shared - largest; the all-reduce + RMSNorm split whose norm is the in-use
 * fused add + RMSNorm's row). Either names the row that counts the piece. */
static void own_saving(an_fuse_row *r, const fmatch *m, const fmatch *ms, const size_t *accepted,
                       size_t na, size_t a, const an_stage_tables *st) {
  if (r->saving_basis != AN_SAVING_PASSES) return;
  size_t big = 0;
  for (size_t k = 1; k < m->n_rows; k++)
    if (st->rows[m->rows[k]].total_us > st->rows[m->rows[big]].total_us) big = k;
  size_t big_owner = kernel_owner(ms, accepted, na, m->rows[big]);
  const char *other = NULL; /* the row of a shared piece other than the largest */
  for (size_t k = 0; k < m->n_rows && !other; k++) {
    size_t o = kernel_owner(ms, accepted, na, m->rows[k]);
    if (k != big && o != a && o != na) other = st->fuse[o].pattern_id;
  }
  if (other) {
    r->saving_basis = AN_SAVING_PASSES_SHARED;
    r->saving_largest_in = other;
  } else if (big_owner != a && big_owner != na) {
    r->saving_basis = AN_SAVING_PASSES_LARGEST_ELSEWHERE;
    r->saving_largest_in = st->fuse[big_owner].pattern_id;
  }
}

/* Review 5 defect 7: one kernel, one row. Role-aware de-duplication keeps two true rows
 * that share a kernel (vLLM's fuse_act_padding and the fused add + RMSNorm in use both
 * count ck_tile Rmsnorm2dFwd), and each counted its time. The kernel belongs to the row
 * kernel_owner names; every other row leaves its time out of related_us and share_pct
 * (shared_us holds it) and its evidence says which row counts it. */
static void share_kernels(const fmatch *ms, const size_t *accepted, size_t na,
                          an_stage_tables *st) {
  for (size_t a = 0; a < na; a++) {
    const fmatch *m = &ms[accepted[a]];
    an_fuse_row *r = &st->fuse[a];
    for (size_t k = 0; k < m->n_rows; k++) {
      size_t owner = kernel_owner(ms, accepted, na, m->rows[k]);
      if (owner == a || owner == na) continue;
      const an_kernel_row *kr = &st->rows[m->rows[k]];
      r->related_us -= kr->total_us;
      r->shared_us += kr->total_us;
      for (size_t e = 0; e < r->n_evidence; e++)
        if (r->evidence[e].kernel == kr->name)
          r->evidence[e].counted_in = st->fuse[owner].pattern_id;
    }
    r->share_pct = st->total_us > 0 ? r->related_us / st->total_us * 100.0 : 0;
    if (r->shared_us > 0) own_saving(r, m, ms, accepted, na, a, st);
  }
}

/* A merge saves what one wider GEMM does better than its siblings, often little of the
 * time they relate (hta_async's fp32 [1024 x 440] GEMMs: 1.0% related, 0.5% saving): the
 * row is shown, and can be an action, only from the pattern's min_saving_pct of the
 * stage's kernel time (the JSON report keeps it either way). */
static bool saving_clears_bar(const fmatch *m, const an_stage_tables *st) {
  double bar = m->pattern->merge ? m->pattern->merge_min_saving_pct : 0;
  return bar <= 0 || (st->total_us > 0 && m->row.saving_us / st->total_us * 100.0 >= bar);
}

static bool dedupe_matches(fmatch *ms, size_t nm, size_t np, an_stage_tables *st, double render_min,
                           bool new_pieces) {
  qsort(ms, nm, sizeof *ms, cmp_fmatch);
  size_t *accepted = calloc(nm ? nm : 1, sizeof *accepted), na = 0;
  size_t nbcap = np ? np * 8 + 1 : 1, nb = 0;
  const te_fusion_pattern **blocked = calloc(nbcap, sizeof *blocked);
  st->fuse = calloc(nm ? nm : 1, sizeof *st->fuse);
  bool ok = accepted && blocked && st->fuse;
  for (size_t i = 0; ok && i < nm; i++) {
    fmatch *m = &ms[i];
    bool skip = false;
    for (size_t b = 0; b < nb && !skip; b++)
      if (blocked[b] == m->pattern || strcmp(blocked[b]->name, m->pattern->name) == 0) skip = true;
    if (new_pieces && m->roles)
      skip = skip || adds_nothing(m, ms, accepted, na);
    else
      for (size_t a = 0; a < na && !skip; a++) skip = claims_taken_role(m, &ms[accepted[a]]);
    if (skip) continue;
    accepted[na++] = i;
    for (size_t s = 0; s < m->pattern->n_subsumes && nb < nbcap; s++)
      blocked[nb++] = m->pattern->subsumes[s];
    /* a stage over the pattern's size cap keeps the split by design: the row stays in the
     * JSON report (state over-cap) and is not printed */
    m->row.shown = m->row.share_pct >= render_min && m->row.state != AN_FUSE_OVER_CAP &&
                   saving_clears_bar(m, st);
    if (m->row.shown) st->n_fuse_shown++;
    st->fuse[st->n_fuse++] = m->row;
    memset(&m->row, 0, sizeof m->row); /* moved */
  }
  /* shown or not is the pattern's own claim, decided above on its whole related time */
  if (ok && new_pieces) share_kernels(ms, accepted, na, st);
  free(accepted);
  free(blocked);
  if (ok) ut_stable_partition(st->fuse, st->n_fuse, sizeof *st->fuse, fuse_shown);
  return ok;
}

/* What the execution-context gates said of one pattern in one stage. */
typedef struct gate_info {
  unsigned unknown; /* an_gate_fact bits the trace left unknown */
  bool over_cap;    /* every step above the pattern's token cap */
} gate_info;

/* Whether p passes its gates in the stage: the run context's (framework, platform, TP,
 * architecture, model) and, with fuse.context_gates, the stage's execution context. */
static bool stage_gates_pass(const te_fusion_pattern *p, const an_tables_options *opt,
                             const char *model_lc, const an_stage_tables *st, bool context,
                             gate_info *g) {
  if (!pattern_gates_pass(p, opt, model_lc)) return false;
  return !context || an_fuse_context_gates(p, &st->exec, opt, &g->unknown, &g->over_cap);
}

/* Issue 31: a matched row's state. A fused kernel that runs makes it "in use" (never an
 * action); else a stage over the size cap keeps the split by design; else a gate fact the
 * trace left unknown makes the confidence "unknown", never Confirmed. */
static void apply_state(fmatch *m, const gate_info *g, const an_stage_tables *st, long tp) {
  an_fuse_row *r = &m->row;
  const te_fusion_pattern *p = m->pattern;
  bool active = r->match == AN_FUSION_DIRECT;
  r->cap_tokens = p->max_tokens;
  r->step_tokens = st->exec.tokens_min;
  unsigned unknown = g->unknown | m->shape_unknown;
  bool over = g->over_cap;
  (void)an_fuse_message_gate(p, st, m->rows, m->n_rows, tp, &unknown, &over, &r->message_bytes,
                             &r->cap_message_bytes);
  r->fused_in_use = active;
  r->unknown_gates = active ? 0 : unknown;
  r->state = an_fuse_state_of(active, false, over, r->unknown_gates);
  if (r->state == AN_FUSE_GATES_UNKNOWN) r->confidence = AN_CONFIDENCE_UNKNOWN;
  if (r->state != AN_FUSE_OPPORTUNITY && r->state != AN_FUSE_GATES_UNKNOWN) {
    r->saving_us = 0;
    r->saving_basis = AN_SAVING_NONE;
  }
}

/* The fuse table of one stage (docs/reference.md §7.2): every pattern matched, then
 * de-duplicated. Row identity: (name, location, cpu op) are interned in one table, so
 * the row index identifies it within a stage. */
/* Each candidate path's repository (an_fuse_row.candidate_repos): the run framework's for
 * its own paths (framework_paths) and for every path of a pattern gated on it; none for a
 * framework-agnostic pattern's paths or anything else the row cites. False when out of
 * memory. */
static bool fill_repos(an_fuse_row *r, const te_fusion_pattern *p, const an_tables_options *opt) {
  const char *fw = opt->framework_id;
  r->candidate_repos =
      calloc(r->n_candidate_paths ? r->n_candidate_paths : 1, sizeof *r->candidate_repos);
  if (!r->candidate_repos) return false;
  bool own = p->framework && fw && !strcmp(p->framework, fw);
  for (size_t k = 0; k < r->n_candidate_paths; k++) {
    const char *path = r->candidate_paths[k];
    for (size_t i = 0; own && i < p->n_candidate_paths; i++)
      if (path == p->candidate_paths[i]) r->candidate_repos[k] = opt->framework_repository;
    for (size_t i = 0; fw && i < p->n_framework_paths; i++)
      if (path == p->framework_paths[i].path && !strcmp(p->framework_paths[i].framework, fw))
        r->candidate_repos[k] = opt->framework_repository;
  }
  return true;
}

static bool fuse_stage(const te_rules *rules, const an_tables_options *opt, const char *model_lc,
                       an_stage_tables *st) {
  size_t np = te_rules_fusion_count(rules);
  size_t nr = st->n_rows;
  const char **texts = calloc(nr ? nr : 1, sizeof *texts);
  fmatch *ms = calloc(np ? np : 1, sizeof *ms);
  bool *mark = calloc(nr ? nr : 1, sizeof *mark);
  bool *gated = calloc(np ? np : 1, sizeof *gated);
  gate_info *gi = calloc(np ? np : 1, sizeof *gi);
  row_hits rh = {0};
  /* the row texts are only read here: kept apart from the tables' strings and freed */
  ut_arena text_tab = {0};
  const te_settings *set = te_rules_settings(rules);
  bool context = set->fuse_context_gates && opt->component_evidence;
  if (context) st->pattern_active = calloc(np ? np : 1, sizeof *st->pattern_active);
  bool ok = texts && ms && mark && gated && gi && (!context || st->pattern_active);
  size_t nm = 0;
  ut_buf line = {0};
  for (size_t i = 0; ok && i < nr; i++) {
    texts[i] = match_subject(&text_tab, &line, &st->rows[i]);
    if (!texts[i]) ok = false;
  }
  ut_buf_free(&line);
  for (size_t pi = 0; ok && pi < np; pi++)
    gated[pi] = stage_gates_pass(te_rules_fusion(rules, pi), opt, model_lc, st, context, &gi[pi]);
  if (ok) ok = row_hits_build(&rh, rules, gated, opt, st, texts);
  for (size_t pi = 0; ok && pi < np; pi++) {
    bool hit = false;
    if (!gated[pi]) continue;
    ms[nm].order = nm;
    const te_fusion_pattern *p = te_rules_fusion(rules, pi);
    ok = p->merge ? match_merge(p, pi, st, texts, mark, opt, set, &ms[nm], &hit)
                  : match_pattern(p, &rh, pi, st, texts, mark, opt, set, &ms[nm], &hit);
    if (hit && context) apply_state(&ms[nm], &gi[pi], st, opt->tp_size);
    if (hit && ok) ok = fill_repos(&ms[nm].row, p, opt);
    if (hit) nm++;
  }
  if (ok) ok = dedupe_matches(ms, nm, np, st, set->fuse_render_min_share_pct, context);
  for (size_t i = 0; i < nm; i++) {
    free(ms[i].rows);
    free(ms[i].roles);
    fuse_row_free(&ms[i].row);
  }
  if (!ok && nm < np) { /* a failed match may hold a half-filled row */
    free(ms[nm].rows);
    free(ms[nm].roles);
    fuse_row_free(&ms[nm].row);
  }
  free(ms);
  free(mark);
  free(gated);
  free(gi);
  free(texts);
  ut_arena_free(&text_tab);
  row_hits_free(&rh);
  return ok;
}

/* ------------------------------------------------------------------ build */

an_stage_tables *an_tables_stage(const an_tables *t, const char *id) {
  for (size_t s = 0; s < t->n_stages; s++)
    if (!strcmp(t->stages[s].stage->id, id)) return &t->stages[s];
  return NULL;
}

void an_fuse_per_step(an_stage_tables *t, const an_stage_timeline *tl) {
  double in_steps = 0;
  for (size_t i = 0; i < t->n_rows; i++) in_steps += t->rows[i].steps_us;
  double in_step = t->total_us > 0 ? in_steps / t->total_us : 1;
  double per = tl && tl->total.span_ns > 0 ? 1.0 / (double)(tl->n_steps ? tl->n_steps : 1) : 1;
  if (!tl || tl->total.span_ns <= 0) in_step = 1;
  for (size_t i = 0; i < t->n_fuse; i++)
    t->fuse[i].saving_step_us = t->fuse[i].saving_us * in_step * per;
}

void an_tables_free(an_tables *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n_stages; i++) {
    if (t->stages[i].seq) an_fuse_seq_free(t->stages[i].seq);
    free(t->stages[i].seq);
    free(t->stages[i].pattern_active);
    free(t->stages[i].msg_bytes);
    free(t->stages[i].row_shape);
    for (size_t p = 0; t->stages[i].merge && p < t->stages[i].n_merge; p++)
      an_merge_runs_free(&t->stages[i].merge[p]);
    free(t->stages[i].merge);
    free(t->stages[i].rows);
    free(t->stages[i].site_pool);
    for (size_t k = 0; k < t->stages[i].n_fuse; k++) fuse_row_free(&t->stages[i].fuse[k]);
    free(t->stages[i].fuse);
  }
  free(t->stages);
  an_strtab_destroy(t->strings);
  memset(t, 0, sizeof *t);
}

/* The oi-th stage in te_stage order (order field, then declaration order), or NULL. */
static const te_stage *stage_in_order(const te_rules *rules, size_t oi) {
  size_t n_st = te_rules_stage_count(rules);
  for (size_t s = 0; s < n_st; s++) {
    const te_stage *c = te_rules_stage(rules, s);
    size_t before = 0;
    for (size_t u = 0; u < n_st; u++) {
      const te_stage *d = te_rules_stage(rules, u);
      if (d->order < c->order || (d->order == c->order && u < s)) before++;
    }
    if (before == oi) return c;
  }
  return NULL;
}

/* Index of kernel event e among its trace's kernel events. */
static size_t event_index(const an_trace_view *v, const tr_event *e) {
  size_t n = 0;
  return (size_t)(e - tr_trace_events(v->trace, TR_KIND_KERNEL, &n));
}

/* One stage's kernels aggregated by canonical name (total_us descending), the stage's
 * kernel time, and the aggregate of each kernel in the order the views list them (the
 * chain gate's input: ev_agg holds sorted positions once ev_rows ran). */
typedef struct stage_aggs {
  agg *ag;
  size_t na;
  double total;
  uint32_t *ev_agg;
  size_t n_ev;
} stage_aggs;

static void stage_aggs_free(stage_aggs *a) {
  free(a->ag);
  free(a->ev_agg);
  memset(a, 0, sizeof *a);
}

/* ev_agg held first-seen aggregate indices; after the sort they become row positions. */
static an_status ev_rows(stage_aggs *a) {
  uint32_t *pos = malloc((a->na ? a->na : 1) * sizeof *pos);
  if (!pos) {
    stage_aggs_free(a);
    return AN_ERR_NOMEM;
  }
  for (size_t i = 0; i < a->na; i++) pos[a->ag[i].first] = (uint32_t)i;
  for (size_t k = 0; k < a->n_ev; k++) a->ev_agg[k] = pos[a->ev_agg[k]];
  free(pos);
  return AN_OK;
}

/* The kernels of one stage of every view, aggregated by canonical name in first-seen
 * order, into out (stage_aggs_free). steps (parallel to views, or NULL): each aggregate's
 * time inside counted steps. */
static an_status aggregate_stage(const an_trace_view *views, const an_steps *steps, size_t n_views,
                                 const te_stage *stage, const an_kernel_map *kmap, an_strtab *st,
                                 stage_aggs *out) {
  size_t cap = 0;
  for (size_t v = 0; v < n_views; v++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[v], stage->id);
    if (sk) cap += sk->n;
  }
  memset(out, 0, sizeof *out);
  if (!cap) return AN_OK;
  agg *ag = calloc(cap, sizeof *ag);
  uint32_t *agg_of = calloc(an_kernel_map_name_count(kmap) + 1, sizeof *agg_of); /* id: index + 1 */
  out->ev_agg = malloc(cap * sizeof *out->ev_agg);
  uint32_t na = 0;
  double *total = &out->total;
  an_status rc = ag && agg_of && out->ev_agg ? AN_OK : AN_ERR_NOMEM;
  for (size_t v = 0; rc == AN_OK && v < n_views; v++) {
    const an_stage_kernels *sk = an_trace_view_stage(&views[v], stage->id);
    for (size_t i = 0; sk && rc == AN_OK && i < sk->n; i++) {
      const tr_event *e = sk->kernels[i];
      /* the map of these views canonicalised every kernel name: a miss is a caller's
       * error (other views), not something to paper over with a second spelling */
      uint32_t id = an_kernel_map_name_id(kmap, v, views[v].trace, e->name);
      if (id == AN_KMAP_NO_NAME) {
        rc = AN_ERR_ARGS;
        break;
      }
      agg *a = agg_of[id] ? &ag[agg_of[id] - 1] : &ag[na];
      if (!agg_of[id]) {
        a->name = an_kernel_map_canonical(kmap, v, views[v].trace, e->name);
        a->id = id;
        /* most names are their own canonical form: share the map's copy then */
        const char *raw = tr_str_get(views[v].trace, e->name);
        a->raw = strcmp(raw, a->name) == 0 ? a->name : an_strtab_cstr(st, raw);
        a->first = na;
        agg_of[id] = ++na;
      }
      if (!a->raw) {
        rc = AN_ERR_NOMEM;
        break;
      }
      double dur = tr_event_dur(views[v].trace, e);
      out->ev_agg[out->n_ev++] = (uint32_t)(a - ag);
      a->total += dur;
      if (!steps || an_steps_kernel_counted(&steps[v], event_index(&views[v], e))) a->steps += dur;
      a->launches++;
      if (dur > a->max) a->max = dur;
      *total += dur;
    }
  }
  free(agg_of);
  if (rc != AN_OK) {
    free(ag);
    stage_aggs_free(out);
    return rc;
  }
  qsort(ag, na, sizeof *ag, cmp_agg);
  out->ag = ag;
  out->na = na;
  return ev_rows(out);
}

/* The rows of one stage from its aggregates: share, category, map entry, shown sites,
 * whether the row clears --kernel-table-limit and the share bar. */
static an_status fill_rows(an_stage_tables *st, const agg *ag, size_t na,
                           const an_kernel_map *mapping, const an_kernel_map *formal_payload,
                           const te_rules *rules, const an_tables_options *opt) {
  size_t sites_cap = (size_t)te_rules_settings(rules)->kernel_table_sites_shown;
  const te_matcher *xpu = te_rules_matcher(rules, "xpu_launch");
  an_loc_memo preferred; /* the sites' display locations are interned by the map */
  st->rows = calloc(na ? na : 1, sizeof *st->rows);
  st->site_pool = calloc(na * sites_cap + 1, sizeof *st->site_pool);
  if (!st->rows || !st->site_pool) return AN_ERR_NOMEM;
  an_loc_memo_init(&preferred, rules);
  st->n_rows = na;
  for (size_t i = 0; i < na; i++) {
    an_kernel_row *r = &st->rows[i];
    r->name = ag[i].name;
    r->raw_name = ag[i].raw;
    r->total_us = ag[i].total;
    r->steps_us = ag[i].steps;
    r->launches = ag[i].launches;
    r->max_us = ag[i].max;
    r->share_pct = st->total_us > 0 ? ag[i].total / st->total_us * 100.0 : 0;
    /* the map of these kernels decided each name's class once */
    r->category = an_kernel_map_name_category(formal_payload, ag[i].id, &r->kind);
    /* one map on both sides: the row's name id is the map's, the entry found by it (the
     * lookup hashed the name again); else (or without an exact entry) the relaxed lookup */
    r->entry = mapping && mapping == formal_payload && st->stage->id
                   ? an_kernel_map_find_id(mapping, st->stage->id, ag[i].id)
                   : NULL;
    if (!r->entry) r->entry = an_kernel_map_lookup(mapping, st->stage->id, r->name);
    if (!r->entry && formal_payload)
      r->entry = an_kernel_map_find(formal_payload, st->stage->id, r->name);
    choose_sites(rules, &preferred, r, sites_cap, &st->site_pool[i * sites_cap]);
    bool in_limit = opt->kernel_table_limit <= 0 || (long)i < opt->kernel_table_limit;
    r->shown = in_limit && r->share_pct >= opt->min_share_pct;
    if (r->shown) {
      st->n_shown++;
      if (xpu && te_matcher_match(xpu, r->name, strlen(r->name))) st->xpu = true;
    }
  }
  an_loc_memo_free(&preferred);
  return AN_OK;
}

/* What the fusion gates read of a stage (fuse.context_gates): its execution facts and
 * its kernels stream by stream for the chain gate. */
static an_status stage_context(an_stage_tables *st, const an_trace_view *views,
                               const an_steps *steps, size_t n_views, const stage_aggs *sa,
                               const te_rules *rules, an_strtab *strings) {
  if (!steps) return AN_OK;
  st->exec = an_exec_facts_of_stage(views, steps, n_views, st->stage, rules);
  st->seq = calloc(1, sizeof *st->seq);
  st->msg_bytes = an_fuse_message_bytes(views, n_views, st, sa->ev_agg, sa->n_ev, rules);
  if (!st->seq || !st->msg_bytes ||
      !an_fuse_seq_build(st->seq, views, n_views, st->stage, sa->ev_agg, sa->n_ev, rules, strings))
    return AN_ERR_NOMEM;
  size_t np = te_rules_fusion_count(rules);
  bool shapes = false;
  for (size_t pi = 0; pi < np; pi++) shapes |= te_rules_fusion(rules, pi)->shape_piece >= 0;
  /* the shape gate and the GEMM merges read the same ops' shapes: read once per stage */
  an_op_shapes *memo = an_op_shapes_create(rules);
  an_status rc = memo ? AN_OK : AN_ERR_NOMEM;
  if (rc == AN_OK && shapes &&
      !(st->row_shape = an_fuse_row_shapes(views, n_views, st, sa->ev_agg, sa->n_ev, rules, memo)))
    rc = AN_ERR_NOMEM;
  if (rc == AN_OK && !(st->merge = calloc(np ? np : 1, sizeof *st->merge))) rc = AN_ERR_NOMEM;
  if (rc == AN_OK) st->n_merge = np;
  for (size_t pi = 0; rc == AN_OK && pi < np; pi++) {
    const te_fusion_pattern *p = te_rules_fusion(rules, pi);
    if (p->merge && !an_fuse_merge_runs(views, n_views, st->stage, sa->ev_agg, sa->n_ev, rules, p,
                                        memo, strings, &st->merge[pi]))
      rc = AN_ERR_NOMEM;
  }
  an_op_shapes_destroy(memo);
  return rc;
}

/* The steps of every view (analysis/steps.h) when the fusion gates read the execution
 * context and the caller lent none (the pipeline lends its own), else *out stays NULL. */
static an_status views_steps(const an_trace_view *views, size_t n_views, const te_rules *rules,
                             const an_steps *lent, an_steps **out) {
  *out = NULL;
  if (lent || !te_rules_settings(rules)->fuse_context_gates) return AN_OK;
  an_steps *s = calloc(n_views ? n_views : 1, sizeof *s);
  an_status rc = s ? AN_OK : AN_ERR_NOMEM;
  for (size_t v = 0; rc == AN_OK && v < n_views; v++) rc = an_steps_build(&views[v], rules, &s[v]);
  if (rc != AN_OK) {
    for (size_t v = 0; s && v < n_views; v++) an_steps_free(&s[v]);
    free(s);
    return rc;
  }
  *out = s;
  return AN_OK;
}

/* A split row whose pattern's fused kernel runs in another stage of the run: that
 * stage takes the fused path, this one keeps the split on purpose (a size cap such as
 * SGLang's token cap of the all-reduce fusion), so it is no opportunity. */
static void fused_elsewhere(an_tables *t, const te_rules *rules) {
  size_t np = te_rules_fusion_count(rules);
  for (size_t i = 0; i < t->n_stages; i++)
    for (size_t f = 0; f < t->stages[i].n_fuse; f++) {
      an_fuse_row *r = &t->stages[i].fuse[f];
      if (r->fused_in_use || !t->stages[i].pattern_active) continue;
      for (size_t j = 0; j < t->n_stages && !r->fused_in_use; j++)
        for (size_t pi = 0; j != i && t->stages[j].pattern_active && pi < np; pi++)
          if (t->stages[j].pattern_active[pi] &&
              !strcmp(te_rules_fusion(rules, pi)->id, r->pattern_id))
            r->fused_in_use = true;
      if (r->fused_in_use) {
        r->state = AN_FUSE_IN_USE_ELSEWHERE;
        r->saving_us = 0;
        r->saving_basis = AN_SAVING_NONE;
        r->saving_largest_in = NULL;
      }
    }
}

an_status an_tables_build(const an_trace_view *views, size_t n_views, const an_kernel_map *mapping,
                          const an_kernel_map *formal_payload, const te_rules *rules,
                          const an_tables_options *opt, an_tables *out) {
  memset(out, 0, sizeof *out);
  /* every category comes from the packs; there is no built-in label */
  if (!te_rules_classifier(rules, "kernel")) return AN_ERR_RULES;
  size_t n_st = te_rules_stage_count(rules);
  bool nomem = false;
  char *model_lc = lower_dup(opt->model_path, &nomem);
  out->strings = an_strtab_create();
  out->stages = calloc(n_st + 1, sizeof *out->stages);
  /* stage blocks in the order the views list them, merged by stage id, then sorted */
  an_status rc = (!out->strings || !out->stages || nomem) ? AN_ERR_NOMEM : AN_OK;
  if (rc == AN_OK && !formal_payload) rc = AN_ERR_ARGS;
  an_steps *own = NULL; /* each view's steps when the caller lent none (fusion gates) */
  if (rc == AN_OK) rc = views_steps(views, n_views, rules, opt->steps, &own);
  const an_steps *steps =
      te_rules_settings(rules)->fuse_context_gates ? (opt->steps ? opt->steps : own) : NULL;
  for (size_t oi = 0; rc == AN_OK && oi < n_st; oi++) {
    const te_stage *stage = stage_in_order(rules, oi);
    stage_aggs sa = {0};
    if (stage)
      rc = aggregate_stage(views, opt->steps, n_views, stage, formal_payload, out->strings, &sa);
    if (rc != AN_OK || !sa.ag) continue;
    an_stage_tables *st = &out->stages[out->n_stages++];
    st->stage = stage;
    st->total_us = sa.total;
    rc = fill_rows(st, sa.ag, sa.na, mapping, formal_payload, rules, opt);
    /* the rows hold what the context needs of the aggregates: freed before it */
    free(sa.ag);
    sa.ag = NULL;
    if (rc == AN_OK) rc = stage_context(st, views, steps, n_views, &sa, rules, out->strings);
    stage_aggs_free(&sa);
  }
  for (size_t i = 0; rc == AN_OK && i < out->n_stages; i++) {
    if (!fuse_stage(rules, opt, model_lc, &out->stages[i])) rc = AN_ERR_NOMEM;
    if (out->stages[i].seq) an_fuse_seq_release(out->stages[i].seq);
  }
  if (rc == AN_OK) fused_elsewhere(out, rules);
  for (size_t v = 0; own && v < n_views; v++) an_steps_free(&own[v]);
  free(own);
  free(model_lc);
  if (rc != AN_OK) an_tables_free(out);
  return rc;
}

/* ------------------------------------------------------------------ explain */

/* One component of an explanation: the kernel match_components would take, or why none. */
static an_explain_component explain_component(const te_fusion_pattern *p, size_t g, bool comp,
                                              const an_kernel_row *rows, size_t nr,
                                              const char **texts, bool *mark) {
  const char *label = comp ? component_label(p, g) : NULL;
  an_explain_component c = {label, NULL, 0, AN_EXPLAIN_NO_CATEGORY, 0};
  bool any = comp && strcmp(label, "any") == 0;
  bool fits = false, hit = false;
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < nr; i++) {
    if (comp && !fits_component(label, &rows[i])) continue;
    fits = true;
    bool m = any ? name_matches(p->split_groups[g], &rows[i])
                 : te_matcher_match(p->split_groups[g], texts[i], strlen(texts[i]));
    if (!m) continue;
    hit = true;
    if (!mark[i] && (best == SIZE_MAX || rows[i].total_us > rows[best].total_us)) best = i;
  }
  c.why = best != SIZE_MAX ? AN_EXPLAIN_FILLED
          : hit            ? AN_EXPLAIN_TAKEN
          : fits           ? AN_EXPLAIN_NO_MATCH
                           : AN_EXPLAIN_NO_CATEGORY;
  if (best != SIZE_MAX) {
    if (comp) mark[best] = true; /* one kernel per component */
    c.kernel = rows[best].name;
    c.us = rows[best].total_us;
    c.row = best;
  }
  return c;
}

/* The gates of p against the report's run context, into out (dtype is decided later). */
static bool explain_gates(const te_rules *rules, const an_report *rep, const te_fusion_pattern *p,
                          an_fuse_explain *out, an_tables_options *opt) {
  const an_run_context *c = &rep->run.context;
  bool nomem = false;
  char *model_lc = lower_dup(c->model.value, &nomem);
  *opt =
      (an_tables_options){.framework_id = rep->run.framework.id,
                          .tp_size = c->tp_size.value,
                          .platform = c->platform.value,
                          .arch = c->arch.value,
                          .component_evidence = te_rules_settings(rules)->fuse_component_evidence};
  out->framework_ok =
      !p->framework || !opt->framework_id || !strcmp(p->framework, opt->framework_id);
  out->platform_ok = pattern_gates_pass(&(te_fusion_pattern){.platform = p->platform}, opt, NULL);
  out->tp_ok = !p->require_tp || opt->tp_size >= p->min_tp_size;
  out->arch_ok = arch_gate_pass(p, opt);
  out->model_ok = model_gate(p, model_lc);
  free(model_lc);
  out->by_component = opt->component_evidence && (p->n_evidence || p->n_split_groups);
  return !nomem;
}

/* Whether a reported row of the stage holds kernel name k (a related kernel). */
static bool row_holds(const an_fuse_row *r, const char *k) {
  for (size_t i = 0; k && i < r->n_related; i++)
    if (strcmp(r->related[i], k) == 0) return true;
  return false;
}

/* Whether the pattern with id `id` subsumes p. */
static bool subsumes_pattern(const te_rules *rules, const char *id, const te_fusion_pattern *p) {
  for (size_t i = 0; i < te_rules_fusion_count(rules); i++) {
    const te_fusion_pattern *q = te_rules_fusion(rules, i);
    if (strcmp(q->id, id) != 0) continue;
    for (size_t k = 0; k < q->n_subsumes; k++)
      if (q->subsumes[k] == p) return true;
  }
  return false;
}

/* A pattern that matched but has no row was dropped by de-duplication: by a reported
 * row whose pattern subsumes it, else by one that holds one of its kernels. */
static void explain_dedupe(const te_rules *rules, const an_stage_report *st,
                           const te_fusion_pattern *p, an_fuse_explain *out, bool matched) {
  for (size_t i = 0; i < st->n_fuse; i++)
    if (strcmp(st->fuse[i].pattern_id, p->id) == 0) return;
  out->dropped = matched;
  for (size_t i = 0; matched && i < st->n_fuse && !out->dropped_by; i++)
    if (subsumes_pattern(rules, st->fuse[i].pattern_id, p))
      out->dropped_by = st->fuse[i].pattern_id;
  for (size_t i = 0; matched && i < st->n_fuse && !out->dropped_by; i++) {
    bool holds = row_holds(&st->fuse[i], out->active);
    for (size_t g = 0; g < out->n_components && !holds; g++)
      holds = row_holds(&st->fuse[i], out->components[g].kernel);
    if (holds) out->dropped_by = st->fuse[i].pattern_id;
  }
}

/* The stage's row of p, when it has one, states what the chain gate and the execution
 * context decided: a split row's pieces are its related kernels in group order, its
 * saving the row's (0 for a fused path in use or a stage over the size cap). */
static void explain_from_row(const an_stage_report *st, const te_fusion_pattern *p,
                             an_fuse_explain *out) {
  for (size_t i = 0; i < st->n_fuse && !out->row; i++)
    if (!strcmp(st->fuse[i].pattern_id, p->id)) out->row = &st->fuse[i];
  const an_fuse_row *r = out->row;
  /* the pieces first, then the chain's riders (the CLI lists them from the row) */
  if (!r || r->match != AN_FUSION_SPLIT || r->n_related < out->n_components) return;
  for (size_t g = 0; g < out->n_components; g++)
    for (size_t k = 0; k < st->n_kernels; k++)
      if (!strcmp(st->kernels[k].name, r->related[g])) {
        an_explain_component *c = &out->components[g];
        *c = (an_explain_component){c->label, st->kernels[k].name, st->kernels[k].total_us,
                                    AN_EXPLAIN_FILLED, k};
        break;
      }
  out->related_us = r->related_us;
  out->saving_us = r->saving_us;
}

bool an_fuse_explain_stage(const te_rules *rules, const an_report *rep, const an_stage_report *st,
                           const te_fusion_pattern *p, an_fuse_explain *out) {
  memset(out, 0, sizeof *out);
  an_tables_options opt;
  bool ok = explain_gates(rules, rep, p, out, &opt);
  bool dtype_on = opt.component_evidence && p->n_dtype;
  out->stage_total_us = st->kernel_total_us;
  size_t nr = st->n_kernels, ng = p->n_split_groups;
  ut_arena strings = {0};
  const char **texts = calloc(nr ? nr : 1, sizeof *texts);
  bool *mark = calloc(nr ? nr : 1, sizeof *mark);
  out->components = calloc(ng ? ng : 1, sizeof *out->components);
  ok = ok && texts && mark && out->components;
  ut_buf line = {0};
  for (size_t i = 0; ok && i < nr; i++)
    ok = (texts[i] = match_subject(&strings, &line, &st->kernels[i]));
  ut_buf_free(&line);
  bool gates = out->framework_ok && out->platform_ok && out->tp_ok && out->model_ok && out->arch_ok;
  bool by_name = (p->n_evidence && opt.component_evidence) || dtype_on;
  for (size_t i = 0; ok && gates && p->active && !out->active && i < nr; i++)
    if (by_name ? name_matches(p->active, &st->kernels[i]) &&
                      (!dtype_on || dtype_fits(p, &st->kernels[i]))
                : te_matcher_match(p->active, texts[i], strlen(texts[i])))
      out->active = st->kernels[i].name;
  out->n_components = ok ? ng : 0;
  double sum = 0, largest = 0;
  bool format = false;
  for (size_t g = 0; g < out->n_components; g++) {
    an_explain_component *x = &out->components[g];
    if (!gates) {
      *x = (an_explain_component){out->by_component ? component_label(p, g) : NULL, NULL, 0,
                                  AN_EXPLAIN_GATE, 0};
      continue;
    }
    *x = explain_component(p, g, out->by_component, st->kernels, nr, texts, mark);
    if (x->why == AN_EXPLAIN_FILLED && dtype_fits(p, &st->kernels[x->row])) format = true;
    sum += x->us;
    if (x->us > largest) largest = x->us;
  }
  out->dtype_ok = !dtype_on || out->active || format;
  out->dtype_checked = gates;
  out->related_us = sum;
  bool all = ng > 0 && out->dtype_ok;
  for (size_t g = 0; g < out->n_components; g++)
    if (out->components[g].why != AN_EXPLAIN_FILLED) all = false;
  out->saving_us = (all && !out->active && ng > 1) ? sum - largest : 0;
  bool matched = gates && out->dtype_ok &&
                 (out->active || (all && sum >= p->min_share_pct / 100.0 * st->kernel_total_us));
  explain_dedupe(rules, st, p, out, matched);
  explain_from_row(st, p, out);
  free(mark);
  free(texts);
  ut_arena_free(&strings);
  return ok;
}

void an_fuse_explain_free(an_fuse_explain *e) {
  if (!e) return;
  free(e->components);
  memset(e, 0, sizeof *e);
}
