#!/usr/bin/env python3
"""Writes tests/live/data/standin.trace.json: a small Kineto-shaped trace for the
stand-in servers to hand back from stop_profile.

Shape (what triage reads): per step, a python_function stack over a cpu_op, the
cudaLaunchKernel runtime call that carries the correlation id, and the GPU kernel with
the same correlation and External id. Kernels cover gemm, attention, norm, activation
and an all-reduce so the report has several kernel-table rows. Deterministic: the
committed file is what this script prints.
"""
import json
import os
import sys

PID = 3131
TID = 3131
GPU_PID = 0
STREAM = 7

# (kernel name, cpu op, python file:line, duration us)
KERNELS = [
    ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", "aten::mm",
     "python/sglang/srt/layers/linear.py(450): forward", 42.0),
    ("flash::FlashAttnFwdSm90<cutlass::bfloat16_t, 128>", "sgl_kernel::fwd",
     "python/sglang/srt/layers/attention/flashattention_backend.py(700): forward_extend", 30.0),
    ("void flashinfer::norm::FusedAddRMSNormKernel<8, __nv_bfloat16>", "sgl_kernel::fused_add_rmsnorm",
     "python/sglang/srt/layers/layernorm.py(120): forward_cuda", 6.0),
    ("void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, silu>", "sgl_kernel::silu_and_mul",
     "python/sglang/srt/layers/activation.py(60): forward_cuda", 5.0),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "nccl:all_reduce",
     "python/sglang/srt/distributed/parallel_state.py(500): all_reduce", 12.0),
]
STEPS = 4


def build():
    events = [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}},
    ]
    ts = 1000.0
    corr = 100
    ext = 500
    pyid = 1
    for _step in range(STEPS):
        for kname, op, frame, dur in KERNELS:
            corr += 1
            ext += 1
            pyid += 1
            events.append({"ph": "X", "cat": "python_function", "name": frame, "pid": PID,
                           "tid": TID, "ts": ts, "dur": 20.0,
                           "args": {"Python id": pyid, "Python parent id": 1}})
            events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": PID, "tid": TID,
                           "ts": ts + 1.0, "dur": 15.0, "args": {"External id": ext}})
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": PID, "tid": TID, "ts": ts + 2.0, "dur": 4.0,
                           "args": {"External id": ext, "correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": kname, "pid": GPU_PID,
                           "tid": STREAM, "ts": ts + 8.0, "dur": dur,
                           "args": {"External id": ext, "correlation": corr, "stream": STREAM,
                                    "device": 0}})
            ts += dur + 25.0
    return {"schemaVersion": 1, "deviceProperties": [], "traceEvents": events,
            "displayTimeUnit": "ms"}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data", "standin.trace.json")
    with open(out, "w") as f:
        json.dump(build(), f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
