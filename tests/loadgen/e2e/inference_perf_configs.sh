#!/usr/bin/env bash
# Inference Perf's own example configs (tests/loadgen/fixtures/inference-perf,
# copied unmodified from its repository) run under loadgen --config. Each is
# copied into the test's folder with only two edits: its base_url's port
# becomes simserver's (the host stays 0.0.0.0, which must mean this host) and
# its durations become 2 s (intervals 0.2 s). Each run must send exactly the
# requests its stages ask for (constant load: rate x duration per stage), all
# answered, with the lengths the config names (the multi-turn one's prompts
# grown by its conversations). Before it, the unmodified file
# and the edited copy pass --dry-run, whose expected count is the run's. The sweep example's
# dry runs show its probe (2000 requests over 5 s) and the stages to come; its run, against a
# server of known capacity, is lg_e2e_inference_perf_sweep's (inference_perf_sweep.sh).
# Then a goodput constraint in Inference Perf's unit (seconds).
source "$(dirname "$0")/lib.sh"
: "${RB_SOURCE_DIR:?RB_SOURCE_DIR must point at the source folder}"
FIX="$RB_SOURCE_DIR/tests/loadgen/fixtures/inference-perf"
MODEL=HuggingFaceTB/SmolLM2-135M-Instruct
start_sim sim --model "$MODEL"
port=${SIM_URL##*:}
run="$WORK/run"
mkdir -p "$run" "$WORK/out"
write_sharegpt "$WORK/sharegpt.json"

n=0
while IFS= read -r rel; do
  mkdir -p "$run/$(dirname "$rel")"
  cfg="$run/$rel"
  sed -e "s|http://0.0.0.0:8000|http://0.0.0.0:$port|" -e 's/duration: [0-9][0-9]*/duration: 2/' \
      -e 's/interval: [0-9][0-9]*/interval: 0.2/' "$FIX/$rel" >"$cfg"
  name=$(echo "$rel" | tr / _)
  args=(--config "$cfg" --quiet --no-progress --save-result --result-dir "$WORK/out" --result-filename "$name.json")
  grep -q 'type: shareGPT' "$cfg" && args+=(--dataset-path "$WORK/sharegpt.json")
  if grep -q 'type: trace_replay' "$cfg"; then
    # its trace path (./traces/trace.csv) is relative to where it runs
    mkdir -p "$run/$(dirname "$rel")/traces"
    printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,4\n0.05,20,6\n0.1,5,4\n0.2,7,4\n' \
      >"$run/$(dirname "$rel")/traces/trace.csv"
  fi
  # The unmodified file passes --dry-run (its own host and port, its own
  # durations; nothing is sent); the edited copy's plan has the count below.
  dargs=(--dry-run)
  grep -q 'type: shareGPT' "$cfg" && dargs+=(--dataset-path "$WORK/sharegpt.json")
  for c in "$FIX/$rel" "$cfg"; do
    rc=0
    (cd "$run/$(dirname "$rel")" && "$LOADGEN" --config "$c" "${dargs[@]}") >"$WORK/$name.dry" \
      2>"$WORK/$name.dry.err" || rc=$?
    if grep -q 'saturation_percentile' "$cfg"; then
      [ "$rc" -eq 0 ] && grep -q '^total: expected 2000 requests' "$WORK/$name.dry" &&
        grep -q '^sweep probe: .* then 10 linear stages of ' "$WORK/$name.dry" ||
        fail "$c --dry-run: exit $rc: $(cat "$WORK/$name.dry.err" "$WORK/$name.dry")"
      continue
    fi
    [ "$rc" -eq 0 ] && grep -q '^dry run: the plan is valid; nothing was sent$' "$WORK/$name.dry" ||
      fail "$c --dry-run: exit $rc: $(cat "$WORK/$name.dry.err" "$WORK/$name.dry")"
  done
  dry_total=$(sed -n 's/^total: expected \([0-9]*\) requests.*/\1/p' "$WORK/$name.dry")
  if grep -q 'saturation_percentile' "$cfg"; then # run by inference_perf_sweep.sh
    n=$((n + 1))
    continue
  fi
  rc=0
  (cd "$run/$(dirname "$rel")" && "$LOADGEN" "${args[@]}") >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  [ "$rc" -eq 0 ] || fail "$rel: exit $rc: $(cat "$WORK/$name.err")"
  grep -q "0.0.0.0 means this host; connecting to http://127.0.0.1:$port" "$WORK/$name.err" ||
    fail "$rel: no note on 0.0.0.0: $(cat "$WORK/$name.err")"
  if grep -q '^tokenizer:' "$cfg"; then
    grep -q 'accepted without effect.*tokenizer' "$WORK/$name.err" || fail "$rel: tokenizer not named as ignored"
  fi
  rep="$WORK/out/$name.json"
  if grep -q 'type: trace_replay' "$cfg"; then
    want=4 # the trace's rows, not the stages
    jq -e '.total_input_tokens == 42 and .total_output_tokens == 18' "$rep" >/dev/null ||
      fail "$rel: lengths not the trace's: $(jq -c '[.total_input_tokens, .total_output_tokens]' "$rep")"
  else
    want=$(grep -o 'rate: [0-9.]*' "$cfg" | awk '{ s += $2 * 2 } END { print s }')
  fi
  [ "$dry_total" = "$want" ] || fail "$rel: the dry run expected '$dry_total' requests, the run wants $want"
  jq -e --argjson w "$want" '.completed == $w and .failed == 0' "$rep" >/dev/null ||
    fail "$rel: completed/failed $(jq -c '[.completed, .failed, .failures_by_class]' "$rep"), expected $want/0"
  # output lengths as the config names them (the server is told to ignore EOS)
  out_len=""
  grep -q 'output_len: 50' "$cfg" && out_len=50
  grep -q 'type: lognormal' "$cfg" && out_len=150 # the distribution's mean
  if grep -q 'output_distribution:' "$cfg"; then
    # drawn as Inference Perf draws them (its examples: mean 50, std_dev 10
    # in [10, 100]), and served as asked
    out_len=""
    jq -e '.lengths.output_differs == false and .lengths.output_tokens_served.p1 >= 10
      and .lengths.output_tokens_served.p99 <= 100 and .lengths.output_tokens_requested.p99 > .lengths.output_tokens_requested.p1' \
      "$rep" >/dev/null || fail "$rel: output lengths $(jq -c .lengths "$rep")"
  fi
  if [ -n "$out_len" ]; then
    jq -e --argjson l "$out_len" '.total_output_tokens == .completed * $l' "$rep" >/dev/null ||
      fail "$rel: output tokens $(jq .total_output_tokens "$rep") for $want requests of $out_len"
  fi
  if grep -q 'enable_multi_turn_chat: true' "$cfg"; then
    # its 20 users (2 x 10) have 2 rounds each in the 2 s at 20/s: round 0
    # sends the pool's 100 + 50 words, round 1 those, the 50-token answer
    # and the question's 50 words again (as single requests: 40 x 150)
    jq -e '.multi_turn.users == 20 and .total_input_tokens == 20 * 150 + 20 * (150 + 50 + 50)' \
      "$rep" >/dev/null || fail "$rel: multi-turn input tokens $(jq -c '[.total_input_tokens, .multi_turn]' "$rep")"
    mt=1
  fi
  n=$((n + 1))
done < <(cd "$FIX" && find . -name '*.yml' | sed 's|^\./||' | sort)
[ "${mt:-0}" = 1 ] || fail "no multi-turn fixture ran"
[ "$n" -ge 18 ] || fail "only $n fixtures found"

# A shareGPT config without a dataset names what it needs.
rc=0
"$LOADGEN" --config "$run/config.yml" --quiet --no-progress 2>"$WORK/nodata.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--dataset-path' "$WORK/nodata.err" ||
  fail "shareGPT without a dataset: exit $rc: $(cat "$WORK/nodata.err")"

# Goodput constraints are seconds: with a 20 ms TTFT, ttft 0.5 (s) holds for
# every request and ttft 0.01 (s) for none.
start_sim slow --model "$MODEL" --time-to-first-token 20ms
for c in 0.5 0.01; do
  cat >"$WORK/goodput-$c.yml" <<EOF
load: {type: constant, stages: [{rate: 20, duration: 1}]}
server: {model_name: $MODEL, base_url: "$SIM_URL"}
data: {type: random, input_distribution: {mean: 8}, output_distribution: {mean: 4}}
report: {goodput: {constraints: {ttft: $c}}}
EOF
  "$LOADGEN" --config "$WORK/goodput-$c.yml" --quiet --no-progress --save-result --result-dir "$WORK/out" \
    --result-filename "goodput-$c.json" 2>"$WORK/goodput.err" || fail "goodput $c: $(cat "$WORK/goodput.err")"
done
jq -e '.completed == 20 and .request_goodput == .request_throughput and .request_goodput > 0' \
  "$WORK/out/goodput-0.5.json" >/dev/null ||
  fail "ttft 0.5 s: $(jq -c '[.completed, .request_goodput, .request_throughput]' "$WORK/out/goodput-0.5.json")"
jq -e '.completed == 20 and .request_goodput == 0' "$WORK/out/goodput-0.01.json" >/dev/null ||
  fail "ttft 0.01 s: $(jq -c '[.completed, .request_goodput]' "$WORK/out/goodput-0.01.json")"
pass "inference perf configs ($n fixtures) and goodput in seconds"
