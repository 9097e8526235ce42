#!/usr/bin/env python3
"""Writes the hand-made seed inputs of tests/fuzz/corpus/ (standard library only).

The seeds are small Kineto-shaped traces (plain and gzip, one multi-member; for the
scanner harness, a few hundred events in Kineto's layouts with their corner cases), live-capture
reply bodies, and tiny rule packs. The fuzzers also read rules/ and tests/rules/broken/
directly (tools/fuzz.sh, tests/fuzz/replay.cmake), so those are not copied here.
Re-running this script rewrites the same bytes (gzip mtime is fixed at 0).
Usage: python3 tests/fuzz/make_seeds.py
"""
import gzip
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def gz(data, mtime=0):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=mtime) as f:
        f.write(data)
    return buf.getvalue()


def kineto(events, extra=None):
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
           "traceEvents": events}
    if extra:
        doc.update(extra)
    return json.dumps(doc).encode()


def meta(pid, tid, what, name):
    return {"ph": "M", "name": what, "pid": pid, "tid": tid, "args": {"name": name}}


def x(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
            "dur": dur, "args": args}


def launch_chain(base_ts, ext, corr, kernel, stream=7):
    return [
        x("python_function", "/sgl-workspace/sglang/python/sglang/srt/layers/linear.py(450): forward",
          4242, 4242, base_ts, 20, **{"Python id": ext, "Python parent id": 0}),
        x("cpu_op", "aten::mm", 4242, 4242, base_ts + 1, 15, **{"External id": ext}),
        x("cuda_runtime", "cudaLaunchKernel", 4242, 4242, base_ts + 2, 3,
          correlation=corr, **{"External id": ext}),
        x("kernel", kernel, 0, stream, base_ts + 10, 40, correlation=corr,
          stream=stream, device=0, **{"External id": ext}),
    ]


def kept_args_seed():
    """The args the reader keeps (trace.h tr_arg): shapes of a cpu_op, the message of an
    NCCL kernel and a copy's bytes, with host_name and process_name; pretty-printed, with
    escapes, a null and a repeated key, so the compact re-writing is exercised."""
    ops = [meta(4242, 0, "process_name", "VLLM::Worker_TP0"),
           x("cpu_op", "aten::addmm", 4242, 4242, 10, 5, **{
               "External id": 7, "Input Dims": [[1024], [8944, 1024], [1024, 1024], [], []],
               "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "a\"\u00e9"],
               "Concrete Inputs": ["", "", "", "1", {"k": [True, None, -0.5e-3]}]}),
           x("cuda_runtime", "cudaLaunchKernel", 4242, 4242, 11, 2, correlation=9,
             **{"External id": 7}),
           x("kernel", "nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 0, 7, 20, 4, correlation=9, stream=7),
           x("kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0, 7, 30, 9, correlation=10,
             stream=7, **{"Collective name": "allreduce", "In msg nelems": 2049000,
                          "Out msg nelems": 2049000, "Group size": 2, "dtype": "BFloat16",
                          "Process Group Name": "0", "Process Group Description": "default_pg",
                          "Process Group Ranks": "[0, 1]"}),
           x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 40, 2, correlation=11,
             stream=7, bytes=8192, dtype=None)]
    text = json.dumps({"schemaVersion": 1, "host_name": "node-0", "traceEvents": ops},
                      indent=1).encode()
    return text.replace(b'"bytes": 8192', b'"bytes": 4000, "bytes": 8192')


def trace_seeds():
    basic = [meta(4242, 0, "process_name", "python3"), meta(0, 0, "process_name", "GPU 0"),
             meta(4242, 4242, "thread_name", "scheduler")]
    basic += launch_chain(1000000.0, 1, 50000, "nvjet_tst_64x8_64x16_2x1_v_bz_TNT")
    basic += launch_chain(1000100.0, 2, 50001, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL")
    basic.append(x("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 0, 7, 1000200.0, 5,
                   correlation=50002, stream=7))
    basic.append(x("user_annotation", "decode", 4242, 4242, 999999.0, 500))
    basic.append(x("gpu_user_annotation", "decode", 0, 7, 1000000.0, 400))
    seeds = {
        "basic.json": kineto(basic),
        "bare-array.json": json.dumps(basic[:6]).encode(),
        "empty-events.json": b'{"traceEvents": []}',
        "tp-pid-labels.json": kineto([
            x("kernel", "void cutlass::device_kernel<flash::FlashAttnFwdSm90<2, 128> >",
              "[TP00-DP01] 1234", "stream 7", 5.5, 1.25, correlation=1, cuda_stream=7)]),
        "odd-values.json": (
            b'{"traceEvents":[{"ph":"X","cat":"kernel","name":"k\\u00e9\\ud83d\\ude00\\n",'
            b'"pid":1,"tid":2,"ts":1e400,"dur":-5,"args":{"correlation":99999999999999999999,'
            b'"External id":-0,"stream":[1,{"a":null}],"nested":{"b":[true,false,1.5e-3]}}},'
            b'{"ph":"X","cat":"kernel","name":123,"ts":{"x":1},"dur":"7"},'
            b'{"ph":"B","name":"begin"},{"ph":"E"},null,1,"s",[]],"displayTimeUnit":"ns"}'),
        "invalid-utf8.json": (b'{"traceEvents":[{"ph":"X","cat":"kernel","name":"bad\xff\xfe\xc3(",'
                              b'"pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}}]}'),
        "whitespace-bom.json": b'\xef\xbb\xbf \r\n\t{"traceEvents" : [ ] }\n',
        "truncated.json": kineto(basic)[:300],
        "kept-args.json": kept_args_seed(),
    }
    seeds["basic.json.gz"] = gz(seeds["basic.json"])
    # Two gzip members that together make one JSON document.
    doc = seeds["basic.json"]
    cut = len(doc) // 2
    seeds["multi-member.json.gz"] = gz(doc[:cut]) + gz(doc[cut:])
    seeds["truncated.json.gz"] = gz(doc)[:-20]
    return seeds


def kineto_events(n):
    """n events as a vLLM trace with stack has them: Python frames with long names, CPU
    ops with shapes, runtime calls, kernels, flows and metadata, in file order."""
    ev = [meta(851, 0, "process_name", "VLLM::Worker_TP0"), meta(851, 851, "thread_name", "main")]
    for i in range(n):
        ts = 6520488433565.563 + i * 1.25
        k = i % 6
        if k < 3:
            ev.append(x("python_function",
                        "<built-in method clear of list object at 0x7f32b826%04x>" % i,
                        851, 851, round(ts, 3), 0.11 * (1 + i % 5),
                        **{"Python parent id": 1000 + i, "Python id": 1001 + i, "Ev Idx": i}))
        elif k == 3:
            ev.append(x("cpu_op", "aten::copy_", 851, 851, round(ts, 3), 34.79, **{
                "External id": 7000 + i, "Record function id": 0,
                "Concrete Inputs": ["", "", "True"], "Input type": ["int", "int", "Scalar"],
                "Input Strides": [[72, 1], [72, 1], []], "Input Dims": [[46, 72], [46, 72], []],
                "Ev Idx": i}))
        elif k == 4:
            ev.append(x("cuda_runtime", "hipLaunchKernel", 851, 851, round(ts, 3), 3.5,
                        correlation=9000 + i, **{"External id": 7000 + i - 1, "cid": 12}))
            ev.append({"ph": "s", "id": 9000 + i, "pid": 851, "tid": 851, "ts": round(ts, 3),
                       "cat": "ac2g", "name": "ac2g"})
        else:
            ev.append(x("kernel", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>",
                        0, 7, round(ts + 5, 3), 2.0, correlation=9000 + i - 1, stream=7,
                        device=0, **{"External id": 7000 + i - 2, "grid": [32, 1, 1]}))
    return ev


def scanner_seeds():
    """Inputs for fuzz_scanner (the SIMD fast path against the byte scanner): Kineto's
    shapes past the 256 sampled events, compact and pretty-printed (kept containers then
    written anew), and the corner cases of each member the fast path reads; each bad
    input fails inside an event past the first chunk of the smaller chunk sizes."""
    events = kineto_events(330)
    compact = kineto(events)
    seeds = {
        "vllm-compact.json": compact,
        "vllm-pretty.json": json.dumps({"traceEvents": events}, indent=2).encode(),
        "vllm-compact.json.gz": gz(compact),
        # Kineto's own layout: an event per block, args inline
        "kineto-layout.json": (b'{\n  "schemaVersion": 1,\n  "traceEvents": [\n' + b",\n".join(
            b"  {\n    " + json.dumps(e)[1:-1].encode().replace(b', "ts"', b',\n    "ts"')
            + b"\n  }" for e in events) + b"\n  ]\n}\n"),
    }
    tail = events[-1]
    odd = [
        # numbers: epoch microseconds, exponents, integers, zero, -0, long mantissas
        '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,"ts":1775078550123456.789,'
        '"dur":1e-3,"args":{"correlation":1,"stream":-0,"External id":12345678901234567890}}',
        '{"ph":"X","cat":"kernel","name":"k","pid":-0,"tid":7.5,"ts":0,"dur":0.000000000000000000001,'
        '"args":{"correlation":2.0,"stream":"7"}}',
        '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":"12.5","dur":3,'
        '"args":{"External id":"3","Input Dims":[[1,2],[3]],"Input type":"Float"}}',
        # escapes in names, keys and kept strings; raw tab; non-ASCII
        '{"ph":"X","cat":"cpu_op","n\\u0061me":"a\\"b\\u00e9","pid":1,"tid":1,"ts":5,"dur":1,'
        '"args":{"Input type":["c10::\\u0042Float16","\t"],"dtype":"Fl\\u006fat"}}',
        '{"ph":"X","cat":"python_function","name":"f\u00e9(\u4e2d)","pid":1,"tid":1,"ts":5,"dur":1}',
        # repeated members, the later winning; stream against cuda_stream in both orders
        '{"ph":"X","ph":"M","ph":"X","cat":"kernel","name":5,"name":"k2","pid":1,"tid":7,"ts":9,'
        '"dur":2,"args":{"stream":3,"cuda_stream":4,"correlation":5},"args":{"cuda_stream":6}}',
        '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,"ts":9,"dur":2,'
        '"args":{"cuda_stream":4,"stream":null,"stream":[1],"correlation":6,"bytes":8,"bytes":null}}',
        # values of every kind where none is expected
        '{"ph":["X"],"cat":{"c":1},"name":null,"pid":true,"tid":false,"ts":null,"dur":[],'
        '"args":[{"External id":1}],"id":{"deep":[[[[{"x":[true,false,null,1.5e+10]}]]]]}}',
        '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1,'
        '"args":{"Concrete Inputs":{"a":[{"b":{}}],"c":[[],[[]]]},"Input Dims":[],"Input type":{}}}',
        # containers nested past the fast path's depth
        '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,"ts":1,"dur":1,"args":{"x":'
        + "[" * 70 + "]" * 70 + ',"correlation":3}}',
        # an M event with its name in args, and an empty one
        '{"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"worker"}}',
        '{}',
    ]
    body = ",".join(json.dumps(e) for e in events[:300])
    seeds["odd-members.json"] = ('{"traceEvents":[' + body + "," + ",".join(odd) + "]}").encode()
    bad = {
        "bad-missing-comma.json": '[1 2]',
        "bad-colon.json": '{"a" 1}',
        "bad-trailing-comma.json": '[1,]',
        "bad-literal.json": 'tru',
        "bad-leading-zero.json": '01',
        "bad-fraction.json": '1.',
        "bad-minus.json": '-',
        "bad-escape.json": '"a\\x"',
        "bad-unicode.json": '"\\u12g4"',
        "bad-object-key.json": '{1:2}',
        "bad-close.json": '[{"a":1]}',
        "bad-control.json": '[1,\u0001]',
    }
    short = ",".join(json.dumps(e) for e in events[:40])
    for name, value in bad.items():
        ev = '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1,"args":{"v":%s}}'
        seeds[name] = ('{"traceEvents":[' + short + "," + (ev % value) + "," +
                       json.dumps(tail) + "]}").encode()
    seeds["bad-truncated.json"] = compact[:len(compact) - 700]
    seeds["bad-unterminated-name.json"] = ('{"traceEvents":[' + short + ',{"ph":"X","name":"ab').encode()
    return seeds


def live_seeds():
    # First byte picks the reply kind (see fuzz_live_reply.c): 0 models, 1 server_info,
    # 2 error body, 3 profile reply.
    return {
        "models.json": b"\x00" + json.dumps({"object": "list", "data": [
            {"id": "meta-llama/Llama-3.1-8B-Instruct", "object": "model",
             "owned_by": "sglang", "max_model_len": 131072}]}).encode(),
        "models-bad-types.json": b"\x00" + b'{"data":{"id":5},"object":["list"]}',
        "server-info.json": b"\x01" + json.dumps({
            "model_path": "meta-llama/Llama-3.1-8B-Instruct", "tp_size": 2,
            "attention_backend": "fa3", "chunked_prefill_size": 8192,
            "disable_cuda_graph": False, "internal_states": [{"last_gen_throughput": 1.5}]}).encode(),
        "error-openai.json": b"\x02" + b'{"error":{"message":"model not found","type":"invalid_request_error","code":404}}',
        "error-fastapi.json": b"\x02" + b'{"detail":[{"loc":["body","text"],"msg":"field required","type":"value_error.missing"}]}',
        "error-text.txt": b"\x02" + b"Internal Server Error\nTraceback...",
        # longer than LV_ERROR_SNIPPET_BYTES: the quoted explanation must be cut
        "error-long.json": b"\x02" + json.dumps({"detail": "CUDA out of memory. " * 40}).encode(),
        "profile-ok.txt": b"\x03" + b"Start profiling.\n",
        "profile-json.json": b"\x03" + b'{"message":"Profiler started","output_dir":"/tmp/prof"}',
    }


def rule_pack_seeds():
    return {
        "minimal.yaml": b"pack: fuzz-minimal\nversion: 1\n",
        "classifier.yaml": b"""pack: fuzz-classifier
version: 1
matchers:
  comm:
    keywords: [nccl, all_reduce]
    words: [mma]
    prefixes: ["python/sglang/"]
    regex: ['FlashAttn\\w*Sm\\d+']
    exclude: {keywords: [flashinfer]}
    examples:
      match: ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
      no_match: ["void at::native::reduce_kernel<512, 1>"]
classifiers:
  - id: kernel
    default: other
    rules:
      - id: comm
        category: communication
        match: comm
      - id: gemm
        category: gemm
        match: {keywords: [gemm, nvjet], compact: true}
        before: comm
settings:
  kernel_table.min_share_pct: 1.0
""",
        "anchors.yaml": b"""pack: fuzz-anchors
version: 1
matchers:
  a: &m {keywords: [x, y]}
  b: *m
  c: {<<: *m, words: [z]}
""",
        "flow-and-tags.yaml": b"%YAML 1.2\n---\n{pack: !!str flow, version: !!int 1, settings: {a.b: [1, 2.5e3, .inf, ~]}}\n...\n",
        "bad-regex.yaml": b"pack: bad-regex\nversion: 1\nmatchers:\n  r: {regex: ['(unclosed', '(a+)+$']}\n",
        # the roofline's sections (docs/roofline.md): one entry of each formula kind, a
        # device matched by name and one by blank-name facts, a model; small, so the
        # fuzzer reaches their checks quickly
        "roofline.yaml": b"""pack: fuzz-roofline
version: 1
settings:
  roofline.tune_below_pct: 80
dtypes:
  - {id: bf16, bytes: 2, peak: bf16, scalar_type: 15, names: ["c10::BFloat16", BFloat16]}
  - {id: fp8, bytes: 1, peak: fp8, scalar_type: 24, names: ["c10::Float8_e4m3fn"]}
devices:
  - id: gpu-a
    label: GPU A
    match: {name: {regex: ['H100.*HBM3']}, memory_gib: {min: 60, max: 90}}
    sms: 132
    hbm_tbs: 3.35
    link_gbs: 900
    peak_tflops: {fp32: 67, bf16: 989.4, fp8: 1978.9}
    attainable: {bandwidth: 0.8, compute: 0.7, basis: estimate}
    source: a datasheet
  - id: gpu-b
    label: GPU B
    match: [{arch: "9.4", sms: 304}]
    sms: 304
    hbm_tbs: 5.3
    link_gbs: 896
    peak_tflops: {bf16: 1307.4}
    attainable: {bandwidth: 0.75, compute: 0.5, basis: estimate}
    source: another datasheet
    before: gpu-a
op_costs:
  - {id: mm, ops: [aten::mm], gemm: {a: 0, b: 1, b_layout: nk, bias: 2, reads: [3], out_dtype_arg: 4}}
  - {id: moe, ops: ["x::experts"], grouped_gemm: {tokens: 0, topk: 4, weights: [1, 2]}}
  - {id: sdpa, ops: [aten::sdpa], attention: {q: 0, k: 1, v: 2, layout: bshd, causal_arg: 3}}
  - {id: add, ops: [aten::add, aten::mul], elementwise: {reads: all, writes: largest, flops_per_element: 1}}
models:
  - id: m
    label: M
    match: {keywords: [m-8b]}
    hidden: 4096
    intermediate: 12288
    layers: 36
    heads: 32
    kv_heads: 8
    head_dim: 128
    vocab: 151936
    weight_dtype: bf16
    source: config.json
""",
    }


def write(sub, files):
    d = os.path.join(HERE, "corpus", sub)
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("fuzz_trace_reader", trace_seeds())
    write("fuzz_scanner", scanner_seeds())
    write("fuzz_live_reply", live_seeds())
    write("fuzz_rule_pack", rule_pack_seeds())
