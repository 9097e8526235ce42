#!/usr/bin/env python3
"""bench.py - time, CPU and memory figures of triage against gzip -dc, in one run.

For each TRACE it measures, interleaved (one of each command per round), RUNS rounds:
  baseline    gzip -dc TRACE > /dev/null       (cat for a plain .json)
  single      triage TRACE > /dev/null
  two-trace   triage --mapping-input TRACE --formal-input TRACE > /dev/null
  reference   --reference CMD, if given ("{trace}" in CMD is replaced by TRACE,
              otherwise TRACE is appended)
  LABEL       --other LABEL=CMD, as many as given, the same way (e.g. an earlier build of
              triage, to compare against it in the same rounds)
and prints, as the median of the per-round ratios with their spread (min-max):
  1. wall time of single-trace mode / wall time of gzip -dc         target <= 0.4
  2. CPU time (user+sys) of single-trace mode / CPU time of gzip -dc target <= 0.5
  3. peak RSS of single-trace mode / uncompressed JSON size          target <= 0.12
  4. throughput of single-trace mode, MB of JSON per second (MB = 1e6 bytes)
  5. wall time of two-trace mode / wall time of single-trace mode    target <= 1.05
     (and its CPU time ratio beside it: the wall ratio of two runs of ~1 s each moves with
     any burst of load, the CPU ratio much less)
  (the targets of issue 32; issue 15's were 0.5, 0.6, 0.15 and 1.1)
  and reference / triage when --reference is given; for each --other, its wall time, CPU
  time and peak RSS over triage's.
Ratios of one round are taken within that round, so a burst of load on this shared
machine hits numerator and denominator alike; the spread shows what is left of it. Every
other round runs the commands in the reverse order.

--suite DIR builds (once, into DIR) and measures the standard set (issues 15 and 32):
  sglang30.json.gz  sglang_qwen3_8b_prefilldecode_mi300x x 30 (Python-frame heavy, 462 MB)
  hta15.json.gz     hta_async_cpu_to_gpu_a100 x 15 (cpu_op and launch heavy, pretty-printed
                    the way Kineto writes, 468 MB)
  vllm100.json.gz   vllm_gptoss_prefilldecode_piecewise_amd x 100 (vLLM with stack: 88 %
                    Python frames with long names, cpu_ops with shapes, flows; 452 MB)
  hf50.json.gz      hf_qwen1.5_0.5b_chat_h100 x 50 (with stack, mixed: frames, cpu_ops with
                    shapes, flows, instant events; indented by json.dump, 276 MB)
  many-names.json.gz  262,145 kernels with distinct names   targets <= 1.5 s, <= 150 MB
  start-up          triage on a one-kernel trace, and rule-pack load + compile (CPU
                    of `triage rules check` less `triage --version`)  target <= 30 ms
The shared traces come from --shared (default ../shared next to the repository).

Wall time is measured around fork/exec/wait; CPU time is the child's ru_utime + ru_stime
(os.wait4); peak RSS comes from GNU time (-f %M) wrapped around the command when it
exists (Linux counts the RSS a process had before exec into ru_maxrss, so a child
spawned straight from Python reports at least Python's own RSS), else from os.wait4.
Each trace is read once first (page cache warm).

--ranks DIR (a directory of N rank traces, e.g. from tools/make-rank-set.py) measures the
Ranks section (issue 12), interleaved per round:
  all ranks   triage DIR (every rank read, in parallel, plus the rank-0 tables)
  one rank    triage --rank R DIR, for every rank R
  6. wall time of all ranks / (sum of the one-rank wall times / CPUs)  target <= 1.3
  7. peak RSS of all ranks / largest one-rank peak RSS                  target <= CPUs + 1
     (a worker holds one rank's events at a time; per-rank summaries stay)

Usage: tools/bench.py [TRACE ...] [--suite DIR] [--ranks DIR] [--triage build/triage] [--runs 3]
                      [--reference CMD] [--other LABEL=CMD ...] [--no-two-trace]
                      [--triage-arg ARG ...] [--json OUT]
Exit status: 0 measured (targets or not), 1 a command failed, 2 usage.
Standard library only.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

TARGET_WALL = 0.4
TARGET_CPU = 0.5
TARGET_RSS = 0.12
TARGET_TWO = 1.05
TARGET_MANY_S = 1.5
TARGET_MANY_MB = 150.0
TARGET_PACKS_MS = 30.0
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUITE_TRACES = [  # (file, shared trace, repetitions)
    ("sglang30.json.gz", "sglang_qwen3_8b_prefilldecode_mi300x.json.gz", 30),
    ("hta15.json.gz", "hta_async_cpu_to_gpu_a100.json.gz", 15),
    ("vllm100.json.gz", "vllm_gptoss_prefilldecode_piecewise_amd.json.gz", 100),
    ("hf50.json.gz", "hf_qwen1.5_0.5b_chat_h100.json.gz", 50),
]
MANY_NAMES = 262145  # TE_MATCH_CACHE_MAX + 1: tests/bad-input/make_cases.py gen_cache


def is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def json_bytes(path):
    """Uncompressed size: streams the file through zlib (handles multi-member gzip)."""
    if not is_gzip(path):
        return os.path.getsize(path)
    total = 0
    with open(path, "rb") as f:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                break
            while chunk:
                # bounded output keeps this process small (its RSS leaks into children)
                total += len(d.decompress(chunk, 1 << 20))
                while d.unconsumed_tail:
                    total += len(d.decompress(d.unconsumed_tail, 1 << 20))
                chunk = d.unused_data
                if chunk:  # next gzip member
                    total += len(d.flush())
                    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    continue
                break
        total += len(d.flush())
    return total


GNU_TIME = "/usr/bin/time"
USE_GNU_TIME = os.access(GNU_TIME, os.X_OK)


def run(argv, label):
    """Runs argv with stdout to /dev/null; returns (wall s, cpu s, maxrss bytes)."""
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as null, \
            tempfile.NamedTemporaryFile("r") as rss_out:
        full = argv
        if USE_GNU_TIME:
            full = [GNU_TIME, "-q", "-f", "%M", "-o", rss_out.name] + argv
        t0 = time.monotonic()
        p = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=null, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            tail = err.read()[-2000:].decode("utf-8", "replace")
            sys.stderr.write("bench: %s failed (exit %d): %s\n%s\n"
                             % (label, p.returncode, " ".join(map(shlex.quote, argv)), tail))
            raise SystemExit(1)
        # wait4's usage includes the descendants GNU time waited for
        cpu = ru.ru_utime + ru.ru_stime
        maxrss = ru.ru_maxrss * 1024  # Linux reports KiB
        if USE_GNU_TIME:
            lines = [ln for ln in rss_out.read().split() if ln.strip().isdigit()]
            if lines:
                maxrss = int(lines[-1]) * 1024
    return wall, cpu, maxrss


def spread(values, fmt="%.2f"):
    """'median (min-max)' of values."""
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(values), min(values),
                                                    max(values))


def verdict(val, target):
    return "ok" if val <= target else "OVER target %g" % target


def bench_trace(trace, args, out):
    size_json = json_bytes(trace)  # also warms the page cache
    gz = is_gzip(trace)
    cmds = [("baseline", ["gzip", "-dc", trace] if gz else ["cat", trace])]
    cmds.append(("single", [args.triage] + args.triage_arg + [trace]))
    if not args.no_two_trace:
        cmds.append(("two-trace", [args.triage] + args.triage_arg +
                     ["--mapping-input", trace, "--formal-input", trace]))
    others = ([("reference", args.reference)] if args.reference else []) + \
        [tuple(o.split("=", 1)) for o in args.other]
    for label, ref in others:
        ref = ref.replace("{trace}", shlex.quote(trace)) if "{trace}" in ref \
            else ref + " " + shlex.quote(trace)
        cmds.append((label, ["/bin/sh", "-c", "exec " + ref]))
    m = {k: [] for k, _ in cmds}
    for i in range(args.runs):
        # interleaved: one of each per round, every other round in the reverse order, so
        # that what follows what (a run right after gzip's, the two-trace run after the
        # single one) is not always the same
        for label, argv in (cmds if i % 2 == 0 else cmds[::-1]):
            m[label].append(run(argv, label))
            w, c, r = m[label][-1]
            sys.stderr.write("bench: %s run %d/%d %-9s %6.2f s wall %6.2f s cpu %7.1f MB\n"
                             % (os.path.basename(trace), i + 1, args.runs, label, w, c, r / 1e6))

    def per_round(a, b, k):
        return [x[k] / y[k] for x, y in zip(m[a], m[b])]

    res = {
        "trace": trace, "json_bytes": size_json, "runs": args.runs,
        "wall_s": {k: [x[0] for x in v] for k, v in m.items()},
        "cpu_s": {k: [x[1] for x in v] for k, v in m.items()},
        "peak_rss_bytes": {k: max(x[2] for x in v) for k, v in m.items()},
        "wall_ratio": per_round("single", "baseline", 0),
        "cpu_ratio": per_round("single", "baseline", 1),
        "rss_ratio": max(x[2] for x in m["single"]) / size_json,
        "throughput_mb_s": [size_json / 1e6 / x[0] for x in m["single"]],
    }
    if "two-trace" in m:
        res["two_trace_ratio"] = per_round("two-trace", "single", 0)
        res["two_trace_cpu_ratio"] = per_round("two-trace", "single", 1)
    if "reference" in m:
        res["reference_ratio"] = per_round("reference", "single", 0)
    res["other"] = {
        label: {"wall_ratio": per_round(label, "single", 0),
                "cpu_ratio": per_round(label, "single", 1),
                "rss_ratio": res["peak_rss_bytes"][label] / res["peak_rss_bytes"]["single"]}
        for label, _ in others if label != "reference"}
    base_name = "gzip -dc" if gz else "cat"
    med = lambda k, i: statistics.median(x[i] for x in m[k])  # noqa: E731
    print("trace: %s  (%.1f MB on disk, %.1f MB JSON, %d rounds; medians, spread min-max)"
          % (trace, os.path.getsize(trace) / 1e6, size_json / 1e6, args.runs))
    for k, _ in cmds:
        name = base_name if k == "baseline" else k
        print("  %-10s %6.2f s wall  %6.2f s cpu  peak RSS %7.1f MB"
              % (name, med(k, 0), med(k, 1), res["peak_rss_bytes"][k] / 1e6))
    wr, cr = res["wall_ratio"], res["cpu_ratio"]
    print("1. wall / %-9s %s   %s" % (base_name, spread(wr), verdict(statistics.median(wr), TARGET_WALL)))
    print("2. cpu / %-10s %s   %s" % (base_name, spread(cr), verdict(statistics.median(cr), TARGET_CPU)))
    print("3. peak RSS / JSON   %.3f   %s" % (res["rss_ratio"], verdict(res["rss_ratio"], TARGET_RSS)))
    print("4. throughput        %s MB/s of JSON" % spread(res["throughput_mb_s"], "%.0f"))
    if "two_trace_ratio" in res:
        tr = res["two_trace_ratio"]
        print("5. two-trace/single  %s   %s   (cpu %s)"
              % (spread(tr), verdict(statistics.median(tr), TARGET_TWO),
                 spread(res["two_trace_cpu_ratio"])))
    if "reference_ratio" in res:
        print("   reference/triage  %s" % spread(res["reference_ratio"]))
    for label, o in res["other"].items():
        print("   %s/triage: wall %s, cpu %s, peak RSS %.2f"
              % (label, spread(o["wall_ratio"]), spread(o["cpu_ratio"]), o["rss_ratio"]))
    out["traces"].append(res)


def bench_many_names(path, args, out):
    walls, cpus, rss = [], [], []
    for i in range(args.runs):
        w, c, r = run([args.triage] + args.triage_arg + [path], "many-names")
        walls.append(w)
        cpus.append(c)
        rss.append(r / 1e6)
    print("many names: %s (%d distinct kernel names, %d runs)" % (path, MANY_NAMES, args.runs))
    print("   wall %s s, cpu %s s   %s;  peak RSS %.1f MB   %s"
          % (spread(walls), spread(cpus), verdict(statistics.median(walls), TARGET_MANY_S),
             max(rss), verdict(max(rss), TARGET_MANY_MB)))
    out["many_names"] = {"wall_s": walls, "cpu_s": cpus, "peak_rss_mb": max(rss)}


def bench_startup(args, out, rounds=20):
    """Start-up: wall and CPU time of a run on a one-kernel trace, and rule-pack load +
    compile as the CPU time of `triage rules check` (load, validate, compile every pack)
    less that of `triage --version` (process start, dynamic linking), per round. CPU time,
    not wall: on this shared machine a 10 ms wall figure is mostly someone else's load."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,'
                '"ts":1,"dur":1,"args":{"correlation":1,"stream":7}}]}')
        tiny = f.name
    try:
        t = {"tiny_wall": [], "tiny_cpu": [], "check_cpu": [], "version_cpu": []}
        for _ in range(rounds):
            w, c, _ = run([args.triage, tiny], "start-up")
            t["tiny_wall"].append(w * 1000)
            t["tiny_cpu"].append(c * 1000)
            t["check_cpu"].append(run([args.triage, "rules", "check"], "rules check")[1] * 1000)
            t["version_cpu"].append(run([args.triage, "--version"], "--version")[1] * 1000)
    finally:
        os.unlink(tiny)
    packs = [c - v for c, v in zip(t["check_cpu"], t["version_cpu"])]
    print("start-up (%d rounds, ms): one-kernel trace %s wall, %s cpu; --version %s cpu"
          % (rounds, spread(t["tiny_wall"], "%.1f"), spread(t["tiny_cpu"], "%.1f"),
             spread(t["version_cpu"], "%.1f")))
    print("   rule packs load + compile (cpu of rules check - --version) %s   %s"
          % (spread(packs, "%.1f"), verdict(statistics.median(packs), TARGET_PACKS_MS)))
    out["startup_ms"] = t
    out["packs_ms"] = packs


def make_suite(d, shared):
    """Writes the suite's inputs into d unless present; returns (traces, many-names)."""
    os.makedirs(d, exist_ok=True)
    traces = []
    for name, src, reps in SUITE_TRACES:
        path = os.path.join(d, name)
        if not os.path.exists(path):
            sys.stderr.write("bench: writing %s (%s x %d)\n" % (path, src, reps))
            subprocess.run([sys.executable, os.path.join(HERE, "make-big-trace.py"), "--quiet",
                            "--repeat", str(reps), os.path.join(shared, "traces", "real", src),
                            path], check=True)
        traces.append(path)
    many = os.path.join(d, "many-names.json.gz")
    if not os.path.exists(many):
        # the generator of the bad-input case limit-match-cache, so both are the same file
        sys.stderr.write("bench: writing %s\n" % many)
        sys.path.insert(0, os.path.join(ROOT, "tests", "bad-input"))
        import make_cases  # noqa: E402 (a sibling tree, not a package)
        make_cases.gen_cache(d)
    return traces, many


def bench_ranks(d, args, out):
    """Figures 6 and 7: every rank of d at once against one rank at a time."""
    rep = subprocess.run([args.triage, "--quiet", "--format", "json", d], capture_output=True,
                         text=True, check=True)
    ranks = [r["rank"] for sec in json.loads(rep.stdout)["ranks"] for r in sec["rows"]]
    if not ranks:
        sys.stderr.write("bench: %s holds no ranks\n" % d)
        raise SystemExit(1)
    cpus = os.cpu_count() or 1
    walls, rss = [], []
    for _ in range(args.runs):
        w_all, _, m_all = run([args.triage, *args.triage_arg, d], "all ranks")
        one = [run([args.triage, *args.triage_arg, "--rank", str(r), d], "rank %d" % r)
               for r in ranks]
        walls.append(w_all / (sum(w for w, _, _ in one) / cpus))
        rss.append(m_all / max(m for _, _, m in one))
    walls.sort()
    rss.sort()
    w, m = walls[len(walls) // 2], rss[len(rss) // 2]
    print("%s: %d ranks, %d CPUs" % (d, len(ranks), cpus))
    print("  6. all ranks / (sum of one-rank times / CPUs): %s %s"
          % (spread(walls), verdict(w, 1.3)))
    print("  7. peak RSS all ranks / largest one rank:    %s %s"
          % (spread(rss), verdict(m, cpus + 1)))
    out.setdefault("ranks", []).append({"dir": d, "ranks": len(ranks), "cpus": cpus,
                                        "time_ratio": w, "rss_ratio": m})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("trace", nargs="*")
    ap.add_argument("--suite", metavar="DIR",
                    help="build (once) and measure the standard set in DIR")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"),
                    help="the shared reference tree (for --suite)")
    ap.add_argument("--triage", default="build/triage", help="binary (default build/triage)")
    ap.add_argument("--ranks", metavar="DIR", action="append", default=[],
                    help="measure the Ranks section on a directory of rank traces (repeatable)")
    ap.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--reference", metavar="CMD",
                    help="another command to time in the same run ({trace} = the trace)")
    ap.add_argument("--other", action="append", default=[], metavar="LABEL=CMD",
                    help="another command timed in the same rounds, compared with triage "
                         "(repeatable; {trace} = the trace)")
    ap.add_argument("--no-two-trace", action="store_true", help="skip two-trace mode")
    ap.add_argument("--triage-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for triage (repeatable), e.g. --triage-arg=--quiet")
    ap.add_argument("--json", metavar="OUT", help="also write the figures as JSON to OUT")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not args.trace and not args.suite and not args.ranks:
        ap.error("give a TRACE, --suite DIR or --ranks DIR")
    for t in args.trace:
        if not os.path.isfile(t):
            ap.error("no such trace: %s" % t)
    if not os.access(args.triage, os.X_OK):
        ap.error("triage binary not executable: %s" % args.triage)
    for o in args.other:
        label = o.split("=", 1)[0]
        if "=" not in o or not label or label in ("baseline", "single", "two-trace", "reference"):
            ap.error("--other wants LABEL=CMD with a new label: %s" % o)
    # the machine is shared: the load next to the figures says what they are worth
    out = {"triage": args.triage, "traces": [], "load_before": os.getloadavg()}
    print("load average before: %.1f %.1f %.1f (%d CPUs)"
          % (*out["load_before"], os.cpu_count() or 1))
    traces, many = list(args.trace), None
    if args.suite:
        suite, many = make_suite(args.suite, args.shared)
        traces += suite
    for t in traces:
        bench_trace(t, args, out)
    for d in args.ranks:
        bench_ranks(d, args, out)
    if many:
        bench_many_names(many, args, out)
        bench_startup(args, out)
    out["load_after"] = os.getloadavg()
    print("load average after: %.1f %.1f %.1f" % out["load_after"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
