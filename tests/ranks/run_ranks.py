#!/usr/bin/env python3
"""run_ranks.py MODE TRIAGE SOURCE - checks the Ranks section against generator manifests.

fixtures:  tests/data/ranks/*/ (committed; tests/data/README.md states what each must show).
generated: rank sets written now by tools/make-rank-set.py into a temporary directory:
           every framework's file names, slowdowns down to 5 %, MoE imbalance, and sets
           with the structure of real profile directories (../shared/spec/real-multirank.md:
           groups of one, gloo twins, per-kernel PG args or none, vLLM V1 markers with
           empty steps, two nodes with their own clocks, the TP size in SGLang prefixes)
           holding a GPU-slow rank in one stage and a host-late rank in the other; a set
           whose late rank changes every step (spread wait, no straggler); DP 2 x TP 4
           sets whose all-reduces carry no group args (each TP group is a group, the
           replicas drifting apart or in lockstep); and a file
           named as another rank than its distributedInfo (one warning, the file's rank).
shared:    ../shared/traces/multi-rank/hta_sampled_2ranks still gives its section (skipped
           without ../shared).

For every set: the framework detected is the manifest's; every stage of the manifest
has its Ranks section listing every rank (the API-server trace is none); per stage and
TP group (manifest "stages"): the straggler is the manifest's least-waiting rank, the
step count (empty vLLM steps are no steps), the loss per step (10 % or 3 us) and its
share (a third), every rank's wait (10 % or 3 us); an injected straggler has the verdict
straggler and the injected cause (host or GPU); a host-late one's wait sits in the first
collective of the step, the manifest's worst step, with the manifest's share; without
an injected rank a loss under 0.5 % is below the bar. The same directory with --rank N
gives rank N's tables and no Ranks section, and `triage merge` of the one-rank JSON
reports of every rank gives the same Ranks section as the direct run (JSON, and Markdown
under its own '# Triage ranks' title, tables stating their units). The rest of the
report knows the ranks were read: limits count the ranks compared (none missing; the
2 of 128 of hta_sampled_2ranks), and a stage's wait item in "What to try first" names its
group's straggler and the injected cause, never "one rank cannot tell"; hta_sampled_2ranks's
loss is split by the launch-context families of its SendRecv instances (pooled embedding
exchange, DDP gradient reduce), summing to the loss per step; the instances one of its
sampled ranks lacks where the other ran them in the same step are named (rank 0 lacks the
90.8 ms pooled all-to-all backward), in the section and the Filtered trace limit, and are
no one's wait.
workers:   an 8-rank set and every rank fixture read with TRIAGE_WORKERS=1 (one reader, the
           serial path) and =2 give byte-identical Markdown and JSON; a TRIAGE_WORKERS
           outside 1..256 (AN_MAX_WORKERS) or not a number is a usage error (exit 2).
"""
import gzip
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


STAGE_ID = {"prefill": "extend", "decode": "decode"}


def find_group(name, section, ranks):
    found = [x for x in section["groups"] if sorted(x["ranks"]) == sorted(ranks)]
    check(len(found) == 1, f"{name}: group {sorted(ranks)} not in {[x['ranks'] for x in section['groups']]}")
    return found[0] if found else None


def check_stage(name, sections, st, jitter):
    """One stage expectation of the manifest (per TP group) against the report's section
    of that stage: the straggler, its verdict, cause and evidence, waits and losses.
    jitter: the set's --end-jitter-us; a rank's measured wait in an instance is within it
    of the true one (the instance's ends differ by up to that), so over the group's
    matched instances its wait is within their count times it: the resolution of a wait,
    and of which rank waits least when none was injected."""
    stage = STAGE_ID[st["stage"]]
    section = sections.get(stage)
    check(section is not None, f"{name}: no Ranks section for {stage} (have {sorted(sections)})")
    if section is None:
        return
    got = find_group(f"{name} {stage}", section, st["ranks"])
    if got is None:
        return
    label = f"{name} {stage} {st['ranks']}"
    rows = {r["rank"]: r for r in section["rows"]}
    share = sum(st["lost_share_of_step"]) / len(st["lost_share_of_step"]) * 100
    resolution = max(3.0, got["matched"] * jitter)
    least = st["collective_wait_us"][str(st["least_wait_rank"])]
    check(got["straggler"] == st["least_wait_rank"]
          or st["collective_wait_us"][str(got["straggler"])] <= least + resolution,
          f"{label}: waits for {got['straggler']}, manifest {st['least_wait_rank']}")
    check(got["steps"] == st["steps"], f"{label}: {got['steps']} steps, manifest {st['steps']}")
    check(near(got["lost_per_step_us"], sum(st["lost_gpu_us_per_step"]) / st["steps"], 0.10, 3.0),
          f"{label}: lost per step {got['lost_per_step_us']} vs manifest {st['lost_gpu_us_per_step']}")
    check(near(got["lost_step_share_pct"], share, 1 / 3, 0.1),
          f"{label}: lost share {got['lost_step_share_pct']} vs manifest {share:.3f}")
    for r, w in st["collective_wait_us"].items():
        check(near(rows[int(r)]["wait_us"], w, 0.10, resolution),
              f"{label}: rank {r} waits {rows[int(r)]['wait_us']} us, manifest {w}")
    check_wait_item(label, rep_summary(sections), stage, got, 0 in st["ranks"])
    if st["cause"] is None:
        if share < 0.5:
            check(got["verdict"] == "below-bar", f"{label}: verdict {got['verdict']} with share {share:.2f}%")
        return
    check(got["verdict"] == "straggler", f"{label}: verdict {got['verdict']}, a straggler was injected")
    check(got["cause"] == st["cause"], f"{label}: cause {got['cause']}, injected {st['cause']}")
    if st["cause"] == "host":  # the whole delay shows up in the step's first collective
        want = st["absorbed_by"]
        check(got["wait_position"] == want["position"] and got["worst_step"] == want["worst_step"],
              f"{label}: evidence collective {got['wait_position']} step {got['worst_step']}, manifest {want}")
        check(want["kernel"].startswith(got["wait_kernel"] or "?"),
              f"{label}: evidence kernel {got['wait_kernel']} vs {want['kernel'][:60]}")
        check(near(got["wait_kernel_share_pct"], want["share"] * 100, 0.05, 1.0),
              f"{label}: evidence share {got['wait_kernel_share_pct']} vs {want['share']}")


SUMMARY = {}  # id(sections) -> the report's summary items (check_stage sees the sections)
NAMED = []    # wait items that named the straggler of a directory run


def rep_summary(sections):
    return SUMMARY.get(id(sections), [])


CAUSE_WORDS = {"host": "its host is late", "gpu": "its compute runs longer",
               "imbalance": "Rebalance the work across the ranks"}


def check_wait_item(label, summary, stage, group, tables_rank_in_group):
    """A directory run's wait item in the stage speaks for the tables' rank's group: the
    straggler by number and its cause, never "one rank cannot tell"."""
    for it in summary:
        if it["kind"] != "wait" or it["stage"] != stage:
            continue
        check("one rank cannot tell" not in it["basis_text"],
              f"{label}: a directory run's wait item says one rank cannot tell")
        if not tables_rank_in_group or group["verdict"] != "straggler":
            continue
        check(f"wait for rank {group['straggler']}" in it["basis_text"],
              f"{label}: wait item does not name rank {group['straggler']}: {it['basis_text']}")
        # fixing the straggler shortens every rank's step by what one rank loses to it;
        # rebalancing a work imbalance, by no more than its excess over an even share
        each = group["lost_per_step_us"] / (len(group["ranks"]) - 1)
        if group["cause"] == "imbalance":
            each = min(each, group["balanced_excess_per_step_us"])
            check_rebalance_bound(label, it, group)
        check(it["bound_us_per_step"] >= min(each, it["basis_us_per_step"]) - 0.01,
              f"{label}: wait bound {it['bound_us_per_step']} under the loss per rank {each:.3f}")
        # "N ms/step each" only where there is more than one other rank to share it
        check(("ms/step each" in it["basis_text"]) == (len(group["ranks"]) > 2),
              f"{label}: per-rank share with {len(group['ranks'])} ranks: {it['basis_text']}")
        word = CAUSE_WORDS.get(group["cause"])
        check(word is None or word in it["action_text"],
              f"{label}: wait item action {it['action_text']!r} for cause {group['cause']}")
        # its kernels are where the others wait, not the straggler's work: the line says so
        check(f"(the others wait for rank {group['straggler']} in " in it["text"],
              f"{label}: the wait item's kernels are not said to be where the others wait: "
              f"{it['text'][:200]}")
        NAMED.append(label)


# the one-node custom all-reduces (real-multirank.md): P2P buffers of one host's GPUs
CUSTOM_ALLREDUCE = (b"cross_device_reduce", b"all_reduce_one_shot", b"all_reduce_two_shot")


def check_rebalance_bound(label, item, group, world=None):
    """A work-imbalance straggler's wait item (review 10 defect 1): its bound is the lesser
    of the loss one other rank takes and the straggler's excess over an even share of the
    group's work (excess x (n - 1) / n), and the basis names the one that binds. world: the
    run's ranks when some are unread: the even share spreads over all of them (the Ranks
    section's balanced_excess stays over the ranks read)."""
    n = len(group["ranks"])
    loss = group["lost_per_step_us"] / (n - 1)
    read_even = group["excess_per_step_us"] * (n - 1) / n
    w = world or n
    even = group["excess_per_step_us"] * (w - 1) / w
    want = min(loss, even)
    binds = "the even share binds" if even < loss else "the seen loss binds"
    ok = (group["cause"] == "imbalance" and near(item["bound_us_per_step"], want, 0.001, 0.01)
          and near(group["balanced_excess_per_step_us"], read_even, 0.001, 0.01)
          and binds in item["basis_text"] and "over an even share" in item["basis_text"]
          and (not world or f"of the run's {world} ranks'" in item["basis_text"]))
    check(ok, f"{label}: rebalance bound {item['bound_us_per_step']}, want min(loss {loss:.3f}, "
              f"even share {even:.3f}) with '{binds}': {item['basis_text'][-400:]}")
    return ok


def check_custom_allreduce(name, directory, manifest):
    """A TP group over several hosts runs NCCL, never a custom all-reduce (SGLang and vLLM
    create theirs only when the group is on one node): a fixture that did would teach the
    topology gate a structure no real trace has."""
    import gzip
    for group in manifest.get("groups", []):
        hosts = {manifest["hosts"][str(r)] for r in group["ranks"]} if "hosts" in manifest else set()
        if len(hosts) < 2:
            continue
        for r in group["ranks"]:
            path = os.path.join(directory, manifest["files"][str(r)])
            with gzip.open(path) if path.endswith(".gz") else open(path, "rb") as f:
                text = f.read()
            check(not any(k in text for k in CUSTOM_ALLREDUCE),
                  f"{name}: rank {r} of a TP group over hosts {sorted(hosts)} runs a custom all-reduce")


def check_set(triage, name, directory, manifest):
    check_custom_allreduce(name, directory, manifest)
    rep = run(triage, [directory])
    if rep is None:
        return
    lim = rep["limits"]
    check(not lim["filtered"] and lim["filtered_ranks"] == 0, f"{name}: filtered {lim}")
    check(lim["ranks_compared"] and lim["ranks_analysed"] == manifest["ranks"]
          and lim["ranks_expected"] <= manifest["ranks"],
          f"{name}: limits {lim}, want {manifest['ranks']} ranks compared and none missing")
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
    # a directory run says so and lists every rank it read (review-1 §15), the API server not
    check(rep["mode"] == "directory" and len(rep["inputs"].get("ranks", [])) == n
          and all("async_llm" not in p for p in rep["inputs"]["ranks"]),
          f"{name}: mode {rep['mode']}, inputs.ranks {rep['inputs'].get('ranks')}")
    first = os.path.join(directory, manifest["files"]["0"])
    check(rep["inputs"]["formal"][0] == os.path.normpath(first),
          f"{name}: tables from {rep['inputs']['formal']}, want rank 0 {first}")
    sections = {s["stage"]: s for s in rep["ranks"]}
    SUMMARY[id(sections)] = rep["summary"]
    trtllm = manifest["framework"] == "trtllm"  # no step markers: every kernel in "all"
    want_stages = {"all"} if trtllm else {STAGE_ID[st["stage"]] for st in manifest["stages"]}
    check(set(sections) == want_stages, f"{name}: sections {sorted(sections)}, want {sorted(want_stages)}")
    for st in manifest["stages"]:
        if trtllm:
            check_trtllm(name, sections, st)
            continue
        check_stage(name, sections, st, manifest.get("end_jitter_us", 0.5))
    check_merge(triage, name, directory, n, rep)
    last = n - 1
    one = run(triage, ["--rank", str(last), directory])
    if one is not None:
        check(one["ranks"] == [] and one["mode"] == "single-trace" and "ranks" not in one["inputs"],
              f"{name}: --rank {last} still lists ranks (mode {one['mode']})")
        want = os.path.normpath(os.path.join(directory, manifest["files"][str(last)]))
        check(one["inputs"]["formal"][0] == want,
              f"{name}: --rank {last} tables from {one['inputs']['formal']}, want {want}")


def check_trtllm(name, sections, st):
    """TRT-LLM records no step annotation: the straggler and the waits, no per-step figures."""
    got = find_group(name, sections["all"], st["ranks"]) if "all" in sections else None
    if got:
        check(got["straggler"] == st["least_wait_rank"] and got["steps"] == 0,
              f"{name}: trtllm straggler {got['straggler']} steps {got['steps']}")


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
    check_step_counts(triage, os.path.join(base, "vllm-v1-dp2-tp4"))
    check_moe_fixture(triage, os.path.join(base, "vllm-v1-dp2-tp4-moe-hot2"))


def check_moe_fixture(triage, d):
    """The real directory shape with a work-imbalance straggler (brief 11 defect 4): vLLM V1
    DP 2 x TP 4 over two nodes (node folders, the API server's trace and profiler dumps,
    clocks 57.6 us apart), the replicas counting 3 and 4 steps, rank 3's trace without
    deviceProperties. Rank 2's expert GEMMs (matmul_ogs) take 1.4x: its group waits for
    it, the cause is work imbalance in those kernels, and the wait item's bound is the
    lesser of one peer's loss and rank 2's excess over an even share (here the share:
    x 3/4); the other replica's group has no straggler and rank 3 is read like the rest."""
    rep = run(triage, [d])
    if rep is None or not rep["ranks"]:
        return check(False, "moe-hot2: no Ranks section")
    sec = rep["ranks"][0]
    rows = sec["rows"]
    check([r["steps"] for r in rows] == [3, 3, 3, 3, 4, 4, 4, 4],
          f"moe-hot2: row steps {[r['steps'] for r in rows]}")
    g = find_group("moe-hot2", sec, [0, 1, 2, 3])
    other = find_group("moe-hot2", sec, [4, 5, 6, 7])
    if not g or not other:
        return
    fams = [x["family"] for x in g["excess"]]
    check(g["verdict"] == "straggler" and g["straggler"] == 2 and g["cause"] == "imbalance"
          and fams and all(f.startswith("_matmul_ogs_") for f in fams),
          f"moe-hot2: group 0-3 {g['verdict']} rank {g['straggler']} cause {g['cause']} excess {fams}")
    check(other["verdict"] != "straggler", f"moe-hot2: group 4-7 {other['verdict']}")
    waits = [it for it in rep["summary"] if it["kind"] == "wait"]
    check(len(waits) == 1 and rep["summary"][0] is waits[0],
          f"moe-hot2: wait items {[(it['action_id'], it['bound_us_per_step']) for it in rep['summary']]}")
    if waits and check_rebalance_bound("moe-hot2", waits[0], g):
        n = len(g["ranks"])
        check(g["excess_per_step_us"] * (n - 1) / n < g["lost_per_step_us"] / (n - 1)
              and "the even share binds" in waits[0]["basis_text"],
              f"moe-hot2: the even share should bind: {waits[0]['basis_text'][-300:]}")


def check_step_counts(triage, d):
    """DP replicas run their own steps (vllm-v1-dp2-tp4: 3 on ranks 0-3, 4 on ranks 4-7):
    the rank table's totals are over each rank's own count, and it says so, rather than
    "the capture's 4 steps" for ranks that ran 3 (brief 10 defect 3)."""
    rep = run(triage, [d])
    if rep is None or not rep["ranks"]:
        return check(False, "dp2tp4: no Ranks section")
    rows = rep["ranks"][0]["rows"]
    check([r["steps"] for r in rows] == [3, 3, 3, 3, 4, 4, 4, 4], f"dp2tp4: row steps {[r['steps'] for r in rows]}")
    md = subprocess.run([triage, "--quiet", d], capture_output=True, text=True, check=False).stdout
    check("times are totals over each rank's own counted steps, which differ (3 on ranks 0-3, "
          "4 on ranks 4-7)" in md and "the capture's 4 steps" not in md,
          "dp2tp4: the rank table does not say the ranks' step counts differ")


GENERATED = [
    # (name, make-rank-set.py arguments)
    ("sglang-slow1-5pct", ["--framework", "sglang", "--slow-rank", "1", "--slowdown", "0.05"]),
    ("vllm-slow3-5pct", ["--framework", "vllm", "--slow-rank", "3", "--slowdown", "0.05"]),
    ("trtllm-slow2-5pct", ["--framework", "trtllm", "--slow-rank", "2", "--slowdown", "0.05"]),
    ("tokenspeed-slow0-10pct", ["--framework", "tokenspeed", "--slow-rank", "0", "--slowdown", "0.10"]),
    ("sglang-balanced", ["--framework", "sglang", "--slowdown", "0"]),
    # the real structure with a straggler of each kind in each stage (real-multirank.md)
    ("vllm-2nodes-host-late", ["--framework", "vllm", "--ranks", "8", "--nodes", "2", "--stage", "both",
                               "--empty-steps", "2", "--late-rank", "5", "--late-us", "600",
                               "--late-stage", "decode", "--slow-rank", "2", "--slowdown", "0.10",
                               "--slow-stage", "prefill"]),
    ("sglang-tp4-names-slow3", ["--framework", "sglang", "--stage", "both",
                                     "--profile-id", "llama_tp4_bs64", "--slow-rank", "3",
                                     "--slowdown", "0.08", "--slow-stage", "decode", "--late-rank", "1",
                                     "--late-us", "2000", "--late-stage", "prefill"]),
    # two DP replicas of TP 4 with custom all-reduces (no group args): each replica is its
    # own group, whether the replicas drift apart (different batches, step counts and
    # starts, as real ones) or run in lockstep for the profile
    ("vllm-dp2-tp4-slow6", ["--framework", "vllm", "--ranks", "8", "--dp", "2", "--nodes", "2",
                            "--slow-rank", "6", "--slowdown", "0.10"]),
    ("sglang-dp2-tp4-lockstep-late1", ["--framework", "sglang", "--ranks", "8", "--dp", "2",
                                       "--lockstep-replicas", "--late-rank", "1", "--late-us", "600"]),
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
            # the imbalance is the straggler's cause (work imbalance: the MoE kernel runs
            # longer on it, its other kernels keep pace): the wait item's action is to
            # rebalance, with the kernel family and its figures as evidence (review-1 defect 6)
            g = rep["ranks"][0]["groups"][0]
            ex = g["excess"]
            check(g["cause"] == "imbalance" and ex and ex[0]["family"] == "fused_moe_kernel"
                  and ex[0]["straggler_us"] > ex[0]["peers_us"] > 0
                  and near(g["excess_per_step_us"], sum(x["per_step_us"] for x in ex), 0.001, 0.01),
                  f"moe: cause {g['cause']}, excess {ex}")
            waits = [it for it in rep["summary"] if it["kind"] == "wait"]
            check(waits and waits[0]["action_text"].startswith("Rebalance the work")
                  and "cause work imbalance" in waits[0]["basis_text"]
                  and "`fused_moe_kernel`" in waits[0]["basis_text"],
                  f"moe: wait items {[(it['action_text'][:40], it['basis_text'][-120:]) for it in waits]}")
            if waits:
                check_rebalance_bound("moe", waits[0], g)
        check_spread(triage, gen, tmp)
        check_conflict(triage, gen, tmp)
        check_shapes(triage, gen, tmp)
        check_tp_from_groups(triage, gen, tmp)
    check(len(NAMED) >= 2, f"no wait item of 'What to try first' named its straggler ({NAMED})")


def shape_set(gen, tmp, name, *args):
    """A generated SGLang TP 4 decode set whose rank 2 runs 10 % slower: (directory, manifest)."""
    out = os.path.join(tmp, name)
    subprocess.run([sys.executable, gen, "--out", out, "--framework", "sglang", "--ranks", "4",
                    "--stage", "decode", "--layers", "2", "--decode-steps", "3", "--seed", "31",
                    "--slow-rank", "2", "--slowdown", "0.10", "--profile-id", "s", *args],
                   check=True, capture_output=True)
    with open(out + ".manifest.json", encoding="utf-8") as f:
        return out, json.load(f)


def truncate(path):
    """Cuts a file in half, as an interrupted copy or a full disk leaves it."""
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:len(data) // 2])


def gunzip(path):
    """The plain-JSON twin of a .gz trace (a profiler run without use_gzip), in its place."""
    import gzip
    with gzip.open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    with open(path[:-3], "wb") as f:
        f.write(data)
    return path[:-3]


def triage_md(triage, d):
    p = subprocess.run([triage, d], capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def same_notes(triage, d, label):
    """The HTML page's Ranks notes are the Markdown's, one list (review 12: the HTML lacked
    the ranks not read, the files holding several GPUs): the same items, in order, marks
    aside (a code span's backticks, its bar escape)."""
    import html
    import re
    rc, md, _ = triage_md(triage, d)
    p = subprocess.run([triage, "--quiet", "--format", "html", d], capture_output=True, text=True,
                       check=False)
    want = []
    for sec in md.split("\n## Ranks: ")[1:]:
        sec = sec.split("\n### Imbalance")[0]
        want += [l[2:].replace("`", "").replace("\\|", "|") for l in sec.splitlines() if l.startswith("- ")]
    got = [html.unescape(re.sub(r"<[^>]+>", "", li)) for ul in
           re.findall(r'<ul class="notes rank-notes">(.*?)</ul>', p.stdout, re.S)
           for li in re.findall(r"<li>(.*?)</li>", ul, re.S)]
    check(rc == 0 and p.returncode == 0 and want and got == want,
          f"{label}: the HTML Ranks notes differ from the Markdown's: {got[:2]} vs {want[:2]}")


def check_shapes(triage, gen, tmp):
    """Directory shapes of real-multirank.md the sets above lack (brief 12 defect 3): the
    straggler analysis is never silent without saying why.
    - gzip and plain mixed: the same section as the all-gzip directory;
    - a rank missing its trace: its group names the rank not read (pg_config holds it),
      and the verdict speaks for the ranks read;
    - a rank with a truncated file (gzip, or plain JSON): the run goes on with one warning
      line naming the file, the offset and the rank, the Limits say it, and the group names
      the rank as not read; the straggler among the others is still found;
    - two ranks, one truncated: no section (one rank), and the warning says why;
    - one trace per node holding several ranks' GPUs: each row says its file holds several
      GPUs and the section says only one GPU per file was compared;
    - in each, the HTML page's Ranks notes are the Markdown's (one list)."""
    base, m = shape_set(gen, tmp, "shape-gz")
    files = {int(r): os.path.join(base, f) for r, f in m["files"].items()}
    ref = run(triage, [base])
    mixed, _ = shape_set(gen, tmp, "shape-mixed")
    for r in (1, 3):
        gunzip(os.path.join(mixed, os.path.basename(files[r])))
    got = run(triage, [mixed])
    if ref and got:
        strip = lambda sec: json.dumps([{k: v for k, v in x.items() if k != "rows"} for x in sec])
        check(strip(got["ranks"]) == strip(ref["ranks"])
              and [r["rank"] for r in got["ranks"][0]["rows"]] == [0, 1, 2, 3]
              and got["ranks"][0]["groups"][0]["straggler"] == 2,
              "mixed gzip/plain: the section differs from the all-gzip directory's")
    missing, _ = shape_set(gen, tmp, "shape-missing")
    os.remove(os.path.join(missing, os.path.basename(files[2])))
    rep = run(triage, [missing])
    g = rep["ranks"][0]["groups"][0] if rep and rep["ranks"] else {}
    check(g.get("ranks") == [0, 1, 3] and g.get("absent_ranks") == [2],
          f"missing rank 2: group {g.get('ranks')} absent {g.get('absent_ranks')}")
    rc, md, _ = triage_md(triage, missing)
    check(rc == 0 and "; not read: 2 |" in md
          and "- Ranks 0, 1, 3: rank 2 of their process group was not read" in md
          and "the verdict speaks for the ranks read only" in md
          and "The directory holds 3 of the run's 4 ranks" in md,
          "missing rank 2: the Ranks section does not say rank 2 was not read")
    same_notes(triage, missing, "missing rank 2")
    for name, plain in (("shape-trunc", False), ("shape-trunc-plain", True)):
        d, _ = shape_set(gen, tmp, name)
        path = os.path.join(d, os.path.basename(files[3]))
        if plain:
            path = gunzip(path)
        truncate(path)
        rc, md, err = triage_md(triage, d)
        lines = [l for l in err.splitlines() if "could not be read" in l]
        check(rc == 0 and len(lines) == 1 and path in lines[0] and "rank 3's trace" in lines[0]
              and "(offset " in lines[0],
              f"{name}: exit {rc}, warnings {err!r}")
        check("rank 3's trace could not be read (offset" in md.split("## Limits of this trace")[-1]
              and "- Ranks 0-2: rank 3 of their process group was not read" in md,
              f"{name}: the Limits or the Ranks section do not name rank 3")
        same_notes(triage, d, name)
        rep = run(triage, [d])
        g = rep["ranks"][0]["groups"][0] if rep and rep["ranks"] else {}
        check(g.get("ranks") == [0, 1, 2] and g.get("absent_ranks") == [3] and g.get("straggler") == 2
              and g.get("verdict") == "straggler",
              f"{name}: group {g.get('ranks')} absent {g.get('absent_ranks')} straggler {g.get('straggler')}")
    two = os.path.join(tmp, "shape-two")
    subprocess.run([sys.executable, gen, "--out", two, "--framework", "sglang", "--ranks", "2",
                    "--stage", "decode", "--layers", "1", "--decode-steps", "2", "--seed", "32",
                    "--profile-id", "t"], check=True, capture_output=True)
    truncate(os.path.join(two, "t-TP-1.trace.json.gz"))
    rc, md, err = triage_md(triage, two)
    check(rc == 0 and "rank 1's trace could not be read" in err and "## Ranks:" not in md
          and "rank 1's trace could not be read" in md,
          f"two ranks, one truncated: exit {rc}, {err!r}")
    check_per_node(triage, gen, tmp)


def check_per_node(triage, gen, tmp):
    """One trace per node with several ranks: a 2-node TP 8 run whose four ranks of a node
    were merged into one file (their events together, one distributedInfo): each row reads
    one GPU of its file and says how many the file holds; the section says the other GPUs'
    ranks are compared by no row."""
    import glob
    import gzip
    src = os.path.join(tmp, "per-node-src")
    subprocess.run([sys.executable, gen, "--out", src, "--framework", "sglang", "--ranks", "8",
                    "--nodes", "2", "--stage", "decode", "--layers", "2", "--decode-steps", "3",
                    "--seed", "33", "--slow-rank", "5", "--slowdown", "0.10"],
                   check=True, capture_output=True)
    out = os.path.join(tmp, "per-node")
    os.makedirs(out)
    for node in (0, 1):
        docs = []
        for path in sorted(glob.glob(os.path.join(src, f"node{node}", "*.trace.json.gz"))):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                docs.append(json.load(f))
        merged = dict(docs[0])
        merged["traceEvents"] = [e for d in docs for e in d["traceEvents"]]
        merged["deviceProperties"] = [p for d in docs for p in d.get("deviceProperties", [])]
        with gzip.open(os.path.join(out, f"node{node}.pt.trace.json.gz"), "wt", encoding="utf-8") as f:
            json.dump(merged, f)
    rep = run(triage, [out])
    rows = rep["ranks"][0]["rows"] if rep and rep["ranks"] else []
    check([(r["rank"], r.get("gpus")) for r in rows] == [(0, 4), (4, 4)],
          f"per node: rows {[(r['rank'], r.get('gpus')) for r in rows]}")
    rc, md, _ = triage_md(triage, out)
    check(rc == 0 and "| 0 (1 of its file's 4 GPUs) |" in md
          and "Rank 0's trace holds the kernels of 4 GPUs; rank 4's trace holds the kernels of 4 GPUs" in md
          and "the ranks of the other GPUs are compared by no row" in md,
          "per node: the section does not say each file holds several GPUs")
    same_notes(triage, out, "per node")


def check_tp_from_groups(triage, gen, tmp):
    """vLLM DP 2 x TP 4 on two nodes: the TP size is the TP group's 4 (pg_config), not the
    world's 8; one TP group of 4 alone says 4 too."""
    for name, args, want in (("dp2tp4", ["--ranks", "8", "--dp", "2", "--nodes", "2"], 4),
                             ("tp4", ["--ranks", "4"], 4)):
        out = os.path.join(tmp, name)
        subprocess.run([sys.executable, gen, "--out", out, "--framework", "vllm", "--stage", "decode",
                        "--layers", "1", "--decode-steps", "1", "--seed", "9", *args],
                       check=True, capture_output=True)
        rep = run(triage, ["--rank", "5" if name == "dp2tp4" else "1", out])
        if rep is not None:
            tp = rep["context"]["tp_size"]
            check(tp["value"] == want and tp["source"] == "trace-metadata", f"{name}: TP size {tp}, want {want}")


def check_spread(triage, gen, tmp):
    """Every rank late on the host in turn: the loss is real, but no rank is the straggler."""
    out = os.path.join(tmp, "spread")
    subprocess.run([sys.executable, gen, "--out", out, "--framework", "sglang", "--ranks", "4",
                    "--stage", "decode", "--layers", "2", "--decode-steps", "8", "--seed", "5",
                    "--first-collective-wait", "300", "--first-wait-rotate"], check=True, capture_output=True)
    rep = run(triage, [out])
    if rep is None or not rep["ranks"]:
        return check(False, "spread: no Ranks section")
    g = rep["ranks"][0]["groups"][0]
    check(g["verdict"] == "spread" and not g["has_straggler"] and g["lost_share_pct"] > 5
          and g["last_arrival_pct"] < 50 and g["wait_position"] == 1,
          f"spread: {g['verdict']} {g['lost_share_pct']} {g['last_arrival_pct']} {g['wait_position']}")


def check_conflict(triage, gen, tmp):
    """A file named as another rank than its distributedInfo: the file's rank, one warning."""
    out = os.path.join(tmp, "conflict")
    subprocess.run([sys.executable, gen, "--out", out, "--framework", "sglang", "--ranks", "2",
                    "--stage", "decode", "--layers", "1", "--decode-steps", "1", "--seed", "6",
                    "--profile-id", "c"], check=True, capture_output=True)
    os.rename(os.path.join(out, "c-TP-1.trace.json.gz"), os.path.join(out, "c-TP-7.trace.json.gz"))
    p = subprocess.run([triage, "--format", "json", out], capture_output=True, text=True, check=False)
    check(p.returncode == 0 and "says rank 7" in p.stderr and "says 1" in p.stderr,
          f"conflict: exit {p.returncode}, stderr {p.stderr!r}")
    if p.returncode == 0:
        rows = json.loads(p.stdout)["ranks"][0]["rows"]
        check([r["rank"] for r in rows] == [0, 1], f"conflict: ranks {[r['rank'] for r in rows]}")


def shared(triage, source):
    """../shared/traces/multi-rank/hta_sampled_2ranks (when present): two ranks of a
    128-rank job, no pg_config, no args: every rank of the stage is the group; its SendRecv
    instances are matched like for like (message from the nccl:* regions, step by step), the
    ones a sampled rank lacks are named, and the section is the same through merge."""
    d = os.path.join(source, "..", "shared", "traces", "multi-rank", "hta_sampled_2ranks")
    if not os.path.isdir(d):
        print("skip hta_sampled_2ranks (no ../shared next to the source tree)")
        return
    rep = run(triage, [d])
    if rep is None:
        return
    check(len(rep["ranks"]) == 1 and [r["rank"] for r in rep["ranks"][0]["rows"]] == [0, 1],
          f"hta: sections {[(s['stage'], len(s['rows'])) for s in rep['ranks']]}")
    if rep["ranks"]:
        g = rep["ranks"][0]["groups"]
        check(len(g) == 1 and g[0]["ranks"] == [0, 1] and g[0]["source"] == "all-ranks"
              and g[0]["matched"] > 0 and g[0]["count_mismatches"] == 0,
              f"hta: groups {g}")
        # the sampler dropped instances on each rank (session 9 gap 2): rank 0 lacks the
        # 90.8 ms pooled all-to-all backward rank 1 runs in step 2; it is named, matched with
        # nothing (no one's wait), and compute and host times of sampled ranks are not
        # compared
        dr = g[0]["dropped"] if g else None
        check(dr and dr["sampled"] and dr["rank"] == 0 and dr["ran_on"] == 1 and dr["step"] == 2
              and dr["backward"] and dr["context"] == "pooled embedding exchange"
              and near(dr["us"], 90771, 0.001, 1) and g[0]["extra_compute_per_step_us"] == 0,
              f"hta: dropped {dr}, extra compute {g[0]['extra_compute_per_step_us'] if g else None}")
        # ... but the imbalance table names the cause by mechanism (brief 10 defect 1): rank 1
        # runs the embedding (TBE) family 1.7x rank 0's time: rank 0's weighted lookups (24.03
        # ms) count, as its CPU ops run two lookups a step (4 split_embedding_codegen_lookup
        # calls) where rank 1's run one (2): rank 1's CPU side never launched them, so they
        # are the sharding plan, not a kernel its sample dropped (blind review 22 defect 2;
        # review 19 defect 10 had left them out): work imbalance, the sharding plan's
        # split. The
        # pinned HtoD copies, 12.08 against 0.81 ms, are one 59 MB copy (11.39 ms) only rank
        # 1's sample kept, both ranks copying 8 times at 5-7 GB/s: a sampling artifact, left
        # out of the excess and named apart (review 17 defect 7)
        ex = {x["family"]: x for x in g[0]["excess"]} if g else {}
        emb, htod = ex.get("embedding"), ex.get("Memcpy HtoD (Pinned -> Device)")
        so = g[0].get("sampled_out") if g else None
        check(g and g[0]["cause"] == "imbalance" and emb and not emb["is_kernel"]
              and g[0]["excess"][0]["family"] == "embedding"
              and near(emb["straggler_us"], 125326, 0.001, 1) and near(emb["peers_us"], 72278, 0.001, 1)
              and emb["straggler_left_us"] == 0 and emb["peers_left_us"] == 0
              and htod is None and so and so["families"] == 1
              and so["family"] == "Memcpy HtoD (Pinned -> Device)" and so["is_kernel"]
              and near(so["launch_us"], 11387, 0.001, 1)
              and so["straggler_us"] - so["launch_us"] <= so["peers_us"],
              f"hta: cause {g[0]['cause'] if g else None}, excess {g[0]['excess'] if g else None}, "
              f"sampled out {so}")
        check(dr and sum(r["lacks"] for r in rep["ranks"][0]["rows"]) == dr["instances"]
              and rep["ranks"][0]["rows"][0]["lacks"] > 0,
              f"hta: lacks by rank {[r['lacks'] for r in rep['ranks'][0]['rows']]} against {dr}")
        check(all(r["wait_us"] < 90771 for r in rep["ranks"][0]["rows"]),
              f"hta: a dropped instance read as wait {[r['wait_us'] for r in rep['ranks'][0]['rows']]}")
        md = subprocess.run([triage, "--quiet", d], capture_output=True, text=True, check=False).stdout
        check("rank 0 lacks it, rank 1 ran it for 90.771 ms" in md
              and "is missing from rank 0's trace: GPU idle there on rank 0 is that collective" in md,
              "hta: the Ranks section or the Filtered trace limit does not name the dropped all-to-all")
        check("embedding kernels 125.33 ms against 72.28 ms (1.7x, +26.52 ms/step)," in md,
              "hta: the embedding family leaves out kernels the other rank's CPU never launched")
        check("left out as a sampling artifact, not work: `Memcpy HtoD (Pinned -> Device)` 12.08 ms "
              "against 0.81 ms" in md and "one launch of 11.39 ms that only rank 1's sampled trace kept" in md,
              "hta: the Ranks section does not name the sampled-out copy")
        # two of a 128-rank job: the limit says so; the wait item speaks for the section
        lim = rep["limits"]
        check(lim["ranks_compared"] and lim["ranks_analysed"] == 2 and lim["ranks_expected"] == 128,
              f"hta: limits {lim}")
        # ... and, 126 ranks unread, reading them stays the action, its bound the account's;
        # two sampled ranks of 128 are a lead, not a sharding change: confirm the imbalance on
        # every rank, unfiltered, first (blind review 21 defect 9)
        waits = [it for it in rep["summary"] if it["kind"] == "wait"]
        check(waits and all(f"wait for rank {g[0]['straggler']}" in it["basis_text"]
                            and "ranks not read" in it["basis_text"]
                            and "ms/step each" not in it["basis_text"]  # one other rank
                            and "every rank's trace kept" in it["basis_text"]
                            and "cause work imbalance" in it["basis_text"]
                            and it["action_text"].startswith(
                                "Confirm the imbalance on every rank, unfiltered, before "
                                "changing the sharding plan")
                            and it["action_id"] == "rank_skew"
                            and it["bound_us_per_step"] < it["basis_us_per_step"] for it in waits),
              f"hta: wait items {[(it['action_text'], it['basis_text']) for it in waits]}")
        # rebalancing wins at most what makes the step wait (review 10 defect 1): rank 1's
        # excess over an even share of the run's 128 ranks' work (29.94 x 127/128 = 29.71
        # ms/step, the sampled-out copy left out: the ranks read are 2 of 128, so an even
        # share over those two would understate what it sheds), capped by the loss rank 0 is
        # seen to take (16.01 ms/step); the seen loss binds here, and the basis says so
        ok = waits and check_rebalance_bound("hta", waits[0], g[0], lim["ranks_expected"])
        check(ok and "the seen loss binds" in waits[0]["basis_text"]
              and near(g[0]["balanced_excess_per_step_us"], g[0]["excess_per_step_us"] / 2, 0.001, 0.01)
              and near(waits[0]["bound_us_per_step"], g[0]["lost_per_step_us"], 0.001, 0.01)
              and near(g[0]["excess_per_step_us"], 29945, 0.001, 1)
              and rep["summary"].index(waits[0]) < 3,
              f"hta: wait bound {waits[0]['bound_us_per_step'] if waits else None}: "
              f"{waits[0]['basis_text'][-600:] if waits else None}")
        # a TorchRec + DDP job: the loss is told by what its SendRecv instances do, the
        # families the overlap table splits them by, and they add up to the loss per step
        ctx = g[0]["wait_contexts"]
        names = {c["context"] for c in ctx}
        check({"gradient reduce (DDP hook)", "pooled embedding exchange"} <= names
              and near(sum(c["lost_per_step_us"] for c in ctx), g[0]["lost_per_step_us"], 0.001, 0.01)
              and all("launched for" in it["basis_text"] for it in waits),
              f"hta: wait contexts {ctx}")
        # every rank read is checked for HTA's filtering, not only the tables' one, and a
        # kernel a sampled rank lacks makes no imbalance row ("min 0.000", review 7)
        check(lim["filtered"] and lim["filtered_ranks"] == 2, f"hta: filtered ranks {lim}")
        imb = rep["ranks"][0]["imbalance"]
        check(imb and all(x["min_us"] > 0 for x in imb),
              f"hta: imbalance rows of kernels a sampled rank lacks: {[x for x in imb if x['min_us'] <= 0]}")
        # a sampled trace drops kernels too: a gap where queued work waited may be a dropped
        # kernel, so it makes no "find what the queued work waits on" item (review 8 #1); the
        # idle it cannot explain is one item: profile again unfiltered (review 14 defect 10)
        queued = [i for i in rep["summary"] if i["action_id"] == "dependency"]
        reprofile = [i for i in queued if i["action_text"].startswith("Profile the same window again unfiltered")]
        check(len(reprofile) == len(queued) <= 1, f"hta: a queued-work item on a sampled trace: {queued[:1]}")
        # its host items rest on the host work the filter kept: they follow the items every
        # rank's trace supports, the rebalance item first (review 12 defect 4)
        idle = [i for i in rep["summary"] if i["kind"] == "idle" and i not in reprofile]
        check(waits and all(rep["summary"].index(w) < rep["summary"].index(i)
                            for w in waits for i in idle),
              f"hta: order {[i['action_id'] for i in rep['summary']]}")
        check_merge(triage, "hta", d, 2, rep)
        check_sampling_gap(triage, d, emb)


def check_sampling_gap(triage, d, emb):
    """A kernel one rank's sample dropped while its CPU side launched it (blind review 22
    defect 2): the pair as HTA's sampler would give it had it also dropped rank 0's
    unweighted find_long_segments launches (the kernel and its cudaLaunchKernel; the
    backward CppNode ops around them stay, as they launch the sorts too). Rank 0 runs those
    ops as often a step as rank 1 (twice its rate), so rank 1's find_long_segments is a
    kernel rank 0's sample dropped: left out of the embedding family and named, where the
    weighted lookups rank 1's ops never launch still count."""
    if not emb:
        return
    drop = "split_embedding_backward_codegen_rowwise_adagrad_unweighted_find_long_segments"
    with tempfile.TemporaryDirectory() as tmp:
        took = {}
        for r in (0, 1):
            name = f"sampled_rank-{r}.json.gz"
            with gzip.open(os.path.join(d, name), "rt") as f:
                doc = json.load(f)
            ev = doc["traceEvents"]
            hit = [e for e in ev if e.get("cat") == "kernel" and e["name"].startswith(drop)]
            took[r] = sum(e["dur"] for e in hit)
            if r == 0:
                corr = {e["args"]["correlation"] for e in hit}
                doc["traceEvents"] = [e for e in ev if not (
                    e.get("cat") in ("kernel", "cuda_runtime")
                    and e.get("args", {}).get("correlation") in corr)]
            with gzip.open(os.path.join(tmp, name), "wt") as f:
                json.dump(doc, f)
        check(took[0] > 0 and took[1] > 0, f"hta gap: no {drop} on both ranks: {took}")
        rep = run(triage, [tmp])
        g = rep["ranks"][0]["groups"] if rep and rep["ranks"] else []
        ex = {x["family"]: x for x in g[0]["excess"]} if g else {}
        gap = ex.get("embedding")
        check(gap and near(gap["straggler_left_us"], took[1], 0.001, 1) and gap["peers_left_us"] == 0
              and near(gap["straggler_us"], emb["straggler_us"] - took[1], 0.001, 1)
              and near(gap["peers_us"], emb["peers_us"] - took[0], 0.001, 1),
              f"hta gap: embedding {gap}, dropped rank 0's {took[0]} us, rank 1 ran {took[1]} us")
        md = subprocess.run([triage, "--quiet", tmp], capture_output=True, text=True,
                            check=False).stdout
        check("leaving out kernels a rank's sample dropped (its ops launch them as often a step): "
              "rank 1's" in md, "hta gap: the Ranks section does not name the kernel "
              "left out")


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
    {"fixtures": fixtures, "generated": generated, "workers": workers, "shared": shared}[mode](triage, source)
    for f in FAILS:
        print("FAIL", f)
    print("FAIL" if FAILS else "PASS", f"{len(FAILS)} problems")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
