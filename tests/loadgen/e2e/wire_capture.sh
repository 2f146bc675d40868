#!/usr/bin/env bash
# The wire clock under a loaded client: simserver paces tokens 5 ms +/- 1 ms
# apart after a 20 ms TTFT and stamps each one's send time; one loadgen
# worker is slowed by an exponential busy cost per received event until its
# loop's rho is at least 0.85 (the test checks the rho it got, and raises
# the cost, bounded, when it fell short). Tokens then wait in the socket and
# the kernel merges them, but the capture saw every segment:
#  - receive_clock_wire_share >= 0.99;
#  - the wire-timed median ITL within 0.2 ms, and p99 within 0.5 ms, of the
#    simulator's own send-stamp ITL over the same run (server_stamped);
#  - the median TTFT from dispatch within 0.3 ms of the simulator's;
#  - the user-timed p99 ITL at least 2x the wire-timed one (the load was real);
#  - every request's departure (the capture of its first and last bytes as
#    they left) lies between its dispatch and its first response byte, and
#    every completed request has one (none fell back), loaded and idle; the
#    idle worker's median send delay (dispatch to departure) is printed;
#    and so over IPv6 loopback, with short prompts and with ones long enough
#    to leave in several segments.
# The same run with --receive-clock kernel prints the exact share the
# kernel's stamps get, for the record. Needs CAP_NET_RAW (CI runs as root).
source "$(dirname "$0")/lib.sh"
if ! "$LOADGEN" --help >/dev/null 2>&1; then fail "loadgen --help"; fi
start_sim sim --time-to-first-token 20ms --inter-token-latency 5ms \
  --inter-token-latency-std-dev 1ms --seed 5
run() { # run NAME CLOCK COST_US
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 3 --duration 10s --seed 7 \
    --random-input-len 16 --random-output-len 16 --client-cost "exp:$3" --receive-clock "$2" \
    --quiet --no-progress --save-result --save-detailed --result-dir "$WORK" \
    --result-filename "$1.json"
}
# departures NAME: every record has both departure times, in the order
# dispatch <= first byte left <= last byte left <= first response byte <=
# first token; the capture counted one departure per completed request.
departures() {
  local j="$WORK/$1.json" d="$WORK/$1.jsonl" bad n
  [ -s "$d" ] || fail "$1: no detailed records"
  n=$(wc -l <"$d")
  bad=$(jq -c 'select(.class == "ok") | select((.sent_wire_ns // -1) < .dispatch_ns
          or .sent_wire_last_ns < .sent_wire_ns or .first_byte_ns < .sent_wire_last_ns
          or .first_token_ns < .first_byte_ns)' "$d" | head -3)
  [ -z "$bad" ] || fail "$1: departures out of order: $bad"
  jq -e --argjson n "$n" '.completed == $n and .capture.departures == $n
       and .capture.departure_fallbacks == 0
       and .capture.send_delay_p50_us <= .capture.send_delay_p99_us
       and .capture.median_ttft_from_wire_ms <= .median_ttft_dispatch_ms' "$j" >/dev/null ||
    fail "$1: departures: $(jq -c '{completed, capture}' "$j")"
  echo "$1: $n departures, send delay mean/p50/p99 $(jq -c '.capture |
    [.send_delay_mean_us, .send_delay_p50_us, .send_delay_p99_us]' "$j") us, TTFT from" \
    "departure/dispatch median $(jq -c '[.capture.median_ttft_from_wire_ms,
    .median_ttft_dispatch_ms]' "$j") ms"
}
# Wire needs the capability: without it (not root, no setcap) the explicit
# flag exits 2; that is a failure under CI, a skip elsewhere.
rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --num-prompts 1 --random-input-len 4 \
  --random-output-len 2 --receive-clock wire --quiet --no-progress 2>"$WORK/probe.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q CAP_NET_RAW "$WORK/probe.err"; then
  [ "${CI:-}" = true ] && fail "no CAP_NET_RAW under CI: $(cat "$WORK/probe.err")"
  echo "SKIP: no CAP_NET_RAW (run as root, or setcap cap_net_raw+ep loadgen)"
  exit 77
fi
[ "$rc" -eq 0 ] || fail "probe run exited $rc: $(cat "$WORK/probe.err")"

# An idle worker (no client cost): the departures, and its send delay.
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 10 --duration 3s --seed 3 \
  --random-input-len 16 --random-output-len 4 --receive-clock wire --quiet --no-progress \
  --save-result --save-detailed --result-dir "$WORK" --result-filename idle.json \
  2>"$WORK/idle.err" || fail "idle run exited $?: $(cat "$WORK/idle.err")"
departures idle

# Over IPv6 loopback, and with prompts long enough that a request leaves in
# several segments (PSH marks only the last of a send): every departure is
# still captured from its first byte (the filter takes the client's data by
# length, IPv4 and IPv6 alike).
v4_url=$SIM_URL
start_sim sim6 --host ::1 --time-to-first-token 2ms --inter-token-latency 1ms --seed 5
for v in "short 16" "long 30000"; do
  set -- $v
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 10 --duration 2s --seed 3 \
    --random-input-len "$2" --random-output-len 4 --receive-clock wire --quiet --no-progress \
    --save-result --save-detailed --result-dir "$WORK" --result-filename "v6-$1.json" \
    2>"$WORK/v6-$1.err" || fail "IPv6 $1 run exited $?: $(cat "$WORK/v6-$1.err")"
  departures "v6-$1"
done
jq -e '.capture.filter | contains("ip6")' "$WORK/v6-long.json" >/dev/null || fail "IPv6: the filter has no IPv6 clause"
SIM_URL=$v4_url

# The worker's cost is raised until it is loaded (rho >= 0.85, bounded).
load_until_rho wire
out="$WORK/wire.json"
sent_equals_done "$out"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "failed requests: $(jq -c .failures_by_class "$out")"
jq -c '{receive_clock, receive_clock_wire_share, receive_clock_exact_share, capture,
  itl: [.median_itl_ms, .p99_itl_ms], ttft_d: .median_ttft_dispatch_ms,
  user_itl: [.user_timed.median_itl_ms, .user_timed.p99_itl_ms], server_stamped}' "$out"
jq -e '.receive_clock == "wire" and .receive_clock_fallback_reason == null
       and .receive_clock_wire_share >= 0.99
       and (.capture | .interface == "lo" and .drops == 0 and .packets > 0)' "$out" >/dev/null \
  || fail "wire share or capture: $(jq -c '{receive_clock, receive_clock_wire_share, capture}' "$out")"
[ "$(jnum "$out" .server_stamped.n_itl)" -gt 300 ] || fail "too few stamped gaps"
departures wire
near_sim_stamps "$out"
awk -v u="$(jnum "$out" .user_timed.p99_itl_ms)" -v w="$(jnum "$out" .p99_itl_ms)" \
  'BEGIN { exit !(u >= 2 * w) }' \
  || fail "user-timed p99 ITL $(jq .user_timed.p99_itl_ms "$out") ms is not 2x the wire's $(jq .p99_itl_ms "$out") ms"

# The same load timed by the kernel's socket stamps: its exact share, on record.
run kernel kernel "$cost" 2>"$WORK/kernel.err" || fail "loadgen (kernel) exited $?"
k="$WORK/kernel.json"
jq -e '.receive_clock == "kernel" and .receive_clock_wire_share == 0 and .capture == null' "$k" \
  >/dev/null || fail "kernel run: $(jq -c '{receive_clock, receive_clock_wire_share, capture}' "$k")"
echo "same load, kernel clock: exact share $(jq .receive_clock_exact_share "$k"), rho" \
  "$(jq '.client_bias.workers[0].rho' "$k"), median/p99 ITL $(jq -c '[.median_itl_ms, .p99_itl_ms]' "$k")" \
  "ms; wire clock: exact share $(jq .receive_clock_exact_share "$out")"

# Two workers get their own local port ranges (below the kernel's ephemeral
# range), and their sockets close with a reset: a run leaves none of its
# connections to this server in TIME_WAIT, so the next run's binds in the
# same ranges find the ports free (a calibration runs one batch after
# another; with TIME_WAIT, a saturated level's ports refused bind() for
# 60 s and the next batches failed).
tw_to_sim() { # TIME_WAIT sockets from a local port in [$1, $2] to the simulator at $SIM_URL
  local n=0 loc rem st p sim_port=${SIM_URL##*:}
  while read -r _ loc rem st _; do
    [ "$st" = 06 ] || continue
    [ $((16#${rem##*:})) -eq "$sim_port" ] || continue
    p=$((16#${loc##*:}))
    [ "$p" -ge "$1" ] && [ "$p" -le "$2" ] && n=$((n + 1))
  done < <(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null)
  echo "$n"
}
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 2s --seed 9 \
  --random-input-len 16 --random-output-len 4 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename k2.json || fail "loadgen (k=2) exited $?"
sent_equals_done "$WORK/k2.json"
range=$(jq -r '.capture.filter | capture("portrange (?<lo>[0-9]+)-(?<hi>[0-9]+)") | "\(.lo) \(.hi)"' \
  "$WORK/k2.json") || fail "k=2: no port range in the capture's filter"
read -r lo hi <<<"$range"
# both workers' ranges, as lg_cap_filter makes them: k slices of at most
# 4096 ports just below the kernel's ephemeral range
eph_lo=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range)
span=$(( (eph_lo - 2048) / 2 )); [ "$span" -le 4096 ] || span=4096
all_lo=$((eph_lo - 2 * span))
[ "$lo" -ge "$all_lo" ] && [ "$hi" -lt "$eph_lo" ] \
  || fail "k=2: the capture's range $lo-$hi is not in $all_lo-$((eph_lo - 1))"
tw=$(tw_to_sim "$all_lo" $((eph_lo - 1)))
[ "$(jnum "$WORK/k2.json" .completed)" -gt 0 ] || fail "k=2: nothing completed"
[ "$tw" -eq 0 ] || fail "k=2: $tw connections to the simulator left in TIME_WAIT in ports $all_lo-$((eph_lo - 1))"
echo "wire_capture: ok"
