#!/usr/bin/env python3
"""Invariants of the verdicts (issue 31) on every trace we have, stdlib only.

usage: check_verdicts.py --triage BIN --source DIR [--shared DIR]

Runs `triage --format json --quiet` on every input check_bounds.py reads (golden_cli.inputs:
every fixture of tests/data, single traces and profile directories, and, when the shared
tree is present, its real, multi-rank, diff and synthetic traces; a missing one is a
failure) and checks each report:
  - no fuse row whose fused kernel runs (fused_in_use) or whose stage is over the
    pattern's size cap (state over-cap) is an item of the summary;
  - no fuse row with a gate fact unknown says Confirmed;
  - a fuse row lists every kernel its related time counts, and the shares of the ones it
    counts itself add up to its share (brief 13 defect 1);
  - every overlap row keeps Exposed + Hidden <= GPU time (the steady exposed time, its
    wait and the time hidden under other work on another stream, covered_us, partition the
    row's time: compute for a kernel, any work for a copy-engine transfer);
  - a row that asks for nothing (skip, already fused, one-time setup, a wait for other
    ranks, a wait it cannot size) has 0 recoverable time; a P1 row, and any row put
    forward (not folded under the floor) other than one-time setup, wait rows and rows a
    host-bound stage holds back (host_bound), has some (review 3);
  - the rows that hide behind compute on another stream share it: their recoverable
    times sum to at most the stage's shared compute (brief 9 defect 2);
  - no contradictory pair: "try overlap" / "check deps" only with a dependency class that
    has evidence of independence, "restructure" never with one (review 3);
  - a kernel has one category in every table of a stage (kernel table and overlap rows);
  - "try fusion" names its partner (fusion_pattern: a fuse row of the stage or the eager
    chain) and never coexists with an "independent" dependency (review-1 defects 3, 8);
  - a P4 row recovers 0, and no P1 row is "low-roi-hidden" (the priority follows the
    verdict, review-1 defect 8);
  - when the roofline costed kernels with a model it identified, the header names that
    model (review 3: the header said "qwen3" from a model file while the Limits costed
    Qwen3-8B).
Exit 0 when all hold, 1 with one line per failure, 77 when no input.
"""
import re
import sys

import golden_cli

NO_GAIN = {"skip", "already fused", "one-time setup", "rank skew (wait)",
           "pipeline bubble (wait)", "wait unknown"}
# review 3: dependency classes with dataflow evidence that the kernel is independent; any
# other class next to "try overlap" / "check deps", or these next to "restructure", is a
# contradictory pair
INDEPENDENT = {"independent", "prefetchable", "optimizer-only"}
EPS = 1e-6


# one evidence entry: "kernel (12.3%)", "kernel (4.5% of its 9.9%)", "kernel (3.0%, counted in X)"
EVIDENCE = re.compile(r"^(.*) \((?:(\d+\.\d)% of its )?(\d+\.\d)%(, counted in [^)]*)?\)$")


def evidence_failures(name, stage, f):
    """Brief 13 defect 1 (deviation F17): a fuse row lists every kernel its related time
    counts, and the listed shares of the kernels it counts itself add up to its share."""
    entries = [e for e in (f.get("evidence") or "").split("<br>") if e and e != "-"]
    related = f.get("related_kernels") or []
    if len(entries) != len(related):
        return [f"{name}: {stage} fuse row '{f['pattern']}' counts {len(related)} kernels "
                f"and lists {len(entries)}"]
    listed = 0.0
    for e in entries:
        m = EVIDENCE.match(e)
        if not m:
            return [f"{name}: {stage} fuse row '{f['pattern']}': evidence entry not understood: {e[:60]}"]
        if not m.group(4):
            listed += float(m.group(2) or m.group(3))
    if abs(listed - f["share_pct"]) > 0.05 * (len(entries) + 1):
        return [f"{name}: {stage} fuse row '{f['pattern']}' lists {listed:.1f}% of its "
                f"{f['share_pct']:.1f}%"]
    return []


def fuse_failures(name, rep):
    out = []
    actions = {(i["stage"], i["row"]) for i in rep.get("summary", []) if i["kind"] == "fusion"}
    for st in rep.get("stages", []):
        for k, f in enumerate(st.get("fuse", [])):
            state = f.get("state", "opportunity")
            if (f.get("fused_in_use") or state == "over-cap") and (st["stage"], k) in actions:
                out.append(f"{name}: {st['stage']} fuse row '{f['pattern']}' ({state}) is a summary action")
            if f.get("unknown_gates") and f.get("confidence") == "Confirmed":
                out.append(f"{name}: {st['stage']} fuse row '{f['pattern']}' has unknown gates yet says Confirmed")
            out += evidence_failures(name, st["stage"], f)
    return out


def overlap_failures(name, rep):
    out = []
    cats = {(st["stage"], k["name"]): k["category"] for st in rep.get("stages", [])
            for k in st.get("kernels", [])}
    for st in (rep.get("overlap") or {}).get("stages", []):
        sharing = 0.0
        for r in st.get("rows", []):
            exposed = (r["exposed_ms"] + r["exposed_wait_ms"]) * 1000.0
            # the table's Hidden column (covered_us): under compute, or for a copy-engine
            # transfer under any other work (brief 12 defect 1)
            hidden = r.get("covered_us", r["hidden_by_compute_us"])
            if exposed + hidden > r["total_us"] * (1 + EPS) + EPS:
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: exposed "
                           f"{exposed:.3f} + hidden {hidden:.3f} > GPU time {r['total_us']:.3f} us")
            if r["recommendation"] in NO_GAIN and r["recoverable_ms"] != 0:
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: "
                           f"'{r['recommendation']}' with {r['recoverable_ms']} ms recoverable")
            if r["recommendation"] == "try fusion" and not r.get("fusion_pattern"):
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: 'try fusion' "
                           f"with no named partner")
            if r["recommendation"] == "try fusion" and r.get("dep_class") == "independent":
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: 'independent' "
                           f"and 'try fusion'")
            if r.get("priority") == "P1" and not r["recoverable_ms"] > 0:
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: P1 with "
                           f"nothing recoverable")
            # a row the host-bound stage set to P4 (host_bound, deviation O26) is printed as
            # the evidence that the step does not wait on it, recovering 0
            if not r.get("below_floor") and not r.get("host_bound") and \
                    r["recommendation"] not in ("one-time setup", "wait unknown") and \
                    r.get("verdict") != "wait" and not r["recoverable_ms"] > 0:
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: put forward "
                           f"with nothing recoverable ({r['recommendation']})")
            dep = r.get("dep_class")
            if dep and r["recommendation"] in ("try overlap", "check deps") and dep not in INDEPENDENT:
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: '{dep}' and "
                           f"'{r['recommendation']}'")
            if dep in INDEPENDENT and r["recommendation"] == "restructure":
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: '{dep}' and "
                           f"'restructure'")
            if r.get("priority") == "P4" and r["recoverable_ms"] != 0:
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: P4 with "
                           f"{r['recoverable_ms']} ms recoverable")
            if r.get("priority") == "P1" and r.get("verdict") == "low-roi-hidden":
                out.append(f"{name}: {st['stage']} overlap row {r['kernel'][:50]}: P1 and "
                           f"low-roi-hidden")
            if r.get("compute_order"):
                sharing += r["recoverable_ms"]
            want = cats.get((st["stage"], r["kernel"]))
            if want is not None and r.get("category") != want:
                out.append(f"{name}: {st['stage']} {r['kernel'][:50]} is '{want}' in the kernel "
                           f"table, '{r.get('category')}' in the overlap table")
        if sharing > st.get("shared_compute_ms", 0.0) * (1 + EPS) + EPS:
            out.append(f"{name}: {st['stage']} rows behind compute recover {sharing:.3f} ms, "
                       f"more than the {st.get('shared_compute_ms', 0.0):.3f} ms they share")
    return out


def identity_failures(name, rep):
    m = rep.get("roofline_model") or {}
    if not (m.get("used") or m.get("attention_used")) or not m.get("label"):
        return []
    if rep.get("model") != m["label"]:
        return [f"{name}: the header names model {rep.get('model')!r}, the roofline costed "
                f"{m['label']!r}"]
    return []


def main():
    a = golden_cli.parse_args(__doc__.split("\n\n")[0])
    failures, n = [], 0
    for path, name in golden_cli.present(a.source, a.shared, failures.append):
        rep = golden_cli.json_report(a.triage, path, name, failures.append)
        if rep is None:
            continue
        failures += fuse_failures(name, rep) + overlap_failures(name, rep) + identity_failures(name, rep)
        n += 1
    return golden_cli.finish(n, failures)


if __name__ == "__main__":
    sys.exit(main())
