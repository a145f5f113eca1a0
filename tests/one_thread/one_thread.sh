#!/usr/bin/env bash
# one_thread.sh reset DIR
# one_thread.sh check DIR
# one_thread.sh selftest SHIM PROBE ROOT DIR
#
# The fixture around the cases of tests/one_thread.txt (cmake/QsOneThread.cmake):
# each listed case runs with one_thread_shim.c preloaded, which appends
# a line to DIR/<case>.log when a program of the build starts a thread.
#   reset     empties DIR before the cases run (the fixture's setup);
#   check     fails, naming each case and program, if any case recorded
#             a thread (the fixture's cleanup);
#   selftest  runs PROBE (a program under ROOT that starts one thread)
#             with SHIM preloaded and requires the record, then with
#             another root and requires none: a shim that records nothing
#             would make check pass for any list.
set -u
cmd=${1:-}
case "$cmd" in
reset)
    dir=$2
    rm -rf "$dir" && mkdir -p "$dir" || exit 1
    echo "one_thread_reset: OK (records in $dir cleared)"
    ;;
check)
    dir=$2
    found=0
    # Without the directory the shim could not have written a record (it
    # aborts the program then): say so rather than pass on nothing.
    if [ ! -d "$dir" ]; then
        echo "one_thread_check: FAIL: no $dir: the fixture's setup" \
            "(one_thread_reset) did not run"
        exit 1
    fi
    for f in "$dir"/*.log; do
        [ -s "$f" ] || continue
        found=$((found + 1))
        echo "one_thread_check: case $(basename "$f" .log) is listed in" \
            "tests/one_thread.txt but a program of it started a thread:"
        sed 's/^/  /' "$f"
    done
    if [ "$found" -ne 0 ]; then
        echo "one_thread_check: FAIL: $found listed case(s) started threads;" \
            "take them out of tests/one_thread.txt (CI's ThreadSanitizer" \
            "stage leaves the listed cases out)"
        exit 1
    fi
    echo "one_thread_check: OK (no listed case started a thread)"
    ;;
selftest)
    shim=$2 probe=$(readlink -f "$3") root=$4 dir=$5
    [ -f "$shim" ] || { echo "one_thread_selftest: FAIL: no shim at $shim"; exit 1; }
    mkdir -p "$dir" || exit 1
    rec="$dir/selftest.record"
    rm -f "$rec"
    LD_PRELOAD=$shim QS_ONE_THREAD_LOG=$rec QS_ONE_THREAD_ROOT=$root \
        "$probe" || { echo "one_thread_selftest: FAIL: $probe failed"; exit 1; }
    if ! grep -q "^$probe (pid [0-9]*) started a thread$" "$rec" 2>/dev/null; then
        echo "one_thread_selftest: FAIL: the shim did not record $probe's thread"
        exit 1
    fi
    rm -f "$rec"
    LD_PRELOAD=$shim QS_ONE_THREAD_LOG=$rec QS_ONE_THREAD_ROOT=/nonexistent \
        "$probe" >/dev/null || exit 1
    if [ -e "$rec" ]; then
        echo "one_thread_selftest: FAIL: a program outside the root was recorded"
        exit 1
    fi
    echo "one_thread_selftest: OK (a thread recorded, only under the root)"
    ;;
*)
    echo "usage: one_thread.sh reset DIR | check DIR | selftest SHIM PROBE ROOT DIR" >&2
    exit 2
    ;;
esac
