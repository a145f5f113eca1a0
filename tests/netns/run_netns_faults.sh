#!/usr/bin/env bash
# run_netns_faults.sh TEST_OFI_FAULTS [TEST_OFI_FAULTS_TL]
#
# The cross-process fault scenarios between two hosts: two network
# namespaces this script creates, joined by a veth pair with their own
# addresses (10.77.0.1 here, 10.77.0.2 there; netns.sh), not loopback. The
# client runs here over ofi+tcp, every server process on the other host
# (QS_OFI_FAULTS_SERVER_NETNS, ofproc.h). Scenarios: the server killed in
# its handler and mid-bulk (HG_Forward, margo_forward and, when given, a
# Thallium call: each ends with HG_HOSTUNREACH within the liveness bound),
# and partitions with a call held: the link taken down for 0.5 s (half a
# probe interval) then restored, and the call completes; down for 4 s,
# and the call ends with HG_HOSTUNREACH within the liveness bound (its
# probe goes unanswered). Skips (77) with its reason where namespaces
# cannot be made.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns.sh"
if [ -z "${QS_NETNS_FAULTS_ISOLATED:-}" ]; then
  export QS_NETNS_FAULTS_ISOLATED=1
  qs_netns_isolate "$0" "$@"
  echo "run_netns_faults: SKIPPED: $qs_netns_reason"
  exit 77
fi
ofi=$1
tl=${2:-}
if ! qs_netns_pair; then
  echo "run_netns_faults: SKIPPED: $qs_netns_reason"
  exit 77
fi
command -v nsenter >/dev/null || { echo "run_netns_faults: SKIPPED: nsenter not found"; exit 77; }
export QS_OFI_FAULTS_INFO="ofi+tcp://$qs_netns_here:0"
export QS_OFI_FAULTS_SERVER_INFO="ofi+tcp://$qs_netns_there:0"
export QS_OFI_FAULTS_SERVER_NETNS=$qs_netns_peer
export QS_OFI_FAULTS_LINK=$qs_netns_link
echo "run_netns_faults: client at $qs_netns_here ($qs_netns_link), servers at $qs_netns_there ($qs_netns_peer)"

failed=0
run() {
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  grep -E "after the (kill|link)|SKIPPED|skipping" <<<"$out" | sed "s/^/  $2: /"
  if [ "$rc" -ne 0 ]; then
    echo "run_netns_faults: FAILED: $* (exit $rc)"
    tail -n 25 <<<"$out"
    failed=$((failed + 1))
  fi
}
for s in kill_in_handler_plain kill_in_bulk_plain kill_in_handler_margo \
  kill_in_bulk_margo partition_heal partition_long; do
  run "$ofi" "$s"
done
if [ -n "$tl" ]; then
  run "$tl" kill_in_handler
  run "$tl" kill_in_bulk
fi
[ "$failed" -eq 0 ] || exit 1
echo "run_netns_faults: OK"
