/*
 * pack_parse.h - the validation helpers of pack_load.c, shared with the sections that
 * keep their parsers in files of their own (roofline_pack.c). Private to the engine.
 *
 * Every helper records a FILE:LINE:COL diagnostic on the node at fault and carries on, so
 * one `triage rules check` lists every problem of a pack.
 *
 * Ownership: strings and arrays returned live in the pack's arena (v->a).
 */
#ifndef TE_PACK_PARSE_H
#define TE_PACK_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "list.h"
#include "matcher.h"
#include "registry.h"
#include "yaml_tree.h"

/* One pack being validated. */
typedef struct te_vctx {
  te_registry *reg;
  te_arena *a;
  const char *file;
  te_diags *d;
  size_t errors;
  size_t examples;
} te_vctx;

void te_verr(te_vctx *v, const ty_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
te_origin te_origin_of(const te_vctx *v, const ty_node *n);
/* "a mapping", "a list", "empty", "a scalar". */
const char *te_kind_name(const ty_node *n);
bool te_expect_map(te_vctx *v, const ty_node *n, const char *what);
bool te_expect_seq(te_vctx *v, const ty_node *n, const char *what);
/* Unknown keys are errors (allowed is NULL-terminated). */
void te_check_keys(te_vctx *v, const ty_node *map, const char *const *allowed, const char *what);
bool te_is_null(const ty_node *n);
const char *te_get_str(te_vctx *v, const ty_node *n, const char *what);
const char *te_get_nonempty_str(te_vctx *v, const ty_node *n, const char *what);
bool te_get_num(te_vctx *v, const ty_node *n, const char *what, double lo, double hi, double *out);
bool te_get_int(te_vctx *v, const ty_node *n, const char *what, long lo, long hi, long *out);
bool te_get_bool(te_vctx *v, const ty_node *n, const char *what, bool *out);
/* A list of non-empty strings; NULL with *n_out == 0 for an empty list or an error. */
const char **te_get_str_list(te_vctx *v, const ty_node *n, const char *what, size_t *n_out);
/* A matcher: inline mapping or the name of a named matcher. */
bool te_parse_mref(te_vctx *v, const ty_node *n, const char *what, te_mref *out);

/* Id-keyed lists: each item a mapping with id / before / after (HEADER_KEYS). */
#define HEADER_KEYS "id", "before", "after"
typedef te_entry *(*te_item_parser)(te_vctx *v, const ty_node *item, const char *what, void *ctx);
bool te_parse_header(te_vctx *v, const ty_node *item, const char *what, te_entry *e);
/* A new arena entry of `size` bytes whose te_entry sits at `hdr_offset`, with the item's
 * keys checked against `keys` and its header parsed; NULL when out of memory or the
 * header is bad (the error is recorded). TE_ENTRY_NEW names the type instead. */
void *te_entry_new(te_vctx *v, const ty_node *item, const char *what, const char *const *keys,
                   size_t size, size_t hdr_offset);
#define TE_ENTRY_NEW(v, item, what, keys, type) \
  ((type *)te_entry_new((v), (item), (what), (keys), sizeof(type), offsetof(type, hdr)))
/* item[key], or NULL with an error naming the entry. */
const ty_node *te_require(te_vctx *v, const ty_node *item, const char *key, const char *what,
                          const te_entry *e);
void te_parse_list(te_vctx *v, const ty_node *n, const char *what, te_list *out,
                   te_item_parser parse, void *ctx);

#endif
