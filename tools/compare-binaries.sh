#!/usr/bin/env bash
# Compares the reports of two triage binaries byte for byte over the shared traces
# (../shared/traces: every real trace, the multi-rank directory, the diff pair, the
# synthetic mapping + formal pair) and the repository's own fixtures (tests/data), in
# Markdown, JSON and HTML, with the default packs and with --compat reference.
# A refactoring that must not change a report runs it with the old and the new binary:
#   tools/compare-binaries.sh OLD/triage NEW/triage [SHARED_DIR]
# Prints one line per differing case and exits 1 when any differ, 0 when all agree.
set -u
old=$(readlink -f "$1") new=$(readlink -f "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(readlink -f "${3:-$repo/../shared}")
[ -d "$shared/traces" ] || { echo "no shared traces under $shared" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0 bad=0 failed=0

# run NAME ARGS...: both binaries (each finds the packs beside it), output and exit
# status compared.
run() {
  local name=$1
  shift
  for side in old new; do
    local bin=$old
    [ "$side" = new ] && bin=$new
    (cd "$repo" && "$bin" "$@" >"$work/$side.raw" 2>"$work/$side.err"
     echo "rc $?" >>"$work/$side.err")
    # HTML names the packs and the command line by the binary's directory
    sed "s#$(dirname "$bin")#BIN#g" "$work/$side.raw" >"$work/$side.out"
  done
  n=$((n + 1))
  grep -q '^rc 0$' "$work/old.err" || failed=$((failed + 1))
  if ! cmp -s "$work/old.out" "$work/new.out" || ! cmp -s "$work/old.err" "$work/new.err"; then
    bad=$((bad + 1))
    echo "DIFFERS: $name ($*)"
    diff "$work/old.out" "$work/new.out" | head -4 | cut -c1-300
  fi
}

inputs=()
for t in "$shared"/traces/real/*.json*; do inputs+=("$t"); done
[ -d "$shared/traces/multi-rank/hta_sampled_2ranks" ] && inputs+=("$shared/traces/multi-rank/hta_sampled_2ranks")
for d in "$repo"/tests/data/llama_tp2 "$repo"/tests/data/ranks/*/ "$repo"/tests/data/stages/*/; do
  [ -e "$d" ] && inputs+=("${d%/}")
done
for t in "${inputs[@]}"; do
  for fmt in markdown json html; do
    run "$(basename "$t") $fmt" --quiet --format "$fmt" "$t"
    run "$(basename "$t") $fmt compat" --quiet --compat reference --format "$fmt" "$t"
  done
done
syn=$shared/traces/synthetic
if [ -d "$syn" ]; then
  for fmt in markdown json html; do
    run "synthetic pair $fmt" --quiet --format "$fmt" --mapping-input "$syn/mapping/eager.trace.json" \
      --formal-input "$syn/formal/graph.trace.json"
    run "synthetic pair $fmt compat" --quiet --compat reference --format "$fmt" \
      --mapping-input "$syn/mapping/eager.trace.json" --formal-input "$syn/formal/graph.trace.json"
  done
fi
# one file as both mapping and formal input (read once, the mapping side borrows it)
for t in "$shared"/traces/real/*.json*; do
  for fmt in markdown json; do
    run "$(basename "$t") same file twice $fmt" --quiet --format "$fmt" --mapping-input "$t" \
      --formal-input "$t"
  done
done
pair=$shared/traces/diff/hta_control_vs_test
if [ -d "$pair" ]; then
  for fmt in markdown json html; do
    run "diff $fmt" diff --quiet --format "$fmt" "$pair/control.json.gz" "$pair/test.json.gz"
  done
fi
# two ROCm traces whose GPU has a blank name, and one of them as a JSON report beside a trace
amd=$shared/traces/real/vllm_gptoss_decode_fullgraph_amd.json.gz
amd2=$shared/traces/real/vllm_gptoss_prefilldecode_piecewise_amd.json.gz
if [ -f "$amd" ] && [ -f "$amd2" ]; then
  "$old" --quiet --format json "$amd" >"$work/amd.json" 2>/dev/null
  for fmt in markdown json html; do
    run "diff amd $fmt" diff --quiet --format "$fmt" "$amd" "$amd2"
    run "diff amd json-report $fmt" diff --quiet --format "$fmt" "$work/amd.json" "$amd2"
  done
fi
echo "$((n - bad)) of $n cases identical ($failed of them exit non-zero with both)"
[ "$bad" -eq 0 ]
