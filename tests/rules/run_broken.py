#!/usr/bin/env python3
"""Runs `triage rules check PACK` on every broken pack of broken/expected.tsv.

Each must exit 1 (never crash, never hang) and print, as its first diagnostic,
"PACK:LINE:COL: error: ..." containing the expected substring.
usage: run_broken.py TRIAGE_BIN BROKEN_DIR
"""
import os
import subprocess
import sys


def main():
    triage, broken = sys.argv[1], sys.argv[2]
    failures = 0
    cases = 0
    with open(os.path.join(broken, "expected.tsv"), encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, pos, needle = line.rstrip("\n").split("\t")
            cases += 1
            path = os.path.join(broken, name)
            try:
                proc = subprocess.run([triage, "rules", "check", path], capture_output=True,
                                      timeout=30)
            except subprocess.TimeoutExpired:
                print(f"FAIL {name}: timed out")
                failures += 1
                continue
            err = proc.stderr.decode("utf-8", "replace")
            first = next((l for l in err.splitlines() if ": error: " in l), "")
            want = f"{path}:{pos}: error: "
            problems = []
            if proc.returncode != 1:
                problems.append(f"exit code {proc.returncode}, want 1")
            if not first.startswith(want):
                problems.append(f"first diagnostic {first!r} does not start with {want!r}")
            if needle not in first:
                problems.append(f"first diagnostic {first!r} lacks {needle!r}")
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "; ".join(problems))
            else:
                print(f"ok   {name}")
    print(f"{cases} broken packs, {failures} failures")
    return 1 if failures or cases == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
