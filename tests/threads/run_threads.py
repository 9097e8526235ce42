#!/usr/bin/env python3
"""The analysis on one thread and on two give the same report (issue 32).

After the read, steps of the analysis run on two threads at once (src/analysis/pipeline.c,
run_two); TRIAGE_WORKERS=1 runs them one after the other. Every input here is analysed
both ways, in Markdown and JSON, and the outputs, exit codes and messages must be equal
byte for byte: the fixtures, a mapping + formal pair, and (when ../shared is there) every
shared real trace and the multi-rank directory.

  run_threads.py identical TRIAGE SOURCE [--quick] [--shared DIR]

--quick: the fixtures and three shared traces only (the ThreadSanitizer build's check,
ctest label tsan, where each run is several times slower). --shared: the shared tree
(default ../shared next to SOURCE). Exit 0 when all agree, 1 with
one line per difference, 77 when nothing could be run.
"""
import glob
import os
import subprocess
import sys

QUICK_SHARED = ("hta_triton_tiny_a100.json.gz", "sglang_qwen3_8b_decode_mi300x.json.gz",
                "hf_qwen1.5_0.5b_chat_h100.json.gz")


def cases(source, quick, shared_root):
    data = os.path.join(source, "tests", "data")
    syn = os.path.join(data, "traces", "synthetic")
    out = [[p] for p in sorted(glob.glob(os.path.join(data, "traces", "real", "*")))]
    out += [[os.path.join(data, "llama_tp2")], [os.path.join(syn, "staged")],
            [os.path.join(data, "stages", "sglang-step-annotations-tp4")],
            ["--mapping-input", os.path.join(syn, "mapping"), "--formal-input",
             os.path.join(syn, "staged")]]
    shared = os.path.join(shared_root, "traces")
    if os.path.isdir(shared):
        real = sorted(p for p in glob.glob(os.path.join(shared, "real", "*"))
                      if not p.endswith(".md"))
        if quick:
            real = [p for p in real if os.path.basename(p) in QUICK_SHARED]
        out += [[p] for p in real]
        if not quick:
            out += [[d] for d in sorted(glob.glob(os.path.join(shared, "multi-rank", "*")))
                    if os.path.isdir(d)]
    return out


def run(triage, workers, args):
    env = dict(os.environ, TRIAGE_WORKERS=workers)
    p = subprocess.run([triage, "--quiet", *args], capture_output=True, env=env, check=False)
    return p.returncode, p.stdout, p.stderr


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "identical":
        print(__doc__, file=sys.stderr)
        return 2
    triage, source = sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    quick = "--quick" in rest
    shared = rest[rest.index("--shared") + 1] if "--shared" in rest[:-1] else \
        os.path.join(os.path.dirname(os.path.abspath(source)), "shared")
    bad = n = 0
    for args in cases(source, quick, shared):
        for fmt in ("markdown", "json"):
            one = run(triage, "1", ["--format", fmt, *args])
            two = run(triage, "2", ["--format", fmt, *args])
            n += 1
            if one != two:
                bad += 1
                what = "exit codes" if one[0] != two[0] else "outputs" if one[1] != two[1] \
                    else "messages"
                print(f"differ ({what}): {fmt} {' '.join(args)}: {two[2][-400:]!r}")
            elif one[0] != 0:
                bad += 1
                print(f"failed (exit {one[0]}): {fmt} {' '.join(args)}: {one[2][-400:]!r}")
    print(f"{n - bad} of {n} runs: one thread and two give the same report")
    return 77 if n == 0 else (1 if bad else 0)


if __name__ == "__main__":
    sys.exit(main())
