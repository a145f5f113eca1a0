#!/bin/sh
# check_outside.sh BUILD_DIR C_COMPILER SEEDS [EXTRA_CFLAGS]: what a
# service author does with an installed Quicksilver only. Install into a
# scratch prefix, build the testing kit from the installed copy with
# pkg-config, sweep it with the installed qs-sweep, fuzz it with the
# driver, and check that the planted double free is caught with a replay
# line that reproduces it.
set -eu
build=$1 cc=$2 seeds=$3 extra=${4:-}
prefix="$build/sweep-install-check"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name quicksilver.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs quicksilver)
libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir quicksilver)
kit="$prefix/share/doc/Quicksilver/testing_kit"
[ -f "$prefix/share/doc/Quicksilver/testing-your-service.md" ] ||
    { echo "check_outside: the guide is not installed"; exit 1; }
[ -f "$prefix/include/qs_fuzz.h" ] || { echo "check_outside: no qs_fuzz.h"; exit 1; }
work="$prefix/project"
mkdir -p "$work" && cd "$work"
svc="$kit/kv_server.c $kit/kv_client.c"
build_one() { out=$1; shift; "$cc" -std=c11 -o "$out" "$@" $extra $flags -Wl,-rpath,"$libdir"; }
build_one kv_test "$kit/kv_test.c" $svc
build_one kv_fuzz "$kit/kv_fuzz.c" "$kit/kv_fuzz_main.c" $svc
build_one kv_fuzz_bug -DKV_BUG_DOUBLE_FREE "$kit/kv_fuzz.c" "$kit/kv_fuzz_main.c" $svc

"$prefix/bin/qs-sweep" --quiet --seeds "1:$seeds" --swarm -- ./kv_test >sweep.txt 2>&1 ||
    { tail -30 sweep.txt; echo "check_outside: the sweep failed"; exit 1; }
tail -2 sweep.txt
grep -q "^$seeds passed, 0 failed$" sweep.txt || { echo "check_outside: no summary"; exit 1; }

./kv_fuzz "$kit/corpus/put" -runs=300 2>&1 | tail -1
case "$extra" in
*thread*) echo "check_outside: double free not checked (ThreadSanitizer's allocator does not detect it)"
    echo "check_outside: OK"; exit 0 ;;
esac
if ./kv_fuzz_bug "$kit/regress" >bug.txt 2>&1; then
    echo "check_outside: the planted double free went unnoticed"; exit 1
fi
line=$(sed -n 's/^qs_fuzz: replay: //p' bug.txt)
[ -n "$line" ] || { cat bug.txt; echo "check_outside: no replay line"; exit 1; }
if $line >/dev/null 2>&1; then
    echo "check_outside: the replay did not crash: $line"; exit 1
fi
echo "check_outside: OK"
