#!/usr/bin/env bash
# Odd replies land in a failure class, and the classes sum to failed:
# statuses 600 and 999 (curl takes any three digits) as http_600/http_999;
# a 200 whose Content-Type is text/html (a proxy's or a portal's page) as
# malformed, not completed, even when its body looks like a stream; a valid
# non-streamed body past the 1 MiB limit as body_too_large.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
start_rel_server odd
N=6
run() { # NAME PATH [flags...]
  local name=$1 path=$2; shift 2
  "$LOADGEN" --base-url "$REL_URL/$path" --num-workers 0 --request-rate 100 --num-prompts $N \
    --random-input-len 8 --random-output-len 4 --request-timeout 5s --quiet --no-progress \
    --save-result --result-dir "$WORK" --result-filename "$name.json" "$@" 2>"$WORK/$name.err" ||
    { cat "$WORK/$name.err" >&2; fail "$name: loadgen exited $?"; }
  sent_equals_done "$WORK/$name.json"
  jq -e '([.failures_by_class[]] | add // 0) == .failed' "$WORK/$name.json" >/dev/null ||
    fail "$name: failures_by_class $(jq -c .failures_by_class "$WORK/$name.json") do not sum to failed $(jq .failed "$WORK/$name.json")"
}
want() { # NAME KEY
  local got
  got=$(jq -r --arg k "$2" '.failures_by_class[$k] // 0' "$WORK/$1.json")
  [ "$got" -eq $N ] || fail "$1: expected $N x $2, got $(jq -c '{completed, failures_by_class}' "$WORK/$1.json")"
}
run s600 status/600; want s600 http_600
run s999 status/999; want s999 http_999
run html html; want html malformed
run big big --no-stream; want big body_too_large
pass "statuses 600/999, a text/html 200 and a 1.1 MB body: each in its class, classes sum to failed"
