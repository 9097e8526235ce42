#!/usr/bin/env python3
"""make-escape-trace.py - a tiny valid Kineto trace whose text is hostile to renderers.

Every text field a report can show carries markup or table-breaking characters: kernel
names, Python frame names (their file paths and function names), CPU op names, the step
annotation, the device name and the stream (thread) names. The payloads (PAYLOADS
below) are: <script>alert(1)</script>, "onerror=alert(1) x=", </td>, &amp;, a backtick,
| and a newline. A Markdown, JSON or HTML renderer must show them as text: the JSON must
parse, a Markdown table must keep its columns, and an HTML page must not run any script
or grow attributes.

Shape (so that all three tables have rows): an SGLang-like eager decode (paths under
python/sglang/srt, a step[DECODE bs=1] annotation) of 3 steps; per step six launches on
stream 7 (fused add+RMSNorm, GEMM, TP all-reduce, RoPE, SiLU*mul, GEMM) and one fill on
stream 13 that overlaps the first GEMM. Each launch has a python_function stack, a
cpu_op and a cudaLaunchKernel linked to its kernel by External id and correlation.

Output: the path given (default tests/data/escape/hostile.trace.json), plain JSON, one
event per line, deterministic. Python 3 standard library only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracesynth as ts  # noqa: E402

SCRIPT = "<script>alert(1)</script>"
ATTR = '"onerror=alert(1) x="'
PAYLOADS = [SCRIPT, ATTR, "</td>", "&amp;", "`", "|", "\n"]
ROOT = "/srv/app/python/sglang/srt"
HOST, GPU, MAIN, SIDE = 4242, 0, 7, 13

# (kernel, duration us, stream, cpu op, innermost python frame)
LAUNCHES = [
    (f"void flashinfer::norm::FusedAddRMSNormKernel<8u, {SCRIPT}>(__nv_bfloat16*, unsigned int)", 6.0, MAIN,
     f"sgl_kernel::fused_add_rmsnorm{SCRIPT}", f"/srv/{SCRIPT}/python/sglang/srt/layers/{SCRIPT}/layernorm.py(130): forward_cuda"),
    (f"nvjet_tst_64x8_64x16_4x1_{ATTR}_TNT", 30.0, MAIN,
     f"aten::mm {ATTR}", f"/srv/{ATTR}/python/sglang/srt/layers/{ATTR}/linear.py(450): forward"),
    ("void sglang::cross_device_reduce_1stage<</td><td>, 2>(sglang::RankData*, int)", 12.0, MAIN,
     "sgl_kernel::all_reduce</td>", "/srv/</td>/python/sglang/srt/distributed/</td>/communication_op.py(13): all_reduce"),
    ("rotary_embedding &amp; `kernel` | cos_sin\nsecond line", 4.0, MAIN,
     "aten::rope &amp; `x` | y\nz", "/srv/app/python/sglang/srt/layers/a&amp;b/`cmd`|pipe/rotary_embedding.py(200): forward\nnext"),
    (f"triton_poi_fused_silu_mul_{SCRIPT}_0", 7.0, MAIN,
     f"sgl_kernel::silu_and_mul {SCRIPT}", f"{ROOT}/layers/activation.py(80): forward {SCRIPT}"),
    ("nvjet_tst_128x8_64x16_4x1_v_bz_TNT | </td>", 25.0, MAIN,
     "aten::mm | </td>", f"{ROOT}/layers/linear.py(1300): forward | </td>"),
]
SIDE_LAUNCH = (f"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<{ATTR}> >(int)", 10.0, SIDE,
               f"aten::fill_ {ATTR}", f"{ROOT}/layers/moe/topk.py(90): prepare_buffers </td>")
OUTER = [f"{ROOT}/managers/scheduler.py(1000): event_loop_normal `x` | y",
         f"{ROOT}/model_executor/model_runner.py(2000): forward {SCRIPT}"]


def event(cat, name, pid, tid, ts_, dur, args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts_, "dur": dur, "args": args}


def emit_launch(out, ids, h, gpu_t, launch, parent_py):
    """One eager launch: python frame, cpu_op, cudaLaunchKernel, kernel."""
    kernel, dur, stream, cpu_op, frame = launch
    ids["py"] += 1
    ids["ext"] += 1
    ids["corr"] += 1
    out.append(event("python_function", frame, HOST, HOST, h, 9.0,
                     {"Python parent id": parent_py, "Python id": ids["py"], "Python thread": 0}))
    out.append(event("cpu_op", cpu_op, HOST, HOST, h + 1.0, 7.0,
                     {"External id": ids["ext"], "Record function id": 0}))
    out.append(event("cuda_runtime", "cudaLaunchKernel", HOST, HOST, h + 3.0, 3.0,
                     {"External id": ids["ext"], "correlation": ids["corr"]}))
    out.append(event("kernel", kernel, GPU, stream, gpu_t, dur,
                     {"External id": ids["ext"], "device": 0, "stream": stream,
                      "correlation": ids["corr"], "grid": [132, 1, 1], "block": [128, 1, 1]}))


def emit_step(out, ids, h0, g0):
    """One decode step; returns (next host time, next GPU time)."""
    start = h0
    ids["py"] += 2
    outer_ids = (ids["py"] - 1, ids["py"])
    h, g = h0 + 2.0, g0
    gemm_start = None
    for i, launch in enumerate(LAUNCHES):
        emit_launch(out, ids, h, g, launch, outer_ids[1])
        if i == 1:
            gemm_start = g
            h += 12.0
            emit_launch(out, ids, h, gemm_start + 3.0, SIDE_LAUNCH, outer_ids[1])
        h += 12.0
        g += launch[1] + 1.0
    end = h + 2.0
    out.append(event("user_annotation", f"step[DECODE bs=1] {SCRIPT}", HOST, HOST, start - 2.0, end - start + 4.0,
                     {"External id": 900000 + ids["ext"], "Record function id": 0}))
    out.append(event("python_function", OUTER[0], HOST, HOST, start - 1.0, end - start + 2.0,
                     {"Python parent id": 0, "Python id": outer_ids[0], "Python thread": 0}))
    out.append(event("python_function", OUTER[1], HOST, HOST, start, end - start,
                     {"Python parent id": outer_ids[0], "Python id": outer_ids[1], "Python thread": 0}))
    return end + 50.0, max(g, h) + 20.0


def build():
    events = [{"ph": "M", "name": "process_name", "pid": HOST, "tid": 0, "args": {"name": f"python3 {SCRIPT}"}},
              {"ph": "M", "name": "process_name", "pid": GPU, "tid": 0, "args": {"name": "GPU 0"}},
              {"ph": "M", "name": "thread_name", "pid": GPU, "tid": MAIN, "args": {"name": "stream 7 </td>"}},
              {"ph": "M", "name": "thread_name", "pid": GPU, "tid": SIDE, "args": {"name": f"stream 13 {ATTR}"}}]
    ids = {"py": 0, "ext": 100, "corr": 5000}
    h, g = 1_000_000.0, 1_000_040.0
    body = []
    for _ in range(3):
        h, g = emit_step(body, ids, h, g)
        h = max(h, g)
        g = h + 40.0
    body.sort(key=lambda e: (e["ts"], -e["dur"]))
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": f"NVIDIA H100 {SCRIPT} | </td>", "computeMajor": 9,
                                  "computeMinor": 0}],
            "traceEvents": events + body}


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = argv[0] if argv else os.path.join(repo, "tests", "data", "escape", "hostile.trace.json")
    ts.write_trace(path, build())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
