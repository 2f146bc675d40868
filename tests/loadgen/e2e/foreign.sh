#!/usr/bin/env bash
# Against a foreign server (nginx serving a fixed SSE stream: no simulator
# stamps, not ours), the kernel still times every token, the client's own
# delay per token is measured, and the counts add up. The timing figures are
# the host's and are not asserted; their presence and their accounting are.
source "$(dirname "$0")/lib.sh"
source "$RB_SOURCE_DIR/scripts/lib/nginx_sse.sh"
trap 'nginx_sse_stop; cleanup' EXIT
nginx_sse_start "$WORK/nginx" 16 || fail "nginx could not be started"
out="$WORK/nginx.json"
"$LOADGEN" --base-url "$NGINX_URL" --num-workers 2 --request-rate 200 --num-prompts 400 --seed 2 \
  --random-input-len 16 --random-output-len 16 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename nginx.json || fail "loadgen exited $?"
sent_equals_done "$out"
[ "$(jnum "$out" .completed)" -eq 400 ] || fail "completed $(jnum "$out" .completed) of 400"
[ "$(jnum "$out" .total_output_tokens)" -eq $((400 * 16)) ] || fail "output tokens"
jq -e '.sim_stamps == false and (.receive_clock | IN("wire", "kernel")) and .receive_clock_kernel_share == 1
       and (.client_bias.client_delay_us | .n == 400 * 16 and .mean >= 0 and .p99 >= .p50)
       and (.client_bias.pickup_delay_us.n == 400 * 16)
       and .client_bias.server_send_us == null and .client_bias.overhead_per_token_us == null
       and (.client_bias.receive | .kernel_tokens == 400 * 16 and .user_tokens == 0)' "$out" >/dev/null \
  || fail "report: $(jq -c '{sim_stamps, receive_clock, receive_clock_kernel_share, d: .client_bias.client_delay_us, r: .client_bias.receive}' "$out")"
echo "foreign: nginx, client delay $(jq -c .client_bias.client_delay_us "$out"), verdict $(jq -r .client_bias.verdict "$out")"
