/*
 * report/stage_names.c - one display-name set per stage for every format (stage_names.h).
 */
#include "report/stage_names.h"

#include <stdlib.h>
#include <string.h>

static const char *full_at(const void *items, size_t i) { return ((const char *const *)items)[i]; }

/* name at the end of the set unless it holds it already. */
static void add(rp_stage_names *s, const char *name) {
  s->full[s->n] = name;
  if (ut_textset_put(&s->index, s->n) == s->n) s->n++;
}

static size_t capacity(const an_report *r, const an_stage_report *st) {
  size_t n = st->n_kernels + (st->overlap ? st->overlap->n_rows : 0);
  for (size_t i = 0; i < st->n_fuse; i++) n += st->fuse[i].n_evidence + st->fuse[i].n_related;
  if (st->timeline) n += st->timeline->n_collectives;
  for (size_t i = 0; i < r->n_summary; i++) n += r->summary[i].n_kernels;
  return n;
}

int rp_stage_names_build(rp_stage_names *s, const an_report *r, size_t si, const rp_names *nm) {
  const an_stage_report *st = &r->stages[si];
  size_t cap = capacity(r, st) + 1;
  *s = (rp_stage_names){calloc(cap, sizeof *s->full), NULL, 0, {0}};
  if (!s->full || !ut_textset_init(&s->index, cap, full_at, s->full)) {
    rp_stage_names_free(s);
    return -1;
  }
  /* every kernel row, shown or not (HTML prints them all), distinct by construction */
  for (size_t i = 0; i < st->n_kernels; i++) {
    s->full[s->n] = st->kernels[i].name;
    (void)ut_textset_put(&s->index, s->n++);
  }
  for (size_t i = 0; i < r->n_summary; i++) /* the summary's kernels, chains included */
    for (size_t k = 0; !strcmp(r->summary[i].stage_id, st->id) && k < r->summary[i].n_kernels; k++)
      add(s, r->summary[i].kernels[k]);
  for (size_t i = 0; st->timeline && i < st->timeline->n_collectives; i++)
    add(s, st->timeline->collectives[i].kernel);
  for (size_t i = 0; st->overlap && i < st->overlap->n_rows; i++)
    add(s, st->overlap->rows[i].kernel);
  for (size_t i = 0; i < st->n_fuse; i++) {
    for (size_t k = 0; k < st->fuse[i].n_evidence; k++) add(s, st->fuse[i].evidence[k].kernel);
    for (size_t k = 0; k < st->fuse[i].n_related; k++) add(s, st->fuse[i].related[k]);
  }
  if (!nm) return 0;
  s->shown = rp_names_display_table(nm, s->full, s->n);
  if (s->shown) return 0;
  rp_stage_names_free(s);
  return -1;
}

const char *rp_stage_names_get(const rp_stage_names *s, const char *full) {
  size_t i = s->shown ? ut_textset_find(&s->index, full) : SIZE_MAX;
  return i < s->n ? s->shown[i] : full;
}

void rp_stage_names_free(rp_stage_names *s) {
  if (s->shown) rp_names_table_free(s->shown, s->n);
  free(s->full);
  ut_textset_free(&s->index);
  *s = (rp_stage_names){NULL, NULL, 0, {0}};
}
