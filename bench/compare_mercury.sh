#!/bin/bash
# Side by side with Mercury: compiles bench/hg_rate.c and bench/hg_bw.c
# against this library and against a Mercury install (built outside the
# repository from its public source; never committed), runs them
# alternately in one session, and prints the medians and our/Mercury ratios.
#
#   bench/compare_mercury.sh -m MERCURY_PREFIX [-b QS_BUILD_DIR] [-n ROUNDS]
#                            [-B QS_BEFORE_BUILD_DIR] [-o OUT_DIR] [--quick]
#                            [--one-process] [--tcp-only] [--no-native]
#                            [--payload LIST] [--no-bw] [--pin] [--rt]
#                            [--wait] [--shm-only]
#
# -B adds a third library, an earlier build of this one (a before/after
# comparison of a change, in the same session as Mercury).
# Each round runs, for each library in turn (the order alternates from one
# round to the next, so drift on a shared machine falls on both):
#   - hg_rate over TCP (ours ofi+tcp, Mercury ofi+tcp) and shared memory
#     (ours sm, Mercury na+sm): empty-RPC round trip with one in flight and
#     the rate with 16 in flight, busy polling;
#   - the same over our native TCP plugin ("tcp://", the "native" column),
#     unless --no-native (a build without plugins/tcp has none);
#   - hg_bw pulls of 64 KiB, 1 MiB and 16 MiB over the same fabrics;
#   - floor_tcp once (raw TCP ping-pong and stream on loopback), and
#     floor_shm unless --tcp-only (a shared cache line's ping-pong, memcpy
#     and process_vm_readv).
# The load average is recorded at the start and after every round.
# With --pin, each run (and floor_tcp's) is framed by two state probes
# (floor_shm --probe: one cache line's round trip between CPUs 1 and 0,
# and the slower CPU's 2 KiB copy in cache), recorded in its lines as
# "cpu_line_us_before" and "_after", "cpu_copy_ns_before" and "_after",
# and floor_shm's message runs carry the same: a guest's two CPUs move
# between the host's cores (here 0.09 us on one core, 0.14 us on two that
# share a cache, 0.5 us apart), and one slows while the host runs
# something else beside it. The summary sets a floor beside RPCs only
# when both ran with the CPUs in one place and neither slowed, and a
# target's round in which they moved or one slowed is shown but not
# counted.
# Server and client are two processes unless --one-process. Rates are the
# median window of each run (see hg_rate.c); then the median over rounds.
# Every record carries its round, and a last table gives issue 27's
# targets round by round beside each round's floors, with the number of
# rounds that met each one (compare_summary.py).
# The load average is printed with the table: on a loaded machine the
# ratios mean more than the absolute numbers. --tcp-only skips the
# shared-memory runs; --shm-only skips every TCP run (ofi+tcp, the native
# plugin and the TCP floor), for a machine whose other work would disturb
# loopback TCP but not real-time shared-memory runs (--rt).
#
# --payload LIST sweeps hg_rate's input size (hg_rate --payload, for
# example 0,64,512,2K,4K,eager,eager+1): each size is measured with 1 and
# 16 in flight, and a second table gives each library's rate at 16 in
# flight, the share of its own empty-RPC rate it keeps, and the ratio.
# "eager" is each library's own limit (the sizes differ; the table says
# them). --no-bw skips the hg_bw pulls.
#
# --pin runs the server on CPU 0 and the client on CPU 1 (taskset), and
# floor_tcp's reader on CPU 0 and its writer on CPU 1 (--pin 1,0). On a
# 2-CPU machine the scheduler otherwise sometimes puts both busy-polling
# processes on one CPU, where each round trip waits for a scheduler tick
# (4 ms here): the same library then measures 30 us in one run and 8 ms
# in the next.
#
# --wait adds, over TCP, the empty RPC with 1 and 16 in flight with both
# processes in wait mode (HG_Progress with a timeout: they sleep in the
# kernel until a message comes) beside the busy-polling runs.
#
# --rt runs the shared-memory measurements (both libraries' servers and
# clients, and floor_shm) under SCHED_RR priority 10 (chrt; needs root).
# On a shared machine other work then runs only in the kernel's real-time
# throttle window (sched_rt_runtime_us: 50 ms in every second here), which
# the window medians of hg_rate leave out, instead of preempting a busy
# poller at any moment. Same treatment for every library; say it with the
# numbers. The TCP runs stay at normal priority: loopback TCP needs the
# kernel's softirq threads, which two real-time pollers would starve
# (tried: round trips 25% longer, floors halved).
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$src/build
mercury=""
before=""
rounds=3
out=""
quick=0
procs=2
shm_runs=1
tcp_runs=1
native=1
payload=""
bw_runs=1
pin_srv=()
pin_cli=()
rt=()
wait_runs=0
run_mode=busy

while [ $# -gt 0 ]; do
    case "$1" in
    -m) mercury=$2; shift 2 ;;
    -b) build=$2; shift 2 ;;
    -B) before=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --one-process) procs=1; shift ;;
    --tcp-only) shm_runs=0; shift ;;
    --shm-only) tcp_runs=0; native=0; shift ;;
    --no-native) native=0; shift ;;
    --payload) payload=$2; shift 2 ;;
    --no-bw) bw_runs=0; shift ;;
    --pin) pin_srv=(taskset -c 0); pin_cli=(taskset -c 1); shift ;;
    --rt) rt=(chrt -r 10); shift ;;
    --wait) wait_runs=1; shift ;;
    -h|--help) sed -n '2,60p' "$0"; exit 0 ;;
    *) echo "compare_mercury: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$mercury" ] || [ ! -f "$mercury/include/mercury.h" ]; then
    echo "compare_mercury: -m must name a Mercury install prefix" \
        "(see docs/performance.md)" >&2
    exit 2
fi
build=$(cd "$build" 2>/dev/null && pwd)
[ -n "$before" ] && before=$(cd "$before" 2>/dev/null && pwd)
lib=$(ls "$build"/libquicksilver.so 2>/dev/null)
if [ -z "$lib" ]; then
    echo "compare_mercury: no libquicksilver.so in $build" >&2
    exit 2
fi
out=${out:-$(mktemp -d /tmp/qs-compare.XXXXXX)}
mkdir -p "$out/bin"
log=$out/log.txt
: >"$log"

# 1. The same sources, the same flags, two libraries.
cflags=(-O2 -g -std=gnu11 -D_GNU_SOURCE -I"$here")
for t in hg_rate hg_bw; do
    gcc "${cflags[@]}" -I"$src/include" "$here/$t.c" "$here/bench_hg.c" \
        "$here/bench_util.c" -o "$out/bin/${t}.qs" -L"$build" \
        -Wl,-rpath,"$build" -lquicksilver -lpthread -lm || exit 1
    if [ -n "$before" ]; then
        gcc "${cflags[@]}" -I"$src/include" "$here/$t.c" "$here/bench_hg.c" \
            "$here/bench_util.c" -o "$out/bin/${t}.before" -L"$before" \
            -Wl,-rpath,"$before" -lquicksilver -lpthread -lm || exit 1
    fi
    gcc "${cflags[@]}" -I"$mercury/include" "$here/$t.c" "$here/bench_hg.c" \
        "$here/bench_util.c" -o "$out/bin/${t}.mercury" -L"$mercury/lib" \
        -Wl,-rpath,"$mercury/lib" -lmercury -lna -lmercury_util -lpthread \
        -lm || exit 1
done
floor=$build/bench/floor_tcp
# floor_tcp's connections ask for the send buffer the native plugin asks
# for (NA_TCP_SNDBUF), so that its fetch bounds the native pulls: under
# the kernel's tuning the buffer grows to megabytes and a 1 MiB answer is
# read from lines no longer in the cache (docs/performance.md, "A fixed
# send buffer for native TCP").
tcp_sndbuf=$(sed -n 's/^#define NA_TCP_SNDBUF (\(.*\))$/\1/p' \
    "$src/plugins/tcp/na_tcp_internal.h")
case "$tcp_sndbuf" in
*[!0-9\ \*]* | "")
    echo "compare_mercury: cannot read NA_TCP_SNDBUF from plugins/tcp/na_tcp_internal.h" >&2
    exit 1
    ;;
esac
tcp_sndbuf=$((tcp_sndbuf))
floor_shm=$build/bench/floor_shm
floor_payload=""
if [ -n "$payload" ]; then
    sweep=(--payload "$payload" --inflight 1,16)
    # floor_shm's payload ping-pong and message rate at the fixed sizes
    # of the sweep (the eager limits are each library's own), and at 8
    # bytes: the floor's nearly empty message, against which the summary
    # prices what carrying 2 KiB costs the floor itself.
    floor_payload=$( (echo 8; echo "$payload" | tr ',' '\n') |
        grep -v '^0$' | grep -v eager | awk '!seen[$0]++' | paste -sd, -)
else
    sweep=(--inflight 16)
fi

if [ "$quick" -eq 1 ]; then
    rate_args=(--iters 500 --warmup 50 --rate-count 2000 --max-seconds 2)
    bw_args=(--bytes 64M --max-seconds 2)
else
    rate_args=(--iters 5000 --warmup 500 --rate-count 20000 --max-seconds 5)
    bw_args=(--bytes 256M --max-seconds 5)
fi

# state_probe: the state of CPUs 1 and 0 now (floor_shm --probe): the
# round trip of one cache line between them in us, then the slower one's
# 2 KiB copy in cache in ns; nothing without floor_shm.
state_probe() {
    [ -x "$floor_shm" ] || return 0
    "${rt[@]}" "$floor_shm" --probe --pin 1,0 2>>"$log" |
        sed -n 's/^{.*"median_us":\([0-9.e+-]*\).*"copy_ns":\([0-9.e+-]*\).*/\1 \2/p'
}

# tag_records LIB FABRIC [BEFORE AFTER]: the JSON lines on stdin tagged
# with the library, the fabric, the round ($round) and, when both are
# given, the state probes around their run (state_probe's two numbers
# each); appended to $out/records.jsonl.
tag_records() {
    local probes="" lb cb la ca
    if [ -n "${3:-}" ] && [ -n "${4:-}" ]; then
        read -r lb cb <<<"$3"
        read -r la ca <<<"$4"
        probes="\"cpu_line_us_before\":$lb,\"cpu_line_us_after\":$la,"
        [ -n "$cb" ] && [ -n "$ca" ] &&
            probes="$probes\"cpu_copy_ns_before\":$cb,\"cpu_copy_ns_after\":$ca,"
    fi
    sed "s/^{/{\"lib\":\"$1\",\"fabric\":\"$2\",\"round\":$round,$probes/" \
        >>"$out/records.jsonl"
}

# run_pair TOOL LIB INFO ARGS...: one measurement, JSON lines tagged with
# the library, the fabric and the round ($round) appended to
# $out/records.jsonl.
run_pair() {
    local tool=$1 which=$2 info=$3 fabric=$4
    shift 4
    local bin=$out/bin/$tool.$which addr=$out/addr.$$ spid rc rtp=()
    [ "$fabric" = shm ] && rtp=("${rt[@]}")
    # Our ofi+tcp rows are libfabric's tcp provider (the opt-in of
    # docs/architecture.md, "Transport names"); the native rows are not.
    if [ "$which" = native ]; then unset QS_OFI_TCP; else export QS_OFI_TCP=libfabric; fi
    # The native plugin runs our binaries.
    [ "$which" = native ] && bin=$out/bin/$tool.qs
    rm -f "$addr"
    if [ "$procs" -eq 2 ]; then
        local probe_before="" probe_after=""
        # A pinned run is framed by two state probes: where the guest's
        # CPUs were, before it and after (floor_shm --probe).
        [ "${#pin_cli[@]}" -gt 0 ] && probe_before=$(state_probe)
        timeout 300 "${rtp[@]}" "${pin_srv[@]}" "$bin" --server --addr-file "$addr" --mode "$run_mode" \
            --server-seconds 240 "$info" >>"$log" 2>&1 &
        spid=$!
        for _ in $(seq 200); do
            [ -s "$addr" ] && break
            sleep 0.05
        done
        if [ ! -s "$addr" ]; then
            echo "compare_mercury: $which $tool server on $info did not start" >&2
            kill "$spid" 2>/dev/null
            return 1
        fi
        timeout 300 "${rtp[@]}" "${pin_cli[@]}" "$bin" --client "$(cat "$addr")" --mode "$run_mode" "$@" \
            "$info" 2>>"$log" | tee -a "$log" | grep '^{' >"$out/run.$$"
        rc=${PIPESTATUS[0]}
        wait "$spid" 2>/dev/null
        [ -n "$probe_before" ] && probe_after=$(state_probe)
        tag_records "$which" "$fabric" "$probe_before" "$probe_after" <"$out/run.$$"
        rm -f "$out/run.$$"
    else
        timeout 300 "${rtp[@]}" "$bin" --mode busy --driver thread "$@" "$info" \
            2>>"$log" | tee -a "$log" | grep '^{' | tag_records "$which" "$fabric"
        rc=${PIPESTATUS[0]}
    fi
    return "$rc"
}

: >"$out/records.jsonl"
uptime >"$out/load.txt"
# The processor, since ratios move with it: family and model tell the
# generations apart where the model name is only "AMD EPYC".
lscpu | awk -F: '/^(Model name|CPU family|Model|CPU\(s\)):/ {
    gsub(/^ +/, "", $2); printf "%s%s: %s", sep, $1, $2; sep = ", " }
    END { print "" }' >"$out/cpu.txt"
round=0
for r in $(seq "$rounds"); do
    round=$r
    if [ $((r % 2)) -eq 1 ]; then order="qs mercury"; else order="mercury qs"; fi
    [ -n "$before" ] && order="$order before"
    [ -n "$before" ] && [ $((r % 2)) -eq 0 ] && order="before $order"
    [ "$native" -eq 1 ] && order="$order native"
    [ "$native" -eq 1 ] && [ $((r % 2)) -eq 0 ] && order="native $order"
    order=$(echo "$order" | awk '{ for (i = 1; i <= NF; i++) if (!s[$i]++) printf "%s ", $i }')
    echo "round $r of $rounds ($order)" >&2
    for which in $order; do
        shm_here=$shm_runs
        if [ "$which" = native ]; then
            tcp="tcp://127.0.0.1:0" shm_here=0
        elif [ "$which" != mercury ]; then
            tcp="ofi+tcp://127.0.0.1:0" shm="sm"
        else
            tcp="ofi+tcp://127.0.0.1" shm="na+sm"
        fi
        [ "$tcp_runs" -eq 1 ] &&
            run_pair hg_rate "$which" "$tcp" tcp "${rate_args[@]}" "${sweep[@]}"
        if [ "$wait_runs" -eq 1 ] && [ "$tcp_runs" -eq 1 ]; then
            run_mode=wait
            run_pair hg_rate "$which" "$tcp" tcp "${rate_args[@]}" --inflight 1,16
            run_mode=busy
        fi
        [ "$shm_here" -eq 1 ] &&
            run_pair hg_rate "$which" "$shm" shm "${rate_args[@]}" "${sweep[@]}"
        [ "$bw_runs" -eq 1 ] && [ "$tcp_runs" -eq 1 ] &&
            run_pair hg_bw "$which" "$tcp" tcp "${bw_args[@]}" --ops pull \
                --sizes 64K,1M,16M
        [ "$bw_runs" -eq 1 ] && [ "$shm_here" -eq 1 ] &&
            run_pair hg_bw "$which" "$shm" shm "${bw_args[@]}" --ops pull \
                --sizes 64K,1M,16M
    done
    if [ -x "$floor" ] && [ "$tcp_runs" -eq 1 ]; then
        probe_before="" probe_after=""
        [ "${#pin_cli[@]}" -gt 0 ] && probe_before=$(state_probe)
        timeout 300 "$floor" --procs "$procs" --sizes 64K,1M,16M \
            --sndbuf "$tcp_sndbuf" ${pin_cli:+--pin 1,0} "${bw_args[@]}" 2>>"$log" | tee -a "$log" | grep '^{' >"$out/run.$$"
        [ -n "$probe_before" ] && probe_after=$(state_probe)
        tag_records floor tcp "$probe_before" "$probe_after" <"$out/run.$$"
        rm -f "$out/run.$$"
    fi
    if [ -x "$floor_shm" ] && [ "$shm_runs" -eq 1 ]; then
        timeout 300 "${rt[@]}" "$floor_shm" --sizes 2K,64K,1M,16M "${bw_args[@]}" \
            ${pin_cli:+--pin 1,0} \
            ${floor_payload:+--payload "$floor_payload"} \
            2>>"$log" | tee -a "$log" | grep '^{' | tag_records floor shm
    fi
    uptime >>"$out/load.txt"
done

python3 "$here/compare_summary.py" "$out/records.jsonl" "$out/load.txt"
echo "cpu: $(cat "$out/cpu.txt")"
echo "records: $out/records.jsonl, log: $log" >&2
