#!/bin/sh
# check.sh CASE QS_SWEEP OUTDIR YK_SIM: the ctest cases of examples/yokan_sim.
#   run    yk_sim without faults must pass; one faulted seed, run twice,
#          must give the same trace hash
#   sweep  qs-sweep --swarm over the seeds in YK_SIM_SEEDS (1:100), with
#          YK_SIM_LATE_OK=1: a call held past its deadline by a handler
#          nested on its stack is counted, not failed; and without the
#          dup fault: Yokan's client hands its back-RPCs a pointer to a
#          stack frame, which a duplicated request's second handler calls
#          back into after the call returned (docs/testing-your-
#          service.md, "A second example: Yokan")
# With an empty YK_SIM (no QS_YOKAN_PREFIX at configure time) both skip,
# exit 77, and say why.
set -u
case_=$1 sweep=$2 out=$3 yk=${4:-}
if [ -z "$yk" ]; then
    echo "yokan_sim: skipped: configure with -DQS_YOKAN_PREFIX=<a Yokan install> (docs/testing-your-service.md, \"A second example: Yokan\")"
    exit 77
fi
mkdir -p "$out" && cd "$out" || exit 1
fail() { echo "yokan_sim: FAILED: $*"; exit 1; }
hash_of() { tail -n 1 "$1" | sed -n 's/.*hash \([0-9a-fx]*\).*/\1/p'; }

case $case_ in
run)
    QS_SIM_SEED=1 "$yk" sim || fail "seed 1 without faults"
    profile='world:loss=0.02,rma_err=0.05,again=0.02;node:node0:crash@3ms,restart@6ms'
    for r in a b; do
        QS_SIM_SEED=7 QS_SIM_FAULTS=$profile QS_SIM_TRACE_OUT=replay.$r.trace \
            "$yk" sim >replay.$r.log 2>&1
        echo $? >replay.$r.rc
    done
    a=$(hash_of replay.a.trace) b=$(hash_of replay.b.trace)
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "seed 7 replayed with trace hashes '$a' and '$b'"
    cmp -s replay.a.rc replay.b.rc || fail "seed 7 replayed with other exit statuses"
    [ "$(cat replay.a.rc)" = 0 ] || fail "seed 7 under '$profile' (replay.a.log)"
    echo "yokan_sim: seed 7 under '$profile' replays: hash $a"
    ;;
sweep)
    YK_SIM_LATE_OK=1 "$sweep" --seeds "${YK_SIM_SEEDS:-1:100}" --swarm \
        --swarm-without dup --vtimeout 600 \
        --jobs 2 --quiet --out sweep -- "$yk" || fail "the sweep"
    ;;
*)
    echo "usage: check.sh run|sweep QS_SWEEP OUTDIR YK_SIM" >&2
    exit 2
    ;;
esac
echo "yokan_sim: OK"
