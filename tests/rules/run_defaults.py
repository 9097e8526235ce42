#!/usr/bin/env python3
"""The default packs validate and pass their own examples; a user pack given with --rules
changes a kernel category without a rebuild; `rules explain` and `rules test` load packs
given as operands, as `rules check` does; `rules check` warns about a dead rule (exit 0).

usage: run_defaults.py TRIAGE_BIN USER_PACK
(TRIAGE_RULES_DIR, set by ctest, points at the default packs.)
"""
import os
import re
import subprocess
import sys


def run(args):
    proc = subprocess.run(args, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode(
        "utf-8", "replace")


def since_missing():
    """Review 18 defect 10: a fusion pattern whose rationale names a framework config key
    (pass_config.KEY) states the release that first has it (since: {version, change}), so
    its row says which release it needs, and its switch in that release naming the key
    (since.switch; review 19 defect 12: such a path is an upgrade and a flag, not a port);
    the ids of those that do not."""
    rules = os.environ.get("TRIAGE_RULES_DIR", "rules")
    out = []
    for name in sorted(os.listdir(rules)):
        if not re.match(r"6\d-fusion-.*\.yaml$", name):
            continue
        with open(os.path.join(rules, name), encoding="utf-8") as f:
            blocks = re.split(r"^  - id: ", f.read(), flags=re.M)[1:]
        for b in blocks:
            hint = re.search(r"^    rationale_hint: (.*)$", b, re.M)
            since = re.search(r'^    since: \{version: "[^"]+"', b, re.M)
            key = re.search(r"pass_config\.(\w+)", hint.group(1)) if hint else None
            switch = re.search(r'^    since: \{.*switch: "([^"]+)"', b, re.M)
            if key and (not since or not switch or key.group(1) not in switch.group(1)):
                out.append(b.split("\n", 1)[0])
    return out


def main():
    triage, user_pack = sys.argv[1], sys.argv[2]
    failures = []
    for pid in since_missing():
        failures.append(f"fusion pattern {pid} names a pass_config key and no since version and switch")
    rc, out, err = run([triage, "rules", "check"])
    if rc != 0 or not re.search(r"^\d+ packs OK$", out, re.M):
        failures.append(f"rules check: exit {rc}, stdout {out!r}, stderr {err!r}")
    rc, out, err = run([triage, "rules", "test"])
    m = re.search(r"^(\d+) examples, (\d+) failures$", out, re.M)
    if rc != 0 or not m or m.group(2) != "0" or m.group(1) == "0":
        failures.append(f"rules test: exit {rc}, stdout {out!r}, stderr {err[:2000]!r}")
    name = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NNT"
    rc, out, err = run([triage, "rules", "explain", name])
    if rc != 0 or not re.search(r"kernel category:\s+gemm\b", out):
        failures.append(f"explain with defaults: exit {rc}, stdout {out!r}, stderr {err!r}")
    rc, out, err = run([triage, "--rules", user_pack, "rules", "explain", name])
    if rc != 0 or not re.search(r"kernel category:\s+cublas_lt \(rule kernel/cublas-lt", out):
        failures.append(f"explain with --rules: exit {rc}, stdout {out!r}, stderr {err!r}")
    # explain takes pack operands (an existing *.yaml file) besides names
    rc, out, err = run([triage, "rules", "explain", user_pack, name])
    if rc != 0 or not re.search(r"kernel category:\s+cublas_lt \(rule kernel/cublas-lt", out):
        failures.append(f"explain with a pack operand: exit {rc}, stdout {out!r}, stderr {err!r}")
    # test loads its pack operands: the user pack's own example passes, and the default
    # gemm-library example it now steals fails at its FILE:LINE:COL
    rc, out, err = run([triage, "rules", "test", user_pack])
    if rc != 1 or not re.search(r"10-kernel-categories\.yaml:\d+:\d+: error: example 'nvjet", err):
        failures.append(f"test with a pack operand: exit {rc}, stderr {err[:2000]!r}")
    # check warns about a rule none of whose examples reaches it
    dead = os.path.join(os.path.dirname(user_pack), "dead-rule.yaml")
    rc, out, err = run([triage, "rules", "check", dead])
    if rc != 0 or not re.search(r"dead-rule\.yaml:8:9: warning: classifier rule "
                                r"'kernel/fused-norm-quant' is dead: .* earlier rule 'norm'", err):
        failures.append(f"check with a dead rule: exit {rc}, stderr {err!r}")
    rc, out, err = run([triage, "rules", "check"])
    if "warning" in err:
        failures.append(f"the default packs have dead rules: {err!r}")
    # the shipped compat pack loads after the defaults and passes its own examples
    for cmd in (["rules", "check"], ["rules", "test"]):
        rc, out, err = run([triage, "--compat", "reference"] + cmd)
        if rc != 0 or "warning" in err:
            failures.append(f"--compat reference {' '.join(cmd)}: exit {rc}, stderr {err[:2000]!r}")
    rc, out, err = run([triage, "--compat", "reference", "rules", "explain", name])
    if rc != 0 or not re.search(r"overlap category:\s+other \(default", out):
        failures.append(f"--compat reference explain: nvjet is overlap 'other' in the reference: {out!r}")
    rc, out, err = run([triage, "--compat", "no-such-mode", "rules", "check"])
    if rc != 2 or "unknown compatibility mode 'no-such-mode'" not in err:
        failures.append(f"--compat no-such-mode: exit {rc}, stderr {err!r}")
    # the report command line: --compat needs a known NAME (usage errors, exit 2)
    rc, out, err = run([triage, "--compat"])
    if rc != 2 or "--compat needs a value" not in err:
        failures.append(f"--compat without a value: exit {rc}, stderr {err!r}")
    rc, out, err = run([triage, "--compat", "../x", "trace.json"])
    if rc != 2 or "not a compatibility mode name" not in err:
        failures.append(f"--compat ../x: exit {rc}, stderr {err!r}")
    for f in failures:
        print("FAIL " + f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
