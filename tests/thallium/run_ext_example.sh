#!/bin/bash
# One of the Thallium project's own examples, compiled unchanged from a
# local snapshot of mochi-thallium (not part of this repository) against
# this build and run; it passes when the output has the expected number
# of lines matching a pattern.
# usage: run_ext_example.sh INCLUDE_DIR LIB_DIR CXX EXAMPLE PATTERN COUNT
# Exit 77 (skipped) when the snapshot is absent.
set -u
inc=$1 libdir=$2 cxx=$3 example=$4 pattern=$5 count=$6
src=${QS_EXT_THALLIUM:-}
main=$src/examples/$example/main.cpp
if [ ! -f "$main" ]; then
    echo "SKIP: QS_EXT_THALLIUM does not name a mochi-thallium source tree (\"$src\")"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cxx" -std=c++17 -w -I"$inc" -L"$libdir" -Wl,-rpath,"$libdir" "$main" \
    -o "$tmp/example" -lquicksilver || exit 1
"$tmp/example" > "$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
got=$(grep -c -- "$pattern" "$tmp/out")
if [ "$got" != "$count" ]; then
    cat "$tmp/out"
    echo "ext_example $example: $got lines match \"$pattern\", want $count"
    exit 1
fi
echo "ext_example $example: OK"
