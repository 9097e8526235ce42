/*
 * util/limits.h - every hard limit of src/: traces, analysis, display names, reports, the
 * command line and live capture, one section each. The engine's own limits (rule packs)
 * are in engine/include/triage/limits.h: the engine stands alone and cannot include src/.
 * Exceeding a limit is an error naming it (docs/errors.md), never a silent cut, unless
 * its comment says otherwise; tests/bad-input has a just-over case for each.
 */
#ifndef TRIAGE_UTIL_LIMITS_H
#define TRIAGE_UTIL_LIMITS_H

/* ---- traces (src/trace) ---- */

/* JSON nesting depth of a trace. Kineto nests 4 deep (root, traceEvents, event, args). */
#define TR_MAX_JSON_DEPTH 512
/* Bytes of one JSON string the trace reader stores (kernel names with templates reach a
 * few KB). Strings it skips (Input Dims, unknown args) may be of any length: skipping
 * them holds no memory. */
#define TR_MAX_STRING_BYTES (1u * 1024u * 1024u)
/* Bytes of one kept event arg as stored (trace.h tr_arg: Input Dims, Concrete Inputs, ...
 * as compact JSON). Real values stay under 2 KB (a cat of a few hundred tensors); a
 * longer one is dropped and counted (tr_trace_args_dropped), never an error: the trace
 * is still read, and the launches of that op get no shapes. */
#define TR_MAX_ARG_BYTES (64u * 1024u)
/* Events read from one trace (all phases, kept or not). */
#define TR_MAX_EVENTS 500000000ull
/* Bytes of server_args.json, kernel maps and other whole-document JSON. */
#define TR_MAX_SMALL_JSON_BYTES (64u * 1024u * 1024u)
/* Characters of one JSON number token (real ones have < 25). */
#define TR_MAX_NUMBER_CHARS 4096u
/* Bytes of the framework-detection text sample (tr_trace_sample_text); longer samples are
 * cut, which only weakens a heuristic hint. */
#define TR_MAX_SAMPLE_BYTES (4u * 1024u * 1024u)
/* Entries kept from each list of the trace's run metadata (deviceProperties,
 * distributedInfo.pg_config and each group's ranks); the rest is skipped, since real jobs
 * list at most a few thousand ranks and the analysis needs the first few. */
#define TR_MAX_META_ITEMS 4096u
/* Bytes of a rank file's host_name kept by directory discovery (DNS names have at most
 * 253); a longer one is dropped, never cut. */
#define TR_MAX_HOST_NAME 256u
/* Trace files considered in one profile directory. */
#define TR_MAX_DIR_FILES 100000
/* Sub-directory depth searched below a profile directory (runs nest 2-3 deep). */
#define TR_MAX_DIR_DEPTH 32

/* ---- analysis (src/analysis) ---- */

/* Threads reading the ranks of one directory (TRIAGE_WORKERS, else the online CPUs).
 * Each holds one rank's events at a time, so memory grows with the count; more threads
 * than this gain nothing on any machine triage runs on and a typo could ask for
 * millions. */
#define AN_MAX_WORKERS 256u
/* Stages the rule packs may define: the trace view keeps each kernel's stage as its
 * index in 16 bits (2 bytes a kernel event, where a pointer took 8). Packs define a
 * handful; a view of rules with more fails with AN_ERR_RULES. */
#define AN_MAX_STAGES 65534u
/* Kernels of one stage running at once, as the overlap sweep meets them. Its work per
 * kernel start and end grows with this count (the active streams, each one's kernels and
 * their partners): 40,000 kernels all running at once took 31 s, and ten times as many
 * would take hours. A GPU runs a few hundred at most (128 hardware queues on recent
 * parts); more means broken durations or devices merged into one process, and the run
 * stops with the limit's name. */
#define AN_MAX_ACTIVE_KERNELS 4096u
/* Candidate kernels per piece a fusion pattern's chain gate weighs (the rows of the
 * piece's category its matcher hits, largest first). Real stages have a handful; the
 * cap bounds the pairs weighed when a broad matcher hits thousands of names. */
#define AN_MAX_CHAIN_CANDIDATES 16u
/* Distinct rider kernels (a pattern's chain.riders: the Q/K contiguous copies) one chain
 * tuple takes along; a layer's chain has one or two. */
#define AN_MAX_CHAIN_RIDERS 4u
/* Sibling GEMMs one merge run holds (fuse_merge.c): Q, K, V or gate, up are three and two;
 * a LoRA or a multi-head projection set a few more. A longer run ends at the cap. */
#define AN_MAX_MERGE_SIBLINGS 8u
/* Distinct sibling shapes one merge row states in its evidence (the rest are counted). */
#define AN_MAX_MERGE_SHAPES 4u

/* Inputs of one CPU op read by an op cost model (Input Dims entries): an op with more is
 * not modelled (its launches count as bad shapes). Real ops take under 40. */
#define AN_MAX_OP_INPUTS 256u
/* Dimensions of one tensor in Input Dims (real tensors have at most 8). */
#define AN_MAX_SHAPE_RANK 16u
/* Elements of one tensor (2^44, 35 TB of bf16): a shape past it is absurd, not a tensor
 * any GPU holds, and its launch counts as bad shapes instead of feeding a roofline. */
#define AN_MAX_TENSOR_ELEMENTS (1ull << 44)
/* Characters of a collective's name kept in a generic NCCL kernel's row name
 * (analysis/collective_names.h); real ones are under 40 ("allgather_into_tensor_coalesced"). */
#define AN_MAX_COLLECTIVE_WORD 48u
/* a staging copy's communication-buffer CPU op name kept on its overlap row (longer names
 * are cut: the lever matcher reads the prefix, DDP's are under 60 bytes) */
#define AN_MAX_STAGING_OP_BYTES 256u
/* Long blocking reads back a trace's time account examines (analysis/timeline_host.c
 * collect_readbacks: calls of at least timeline.long_gap_us each); the rest are not named:
 * a capture holds a few a step (hta_multistream5: 5, hta_async_cpu_to_gpu: 17), and each
 * one read costs a pass over the trace's GPU events. */
#define AN_MAX_READBACKS 256u
/* Distinct collective ops told apart among one overlap row's sampled launches
 * (analysis/overlap.c ov_collective_op); a kernel name serves at most a handful (NCCL's
 * SendRecv: all-to-all, reduce-scatter, all-reduce, all-gather, send/recv). */
#define AN_MAX_COLLECTIVE_OPS 8u

/* Template arguments of one kernel name the diff compares argument by argument
 * (analysis/kernel_template.h). Real names carry up to ~12 (CUTLASS); a name with more is
 * not split, so its kernel is never paired by its arguments (not an error). */
#define AN_TEMPLATE_ARGS_MAX 32u
/* Evidence rows a summary item links besides its own (analysis/model.h an_summary_item.more):
 * rows of the same root cause merged into it, the kernel rows of a family item, the
 * time-account rows of a collective whose time an overlap item quotes. Every row a basis
 * quotes is to be linked (review 9), so this holds the widest real items: SGLang Qwen3-8B
 * decode's precision item (its own row and 5 GEMM and attention rows), hta_multistream5's
 * dependency item (5 idle, wait and overlap rows besides its own); 3 cut their links (brief
 * items-12 defect 2). Past it a row is still merged, and the line counts it ("and N more
 * rows"): hf_qwen's eager chain merges 9 kernel and fusion rows. */
#define AN_ITEM_MORE 8u
/* Tensors of one op's Input Dims a fold item compares (analysis/summary_roofline.c: the
 * folded kernel's input against the GEMMs' shapes): a gated activation's op has 2 (out,
 * in), a GEMM's 2 or 3 (addmm's or linear's bias); past it a tensor is not compared. */
#define AN_FOLD_TENSORS_MAX 8u
/* Python locations an eager-chain item names as where its time sits (an_summary_item.frames),
 * largest first; the others are counted in the kernel rows' sites. */
#define AN_ITEM_FRAMES 3u

/* ---- display names (src/report/names.c) ---- */

/* Bytes of the longest mangled name handed to the demangler. The GNU demangler keeps
 * about 72 bytes of stack per input byte (its component arrays are stack arrays), so
 * this bounds its stack to ~600 KiB; real mangled kernel names reach ~1.7 KB. Longer
 * names are shown as they are. */
#define RP_MAX_DEMANGLE_BYTES 8192u
/* Bytes of demangled text kept from one name. Back-references let a few hundred mangled
 * bytes stand for gigabytes of text (each level can double it); demangling stops once
 * the text passes this limit and the name is shown mangled. Real names stay < 16 KiB. */
#define RP_MAX_DEMANGLED_BYTES (64u * 1024u)

/* ---- reports (src/report) ---- */

/* Nesting of the objects and arrays a streamed JSON document opens itself
 * (report/json_stream.c); the code opens four at most, and the parts it prints whole
 * nest as deep as they like. */
#define RP_JSON_STREAM_DEPTH 16u

/* Idle causes listed per step in the JSON report's timeline (the stage's list is whole;
 * a step's idle_by_kind still sums to its idle time). A run of thousands of steps would
 * otherwise repeat every cause thousands of times. */
#define RP_TIMELINE_STEP_CAUSES 3u
/* Idle causes listed in a stage's Markdown time account (those a summary item links to
 * always are); the rest are counted in one line and listed in the JSON report. */
#define RP_TIMELINE_CAUSES_SHOWN 10u
/* Time-account rows an item's evidence names in Markdown and HTML (their table shows them
 * too); the rest are counted, and all are in the JSON report's item "rows". */
#define RP_ITEM_ROWS_SHOWN 4u
/* A time under this many microseconds (above 0) prints in us, not ms (rp_prints_in_us:
 * the Markdown headline and the short-window lines): "0.00 ms" hid a 1.76 us kernel. */
#define RP_PRINT_US_BELOW_US 5.0

/* ---- the command line (src/cli) ---- */

/* Bytes of one JSON report `triage merge` reads back whole (a one-rank report holds every
 * kernel row of its rank: hundreds of MB for a trace of a few hundred thousand kernel
 * names); diff and bundle read at most TR_MAX_SMALL_JSON_BYTES. */
#define CLI_MAX_RANK_REPORT_BYTES (1024u * 1024u * 1024u)

/* ---- live capture (src/live) ---- */

/* Bytes of one HTTP reply body that live capture reads. */
#define LV_MAX_REPLY_BYTES (16u * 1024u * 1024u)
/* Seconds to establish a TCP connection. A server on the network answers SYN in
 * milliseconds; waiting longer only delays the "cannot connect" message. */
#define LV_CONNECT_TIMEOUT_S 3L
/* Upper bound on any one request or wait, whatever --http-timeout or the environment
 * asks for, so a typo cannot make triage hang for days. */
#define LV_MAX_STEP_TIMEOUT_S 86400.0
/* Period of the trace-file poll after stop_profile. */
#define LV_POLL_INTERVAL_MS 500L
/* Requests one stage sends (warm-up plus capture); more is a typo, not a workload. */
#define LV_MAX_REQUESTS_PER_STAGE 100000L
/* Words in one synthetic prompt (--prefill-input-len and friends). */
#define LV_MAX_PROMPT_WORDS 1000000L
/* Trace files looked at in one profile directory while waiting for new ones. */
#define LV_MAX_DIR_ENTRIES 100000L
/* Directory depth searched below an SGLang output_dir for its trace files. */
#define LV_MAX_SCAN_DEPTH 3
/* Bytes of a server's error text quoted in a one-line failure message. */
#define LV_ERROR_SNIPPET_BYTES 200

#endif
