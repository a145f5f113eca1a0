# Network namespaces for tests, sourced by scripts (bash):
#
#   qs_netns_isolate CMD [ARG...]
#       Re-run CMD in a network namespace of its own with its loopback up
#       (its own ports: two runs at once cannot meet). Does not return when
#       it can; returns 1, with the reason in qs_netns_reason, where
#       namespaces cannot be made (no unshare or ip, no permission). The
#       caller marks the re-run (an exported variable) so that it does not
#       isolate again.
#
#   qs_netns_pair
#       From inside an isolated namespace: make a second one, a "host" kept
#       alive by a sleeping process, joined to this one by a veth pair with
#       addresses of their own: here $qs_netns_link with $qs_netns_here
#       (10.77.0.1/24), there $qs_netns_there (10.77.0.2/24). Sets
#       qs_netns_peer to the other namespace (/proc/<pid>/ns/net, for setns
#       or nsenter --net=). Returns 1 with qs_netns_reason if it cannot.
#       The other namespace goes away with qs_netns_cleanup (an EXIT trap
#       calls it) or when this namespace's script ends.

qs_netns_reason=""

qs_netns_isolate() {
  if ! command -v unshare >/dev/null || ! command -v ip >/dev/null; then
    qs_netns_reason="unshare or ip (util-linux, iproute2) not found"
    return 1
  fi
  if ! unshare -n true 2>/dev/null; then
    qs_netns_reason="cannot create a network namespace here (unshare -n: no permission)"
    return 1
  fi
  exec unshare -n bash -c 'ip link set lo up && exec "$0" "$@"' "$@"
}

qs_netns_holder=""
qs_netns_link=qs0
qs_netns_here=10.77.0.1
qs_netns_there=10.77.0.2
qs_netns_peer=""

qs_netns_cleanup() {
  if [ -n "$qs_netns_holder" ]; then
    kill "$qs_netns_holder" 2>/dev/null
    wait "$qs_netns_holder" 2>/dev/null
    qs_netns_holder=""
  fi
}

qs_netns_pair() {
  local self i
  self=$(readlink /proc/$$/ns/net)
  # The holder sleeps in the other namespace; it is killed on exit, and
  # ends by itself after 10 minutes should that fail.
  unshare -n sleep 600 &
  qs_netns_holder=$!
  trap qs_netns_cleanup EXIT
  # unshare(2) happens before the exec of sleep; wait for it.
  for ((i = 0; i < 100; i++)); do
    [ "$(readlink /proc/$qs_netns_holder/ns/net 2>/dev/null)" != "$self" ] && break
    sleep 0.05
  done
  qs_netns_peer=/proc/$qs_netns_holder/ns/net
  if ! ip link add "$qs_netns_link" type veth peer name qs1 netns "$qs_netns_holder" ||
    ! ip addr add "$qs_netns_here/24" dev "$qs_netns_link" ||
    ! ip link set "$qs_netns_link" up ||
    ! nsenter --net="$qs_netns_peer" sh -c "ip link set lo up &&
        ip addr add $qs_netns_there/24 dev qs1 && ip link set qs1 up"; then
    qs_netns_reason="cannot create a veth pair between two namespaces"
    qs_netns_cleanup
    return 1
  fi
  return 0
}
