#!/usr/bin/env bash
# A small rotating sample of the mutation check for CI: two catalogue
# entries chosen by the day of the year (a different pair each day, the
# whole catalogue over a few weeks), planted one at a time in BUILD (an
# existing, configured build tree; default build), each with a 60 s
# per-test limit. Fails if either survives.
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
