#!/usr/bin/env bash
# check_output.sh COUNT TEXT -- COMMAND [ARGS...]
#
# Run COMMAND (killed after QS_EXAMPLE_TIMEOUT seconds, 120 by default),
# print its output, and succeed only if it exited 0 and TEXT (a fixed
# string) appears on exactly COUNT lines of its combined stdout and stderr.
set -u
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
  echo "usage: $0 COUNT TEXT -- COMMAND [ARGS...]" >&2
  exit 2
fi
want=$1
text=$2
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT

timeout --kill-after=10 "${QS_EXAMPLE_TIMEOUT:-120}" "$@" >"$out" 2>&1
rc=$?
cat "$out"
got=$(grep -cF -- "$text" "$out")
if [ "$rc" -ne 0 ]; then
  echo "check_output: '$*' exited with $rc (124: timed out)" >&2
  exit 1
fi
if [ "$got" -ne "$want" ]; then
  echo "check_output: '$text' printed $got times, want $want" >&2
  exit 1
fi
echo "check_output: OK ('$text' x $got)"
