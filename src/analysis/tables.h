/*
 * analysis/tables.h - the Kernel Table (reference section 5) and the Fuse Opportunity
 * Table (section 7.2), computed per stage from the formal traces' views, with source
 * locations taken from the mapping kernel map.
 *
 * Ownership: an_tables_build fills a caller-provided an_tables that owns its arrays and
 * strings (an_tables_free). Entry pointers (an_kt_row.entry) are borrowed from the
 * kernel maps passed in, which must outlive the tables; stage/category/pattern strings
 * are borrowed from the te_rules.
 */
#ifndef TRIAGE_ANALYSIS_TABLES_H
#define TRIAGE_ANALYSIS_TABLES_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/bundle.h"
#include "analysis/kernel_map.h"
#include "analysis/strtab.h"
#include "triage/rules.h"

typedef struct an_kt_row {
  const char *name;          /* canonical kernel name */
  const char *category;      /* kernel classifier (a label the packs declare) */
  const char *kind;          /* its finer kind (== category unless the rule gives a kind) */
  double total_us;
  size_t launches;
  double max_us;
  double share_pct;          /* of the stage's kernel-time sum */
  const char *location_cell; /* rendered: sites joined by "<br>", or "unresolved" */
  const char *cpu_op_cell;   /* rendered, or "-" */
  const an_kmap_entry *entry;/* mapping (or formal payload) entry, NULL when none */
  bool shown;                /* passes --kernel-table-limit and the share bar */
} an_kt_row;

typedef struct an_fuse_row {
  const te_fusion_pattern *pattern;
  const char *confidence;    /* "Confirmed" | "Candidate" */
  const char *status;        /* "mainline direct", "upstream split", ... */
  double related_us;
  double share_pct;
  bool active_match;
  size_t n_related;
  const char **related;      /* kernel names of the related rows, related order */
  const char *evidence;      /* rendered cell */
  const char *locations;     /* rendered cell */
  const char *candidate_path;/* rendered cell */
  const char *rationale;
  bool shown;                /* share >= fuse.render_min_share_pct */
} an_fuse_row;

typedef struct an_stage_tables {
  const te_stage *stage;
  double total_us;           /* kernel-time sum (share denominator) */
  size_t n_rows;
  an_kt_row *rows;           /* every row, total_us descending */
  size_t n_shown;            /* rows with shown == true */
  size_t n_fuse;
  an_fuse_row *fuse;         /* accepted matches, in accepted order */
  size_t n_fuse_shown;
  bool xpu;                  /* a shown kernel name is an XPU runtime launch */
} an_stage_tables;

typedef struct an_tables {
  size_t n_stages;
  an_stage_tables *stages;   /* te_stage order; only stages with kernels */
  an_strtab *strings;        /* owns every rendered string */
} an_tables;

typedef struct an_tables_options {
  double min_share_pct;      /* <0 = kernel_table.min_share_pct */
  long kernel_table_limit;   /* 0 = all */
  const char *framework_id;  /* resolved framework of the formal traces */
  const char *model_path;    /* server args model path, NULL when unknown */
  long tp_size;              /* server args tp_size, 1 when unknown */
} an_tables_options;

/* formal_views: the formal traces (the inputs in single-trace mode). mapping: the
 * mapping kernel map (stage-aware lookup); formal_payload: the formal traces' own map
 * (may equal mapping, may be NULL). AN_ERR_RULES when the packs define no `kernel`
 * classifier (every category comes from the packs; there is no built-in label). */
an_status an_tables_build(const an_trace_view *formal_views, size_t n_views,
                          const an_kernel_map *mapping, const an_kernel_map *formal_payload,
                          const te_rules *rules, const an_tables_options *opt,
                          an_tables *out);
void an_tables_free(an_tables *t);

/* "path:line func" -> "func @ path:line"; other text unchanged. Returns the interned
 * result. Exposed for tests. */
const char *an_location_func_at(an_strtab *st, const char *loc);

#endif
