#!/usr/bin/env python3
"""run_ranks.py MODE TRIAGE SOURCE - checks the Ranks section against generator manifests.

fixtures:  tests/data/ranks/*/ (committed; tests/data/README.md states what each must show).
generated: rank sets written now by tools/make-rank-set.py into a temporary directory,
           one per framework (so every file-name form is read), slowdowns 5 % and 10 %,
           and one with MoE expert imbalance on a hot rank.

For every set: the framework detected is the manifest's; the Ranks section lists every rank (the API-server trace is none), the
tables are the lowest rank's, each TP group's least-waiting rank is the manifest's
least_wait_rank and is called a straggler exactly when the manifest's lost share of the
step is at least 0.5 %, the per-rank collective waits match the manifest's within 10 %
(or 3 us), the lost share matches within a third, and where the steps are known (stage
annotations) their count and the loss per step match. The same directory with
--rank N gives rank N's tables and no Ranks section, and `triage merge` of the one-rank
JSON reports of every rank gives the same Ranks section as the direct run (JSON, and
Markdown under its own '# Triage ranks' title, tables stating their units).
workers:   an 8-rank set and every rank fixture read with TRIAGE_WORKERS=1 (one reader, the
           serial path) and =2 give byte-identical Markdown and JSON; a TRIAGE_WORKERS
           outside 1..256 (AN_MAX_WORKERS) or not a number is a usage error (exit 2).
"""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)


def run(triage, args):
    out = subprocess.run([triage, "--quiet", "--format", "json", *args], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        FAILS.append(f"{args}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return json.loads(out.stdout)


def near(a, b, rel, floor):
    return abs(a - b) <= max(floor, rel * abs(b))


def check_group(name, section, g):
    rows = {r["rank"]: r for r in section["rows"]}
    want_ranks = sorted(g["ranks"])
    found = [x for x in section["groups"] if sorted(x["ranks"]) == want_ranks]
    check(len(found) == 1, f"{name}: group {want_ranks} not in {[x['ranks'] for x in section['groups']]}")
    if not found:
        return
    got = found[0]
    share = sum(g["lost_share_of_step"]) / len(g["lost_share_of_step"]) * 100
    check(got["straggler"] == g["least_wait_rank"],
          f"{name}: group {want_ranks} waits for {got['straggler']}, manifest {g['least_wait_rank']}")
    check(got["has_straggler"] == (share >= 0.5),
          f"{name}: group {want_ranks} verdict {got['has_straggler']} with lost share {share:.2f}%")
    check(near(got["lost_share_pct"], share, 1 / 3, 0.1),
          f"{name}: group {want_ranks} lost share {got['lost_share_pct']} vs manifest {share:.3f}")
    per_step = g["lost_gpu_us_per_step"]
    if got["steps"]:  # steps known when the trace's step annotations name a stage
        check(got["steps"] == len(per_step), f"{name}: {got['steps']} steps, manifest {len(per_step)}")
        check(near(got["lost_per_step_us"], sum(per_step) / len(per_step), 0.10, 3.0),
              f"{name}: lost per step {got['lost_per_step_us']} vs manifest {per_step}")
    for r, w in g["collective_wait_us"].items():
        check(near(rows[int(r)]["wait_us"], w, 0.10, 3.0),
              f"{name}: rank {r} waits {rows[int(r)]['wait_us']} us, manifest {w}")


def check_set(triage, name, directory, manifest):
    rep = run(triage, [directory])
    if rep is None:
        return
    n = manifest["ranks"]
    # the framework of the files, detected by the packs' hints (a vllm:: kernel namespace
    # under SGLang on ROCm is no vLLM hint)
    check(rep["framework_id"] == manifest["framework"],
          f"{name}: framework {rep['framework_id']}, want {manifest['framework']}")
    check(len(rep["ranks"]) >= 1, f"{name}: no Ranks section")
    if not rep["ranks"]:
        return
    for section in rep["ranks"]:
        check([r["rank"] for r in section["rows"]] == list(range(n)),
              f"{name}: ranks listed {[r['rank'] for r in section['rows']]}")
        check(all("async_llm" not in r["path"] for r in section["rows"]),
              f"{name}: the API-server trace is listed as a rank")
    first = os.path.join(directory, manifest["files"]["0"])
    check(rep["inputs"]["formal"][0] == os.path.normpath(first),
          f"{name}: tables from {rep['inputs']['formal']}, want rank 0 {first}")
    for g in manifest["groups"]:
        check_group(name, rep["ranks"][0], g)
    if manifest["framework"] != "trtllm":  # TRT-LLM records no step annotation
        check(all(g["steps"] for g in rep["ranks"][0]["groups"]),
              f"{name}: steps unknown (matcher step_annotation found none)")
    check_merge(triage, name, directory, n, rep)
    last = n - 1
    one = run(triage, ["--rank", str(last), directory])
    if one is not None:
        check(one["ranks"] == [], f"{name}: --rank {last} still lists ranks")
        want = os.path.normpath(os.path.join(directory, manifest["files"][str(last)]))
        check(one["inputs"]["formal"][0] == want,
              f"{name}: --rank {last} tables from {one['inputs']['formal']}, want {want}")


def check_merge(triage, name, directory, n, rep):
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for r in range(n):
            f = os.path.join(tmp, "rank%d.json" % r)
            p = subprocess.run([triage, "--quiet", "--format", "json", "--output", f, "--rank", str(r),
                                directory], capture_output=True, text=True, check=False)
            check(p.returncode == 0, f"{name}: --rank {r}: {p.stderr.strip()}")
            files.append(f)
        p = subprocess.run([triage, "merge", "--format", "json", *reversed(files)],
                           capture_output=True, text=True, check=False)
        check(p.returncode == 0, f"{name}: merge: {p.stderr.strip()}")
        if p.returncode == 0:
            check(json.loads(p.stdout)["ranks"] == rep["ranks"], f"{name}: merge differs from the direct run")
        # Markdown: its own title, then the same Ranks section as the direct run's report
        md = subprocess.run([triage, "merge", *files], capture_output=True, text=True, check=False)
        direct = subprocess.run([triage, "--quiet", directory], capture_output=True, text=True,
                                check=False)
        section = direct.stdout[direct.stdout.find("\n## Ranks:"):direct.stdout.find("\n## Legend")]
        check(md.stdout.startswith("# Triage ranks\n"), f"{name}: merge Markdown lacks its title")
        check(section and md.stdout.rstrip("\n").endswith(section.rstrip("\n")),
              f"{name}: merge Markdown differs from the direct run's Ranks section")
        check("| GPU busy (ms) |" in section and "(ms) |" in md.stdout.split("### Stragglers")[-1],
              f"{name}: Ranks tables do not state their units")
        p = subprocess.run([triage, "merge", files[0], files[0]], capture_output=True, text=True, check=False)
        check(p.returncode == 1 and "given twice" in p.stderr, f"{name}: duplicate rank: {p.stderr!r}")


def fixtures(triage, source):
    base = os.path.join(source, "tests", "data", "ranks")
    for entry in sorted(os.listdir(base)):
        d = os.path.join(base, entry)
        if os.path.isdir(d):
            with open(d + ".manifest.json", encoding="utf-8") as f:
                check_set(triage, entry, d, json.load(f))


GENERATED = [
    # (name, make-rank-set.py arguments)
    ("sglang-slow1-5pct", ["--framework", "sglang", "--slow-rank", "1", "--slowdown", "0.05"]),
    ("vllm-slow3-5pct", ["--framework", "vllm", "--slow-rank", "3", "--slowdown", "0.05"]),
    ("trtllm-slow2-5pct", ["--framework", "trtllm", "--slow-rank", "2", "--slowdown", "0.05"]),
    ("tokenspeed-slow0-10pct", ["--framework", "tokenspeed", "--slow-rank", "0", "--slowdown", "0.10"]),
    ("sglang-balanced", ["--framework", "sglang", "--slowdown", "0"]),
]


def generated(triage, source):
    gen = os.path.join(source, "tools", "make-rank-set.py")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, args) in enumerate(GENERATED):
            out = os.path.join(tmp, name)
            cmd = [sys.executable, gen, "--out", out, "--ranks", "4", "--stage", "decode",
                   "--layers", "4", "--decode-steps", "3", "--seed", str(100 + i), *args]
            subprocess.run(cmd, check=True, capture_output=True)
            with open(out + ".manifest.json", encoding="utf-8") as f:
                check_set(triage, name, out, json.load(f))
        moe = os.path.join(tmp, "moe")
        subprocess.run([sys.executable, gen, "--out", moe, "--framework", "sglang", "--ranks", "4",
                        "--stage", "decode", "--layers", "4", "--decode-steps", "3", "--seed", "7",
                        "--moe-imbalance", "0.5", "--moe-hot-rank", "2"],
                       check=True, capture_output=True)
        rep = run(triage, [moe])
        if rep is not None and rep["ranks"]:
            rows = rep["ranks"][0]["imbalance"]
            check(rows and all(r["max_rank"] == 2 for r in rows),
                  f"moe: imbalance rows {[(r['kernel'], r['max_rank']) for r in rows]}, want hot rank 2")


def with_workers(triage, workers, args):
    env = dict(os.environ, TRIAGE_WORKERS=workers)
    return subprocess.run([triage, "--quiet", *args], capture_output=True, env=env, check=False)


def workers(triage, source):
    base = os.path.join(source, "tests", "data", "ranks")
    with tempfile.TemporaryDirectory() as tmp:
        gen = os.path.join(source, "tools", "make-rank-set.py")
        eight = os.path.join(tmp, "eight")
        subprocess.run([sys.executable, gen, "--out", eight, "--framework", "vllm", "--ranks", "8",
                        "--dp", "2", "--nodes", "2", "--stage", "decode", "--layers", "4",
                        "--decode-steps", "3", "--seed", "21", "--slow-rank", "5",
                        "--slowdown", "0.05"], check=True, capture_output=True)
        dirs = [eight] + [os.path.join(base, e) for e in sorted(os.listdir(base))
                          if os.path.isdir(os.path.join(base, e))]
        for d in dirs:
            for fmt in ("markdown", "json"):
                one = with_workers(triage, "1", ["--format", fmt, d])
                two = with_workers(triage, "2", ["--format", fmt, d])
                check(one.returncode == 0 and two.returncode == 0,
                      f"{d} {fmt}: exit {one.returncode}/{two.returncode}: {two.stderr!r}")
                check(one.stdout == two.stdout, f"{d} {fmt}: TRIAGE_WORKERS=1 and =2 differ")
        # the trace readers of one run: a prefill + decode profile (two files of one side)
        # and a mapping + formal pair (two sides) read at once give what one reader gives
        syn = os.path.join(source, "tests", "data", "traces", "synthetic")
        for args in ([os.path.join(syn, "staged")],
                     ["--mapping-input", os.path.join(syn, "mapping"),
                      "--formal-input", os.path.join(syn, "staged")]):
            for fmt in ("markdown", "json"):
                one = with_workers(triage, "1", ["--format", fmt, *args])
                two = with_workers(triage, "2", ["--format", fmt, *args])
                check(one.returncode == 0 and two.stdout == one.stdout,
                      f"{args} {fmt}: one and two trace readers differ ({two.stderr!r})")
        for bad in ("0", "257", "two", "-1", "1x"):
            p = with_workers(triage, bad, [eight])
            check(p.returncode == 2 and b"TRIAGE_WORKERS" in p.stderr,
                  f"TRIAGE_WORKERS={bad}: exit {p.returncode}, {p.stderr!r}")
        p = with_workers(triage, "256", [eight])
        check(p.returncode == 0, f"TRIAGE_WORKERS=256: exit {p.returncode}, {p.stderr!r}")


def main():
    mode, triage, source = sys.argv[1:4]
    {"fixtures": fixtures, "generated": generated, "workers": workers}[mode](triage, source)
    for f in FAILS:
        print("FAIL", f)
    print("FAIL" if FAILS else "PASS", f"{len(FAILS)} problems")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
