#!/usr/bin/env python3
"""Live-capture tests: triage against stand-in servers on 127.0.0.1 (stdlib only).

  run_live_tests.py --mode cli    --tool BUILD/triage     full CLI: capture + report
  run_live_tests.py --mode driver --tool BUILD/lv_driver  capture layer only (lv_run)

Each case starts tests/live/standin_server.py for one framework on a free port, runs
the tool, and checks exit code, stderr message, files on disk and the requests the
server received (its JSON log). Exit status 0 = all passed, 1 = a failure.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "standin_server.py")
FRAMEWORKS = ["sglang", "vllm", "trtllm", "tokenspeed"]
# Small shapes and short waits keep each capture to a couple of seconds.
FAST = ["--num-steps", "2", "--warmup-steps", "1", "--prefill-input-len", "64",
        "--decode-output-len", "8", "--probe-delay", "0"]
CLI_FAST = FAST + ["--decode-input-len", "1", "--prefill-output-len", "1"]


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Server:
    """One stand-in process; stopped on exit from the with-block."""

    count = 0

    def __init__(self, work, framework, *extra, out_dir=None, trace_path=None):
        self.framework = framework
        Server.count += 1
        self.log = os.path.join(work, "server-%02d-%s.log.jsonl" % (Server.count, framework))
        cmd = [sys.executable, SERVER, "--framework", framework, "--port", "0",
               "--log", self.log, "--write-delay", "0.1"]
        if out_dir:
            cmd += ["--output-dir", out_dir]
        if trace_path:
            cmd += ["--trace-path", trace_path]
        cmd += list(extra)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        check(line.startswith("PORT "), "stand-in did not start: %r" % line)
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()

    def requests(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def paths(self, method="POST"):
        return [r["path"] for r in self.requests() if r["method"] == method]


class Ctx:
    def __init__(self, mode, tool, work):
        self.mode = mode
        self.tool = tool
        self.work = work
        self.env = dict(os.environ)
        self.env["TRIAGE_LIVE_TRACE_WAIT_S"] = "10"
        self.env["TRIAGE_LIVE_MIN_PROBE_DELAY_S"] = "0"
        self.n = 0

    def tmpdir(self, name):
        self.n += 1
        d = os.path.join(self.work, "%02d-%s" % (self.n, name))
        os.makedirs(d)
        return d

    def run(self, args, timeout=120, env=None):
        e = dict(self.env)
        e.update(env or {})
        t0 = time.monotonic()
        p = subprocess.run([self.tool] + args, capture_output=True, text=True, timeout=timeout, env=e)
        p.elapsed = time.monotonic() - t0
        return p

    def capture_args(self, fw, url, out):
        args = ["--url", url, "--framework", fw]
        if out:
            args += ["--output-dir", out]
        return args + (CLI_FAST if self.mode == "cli" else FAST)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def result_lines(p):
    return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)


def traces_in(d):
    if not os.path.isdir(d):
        return []
    return sorted(n for n in os.listdir(d) if n.endswith(".json") or n.endswith(".json.gz"))


def has_kernel_table(text):
    """The default layout's "### Kernels: STAGE" or the reference layout's "Kernel Table"."""
    return "\n### Kernels: " in text or "Kernel Table" in text


def assert_ok(ctx, p, what):
    check(p.returncode == 0, "%s: exit %d\nstderr:\n%s" % (what, p.returncode, p.stderr))
    if ctx.mode == "cli":
        check(has_kernel_table(p.stdout), "%s: no kernel table in the report:\n%s" % (what, p.stdout[:2000]))
        # A data row names one of the stand-in trace's kernels.
        check(any(k in p.stdout for k in ("nvjet", "FlashAttn", "RMSNorm", "AllReduce")),
              "%s: the Kernel Table has no rows:\n%s" % (what, p.stdout[:3000]))


def start_server(ctx, fw, *extra):
    """A server and the --output-dir triage must use with it."""
    if fw == "vllm":
        out = ctx.tmpdir("vllm-profiler-dir")
        return Server(ctx.work, fw, *extra, out_dir=out), out
    if fw == "trtllm":
        out = ctx.tmpdir("trtllm-profile")
        return Server(ctx.work, fw, *extra, trace_path=os.path.join(out, "trace.json.gz")), out
    return Server(ctx.work, fw, *extra), ctx.tmpdir(fw + "-out")


# ------------------------------------------------------------------------- cases

def case_capture(ctx, fw):
    srv, out = start_server(ctx, fw)
    with srv:
        p = ctx.run(ctx.capture_args(fw, srv.url, out))
        assert_ok(ctx, p, fw)
        for stage in ("prefill", "decode"):
            files = traces_in(os.path.join(out, stage))
            check(files, "%s: no trace in %s/%s (stderr:\n%s)" % (fw, out, stage, p.stderr))
        # server_args.json sits in the capture root, where discovery looks.
        sa = os.path.join(out, "server_args.json")
        check(os.path.exists(sa), "%s: no server_args.json in %s" % (fw, out))
        with open(sa) as f:
            args = json.load(f)
        check("Llama" in json.dumps(args) or "Qwen" in json.dumps(args) or "DeepSeek" in json.dumps(args),
              "%s: server_args.json has no model: %r" % (fw, args))
        reqs = srv.requests()
        starts = [r for r in reqs if r["path"] == "/start_profile"]
        stops = [r for r in reqs if r["path"] == "/stop_profile"]
        check(len(starts) == 2 and len(stops) == 2, "%s: %d starts, %d stops" % (fw, len(starts), len(stops)))
        posts = srv.paths()
        first_start = posts.index("/start_profile")
        gen = "/generate" if fw == "sglang" else "/v1/chat/completions"
        # prefill: 1 warm-up, then max(probe_requests, num_steps) = 2 probes
        check(posts[:first_start].count(gen) == 1, "%s: warm-up count %r" % (fw, posts))
        check(posts[first_start + 1:first_start + 3] == [gen, gen], "%s: probe order %r" % (fw, posts))
        if fw == "sglang":
            b = starts[0]["body"]
            check(b["num_steps"] == "3", "sglang num_steps (+1 guard) %r" % b)
            check(b["profile_prefix"] == "triage-trace-prefill", "sglang prefix %r" % b)
            check(b["profile_by_stage"] is False and b["activities"] == ["CPU", "GPU"], repr(b))
            check(b["output_dir"] == os.path.realpath(os.path.join(out, "prefill")), repr(b))
            check(starts[1]["body"]["profile_prefix"] == "triage-trace-decode", repr(starts[1]))
            g = [r["body"] for r in reqs if r["path"] == "/generate"]
            check(g[0]["text"].startswith("profile_probe_0 profile"), repr(g[0])[:200])
            check(g[1]["sampling_params"]["sampling_seed"] == 1, repr(g[1])[:300])
            check(len(g[0]["text"].split()) == 64, "prefill input length")
        elif fw == "tokenspeed":
            b = starts[0]["body"]
            check(b["with_stack"] is True and b["record_shapes"] is False, repr(b))
            check(b["profile_id"] == "triage-trace-prefill", repr(b))
        else:
            check(all(r["body"] is None for r in starts), "%s: start_profile must have no body" % fw)
            chat = [r["body"] for r in reqs if r["path"] == "/v1/chat/completions"]
            check(chat and chat[0]["model"] and chat[0]["stream"] is False, repr(chat[:1]))
        check("triage: live:" in p.stderr, "no progress lines on stderr")
        if ctx.mode == "cli":
            # server_args.json was found by discovery (reference defect 12).
            model = args["model_path"]
            check("| Model | %s | server args |" % model in p.stdout or "Model: " + model in p.stdout,
                  "%s: no Model line:\n%s" % (fw, p.stdout[:600]))


def case_auto(ctx, fw):
    srv, out = start_server(ctx, fw)
    with srv:
        args = ctx.capture_args("auto", srv.url, out)
        p = ctx.run(args)
        assert_ok(ctx, p, "auto " + fw)
        # TRT-LLM has no probe of its own; its OpenAI API makes it look like vLLM, whose
        # capture contract is the same.
        want = "vllm" if fw == "trtllm" else fw
        check("detected framework %s" % want in p.stderr, "auto %s: %s" % (fw, p.stderr))


def case_two_trace(ctx):
    with Server(ctx.work, "sglang") as m, Server(ctx.work, "sglang") as f:
        mo, fo = ctx.tmpdir("mapping"), ctx.tmpdir("formal")
        args = ["--mapping-url", m.url, "--formal-url", f.url, "--mapping-output-dir", mo,
                "--formal-output-dir", fo, "--framework", "sglang"]
        args += CLI_FAST if ctx.mode == "cli" else FAST
        p = ctx.run(args)
        check(p.returncode == 0, "two-trace: exit %d\n%s" % (p.returncode, p.stderr))
        if ctx.mode == "cli":
            check(has_kernel_table(p.stdout), "two-trace: no report")
        for d, srv, prefix in ((mo, m, "mapping-trace"), (fo, f, "formal-trace")):
            check(traces_in(os.path.join(d, "decode")), "two-trace: no traces in %s" % d)
            b = [r["body"] for r in srv.requests() if r["path"] == "/start_profile"][0]
            check(b["profile_prefix"] == prefix + "-prefill", repr(b))
        if ctx.mode == "driver":
            r = result_lines(p)
            check(r["mapping_input"] == os.path.realpath(mo) and r["formal_input"] == os.path.realpath(fo), repr(r))


def case_legacy_sglang(ctx):
    with Server(ctx.work, "sglang") as srv:
        out = ctx.tmpdir("legacy")
        args = ctx.capture_args("sglang", srv.url, out) + ["--profile-workload", "legacy"]
        p = ctx.run(args)
        assert_ok(ctx, p, "legacy")
        b = [r["body"] for r in srv.requests() if r["path"] == "/start_profile"][0]
        check(b["profile_by_stage"] is True and b["num_steps"] == "2", "legacy start body %r" % b)
        check(b["profile_prefix"] == "triage-trace", repr(b))
        files = traces_in(os.path.join(out, "legacy"))
        check(any(n.endswith("-EXTEND.trace.json.gz") for n in files), repr(files))
        if ctx.mode == "driver":
            check(result_lines(p)["input"] == os.path.realpath(os.path.join(out, "legacy")), p.stdout)


def case_unreachable(ctx):
    url = "http://127.0.0.1:%d/" % free_port()
    for fw in ("auto", "vllm"):
        out = ctx.tmpdir("unreachable")
        p = ctx.run(["--url", url, "--framework", fw, "--output-dir", out] + FAST, timeout=30)
        check(p.returncode == 1, "unreachable %s: exit %d\n%s" % (fw, p.returncode, p.stderr))
        check(p.elapsed < 5, "unreachable %s took %.1f s" % (fw, p.elapsed))
        check("cannot connect to %s (connection refused)" % url in p.stderr, p.stderr)


def case_http_500(ctx):
    for fw in ("sglang", "vllm"):
        srv, out = start_server(ctx, fw, "--fail-start")
        with srv:
            p = ctx.run(ctx.capture_args(fw, srv.url, out))
            check(p.returncode == 1, "500 %s: exit %d" % (fw, p.returncode))
            check("HTTP 500" in p.stderr and "CUDA error: out of memory" in p.stderr, p.stderr)
            check("/start_profile" not in srv.paths()[srv.paths().index("/start_profile") + 1:],
                  "retried start_profile")


def case_no_profiler(ctx):
    hints = {"sglang": "SGLANG_TORCH_PROFILER_DIR", "vllm": "--profiler-config",
             "trtllm": "TLLM_PROFILE_START_STOP", "tokenspeed": "/start_profile"}
    for fw, hint in hints.items():
        srv, out = start_server(ctx, fw, "--no-profiler")
        with srv:
            p = ctx.run(ctx.capture_args(fw, srv.url, out))
            check(p.returncode == 1, "no-profiler %s: exit %d" % (fw, p.returncode))
            err = p.stderr
            check("has no profiler endpoint" in err and hint in err, "no-profiler %s: %s" % (fw, err))
            last = [l for l in err.splitlines() if l.startswith("triage:") and "live:" not in l]
            check(len(last) == 1, "one-line message expected: %r" % last)


def case_never_write(ctx):
    for fw in ("sglang", "vllm"):
        srv, out = start_server(ctx, fw, "--never-write")
        with srv:
            p = ctx.run(ctx.capture_args(fw, srv.url, out), env={"TRIAGE_LIVE_TRACE_WAIT_S": "2"})
            check(p.returncode == 1, "never-write %s: exit %d" % (fw, p.returncode))
            d = os.path.realpath(os.path.join(out, "prefill") if fw == "sglang" else out)
            check("no trace file appeared in %s after waiting 2 s" % d in p.stderr, p.stderr)
            check(srv.paths().count("/stop_profile") == 1, "stop_profile not sent once")


def case_api_key(ctx):
    for fw in ("sglang", "vllm"):
        srv, out = start_server(ctx, fw, "--require-api-key", "sekret")
        with srv:
            p = ctx.run(ctx.capture_args(fw, srv.url, out))
            check(p.returncode == 1, "no key %s: exit %d" % (fw, p.returncode))
            check("HTTP 401" in p.stderr and "invalid or missing API key" in p.stderr, p.stderr)
            n = len(srv.requests())
            p = ctx.run(ctx.capture_args(fw, srv.url, out) + ["--api-key", "sekret"])
            assert_ok(ctx, p, "api key " + fw)
            check(all(r["auth"] == "Bearer sekret" for r in srv.requests()[n:]), "a request without the key")


def case_completions_fallback(ctx):
    srv, out = start_server(ctx, "trtllm", "--chat-fails")
    with srv:
        p = ctx.run(ctx.capture_args("trtllm", srv.url, out))
        assert_ok(ctx, p, "completions fallback")
        posts = srv.paths()
        check(posts.count("/v1/chat/completions") == 1, "chat retried: %r" % posts)
        check(posts.count("/v1/completions") >= 4, "completions not used: %r" % posts)


def case_vllm_needs_output_dir(ctx):
    srv, _ = start_server(ctx, "vllm")
    with srv:
        p = ctx.run(ctx.capture_args("vllm", srv.url, None))
        check(p.returncode == 1 and "needs --output-dir" in p.stderr and "--profiler-config" in p.stderr,
              p.stderr)
        check("/start_profile" not in srv.paths(), "profiler started without an output dir")


def case_non_sglang_flags(ctx):
    srv, out = start_server(ctx, "vllm")
    with srv:
        p = ctx.run(ctx.capture_args("vllm", srv.url, out) + ["--start-step", "3"])
        check(p.returncode == 1 and "--start-step is supported for SGLang only" in p.stderr, p.stderr)


def case_stale_root(ctx):
    """A profiler dir that already holds traces gets a fresh run dir for this capture."""
    srv, out = start_server(ctx, "vllm")
    with srv:
        old = os.path.join(out, "old.pt.trace.json")
        shutil.copy(os.path.join(HERE, "data", "standin.trace.json"), old)
        p = ctx.run(ctx.capture_args("vllm", srv.url, out))
        assert_ok(ctx, p, "stale root")
        check(os.path.exists(old), "an earlier trace was moved")
        runs = [d for d in os.listdir(out) if d.startswith("triage-live-")]
        check(len(runs) == 1, "no run directory: %r" % os.listdir(out))
        run = os.path.join(out, runs[0])
        check(traces_in(os.path.join(run, "prefill")) and traces_in(os.path.join(run, "decode")),
              "run directory has no stage traces")
        check(os.path.exists(os.path.join(run, "server_args.json")), "no server_args.json in the run dir")
        if ctx.mode == "driver":
            check(result_lines(p)["input"] == os.path.realpath(run), p.stdout)


def case_trtllm_file_path(ctx):
    """--output-dir may name TLLM_TORCH_PROFILE_TRACE itself: one stage per run."""
    srv, out = start_server(ctx, "trtllm")
    with srv:
        trace = os.path.join(out, "trace.json.gz")
        p = ctx.run(ctx.capture_args("trtllm", srv.url, trace))
        check(p.returncode == 1 and "requires a directory output path" in p.stderr, p.stderr)
        check("/start_profile" not in srv.paths(), "profiler started before the refusal")
        p = ctx.run(ctx.capture_args("trtllm", srv.url, trace) + ["--profile-workload", "decode"])
        assert_ok(ctx, p, "trtllm file path")
        check(traces_in(os.path.join(out, "decode")) == ["trace.json.gz"], repr(os.listdir(out)))


def case_ctrl_c(ctx):
    with Server(ctx.work, "sglang", "--slow-generate", "0.5") as srv:
        out = ctx.tmpdir("sigint")
        e = dict(ctx.env)
        proc = subprocess.Popen([ctx.tool] + ctx.capture_args("sglang", srv.url, out),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        deadline = time.monotonic() + 30
        while "/start_profile" not in srv.paths() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("/start_profile" in srv.paths(), "profiler never started")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        check(proc.returncode == 130, "ctrl-c: exit %d\n%s" % (proc.returncode, err))
        check("/stop_profile" in srv.paths(), "stop_profile not sent after Ctrl-C")
        check("interrupted (the profiler was stopped)" in err, err)


def case_ctrl_c_during_start(ctx):
    # Ctrl-C while start_profile is in flight: the server may already profile, so triage
    # must stop it even though it never saw the reply.
    with Server(ctx.work, "sglang", "--slow-start", "3") as srv:
        out = ctx.tmpdir("sigint-start")
        proc = subprocess.Popen([ctx.tool] + ctx.capture_args("sglang", srv.url, out),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(ctx.env))
        deadline = time.monotonic() + 30
        while "/start_profile" not in srv.paths() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("/start_profile" in srv.paths(), "profiler never started")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        check(proc.returncode == 130, "ctrl-c: exit %d\n%s" % (proc.returncode, err))
        check("/stop_profile" in srv.paths(), "stop_profile not sent after Ctrl-C during start")


CASES = [
    ("capture-" + fw, (lambda fw: lambda ctx: case_capture(ctx, fw))(fw)) for fw in FRAMEWORKS
] + [
    ("auto-" + fw, (lambda fw: lambda ctx: case_auto(ctx, fw))(fw)) for fw in FRAMEWORKS
] + [
    ("two-trace", case_two_trace),
    ("legacy-sglang", case_legacy_sglang),
    ("unreachable", case_unreachable),
    ("http-500", case_http_500),
    ("no-profiler", case_no_profiler),
    ("never-write", case_never_write),
    ("api-key", case_api_key),
    ("completions-fallback", case_completions_fallback),
    ("vllm-needs-output-dir", case_vllm_needs_output_dir),
    ("non-sglang-flags", case_non_sglang_flags),
    ("stale-root", case_stale_root),
    ("trtllm-file-path", case_trtllm_file_path),
    ("ctrl-c", case_ctrl_c),
    ("ctrl-c-during-start", case_ctrl_c_during_start),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["cli", "driver"], required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--only", action="append", help="case name (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="triage-live-tests-")
    ctx = Ctx(a.mode, os.path.abspath(a.tool), work)
    failed = []
    for name, fn in CASES:
        if a.only and name not in a.only:
            continue
        t0 = time.monotonic()
        try:
            fn(ctx)
            print("PASS %-24s %.1fs" % (name, time.monotonic() - t0), flush=True)
        except Exception as e:  # report every case, not only the first failure
            failed.append(name)
            print("FAIL %-24s %s" % (name, e), flush=True)
            if not isinstance(e, Failure):
                traceback.print_exc()
    if failed or a.keep:
        print("work directory kept: %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed: %s" % (len(failed), " ".join(failed)) if failed else "all passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
