/*
 * report/report_json.c - the JSON document (schemas/report.schema.json): the run's facts,
 * each stage with its rows, then the overlap, the summary and the ranks (report.h rp_json).
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph_staging.h"
#include "analysis/summary.h"
#include "report/item_text.h"
#include "report/json_stream.h"
#include "report/kmap_json.h"
#include "report/overlap_report.h"
#include "report/ranks_report.h"
#include "report/report.h"
#include "report/text.h"
#include "report/timeline_report.h"

static cJSON *str_array(const char *const *v, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; i++) {
    cJSON *s = cJSON_CreateString(v[i]);
    if (!s) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, s);
  }
  return a;
}

static bool add_str_or_null(cJSON *o, const char *k, const char *v) {
  return v ? cJSON_AddStringToObject(o, k, v) != NULL : cJSON_AddNullToObject(o, k) != NULL;
}

/* Adds a rendered text member and frees it; false when it is NULL or cannot be added. */
static bool add_owned(cJSON *o, const char *k, char *v) {
  bool ok = v && cJSON_AddStringToObject(o, k, v) != NULL;
  free(v);
  return ok;
}

/* One kernel row, or NULL when out of memory. */
static bool roofline_shapes_json(cJSON *o, const an_roofline *f) {
  cJSON *a = cJSON_AddArrayToObject(o, "shapes");
  for (size_t i = 0; a && i < f->n_shapes; i++) {
    const an_roofline_shape *sh = &f->shapes[i];
    cJSON *e = cJSON_CreateObject();
    if (!e) return false;
    cJSON_AddItemToArray(a, e);
    if (!cJSON_AddStringToObject(e, "op", sh->op) ||
        !cJSON_AddStringToObject(e, "dims", sh->dims) ||
        !cJSON_AddNumberToObject(e, "launches", (double)sh->launches) ||
        !cJSON_AddNumberToObject(e, "flops", sh->flops) ||
        !cJSON_AddNumberToObject(e, "bytes", sh->bytes) ||
        !cJSON_AddNumberToObject(e, "time_us", an_round3(sh->time_us)))
      return false;
  }
  return a != NULL;
}

/* A row's roofline object (docs/roofline.md), or JSON null when it has none. */
static cJSON *roofline_json(const an_roofline *f) {
  if (!f) return cJSON_CreateNull();
  bool memory = f->limiter == AN_LIMIT_MEMORY;
  cJSON *o = cJSON_CreateObject();
  if (o && cJSON_AddNumberToObject(o, "flops", f->flops) &&
      cJSON_AddNumberToObject(o, "bytes", f->bytes) &&
      cJSON_AddNumberToObject(o, "launches_with_shapes", (double)f->launches_with_shapes) &&
      cJSON_AddStringToObject(o, "shapes_source", rp_shape_source(f->source)) &&
      cJSON_AddNumberToObject(o, "time_us", an_round3(f->time_us)) &&
      cJSON_AddNumberToObject(o, "steps_time_us", an_round3(f->steps_time_us)) &&
      cJSON_AddNumberToObject(o, "bound_us", an_round3(f->bound_us)) &&
      cJSON_AddNumberToObject(o, "achieved_pct", an_round3(f->achieved_pct)) &&
      cJSON_AddStringToObject(o, "limiter", rp_limiter(f->limiter)) &&
      cJSON_AddBoolToObject(o, "balanced", f->balanced) &&
      cJSON_AddBoolToObject(o, "fused_flops", f->fused_flops) &&
      cJSON_AddNumberToObject(o, "terms_ratio", an_round3(an_roofline_terms_ratio(f))) &&
      add_str_or_null(o, "dtype", f->dtype) && cJSON_AddStringToObject(o, "family", f->family) &&
      cJSON_AddNumberToObject(o, "achieved_tbs", an_round3(f->achieved_tbs)) &&
      cJSON_AddNumberToObject(o, "achieved_tflops", an_round3(f->achieved_tflops)) &&
      cJSON_AddNumberToObject(o, "attainable", an_round3(f->attainable)) &&
      cJSON_AddStringToObject(o, "attainable_unit", memory ? "TB/s" : "TFLOP/s") &&
      cJSON_AddStringToObject(o, "attainable_basis", rp_attainable_basis(f->attainable_basis)) &&
      add_str_or_null(o, "attainable_kernel", f->attainable_kernel) &&
      cJSON_AddBoolToObject(o, "attainable_parity", f->parity) &&
      cJSON_AddBoolToObject(o, "dequantises", f->dequant) &&
      add_str_or_null(o, "size_unmatched_kernel", f->size_kernel) &&
      cJSON_AddBoolToObject(o, "attainable_own_size", f->size_own) &&
      cJSON_AddNumberToObject(o, "device_attainable", an_round3(f->device_rate)) &&
      cJSON_AddNumberToObject(o, "of_attainable_pct", an_round3(f->of_attainable_pct)) &&
      cJSON_AddNumberToObject(o, "headroom_us", an_round3(f->headroom_us)) &&
      cJSON_AddNumberToObject(o, "headroom_device_us", an_round3(f->headroom_device_us)) &&
      cJSON_AddNumberToObject(o, "latency_floor_us", an_round3(f->latency_floor_us)) &&
      cJSON_AddNumberToObject(o, "floored_launches", (double)f->floored_launches) &&
      cJSON_AddBoolToObject(o, "latency_bound", f->latency_bound) && roofline_shapes_json(o, f))
    return o;
  cJSON_Delete(o);
  return NULL;
}

static cJSON *kernel_json(const an_stage_report *st, const an_kernel_row *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddStringToObject(o, "name", r->name) ||
      !cJSON_AddStringToObject(o, "category", r->category) ||
      !cJSON_AddStringToObject(o, "kind", r->kind) ||
      !cJSON_AddNumberToObject(o, "total_us", an_round3(r->total_us)) ||
      !cJSON_AddNumberToObject(o, "max_us", an_round3(r->max_us)) ||
      !cJSON_AddNumberToObject(o, "steps_us", an_round3(r->steps_us)) ||
      !cJSON_AddNumberToObject(o, "per_step_us", an_round3(rp_kernel_per_step_us(st, r))) ||
      !cJSON_AddNumberToObject(o, "opaque_steps_us", an_round3(r->opaque_steps_us)) ||
      !cJSON_AddNumberToObject(
          o, "graph_staging_us",
          an_round3(an_graph_staging_us(st->graph_staging, st->id, r->name))) ||
      !cJSON_AddNumberToObject(o, "launches", (double)r->launches) ||
      !cJSON_AddNumberToObject(o, "share_pct", an_round3(r->share_pct)) ||
      !cJSON_AddBoolToObject(o, "shown", r->shown) ||
      !add_owned(o, "location", rp_kernel_location_cell(r)) ||
      !cJSON_AddBoolToObject(o, "partial_site", r->partial_site) ||
      !cJSON_AddStringToObject(
          o, "location_kind",
          rp_location_kind_id(r->n_shown_sites ? r->shown_sites[0]->kind : AN_LOCATION_LAUNCH)) ||
      !add_owned(o, "cpu_op", rp_kernel_cpu_op_cell(r)))
    goto fail;
  cJSON *sites = r->entry ? rp_kmap_sites_json(r->entry) : cJSON_CreateArray();
  if (!sites) goto fail;
  cJSON_AddItemToObject(o, "sites", sites);
  if (!add_str_or_null(o, "best_location", r->entry ? r->entry->best_location : NULL)) goto fail;
  cJSON *roof = roofline_json(an_row_roofline(st, r));
  if (!roof) goto fail;
  cJSON_AddItemToObject(o, "roofline", roof);
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

/* Issue 31: whether the row is something to do (state), the fused path in use, the gate
 * facts the trace left unknown and the share of chained launches. */
static bool fuse_state_json(cJSON *o, const an_fuse_row *r) {
  cJSON *unk = cJSON_AddArrayToObject(o, "unknown_gates");
  for (unsigned b = 1; unk && b && b <= r->unknown_gates; b <<= 1)
    if ((r->unknown_gates & b) && rp_gate_fact(b))
      cJSON_AddItemToArray(unk, cJSON_CreateString(rp_gate_fact(b)));
  return unk && cJSON_AddStringToObject(o, "state", rp_fuse_state(r->state)) &&
         cJSON_AddBoolToObject(o, "fused_in_use", r->fused_in_use) &&
         cJSON_AddNumberToObject(o, "chained_pct", an_round3(r->chained_pct));
}

/* Per candidate path, its repository or null. */
static cJSON *repo_array(const an_fuse_row *r) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < r->n_candidate_paths; i++) {
    const char *repo = r->candidate_repos ? r->candidate_repos[i] : NULL;
    cJSON *x = repo ? cJSON_CreateString(repo) : cJSON_CreateNull();
    if (!x) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, x);
  }
  return a;
}

/* "since" (only when the pattern states it; review 18 defect 10): the framework release
 * that first has the fused path's switch, the change that added it, and the switch (review
 * 19 defect 12). */
static bool fuse_since_json(cJSON *o, const an_fuse_row *r) {
  cJSON *x = cJSON_AddObjectToObject(o, "since");
  return x && add_str_or_null(x, "framework", r->since_framework) &&
         cJSON_AddStringToObject(x, "version", r->since_version) &&
         add_str_or_null(x, "change", r->since_change) &&
         add_str_or_null(x, "switch", r->since_switch);
}

static bool fuse_json(cJSON *fs, const an_fuse_row *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(fs, o);
  cJSON *paths = str_array(r->candidate_paths, r->n_candidate_paths);
  cJSON *repos = repo_array(r);
  cJSON *rel = str_array(r->related, r->n_related);
  if (!paths || !repos || !rel) {
    cJSON_Delete(paths);
    cJSON_Delete(repos);
    cJSON_Delete(rel);
    return false;
  }
  cJSON_AddItemToObject(o, "candidate_paths", paths);
  cJSON_AddItemToObject(o, "candidate_repositories", repos);
  cJSON_AddItemToObject(o, "related_kernels", rel);
  return cJSON_AddStringToObject(o, "id", r->pattern_id) &&
         cJSON_AddStringToObject(o, "pattern", r->pattern_name) &&
         cJSON_AddStringToObject(o, "origin", rp_fusion_origin(r->origin)) &&
         cJSON_AddStringToObject(o, "confidence", rp_fuse_confidence(r->confidence)) &&
         add_owned(o, "status", rp_fuse_status(r)) &&
         cJSON_AddBoolToObject(o, "active_match", r->match == AN_FUSION_DIRECT) &&
         cJSON_AddNumberToObject(o, "related_us", an_round3(r->related_us)) &&
         cJSON_AddNumberToObject(o, "shared_us", an_round3(r->shared_us)) &&
         cJSON_AddNumberToObject(o, "share_pct", an_round3(r->share_pct)) &&
         cJSON_AddNumberToObject(o, "estimated_saving_us", an_round3(r->saving_us)) &&
         cJSON_AddNumberToObject(o, "estimated_saving_per_step_us", an_round3(r->saving_step_us)) &&
         cJSON_AddStringToObject(o, "saving_basis", rp_saving_basis(r->saving_basis)) &&
         (!r->saving_largest_in ||
          cJSON_AddStringToObject(o, "saving_largest_counted_in", r->saving_largest_in)) &&
         cJSON_AddBoolToObject(o, "shown", r->shown) &&
         add_owned(o, "evidence", rp_fuse_evidence_cell(r)) &&
         add_owned(o, "current_locations", rp_fuse_locations_cell(r)) &&
         add_owned(o, "rationale", rp_fuse_rationale(r)) && fuse_state_json(o, r) &&
         (!r->since_version || fuse_since_json(o, r));
}

static bool category_json(cJSON *cs, const an_category_time *c) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(cs, o);
  return cJSON_AddStringToObject(o, "category", c->category) &&
         cJSON_AddNumberToObject(o, "total_us", an_round3(c->total_us)) &&
         cJSON_AddNumberToObject(o, "share_pct", an_round3(c->share_pct)) &&
         cJSON_AddNumberToObject(o, "kernels", (double)c->kernels) &&
         cJSON_AddNumberToObject(o, "steps_us", an_round3(c->steps_us));
}

/* How the stage ran (issue 31, fusion gates): the execution modes seen and the tokens
 * of its steps; null when the trace does not say. */
static bool execution_json(cJSON *s, const an_exec_facts *x) {
  static const char *const MODES[] = {"eager", "graph", "compile"};
  cJSON *e = cJSON_AddObjectToObject(s, "execution");
  cJSON *m = e ? cJSON_AddArrayToObject(e, "modes") : NULL;
  for (size_t i = 0; m && i < 3; i++)
    if (x->modes & (1u << i)) cJSON_AddItemToArray(m, cJSON_CreateString(MODES[i]));
  return m &&
         cJSON_AddItemToObject(
             e, "tokens_min",
             x->tokens_min ? cJSON_CreateNumber((double)x->tokens_min) : cJSON_CreateNull()) &&
         cJSON_AddItemToObject(
             e, "tokens_max",
             x->tokens_max ? cJSON_CreateNumber((double)x->tokens_max) : cJSON_CreateNull());
}

/* A stage's members before its kernel rows. */
static cJSON *stage_head_json(const an_stage_report *st) {
  cJSON *s = cJSON_CreateObject();
  if (s && cJSON_AddStringToObject(s, "stage", st->id) &&
      cJSON_AddStringToObject(s, "label", st->label) &&
      cJSON_AddNumberToObject(s, "kernel_total_us", an_round3(st->kernel_total_us)) &&
      cJSON_AddBoolToObject(s, "xpu_launch_rows", st->xpu_launch_rows) &&
      execution_json(s, &st->exec))
    return s;
  cJSON_Delete(s);
  return NULL;
}

/* Why a stage's launches have a roofline or not (an_roofline_counts). */
static bool roofline_counts_json(cJSON *s, const an_roofline_counts *n) {
  cJSON *o = cJSON_AddObjectToObject(s, "roofline_counts");
  const size_t v[] = {n->launches,     n->with_shapes, n->from_mapping, n->from_model,
                      n->model_tokens, n->no_op,       n->no_op_graph,  n->no_launch,
                      n->no_shapes,    n->no_model,    n->bad_shapes,   n->no_peak,
                      n->secondary};
  static const char *const k[] = {"launches",     "with_shapes", "from_mapping", "from_model",
                                  "model_tokens", "no_op",       "no_op_graph",  "no_launch",
                                  "no_shapes",    "no_model",    "bad_shapes",   "no_peak",
                                  "secondary"};
  for (size_t i = 0; o && i < sizeof v / sizeof v[0]; i++)
    if (!cJSON_AddNumberToObject(o, k[i], (double)v[i])) return false;
  return o != NULL;
}

/* How near their attainable rate the stage's GEMMs run (an_gemm_rate; null: no matmul row
 * with a roofline). */
static bool gemm_rate_json(cJSON *s, const an_gemm_rate *g) {
  if (!g->matmul_pct) return cJSON_AddNullToObject(s, "gemm_rate") != NULL;
  cJSON *o = cJSON_AddObjectToObject(s, "gemm_rate");
  const double v[] = {g->matmul_pct,  g->near_pct,    g->lo_pct, g->hi_pct,
                      g->peak_lo_pct, g->peak_hi_pct, g->tune_us};
  static const char *const k[] = {"matmul_pct",
                                  "near_pct",
                                  "of_attainable_lo_pct",
                                  "of_attainable_hi_pct",
                                  "of_peak_lo_pct",
                                  "of_peak_hi_pct",
                                  "tune_us"};
  for (size_t i = 0; o && i < sizeof v / sizeof v[0]; i++)
    if (!cJSON_AddNumberToObject(o, k[i], an_round3(v[i]))) return false;
  return o && cJSON_AddBoolToObject(o, "near", g->near) &&
         cJSON_AddNumberToObject(o, "near_rows", (double)g->rows) &&
         add_str_or_null(o, "dtype", g->dtype);
}

/* The device the rooflines use (null members when the GPU is not in the device pack). */
static bool roofline_device_json(cJSON *root, const an_roofline_device *d) {
  cJSON *o = cJSON_AddObjectToObject(root, "roofline_device");
  return o && add_str_or_null(o, "id", d->id) && add_str_or_null(o, "label", d->label) &&
         add_str_or_null(o, "gpu", d->gpu) && cJSON_AddNumberToObject(o, "arch", (double)d->arch) &&
         cJSON_AddNumberToObject(o, "sms", (double)d->sms) &&
         cJSON_AddNumberToObject(o, "hbm_tbs", d->hbm_tbs) &&
         cJSON_AddNumberToObject(o, "attainable_tbs", an_round3(d->attainable_tbs)) &&
         cJSON_AddNumberToObject(o, "latency_floor_us", an_round3(d->latency_floor_us)) &&
         cJSON_AddNumberToObject(o, "pack_floor_us", an_round3(d->pack_floor_us)) &&
         add_str_or_null(o, "floor_basis", d->floor_basis) &&
         cJSON_AddNumberToObject(o, "shortest_us", an_round3(d->shortest_us)) &&
         cJSON_AddNumberToObject(o, "matrix_floor_us", an_round3(d->matrix_floor_us)) &&
         cJSON_AddNumberToObject(o, "pack_matrix_floor_us", an_round3(d->pack_matrix_floor_us)) &&
         cJSON_AddNumberToObject(o, "shortest_matrix_us", an_round3(d->shortest_matrix_us)) &&
         add_str_or_null(o, "source", d->source);
}

/* The known model a decode step's GEMMs were costed from (null members when none). */
static bool roofline_model_json(cJSON *root, const an_roofline_model *m) {
  char from[RP_MODEL_TEXT_BYTES], check[RP_MODEL_TEXT_BYTES], attn[RP_ATTENTION_TEXT_BYTES];
  cJSON *o = cJSON_AddObjectToObject(root, "roofline_model");
  return o && add_str_or_null(o, "id", m->id) && add_str_or_null(o, "label", m->label) &&
         add_str_or_null(o, "from", rp_model_ident(&m->from, from, sizeof from)) &&
         add_str_or_null(o, "source", m->source) && cJSON_AddBoolToObject(o, "used", m->used) &&
         cJSON_AddNumberToObject(o, "tokens", (double)m->tokens) &&
         add_str_or_null(o, "check", rp_model_check(m, check, sizeof check)) &&
         add_str_or_null(o, "attention", rp_attention_check(&m->attention, attn, sizeof attn)) &&
         cJSON_AddBoolToObject(o, "attention_used", m->attention_used);
}

/* A stage's members after its kernel rows: the fuse rows and the time by category. */
static cJSON *stage_tail_json(const an_stage_report *st) {
  cJSON *s = cJSON_CreateObject();
  cJSON *fs = s ? cJSON_AddArrayToObject(s, "fuse") : NULL;
  for (size_t i = 0; fs && i < st->n_fuse; i++)
    if (!fuse_json(fs, &st->fuse[i])) fs = NULL;
  cJSON *cs = fs ? cJSON_AddArrayToObject(s, "categories") : NULL;
  for (size_t i = 0; cs && i < st->n_categories; i++)
    if (!category_json(cs, &st->categories[i])) cs = NULL;
  cJSON *tl = cs && st->timeline ? rp_timeline_json(st->timeline) : NULL;
  if (tl) cJSON_AddItemToObject(s, "timeline", tl);
  if (cs && (tl || !st->timeline) && roofline_counts_json(s, &st->roofline_counts) &&
      gemm_rate_json(s, &st->gemm_rate))
    return s;
  cJSON_Delete(s);
  return NULL;
}

static cJSON *kernel_item(const void *stage, size_t i) {
  const an_stage_report *st = stage;
  return kernel_json(st, &st->kernels[i]);
}

/* Writes a stage: its kernel rows one at a time (a stage may have hundreds of thousands). */
static bool stage_stream(rp_jstream *w, const an_stage_report *st) {
  cJSON *head = stage_head_json(st);
  bool ok = head != NULL;
  rp_jstream_object_open(w);
  rp_jstream_members(w, head);
  ok = ok && rp_jstream_list(w, "kernels", st->n_kernels, kernel_item, st);
  cJSON *tail = ok ? stage_tail_json(st) : NULL;
  rp_jstream_members(w, tail);
  rp_jstream_object_close(w);
  cJSON_Delete(head);
  cJSON_Delete(tail);
  return ok && tail;
}

static bool fact_json(cJSON *ctx, const char *key, cJSON *value, an_source src) {
  cJSON *o = cJSON_AddObjectToObject(ctx, key);
  if (!o || !value) {
    cJSON_Delete(value);
    return false;
  }
  cJSON_AddItemToObject(o, "value", value);
  return cJSON_AddStringToObject(o, "source", rp_source_id(src)) != NULL;
}

static cJSON *str_or_null(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

static const char *topology_name(an_topology t) {
  return t == AN_TOPOLOGY_SINGLE_NODE  ? "single-node"
         : t == AN_TOPOLOGY_MULTI_NODE ? "multi-node"
                                       : NULL;
}

/* "context": each run fact as {value, source}. */
static bool context_json(cJSON *root, const an_run_context *c) {
  cJSON *ctx = cJSON_AddObjectToObject(root, "context");
  char gpu[RP_GPU_BYTES];
  return ctx && fact_json(ctx, "model", str_or_null(c->model.value), c->model.source) &&
         fact_json(ctx, "tp_size", cJSON_CreateNumber((double)c->tp_size.value),
                   c->tp_size.source) &&
         fact_json(ctx, "gpu", str_or_null(rp_gpu(c, gpu, sizeof gpu)), c->gpu.source) &&
         fact_json(ctx, "platform", str_or_null(an_platform_id(c->platform.value)),
                   c->platform.source) &&
         fact_json(ctx, "compute_capability",
                   c->arch.value > 0 ? cJSON_CreateNumber((double)c->arch.value / 10.0)
                                     : cJSON_CreateNull(),
                   c->arch.source) &&
         fact_json(ctx, "topology", str_or_null(topology_name(c->topology.value)),
                   c->topology.source);
}

static bool run_json(cJSON *root, const an_provenance *p) {
  bool two = p->mode == AN_MODE_MAPPING_FORMAL;
  if (!cJSON_AddStringToObject(root, "mode", rp_mode(p)) ||
      !cJSON_AddStringToObject(root, "framework", p->framework.label) ||
      !add_str_or_null(root, "framework_id", p->framework.id) ||
      !add_str_or_null(root, "mapping_framework", two ? p->mapping_framework.label : NULL) ||
      !add_str_or_null(root, "model", p->context.model.value) || !context_json(root, &p->context))
    return false;
  cJSON *inputs = cJSON_AddObjectToObject(root, "inputs");
  cJSON *a = str_array(p->mapping_inputs, p->n_mapping_inputs);
  cJSON *b = str_array(p->formal_inputs, p->n_formal_inputs);
  if (!inputs || !a || !b) {
    cJSON_Delete(a);
    cJSON_Delete(b);
    return false;
  }
  cJSON_AddItemToObject(inputs, "mapping", a);
  cJSON_AddItemToObject(inputs, "formal", b);
  cJSON *ranks = p->n_rank_inputs ? str_array(p->rank_inputs, p->n_rank_inputs) : NULL;
  if (p->n_rank_inputs && !ranks) return false;
  if (ranks) cJSON_AddItemToObject(inputs, "ranks", ranks);
  return cJSON_AddNumberToObject(root, "kernel_min_share_pct", p->kernel_min_share_pct) != NULL;
}

/* The workload kind, its evidence and source. */
static bool workload_json(cJSON *o, const an_workload_fact *w) {
  cJSON *x = cJSON_AddObjectToObject(o, "workload");
  return x && cJSON_AddStringToObject(x, "value", rp_workload(w->value)) &&
         add_str_or_null(x, "evidence", w->evidence) &&
         cJSON_AddStringToObject(x, "source", rp_source_id(w->source));
}

/* Whether the run executed torch.compile'd code, and the name that shows it. */
static bool compiled_json(cJSON *o, const an_compiled_fact *c) {
  cJSON *x = cJSON_AddObjectToObject(o, "compiled");
  return x && cJSON_AddBoolToObject(x, "value", c->compiled) &&
         add_str_or_null(x, "evidence", c->evidence) &&
         cJSON_AddStringToObject(x, "evidence_kind",
                                 !c->compiled   ? "none"
                                 : c->by_kernel ? "kernel"
                                                : "event");
}

/* The step's shape from its attention ops' shapes, or null. */
static bool step_shape_json(cJSON *o, const an_step_shape *s) {
  if (s->phase == AN_PHASE_UNKNOWN) return cJSON_AddNullToObject(o, "step_shape") != NULL;
  cJSON *x = cJSON_AddObjectToObject(o, "step_shape");
  return x && cJSON_AddStringToObject(x, "phase", rp_phase(s->phase)) &&
         cJSON_AddNumberToObject(x, "batch", (double)s->batch) &&
         cJSON_AddNumberToObject(x, "tokens", (double)s->tokens) &&
         cJSON_AddNumberToObject(x, "kv_tokens", (double)s->kv_tokens) &&
         cJSON_AddStringToObject(x, "op", s->op) &&
         cJSON_AddNumberToObject(x, "calls", (double)s->ops) &&
         cJSON_AddNumberToObject(x, "shapes", (double)s->shapes);
}

/* The framework facts with their sources (the run context's are in "context"). */
static bool provenance_json(cJSON *root, const an_provenance *p) {
  cJSON *o = cJSON_AddObjectToObject(root, "provenance");
  return o && fact_json(o, "framework", str_or_null(p->framework.label), p->framework.source) &&
         add_str_or_null(o, "framework_evidence", p->framework.evidence) &&
         fact_json(o, "mapping_framework", str_or_null(p->mapping_framework.label),
                   p->mapping_framework.source) &&
         workload_json(o, &p->workload) && step_shape_json(o, &p->step_shape) &&
         compiled_json(o, &p->compiled) && add_str_or_null(o, "version", p->version);
}

/* The anchors an item's line links (report/item_text.h), into a JSON array. */
typedef struct json_links {
  cJSON *v;
  bool ok;
} json_links;

static void json_link(void *ctx, rp_part part, const char *s, const char *ref) {
  json_links *l = ctx;
  (void)s;
  if (part != RP_PART_LINK) return;
  const cJSON *e; /* a row the line links twice (its not-additive action) is listed once */
  cJSON_ArrayForEach(e, l->v) if (cJSON_IsString(e) && !strcmp(e->valuestring, ref)) return;
  cJSON *x = l->ok ? cJSON_CreateString(ref) : NULL;
  if (x && cJSON_AddItemToArray(l->v, x)) return;
  cJSON_Delete(x);
  l->ok = false;
}

/* The item's line (the words the Markdown and HTML print), its bound, its basis and the
 * evidence rows the line links. */
static bool summary_bound_json(cJSON *o, const an_summary_item *it, an_workload w) {
  char basis[RP_BASIS_BYTES];
  rp_summary_basis(it, w, basis, sizeof basis);
  json_links ev = {cJSON_AddArrayToObject(o, "evidence"), true};
  if (ev.v) rp_item_parts(it, w, json_link, &ev);
  char *text = rp_item_text(it, w);
  bool ok = text && cJSON_AddStringToObject(o, "text", text);
  free(text);
  return ok && ev.v && ev.ok &&
         cJSON_AddStringToObject(o, "action_text", rp_summary_action(it, w)) &&
         cJSON_AddStringToObject(o, "action_id", an_summary_action_id(it->action)) &&
         cJSON_AddNumberToObject(o, "bound_us_per_step", an_round3(it->at_stake_us)) &&
         cJSON_AddNumberToObject(o, "step_us", an_round3(it->step_us)) &&
         cJSON_AddNumberToObject(o, "steps", (double)it->n_steps) &&
         cJSON_AddStringToObject(o, "basis", rp_bound_basis(it->basis)) &&
         cJSON_AddStringToObject(o, "basis_text", basis) &&
         cJSON_AddNumberToObject(o, "basis_us_per_step", an_round3(it->basis_us)) &&
         cJSON_AddNumberToObject(o, "basis_pct", an_round3(it->basis_pct)) &&
         add_str_or_null(o, "what", rp_item_what(it)) &&
         cJSON_AddNumberToObject(o, "count", (double)it->count) &&
         cJSON_AddNumberToObject(o, "detail_us", an_round3(it->detail_us)) &&
         cJSON_AddNumberToObject(o, "first_us", an_round3(an_summary_item_part_us(it)));
}

/* The time-account rows the item's figures sum, with the part of each. */
static bool item_rows_json(cJSON *o, const an_summary_item *it) {
  cJSON *v = cJSON_AddArrayToObject(o, "rows");
  for (size_t k = 0; v && k < it->n_rows; k++) {
    char id[64];
    rp_item_row_anchor(it, k, id, sizeof id);
    cJSON *x = cJSON_CreateObject();
    if (!x) return false;
    cJSON_AddItemToArray(v, x);
    if (!cJSON_AddStringToObject(x, "row", id) ||
        !cJSON_AddStringToObject(x, "part", rp_row_part(it->rows[k].part)))
      return false;
  }
  return v != NULL;
}

/* "alternative": a tuning item's FP8 lever on its kernels (item_text.h), its words, bound
 * and basis, and what both win together; null when none. */
static bool item_alternative_json(cJSON *o, const an_summary_item *it, an_workload w) {
  an_summary_item alt;
  if (!rp_item_alternative(it, &alt)) return cJSON_AddNullToObject(o, "alternative") != NULL;
  char basis[RP_BASIS_BYTES];
  rp_summary_basis(&alt, w, basis, sizeof basis);
  cJSON *x = cJSON_AddObjectToObject(o, "alternative");
  return x && cJSON_AddStringToObject(x, "action_text", rp_summary_action(&alt, w)) &&
         cJSON_AddNumberToObject(x, "bound_us_per_step", an_round3(alt.at_stake_us)) &&
         cJSON_AddStringToObject(x, "basis_text", basis) &&
         cJSON_AddNumberToObject(x, "basis_us_per_step", an_round3(alt.basis_us)) &&
         cJSON_AddNumberToObject(x, "kernels", (double)alt.count) &&
         cJSON_AddNumberToObject(x, "together_us_per_step", an_round3(it->together_us));
}

/* "pooled": a pooled item's members (their anchors, words and bounds), [] for the others. */
static bool item_pool_json(cJSON *o, const an_summary_item *it, an_workload w) {
  cJSON *v = cJSON_AddArrayToObject(o, "pooled");
  for (size_t k = 0; v && k < it->n_pool; k++) {
    const an_summary_item *m = &it->pool[k];
    cJSON *x = cJSON_CreateObject();
    if (!x) return false;
    cJSON_AddItemToArray(v, x);
    cJSON *ks = str_array(m->kernels, m->n_kernels);
    if (!ks) return false;
    cJSON_AddItemToObject(x, "kernels", ks);
    /* a change's pool holds members of unlike kinds: each with its own basis and rows */
    if (!cJSON_AddStringToObject(x, "anchor", m->anchor) ||
        !cJSON_AddStringToObject(x, "kind", rp_summary_kind(m->kind)) ||
        !cJSON_AddStringToObject(x, "action_text", rp_summary_action(m, w)) ||
        !add_str_or_null(x, "what", rp_item_what(m)) ||
        !cJSON_AddNumberToObject(x, "bound_us_per_step", an_round3(m->at_stake_us)) ||
        !cJSON_AddStringToObject(x, "basis", rp_bound_basis(m->basis)) ||
        !cJSON_AddNumberToObject(x, "basis_us_per_step", an_round3(m->basis_us)) ||
        !cJSON_AddNumberToObject(x, "count", (double)m->count) || !item_rows_json(x, m))
      return false;
  }
  return v != NULL;
}

/* "not_additive": the merged item of another action on the same kernels with the largest
 * bound (an_summary_item.not_additive); null when none. */
static bool item_not_additive_json(cJSON *o, const an_summary_item *it) {
  if (!it->not_additive[0]) return cJSON_AddNullToObject(o, "not_additive") != NULL;
  cJSON *x = cJSON_AddObjectToObject(o, "not_additive");
  return x && cJSON_AddStringToObject(x, "anchor", it->not_additive) &&
         cJSON_AddStringToObject(x, "action_id", an_summary_action_id(it->not_additive_action)) &&
         cJSON_AddStringToObject(x, "action", rp_merged_action(it)) &&
         cJSON_AddNumberToObject(x, "bound_us_per_step", an_round3(it->not_additive_us)) &&
         cJSON_AddBoolToObject(x, "additive", it->not_additive_adds);
}

/* "fold": a fold item's GEMM (review 18 defect 5), or the fold after a tuning item of a
 * folding kernel (review 19 defect 4): its kernel row, time per step, the shape that holds
 * the folded kernel's input, that GEMM's time once its tuning item wins (null: none), that
 * item's number (null: not listed), what the fold wins (more than the tuning item, when it
 * follows one), and the slowdown of the reference GEMM at which it stops paying (percent);
 * null when there is no fold or the trace's shapes name no GEMM. */
static bool item_fold_json(cJSON *o, const an_summary_item *it) {
  if ((it->action != AN_ACTION_FOLD_GEMM && !it->fold_then) || !it->fold_row || it->fold_us <= 0)
    return cJSON_AddNullToObject(o, "fold") != NULL;
  cJSON *x = cJSON_AddObjectToObject(o, "fold");
  return x && cJSON_AddNumberToObject(x, "row", (double)(it->fold_row - 1)) &&
         cJSON_AddNumberToObject(x, "gemm_us_per_step", an_round3(it->fold_us)) &&
         add_str_or_null(x, "dims", it->fold_dims) &&
         (it->fold_tuned_us > 0
              ? cJSON_AddNumberToObject(x, "tuned_gemm_us_per_step", an_round3(it->fold_tuned_us))
              : cJSON_AddNullToObject(x, "tuned_gemm_us_per_step")) &&
         (it->fold_after ? cJSON_AddNumberToObject(x, "after_item", (double)it->fold_after)
                         : cJSON_AddNullToObject(x, "after_item")) &&
         cJSON_AddBoolToObject(x, "then", it->fold_then) &&
         cJSON_AddNumberToObject(x, "us_per_step", an_round3(it->fold_more_us)) &&
         add_str_or_null(x, "lever", it->fold_then ? it->fold_lever : NULL) &&
         cJSON_AddNumberToObject(x, "breakeven_pct", an_round3(it->fold_breakeven_pct));
}

/* "step_floor": the decode batch item's memory floor of the step (review 19 defect 9): the
 * bytes its weight GEMMs and its attention (the KV cache) move per step, that floor at the
 * device's HBM peak, and each group's time per step above its part of it; null on other
 * items and when the device is unknown. */
static bool item_step_floor_json(cJSON *o, const an_summary_item *it) {
  if (it->action != AN_ACTION_RAISE_BATCH || it->floor_us <= 0)
    return cJSON_AddNullToObject(o, "step_floor") != NULL;
  cJSON *x = cJSON_AddObjectToObject(o, "step_floor");
  return x && cJSON_AddNumberToObject(x, "hbm_tbs", an_round3(it->floor_hbm_tbs)) &&
         cJSON_AddNumberToObject(x, "us_per_step", an_round3(it->floor_us)) &&
         cJSON_AddNumberToObject(x, "gemm_bytes_per_step", an_round3(it->floor_gemm_bytes)) &&
         cJSON_AddNumberToObject(x, "attention_bytes_per_step", an_round3(it->floor_attn_bytes)) &&
         cJSON_AddNumberToObject(x, "gemm_above_us_per_step", an_round3(it->floor_gemm_above_us)) &&
         cJSON_AddNumberToObject(x, "attention_above_us_per_step",
                                 an_round3(it->floor_attn_above_us));
}

/* "fp32": an FP32 matmul item's figures (review 20 defects 3 and 6): the GEMMs on the CUDA
 * cores and the TF32 matmuls (count, us per step), their share of the stage's matmul time,
 * the peaks, what TF32 and autocast win per step, the lever that leads, the rows with no
 * shapes; null for other items. */
static bool item_fp32_json(cJSON *o, const an_summary_item *it) {
  const an_fp32_lever *l = &it->fp32;
  if (it->action != AN_ACTION_FP32_MATMUL) return cJSON_AddNullToObject(o, "fp32") != NULL;
  cJSON *x = cJSON_AddObjectToObject(o, "fp32");
  return x && cJSON_AddNumberToObject(x, "simt_kernels", (double)l->simt_n) &&
         cJSON_AddNumberToObject(x, "simt_us_per_step", an_round3(l->simt_us)) &&
         cJSON_AddNumberToObject(x, "tf32_kernels", (double)l->tf32_n) &&
         cJSON_AddNumberToObject(x, "tf32_us_per_step", an_round3(l->tf32_us)) &&
         cJSON_AddNumberToObject(x, "matmul_pct", an_round3(l->matmul_pct)) &&
         cJSON_AddNumberToObject(x, "fp32_tflops", l->fp32_peak) &&
         cJSON_AddNumberToObject(x, "tf32_tflops", l->tf32_peak) &&
         cJSON_AddNumberToObject(x, "amp_tflops", l->amp_peak) &&
         add_str_or_null(x, "amp_dtype", l->amp_dtype) &&
         cJSON_AddNumberToObject(x, "tf32_win_us_per_step", an_round3(l->tf32_win_us)) &&
         cJSON_AddNumberToObject(x, "amp_win_us_per_step", an_round3(l->amp_win_us)) &&
         cJSON_AddStringToObject(x, "leads", l->tf32_leads ? "tf32" : "amp") &&
         cJSON_AddBoolToObject(x, "tf32_on", l->tf32_on) &&
         cJSON_AddNumberToObject(x, "no_shapes", (double)l->no_bytes);
}

/* "cast": a cast item's facts (review 20 defect 9): its launches a step, the model's layers
 * (null: no model), the kernels that most often run right after and right before a cast on
 * its stream (full names; null: none) with the share of the casts each neighbours, what a
 * fused cast still costs a step at the next kernel's rate (null: not known, the bound is the
 * casts' whole time) and the packs' hint for that next kernel; null on other items. */
static bool item_cast_json(cJSON *o, const an_summary_item *it) {
  if (it->action != AN_ACTION_FOLD_CAST) return cJSON_AddNullToObject(o, "cast") != NULL;
  cJSON *x = cJSON_AddObjectToObject(o, "cast");
  return x && cJSON_AddNumberToObject(x, "launches_per_step", an_round3(it->cast_per_step)) &&
         (it->cast_layers > 0 ? cJSON_AddNumberToObject(x, "layers", (double)it->cast_layers)
                              : cJSON_AddNullToObject(x, "layers")) &&
         add_str_or_null(x, "next_kernel", it->cast_next) &&
         cJSON_AddNumberToObject(x, "next_pct", an_round3(it->cast_next_pct)) &&
         add_str_or_null(x, "prev_kernel", it->cast_prev) &&
         cJSON_AddNumberToObject(x, "prev_pct", an_round3(it->cast_prev_pct)) &&
         (it->cast_fused_us > 0
              ? cJSON_AddNumberToObject(x, "fused_us_per_step", an_round3(it->cast_fused_us))
              : cJSON_AddNullToObject(x, "fused_us_per_step")) &&
         add_str_or_null(x, "hint", it->cast_hint);
}

/* "bytes_kept": a narrowing kernel lever's share of its kernels' bytes the change keeps (basis
 * narrowed: FP32 embedding tables in FP16); only on such an item, so the other reports'
 * JSON stays as it was. */
static bool item_narrowed_json(cJSON *o, const an_summary_item *it) {
  if (it->basis != AN_BASIS_NARROWED) return true;
  return cJSON_AddNumberToObject(o, "bytes_kept", an_round3(it->bytes_kept)) != NULL;
}

static bool summary_item_json(cJSON *a, const an_summary_item *it, an_workload w) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return false;
  cJSON_AddItemToArray(a, o);
  cJSON *ks = str_array(it->kernels, it->n_kernels);
  if (!ks) return false;
  cJSON_AddItemToObject(o, "kernels", ks);
  cJSON *roles = str_array(it->roles, it->n_roles);
  if (!roles) return false;
  cJSON_AddItemToObject(o, "roles", roles);
  return cJSON_AddStringToObject(o, "kind", rp_summary_kind(it->kind)) &&
         cJSON_AddStringToObject(o, "action", rp_item_action(it)) &&
         cJSON_AddStringToObject(o, "stage", it->stage_id) &&
         cJSON_AddNumberToObject(o, "row", (double)it->row) &&
         add_str_or_null(o, "location", it->location) &&
         cJSON_AddStringToObject(o, "location_kind", rp_location_kind_id(it->location_kind)) &&
         cJSON_AddNumberToObject(o, "at_stake_us", an_round3(it->at_stake_us)) &&
         cJSON_AddNumberToObject(o, "share_pct", an_round3(it->share_pct)) &&
         cJSON_AddNumberToObject(o, "score", an_round3(it->score)) &&
         cJSON_AddStringToObject(o, "anchor", it->anchor) && summary_bound_json(o, it, w) &&
         item_rows_json(o, it) && add_str_or_null(o, "lever", it->lever) &&
         add_str_or_null(o, "lever_op", it->lever_op) && item_alternative_json(o, it, w) &&
         item_pool_json(o, it, w) &&
         /* since review 15 items of one change are one pooled item (same_change) */
         cJSON_AddNullToObject(o, "same_lever_as") &&
         add_str_or_null(o, "same_change", it->same_change) && item_not_additive_json(o, it) &&
         item_fold_json(o, it) && item_step_floor_json(o, it) && item_fp32_json(o, it) &&
         item_cast_json(o, it) && item_narrowed_json(o, it);
}

static bool limits_json(cJSON *root, const an_trace_limits *l) {
  cJSON *o = cJSON_AddObjectToObject(root, "limits");
  return o && cJSON_AddBoolToObject(o, "no_python_stacks", l->no_python_stacks) &&
         cJSON_AddBoolToObject(o, "framework_defaulted", l->framework_defaulted) &&
         cJSON_AddNumberToObject(o, "ranks_analysed", (double)l->ranks_analysed) &&
         cJSON_AddNumberToObject(o, "ranks_expected", (double)l->ranks_expected) &&
         cJSON_AddBoolToObject(o, "ranks_compared", l->ranks_compared) &&
         cJSON_AddNumberToObject(o, "world_size", (double)l->world_size) &&
         (l->trace_rank < 0 ? cJSON_AddNullToObject(o, "trace_rank")
                            : cJSON_AddNumberToObject(o, "trace_rank", (double)l->trace_rank)) &&
         add_str_or_null(o, "trace_host", l->trace_host) &&
         (l->trace_device < 0
              ? cJSON_AddNullToObject(o, "trace_device")
              : cJSON_AddNumberToObject(o, "trace_device", (double)l->trace_device)) &&
         add_str_or_null(o, "short_window_stage", l->short_window_stage) &&
         cJSON_AddNumberToObject(o, "short_window_us", an_round3(l->short_window_us)) &&
         cJSON_AddNumberToObject(o, "short_window_steps", (double)l->short_window_steps) &&
         add_str_or_null(o, "outside_wait_stage", l->outside_wait_stage) &&
         cJSON_AddNumberToObject(o, "partial_site_rows", (double)l->partial_site_rows) &&
         cJSON_AddBoolToObject(o, "filtered", l->filtered) &&
         cJSON_AddNumberToObject(o, "filtered_runtime_calls", (double)l->filtered_calls) &&
         cJSON_AddNumberToObject(o, "filtered_cpu_ops", (double)l->filtered_ops) &&
         cJSON_AddNumberToObject(o, "filtered_ranks", (double)l->filtered_ranks);
}

static bool summary_json(cJSON *root, const an_report *r) {
  cJSON *a = cJSON_AddArrayToObject(root, "summary");
  for (size_t i = 0; a && i < r->n_summary; i++)
    if (!summary_item_json(a, &r->summary[i], r->run.workload.value)) return false;
  cJSON *l = cJSON_AddArrayToObject(root, "leads");
  for (size_t i = 0; l && i < r->n_leads; i++)
    if (!summary_item_json(l, &r->summary[r->n_summary + i], r->run.workload.value)) return false;
  return a && l && provenance_json(root, &r->run) && limits_json(root, &r->limits) &&
         roofline_device_json(root, &r->roofline_device) &&
         roofline_model_json(root, &r->roofline_model);
}

/* The JSON document (schemas/report.schema.json), streamed: the run's facts, each stage
 * with its rows, then the overlap, the summary and the ranks. */
int rp_json(FILE *out, const an_report *r, const rp_options *o) {
  rp_jstream w;
  rp_jstream_begin(&w, out);
  cJSON *head = cJSON_CreateObject();
  bool ok = head && run_json(head, &r->run);
  rp_jstream_members(&w, ok ? head : NULL);
  cJSON_Delete(head);
  rp_jstream_key(&w, "stages");
  rp_jstream_array_open(&w);
  for (size_t i = 0; ok && i < r->n_stages; i++)
    if (r->stages[i].has_kernels) ok = stage_stream(&w, &r->stages[i]);
  rp_jstream_array_close(&w);
  cJSON *tail = ok ? cJSON_CreateObject() : NULL;
  ok = tail && rp_overlap_json(tail, r, o ? o->rules : NULL) == 0 && summary_json(tail, r) &&
       rp_ranks_json(tail, r) == 0;
  rp_jstream_members(&w, ok ? tail : NULL);
  cJSON_Delete(tail);
  ok = ok && rp_rank_data_stream(&w, r);
  return rp_jstream_end(&w, ok);
}
