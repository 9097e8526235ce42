/*
 * list.h - the id-keyed, ordered entry lists rule packs are validated into and merged by
 * (private to the engine).
 *
 * Every list entry starts with a te_entry (id plus placement). A te_list is an arena-backed
 * vector of entry pointers; growing copies the pointer array into a new arena block, so an
 * older snapshot of a list stays valid (rules.c merges a pack into copies and keeps them
 * only when the whole pack merged cleanly).
 *
 * Ownership: lists and entries live in the arena passed in; nothing here frees memory.
 */
#ifndef TE_LIST_H
#define TE_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "triage/rules.h"

/* First member of every list entry: what the merge needs. */
typedef struct te_entry {
  const char *id;
  const char *before, *after; /* placement of a new id, or NULL */
  te_origin origin;           /* where the entry starts */
  te_origin place_origin;     /* where before:/after: was written */
} te_entry;

typedef struct te_list {
  te_entry **items;
  size_t n, cap;
} te_list;

/* Appends e; false when out of memory. */
bool te_list_push(te_arena *a, te_list *l, te_entry *e);
/* Position of the entry with id, or -1. */
long te_list_index(const te_list *l, const char *id);
te_entry *te_list_find(const te_list *l, const char *id);
/* A copy of l's pointer array (the entries are shared). */
te_list te_list_clone(te_arena *a, const te_list *l);
/* Inserts e at position at (0 <= at <= n). */
bool te_list_insert(te_arena *a, te_list *l, size_t at, te_entry *e);
void te_list_remove(te_list *l, size_t at);

#endif
