/* list.c - id-keyed entry lists (list.h). */
#include "list.h"

#include <string.h>

bool te_list_push(te_arena *a, te_list *l, te_entry *e) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    te_entry **items = te_arena_alloc(a, cap * sizeof *items);
    if (!items) return false;
    if (l->n) memcpy(items, l->items, l->n * sizeof *items);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = e;
  return true;
}

long te_list_index(const te_list *l, const char *id) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->items[i]->id, id) == 0) return (long)i;
  return -1;
}

te_entry *te_list_find(const te_list *l, const char *id) {
  long i = te_list_index(l, id);
  return i < 0 ? NULL : l->items[i];
}

te_list te_list_clone(te_arena *a, const te_list *l) {
  te_list out = {NULL, 0, 0};
  for (size_t i = 0; i < l->n; i++) te_list_push(a, &out, l->items[i]);
  return out;
}

bool te_list_insert(te_arena *a, te_list *l, size_t at, te_entry *e) {
  if (!te_list_push(a, l, e)) return false;
  memmove(&l->items[at + 1], &l->items[at], (l->n - 1 - at) * sizeof *l->items);
  l->items[at] = e;
  return true;
}

void te_list_remove(te_list *l, size_t at) {
  memmove(&l->items[at], &l->items[at + 1], (l->n - at - 1) * sizeof *l->items);
  l->n--;
}
