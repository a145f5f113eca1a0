#!/usr/bin/env bash
# The exported surface of the shared library is the public API: the
# dynamic symbols libquicksilver.so defines must be exactly the functions
# declared (extern, not static inline) in the C headers under include/,
# which are the installed headers. The Thallium headers are header-only
# C++ and declare nothing the library defines.
#   check_exports.sh LIBRARY INCLUDE_DIR GCC
# GCC is a gcc driver: the declarations are listed by gcc -aux-info, so
# nothing here parses C by hand. Exit 77 (skip) when there is none.
set -euo pipefail
lib=$1 inc=$2 gcc=${3:-gcc}
command -v "$gcc" >/dev/null || {
  echo "exported_symbols: SKIPPED: no gcc to list the headers' declarations"
  exit 77
}
command -v nm >/dev/null || {
  echo "exported_symbols: SKIPPED: nm (binutils) is not installed"
  exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The functions the public headers declare, with where.
for h in "$inc"/*.h; do
  printf '#include "%s"\n' "$(basename "$h")"
done >"$work/all.c"
incdir=$(cd "$inc" && pwd -P)
"$gcc" -std=c11 -D_GNU_SOURCE -I"$incdir" -fsyntax-only \
  -aux-info "$work/aux.txt" "$work/all.c"
# Each line reads "/* FILE:LINE:NC */ extern TYPE NAME (ARGS);"; the name
# is the first identifier followed by " (".
awk -v inc="$incdir/" '
  match($0, /^\/\* [^ ]+:[0-9]+:[NO][CF] \*\/ extern /) {
    split(substr($0, 4), loc, " ")
    if (index(loc[1], inc) != 1) next
    decl = substr($0, RLENGTH + 1)
    if (!match(decl, /[A-Za-z_][A-Za-z0-9_]* \(/)) {
      print "unparsed " loc[1] ": " decl
      next
    }
    name = substr(decl, RSTART, RLENGTH - 2)
    where = substr(loc[1], length(inc) + 1)
    sub(/:[NO][CF]$/, "", where)
    print name, "include/" where
  }' "$work/aux.txt" | sort -u -k1,1 >"$work/declared.txt"
if grep -q '^unparsed ' "$work/declared.txt"; then
  echo "exported_symbols: cannot read the name of these declarations:"
  grep '^unparsed ' "$work/declared.txt"
  exit 1
fi
cut -d' ' -f1 "$work/declared.txt" >"$work/declared.names"

# 2. What the library exports, and what it defines but hides. Names
# starting with '_' are the toolchain's (_init, __gcov_*, sanitizers), as
# are those of the runtime archives a coverage build links in (libgcov's
# mangle_path).
: >"$work/toolchain.names"
for a in libgcov.a libgcc.a; do
  f=$("$gcc" -print-file-name="$a")
  if [ -f "$f" ]; then
    nm --defined-only "$f" 2>/dev/null | awk 'NF == 3 { print $3 }' >>"$work/toolchain.names"
  fi
done
sort -u -o "$work/toolchain.names" "$work/toolchain.names"
# A '_' name declared in include/ is API all the same (Margo's
# __margo_respond_with_error).
nm -D --defined-only "$lib" | awk 'NF == 3 { sub(/@.*/, "", $3); print $3 }' |
  sort -u | comm -23 - "$work/toolchain.names" |
  awk 'NR == FNR { decl[$1] = 1; next } $1 !~ /^_/ || ($1 in decl)' \
    "$work/declared.names" - >"$work/exported.names"
nm --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[tdbr]$/ { print $3 }' |
  sort -u >"$work/local.names"

# 3. Compare.
status=0
mapfile -t extra < <(comm -23 "$work/exported.names" "$work/declared.names")
mapfile -t missing < <(comm -13 "$work/exported.names" "$work/declared.names")
if [ "${#extra[@]}" -gt 0 ]; then
  status=1
  echo "exported_symbols: ${#extra[@]} symbol(s) exported by $(basename "$lib") but declared in no header under include/:"
  printf '  %s\n' "${extra[@]}"
  echo "  An internal name must stay hidden: remove QS_EXPORT (or any"
  echo "  visibility(\"default\") attribute or pragma) from its declaration, or"
  echo "  make it static. If it is public API, declare it in a header under"
  echo "  include/ with QS_EXPORT and list it in docs/."
fi
if [ "${#missing[@]}" -gt 0 ]; then
  status=1
  echo "exported_symbols: ${#missing[@]} function(s) declared in include/ but not exported by $(basename "$lib"):"
  for n in "${missing[@]}"; do
    where=$(awk -v n="$n" '$1 == n { print $2 }' "$work/declared.txt")
    if grep -qx "$n" "$work/local.names"; then
      echo "  $n ($where): defined but hidden; start its declaration with QS_EXPORT (include/qs_export.h)"
    else
      echo "  $n ($where): not defined in the library; implement it or remove the declaration"
    fi
  done
fi
if [ "$status" -eq 0 ]; then
  echo "exported_symbols: $(wc -l <"$work/exported.names") exported symbols," \
    "exactly the functions declared in include/*.h: OK"
fi
exit "$status"
