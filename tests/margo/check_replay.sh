#!/bin/sh
# check_replay.sh PROG: runs test_margo_determinism twice in separate
# processes with one seed; both must print the same "td:" line (trace
# hash and ULT log of the seed's world), so the schedule does not depend
# on anything a process draws for itself (addresses, thread ids, timing).
set -u
prog=$1
seed=${QS_SIM_SEED:-11}
a=$(QS_SIM_SEED=$seed "$prog" | grep '^td: ') || { echo "check_replay: first run failed"; exit 1; }
b=$(QS_SIM_SEED=$seed "$prog" | grep '^td: ') || { echo "check_replay: second run failed"; exit 1; }
echo "check_replay: $a"
echo "check_replay: $b"
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "check_replay: the two processes differ"; exit 1; }
echo "check_replay: OK"
