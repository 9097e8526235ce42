/*
 * report/kmap_json.c - JSON of the kernel map (kmap_json.h).
 */
#include "report/kmap_json.h"

#include <stdlib.h>

cJSON *rp_kmap_sites_json(const an_kmap_entry *e) {
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return NULL;
  for (size_t i = 0; i < e->n_sites; i++) {
    const an_site *s = &e->sites[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) goto fail;
    cJSON_AddItemToArray(arr, o);
    if (!cJSON_AddStringToObject(o, "location", s->location) ||
        !cJSON_AddStringToObject(o, "display_location", s->display_location) ||
        !cJSON_AddNumberToObject(o, "launches", (double)s->launches) ||
        !cJSON_AddNumberToObject(o, "total_us", s->total_us) ||
        !cJSON_AddNumberToObject(o, "share_pct_within_kernel", s->share_pct_within_kernel))
      goto fail;
    if (s->top_cpu_op ? !cJSON_AddStringToObject(o, "top_cpu_op", s->top_cpu_op)
                      : !cJSON_AddNullToObject(o, "top_cpu_op"))
      goto fail;
    if (s->stack ? !cJSON_AddStringToObject(o, "stack", s->stack)
                 : !cJSON_AddNullToObject(o, "stack"))
      goto fail;
  }
  return arr;
fail:
  cJSON_Delete(arr);
  return NULL;
}

static cJSON *payload_json(const an_kmap_payload *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON *ks = o ? cJSON_AddObjectToObject(o, "kernels") : NULL;
  if (!ks) goto fail;
  for (size_t i = 0; i < p->n; i++) {
    const an_kmap_entry *e = &p->entries[i];
    cJSON *eo = cJSON_AddObjectToObject(ks, e->name);
    if (!eo || !cJSON_AddStringToObject(eo, "category", e->category)) goto fail;
    cJSON *sites = rp_kmap_sites_json(e);
    if (!sites) goto fail;
    cJSON_AddItemToObject(eo, "sites", sites);
    if (!cJSON_AddStringToObject(eo, "best_location", e->best_location)) goto fail;
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

char *rp_kernel_map_json(const an_kmap_view *m) {
  cJSON *root = cJSON_CreateObject();
  cJSON *stages = root ? cJSON_AddObjectToObject(root, "stages") : NULL;
  char *text = NULL;
  if (!stages) goto done;
  for (size_t i = 0; i < m->n_stages; i++) {
    cJSON *p = payload_json(&m->stages[i]);
    if (!p) goto done;
    cJSON_AddItemToObject(stages, m->stages[i].stage, p);
  }
  cJSON *g = payload_json(&m->global);
  if (!g) goto done;
  cJSON_AddItemToObject(root, "global", g);
  text = cJSON_Print(root);
done:
  cJSON_Delete(root);
  return text;
}
