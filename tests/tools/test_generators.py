#!/usr/bin/env python3
"""Tests of the fixture generators and of the generated fixtures (stdlib only).

usage: test_generators.py MODE [--triage BIN]

  model        make-rank-set.py's model holds on fresh rank sets: every collective ends at
               the same global time on all ranks of its group, durations follow from the
               arrivals, the slowed rank waits least (sweep down to 5 %), clock offsets
               are applied, first-collective waits and MoE imbalance are as asked, and
               the four frameworks' file names are as their sources write them
  reproducible tools/make-fixtures.py --check (tests/data equals a fresh generation, byte
               for byte); the same seed twice gives the same bytes, another seed not
  content      the committed fixtures hold what tests/data/README.md says
  read         triage reads every committed fixture (directory and file, Markdown and
               JSON) and exits 0

Every check reads the generated *files*; the manifests are used only for what a file
cannot say (clock offsets, which rank was slowed).
"""

import argparse
import glob
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(REPO, "tools")
DATA = os.path.join(REPO, "tests", "data")
sys.path.insert(0, TOOLS)
import tracesynth as ts  # noqa: E402

COLLECTIVE_RE = re.compile(r"cross_device_reduce|ncclDevKernel_All(Reduce|Gather)")
TOL = 0.005
JITTER = 0.5  # make-rank-set.py --end-jitter-us default
FAILURES = []


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print(f"FAIL: {message}")


def generate(out, *args):
    subprocess.run([sys.executable, os.path.join(TOOLS, "make-rank-set.py"), "--out", out, *map(str, args)],
                   check=True)
    return load_manifest(out)


def load_manifest(out):
    """The manifest make-rank-set.py writes beside its output directory."""
    with open(out.rstrip("/") + ".manifest.json") as handle:
        return json.load(handle)


def gpu_events(path):
    doc = ts.read_json(path)
    return doc, sorted((e for e in doc["traceEvents"] if e.get("ph") == "X"
                        and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")), key=lambda e: e["ts"])


def collectives(events):
    return [e for e in events if COLLECTIVE_RE.search(e["name"])]


def rank_files(root, manifest):
    """{rank: path} of whole-run files (not per-stage files)."""
    return {int(k): os.path.join(root, v) for k, v in manifest["files"].items() if "/" not in k}


# ---------------------------------------------------------------------------------------
# model

def group_waits(root, manifest, group, label):
    """Checks one TP group of a generated set; returns {rank: total wait}."""
    files = rank_files(root, manifest)
    offsets = {r: manifest["clock_offsets_us"][str(r)] for r in group}
    colls = {r: collectives(gpu_events(files[r])[1]) for r in group}
    counts = {len(c) for c in colls.values()}
    check(len(counts) == 1 and counts != {0}, f"{label}: collective counts differ or are zero: {counts}")
    waits = {r: 0.0 for r in group}
    for i in range(min(counts)):
        inst = {r: colls[r][i] for r in group}
        ends = {r: e["ts"] + e["dur"] - offsets[r] for r, e in inst.items()}
        starts = {r: e["ts"] - offsets[r] for r, e in inst.items()}
        check(max(ends.values()) - min(ends.values()) < JITTER + TOL,
              f"{label}: collective {i} ends at different global times {ends}")
        shortest = min(e["dur"] for e in inst.values())
        latest = max(starts.values())
        for r, e in inst.items():
            check(abs((e["dur"] - shortest) - (latest - starts[r])) < JITTER + TOL,
                  f"{label}: collective {i} on rank {r}: wait {e['dur'] - shortest} != arrival gap {latest - starts[r]}")
            waits[r] += e["dur"] - shortest
    return waits


def check_slowdown(tmp, ranks, slow, slowdown, seed):
    out = os.path.join(tmp, f"slow-{ranks}-{slow}-{slowdown}-{seed}")
    m = generate(out, "--ranks", ranks, "--slow-rank", slow, "--slowdown", slowdown,
                 "--layers", 2, "--decode-steps", 2, "--seed", seed)
    group = list(range(ranks))
    waits = group_waits(out, m, group, out)
    least = min(group, key=lambda r: waits[r])
    check(least == slow, f"{out}: least-wait rank {least} is not the slowed rank {slow}: {waits}")
    files = rank_files(out, m)
    busy = {r: sum(e["dur"] for e in gpu_events(files[r])[1]
                   if e["cat"] == "kernel" and not COLLECTIVE_RE.search(e["name"])) for r in group}
    other = statistics.mean(busy[r] for r in group if r != slow)
    check(abs(busy[slow] / other - (1 + slowdown)) < 0.01,
          f"{out}: slowed rank computes {busy[slow] / other:.4f}x, expected {1 + slowdown}")


def check_first_wait(tmp):
    out = os.path.join(tmp, "first-wait")
    m = generate(out, "--ranks", 4, "--first-collective-wait", 450, "--decode-steps", 4, "--seed", 5)
    waits = group_waits(out, m, [0, 1, 2, 3], out)
    check(min(waits.values()) >= 0.0, "first-wait: negative waits")
    ratios = first_wait_ratios(rank_files(out, m)[0])
    check(len(ratios) == 4 and all(20 <= x <= 70 for x in ratios),
          f"first-wait: first all-reduce over median on rank 0 is {ratios}, expected 20-70x")


def first_wait_ratios(path):
    """Per step (SGLang step annotations), first collective / median collective duration."""
    doc, events = gpu_events(path)
    steps = step_windows(doc)
    out = []
    for members in kernels_by_step(doc, events, steps):
        durs = [e["dur"] for e in members if COLLECTIVE_RE.search(e["name"])]
        out.append(durs[0] / statistics.median(durs))
    return out


def check_moe(tmp):
    out = os.path.join(tmp, "moe")
    m = generate(out, "--framework", "vllm", "--ranks", 4, "--moe-imbalance", 0.4, "--moe-hot-rank", 1,
                 "--layers", 3, "--decode-steps", 2, "--seed", 9)
    files = rank_files(out, m)
    expert = {r: sum(e["dur"] for e in gpu_events(files[r])[1] if "matmul_ogs" in e["name"]) for r in range(4)}
    check(abs(expert[1] / expert[0] - 1.4) < 0.02, f"moe: hot rank expert time ratio {expert[1] / expert[0]:.3f}")
    waits = group_waits(out, m, [0, 1, 2, 3], out)
    check(min(waits, key=waits.get) == 1, f"moe: least-wait rank is not the hot rank: {waits}")
    out = os.path.join(tmp, "moe-dense")
    m = generate(out, "--ranks", 2, "--moe-imbalance", 0.2, "--layers", 2, "--decode-steps", 1, "--seed", 9)
    names = {e["name"] for e in gpu_events(rank_files(out, m)[0])[1]}
    check("fused_moe_kernel" in names, "moe on a dense source: no fused_moe_kernel")
    check(all("-EP-" in os.path.basename(p) for p in rank_files(out, m).values()), "sglang MoE files lack -EP-")


NAMES = {
    "sglang": (["--ranks", 4, "--dp", 2, "--stage", "both", "--split-stages"],
               r"^1700000003\.003-TP-[01]-DP-[01]-(prefill|decode)\.trace\.json\.gz$"),
    "tokenspeed": (["--ranks", 4, "--dp", 2, "--stage", "both", "--split-stages"],
                   r"^1700000003\.003-DP[01]-TP[01]-(EXTEND|DECODE)\.trace\.json\.gz$"),
    "vllm": (["--ranks", 4, "--dp", 2], r"^dp[01]_pp0_tp[01]_dcp0_ep[0-3]_rank[0-3]\.\d{19}\.pt\.trace\.json\.gz$"),
    "trtllm": (["--ranks", 4], r"^trace-rank-[0-3]\.json$"),
}


def check_names(tmp):
    for framework, (args, pattern) in NAMES.items():
        out = os.path.join(tmp, f"names-{framework}")
        m = generate(out, "--framework", framework, "--layers", 1, "--decode-steps", 1, "--seed", 3, *args)
        for key, rel in m["files"].items():
            name = os.path.basename(rel)
            check(re.match(pattern, name), f"{framework}: file name {name!r} does not match {pattern}")
            doc = ts.read_json(os.path.join(out, rel))
            rank = int(key.split("/")[0])
            info = doc["distributedInfo"]
            check(info["rank"] == rank and info["world_size"] == 4, f"{framework}: {name} distributedInfo {info}")
            vllm_rank = re.search(r"_rank(\d+)\.", name)
            check(not vllm_rank or int(vllm_rank.group(1)) == rank, f"{framework}: {name} rank field")
        if framework == "vllm":
            api = os.path.join(out, m["api_server_trace"])
            check(re.match(r"^gpu-node-00_\d+\.async_llm\.\d{19}\.pt\.trace\.json\.gz$", os.path.basename(api)),
                  f"vllm: API-server trace name {api}")
            check(not gpu_events(api)[1], "vllm: the API-server trace has GPU events")


C10D_KEYS = ("Collective name", "In msg nelems", "Group size", "dtype", "Process Group Name",
             "Process Group Ranks")
V1_MARKER = re.compile(r"^execute_context_(\d+)\(\d+\)_generation_(\d+)\(\d+\)$")


def check_groups(label, doc, tp_group):
    """pg_config as real runs write it: the world, the TP group as NCCL and gloo, groups
    of one of both backends; returns the pg_names of the NCCL groups over the TP ranks."""
    pgs = doc["distributedInfo"]["pg_config"]
    rank = doc["distributedInfo"]["rank"]
    check(all(rank in pg["ranks"] and pg["pg_size"] == len(pg["ranks"]) for pg in pgs), f"{label}: pg_config")
    ones = {pg["backend_config"] for pg in pgs if pg["pg_size"] == 1}
    check(ones == {"cuda:nccl", "cpu:gloo,cuda:gloo"}, f"{label}: groups of one {ones}")
    tp = [pg for pg in pgs if pg["ranks"] == tp_group and pg["pg_desc"] != "default_pg"]
    check({pg["backend_config"] for pg in tp} == {"cuda:nccl", "cpu:gloo,cuda:gloo"},
          f"{label}: TP group {tp_group} as NCCL and gloo: {tp}")
    return {pg["pg_name"] for pg in tp if pg["backend_config"] == "cuda:nccl"}


def check_collective_args(label, events, framework, tp_pg, tp_group):
    """Eager c10d NCCL kernels carry the PG args (SGLang); pynccl (vLLM), graph-replayed
    and custom all-reduce kernels none; graph kernels their graph ids."""
    colls = collectives(events)
    for e in colls:
        a = e["args"]
        has = [k for k in C10D_KEYS if k in a]
        eager_nccl = "ncclDevKernel" in e["name"] and "graph id" not in a
        if framework == "sglang" and eager_nccl:
            check(len(has) == len(C10D_KEYS) and a["Process Group Name"] in tp_pg
                  and a["Process Group Ranks"] == str(tp_group) and a["Group size"] == len(tp_group),
                  f"{label}: eager NCCL kernel args {a}")
        else:
            check(not has, f"{label}: {e['name'][:40]} carries c10d args {has}")
    check(any("graph id" in e["args"] for e in colls), f"{label}: no collective replayed from a graph")
    check(any("AllGather" in e["name"] for e in colls), f"{label}: no logits all-gather")


def check_real_structure(tmp):
    for framework, extra in (("vllm", ["--ranks", 8, "--nodes", 2, "--empty-steps", 2, "--late-rank", 6,
                                       "--late-us", 600, "--late-stage", "decode", "--slow-rank", 3,
                                       "--slowdown", 0.15, "--slow-stage", "prefill"]),
                             ("sglang", ["--ranks", 4, "--profile-id", "qwen3-8b_tp4_bs32",
                                         "--late-rank", 2, "--late-us", 500, "--late-stage", "decode"])):
        out = os.path.join(tmp, f"real-{framework}")
        m = generate(out, "--framework", framework, "--stage", "both", "--layers", 2, "--decode-steps", 3,
                     "--seed", 8, *extra)
        files = rank_files(out, m)
        group = list(range(m["ranks"]))
        ends = {}
        for rank, path in files.items():
            doc, events = gpu_events(path)
            label = f"real-{framework} rank {rank}"
            tp_pg = check_groups(label, doc, group)
            check_collective_args(label, events, framework, tp_pg, group)
            check(doc["host_name"] == m["hosts"][str(rank)], f"{label}: host_name {doc.get('host_name')}")
            procs = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"]
            want = f"VLLM::Worker_TP{rank}" if framework == "vllm" else f"sglang::scheduler_TP{rank}"
            check(want in procs, f"{label}: process names {procs}")
            ends[rank] = [e["ts"] + e["dur"] for e in collectives(events)]
            if framework == "sglang":
                check("_tp4_" in os.path.basename(path) and f"-TP-{rank}." in os.path.basename(path),
                      f"{label}: file name {path}")
                continue
            marks = [e for e in step_windows(doc)]
            check(all(V1_MARKER.match(w["name"]) for w in marks), f"{label}: markers {[w['name'] for w in marks]}")
            empty = [w for w in marks if w["name"] == "execute_context_0(0)_generation_0(0)"]
            check(len(empty) == 2, f"{label}: {len(empty)} empty steps")
            check(os.path.basename(os.path.dirname(path)) == f"rank-{rank // 4}", f"{label}: folder of {path}")
        # clocks: one per node; the same instance ends within the jitter on a node, the node
        # offset apart across nodes
        for rank in group:
            off = m["clock_offsets_us"][str(rank)] - m["clock_offsets_us"]["0"]
            gaps = [a - b for a, b in zip(ends[rank], ends[0])]
            check(all(abs(g - off) < JITTER + TOL for g in gaps), f"real-{framework}: rank {rank} clock {gaps[:3]} vs {off}")
            if m["hosts"][str(rank)] != m["hosts"]["0"]:
                check(20.0 <= abs(off) <= 100.0, f"real-{framework}: node clock offset {off}")
        stages = {st["stage"]: st for st in m["stages"]}
        check(stages["decode"]["least_wait_rank"] == m["late_rank"] and stages["decode"]["cause"] == "host"
              and stages["decode"]["absorbed_by"]["position"] == 1,
              f"real-{framework}: decode truth {stages['decode']}")
        if m["slow_rank"] is not None:
            check(stages["prefill"]["least_wait_rank"] == m["slow_rank"] and stages["prefill"]["cause"] == "gpu",
                  f"real-{framework}: prefill truth {stages['prefill']}")


def check_anchor_frames():
    model = ts.load_step_model(os.path.join(DATA, "sources", "sglang-qwen3-8b-prefill.step.json.gz"))
    found = ts.anchor_frames(model)
    check(found["anchors"] == 72 and len(found["anchor_frames"]) == 1
          and found["anchor_frames"][0].endswith("/sglang/srt/layers/linear.py(1514): forward")
          and not found["same_frame_elsewhere"],
          f"all-reduce sites are not exactly the RowParallelLinear launches: {found}")


def mode_model(_args):
    with tempfile.TemporaryDirectory() as tmp:
        for ranks, slow, slowdown, seed in [(4, 2, 0.05, 1), (8, 0, 0.05, 2), (8, 7, 0.05, 3),
                                            (8, 3, 0.10, 4), (2, 1, 0.20, 5)]:
            check_slowdown(tmp, ranks, slow, slowdown, seed)
        check_first_wait(tmp)
        check_moe(tmp)
        check_names(tmp)
        check_real_structure(tmp)
    check_anchor_frames()


# ---------------------------------------------------------------------------------------
# reproducible

def tree_bytes(root):
    out = {}
    for base, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(base, name), "rb") as handle:
                out[os.path.relpath(os.path.join(base, name), root)] = handle.read()
    return out


def mode_reproducible(_args):
    rc = subprocess.run([sys.executable, os.path.join(TOOLS, "make-fixtures.py"), "--check"]).returncode
    check(rc == 0, "tools/make-fixtures.py --check: tests/data differs from a fresh generation")
    with tempfile.TemporaryDirectory() as tmp:
        for sub, seed in (("a", 4), ("b", 4), ("c", 5)):
            generate(os.path.join(tmp, sub), "--ranks", 4, "--slow-rank", 1, "--slowdown", 0.05,
                     "--first-collective-wait", 100, "--seed", seed)
        a, b, c = (tree_bytes(os.path.join(tmp, s)) for s in "abc")
        check(a == b, "make-rank-set.py: the same seed gave different bytes")
        check(a != c, "make-rank-set.py: another seed gave the same bytes")
        for sub in ("d", "e"):
            subprocess.run([sys.executable, os.path.join(TOOLS, "make-diff-runs.py"), "--out",
                            os.path.join(tmp, sub), "--seed", "3"], check=True)
        check(tree_bytes(os.path.join(tmp, "d")) == tree_bytes(os.path.join(tmp, "e")),
              "make-diff-runs.py: the same seed gave different bytes")


# ---------------------------------------------------------------------------------------
# content of the committed fixtures

def step_windows(doc):
    ann = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"]
    return sorted(ann, key=lambda e: e["ts"])


def kernels_by_step(doc, events, windows):
    """Kernels grouped by the step annotation window that holds their launch."""
    launch_ts = {e["args"]["correlation"]: e["ts"] for e in doc["traceEvents"]
                 if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    groups = [[] for _ in windows]
    for e in events:
        h = launch_ts.get(e["args"].get("correlation"))
        hits = [i for i, w in enumerate(windows) if h is not None and w["ts"] <= h <= w["ts"] + w["dur"]]
        check(len(hits) == 1, f"kernel {e['name'][:40]} at {e['ts']} is in {len(hits)} step windows")
        if hits:
            groups[hits[0]].append(e)
    return groups


def content_stages():
    root = os.path.join(DATA, "stages", "sglang-step-annotations-tp4")
    m = load_manifest(root)
    check(not os.path.exists(os.path.join(root, "server_args.json")), "stages: server_args.json present")
    expect = m["groups"][0]["steps_of_first_rank"]
    for rank, path in rank_files(root, m).items():
        doc, events = gpu_events(path)
        check(doc["distributedInfo"]["world_size"] == 4, f"stages: {path} world_size")
        windows = step_windows(doc)
        names = [w["name"] for w in windows]
        check(names == ["step[EXTEND bs=15 toks=15360]"] + ["step[DECODE bs=32]"] * 5,
              f"stages: rank {rank} annotations {names}")
        groups = kernels_by_step(doc, events, windows)
        first_decode = min(e["ts"] for e in groups[1])
        check(all(e["ts"] < first_decode for e in groups[0]), f"stages: rank {rank} prefill kernels after decode")
        pre_ar = [e for e in groups[0] if COLLECTIVE_RE.search(e["name"])]
        check(len(pre_ar) == 5 and all("ncclDevKernel" in e["name"] and
                                       e["args"].get("Process Group Ranks") == "[0, 1, 2, 3]" for e in pre_ar)
              and sum("AllGather" in e["name"] for e in pre_ar) == 1,
              f"stages: rank {rank} prefill all-reduces and logits all-gather")
        share = sum(e["dur"] for e in pre_ar) / sum(e["dur"] for e in groups[0])
        check(0.40 <= share <= 0.50, f"stages: rank {rank} prefill all-reduce share {share:.3f}")
        if rank == 0:
            counts = [len(g) for g in groups]
            check(counts == [s["kernels"] for s in expect], f"stages: rank 0 step kernel counts {counts}")
            total = sum(e["dur"] for e in events)
            check(0.80 <= sum(e["dur"] for e in groups[0]) / total <= 0.90, "stages: prefill share of GPU time")


def content_ranks():
    root = os.path.join(DATA, "ranks", "sglang-decode-first-wait-tp4")
    m = load_manifest(root)
    ratios = first_wait_ratios(rank_files(root, m)[0])
    check(len(ratios) == 4 and all(20 <= x <= 70 for x in ratios), f"first-wait fixture: ratios {ratios}")
    group_waits(root, m, [0, 1, 2, 3], "first-wait fixture")
    for name, groups, slowed in (("sglang-decode-slow2-tp4", [[0, 1, 2, 3]], {0: 2}),
                                 ("vllm-v1-dp2-tp4", [[0, 1, 2, 3], [4, 5, 6, 7]], {1: 5})):
        root = os.path.join(DATA, "ranks", name)
        m = load_manifest(root)
        for gi, group in enumerate(groups):
            waits = group_waits(root, m, group, name)
            if gi in slowed:
                check(min(waits, key=waits.get) == slowed[gi], f"{name}: straggler {waits}")
            else:  # only the end jitter of each instance
                n = len(collectives(gpu_events(rank_files(root, m)[group[0]])[1]))
                check(max(waits.values()) < JITTER * n, f"{name}: group {group} waits {waits} without a slowed rank")
    vllm = os.path.join(DATA, "ranks", "vllm-v1-dp2-tp4")
    apis = glob.glob(os.path.join(vllm, "rank-0", "*.async_llm.*.pt.trace.json.gz"))
    check(len(apis) == 1 and not gpu_events(apis[0])[1], "vllm fixture: API-server trace")
    for path in glob.glob(os.path.join(vllm, "rank-*", "dp*_rank*.pt.trace.json.gz")):
        rank = int(re.search(r"_rank(\d+)\.", path).group(1))
        check(ts.read_json(path)["distributedInfo"]["rank"] == rank, f"vllm fixture: {path} rank")


def load_tool(name):
    """Import a tools/ script whose file name is not a module name."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_")[:-3], os.path.join(TOOLS, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def content_diff():
    root = os.path.join(DATA, "diff", "generated")
    with open(os.path.join(root, "manifest.json")) as handle:
        m = json.load(handle)
    mdr = load_tool("make-diff-runs.py")
    fb = mdr.family_times(ts.read_json(os.path.join(root, m["before"])))
    fa = mdr.family_times(ts.read_json(os.path.join(root, m["after"])))
    deltas = {n: fa.get(n, 0.0) - fb.get(n, 0.0) for n in set(fa) | set(fb)}
    first = max(deltas, key=lambda n: abs(deltas[n]))
    check(first == m["first_change"], f"diff: largest change is {first[:50]}, not the injected one")
    injected = {c["canonical_name"] for c in m["injected"]}
    for n, d in deltas.items():
        if n not in injected:
            check(abs(d) / fb[n] * 100.0 < m["noise"]["floor_pct"], f"diff: uninjected {n[:50]} moved {d}")
    kinds = {c["change"]: c for c in m["injected"]}
    check(kinds["new"]["canonical_name"] not in fb and kinds["removed"]["canonical_name"] not in fa,
          "diff: new/removed kernels")


def content_escape():
    doc = ts.read_json(os.path.join(DATA, "escape", "hostile.trace.json"))
    met = load_tool("make-escape-trace.py")
    for cat in ("kernel", "python_function", "cpu_op", "user_annotation"):
        text = "\u0000".join(e["name"] for e in doc["traceEvents"] if e.get("cat") == cat)
        wanted = [met.SCRIPT] if cat == "user_annotation" else [met.SCRIPT, met.ATTR, "</td>"]
        for payload in wanted:
            check(payload in text, f"escape: no {payload!r} in {cat} names")
    every = "\u0000".join(e["name"] for e in doc["traceEvents"])
    for payload in met.PAYLOADS:
        check(payload in every, f"escape: payload {payload!r} missing")


def mode_content(_args):
    content_stages()
    content_ranks()
    content_diff()
    content_escape()


# ---------------------------------------------------------------------------------------
# read

def fixture_inputs():
    dirs = [os.path.join(DATA, "ranks", d) for d in sorted(os.listdir(os.path.join(DATA, "ranks")))
            if os.path.isdir(os.path.join(DATA, "ranks", d))]
    dirs += [os.path.join(DATA, "ranks", "vllm-v1-dp2-tp4", "rank-0"),
             os.path.join(DATA, "stages", "sglang-step-annotations-tp4"),
             os.path.join(DATA, "diff", "generated", "before"), os.path.join(DATA, "diff", "generated", "after")]
    files = sorted(glob.glob(os.path.join(DATA, "ranks", "**", "*.trace.json.gz"), recursive=True))
    files += sorted(glob.glob(os.path.join(DATA, "stages", "**", "*.trace.json.gz"), recursive=True))
    files += [os.path.join(DATA, "escape", "hostile.trace.json")]
    return dirs + [f for f in files if ".async_llm." not in f]


def mode_read(args):
    env = dict(os.environ)
    env.setdefault("TRIAGE_RULES_DIR", os.path.join(REPO, "rules"))
    for path in fixture_inputs():
        for fmt in ("markdown", "json"):
            out = subprocess.run([args.triage, "--quiet", "--format", fmt, path], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            check(out.returncode == 0, f"triage --format {fmt} {path}: exit {out.returncode}: "
                                       f"{out.stderr.decode(errors='replace')[:300]}")
            if fmt == "json" and out.returncode == 0:
                try:
                    json.loads(out.stdout)
                except ValueError as err:
                    check(False, f"triage --format json {path}: {err}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["model", "reproducible", "content", "read"])
    p.add_argument("--triage")
    args = p.parse_args()
    if args.mode == "read" and not args.triage:
        p.error("read needs --triage")
    {"model": mode_model, "reproducible": mode_reproducible, "content": mode_content, "read": mode_read}[args.mode](args)
    print(f"{args.mode}: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
