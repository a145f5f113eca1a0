#!/usr/bin/env bash
# run_two.sh TEST INFO: TEST as a server on INFO and as a client of it, in
# two processes; both must print their OK line and exit 0.
set -u
# Under ASan, leaks inside libfabric itself are not ours to report.
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
test=$1
info=$2
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
  echo "run_two: $*" >&2
  echo "--- server output ---" >&2
  cat "$dir/server.log" >&2
  exit 1
}
timeout --kill-after=5 200 "$test" server "$info" >"$dir/server.log" 2>&1 &
server_pid=$!
addr=
for _ in $(seq 1 300); do
  addr=$(grep -o 'listening at [^[:space:]]*' "$dir/server.log" | head -n 1 | awk '{print $NF}')
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "server exited before listening"
  sleep 0.1
done
[ -n "$addr" ] || fail "no address from the server"
timeout --kill-after=5 150 "$test" client "$addr"
rc=$?
[ "$rc" -eq 0 ] || fail "client exited with $rc"
wait "$server_pid"
rc=$?
server_pid=
cat "$dir/server.log"
[ "$rc" -eq 0 ] || fail "server exited with $rc"
grep -q "server OK" "$dir/server.log" || fail "server did not finish cleanly"
echo "run_two: OK"
