#!/usr/bin/env bash
# The client-bias verdict on real runs: a low rate with nothing slowing the
# client is OK; a client slowed by a heavy known cost per received event
# (--client-cost) at a rate it cannot serve is BIASED, and says why; the
# ttft_truth_ms section separates the server's true TTFT from what the
# client added.
source "$(dirname "$0")/lib.sh"
start_sim sim
run() { # name extra...
  local name=$1; shift
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --random-input-len 16 --random-output-len 16 \
    --quiet --no-progress --save-result --result-dir "$WORK" --result-filename "$name.json" "$@" \
    || fail "loadgen ($name) exited $?"
  sent_equals_done "$WORK/$name.json"
}
# 40 req/s for 2 s: rho of a few percent, PK's wait well under a microsecond.
run low --request-rate 40 --duration 2s --seed 3
jq -e '.client_bias.verdict == "OK" and (.client_bias.reason | length > 0)
       and .client_bias.max_rho < 0.2' "$WORK/low.json" >/dev/null \
  || fail "low rate: $(jq -c '.client_bias | {verdict, reason, max_rho}' "$WORK/low.json")"
# 400 req/s for 1 s with 1 ms of busy work per event (about 18 events a request): the
# worker could serve about 55 requests/s, so the schedule falls behind.
run heavy --request-rate 400 --duration 1s --seed 3 --client-cost fixed:1000 --drain-timeout 2s \
  --request-timeout 10s
jq -e '.client_bias.verdict == "BIASED" and (.client_bias.reason | length > 0)' "$WORK/heavy.json" >/dev/null \
  || fail "heavy client cost: $(jq -c '.client_bias | {verdict, reason, max_rho}' "$WORK/heavy.json")"
# The truth section: the zero-latency server's true TTFT is far below what
# the slowed client measured, and inflation = measured - true.
jq -e '.ttft_truth_ms as $t | ($t.measured_mean - $t.server_mean - $t.inflation_mean | fabs) < 1e-6
       and $t.inflation_mean > 10 * $t.server_mean' "$WORK/heavy.json" >/dev/null \
  || fail "ttft_truth_ms: $(jq -c .ttft_truth_ms "$WORK/heavy.json")"
echo "verdict: low $(jq -r .client_bias.verdict "$WORK/low.json"), heavy $(jq -r '.client_bias.verdict + " (" + .client_bias.reason + ")"' "$WORK/heavy.json")"
