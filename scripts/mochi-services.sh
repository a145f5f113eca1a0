#!/usr/bin/env bash
# mochi-services.sh [OPTIONS] SNAPSHOT_DIR...
#
# Builds real Mochi services against an installed Quicksilver and runs
# their own test suites unchanged (docs/conformance.md, "Mochi services'
# own suites"). Each SNAPSHOT_DIR is a git directory (a bare clone or a
# snapshot without a work tree) of one of:
#   pboettch/json-schema-validator, catchorg/Catch2 (3.x), ToruNiina/toml11
#   (4.x), mochi-hpc/mochi-abt-io, mochi-bedrock-module-api, mochi-yokan,
#   mochi-warabi, mochi-bedrock, mochi-margo (its unit tests only).
# A snapshot is recognised by the project() name of its top-level
# CMakeLists.txt, so the directory may be named anything. Nothing of
# theirs is copied into this repository: each tree is exported with
# `git archive HEAD` into the work directory and built there.
#
# Options:
#   --work DIR      scratch directory (default ${TMPDIR:-/tmp}/qs-mochi)
#   --prefix DIR    use an installed Quicksilver in DIR instead of building
#                   and installing this checkout into WORK/prefix (the
#                   services are installed into the same prefix)
#   --no-deps       do not run apt-get (the packages are already present)
#   --timeout SEC   per upstream test (default 300)
#   --strict        exit 1 when an upstream test fails, not only a build
#
# Output: the commit of each snapshot, one line per upstream test
#   mochi: SERVICE TEST passed|failed|skipped [reason]
# and a summary line per service
#   mochi: SERVICE: N ran, P passed, F failed, S skipped
# then "mochi: done". Tests run inside a network namespace with only
# loopback (unshare -n), where unshare is allowed. Exit status: 1 if a
# build fails (or, with --strict, a test), 77 if no snapshot was given.
# Builds run with nice -n 19 and make -j2 (the machine is shared).
set -uo pipefail

# The whole script is one brace group, read before it runs: editing the
# file while it runs (an hour) cannot change what it does.
{
here=$(cd "$(dirname "$0")/.." && pwd)
work=${TMPDIR:-/tmp}/qs-mochi
prefix=""
deps=1
timeout=300
strict=0
snapshots=()
while [ $# -gt 0 ]; do
    case $1 in
    --work) work=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --no-deps) deps=0; shift ;;
    --timeout) timeout=$2; shift 2 ;;
    --strict) strict=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mochi: unknown option $1" >&2; exit 2 ;;
    *) snapshots+=("$1"); shift ;;
    esac
done
if [ ${#snapshots[@]} -eq 0 ]; then
    echo "mochi: skipped: no snapshot directories given (usage: mochi-services.sh [--work DIR] SNAPSHOT_DIR...; the ctest case mochi_services takes them from the cache variable QS_MOCHI_SNAPSHOTS, a ;-list)"
    exit 77
fi

mkdir -p "$work"/{src,build,logs}
work=$(cd "$work" && pwd)
logs=$work/logs
nice=(nice -n 19)
jobs=-j2
build_failed=0
test_failed=0

log() { echo "mochi: $*"; }

# --- Packages ---------------------------------------------------------
if [ $deps = 1 ]; then
    QS_DEPS_VM=0 "$here/scripts/install-deps.sh" || exit 1
    extra=(nlohmann-json3-dev libfmt-dev libspdlog-dev libtclap-dev
           libpmemobj-dev iproute2 util-linux python3)
    missing=()
    for p in "${extra[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${missing[@]}" >"$logs/apt.log" 2>&1 ||
            { log "apt-get failed, see $logs/apt.log"; exit 1; }
    fi
fi

# --- Recognise the snapshots -------------------------------------------
declare -A snap # key -> git dir
for dir in "${snapshots[@]}"; do
    if ! commit=$(git --git-dir="$dir" rev-parse HEAD 2>/dev/null); then
        log "$dir: not a git directory"
        exit 2
    fi
    name=$(git --git-dir="$dir" show HEAD:CMakeLists.txt 2>/dev/null |
        tr -d '\r' | sed -nE 's/^[[:space:]]*project[[:space:]]*\([[:space:]]*([A-Za-z0-9_.-]+).*/\1/Ip' |
        head -n 1)
    case $name in
    nlohmann_json_schema_validator) key=json-schema-validator ;;
    Catch2) key=catch2 ;;
    toml11) key=toml11 ;;
    abt-io) key=abt-io ;;
    bedrock-module-api) key=bedrock-module-api ;;
    yokan) key=yokan ;;
    warabi) key=warabi ;;
    bedrock) key=bedrock ;;
    margo) key=margo ;;
    *) log "$dir: unknown project '${name:-?}', ignored"; continue ;;
    esac
    snap[$key]=$dir
    log "snapshot $key $commit ($dir)"
done

# --- Quicksilver -------------------------------------------------------
if [ -z "$prefix" ]; then
    prefix=$work/prefix
    log "building Quicksilver ($(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')) into $prefix"
    if ! { "${nice[@]}" cmake -S "$here" -B "$work/build/quicksilver" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DQS_BUILD_TESTS=OFF -DQS_BUILD_EXAMPLES=OFF -DQS_BUILD_BENCH=OFF &&
        "${nice[@]}" cmake --build "$work/build/quicksilver" $jobs &&
        "${nice[@]}" cmake --install "$work/build/quicksilver"; } \
        >"$logs/quicksilver.log" 2>&1; then
        tail -n 30 "$logs/quicksilver.log"
        log "build failed: quicksilver (see $logs/quicksilver.log)"
        exit 1
    fi
fi
prefix=$(cd "$prefix" && pwd)
export CMAKE_PREFIX_PATH=$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig:$prefix/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export LD_LIBRARY_PATH=$prefix/lib:$prefix/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$prefix/bin:$PATH

# --- Building ----------------------------------------------------------
declare -A built # key -> 1 when built and installed

# export_tree KEY: the snapshot's HEAD into WORK/src/KEY, again only when
# its commit changed (so a second run rebuilds incrementally).
export_tree() {
    local key=$1 dir=${snap[$1]} src=$work/src/$1 commit
    commit=$(git --git-dir="$dir" rev-parse HEAD)
    if [ "$(cat "$src.commit" 2>/dev/null)" != "$commit" ]; then
        rm -rf "$src" "$work/build/$key"
        mkdir -p "$src"
        git --git-dir="$dir" archive HEAD | tar -x -C "$src" || return 1
        echo "$commit" >"$src.commit"
    fi
}

# build KEY CMAKE_ARGS...: configure, build and install into the prefix.
build() {
    local key=$1
    shift
    [ -n "${snap[$key]:-}" ] || return 1
    log "building $key"
    if ! { export_tree "$key" &&
        "${nice[@]}" cmake -S "$work/src/$key" -B "$work/build/$key" \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX="$prefix" \
            -DCMAKE_PREFIX_PATH="$prefix" "$@" &&
        "${nice[@]}" cmake --build "$work/build/$key" $jobs &&
        "${nice[@]}" cmake --install "$work/build/$key"; } \
        >"$logs/$key.log" 2>&1; then
        grep -E 'error|Error|ERROR' "$logs/$key.log" | head -n 20
        tail -n 15 "$logs/$key.log"
        log "build failed: $key (see $logs/$key.log)"
        build_failed=1
        return 1
    fi
    built[$key]=1
}

# needs KEY DEP...: true when every DEP (a snapshot key) was built.
needs() {
    local key=$1 d
    shift
    [ -n "${snap[$key]:-}" ] || return 1
    for d in "$@"; do
        if [ -z "${built[$d]:-}" ]; then
            log "build failed: $key needs $d, which was not given or not built"
            build_failed=1
            return 1
        fi
    done
}

# --- Running -----------------------------------------------------------
# in_netns CMD...: CMD inside a network namespace with only loopback up;
# where unshare is refused, on the host's network (said once).
netns_ok=0
if unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
    netns_ok=1
else
    log "note: unshare -n refused; tests run on the host's network"
fi
in_netns() {
    if [ "$netns_ok" = 1 ]; then
        unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@"
    else
        "$@"
    fi
}

declare -A n_ran n_pass n_fail n_skip
result() { # SERVICE TEST STATUS [REASON]
    local svc=$1 t=$2 st=$3
    shift 3
    echo "mochi: $svc $t $st${*:+ ($*)}"
    n_ran[$svc]=$((${n_ran[$svc]:-0} + 1))
    case $st in
    passed) n_pass[$svc]=$((${n_pass[$svc]:-0} + 1)) ;;
    skipped) n_skip[$svc]=$((${n_skip[$svc]:-0} + 1)) ;;
    *) n_fail[$svc]=$((${n_fail[$svc]:-0} + 1)); test_failed=1 ;;
    esac
}
summary() {
    local svc=$1
    echo "mochi: $svc: ${n_ran[$svc]:-0} ran, ${n_pass[$svc]:-0} passed," \
        "${n_fail[$svc]:-0} failed, ${n_skip[$svc]:-0} skipped"
}

# run_ctest SERVICE EXCLUDE_REGEX [ENV=VALUE...]: the service's own ctest
# in its build directory, one result line per test.
run_ctest() {
    local svc=$1 exclude=$2 out
    shift 2
    out=$logs/$svc-ctest.log
    (cd "$work/build/$svc" &&
        in_netns env "$@" "${nice[@]}" timeout $((timeout * 40)) \
            ctest --output-on-failure --timeout "$timeout" ${exclude:+-E "$exclude"}) \
        >"$out" 2>&1
    # "  3/24 Test  #3: test-put .........   Passed    0.52 sec"
    sed -nE 's/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: +([^ ]+) \.*[ *]*([A-Za-z][A-Za-z ]*[A-Za-z]).*/\1 \2/p' "$out" |
        while read -r t st; do
            case $st in
            Passed) echo "$t passed" ;;
            Skipped | "Not Run"*) echo "$t skipped $st" ;;
            *) echo "$t failed $st" ;;
            esac
        done >"$out.results"
    if [ ! -s "$out.results" ]; then
        tail -n 20 "$out"
        result "$svc" ctest failed "no test ran, see $out"
    fi
    while read -r t st why; do
        result "$svc" "$t" "$st" $why
    done <"$out.results"
}

# --- Dependencies ------------------------------------------------------
build json-schema-validator -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DJSON_VALIDATOR_BUILD_TESTS=OFF -DJSON_VALIDATOR_BUILD_EXAMPLES=OFF \
    -DJSON_VALIDATOR_INSTALL=ON
build catch2 -DCATCH_INSTALL_DOCS=OFF -DBUILD_TESTING=OFF
build toml11 -DTOML11_BUILD_TESTS=OFF
# Its test concurrent-write-bench runs an example program.
if build abt-io -DENABLE_TESTS=ON -DENABLE_EXAMPLES=ON -DENABLE_BENCHMARK=OFF \
    -DENABLE_BEDROCK=OFF; then
    run_ctest abt-io ""
    summary abt-io
fi
build bedrock-module-api -DENABLE_EXAMPLES=OFF

# --- Yokan (map backend) -------------------------------------------------
# Its tests glob python/test_*.py whatever ENABLE_PYTHON says (names with
# dots): left out, like the REMI migration test.
if [ -n "${snap[yokan]:-}" ] &&
    build yokan -DENABLE_TESTS=ON -DENABLE_BEDROCK=OFF -DENABLE_PYTHON=OFF \
        -DENABLE_REMI=OFF; then
    # Its custom-filter tests dlopen() libcustom-filters.so by bare name
    # from libyokan-server, whose run path does not hold tests/.
    run_ctest yokan '\.|migration' YOKAN_TEST_BACKEND=map \
        LD_LIBRARY_PATH="$work/build/yokan/tests:$LD_LIBRARY_PATH"
    summary yokan
fi

# --- Warabi --------------------------------------------------------------
if needs warabi json-schema-validator abt-io catch2 &&
    build warabi -DENABLE_TESTS=ON -DENABLE_BEDROCK=OFF -DENABLE_PYTHON=OFF \
        -DENABLE_REMI=OFF; then
    run_ctest warabi '\.'
    summary warabi
fi

# --- Bedrock -------------------------------------------------------------
# Its own ctest, then the daemon: started with a minimal configuration,
# queried with bedrock-query, stopped with bedrock-shutdown, and it must
# exit 0 by itself.
bedrock_serve() {
    local d=$1 addr="" i rc
    cd "$d" || return 1
    rm -f out.json
    echo '{ "margo": { "argobots": {} }, "providers": [] }' >minimal.json
    timeout 120 bedrock ofi+tcp -c minimal.json -o out.json -v info \
        >bedrock.out 2>&1 &
    local pid=$!
    for i in $(seq 1 200); do
        [ -s out.json ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    addr=$(python3 -c 'import json,sys; print(json.load(open("out.json"))["margo"]["mercury"]["address"])' 2>/dev/null)
    if [ -z "$addr" ]; then
        echo "serve failed: no address written"
        cat bedrock.out
        kill $pid 2>/dev/null
        wait $pid
        return 1
    fi
    echo "serve passed $addr"
    if timeout 60 bedrock-query ofi+tcp -a "$addr" >query.json 2>query.err &&
        python3 -c 'import json,sys; d=json.load(open("query.json")); sys.exit(0 if d else 1)' 2>/dev/null; then
        echo "query passed"
    else
        echo "query failed: bedrock-query $(head -c 200 query.err query.json | tr '\n' ' ')"
    fi
    timeout 60 bedrock-shutdown ofi+tcp -a "$addr" >shutdown.out 2>&1
    rc=$?
    for i in $(seq 1 100); do
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 $pid 2>/dev/null; then
        echo "shutdown failed: still running 10 s after bedrock-shutdown (exit $rc)"
        kill $pid
        wait $pid
        return 0
    fi
    wait $pid
    local brc=$?
    if [ $rc = 0 ] && [ $brc = 0 ]; then
        echo "shutdown passed"
    else
        echo "shutdown failed: bedrock-shutdown exit $rc, bedrock exit $brc"
    fi
}
if needs bedrock json-schema-validator toml11 bedrock-module-api catch2 &&
    build bedrock -DENABLE_TESTS=ON -DENABLE_PYTHON=OFF -DENABLE_MPI=OFF \
        -DENABLE_FLOCK=OFF -DENABLE_EXAMPLES=OFF; then
    run_ctest bedrock '\.'
    mkdir -p "$work/build/bedrock/serve"
    # The function's text goes along: sh between here and bash drops
    # exported functions.
    in_netns bash -c "$(declare -f bedrock_serve)"'; bedrock_serve "$1"' \
        sh "$work/build/bedrock/serve" \
        >"$logs/bedrock-serve.log" 2>&1
    for step in serve query shutdown; do
        line=$(grep -E "^$step (passed|failed)" "$logs/bedrock-serve.log" | head -n 1)
        if [ -z "$line" ]; then
            result bedrock "daemon-$step" failed "not reached, see $logs/bedrock-serve.log"
        else
            set -- $line
            st=$2
            shift 2
            [ "$st" = passed ] && set --
            result bedrock "daemon-$step" "$st" "$@"
        fi
    done
    summary bedrock
fi

# --- Margo's unit tests ----------------------------------------------------
# Each tests/unit-tests/margo-*.c with munit and (as upstream's CMake
# does, except for the four that do without) helper-server.c, run with no
# arguments from that folder. A test that does not compile against the
# installed headers counts as failed, except the three that need Margo's
# monitoring API or private headers (skipped, with the reason).
if [ -n "${snap[margo]:-}" ]; then
    log "building margo unit tests"
    export_tree margo || build_failed=1
    u=$work/src/margo/tests/unit-tests
    b=$work/build/margo-unit
    mkdir -p "$b"
    cflags=$(pkg-config --cflags margo) && libs=$(pkg-config --libs margo) ||
        { log "build failed: pkg-config margo"; build_failed=1; }
    "${nice[@]}" cc -O1 -g -c -I"$u/munit" "$u/munit/munit.c" -o "$b/munit.o" \
        >"$logs/margo-munit.log" 2>&1 || build_failed=1
    "${nice[@]}" cc -O1 -g -c -I"$u" -I"$u/munit" $cflags "$u/helper-server.c" \
        -o "$b/helper-server.o" >"$logs/margo-helper.log" 2>&1 || build_failed=1
    for src in "$u"/margo-*.c; do
        t=$(basename "$src" .c)
        case $t in
        margo-timer | margo-bulk | margo-monitoring | margo-sanity-warnings) helper="" ;;
        *) helper=$b/helper-server.o ;;
        esac
        if ! "${nice[@]}" cc -O1 -g -I"$u" -I"$u/munit" $cflags "$src" "$b/munit.o" \
            $helper -o "$b/$t" $libs -lm >"$logs/margo-$t.build.log" 2>&1; then
            why="does not compile: $(grep -m 1 -E 'error' "$logs/margo-$t.build.log" | sed 's/^.*error: //')"
            case $t in
            margo-monitoring | margo-diag | margo-eventual)
                result margo "$t" skipped "needs Margo's monitoring API or private headers; $why" ;;
            *) result margo "$t" failed "$why" ;;
            esac
            continue
        fi
        (cd "$u" && in_netns "${nice[@]}" timeout "$timeout" "$b/$t") \
            >"$logs/margo-$t.log" 2>&1
        rc=$?
        # munit's last line: "4 of 6 (67%) tests successful, ...".
        cases=$(sed -nE 's/^([0-9]+ of [0-9]+) .*tests successful.*/\1 munit cases passed/p' \
            "$logs/margo-$t.log" | tail -n 1)
        if [ $rc = 0 ]; then
            result margo "$t" passed "$cases"
        elif [ $rc = 124 ]; then
            result margo "$t" failed "timeout after $timeout s"
        else
            result margo "$t" failed "exit $rc, ${cases:-no munit summary}, see $logs/margo-$t.log"
        fi
    done
    summary margo
fi

log "logs in $logs"
log "done"
if [ $build_failed = 1 ]; then
    exit 1
fi
if [ $strict = 1 ] && [ $test_failed = 1 ]; then
    exit 1
fi
exit 0
}
