#!/usr/bin/env bash
# Runs each libFuzzer harness for N seconds (default 600) and prints its statistics.
#
# Usage: tools/fuzz.sh [-j JOBS] [SECONDS] [HARNESS...]
#   HARNESS: fuzz_trace_reader fuzz_analysis fuzz_rule_pack fuzz_live_reply fuzz_names (default: all,
#   one after the other; -j 2 runs two at once). Builds build-fuzz with clang when needed.
#
# The committed seeds (tests/fuzz/corpus/<h>, tests/fuzz/regressions/<h>, and for the
# rule-pack harness rules/ and tests/rules/broken/, for the analysis harness the trace
# seeds and tests/bad-input/cases/) are read, never written: new corpus
# entries go to build-fuzz/corpus/<h>, crashes to build-fuzz/artifacts/<h>/, logs to
# build-fuzz/logs/<h>.log. Copy a crashing input to tests/fuzz/regressions/<h>/ once
# the bug is fixed. Runs under `nice -n 5` (the machine is shared).
# Exit status: 0 when no fuzzer found anything, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=1
if [ "${1:-}" = "-j" ]; then jobs=$2; shift 2; fi
secs=${1:-600}
[ $# -gt 0 ] && shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_trace_reader fuzz_analysis fuzz_rule_pack fuzz_live_reply fuzz_names)
case $secs in ''|*[!0-9]*) echo "usage: tools/fuzz.sh [-j JOBS] [SECONDS] [HARNESS...]" >&2; exit 2;; esac

bd=$root/build-fuzz
if [ ! -f "$bd/CMakeCache.txt" ]; then
  CC=clang nice -n 5 cmake -S . -B "$bd" -DTRIAGE_FUZZ=ON -DTRIAGE_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
nice -n 5 cmake --build "$bd" --target fuzzers -j"$jobs" >"$bd/build.log" 2>&1 ||
  { tail -20 "$bd/build.log" >&2; exit 1; }

run_one() {
  local h=$1 dict max_len
  case $h in
    fuzz_trace_reader) dict=trace.dict; max_len=65536 ;;
    fuzz_analysis) dict=trace.dict; max_len=65536 ;;
    fuzz_rule_pack) dict=rulepack.dict; max_len=16384 ;;
    fuzz_live_reply) dict=live.dict; max_len=16384 ;;
    fuzz_names) dict=names.dict; max_len=32768 ;;
    *) echo "fuzz.sh: unknown harness $h" >&2; return 2 ;;
  esac
  local seeds=("$root/tests/fuzz/corpus/$h")
  [ -d "$root/tests/fuzz/regressions/$h" ] && seeds+=("$root/tests/fuzz/regressions/$h")
  if [ "$h" = fuzz_analysis ]; then
    seeds+=("$root/tests/fuzz/corpus/fuzz_trace_reader" "$root/tests/bad-input/cases")
  fi
  if [ "$h" = fuzz_rule_pack ]; then
    [ -d "$root/rules" ] && seeds+=("$root/rules")
    [ -d "$root/tests/rules/broken" ] && seeds+=("$root/tests/rules/broken")
  fi
  mkdir -p "$bd/corpus/$h" "$bd/artifacts/$h" "$bd/logs"
  local log=$bd/logs/$h.log start end rc=0
  start=$(date +%s)
  TRIAGE_RULES_DIR=${TRIAGE_RULES_DIR:-$root/rules} \
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    nice -n 5 "$bd/fuzz/$h" "$bd/corpus/$h" "${seeds[@]}" \
      -dict="$root/tests/fuzz/dict/$dict" -max_len=$max_len -timeout=10 -rss_limit_mb=2048 \
      -max_total_time="$secs" -print_final_stats=1 \
      -artifact_prefix="$bd/artifacts/$h/" >"$log" 2>&1 || rc=$?
  end=$(date +%s)
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  printf '%s: %ss, %s executions, exit %s, corpus %s files, artifacts %s\n' "$h" \
    "$((end - start))" "${execs:-?}" "$rc" "$(ls "$bd/corpus/$h" | wc -l)" \
    "$(ls "$bd/artifacts/$h" | wc -l)"
  return $rc
}

status=0
pids=()
for h in "${harnesses[@]}"; do
  if [ "$jobs" -gt 1 ]; then
    run_one "$h" & pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
  else
    run_one "$h" || status=1
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
