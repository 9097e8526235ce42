/*
 * analysis/collective_names.c - generic NCCL/RCCL kernels keyed by their collective
 * (collective_names.h).
 *
 * One pass over the kernels: whether a name is generic is decided once per name; the
 * collective comes from the kernel's own args, else from its CPU op (External id; the
 * index of CPU ops is built only when a generic kernel lacks the member); the new name of
 * each (name, collective) pair is interned once.
 */
#include "analysis/collective_names.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/id_index.h"
#include "util/limits.h"
#include "util/map.h"

/* The collective as a name suffix: letters, digits and '_' of the member's value (text
 * from the trace: nothing else reaches the name), at most AN_MAX_COLLECTIVE_WORD. */
static size_t collective_word(const char *v, char *out, size_t cap) {
  size_t n = 0;
  for (; *v && n + 1 < cap && n < AN_MAX_COLLECTIVE_WORD; v++) {
    char ch = *v;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        ch == '_')
      out[n++] = ch;
  }
  out[n] = '\0';
  return n;
}

typedef struct split_ctx {
  tr_trace *t;
  const te_matcher *generic;
  te_subject *subj;         /* the name asked, uncached: decided remembers the answer */
  ut_u64map decided;        /* name -> 1 + generic */
  ut_u64map renamed;        /* name << 32 | collective -> new name */
  an_id_index ops;          /* CPU ops by External id, built on first need */
  int ops_state;            /* 0 not built, 1 built, -1 out of memory */
  const te_matcher *replay; /* graph_replay_launch */
  an_id_index launches;     /* launches by correlation, built on first need */
  int launches_state;       /* as ops_state */
  tr_str unsplit;           /* AN_UNSPLIT_REPLAY interned, 0 until a replay needs it */
} split_ctx;

static bool is_generic(split_ctx *c, tr_str name, bool *nomem) {
  uint64_t v;
  if (ut_u64map_get(&c->decided, name, &v)) return v == 2;
  const char *s = tr_str_get(c->t, name);
  te_subject_set(c->subj, s, strlen(s));
  bool g = te_matcher_match_subject(c->generic, c->subj);
  if (!ut_u64map_put(&c->decided, name, g ? 2 : 1)) *nomem = true;
  return g;
}

/* The Collective name of the kernel's CPU op (same External id), 0 when none. */
static tr_str op_collective(split_ctx *c, const tr_event *k) {
  int64_t ext = tr_event_external_id(c->t, k);
  if (ext == TR_NO_ID) return 0;
  if (!c->ops_state)
    c->ops_state = an_id_index_build(&c->ops, c->t, TR_KIND_CPU_OP, AN_ID_EXTERNAL) ? -1 : 1;
  if (c->ops_state < 0) return 0;
  size_t lo, hi;
  an_id_index_range(&c->ops, ext, &lo, &hi);
  for (size_t i = lo; i < hi; i++) {
    tr_str v =
        tr_event_arg(c->t, TR_KIND_CPU_OP, an_id_index_event(&c->ops, i), TR_ARG_COLLECTIVE_NAME);
    if (v) return v;
  }
  return 0;
}

/* Whether the kernel's launch (same correlation) replayed a graph (matcher
 * graph_replay_launch): its collective is in no event of the trace. */
static bool graph_replayed(split_ctx *c, const tr_event *k) {
  int64_t corr = tr_event_correlation(c->t, k);
  if (corr == TR_NO_ID || !c->replay) return false;
  if (!c->launches_state)
    c->launches_state =
        an_id_index_build(&c->launches, c->t, TR_KIND_LAUNCH, AN_ID_CORRELATION) ? -1 : 1;
  if (c->launches_state < 0) return false;
  size_t lo, hi;
  an_id_index_range(&c->launches, corr, &lo, &hi);
  for (size_t i = lo; i < hi; i++) {
    const char *nm = tr_str_get(c->t, an_id_index_event(&c->launches, i)->name);
    if (te_matcher_match(c->replay, nm, strlen(nm))) return true;
  }
  return false;
}

/* The kernel's name with its collective, interned once per pair; 0 when it has none. */
static tr_str split_name(split_ctx *c, tr_str name, tr_str coll, bool *nomem) {
  uint64_t key = (uint64_t)name << 32 | coll, v;
  if (ut_u64map_get(&c->renamed, key, &v)) return (tr_str)v;
  char word[AN_MAX_COLLECTIVE_WORD + 1];
  if (coll == c->unsplit) /* our words, not the trace's: kept as they are */
    snprintf(word, sizeof word, "%s", AN_UNSPLIT_REPLAY);
  else if (!collective_word(tr_str_get(c->t, coll), word, sizeof word))
    return 0;
  const char *base = tr_str_get(c->t, name);
  static const char open[] = " [";
  size_t nb = strlen(base), nw = strlen(word), no = sizeof open - 1;
  size_t len = nb + no + nw + 1; /* "BASE [WORD]" */
  char small[512];
  char *buf = len < sizeof small ? small : malloc(len + 1);
  tr_str out = 0;
  if (buf) {
    memcpy(buf, base, nb);
    memcpy(buf + nb, open, no);
    memcpy(buf + nb + no, word, nw);
    buf[len - 1] = ']';
    buf[len] = '\0';
    out = tr_str_intern(c->t, buf, len);
  }
  if (buf != small) free(buf);
  if (!out || !ut_u64map_put(&c->renamed, key, out)) *nomem = true;
  return out;
}

an_status an_collective_names_split(tr_trace *t, const te_rules *rules, size_t *renamed) {
  if (renamed) *renamed = 0;
  split_ctx c = {.t = t,
                 .generic = te_rules_matcher(rules, "generic_collective_kernel"),
                 .replay = te_rules_matcher(rules, "graph_replay_launch")};
  if (!c.generic) return AN_OK;
  if (!(c.subj = te_subject_create())) return AN_ERR_NOMEM;
  size_t n = 0;
  const tr_event *k = tr_trace_events(t, TR_KIND_KERNEL, &n);
  bool nomem = false;
  for (size_t i = 0; i < n && !nomem; i++) {
    if (!is_generic(&c, k[i].name, &nomem)) continue;
    tr_str coll = tr_event_arg(t, TR_KIND_KERNEL, &k[i], TR_ARG_COLLECTIVE_NAME);
    if (!coll) coll = op_collective(&c, &k[i]);
    /* issue 31: a replayed graph's kernel says it is not split rather than join the
     * eager ones' rows or pass for one collective */
    if (!coll && graph_replayed(&c, &k[i])) {
      if (!c.unsplit) c.unsplit = tr_str_intern(t, AN_UNSPLIT_REPLAY, sizeof AN_UNSPLIT_REPLAY - 1);
      coll = c.unsplit;
    }
    tr_str name = coll ? split_name(&c, k[i].name, coll, &nomem) : 0;
    if (!name) continue;
    tr_trace_rename_event(t, TR_KIND_KERNEL, i, name);
    if (renamed) (*renamed)++;
  }
  te_subject_destroy(c.subj);
  ut_u64map_free(&c.decided);
  ut_u64map_free(&c.renamed);
  if (c.ops_state > 0) an_id_index_free(&c.ops);
  if (c.launches_state > 0) an_id_index_free(&c.launches);
  return nomem || c.ops_state < 0 || c.launches_state < 0 ? AN_ERR_NOMEM : AN_OK;
}
