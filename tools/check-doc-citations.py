#!/usr/bin/env python3
"""Every document the code cites is in the repository (stdlib only).

usage: check-doc-citations.py SOURCE_ROOT [--pending FILE...]

Scans the C, Python and shell files under src/, engine/, tools/ and tests/ of
SOURCE_ROOT: each "docs/NAME.md" they name must exist, and none may cite
reference-triage.md, the study of the reference tool that lives outside the repository
(docs/reference.md carries the facts the code follows, numbered alike). --pending lists
files (relative to SOURCE_ROOT) that still cite it, to be reworded when the files are
moved; a listed file that no longer does is reported, so the list only shrinks.
Exit 0 when clean, 1 with one line per finding.
"""
import os
import re
import sys

CITED = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)")
OUTSIDE = "reference-triage.md"
EXTENSIONS = (".c", ".h", ".py", ".sh")


def files(root):
    for top in ("src", "engine", "tools", "tests"):
        for dirpath, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d != "node_modules"]
            for name in sorted(names):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(dirpath, name)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    root = args[0]
    pending = set(args[2:]) if args[1:2] == ["--pending"] else set()
    me = os.path.relpath(os.path.abspath(__file__), os.path.abspath(root))
    bad, still = 0, set()
    for path in files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for no, line in enumerate(text.splitlines(), 1):
            for m in CITED.finditer(line):
                if m.group(1) != "NAME.md" and not os.path.exists(
                        os.path.join(root, "docs", m.group(1))):
                    print(f"{rel}:{no}: cites docs/{m.group(1)}, which the repository lacks")
                    bad += 1
            if OUTSIDE in line and rel != me:
                if rel in pending:
                    still.add(rel)
                else:
                    print(f"{rel}:{no}: cites {OUTSIDE} (not in the repository): cite "
                          f"docs/reference.md, or say it")
                    bad += 1
    for rel in sorted(pending - still):
        print(f"--pending {rel}: cites {OUTSIDE} no more; drop it from the list")
        bad += 1
    if bad:
        print(f"{bad} citation(s) to fix")
        return 1
    print(f"citations ok ({len(pending)} files pending rewording)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
