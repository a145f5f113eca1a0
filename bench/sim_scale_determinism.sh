#!/bin/sh
# Determinism of sim_scale: two runs with the same seed, in two processes,
# must print the same trace hash for every world size. On a mismatch the
# seed and the command that replays it are printed.
# Usage: sim_scale_determinism.sh <binary> <seed> [sim_scale args...]
bin=$1
seed=$2
shift 2
hashes() {
    "$bin" --seed "$seed" "$@" | grep '^{"tool":"sim_scale"' |
        sed 's/.*"nodes":\([0-9]*\).*"trace_hash":"\([0-9a-f]*\)".*/\1 \2/'
}
first=$(hashes "$@") || exit 1
second=$(hashes "$@") || exit 1
printf 'run 1:\n%s\nrun 2:\n%s\n' "$first" "$second"
if [ -z "$first" ]; then
    echo "sim_scale_determinism: no JSON record (seed $seed)" >&2
    exit 1
fi
if [ "$first" != "$second" ]; then
    echo "sim_scale_determinism: the trace hashes differ for seed $seed;" \
         "replay with: $bin --seed $seed $*" >&2
    exit 1
fi
