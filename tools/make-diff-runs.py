#!/usr/bin/env python3
"""make-diff-runs.py - two generated single-rank runs (before/after) for `triage diff`.

Both runs are the same SGLang decode program (real Qwen3-8B MI300X step, see
tools/tracesynth.py; TP 1, --layers layers, --steps steps, CUDA/HIP-graph replay),
simulated with different noise seeds. The "after" run carries three injected changes:

  slower   every kernel whose name matches --slow-kernel takes --slow-factor times as long
           (default: the MLP gate_up GEMM, 1.30, by far the largest change);
  removed  every --removed-kernel launch is gone (default: rotary_embedding_kernel);
  new      in its place runs --new-kernel, --new-dur-us long (default: an inductor
           Triton kernel, as if RoPE had been compiled into a fused kernel).

--rename-kernel REGEX (with --rename-to, --rename-factor) renames the after run's
matching kernels by re.sub and scales their time, as another GPU or BLAS library picks
other kernels for the same ops; the manifest lists them as renamed_from / renamed_to.

--gemm-types BEFORE AFTER (bf16, fp16 or fp8; an eager --source such as the prefill step
model) makes every GEMM launch record its shapes and number format as the profiler does
with record_shapes (aten::mm, or aten::_scaled_mm for fp8), with Qwen3-8B's dimensions:
a run that moved its GEMMs to another format.

--after-step-scale F1,F2,... scales every kernel of the after run's step i by the factor
F[i mod n]: steps of unequal work (batches of varying size), whose spread sets the diff's
noise floor.

--no-changes leaves all three out (the same program run twice: nothing but noise), and
--after-steps N profiles N steps in the after run (default --steps): a run against itself
with twice the steps must be within noise once times are per step. --slow-kernel and
--slow-factor pick the slowed family (e.g. '^void paged_attention' 1.5: attention 50 %
slower).

Noise: every other kernel instance is scaled by its own factor in 1 +- --noise
(default 1 %) in both runs, so no uninjected kernel family moves by more than that;
the manifest's noise floor (--floor-pct, default 3 %) sits above it.

Output (--out DIR): DIR/before/ and DIR/after/ (profile directories, one file each,
named as SGLang names a TP-0 trace) and DIR/manifest.json with the injected changes,
their deltas measured on the generated files (GPU time per step per canonical kernel
name, as triage's kernel table matches them) and the largest uninjected delta. Deterministic:
the same arguments give the same bytes. Python 3 standard library only.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracesynth as ts  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(REPO, "tests", "data", "sources", "sglang-qwen3-8b-decode.step.json.gz")
GATE_UP = r"^Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_"
NEW_KERNEL = "triton_poi_fused_add_cat_mul_neg_slice_0"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--source", default=SOURCE)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--after-steps", type=int, default=None, help="steps of the after run (default --steps)")
    p.add_argument("--no-changes", action="store_true", help="inject nothing: the same program twice")
    p.add_argument("--slow-kernel", default=GATE_UP, help="regex of the family made slower")
    p.add_argument("--slow-factor", type=float, default=1.30)
    p.add_argument("--removed-kernel", default=r"^void rotary_embedding_kernel<")
    p.add_argument("--new-kernel", default=NEW_KERNEL)
    p.add_argument("--new-dur-us", type=float, default=4.5)
    p.add_argument("--rename-kernel", default=None,
                   help="regex: the after run's kernels matching it are renamed (another GPU's picks)")
    p.add_argument("--rename-to", default="", help="re.sub replacement of --rename-kernel's match")
    p.add_argument("--rename-factor", type=float, default=1.0, help="duration factor of renamed kernels")
    p.add_argument("--gemm-types", nargs=2, metavar=("BEFORE", "AFTER"), choices=["bf16", "fp16", "fp8"],
                   help="eager sources: the GEMM launches record shapes and this number format")
    p.add_argument("--noise", type=float, default=0.01)
    p.add_argument("--after-step-scale", default=None, metavar="F1,F2,...",
                   help="scale every kernel of the after run's step i by F[i mod n] "
                        "(steps of unequal work, as batches of varying size)")
    p.add_argument("--floor-pct", type=float, default=3.0)
    p.add_argument("--profile-id", default="1700000100.000")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def canonical_name(name):
    """triage's kernel identity (reference sec. 2.5): whitespace normalised, hex literals
    as 0xADDR, the parameter list of a `void f<...>(...)` name cut."""
    name = re.sub(r"0x[0-9a-fA-F]+", "0xADDR", " ".join(name.split()))
    if name.startswith("void ") and name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                return name[:i].rstrip()
    return name


def after_program(program, args):
    """Copy of the program with the three changes injected."""
    slow, removed = re.compile(args.slow_kernel), re.compile(args.removed_kernel)
    out = dict(program, ops=[])
    for op in program["ops"]:
        if removed.search(op["name"]):
            out["ops"].append(dict(op, name=args.new_kernel, dur=args.new_dur_us, ext=False,
                                   grid=[64, 1, 1], block=[128, 1, 1]))
            continue
        if slow.search(op["name"]):
            op = dict(op, dur=op["dur"] * args.slow_factor)
        if args.rename_kernel and re.search(args.rename_kernel, op["name"]):
            op = dict(op, name=re.sub(args.rename_kernel, args.rename_to, op["name"]),
                      dur=op["dur"] * args.rename_factor)
        out["ops"].append(op)
    return out


# Qwen3-8B (the sources' model, TP 1): each decoder layer's GEMMs in launch order as
# (N, K) of A (M x K) times B (K x N): QKV, attention output, MLP gate_up, down; then the
# LM head over the last token of each sequence (M = batch).
QWEN3_8B_LAYER_GEMMS = [(6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288)]
QWEN3_8B_LM_HEAD = (151936, 4096)
GEMM_RE = re.compile(r"^Cijk_|gemm", re.IGNORECASE)


def gemm_args(kind, m, n, k):
    """The launching CPU op of a GEMM of this number format and its args, as the profiler
    records them (record_shapes): bf16/fp16 through aten::mm, fp8 through
    aten::_scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)
    with MI300's fnuz e4m3 and a bf16 output (ScalarType 15)."""
    if kind == "fp8":
        fp8 = "c10::Float8_e4m3fnuz"
        return "aten::_scaled_mm", {"Input Dims": [[m, k], [k, n], [], [], [], [], [], []],
                                    "Input type": [fp8, fp8, "float", "float", "", "", "Scalar", "Scalar"],
                                    "Concrete Inputs": ["", "", "", "", "", "", "15", "False"]}
    name = {"bf16": "c10::BFloat16", "fp16": "c10::Half"}[kind]
    return "aten::mm", {"Input Dims": [[m, k], [k, n]], "Input type": [name, name],
                        "Concrete Inputs": ["", ""]}


def with_gemm_types(program, kind):
    """Copy of an eager program whose GEMM launches record their shapes and number format
    (the step models keep no op args): the innermost CPU op of each GEMM launch becomes
    gemm_args(kind, ...) for its place in the layer (QWEN3_8B_LAYER_GEMMS; the last GEMM
    is the LM head)."""
    out = dict(program, launches=[dict(l, stack=[list(f) for f in l["stack"]]) for l in program["launches"]])
    gemms = [op for op in out["ops"] if GEMM_RE.search(op["name"]) and op["launch"] is not None]
    for i, op in enumerate(gemms):
        last = i == len(gemms) - 1 and len(gemms) % 4 == 1
        n, k = QWEN3_8B_LM_HEAD if last else QWEN3_8B_LAYER_GEMMS[i % 4]
        m = program["batch"] if last else program["tokens"]
        stack = out["launches"][op["launch"]]["stack"]
        inner = max((j for j, f in enumerate(stack) if f[0] == "cpu_op"), default=None)
        if inner is None:
            continue
        name, op_args = gemm_args(kind, m, n, k)
        stack[inner] = ["cpu_op", name, op_args]
    return out


def run(args, programs, seed, sub):
    knobs = {"slow_rank": None, "slowdown": 0.0, "moe_hot_rank": None, "moe_imbalance": 0.0,
             "noise": args.noise, "first_wait_us": 0.0, "first_wait_stages": []}
    records, _ = ts.simulate_group(programs, [0], knobs, seed=seed)
    model = ts.load_step_model(args.source)
    meta = {"device": 0, "host_pid": 4000, "offset_us": 0.0, "group": [0], "pg_name": "1",
            "distributed_info": ts.distributed_info(0, 1, ts.process_groups(1, [])), "device_props": model["device"],
            "base_time_ns": 1_700_000_000_000_000_000, "annotation_style": "sglang",
            "host_name": "python3"}
    doc = ts.render_rank_trace(0, records[0], programs, meta)
    path = os.path.join(args.out, sub, f"{args.profile_id}-TP-0.trace.json.gz")
    ts.write_trace(path, doc)
    return path, doc


def family_times(doc):
    out = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            key = canonical_name(e["name"])
            out[key] = out.get(key, 0.0) + e["dur"]
    return out


def per_step(times, steps):
    return {k: v / steps for k, v in times.items()}


def change(kind, name, before, after):
    b, a = before.get(name, 0.0), after.get(name, 0.0)
    return {"change": kind, "canonical_name": name, "before_us": round(b, 3), "after_us": round(a, 3),
            "delta_us": round(a - b, 3), "delta_pct": round(100.0 * (a - b) / b, 2) if b else None}


def after_programs(program, steps, scale):
    """The after run's step programs: the program each step, its kernels scaled by the step's
    factor of --after-step-scale when given."""
    if not scale:
        return [program] * steps
    factors = [float(f) for f in scale.split(",")]
    return [dict(program, ops=[dict(op, dur=op["dur"] * factors[i % len(factors)]) for op in program["ops"]])
            for i in range(steps)]


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    model = ts.load_step_model(args.source)
    base = ts.build_program(model, args.layers, 1, "sglang")
    after_steps = args.after_steps if args.after_steps is not None else args.steps
    changed = base if args.no_changes else after_program(base, args)
    if args.gemm_types:
        base, changed = with_gemm_types(base, args.gemm_types[0]), with_gemm_types(changed, args.gemm_types[1])
    before_path, before = run(args, [base] * args.steps, args.seed * 2 + 1, "before")
    after_path, after = run(args, after_programs(changed, after_steps, args.after_step_scale),
                            args.seed * 2 + 2, "after")
    fb = per_step(family_times(before), args.steps)
    fa = per_step(family_times(after), after_steps)
    injected = []
    if not args.no_changes:
        slow_names = sorted({n for n in fb if re.search(args.slow_kernel, n)})
        removed_names = sorted({n for n in fb if re.search(args.removed_kernel, n)})
        injected = [change("slower", n, fb, fa) for n in slow_names]
        injected += [change("removed", n, fb, fa) for n in removed_names]
        injected.append(change("new", args.new_kernel, fb, fa))
        if args.rename_kernel:
            gone = sorted(n for n in fb if n not in fa)
            came = sorted(n for n in fa if n not in fb and n != args.new_kernel)
            injected += [change("renamed_from", n, fb, fa) for n in gone if n not in removed_names]
            injected += [change("renamed_to", n, fb, fa) for n in came]
    touched = {c["canonical_name"] for c in injected}
    others = [change("noise", n, fb, fa) for n in sorted(set(fb) | set(fa)) if n not in touched]
    worst = max(others, key=lambda c: abs(c["delta_pct"] or 0.0))
    total_b, total_a = sum(fb.values()), sum(fa.values())
    manifest = {"generator": "tools/make-diff-runs.py", "argv": ts.argv_without_out(argv if argv is not None else sys.argv[1:]),
                "before": os.path.relpath(before_path, args.out), "after": os.path.relpath(after_path, args.out),
                "total_gpu_us": {"before": round(total_b, 3), "after": round(total_a, 3),
                                 "delta_us": round(total_a - total_b, 3)},
                "steps": {"before": args.steps, "after": after_steps}, "times": "per step",
                "gemm_types": {"before": args.gemm_types[0], "after": args.gemm_types[1]} if args.gemm_types else None,
                "injected": injected, "first_change": injected[0]["canonical_name"] if injected else None,
                "noise": {"per_kernel_pct": 100.0 * args.noise, "floor_pct": args.floor_pct,
                          "largest_uninjected": worst},
                "families": {"before": len(fb), "after": len(fa)}}
    ts.write_json(os.path.join(args.out, "manifest.json"), manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
