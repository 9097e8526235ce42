"""tracesynth: shared code of the fixture generators under tools/ (stdlib only).

Not a script: tools/make-rank-set.py, tools/make-diff-runs.py and the tests import it.

Model
-----
A *step model* is the GPU work of one serving step, taken from a real Kineto trace (the
SGLang Qwen3-8B and vLLM gpt-oss MI300X-class traces of ../shared/traces/real):
the kernels of the step in time order (name, category, stream, duration, the idle gap
before it, grid/block) and, for each host launch (cudaLaunchKernel, hipGraphLaunch, ...),
the host call stack that issued it (the enclosing python_function and cpu_op events,
outermost first). Step models are small JSON files (``"triage_step_model": 1``);
``extract_step_model`` builds one from a trace, ``load_step_model`` reads either.

A step model is turned into a *program* (``build_program``): the decoder layers are cut
to the number asked for, TP all-reduces are inserted, and kernels whose work is split by
tensor parallelism are shortened. The program is then *simulated* on every rank of a TP
group (``simulate_group``) and written out as one Kineto trace per rank
(``render_rank_trace``). Every random choice draws from a ``random.Random`` seeded by the
caller, and every file is written with fixed gzip headers, so the same arguments give
the same bytes.

Where the all-reduces go
------------------------
A Megatron-style TP layer all-reduces twice: after the attention output projection and
after the MLP down projection (both RowParallelLinear). In SGLang the reduced output is
added to the residual by the *next* fused add+RMSNorm kernel, so the kernel right before
every residual RMSNorm is one of those two projections. The generator therefore finds
the norms by name (``RESIDUAL_NORM_RE``: aiter ``add_rmsnorm_quant_kernel`` whose first
bool template argument, the residual flag, is true; or flashinfer/sgl ``FusedAddRMSNorm``;
where norm names do not tell, as ck_tile ``Rmsnorm2dFwd`` in the vLLM gpt-oss traces,
every RMSNorm after the first layer's input norm) and inserts one all-reduce after the
kernel before each (there: the attention o_proj GEMM and ``_finalize_matmul_scatter``,
the MoE output). On the eager SGLang Qwen3-8B
prefill trace every such kernel is launched from ``sglang/srt/layers/linear.py(1514):
forward`` (RowParallelLinear.forward) and no other kernel is: ``anchor_frames`` reports
the frames so the tests can check this.

Timing model (one TP group, one step at a time)
-----------------------------------------------
* Host: rank r starts step s at ``H_s + d_r`` (``d_r`` = scheduler delay, zero unless a
  first-collective wait is asked for) and issues its launches 8 us apart.
* GPU: a kernel starts when the kernel before it on the rank has ended plus its source
  gap, and not before its launch plus 2 us. Compute kernels last their source duration
  times the rank's factor (1 + slowdown on the slowed rank, 1 + imbalance for expert
  kernels on the hot rank) times a small per-rank noise (+-``noise``).
* Collective i: rank r arrives at ``a_r`` (when its preceding kernel ends). The
  collective ends on every rank at ``E = max_r a_r + transfer_i``; on rank r it starts
  at ``a_r`` and lasts ``transfer_i + (max a - a_r)``. The last rank to arrive (the
  slowed one) waits least; its duration is the pure transfer time. ``transfer_i`` is
  latency + bytes / bandwidth (ring: 2(N-1)/N * bytes), times one noise factor shared by
  the group.
* The next step starts on the host when the slowest rank of the group has finished the
  step (the sampled tokens are synchronised), plus a host gap.
* Clocks: each rank's timestamps get its own offset (seeded, up to +-``clock_skew_us``),
  as on separate hosts, so timestamps cannot be compared across ranks.
"""

import gzip
import io
import json
import os
import random
import re

STEP_MODEL_VERSION = 1

RESIDUAL_NORM_RE = re.compile(
    r"add_rmsnorm_quant_kernel\w*?Li\d+ELi\d+ELb1|FusedAddRMSNorm|fused_add_rmsnorm")
RMSNORM_RE = re.compile(r"rmsnorm|RMSNorm", re.I)
# Kernels whose work tensor parallelism divides by the TP size (column/row-parallel GEMMs,
# attention over the rank's heads). Norms, rotary, copies keep their time.
SHARDED_RE = re.compile(r"^Cijk_|gemm|nvjet|paged_attention|Fmha|fmha|flash|attention|matmul_ogs", re.I)
STEP_ANNOTATION_RE = re.compile(r"^step\[(EXTEND|DECODE|MIXED|IDLE) bs=(\d+)(?: toks=(\d+))?\]$")
EXECUTE_ANNOTATION_RE = re.compile(r"^execute_(\d+)_context_(\d+)\(.*\)_generation_(\d+)\(")
# Expert (MoE) GEMMs: SGLang/vLLM Triton fused MoE, triton_kernels matmul_ogs (gpt-oss).
EXPERT_RE = re.compile(r"matmul_ogs|fused_moe_kernel")

HOST_LAUNCH_SPACING_US = 8.0
HOST_LAUNCH_DUR_US = 4.0
LAUNCH_LATENCY_US = 2.0
FRAME_EPS_US = 0.01
MAX_FRAME_DEPTH = 64
MAX_SOURCE_GAP_US = 40.0
STEP_HOST_GAP_US = 60.0
HOST_JITTER_US = 20.0
EMPTY_STEP_US = 150.0


# ---------------------------------------------------------------------------------------
# reading and writing

def read_json(path):
    """Parse a .json or gzip-compressed JSON file (gzip decided by the magic bytes)."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def _round_floats(value):
    """Round every float to 3 decimals (ns) so the text does not depend on float noise."""
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, list):
        return [_round_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _round_floats(v) for k, v in value.items()}
    return value


def dumps_trace(obj):
    """Serialise a trace: one event per line, floats rounded, keys in insertion order."""
    head = {k: v for k, v in obj.items() if k != "traceEvents"}
    parts = [json.dumps(_round_floats(head), ensure_ascii=False)[:-1]]
    lines = [json.dumps(_round_floats(e), ensure_ascii=False) for e in obj["traceEvents"]]
    sep = ", " if head else ""
    return parts[0] + sep + '"traceEvents": [\n' + ",\n".join(lines) + "\n]}\n"


def write_bytes_deterministic(path, text):
    """Write text; gzip (mtime 0, no file name in the header) when path ends in .gz."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    raw = text.encode("utf-8")
    if path.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(raw)
        raw = buf.getvalue()
    with open(path, "wb") as handle:
        handle.write(raw)


def argv_without_out(argv):
    """The generator's arguments without --out / --manifest (manifests do not depend on
    where they were written)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--out", "--manifest"):
            skip = True
        elif not a.startswith(("--out=", "--manifest=")):
            out.append(a)
    return out


def write_json(path, obj):
    write_bytes_deterministic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_trace(path, obj):
    write_bytes_deterministic(path, dumps_trace(obj))


# ---------------------------------------------------------------------------------------
# step model extraction

def _gpu_events(events):
    out = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    out.sort(key=lambda e: (e["ts"], e.get("args", {}).get("correlation", 0)))
    return out


def _host_stacks(events, launches):
    """Map correlation -> [(cat, name, args)] of the python_function / cpu_op frames that
    enclose each launch event on its thread, outermost first (one sweep per thread)."""
    frames = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("python_function", "cpu_op"):
            frames.setdefault((e["pid"], e["tid"]), []).append(e)
    result = {}
    by_thread = {}
    for corr, ev in launches.items():
        by_thread.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], corr))
    for key, points in by_thread.items():
        lst = sorted(frames.get(key, []), key=lambda e: (e["ts"], -e["dur"]))
        points.sort()
        active, i = [], 0
        for ts, corr in points:
            while i < len(lst) and lst[i]["ts"] <= ts:
                active.append(lst[i])
                i += 1
            active = [f for f in active if f["ts"] + f["dur"] >= ts]
            active.sort(key=lambda e: (e["ts"], -e["dur"]))
            result[corr] = [(f["cat"], f["name"]) for f in active]
    return result


def _step_annotation(events):
    """(annotation name, stage, batch, tokens) of the step, from SGLang's
    step[EXTEND bs=.. toks=..] / step[DECODE bs=..] span or, failing that, the
    execute_{tokens}_context_{n}(..)_generation_{m}(..) span of the vLLM source traces."""
    names = [e.get("name", "") for e in events if e.get("cat") == "user_annotation"]
    for name in names:
        m = STEP_ANNOTATION_RE.match(name)
        if m:
            toks = int(m.group(3)) if m.group(3) else int(m.group(2))
            return name, ("prefill" if m.group(1) == "EXTEND" else "decode"), int(m.group(2)), toks
    for name in names:
        m = EXECUTE_ANNOTATION_RE.match(name)
        if m:
            ctx, gen = int(m.group(2)), int(m.group(3))
            return name, ("prefill" if ctx else "decode"), ctx + gen, int(m.group(1))
    return None


def extract_step_model(trace_path, source_label, hidden):
    """Build a step model from a Kineto trace holding one serving step. hidden: the
    model's hidden size (all-reduce payload = tokens x hidden x 2 bytes)."""
    doc = read_json(trace_path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu = _gpu_events(events)
    launch_events = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            lower = e["name"].lower()
            if corr is not None and ("launch" in lower or "memcpy" in lower or "memset" in lower):
                launch_events[corr] = e
    stacks = _host_stacks(events, launch_events)
    frame_index, frames, launches, launch_of_corr = {}, [], [], {}
    kernels = []
    prev_end = None
    for e in gpu:
        args = e.get("args", {})
        corr = args.get("correlation")
        if corr in launch_events and corr not in launch_of_corr:
            stack = []
            for item in stacks.get(corr, []):
                if item not in frame_index:
                    frame_index[item] = len(frames)
                    frames.append(list(item))
                stack.append(frame_index[item])
            launch_of_corr[corr] = len(launches)
            launches.append({"name": launch_events[corr]["name"], "stack": stack})
        gap = 0.0 if prev_end is None else max(0.0, e["ts"] - prev_end)
        prev_end = max(prev_end or 0.0, e["ts"] + e["dur"])
        kernel = {"name": e["name"], "cat": e["cat"], "stream": args.get("stream", e.get("tid")),
                  "dur": e["dur"], "gap": min(gap, MAX_SOURCE_GAP_US),
                  "launch": launch_of_corr.get(corr), "ext": "External id" in args}
        for key in ("grid", "block", "kind", "bytes"):
            if key in args:
                kernel[key] = args[key]
        kernels.append(kernel)
    found = _step_annotation(events)
    if found is None:
        raise ValueError(f"{trace_path}: no step[...] or execute_... annotation")
    annotation, stage, batch, tokens = found
    device = dict((doc.get("deviceProperties") or [{}])[0])
    return {"triage_step_model": STEP_MODEL_VERSION, "source": source_label,
            "annotation": annotation, "stage": stage, "batch": batch, "tokens": tokens,
            "hidden": hidden,
            "device": {k: device[k] for k in ("name", "totalGlobalMem", "computeMajor",
                                              "computeMinor", "warpSize", "numSms") if k in device},
            "frames": frames, "launches": launches, "kernels": kernels}


def load_step_model(path):
    """Read a step model file."""
    doc = read_json(path)
    if not (isinstance(doc, dict) and doc.get("triage_step_model") == STEP_MODEL_VERSION):
        raise ValueError(f"{path}: not a step model (make one with make-rank-set.py --write-step-model)")
    return doc


# ---------------------------------------------------------------------------------------
# layer layout and programs

def layer_layout(kernels):
    """Split a step's kernels into prologue, decoder layers and tail.

    Returns (prologue, layers, tail, norms): index ranges and the residual-norm indices.
    Layer 0 runs from the first RMSNorm to the kernel before the second residual norm;
    layer k from residual norm 2k-1 to the kernel before residual norm 2k+1; the tail
    starts at the final norm."""
    firsts = [i for i, k in enumerate(kernels) if RMSNORM_RE.search(k["name"])]
    norms = [i for i, k in enumerate(kernels) if RESIDUAL_NORM_RE.search(k["name"])]
    if not norms and firsts:
        # Norm kernels that do not say whether they add the residual (ck_tile
        # Rmsnorm2dFwd in the vLLM gpt-oss traces, no q/k norm): every one after the
        # first layer's input norm is a residual norm.
        norms = firsts[1:]
    if len(norms) < 2 or len(norms) % 2 or not firsts:
        raise ValueError(f"cannot find the decoder layers: {len(norms)} residual norms")
    n_layers = len(norms) // 2
    layers = [range(firsts[0], norms[1])]
    layers += [range(norms[2 * k - 1], norms[2 * k + 1]) for k in range(1, n_layers)]
    return range(0, firsts[0]), layers, range(norms[-1], len(kernels)), norms


def anchor_frames(model):
    """For every kernel followed by a residual norm (an all-reduce site), the innermost
    python frame of its launch that names a linear layer; and the same frames found on
    any other kernel. Used to check the all-reduce placement against the Python code."""
    kernels = model["kernels"]
    _, _, _, norms = layer_layout(kernels)
    anchors = {n - 1 for n in norms}

    def linear_frame(kernel):
        if kernel["launch"] is None:
            return None
        names = [model["frames"][f][1] for f in model["launches"][kernel["launch"]]["stack"]
                 if model["frames"][f][0] == "python_function"]
        hits = [n for n in names if re.search(r"/layers/linear\.py\(\d+\): forward$", n)]
        return hits[-1] if hits else None

    at_anchor = sorted({str(linear_frame(kernels[i])) for i in anchors})
    row_frames = {f for f in at_anchor if f != "None"}
    elsewhere = sorted({linear_frame(k) for i, k in enumerate(kernels)
                        if i not in anchors and linear_frame(k) in row_frames})
    return {"anchors": len(anchors), "anchor_frames": at_anchor, "same_frame_elsewhere": elsewhere}


def vendor_bf16(model):
    """bf16 type name of the source's platform: HIP when its launches are hip* calls."""
    hip = any(l["name"].startswith("hip") for l in model["launches"])
    return "__hip_bfloat16" if hip else "__nv_bfloat16"


def allreduce_kernel(framework, nbytes, tp, model, custom_limit, single_node=True):
    """(kernel name, algorithm) of one TP all-reduce of nbytes. The custom one-stage
    all-reduce peers the GPUs of one node over P2P/IPC buffers: SGLang and vLLM disable it
    when the TP group spans nodes (vLLM's CustomAllreduce is created only when the group
    is fully connected on one host), so across nodes every all-reduce is NCCL."""
    if single_node and nbytes <= custom_limit and framework in ("sglang", "vllm"):
        ns = framework
        dt = vendor_bf16(model)
        return (f"void {ns}::cross_device_reduce_1stage<{dt}, {tp}>({ns}::RankData*, "
                f"{ns}::RankSignals, {ns}::Signal*, {dt}*, int, int)", "custom")
    return "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ring"


def transfer_us(algo, nbytes, tp, gbps):
    """Pure transfer time of one all-reduce (no waiting): latency + bytes / bandwidth."""
    bytes_per_us = gbps * 1e3
    if algo == "custom":
        return 6.0 + nbytes / bytes_per_us
    return 20.0 + 2.0 * (tp - 1) / tp * nbytes / bytes_per_us


def _comm_stack(model, anchor_launch, op, framework, c10d):
    """Host stack of a collective launched eagerly after anchor_launch: the anchor's python
    frames down to RowParallelLinear.forward (all of them for the logits all-gather), then
    the communication frames. c10d collectives go through torch.distributed
    (c10d::allreduce_ / c10d::_allgather_base_ and record_param_comms, whose args the
    renderer fills); vLLM's pynccl and the custom all-reduce call their kernels directly,
    so PyTorch records no c10d op for them. Communication frame names are synthetic (line
    numbers illustrative)."""
    frames = [model["frames"][f] for f in model["launches"][anchor_launch]["stack"]]
    py = [f for f in frames if f[0] == "python_function"]
    cut = max((i for i, f in enumerate(py) if re.search(r"/layers/linear\.py\(\d+\): forward$", f[1])),
              default=len(py) - 1)
    py = py[:cut + 1]
    m = re.match(r"^(.*?/(?:sglang/srt|vllm)/)", py[-1][1]) if py else None
    root = m.group(1) if m else "sglang/srt/"
    verb = "all_gather" if op == "allgather" else "all_reduce"
    stack = [list(f) for f in py]
    stack.append(["python_function", f"{root}distributed/communication_op.py(13): tensor_model_parallel_{verb}"])
    stack.append(["python_function", f"{root}distributed/parallel_state.py(560): {verb}"])
    if op == "custom":
        stack.append(["python_function",
                      f"{root}distributed/device_communicators/custom_all_reduce.py(400): custom_all_reduce"])
    elif c10d:
        stack.append(["cpu_op", "c10d::_allgather_base_" if op == "allgather" else "c10d::allreduce_"])
        stack.append(["cpu_op", "record_param_comms"])
    else:
        stack.append(["python_function", f"{root}distributed/device_communicators/pynccl.py(130): {verb}"])
    return stack


def _resolved_launches(model):
    return [{"name": l["name"], "stack": [list(model["frames"][f]) for f in l["stack"]]}
            for l in model["launches"]]


def _launch_use(model):
    """Kernels per launch index: a launch issuing several kernels is a CUDA/HIP graph."""
    use = {}
    for k in model["kernels"]:
        if k["launch"] is not None:
            use[k["launch"]] = use.get(k["launch"], 0) + 1
    return use


def _comm_launch(model, program, anchor, op, launch_name, c10d):
    """(launch index, in a graph) of a collective after anchor: inside a CUDA/HIP graph it
    is part of the graph launch; eagerly it is a launch of its own."""
    if anchor["launch"] is None:
        return None, False
    if _launch_use(model)[anchor["launch"]] > 1:
        return anchor["launch"], True
    program["launches"].append({"name": launch_name,
                                "stack": _comm_stack(model, anchor["launch"], op, program["framework"], c10d)})
    return len(program["launches"]) - 1, False


def _compute_op(kernel, tp, expert, graph):
    op = {k: v for k, v in kernel.items() if k not in ("dur", "kind")}
    if "kind" in kernel:
        op["src_kind"] = kernel["kind"]  # the source's args.kind (ROCm dispatch kind, copy direction)
    op["kind"] = "compute"
    op["expert"] = expert
    op["graph"] = graph
    op["dur"] = kernel["dur"] / tp if SHARDED_RE.search(kernel["name"]) else kernel["dur"]
    if expert and not EXPERT_RE.search(kernel["name"]):
        op["name"] = "fused_moe_kernel"
    return op


def _uses_c10d(framework):
    """Whether the framework's eager NCCL collectives go through torch.distributed (c10d
    records their args on the kernel): SGLang/TokenSpeed/TRT-LLM's torch groups do; vLLM's
    device communicator calls NCCL through pynccl, so its kernels carry no c10d args."""
    return framework != "vllm"


def _collective_op(name, comm, algo, nbytes, in_nelems, out_nelems, transfer, anchor, launch, graph,
                   c10d, stream):
    op = {"name": name, "cat": "kernel", "kind": "collective", "expert": False, "stream": stream,
            "dur": transfer, "gap": 1.0, "ext": anchor["ext"] or not graph, "launch": launch,
            "algo": algo, "comm": comm, "bytes": nbytes, "in_nelems": in_nelems,
            "out_nelems": out_nelems, "graph": graph, "c10d": c10d and not graph and algo != "custom"}
    if "kind" in anchor:
        op["src_kind"] = anchor["kind"]
    return op


def _logits_anchor(kernels, tail):
    """The LM-head GEMM: the last sharded kernel of the tail (its all-gather follows)."""
    hits = [i for i in tail if SHARDED_RE.search(kernels[i]["name"])]
    return hits[-1] if hits else None


def build_program(model, layers, tp, framework, gbps=100.0,
                  custom_limit=512 * 1024, moe=False, comm_stream=None, vocab=151936,
                  single_node=True):
    """Program of one step: ops in order (compute kernels and collectives) plus launches.

    layers: how many decoder layers to keep (from the first); tp: TP size (sharded
    kernels are divided by it; collectives only when tp > 1); moe: relabel the MLP GEMMs
    of every layer as expert kernels (``fused_moe_kernel``); comm_stream: stream id of the
    collectives (default: the compute stream, as SGLang's custom all-reduce and pynccl).
    Collectives: the two TP all-reduces of every layer, and the logits all-gather after
    the LM head when the LM head is launched eagerly (prefill in SGLang, every step in
    vLLM V1, whose compute_logits runs outside the CUDA graph); vocab sets its size.
    single_node: the TP group's ranks share a host (else no custom all-reduce)."""
    kernels = model["kernels"]
    prologue, all_layers, tail, norms = layer_layout(kernels)
    if not 1 <= layers <= len(all_layers):
        raise ValueError(f"layers must be 1..{len(all_layers)}")
    keep = list(prologue) + [i for r in all_layers[:layers] for i in r] + list(tail)
    anchors = {n - 1 for n in norms}
    experts = set()
    native = {i for i, k in enumerate(kernels) if EXPERT_RE.search(k["name"])}
    if native:
        experts = native
    elif moe:
        # Dense source: the MLP GEMMs (between the post-attention norm and the next
        # residual norm) stand in for expert kernels.
        for k in range(len(all_layers)):
            experts |= {i for i in range(norms[2 * k] + 1, norms[2 * k + 1])
                        if SHARDED_RE.search(kernels[i]["name"])}
    nbytes = model["tokens"] * model["hidden"] * 2
    ar_name, algo = allreduce_kernel(framework, nbytes, tp, model, custom_limit, single_node)
    launch_name = "hipLaunchKernel" if vendor_bf16(model) == "__hip_bfloat16" else "cudaLaunchKernel"
    use = _launch_use(model)
    c10d = _uses_c10d(framework)
    program = {"stage": model["stage"], "batch": model["batch"], "tokens": model["tokens"],
               "source_annotation": model["annotation"], "framework": framework,
               "launches": _resolved_launches(model), "ops": [], "tp": tp,
               "allreduce": {"name": ar_name, "algo": algo, "bytes": nbytes,
                             "transfer_us": transfer_us(algo, nbytes, tp, gbps)}}
    lm_head = _logits_anchor(kernels, tail)
    for i in keep:
        k = kernels[i]
        program["ops"].append(_compute_op(k, tp, i in experts, use.get(k["launch"], 0) > 1))
        stream = comm_stream if comm_stream is not None else k["stream"]
        if i in anchors and tp > 1:
            launch, graph = _comm_launch(model, program, k, "custom" if algo == "custom" else "allreduce",
                                         launch_name, c10d)
            nelems = nbytes // 2
            program["ops"].append(_collective_op(ar_name, "allreduce", algo, nbytes, nelems, nelems,
                                                 program["allreduce"]["transfer_us"], k, launch, graph,
                                                 c10d, stream))
        elif i == lm_head and tp > 1 and use.get(k["launch"], 0) == 1:
            out_nelems = model["batch"] * vocab
            ag_bytes = out_nelems * 2
            launch, graph = _comm_launch(model, program, k, "allgather", launch_name, c10d)
            transfer = 15.0 + (tp - 1) / tp * ag_bytes / (gbps * 1e3)
            program["ops"].append(_collective_op(
                "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "allgather", "ring",
                ag_bytes, out_nelems // tp, out_nelems, transfer, k, launch, graph, c10d, stream))
    program["launches"] = retarget_launches(program["launches"], framework)
    return program


# Where each framework's Python tree puts what the SGLang step models' frames name (facts
# from the frameworks' source trees: TRT-LLM's PyTorch backend under tensorrt_llm/_torch/,
# TokenSpeed's runtime under python/tokenspeed/runtime/). A TRT-LLM or TokenSpeed rank set
# built from an SGLang step model would otherwise carry SGLang's frames, a structure no
# real trace of those frameworks has (and the trace's content would name SGLang).
_TREE_SUBDIRS = {
    "trtllm": [("srt/layers/", "_torch/modules/"), ("srt/models/", "_torch/models/modeling_"),
               ("srt/managers/", "_torch/pyexecutor/"), ("srt/model_executor/", "_torch/pyexecutor/"),
               ("srt/distributed/", "_torch/distributed/"), ("srt/", "_torch/"),
               ("jit_kernel/", "_torch/custom_ops/"), ("", "")],
    "tokenspeed": [("srt/", "runtime/"), ("", "")],
}
_TREE_ROOTS = {"trtllm": "/usr/local/lib/python3.12/dist-packages/tensorrt_llm/",
               "tokenspeed": "/opt/tokenspeed/python/tokenspeed/"}
_SGLANG_ROOT_RE = re.compile(r"^(?:.*/)?(?:python/)?sglang/")


def _retarget_frame(frame, framework):
    """One python_function frame of an SGLang step model moved into framework's tree."""
    m = _SGLANG_ROOT_RE.match(frame[1]) if frame[0] == "python_function" else None
    if not m or framework not in _TREE_ROOTS:
        return list(frame)
    rest = frame[1][m.end():]
    old, new = next((o, n) for o, n in _TREE_SUBDIRS[framework] if rest.startswith(o))
    return [frame[0], _TREE_ROOTS[framework] + new + rest[len(old):]] + list(frame[2:])


def retarget_launches(launches, framework):
    """The launches' host stacks with SGLang's frames moved into framework's tree (TRT-LLM,
    TokenSpeed); SGLang and vLLM programs keep their own."""
    return [dict(l, stack=[_retarget_frame(f, framework) for f in l["stack"]]) for l in launches]


def empty_program(framework):
    """A step that schedules nothing (vLLM V1 execute_context_0(0)_generation_0(0)): the
    step annotation on the host, no GPU work."""
    return {"stage": "empty", "batch": 0, "tokens": 0, "source_annotation": "", "framework": framework,
            "launches": [], "ops": [], "tp": 1, "allreduce": None}


def annotation_name(program, style):
    """Step span written on the host: "sglang" = SGLang's step[...] (model_runner's
    record_function(build_step_span_name(...))), "vllm-v1" = vLLM V1's
    execute_context_{C}({c})_generation_{G}({g}) (C, G: prefill and decode requests of the
    step; c: their prompt tokens, g: decode tokens), "source" = the source trace's own
    (older) execute_{tokens}_context_... span, "none" = no span."""
    if style == "sglang" and program["stage"] != "empty":
        return step_annotation(program)
    if style == "vllm-v1":
        return vllm_v1_annotation(program)
    if style == "source" and EXECUTE_ANNOTATION_RE.match(program.get("source_annotation", "")):
        return program["source_annotation"]
    return None


def step_annotation(program):
    if program["stage"] == "prefill":
        return f"step[EXTEND bs={program['batch']} toks={program['tokens']}]"
    return f"step[DECODE bs={program['batch']}]"


def vllm_v1_annotation(program):
    """execute_context_C(c)_generation_G(g): the request counts of the source step (its
    older execute_{tokens}_context_{C}(..)_generation_{G}(..) span), else a pure decode
    step of batch requests; an empty step is context_0(0)_generation_0(0)."""
    if program["stage"] == "empty":
        return "execute_context_0(0)_generation_0(0)"
    m = EXECUTE_ANNOTATION_RE.match(program.get("source_annotation", ""))
    ctx, gen = (int(m.group(2)), int(m.group(3))) if m else (0, program["batch"])
    ctx_tokens = max(program["tokens"] - gen, 0) if ctx else 0
    return f"execute_context_{ctx}({ctx_tokens})_generation_{gen}({gen})"


# ---------------------------------------------------------------------------------------
# simulation of one TP group

def _r3(value):
    """Times are kept to the ns (3 decimals in us), as Kineto writes them, so that a
    kernel that starts when another ends has exactly that timestamp in the file."""
    return round(value, 3)


def _launch_order(program):
    """Launch indices in order of first use (None excluded)."""
    order = []
    for op in program["ops"]:
        if op["launch"] is not None and op["launch"] not in order:
            order.append(op["launch"])
    return order


def _scheduler_delays(group, stage, knobs, rng, step=0):
    """Per-rank host delay at the start of a step.

    first-collective wait (knobs first_wait_us, in first_wait_stages): one rank (never
    the group's first, which the reports analyse by default) is late by the full wait, the
    others by at most a quarter of it, so the group's first rank waits 0.75-1x the wait at
    its first collective; the late rank is drawn anew each step, or with
    first_wait_rotate taken in turn (every rank once per len(group) steps: the wait is
    spread, no rank holds the group back).
    late rank (knobs late_rank, late_us, in late_stages): that rank's step annotation
    starts late by 0.3-1x late_us in every step, its node peers' within
    HOST_JITTER_US, the way one rank's slow scheduler holds a whole TP group back."""
    delays = {r: 0.0 for r in group}
    first_wait = knobs["first_wait_us"] if stage in knobs["first_wait_stages"] else 0.0
    if first_wait:
        late = group[(step + 1) % len(group)] if knobs.get("first_wait_rotate") else rng.choice(group[1:])
        delays = {r: (first_wait if r == late else rng.uniform(0.0, 0.25 * first_wait)) for r in group}
    if knobs.get("late_rank") in group and stage in knobs.get("late_stages", ()):
        for r in group:
            delays[r] += rng.uniform(0.0, HOST_JITTER_US)
        delays[knobs["late_rank"]] += knobs["late_us"] * rng.uniform(0.3, 1.0)
    return delays


def _rank_factor(op, rank, stage, knobs):
    if op["kind"] != "compute" or op["cat"] != "kernel":
        return 1.0
    slowed = rank == knobs["slow_rank"] and stage in knobs.get("slow_stages", (stage,))
    factor = (1.0 + (knobs["slowdown"] if slowed else 0.0)) * knobs.get("batch_scale", 1.0)
    if op.get("expert") and rank == knobs["moe_hot_rank"]:
        factor *= 1.0 + knobs["moe_imbalance"]
    return factor


def _place_collective(op, index, group, earliest, knobs, rng, placed, t):
    """Collective: ends at max arrival + transfer on every rank, each rank's end a little
    later by its own jitter (knobs end_jitter_us: matched instances end within it, as
    ranks on one node do). Returns its ground truth."""
    transfer = _r3(op["dur"] * (1.0 + knobs["noise"] * rng.uniform(-1.0, 1.0)))
    end = _r3(max(earliest.values()) + transfer)
    ends = {r: _r3(end + rng.uniform(0.0, knobs.get("end_jitter_us", 0.0))) for r in group}
    for r in group:
        placed[r].append((op, earliest[r], _r3(ends[r] - earliest[r])))
        t[r] = ends[r]
    return {"op_index": index, "name": op["name"], "comm": op.get("comm"), "transfer_us": transfer,
            "end_global_us": end, "arrival_global_us": dict(earliest)}


def _simulate_step(program, group, host_start, gpu_free, knobs, rng, delays):
    """Place one step on every rank of the group (global time). Returns per-rank records
    and the collectives' ground truth."""
    order = _launch_order(program)
    host = {r: {l: _r3(host_start + delays[r] + j * HOST_LAUNCH_SPACING_US) for j, l in enumerate(order)}
            for r in group}
    placed = {r: [] for r in group}
    truth = []
    t = dict(gpu_free)
    for index, op in enumerate(program["ops"]):
        earliest = {}
        for r in group:
            e = t[r] + op["gap"]
            if op["launch"] is not None:
                e = max(e, host[r][op["launch"]] + LAUNCH_LATENCY_US)
            earliest[r] = e
        earliest = {r: _r3(e) for r, e in earliest.items()}
        if op["kind"] == "collective":
            truth.append(_place_collective(op, index, group, earliest, knobs, rng, placed, t))
            continue
        for r in group:
            factor = _rank_factor(op, r, program["stage"], knobs)
            dur = _r3(op["dur"] * factor * (1.0 + knobs["noise"] * rng.uniform(-1.0, 1.0)))
            placed[r].append((op, earliest[r], dur))
            t[r] = _r3(earliest[r] + dur)
    records = {r: {"annotation": step_annotation(program), "stage": program["stage"],
                   "host_start": _r3(host_start + delays[r]), "launch_host_ts": host[r],
                   "kernels": placed[r], "gpu_end": t[r]} for r in group}
    return records, truth


def simulate_group(programs, group, knobs, seed, host_start=2_000_000_000.0):
    """Run the steps (a list of programs) on one TP group.

    knobs: slow_rank, slowdown, slow_stages, moe_hot_rank, moe_imbalance, noise,
    first_wait_us, first_wait_stages, late_rank, late_us, late_stages, end_jitter_us,
    batch_scale (every compute kernel of the group: a DP replica's own batch),
    step_gap_jitter_us (each step's host start 0..this later: a replica's own scheduler).
    Returns ({rank: [step record]}, [per-step collective truth])."""
    rng = random.Random(seed)
    per_rank = {r: [] for r in group}
    truth = []
    gpu_free = {r: host_start for r in group}
    for step, program in enumerate(programs):
        delays = _scheduler_delays(group, program["stage"], knobs, rng, step)
        records, coll = _simulate_step(program, group, host_start, gpu_free, knobs, rng, delays)
        for r in group:
            records[r]["delay_us"] = delays[r]
            per_rank[r].append(records[r])
            gpu_free[r] = records[r]["gpu_end"]
        truth.append({"step": step, "stage": program["stage"], "delays_us": delays, "collectives": coll})
        host_end = host_start + max(delays.values()) + len(_launch_order(program)) * HOST_LAUNCH_SPACING_US
        host_start = max(max(gpu_free.values()), host_end + EMPTY_STEP_US) + STEP_HOST_GAP_US
        if knobs.get("step_gap_jitter_us"):
            host_start += rng.uniform(0.0, knobs["step_gap_jitter_us"])
    return per_rank, truth


# ---------------------------------------------------------------------------------------
# rendering one rank as a Kineto trace

class _Ids:
    """Per-rank id counters (External id, correlation, Python id)."""

    def __init__(self, base):
        self.ext = base
        self.corr = base * 4
        self.py = base * 8

    def next(self, kind):
        value = getattr(self, kind) + 1
        setattr(self, kind, value)
        return value


def _frame_event(frame, start, pid, ids, parent_py):
    cat, name = frame[0], frame[1]
    if cat == "python_function":
        py_id = ids.next("py")
        args = {"Python parent id": parent_py, "Python id": py_id, "Python thread": 0}
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": pid, "ts": start,
                "dur": 0.0, "args": args}, py_id
    args = {"External id": ids.next("ext"), "Record function id": 0}
    if len(frame) > 2:
        args.update(frame[2])
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": pid, "ts": start,
            "dur": 0.0, "args": args}, parent_py


def _close_frames(open_frames, keep, last_h):
    """Close open frames deeper than keep; children end before their parents."""
    while len(open_frames) > keep:
        depth = len(open_frames) - 1
        event = open_frames.pop()[0]
        end = last_h + HOST_LAUNCH_DUR_US + FRAME_EPS_US * (MAX_FRAME_DEPTH - depth)
        event["dur"] = end - event["ts"]


def _frame_key(frame):
    """What makes two launches' frames one event: category, name and the op's args (two
    GEMMs of other shapes are two aten::mm calls)."""
    return (frame[0], frame[1], json.dumps(frame[2], sort_keys=True) if len(frame) > 2 else None)


def emit_host_step(out, launches, launch_ts, pid, ids, comm_args):
    """Emit the python_function / cpu_op frames and the runtime launch of every launch of
    one step, nesting consecutive launches under their common frames. comm_args: {launch
    index: c10d args} for the record_param_comms of an eager c10d collective. Returns
    {launch index: (correlation, External id or None)}."""
    open_frames = []  # (event, frame key, python id)
    links = {}
    last_h = None
    for launch, h in sorted(launch_ts.items(), key=lambda kv: kv[1]):
        stack = launches[launch]["stack"][-MAX_FRAME_DEPTH + 1:]
        keep = 0
        while (keep < len(open_frames) and keep < len(stack)
               and open_frames[keep][1] == _frame_key(stack[keep])):
            keep += 1
        if last_h is not None:
            _close_frames(open_frames, keep, last_h)
        for depth in range(keep, len(stack)):
            frame = list(stack[depth][:3])  # a CPU op's own args (shapes), when it has them
            if frame[1] == "record_param_comms" and launch in comm_args:
                frame.append(comm_args[launch])
            parent = open_frames[-1][2] if open_frames else 0
            event, py_id = _frame_event(frame, h - FRAME_EPS_US * (MAX_FRAME_DEPTH - depth), pid, ids, parent)
            out.append(event)
            open_frames.append((event, _frame_key(stack[depth]), py_id))
        ext = next((f[0]["args"]["External id"] for f in reversed(open_frames)
                    if f[0]["cat"] == "cpu_op"), None)
        corr = ids.next("corr")
        args = {"External id": ext, "correlation": corr} if ext is not None else {"correlation": corr}
        out.append({"ph": "X", "cat": "cuda_runtime", "name": launches[launch]["name"], "pid": pid,
                    "tid": pid, "ts": h, "dur": HOST_LAUNCH_DUR_US, "args": args})
        links[launch] = (corr, ext)
        last_h = h
    if last_h is not None:
        _close_frames(open_frames, 0, last_h)
    return links


def c10d_args(op, group, pg_name):
    """Kernel/record_param_comms args PyTorch's c10d adds to an eager collective (as in the
    shared HTA DDP trace and SGLang's logits all-gather): name, sizes, dtype, process
    group ("Process Group Ranks" is a string)."""
    name = "_allgather_base" if op.get("comm") == "allgather" else "allreduce"
    return {"Collective name": name, "In msg nelems": op["in_nelems"], "Out msg nelems": op["out_nelems"],
            "Group size": len(group), "dtype": "BFloat16", "In split size": "[]",
            "Out split size": "[]", "Process Group Name": pg_name,
            "Process Group Description": "undefined", "Process Group Ranks": str(list(group))}


def _kernel_event(op, start, dur, gpu_pid, device, link, extra):
    """extra: c10d args of an eager c10d collective, or the graph id / graph node id of a
    kernel replayed from a CUDA/HIP graph (which carries nothing else)."""
    args = {}
    corr, ext = link if link else (None, None)
    if op.get("ext") and ext is not None:
        args["External id"] = ext
    args["device"] = device
    args["stream"] = op["stream"]
    if corr is not None:
        args["correlation"] = corr
    if "src_kind" in op:
        args["kind"] = op["src_kind"]
    for key in ("bytes", "grid", "block"):
        if key in op and op["kind"] != "collective":
            args[key] = op[key]
    args.update(extra)
    return {"ph": "X", "cat": op["cat"], "name": op["name"], "pid": gpu_pid, "tid": op["stream"],
            "ts": start, "dur": dur, "args": args}


def _metadata_events(host_pid, gpu_pid, streams, process_name):
    out = [{"ph": "M", "name": "process_name", "pid": host_pid, "tid": 0, "args": {"name": process_name}},
           {"ph": "M", "name": "process_name", "pid": gpu_pid, "tid": 0, "args": {"name": f"GPU {gpu_pid}"}},
           {"ph": "M", "name": "thread_name", "pid": host_pid, "tid": host_pid, "args": {"name": "python3"}}]
    for s in sorted(streams):
        out.append({"ph": "M", "name": "thread_name", "pid": gpu_pid, "tid": s, "args": {"name": f"stream {s}"}})
    return out


def _annotation_event(record, name, host_pid, ids):
    """The step's user annotation: around its launches, or a short span at the step's host
    start when it launches nothing (an empty step)."""
    if record["launch_host_ts"]:
        first = min(record["launch_host_ts"].values())
        last = max(record["launch_host_ts"].values())
        ts, dur = first - 1.0, last - first + HOST_LAUNCH_DUR_US + 2.0
    else:
        ts, dur = record["host_start"], EMPTY_STEP_US
    return {"ph": "X", "cat": "user_annotation", "name": name, "pid": host_pid, "tid": host_pid,
            "ts": ts, "dur": dur, "args": {"External id": ids.next("ext"), "Record function id": 0}}


def _kernel_extras(record, meta):
    """Per placed kernel: its c10d args or its graph ids (see _kernel_event)."""
    out, node = [], {}
    for op, _, _ in record["kernels"]:
        if op.get("c10d"):
            out.append(c10d_args(op, meta["group"], meta["pg_name"]))
        elif op.get("graph"):
            node[op["launch"]] = node.get(op["launch"], 0) + 1
            out.append({"graph id": 1 + op["launch"], "graph node id": node[op["launch"]]})
        else:
            out.append({})
    return out


def render_rank_trace(rank, records, programs, meta):
    """Kineto trace (dict) of one rank. meta: device, host_pid, offset_us, group, pg_name,
    distributed_info, device_props, annotation_style, base_time_ns, host_name (top-level
    member: the node), process_name (metadata of the host process)."""
    ids = _Ids(1000 * (rank + 1))
    host_pid, device, offset = meta["host_pid"], meta["device"], meta["offset_us"]
    events, streams = [], set()
    for record, program in zip(records, programs):
        extras = _kernel_extras(record, meta)
        comm = {op["launch"]: x for (op, _, _), x in zip(record["kernels"], extras) if op.get("c10d")}
        step_events = []
        links = emit_host_step(step_events, program["launches"], record["launch_host_ts"], host_pid, ids, comm)
        name = annotation_name(program, meta.get("annotation_style", "sglang"))
        if name:
            step_events.append(_annotation_event(record, name, host_pid, ids))
        for (op, start, dur), extra in zip(record["kernels"], extras):
            streams.add(op["stream"])
            link = links.get(op["launch"]) if op["launch"] is not None else None
            step_events.append(_kernel_event(op, start, dur, device, device, link, extra))
        events.extend(step_events)
    for e in events:
        e["ts"] += offset
    events.sort(key=lambda e: (e["ts"], -e["dur"]))
    doc = {"schemaVersion": 1}
    if meta["device_props"] is not None:  # some real ranks' traces lack them
        doc["deviceProperties"] = [dict(meta["device_props"], id=device)]
    doc.update({"distributedInfo": meta["distributed_info"], "record_shapes": 1, "with_stack": 1,
           "host_name": meta.get("host_name", "localhost"),
           "displayTimeUnit": "ms", "baseTimeNanoseconds": meta["base_time_ns"],
           "traceEvents": _metadata_events(host_pid, device, streams,
                                           meta.get("process_name", "python3")) + events})
    return doc


NCCL_BACKEND = "cuda:nccl"
GLOO_BACKEND = "cpu:gloo,cuda:gloo"


def process_groups(world, dims):
    """Every process group a serving framework creates, in creation order, as dicts
    (pg_name, pg_desc, backend_config, ranks, dim): the default group over the world,
    then for each parallel dimension (dims: [(name, [ranks of each group])], every rank in
    one group of each) an NCCL group and its gloo twin per group. torch numbers groups in
    creation order on every rank, so the names agree across ranks. Dimensions of size 1
    give the groups of one that real runs are full of."""
    out = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": NCCL_BACKEND,
            "ranks": list(range(world)), "dim": "default"}]
    for dim, groups in dims:
        for group in groups:
            for backend in (NCCL_BACKEND, GLOO_BACKEND):
                out.append({"pg_name": str(len(out)), "pg_desc": "undefined", "backend_config": backend,
                            "ranks": list(group), "dim": dim})
    return out


def pg_name_of(pgs, dim, rank):
    """pg_name of the NCCL group of dimension dim that holds rank."""
    return next(pg["pg_name"] for pg in pgs
                if pg["dim"] == dim and rank in pg["ranks"] and pg["backend_config"] == NCCL_BACKEND)


def distributed_info(rank, world, pgs):
    """distributedInfo as PyTorch writes it: pg_config lists every group that holds the
    rank (the default group, its NCCL groups and their gloo twins, many of size one)."""
    mine = [{"pg_name": pg["pg_name"], "pg_desc": pg["pg_desc"], "backend_config": pg["backend_config"],
             "pg_size": len(pg["ranks"]), "ranks": pg["ranks"]} for pg in pgs if rank in pg["ranks"]]
    return {"backend": "nccl", "rank": rank, "world_size": world, "pg_count": len(mine),
            "pg_config": mine, "nccl_version": "2.21.5"}
