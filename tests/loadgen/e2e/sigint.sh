#!/usr/bin/env bash
# SIGINT mid-run: a partial report with interrupted: true, and exit 130.
source "$(dirname "$0")/lib.sh"
start_sim sim --inter-token-latency 2ms
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 20s \
  --random-input-len 8 --random-output-len 8 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename int.json &
lg=$!
CHILDREN+=("$lg")
sleep 1
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 130 ] || fail "exit code $rc, expected 130"
out="$WORK/int.json"
[ "$(jq -r .interrupted "$out")" = true ] || fail "interrupted is not true"
sent_equals_done "$out"
d=$(jnum "$out" .dispatched)
[ "$d" -gt 20 ] && [ "$d" -lt 1000 ] || fail "dispatched $d: the run did not stop early"
pass "SIGINT -> partial report, exit 130"
