#!/usr/bin/env bash
# The wire clock off loopback: simserver runs in its own network namespace,
# reached over a veth pair (10.x addresses only on it), and loadgen outside
# it captures on the host's end of the pair, where every segment is seen
# once (outgoing and incoming), not on lo. Paced tokens (5 ms +/- 1 ms after
# a 20 ms TTFT, stamped by the simulator) reach one worker slowed by a busy
# cost per event (a lower rho than wire_capture.sh's):
#  - the capture's interface is the veth, with no drops;
#  - receive_clock_wire_share >= 0.99;
#  - the wire-timed median ITL within 0.2 ms and p99 within 0.5 ms of the
#    simulator's send-stamp ITL, the median TTFT from dispatch within 0.3 ms;
#  - every request's departure between its dispatch and its first response
#    byte, none fallen back.
# Skipped (77) without root, ip(8) or a namespace; under CI=true a failure.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] && command -v ip >/dev/null || skip "needs root and ip(8)"
tag=$$
NS=rbw$tag
VH=rbwh$tag VN=rbwn$tag
NET=10.214.$((tag % 200 + 20))
netns_cleanup() {
  ip link del "$VH" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
}
trap 'cleanup; netns_cleanup' EXIT INT TERM
ip netns add "$NS" 2>"$WORK/netns.err" || skip "cannot create a network namespace: $(cat "$WORK/netns.err")"
N=(ip netns exec "$NS")
"${N[@]}" ip link set lo up
ip link add "$VH" type veth peer name "$VN" netns "$NS" ||
  skip "cannot create a veth pair into the namespace"
ip addr add "$NET.1/24" dev "$VH"
ip link set "$VH" up
"${N[@]}" ip addr add "$NET.2/24" dev "$VN"
"${N[@]}" ip link set "$VN" up
"${N[@]}" "$SIMSERVER" --host "$NET.2" --port 0 --time-to-first-token 20ms \
  --inter-token-latency 5ms --inter-token-latency-std-dev 1ms --seed 5 \
  >"$WORK/sim.out" 2>"$WORK/sim.err" &
CHILDREN+=("$!")
URL=""
for _ in $(seq 1 100); do
  URL=$(grep -o "http://$NET\.2:[0-9]*" "$WORK/sim.out" 2>/dev/null | head -n 1 || true)
  [ -n "$URL" ] && break
  kill -0 "${CHILDREN[-1]}" 2>/dev/null || fail "simserver exited: $(cat "$WORK/sim.err")"
  sleep 0.05
done
[ -n "$URL" ] || fail "simserver did not start in $NS"
# The link is up once a request crosses it (bounded: 5 s).
for _ in $(seq 1 50); do
  curl -sS --max-time 1 -o /dev/null "$URL/health" 2>/dev/null && break
  sleep 0.1
done
"$LOADGEN" --base-url "$URL" --allow-remote --num-workers 1 --request-rate 3 --duration 8s \
  --seed 7 --random-input-len 16 --random-output-len 16 --client-cost exp:4000 \
  --receive-clock wire --quiet --no-progress --save-result --save-detailed \
  --result-dir "$WORK" --result-filename n.json 2>"$WORK/n.err" ||
  fail "loadgen exited $?: $(cat "$WORK/n.err")"
out="$WORK/n.json" d="$WORK/n.jsonl"
sent_equals_done "$out"
[ "$(jnum "$out" .failed)" -eq 0 ] || fail "failed requests: $(jq -c .failures_by_class "$out")"
jq -c '{receive_clock, receive_clock_wire_share, capture, rho: .client_bias.workers[0].rho,
  itl: [.median_itl_ms, .p99_itl_ms], ttft_d: .median_ttft_dispatch_ms, server_stamped}' "$out"
jq -e --arg vh "$VH" '.receive_clock == "wire" and .receive_clock_wire_share >= 0.99
       and (.capture | .interface == $vh and .drops == 0 and .packets > 0)' "$out" >/dev/null ||
  fail "wire share or capture: $(jq -c '{receive_clock, receive_clock_wire_share, capture}' "$out")"
[ "$(jnum "$out" .server_stamped.n_itl)" -gt 200 ] || fail "too few stamped gaps"
near_sim_stamps "$out"
n=$(wc -l <"$d")
bad=$(jq -c 'select(.class == "ok") | select((.sent_wire_ns // -1) < .dispatch_ns
        or .sent_wire_last_ns < .sent_wire_ns or .first_byte_ns < .sent_wire_last_ns)' "$d" |
  head -3)
[ -z "$bad" ] || fail "departures out of order: $bad"
jq -e --argjson n "$n" '.completed == $n and .capture.departures == $n
     and .capture.departure_fallbacks == 0' "$out" >/dev/null ||
  fail "departures: $(jq -c '{completed, capture}' "$out")"
echo "veth $VH: $n departures, send delay p50/p99 $(jq -c '.capture |
  [.send_delay_p50_us, .send_delay_p99_us]' "$out") us"
echo "wire_netns: ok"
