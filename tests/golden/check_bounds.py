#!/usr/bin/env python3
"""check_bounds.py - every "What to try first" item stays within the time its basis names,
and every time account sums exactly (issue 28).

usage: check_bounds.py --triage BIN --source DIR [--shared DIR]

Runs `triage --format json --quiet` on every input of golden_cli.inputs (the fixtures
under tests/data: the sample, the staged and ranked directories, the synthetic traces, the
roofline traces, the generated diff pair, the escaping trace; and, when ../shared exists,
its real, multi-rank, diff (hta_control_vs_test) and synthetic traces): an input that is
missing, that triage does not read (non-zero exit) or whose report does not parse is a
failure, never a silent skip.
It checks from the JSON report alone:
- per stage and per step: span = busy + idle exactly (to the nanosecond the report
  prints), the idle kinds and (stage) the idle causes sum to the idle time;
- steps never overlap (per trace, by GPU window), and over a stage the steps' spans sum to
  at most the trace window's span, their idle to at most what their busy time leaves of
  it (no time counted twice);
- per item: bound <= its basis time <= the step, and the basis time is at most what the
  report's own rows give for it, per step:
    idle      <= the idle of the cause it links to; a host-overhead lead (kind host,
                 review 21 defect 10): <= the host span per step, its bound at most that
                 less the GPU span;
    wait      <= the stage's collective time, and the bound <= the collectives' wait, or
                 on a directory <= what one rank of the tables' rank's group loses per step
                 to late arrivals (its Ranks section: a straggler or spread verdict, the
                 group named or every rank of the run read), and where the group's cause
                 is work imbalance <= the straggler's excess over an even share too (its
                 excess families, each its straggler's time less its peers' over the
                 steps, x (ranks - 1) / ranks: what rebalancing moves);
    chain     <= the summed in-step time of its kernels;
    folded    == the summed in-step time of its kernels (two at least), and the bound at
                 most that less the largest one (which the fused kernel still spends);
    roofline, exposed <= the in-step time of its kernel (its rows' per_step_us, the Per
                 step column, which must be steps_us over the counted steps); an overlap
                 item on a collective's row split by launch context quotes that context's
                 time per step, links the time-account rows it takes it from, and bounds
                 at most its transfer;
    saving    <= the stage kernel time of its kernels;
    blocked   <= the stage's host_block calls' time per step, its bound at most the GPU
                 idle inside them (review 18 defect 8);
- per item, its figures are the sum of exactly the rows it links (issue 28, review 3 defect
  5): an idle item's bound, basis and gap count equal the summed parts ("all", "long":
  gaps of timeline.long_gap_us, "short": the rest) of the idle causes in its "rows"; a
  wait item's basis and instance count equal its collectives' sums, its bound at most
  their wait or the rank loss the Ranks section measured, and never more than a loss it
  quotes; a chain's basis and count are its kernels' sums; no two items of a stage take
  the same part of a row;
- one item per root cause: no kernel in two items of a stage (a wait item's collectives
  aside); a tuning item's FP8 alternative stays within its basis, and both together win
  at least the larger bound and at most their sum;
- a pooled item (summary.pool_below_pct; summary.shared_changes: a change's pool, whose members
  of unlike kinds are each checked as an item) sums its members' bounds, two at least; the
  smaller leads are checked as items too;
- every bounded item reaches summary.min_bound_us per step (review 13 defect 5: one bar
  for what is too small to be an item);
- an item "not additive" with another action on its kernels links that action's row.
Exit 0 when every check holds, 1 otherwise (each failure printed), 77 when no input.
Standard library only.
"""
import math
import os
import re
import sys

import golden_cli

EPS = 1e-3  # us: the report rounds to the nanosecond


def ns(us):
    return round(us * 1000)


def check_account(where, a, with_causes, fail):
    if ns(a["busy_us"]) + ns(a["idle_us"]) != ns(a["span_us"]):
        fail(f"{where}: busy {a['busy_us']} + idle {a['idle_us']} != span {a['span_us']}")
    kinds = sum(ns(v) for v in a["idle_by_kind_us"].values())
    if kinds != ns(a["idle_us"]):
        fail(f"{where}: idle kinds sum to {kinds / 1000} us, idle is {a['idle_us']}")
    if with_causes:
        causes = sum(ns(c["idle_us"]) for c in a["causes"])
        if causes != ns(a["idle_us"]):
            fail(f"{where}: causes sum to {causes / 1000} us, idle is {a['idle_us']}")


def per_step_rows(stage, steps):
    return {k["name"]: k for k in stage.get("kernels", [])}, max(steps, 1)


def rank_loss_each(rep, stage):
    """A directory run: what one rank of the tables' rank's group loses per step to the
    late arrivals (the Ranks section's cross-rank floor); 0 when the section says none. A
    group of only the ranks read, of a run with more, counts when its imbalance table shows
    kernels the straggler runs longest (its own compute is the cause; docs/report.md)."""
    formal = rep.get("inputs", {}).get("formal") or [None]
    for sec in rep.get("ranks", []):
        if sec["stage"] != stage:
            continue
        for row in sec["rows"]:
            if row["path"] != formal[0]:
                continue
            g = sec["groups"][row["group"]]
            partial = g["source"] == "all-ranks" and rep["limits"]["ranks_expected"] > len(g["ranks"])
            imbalance = g["verdict"] == "straggler" and (
                g.get("extra_compute_per_step_us", 0) > 0 or g.get("cause") == "imbalance") and any(
                x["group"] == row["group"] and x["max_rank"] == g["straggler"]
                for x in sec.get("imbalance", []))
            if g["verdict"] in ("straggler", "spread") and (not partial or imbalance) and len(g["ranks"]) > 1:
                return rank_bound(g, rep["limits"]["ranks_expected"] or 0)
    return 0


def rank_bound(g, world=0):
    """What one rank of the group loses per step; where the cause is work imbalance, at
    most the straggler's excess over an even share of the group's work (review 10 defect
    1: rebalancing wins no more than makes the step wait), each excess family checked
    against its own figures (a family that does not add up counts nothing). world: the
    run's ranks (limits.ranks_expected); a group of every rank read, of a run with more,
    spreads the even share over all of them (blind review 22 defect 2)."""
    n = len(g["ranks"])
    loss = g["lost_per_step_us"] / (n - 1)
    if g.get("source") == "all-ranks" and world > n:
        n = world
    if g.get("cause") != "imbalance":
        return loss
    steps = max(g.get("steps", 0), 1)
    for x in g["excess"]:
        if abs(x["per_step_us"] - (x["straggler_us"] - x["peers_us"]) / steps) > 2 * EPS:
            return 0
    total = sum(x["per_step_us"] for x in g["excess"])
    if abs(total - g["excess_per_step_us"]) > EPS * max(1, len(g["excess"])):
        return 0
    return min(loss, total * (n - 1) / n)


def basis_limit(item, stage, fail, rep=None):
    """What the report's rows give for the item's basis, per step; None: not checkable."""
    tl = stage.get("timeline") or {}
    steps = max(tl.get("steps_counted", 0), 1)
    rows = {k["name"]: k for k in stage.get("kernels", [])}
    basis = item["basis"]
    if basis == "idle" and item["kind"] == "host":  # the host-overhead lead
        host, span = tl["total"]["host_us"] / steps, tl["total"]["span_us"] / steps
        if item["bound_us_per_step"] > host - span + EPS:
            fail(f"{item['anchor']}: bound over the host span above the GPU span")
        return host
    if basis == "idle":
        causes = tl["total"]["causes"]
        rows = {int(r["row"].rsplit("-", 1)[1]) for r in item.get("rows", [])}
        rows = rows or {int(item["anchor"].rsplit("-", 1)[1])}
        return sum(causes[i]["idle_us"] for i in rows) / steps
    if basis == "wait":
        wait = max(tl["total"]["collective_wait_us"] / steps, rank_loss_each(rep or {}, stage["stage"]))
        if item["bound_us_per_step"] > wait + EPS:
            fail(f"{item['anchor']}: bound over the collectives' wait")
        return tl["total"]["collective_us"] / steps
    if basis in ("chain", "roofline", "exposed", "removed", "folded", "precision", "narrowed"):  # the rows' Per step cells
        return sum(rows[k]["per_step_us"] for k in item["kernels"] if k in rows)
    if basis == "saving":
        return sum(rows[k]["total_us"] for k in item["kernels"] if k in rows)
    if basis == "blocked":  # the host in a read back: the calls' time; the idle inside bounds it
        hb = tl.get("host_block")
        if not hb:
            fail(f"{item['anchor']}: a blocked item on a stage with no host_block")
            return None
        if item["bound_us_per_step"] > hb["idle_us"] / steps + EPS:
            fail(f"{item['anchor']}: bound over the GPU idle inside the read backs")
        if hb["idle_us"] > hb["blocked_us"] + EPS:
            fail(f"{item['anchor']}: idle inside the read backs over their time")
        return hb["blocked_us"] / steps
    return None


def row_part(cause, part):
    """(idle us, gaps) of a part of an idle cause."""
    if part == "all":
        return cause["idle_us"], cause["gaps"]
    if part == "long":
        return cause["long_us"], cause["long_gaps"]
    return cause["idle_us"] - cause["long_us"], cause["gaps"] - cause["long_gaps"]


def quoted_loss(rep, stage):
    """The per-rank loss the Ranks section measured for the tables' rank's group (what a
    wait item quotes), 0 when none."""
    formal = rep.get("inputs", {}).get("formal") or [None]
    for sec in rep.get("ranks", []):
        if sec["stage"] != stage:
            continue
        for row in sec["rows"]:
            if row["path"] == formal[0]:
                g = sec["groups"][row["group"]]
                if g["verdict"] in ("straggler", "spread") and len(g["ranks"]) > 1:
                    return rank_bound(g, rep.get("limits", {}).get("ranks_expected") or 0)
    return 0


def check_rows(where, item, stage, rep, fail, claimed):
    """The item's figures are the sums of the rows it links; no part of a row twice."""
    tl = stage.get("timeline") or {}
    steps = max(tl.get("steps_counted", 0), 1)
    rows = item.get("rows", [])
    kind = item["kind"]
    if kind in ("idle", "wait") and not rows:
        fail(f"{where}: a {kind} item links no time-account row")
        return
    for r in rows:
        key = r["row"]
        parts = claimed.setdefault(key, set())
        clash = r["part"] in parts or "all" in parts or (r["part"] == "all" and parts)
        if clash:
            fail(f"{where}: {key} ({r['part']}) is already counted by another item")
        parts.add(r["part"])
    if kind == "idle":
        causes = tl["total"]["causes"]
        us = gaps = 0
        for r in rows:
            u, g = row_part(causes[int(r["row"].rsplit("-", 1)[1])], r["part"])
            us, gaps = us + u / steps, gaps + g
        # an unbounded idle item (a trace that lost graph-replayed work: its idle is
        # unmeasured) quotes its rows' idle as its basis and gives no bound
        names = ("basis_us_per_step",) if item["basis"] == "unbounded" else (
            "bound_us_per_step", "basis_us_per_step")
        if item["basis"] == "unbounded" and item["bound_us_per_step"] != 0:
            fail(f"{where}: an unbounded item has a bound, {item['bound_us_per_step']}")
        for name in names:
            if abs(item[name] - us) > EPS * max(1, len(rows)):
                fail(f"{where}: {name} {item[name]} != {us:.3f} us its rows sum to")
        if item["count"] != gaps:
            fail(f"{where}: count {item['count']} != {gaps} gaps its rows sum to")
    elif kind == "wait":
        colls = tl["collectives"]
        total = wait = inst = 0
        for r in rows:
            c = colls[int(r["row"].rsplit("-", 1)[1])]
            total, wait, inst = total + c["total_us"] / steps, wait + c["wait_us"] / steps, inst + c["instances"]
        if abs(item["basis_us_per_step"] - total) > EPS * len(rows):
            fail(f"{where}: basis {item['basis_us_per_step']} != {total:.3f} us its collectives sum to")
        if item["count"] != inst:
            fail(f"{where}: count {item['count']} != {inst} instances its collectives sum to")
        loss = quoted_loss(rep, stage["stage"])
        if item["bound_us_per_step"] > max(wait, loss) + EPS:
            fail(f"{where}: bound {item['bound_us_per_step']} over its collectives' wait {wait:.3f} and the rank loss")
        if loss > 0 and item["bound_us_per_step"] > loss + EPS:
            fail(f"{where}: bound {item['bound_us_per_step']} over the rank loss {loss:.3f} it quotes")
    elif item["basis"] == "folded":
        # a lever folding its kernels into one fused kernel: their sum, less the largest
        # piece, which that kernel still spends (review 9 defect 3)
        ts = [k["steps_us"] / steps for k in stage.get("kernels", []) if k["name"] in item["kernels"]]
        if len(ts) < 2 or abs(item["basis_us_per_step"] - sum(ts)) > EPS * len(ts):
            fail(f"{where}: fold basis {item['basis_us_per_step']} != {sum(ts):.3f} us its {len(ts)} kernels sum to")
        elif item["bound_us_per_step"] > sum(ts) - max(ts) + EPS * len(ts):
            fail(f"{where}: fold bound {item['bound_us_per_step']} > its kernels less the largest")
    elif item["basis"] == "narrowed":
        # a lever narrowing its kernels' dtype: their time, at most the share of bytes it
        # removes of it (bytes_kept: FP32 embedding tables in FP16)
        kept = item.get("bytes_kept")
        if kept is None or not 0 < kept < 1:
            fail(f"{where}: narrowed item without a bytes_kept share in (0, 1)")
        elif item["bound_us_per_step"] > item["basis_us_per_step"] * (1 - kept) + EPS:
            fail(f"{where}: narrowed bound {item['bound_us_per_step']} > its kernels x (1 - {kept})")
    elif item["basis"] in ("chain", "removed"):
        ks = {k["name"]: k for k in stage.get("kernels", [])}
        # a chain leaves out its kernels' launches under custom ops (opaque_steps_us)
        t = sum(ks[k]["steps_us"] - (ks[k].get("opaque_steps_us", 0) if item["basis"] == "chain" else 0)
                for k in item["kernels"]) / steps
        if abs(item["basis_us_per_step"] - t) > EPS * len(item["kernels"]):
            fail(f"{where}: chain basis {item['basis_us_per_step']} != {t:.3f} us its kernels sum to")
        if item["count"] != len(item["kernels"]):
            fail(f"{where}: chain count {item['count']} != its {len(item['kernels'])} kernels")


def clock_eps(ts):
    """What a step's end may differ from the next step's start in the report: the account
    counts integer nanoseconds of the trace's microsecond doubles, which at an epoch
    timestamp (1.66e15 us) hold a nanosecond only to 256 ns (one ulp each side)."""
    return max(EPS, 2 * math.ulp(ts * 1000) / 1000)


def check_steps(where, tl, window, fail):
    """Steps never overlap nor count time twice: per trace, each step's window ends before the
    next one's starts; over the stage, the steps' spans sum to at most the trace window's
    span (the overlap section's whole-window figures) and their idle to at most what their
    busy time leaves of it."""
    by_trace = {}
    for s in tl["steps"]:
        by_trace.setdefault(s["trace"], []).append(s)
    for steps in by_trace.values():
        steps.sort(key=lambda s: s["gpu_ts"])
        for a, b in zip(steps, steps[1:]):
            if a["gpu_ts"] + a["span_us"] > b["gpu_ts"] + clock_eps(b["gpu_ts"]):
                fail(f"{where}: step {a['name']} ({a['gpu_ts']} + {a['span_us']} us) overlaps {b['name']} ({b['gpu_ts']})")
    if window is None or len(by_trace) > 1:
        return
    span = window["gpu_busy_us"] + window["idle_us"]
    if ns(tl["total"]["span_us"]) > ns(span) + 1000:
        fail(f"{where}: steps' spans sum to {tl['total']['span_us']} us > the trace window's {span} us")
    # disjoint steps: their idle is at most the window's time their busy time leaves
    # (the overlap section's busy may union other processes' kernels, so not its idle)
    if ns(tl["total"]["idle_us"]) > ns(span - tl["total"]["busy_us"]) + 1000:
        fail(f"{where}: steps' idle sums to {tl['total']['idle_us']} us > the trace window's {span} us less their busy time")


def check_context_row(where, item, stage, fail):
    """An overlap item on a collective's row split by launch context quotes that row's own
    time per step (detail_us) and hides at most its transfer, not the whole collective's
    (review 7 defect 4: a gradient reduce's item quoted the time of every SendRecv)."""
    tl = stage.get("timeline") or {}
    steps = max(tl.get("steps_counted", 0), 1)
    rows = [(i, c) for i, c in enumerate(tl.get("collectives", []))
            if item["kind"] == "overlap" and c.get("launch_context") is not None
            and c["launch_context"] == item.get("what") and c["kernel"] in item["kernels"]]
    if not rows:
        return
    # every figure of a basis is in a row the item links (review 9: the gradient reduce's
    # item quoted its time-account row's time and linked another overlap row instead)
    stage_part = item["anchor"].split("-", 1)[1].rsplit("-", 1)[0]
    for i, _ in rows:
        if item["detail_us"] > 0 and f"wait-{stage_part}-{i}" not in item["evidence"]:
            fail(f"{where}: quotes W{i + 1}'s time but does not link it ({item['evidence']})")
    rows = [c for _, c in rows]
    total = sum(c["total_us"] for c in rows) / steps
    transfer = sum(c["transfer_us"] for c in rows) / steps
    if item["detail_us"] > 0 and abs(item["detail_us"] - total) > EPS * (len(rows) + 1):
        fail(f"{where}: quotes {item['detail_us']} us/step as its own time, its context's rows give {total:.3f}")
    if item["bound_us_per_step"] > transfer + EPS * (len(rows) + 1):
        fail(f"{where}: bound {item['bound_us_per_step']} us > its context's transfer {transfer:.3f} us/step")


def check_per_step(where, st, fail):
    """A kernel row's per_step_us (the Per step column) is its in-step time over the counted
    steps: the figure an item quotes for it."""
    steps = max((st.get("timeline") or {}).get("steps_counted", 0), 1)
    for k in st.get("kernels", []):
        if abs(k["per_step_us"] - k["steps_us"] / steps) > EPS:
            fail(f"{where}: {k['name'][:60]} per_step_us {k['per_step_us']} != steps_us {k['steps_us']} / {steps}")


def check_alternative(where, it, fail):
    """A tuning item's FP8 alternative (one item per kernel set, issue 28): its bound within
    its basis, its kernels among the item's, and what both win together at least the larger
    of the two bounds and at most their sum."""
    alt = it.get("alternative")
    if not alt:
        return
    if alt["bound_us_per_step"] > alt["basis_us_per_step"] + EPS:
        fail(f"{where}: alternative bound {alt['bound_us_per_step']} us > its basis {alt['basis_us_per_step']} us")
    if alt["kernels"] > len(it["kernels"]):
        fail(f"{where}: alternative on {alt['kernels']} kernels, the item names {len(it['kernels'])}")
    bounds = [it["bound_us_per_step"], alt["bound_us_per_step"]]
    x = alt["together_us_per_step"]
    if x > sum(bounds) + EPS or x < max(bounds) - EPS:
        fail(f"{where}: together {x} us not between the larger bound {max(bounds)} and their sum {sum(bounds):.3f}")


def check_pool(where, it, fail):
    """A pooled item (review 12 defect 8) is the sum of two members at least, each under
    its bound and each an item of its own stage's anchors."""
    pool = it.get("pooled") or []
    if not pool:
        return
    if len(pool) < 2:
        fail(f"{where}: a pool of {len(pool)} member")
    total = sum(m["bound_us_per_step"] for m in pool)
    if abs(total - it["bound_us_per_step"]) > EPS * len(pool):
        fail(f"{where}: pooled bound {it['bound_us_per_step']} us, its members sum to {total:.3f}")
    if pool[0]["anchor"] != it["anchor"]:
        fail(f"{where}: its first member is {pool[0]['anchor']}")


def check_not_additive(where, it, fail):
    """An item naming another action on its kernels as not additive (review 14) links that
    action's row and states a bound for it; the item's own kernels hold the root cause."""
    na = it.get("not_additive")
    if not na:
        return
    ev = it.get("evidence") or []
    if not any(na["anchor"] == e or (isinstance(e, dict) and na["anchor"] in e.values()) for e in ev):
        fail(f"{where}: not additive with {na['anchor']}, which its evidence does not link")
    if na["bound_us_per_step"] <= 0:
        fail(f"{where}: not additive with {na['anchor']} at {na['bound_us_per_step']} us")
    # the merged action has no item of its own: its name is given (review 16 defect 6), and
    # it is another lever than the item's, never one the item carries out (a fusion is the
    # way a bandwidth-bound elementwise kernel moves fewer bytes)
    if not na.get("action") or na.get("action_id") == it.get("action_id"):
        fail(f"{where}: not additive with {na['anchor']} names no other action ({na.get('action_id')})")
    if na.get("action_id") in CARRIES_OUT.get(it.get("action_id"), ()):
        fail(f"{where}: a {it.get('action_id')} item is not additive with "
             f"{na.get('action_id')}, which it carries out (summary.carries_out)")


def check_one_item_per_kernel(label, items, fail):
    """One item per root cause (issue 28): no kernel is named by two items of a stage, but
    a wait item's collectives (its root cause is the rank the others wait for, not the
    collective that absorbs it)."""
    seen = {}
    for it in items:
        if it["kind"] == "wait":
            continue
        for k in it["kernels"]:
            o = seen.setdefault((it["stage"], k), it["anchor"])
            if o != it["anchor"]:
                fail(f"{label}: {k[:60]} in two items ({o}, {it['anchor']})")


MIN_BOUND_US = [0.0]  # summary.min_bound_us of the source's packs (main)
CARRIES_OUT = {}  # summary.carries_out of the source's packs: action id -> action ids


def carries_out(source):
    """summary.carries_out of rules/80-report.yaml, a flow mapping of lists."""
    with open(os.path.join(source, "rules", "80-report.yaml"), encoding="utf-8") as f:
        m = re.search(r"^\s+carries_out:\s*\{(.*?)\}\s*$", f.read(), re.M | re.S)
    pairs = re.findall(r"(\w+):\s*\[([^\]]*)\]", m.group(1)) if m else []
    return {k: {x.strip() for x in v.split(",") if x.strip()} for k, v in pairs}


def min_bound_us(source):
    with open(os.path.join(source, "rules", "80-report.yaml"), encoding="utf-8") as f:
        m = re.search(r"^\s+min_bound_us:\s*([0-9.]+)", f.read(), re.M)
    return float(m.group(1)) if m else 0.0


def check_transfer(where, item, windows, fail):
    """An overlap item anchored on a wait row is that row's measured transfer (review 22
    defect 9): its bound is the row's transfer_bound_ms, what the row's action hides of it,
    and it states the row's compute beside it."""
    if item["kind"] != "overlap" or "-overlap-" not in "-" + item["anchor"]:
        return
    stage_part, row = item["anchor"].split("-", 1)[1].rsplit("-", 1)
    rows = (windows.get(item["stage"]) or {}).get("rows", [])
    r = rows[int(row)] if int(row) < len(rows) else None
    if not r or r["verdict"] != "wait":
        return
    if abs(item["bound_us_per_step"] - r["transfer_bound_ms"] * 1000.0) > EPS:
        fail(f"{where}: bound {item['bound_us_per_step']} != its wait row's transfer bound {r['transfer_bound_ms'] * 1000.0:.3f} us")


def check_report(label, rep, fail):
    windows = {o["stage"]: o for o in (rep.get("overlap") or {}).get("stages", [])}
    for st in rep.get("stages", []):
        check_per_step(f"{label} {st['stage']}", st, fail)
        tl = st.get("timeline")
        if not tl:
            continue
        check_account(f"{label} {st['stage']}", tl["total"], True, fail)
        for i, s in enumerate(tl["steps"]):
            check_account(f"{label} {st['stage']} step {i}", s, False, fail)
        if rep.get("mode") != "mapping-formal":
            check_steps(f"{label} {st['stage']}", tl, windows.get(st["stage"]), fail)
    stages = {st["stage"]: st for st in rep.get("stages", [])}
    claimed = {}
    items = rep.get("summary", []) + rep.get("leads", [])  # a lead is an item all the same
    check_one_item_per_kernel(label, items, fail)
    for it in items:
        where = f"{label} {it['anchor']}"
        check_pool(where, it, fail)
        check_not_additive(where, it, fail)
        check_alternative(where, it, fail)
        check_transfer(where, it, windows, fail)
        # a change's pool (review 15 defect 4) holds members of unlike kinds (a launch-bound
        # step's idle, its eager chains' kernels): each member is checked as an item of its
        # own, the pool by its sum (check_pool)
        members = [dict(m, stage=it["stage"], step_us=it["step_us"], evidence=it["evidence"],
                        detail_us=0) for m in it.get("pooled") or []] if it.get("same_change") else [it]
        for m in members:
            check_member(label, m, stages, rep, fail, claimed)


def check_member(label, it, stages, rep, fail, claimed):
    """An item's (or a change pool member's) figures against the rows it links."""
    where = f"{label} {it['anchor']}"
    check_rows(where, it, stages[it["stage"]], rep, fail, claimed)
    check_context_row(where, it, stages[it["stage"]], fail)
    b, basis = it["bound_us_per_step"], it["basis_us_per_step"]
    if it["basis"] != "unbounded" and b < MIN_BOUND_US[0] - EPS:
        fail(f"{where}: bound {b} us under summary.min_bound_us {MIN_BOUND_US[0]}")
    if b > basis + EPS:
        fail(f"{where}: bound {b} us > basis {basis} us ({it['basis']})")
    if b > it["step_us"] + EPS:
        fail(f"{where}: bound {b} us > step {it['step_us']} us")
    limit = basis_limit(it, stages[it["stage"]], fail, rep)
    # the rows' per-step cells are each rounded to the nanosecond: a sum of n of them
    # may fall short of the item's own rounded sum by up to n half-nanoseconds
    if limit is not None and basis > limit + EPS * max(1, len(it.get("kernels", []))):
        fail(f"{where}: basis {basis} us > {limit:.3f} us the report's rows give ({it['basis']})")


def main():
    a = golden_cli.parse_args(__doc__.split("\n\n")[0])
    failures = []
    checked = 0
    MIN_BOUND_US[0] = min_bound_us(a.source)
    CARRIES_OUT.update(carries_out(a.source))
    if not CARRIES_OUT:
        failures.append("rules/80-report.yaml: no summary.carries_out read")
    for path, label in golden_cli.present(a.source, a.shared, failures.append):
        rep = golden_cli.json_report(a.triage, path, label, failures.append)
        if rep is None:
            continue
        checked += 1
        check_report(label, rep, failures.append)
    return golden_cli.finish(checked, failures)


if __name__ == "__main__":
    sys.exit(main())
