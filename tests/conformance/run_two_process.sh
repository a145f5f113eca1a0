#!/bin/bash
# Run one conformance program across two processes: the program started
# with --server serves the suite's RPCs, and a second copy runs the tests
# against it as a client (QS_TEST_SERVER_ADDR). QS_TEST_INFO selects the
# fabric, as for the one-process runs.
#
# The server writes its address into a FIFO, so the client starts the
# moment the server listens, without polling for a file.
set -u
prog=${1:?usage: run_two_process.sh <conformance program> [args]}
shift

. "$(dirname "$0")/../two_process_lib.sh"
tp_init run_two_process

tp_start_fifo_server "$prog" --server
echo "run_two_process: server pid $tp_pid at $tp_addr" >&2

QS_TEST_SERVER_ADDR="$tp_addr" "$prog" "$@"
crc=$?

# The client asks the server to shut down as its last step; a server that
# is still up a while later was left behind by a failed client.
# The watchdog keeps no file descriptor of ours open, and takes its sleep
# down with it, so ending it early releases the test runner at once.
(
    trap 'kill "$sp" 2>/dev/null; exit 0' TERM
    sleep 30 &
    sp=$!
    wait "$sp"
    kill "$tp_pid" 2>/dev/null
) >/dev/null 2>&1 </dev/null &
watchdog=$!
tp_wait_server
src=$tp_rc
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null

if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "run_two_process: client exit $crc, server exit $src" >&2
    exit 1
fi
exit 0
