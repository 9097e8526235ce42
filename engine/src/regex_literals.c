/* regex_literals.c - required literals of a regex; see regex_literals.h.
 *
 * Each piece of the pattern is described by an `info`: either `exact`, the finite set of
 * texts the piece matches (a literal, a short alternation of literals, an optional
 * literal with ""), or a requirement, a set one of whose strings every match of the
 * piece contains (empty: none). A sequence joins adjacent exact pieces into longer
 * strings (their cross product while it stays small) and keeps the best requirement it
 * has seen; an alternation unites its branches' requirements, and has none when one
 * branch has none. The best requirement is the one whose shortest string is longest
 * (rarest in a name), then the smaller set. This is the prefilter construction of RE2
 * and Hyperscan, restricted to what kernel-name rules use. */
#include "regex_literals.h"

#include <stdint.h>
#include <string.h>

#include "triage/ascii.h"

typedef struct info {
  bool exact;         /* set: every text the piece matches */
  te_literal_set set; /* !exact: one of these is in every match; n == 0: nothing required */
} info;

typedef struct parser {
  const char *p, *end;
  bool failed;
  unsigned depth;
} parser;

static info info_any(void) {
  info i;
  i.exact = false;
  i.set.n = 0;
  return i;
}

/* A zero-width piece (anchor, assertion, lookaround, option setting): matches "". */
static info info_empty(void) {
  info i;
  i.exact = true;
  i.set.n = 1;
  i.set.len[0] = 0;
  i.set.s[0][0] = '\0';
  return i;
}

static info info_byte(unsigned char c) {
  info i = info_empty();
  i.set.len[0] = 1;
  i.set.s[0][0] = (char)te_ascii_lower_byte(c);
  i.set.s[0][1] = '\0';
  return i;
}

static info fail(parser *ps) {
  ps->failed = true;
  return info_any();
}

static bool set_add(te_literal_set *s, const char *t, size_t n) {
  for (size_t i = 0; i < s->n; i++)
    if (s->len[i] == n && memcmp(s->s[i], t, n) == 0) return true;
  if (s->n == TE_LITERAL_SET_MAX || n + 1 > TE_LITERAL_MAX_LEN) return false;
  memcpy(s->s[s->n], t, n);
  s->s[s->n][n] = '\0';
  s->len[s->n++] = (unsigned char)n;
  return true;
}

/* All of b added to a; false when a would overflow (a is then partly filled). */
static bool set_unite(te_literal_set *a, const te_literal_set *b) {
  for (size_t i = 0; i < b->n; i++)
    if (!set_add(a, b->s[i], b->len[i])) return false;
  return true;
}

/* Every string of a followed by every string of b; false when that does not fit. */
static bool set_cross(const te_literal_set *a, const te_literal_set *b, te_literal_set *out) {
  out->n = 0;
  char buf[2 * TE_LITERAL_MAX_LEN];
  for (size_t i = 0; i < a->n; i++)
    for (size_t j = 0; j < b->n; j++) {
      memcpy(buf, a->s[i], a->len[i]);
      memcpy(buf + a->len[i], b->s[j], b->len[j]);
      if (!set_add(out, buf, (size_t)a->len[i] + b->len[j])) return false;
    }
  return true;
}

/* What a piece requires of a text holding one of its matches: its set, but nothing when
 * one of its exact texts is "" (the piece may match nothing). */
static te_literal_set required(const info *x) {
  te_literal_set none;
  none.n = 0;
  if (x->exact)
    for (size_t i = 0; i < x->set.n; i++)
      if (x->set.len[i] == 0) return none;
  return x->set;
}

static size_t shortest(const te_literal_set *s) {
  size_t m = TE_LITERAL_MAX_LEN;
  for (size_t i = 0; i < s->n; i++)
    if (s->len[i] < m) m = s->len[i];
  return m;
}

/* Whether requirement a filters better than b. */
static bool better(const te_literal_set *a, const te_literal_set *b) {
  if (a->n == 0) return false;
  if (b->n == 0) return true;
  size_t la = shortest(a), lb = shortest(b);
  return la != lb ? la > lb : a->n < b->n;
}

/* A sequence being read: the exact run since the last inexact piece, whether the whole
 * sequence is still exact, and the best requirement so far. */
typedef struct seq {
  te_literal_set run;
  bool exact;
  te_literal_set best;
} seq;

static void seq_offer(seq *q, const te_literal_set *cand) {
  if (better(cand, &q->best)) q->best = *cand;
}

/* The run ends (an inexact piece follows, or it grew too large): it is a candidate. */
static void seq_flush(seq *q) {
  info run = {true, q->run};
  te_literal_set req = required(&run);
  seq_offer(q, &req);
  q->run = info_empty().set;
}

static void seq_add(seq *q, const info *a) {
  if (a->exact) {
    te_literal_set joined;
    if (set_cross(&q->run, &a->set, &joined)) {
      q->run = joined;
      return;
    }
    q->exact = false;
    seq_flush(q);
    q->run = a->set;
    return;
  }
  q->exact = false;
  seq_flush(q);
  te_literal_set req = required(a);
  seq_offer(q, &req);
}

static info seq_end(seq *q) {
  info r;
  if (q->exact) {
    r.exact = true;
    r.set = q->run;
    return r;
  }
  seq_flush(q);
  r.exact = false;
  r.set = q->best;
  return r;
}

static info alternative(const info *a, const info *b) {
  info r = *a;
  if (a->exact && b->exact && set_unite(&r.set, &b->set)) return r;
  te_literal_set ra = required(a), rb = required(b);
  r.exact = false;
  r.set = ra;
  if (ra.n == 0 || rb.n == 0 || !set_unite(&r.set, &rb)) r.set.n = 0;
  return r;
}

/* a repeated min..max times (max UINT32_MAX: unbounded). */
static info repeat(const info *a, unsigned long min, unsigned long max) {
  if (max == 0) return info_empty();
  if (min == 0) {
    info r = *a;
    if (max == 1 && a->exact && set_add(&r.set, "", 0)) return r;
    return info_any();
  }
  if (min == 1 && max == 1) return *a;
  info r = {false, required(a)};
  return r;
}

static bool at(const parser *ps, char c) { return ps->p < ps->end && *ps->p == c; }

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static bool is_alnum(unsigned char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static unsigned long read_number(parser *ps) {
  unsigned long v = 0;
  while (ps->p < ps->end && is_digit((unsigned char)*ps->p)) {
    if (v < 100000) v = v * 10 + (unsigned long)(*ps->p - '0');
    ps->p++;
  }
  return v;
}

/* {n}, {n,} or {n,m} after a piece; anything else that starts with '{' is refused (PCRE2
 * reads some of it as literal text, which this does not follow). */
static bool read_braces(parser *ps, unsigned long *min, unsigned long *max) {
  ps->p++;
  if (!(ps->p < ps->end && is_digit((unsigned char)*ps->p))) return false;
  *min = *max = read_number(ps);
  if (at(ps, ',')) {
    ps->p++;
    *max = ps->p < ps->end && is_digit((unsigned char)*ps->p) ? read_number(ps) : UINT32_MAX;
  }
  if (!at(ps, '}')) return false;
  ps->p++;
  return true;
}

static info quantified(parser *ps, const info *a) {
  if (ps->p >= ps->end) return *a;
  unsigned long min = 0, max = UINT32_MAX;
  switch (*ps->p) {
    case '*':
      ps->p++;
      break;
    case '+':
      min = 1;
      ps->p++;
      break;
    case '?':
      max = 1;
      ps->p++;
      break;
    case '{':
      if (!read_braces(ps, &min, &max)) return fail(ps);
      break;
    default:
      return *a;
  }
  if (at(ps, '?') || at(ps, '+')) ps->p++; /* lazy or possessive: the same texts */
  if (at(ps, '*') || at(ps, '+') || at(ps, '?') || at(ps, '{')) return fail(ps);
  return repeat(a, min, max);
}

/* Skips a character class (ps->p at '['): one byte of several, so it requires nothing. */
static info class_piece(parser *ps) {
  ps->p++;
  if (at(ps, '^')) ps->p++;
  if (at(ps, ']')) ps->p++; /* a leading ']' is a member */
  while (ps->p < ps->end && *ps->p != ']') {
    if (*ps->p == '\\') {
      if (ps->p + 1 >= ps->end || ps->p[1] == 'Q') return fail(ps);
      ps->p += 2;
    } else if (*ps->p == '[' && ps->p + 1 < ps->end && strchr(":.=", ps->p[1])) {
      const char *close = ps->p + 2;
      while (close + 1 < ps->end && !(close[0] == ps->p[1] && close[1] == ']')) close++;
      if (close + 1 >= ps->end) return fail(ps);
      ps->p = close + 2;
    } else {
      ps->p++;
    }
  }
  if (!at(ps, ']')) return fail(ps);
  ps->p++;
  return info_any();
}

/* The rest of \g or \k: {name}, <name>, 'name', or (\g only) a signed number. */
static info reference_piece(parser *ps) {
  char open = ps->p < ps->end ? *ps->p : '\0';
  char close = open == '{' ? '}' : open == '<' ? '>' : open == '\'' ? '\'' : '\0';
  if (close) {
    ps->p++; /* past the open mark: for 'name' it is the close mark too */
    while (ps->p < ps->end && *ps->p != close) ps->p++;
    if (!at(ps, close)) return fail(ps);
    ps->p++;
    return info_any();
  }
  if (at(ps, '+') || at(ps, '-')) ps->p++;
  if (!(ps->p < ps->end && is_digit((unsigned char)*ps->p))) return fail(ps);
  while (ps->p < ps->end && is_digit((unsigned char)*ps->p)) ps->p++;
  return info_any();
}

static info escape_piece(parser *ps) {
  if (ps->p + 1 >= ps->end) return fail(ps);
  unsigned char e = (unsigned char)ps->p[1];
  ps->p += 2;
  if (e && strchr("dDwWsShHvVRX", e)) return info_any();
  if (e == 'N') return at(ps, '{') ? fail(ps) : info_any();
  if (e == 'p' || e == 'P') {
    if (at(ps, '{')) {
      while (ps->p < ps->end && *ps->p != '}') ps->p++;
      if (!at(ps, '}')) return fail(ps);
    }
    if (ps->p >= ps->end) return fail(ps);
    ps->p++;
    return info_any();
  }
  if (e && strchr("bBAzZGK", e)) return info_empty();
  /* a back reference (or an octal byte) is some text: it only parts its neighbours */
  if (e >= '1' && e <= '9') {
    while (ps->p < ps->end && is_digit((unsigned char)*ps->p)) ps->p++;
    return info_any();
  }
  if (e == 'g' || e == 'k') return reference_piece(ps);
  if (e && strchr("ntrfea", e)) return info_any(); /* one control byte */
  if (is_alnum(e) || e >= 0x80) return fail(ps);   /* \Q, \x, \0, \c, \u, ... */
  return info_byte(e);
}

static info alternation(parser *ps);

/* (?...) after '(' and '?': how the group reads. Returns false when it is refused. */
static bool group_kind(parser *ps, bool *zero_width, bool *comment) {
  char c = ps->p < ps->end ? *ps->p : '\0';
  if (c == ':' || c == '>' || c == '|') {
    ps->p++;
  } else if (c == '=' || c == '!') {
    ps->p++;
    *zero_width = true;
  } else if (c == '<' && ps->p + 1 < ps->end && (ps->p[1] == '=' || ps->p[1] == '!')) {
    ps->p += 2;
    *zero_width = true;
  } else if (c == '<' || c == '\'' || (c == 'P' && ps->p + 1 < ps->end && ps->p[1] == '<')) {
    if (c == 'P') ps->p++;
    char close = *ps->p == '<' ? '>' : '\'';
    ps->p++; /* past the open mark: for (?'name' it is the close mark too */
    while (ps->p < ps->end && *ps->p != close) ps->p++;
    if (!at(ps, close)) return false;
    ps->p++;
  } else if (c == '#') {
    while (ps->p < ps->end && *ps->p != ')') ps->p++;
    *comment = true;
  } else {
    /* option letters: (?i) (?-i) (?s:...); extended mode (x) changes what text is */
    while (ps->p < ps->end && *ps->p && strchr("imnsJU-^", *ps->p)) ps->p++;
    if (at(ps, ')')) {
      *comment = true;
    } else if (at(ps, ':')) {
      ps->p++;
    } else {
      return false;
    }
  }
  return true;
}

static info group_piece(parser *ps) {
  ps->p++;
  bool zero_width = false, comment = false;
  if (at(ps, '*')) return fail(ps); /* (*VERB) and (*UTF): refused */
  if (at(ps, '?')) {
    ps->p++;
    if (!group_kind(ps, &zero_width, &comment)) return fail(ps);
  }
  info in = info_empty();
  if (!comment) {
    if (++ps->depth > TE_LITERAL_MAX_DEPTH) return fail(ps);
    in = alternation(ps);
    ps->depth--;
  }
  if (ps->failed || !at(ps, ')')) return fail(ps);
  ps->p++;
  return zero_width ? info_empty() : in;
}

static info piece(parser *ps) {
  unsigned char c = (unsigned char)*ps->p;
  switch (c) {
    case '(':
      return group_piece(ps);
    case '[':
      return class_piece(ps);
    case '\\':
      return escape_piece(ps);
    case '.':
      ps->p++;
      return info_any();
    case '^':
    case '$':
      ps->p++;
      return info_empty();
    case '*':
    case '+':
    case '?':
    case '{':
      return fail(ps);
    default:
      ps->p++;
      return info_byte(c);
  }
}

static info sequence(parser *ps) {
  seq q;
  q.run = info_empty().set;
  q.exact = true;
  q.best.n = 0;
  while (!ps->failed && ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
    info a = piece(ps);
    if (ps->failed) break;
    a = quantified(ps, &a);
    if (ps->failed) break;
    seq_add(&q, &a);
  }
  return seq_end(&q);
}

static info alternation(parser *ps) {
  info acc = sequence(ps);
  while (!ps->failed && at(ps, '|')) {
    ps->p++;
    info b = sequence(ps);
    acc = alternative(&acc, &b);
  }
  return acc;
}

bool te_regex_required(const char *src, te_literal_set *out) {
  out->n = 0;
  if (!src) return false;
  parser ps = {src, src + strlen(src), false, 0};
  info root = alternation(&ps);
  if (ps.failed || ps.p != ps.end) return false;
  te_literal_set req = required(&root);
  if (req.n == 0) return false;
  *out = req;
  return true;
}
