#!/usr/bin/env bash
# Benchmark, not a test: how fast simserver's control plane answers while
# one worker paces more streams than it can serve on time. Per repetition:
# a fresh simserver (--workers 1, --inter-token-latency 5ms), N paced
# streams held open (rel_abuse paced, 4,000 tokens each), then P sequential
# GET /health (20 ms apart) and one /metrics; the streams must still all be
# running after the probes. A repetition passes when its slowest /health is
# under the limit. Prints one line per repetition, the pass rate, and the
# machine facts (CPU, load average, commit), in Markdown.
# Usage: bench_control.sh [--reps N] [--streams N] [--probes N] [--limit-ms MS]
#   RB_BUILD_DIR (default ./build): the build folder.
export RB_BUILD_DIR=${RB_BUILD_DIR:-build}
source "$(dirname "$0")/lib.sh"
REPS=5 STREAMS=2000 PROBES=50 LIMIT_MS=100
while [ $# -gt 0 ]; do
  case "$1" in
  --reps | --streams | --probes | --limit-ms)
    [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "bench_control: $1 needs a positive integer" >&2; exit 2; }
    case "$1" in --reps) REPS=$2 ;; --streams) STREAMS=$2 ;; --probes) PROBES=$2 ;; --limit-ms) LIMIT_MS=$2 ;; esac
    shift 2 ;;
  *) echo "bench_control: unknown argument '$1' (usage: bench_control.sh [--reps N] [--streams N] [--probes N] [--limit-ms MS])" >&2; exit 2 ;;
  esac
done
[ -x "$ABUSE" ] || fail "no $ABUSE (build the rel_abuse target)"
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge $((2 * STREAMS + 100)) ] || fail "ulimit -n $(ulimit -n) is below $((2 * STREAMS + 100))"

# quantile Q: the Q-quantile (nearest rank) of the numbers on stdin.
quantile() { sort -n | awk -v q="$1" '{ a[NR] = $1 } END { i = int(q * NR + 0.999999); if (i < 1) i = 1; print a[i] }'; }
# hist_q FILE NAME Q: the upper bucket edge holding the Q-quantile of a
# Prometheus histogram (seconds), from its cumulative buckets.
hist_q() {
  awk -v n="$2_bucket{" -v q="$3" 'index($0, n) == 1 {
      le = $0; sub(/.*le="/, "", le); sub(/".*/, "", le); edge[++k] = le; cum[k] = $2 }
    END { tot = cum[k]; for (i = 1; i <= k; i++) if (cum[i] >= q * tot) { print edge[i]; exit } }' "$1"
}

echo "## /health under $STREAMS paced streams on one worker"
echo
echo "command: \`tests/reliability/bench_control.sh --reps $REPS --streams $STREAMS --probes $PROBES --limit-ms $LIMIT_MS\`"
echo "commit $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(. /etc/os-release && echo "$PRETTY_NAME"), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| rep | /health p50 ms | p99 ms | max ms | /metrics ms | running after | send lateness mean ms | lateness p99 bucket s | SIGTERM exit ms | pass |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
passed=0
for rep in $(seq 1 "$REPS"); do
  start_sim "sim$rep" --inter-token-latency 5ms
  "$ABUSE" paced "$SIM_PORT" "$STREAMS" 4000 60000 >"$WORK/paced$rep" 2>"$WORK/paced$rep.err" &
  TOOL_PID=$!
  CHILDREN+=("$TOOL_PID")
  wait_line "$WORK/paced$rep" '^ready' 40
  : >"$WORK/h$rep"
  for _ in $(seq 1 "$PROBES"); do
    curl -sS -o /dev/null --max-time 10 -w '%{http_code} %{time_total}\n' "$SIM_URL/health" >>"$WORK/h$rep" 2>/dev/null || echo "000 10" >>"$WORK/h$rep"
    sleep 0.02
  done
  mt=$(curl -sS -o "$WORK/m$rep" --max-time 10 -w '%{time_total}' "$SIM_URL/metrics" 2>/dev/null || echo 10)
  run=$(awk '$1 == "vllm:num_requests_running{model_name=\"sim-model\"}" { print $2 }' "$WORK/m$rep")
  bad=$(awk '$1 != 200' "$WORK/h$rep" | wc -l)
  ms_list() { awk '{ printf "%.1f\n", $2 * 1000 }' "$WORK/h$rep"; }
  p50=$(ms_list | quantile 0.5) p99=$(ms_list | quantile 0.99) mx=$(ms_list | quantile 1)
  ln=$(awk '$1 == "sim_send_lateness_seconds_count{model_name=\"sim-model\"}" { print $2 }' "$WORK/m$rep")
  ls=$(awk '$1 == "sim_send_lateness_seconds_sum{model_name=\"sim-model\"}" { print $2 }' "$WORK/m$rep")
  lmean=$(awk -v s="$ls" -v n="$ln" 'BEGIN { if (n > 0) printf "%.2f", s * 1000 / n; else print "n/a" }')
  lp99=$(hist_q "$WORK/m$rep" sim_send_lateness_seconds 0.99)
  t0=$(date +%s%N)
  kill -TERM "$SIM_PID"
  for _ in $(seq 1 400); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.025; done
  el=$((($(date +%s%N) - t0) / 1000000))
  kill -0 "$SIM_PID" 2>/dev/null && kill -9 "$SIM_PID"
  wait "$SIM_PID" 2>/dev/null || true
  wait "$TOOL_PID" 2>/dev/null || true
  ok=no
  if [ "$bad" -eq 0 ] && [ "$run" = "$STREAMS" ] && awk -v m="$mx" -v l="$LIMIT_MS" 'BEGIN { exit !(m < l) }'; then
    ok=yes
    passed=$((passed + 1))
  fi
  echo "| $rep | $p50 | $p99 | $mx | $(awk -v t="$mt" 'BEGIN { printf "%.1f", t * 1000 }') | $run of $STREAMS | $lmean | $lp99 | $el | $ok |"
done
echo
echo "pass: $passed of $REPS repetitions had every /health under $LIMIT_MS ms with all $STREAMS streams running; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
