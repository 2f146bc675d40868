#!/usr/bin/env bash
# Multi-turn sessions (--prefix-multi-turn, Inference Perf's
# enable_multi_turn_chat) against simserver, from the per-request JSONL and
# simserver's prefix-cache counter. 6 users (2 groups x 3), all 60 arrivals
# at once (an infinite rate), so every round after a user's first must wait
# for the one before: each user has its 10 rounds, all on worker user mod k;
# round r+1 is dispatched after round r ended, its intended time is the
# schedule's (the same as a run without sessions), and its input is round
# r's input + output + the question's 3 words; the server found exactly the
# previous round's prompt blocks in its cache; the counts add up. Then the
# same growth without streaming and on the chat endpoint, a stop that
# leaves rounds waiting (counted as not dispatched), and the refusals.
source "$(dirname "$0")/lib.sh"
# one server worker: one prefix cache; 16-token blocks
start_sim sim --workers 1 --block-size 16 --time-to-first-token 5ms --inter-token-latency 1ms
base=(--base-url "$SIM_URL" --dataset-name shared-prefix --prefix-groups 2
      --prefix-prompts-per-group 3 --prefix-system-len 12 --prefix-question-len 3
      --random-output-len 10 --ignore-eos --seed 5 --quiet --no-progress --save-detailed
      --result-dir "$WORK")
common=("${base[@]}" --num-prompts 60)
metric() { curl -s "$SIM_URL/metrics" | sed -n "s/^vllm:$1{[^}]*} //p"; }
hits0=$(metric prefix_cache_hits_total)
# 4 workers for 6 users: by index, a user's rounds would change workers
"$LOADGEN" "${common[@]}" --prefix-multi-turn --num-workers 4 --result-filename mt.json \
  2>"$WORK/mt.err" || fail "loadgen exited $?: $(cat "$WORK/mt.err")"
hits1=$(metric prefix_cache_hits_total)
out="$WORK/mt.json" jl="$WORK/mt.jsonl"
sent_equals_done "$out"
jq -e '.dispatched == 60 and .completed == 60 and .failed == 0 and .not_dispatched == 0' "$out" \
  >/dev/null || fail "counts: $(jq -c '[.dispatched, .completed, .failed, .not_dispatched]' "$out")"
[ "$(jq -s 'map(.index) | unique | length' "$jl")" -eq 60 ] || fail "the JSONL is not the 60 arrivals once each"
jq -e '.multi_turn.users == 6 and .multi_turn.context_max_bytes == 1048576
       and (.multi_turn.schedule_lag | test("wait"))' "$out" >/dev/null ||
  fail "report's multi_turn: $(jq -c .multi_turn "$out")"
# per user (index mod 6, one stage), its rounds in order
per_user='map(. + {user: (.index % 6)}) | group_by(.user) | map(sort_by(.index))'
jq -e -s "$per_user"' | length == 6 and all(length == 10)' "$jl" >/dev/null || fail "not 6 users of 10 rounds"
jq -e -s "$per_user"' | all(.[0].worker as $w | .[0].user % 4 == $w and all(.worker == $w))' "$jl" \
  >/dev/null || fail "a user's rounds are not all on worker user mod 4"
bad=$(jq -s -c "$per_user"' | map([range(1; length) as $r | .[$r - 1] as $a | .[$r]
        | select(.dispatch_ns < $a.end_ns or .input_tokens != $a.input_tokens + $a.output_tokens + 3)
        | {index, dispatch_ns, prev_end: $a.end_ns, input_tokens, want: ($a.input_tokens + $a.output_tokens + 3)}])
      | add | .[:3]' "$jl")
[ "$bad" = "[]" ] || fail "rounds out of turn or without the conversation: $bad"
jq -e -s 'all(.output_tokens == 10) and (map(select(.index < 6)) | all(.input_tokens == 15))' "$jl" \
  >/dev/null || fail "round 0 is not the pool's prompt (12 + 3 words) or outputs are not 10"
# every round after the first waited, and the lag says so
waited=$(sed -n 's/.*multi-turn: \([0-9]*\) rounds waited.*/\1/p' "$WORK/mt.err" | awk '{ s += $1 } END { print s }')
[ "$waited" = 54 ] || fail "rounds that waited: '$waited', want 54: $(cat "$WORK/mt.err")"
jq -e '.multi_turn.rounds_waited == 54 and .multi_turn.contexts_capped == 0' "$out" >/dev/null ||
  fail "the report's multi_turn counts: $(jq -c .multi_turn "$out")"
max_wait=$(jq -s "$per_user"' | map(.[-1].dispatch_ns - .[-1].intended_ns) | min' "$jl")
in_range "$(jnum "$out" .max_schedule_lag_ms)" "$(awk -v n="$max_wait" 'BEGIN { print n / 1e6 }')" 1e9 \
  "max_schedule_lag_ms (it includes the session wait)"
# the server's cache held exactly each previous round's full 16-token blocks
# of prompt (round 0's 15 tokens fill none)
want=$(jq -s "$per_user"' | map([range(1; length) as $r | (.[$r - 1].input_tokens / 16 | floor) * 16] | add) | add' "$jl")
[ $((hits1 - hits0)) -eq "$want" ] || fail "prefix-cache hits $((hits1 - hits0)) tokens, want $want"
# the offered load is the schedule's: the same intended times as without sessions
"$LOADGEN" "${common[@]}" --num-workers 1 --result-filename plain.json 2>"$WORK/plain.err" ||
  fail "plain run exited $?"
same=$(jq -n --slurpfile a "$jl" --slurpfile b "$WORK/plain.jsonl" \
  '($a | map({(.index | tostring): .intended_ns}) | add) == ($b | map({(.index | tostring): .intended_ns}) | add)')
[ "$same" = true ] || fail "intended times differ from the run without sessions"
jq -e -s 'all(.input_tokens == 15)' "$WORK/plain.jsonl" >/dev/null || fail "without sessions the prompts grew"

# Without streaming, and on the chat endpoint: the same growth.
grow='map(. + {user: (.index % 6)}) | group_by(.user) | map(sort_by(.index))
      | all([range(1; length) as $r | .[$r - 1] as $a | .[$r]
             | .input_tokens == $a.input_tokens + $a.output_tokens + 3 and .dispatch_ns >= $a.end_ns] | all)'
for v in "--no-stream" "--endpoint /v1/chat/completions"; do
  name=$(echo "$v" | tr -dc 'a-z')
  # shellcheck disable=SC2086
  "$LOADGEN" "${common[@]}" --prefix-multi-turn --num-workers 1 $v --num-prompts 24 \
    --result-filename "$name.json" 2>"$WORK/$name.err" || fail "$v: exit $?: $(cat "$WORK/$name.err")"
  jq -e '.completed == 24 and .failed == 0' "$WORK/$name.json" >/dev/null || fail "$v: counts"
  jq -e -s "$grow" "$WORK/$name.jsonl" >/dev/null || fail "$v: the context does not grow as streamed"
done

# Two stages: each starts its conversations afresh (round 0 is the pool's
# prompt again), and grows them as before; a user stays on its worker.
"$LOADGEN" "${base[@]}" --prefix-multi-turn --num-workers 4 \
  --stage 200:0.3 --stage 200:0.3 --result-filename st.json 2>"$WORK/st.err" ||
  fail "two stages: exit $?: $(cat "$WORK/st.err")"
jq -e '.failed == 0 and .not_dispatched == 0 and (.stages | length) == 2 and all(.stages[]; .completed >= 30)' \
  "$WORK/st.json" >/dev/null || fail "two stages: $(jq -c '[.failed, .not_dispatched, [.stages[].completed]]' "$WORK/st.json")"
jq -e -s 'group_by(.stage) | all(
    (map(.index) | min) as $base | map(. + {user: ((.index - $base) % 6)}) | group_by(.user)
    | map(sort_by(.index)) | all((.[0].user % 4) as $w |
        .[0].input_tokens == 15 and all(.worker == $w)
        and ([range(1; length) as $r | .[$r - 1] as $a | .[$r]
              | .input_tokens == $a.input_tokens + $a.output_tokens + 3] | all)))' \
  "$WORK/st.jsonl" >/dev/null || fail "two stages: the conversations do not restart, or do not grow, per stage"

# A stop while rounds wait: they are counted as not dispatched, never lost.
start_sim slow --workers 1 --time-to-first-token 300ms --inter-token-latency 1ms
"$LOADGEN" --base-url "$SIM_URL" --dataset-name shared-prefix --prefix-groups 1 \
  --prefix-prompts-per-group 2 --prefix-system-len 4 --prefix-question-len 2 --random-output-len 2 \
  --prefix-multi-turn --num-workers 1 --num-prompts 40 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename stop.json 2>"$WORK/stop.err" &
lg=$!
CHILDREN+=("$lg")
for _ in $(seq 1 100); do # until the first rounds are in flight (bounded: 5 s)
  [ "$(metric num_requests_running)" = 2 ] && break
  sleep 0.05
done
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 130 ] || fail "stopped run: exit $rc: $(cat "$WORK/stop.err")"
jq -e '.dispatched == .completed + .failed and .dispatched + .not_dispatched == 40 and .not_dispatched > 0' \
  "$WORK/stop.json" >/dev/null ||
  fail "stopped run: $(jq -c '[.dispatched, .completed, .failed, .not_dispatched]' "$WORK/stop.json")"

# Refused: sessions need the shared-prefix pool and an arrival schedule.
for bad in "--dataset-name random --num-prompts 4" "--dataset-name shared-prefix --max-concurrency 2 --num-prompts 4"; do
  rc=0
  # shellcheck disable=SC2086
  "$LOADGEN" --base-url "$SIM_URL" --prefix-multi-turn $bad --quiet 2>"$WORK/bad.err" || rc=$?
  [ "$rc" -eq 2 ] && grep -q -- '--prefix-multi-turn' "$WORK/bad.err" ||
    fail "'$bad --prefix-multi-turn': exit $rc: $(cat "$WORK/bad.err")"
done
pass "multi-turn: 6 users x 10 rounds in turn, contexts grown by each answer, cache hits $want tokens"
