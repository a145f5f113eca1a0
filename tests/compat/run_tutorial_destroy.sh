#!/bin/bash
# The tutorial pattern of tutorial_destroy.c, checked by exit status and
# by what each side printed:
#   run_tutorial_destroy.sh <tutorial_destroy> sim
#   run_tutorial_destroy.sh <tutorial_destroy> <info string>
# With an info string the server runs in its own process and each client
# (one-way, then two-way) in another.
set -u
prog=${1:?usage: run_tutorial_destroy.sh <program> sim|<info>}
info=${2:?usage: run_tutorial_destroy.sh <program> sim|<info>}

. "$(dirname "$0")/../two_process_lib.sh"
tp_init run_tutorial_destroy

# expect FILE LINE: FILE has LINE exactly once.
expect() {
  local n
  n=$(grep -cxF -- "$2" "$1")
  [ "$n" -eq 1 ] || tp_fail "'$2' printed $n time(s), want 1"
}

client_lines() {
  expect "$1" "client: HG_Forward HG_SUCCESS"
  expect "$1" "client: HG_Destroy HG_SUCCESS"
  expect "$1" "client: HG_Context_destroy HG_SUCCESS"
  expect "$1" "client: HG_Finalize HG_SUCCESS"
}

if [ "$info" = sim ]; then
  timeout --kill-after=5 60 "$prog" sim >"$tp_dir/server.log" 2>&1
  rc=$?
  cat "$tp_dir/server.log"
  [ "$rc" -eq 0 ] || tp_fail "exited with $rc (124: timed out)"
  [ "$(grep -cxF "client: HG_Context_destroy HG_SUCCESS" "$tp_dir/server.log")" -eq 2 ] ||
    tp_fail "want two successful client context destroys"
  [ "$(grep -cxF "client: HG_Finalize HG_SUCCESS" "$tp_dir/server.log")" -eq 2 ] ||
    tp_fail "want two successful client finalizes"
  oneway_log=$tp_dir/server.log
  twoway_log=$tp_dir/server.log
else
  tp_start_fifo_server timeout --kill-after=5 60 "$prog" server "$info" \
    >"$tp_dir/server.log" 2>&1
  echo "run_tutorial_destroy: server at $tp_addr"
  for mode in oneway twoway; do
    timeout --kill-after=5 60 "$prog" client "$info" "$tp_addr" $mode \
      >"$tp_dir/$mode.log" 2>&1
    rc=$?
    cat "$tp_dir/$mode.log"
    [ "$rc" -eq 0 ] || tp_fail "$mode client exited with $rc (124: timed out)"
    client_lines "$tp_dir/$mode.log"
  done
  tp_wait_server
  cat "$tp_dir/server.log"
  [ "$tp_rc" -eq 0 ] || tp_fail "server exited with $tp_rc"
  oneway_log=$tp_dir/oneway.log
  twoway_log=$tp_dir/twoway.log
fi
expect "$oneway_log" "client: one-way done"
expect "$twoway_log" "client: callback ran 1 time(s), HG_SUCCESS, output 14"
expect "$twoway_log" "client: two-way done"
expect "$tp_dir/server.log" "server: one-way hello 42"
expect "$tp_dir/server.log" "server: two-way twice 7"
expect "$tp_dir/server.log" "server: HG_Context_destroy HG_SUCCESS"
expect "$tp_dir/server.log" "server: HG_Finalize HG_SUCCESS"
echo "run_tutorial_destroy: OK"
