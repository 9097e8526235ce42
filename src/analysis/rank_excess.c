/* analysis/rank_excess.c - the work a straggler carries beyond its peers, read from the
 * imbalance table by mechanism (ranks_internal.h; docs/scale-out.md "How the Ranks section
 * decides").
 *
 * The imbalance rows whose longest rank is a group's straggler name the kernels it runs
 * longer. Their families (the kernel kind: every embedding kernel together, every sort;
 * a kernel whose kind is only its category stands alone, e.g. one copy direction) are
 * compared whole across the group, each member's family time against the straggler's: a
 * sharding plan that gives one rank bigger tables moves work between kernel variants
 * (weighted and unweighted lookups), so a family nets out what one kernel alone would
 * overstate. The straggler's excess over the others' median is the work it carries.
 *
 * Work imbalance is the cause when that excess explains ranks.cause_min_share_pct of how
 * late the straggler arrives and the straggler's other kernels keep pace with its peers'
 * (within ranks.imbalance_pct): a GPU that is slow at everything is a GPU cause, not an
 * imbalance. It is read from kernel totals, so it holds where per-step compute cannot be
 * compared (a sampled trace that dropped collectives its peers ran).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/ranks_internal.h"
#include "util/sort.h"
#include "util/vec.h"

/* A kernel family: a finer kind, or one kernel. */
typedef struct family {
  const char *key; /* the kind (the rules' string) or the canonical name (a part's) */
  bool is_kernel;
  const char *category;
} family;

static family family_of(const te_rules *rules, const an_rank_kernel *k) {
  const char *kind = te_rules_kind(rules, "kernel", k->name);
  bool finer = kind && k->category && *k->category && strcmp(kind, k->category) != 0;
  return (family){finer ? kind : k->name, !finer, k->category};
}

static bool same_family(const family *a, const family *b) {
  return a->is_kernel == b->is_kernel && strcmp(a->key, b->key) == 0;
}

/* Each part's kernels' families, read once per part where a straggler's families are
 * weighed (te_rules_kind runs the pack's matchers: per family, rank and kernel it was
 * families x ranks x kernels of them); fam[i] NULL until parts[i] is first weighed. */
typedef struct memo {
  an_rank_part *const *parts;
  const te_rules *rules;
  family **fam;
} memo;

/* parts[i]'s families, parallel to its kernels (communication: none); NULL when out of
 * memory. */
static const family *families(memo *m, size_t i) {
  if (m->fam[i]) return m->fam[i];
  const an_rank_part *p = m->parts[i];
  family *v = calloc(p->names.n ? p->names.n : 1, sizeof *v);
  for (size_t k = 0; v && k < p->names.n; k++)
    if (p->kern[k].cls != AN_RANK_COMM) v[k] = family_of(m->rules, &p->kern[k]);
  return m->fam[i] = v;
}

/* Instances per step of op `launcher` that launched the part's kernels (0: none ran). */
static double launcher_rate(const an_rank_part *p, const char *launcher) {
  for (size_t k = 0; k < p->names.n; k++)
    if (p->kern[k].launcher && strcmp(p->kern[k].launcher, launcher) == 0)
      return (double)p->kern[k].launcher_ops / (double)(p->n_steps ? p->n_steps : 1);
  return 0;
}

/* Whether kernel k of parts[i] is a sampling gap of the group's members mem[0..n): a member
 * lacks it and that member's CPU side launched it, its launching op run at least as often
 * a step (the sample kept the op's launches, dropped this kernel's). A member whose ops
 * never launch it runs another share of the work: the sharding plan (a rank with more
 * tables runs the weighted lookups too), which counts. Unknown launchers: a gap. */
static bool sampling_gap(const memo *m, const size_t *mem, size_t n, size_t i,
                         const an_rank_kernel *k) {
  const an_rank_part *p = m->parts[i];
  double mine = k->launcher ? (double)k->launcher_ops / (double)(p->n_steps ? p->n_steps : 1) : 0;
  for (size_t r = 0; r < n; r++) {
    const an_rank_part *q = m->parts[mem[r]];
    long j = ut_strmap_find(&q->names, k->name, strlen(k->name));
    if (j >= 0 && q->kern[j].total_us > 0) continue; /* it ran there */
    bool known = k->launcher && q->launchers.n;      /* q's launchers read */
    if (!known || launcher_rate(q, k->launcher) >= mine) return true;
  }
  return false;
}

/* The family's kernel time on parts[i] (communication left out: waits, not work) and its
 * longest launch (0: unknown); with `shared` (the group's members, n of them), leaving
 * out the sampling gaps (sampling_gap) into *left. false when out of memory. */
static bool family_us(memo *m, size_t i, const family *f, const size_t *shared, size_t n,
                      double *us, double *longest, double *left) {
  const an_rank_part *p = m->parts[i];
  const family *fam = families(m, i);
  if (!fam) return false;
  double t = 0, top = 0, out = 0;
  for (size_t k = 0; k < p->names.n; k++) {
    if (p->kern[k].cls == AN_RANK_COMM || !same_family(&fam[k], f)) continue;
    if (shared && sampling_gap(m, shared, n, i, &p->kern[k])) {
      out += p->kern[k].total_us;
      continue;
    }
    t += p->kern[k].total_us;
    if (p->kern[k].max_us > top) top = p->kern[k].max_us;
  }
  *us = t;
  *longest = top;
  *left = out;
  return true;
}

/* Whether a trace of group g (members mem) was sampled or filtered to GPU work: each keeps
 * its own subset of the launches. */
static bool sampled_group(const memo *m, const size_t *mem, const an_rank_group *g) {
  for (size_t r = 0; r < g->n_ranks; r++)
    if (m->parts[mem[r]]->filtered) return true;
  return false;
}

/* The stage's parts of group g's ranks (parts are by rank), into members; false when one
 * is missing. */
static bool members_of(an_rank_part *const *parts, size_t n, const an_rank_group *g,
                       size_t *members) {
  for (size_t r = 0; r < g->n_ranks; r++) {
    size_t i = 0;
    while (i < n && parts[i]->rank != g->ranks[r]) i++;
    if (i == n) return false;
    members[r] = i;
  }
  return true;
}

/* What the families of g's imbalance rows weigh: per family, the straggler's time against
 * its peers' median; the straggler's other work and its peers' median of theirs. */
typedef struct weigh {
  an_rank_excess *v;
  size_t n, cap;
  double rest_s, rest_peers; /* the work outside every family kept */
} weigh;

/* Adds family f of g (member s the straggler) unless counted already; false when out of
 * memory. */
static bool add_family(an_rank_owner *o, memo *mm, const size_t *mem, an_rank_group *g, size_t s,
                       const family *f, double *scratch, weigh *w) {
  for (size_t i = 0; i < w->n; i++)
    if (same_family(&(family){w->v[i].family, w->v[i].is_kernel, NULL}, f)) return true;
  double mine = 0, longest = 0, top = 0, mine_left = 0;
  size_t m = 0;
  /* each sample holds its own launches: leave out the kernels a sample dropped */
  bool sampled = sampled_group(mm, mem, g);
  double *left = scratch + g->n_ranks; /* the peers' left out */
  for (size_t r = 0; r < g->n_ranks; r++) {
    double in = 0, out = 0;
    if (!family_us(mm, mem[r], f, sampled ? mem : NULL, g->n_ranks, &in, r == s ? &longest : &top,
                   &out))
      return false;
    if (r == s) {
      mine = in;
      mine_left = out;
    } else {
      left[m] = out;
      scratch[m++] = in;
    }
  }
  double peers = ut_median_f64(scratch, m), peers_left = ut_median_f64(left, m);
  if (mine <= peers) return true;
  const char *key = an_strtab_cstr(o->strings, f->key);
  const char *cat = f->category ? an_strtab_cstr(o->strings, f->category) : NULL;
  if (!key || (f->category && !cat)) return false;
  size_t steps = g->n_steps ? g->n_steps : 1;
  an_rank_excess x = {key,       f->is_kernel, cat, mine, peers, (mine - peers) / (double)steps,
                      mine_left, peers_left};
  /* one launch a sampled trace kept makes the whole difference: the samples differ, the
   * work may not (its peers' samples may have dropped theirs) */
  const double pct = te_rules_settings(mm->rules)->ranks_imbalance_pct;
  if (longest > 0 && sampled && mine - longest <= peers * (1 + pct / 100)) {
    if (!g->n_sampled_out++ || x.per_step_us > g->sampled_out.per_step_us) {
      g->sampled_out = x;
      g->sampled_out_max_us = longest;
    }
    return true;
  }
  an_rank_excess *v = ut_grow(w->v, &w->cap, w->n + 1, sizeof *v);
  if (!v) return false;
  w->v = v;
  v[w->n++] = x;
  return true;
}

/* The straggler's and its peers' (median) work outside the families kept; false when
 * out of memory. */
static bool rest_of(memo *mm, const size_t *mem, const an_rank_group *g, size_t s, double *scratch,
                    weigh *w) {
  size_t m = 0;
  for (size_t r = 0; r < g->n_ranks; r++) {
    const an_rank_part *p = mm->parts[mem[r]];
    const family *fam = families(mm, mem[r]);
    if (!fam) return false;
    double rest = 0;
    for (size_t k = 0; k < p->names.n; k++) {
      if (p->kern[k].cls == AN_RANK_COMM) continue;
      bool kept = false;
      for (size_t i = 0; i < w->n && !kept; i++)
        kept = same_family(&(family){w->v[i].family, w->v[i].is_kernel, NULL}, &fam[k]);
      if (!kept) rest += p->kern[k].total_us;
    }
    if (r == s)
      w->rest_s = rest;
    else
      scratch[m++] = rest;
  }
  w->rest_peers = ut_median_f64(scratch, m);
  return true;
}

static int cmp_excess(const void *pa, const void *pb) {
  const an_rank_excess *a = pa, *b = pb;
  if (a->per_step_us != b->per_step_us) return a->per_step_us > b->per_step_us ? -1 : 1;
  return strcmp(a->family, b->family);
}

/* The excess and cause of group gi (of groups). false when out of memory. */
static bool group_excess(an_rank_owner *o, memo *mm, size_t n, const te_rules *rules,
                         an_rank_group *groups, size_t gi, const an_imbalance_row *imb,
                         size_t n_imb) {
  an_rank_group *g = &groups[gi];
  if (g->verdict != AN_RANK_STRAGGLER || g->n_ranks < 2) return true;
  size_t *mem = malloc(g->n_ranks * sizeof *mem);
  double *scratch = malloc(2 * g->n_ranks * sizeof *scratch); /* add_family: two lists */
  weigh w = {0};
  size_t s = 0;
  bool ok = mem && scratch && members_of(mm->parts, n, g, mem);
  while (ok && g->ranks[s] != g->straggler) s++;
  for (size_t i = 0; ok && i < n_imb; i++) {
    const an_imbalance_row *x = &imb[i];
    if (x->group != gi || x->max_rank != g->straggler) continue;
    long k = ut_strmap_find(&mm->parts[mem[s]]->names, x->kernel, strlen(x->kernel));
    /* a collective's time is wait, no family's work (it weighs nothing) */
    if (k < 0 || mm->parts[mem[s]]->kern[k].cls == AN_RANK_COMM) continue;
    const family *fam = families(mm, mem[s]);
    ok = fam && add_family(o, mm, mem, g, s, &fam[k], scratch, &w);
  }
  if (ok && w.n) ok = rest_of(mm, mem, g, s, scratch, &w);
  if (ok && w.n) {
    qsort(w.v, w.n, sizeof *w.v, cmp_excess);
    for (size_t i = 0; i < w.n; i++) g->excess_per_step_us += w.v[i].per_step_us;
    /* an even split leaves it 1/n of the excess: its peers take the rest */
    g->balanced_excess_per_step_us =
        g->excess_per_step_us * (double)(g->n_ranks - 1) / (double)g->n_ranks;
    ok = an_rank_own(o, w.v);
    g->excess = w.v;
    g->n_excess = w.n;
    w.v = NULL;
    const te_settings *set = te_rules_settings(rules);
    /* the rest of its work keeps pace: not a GPU slow at everything */
    bool pace = w.rest_s <= w.rest_peers * (1 + set->ranks_imbalance_pct / 100);
    double bar = g->delay_per_step_us * set->ranks_cause_min_share_pct / 100;
    if (ok && pace && g->n_steps && g->cause != AN_CAUSE_HOST && g->excess_per_step_us >= bar)
      g->cause = AN_CAUSE_IMBALANCE;
  }
  free(w.v);
  free(mem);
  free(scratch);
  return ok;
}

bool an_rank_excess_cause(an_rank_owner *o, an_rank_part *const *parts, size_t n,
                          const te_rules *rules, an_rank_group *groups, size_t n_groups,
                          const an_imbalance_row *imb, size_t n_imb) {
  memo mm = {parts, rules, calloc(n ? n : 1, sizeof *mm.fam)};
  bool ok = mm.fam != NULL;
  for (size_t g = 0; ok && g < n_groups; g++)
    ok = group_excess(o, &mm, n, rules, groups, g, imb, n_imb);
  for (size_t i = 0; mm.fam && i < n; i++) free(mm.fam[i]);
  free(mm.fam);
  return ok;
}
