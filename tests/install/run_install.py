#!/usr/bin/env python3
"""Install test (stdlib only): `cmake --install BUILD --prefix TMP`, then from another
directory run the installed binary on the sample trace and check that

  - it finds its installed rule packs (no TRIAGE_RULES_DIR) and prints the default layout;
  - every installed pack's "$schema=..." line resolves to an installed file;
  - the man page is installed and every docs/NAME.md it names is in the doc directory.

usage: run_install.py --build BUILD --source SOURCE
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    src = os.path.abspath(a.source)
    errs = []
    with tempfile.TemporaryDirectory() as prefix, tempfile.TemporaryDirectory() as elsewhere:
        p = subprocess.run(["cmake", "--install", a.build, "--prefix", prefix],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            print(p.stdout.decode(errors="replace"))
            return 1
        env = {k: v for k, v in os.environ.items() if k != "TRIAGE_RULES_DIR"}
        binary = os.path.join(prefix, "bin", "triage")
        r = subprocess.run([binary, "--quiet", os.path.join(src, "tests/data/llama_tp2")],
                           cwd=elsewhere, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = r.stdout.decode(errors="replace")
        if r.returncode != 0 or not out.startswith("# Triage report\n") or "## What to try first" not in out:
            errs.append(f"installed triage: exit {r.returncode}: {r.stderr.decode(errors='replace')[:300]}")
        share = os.path.join(prefix, "share", "triage")
        packs = 0
        for root, _, files in os.walk(os.path.join(share, "rules")):
            for f in files:
                if not f.endswith(".yaml"):
                    continue
                packs += 1
                path = os.path.join(root, f)
                m = re.search(r"\$schema=(\S+)", open(path, encoding="utf-8").readline())
                if not m:
                    errs.append(f"{path}: no $schema line")
                elif not os.path.isfile(os.path.normpath(os.path.join(root, m.group(1)))):
                    errs.append(f"{path}: $schema {m.group(1)} does not resolve")
        if packs == 0:
            errs.append("no rule packs installed")
        man = os.path.join(prefix, "share", "man", "man1", "triage.1")
        if not os.path.isfile(man):
            errs.append("man page not installed")
        else:
            docdir = os.path.join(prefix, "share", "doc", "triage")
            for name in sorted(set(re.findall(r"docs/([\w-]+\.md)", open(man, encoding="utf-8").read()))):
                if not os.path.isfile(os.path.join(docdir, name)):
                    errs.append(f"man page names docs/{name}, not installed in {docdir}")
        print(f"{packs} packs installed")
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
