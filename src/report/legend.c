/*
 * report/legend.c - the Legend's words (legend.h): one list for the Markdown and HTML
 * reports, so the two can no longer say different things (audit 12: they were two
 * hand-kept copies, the HTML one five entries short and defining Priority differently).
 * Every verdict, recommendation, priority, confidence, idle-cause and dependency word a
 * table prints is defined here; tests/golden/check_legend.py holds the reports to that.
 */
#include "report/legend.h"

static const rp_legend_entry ENTRIES[] = {
    {"From",
     "where a Run fact came from: the trace (its metadata or the events that tell it), the "
     "command line, a rule pack or the build; `default` (nothing in the inputs said it) and "
     "`not known` are warnings."},
    {"#",
     "row id in its table (K kernels, O overlap, F fusion, I idle causes, W collectives; "
     "H the time account's line on the host blocked in a read back: its calls, the copy's "
     "stream and the one it was left waiting on, and the GPU idle inside them before the "
     "next kernel was issued); the summary links to it."},
    {"What to try first",
     "each item is an action, *at most* what it can win per step (ms per step and share of "
     "the stage's mean step) and the basis of that bound: GPU idle under a named CPU "
     "activity, collective time above its floor (of it, what the step moves with it across "
     "the steps, else its part that leaves the GPU idle), a roofline fraction, a fusion pattern's "
     "saving, a chain's runs of back-to-back launches less each run's longest launch (at "
     "most its time alone on the GPU), or an overlap row's recoverable time. Rows of one "
     "root cause (the same kernel) are one item, and so are the kernels one action covers "
     "(one GEMM backend to tune, one family's bytes)."},
    {"Time account",
     "per step, span (first kernel start to last kernel end) = GPU busy (the union of "
     "kernels, memcpys and memsets over all streams) + idle, exactly; kernels, memcpys and "
     "memsets outside the counted steps (a previous step's tail, warm-ups) are left out."},
    {"Idle cause",
     "what the thread that launched the next kernel did in a gap: `sync` (it waited on the "
     "GPU, then issued the next work), `host` (busy with the named CPU op or Python code; "
     "`untraced after A, before B`: the thread ran no traced op between A and B), `launch` "
     "(issuing work kernel by kernel, inside the launch call itself, or queued behind its "
     "own stream's last kernel and started within a launch's latency of it), `dependency` "
     "(queued before the gap, it started within a launch's latency of another stream's last "
     "kernel: a hand-off between streams), `outside` (queued before the gap, `queued by` "
     "the call that issued it, it sat longer while no kernel ran, no event the trace shows "
     "released it, and a blocking call across the gap waits on it rather than holds it: the "
     "cause is outside the trace; with no launch record, a long gap a thread sat across in "
     "such a call), `filtered` (the same on a trace filtered or sampled to GPU work: likely "
     "GPU work the filter dropped), `short` (gaps under timeline.gap_min_us), `unknown` (no "
     "launch record, "
     "and no such call across the gap), `setup` (one-time: "
     "allocation or initialisation calls such as cudaMalloc, module loading; no per-step "
     "action), `alloc` (the same calls inside the counted steps: the allocator growing in "
     "what the capture measures, a per-step loss), `await` (inside a wait on a collective's "
     "result: an awaitable's wait(), a comm op's Wait; it follows the communication "
     "schedule, so no host item counts it), `blocked` (no launch record of the next kernel, "
     "while a thread that issues GPU work sat across the whole gap in a copy to or from "
     "pageable memory that the GPU had already done: the step waits on that host copy), "
     "`event_wait` (the kernel's stream waited on an event the host recorded only inside "
     "the gap: stream S waits for stream T)."},
    {"Collectives",
     "transfer = each instance at its floor (collectives.floor_pct of like instances: where "
     "they state their message, the least time of a like message at least as large, or of a "
     "smaller one scaled up by size; else position in the step, else name), wait = the "
     "rest; an instance with no like one is `alone`: its wait is unknown, and so is one of "
     "a group of fewer than collectives.floor_min_instances like instances or one with "
     "neither a message size nor a step position (floored by name), or one floored by a "
     "latency-bound message (under collectives.latency_bound_bytes) that itself took "
     "several times the fixed cost (that floor holds wait): the row then reads `unknown`; "
     "Floor from names the instance the floor came from (its step, its group's size); the "
     "first collective of a step absorbs the other ranks' late arrival."},
    {"Share",
     "part of the stage's kernel-time sum (stated under the stage heading); the same kernel "
     "has the same share in every table of a stage."},
    {"Saving per step",
     "in the fusion table, the row's estimated saving inside the counted steps over their "
     "number, the bound its item quotes, and its basis: `pieces but the largest` (the time of "
     "the pieces the row counts less its largest piece, whose pass the fused kernel still "
     "makes), `every piece it counts; the largest, counted in Fn, stays` (the largest piece "
     "is another row's and out of this row's time: all of that time goes), `pieces but the "
     "largest, Fn's piece included` (a smaller piece is another row's: it goes too) or `less one "
     "merged GEMM` (the siblings' "
     "time less one merged GEMM at the best rate a GEMM of their format reaches in the "
     "stage); the basis reads off Related GPU time, the stage's, so a saving per step that "
     "differs from the stage's also gives that (`; x over the stage`). Related GPU time is "
     "what the pattern touches, not the win. An evidence "
     "kernel's `x% of its y%`: the row holds only some of its launches."},
    {"GPU time", "summed device time of the row's launches, in the unit of the column head."},
    {"Per step",
     "the kernel's time inside the counted steps over their number (its GPU time when the "
     "stage has no steps), in the unit of the column head like GPU time: the figure an item "
     "quotes (in ms) for the row it links."},
    {"Kernel",
     "a display name (demangled, long template arguments shown as `<…>`); `--full-names` "
     "and the JSON output give the full name."},
    {"Python location / scope",
     "`path:line function` that launched the kernel; `unresolved` / `unmapped`: the trace "
     "has no Python frame for it."},
    {"CPU op", "the most common CPU operator or launch call around the kernel."},
    {"% of bound",
     "the roofline time of the row's launches with shapes over their GPU time: each "
     "launch's FLOPs and bytes (from its CPU op's Input Dims, or the mapping trace's "
     "launches of the kernel) bound it at max(bytes / HBM bandwidth, FLOPs / dense peak of "
     "its format); `mem` or `comp` names the larger term. Near 100% the kernel runs at the "
     "device's limit (lever: fewer bytes or FLOPs); above 100%: data served from L2 or a "
     "model that over-counts (Limits); `(latency)`: most of the row's launches would take "
     "less than the device's per-launch latency floor (launch, one memory round trip) at "
     "the attainable rate, so a low % says the launch is tiny, not slow, and tuning wins "
     "only its time above the floor; `-`: no shapes or no device entry (Limits; "
     "docs/roofline.md)."},
    {"Exposed",
     "the kernel's steady time with no compute kernel on another stream (median instance "
     "times count: what overlap can save; docs/overlap.md); the wait above it is listed "
     "under the table; a copy-engine transfer shares no SMs: its time with nothing else on "
     "the GPU, all of it steady; **Hidden**: the time under compute on another stream (a "
     "transfer: under any other work) (Exposed + wait + Hidden = GPU time)."},
    {"Verdict",
     "`headroom` = much of its time is exposed; `low-roi-hidden` = already hidden, little "
     "to gain; `wait` = its exposed time is mostly above its floor: waiting for other ranks "
     "or a pipeline stage, or running slow mid-step, not work; `unknown` = a collective "
     "with no floor to split its time into work and wait (`wait unknown`): neither headroom "
     "nor wait."},
    {"Priority",
     "P1 act: the recommendation follows from the mechanism (a staging copy to eliminate, a "
     "serial chain to fuse, a copy-engine transfer or an independent kernel to overlap) and "
     "recovers time; P2 check first: `check deps` (a neighbour may be its producer or "
     "consumer), `restructure` (nothing runs beside it: at most the compute beside it), and "
     "rows that would be P1 put back to P2 because the GPU waits for the host or other "
     "ranks in that stage (the banner above What to try first: fix that first); a P2 row's "
     "Dep risk can be `low`: its P2 is then the bottleneck, not a dependency; P4 nothing to "
     "win there (`low-roi-hidden`, one-time setup, already fused, `skip`, an action that "
     "recovers 0, and the wait rows: `rank skew (wait)`, `pipeline bubble (wait)`, `slow "
     "mid-step (wait)`, `wait unknown`, whose exposed time is above the floor or has none, "
     "so the row recovers 0 until the late rank, stage or slowdown is found: the wait item "
     "of What to try first is their action); P5 under the bar (a row recovering less than "
     "the floor per step or the bar's share of the step, counted in one line under the "
     "table). Rows are ordered by recoverable time (docs/overlap.md)."},
    {"Recoverable",
     "what the action could win per step: the steady exposed time, for overlap at most the "
     "compute another stream could run meanwhile (a line under the table says which binds), "
     "0 on a single-stream stage (a restructured collective: at most the stage's compute "
     "beside it), taken from the row's share inside the counted steps (GPU time, Exposed "
     "and Hidden are totals over the stage window, warm-ups included); the rows that hide "
     "behind compute share it (P1 first, a line under the table says how); rows under the "
     "floor are not put forward: they are counted in one line under the table."},
    {"Dep risk",
     "whether a same-stream neighbour looks like its producer or consumer (`low`, `high`, "
     "`unclear`; a copy-engine transfer's neighbours are the nearest kernels past other "
     "copies, and a host-to-device input copy has no kernel producing it and a consumer a "
     "prefetch makes wait on an event: `low`); it decides between P1 and `check deps` only: "
     "a `low` risk on a P2 row (a restructure, a row put back for the stage's bottleneck) "
     "says the dependencies are not what holds it back."},
    {"Dependency (evidence)",
     "`serial`, `optimizer-only`, `independent`, `hard`, `prefetchable` or `unknown`, and "
     "the evidence that decided (kernel name, CPU op around the launch, next kernel on the "
     "stream, adjacency)."},
    {"Recommendation",
     "`try overlap` (move it to another stream; a collective or copy already on a stream of "
     "its own: change when it is issued, the line under the table says how), `try fusion` "
     "(fold it into the partner its evidence names: a fusion row or the eager chain), "
     "`check deps` (verify the data dependency first), `one-time setup` (work before the "
     "stage's first compute, e.g. weight upload: not steady-state), `rank skew (wait)` "
     "(exposed time is mostly waiting for other ranks: the stage's wait sits where a late "
     "rank's arrival lands, or that cannot be ruled out), `slow mid-step (wait)` (its time "
     "above the floor sits at the step's later collectives while the first ran at theirs: "
     "the same story as What to try first's \"find why collectives run above their floor "
     "mid-step\"), `already fused` (the kernel is a fused one already: overlap it with "
     "other work, or fuse its neighbours into it), `eliminate` (a staging copy into a "
     "communication buffer), `restructure` (a serial collective with nothing beside it: "
     "two-batch overlap, async TP, listed under the table), `pipeline bubble (wait)` (a "
     "pipeline transfer waiting for the neighbouring stage), `wait unknown` (a collective "
     "of several steps with no like instance to take a floor from, or one whose floor is a "
     "latency-bound message that waited itself: its split into transfer and wait is "
     "unknown, so no bound), `skip` (nothing for this table to act on: coupled to its "
     "neighbours with no fusion partner, or no stream beside it), `own stream, exposed "
     "while the step waits on its bottleneck (the banner: the host or queued work): nothing "
     "to gain` and `nothing to gain while the step waits on its bottleneck (the banner: the "
     "host or queued work)` (a row that would move GPU time, in the stage the banner names, "
     "where the GPU waits for the host or idles with work queued: P4, it recovers 0); `(item N)`: "
     "the row is "
     "item N of What to try first, whose advice and bound it is (not repeated)."},
    {"Stragglers verdict",
     "`straggler`: the others lose at least the bar's share of the group's GPU time waiting "
     "at matched collectives, and enough of that loss falls where one rank arrived last "
     "(both are settings of the ranks pack: docs/scale-out.md; the section names the rank "
     "and its cause); `wait spread across ranks`: the loss is over the bar but no rank is "
     "last that often; `no straggler (below the bar)`: the loss is under it; `instance "
     "counts differ`: the ranks ran different numbers of a collective, so none is matched; "
     "`no collectives to compare`: fewer than two ranks share a collective."},
    {"Confidence",
     "`Confirmed` = the whole unfused chain ran and every gate holds; `Candidate` = a "
     "partial match; `unknown` = the trace does not state a fact the fused path needs "
     "(tokens per step, execution mode, topology: the rationale names it); `in use` = the "
     "fused kernel runs here, nothing to enable; `in use (other stage)` = it runs in "
     "another stage and this one keeps the split by design (a size cap)."},
    {"Origin",
     "where the fused path exists: `mainline` (the framework's tree), `upstream` (merged "
     "upstream), `inflight` (an open change), `port` (the framework's path does not serve "
     "the run's platform: the Candidate fused path names what to port)."},
};

const rp_legend_entry *rp_legend(size_t *n) {
  *n = sizeof ENTRIES / sizeof ENTRIES[0];
  return ENTRIES;
}
