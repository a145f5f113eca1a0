#!/usr/bin/env bash
# One command for an lcov HTML report of the test run:
#   coverage/run.sh            -> coverage/report/index.html
# Builds with --coverage in build-coverage, runs ctest, collects line and
# branch coverage of lib/ and plugins/ (tests and fuzz drivers excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
QS_DEPS_VM=0 ./scripts/install-deps.sh
build=build-coverage
cmake -S . -B "$build" -DQS_COVERAGE=ON -DCMAKE_BUILD_TYPE=Debug -DQS_PLUGIN_VERBS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
lcov --rc lcov_branch_coverage=1 --zerocounters --directory "$build" >/dev/null
ctest --test-dir "$build" -LE vm -j"$(nproc)" || echo "coverage: some tests failed; the report still shows what ran"
lcov --rc lcov_branch_coverage=1 --quiet --capture --directory "$build" \
  --output-file "$build/all.info" >/dev/null
lcov --rc lcov_branch_coverage=1 --extract "$build/all.info" \
  "$PWD/lib/*" "$PWD/plugins/*" --output-file "$build/qs.info" >/dev/null
genhtml --rc lcov_branch_coverage=1 --branch-coverage "$build/qs.info" \
  --output-directory coverage/report >/dev/null
lcov --rc lcov_branch_coverage=1 --summary "$build/qs.info"
echo "coverage: report in coverage/report/index.html"
