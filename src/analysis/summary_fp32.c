/*
 * analysis/summary_fp32.c - the FP32 matmul item of "What to try first" (summary_internal.h,
 * docs/roofline.md "FP32 matmuls").
 *
 * Review 20 defect 3 (review 18 defect 11): a GEMM whose kernel runs FP32 on the CUDA cores
 * (matcher fp32_simt_matmul: cuBLAS's ampere_sgemm_*, CUTLASS's simt_sgemm, ...) on a device
 * with a tensor-core format is a precision lever, not a tuning one: allowing TF32 runs it on
 * the tensor cores. At its present efficiency its time scales by the FP32 peak over the
 * TF32 peak, and no further than its floors: its bytes at the HBM peak (where its roofline
 * has them) and its launches' matrix latency floor. That is what TF32 wins; the row gets no
 * tuning item (summary_roofline.c candidate).
 *
 * Review 20 defect 6: a stage whose matmul time (summary.fp32_categories) is mostly
 * (summary.fp32_min_matmul_pct) in such kernels and in TF32 tensor-core ones (matcher
 * tf32_matmul) trains or serves in FP32: autocast to the 16-bit format (bf16, else fp16)
 * runs each at that peak over its own, down to half its byte floor (16-bit operands).
 *
 * One item per stage, led by TF32 on the SIMT GEMMs (a flag, FP32 storage) unless autocast
 * wins much more (summary.fp32_tf32_lead_pct: the TF32 matmuls hold most of the time); the
 * item states the other lever's bound beside its own. Where cuBLAS already runs TF32 GEMMs
 * in the stage (matcher tf32_gemm) the flag is on, and TF32 is no lever (blind review 23
 * defect 1: hta_async's ampere_sgemm kernels beside 312 launches of an s1688 TF32 GEMM).
 */
#include <stdint.h>
#include <string.h>

#include "analysis/summary_internal.h"

/* The device's 16-bit tensor-core peak autocast runs at (bf16, else fp16); *dtype its id. */
static double amp_peak(const sm_ctx *c, const char **dtype) {
  double bf16 = sm_device_peak(c, TE_PEAK_BF16);
  *dtype = bf16 > 0 ? te_peak_name(TE_PEAK_BF16) : te_peak_name(TE_PEAK_FP16);
  return bf16 > 0 ? bf16 : sm_device_peak(c, TE_PEAK_FP16);
}

bool sm_fp32_simt(const sm_ctx *c, const an_kernel_row *r) {
  if (!sm_hits(c->fp32_simt, r->name)) return false;
  const char *dt;
  double fp32 = sm_device_peak(c, TE_PEAK_FP32);
  return fp32 > 0 && (sm_device_peak(c, TE_PEAK_TF32) > fp32 || amp_peak(c, &dt) > fp32);
}

/* The share of row r's time no faster peak removes: its bytes at the HBM peak (times
 * bytes_scale: 16-bit operands move half) where its roofline has them, and its launches'
 * matrix latency floor; at most all of it. */
static double floor_share(const sm_ctx *c, const an_kernel_row *r, double bytes_scale) {
  const an_roofline *f = an_row_roofline(c->g.st, r);
  double mem = f && f->time_us > 0 && f->bytes > 0 ? f->mem_term_us / f->time_us * bytes_scale : 0;
  double floor_us = c->rep->roofline_device.matrix_floor_us * (double)r->launches;
  double lat = r->total_us > 0 ? floor_us / r->total_us : 0;
  double s = mem > lat ? mem : lat;
  return s < 1 ? s : 1;
}

/* What a row of x us per step wins at a peak ratio times faster (ratio = its peak over the
 * new one), its time kept down to floor share at least. */
static double faster(double x, double ratio, double floor) {
  double keep = ratio > floor ? ratio : floor;
  return ratio > 0 && keep < 1 ? x * (1.0 - keep) : 0;
}

/* Adds row r (x us per step) to the lever's sums; false: no FP32 matmul row. */
static bool add_row(const sm_ctx *c, const an_kernel_row *r, double x, an_fp32_lever *l) {
  bool simt = sm_fp32_simt(c, r);
  if (!simt && !sm_hits(c->tf32_matmul, r->name)) return false;
  const an_roofline *f = an_row_roofline(c->g.st, r);
  l->no_bytes += !(f && f->bytes > 0);
  double amp_floor = floor_share(c, r, 0.5); /* 16-bit operands: half the bytes */
  if (simt) {
    l->simt_us += x;
    l->simt_n++;
    if (l->tf32_peak > l->fp32_peak)
      l->tf32_win_us += faster(x, l->fp32_peak / l->tf32_peak, floor_share(c, r, 1.0));
    if (l->amp_peak > l->fp32_peak)
      l->amp_win_us += faster(x, l->fp32_peak / l->amp_peak, amp_floor);
  } else {
    l->tf32_us += x;
    l->tf32_n++;
    l->tf32_on = l->tf32_on || sm_hits(c->tf32_gemm, r->name);
    if (l->tf32_peak > 0 && l->amp_peak > l->tf32_peak)
      l->amp_win_us += faster(x, l->tf32_peak / l->amp_peak, amp_floor);
  }
  return true;
}

/* The item's kernels: the rows its bound counts (the SIMT GEMMs under TF32, all under
 * autocast), the other members linked as evidence. */
static void add_members(sm_ctx *c, an_summary_item *it, bool tf32, size_t top) {
  const an_stage_report *st = c->g.st;
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    bool simt = sm_fp32_simt(c, r);
    if (!r->shown || sm_row_per_step(c, r) <= 0 || (!simt && !sm_hits(c->tf32_matmul, r->name)))
      continue;
    if (simt || !tf32) sm_item_kernel(c, r->name);
    if (i != top) sm_item_more(it, "kernel", st->id, i);
  }
}

void sm_fp32_item(sm_ctx *c) {
  const an_stage_report *st = c->g.st;
  an_fp32_lever l = {.fp32_peak = sm_device_peak(c, TE_PEAK_FP32),
                     .tf32_peak = sm_device_peak(c, TE_PEAK_TF32)};
  l.amp_peak = amp_peak(c, &l.amp_dtype);
  if (l.fp32_peak <= 0 || c->g.step_us <= 0 || !c->fp32_simt || !c->tf32_matmul) return;
  double matmul = 0;
  size_t top = SIZE_MAX, top_simt = SIZE_MAX; /* rows are time-descending */
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    double x = sm_row_per_step(c, r);
    if (x <= 0 || sm_is_collective(c, r->name)) continue;
    if (te_string_list_has(&c->s->summary_fp32_categories, r->category)) matmul += x;
    size_t simt_n = l.simt_n;
    if (!add_row(c, r, x, &l) || !r->shown) continue; /* the anchors are shown rows */
    if (top == SIZE_MAX) top = i;
    if (top_simt == SIZE_MAX && l.simt_n > simt_n) top_simt = i;
  }
  l.matmul_pct = matmul > 0 ? (l.simt_us + l.tf32_us) / matmul * 100.0 : 0;
  if (l.tf32_on) l.tf32_win_us = 0; /* already allowed: the SIMT GEMMs are cuBLAS's pick */
  if (l.matmul_pct < c->s->summary_fp32_min_matmul_pct) l.amp_win_us = 0;
  /* TF32, the smaller change, leads unless autocast wins much more; the other's bound
   * stands beside it */
  bool tf32 = l.simt_n && l.tf32_win_us > 0 &&
              l.tf32_win_us * 100.0 >= l.amp_win_us * c->s->summary_fp32_tf32_lead_pct;
  double bound = tf32 ? l.tf32_win_us : l.amp_win_us;
  size_t row = tf32 ? top_simt : top;
  if (bound <= 0 || row == SIZE_MAX) return;
  const te_string_list *amp = te_list_map_get(&c->s->summary_fp32_levers, l.amp_dtype);
  const te_string_list *t32 = te_list_map_get(&c->s->summary_fp32_levers, "tf32");
  l.amp_lever = amp && amp->n ? amp->items[0] : NULL;
  l.tf32_lever = t32 && t32->n ? t32->items[0] : NULL;
  l.tf32_leads = tf32;
  const an_kernel_row *tr = &st->kernels[row];
  const char *loc = tr->n_shown_sites ? tr->shown_sites[0]->location : NULL;
  an_summary_item *it = sm_add(c, AN_SUMMARY_KERNEL, AN_ACTION_FP32_MATMUL, row, loc, bound,
                               AN_BASIS_FP32, tf32 ? l.simt_us : l.simt_us + l.tf32_us);
  if (!it) return;
  it->fp32 = l;
  it->lever = tf32 ? l.tf32_lever : l.amp_lever;
  it->count = tf32 ? l.simt_n : l.simt_n + l.tf32_n;
  add_members(c, it, tf32, row);
}
