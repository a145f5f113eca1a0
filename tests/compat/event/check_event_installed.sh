#!/bin/bash
# Installs this build into a scratch prefix and builds hg_event_prog.c the
# way a Mercury user builds: `pkg-config --cflags --libs mercury`, nothing
# from the build tree. Then runs it as server and client, each in its own
# process, over every info string given, and checks that both waited on
# HG_Event_get_wait_fd()'s descriptor. Prints "compat_event_installed: OK".
#   check_event_installed.sh BUILD_DIR SOURCE_DIR C_COMPILER flags=FLAGS INFO...
# FLAGS carries a sanitizer build's runtime flags (empty for none; the
# "flags=" prefix keeps an empty value from being dropped on the way).
set -u
build=$1
src=$2
cc=$3
extra=${4#flags=}
shift 4

. "$src/tests/two_process_lib.sh"
tp_init compat_event_installed

prefix="$build/event-installed"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null ||
    tp_fail "cmake --install failed"
pcdir=$(dirname "$(find "$prefix" -name mercury.pc | head -n 1)")
[ -f "$pcdir/mercury.pc" ] || tp_fail "no mercury.pc installed"
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs mercury)
libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir quicksilver)
prog="$prefix/hg_event_prog"
# shellcheck disable=SC2086
"$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$prog" \
    "$src/tests/compat/event/hg_event_prog.c" $extra $flags \
    -Wl,-rpath,"$libdir" || tp_fail "hg_event_prog does not build"

for info in "$@"; do
    : >"$tp_dir/server.log"
    rm -f "$tp_dir/addr"
    tp_start_fifo_server sh -c \
        'exec timeout --kill-after=5 90 "$0" server "$1" >"$2" 2>&1' \
        "$prog" "$info" "$tp_dir/server.log"
    client_out=$(timeout --kill-after=5 90 "$prog" client "$info" "$tp_addr" 2>&1)
    crc=$?
    [ "$crc" -ne 0 ] && kill "$tp_pid" 2>/dev/null
    tp_wait_server
    echo "$client_out"
    [ "$crc" -eq 0 ] && [ "$tp_rc" -eq 0 ] ||
        tp_fail "$info: client exit $crc, server exit $tp_rc"
    echo "$client_out" | grep -q "client: wait fd: yes" ||
        tp_fail "$info: the client did not wait on a descriptor"
    grep -q "server: wait fd: yes" "$tp_dir/server.log" &&
        grep -q "server: OK" "$tp_dir/server.log" ||
        tp_fail "$info: the server did not wait on a descriptor or failed"
    echo "$info: OK"
done
echo "compat_event_installed: OK"
