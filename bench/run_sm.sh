#!/bin/bash
# Same-node comparison: na+sm against ofi+shm and ofi+tcp, with their
# floors, measured side by side in each run, and a table of medians at the
# end.
#
#   bench/run_sm.sh [-b BUILD_DIR] [-n RUNS] [-o OUT_DIR] [--quick]
#
# Each run measures, in this order: floor_shm (busy ping-pong over one
# shared cache line between two processes, memcpy and process_vm_readv
# bandwidth), floor_tcp (busy ping-pong between two processes and the
# stream), then hg_rate (busy and wait) and hg_bw (busy) as two processes
# and the CPU seconds of an idle waiting server (QS_BENCH_IDLE_S, default
# 3 s), on na+sm, on ofi+shm (libfabric's shm provider) and on
# ofi+tcp://127.0.0.1:0. JSON records go to OUT_DIR/run<N>.jsonl; the
# table is printed by bench/summarize_sm.py.
set -u
# ofi+tcp here is libfabric's tcp provider: every TCP spelling is the
# native plugin unless QS_OFI_TCP=libfabric (docs/architecture.md).
export QS_OFI_TCP=libfabric

here=$(cd "$(dirname "$0")" && pwd)
build=${QS_BENCH_BUILD:-$here/../build-bench}
runs=3
out=""
quick=0
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -n) runs=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run_sm: unknown argument $1" >&2; exit 2 ;;
    esac
done
bin=$build/bench
for t in floor_shm floor_tcp hg_rate hg_bw; do
    [ -x "$bin/$t" ] || { echo "run_sm: $bin/$t is missing" >&2; exit 2; }
done
out=${out:-$(mktemp -d /tmp/qs-bench-sm.XXXXXX)}
mkdir -p "$out"
log=$out/log.txt

if [ "$quick" -eq 1 ]; then
    rate_args=(--iters 1000 --warmup 100 --rate-count 2000 --inflight 1,16 --max-seconds 2)
    bw_args=(--sizes 64K,1M,16M --bytes 16M --max-reps 200 --max-seconds 2)
    fshm_args=(--iters 2000 --warmup 200 --sizes 64K,1M,16M --bytes 16M --max-seconds 2)
    ftcp_args=(--iters 1000 --warmup 100 --sizes 64K,1M,16M --bytes 16M --max-seconds 2)
else
    rate_args=(--iters 10000 --warmup 1000 --rate-count 20000 --inflight 1,16 --max-seconds 5)
    bw_args=(--sizes 64K,1M,16M --bytes 256M --max-reps 2000 --max-seconds 5)
    fshm_args=(--iters 100000 --warmup 10000 --sizes 64K,1M,16M --bytes 256M --max-seconds 5)
    ftcp_args=(--iters 10000 --warmup 1000 --sizes 64K,1M,16M --bytes 256M --max-seconds 5)
fi

{
    echo "run_sm: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) cores"
    echo "run_sm: source $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null)"
    echo "run_sm: load before: $(cat /proc/loadavg)"
    echo "run_sm: results in $out"
} | tee "$log"

run() {
    local json=$1 limit=$2
    shift 2
    echo "+ $*" >>"$log"
    timeout --kill-after=5 "$limit" "$@" >"$out/.cmd.out" 2>>"$log"
    local rc=$?
    grep -v '^{' "$out/.cmd.out" | tee -a "$log"
    grep '^{' "$out/.cmd.out" >>"$json"
    [ "$rc" -ne 0 ] && echo "run_sm: FAILED (status $rc): $*" | tee -a "$log"
    return 0
}

# start_server <seconds> <tool> <mode> <info>: the tool's --server in the
# background (pid in $spid) until it publishes its address in $addr_file;
# 1 (after a FAILED line, the server stopped) when it does not.
start_server() {
    local limit=$1 tool=$2 mode=$3 info=$4
    addr_file=$out/.addr
    rm -f "$addr_file"
    timeout --kill-after=5 "$((limit + 30))" "$bin/$tool" --server \
        --mode "$mode" --addr-file "$addr_file" --server-seconds "$((limit + 20))" \
        "$info" >>"$log" 2>&1 &
    spid=$!
    for _ in $(seq 200); do
        [ -s "$addr_file" ] && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -s "$addr_file" ]; then
        echo "run_sm: FAILED: $tool --server $info published no address" | tee -a "$log"
        kill "$spid" 2>/dev/null
        wait "$spid" 2>/dev/null
        return 1
    fi
    return 0
}

# two_proc <json> <timeout> <tool> <mode> <info> [args...]
two_proc() {
    local json=$1 limit=$2 tool=$3 mode=$4 info=$5 spid addr_file
    shift 5
    start_server "$limit" "$tool" "$mode" "$info" || return 0
    run "$json" "$limit" "$bin/$tool" --client "$(cat "$addr_file")" \
        --mode "$mode" "$@" "$info"
    wait "$spid"
}

# idle_cpu <json> <info>: a waiting-mode hg_rate server with no client:
# its CPU seconds (user + system, /proc/<pid>/stat) over IDLE_S seconds,
# after one second to settle. An idle server should be at 0.
IDLE_S=${QS_BENCH_IDLE_S:-3}
idle_cpu() {
    local json=$1 info=$2 spid addr_file t0 t1 tck
    start_server "$IDLE_S" hg_rate wait "$info" || return 0
    # The pid of hg_rate itself (timeout's child).
    local hpid
    hpid=$(pgrep -P "$spid" hg_rate | head -1)
    hpid=${hpid:-$spid}
    sleep 1
    t0=$(awk '{print $14 + $15}' "/proc/$hpid/stat")
    sleep "$IDLE_S"
    t1=$(awk '{print $14 + $15}' "/proc/$hpid/stat")
    tck=$(getconf CLK_TCK)
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    awk -v a="$t0" -v b="$t1" -v t="$tck" -v s="$IDLE_S" -v i="$info" \
        -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        c = (b - a) / t
        printf "idle server %-24s wait: %.3f CPU s over %d s idle\n", i, c, s
        printf "{\"tool\":\"idle_server\",\"info\":\"%s\",\"idle_s\":%d,\"cpu_s\":%.3f,\"load1\":%s}\n", i, s, c, l
    }' >"$out/.idle"
    grep -v '^{' "$out/.idle" | tee -a "$log"
    grep '^{' "$out/.idle" >>"$json"
}

for r in $(seq 1 "$runs"); do
    json=$out/run$r.jsonl
    : >"$json"
    echo "run_sm: run $r of $runs, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
    run "$json" 120 "$bin/floor_shm" "${fshm_args[@]}"
    run "$json" 120 "$bin/floor_tcp" --procs 2 "${ftcp_args[@]}"
    for info in na+sm ofi+shm ofi+tcp://127.0.0.1:0; do
        two_proc "$json" 150 hg_rate busy,wait "$info" "${rate_args[@]}"
        two_proc "$json" 150 hg_bw busy "$info" "${bw_args[@]}"
        idle_cpu "$json" "$info"
    done
done
python3 "$here/summarize_sm.py" "$out"/run*.jsonl | tee -a "$log"
