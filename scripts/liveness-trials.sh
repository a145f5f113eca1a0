#!/usr/bin/env bash
# Liveness trials: "peer killed while its handler runs" and "peer killed
# mid-bulk", with calls that carry no deadline, N times each on every
# fabric this build has:
#   ofi+tcp  tests/ofi_faults across processes, the server SIGKILLed, with
#            HG_Forward (plain), margo_forward (margo) and a Thallium
#            remote_procedure (thallium, test_ofi_faults_tl)
#   sm       the same programs over na+sm; the mid-bulk rows move RMA
#            through the rings (QS_SM_RMA=msg): with process_vm_readv a
#            pull is one system call, done before a kill can land
#   tcp      the ofi+tcp rows over the native TCP plugin (tcp://), named
#            explicitly: scripts/liveness-trials.sh N build tcp
#   sim      tests/sim/test_liveness (HG_Forward) and
#            tests/thallium/test_liveness_sim.cpp (margo_forward, a
#            Thallium call), one seed per trial (virtual time)
#   verbs    the ofi+tcp rows over QS_VERBS_INFO (default
#            verbs://rxe0/10.11.0.1:0); run inside the Soft-RoCE guest:
#              QS_VM_TESTS="$PWD/scripts/liveness-trials.sh 100 $PWD/build verbs" \
#                tests/verbs-vm/run-vm-tests.sh --build-dir build
# For each row, prints how long after the kill the call ended (min,
# median, p90, p99, max), how every trial ended (the call's result, or
# "hung" when a trial exceeds 60 s of real time, or "failed (exit N)"),
# and at the end the rows as a Markdown table. QS_LIVENESS_APIS picks the
# calls of the process rows (default "plain margo thallium"),
# QS_LIVENESS_SCENARIOS their scenarios (default "handler bulk").
#   scripts/liveness-trials.sh [N] [build dir] [fabric...]
#   (defaults: 100, build, every fabric built except verbs)
set -uo pipefail
# The whole script is one block, read before it runs: editing the file
# during a long run does not change the run.
{
n=${1:-100}
build=${2:-build}
shift 2 2>/dev/null || shift $#
fabrics=("$@")
ofi=$build/tests/ofi_faults/test_ofi_faults
tl=$build/tests/ofi_faults/test_ofi_faults_tl
sim=$build/tests/sim/test_sim_liveness
tlsim=$build/tests/thallium/test_tl_liveness_sim
if [ ${#fabrics[@]} -eq 0 ]; then
  [ -x "$ofi" ] && fabrics+=(ofi+tcp)
  [ -x "$ofi" ] && [ -x "$build/plugins/sm/test_sm" ] && fabrics+=(sm)
  [ -x "$sim" ] && fabrics+=(sim)
fi
table=()

# trials LABEL UNIT SEEDED CMD...: run CMD n times (QS_SIM_SEED=i when
# SEEDED), collect "<what>: <code> <t> <unit> after the kill" lines.
trials() {
  local label=$1 unit=$2 seeded=$3
  shift 3
  local times=() outcomes=() bad=0 out rc line i code
  for ((i = 1; i <= n; i++)); do
    if [ "$seeded" = 1 ]; then
      out=$(QS_SIM_SEED=$i QS_LIVENESS_TRIAL=1 timeout -k 5 60 "$@" 2>&1)
    else
      out=$(timeout -k 5 60 "$@" 2>&1)
    fi
    rc=$?
    line=$(grep -m1 -E "(held by the killed server|whose pull was killed)\)?: " <<<"$out")
    code=""
    if [ -n "$line" ]; then
      times+=("$(sed -E "s/.* ([0-9]+) $unit after the kill.*/\1/" <<<"$line")")
      code=$(sed -E "s/^[^:]*: (.*) [0-9]+ $unit after the kill.*/\1/" <<<"$line")
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      code="hung"
    elif [ "$rc" -ne 0 ] || [ -z "$line" ]; then
      code="failed (exit $rc${code:+, $code})"
    fi
    [ "$code" = HG_HOSTUNREACH ] || {
      bad=$((bad + 1))
      echo "  $label trial $i: $code" >&2
      grep -E "ERROR|not within|bound|want" <<<"$out" | head -3 >&2
    }
    outcomes+=("$code")
  done
  local dist="" ends
  printf '%s: %d trials, %d not HG_HOSTUNREACH within the bound\n' "$label" "$n" "$bad"
  if [ "${#times[@]}" -gt 0 ]; then
    dist=$(printf '%s\n' "${times[@]}" | sort -n | awk -v u="$unit" '
      function at(q) { i = int(NR * q + 0.999999); if (i < 1) i = 1; return v[i] }
      { v[NR] = $1 }
      END { printf "%d %s | %d %s | %d %s | %d %s | %d %s",
                   v[1], u, at(0.5), u, at(0.9), u, at(0.99), u, v[NR], u }')
    printf '  %s after the kill: min | median | p90 | p99 | max: %s\n' "$unit" "$dist"
  fi
  ends=$(printf '%s\n' "${outcomes[@]}" | sort | uniq -c |
    awk '{c = $1; $1 = ""; sub(/^ /, ""); printf "%s`%s` (%d)", sep, $0, c; sep = ", "}')
  echo "  ended with: $ends"
  table+=("| $label | $n | $bad | ${dist:-- | - | - | - | -} | $ends |")
}

# rows FABRIC: the ofi_faults rows (HG, Margo, Thallium; handler, bulk)
# with the environment already set for FABRIC.
rows() {
  local f=$1 what="killed mid-bulk" pre=() scen api
  # sm: RMA through the rings, so that the kill lands mid-transfer.
  if [ "$f" = sm ]; then
    what="killed mid-bulk (RMA via rings)"
    pre=(env QS_SM_RMA=msg)
  fi
  for scen in ${QS_LIVENESS_SCENARIOS:-handler bulk}; do
    for api in ${QS_LIVENESS_APIS:-plain margo thallium}; do
      local label="$f, killed in handler" cmd=()
      [ $scen = bulk ] && label="$f, $what"
      [ $scen = bulk ] && cmd=("${pre[@]}")
      case $api in
      plain) label+=", HG_Forward" cmd+=("$ofi" kill_in_${scen}_plain) ;;
      margo) label+=", margo_forward" cmd+=("$ofi" kill_in_${scen}_margo) ;;
      thallium)
        [ -x "$tl" ] || continue
        label+=", Thallium call" cmd+=("$tl" kill_in_$scen) ;;
      esac
      trials "$label" ms 0 "${cmd[@]}"
    done
  done
}

for f in "${fabrics[@]}"; do
  case $f in
  ofi+tcp) QS_OFI_FAULTS_INFO=ofi+tcp://127.0.0.1:0 rows ofi+tcp ;;
  sm) QS_OFI_FAULTS_INFO=na+sm rows sm ;;
  tcp) QS_OFI_FAULTS_INFO=tcp://127.0.0.1:0 rows tcp ;;
  verbs) QS_OFI_FAULTS_INFO=${QS_VERBS_INFO:-verbs://rxe0/10.11.0.1:0} rows verbs ;;
  sim)
    for scen in killed_in_handler killed_mid_bulk; do
      what="killed in handler"
      [ $scen = killed_mid_bulk ] && what="killed mid-bulk"
      trials "sim, $what (virtual time), HG_Forward" us 1 "$sim" $scen
      [ -x "$tlsim" ] || continue
      trials "sim, $what (virtual time), margo_forward" us 1 "$tlsim" $scen margo
      trials "sim, $what (virtual time), Thallium call" us 1 "$tlsim" $scen
    done
    ;;
  *) echo "liveness-trials: unknown fabric $f (ofi+tcp, sm, tcp, sim, verbs)" >&2 ;;
  esac
done

echo
echo "| fabric, scenario, call | trials | not HOSTUNREACH in bound | min | median | p90 | p99 | max | ended with |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${table[@]}"
exit
}
