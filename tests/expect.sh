#!/usr/bin/env bash
# expect.sh REGEX COMMAND [ARG...]
#
# The verdict of a ctest case that must print a line (qs_add_expect_test,
# cmake/QsTestVerdict.cmake): runs COMMAND with its output (stdout and
# stderr, merged) passed through, then
#   - exits 77 (a skip) if COMMAND exited 77 without a sanitizer report;
#   - fails if COMMAND exited non-zero, if its output carries a sanitizer
#     report, or if no line of it matches REGEX (grep -E);
#   - passes otherwise.
# Each failure says which rule failed, on the last line.
set -u
if [ $# -lt 2 ]; then
    echo "usage: expect.sh REGEX COMMAND [ARG...]" >&2
    exit 2
fi
re=$1
shift
out=$(mktemp "${TMPDIR:-/tmp}/qs-expect.XXXXXX")
trap 'rm -f "$out"' EXIT

"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}

sanitizer='(ERROR|WARNING|FATAL): (Address|Leak|Thread|UndefinedBehavior)Sanitizer|SUMMARY: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|: runtime error: '
if grep -qE "$sanitizer" "$out"; then
    echo "expect: FAIL: a sanitizer report in the output (exit $rc)"
    exit 1
fi
if [ "$rc" -eq 77 ]; then
    # The command's last line is its reason: repeat it last, where
    # scripts/ci-skips.py reads it.
    echo "expect: SKIP: $(grep -v '^[[:space:]]*$' "$out" | tail -n 1)"
    exit 77
fi
if [ "$rc" -ne 0 ]; then
    echo "expect: FAIL: exit status $rc"
    exit 1
fi
if ! grep -qE -- "$re" "$out"; then
    echo "expect: FAIL: exit 0 but no line matches '$re'"
    exit 1
fi
exit 0
