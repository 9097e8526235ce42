#!/usr/bin/env python3
"""Writes a synthetic Kineto trace with N distinct GPU kernels (python3 stdlib only).

The HTML browser test renders it with `triage --format html` to get a kernel table of N
rows: the 5,000-row sorting budget is measured on what triage really writes. Names,
categories (gemm, attention, elementwise, norm, communication, ... by their words),
durations and launch counts vary with a fixed seed, so every run writes the same bytes
and every sortable column has distinct keys to order.

usage: make_wide_trace.py -n 5000 -o OUT.json
"""
import argparse
import json
import random

FAMILIES = ["gemm_kernel", "flash_attention_fwd", "elementwise_add", "rms_norm", "ncclAllReduce",
            "rotary_embedding", "silu_and_mul", "softmax_kernel", "topk_gating", "memcpy_kernel"]


def build(n, seed):
    rnd = random.Random(seed)
    events = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
              {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}}]
    ts, corr = 1000000.0, 1
    for i in range(n):
        name = f"{FAMILIES[i % len(FAMILIES)]}<{rnd.randint(1, 512)}, {i}>_v{i}"
        for _ in range(1 + i % 3):
            dur = round(rnd.uniform(1.0, 400.0), 3)
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
                           "tid": 100, "ts": ts - 5.0, "dur": 4.0, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7 + i % 2,
                           "ts": ts, "dur": dur, "args": {"stream": 7 + i % 2, "device": 0,
                                                          "correlation": corr}})
            ts += dur + 1.0
            corr += 1
    return {"schemaVersion": 1, "traceEvents": events}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(build(args.n, args.seed), fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
