#!/bin/sh
# check_outside.sh BUILD_DIR C_COMPILER SEEDS OFI [EXTRA_CFLAGS]: what a
# service author does with an installed Quicksilver only, command for
# command as docs/testing-your-service.md writes them and in its order:
# install into a scratch prefix, set up the shell as "Before you start"
# says, copy the example, build it with pkg-config, run it on the
# simulator with faults and a trace, sweep it with the installed
# qs-sweep, catch the planted bugs (a missing deadline, a leak only the
# invariant checker sees, a double free the fuzzer finds) from their
# replay lines. Where the guide's command is long (1,000 seeds, 600 s of
# libFuzzer) the count is smaller here.
set -eu
build=$1 cc=$2 seeds=$3 ofi=$4 extra=${5:-}
PREFIX="$build/sweep-install-check"
rm -rf "$PREFIX"
cmake --install "$build" --prefix "$PREFIX" >/dev/null
step() { echo "check_outside: $*"; }
die() { echo "check_outside: FAILED: $*"; exit 1; }
[ -f "$PREFIX/share/doc/Quicksilver/testing-your-service.md" ] ||
    die "the guide is not installed"
for h in qs_fuzz.h qs_check.h; do
    [ -f "$PREFIX/include/$h" ] || die "$h is not installed"
done

# Before you start.
export PATH=$PREFIX/bin:$PATH
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
export LD_LIBRARY_PATH=$PREFIX/lib
mkdir -p "$PREFIX/project" && cd "$PREFIX/project"
cp -r $PREFIX/share/doc/Quicksilver/testing_kit . && cd testing_kit
pcflags=$(pkg-config --cflags --libs quicksilver) ||
    die "pkg-config does not find quicksilver"
# The guide says cc; the ctest case passes the compiler the tree was
# built with, and the sanitizer flags of an instrumented build.
build_kit() { out=$1; shift; "$cc" -std=c11 -g $extra -o "$out" "$@" $pcflags; }

step "build and run kv_test"
build_kit kv_test kv_test.c kv_server.c kv_client.c
./kv_test | grep -q "^kv_test: OK$" || die "./kv_test"

step "seeds, traces and faults"
QS_SIM_SEED=42 QS_SIM_TRACE_OUT=kv.trace ./kv_test >/dev/null
trace2svg kv.trace kv.svg
grep -q '^<svg' kv.svg || die "trace2svg drew no svg"
QS_SIM_SEED=42 QS_SIM_FAULTS='world:loss=0.05;partition:node0<>node1@1ms-3ms' ./kv_test >/dev/null
QS_SIM_FAULTS='node:node0:crash@2ms,restart@4ms' ./kv_test >/dev/null

step "qs-sweep --seeds 1:$seeds --swarm"
qs-sweep --quiet --seeds "1:$seeds" --swarm -- ./kv_test >sweep.txt 2>&1 ||
    { tail -30 sweep.txt; die "the sweep failed"; }
tail -2 sweep.txt
grep -q "^$seeds passed, 0 failed$" sweep.txt || die "no summary"

step "the planted missing deadline"
"$cc" -std=c11 -g $extra -DKV_BUG_IGNORE_TIMEOUT -o kv_test_bug_timeout \
    kv_test.c kv_server.c kv_client.c $pcflags
if qs-sweep --quiet --seeds 1:10 --swarm --vtimeout 600 -- ./kv_test_bug_timeout >bug.txt 2>&1; then
    die "the sweep of kv_test_bug_timeout passed"
fi
grep -q "^HANG seed" bug.txt || die "no HANG line"

step "qs-sweep --determinism"
qs-sweep --quiet --determinism --seeds 1:20 -- ./kv_test >det.txt 2>&1 ||
    { tail -20 det.txt; die "kv_test is not deterministic"; }

step "fuzzing with the driver"
"$cc" -std=c11 -g $extra -o kv_fuzz kv_fuzz.c kv_fuzz_main.c kv_server.c kv_client.c $pcflags
./kv_fuzz corpus/put regress -runs=300 >fuzz.txt 2>&1 || die "kv_fuzz failed"
grep -q "^qs_fuzz: replayed 6 inputs$" fuzz.txt || die "kv_fuzz did not replay 6 inputs"
grep -q "^qs_fuzz: ran 300 mutated inputs$" fuzz.txt || die "no mutated runs"
[ "$(wc -l <fuzz.txt)" -le 4 ] || { head fuzz.txt; die "kv_fuzz is noisy"; }
if command -v clang >/dev/null 2>&1 && [ -z "$extra" ]; then
    step "fuzzing with clang and libFuzzer"
    clang -g -O1 -fsanitize=fuzzer,address,undefined -o kv_fuzz_lf \
        kv_fuzz.c kv_server.c kv_client.c $pcflags
    mkdir -p work && cp corpus/put/* work/
    ./kv_fuzz_lf work -runs=100 >lf.txt 2>&1 || { tail lf.txt; die "libFuzzer run"; }
    grep -q "^Done 100 runs" lf.txt || die "libFuzzer did not finish"
fi
case "$extra" in
*thread*) step "double free not checked (ThreadSanitizer's allocator does not detect it)" ;;
*)
    step "the planted double free"
    "$cc" -std=c11 -g $extra -DKV_BUG_DOUBLE_FREE -o kv_fuzz_bug kv_fuzz.c kv_fuzz_main.c \
        kv_server.c kv_client.c $pcflags
    if ./kv_fuzz_bug regress >bug.txt 2>&1; then
        die "the planted double free went unnoticed"
    fi
    line=$(sed -n 's/^qs_fuzz: replay: //p' bug.txt)
    [ -n "$line" ] || { cat bug.txt; die "no replay line"; }
    if $line >/dev/null 2>&1; then die "the replay did not crash: $line"; fi
    ;;
esac

step "the planted leak and the invariant checker"
"$cc" -std=c11 -g $extra -DKV_BUG_LEAK_ON_ERROR -o kv_test_bug_leak \
    kv_test.c kv_server.c kv_client.c $pcflags
# (Under AddressSanitizer, LeakSanitizer would see the instance Margo
# gives up on; this step is about the library's own checks.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    qs-sweep --quiet --seeds 1:20 --swarm -- ./kv_test_bug_leak >leak.txt 2>&1 ||
    die "the leak shows without the checker"
if qs-sweep --quiet --check --seeds 1:20 --swarm -- ./kv_test_bug_leak >leak.txt 2>&1; then
    die "the checker did not catch the leak"
fi
line=$(sed -n 's/^  replay: //p' leak.txt | head -1)
case "$line" in QS_CHECK=1*) ;; *) die "no replay line with QS_CHECK=1" ;; esac
if (eval "env $line") >replay.txt 2>&1; then die "the replay passed: $line"; fi
grep -q "^qs-check:     created at kv_read" replay.txt ||
    { cat replay.txt; die "the report does not name kv_read"; }

if [ "$ofi" = ON ] || [ "$ofi" = TRUE ] || [ "$ofi" = 1 ]; then
    step "the same test over ofi+tcp"
    ./kv_test ofi+tcp://127.0.0.1:0 | grep -q "^kv_test: OK$" || die "kv_test over ofi+tcp"
fi
echo "check_outside: OK"
