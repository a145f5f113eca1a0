#!/usr/bin/env bash
# run_sm_two.sh PROGRAM SERVER_ADDRESS ROUTE SERVER_JSON CLIENT_ADDRESS CLIENT_JSON
#
# PROGRAM (sm_margo_sum or sm_thallium_sum) as a server and a client in two
# processes: the server listens on SERVER_ADDRESS with SERVER_JSON as its
# configuration and checks that every request came over ROUTE (sm, net or
# any); the client initializes on CLIENT_ADDRESS with CLIENT_JSON and calls
# it. Both must print their OK line and exit 0. Every step has a time limit.
# A JSON argument "-" means none.
set -u
if [ $# -ne 6 ]; then
  echo "usage: $0 PROGRAM SERVER_ADDRESS ROUTE SERVER_JSON CLIENT_ADDRESS CLIENT_JSON" >&2
  exit 2
fi
prog=$1
# Under ASan, leaks inside libfabric itself are not ours to report.
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
. "$(dirname "$0")/../../tests/two_process_lib.sh"
tp_init run_sm_two

sjson=$4 cjson=$6
[ "$sjson" = - ] && sjson=
[ "$cjson" = - ] && cjson=
tp_start_server 200 "$prog" server "$2" "$3" "$sjson"
tp_wait_addr 'listening at [^[:space:]]*'
echo "run_sm_two: server at $tp_addr"
timeout --kill-after=5 150 "$prog" client "$tp_addr" "$5" "$cjson"
rc=$?
[ "$rc" -eq 0 ] || tp_fail "client exited with $rc (124: timed out)"
tp_wait_server
cat "$tp_dir/server.log"
[ "$tp_rc" -eq 0 ] || tp_fail "server exited with $tp_rc"
grep -q "server OK" "$tp_dir/server.log" || tp_fail "server did not finish cleanly"
echo "run_sm_two: OK"
