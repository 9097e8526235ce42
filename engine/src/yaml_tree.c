/* yaml_tree.c - libyaml events folded into a positioned tree; see yaml_tree.h. */
#include "yaml_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "grow.h"
#include "triage/limits.h"

typedef struct open_node {
  ty_node *node;
  ty_node **kids; /* malloc'd while the node is open, copied to the arena on close */
  size_t n, cap;
  const char *anchor; /* anchor to register when the node closes */
} open_node;

typedef struct anchor_def {
  const char *name;
  ty_node *node; /* NULL while the anchored node is still open */
} anchor_def;

typedef struct builder {
  te_arena *arena;
  te_arena *strings;
  ty_error *err;
  open_node stack[TE_MAX_YAML_DEPTH + 1];
  size_t depth;
  anchor_def anchors[TE_MAX_YAML_ALIASES + 1];
  size_t n_anchors;
  size_t n_anchor_uses; /* anchors plus aliases, the quantity TE_MAX_YAML_ALIASES bounds */
  size_t expanded;      /* nodes after alias expansion */
  ty_node *root;
  bool failed;
} builder;

static void fail_at(builder *b, size_t line0, size_t col0, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_at(builder *b, size_t line0, size_t col0, const char *fmt, ...) {
  if (b->failed) return;
  b->failed = true;
  b->err->line = (unsigned)line0 + 1;
  b->err->col = (unsigned)col0 + 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->err->message, sizeof b->err->message, fmt, ap);
  va_end(ap);
}

static int push_kid(builder *b, open_node *o, ty_node *kid) {
  ty_node **kids = te_grow(o->kids, &o->cap, o->n + 1, sizeof *kids, 8);
  if (!kids) return -1;
  o->kids = kids;
  o->kids[o->n++] = kid;
  (void)b;
  return 0;
}

/* Attaches a finished node to its parent (or makes it the root). */
static void attach(builder *b, ty_node *node) {
  size_t line0 = node->line - 1, col0 = node->col - 1;
  if (b->depth == 0) {
    if (b->root) {
      fail_at(b, line0, col0, "a rule pack holds exactly one YAML document");
      return;
    }
    b->root = node;
    return;
  }
  open_node *parent = &b->stack[b->depth - 1];
  if (parent->node->kind == TY_MAP && parent->n % 2 == 0 && node->kind != TY_SCALAR) {
    fail_at(b, line0, col0, "mapping keys must be plain strings");
    return;
  }
  parent->node->weight += node->weight;
  if (push_kid(b, parent, node) != 0) fail_at(b, line0, col0, "out of memory");
}

static int key_order(const void *pa, const void *pb) {
  const ty_node *a = *(const ty_node *const *)pa, *b = *(const ty_node *const *)pb;
  int c = strcmp(a->str, b->str);
  if (c) return c;
  return a->line != b->line ? (a->line < b->line ? -1 : 1)
                            : (a->col < b->col ? -1 : a->col > b->col);
}

/* Duplicate keys, found by sorting so a hostile mapping with many keys stays fast. */
static void check_duplicate_keys(builder *b, const ty_node *map) {
  if (map->n < 2) return;
  const ty_node **keys = malloc(map->n * sizeof *keys);
  if (!keys) return;
  for (size_t i = 0; i < map->n; i++) keys[i] = map->items[2 * i];
  qsort(keys, map->n, sizeof *keys, key_order);
  for (size_t i = 1; i < map->n; i++) {
    if (strcmp(keys[i - 1]->str, keys[i]->str) == 0) {
      fail_at(b, keys[i]->line - 1, keys[i]->col - 1, "duplicate key '%.100s' (first at line %u)",
              keys[i]->str, keys[i - 1]->line);
      break;
    }
  }
  free(keys);
}

static bool count_node(builder *b, size_t weight, const yaml_mark_t *mark) {
  b->expanded += weight;
  if (b->expanded > TE_MAX_YAML_NODES) {
    fail_at(b, mark->line, mark->column,
            "rule pack expands to more than %u YAML nodes (limit TE_MAX_YAML_NODES)",
            (unsigned)TE_MAX_YAML_NODES);
    return false;
  }
  return true;
}

static bool use_anchor(builder *b, const yaml_mark_t *mark) {
  if (++b->n_anchor_uses > TE_MAX_YAML_ALIASES) {
    fail_at(b, mark->line, mark->column,
            "more than %d YAML anchors and aliases (limit TE_MAX_YAML_ALIASES)",
            TE_MAX_YAML_ALIASES);
    return false;
  }
  return true;
}

static ty_node *new_node(builder *b, ty_kind kind, const yaml_event_t *ev) {
  ty_node *n = te_arena_alloc(b->arena, sizeof *n);
  if (!n) {
    fail_at(b, ev->start_mark.line, ev->start_mark.column, "out of memory");
    return NULL;
  }
  n->kind = kind;
  n->line = (unsigned)ev->start_mark.line + 1;
  n->col = (unsigned)ev->start_mark.column + 1;
  n->end_line = (unsigned)ev->end_mark.line + 1;
  n->weight = 1;
  return n;
}

static bool define_anchor(builder *b, const unsigned char *name, ty_node *node,
                          const yaml_mark_t *mark) {
  if (!name) return true;
  if (!use_anchor(b, mark)) return false;
  const char *s = te_arena_intern(b->arena, (const char *)name);
  if (!s) return false;
  for (size_t i = 0; i < b->n_anchors; i++) {
    if (b->anchors[i].name == s) { /* YAML allows redefinition: the later one wins */
      b->anchors[i].node = node;
      return true;
    }
  }
  b->anchors[b->n_anchors].name = s;
  b->anchors[b->n_anchors].node = node;
  b->n_anchors++;
  return true;
}

static void on_scalar(builder *b, const yaml_event_t *ev) {
  const yaml_mark_t *mark = &ev->start_mark;
  if (!count_node(b, 1, mark)) return;
  ty_node *n = new_node(b, TY_SCALAR, ev);
  if (!n) return;
  size_t len = ev->data.scalar.length;
  if (memchr(ev->data.scalar.value, '\0', len)) {
    fail_at(b, mark->line, mark->column, "string contains a NUL character");
    return;
  }
  n->str = te_arena_intern_n(b->strings, (const char *)ev->data.scalar.value, len);
  n->len = len;
  n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.plain_implicit;
  n->single_quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE;
  n->double_quoted = ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
  if (!n->str) {
    fail_at(b, mark->line, mark->column, "out of memory");
    return;
  }
  if (!define_anchor(b, ev->data.scalar.anchor, n, mark)) return;
  attach(b, n);
}

static void on_open(builder *b, const yaml_event_t *ev, ty_kind kind) {
  const yaml_mark_t *mark = &ev->start_mark;
  if (b->depth >= TE_MAX_YAML_DEPTH) {
    fail_at(b, mark->line, mark->column, "YAML nesting deeper than %d (limit TE_MAX_YAML_DEPTH)",
            TE_MAX_YAML_DEPTH);
    return;
  }
  if (!count_node(b, 1, mark)) return;
  ty_node *n = new_node(b, kind, ev);
  if (!n) return;
  const unsigned char *anchor =
      kind == TY_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
  if (!define_anchor(b, anchor, NULL, mark)) return; /* open: aliases to it are refused */
  open_node *o = &b->stack[b->depth++];
  memset(o, 0, sizeof *o);
  o->node = n;
  o->anchor = anchor ? te_arena_intern(b->arena, (const char *)anchor) : NULL;
}

static void on_close(builder *b, const yaml_event_t *ev) {
  if (b->depth == 0) return;
  open_node *o = &b->stack[--b->depth];
  ty_node *n = o->node;
  n->end_line = (unsigned)ev->end_mark.line + 1;
  n->items = te_arena_dup(b->arena, o->kids, o->n * sizeof *o->kids);
  n->n = n->kind == TY_MAP ? o->n / 2 : o->n;
  free(o->kids);
  o->kids = NULL;
  if (o->n && !n->items) {
    fail_at(b, ev->start_mark.line, ev->start_mark.column, "out of memory");
    return;
  }
  if (o->anchor) {
    for (size_t i = 0; i < b->n_anchors; i++)
      if (b->anchors[i].name == o->anchor && !b->anchors[i].node) b->anchors[i].node = n;
  }
  if (n->kind == TY_MAP) check_duplicate_keys(b, n);
  attach(b, n);
}

static void on_alias(builder *b, const yaml_event_t *ev) {
  const yaml_mark_t *mark = &ev->start_mark;
  if (!use_anchor(b, mark)) return;
  const char *name = te_arena_intern(b->arena, (const char *)ev->data.alias.anchor);
  for (size_t i = b->n_anchors; i-- > 0;) {
    if (b->anchors[i].name != name) continue;
    ty_node *target = b->anchors[i].node;
    if (!target) {
      fail_at(b, mark->line, mark->column, "alias '*%.100s' refers to a node that contains it",
              name);
      return;
    }
    if (!count_node(b, target->weight, mark)) return;
    attach(b, target);
    return;
  }
  fail_at(b, mark->line, mark->column, "alias '*%.100s' names no anchor defined before it",
          name ? name : "");
}

/* libyaml reports reader errors (bad UTF-8, control characters) by byte offset only. */
static void offset_to_position(const char *buf, size_t len, size_t off, size_t *line, size_t *col) {
  size_t l = 0, c = 0;
  if (off > len) off = len;
  for (size_t i = 0; i < off; i++) {
    if (buf[i] == '\n') {
      l++;
      c = 0;
    } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
      c++;
    }
  }
  *line = l;
  *col = c;
}

static void parser_failure(builder *b, const yaml_parser_t *p, const char *buf, size_t len) {
  if (p->error == YAML_READER_ERROR) {
    size_t line, col;
    offset_to_position(buf, len, p->problem_offset, &line, &col);
    if (p->problem_value >= 0)
      fail_at(b, line, col, "not a valid UTF-8 text file: %s (byte 0x%02X)",
              p->problem ? p->problem : "unreadable input", (unsigned)p->problem_value & 0xFFu);
    else
      fail_at(b, line, col, "not a valid UTF-8 text file: %s",
              p->problem ? p->problem : "unreadable input");
    return;
  }
  if (p->error == YAML_MEMORY_ERROR) {
    fail_at(b, 0, 0, "out of memory while parsing YAML");
    return;
  }
  const char *problem = p->problem ? p->problem : "unknown problem";
  if (p->context)
    fail_at(b, p->problem_mark.line, p->problem_mark.column, "YAML syntax error: %s %s", problem,
            p->context);
  else
    fail_at(b, p->problem_mark.line, p->problem_mark.column, "YAML syntax error: %s", problem);
}

ty_node *ty_parse(te_arena *node_arena, te_arena *string_arena, const char *buf, size_t len,
                  ty_error *err) {
  builder *b = calloc(1, sizeof *b);
  if (!b) {
    snprintf(err->message, sizeof err->message, "out of memory");
    err->line = err->col = 1;
    return NULL;
  }
  b->arena = node_arena;
  b->strings = string_arena;
  b->err = err;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    free(b);
    snprintf(err->message, sizeof err->message, "out of memory");
    err->line = err->col = 1;
    return NULL;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
  size_t documents = 0;
  bool done = false;
  while (!done && !b->failed) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      parser_failure(b, &parser, buf, len);
      break;
    }
    switch (ev.type) {
      case YAML_STREAM_END_EVENT:
        done = true;
        break;
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1)
          fail_at(b, ev.start_mark.line, ev.start_mark.column,
                  "a rule pack holds exactly one YAML document");
        break;
      case YAML_SCALAR_EVENT:
        on_scalar(b, &ev);
        break;
      case YAML_SEQUENCE_START_EVENT:
        on_open(b, &ev, TY_SEQ);
        break;
      case YAML_MAPPING_START_EVENT:
        on_open(b, &ev, TY_MAP);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        on_close(b, &ev);
        break;
      case YAML_ALIAS_EVENT:
        on_alias(b, &ev);
        break;
      default:
        break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  for (size_t i = 0; i < b->depth; i++) free(b->stack[i].kids);
  ty_node *root = b->failed ? NULL : b->root;
  if (!b->failed && (!root || (root->kind == TY_SCALAR && root->plain && root->len == 0))) {
    err->line = 1;
    err->col = 1;
    snprintf(err->message, sizeof err->message, "empty rule pack");
    root = NULL;
  }
  free(b);
  return root;
}

const ty_node *ty_get(const ty_node *map, const char *key) {
  if (!map || map->kind != TY_MAP) return NULL;
  for (size_t i = 0; i < map->n; i++) {
    const ty_node *k = map->items[2 * i];
    if (strcmp(k->str, key) == 0) return map->items[2 * i + 1];
  }
  return NULL;
}
