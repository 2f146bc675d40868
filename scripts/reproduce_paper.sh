#!/usr/bin/env bash
# Reproduces the study's load-fidelity experiment on this host: Poisson
# arrivals at 1,000 and 5,000 QPS against the zero-latency simulator, offered
# by three clients on the identical arrival stream (same seed):
#   loadgen-k1        loadgen with one worker process
#   loadgen-kN        loadgen with one worker per online CPU
#   asyncio-emulated  loadgen with one worker and --client-cost exp:C per
#                     received event, emulating a single-process asyncio client
# It writes each run's report, a table in the study's form (table.md,
# table.json), plots, and the machine facts and commands (machine.md).
#   scripts/reproduce_paper.sh [--short] [--out DIR] [--rates "1000 5000"]
#                              [--duration S] [--asyncio-cost-us C] [--build DIR]
# --short: 2 s per run and the rates 200 and 1000, for the tests.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/results/paper"
rates="1000 5000"
duration=10
cost_us=50
build=""
short=0
invocation="$*"
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; rates="200 1000"; duration=2; shift ;;
    --out) out=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --asyncio-cost-us) cost_us=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "reproduce_paper: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for r in $rates; do
  [[ "$r" =~ ^[0-9]+$ ]] && [ "$r" -gt 0 ] || { echo "reproduce_paper: --rates: '$r' is not a positive integer" >&2; exit 2; }
done
[[ "$duration" =~ ^[0-9]+$ ]] && [ "$duration" -gt 0 ] || { echo "reproduce_paper: --duration: must be a positive integer (seconds), got '$duration'" >&2; exit 2; }
[[ "$cost_us" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "reproduce_paper: --asyncio-cost-us: must be a number, got '$cost_us'" >&2; exit 2; }
[ -n "$build" ] || build=$("$here/scripts/setup.sh" | tail -n 1)
sim="$build/simserver/simserver" lg="$build/loadgen/loadgen"
[ -x "$sim" ] && [ -x "$lg" ] || { echo "reproduce_paper: binaries not found under $build" >&2; exit 2; }
ncpu=$(nproc)
mkdir -p "$out/runs"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

sim_pid=""
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null; true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck source=scripts/lib/sim.sh
source "$here/scripts/lib/sim.sh"
sim_start "$out/runs" simserver "$sim" --workers 1 ||
  { echo "reproduce_paper: simserver did not start" >&2; exit 1; }
sim_pid=$SIM_PID url=$SIM_URL

common=(--base-url "$url" --endpoint /v1/completions --model sim-model --seed 1
        --random-input-len 16 --random-output-len 16 --random-range-ratio 0
        --request-timeout 30s --drain-timeout 10s --save-result --quiet --no-progress)
commands=()
run() { # name k rate extra...
  local name=$1 k=$2 rate=$3; shift 3
  local f="$name-$rate.json"
  local cmd=("$lg" "${common[@]}" --num-workers "$k" --request-rate "$rate"
             --duration "${duration}s" --result-dir "$out/runs" --result-filename "$f" "$@")
  commands+=("${cmd[*]#$build/}")
  echo "reproduce_paper: $name at $rate QPS (k=$k $*)" >&2
  "${cmd[@]}" >/dev/null || { echo "reproduce_paper: $name at $rate QPS failed" >&2; exit 1; }
}
for rate in $rates; do
  run loadgen-k1 1 "$rate"
  run "loadgen-k$ncpu" "$ncpu" "$rate"
  run asyncio-emulated 1 "$rate" --client-cost "exp:$cost_us"
done

# The table, from the reports alone.
rows=()
for rate in $rates; do
  for name in loadgen-k1 "loadgen-k$ncpu" asyncio-emulated; do
    rows+=("$(jq -c --arg client "$name" --arg file "runs/$name-$rate.json" '{
      client: $client, file: $file, workers: .num_workers, target_qps: .request_rate,
      achieved_qps: .achieved_rate, achieved_ratio: .achieved_ratio, throughput_qps: .request_throughput,
      completed: .completed, failed: .failed,
      client_delay_p50_ms: (.client_bias.client_delay_us.p50 / 1000),
      client_delay_p99_ms: (.client_bias.client_delay_us.p99 / 1000),
      ttft_p50_ms: .median_ttft_ms, ttft_p99_ms: .p99_ttft_ms,
      user_ttft_p50_ms: .user_timed.median_ttft_ms, user_ttft_p99_ms: .user_timed.p99_ttft_ms,
      server_ttft_mean_ms: .ttft_truth_ms.server_mean,
      ttft_inflation_mean_ms: .ttft_truth_ms.inflation_mean,
      user_ttft_inflation_mean_ms: .ttft_truth_ms.user_timed_inflation_mean,
      exact_share: .receive_clock_exact_share,
      lag_p99_ms: .p99_schedule_lag_ms, max_rho: .client_bias.max_rho,
      events: ([.client_bias.workers[].events] | add), send_window_s: .send_window,
      verdict: .client_bias.verdict, cause: .client_bias.cause,
      reason: .client_bias.reason }' "$out/runs/$name-$rate.json")")
  done
done
printf '%s\n' "${rows[@]}" | jq -s --arg cost "$cost_us" --argjson dur "$duration" \
  '{asyncio_cost_us: ($cost|tonumber), duration_s: $dur, rows: .}' > "$out/table.json.tmp"
mv "$out/table.json.tmp" "$out/table.json"
{
  echo "| client | k | target QPS | achieved QPS | completed | failed | client delay p50 (ms) | client delay p99 (ms) | TTFT p50 wire (ms) | TTFT p50 user (ms) | TTFT p99 user (ms) | TTFT inflation wire, mean (ms) | TTFT inflation user, mean (ms) | exact share | max ρ_k | verdict |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  jq -r 'def r3: . * 1000 | round / 1000; .rows[] | "| \(.client) | \(.workers) | \(.target_qps) | \(.achieved_qps*10|round/10) | \(.completed) | \(.failed) | \(.client_delay_p50_ms|r3) | \(.client_delay_p99_ms|r3) | \(.ttft_p50_ms|r3) | \(.user_ttft_p50_ms|r3) | \(.user_ttft_p99_ms|r3) | \(.ttft_inflation_mean_ms|r3) | \(.user_ttft_inflation_mean_ms|r3) | \(.exact_share*1000|round/1000) | \(.max_rho*100|round/100) | \(.verdict) |"' "$out/table.json"
  # What the README's record check needs: the commit measured, and the
  # code whose change makes the table stale.
  echo
  echo "- command: \`scripts/reproduce_paper.sh${invocation:+ $invocation}\`; commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown); $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nproc) CPUs, $(uname -sr); load average at start $load_start (machine.md has the rest)"
  echo "- measures: loadgen simserver common models scripts/reproduce_paper.sh"
} > "$out/table.md.tmp"
mv "$out/table.md.tmp" "$out/table.md"

# Machine facts and the exact commands.
{
  echo "# Machine and commands"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs (client and server share them)"
  echo "- kernel: $(uname -sr)"
  echo "- memory: $(free -g | awk '/^Mem:/{print $2}') GiB"
  echo "- rhobench: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- simserver: \`simserver --port 0 --workers 1\` (zero latency)"
  echo "- asyncio emulation: --client-cost exp:$cost_us (µs per received event)"
  echo "- TTFT inflation = TTFT measured from the intended send time minus simserver's true TTFT (queue + prefill, from its stamps), mean over requests; wire: from the kernel's receive time of the first token; user: from its delivery to the client's code, as a client that timestamps on processing measures it"
  echo "- client delay = delivery - kernel receive time, per token; exact share = tokens whose kernel time is exact (loadgen/README.md)"
  echo "- load average at start: $load_start"
  echo
  echo "Invocation: \`scripts/reproduce_paper.sh${invocation:+ $invocation}\`"
  echo
  echo '```'
  printf '%s\n' "${commands[@]}"
  echo '```'
} > "$out/machine.md"

# Plots: achieved against target, and the client's delay; one row a rate,
# one column a client.
{
  echo "# target_qps achieved(k1 kN emulated) delay_p99_ms(k1 kN emulated)"
  jq -r --arg kn "loadgen-k$ncpu" '[.rows[] | {r: .target_qps, c: .client, a: .achieved_qps, d: .client_delay_p99_ms}]
      | group_by(.r)[] | . as $g
      | [$g[0].r] + ([ "loadgen-k1", $kn, "asyncio-emulated"] | map(. as $c | ($g[] | select(.c == $c) | .a)))
                  + ([ "loadgen-k1", $kn, "asyncio-emulated"] | map(. as $c | ($g[] | select(.c == $c) | .d)))
      | map(tostring) | join(" ")' "$out/table.json"
} > "$out/table.dat"
cat > "$out/plots.gp" <<GP
# gnuplot script for table.dat (run from $out: gnuplot plots.gp)
set terminal pngcairo size 900,560 noenhanced font ",11"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set key top left
set xlabel "target rate (requests/s, Poisson)"
set output "achieved.png"
set title "Achieved rate: the same Poisson arrivals offered by three clients"
set ylabel "achieved requests/s"
set yrange [0:*]
plot "table.dat" using 2:xtic(1) title "loadgen k=1", "" using 3 title "loadgen k=$ncpu", \
     "" using 4 title "asyncio-emulated (k=1, $cost_us us/event)"
set output "client_delay.png"
set title "Client delay per token, p99 (delivery - kernel receive time)"
set ylabel "ms (log scale)"
set logscale y
set yrange [0.01:*]
plot "table.dat" using 5:xtic(1) title "loadgen k=1", "" using 6 title "loadgen k=$ncpu", \
     "" using 7 title "asyncio-emulated (k=1, $cost_us us/event)"
GP
if command -v gnuplot >/dev/null 2>&1; then (cd "$out" && gnuplot plots.gp); else echo "reproduce_paper: gnuplot not installed: wrote table.dat and plots.gp only" >&2; fi
cat "$out/table.md"
echo "reproduce_paper: wrote $out/table.md, table.json, machine.md, runs/, and plots" >&2
