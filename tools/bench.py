#!/usr/bin/env python3
"""bench.py - time and memory figures of triage on one trace, against gzip -dc.

For TRACE it measures, in one run, interleaved, RUNS times each:
  baseline    gzip -dc TRACE > /dev/null       (cat for a plain .json)
  single      triage TRACE > /dev/null
  two-trace   triage --mapping-input TRACE --formal-input TRACE > /dev/null
  reference   --reference CMD, if given ("{trace}" in CMD is replaced by TRACE,
              otherwise TRACE is appended)
and prints four figures (medians of wall time; peak RSS is the largest of the runs):
  1. wall time of single-trace mode / wall time of gzip -dc        target <= 1.5
  2. peak RSS of single-trace mode / uncompressed JSON size         target <= 0.25
  3. throughput of single-trace mode, MB of JSON per second (MB = 1e6 bytes)
  4. wall time of two-trace mode / wall time of single-trace mode   target <= 2.0
Wall time is measured around fork/exec/wait; peak RSS is ru_maxrss of the waited child
(os.wait4), so no /usr/bin/time is needed. The file is read once first (page cache warm).

Usage: tools/bench.py TRACE [--triage build/triage] [--runs 3] [--reference CMD]
                            [--no-two-trace] [--triage-arg ARG ...] [--json OUT]
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

TARGET_WALL = 1.5
TARGET_RSS = 0.25
TARGET_TWO = 2.0


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


def run(argv, label):
    """Runs argv with stdout to /dev/null; returns (wall seconds, maxrss bytes).

    Linux counts the RSS a process had before exec into ru_maxrss, so a child spawned
    straight from this Python process would report at least Python's own RSS. When GNU
    time exists it sits in between (its RSS is ~2 MB) and reports the command's peak;
    otherwise the figure comes from os.wait4 and has Python's RSS (~10 MB) as a floor.
    """
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
        maxrss = ru.ru_maxrss * 1024  # Linux reports KiB
        if USE_GNU_TIME:
            lines = [ln for ln in rss_out.read().split() if ln.strip().isdigit()]
            if lines:
                maxrss = int(lines[-1]) * 1024
    return wall, maxrss


USE_GNU_TIME = os.access(GNU_TIME, os.X_OK)


def fmt_s(x):
    return "%.2f s" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("trace")
    ap.add_argument("--triage", default="build/triage", help="binary (default build/triage)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--reference", metavar="CMD",
                    help="another command to time in the same run ({trace} = the trace)")
    ap.add_argument("--no-two-trace", action="store_true", help="skip two-trace mode")
    ap.add_argument("--triage-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for triage (repeatable), e.g. --triage-arg=--quiet")
    ap.add_argument("--json", metavar="OUT", help="also write the figures as JSON to OUT")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not os.path.isfile(args.trace):
        ap.error("no such trace: %s" % args.trace)
    if not os.access(args.triage, os.X_OK):
        ap.error("triage binary not executable: %s" % args.triage)

    trace = args.trace
    size_disk = os.path.getsize(trace)
    size_json = json_bytes(trace)  # also warms the page cache
    gz = is_gzip(trace)
    cmds = [("baseline", ["gzip", "-dc", trace] if gz else ["cat", trace])]
    cmds.append(("single", [args.triage] + args.triage_arg + [trace]))
    if not args.no_two_trace:
        cmds.append(("two-trace", [args.triage] + args.triage_arg +
                     ["--mapping-input", trace, "--formal-input", trace]))
    if args.reference:
        ref = args.reference
        ref = ref.replace("{trace}", shlex.quote(trace)) if "{trace}" in ref \
            else ref + " " + shlex.quote(trace)
        cmds.append(("reference", ["/bin/sh", "-c", "exec " + ref]))

    walls = {k: [] for k, _ in cmds}
    rss = {k: [] for k, _ in cmds}
    for i in range(args.runs):
        for label, argv in cmds:  # interleaved: one of each per round
            w, m = run(argv, label)
            walls[label].append(w)
            rss[label].append(m)
            sys.stderr.write("bench: run %d/%d %-9s %7.2f s  %7.1f MB RSS\n"
                             % (i + 1, args.runs, label, w, m / 1e6))

    med = {k: statistics.median(v) for k, v in walls.items()}
    peak = {k: max(v) for k, v in rss.items()}
    res = {
        "trace": trace,
        "disk_bytes": size_disk,
        "json_bytes": size_json,
        "runs": args.runs,
        "median_wall_s": med,
        "peak_rss_bytes": peak,
        "wall_ratio": med["single"] / med["baseline"],
        "rss_ratio": peak["single"] / size_json,
        "throughput_mb_s": size_json / 1e6 / med["single"],
        "baseline_mb_s": size_json / 1e6 / med["baseline"],
    }
    if "two-trace" in med:
        res["two_trace_ratio"] = med["two-trace"] / med["single"]
    if "reference" in med:
        res["reference_ratio"] = med["reference"] / med["baseline"]

    def verdict(val, target):
        return "ok" if val <= target else "OVER target %.2f" % target

    base_name = "gzip -dc" if gz else "cat"
    print("trace: %s  (%.1f MB on disk, %.1f MB JSON, %d runs each, medians)"
          % (trace, size_disk / 1e6, size_json / 1e6, args.runs))
    print("  %-10s %s  (%.0f MB/s of JSON)" % (base_name, fmt_s(med["baseline"]),
                                              res["baseline_mb_s"]))
    print("  %-10s %s  peak RSS %.1f MB" % ("triage", fmt_s(med["single"]),
                                           peak["single"] / 1e6))
    if "two-trace" in med:
        print("  %-10s %s  peak RSS %.1f MB" % ("two-trace", fmt_s(med["two-trace"]),
                                               peak["two-trace"] / 1e6))
    if "reference" in med:
        print("  %-10s %s  peak RSS %.1f MB" % ("reference", fmt_s(med["reference"]),
                                               peak["reference"] / 1e6))
    print("1. wall / %-9s %6.2fx   %s" % (base_name, res["wall_ratio"],
                                           verdict(res["wall_ratio"], TARGET_WALL)))
    print("2. peak RSS / JSON   %6.3fx   %s" % (res["rss_ratio"],
                                               verdict(res["rss_ratio"], TARGET_RSS)))
    print("3. throughput        %6.0f MB/s of JSON" % res["throughput_mb_s"])
    if "two_trace_ratio" in res:
        print("4. two-trace/single  %6.2fx   %s" % (res["two_trace_ratio"],
                                                   verdict(res["two_trace_ratio"], TARGET_TWO)))
    if "reference_ratio" in res:
        print("   reference / %-5s %6.2fx" % (base_name, res["reference_ratio"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
