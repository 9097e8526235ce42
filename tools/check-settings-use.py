#!/usr/bin/env python3
"""No C file outside the settings table names a pack setting (stdlib only).

usage: check-settings-use.py SETTINGS_H DIR...

Reads the keys of the settings table (the TE_SETTINGS rows of SETTINGS_H) and scans every
.c/.h file under the DIRs (SETTINGS_H itself excepted): a string literal naming a setting
("overlap.min_share_pct", "overlap.weight.%s", or any "<group>." of the table) means C
looks a setting up by name, which is where a default value would hide; code reads the
resolved te_settings members instead. Exit 0 when clean, 1 with one line per finding.
"""
import os
import re
import sys

ROW = re.compile(r'X\(\s*\w+,\s*"([a-z0-9_.]+)"')
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    table = os.path.abspath(sys.argv[1])
    with open(table, encoding="utf-8") as fh:
        keys = ROW.findall(COMMENT.sub("", fh.read()))
    if not keys:
        print(f"{table}: no TE_SETTINGS rows found")
        return 2
    groups = sorted({k.split(".", 1)[0] for k in keys})
    named = re.compile(r"^(%s)\.[a-z_%%]" % "|".join(map(re.escape, groups)))
    bad = 0
    for root in sys.argv[2:]:
        for dirpath, _, files in os.walk(root):
            for fn in sorted(files):
                path = os.path.join(dirpath, fn)
                if not fn.endswith((".c", ".h")) or os.path.abspath(path) == table:
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), fh.read())
                for m in STRING.finditer(text):
                    if named.match(m.group(1)):
                        line = text.count("\n", 0, m.start()) + 1
                        print(f'{path}:{line}: "{m.group(1)}" names a pack setting; read '
                              f"te_rules_settings() instead")
                        bad += 1
    if bad:
        print(f"{bad} setting name(s) in C outside the settings table")
        return 1
    print(f"settings read through te_settings only ({len(keys)} keys, groups {' '.join(groups)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
