#!/usr/bin/env python3
"""`triage rules explain --pattern NAME TRACE` agrees with the report it explains.

For every split fuse row of the JSON report of each trace given, the explanation of that
stage must fill every component with one of the row's related kernels (each once; a
chain's riders are listed after them), and
state the row's related time and estimated saving. A pattern whose framework gate cannot
pass must say so and fill nothing; an unknown pattern is a usage error (exit 2).
Exit 77 when no trace exists (the shared tree is absent).
usage: run_explain.py TRIAGE_BIN TRACE...
"""
import json
import os
import re
import subprocess
import sys


def explain(triage, pattern, trace):
    proc = subprocess.run([triage, "rules", "explain", "--pattern", pattern, trace],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def stage_blocks(text):
    """{stage id: [lines]} of the explanation's per-stage part."""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"stage (\S+):$", line)
        if m:
            cur = blocks.setdefault(m.group(1), [])
        elif cur is not None:
            cur.append(line)
    return blocks


def check_row(triage, trace, stage, row):
    """Problems of the explanation of one split fuse row."""
    rc, out, err = explain(triage, row["id"], trace)
    if rc != 0:
        return [f"exit {rc}: {err.strip()}"]
    lines = stage_blocks(out).get(stage)
    if lines is None:
        return [f"no block for stage {stage}"]
    problems = []
    if not any(l.startswith("  gates: framework pass, platform pass, arch pass, tp pass, model pass")
               and "FAIL" not in l for l in lines):
        problems.append("a gate is not reported as passing")
    filled = []
    for l in lines:
        m = re.match(r"  component \d+ \(([^)]*)\): (.*) \([0-9.]+ us\)$", l)
        r = re.match(r"  rider: (.*) \([0-9.]+ us\)$", l)  # a chain's riders (chain.riders)
        if m:
            filled.append(m.group(2))
        elif r:
            filled.append(r.group(1))
        elif l.startswith("  component "):
            problems.append(f"component not filled: {l.strip()}")
    if sorted(filled) != sorted(row["related_kernels"]):
        problems.append(f"components {filled} != related kernels {row['related_kernels']}")
    m = next((re.search(r"related ([0-9.]+) us .*saving ([0-9.]+) us", l) for l in lines
              if l.startswith("  related ")), None)
    if not m:
        problems.append("no related/saving line")
    else:
        rel, sav = float(m.group(1)), float(m.group(2))
        if abs(rel - row["related_us"]) > 0.1 or abs(sav - row["estimated_saving_us"]) > 0.1:
            problems.append(f"related {rel} / saving {sav} != row {row['related_us']} / "
                            f"{row['estimated_saving_us']}")
    return problems


def main():
    triage, traces = sys.argv[1], [t for t in sys.argv[2:] if os.path.exists(t)]
    if not traces:
        print("no trace: skipped")
        return 77
    failures = checked = 0
    for trace in traces:
        rep = json.loads(subprocess.run([triage, "--format", "json", trace], capture_output=True,
                                        text=True, timeout=300, check=True).stdout)
        for st in rep["stages"]:
            for row in st.get("fuse", []):
                if row.get("active_match") or row.get("status", "").endswith("active"):
                    continue
                checked += 1
                problems = check_row(triage, trace, st["stage"], row)
                failures += bool(problems)
                tag = f"{os.path.basename(trace)} {st['stage']} {row['id']}"
                print(("FAIL " if problems else "ok   ") + tag + ": " + "; ".join(problems))
    # a pattern of another framework: the gate fails, no component is looked for
    rc, out, _ = explain(triage, "vllm-rmsnorm-quant", traces[0])
    if rc != 0 or "framework FAIL" not in out or "not looked for: a gate failed" not in out:
        print(f"FAIL vllm pattern on {traces[0]}: gate failure not explained (exit {rc})")
        failures += 1
    rc, _, err = explain(triage, "no-such-pattern", traces[0])
    if rc != 2 or "no-such-pattern" not in err:
        print(f"FAIL unknown pattern: exit {rc}, stderr {err.strip()!r}")
        failures += 1
    print(f"{checked} split rows explained, {failures} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
