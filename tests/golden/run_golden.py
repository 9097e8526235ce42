#!/usr/bin/env python3
"""Golden end-to-end checks for triage (stdlib only).

usage: run_golden.py sample  --triage BIN --source DIR
       run_golden.py shared  --triage BIN --source DIR [--shared DIR] [--min-agreement PCT]
       run_golden.py schema  --triage BIN --source DIR

sample: triage on tests/data/llama_tp2 must equal tests/golden/expected/llama_tp2.md
        byte for byte (regenerate deliberately: see tests/golden/README.md).
shared: when the shared reference tree exists (default: ../shared next to the repo),
        every real trace and synthetic case (single and pair) must exit 0 with the
        default packs, and its kernel rows (stage, name, GPU time, launches; hidden rows
        included, from --format json) must equal those of the --compat reference run,
        except cuda_sync records (not kernels by default, deviation C9). Exit 77 (skip)
        when the shared tree is absent.
compat: `triage --compat reference` on every real trace (single and mapping = formal = the
        trace) and the synthetic fixtures (single, staged, staged --kernel-table-limit 4,
        the vLLM decode file, xpu, the single pair and the mapping/formal pair) must agree
        with ../shared/expected/{single,pair} cell for cell in every section (Kernel,
        Overlap, Fuse) of compare_reports.py, 100%, except the cells listed in
        tests/golden/compat-exceptions.tsv (deviations the compat pack cannot express,
        each documented in docs/deviations.md); a case with no differing cell at all must
        equal its expected report byte for byte. Exit 77 when the shared tree is absent.
schema: the --format json report of the sample validates against
        schemas/report.schema.json, and `triage diff --format json` of
        tests/data/diff/generated against schemas/diff.schema.json, with
        tools/node_modules/.bin/ajv (installed by
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


SYNC_RECORDS = ("Context Sync", "Stream Sync", "Event Sync", "Stream Wait Event")


def json_rows(triage, argv, cwd, compat):
    """{(stage, name): (total_us, launches)} of every kernel row, or None on failure."""
    extra = ["--compat", "reference"] if compat else []
    out = run([triage, "--quiet", "--format", "json"] + extra + argv, cwd)
    if out.returncode != 0:
        return None, out.stderr.decode(errors="replace").strip()
    import json
    rep = json.loads(out.stdout)
    rows = {}
    for st in rep.get("stages", []):
        for k in st.get("kernels", []):
            rows[(st["stage"], ref_mask(k["name"]))] = (k["total_us"], k["launches"])
    return rows, ""


def ref_mask(name):
    """The reference's every-hex mask (2.5): the default packs mask only addresses
    (deviation A5), so names are compared under the reference's mask; a row that the
    narrower mask splits would still show up as a difference in rows."""
    return re.sub(r"0x(?!ADDR)[0-9a-fA-F]+", "0xADDR", name)


def shared(args):
    """Default packs: every case exits 0 and its kernel rows keep the reference numbers.

    The reference numbers are those of the --compat reference run (which golden/compat
    pins against ../shared/expected cell for cell). The default run must have exactly the
    same rows with the same GPU time and launches, except the GPU-timeline records the
    packs do not count as kernels (matcher not_a_kernel: cuda_sync records, deviation C9).
    """
    root = args.shared or os.path.join(os.path.dirname(os.path.abspath(args.source)), "shared")
    if not os.path.isdir(os.path.join(root, "expected", "single")):
        print(f"SKIP: no shared reference tree at {root}")
        return SKIP
    failures = 0
    for mode, name, argv in compat_cases(root):
        ref, err = json_rows(args.triage, argv, root, True)
        got, err2 = json_rows(args.triage, argv, root, False)
        if ref is None or got is None:
            print(f"FAIL {mode}/{name}: {err or err2}")
            failures += 1
            continue
        want = {k: v for k, v in ref.items() if k[1] not in SYNC_RECORDS}
        if got != want:
            failures += 1
            missing = sorted(set(want) - set(got))[:3]
            extra = sorted(set(got) - set(want))[:3]
            changed = [k for k in want if k in got and want[k] != got[k]][:3]
            print(f"FAIL {mode}/{name}: kernel rows differ from the reference numbers: "
                  f"missing {missing} extra {extra} changed {changed}")
            continue
        dropped = len(ref) - len(want)
        print(f"ok   {mode}/{name}: {len(got)} rows" + (f" ({dropped} sync records dropped)" if dropped else ""))
    return 1 if failures else 0


PAIR_CASES = [
    ("synthetic-single", ["--mapping-input", "traces/synthetic/single/llama_tp2.trace.json",
                          "--formal-input", "traces/synthetic/single/llama_tp2.trace.json"]),
    ("synthetic-mapping-formal", ["--mapping-input", "traces/synthetic/mapping/eager.trace.json",
                                  "--formal-input", "traces/synthetic/formal/graph.trace.json"]),
]


def compat_cases(root):
    """(mode, name, argv) of every compat comparison."""
    cases = []
    real = os.path.join(root, "traces", "real")
    for name in sorted(os.listdir(real)):
        stem = re.sub(r"\.json(\.gz)?$", "", name)
        if stem == name:
            continue
        path = os.path.join("traces/real", name)
        cases.append(("single", stem, [path]))
        cases.append(("pair", stem, ["--mapping-input", path, "--formal-input", path]))
    cases += [("single", n, a) for n, a in CASES]
    cases += [("pair", n, a) for n, a in PAIR_CASES]
    return cases


def load_exceptions(path):
    """{(mode, case, section/stage, key, column)} of expected differences."""
    out = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            out.add(tuple(cols[:5]))
    return out


def differing_cells(expected, actual):
    """[(section/stage, key, column, want, got)] and the compared-cell count."""
    sys.path.insert(0, os.path.dirname(expected["tool"]))
    import compare_reports  # noqa: E402  (../shared/tools, stdlib only)
    want, got = compare_reports.parse(expected["path"]), compare_reports.parse(actual)
    diffs, cells = [], 0
    for table in sorted(set(want) | set(got)):
        w, g = want.get(table, {}), got.get(table, {})
        where = f"{table[0]}/{table[1]}"
        for key in list(w) + [k for k in g if k not in w]:
            if key not in w or key not in g:
                diffs.append((where, key, "<row>", "present" if key in w else "absent",
                              "present" if key in g else "absent"))
                continue
            for col in w[key]:
                cells += 1
                if w[key].get(col) != g[key].get(col):
                    diffs.append((where, key, col, w[key].get(col), g[key].get(col)))
    return diffs, cells


def first_differing_line(path, got):
    """"line N: expected ... got ..." where the report's bytes first leave the file's; None."""
    with open(path, "rb") as fh:
        want = fh.read()
    if want == got:
        return None
    w, g = want.split(b"\n"), got.split(b"\n")
    for i in range(max(len(w), len(g))):
        a = w[i] if i < len(w) else b"<end>"
        b = g[i] if i < len(g) else b"<end>"
        if a != b:
            return f"line {i + 1}: expected {a[:80]!r} got {b[:80]!r}"
    return "the end of the file"


def compat(args):
    root = args.shared or os.path.join(os.path.dirname(os.path.abspath(args.source)), "shared")
    if not os.path.isdir(os.path.join(root, "expected", "single")):
        print(f"SKIP: no shared reference tree at {root}")
        return SKIP
    allowed = load_exceptions(os.path.join(args.source, "tests", "golden", "compat-exceptions.tsv"))
    used, failures, cells, cases = set(), 0, 0, 0
    tmp = tempfile.mkdtemp(prefix="triage-compat-")
    try:
        for mode, name, argv in compat_cases(root):
            cases += 1
            out = run([args.triage, "--quiet", "--compat", "reference"] + argv, root)
            if out.returncode != 0:
                print(f"FAIL {mode}/{name}: exit {out.returncode}: {out.stderr.decode(errors='replace').strip()}")
                failures += 1
                continue
            actual = os.path.join(tmp, f"{mode}-{name}.md")
            with open(actual, "wb") as fh:
                fh.write(out.stdout)
            expected = {"path": os.path.join(root, "expected", mode, name + ".md"),
                        "tool": os.path.join(root, "tools", "compare_reports.py")}
            diffs, n = differing_cells(expected, actual)
            cells += n
            bad = []
            for where, key, col, want, got in diffs:
                ident = (mode, name, where, key[:60], col)
                if ident in allowed:
                    used.add(ident)
                else:
                    bad.append(f"  {where} | {key[:80]} | {col}: expected {want!r} got {got!r}")
            if bad:
                failures += 1
                print(f"FAIL {mode}/{name}: {len(bad)} cells differ from the reference")
                print("\n".join(bad[:20]))
            elif not diffs:  # no cell differs, not even a documented one: the bytes agree too
                line = first_differing_line(expected["path"], out.stdout)
                if line:
                    failures += 1
                    print(f"FAIL {mode}/{name}: the cells agree but the bytes differ at {line}")
        for ident in sorted(allowed - used):
            print(f"FAIL stale exception (the cell now agrees; remove it): {ident}")
            failures += 1
        print(f"{'ok  ' if not failures else 'FAIL'} {cases} cases, {cells} cells compared, "
              f"{len(used)} documented exceptions")
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
        # triage diff's document against schemas/diff.schema.json (the generated pair: a
        # slower, a new and a removed kernel; two rank fixtures: the ranks rows)
        pairs = [[os.path.join("tests", "data", "diff", "generated", s) for s in ("before", "after")],
                 [os.path.join("tests", "data", "ranks", s)
                  for s in ("sglang-decode-slow2-tp4", "sglang-decode-first-wait-tp4")]]
        for i, pair in enumerate(pairs):
            out = run([args.triage, "diff", "--format", "json", *pair], args.source)
            if out.returncode != 0:
                print(f"triage diff --format json exited {out.returncode}")
                return 1
            doc = os.path.join(tmp, f"diff{i}.json")
            with open(doc, "wb") as fh:
                fh.write(out.stdout)
            v = run([ajv, "validate", "--spec=draft2020", "--strict=false", "-s",
                     os.path.join(args.source, "schemas", "diff.schema.json"), "-d", doc], args.source)
            sys.stdout.write(v.stdout.decode(errors="replace") + v.stderr.decode(errors="replace"))
            ok = ok and v.returncode == 0
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["sample", "shared", "schema", "compat"])
    ap.add_argument("--triage", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--shared")
    args = ap.parse_args()
    args.triage = os.path.abspath(args.triage)
    args.source = os.path.abspath(args.source)
    return {"sample": sample, "shared": shared, "schema": schema, "compat": compat}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
