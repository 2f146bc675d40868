#!/usr/bin/env bash
# --batch-tick under the wire clock: simserver paces tokens 5 ms apart after
# a 20 ms TTFT and stamps each one's send time; one loadgen worker wakes only
# on a 3 ms tick. Its reads wait for the tick, so a token picked up on
# delivery is late by up to 3 ms, and the user-timed gaps take the tick's
# multiples (3 and 6 ms; a spread of about 1.4 ms, against tenths of a ms for
# a loop that reads at once), while the wire clock keeps the server's times:
#  - receive_clock_wire_share >= 0.99, no capture drop;
#  - the wire-timed median ITL within 0.2 ms, and p99 within 0.5 ms, of the
#    simulator's own send-stamp ITL; median TTFT from dispatch within 0.3 ms;
#  - the user-timed ITL's standard deviation at least 1 ms (the reads did
#    wait for the ticks);
#  - the report's batch_tick: tick_us 3000, and never more sleeps than tick
#    boundaries in the send window; the loop idle most of the window;
#  - the mean schedule lag at least 0.3 tick (a request waits for its tick).
# Bad input (no unit, out of range, with the user clock) exits 2 naming the
# flag. Needs CAP_NET_RAW (CI runs as root); skipped (77) without it
# outside CI.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 20ms --inter-token-latency 5ms --seed 5
for bad in "0.5" "9us" "11ms"; do
  rc=0
  "$LOADGEN" --base-url "$SIM_URL" --num-prompts 1 --batch-tick "$bad" --quiet \
    2>"$WORK/bad.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "--batch-tick $bad exited $rc, not 2"
  grep -q -- "--batch-tick" "$WORK/bad.err" || fail "--batch-tick $bad: $(cat "$WORK/bad.err")"
done
rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-prompts 1 --batch-tick 1ms --receive-clock user --quiet \
  2>"$WORK/bad.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--receive-clock" "$WORK/bad.err" \
  || fail "--batch-tick with the user clock exited $rc: $(cat "$WORK/bad.err")"

rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 40 --duration 4s --seed 7 \
  --random-input-len 16 --random-output-len 16 --receive-clock wire --batch-tick 3ms \
  --quiet --no-progress --save-result --result-dir "$WORK" --result-filename tick.json \
  2>"$WORK/tick.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q CAP_NET_RAW "$WORK/tick.err"; then
  [ "${CI:-}" = true ] && fail "no CAP_NET_RAW under CI: $(cat "$WORK/tick.err")"
  echo "SKIP: no CAP_NET_RAW (run as root, or setcap cap_net_raw+ep loadgen)"
  exit 77
fi
[ "$rc" -eq 0 ] || fail "loadgen exited $rc: $(cat "$WORK/tick.err")"
out="$WORK/tick.json"
sent_equals_done "$out"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "failed requests: $(jq -c .failures_by_class "$out")"
jq -c '{batch_tick_us, tick: .client_bias.batch_tick, window: .send_window_s,
  wire: .receive_clock_wire_share, itl: [.median_itl_ms, .p99_itl_ms],
  sim_itl: [.server_stamped.median_itl_ms, .server_stamped.p99_itl_ms],
  user_itl: [.user_timed.median_itl_ms, .user_timed.std_itl_ms],
  lag_ms: .mean_schedule_lag_ms, rho: .client_bias.max_rho, verdict: .client_bias.verdict}' "$out"
jq -e '.receive_clock == "wire" and .receive_clock_wire_share >= 0.99 and .capture.drops == 0' \
  "$out" >/dev/null || fail "wire: $(jq -c '{receive_clock, receive_clock_wire_share, capture}' "$out")"
[ "$(jnum "$out" .server_stamped.n_itl)" -gt 500 ] || fail "too few stamped gaps"
near_sim_stamps "$out"
awk -v s="$(jnum "$out" .user_timed.std_itl_ms)" 'BEGIN { exit !(s >= 1.0) }' \
  || fail "user-timed ITL spread $(jq .user_timed.std_itl_ms "$out") ms < 1 ms: the reads did not wait for the 3 ms ticks"
jq -e '.batch_tick_us == 3000 and .client_bias.batch_tick.tick_us == 3000
       and .client_bias.batch_tick.ticks >= 1' "$out" >/dev/null \
  || fail "batch_tick: $(jq -c '{batch_tick_us, t: .client_bias.batch_tick}' "$out")"
jq -e '.client_bias.batch_tick as $t
       | ($t.ticks - $t.ticks_overrun) <= (.send_window_s / 0.003 | floor) + 1' "$out" >/dev/null \
  || fail "more sleeps than ticks in the window: $(jq -c '[.client_bias.batch_tick, .send_window_s]' "$out")"
in_range "$(jnum "$out" .client_bias.max_rho)" 0 0.5 "the ticked worker's rho (it sleeps between ticks)"
awk -v l="$(jnum "$out" .mean_schedule_lag_ms)" 'BEGIN { exit !(l >= 0.9) }' \
  || fail "mean schedule lag $(jq .mean_schedule_lag_ms "$out") ms < 0.3 tick: requests did not wait for their ticks"
echo "batch_tick: ok"
