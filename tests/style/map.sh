#!/usr/bin/env bash
# The README's and docs/DESIGN.md's answers to "where is this decided" name
# functions in files ("`name` in `path`"): each named function must be
# defined in the file named (a definition: the name and its parameter list
# at the start of a line, after its return type). A renamed or moved
# function fails here until the docs follow. Also checks the checker: a
# name that is not defined is caught.
set -euo pipefail
src=${RB_SOURCE_DIR:?}
cd "$src"
# defined NAME PATH: PATH defines the function NAME.
defined() {
  [ -f "$2" ] || return 1
  grep -Eq "^([A-Za-z_][A-Za-z0-9_ \*]*[ \*])?$1\(" "$2"
}
# pairs FILE: "name path" for every "`name` in `path.c`" of FILE.
pairs() {
  grep -oE '`[A-Za-z_][A-Za-z0-9_]*` in `[A-Za-z0-9_/.-]+\.c`' "$1" | sed -E 's/^`([^`]*)` in `([^`]*)`$/\1 \2/'
}
bad=0 n=0
for doc in README.md docs/DESIGN.md; do
  while read -r name path; do
    n=$((n + 1))
    defined "$name" "$path" || { echo "FAIL: $doc names \`$name\` in \`$path\`, which does not define it"; bad=$((bad + 1)); }
  done < <(pairs "$doc")
done
[ "$n" -ge 10 ] || { echo "FAIL: only $n function names found in the docs' maps"; exit 1; }
! defined no_such_function_anywhere loadgen/lg_worker.c || { echo "FAIL: the checker accepts an undefined name"; exit 1; }
defined on_rx_read loadgen/lg_worker.c || { echo "FAIL: the checker misses a static definition"; exit 1; }
echo "map: $n named functions checked, $bad not defined where the docs say"
[ "$bad" -eq 0 ]
