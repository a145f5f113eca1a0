#!/bin/sh
# check_kit.sh CASE QS_SWEEP BIN_DIR SRC_DIR OUT_DIR: the commands of
# docs/testing-your-service.md, run against the testing kit, with what
# each must print.
set -u
case_=$1 sweep=$2 bin=$3 src=$4 out=$5/$1
rm -rf "$out" && mkdir -p "$out" && cd "$out" || exit 1
fail() { echo "check_kit $case_: $*"; cat report.txt 2>/dev/null | tail -40; exit 1; }
has() { grep -q -- "$1" report.txt || fail "no \"$1\" in the output"; }
# Hang limits stretch with the build's slowdown (QS_SLOW: 3 under ASan, 8
# under TSan), so that a slow passing run is not taken for a hang.
slow=${QS_SLOW:-1}

case $case_ in
test_sim)
    "$bin/kv_test" >report.txt 2>&1 || fail "kv_test failed"
    has "kv_test: OK"
    # Seeds and a fault profile by hand; a partition of the server's node
    # makes calls fail cleanly, never hang.
    QS_SIM_SEED=42 QS_SIM_FAULTS='world:loss=0.05;partition:node0<>node1@1ms-3ms' \
        "$bin/kv_test" >report.txt 2>&1 || fail "kv_test under faults failed"
    QS_SIM_FAULTS='node:node0:crash@2ms,restart@4ms' \
        "$bin/kv_test" >report.txt 2>&1 || fail "kv_test with a crash failed"
    # The trace, drawn.
    QS_SIM_SEED=42 QS_SIM_TRACE_OUT=kv.trace "$bin/kv_test" >/dev/null 2>&1 ||
        fail "kv_test with a trace failed"
    "$(dirname "$sweep")/trace2svg" kv.trace kv.svg || fail "trace2svg failed"
    grep -q '^<svg' kv.svg || fail "no svg"
    ;;
test_tcp)
    "$bin/kv_test" "ofi+tcp://127.0.0.1:0" >report.txt 2>&1 ||
        fail "kv_test over ofi+tcp failed"
    has "kv_test: OK"
    ;;
lazy_fabric)
    # A test on sim does not load libfabric (whose libinfinipath sleeps
    # in its constructor, docs/plugin-ofi.md); one over ofi+tcp does.
    LD_DEBUG=libs "$bin/kv_test" >report.txt 2>&1 || fail "kv_test failed"
    has "kv_test: OK"
    grep -q "libfabric" report.txt && fail "kv_test on sim loaded libfabric"
    LD_DEBUG=libs "$bin/kv_test" "ofi+tcp://127.0.0.1:0" >report.txt 2>&1 ||
        fail "kv_test over ofi+tcp failed"
    has "kv_test: OK"
    has "calling init: .*libfabric"
    ;;
sweep_swarm)
    "$sweep" --quiet --check --seeds 1:${QS_KIT_SEEDS:-200} --swarm \
        --timeout $((60 * slow)) --junit junit.xml -- "$bin/kv_test" >report.txt 2>&1 ||
        fail "the sweep failed"
    has "^${QS_KIT_SEEDS:-200} passed, 0 failed$"
    ;;
sweep_determinism)
    "$sweep" --quiet --determinism --seeds 1:50 --timeout $((60 * slow)) \
        -- "$bin/kv_test" \
        >report.txt 2>&1 || fail "kv_test is not deterministic"
    has "^50 passed, 0 failed$"
    ;;
sweep_bug_timeout)
    # The planted bug: kv_get waits without a deadline. Some drawn profile
    # loses a response; the sweep reports the hang and its replay line.
    # --vtimeout: a run whose virtual clock passes 600 s is hung (a normal
    # run needs about 0.3 virtual seconds, one held by a respond waiting
    # out its 60 s acknowledgement about a minute); the wall-clock
    # --timeout stays as the backstop.
    "$sweep" --quiet --seeds 1:10 --swarm --vtimeout 600 \
        --timeout $((60 * slow)) -- \
        "$bin/kv_test_bug_timeout" >report.txt 2>&1 && fail "the sweep passed"
    has "^HANG seed [0-9]*: its virtual clock passed 600 s"
    line=$(sed -n 's/^  replay: //p' report.txt | head -1)
    [ -n "$line" ] || fail "no replay line"
    case "$line" in QS_SIM_HANG_S=600\ *) ;; *) fail "the replay line lacks the bound: $line" ;; esac
    # The replay hangs again and ends itself with status 124 (timeout -s
    # KILL would make it 137), and the same seed passes without the bug.
    (eval "timeout -s KILL $((60 * slow)) env $line") >/dev/null 2>&1
    [ $? = 124 ] || fail "the replay did not hang: $line"
    fixed=$(echo "$line" | sed 's|kv_test_bug_timeout|kv_test|')
    (eval "timeout $((60 * slow)) env $fixed") >/dev/null 2>&1 || fail "the fixed test fails: $fixed"
    # Without --vtimeout the wall-clock timeout finds the same seed.
    seed=$(echo "$line" | sed -n 's/.*QS_SIM_SEED=\([0-9]*\).*/\1/p')
    "$sweep" --quiet --seeds "$seed:1" --swarm --timeout $((2 * slow)) -- \
        "$bin/kv_test_bug_timeout" >report.txt 2>&1 && fail "the wall-clock sweep passed"
    has "^HANG seed $seed: still running after"
    ;;
sweep_check)
    # The invariant checker on a clean sweep: green.
    "$sweep" --quiet --check --seeds 1:40 --swarm --timeout $((60 * slow)) \
        -- "$bin/kv_test" \
        >report.txt 2>&1 || fail "kv_test fails under --check"
    has "^40 passed, 0 failed$"
    # The planted leak (kv_read keeps its bulk handle when the call
    # fails): invisible without the checker, caught with it.
    # (Under AddressSanitizer, LeakSanitizer would see the instance Margo
    # gives up on; this step is about the library's own checks.)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        "$sweep" --quiet --seeds 1:20 --swarm --timeout $((60 * slow)) \
        -- "$bin/kv_test_bug_leak" \
        >report.txt 2>&1 || fail "the leak shows without the checker"
    has "^20 passed, 0 failed$"
    "$sweep" --quiet --check --seeds 1:20 --swarm --timeout $((60 * slow)) -- \
        "$bin/kv_test_bug_leak" >report.txt 2>&1 && fail "the sweep passed"
    has "^FAIL seed [0-9]*: exit status 70: the invariant checker found"
    has "^  replay: QS_CHECK=1 QS_SIM_SEED="
    line=$(sed -n 's/^  replay: //p' report.txt | head -1)
    # The replay fails again and names the leak and where it was made.
    (eval "env $line") >replay.txt 2>&1
    [ $? = 70 ] || fail "the replay did not fail with status 70: $line"
    grep -q "qs-check: not released: bulk handle of 8192 bytes" replay.txt ||
        fail "no leak report in the replay: $(cat replay.txt)"
    grep -q "created at kv_read" replay.txt ||
        fail "the report does not name kv_read: $(cat replay.txt)"
    grep -q "^qs-check: seed [0-9]*; replay: QS_CHECK=1 QS_SIM_SEED=" \
        replay.txt || fail "no replay line from the checker"
    ;;
fuzz_put)
    # Sanitizer builds run each input about ten times slower: fewer there.
    runs=${QS_KIT_FUZZ_RUNS:-3000}
    "$bin/kv_fuzz" "$src/corpus/put" "$src/regress" -runs=$runs >report.txt 2>&1 ||
        fail "kv_fuzz failed"
    has "replayed 6 inputs"
    has "ran $runs mutated inputs"
    ;;
fuzz_seq)
    runs=$((${QS_KIT_FUZZ_RUNS:-3000} / 2))
    "$bin/kv_fuzz_seq" "$src/corpus/seq" -runs=$runs >report.txt 2>&1 ||
        fail "kv_fuzz_seq failed"
    has "ran $runs mutated inputs"
    ;;
fuzz_bug)
    if [ -n "${QS_KIT_TSAN:-}" ]; then
        echo "check_kit $case_: skipped: ThreadSanitizer's allocator does not detect double frees"
        exit 77
    fi
    # The planted double free: the regression input finds it, the crash
    # is saved and its replay line crashes again.
    "$bin/kv_fuzz_bug" "$src/regress" >report.txt 2>&1 && fail "no crash"
    has "qs_fuzz: replay: "
    crash=$(sed -n 's/^qs_fuzz: crash; input saved as //p' report.txt)
    [ -s "$crash" ] || fail "crash input not saved"
    cmp -s "$crash" "$src/regress/put_long_key" || fail "saved input differs"
    "$bin/kv_fuzz_bug" "$crash" >/dev/null 2>&1 && fail "the replay did not crash"
    "$bin/kv_fuzz" "$crash" >/dev/null 2>&1 || fail "the fixed service crashes"
    ;;
libfuzzer)
    # The libFuzzer builds: the clean target runs on its corpus; the
    # planted double free is reported by AddressSanitizer on the
    # regression input, and libFuzzer saves it for replay.
    mkdir corpus && cp "$src"/corpus/put/* corpus/
    "$bin/kv_fuzz_lf" -seed=1 -runs=300 corpus >report.txt 2>&1 ||
        fail "the clean target failed"
    has "^Done 300 runs"
    "$bin/kv_fuzz_bug_lf" "$src/regress/put_long_key" >report.txt 2>&1 &&
        fail "no crash"
    has "AddressSanitizer: attempting double-free"
    ;;
*)
    fail "unknown case" ;;
esac
echo "check_kit $case_: OK"
