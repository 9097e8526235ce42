/* tokens.c - the identifier-token form of a name; see tokens.h. */
#include "tokens.h"

#include <stdlib.h>
#include <string.h>

#include "triage/ascii.h"

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static bool is_alnum(unsigned char c) { return is_digit(c) || is_upper(c) || is_lower(c); }
static bool is_ident(unsigned char c) { return is_alnum(c) || c == '_'; }

/* Appends the tokens of seg[0..n) to f. A token starts after a non-alphanumeric byte, at
 * a lower-to-upper step (`addRms`), at the last capital of an acronym that runs into a
 * word (`RMSNorm`: RMS|Norm), and where letters meet digits (`fp8`: fp|8). The first
 * byte of every segment starts a token. */
static void append_tokens(te_token_form *f, const char *seg, size_t n) {
  bool pending = true;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)seg[i];
    if (!is_alnum(c)) {
      pending = true;
      continue;
    }
    bool start = pending;
    if (!start && i > 0) {
      unsigned char p = (unsigned char)seg[i - 1];
      unsigned char nx = i + 1 < n ? (unsigned char)seg[i + 1] : 0;
      start = (is_lower(p) && is_upper(c)) || (is_upper(p) && is_upper(c) && is_lower(nx)) ||
              (is_digit(p) != is_digit(c));
    }
    f->starts[f->len] = start ? 1 : 0;
    f->text[f->len++] = (char)te_ascii_lower_byte(c);
    pending = false;
  }
}

/* True when the source-name length at s[i] may start here: right after the previous
 * identifier, or after a mangling code that is followed by a name (nested-name N, _Z,
 * template-args I, end E, cv/ref/pointer qualifiers, a substitution's closing _, St).
 * Literal type codes (Li64E, DF16b) precede numbers that are not lengths. This is not a
 * demangler: a stray number read as a length yields a junk token, never a crash. */
static bool length_may_start(const char *s, size_t i, size_t prev_end) {
  if (i == prev_end) return true;
  unsigned char p = (unsigned char)s[i - 1];
  if (p && strchr("NZIEKVRPO_", p)) return true;
  return p == 't' && i >= 2 && s[i - 2] == 'S';
}

/* Tokens of the length-prefixed identifiers of an Itanium-mangled name; returns how many
 * identifiers were found. */
static size_t append_mangled(te_token_form *f, const char *s, size_t len) {
  size_t found = 0, prev_end = 2, i = 2;
  while (i < len) {
    if (!is_digit((unsigned char)s[i]) || is_digit((unsigned char)s[i - 1])) {
      i++;
      continue;
    }
    bool may = length_may_start(s, i, prev_end);
    size_t n = 0, j = i;
    while (j < len && is_digit((unsigned char)s[j]) && n <= len)
      n = n * 10 + (size_t)(s[j++] - '0');
    /* E<digits>E is the value of a literal whose enum type just closed (`...EnumE1E`). */
    if (s[i - 1] == 'E' && j < len && s[j] == 'E') may = false;
    bool ok = may && n > 0 && n <= len - j &&
              (s[j] == '_' || is_upper((unsigned char)s[j]) || is_lower((unsigned char)s[j]));
    for (size_t k = j; ok && k < j + n; k++) ok = is_ident((unsigned char)s[k]);
    if (!ok) {
      i = j;
      continue;
    }
    append_tokens(f, s + j, n);
    found++;
    i = prev_end = j + n;
  }
  return found;
}

bool te_token_form_build(te_token_form *f, const char *s, size_t len) {
  memset(f, 0, sizeof *f);
  /* one block: text, starts, then the aligned token-start positions */
  size_t pos_off = (2 * (len + 1) + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t);
  char *block = malloc(pos_off + (len + 1) * sizeof(size_t));
  if (!block) return false;
  f->text = block;
  f->starts = (unsigned char *)block + len + 1;
  f->pos = (size_t *)(void *)(block + pos_off);
  if (!te_token_form_mangled(s, len) || append_mangled(f, s, len) == 0) {
    f->len = 0;
    append_tokens(f, s, len);
  }
  f->starts[f->len] = 1;
  f->text[f->len] = '\0';
  for (size_t i = 0; i < f->len; i++)
    if (f->starts[i]) f->pos[f->n_tokens++] = i;
  return true;
}

void te_token_form_free(te_token_form *f) {
  free(f->text); /* the block holding starts and pos too */
  memset(f, 0, sizeof *f);
}

bool te_token_form_hit(const te_token_form *f, const char *entry, size_t elen) {
  if (!elen || elen > f->len) return false;
  for (size_t k = 0; k < f->n_tokens; k++) {
    size_t i = f->pos[k];
    if (i + elen > f->len) break;
    if (!f->starts[i + elen] || f->text[i] != entry[0]) continue;
    if (memcmp(f->text + i, entry, elen) == 0) return true;
  }
  return false;
}
