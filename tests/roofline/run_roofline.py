#!/usr/bin/env python3
"""End-to-end roofline checks (docs/roofline.md), python3 stdlib only.

tracelens  triage --format json on the HF Qwen1.5-0.5B H100 trace: for every GEMM shape of
           TraceLens's own report (tests/data/roofline/*.GEMM.csv, copied from
           ../shared/peers/tracelens), the shape in the kernel rows' roofline objects has
           FLOPs and bytes within 1% and achieved TFLOP/s within 5% (TraceLens counts a
           call's memset beside its GEMM; we count the GEMM kernel). Needs the trace from
           ../shared (exit 77 without it).
mapping    the real graph-replayed SGLang decode step (no launching CPU ops) gets no GEMM
           roofline under a name no model matches; with its eager mapping trace
           (make_mapping.py) every GEMM row gets one from the mapping, and under its own
           name (Qwen3-8B, checked against the trace) the same ones from the model's
           dimensions: the FLOPs of each launch's Qwen3-8B projection.
usage: run_roofline.py tracelens|mapping --triage BIN --source DIR [--shared DIR]
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run_json(triage, *args):
    out = subprocess.run([triage, "--quiet", "--format", "json", *args], capture_output=True,
                         timeout=600)
    if out.returncode != 0:
        sys.exit("triage failed: " + out.stderr.decode("utf-8", "replace"))
    return json.loads(out.stdout)


def shapes_of(report):
    """(op, dims) -> [launches, flops, bytes, time_us] over every row's roofline."""
    shapes = {}
    for st in report["stages"]:
        for k in st["kernels"]:
            for s in (k["roofline"] or {}).get("shapes", []):
                acc = shapes.setdefault((s["op"], s["dims"]), [0, s["flops"], s["bytes"], 0.0])
                acc[0] += s["launches"]
                acc[3] += s["time_us"]
    return shapes


def close(a, b, tol):
    return abs(a - b) <= tol * abs(b)


def tracelens(args):
    trace = os.path.join(args.shared, "traces/real/hf_qwen1.5_0.5b_chat_h100.json.gz")
    if not os.path.exists(trace):
        print("skip: %s is absent" % trace)
        return 77
    csv_path = os.path.join(args.source, "tests/data/roofline/hf_qwen1.5_0.5b_chat_h100.GEMM.csv")
    shapes = shapes_of(run_json(args.triage, trace))
    failures = rows = 0
    with open(csv_path, encoding="utf-8") as f:
        for row in csv.DictReader(f):
            rows += 1
            key = (row["name"], row["Input Dims_first"])
            got = shapes.get(key)
            if not got:
                print("FAIL %s %s: no such shape in the report" % key)
                failures += 1
                continue
            launches, flops, nbytes, time_us = got
            want_flops = float(row["GFLOPS_first"]) * 1e9
            want_bytes = float(row["Data Moved (MB)_first"]) * 1048576
            want_tflops = float(row["TFLOPS/s_mean"])
            tflops = flops * launches / (time_us * 1e6)
            problems = []
            if not close(flops, want_flops, 0.01):
                problems.append("FLOPs %g, TraceLens %g" % (flops, want_flops))
            if not close(nbytes, want_bytes, 0.01):
                problems.append("bytes %g, TraceLens %g" % (nbytes, want_bytes))
            if not close(tflops, want_tflops, 0.05):
                problems.append("%.1f TFLOP/s, TraceLens %.1f" % (tflops, want_tflops))
            if launches != int(row["name_count"]):
                problems.append("%d launches, TraceLens %s calls" % (launches, row["name_count"]))
            print(("FAIL " if problems else "ok   ") + "%s %s: %s" % (
                key[0], key[1], "; ".join(problems) or "%.1f TFLOP/s (TraceLens %.1f)" % (
                    tflops, want_tflops)))
            failures += bool(problems)
    print("%d GEMM shapes, %d failures" % (rows, failures))
    return 1 if failures or not rows else 0


def gemm_rows(report):
    return [k for st in report["stages"] for k in st["kernels"] if k["name"].startswith("Cijk_")]


def check_gemms(report, source, failures):
    """Every GEMM row has a roofline with the FLOPs of a Qwen3-8B decode projection."""
    per_launch = {2 * 32 * 4096 * 6144, 2 * 32 * 4096 * 4096, 2 * 32 * 4096 * 24576,
                  2 * 32 * 12288 * 4096, 2 * 32 * 4096 * 151936}
    rows = gemm_rows(report)
    for k in rows:
        r = k["roofline"]
        if not r:
            failures.append("%s: %s: no roofline" % (source, k["name"][:60]))
            continue
        f = r["flops"] / r["launches_with_shapes"]
        if r["shapes_source"] != source or r["launches_with_shapes"] != k["launches"]:
            failures.append("%s: %s: %d of %d launches from %s" % (
                source, k["name"][:60], r["launches_with_shapes"], k["launches"],
                r["shapes_source"]))
        if f not in per_launch:
            failures.append("%s: %s: %g FLOPs a launch is no Qwen3-8B projection" % (
                source, k["name"][:60], f))
        if r["limiter"] != "memory":
            failures.append("%s: %s: a batch-32 decode GEMM is not memory-bound" % (
                source, k["name"][:60]))
    if len(rows) != 5:
        failures.append("%s: %d GEMM rows, want 5" % (source, len(rows)))
    return {k["name"]: k["roofline"] and k["roofline"]["flops"] for k in rows}


def mapping(args):
    data = os.path.join(args.source, "tests/data/roofline")
    formal = os.path.join(data, "sglang_qwen3_8b_decode_mi300x.json.gz")
    mapped = os.path.join(data, "sglang_qwen3_8b_decode_mapping.json.gz")
    failures = []
    # named by nothing: the same bytes under a name no model matches get no GEMM roofline
    with tempfile.TemporaryDirectory() as tmp:
        anon = os.path.join(tmp, "decode.json.gz")
        shutil.copy(formal, anon)
        alone = run_json(args.triage, anon)
    if any(k["roofline"] for k in gemm_rows(alone)):
        failures.append("graph-replayed GEMMs got a roofline with no shapes and no model")
    if alone["stages"][0]["roofline_counts"]["no_op"] < 145:
        failures.append("the 145 replayed GEMMs are not counted as no_op")
    # the mapping trace's launches of the same kernels
    both = run_json(args.triage, "--mapping-input", mapped, "--formal-input", formal)
    by_mapping = check_gemms(both, "mapping", failures)
    if both["stages"][0]["roofline_counts"]["from_mapping"] != 145:
        failures.append("from_mapping is not the 145 GEMM launches")
    # the model named by the file (Qwen3-8B), checked against the trace: the same figures
    modelled = run_json(args.triage, formal)
    by_model = check_gemms(modelled, "model", failures)
    if modelled["stages"][0]["roofline_counts"]["from_model"] != 145:
        failures.append("from_model is not the 145 GEMM launches")
    m = modelled["roofline_model"]
    if m["id"] != "qwen3-8b" or not m["used"] or m["tokens"] != 32:
        failures.append("roofline_model %r" % m)
    if by_model != by_mapping:
        failures.append("model and mapping shapes differ")
    for f in failures:
        print("FAIL " + f)
    print("GEMM rows from the mapping and from the model, %d failures" % len(failures))
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["tracelens", "mapping"])
    p.add_argument("--triage", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--shared")
    args = p.parse_args()
    if not args.shared:
        args.shared = os.path.join(args.source, "..", "shared")
    return tracelens(args) if args.mode == "tracelens" else mapping(args)


if __name__ == "__main__":
    sys.exit(main())
