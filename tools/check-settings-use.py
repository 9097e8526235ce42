#!/usr/bin/env python3
"""No C file outside the settings table names a pack setting, and the analysis holds no
judgement as a bare number (stdlib only).

usage: check-settings-use.py SETTINGS_H DIR... [--literals DIR --allow FILE]
                             [--prose DIR --prose-allow FILE]

Reads the keys of the settings table (the TE_SETTINGS rows of SETTINGS_H) and scans every
.c/.h file under the DIRs (SETTINGS_H itself excepted): a string literal naming a setting
("overlap.min_share_pct", "overlap.weight.%s", or any "<group>." of the table) means C
looks a setting up by name, which is where a default value would hide; code reads the
resolved te_settings members instead.

With --literals, every numeric literal in the code of the .c/.h files under DIR (the
analysis) is a judgement unless it is
  - 0, 1 or 2 (as integer or 0.0, 1.0, 2.0: nothing, identity, halves and doubles),
    100 (percent) or 1000 (us <-> ms), or a hex literal (bit patterns);
  - an array size ("[512]"), or the operand of a shift or a bit mask ("<< 32", "& 63");
  - an enumerator's value ("AN_X = 3,"), or an __attribute__'s argument;
  - listed in the allow FILE: tab-separated file name (under DIR), literal, a piece of
    the line that holds it, and why it is no judgement (a capacity, a string's length,
    a unit, a fact of the number format).
Any other threshold, tolerance or count belongs in the settings table. An allow-list
entry that matches nothing is reported too, so the list stays exact.

With --prose, no string literal in the code of the .c/.h files under DIR (the analysis)
holds prose: two words of letters joined by blanks ("replayed GEMM launches", "out of
memory"). The analysis builds data (kinds, ids, figures) and report/ words it (issue 33),
so a sentence written or formatted there is a finding, unless
  - it is a diagnostic: its statement hands it to the error record (a fail(...) or
    fail_in(...) call, an error's message, a _Static_assert), which the library returns
    instead of printing;
  - it is listed in the prose allow FILE (same four columns as above: file name, the
    literal as written between the quotes, a piece of its line, why it is no report text:
    a key, a matcher's subject, ...).

Exit 0 when clean, 1 with one line per finding.
"""
import os
import re
import sys

ROW = re.compile(r'X\(\s*\w+,\s*"([a-z0-9_.]+)"')
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
NUMBER = re.compile(r'(?<![\w.])(0[xX][0-9a-fA-F]+|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?'
                    r'|\d+[eE][+-]?\d+|\d+)[uUlLfF]*(?![\w.])')
FREE = {0.0, 1.0, 2.0, 100.0, 1000.0}
ENUMERATOR = re.compile(r'(^\s*|[{,(]\s*)[A-Z][A-Z0-9_]*\s*=\s*-?$')
BITWISE_BEFORE = re.compile(r'(<<|>>|[&|^])\s*\(?\s*$')


def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def code_of(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return COMMENT.sub(blank, fh.read())


def c_files(root):
    for dirpath, _, files in os.walk(root):
        for fn in sorted(files):
            if fn.endswith((".c", ".h")):
                yield os.path.join(dirpath, fn)


def setting_names(table, roots):
    with open(table, encoding="utf-8") as fh:
        keys = ROW.findall(COMMENT.sub("", fh.read()))
    if not keys:
        print(f"{table}: no TE_SETTINGS rows found")
        return None, 2
    groups = sorted({k.split(".", 1)[0] for k in keys})
    named = re.compile(r"^(%s)\.[a-z_%%]" % "|".join(map(re.escape, groups)))
    bad = 0
    for root in roots:
        for path in c_files(root):
            if os.path.abspath(path) == table:
                continue
            text = code_of(path)
            for m in STRING.finditer(text):
                if named.match(m.group(1)):
                    line = text.count("\n", 0, m.start()) + 1
                    print(f'{path}:{line}: "{m.group(1)}" names a pack setting; read '
                          f"te_rules_settings() instead")
                    bad += 1
    return (keys, groups), bad


def load_allow(path):
    allow = {}
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4 or not parts[2].strip() or not parts[3].strip():
                print(f"{path}:{no}: expected FILE<TAB>LITERAL<TAB>PIECE OF ITS LINE<TAB>WHY")
                sys.exit(2)
            allow.setdefault((parts[0], parts[1]), []).append([parts[2], parts[3], 0])
    return allow


def free_literal(lit):
    if lit[:2].lower() == "0x":
        return True
    try:
        return float(lit) in FREE
    except ValueError:
        return False


def exempt_place(line, m):
    before, after = line[:m.start()], line[m.end():]
    if before.rstrip().endswith("[") and after.lstrip().startswith("]"):
        return True  # an array size
    return (bool(BITWISE_BEFORE.search(before)) or bool(ENUMERATOR.search(before.rstrip()))
            or "__attribute__" in line)


def allowed(allow, name, lit, raw_line):
    for entry in allow.get((name, lit), []):
        if entry[0] in raw_line:
            entry[2] += 1
            return True
    return False


def unused_entries(allow, label, quote):
    """Prints each allow-list entry no place used (quote: how its literal is shown) and
    returns how many: a stale entry would hide the next real finding."""
    bad = 0
    for (name, lit), entries in sorted(allow.items()):
        for piece, why, used in entries:
            if not used:
                print(f"{label}: {name} {quote.format(lit)} in '{piece}' ({why}) matches nothing; "
                      f"drop it")
                bad += 1
    return bad


def judgement_literals(root, allow):
    bad = 0
    for path in c_files(root):
        name = os.path.relpath(path, root)
        code = code_of(path)
        raw_lines = code.split("\n")
        for no, line in enumerate(QUOTED.sub(blank, code).split("\n"), 1):
            if line.lstrip().startswith("#include"):
                continue
            for m in NUMBER.finditer(line):
                lit = m.group(1)
                if free_literal(lit) or exempt_place(line, m):
                    continue
                if allowed(allow, name, lit, raw_lines[no - 1]):
                    continue
                print(f"{path}:{no}: {lit} is a judgement in C: make it a setting (settings.h), "
                      f"or list it in the allow file with why it is a true constant")
                bad += 1
    return bad + unused_entries(allow, "allow-list", "{}")


PROSE = re.compile(r"[A-Za-z][A-Za-z']+[ \t]+\(?[A-Za-z][A-Za-z']+")
DIAGNOSTIC = re.compile(r"\bfail(?:_in)?\s*\(|\bmessage\b|_Static_assert\s*\(")


def statement_before(code, pos):
    """The code of the statement that holds position pos, up to pos."""
    start = max(code.rfind(c, 0, pos) for c in ";{}")
    return code[start + 1:pos]


def prose_literals(root, allow):
    bad = 0
    for path in c_files(root):
        name = os.path.relpath(path, root)
        code = code_of(path)
        raw_lines = code.split("\n")
        for m in STRING.finditer(code):
            text = m.group(1)
            if not PROSE.search(text) or DIAGNOSTIC.search(statement_before(code, m.start())):
                continue
            no = code.count("\n", 0, m.start()) + 1
            if allowed(allow, name, text, raw_lines[no - 1]):
                continue
            print(f'{path}:{no}: "{text}" is prose in the analysis: keep the facts in the model '
                  f"(a kind, ids, figures) and word them in src/report, or list it in the prose "
                  f"allow file with why it is no report text")
            bad += 1
    return bad + unused_entries(allow, "prose allow-list", '"{}"')


def option(args, flag):
    if flag not in args:
        return None
    i = args.index(flag)
    value = args[i + 1] if i + 1 < len(args) else None
    del args[i:i + 2]
    return value


def main():
    args = sys.argv[1:]
    literals, allow_file = option(args, "--literals"), option(args, "--allow")
    prose, prose_allow = option(args, "--prose"), option(args, "--prose-allow")
    if len(args) < 2 or bool(literals) != bool(allow_file) or bool(prose) != bool(prose_allow):
        print(__doc__)
        return 2
    table = os.path.abspath(args[0])
    found, bad = setting_names(table, args[1:])
    if found is None:
        return bad
    keys, groups = found
    if literals:
        bad += judgement_literals(literals, load_allow(allow_file))
    if prose:
        bad += prose_literals(prose, load_allow(prose_allow))
    if bad:
        print(f"{bad} finding(s): settings named in C, judgements written as numbers, or prose "
              f"in the analysis")
        return 1
    print(f"settings read through te_settings only ({len(keys)} keys, groups {' '.join(groups)})"
          + (f"; no judgement literal under {literals}" if literals else "")
          + (f"; no prose under {prose}" if prose else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
