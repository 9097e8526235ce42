#!/usr/bin/env bash
# Validates every rule pack against schemas/rulepack.schema.json (JSON Schema draft
# 2020-12) with ajv-cli, and checks that the intentionally broken packs under
# tests/rules/schema-bad/ are rejected (so the check is able to fail).
#
# Usage: tools/check-rule-schema.sh [PACK.yaml ...]
#   With no argument: rules/*.yaml, rules/compat/*.yaml and docs/examples/*.yaml.
# Installs ajv-cli (pinned in tools/package.json) into tools/node_modules when missing;
# needs node + npm (tools/install-deps.sh --with-tests). Exit 0 = all good.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/tools"
schema="$root/schemas/rulepack.schema.json"
ajv="$tools/node_modules/.bin/ajv"

if [ ! -x "$ajv" ]; then
  command -v npm >/dev/null || { echo "check-rule-schema: npm not found (tools/install-deps.sh --with-tests)" >&2; exit 2; }
  echo "check-rule-schema: installing ajv-cli into tools/node_modules" >&2
  if [ -f "$tools/package-lock.json" ]; then
    (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >&2)
  else
    (cd "$tools" && npm install --no-audit --no-fund --loglevel=error >&2)
  fi
fi

# strict mode on, except strictRequired (the schema's anyOf/required alternatives name
# properties declared one level up, which is legal JSON Schema).
opts=(--spec=draft2020 --strict=true --strict-required=false --all-errors --errors=text)

if [ "$#" -gt 0 ]; then
  good=("$@")
else
  shopt -s nullglob
  good=("$root"/rules/*.yaml "$root"/rules/compat/*.yaml "$root"/docs/examples/*.yaml)
fi
bad=("$root"/tests/rules/schema-bad/*.yaml)

fail=0
for f in "${good[@]}"; do
  if out=$("$ajv" validate "${opts[@]}" -s "$schema" -d "$f" 2>&1); then
    echo "ok      ${f#"$root"/}"
  else
    echo "INVALID ${f#"$root"/}"; echo "$out" | sed 's/^/    /'
    fail=1
  fi
done
if [ "$#" -eq 0 ]; then
  for f in "${bad[@]}"; do
    if "$ajv" validate "${opts[@]}" -s "$schema" -d "$f" >/dev/null 2>&1; then
      echo "NOT REJECTED ${f#"$root"/} (the schema accepts a pack it must reject)"
      fail=1
    else
      echo "rejected ${f#"$root"/} (as intended)"
    fi
  done
fi
exit "$fail"
