#!/usr/bin/env python3
"""Every candidate fused path a fusion pattern cites is one its framework's tree has.

usage: run_candidate_paths.py SOURCE_DIR

Review 15 defect 2: a fusion row's Candidate fused path column is a path the reader opens
in the framework's repository, so each one must have been looked up there. A path (a
first word with a '/' and a file extension) in a fusion pack's candidate_paths or
framework_paths must be listed in tests/rules/candidate-paths.tsv for its framework, with
the repository and how it was verified; an entry the packs no longer cite is stale.
Anything else in the column (an op name, "PR #N", a recipe) is no path and is not
checked. The compat pack restores the reference's paths and is not read.
"""
import os
import re
import sys

PATH = re.compile(r"^[\w.+-]+(/[\w.+-]+)+\.\w+$")


def cited(pack):
    """[(framework, path, line)] of one pack's fusion patterns."""
    out, fw, in_list = [], None, False
    for n, line in enumerate(open(pack, encoding="utf-8"), 1):
        text = line.split(" #")[0].rstrip()
        m = re.match(r"^  - id: ", text)
        if m:
            fw, in_list = None, False
            continue
        m = re.match(r"^    framework: (\S+)", text)
        if m:
            fw = m.group(1)
            continue
        if re.match(r"^    candidate_paths:", text):
            in_list = True
            continue
        m = re.match(r'^      - "([^"]+)"', text)
        if in_list and m:
            out.append((fw, m.group(1).split()[0], n))
            continue
        m = re.match(r'^      (\w+): \[(.*)\]$', text)
        if m and not in_list:  # framework_paths: {framework id: [path, ...]}
            for p in re.findall(r'"([^"]+)"', m.group(2)):
                out.append((m.group(1), p.split()[0], n))
            continue
        if re.match(r"^    \w", text):
            in_list = False
    return [c for c in out if PATH.match(c[1])]


def main(src):
    rules = os.path.join(src, "rules")
    listed, problems = {}, []
    tsv = os.path.join(src, "tests", "rules", "candidate-paths.tsv")
    for n, line in enumerate(open(tsv, encoding="utf-8"), 1):
        if line.startswith("#") or not line.strip():
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) != 4 or not all(c.strip() for c in cols):
            problems.append(f"{tsv}:{n}: want framework, repository, path, how verified")
            continue
        listed[(cols[0], cols[2])] = n
    used = set()
    for name in sorted(os.listdir(rules)):
        if not (name.endswith(".yaml") and "fusion" in name):
            continue
        pack = os.path.join(rules, name)
        for fw, path, n in cited(pack):
            key = (fw or "any", path)
            used.add(key)
            if key not in listed:
                problems.append(f"{pack}:{n}: candidate path {path!r} ({key[0]}) was never "
                                "verified in its framework's tree (tests/rules/candidate-paths.tsv)")
    for key, n in listed.items():
        if key not in used:
            problems.append(f"{tsv}:{n}: {key[1]!r} ({key[0]}) is cited by no pack")
    if not used:
        problems.append("no candidate path read: the pack layout changed?")
    for p in problems:
        print(p)
    print(f"{len(used)} candidate paths, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
