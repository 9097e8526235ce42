/*
 * analysis/tables.c - kernel table (5) and fuse table (7.2).
 */
#include "analysis/tables.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kmap_internal.h"

typedef struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s) {
  size_t n = strlen(s);
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->n + n + 1) nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = nc;
  }
  memcpy(b->p + b->n, s, n + 1);
  b->n += n;
}

static void sb_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(sbuf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  sb_add(b, tmp);
}

static const char *sb_intern(an_strtab *st, sbuf *b) {
  if (b->oom) return NULL;
  return an_strtab_intern(st, b->p ? b->p : "", b->n);
}

const char *an_location_func_at(an_strtab *st, const char *loc) {
  const char *sp = strchr(loc, ' ');
  if (!sp || sp == loc || !sp[1]) return an_strtab_cstr(st, loc);
  sbuf b = {0};
  sb_add(&b, sp + 1);
  sb_add(&b, " @ ");
  size_t plen = (size_t)(sp - loc);
  char *path = malloc(plen + 1);
  if (!path) {
    free(b.p);
    return NULL;
  }
  memcpy(path, loc, plen);
  path[plen] = '\0';
  sb_add(&b, path);
  free(path);
  const char *r = sb_intern(st, &b);
  free(b.p);
  return r;
}

/* ------------------------------------------------------------------ kernel rows */

typedef struct agg {
  const char *name;
  double total, max;
  size_t launches;
  size_t first;
} agg;

static int cmp_agg(const void *a, const void *b) {
  const agg *x = a, *y = b;
  if (x->total != y->total) return x->total > y->total ? -1 : 1;
  return x->first < y->first ? -1 : (x->first > y->first ? 1 : 0);
}

/* Sites a row shows: the preferred ones when any, else all; first sites_shown. */
static size_t shown_sites(const te_rules *rules, const an_kmap_entry *e, size_t cap,
                          const an_site **out, size_t *n_candidates) {
  size_t n_pref = 0;
  for (size_t i = 0; i < e->n_sites; i++)
    if (an_location_preferred(rules, e->sites[i].display_location)) n_pref++;
  size_t k = 0;
  *n_candidates = n_pref ? n_pref : e->n_sites;
  for (size_t i = 0; i < e->n_sites && k < cap; i++) {
    if (n_pref && !an_location_preferred(rules, e->sites[i].display_location)) continue;
    out[k++] = &e->sites[i];
  }
  return k;
}

static bool render_cells(an_tables *t, const te_rules *rules, an_kt_row *row, size_t sites_cap) {
  const an_kmap_entry *e = row->entry;
  if (!e) {
    row->location_cell = an_strtab_cstr(t->strings, "unresolved");
    row->cpu_op_cell = an_strtab_cstr(t->strings, "-");
    return row->location_cell && row->cpu_op_cell;
  }
  if (!e->n_sites) {
    row->location_cell = an_strtab_cstr(t->strings, e->best_location);
    row->cpu_op_cell = an_strtab_cstr(t->strings, "-");
    return row->location_cell && row->cpu_op_cell;
  }
  const an_site **sites = malloc((sites_cap ? sites_cap : 1) * sizeof *sites);
  if (!sites) return false;
  size_t n_cand = 0;
  size_t n = shown_sites(rules, e, sites_cap, sites, &n_cand);
  sbuf loc = {0}, ops = {0};
  size_t n_ops = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) sb_add(&loc, "<br>");
    sb_add(&loc, sites[i]->display_location);
    if (n_cand > 1) sb_fmt(&loc, " (site share %.0f%%)", sites[i]->share_pct_within_kernel);
    if (sites[i]->top_cpu_op) {
      if (n_ops++) sb_add(&ops, "<br>");
      sb_add(&ops, sites[i]->top_cpu_op);
    }
  }
  if (!n_ops) sb_add(&ops, "-");
  row->location_cell = sb_intern(t->strings, &loc);
  row->cpu_op_cell = sb_intern(t->strings, &ops);
  free(loc.p);
  free(ops.p);
  free(sites);
  return row->location_cell && row->cpu_op_cell;
}

/* ------------------------------------------------------------------ fuse table */

typedef struct fmatch {
  an_fuse_row row;
  size_t *rows; /* related row indices */
  size_t n_rows;
  int priority;
  size_t span;
  size_t order;
} fmatch;

static int cmp_fmatch(const void *a, const void *b) {
  const fmatch *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->span != y->span) return x->span > y->span ? -1 : 1;
  if (x->n_rows != y->n_rows) return x->n_rows > y->n_rows ? -1 : 1;
  if (x->row.related_us != y->row.related_us) return x->row.related_us > y->row.related_us ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static bool model_gate(const te_fusion_pattern *p, const char *model) {
  if (!p->n_model_include && !p->n_model_exclude) return true;
  if (!model || !*model) return false;
  if (p->n_model_include) {
    bool any = false;
    for (size_t i = 0; i < p->n_model_include && !any; i++) {
      size_t n = strlen(p->model_include[i]);
      char *lt = malloc(n + 1);
      if (!lt) return false;
      for (size_t k = 0; k <= n; k++) lt[k] = (char)tolower((unsigned char)p->model_include[i][k]);
      any = strstr(model, lt) != NULL;
      free(lt);
    }
    if (!any) return false;
  }
  for (size_t i = 0; i < p->n_model_exclude; i++) {
    size_t n = strlen(p->model_exclude[i]);
    char *lt = malloc(n + 1);
    if (!lt) return false;
    for (size_t k = 0; k <= n; k++) lt[k] = (char)tolower((unsigned char)p->model_exclude[i][k]);
    bool hit = strstr(model, lt) != NULL;
    free(lt);
    if (hit) return false;
  }
  return true;
}

static const char *origin_word(te_origin_kind o) {
  return o == TE_ORIGIN_UPSTREAM ? "upstream" : o == TE_ORIGIN_INFLIGHT ? "pending" : "mainline";
}

/* Identity of a row for de-duplication: (name, location, cpu op) are interned in the
 * same table, so the row index identifies it within a stage. */
static bool fuse_stage(an_tables *t, const te_rules *rules, const an_tables_options *opt,
                       const char *model_lc, an_stage_tables *st) {
  size_t np = te_rules_fusion_count(rules);
  size_t nr = st->n_rows;
  const char **texts = calloc(nr ? nr : 1, sizeof *texts);
  fmatch *ms = calloc(np ? np : 1, sizeof *ms);
  bool *mark = calloc(nr ? nr : 1, sizeof *mark);
  bool ok = texts && ms && mark;
  size_t nm = 0;
  const te_settings *set = te_rules_settings(rules);
  double ev_min = set->fuse_evidence_min_share_pct;
  size_t ev_rows = (size_t)set->fuse_evidence_rows;
  size_t n_locs = (size_t)set->fuse_locations;
  double render_min = set->fuse_render_min_share_pct;
  for (size_t i = 0; ok && i < nr; i++) {
    sbuf b = {0};
    sb_add(&b, st->rows[i].name);
    sb_add(&b, " ");
    sb_add(&b, st->rows[i].location_cell);
    sb_add(&b, " ");
    sb_add(&b, st->rows[i].cpu_op_cell);
    texts[i] = sb_intern(t->strings, &b);
    free(b.p);
    if (!texts[i]) ok = false;
  }
  for (size_t pi = 0; ok && pi < np; pi++) {
    const te_fusion_pattern *p = te_rules_fusion(rules, pi);
    if (p->framework && opt->framework_id && strcmp(p->framework, opt->framework_id) != 0) continue;
    if (p->require_tp && opt->tp_size < p->min_tp_size) continue;
    if (!model_gate(p, model_lc)) continue;
    size_t *rel = malloc((nr ? nr : 1) * sizeof *rel);
    if (!rel) {
      ok = false;
      break;
    }
    size_t nrel = 0;
    memset(mark, 0, nr * sizeof *mark);
    bool active = false;
    if (p->active)
      for (size_t i = 0; i < nr; i++)
        if (te_matcher_match(p->active, texts[i], strlen(texts[i]))) {
          active = true;
          if (!mark[i]) {
            mark[i] = true;
            rel[nrel++] = i;
          }
        }
    bool split = p->n_split_groups > 0;
    size_t before_split = nrel;
    for (size_t g = 0; g < p->n_split_groups; g++) {
      bool any = false;
      for (size_t i = 0; i < nr; i++)
        if (te_matcher_match(p->split_groups[g], texts[i], strlen(texts[i]))) {
          any = true;
          if (!mark[i]) {
            mark[i] = true;
            rel[nrel++] = i;
          }
        }
      if (!any) split = false;
    }
    if (!active && !split) {
      free(rel);
      continue;
    }
    if (!split) nrel = before_split; /* split groups only count when all of them hit */
    double rus = 0;
    for (size_t k = 0; k < nrel; k++) rus += st->rows[rel[k]].total_us;
    double share = st->total_us > 0 ? rus / st->total_us * 100.0 : 0;
    if (!active && share < p->min_share_pct) {
      free(rel);
      continue;
    }
    fmatch *m = &ms[nm];
    m->order = nm;
    nm++;
    m->rows = rel;
    m->n_rows = nrel;
    m->priority = p->priority;
    m->span = p->n_split_groups > 0 ? p->n_split_groups : (p->active ? 1 : 0);
    an_fuse_row *r = &m->row;
    r->pattern = p;
    r->related_us = rus;
    r->share_pct = share;
    r->active_match = active;
    r->confidence = (active || share >= p->likely_share_pct) ? "Confirmed" : "Candidate";
    char stbuf[64];
    snprintf(stbuf, sizeof stbuf, "%s %s", origin_word(p->origin), active ? "direct" : "split");
    r->status = an_strtab_cstr(t->strings, stbuf);
    /* evidence */
    sbuf ev = {0};
    size_t ne = 0;
    for (size_t k = 0; k < nrel && ne < ev_rows; k++) {
      const an_kt_row *row = &st->rows[rel[k]];
      if (row->share_pct < ev_min) continue;
      if (ne++) sb_add(&ev, "<br>");
      sb_add(&ev, row->name);
      sb_fmt(&ev, " (%.1f%%)", row->share_pct);
    }
    if (!ne) sb_add(&ev, "-");
    r->evidence = sb_intern(t->strings, &ev);
    free(ev.p);
    /* current locations */
    const char **locs = calloc(n_locs ? n_locs : 1, sizeof *locs);
    size_t nl = 0;
    for (size_t k = 0; locs && k < nrel && nl < n_locs; k++) {
      const an_kt_row *row = &st->rows[rel[k]];
      size_t ns = row->entry ? row->entry->n_sites : 0;
      for (size_t s = 0; s < (ns ? ns : 1) && nl < n_locs; s++) {
        const char *loc = ns ? row->entry->sites[s].display_location : row->location_cell;
        loc = an_location_func_at(t->strings, loc);
        if (!loc) break;
        bool dup = false;
        for (size_t q = 0; q < nl; q++)
          if (locs[q] == loc) dup = true;
        if (!dup) locs[nl++] = loc;
      }
    }
    sbuf lb = {0};
    for (size_t q = 0; q < nl; q++) {
      if (q) sb_add(&lb, "<br>");
      sb_add(&lb, locs[q]);
    }
    if (!nl) sb_add(&lb, "-");
    free(locs);
    r->locations = sb_intern(t->strings, &lb);
    free(lb.p);
    sbuf cp = {0};
    for (size_t q = 0; q < p->n_candidate_paths; q++) {
      if (q) sb_add(&cp, "<br>");
      sb_add(&cp, p->candidate_paths[q]);
    }
    if (!p->n_candidate_paths) sb_add(&cp, "-");
    r->candidate_path = sb_intern(t->strings, &cp);
    free(cp.p);
    sbuf ra = {0};
    const char *hint = p->rationale_hint ? p->rationale_hint : "";
    if (p->origin == TE_ORIGIN_MAINLINE && active) {
      sb_add(&ra, "`");
      sb_add(&ra, p->name);
      sb_fmt(&ra, "` is present in this trace (%.1f%% related GPU time). ", share);
    } else if (p->origin == TE_ORIGIN_MAINLINE) {
      sb_fmt(&ra, "Split kernels in this family take %.1f%% of GPU time. This tree already has a matching path. ", share);
    } else if (p->origin == TE_ORIGIN_UPSTREAM) {
      sb_fmt(&ra, "Matches an upstream path (%.1f%% related GPU time). ", share);
    } else {
      sb_fmt(&ra, "Matches an open upstream path (%.1f%% related GPU time). ", share);
    }
    sb_add(&ra, hint);
    /* a missing hint must not leave a trailing space */
    while (ra.n && ra.p[ra.n - 1] == ' ') ra.p[--ra.n] = '\0';
    r->rationale = sb_intern(t->strings, &ra);
    free(ra.p);
    r->n_related = nrel;
    r->related = malloc((nrel ? nrel : 1) * sizeof *r->related);
    if (!r->related || !r->evidence || !r->locations || !r->candidate_path || !r->rationale) {
      ok = false;
      break;
    }
    for (size_t k = 0; k < nrel; k++) r->related[k] = st->rows[rel[k]].name;
  }
  /* 9: de-duplication */
  if (ok) qsort(ms, nm, sizeof *ms, cmp_fmatch);
  bool *consumed = calloc(nr ? nr : 1, sizeof *consumed);
  const te_fusion_pattern **blocked = calloc(np ? np * 8 + 1 : 1, sizeof *blocked);
  size_t nb = 0, nbcap = np ? np * 8 + 1 : 1;
  st->fuse = calloc(nm ? nm : 1, sizeof *st->fuse);
  if (!consumed || !blocked || !st->fuse) ok = false;
  for (size_t i = 0; ok && i < nm; i++) {
    fmatch *m = &ms[i];
    bool skip = false;
    for (size_t b = 0; b < nb && !skip; b++)
      if (blocked[b] == m->row.pattern || strcmp(blocked[b]->name, m->row.pattern->name) == 0)
        skip = true;
    for (size_t k = 0; k < m->n_rows && !skip; k++)
      if (consumed[m->rows[k]]) skip = true;
    if (skip) continue;
    for (size_t k = 0; k < m->n_rows; k++) consumed[m->rows[k]] = true;
    for (size_t s = 0; s < m->row.pattern->n_subsumes && nb < nbcap; s++)
      blocked[nb++] = m->row.pattern->subsumes[s];
    m->row.shown = m->row.share_pct >= render_min;
    if (m->row.shown) st->n_fuse_shown++;
    st->fuse[st->n_fuse++] = m->row;
    m->row.related = NULL; /* moved */
  }
  for (size_t i = 0; i < nm; i++) {
    free(ms[i].rows);
    free(ms[i].row.related);
  }
  free(consumed);
  free(blocked);
  free(ms);
  free(mark);
  free(texts);
  return ok;
}

/* ------------------------------------------------------------------ build */

void an_tables_free(an_tables *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n_stages; i++) {
    free(t->stages[i].rows);
    for (size_t k = 0; k < t->stages[i].n_fuse; k++) free(t->stages[i].fuse[k].related);
    free(t->stages[i].fuse);
  }
  free(t->stages);
  an_strtab_destroy(t->strings);
  memset(t, 0, sizeof *t);
}

an_status an_tables_build(const an_trace_view *views, size_t n_views,
                          const an_kernel_map *mapping, const an_kernel_map *formal_payload,
                          const te_rules *rules, const an_tables_options *opt,
                          an_tables *out) {
  memset(out, 0, sizeof *out);
  out->strings = an_strtab_create();
  size_t n_st = te_rules_stage_count(rules);
  out->stages = calloc(n_st + 1, sizeof *out->stages);
  if (!out->strings || !out->stages) {
    an_tables_free(out);
    return AN_ERR_NOMEM;
  }
  const te_settings *set = te_rules_settings(rules);
  double min_share = opt->min_share_pct >= 0 ? opt->min_share_pct : set->kernel_table_min_share_pct;
  size_t sites_cap = (size_t)set->kernel_table_sites_shown;
  const te_matcher *xpu = te_rules_matcher(rules, "xpu_launch");
  char *model_lc = NULL;
  if (opt->model_path) {
    size_t n = strlen(opt->model_path);
    model_lc = malloc(n + 1);
    if (!model_lc) {
      an_tables_free(out);
      return AN_ERR_NOMEM;
    }
    for (size_t i = 0; i <= n; i++) model_lc[i] = (char)tolower((unsigned char)opt->model_path[i]);
  }
  an_status rc = AN_OK;
  /* stage blocks in the order the views list them, merged by stage id, then sorted */
  an_u64map *caches = calloc(n_views ? n_views : 1, sizeof *caches);
  if (!caches) rc = AN_ERR_NOMEM;
  for (size_t oi = 0; rc == AN_OK && oi < n_st; oi++) {
    /* te_stage order: pick the stage with the oi-th smallest order (stable) */
    const te_stage *stage = NULL;
    {
      for (size_t s = 0; s < n_st && !stage; s++) {
        const te_stage *c = te_rules_stage(rules, s);
        size_t before = 0;
        for (size_t u = 0; u < n_st; u++) {
          const te_stage *d = te_rules_stage(rules, u);
          if (d->order < c->order || (d->order == c->order && u < s)) before++;
        }
        if (before == oi) stage = c;
      }
    }
    if (!stage) continue;
    size_t cap = 0;
    for (size_t v = 0; v < n_views; v++) {
      const an_stage_kernels *sk = an_trace_view_stage(&views[v], stage->id);
      if (sk) cap += sk->n;
    }
    if (!cap) continue;
    agg *ag = calloc(cap, sizeof *ag);
    an_u64map idx = {0};
    size_t na = 0;
    double total = 0;
    if (!ag) {
      rc = AN_ERR_NOMEM;
      break;
    }
    for (size_t v = 0; rc == AN_OK && v < n_views; v++) {
      const an_stage_kernels *sk = an_trace_view_stage(&views[v], stage->id);
      if (!sk) continue;
      for (size_t i = 0; i < sk->n; i++) {
        const tr_event *e = sk->kernels[i];
        const char *name = an_canonical_cached(out->strings, &caches[v], views[v].trace, e->name);
        if (!name) {
          rc = AN_ERR_NOMEM;
          break;
        }
        void *x = an_u64map_get(&idx, (uint64_t)(uintptr_t)name);
        agg *a;
        if (x) a = &ag[(uintptr_t)x - 1];
        else {
          a = &ag[na];
          a->name = name;
          a->first = na;
          na++;
          if (an_u64map_put(&idx, (uint64_t)(uintptr_t)name, (void *)(uintptr_t)na) != 0) {
            rc = AN_ERR_NOMEM;
            break;
          }
        }
        a->total += e->dur;
        a->launches++;
        if (e->dur > a->max) a->max = e->dur;
        total += e->dur;
      }
    }
    an_u64map_free(&idx);
    if (rc != AN_OK) {
      free(ag);
      break;
    }
    qsort(ag, na, sizeof *ag, cmp_agg);
    an_stage_tables *st = &out->stages[out->n_stages++];
    st->stage = stage;
    st->total_us = total;
    st->rows = calloc(na ? na : 1, sizeof *st->rows);
    if (!st->rows) {
      free(ag);
      rc = AN_ERR_NOMEM;
      break;
    }
    st->n_rows = na;
    for (size_t i = 0; i < na; i++) {
      an_kt_row *r = &st->rows[i];
      r->name = ag[i].name;
      r->total_us = ag[i].total;
      r->launches = ag[i].launches;
      r->max_us = ag[i].max;
      r->share_pct = total > 0 ? ag[i].total / total * 100.0 : 0;
      r->category = te_rules_classify(rules, "kernel", r->name, NULL);
      if (!r->category) r->category = "other";
      r->entry = an_kernel_map_lookup(mapping, stage->id, r->name);
      if (!r->entry && formal_payload) r->entry = an_kernel_map_find(formal_payload, stage->id, r->name);
      if (!render_cells(out, rules, r, sites_cap)) {
        rc = AN_ERR_NOMEM;
        break;
      }
      bool in_limit = opt->kernel_table_limit <= 0 || (long)i < opt->kernel_table_limit;
      r->shown = in_limit && r->share_pct >= min_share;
      if (r->shown) {
        st->n_shown++;
        if (xpu && te_matcher_match(xpu, r->name, strlen(r->name))) st->xpu = true;
      }
    }
    free(ag);
    if (rc == AN_OK && !fuse_stage(out, rules, opt, model_lc, st)) rc = AN_ERR_NOMEM;
  }
  for (size_t v = 0; caches && v < n_views; v++) an_u64map_free(&caches[v]);
  free(caches);
  free(model_lc);
  if (rc != AN_OK) an_tables_free(out);
  return rc;
}
