/*
 * tokens.h - the identifier-token form of a kernel name, for `tokens:` matchers
 * (docs/rules.md, "Matchers").
 *
 * Kernel names glue words together in several ways: separators (`fused_add_rmsnorm`,
 * `at::native::`), CamelCase (`FusedAddRMSNormKernel`), letters against digits (`fp8`,
 * `sm90`), and Itanium mangling, where identifiers are length-prefixed
 * (`_ZN5aiter24add_rmsnorm_quant_kernelI...`). The token form is the lower-cased
 * alphanumerics of the name with a mark where each token starts, so an entry such as
 * `rmsnorm` hits `RMSNorm`, `rms_norm` and `add_rmsnorm_quant` but not `rmsnorms`, and
 * `quant` never hits `unquantized`.
 *
 * Ownership: a te_token_form owns its buffers (te_token_form_free).
 */
#ifndef TE_TOKENS_H
#define TE_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct te_token_form {
  char *text; /* lower-case alphanumerics of every token, concatenated */
  size_t len;
  unsigned char *starts; /* starts[i] != 0: a token starts at text[i]; starts[len] = 1 */
  size_t *pos;           /* the token starts, ascending (n_tokens of them) */
  size_t n_tokens;
} te_token_form;

/* Whether te_token_form_build reads s[0..len) as an Itanium-mangled name. */
static inline bool te_token_form_mangled(const char *s, size_t len) {
  return len > 2 && s[0] == '_' && s[1] == 'Z';
}

/* Builds the token form of s[0..len). A name starting with "_Z" is read as a mangled
 * name: only its length-prefixed identifiers contribute tokens (the type codes between
 * them are not words). Returns false when out of memory. */
bool te_token_form_build(te_token_form *f, const char *s, size_t len);
void te_token_form_free(te_token_form *f);

/* True when entry (already lower-case alphanumerics, elen > 0) equals a run of whole
 * consecutive tokens of f. One entry at a time: matching answers all entries of a rule
 * set at once with token_index.h; this scan serves explanations (which name the entry). */
bool te_token_form_hit(const te_token_form *f, const char *entry, size_t elen);

#endif
