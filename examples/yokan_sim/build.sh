#!/bin/sh
# build.sh YOKAN_PREFIX [OUTPUT]: builds yk_sim against a Yokan install and
# the Quicksilver that pkg-config finds (PKG_CONFIG_PATH; Yokan's own
# prefix is searched first, which is where scripts/mochi-services.sh
# installs both). Without YOKAN_PREFIX (argument or QS_YOKAN_PREFIX) it
# builds nothing and exits 77.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
yokan=${1:-${QS_YOKAN_PREFIX:-}}
out=${2:-./yk_sim}
if [ -z "$yokan" ]; then
    echo "yokan_sim: skipped: no Yokan install prefix (build.sh YOKAN_PREFIX, or QS_YOKAN_PREFIX)"
    exit 77
fi
PKG_CONFIG_PATH=$yokan/lib/pkgconfig:$yokan/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
libdir=$(pkg-config --variable=libdir yokan-client)
qslib=$(pkg-config --variable=libdir quicksilver)
# shellcheck disable=SC2046 # pkg-config's words are meant to split
${CC:-cc} -std=c11 -g -O1 -Wall -Wextra -o "$out" "$here/yk_sim.c" \
    $(pkg-config --cflags --libs yokan-server yokan-client quicksilver) \
    -Wl,-rpath,"$qslib" -Wl,-rpath,"$libdir"
echo "yokan_sim: built $out"
