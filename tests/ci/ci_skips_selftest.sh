#!/bin/bash
# Self-test of scripts/ci-skips.py, which decides after each CI stage
# whether a required case skipped: a small ctest project with a passing,
# a skipping, an optional skipping and a failing case, its JUnit XML, and
# the script's verdicts on it.
#
# Usage: ci_skips_selftest.sh SOURCE_DIR WORK_DIR
set -u
src=${1:?usage: ci_skips_selftest.sh SOURCE_DIR WORK_DIR}
work=${2:?usage: ci_skips_selftest.sh SOURCE_DIR WORK_DIR}
script=$src/scripts/ci-skips.py
fail() { echo "ci_skips_selftest: FAIL: $*"; exit 1; }

rm -rf "$work"
mkdir -p "$work/proj"
cat >"$work/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(ci_skips_probe NONE)
enable_testing()
add_test(NAME in_vm COMMAND sh -c "echo '[  SKIPPED ] test_inner'; echo '[  SKIPPED ] 1 test(s), listed below:'")
set_tests_properties(in_vm PROPERTIES LABELS vm)
add_test(NAME needs_ofi COMMAND sh -c "echo 'skipped: no provider here'; exit 77")
set_tests_properties(needs_ofi PROPERTIES LABELS ofi SKIP_RETURN_CODE 77)
add_test(NAME needs_snapshot COMMAND sh -c "echo 'skipped: no snapshot'; exit 77")
set_tests_properties(needs_snapshot PROPERTIES LABELS "sim;optional" SKIP_RETURN_CODE 77)
add_test(NAME breaks COMMAND sh -c "for i in $(seq -s ' ' 1 40); do echo noise $i; done; echo 'the detail that says why'; exit 3")
set_tests_properties(breaks PROPERTIES LABELS sim)
CMAKE
cmake -S "$work/proj" -B "$work/build" >"$work/configure.log" 2>&1 ||
    fail "configure of the probe project failed: $(tail -n 3 "$work/configure.log")"
ctest --test-dir "$work/build" --output-junit "$work/j.xml" >"$work/ctest.log" 2>&1
[ -s "$work/j.xml" ] || fail "ctest wrote no JUnit XML"

# run NAME REQUIRE WANT_RC: the script's output in $work/NAME.out.
run() {
    python3 "$script" "$work/j.xml" "$work/build" --require "$2" >"$work/$1.out" 2>&1
    rc=$?
    [ "$rc" -eq "$3" ] || fail "$1: exit $rc, expected $3: $(cat "$work/$1.out")"
}
has() { grep -qF -- "$2" "$work/$1.out" || fail "$1: no line with \"$2\" in: $(cat "$work/$1.out")"; }

# A required label whose case ran: passes, and still lists every skip,
# the cmocka case skipped inside a case that ran, and the failed case's
# last lines (its detail among them, the first noise lines not).
run vm_ran "vm" 0
has vm_ran "skipped needs_ofi: skipped: no provider here"
has vm_ran "skipped needs_snapshot: skipped: no snapshot"
has vm_ran "cmocka case test_inner skipped inside 1 case(s) that ran: in_vm"
has vm_ran "breaks failed; the last lines of its output:"
has vm_ran "| the detail that says why"
grep -qxF -- "  | noise 1" "$work/vm_ran.out" && fail "vm_ran: printed more than the last lines"
# A required label whose only case skipped fails the stage.
run ofi_skipped "ofi" 1
has ofi_skipped "FAIL: needs_ofi (required: ofi) was skipped: skipped: no provider here"
# An optional case is not required by its label, only by its name.
run optional_label "sim" 0
run optional_named "needs_snapshot" 1
has optional_named "FAIL: needs_snapshot (required: needs_snapshot) was skipped"
# A label no case carries: the plugin was not built.
run absent "verbs" 1
has absent "FAIL: no case labelled or named verbs ran"
echo "ci_skips_selftest: ok (6 verdicts)"
