#!/usr/bin/env python3
"""Checks of the default report layout (issue "A report an engineer can act on"), stdlib only.

usage: check_layout.py [checks|pins|commonmark] --triage BIN --source DIR [--shared DIR]
                       [--max-kernel-chars N] [--regenerate]

checks (default):

On tests/data/llama_tp2 and every real trace of the shared tree (when present), the
default Markdown report must:
  - have '# Triage report', '## What to try first', '## Legend' and a '## Stage:' heading
    with '### Kernels: ...' under it;
  - show no Kernel cell longer than N characters (names.display_max_chars, 120) and no
    two identical Kernel cells in one table;
  - show no time cell that reads zero while the same row is non-zero in the JSON report
    (a time of 0 prints as "0", never "0.00"), i.e. no "0.00" cell at all;
  - give each kernel the same Share in every table of a stage (kernel and overlap tables);
  - link each summary item to an anchor that exists in the report;
  - name no framework nothing detected (the Run table's Framework row is "not detected"
    whenever its source would be the packs' default);
  - give a training or microbenchmark workload (the Run table's Workload row) no serving
    advice: no fusion-path item ("Enable the fused path", "Port the upstream fused path"),
    no KV cache or speculative decoding in "What to try first".
Exit 0 when all hold, 1 with one line per failure.

pins: the default report of three shared real traces (SGLang, vLLM, non-LLM; PINS) must
  equal tests/golden/expected/layout/NAME.md byte for byte (run from the shared tree with
  a relative path, so the input line is stable). --regenerate rewrites them: review the
  diff. Exit 77 when the shared tree is absent.
commonmark: every report of `checks` is rendered by markdown-it (CommonMark + GFM
  tables, tests/golden/commonmark_check.js) and its headings and tables are checked.
  Exit 77 when node or tools/node_modules/markdown-it is absent.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')
LINK = re.compile(r"\]\(#([a-z0-9-]+)\)")


def cells(line):
    """Cells of a GFM table row ('\\|' is not a separator)."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in parts[1:-1]]


def tables(lines):
    """(heading, header cells, rows) for each table, heading = last '###' or '##' line."""
    out, heading, i = [], "", 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#"):
            heading = ln
        if ln.startswith("|") and i + 1 < len(lines) and re.match(r"^\|\s*-{3}|^\|\s*-{3}:", lines[i + 1].replace("---:", "---")):
            head = cells(ln)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            out.append((heading, head, rows))
            continue
        i += 1
    return out


def name_of(cell):
    return cell.strip("`").strip()


SERVING_ONLY = ("Enable the fused path", "Port the upstream fused path", "KV cache", "speculative")


def run_facts(text, label):
    """Errors of the Run table: a framework claimed by default, serving advice given to a
    workload that serves no model."""
    errs, facts = [], {}
    for heading, head, rows in tables(text.split("\n## What to try first")[0].splitlines()):
        if head[:1] == ["Run"]:
            facts = {r[0]: r[1:] for r in rows if r}
    fw = facts.get("Framework", ["", ""])
    if fw[1:] and fw[1].startswith("default") and fw[0] != "not detected":
        errs.append(f"{label}: the Run table claims framework {fw[0]!r} nothing detected")
    if facts.get("Workload", [""])[0] in ("training", "microbenchmark"):
        first = text.split("## What to try first")[-1].split("\n## ")[0]
        for w in SERVING_ONLY:
            if w in first:
                errs.append(f"{label}: a {facts['Workload'][0]} workload is advised {w!r}")
    return errs


# "[K2 in extend/prefill, kernel table](#kernel-extend-1)": the label's stage, the anchor's
EVIDENCE = re.compile(r"\[[KOFIW]\d+ in ([^,\]]+), [a-z ]+\]\(#(?:kernel|overlap|fusion|idle|wait)-"
                      r"([^)]+)-\d+\)")


def check(text, label, max_chars):
    errs = run_facts(text, label)
    for h in ("# Triage report", "## What to try first", "## Legend"):
        if f"\n{h}\n" not in "\n" + text:
            errs.append(f"{label}: no '{h}' heading")
    if "\n## Stage: " not in text or "\n### Kernels: " not in text:
        errs.append(f"{label}: no stage / kernel table heading")
    anchors = set(ANCHOR.findall(text))
    for a in LINK.findall(text):
        if a not in anchors:
            errs.append(f"{label}: summary links to missing anchor #{a}")
    # every evidence link into one stage names that stage alike (review 5: "K1 in
    # extend/prefill" beside "K2 in extend")
    named = {}
    for lab, stage_id in EVIDENCE.findall(text):
        if named.setdefault(stage_id, lab) != lab:
            errs.append(f"{label}: links into stage {stage_id} name it "
                        f"'{named[stage_id]}' and '{lab}'")
    stage = None
    shares = {}
    for heading, head, rows in tables(text.splitlines()):
        # a table's row numbers (K1, O1, F1, ...) run 1..n with no gap: a row kept only
        # in the JSON report must not leave a hole in what the reader sees
        nums = [re.search(r"([A-Z])(\d+)\s*$", r[0]) for r in rows if r and "</a>" in r[0]]
        got = [int(m.group(2)) for m in nums if m]
        if got and got != list(range(1, len(got) + 1)):
            errs.append(f"{label}: {heading}: row numbers {got[:8]} are not 1..{len(got)}")
        m = re.match(r"^#+ (?:Stage|Kernels|Overlap opportunities|Fusion opportunities): (.*?)"
                     r"(?: \(shares of [^)]*\))?$", heading)
        if m:
            stage = m.group(1)
        if "Kernel" not in head:
            continue
        k = head.index("Kernel")
        seen = {}
        for r in rows:
            if len(r) != len(head):
                errs.append(f"{label}: {heading}: row with {len(r)} cells, header {len(head)}")
                continue
            name = name_of(r[k])
            if len(name) > max_chars:
                errs.append(f"{label}: {heading}: Kernel cell of {len(name)} characters")
            if name in seen:
                errs.append(f"{label}: {heading}: two rows show the name {name[:60]!r}")
            seen[name] = True
            for c, v in zip(head, r):
                if re.search(r"\((ms|us)\)$", c) and v in ("0.00", "-0.00"):
                    errs.append(f"{label}: {heading}: {c} cell reads 0.00")
            if "Share" in head:
                s = r[head.index("Share")]
                prev = shares.setdefault((stage, name), s)
                if prev != s:
                    errs.append(f"{label}: {stage}: {name[:60]!r} has share {prev} and {s}")
    return errs


PINS = ["sglang_qwen3_8b_decode_mi300x.json.gz", "vllm_gptoss_decode_fullgraph_amd.json.gz",
        "hta_alexnet_a100.json.gz"]
SKIP = 77


def run(triage, cwd, args):
    p = subprocess.run([triage, "--quiet"] + args, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace")
    return p.stdout.decode(errors="replace"), None


def cases_of(a, shared):
    cases = [(a.source, "tests/data/llama_tp2")]
    real = os.path.join(shared, "traces", "real")
    if os.path.isdir(real):
        for f in sorted(os.listdir(real)):
            if ".json" in f:
                cases.append((shared, os.path.join("traces", "real", f)))
    return cases


def pins(a, shared):
    if not os.path.isdir(os.path.join(shared, "traces", "real")):
        print("shared tree absent: skipped")
        return SKIP
    bad = 0
    for name in PINS:
        text, err = run(a.triage, shared, [os.path.join("traces", "real", name)])
        want_path = os.path.join(a.source, "tests", "golden", "expected", "layout",
                                 name.split(".json")[0] + ".md")
        if text is None:
            print(f"{name}: triage failed: {err.strip()}")
            bad += 1
            continue
        if a.regenerate:
            with open(want_path, "w", encoding="utf-8") as fh:
                fh.write(text)
            continue
        with open(want_path, encoding="utf-8") as fh:
            want = fh.read()
        if text != want:
            got, exp = text.splitlines(), want.splitlines()
            n = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]),
                     min(len(got), len(exp)))
            print(f"{name}: line {n + 1} differs from {want_path}")
            bad += 1
    print(f"{len(PINS)} pinned reports, {bad} differ")
    return 1 if bad else 0


def commonmark(a, shared):
    script = os.path.join(a.source, "tests", "golden", "commonmark_check.js")
    mod = os.path.join(a.source, "tools", "node_modules", "markdown-it")
    if not shutil.which("node") or not os.path.isdir(mod):
        print("node or markdown-it absent (tools/check-rule-schema.sh installs it): skipped")
        return SKIP
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for cwd, path in cases_of(a, shared):
            text, err = run(a.triage, cwd, [path])
            if text is None:
                print(f"{path}: triage failed: {err.strip()}")
                bad += 1
                continue
            md = os.path.join(tmp, "report.md")
            with open(md, "w", encoding="utf-8") as fh:
                fh.write(text)
            p = subprocess.run(["node", script, md], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if p.returncode != 0:
                print(f"{path}: {p.stdout.decode(errors='replace').strip()}")
                bad += 1
    print(f"commonmark: {bad} reports with problems")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", nargs="?", default="checks", choices=["checks", "pins", "commonmark"])
    ap.add_argument("--triage", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--shared")
    ap.add_argument("--max-kernel-chars", type=int, default=120)
    ap.add_argument("--regenerate", action="store_true")
    a = ap.parse_args()
    a.triage = os.path.abspath(a.triage)
    a.source = os.path.abspath(a.source)
    shared = os.path.abspath(a.shared or os.path.join(a.source, "..", "shared"))
    if a.mode == "pins":
        return pins(a, shared)
    if a.mode == "commonmark":
        return commonmark(a, shared)
    cases = cases_of(a, shared)
    errs = []
    for cwd, path in cases:
        text, err = run(a.triage, cwd, [path])
        if text is None:
            errs.append(f"{path}: triage failed: {err.strip()}")
            continue
        errs += check(text, path, a.max_kernel_chars)
    for e in errs:
        print(e)
    print(f"{len(cases)} reports checked, {len(errs)} problems")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
