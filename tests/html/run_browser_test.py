#!/usr/bin/env python3
"""HTML report tests (python3 stdlib; the browser part runs tests/html/browser_check.mjs).

usage: run_browser_test.py browser --triage BIN --source DIR --out DIR [--shared DIR]
       run_browser_test.py csp --source DIR --csp-file FILE

browser: builds pages with `triage --format html` and drives them in headless Chromium:
  - sample:  tests/data/llama_tp2;
  - hostile: the same trace with <script>, "onerror= and other payloads in kernel
             names, Python frames and the model name (the XSS probe);
  - escape:  tests/data/escape/hostile.trace.json (the generated hostile-names trace);
  - perf:    make_wide_trace.py's 5,000 distinct kernels (sorting must take < 200 ms);
  - selfcheck: the hostile page made unsafe on purpose (CSP removed, one raw payload, a
             console error): the harness must report xss, network and console failures;
  - ranks:   tests/data/ranks/sglang-decode-slow2-tp4 (the Ranks section, a straggler);
  - with ../shared: one page per shared real trace (each under 2 MB; every summary
             evidence link resolves, and on the EVIDENCE_KINDS traces idle and wait rows
             of the time account are among them) and the multi-rank directory.
  - diff:    `triage diff` on tests/data/diff/generated (and the shared pair);
  - bundle:  `triage bundle -o bundle.html` of the sample, the rank set and the diff pair
             (with ../shared: of every shared real trace instead).
  Screenshots go to OUT/*.png.
  Exit 77 (skip, with a loud message) when Chromium, node or playwright-core is missing.
csp: the Content-Security-Policy the build embedded (cmake/embed-html.cmake computes
  base64 SHA-256 in CMake) equals the one computed here with hashlib.
"""
import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "window.__triage_xss"
# Checks the sample and 5,000-row pages must exercise (not n/a): see browser_check.mjs.
REQUIRED = ["rows", "sort", "filter", "details", "copy", "evidence", "summary", "xss", "network",
            "console"]
# Shared traces whose summary must link idle and wait rows of the time account (the
# "evidence" check: every link resolves, and these kinds are among them).
EVIDENCE_KINDS = {"hta_async_cpu_to_gpu_a100": ["idle", "wait"], "hta_ddp_nccl_a100": ["idle", "wait"]}
# Text of tests/data/escape/hostile.trace.json that must show on its page as text.
ESCAPE_TEXT = "<script>alert(1)</script>"
PAYLOADS = [
    f"<script>{MARK}=1;alert(1)</script>",
    f"\"><img src=x onerror=\"{MARK}=2;alert(2)\">",
    f"'><svg onload='{MARK}=3'>",
    f"</style></script><script>{MARK}=4</script>",
    f"\u2028javascript:{MARK}=5\u0001",
]


def loud_skip(why):
    bar = "!" * 78
    print(f"{bar}\nSKIPPED: HTML browser test: {why}\n{bar}")
    return SKIP


def hostile_copy(src_dir, dst_dir):
    """The sample trace with payloads in kernel names, Python frames and the model."""
    os.makedirs(dst_dir, exist_ok=True)
    with open(os.path.join(src_dir, "llama_tp2.trace.json"), encoding="utf-8") as fh:
        trace = json.load(fh)
    renamed = {}
    for ev in trace["traceEvents"]:
        if ev.get("cat") == "kernel":
            name = ev["name"]
            if name not in renamed and len(renamed) < len(PAYLOADS):
                renamed[name] = name + PAYLOADS[len(renamed)]
            ev["name"] = renamed.get(name, name)
        elif ev.get("cat") == "python_function" and "layernorm.py" in ev.get("name", ""):
            ev["name"] = ev["name"] + PAYLOADS[1]
    with open(os.path.join(dst_dir, "hostile.trace.json"), "w", encoding="utf-8") as fh:
        json.dump(trace, fh)
    with open(os.path.join(src_dir, "server_args.json"), encoding="utf-8") as fh:
        args = json.load(fh)
    args["model_path"] = "meta-llama/" + PAYLOADS[0]
    with open(os.path.join(dst_dir, "server_args.json"), "w", encoding="utf-8") as fh:
        json.dump(args, fh)
    return dst_dir


def triage_html(args, inputs, page, extra=(), prefix=False):
    """The page as triage writes it: `-o PAGE.html` picks the HTML format. prefix: inputs
    start with a sub-command word (diff), whose options follow it."""
    cmd = ([args.triage, *inputs, "-o", page] if prefix else
           [args.triage, "--quiet", *extra, "-o", page] + inputs)
    r = subprocess.run(cmd, cwd=args.source, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
    return page


def broken_copy(page, out):
    """The page made unsafe on purpose, so the harness proves it sees each failure: no
    CSP, one payload written raw (an onerror that runs), a script logging an error."""
    with open(page, encoding="utf-8") as fh:
        text = fh.read()
    csp = text.index('<meta http-equiv="Content-Security-Policy"')
    text = text[:csp] + text[text.index(">", csp) + 1:]
    raw = (f'<p><img src="https://example.invalid/x.png" onerror="{MARK}=9">'
           '<script>console.error("self-check: this page is broken on purpose")</script></p>')
    text = text.replace("<main>", "<main>" + raw, 1)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return out


PAGE_BUDGET = 2 * 1024 * 1024  # the largest shared trace's page stays under 2 MB (issue 13)


def shared_pages(args, out, pages):
    real = os.path.join(args.shared, "traces", "real")
    names = sorted(f for f in os.listdir(real) if f.endswith((".json", ".json.gz")))
    too_big = []
    for f in names:
        base = f.split(".json")[0]
        page = triage_html(args, [os.path.join(real, f)], os.path.join(out, f"shared-{base}.html"))
        if os.path.getsize(page) >= PAGE_BUDGET:
            too_big.append(f"{page}: {os.path.getsize(page)} bytes")
        # One page per shared trace, for its screenshot; the interactive checks run on
        # the sample pages and the Ranks, diff and bundle pages.
        spec = {"page": page, "screenshot": os.path.join(out, f"shared-{base}.png"),
                "checks": ["rows", "evidence", "xss"]}
        if base in EVIDENCE_KINDS:
            spec.update(require=["evidence"], evidence_kinds=EVIDENCE_KINDS[base])
        pages.append(spec)
    if too_big:
        raise RuntimeError("pages over the 2 MB budget: " + "; ".join(too_big))
    absent = [b for b in EVIDENCE_KINDS if not any(f.startswith(b + ".json") for f in names)]
    if absent:
        raise RuntimeError("shared traces the evidence check needs are missing: " + ", ".join(absent))
    ranks_dir = os.path.join(args.shared, "traces", "multi-rank", "hta_sampled_2ranks")
    if os.path.isdir(ranks_dir):
        pages.append({"page": triage_html(args, [ranks_dir], os.path.join(out, "multi-rank.html")),
                      "screenshot": os.path.join(out, "multi-rank.png"), "checks": ["rows", "sort", "xss"]})
    diff_dir = os.path.join(args.shared, "traces", "diff", "hta_control_vs_test")
    if os.path.isdir(diff_dir):
        pages.append({"page": triage_html(args, ["diff", os.path.join(diff_dir, "control.json.gz"),
                                                 os.path.join(diff_dir, "test.json.gz")],
                                          os.path.join(out, "diff-shared.html"), prefix=True),
                      "screenshot": os.path.join(out, "diff-shared.png"), "checks": ["rows", "sort", "xss"]})
    pages.append(bundle_page(args, out, [os.path.join(real, f) for f in names]))


def bundle_page(args, out, inputs):
    """The page `triage bundle` writes: contents grouped by model and framework, one
    article per input (each article's ids prefixed rN-)."""
    page = triage_html(args, ["bundle", *inputs], os.path.join(out, "bundle.html"), prefix=True)
    return {"page": page, "screenshot": os.path.join(out, "bundle.png"),
            "require": ["rows", "sort", "filter", "xss", "network", "console"]}


def ensure_playwright(source):
    tools = os.path.join(source, "tools")
    if os.path.isdir(os.path.join(tools, "node_modules", "playwright-core")):
        return True
    if not shutil.which("npm"):
        return False
    print("html test: installing tools/node_modules (npm ci; playwright-core downloads no browser)")
    r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=tools)
    return r.returncode == 0 and os.path.isdir(os.path.join(tools, "node_modules", "playwright-core"))


def browser(args):
    chromium = os.environ.get("TRIAGE_CHROMIUM", "/usr/bin/chromium")
    if not os.path.exists(chromium):
        return loud_skip(f"no Chromium at {chromium}; tools/install-deps.sh --with-tests installs "
                         "Debian's chromium")
    if not shutil.which("node"):
        return loud_skip("node is not installed (tools/install-deps.sh --with-tests)")
    if not ensure_playwright(args.source):
        return loud_skip("playwright-core is missing from tools/node_modules and npm ci failed")
    started = time.monotonic()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    r = subprocess.run([args.triage, "--version"], stdout=subprocess.PIPE, text=True)
    args.version = (r.stdout.split() or ["unknown"])[-1]  # "triage 0.1.0" -> "0.1.0"
    data = os.path.join(args.source, "tests", "data", "llama_tp2")
    hostile = triage_html(args, [hostile_copy(data, os.path.join(out, "hostile"))],
                          os.path.join(out, "hostile.html"))
    wide = os.path.join(out, "wide-5000.json")
    subprocess.run([sys.executable, os.path.join(HERE, "make_wide_trace.py"), "-n", "5000", "-o", wide],
                   check=True)
    pages = [
        {"page": triage_html(args, [data], os.path.join(out, "sample.html")),
         "screenshot": os.path.join(out, "sample.png"), "require": REQUIRED},
        {"page": hostile, "screenshot": os.path.join(out, "hostile.png"), "xss_text": PAYLOADS[0]},
        {"page": triage_html(args, [os.path.join(args.source, "tests", "data", "escape", "hostile.trace.json")],
                             os.path.join(out, "escape.html")),
         "screenshot": os.path.join(out, "escape.png"), "xss_text": ESCAPE_TEXT,
         "require": ["rows", "sort", "filter", "copy", "xss", "network", "console"]},
        # --min-share puts about half of the rows under the bar (class "minor"), as on a
        # real table; the check sorts all 5,000 and the cap lays out 100.
        {"page": triage_html(args, [wide], os.path.join(out, "perf-5000.html"), ["--min-share", "0.02"]),
         "min_rows": 5000, "perf": True,
         "require": ["rows", "sort", "filter", "copy", "xss", "network", "console", "perf"],
         "screenshot": os.path.join(out, "perf-5000.png")},
        # A generated 4-rank set (rank 2 slowed): the Ranks section with its straggler.
        {"page": triage_html(args, [os.path.join(args.source, "tests", "data", "ranks", "sglang-decode-slow2-tp4")],
                             os.path.join(out, "ranks.html")),
         "screenshot": os.path.join(out, "ranks.png"),
         "require": ["rows", "sort", "filter", "copy", "summary", "xss", "network", "console"]},
        # triage diff on the generated pair (a slower GEMM, a kernel gone, one new).
        {"page": triage_html(args, ["diff"] + [os.path.join(args.source, "tests", "data", "diff", "generated", side)
                                               for side in ("before", "after")],
                             os.path.join(out, "diff.html"), prefix=True),
         "screenshot": os.path.join(out, "diff.png"),
         "require": ["rows", "sort", "filter", "copy", "xss", "network", "console"]},
        {"page": broken_copy(hostile, os.path.join(out, "selfcheck-broken.html")),
         "expect_fail": ["xss", "network", "console"], "xss_text": PAYLOADS[0]},
    ]
    if args.shared and os.path.isdir(os.path.join(args.shared, "traces", "real")):
        shared_pages(args, out, pages)
    else:
        print("html test: no ../shared tree; the shared-trace pages are left out")
        pages.append(bundle_page(args, out, [data, os.path.join(args.source, "tests", "data", "ranks",
                                                                "sglang-decode-slow2-tp4")] +
                                 [os.path.join(args.source, "tests", "data", "diff", "generated", side)
                                  for side in ("before", "after")]))
    manifest = os.path.join(out, "manifest.json")
    with open(manifest, "w", encoding="utf-8") as fh:
        json.dump(pages, fh, indent=1)
    print(f"html test: {len(pages)} pages built in {time.monotonic() - started:.1f} s")
    env = dict(os.environ, TRIAGE_CHROMIUM=chromium)
    return subprocess.run(["node", os.path.join(HERE, "browser_check.mjs"), manifest], env=env).returncode


def csp(args):
    tdir = os.path.join(args.source, "src", "report", "html")

    def h(name):
        with open(os.path.join(tdir, name), "rb") as fh:
            return "'sha256-" + base64.b64encode(hashlib.sha256(fh.read()).digest()).decode() + "'"
    want = (f"default-src 'none'; script-src {h('report.js')}; style-src {h('report.css')}; "
            "img-src data:; base-uri 'none'; form-action 'none'")
    with open(args.csp_file, encoding="utf-8") as fh:
        got = fh.read().strip()
    if got != want:
        print(f"embedded CSP differs from hashlib's:\n  embedded: {got}\n  hashlib:  {want}")
        return 1
    print(f"ok: embedded CSP matches: {got}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["browser", "csp"])
    ap.add_argument("--triage")
    ap.add_argument("--source", required=True)
    ap.add_argument("--out", default="build/html")
    ap.add_argument("--shared")
    ap.add_argument("--csp-file")
    args = ap.parse_args()
    if args.mode == "csp":
        return csp(args)
    if args.shared is None:
        args.shared = os.path.join(args.source, "..", "shared")
    return browser(args)


if __name__ == "__main__":
    sys.exit(main())
