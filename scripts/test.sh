#!/usr/bin/env bash
# The README's test command: installs the Debian packages, builds
# Quicksilver with every plugin whose dependency is present, and runs the
# whole ctest suite (unit, sim, conformance, fuzz corpora, examples,
# plugin tests). Extra arguments go to ctest (e.g. -L sim).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${QS_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQS_WERROR=ON \
  -DQS_PLUGIN_OFI=AUTO -DQS_PLUGIN_VERBS=AUTO -DQS_SANITIZE= ${QS_CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
