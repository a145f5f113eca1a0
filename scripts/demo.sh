#!/usr/bin/env bash
# The README's demo command: installs the Debian packages, builds, and runs
# the demos: the NA demo over the simulated fabric, then the seed programs
# (the Margo and HG `sum` over bulk) where they are built.
set -euo pipefail
cd "$(dirname "$0")/.."
QS_DEPS_VM=0 ./scripts/install-deps.sh
build=${QS_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQS_PLUGIN_OFI=AUTO -DQS_PLUGIN_VERBS=AUTO >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
echo "== NA over the simulated fabric (examples/na_demo) =="
"$build/examples/na_demo/na_demo"
if [ -x examples/run_demo.sh ]; then
  echo
  examples/run_demo.sh "$build"
fi
