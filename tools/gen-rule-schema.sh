#!/usr/bin/env bash
# Regenerates the "settings" part of schemas/rulepack.schema.json from the settings table
# (engine/include/triage/settings.h), after adding or changing a setting.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build >/dev/null
cmake --build build --target settings_schema -j2 >/dev/null
python3 tools/gen-rule-schema.py build/tools/settings_schema
