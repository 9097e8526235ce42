/*
 * settings.h - validating setting values from a pack and resolving the merged entries
 * into te_settings (private to the engine; the table is triage/settings.h).
 *
 * Ownership: values and resolved arrays live in the arena passed in.
 */
#ifndef TE_SETTINGS_INTERNAL_H
#define TE_SETTINGS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "list.h"
#include "triage/settings.h"
#include "yaml_tree.h"

/* One value of a setting (for a map type: the value of one id). */
typedef struct te_setting_value {
  double number;  /* NUMBER, NUMBER_MAP */
  long integer;   /* INT */
  bool boolean;   /* BOOL */
  int choice;     /* ENUM: index into the choices */
  size_t n_items; /* LIST, LIST_MAP */
  const char **items;
} te_setting_value;

/* A setting set by a pack: the whole value of a plain key, one id of a map (id is
 * "<key>.<map id>"), or a map's marker (map_id NULL), which records that the pack set the
 * map even when it names no id. Entries merge by id, so a later pack replaces one map
 * id without touching the others. */
typedef struct setting_entry {
  te_entry hdr;
  const te_setting_def *def;
  const char *map_id;
  te_setting_value value;
} setting_entry;

/* Parses n as a value of def's type (for a map type: the value of one id), strings
 * interned in a. Returns NULL on success, else the node at fault with a message in msg
 * ("must be between 0 and 100, not 250"; the caller names the key). */
const ty_node *te_setting_parse(const te_setting_def *def, const ty_node *n, te_arena *a,
                                te_setting_value *out, char *msg, size_t cap);

/* Whether id may key def's map (its choices, when it has them); false with the reason
 * in msg ("must be one of a|b, not 'c'"; the caller names the key). */
/* The index of s (len bytes) among choices ("a|b|c"), or -1: a setting's choices, or
 * another '|'-separated list of allowed keys (roofline_pack.c's attention ceiling points). */
int te_choice_index(const char *choices, const char *s, size_t len);

bool te_setting_id_allowed(const te_setting_def *def, const char *id, char *msg, size_t cap);

/* Fills *out from the merged entries (in list order: later ids win, map ids keep their
 * order). set[i] tells whether row i was set (te_setting_def_count() entries). Returns
 * false when out of memory. */
bool te_settings_resolve(const te_list *entries, te_arena *a, te_settings *out, bool *set);

#endif
