#!/bin/sh
# Installs this build into a scratch prefix, then builds and runs a
# Thallium program from the installed files only, both ways C++ projects
# find Thallium: find_package(thallium) (target thallium) and pkg-config
# thallium.
#   check_thallium_install.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [EXTRA_FLAGS]
# EXTRA_FLAGS carries a sanitizer build's runtime flags.
set -eu
build=$1
src=$2
cxx=$3
extra=${4:-}
here="$src/tests/thallium/install"
prefix="$build/thallium-install-check"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
[ -f "$prefix/include/thallium.hpp" ] ||
    { echo "check_thallium_install: thallium.hpp not installed"; exit 1; }

out="$prefix/outside-cmake"
cmake -S "$here/outside" -B "$out" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$extra" \
    -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$out.log" 2>&1 ||
    { cat "$out.log"; exit 1; }
cmake --build "$out" >>"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
"$out/tl_outside" | grep -q "tl_outside: OK" ||
    { echo "check_thallium_install: the find_package program failed"; exit 1; }
echo "find_package(thallium): OK"

pcdir=$(dirname "$(find "$prefix" -name thallium.pc | head -n 1)")
[ -f "$pcdir/thallium.pc" ] ||
    { echo "check_thallium_install: no thallium.pc installed"; exit 1; }
export PKG_CONFIG_PATH="$pcdir"
libdir=$(pkg-config --variable=libdir quicksilver)
"$cxx" -std=c++14 -o "$prefix/tl_outside_pc" "$here/outside/tl_outside.cpp" \
    $extra $(pkg-config --cflags --libs thallium) -Wl,-rpath,"$libdir"
"$prefix/tl_outside_pc" | grep -q "tl_outside: OK" ||
    { echo "check_thallium_install: the pkg-config program failed"; exit 1; }
echo "pkg-config thallium: OK"
