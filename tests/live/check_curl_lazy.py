#!/usr/bin/env python3
"""libcurl is loaded only by live capture (src/live/curl_lib.h); stdlib only.

  check_curl_lazy.py --tool BUILD/triage --trace TRACE

1. A report run (no --url) under LD_DEBUG=files loads no libcurl: fails if libcurl is
   linked again, directly or through another library.
2. A --url run does load it (so check 1 can see libcurl when it is there) and gets as
   far as connecting (port 1 on loopback: refused).
3. With TRIAGE_LIBCURL naming a missing file, --url fails before any request with one
   line naming the library and the loader's reason, exit 1 (docs/live.md).
Exit status 0 = all passed, 1 = a failure.
"""
import argparse
import os
import subprocess
import sys

URL = "http://127.0.0.1:1/"
MISSING = "/nonexistent/libcurl.so.4"


def run(tool, args, **env):
    e = dict(os.environ)
    e.pop("TRIAGE_LIBCURL", None)
    e.update(env)
    p = subprocess.run([tool] + args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return p.returncode, p.stderr


def loader_lines(stderr):
    """The dynamic loader's LD_DEBUG=files lines that name a library file."""
    return [l for l in stderr.splitlines() if "file=" in l]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--trace", required=True)
    a = ap.parse_args()
    failures = []

    rc, err = run(a.tool, ["--format", "json", a.trace], LD_DEBUG="files")
    files = loader_lines(err)
    if rc != 0:
        failures.append("report run: exit %d\n%s" % (rc, err[-2000:]))
    elif not files:
        failures.append("report run: LD_DEBUG=files printed nothing; the check cannot see")
    elif any("libcurl" in l for l in files):
        failures.append("report run loaded libcurl:\n" +
                        "\n".join(l for l in files if "libcurl" in l))

    rc, err = run(a.tool, ["--url", URL, "--framework", "sglang"], LD_DEBUG="files")
    if not any("libcurl" in l for l in loader_lines(err)):
        failures.append("--url run: libcurl not seen in LD_DEBUG=files output")
    if rc != 1 or "connection refused" not in err:
        failures.append("--url run: exit %d, expected 1 and 'connection refused'\n%s" %
                        (rc, err[-2000:]))

    rc, err = run(a.tool, ["--url", URL, "--framework", "sglang"], TRIAGE_LIBCURL=MISSING)
    lines = err.splitlines()
    want = ("triage: live capture needs libcurl, which cannot be loaded (tried %s, "
            "from TRIAGE_LIBCURL): %s: " % (MISSING, MISSING))
    if rc != 1 or len(lines) != 1 or not lines[0].startswith(want):
        failures.append("missing libcurl: exit %d, stderr %r; expected exit 1 and one line "
                        "starting %r" % (rc, err, want))

    for f in failures:
        print("FAIL: " + f)
    print("check_curl_lazy: %s" % ("FAILED" if failures else "3 checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
