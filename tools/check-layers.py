#!/usr/bin/env python3
"""Checks that no #include, and no linked symbol, runs upward between triage's modules
(stdlib, and binutils' nm for --symbols).

usage: check-layers.py LAYERS_FILE SOURCE_ROOT
       check-layers.py --symbols LAYERS_FILE MODULE=ARCHIVE...

LAYERS_FILE is written by CMake (build/layers.txt), one line per module:
    <module> <folder>: <modules whose headers it may include>
Every quoted #include of every .c/.h file in a module's folder must name a header of an
allowed module ("triage/..." is the engine's public API), must not climb out with "..",
and must not name another module's private header (*_internal.h, trace/source.h,
trace/idmap.h).
With --symbols, each MODULE=ARCHIVE names a module's static library: every symbol an
archive leaves undefined and another archive defines must be defined by the module
itself or by a module it may use. The include roots stop an upward #include at compile
time; this catches what a bare extern declaration would let through to the link.
Exit 0 when clean, 1 with one line per violation.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
PRIVATE = re.compile(r'(^|/)[^/]*_internal\.h$|^trace/(source|idmap)\.h$')


def load_layers(path):
    mods = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            head, allowed = line.split(":", 1)
            name, folder = head.split()
            mods[name] = (folder, set(allowed.split()))
    return mods


def module_of_include(inc, mods):
    top = inc.split("/", 1)[0]
    if top == "triage":
        return "engine"
    for name, (folder, _) in mods.items():
        if folder == "src/" + top:
            return name
    return None


def archive_symbols(archive):
    """(defined, undefined) external symbols of an archive: {symbol: object file}."""
    out = subprocess.run(["nm", "-g", "-A", archive], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = {}, {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        obj = parts[0].rstrip(":").split(":")[-1]
        kind, name = parts[-2], parts[-1]
        if kind == "U":
            undefined.setdefault(name, obj)
        else:
            defined[name] = obj
    return defined, undefined


def check_symbols(layers, pairs):
    mods = load_layers(layers)
    owner, needs = {}, {}
    for module, archive in (p.split("=", 1) for p in pairs):
        defined, undefined = archive_symbols(archive)
        for name in defined:
            owner.setdefault(name, module)
        needs[module] = undefined
    bad = 0
    for module, undefined in sorted(needs.items()):
        allowed = mods.get(module, ("", set()))[1]
        for name, obj in sorted(undefined.items()):
            target = owner.get(name)
            if target and target != module and target not in allowed:
                print(f"module {module} ({obj}) uses {name} of module {target}, which is not "
                      f"below it (allowed: {' '.join(sorted(allowed))})")
                bad += 1
    if bad:
        print(f"{bad} symbol(s) break the layering")
        return 1
    print(f"layers ok: {len(needs)} archives use only their own symbols and those below")
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--symbols":
        return check_symbols(sys.argv[2], sys.argv[3:])
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    mods = load_layers(sys.argv[1])
    root = sys.argv[2]
    bad = 0
    for name, (folder, allowed) in sorted(mods.items()):
        base = os.path.join(root, folder)
        for fn in sorted(os.listdir(base)):
            if not fn.endswith((".c", ".h")):
                continue
            path = os.path.join(base, fn)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = f"{folder}/{fn}:{no}"
                    if ".." in inc.split("/"):
                        print(f'{where}: "{inc}" climbs out of the module with ".."')
                        bad += 1
                        continue
                    if "/" not in inc:
                        continue  # a header beside the file, same module
                    target = module_of_include(inc, mods)
                    if target is None:
                        print(f'{where}: "{inc}" names no module')
                        bad += 1
                    elif target not in allowed:
                        print(f'{where}: module {name} includes "{inc}" of module {target}, '
                              f"which is not below it (allowed: {' '.join(sorted(allowed))})")
                        bad += 1
                    elif target != name and PRIVATE.search(inc):
                        print(f'{where}: "{inc}" is private to module {target}')
                        bad += 1
    if bad:
        print(f"{bad} include(s) break the layering")
        return 1
    print(f"layers ok: {len(mods)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
