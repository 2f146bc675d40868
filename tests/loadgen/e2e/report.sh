#!/usr/bin/env bash
# The report reads at a glance: no identical Median and P50 rows; without
# streaming TPOT and ITL are n/a (null) and the simulator's truth is kept; a
# closed loop has no burstiness; the JSONL names a 429 as the report does
# (http_429) in <name>.jsonl; --quiet without --save-result says so; an unknown
# flag given last is unknown; the progress line has the stage, its rate, the
# completed count and an ETA.
source "$(dirname "$0")/lib.sh"
start_sim sim --inter-token-latency 1ms
URL1=$SIM_URL
common=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 8 --random-output-len 8 --no-progress)

"$LOADGEN" "${common[@]}" --request-rate 200 --num-prompts 40 >"$WORK/sum.txt" 2>"$WORK/sum.err" || fail "summary run"
[ "$(grep -c '^Median TTFT (ms):' "$WORK/sum.txt")" -eq 1 ] || fail "no Median TTFT row"
! grep -q '^P50 ' "$WORK/sum.txt" || fail "a P50 row repeats the Median row: $(grep '^P50 ' "$WORK/sum.txt")"
grep -q '^P99 TTFT (ms):' "$WORK/sum.txt" || fail "the P99 row is gone"

"$LOADGEN" "${common[@]}" --no-stream --request-rate 200 --num-prompts 40 --save-result --result-dir "$WORK" \
  --result-filename ns.json >"$WORK/ns.txt" 2>"$WORK/ns.err" || fail "--no-stream run: $(cat "$WORK/ns.err")"
grep -Eq '^Mean TPOT \(ms\): +n/a' "$WORK/ns.txt" || fail "--no-stream: TPOT is not n/a: $(grep 'TPOT' "$WORK/ns.txt")"
grep -Eq '^Median ITL \(ms\): +n/a' "$WORK/ns.txt" || fail "--no-stream: ITL is not n/a"
jq -e '.completed == 40 and .mean_tpot_ms == null and .median_itl_ms == null and .p99_tpot_dispatch_ms == null
       and .mean_ttft_ms > 0 and .ntpot_breakdown_ms.requests == 40 and .ntpot_breakdown_ms.decode > 0
       and (has("ttft_truth_ms") | not)' \
  "$WORK/ns.json" >/dev/null ||
  fail "--no-stream report: $(jq -c '{completed, mean_tpot_ms, median_itl_ms, ntpot_breakdown_ms}' "$WORK/ns.json")"
grep -q "NTPOT breakdown (simulator truth)" "$WORK/ns.txt" || fail "--no-stream: the simulator's truth is dropped"

"$LOADGEN" "${common[@]}" --max-concurrency 4 --num-prompts 40 --quiet --save-result --result-dir "$WORK" \
  --result-filename closed.json 2>/dev/null || fail "closed loop"
jq -e '.load_mode == "closed" and .burstiness == null' "$WORK/closed.json" >/dev/null ||
  fail "closed loop: burstiness $(jq .burstiness "$WORK/closed.json")"

start_sim sim429 --failure-injection-rate 100 --failure-types rate_limit
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --random-input-len 8 --random-output-len 4 --no-progress \
  --request-rate 200 --num-prompts 30 --quiet --save-detailed --result-dir "$WORK" --result-filename r429.json \
  2>"$WORK/r429.err" || true
[ -s "$WORK/r429.jsonl" ] || fail "the JSONL is not <name>.jsonl: $(ls "$WORK")"
[ ! -e "$WORK/r429.json.jsonl" ] || fail "r429.json.jsonl written"
n429=$(jnum "$WORK/r429.json" '.failures_by_class.http_429')
[ "$n429" -eq 30 ] || fail "report: http_429 = $n429 of 30"
[ "$(jq -r 'select(.class == "http_429") | .index' "$WORK/r429.jsonl" | wc -l)" -eq "$n429" ] ||
  fail "JSONL classes: $(jq -r .class "$WORK/r429.jsonl" | sort | uniq -c | tr '\n' ' ')"

"$LOADGEN" "${common[@]}" --request-rate 100 --num-prompts 5 --quiet >"$WORK/q.out" 2>"$WORK/q.err" || fail "quiet run"
grep -q -- "--quiet without --save-result" "$WORK/q.err" || fail "--quiet without --save-result says nothing"

rc=0; "$LOADGEN" --base-url "$SIM_URL" --num-prompts 5 --frobnicate >/dev/null 2>"$WORK/u.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown flag '--frobnicate'" "$WORK/u.err" || fail "unknown last flag: exit $rc, '$(cat "$WORK/u.err")'"

"$LOADGEN" --base-url "$URL1" --num-workers 2 --random-input-len 8 --random-output-len 4 --quiet \
  --save-result --result-dir "$WORK" --result-filename pr.json --progress --stage 20:1.2 --stage 40:1.2 \
  2>"$WORK/pr.err" || fail "progress run"
tr '\r' '\n' <"$WORK/pr.err" >"$WORK/pr.lines"
grep -Eq 'stage 1/2 20\.0/s .*completed [0-9]+ failed 0 .*ETA [0-9]+s' "$WORK/pr.lines" ||
  fail "progress line of stage 1: $(head -c 600 "$WORK/pr.lines")"
grep -Eq 'stage 2/2 40\.0/s \(achieved [0-9.]+/s\)' "$WORK/pr.lines" || fail "progress line of stage 2: $(tail -c 600 "$WORK/pr.lines")"
pass "report: the small things"
