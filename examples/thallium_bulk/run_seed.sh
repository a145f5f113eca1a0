#!/usr/bin/env bash
# run_seed.sh SERVER CLIENT
#
# Seed 002 over ofi+tcp: start SERVER (it listens on tcp://127.0.0.1:1234
# and never exits by itself, as the tutorial wrote it), run CLIENT (it sends
# one one-way RPC carrying a bulk and exits at once), and succeed when the
# server prints "Server received bulk: Matthi". The client is retried while
# the server is still starting (its lookup or send then fails).
set -u
# Under ASan, leaks inside libfabric itself are not ours to report.
export LSAN_OPTIONS="suppressions=$(dirname "$0")/../../tests/thallium/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
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

timeout --kill-after=5 100 "$server" >"$dir/server.log" 2>&1 &
server_pid=$!
want="Server received bulk: Matthi"
for attempt in $(seq 1 50); do
  timeout --kill-after=5 20 "$client" >"$dir/client.log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then
    for _ in $(seq 1 100); do
      if grep -qxF "$want" "$dir/server.log"; then
        cat "$dir/server.log"
        echo "run_seed: OK after $attempt client run(s)"
        exit 0
      fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    echo "run_seed: client exited 0 but the server printed nothing" >&2
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.2
done
echo "--- client output ---" >&2
cat "$dir/client.log" >&2
echo "--- server output ---" >&2
cat "$dir/server.log" >&2
exit 1
