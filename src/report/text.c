/* report/text.c - words and cells of the report (text.h). */
#include "report/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap.h"
#include "analysis/summary.h"
#include "report/md.h"
#include "report/timeline_report.h"
#include "util/buf.h"
#include "util/limits.h"

/* The text of a cell: the buffer's string handed over (NULL after an allocation
 * failure); "" is returned as an allocated empty string. */
static char *text_done(ut_buf *t) {
  if (!ut_buf_str(t)) {
    ut_buf_free(t);
    return NULL;
  }
  char *s = t->p ? t->p : strdup("");
  t->p = NULL;
  ut_buf_free(t);
  return s;
}

const char *rp_location_lead(an_location_kind kind) {
  return kind == AN_LOCATION_GRAPH_REPLAY ? "inside a graph replay of "
         : kind == AN_LOCATION_PLUMBING   ? "inside framework plumbing, no model frame: "
                                          : "";
}

const char *rp_item_location_lead(an_location_kind kind) {
  return kind == AN_LOCATION_GRAPH_REPLAY ? "inside a graph replay of"
         : kind == AN_LOCATION_PLUMBING   ? "inside framework plumbing (no model frame) at"
                                          : "at";
}

const char *rp_location_kind_id(an_location_kind kind) {
  return kind == AN_LOCATION_GRAPH_REPLAY ? "graph-replay"
         : kind == AN_LOCATION_PLUMBING   ? "plumbing"
                                          : "launch";
}

const char *rp_site_coverage(const an_kernel_row *r, char *buf, size_t cap) {
  if (!r->partial_site || !cap) return NULL;
  size_t covered, of;
  an_row_site_coverage(r, &covered, &of);
  snprintf(buf, cap, " (%zu of %zu launches%s)", covered, of,
           of == r->launches ? "" : " in the kernel map");
  return buf;
}

const char *rp_site_location(const an_kernel_row *r, const an_site *s) {
  if (!r->outside_sites || an_location_resolved(s->location) || !s->launches ||
      s->outside_launches < s->launches)
    return s->display_location ? s->display_location : s->location;
  return s->warmup_launches == s->launches ? "outside the counted steps (warm-up or setup)"
                                           : "outside the counted steps";
}

char *rp_kernel_location_cell(const an_kernel_row *r) {
  ut_buf t = {0};
  if (!r->entry)
    ut_buf_add(&t, "unresolved");
  else if (!r->entry->n_sites)
    ut_buf_add(&t, r->entry->best_location);
  for (size_t i = 0; i < r->n_shown_sites; i++) {
    if (i) ut_buf_add(&t, "<br>");
    ut_buf_add(&t, rp_location_lead(r->shown_sites[i]->kind));
    ut_buf_add(&t, rp_site_location(r, r->shown_sites[i]));
    if (r->site_share_shown)
      ut_buf_addf(&t, " (site share %.0f%%)", r->shown_sites[i]->share_pct_within_kernel);
  }
  char cov[96];
  if (rp_site_coverage(r, cov, sizeof cov)) ut_buf_add(&t, cov);
  return text_done(&t);
}

char *rp_kernel_cpu_op_cell(const an_kernel_row *r) {
  ut_buf t = {0};
  size_t n = 0;
  for (size_t i = 0; i < r->n_shown_sites; i++) {
    if (!r->shown_sites[i]->top_cpu_op) continue;
    if (n++) ut_buf_add(&t, "<br>");
    ut_buf_add(&t, r->shown_sites[i]->top_cpu_op);
  }
  if (!n) ut_buf_add(&t, "-");
  return text_done(&t);
}

char *rp_location_func_at(const char *loc) {
  const char *sp = strchr(loc, ' ');
  if (!sp || sp == loc || !sp[1]) return strdup(loc);
  ut_buf t = {0};
  ut_buf_addf(&t, "%s @ %.*s", sp + 1, (int)(sp - loc), loc);
  return text_done(&t);
}

size_t rp_fuse_row_number(const an_fuse_row *rows, size_t n, const char *pattern_id) {
  for (size_t i = 0; pattern_id && i < n; i++)
    if (rows[i].pattern_id == pattern_id || !strcmp(rows[i].pattern_id, pattern_id)) return i + 1;
  return 0;
}

char *rp_fuse_evidence_cell(const an_fuse_row *r) {
  ut_buf t = {0};
  for (size_t i = 0; i < r->n_evidence; i++) {
    ut_buf_addf(&t, "%s%s (", i ? "<br>" : "", r->evidence[i].kernel);
    if (r->evidence[i].own_pct > 0) /* the row holds some of its launches */
      ut_buf_addf(&t, "%.1f%% of its ", r->evidence[i].own_pct);
    ut_buf_addf(&t, "%.1f%%", r->evidence[i].share_pct);
    /* one kernel, one row: the row that counts it (JSON: by pattern id) */
    if (r->evidence[i].counted_in) ut_buf_addf(&t, ", counted in %s", r->evidence[i].counted_in);
    ut_buf_add(&t, ")");
  }
  if (!r->n_evidence) ut_buf_add(&t, "-");
  return text_done(&t);
}

/* Per an_saving_basis value: its JSON id and the fusion table's words. */
static const struct {
  const char *id, *text;
} SAVING_BASES[] = {{"none", "nothing to save"},
                    {"passes", "pieces but the largest"},
                    {"merged-gemm", "less one merged GEMM"},
                    {"passes-largest-elsewhere", "every piece it counts; the largest stays"},
                    {"passes-shared", "pieces but the largest, another row's piece included"}};

const char *rp_saving_basis(an_saving_basis b) {
  return SAVING_BASES[b <= AN_SAVING_PASSES_SHARED ? b : AN_SAVING_NONE].id;
}

const char *rp_saving_basis_text(an_saving_basis b) {
  return SAVING_BASES[b <= AN_SAVING_PASSES_SHARED ? b : AN_SAVING_NONE].text;
}

char *rp_fuse_locations_cell(const an_fuse_row *r) {
  ut_buf t = {0};
  for (size_t i = 0; i < r->n_locations; i++) {
    char *loc = rp_location_func_at(r->locations[i]);
    if (!loc) {
      ut_buf_free(&t);
      return NULL;
    }
    ut_buf_addf(&t, "%s%s%s", i ? "<br>" : "",
                rp_location_lead(r->location_kinds ? r->location_kinds[i] : AN_LOCATION_LAUNCH),
                loc);
    free(loc);
  }
  if (!r->n_locations) ut_buf_add(&t, "-");
  return text_done(&t);
}

char *rp_fuse_candidates_cell(const an_fuse_row *r, bool with_repos) {
  ut_buf t = {0};
  for (size_t i = 0; i < r->n_candidate_paths; i++) {
    const char *repo = with_repos && r->candidate_repos ? r->candidate_repos[i] : NULL;
    ut_buf_addf(&t, "%s%s%s%s", i ? "<br>" : "", repo ? repo : "", repo ? ": " : "",
                r->candidate_paths[i]);
  }
  if (!r->n_candidate_paths) ut_buf_add(&t, "-");
  return text_done(&t);
}

static const char *const GATE_FACTS[] = {"platform",        "execution mode",
                                         "tokens per step", "collective message size",
                                         "node topology",   "shape of the gated piece"};

/* The gate facts a row left unknown, "a, b" (an_gate_fact bits in order). */
static void unknown_facts(ut_buf *t, unsigned bits) {
  size_t k = 0;
  for (size_t i = 0; i < sizeof GATE_FACTS / sizeof *GATE_FACTS; i++)
    if (bits & (1u << i)) ut_buf_addf(t, "%s%s", k++ ? ", " : "", GATE_FACTS[i]);
}

/* Issue 31: what a row that is no opportunity says instead. */
static void fuse_state_sentence(ut_buf *t, const an_fuse_row *r) {
  switch (r->state) {
    case AN_FUSE_IN_USE:
      ut_buf_add(t, "The fused kernel runs here: nothing to enable. ");
      break;
    case AN_FUSE_IN_USE_ELSEWHERE:
      ut_buf_add(t,
                 "The fused kernel runs in another stage of this run; this stage keeps the "
                 "split by design (a size cap), nothing to enable. ");
      break;
    case AN_FUSE_OVER_CAP:
      if (r->cap_tokens && r->step_tokens > r->cap_tokens)
        ut_buf_addf(t,
                    "Every step here runs at least %ld tokens, above the fused path's cap of "
                    "%ld: the split is by design. ",
                    r->step_tokens, r->cap_tokens);
      else
        ut_buf_addf(t,
                    "The collective's message (%.2f MiB) is above the fused path's cap at this "
                    "TP size (%.2f MiB): the split is by design. ",
                    r->message_bytes / 1048576.0, r->cap_message_bytes / 1048576.0);
      break;
    case AN_FUSE_GATES_UNKNOWN:
      ut_buf_add(t, "The trace does not say whether the fused path applies (unknown: ");
      unknown_facts(t, r->unknown_gates);
      ut_buf_add(t, "). ");
      break;
    case AN_FUSE_OPPORTUNITY:
      break;
  }
}

const char *rp_fuse_state(an_fuse_state s) {
  switch (s) {
    case AN_FUSE_IN_USE:
      return "in-use";
    case AN_FUSE_IN_USE_ELSEWHERE:
      return "in-use-elsewhere";
    case AN_FUSE_OVER_CAP:
      return "over-cap";
    case AN_FUSE_GATES_UNKNOWN:
      return "gates-unknown";
    case AN_FUSE_OPPORTUNITY:
      break;
  }
  return "opportunity";
}

const char *rp_gate_fact(unsigned bit) {
  for (size_t i = 0; i < sizeof GATE_FACTS / sizeof *GATE_FACTS; i++)
    if (bit == 1u << i) return GATE_FACTS[i];
  return NULL;
}

const char *rp_fuse_verdict(const an_fuse_row *r) {
  if (r->state == AN_FUSE_IN_USE) return "in use";
  if (r->state == AN_FUSE_IN_USE_ELSEWHERE) return "in use (other stage)";
  if (r->state == AN_FUSE_OVER_CAP) return "over cap";
  return rp_fuse_confidence(r->confidence);
}

#define TFLOPS_PER_FLOP_US 1e-6 /* FLOP per us -> TFLOP/s */

/* A merge row's evidence (fuse_merge.c): the sibling shapes and the basis of its bound. */
static void merge_sentence(ut_buf *t, const an_fuse_row *r) {
  ut_buf_add(t, "Sibling GEMMs read one input (Input Dims, one stream, launch order): ");
  for (size_t i = 0; i < r->n_merge_shapes; i++) {
    const an_merge_shape *sh = &r->merge_shapes[i];
    ut_buf_addf(t, "%s[%.0fx%.0f] x N ", i ? "; " : "", sh->m, sh->k);
    for (size_t s = 0; s < sh->n; s++) ut_buf_addf(t, "%s%.0f", s ? "+" : "", sh->n_out[s]);
    ut_buf_addf(t, " %s (%zu run%s)", sh->dtype ? sh->dtype : "", sh->runs,
                sh->runs == 1 ? "" : "s");
  }
  if (r->merge_more) ut_buf_addf(t, "; %zu more", r->merge_more);
  double lo = r->merge_rate_lo * TFLOPS_PER_FLOP_US, hi = r->merge_rate_hi * TFLOPS_PER_FLOP_US;
  ut_buf_addf(t,
              ". Bound: their time less one merged GEMM at the best rate a GEMM of that format "
              "and at most %.3gx its FLOPs reaches in this stage, ",
              r->merge_comparable);
  if (hi - lo >= 0.5)
    ut_buf_addf(t, "%.0f-%.0f TFLOP/s. ", lo, hi);
  else
    ut_buf_addf(t, "%.0f TFLOP/s. ", hi);
}

void rp_since_text(const char *framework, const char *version, const char *change, const char *sw,
                   char *b, size_t cap) {
  if (!version) {
    if (cap) *b = '\0';
    return;
  }
  snprintf(b, cap, "needs %s >= %s%s%s%s, a version the trace does not state%s%s%s",
           framework ? framework : "the framework", version, change ? " (" : "",
           change ? change : "", change ? ")" : "", sw ? ": upgrade to it and set `" : "",
           sw ? sw : "", sw ? "`" : "");
}

char *rp_fuse_rationale(const an_fuse_row *r) {
  ut_buf t = {0};
  if (r->merge)
    ut_buf_addf(&t, "Sibling GEMMs that could be one take %.1f%% of GPU time. ", r->share_pct);
  else if (r->origin == AN_FUSION_MAINLINE && r->match == AN_FUSION_DIRECT)
    ut_buf_addf(&t, "`%s` is present in this trace (%.1f%% related GPU time). ", r->pattern_name,
                r->share_pct);
  else if (r->origin == AN_FUSION_MAINLINE)
    ut_buf_addf(&t,
                "Split kernels in this family take %.1f%% of GPU time. This tree already has "
                "a matching path. ",
                r->share_pct);
  else if (r->origin == AN_FUSION_PORT) /* review 17 defect 2 */
    ut_buf_addf(&t,
                "Split kernels in this family take %.1f%% of GPU time. The tree's fused path "
                "does not serve %s: there is no switch to turn on, it is a port (the Candidate "
                "fused path says what to port). ",
                r->share_pct, rp_platform(r->port_platform));
  else if (r->origin == AN_FUSION_UPSTREAM)
    ut_buf_addf(&t, "Matches an upstream path (%.1f%% related GPU time). ", r->share_pct);
  else
    ut_buf_addf(&t, "Matches an open upstream path (%.1f%% related GPU time). ", r->share_pct);
  fuse_state_sentence(&t, r);
  if (r->piece_last_dim > 0)
    ut_buf_addf(
        &t, "Its gated piece's op states last dimension %.0f%s%s, which the fused path takes. ",
        r->piece_last_dim, r->piece_format ? ", " : "", r->piece_format ? r->piece_format : "");
  if (r->merge) merge_sentence(&t, r);
  ut_buf_add(&t, r->rationale_hint ? r->rationale_hint : "");
  if (r->since_version) { /* review 18 defect 10: the switch's release, never guessed */
    char v[256];
    rp_since_text(r->since_framework, r->since_version, r->since_change, r->since_switch, v,
                  sizeof v);
    ut_buf_addf(&t, " It %s.", v);
  }
  char *s = text_done(&t);
  /* a missing hint must not leave a trailing space */
  for (size_t n = s ? strlen(s) : 0; n && s[n - 1] == ' '; n--) s[n - 1] = '\0';
  return s;
}

char *rp_fuse_status(const an_fuse_row *r) {
  ut_buf t = {0};
  /* the status word for an in-flight change is "pending" (the JSON origin says inflight) */
  const char *o = r->origin == AN_FUSION_UPSTREAM   ? "upstream"
                  : r->origin == AN_FUSION_INFLIGHT ? "pending"
                  : r->origin == AN_FUSION_PORT     ? "port"
                                                    : "mainline";
  ut_buf_addf(&t, "%s %s", o, r->match == AN_FUSION_DIRECT ? "direct" : "split");
  return text_done(&t);
}

const char *rp_fuse_confidence(an_confidence c) {
  return c == AN_CONFIDENCE_CONFIRMED ? "Confirmed"
         : c == AN_CONFIDENCE_UNKNOWN ? "unknown"
                                      : "Candidate";
}

const char *rp_fusion_origin(an_fusion_origin o) {
  return o == AN_FUSION_UPSTREAM   ? "upstream"
         : o == AN_FUSION_INFLIGHT ? "inflight"
         : o == AN_FUSION_PORT     ? "port"
                                   : "mainline";
}

const char *rp_limiter(an_limiter l) { return l == AN_LIMIT_COMPUTE ? "compute" : "memory"; }

const char *rp_shape_source(an_shape_source s) {
  return s == AN_SHAPES_MAPPING     ? "mapping"
         : s == AN_SHAPES_MODEL     ? "model"
         : s == AN_SHAPES_STEP_SUMS ? "step_sums"
                                    : "op";
}

const char *rp_attainable_basis(an_attainable_basis b) {
  return b == AN_ATTAINABLE_TRACE ? "trace" : b == AN_ATTAINABLE_FAMILY ? "family" : "device";
}

/* 100.5: the lowest achieved % the table prints above 100 */
#define ABOVE_BOUND_PCT 100.5

void rp_roofline_cell(const an_roofline *f, char *out, size_t cap) {
  if (!f) {
    snprintf(out, cap, "-");
    return;
  }
  snprintf(out, cap, "%.0f%% %s%s", f->achieved_pct,
           f->limiter == AN_LIMIT_COMPUTE ? "comp" : "mem", f->latency_bound ? " (latency)" : "");
}

void rp_roofline_detail(const an_roofline *f, size_t launches, char *out, size_t cap) {
  if (!f) {
    snprintf(out, cap, "no roofline: no launch with shapes, or no device entry (Limits)");
    return;
  }
  bool compute = f->limiter == AN_LIMIT_COMPUTE;
  snprintf(out, cap,
           "%s-bound %s%s%s: %.0f%% of its roofline time; %.3g TB/s, %.3g TFLOP/s; %.0f%% of the "
           "attainable %.3g %s (%s%s%s%s); %zu of %zu launches with shapes (from %s)",
           rp_limiter(f->limiter), f->dtype ? f->dtype : "", f->dtype ? " " : "",
           f->family ? f->family : "op", f->achieved_pct, f->achieved_tbs, f->achieved_tflops,
           f->of_attainable_pct, f->attainable, compute ? "TFLOP/s" : "TB/s",
           f->attainable_basis == AN_ATTAINABLE_TRACE    ? "best comparable kernel of the trace"
           : f->attainable_basis == AN_ATTAINABLE_FAMILY ? "the family's best observed rate"
           : f->size_own ? "its own rate: no kernel of its family moving a like amount a launch "
                           "runs faster"
                         : "the device pack's attainable fraction",
           f->parity ? ", parity with another class of work, so an upper bound" : "",
           f->attainable_kernel ? ": " : "", f->attainable_kernel ? f->attainable_kernel : "",
           f->launches_with_shapes, launches,
           f->source == AN_SHAPES_MAPPING ? "the mapping trace"
           : f->source == AN_SHAPES_MODEL ? "the model's dimensions"
           : f->source == AN_SHAPES_STEP_SUMS
               ? "the step annotation's token sums and the model's heads"
               : "the launching op");
  size_t n = strlen(out);
  if (f->balanced && n < cap) /* the limiter is the larger term, the other close behind */
    snprintf(out + n, cap - n, "; balanced: its %s term is within %.2gx of it, so both bound it",
             compute ? "byte" : "FLOP", an_roofline_terms_ratio(f));
  n = strlen(out);
  if (f->latency_bound && n < cap)
    snprintf(out + n, cap - n,
             "; latency-bound: %zu launches would take less than the device's %.2f us "
             "per-launch floor at the attainable rate, so tuning wins only their time above it",
             f->floored_launches, f->latency_floor_us);
}

/* Launches without a roofline, other than the kernels whose op's cost another kernel of
 * the op carries. */
static size_t roofline_missing(const an_roofline_counts *n) {
  return n->launches - n->with_shapes - n->secondary;
}

/* Whether a record reads above 100% of its bound as the table prints it ("%.0f"). */
static bool above_bound(const an_roofline *f) { return f && f->achieved_pct >= ABOVE_BOUND_PCT; }

/* The first shown row of a stage whose roofline reads above its bound, or NULL. */
static const an_kernel_row *first_above_bound(const an_stage_report *st) {
  for (size_t i = 0; i < st->n_kernels; i++)
    if (st->kernels[i].shown && above_bound(an_row_roofline(st, &st->kernels[i])))
      return &st->kernels[i];
  return NULL;
}

bool rp_roofline_limited(const an_report *r) {
  if (r->roofline_device.gpu && !r->roofline_device.id) return true;
  if (r->roofline_model.check.kind || r->roofline_model.attention.kind) return true;
  for (size_t i = 0; i < r->n_stages; i++)
    if (r->stages[i].has_kernels && r->roofline_device.id &&
        (roofline_missing(&r->stages[i].roofline_counts) || first_above_bound(&r->stages[i])))
      return true;
  return false;
}

/* Rows above 100% of their bound: no kernel beats the device, so the model's traffic or
 * work is not what the kernel did (docs/roofline.md "Limits of the method"). */
static void above_bound_text(const an_stage_report *st, ut_buf *b) {
  size_t n = 0;
  bool mem = false, comp = false;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_roofline *f = an_row_roofline(st, &st->kernels[i]);
    if (!st->kernels[i].shown || !above_bound(f)) continue;
    bool c = f->limiter == AN_LIMIT_COMPUTE;
    comp |= c, mem |= !c;
    ut_buf_addf(b, "%s%sK%zu %.0f%% %s",
                n      ? ", "
                : b->n ? " "
                       : "",
                n ? "" : "Above 100% of the bound: ", i + 1, f->achieved_pct, c ? "comp" : "mem");
    n++;
  }
  if (!n) return;
  ut_buf_add(b, ". No kernel runs faster than the device:");
  if (mem)
    ut_buf_add(b,
               " the model counts each tensor read once from HBM, so a memory-bound row's "
               "operands sat partly in L2 (small tensors, data a kernel just wrote) or the "
               "model over-counts its bytes;");
  if (comp)
    ut_buf_add(b,
               " a compute-bound row did fewer FLOPs than its op's shapes say (sparsity, "
               "masked work) or ran above the datasheet clock;");
  ut_buf_add(b, " read it as at its bound, not beyond it.");
}

char *rp_roofline_stage_limit(const an_stage_report *st) {
  const an_roofline_counts *n = &st->roofline_counts;
  if (!st->has_kernels) return NULL;
  if (!roofline_missing(n)) {
    ut_buf a = {0};
    above_bound_text(st, &a);
    if (ut_buf_str(&a)) return a.p; /* the buffer's text, handed over */
    ut_buf_free(&a);
    return NULL;
  }
  const size_t v[] = {n->no_op_graph, n->no_launch, n->no_op - n->no_op_graph - n->no_launch,
                      n->no_shapes,   n->no_model,  n->bad_shapes,
                      n->no_peak};
  static const char *const what[] = {
      "no launching CPU op (graph replay: pass an eager mapping trace)",
      "no launch call in the trace (launched before the capture, or runtime events not "
      "kept)",
      "a launch call no CPU op links to or encloses",
      "an op recorded without Input Dims (record_shapes=True)",
      "an op no cost model covers (op_costs:)",
      "shapes that cannot be costed",
      "a format the device states no peak for"};
  ut_buf b = {0};
  ut_buf_addf(&b, "%zu of %zu launches have shapes", n->with_shapes, n->launches);
  if (n->from_mapping) ut_buf_addf(&b, " (%zu from the mapping trace)", n->from_mapping);
  if (n->from_model && n->model_tokens)
    ut_buf_addf(&b, " (%zu from the model's dimensions, %zu tokens a step)", n->from_model,
                n->model_tokens);
  else if (n->from_model)
    ut_buf_addf(&b, " (%zu from the model's dimensions)", n->from_model);
  ut_buf_add(&b, ". Without:");
  for (size_t k = 0, first = 1; k < sizeof v / sizeof v[0]; k++)
    if (v[k]) ut_buf_addf(&b, "%s %zu with %s", first ? "" : ";", v[k], what[k]), first = 0;
  ut_buf_add(&b, ".");
  above_bound_text(st, &b);
  if (!ut_buf_str(&b)) {
    ut_buf_free(&b);
    return NULL;
  }
  return b.p; /* the buffer's text, handed over */
}

const char *rp_priority(an_priority p) {
  switch (p) {
    case AN_PRIORITY_P1:
      return "P1";
    case AN_PRIORITY_P2:
      return "P2";
    case AN_PRIORITY_P4:
      return "P4";
    case AN_PRIORITY_P5:
      return "P5";
  }
  return "?";
}

const char *rp_verdict(an_overlap_verdict v) {
  return v == AN_OVERLAP_LOW_ROI_HIDDEN ? "low-roi-hidden"
         : v == AN_OVERLAP_WAIT         ? "wait"
         : v == AN_OVERLAP_UNSIZED      ? "unknown"
                                        : "headroom";
}

const char *rp_dep_risk(an_dep_risk d) {
  return d == AN_DEP_RISK_HIGH ? "high" : d == AN_DEP_RISK_UNCLEAR ? "unclear" : "low";
}

const char *rp_dep_signal(an_dep_signal s) {
  switch (s) {
    case AN_DEP_SIGNAL_BOTH:
      return "both-side serial risk";
    case AN_DEP_SIGNAL_PREV:
      return "prev-side serial risk";
    case AN_DEP_SIGNAL_NEXT:
      return "next-side serial risk";
    case AN_DEP_SIGNAL_UNCLEAR:
      return "adjacency unclear";
    case AN_DEP_SIGNAL_LOW:
      break;
  }
  return "serial risk low";
}

const char *rp_recommendation(an_recommendation r) {
  switch (r) {
    case AN_RECOMMEND_TRY_OVERLAP:
      return "try overlap";
    case AN_RECOMMEND_TRY_FUSION:
      return "try fusion";
    case AN_RECOMMEND_CHECK_DEPS:
      return "check deps";
    case AN_RECOMMEND_ONE_TIME:
      return "one-time setup";
    case AN_RECOMMEND_RANK_SKEW:
      return "rank skew (wait)";
    case AN_RECOMMEND_ALREADY_FUSED:
      return "already fused";
    case AN_RECOMMEND_ELIMINATE:
      return "eliminate";
    case AN_RECOMMEND_RESTRUCTURE:
      return "restructure";
    case AN_RECOMMEND_PIPELINE_BUBBLE:
      return "pipeline bubble (wait)";
    case AN_RECOMMEND_WAIT_UNKNOWN:
      return "wait unknown";
    case AN_RECOMMEND_SLOW_MID_STEP:
      return "slow mid-step (wait)";
    case AN_RECOMMEND_OWN_STREAM_HOST_BOUND:
      /* the banner's gate counts queued-work idle with the host's (blind review 19 defect 2:
       * hta_multistream5 idles 61% of its step with work queued, 2.5% for the host) */
      return "own stream, exposed while the step waits on its bottleneck (the banner: the host "
             "or queued work): nothing to gain";
    case AN_RECOMMEND_NOTHING_TO_GAIN:
      return "nothing to gain while the step waits on its bottleneck (the banner: the host or "
             "queued work)";
    case AN_RECOMMEND_SKIP:
      break;
  }
  return "skip";
}

const char *rp_scope_source(an_scope_source s) {
  switch (s) {
    case AN_SCOPE_MAPPING:
      return "mapping";
    case AN_SCOPE_LAUNCH:
      return "launch";
    case AN_SCOPE_TIME_WINDOW:
      return "time-window";
    case AN_SCOPE_KERNEL_MAP:
      return "kernel-map";
    case AN_SCOPE_FORMAL:
      return "formal";
    case AN_SCOPE_NONE:
      break;
  }
  return "none";
}

const char *rp_overlap_category(const an_overlap_row *r) {
  return r->kernel_category ? r->kernel_category : r->category;
}

const char *rp_scope(const an_overlap_row *r) { return r->scope ? r->scope : "unmapped"; }

const char *rp_launch_op(const an_overlap_row *r) {
  return r->launch_op ? r->launch_op : r->launch_op_time_window ? "time-window fallback" : "n/a";
}

/* The eager chain as a fusion partner: the chain the summary builds from the categories
 * the setting names. */
static const char *const EAGER_CHAIN = "eager elementwise chain (summary.chain_categories)";

static const char *partner_name(an_fusion_partner p, const char *pattern) {
  return p == AN_PARTNER_EAGER_CHAIN ? EAGER_CHAIN : p == AN_PARTNER_FUSE_ROW ? pattern : NULL;
}

const char *rp_fusion_partner(const an_overlap_row *r) {
  return partner_name(r->fusion_partner, r->fusion_pattern);
}

/* A collective's launches under no labelled launch-context family (its rest row). */
static const char *const OTHER_LAUNCHES = "other launches";

const char *rp_item_what(const an_summary_item *it) {
  if (it->partner == AN_PARTNER_EAGER_CHAIN) return EAGER_CHAIN;
  return it->what ? it->what : it->context_rest ? OTHER_LAUNCHES : NULL;
}

const char *rp_item_subject(const an_summary_item *it, const char **lead) {
  const char *what = rp_item_what(it);
  /* a wait item's subject is its collective, which its kernel names already */
  if (!what || it->kind == AN_SUMMARY_WAIT) return NULL;
  *lead = it->action == AN_ACTION_HOST_STALL   ? "under "
          : it->action == AN_ACTION_DEPENDENCY ? "issued by "
          : it->host_block                     ? "in "
                                               : "";
  return what;
}

/* A kernel name for an evidence cell: its first `chars` characters, "..." when cut. */
static void short_name(const char *name, size_t chars, char *out, size_t cap) {
  snprintf(out, cap, "%.*s%s", (int)chars, name, strlen(name) > chars ? "..." : "");
}

const char *rp_overlap_excess_word(const an_overlap_row *r, const te_rules *rules) {
  const te_matcher *m = rules ? te_rules_matcher(rules, "pageable_copy") : NULL;
  if (!r->copy_engine) return "";
  if (m && te_matcher_match(m, r->kernel, strlen(r->kernel)))
    return " above its median copy (pageable: staged through host memory, not a wait)";
  return " above its median copy (larger copies, not a wait)";
}

const char *rp_launch_context(const an_overlap_row *r) {
  return r->launch_context ? r->launch_context : r->context_rest ? OTHER_LAUNCHES : NULL;
}

const char *rp_dep_evidence(const an_overlap_row *r, const te_rules *rules, char *buf, size_t cap) {
  const an_dep_evidence *ev = &r->dep_evidence;
  char name[128];
  switch (ev->kind) {
    case AN_DEP_EV_NONE:
      return NULL;
    case AN_DEP_EV_KERNEL_NAME:
      snprintf(buf, cap, "kernel name");
      break;
    case AN_DEP_EV_CPU_OP:
      /* a collective's launching op: how many of the sampled launches it covers */
      if (ev->op_sampled && ev->op_launches < ev->op_sampled)
        snprintf(buf, cap, "CPU op %s on %zu of %zu sampled launches", ev->cpu_op, ev->op_launches,
                 ev->op_sampled);
      else
        snprintf(buf, cap, "CPU op %s", ev->cpu_op);
      break;
    case AN_DEP_EV_NEXT_CONSUMER:
      short_name(ev->next_kernel,
                 rules ? (size_t)te_rules_settings(rules)->overlap_evidence_name_chars
                       : strlen(ev->next_kernel),
                 name, sizeof name);
      snprintf(buf, cap, "next on its stream: %s %s", ev->next_category, name);
      break;
    case AN_DEP_EV_TIGHT_NEIGHBOUR:
      snprintf(buf, cap, "tight producer/consumer neighbour");
      break;
    case AN_DEP_EV_TIGHT_NO_SCOPE:
      snprintf(buf, cap, "tight neighbour, no scope");
      break;
    case AN_DEP_EV_NO_TIGHT_NEIGHBOUR:
      snprintf(buf, cap, "no tight dependent neighbour");
      break;
    case AN_DEP_EV_FUSION_PIECE:
      snprintf(buf, cap, "a piece of fusion %s", rp_fusion_partner(r));
      break;
    case AN_DEP_EV_CHAIN_PIECE:
      snprintf(buf, cap, "a piece of the %s", rp_fusion_partner(r));
      break;
  }
  return buf;
}

const char *rp_partial_sites_limit(const an_trace_limits *l, char *buf, size_t cap) {
  if (!l->partial_site_rows || !cap) return NULL;
  snprintf(buf, cap,
           "%zu kernel row%s show%s a location that covers under %.0f%% of the kernel's "
           "launches; the row says how many (kernel_table.site_min_coverage): the rest ran "
           "from other or unresolved sites.",
           l->partial_site_rows, l->partial_site_rows == 1 ? "" : "s",
           l->partial_site_rows == 1 ? "s" : "", l->site_min_coverage * 100.0);
  return buf;
}

const char *rp_short_window_limit(const an_trace_limits *l, char *buf, size_t cap) {
  if (!l->short_window_stage || !cap) return NULL;
  bool us = rp_prints_in_us(l->short_window_us);
  double v = us ? l->short_window_us : l->short_window_us / 1000.0;
  if (l->short_window_steps)
    snprintf(buf, cap,
             "the %s stage's %zu counted step%s span%s %.2f %s of GPU time, which every "
             "per-step bound rests on; a capture of more steps shows steady-state behaviour "
             "(report.short_window_ms).",
             l->short_window_stage, l->short_window_steps, l->short_window_steps == 1 ? "" : "s",
             l->short_window_steps == 1 ? "s" : "", v, us ? "us" : "ms");
  else
    snprintf(buf, cap,
             "the %s stage (no step markers) spans %.2f %s of GPU time; a longer capture "
             "shows steady-state behaviour (report.short_window_ms).",
             l->short_window_stage, v, us ? "us" : "ms");
  return buf;
}

const char *rp_outside_wait_limit(const an_trace_limits *l, char *buf, size_t cap) {
  const an_stage_timeline *tl = l->outside_wait;
  if (!tl || !l->outside_wait_stage || !cap) return NULL;
  static const char *const where[] = {"Before the", "Between the", "After the"};
  snprintf(buf, cap,
           "%s %s stage's counted steps, the GPU idled %.2f ms while a thread that issues GPU "
           "work sat %.2f ms in `%s`%s%s%s%s%s%s, a call that returns only when the GPU work "
           "queued before it ends: it waited for work this trace does not hold (a previous "
           "batch, work before the capture), so that wait is neither the steps' idle nor host "
           "time of theirs, and no per-step bound counts it. A capture that starts before it "
           "shows what it waited on.",
           where[tl->outside_where <= AN_OUTSIDE_AFTER ? tl->outside_where : 1],
           l->outside_wait_stage, (double)tl->outside_longest_ns / 1e6,
           (double)tl->outside_call_ns / 1e6, tl->outside_call, tl->outside_op ? " under `" : "",
           tl->outside_op ? tl->outside_op : "", tl->outside_op ? "`" : "",
           tl->outside_location ? " at `" : "", tl->outside_location ? tl->outside_location : "",
           tl->outside_location ? "`" : "");
  return buf;
}

const char *rp_ranks_limit(const an_trace_limits *l, char *buf, size_t cap) {
  if (l->ranks_expected <= 1 || l->ranks_analysed >= l->ranks_expected) return NULL;
  if (!l->ranks_compared) {
    snprintf(buf, cap,
             "%ld trace(s) analysed of TP size %ld; other ranks may differ (pass the profile "
             "directory to read them all).",
             l->ranks_analysed, l->ranks_expected);
    return "One rank of many";
  }
  snprintf(buf, cap,
           "the directory holds %ld of the run's %ld ranks (%s); the Ranks section compares "
           "those only, so a straggler among the others stays unseen.",
           l->ranks_analysed, l->ranks_expected,
           l->ranks_expected == l->world_size ? "distributedInfo.world_size" : "TP size");
  return "Ranks missing";
}

int rp_hint_text(const an_hint *h, char *buf, size_t cap) {
  const char *path = h->path ? h->path : "";
  switch (h->code) {
    case AN_HINT_SKIPPED_EVENTS:
      return snprintf(buf, cap,
                      "%s: warning: skipped %llu event%s with unusable fields (first at "
                      "offset %llu)",
                      path, (unsigned long long)h->count, h->count == 1 ? "" : "s",
                      (unsigned long long)h->offset);
    case AN_HINT_REPLACED_UTF8:
      return snprintf(buf, cap,
                      "%s: warning: replaced %llu invalid UTF-8 sequences or NUL "
                      "characters with U+FFFD",
                      path, (unsigned long long)h->count);
    case AN_HINT_SERVER_ARGS_IGNORED:
      return snprintf(buf, cap, "%s: warning: %s (server args ignored)", path,
                      h->detail ? h->detail : "");
    case AN_HINT_UNKNOWN_STAGE_MARKER:
      return snprintf(buf, cap,
                      "%s: warning: stage marker \"%s\" is not recognised (%llu "
                      "annotation%s); its kernels are in no stage of their own",
                      path, h->detail ? h->detail : "", (unsigned long long)h->count,
                      h->count == 1 ? "" : "s");
    case AN_HINT_RANK_CONFLICT:
      return snprintf(buf, cap,
                      "%s: warning: the file name says rank %llu, its distributedInfo.rank "
                      "says %llu; rank %llu is used",
                      path, (unsigned long long)h->count, (unsigned long long)h->offset,
                      (unsigned long long)h->offset);
    case AN_HINT_RANK_UNREAD:
      return snprintf(buf, cap,
                      "%s: warning: rank %llu's trace could not be read (offset %llu: %s); the "
                      "Ranks section compares the other ranks without it, so if it is the "
                      "straggler, its group's wait shows on no one",
                      path, (unsigned long long)h->count, (unsigned long long)h->offset,
                      h->detail ? h->detail : "");
  }
  return snprintf(buf, cap, "%s: warning", path);
}

const char *rp_source(an_source s) {
  switch (s) {
    case AN_SOURCE_DEFAULT:
      return "default (nothing detected)";
    case AN_SOURCE_COMMAND_LINE:
      return "command line";
    case AN_SOURCE_LIVE_CAPTURE:
      return "live capture";
    case AN_SOURCE_SERVER_ARGS:
      return "server args";
    case AN_SOURCE_TRACE_METADATA:
      return "trace metadata";
    case AN_SOURCE_DETECTION_RULE:
      return "detection rule (input path)";
    case AN_SOURCE_PYTHON_FRAMES:
      return "file paths in the Python frames";
    case AN_SOURCE_KERNEL_FAMILY:
      return "kernel names (a family only this model runs)";
    case AN_SOURCE_TRACE_CONTENT:
      return "the trace's content (names in its events, shapes of its CPU ops)";
    case AN_SOURCE_RANK_HOSTS:
      return "host names of the TP group's ranks (process groups)";
    case AN_SOURCE_DEVICE_PACK:
      return "inferred: the device pack, from the trace's device properties (the trace names "
             "no GPU)";
    case AN_SOURCE_UNKNOWN:
      break;
  }
  return "unknown";
}

const char *rp_workload_note(an_workload w) {
  if (w == AN_WORKLOAD_TRAINING)
    return " A training workload gets no serving advice (no framework fusion paths, no KV cache "
           "or speculative decoding).";
  if (w == AN_WORKLOAD_MICROBENCHMARK)
    return " A microbenchmark gets no serving advice (no framework fusion paths, no KV cache or "
           "speculative decoding).";
  return "";
}

const char *rp_action(an_action a) {
  switch (a) {
    case AN_ACTION_TUNE_KERNEL:
      return "Tune or replace the kernel";
    case AN_ACTION_TRY_OVERLAP:
      return "Overlap it with other streams";
    case AN_ACTION_TRY_FUSION:
      return "Fold it into its fusion partner";
    case AN_ACTION_CHECK_DEPS:
      return "Check its dependencies, then overlap";
    case AN_ACTION_ENABLE_FUSION:
      return "Enable the fused path";
    case AN_ACTION_PORT_FUSION:
      return "Port the upstream fused path";
    case AN_ACTION_ELIMINATE:
      return "Eliminate the staging copy";
    case AN_ACTION_REMOVE_SYNC:
      return "Remove the host sync";
    case AN_ACTION_HOST_STALL:
      return "Cut the host work in the step";
    case AN_ACTION_LAUNCH_BOUND:
      return RP_LAUNCH_BOUND RP_LAUNCH_CAPTURE;
    case AN_ACTION_RANK_SKEW:
      return "Read every rank's trace and find the straggler";
    case AN_ACTION_FUSE_CHAIN:
      return "Fuse the eager elementwise and copy chains (torch.compile, or fused kernels)";
    case AN_ACTION_FEWER_BYTES:
      return "Move fewer bytes (FP8/FP4 weights or KV cache, larger batch)";
    case AN_ACTION_DEPENDENCY:
      return "Find what the queued work waits on (an event, another stream, a graph's input)";
    case AN_ACTION_SLOW_COLLECTIVE:
      return "Find why collectives run above their floor mid-step (not a late rank): compute "
             "kernels sharing the GPU with them, the link, ranks drifting apart";
    case AN_ACTION_KERNEL_LEVER:
      return "Remove these kernels with the change their family names";
    case AN_ACTION_INVESTIGATE:
      return "Investigate: no model bounds these kernels yet";
    case AN_ACTION_MERGE_GEMMS:
      return "Merge the sibling GEMMs that read one input into one wider GEMM";
    case AN_ACTION_FOLD_CAST:
      return "Keep the dtype, or fold the cast into the kernel beside it";
    case AN_ACTION_RAISE_BATCH:
      return "Raise the decode batch (more running requests a step, and the captured batch "
             "sizes to match), if latency allows";
    case AN_ACTION_FP32_MATMUL:
      return "Run the FP32 matmuls in a tensor-core format (TF32, or autocast to 16 bits)";
    case AN_ACTION_FOLD_GEMM:
      return "Fold the kernel into the GEMM before it (a GEMM of another library: check it "
             "matches on that GEMM's shape)";
  }
  return "?";
}

const char *rp_summary_kind(an_summary_kind k) {
  static const char *const w[AN_SUMMARY_KINDS] = {"kernel", "overlap", "fusion",
                                                  "idle",   "wait",    "host"};
  return (size_t)k < AN_SUMMARY_KINDS ? w[k] : "kernel";
}

const char *rp_mode(const an_provenance *p) {
  if (p->mode == AN_MODE_MAPPING_FORMAL) return "mapping-formal";
  return p->n_rank_inputs > 1 ? "directory" : "single-trace";
}

const char *const *rp_input_traces(const an_provenance *p, size_t *n) {
  bool dir = p->mode != AN_MODE_MAPPING_FORMAL && p->n_rank_inputs > 1;
  *n = dir ? p->n_rank_inputs : p->n_formal_inputs;
  return dir ? p->rank_inputs : p->formal_inputs;
}

const char *rp_source_id(an_source s) {
  static const char *const ids[] = {"unknown",        "default",       "command-line",
                                    "live-capture",   "server-args",   "trace-metadata",
                                    "detection-rule", "python-frames", "kernel-family",
                                    "trace-content",  "rank-hosts",    "device-pack"};
  return (size_t)s < sizeof ids / sizeof *ids ? ids[s] : "unknown";
}

void rp_fmt_share(char *b, size_t cap, double pct) {
  if (pct > 0 && pct < 0.05)
    snprintf(b, cap, "<0.1%%");
  else
    snprintf(b, cap, "%.1f%%", pct);
}

bool rp_prints_in_us(double us) { return us > 0 && us < RP_PRINT_US_BELOW_US; }

const char *rp_platform(an_platform p) {
  return p == AN_PLATFORM_CUDA ? "CUDA" : p == AN_PLATFORM_ROCM ? "ROCm" : "unknown";
}

const char *rp_gpu(const an_run_context *c, char *buf, size_t cap) {
  const struct an_gpu_placed *d = &c->gpu_placed;
  if (c->gpu.value || !d->label) return c->gpu.value;
  char arch[32] = "";
  if (d->arch >= 0) snprintf(arch, sizeof arch, ", arch %ld.%ld", d->arch / 10, d->arch % 10);
  int n = snprintf(buf, cap, "%s (device pack: blank name%s, %ld %s)", d->label, arch, d->units,
                   c->platform.value == AN_PLATFORM_ROCM ? "CUs" : "SMs");
  return n > 0 && (size_t)n < cap ? buf : NULL;
}

static bool same_fact(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void fact_text(char *buf, size_t cap, const char *v) {
  snprintf(buf, cap, "%s", v ? v : "unknown");
}

/* Graph use as the diff words it: none, or the share of the kernel time replayed. */
static void graph_text(char *buf, size_t cap, double pct) {
  if (pct < 0)
    snprintf(buf, cap, "unknown");
  else if (pct < 0.5)
    snprintf(buf, cap, "no kernel replayed from a graph");
  else
    snprintf(buf, cap, "%.0f%% of the kernel time replayed from graphs", pct);
}

/* What graphs appearing or going away brought with them: the copies launched by the ops
 * that replay the graphs (review 5: DtoD +14.98 ms/step sat untied beside the graph
 * change), appended to the after text. */
static void graph_copies_text(const an_diff_report *d, char *buf, size_t cap) {
  const an_diff_row *top = d->graph_staged_top;
  size_t at = strlen(buf);
  if (!top || at >= cap) return;
  const char *name = top->name;
  if (!strncmp(name, "void ", 5)) name += 5;
  size_t len = strcspn(name, "<(");
  while (len && name[len - 1] == ' ') len--;
  snprintf(buf + at, cap - at,
           "; with them %+.3f ms%s of kernels launched inside the ops that replay the graphs "
           "(their input and output copies, mostly %.*s)",
           d->graph_staged_delta_us / 1000, d->graph_staged_per_step ? "/step" : "",
           (int)(len > 80 ? 80 : len), name);
}

/* One template change: the pairs (every stage) whose differing arguments read as x's. */
typedef struct template_fact {
  const an_diff_retemplate *top; /* the pair of largest |delta| */
  size_t n;
  double delta_us;
  bool per_step;
} template_fact;

static bool same_change(const an_diff_retemplate *x, const an_diff_retemplate *y) {
  return !strcmp(x->before_args, y->before_args) && !strcmp(x->after_args, y->after_args);
}

/* The pairs of every stage grouped by their change, into g (at most cap); how many. */
static size_t template_facts(const an_diff_report *d, template_fact *g, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < d->n_stages; i++)
    for (size_t k = 0; k < d->stages[i].n_retemplated; k++) {
      const an_diff_retemplate *x = &d->stages[i].retemplated[k];
      size_t j = 0;
      while (j < n && !same_change(g[j].top, x)) j++;
      if (j == n && n == cap) continue;
      if (j == n) g[n++] = (template_fact){x, 0, 0, true};
      if (fabs(x->row.delta_us) > fabs(g[j].top->row.delta_us)) g[j].top = x;
      g[j].n++;
      g[j].delta_us += x->row.delta_us;
      g[j].per_step = g[j].per_step && d->stages[i].per_step;
    }
  return n;
}

static int cmp_template_facts(const void *pa, const void *pb) {
  const template_fact *a = pa, *b = pb;
  return fabs(a->delta_us) != fabs(b->delta_us) ? (fabs(a->delta_us) > fabs(b->delta_us) ? -1 : 1)
                                                : strcmp(a->top->after_name, b->top->after_name);
}

/* "2ul -> 5ul in tbe_fwd and 2 more kernels, +8.308 ms/step in these kernels alone": the
 * kernel named without the "void " its canonical name keeps. */
static void template_fact_text(const template_fact *g, rp_fact_change *out) {
  const char *stem = g->top->after_name;
  size_t len = g->top->stem_len;
  if (len > 5 && !strncmp(stem, "void ", 5)) stem += 5, len -= 5;
  out->what = "kernel template arguments";
  snprintf(out->before, sizeof out->before, "%s", g->top->before_args);
  int w = snprintf(out->after, sizeof out->after, "%s in %.*s", g->top->after_args, (int)len, stem);
  size_t at = w > 0 && (size_t)w < sizeof out->after ? (size_t)w : sizeof out->after - 1;
  if (g->n > 1)
    at += (size_t)snprintf(out->after + at, sizeof out->after - at, " and %zu more kernel%s",
                           g->n - 1, g->n == 2 ? "" : "s");
  /* their own delta: a renamed row of the kernel table may group them with others, so its
   * figure differs (review 7: +8.357 here, +8.308 in the renamed row of 6 -> 4 kernels) */
  if (at < sizeof out->after)
    snprintf(out->after + at, sizeof out->after - at, ", %+.3f ms%s in these kernels alone",
             g->delta_us / 1000, g->per_step ? "/step" : "");
}

static size_t template_changes(const an_diff_report *d, rp_fact_change *out, size_t room) {
  template_fact g[RP_FACT_CHANGES * 4];
  size_t n = template_facts(d, g, sizeof g / sizeof g[0]);
  if (n) qsort(g, n, sizeof g[0], cmp_template_facts);
  if (n > room) n = room;
  for (size_t i = 0; i < n; i++) template_fact_text(&g[i], &out[i]);
  return n;
}

/* "1, 3 and 5": the ranks of the Ranks section whose trace is filtered, each once. */
static void filtered_rank_list(const an_report *r, char *buf, size_t cap) {
  size_t used = 0, listed = 0, total = r->limits.filtered_ranks;
  buf[0] = '\0';
  for (size_t s = 0; s < r->n_ranks; s++)
    for (size_t i = 0; i < r->ranks[s].n_rows && used < cap; i++) {
      const an_rank_row *w = &r->ranks[s].rows[i];
      bool seen = false;
      for (size_t t = 0; t < s && !seen; t++)
        for (size_t k = 0; k < r->ranks[t].n_rows && !seen; k++)
          seen = r->ranks[t].rows[k].rank == w->rank;
      if (seen || !w->filtered) continue;
      listed++;
      const char *sep = listed == 1 ? "" : listed == total ? " and " : ", ";
      int n = snprintf(buf + used, cap - used, "%s%ld", sep, w->rank);
      if (n < 0) return;
      used += (size_t)n;
    }
}

/* The Ranks section's instances that a rank's trace lacks where another rank ran them in
 * the same step, over every stage and group, and the longest (NULL when none). */
static const an_rank_group *dropped_total(const an_report *r, size_t *n) {
  const an_rank_group *top = NULL;
  *n = 0;
  for (size_t s = 0; s < r->n_ranks; s++)
    for (size_t g = 0; g < r->ranks[s].n_groups; g++) {
      const an_rank_group *x = &r->ranks[s].groups[g];
      *n += x->n_dropped;
      if (x->n_dropped && (!top || x->dropped_us > top->dropped_us)) top = x;
    }
  return top;
}

/* " The Ranks section finds ..." after a filtered limit's sentence: what the sampler dropped
 * of the collectives, so the gap on the rank that lacks one is not read as its idle. */
static void dropped_sentence(const an_report *r, char *buf, size_t cap) {
  size_t n = 0;
  const an_rank_group *g = dropped_total(r, &n);
  if (!g || !cap) return;
  char what[160] = "", step[32] = "outside the steps";
  if (g->dropped_context || g->dropped_backward)
    snprintf(what, sizeof what, " (%s%s%s)", g->dropped_context ? g->dropped_context : "",
             g->dropped_context && g->dropped_backward ? ", " : "",
             g->dropped_backward ? "backward" : "");
  if (g->dropped_step) snprintf(step, sizeof step, "in step %zu", g->dropped_step);
  snprintf(buf, cap,
           " The Ranks section finds %zu collective instance%s that a rank's trace lacks where "
           "another rank ran %s in the same step; the longest, a collective%s %s, ran %.3f ms "
           "on rank %ld and is missing from rank %ld's trace: GPU idle there on rank %ld is that "
           "collective, not idle to remove, and no rank's wait or straggler evidence.",
           n, n == 1 ? "" : "s", n == 1 ? "it" : "them", what, step, g->dropped_us / 1000.0,
           g->dropped_peer, g->dropped_rank, g->dropped_rank);
}

const char *rp_filtered_limit(const an_report *r, char *buf, size_t cap) {
  const an_trace_limits *l = &r->limits;
  if (!l->filtered && !l->filtered_ranks) return NULL;
  char ranks[256];
  filtered_rank_list(r, ranks, sizeof ranks);
  if (!l->filtered) {
    snprintf(buf, cap,
             "%zu of the %zu ranks read (rank%s %s) were filtered or sampled down to GPU work "
             "(every runtime call launched some), though the tables' rank was not: a sampled "
             "trace drops kernels as well as host work, so the Ranks section compares what "
             "those traces kept (their kernel totals and waits are lower bounds, and a kernel "
             "one of them lacks makes no imbalance row). Profile those ranks unfiltered.",
             l->filtered_ranks, l->ranks_read, l->filtered_ranks == 1 ? "" : "s", ranks);
    size_t used = strlen(buf);
    dropped_sentence(r, buf + used, cap - used);
    return "Filtered ranks";
  }
  int n = snprintf(buf, cap,
                   "every one of the trace's %zu runtime calls launched GPU work and %zu of its "
                   "%zu CPU ops hold one, where an unfiltered PyTorch trace also records calls "
                   "and ops that launch nothing (event queries, attribute reads, views): the "
                   "trace was filtered or sampled down to GPU work (HTA's trace filters do "
                   "this), so host work that launched nothing is missing from it, and host "
                   "time, host-bound bounds and the idle the host explains are lower bounds; a "
                   "sampled trace drops kernels too, so GPU idle may be kernels it dropped.",
                   l->filtered_calls, l->filtered_holding_ops, l->filtered_ops);
  if (n > 0 && (size_t)n < cap && l->ranks_read > 1)
    n += snprintf(buf + n, cap - (size_t)n,
                  " Of the %zu ranks read, %zu %s filtered so (rank%s %s).", l->ranks_read,
                  l->filtered_ranks, l->filtered_ranks == 1 ? "is" : "are",
                  l->filtered_ranks == 1 ? "" : "s", ranks);
  if (n > 0 && (size_t)n < cap) {
    size_t used = (size_t)n;
    dropped_sentence(r, buf + used, cap - used);
    used += strlen(buf + used);
    snprintf(buf + used, cap - used, " Profile the same window unfiltered to see that work.");
  }
  return "Filtered trace";
}

const char *rp_filtered_top(const an_report *r, char *buf, size_t cap) {
  const an_trace_limits *l = &r->limits;
  if (!l->filtered) return NULL;
  char ms[32];
  rp_md_number(ms, sizeof ms, l->filtered_queued_us / 1000.0);
  int n = snprintf(buf, cap,
                   "This trace was filtered or sampled down to GPU work (Limits: Filtered trace): "
                   "its host items rest on the host work the filter kept, their bounds are lower "
                   "bounds, and they follow the items the filter leaves whole");
  if (l->filtered_queued_stage && n > 0 && (size_t)n < cap) {
    size_t dropped = 0, item = l->filtered_queued_item;
    const an_rank_group *g = dropped_total(r, &dropped);
    char by[48] = "which no item bounds";
    if (item) snprintf(by, sizeof by, "which item %zu bounds", item);
    n += snprintf(buf + n, cap - (size_t)n,
                  ". In %s, %s ms/step (%.1f%% of the step) is GPU idle with its next work "
                  "issued and waiting, %s: a sampled trace drops kernels, so that idle may be "
                  "work it dropped",
                  l->filtered_queued_stage, ms, l->filtered_queued_pct, by);
    if (g && n > 0 && (size_t)n < cap)
      n += snprintf(buf + n, cap - (size_t)n,
                    " (the Ranks section finds %zu collective instance%s that a rank's trace "
                    "lacks where another rank ran %s, the longest %.3f ms)",
                    dropped, dropped == 1 ? "" : "s", dropped == 1 ? "it" : "them",
                    g->dropped_us / 1000.0);
  }
  if (n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, ".");
  return buf;
}

size_t rp_diff_fact_changes(const an_diff_report *d, rp_fact_change out[RP_FACT_CHANGES]) {
  const an_diff_input *b = &d->inputs[0], *a = &d->inputs[1];
  const char *what[3] = {"framework", "model", "GPU"};
  const char *vb[3] = {b->framework, b->model, b->gpu}, *va[3] = {a->framework, a->model, a->gpu};
  size_t n = 0;
  for (size_t k = 0; k < 3; k++) {
    if (same_fact(vb[k], va[k])) continue;
    out[n].what = what[k];
    fact_text(out[n].before, sizeof out[n].before, vb[k]);
    fact_text(out[n].after, sizeof out[n].after, va[k]);
    n++;
  }
  if (b->world_size > 0 && a->world_size > 0 && b->world_size != a->world_size) {
    out[n].what = "world size (distributedInfo)";
    snprintf(out[n].before, sizeof out[n].before, "%ld", b->world_size);
    snprintf(out[n].after, sizeof out[n].after, "%ld", a->world_size);
    n++;
  }
  /* the matrix products' number format: another format is another program (fp8 GEMMs run
   * at twice bf16's peak), whatever the kernels' names say */
  if (b->gemm_dtype && a->gemm_dtype && strcmp(b->gemm_dtype, a->gemm_dtype) != 0) {
    out[n].what = "GEMM number format";
    snprintf(out[n].before, sizeof out[n].before, "%s, %.0f %% of the GEMMs' roofline time",
             b->gemm_dtype, b->gemm_dtype_pct);
    snprintf(out[n].after, sizeof out[n].after, "%s, %.0f %% of the GEMMs' roofline time",
             a->gemm_dtype, a->gemm_dtype_pct);
    n++;
  }
  /* graphs appearing or going away: the launch path changed, and with it copies and gaps */
  if (b->graph_pct >= 0 && a->graph_pct >= 0 && (b->graph_pct < 0.5) != (a->graph_pct < 0.5)) {
    out[n].what = "CUDA/HIP graphs";
    graph_text(out[n].before, sizeof out[n].before, b->graph_pct);
    graph_text(out[n].after, sizeof out[n].after, a->graph_pct);
    graph_copies_text(d, out[n].after, sizeof out[n].after);
    n++;
  }
  return n + template_changes(d, out + n, RP_TEMPLATE_FACTS);
}

/* Who a side's tables' trace is, as far as it says: "rank 3 of 8 on host h, GPU 3". */
static void side_identity(const an_diff_input *in, char *buf, size_t cap) {
  int n = 0;
  if (in->rank >= 0 && in->world_size > 0)
    n = snprintf(buf, cap, "rank %ld of %ld", in->rank, in->world_size);
  else if (in->rank >= 0)
    n = snprintf(buf, cap, "rank %ld", in->rank);
  else
    n = snprintf(buf, cap, "a trace stating no rank");
  if (n > 0 && (size_t)n < cap && in->host)
    n += snprintf(buf + n, cap - (size_t)n, " on host %s", in->host);
  if (n > 0 && (size_t)n < cap && in->device >= 0)
    snprintf(buf + n, cap - (size_t)n, "%s GPU %ld", in->host ? "," : " on", in->device);
}

/* Whether a side of the diff is a profile directory (triage diff --rank N picks its rank). */
static bool diff_has_directory(const an_diff_report *d) {
  for (int i = 0; i < 2; i++)
    if (d->inputs[i].kind && !strcmp(d->inputs[i].kind, "directory")) return true;
  return false;
}

const char *rp_diff_identity(const an_diff_report *d, char *buf, size_t cap) {
  unsigned why = d->identity_differs;
  if (!why) return NULL;
  char b[RP_IDENTITY_BYTES / 4], a[RP_IDENTITY_BYTES / 4];
  side_identity(&d->inputs[0], b, sizeof b);
  side_identity(&d->inputs[1], a, sizeof a);
  if (why & AN_DIFF_RANK_DIFFERS) /* --rank applies to a directory side only (review 13) */
    snprintf(buf, cap,
             "The traces are of different ranks: before is %s, after is %s. The ranks of a job "
             "differ in their share of the work and in how long they wait for each other, so "
             "the tables below show that difference as well as any change between the runs: "
             "no row counts as a regression. %s",
             b, a,
             diff_has_directory(d)
                 ? "Compare the same rank of each run (triage diff --rank N reads rank N of a "
                   "side that is a profile directory) to see what changed."
                 : "Profile the same rank in both runs to see what changed.");
  else
    snprintf(buf, cap, "The traces are of the same rank on other %s: before is %s, after is %s.",
             (why & AN_DIFF_HOST_DIFFERS) && (why & AN_DIFF_DEVICE_DIFFERS) ? "hosts and GPUs"
             : (why & AN_DIFF_HOST_DIFFERS)                                 ? "hosts"
                                                                            : "GPUs",
             b, a);
  return buf;
}

const char *rp_diff_incomparable_why(unsigned why) {
  bool gpu = why & AN_DIFF_GPU_DIFFERS, world = why & AN_DIFF_WORLD_DIFFERS;
  return gpu && world ? "the GPU and the world size differ"
         : gpu        ? "the GPU differs"
         : world      ? "the world size differs"
                      : "";
}

const char *rp_diff_incomparable_todo(unsigned why) {
  bool gpu = why & AN_DIFF_GPU_DIFFERS, world = why & AN_DIFF_WORLD_DIFFERS;
  return gpu && world
             ? "Profile both runs on the same GPU with the same world size to compare them."
         : gpu   ? "Profile both runs on the same GPU to compare them."
         : world ? "Profile both runs with the same world size to compare them."
                 : "";
}

/* Ranks as "0-3" for a run of three or more, else "0, 2, 5", appended to buf. */
static void rank_list(char *buf, size_t cap, const long *r, size_t n) {
  size_t len = strlen(buf);
  bool run = n > 2;
  for (size_t i = 1; i < n && run; i++) run = r[i] == r[i - 1] + 1;
  if (run) {
    snprintf(buf + len, cap - len, "%ld-%ld", r[0], r[n - 1]);
    return;
  }
  for (size_t i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%ld", i ? ", " : "", r[i]);
}

const char *rp_diff_ranks_read(const an_diff_report *d, char *buf, size_t cap) {
  const an_diff_input *b = &d->inputs[0], *a = &d->inputs[1];
  buf[0] = '\0';
  if (b->only_rank >= 0 && a->only_rank == b->only_rank)
    snprintf(buf, cap,
             "Both directories were read for rank %ld alone (triage diff --rank %ld): their "
             "other ranks were not read.",
             b->only_rank, b->only_rank);
  else
    for (int i = 0; i < 2; i++)
      if (d->inputs[i].only_rank >= 0)
        snprintf(buf + strlen(buf), cap - strlen(buf),
                 "%sThe %s directory was read for rank %ld alone (triage diff --rank %ld): its "
                 "other ranks were not read.",
                 buf[0] ? " " : "", i ? "after" : "before", d->inputs[i].only_rank,
                 d->inputs[i].only_rank);
  for (int i = 0; i < 2; i++) {
    const an_diff_input *in = &d->inputs[i];
    if (!in->n_unread) continue;
    snprintf(buf + strlen(buf), cap - strlen(buf), "%sThe %s directory's rank%s ",
             buf[0] ? " " : "", i ? "after" : "before", in->n_unread == 1 ? "" : "s");
    rank_list(buf, cap, in->unread, in->n_unread);
    snprintf(buf + strlen(buf), cap - strlen(buf),
             " could not be read (the reader refused %s trace: its report's Limits say why) "
             "and %s not compared.",
             in->n_unread == 1 ? "its" : "their", in->n_unread == 1 ? "is" : "are");
  }
  return buf[0] ? buf : NULL;
}

const char *rp_diff_ranks_compared(const an_diff_stage *s, char *buf, size_t cap) {
  long *v = malloc((s->n_ranks ? s->n_ranks : 1) * sizeof *v);
  buf[0] = '\0';
  if (!v || !s->n_ranks) return free(v), buf;
  size_t n = 0;
  for (size_t i = 0; i < s->n_ranks; i++)
    if (s->ranks[i].in_before && s->ranks[i].in_after) v[n++] = s->ranks[i].rank;
  snprintf(buf, cap, "Compared rank by rank: %s", n ? (n == 1 ? "rank " : "ranks ") : "none");
  if (n) rank_list(buf, cap, v, n);
  snprintf(buf + strlen(buf), cap - strlen(buf),
           " (each rank before with the same rank after; the noise floor comes from the "
           "spread across each rank's steps, never across ranks, which differ by design)");
  for (int side = 0; side < 2; side++) {
    n = 0;
    for (size_t i = 0; i < s->n_ranks; i++)
      if (s->ranks[i].in_before != s->ranks[i].in_after && s->ranks[i].in_after == (side == 1))
        v[n++] = s->ranks[i].rank;
    if (!n) continue;
    snprintf(buf + strlen(buf), cap - strlen(buf), "; not compared, only %s has it: rank%s ",
             side ? "after" : "before", n == 1 ? "" : "s");
    rank_list(buf, cap, v, n);
  }
  free(v);
  snprintf(buf + strlen(buf), cap - strlen(buf), ".");
  return buf;
}

const char *rp_diff_noise_source(an_noise_source s) {
  return s == AN_NOISE_STEPS        ? "twice the spread across steps"
         : s == AN_NOISE_RANK_STEPS ? "twice the spread across a rank's steps"
                                    : "the packs' floor";
}

const char *rp_diff_straggler_word(const an_diff_rank_row *r) {
  if (r->before_straggler && r->after_straggler) return "both runs";
  if (r->before_straggler) return "before";
  return r->after_straggler ? "after" : NULL;
}

const char *rp_rank_straggler(const an_rank_report *rr, long world, char *b, size_t cap) {
  if (world > (long)rr->n_rows)
    snprintf(b, cap, "straggler of the %zu read", rr->n_rows);
  else
    snprintf(b, cap, "straggler");
  return b;
}

const char *rp_rank_verdict(an_rank_verdict v) {
  switch (v) {
    case AN_RANK_STRAGGLER:
      return "straggler";
    case AN_RANK_SPREAD:
      return "wait spread across ranks";
    case AN_RANK_BELOW_BAR:
      return "no straggler (below the bar)";
    case AN_RANK_COUNTS_DIFFER:
      return "instance counts differ";
    case AN_RANK_NO_COLLECTIVES:
      break;
  }
  return "no collectives to compare";
}

const char *rp_rank_verdict_id(an_rank_verdict v) {
  switch (v) {
    case AN_RANK_STRAGGLER:
      return "straggler";
    case AN_RANK_SPREAD:
      return "spread";
    case AN_RANK_BELOW_BAR:
      return "below-bar";
    case AN_RANK_COUNTS_DIFFER:
      return "counts-differ";
    case AN_RANK_NO_COLLECTIVES:
      break;
  }
  return "no-collectives";
}

const char *rp_rank_cause(an_rank_cause c) {
  return c == AN_CAUSE_HOST        ? "host"
         : c == AN_CAUSE_GPU       ? "GPU"
         : c == AN_CAUSE_IMBALANCE ? "work imbalance"
                                   : "unknown";
}

const char *rp_rank_cause_id(an_rank_cause c) {
  return c == AN_CAUSE_HOST        ? "host"
         : c == AN_CAUSE_GPU       ? "gpu"
         : c == AN_CAUSE_IMBALANCE ? "imbalance"
                                   : "unknown";
}

/* "; leaving out kernels a rank's sample dropped (its ops launch them as often a step):
 * rank 1's 1.02 ms" (an_rank_excess straggler_left_us, peers_left_us), or "". */
static const char *excess_left_out(const an_rank_group *g, const an_rank_excess *x, char *b,
                                   size_t cap) {
  char ms[32], mine[64] = "", peers[64] = "";
  if (x->straggler_left_us > 0) {
    rp_md_number(ms, sizeof ms, x->straggler_left_us / 1000.0);
    snprintf(mine, sizeof mine, "rank %ld's %s ms", g->straggler, ms);
  }
  if (x->peers_left_us > 0) {
    rp_md_number(ms, sizeof ms, x->peers_left_us / 1000.0);
    snprintf(peers, sizeof peers, "the others' %s ms", ms);
  }
  *b = 0;
  if (*mine || *peers)
    snprintf(b, cap,
             "; leaving out kernels a rank's sample dropped (its ops launch them as often a "
             "step): %s%s%s",
             mine, *mine && *peers ? " and " : "", peers);
  return b;
}

/* "embedding 125.31 ms against 72.28 ms (1.7x, +26.51 ms/step)": the straggler's first
 * families of excess work against its peers' median, most first. */
const char *rp_rank_excess_times(const an_rank_group *g, const an_rank_excess *x, char *b,
                                 size_t cap) {
  char mine[32], peers[32], per[32], ratio[32] = "", left[160];
  rp_md_number(mine, sizeof mine, x->straggler_us / 1000.0);
  rp_md_number(peers, sizeof peers, x->peers_us / 1000.0);
  rp_md_number(per, sizeof per, x->per_step_us / 1000.0);
  if (x->peers_us > 0) snprintf(ratio, sizeof ratio, "%.1fx, ", x->straggler_us / x->peers_us);
  snprintf(b, cap, " %s ms against %s ms (%s+%s ms%s%s)", mine, peers, ratio, per,
           g->n_steps ? "/step" : "", excess_left_out(g, x, left, sizeof left));
  return b;
}

const char *rp_rank_excess(const an_rank_group *g, size_t max, char *b, size_t cap) {
  size_t len = 0;
  *b = 0;
  for (size_t i = 0; i < g->n_excess && i < max && len < cap; i++) {
    const an_rank_excess *x = &g->excess[i];
    char times[RP_RANK_EXCESS_BYTES];
    len += (size_t)snprintf(b + len, cap - len, "%s%s%.80s%s%s", i ? ", " : "",
                            x->is_kernel ? "`" : "", x->family, x->is_kernel ? "`" : " kernels",
                            rp_rank_excess_times(g, x, times, sizeof times));
  }
  if (g->n_excess > max && len < cap)
    snprintf(b + len, cap - len, " and %zu more famil%s", g->n_excess - max,
             g->n_excess - max == 1 ? "y" : "ies");
  return b;
}

const char *rp_rank_group_source(an_rank_group_source s) {
  switch (s) {
    case AN_GROUP_PG_ARGS:
      return "the collectives' process group";
    case AN_GROUP_SIZE_ARG:
      return "pg_config, by group size";
    case AN_GROUP_TP:
      return "pg_config TP group, ranks that end together";
    case AN_GROUP_CO_MOVING:
      return "pg_config, ranks that end together";
    case AN_GROUP_ALL_RANKS:
      break;
  }
  return "all ranks";
}

const char *rp_rank_group_source_id(an_rank_group_source s) {
  switch (s) {
    case AN_GROUP_PG_ARGS:
      return "pg-args";
    case AN_GROUP_SIZE_ARG:
      return "group-size";
    case AN_GROUP_TP:
      return "tp-group";
    case AN_GROUP_CO_MOVING:
      return "co-moving";
    case AN_GROUP_ALL_RANKS:
      break;
  }
  return "all-ranks";
}

/* Whether item it names anchor id, as its own or among its evidence. */
static bool item_names(const an_summary_item *it, const char *id) {
  if (!strcmp(it->anchor, id)) return true;
  for (size_t k = 0; k < it->n_more; k++)
    if (!strcmp(it->more[k], id)) return true;
  return false;
}

/* The first item naming overlap row `row`; a wait row's is the wait item when one names it
 * (a pipeline item of its measured transfer may rank above it: the row's verdict is the
 * wait's). */
size_t rp_overlap_row_item(const an_report *rep, const char *stage_id, size_t row) {
  char id[64];
  an_summary_anchor(id, sizeof id, "overlap", stage_id, row);
  bool wait = false;
  for (size_t s = 0; s < rep->n_stages; s++) {
    const an_overlap_stage *o = rep->stages[s].overlap;
    if (o && row < o->n_rows && !strcmp(rep->stages[s].id, stage_id))
      wait = o->rows[row].verdict == AN_OVERLAP_WAIT;
  }
  size_t first = 0;
  for (size_t i = 0; i < rep->n_summary; i++) {
    if (!item_names(&rep->summary[i], id)) continue;
    if (!wait || rep->summary[i].kind == AN_SUMMARY_WAIT) return i + 1;
    if (!first) first = i + 1;
  }
  return first;
}

/* Whether printed restructure rows i and j list the same options. */
static bool same_options(const an_overlap_row *a, const an_overlap_row *b) {
  return a->restructure_options == b->restructure_options &&
         a->n_restructure_options == b->n_restructure_options;
}

static void add_options(ut_buf *t, const an_overlap_row *r) {
  for (size_t k = 0; k < r->n_restructure_options; k++)
    ut_buf_addf(t, "%s%s", k ? "; " : "", r->restructure_options[k]);
  ut_buf_add(t, ".");
}

char *rp_overlap_restructure_text(const an_overlap_stage *o) {
  size_t first = o->n_rows, groups = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    if (!o->rows[i].n_restructure_options) continue;
    if (first == o->n_rows) first = i;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = o->rows[j].n_restructure_options && same_options(&o->rows[j], &o->rows[i]);
    groups += !seen;
  }
  if (first == o->n_rows) return NULL;
  ut_buf t = {0};
  ut_buf_add(&t, "Nothing runs beside the restructure rows. Options");
  if (groups == 1) { /* one list for every row: the stage's */
    ut_buf_add(&t, ": ");
    add_options(&t, &o->rows[first]);
    return text_done(&t);
  }
  /* each row by its own dependency rule, rows with one list named together */
  for (size_t i = first; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    bool seen = false;
    for (size_t j = first; j < i && !seen; j++)
      seen = o->rows[j].n_restructure_options && same_options(&o->rows[j], r);
    if (!r->n_restructure_options || seen) continue;
    ut_buf_add(&t, i == first ? " for " : " For ");
    size_t n = 0;
    for (size_t j = i; j < o->n_rows; j++)
      if (o->rows[j].n_restructure_options && same_options(&o->rows[j], r))
        ut_buf_addf(&t, "%sO%zu", n++ ? ", " : "", j + 1);
    ut_buf_add(&t, ": ");
    add_options(&t, r);
  }
  return text_done(&t);
}

/* The rows whose wait is unknown for want of a like instance, or for a latency-bound floor
 * that waited (deviation O21), each kind in its own words. */
static size_t wait_unknown_rows(ut_buf *t, const an_overlap_stage *o, bool latency, size_t *n) {
  size_t k = 0, listed = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (r->recommendation != AN_RECOMMEND_WAIT_UNKNOWN || r->below_floor) continue;
    bool by_latency = r->latency_instances * 2 > r->alone_instances;
    if (by_latency != latency) continue;
    ut_buf_addf(t, "%sO%zu", listed++ ? ", " : *n ? " Wait unknown: " : "Wait unknown: ", i + 1);
    k += latency ? r->latency_instances : r->alone_instances;
  }
  *n += listed;
  return listed ? k : SIZE_MAX;
}

/* One kind's rows and why their split is unknown; *n counts the rows listed so far. What to
 * read next follows what was read: one rank's trace points to every rank's; with several
 * read, the Ranks section already compares their matched instances (brief 12 defect 5). */
static void wait_unknown_kind(ut_buf *t, const an_overlap_stage *o, bool latency, long ranks_read,
                              size_t *n) {
  size_t before = *n, k = wait_unknown_rows(t, o, latency, n);
  if (k == SIZE_MAX) return;
  bool one = *n - before == 1;
  char steps[64] = "", next[256];
  if (!latency) snprintf(steps, sizeof steps, " over the %zu counted steps", o->n_steps);
  if (ranks_read >= 2)
    snprintf(next, sizeof next,
             "the %ld ranks read are compared in the Ranks section (each matched instance "
             "against the fastest rank's)%s",
             ranks_read, latency ? "" : "; capture more steps for a floor of this table's own");
  else
    snprintf(next, sizeof next, "read every rank's trace (%s)%s",
             latency ? "the fastest rank's instance gives a floor"
                     : "the ranks' like instances give a floor",
             latency ? "" : ", or capture more steps");
  ut_buf_addf(t,
              " (%zu instance%s%s) %s %s, so %s split into transfer and wait is unknown and no "
              "overlap bound is put forward: %s.",
              k, k == 1 ? "" : "s", steps, latency ? (one ? "is" : "are") : (one ? "has" : "have"),
              latency ? "floored by a latency-bound message (its time is the fixed cost, not a "
                        "transfer: under the size collectives.latency_bound_bytes) that itself "
                        "took several times that cost (the floor holds wait)"
                      : "no like instance to take a floor from (a different message or "
                        "position in each step)",
              one ? "its" : "their", next);
}

void rp_overlap_bar_text(const an_overlap_stage *o, char *buf, size_t cap) {
  const char *unit = o->n_steps ? "/step" : "/step (stage window: no steps)";
  if (o->min_step_pct > 0)
    snprintf(buf, cap, "%.2f ms%s or %g%% of the step", o->recoverable_floor_ms, unit,
             o->min_step_pct);
  else
    snprintf(buf, cap, "%.2f ms%s", o->recoverable_floor_ms, unit);
}

char *rp_overlap_wait_unknown_text(const an_overlap_stage *o, long ranks_read) {
  ut_buf t = {0};
  size_t n = 0;
  wait_unknown_kind(&t, o, false, ranks_read, &n);
  wait_unknown_kind(&t, o, true, ranks_read, &n);
  if (!n) {
    ut_buf_free(&t);
    return NULL;
  }
  return text_done(&t);
}

char *rp_overlap_own_stream_text(const an_overlap_stage *o) {
  ut_buf t = {0};
  size_t n = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (!r->own_stream || r->below_floor || r->host_bound || !r->n_own_stream_levers) continue;
    ut_buf_addf(&t,
                "%sO%zu %s: it already runs on a stream of its own, beside the compute on "
                "another, so there is no stream to move it to; what puts compute beside it: ",
                n++ ? " " : "", i + 1, rp_recommendation(r->recommendation));
    for (size_t k = 0; k < r->n_own_stream_levers; k++)
      ut_buf_addf(&t, "%s%s", k ? "; " : "", r->own_stream_levers[k]);
    ut_buf_add(&t, ".");
  }
  if (!n) {
    ut_buf_free(&t);
    return NULL;
  }
  return text_done(&t);
}

const char *rp_overlap_slow_mid_step_text(const an_overlap_stage *o) {
  bool slow = false, other = false;
  for (size_t i = 0; i < o->n_rows; i++) {
    slow |= o->rows[i].recommendation == AN_RECOMMEND_SLOW_MID_STEP;
    other |= o->rows[i].verdict == AN_OVERLAP_WAIT &&
             o->rows[i].recommendation != AN_RECOMMEND_SLOW_MID_STEP;
  }
  if (!slow || other) return NULL;
  if (o->wait_story == AN_WAIT_STORY_IDLE) /* deviation O26 */
    return "Slow mid-step rows run above their floor at the step's later collectives while "
           "its first collectives, where a late rank's arrival lands, ran at theirs: on this "
           "step, idle for the host or for queued work most of the time, the ranks reach them "
           "at different times, so the idle item of What to try first is their fix: not "
           "headroom, and nothing in this trace points to a late rank.";
  return "Slow mid-step rows run above their floor at the step's later collectives while its "
         "first collectives, where a late rank's arrival lands, ran at theirs (What to try "
         "first: find why, e.g. compute kernels sharing the GPU with them, the link, ranks "
         "drifting apart): not headroom, and nothing in this trace points to a late rank.";
}

char *rp_overlap_shared_compute_text(const an_overlap_stage *o) {
  size_t cut = 0, given = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    cut += r->compute_order && r->recoverable_ms < r->own_recoverable_ms - 1e-9;
  }
  if (o->n_sharing_compute < 2 || !cut) return NULL;
  ut_buf t = {0};
  ut_buf_addf(&t,
              "The rows that hide behind compute on another stream share the stage's %.2f "
              "ms%s of it not already hiding them, taken in turn (P1 first, then the larger "
              "bound): ",
              o->shared_compute_ms, o->n_steps ? "/step" : " (stage window)");
  for (int k = 1; k <= (int)o->n_rows; k++)
    for (size_t i = 0; i < o->n_rows; i++) {
      const an_overlap_row *r = &o->rows[i];
      if (r->compute_order != k) continue;
      ut_buf_addf(&t, "%s", given++ ? "; " : "");
      if (r->below_floor && rp_launch_context(r))
        ut_buf_addf(&t, "the %s row (folded) %.2f", rp_launch_context(r), r->recoverable_ms);
      else if (r->below_floor)
        ut_buf_addf(&t, "a folded row %.2f", r->recoverable_ms);
      else
        ut_buf_addf(&t, "O%zu %.2f", i + 1, r->recoverable_ms);
      if (r->recoverable_ms < r->own_recoverable_ms - 1e-9)
        ut_buf_addf(&t, " of its own %.2f", r->own_recoverable_ms);
    }
  ut_buf_add(&t, ".");
  return text_done(&t);
}

/* Whether a printed row's recoverable time is bounded by the compute beside it. */
static bool bound_shown(const an_overlap_row *r) {
  return r->compute_order && !r->below_floor && !r->host_bound && r->recoverable_ms > 0;
}

char *rp_overlap_bound_text(const an_overlap_stage *o) {
  size_t n = 0;
  bool ahead = false;
  for (size_t i = 0; i < o->n_rows; i++) {
    n += bound_shown(&o->rows[i]);
    ahead |= bound_shown(&o->rows[i]) && o->rows[i].dep_class &&
             !strcmp(o->rows[i].dep_class, "prefetchable");
  }
  if (!n) return NULL;
  const char *per = o->n_steps ? " ms/step" : " ms (stage window)";
  ut_buf t = {0};
  ut_buf_addf(&t,
              "Bounds behind compute: a row hides at most the lesser of its exposed time and "
              "the compute another stream can run beside it, not already hiding it%s. ",
              ahead ? " (a transfer fetched a batch ahead hides under this step's compute)" : "");
  size_t k = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    if (!bound_shown(r)) continue;
    bool exposed = r->bound_exposed_ms <= r->bound_compute_ms;
    ut_buf_addf(&t, "%sO%zu %.2f%s: %s binds (%s %.2f%s)", k++ ? "; " : "", i + 1,
                r->recoverable_ms, per, exposed ? "its exposed time" : "the compute beside it",
                exposed ? "compute beside it" : "exposed",
                exposed ? r->bound_compute_ms : r->bound_exposed_ms, per);
  }
  ut_buf_add(&t, ".");
  return text_done(&t);
}

/* Bytes as GB, MB or KB (powers of ten, as the trace's rates). */
static void fmt_bytes(char *b, size_t cap, double bytes) {
  if (bytes >= 1e9)
    snprintf(b, cap, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    snprintf(b, cap, "%.1f MB", bytes / 1e6);
  else
    snprintf(b, cap, "%.0f KB", bytes / 1e3);
}

/* A fraction in words where one reads naturally ("half", "a quarter"), else a percentage:
 * the bar the analysis judged a copy by, whatever the pack sets it to. */
static void fmt_fraction(char *b, size_t cap, double f) {
  static const struct {
    double f;
    const char *w;
  } words[] = {{0.5, "half"}, {0.25, "a quarter"}, {0.75, "three quarters"}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (fabs(f - words[i].f) < 1e-9) {
      snprintf(b, cap, "%s", words[i].w);
      return;
    }
  snprintf(b, cap, "%.0f%%", f * 100.0);
}

const char *rp_copy_lever(bool pageable) {
  return pageable ? "pageable memory is staged through a pinned buffer: pin it (pin_memory=True)"
                  : "look for transfers sharing the link (other GPUs' copies behind one PCIe "
                    "switch, NCCL or a NIC on it), host memory on another NUMA node than the "
                    "GPU (bind the process to the GPU's node), or memory that is not pinned";
}

char *rp_overlap_copy_rate_text(const an_overlap_stage *o) {
  ut_buf t = {0};
  size_t k = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    /* a device copy's rate says nothing of a link: host copies only */
    if (r->below_floor || !r->host_copy || !(r->copy_us > 0)) continue;
    char all[32], big[32];
    fmt_bytes(all, sizeof all, r->copy_bytes);
    fmt_bytes(big, sizeof big, r->copy_max_bytes);
    ut_buf_addf(&t, "%sO%zu moves %s at %.1f GB/s (its largest copy %s)",
                k++ ? "; " : "Copy rates: ", i + 1, all, an_overlap_copy_gbs(r), big);
    if (!r->copy_slow) continue;
    char bar[32];
    fmt_fraction(bar, sizeof bar, r->copy_slow_fraction);
    ut_buf_addf(&t,
                ", under %s of one direction of the host link (%.0f GB/s, the device pack's "
                "PCIe figure): %s%s",
                bar, r->host_link_gbs,
                r->copy_pageable ? "" : "pinned copies reach about three quarters of it, so ",
                rp_copy_lever(r->copy_pageable));
  }
  if (!k) {
    ut_buf_free(&t);
    return NULL;
  }
  ut_buf_add(&t, ".");
  return text_done(&t);
}

char *rp_overlap_transfer_text(const an_overlap_stage *o) {
  const char *per = o->n_steps ? " ms/step" : " ms (stage window)";
  ut_buf t = {0};
  size_t k = 0;
  for (size_t i = 0; i < o->n_rows; i++) {
    const an_overlap_row *r = &o->rows[i];
    double b = r->transfer_bound_ms;
    if (!an_overlap_transfer_shown(o, r)) continue;
    ut_buf_addf(
        &t,
        "%sO%zu's steady part is transfer its instances' floors measured, not wait: %s; "
        "that hides at most %.2f%s of it (the compute beside it left by the rows "
        "above: %.2f%s)",
        k++ ? "; " : "Transfer beside the wait (the row recovers 0: its wait is the wait item's): ",
        i + 1, r->transfer_lever, b, per, r->transfer_compute_ms, per);
  }
  if (!k) {
    ut_buf_free(&t);
    return NULL;
  }
  ut_buf_add(&t, ".");
  return text_done(&t);
}

const char *rp_overlap_unrecorded(const an_stage_report *st) {
  if (!st || !st->timeline || !st->timeline->graph_unrecorded) return NULL;
  return "This trace is missing graph-replayed kernels (the time account: graph replays "
         "incomplete): kernels it did not record may have run beside these rows, so their "
         "exposed times and waits are unmeasured; capture again before acting on them.";
}

const char *rp_overlap_gpu_waits(const an_overlap_stage *o) {
  if (!o->gpu_waits) return NULL;
  if (o->n_host_bound) /* deviation O26 */
    return o->launch_bound
               ? "The GPU waits in this stage, mostly for launch spacing (What to try "
                 "first): overlap and restructure rows only move GPU time the step does not "
                 "wait on, so they are P4 and recover 0 until that is fixed; elimination saves "
                 "GPU time, not step time (P2); fusion rows launch fewer kernels and keep their "
                 "priority."
               : "The GPU waits in this stage (What to try first): overlap and "
                 "restructure rows only move GPU time the step does not wait on (communication "
                 "is not the limit), so they are P4 and recover 0 until that is fixed; the other "
                 "rows save GPU time, not step time, so none is P1.";
  return o->launch_bound
             ? "The GPU waits in this stage, mostly for launch spacing (What to try "
               "first): overlap and elimination save GPU time, not step time, until that is "
               "fixed, so those rows are P2; fusion rows launch fewer kernels and keep their "
               "priority."
             : "The GPU waits in this stage (What to try first): these rows save "
               "GPU time, not step time, until that is fixed, so none is P1.";
}

/* The idle the gate counted, on the time account's basis (one decimal, as it prints): the
 * host's part, the part with work issued and waiting (queued, awaiting a collective's
 * result, no launch record) when it prints, and the whole idle when the rest (one-time
 * setup, gaps too short to name) shows at that precision. */
static void banner_idle(const an_bottleneck *b, char *buf, size_t cap) {
  char host[16], queued[16], gate[16], all[16];
  snprintf(host, sizeof host, "%.1f", b->idle_pct);
  snprintf(queued, sizeof queued, "%.1f", b->queued_pct);
  snprintf(gate, sizeof gate, "%.1f", b->idle_pct + b->queued_pct);
  snprintf(all, sizeof all, "%.1f", b->all_idle_pct);
  bool has_queued = strcmp(queued, "0.0") != 0 && strcmp(queued, "-0.0") != 0;
  /* a benchmark step spent mostly in the allocator measures allocation, not its kernels */
  const char *alloc = b->alloc_bound ? ", mostly the caching allocator growing inside the "
                                       "counted step (the step times allocation, not its "
                                       "kernels)"
                                     : "";
  const char *launch = b->launch_bound ? ", mostly launch spacing" : "";
  int n = has_queued ? snprintf(buf, cap,
                                "%s%% of each step is GPU idle: %s%% for the host%s%s, %s%% with "
                                "its next work issued and waiting (on another stream, an event, "
                                "a graph's input or a collective's result)",
                                gate, host, alloc, launch, queued)
                     : snprintf(buf, cap, "%s%% of each step is GPU idle for the host%s%s", host,
                                alloc, launch);
  size_t used = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
  /* the host far ahead settles the reading: the queue is gated on the GPU (review 19) */
  if (has_queued && b->lead.ahead && b->lead.stream && used < cap) {
    char m[32];
    rp_md_number(m, sizeof m, (double)b->lead.median_ns / 1e6);
    n = snprintf(buf + used, cap - used,
                 " (stream %.40s's kernels start a median %s ms after their launch call: the "
                 "host is far ahead, and the queue is gated on the GPU's side)",
                 b->lead.stream, m);
    used += n < 0 ? 0 : (size_t)n < cap - used ? (size_t)n : cap - used - 1;
  }
  if (b->all_idle_pct > b->idle_pct + b->queued_pct && strcmp(gate, all) != 0)
    snprintf(buf + used, cap - used,
             " (of the time account's %s%% idle: the rest is one-time setup and gaps too short "
             "to name)",
             all);
}

/* "; besides, collectives wait for other ranks in 3.2% of the step (busy GPU time, not
 * idle)", or nothing when the wait prints as 0.0: a single-GPU run has no other ranks to
 * wait for, and "0.0% wait" reads as a finding. A collective waiting keeps the GPU busy, so
 * its share is said apart from the idle split, never added to it (review 12 defect 4:
 * "49.3% idle: 44.5% host, 4.9% waiting and 20.7% collective wait" summed to 70%). */
static void banner_wait(const an_bottleneck *b, char *buf, size_t cap) {
  char pct[16];
  snprintf(pct, sizeof pct, "%.1f", b->wait_pct);
  if (strcmp(pct, "0.0") == 0 || strcmp(pct, "-0.0") == 0)
    buf[0] = '\0';
  else
    snprintf(buf, cap,
             "; besides, collectives wait for other ranks in %s%% of the step (busy GPU time, "
             "not idle)",
             pct);
}

/* The FP32 matmul item the gate left out (review 20 defect 6): what comes once the host is
 * fixed, its bound and lever (docs/roofline.md "FP32 matmuls"). */
static void banner_fp32(const an_bottleneck *b, char *buf, size_t cap) {
  size_t used = strlen(buf);
  if (b->fp32_us <= 0 || !b->fp32_lever || used >= cap) return;
  const an_fp32_lever *l = &b->fp32;
  bool tf32 = l->tf32_leads, bf16 = l->amp_dtype && !strcmp(l->amp_dtype, "bf16");
  size_t n = tf32 ? l->simt_n : l->simt_n + l->tf32_n;
  snprintf(buf + used, cap - used,
           " Once that is fixed: %zu %s kernel%s %s, %.2f ms/step of GPU time, of which %s "
           "could take at most %.2f ms/step (the FP32 matmul item, docs/roofline.md%s): %s.",
           n, tf32 ? "GEMM" : "matmul", n == 1 ? "" : "s",
           tf32 ? (n == 1 ? "runs FP32 on the CUDA cores" : "run FP32 on the CUDA cores")
                : "run in FP32 or TF32",
           (tf32 ? l->simt_us : l->simt_us + l->tf32_us) / 1000.0,
           tf32   ? "TF32"
           : bf16 ? "autocast to bf16"
                  : "autocast to fp16",
           b->fp32_us / 1000.0,
           l->no_bytes ? "; no shapes in the trace: their memory floor unknown, the bound "
                         "keeps only their launches' latency floor"
                       : "",
           b->fp32_lever);
}

const char *rp_bottleneck_tail(const an_bottleneck *b, char *buf, size_t cap) {
  char idle[512], wait[128];
  banner_idle(b, idle, sizeof idle);
  /* launch-bound: fewer kernels is the fix, so fusion items stay (an_bottleneck) */
  banner_wait(b, wait, sizeof wait);
  int n = b->launch_bound
              ? snprintf(buf, cap,
                         ": %s%s. Fewer kernels (graphs, fusion, fused "
                         "chains, kernels a named change removes) shorten the step; kernel "
                         "tuning and overlap cannot until that is fixed",
                         idle, wait)
              : snprintf(buf, cap,
                         ": %s%s. Kernel, fusion and overlap savings cannot shorten the step "
                         "until that is fixed",
                         idle, wait);
  size_t used = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
  if (b->dropped) /* launch-bound: the items of fewer kernels stay, the others go */
    n = snprintf(buf + used, cap - used,
                 ", so %zu %s item%s %s left out here (the tables below still list them).",
                 b->dropped, b->launch_bound ? "kernel-tuning or overlap" : "such",
                 b->dropped == 1 ? "" : "s", b->dropped == 1 ? "is" : "are");
  else
    n = snprintf(buf + used, cap - used, ".");
  used += n < 0 ? 0 : (size_t)n < cap - used ? (size_t)n : cap - used - 1;
  if (b->lever_id)
    snprintf(buf + used, cap - used,
             " Among them, kernels a named change removes (%s, %.2f ms/step of GPU time, "
             "%.2f ms/step with nothing else on the GPU): %s.",
             b->lever_id, b->lever_us / 1000.0, b->lever_alone_us / 1000.0, b->lever);
  banner_fp32(b, buf, cap);
  return buf;
}

/* "80-90" of two percentages, or one when they print alike. */
static void pct_range(char *buf, size_t cap, double lo, double hi) {
  char a[16], b[16];
  snprintf(a, sizeof a, "%.0f", lo);
  snprintf(b, sizeof b, "%.0f", hi);
  snprintf(buf, cap, strcmp(a, b) ? "%s-%s" : "%s", a, b);
}

/* Review 22 defect 8: the GEMMs' rate said apart from the items, with what tuning them all
 * wins at most (docs/roofline.md "GEMMs near their attainable rate"). */
const char *rp_gemm_rate_tail(const an_gemm_rate *g, char *buf, size_t cap) {
  char share[16], at[40], peak[40], of[48], tune[32], step[32];
  snprintf(share, sizeof share, "%.0f", g->near_pct);
  pct_range(at, sizeof at, g->lo_pct, g->hi_pct);
  pct_range(peak, sizeof peak, g->peak_lo_pct, g->peak_hi_pct);
  if (g->memory && g->compute)
    snprintf(of, sizeof of, "of their roofline");
  else if (g->memory)
    snprintf(of, sizeof of, "of the HBM peak");
  else
    snprintf(of, sizeof of, "of the%s%s dense peak", g->dtype ? " " : "", g->dtype ? g->dtype : "");
  rp_fmt_ms(tune, sizeof tune, g->tune_us);
  rp_fmt_ms(step, sizeof step, g->step_us);
  snprintf(buf, cap,
           ": GEMMs hold %.1f%% of the kernel time, %s%s of it in kernels at %s%% of the "
           "device's attainable rate (%s%% %s): little to win from tuning them, at most %s "
           "ms/step (%.1f%% of the %s ms %s) were every GEMM to reach that rate (their "
           "headroom, docs/roofline.md).",
           g->matmul_pct, strcmp(share, "100") ? share : "all", strcmp(share, "100") ? "%" : "", at,
           peak, of, tune, g->step_us > 0 ? g->tune_us / g->step_us * 100.0 : 0, step,
           g->n_steps ? "step" : "stage window: no steps");
  return buf;
}

/* "3 on ranks 0-3, 4 on ranks 4-7": each step count of the rows with the ranks that have it
 * (rows are in rank order), counts ascending from lo to hi. */
static void steps_by_rank(const an_rank_report *rep, size_t lo, size_t hi, char *buf, size_t cap) {
  size_t len = strlen(buf);
  for (size_t c = lo; c <= hi && len < cap; c++) {
    const char *sep = "";
    for (size_t i = 0; i < rep->n_rows && len < cap; i++) {
      if (rep->rows[i].n_steps != c) continue;
      size_t j = i;
      while (j + 1 < rep->n_rows && rep->rows[j + 1].n_steps == c &&
             rep->rows[j + 1].rank == rep->rows[j].rank + 1)
        j++;
      int n = *sep ? snprintf(buf + len, cap - len, "%s%ld", sep, rep->rows[i].rank)
                   : snprintf(buf + len, cap - len, "%s%zu on rank%s %ld", len ? ", " : "", c,
                              j > i || i + 1 < rep->n_rows ? "s" : "", rep->rows[i].rank);
      if (n > 0) len += (size_t)n;
      if (j > i && len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "-%ld", rep->rows[j].rank);
      sep = ", ";
      i = j;
    }
  }
}

const char *rp_rank_span(const an_rank_report *rep, char *buf, size_t cap) {
  size_t lo = SIZE_MAX, hi = 0;
  for (size_t i = 0; i < rep->n_rows; i++) {
    if (rep->rows[i].n_steps < lo) lo = rep->rows[i].n_steps;
    if (rep->rows[i].n_steps > hi) hi = rep->rows[i].n_steps;
  }
  /* DP replicas (or a rank whose capture lost steps) count their own steps: a total over
   * more steps is not more work, so the table says the counts */
  if (rep->n_rows && lo != hi && hi - lo < 64) {
    int n =
        snprintf(buf, cap, "times are totals over each rank's own counted steps, which differ (");
    if (n > 0 && (size_t)n < cap) {
      char list[256] = "";
      steps_by_rank(rep, lo, hi, list, sizeof list);
      snprintf(buf + n, cap - (size_t)n, "%s): compare such ranks per step", list);
    }
    return buf;
  }
  if (rep->n_steps == 1)
    snprintf(buf, cap, "times are one step's");
  else if (rep->n_steps > 1)
    snprintf(buf, cap, "times are totals over the capture's %zu steps", rep->n_steps);
  else
    snprintf(buf, cap, "times are totals over the capture");
  return buf;
}

const char *rp_rank_wait_contexts(const an_rank_group *g, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < g->n_wait_contexts && used < cap; i++) {
    const an_rank_wait_context *x = &g->wait_contexts[i];
    double us = g->n_steps ? x->lost_per_step_us : x->lost_us;
    if (x->lost_us <= 0 || us <= 0) continue;
    char ms[32];
    rp_md_number(ms, sizeof ms, us / 1000.0);
    int n = snprintf(buf + used, cap - used, "%s%s %s ms%s (%.0f%%)", used ? ", " : "",
                     x->context ? x->context : "other launches", ms, g->n_steps ? "/step" : "",
                     g->lost_us > 0 ? x->lost_us / g->lost_us * 100 : 0);
    if (n < 0) break;
    used += (size_t)n;
  }
  return buf;
}

const char *rp_diff_change_word(an_diff_reading how, an_diff_change c, bool unresolved) {
  bool direction = how == AN_DIFF_READ_DIRECTION;
  switch (c) {
    case AN_DIFF_SLOWER:
      return direction                         ? "longer"
             : how == AN_DIFF_READ_REGRESSIONS ? "slower (regression)"
                                               : "slower";
    case AN_DIFF_FASTER:
      return direction ? "shorter" : "faster";
    case AN_DIFF_NEW:
      return "new";
    case AN_DIFF_REMOVED:
      return "removed";
    case AN_DIFF_WAIT:
      return "wait change";
    case AN_DIFF_SAME:
      break;
  }
  return unresolved ? "not resolved" : "within noise";
}

const char *rp_diff_change_id(an_diff_reading how, an_diff_change c) {
  static const char *const ids[AN_DIFF_CHANGES] = {"same", "slower",  "faster",
                                                   "new",  "removed", "wait"};
  if (how == AN_DIFF_READ_DIRECTION && (c == AN_DIFF_SLOWER || c == AN_DIFF_FASTER))
    return c == AN_DIFF_SLOWER ? "longer" : "shorter";
  return ids[c];
}

const char *rp_diff_overlap_word(const an_diff_row *r, const char *plain, char *buf, size_t cap) {
  if (r->still_runs)
    return r->change == AN_DIFF_NEW ? "now an overlap row (ran before too)"
                                    : "no longer an overlap row (still runs)";
  if (!r->renamed_group) return plain;
  snprintf(buf, cap, "%s under a new kernel name (Kernels renamed #%zu)",
           r->change == AN_DIFF_NEW ? "an overlap row" : "no longer an overlap row",
           r->renamed_group);
  return buf;
}

const char *rp_diff_basis_part(const an_diff_row *r, char *buf, size_t cap) {
  bool moved = r->change == AN_DIFF_SLOWER || r->change == AN_DIFF_FASTER;
  buf[0] = '\0';
  if (!moved || r->basis == AN_DIFF_BY_TOTAL) return buf;
  if (r->basis == AN_DIFF_BY_KERNELS)
    snprintf(buf, cap,
             r->part_pct > 100 ? "its kernels beyond the floor carry all of it"
                               : "its kernels beyond the floor carry %.0f %% of it",
             r->part_pct);
  else if (r->part_pct != 0)
    snprintf(buf, cap, "%s %+.1f %%",
             r->basis == AN_DIFF_BY_WORK ? "less the collective wait" : "transfer", r->part_pct);
  else /* no transfer before: all its time waited */
    snprintf(buf, cap, "%s from none",
             r->basis == AN_DIFF_BY_WORK ? "less the collective wait" : "transfer");
  return buf;
}

const char *rp_diff_basis_word(const an_diff_row *r, const char *word, char *buf, size_t cap) {
  char part[RP_DIFF_BASIS_BYTES];
  if (!*rp_diff_basis_part(r, part, sizeof part)) return word;
  snprintf(buf, cap, "%s: %s", word, part);
  return buf;
}

double rp_stage_share_base_us(const an_stage_report *st) {
  return st->has_kernels ? st->kernel_total_us : st->gpu_busy_us;
}

double rp_stage_share_pct(const an_stage_report *st, double us) {
  double t = rp_stage_share_base_us(st);
  return t > 0 ? us / t * 100.0 : 0;
}
