#!/usr/bin/env python3
"""Golden end-to-end checks for triage (stdlib only).

usage: run_golden.py sample  --triage BIN --source DIR
       run_golden.py shared  --triage BIN --source DIR [--shared DIR] [--min-agreement PCT]
       run_golden.py schema  --triage BIN --source DIR

sample: triage on tests/data/llama_tp2 must equal tests/golden/expected/llama_tp2.md
        byte for byte (regenerate deliberately: see tests/golden/README.md).
shared: when the shared reference tree exists (default: ../shared next to the repo),
        every real trace and synthetic case must exit 0, its kernel-table numeric
        columns (rows, GPU time, share, launches) must equal the reference report, and
        the overall cell agreement of compare_reports.py must reach --min-agreement
        summed over all cases (Kernel and Fuse tables; see README.md). Exit 77 (skip)
        when the shared tree is absent.
schema: the --format json report of the sample validates against
        schemas/report.schema.json with tools/node_modules/.bin/ajv (installed by
        tools/check-rule-schema.sh). Exit 77 (skip) when node is absent.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

CASES = [
    ("synthetic-single", ["traces/synthetic/single/llama_tp2.trace.json"]),
    ("synthetic-staged", ["traces/synthetic/staged"]),
    ("synthetic-staged-limit4", ["traces/synthetic/staged", "--kernel-table-limit", "4"]),
    ("synthetic-staged-decode-tp1-vllm",
     ["--framework", "vllm", "--input",
      "traces/synthetic/staged/decode/triage-trace-decode-TP-1.trace.json.gz"]),
    ("synthetic-xpu", ["traces/synthetic/xpu/xpu.trace.json"]),
]


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def sample(args):
    out = run([args.triage, "--quiet", "tests/data/llama_tp2"], args.source)
    if out.returncode != 0:
        print(f"triage exited {out.returncode}: {out.stderr.decode(errors='replace')}")
        return 1
    with open(os.path.join(args.source, "tests/golden/expected/llama_tp2.md"), "rb") as fh:
        want = fh.read()
    if out.stdout != want:
        a = want.decode(errors="replace").splitlines()
        b = out.stdout.decode(errors="replace").splitlines()
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                print(f"line {i + 1} differs:\n  expected: {x}\n  actual:   {y}")
                break
        else:
            print(f"length differs: expected {len(a)} lines, got {len(b)}")
        return 1
    print("sample report matches tests/golden/expected/llama_tp2.md")
    return 0


def kernel_numbers(text):
    """[(stage, kernel, gpu time, share, launches)] of the Kernel Table."""
    rows, section, stage = [], None, "all"
    for line in text.splitlines():
        s = line.strip()
        if s in ("Kernel Table", "Overlap Opportunity Table", "Fuse Opportunity Table"):
            section, stage = s, "all"
            continue
        if section != "Kernel Table":
            continue
        if s.startswith("#####"):
            stage = s.lstrip("#").strip()
            continue
        if not s.startswith("|") or s.startswith("| Kernel |") or s.startswith("| ---"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", s.strip("|"))]
        if len(cells) >= 5:
            rows.append((stage, cells[0], cells[2], cells[3], cells[4]))
    return rows


def shared(args):
    root = args.shared or os.path.join(os.path.dirname(os.path.abspath(args.source)), "shared")
    if not os.path.isdir(os.path.join(root, "expected", "single")):
        print(f"SKIP: no shared reference tree at {root}")
        return SKIP
    cases = []
    real = os.path.join(root, "traces", "real")
    for name in sorted(os.listdir(real)):
        if name.endswith(".json.gz"):
            cases.append((name[:-len(".json.gz")], [os.path.join("traces/real", name)]))
    cases += CASES
    failures = 0
    agree = total = 0
    tmp = tempfile.mkdtemp(prefix="triage-golden-")
    try:
        for name, argv in cases:
            expected = os.path.join(root, "expected", "single", name + ".md")
            out = run([args.triage, "--quiet"] + argv, root)
            if out.returncode != 0:
                print(f"FAIL {name}: exit {out.returncode}: {out.stderr.decode(errors='replace').strip()}")
                failures += 1
                continue
            actual = os.path.join(tmp, name + ".md")
            with open(actual, "wb") as fh:
                fh.write(out.stdout)
            with open(expected, encoding="utf-8") as fh:
                want = kernel_numbers(fh.read())
            got = kernel_numbers(out.stdout.decode(errors="replace"))
            if want != got:
                print(f"FAIL {name}: kernel-table numbers differ")
                for w, g in zip(want + [None] * len(got), got + [None] * len(want)):
                    if w != g:
                        print(f"  expected {w}\n  actual   {g}")
                        break
                failures += 1
                continue
            cmp = run([sys.executable, os.path.join(root, "tools", "compare_reports.py"), "--quiet",
                       "--section", "Kernel Table", "--section", "Fuse Opportunity Table",
                       expected, actual], root)
            summary = cmp.stdout.decode(errors="replace").strip().splitlines()
            last = summary[-1] if summary else ""
            m = re.search(r"\((\d+)/(\d+)\)", last)
            if m:
                agree += int(m.group(1))
                total += int(m.group(2))
            print(f"     {name}: {last}")
        pct = 100.0 * agree / total if total else 100.0
        ok = pct >= args.min_agreement
        print(f"{'ok  ' if ok else 'FAIL'} overall: {pct:.1f}% of cells ({agree}/{total}), "
              f"bar {args.min_agreement}% (documented rule-pack deviations account for the rest)")
        if not ok:
            failures += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


def schema(args):
    ajv = os.path.join(args.source, "tools", "node_modules", ".bin", "ajv")
    if not shutil.which("node"):
        print("SKIP: node not found")
        return SKIP
    if not os.access(ajv, os.X_OK):
        setup = run(["bash", os.path.join(args.source, "tools", "check-rule-schema.sh")], args.source)
        if not os.access(ajv, os.X_OK):
            print("cannot install ajv-cli: " + setup.stderr.decode(errors="replace")[-400:])
            return 1
    tmp = tempfile.mkdtemp(prefix="triage-schema-")
    try:
        ok = True
        for i, extra in enumerate([[], ["--kernel-table-limit", "2", "--min-share", "0"]]):
            out = run([args.triage, "--quiet", "--format", "json", "tests/data/llama_tp2"] + extra, args.source)
            if out.returncode != 0:
                print(f"triage --format json exited {out.returncode}")
                return 1
            doc = os.path.join(tmp, f"report{i}.json")
            with open(doc, "wb") as fh:
                fh.write(out.stdout)
            v = run([ajv, "validate", "--spec=draft2020", "--strict=false", "-s",
                     os.path.join(args.source, "schemas", "report.schema.json"), "-d", doc], args.source)
            sys.stdout.write(v.stdout.decode(errors="replace") + v.stderr.decode(errors="replace"))
            ok = ok and v.returncode == 0
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["sample", "shared", "schema"])
    ap.add_argument("--triage", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--shared")
    ap.add_argument("--min-agreement", type=float, default=95.0)
    args = ap.parse_args()
    args.triage = os.path.abspath(args.triage)
    args.source = os.path.abspath(args.source)
    return {"sample": sample, "shared": shared, "schema": schema}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
