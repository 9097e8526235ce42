#!/usr/bin/env python3
"""Runs the triage binary on every file of a fuzz corpus (standard library only).

usage: replay_cli.py TRIAGE_BINARY DIR...

fuzz_trace_reader exercises the reader alone; this runs the whole pipeline (discovery,
reader, analysis, report) on the inputs the fuzzer found interesting, ideally with an
ASan+UBSan build (cmake -DTRIAGE_SANITIZE=ON). Each run must exit 0 or 1 within 60 s,
print no sanitizer report, and, when it fails, end with exactly one error line (warning
lines before it are allowed). Prints one line per problem and "N inputs, M problems" last;
exit status 1 when there is a problem.
"""
import os
import re
import subprocess
import sys

SANITIZER = re.compile(r"(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                       r"runtime error:)")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    triage = argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env.setdefault("TRIAGE_RULES_DIR", os.path.join(here, "..", "..", "rules"))
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    n = problems = 0
    codes = {}
    for d in argv[2:]:
        names = sorted(os.listdir(d)) if os.path.isdir(d) else [""]
        for name in names:
            path = os.path.join(d, name) if name else d
            if not os.path.isfile(path) or name.startswith(".") or name.startswith("README"):
                continue
            n += 1
            try:
                r = subprocess.run([triage, "--quiet", path], capture_output=True, timeout=60,
                                   env=env, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                print("HANG " + path)
                problems += 1
                continue
            codes[r.returncode] = codes.get(r.returncode, 0) + 1
            err = r.stderr.decode("utf-8", "replace")
            lines = [l for l in err.splitlines() if l.strip()]
            why = None
            if SANITIZER.search(err):
                why = "sanitizer report"
            elif r.returncode not in (0, 1):
                why = "exit %d" % r.returncode
            elif r.returncode == 1:
                errors = [l for l in lines if not re.match(r"^triage: .*warning: ", l)]
                if len(errors) != 1 or errors[0] != lines[-1]:
                    why = "%d error lines" % len(errors)
            if why:
                problems += 1
                print("FAIL %s: %s\n%s" % (path, why, err[-4000:]))
    print("exit codes: %s" % codes)
    print("%d inputs, %d problems" % (n, problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
