#!/usr/bin/env bash
# run_demo.sh BUILD_DIR: the seed programs' part of scripts/demo.sh. Runs
# the Margo and HG `sum` examples in one process over the simulated fabric,
# then as two processes over ofi+tcp on loopback when that plugin is built.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/examples

echo "== Margo sum tutorial, one process over the simulated fabric =="
"$bin/margo_sum_sim"
echo
echo "== HG sum, one process over the simulated fabric =="
"$bin/hg_sum_sim"
if [ "$(cat "$bin/ofi_enabled" 2>/dev/null)" = "ON" ]; then
  echo
  echo "== Margo sum tutorial, server and client processes over ofi+tcp =="
  "$here/run_two_process.sh" "$bin/margo_sum_server" "$bin/margo_sum_client"
  echo
  echo "== HG sum, server and client processes over ofi+tcp =="
  "$here/run_two_process.sh" "$bin/hg_sum_server" "$bin/hg_sum_client" \
    "ofi+tcp://127.0.0.1:0"
else
  echo
  echo "(ofi plugin not built: the two-process runs are skipped)"
fi
