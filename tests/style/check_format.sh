#!/usr/bin/env bash
# The tree follows its .clang-format: every tracked C file, as clang-format
# 14 (Debian 12's) formats it. Prints each file that deviates and fails.
set -euo pipefail
src=${RB_SOURCE_DIR:?}
cd "$src"
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (scripts/setup.sh installs it)"; exit 1; }
if git rev-parse --git-dir >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h')
else
  mapfile -t files < <(find . -name '*.c' -o -name '*.h' | grep -v '^./build')
fi
[ ${#files[@]} -gt 0 ] || { echo "check_format: no C files found under $src"; exit 1; }
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
echo "check_format: ${#files[@]} files, $bad not formatted"
[ "$bad" -eq 0 ]
