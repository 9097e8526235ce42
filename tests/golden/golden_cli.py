"""golden_cli.py - what the golden check scripts share: their arguments, their inputs, one
JSON report per input, and the closing tally. Standard library only; imported by
check_bounds.py, check_verdicts.py and check_item_text.py (they sit beside it, so Python
finds it)."""
import argparse
import json
import os
import subprocess

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def parse_args(description):
    """--triage BIN --source DIR [--shared DIR]; shared defaults to the tree beside the
    source (../shared), which a clean clone need not have."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--triage", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--shared")
    a = ap.parse_args()
    a.shared = a.shared or os.path.join(os.path.dirname(os.path.abspath(a.source)), "shared")
    return a


def listed(d, keep):
    """The entries of directory d that keep() accepts, sorted; [] when d is absent."""
    return sorted(os.path.join(d, f) for f in os.listdir(d) if keep(os.path.join(d, f))) if os.path.isdir(d) else []


def is_trace(p):
    return os.path.isfile(p) and p.endswith((".json", ".gz"))


def inputs(source, shared):
    """(path, where) of every input the invariant checks read, one list for all of them
    (check_verdicts.py read fewer than check_bounds.py, brief ranks 13): the fixtures under
    tests/data (each must be there: a clean clone has them) and, when the shared tree
    exists, its traces (each must be there too). A directory entry is a run directory; a
    file a trace."""
    data = os.path.join(source, "tests", "data")
    fixed = [os.path.join(data, "llama_tp2"), os.path.join(data, "escape", "hostile.trace.json"),
             os.path.join(data, "diff", "generated", "before"), os.path.join(data, "diff", "generated", "after")]
    fixed += listed(os.path.join(data, "stages"), os.path.isdir)
    fixed += listed(os.path.join(data, "roofline"), lambda p: p.endswith(".json.gz"))
    fixed += listed(os.path.join(data, "traces", "real"), is_trace)
    for sub in ("formal", "mapping", "staged"):  # the run directory, and each trace in it alone
        d = os.path.join(data, "traces", "synthetic", sub)
        fixed += [d] + listed(d, lambda p: os.path.basename(p) != "server_args.json")
    fixed += listed(os.path.join(data, "ranks"), os.path.isdir)
    out = [(p, "fixture") for p in fixed]
    if shared and os.path.isdir(shared):
        t = os.path.join(shared, "traces")
        more = listed(os.path.join(t, "real"), is_trace)
        more += listed(os.path.join(t, "multi-rank"), os.path.isdir)
        more += [os.path.join(t, "diff", "hta_control_vs_test", f) for f in ("control.json.gz", "test.json.gz")]
        more += [os.path.join(t, "synthetic", d) for d in ("single", "xpu", "formal", "mapping", "staged")]
        out += [(p, "shared") for p in more]
    return out


def present(source, shared, fail):
    """(path, label) of each input of inputs() that is there (label: its path from the
    source tree); fail() says which are missing, so every check reads them alike."""
    out = []
    for path, where in inputs(source, shared):
        label = os.path.relpath(path, source)
        if os.path.exists(path):
            out.append((path, label))
        else:
            fail(f"{label}: the {where} input is missing")
    return out


def run_report(triage, path, label, fail, *args):
    """triage's report on path (stdout text), or None after fail() says why."""
    p = subprocess.run([triage, "--quiet", *args, path], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        fail(f"{label}: triage exited {p.returncode}: {p.stderr.strip()[:200]}")
        return None
    return p.stdout


def json_report(triage, path, label, fail, *args):
    """The JSON report on path as a dict, or None after fail() says why."""
    out = run_report(triage, path, label, fail, "--format", "json", *args)
    if out is None:
        return None
    try:
        return json.loads(out)
    except ValueError as e:
        fail(f"{label}: the JSON report does not parse ({e})")
        return None


def finish(checked, failures):
    """Prints the failures and the tally; the exit status: 1 on a failure (also when no
    report could be read), else SKIP when there was no input, else 0."""
    for f in failures:
        print("FAIL", f)
    print(f"{checked} reports, {len(failures)} failures")
    if failures:
        return 1
    if not checked:
        print("SKIP: no input")
        return SKIP
    return 0
