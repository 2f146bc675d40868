#!/usr/bin/env bash
# Teaching demo: the client as a queue, seen live. A single loadgen worker is
# slowed by a known cost per received event (--client-cost), so its event
# loop is a queue whose service time we control. A short sweep drives its
# measured utilisation rho from ~0.1 to ~0.9; at each step we record the
# client's waiting time per token (receive time minus simserver's send stamp,
# less the transport floor) and the arrivals its loop saw: simserver runs
# with scripts/lib/sendlog.c preloaded, which logs the time of each write it
# makes to a client socket (a delivery), and each step's squared coefficient
# of variation ca2 of the gaps between deliveries is computed from that log.
# The wait is plotted against rho beside two curves, neither fitted, both from
# the loop's own measured service moments: Pollaczek-Khinchine's M/G/1
# W_q = rho/(1-rho) * E[S^2]/(2E[S]) (Poisson arrivals, ca2 = 1) and Kingman's
# G/G/1 W_q ~ rho/(1-rho) * (ca2 + cs2)/2 * E[S] with the measured ca2. Then
# it explains the picture.
#   scripts/demo.sh [--out DIR] [--cost exp:200] [--step-seconds 3] [--build DIR]
# Writes DIR/demo.png, demo.dat, demo.gp, demo.txt, summary.json (per step:
# rho, the measured, PK and Kingman waits, ca2, cs2, the ratios), summary.md
# (the same as a table), and steps/ (each step's loadgen result NAME.json
# and simserver's deliveries during it, NAME.sends: t_ns bytes events).
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
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "demo: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$cost" =~ ^(fixed|exp):[0-9]+$ ]] || { echo "demo: --cost: want fixed:US or exp:US, got '$cost'" >&2; exit 2; }
[[ "$step_s" =~ ^[0-9]+$ ]] && [ "$step_s" -ge 1 ] || { echo "demo: --step-seconds: must be a whole number >= 1, got '$step_s'" >&2; exit 2; }
[ -n "$build" ] || build=$("$here/scripts/setup.sh" | tail -n 1)
sim="$build/simserver/simserver" lg="$build/loadgen/loadgen"
mkdir -p "$out/steps"
rm -f "$out"/steps/*.sends "$out/steps.jsonl"

# The arrivals the loop sees are simserver's writes: logged from inside
# simserver by a preloaded library, so neither program is changed for it.
sendlog="$out/steps/sendlog.so" sends="$out/steps/all.sends"
cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$sendlog" "$here/scripts/lib/sendlog.c" -ldl \
  || { echo "demo: cannot build scripts/lib/sendlog.c with cc (it measures the arrivals' ca2)" >&2; exit 1; }
: >"$sends"

sim_pid=""
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null; true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# Paced tokens with jitter: each request's 16 tokens come about 2 ms apart,
# interleaved with the other requests' streams. That is not the Poisson
# stream M/G/1 assumes, and the measured ca2 says by how much.
# shellcheck source=scripts/lib/sim.sh
source "$here/scripts/lib/sim.sh"
# A sanitizer build's runtime wants to be loaded first; the library only
# forwards and logs, so the order does not matter to it.
LD_PRELOAD=$sendlog RB_SENDLOG=$sends ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
  sim_start "$out/steps" simserver "$sim" --inter-token-latency 2ms --inter-token-latency-std-dev 1ms \
  --seed 3 || { echo "demo: simserver did not start" >&2; exit 1; }
sim_pid=$SIM_PID url=$SIM_URL

step() { # name rate extra...: one loadgen run, and the deliveries it received
  local name=$1 rate=$2 n0
  shift 2
  n0=$(wc -l <"$sends")
  "$lg" --base-url "$url" --num-workers 1 --request-rate "$rate" --duration "${step_s}s" --seed 5 \
    --random-input-len 16 --random-output-len 16 --request-timeout 20s --drain-timeout 5s \
    --save-result --result-dir "$out/steps" --result-filename "$name.json" --quiet --no-progress "$@" >/dev/null
  tail -n "+$((n0 + 1))" "$sends" >"$out/steps/$name.sends"
}
# arrivals FILE: the gaps between deliveries in a .sends file, as JSON. ca2 =
# var/mean^2 of the gaps between successive writes (population variance), the
# loop's arrivals (one write, one readable socket); ca2_events counts each SSE
# event as its own arrival (events written together: gaps of 0).
arrivals() {
  sort -n -k1,1 "$1" | awk '
    { if (NR > 1) { g = $1 - p; n++; s += g; ss += g * g } else t0 = $1
      p = $1
      for (j = 0; j < $3; j++) {
        if (ne_any) { g = $1 - pe; ne++; se += g; sse += g * g }
        pe = $1; ne_any = 1
      }
      ev += $3 }
    function cv2(k, a, b) { return (k > 0 && a > 0) ? sprintf("%.9g", (b / k - (a / k) ^ 2) / (a / k) ^ 2) : "null" }
    END { span = (p - t0) / 1e9
          rate = (span > 0) ? sprintf("%.6g", n / span) : "null"
          gap = (n > 0) ? sprintf("%.6g", s / n / 1e3) : "null"
          printf "{\"deliveries\":%d,\"events\":%d,\"span_s\":%.6f,\"delivery_rate_per_s\":%s,\"mean_gap_us\":%s,\"ca2\":%s,\"ca2_events\":%s}\n",
            NR, ev, span, rate, gap, cv2(n, s, ss), cv2(ne, se, sse) }'
}
echo "demo: transport floor (no injected cost, 20 req/s)" >&2
step floor 20
[ -s "$out/steps/floor.sends" ] || { echo "demo: simserver's writes were not logged (LD_PRELOAD of $sendlog did not take)" >&2; exit 1; }
floor_us=$(jq '.client_bias.overhead_per_token_us.mean' "$out/steps/floor.json")
echo "demo: probing the loop's service time with --client-cost $cost" >&2
step probe 20 --client-cost "$cost"
# Busy time per request at this cost: rho / rate. Rates for the target rhos follow.
busy_per_req=$(jq '.client_bias.workers[0].rho / .achieved_rate' "$out/steps/probe.json")
for target in 0.15 0.3 0.45 0.6 0.7 0.8 0.87 0.92; do
  rate=$(jq -n --argjson t $target --argjson b "$busy_per_req" '($t / $b * 10 | round) / 10')
  echo "demo: target rho $target -> $rate req/s" >&2
  step "rho-$target" "$rate" --client-cost "$cost"
  # One row per step. rho_service = lambda E[S] (callbacks/s x mean service
  # time) is the utilisation loadgen's PK figure uses, so both formulas see
  # the same rho, and at ca2 = 1 Kingman's formula is PK's.
  jq -c --argjson floor "$floor_us" --arg step "rho-$target" --argjson target "$target" \
      --argjson a "$(arrivals "$out/steps/rho-$target.sends")" '
      def num: if type == "number" then . else null end;
      .client_bias.workers[0] as $w
      | ($w.callback_rate_per_s * $w.mean_service_us * 1e-6) as $rs
      | ($w.second_moment_us2 / ($w.mean_service_us * $w.mean_service_us) - 1) as $cs2
      | (.client_bias.overhead_per_token_us.mean - $floor) as $m
      | ($w.predicted_wq_us | num) as $pk
      | (if $a.ca2 != null and $rs < 1 then $rs / (1 - $rs) * ($a.ca2 + $cs2) / 2 * $w.mean_service_us else null end) as $kg
      | {step: $step, target_rho: $target, offered_rate: .request_rate, achieved_rate,
         rho: $w.rho, rho_service: $rs, callback_rate_per_s: $w.callback_rate_per_s,
         mean_service_us: $w.mean_service_us, second_moment_us2: $w.second_moment_us2, cs2: $cs2,
         measured_wq_us: $m, pk_wq_us: $pk, kingman_wq_us: $kg}
        + ($a | {ca2, ca2_events, deliveries, events, delivery_rate_per_s, mean_gap_us})
        + {measured_over_pk: (if $pk != null and $pk > 0 then $m / $pk else null end),
           measured_over_kingman: (if $kg != null and $kg > 0 then $m / $kg else null end)}' \
      "$out/steps/rho-$target.json" >>"$out/steps.jsonl"
done
jq -s --arg cost "$cost" --argjson floor "$floor_us" --argjson step_s "$step_s" \
    --argjson fa "$(arrivals "$out/steps/floor.sends")" --argjson pa "$(arrivals "$out/steps/probe.sends")" '
    def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def nums: map(select(type == "number"));
    ([.[] | select(.rho >= 0.7)]) as $hi
    | {cost: $cost, step_seconds: $step_s, floor_us: $floor,
       floor_arrivals: $fa, probe_arrivals: $pa,
       kingman_formula: "rho_service/(1-rho_service) * (ca2 + cs2)/2 * mean_service_us, rho_service = callback_rate_per_s * mean_service_us * 1e-6, cs2 = second_moment_us2/mean_service_us^2 - 1",
       pk_formula: "loadgen'"'"'s workers[0].predicted_wq_us: callback_rate E[S^2] / (2 (1 - rho_service))",
       measured_formula: "client_bias.overhead_per_token_us.mean - floor_us",
       steps: .,
       median_ca2: ([.[].ca2] | nums | median),
       high_rho: {min_rho: 0.7, steps: ($hi | length),
                  median_measured_over_pk: ([$hi[].measured_over_pk] | nums | median),
                  median_measured_over_kingman: ([$hi[].measured_over_kingman] | nums | median)}}' \
    "$out/steps.jsonl" >"$out/summary.json.tmp"
mv "$out/summary.json.tmp" "$out/summary.json"
rm -f "$out/steps.jsonl"

# demo.dat: the first seven columns as before the Kingman curve; NaN where a
# figure is undefined (gnuplot skips it).
{
  echo "# rho wait_us predicted_wq_us offered_rate achieved_rate es_us es2_us2 kingman_wq_us ca2 cs2 rho_service ca2_events"
  jq -r '.steps[] | [.rho, .measured_wq_us, .pk_wq_us, .offered_rate, .achieved_rate, .mean_service_us,
         .second_moment_us2, .kingman_wq_us, .ca2, .cs2, .rho_service, .ca2_events]
         | map(if . == null then "NaN" else tostring end) | join(" ")' "$out/summary.json"
} >"$out/demo.dat.tmp"
mv "$out/demo.dat.tmp" "$out/demo.dat"
# The table, for people: 3 decimals below 100, whole numbers above.
jq -r 'def f: if . == null then "-" elif (if . < 0 then -. else . end) >= 100 then (round | tostring)
              else (. * 1000 | round / 1000 | tostring) end;
  "| step | offered (req/s) | rho | rho_s = λE[S] | measured W_q (µs) | PK W_q (µs) | Kingman W_q (µs) | ca2 | ca2 per event | cs2 | measured / PK | measured / Kingman |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  (.steps[] | "| \(.step) | " + ([.offered_rate, .rho, .rho_service, .measured_wq_us, .pk_wq_us, .kingman_wq_us,
      .ca2, .ca2_events, .cs2, .measured_over_pk, .measured_over_kingman] | map(f) | join(" | ")) + " |")' \
  "$out/summary.json" >"$out/summary.md.tmp"
mv "$out/summary.md.tmp" "$out/summary.md"

# The loop's residual service time E[S^2]/(2E[S]), from its own measurements.
# The median over steps: at high rho one wake-up serves several tokens, so S
# grows a little with the load; each step's own prediction is plotted too.
# Kingman's curve likewise takes the median over steps of (ca2 + cs2)/2 E[S].
median() { sort -g | awk '{v[NR] = $1} END {if (NR) printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
resid=$(awk '!/^#/ {print $7 / (2 * $6)}' "$out/demo.dat" | median)
vking=$(jq -r '.steps[] | select(.ca2 != null) | (.ca2 + .cs2) / 2 * .mean_service_us' "$out/summary.json" | median)
es=$(awk '!/^#/ {s += $6; n++} END {printf "%.1f", s / n}' "$out/demo.dat")
ca2_med=$(jq -r '.median_ca2 // "NaN"' "$out/summary.json")
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
V = ${vking:-NaN}
CA2 = $ca2_med
pk(x) = x / (1 - x) * R
kg(x) = x / (1 - x) * V
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "red"
set label "rho = 1: no steady state" right at 0.98, graph 0.05 tc rgb "red"
plot [0:0.97] pk(x) with lines lw 2 lc rgb "#1f77b4" title sprintf("Pollaczek-Khinchine M/G/1 (Poisson, ca2 = 1): E[S^2]/2E[S] = %.0f us", R), \
     kg(x) with lines lw 2 dt 2 lc rgb "#d62728" title sprintf("Kingman G/G/1, measured ca2 (median %.1f): (ca2+cs2)/2 E[S] = %.0f us", CA2, V), \
     "demo.dat" using 1:(\$2 > 0 ? \$2 : 1/0) with points pt 7 ps 1.5 lc rgb "black" title "measured (receive - server stamp - transport)", \
     "demo.dat" using 1:3 with points pt 6 ps 1.5 lc rgb "#1f77b4" title "PK from each step's own moments", \
     "demo.dat" using 1:8 with points pt 4 ps 1.5 lc rgb "#d62728" title "Kingman from each step's own ca2 and moments"
GP
if command -v gnuplot >/dev/null 2>&1; then (cd "$out" && gnuplot demo.gp); else echo "demo: gnuplot not installed: wrote demo.dat and demo.gp only" >&2; fi

lo=$(awk '!/^#/ {print; exit}' "$out/demo.dat")
hi=$(awk '!/^#/ {l = $0} END {print l}' "$out/demo.dat")
read -r rlo wlo _ <<<"$lo"
read -r rhi whi _ ohi ahi _ <<<"$hi"
fmt() { if [ "$1" = null ] || [ "$1" = NaN ]; then printf "n/a"; else printf "%.${2:-0}f" "$1"; fi; }
S() { jq -r "$1" "$out/summary.json"; }
nums='[.steps[] | select(.ca2 != null) | ' # prefix of a filter over the steps with a ca2
if awk -v a="$ahi" -v o="$ohi" 'BEGIN {exit !(a < 0.95 * o)}'; then
  last_step="At the last step the client delivered only $(fmt "$ahi" 0) of the $(fmt "$ohi" 0) requests/s it was asked for."
else
  last_step="At the last step the client still delivered the $(fmt "$ohi" 0) requests/s it was asked for, yet each token waited $(awk -v w="$whi" -v e="$es" 'BEGIN {printf "%.0f", w / e}') times the loop's mean service time: the rate was reached, the latencies were not real."
fi
n_hi=$(S '.high_rho.steps')
if [ "$n_hi" -gt 0 ]; then
  hi_text="At the $n_hi steps with rho >= 0.7 the measured wait was, in the median, $(fmt "$(S '.high_rho.median_measured_over_pk')" 2) times PK's and $(fmt "$(S '.high_rho.median_measured_over_kingman')" 2) times Kingman's."
else
  hi_text="No step reached rho 0.7 on this run, so the two curves were not compared where they part most."
fi
{
cat <<TXT
What the picture shows. One loadgen worker was slowed by a known cost per
received token ($cost µs), so its event loop served each wake-up in E[S] =
$(fmt "$es" 0) µs on average. As the offered rate rose, the loop's measured
utilisation rho rose with it, and the time each token waited inside the client
before being timestamped grew: $(fmt "$wlo" 0) µs at rho = $(fmt "$rlo" 2), but
$(fmt "$whi" 0) µs at rho = $(fmt "$rhi" 2). The curves are not fitted to these
points. The solid one is Pollaczek-Khinchine's W_q = rho/(1-rho) * E[S^2]/(2E[S])
with the loop's own measured moments ($(fmt "$resid" 0) µs of residual service, the
median over the steps; the open circles use each step's own moments). The wait
grows without bound as rho -> 1 because of the 1/(1-rho) factor; past rho = 1
there is no steady state at all. $last_step

Why two curves. PK is exact for Poisson arrivals: gaps between arrivals with
a squared coefficient of variation ca2 = 1. The loop's arrivals here are not
Poisson. Each request's tokens come in a paced stream, 2 ms apart, then
nothing until the next request's stream, and its last token, usage chunk and
[DONE] come in one write. The demo logged every write simserver made to the
client (scripts/lib/sendlog.c) and measured the gaps between those
deliveries: ca2 = $(fmt "$(S "$nums.ca2] | min")" 1) to $(fmt "$(S "$nums.ca2] | max")" 1) over the steps (median $(fmt "$ca2_med" 1); $(fmt "$(S "$nums.ca2_events] | min")" 1) to $(fmt "$(S "$nums.ca2_events] | max")" 1) counting
each SSE event as its own arrival), not 1. Kingman's G/G/1 approximation,
W_q ~ rho/(1-rho) * (ca2 + cs2)/2 * E[S], takes that in: the dashed curve uses
the measured ca2 with the same service moments (cs2 = E[S^2]/E[S]^2 - 1,
median (ca2 + cs2)/2 * E[S] = $(fmt "$vking" 0) µs), and the open squares each step's own;
at ca2 = 1 it is PK exactly. Kingman's is a heavy-traffic approximation: it
is meant for rho near 1 and overstates the wait at low rho.
$hi_text (summary.md has every step.)

Which curve the certificate stands for. calibrate computes neither curve
from moments. It fits d = c + R rho/(1-rho) to its measured delays with R
free (weighted least squares in rho/(1-rho)), and its model_rho is where the
fit's upper bound reaches the budget, rho = budget/(budget + R). The
certificate names the model M/G/1 Pollaczek-Khinchine (Poisson requests), or
with calibrate --kingman G/G/1 Kingman with ca2 = 0 (requests at a constant
rate), but the fit is the same in both, and the second_moment_us2 written
beside it is 2 R E[S] in both: R read as PK's E[S^2]/(2E[S]). A fitted R
takes in whatever variability the loop's arrivals have: on paced streams it
came out 1.8-2.9 times PK's figure (calibrate/README.md), as Kingman's
(ca2 + cs2)/2 E[S] with ca2 > 1 says it should. So the certified rho stands
for the measured curve, not for either formula. The ca2 = 0 of --kingman is
the requests' arrivals, not the loop's deliveries, which stay paced streams.
Only the self-test compares R with PK's, and for that it makes the loop's
arrivals Poisson (one-token responses).

Why it matters. A benchmark client that timestamps tokens when its loop gets
to them records this wait as server latency: TTFT, ITL and TPOT all inflate,
although the simulator's stamps show the server sent every token on time.
Splitting the same arrivals over k processes divides each loop's rho by k
(rho_k = lambda/(k mu)), which moves the client to the flat left of these
curves. That is what loadgen does, what calibrate certifies for this host, and
why every report carries each worker's rho, PK's predicted wait and a verdict.
TXT
} > "$out/demo.txt.tmp"
mv "$out/demo.txt.tmp" "$out/demo.txt"
cat "$out/demo.txt"
echo
cat "$out/summary.md"
echo
echo "demo: wrote $out/demo.png, demo.dat, demo.gp, demo.txt, summary.json, summary.md and steps/"
