#!/bin/sh
# Installs this build into a scratch prefix, then builds and runs programs
# the way other projects would: only the installed headers, library,
# pkg-config and CMake package files, nothing from the build tree.
#   check_install.sh BUILD_DIR SOURCE_DIR C_COMPILER [EXTRA_CFLAGS]
# EXTRA_CFLAGS carries a sanitizer build's runtime flags.
#
# Routes, each printing its own OK line:
#   pkg-config quicksilver  -> examples/na_demo
#   pkg-config margo        -> examples/margo_sum (server and client, sim),
#                              and a program that calls json-c
#   find_package(mercury) + target mercury        -> a tutorial-style client
#   find_package(quicksilver) + quicksilver::quicksilver -> the same
#   find_package(margo) + target margo -> the same, and the json-c program
set -eu
build=$1
src=$2
cc=$3
extra=${4:-}
prefix="$build/install-check"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name quicksilver.pc | head -n 1)")
[ -n "$pcdir" ] || { echo "check_install: no quicksilver.pc installed"; exit 1; }
export PKG_CONFIG_PATH="$pcdir"
libdir=$(pkg-config --variable=libdir quicksilver)

flags=$(pkg-config --cflags --libs quicksilver)
"$cc" -std=c11 -o "$prefix/na_demo" "$src/examples/na_demo/na_demo.c" \
    $extra $flags -Wl,-rpath,"$libdir"
"$prefix/na_demo"

# The Mercury-named files resolve to Quicksilver.
for pc in mercury na mercury_util margo; do
    pkg-config --exists "$pc" || { echo "check_install: no $pc.pc"; exit 1; }
    pkg-config --libs "$pc" | grep -q -- -lquicksilver ||
        { echo "check_install: $pc.pc does not link libquicksilver"; exit 1; }
done
pkg-config --atleast-version=2.4 mercury ||
    { echo "check_install: mercury.pc is older than 2.4"; exit 1; }

flags=$(pkg-config --cflags --libs margo)
"$cc" -std=gnu11 -o "$prefix/margo_sum_sim" \
    "$src/examples/margo_sum/sum_sim.c" -I"$src/examples/margo_sum" \
    $extra $flags -lpthread -Wl,-rpath,"$libdir"
n=$("$prefix/margo_sum_sim" 2>&1 | grep -c "Got response: 36" || true)
[ "$n" -eq 16 ] || { echo "check_install: margo_sum_sim: $n of 16 responses"; exit 1; }
echo "margo_sum via pkg-config margo: OK"

# margo.pc requires json-c, as Margo's does: a program that reads
# margo_get_config()'s JSON with json-c links with margo's flags alone.
"$cc" -std=gnu11 -o "$prefix/margo_jsonc" "$src/tests/install/outside/margo_jsonc.c" \
    $extra $flags -Wl,-rpath,"$libdir" ||
    { echo "check_install: json-c through pkg-config margo does not link"; exit 1; }
"$prefix/margo_jsonc" || { echo "check_install: margo_jsonc failed"; exit 1; }
echo "json-c via pkg-config margo: OK"

for route in mercury quicksilver margo; do
    out="$prefix/outside-$route"
    cmake -S "$src/tests/install/outside" -B "$out" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
        -DROUTE=$route -DCOMPAT_DIR="$src/tests/compat" >"$out.log" 2>&1 ||
        { cat "$out.log"; exit 1; }
    cmake --build "$out" >>"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
    QS_COMPAT_SIM_SERVER=sim://outside "$out/app" sim sim://outside |
        grep -q "lookup_callback_client: OK" ||
        { echo "check_install: the $route route's program failed"; exit 1; }
    if [ $route = margo ]; then
        "$out/app_jsonc" || { echo "check_install: json-c through target margo failed"; exit 1; }
    fi
    echo "find_package($route): OK"
done
