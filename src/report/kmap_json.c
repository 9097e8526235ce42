/*
 * report/kmap_json.c - JSON of the kernel map (kmap_json.h).
 */
#include "report/kmap_json.h"

#include <stdlib.h>

#include "report/json_stream.h"

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

/* One entry's members: category, sites, best location. */
static cJSON *entry_json(const an_kmap_entry *e) {
  cJSON *eo = cJSON_CreateObject();
  if (!eo || !cJSON_AddStringToObject(eo, "category", e->category)) goto fail;
  cJSON *sites = rp_kmap_sites_json(e);
  if (!sites) goto fail;
  cJSON_AddItemToObject(eo, "sites", sites);
  if (!cJSON_AddStringToObject(eo, "best_location", e->best_location)) goto fail;
  return eo;
fail:
  cJSON_Delete(eo);
  return NULL;
}

/* {"kernels": {name: entry, ...}}, one entry at a time. */
static bool payload_stream(rp_jstream *w, const an_kmap_payload *p) {
  bool ok = true;
  rp_jstream_object_open(w);
  rp_jstream_key(w, "kernels");
  rp_jstream_object_open(w);
  for (size_t i = 0; ok && i < p->n; i++) {
    rp_jstream_key(w, p->entries[i].name);
    ok = rp_jstream_value_take(w, entry_json(&p->entries[i]));
  }
  rp_jstream_object_close(w);
  rp_jstream_object_close(w);
  return ok;
}

int rp_kernel_map_write(FILE *out, const an_kmap_view *m) {
  rp_jstream w;
  rp_jstream_begin(&w, out);
  bool ok = true;
  rp_jstream_key(&w, "stages");
  rp_jstream_object_open(&w);
  for (size_t i = 0; ok && i < m->n_stages; i++) {
    rp_jstream_key(&w, m->stages[i].stage);
    ok = payload_stream(&w, &m->stages[i]);
  }
  rp_jstream_object_close(&w);
  rp_jstream_key(&w, "global");
  ok = ok && payload_stream(&w, &m->global);
  return rp_jstream_end(&w, ok);
}
