#!/usr/bin/env bash
# --config and --dataset-path refuse what is not a regular file (a FIFO would
# hang, /dev/zero would be read until the bound) and a file larger than the
# bound by its size, before reading it: a 2 GB sparse file is refused at once
# with little memory.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
mkfifo "$WORK/fifo"
truncate -s 2G "$WORK/sparse.json"
try() { # WHAT MESSAGE FLAGS...
  local what=$1 msg=$2 rc=0; shift 2
  /usr/bin/time -f '%M' -o "$WORK/rss" timeout -s KILL 20 "$LOADGEN" --base-url http://127.0.0.1:9 \
    --num-prompts 5 --quiet --no-progress "$@" 2>"$WORK/err" || rc=$?
  [ "$rc" -ne 137 ] || fail "$what: hung (killed after 20 s)"
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2 ($(cat "$WORK/err"))"
  grep -q -- "$msg" "$WORK/err" || fail "$what: message $(cat "$WORK/err")"
  [ "$(tail -n 1 "$WORK/rss")" -lt 100000 ] || fail "$what: max RSS $(tail -n 1 "$WORK/rss") kB"
  return 0
}
try "--config FIFO" "not a regular file" --config "$WORK/fifo"
try "--config /dev/zero" "not a regular file" --config /dev/zero
try "--dataset-path FIFO" "not a regular file" --dataset-name sharegpt --dataset-path "$WORK/fifo"
try "--dataset-path /dev/zero" "not a regular file" --dataset-name sharegpt --dataset-path /dev/zero
try "--dataset-path trace FIFO" "not a regular file" --dataset-name trace --dataset-path "$WORK/fifo"
try "--dataset-path 2 GB sparse" "File too large" --dataset-name sharegpt --dataset-path "$WORK/sparse.json"
try "--config 2 GB sparse" "File too large" --config "$WORK/sparse.json"
pass "FIFO, /dev/zero and a 2 GB sparse file refused at once (exit 2) as --config and --dataset-path"
