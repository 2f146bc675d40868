#!/usr/bin/env bash
# simserver's control plane and connection handling, one case per run:
#   paced      1,500 paced streams (5 ms apart) on one worker, more than the
#              pacer can serve on time: /health and /metrics still answer,
#              the lateness shows on /metrics, and SIGTERM ends the worker
#              after its 2 s grace, not seconds later.
#   halfclose  3 pipelined paced requests, then shutdown(SHUT_WR): all 3
#              answers come before the server closes (also with 20).
# Only what the code guarantees is asserted: that the probes answer (within
# a generous 5 s), that nothing ends before its time, and counts. How fast
# /health answers under load is a host property, measured by
# bench_control.sh.
# Usage: control.sh paced|halfclose
source "$(dirname "$0")/lib.sh"
what=${1:?usage: control.sh paced|halfclose}
[ -x "$ABUSE" ] || fail "no $ABUSE (build the rel_abuse target)"

case "$what" in
paced)
  N=1500
  ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  # More streams than the pacer serves on time; under a lower descriptor
  # limit that cannot be raised, as many as it allows (at least 400).
  [ "$(ulimit -n)" -ge $((2 * N + 100)) ] || { N=$((($(ulimit -n) - 100) / 2)); echo "note: ulimit -n $(ulimit -n): $N streams"; }
  [ "$N" -ge 400 ] ||
    skip "ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)), below $((2 * 400 + 100))"
  start_sim sim --inter-token-latency 5ms
  # 4,000 tokens at 5 ms: 20 s per stream if on time, so every stream is
  # still running when the server is probed and signalled.
  "$ABUSE" paced "$SIM_PORT" "$N" 4000 30000 >"$WORK/paced" 2>"$WORK/paced.err" &
  TOOL_PID=$!
  CHILDREN+=("$TOOL_PID")
  wait_line "$WORK/paced" '^ready' 40
  [ "$(kv "$WORK/paced" started)" -eq "$N" ] || fail "only $(kv "$WORK/paced" started) of $N streams started: $(cat "$WORK/paced")"
  for i in 1 2 3; do
    out=$(curl -sS -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' "$SIM_URL/health" 2>&1) ||
      fail "/health probe $i under $N paced streams did not answer within 5 s ($out)"
    [ "${out%% *}" = 200 ] || fail "/health probe $i: $out"
    fig "paced_health_probe_$i status_and_s=$out"
  done
  curl -sS --max-time 5 "$SIM_URL/metrics" >"$WORK/m" || fail "/metrics under $N paced streams did not answer within 5 s"
  run=$(awk '$1 == "vllm:num_requests_running{model_name=\"sim-model\"}" { print $2 }' "$WORK/m")
  [ "$run" = "$N" ] || fail "the probes were not made under load: $run of $N streams running"
  late_n=$(awk '$1 == "sim_send_lateness_seconds_count{model_name=\"sim-model\"}" { print $2 }' "$WORK/m")
  [ "${late_n:-0}" -gt 0 ] || fail "no sim_send_lateness_seconds samples after $N streams started"
  late_sum=$(awk '$1 == "sim_send_lateness_seconds_sum{model_name=\"sim-model\"}" { print $2 }' "$WORK/m")
  fig "paced_streams=$N send_lateness_mean_ms=$(awk -v s="$late_sum" -v n="$late_n" 'BEGIN { printf "%.3f", s * 1000 / n }') events=$late_n"
  # SIGTERM: the running streams get the 2 s grace, then are cut. Never
  # before the grace (a property of the code); the upper bound is generous
  # (grace + 3 s) and only catches a worker that does not serve its signal.
  t0=$(date +%s%N)
  kill -TERM "$SIM_PID"
  for _ in $(seq 1 200); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.025; done
  el_ms=$((($(date +%s%N) - t0) / 1000000))
  kill -0 "$SIM_PID" 2>/dev/null && fail "simserver still up ${el_ms} ms after SIGTERM under $N paced streams"
  rc=0
  wait "$SIM_PID" || rc=$?
  [ "$rc" -eq 0 ] || fail "simserver exited $rc after SIGTERM"
  [ "$el_ms" -ge 1950 ] || fail "simserver exited ${el_ms} ms after SIGTERM, before its 2 s grace"
  [ "$el_ms" -lt 5000 ] || fail "simserver took ${el_ms} ms to stop (grace 2 s + 3 s margin)"
  fig "paced_sigterm_exit_ms=$el_ms"
  wait "$TOOL_PID" || fail "abuse tool: $(cat "$WORK/paced.err")"
  [ "$(kv "$WORK/paced" closed_by_server)" -eq "$N" ] || fail "after the drain: $(tail -n 1 "$WORK/paced")"
  if grep -q 'Sanitizer\|runtime error' "$WORK/sim.err"; then cat "$WORK/sim.err" >&2; fail "simserver: sanitizer report"; fi
  pass "control paced: /health and /metrics answered under $N paced streams; SIGTERM exit after $el_ms ms"
  ;;
halfclose)
  start_sim sim --inter-token-latency 5ms
  for spec in "3 10" "20 3" "1 10"; do
    set -- $spec
    "$ABUSE" halfclose "$SIM_PORT" "$1" "$2" >"$WORK/hc" 2>&1 || fail "tool: $(cat "$WORK/hc")"
    [ "$(kv "$WORK/hc" responses)" -eq "$1" ] && [ "$(kv "$WORK/hc" "done")" -eq "$1" ] ||
      fail "half-close after $1 pipelined requests of $2 tokens: $(cat "$WORK/hc")"
    [ "$(kv "$WORK/hc" closed)" -eq 1 ] || fail "half-close: the server did not close cleanly after the last answer: $(cat "$WORK/hc")"
    fig "halfclose k=$1 tokens=$2: $(cat "$WORK/hc")"
  done
  stop_sim sim
  # Zero latency: the answers are written inside the read that took them.
  start_sim fast
  "$ABUSE" halfclose "$SIM_PORT" 20 3 >"$WORK/hc" 2>&1 || fail "tool: $(cat "$WORK/hc")"
  [ "$(kv "$WORK/hc" "done")" -eq 20 ] && [ "$(kv "$WORK/hc" closed)" -eq 1 ] || fail "half-close, zero latency: $(cat "$WORK/hc")"
  stop_sim fast
  pass "control halfclose: every pipelined request sent before the FIN was answered"
  ;;
*) fail "unknown case '$what'" ;;
esac
