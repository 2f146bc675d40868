#!/usr/bin/env bash
# Teaching demo: the client as an M/G/1 queue, seen live. A single loadgen
# worker is slowed by a known cost per received event (--client-cost), so its
# event loop is a queue whose service time we control. A short sweep drives
# its measured utilisation rho from ~0.1 to ~0.9; at each step we record the
# client's waiting time per token (receive time minus simserver's send stamp,
# less the transport floor) and plot it against rho, beside the
# Pollaczek-Khinchine curve W_q = rho/(1-rho) * E[S^2]/(2E[S]) computed from
# the loop's own measured service moments. Then it explains the picture.
#   scripts/demo.sh [--out DIR] [--cost exp:200] [--step-seconds 3] [--build DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/rhobench-out/demo"
cost="exp:200"
step_s=3
build=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --cost) cost=$2; shift 2 ;;
    --step-seconds) step_s=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "demo: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$cost" =~ ^(fixed|exp):[0-9]+$ ]] || { echo "demo: --cost: want fixed:US or exp:US, got '$cost'" >&2; exit 2; }
[[ "$step_s" =~ ^[0-9]+$ ]] && [ "$step_s" -ge 1 ] || { echo "demo: --step-seconds: must be a whole number >= 1, got '$step_s'" >&2; exit 2; }
[ -n "$build" ] || build=$("$here/scripts/setup.sh" | tail -n 1)
sim="$build/simserver/simserver" lg="$build/loadgen/loadgen"
mkdir -p "$out/steps"

sim_pid=""
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null; true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# Paced tokens with jitter: events reach the client one by one, from many
# interleaved streams, close to the Poisson arrivals M/G/1 assumes.
# shellcheck source=scripts/lib/sim.sh
source "$here/scripts/lib/sim.sh"
sim_start "$out/steps" simserver "$sim" --inter-token-latency 2ms --inter-token-latency-std-dev 1ms \
  --seed 3 || { echo "demo: simserver did not start" >&2; exit 1; }
sim_pid=$SIM_PID url=$SIM_URL

step() { # name rate extra...
  local name=$1 rate=$2; shift 2
  "$lg" --base-url "$url" --num-workers 1 --request-rate "$rate" --duration "${step_s}s" --seed 5 \
    --random-input-len 16 --random-output-len 16 --request-timeout 20s --drain-timeout 5s \
    --save-result --result-dir "$out/steps" --result-filename "$name.json" --quiet --no-progress "$@" >/dev/null
}
echo "demo: transport floor (no injected cost, 20 req/s)" >&2
step floor 20
floor_us=$(jq '.client_bias.overhead_per_token_us.mean' "$out/steps/floor.json")
echo "demo: probing the loop's service time with --client-cost $cost" >&2
step probe 20 --client-cost "$cost"
# Busy time per request at this cost: rho / rate. Rates for the target rhos follow.
busy_per_req=$(jq '.client_bias.workers[0].rho / .achieved_rate' "$out/steps/probe.json")
: > "$out/demo.dat.tmp"
echo "# rho wait_us predicted_wq_us offered_rate achieved_rate es_us es2_us2" >> "$out/demo.dat.tmp"
for target in 0.15 0.3 0.45 0.6 0.7 0.8 0.87 0.92; do
  rate=$(jq -n --argjson t $target --argjson b "$busy_per_req" '($t / $b * 10 | round) / 10')
  echo "demo: target rho $target -> $rate req/s" >&2
  step "rho-$target" "$rate" --client-cost "$cost"
  jq -r --argjson floor "$floor_us" '[.client_bias.workers[0].rho,
      (.client_bias.overhead_per_token_us.mean - $floor), .client_bias.predicted_wq_us,
      .request_rate, .achieved_rate, .client_bias.workers[0].mean_service_us,
      .client_bias.workers[0].second_moment_us2] | map(tostring) | join(" ")' \
      "$out/steps/rho-$target.json" >> "$out/demo.dat.tmp"
done
mv "$out/demo.dat.tmp" "$out/demo.dat"
# The loop's residual service time E[S^2]/(2E[S]), from its own measurements.
# The median over steps: at high rho one wake-up serves several tokens, so S
# grows a little with the load; each step's own prediction is plotted too.
resid=$(awk '!/^#/ {print $7 / (2 * $6)}' "$out/demo.dat" | sort -g | awk '{v[NR] = $1} END {printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
es=$(awk '!/^#/ {s += $6; n++} END {printf "%.1f", s / n}' "$out/demo.dat")
cat > "$out/demo.gp" <<GP
# gnuplot script for demo.dat (run from $out: gnuplot demo.gp)
set terminal pngcairo size 900,600 noenhanced font ",11"
set output "demo.png"
set title "The client is a queue: waiting time per token against its utilisation rho"
set xlabel "measured utilisation rho of the client's event loop"
set ylabel "client waiting time per token (us, log)"
set logscale y
set grid
set key top left
set xrange [0:1]
R = $resid
pk(x) = x / (1 - x) * R
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "red"
set label "rho = 1: no steady state" right at 0.98, graph 0.05 tc rgb "red"
plot [0:0.97] pk(x) with lines lw 2 title sprintf("Pollaczek-Khinchine, E[S^2]/2E[S] = %.0f us", R), \
     "demo.dat" using 1:(\$2 > 0 ? \$2 : 1/0) with points pt 7 ps 1.5 title "measured (receive - server stamp - transport)", \
     "demo.dat" using 1:3 with points pt 6 ps 1.5 title "PK from each step's own moments"
GP
if command -v gnuplot >/dev/null 2>&1; then (cd "$out" && gnuplot demo.gp); else echo "demo: gnuplot not installed: wrote demo.dat and demo.gp only" >&2; fi

lo=$(awk '!/^#/ {print; exit}' "$out/demo.dat")
hi=$(awk '!/^#/ {l = $0} END {print l}' "$out/demo.dat")
read -r rlo wlo _ <<<"$lo"
read -r rhi whi _ ohi ahi _ <<<"$hi"
fmt() { printf "%.${2:-0}f" "$1"; }
if awk -v a="$ahi" -v o="$ohi" 'BEGIN {exit !(a < 0.95 * o)}'; then
  last_step="At the last step the client delivered only $(fmt "$ahi" 0) of the $(fmt "$ohi" 0) requests/s it was asked for."
else
  last_step="At the last step the client still delivered the $(fmt "$ohi" 0) requests/s it was asked for, yet each token waited $(awk -v w="$whi" -v e="$es" 'BEGIN {printf "%.0f", w / e}') times the loop's mean service time: the rate was reached, the latencies were not real."
fi
{
cat <<TXT
What the picture shows. One loadgen worker was slowed by a known cost per
received token ($cost µs), so its event loop served each wake-up in E[S] =
$(fmt "$es" 0) µs on average. As the offered rate rose, the loop's measured
utilisation rho rose with it, and the time each token waited inside the client
before being timestamped grew: $(fmt "$wlo" 0) µs at rho = $(fmt "$rlo" 2), but
$(fmt "$whi" 0) µs at rho = $(fmt "$rhi" 2). The curve is not fitted to these
points: it is Pollaczek-Khinchine's W_q = rho/(1-rho) * E[S^2]/(2E[S]) with the
loop's own measured moments ($(fmt "$resid" 0) µs of residual service, the
median over the steps; the open circles use each step's own moments). The wait
grows without bound as rho -> 1 because of the 1/(1-rho) factor; past rho = 1
there is no steady state at all. $last_step

Why it matters. A benchmark client that timestamps tokens when its loop gets
to them records this wait as server latency: TTFT, ITL and TPOT all inflate,
although the simulator's stamps show the server sent every token on time.
Splitting the same arrivals over k processes divides each loop's rho by k
(rho_k = lambda/(k mu)), which moves the client to the flat left of this curve.
That is what loadgen does, what calibrate certifies for this host, and why
every report carries each worker's rho, PK's predicted wait and a verdict.
TXT
} > "$out/demo.txt.tmp"
mv "$out/demo.txt.tmp" "$out/demo.txt"
cat "$out/demo.txt"
echo
echo "demo: wrote $out/demo.png, demo.dat, demo.gp, demo.txt and steps/"
