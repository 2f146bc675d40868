#!/usr/bin/env bash
# Faults counted by class equal the simulator's own counters (/metrics);
# the requests that timed out are named in the summary.
source "$(dirname "$0")/lib.sh"
start_sim sim --failure-injection-rate 40 --inter-token-latency 1ms --seed 7
out="$WORK/faults.json"
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 200 --num-prompts 300 \
  --random-input-len 8 --random-output-len 8 --request-timeout 1s --no-progress \
  --save-result --result-dir "$WORK" --result-filename faults.json >"$WORK/faults.out" || fail "loadgen exited $?"
sent_equals_done "$out"
curl -sf "$SIM_URL/metrics" >"$WORK/metrics" || fail "metrics"
sim() { awk -v t="type=\"$1\"" 'index($0, "sim_injected_faults_total{") == 1 && index($0, t) { print $2 }' "$WORK/metrics"; }
ours() { jq -r ".failures_by_class.$1 // 0" "$out"; }
total=0
for pair in rate_limit:http_429 server_error:http_500 unavailable:http_503 \
            invalid_request:http_400 invalid_api_key:http_401 connection_reset:reset \
            midstream_drop:midstream malformed_chunk:malformed stall:timeout; do
  t=${pair%%:*}; c=${pair##*:}
  s=$(sim "$t"); s=${s:-0}; o=$(ours "$c")
  [ "$s" -eq "$o" ] || fail "$t: simulator injected $s, loadgen counted $c = $o"
  total=$((total + s))
done
[ "$total" -gt 50 ] || fail "only $total faults injected"
[ "$(jnum "$out" .failed)" -eq "$total" ] || fail "failed $(jnum "$out" .failed) != injected $total"
# The stalled requests' timeouts are named at the end, with the stage and
# the flag's value, not only counted.
to=$(jnum "$out" .failures_by_class.timeout)
[ "$to" -gt 0 ] || fail "no stall timed out: $(jq -c .failures_by_class "$out")"
grep -qxF "Timed out after --request-timeout 1 s: stage 0: $to of 300 (vLLM bench waits up to 6 h: raise it for long generations)" \
  "$WORK/faults.out" || fail "the summary does not name the $to timeouts: $(grep -i 'timed out' "$WORK/faults.out")"
pass "faults ($total, by class; $to timeouts named)"
