#!/usr/bin/env bash
# Liveness trials on ofi+tcp loopback: run the "server killed while its
# handler runs" and "server killed mid-bulk" scenarios of tests/ofi_faults
# with plain forwards (no deadline) N times each, and print how long after
# the kill the call ended (min / median / p90 / max, in ms), how it ended,
# and how many trials hung or failed.
#   scripts/liveness-trials.sh [N] [build dir]      (default 100, build)
set -uo pipefail
n=${1:-100}
build=${2:-build}
bin=$build/tests/ofi_faults/test_ofi_faults
[ -x "$bin" ] || { echo "liveness-trials: $bin not built"; exit 1; }
for scenario in kill_in_handler_plain kill_in_bulk_plain; do
  times=() codes=() bad=0
  for ((i = 0; i < n; i++)); do
    out=$(timeout 60 "$bin" "$scenario" 2>&1)
    rc=$?
    line=$(grep -m1 -E "(held by the killed server|whose pull was killed):" <<<"$out")
    if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
      bad=$((bad + 1))
      echo "  trial $i: exit $rc" >&2
      grep -E "ERROR|not within" <<<"$out" | head -3 >&2
      continue
    fi
    ms=$(sed -E 's/.* ([0-9]+) ms after the kill.*/\1/' <<<"$line")
    code=$(sed -E 's/^[^:]*: (.*) [0-9]+ ms after the kill.*/\1/' <<<"$line")
    times+=("$ms")
    codes+=("$code")
  done
  printf '%s: %d trials, %d failed or hung\n' "$scenario" "$n" "$bad"
  if [ "${#times[@]}" -gt 0 ]; then
    printf '%s\n' "${times[@]}" | sort -n | awk '
      { v[NR] = $1 }
      END { p = int(NR * 0.9 + 0.5); if (p < 1) p = 1
            printf "  ms after the kill: min %d, median %d, p90 %d, max %d\n",
                   v[1], v[int((NR + 1) / 2)], v[p], v[NR] }'
    printf '%s\n' "${codes[@]}" | sort | uniq -c | sed 's/^/  ended with:/'
  fi
done
