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
. "$(dirname "$0")/../../tests/two_process_lib.sh"
tp_init "alpha two-process"

tp_start_server 120 "$server"
tp_wait_addr 'Server running at address [^[:space:]]*'

timeout --kill-after=5 60 "$client" "$tp_addr" >"$tp_dir/client.log" 2>&1
rc=$?
cat "$tp_dir/client.log"
[ "$rc" -eq 0 ] || tp_fail "client exited with $rc"
grep -qF "alpha client: done" "$tp_dir/client.log" || tp_fail "client did not finish"

tp_wait_server
cat "$tp_dir/server.log"
[ "$tp_rc" -eq 0 ] || tp_fail "server exited with $tp_rc"
grep -qF "alpha provider 42: finalized after 4 sums" "$tp_dir/server.log" ||
  tp_fail "the provider's finalize callback did not run"
grep -qF "alpha server: shut down" "$tp_dir/server.log" || tp_fail "server did not shut down"
echo "alpha two-process: OK"
