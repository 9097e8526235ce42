#!/usr/bin/env python3
"""README.md says what the binary does (stdlib only).

usage: run_readme.py --triage BIN --source DIR

- "the N fusion patterns": N is the count `triage rules list` gives for the default packs.
- Every fenced block holding "$ triage ..." lines is run: each "$ " line is a shell
  command (`triage` is BIN; run in a scratch directory where tests/ is the source
  tree's), and the lines after it up to the next "$ " are what it prints, in order. A
  line "..." stands for lines left out; inside a line, "..." for text left out: the
  output line must start with the text before the first "..." and hold the other pieces
  in order. A sample line that starts with a space continues the one before it (a long
  output line wrapped for reading).
Exit 0 when every sample holds, 1 with one line per mismatch.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def pattern_count(args):
    out = subprocess.run([args.triage, "rules", "list"], capture_output=True, text=True,
                         check=True).stdout
    return sum(int(n) for n in re.findall(r"(\d+) fusion patterns", out))


def samples(readme):
    """(line number, command, [sample lines]) of every $ line in a fenced block."""
    found, block, cmd = [], False, None
    for no, line in enumerate(readme.splitlines(), 1):
        if line.startswith("```"):
            if cmd:
                found.append(cmd)
            block, cmd = not block, None
        elif block and line.startswith("$ "):
            if cmd:
                found.append(cmd)
            cmd = (no, line[2:], [])
        elif block and cmd and line.startswith(" ") and cmd[2]:
            cmd[2][-1] += " " + line.strip()
        elif block and cmd:
            cmd[2].append(line)
    return found


def line_matches(sample, line):
    pieces = [p.strip() for p in sample.split("...")]
    if not line.startswith(pieces[0]):
        return False
    at = len(pieces[0])
    for p in pieces[1:]:
        if not p:
            continue
        at = line.find(p, at)
        if at < 0:
            return False
        at += len(p)
    return True


def check(no, command, expected, out):
    lines, at = out.splitlines(), 0
    for want in expected:
        if want.strip() in ("", "..."):
            continue
        while at < len(lines) and not line_matches(want, lines[at]):
            at += 1
        if at == len(lines):
            FAILS.append(f"README.md:{no}: `{command}` prints no line like: {want}")
            return
        at += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--triage", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    args.triage = os.path.abspath(args.triage)
    with open(os.path.join(args.source, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    m = re.search(r"the (\d+) fusion patterns", readme)
    n = pattern_count(args)
    if not m or int(m.group(1)) != n:
        FAILS.append(f"README.md: says {m.group(1) if m else 'no number of'} fusion patterns, "
                     f"the default packs hold {n}")
    scratch = tempfile.mkdtemp(prefix="triage-readme-")
    try:
        os.symlink(os.path.join(os.path.abspath(args.source), "tests"),
                   os.path.join(scratch, "tests"))
        bindir = os.path.join(scratch, "bin")
        os.mkdir(bindir)
        os.symlink(args.triage, os.path.join(bindir, "triage"))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        runs = samples(readme)
        for no, command, expected in runs:
            p = subprocess.run(["sh", "-c", command], cwd=scratch, env=env,
                               capture_output=True, text=True)
            if p.returncode != 0:
                FAILS.append(f"README.md:{no}: `{command}` exits {p.returncode}: {p.stderr[-300:]}")
                continue
            check(no, command, expected, p.stdout)
    finally:
        shutil.rmtree(scratch)
    for f in FAILS:
        print(f)
    if FAILS:
        return 1
    print(f"README.md: {n} fusion patterns, {len(runs)} sample commands hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
