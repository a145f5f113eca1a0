#!/usr/bin/env bash
# A small rotating sample of the mutation check for CI: two of the
# catalogue entries that are caught (those naming their tests, "by:"),
# chosen by the day of the year (a different pair each day), planted one at
# a time in BUILD (an existing, configured build tree; default build), each
# checked by its own tests only, with a 60 s per-test limit. Fails if either
# survives: a test stopped catching a bug it used to catch. Under two
# minutes: per entry, the library and only the programs its tests run are
# built (and built again once the file is restored); a bug that makes its
# test hang costs the 60 s limit.
#
#   scripts/mutation-sample.sh [BUILD] [SEED]
#
# The full check and its figure: scripts/mutation-check.py, docs/conformance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seed=${2:-$(date -u +%j)}
seed=$((10#$seed))
echo "mutation sample: seed $seed (replay: $0 $build $seed)"
exec scripts/mutation-check.py --build "$build" --sample 2 --seed "$seed" \
  --timeout 60 --quick
