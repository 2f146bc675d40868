#!/usr/bin/env bash
# A worker killed mid-run is reported (which worker, which signal) and the
# other worker's results are kept.
source "$(dirname "$0")/lib.sh"
start_sim sim --inter-token-latency 1ms
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 2s \
  --random-input-len 8 --random-output-len 8 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename crash.json 2>"$WORK/err" &
lg=$!
CHILDREN+=("$lg")
wait_sim vllm:request_success_total 40 30 # mid-run: 40 requests done
victim=$(pgrep -P "$lg" | head -n 1)
[ -n "$victim" ] || fail "no worker process found"
kill -9 "$victim"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 1 ] || fail "exit code $rc, expected 1 (a worker was lost)"
out="$WORK/crash.json"
jq -e '.lost_workers | test("killed by signal 9")' "$out" >/dev/null || fail "lost_workers: $(jq .lost_workers "$out")"
jq -e '[.client_bias.workers[] | select(.lost == true)] | length == 1' "$out" >/dev/null || fail "one worker lost"
grep -q "killed by signal 9" "$WORK/err" || fail "stderr does not report the crash"
sent_equals_done "$out"
c=$(jnum "$out" .completed)
# the survivor sent half of 2 s at 100/s
[ "$c" -gt 60 ] && [ "$c" -lt 140 ] || fail "completed $c: the survivor's results are not what was kept"
pass "worker crash reported, survivor kept ($c requests)"
