#!/usr/bin/env bash
# Seeds replay alike on every compiler: build the simulated-fabric tests
# with clang (only those, in BUILD, default build-clang) and run the
# recorded trace hashes (tests/sim/swarm_hashes.txt, recorded by a gcc
# build), the swarm, the fault scenarios and the liveness cases there.
#
#   scripts/clang-replay.sh [BUILD] [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-clang}
shift || true
cc=${QS_CLANG:-clang-14}
cxx=${QS_CLANGXX:-clang++-14}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQS_WERROR=ON \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DQS_SANITIZE= \
  -DQS_PLUGIN_VERBS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target test_sim_swarm test_sim_faults \
  test_sim_liveness test_sim_guards
ctest --test-dir "$build" --output-on-failure \
  -R '^test_sim_(swarm|swarm_recorded|faults|liveness|guards)$' "$@"
