#!/usr/bin/env bash
# run_two_process.sh SERVER CLIENT [SERVER_ARG]
#
# The seed programs as two processes: start SERVER [SERVER_ARG] in the
# background, read the address it prints ("Server running at address
# <addr>"), run CLIENT <addr> four times (each sends four RPCs and must
# print "Got response: 36" four times), then check that the server, having
# served its sixteen RPCs, exits 0 by itself. Every step has a time limit,
# so a hang fails the run instead of blocking it. QS_EXAMPLE_CLIENT_INFO,
# when set, is given to the client as its second argument (an info string).
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 SERVER CLIENT [SERVER_ARG]" >&2
  exit 2
fi
server=$1
client=$2
shift 2
. "$(dirname "$0")/../tests/two_process_lib.sh"
tp_init run_two_process

tp_start_server 180 "$server" "$@"
tp_wait_addr 'Server running at address [^[:space:]]*'
echo "$tp_addr" >"$tp_dir/server.addr"
echo "run_two_process: server at $tp_addr"

for run in 1 2 3 4; do
  timeout --kill-after=5 60 "$client" "$tp_addr" ${QS_EXAMPLE_CLIENT_INFO:+"$QS_EXAMPLE_CLIENT_INFO"} \
    >"$tp_dir/client.log" 2>&1
  rc=$?
  cat "$tp_dir/client.log"
  [ "$rc" -eq 0 ] || tp_fail "client run $run exited with $rc (124: timed out)"
  got=$(grep -cF "Got response: 36" "$tp_dir/client.log")
  [ "$got" -eq 4 ] || tp_fail "client run $run printed 'Got response: 36' $got times, want 4"
done

for _ in $(seq 1 300); do
  kill -0 "$tp_pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$tp_pid" 2>/dev/null && tp_fail "server still running 30 s after its last RPC"
tp_wait_server
cat "$tp_dir/server.log"
[ "$tp_rc" -eq 0 ] || tp_fail "server exited with $tp_rc"
echo "run_two_process: OK"
