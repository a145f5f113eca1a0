#!/bin/bash
# Run one compat client against compat_server in its own process:
#   run_compat.sh <compat_server> <client> <info string>
# The server writes its address into a FIFO, so the client starts the
# moment the server listens; the client's last RPC stops the server.
set -u
server=${1:?usage: run_compat.sh <server> <client> <info>}
client=${2:?usage: run_compat.sh <server> <client> <info>}
info=${3:?usage: run_compat.sh <server> <client> <info>}

. "$(dirname "$0")/../two_process_lib.sh"
tp_init run_compat

tp_start_fifo_server "$server" "$info"
echo "run_compat: server at $tp_addr" >&2

"$client" "$info" "$tp_addr"
crc=$?
# A client that succeeded sent "quit": the server ends by itself (the
# ctest timeout bounds a server that does not). After a failed client it
# is stopped.
[ "$crc" -ne 0 ] && kill "$tp_pid" 2>/dev/null
tp_wait_server
src=$tp_rc
if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "run_compat: client exit $crc, server exit $src" >&2
    exit 1
fi
