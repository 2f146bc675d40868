#!/usr/bin/env bash
# Closed-loop stages in turn (--closed-stage C:N, Inference Perf's
# `load.type: concurrent` with several {concurrency_level, num_requests}):
# from the per-request records, each stage sends exactly its N requests
# (its own block of indices, shared over the workers as index mod k), never
# more than its C in flight, and starts only after every request of the stage
# before has ended and the stage pause has passed, on every worker. The report
# and the Inference Perf stage files carry each stage's concurrency; the dry
# run's counts are the run's. The config form runs the same way.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 20ms --inter-token-latency 2ms
args=(--base-url "$SIM_URL" --num-workers 2 --closed-stage 4:21 --closed-stage 8:40
      --closed-stage 2:5 --stage-pause 100ms --random-input-len 8 --random-output-len 4
      --quiet --no-progress)
"$LOADGEN" "${args[@]}" --dry-run >"$WORK/plan.out" 2>"$WORK/plan.err" || fail "dry run: $(cat "$WORK/plan.err")"
grep -q "^load mode: closed$" "$WORK/plan.out" &&
  grep -q "^stage 1: closed loop, 40 requests, 8 in flight (worker 0: 20 requests, 4 in flight; worker 1: 20 requests, 4 in flight), indices 21 to 60$" "$WORK/plan.out" &&
  grep -q "^total: 66 requests, stages in turn (pauses of 100ms)" "$WORK/plan.out" ||
  fail "the plan: $(cat "$WORK/plan.out")"
"$LOADGEN" "${args[@]}" --save-detailed --report-format inference-perf --result-dir "$WORK" \
  --result-filename c.json 2>"$WORK/c.err" || fail "run: $(cat "$WORK/c.err")"
R="$WORK/c.json" J="$WORK/c.jsonl"
jq -e '.load_mode == "closed" and .completed == 66 and .failed == 0 and .max_concurrency == 8
  and ([.stages[] | .concurrency] == [4, 8, 2]) and ([.stages[] | .dispatched] == [21, 40, 5])' \
  "$R" >/dev/null || fail "report: $(jq -c '{load_mode, completed, st: [.stages[] | [.concurrency, .dispatched]]}' "$R")"
# per stage: its indices, its workers' shares, at most C in flight
jq -e -s --argjson conc '[4, 8, 2]' --argjson n '[21, 40, 5]' '
  def overlap: [.[] | [.dispatch_ns, 1], [.end_ns, -1]] | sort_by(.[0], .[1])
    | reduce .[] as $e ({c: 0, m: 0}; .c += $e[1] | .m = ([.m, .c] | max)) | .m;
  group_by(.stage) | length == 3 and all(.[]; . as $s | $s[0].stage as $i
    | ([$n[:$i][]] | add // 0) as $base
    | ($s | length) == $n[$i]
    and ([$s[].index] | sort) == [range($base; $base + $n[$i])]
    and all($s[]; (.index - $base) % 2 == .worker)
    and ($s | overlap) <= $conc[$i] and ($s | overlap) >= 1)' "$J" >/dev/null ||
  fail "stages from the records: $(jq -s -c 'group_by(.stage) | map({s: .[0].stage, n: length})' "$J")"
# in turn: stage s+1 starts after stage s's last end plus the pause
jq -e -s 'group_by(.stage) | map({first: (map(.dispatch_ns) | min), last: (map(.end_ns) | max)})
  | . as $g | all(range(1; length); $g[.].first >= $g[. - 1].last + 100000000)' "$J" >/dev/null ||
  fail "stages overlap: $(jq -s -c 'group_by(.stage) | map([(map(.dispatch_ns) | min), (map(.end_ns) | max)])' "$J")"
for s in 0 1 2; do
  want=$(jq ".stages[$s].concurrency" "$R")
  jq -e --argjson c "$want" '.load_summary.concurrency == $c and .successes.count == .load_summary.count' \
    "$WORK/c.inference-perf/stage_${s}_lifecycle_metrics.json" >/dev/null ||
    fail "stage $s file: $(jq -c .load_summary "$WORK/c.inference-perf/stage_${s}_lifecycle_metrics.json")"
done

# Inference Perf's form of the same, and a refusal
cat >"$WORK/multi.yml" <<EOF
load:
  type: concurrent
  interval: 0.05
  stages:
  - {concurrency_level: 1, num_requests: 3}
  - {concurrency_level: 3, num_requests: 9}
server: {model_name: sim-model, base_url: "$SIM_URL"}
data: {type: random, input_distribution: {mean: 8}, output_distribution: {mean: 4}}
EOF
"$LOADGEN" --config "$WORK/multi.yml" --quiet --no-progress --save-result --result-dir "$WORK" \
  --result-filename m.json 2>"$WORK/m.err" || fail "config: $(cat "$WORK/m.err")"
jq -e '.load_mode == "closed" and ([.stages[] | [.concurrency, .completed]] == [[1, 3], [3, 9]])' \
  "$WORK/m.json" >/dev/null || fail "config run: $(jq -c '[.stages[] | [.concurrency, .completed]]' "$WORK/m.json")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --closed-stage 2:5 --stage 10:1 2>"$WORK/mix.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--stage: cannot be combined with --closed-stage" "$WORK/mix.err" ||
  fail "mixed stages: exit $rc: $(cat "$WORK/mix.err")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --closed-stage 2:5 --max-concurrency 4 2>"$WORK/mc.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--closed-stage: sets its own concurrency per stage" "$WORK/mc.err" ||
  fail "with --max-concurrency: exit $rc: $(cat "$WORK/mc.err")"
pass "closed stages in turn: counts, indices, concurrency, order, config form"
