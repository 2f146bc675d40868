#!/usr/bin/env bash
# vLLM's --num-warmups: copies of the first request sent and awaited before
# the run, never measured.
#  - simserver served the warm-ups and the run: its success counter grows by
#    both, the report counts only the run's requests, and its warmup block
#    says how many warm-ups completed;
#  - at most --max-concurrency at a time: 6 warm-ups of 70 ms each (TTFT
#    20 ms and 10 tokens 5 ms apart, the server's pacing) two at a time take
#    at least 3 x 70 ms, a bound a slow host can only widen;
#  - a warm-up the server refuses is counted as failed and named;
#  - --num-warmups with a trace exits 2.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 20ms --inter-token-latency 5ms
ok_total() { curl -sS --max-time 5 "$SIM_URL/metrics" | awk '/^vllm:request_success_total/ { t += $2 } END { print t + 0 }'; }
before=$(ok_total)
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --num-warmups 6 --max-concurrency 2 --request-rate 50 \
  --num-prompts 20 --random-input-len 8 --random-output-len 10 --seed 2 --no-progress --quiet \
  --save-result --result-dir "$WORK" --result-filename w.json 2>"$WORK/w.err" ||
  fail "warm-up run: exit $?: $(cat "$WORK/w.err")"
after=$(ok_total)
[ $((after - before)) -eq 26 ] || fail "simserver served $((after - before)) requests, expected 6 warm-ups + 20"
jq -e '.completed == 20 and .num_warmups == 6 and .warmup.completed == 6 and .warmup.failed == 0
       and .warmup.stopped == false and .warmup.seconds >= 0.21' "$WORK/w.json" >/dev/null ||
  fail "warm-up report: $(jq -c '{completed, num_warmups, warmup}' "$WORK/w.json")"
echo "6 warm-ups two at a time: $(jq .warmup.seconds "$WORK/w.json") s (at least 0.21 by the server's pacing)"

# a server that refuses: the warm-ups are failures, named; the run goes on
start_sim bad --failure-injection-rate 100 --failure-types rate_limit
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --num-warmups 3 --num-prompts 2 --request-rate 20 \
  --no-progress --quiet --save-result --result-dir "$WORK" --result-filename bad.json 2>"$WORK/bad.err" || true
jq -e '.warmup.completed == 0 and .warmup.failed == 3 and (.warmup.first_error | test("HTTP 429"))' \
  "$WORK/bad.json" >/dev/null || fail "refused warm-ups: $(jq -c .warmup "$WORK/bad.json")"

printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,5\n' >"$WORK/t.csv"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --dataset-name trace --dataset-path "$WORK/t.csv" --num-warmups 2 \
  --dry-run >"$WORK/t.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--num-warmups" "$WORK/t.out" || fail "warm-ups with a trace: exit $rc: $(cat "$WORK/t.out")"
pass "--num-warmups: sent first, capped, counted apart"
