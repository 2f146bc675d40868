#!/usr/bin/env bash
# Where calibrate's simulator and loadgen's worker run, beside the nice-19
# half-core neighbour on CPU 0 (scripts/lib/neighbour.sh) or quiet: simserver
# as calibrate starts it (ITL 4 ms +- 2 ms), one worker at 1,800 req/s of
# 16-token streams for 6 s. Prints one line: the placement and loadgen's
# client_bias (max rho, client delay mean and p99 in us, verdict).
#   B=BUILD [OUT=DIR] results/calibrate/neighbour-placement/run.sh SIM SIMCPU WCPU neighbour|quiet
# SIM: nice19 (simserver at nice 19, as calibrate runs it) or idle (SCHED_IDLE);
# SIMCPU: a CPU to bind simserver to, or - ; WCPU: a CPU to bind loadgen's
# worker process alone to (its coordinator stays free), or - .
set -u
usage() { echo "run.sh: SIM(nice19|idle) SIMCPU(N|-) WCPU(N|-) neighbour|quiet" >&2; exit 2; }
[ $# -eq 4 ] || usage
sim_mode=$1 sp=$2 wp=$3 nb=$4
case "$sim_mode" in nice19) pre=(nice -n 19) ;; idle) pre=(chrt -i 0) ;; *) usage ;; esac
case "$nb" in neighbour|quiet) ;; *) usage ;; esac
case "$sp$wp" in *[!0-9-]*) usage ;; esac
B=${B:-build}
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
rate=1800
. "$(dirname "$0")/../../../scripts/lib/neighbour.sh"
trap neighbour_stop EXIT
[ "$sp" != - ] && pre=(taskset -c "$sp" "${pre[@]}")
"${pre[@]}" "$B/simserver/simserver" --host 127.0.0.1 --port 0 --inter-token-latency 4ms \
  --inter-token-latency-std-dev 2ms > "$out/sim.log" 2>&1 &
sim=$!
for _ in $(seq 50); do grep -q listening "$out/sim.log" && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$out/sim.log" | head -1)
[ -n "$url" ] || { echo "run.sh: simserver did not start (see $out/sim.log)" >&2; kill $sim; exit 1; }
[ "$nb" = neighbour ] && neighbour_start 19 50 30
sleep 1
timeout 40 "$B/loadgen/loadgen" --base-url "$url" --num-workers 1 --request-rate $rate \
  --num-prompts $((rate * 6)) --random-input-len 16 --random-output-len 16 --ignore-eos --quiet \
  --no-progress --save-result --result-dir "$out" --result-filename run.json > "$out/lg.out" 2>&1 &
lg=$!
if [ "$wp" != - ]; then
  # the worker is loadgen's first child; bind it (all its threads) alone
  w=""
  for _ in $(seq 100); do w=$(pgrep -P $lg | head -1); [ -n "$w" ] && break; sleep 0.02; done
  [ -n "$w" ] && taskset -a -p -c "$wp" "$w" > /dev/null
fi
wait $lg
neighbour_stop
kill $sim; wait $sim 2>/dev/null
printf "%s %s %s %s " "$sim_mode" "$sp" "$wp" "$nb"
jq -c '.client_bias | {rho: .max_rho, d: .client_delay_us.mean, p99: .client_delay_us.p99, v: .verdict}' "$out/run.json"
