#!/bin/bash
# Run one compat client against compat_server in its own process:
#   run_compat.sh <compat_server> <client> <info string>
# The server writes its address into a FIFO, so the client starts the
# moment the server listens; the client's last RPC stops the server.
set -u
server=${1:?usage: run_compat.sh <server> <client> <info>}
client=${2:?usage: run_compat.sh <server> <client> <info>}
info=${3:?usage: run_compat.sh <server> <client> <info>}

dir=$(mktemp -d)
spid=""
cleanup() {
    if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
        kill "$spid" 2>/dev/null
        wait "$spid" 2>/dev/null
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

mkfifo "$dir/addr"
exec 3<>"$dir/addr"
QS_TEST_ADDR_FILE="$dir/addr" "$server" "$info" &
spid=$!
addr=""
if ! read -r -t 60 addr <&3 || [ -z "$addr" ]; then
    echo "run_compat: the server did not publish an address" >&2
    exit 1
fi
exec 3<&-
echo "run_compat: server at $addr" >&2

"$client" "$info" "$addr"
crc=$?
# A client that succeeded sent "quit": the server ends by itself (the
# ctest timeout bounds a server that does not). After a failed client it
# is stopped.
[ "$crc" -ne 0 ] && kill "$spid" 2>/dev/null
wait "$spid"
src=$?
spid=""
if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "run_compat: client exit $crc, server exit $src" >&2
    exit 1
fi
