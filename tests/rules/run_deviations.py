#!/usr/bin/env python3
"""docs/deviations.md and rules/compat/reference.yaml list the same deviations.

usage: run_deviations.py SOURCE_DIR

Every deviation of docs/deviations.md (a heading "### ID - title") must have exactly one
line "- Compat: restored ..." or "- Compat: not restored: REASON" (a reason is required).
The compat pack names what it undoes on comment lines "# restores: ID, ID (...)". The IDs
the docs call restored and the IDs the pack restores must be the same set, and the pack
may name no ID the docs do not define.
"""
import os
import re
import sys


def doc_deviations(path):
    """{id: (restored, reason)}; problems appended to a list."""
    text = open(path, encoding="utf-8").read()
    parts = re.split(r"^### ([A-Z]+\d+) - .*$", text, flags=re.M)
    out, problems = {}, []
    for i in range(1, len(parts), 2):
        ident, body = parts[i], parts[i + 1].split("\n## ")[0]
        lines = [l for l in body.splitlines() if l.startswith("- Compat:")]
        if len(lines) != 1:
            problems.append(f"{ident}: {len(lines)} '- Compat:' lines, want 1")
            continue
        m = re.match(r"- Compat: (restored|not restored)(.*)$", lines[0])
        if not m:
            problems.append(f"{ident}: cannot read {lines[0]!r}")
            continue
        reason = m.group(2).lstrip(": ").strip()
        if m.group(1) == "not restored" and len(reason) < 10:
            problems.append(f"{ident}: 'not restored' needs its reason")
        if ident in out:
            problems.append(f"{ident}: defined twice")
        out[ident] = (m.group(1) == "restored", reason)
    return out, problems


def pack_restores(path):
    ids = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*#\s*restores:\s*(.*)$", line)
        if m:
            head = re.split(r"\(", m.group(1))[0]
            ids |= {t for t in re.findall(r"[A-Z]+\d+", head)}
    return ids


def main():
    src = sys.argv[1]
    docs, problems = doc_deviations(os.path.join(src, "docs", "deviations.md"))
    pack = pack_restores(os.path.join(src, "rules", "compat", "reference.yaml"))
    restored = {i for i, (r, _) in docs.items() if r}
    for i in sorted(restored - pack):
        problems.append(f"{i}: docs say restored, the compat pack has no '# restores: {i}'")
    for i in sorted(pack - restored):
        what = "not restored" if i in docs else "not defined"
        problems.append(f"{i}: the compat pack restores it, docs/deviations.md says {what}")
    for p in problems:
        print("FAIL " + p)
    print(f"{len(docs)} deviations ({len(restored)} restored by the compat pack), "
          f"{len(problems)} problems")
    return 1 if problems or not docs else 0


if __name__ == "__main__":
    sys.exit(main())
