#!/bin/bash
# The Margo project's own example and test client/server pairs, compiled
# unchanged from a local snapshot of mochi-margo (not part of this
# repository) against this build, and run as two processes over ofi+tcp.
# usage: run_ext_pair.sh INCLUDE_DIR LIB_DIR PAIR   (PAIR: example | test)
# Exit 77 (skipped) when the snapshot is absent.
set -u
inc=$1 libdir=$2 pair=$3
src=${QS_EXT_MARGO:-}
if [ ! -f "$src/examples/margo-example-server.c" ]; then
    echo "SKIP: QS_EXT_MARGO does not name a mochi-margo source tree (\"$src\")"
    exit 77
fi
tmp=$(mktemp -d)
trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
cc=(gcc -w -I"$inc" -L"$libdir" -Wl,-rpath,"$libdir")
case $pair in
example)
    d=$src/examples
    "${cc[@]}" -I"$d" "$d/margo-example-server.c" "$d/my-rpc.c" \
        -o "$tmp/server" -lquicksilver || exit 1
    "${cc[@]}" -I"$d" "$d/margo-example-client.c" -o "$tmp/client" \
        -lquicksilver || exit 1
    (cd "$tmp" && exec ./server ofi+tcp://127.0.0.1:0 > server.out 2>&1) &
    spid=$!
    for _ in $(seq 1 200); do
        grep -q "accepting RPCs" "$tmp/server.out" 2>/dev/null && break
        sleep 0.05
    done
    addr=$(grep "accepting RPCs" "$tmp/server.out" |
        grep -o 'ofi+tcp://[0-9.]*:[0-9]*')
    ;;
test)
    d=$src/tests
    "${cc[@]}" -I"$d" "$d/margo-test-server.c" "$d/my-rpc.c" \
        -o "$tmp/server" -lquicksilver || exit 1
    "${cc[@]}" -I"$d" "$d/margo-test-client.c" -o "$tmp/client" \
        -lquicksilver || exit 1
    (cd "$tmp" && exec ./server -a ofi+tcp://127.0.0.1:0 -f addr.txt \
        > server.out 2>&1) &
    spid=$!
    for _ in $(seq 1 200); do
        [ -s "$tmp/addr.txt" ] && break
        sleep 0.05
    done
    addr=$(cat "$tmp/addr.txt" 2>/dev/null)
    ;;
*)
    echo "unknown pair $pair"
    exit 2
    ;;
esac
[ -n "$addr" ] || { echo "server did not start"; cat "$tmp/server.out"; exit 1; }
(cd "$tmp" && ./client "$addr") > "$tmp/client.out" 2>&1
crc=$?
wait $spid
src_rc=$?
spid=
cat "$tmp/client.out"
grep -v debug "$tmp/server.out"
n=$(grep -c "Got response ret: 0" "$tmp/client.out")
echo "client exit $crc, server exit $src_rc, $n responses"
[ $crc -eq 0 ] && [ $src_rc -eq 0 ] && [ "$n" -ge 3 ] &&
    grep -q "Got RPC request with input_val: 3" "$tmp/server.out" &&
    echo "ext_pair $pair: OK"
