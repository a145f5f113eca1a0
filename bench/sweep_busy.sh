#!/bin/sh
# sweep_busy.sh BUILD_DIR [SEEDS]: how busy qs-sweep keeps the machine
# with --jobs equal to the core count (docs/performance.md, "qs-sweep").
# Two workloads: sweep_prog busy (20,000 echoes per run, CPU-bound) and
# the testing kit's kv_test (short runs, dominated by process start).
set -eu
build=$1 seeds=${2:-40}
cores=$(nproc)
out=$(mktemp -d)
for w in "$build/tests/sweep/sweep_prog busy" "$build/examples/testing_kit/kv_test"; do
    echo "== $w"
    # shellcheck disable=SC2086
    "$build/tools/qs-sweep" --quiet --out "$out" --jobs "$cores" \
        --seeds "1:$seeds" -- $w | tail -2
done
rm -rf "$out"
