#!/usr/bin/env bash
# README command 1, the main job on the bundled simulator:
#   1. installs what is missing and builds;
#   2. certifies this host (calibrate --quick: the client's own delay against
#      offered load, the PK fit, the safe per-process rate);
#   3. starts simserver with a realistic latency model whose capacity sits in
#      the middle of the sweep (its slots sized from the sweep's top rate);
#   4. sweeps up to a certified rate (refusing any stage beyond the
#      certificate) until a stage saturates: the server's knee, while the
#      client's verdict says whether the client stayed unbiased;
#   5. writes the report and the plots into one folder, and ends with one
#      sentence each on the knee, the client's verdict and the report.
# Needs root only to install missing packages (scripts/setup.sh).
#   scripts/main.sh [--out DIR] [--max-rate R] [--stage-duration S]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/rhobench-out"
max_rate=400
stage_s=5
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --max-rate) max_rate=$2; shift 2 ;;
    --stage-duration) stage_s=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "main: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$max_rate" =~ ^[0-9]+$ ]] && [ "$max_rate" -gt 0 ] || { echo "main: --max-rate: must be a positive integer, got '$max_rate'" >&2; exit 2; }
[[ "$stage_s" =~ ^[0-9]+$ ]] && [ "$stage_s" -gt 0 ] || { echo "main: --stage-duration: must be a positive integer (seconds), got '$stage_s'" >&2; exit 2; }

echo "== 1/5 install and build" >&2
build=$("$here/scripts/setup.sh" --log "$out/setup.log" | tail -n 1)
sim="$build/simserver/simserver" lg="$build/loadgen/loadgen" cal="$build/calibrate/calibrate"
mkdir -p "$out"

echo "== 2/5 certify this host (calibrate --quick, about a minute; its whole output: $out/calibration.txt)" >&2
rm -f "$out/certificate.json" # never a previous run's
cal_rc=0
"$cal" --quick --out-dir "$out/calibration" --out "$out/certificate.json" >"$out/calibration.txt" 2>&1 || cal_rc=$?
# Its verdict per k, and whether the host was quiet; the rest is in the file.
grep -E '^k=[0-9]+: certified|^the host was not quiet|^calibrate: warning' "$out/calibration.txt" | sed 's/^/  /' >&2 || true
[ -f "$out/certificate.json" ] || { tail -n 20 "$out/calibration.txt" >&2; echo "main: calibrate wrote no certificate (exit $cal_rc)" >&2; exit 1; }
# calibrate exits 1 when some k was not certified: the others still are
[ "$cal_rc" -eq 0 ] || echo "main: calibrate exited $cal_rc: going on with the worker counts it certified" >&2
# The sweep's workload, the same in the plan and in the run.
work_args=(--certificate "$out/certificate.json"
           --random-input-len 256 --random-output-len 32 --random-range-ratio 0.5 --seed 11)
# k: the worker count whose certificate carries the most of this workload
# (scripts/lib/pick_k.sh: the dry run's predicted utilisation, or without a
# cost model the reference workload's rates scaled by events per request).
# shellcheck source=scripts/lib/pick_k.sh
source "$here/scripts/lib/pick_k.sh"
pick_k "$out/certificate.json" "$lg" 32 "$(nproc)" "${work_args[@]}" || exit 1
k=$PICK_K cap=$PICK_CAP why=$PICK_WHY
echo "main: $why" >&2
# Where simserver and the workers run: as the certificate measured this k
# (scripts/lib/placement.sh; for a k with a CPU to spare, simserver on a CPU
# of its own, as a server on another host would be).
# shellcheck source=scripts/lib/placement.sh
source "$here/scripts/lib/placement.sh"
placement_for "$out/certificate.json" "$k"
echo "main: $PLACE_WHY" >&2
load_args=(--num-workers "$k" "${work_args[@]}" ${PLACE_WORKER_FLAGS[@]+"${PLACE_WORKER_FLAGS[@]}"})
# Plan the sweep's top at 80% of that capacity (the certificate's requests/s
# are for its own 16-token reference workload, not for these 32-token
# requests).
top=$(jq -n --argjson c "$cap" --argjson m "$max_rate" '[($c * 0.8 | floor), $m] | min')
cap_rate=$cap
[ "$top" -ge 4 ] || { echo "main: the certified utilisation allows only $top req/s of this workload: too low to benchmark" >&2; exit 1; }

# A request takes about 2 ms + 256 x 20 us of prefill and 32 x 5 ms of decode
# (167 ms), up to 1.5 times that with every slot busy (250 ms): slots = rate x
# time. Sized for a capacity near 55% of the top rate, the knee falls in the
# middle of a linear sweep of 6 stages (top/6 ... top).
slots=$(( (top * 55 / 100 * 250 + 999) / 1000 ))
[ "$slots" -ge 2 ] || slots=2
cap_lo=$(( slots * 1000 / 250 )) cap_hi=$(( slots * 1000 / 167 ))
echo "== 3/5 start simserver (prefill 2 ms + 20 us/token, 5 ms ± 1 ms per token, $slots slots: capacity $cap_lo-$cap_hi req/s)" >&2
sim_args=(--workers 1 --prefill-overhead 2ms --prefill-time-per-token 20us
          --inter-token-latency 5ms --inter-token-latency-std-dev 1ms --max-num-seqs "$slots"
          --time-factor-under-load 1.5 --seed 7)
sim_pid=""
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null; true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck source=scripts/lib/sim.sh
source "$here/scripts/lib/sim.sh"
SIM_WRAP=$PLACE_SIM_WRAP sim_start "$out" simserver "$sim" "${sim_args[@]}" ||
  { echo "main: simserver did not start" >&2; exit 1; }
sim_pid=$SIM_PID url=$SIM_URL

echo "== 4/5 benchmark: linear sweep of 6 stages up to $top req/s until a stage saturates (80% of the certified utilisation for this workload with k=$k)" >&2
"$lg" --base-url "$url" "${load_args[@]}" \
  --sweep linear --sweep-stages 6 --sweep-max-rate "$top" --stage-duration "$stage_s" \
  --sweep-until-saturation --drain-timeout 3 \
  --goodput ttft:50 ntpot:10 --save-result --save-detailed --result-dir "$out" \
  --result-filename report.json --no-progress >"$out/summary.txt"
# The stages as they ran (offered -> dispatched, and which saturated); the
# whole vLLM-style table is in summary.txt.
awk '/^-+Stages-+$/ { p = 1; print; next } p && /^-+[^-].*-+$/ { p = 0 } p' "$out/summary.txt"

echo "== 5/5 plots and report.html" >&2
"$here/scripts/plot_run.sh" --certificate "$out/certificate.json" "$out/report.json" "$out/plots" >&2

r="$out/report.json"
knee=$(jq -r --argjson top "$top" 'if .knee then "The server saturates at \(.knee.rate | . * 10 | round / 10) req/s (stage \(.knee.stage) of the sweep, counted from 0; saturated by the \(.knee.cause): \(.knee.criterion))."
  else "No stage saturated up to \($top) req/s: the sweep stayed below every knee." end' "$r")
verdict=$(jq -r '"The client'"'"'s own verdict is \(.client_bias.verdict): \(.client_bias.reason)."' "$r")
echo
echo "rhobench: done."
echo "  certificate      $out/certificate.json  (certified for this job's workload with k=$k: up to $cap_rate req/s)"
echo "  calibration plot $out/calibration/calibration.png"
echo "  per request      $out/report.jsonl"
echo "  plots            $out/plots/latency_profile.png throughput.png ntpot_breakdown.png schedule_lag.png (and .svg)"
echo "  result JSON      $r"
echo "  summary          $out/summary.txt"
echo "The client ran with $why; $PLACE_WHY."
echo "$knee"
echo "$verdict"
echo "The report is $out/report.html (one page, no network: open it in a browser)."
