#!/usr/bin/env python3
"""Stand-in inference server for triage's live-capture tests (stdlib only).

Emulates the HTTP contract of one framework closely enough for triage to drive it:

  sglang      GET /server_info, POST /generate, POST /start_profile (JSON body with
              output_dir, num_steps, ...), POST /stop_profile; writes
              <output_dir>/<profile_prefix>-<time>-TP-<r>.trace.json.gz (rank 0 and 1;
              -EXTEND/-DECODE files when profile_by_stage is true)
  vllm        GET /v1/models, POST /v1/chat/completions, /v1/completions,
              POST /start_profile and /stop_profile with no body; writes
              <--output-dir>/<host>_<pid>.<ns>.pt.trace.json.gz
  trtllm      like vllm, but writes the fixed --trace-path (TLLM_TORCH_PROFILE_TRACE)
  tokenspeed  GET /readiness, /v1/models, chat/completions, POST /start_profile with
              JSON {output_dir, activities, with_stack, record_shapes, profile_id};
              writes <output_dir>/<profile_id>-TP-<r>.trace.json.gz

Failure modes: --no-profiler (404 on the profiler endpoints), --fail-start (HTTP 500
with a text message), --never-write (stop_profile writes nothing), --require-api-key KEY
(401 without "Authorization: Bearer KEY"), --chat-fails (400 on chat completions),
--slow-generate S (each generation request sleeps S seconds).

Binds 127.0.0.1 only. --port 0 picks a free port; the first stdout line is "PORT <n>".
Every request is appended to --log as one JSON line {method, path, body, auth}.
"""
import argparse
import gzip
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.path.join(HERE, "data", "standin.trace.json")

MODELS = {
    "sglang": "meta-llama/Llama-3.1-8B-Instruct",
    "vllm": "Qwen/Qwen3-8B",
    "trtllm": "nvidia/Llama-3.1-8B-Instruct-FP8",
    "tokenspeed": "deepseek-ai/DeepSeek-V3",
}


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.profiling = False
        self.start_body = None
        self.log_lock = threading.Lock()

    def log(self, entry):
        if not self.args.log:
            return
        with self.log_lock:
            with open(self.args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")


def write_trace(path):
    """Copies the shipped trace to path (gzip by suffix), via a temporary name so the
    watcher sees either nothing or the whole file, as with a real atomic writer."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = os.path.join(os.path.dirname(path) or ".", ".tmp-" + os.path.basename(path))
    with open(TRACE, "rb") as src:
        data = src.read()
    if path.endswith(".gz"):
        with gzip.open(tmp, "wb") as f:
            f.write(data)
    else:
        with open(tmp, "wb") as f:
            f.write(data)
    os.replace(tmp, path)


def write_profile(state):
    a = state.args
    fw = a.framework
    body = state.start_body or {}
    stamp = "%.6f" % time.time()
    paths = []
    if fw == "sglang":
        out = body.get("output_dir") or os.environ.get("SGLANG_TORCH_PROFILER_DIR", "/tmp")
        prefix = body.get("profile_prefix") or ""
        pid = (prefix + "-" if prefix else "") + stamp
        for rank in (0, 1):
            if body.get("profile_by_stage"):
                for stage in ("EXTEND", "DECODE"):
                    paths.append(os.path.join(out, "%s-TP-%d-%s.trace.json.gz" % (pid, rank, stage)))
            else:
                paths.append(os.path.join(out, "%s-TP-%d.trace.json.gz" % (pid, rank)))
    elif fw == "vllm":
        paths.append(os.path.join(a.output_dir, "%s_%d.%d.pt.trace.json.gz"
                                  % (socket.gethostname(), os.getpid(), time.time_ns())))
    elif fw == "trtllm":
        paths.append(a.trace_path)
    elif fw == "tokenspeed":
        out = body.get("output_dir") or os.environ.get("TOKENSPEED_PROFILER_DIR", "/tmp")
        pid = body.get("profile_id") or stamp
        for rank in (0, 1):
            paths.append(os.path.join(out, "%s-TP-%d.trace.json.gz" % (pid, rank)))
    time.sleep(a.write_delay)
    for p in paths:
        write_trace(p)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "standin/1"

    def log_message(self, fmt, *args):  # quiet: tests read the JSON log instead
        pass

    @property
    def state(self):
        return self.server.state

    def reply(self, code, obj=None, text=None):
        if text is not None:
            data = text.encode()
            ctype = "text/plain"
        else:
            data = json.dumps(obj if obj is not None else {}).encode()
            ctype = "application/json"
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None, raw
        try:
            return json.loads(raw), raw
        except ValueError:
            return "<invalid json>", raw

    def handle_any(self, method):
        st = self.state
        a = st.args
        fw = a.framework
        body, raw = self.read_body() if method == "POST" else (None, b"")
        path = self.path.split("?", 1)[0]
        st.log({"method": method, "path": path, "body": body,
                "content_type": self.headers.get("Content-Type"),
                "auth": self.headers.get("Authorization"), "t": time.time()})
        if a.require_api_key and self.headers.get("Authorization") != "Bearer " + a.require_api_key:
            return self.reply(401, {"error": {"message": "stand-in: invalid or missing API key",
                                              "type": "invalid_request_error"}})
        model = MODELS[fw]
        if method == "GET":
            if path == "/server_info" and fw == "sglang":
                return self.reply(200, {"model_path": model, "tokenizer_path": model, "tp_size": 2,
                                        "attention_backend": "fa3", "chunked_prefill_size": 8192,
                                        "internal_states": [{"last_gen_throughput": 0.0}]})
            if path == "/readiness" and fw == "tokenspeed":
                return self.reply(200, {"status": "ready"})
            if path == "/health":
                return self.reply(200, text="")
            if path == "/v1/models":
                return self.reply(200, {"object": "list", "data": [
                    {"id": model, "object": "model", "owned_by": fw, "root": model}]})
            return self.reply(404, {"detail": "Not Found"})
        # POST
        if path == "/generate" and fw == "sglang":
            time.sleep(a.slow_generate)
            if not isinstance(body, dict) or "text" not in body or "sampling_params" not in body:
                return self.reply(400, {"error": {"message": "stand-in: bad /generate body"}})
            return self.reply(200, {"text": " profiler" * 4, "meta_info": {"id": "x"}})
        if path in ("/v1/chat/completions", "/v1/completions") and fw != "sglang":
            time.sleep(a.slow_generate)
            if path == "/v1/chat/completions" and a.chat_fails:
                return self.reply(400, {"error": {"message": "stand-in: model has no chat template"}})
            if not isinstance(body, dict) or body.get("model") != model:
                return self.reply(404, {"error": {"message": "stand-in: unknown model %r"
                                                  % (body or {}).get("model")}})
            return self.reply(200, {"id": "cmpl-1", "object": "text_completion",
                                    "choices": [{"index": 0, "text": " profiler"}]})
        if path == "/start_profile":
            if a.no_profiler:
                return self.reply(404, {"detail": "Not Found"})
            if a.fail_start:
                return self.reply(500, text="stand-in: torch profiler failed to start: "
                                            "CUDA error: out of memory")
            if fw in ("vllm", "trtllm") and raw:
                return self.reply(400, {"error": {"message": "stand-in: start_profile takes no body"}})
            if fw in ("sglang", "tokenspeed") and not (isinstance(body, dict) and body.get("output_dir")):
                return self.reply(400, {"error": {"message": "stand-in: output_dir missing"}})
            with st.lock:
                if st.profiling:
                    return self.reply(400, {"message": "stand-in: profiling already in progress"})
                st.profiling = True
                st.start_body = body if isinstance(body, dict) else None
            if a.slow_start:
                time.sleep(a.slow_start)  # the profiler runs; the reply is late
            return self.reply(200, text="Start profiling.\n")
        if path == "/stop_profile":
            if a.no_profiler:
                return self.reply(404, {"detail": "Not Found"})
            with st.lock:
                was = st.profiling
                st.profiling = False
            if not was:
                return self.reply(400, {"message": "stand-in: profiling is not in progress"})
            if not a.never_write:
                threading.Thread(target=write_profile, args=(st,), daemon=True).start()
            return self.reply(200, text="Stop profiling. This will take some time.\n")
        return self.reply(404, {"detail": "Not Found"})

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--framework", required=True, choices=sorted(MODELS))
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--output-dir", help="vLLM torch_profiler_dir")
    p.add_argument("--trace-path", help="TRT-LLM TLLM_TORCH_PROFILE_TRACE")
    p.add_argument("--log")
    p.add_argument("--no-profiler", action="store_true")
    p.add_argument("--fail-start", action="store_true")
    p.add_argument("--never-write", action="store_true")
    p.add_argument("--chat-fails", action="store_true")
    p.add_argument("--require-api-key")
    p.add_argument("--slow-generate", type=float, default=0.0)
    p.add_argument("--write-delay", type=float, default=0.2)
    p.add_argument("--slow-start", type=float, default=0.0,
                   help="seconds between starting the profiler and answering start_profile")
    a = p.parse_args()
    if a.framework == "vllm" and not a.output_dir:
        p.error("vllm needs --output-dir (its torch_profiler_dir)")
    if a.framework == "trtllm" and not a.trace_path:
        p.error("trtllm needs --trace-path (its TLLM_TORCH_PROFILE_TRACE)")
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.state = State(a)
    print("PORT %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
