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
dir=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "run_two_process: $*" >&2
  echo "--- server output ---" >&2
  cat "$dir/server.log" >&2
  exit 1
}

timeout --kill-after=5 180 "$server" "$@" >"$dir/server.log" 2>&1 &
server_pid=$!

# The address: the last word of the server's "Server running at" line,
# written to a file for anyone who wants to reuse it.
for _ in $(seq 1 300); do
  addr=$(grep -o 'Server running at address [^[:space:]]*' "$dir/server.log" |
         head -n 1 | awk '{print $NF}')
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "server exited before printing its address"
  sleep 0.1
done
[ -n "${addr:-}" ] || fail "no address from the server after 30 s"
echo "$addr" >"$dir/server.addr"
echo "run_two_process: server at $addr"

for run in 1 2 3 4; do
  timeout --kill-after=5 60 "$client" "$addr" ${QS_EXAMPLE_CLIENT_INFO:+"$QS_EXAMPLE_CLIENT_INFO"} \
    >"$dir/client.log" 2>&1
  rc=$?
  cat "$dir/client.log"
  [ "$rc" -eq 0 ] || fail "client run $run exited with $rc (124: timed out)"
  got=$(grep -cF "Got response: 36" "$dir/client.log")
  [ "$got" -eq 4 ] || fail "client run $run printed 'Got response: 36' $got times, want 4"
done

for _ in $(seq 1 300); do
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$server_pid" 2>/dev/null && fail "server still running 30 s after its last RPC"
wait "$server_pid"
rc=$?
server_pid=
cat "$dir/server.log"
[ "$rc" -eq 0 ] || fail "server exited with $rc"
echo "run_two_process: OK"
