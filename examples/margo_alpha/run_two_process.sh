#!/usr/bin/env bash
# run_two_process.sh SERVER CLIENT
#
# The alpha service as two processes: start SERVER, read the address it
# prints, run CLIENT against it (which ends with a remote shutdown), and
# check that both succeed and the server ran its provider's finalize
# callback and exited by itself. Every step has a time limit.
set -u
server=$1
client=$2
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
  echo "alpha two-process: $*" >&2
  echo "--- server output ---" >&2
  cat "$dir/server.log" >&2
  exit 1
}

timeout --kill-after=5 120 "$server" >"$dir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  addr=$(grep -o 'Server running at address [^[:space:]]*' "$dir/server.log" |
         head -n 1 | awk '{print $NF}')
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "server exited before printing its address"
  sleep 0.1
done
[ -n "${addr:-}" ] || fail "no address from the server"

timeout --kill-after=5 60 "$client" "$addr" >"$dir/client.log" 2>&1
rc=$?
cat "$dir/client.log"
[ "$rc" -eq 0 ] || fail "client exited with $rc"
grep -qF "alpha client: done" "$dir/client.log" || fail "client did not finish"

wait "$server_pid"
rc=$?
server_pid=
cat "$dir/server.log"
[ "$rc" -eq 0 ] || fail "server exited with $rc"
grep -qF "alpha provider 42: finalized after 4 sums" "$dir/server.log" ||
  fail "the provider's finalize callback did not run"
grep -qF "alpha server: shut down" "$dir/server.log" || fail "server did not shut down"
echo "alpha two-process: OK"
