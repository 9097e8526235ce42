/*
 * analysis/model.h - the report model: everything a renderer needs to write a triage
 * report, as data. an_run (analysis/pipeline.h) builds it; src/report/ alone turns it
 * into Markdown or JSON (and later HTML).
 *
 * The model holds values and enums, never rendered cells or sentences: a kernel row has
 * its sites, not a "location" cell; a fuse row has its origin, match kind and share, not
 * a rationale sentence; an overlap row has a priority enum, not "P1". Judgements (which
 * sites a row shows, which rows clear a bar) are made by the analysis and stored as
 * flags, so every renderer shows the same thing.
 *
 * Extending it: a new section is a new member of an_report (or an_stage_report) with
 * its own types here; the renderers that know it read it, the others ignore it. The
 * per-rank and diff sections below are declared for that purpose and stay NULL / 0
 * until their analysis exists.
 *
 * Ownership: an an_report and everything reachable from it is owned by the report
 * (an_report_destroy), except strings taken from the te_rules the report was built with
 * (categories, stage labels, framework names, pattern texts, pack ids and files), which
 * are valid until te_rules_destroy: destroy the report first.
 */
#ifndef TRIAGE_ANALYSIS_MODEL_H
#define TRIAGE_ANALYSIS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/limits.h"

/* Status of the analysis functions. */
typedef enum an_status {
  AN_OK = 0,
  AN_ERR_NOMEM = 1,
  AN_ERR_RULES = 2, /* the rules lack something required (e.g. no "all" stage) */
  AN_ERR_ARGS = 3,
  AN_ERR_INPUT = 4 /* an input cannot be read, or holds nothing to analyse */
} an_status;

/* ------------------------------------------------------------------ provenance */

/* Where a fact about the run came from. */
typedef enum an_source {
  AN_SOURCE_UNKNOWN = 0,        /* nothing said it */
  AN_SOURCE_DEFAULT = 1,        /* the rule packs' default (or tp 1) */
  AN_SOURCE_COMMAND_LINE = 2,   /* a flag (--framework) */
  AN_SOURCE_LIVE_CAPTURE = 3,   /* what live capture detected or used */
  AN_SOURCE_SERVER_ARGS = 4,    /* server_args.json */
  AN_SOURCE_TRACE_METADATA = 5, /* the trace's metadata (distributedInfo, deviceProperties,
                                   runtime versions) or a marker event that names it */
  AN_SOURCE_DETECTION_RULE = 6, /* a detection rule matched the input's path */
  AN_SOURCE_PYTHON_FRAMES = 7,  /* a model file in the launch sites' Python frames */
  AN_SOURCE_KERNEL_FAMILY = 8,  /* kernel names of a family only that model runs */
  AN_SOURCE_TRACE_CONTENT = 9,  /* what the trace's events hold: names in its first events,
                                   the model's dimensions in CPU-op shapes and per-layer
                                   launches (not a metadata field) */
  AN_SOURCE_RANK_HOSTS = 10,    /* the host_name of every rank of the TP group (its process
                                   group in distributedInfo.pg_config), one file per rank */
  AN_SOURCE_DEVICE_PACK = 11    /* the device pack placed a device the trace names blank
                                   by its architecture, unit count and memory */
} an_source;

typedef struct an_framework_fact {
  const char *id, *label; /* from the rules */
  an_source source;
  /* the name in the trace that decided it (a CPU-op, annotation or kernel name that voted
   * for it, deviation D11; the run's copy), NULL when another source decided */
  const char *evidence;
} an_framework_fact;

typedef struct an_text_fact {
  const char *value; /* NULL when unknown */
  an_source source;
} an_text_fact;

typedef struct an_count_fact {
  long value;
  an_source source;
} an_count_fact;

/* Platform the run's kernels ran on. */
typedef enum an_platform {
  AN_PLATFORM_UNKNOWN = 0,
  AN_PLATFORM_CUDA = 1,
  AN_PLATFORM_ROCM = 2
} an_platform;

/* The platform's id as rule packs and the JSON report spell it ("cuda", "rocm"; a fusion
 * pattern's platform gate, summary.lever_paths), NULL when unknown. */
static inline const char *an_platform_id(an_platform p) {
  return p == AN_PLATFORM_CUDA ? "cuda" : p == AN_PLATFORM_ROCM ? "rocm" : NULL;
}

typedef struct an_platform_fact {
  an_platform value;
  an_source source;
} an_platform_fact;

/* Whether the ranks of the TP group share one node (issue 31: fusions built on a custom,
 * one-shot all-reduce need one node). */
typedef enum an_topology {
  AN_TOPOLOGY_UNKNOWN = 0,
  AN_TOPOLOGY_SINGLE_NODE = 1, /* TP 1, an intra-node-only collective ran, or one host name */
  AN_TOPOLOGY_MULTI_NODE = 2   /* the group's ranks name several hosts */
} an_topology;

typedef struct an_topology_fact {
  an_topology value;
  an_source source;
} an_topology_fact;

/* What the run was: the facts fusion gates read (model family, TP size, GPU, platform),
 * each with where it came from. Server args win; else the trace's own metadata
 * (distributedInfo.world_size, deviceProperties name, runtime versions); else a
 * model file in the Python frames, then the kernel families only one model family runs
 * (fuse.model_kernel_families); else the default (TP 1) or unknown. */
typedef struct an_run_context {
  an_text_fact model;    /* model path or family; NULL when unknown */
  an_count_fact tp_size; /* >= 1 */
  an_text_fact gpu;      /* device name ("NVIDIA H100 80GB HBM3") */
  /* A device with a blank name (ROCm often writes none) that the device pack placed by
   * its architecture, CU count and memory: gpu.value stays NULL, gpu.source says where
   * the facts came from, and the report names the part from this record. label NULL:
   * none placed. */
  struct an_gpu_placed {
    const char *label; /* the device pack entry's label (from the rules) */
    long arch, units;  /* as matched: arch -1 unknown; SMs, or CUs on ROCm */
  } gpu_placed;
  an_platform_fact platform;
  an_count_fact arch;        /* compute capability x 10 (90 = 9.0; ROCm gfx942 = 94); 0 unknown */
  an_topology_fact topology; /* whether the TP group spans nodes (fusion gates) */
} an_run_context;

typedef enum an_mode {
  AN_MODE_SINGLE = 0,        /* one trace (set) is its own mapping */
  AN_MODE_MAPPING_FORMAL = 1 /* a readable mapping trace plus a formal serving trace */
} an_mode;

typedef struct an_pack_ref {
  const char *id, *file;
} an_pack_ref;

/* What a trace's run was, from its own evidence (analysis/workload.c): a serving step, a
 * training step, a micro-benchmark's repeated call, or unknown. The summary gives no
 * serving advice to a training trace or a benchmark. */
typedef enum an_workload {
  AN_WORKLOAD_UNKNOWN = 0,
  AN_WORKLOAD_SERVING = 1,        /* serving step markers, a serving framework's frames or args */
  AN_WORKLOAD_TRAINING = 2,       /* backward kernels, autograd ops, optimizer steps */
  AN_WORKLOAD_MICROBENCHMARK = 3, /* one repeated top-level call, no framework */
  AN_WORKLOAD_INFERENCE = 4 /* model generation outside a server (an offline generate script) */
} an_workload;

typedef struct an_workload_fact {
  an_workload value;
  const char *evidence; /* the name that decided (an annotation, op or frame); NULL */
  an_source source;     /* AN_SOURCE_TRACE_METADATA (annotations, ops, kernels), PYTHON_FRAMES,
                           SERVER_ARGS, or UNKNOWN */
} an_workload_fact;

/* Whether the run executed torch.compile'd code (analysis/workload.h): an event of
 * torch.compile's own (matcher compiled_region: a compiled frame's region, AOTAutograd's
 * CompiledFunction, Inductor's graph call) or a kernel only Inductor emits (matcher
 * compiled_kernel). The report says so and advises no torch.compile to such a run. */
typedef struct an_compiled_fact {
  bool compiled;
  const char *evidence; /* the name that decided (interned); NULL when not compiled */
  bool by_kernel;       /* the evidence is a kernel's name (no torch.compile event seen) */
} an_compiled_fact;

/* The step's shape as its attention ops' shapes tell it (analysis/workload.h): a prefill
 * of batch x tokens (query and keys alike), a decode (one query token a sequence against
 * kv_tokens), or a prefill on top of cached tokens (fewer queries than keys). */
typedef enum an_phase {
  AN_PHASE_UNKNOWN = 0, /* no attention op with shapes in the counted steps */
  AN_PHASE_PREFILL = 1,
  AN_PHASE_DECODE = 2,
  AN_PHASE_EXTEND = 3 /* prefill of `tokens` after kv_tokens - tokens cached ones */
} an_phase;

typedef struct an_step_shape {
  an_phase phase;
  long batch, tokens, kv_tokens; /* sequences, query tokens and key tokens of one sequence */
  const char *op;                /* the attention op whose Input Dims tell it (interned) */
  size_t ops;                    /* its calls in the counted steps (the shape the most share) */
  size_t shapes;                 /* distinct (batch, tokens, kv_tokens) among them; 1: all agree */
  bool in_steps;                 /* the ops read were the counted steps' (else the whole trace's) */
} an_step_shape;

typedef struct an_provenance {
  an_mode mode;
  an_framework_fact framework;         /* the formal (single-trace: the) traces' */
  an_framework_fact mapping_framework; /* mapping traces'; single-trace: = framework */
  an_run_context context;              /* model, TP size, GPU, platform + provenance */
  size_t n_mapping_inputs;             /* single-trace: the inputs themselves */
  const char *const *mapping_inputs;
  size_t n_formal_inputs;
  const char *const *formal_inputs;
  size_t n_rank_inputs; /* a directory of ranks: every rank trace the Ranks section read (stage,
                           then rank order); the tables read formal_inputs. 0 otherwise */
  const char *const *rank_inputs;
  size_t n_packs; /* rule packs loaded, in load order */
  const an_pack_ref *packs;
  const char *version;          /* filled by the caller (the CLI), else NULL */
  const char *command_line;     /* filled by the caller (the CLI), else NULL */
  double kernel_min_share_pct;  /* kernel table bar: --min-share, else the setting */
  double overlap_min_share_pct; /* overlap table bar (overlap.min_share_pct) */
  bool overlap_off;             /* no overlap analysis ran: a single-trace run with
                                   overlap.single_trace false (the reference's
                                   placeholder row); stages then have no block */
  bool overlap_plain_lines;     /* the reference layout's lines beside its overlap tables
                                   (overlap.plain_lines) */
  an_workload_fact workload;    /* serving, training, micro-benchmark (time account) */
  an_step_shape step_shape;     /* phase, batch x tokens from the attention ops' shapes */
  an_compiled_fact compiled;    /* the run executed torch.compile'd code */
} an_provenance;

/* ------------------------------------------------------------------ kernels */

/* What a site's location is (issue 31). A kernel captured in a CUDA or HIP graph has
 * no frame of the layer that launched it: its location is where the graph was replayed
 * (a model runner, a compiled piece's caller), and the report says so ("inside a
 * graph replay of X") instead of pointing at that frame as the kernel's line. */
typedef enum an_location_kind {
  AN_LOCATION_LAUNCH = 0,       /* the launching line, or the nearest model-level frame */
  AN_LOCATION_GRAPH_REPLAY = 1, /* where a graph holding the kernel was replayed
                                   (kernel_table.graph_replay_locations) */
  AN_LOCATION_PLUMBING = 2      /* only framework plumbing (matcher low_signal) is on the
                                   launch's stack: no model-level frame to point at
                                   (kernel_table.plumbing_locations) */
} an_location_kind;

/* One launch site of one kernel: every launch resolved to the same location. One per
 * kernel name and site, so kept small (64 bytes: with 262,144 distinct names the map's
 * sites were 27 MB at 104 bytes): counts are 32-bit (a trace holds at most TR_MAX_EVENTS
 * events), and nothing reads the display location split into path, line and function. */
typedef struct an_site {
  const char *location;         /* normalised "path:line func", or "unresolved" */
  const char *display_location; /* what the tables show (docs/reference.md §4.2 display rule) */
  const char *top_cpu_op;       /* most common CPU op / launch name, NULL if none */
  const char *stack;            /* most common " -> "-joined stack, NULL if none */
  double total_us;
  double share_pct_within_kernel;
  uint32_t launches;
  /* Of its launches, those outside every counted step of the formal trace (a warm-up,
   * work between steps; analysis/steps.h), and of those the ones before the first counted
   * step; 0 when the map had no steps (brief 9 defect 6: hf's warm-up launches, with no
   * Python frame, read as an "unresolved" site of 31-34%). */
  uint32_t outside_launches, warmup_launches;
  an_location_kind kind; /* a graph replay's when top_cpu_op replays one and the
                            location is resolved (no "graph replay of unresolved") */
} an_site;

/* The location attribution gives a launch with no Python frame. */
#define AN_LOCATION_UNRESOLVED "unresolved"

/* Whether loc names a Python frame (not NULL, not AN_LOCATION_UNRESOLVED). */
static inline bool an_location_resolved(const char *loc) {
  return loc && strcmp(loc, AN_LOCATION_UNRESOLVED) != 0;
}

/* One kernel of the kernel map (docs/reference.md §4.3); 48 bytes, one per name. */
typedef struct an_kmap_entry {
  const char *name;          /* canonical kernel name */
  const char *category;      /* kernel classifier category */
  const an_site *sites;      /* ordered (location priority of display location,
                                total_us, launches) descending */
  const char *best_location; /* display location of the first site, or best raw */
  double total_us;           /* sum over sites */
  uint32_t n_sites;
  uint32_t launches; /* sum over sites (sampled counts when sampled) */
} an_kmap_entry;

/* One payload of the kernel map: a stage's entries, or all stages' (stage NULL). */
typedef struct an_kmap_payload {
  const char *stage;
  size_t n;
  const an_kmap_entry *entries; /* first-seen order */
} an_kmap_payload;

typedef struct an_kmap_view {
  size_t n_stages;
  const an_kmap_payload *stages; /* first-seen order */
  an_kmap_payload global;
} an_kmap_view;

/* ------------------------------------------------------------------ roofline */

/* Which resource bounds a row's launches (docs/roofline.md). */
typedef enum an_limiter { AN_LIMIT_MEMORY = 0, AN_LIMIT_COMPUTE = 1 } an_limiter;

/* Where a row's shapes came from. */
typedef enum an_shape_source {
  AN_SHAPES_OP = 0,       /* the launching CPU op's Input Dims / Input type */
  AN_SHAPES_MAPPING = 1,  /* the mapping trace's launches of the same kernel (graph replay) */
  AN_SHAPES_MODEL = 2,    /* a known model's dimensions, checked against the trace (graph
                             replay without a mapping trace: decode GEMMs) */
  AN_SHAPES_STEP_SUMS = 3 /* attention: the step annotation's token sums with the model's
                             heads (roofline_attn.h; review 15 defect 1: say the source) */
} an_shape_source;

/* What the attainable rate is. */
typedef enum an_attainable_basis {
  AN_ATTAINABLE_TRACE = 0,  /* the best comparable row of the run (same op family, format
                               and limiter) */
  AN_ATTAINABLE_DEVICE = 1, /* the device pack's attainable fraction of the peak */
  AN_ATTAINABLE_FAMILY = 2  /* the family's best observed rate: a faster comparable row of
                               the run whose rate is below the device pack's fraction (what
                               the part is shown to reach for that work; review 13) */
} an_attainable_basis;

/* One shape of a row's launches: the CPU op and its Input Dims (launches from the
 * mapping trace have no shape of their own and are not listed). */
typedef struct an_roofline_shape {
  const char *op, *dims; /* "aten::mm", "[[8944, 1024], [1024, 2816]]" */
  size_t launches;
  double flops, bytes; /* per launch */
  double time_us;      /* summed over the launches */
} an_roofline_shape;

/* The roofline of one kernel row: what its launches with shapes move and compute, the
 * time the device's bound allows them, and how far the achieved rate is from the
 * attainable one. Times in microseconds, rates in TB/s (1e12 bytes/s) and TFLOP/s. */
typedef struct an_roofline {
  double flops, bytes;         /* totals over the launches with shapes */
  size_t launches_with_shapes; /* of the row's launches */
  an_shape_source source;      /* mapping: at least one launch took its shapes there */
  double time_us;              /* GPU time of the launches with shapes */
  double steps_time_us;        /* of it, the launches inside the counted steps (the kernel
                                  row's steps_us is on the same basis) */
  double bound_us;             /* sum over them of max(bytes / BW, flops / peak[format]) */
  double achieved_pct;         /* bound_us / time_us * 100 (can pass 100: clock boost, L2) */
  an_limiter limiter;          /* the larger term of the row's totals */
  const char *dtype;           /* the peak class its FLOPs run at ("bf16"); from the rules */
  const char *family;          /* the op cost model kind ("gemm", "attention", ...) */
  double achieved_tbs, achieved_tflops; /* bytes / time_us, flops / time_us */
  double launch_tbs, launch_tflops;     /* its fastest launch that is evidence of a rate on
                                           its own (roofline.comparable_launch_us; TFLOP/s
                                           in its format), 0 when none */
  double attainable;                    /* TB/s (memory) or TFLOP/s (compute): the rate the limiter
                                           could reach */
  an_attainable_basis attainable_basis;
  const char *attainable_kernel; /* canonical name of the basis row (trace basis), else NULL */
  double peak;                   /* the device's peak in the same unit (HBM bandwidth, or the
                                    dense peak of the format): attainable / peak is the
                                    fraction the bound assumes */
  const char *sibling_kernel;    /* the fastest other comparable row (same family and limiter
                                    (canonical name) when faster than this one, else NULL */
  const char *sibling_stage;     /* its stage's label (from the rules) */
  size_t sibling_row;            /* its index in that stage's kernel rows */
  double sibling_rate;           /* its rate, in the unit of attainable */
  bool sibling_launch;           /* that rate is one launch's (roofline.comparable_launch_us),
                                    faster than its row's average */
  const char *sibling_family;    /* its op family: this row's, or a compute peer's
                                    (roofline.compute_peers) */
  double device_rate;            /* the device pack's attainable rate, in the unit of attainable
                                    (0: no device entry) */
  double of_attainable_pct;      /* the achieved rate of the limiter / attainable * 100 */
  double headroom_device_us;     /* headroom_us at device_rate: the ceiling when the family's
                                    best observed rate is lower (family basis), else the same */
  double headroom_us;            /* time_us - the sum over launches of max(its time at the
                                    attainable rate, latency_floor_us), 0 at or below it: what
                                    tuning the kernel could win over its launches with shapes */
  double latency_floor_us;       /* the per-launch floor applied (an_roofline_device); 0 none */
  bool floor_added;              /* roofline.launch_ramp: a launch's time at a rate is its floor
                                    plus its work at the rate, and the rates of evidence are
                                    past their launches' floors */
  size_t floored_launches;       /* launches whose time at the attainable rate is below it */
  bool latency_bound;            /* the floor holds most of the row's attainable time: the
                                    row is latency-bound, not held by bytes or FLOPs */
  size_t n_shapes;               /* the row's shapes by GPU time, at most
                                    roofline.shapes_per_row (owned by the report) */
  const an_roofline_shape *shapes;
  /* The two terms summed over the launches: its bytes at the HBM peak, its FLOPs at its
   * format's dense peak (limiter: the larger); balanced: the larger within
   * roofline.balanced_ratio of the smaller, so both bound the row (review 12 defect 5). */
  double mem_term_us, comp_term_us;
  bool balanced;
  /* A fused attention row (family attention: Q, K and V read once, the scores never
   * written) whose FLOP term is within roofline.balanced_ratio of its larger byte term:
   * its bytes are the least traffic a flash kernel streams under its matrix work, so the
   * FLOPs bound it (limiter compute, not balanced; review 15 defect 2). Far below the
   * ridge (decode's paged attention) the bytes stay its limiter. */
  bool fused_flops;
  /* The launches' time at the attainable rate and, of it, their floors' part. */
  double at_time_us, floor_time_us;
  /* A compute-bound attention row's shape ceiling (roofline.attention_ceiling, review 19
   * defect 6): the fraction of its format's dense peak the best published kernels reach at
   * its shapes (FLOP-weighted; 0: none), their head_dim and KV length (FLOP-weighted) and
   * masking (most FLOPs causal); pack_rate: the device pack's rate when the ceiling set
   * device_rate below it, else 0. */
  double attn_ceiling_frac, attn_head_dim, attn_kv_len;
  bool attn_causal;
  /* the head_dim of the curve read and its shortest KV length (FLOP-weighted): above the
   * row's head_dim or KV length, the figure is a larger shape's, an upper bound */
  double attn_curve_dim, attn_shortest_kv;
  double pack_rate;
  const char *ceiling_basis; /* the device's attention_ceiling.basis, else
                                roofline.attention_ceiling_basis (the rules' string) */
  /* The row's class beside its family: its kernel holds FP4 weights it dequantises to its
   * 16-bit format in the kernel (matcher precision_dequant_kernel, on a device whose pack
   * states no FP4 peak: no FP4 units). basis_family, basis_dequant: the class of the row
   * the attainable rate comes from (trace or family basis); parity: that class is not the
   * row's, so the rate is parity with other work, an upper bound no kernel of the row's
   * class is shown reaching (review 19 defect 5: a dense bf16 GEMM's rate for MXFP4
   * grouped GEMMs dequantising on MI300X). */
  bool dequant, basis_dequant, parity;
  const char *basis_family;
  /* A memory-bound row's fastest comparable row left out as no evidence at its size (bytes
   * per launch over roofline.size_match_factor times its own; review 21 defect 4): its
   * name, stage label, row index, rate and bytes-per-launch ratio; NULL: none. When no
   * size-matched row is faster, the attainable rate is the row's own (size_own). */
  const char *size_kernel, *size_stage;
  size_t size_row;
  double size_rate, size_ratio;
  bool size_own;
} an_roofline;

/* The larger of a row's two roofline terms over the smaller (0: a term is 0). */
static inline double an_roofline_terms_ratio(const an_roofline *f) {
  double lo = f->mem_term_us < f->comp_term_us ? f->mem_term_us : f->comp_term_us;
  double hi = f->mem_term_us < f->comp_term_us ? f->comp_term_us : f->mem_term_us;
  return lo > 0 ? hi / lo : 0;
}

/* Why launches of a stage have no roofline, counted per launch (Limits). */
typedef struct an_roofline_counts {
  size_t launches;     /* kernel launches of the stage */
  size_t with_shapes;  /* launches with FLOPs and bytes */
  size_t from_mapping; /*   of which shapes came from the mapping trace's same kernel */
  size_t from_model;   /*   of which shapes came from the model's dimensions */
  size_t model_tokens; /* the tokens a step the stage's model GEMM plans used (each stage its
                          own: prefill and decode steps differ); 0 none */
  size_t no_op;        /* no launching CPU op (graph replay without a mapping trace) */
  size_t no_op_graph;  /*   of which launched by a graph launch (matcher graph_replay_launch) */
  size_t no_launch;    /*   of which without a launch call in the trace (outside the capture) */
  size_t no_shapes;    /* the op recorded no Input Dims (record_shapes off) */
  size_t no_model;     /* no op cost model covers the op */
  size_t bad_shapes;   /* shapes that do not parse, wrong ranks, absurd sizes, unknown format */
  size_t no_peak;      /* the device states no peak for the launch's format */
  size_t secondary;    /* another kernel of the same op carries the op's cost (the
                          workspace memset beside a GEMM: its op is costed once) */
} an_roofline_counts;

/* The run's device for the roofline. */
typedef struct an_roofline_device {
  const char *id, *label;  /* the device pack entry (from the rules); NULL: no roofline */
  const char *gpu;         /* deviceProperties name ("" blank); NULL when the trace has none */
  long arch, sms;          /* as matched (-1 unknown) */
  double hbm_tbs;          /* the entry's figures (0 without an entry) */
  double host_link_gbs;    /* the entry's host link, both directions (0: not stated) */
  double attainable_tbs;   /* hbm_tbs * its attainable bandwidth fraction */
  double latency_floor_us; /* per-launch floor applied: the entry's, capped by shortest_us */
  double pack_floor_us;    /* the entry's latency_floor (0: none stated) */
  const char *floor_basis; /* the entry's latency_floor basis (from the rules) */
  double shortest_us;      /* the run's shortest kernel launch (0: none) */
  /* The floor of a matrix-unit launch (a GEMM, grouped GEMM or attention row): the entry's
   * latency_floor.matrix_us, capped by the run's shortest such launch with shapes
   * (shortest_matrix_us, 0: none), never under latency_floor_us; = latency_floor_us when the
   * entry states none. */
  double matrix_floor_us, pack_matrix_floor_us, shortest_matrix_us;
  const char *source; /* the entry's datasheet citation */
} an_roofline_device;

/* How the roofline's model was identified from the trace's content, or why none was
 * (roofline_model.c, roofline_moe.c; issue 33: data, report/text.c rp_model_ident words
 * it). */
typedef enum an_model_ident_kind {
  AN_IDENT_NONE = 0,       /* nothing tried */
  AN_IDENT_NO_FIT = 1,     /* no models: entry fits the content */
  AN_IDENT_AMBIGUOUS = 2,  /* n_fits entries fit (first, other) and nothing tells them apart */
  AN_IDENT_CONTENT = 3,    /* one dense entry fits (the evidence) */
  AN_IDENT_HINT = 4,       /* several fit; the hint text picked first (the evidence; other) */
  AN_IDENT_MOE_CONTENT = 5 /* the mixture-of-experts checks of the content (the check's) */
} an_model_ident_kind;

typedef struct an_model_ident {
  an_model_ident_kind kind;
  size_t n_fits;             /* AMBIGUOUS, HINT: entries the content fits */
  const char *first, *other; /* AMBIGUOUS: the first two fits; HINT: the pick and another
                                (entry labels, from the rules) */
  const char *hint;          /* HINT: the text that picked (an input path, the server args'
                                model; owned by the report's strings) */
  /* CONTENT: the entry a name (the first hint text naming one: server args, an input
   * path, the Python frames' model) names, whether or not the content fits it, with hint
   * that text; NULL when no name names one. first: the entry picked */
  const char *named;
  /* CONTENT, HINT: what the content showed of the entry */
  bool shapes;               /* its MLP weight in a CPU op's shapes (width and MLP size) */
  long hidden, intermediate; /* the entry's, shown when shapes */
  bool lm_head;              /* its lm_head weight in a CPU op's shapes (else the logits) */
  bool by_gemms;             /* its layers counted from replayed GEMM launches (else attention) */
  long vocab, layers;
  size_t launches; /* the launches that counted the layers */
} an_model_ident;

/* What the model checks found (docs/roofline.md "Model dimensions"): dense models
 * (roofline_model.c), then mixture-of-experts ones (roofline_moe.c). */
typedef enum an_model_check_kind {
  AN_CHECK_NONE = 0,             /* nothing checked */
  AN_CHECK_IDENT = 1,            /* no model identified: the identification says why */
  AN_CHECK_NO_WEIGHT_FORMAT = 2, /* the entry names no weight format */
  AN_CHECK_NO_LOGITS = 3,        /* no CPU op shows the logits [tokens, vocab] */
  AN_CHECK_NOT_WHOLE_STEPS = 4,  /* the replayed GEMM launches are not whole steps (cycle) */
  AN_CHECK_DENSE_HELD = 5,       /* every dense check held */
  AN_CHECK_MOE_NO_TOKENS = 6,    /* the step annotations state no one token count */
  AN_CHECK_MOE_NO_FIT = 7,       /* no mixture-of-experts entry fits (misfit: the first why) */
  AN_CHECK_MOE_AMBIGUOUS = 8,    /* two entries fit (fit, other) */
  AN_CHECK_MOE_HELD = 9          /* one entry fits */
} an_model_check_kind;

/* Why the first mixture-of-experts entry checked did not fit. */
typedef enum an_moe_misfit {
  AN_MOE_MISFIT_NONE = 0,             /* no entry was checked */
  AN_MOE_MISFIT_NO_WEIGHT_FORMAT = 1, /* it names no weight format */
  AN_MOE_MISFIT_NO_LM_HEAD = 2,       /* no CPU op shows its lm_head weight */
  AN_MOE_MISFIT_LAUNCHES = 3          /* the grouped GEMM launches are not 2 a layer a step */
} an_moe_misfit;

/* The check and the figures it quotes (each kind uses some; the rest are 0 / NULL). */
typedef struct an_model_check {
  an_model_check_kind kind;
  an_moe_misfit misfit;       /* MOE_NO_FIT */
  size_t launches, steps;     /* replayed (grouped) GEMM launches; whole steps of them */
  size_t cycle;               /* dense GEMM launches a step (4 x layers + 1) */
  long vocab, hidden, layers; /* the entry's dimensions */
  long tokens, topk, experts; /* tokens a step; MoE: top-k of that many experts */
  double active;              /* MOE_HELD: experts expected active a step */
  const char *op;             /* DENSE_HELD: the CPU op showing the logits (report's strings) */
  const char *fit, *other;    /* MOE_AMBIGUOUS: the two entries' labels (rules) */
  /* MOE_HELD: the stage's replayed dense GEMM launches, and the projections a layer they
   * hold (2: QKV, o_proj; 3: and the router; 0: not whole layers of either, no roofline) */
  size_t dense_launches, dense_per_layer;
} an_model_check;

/* Attention from the step's sums (roofline_attn.c): the basis, or the fact missing. */
typedef enum an_attn_check_kind {
  AN_ATTN_NONE = 0,             /* no attention launch */
  AN_ATTN_NO_MODEL = 1,         /* no model identified (ident says why) */
  AN_ATTN_NO_WEIGHT_FORMAT = 2, /* the entry states no weight format */
  AN_ATTN_NO_SUMS = 3,          /* the step annotations state no attention sums */
  AN_ATTN_KV_FORMATS = 4,       /* the attention kernels disagree on the KV cache's format */
  AN_ATTN_LAUNCHES = 5,         /* launches are not one a layer in each step */
  AN_ATTN_HELD = 6              /* every fact is there */
} an_attn_check_kind;

typedef struct an_attn_check {
  an_attn_check_kind kind;
  const char *model;    /* the entry's label (rules) */
  const char *kv_dtype; /* HELD: the KV cache's format: the weights' (rules), unless kv_fp8 */
  bool kv_fp8;
  long window, heads, kv_heads, head_dim, layers;
  size_t launches, steps;
  double q_tokens, kv_tokens, pairs; /* HELD: a step's means of the annotation sums */
  /* HELD with a window: the layers of the model that slide, and a sliding layer's KV tokens
   * and score pairs a step: upper estimates, as the sums give only totals (each sequence
   * reads at most min(sk, sq + window - 1) keys, each query row scores at most window) */
  long window_layers;
  double window_kv_tokens, window_pairs;
  /* how the dense model was identified, or why none was (NO_MODEL); AN_IDENT_NONE when the
   * model is the mixture-of-experts plan's */
  an_model_ident ident;
} an_attn_check;

/* The known model a graph-replayed decode step's GEMMs were costed from, and what was
 * checked (docs/roofline.md "Model dimensions"). Data: the report words each record. */
typedef struct an_roofline_model {
  const char *id, *label;  /* the models: pack entry (from the rules); NULL: none identified */
  an_model_ident from;     /* how it was identified: the trace's content, a hint picking
                              among entries the content fits, or why none was */
  const char *source;      /* where its dimensions come from (config.json) */
  bool used;               /* the checks held: the decode GEMMs have model shapes */
  bool from_hint;          /* several entries fit the content; a hint text (an input path)
                              picked this one */
  long tokens;             /* rows per decode step (the logits op's first dimension) */
  an_model_check check;    /* what was checked, or why nothing is claimed */
  an_attn_check attention; /* attention from the step's sums: the basis, or the fact
                              missing; AN_ATTN_NONE: no attention launch */
  bool attention_used;     /* the attention launches have a roofline from it */
} an_roofline_model;

/* One row of the kernel table (docs/reference.md §5). */
typedef struct an_kernel_row {
  const char *name;     /* canonical kernel name */
  const char *raw_name; /* the first full name aggregated under it */
  const char *category; /* kernel classifier (a label the packs declare) */
  const char *kind;     /* its finer kind (== category unless the rule gives one) */
  double total_us, max_us;
  double steps_us; /* inside the counted steps (analysis/steps.h); = total_us without steps */
  double opaque_steps_us; /* of steps_us, launches under an op a compiler cannot fuse through
                             (analysis/opaque_ops.h; rows of a chain category only) */
  size_t launches;
  double share_pct;                  /* of the stage's kernel-time sum */
  bool shown;                        /* passes --kernel-table-limit and the share bar */
  bool site_share_shown;             /* several candidate sites: each with its site share */
  bool outside_sites;                /* kernel_table.outside_steps_sites: a shown site that
                                        is unresolved and wholly outside the counted steps
                                        is worded so (rp_site_location) */
  bool partial_site;                 /* the shown sites cover under kernel_table.
                                        site_min_coverage of the map's launches of the
                                        kernel (an_row_site_coverage): the row says how
                                        many (issue 31) */
  uint32_t roofline;                 /* index + 1 into the stage's rooflines; 0: none
                                        (an_row_roofline; in the padding after the flags) */
  const an_kmap_entry *entry;        /* mapping (or formal) map entry; NULL: unresolved */
  size_t n_shown_sites;              /* the sites the row shows (preferred ones first-ranked, */
  const an_site *const *shown_sites; /*   at most kernel_table.sites_shown) */
} an_kernel_row; /* flags and roofline index side by side: 112 bytes, not 120 (one row per
                    kernel name) */

/* ------------------------------------------------------------------ fusion */

typedef enum an_fusion_origin {
  AN_FUSION_MAINLINE = 0, /* the fused path exists in the framework's tree */
  AN_FUSION_UPSTREAM = 1, /* merged upstream */
  AN_FUSION_INFLIGHT = 2, /* an open upstream change */
  AN_FUSION_PORT = 3      /* the tree's path does not serve the run's platform: a port
                             (the pattern's platform_ports say what to port; review 17
                             defect 2) */
} an_fusion_origin;

typedef enum an_fusion_match {
  AN_FUSION_DIRECT = 0, /* the fused kernel itself ran (active matcher) */
  AN_FUSION_SPLIT = 1   /* every split group of the unfused chain ran */
} an_fusion_match;

typedef enum an_confidence {
  AN_CONFIDENCE_CONFIRMED = 0,
  AN_CONFIDENCE_CANDIDATE = 1,
  AN_CONFIDENCE_UNKNOWN = 2 /* a gate fact the pattern needs is unknown: never Confirmed */
} an_confidence;

/* What a fuse row asks of the reader (issue 31). Only AN_FUSE_OPPORTUNITY is something
 * to do: the summary never turns a row of another state into an action. */
typedef enum an_fuse_state {
  AN_FUSE_OPPORTUNITY = 0,      /* the split runs, the fused path does not, every gate holds */
  AN_FUSE_IN_USE = 1,           /* the fused kernel runs in this stage */
  AN_FUSE_IN_USE_ELSEWHERE = 2, /* the fused kernel runs in another stage of the run; here a
                                   size cap keeps the split (prefill over the token cap) */
  AN_FUSE_OVER_CAP = 3,         /* every step of the stage is above the pattern's size cap
                                   (max_tokens, max_message_mb): the split is by design */
  AN_FUSE_GATES_UNKNOWN = 4     /* a gate fact the pattern needs is unknown (unknown_gates) */
} an_fuse_state;

/* Facts of the execution context a pattern's gates read: bits of
 * an_fuse_row.unknown_gates (which ones the trace left unknown). */
typedef enum an_gate_fact {
  AN_GATE_PLATFORM = 1u << 0, /* CUDA or ROCm */
  AN_GATE_MODE = 1u << 1,     /* eager, graph replay, torch.compile */
  AN_GATE_TOKENS = 1u << 2,   /* tokens per step (step annotations) */
  AN_GATE_MESSAGE = 1u << 3,  /* collective message bytes (kernel args) */
  AN_GATE_TOPOLOGY = 1u << 4, /* whether the TP group spans nodes */
  AN_GATE_SHAPE = 1u << 5     /* the gated piece's shape and format (its op's Input Dims) */
} an_gate_fact;

typedef struct an_fuse_evidence {
  const char *kernel;
  double share_pct; /* the kernel's share of the stage, as every table of the stage has it */
  /* review 11 defect 7: the share of the stage this row's own launches of the kernel take,
   * when the row holds only some of them (a merge row's siblings: the kernel also runs
   * other GEMMs); 0 when the row holds all of them. The row's evidence then adds up to at
   * most its own share. */
  double own_pct;
  const char *counted_in; /* review 5 defect 7: the pattern id of the stage's row that holds
                             this kernel when another row counts it too (one kernel, one
                             row: this row leaves its time out); NULL when this row holds it */
} an_fuse_evidence;

/* One shape of sibling GEMMs of a merge row: the shared input [m x k], each sibling's N,
 * the format (dtype id, borrowed from the rules) and how many runs of the stage have it. */
typedef struct an_merge_shape {
  double m, k;
  size_t n;
  double n_out[AN_MAX_MERGE_SIBLINGS];
  const char *dtype;
  size_t runs;
} an_merge_shape;

/* One row of the fuse table (docs/reference.md §7.2). */
/* What a fuse row's estimated saving is (review 11 defect 7: the table shows it beside
 * the related time, with its basis). */
typedef enum an_saving_basis {
  AN_SAVING_NONE = 0,   /* nothing to save: the fused kernel runs, a size cap, a gate */
  AN_SAVING_PASSES = 1, /* a split: every piece's time but the largest's (whose pass the
                           fused kernel still makes) */
  AN_SAVING_MERGED = 2, /* a merge: the siblings' time less one merged GEMM at the best
                           rate a GEMM of their format reaches in the stage */
  /* review 15 defect 1: a split with a piece another row of the stage counts (one kernel,
   * one row; saving_largest_in names that row). Its largest piece: every piece this row
   * counts goes and saving_us = related_us; a smaller piece: saving_us = related_us +
   * shared_us less the largest piece */
  AN_SAVING_PASSES_LARGEST_ELSEWHERE = 3,
  AN_SAVING_PASSES_SHARED = 4
} an_saving_basis;

typedef struct an_fuse_row {
  const char *pattern_id, *pattern_name; /* from the rules */
  an_fusion_origin origin;
  an_fusion_match match;
  an_confidence confidence;
  double related_us, share_pct;
  double shared_us; /* related kernels' time another row of the stage holds (left out of
                       related_us and share_pct; with fuse.context_gates) */
  double saving_us; /* estimated GPU time the fusion would save, by the
                       pattern's saving formula (0 for an active fused path) */
  /* saving_us per counted step: its part inside the steps (the stage's in-step share of
   * kernel time) over their number, as the summary quotes it; the stage window's when the
   * stage has no steps (an_fuse_per_step) */
  double saving_step_us;
  an_saving_basis saving_basis;
  /* basis AN_SAVING_PASSES_LARGEST_ELSEWHERE / _SHARED: the pattern id of the row that
   * counts the shared piece (borrowed from the rules); NULL otherwise */
  const char *saving_largest_in;
  bool shown;       /* share >= fuse.render_min_share_pct */
  size_t n_related; /* kernel names of the related rows, related order */
  const char **related;
  size_t n_evidence; /* related rows at or above fuse.evidence_min_share_pct */
  an_fuse_evidence *evidence;
  size_t n_locations;               /* distinct current locations ("path:line func" or */
  const char **locations;           /*   "unresolved"), at most fuse.locations */
  an_location_kind *location_kinds; /* per location: a graph replay's when its sites are */
  /* from the rules: the pattern's paths for the run's framework (framework_paths), then
   * its framework-agnostic ones; an owned array of borrowed strings */
  size_t n_candidate_paths;
  const char **candidate_paths;
  /* per candidate path, the repository it is in ("owner/name": the run's framework's, for
   * its own paths and those of a pattern gated on it), NULL when none is stated; owned */
  const char **candidate_repos;
  const char *rationale_hint; /* the pattern's hint sentence, NULL when none */
  /* The pattern's since (review 18 defect 10): the framework (its label, from the rules),
   * the release that first has the path's switch and the change that added it; NULL:
   * not stated; since_switch: the setting that turns it on there (review 19 defect 12),
   * NULL: not stated. Borrowed. */
  const char *since_framework, *since_version, *since_change, *since_switch;
  an_platform port_platform; /* origin AN_FUSION_PORT: the platform the path lacks */
  /* Review 17 defect 4: the piece the chain's riders feed (the per-head norm that reads the
   * Q/K copy; a kernel name of related) and its lever (the pattern's chain.rider_lever),
   * when the chain took riders along; NULL otherwise. A tuning item of that kernel names
   * this lever. */
  const char *fed_piece, *fed_lever;
  /* Issue 31: whether the pattern's fused kernel already runs (in this stage, or in
   * another stage of the run while a size cap keeps this one split): such a row is
   * information, never an action. state says which; unknown_gates (an_gate_fact bits)
   * the gate facts the trace left unknown (state AN_FUSE_GATES_UNKNOWN); chained_pct the
   * share of the rarest piece's launches that are part of a whole chain of the pieces
   * on one stream (100 without a chain gate). */
  bool fused_in_use;
  an_fuse_state state;
  unsigned unknown_gates;
  double chained_pct;
  /* Deviation F18 (brief 13 defect 3): the chains of the row's tuple, how many of them
   * module frames placed in one layer (every piece inside one instance of the model's
   * repeated block; with_stack traces), and the chains of any tuple dropped because their
   * pieces sat in two layers; 0 without a chain gate. */
  size_t chains, chains_by_frames, chains_across_layers;
  long cap_tokens, step_tokens; /* the pattern's token cap and the stage's fewest tokens of
                                   one step (0 = none / unknown): the over-cap evidence */
  double message_bytes, cap_message_bytes; /* the split's largest collective message and the
                                              fused path's cap at the run's TP size (0 =
                                              unknown / no cap) */
  /* The split's pieces by role in chain order (the pattern's roles, its riders' first when
   * the chain took riders along: "Q/K contiguous copy", "Q/K RMSNorm (per head)", ...);
   * owned array of strings borrowed from the rules; 0 without roles. */
  size_t n_roles;
  const char **roles;
  /* A merge pattern's row (fuse_merge.c): sibling GEMMs that read one input; saving_us is
   * their time less one merged GEMM at the best rate a GEMM of their format and at most
   * merge_comparable x its FLOPs reaches in the stage (merge_rate_lo..hi over the runs,
   * FLOP per us). The sibling shapes: at most AN_MAX_MERGE_SHAPES, the rest counted. */
  /* The shape gate's facts (pattern shape:): the last dimension of the gated piece's op's
   * smallest tensor and its format (dtype id, from the rules); 0 / NULL: no gate, or its op
   * stated none (unknown_gates then has AN_GATE_SHAPE). */
  double piece_last_dim;
  const char *piece_format;
  bool merge;
  size_t n_merge_shapes, merge_more;
  an_merge_shape merge_shapes[AN_MAX_MERGE_SHAPES];
  double merge_rate_lo, merge_rate_hi, merge_comparable;
} an_fuse_row;

/* ------------------------------------------------------------------ overlap */

typedef enum an_overlap_verdict {
  AN_OVERLAP_HEADROOM = 0,       /* much time runs alone: worth overlapping or fusing */
  AN_OVERLAP_LOW_ROI_HIDDEN = 1, /* already hidden under other streams */
  AN_OVERLAP_WAIT = 2,           /* exposed time is mostly wait for other ranks, not
                                    headroom (deviation O8; recommendation rank skew) */
  AN_OVERLAP_UNSIZED = 3         /* a collective with no floor to split its time into work
                                    and wait: neither headroom nor wait (recommendation
                                    wait unknown, deviation O25) */
} an_overlap_verdict;

typedef enum an_priority {
  AN_PRIORITY_P1 = 1, /* low dependency risk: act */
  AN_PRIORITY_P2 = 2, /* check dependencies first */
  AN_PRIORITY_P4 = 4, /* low-roi-hidden */
  AN_PRIORITY_P5 = 5  /* under the reporting bar */
} an_priority;

typedef enum an_recommendation {
  AN_RECOMMEND_TRY_OVERLAP = 0,
  AN_RECOMMEND_TRY_FUSION = 1,
  AN_RECOMMEND_CHECK_DEPS = 2,
  AN_RECOMMEND_SKIP = 3,
  AN_RECOMMEND_ONE_TIME = 4,        /* one-time work before the stage's first compute (a weight
                                       upload): set apart, not a per-step cost (deviation O8) */
  AN_RECOMMEND_RANK_SKEW = 5,       /* exposed time is mostly wait for other ranks (first
                                       collective of a step): compare ranks, not overlap (O8) */
  AN_RECOMMEND_ALREADY_FUSED = 6,   /* the kernel is already a fused one (matcher
                                      already_fused_kernel): nothing left to fold into it (O8) */
  AN_RECOMMEND_ELIMINATE = 7,       /* a staging copy into a communication buffer: remove it
                                       (bucket views, in-place buffers), do not overlap it */
  AN_RECOMMEND_RESTRUCTURE = 8,     /* overlap work on a single-stream stage: nothing runs beside
                                       it until the stage is restructured (the stage's options) */
  AN_RECOMMEND_PIPELINE_BUBBLE = 9, /* a pipeline-parallel transfer's exposed time is mostly wait
                                      for the neighbouring stage (overlap.wait.bubble_rules) */
  AN_RECOMMEND_WAIT_UNKNOWN = 10,   /* a collective of a multi-step stage whose instances have no
                                      like instance (waits.h "alone"): its split into transfer
                                      and wait is unknown, so no overlap bound (issue 31) */
  AN_RECOMMEND_SLOW_MID_STEP = 11,  /* a wait row of a stage whose collectives' wait sits at the
                                      step's later collectives, not at the first where a late
                                      rank shows (an_wait_story): the summary's "find why
                                      collectives run above their floor mid-step" (O22) */
  /* Deviation O32 (review 17 defect 13): a row that only moves GPU time, in the stage where
   * the GPU waits for the host (host_bound: P4, recovering 0), recommends no action. */
  /* it already runs on a stream of its own (own_stream) and is exposed only because nothing
   * else is queued while the GPU waits for the host (review 18 defect 1: "already overlapped"
   * read as hidden, while these rows are mostly exposed): nothing to gain until the host is
   * fixed */
  AN_RECOMMEND_OWN_STREAM_HOST_BOUND = 12,
  AN_RECOMMEND_NOTHING_TO_GAIN = 13 /* the others (check deps, restructure, overlap on the
                                       compute stream): nothing to gain there either */
} an_recommendation;

/* Where a stage's collective wait sits, decided once (the summary's wait item,
 * summary_items.c) and told by the wait item and the overlap table's wait rows alike
 * (deviation O22). */
typedef enum an_wait_story {
  AN_WAIT_STORY_NONE = 0,      /* no wait above the floors, or no collective */
  AN_WAIT_STORY_LATE_RANK = 1, /* a late rank: the wait sits at the steps' first collectives,
                                  the Ranks section measured it, ranks of the run are unread,
                                  or the first collectives' wait is unknown (not ruled out) */
  AN_WAIT_STORY_MID_STEP = 2,  /* the first collectives ran at their floors: the later ones
                                  run slow (contention, the link, ranks drifting apart) */
  AN_WAIT_STORY_IDLE = 3       /* mid-step, on a stage idle for the host or for queued
                                  work most of the step: the ranks reach the collectives at
                                  different times (deviation O26); the idle item is its
                                  action */
} an_wait_story;

typedef enum an_dep_risk {
  AN_DEP_RISK_LOW = 0,
  AN_DEP_RISK_HIGH = 1,
  AN_DEP_RISK_UNCLEAR = 2
} an_dep_risk;

/* What decided a row's dependency class (issue 33: the model holds the evidence as data;
 * report/text.c rp_dep_evidence words it for every format). */
typedef enum an_dep_evidence_kind {
  AN_DEP_EV_NONE = 0,               /* no class decided (the reference's rows) */
  AN_DEP_EV_KERNEL_NAME = 1,        /* a context rule matched the kernel's name */
  AN_DEP_EV_CPU_OP = 2,             /* a context rule matched the CPU op around its launch */
  AN_DEP_EV_NEXT_CONSUMER = 3,      /* a collective whose next kernel on its stream consumes it */
  AN_DEP_EV_TIGHT_NEIGHBOUR = 4,    /* a tight producer/consumer neighbour on its stream */
  AN_DEP_EV_TIGHT_NO_SCOPE = 5,     /* a tight neighbour, and no scope to judge it by */
  AN_DEP_EV_NO_TIGHT_NEIGHBOUR = 6, /* no tight dependent neighbour */
  AN_DEP_EV_FUSION_PIECE = 7,       /* a piece of the fusion the row names (fusion_pattern) */
  AN_DEP_EV_CHAIN_PIECE = 8         /* a piece of the stage's eager elementwise chain */
} an_dep_evidence_kind;

typedef struct an_dep_evidence {
  an_dep_evidence_kind kind;
  char *cpu_op;       /* AN_DEP_EV_CPU_OP: the op around the launch (owned) */
  size_t op_launches; /* AN_DEP_EV_CPU_OP on a collective: sampled launches under
                         that collective op, of op_sampled (0: not sampled) */
  size_t op_sampled;
  char *next_kernel;         /* AN_DEP_EV_NEXT_CONSUMER: the consumer's full name (owned) */
  const char *next_category; /* AN_DEP_EV_NEXT_CONSUMER: its category (borrowed: rules) */
} an_dep_evidence;

/* Which same-stream neighbour looks dependent (docs/reference.md §6.6). */
typedef enum an_dep_signal {
  AN_DEP_SIGNAL_LOW = 0,    /* serial risk low */
  AN_DEP_SIGNAL_PREV = 1,   /* prev-side serial risk */
  AN_DEP_SIGNAL_NEXT = 2,   /* next-side serial risk */
  AN_DEP_SIGNAL_BOTH = 3,   /* both-side serial risk */
  AN_DEP_SIGNAL_UNCLEAR = 4 /* adjacency unclear (a side has no scope) */
} an_dep_signal;

/* How an overlap row's Python scope was found (docs/reference.md §6.5 order). */
typedef enum an_scope_source {
  AN_SCOPE_NONE = 0,        /* unmapped */
  AN_SCOPE_MAPPING = 1,     /* the CPU op of a mapping kernel (External id) */
  AN_SCOPE_LAUNCH = 2,      /* its launch (correlation; deviation O1) */
  AN_SCOPE_TIME_WINDOW = 3, /* Python frames around the GPU timestamp */
  AN_SCOPE_KERNEL_MAP = 4,  /* the mapping kernel map's votes or best location */
  AN_SCOPE_FORMAL = 5       /* the formal kernel map */
} an_scope_source;

/* What an overlap row told "try fusion" folds into (overlap_partner.c). */
typedef enum an_fusion_partner {
  AN_PARTNER_NONE = 0,
  AN_PARTNER_FUSE_ROW = 1,   /* a shown fusion row holding the kernel (fusion_pattern) */
  AN_PARTNER_EAGER_CHAIN = 2 /* the stage's eager chain (summary.chain_categories) */
} an_fusion_partner;

typedef struct an_overlap_row {
  an_overlap_verdict verdict;
  char *kernel;                /* canonical kernel name */
  char *category;              /* overlap classifier category (the overlap model's class) */
  const char *kernel_category; /* the kernel classifier's category, as the kernel table of
                                  the stage shows it (issue 28: one category per kernel in
                                  every table); borrowed from the rules */
  char *scope;                 /* Python scope "path:line func"; NULL = unmapped */
  char *launch_op;             /* most common CPU op / launch of the scope evidence; NULL = none */
  char *staging_op;            /* eliminate rows: the communication-buffer CPU op (matcher
                                  comm_buffer_copy_op) a sampled launch ran under
                                  (DDP's reducer::copy_bucket_to_grad); NULL = none */
  const char *staging_lever;   /* the lever the packs name for staging_op (an_summary_lever:
                                  gradient_as_bucket_view=True); borrowed from the rules;
                                  NULL = none */
  bool launch_op_time_window;  /* most of the evidence found its scope by the time window, no
                                  op named (launch_op NULL; the report says so) */
  an_scope_source scope_source;
  an_location_kind scope_kind; /* a graph replay's when launch_op replays one (the scope is
                                  where the graph was replayed; deviation A10) */
  an_dep_signal dep_signal;
  an_dep_risk dep_risk;
  an_priority priority;
  an_recommendation recommendation;
  size_t count;
  double total_us, hidden_us, exclusive_us, hidden_by_compute_us;
  double share_pct; /* total_us / stage busy time * 100 */
  /* Exposed time: the row's GPU time with no compute kernel running on another stream
   * of the same GPU, over the stage (docs/overlap.md "Exposed time"). Milliseconds.
   *   exposed_ms      steady cost: median instance x count; what ranking by recoverable
   *                   time uses (the "What to try first" summary ranks by it);
   *   exposed_wait_ms the excess above the steady cost, concentrated in a few instances
   *                   (first collective of a step waiting for the slowest rank, stalls):
   *                   rank skew / pipeline bubble, never headroom;
   *   exposed_median_us, exposed_first_us: the median instance and the earliest one. */
  double exposed_ms;
  double exposed_wait_ms;
  double exposed_median_us, exposed_first_us;
  /* What another stream's work already hides of the row (us), the table's Hidden column:
   * with the exposed time and its wait it makes up the row's GPU time. For a kernel, the
   * compute beside it (hidden_by_compute_us); for a copy-engine transfer under the
   * mechanism packs (brief 12 defect 1), any kernel or copy beside it (hidden_us): a copy
   * engine shares no SMs, so only the time nothing else runs on the GPU is exposed, every
   * instance a cost of the same transfer (no wait: a larger copy is a larger transfer). */
  double covered_us;
  char *top_partner; /* kernel it hides under the longest, NULL if never hidden */
  double top_partner_us;
  char *prev_kernel, *next_kernel; /* same-stream neighbours of the representative */
  double prev_gap_us, next_gap_us; /* -1 when there is no neighbour */
  /* Recoverable time (issue 16): what the row's action could win per step (over the
   * stage window when the stage has no step markers), milliseconds: at most the steady
   * exposed time; for an overlap action also at most the independent work another stream
   * could run meanwhile (compute of the stage not already hiding it), and 0 on a
   * single-stream stage (only a restructuring helps there); 0 for one-time setup. The
   * rows are ranked by it (overlap.recoverable.rank); below_floor: under
   * overlap.recoverable.floor_ms, collapsed into one line by the default layout. */
  double recoverable_ms;
  /* Rows whose action hides them behind the stage's compute share it (brief 9 defect 2):
   * compute_order is the turn in which the row took its share (1 first; 0: the row is not
   * behind compute), own_recoverable_ms its bound had it the compute to itself (per step,
   * as recoverable_ms, which is at most it). */
  int compute_order;
  double own_recoverable_ms;
  /* Of a row behind compute (compute_order > 0), per step as recoverable_ms: its steady
   * exposed time, and the compute another stream could run beside it that it took its
   * share of (brief 12: the bound is the lesser, and its basis says which binds). */
  double bound_exposed_ms, bound_compute_ms;
  /* GPU time of the row's kernels inside the counted steps (analysis/steps.h; = total_us
   * when the stage has none): recoverable time, per step, is taken from this share of the
   * row (issue 28: no whole-window figure under a per-step heading). */
  double steps_us;
  bool below_floor;
  bool copy_engine; /* a copy-engine transfer (overlap.copy_engine_event_categories): it can
                       move to a side stream even on a single-stream stage */
  /* A copy-engine row whose instances state their bytes (arg "bytes"): the bytes they move
   * and the time they take (over those instances), its largest instance's bytes; for a
   * host copy (matcher host_link_copy), one direction of the device's host link (half its
   * host_link_gbs; 0: no device figure) and whether the row's rate, copy_bytes / copy_us,
   * is under overlap.copy_lane.host_link_min_fraction of it (brief 12 defect 1:
   * hta_async's 55.6 MB pinned input copies at 7.6 GB/s on a 32 GB/s link). */
  double copy_bytes, copy_us, copy_max_bytes;
  bool host_copy;
  double host_link_gbs;
  bool copy_slow;
  double copy_slow_fraction; /* the bar copy_slow was judged by (the setting), so the words
                                under the table follow it */
  bool copy_pageable;        /* a slow copy from or to pageable memory (matcher pageable_copy): the
                                driver stages it through a pinned buffer */
  bool own_lane;             /* a collective with dataflow evidence that it is independent: a side
                                stream of its own is the action, also on a single-stream stage */
  /* Of the time account's instances of the row (ov_model_wait): how many have no like
   * instance (alone, their wait unknown) and their share of the row's time there; 0
   * without a time account. */
  size_t alone_instances;
  double unknown_fraction;
  /* Deviation O30: a wait row whose instances all have a floor (no unknown time) and some
   * time at it: its steady exposed part is transfer the time account measured. What its
   * mechanism's action would hide of that part per step (the lesser of it and the compute
   * beside it left by the rows that share it, transfer_compute_ms), and that action's first
   * lever (borrowed from the rules): a line under the table, never recoverable time (the
   * row reports its wait); 0 / NULL otherwise, and where the GPU waits for the host. */
  bool transfer_known;
  double transfer_bound_ms, transfer_compute_ms;
  const char *transfer_lever;
  /* whether transfer_lever is its dependency rule's own (a TorchRec embedding exchange's
   * pipeline), not the stage's generic restructure options: only such a row's transfer is
   * an item of What to try first (sm_transfer_items) */
  bool transfer_by_rule;
  /* Of those, the ones a latency-bound floor that waited left unknown (deviation O21: the
   * trace compared them and the floor holds wait), and their share of the row's time. */
  size_t latency_instances;
  double latency_fraction;
  /* Dependency class from dataflow and stream evidence (overlap.dependency.*), never from a
   * shared launch API or replay scope: dep_class ("serial", "optimizer-only", "independent",
   * "hard", "prefetchable", "unknown"; borrowed from the rules), the rule that decided
   * (borrowed) and its evidence (typed; its strings owned by the row). */
  const char *dep_class, *dep_rule;
  const char *launch_context; /* the launch-context family the row's instances share when a
                                collective's row is split by it ("input dist", "gradient
                                reduce (DDP hook)"; launch_context.h), NULL otherwise;
                                borrowed from the rules */
  bool context_rest;          /* the launches of a split collective that fall under no
                                labelled family (launch_context NULL) */
  an_dep_evidence dep_evidence;
  /* Review defect 3: "try fusion" names its partner: the shown fusion row (split, an
   * opportunity) that holds this kernel as a piece (fusion_pattern: its pattern name,
   * borrowed from the rules), or the stage's eager elementwise chain (no pattern; the
   * report names it); AN_PARTNER_NONE: the row is not told to fuse. fusion_bound_ms: what
   * fusing can remove of the row over the stage: the piece's eliminated memory round trip
   * (its bytes over the HBM bandwidth where its roofline record has them, else its time;
   * 0 for the chain's largest piece, whose pass the fused kernel still makes). */
  an_fusion_partner fusion_partner;
  bool cites_fusion;          /* review 5: a piece of a shown fusion row is that row's advice,
                                not a second row: folded out of the table (below_floor set,
                                not counted in n_below_floor) and cited under it; review 7
                                defect 6: a piece of the eager chain too (the chain item is
                                its advice and bound) */
  const char *fusion_pattern; /* AN_PARTNER_FUSE_ROW only, else NULL */
  double fusion_bound_ms;
  /* A printed restructure collective row: what to try, by its own dependency rule
   * (overlap.restructure_options_by_rule, else overlap.restructure_options; borrowed from
   * the rules); 0 otherwise (brief 9 defect 3: every row its own options). */
  size_t n_restructure_options;
  const char *const *restructure_options;
  /* A "try overlap" collective already running on a stream with no compute of the stage,
   * beside compute on another (brief 10 defect 2): no stream to move it to; what would put
   * compute beside it instead (overlap.own_stream_levers by its dependency rule, else
   * default; borrowed from the rules). */
  bool own_stream;
  size_t n_own_stream_levers;
  const char *const *own_stream_levers;
  /* Its action only moves GPU time, in the stage where the GPU waits for the host: P4,
   * recovering 0 until that is fixed (deviation O26; own_recoverable_ms keeps its bound). */
  bool host_bound;
  /* A collective whose messages all state a size under collectives.latency_bound_bytes: it
   * takes its fixed cost whatever its size, so the levers that move fewer bytes (matcher
   * bytes_lever) are not its options (deviation O27). Its restructure options and
   * own-stream levers without them are kept in lever_store (owned; NULL when nothing was
   * dropped, the lists then borrowed from the rules). */
  bool latency_bound_msgs;
  const char **lever_store[2];
} an_overlap_row;

typedef struct an_overlap_stage {
  char *stage; /* stage id ("extend", "decode", "all") */
  char *label; /* the stage's label ("extend/prefill") */
  int order;
  char *formal_path;      /* trace the stage was measured on */
  char *mapping_path;     /* trace the scopes came from; NULL when no mapping stage paired */
  double busy_us;         /* union of GPU busy time */
  double span_us;         /* first kernel start to last kernel end */
  double multi_stream_us; /* time with kernels on >= 2 streams */
  size_t max_streams;
  size_t n_kernels; /* overlap kernel events of the stage */
  /* Time accounting (deviation O8): kernel time per overlap category (copy-engine
   * transfers apart), in first-seen order; idle = span - busy; one_time_us = copy-engine
   * time that ends before the stage's first compute kernel (a weight upload), set apart
   * from the per-step cost. With max_streams <= 1 exclusive time is not headroom. */
  size_t n_by_category;
  struct an_overlap_category_time {
    char *category;   /* overlap category label (owned) */
    double kernel_us; /* summed kernel time; overlapping kernels each count */
  } * by_category;
  double copy_engine_us, one_time_us;
  size_t n_rows; /* rows after the share bar and the table limit */
  an_overlap_row *rows;
  /* Steps of the stage (its step annotations in the formal trace; 0 = unknown, then
   * recoverable time is over the stage window), the floor (ms per step) and how many
   * rows are under it. */
  size_t n_steps;
  double recoverable_floor_ms;
  /* The step's time (ms: the time account's span per counted step, else the stage window)
   * and overlap.recoverable.min_step_pct: a row recovering less than that share of it is
   * under the bar (P5), folded with the rows under the floor (deviation O25). */
  double step_ms, min_step_pct;
  size_t n_below_floor;
  size_t n_cites_fusion; /* rows folded as pieces of a fusion row or the chain (cites_fusion) */
  /* The stage's eager elementwise chain (an_summary_chain_row): its kernels' time inside the
   * counted steps per step (over the stage window without steps), 0 without a chain; a
   * folded chain piece states its part of it (review 7 defect 7). */
  double chain_ms;
  /* The compute the rows behind compute share (per step; the stage window without steps):
   * the stage's compute time less what already hides any of them, and how many rows share
   * it (an_overlap_row.compute_order). */
  double shared_compute_ms;
  size_t n_sharing_compute;
  /* Restructuring options of a single-stream stage (overlap.restructure_options, borrowed
   * from the rules): the first printed restructure row's; each such row has its own
   * (an_overlap_row.restructure_options); empty when the stage has no restructure row. */
  size_t n_restructure_options;
  const char *const *restructure_options;
  /* The summary's bottleneck is this stage (an_bottleneck): the GPU waits for the host, so
   * GPU-side savings do not shorten its step until that is fixed; launch_bound: most of
   * that wait is launch spacing, which fusion (fewer kernels) does shorten. */
  bool gpu_waits, launch_bound;
  /* Rows put forward whose action only moves GPU time (overlap, restructure) that the
   * host-bound stage made P4, recovering 0 (deviation O26). */
  size_t n_host_bound;
  /* Where the stage's collective wait sits (the summary's an_wait_story, O22, O26). */
  an_wait_story wait_story;
  /* What the recoverable time was bounded by (ov_gain_rank), kept so the rows can be
   * ranked again once the fusion rows name their partners (an_overlap_bind_fusion). */
  double compute_us;
  size_t lanes;
  /* Per kernel of summary.chain_categories: its time and the part of it that ran with
   * nothing else on the GPU (exclusive). The eager-chain bound counts only that part:
   * fusing away time that other streams' work covers does not shorten the step (review 2:
   * a chain bound of 16 ms/step over 18 ms/step of concurrent streams). */
  size_t n_alone;
  struct an_overlap_alone {
    char *kernel; /* canonical name (owned) */
    double total_us, exclusive_us;
  } * alone;
} an_overlap_stage;

/* ------------------------------------------------------------------ time account */

/* Why the GPU was idle in a gap between kernels (of at least timeline.gap_min_us), from
 * what the host thread that launched the next kernel was doing meanwhile. */
typedef enum an_idle_kind {
  AN_IDLE_SYNC = 0,        /* the host waited for the GPU (a synchronising call, .item(), a
                              blocking D2H copy) and then had to issue the next work */
  AN_IDLE_HOST = 1,        /* the host was busy elsewhere (a CPU op, Python code) */
  AN_IDLE_LAUNCH = 2,      /* the host was issuing work back to back: gaps of one launch's
                              cost (timeline.launch_gap_max_us), or inside the launch call
                              itself (a graph launch still submitting) */
  AN_IDLE_DEPENDENCY = 3,  /* the next kernel was issued before the gap and waited, within a
                              launch's latency (timeline.launch_gap_max_us), for the work of
                              another stream that ended the busy stretch before it */
  AN_IDLE_SHORT = 4,       /* gaps under timeline.gap_min_us */
  AN_IDLE_UNKNOWN = 5,     /* the trace holds no launch call for the next kernel */
  AN_IDLE_SETUP = 6,       /* one-time setup: the host was mostly in allocation or
                              initialisation calls (matcher setup_call: cudaMalloc, cudaFree,
                              hipMalloc, ...) outside the counted steps (a stage without
                              steps), or in a launch call long enough to load a module
                              (timeline.module_load_min_us); no per-step action */
  AN_IDLE_ALLOC = 7,       /* the same setup calls stalling the GPU inside counted steps: the
                              allocator growing or asked again inside what the capture
                              measures, a per-step loss */
  AN_IDLE_AWAIT = 8,       /* the host waited on a collective's result (matcher
                              host_collective_wait: a TorchRec awaitable's wait(), a comm op's
                              Wait or its backward): it follows the communication schedule and
                              the other ranks, not host work a faster host or graphs remove */
  AN_IDLE_BLOCKED = 9,     /* the next kernel had no launch record while a thread that issues
                              GPU work sat across the whole part in a copy to or from
                              pageable memory whose GPU copy had already run: the step waits
                              on that host copy (queued work is never blocked: a call across
                              it waits for that work) */
  AN_IDLE_EVENT_WAIT = 10, /* the queued kernel's stream waited on an event (cudaStreamWaitEvent)
                             the host recorded only inside the gap, released as it ran: what
                             is the waiting stream, child the stream waited for */
  AN_IDLE_OUTSIDE = 11,    /* the next kernel sat queued past a launch's latency while nothing
                              the trace shows held it: no kernel ran on any stream, no event
                              wait was released at its start, and a blocking call across it
                              waits on it rather than holds it; the cause is outside the trace
                              (a graph's wait node, another thread or process, another rank,
                              or the two clocks' skew). what is the call that queued it
                              (review 14 defect 1: hta_multistream5's 64 ms graph stalls) */
  AN_IDLE_FILTERED = 12    /* the same on a trace filtered or sampled to GPU work: the
                              likelier reading is GPU work the filter dropped (review 14
                              defect 3: hta_sampled_2ranks) */
} an_idle_kind;
#define AN_IDLE_KINDS 13

/* What the blocking call a dependency cause's lead names is (an_idle_cause.lead_kind): the
 * lever it points to (review 12 defect 1: hta_multistream5's thread sat 139-146 ms in a
 * pageable cudaMemcpyAsync under aten::to across every 64 ms gap). */
typedef enum an_lead_kind {
  AN_LEAD_NONE = 0,          /* no lead */
  AN_LEAD_PAGEABLE_COPY = 1, /* a copy to or from pageable memory (matcher pageable_copy):
                                pin the buffer, copy non_blocking, or off the critical stream */
  AN_LEAD_SYNC = 2,          /* a synchronising call (matcher host_sync): the event it waits on */
  AN_LEAD_READBACK = 3       /* a pageable copy whose own transfer took under
                                timeline.readback_max_copy_pct of the call: the call waited for
                                the queued work, a sync by another name; pinning cannot help
                                (review 13: multistream5's 704-byte read of lengths) */
} an_lead_kind;

/* Idle time of one cause: the gaps of one kind under one CPU activity. */
/* Idle after a sync that drained the GPU's queue before its step's first kernel (a step
 * boundary: a harness's torch.cuda.synchronize, a loop reading its last results): the step
 * starts on an empty queue, so the host's first work reaches the GPU as idle until a kernel
 * sits queued again; each sync links at most the queue it drained (review 16 defect 3:
 * hf_qwen's harness sync drained 14.10 ms before the step, and the report did not link it
 * to the gaps after it). Such a sync charges none of them (review 14 defect 2): the link is
 * told, the portions keep their kind. ns and gaps: the idle so linked; what / location: the
 * sync of the deepest such queue (its op, its Python frame), queue_ns that queue (the time
 * the sync blocked). All zero: none. */
typedef struct an_drain {
  int64_t ns;
  size_t gaps;
  const char *what, *location;
  int64_t queue_ns;
} an_drain;

typedef struct an_idle_cause {
  an_idle_kind kind;
  const char *what;     /* the CPU op or runtime call ("aten::item", "cudaStreamSynchronize",
                           "hipGraphLaunch"); NULL when only Python code ran */
  const char *location; /* the Python location "path:line func" around it; NULL when none */
  int64_t idle_ns;
  size_t gaps;
  int64_t max_gap_ns;
  /* Of it, the portions of at least timeline.long_gap_us: never launch spacing, so a
   * launch-bound pool leaves them to an item of their own. */
  int64_t long_ns;
  size_t long_gaps;
  /* Of its longest long gap (NULL when it has none, or they say nothing more): the
   * outermost annotation around it other than the step ("## optimizer ##") and the
   * longest operation inside it under the named activity ("aten::unflatten_dense_tensors"
   * under DistributedDataParallel.forward): the region a stall belongs to, and its lever. */
  const char *region, *child;
  /* dependency causes: region and child are the blocking call the most of its long gaps'
   * time shows a GPU-issuing thread sat in (an ns-weighted majority vote), and this the
   * vote's lead; lead_call the blocking runtime call itself ("cudaMemcpyAsync", child its
   * outermost CPU op) and lead_kind what it is (AN_LEAD_NONE: no lead) */
  int64_t lead_ns;
  const char *lead_call;
  an_lead_kind lead_kind;
  /* A host cause whose thread went untraced in its gaps (no what, no location; a gap's
   * longest stretch with no CPU op holds timeline.untraced_min_pct of it at least, and the
   * thread ran an op before it): the CPU op that ended last before that stretch and the
   * first after it
   * (or the launch call that ended the gap), which key the cause as what and location do
   * (one place in the code); untraced_ns: the stretch of its longest gap. NULL, NULL and 0
   * for every other cause. */
  const char *before, *after;
  int64_t untraced_ns;
  /* Of its longest gap's stretch, at most how many CUDA calls the process ran that the trace
   * did not record, counted by correlation ids (the ids the launching thread's calls jump
   * over, from corr_from to corr_to, less those any recorded call holds; review 17 defect 10:
   * ~1,300 in hta_event_sync's 18.5 ms). A bound that places nothing: calls Kineto drops by
   * design and the driver calls inside a runtime call use up ids too, on the launching thread
   * itself (review 20 defect 7). 0 under timeline.unrecorded_calls_min, and for other causes. */
  int64_t unrecorded_calls, corr_from, corr_to;
  /* Such a cause whose longest gap ends in event ordering the host issued inside it (a
   * cudaEventRecord, then a cudaStreamWaitEvent of the next kernel's stream on it, while no
   * kernel ran: the wait released at once and held nothing; review 16 defect 2): the
   * waiting stream and the stream it waited for (NULL when not known). NULL for none. */
  const char *event_stream, *event_on_stream;
  /* A queued cause (dependency, event wait, outside): of its longest gap, how long the next
   * work had sat queued when it ran, from its launch call's return to its start: since when
   * it waits (review 15 defect 6: hta_multistream5's graph nodes); 0 when unknown (no
   * launch call in the trace) and for every other cause. */
  int64_t queued_ns;
  /* A sync cause whose wait lies in a framework's designed wait (matcher designed_sync_frame
   * on a Python frame around the sync: SGLang's graph runner reading the batch back, its
   * overlap scheduler keeping the previous batch on the GPU meanwhile): that frame; NULL
   * for any other. Its gaps are the host's preparation of the next launch after the wait,
   * not a sync to remove (review 13 defect 2). */
  const char *designed;
  /* Such a cause's blocking call (review 22 defect 6: SGLang's read back before the graph
   * replay): the runtime call ("hipMemcpyWithStream"), the outermost CPU op around it
   * ("aten::copy_"; NULL: none), and when it read back (matcher readback_copy) its GPU copy
   * ("Memcpy DtoH (Device -> Host)"; NULL: no read back) and the copy's bytes (0: not
   * stated). NULL and 0 for any other cause. */
  const char *designed_call, *designed_op, *designed_copy;
  int64_t designed_bytes;
  /* Of its idle, the host portions after a sync that drained the GPU's queue before the
   * step's first kernel (an_drain); zero for none. */
  an_drain drain;
} an_idle_cause;

/* How a collective's floor was found. */
typedef enum an_floor_basis {
  AN_FLOOR_MESSAGE = 0,  /* instances of the same collective stating their message (args):
                            per byte, else by equal sizes (analysis/waits.h) */
  AN_FLOOR_POSITION = 1, /* the same collective at the same position in every step */
  AN_FLOOR_NAME = 2      /* every instance of the same collective (one step, no sizes) */
} an_floor_basis;

/* One collective kernel of a stage, split into transfer and wait per instance:
 * wait = duration - floor, the floor a low percentile (collectives.floor_pct) of the
 * instances like it (analysis/waits.h). The first collective of a step absorbs the other
 * ranks' arrival skew: its wait is also given apart. */
typedef struct an_collective_time {
  const char *kernel; /* canonical name */
  an_floor_basis basis;
  size_t instances;
  int64_t total_ns, wait_ns, first_wait_ns; /* transfer = total - wait */
  int64_t idle_wait_ns; /* of wait_ns, with no other GPU event (an_time_account's) */
  int64_t floor_ns;     /* the smallest floor of its groups */
  int64_t max_wait_ns;  /* the largest wait of one instance */
  /* The labelled launch-context family its instances share ("gradient reduce (DDP hook)",
   * "input dist": what launched them, analysis/launch_context.h; borrowed from the rules),
   * else NULL; context_rest: the launches under no labelled family of a collective that has
   * such rows too. A collective's rows are split by it as the overlap table's are, and
   * floors compare instances of one family only. */
  const char *launch_context;
  bool context_rest;
  /* Of its instances floored per byte (analysis/waits.h; basis AN_FLOOR_MESSAGE): that
   * floor's rate in GB/s and its least value (collectives.latency_us capped by the fastest
   * instance); both 0 when none is floored per byte. */
  double floor_gbps, floor_latency_us;
  /* Instances with no like instance to compare with (a group of one): their time is
   * neither transfer nor wait but unknown, so transfer = total - wait - unknown. */
  size_t alone;
  int64_t unknown_ns;
  /* Of the alone ones, those whose group held under collectives.floor_min_instances like
   * instances (two samples of one context can both be mostly wait: a floor needs more),
   * and those with neither a message size nor a position in a step to find like ones by
   * (floored by name: unlike messages may share a name); the rest had no like one at all. */
  size_t few, unsized;
  /* Of the alone ones, those whose floor a latency-bound message set (under
   * collectives.latency_bound_bytes) that itself took over collectives.latency_floor_max_ratio
   * x the fixed cost: a floor that waited measures no transfer (deviation O21). */
  size_t latency_bound;
  int64_t latency_unknown_ns; /* their time (part of unknown_ns) */
  /* The largest message of its instances in bytes; 0 when one of them states none. */
  double max_bytes;
  /* Of the alone ones, those a like message in their step (same collective, family and
   * message) took less than: wait_ns holds at least the difference, a lower bound, and
   * only the rest of their time is unknown (brief 11 defect 1). */
  size_t lower;
  /* Where floor_ns came from (0 when every instance is alone: unknown): the instance whose
   * time set it, by its step (name, 1-based number among the stage's counted steps; NULL
   * and 0 without steps) and trace (NULL when the run has one), and how many like instances
   * its group held; floor_fixed: the fixed cost collectives.latency_us set it. */
  const char *floor_step;
  size_t floor_step_no;
  const char *floor_trace;
  size_t floor_like;
  bool floor_fixed;
} an_collective_time;

/* The GPU time of a window (one step, or a stage): span = busy + idle exactly (integer
 * nanoseconds). busy is the union of kernel, memcpy and memset intervals over all streams;
 * kernel_ns their plain sum, which exceeds busy where work overlaps. */
typedef struct an_time_account {
  int64_t span_ns, busy_ns, idle_ns;
  int64_t kernel_ns;
  int64_t pdl_wait_ns;     /* same-stream overlap: a kernel started before its predecessor on its
                              stream ended waits for that part (programmatic dependent launch) */
  int64_t graph_kernel_ns; /* kernel time replayed from a CUDA/HIP graph (matcher
                              graph_replay_launch on the launch call) */
  /* Idle inside one graph replay: of each gap (of timeline.gap_min_us) between nodes of one
   * replay (one correlation id, the graph launch's, which only a replay's nodes share), the
   * time with nothing on any stream. A replay runs its nodes back to back unless one waits
   * outside the graph (a host node, an event another stream records), so much of it means
   * the trace lost nodes (review 17 defect 1: hta_multistream5 recorded a replay's memsets
   * without the GEMMs that follow them). n_graph_holes counts the gaps holding such idle,
   * graph_hole_max_ns the longest of them node to node; graph_hole_busy_ns is the time other
   * streams ran inside the gaps: a node waiting on their event is the other reading
   * (review 18 defect 7). */
  int64_t graph_hole_ns;
  size_t n_graph_holes;
  int64_t graph_hole_max_ns;
  int64_t graph_hole_busy_ns;
  int64_t collective_ns, collective_wait_ns, first_collective_wait_ns;
  /* of collective_wait_ns, the part with no other GPU event on any stream (waits.h
   * an_wait_cover): the GPU did nothing but wait; the rest ran beside other work */
  int64_t collective_idle_wait_ns;
  /* the steps' first collectives: their time, and the part of it whose wait is unknown
   * (alone): where a late rank's arrival lands, unmeasured */
  int64_t first_collective_ns, first_collective_unknown_ns;
  int64_t idle_by_kind_ns[AN_IDLE_KINDS]; /* sums to idle_ns */
  /* A counted step's host extent: from the first CPU op, launch or runtime call of a thread
   * that launches GPU work inside its marker to the last one's end, less the time those
   * threads sat in synchronising calls (matcher host_sync: waiting for GPU work, not
   * working); 0: no marker, or none. Summed like the rest. Far longer than span_ns, the
   * step waits for the host outside it. */
  int64_t host_ns;
  size_t n_kernels, n_gaps; /* n_gaps: gaps of at least timeline.gap_min_us */
  size_t n_short_gaps;      /* the gaps under it (idle kind short) */
  int64_t short_max_ns;     /* the longest of those */
  int64_t median_gap_ns, median_kernel_ns;
  an_drain drain; /* of the idle, what follows a sync that drained the queue (its causes') */
  size_t n_causes;
  const an_idle_cause *causes; /* idle_ns descending; with AN_IDLE_SHORT they sum to idle_ns */
} an_time_account;

/* The account's idle with the next work issued and waiting (on another stream, an event,
 * a graph's input, work the filter dropped, or the host awaiting a collective's result):
 * the banner's "queued" part, which the launch lead explains (an_launch_lead). */
static inline int64_t an_account_queued_ns(const an_time_account *a) {
  return a->idle_by_kind_ns[AN_IDLE_DEPENDENCY] + a->idle_by_kind_ns[AN_IDLE_EVENT_WAIT] +
         a->idle_by_kind_ns[AN_IDLE_OUTSIDE] + a->idle_by_kind_ns[AN_IDLE_FILTERED] +
         a->idle_by_kind_ns[AN_IDLE_AWAIT];
}

typedef struct an_step_account {
  const char *name;      /* the step annotation */
  double cpu_ts, gpu_ts; /* us, as in the trace */
  double cpu_end;        /* the marker's end (us): cpu_end - cpu_ts is its length */
  const char *trace;     /* the trace file it is from */
  /* Its work (us): the kernel time launched in it (an_step.launched_us) less its
   * collectives', whose time holds waits for other ranks (their doing, not its work): the
   * ranks' per-step work (an_rank_row.step_us) in one trace. */
  double work_us;
  an_time_account account; /* the step's GPU window */
} an_step_account;

/* Where a stage's longest idle gap outside the counted steps lies (an_stage_timeline). */
typedef enum an_outside_where {
  AN_OUTSIDE_BEFORE = 0, /* before the stage's first counted step */
  AN_OUTSIDE_BETWEEN = 1,
  AN_OUTSIDE_AFTER = 2 /* after its last */
} an_outside_where;

/* The time account of one stage: per counted step (warm-ups and kernels outside every
 * step left out), and their sum; without steps, the stage window (first kernel start to
 * last kernel end) as one. */
/* The host blocked in a read back (review 18 defect 8): calls to or from pageable memory
 * of at least timeline.long_gap_us in the counted steps whose own GPU copy took under
 * timeline.readback_max_copy_pct of them, so they waited for the work queued before the
 * copy on its stream; of one call under one CPU op and region, the group that blocked
 * longest. Names interned (NULL: none); n 0: none. */
typedef struct an_host_block {
  const char *call, *op, *region, *location;
  const char *copy, *stream;          /* the GPU copy's name and stream */
  int64_t bytes;                      /* the longest call's copy's (-1: not stated) */
  size_t n;                           /* calls */
  int64_t blocked_ns, min_ns, max_ns; /* the calls' host time: summed, shortest, longest */
  int64_t idle_ns;   /* GPU idle inside them with nothing on any stream, up to the launch
                        call of the kernel that ends each gap (after it, work sat queued) */
  int64_t stream_ns; /* the copy's stream's own GPU time inside them */
  int64_t queued_ns; /* from each call's start to its copy's: the stream's queue ahead of it */
  /* of the longest call: the other stream whose GPU work ended last inside the call before
   * its copy started (what the copy's stream was left waiting on; NULL: none) and how long
   * before the copy it ended (review 19: hta_multistream5's copy follows stream 7's work
   * by 0.8 ms) */
  const char *waited_on;
  int64_t waited_gap_ns;
} an_host_block;

/* How far ahead of the GPU the host issued a stage's work (blind review 19, Missing:
 * hta_multistream5's stream 7 starts its kernels a median 163 ms after their launch call):
 * of the stream that ran the most kernels in the counted steps, its kernels' launch lag
 * (kernel start less its launch call's start) over those with a launch record; ahead: the
 * median is at least timeline.launch_gap_max_us, so the host had issued the work long
 * before the GPU ran it and idle with work queued is gated on the GPU's side. stream
 * interned; n 0: none measured. */
typedef struct an_launch_lead {
  const char *stream;
  size_t n;
  int64_t median_ns, p90_ns;
  bool ahead;
  int64_t queued_ns; /* the stage's idle with work queued (an_account_queued_ns): the
                        account states the lead beside it when there is some */
} an_launch_lead;

typedef struct an_stage_timeline {
  size_t n_steps;     /* counted steps; 0: no step markers (stage window) */
  size_t n_warmup;    /* warm-up steps left out */
  int64_t outside_ns; /* kernel time of the stage outside every counted step */
  int64_t setup_ns;   /* of it, one-time setup (kernels under a warm-up annotation) */
  /* How the steps were found and checked (analysis/steps.h; the first trace's): the marker
   * kind ("step_annotation", "step_cpu_op", "gpu_annotation", "measure_annotation",
   * "iteration", "stage_annotation"; NULL without steps), how many kinds the trace had, the
   * counted steps' markers' summed length (their CPU windows), and kernels without a launch
   * record placed in a step by their GPU time. */
  const char *marker;
  size_t marker_kinds;
  int64_t marker_ns;
  /* Markers of the chosen kind nested inside a counted step's (an_step.nested): part of
   * that step, not counted apart; their number and the longest's length (the report says
   * which marker the steps are, review 12 defect 5). */
  size_t marker_nested;
  int64_t marker_nested_ns;
  /* With nested markers: the longest user annotation inside a counted step's marker but
   * outside its nested one (the harness's work around the measured one: PARAM's
   * [param|clear_cache]) and its host length; NULL and 0 when none. marker_nested_all:
   * every kernel of those steps was launched inside their nested marker, so the span is
   * its GPU work (review 15 defect 2). */
  const char *marker_other;
  int64_t marker_other_ns;
  bool marker_nested_all;
  size_t placed_by_gpu_time;
  /* Steps whose GPU windows overlapped the next one's (steps.h: cut_windows): how many ran
   * kernels past the next step's first start, and that time (the union of those kernels'
   * parts past it), counted once: as busy time of the next step, not of theirs. */
  size_t n_cut;
  int64_t cut_ns;
  /* The stage's GPU idle outside every counted step in gaps of at least
   * timeline.long_gap_us (the header's "outside the steps" idle, which no per-step bound
   * counts; brief 12 defect 1): their sum and number, and the longest: its length, where
   * it lies (before the first counted step, between steps, after the last), and what
   * spanned its middle on the host
   * (timeline_internal.h tl_host_outside): the innermost CPU op or runtime call of the
   * thread that launched the kernel ending it (else of another GPU-issuing thread), the
   * outermost CPU op around that call (NULL: none, or the call itself), its Python
   * location, its time inside the gap, whether it blocks until GPU work ends (matcher
   * host_sync, or a copy to or from pageable memory: with nothing running on the GPU, the
   * work it waited on is not in the trace, a previous batch or work before the capture) and
   * whether it is one-time setup (matcher setup_call: allocation, initialisation).
   * outside_call NULL: nothing of the host spans it. Interned strings. */
  int64_t outside_idle_ns, outside_longest_ns, outside_call_ns;
  int64_t outside_min_ns; /* the gaps' least length: timeline.long_gap_us */
  size_t outside_gaps;
  an_outside_where outside_where;
  bool outside_blocking, outside_setup;
  const char *outside_call, *outside_op, *outside_location;
  /* The counted steps' host extent is at least timeline.host_extent_min_ratio times their
   * GPU span (an_time_account.host_ns): the steps wait for the host outside the account. */
  bool host_exceeds;
  /* The counted steps' idle inside one graph replay (an_time_account.graph_hole_ns) is at
   * least timeline.graph_hole_min_pct of their span, in timeline.graph_hole_min_per_step
   * gaps a step: the trace lost graph-replayed work, so the idle beside it is unmeasured
   * (review 17 defect 1). */
  bool graph_unrecorded;
  an_host_block host_block;   /* the counted steps' longest read back (n 0: none) */
  an_launch_lead launch_lead; /* the busiest stream's launch lag (n 0: none) */
  /* How fast the host of the stage's first trace dispatches cheap CPU ops that launch
   * nothing (timeline.dispatch_reference_us: their typical time): the median over those ops
   * with timeline.dispatch_min_calls calls of their median time over the typical one
   * (dispatch_ratio, 0: not measured), how many ops it is from, and the one with the most
   * calls as evidence: its name (the rules'), calls, median and typical time (us). */
  double dispatch_ratio;
  size_t dispatch_kinds;
  const char *dispatch_op;
  size_t dispatch_op_calls;
  double dispatch_op_us, dispatch_op_ref_us;
  an_time_account total;        /* the sum over the steps (or the stage window) */
  const an_step_account *steps; /* n_steps of them, in trace then time order */
  size_t n_collectives;
  const an_collective_time *collectives; /* wait_ns descending */
} an_stage_timeline;

/* ------------------------------------------------------------------ hints */

typedef enum an_hint_code {
  AN_HINT_SKIPPED_EVENTS = 0,       /* path, count, offset of the first */
  AN_HINT_REPLACED_UTF8 = 1,        /* path, count */
  AN_HINT_SERVER_ARGS_IGNORED = 2,  /* path, detail: why */
  AN_HINT_UNKNOWN_STAGE_MARKER = 3, /* path, count, detail: the first marker no stage rule
                                       places (matcher stage_marker) */
  AN_HINT_RANK_CONFLICT = 4,        /* path, count: the rank its file name states, offset:
                                       its distributedInfo.rank (which is used) */
  AN_HINT_RANK_UNREAD = 5           /* path, count: its rank, offset: where the reader stopped,
                                       detail: why: a rank file of the directory that could not
                                       be read, left out of the Ranks section */
} an_hint_code;

typedef enum an_hint_level { AN_HINT_NOTE = 0, AN_HINT_WARNING = 1 } an_hint_level;

/* Something the run noticed that the reader of the report should know. */
typedef struct an_hint {
  an_hint_code code;
  an_hint_level level;
  const char *path;
  uint64_t count, offset;
  const char *detail;
} an_hint;

/* ------------------------------------------------------------------ summary */

/* Which table a summary item comes from (its evidence row). */
typedef enum an_summary_kind {
  AN_SUMMARY_KERNEL = 0,  /* a kernel row (its roofline, or a chain of kernels) */
  AN_SUMMARY_OVERLAP = 1, /* a headroom row of the overlap table */
  AN_SUMMARY_FUSION = 2,  /* a row of the fuse table */
  AN_SUMMARY_IDLE = 3,    /* an idle cause of the stage's time account */
  AN_SUMMARY_WAIT = 4,    /* a collective of the stage's time account */
  AN_SUMMARY_HOST = 5     /* the stage's host blocked in a read back (an_host_block) */
} an_summary_kind;
#define AN_SUMMARY_KINDS 6

/* What the item asks the reader to do. */
typedef enum an_action {
  AN_ACTION_TUNE_KERNEL = 0,      /* below its attainable rate (roofline): tune or replace it */
  AN_ACTION_TRY_OVERLAP = 1,      /* run it under another stream's work */
  AN_ACTION_TRY_FUSION = 2,       /* fold it into its named fusion partner */
  AN_ACTION_CHECK_DEPS = 3,       /* overlap looks possible; check its dependencies first */
  AN_ACTION_ENABLE_FUSION = 4,    /* a fused path exists in the framework: switch it on */
  AN_ACTION_PORT_FUSION = 5,      /* a fused path exists upstream or in flight: port it */
  AN_ACTION_ELIMINATE = 6,        /* a staging copy into a communication buffer: remove it */
  AN_ACTION_REMOVE_SYNC = 7,      /* the host waits for the GPU, then issues the next work */
  AN_ACTION_HOST_STALL = 8,       /* a named CPU activity keeps the GPU idle inside the step */
  AN_ACTION_LAUNCH_BOUND = 9,     /* kernels launched one by one faster than the host issues
                                     them: CUDA graphs / torch.compile (host-bound when the
                                     step is already a graph, or a training step) */
  AN_ACTION_RANK_SKEW = 10,       /* collective time above its floor: waiting for other ranks */
  AN_ACTION_FUSE_CHAIN = 11,      /* eager elementwise and copy chains: torch.compile / fused */
  AN_ACTION_FEWER_BYTES = 12,     /* at the bandwidth bound: move fewer bytes */
  AN_ACTION_DEPENDENCY = 13,      /* work issued before a long gap sat queued on an event, another
                                     stream or a graph's dependency: find what it waits on */
  AN_ACTION_INVESTIGATE = 14,     /* a large category nothing bounds: find what limits it */
  AN_ACTION_SLOW_COLLECTIVE = 15, /* collective time above its floor inside the step, not at
                                     its first collective (no late arrival): the collectives
                                     run slower mid-step (contention, ranks drifting apart) */
  AN_ACTION_KERNEL_LEVER = 16,    /* kernels of a family a named change removes (summary.levers,
                                     summary.kernel_levers): channels_last for layout
                                     conversions */
  AN_ACTION_MERGE_GEMMS = 17,     /* sibling GEMMs that read one input: one wider GEMM (the
                                     fusion row of a merge pattern, fuse_merge.c) */
  AN_ACTION_FOLD_GEMM = 18,       /* a kernel whose lever folds it into the GEMM before it, a
                                     GEMM of another library (roofline.levers_folding): its
                                     whole time, less any slowdown of that GEMM */
  AN_ACTION_RAISE_BATCH = 19,     /* a decode step at a small batch whose weight GEMMs are all
                                     memory-bound: a larger running batch (if latency allows) */
  AN_ACTION_FP32_MATMUL = 20,     /* FP32 matmul work on a device with tensor-core formats:
                                     TF32 for GEMMs on the CUDA cores, or autocast */
  AN_ACTION_FOLD_CAST = 21        /* kernels whose fused op list is only a dtype cast (review 20
                                     defect 9): keep the dtype, or fold the cast into the
                                     neighbour that reads or writes it */
} an_action;

/* Which part of a time-account row an item's figures take: an idle cause's gaps of at
 * least timeline.long_gap_us, or the others. */
typedef enum an_row_part { AN_PART_ALL = 0, AN_PART_LONG = 1, AN_PART_SHORT = 2 } an_row_part;

/* A row of the item's stage's time account whose figures the item sums: an idle cause
 * (idle items) or a collective (wait items), whole or in part. */
typedef struct an_item_row {
  size_t row; /* index in the account's causes or the timeline's collectives */
  an_row_part part;
} an_item_row;

/* What an item's bound rests on (docs/report.md "What to try first"). */
typedef enum an_bound_basis {
  AN_BASIS_IDLE = 0,       /* GPU idle inside the step under the named CPU activity */
  AN_BASIS_WAIT = 1,       /* collective time above its floor (arrival skew of other ranks) */
  AN_BASIS_ROOFLINE = 2,   /* (1 - achieved / attainable) x the kernel's time */
  AN_BASIS_SAVING = 3,     /* the fusion pattern's estimated saving */
  AN_BASIS_CHAIN = 4,      /* the chain's kernel time less its largest pass (the fused kernel
                              still makes one) */
  AN_BASIS_EXPOSED = 5,    /* the overlap row's recoverable time (exposed, bounded by the
                              work another stream could run) */
  AN_BASIS_ROUND_TRIP = 6, /* the memory round trip folding the kernel into its named partner
                             (a fusion pattern or the eager chain) removes (review-1 defect 3) */
  AN_BASIS_UNBOUNDED = 7,  /* no model bounds it: the category's whole time (what is unknown
                              is said; summary.investigate_min_pct) */
  AN_BASIS_REMOVED = 8,    /* kernels a lever removes (layout conversions channels_last makes
                              unneeded): their time in the step that ran with nothing else
                              on the GPU */
  AN_BASIS_FOLDED = 9,     /* kernels a lever folds into one fused kernel (a MoE layer's
                              routing pieces): their time less the largest piece, which the
                              fused kernel still spends (at most their time alone) */
  AN_BASIS_PRECISION = 10, /* 16-bit GEMM and attention rows of a serving run: what FP8
                              wins at most at their present efficiency: half the time of a
                              memory-bound row (half the bytes), 1 - 16-bit / FP8 peak of a
                              compute-bound one's */
  AN_BASIS_BLOCKED = 11,   /* the host's time in a blocking read back (basis): the GPU idle
                              inside it with nothing on any stream (bound), what issuing the
                              next work instead of waiting could win (an_host_block) */
  AN_BASIS_BATCH = 12,     /* a decode step's memory-bound weight GEMMs (review 18 defect
                              9): their time is about flat in the batch up to the compute
                              roof, so a larger batch shares it among more tokens */
  AN_BASIS_FP32 = 13,      /* FP32 matmul kernels (review 20 defects 3 and 6): their time at
                              their present efficiency at a tensor-core format's peak, down
                              to their memory and latency floors */
  AN_BASIS_CAST = 14,      /* cast kernels' time alone on the GPU, less their bytes at their
                              neighbour's rate where both are known (an_summary_item.cast_*) */
  AN_BASIS_NARROWED = 15   /* kernels a lever narrows to a smaller dtype (FP32 embedding
                              tables to FP16): their time alone on the GPU x (1 - the share
                              of bytes kept, an_summary_item.bytes_kept), memory-bound */
} an_bound_basis;

/* What keeps an investigate item's kernels unbounded (the stage's roofline counts). */
typedef enum an_unknown {
  AN_UNKNOWN_REPLAY = 0,    /* no shapes: graph-replayed launches without a mapping trace */
  AN_UNKNOWN_NO_LAUNCH = 1, /* no shapes: no launch call in the trace */
  AN_UNKNOWN_NO_OP = 2,     /* no shapes: no CPU op links to their launch */
  AN_UNKNOWN_NO_MODEL = 3,  /* their op has no cost model, or recorded no Input Dims */
  AN_UNKNOWN_DEVICE = 4     /* the GPU is not in the device pack */
} an_unknown;

/* What a lower precision changes for a precision item's rows, by the term their roofline
 * bound is (review 11 defect 9: compute-bound prefill GEMMs were told "move fewer bytes,
 * an FP8 KV cache"): the title, lever and basis name only the terms its rows have. */
enum {
  AN_PREC_COMPUTE = 1u, /* compute-bound rows: FP8 compute at the device's FP8 peak */
  AN_PREC_WEIGHTS = 2u, /* memory-bound GEMM rows: FP8 weights halve the bytes read */
  AN_PREC_KV = 4u,      /* memory-bound attention rows: an FP8 KV cache halves the reads */
  AN_PREC_DEQUANT = 8u  /* of the compute-bound rows, FP4 weights the device dequantises to
                           the 16-bit format (no FP4 peak in its pack: matcher
                           precision_dequant_kernel) */
};

/* The shape of a wait item's per-step wait across the capture (review 16 defect 1: a
 * wait that rose once is a different story from one that drifts; collectives.trend_* and
 * jump_* in the packs). */
typedef enum an_wait_shape {
  AN_SHAPE_NONE = 0,  /* too few steps, or nothing beyond step-to-step noise */
  AN_SHAPE_TREND = 1, /* a sustained rise or fall, in step order */
  AN_SHAPE_JUMP = 2,  /* one level before a step, another from it on */
  AN_SHAPE_SPREAD = 3 /* steps apart by much, in no order */
} an_wait_shape;

/* An FP32 matmul item's figures (AN_ACTION_FP32_MATMUL; review 20 defects 3 and 6): the
 * GEMMs that run FP32 on the CUDA cores (matcher fp32_simt_matmul; simt_us per step over
 * simt_n rows) and the TF32 tensor-core matmuls (matcher tf32_matmul), their share of the
 * stage's matmul time (summary.fp32_categories), the device's peaks (TFLOP/s), what TF32
 * wins on the SIMT rows (0: no TF32 peak) and what autocast to amp_dtype wins on all of them
 * (0: not offered, their share under summary.fp32_min_matmul_pct), and how many rows the
 * roofline has no bytes for (no memory floor known: their latency floor alone binds). The
 * lever that wins more leads the item (tf32_leads: TF32's); each lever's text (summary.
 * fp32_levers), NULL when the packs state none. tf32_on: the stage runs GEMMs cuBLAS issues
 * only with matmul TF32 allowed (matcher tf32_gemm; a cuDNN convolution's TF32 says nothing of
 * it, cuDNN allowing TF32 by default): the SIMT GEMMs are then the library's pick for their
 * shapes, and allowing TF32 wins nothing on them (tf32_win_us 0; blind review 23 defect 1). */
typedef struct an_fp32_lever {
  double simt_us, tf32_us, matmul_pct;
  size_t simt_n, tf32_n, no_bytes;
  double fp32_peak, tf32_peak, amp_peak;
  double tf32_win_us, amp_win_us;
  bool tf32_leads, tf32_on;
  const char *amp_dtype, *amp_lever, *tf32_lever;
} an_fp32_lever;

/* One line of "What to try first": an action with a bound per step, the basis of the
 * bound and the evidence rows. Ranked by score = summary.weights[action] * bound. */
/* What bounds a wait item's win (an_summary_item.wait_model). */
typedef enum an_wait_bound {
  AN_WAIT_BOUND_FLOOR = 0,       /* the wait above the floors (the Ranks section's loss) */
  AN_WAIT_BOUND_SENSITIVITY = 1, /* the step moves sensitivity ms per ms of wait: that x it */
  AN_WAIT_BOUND_IDLE = 2         /* too few steps, or a wait too steady, to see the step
                                    move: its part that leaves the GPU idle */
} an_wait_bound;

typedef struct an_summary_item {
  an_summary_kind kind;
  an_action action;
  const char *stage_id, *stage_label; /* the evidence row's stage */
  size_t row;                         /* index of the evidence row in its table's rows */
  size_t n_kernels;                   /* canonical kernel names (keys, not display names) */
  const char *const *kernels;
  const char *location;           /* Python location "path:line func", NULL: unresolved or none */
  an_location_kind location_kind; /* a graph replay's when every shown kernel site with
                                     that location is one (kernel, fusion, overlap items) */
  double at_stake_us;             /* the bound: at most this much GPU time per step */
  double share_pct;               /* at_stake_us / step_us * 100 */
  double score;                   /* the ranking key */
  char anchor[64]; /* id of the evidence row ("kernel-decode-3", "idle-decode-0"): the
                      same in Markdown and HTML; stable for a given report */
  an_bound_basis basis;
  double basis_us;     /* per step, the time the basis names (at_stake_us <= basis_us) */
  double basis_pct;    /* roofline: achieved % of attainable; chain: kernels merged */
  double basis_pct_lo; /* a roofline item of several kernels (count of them): the lowest
                          achieved % (basis_pct the highest); the item's what is their
                          op family */
  const char *what;    /* the CPU activity, collective or pattern named; NULL when none */
  double step_us;      /* the stage's mean step (its window when it has no steps) */
  size_t n_steps;      /* counted steps of the stage (0: the window counts as one) */
  size_t count;        /* gaps, instances or launches behind the bound */
  double detail_us;    /* idle: longest gap; wait: the floor; launch: median gap; chain:
                          the part of its time that ran with nothing else on the GPU;
                          overlap (exposed basis): the kernel's own time per step */
  double least_gap_us; /* dependency items: the shortest gap counted (timeline.long_gap_us) */
  /* Parts of the bound's time per step, each of one kind of item (0 on the others; the
   * JSON report's first_us is the one of the item's basis, an_summary_item_part_us): */
  double first_wait_us; /* wait: of it, the first collective of each step (arrival skew) */
  double opaque_us;     /* chain: its kernels' time launched under ops a compiler cannot fuse
                           through (opaque_ops.h), left out of basis_us */
  double largest_us;    /* folding lever (basis folded): its largest piece's time, which
                           one fused kernel still spends; chain: each run's longest
                           launch, summed (an_chain_runs) */
  size_t runs;          /* chain: the runs of back-to-back links per step (rounded) */
  size_t n_frames;      /* chain: the Python locations its time sits at, largest first */
  const char *frames[AN_ITEM_FRAMES]; /* (borrowed from the sites), and each one's share of */
  double frame_pct[AN_ITEM_FRAMES];   /* the chain's time with a Python frame; the item's
                                         location is the first */
  /* Only time with nothing else on the GPU shortens the step when kernels go (blind review
   * 20 defect 2). Folding lever: of largest_us, that part, which stays (the bound is
   * detail_us less it). Chain: runs_us less largest_us (at most basis_us), what folding
   * removes wherever it ran; the bound counts it at the share detail_us of basis_us. */
  double largest_alone_us;
  double chain_fold_us;
  double runs_us;         /* chain: their time per step (the rest ran alone between other
                             kernels: nothing to fold it into) */
  bool eager;             /* launch-bound: the stage's kernels are launched one by one */
  bool host_bound;        /* launch-bound: the stage's time account says the step waits on
                             the host (sm_stage.host_bound); else its gaps are launch spacing
                             beside the work that sets the step, and the item says so */
  bool host_filtered;     /* idle items of a stage whose trace is filtered to GPU work: the
                             host work it dropped may add gaps, so the idle the item names
                             is a lower bound of what its activity stalls (the Limits) */
  an_idle_kind idle_kind; /* idle items: the kind of the cause (a host stall inside the
                             launch call itself is AN_IDLE_LAUNCH) */
  /* alloc items: the thread released the allocator's blocks (matcher allocator_release:
   * an explicit cache clear such as torch.cuda.empty_cache()) before these allocations
   * (the cause's child), so the step allocates again what the clear gave back: the clear's
   * place, not an allocator setting, is the lever (blind review 19 defect 11). */
  bool alloc_after_release;
  size_t n_more; /* other evidence rows: merged into this item (same root cause), or the
                    time-account rows an overlap item quotes its own time from */
  char more[AN_ITEM_MORE][64];            /* their anchors */
  size_t more_left;                       /* rows past AN_ITEM_MORE: merged, not linked
                                             (the line counts them) */
  const struct an_rank_group *rank_group; /* wait items of a directory run: the Ranks
                                             section's group of the tables' rank in the
                                             stage (who it waits for); NULL: none */
  bool rank_group_partial;                /* that group is every rank read, but the run has more
                                             (world size): the rank waited for may be one not read */
  bool rank_unconfirmed;                  /* its cause is work imbalance, read from a partial
                                             group or from filtered (sampled) traces: to be
                                             confirmed on every rank, unfiltered, before the
                                             sharding plan changes */
  /* wait items: of the Ranks section's imbalance rows where the straggler runs a kernel
   * longest, the one with the most excess (NULL: none), how many such rows, and their
   * max - min summed (over the stage) */
  const struct an_imbalance_row *imbalance;
  size_t n_imbalance;
  double imbalance_excess_us;
  /* A fusion of a chain: its pieces by role (the fuse row's roles, borrowed); a renderer
   * names the pieces by role, the kernels stay the item's identity. 0: none. */
  size_t n_roles;
  const char *const *roles;
  const an_roofline *roofline; /* roofline items: the evidence row's record (borrowed from
                                  the stage's rooflines), else NULL */
  an_unknown unknown;          /* investigate items: what keeps them unbounded */
  an_fusion_partner partner;   /* fusion items of an overlap row: what it folds into (the
                                  eager chain has no what: the report names it) */
  /* Idle and wait items: the time-account rows their count and figures are the sum of
   * (the basis; a wait item's bound is at most their wait). No two items of a stage
   * take the same part of a row. 0: the item's kernels are its rows. */
  size_t n_rows;
  const an_item_row *rows;
  const struct an_stage_timeline *timeline; /* idle and wait items: the account the rows
                                               index (borrowed) */
  /* Idle items: the lever the packs name (summary.levers) for the operation lever_op (the
   * longest operation inside a stall, or the activity named); kernel-lever items: the
   * lever of their family (lever_op its id). Borrowed; NULL: none. */
  const char *lever, *lever_op;
  /* Kernel-lever items whose change does not remove their kernels: the action the packs
   * state for the lever (summary.lever_titles; NULL: none, borrowed) and, for a narrowing
   * lever (basis narrowed), the share of the kernels' bytes it keeps. */
  const char *lever_title;
  double bytes_kept;
  /* Host-stall items: the lever is the packs' text for a framework's designed wait
   * (summary.levers designed_sync) that this host work came after, lever_op its frame
   * (an_idle_cause.designed): set where the item is built, so it holds after merges. */
  bool lever_designed;
  /* A read-back item (review 22 defect 6): the idle after a framework's designed blocking
   * read back, its own line, never pooled; the cause whose designed_* fields name the call,
   * its op, copy and bytes (borrowed; NULL for any other item). */
  const an_idle_cause *readback;
  /* Launch-bound items with a lever: of at_stake_us, the idle per step under the lever's
   * activity (the rows whose cause is lever_op, each by the part the item takes). */
  double lever_op_us;
  /* A queued-work item whose lever is its likely holder (an input-distribution stage its
   * blocking call lies in, lever_op): the places to look after it (summary.levers
   * queued_outside). Borrowed; NULL: none. */
  const char *lever_next;
  /* An overlap item of a host copy already on a stream of its own whose rate is under
   * overlap.copy_lane.host_link_min_fraction of one direction of the host link
   * (an_overlap_row.copy_slow; review 20 defect 1: hta_async's pinned input copies are
   * prefetched already, 74 % hidden, and move 8.4 GB/s): the action is the copy's rate, not
   * a side stream. copy_gbs: its rate; copy_target_gbs: that share of the link (the bar, under what
   * pinned copies reach); copy_pageable: from or to pageable memory. 0: not such an item. */
  double copy_gbs, copy_target_gbs;
  double copy_at_bar_us; /* its time per step at copy_target_gbs */
  bool copy_pageable;
  /* An overlap item of a wait row's measured transfer (an_overlap_row.transfer_bound_ms;
   * review 22 defect 9: hta_async's pooled embedding exchange, exposed with no compute
   * beside it): the compute beside it left by the rows above, per step (what a pipeline
   * could run it under, which bounds it); 0: not such an item. Its lever is the row's
   * transfer_lever. */
  double transfer_compute_us;
  /* Roofline tuning items: the launches of their kernels below the device's latency floor
   * (an_roofline.latency_floor_us), whose bound counts only their time above it. */
  size_t floored_launches;
  /* Roofline tuning items: their kernels' time at their attainable rates and, of it, the
   * floors' part (an_roofline.at_time_us, floor_time_us): with the launch ramp, the share
   * of that time no tuning can take (docs/roofline.md "Latency floor"). */
  double at_time_us, floor_time_us;
  /* Roofline tuning items: what their kernels win at the device pack's attainable rate,
   * when some are measured against their family's lower best observed rate (the bound):
   * the ceiling the basis states; 0: the same as the bound. */
  double ceiling_us;
  /* Of those kernels, how many the bound takes only to their family's best observed rate
   * (ceiling_from: the fastest of those rates) where the ceiling takes them to the device
   * pack's (ceiling_to), in the limiter's unit: what differs between the two figures
   * (review 15 defect 3: "each reaching its attainable rate" and "at the device pack's
   * attainable rate" read as one bound with two numbers). */
  size_t ceiling_count;
  double ceiling_from, ceiling_to;
  /* Roofline tuning items: one shape of their kernels running under
   * roofline.outlier_below_pct of the rate its sibling shapes reach (review 18 defect 4:
   * SGLang prefill's gate_up GEMM at 457 TFLOP/s beside down, QKV and o_proj at 543-629):
   * the shape, its kernel row, its rate, its siblings' rate (their work over their time) and
   * range, and what tuning that one shape to their rate wins per step (outlier_top_us: to the
   * fastest sibling's). outlier NULL: none, or outlier_kernel: the unit is the whole kernel
   * row, which has no shapes (review 19 defect 7: a graph replay's launches costed from the
   * model's dimensions), of outlier_launches launches; outlier_sibs: its siblings. Rates
   * are past the launches' latency floors under roofline.launch_ramp. */
  const an_roofline_shape *outlier;
  bool outlier_kernel;
  size_t outlier_launches, outlier_sibs;
  size_t outlier_row;
  double outlier_rate, outlier_sib_rate, outlier_sib_lo, outlier_sib_hi;
  double outlier_us, outlier_top_us;
  /* Roofline tuning items: the time per step of their kernels that an acting GEMM merge
   * item holds (its siblings' launches), left out of basis_us: the merge's bound counts it,
   * with the merged GEMM at the best rate of its format (summary_roofline.c). */
  double merged_us;
  /* Fold items (AN_ACTION_FOLD_GEMM; review 18 defect 5): the GEMM row the kernel folds into
   * (index + 1 in the stage's kernel rows; 0: the trace's shapes name none), its time per
   * step and the shape (its op's Input Dims, borrowed) that holds the kernel's input. */
  size_t fold_row;
  double fold_us;
  const char *fold_dims;
  /* Review 19 defect 4 (SGLang prefill's act_and_mul fold beside the tuning of the same
   * gate_up GEMM, read as additive): fold_tuned_us, that GEMM's time per step once a tuning
   * item of it wins its bound (0: no tuning item names it), the fold's break-even taken
   * against it; fold_anchor, that tuning item's evidence row (empty: none), fold_after its
   * number once the items are ranked (0: not listed), a fold item ranked after it.
   * fold_then: a tuning item of a folding kernel under the tuning bar (a better kernel first,
   * roofline.levers_unfolded; its lever), the fold following it with fold_lever, for at most
   * fold_more_us more (the time the tuned kernel still takes); a fold item's fold_more_us is
   * its bound; fold_breakeven_pct, fold_more_us over the tuned GEMM's time (else its present
   * time) in percent: the slowdown of that GEMM at which the fold stops paying. */
  double fold_tuned_us, fold_more_us, fold_breakeven_pct;
  char fold_anchor[64];
  size_t fold_after;
  bool fold_then;
  const char *fold_lever;
  /* Batch items (AN_ACTION_RAISE_BATCH; review 18 defect 9): the tokens of a step (the
   * model plan's, from the logits op's rows), the factor the bound raises the batch by
   * (summary.batch_step, at most the ridge) and the ridge: how many times the batch the
   * GEMMs' FLOP term reaches their byte term (their time stays about flat until then). */
  size_t batch_tokens;
  double batch_factor, batch_ridge;
  /* Cast items (AN_ACTION_FOLD_CAST; review 20 defect 9): their launches a step and the
   * model's layers (0: no model), the kernel that most often runs right after one on its
   * stream and right before (an_chain_runs.cast_*; NULL: none), their rows and the share of
   * the launches each neighbours, and what a fused cast still costs a step: the casts' bytes at the
   * next kernel's rate (0: no bytes or no rate, the bound is their whole time). */
  double cast_per_step;
  long cast_layers;
  const char *cast_next, *cast_prev;
  size_t cast_next_row, cast_prev_row; /* their kernel rows + 1; 0: none */
  double cast_next_pct, cast_prev_pct;
  double cast_fused_us;
  const char *cast_hint; /* summary.cast_hints' text for the next kernel (NULL: none) */
  /* Batch items (review 19 defect 9): the step's memory floor, what its weight GEMMs and its
   * attention (the KV cache, where the roofline has its bytes) must read a step, at the
   * device's HBM peak (floor_hbm_tbs): their bytes per step, the floor (us per step) and
   * each group's time per step above its own part of it. floor_us 0: no device. */
  double floor_gemm_bytes, floor_attn_bytes, floor_hbm_tbs, floor_us;
  double floor_gemm_above_us, floor_attn_above_us;
  /* FP32 matmul items (AN_ACTION_FP32_MATMUL; review 20 defects 3 and 6) */
  an_fp32_lever fp32;
  /* Fusion items: their row's since (an_fuse_row.since_*; review 18 defect 10), the
   * release the path's switch needs, and that switch (review 19 defect 12: a path a release
   * has is an upgrade and a setting, not a port); NULL: not stated. since_cap_tokens: the
   * row's token cap (an_fuse_row.cap_tokens): the path fuses only steps up to it, 0: none. */
  const char *since_framework, *since_version, *since_change, *since_switch;
  long since_cap_tokens;
  /* The run executed torch.compile'd code (an_provenance.compiled): the texts that would
   * propose torch.compile (launch-bound, the eager chains) propose what is left instead. */
  bool compiled_run;
  /* Overlap items of a collective split by launch context: the row holds the launches under
   * no labelled family ("other launches"), a root cause apart from each family's row. */
  bool context_rest;
  /* Wait items: the bound is the loss the Ranks section measured for one rank of the
   * group (not the wait above this rank's floors), so the basis leads with it. */
  bool rank_measured;
  /* Wait items of a work-imbalance straggler: the bound is its excess over an even share
   * (an_rank_group.balanced_excess_per_step_us), which binds below the loss (false: the
   * loss binds, or no imbalance) */
  bool rank_balanced;
  /* that even share (ms/step) and the ranks it spreads over: the group's, or the run's
   * (world_size) when ranks of the run are unread (rank_group_partial) */
  double rank_even_us;
  size_t rank_even_of;
  /* wait items: the steps' first collectives whose wait is unknown, per step (where a late
   * rank's arrival lands, unmeasured: an_wait_story) */
  double first_unknown_us;
  /* Tuning items whose kernels FP8 also speeds up (16-bit GEMM and attention rows of a
   * serving run): one item per kernel set (issue 28, audit 12 gap 1: the precision and
   * tuning items named the same kernels), the FP8 lever its alternative with its own bound
   * (alt_us, 0: none), the time it names (alt_basis_us, of it alt_mem_us memory-bound) over
   * alt_count rows, and what both win together at most per step (together_us), from one
   * per-kernel model (summary_roofline.c). */
  double alt_us, alt_basis_us, alt_mem_us;
  size_t alt_count;
  double together_us;
  /* Idle items: the stage's collective wait above the floors mid-step folded in, per step
   * (deviation O26: on a stage idle for the host or queued work most of the step the ranks
   * reach the collectives at different times; the same fix), 0: none. Its time-account
   * rows are among more[]. */
  double folded_wait_us;
  /* The re-profile item of a trace filtered or sampled to GPU work (idle kind filtered): of
   * its bound, the host stalls whose host work the filter dropped (an_stage_report
   * unseen_host_us), besides the queued work nothing kept holds (review 14 defect 4). */
  double dropped_host_us;
  /* Idle items: of their gaps, those after a sync that drained the GPU's queue before the
   * step's first kernel (an_drain; a row's part counts at most its own),
   * per step, how many, and that sync (the deepest queue's: its op, its Python frame, the
   * queue it drained in us); 0 / NULL: none (review 16 defect 3). */
  double drained_us, drain_queue_us;
  size_t drained_gaps;
  const char *drain_what, *drain_location;
  bool ranks_unread;         /* the re-profile item: the run has ranks no trace read was of */
  an_platform port_platform; /* a fusion item whose row's path does not serve the run's
                                platform (origin port): the platform to port it to */
  /* The re-capture item of a stage whose trace lost graph-replayed work
   * (an_stage_timeline.graph_unrecorded; review 17 defect 1): its queued-work idle is
   * unmeasured, so it has no bound (basis unbounded, basis_us that idle per step) and comes
   * first; count and detail_us are its rows' gaps and the longest, graph_hole_us the idle
   * inside the replays per step (their holes: the stage timeline's total). */
  /* The host-block item (kind AN_SUMMARY_HOST; review 18 defect 8): the stage's
   * an_stage_timeline.host_block. NULL otherwise. */
  const an_host_block *host_block;
  /* The host-overhead lead (review 21 defect 10): a stage whose host work spans more than
   * its GPU span (an_stage_timeline.host_exceeds) when no item clears the bar; bound the
   * host span above the GPU span per step (basis idle, basis_us the host span), share of
   * the host span. */
  bool host_overhead;
  bool graph_unrecorded;
  double graph_hole_us;
  /* A launch-bound item of a stage whose host dispatches cheap ops at least
   * summary.dispatch_slow_ratio times slower than typical (an_stage_timeline
   * dispatch_ratio, its evidence there): that ratio, the item leads with it; 0: not slow
   * or not measured (review 17 defect 8). */
  double dispatch_ratio;
  /* A wait item's per-step wait across the capture, judged by its shape (an_wait_shape,
   * collectives.trend_* and jump_*): of the wait at the steps' first collective
   * (trend_at_first), else of their whole collective wait, over trend_steps steps of the
   * stage's first trace (review 14 defect 5: the mean hid a wait growing 0 -> 9.5 ms;
   * review 16 defect 1: that growth was one jump, not a drift). trend: 1 rising, -1
   * falling, 0 neither (spread, or no shape). trend_from_us / trend_to_us: a trend's first
   * and last step's, a jump's two levels' means, a spread's least and most. shape_step: a
   * jump's first step of the later level, a spread's step of the most (0-based);
   * level_lo_us / level_hi_us: a jump's range inside each level, [0] before, [1] after. */
  an_wait_shape shape;
  int trend;
  bool trend_at_first;
  double trend_from_us, trend_to_us;
  size_t trend_steps, shape_step;
  double level_lo_us[2], level_hi_us[2];
  /* A wait item's bound (review 18 defect 6: hta_async's first collective waits ~8 ms more
   * from one step on while the step grows 0-4 ms: removing a wait wins what the step moves
   * with it, not the wait). wait_above_us: its rows' wait above their floors per step;
   * wait_model: what bounds the item by it (an_wait_bound); sensitivity: the least-squares
   * slope of the step's span on its collective wait across the sens_steps steps of the
   * stage's first trace (ms per ms; 0 when not read: too few steps, or a wait too steady),
   * whose wait and span range over sens_wait_us[0..1] and sens_step_us[0..1]; idle_wait_us:
   * of the wait above the floors, the part with no other GPU event on any stream, per step. */
  double wait_above_us;
  an_wait_bound wait_model;
  double sensitivity;
  size_t sens_steps;
  double sens_wait_us[2], sens_step_us[2];
  double idle_wait_us;
  /* The stage's first trace holds fewer steps than collectives.sensitivity_min_steps: too
   * few to read how the step moves with the wait, so the action asks for more steps on
   * every rank before the straggler (review 19: param_dlrm's one step). */
  bool few_steps;
  /* Precision items and a tuning item's FP8 alternative: the AN_PREC_* terms of their rows;
   * of the compute-bound rows, their FLOP rate as a share of their format's dense peak
   * (time-weighted), that peak and the device's FP8 peak (TFLOP/s; 0: no compute-bound
   * row). */
  unsigned prec_terms;
  double prec_peak_pct, prec_peak_tflops, prec_fp8_tflops;
  /* A pooled item (summary.pool_below_pct: small items of one stage and one root cause, such
   * as host stalls between GPU work or a framework's fusion passes): its members, best
   * first, whose bounds, bases, counts, kernels, rows and evidence it sums (owned by the
   * summary data); 0: not pooled. */
  size_t n_pool;
  const struct an_summary_item *pool;
  /* On the "Smaller leads" line, not numbered: under summary.lead_below_pct of the step
   * with a hedged lever (no lever named for a host stall, a summary.hedged_levers one). */
  bool lead;
  /* Of the items of another action merged in (same root cause: the same kernels), the one
   * with the largest bound: its anchor and bound. Its bound counts the same time as this
   * item's, so the two are not additive (review 14: sglang prefill's QK-norm tuning item
   * and F1's fusion of that kernel read as two wins). Empty anchor: none. */
  char not_additive[64];
  double not_additive_us;
  /* The merged item counts other launches of the same kernels (a GEMM merge and the tuning
   * of the launches it leaves): its bound adds to this item's, and its lever (borrowed;
   * NULL: none) is named, since it has no item of its own. */
  bool not_additive_adds;
  const char *not_additive_lever;
  an_action not_additive_action; /* its action: the text names it (review 16 defect 6: "the
                                    action of K9" named an action the report lists nowhere) */
  an_platform not_additive_port; /* that item's port_platform (a port to this platform) */
  bool not_additive_upgrade;     /* that item is an upgrade and a switch (an_summary_upgrade) */
  /* A pooled item of the items of one stage whose actions share a change
   * (summary.shared_changes; pool members are in pool): the change (borrowed from the
   * rules); NULL: none (review 15 defect 4: one change is one item). */
  const char *same_change;
} an_summary_item;

/* When the GPU idles most of a step waiting for the host, for queued work's dependencies or
 * for other ranks (every idle kind of the time account that stalls the step), GPU-side
 * items cannot shorten the step before that is fixed: the list leaves them out and says
 * so (summary.bottleneck_idle_pct). */
typedef struct an_bottleneck {
  const char *stage_label; /* NULL: no bottleneck */
  double idle_pct;         /* host-side idle share of the step (sync, host, launch) */
  double all_idle_pct;     /* the time account's whole idle share of the step (setup,
                              dependency and short gaps too): the banner states both */
  double queued_pct;       /* the idle share with the next work issued and waiting
                              (dependency, event wait) or with the host awaiting a
                              collective's result (await): the gate counts it with idle_pct,
                              and the banner names it */
  double wait_pct;         /* collective wait share of the step */
  an_launch_lead lead;     /* the stage's launch lead: when ahead, the banner says the queued
                              part is gated on the GPU's side (review 19, Missing) */
  size_t dropped;          /* GPU-side items left out */
  bool launch_bound;       /* most host-side idle is launch spacing: items that launch fewer
                              kernels (fusion rows, fused chains) are kept */
  bool alloc_bound;        /* most host-side idle is the allocator inside the counted steps
                              (alloc): the step times allocation, not its kernels */
  /* the largest kernel-lever item left out (a named change that removes kernels: the
   * banner still names it, review 5 defect 4): its lever id and text (rules), its GPU time
   * per step and the part with nothing else on the GPU; lever_id NULL: none */
  const char *lever_id, *lever;
  double lever_us, lever_alone_us;
  /* the FP32 matmul item left out (review 20 defect 6: hta_ddp's FP32/TF32 CNN behind its
   * host-bound step): the banner names it as what follows the host fix, with its bound and
   * lever (fp32_us 0: none) */
  an_fp32_lever fp32;
  double fp32_us;
  const char *fp32_lever;
} an_bottleneck;

/* Time of one kernel category in one stage (the per-stage time line). */
typedef struct an_category_time {
  const char *category; /* kernel classifier category, from the rules */
  double total_us;
  double share_pct; /* of the stage's kernel-time sum */
  size_t kernels;   /* distinct kernels (rows) of the category */
  double steps_us;  /* of total_us, inside the counted steps (its rows' steps_us; total_us
                       without steps): one-time uploads and warm-ups are outside */
} an_category_time;

/* Where the trace limits what the report can say (the report words each as a hint). */
typedef struct an_trace_limits {
  bool no_python_stacks;          /* no kernel resolved to a Python location: recorded without
                                     with_stack=True (or without Python frames at all) */
  bool framework_defaulted;       /* nothing detected the framework: the packs' default */
  long ranks_analysed;            /* formal traces read; with a Ranks section, the most
                                     ranks one of its stages compares */
  long ranks_expected;            /* the TP size (server args, trace metadata); with a Ranks
                                     section the run's world size; else 0: unknown */
  bool ranks_compared;            /* a Ranks section compared the ranks of a directory */
  long world_size;                /* the largest distributedInfo.world_size read, 0: none */
  const char *short_window_stage; /* label of the first stage whose counted steps' GPU span
                                     (summed; without steps its window's) is under
                                     report.short_window_ms, NULL if none */
  double short_window_us;         /* that span */
  size_t short_window_steps;      /* its counted steps (0: no step markers, the window) */
  /* The first stage whose longest idle gap outside the counted steps a GPU-issuing thread
   * spent most of in a blocking call (an_stage_timeline outside_blocking: a wait for work
   * the trace does not hold, a previous batch): its label and time account (borrowed), for
   * a Limits line that says what it is and that no per-step bound counts it (review 22
   * defect 6: SGLang decode's 463 ms hipMemcpyWithStream before its step sat in the header
   * only). NULL: none. */
  const char *outside_wait_stage;
  const struct an_stage_timeline *outside_wait;
  size_t partial_site_rows; /* shown kernel rows whose location covers under
                               site_min_coverage of their launches (issue 31) */
  double site_min_coverage; /* kernel_table.site_min_coverage */
  /* The formal traces were filtered to GPU work (analysis/trace_filter.h): every one of
   * their filtered_calls runtime calls launched GPU work and nearly all their
   * filtered_ops CPU ops hold one; host work that launched nothing was dropped. */
  bool filtered;
  size_t filtered_calls, filtered_ops, filtered_holding_ops; /* the last: ops that hold one */
  /* Of a filtered trace's stages, the one whose GPU idle with its next work issued and
   * waiting (dependency, event wait: no item bounds it there, it may be kernels a sampler
   * dropped) is the largest share of its span, that idle per step and the share; NULL
   * when that share is under report.filtered_queued_min_pct. */
  const char *filtered_queued_stage, *filtered_queued_stage_id; /* its label and id */
  double filtered_queued_us, filtered_queued_pct;
  /* that stage's re-profile item (a dependency item of filtered idle), by its 1-based
   * number in What to try first; 0: none (an_summary_build sets it) */
  size_t filtered_queued_item;
  /* A directory run checks every rank it read, not only the tables' (an_rank_row.filtered):
   * of its ranks_read distinct ranks, filtered_ranks are filtered. */
  size_t ranks_read, filtered_ranks;
  /* Who the tables' trace (the first formal one) is: its distributedInfo.rank (-1: not
   * stated), its host_name (NULL: none) and the GPU its chosen kernels ran on (Kineto
   * writes a kernel's device index as its pid; -1: not a device index). A diff of two
   * runs says when these differ (a rank is not another run). */
  long trace_rank;
  const char *trace_host;
  long trace_device;
} an_trace_limits;

/* ------------------------------------------------------------------ execution facts */

/* How a stage's kernels ran, as its trace shows it (issue 31; fusion gates read it).
 * modes: te_exec_mode bits seen (eager launches, graph replays, compiled kernels); 0 =
 * unknown (no launch event). tokens: the least and most tokens of one step, from the
 * stage's step annotations (fuse.token_count_keys); 0 = unknown. */
typedef struct an_exec_facts {
  unsigned modes;
  long tokens_min, tokens_max;
  size_t steps_with_tokens;
  /* attention work the step annotations state (roofline.attention_phase_keys: vLLM's
   * execute_..._context_N(sq..sk..sqsq..sqsk..)_generation_N(...)), summed over the
   * stage's steps that state every sum: query tokens, KV tokens read, and causal
   * (query, key) score pairs sum over sequences of sq*sk - sq*(sq-1)/2; and the phases'
   * sequences (the N after each phase key), which bound a sliding window's reads; and the
   * unmasked pairs sum(sq*sk), whose mean per query token is the KV length a query row sees
   * (the shape of its attention ceiling) and whose causal cut shows the masking */
  double attn_q_tokens, attn_kv_tokens, attn_pairs, attn_seqs, attn_qk;
  size_t steps_with_attn;
} an_exec_facts;

/* ------------------------------------------------------------------ the report */

/* One stage, in render order. */
/* A stage's eager elementwise and copy chains as they ran (analysis/chain_runs.h): runs of
 * two or more chain links launched back to back on one stream inside the counted steps
 * (another kernel, a GEMM or attention, ends a run). Totals over the counted steps. */
typedef struct an_chain_runs {
  size_t runs, launches;
  double time_us;    /* their launches' time */
  double largest_us; /* each run's longest launch, summed: what one fused kernel a run
                        still spends (about one pass) */
  /* Cast launches (matcher cast_kernel: a kernel whose fused op list is only a dtype cast)
   * inside the counted steps, and the kernel that most often runs right after one on its
   * stream and right before (canonical names; NULL: none), with how many launches each
   * neighbours (review 20 defect 9: the neighbour that could absorb the cast). */
  size_t cast_launches;
  const char *cast_next, *cast_prev;
  size_t cast_next_n, cast_prev_n;
} an_chain_runs;

/* How near their attainable rate a stage's GEMMs run (review 22 defect 8: tracelens' GEMMs,
 * 64% of its kernel time at 37-45% of the bf16 peak, 76-90% of the device pack's attainable
 * rate, read as a tuning lever only in a merge item's sub-clause): the summary says so apart
 * from its items, so a reader does not go tuning them. Matmul time is the kernel rows of
 * summary.gemm_rate_categories. A row's rate is against the device pack's attainable one
 * (never a lower rate the trace's own rows reach: near the best of a slow family is not near
 * what the part does), as the share of its time it would keep there (its launches at that
 * rate, latency floor included, over their time); at summary.gemm_near_pct or more it is
 * near. A GEMM on the CUDA cores is the FP32 item's, never near; a row without a roofline or
 * a device rate is not known to be. Set by the summary (summary_roofline.c sm_gemm_rate). */
typedef struct an_gemm_rate {
  bool near;             /* the line is said: matmul_pct >= summary.gemm_near_min_pct and
                            near_pct >= summary.gemm_near_share_pct */
  double matmul_pct;     /* matmul time over the stage's kernel time; 0: no matmul row with a
                            roofline at a device rate (the JSON's null) */
  double near_pct;       /* the near rows' time over the matmul time */
  size_t rows;           /* near rows */
  double lo_pct, hi_pct; /* the near rows' rate: the share of their time they keep
                            at the attainable rate */
  double peak_lo_pct, peak_hi_pct; /* their achieved_pct: of the format's dense peak
                                      (compute-bound) or the HBM peak (memory-bound) */
  bool memory, compute;            /* the near rows' limiters (both: mixed) */
  const char *dtype;               /* the near rows' format when one (from the rules), else NULL */
  double tune_us; /* per step: what tuning every matmul row with a device rate to it wins (its
                     headroom there, a tuning item's ceiling) */
  double step_us; /* the stage's mean step (the window without steps) */
  size_t n_steps; /* its counted steps; 0: the window is the step */
} an_gemm_rate;

typedef struct an_stage_report {
  const char *id, *label; /* from the rules */
  int order;
  /* kernel and fuse tables: the formal traces' kernels of this stage */
  bool has_kernels;
  double kernel_total_us; /* share denominator */
  size_t n_kernels, n_kernels_shown;
  const an_kernel_row *kernels; /* total_us descending */
  bool xpu_launch_rows;         /* a shown row is an XPU runtime launch (no device timeline) */
  size_t n_fuse, n_fuse_shown;
  const an_fuse_row *fuse;
  /* overlap table block; NULL when the overlap analysis has none for this stage */
  const an_overlap_stage *overlap;
  double gpu_busy_us, gpu_idle_us; /* from the overlap sweep (0 without a block) */
  an_wait_story wait_story;        /* where its collective wait sits (set by the summary) */
  an_exec_facts exec;              /* execution mode and tokens per step (fusion gates) */
  an_chain_runs chain;             /* its eager chains as runs of launches */
  size_t n_categories;             /* time by kernel category, total_us descending */
  const an_category_time *categories;
  const an_stage_timeline *timeline; /* the stage's time account; NULL when none */
  /* Host stalls the summary makes no item of because the launching thread recorded no CPU
   * activity in their gaps (no lever can be named; the Limits say what to capture): per
   * step, their gaps and the longest. */
  double unseen_host_us;
  size_t unseen_host_gaps;
  double unseen_host_max_us;
  /* GPU time of kernels launched inside the CPU op that launches a graph (its input and
   * output copies: analysis/graph_staging.h), per kernel name: an_graph_staging_us; NULL
   * when the run launched no graph */
  const struct an_graph_staging *graph_staging;
  bool host_filtered; /* the trace is filtered to GPU work (an_trace_limits.filtered): that
                         unseen host time is host work the filter dropped */
  /* roofline records of the kernel rows that have one (an_kernel_row.roofline), and the
   * stage's launches counted by whether they have shapes (docs/roofline.md) */
  size_t n_rooflines;
  const an_roofline *rooflines;
  an_roofline_counts roofline_counts;
  an_gemm_rate gemm_rate; /* set by the summary */
} an_stage_report;

/* The roofline record of row r of stage s, or NULL when it has none. */
/* The launches of a row's kernel-map entry its shown sites cover (*covered) of all the
 * entry's (*of: the map's launches of the kernel, a sample when the mapping pass was
 * sampled, the mapping trace's in a two-trace run). 0 of 0 without an entry. */
static inline void an_row_site_coverage(const an_kernel_row *r, size_t *covered, size_t *of) {
  *covered = 0;
  *of = r->entry ? r->entry->launches : 0;
  for (size_t i = 0; i < r->n_shown_sites; i++) *covered += r->shown_sites[i]->launches;
}

static inline const an_roofline *an_row_roofline(const an_stage_report *s, const an_kernel_row *r) {
  return r->roofline && r->roofline <= s->n_rooflines ? &s->rooflines[r->roofline - 1] : NULL;
}

/* ------------------------------------------------------------------ ranks */

/* One rank of a multi-rank run in one stage (issue 12, issue 30). Times are over the
 * rank's kernels of that stage (its chosen process; the stage from its own step markers
 * or its path). busy = compute + communication + memory: where kernels of several classes
 * overlap, compute counts first, then communication, so communication_us is the exposed
 * part (collective time not hidden under compute). */
typedef struct an_rank_row {
  long rank;
  const char *path;
  const char *host;        /* its trace's host_name (the node), NULL when none; not in the JSON
                              (the topology gate reads it; merge has no trace to read it from) */
  bool filtered;           /* its trace was filtered or sampled down to GPU work
                              (analysis/trace_filter.h); false when rebuilt from rank data */
  size_t gpus;             /* GPUs (processes carrying kernels) its trace holds: more than one
                              is a file of several ranks (a node's merged), of which this row
                              reads the one with the most kernel time */
  double busy_us, idle_us; /* idle: first kernel start to last end, minus busy */
  size_t n_steps;          /* its counted steps in the stage (0: none): DP replicas run their
                              own, so the row totals of ranks with other counts differ by it */
  const double *step_us;   /* [n_steps]: each counted step's work (its kernels' time less
                              its collectives', which hold the waits for other ranks), in
                              step order: the spread across one rank's steps is a diff's
                              noise floor (ranks differ by design) */
  double compute_us, communication_us, memory_us;
  double collective_us;   /* every collective kernel's duration, hidden or not */
  double exposed_comm_us; /* = communication_us */
  double wait_us;         /* collective wait over the matched instances */
  double wait_share_pct;  /* wait_us / busy_us * 100 */
  size_t lacks;           /* collective instances its trace lacks where a peer of its group ran
                             them in the same step (an_rank_group.n_dropped, by rank) */
  const char *top_kernel; /* canonical name; NULL when the rank has no kernels */
  double top_kernel_us, top_kernel_share_pct;
  size_t group;   /* index into an_rank_report.groups: the rank's group with the most
                     matched instances */
  bool straggler; /* the rank its group waits for */
} an_rank_row;

/* How the ranks of a group were found (docs/scale-out.md "Groups"). */
typedef enum an_rank_group_source {
  AN_GROUP_PG_ARGS = 0,   /* the collectives' own Process Group Ranks args */
  AN_GROUP_SIZE_ARG = 1,  /* the largest NCCL group of pg_config of the collectives' Group
                             size arg */
  AN_GROUP_TP = 2,        /* no args: the TP group of pg_config (the smallest run of
                             ranks below the world), its ranks ending each instance together */
  AN_GROUP_CO_MOVING = 3, /* the largest NCCL group of pg_config whose ranks end each
                             instance together (ranks.same_group_spread_us) */
  AN_GROUP_ALL_RANKS = 4  /* nothing names a group: every rank of the stage */
} an_rank_group_source;

typedef enum an_rank_verdict {
  AN_RANK_NO_COLLECTIVES = 0, /* fewer than two ranks, or nothing matched */
  AN_RANK_COUNTS_DIFFER = 1,  /* nothing matched: the ranks ran different instance counts */
  AN_RANK_BELOW_BAR = 2,      /* the others lose less than ranks.straggler_min_share_pct */
  AN_RANK_SPREAD = 3,         /* the last rank to arrive changes: under
                                 ranks.straggler_min_consistency_pct of the loss is spent
                                 waiting for the least-waiting rank */
  AN_RANK_STRAGGLER = 4       /* one rank holds the group back */
} an_rank_verdict;

/* Where the straggler's delay comes from, by comparing it with the group's other ranks
 * step by step (no clocks compared): a longer compute (GPU), or a step annotation that
 * starts late against the collective every rank ends together (host); or, from the
 * imbalance table, more work than its peers in a few kernel families while the rest of its
 * kernels keep pace (imbalance: the sharding plan or the input split gives it more). */
typedef enum an_rank_cause {
  AN_CAUSE_UNKNOWN = 0, /* steps unknown, or neither explains ranks.cause_min_share_pct */
  AN_CAUSE_HOST = 1,
  AN_CAUSE_GPU = 2,
  AN_CAUSE_IMBALANCE = 3
} an_rank_cause;

/* A kernel family the straggler runs longer than its peers (rank_excess.c): the kernels
 * of one finer kind (embedding, sort, ...), or one kernel when its kind is only its
 * category (a copy direction, a GEMM). Times are the family's kernel time over the stage
 * on the straggler and the median of the others'. */
typedef struct an_rank_excess {
  const char *family; /* the kind, or the kernel's canonical name when is_kernel */
  bool is_kernel;
  const char *category; /* its kernel category */
  double straggler_us, peers_us;
  double per_step_us; /* (straggler_us - peers_us) per counted step; the total without steps */
  /* In a sampled group (each trace keeps its own subset of the launches) a kernel a rank
   * lacks while its CPU side launched it (its launching op ran as often a step: an
   * an_rank_kernel.launcher) is one its sample dropped, left out; one a rank's ops never
   * launch is the sharding plan and counts (blind review 22 defect 2: hta_sampled_2ranks'
   * weighted lookups, 24.03 ms, run by rank 0's second lookup a step). The family's time in
   * the kernels left out, on the straggler and the others' median; 0 otherwise. */
  double straggler_left_us, peers_left_us;
} an_rank_excess;

/* The part of the others' wait for the straggler spent in the collectives of one
 * launch-context family (read from the group's first rank's launches). */
typedef struct an_rank_wait_context {
  const char *context;     /* its label; NULL: collectives launched in no labelled family */
  double lost_us;          /* the others' wait in its instances */
  double lost_per_step_us; /* of it in counted steps, per step; 0 when steps are unknown */
} an_rank_wait_context;

/* Ranks that run collectives together (the group of a collective: its Process Group
 * args, else pg_config by its Group size, else the pg_config group whose ranks end each
 * instance together, else every rank; gloo groups and groups of one never). Collective
 * instances are matched per group by canonical name, message size and occurrence index,
 * never by timestamp: clocks differ across nodes. An instance's wait on a rank is its
 * duration minus the fastest rank's (the floor). */
typedef struct an_rank_group {
  size_t n_ranks;
  const long *ranks; /* ascending */
  an_rank_group_source source;
  /* Ranks of the process group it was found from (the smallest of its members' groups,
   * args or pg_config, holding every rank of it) whose trace the stage lacks: no file, or
   * one the reader refused. A straggler among them makes every rank read wait alike, so
   * no loss shows: the verdict speaks for the ranks read only. Ascending. */
  size_t n_absent;
  const long *absent;
  size_t n_matched;                  /* instances present on every rank of the group */
  size_t n_unmatched;                /* instances of collectives whose counts differ across ranks */
  size_t n_count_mismatch;           /* such collectives (name + message size); not matched */
  const char *mismatch_kernel;       /* the first of them (canonical name), NULL if none */
  size_t mismatch_min, mismatch_max; /* its fewest and most instances on a rank */
  /* Instances a member's trace lacks where its peers ran them in the same step (counted
   * where the members' steps line up): a sampled trace dropped them, or the capture lost
   * them. They are not matched, so the gap is no one's wait. The longest: its kernel,
   * family, direction, step (1-based; 0 outside the steps), the rank lacking it, the rank
   * that ran it and its time there. */
  size_t n_dropped;
  const char *dropped_kernel, *dropped_context;
  bool dropped_backward;
  size_t dropped_step;
  long dropped_rank, dropped_peer;
  double dropped_us;
  bool dropped_sampled; /* some rank lacking instances has a filtered (sampled) trace */
  an_rank_verdict verdict;
  bool has_straggler;         /* verdict == AN_RANK_STRAGGLER */
  long straggler;             /* least-waiting rank (set even without a verdict) */
  double lost_us;             /* GPU time the others lose to it: their waits, summed */
  double lost_share_pct;      /* lost_us over the members' GPU time (busy + idle) */
  double last_arrival_pct;    /* share of lost_us in instances where it was the fastest */
  size_t n_steps;             /* steps of the stage (the first member's); 0 = unknown */
  double lost_per_step_us;    /* the others' loss in counted steps / n_steps; 0 when unknown */
  double lost_step_share_pct; /* lost_per_step_us over the members' GPU time per step */
  /* evidence: the collective and step that absorb the most of the others' wait */
  const char *wait_kernel;      /* canonical name; NULL when nothing was lost */
  const char *wait_context;     /* its launch-context family; NULL when it has none */
  size_t wait_position;         /* its ordinal among the step's collectives (1 = the first);
                                   0 outside steps */
  double wait_kernel_share_pct; /* its share of lost_us */
  size_t worst_step;            /* 1-based among the stage's counted steps; 0 unknown */
  double worst_step_lost_us;
  /* the loss by launch-context family of the instances it is spent in, most first; empty
   * when no collective of the group has a labelled family (nothing to tell apart) */
  size_t n_wait_contexts;
  const an_rank_wait_context *wait_contexts;
  /* cause, per step: how late the straggler arrives (lost per step over the others),
   * how much longer its compute is and how much later its step starts on the host than
   * the others' medians */
  an_rank_cause cause;
  double delay_per_step_us, extra_compute_per_step_us, host_late_per_step_us;
  /* the kernel families of the imbalance table the straggler runs longer (most first) and
   * their summed excess per step: the work it carries beyond its peers; empty unless it is
   * the straggler of the group */
  size_t n_excess;
  const an_rank_excess *excess;
  double excess_per_step_us;
  /* of it, what the straggler runs over an even share of the group's work (excess x
   * (n_ranks - 1) / n_ranks: an even split moves that much to its peers): the most
   * rebalancing the ranks read can win per step */
  double balanced_excess_per_step_us;
  /* Families of the straggler's longer work left out of the excess because a sampled trace
   * of the group kept one instance its peers' did not: without its longest launch the
   * straggler's family time is within ranks.imbalance_pct of its peers' median (review 17
   * defect 7: hta_sampled_2ranks' pinned HtoD copies, 12.08 against 0.81 ms, were one 59 MB
   * copy only rank 1's sample kept, at the rate both ranks copy). How many, and the largest
   * (its figures as an excess row would give them) with that launch's time. */
  size_t n_sampled_out;
  an_rank_excess sampled_out;
  double sampled_out_max_us;
} an_rank_group;

/* A kernel whose total time differs across the ranks of one group by more than
 * ranks.imbalance_pct (MoE expert imbalance shows up here). */
typedef struct an_imbalance_row {
  const char *kernel; /* canonical name */
  const char *category;
  size_t group;
  double min_us, max_us, spread_pct; /* spread = (max - min) / min * 100 */
  long min_rank, max_rank;
} an_imbalance_row;

/* What one rank contributes to the Ranks section of one stage, kept in a one-rank report
 * (JSON "rank_data") so `triage merge` can build the section from per-rank reports with
 * the same numbers as a direct run. */
typedef enum an_rank_class {
  AN_RANK_COMPUTE = 0,
  AN_RANK_COMM = 1,
  AN_RANK_MEMORY = 2
} an_rank_class;

typedef struct an_rank_kernel {
  const char *name, *category; /* canonical name, kernel category */
  an_rank_class cls;
  double total_us;
  /* its launches and the longest one's time: a family's excess that sits in one instance a
   * sampled trace kept is no imbalance (rank_excess.c); 0: unknown (older rank data) */
  size_t launches;
  double max_us;
  /* in a filtered trace, the CPU op around its first launch call (innermost) and how many
   * of that op's instances launched the stage's kernels on this rank: a peer's sample
   * that lacks the kernel dropped it only when its own ops of that name ran as often per
   * step, else its CPU side never launched it (the sharding plan: rank_excess.c).
   * launcher NULL: unknown (unfiltered, or older rank data) */
  const char *launcher;
  size_t launcher_ops;
} an_rank_kernel;

#define AN_RANK_NO_PG (-1L)
#define AN_RANK_NO_STEP (-1)

/* What every instance of one collective of a rank shares: its kernel, message and group
 * args. Instances of one kernel with another message size or group are another kind. */
typedef struct an_rank_coll_kind {
  size_t kernel;       /* index into an_rank_data.kernels */
  double nelems;       /* In msg nelems, 0 unknown */
  long pg;             /* index into an_rank_data.pgs of its Process Group Ranks arg, or
                          AN_RANK_NO_PG */
  size_t group_size;   /* its Group size arg, 0 unknown */
  const char *context; /* the labelled launch-context family of its launches (launch_context.h:
                          "input dist", "gradient reduce (DDP hook)"), NULL none: instances
                          launched in another family are another kind */
  bool backward;       /* launched in the backward pass (an op of matcher
                          collective_backward_op around its launch): a family's forward and
                          backward instances are other kinds */
} an_rank_coll_kind;

/* One collective instance: 16 bytes, a rank has one per collective launch (ranks read in
 * parallel keep them all until the section is built). Its ordinal in its step is its
 * count among the step's instances before it. */
typedef struct an_rank_collective {
  uint32_t kind; /* index into an_rank_data.kinds */
  int32_t step;  /* ordinal among the stage's counted steps, or AN_RANK_NO_STEP */
  float dur_us;  /* its duration (float: under 1 ns below 16 ms) */
  float end_us;  /* its end on the rank's own clock, from an_rank_data.base_us: only
                    compared as differences between instances, never across ranks */
} an_rank_collective;

/* A process group: the NCCL/RCCL groups of distributedInfo.pg_config with more than one
 * rank (gloo groups and groups of one left out), then those collectives' args name. */
typedef struct an_rank_pg {
  size_t n_ranks;
  const long *ranks; /* ascending */
  bool from_args;    /* named by a kernel's Process Group Ranks, not pg_config */
} an_rank_pg;

/* One counted step of the stage on this rank. */
typedef struct an_rank_step {
  double compute_us; /* its kernels' time, collectives left out */
  double sync_us;    /* from its CPU start (the step annotation) to the end of its first
                        collective, which every rank of the group ends together: a rank
                        whose step starts late on the host has less; -1 without one */
} an_rank_step;

typedef struct an_rank_data {
  long rank;
  const char *path, *stage;
  bool filtered; /* its trace was filtered to GPU work (analysis/trace_filter.h) */
  size_t gpus;   /* GPUs its trace holds (processes carrying kernels); this rank is one */
  double busy_us, idle_us, class_us[3], collective_us;
  size_t n_steps; /* counted steps of the stage; 0 = unknown */
  const an_rank_step *steps;
  size_t n_pgs;
  const an_rank_pg *pgs;
  size_t n_kernels;
  const an_rank_kernel *kernels;
  size_t n_kinds;
  const an_rank_coll_kind *kinds;
  double base_us; /* the origin of the collectives' end_us: the first one's start */
  size_t n_collectives;
  const an_rank_collective *collectives; /* in start order */
} an_rank_data;

/* The Ranks section of one stage: rows in rank order. */
typedef struct an_rank_report {
  const char *stage; /* stage id of the files */
  size_t n_steps;    /* the most counted steps of a rank of the stage (0: unknown): the rows'
                        times are totals over them, not per step */
  size_t n_rows;
  const an_rank_row *rows;
  size_t n_groups;
  const an_rank_group *groups;
  size_t n_imbalance;
  const an_imbalance_row *imbalance; /* spread descending */
} an_rank_report;

/* ------------------------------------------------------------------ diff */

typedef enum an_diff_change {
  AN_DIFF_SAME = 0,   /* within the stage's noise floor */
  AN_DIFF_SLOWER = 1, /* a regression */
  AN_DIFF_FASTER = 2,
  AN_DIFF_NEW = 3,     /* only after */
  AN_DIFF_REMOVED = 4, /* only before */
  AN_DIFF_WAIT = 5     /* a collective (or the stage) whose time moved beyond the floor
                          only by waiting for other ranks: its transfer is within noise */
} an_diff_change;
#define AN_DIFF_CHANGES 6

/* What judged a row: its own change, or, when that is under the floor, the part of it that
 * moved beyond the floor (one rule for every row under the floor: not resolved or within
 * noise unless such a part moved, and then the row says which). */
typedef enum an_diff_basis {
  AN_DIFF_BY_TOTAL = 0,    /* the row's own change (or no change) */
  AN_DIFF_BY_TRANSFER = 1, /* a collective (or a category of them): its transfer, the time
                              less its wait for other ranks */
  AN_DIFF_BY_WORK = 2,     /* a stage time (GPU time, span, busy): the time less its
                              collectives' wait */
  AN_DIFF_BY_KERNELS = 3   /* a category: its kernels that changed beyond the floor */
} an_diff_basis;

/* One kernel (canonical name), category or fusion pattern compared across the runs.
 * Times are per step when both runs know their steps (an_diff_stage.per_step), else
 * over the stage. */
typedef struct an_diff_row {
  const char *name;
  const char *category; /* kernels: the after category (before when removed); else NULL */
  double before_us, after_us, delta_us;
  double delta_pct; /* delta / before * 100; 0 when before is 0 */
  an_diff_change change;
  bool has_wait;                        /* a collective with its wait known on both sides */
  double before_wait_us, after_wait_us; /* the wait part of before_us / after_us */
  size_t renamed_group; /* an overlap row new or removed whose kernel is one of a renamed
                           group's (Kernels renamed): 1 + the group's index; 0: none */
  bool still_runs;      /* an overlap row new or removed whose kernel runs in both runs: only
                           its overlap row came or went (its times are the kernel's) */
  double before_staged_us, after_staged_us; /* kernels: the part launched inside the ops that
                                               launch graphs (their copies), same basis */
  an_diff_basis basis; /* not AN_DIFF_BY_TOTAL: the change is under the floor, and part_pct
                          says what moved beyond it */
  double part_pct;     /* transfer, work: that part's change, % of its before time (0 when
                          it had none); kernels: their share of the row's change, % */
} an_diff_row;

/* One rank of a stage in both runs (only when both runs have several ranks there). */
typedef struct an_diff_rank_row {
  long rank;
  bool in_before, in_after;
  double before_busy_us, after_busy_us, delta_busy_us;
  double before_wait_us, after_wait_us;   /* collective wait */
  bool before_straggler, after_straggler; /* the rank its group waits for, with a verdict */
} an_diff_rank_row;

/* Kernels renamed across the runs (another GPU picks other GEMM kernels): the kernels of one
 * category and one launching CPU op that only before runs, paired as one group with those
 * only after runs. A kernel with a same-name partner is never in a group. */
typedef struct an_diff_renamed {
  const char *category;
  const char *cpu_op; /* the launching CPU op; NULL: neither run links one (graph replay, ...) */
  an_diff_row row;    /* the group's summed times and change (name: the largest kernel after) */
  size_t n_before, n_after;
  const char *const *before_names; /* each side's kernels, time descending */
  const char *const *after_names;
} an_diff_renamed;

/* A kernel re-instantiated across the runs: one kernel name only before and one only after
 * in one stage, the same name but for some template arguments, each a plain value or type
 * (analysis/kernel_template.h: a table width 2ul -> 5ul, float -> at::Half), and no other
 * kernel of that stage shares the stem. The pair stays in the kernel and renamed tables as
 * before; this says what changed in it. */
typedef struct an_diff_retemplate {
  const char *before_name, *after_name; /* canonical names (the sides' strings) */
  size_t stem_len;                      /* the shared name before its '<' */
  const char *before_args, *after_args; /* the arguments that differ, ", "-joined */
  an_diff_row row;                      /* the pair's times, as the kernel rows give them */
} an_diff_retemplate;

/* Where a stage's noise floor comes from: the packs' floor, or the spread the data show
 * (twice the relative standard deviation, diff.noise_sigma, across the steps of either
 * run: of the tables' trace's GPU time per step, or, between two profile directories, of
 * each rank's work per step (an_rank_row.step_us), rank r before with rank r after; the
 * widest). Never the spread across
 * ranks: the ranks of a job differ by design (their share of the work), which is no
 * noise between two runs (review 13: the 2-rank set against itself had a 16.6 % floor). */
typedef enum an_noise_source {
  AN_NOISE_PACKS = 0,
  AN_NOISE_STEPS = 1,     /* the tables' trace's steps */
  AN_NOISE_RANK_STEPS = 2 /* the steps of one rank of a directory (an_diff_stage.noise_rank) */
} an_noise_source;

typedef struct an_diff_stage {
  const char *stage;
  bool has_time;                            /* both runs' time accounts known: span, busy, idle */
  an_diff_row span, busy, idle;             /* per step (per_step) of the time account */
  double before_graph_pct, after_graph_pct; /* kernel time replayed from CUDA/HIP graphs */
  size_t before_steps, after_steps;         /* counted steps; 0 unknown */
  bool per_step;                            /* both known: every time of the stage is per step */
  double noise_pct, noise_us;               /* the stage's floor: a change below either is noise */
  an_noise_source noise_source;
  bool unresolved; /* noise_pct above diff.resolve_max_floor_pct: a change under the floor
                      cannot be told from noise, so its rows are not resolved (their change
                      stays AN_DIFF_SAME: neither a regression nor ruled out) */
  /* a data floor: the run whose spread sets it (false: before), with AN_NOISE_RANK_STEPS
   * the rank, how many values (its steps) and their range, us (the steps' GPU time, or
   * the rank's work per step) */
  bool noise_after;
  long noise_rank;
  size_t noise_n;
  double noise_lo_us, noise_hi_us;
  /* each run's counted steps whose kernels ran on into the next step's GPU window
   * (an_diff_side_stage.n_cut_steps): its spans per step hold their neighbours' work, its
   * work per step does not (review 16 defect 2: the hta pair's after run, spans 82-166 ms,
   * went unmentioned beside a floor from the before run) */
  size_t before_cut_steps, after_cut_steps;
  an_diff_row total; /* the stage's GPU time */
  size_t n_categories;
  const an_diff_row *categories; /* |delta| descending */
  size_t n_kernels;
  const an_diff_row *kernels; /* changes beyond the floor first, |delta| descending */
  size_t n_fusions;
  const an_diff_row *fusions; /* shown fusion patterns that appeared or went away */
  size_t n_overlaps;
  const an_diff_row *overlaps; /* overlap table rows (by kernel) that appeared or went away */
  size_t n_renamed;
  const struct an_diff_renamed *renamed; /* kernels renamed across the runs, |delta| descending */
  size_t n_retemplated;
  const an_diff_retemplate *retemplated; /* kernels whose template arguments changed, |delta|
                                            descending */
  const char *label;             /* the stage's label in the packs ("extend/prefill"), or id */
  size_t n_ranks;                /* 0 unless both runs have several ranks in this stage */
  const an_diff_rank_row *ranks; /* rank order; compared rank by rank: those in both runs */
} an_diff_stage;

/* What one side of a diff was: how it was given and the trace files behind it. */
typedef struct an_diff_input {
  const char *path; /* as named on the command line */
  const char *kind; /* "trace", "directory" or "report" (a --format json report) */
  size_t n_files;
  const char *const *files; /* the formal trace files analysed (for a report: its inputs) */
  const char *framework, *model, *gpu; /* the run's facts; NULL when unknown */
  bool framework_defaulted;            /* the framework is the packs' default, not detected */
  size_t n_ranks;                      /* ranks of its Ranks sections (0: one rank) */
  long world_size;                     /* distributedInfo.world_size; 0 unknown */
  long rank, device;                   /* the tables' trace's rank and GPU index; -1 unknown */
  const char *host;                    /* its host_name; NULL unknown */
  long only_rank;     /* a profile directory read for this rank alone (triage diff --rank N): its
                         other ranks were not read; -1 none */
  size_t n_unread;    /* ranks of a directory whose trace the reader refused (left out) */
  const long *unread; /* ascending */
  double graph_pct;   /* share of the kernel time in the steps replayed from graphs; -1 unknown */
  const char *gemm_dtype; /* the number format of most of its matrix products' roofline time
                             ("bf16"); NULL when no GEMM row has one */
  double gemm_dtype_pct;  /* that format's share of their roofline time */
} an_diff_input;

/* Why two runs are not comparable: a kernel's time on other hardware, or with its work
 * split over another number of ranks, is not the same program's time. */
enum {
  AN_DIFF_GPU_DIFFERS = 1u << 0,  /* both runs name their GPU, and the names differ */
  AN_DIFF_WORLD_DIFFERS = 1u << 1 /* both state distributedInfo.world_size, and it differs */
};

/* Whose traces the two runs' tables read, where both sides state it and it differs
 * (an_diff_report.identity_differs). Another rank of the same job is not another run: a
 * rank-to-rank difference (its share of the work, its waits for the others) would read as
 * what changed, so no row counts as a regression when the ranks differ. */
enum {
  AN_DIFF_RANK_DIFFERS = 1u << 0,  /* distributedInfo.rank */
  AN_DIFF_HOST_DIFFERS = 1u << 1,  /* host_name */
  AN_DIFF_DEVICE_DIFFERS = 1u << 2 /* the GPU index the kernels ran on */
};

/* How a diff's rows read (an_diff_report.reading): what a row beyond its floor says.
 * Runs that do not compare (AN_DIFF_*_DIFFERS) only say which way a time moved: a kernel
 * on another GPU or with the work split over another number of ranks is not slower or
 * faster than itself, and a row that says "slower" reads as a regression (review 13). */
typedef enum an_diff_reading {
  AN_DIFF_READ_REGRESSIONS = 0, /* the runs compare: a row slower beyond its floor is a
                                   regression */
  AN_DIFF_READ_OTHER_RANK = 1,  /* the tables read other ranks: slower or faster, counted as
                                   no regression (a rank-to-rank difference) */
  AN_DIFF_READ_DIRECTION = 2    /* not comparable: a time moved longer or shorter, neither a
                                   regression nor an improvement */
} an_diff_reading;

/* triage diff BEFORE AFTER: per stage, matched by stage id. */
typedef struct an_diff_report {
  const char *before, *after; /* the inputs as named */
  size_t n_stages;
  const an_diff_stage *stages;
  an_diff_input inputs[2];                /* before, after */
  double noise_floor_pct, noise_floor_us; /* diff.noise_floor_pct / _us of the packs: the
                                             least floor of every stage */
  double category_kernels_pct;            /* diff.category_kernels_pct: a category moves as
                                             its kernels do when they carry this share */
  double resolve_max_floor_pct;           /* diff.resolve_max_floor_pct: a stage floor wider
                                             than this resolves no change under it */
  unsigned incomparable;     /* AN_DIFF_*_DIFFERS bits; non-zero: nothing counts as a regression */
  unsigned identity_differs; /* AN_DIFF_RANK/HOST/DEVICE_DIFFERS bits; with the rank's,
                                nothing counts as a regression either */
  an_diff_reading reading;   /* from incomparable and identity_differs */
  size_t n_regressions;      /* step spans, stage totals and kernel rows slower beyond their floor
                                (0 when incomparable or the ranks differ) */
  size_t n_slower;           /* the same rows, counted or not */
  size_t n_steps_differ;     /* stages whose runs profiled different step counts */
  size_t n_steps_unknown;    /* stages where one run knows its steps and the other not */
  /* the kernel rows' change in the part launched inside graph-launching ops (their copies,
   * analysis/graph_staging.h), summed over every stage: what graphs appearing or going
   * away brought with them (review 5) */
  double graph_staged_delta_us;
  const an_diff_row *graph_staged_top; /* the row of that change that moved most; NULL: none */
  bool graph_staged_per_step;          /* every row of it counts per step */
} an_diff_report;

/* Sections later work adds (declared so the report grows without reshaping). */

typedef struct an_report {
  an_provenance run;
  size_t n_stages;
  const an_stage_report *stages;
  size_t n_hints;
  const an_hint *hints;
  an_kmap_view kernel_map; /* the mapping kernel map (--kernel-map) */
  an_trace_limits limits;
  size_t n_summary; /* "What to try first", best first */
  const an_summary_item *summary;
  size_t n_leads; /* the smaller leads (summary.lead_below_pct), best first: after the
                     numbered items in the same array (summary + n_summary) */
  /* Of them, those whose bound exceeds a numbered item's (the least bounded one's: the
   * unbounded and batch items left aside): one rule puts a hedged lever among the leads
   * whatever its bound, and the leads' line then says so (blind review 22 defect 4). */
  size_t leads_above;
  an_bottleneck bottleneck; /* the first bottlenecked stage of the summary */
  size_t n_ranks;           /* rank tables, one per stage; 0 for a one-rank run */
  const an_rank_report *ranks;
  size_t n_rank_data; /* one-rank runs: the rank's data per formal trace */
  const an_rank_data *rank_data;
  const struct an_diff_report *diff;
  an_roofline_device roofline_device; /* the device the rooflines are computed for */
  an_roofline_model roofline_model;   /* model-based decode GEMM shapes, when identified */
} an_report;

void an_report_destroy(an_report *r);

/* x rounded to 3 decimals the way Python's round(x, 3) does (exact binary value). */
double an_round3(double x);

#endif
