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
# Each record must also prove it is current: it names the commit it measured
# ("commit ABC1234") and what it measures (a line "- measures: PATH..."),
# and no commit after the one that last wrote the record (the record is
# committed with the code it measured, or after it; a record changed and
# not yet committed is taken as current) changed those paths, nor does an
# uncommitted change to them (Markdown files under them aside: a module's
# README describes the code, it does not run). A
# block whose record does
# not is followed, inside the block, by one line saying so ("> **Not
# current:** ..."), which this script writes and --check demands: the README
# never quotes a stale figure without saying it is stale. With --fresh a
# record that is not current fails outright, naming the commits.
#   scripts/records.sh [--check [--fresh]] [README | --all]
# --all: every file of the tree that quotes records (RECORD_FILES below, the
# list tests/style/records.sh checks), one after the other; any code change
# can make a record stale in any of them, so rewrite them all before a commit.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
RECORD_FILES=(README.md results/paper/asyncio_cost.md results/reliability.md
  results/loadgen/README.md results/scale-out.md)
check=0 fresh=0
readme="$here/README.md"
args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --fresh) fresh=1; shift ;;
    --all)
      rc=0
      for f in "${RECORD_FILES[@]}"; do
        rest=()
        for a in "${args[@]}"; do [ "$a" = --all ] || rest+=("$a"); done
        bash "$0" "${rest[@]}" "$here/$f" || rc=1
      done
      exit "$rc" ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "records: unknown option '$1'" >&2; exit 2 ;;
    *) readme=$1; shift ;;
  esac
done
[ -f "$readme" ] || { echo "records: no file '$readme'" >&2; exit 2; }
# is_fresh PATH: the record at PATH (under the repository) is current; else
# says why on stderr (with the commits) and sets STALE_WHY (stable: without
# them, so that the README's line changes only when the record does).
is_fresh() {
  local f="$here/$1" c m changed
  STALE_WHY=""
  c=$(grep -o -m1 -E 'commit:? [0-9a-f]{7,40}' "$f" | awk '{ print $NF }' || true)
  m=$(sed -n 's/^- measures: //p' "$f" | head -n 1)
  if [ -z "$c" ]; then
    STALE_WHY="it names no commit it measured"
  elif [ -z "$m" ]; then
    STALE_WHY="measured at $c, and it names nothing it measures (no line '- measures: PATH...')"
  elif ! git -C "$here" cat-file -e "$c^{commit}" 2>/dev/null; then
    STALE_WHY="its commit $c is not in this repository's history"
  else
    # since the commit that last wrote the record (a record committed with
    # the change it measured is current), or the one it names if none has
    local base
    # a record rewritten and not yet committed goes in with the change
    [ -z "$(git -C "$here" status --porcelain -- "$1")" ] || return 0
    base=$(git -C "$here" log -1 --format=%h -- "$1")
    [ -n "$base" ] || base=$c
    # shellcheck disable=SC2086 # the paths are words
    changed=$(git -C "$here" log --format=%h "$base..HEAD" -- $m ':(exclude)*.md' | head -n 5 | tr '\n' ' ')
    # what it measures changed and not yet committed is a change too: the
    # README is then right whether it is rewritten before or after the commit
    # shellcheck disable=SC2086 # the paths are words
    if [ -n "$(git -C "$here" status --porcelain --untracked-files=no -- $m ':(exclude)*.md')" ]; then
      changed="${changed}uncommitted "
    fi
    [ -z "$changed" ] && return 0
    STALE_WHY="measured at $c, and $m changed since"
    echo "records: $1 is stale: $STALE_WHY (${changed% })" >&2
    return 1
  fi
  echo "records: $1: $STALE_WHY" >&2
  return 1
}
tmp=$(mktemp "${readme}.XXXXXX")
trap 'rm -f "$tmp" "$tmp.why"' EXIT
status=0 blocks=0 inside=""
while IFS= read -r line || [ -n "$line" ]; do
  if [[ "$line" =~ ^'<!-- record: '(.+)' -->'$ ]]; then
    [ -z "$inside" ] || { echo "records: $readme: a record block opened inside '$inside'" >&2; exit 2; }
    inside=${BASH_REMATCH[1]}
    blocks=$((blocks + 1))
    printf '%s\n' "$line" >>"$tmp"
    if [ -f "$here/$inside" ]; then
      cat "$here/$inside" >>"$tmp"
      if ! is_fresh "$inside" 2>"$tmp.why"; then
        printf '\n> **Not current:** %s: %s. Re-run its command to refresh it.\n' "$inside" "$STALE_WHY" >>"$tmp"
        [ "$fresh" = 0 ] || { cat "$tmp.why" >&2; status=1; }
      fi
      rm -f "$tmp.why"
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
