#!/usr/bin/env bash
# kill -9 the server mid-run: loadgen finishes, counts the errors, and writes
# a valid report.
source "$(dirname "$0")/lib.sh"
start_sim sim --inter-token-latency 5ms
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 6s \
  --random-input-len 8 --random-output-len 20 --request-timeout 3s --quiet --no-progress \
  --save-result --result-dir "$WORK" --result-filename dead.json &
lg=$!
CHILDREN+=("$lg")
wait_sim vllm:request_success_total 60 30 # mid-run: 60 requests done
kill -9 "$SIM_PID"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 0 ] || fail "exit code $rc"
out="$WORK/dead.json"
sent_equals_done "$out"
errs=$(jq '[.failures_by_class.connect, .failures_by_class.reset, .failures_by_class.midstream] | map(. // 0) | add' "$out")
[ "$(jnum "$out" .failures_by_class.connect)" -gt 50 ] || fail "connect errors: $(jq -c .failures_by_class "$out")"
[ "$(jnum "$out" .completed)" -gt 50 ] || fail "completed before the kill: $(jnum "$out" .completed)"
pass "dead server: $errs connection errors counted"
