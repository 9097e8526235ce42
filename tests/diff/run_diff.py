#!/usr/bin/env python3
"""run_diff.py TRIAGE SOURCE - triage diff on tests/data/diff/generated against its manifest.

Generated pairs besides: twice the steps (within noise), attention 1.5x (first row, exit
3), two ranks of one run (no regression; with --rank, a directory against its own rank's
trace is the same rank), renamed GEMMs (one group), GEMMs moved from bf16
to fp8 (the runs differ in the GEMM number format), two world sizes (not comparable: exit
4 under --fail-on regression).

The first kernel row of the stage is the manifest's first_change, marked slower; every
injected change (slower, new, removed) is reported with its kind and a delta within 2 %;
the stage total delta matches the manifest; kernels the generator did not touch are
within the noise floor. The same diff from two JSON reports (--format json) gives the
same JSON document, and a side that is neither a trace nor a report is one error line.
`triage bundle` of the two runs and one JSON report has a contents entry and a section
per input, each input's kernel rows, and fails with one line on a missing input;
`bundle -o X.html` writes the HTML page (contents, one article per input with its
kernel table), and an HTML bundle refuses a JSON report with one line.

Pinned Markdown (tests/diff/expected/*.md, run from the source tree with relative paths):
generated.md (the generated pair: inputs, noise floor, the injected change first under
"Biggest changes", per-stage tables with one unit each) and ranks.md (two rank fixtures:
the Ranks rows and the straggler change). Regenerate with
`python3 tests/diff/run_diff.py build/triage . --regenerate` and read the diff.
The JSON carries the inputs (kind, files), the noise floor, the change labels, and per
rank rows when both sides have several ranks (the same from JSON-report sides).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)


def triage(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def overlap_kernels(report_path):
    """{stage: set of overlap-table kernels} of a --format json report."""
    with open(report_path, encoding="utf-8") as f:
        rep = json.load(f)
    # rows under the recoverable floor are not printed, so the diff does not compare them;
    # a piece of a fusion row or of the eager chain is named under the table
    return {s["stage"]: {r["kernel"] for r in s["rows"]
                         if not r.get("below_floor") or r.get("cites_fusion")}
            for s in (rep.get("overlap") or {}).get("stages", [])}


def check_overlaps(d, jb, ja):
    """The diff's overlap rows are exactly the overlap-table kernels only one run has."""
    ob, oa = overlap_kernels(jb), overlap_kernels(ja)
    for st in d["stages"]:
        b, a = ob.get(st["stage"], set()), oa.get(st["stage"], set())
        got = {(r["name"], r["change"]) for r in st["overlaps"]}
        want = {(k, "new") for k in a - b} | {(k, "removed") for k in b - a}
        check(got == want, f"{st['stage']}: overlap rows {sorted(got)} vs {sorted(want)}")


def check_overlap_gone(exe, tmp, jb, ja):
    """BEFORE's JSON report with its first printed overlap row cut out: diffed with BEFORE,
    that row went away (and, the other way round, appeared), in the JSON and the Markdown
    diff. (ja: unused; the runs' own differences stay out of the check.)"""
    with open(jb, encoding="utf-8") as f:
        rep = json.load(f)
    # rows under the recoverable floor are not printed, so the diff does not compare them;
    # when the generated run prints none (every row folded), its first row is made a
    # printed one in a copy of BEFORE, which then stands for BEFORE
    stage = rep["overlap"]["stages"][0]
    printed = [i for i, r in enumerate(stage["rows"]) if not r.get("below_floor")]
    if not printed:
        stage["rows"][0]["below_floor"] = False
        printed = [0]
        jb = os.path.join(tmp, "b-printed.json")
        with open(jb, "w", encoding="utf-8") as f:
            json.dump(rep, f)
    cut = stage["rows"].pop(printed[0])
    cut_path = os.path.join(tmp, "a-cut.json")
    with open(cut_path, "w", encoding="utf-8") as f:
        json.dump(rep, f)
    for sides, change in (((jb, cut_path), "removed"), ((cut_path, jb), "new")):
        rc, out, err = triage(exe, "diff", "--format", "json", *sides)
        check(rc == 0, f"diff with a cut overlap row: {err}")
        if rc != 0:
            continue
        st = next(s for s in json.loads(out)["stages"] if s["stage"] == stage["stage"])
        check([(r["name"], r["change"], r["category"]) for r in st["overlaps"]] ==
              [(cut["kernel"], change, cut["category"])], f"cut overlap row: {st['overlaps']}")
    rc, md, _ = triage(exe, "diff", jb, cut_path)
    check(rc == 0 and "| Overlap row (kernel) | Category |" in md and
          "No overlap row appeared or went away." not in md,
          "Markdown diff lacks the overlap row that went away")
    page = os.path.join(tmp, "cut.html")
    rc, _, err = triage(exe, "diff", jb, cut_path, "-o", page)
    html = open(page, encoding="utf-8").read() if rc == 0 else ""
    check(html.count('<tr id="do-') == 1 and "Overlap rows that appeared or went away" in html,
          f"HTML diff page lacks the overlap row that went away: {err}")


PINS = [  # (expected file, diff arguments relative to the source tree)
    ("generated.md", ["tests/data/diff/generated/before", "tests/data/diff/generated/after"]),
    ("ranks.md", ["tests/data/ranks/sglang-decode-slow2-tp4",
                  "tests/data/ranks/sglang-decode-first-wait-tp4"]),
]


def check_pins(exe, source, regenerate):
    for name, args in PINS:
        p = subprocess.run([os.path.abspath(exe), "diff", *args], capture_output=True, text=True,
                           check=False, cwd=source)
        check(p.returncode == 0, f"pin {name}: exit {p.returncode}: {p.stderr}")
        path = os.path.join(source, "tests", "diff", "expected", name)
        if regenerate:
            with open(path, "w", encoding="utf-8") as f:
                f.write(p.stdout)
            continue
        with open(path, encoding="utf-8") as f:
            want = f.read()
        check(p.stdout == want, f"pin {name}: output differs from tests/diff/expected/{name} "
              "(regenerate with --regenerate, read the diff)")


def check_ranks_json(exe, source):
    """Both sides rank sets: one row per rank, the straggler of each run; the same rows
    from the two sides' JSON reports; inputs say directory / report."""
    before, after = PINS[1][1]
    before, after = os.path.join(source, before), os.path.join(source, after)
    rc, out, err = triage(exe, "diff", "--format", "json", before, after)
    check(rc == 0, f"ranks diff: {err}")
    if rc != 0:
        return
    d = json.loads(out)
    st = d["stages"][0]
    check([r["rank"] for r in st["ranks"]] == [0, 1, 2, 3], f"ranks diff rows {st['ranks']}")
    check(sum(r["before_straggler"] for r in st["ranks"]) <= 1 and
          sum(r["after_straggler"] for r in st["ranks"]) <= 1, "ranks diff: several stragglers")
    # a directory side's files are every rank it read, not the tables' one (issue 30)
    check(d["inputs"]["before"]["kind"] == "directory" and len(d["inputs"]["before"]["files"]) == 4
          and len(d["inputs"]["after"]["files"]) == 4, f"ranks diff inputs {d['inputs']}")
    check(d["noise_floor"]["pct"] > 0 and d["labels"]["slower"].startswith("slower"),
          f"noise floor / labels {d['noise_floor']} {d['labels']}")
    rc, page, err = triage(exe, "diff", "--format", "html", before, after)
    check(rc == 0 and page.count('<tr class="straggler">') >= 1 and
          page.count("</tr>", page.find('class="data ranks"')) >= 5,
          "ranks diff: the HTML page lacks its Ranks table or the straggler mark")
    with tempfile.TemporaryDirectory() as tmp:
        docs = []
        for src in (before, after):
            docs.append(os.path.join(tmp, os.path.basename(src) + ".json"))
            triage(exe, "--quiet", "--format", "json", "--output", docs[-1], src)
        rc, out2, err2 = triage(exe, "diff", "--format", "json", *docs)
        check(rc == 0, f"ranks diff of reports: {err2}")
        if rc == 0:
            d2 = json.loads(out2)
            check(d2["stages"] == d["stages"], "ranks diff: JSON-report sides differ from directories")
            check(d2["inputs"]["before"]["kind"] == "report" and
                  d2["inputs"]["before"]["files"] == d["inputs"]["before"]["files"],
                  f"report side inputs {d2['inputs']['before']}")


def check_shared_pair(exe, source):
    """../shared/traces/diff/hta_control_vs_test (when present): an A100 run against a V100
    run; the first thing the diff says is that the GPU changed."""
    pair = os.path.join(source, "..", "shared", "traces", "diff", "hta_control_vs_test")
    if not os.path.isdir(pair):
        print("skip the shared pair (no ../shared next to the source tree)")
        return
    sides = [os.path.join(pair, f) for f in ("control.json.gz", "test.json.gz")]
    rc, md, err = triage(exe, "diff", *sides)
    check(rc == 0, f"shared pair: {err}")
    head = md.split("## Biggest changes")[0]
    check("The runs differ in: GPU (NVIDIA A100" in head and "V100" in head,
          "shared pair: the GPU change is not stated before the tables")
    # other GPU, other world size, graphs appeared: said first, the verdict is "not comparable"
    # and counts no regression; the step time (span = busy + idle) comes before any kernel
    # (review-1 §16, defect 7)
    check("world size (distributedInfo) (8 -> 2)" in head and "CUDA/HIP graphs (no kernel" in head,
          "shared pair: world size or graph change not stated")
    # control is rank 3 of 8, test rank 1 of 2 (review 11): said before the facts and the
    # verdict, and the verdict says it again
    who = "The traces are of different ranks: before is rank 3 of 8 on GPU 3, after is rank 1 of 2 on GPU 1."
    check(0 < head.find(who) < head.find("The runs differ in:")
          and "The traces are also of different ranks (rank 3 -> rank 1)." in head,
          "shared pair: the different ranks are not stated up front and in the verdict")
    # the test run is pipelined: its GPU runs up to 57 ms past each step's end, so the kernel
    # time its step windows hold varies 2.2x (99.3-218.8 ms) while every step launches the
    # same 2,503 kernels (148-155 ms). The floor comes from each step's work (launched
    # kernel time less collectives', whose time holds the other ranks' lateness): the
    # before run's 52.3-58.7 ms sets 7.6 %, which resolves the stage (it once read 59.8 %
    # and resolved nothing)
    check("Not resolved: stage" not in head and "### Kernels not resolved" not in md
          and "Noise floor: 7.6 % (twice the spread across steps)" in md
          and "The before run's work per step (the kernel time launched in it less its "
              "collectives') ranges from 52.335 to 58.695 ms" in md,
          "shared pair: the floor is not the 7.6 % of the before run's work per step")
    # ... and the pipelined after run says why its spans are not its work (review 16)
    check("The after run is pipelined: in 3 of its 6 steps kernels ran on past the step's end" in md
          and "The before run is pipelined" not in md,
          "shared pair: the pipelined after run is not said")
    check("**Verdict: not comparable: the GPU and the world size differ**" in head
          and "(regression)" not in md, "shared pair: the verdict counts regressions across GPUs")
    # after "not comparable" no row reads as a regression or an improvement (review 13
    # defect 9): the rows say which way a time moved, and the stage line is no bold verdict
    cells = [ln.rsplit(" | ", 1)[-1] for ln in md.splitlines() if ln.startswith("| ")]
    regress_words = [c for c in cells if c.startswith(("slower", "faster"))]
    check(not regress_words and any(c.startswith("longer") for c in cells)
          and "**slower**" not in md and "), longer." in md,
          f"shared pair: not comparable rows still read slower/faster: {regress_words[:3]}")
    # two trace files: --rank N (a directory's) is no advice; profiling the same rank is
    check("--rank N" not in md and "Profile the same rank in both runs" in head
          and "Profile both runs on the same GPU with the same world size" in head,
          "shared pair: the advice on two files names --rank N or lacks what to do")
    rc, _, err = triage(exe, "diff", "--fail-on", "regression", *sides)
    check(rc == 4 and "not comparable (the GPU and the world size differ)" in err,
          f"shared pair: --fail-on regression exit {rc} (want 4: not comparable) {err!r}")
    check(head.find("## Step time") > head.find("**Verdict") > 0
          and "| all | 6 -> 6 | 76.996 -> " in head, "shared pair: no step time table before the kernels")
    # HTA's TorchRec traces: the framework is read from the trace's own names (deviation D11:
    # awaitable regions, FBGEMM lookups), not the packs' default, in both formats
    check("| TorchRec |" in head and "(default: not detected)" not in head,
          "shared pair: the framework is not TorchRec from the trace's names")
    rc, page, err = triage(exe, "diff", "--format", "html", *sides)
    check(rc == 0 and 'id="inputs"' in page and 'class="facts-differ"' in page and
          "TorchRec</td>" in page and "(default: not detected)" not in page,
          "shared pair: the HTML diff lacks the inputs table, the facts sentence or the framework")
    check('id="renamed-' in page and "volta_sgemm_128x32_nt" in page, "shared pair: HTML lacks the renamed table")
    check('"status status-regress"' not in page and '"status status-improve"' not in page
          and 'class="status status-longer">longer<' in page and 'delta up"' not in page,
          "shared pair: the HTML statuses of runs not comparable read regress/improve")
    # the top note gives the floor in force, 7.6 % from the steps, not the packs' 3 % (review 13)
    note = page[page.find('<p class="note">Noise floor'):]
    check(note.startswith('<p class="note">Noise floor: a change smaller than 7.6 %')
          and "twice the spread across steps" in note[:300],
          f"shared pair: the HTML top note does not give the floor in force: {note[:200]!r}")
    rc, out, err = triage(exe, "diff", "--format", "json", *sides)
    if rc == 0:
        # an overlap row whose kernel runs in both runs is not new or removed work (review-1
        # §16: SendRecv "removed")
        for st in json.loads(out)["stages"]:
            both = {k["name"] for k in st["kernels"] if k["change"] not in ("new", "removed")}
            wrong = [o["name"][:40] for o in st["overlaps"] if o["name"] in both and not o.get("still_runs")]
            check(not wrong, f"shared pair: overlap rows called new/removed though they run in both: {wrong}")
            check(any(o.get("still_runs") for o in st["overlaps"]), "shared pair: no still-running overlap row")
        dj = json.loads(out)
        # A100 -> V100: the cutlass_80/ampere GEMMs and the volta_sgemm ones are one renamed
        # group, not ~100 new and removed rows (review-1 §16)
        st = dj["stages"][0]
        gemm = [g for g in st["renamed"] if g["category"] == "gemm"]
        check(len(gemm) == 1 and any("cutlass_80" in n for n in gemm[0]["before_kernels"])
              and gemm[0]["after_kernels"][0].startswith("volta_sgemm")
              and not any("ampere" in n or "cutlass_80" in n for n in gemm[0]["after_kernels"]),
              "shared pair: the GEMMs renamed across GPUs are not one group")
        odd = [k["name"][:40] for k in st["kernels"] if k["change"] in ("new", "removed")
               and k["category"] == "gemm"]
        check(not odd and sum(k["change"] in ("new", "removed") for k in st["kernels"]) < 10,
              f"shared pair: new/removed rows left {odd}")
        fl = dj["stages"][0]["noise_floor"]
        check(dj["identity_differs"] == ["rank", "device"] and fl["resolves"]
              and fl["spread"]["run"] == "before" and fl["spread"]["values"] == 6
              and dj["stages"][0]["cut_steps"] == {"before": 0, "after": 3}
              and dj["labels"]["unresolved"] == "not resolved" and dj["noise_floor"]["resolve_max_pct"] == 20,
              f"shared pair: JSON identity {dj['identity_differs']} floor {dj['stages'][0]['noise_floor']}")
        check(dj["not_comparable"] == ["gpu", "world_size"] and dj["regressions"] == 0
              and dj["stages"][0]["time"]["span"]["before_us"] > 0, "shared pair: JSON verdict or time")
        # a wait that fell does not hide a transfer that rose past the noise (session 9):
        # SendRecv's transfer 7.75 -> 20.89 ms/step while its wait fell 14.02 -> 5.66
        sr = [k for k in st["kernels"] if k["name"].startswith("ncclKernel_SendRecv")]
        check(sr and sr[0]["change"] == "longer" and sr[0]["after_wait_us"] < sr[0]["before_wait_us"],
              f"shared pair: SendRecv's longer transfer hidden by its falling wait: {sr[:1]}")
        # not comparable: no JSON row slower or faster, and the labels name longer/shorter
        moved = {k["change"] for k in st["kernels"] + st["categories"] + [st["total"]]}
        check(not moved & {"slower", "faster"} and "longer" in moved
              and dj["labels"].get("longer") == "longer" and "slower" not in dj["labels"],
              f"shared pair: JSON rows of runs not comparable read {sorted(moved)} labels {dj['labels']}")
        ins = dj["inputs"]
        check(ins["before"]["framework"] == ins["after"]["framework"] == "TorchRec"
              and not ins["before"]["framework_defaulted"] and not ins["after"]["framework_defaulted"],
              f"shared pair: JSON inputs' framework is not TorchRec from the trace {ins['before']}")


def check_renamed(exe, source, tmp):
    """Three GEMMs renamed in the after run (another GPU's kernel picks, 1.6x slower): one
    renamed group (gemm) holding exactly those kernels on each side, none of them a new or
    removed kernel row; the RoPE kernel removed and the Triton kernel new (other categories)
    stay new/removed. The same from two JSON reports."""
    b, a, m = gen_pair(source, tmp, "renamed", "--rename-kernel",
                       r"^Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT(\d+)x32x(256|512)_",
                       "--rename-to", r"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT\1x64x\2_SW_",
                       "--rename-factor", "1.6", "--seed", "24")
    gone = {c["canonical_name"] for c in m["injected"] if c["change"] == "renamed_from"}
    came = {c["canonical_name"] for c in m["injected"] if c["change"] == "renamed_to"}
    check(len(gone) == 3 and len(came) == 3, f"renamed: generator renamed {len(gone)} -> {len(came)}")
    reports = []
    for side, path in (("b", b), ("a", a)):
        rep = os.path.join(tmp, f"renamed-{side}.json")
        rc, out, err = triage(exe, "--format", "json", "-o", rep, path)
        check(rc == 0, f"renamed: report {err}")
        reports.append(rep)
    for what, sides in (("traces", (b, a)), ("reports", tuple(reports))):
        rc, out, err = triage(exe, "diff", "--format", "json", *sides)
        check(rc == 0, f"renamed {what}: exit {rc} {err}")
        if rc != 0:
            continue
        st = json.loads(out)["stages"][0]
        groups = st.get("renamed", [])
        check(len(groups) == 1, f"renamed {what}: {len(groups)} groups")
        if groups:
            g = groups[0]
            want = sum(c["after_us"] for c in m["injected"] if c["change"] == "renamed_to")
            check(g["category"] == "gemm" and set(g["before_kernels"]) == gone
                  and set(g["after_kernels"]) == came and g["change"] == "slower"
                  and abs(g["after_us"] - want) <= 0.02 * want and abs(g["delta_pct"] - 60) < 5,
                  f"renamed {what}: group {g['category']} {g['change']} {g['delta_pct']}")
        rows = {k["name"]: k["change"] for k in st["kernels"]}
        check(not (gone | came) & set(rows), f"renamed {what}: renamed kernels still kernel rows")
        check(rows.get("triton_poi_fused_add_cat_mul_neg_slice_0") == "new"
              and "removed" in rows.values(), f"renamed {what}: the other new/removed rows were paired")
    rc, md, _ = triage(exe, "diff", b, a)
    check("### Kernels renamed: decode" in md and "| gemm | not linked | `Cijk_Alik_Bljk_BBS MT" in md
          and "and 2 more" in md, "renamed: Markdown lacks the renamed table")
    # the renamed group is the largest change (+60 % on three GEMMs): the first row of
    # "Biggest changes", with both sides' kernels, before the gate_up GEMM slowed 1.3x
    biggest = md.split("## Biggest changes")[1].split("\n## ")[0]
    first = next((l for l in biggest.splitlines() if l.startswith("| 1 |")), "")
    check(first.startswith("| 1 | decode | renamed: `Cijk_Alik_Bljk_BBS MT") and " and 2 more -> `" in first
          and "| gemm |" in first and first.endswith("| slower (regression) |"),
          f"renamed: not the first row of Biggest changes: {first!r}")


def gen_pair(source, tmp, name, *args):
    """A before/after pair from tools/make-diff-runs.py; (before dir, after dir, manifest)."""
    out = os.path.join(tmp, name)
    subprocess.run([sys.executable, os.path.join(source, "tools", "make-diff-runs.py"), "--out", out,
                    "--layers", "4", *args], check=True, capture_output=True)
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
        return os.path.join(out, "before"), os.path.join(out, "after"), json.load(f)


def check_twice_the_steps(exe, source, tmp):
    """The same program with twice the steps after: per step, within noise; the step counts
    shown and warned about; the CI gate passes (exit 0)."""
    b, a, _ = gen_pair(source, tmp, "steps", "--no-changes", "--steps", "3", "--after-steps", "6",
                       "--seed", "21")
    rc, out, err = triage(exe, "diff", "--fail-on", "regression", "--format", "json", b, a)
    check(rc == 0, f"twice the steps: exit {rc} {err}")
    if rc != 0 and not out:
        return
    d = json.loads(out)
    st = d["stages"][0]
    check(st["steps"] == {"before": 3, "after": 6, "per_step": True}, f"twice the steps: {st['steps']}")
    check(d["regressions"] == 0 and d["steps_differ"] == 1 and st["total"]["change"] == "same",
          f"twice the steps: regressions {d['regressions']}, total {st['total']}")
    slow = [k["name"][:50] for k in st["kernels"] if k["change"] == "slower"]
    check(not slow, f"twice the steps: kernels called slower {slow}")
    rc, md, _ = triage(exe, "diff", b, a)
    check("Warning: decode: the runs profiled different numbers of steps (3 before, 6 after)" in md
          and "Before (ms/step)" in md and "**Verdict: no regression beyond noise.**" in md,
          "twice the steps: Markdown lacks the step warning, the per-step unit or the verdict")


def check_attention_slowdown(exe, source, tmp):
    """Attention 1.5x slower: the first row, a regression; --fail-on regression exits 3 and
    still writes the report; without it, 0."""
    b, a, m = gen_pair(source, tmp, "attn", "--slow-kernel", r"^void paged_attention",
                       "--slow-factor", "1.5", "--seed", "22")
    rc, out, err = triage(exe, "diff", "--fail-on", "regression", "--format", "json", b, a)
    check(rc == 3, f"attention 1.5x: --fail-on regression exit {rc} (want 3) {err}")
    if out:
        d = json.loads(out)
        first = d["stages"][0]["kernels"][0]
        check(first["name"] == m["first_change"] and first["change"] == "slower"
              and abs(first["delta_pct"] - 50) < 3 and d["regressions"] >= 1,
              f"attention 1.5x: first row {first['name'][:50]} {first['change']} {first['delta_pct']}")
    rc, md, _ = triage(exe, "diff", b, a)
    check(rc == 0 and "**Verdict: " in md and "regression" in md.split("**Verdict: ")[1].split("\n")[0],
          f"attention 1.5x: plain diff exit {rc} or no verdict line")
    rc, _, err = triage(exe, "diff", "--fail-on", "maybe", b, a)
    check(rc == 2 and "--fail-on" in err, f"--fail-on maybe: exit {rc} {err!r}")


def check_dtype(exe, source, tmp):
    """The same eager prefill program with its GEMMs in bf16, then fp8 (aten::_scaled_mm):
    "The runs differ in" names the GEMM number format with both formats, from traces and
    from JSON reports; the same program in bf16 twice says nothing of it."""
    prefill = os.path.join(source, "tests", "data", "sources", "sglang-qwen3-8b-prefill.step.json.gz")
    b, a, m = gen_pair(source, tmp, "dtype", "--source", prefill, "--no-changes", "--steps", "2",
                       "--gemm-types", "bf16", "fp8", "--seed", "25")
    reports = []
    for side, path in (("b", b), ("a", a)):
        rep = os.path.join(tmp, f"dtype-{side}.json")
        rc, _, err = triage(exe, "--quiet", "--format", "json", "-o", rep, path)
        check(rc == 0, f"dtype: report {err}")
        reports.append(rep)
    for what, sides in (("traces", (b, a)), ("reports", tuple(reports))):
        rc, md, err = triage(exe, "diff", *sides)
        head = md.split("## Biggest changes")[0]
        check(rc == 0 and "The runs differ in: GEMM number format (bf16, 100 % of the GEMMs' roofline time "
              "-> fp8, 100 % of the GEMMs' roofline time)" in head,
              f"dtype {what}: the format change is not stated: {head[:600]!r}")
        rc, js, err = triage(exe, "diff", "--format", "json", *sides)
        ins = json.loads(js)["inputs"] if rc == 0 else {}
        check(ins and (ins["before"]["gemm_dtype"], ins["after"]["gemm_dtype"]) == ("bf16", "fp8"),
              f"dtype {what}: JSON inputs {[(k, v.get('gemm_dtype')) for k, v in ins.items()]}")
    b2, a2, _ = gen_pair(source, tmp, "dtype-same", "--source", prefill, "--no-changes", "--steps", "2",
                         "--gemm-types", "bf16", "bf16", "--seed", "25")
    rc, md, err = triage(exe, "diff", b2, a2)
    check(rc == 0 and "GEMM number format" not in md, f"dtype: bf16 twice states a format change ({rc} {err})")


def check_unsteady_steps(exe, source, tmp):
    """The same program, its after run's steps alternating 0.6x and 1.4x the work (batches of
    varying size): the spread of its work per step sets a floor over 20 %, so the stage's
    rows read "not resolved", never "within noise" or a regression, and the CI gate passes."""
    b, a, _ = gen_pair(source, tmp, "unsteady", "--no-changes", "--steps", "4",
                       "--after-step-scale", "0.6,1.4", "--seed", "9")
    rc, md, err = triage(exe, "diff", "--fail-on", "regression", b, a)
    check(rc == 0, f"unsteady steps: exit {rc} {err}")
    check("Not resolved: stage decode (floor" in md and "### Kernels not resolved: decode" in md
          and "| not resolved |" in md and "within noise |" not in md
          and "The after run's work per step (the kernel time launched in it less its "
              "collectives') ranges from" in md,
          "unsteady steps: rows under a floor over 20 % do not read not resolved")
    rc, out, _ = triage(exe, "diff", "--format", "json", b, a)
    fl = json.loads(out)["stages"][0]["noise_floor"] if rc == 0 else {}
    check(fl.get("resolves") is False and fl.get("pct", 0) > 20 and fl["spread"]["run"] == "after",
          f"unsteady steps: JSON floor {fl}")


def make_rank_set(source, out, *args):
    """An SGLang rank set made by tools/make-rank-set.py in out: its manifest's files by rank."""
    subprocess.run([sys.executable, os.path.join(source, "tools", "make-rank-set.py"), "--out", out,
                    "--framework", "sglang", *args], check=True, capture_output=True)
    with open(out + ".manifest.json", encoding="utf-8") as f:
        return json.load(f)["files"]


def check_not_comparable(exe, source, tmp):
    """Rank 0 of a TP 2 run against rank 0 of a TP 4 run (world size 2 -> 4): not
    comparable. --fail-on regression writes the report, then exits 4 with one line saying
    why (a gate must not pass such runs as "no regression"); without --fail-on, exit 0."""
    files = {}
    for n in (2, 4):
        out = os.path.join(tmp, f"world{n}")
        files[n] = os.path.join(out, make_rank_set(source, out, "--ranks", str(n), "--layers", "2",
                                                   "--decode-steps", "3", "--seed", "26")["0"])
    rc, md, err = triage(exe, "diff", "--fail-on", "regression", files[2], files[4])
    check(rc == 4 and "**Verdict: not comparable: the world size differs**" in md
          and err == "triage: diff: not comparable (the world size differs): --fail-on regression "
                     "cannot judge these runs (exit 4)\n",
          f"not comparable: --fail-on regression exit {rc} (want 4), stderr {err!r}")
    rc, js, err = triage(exe, "diff", "--fail-on", "regression", "--format", "json", files[2], files[4])
    check(rc == 4 and json.loads(js)["not_comparable"] == ["world_size"],
          f"not comparable: JSON with --fail-on exit {rc}")
    rc, _, err = triage(exe, "diff", files[2], files[4])
    check(rc == 0 and not err, f"not comparable without --fail-on: exit {rc} {err!r}")


def check_same_run_two_ranks(exe, source, tmp):
    """Two ranks of one run (a host-late rank makes the others wait): no regression row; the
    collectives' extra time is wait (a wait change or within noise). The diff says up front
    that the traces are of different ranks (review 11: rank 3 vs rank 1 went unsaid), its
    verdict counts no regression, and a --fail-on regression gate cannot judge them (exit 4,
    one line); without --fail-on, exit 0."""
    out = os.path.join(tmp, "two-ranks")
    files = make_rank_set(source, out, "--ranks", "4", "--layers", "4", "--decode-steps", "6",
                          "--late-rank", "2", "--late-us", "300", "--seed", "23")
    r0, r2 = os.path.join(out, files["0"]), os.path.join(out, files["2"])
    for (b, a), (rb, ra) in (((r0, r2), (0, 2)), ((r2, r0), (2, 0))):  # the late rank waits least
        rc, js, err = triage(exe, "diff", "--fail-on", "regression", "--format", "json", b, a)
        check(rc == 4 and err == f"triage: diff: the traces are of different ranks (rank {rb} -> rank "
              f"{ra}): --fail-on regression cannot judge these runs (exit 4)\n",
              f"same run, two ranks {os.path.basename(b)} -> {os.path.basename(a)}: exit {rc} {err}")
        if not js:
            continue
        d = json.loads(js)
        ins = d["inputs"]
        check(d["identity_differs"] == ["rank", "device"] and d["not_comparable"] == []
              and (ins["before"]["rank"], ins["after"]["rank"]) == (rb, ra)
              and ins["before"]["host"] == ins["after"]["host"] == "gpu-node-00"
              and (ins["before"]["device"], ins["after"]["device"]) == (rb, ra)
              and d["labels"]["slower"] == "slower",
              f"same run, two ranks: identity {d['identity_differs']} {ins['before']} {ins['after']}")
        rc, md, err = triage(exe, "diff", b, a)
        head = md.split("## Step time")[0]
        check(rc == 0 and not err and f"The traces are of different ranks: before is rank {rb} of 4 on "
              f"host gpu-node-00, GPU {rb}, after is rank {ra} of 4" in head
              and f"**Verdict: no regression counted: the traces are of different ranks (rank {rb} -> "
              f"rank {ra})**" in head and "(regression)" not in md,
              f"same run, two ranks: Markdown head {head[-900:]!r}")
        slow = [(k["name"][:40], k["change"]) for st in d["stages"] for k in st["kernels"]
                if k["change"] == "slower"]
        check(d["regressions"] == 0 and not slow, f"same run, two ranks: regressions {slow}")
        waits = [k for st in d["stages"] for k in st["kernels"] if k.get("before_wait_us") is not None]
        check(any(k["change"] in ("wait", "same") for k in waits),
              "same run, two ranks: no collective row carries its wait")
    check_same_rank(exe, out, r2)


def check_same_rank(exe, directory, r2):
    """triage diff --rank N reads rank N of a profile-directory side (the sentence on
    different ranks sends users to it, review 12: diff had no --rank): the directory
    against its own rank 2's trace is then the same rank, nothing slower, nothing said on
    identity; without --rank the directory's tables are rank 0's, another rank; a
    directory without the rank is one error line."""
    rc, js, err = triage(exe, "diff", "--quiet", "--rank", "2", "--format", "json", directory, r2)
    d = json.loads(js) if rc == 0 and js else {}
    ins = d.get("inputs", {})
    slow = [k["name"][:40] for st in d.get("stages", []) for k in st["kernels"] if k["change"] != "same"]
    check(rc == 0 and ins.get("before", {}).get("rank") == 2 and ins.get("after", {}).get("rank") == 2
          and d.get("identity_differs") == [] and d.get("regressions") == 0 and not slow,
          f"diff --rank 2 DIR RANK2: exit {rc} {err!r} identity {d.get('identity_differs')} changed {slow}")
    rc, md, err = triage(exe, "diff", "--quiet", directory, r2)
    check(rc == 0 and "The traces are of different ranks: before is rank 0 of 4" in md
          and "(triage diff --rank N reads rank N of a side that is a profile directory)" in md,
          f"diff DIR RANK2 without --rank: exit {rc} {err!r}")
    rc, _, err = triage(exe, "diff", "--quiet", "--rank", "9", directory, r2)
    check(rc == 1 and len(err.splitlines()) == 1 and "no trace of rank 9" in err,
          f"diff --rank 9 on a 4-rank directory: exit {rc} {err!r}")
    # a trace side is read as it is: rank 0 of the directory against rank 2's trace is said
    rc, md, err = triage(exe, "diff", "--quiet", "--rank", "0", directory, r2)
    check(rc == 0 and "The traces are of different ranks: before is rank 0 of 4" in md,
          f"diff --rank 0 DIR RANK2: exit {rc} {err!r}")
    # triage --rank N on a trace file of another rank is one line, not rank 2's report as N's
    rc, out, err = triage(exe, "--quiet", "--rank", "0", r2)
    check(rc == 1 and not out and err == f"triage: {r2}: the trace is of rank 2 (distributedInfo.rank), "
          "not rank 0 (--rank picks a rank of a profile directory)\n",
          f"triage --rank 0 RANK2: exit {rc} {err!r}")
    rc, out, err = triage(exe, "--quiet", "--rank", "2", r2)
    check(rc == 0 and out and not err, f"triage --rank 2 RANK2: exit {rc} {err!r}")


def check_directory_floor(exe, source, tmp):
    """Two profile directories: the floor comes from the spread across each rank's steps,
    rank r before with rank r after, never from the spread across ranks (review 13: the
    2-rank set against itself had a 16.6 % floor from its real rank imbalance); the diff
    says which ranks it compared, which only one run has, which a side could not read, and
    a --rank N read."""
    out = os.path.join(tmp, "imbalanced")
    files = make_rank_set(source, out, "--ranks", "4", "--layers", "2", "--decode-steps", "6",
                          "--slow-rank", "2", "--slowdown", "1.5", "--seed", "31")
    rc, js, err = triage(exe, "diff", "--quiet", "--format", "json", out, out)
    d = json.loads(js) if rc == 0 and js else {"stages": []}
    floors = [(st["stage"], st["noise_floor"]) for st in d["stages"]]
    check(rc == 0 and floors and all(nf["source"] != "ranks" and nf["pct"] < 10 for _, nf in floors),
          f"a 4-rank set (rank 2 1.5x slower) against itself: floors {floors} {err!r}")
    rc, md, err = triage(exe, "diff", "--quiet", out, out)
    check(rc == 0 and "Compared rank by rank: ranks 0-3 (each rank before" in md and "not compared" not in md,
          f"directory diff: the ranks compared are not said: {err!r}")
    # a rank only one run has is not compared, and said so
    three = os.path.join(tmp, "three-ranks")
    shutil.copytree(out, three)
    os.remove(os.path.join(three, files["3"]))
    rc, md, err = triage(exe, "diff", "--quiet", out, three)
    check(rc == 0 and "Compared rank by rank: ranks 0-2 (" in md
          and "; not compared, only before has it: rank 3." in md,
          f"directory diff, rank 3 before only: {err!r}")
    # a rank file the reader refuses: left out, and said so in every format
    cut = os.path.join(tmp, "cut-rank")
    shutil.copytree(out, cut)
    path = os.path.join(cut, files["1"])
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    rc, md, err = triage(exe, "diff", "--quiet", out, cut)
    check(rc == 0 and "The after directory's rank 1 could not be read" in md
          and "only before has it: rank 1" in md, f"directory diff, rank 1 unreadable after: {err!r}")
    rc, js, err = triage(exe, "diff", "--quiet", "--format", "json", out, cut)
    ins = json.loads(js)["inputs"] if rc == 0 and js else {}
    check(ins.get("after", {}).get("unread_ranks") == [1] and ins.get("before", {}).get("unread_ranks") == [],
          f"directory diff JSON: unread ranks {ins}")
    # --rank N: each directory read for rank N alone, said so
    rc, md, err = triage(exe, "diff", "--quiet", "--rank", "2", out, out)
    check(rc == 0 and "Both directories were read for rank 2 alone (triage diff --rank 2)" in md,
          f"diff --rank 2 of two directories: the other ranks not read is not said: {err!r}")
    rc, js, err = triage(exe, "diff", "--quiet", "--rank", "2", "--format", "json", out, out)
    ins = json.loads(js)["inputs"] if rc == 0 and js else {}
    check(ins.get("before", {}).get("only_rank") == 2 and ins.get("after", {}).get("only_rank") == 2,
          f"diff --rank 2 JSON: only_rank {ins}")
    shared = os.path.join(source, "..", "shared", "traces", "multi-rank", "hta_sampled_2ranks")
    if os.path.isdir(shared):  # review 13: 16.6 % from the two ranks' imbalance
        rc, js, err = triage(exe, "diff", "--quiet", "--format", "json", shared, shared)
        nf = json.loads(js)["stages"][0]["noise_floor"] if rc == 0 and js else {}
        check(nf.get("source") in ("packs", "steps", "rank_steps") and nf.get("pct", 99) < 16,
              f"hta_sampled_2ranks against itself: floor {nf}")


def main():
    exe, source = sys.argv[1:3]
    check_shared_pair(exe, source)
    check_pins(exe, source, "--regenerate" in sys.argv[3:])
    with tempfile.TemporaryDirectory() as tmp:
        check_twice_the_steps(exe, source, tmp)
        check_unsteady_steps(exe, source, tmp)
        check_attention_slowdown(exe, source, tmp)
        check_same_run_two_ranks(exe, source, tmp)
        check_renamed(exe, source, tmp)
        check_dtype(exe, source, tmp)
        check_not_comparable(exe, source, tmp)
        check_directory_floor(exe, source, tmp)
    check_ranks_json(exe, source)
    base = os.path.join(source, "tests", "data", "diff", "generated")
    with open(os.path.join(base, "manifest.json"), encoding="utf-8") as f:
        m = json.load(f)
    before, after = os.path.join(base, "before"), os.path.join(base, "after")
    rc, out, err = triage(exe, "diff", "--format", "json", before, after)
    check(rc == 0, f"diff exit {rc}: {err}")
    if rc == 0:
        d = json.loads(out)
        st = d["stages"][0]
        first = st["kernels"][0]
        check(first["name"] == m["first_change"], f"first row {first['name'][:60]}")
        check(first["change"] == "slower", f"first row change {first['change']}")
        rows = {k["name"]: k for k in st["kernels"]}
        injected = {i["canonical_name"] for i in m["injected"]}
        for inj in m["injected"]:
            r = rows.get(inj["canonical_name"])
            check(r is not None, f"{inj['canonical_name'][:60]} not reported")
            if r:
                check(r["change"] == inj["change"], f"{inj['canonical_name'][:60]}: {r['change']}")
                check(abs(r["delta_us"] - inj["delta_us"]) <= 0.02 * abs(inj["delta_us"]),
                      f"{inj['canonical_name'][:60]}: delta {r['delta_us']} vs {inj['delta_us']}")
        check(abs(st["total"]["delta_us"] - m["total_gpu_us"]["delta_us"]) <= 0.02 * abs(m["total_gpu_us"]["delta_us"]),
              f"total delta {st['total']['delta_us']} vs {m['total_gpu_us']['delta_us']}")
        noisy = [k["name"][:50] for k in st["kernels"] if k["name"] not in injected and k["change"] != "same"]
        check(not noisy, f"untouched kernels called changed: {noisy}")
        with tempfile.TemporaryDirectory() as tmp:
            jb, ja = os.path.join(tmp, "b.json"), os.path.join(tmp, "a.json")
            for src, dst in ((before, jb), (after, ja)):
                rc2, _, err2 = triage(exe, "--quiet", "--format", "json", "--output", dst, src)
                check(rc2 == 0, f"report of {src}: {err2}")
            rc3, out3, err3 = triage(exe, "diff", "--format", "json", jb, ja)
            check(rc3 == 0, f"diff of reports: {err3}")
            if rc3 == 0:
                d3 = json.loads(out3)
                check(d3["stages"] == d["stages"], "JSON-report sides differ from trace sides")
            check_overlaps(d, jb, ja)
            check_overlap_gone(exe, tmp, jb, ja)
            # the before side's JSON report: it has fusion rows (the after side has none)
            rc5, md, err5 = triage(exe, "bundle", before, after, jb)
            check(rc5 == 0, f"bundle: {err5}")
            check(md.startswith("# Triage bundle") and md.count("\n### ") == 3 and md.count("](#input-") == 3,
                  "bundle: contents or sections missing")
            # every section, the JSON report's too, has its kernel, overlap and fuse tables
            # with the changed kernel's row (display names: its tile size is in them)
            tile = next(w for w in m["first_change"].split("_") if w.startswith("MT"))
            for sec in md.split("\n### ")[1:]:
                check(tile in sec and "Kernels: decode" in sec and
                      "Overlap opportunities: decode" in sec and "Fusion opportunities: decode" in sec,
                      f"bundle: section {sec.splitlines()[0]} lacks its tables or kernel rows")
            jsec = next((sec for sec in md.split("\n### ")[1:]
                         if "(read back from a JSON report)" in sec), "")
            check("| O1 |" in jsec and "| F1 |" in jsec,
                  "bundle: the JSON report's section lacks its overlap or fuse rows")
            page = os.path.join(tmp, "bundle.html")
            rc7, _, err7 = triage(exe, "bundle", before, after, "-o", page)
            check(rc7 == 0, f"bundle -o bundle.html: {err7}")
            if rc7 == 0:
                with open(page, encoding="utf-8") as f:
                    html = f.read()
                check(html.startswith("<!DOCTYPE html>"), "bundle -o .html: not a page")
                for r in ("r0", "r1"):
                    check(f'href="#{r}"' in html and f'<article class="report" id="{r}">' in html,
                          f"bundle page: no contents entry or article {r}")
                    check(f'id="{r}-kt-' in html, f"bundle page: article {r} lacks its kernel table")
                check(m["first_change"][:40] in html, "bundle page: the changed kernel is missing")
            rc8, md8, _ = triage(exe, "bundle", "--format", "markdown", before, "-o", page)
            check(rc8 == 0 and open(page, encoding="utf-8").read().startswith("# Triage bundle"),
                  "bundle --format markdown -o X.html: the format word wins over the name")
            rc9, _, err9 = triage(exe, "bundle", "--format", "html", before, ja)
            check(rc9 == 1 and err9.count("\n") == 1 and "a.json" in err9,
                  f"HTML bundle with a JSON report: {rc9} {err9!r}")
            rc6, _, err6 = triage(exe, "bundle", before, os.path.join(tmp, "missing"))
            check(rc6 == 1 and err6.count("\n") == 1, f"bundle with a missing input: {rc6} {err6!r}")
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w", encoding="utf-8") as f:
                f.write("{\"x\": 1}")
            rc4, _, err4 = triage(exe, "diff", bad, ja)
            check(rc4 == 1 and err4.count("\n") == 1 and "bad.json" in err4, f"bad side: {rc4} {err4!r}")
            # a report reformatted (indent 2, same member order) is still a report
            with open(ja, encoding="utf-8") as f:
                doc = json.load(f)
            re_ja = os.path.join(tmp, "reformatted.json")
            with open(re_ja, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)
            rc10, out10, err10 = triage(exe, "diff", "--format", "json", jb, re_ja)
            check(rc10 == 0 and json.loads(out10)["stages"] == d3["stages"],
                  f"diff with a reformatted report: {rc10} {err10!r}")
            # a report past TR_MAX_SMALL_JSON_BYTES: one line naming the limit, not "not a
            # trace" (it used to be tried as a trace)
            big = os.path.join(tmp, "big.json")
            with open(big, "w", encoding="utf-8") as f:
                f.write('{\n\t"mode":\t"single-trace",\n\t"pad":\t"')
                f.write("x" * (64 * 1024 * 1024))
                f.write('"\n}\n')
            rc11, _, err11 = triage(exe, "diff", big, ja)
            check(rc11 == 1 and err11.count("\n") == 1 and "big.json" in err11 and
                  "TR_MAX_SMALL_JSON_BYTES" in err11, f"oversized report: {rc11} {err11!r}")
            rc12, _, err12 = triage(exe, "bundle", ja, big)
            check(rc12 == 1 and err12.count("\n") == 1 and "big.json" in err12 and
                  "TR_MAX_SMALL_JSON_BYTES" in err12, f"bundle, oversized report: {rc12} {err12!r}")
    for f in FAILS:
        print("FAIL", f)
    print("FAIL" if FAILS else "PASS", f"{len(FAILS)} problems")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
