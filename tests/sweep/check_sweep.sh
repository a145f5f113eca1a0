#!/bin/sh
# check_sweep.sh CASE QS_SWEEP SWEEP_PROG OUTDIR: run qs-sweep over
# sweep_prog in one of its modes and check what it reports.
set -u
case_=$1 sweep=$2 prog=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out" && cd "$out" || exit 1
fail() { echo "check_sweep $case_: $*"; cat report.txt 2>/dev/null; exit 1; }
run() { "$sweep" --quiet --out files "$@" >report.txt 2>&1; echo $? >status; cat report.txt; }
status() { cat status; }
has() { grep -q -- "$1" report.txt || fail "no \"$1\" in the report"; }
# Hang limits stretch with the build's slowdown (QS_SLOW: 3 under ASan, 8
# under TSan), so that a slow passing run is not taken for a hang.
slow=${QS_SLOW:-1}

case $case_ in
pass)
    run --seeds 1:20 --jobs 2 --timeout $((60 * slow)) --junit junit.xml -- "$prog" pass
    [ "$(status)" = 0 ] || fail "exit status $(status), want 0"
    has "^20 passed, 0 failed$"
    grep -q '<testcase classname="qs-sweep.sweep_prog" name="seed 20"' junit.xml ||
        fail "seed 20 missing from junit.xml"
    if command -v xmllint >/dev/null; then
        xmllint --noout junit.xml || fail "junit.xml is not well-formed"
    fi
    # Passing runs leave nothing behind.
    [ -z "$(ls files)" ] || fail "files left for passing runs: $(ls files)"
    ;;
fail)
    run --seeds 1:20 --jobs 2 --junit junit.xml -- "$prog" fail
    [ "$(status)" = 1 ] || fail "exit status $(status), want 1"
    has "^16 passed, 4 failed$"
    for s in 2 7 12 17; do
        has "^FAIL seed $s: exit status 1$"
        has "replay: QS_SIM_SEED=$s QS_NA_INFO=sim $prog fail$"
        [ -s files/seed-$s.trace ] || fail "no trace for seed $s"
        grep -q '^<svg' files/seed-$s.svg || fail "no svg for seed $s"
    done
    grep -q 'failures="4"' junit.xml || fail "junit.xml does not count 4 failures"
    # The replay line, run as printed, fails the same way; a passing seed
    # passes.
    line=$(sed -n 's/^  replay: \(QS_SIM_SEED=7 .*\)/\1/p' report.txt)
    (eval "$line") >replay.txt 2>&1 && fail "replay of seed 7 passed"
    grep -q "planted failure: seed 7" replay.txt || fail "replay did not reproduce"
    QS_SIM_SEED=8 QS_NA_INFO=sim "$prog" fail || fail "seed 8 fails by hand"
    ;;
crash)
    # A seed killed by a signal is a failure, named as such.
    run --seeds 1:10 --jobs 2 -- "$prog" crash
    [ "$(status)" = 1 ] || fail "exit status $(status), want 1"
    has "^8 passed, 2 failed$"
    for s in 3 8; do
        has "^FAIL seed $s: killed by signal 6 "
        has "replay: QS_SIM_SEED=$s QS_NA_INFO=sim $prog crash$"
    done
    ;;
leak)
    # A leak the invariant checker reports fails its seed, though the
    # program exits 0 without the checker. (LeakSanitizer would see the
    # leak too, in a sanitizer build: this case is about the checker.)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    run --seeds 1:5 --jobs 2 -- "$prog" leak
    [ "$(status)" = 0 ] || fail "without --check: exit status $(status), want 0"
    has "^5 passed, 0 failed$"
    run --seeds 1:5 --jobs 2 --check -- "$prog" leak
    [ "$(status)" = 1 ] || fail "with --check: exit status $(status), want 1"
    has "^4 passed, 1 failed$"
    has "^FAIL seed 4: .*the invariant checker found a violation"
    ;;
sanreport)
    # A sanitizer report in a run's output fails the seed even when the run
    # exits 0. The report is not echoed: its planted line would fail this
    # case itself (cmake/QsTestVerdict.cmake).
    "$sweep" --quiet --out files --seeds 1:10 --jobs 2 -- "$prog" sanreport \
        >report.txt 2>&1
    echo $? >status
    [ "$(status)" = 1 ] || fail "exit status $(status), want 1"
    has "^8 passed, 2 failed$"
    for s in 1 6; do
        has "^FAIL seed $s: exit status 0, sanitizer report: ==[0-9]*==ERROR: AddressSanitizer"
    done
    ;;
hang)
    run --seeds 1:4 --jobs 2 --timeout $((2 * slow)) -- "$prog" hang
    [ "$(status)" = 1 ] || fail "exit status $(status), want 1"
    has "^HANG seed 3: still running after $((2 * slow)) s"
    has "replay: QS_SIM_SEED=3 QS_NA_INFO=sim $prog hang$"
    has "^3 passed, 1 failed$"
    # The killed run's trace was written as it went.
    grep -q "post:send_unexpected" files/seed-3.trace || fail "no trace of the hang"
    # --vtimeout: the same hang ends itself as its virtual clock passes
    # 100 s, long before the wall-clock limit, and says so in its trace.
    rm -rf files
    run --seeds 1:4 --jobs 2 --vtimeout 100 --timeout $((600 * slow)) -- "$prog" hang
    [ "$(status)" = 1 ] || fail "exit status $(status), want 1"
    has "^HANG seed 3: its virtual clock passed 100 s (--vtimeout)$"
    has "replay: QS_SIM_HANG_S=100 QS_SIM_SEED=3 QS_NA_INFO=sim $prog hang$"
    has "^3 passed, 1 failed$"
    grep -q "^# hung: virtual time" files/seed-3.trace || fail "no hung line in the trace"
    run --vtimeout 0 -- "$prog" pass
    [ "$(status)" = 2 ] || fail "--vtimeout 0 accepted: status $(status)"
    has "want virtual seconds"
    ;;
determinism)
    run --determinism --seeds 1:4 --jobs 2 -- "$prog" pass
    [ "$(status)" = 0 ] || fail "deterministic program: status $(status)"
    has "^4 passed, 0 failed$"
    run --determinism --seeds 1:6 --jobs 2 -- "$prog" nondet
    [ "$(status)" = 1 ] || fail "nondeterministic program: status $(status)"
    has "^NONDETERMINISTIC seed"
    n=$(grep -c "^NONDETERMINISTIC seed" report.txt)
    s=$(sed -n 's/^NONDETERMINISTIC seed \([0-9]*\):.*/\1/p' report.txt | head -1)
    [ -s files/seed-$s.a.trace ] && [ -s files/seed-$s.b.trace ] ||
        fail "both traces of seed $s are not kept"
    cmp -s files/seed-$s.a.trace files/seed-$s.b.trace && fail "the traces are equal"
    has "^$((6 - n)) passed, $n failed$"
    ;;
junit)
    # The JUnit XML report is written by default (DIR/junit.xml), read
    # here with Python's xml module as a CI system reads it.
    run --seeds 1:20 --jobs 2 --timeout $((60 * slow)) -- "$prog" fail
    [ "$(status)" = 1 ] || fail "exit status $(status), want 1"
    has "^JUnit XML: files/junit.xml$"
    [ "$(tail -1 report.txt)" = "16 passed, 4 failed" ] ||
        fail "the summary is not the last line"
    python3 "$here/check_junit.py" files/junit.xml report.txt 20 \
        2 7 12 17 || fail "files/junit.xml does not match the report"
    # --junit names another file; an unwritable one fails the sweep.
    run --seeds 1:3 --jobs 2 --junit other.xml -- "$prog" pass
    [ "$(status)" = 0 ] && [ -s other.xml ] || fail "--junit other.xml"
    python3 "$here/check_junit.py" other.xml report.txt 3 ||
        fail "other.xml does not match the report"
    run --seeds 1:3 --jobs 2 --junit no-such-dir/x.xml -- "$prog" pass
    [ "$(status)" = 1 ] || fail "an unwritable report did not fail the sweep"
    has "cannot write no-such-dir/x.xml"
    ;;
swarm)
    run --swarm --seeds 1:40 --jobs 2 --timeout $((20 * slow)) --junit junit.xml -- "$prog" pass
    [ "$(status)" = 0 ] || fail "exit status $(status), want 0"
    has "^40 passed, 0 failed$"
    has "swarm profiles"
    # A profile is part of the replay line: force a failure to see one.
    run --swarm --seeds 1:10 --jobs 2 -- "$prog" fail
    has "replay: QS_SIM_SEED=2 QS_SIM_FAULTS="
    line=$(sed -n 's/^  replay: \(QS_SIM_SEED=7 .*\)/\1/p' report.txt)
    (eval "$line") >replay.txt 2>&1 && fail "replay of seed 7 passed"
    grep -q "planted failure: seed 7" replay.txt || fail "replay did not reproduce"
    # --swarm-without: the faults it names are gone from every drawn
    # profile, and the rest of each seed's profile is as drawn. A program
    # that always fails shows every profile in its replay line.
    profiles() {
        sed -n "s/^  replay: QS_SIM_SEED=\([0-9]*\) QS_SIM_FAULTS=\(.*\) QS_NA_INFO=.*/\1 \2/p" \
            report.txt | tr -d "'" | sort -n
    }
    run --swarm --seeds 1:60 --jobs 2 -- /bin/sh -c 'exit 1'
    profiles >drawn.txt
    grep -q "dup=" drawn.txt && grep -q ";node:" drawn.txt ||
        fail "no drawn profile has both a dup and a crash to leave out"
    run --swarm --swarm-without dup,crash --seeds 1:60 --jobs 2 -- /bin/sh -c 'exit 1'
    has "swarm profiles without dup,crash"
    profiles >without.txt
    grep "dup=\|node:" without.txt && fail "--swarm-without dup,crash left them in"
    sed 's/,dup=[0-9.]*//; s/;node:[^;]*//' drawn.txt >want.txt
    cmp -s want.txt without.txt ||
        fail "--swarm-without changed more than it left out: $(diff want.txt without.txt)"
    run --swarm --swarm-without dupe -- "$prog" pass
    [ "$(status)" = 2 ] || fail "an unknown fault kind: exit status $(status), want 2"
    has "unknown fault 'dupe'"
    ;;
*)
    fail "unknown case" ;;
esac
echo "check_sweep $case_: OK"
