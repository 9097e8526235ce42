"""golden_cli.py - what the golden check scripts share: their arguments, one JSON report per
input, and the closing tally. Standard library only; imported by check_bounds.py,
check_verdicts.py and check_item_text.py (they sit beside it, so Python finds it)."""
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
