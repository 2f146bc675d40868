#!/usr/bin/env bash
# Wire-time measurement under a busy client. simserver paces tokens 10 ms
# apart after a 20 ms TTFT; one loadgen worker is slowed by a known busy cost
# per received event (--client-cost exp:300 at 60 requests/s, about 0.35 of
# its loop, up to 0.5 on a shared host), so its tokens wait in the loop
# before they are delivered, but rarely long enough for two tokens of one
# stream to wait together (which would leave only a bound on the older). Then:
#  - the kernel timed the tokens (every read is stamped);
#  - the wire-timed median ITL and median TTFT (from dispatch) are the
#    server's: the client's queueing does not enter them;
#  - the user-timed figures (what a client stamping on delivery reports) are
#    inflated: p99 ITL by at least 1 ms over the server's 10 ms;
#  - the client's measured delay per token carries the cost: it is above
#    the same run's without the cost by more than a sixth of the cost's mean
#    (M/M/1's W_q at rho 0.2 is 0.25 of it; paced tokens queue a little less
#    than Poisson arrivals). PK's W_q from the run's own moments is printed
#    beside it; checking PK's fit is calibrate --self-test's job.
# The lower bounds are properties of the server (it is never early); the
# upper bounds are the 0.3 ms / 1 ms the kernel's stamps must hold to.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 20ms --inter-token-latency 10ms
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 60 --duration 4s --seed 11 \
  --random-input-len 16 --random-output-len 16 --quiet --no-progress \
  --save-result --result-dir "$WORK" --result-filename idle.json || fail "loadgen (no cost) exited $?"
out="$WORK/busy.json"
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 60 --duration 4s --seed 11 \
  --random-input-len 16 --random-output-len 16 --client-cost exp:300 --quiet --no-progress \
  --save-result --result-dir "$WORK" --result-filename busy.json || fail "loadgen exited $?"
sent_equals_done "$out"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "failed requests: $(jq -c .failures_by_class "$out")"
summary=$(jq -c '{rho: .client_bias.max_rho, wq: .client_bias.predicted_wq_us,
  delay: .client_bias.client_delay_us.mean, exact: .receive_clock_exact_share,
  itl: .median_itl_ms, ttft_d: .median_ttft_dispatch_ms, user_p99_itl: .user_timed.p99_itl_ms}' "$out")
echo "busy client: $summary"
tokens=$(jnum "$out" .total_output_tokens)
jq -e --argjson n "$tokens" '.client_bias.receive | .kernel_tokens + .user_tokens == $n' "$out" >/dev/null \
  || fail "tokens not all accounted: $(jq -c .client_bias.receive "$out")"
jq -e '.receive_clock_kernel_share >= 0.99' "$out" >/dev/null \
  || fail "kernel-timed share $(jq .receive_clock_kernel_share "$out") < 0.99"
rho=$(jnum "$out" .client_bias.max_rho)
in_range "$rho" 0.2 0.8 "the slowed worker's rho (the test's premise)"
in_range "$(jnum "$out" .median_itl_ms)" 9.95 10.3 "wire-timed median ITL"
in_range "$(jnum "$out" .median_ttft_dispatch_ms)" 19.95 21 "wire-timed median TTFT from dispatch"
awk -v u="$(jnum "$out" .user_timed.p99_itl_ms)" 'BEGIN { exit !(u >= 11.0) }' \
  || fail "user-timed p99 ITL $(jq .user_timed.p99_itl_ms "$out") ms is not inflated by 1 ms over 10 ms"
delay=$(jnum "$out" .client_bias.client_delay_us.mean)
idle=$(jnum "$WORK/idle.json" .client_bias.client_delay_us.mean)
echo "client delay mean: $idle us without the cost, $delay us with it (PK W_q $(jnum "$out" .client_bias.predicted_wq_us) us)"
awk -v d="$delay" -v i="$idle" 'BEGIN { exit !(d >= i + 300 / 6) }' \
  || fail "client delay mean $delay us does not carry the cost (without it: $idle us)"
# The client's delay over its budget is never silently passed: the verdict
# is lowered, or it says the user-timed figures would have been biased. (Which
# cause it names is the host's business; the rules are unit-tested.)
jq -e '(.client_bias.client_delay_us | .mean > 100 or .p99 > 2000) as $over
       | ($over | not) or .client_bias.verdict != "OK" or .client_bias.user_timed_biased' "$out" >/dev/null \
  || fail "client delay over budget passed silently: $(jq -c '.client_bias | {verdict, reason, user_timed_biased}' "$out")"
echo "wire_time: ok"
