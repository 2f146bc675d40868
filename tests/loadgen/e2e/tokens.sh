#!/usr/bin/env bash
# Workloads in tokens (issue: lengths in the server's tokens, not words).
# Token-id prompts: --token-ids sends "prompt": [ids] on /v1/completions, so
# --random-input-len 1000 --random-output-len 100 is exactly 1,000 prompt
# and 100 completion tokens per request, by simserver's usage (each request's
# record in the JSONL) and by its vllm:request_prompt_tokens histogram (every
# request in every bucket from le=1000 up and none below it; sum = 1,000 x
# count). --vocab-size 0 and --token-ids on chat are refused with exit 2.
source "$(dirname "$0")/lib.sh"
start_sim sim
n=24
for mode in stream no-stream; do
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --token-ids --random-input-len 1000 \
    --random-output-len 100 --ignore-eos --request-rate 50 --num-prompts $n --seed 7 --"$mode" \
    --no-progress --quiet --save-detailed --result-dir "$WORK" --result-filename "ids-$mode.json" \
    >"$WORK/ids-$mode.out" 2>"$WORK/ids-$mode.err" || fail "token ids ($mode): exit $?: $(cat "$WORK/ids-$mode.err")"
  j="$WORK/ids-$mode.jsonl"
  [ "$(jq -s 'length' "$j")" -eq $n ] || fail "token ids ($mode): $(jq -s length "$j") records, expected $n"
  jq -s -e 'all(.[]; .input_tokens == 1000 and .output_tokens == 100 and .status == 200)' "$j" >/dev/null ||
    fail "token ids ($mode): records not all 1000/100: $(jq -s -c '[.[] | [.input_tokens, .output_tokens, .status]] | unique' "$j")"
done
metric() { curl -s "$SIM_URL/metrics" | awk -v k="$1" 'index($0, k) == 1 && !done { print $NF; done = 1 }'; }
count=$(metric 'vllm:request_prompt_tokens_count{')
[ "$count" = $((2 * n)) ] || fail "request_prompt_tokens_count = $count, expected $((2 * n))"
[ "$(metric 'vllm:request_prompt_tokens_sum{')" = $((2000 * n)) ] ||
  fail "request_prompt_tokens_sum = $(metric 'vllm:request_prompt_tokens_sum{'), expected $((2000 * n))"
# Every bucket below 1000 holds none, every bucket from 1000 up holds all.
curl -s "$SIM_URL/metrics" | grep '^vllm:request_prompt_tokens_bucket{' >"$WORK/buckets"
[ -s "$WORK/buckets" ] || fail "no request_prompt_tokens buckets"
awk -v all=$((2 * n)) '{ match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5);
  v = $NF; lim = (le == "+Inf") ? 1e18 : le + 0;
  if (lim < 1000 && v != 0) bad = bad " " le "=" v; if (lim >= 1000 && v != all) bad = bad " " le "=" v }
  END { if (bad != "") { print bad; exit 1 } }' "$WORK/buckets" || fail "prompt-token buckets: $(cat "$WORK/buckets")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --token-ids --vocab-size 0 --num-prompts 1 --dry-run >"$WORK/v0.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--vocab-size 0: exit $rc, expected 2"
grep -q -- "--vocab-size.*0" "$WORK/v0.out" || fail "--vocab-size 0: message $(cat "$WORK/v0.out")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --token-ids --endpoint /v1/chat/completions --num-prompts 1 --dry-run >"$WORK/chat.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--token-ids on chat: exit $rc, expected 2"
grep -q -- "--token-ids" "$WORK/chat.out" || fail "--token-ids on chat: message $(cat "$WORK/chat.out")"
pass "tokens: token-id prompts are exact by usage and by the histogram"
