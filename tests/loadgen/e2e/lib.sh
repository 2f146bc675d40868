# Shared helpers of loadgen's end-to-end tests (sourced). Binaries come from
# $RB_BUILD_DIR; every process started here is killed on exit (trap).
set -euo pipefail
: "${RB_BUILD_DIR:?RB_BUILD_DIR must point at the build folder}"
LOADGEN="$RB_BUILD_DIR/loadgen/loadgen"
SIMSERVER="$RB_BUILD_DIR/simserver/simserver"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lg-e2e.XXXXXX")
CHILDREN=()

cleanup() {
  for pid in "${CHILDREN[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

source "$(dirname "${BASH_SOURCE[0]}")/../../lib/harness.sh" # fail, pass, skip, jnum, start_sim

# wait_sim METRIC N SECONDS: readiness instead of a fixed sleep. Polls
# simserver's /metrics until the sum of METRIC's samples (e.g.
# vllm:request_success_total, vllm:num_requests_running) reaches N; fails
# after SECONDS.
wait_sim() {
  local v=0
  for _ in $(seq 1 $(($3 * 20))); do
    v=$(curl -sS --max-time 2 "$SIM_URL/metrics" 2>/dev/null |
        awk -v k="$1" 'index($0, k "{") == 1 || index($0, k " ") == 1 { t += $2 } END { print t + 0 }')
    [ "${v%.*}" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "simserver's $1 reached only $v of $2 in $3 s"
}

# in_range VALUE LO HI NAME
in_range() {
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
    fail "$4 = $1, expected in [$2, $3]"
}

# sent_equals_done FILE: dispatched = completed + failed, exactly.
sent_equals_done() {
  local d c f
  d=$(jnum "$1" .dispatched); c=$(jnum "$1" .completed); f=$(jnum "$1" .failed)
  [ "$d" -eq $((c + f)) ] || fail "dispatched $d != completed $c + failed $f"
}

# near_sim_stamps RESULT: the wire-timed median ITL within 0.2 ms, p99 ITL
# within 0.5 ms and median TTFT from dispatch within 0.3 ms of simserver's
# own send-stamp figures over the same run (server_stamped).
near_sim_stamps() {
  local out=$1
  near() { # near VALUE REF TOL NAME
    awk -v v="$1" -v r="$2" -v t="$3" 'BEGIN { d = v - r; if (d < 0) d = -d; exit !(d <= t) }' ||
      fail "$4: $1 ms, the simulator's $2 ms (tolerance $3 ms)"
  }
  near "$(jnum "$out" .median_itl_ms)" "$(jnum "$out" .server_stamped.median_itl_ms)" 0.2 "median ITL"
  near "$(jnum "$out" .p99_itl_ms)" "$(jnum "$out" .server_stamped.p99_itl_ms)" 0.5 "p99 ITL"
  near "$(jnum "$out" .median_ttft_dispatch_ms)" \
    "$(jnum "$out" .server_stamped.median_ttft_dispatch_ms)" 0.3 "median TTFT from dispatch"
}

# write_sharegpt FILE: a two-conversation ShareGPT file (the Inference Perf
# config tests' dataset).
write_sharegpt() {
  cat >"$1" <<'JSON'
[{"conversations": [{"from": "human", "value": "what is the capital of france"},
                    {"from": "gpt", "value": "paris is the capital"}]},
 {"conversations": [{"from": "human", "value": "name three primary colours please"},
                    {"from": "gpt", "value": "red yellow and blue"}]}]
JSON
}

# load_until_rho NAME: the caller's `run NAME wire COST_US` with an
# exponential client cost from 16,000 us, raised by a quarter (at most six
# tries) until the worker's rho is at least 0.85; fails if it never is. Sets
# cost and rho; the last run's report is $WORK/NAME.json.
load_until_rho() {
  local name=$1 attempt share
  cost=16000 rho=0
  for attempt in 1 2 3 4 5 6; do
    run "$name" wire "$cost" 2>"$WORK/$name.err" || fail "loadgen exited $?: $(cat "$WORK/$name.err")"
    rho=$(jnum "$WORK/$name.json" '.client_bias.workers[0].rho')
    share=$(jnum "$WORK/$name.json" '.receive_clock_wire_share // 0')
    echo "attempt $attempt: cost exp:$cost us, worker rho $rho, wire share $share"
    awk -v r="$rho" 'BEGIN { exit !(r >= 0.85) }' && return 0
    cost=$((cost * 5 / 4))
  done
  fail "the worker's rho $rho stayed under 0.85"
}
