#!/bin/sh
# Installs this build into a scratch prefix, then builds the programs of
# this folder the way Mochi projects build: pkg-config margo and
# argobots, find_package(thallium), nothing from the build tree. Runs
# each on the simulated fabric and prints "compat_installed: OK".
#   check_installed.sh BUILD_DIR SOURCE_DIR C_COMPILER CXX_COMPILER [FLAGS]
# FLAGS carries a sanitizer build's runtime flags.
set -eu
build=$1
src=$2
cc=$3
cxx=$4
extra=${5:-}
prefix="$build/compat-installed"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name argobots.pc | head -n 1)")
[ -f "$pcdir/argobots.pc" ] ||
    { echo "check_installed: no argobots.pc installed"; exit 1; }
out="$prefix/build"
PKG_CONFIG_PATH="$pcdir" cmake -S "$src/tests/compat/installed" -B "$out" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$extra" \
    -DCMAKE_CXX_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
    -DCMAKE_BUILD_RPATH="$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir margo)" \
    >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
cmake --build "$out" >>"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
"$out/margo_params_prog" "sim://params"
"$out/abt_user_sched"
"$out/tl_custom_pool" "sim://tlpool"
"$out/elastic_prog" "sim://elastic"
echo "compat_installed: OK"
