/*
 * analysis/roofline.h - the roofline of every kernel row (docs/roofline.md): each
 * launch's FLOPs and bytes from the shapes of the CPU op that launched it (op_cost.h),
 * or, for a graph-replayed launch with no op, from the mapping trace's launches of the
 * same kernel; the device's bound for them (device pack); per row the achieved rates,
 * the limiter and the attainable rate with its basis.
 *
 * Ownership: an_roofline_build fills a caller-provided result that owns its arrays
 * (an_roofline_free). Strings (dtype, family, device label and source) are borrowed from
 * the rules, kernel names from the kernel maps and the device name from an_strtab
 * `strings`: all must outlive the result. It sets the tables' rows' roofline index.
 */
#ifndef TRIAGE_ANALYSIS_ROOFLINE_H
#define TRIAGE_ANALYSIS_ROOFLINE_H

#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/roofline_model.h"
#include "analysis/steps.h"
#include "analysis/strtab.h"
#include "analysis/tables.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

/* The records and counts of one table stage (parallel to an_tables.stages). */
typedef struct an_roofline_stage {
  size_t n;
  an_roofline *records; /* in row order; rows point here with their roofline index */
  an_roofline_counts counts;
} an_roofline_stage;

typedef struct an_roofline_result {
  an_roofline_device device;
  an_roofline_model model; /* model-based decode GEMM shapes (an_report.roofline_model) */
  size_t n_stages;
  an_roofline_stage *stages;
} an_roofline_result;

/* One side's traces: their views and the kernel map built from exactly those views; for
 * the formal side also the texts a known model may be named by (server args' model path,
 * the input paths, the model file of the Python frames), in that order. */
typedef struct an_roofline_side {
  const an_trace_view *views;
  size_t n;
  const an_kernel_map *kmap;
  const char *const *model_texts;
  size_t n_model_texts;
  const an_steps *steps; /* parallel to views: their step windows (NULL: no steps) */
  /* parallel to views: their model scans made beforehand (an_model_scan_build), which the
   * build takes over and frees; NULL: it scans each view itself */
  an_model_scan *scans;
} an_roofline_side;

/* formal: the tables' traces; mapping: the mapping traces (n 0 in single-trace mode: no
 * shapes from elsewhere). AN_ERR_NOMEM when out of memory. */
an_status an_roofline_build(const an_roofline_side *formal, const an_roofline_side *mapping,
                            const te_rules *rules, an_strtab *strings, an_tables *tables,
                            an_roofline_result *out);
void an_roofline_free(an_roofline_result *r);

#endif
