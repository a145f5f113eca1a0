#!/bin/sh
# check_qc_margo.sh QC_MARGO OUTDIR: the invariant checker on a Margo
# program (qc_margo.c). Each planted leak passes unseen without the
# checker and, with QS_CHECK=1, ends the run with status 70 and a report
# naming the object and the function that created it; the clean program
# passes with the checker on.
set -u
prog=$1 out=$2
rm -rf "$out" && mkdir -p "$out" && cd "$out" || exit 1
fail() { echo "check_qc_margo: $*"; cat err.txt 2>/dev/null; exit 1; }
# LeakSanitizer would see some of these leaks itself; the library's own
# check is what is tested here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

QS_CHECK=1 QS_SIM_SEED=5 "$prog" clean >out.txt 2>err.txt ||
    fail "the clean program failed under QS_CHECK=1 (status $?)"
grep -q "qs-check" err.txt && fail "the clean program has a report"

# mode, then the report line the leak must produce.
while read -r mode want; do
    "$prog" "$mode" >out.txt 2>err.txt ||
        fail "$mode: the leak shows without the checker (status $?)"
    QS_CHECK=1 QS_SIM_SEED=5 "$prog" "$mode" >out.txt 2>err.txt
    st=$?
    [ $st = 70 ] || fail "$mode: status $st under QS_CHECK=1, want 70"
    grep -qF "$want" err.txt || fail "$mode: no \"$want\" in the report"
    grep -q "created at qc_leak_$mode" err.txt ||
        fail "$mode: the report does not name qc_leak_$mode"
    grep -q "^qs-check: seed 5; replay: QS_CHECK=1 QS_SIM_SEED=5 " err.txt ||
        fail "$mode: no replay line"
    echo "check_qc_margo: $mode: $want"
done <<EOF
request qs-check: not released at exit: Margo request of a forward (margo_iforward; margo_wait)
timer qs-check: not released at exit: Margo timer (margo_timer_destroy)
addr qs-check: not released before margo_finalize (margo_addr_free): address
handle qs-check: not released: handle of RPC "qc_echo"
bulk qs-check: not released: bulk handle of 4096 bytes
EOF
echo "check_qc_margo: OK"
