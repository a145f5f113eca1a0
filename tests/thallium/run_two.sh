#!/usr/bin/env bash
# run_two.sh TEST INFO: TEST as a server on INFO and as a client of it, in
# two processes; both must print their OK line and exit 0.
set -u
# Under ASan, leaks inside libfabric itself are not ours to report.
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
test=$1
info=$2
. "$(dirname "$0")/../two_process_lib.sh"
tp_init run_two

tp_start_server 200 "$test" server "$info"
tp_wait_addr 'listening at [^[:space:]]*'
timeout --kill-after=5 150 "$test" client "$tp_addr"
rc=$?
[ "$rc" -eq 0 ] || tp_fail "client exited with $rc"
tp_wait_server
cat "$tp_dir/server.log"
[ "$tp_rc" -eq 0 ] || tp_fail "server exited with $tp_rc"
grep -q "server OK" "$tp_dir/server.log" || tp_fail "server did not finish cleanly"
echo "run_two: OK"
