#!/usr/bin/env python3
"""bench-ranks.py - time and peak memory of the Ranks section on a generated rank set.

Generates (or reuses, --set DIR) a vLLM V1 set of --ranks ranks (TP 8 x DP ranks/8, one
node folder per 8 ranks, 24 gpt-oss layers, --steps decode steps: about 4 MB of JSON per
rank) with tools/make-rank-set.py, then measures in one run:

  one rank   triage on rank 0's file alone: its peak RSS is "one rank's peak";
  workers=W  triage on the whole set with --workers W (1 and 2 by default): wall time and
             peak RSS, and peak RSS / (W x one rank's peak), which issue 30 wants under 2;
  gzip -dc   decompressing every file of the set, the floor of any reader (the ratio
             wall / gzip is reported, as these machines are noisy).

Peak RSS is GNU time's %M (KB). Python 3 standard library and /usr/bin/time; a
benchmark, not a test (docs/scale-out.md holds the figures).

  tools/bench-ranks.py --triage build/triage [--ranks 256] [--steps 20] [--set DIR]
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))


def peak_of(cmd):
    """(wall seconds, peak RSS KB) of one run, by GNU time (Debian package time): Python's
    ru_maxrss of a child counts the forked interpreter before exec."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True).stderr.split()
    return float(out[-2]), int(out[-1])


def gzip_time(files):
    """One gzip -dc over every file (no process per file)."""
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        subprocess.run(["gzip", "-dc", *files], stdout=null, check=True)
    return time.monotonic() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--triage", required=True)
    p.add_argument("--ranks", type=int, default=256)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--set", default=None, help="an existing set (default: generate one)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = args.set
        if d is None:
            d = os.path.join(tmp, "set")
            subprocess.run([sys.executable, os.path.join(TOOLS, "make-rank-set.py"), "--out", d,
                            "--framework", "vllm", "--ranks", str(args.ranks), "--dp",
                            str(max(1, args.ranks // 8)), "--nodes", str(max(1, args.ranks // 8)),
                            "--layers", "24", "--decode-steps", str(args.steps), "--stage", "decode",
                            "--seed", "40"], check=True)
        files = sorted(f for f in glob.glob(os.path.join(d, "**", "*.pt.trace.json.gz"), recursive=True)
                       if ".async_llm." not in f)
        first = next(f for f in files if "_rank0." in os.path.basename(f))
        wall1, one = peak_of([args.triage, "--quiet", "--workers", "1", first])
        print(f"one rank: {wall1:.2f} s, peak {one} KB ({first})")
        gz = gzip_time(files)
        print(f"gzip -dc of {len(files)} files: {gz:.2f} s")
        for w in (int(x) for x in args.workers.split(",")):
            wall, peak = peak_of([args.triage, "--quiet", "--workers", str(w), d])
            print(f"{len(files)} ranks, --workers {w}: {wall:.2f} s ({wall / gz:.2f}x gzip -dc), "
                  f"peak {peak} KB = {peak / (w * one):.2f}x one rank's peak per worker")
    return 0


if __name__ == "__main__":
    sys.exit(main())
