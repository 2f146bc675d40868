#!/usr/bin/env bash
# Inference Perf's sweep example (tests/loadgen/fixtures/inference-perf/
# examples/vllm/config-sweep.yml), with only its base_url's port changed,
# runs under loadgen --config against a simserver of known capacity (4
# slots, a 100 ms TTFT, 5 ms per further token), its lengths shortened by
# flags: a probe of 300 requests in 5 s (60/s, over the capacity) with a
# 10 s timeout, then 3 stages of 2 s. The probe's report is written beside
# the sweep's; the sweep's report carries what the probe sampled and found:
# its saturation rate is the config's percentile of its burn-down rates
# (recomputed here), lies near the server's capacity, and places the
# stages as Inference Perf places them (linear: 1 request/s up to it); each
# stage is judged. A probe that cannot see two falls of the in-flight count
# ends with exit 1 and names the flags that would fix it.
source "$(dirname "$0")/lib.sh"
: "${RB_SOURCE_DIR:?RB_SOURCE_DIR must point at the source folder}"
FIX="$RB_SOURCE_DIR/tests/loadgen/fixtures/inference-perf/examples/vllm/config-sweep.yml"
start_sim sim --max-num-seqs 4 --time-to-first-token 100ms --inter-token-latency 5ms
port=${SIM_URL##*:}
cfg="$WORK/config-sweep.yml"
sed -e "s|http://0.0.0.0:8000|http://0.0.0.0:$port|" "$FIX" >"$cfg"
cmp -s <(sed "s|:$port|:8000|" "$cfg") "$FIX" || fail "the copy differs from the fixture beyond its port"
write_sharegpt "$WORK/sharegpt.json"
mkdir -p "$WORK/out"
rc=0
"$LOADGEN" --config "$cfg" --dataset-path "$WORK/sharegpt.json" --sweep-probe-requests 300 \
  --sweep-probe-timeout 10 --sweep-stages 3 --stage-duration 2 --stage-pause 0.2 --quiet --no-progress \
  --save-result --result-dir "$WORK/out" --result-filename sweep.json >"$WORK/run.out" 2>"$WORK/run.err" || rc=$?
[ "$rc" -eq 0 ] || fail "the sweep config: exit $rc: $(cat "$WORK/run.err")"
rep="$WORK/out/sweep.json" probe="$WORK/out/sweep-probe.json"
[ -f "$probe" ] || fail "no probe report at $probe: $(ls "$WORK/out")"

# The probe: one stage at 300 / 5 s, every request sent (constant load).
jq -e '(.stages | length) == 1 and .stages[0].request_rate == 60 and .stages[0].dispatched == 300' \
  "$probe" >/dev/null || fail "probe report: $(jq -c '[.stages[] | [.request_rate, .dispatched, .completed, .failed]]' "$probe")"
jq -e --arg p "$probe" '.sweep_probe.requests == 300 and .sweep_probe.rate_per_s == 60
  and .sweep_probe.timeout_s == 10 and .sweep_probe.send_window_s == 5 and .sweep_probe.saturation_percentile == 95
  and .sweep_probe.result_file == $p and .sweep_probe.spacing == "linear"
  and (.sweep_probe.burn_down_rates_per_s | length) >= 2 and .sweep_probe.samples > (.sweep_probe.burn_down_rates_per_s | length)' \
  "$rep" >/dev/null || fail "sweep_probe: $(jq -c .sweep_probe "$rep")"

# Its saturation rate is numpy's p95 of the burn-down rates (linear between
# the order statistics), and it places the stages at 1, (1 + s) / 2 and s,
# each rounded to 0.01 as Inference Perf rounds them.
jq -e '.sweep_probe as $p | ($p.burn_down_rates_per_s | sort) as $x | ($x | length) as $n
  | (($n - 1) * 0.95) as $h | ($h | floor) as $lo
  | (if $lo >= $n - 1 then $x[$n - 1] else $x[$lo] + ($h - $lo) * ($x[$lo + 1] - $x[$lo]) end) as $s
  | (($p.saturation_rate_per_s - $s) | fabs) < 1e-9 * $s
  and $p.stage_rates_per_s == [1, ((1 + $s) / 2 * 100 | round) / 100, ($s * 100 | round) / 100]' \
  "$rep" >/dev/null || fail "saturation rate or stages not Inference Perf's: $(jq -c .sweep_probe "$rep")"

# Near the server's capacity: 4 slots / (100 ms + 5 ms per further token).
# The burn-down can exceed it only by a sample's granularity; a slow host
# can only lower it (late timers), and not by half at this rate.
tokens=$(jq '.total_output_tokens / .completed' "$probe")
cap=$(awk -v t="$tokens" 'BEGIN { printf "%.4f", 4 / (0.100 + (t - 1) * 0.005) }')
jq -e --argjson c "$cap" '.sweep_probe.saturation_rate_per_s > 0.5 * $c and .sweep_probe.saturation_rate_per_s < 1.5 * $c' \
  "$rep" >/dev/null || fail "saturation rate $(jq .sweep_probe.saturation_rate_per_s "$rep") against a capacity of $cap/s"

# The sweep: the probe's stages, each run and judged (the knee's and the
# client's verdict per stage).
jq -e '[.stages[].request_rate] == .sweep_probe.stage_rates_per_s
  and all(.stages[]; (.saturated | type) == "boolean" and (.client_bias.verdict | type) == "string")' \
  "$rep" >/dev/null || fail "the sweep's stages: $(jq -c '[.stages[] | [.request_rate, .saturated, .client_bias.verdict]]' "$rep")"
grep -q 'saturation probe' "$WORK/run.err" && fail "--quiet, yet the probe printed: $(cat "$WORK/run.err")"

# Too few falls to place a sweep: a single request can fall once at most.
rc=0
"$LOADGEN" --base-url "$SIM_URL" --sweep-probe --sweep-probe-requests 1 --sweep-probe-timeout 2 \
  --stage-duration 1 --random-input-len 4 --random-output-len 2 --no-progress --quiet >/dev/null 2>"$WORK/few.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q -- '--sweep-probe-requests' "$WORK/few.err" && grep -q -- '--sweep-probe-timeout' "$WORK/few.err" ||
  fail "a probe with one request: exit $rc: $(cat "$WORK/few.err")"
pass "Inference Perf's sweep: probe at $(jq .sweep_probe.saturation_rate_per_s "$rep")/s (capacity $cap/s), stages $(jq -c .sweep_probe.stage_rates_per_s "$rep")"
