#!/bin/sh
# Installs this build into a scratch prefix, then builds and runs a program
# the way another project would: only the installed headers, library and
# pkg-config file, nothing from the source or build tree.
#   check_install.sh BUILD_DIR SOURCE_DIR C_COMPILER [EXTRA_CFLAGS]
# EXTRA_CFLAGS carries a sanitizer build's runtime flags.
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
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs quicksilver)
libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir quicksilver)
"$cc" -std=c11 -o "$prefix/na_demo" "$src/examples/na_demo/na_demo.c" \
    $extra $flags -Wl,-rpath,"$libdir"
"$prefix/na_demo"
