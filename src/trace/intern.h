/*
 * trace/intern.h - arena allocator and string interning for one trace (also behind the
 * analysis string table, analysis/strtab.c).
 *
 * A trace keeps millions of events whose names repeat heavily (a few thousand distinct
 * kernel and frame names), so every string is stored once in an arena and events hold a
 * 32-bit id. The table is open addressing over ids; strings never move once stored, so
 * pointers returned by tr_intern_get stay valid until tr_intern_destroy.
 *
 * Ownership: a tr_intern owns its arena, table and every string in it.
 */
#ifndef TRIAGE_TRACE_INTERN_H
#define TRIAGE_TRACE_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_intern tr_intern; /* opaque */

tr_intern *tr_intern_create(void);
void tr_intern_destroy(tr_intern *in);
/* Id of s (len bytes, may hold no NUL); 0 for the empty string; UINT32_MAX when out of
 * memory or ids. The stored copy is NUL-terminated. */
uint32_t tr_intern_put(tr_intern *in, const char *s, size_t len);
/* Id of s when stored, else UINT32_MAX (0 for the empty string); stores nothing. */
uint32_t tr_intern_find(const tr_intern *in, const char *s, size_t len);
/* Number of ids handed out (the empty string's 0 included): ids are 0 .. count - 1. */
size_t tr_intern_count(const tr_intern *in);
/* Stored string of id ("" for 0 or an unknown id). */
const char *tr_intern_get(const tr_intern *in, uint32_t id);
/* Its length in bytes (0 for 0 or an unknown id). */
size_t tr_intern_len(const tr_intern *in, uint32_t id);

/* tr_intern_get and tr_intern_len in one call: the text of id, its length in *len (the
 * empty string and 0 for an id the table does not hold). */
const char *tr_intern_text(const tr_intern *in, uint32_t id, size_t *len);

/* Raw arena allocation with the intern table's lifetime (8-byte aligned). */
void *tr_intern_alloc(tr_intern *in, size_t n);

#endif
