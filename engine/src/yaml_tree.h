/*
 * yaml_tree.h - one YAML document as a small tree that remembers where each node was.
 *
 * Validation needs positions long after libyaml's events are gone, and needs to look
 * keys up in any order, so the event stream is folded into this tree first. Hostile
 * input is refused here, before anything interprets it: too deep, too many anchors or
 * aliases, too many nodes after alias expansion, NUL bytes in strings.
 *
 * Ownership: every node lives in the node arena passed to ty_parse. An alias node is the very
 * node its anchor names (the tree is a DAG), so nothing is copied per alias.
 */
#ifndef TE_YAML_TREE_H
#define TE_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"

typedef enum ty_kind { TY_SCALAR = 0, TY_SEQ = 1, TY_MAP = 2 } ty_kind;

typedef struct ty_node {
  ty_kind kind;
  unsigned line, col; /* 1-based start of the node */
  unsigned end_line;  /* 1-based line where the node ends */
  bool plain;         /* a plain, untagged scalar (may be a number, bool or null) */
  bool single_quoted;
  bool double_quoted;
  const char *str; /* scalar text, NUL-terminated */
  size_t len;
  size_t n;               /* sequence items, or mapping pairs */
  struct ty_node **items; /* sequence items; mapping: key 2i, value 2i+1 */
  size_t weight;          /* nodes in this subtree after alias expansion */
} ty_node;

typedef struct ty_error {
  unsigned line, col;
  char message[256];
} ty_error;

/* Parses buf; returns the document root, or NULL with *err filled (position 1-based).
 * Nodes go to node_arena (scratch); scalar text is interned in string_arena, so it can
 * outlive the tree. */
ty_node *ty_parse(te_arena *node_arena, te_arena *string_arena, const char *buf, size_t len,
                  ty_error *err);

/* Mapping lookup by key; NULL when absent or when map is not a mapping. */
const ty_node *ty_get(const ty_node *map, const char *key);

#endif
