#!/usr/bin/env bash
# Checks that the C and C++ sources are formatted with the checked-in
# .clang-format; prints the files that are not and exits 1.
#   scripts/check-format.sh         check
#   scripts/check-format.sh --fix   reformat in place
# examples/margo_sum is left as written: it reproduces the seed tutorial
# line for line, which a test checks.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || {
  echo "check-format: clang-format is not installed (apt-get install clang-format)"
  exit 1
}
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' |
  grep -v -e '^examples/margo_sum/' -e '/corpus/')
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) differ from .clang-format (run scripts/check-format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
