#!/usr/bin/env python3
"""The expert audit's gate as a test (issues 28 and 31 "Done when").

    check_truth.py --triage BIN --source DIR [--shared DIR]

Runs the shared tree's tools/truth_check.py (../shared next to the repository by
default) on BIN and fails unless its last line holds the gate: no trace with more than
1% of GPU time mislabelled, no forbidden fuse row, every required opportunity found, no
misleading overlap row back, every useful overlap row kept, the expert's first action in
the first three items on every trace, no must-not item. Exit 77 (skip) when the shared
tree is absent: a clean clone has none. The truth itself is not read here: this only
turns the tool's verdict into a pass or a failure, so a regression cannot land unseen.
"""
import os
import re
import subprocess
import sys

import golden_cli
from golden_cli import SKIP


def gate(line: str) -> list[str]:
    """What the summary line breaks of the gate (empty: it holds)."""
    want = [
        (r"(\d+) traces with >1% of GPU time mislabelled", lambda m: m[0] == 0, "mislabelled traces"),
        (r"(\d+) forbidden fuse rows", lambda m: m[0] == 0, "forbidden fuse rows"),
        (r"required opportunities found (\d+)/(\d+)", lambda m: m[0] == m[1], "required found"),
        (r"misleading overlap rows back (\d+)/(\d+)", lambda m: m[0] == 0, "misleading overlap back"),
        (r"useful overlap rows kept (\d+)/(\d+)", lambda m: m[0] == m[1], "useful overlap kept"),
        (r"first action in the first three (\d+)/(\d+)", lambda m: m[0] == m[1] and m[1] > 0,
         "first action in the first three"),
        (r"must-not items (\d+)", lambda m: m[0] == 0, "must-not items"),
    ]
    broken = []
    for rx, ok, what in want:
        m = re.search(rx, line)
        if not m:
            broken.append(f"{what}: not in the summary line")
        elif not ok([int(g) for g in m.groups()]):
            broken.append(f"{what}: {m.group(0)}")
    return broken


def main() -> int:
    a = golden_cli.parse_args(__doc__.split("\n\n")[0])
    tool = os.path.join(a.shared, "tools", "truth_check.py")
    if not os.path.exists(tool):
        print(f"check_truth: no {tool} (a clean clone has no shared tree): skipped")
        return SKIP
    p = subprocess.run([sys.executable, tool, a.triage, "--quiet"], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("truth:")]
    if p.returncode != 0 or not lines:
        print(p.stdout[-3000:], p.stderr[-2000:], sep="\n")
        print(f"check_truth: truth_check.py exit {p.returncode}, no summary line")
        return 1
    broken = gate(lines[-1])
    print(p.stdout[-4000:] if broken else lines[-1])
    for b in broken:
        print(f"check_truth: gate broken: {b}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
