#!/usr/bin/env bash
# The wire clock through TLS: loadgen reaches simserver through nginx as a
# TLS terminator (scripts/lib/nginx_tls.sh). simserver paces tokens 5 ms
# +/- 1 ms apart after a 20 ms TTFT and stamps each one's send time; one
# loadgen worker is slowed by an exponential busy cost per received event
# until its loop's rho is at least 0.85 (raised, bounded, when it fell
# short). The SSE framing is inside ciphertext, but the TLS layer reads a
# record's header and then exactly its body before it hands that record's
# plaintext on, so an event is timed by the capture of its record's last
# byte (lg_tls_scan). Then:
#  - receive_clock "wire" with no fallback reason, wire share >= 0.99, no
#    capture drop, every completed request's departure captured;
#  - the wire-timed median ITL within 0.2 ms of the simulator's, and its p99
#    off the simulator's by at most 2 ms or a quarter of the user-timed p99's
#    distance from it, whichever is more; both against the
#    simulator's own send-stamp ITL over the same run: nginx's hop adds a
#    delay to every token, which gaps cancel where it is alike; where nginx
#    waits for a CPU (the slowed worker holds one of the host's two) it is
#    not, and the stamps are one hop upstream of what the wire clock times.
#    So nginx runs at real-time priority where chrt may set it (CI runs as
#    root): beside a busy loop and another test at -j 2 an nginx at nice 0
#    once put p99 1.07 ms off (9.36 against 8.29, at c4294bd; results/tests/
#    wire_tls-rt/README.md). Measured (scripts/pass_rate.sh,
#    afd8bbb): 9 runs of 10 within 0.5 ms, one 0.56 ms off (8.05 against
#    7.48). Real-time priority does not make nginx's own wake-ups prompt:
#    on a VM whose idle vCPUs halt at once (guest_halt_poll_ns 0) one run in
#    ten read p99 1.06 ms off at SCHED_FIFO 10 (9.32 against 8.27; ad5a9df,
#    results/tests/pass_rate-ad5a9df.md),
#    and with a 2 ms tolerance two in ten 3.0 and 3.9 ms off, the simulator's
#    own p99 there 15.4 and 12.7 ms (591fa2b; results/tests/
#    pass_rate-591fa2b.md): a jittery host moves both tails, by more than any fixed
#    tolerance. What the test must tell apart is a clock that times tokens
#    when the client processed them: the user-timed p99 is at least 2x the
#    wire's here, and the kernel's stamps through TLS read p99 52 ms against
#    7.5, both as far from the simulator's as the client's own delay, far
#    beyond a quarter of it;
#  - the median TTFT from dispatch never before the simulator's (no client
#    sees a token before it was sent) and within 3 ms of it (the hop: on the
#    VM above it read 1.74 ms at 4853705, results/tests/
#    pass_rate-4853705.md, where 1 ms was allowed; the slowed client's own delay is about
#    16 ms a token, so a clock that timed tokens when it processed them is
#    still far outside);
#  - the user-timed p99 ITL at least 2x the wire-timed one (the load was real).
# The same load under --receive-clock kernel prints what the kernel's
# stamps give, for the record. Needs CAP_NET_RAW (CI runs as root); skipped
# (77) without it outside CI.
source "$(dirname "$0")/lib.sh"
source "$RB_SOURCE_DIR/scripts/lib/nginx_tls.sh"
trap 'nginx_tls_stop; cleanup' EXIT
start_sim sim --time-to-first-token 20ms --inter-token-latency 5ms \
  --inter-token-latency-std-dev 1ms --seed 5
nginx_tls_start "$WORK/nginx" "$SIM_URL" || fail "nginx (TLS) could not be started"
if chrt -f 10 true 2>/dev/null; then
  for p in "$NGINX_PID" $(pgrep -P "$NGINX_PID"); do
    chrt -a -f -p 10 "$p" || fail "nginx pid $p: chrt -f refused"
  done
  [ "$(pgrep -P "$NGINX_PID" | wc -l)" -ge 1 ] || fail "no nginx worker under $NGINX_PID"
  echo "nginx (pid $NGINX_PID and its worker) at SCHED_FIFO 10"
else
  echo "note: no real-time priority here (chrt -f refused): nginx's hop may wait for a CPU on a busy host"
fi
run() { # run NAME CLOCK COST_US
  "$LOADGEN" --base-url "$NGINX_URL" --ca-cert "$NGINX_TLS_CERT" --num-workers 1 --request-rate 3 \
    --duration 10s --seed 7 --random-input-len 16 --random-output-len 16 --client-cost "exp:$3" \
    --receive-clock "$2" --quiet --no-progress --save-result --save-detailed --result-dir "$WORK" \
    --result-filename "$1.json"
}
rc=0
run probe wire 0 2>"$WORK/probe.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q CAP_NET_RAW "$WORK/probe.err"; then
  [ "${CI:-}" = true ] && fail "no CAP_NET_RAW under CI: $(cat "$WORK/probe.err")"
  echo "SKIP: no CAP_NET_RAW (run as root, or setcap cap_net_raw+ep loadgen)"
  exit 77
fi
[ "$rc" -eq 0 ] || fail "probe run exited $rc: $(cat "$WORK/probe.err")"
load_until_rho wire
out="$WORK/wire.json"
sent_equals_done "$out"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "failed requests: $(jq -c .failures_by_class "$out")"
jq -c '{receive_clock, receive_clock_wire_share, capture: (.capture | {packets, drops, fallbacks,
  departures, departure_fallbacks}), itl: [.median_itl_ms, .p99_itl_ms],
  sim_itl: [.server_stamped.median_itl_ms, .server_stamped.p99_itl_ms],
  ttft_d: [.median_ttft_dispatch_ms, .server_stamped.median_ttft_dispatch_ms],
  user_itl: [.user_timed.median_itl_ms, .user_timed.p99_itl_ms]}' "$out"
jq -e '.completed as $n | .receive_clock == "wire" and .receive_clock_fallback_reason == null
       and .receive_clock_wire_share >= 0.99 and .tls.verify == "ca_cert"
       and (.capture | .drops == 0 and .departure_fallbacks == 0 and .departures == $n)' \
  "$out" >/dev/null || fail "wire through TLS: $(jq -c '{receive_clock, receive_clock_fallback_reason, receive_clock_wire_share, capture}' "$out")"
[ "$(jnum "$out" .server_stamped.n_itl)" -gt 300 ] || fail "too few stamped gaps"
near() { # near VALUE REF TOL NAME
  awk -v v="$1" -v r="$2" -v t="$3" 'BEGIN { d = v - r; if (d < 0) d = -d; exit !(d <= t) }' ||
    fail "$4: $1 ms, the simulator's $2 ms (tolerance $3 ms)"
}
near "$(jnum "$out" .median_itl_ms)" "$(jnum "$out" .server_stamped.median_itl_ms)" 0.2 "median ITL"
# the p99's tolerance: 2 ms, or a quarter of the user-timed p99's distance
# from the simulator's, whichever is more
p99_tol=$(awk -v u="$(jnum "$out" .user_timed.p99_itl_ms)" -v s="$(jnum "$out" .server_stamped.p99_itl_ms)" \
  'BEGIN { d = u - s; if (d < 0) d = -d; t = d / 4; printf "%.3f", (t > 2 ? t : 2) }')
near "$(jnum "$out" .p99_itl_ms)" "$(jnum "$out" .server_stamped.p99_itl_ms)" "$p99_tol" "p99 ITL"
in_range "$(jnum "$out" .median_ttft_dispatch_ms)" "$(jnum "$out" .server_stamped.median_ttft_dispatch_ms)" \
  "$(awk -v s="$(jnum "$out" .server_stamped.median_ttft_dispatch_ms)" 'BEGIN { print s + 3 }')" \
  "median TTFT from dispatch against the simulator's"
awk -v u="$(jnum "$out" .user_timed.p99_itl_ms)" -v w="$(jnum "$out" .p99_itl_ms)" \
  'BEGIN { exit !(u >= 2 * w) }' \
  || fail "user-timed p99 ITL $(jq .user_timed.p99_itl_ms "$out") ms is not 2x the wire's $(jq .p99_itl_ms "$out") ms"
run kernel kernel "$cost" 2>"$WORK/kernel.err" || fail "loadgen (kernel) exited $?"
k="$WORK/kernel.json"
echo "same load through TLS, kernel clock: rho $(jq '.client_bias.workers[0].rho' "$k"), median/p99 ITL" \
  "$(jq -c '[.median_itl_ms, .p99_itl_ms]' "$k") ms against the simulator's" \
  "$(jq -c '[.server_stamped.median_itl_ms, .server_stamped.p99_itl_ms]' "$k") ms"
pass "wire clock through TLS at rho $rho: ITL as the simulator stamped it"
