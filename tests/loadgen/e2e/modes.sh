#!/usr/bin/env bash
# Closed loop, open-capped, stages with a sweep until saturation, a trace,
# non-streamed chat: each runs and says what it was.
source "$(dirname "$0")/lib.sh"
start_sim sim
common=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 8 --random-output-len 8 --quiet
        --no-progress --save-result --result-dir "$WORK")
"$LOADGEN" "${common[@]}" --max-concurrency 4 --num-prompts 200 --result-filename closed.json || fail "closed"
jq -e '.load_mode == "closed" and .completed == 200 and .max_concurrency == 4
       and .client_bias.arrival_test.test == "none"' "$WORK/closed.json" >/dev/null || fail "closed report"
"$LOADGEN" "${common[@]}" --max-concurrency 4 --request-rate 300 --num-prompts 150 --result-filename capped.json ||
  fail "capped"
jq -e '.load_mode == "open-capped" and .completed == 150' "$WORK/capped.json" >/dev/null || fail "capped report"
# a client cost of 2 ms per event saturates one worker near 60 requests/s
"$LOADGEN" "${common[@]}" --num-workers 1 --sweep geometric --sweep-stages 4 --sweep-max-rate 400 \
  --stage-duration 700ms --sweep-until-saturation --client-cost fixed:2000 --result-filename sweep.json ||
  fail "sweep"
jq -e '.saturated_stage != null and (.stages | length) >= 1 and (.stages | length) <= 4
       and (.stages[.saturated_stage].saturated == true)' "$WORK/sweep.json" >/dev/null ||
  fail "sweep report: $(jq -c '[.saturated_stage, [.stages[] | .achieved_rate]]' "$WORK/sweep.json")"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,4\n0.05,20,4\n0.1,5,4\n0.2,7,4\n' >"$WORK/trace.csv"
"$LOADGEN" "${common[@]}" --dataset-name trace --dataset-path "$WORK/trace.csv" --trace-speedup 2 \
  --result-filename trace.json || fail "trace"
jq -e '.completed == 4 and .total_input_tokens == 42' "$WORK/trace.json" >/dev/null ||
  fail "trace report: $(jq -c '[.completed, .total_input_tokens]' "$WORK/trace.json")"
"$LOADGEN" "${common[@]}" --endpoint /v1/chat/completions --no-stream --request-rate 200 --num-prompts 50 \
  --result-filename chat.json || fail "chat"
jq -e '.completed == 50 and .total_output_tokens == 400' "$WORK/chat.json" >/dev/null || fail "chat report"
# a config file (Inference Perf keys), with a flag overriding one of its values
jq -n --arg url "$SIM_URL" '{load: {type: "poisson", stages: [{rate: 100, duration: 1}], num_workers: 2},
  server: {base_url: $url, model_name: "sim-model"}, api: {type: "completion", streaming: true},
  data: {type: "random", input_distribution: {mean: 8}, output_distribution: {mean: 4}}}' >"$WORK/cfg.json"
"$LOADGEN" --config "$WORK/cfg.json" --num-workers 1 --quiet --no-progress --save-result --result-dir "$WORK" \
  --result-filename cfg.json || fail "config run"
jq -e '.num_workers == 1 and .completed > 50 and .completed < 200 and .total_output_tokens == .completed * 4' \
  "$WORK/cfg.json" >/dev/null || fail "config report: $(jq -c '[.num_workers, .completed, .total_output_tokens]' "$WORK/cfg.json")"
# --worker-cpus: every worker may run on the CPU given and no other (as the
# kernel reads its affinity back); without it, on every CPU loadgen may use
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
last=$(awk -v l="$allowed" 'BEGIN { n = split(l, p, /[,-]/); print p[n] }')
"$LOADGEN" "${common[@]}" --request-rate 200 --num-prompts 40 --worker-cpus "$last" \
  --result-filename bound.json || fail "--worker-cpus run"
jq -e --arg c "$last" '.worker_cpus == $c and (.client_bias.workers | length) == 2
       and ([.client_bias.workers[] | select(.cpus == $c)] | length) == 2' "$WORK/bound.json" >/dev/null ||
  fail "--worker-cpus $last: $(jq -c '[.worker_cpus, [.client_bias.workers[].cpus]]' "$WORK/bound.json")"
jq -e --arg a "$allowed" '.worker_cpus == null and ([.client_bias.workers[] | select(.cpus == $a)] | length) == 2' \
  "$WORK/chat.json" >/dev/null || fail "unbound workers: $(jq -c '[.worker_cpus, [.client_bias.workers[].cpus]]' "$WORK/chat.json")"
pass "modes"
