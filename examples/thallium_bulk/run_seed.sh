#!/usr/bin/env bash
# run_seed.sh SERVER CLIENT
#
# Seed 002 over ofi+tcp: start SERVER (it listens on tcp://127.0.0.1:1234
# and never exits by itself, as the tutorial wrote it), run CLIENT (it sends
# one one-way RPC carrying a bulk and exits at once), and succeed when the
# server prints "Server received bulk: Matthi". The client is retried while
# the server is still starting (its lookup or send then fails).
set -u
# The seed's port is fixed, so two runs at once (two build trees, or the
# flaky-test script) would meet on it. Each run gets its own network
# namespace, with its own loopback and ports, where one can be made;
# elsewhere runs on this machine take turns through a lock file.
if [ -z "${QS_SEED_ISOLATED:-}" ]; then
  export QS_SEED_ISOLATED=1
  . "$(dirname "$0")/../../tests/netns/netns.sh"
  qs_netns_isolate "$0" "$@"
  exec flock "${TMPDIR:-/tmp}/quicksilver-seed-port-1234.lock" "$0" "$@"
fi
# Under ASan, leaks inside libfabric itself are not ours to report.
export LSAN_OPTIONS="suppressions=$(dirname "$0")/../../tests/thallium/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
server=$1
client=$2
# The server never exits by itself: it is stopped with SIGKILL (see
# tp_stop_signal).
tp_stop_signal=KILL
. "$(dirname "$0")/../../tests/two_process_lib.sh"
tp_init run_seed

tp_start_server 100 "$server"
want="Server received bulk: Matthi"
for attempt in $(seq 1 50); do
  timeout --kill-after=5 20 "$client" >"$tp_dir/client.log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then
    for _ in $(seq 1 100); do
      if grep -qxF "$want" "$tp_dir/server.log"; then
        cat "$tp_dir/server.log"
        echo "run_seed: OK after $attempt client run(s)"
        exit 0
      fi
      kill -0 "$tp_pid" 2>/dev/null || break
      sleep 0.1
    done
    echo "run_seed: client exited 0 but the server printed nothing" >&2
    break
  fi
  kill -0 "$tp_pid" 2>/dev/null || break
  sleep 0.2
done
echo "--- client output ---" >&2
cat "$tp_dir/client.log" >&2
echo "--- server output ---" >&2
cat "$tp_dir/server.log" >&2
exit 1
