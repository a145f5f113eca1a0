#!/usr/bin/env bash
# Coverage report of a build made with -DQS_COVERAGE=ON whose tests have run:
#   coverage/report.sh BUILD_DIR [LINE_FLOOR]
# Writes the lcov HTML report to coverage/report/ and a Cobertura XML report
# to coverage/cobertura.xml (both cover lib/ and plugins/ only: tests, fuzz
# drivers, examples and benchmarks are left out), prints the line and
# branch totals, and exits 1 when line coverage is below LINE_FLOOR percent.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: coverage/report.sh BUILD_DIR [LINE_FLOOR]}
floor=${2:-}
rc=(--rc lcov_branch_coverage=1)
# lcov 1.16 warns about its own redefined subroutines on every run: keep
# its chatter in a log, shown only when the capture fails.
lcov "${rc[@]}" --quiet --capture --directory "$build" \
  --output-file "$build/all.info" >"$build/lcov.log" 2>&1 || {
  cat "$build/lcov.log"
  exit 1
}
lcov "${rc[@]}" --quiet --extract "$build/all.info" \
  "$PWD/lib/*" "$PWD/plugins/*" --output-file "$build/qs.info" >/dev/null
lcov "${rc[@]}" --quiet --remove "$build/qs.info" "*/test_*" \
  --output-file "$build/qs.info" >/dev/null
rm -rf coverage/report
genhtml "${rc[@]}" --quiet --branch-coverage "$build/qs.info" \
  --output-directory coverage/report >/dev/null
gcovr --root . --filter 'lib/' --filter 'plugins/' \
  --exclude '.*/test_[^/]*$' --xml-pretty --xml coverage/cobertura.xml \
  --gcov-ignore-parse-errors -j "$(nproc)" "$build" >/dev/null
summary=$(lcov "${rc[@]}" --summary "$build/qs.info" 2>&1)
lines=$(sed -n 's/^ *lines\.*: \([0-9.]*\)%.*/\1/p' <<<"$summary")
branches=$(sed -n 's/^ *branches\.*: \([0-9.]*\)%.*/\1/p' <<<"$summary")
echo "coverage: lib/ and plugins/: lines ${lines}%, branches ${branches}%"
echo "coverage: HTML in coverage/report/index.html, Cobertura XML in coverage/cobertura.xml"
if [ -n "$floor" ] && awk -v l="$lines" -v f="$floor" 'BEGIN { exit !(l < f) }'; then
  echo "coverage: FAIL: line coverage ${lines}% is below the floor of ${floor}%"
  exit 1
fi
