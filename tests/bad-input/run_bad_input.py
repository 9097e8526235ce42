#!/usr/bin/env python3
"""Runs triage on every case of the bad-input corpus and checks each outcome.

usage: run_bad_input.py TRIAGE_BINARY [--only REGEX] [--skip-slow] [--timeout-scale N] [--keep]

Cases come from make_cases.py (small ones committed under cases/, big ones generated into
a scratch directory first) plus every broken pack of tests/rules/broken/expected.tsv,
given with --rules. Each run has a timeout (10 s unless the case says otherwise; a hang
is a failure) and must:
  * exit with the expected code (a signal is a crash),
  * print no sanitizer report,
  * for an error: print exactly one stderr line (rule packs: one diagnostic per line)
    matching the case's regex;
  * for "report": exit 0 with a non-empty stdout and only warning lines on stderr.
Also checks that every limit of engine/include/triage/limits.h (the engine's) and
src/util/limits.h (the rest) has a just-over case.
The last line is "N passed, M failed"; the exit status is 1 if anything failed.
--skip-slow leaves out cases whose timeout exceeds 60 s (TR_MAX_EVENTS); --timeout-scale
multiplies every timeout (the sanitizer build runs 3-10x slower).
"""
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import make_cases  # noqa: E402

SANITIZER = re.compile(r"(ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"UndefinedBehaviorSanitizer|SUMMARY: \w+Sanitizer|ThreadSanitizer)")
DIAG_LINE = re.compile(r"^.+:\d+:\d+: (error|warning|note): .+$")


class Server:
    """A stand-in HTTP server answering every request with one fixed reply."""

    def __init__(self, spec):
        code = spec.get("code", 200)
        body = spec.get("body")
        if body is None:
            body = b'{"data":[{"id":"' + b"x" * max(0, spec["size"] - 18) + b'"}]}'

        class Handler(http.server.BaseHTTPRequestHandler):
            def _reply(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

            do_GET = do_POST = do_PUT = _reply

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def read_limits():
    """#define NAME VALUE pairs of both limits headers, values evaluated."""
    out = {}
    for rel in (("engine", "include", "triage", "limits.h"), ("src", "util", "limits.h")):
        with open(os.path.join(ROOT, *rel), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"#define\s+(\w+)\s+(.+?)\s*(/\*.*)?$", line)
                if not m or m.group(1) in ("TRIAGE_LIMITS_H", "TRIAGE_UTIL_LIMITS_H"):
                    continue
                expr = re.sub(r"(?<=\d)(ull|ul|u|ll|l|L|UL|ULL|U)\b", "", m.group(2))
                try:
                    out[m.group(1)] = eval(expr, {"__builtins__": {}})  # digits, * and ()
                except Exception:
                    out[m.group(1)] = None
    return out


def broken_pack_cases():
    """tests/rules/broken/*.yaml (the engine's corpus), each given with --rules."""
    broken = os.path.join(ROOT, "tests", "rules", "broken")
    tsv = os.path.join(broken, "expected.tsv")
    cases = []
    if not os.path.exists(tsv):
        return cases
    with open(tsv, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, pos, needle = line.rstrip("\n").split("\t")
            path = "<BROKEN>/" + name
            rx = "^" + path.replace("<BROKEN>", "<BROKEN>") + ":" + re.escape(pos) + \
                 ": error: .*" + re.escape(needle) + ".*$"
            rx = rx.replace("/" + name, "/" + re.escape(name))
            cases.append(make_cases.Case("rules-broken/" + name, ["--rules", path, "<GOOD>"], 1,
                                         rx, diag_pack=True))
    return cases


def subst(text, places, escape):
    for k, v in places.items():
        text = text.replace(k, re.escape(v) if escape else v)
    return text


def rx(pattern):
    """Case regexes match case-insensitively ("(?i)" anywhere in them is dropped)."""
    return re.compile(pattern.replace("(?i)", ""), re.IGNORECASE)


def check(case, proc_rc, out, err):
    """Problems with one run, as a list of strings."""
    problems = []
    text = err.decode("utf-8", "replace")
    lines = [l for l in text.splitlines() if l.strip()]
    if SANITIZER.search(text):
        problems.append("sanitizer report on stderr")
    if proc_rc < 0:
        problems.append("killed by signal %d" % -proc_rc)
    elif proc_rc != case.exit:
        problems.append("exit %d, want %d" % (proc_rc, case.exit))
    if case.report:
        if not out.strip():
            problems.append("no report on stdout")
        bad = [l for l in lines if not re.match(make_cases.REPORT_WARN, l)]
        if bad:
            problems.append("non-warning stderr line %r" % bad[0][:200])
        if case.warnings is not None and len(lines) != case.warnings:
            problems.append("%d stderr lines, want %d" % (len(lines), case.warnings))
        if case.warning and not any(rx(case.warning).match(l) for l in lines):
            problems.append("no stderr line matches %r" % case.warning)
        if case.stdout and not rx(case.stdout).search(out.decode("utf-8", "replace")):
            problems.append("report lacks %r" % case.stdout)
    else:
        limit = make_cases.LIMITS["TE_MAX_DIAGNOSTICS"] + 1 if case.diag_pack else case.max_lines
        if not lines:
            problems.append("no message on stderr")
        elif len(lines) > limit:
            problems.append("%d stderr lines, want at most %d (first %r, second %r)"
                            % (len(lines), limit, lines[0][:200], lines[1][:200]))
        elif not rx(case.message).match(lines[0]):
            problems.append("message %r does not match %r" % (lines[0][:300], case.message))
        if case.diag_pack:
            odd = [l for l in lines if not DIAG_LINE.match(l) and not l.startswith("triage: ")]
            if odd:
                problems.append("line is not a diagnostic: %r" % odd[0][:200])
    return problems


def main(argv):
    args = argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    triage = os.path.abspath(args[0])
    only = None
    skip_slow = "--skip-slow" in args
    keep = "--keep" in args
    scale = float(args[args.index("--timeout-scale") + 1]) if "--timeout-scale" in args else 1.0
    if "--only" in args:
        only = re.compile(args[args.index("--only") + 1])

    cases = list(make_cases.CASES) + broken_pack_cases()
    if only:
        cases = [c for c in cases if only.search(c.name)]
    failures = []
    passed = 0

    # Every limit has a just-over case (or a reason it is tested elsewhere).
    if not only:
        header = read_limits()
        covered = {c.limit for c in make_cases.CASES if c.limit}
        for name, value in header.items():
            if name not in covered and name not in make_cases.LIMITS_ELSEWHERE:
                failures.append("limits.h: %s has no just-over case in make_cases.py" % name)
            elif name in make_cases.LIMITS and make_cases.LIMITS[name] != value:
                failures.append("limits.h: %s is %r, make_cases.py assumes %r"
                                % (name, value, make_cases.LIMITS[name]))
        for f in failures:
            print("FAIL " + f)

    stale = make_cases.write_small(check=True)
    for s in stale:
        failures.append("cases/%s is not what make_cases.py writes (run --write)" % s)
        print("FAIL " + failures[-1])

    scratch = tempfile.mkdtemp(prefix="triage-bad-input-")
    gdir = os.path.join(scratch, "generated")
    t0 = time.time()
    wanted = {c.name for c in cases if c.gen and not (skip_slow and c.timeout > 60)}
    make_cases.write_big(gdir, only=wanted)
    print("generated big cases in %.1f s" % (time.time() - t0))

    env = dict(os.environ)
    env.setdefault("TRIAGE_RULES_DIR", os.path.join(ROOT, "rules"))
    env.setdefault("TRIAGE_LIVE_TRACE_WAIT_S", "2")  # live cases: never wait 180 s
    places = {"<C>": os.path.join(HERE, "cases"), "<G>": gdir,
              "<GOOD>": os.path.join(HERE, "cases", "good.trace.json"),
              "<BROKEN>": os.path.join(ROOT, "tests", "rules", "broken"),
              "<RULES>": os.path.join(ROOT, "rules")}
    try:
        for case in cases:
            if skip_slow and case.timeout > 60:
                print("skip %s (slow)" % case.name)
                continue
            tdir = os.path.join(scratch, "t", case.name.replace("/", "_"))
            os.makedirs(tdir, exist_ok=True)
            server = Server(case.server) if case.server else None
            p = dict(places, **{"<T>": tdir, "<URL>": server.url if server else ""})
            argv_case = [triage] + [subst(a, p, False) for a in case.args]
            checked = case
            if case.message:
                checked = make_cases.Case(case.name, case.args, case.exit,
                                          subst(case.message, p, True))
                checked.__dict__.update({k: v for k, v in case.__dict__.items()
                                         if k not in ("message",)})
            if case.warning:
                checked.warning = subst(case.warning, p, True)
            start = time.time()
            try:
                proc = subprocess.run(argv_case, input=case.stdin or b"", capture_output=True,
                                      timeout=case.timeout * scale, env=env, cwd=tdir)
                problems = check(checked, proc.returncode, proc.stdout, proc.stderr)
            except subprocess.TimeoutExpired:
                problems = ["no exit after %g s (hang)" % (case.timeout * scale)]
            finally:
                if server:
                    server.close()
            took = time.time() - start
            if problems:
                failures.append(case.name)
                print("FAIL %s (%.2f s): %s" % (case.name, took, "; ".join(problems)))
            else:
                passed += 1
                print("ok   %s (%.2f s)" % (case.name, took))
    finally:
        if keep:
            print("kept " + scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
