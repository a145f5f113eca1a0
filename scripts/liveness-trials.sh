#!/usr/bin/env bash
# Liveness trials: "peer killed while its handler runs" and "peer killed
# mid-bulk", with plain forwards (no deadline), N times each on every
# fabric this build has:
#   ofi+tcp  tests/ofi_faults across processes, the server SIGKILLed, with
#            HG_Forward (_plain) and margo_forward (_margo)
#   sm       the same binary over na+sm (kill_in_handler only: a pull over
#            shared memory is one process_vm_readv, done before a kill)
#   sim      tests/sim/test_liveness, one seed per trial (virtual time)
# For each, prints how long after the kill the call ended (min / median /
# p90 / max), how it ended, and how many trials hung or failed (a trial
# that exceeds 60 s of real time counts as hung).
#   scripts/liveness-trials.sh [N] [build dir] [fabric...]
#   (defaults: 100, build, every fabric built)
set -uo pipefail
n=${1:-100}
build=${2:-build}
shift 2 2>/dev/null || shift $#
fabrics=("$@")
ofi=$build/tests/ofi_faults/test_ofi_faults
sim=$build/tests/sim/test_sim_liveness
if [ ${#fabrics[@]} -eq 0 ]; then
  [ -x "$ofi" ] && fabrics+=(ofi+tcp)
  [ -x "$ofi" ] && [ -x "$build/plugins/sm/test_sm" ] && fabrics+=(sm)
  [ -x "$sim" ] && fabrics+=(sim)
fi

# trials LABEL UNIT SEEDED CMD...: run CMD n times (QS_SIM_SEED=i when
# SEEDED), collect "<what>: <code> <t> <unit> after the kill" lines.
trials() {
  local label=$1 unit=$2 seeded=$3
  shift 3
  local times=() codes=() bad=0 out rc line i
  for ((i = 1; i <= n; i++)); do
    if [ "$seeded" = 1 ]; then
      out=$(QS_SIM_SEED=$i QS_LIVENESS_TRIAL=1 timeout 60 "$@" 2>&1)
    else
      out=$(timeout 60 "$@" 2>&1)
    fi
    rc=$?
    line=$(grep -m1 -E "(held by the killed server|whose pull was killed)\)?: " <<<"$out")
    if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
      bad=$((bad + 1))
      echo "  $label trial $i: exit $rc" >&2
      grep -E "ERROR|not within|bound" <<<"$out" | head -3 >&2
      continue
    fi
    times+=("$(sed -E "s/.* ([0-9]+) $unit after the kill.*/\1/" <<<"$line")")
    codes+=("$(sed -E "s/^[^:]*: (.*) [0-9]+ $unit after the kill.*/\1/" <<<"$line")")
  done
  printf '%s: %d trials, %d failed or hung\n' "$label" "$n" "$bad"
  if [ "${#times[@]}" -gt 0 ]; then
    printf '%s\n' "${times[@]}" | sort -n | awk -v u="$unit" '
      { v[NR] = $1 }
      END { p = int(NR * 0.9 + 0.5); if (p < 1) p = 1
            printf "  %s after the kill: min %d, median %d, p90 %d, max %d\n",
                   u, v[1], v[int((NR + 1) / 2)], v[p], v[NR] }'
    printf '%s\n' "${codes[@]}" | sort | uniq -c | sed 's/^/  ended with:/'
  fi
}

for f in "${fabrics[@]}"; do
  case $f in
  ofi+tcp)
    for api in plain margo; do
      trials "ofi+tcp kill_in_handler_$api" ms 0 "$ofi" kill_in_handler_$api
      trials "ofi+tcp kill_in_bulk_$api" ms 0 "$ofi" kill_in_bulk_$api
    done
    ;;
  sm)
    for api in plain margo; do
      QS_OFI_FAULTS_INFO=na+sm \
        trials "sm kill_in_handler_$api" ms 0 "$ofi" kill_in_handler_$api
    done
    ;;
  sim)
    trials "sim killed_in_handler" us 1 "$sim" killed_in_handler
    trials "sim killed_mid_bulk" us 1 "$sim" killed_mid_bulk
    ;;
  *) echo "liveness-trials: unknown fabric $f (ofi+tcp, sm, sim)" >&2 ;;
  esac
done
