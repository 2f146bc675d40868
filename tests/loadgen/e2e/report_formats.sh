#!/usr/bin/env bash
# --report-format both: a two-stage run with --save-detailed, a fifth of its
# requests answered 429, converted into vLLM's result layout and Inference
# Perf's lifecycle files. Round trips:
# - the vLLM file read by jq with vLLM's own key names (those its plotting and
#   comparison scripts read: completed, request_throughput, mean/median/pNN of
#   ttft/tpot/itl/e2el in ms, the per-request arrays input_lens, output_lens,
#   ttfts, itls, errors), and checked against rhobench's result;
# - the Inference Perf files checked against the key paths its report writer
#   (inference_perf/reportgen/base.py, summarize_requests) produces, in
#   seconds, with exact counts.
# Then: without --save-detailed no arrays and no min/max; a bad format exits 2.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 20ms --inter-token-latency 2ms --seed 3 \
  --failure-injection-rate 20 --failure-types rate_limit
"$LOADGEN" --base-url "$SIM_URL" --random-input-len 16 --random-output-len 8 --seed 5 \
  --stage 20:1s --stage 40:1s --stage-pause 0 --metric-percentiles 50,90,99 \
  --save-detailed --report-format both --metadata run=e2e \
  --result-dir "$WORK" --result-filename r.json --quiet >"$WORK/lg.out" 2>"$WORK/lg.err" ||
  fail "loadgen: $(cat "$WORK/lg.err")"
R="$WORK/r.json" V="$WORK/r.vllm.json" D="$WORK/r.inference-perf"
grep -q "wrote $V (vLLM's result layout)" "$WORK/lg.err" || fail "no note of $V: $(cat "$WORK/lg.err")"
ls "$WORK" | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls "$WORK")"
n=$(jnum "$R" .dispatched); failed=$(jnum "$R" .failed)
[ "$n" -gt 20 ] || fail "dispatched $n over 2 s at 20 and 40 req/s"
[ "$failed" -gt 0 ] || fail "no 429 among 60 requests at 20%"

# vLLM: its key names, as a script of vLLM's users reads them
jq -e --slurpfile r "$R" --argjson n "$n" --argjson f "$failed" '
  . as $v | $r[0] as $rb |
  (.completed + .failed == $n) and .num_prompts == $n and .run == "e2e"
  and .backend == "openai" and (.date | test("^[0-9]{8}-[0-9]{6}$"))
  and .mean_ttft_ms == $rb.mean_ttft_ms and .p99_itl_ms == $rb.p99_itl_ms
  and .median_e2el_ms == $rb.median_e2el_ms and .std_tpot_ms == $rb.std_tpot_ms
  and (.request_throughput > 0) and (.output_throughput > 0) and (.total_token_throughput > 0)
  and (.input_lens | length) == $n and (.output_lens | length) == $n
  and (.ttfts | length) == $n and (.itls | length) == $n and (.errors | length) == $n
  and (.generated_texts | length) == $n and (.start_times | length) == $n
  and ([.errors[] | select(. != "")] | length) == $f
  and ([.errors[] | select(. == "http_429")] | length) == $f
  and (.output_lens | add) == .total_output_tokens
  and ([.input_lens as $i | .errors | to_entries[] | select(.value == "") | $i[.key]] | add)
      == .total_input_tokens
  and ([.ttfts as $t | .errors | to_entries[] | select(.value == "") | $t[.key] * 1000]
       | add / length - $v.mean_ttft_ms | fabs) < 0.01 * $v.mean_ttft_ms
  and ([.ttfts[] | select(. > 0)] | min) >= 0.020
  and (.start_times == (.start_times | sort))
  and .rhobench.client_bias.verdict != null and .rhobench.mean_ntpot_ms == $rb.mean_ntpot_ms
  and (has("client_bias") | not) and (has("mean_ntpot_ms") | not)' "$V" >/dev/null ||
  fail "vLLM report: $(jq -c '{completed, failed, num_prompts, mean_ttft_ms, n: (.ttfts|length)}' "$V")"

# Inference Perf: the key paths of its report writer, per file
common='["benchmark_time_seconds"], ["load_summary","count"],
  ["load_summary","schedule_delay","mean"], ["load_summary","schedule_delay","min"],
  ["load_summary","schedule_delay","max"], ["load_summary","schedule_delay","median"],
  ["successes","count"], ["successes","latency","request_latency","mean"],
  ["successes","latency","request_latency","min"], ["successes","latency","request_latency","p99"],
  ["successes","latency","normalized_time_per_output_token","median"],
  ["successes","latency","time_per_output_token","mean"],
  ["successes","latency","time_to_first_token","mean"],
  ["successes","latency","time_to_first_token","p90"],
  ["successes","latency","inter_token_latency","mean"],
  ["successes","throughput","input_tokens_per_sec"], ["successes","throughput","output_tokens_per_sec"],
  ["successes","throughput","total_tokens_per_sec"], ["successes","throughput","requests_per_sec"],
  ["successes","prompt_tokens","total"], ["successes","output_len","mean"],
  ["successes","output_tokens","total"], ["failures","count"], ["failures","request_latency","mean"],
  ["failures","by_label"], ["rhobench","client_bias"]'
stage='["load_summary","send_duration"], ["load_summary","requested_rate"], ["load_summary","achieved_rate"]'
check_paths() { # FILE JSON-ARRAY-OF-PATHS
  jq -e --argjson p "[$2]" '. as $d | all($p[]; . as $q | $d | getpath($q) != null)' "$1" >/dev/null ||
    fail "$1 lacks: $(jq -c --argjson p "[$2]" '. as $d | [$p[] | select(. as $q | $d | getpath($q) == null)]' "$1")"
}
[ -f "$D/summary_lifecycle_metrics.json" ] || fail "no summary_lifecycle_metrics.json: $(ls "$D")"
check_paths "$D/summary_lifecycle_metrics.json" "$common"
for s in 0 1; do check_paths "$D/stage_${s}_lifecycle_metrics.json" "$common, $stage"; done
[ ! -e "$D/stage_2_lifecycle_metrics.json" ] || fail "a third stage file for two stages"
jq -e --slurpfile r "$R" --slurpfile s0 "$D/stage_0_lifecycle_metrics.json" \
  --slurpfile s1 "$D/stage_1_lifecycle_metrics.json" --argjson f "$failed" '
  $r[0] as $rb |
  .successes.count == $rb.completed and .failures.count == $f
  and .load_summary.count == $rb.dispatched and .failures.by_label["429 - Rate Limit"].count == $f
  and $s0[0].successes.count + $s1[0].successes.count == .successes.count
  and $s0[0].load_summary.count == $rb.stages[0].dispatched
  and $s1[0].load_summary.count == $rb.stages[1].dispatched
  and $s1[0].successes.count == $rb.stages[1].completed
  and $s0[0].load_summary.requested_rate == 20 and $s1[0].load_summary.requested_rate == 40
  and (.successes.latency.time_to_first_token.mean * 1000 - $rb.mean_ttft_ms | fabs)
      < 0.01 * $rb.mean_ttft_ms
  and .successes.latency.time_to_first_token.min >= 0.020
  and .successes.latency.time_to_first_token.min <= .successes.latency.time_to_first_token.median
  and .successes.latency.time_to_first_token.median <= .successes.latency.time_to_first_token.max
  and (.successes.latency.inter_token_latency.mean * 1000 - $rb.mean_itl_ms | fabs) < 1e-9
  and .successes.output_tokens.total == $rb.total_output_tokens
  and .successes.output_len.mean == 8' "$D/summary_lifecycle_metrics.json" >/dev/null ||
  fail "Inference Perf summary: $(jq -c '{s: .successes.count, f: .failures, l: .load_summary.count}' \
    "$D/summary_lifecycle_metrics.json")"

# Without records: no arrays, min/max unknown (null), the rest the same
"$LOADGEN" --base-url "$SIM_URL" --random-input-len 16 --random-output-len 8 --num-prompts 10 \
  --request-rate 50 --report-format both --result-dir "$WORK" --result-filename s.json --quiet \
  2>"$WORK/s.err" || fail "loadgen without records: $(cat "$WORK/s.err")"
jq -e '(has("input_lens") | not) and (has("ttfts") | not) and .completed + .failed == 10' \
  "$WORK/s.vllm.json" >/dev/null || fail "vLLM report without records has arrays"
jq -e '.successes.latency.time_to_first_token.min == null
  and .successes.latency.time_to_first_token.mean > 0 and .load_summary.count == 10' \
  "$WORK/s.inference-perf/summary_lifecycle_metrics.json" >/dev/null ||
  fail "Inference Perf summary without records"

rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-prompts 1 --report-format csv 2>"$WORK/bad.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--report-format: must be rhobench, vllm, inference-perf or both" \
  "$WORK/bad.err" || fail "--report-format csv: exit $rc: $(cat "$WORK/bad.err")"
pass "report formats: vLLM and Inference Perf round trips"
