#!/usr/bin/env bash
# Builds triage and runs it on the sample trace shipped in tests/data (all three tables).
# Installs missing Debian packages first (root on a fresh Debian machine needs nothing else).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIAGE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/triage tests/data/llama_tp2/llama_tp2.trace.json
