#!/usr/bin/env bash
# No function in the tree's C sources is longer than 120 lines (signature to
# closing brace), so that each reads on a screen or two. One that must stay
# longer would be listed below with its length as a ceiling: it may shrink,
# never grow, and one that shrinks under 120 must leave the list (the list
# is empty since lg_worker_run, the last, was split). First the checker is
# checked: a generated 121-line function must be found, a 120-line one must
# not.
set -euo pipefail
src=${RB_SOURCE_DIR:?}
awkf=$src/tests/style/fn_length.awk
max=120
declare -A ceiling=(
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() { # gen N: a function of N lines
  { echo "static int f(int a,"; echo "             int b)"; echo "{"
    for ((i = 0; i < $1 - 4; i++)); do echo "    a += b;"; done; echo "}"; } > "$tmp/gen.c"
  awk -f "$awkf" "$tmp/gen.c"
}
[ "$(gen 121)" = "$(printf '121\t%s:f' "$tmp/gen.c")" ] || { echo "fn_length: the checker misses a 121-line function"; exit 1; }
[ "$(gen 120 | cut -f1)" = 120 ] || { echo "fn_length: the checker miscounts a 120-line function"; exit 1; }
cd "$src"
if git rev-parse --git-dir >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' | grep -v '^tests/')
else
  mapfile -t files < <(find common models simserver loadgen calibrate -name '*.c')
fi
[ ${#files[@]} -gt 20 ] || { echo "fn_length: only ${#files[@]} C files found under $src"; exit 1; }
bad=0 seen=0
while IFS=$'\t' read -r n where; do
  seen=$((seen + 1))
  lim=${ceiling[$where]:-$max}
  if [ "$n" -gt "$lim" ]; then
    echo "too long: $where is $n lines (at most $lim)"
    bad=$((bad + 1))
  elif [ -n "${ceiling[$where]:-}" ] && [ "$n" -le "$max" ]; then
    echo "listed but short: $where is $n lines; take it off the list in $0"
    bad=$((bad + 1))
  fi
done < <(for f in "${files[@]}"; do awk -f "$awkf" "$f"; done)
for where in "${!ceiling[@]}"; do
  f=${where%%:*}
  awk -f "$awkf" "$f" 2>/dev/null | cut -f2 | grep -qx "$where" \
    || { echo "listed but gone: $where; take it off the list in $0"; bad=$((bad + 1)); }
done
echo "fn_length: $seen functions in ${#files[@]} files, $bad over their bound"
[ "$bad" -eq 0 ]
