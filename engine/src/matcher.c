/* matcher.c - matching one string against one compiled matcher; see matcher.h. */
#include "matcher.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefilter.h"
#include "tokens.h"
#include "triage/ascii.h"
#include "triage/limits.h"

/* The lane's own match data (one pair, as every matcher's): a matcher's is lane 0's. */
static _Thread_local pcre2_match_data *lane_md;

pcre2_match_context *te_regex_context(void) {
  pcre2_match_context *ctx = pcre2_match_context_create(NULL);
  if (!ctx) return NULL;
  pcre2_set_match_limit(ctx, TE_PCRE2_MATCH_LIMIT);
  pcre2_set_depth_limit(ctx, TE_PCRE2_DEPTH_LIMIT);
  return ctx;
}

bool te_regex_run(pcre2_code *code, pcre2_match_context *ctx, const char *s, size_t len,
                  size_t *group1_start, size_t *group1_end, bool *limit_hit) {
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
  if (!md) return false;
  int rc = pcre2_match(code, (PCRE2_SPTR)s, len, 0, 0, md, ctx);
  bool hit = rc >= 0;
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && limit_hit) *limit_hit = true;
  if (hit && group1_start && group1_end) {
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (rc >= 2 && ov[2] != PCRE2_UNSET) {
      *group1_start = ov[2];
      *group1_end = ov[3];
    } else {
      *group1_start = *group1_end = 0;
    }
  }
  pcre2_match_data_free(md);
  return hit;
}

static unsigned pair_bit(char a, char b) {
  return ((unsigned)(unsigned char)a * 131u + (unsigned)(unsigned char)b) & (TE_PAIR_BITS - 1);
}

static te_probe probe_of(const char *lit, size_t len) {
  if (len < 2) return (te_probe){{TE_NO_PROBE, TE_NO_PROBE, TE_NO_PROBE}};
  size_t mid = (len - 2) / 2, last = len - 2;
  return (te_probe){{(uint16_t)pair_bit(lit[0], lit[1]), (uint16_t)pair_bit(lit[mid], lit[mid + 1]),
                     (uint16_t)pair_bit(lit[last], lit[last + 1])}};
}

/* Probes of n literals (NULL for none); false when out of memory. */
static bool build_probes(te_probe **out, const char **lits, const size_t *lens, size_t n) {
  *out = NULL;
  if (!n) return true;
  if (!(*out = malloc(n * sizeof **out))) return false;
  for (size_t i = 0; i < n; i++) (*out)[i] = probe_of(lits[i], lens[i]);
  return true;
}

/* False only when the literal cannot occur in the text whose pairs set describes. */
static bool may_occur(const uint64_t *set, const te_probe *p) {
  if (p->at[0] == TE_NO_PROBE) return true;
  for (int k = 0; k < 3; k++)
    if (!((set[p->at[k] >> 6] >> (p->at[k] & 63)) & 1u)) return false;
  return true;
}

/* The plan of one compiled regex. The first-byte test compares lower-cased bytes whatever
 * the pattern's case rule, so it can only let through a text PCRE2 then refuses, never
 * stop one it would match (without UTF, PCRE2's caseless bytes are ASCII letters). */
static void plan_init(te_regex_plan *plan, const pcre2_code *re) {
  atomic_init(&plan->jit, TE_JIT_UNTRIED);
  plan->anchored_first = -1;
  uint32_t options = 0, first_type = 0, first = 0;
  if (pcre2_pattern_info(re, PCRE2_INFO_ALLOPTIONS, &options) == 0 && (options & PCRE2_ANCHORED) &&
      pcre2_pattern_info(re, PCRE2_INFO_FIRSTCODETYPE, &first_type) == 0 && first_type == 1 &&
      pcre2_pattern_info(re, PCRE2_INFO_FIRSTCODEUNIT, &first) == 0 && first < 256)
    plan->anchored_first = te_ascii_lower_byte((unsigned char)first);
}

bool te_regex_jit_once(_Atomic unsigned char *jit, pcre2_code *re) {
  unsigned char s = atomic_load_explicit(jit, memory_order_acquire);
  if (s == TE_JIT_UNTRIED) {
    unsigned char expect = TE_JIT_UNTRIED;
    if (atomic_compare_exchange_strong_explicit(jit, &expect, TE_JIT_COMPILING,
                                                memory_order_acquire, memory_order_acquire)) {
      s = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0 ? TE_JIT_ON : TE_JIT_OFF;
      atomic_store_explicit(jit, s, memory_order_release);
      return s == TE_JIT_ON;
    }
    s = expect;
  }
  /* the other lane compiles it (tens of microseconds, once per regex and run) */
  while (s == TE_JIT_COMPILING) {
    sched_yield();
    s = atomic_load_explicit(jit, memory_order_acquire);
  }
  return s == TE_JIT_ON;
}

/* A yes/no run of m's regex i with the matcher's own match data (te_regex_run creates
 * and frees one per call, which was most of a cheap regex's cost on many names); queries
 * of one rule set are thread-compatible, so one match data per matcher suffices. */
static bool regex_hit(const te_matcher *m, size_t i, const char *s, size_t len, bool *limit_hit) {
  te_matcher_state *st = m->st;
  te_regex_plan *plan = &st->plans[i];
  pcre2_match_data *md = te_lane_now ? lane_md : st->match_data;
  if (plan->anchored_first >= 0 &&
      (len == 0 || te_ascii_lower_byte((unsigned char)s[0]) != plan->anchored_first))
    return false;
  /* no UTF mode is compiled, so the fast path's missing UTF check cannot matter */
  int rc = te_regex_jit_once(&plan->jit, m->regex[i])
               ? pcre2_jit_match(m->regex[i], (PCRE2_SPTR)s, len, 0, 0, md, st->match_ctx)
               : pcre2_match(m->regex[i], (PCRE2_SPTR)s, len, 0, 0, md, st->match_ctx);
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) *limit_hit = true;
  return rc >= 0;
}

int te_matcher_prepare(const te_matcher *m) {
  te_matcher_state *st = m->st;
  if (st->prepared) return 0;
  if (m->n_regex) {
    if (!st->match_ctx) st->match_ctx = te_regex_context();
    if (!st->match_data) st->match_data = pcre2_match_data_create(1, NULL);
    if (!st->plans) st->plans = calloc(m->n_regex, sizeof *st->plans);
    if (!st->match_ctx || !st->match_data || !st->plans) return -1;
  }
  for (size_t i = 0; i < m->n_regex; i++) plan_init(&st->plans[i], m->regex[i]);
  if (!m->case_sensitive &&
      (!build_probes(&st->kw_probe, m->keywords, m->keyword_lens, m->n_keywords) ||
       !build_probes(&st->word_probe, m->words, m->word_lens, m->n_words) ||
       (m->compact &&
        !build_probes(&st->ckw_probe, m->compact_keywords, m->compact_lens, m->n_keywords))))
    return -1;
  st->prepared = true;
  return 0;
}

void te_matcher_release(te_matcher *m) {
  for (size_t i = 0; i < m->n_regex; i++) pcre2_code_free(m->regex[i]);
  m->n_regex = 0;
  if (!m->st) return;
  pcre2_match_data_free(m->st->match_data);
  pcre2_match_context_free(m->st->match_ctx);
  m->st->match_data = NULL;
  m->st->match_ctx = NULL;
  free(m->st->plans);
  m->st->plans = NULL;
  free(m->st->kw_probe);
  free(m->st->ckw_probe);
  free(m->st->word_probe);
  m->st->kw_probe = m->st->ckw_probe = m->st->word_probe = NULL;
  te_lcache_clear(&m->st->cache);
}

size_t te_matcher_limit_misses(const te_matcher *m) { return m ? m->st->limit_misses : 0; }

/* ---------------------------------------------------------------- lanes */

int te_lane_enter(unsigned lane) {
  if (lane < 1 || lane > TE_LANES) return -1;
  if (!lane_md && !(lane_md = pcre2_match_data_create(1, NULL))) return -1;
  te_lane_now = lane;
  return 0;
}

void te_lane_leave(void) {
  pcre2_match_data_free(lane_md);
  lane_md = NULL;
  te_lane_now = 0;
}

void te_matcher_fold_lanes(const te_matcher *m) {
  te_matcher_state *st = m->st;
  te_lcache_fold(&st->cache);
  for (size_t l = 0; l < TE_LANES; l++) {
    st->limit_misses += st->lane_misses[l];
    st->lane_misses[l] = 0;
  }
}

static bool is_alnum_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const char *find_bytes(const char *hay, size_t hlen, const char *needle, size_t nlen) {
  if (nlen == 0) return hay;
  if (nlen > hlen) return NULL;
  const char *end = hay + hlen - nlen;
  for (const char *p = hay; p <= end; p++) {
    p = memchr(p, needle[0], (size_t)(end - p) + 1);
    if (!p) return NULL;
    if (memcmp(p, needle, nlen) == 0) return p;
  }
  return NULL;
}

static bool word_hit(const char *text, size_t len, const char *w, size_t wlen) {
  size_t pos = 0;
  while (pos + wlen <= len) {
    const char *p = find_bytes(text + pos, len - pos, w, wlen);
    if (!p) return false;
    size_t at = (size_t)(p - text);
    bool left_ok = at == 0 || !is_alnum_byte((unsigned char)text[at - 1]);
    bool right_ok = at + wlen == len || !is_alnum_byte((unsigned char)text[at + wlen]);
    if (left_ok && right_ok) return true;
    pos = at + 1;
  }
  return false;
}

/* The subject's lower-cased text, built on first use in a block with room for the compact
 * form after it. False when out of memory. */
static bool subject_folded(te_subject *subj) {
  if (subj->folded) return true;
  size_t len = subj->len, need = 2 * len + 2;
  char *buf = subj->text_local;
  if (need > sizeof subj->text_local && !(buf = subj->text_heap = malloc(need))) return false;
  te_ascii_lower(buf, subj->s, len);
  buf[len] = '\0';
  subj->folded = buf;
  return true;
}

/* The lower-case alphanumerics of the subject's text (for compact keywords), after the
 * folded text in its block. False when out of memory. */
static bool subject_compact(te_subject *subj) {
  if (subj->compact) return true;
  if (!subject_folded(subj)) return false;
  char *c = subj->folded + subj->len + 1;
  size_t n = 0;
  for (size_t i = 0; i < subj->len; i++)
    if (is_alnum_byte((unsigned char)subj->s[i])) c[n++] = subj->folded[i];
  c[n] = '\0';
  subj->compact = c;
  subj->compact_len = n;
  return true;
}

bool te_subject_texts(te_subject *subj) { return subject_compact(subj); }

static void add_pairs(uint64_t *set, const char *t, size_t n) {
  for (size_t i = 0; i + 1 < n; i++) {
    unsigned b = pair_bit(t[i], t[i + 1]);
    set[b >> 6] |= 1ull << (b & 63);
  }
}

/* Whether the subject's pair sets are there to filter literals: built at the second
 * literal matcher that meets the subject (subject_folded first), since for one matcher
 * they cost more than the scans they save (a Python frame ranked by one ladder). */
static bool subject_pairs(te_subject *subj) {
  if (subj->pairs_built) return true;
  if (subj->literal_uses++ == 0 || !subject_compact(subj)) return false;
  memset(subj->pairs, 0, sizeof subj->pairs);
  add_pairs(subj->pairs[0], subj->folded, subj->len);
  add_pairs(subj->pairs[1], subj->compact, subj->compact_len);
  subj->pairs_built = true;
  return true;
}

static void say(char *why, size_t cap, const char *kind, const char *pattern) {
  if (why && cap) snprintf(why, cap, "%s '%s'", kind, pattern);
}

static bool match_uncached(const te_matcher *m, te_subject *subj, char *why, size_t cap,
                           unsigned depth);

void te_subject_init(te_subject *subj, const char *s, size_t len) {
  /* the local buffers are written before they are read: no need to clear them */
  memset(subj, 0, offsetof(te_subject, hits_local));
  subj->s = s;
  subj->len = len;
}

void te_subject_done(te_subject *subj) {
  if (subj->may != subj->may_local) free(subj->may);
  subj->may = NULL;
  subj->may_group = 0;
  if (subj->tf_built) te_token_form_free(&subj->tf);
  subj->tf_built = false;
  if (subj->hits != subj->hits_local) free(subj->hits);
  free(subj->text_heap);
  subj->text_heap = subj->folded = subj->compact = NULL;
  subj->hits = NULL;
  subj->ti = NULL;
}

te_subject *te_subject_create(void) {
  te_subject *subj = malloc(sizeof *subj);
  if (subj) te_subject_init(subj, NULL, 0);
  return subj;
}

void te_subject_destroy(te_subject *subj) {
  if (!subj) return;
  te_subject_done(subj);
  free(subj);
}

void te_subject_set(te_subject *subj, const char *s, size_t len) {
  te_subject_done(subj);
  te_subject_init(subj, s, len);
}

/* The subject's hit bits for index ti, computed on first use; NULL when the subject
 * already holds another index's bits or memory ran out (the caller then scans). */
static const uint64_t *subject_hits(te_subject *subj, const te_token_index *ti) {
  if (subj->ti) return subj->ti == ti ? subj->hits : NULL;
  size_t words = (te_token_index_slots(ti) + 63) / 64;
  uint64_t *h = subj->hits_local;
  if (words > TE_SUBJECT_LOCAL_HITS && !(h = calloc(words, sizeof *h))) return NULL;
  if (h == subj->hits_local) memset(h, 0, sizeof subj->hits_local);
  te_token_index_scan(ti, &subj->tf, h);
  subj->hits = h;
  subj->ti = ti;
  return h;
}

static bool tokens_hit(const te_matcher *m, te_subject *subj, char *why, size_t cap) {
  if (!subj->tf_built && !subj->tf_failed) {
    subj->tf_built = te_token_form_build(&subj->tf, subj->s, subj->len);
    subj->tf_failed = !subj->tf_built;
  }
  if (!subj->tf_built) return false;
  /* the index answers yes or no; an explanation names the entry, so it scans */
  const uint64_t *hits = m->tindex && !why ? subject_hits(subj, m->tindex) : NULL;
  if (hits) return (hits[m->tslot >> 6] >> (m->tslot & 63)) & 1u;
  for (size_t i = 0; i < m->n_tokens; i++) {
    if (te_token_form_hit(&subj->tf, m->tokens[i], m->token_lens[i])) {
      say(why, cap, "token", m->tokens[i]);
      return true;
    }
  }
  return false;
}

static bool exclude_hits(const te_matcher *m, te_subject *subj, unsigned depth) {
  const te_matcher *ex = m->exclude.resolved;
  if (!ex) ex = m->exclude.inline_m;
  /* Finalize refuses exclusion cycles; the depth bound only guards unfinalized use. */
  if (!ex || depth > 32) return false;
  return match_uncached(ex, subj, NULL, 0, depth + 1);
}

static bool match_uncached(const te_matcher *m, te_subject *subj, char *why, size_t cap,
                           unsigned depth) {
  const char *s = subj->s;
  size_t len = subj->len;
  /* lazily prepared: see matcher.h */
  if (!m->st->prepared && te_matcher_prepare(m) != 0) return false;
  /* the folded forms are only for literal lists: a tokens/regex-only matcher skips them */
  const char *folded = s;
  bool probe = false;
  if ((m->n_keywords || m->n_words || m->n_prefixes) && !m->case_sensitive) {
    if (!subject_folded(subj)) return false;
    folded = subj->folded;
    probe = subject_pairs(subj);
  }
  bool hit = false;
  const te_probe *kwp = probe ? m->st->kw_probe : NULL, *wp = probe ? m->st->word_probe : NULL,
                 *cwp = probe ? m->st->ckw_probe : NULL;
  for (size_t i = 0; !hit && i < m->n_keywords; i++) {
    if (kwp && !may_occur(subj->pairs[0], &kwp[i])) continue;
    if (find_bytes(folded, len, m->keywords[i], m->keyword_lens[i])) {
      hit = true;
      say(why, cap, "keyword", m->keywords[i]);
    }
  }
  for (size_t i = 0; !hit && i < m->n_words; i++) {
    if (wp && !may_occur(subj->pairs[0], &wp[i])) continue;
    if (word_hit(folded, len, m->words[i], m->word_lens[i])) {
      hit = true;
      say(why, cap, "word", m->words[i]);
    }
  }
  if (!hit && m->n_tokens) hit = tokens_hit(m, subj, why, cap);
  for (size_t i = 0; !hit && i < m->n_prefixes; i++) {
    if (m->prefix_lens[i] <= len && memcmp(folded, m->prefixes[i], m->prefix_lens[i]) == 0) {
      hit = true;
      say(why, cap, "prefix", m->prefixes[i]);
    }
  }
  for (size_t i = 0; !hit && i < m->n_regex; i++) {
    bool limit = false;
    if (regex_hit(m, i, s, len, &limit)) {
      hit = true;
      say(why, cap, "regex", m->regex_src[i]);
    }
    if (limit && te_lane_now)
      m->st->lane_misses[te_lane_now - 1]++;
    else if (limit)
      m->st->limit_misses++;
  }
  if (m->compact && !hit && m->n_keywords) {
    if (!subject_compact(subj)) return false;
    for (size_t i = 0; !hit && i < m->n_keywords; i++) {
      if (m->compact_lens[i] == 0 || (cwp && !may_occur(subj->pairs[1], &cwp[i]))) continue;
      if (find_bytes(subj->compact, subj->compact_len, m->compact_keywords[i],
                     m->compact_lens[i])) {
        hit = true;
        say(why, cap, "compact keyword", m->keywords[i]);
      }
    }
  }
  if (hit && m->has_exclude && exclude_hits(m, subj, depth)) {
    if (why && cap) {
      size_t used = strlen(why);
      snprintf(why + used, cap - used, ", but the exclusion hits");
    }
    return false;
  }
  if (!hit && why && cap) snprintf(why, cap, "no pattern hits");
  return hit;
}

/* Whether remembering answers pays: a regex run (PCRE2, here or in the exclusion) costs
 * more than a cache insert; literal patterns are a few memchr scans, cheaper than hashing
 * and copying the name (E1 in docs/performance.md: with 262,144 distinct kernel names,
 * caching the ~50 literal fusion matchers was most of the run). */
static bool worth_caching(const te_matcher *m, unsigned depth) {
  if (m->n_regex) return true;
  const te_matcher *ex = m->exclude.resolved ? m->exclude.resolved : m->exclude.inline_m;
  return m->has_exclude && ex && depth < 32 && worth_caching(ex, depth + 1);
}

bool te_matcher_match(const te_matcher *m, const char *s, size_t len) {
  if (!m || !s) return false;
  if (!worth_caching(m, 0)) return te_matcher_match_uncached(m, s, len);
  int cached;
  if (te_lcache_get(&m->st->cache, s, len, &cached)) return cached != 0;
  te_subject subj;
  te_subject_init(&subj, s, len);
  bool result = match_uncached(m, &subj, NULL, 0, 0);
  te_subject_done(&subj);
  te_lcache_put(&m->st->cache, s, len, result);
  return result;
}

bool te_matcher_match_uncached(const te_matcher *m, const char *s, size_t len) {
  if (!m || !s) return false;
  te_subject subj;
  te_subject_init(&subj, s, len);
  bool result = match_uncached(m, &subj, NULL, 0, 0);
  te_subject_done(&subj);
  return result;
}

bool te_matcher_match_subject(const te_matcher *m, te_subject *subj) {
  return m && subj && subj->s && match_uncached(m, subj, NULL, 0, 0);
}

bool te_matcher_explain(const te_matcher *m, const char *s, size_t len, char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  if (!m || !s) return false;
  te_subject subj;
  te_subject_init(&subj, s, len);
  bool result = match_uncached(m, &subj, why, cap, 0);
  te_subject_done(&subj);
  return result;
}

/* ---------------------------------------------------------------- matcher groups */

struct te_matcher_group {
  const te_matcher **ms;
  size_t n;
  te_prefilter *pf; /* NULL: every matcher runs */
  uint64_t id;      /* this group's number, never 0 and never given again (next_group_id) */
};

/* The number of the next group created: a subject keys the bits it holds by it, not by
 * the group's address, which a group created after another's destroy may take again.
 * Atomic: groups may be created on several threads. */
static _Atomic uint64_t next_group_id = 1;

te_matcher_group *te_matcher_group_create(const te_matcher *const *ms, size_t n) {
  te_matcher_group *g = calloc(1, sizeof *g);
  if (!g || !(g->ms = malloc((n ? n : 1) * sizeof *g->ms))) {
    free(g);
    return NULL;
  }
  if (n) memcpy(g->ms, ms, n * sizeof *g->ms);
  g->n = n;
  g->pf = te_prefilter_build_matchers(ms, n);
  g->id = atomic_fetch_add(&next_group_id, 1);
  return g;
}

void te_matcher_group_destroy(te_matcher_group *g) {
  if (!g) return;
  te_prefilter_destroy(g->pf);
  free(g->ms);
  free(g);
}

/* Which of g's matchers can hit the subject, computed once per text; NULL: unknown. */
static const uint64_t *group_may(const te_matcher_group *g, te_subject *subj) {
  if (subj->may_group == g->id) return subj->may;
  if (subj->may_group || !subject_compact(subj)) return NULL; /* another group's bits: run all */
  size_t words = te_prefilter_words(g->pf);
  uint64_t *may = words <= TE_LOCAL_RULE_WORDS ? subj->may_local : malloc(words * sizeof *may);
  if (!may) return NULL;
  te_prefilter_scan(g->pf, subj->folded, subj->len, subj->compact, subj->compact_len,
                    te_token_form_mangled(subj->s, subj->len), may);
  subj->may = may;
  subj->may_group = g->id;
  return may;
}

bool te_matcher_group_match(const te_matcher_group *g, size_t i, te_subject *subj) {
  if (!g || i >= g->n || !g->ms[i] || !subj || !subj->s) return false;
  const uint64_t *may = g->pf ? group_may(g, subj) : NULL;
  if (may && !((may[i >> 6] >> (i & 63)) & 1u)) return false;
  return match_uncached(g->ms[i], subj, NULL, 0, 0);
}
