#!/bin/sh
# sweep_busy.sh BUILD_DIR [ROUNDS] [SEEDS]: how busy qs-sweep keeps the
# machine's cores with --jobs equal to the core count (docs/performance.md,
# "qs-sweep throughput").
#
# Each round sweeps three workloads one after the other, SEEDS runs each:
#   reference   a CPU-bound loop in sh that never sleeps and does no I/O,
#               sized to use about as much CPU per run as kv_test does
#               (5 to 6 ms): what a run of that length that never waits
#               gets of the cores on this machine right now
#   kv_test     the testing kit's test on sim, as a user's sweep runs it
#   kv_test+lf  the same with libfabric.so.1 preloaded, as every run was
#               when the library linked libfabric (the constructor of its
#               libinfinipath sleeps before main(); docs/plugin-ofi.md)
# For each it prints what qs-sweep reports: seeds/s and the busy fraction
# (the runs' CPU time over the sweep's wall time times the core count).
# On a quiet machine the reference is near 100% and kv_test's own figure
# is the answer; on a shared machine every run only gets the scheduler's
# share (and qs-sweep itself waits for the scheduler before it starts the
# next run), and kv_test / reference says how much of what a never-waiting
# workload of the same granularity gets the sweep of kv_test got. Rounds
# interleave the workloads so that they see the same load. REF_LOOPS (in
# the environment) sizes the reference (6000 iterations).
set -eu
build=$1 rounds=${2:-3} seeds=${3:-200}
cores=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
kv=$build/examples/testing_kit/kv_test
fabric=$(ldconfig -p 2>/dev/null | sed -n 's/.*libfabric\.so\.1 .*=> //p' | head -1)

# sweep NAME ARGS...: one sweep; prints "NAME wall busy% seeds/s".
sweep() {
    name=$1
    shift
    rm -rf "$out/s"
    "$build/tools/qs-sweep" --quiet --out "$out/s" --jobs "$cores" \
        --seeds "1:$seeds" -- "$@" >"$out/r" 2>&1 || {
        cat "$out/r" >&2
        return 1
    }
    sed -n 's/.*jobs, \([0-9.]*\) s (\([0-9.]*\) seeds\/s), runs used \([0-9.]*\)% .*/\1 \3 \2/p' \
        "$out/r" | sed "s/^/$name /"
}

echo "sweep_busy: $cores cores, --jobs $cores, $seeds seeds per sweep, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$out/all"
for r in $(seq 1 "$rounds"); do
    sweep reference sh -c 'i=0; while [ $i -lt ${REF_LOOPS:-6000} ]; do i=$((i + 1)); done' >>"$out/all" ||
        exit 1
    sweep kv_test "$kv" >>"$out/all" || exit 1
    # (A sanitizer build refuses a preloaded library: that row is left out.)
    if [ -n "$fabric" ] && [ -z "${SWEEP_BUSY_NO_LF:-}" ]; then
        LD_PRELOAD=$fabric sweep kv_test+lf "$kv" >>"$out/all" ||
            echo "sweep_busy: kv_test with libfabric preloaded did not run" >&2
    fi
done
awk '{ printf "  %-11s %7.2f s  %5.1f%% busy  %6.1f seeds/s\n", $1, $2, $3, $4 }' "$out/all"
# Totals: CPU seconds (busy x wall) over wall seconds, per workload.
awk -v cores="$cores" -v seeds="$seeds" '
    { cpu[$1] += $3 / 100 * $2; wall[$1] += $2; n[$1]++ }
    END {
        for (w in wall)
            busy[w] = 100 * cpu[w] / wall[w]
        printf "sweep_busy: reference %.1f%%, kv_test %.1f%% (%.1f seeds/s)",
            busy["reference"], busy["kv_test"], n["kv_test"] * seeds / wall["kv_test"]
        if ("kv_test+lf" in wall)
            printf ", kv_test with libfabric loaded %.1f%% (%.1f seeds/s)",
                busy["kv_test+lf"], n["kv_test+lf"] * seeds / wall["kv_test+lf"]
        printf "\n"
        printf "sweep_busy: kv_test / reference = %.0f%%", 100 * busy["kv_test"] / busy["reference"]
        if ("kv_test+lf" in wall)
            printf ", with libfabric loaded %.0f%%", 100 * busy["kv_test+lf"] / busy["reference"]
        printf "\n"
    }' "$out/all"
echo "sweep_busy: load average $(cut -d' ' -f1-3 /proc/loadavg)"
