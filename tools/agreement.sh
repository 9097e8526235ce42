#!/bin/sh
# Runs a triage binary from ../shared over the 14 real traces and the 5 synthetic cases
# and prints compare_reports.py summaries against the reference reports.
#   usage: tools/agreement.sh [PATH_TO_TRIAGE]   (default: build/triage)
#   env:   SHARED=/path/to/shared (default: ../shared next to the repo)
#          VERBOSE=1 prints every differing cell
#          COMPAT=reference runs triage --compat reference (the reference's judgements
#          and layout: every cell agrees, see docs/deviations.md)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/triage}
case $bin in /*) ;; *) bin="$here/$bin" ;; esac
shared=${SHARED:-$here/../shared}
[ -x "$bin" ] || { echo "agreement.sh: $bin: not executable" >&2; exit 2; }
[ -d "$shared/expected/single" ] || { echo "agreement.sh: $shared: no reference reports" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cd "$shared" || exit 2
quiet=--quiet
[ "${VERBOSE:-0}" = 1 ] && quiet=
compat=
[ -n "${COMPAT:-}" ] && compat="--compat $COMPAT"
run_case() { # name, args...
  name=$1; shift
  # shellcheck disable=SC2086
  "$bin" --quiet $compat "$@" >"$tmp/$name.md" 2>"$tmp/$name.err"
  rc=$?
  echo "== $name (exit $rc)"
  [ $rc -eq 0 ] || head -3 "$tmp/$name.err"
  python3 tools/compare_reports.py $quiet "expected/single/$name.md" "$tmp/$name.md" | sed 's/^/   /'
}
for f in traces/real/*.json.gz; do
  n=$(basename "$f" .json.gz)
  run_case "$n" "$f"
done
run_case synthetic-single traces/synthetic/single/llama_tp2.trace.json
run_case synthetic-staged traces/synthetic/staged
run_case synthetic-staged-limit4 traces/synthetic/staged --kernel-table-limit 4
run_case synthetic-staged-decode-tp1-vllm --framework vllm --input traces/synthetic/staged/decode/triage-trace-decode-TP-1.trace.json.gz
run_case synthetic-xpu traces/synthetic/xpu/xpu.trace.json
