#!/usr/bin/env bash
# The README's tables are copies of committed records, never typed in. A
# block in README.md between
#   <!-- record: PATH -->
#   <!-- /record -->
# is the content of PATH (a file under results/, written by the script that
# measured it, with its command and machine facts). This script rewrites
# every such block from its file; with --check it changes nothing and fails
# (exit 1), naming the block, when the README differs from a record or a
# record is missing.
#   scripts/records.sh [--check] [README]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=0
readme="$here/README.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "records: unknown option '$1'" >&2; exit 2 ;;
    *) readme=$1; shift ;;
  esac
done
[ -f "$readme" ] || { echo "records: no file '$readme'" >&2; exit 2; }
tmp=$(mktemp "${readme}.XXXXXX")
trap 'rm -f "$tmp"' EXIT
status=0 blocks=0 inside=""
while IFS= read -r line || [ -n "$line" ]; do
  if [[ "$line" =~ ^'<!-- record: '(.+)' -->'$ ]]; then
    [ -z "$inside" ] || { echo "records: $readme: a record block opened inside '$inside'" >&2; exit 2; }
    inside=${BASH_REMATCH[1]}
    blocks=$((blocks + 1))
    printf '%s\n' "$line" >>"$tmp"
    if [ -f "$here/$inside" ]; then
      cat "$here/$inside" >>"$tmp"
    else
      echo "records: $readme cites $inside, which is not committed" >&2
      status=1
    fi
    continue
  fi
  if [ "$line" = "<!-- /record -->" ]; then
    [ -n "$inside" ] || { echo "records: $readme: a record block closed that was never opened" >&2; exit 2; }
    inside=""
    printf '%s\n' "$line" >>"$tmp"
    continue
  fi
  [ -n "$inside" ] || printf '%s\n' "$line" >>"$tmp"
done <"$readme"
[ -z "$inside" ] || { echo "records: $readme: the block of '$inside' is never closed" >&2; exit 2; }
if [ "$check" = 1 ]; then
  if ! cmp -s "$tmp" "$readme"; then
    diff -u "$readme" "$tmp" | head -n 40 >&2 || true
    echo "records: $readme differs from its records (scripts/records.sh rewrites it)" >&2
    status=1
  fi
  echo "records: $blocks record blocks checked in $(basename "$readme")"
  exit "$status"
fi
[ "$status" = 0 ] || exit "$status"
chmod --reference="$readme" "$tmp" 2>/dev/null || true
mv "$tmp" "$readme"
trap - EXIT
echo "records: $blocks record blocks rewritten in $(basename "$readme")"
