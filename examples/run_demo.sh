#!/usr/bin/env bash
# run_demo.sh BUILD_DIR: the seed programs' part of scripts/demo.sh. Runs
# the Margo and HG `sum` examples in one process over the simulated fabric,
# then as two processes over TCP on loopback when the native TCP plugin is
# built: the Margo pair both say "tcp" (the seed's spelling), the HG server
# says "ofi+tcp://127.0.0.1:0" and its client "tcp", one transport under
# two of Mercury's names (docs/architecture.md, "Transport names").
# FI_TCP_IFACE=lo, read as libfabric's tcp provider reads it, keeps a
# plain "tcp" on the loopback interface.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/examples
export FI_TCP_IFACE=lo

echo "== Margo sum tutorial, one process over the simulated fabric =="
"$bin/margo_sum_sim"
echo
echo "== HG sum, one process over the simulated fabric =="
"$bin/hg_sum_sim"
if [ "$(cat "$bin/tcp_enabled" 2>/dev/null)" = "ON" ]; then
  echo
  echo "== Margo sum tutorial, server and client processes over tcp =="
  "$here/run_two_process.sh" "$bin/margo_sum_server" "$bin/margo_sum_client"
  echo
  echo "== HG sum, server on ofi+tcp://127.0.0.1:0, client on tcp =="
  "$here/run_two_process.sh" "$bin/hg_sum_server" "$bin/hg_sum_client" \
    "ofi+tcp://127.0.0.1:0"
else
  echo
  echo "(native TCP plugin not built: the two-process runs are skipped)"
fi
echo
echo "demo: OK"
