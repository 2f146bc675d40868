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
# With --fresh (and --check), each record must also prove it is current: it
# names the commit it measured ("commit ABC1234") and what it measures (a
# line "- measures: PATH..."), and no commit since then changed those paths;
# a stale record fails, naming the commits that made it so.
#   scripts/records.sh [--check [--fresh]] [README]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=0 fresh=0
readme="$here/README.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --fresh) fresh=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "records: unknown option '$1'" >&2; exit 2 ;;
    *) readme=$1; shift ;;
  esac
done
[ -f "$readme" ] || { echo "records: no file '$readme'" >&2; exit 2; }
# is_fresh PATH: the record at PATH (under the repository) is current.
is_fresh() {
  local f="$here/$1" c m changed
  c=$(grep -o -m1 -E 'commit:? [0-9a-f]{7,40}' "$f" | awk '{ print $NF }' || true)
  m=$(sed -n 's/^- measures: //p' "$f" | head -n 1)
  [ -n "$c" ] || { echo "records: $1 names no commit it measured" >&2; return 1; }
  [ -n "$m" ] || { echo "records: $1 names nothing it measures (a line '- measures: PATH...')" >&2; return 1; }
  git -C "$here" cat-file -e "$c^{commit}" 2>/dev/null ||
    { echo "records: $1: its commit $c is not in this repository's history" >&2; return 1; }
  # shellcheck disable=SC2086 # the paths are words
  changed=$(git -C "$here" log --format=%h "$c..HEAD" -- $m | head -n 5 | tr '\n' ' ')
  [ -z "$changed" ] ||
    { echo "records: $1 is stale: measured at $c, and $m changed since (${changed% })" >&2; return 1; }
}
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
      [ "$fresh" = 0 ] || is_fresh "$inside" || status=1
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
