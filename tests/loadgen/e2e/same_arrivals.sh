#!/usr/bin/env bash
# k=1 and k=2 offer the same arrivals: the intended times of the per-request
# records, sorted, are identical.
source "$(dirname "$0")/lib.sh"
start_sim sim
for k in 1 2; do
  "$LOADGEN" --base-url "$SIM_URL" --num-workers $k --request-rate 400 --num-prompts 300 --seed 11 \
    --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --save-detailed \
    --result-dir "$WORK" --result-filename "k$k.json" || fail "loadgen k=$k exited $?"
  [ "$(wc -l <"$WORK/k$k.jsonl")" -eq 300 ] || fail "k=$k: $(wc -l <"$WORK/k$k.jsonl") records, not 300"
  jq -r '.intended_ns' "$WORK/k$k.jsonl" | sort -n >"$WORK/t$k"
  jq -r '.index' "$WORK/k$k.jsonl" | sort -n | uniq | wc -l | grep -qx 300 || fail "k=$k: indices"
done
cmp -s "$WORK/t1" "$WORK/t2" || fail "the intended times differ between k=1 and k=2"
# worker i of 2 took arrivals i, i+2, ...
jq -e -s 'all(.[]; .index % 2 == .worker)' "$WORK/k2.jsonl" >/dev/null || fail "round-robin split"
pass "same arrivals for k=1 and k=2"
