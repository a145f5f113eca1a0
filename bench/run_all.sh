#!/bin/bash
# Run every benchmark and its floors, several times, and print a table of
# medians.
#
#   bench/run_all.sh [-b BUILD_DIR] [-n RUNS] [-o OUT_DIR] [--quick]
#                    [--no-sockets] [--no-sim] [--no-two-process]
#
# Each run measures, in this order and so side by side on a shared machine:
#   1. floor_tcp: raw TCP ping-pong (busy and blocking, peer on a thread and
#      in a second process) and raw stream bandwidth, 4 KiB .. 16 MiB;
#   2. fi_pingpong -p tcp -e rdm (and -e msg) from libfabric-bin, 1 byte and
#      16 MiB, forced onto the loopback interface (-d lo, FI_TCP_IFACE=lo);
#   3. hg_rate and hg_bw on ofi+tcp, in one process and in two;
#   4. the same on ofi+sockets with FI_SOCKETS_PE_WAITTIME=0;
#   5. hg_rate, hg_bw and sim_speed on the simulated fabric.
# Every tool prints JSON records; they are kept as OUT_DIR/run<N>.jsonl and
# bench/summarize.py turns them into the median table printed at the end.
#
# Only 127.0.0.1 is used. Every command runs under timeout(1), and every
# tool bounds its own loops by count and by time.
set -u
# ofi+tcp here is libfabric's tcp provider: every TCP spelling is the
# native plugin unless QS_OFI_TCP=libfabric (docs/architecture.md).
export QS_OFI_TCP=libfabric

here=$(cd "$(dirname "$0")" && pwd)
build=${QS_BENCH_BUILD:-$here/../build-bench}
runs=3
out=""
quick=0
do_sockets=1
do_sim=1
do_two=1

while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -n) runs=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-sockets) do_sockets=0; shift ;;
    --no-sim) do_sim=0; shift ;;
    --no-two-process) do_two=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run_all: unknown argument $1" >&2; exit 2 ;;
    esac
done

bin=$build/bench
for t in floor_tcp hg_rate hg_bw sim_speed; do
    if [ ! -x "$bin/$t" ]; then
        echo "run_all: $bin/$t is missing; build with" >&2
        echo "  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release && cmake --build build-bench -j2" >&2
        exit 2
    fi
done
out=${out:-$(mktemp -d /tmp/qs-bench.XXXXXX)}
mkdir -p "$out"
log=$out/log.txt

# Sizes of the runs: the defaults, or a quick pass for trying the script.
if [ "$quick" -eq 1 ]; then
    rate_args=(--iters 1000 --warmup 100 --rate-count 2000 --max-seconds 2)
    bw_args=(--bytes 16M --max-reps 200 --max-seconds 2)
    floor_args=(--iters 1000 --warmup 100 --bytes 16M --max-seconds 2)
    fi_lat_iters=2000
    fi_bw_iters=10
    sim_args=(--rpcs 10000)
else
    rate_args=(--iters 10000 --warmup 1000 --rate-count 20000 --max-seconds 5)
    bw_args=(--bytes 256M --max-reps 2000 --max-seconds 5)
    floor_args=(--iters 10000 --warmup 1000 --bytes 256M --max-seconds 5)
    fi_lat_iters=10000
    fi_bw_iters=50
    sim_args=(--rpcs 100000)
fi
tcp=ofi+tcp://127.0.0.1:0
sockets=ofi+sockets://127.0.0.1:0

{
    echo "run_all: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) cores"
    echo "run_all: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "run_all: build $build ($(grep -m1 CMAKE_BUILD_TYPE: "$build/CMakeCache.txt" 2>/dev/null | sed 's/.*=//'))"
    echo "run_all: source $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null)" \
        "($(git -C "$here/.." status --porcelain -- lib plugins include 2>/dev/null | wc -l) uncommitted change(s) in lib, plugins, include)"
    echo "run_all: $(fi_info --version 2>/dev/null | head -1), $(cc --version | head -1)"
    echo "run_all: load before: $(cat /proc/loadavg)"
    echo "run_all: results in $out"
} | tee "$log"

# run <json file> <timeout s> <command...>: show and log the human lines,
# keep the JSON ones. A failure or a timeout is logged with the command.
run() {
    local json=$1 limit=$2
    shift 2
    local tmp=$out/.cmd.out rc
    echo "+ $*" >>"$log"
    timeout --kill-after=5 "$limit" "$@" >"$tmp" 2>>"$log"
    rc=$?
    grep -v '^{' "$tmp" | tee -a "$log"
    grep '^{' "$tmp" >>"$json"
    if [ "$rc" -ne 0 ]; then
        local why=""
        [ "$rc" -eq 124 ] && why=", timed out"
        echo "run_all: FAILED (status $rc$why): $*" | tee -a "$log"
    fi
    return 0
}

# two_proc <json> <timeout> <env...> -- <tool> <mode> <info> [args...]:
# start `tool --server`, wait for its address, run `tool --client` against
# it. The client asks the server to stop; timeout(1) bounds both anyway.
two_proc() {
    local json=$1 limit=$2
    shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local tool=$1 mode=$2 info=$3
    shift 3
    local addr_file=$out/.addr spid addr=""
    rm -f "$addr_file"
    echo "+ ${envs[*]} $bin/$tool --server --mode $mode $info" >>"$log"
    env "${envs[@]}" timeout --kill-after=5 "$((limit + 30))" "$bin/$tool" --server \
        --mode "$mode" --addr-file "$addr_file" --server-seconds "$((limit + 20))" \
        "$info" >>"$log" 2>&1 &
    spid=$!
    for _ in $(seq 200); do
        [ -s "$addr_file" ] && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    addr=$(cat "$addr_file" 2>/dev/null)
    if [ -z "$addr" ]; then
        echo "run_all: FAILED: $tool --server $info published no address" | tee -a "$log"
        kill "$spid" 2>/dev/null
        wait "$spid" 2>/dev/null
        return 0
    fi
    run "$json" "$limit" env "${envs[@]}" "$bin/$tool" --client "$addr" --mode "$mode" "$@" "$info"
    wait "$spid"
    local src=$?
    [ "$src" -ne 0 ] && echo "run_all: FAILED: $tool --server $info exited with $src" | tee -a "$log"
    return 0
}

# fi_pp <json> <ep> <size> <iters>: fi_pingpong on loopback, parsed into a
# JSON record. Its usec/xfer is half a round trip (two transfers per
# iteration), so the record carries both.
fi_pp() {
    local json=$1 ep=$2 size=$3 iters=$4
    local port=$((20000 + RANDOM % 20000)) spid line
    local so=$out/.fi_srv cl=$out/.fi_cli
    if ! command -v fi_pingpong >/dev/null; then
        echo "run_all: fi_pingpong is missing (apt-get install libfabric-bin): no libfabric floor" | tee -a "$log"
        return 0
    fi
    echo "+ fi_pingpong -p tcp -e $ep -d lo -I $iters -S $size (port $port)" >>"$log"
    FI_TCP_IFACE=lo timeout 60 fi_pingpong -p tcp -e "$ep" -d lo -I "$iters" -S "$size" \
        -B "$port" >"$so" 2>&1 &
    spid=$!
    for _ in $(seq 50); do
        ss -ltn 2>/dev/null | grep -q ":$port " && break
        sleep 0.1
    done
    FI_TCP_IFACE=lo timeout 60 fi_pingpong -p tcp -e "$ep" -d lo -I "$iters" -S "$size" \
        -P "$port" 127.0.0.1 >"$cl" 2>&1
    local rc=$?
    wait "$spid" 2>/dev/null
    cat "$cl" >>"$log"
    # The data line follows the header: bytes #sent #ack total time MB/sec
    # usec/xfer Mxfers/sec.
    # fi_pingpong abbreviates sizes (16m), so the size asked for is used.
    line=$(awk '$1 ~ /^[0-9]+[kmg]?$/ && NF >= 8 { print; exit }' "$cl")
    if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
        echo "run_all: FAILED: fi_pingpong -p tcp -e $ep -S $size (status $rc)" | tee -a "$log"
        return 0
    fi
    set -- $line
    printf 'fi_pingpong tcp %-3s %9s B: %8.2f us one-way (%.2f us round trip)  %9.1f MB/s\n' \
        "$ep" "$size" "$7" "$(awk -v u="$7" 'BEGIN { print 2 * u }')" "$6" | tee -a "$log"
    printf '{"tool":"fi_pingpong","metric":"pingpong","ep":"%s","size":%s,"oneway_us":%s,"rtt_us":%s,"MBps":%s,"load1":%s}\n' \
        "$ep" "$size" "$7" "$(awk -v u="$7" 'BEGIN { print 2 * u }')" "$6" \
        "$(cut -d' ' -f1 /proc/loadavg)" >>"$json"
}

for r in $(seq "$runs"); do
    json=$out/run$r.jsonl
    : >"$json"
    echo "=== run $r of $runs (load $(cut -d' ' -f1-3 /proc/loadavg)) ===" | tee -a "$log"

    # 1. Floors.
    run "$json" 120 "$bin/floor_tcp" "${floor_args[@]}"
    run "$json" 60 "$bin/floor_tcp" --procs 2 --only pingpong "${floor_args[@]}"
    # 2. The provider's own floor.
    fi_pp "$json" rdm 1 "$fi_lat_iters"
    fi_pp "$json" msg 1 "$fi_lat_iters"
    fi_pp "$json" rdm 16777216 "$fi_bw_iters"

    # 3. ofi+tcp.
    run "$json" 180 "$bin/hg_rate" "${rate_args[@]}" --mode all "$tcp"
    run "$json" 180 "$bin/hg_bw" "${bw_args[@]}" --mode busy "$tcp"
    if [ "$do_two" -eq 1 ]; then
        for m in busy noblock wait; do
            two_proc "$json" 120 -- hg_rate "$m" "$tcp" "${rate_args[@]}"
        done
        two_proc "$json" 180 -- hg_bw busy "$tcp" "${bw_args[@]}"
        two_proc "$json" 180 -- hg_bw wait "$tcp" "${bw_args[@]}"
    fi

    # 4. ofi+sockets, with its progress engine told not to sleep.
    if [ "$do_sockets" -eq 1 ]; then
        run "$json" 180 env FI_SOCKETS_PE_WAITTIME=0 "$bin/hg_rate" "${rate_args[@]}" --mode all "$sockets"
        run "$json" 180 env FI_SOCKETS_PE_WAITTIME=0 "$bin/hg_bw" "${bw_args[@]}" --mode busy "$sockets"
        if [ "$do_two" -eq 1 ]; then
            two_proc "$json" 120 FI_SOCKETS_PE_WAITTIME=0 -- hg_rate busy "$sockets" "${rate_args[@]}"
            two_proc "$json" 120 FI_SOCKETS_PE_WAITTIME=0 -- hg_rate wait "$sockets" "${rate_args[@]}"
        fi
    fi

    # 5. The simulated fabric (one thread, deterministic for QS_SIM_SEED).
    if [ "$do_sim" -eq 1 ]; then
        run "$json" 120 "$bin/hg_rate" "${rate_args[@]}" sim
        run "$json" 120 "$bin/hg_bw" "${bw_args[@]}" sim
        run "$json" 300 "$bin/sim_speed" "${sim_args[@]}"
    fi
done

echo "run_all: load after: $(cat /proc/loadavg)" | tee -a "$log"
echo
python3 "$here/summarize.py" "$out"/run*.jsonl | tee "$out/summary.md"
echo
echo "run_all: log, JSON records and summary in $out"
