#!/usr/bin/env python3
"""HTML report tests (python3 stdlib; the browser part runs tests/html/browser_check.mjs).

usage: run_browser_test.py browser --triage BIN --source DIR --out DIR [--shared DIR]
       run_browser_test.py csp --source DIR --csp-file FILE

browser: builds pages and drives them in headless Chromium:
  - sample:  tests/data/llama_tp2, with a Ranks section;
  - hostile: the same trace with <script>, "onerror= and other payloads in kernel
             names, Python frames and the model name (the XSS probe);
  - perf:    the sample padded to 5,000 kernel rows (sorting must take < 200 ms);
  - selfcheck: a page broken on purpose (no CSP, one raw payload, a console error):
             the harness must report xss, network and console failures on it;
  - with ../shared: one page per shared real trace, the multi-rank directory (Ranks),
             the diff pair and a bundle of all real traces.
  Until `triage --format html` exists the pages come from `triage --format json` through
  the fixture builder make_fixture_page.py. Screenshots go to OUT/*.png.
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
REQUIRED = ["rows", "sort", "filter", "details", "copy", "summary", "xss", "network", "console"]
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


def triage_json(args, inputs, out):
    cmd = [args.triage, "--quiet", "--format", "json", "--output", out] + inputs
    r = subprocess.run(cmd, cwd=args.source, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
    return out


def build_page(args, mode, inputs, page, extra=()):
    cmd = [sys.executable, os.path.join(HERE, "make_fixture_page.py"), mode, *inputs, "-o", page,
           "--templates", os.path.join(args.source, "src", "report", "html"),
           "--rules-dir", os.path.join(args.source, "rules"), "--version", args.version,
           "--command", f"triage --format json {' '.join(os.path.basename(i) for i in inputs)}", *extra]
    subprocess.run(cmd, check=True)
    return page


def shared_pages(args, out, pages):
    real = os.path.join(args.shared, "traces", "real")
    names = sorted(f for f in os.listdir(real) if f.endswith((".json", ".json.gz")))
    reports = []
    for f in names:
        base = f.split(".json")[0]
        rep = triage_json(args, [os.path.join(real, f)], os.path.join(out, f"shared-{base}.json"))
        reports.append(rep)
        # One page per shared trace, for its screenshot; the interactive checks run on
        # the sample pages, the Ranks, diff and bundle pages.
        pages.append({"page": build_page(args, "report", [rep], os.path.join(out, f"shared-{base}.html")),
                      "screenshot": os.path.join(out, f"shared-{base}.png"), "checks": ["rows", "xss"]})
    ranks_dir = os.path.join(args.shared, "traces", "multi-rank", "hta_sampled_2ranks")
    if os.path.isdir(ranks_dir):
        reps = [triage_json(args, [os.path.join(ranks_dir, f)], os.path.join(out, f"rank-{i}.json"))
                for i, f in enumerate(sorted(os.listdir(ranks_dir)))]
        pages.append({"page": build_page(args, "report", [reps[0]], os.path.join(out, "ranks.html"),
                                         ["--ranks", *reps]), "screenshot": os.path.join(out, "ranks.png")})
    diff_dir = os.path.join(args.shared, "traces", "diff", "hta_control_vs_test")
    if os.path.isdir(diff_dir):
        b = triage_json(args, [os.path.join(diff_dir, "control.json.gz")], os.path.join(out, "diff-before.json"))
        a = triage_json(args, [os.path.join(diff_dir, "test.json.gz")], os.path.join(out, "diff-after.json"))
        pages.append({"page": build_page(args, "diff", [b, a], os.path.join(out, "diff.html")),
                      "screenshot": os.path.join(out, "diff.png")})
    pages.append({"page": build_page(args, "bundle", reports, os.path.join(out, "bundle.html")),
                  "screenshot": os.path.join(out, "bundle.png")})


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
    sample = triage_json(args, [data], os.path.join(out, "sample.json"))
    hostile = triage_json(args, [hostile_copy(data, os.path.join(out, "hostile"))],
                          os.path.join(out, "hostile.json"))
    pages = [
        {"page": build_page(args, "report", [sample], os.path.join(out, "sample.html"),
                            ["--ranks", sample, sample]), "screenshot": os.path.join(out, "sample.png"),
         "require": REQUIRED},
        {"page": build_page(args, "report", [hostile], os.path.join(out, "hostile.html")),
         "screenshot": os.path.join(out, "hostile.png"), "xss_text": PAYLOADS[0]},
        {"page": build_page(args, "report", [sample], os.path.join(out, "perf-5000.html"),
                            ["--pad-kernels", "5000"]), "min_rows": 5000, "perf": True,
         "require": REQUIRED + ["perf"],
         "screenshot": os.path.join(out, "perf-5000.png")},
        {"page": build_page(args, "report", [hostile], os.path.join(out, "selfcheck-broken.html"),
                            ["--broken-for-selfcheck"]),
         "expect_fail": ["xss", "network", "console"], "xss_text": PAYLOADS[0]},
    ]
    if args.shared and os.path.isdir(os.path.join(args.shared, "traces", "real")):
        shared_pages(args, out, pages)
    else:
        print("html test: no ../shared tree; the shared-trace pages are left out")
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
