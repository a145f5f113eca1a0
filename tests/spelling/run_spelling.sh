#!/usr/bin/env bash
# run_spelling.sh PROG HAVE_SM HAVE_OFI: the transport-spelling matrix for
# one layer (PROG is spell_hg, spell_margo or spell_tl).
#
# Every TCP spelling a server may listen on, with and without host and
# port, is paired with every TCP spelling a client may use, and the client
# looks the server up under the server's own spelling (as Mercury's
# tutorial types "ofi+tcp://host:port" into a "tcp" client): each pair must
# complete one RPC. The same for the shared-memory spellings. Then a class
# of another protocol must refuse each server's address at lookup with
# HG_PROTONOSUPPORT. Traffic stays on loopback: the test environment sets
# FI_TCP_IFACE=lo for the spellings without a host.
set -u
prog=$1
have_sm=$2
have_ofi=$3
. "$(dirname "$0")/../two_process_lib.sh"
tp_init "run_spelling($(basename "$prog"))"
export FI_TCP_IFACE=${FI_TCP_IFACE:-lo}
pairs=0

# The scheme an info string spells ("ofi+tcp;ofi_rxm://127.0.0.1:0" and
# "ofi+tcp;ofi_rxm" both give "ofi+tcp;ofi_rxm").
scheme() { printf '%s' "${1%%://*}"; }

# serve SERVER_INFO REFUSERS CLIENT_INFO...: one server, every client.
serve() {
  local sinfo=$1 refusers=$2
  shift 2
  tp_start_server 120 "$prog" server "$sinfo" $#
  tp_wait_addr '^addr [^[:space:]]*'
  local typed="$(scheme "$sinfo")://${tp_addr#*://}"
  for cinfo in "$@"; do
    out=$(timeout --kill-after=5 60 "$prog" client "$cinfo" "$typed" 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = ok ] ||
      tp_fail "server '$sinfo' ($tp_addr), client '$cinfo' looking up '$typed': exit $rc: $out"
    echo "pair: server '$sinfo' <- client '$cinfo' ($typed): ok"
    pairs=$((pairs + 1))
  done
  for rinfo in $refusers; do
    out=$(timeout --kill-after=5 60 "$prog" refuse "$rinfo" "$tp_addr" 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qx refused ||
      tp_fail "class '$rinfo' did not refuse '$tp_addr' with HG_PROTONOSUPPORT: exit $rc: $out"
    printf '%s\n' "$out" | grep -q "NA_Addr_lookup(\"$tp_addr\"): protocol" ||
      tp_fail "class '$rinfo' refused '$tp_addr' without the log line naming both protocols: $out"
    echo "refused: class '$rinfo' <- '$tp_addr'"
  done
  tp_wait_server
  [ "$tp_rc" -eq 0 ] && grep -qx "served $#" "$tp_dir/server.log" ||
    tp_fail "server '$sinfo' exited $tp_rc without serving $# RPCs"
  tp_pid=
}

tcp_clients=("tcp" "ofi+tcp" "ofi+tcp;ofi_rxm://127.0.0.1" "na+tcp" "tcp://lo")
tcp_refusers=""
[ "$have_sm" = ON ] && tcp_refusers="na+sm"
[ "$have_ofi" = ON ] && tcp_refusers="$tcp_refusers ofi+sockets://127.0.0.1:0"
for s in "tcp" "ofi+tcp://127.0.0.1:0" "ofi+tcp;ofi_rxm" "na+tcp://127.0.0.1" "tcp://lo:0"; do
  serve "$s" "$tcp_refusers" "${tcp_clients[@]}"
done
if [ "$have_sm" = ON ]; then
  for s in "sm" "na+sm"; do
    serve "$s" "tcp" "na+sm" "sm"
  done
fi
echo "run_spelling: OK ($pairs pairs)"
