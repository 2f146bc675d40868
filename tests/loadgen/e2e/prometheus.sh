#!/usr/bin/env bash
# Inference Perf's `metrics: {type: prometheus, prometheus: {url,
# scrape_interval}}` against a real Prometheus (Debian's), started here on a
# free loopback port with its own storage, scraping simserver every second:
# each stage's PromQL figures are in the report, the prompt tokens the
# server counted over the run match the client's within the extrapolation
# of Prometheus's increase(), and the waiting queue's max over the
# saturated stage is above the first's. Skipped (77) only where prometheus
# is not installed and not under CI=true.
source "$(dirname "$0")/lib.sh"
PROM=$(command -v prometheus || true)
if [ -z "$PROM" ]; then
  [ "${CI:-}" = true ] && fail "prometheus is not installed (scripts/setup.sh installs it)"
  echo "SKIP: prometheus is not installed"
  exit 77
fi
start_sim sim --max-num-seqs 8 --inter-token-latency 5ms

# A free port: bound, closed, then taken by Prometheus (retried if lost).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cat >"$WORK/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sim
    static_configs:
      - targets: ['127.0.0.1:$SIM_PORT']
EOF
started=""
for attempt in 1 2 3; do
  port=$(free_port)
  mkdir -p "$WORK/tsdb$attempt"
  "$PROM" --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/tsdb$attempt" \
    --web.listen-address="127.0.0.1:$port" --storage.tsdb.retention.time=1h \
    >"$WORK/prom$attempt.log" 2>&1 &
  pid=$!
  CHILDREN+=("$pid")
  # ready within 60 s (a busy host), or it exited (the port was taken)
  for _ in $(seq 1 600); do
    if curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then started=$port; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$started" ] && break
  kill -9 "$pid" 2>/dev/null || true
done
[ -n "$started" ] || fail "prometheus did not start: $(tail -n 5 "$WORK"/prom*.log)"
PROM_URL="http://127.0.0.1:$started"
# It has scraped simserver at least once (bounded: 30 s).
up=""
for _ in $(seq 1 300); do
  up=$(curl -sf "$PROM_URL/api/v1/query" --data-urlencode 'query=up{job="sim"}' |
       jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true)
  [ "$up" = 1 ] && break
  sleep 0.1
done
[ "$up" = 1 ] || fail "prometheus never scraped simserver: $(curl -s "$PROM_URL/api/v1/targets" | head -c 600)"

cat >"$WORK/config.yml" <<EOF
server:
  type: vllm
  model_name: sim-model
  base_url: $SIM_URL
  ignore_eos: true
metrics:
  type: prometheus
  prometheus:
    url: $PROM_URL
    scrape_interval: 1
load:
  type: constant
  interval: 4
  stages:
    - rate: 10
      duration: 4
    - rate: 45
      duration: 4
data:
  type: random
  input_distribution:
    mean: 32
  output_distribution:
    mean: 64
EOF
"$LOADGEN" --config "$WORK/config.yml" --num-workers 2 --random-len-dist fixed --saturation-lag-ms 100 \
  --quiet --no-progress --save-result --result-dir "$WORK" --result-filename p.json \
  2>"$WORK/p.err" || fail "the run exited $?: $(cat "$WORK/p.err")"
r="$WORK/p.json"
show=$(jq -c '{tokens: .total_input_tokens, failed, prom: (.prometheus | del(.metrics)),
               run_prompt: .prometheus.metrics["vllm:prompt_tokens_total"],
               waiting: [.stages[].prometheus.metrics["vllm:num_requests_waiting"].max],
               ttft: [.stages[].prometheus.metrics["vllm:time_to_first_token_seconds"].p50_ms]}' "$r")
echo "$show"
jq -e '.prometheus.ready == true and .prometheus.queries > 0 and .prometheus.failed_queries == 0
       and .failed == 0
       and (.prometheus.metrics["vllm:prompt_tokens_total"].increase as $i
            | $i >= 0.6 * .total_input_tokens and $i <= 1.6 * .total_input_tokens)
       and (.stages | length) == 2
       and (.stages[0].prometheus.eval_time_s < .stages[1].prometheus.eval_time_s)
       and (.stages[1].prometheus.metrics["vllm:num_requests_waiting"].max >
            .stages[0].prometheus.metrics["vllm:num_requests_waiting"].max)
       and (.stages[0].prometheus.metrics["vllm:time_to_first_token_seconds"].p50_ms >= 0)' \
  "$r" >/dev/null || fail "the Prometheus figures: $show"

# A Prometheus that is not there: said, counted, never fatal, not waited for.
dead=$(free_port)
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 20 --num-prompts 10 \
  --prometheus-url "http://127.0.0.1:$dead" --prometheus-scrape-interval 30 --random-input-len 8 \
  --random-output-len 8 --quiet --no-progress --save-result --result-dir "$WORK" --result-filename d.json \
  2>"$WORK/d.err" || fail "an absent Prometheus failed the run (exit $?): $(cat "$WORK/d.err")"
jq -e '.prometheus.ready == false and (.prometheus.last_error | length) > 0 and .completed == 10' \
  "$WORK/d.json" >/dev/null || fail "absent Prometheus: $(jq -c .prometheus "$WORK/d.json")"
grep -q "is not ready" "$WORK/d.err" || fail "no message about the absent Prometheus"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --prometheus-url "127.0.0.1:9090" --num-prompts 1 2>"$WORK/bad.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--prometheus-url: must be an http:// or https:// URL, got '127.0.0.1:9090'" "$WORK/bad.err" ||
  fail "a bad --prometheus-url: exit $rc, $(cat "$WORK/bad.err")"
pass "Inference Perf's prometheus metrics, from a real Prometheus scraping simserver"
