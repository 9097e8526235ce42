/*
 * token_index.h - every `tokens:` entry of a rule set in one hash table, so that one pass
 * over a name answers all its token matchers at once (private to the engine).
 *
 * A classifier tries its rules in order and each rule's matcher used to scan the name's
 * tokens for each of its entries: the cost of a name grew with the number of entries in
 * the packs (about 30 % of a run on a trace of many distinct kernel names, docs/
 * performance.md). The index turns that around: each run of whole consecutive tokens of
 * the name no longer than the longest entry is looked up once, and every matcher whose
 * list holds that text is marked. The cost then grows with the name, not the packs.
 *
 * The answer is by definition the one of te_token_form_hit over each matcher's entries
 * (tokens.h); `te_matcher_explain` still scans entry by entry to name the one that hit,
 * and a unit test compares the two on the kernel zoo.
 *
 * Ownership: the index owns its tables and borrows the entry texts (they live in the rule
 * set's arena, which outlives the index); matchers refer to it by slot number only.
 * Read-only after te_token_index_seal, so queries are thread-safe.
 */
#ifndef TE_TOKEN_INDEX_H
#define TE_TOKEN_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokens.h"

typedef struct te_token_index te_token_index;

/* An index for at most n_entries entries (te_token_index_add). */
te_token_index *te_token_index_create(size_t n_entries);
void te_token_index_destroy(te_token_index *ix);

/* Records that matcher slot `slot` lists entry[0..elen) (lower-case alphanumerics; the
 * text is borrowed). Only before te_token_index_seal; false when the index is full. */
bool te_token_index_add(te_token_index *ix, const char *entry, size_t elen, uint32_t slot);

/* Builds the lookup table. False when out of memory (the index is then unusable). */
bool te_token_index_seal(te_token_index *ix);

/* Number of matcher slots (one past the highest slot added). */
size_t te_token_index_slots(const te_token_index *ix);

/* Sets bit s of hits (an array of (slots + 63) / 64 words, zeroed by the caller) for
 * every slot s that lists an entry equal to a run of whole consecutive tokens of f. */
void te_token_index_scan(const te_token_index *ix, const te_token_form *f, uint64_t *hits);

#endif
