/* prefilter.c - the classifier prefilter; see prefilter.h.
 *
 * The automaton is a full DFA over byte classes (each byte some literal holds gets a
 * class, every other byte class 0), 16-bit states: a name costs one table load per byte
 * of each text. Each state carries the rules of every literal ending there or at a
 * state its failure chain reaches, as an index into a table of rule masks (0: none). */
#include "prefilter.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "matcher.h"
#include "regex_literals.h"
#include "triage/ascii.h"
#include "triage/limits.h"

/* One literal of a rule, lower-cased, and which text it is looked for in. */
typedef struct lit {
  const char *s; /* in the pack; NULL: the text is own (a regex literal's copy) */
  size_t len;
  char own[TE_LITERAL_MAX_LEN];
  uint32_t rule;
  bool compact;
} lit;

struct te_prefilter {
  size_t n_rules, words;
  uint64_t *always; /* rules run whatever the name */
  uint64_t *tokens; /* rules with `tokens:` entries: run on a mangled name */
  uint8_t cls[256];
  size_t n_cls, n_states;
  uint16_t *delta;                    /* n_states x n_cls */
  uint32_t *out_folded, *out_compact; /* per state: 0, or 1 + a mask of `masks` */
  uint64_t *masks;
  size_t n_masks, cap_masks;
};

typedef struct build {
  te_prefilter *pf;
  lit *lits;
  size_t n_lits, cap_lits;
  bool failed;
} build;

static void set_bit(uint64_t *m, size_t i) { m[i >> 6] |= 1ull << (i & 63); }

static void add_lit(build *b, size_t rule, const char *s, size_t len, bool compact, bool copy) {
  lit *l = te_grow(b->lits, &b->cap_lits, b->n_lits + 1, sizeof *b->lits, 64);
  if (!l) {
    b->failed = true;
    return;
  }
  b->lits = l;
  l = &b->lits[b->n_lits++];
  l->len = len;
  l->rule = (uint32_t)rule;
  l->compact = compact;
  l->s = copy ? NULL : s;
  if (copy) memcpy(l->own, s, len);
}

/* A literal list of the matcher (keywords, words, prefixes): looked for lower-cased
 * (a case-sensitive matcher's literal holds in the folded text once folded too). False:
 * an empty entry, which hits every name. */
static bool add_list(build *b, size_t rule, const char *const *s, const size_t *len, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!len[i]) return false;
    add_lit(b, rule, s[i], len[i], false, false);
  }
  return true;
}

/* The literals of rule `rule`'s matcher m; false when the rule must always run. */
static bool add_matcher(build *b, size_t rule, const te_matcher *m) {
  if (!add_list(b, rule, (const char *const *)m->keywords, m->keyword_lens, m->n_keywords) ||
      !add_list(b, rule, (const char *const *)m->words, m->word_lens, m->n_words) ||
      !add_list(b, rule, (const char *const *)m->prefixes, m->prefix_lens, m->n_prefixes))
    return false;
  for (size_t i = 0; m->compact && i < m->n_keywords; i++)
    if (m->compact_lens[i]) /* an empty compact keyword never hits */
      add_lit(b, rule, m->compact_keywords[i], m->compact_lens[i], true, false);
  for (size_t i = 0; i < m->n_tokens; i++)
    add_lit(b, rule, m->tokens[i], m->token_lens[i], true, false);
  if (m->n_tokens) set_bit(b->pf->tokens, rule);
  for (size_t i = 0; i < m->n_regex; i++) {
    te_literal_set req;
    if (!te_regex_required(m->regex_src[i], &req)) return false;
    for (size_t k = 0; k < req.n; k++) add_lit(b, rule, req.s[k], req.len[k], false, true);
  }
  return true;
}

/* The literals are stored as given; the automaton folds them (keywords of a
 * case-sensitive matcher keep their capitals in the pack). */
static unsigned char folded_at(const lit *l, size_t i) {
  return te_ascii_lower_byte((unsigned char)(l->s ? l->s : l->own)[i]);
}

static uint32_t new_mask(te_prefilter *pf) {
  uint64_t *m = te_grow(pf->masks, &pf->cap_masks, (pf->n_masks + 1) * pf->words, sizeof *m, 64);
  if (!m) return 0;
  pf->masks = m;
  memset(m + pf->n_masks * pf->words, 0, pf->words * sizeof *m);
  return (uint32_t)++pf->n_masks;
}

static uint64_t *mask_of(te_prefilter *pf, uint32_t id) { return pf->masks + (id - 1) * pf->words; }

static void classes(te_prefilter *pf, const build *b) {
  memset(pf->cls, 0, sizeof pf->cls);
  pf->n_cls = 1;
  for (size_t i = 0; i < b->n_lits; i++)
    for (size_t k = 0; k < b->lits[i].len; k++) {
      unsigned char c = folded_at(&b->lits[i], k);
      if (!pf->cls[c]) pf->cls[c] = (uint8_t)pf->n_cls++;
    }
}

/* The state a literal ends at, adding the states it needs; 0 past
 * TE_PREFILTER_MAX_STATES or out of memory. */
static size_t insert(te_prefilter *pf, size_t *cap, const lit *l) {
  size_t s = 0;
  for (size_t k = 0; k < l->len; k++) {
    size_t at = s * pf->n_cls + pf->cls[folded_at(l, k)];
    if (!pf->delta[at]) {
      if (pf->n_states >= TE_PREFILTER_MAX_STATES) return 0;
      size_t old = *cap;
      uint16_t *d = te_grow(pf->delta, cap, (pf->n_states + 1) * pf->n_cls, sizeof *d, 0);
      if (!d) return 0;
      memset(d + old, 0, (*cap - old) * sizeof *d);
      pf->delta = d;
      d[at] = (uint16_t)pf->n_states++;
    }
    s = pf->delta[at];
  }
  return s;
}

/* The trie of every literal (state 0 the root; 0 in delta: no edge yet) and the rules
 * each literal's end state names. False past TE_PREFILTER_MAX_STATES or out of memory. */
static bool trie(te_prefilter *pf, const build *b) {
  size_t cap = 64 * pf->n_cls;
  pf->n_states = 1;
  if (!(pf->delta = calloc(cap, sizeof *pf->delta))) return false;
  uint32_t *end = malloc((b->n_lits ? b->n_lits : 1) * sizeof *end);
  if (!end) return false;
  bool ok = true;
  for (size_t i = 0; ok && i < b->n_lits; i++)
    ok = (end[i] = (uint32_t)insert(pf, &cap, &b->lits[i])) != 0;
  pf->out_folded = ok ? calloc(pf->n_states, sizeof *pf->out_folded) : NULL;
  pf->out_compact = ok ? calloc(pf->n_states, sizeof *pf->out_compact) : NULL;
  ok = pf->out_folded && pf->out_compact;
  for (size_t i = 0; ok && i < b->n_lits; i++) {
    uint32_t *out = b->lits[i].compact ? pf->out_compact : pf->out_folded;
    if (!out[end[i]] && !(out[end[i]] = new_mask(pf))) ok = false;
    if (ok) set_bit(mask_of(pf, out[end[i]]), b->lits[i].rule);
  }
  free(end);
  return ok;
}

/* A state's rules include those of its failure state (processed first, breadth first):
 * shared when it has none of its own, else or-ed into its own mask. */
static void inherit(te_prefilter *pf, uint32_t *out, size_t s, size_t f) {
  if (!out[f]) return;
  if (!out[s]) {
    out[s] = out[f];
    return;
  }
  uint64_t *m = mask_of(pf, out[s]);
  const uint64_t *from = mask_of(pf, out[f]);
  for (size_t w = 0; w < pf->words; w++) m[w] |= from[w];
}

/* Failure links, breadth first, completing every missing edge into a DFA edge. */
static bool complete(te_prefilter *pf) {
  size_t n = pf->n_states, k = pf->n_cls;
  uint16_t *fail = calloc(n, sizeof *fail), *queue = malloc(n * sizeof *queue);
  if (!fail || !queue) {
    free(fail);
    free(queue);
    return false;
  }
  size_t head = 0, tail = 0;
  for (size_t a = 0; a < k; a++)
    if (pf->delta[a]) queue[tail++] = pf->delta[a]; /* depth 1: fail to the root */
  while (head < tail) {
    size_t s = queue[head++];
    inherit(pf, pf->out_folded, s, fail[s]);
    inherit(pf, pf->out_compact, s, fail[s]);
    for (size_t a = 0; a < k; a++) {
      uint16_t *e = &pf->delta[s * k + a];
      uint16_t via_fail = pf->delta[(size_t)fail[s] * k + a];
      if (*e) {
        fail[*e] = via_fail;
        queue[tail++] = *e;
      } else {
        *e = via_fail;
      }
    }
  }
  free(fail);
  free(queue);
  return true;
}

void te_prefilter_destroy(te_prefilter *pf) {
  if (!pf) return;
  free(pf->always);
  free(pf->tokens);
  free(pf->delta);
  free(pf->out_folded);
  free(pf->out_compact);
  free(pf->masks);
  free(pf);
}

/* The literals of every rule; false when no rule is left to filter. */
static bool collect(build *b, const te_classifier *c) {
  size_t gated = 0;
  for (size_t i = 0; i < c->n_rules; i++) {
    const te_class_rule *cr = &c->rules[i];
    size_t before = b->n_lits;
    if (cr->match && add_matcher(b, i, cr->match)) {
      gated++;
    } else {
      b->n_lits = before; /* its literals are moot: it always runs */
      set_bit(b->pf->always, i);
    }
  }
  return gated > 0;
}

/* A prefilter of n rules, tables empty (NULL: no memory). */
static te_prefilter *prefilter_new(size_t n) {
  te_prefilter *pf = calloc(1, sizeof *pf);
  if (!pf) return NULL;
  pf->n_rules = n;
  pf->words = (n + 63) / 64;
  pf->always = calloc(pf->words, sizeof *pf->always);
  pf->tokens = calloc(pf->words, sizeof *pf->tokens);
  if (pf->always && pf->tokens) return pf;
  te_prefilter_destroy(pf);
  return NULL;
}

/* The automaton of b's literals when `gated` (some rule has literals), else NULL. */
static te_prefilter *prefilter_finish(build *b, bool gated) {
  te_prefilter *pf = b->pf;
  bool ok = gated && !b->failed;
  if (ok) {
    classes(pf, b);
    ok = trie(pf, b) && complete(pf);
  }
  free(b->lits);
  if (!ok) {
    te_prefilter_destroy(pf);
    return NULL;
  }
  return pf;
}

te_prefilter *te_prefilter_build(const te_classifier *c) {
  if (!c || !c->n_rules) return NULL;
  build b = {prefilter_new(c->n_rules), NULL, 0, 0, false};
  return b.pf ? prefilter_finish(&b, collect(&b, c)) : NULL;
}

te_prefilter *te_prefilter_build_matchers(const te_matcher *const *ms, size_t n) {
  if (!ms || !n) return NULL;
  build b = {prefilter_new(n), NULL, 0, 0, false};
  size_t gated = 0;
  for (size_t i = 0; b.pf && i < n; i++) {
    size_t before = b.n_lits;
    if (!ms[i] || add_matcher(&b, i, ms[i])) { /* a NULL entry never hits: no literal */
      gated++;
    } else {
      b.n_lits = before;
      set_bit(b.pf->always, i);
    }
  }
  return b.pf ? prefilter_finish(&b, gated > 0) : NULL;
}

te_prefilter *te_prefilter_build_regexes(const char *const *src, size_t n) {
  if (!src || !n) return NULL;
  build b = {prefilter_new(n), NULL, 0, 0, false};
  size_t gated = 0;
  for (size_t i = 0; b.pf && i < n; i++) {
    te_literal_set req;
    if (!te_regex_required(src[i], &req)) {
      set_bit(b.pf->always, i);
      continue;
    }
    gated++;
    for (size_t k = 0; k < req.n; k++) add_lit(&b, i, req.s[k], req.len[k], false, true);
  }
  return b.pf ? prefilter_finish(&b, gated > 0) : NULL;
}

size_t te_prefilter_words(const te_prefilter *pf) { return pf ? pf->words : 0; }

static void run(const te_prefilter *pf, const uint32_t *out, const char *t, size_t n,
                uint64_t *may) {
  const uint16_t *delta = pf->delta;
  size_t k = pf->n_cls, s = 0;
  for (size_t i = 0; i < n; i++) {
    s = delta[s * k + pf->cls[(unsigned char)t[i]]];
    if (out[s]) {
      const uint64_t *m = pf->masks + (size_t)(out[s] - 1) * pf->words;
      for (size_t w = 0; w < pf->words; w++) may[w] |= m[w];
    }
  }
}

void te_prefilter_scan(const te_prefilter *pf, const char *folded, size_t flen, const char *compact,
                       size_t clen, bool mangled, uint64_t *may) {
  for (size_t w = 0; w < pf->words; w++) may[w] = pf->always[w] | (mangled ? pf->tokens[w] : 0);
  run(pf, pf->out_folded, folded, flen, may);
  run(pf, pf->out_compact, compact, clen, may);
}
