/*
 * triage/settings.h - the typed settings of rule packs: one table of every key triage
 * reads (key, type, range, meaning), and the struct a finalized rule set resolves them
 * into.
 *
 * Values come only from packs (the default packs set every key; `settings:` in
 * docs/rules.md); C holds no default value of a pack setting. A pack that names a key
 * the table does not know, gives a value of the wrong type or one outside the key's
 * range fails validation with a FILE:LINE:COL diagnostic. Code reads the resolved struct
 * (te_rules_settings), never a key by name.
 *
 * Adding a setting: one TE_SETTINGS row below (which also declares its te_settings
 * member), one line in a default pack, then tools/gen-rule-schema.sh to regenerate the
 * pack schema's "settings" part (a test fails until it is regenerated).
 *
 * Ownership: te_settings and everything it points to belong to the te_rules it was
 * resolved by, valid until te_rules_destroy.
 */
#ifndef TRIAGE_SETTINGS_H
#define TRIAGE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum te_setting_type {
  TE_SETTING_NUMBER = 0,     /* double in [min, max] */
  TE_SETTING_INT = 1,        /* whole number (long) in [min, max] */
  TE_SETTING_BOOL = 2,       /* true / false */
  TE_SETTING_ENUM = 3,       /* one of the '|'-separated choices; stored as its index (int) */
  TE_SETTING_LIST = 4,       /* list of non-empty strings */
  TE_SETTING_NUMBER_MAP = 5, /* mapping of ids (e.g. overlap categories) to numbers in
                                [min, max]; an id the packs do not mention reads `absent` */
  TE_SETTING_LIST_MAP = 6    /* mapping of ids to lists of strings */
} te_setting_type;

typedef struct te_string_list {
  size_t n;
  const char *const *items;
} te_string_list;

typedef struct te_number_map {
  size_t n;
  const char *const *keys;
  const double *values;
  double absent; /* the table's value for an id no pack mentions */
} te_number_map;

typedef struct te_list_map {
  size_t n;
  const char *const *keys;
  const te_string_list *values;
} te_list_map;

/* The ids of the report's summary actions (an_summary_action_id, in an_action order; a
 * unit test holds the two equal): the choices of the settings keyed by action. */
#define TE_SUMMARY_ACTION_IDS                                                               \
  "tune|overlap|fusion_neighbour|check_deps|fusion|port|eliminate|sync|stall|launch_bound|" \
  "rank_skew|chain|fewer_bytes|dependency|investigate|slow_collective|kernel_lever|merge|"  \
  "fold_gemm|batch|fp32|fold_cast"

/* The points of roofline.attention_ceiling: masking (causal or full), head_dim, KV length
 * (the grid of the published figures its source gives). */
#define TE_ATTENTION_CEILING_POINTS                                       \
  "causal/64/512|causal/64/1024|causal/64/2048|causal/64/4096|"           \
  "causal/64/8192|causal/64/16384|causal/128/512|causal/128/1024|"        \
  "causal/128/2048|causal/128/4096|causal/128/8192|causal/128/16384|"     \
  "full/64/512|full/64/1024|full/64/2048|full/64/4096|full/64/8192|"      \
  "full/64/16384|full/128/512|full/128/1024|full/128/2048|full/128/4096|" \
  "full/128/8192|full/128/16384"

/* X(member, "dotted.key", TYPE, min, max, absent, choices, "meaning")
 * min/max: range of NUMBER, INT and NUMBER_MAP values; absent: NUMBER_MAP only;
 * choices ("a|b"; NULL: any): the value of an ENUM, every entry of a LIST, every id of a
 * NUMBER_MAP, every id and every entry of a LIST_MAP (a typo would silently match
 * nothing, so it fails validation at its own position). */
#define TE_SETTINGS(X)                                                                             \
  X(kernel_table_min_share_pct, "kernel_table.min_share_pct", NUMBER, 0, 100, 0, NULL,             \
    "render bar of the kernel table in percent of stage GPU time (--min-share overrides)")         \
  X(kernel_table_sites_shown, "kernel_table.sites_shown", INT, 1, 1000, 0, NULL,                   \
    "launch sites shown per kernel row")                                                           \
  X(kernel_table_stack_depth, "kernel_table.stack_depth", INT, 1, 256, 0, NULL,                    \
    "innermost positive-priority frames kept in a site's stack")                                   \
  X(kernel_table_site_min_coverage, "kernel_table.site_min_coverage", NUMBER, 0, 1, 0, NULL,       \
    "a row whose shown sites cover less of its mapped launches says how many (0: never)")          \
  X(kernel_table_graph_replay_locations, "kernel_table.graph_replay_locations", BOOL, 0, 0, 0,     \
    NULL, "a site launched by a graph replay is worded as the replay's location")                  \
  X(kernel_table_plumbing_locations, "kernel_table.plumbing_locations", BOOL, 0, 0, 0, NULL,       \
    "a site whose stack holds only plumbing frames (matcher low_signal) says so instead of "       \
    "pointing at the plumbing as if it launched the kernel")                                       \
  X(kernel_table_outside_steps_sites, "kernel_table.outside_steps_sites", BOOL, 0, 0, 0, NULL,     \
    "an unresolved site whose launches all ran outside the counted steps says so (warm-up) "       \
    "rather than 'unresolved'")                                                                    \
  X(kernel_map_site_by_display, "kernel_map.site_by_display", BOOL, 0, 0, 0, NULL,                 \
    "a kernel's launches are grouped into sites by each launch's own display location (its "       \
    "model frame), not by the frame the resolver chose; false: the reference")                     \
  X(kernel_map_sample_per_kernel, "kernel_map.sample_per_kernel", INT, 1, 1000000, 0, NULL,        \
    "kernels attributed per name and stage when the mapping pass is sampled")                      \
  X(kernel_map_long_name_min, "kernel_map.long_name_min", INT, 0, 1000000, 0, NULL,                \
    "relaxed lookup: compacted names at least this long may match by a common prefix")             \
  X(kernel_map_long_prefix_min, "kernel_map.long_prefix_min", INT, 0, 1000000, 0, NULL,            \
    "relaxed lookup: shortest common prefix (characters) of such a match")                         \
  X(kernel_map_long_prefix_ratio, "kernel_map.long_prefix_ratio", NUMBER, 0, 1, 0, NULL,           \
    "relaxed lookup: shortest common prefix as a fraction of the shorter name")                    \
  X(kernel_map_flash_bonus, "kernel_map.flash_bonus", NUMBER, 0, 1e6, 0, NULL,                     \
    "relaxed lookup: score added when both names start with a flash_bonus_prefixes entry")         \
  X(kernel_map_flash_bonus_prefixes, "kernel_map.flash_bonus_prefixes", LIST, 0, 0, 0, NULL,       \
    "compacted-name prefixes that earn kernel_map.flash_bonus")                                    \
  X(kernel_map_alias_group_weight, "kernel_map.alias_group_weight", NUMBER, 0, 1e9, 0, NULL,       \
    "alias token group i (kernel_map_aliases order) scores weight x (i + 1)")                      \
  X(kernel_map_alias_time_bucket_us, "kernel_map.alias_time_bucket_us", NUMBER, 1e-9, 1e12, 0,     \
    NULL, "alias matches also score a point per this many microseconds of the entry's time")       \
  X(kernel_map_unsampled_frameworks, "kernel_map.unsampled_frameworks", LIST, 0, 0, 0, NULL,       \
    "framework ids whose mapping pass attributes every kernel instead of a sample")                \
  X(attribution_candidates_before, "attribution.candidates_before", INT, 0, 1000, 0, NULL,         \
    "CPU-op candidates considered before the bisect point")                                        \
  X(attribution_candidates_after, "attribution.candidates_after", INT, 0, 1000, 0, NULL,           \
    "CPU-op candidates considered after the bisect point")                                         \
  X(attribution_probe_max_us, "attribution.probe_max_us", NUMBER, 0, 1e9, 0, NULL,                 \
    "cap on the probe offset inside a CPU op (half its duration otherwise)")                       \
  X(attribution_time_tolerance_us, "attribution.time_tolerance_us", NUMBER, 0, 1e6, 0, NULL,       \
    "events this close count as at the same time (kernel probes into CPU ops, stage windows, "     \
    "Python frames)")                                                                              \
  X(fuse_render_min_share_pct, "fuse.render_min_share_pct", NUMBER, 0, 100, 0, NULL,               \
    "fuse rows are rendered at or above this share")                                               \
  X(fuse_evidence_rows, "fuse.evidence_rows", INT, 0, 1000, 0, NULL,                               \
    "evidence kernels listed per fuse row")                                                        \
  X(fuse_evidence_min_share_pct, "fuse.evidence_min_share_pct", NUMBER, 0, 100, 0, NULL,           \
    "evidence kernels are listed at or above this share")                                          \
  X(fuse_evidence_every_counted, "fuse.evidence_every_counted", BOOL, 0, 0, 0, NULL,               \
    "a fuse row lists every kernel its related time counts (no row cap, no share bar)")            \
  X(fuse_locations, "fuse.locations", INT, 0, 1000, 0, NULL,                                       \
    "current Python locations listed per fuse row")                                                \
  X(fuse_default_min_share_pct, "fuse.default_min_share_pct", NUMBER, 0, 100, 0, NULL,             \
    "a pattern without min_share_pct: its rows need this share of the stage")                      \
  X(fuse_default_likely_share_pct, "fuse.default_likely_share_pct", NUMBER, 0, 100, 0, NULL,       \
    "a pattern without likely_share_pct: its confidence is likely from this share")                \
  X(fuse_component_evidence, "fuse.component_evidence", BOOL, 0, 0, 0, NULL,                       \
    "patterns' evidence and platform gates apply; false: the reference's text-only match")         \
  X(fuse_model_frame_markers, "fuse.model_frame_markers", LIST, 0, 0, 0, NULL,                     \
    "a launch site path holding a marker names the model: the file stem after it")                 \
  X(fuse_model_frame_ignore, "fuse.model_frame_ignore", LIST, 0, 0, 0, NULL,                       \
    "file stems under a model marker that are helpers, not models")                                \
  X(fuse_context_from_trace, "fuse.context_from_trace", BOOL, 0, 0, 0, NULL,                       \
    "fusion gates read TP size and platform from trace metadata when server args lack them")       \
  X(fuse_model_kernel_families, "fuse.model_kernel_families", LIST_MAP, 0, 0, 0, NULL,             \
    "model family -> named matchers of kernels only it runs; names the model when frames do not")  \
  X(fuse_tp_from_world_size_frameworks, "fuse.tp_from_world_size_frameworks", LIST, 0, 0, 0, NULL, \
    "detected serving frameworks whose distributedInfo.world_size is the TP size")                 \
  X(fuse_context_gates, "fuse.context_gates", BOOL, 0, 0, 0, NULL,                                 \
    "gates from the trace (mode, size caps, topology, chain) and the fused-path-in-use state")     \
  X(fuse_chain_max_between, "fuse.chain_max_between", INT, 0, 64, 0, NULL,                         \
    "kernels allowed between two pieces of a split on their stream (a pattern's chain overrides)") \
  X(fuse_chain_breakers, "fuse.chain_breakers", LIST, 0, 0, 0, NULL,                               \
    "kernel categories that end a chain when they sit between two pieces (none of the pieces')")   \
  X(fuse_chain_min_fraction, "fuse.chain_min_fraction", NUMBER, 0, 1, 0, NULL,                     \
    "least share of the rarest piece's launches that must be part of a whole chain")               \
  X(fuse_dtype_bytes, "fuse.dtype_bytes", NUMBER_MAP, 0, 64, 0, NULL,                              \
    "bytes of one element of a collective's dtype arg (Kineto's names: BFloat16, Float, ...)")     \
  X(fuse_token_count_keys, "fuse.token_count_keys", LIST, 0, 0, 0, NULL,                           \
    "a step annotation's token count is the number right after the first of these texts")          \
  X(stage_nearest_window_us, "stage.nearest_window_us", NUMBER, 0, 1e15, 0, NULL,                  \
    "a kernel outside every stage annotation takes the nearest one within this distance")          \
  X(stage_merge_gap_us, "stage.merge_gap_us", NUMBER, 0, 1e15, 0, NULL,                            \
    "same-stage annotations this close merge into one window")                                     \
  X(stage_min_all_share_pct, "stage.min_all_share_pct", NUMBER, 0, 100, 0, NULL,                   \
    "a leftover 'all' group of an annotated trace is kept at or above this share")                 \
  X(steps_iteration_min_repeats, "steps.iteration_min_repeats", INT, 0, 1000000, 0, NULL,          \
    "without step annotations, one top-level annotation repeated this often marks the steps "      \
    "(0: never)")                                                                                  \
  X(steps_warmup_ratio, "steps.warmup_ratio", NUMBER, 0, 1e9, 0, NULL,                             \
    "a stage's first step whose GPU window is this many times the others' median is a warm-up "    \
    "(0: never)")                                                                                  \
  X(steps_min_coverage_pct, "steps.min_coverage_pct", NUMBER, 0, 100, 0, NULL,                     \
    "Limits warns when the counted steps hold less than this share of a stage's kernel time")      \
  X(steps_marker_margin_pct, "steps.marker_margin_pct", NUMBER, 0, 100, 0, NULL,                   \
    "a later step-marker kind replaces an earlier one when its windows hold this much more "       \
    "of the kernel time (percentage points)")                                                      \
  X(steps_span_marker_max_ratio, "steps.span_marker_max_ratio", NUMBER, 1, 1e9, 0, NULL,           \
    "Limits warns when the steps' GPU span is under their markers' length divided by this "        \
    "(two steps or more)")                                                                         \
  X(timeline_gap_min_us, "timeline.gap_min_us", NUMBER, 0, 1e9, 0, NULL,                           \
    "gaps between kernels shorter than this are counted as idle without a cause")                  \
  X(timeline_same_stream_overlap_min_us, "timeline.same_stream_overlap_min_us", NUMBER, 0, 1e9, 0, \
    NULL,                                                                                          \
    "a kernel starting this much or more before its stream's predecessor ended waits for it; "     \
    "less is the clocks' rounding")                                                                \
  X(timeline_launch_gap_max_us, "timeline.launch_gap_max_us", NUMBER, 0, 1e9, 0, NULL,             \
    "a gap's host part up to this long is one launch's cost (launch-bound), longer host work")     \
  X(timeline_long_gap_us, "timeline.long_gap_us", NUMBER, 0, 1e12, 0, NULL,                        \
    "an idle portion this long is never launch spacing: counted apart in its cause")               \
  X(timeline_setup_min_pct, "timeline.setup_min_pct", NUMBER, 0, 100, 0, NULL,                     \
    "a gap's host part spent at least this share in setup calls is one-time setup")                \
  X(timeline_drain_min_pct, "timeline.drain_min_pct", NUMBER, 0, 100, 0, NULL,                     \
    "idle after a sync that drained the GPU's queue before the step's first kernel is told "       \
    "when it holds at least this share of the step")                                               \
  X(timeline_untraced_min_pct, "timeline.untraced_min_pct", NUMBER, 0, 100, 0, NULL,               \
    "a host stall nothing spans is untraced host work when its longest stretch with no CPU op "    \
    "holds at least this share of it")                                                             \
  X(timeline_unrecorded_calls_min, "timeline.unrecorded_calls_min", INT, 1, 1000000000, 0, NULL,   \
    "an untraced stretch across which this many runtime calls went unrecorded says so")            \
  X(timeline_readback_max_copy_pct, "timeline.readback_max_copy_pct", NUMBER, 0, 100, 0, NULL,     \
    "a blocking pageable copy whose own transfer takes under this share of the call is a read "    \
    "back waiting for queued work, not a slow copy")                                               \
  X(timeline_host_extent_min_ratio, "timeline.host_extent_min_ratio", NUMBER, 1, 1e12, 0, NULL,    \
    "a counted step whose host extent is at least this many times its GPU span waits for the "     \
    "host outside its time account: the account and the headline say so")                          \
  X(timeline_dispatch_reference_us, "timeline.dispatch_reference_us", NUMBER_MAP, 0, 1e6, 0, NULL, \
    "typical host time (us) of one call of a cheap CPU op that launches nothing, by op name: "     \
    "the yardstick of the host's dispatch speed")                                                  \
  X(timeline_launch_lead_min_kernels, "timeline.launch_lead_min_kernels", INT, 1, 1000000000, 0,   \
    NULL,                                                                                          \
    "a stream's median launch lag counts (the stage's launch lead, a recordless kernel's issue) "  \
    "from this many of its kernels with a launch record")                                          \
  X(timeline_dispatch_min_calls, "timeline.dispatch_min_calls", INT, 1, 1000000, 0, NULL,          \
    "an op of timeline.dispatch_reference_us counts toward the dispatch speed from this many "     \
    "calls in the trace")                                                                          \
  X(timeline_dispatch_min_kinds, "timeline.dispatch_min_kinds", INT, 1, 1000, 0, NULL,             \
    "the dispatch speed is measured from at least this many such ops")                             \
  X(summary_dispatch_slow_ratio, "summary.dispatch_slow_ratio", NUMBER, 1, 1e6, 0, NULL,           \
    "a host-bound item whose cheap ops take at least this many times their typical time leads "    \
    "with the host's dispatch speed (CPU contention, affinity, profiler overhead)")                \
  X(timeline_graph_hole_min_per_step, "timeline.graph_hole_min_per_step", NUMBER, 0, 1e9, 0, NULL, \
    "... in at least this many such gaps per counted step: one odd gap is no lost work")           \
  X(timeline_graph_hole_min_pct, "timeline.graph_hole_min_pct", NUMBER, 0, 100, 0, NULL,           \
    "a stage whose counted steps idle inside graph replays, between nodes of one replay, for at "  \
    "least this share of their span lost graph-replayed work: the idle beside it is unmeasured")   \
  X(timeline_module_load_min_us, "timeline.module_load_min_us", NUMBER, 0, 1e12, 0, NULL,          \
    "a launch call this long is loading its module: one-time setup")                               \
  X(timeline_setup_recurring_min_pct, "timeline.setup_recurring_min_pct", NUMBER, 0, 100, 0, NULL, \
    "a setup cause in at least this share of a stage's steps (two or more) recurs: a per-step "    \
    "loss, not one-time setup")                                                                    \
  X(timeline_sync_tolerance_us, "timeline.sync_tolerance_us", NUMBER, 0, 1e9, 0, NULL,             \
    "a synchronising call returning this close to the GPU running dry is the one that waited")     \
  X(timeline_lead_in_max_pct, "timeline.lead_in_max_pct", NUMBER, 0, 100, 0, NULL,                 \
    "a stream opener that waited for outside work opens the step's window only when the kernels "  \
    "before it are at most this share of the step's kernel time")                                  \
  X(collectives_floor_pct, "collectives.floor_pct", NUMBER, 0, 100, 0, NULL,                       \
    "a collective's floor: this percentile of its group's durations; the excess is wait")          \
  X(collectives_latency_us, "collectives.latency_us", NUMBER, 0, 1000000, 0, NULL,                 \
    "a collective's fixed cost whatever its message (launch, handshake): a per-byte floor is the " \
    "message at the group's fastest rate, at least this")                                          \
  X(collectives_position_min_steps, "collectives.position_min_steps", INT, 1, 1000000, 0, NULL,    \
    "collectives are grouped by position in the step from this many steps, else by name")          \
  X(collectives_first_same_work_ratio, "collectives.first_same_work_ratio", NUMBER, 1, 1000, 0,    \
    NULL,                                                                                          \
    "a step's first collective takes the floor of its later positions when their floors agree "    \
    "within this ratio (the same work at every position)")                                         \
  X(collectives_floor_min_instances, "collectives.floor_min_instances", INT, 2, 1000000, 0, NULL,  \
    "a floor needs this many like instances in its group; with fewer, an instance's split into "   \
    "transfer and wait is unknown")                                                                \
  X(collectives_latency_bound_bytes, "collectives.latency_bound_bytes", NUMBER, 0, 1e15, 0, NULL,  \
    "a message under this many bytes is latency-bound: its time is the fixed cost, not a "         \
    "transfer of its bytes")                                                                       \
  X(collectives_latency_floor_max_ratio, "collectives.latency_floor_max_ratio", NUMBER, 1, 1e6, 0, \
    NULL,                                                                                          \
    "a floor set by a latency-bound instance that took more than this times collectives."          \
    "latency_us waited itself: the wait of the instances it floors is unknown")                    \
  X(collectives_trend_min_steps, "collectives.trend_min_steps", INT, 3, 1000000, 0, NULL,          \
    "a per-step wait trends across the capture only over at least this many steps")                \
  X(collectives_trend_min_tau, "collectives.trend_min_tau", NUMBER, 0, 1, 0, NULL,                 \
    "a per-step wait trends when its Kendall rank correlation with the step order is at least "    \
    "this (1: every later step waits longer)")                                                     \
  X(collectives_trend_min_change_pct, "collectives.trend_min_change_pct", NUMBER, 0, 100, 0, NULL, \
    "and when the last step's wait differs from the first's by at least this share of the "        \
    "larger")                                                                                      \
  X(collectives_jump_min_ratio, "collectives.jump_min_ratio", NUMBER, 1, 1e6, 0, NULL,             \
    "a per-step wait jumps once when its two levels' means differ by at least this times the "     \
    "widest range inside either level")                                                            \
  X(collectives_jump_min_level_steps, "collectives.jump_min_level_steps", INT, 1, 1000000, 0,      \
    NULL, "each level of a jump holds at least this many steps")                                   \
  X(collectives_shape_min_step_pct, "collectives.shape_min_step_pct", NUMBER, 0, 100, 0, NULL,     \
    "a per-step wait's trend, jump or spread is told only when its change is at least this "       \
    "share of the mean step")                                                                      \
  X(collectives_sensitivity_min_steps, "collectives.sensitivity_min_steps", INT, 3, 1000000, 0,    \
    NULL, "a wait item is bounded by how the step moves with its wait from this many steps on")    \
  X(collectives_sensitivity_min_range_pct, "collectives.sensitivity_min_range_pct", NUMBER, 0,     \
    100, 0, NULL,                                                                                  \
    "and when the steps' collective wait ranges over at least this share of the mean step")        \
  X(overlap_min_share_pct, "overlap.min_share_pct", NUMBER, 0, 100, 0, NULL,                       \
    "overlap rows are reported at or above this share of GPU busy time")                           \
  X(overlap_evidence_name_chars, "overlap.evidence_name_chars", INT, 1, 100000, 0, NULL,           \
    "kernel names in an overlap row's evidence text are cut to this many characters")              \
  X(overlap_sample_per_kernel, "overlap.sample_per_kernel", INT, 1, 1000000, 0, NULL,              \
    "mapping events sampled per kernel name for its Python scope")                                 \
  X(overlap_scope_chain_depth, "overlap.scope_chain_depth", INT, 1, 256, 0, NULL,                  \
    "innermost meaningful frames scored for a scope")                                              \
  X(overlap_category_priority, "overlap.category_priority", NUMBER_MAP, -1e6, 1e6, 0, NULL,        \
    "dominant-kernel priority per overlap category (absent: 0, the lowest)")                       \
  X(overlap_weight, "overlap.weight", NUMBER_MAP, 0, 1e6, 1, NULL,                                 \
    "headroom sort weight per overlap category (absent: 1, unweighted)")                           \
  X(overlap_headroom_min_total_us, "overlap.headroom.min_total_us", NUMBER, 0, 1e15, 0, NULL,      \
    "headroom rows need at least this much kernel time")                                           \
  X(overlap_headroom_min_exclusive_ratio, "overlap.headroom.min_exclusive_ratio", NUMBER, 0, 1, 0, \
    NULL, "headroom rows need at least this fraction of exclusive time")                           \
  X(overlap_headroom_top_n, "overlap.headroom.top_n", INT, 0, 100000, 0, NULL,                     \
    "headroom rows per stage")                                                                     \
  X(overlap_low_roi_hidden_min_total_us, "overlap.low_roi_hidden.min_total_us", NUMBER, 0, 1e15,   \
    0, NULL, "low-roi-hidden rows need at least this much kernel time")                            \
  X(overlap_low_roi_hidden_min_hidden_ratio, "overlap.low_roi_hidden.min_hidden_ratio", NUMBER, 0, \
    1, 0, NULL, "low-roi-hidden rows need at least this fraction of hidden time")                  \
  X(overlap_low_roi_hidden_top_n, "overlap.low_roi_hidden.top_n", INT, 0, 100000, 0, NULL,         \
    "low-roi-hidden rows per stage")                                                               \
  X(overlap_low_roi_hidden_categories, "overlap.low_roi_hidden.categories", LIST, 0, 0, 0, NULL,   \
    "overlap categories that may give low-roi-hidden rows")                                        \
  X(overlap_tight_gap_min_us, "overlap.tight_gap.min_us", NUMBER, 0, 1e15, 0, NULL,                \
    "floor of the tight-gap threshold of the dependency signal")                                   \
  X(overlap_tight_gap_max_us, "overlap.tight_gap.max_us", NUMBER, 0, 1e15, 0, NULL,                \
    "cap of the tight-gap threshold")                                                              \
  X(overlap_tight_gap_duration_fraction, "overlap.tight_gap.duration_fraction", NUMBER, 0, 1000,   \
    0, NULL, "tight-gap threshold as a fraction of the kernel's duration")                         \
  X(overlap_producer_consumer, "overlap.producer_consumer", LIST_MAP, 0, 0, 0, NULL,               \
    "per row category, neighbour categories that look like its producer or consumer")              \
  X(overlap_try_overlap_categories, "overlap.try_overlap_categories", LIST, 0, 0, 0, NULL,         \
    "P1 rows of these categories say 'try overlap', the others 'try fusion'")                      \
  X(overlap_collective_categories, "overlap.collective_categories", LIST, 0, 0, 0, NULL,           \
    "overlap categories of collectives: a staging copy's neighbour, a consumer's producer, the "   \
    "rows that bring the restructure options")                                                     \
  X(overlap_mechanism_actions, "overlap.mechanism_actions", BOOL, 0, 0, 0, NULL,                   \
    "the action follows the mechanism (deviation O8); false: by category and dep risk")            \
  X(overlap_multi_stream_min_pct, "overlap.multi_stream_min_pct", NUMBER, 0, 100, 0, NULL,         \
    "a stage runs several streams when they overlap at least this share of its busy time")         \
  X(overlap_never_row_categories, "overlap.never_row_categories", LIST, 0, 0, 0, NULL,             \
    "overlap categories that are never rows: the work others overlap with (O8)")                   \
  X(overlap_copy_engine_event_categories, "overlap.copy_engine_event_categories", LIST, 0, 0, 0,   \
    NULL, "trace event categories of copy-engine transfers (O8: overlap or prefetch)")             \
  X(overlap_serial_chain_fuse_categories, "overlap.serial_chain_fuse_categories", LIST, 0, 0, 0,   \
    NULL, "a serial (tight producer/consumer) row of these categories says fuse (O8)")             \
  X(overlap_one_time_min_fraction, "overlap.one_time_min_fraction", NUMBER, 0, 1, 0, NULL,         \
    "a copy with this fraction of its time before the stage's first compute is one-time")          \
  X(overlap_wait_categories, "overlap.wait.categories", LIST, 0, 0, 0, NULL,                       \
    "categories whose exposed excess over the steady cost is wait (rank skew), O8")                \
  X(overlap_wait_min_ratio, "overlap.wait.min_ratio", NUMBER, 0, 1e6, 0, NULL,                     \
    "wait at least this many times the steady exposed cost makes the row rank skew (O8)")          \
  X(overlap_wait_bubble_rules, "overlap.wait.bubble_rules", LIST, 0, 0, 0, NULL,                   \
    "dependency rules (dep_rule) whose wait is a pipeline bubble rather than rank skew")           \
  X(overlap_wait_unknown_min_ratio, "overlap.wait.unknown_min_ratio", NUMBER, 0, 1, 0, NULL,       \
    "a collective row with this share of its time in instances no like one compares with "         \
    "(alone) on a stage of unknown_min_steps steps or more says 'wait unknown'")                   \
  X(overlap_wait_unknown_min_steps, "overlap.wait.unknown_min_steps", INT, 0, 1000000, 0, NULL,    \
    "counted steps from which an alone collective's unknown wait withholds its overlap bound "     \
    "(a one-step capture keeps it)")                                                               \
  X(overlap_shared_launch_is_dependency, "overlap.shared_launch_is_dependency", BOOL, 0, 0, 0,     \
    NULL, "a tight neighbour with the same launch op or scope family is a dependency")             \
  X(overlap_formal_payload_votes, "overlap.formal_payload_votes", BOOL, 0, 0, 0, NULL,             \
    "the formal kernel map's sites vote for a scope next to the mapping evidence")                 \
  X(overlap_launch_scope_fallback, "overlap.launch_scope_fallback", BOOL, 0, 0, 0, NULL,           \
    "a kernel without a CPU-op context takes the Python frames at its launch")                     \
  X(overlap_uniform_scope_spelling, "overlap.uniform_scope_spelling", BOOL, 0, 0, 0, NULL,         \
    "every scope reads 'path:line func'; false: the winning vote's own spelling")                  \
  X(overlap_single_trace, "overlap.single_trace", BOOL, 0, 0, 0, NULL,                             \
    "a single-trace run fills the overlap table; false: the reference's placeholder row")          \
  X(overlap_plain_lines, "overlap.plain_lines", BOOL, 0, 0, 0, NULL,                               \
    "the reference layout prints plain lines under each overlap table (mode, busy, exposed, "      \
    "stage time); false: the reference's tables alone")                                            \
  X(overlap_copy_lane_top_n, "overlap.copy_lane.top_n", INT, 0, 100000, 0, NULL,                   \
    "copy-engine rows per stage, picked apart from the kernel rows by exposed time; 0: none")      \
  X(overlap_copy_lane_host_link_min_fraction, "overlap.copy_lane.host_link_min_fraction", NUMBER,  \
    0, 1, 0, NULL,                                                                                 \
    "a host copy row moving its bytes at less than this fraction of one direction of the "         \
    "device's host link is slow (a line under the table); 0: never")                               \
  X(overlap_recoverable_rank, "overlap.recoverable.rank", BOOL, 0, 0, 0, NULL,                     \
    "overlap rows are ranked by recoverable time per step; false: the reference's selection "      \
    "order")                                                                                       \
  X(overlap_recoverable_floor_ms, "overlap.recoverable.floor_ms", NUMBER, 0, 1e12, 0, NULL,        \
    "rows recovering less per step collapse into one line (one-time rows never do); 0: none")      \
  X(overlap_recoverable_min_step_pct, "overlap.recoverable.min_step_pct", NUMBER, 0, 100, 0, NULL, \
    "rows recovering less than this share of the step are under the bar: P5, in the floor line")   \
  X(overlap_staging_copy_min_fraction, "overlap.staging_copy_min_fraction", NUMBER, 0, 1, 0, NULL, \
    "sampled instances of a staging_copy_kernel whose CPU op is comm_buffer_copy_op: eliminate")   \
  X(overlap_restructure_options, "overlap.restructure_options", LIST, 0, 0, 0, NULL,               \
    "what to try on a single-stream stage, whose overlap rows recover nothing as it is")           \
  X(overlap_restructure_options_by_rule, "overlap.restructure_options_by_rule", LIST_MAP, 0, 0, 0, \
    NULL,                                                                                          \
    "per dependency rule id, what to try instead of restructure_options when the stage's first "   \
    "restructure collective row was classified by that rule (a recommender's embedding "           \
    "exchange is not an LLM's TP all-reduce)")                                                     \
  X(overlap_own_stream_levers, "overlap.own_stream_levers", LIST_MAP, 0, 0, 0, NULL,               \
    "per dependency rule id (default: any other), what puts compute beside a collective that "     \
    "already runs on a stream of its own (no stream to move it to)")                               \
  X(overlap_dependency_context_rules, "overlap.dependency.context_rules", LIST, 0, 0, 0, NULL,     \
    "dependency rules in order: matcher dep_<id> on the kernel name or a CPU op around its "       \
    "launch")                                                                                      \
  X(overlap_dependency_classes, "overlap.dependency.classes", LIST_MAP, 0, 0, 0, NULL,             \
    "per dependency rule id, its class (first item)")                                              \
  X(overlap_dependency_rule_categories, "overlap.dependency.rule_categories", LIST_MAP, 0, 0, 0,   \
    NULL, "per dependency rule id, the overlap categories it applies to (absent: every category)") \
  X(overlap_dependency_context_labels, "overlap.dependency.context_labels", LIST_MAP, 0, 0, 0,     \
    NULL,                                                                                          \
    "per dependency rule id, the launch context it names (first item); a collective's overlap "    \
    "row is split by the labelled rules its launches fall under (absent: not split)")              \
  X(overlap_dependency_serial_consumer_categories,                                                 \
    "overlap.dependency.serial_consumer_categories", LIST, 0, 0, 0, NULL,                          \
    "a collective whose tight next kernel on its stream has this kernel category feeds it: "       \
    "serial")                                                                                      \
  X(overlap_dependency_independent_classes, "overlap.dependency.independent_classes", LIST, 0, 0,  \
    0, NULL,                                                                                       \
    "dependency classes whose kernel can run beside other work: only they are told to overlap")    \
  X(names_mask_every_hex, "names.mask_every_hex", BOOL, 0, 0, 0, NULL,                             \
    "canonical names mask every 0x run; false: only real addresses (docs/names.md)")               \
  X(names_display_max_chars, "names.display_max_chars", INT, 40, 100000, 0, NULL,                  \
    "display names are cut to this many characters")                                               \
  X(names_display_collapse_chars, "names.display_collapse_chars", INT, 1, 100000, 0, NULL,         \
    "display names longer than this have nested template arguments collapsed")                     \
  X(summary_max_items, "summary.max_items", INT, 0, 1000, 0, NULL,                                 \
    "lines of the report's 'What to try first' list")                                              \
  X(summary_weights, "summary.weights", NUMBER_MAP, 0, 1000, 1, TE_SUMMARY_ACTION_IDS,             \
    "rank weight per summary action (sync, tune, chain, ...): score = weight * bound per step")    \
  X(summary_min_share_pct, "summary.min_share_pct", NUMBER, 0, 100, 0, NULL,                       \
    "summary items whose bound is under this share of their stage's step are left out")            \
  X(summary_min_bound_us, "summary.min_bound_us", NUMBER, 0, 1e12, 0, NULL,                        \
    "summary items whose bound is under this many microseconds per step are left out, whatever "   \
    "their share of the step")                                                                     \
  X(summary_pool_below_pct, "summary.pool_below_pct", NUMBER, 0, 100, 0, NULL,                     \
    "items of one stage and one poolable kind (host stalls, fusion passes) each under this share " \
    "of the step are one item: their sum and their list (docs/report.md)")                         \
  X(summary_lead_below_pct, "summary.lead_below_pct", NUMBER, 0, 100, 0, NULL,                     \
    "an item under this share of the step whose lever is hedged goes on the unnumbered 'Smaller "  \
    "leads' line")                                                                                 \
  X(summary_hedged_levers, "summary.hedged_levers", LIST, 0, 0, 0, NULL,                           \
    "lever ids (summary.levers) whose change the trace cannot show is available: their items "     \
    "are hedged")                                                                                  \
  X(summary_investigate_min_pct, "summary.investigate_min_pct", NUMBER, 0, 100, 0, NULL,           \
    "a kernel category of this share of the step that no item bounds gets an investigate item")    \
  X(summary_investigate_min_us, "summary.investigate_min_us", NUMBER, 0, 1e12, 0, NULL,            \
    "... and of at least this much GPU time per step (a few microseconds are nothing to find)")    \
  X(summary_bottleneck_idle_pct, "summary.bottleneck_idle_pct", NUMBER, 0, 1000, 0, NULL,          \
    "host-side idle plus collective wait from this share of a step: no GPU-side items there")      \
  X(summary_stall_min_gap_us, "summary.stall_min_gap_us", NUMBER, 0, 1e12, 0, NULL,                \
    "a named host cause whose gaps average this long is a host stall item of its own")             \
  X(summary_stall_max_gaps_per_step, "summary.stall_max_gaps_per_step", INT, 0, 1000000000, 0,     \
    NULL, "a host stall is at most this many gaps per step; more is spread (launch-bound) cost")   \
  X(summary_launch_bound_min_pct, "summary.launch_bound_min_pct", NUMBER, 0, 100, 0, NULL,         \
    "the rest of the host-side idle makes a launch-bound item from this share of the step")        \
  X(summary_chain_categories, "summary.chain_categories", LIST, 0, 0, 0, NULL,                     \
    "kernel categories of eager elementwise and copy chains (one fuse-the-chain item)")            \
  X(summary_chain_exclude_kinds, "summary.chain_exclude_kinds", LIST, 0, 0, 0, NULL,               \
    "kernel kinds of those categories that are no chain link (KV writes, gathers, sorts)")         \
  X(summary_chain_max_graph_pct, "summary.chain_max_graph_pct", NUMBER, 0, 100, 0, NULL,           \
    "a stage is eager (chain item, CUDA-graph advice) below this share of graph-replayed time")    \
  X(summary_carries_out, "summary.carries_out", LIST_MAP, 0, 0, 0, TE_SUMMARY_ACTION_IDS,          \
    "action id -> [action ids whose lever it carries out itself]: merged into an item of the "     \
    "action, an item of those is evidence, not a change 'not additive' with it")                   \
  X(summary_straggler_first_min_pct, "summary.straggler_first_min_pct", NUMBER, 0, 100, 0, NULL,   \
    "collective wait is a late rank when this share of it is at the step's first collective")      \
  X(summary_levers, "summary.levers", LIST_MAP, 0, 0, 0, NULL,                                     \
    "lever id -> [what to change]: a host stall whose longest operation (or activity) the "        \
    "matcher lever_ID names gets it")                                                              \
  X(summary_lever_paths, "summary.lever_paths", LIST_MAP, 0, 0, 0, NULL,                           \
    "lever id/framework/platform (cuda, rocm; any) -> [the framework's own path]: replaces "       \
    "the lever's generic text on a run of that framework and platform")                            \
  X(summary_lever_in_use, "summary.lever_in_use", LIST_MAP, 0, 0, 0, NULL,                         \
    "lever id/framework/platform (as lever_paths) -> [the text when the run shows that path in "   \
    "use]: replaces the path's text where matcher lever_ID_in_use names a kernel, or a shown "     \
    "site's location or stack, of the run")                                                        \
  X(summary_sync_levers, "summary.sync_levers", LIST, 0, 0, 0, NULL,                               \
    "lever ids (summary.levers) that name a sync: only an item with a synchronising call in "      \
    "evidence (a sync item) gets them")                                                            \
  X(summary_no_sync_levers, "summary.no_sync_levers", LIST, 0, 0, 0, NULL,                         \
    "lever ids (summary.levers) whose text says no call in the gap waited on the GPU: a trace "    \
    "filtered to GPU work, which drops syncs, never gets them")                                    \
  X(summary_shared_changes, "summary.shared_changes", LIST_MAP, 0, 0, 0, NULL,                     \
    "a change -> [action ids it is the lever of]: the items of one stage whose actions share a "   \
    "change are one pooled item naming it, their bounds summed")                                   \
  X(summary_compile_changes, "summary.compile_changes", LIST, 0, 0, 0, NULL,                       \
    "changes of summary.shared_changes that compile the code: a run that executed "                \
    "torch.compile'd code gets no pooled item naming them")                                        \
  X(summary_kernel_levers, "summary.kernel_levers", LIST, 0, 0, 0, NULL,                           \
    "lever ids (summary.levers) whose matcher names kernels the change removes: one item each, "   \
    "bounded by their time alone on the GPU")                                                      \
  X(summary_lever_bytes_kept, "summary.lever_bytes_kept", NUMBER_MAP, 0.01, 0.99, 1, NULL,         \
    "kernel lever id -> the share of its kernels' bytes its change keeps (a narrower dtype): "     \
    "bound their time alone x (1 - it); a lever not listed removes or folds its kernels")          \
  X(summary_lever_titles, "summary.lever_titles", LIST_MAP, 0, 0, 0, NULL,                         \
    "kernel lever id -> [the action its item states], for a change that does not remove its "      \
    "kernels")                                                                                     \
  X(summary_precision_families, "summary.precision_families", LIST, 0, 0, 0, NULL,                 \
    "roofline op families (GEMM, attention) whose 16-bit rows make one FP8 precision item in a "   \
    "serving run")                                                                                 \
  X(summary_precision_dtypes, "summary.precision_dtypes", LIST, 0, 0, 0, NULL,                     \
    "roofline formats of those rows that a lower precision halves (bf16, fp16)")                   \
  X(summary_batch_families, "summary.batch_families", LIST, 0, 0, 0, NULL,                         \
    "op families of weight GEMMs whose bytes a step reads once for all its tokens (the batch "     \
    "lever: a decode step whose rows of these families are all memory-bound)")                     \
  X(summary_batch_min_pct, "summary.batch_min_pct", NUMBER, 0, 100, 0, NULL,                       \
    "the batch lever needs its memory-bound weight GEMMs to take this share of the step")          \
  X(summary_batch_step, "summary.batch_step", NUMBER, 1, 1e6, 0, NULL,                             \
    "the factor the batch lever's bound raises the batch by (at most the GEMMs' ridge)")           \
  X(summary_cast_hints, "summary.cast_hints", LIST_MAP, 0, 0, 0, NULL,                             \
    "what a cast item says of the cast by the kernel after it: id -> text, the kernel named by "   \
    "matcher cast_next_ID")                                                                        \
  X(summary_cast_min_pct, "summary.cast_min_pct", NUMBER, 0, 100, 0, NULL,                         \
    "cast kernels (matcher cast_kernel: a fused op list of dtype casts only) make an item from "   \
    "this share of the step")                                                                      \
  X(summary_precision_min_pct, "summary.precision_min_pct", NUMBER, 0, 100, 0, NULL,               \
    "the precision item needs its rows to take this share of the step")                            \
  X(summary_fp32_categories, "summary.fp32_categories", LIST, 0, 0, 0, NULL,                       \
    "kernel categories of matmul work (GEMMs, convolutions) the FP32 matmul item weighs")          \
  X(summary_fp32_min_matmul_pct, "summary.fp32_min_matmul_pct", NUMBER, 0, 100, 0, NULL,           \
    "autocast is offered when FP32 and TF32 matmul kernels hold this share of the matmul time")    \
  X(summary_fp32_tf32_lead_pct, "summary.fp32_tf32_lead_pct", NUMBER, 0, 100, 0, NULL,             \
    "TF32 leads the FP32 matmul item when it wins at least this share of what autocast wins")      \
  X(summary_fp32_levers, "summary.fp32_levers", LIST_MAP, 0, 0, 0, NULL,                           \
    "the FP32 matmul item's lever by the format it moves to (TF32, or autocast to bf16, fp16)")    \
  X(summary_gemm_rate_categories, "summary.gemm_rate_categories", LIST, 0, 0, 0, NULL,             \
    "kernel categories of matmul work whose rate against its attainable one the summary states")   \
  X(summary_gemm_near_pct, "summary.gemm_near_pct", NUMBER, 0, 100, 0, NULL,                       \
    "a matmul row at this share of its attainable rate or more runs near it (little to tune)")     \
  X(summary_gemm_near_min_pct, "summary.gemm_near_min_pct", NUMBER, 0, 100, 0, NULL,               \
    "the summary says a stage's GEMMs run near their attainable rate from this share of its "      \
    "kernel time in matmul kernels")                                                               \
  X(summary_gemm_near_share_pct, "summary.gemm_near_share_pct", NUMBER, 0, 100, 0, NULL,           \
    "the summary says a stage's GEMMs run near their attainable rate when this share of its "      \
    "matmul time is in rows near it")                                                              \
  X(summary_tune_group_families, "summary.tune_group_families", LIST, 0, 0, 0, NULL,               \
    "roofline op families one backend serves (a GEMM library): their kernels to tune are one "     \
    "item")                                                                                        \
  X(report_step_categories_below_pct, "report.step_categories_below_pct", NUMBER, 0, 100, 0, NULL, \
    "a stage whose counted steps hold under this share of its kernel time also gives its time by " \
    "category per counted step")                                                                   \
  X(report_short_window_ms, "report.short_window_ms", NUMBER, 0, 1e12, 0, NULL,                    \
    "a stage whose counted steps span less GPU time than this gets a short-capture-window "        \
    "hint")                                                                                        \
  X(report_filtered_min_runtime_calls, "report.filtered_min_runtime_calls", INT, 1, 1e9, 0, NULL,  \
    "a trace is read as filtered to GPU work when it has at least this many runtime calls, "       \
    "each launched GPU work and each CPU op holds one (analysis/trace_filter.h)")                  \
  X(report_filtered_min_op_pct, "report.filtered_min_op_pct", NUMBER, 0, 100, 0, NULL,             \
    "with report.filtered_min_runtime_calls: the least share of CPU ops holding a runtime "        \
    "call that says filtered")                                                                     \
  X(report_filtered_queued_min_pct, "report.filtered_queued_min_pct", NUMBER, 0, 100, 0, NULL,     \
    "on a filtered trace, the line above the items gives the stage's GPU idle with its next work " \
    "queued (which makes no item there) when it is at least this share of the stage's span")       \
  X(report_stack_hints, "report.stack_hints", LIST_MAP, 0, 0, 0, NULL,                             \
    "per framework id (or 'other'), how to record a trace with Python stacks")                     \
  X(ranks_communication_categories, "ranks.communication_categories", LIST, 0, 0, 0, NULL,         \
    "kernel categories that are collectives: matched across ranks, their wait measured")           \
  X(ranks_memory_categories, "ranks.memory_categories", LIST, 0, 0, 0, NULL,                       \
    "kernel categories counted as memory time in the rank table (the rest is compute)")            \
  X(ranks_straggler_min_share_pct, "ranks.straggler_min_share_pct", NUMBER, 0, 100, 0, NULL,       \
    "a group has a straggler when the others wait at least this share of their GPU time")          \
  X(ranks_straggler_min_consistency_pct, "ranks.straggler_min_consistency_pct", NUMBER, 0, 100, 0, \
    NULL,                                                                                          \
    "a straggler is named when at least this share of the loss waits for it; less is spread wait") \
  X(ranks_same_group_spread_us, "ranks.same_group_spread_us", NUMBER, 0, 1e9, 0, NULL,             \
    "two ranks run a collective together when its instances' end differences stay this close")     \
  X(ranks_cause_min_share_pct, "ranks.cause_min_share_pct", NUMBER, 0, 100, 0, NULL,               \
    "a straggler's longer compute or idle names the cause when it explains this share of its "     \
    "delay")                                                                                       \
  X(ranks_imbalance_pct, "ranks.imbalance_pct", NUMBER, 0, 1e6, 0, NULL,                           \
    "a kernel is imbalanced when its time on the slowest rank exceeds the fastest by this")        \
  X(ranks_imbalance_min_share_pct, "ranks.imbalance_min_share_pct", NUMBER, 0, 100, 0, NULL,       \
    "imbalance rows only for kernels holding at least this share of a rank's GPU time")            \
  X(diff_noise_floor_pct, "diff.noise_floor_pct", NUMBER, 0, 1e6, 0, NULL,                         \
    "a change smaller than this share of the before time is noise, never a regression")            \
  X(diff_noise_sigma, "diff.noise_sigma", NUMBER, 0, 100, 0, NULL,                                 \
    "a stage's data floor is this many relative standard deviations of its per-step or per-rank "  \
    "GPU time")                                                                                    \
  X(diff_resolve_max_floor_pct, "diff.resolve_max_floor_pct", NUMBER, 0, 1e6, 0, NULL,             \
    "a stage whose noise floor is wider than this cannot tell a change under it from noise: its "  \
    "rows within the floor are not resolved rather than within noise")                             \
  X(diff_spread_min_steps, "diff.spread_min_steps", INT, 2, 100000, 0, NULL,                       \
    "a stage's per-step spread counts from this many steps (fewer: the packs' floor alone)")       \
  X(diff_noise_floor_us, "diff.noise_floor_us", NUMBER, 0, 1e15, 0, NULL,                          \
    "a change smaller than this many microseconds is noise, never a regression")                   \
  X(diff_category_kernels_pct, "diff.category_kernels_pct", NUMBER, 0, 100, 0, NULL,               \
    "a category is slower or faster when its kernels that changed beyond the floor that way "      \
    "carry this share of its change (else within noise)")                                          \
  X(diff_biggest_rows, "diff.biggest_rows", INT, 0, 100000, 0, NULL,                               \
    "kernels in the diff's Biggest changes table")                                                 \
  X(live_remote_probe_delay_min_s, "live.remote_probe_delay_min_s", NUMBER, 0, 86400, 0, NULL,     \
    "least delay between start_profile and the probe requests for non-SGLang servers")             \
  X(live_timeout_info_s, "live.timeout.info_s", NUMBER, 0, 86400, 0, NULL,                         \
    "seconds for a server info request (models, server args, probes); --http-timeout wins")        \
  X(live_timeout_request_s, "live.timeout.request_s", NUMBER, 0, 86400, 0, NULL,                   \
    "seconds for one workload request")                                                            \
  X(live_timeout_start_sglang_s, "live.timeout.start_sglang_s", NUMBER, 0, 86400, 0, NULL,         \
    "seconds for start_profile on SGLang")                                                         \
  X(live_timeout_start_remote_s, "live.timeout.start_remote_s", NUMBER, 0, 86400, 0, NULL,         \
    "seconds for start_profile on the other servers")                                              \
  X(live_timeout_stop_s, "live.timeout.stop_s", NUMBER, 0, 86400, 0, NULL,                         \
    "seconds for stop_profile")                                                                    \
  X(live_timeout_stop_after_interrupt_s, "live.timeout.stop_after_interrupt_s", NUMBER, 0, 86400,  \
    0, NULL, "seconds for stop_profile after Ctrl-C")                                              \
  X(live_timeout_wait_sglang_s, "live.timeout.wait_sglang_s", NUMBER, 0, 86400, 0, NULL,           \
    "seconds to wait for SGLang's trace files (TRIAGE_LIVE_TRACE_WAIT_S wins)")                    \
  X(live_timeout_wait_remote_s, "live.timeout.wait_remote_s", NUMBER, 0, 86400, 0, NULL,           \
    "seconds to wait for the other servers' trace files (TRIAGE_LIVE_TRACE_WAIT_S wins)")          \
  X(framework_sample_traces, "framework.sample_traces", INT, 0, 1000000, 0, NULL,                  \
    "trace files per side whose first events are searched for a framework's name")                 \
  X(framework_frame_sample, "framework.frame_sample", INT, 0, 10000000, 0, NULL,                   \
    "distinct Python frame names per trace that vote for the framework when no path, server "      \
    "args or trace sample names it; 0: frames are not read (the reference)")                       \
  X(framework_name_sample, "framework.name_sample", INT, 0, 10000000, 0, NULL,                     \
    "distinct CPU-op, annotation and kernel names per trace that vote for the framework when "     \
    "nothing else names it (TorchRec's awaitables, DDP's forward); 0: names are not read (the "    \
    "reference)")                                                                                  \
  X(framework_content_before_path, "framework.content_before_path", BOOL, 0, 0, 0, NULL,           \
    "true: what the traces hold (first events, Python frames) names the framework before an "      \
    "input path does; false: the path first (the reference)")                                      \
  X(roofline_tune_below_pct, "roofline.tune_below_pct", NUMBER, 0, 100, 0, NULL,                   \
    "a kernel row is a tuning candidate only below this % of its attainable rate "                 \
    "(docs/roofline.md); at or above it and memory-bound, the lever is fewer bytes")               \
  X(roofline_family_attainable, "roofline.family_attainable", BOOL, 0, 0, 0, NULL,                 \
    "true: a row slower than a comparable row of the run is measured against that row's rate "     \
    "when it is below the device pack's fraction (the family's best observed rate)")               \
  X(roofline_balanced_ratio, "roofline.balanced_ratio", NUMBER, 1, 1e6, 0, NULL,                   \
    "a row whose larger roofline term (its bytes at the HBM peak, its FLOPs at its format's "      \
    "peak) is within this factor of the smaller is balanced: both bound it (docs/roofline.md)")    \
  X(roofline_levers, "roofline.levers", LIST_MAP, 0, 0, 0, NULL,                                   \
    "the lever of a roofline tuning item by op family and platform (\"attention/rocm\", "          \
    "\"gemm/any\")")                                                                               \
  X(roofline_levers_running, "roofline.levers_running", LIST_MAP, 0, 0, 0, NULL,                   \
    "the lever when the item's kernel already runs on a library the lever proposes "               \
    "(\"attention/rocm/ck_fmha\"; matcher lever_lib_LIB)")                                         \
  X(roofline_levers_folding, "roofline.levers_folding", LIST_MAP, 0, 0, 0, NULL,                   \
    "levers_running keys whose lever folds the kernel into the GEMM before it, run by another "    \
    "library: the op families of that GEMM (the bound is the kernel's whole time, less any "       \
    "slowdown of the GEMM it replaces)")                                                           \
  X(roofline_levers_unfolded, "roofline.levers_unfolded", LIST_MAP, 0, 0, 0, NULL,                 \
    "levers_folding keys: the lever of the kernel itself, offered first when it runs under "       \
    "tune_below_pct of its attainable rate (a better kernel risks no GEMM), the fold after it")    \
  X(roofline_comparable_min_us, "roofline.comparable_min_us", NUMBER, 0, 1e15, 0, NULL,            \
    "a row sets the in-trace attainable rate of its family only with this much GPU time over "     \
    "its launches with shapes")                                                                    \
  X(roofline_comparable_min_launches, "roofline.comparable_min_launches", INT, 1, 1000000000, 0,   \
    NULL, "... and at least this many launches with shapes")                                       \
  X(roofline_comparable_launch_us, "roofline.comparable_launch_us", NUMBER, 0, 1e15, 0, NULL,      \
    "one launch with shapes from its own CPU op of at least this much GPU time is evidence of "    \
    "its rate on its own (its family's best observed rate counts its fastest such launch)")        \
  X(roofline_launch_ramp, "roofline.launch_ramp", BOOL, 0, 0, 0, NULL,                             \
    "true: a launch's time at a rate is its latency floor plus its work at the rate (a launch "    \
    "of a few MB reaches well under a GB launch's rate), and a rate as evidence is its work "      \
    "over its time past its launches' floors; false: the larger of floor and work at the rate")    \
  X(roofline_evidence_max_floor_pct, "roofline.evidence_max_floor_pct", NUMBER, 0, 100, 0, NULL,   \
    "with roofline.launch_ramp, a row's or launch's rate is evidence of an attainable rate only "  \
    "when its launches' floors are at most this % of its time")                                    \
  X(roofline_size_match_factor, "roofline.size_match_factor", NUMBER, 1, 1e6, 0, NULL,             \
    "a memory-bound row's rate is evidence of another row's attainable rate only when its "        \
    "bytes per launch are at most this many times the other's")                                    \
  X(roofline_outlier_below_pct, "roofline.outlier_below_pct", NUMBER, 0, 100, 0, NULL,             \
    "a tuning item names the one shape of its kernels (or one kernel without shapes) running "     \
    "under this % of each sibling's rate and bounds tuning it to their rate together")             \
  X(roofline_attention_ceiling, "roofline.attention_ceiling", NUMBER_MAP, 0, 1, 0,                 \
    TE_ATTENTION_CEILING_POINTS,                                                                   \
    "the best published forward rate of attention as a fraction of its format's dense peak, by "   \
    "masking, head_dim and KV length (\"causal/64/512\"): a compute-bound attention row's "        \
    "attainable rate is at most it (its head_dim's curve, the KV length interpolated)")            \
  X(roofline_attention_ceiling_basis, "roofline.attention_ceiling_basis", LIST, 0, 0, 0, NULL,     \
    "the source of roofline.attention_ceiling, as the report cites it (one entry)")                \
  X(roofline_compute_peers, "roofline.compute_peers", LIST, 0, 0, 0, NULL,                         \
    "op families whose compute-bound rows of one format are comparable with one another "          \
    "(matrix-core work: a grouped GEMM and a dense GEMM)")                                         \
  X(roofline_shapes_per_row, "roofline.shapes_per_row", INT, 0, 1000, 0, NULL,                     \
    "distinct CPU-op shapes listed per kernel row's roofline, by GPU time (JSON)")                 \
  X(roofline_model_stages, "roofline.model_stages", LIST, 0, 0, 0, NULL,                           \
    "stage ids whose graph-replayed GEMMs may take shapes from a known model's dimensions "        \
    "(one token a sequence: decode)")                                                              \
  X(roofline_model_gemm_categories, "roofline.model_gemm_categories", LIST, 0, 0, 0, NULL,         \
    "kernel categories of the launches a model's decode plan costs as its dense GEMMs")            \
  X(roofline_attention_phase_keys, "roofline.attention_phase_keys", LIST, 0, 0, 0, NULL,           \
    "step-annotation keys of the phases whose (sq, sk, sqsq, sqsk) sums give an attention "        \
    "launch's KV reads and score count (docs/roofline.md \"Attention\")")

#define TE_SETTING_CTYPE_NUMBER double
#define TE_SETTING_CTYPE_INT long
#define TE_SETTING_CTYPE_BOOL bool
#define TE_SETTING_CTYPE_ENUM int
#define TE_SETTING_CTYPE_LIST te_string_list
#define TE_SETTING_CTYPE_NUMBER_MAP te_number_map
#define TE_SETTING_CTYPE_LIST_MAP te_list_map

/* Every setting, resolved. Member names are the keys with '.' -> '_'. */
typedef struct te_settings {
#define TE_SETTING_MEMBER(member, key, type, min, max, absent, choices, meaning) \
  TE_SETTING_CTYPE_##type member;
  TE_SETTINGS(TE_SETTING_MEMBER)
#undef TE_SETTING_MEMBER
} te_settings;

/* One row of the table. */
typedef struct te_setting_def {
  const char *key;
  te_setting_type type;
  double min, max;     /* NUMBER, INT, NUMBER_MAP */
  double absent;       /* NUMBER_MAP */
  const char *choices; /* ENUM: "a|b|c" */
  const char *meaning;
  size_t offset; /* of the member in te_settings */
} te_setting_def;

size_t te_setting_def_count(void);
const te_setting_def *te_setting_def_at(size_t i);
/* The row of a dotted key, or NULL. */
const te_setting_def *te_setting_def_find(const char *key);
/* True when key is a proper prefix group of some row ("overlap", "overlap.headroom"). */
bool te_setting_is_group(const char *key);
/* "number", "whole number", "true or false", "one of a, b", "list of strings", ... */
const char *te_setting_type_name(te_setting_type t);

/* Value of id in m, or m->absent. */
double te_number_map_get(const te_number_map *m, const char *id);
/* The list of id in m, or NULL. */
const te_string_list *te_list_map_get(const te_list_map *m, const char *id);
/* True when l holds item. l may be NULL. */
bool te_string_list_has(const te_string_list *l, const char *item);

#ifdef __cplusplus
}
#endif
#endif
