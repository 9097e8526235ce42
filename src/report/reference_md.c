/*
 * report/reference_md.c - the reference Markdown layout (docs/reference.md §8, byte for
 * byte): a header, then the kernel, overlap and fuse tables (layout_md.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/layout_md.h"
#include "report/md.h"
#include "report/overlap_report.h"
#include "report/text.h"

static const char XPU_NOTE[] =
    "> Note (Intel XPU): this trace has no device-execution timeline; rows are "
    "`urEnqueueKernelLaunch` runtime events, so the **GPU time** column is host "
    "launch-dispatch time, not device-execution time. High launch counts here indicate "
    "eager-mode launch overhead (no graph capture / torch.compile).";

static const char KT_HEAD[] =
    "| Kernel | Category | GPU time | Share | Launches | Python location (site share) | CPU op |\n"
    "| --- | --- | ---: | ---: | ---: | --- | --- |\n";
static const char FUSE_HEAD[] =
    "| Pattern | Confidence | Related GPU time | Share | Evidence kernels | Current kernel Python "
    "location | Candidate fused Python path | Rationale |\n"
    "| --- | --- | ---: | ---: | --- | --- | --- | --- |\n";

/* One table row; cells NULL (an allocation failed) make it fail. */
static int row_cells(FILE *f, char *const *cells, size_t n) {
  if (fputc('|', f) == EOF) return -1;
  for (size_t i = 0; i < n; i++) {
    if (!cells[i] || fputc(' ', f) == EOF || rp_md_cell_text(f, cells[i]) != 0 ||
        fputs(" |", f) == EOF)
      return -1;
  }
  return fputc('\n', f) == EOF ? -1 : 0;
}

static char *fmt_ms(double us) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.2f ms", us / 1000.0);
  return strdup(buf);
}

static char *fmt_pct(double pct) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.1f%%", pct);
  return strdup(buf);
}

static char *fmt_count(size_t n) {
  char buf[32];
  snprintf(buf, sizeof buf, "%zu", n);
  return strdup(buf);
}

static void free_cells(char **cells, size_t n) {
  for (size_t i = 0; i < n; i++) free(cells[i]);
}

/* A table section lists only stages with shown rows; it is "bare" (no "#####" stage
 * headings) when every such stage is "all". */
static size_t shown(const an_stage_report *st, bool fuse) {
  return fuse ? st->n_fuse_shown : st->n_kernels_shown;
}

static bool bare_layout(const an_report *r, bool fuse) {
  for (size_t i = 0; i < r->n_stages; i++)
    if (shown(&r->stages[i], fuse) && strcmp(r->stages[i].id, "all") != 0) return false;
  return true;
}

static int kernel_rows(FILE *f, const an_stage_report *st) {
  for (size_t i = 0; i < st->n_kernels; i++) {
    const an_kernel_row *r = &st->kernels[i];
    if (!r->shown) continue;
    char *cells[] = {strdup(r->name),         strdup(r->category),    fmt_ms(r->total_us),
                     fmt_pct(r->share_pct),   fmt_count(r->launches), rp_kernel_location_cell(r),
                     rp_kernel_cpu_op_cell(r)};
    int rc = row_cells(f, cells, 7);
    free_cells(cells, 7);
    if (rc != 0) return -1;
  }
  if (st->xpu_launch_rows && fprintf(f, "\n%s\n", XPU_NOTE) < 0) return -1;
  return 0;
}

static int fuse_rows(FILE *f, const an_stage_report *st) {
  for (size_t i = 0; i < st->n_fuse; i++) {
    const an_fuse_row *r = &st->fuse[i];
    if (!r->shown) continue;
    char *cells[] = {strdup(r->pattern_name),
                     strdup(rp_fuse_confidence(r->confidence)),
                     fmt_ms(r->related_us),
                     fmt_pct(r->share_pct),
                     rp_fuse_evidence_cell(r),
                     rp_fuse_locations_cell(r),
                     rp_fuse_candidates_cell(r, false),
                     rp_fuse_rationale(r)};
    int rc = row_cells(f, cells, 8);
    free_cells(cells, 8);
    if (rc != 0) return -1;
  }
  return 0;
}

static int placeholder(FILE *f, const an_report *r, bool fuse) {
  if (fuse)
    return fputs(
               "| No medium-confidence source-backed fusion opportunity matched this trace. "
               "| - | - | - | - | - | - | - |\n",
               f) == EOF
               ? -1
               : 0;
  return fprintf(f, "| No kernel rows at or above %.1f%% share. | - | - | - | - | - | - |\n",
                 r->run.kernel_min_share_pct) < 0
             ? -1
             : 0;
}

/* The kernel table (fuse false) or the fuse table. */
static int section(FILE *f, const an_report *r, bool fuse) {
  const char *head = fuse ? FUSE_HEAD : KT_HEAD;
  size_t total = 0;
  for (size_t i = 0; i < r->n_stages; i++) total += shown(&r->stages[i], fuse);
  if (!total) return fputs(head, f) == EOF ? -1 : placeholder(f, r, fuse);
  bool bare = bare_layout(r, fuse);
  bool first = true;
  for (size_t i = 0; i < r->n_stages; i++) {
    const an_stage_report *st = &r->stages[i];
    if (!shown(st, fuse)) continue;
    if (!bare) {
      if (!first && fputc('\n', f) == EOF) return -1;
      if (fprintf(f, "##### %s\n", st->label) < 0) return -1;
    }
    first = false;
    if (fputs(head, f) == EOF) return -1;
    if ((fuse ? fuse_rows(f, st) : kernel_rows(f, st)) != 0) return -1;
  }
  return 0;
}

static int join_line(FILE *f, const char *label, const char *const *v, size_t n) {
  if (fputs(label, f) == EOF) return -1;
  for (size_t i = 0; i < n; i++)
    if (fprintf(f, "%s%s", i ? ", " : "", v[i]) < 0) return -1;
  return fputc('\n', f) == EOF ? -1 : 0;
}

static int header(FILE *f, const an_provenance *p) {
  bool two = p->mode == AN_MODE_MAPPING_FORMAL;
  if (fputs("Triage View\n", f) == EOF) return -1;
  if (fprintf(f, "Mode: %s\n", two ? "mapping-formal" : "single-trace") < 0) return -1;
  if (two && strcmp(p->mapping_framework.label, p->framework.label) != 0) {
    if (fprintf(f, "Mapping framework: %s\nFormal framework: %s\n", p->mapping_framework.label,
                p->framework.label) < 0)
      return -1;
  } else if (fprintf(f, "Framework: %s\n", p->framework.label) < 0) {
    return -1;
  }
  if (two) {
    if (join_line(f, "Mapping traces: ", p->mapping_inputs, p->n_mapping_inputs) ||
        join_line(f, "Formal traces: ", p->formal_inputs, p->n_formal_inputs))
      return -1;
  } else if (join_line(f, "Input traces: ", p->formal_inputs, p->n_formal_inputs)) {
    return -1;
  }
  if (p->context.model.value && fprintf(f, "Model: %s\n", p->context.model.value) < 0) return -1;
  return 0;
}

int rp_reference_markdown(FILE *f, const an_report *r) {
  if (header(f, &r->run) != 0) return -1;
  if (fputs("\nKernel Table\n", f) == EOF || section(f, r, false)) return -1;
  if (fputc('\n', f) == EOF) return -1;
  if (rp_overlap_markdown(f, r) != 0) return -1;
  /* the reference layout is its three tables only (the Ranks section is the default
   * layout's, rp_layout_markdown) */
  return fputs("\nFuse Opportunity Table\n", f) == EOF || section(f, r, true) ? -1 : 0;
}
