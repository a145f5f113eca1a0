#!/usr/bin/env bash
# Lists which folder of lib/ includes which (an edge "a -> b" for each
# '#include "b/..."' in a file under lib/a/) and fails if the edges form a
# cycle. The layers are meant to stack: util, na, proc, core (the HG
# ground floor), bulk, hg, then the layers above.
# Given a build directory, it also draws the edges that calls make: "a ->
# b" when an object file of lib/a uses a function defined in lib/b (from
# nm), which shows a cycle that declarations hide from the includes.
#   scripts/check-layers.sh [BUILD_DIR]   print the edges, exit 1 on a cycle
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
status=0

# check NAME EDGES: print the edges and fail on a cycle.
check() {
  local name=$1 edges=$2 out
  echo "check-layers: $name between the folders of lib/ (from -> to):"
  echo "$edges" | sed 's/ / -> /; s/^/  /'
  # tsort reports a loop on stderr.
  out=$(echo "$edges" | tsort 2>&1 >/dev/null || true)
  if [ -n "$out" ]; then
    echo "check-layers: error: the $name form a cycle:"
    echo "$out" | sed 's/^/  /'
    status=1
  fi
}

edges=$(
  for dir in lib/*/; do
    from=$(basename "$dir")
    grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/' "$dir" \
      --include='*.c' --include='*.h' 2>/dev/null |
      sed -E 's/.*"([a-z_]+)\/$/\1/' |
      while read -r to; do
        if [ "$to" != "$from" ] && [ -d "lib/$to" ]; then
          echo "$from $to"
        fi
      done
  done | sort -u
)
check includes "$edges"

if [ -n "$build" ]; then
  objs=$build/CMakeFiles/quicksilver.dir/lib
  [ -d "$objs" ] || { echo "check-layers: error: no objects in $objs"; exit 1; }
  defs=$(mktemp) uses=$(mktemp)
  trap 'rm -f "$defs" "$uses"' EXIT
  for dir in "$objs"/*/; do
    layer=$(basename "$dir")
    for o in "$dir"*.o; do
      # Skip objects left behind by a source that moved away.
      src=$(basename "$o" .o)
      [ -e "$o" ] && [ -e "lib/$layer/$src" ] || continue
      nm --defined-only "$o" | awk -v l="$layer" '$2 ~ /^[TDBR]$/ {print $3, l}'
      nm --undefined-only "$o" | awk -v l="$layer" '{print $2, l}' >>"$uses"
    done
  done | sort -u >"$defs"
  edges=$(sort -u "$uses" | join -j 1 -o 1.2,2.2 - "$defs" |
    awk '$1 != $2' | sort -u)
  check calls "$edges"
fi
[ "$status" = 0 ] && echo "check-layers: no cycle"
exit "$status"
