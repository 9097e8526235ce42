#!/usr/bin/env bash
# Installs the Debian packages triage needs to build and test, skipping those present.
# Usage: tools/install-deps.sh [--with-tests]   (run as root on Debian/Ubuntu)
set -euo pipefail
pkgs=(build-essential cmake pkg-config libyaml-dev libpcre2-dev libcjson-dev zlib1g-dev libisal-dev
      libcurl4-openssl-dev libiberty-dev python3)
if [ "${1:-}" = "--with-tests" ]; then
  # chromium: the HTML report's browser test drives Debian's Chromium headless
  # (tests/html); playwright-core from npm talks to it and downloads no browser.
  pkgs+=(libcriterion-dev clang clang-format valgrind chromium)
  # Node.js (for ajv-cli, the JSON Schema validator) often comes from outside Debian;
  # ask apt only when no node/npm is on PATH, since Debian's npm conflicts with others.
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
