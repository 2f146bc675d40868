#!/usr/bin/env bash
# simserver end to end: measured latency against the configured model. The
# server's own stamps and curl's timings must never be early (firm lower
# bounds); upper bounds are generous because the box is shared and noisy.
# Also: the max-num-seqs queue, the 429 past the waiting queue, the
# prefill-per-token TTFT with the prefix cache, and a clean drain on SIGTERM.
. "$(dirname "$0")/sim_e2e_lib.sh"
ms() { awk -v ns="$1" 'BEGIN { printf "%.3f", ns / 1e6 }'; }

start_sim t --time-to-first-token 20ms --inter-token-latency 5ms
N=16
for i in 1 2 3; do
  curl -sS -N -H 'X-Sim-Stamp: 1' -w 'CURL %{time_starttransfer} %{time_total}\n' "$URL/v1/completions" \
    -d "{\"prompt\":\"a b c\",\"max_tokens\":$N,\"stream\":true}" >"$TMP/t$i.sse"
done
for i in 1 2 3; do
  f="$TMP/t$i.sse"
  truth=$(sed -n 's/^: \({.*}\)$/\1/p' "$f")
  prefill=$(echo "$truth" | jq .prefill_ns)
  decode=$(echo "$truth" | jq .decode_ns)
  read -r _ ttfb total < <(grep '^CURL' "$f")
  # gaps between the stamps of consecutive token events
  sed -n 's/^: t=//p' "$f" | head -n $N >"$TMP/st"
  min_gap=$(awk 'NR > 1 { g = $1 - p; if (min == "" || g < min) min = g } { p = $1 } END { print min }' "$TMP/st")
  med_gap=$(awk 'NR > 1 { print $1 - p } { p = $1 }' "$TMP/st" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  echo "run $i: prefill $(ms "$prefill") ms, decode $(ms "$decode") ms, gaps min $(ms "$min_gap") median $(ms "$med_gap") ms, curl ttfb ${ttfb}s total ${total}s"
  check "run $i: true TTFT >= 20 ms" [ "$prefill" -ge 20000000 ]
  check "run $i: true TTFT < 20 ms + 500 ms" [ "$prefill" -lt 520000000 ]
  check "run $i: no token gap below 5 ms" [ "$min_gap" -ge 5000000 ]
  check "run $i: median token gap < 5 ms + 20 ms" [ "$med_gap" -lt 25000000 ]
  check "run $i: decode >= 15 gaps x 5 ms" [ "$decode" -ge 75000000 ]
  checkx "run $i: curl's first byte >= 20 ms and < 520 ms (${ttfb}s)" \
    'awk -v t="$ttfb" "BEGIN { exit !(t >= 0.020 && t < 0.520) }"'
  checkx "run $i: curl's total >= 95 ms and < 2 s (${total}s)" \
    'awk -v t="$total" "BEGIN { exit !(t >= 0.095 && t < 2.0) }"'
done
check "TTFT histogram: all 3 requests above 20 ms" \
  [ "$(metric 'vllm:time_to_first_token_seconds_bucket{le="0.02",model_name="sim-model"}')" -eq 0 ]
check "ITL histogram: 3 x 15 gaps counted" [ "$(metric 'vllm:inter_token_latency_seconds_count{model_name="sim-model"}')" -eq 45 ]

# --- 30 concurrent streams share one timer: none is early, all complete
cps=()
for i in $(seq 1 30); do
  curl -sS -N -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d "{\"prompt\":\"p$i\",\"max_tokens\":$N,\"stream\":true}" >"$TMP/m$i.sse" &
  cps+=($!)
done
wait "${cps[@]}"
min_all=$(for i in $(seq 1 30); do sed -n 's/^: t=//p' "$TMP/m$i.sse" | head -n $N | awk 'NR > 1 { print $1 - p } { p = $1 }'; done | sort -n | head -n 1)
check "30 concurrent streams: all ended with [DONE]" [ "$(cat "$TMP"/m*.sse | grep -c '^data: \[DONE\]')" -eq 30 ]
check "30 concurrent streams: no token gap below 5 ms (min $(ms "$min_all") ms)" [ "$min_all" -ge 5000000 ]
check "30 concurrent streams: every TTFT >= 20 ms" \
  [ "$(cat "$TMP"/m*.sse | sed -n 's/^: \({.*}\)$/\1/p' | jq -s 'map(.prefill_ns) | min')" -ge 20000000 ]
stop_sim t

# --- one slot: the second request waits for the first
start_sim q --max-num-seqs 1 --max-waiting-queue-length 1 --inter-token-latency 50ms
req='{"prompt":"a","max_tokens":11,"stream":true}'
# wait_metric NAME VALUE: polls /metrics (at most 3 s) until NAME = VALUE.
wait_metric() {
  for _ in $(seq 1 300); do [ "$(metric "$1")" = "$2" ] && return 0; sleep 0.01; done
  return 1
}
curl -sS -N -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d "$req" >"$TMP/q1.sse" &
c1=$!
check "the first request runs" wait_metric 'vllm:num_requests_running{model_name="sim-model"}' 1
curl -sS -N -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d "$req" >"$TMP/q2.sse" &
c2=$!
check "the second request waits" wait_metric 'vllm:num_requests_waiting{model_name="sim-model"}' 1
third=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/v1/completions" -d "$req")
check "running 1 + waiting 1: the third request is 429" [ "$third" = 429 ]
wait "$c1" "$c2"
q2=$(sed -n 's/^: \({.*}\)$/\1/p' "$TMP/q2.sse" | jq .queue_ns)
p2=$(sed -n 's/^: \({.*}\)$/\1/p' "$TMP/q2.sse" | jq .prefill_ns)
t1_last=$(sed -n 's/^: t=//p' "$TMP/q1.sse" | tail -n 1)
t2_first=$(sed -n 's/^: t=//p' "$TMP/q2.sse" | head -n 1)
echo "second request queued $(ms "$q2") ms"
check "the second request started only after the first wrote its last event" [ $((t2_first - p2)) -ge "$t1_last" ]
check "  ... so it queued (queue_ns > 0)" [ "$q2" -gt 0 ]
check "both completed with [DONE]" [ "$(cat "$TMP/q1.sse" "$TMP/q2.sse" | grep -c '^data: \[DONE\]')" -eq 2 ]
stop_sim q

# --- slow-down under load: with 2 of 2 slots running, gaps are 3 x 10 ms
start_sim l --max-num-seqs 2 --time-factor-under-load 3 --inter-token-latency 10ms
wait_metric_ge() {
  for _ in $(seq 1 300); do [ "$(metric "$1")" -ge "$2" ] && return 0; sleep 0.01; done
  return 1
}
curl -sS -N -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d '{"prompt":"a","max_tokens":12,"stream":true}' >"$TMP/l1.sse" &
l1=$!
wait_metric_ge 'vllm:num_requests_running{model_name="sim-model"}' 1 || true
curl -sS -N -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d '{"prompt":"b","max_tokens":6,"stream":true}' >"$TMP/l2.sse"
wait "$l1"
gaps2=$(sed -n 's/^: t=//p' "$TMP/l2.sse" | head -n 6 | awk 'NR > 1 { print $1 - p } { p = $1 }' | sort -n)
echo "second stream's gaps (ms): $(for g in $gaps2; do ms "$g"; printf ' '; done)"
check "under load (2 of 2 running) no gap is below 3 x 10 ms" [ "$(echo "$gaps2" | head -n 1)" -ge 30000000 ]
gaps1=$(sed -n 's/^: t=//p' "$TMP/l1.sse" | head -n 12 | awk 'NR > 1 { print $1 - p } { p = $1 }' | sort -n)
check "alone, the first stream's gaps are >= 10 ms" [ "$(echo "$gaps1" | head -n 1)" -ge 10000000 ]
check "  ... and its first gap (alone) is below 30 ms + 200 ms slack" [ "$(sed -n 's/^: t=//p' "$TMP/l1.sse" | head -n 2 | awk 'NR == 2 { print $1 - p } { p = $1 }')" -lt 230000000 ]
stop_sim l

# --- prefill per token, and the prefix cache skipping it
start_sim p --prefill-time-per-token 1ms --block-size 16
words=$(for i in $(seq 1 40); do printf 'w%d ' "$i"; done)
h1=$(curl -sS -D - -o /dev/null -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d "{\"prompt\":\"$words\",\"max_tokens\":1}")
h2=$(curl -sS -D - -o /dev/null -H 'X-Sim-Stamp: 1' "$URL/v1/completions" -d "{\"prompt\":\"$words\",\"max_tokens\":1}")
p1=$(echo "$h1" | tr -d '\r' | sed -n 's/^x-sim-prefill-ns: //p')
p2=$(echo "$h2" | tr -d '\r' | sed -n 's/^x-sim-prefill-ns: //p')
k2=$(echo "$h2" | tr -d '\r' | sed -n 's/^x-sim-cached-tokens: //p')
echo "prefill cold $(ms "$p1") ms, warm $(ms "$p2") ms, cached $k2"
check "cold prefill of 40 tokens >= 40 ms" [ "$p1" -ge 40000000 ]
check "warm: 32 tokens cached" [ "$k2" -eq 32 ]
check "warm prefill of 8 uncached tokens >= 8 ms" [ "$p2" -ge 8000000 ]
check "warm prefill < 8 ms + 500 ms" [ "$p2" -lt 508000000 ]
stop_sim p

# --- SIGTERM drains: the stream in flight finishes, then exit 0
start_sim d --inter-token-latency 30ms
curl -sS -N "$URL/v1/completions" -d '{"prompt":"a","max_tokens":10,"stream":true}' >"$TMP/d.sse" &
c=$!
sleep 0.1
stop_sim d
rc=0; wait "$c" || rc=$?
check "SIGTERM with a stream in flight: exit 0" [ "$STOP_RC" -eq 0 ]
check "the stream finished cleanly (curl 0, [DONE], 10 tokens)" [ "$rc" -eq 0 ]
check "  ... [DONE] and 10 tokens" [ "$(grep -c '^data: {' "$TMP/d.sse")-$(grep -c '^data: \[DONE\]' "$TMP/d.sse")" = "10-1" ]
start_sim g --inter-token-latency 1s
curl -sS -N "$URL/v1/completions" -d '{"prompt":"a","max_tokens":60,"stream":true}' >/dev/null 2>&1 &
c=$!
sleep 0.1
t0=$(date +%s%N)
stop_sim g
el_ms=$((($(date +%s%N) - t0) / 1000000))
wait "$c" || true
check "a stream too long for the grace is cut after ~2 s (${el_ms} ms), exit 0" [ "$STOP_RC" -eq 0 ]
check "  ... not before the grace (>= 1.9 s)" [ "$el_ms" -ge 1900 ]
check "  ... and not much later" [ "$el_ms" -lt 4500 ]
finish
