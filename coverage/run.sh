#!/usr/bin/env bash
# One command for a coverage report of the test run:
#   coverage/run.sh [ctest args]  -> coverage/report/index.html, coverage/cobertura.xml
# Builds with --coverage in build-coverage, runs ctest (the Soft-RoCE VM case
# excluded), then coverage/report.sh collects line and branch coverage of
# lib/ and plugins/ (plugin tests, tests and fuzz drivers excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
QS_DEPS_VM=0 ./scripts/install-deps.sh
build=build-coverage
cmake -S . -B "$build" -DQS_COVERAGE=ON -DCMAKE_BUILD_TYPE=Debug -DQS_PLUGIN_VERBS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
lcov --rc lcov_branch_coverage=1 --zerocounters --directory "$build" >/dev/null
ctest --test-dir "$build" -LE vm -j"$(nproc)" "$@" ||
  echo "coverage: some tests failed; the report still shows what ran"
coverage/report.sh "$build"
