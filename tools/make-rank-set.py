#!/usr/bin/env python3
"""make-rank-set.py - build an N-rank LLM-serving trace set from one real serving step.

The input is a *step model*: one real serving step cut from a shared trace by
--write-step-model (tests/data/sources/*.step.json.gz, see tests/data/README.md). By
default SGLang, TokenSpeed and TRT-LLM sets use the SGLang Qwen3-8B MI300X decode and
prefill steps, vLLM sets the vLLM gpt-oss decode and mixed steps (real vLLM kernels,
frames and expert kernels); --decode-source/--prefill-source choose others. The output is
one Kineto trace per rank, named as the chosen framework names them, each with its own
distributedInfo (rank, world_size, process groups) and clock, plus a manifest (JSON;
--manifest, default OUT.manifest.json beside the output directory, so the directory holds
only what the framework would write) stating what was generated and the ground truth a
test can check.

Model (details in tools/tracesynth.py)
  * Ranks form TP groups of --ranks/--dp ranks. Every rank runs the same kernels (the
    source step's prologue, its first --layers decoder layers, its tail); GEMM and
    attention kernels are divided by the TP size.
  * TP all-reduces are inserted where a Megatron TP layer has them: after the attention
    output projection and after the MLP down projection, found as the kernel before each
    fused residual add+RMSNorm (on the eager prefill source these are exactly the kernels
    launched from sglang/srt/layers/linear.py(1514): forward, RowParallelLinear).
    Payload tokens x hidden x 2 bytes; <= 512 KiB uses the framework's custom one-stage
    all-reduce (sglang::/vllm::cross_device_reduce_1stage) inside the step's graph or
    launch, larger ones NCCL ring (ncclDevKernel_AllReduce_Sum_bf16_RING_LL, with the
    c10d args Collective name / Process Group Ranks ...). They run on the compute stream
    (as SGLang's custom all-reduce and pynccl do) unless --comm-stream is given.
  * --slow-rank R --slowdown F: R's compute kernels take (1+F) times as long.
  * Waiting: each rank arrives at collective i when its own preceding kernel ends; the
    collective ends on all ranks of the group at max(arrival) + transfer, so on rank r
    it lasts transfer + (max arrival - arrival_r). The slowed rank arrives last and
    waits least.
  * --first-collective-wait US: at the start of every step (of --first-wait-stage) one
    rank other than the group's first is late on the host by US, the others by at most
    US/4: the first collective of the step absorbs that skew (the decode "first
    all-reduce takes 20-70x its median" effect).
  * --moe-imbalance F: the MLP GEMMs of every layer become expert kernels
    (fused_moe_kernel); on --moe-hot-rank they take (1+F) times as long.
  * Clocks: every rank's timestamps carry a seeded offset of up to +-5 s, so tools that
    compare timestamps across ranks fail.
  * Steps: --prefill-steps / --decode-steps per stage, prefill first. SGLang/TokenSpeed
    steps carry the step[EXTEND bs=.. toks=..] / step[DECODE bs=..] user annotation that
    SGLang's model runner records around each forward (model_runner.py forward:
    profile_range(build_step_span_name(forward_batch)); the name is built in
    sgl-project/sglang python/sglang/srt/utils/profile_utils.py build_step_span_name:
    f"step[EXTEND bs={bs} toks={extend_num_tokens}]", else f"step[{mode.name} bs={bs}]").
    vLLM steps carry the source trace's own execute_..._context_.._generation_.. span;
    TRT-LLM steps none.

File names (facts from each framework's source; --out is the profiler output directory)
  sglang      {id}-TP-{t}[-DP-{d}][-EP-{e}][-{stage}].trace.json.gz
              sgl-project/sglang python/sglang/srt/utils/profile_utils.py
              (_ProfilerTorch.stop: parts [profile_id, f"TP-{tp_rank}"], DP-/PP-/EP- only
              when that size > 1, output_suffix f"-{stage}" with stage "prefill"/"decode"
              under profile_by_stage, + ".trace.json.gz"; older scheduler_profiler_mixin.py
              wrote profile_id + f"-TP-{tp_rank}" + stage_suffix + ".trace.json.gz").
  tokenspeed  {id}-[DP{d}-]TP{t}[-{EXTEND|DECODE}].trace.json.gz
              lightseekorg/tokenspeed python/tokenspeed/runtime/engine/request_handler.py
              (stop_profile: f"{profile_id}-{profile_rank_tag}{stage_suffix}.trace.json.gz",
              _profile_rank_tag = [DP{d}-][CP{c}-]TP{t}, stage_suffix f"-{stage.name}").
  vllm        dp{d}_pp{p}_tp{t}_dcp{c}_ep{e}_rank{r}.{time_ns}.pt.trace.json.gz
              vllm-project/vllm vllm/distributed/utils.py get_worker_rank_suffix
              (f"dp{dp_rank}_pp{pp_rank}_tp{tp_rank}_dcp{dcp_rank}_ep{ep_rank}" +
              f"_rank{global_rank}"; the fallback is f"rank{global_rank}"), used as
              worker_name by vllm/v1/worker/gpu_worker.py profile() (optionally
              f"{profile_prefix}_{rank_suffix}") for torch.profiler.
              tensorboard_trace_handler, which writes f"{worker_name}.{time.time_ns()}
              .pt.trace.json" (+".gz" with use_gzip) (pytorch torch/profiler/profiler.py).
              The API server (vllm/v1/engine/async_llm.py) profiles CPU only with
              worker_name f"{socket.gethostname()}_{os.getpid()}.async_llm" into the same
              directory: {host}_{pid}.async_llm.{time_ns}.pt.trace.json.gz, no GPU kernels.
              Older forms: rank{r} (the fallback above) and rank-{r} (e.g. HTA's
              sampled_rank-0.json.gz in ../shared/traces/multi-rank).
              ep = the rank in vLLM's EP group, built over DP x TP: d * TP + t.
  trtllm      {base}-rank-{r}{ext} for TLLM_TORCH_PROFILE_TRACE={base}{ext}
              NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor/py_executor.py _profiler
              (os.path.splitext(torch_trace_path); f"{trace_base}-rank-{self.global_rank}
              {trace_ext}"; older versions wrote every rank to the same path). Here
              TLLM_TORCH_PROFILE_TRACE=trace.json, so trace-rank-{r}.json (plain JSON;
              note "trace.json.gz" would give "trace.json-rank-{r}.gz").
  --nodes K puts the ranks into K sub-folders node0..node{K-1} (one profiler directory
  per host, gathered); the vLLM API-server trace goes into node0 with ranks 0...

Deterministic: the same arguments give the same bytes (gzip headers without time or
name). Python 3 standard library only.

Examples
  make-rank-set.py --out /tmp/rs --ranks 4 --slow-rank 2 --slowdown 0.05 --seed 1
  make-rank-set.py --out /tmp/v --framework vllm --ranks 8 --dp 2 --nodes 2
"""

import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracesynth as ts  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(REPO, "tests", "data", "sources")
DEFAULT_SOURCES = {
    "sglang": {"decode": "sglang-qwen3-8b-decode.step.json.gz", "prefill": "sglang-qwen3-8b-prefill.step.json.gz"},
    "vllm": {"decode": "vllm-gptoss-decode.step.json.gz", "prefill": "vllm-gptoss-mixed.step.json.gz"},
}
CLOCK_SKEW_US = 5_000_000.0
BASE_TIME_NS = 1_700_000_000_000_000_000


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--manifest", default=None, help="manifest path (default: OUT.manifest.json)")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--dp", type=int, default=1, help="data-parallel replicas (TP = ranks/dp)")
    p.add_argument("--framework", choices=["sglang", "vllm", "trtllm", "tokenspeed"], default="sglang")
    p.add_argument("--stage", choices=["decode", "prefill", "both"], default="decode")
    p.add_argument("--decode-steps", type=int, default=3)
    p.add_argument("--prefill-steps", type=int, default=1)
    p.add_argument("--layers", type=int, default=4, help="decoder layers kept (Qwen3-8B 1..36, gpt-oss 1..24)")
    p.add_argument("--slow-rank", type=int, default=None)
    p.add_argument("--slowdown", type=float, default=0.0, help="e.g. 0.05 = 5%% longer compute")
    p.add_argument("--first-collective-wait", type=float, default=0.0, metavar="US")
    p.add_argument("--first-wait-stage", choices=["decode", "prefill", "both"], default="decode")
    p.add_argument("--moe-imbalance", type=float, default=0.0, metavar="F")
    p.add_argument("--moe-hot-rank", type=int, default=None, help="default: the last rank")
    p.add_argument("--noise", type=float, default=0.005, help="per-kernel duration noise (+-)")
    p.add_argument("--ar-gbps", type=float, default=100.0, help="all-reduce bus bandwidth")
    p.add_argument("--comm-stream", type=int, default=None)
    p.add_argument("--split-stages", action="store_true",
                   help="one file per stage (SGLang/TokenSpeed profile_by_stage)")
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--profile-id", default=None, help="SGLang/TokenSpeed profile id")
    p.add_argument("--no-api-server-trace", action="store_true", help="vLLM: skip the async_llm trace")
    p.add_argument("--decode-source", default=None,
                   help="step model of a decode step (default: tests/data/sources, by framework)")
    p.add_argument("--prefill-source", default=None, help="step model of a prefill step")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--write-step-model", nargs=2, metavar=("TRACE", "OUT"),
                   help="only cut a step model from a real trace and exit")
    p.add_argument("--hidden", type=int, default=4096,
                   help="with --write-step-model: the model's hidden size (Qwen3-8B 4096, gpt-oss 2880)")
    p.add_argument("--source-label", default=None, help="with --write-step-model: where the trace comes from")
    args = p.parse_args(argv)
    if args.write_step_model:
        return args
    if args.ranks < 1 or args.dp < 1 or args.ranks % args.dp:
        p.error("--ranks must be a positive multiple of --dp")
    if args.slow_rank is not None and not 0 <= args.slow_rank < args.ranks:
        p.error("--slow-rank out of range")
    if args.split_stages and args.framework not in ("sglang", "tokenspeed"):
        p.error("--split-stages: only SGLang and TokenSpeed write one file per stage")
    if args.nodes < 1 or args.ranks % args.nodes:
        p.error("--ranks must be a multiple of --nodes")
    if args.manifest is None:
        args.manifest = args.out.rstrip("/") + ".manifest.json"
    if args.moe_hot_rank is None:
        args.moe_hot_rank = args.ranks - 1
    family = "vllm" if args.framework == "vllm" else "sglang"
    for stage in ("decode", "prefill"):
        if getattr(args, f"{stage}_source") is None:
            setattr(args, f"{stage}_source", os.path.join(SOURCES, DEFAULT_SOURCES[family][stage]))
    if args.profile_id is None:
        args.profile_id = f"{1700000000 + args.seed}.{args.seed % 1000:03d}"
    return args


def stages_of(args):
    return ["prefill", "decode"] if args.stage == "both" else [args.stage]


def build_programs(args):
    """List of (stage, program) in step order."""
    tp = args.ranks // args.dp
    steps = []
    for stage in stages_of(args):
        model = ts.load_step_model(getattr(args, f"{stage}_source"))
        program = ts.build_program(model, args.layers, tp, args.framework,
                                   gbps=args.ar_gbps, moe=args.moe_imbalance > 0,
                                   comm_stream=args.comm_stream)
        count = args.prefill_steps if stage == "prefill" else args.decode_steps
        steps += [program] * count
    return steps


def rank_coords(args, rank):
    tp = args.ranks // args.dp
    return {"dp": rank // tp, "tp": rank % tp, "ep": rank, "node": rank // (args.ranks // args.nodes)}


def file_name(args, rank, stage, time_ns):
    c = rank_coords(args, rank)
    moe = args.moe_imbalance > 0 and args.ranks // args.dp > 1
    if args.framework == "sglang":
        parts = [args.profile_id, f"TP-{c['tp']}"]
        if args.dp > 1:
            parts.append(f"DP-{c['dp']}")
        if moe:
            parts.append(f"EP-{c['tp']}")
        suffix = f"-{stage}" if stage else ""
        return "-".join(parts) + suffix + ".trace.json.gz"
    if args.framework == "tokenspeed":
        tag = (f"DP{c['dp']}-" if args.dp > 1 else "") + f"TP{c['tp']}"
        suffix = {"prefill": "-EXTEND", "decode": "-DECODE"}.get(stage, "")
        return f"{args.profile_id}-{tag}{suffix}.trace.json.gz"
    if args.framework == "vllm":
        return f"dp{c['dp']}_pp0_tp{c['tp']}_dcp0_ep{c['ep']}_rank{rank}.{time_ns}.pt.trace.json.gz"
    return f"trace-rank-{rank}.json"


def rank_dir(args, rank):
    if args.nodes == 1:
        return args.out
    return os.path.join(args.out, f"node{rank_coords(args, rank)['node']}")


def knobs_of(args):
    wait_stages = ["prefill", "decode"] if args.first_wait_stage == "both" else [args.first_wait_stage]
    return {"slow_rank": args.slow_rank, "slowdown": args.slowdown, "moe_hot_rank": args.moe_hot_rank,
            "moe_imbalance": args.moe_imbalance, "noise": args.noise,
            "first_wait_us": args.first_collective_wait, "first_wait_stages": wait_stages}


def wait_summary(group, truth):
    """Per-rank collective wait (duration minus the instance's shortest duration), summed,
    and per step; the rank with the least wait is the one the others wait for."""
    total = {r: 0.0 for r in group}
    per_step = []
    for step in truth:
        waits = {r: 0.0 for r in group}
        for coll in step["collectives"]:
            last = max(coll["arrival_global_us"].values())
            for r in group:
                waits[r] += last - coll["arrival_global_us"][r]
        per_step.append(waits)
        for r in group:
            total[r] += waits[r]
    return total, per_step


def first_collective_ratios(records):
    """Per step: duration of the first collective over the median collective duration."""
    out = []
    for record in records:
        durs = [d for op, _, d in record["kernels"] if op["kind"] == "collective"]
        if durs:
            out.append(round(durs[0] / statistics.median(durs), 2))
    return out


def group_expectation(group, records, truth):
    total, per_step = wait_summary(group, truth)
    least = min(group, key=lambda r: (total[r], r))
    step_time = [max(records[r][i]["gpu_end"] for r in group) -
                 min(records[r][i]["kernels"][0][1] for r in group) for i in range(len(truth))]
    lost = [sum(w.values()) - w[least] for w in per_step]
    return {"ranks": group, "collective_wait_us": {str(r): round(total[r], 3) for r in group},
            "least_wait_rank": least,
            "lost_gpu_us_per_step": [round(x, 3) for x in lost],
            "lost_share_of_step": [round(x / (len(group) * t), 4) if t else 0.0 for x, t in zip(lost, step_time)],
            "first_collective_over_median": {str(r): first_collective_ratios(records[r]) for r in group}}


def step_summary(records, programs, offset, style):
    """What each step of one rank holds, in that rank's file time: the stage a correct
    tool assigns its kernels to, the annotation that marks it, and the kernel counts."""
    out = []
    for record, program in zip(records, programs):
        ks = record["kernels"]
        coll = [d for op, _, d in ks if op["kind"] == "collective"]
        out.append({"stage": program["stage"], "annotation": ts.annotation_name(program, style),
                    "kernels": len(ks), "gpu_us": round(sum(d for _, _, d in ks), 3),
                    "collectives": len(coll), "collective_us": round(sum(coll), 3),
                    "first_kernel_ts": round(ks[0][1] + offset, 3),
                    "last_kernel_end": round(max(s + d for _, s, d in ks) + offset, 3)})
    return out


def meta_for(args, rank, group, gi, groups, offset, model_device):
    return {"device": rank % max(1, args.ranks // args.nodes), "host_pid": 4000 + 97 * rank,
            "offset_us": offset, "group": group, "pg_name": str(gi + 1),
            "distributed_info": ts.distributed_info(rank, args.ranks, groups),
            "device_props": model_device, "base_time_ns": BASE_TIME_NS + int(offset * 1000),
            "annotation_style": {"sglang": "sglang", "tokenspeed": "sglang", "vllm": "source"}.get(args.framework, "none"),
            "host_name": "python3"}


def api_server_trace(rng):
    """The vLLM API server's CPU-only trace: Python frames and CPU ops, no GPU work."""
    pid = 3999
    root = "/usr/local/lib/python3.12/dist-packages/vllm"
    events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python3"}}]
    t = 2_000_000_000.0 + rng.uniform(0, 1000)
    names = [f"{root}/entrypoints/openai/serving_completion.py(180): create_completion",
             f"{root}/v1/engine/async_llm.py(420): generate",
             f"{root}/v1/engine/output_processor.py(440): process_outputs"]
    for i in range(12):
        for depth, name in enumerate(names):
            events.append({"ph": "X", "cat": "python_function", "name": name, "pid": pid, "tid": pid,
                           "ts": t + depth, "dur": 300.0 - 2 * depth,
                           "args": {"Python id": 3 * i + depth + 1, "Python parent id": 3 * i + depth}})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": pid, "tid": pid,
                       "ts": t + 10, "dur": 3.0, "args": {"External id": i + 1, "Record function id": 0}})
        t += 2500.0 + rng.uniform(0, 100)
    return {"schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": BASE_TIME_NS,
            "traceEvents": events}


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    if args.write_step_model:
        trace, out = args.write_step_model
        model = ts.extract_step_model(trace, args.source_label or os.path.basename(trace), args.hidden)
        ts.write_json(out, model)
        return 0
    programs = build_programs(args)
    tp = args.ranks // args.dp
    groups = [(str(g + 1), list(range(g * tp, (g + 1) * tp))) for g in range(args.dp)]
    rng = random.Random(args.seed)
    offsets = {r: round(rng.uniform(-CLOCK_SKEW_US, CLOCK_SKEW_US), 3) for r in range(args.ranks)}
    device = ts.load_step_model(getattr(args, f"{programs[0]['stage']}_source"))["device"]
    manifest = {"generator": "tools/make-rank-set.py", "argv": ts.argv_without_out(argv if argv is not None else sys.argv[1:]),
                "framework": args.framework, "ranks": args.ranks, "dp": args.dp, "tp": tp,
                "layers": args.layers, "steps": [p["stage"] for p in programs],
                "allreduce": {p["stage"]: p["allreduce"] for p in programs},
                "slow_rank": args.slow_rank, "slowdown": args.slowdown,
                "first_collective_wait_us": args.first_collective_wait,
                "moe": {"imbalance": args.moe_imbalance, "hot_rank": args.moe_hot_rank} if args.moe_imbalance else None,
                "clock_offsets_us": {str(r): offsets[r] for r in offsets}, "files": {}, "groups": [],
                "truth": []}
    for gi, (pg_name, group) in enumerate(groups):
        records, truth = ts.simulate_group(programs, group, knobs_of(args), seed=args.seed * 1009 + gi)
        manifest["groups"].append(group_expectation(group, records, truth))
        style = meta_for(args, group[0], group, gi, groups, 0.0, device)["annotation_style"]
        manifest["groups"][-1]["steps_of_first_rank"] = step_summary(records[group[0]], programs,
                                                                     offsets[group[0]], style)
        manifest["truth"].append(truth)
        for rank in group:
            write_rank(args, rank, records[rank], programs, group, gi, groups, offsets[rank], device, manifest)
    if args.framework == "vllm" and not args.no_api_server_trace:
        name = f"host0_3999.async_llm.{BASE_TIME_NS + 12345}.pt.trace.json.gz"
        path = os.path.join(rank_dir(args, 0), name)
        ts.write_trace(path, api_server_trace(rng))
        manifest["api_server_trace"] = os.path.relpath(path, args.out)
    ts.write_json(args.manifest, manifest)
    return 0


def write_rank(args, rank, records, programs, group, gi, groups, offset, device, manifest):
    meta = meta_for(args, rank, group, gi, groups, offset, device)
    time_ns = BASE_TIME_NS + 1_000_000 * rank
    if args.split_stages:
        parts = [(stage, [i for i, p in enumerate(programs) if p["stage"] == stage]) for stage in stages_of(args)]
    else:
        parts = [(None, list(range(len(programs))))]
    for stage, idx in parts:
        doc = ts.render_rank_trace(rank, [records[i] for i in idx], [programs[i] for i in idx], meta)
        path = os.path.join(rank_dir(args, rank), file_name(args, rank, stage, time_ns))
        ts.write_trace(path, doc)
        key = str(rank) if stage is None else f"{rank}/{stage}"
        manifest["files"][key] = os.path.relpath(path, args.out)


if __name__ == "__main__":
    sys.exit(main())
