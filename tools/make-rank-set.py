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
  * DP replicas are not in lockstep (unless --lockstep-replicas): each serves its own
    batches, so its steps start apart (--replica-gap-jitter-us), and every replica after
    the first starts later and computes faster or slower, every second one runs one more
    step (replica_of).
  * Ranks form TP groups of --ranks/--dp ranks. Every rank runs the same kernels (the
    source step's prologue, its first --layers decoder layers, its tail); GEMM and
    attention kernels are divided by the TP size.
  * TP all-reduces are inserted where a Megatron TP layer has them: after the attention
    output projection and after the MLP down projection, found as the kernel before each
    fused residual add+RMSNorm (on the eager prefill source these are exactly the kernels
    launched from sglang/srt/layers/linear.py(1514): forward, RowParallelLinear).
    Payload tokens x hidden x 2 bytes; <= 512 KiB uses the framework's custom one-stage
    all-reduce (sglang::/vllm::cross_device_reduce_1stage) inside the step's graph or
    launch when the TP group sits on one node (the custom all-reduce is one node's P2P
    buffers: across nodes the frameworks use NCCL for every size), larger ones NCCL ring (ncclDevKernel_AllReduce_Sum_bf16_RING_LL, with the
    c10d args Collective name / Process Group Ranks ...). They run on the compute stream
    (as SGLang's custom all-reduce and pynccl do) unless --comm-stream is given.
  * Collectives carry what real ones carry: an eager NCCL kernel launched through
    torch.distributed (SGLang's prefill all-reduces and logits all-gather) has the c10d
    args (Collective name, In/Out msg nelems, Group size, dtype, Process Group
    Name/Description/Ranks); vLLM's pynccl kernels, NCCL kernels replayed from a CUDA/HIP
    graph (only graph id / graph node id) and custom all-reduces carry none. The logits
    all-gather follows the LM head when that runs eagerly (SGLang prefill, every vLLM V1
    step).
  * --slow-rank R --slowdown F [--slow-stage S]: R's compute kernels take (1+F) times as
    long (in stage S): a GPU-side straggler.
  * --late-rank R --late-us US [--late-stage S]: R's host starts every step (of stage S)
    0.3-1x US late, its peers within 20 us of each other, while its GPU work is normal: a
    host-side straggler (the 16-rank vLLM run of ../shared/spec/real-multirank.md).
  * Waiting: each rank arrives at collective i when its own preceding kernel ends; the
    collective ends on all ranks of the group at max(arrival) + transfer (each rank's end
    within --end-jitter-us of it), so on rank r it lasts transfer + (max arrival -
    arrival_r). The slowed or late rank arrives last and waits least; a late host shows
    up as the others' wait in the first collective of each step.
  * --first-collective-wait US: at the start of every step (of --first-wait-stage) one
    rank other than the group's first is late on the host by US, the others by at most
    US/4: the first collective of the step absorbs that skew (the decode "first
    all-reduce takes 20-70x its median" effect). The late rank is drawn per step, or with
    --first-wait-rotate each rank in turn (the spread wait of real-multirank.md's SGLang
    GB300 run: no one rank is the straggler).
  * --moe-imbalance F: the MLP GEMMs of every layer become expert kernels
    (fused_moe_kernel); on --moe-hot-rank they take (1+F) times as long: where that rank
    is the one its group waits for, the manifest's cause is "imbalance" (its work).
  * --no-device-props R: rank R's trace has no deviceProperties (some real ranks' traces
    lack them: ../shared/spec/real-multirank.md, hta_sampled_2ranks).
  * Clocks: ranks of one node share a clock; every other node's clock is off by a seeded
    20-100 us (--clock-offset-us), with the same baseTimeNanoseconds, so only
    per-instance durations, never timestamps, compare across nodes.
  * Process groups (distributedInfo.pg_config): the default group, then for every
    parallel dimension of the framework (vLLM: world, TP, PP, DCP, DP, EP; SGLang: world,
    TP, PP, DP, EP) an NCCL group and its gloo twin (backend_config cpu:gloo,cuda:gloo);
    dimensions of size 1 give groups of one, as real runs are full of.
  * Identity: distributedInfo.rank / world_size, the top-level host_name (one per node)
    and the host process's process_name (VLLM::Worker_TP0, sglang::scheduler_TP0).
  * Steps: --prefill-steps / --decode-steps per stage, prefill first. SGLang/TokenSpeed
    steps carry the step[EXTEND bs=.. toks=..] / step[DECODE bs=..] user annotation that
    SGLang's model runner records around each forward (model_runner.py forward:
    profile_range(build_step_span_name(forward_batch)); the name is built in
    sgl-project/sglang python/sglang/srt/utils/profile_utils.py build_step_span_name:
    f"step[EXTEND bs={bs} toks={extend_num_tokens}]", else f"step[{mode.name} bs={bs}]").
    vLLM V1 steps carry execute_context_C(c)_generation_G(g) (C/G: prefill/decode
    requests; --empty-steps N adds N steps that schedule nothing,
    execute_context_0(0)_generation_0(0), after the first); TRT-LLM steps none.

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
  --nodes K puts the ranks into K sub-folders, one profiler directory per host,
  gathered: rank-0..rank-{K-1} for vLLM (as its multi-node runs are collected; the folder
  name is not a rank), node0..node{K-1} otherwise. The vLLM API-server trace and the
  profiler text dumps (profiler_out_N.txt) go into the first node's folder.

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
VOCAB = 151936  # Qwen3 (logits all-gather size)
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
    p.add_argument("--slow-stage", choices=["decode", "prefill", "both"], default="both")
    p.add_argument("--late-rank", type=int, default=None, help="rank whose host starts each step late")
    p.add_argument("--late-us", type=float, default=3000.0, help="how late at most (0.3-1x per step)")
    p.add_argument("--late-stage", choices=["decode", "prefill", "both"], default="both")
    p.add_argument("--empty-steps", type=int, default=0, help="vLLM: steps that schedule nothing")
    p.add_argument("--clock-offset-us", type=float, default=100.0,
                   help="largest clock offset of a node after the first (seeded, >= 20 us)")
    p.add_argument("--end-jitter-us", type=float, default=0.5,
                   help="matched collectives end within this on the ranks of a group")
    p.add_argument("--vocab", type=int, default=VOCAB, help="vocabulary size (logits all-gather)")
    p.add_argument("--first-collective-wait", type=float, default=0.0, metavar="US")
    p.add_argument("--first-wait-stage", choices=["decode", "prefill", "both"], default="decode")
    p.add_argument("--first-wait-rotate", action="store_true",
                   help="the late rank of each step in turn (spread wait) instead of drawn")
    p.add_argument("--moe-imbalance", type=float, default=0.0, metavar="F")
    p.add_argument("--moe-hot-rank", type=int, default=None, help="default: the last rank")
    p.add_argument("--no-device-props", type=int, action="append", default=[], metavar="R",
                   help="rank R's trace lacks deviceProperties (repeatable)")
    p.add_argument("--noise", type=float, default=0.005, help="per-kernel duration noise (+-)")
    p.add_argument("--ar-gbps", type=float, default=100.0, help="all-reduce bus bandwidth")
    p.add_argument("--comm-stream", type=int, default=None)
    p.add_argument("--split-stages", action="store_true",
                   help="one file per stage (SGLang/TokenSpeed profile_by_stage)")
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--lockstep-replicas", action="store_true",
                   help="DP replicas run the same steps at the same times (no real run does)")
    p.add_argument("--replica-gap-jitter-us", type=float, default=300.0,
                   help="with --dp > 1: each step of a replica starts 0..this later")
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
    for opt in ("slow_rank", "late_rank"):
        value = getattr(args, opt)
        if value is not None and not 0 <= value < args.ranks:
            p.error(f"--{opt.replace('_', '-')} out of range")
    if args.empty_steps and args.framework != "vllm":
        p.error("--empty-steps: only vLLM V1 records steps that schedule nothing")
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
    """Programs in step order: prefill steps, then decode steps; --empty-steps steps that
    schedule nothing after the first."""
    tp = args.ranks // args.dp
    # TP is the innermost dimension: its groups stay on one node when a node's ranks hold
    # whole groups (DP 2 x TP 4 on two 4-GPU nodes); TP 8 on two such nodes spans both
    single_node = (args.ranks // args.nodes) % tp == 0
    steps = []
    for stage in stages_of(args):
        model = ts.load_step_model(getattr(args, f"{stage}_source"))
        program = ts.build_program(model, args.layers, tp, args.framework,
                                   gbps=args.ar_gbps, moe=args.moe_imbalance > 0,
                                   comm_stream=args.comm_stream, vocab=args.vocab,
                                   single_node=single_node)
        count = args.prefill_steps if stage == "prefill" else args.decode_steps
        steps += [program] * count
    empty = [ts.empty_program(args.framework)] * args.empty_steps
    return steps[:1] + empty + steps[1:]


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


def node_dir(args, node):
    if args.nodes == 1:
        return args.out
    return os.path.join(args.out, f"rank-{node}" if args.framework == "vllm" else f"node{node}")


def rank_dir(args, rank):
    return node_dir(args, rank_coords(args, rank)["node"])


def host_name(node):
    return f"gpu-node-{node:02d}"


def process_name(args, rank):
    """The worker's process title: vLLM's VLLM::Worker[_DP d][_TP t], SGLang's
    sglang::scheduler[_DP d]_TP t (TokenSpeed and TRT-LLM: python3)."""
    c = rank_coords(args, rank)
    dp = f"_DP{c['dp']}" if args.dp > 1 else ""
    if args.framework == "vllm":
        return f"VLLM::Worker{dp}_TP{c['tp']}"
    if args.framework == "sglang":
        return f"sglang::scheduler{dp}_TP{c['tp']}"
    return "python3"


def parallel_dims(args):
    """[(dimension, groups)] the framework creates process groups for (see
    tracesynth.process_groups); every rank is in one group of each."""
    tp, world = args.ranks // args.dp, args.ranks
    tp_groups = [list(range(d * tp, (d + 1) * tp)) for d in range(args.dp)]
    dp_groups = [list(range(t, world, tp)) for t in range(tp)]
    ones = [[r] for r in range(world)]
    if args.framework == "vllm":  # vllm/distributed/parallel_state.py initialize_model_parallel
        return [("world", [list(range(world))]), ("tp", tp_groups), ("pp", ones), ("dcp", ones),
                ("dp", dp_groups), ("ep", [list(range(world))])]
    return [("world", [list(range(world))]), ("tp", tp_groups), ("pp", ones), ("dp", dp_groups),
            ("ep", tp_groups)]


def stage_list(choice):
    return ["prefill", "decode"] if choice == "both" else [choice]


def knobs_of(args):
    return {"slow_rank": args.slow_rank, "slowdown": args.slowdown,
            "slow_stages": stage_list(args.slow_stage), "moe_hot_rank": args.moe_hot_rank,
            "moe_imbalance": args.moe_imbalance, "noise": args.noise,
            "first_wait_us": args.first_collective_wait,
            "first_wait_stages": stage_list(args.first_wait_stage),
            "first_wait_rotate": args.first_wait_rotate,
            "late_rank": args.late_rank, "late_us": args.late_us,
            "late_stages": stage_list(args.late_stage), "end_jitter_us": args.end_jitter_us}


def wait_summary(group, truth):
    """Per-rank collective wait (the arrival gap to the last rank: a correct tool measures
    it as duration minus the instance's shortest duration, within --end-jitter-us),
    summed, and per step; the rank with the least wait is the one the others wait for.
    Steps that ran no collective (empty steps) are left out."""
    total = {r: 0.0 for r in group}
    per_step = []
    for step in truth:
        if not step["collectives"]:
            continue
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


def step_times(group, records, steps):
    return [max(records[r][i]["gpu_end"] for r in group) -
            min(records[r][i]["kernels"][0][1] for r in group) for i in steps]


def group_expectation(group, records, truth):
    busy = [i for i, t in enumerate(truth) if t["collectives"]]
    total, per_step = wait_summary(group, truth)
    least = min(group, key=lambda r: (total[r], r))
    step_time = step_times(group, records, busy)
    lost = [sum(w.values()) - w[least] for w in per_step]
    return {"ranks": group, "collective_wait_us": {str(r): round(total[r], 3) for r in group},
            "least_wait_rank": least,
            "lost_gpu_us_per_step": [round(x, 3) for x in lost],
            "lost_share_of_step": [round(x / (len(group) * t), 4) if t else 0.0 for x, t in zip(lost, step_time)],
            "first_collective_over_median": {str(r): first_collective_ratios(records[r]) for r in group}}


def absorbing_collective(group, truth, least):
    """Where the others' wait goes: per collective position in the step (its ordinal among
    the step's collectives), the wait of every rank but the least-waiting one, summed over
    the steps; the largest, its kernel and its share of the stage's wait. And the step
    (1-based among the stage's steps) that absorbs the most."""
    by_pos, by_step, names = {}, [], {}
    for step in truth:
        lost_step = 0.0
        for pos, coll in enumerate(step["collectives"]):
            last = max(coll["arrival_global_us"].values())
            lost = sum(last - coll["arrival_global_us"][r] for r in group if r != least)
            by_pos[pos] = by_pos.get(pos, 0.0) + lost
            names[pos] = coll["name"]
            lost_step += lost
        by_step.append(lost_step)
    total = sum(by_pos.values())
    pos = max(by_pos, key=lambda p: (by_pos[p], -p))
    return {"position": pos + 1, "kernel": names[pos], "share": round(by_pos[pos] / total, 4) if total else 0.0,
            "worst_step": 1 + max(range(len(by_step)), key=lambda i: (by_step[i], -i))}


def stage_expectation(args, group, records, truth, stage):
    """What a correct tool says about one stage of one group: the least-waiting rank, the
    others' loss per step and its share, where it goes, and the injected cause."""
    steps = [i for i, t in enumerate(truth) if t["stage"] == stage and t["collectives"]]
    sub = [truth[i] for i in steps]
    total, per_step = wait_summary(group, sub)
    least = min(group, key=lambda r: (total[r], r))
    lost = [sum(w.values()) - w[least] for w in per_step]
    step_time = step_times(group, records, steps)
    cause = None
    if least == args.late_rank and stage in stage_list(args.late_stage):
        cause = "host"
    elif least == args.slow_rank and args.slowdown > 0 and stage in stage_list(args.slow_stage):
        cause = "gpu"
    elif least == args.moe_hot_rank and args.moe_imbalance > 0:
        cause = "imbalance"
    return {"stage": stage, "ranks": group, "steps": len(steps),
            "collective_wait_us": {str(r): round(total[r], 3) for r in group},
            "least_wait_rank": least, "cause": cause,
            "lost_gpu_us_per_step": [round(x, 3) for x in lost],
            "lost_share_of_step": [round(x / (len(group) * t), 4) if t else 0.0 for x, t in zip(lost, step_time)],
            "absorbed_by": absorbing_collective(group, sub, least)}


def step_summary(records, programs, offset, style):
    """What each step of one rank holds, in that rank's file time: the stage a correct
    tool assigns its kernels to, the annotation that marks it, and the kernel counts."""
    out = []
    for record, program in zip(records, programs):
        ks = record["kernels"]
        coll = [d for op, _, d in ks if op["kind"] == "collective"]
        item = {"stage": program["stage"], "annotation": ts.annotation_name(program, style),
                "kernels": len(ks), "gpu_us": round(sum(d for _, _, d in ks), 3),
                "collectives": len(coll), "collective_us": round(sum(coll), 3)}
        if ks:
            item["first_kernel_ts"] = round(ks[0][1] + offset, 3)
            item["last_kernel_end"] = round(max(s + d for _, s, d in ks) + offset, 3)
        out.append(item)
    return out


STYLES = {"sglang": "sglang", "tokenspeed": "sglang", "vllm": "vllm-v1"}


def meta_for(args, rank, group, pgs, offset, model_device):
    node = rank_coords(args, rank)["node"]
    return {"device": rank % max(1, args.ranks // args.nodes), "host_pid": 4000 + 97 * rank,
            "offset_us": offset, "group": group, "pg_name": ts.pg_name_of(pgs, "tp", rank),
            "distributed_info": ts.distributed_info(rank, args.ranks, pgs),
            "device_props": None if rank in args.no_device_props else model_device,
            "base_time_ns": BASE_TIME_NS,
            "annotation_style": STYLES.get(args.framework, "none"),
            "host_name": host_name(node), "process_name": process_name(args, rank)}


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
            "host_name": host_name(0), "traceEvents": events}


def profiler_text(rank):
    """A profiler text dump as vLLM writes beside the traces (key_averages table)."""
    head = f"{'Name':<40}{'Self CPU %':>12}{'CPU total':>12}{'# of Calls':>12}\n"
    rows = [("execute_model", 2.1, "41.2ms", 4), ("aten::mm", 11.4, "6.1ms", 96)]
    body = "".join(f"{n:<40}{p:>11.2f}%{t:>12}{c:>12}\n" for n, p, t, c in rows)
    return f"worker rank {rank}\n" + head + "-" * 76 + "\n" + body


def node_offsets(args, rng):
    """Clock offset of every node: 0 on the first, 20..--clock-offset-us (either sign) on
    the others; the ranks of a node share it."""
    out = {0: 0.0}
    for node in range(1, args.nodes):
        low = min(20.0, args.clock_offset_us)
        out[node] = round(rng.choice([-1.0, 1.0]) * rng.uniform(low, args.clock_offset_us), 3)
    return out


def replica_of(args, programs, gi):
    """DP replica gi's steps, knobs and host start. Real replicas serve batches of their
    own under schedulers of their own: unless --lockstep-replicas, with --dp > 1 every
    replica's steps start 0..--replica-gap-jitter-us apart, and each replica after the
    first starts 0.1-0.9 ms later, computes 5-15 % faster or slower (its batch), and every
    second one runs one more step of its last stage (so the step counts differ, and a set
    of many replicas stays the size of one). The first replica is the set without --dp."""
    knobs, start = knobs_of(args), 2_000_000_000.0
    if args.dp == 1 or args.lockstep_replicas:
        return programs, knobs, start, None
    rng = random.Random(args.seed * 7919 + gi)
    knobs["step_gap_jitter_us"] = args.replica_gap_jitter_us
    if gi:
        knobs["batch_scale"] = round(1.0 + rng.choice([-1.0, 1.0]) * rng.uniform(0.05, 0.15), 4)
        start += round(rng.uniform(100.0, 900.0), 3)
        last = next(p for p in reversed(programs) if p["stage"] != "empty")
        programs = programs + [last] * (gi % 2)
    replica = {"steps": [p["stage"] for p in programs], "batch_scale": knobs.get("batch_scale", 1.0),
               "start_us": round(start - 2_000_000_000.0, 3), "step_gap_jitter_us": args.replica_gap_jitter_us}
    return programs, knobs, start, replica


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    if args.write_step_model:
        trace, out = args.write_step_model
        model = ts.extract_step_model(trace, args.source_label or os.path.basename(trace), args.hidden)
        ts.write_json(out, model)
        return 0
    programs = build_programs(args)
    tp = args.ranks // args.dp
    groups = [list(range(g * tp, (g + 1) * tp)) for g in range(args.dp)]
    pgs = ts.process_groups(args.ranks, parallel_dims(args))
    rng = random.Random(args.seed)
    by_node = node_offsets(args, rng)
    offsets = {r: by_node[rank_coords(args, r)["node"]] for r in range(args.ranks)}
    first = next(p for p in programs if p["stage"] != "empty")
    device = ts.load_step_model(getattr(args, f"{first['stage']}_source"))["device"]
    manifest = {"generator": "tools/make-rank-set.py", "argv": ts.argv_without_out(argv if argv is not None else sys.argv[1:]),
                "framework": args.framework, "ranks": args.ranks, "dp": args.dp, "tp": tp,
                "layers": args.layers, "steps": [p["stage"] for p in programs],
                "allreduce": {p["stage"]: p["allreduce"] for p in programs if p["allreduce"]},
                "slow_rank": args.slow_rank, "slowdown": args.slowdown,
                "late_rank": args.late_rank, "late_us": args.late_us if args.late_rank is not None else None,
                "first_collective_wait_us": args.first_collective_wait,
                "moe": {"imbalance": args.moe_imbalance, "hot_rank": args.moe_hot_rank} if args.moe_imbalance else None,
                "clock_offsets_us": {str(r): offsets[r] for r in offsets},
                "end_jitter_us": args.end_jitter_us,
                "hosts": {str(r): host_name(rank_coords(args, r)["node"]) for r in range(args.ranks)},
                "files": {}, "groups": [], "stages": [], "truth": []}
    if args.no_device_props:  # only where asked: the other fixtures' manifests stay as they were
        manifest["no_device_props"] = sorted(args.no_device_props)
    for gi, group in enumerate(groups):
        rep_programs, knobs, start, replica = replica_of(args, programs, gi)
        records, truth = ts.simulate_group(rep_programs, group, knobs, seed=args.seed * 1009 + gi,
                                           host_start=start)
        manifest["groups"].append(group_expectation(group, records, truth))
        manifest["groups"][-1]["replica"] = replica
        manifest["groups"][-1]["steps_of_first_rank"] = step_summary(records[group[0]], rep_programs,
                                                                     offsets[group[0]], STYLES.get(args.framework, "none"))
        for stage in stages_of(args):
            manifest["stages"].append(stage_expectation(args, group, records, truth, stage))
        manifest["truth"].append(truth)
        for rank in group:
            write_rank(args, rank, records[rank], rep_programs, group, pgs, offsets[rank], device, manifest)
    if args.framework == "vllm" and not args.no_api_server_trace:
        name = f"{host_name(0)}_3999.async_llm.{BASE_TIME_NS + 12345}.pt.trace.json.gz"
        path = os.path.join(node_dir(args, 0), name)
        ts.write_trace(path, api_server_trace(rng))
        manifest["api_server_trace"] = os.path.relpath(path, args.out)
        for rank in range(min(args.ranks, args.ranks // args.nodes)):
            ts.write_bytes_deterministic(os.path.join(node_dir(args, 0), f"profiler_out_{rank}.txt"),
                                         profiler_text(rank))
    ts.write_json(args.manifest, manifest)
    return 0


def write_rank(args, rank, records, programs, group, pgs, offset, device, manifest):
    meta = meta_for(args, rank, group, pgs, offset, device)
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
