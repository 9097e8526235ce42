#!/usr/bin/env python3
"""The kernel zoo: names of real LLM-serving kernels (vLLM, SGLang, FlashInfer, FlashAttention,
FlashMLA, DeepGEMM, DeepEP, TensorRT-LLM, aiter/ck_tile, hipBLASLt, cuBLAS, NCCL/RCCL, PyTorch,
Inductor, ...) that the shared traces do not hold, each with the category an expert gives it.

`triage rules explain` must put every name in one of its accepted labels (the category, or
the finer kind it reports). The zoo pins the kernel-category packs on traces we do not
have: a pack change that moves a family fails here. Names are batched per call.
usage: run_zoo.py TRIAGE_BIN ZOO_TSV
"""
import re
import subprocess
import sys

BATCH = 64


def load(path):
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 3 or not cols[0] or not cols[1] or not cols[2]:
                sys.exit(f"{path}:{lineno}: want 3 tab-separated columns (name, labels, source)")
            rows.append((cols[0], set(cols[1].split("|")), lineno))
    return rows


def categories(triage, names):
    """[(category, kind or None)] of each name, in order."""
    proc = subprocess.run([triage, "rules", "explain", *names],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"rules explain failed ({proc.returncode}): {proc.stderr.strip()}")
    found = re.findall(r"^  kernel category:\s+(\S+)(?: \(kind (\S+)\))?", proc.stdout, re.M)
    if len(found) != len(names):
        sys.exit(f"rules explain printed {len(found)} categories for {len(names)} names")
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    triage, path = sys.argv[1], sys.argv[2]
    rows = load(path)
    bad = 0
    for i in range(0, len(rows), BATCH):
        chunk = rows[i:i + BATCH]
        for (name, want, lineno), (cat, kind) in zip(chunk, categories(triage, [r[0] for r in chunk])):
            if cat not in want and kind not in want:
                bad += 1
                got = cat + (f" (kind {kind})" if kind else "")
                print(f"{path}:{lineno}: {got}, want {'|'.join(sorted(want))}: {name[:160]}")
    print(f"kernel zoo: {len(rows) - bad} of {len(rows)} names labelled as the expert does")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
