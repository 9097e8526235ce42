#!/usr/bin/env python3
"""Writes the eager mapping trace of a graph-replayed SGLang Qwen3-8B decode step.

Input: sglang_qwen3_8b_decode_mi300x.json.gz (a real HIP-graph replay: its kernels have no
launching CPU op, so no shapes). Output: sglang_qwen3_8b_decode_mapping.json.gz, the same
step as an eager run (--disable-cuda-graph) would record it: every kernel of the step, in
order and with the same names, launched by hipLaunchKernel under a CPU op; the GEMMs under
aten::mm with the Input Dims of Qwen3-8B decode at batch 32 (config.json of Qwen/Qwen3-8B:
hidden 4096, 32 heads and 8 KV heads of 128, intermediate 12288, vocabulary 151936). Per
layer the step runs four GEMMs in this order: QKV (N = (32 + 2 * 8) * 128), o_proj, gate_up
(N = 2 * 12288), down; then one lm_head (N = 151936). Other kernels get a CPU op without
shapes, as an op recorded by a cost model no pack has.

Deterministic (gzip mtime 0). Usage: make_mapping.py FORMAL OUTPUT
"""
import gzip
import io
import json
import sys

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER, VOCAB, BATCH = 4096, 32, 8, 128, 12288, 151936, 32
LAYER_GEMMS = [  # (K, N) of the per-layer projections, in launch order
    (HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD_DIM),
    (HEADS * HEAD_DIM, HIDDEN),
    (HIDDEN, 2 * INTER),
    (INTER, HIDDEN),
]
CPU_PID, CPU_TID = 251, 251


def gemm_shapes(n_gemms):
    layers, rest = divmod(n_gemms - 1, len(LAYER_GEMMS))
    assert rest == 0, "expected 4 GEMMs per layer plus lm_head, got %d GEMMs" % n_gemms
    return LAYER_GEMMS * layers + [(HIDDEN, VOCAB)]


def main(src, out):
    doc = json.load(gzip.open(src))
    kernels = sorted((e for e in doc["traceEvents"] if e.get("cat") == "kernel"),
                     key=lambda e: e["ts"])
    gemms = [k for k in kernels if k["name"].startswith("Cijk_")]
    shapes = dict(zip((id(k) for k in gemms), gemm_shapes(len(gemms))))
    events, ext, corr = [], 900000, 500000
    t0 = kernels[0]["ts"] - 100.0
    events.append({"ph": "X", "cat": "user_annotation", "name": "step[DECODE bs=32]",
                   "pid": CPU_PID, "tid": CPU_TID, "ts": t0 - 10.0,
                   "dur": kernels[-1]["ts"] + kernels[-1]["dur"] - t0 + 20.0,
                   "args": {"External id": ext}})
    for k in kernels:
        ext, corr = ext + 1, corr + 1
        launch_ts = k["ts"] - 40.0
        if id(k) in shapes:
            kk, nn = shapes[id(k)]
            op = {"name": "aten::mm", "args": {
                "External id": ext, "Input Dims": [[BATCH, kk], [kk, nn]],
                "Input type": ["c10::BFloat16", "c10::BFloat16"], "Concrete Inputs": ["", ""]}}
        else:
            op = {"name": "sglang::decode_op", "args": {"External id": ext}}
        events.append(dict(ph="X", cat="cpu_op", pid=CPU_PID, tid=CPU_TID, ts=launch_ts - 2.0,
                           dur=6.0, **op))
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel",
                       "pid": CPU_PID, "tid": CPU_TID, "ts": launch_ts, "dur": 3.0,
                       "args": {"External id": ext, "correlation": corr}})
        events.append({"ph": "X", "cat": "kernel", "name": k["name"], "pid": k["pid"],
                       "tid": k["tid"], "ts": k["ts"], "dur": k["dur"],
                       "args": {"External id": ext, "correlation": corr,
                                "stream": k["args"]["stream"], "device": k["args"]["device"]}})
    out_doc = {"schemaVersion": 1, "deviceProperties": doc["deviceProperties"],
               "hip_runtime_version": doc.get("hip_runtime_version", 0), "record_shapes": 1,
               "traceEvents": events}
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write(json.dumps(out_doc).encode())
    with open(out, "wb") as f:
        f.write(buf.getvalue())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
