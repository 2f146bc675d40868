#!/usr/bin/env bash
# The certificate's cost model against the utilisation it predicts: for each
# workload below, loadgen runs against one simserver (ITL 4 ms +- 2 ms, so
# every event is its own read, as in the calibration) with --certificate,
# and its report's certificate_check gives each stage's predicted rho per
# worker beside the busiest worker's measured one. The open-loop workloads
# run at the rate the model predicts at rho TARGET (from loadgen --dry-run),
# 3 s then 10 s at that rate, the second stage compared (it starts in the
# steady state the model predicts) and counted only when it held the rate;
# the closed-loop one at the concurrency that gives that rate by Little's
# law (the rate times a request's time on this simulator, 20 ms + 4 ms a
# token), predicted from the rate it completed. The same operating point for
# all: below rho 0.2 the client costs more per event than the linear model
# says (fewer events share a wake-up), which a lower rho would measure
# instead of the workload. Runs alternate the workloads, RUNS times; the table gives the
# median of measured / predicted - 1 per workload and k. The runs are placed
# as the certificate was measured (its calibration_load.placement): for a k
# with a CPU to spare, simserver alone on the simulator's CPU at nice 10 and
# the workers on the others (--worker-cpus), as a server on another host
# would leave them; a k without, or one the certificate measured shared
# (per_k[].placement), shares every CPU with simserver at nice 0.
#   scripts/bench_predict.sh [--build DIR] [--certificate FILE] [--runs N]
#                            [--workers LIST] [--target RHO] [--out FILE]
#                            [--keep DIR]
# Without --certificate each run certifies the host first (calibrate
# --quick), so that the model and the runs it predicts are measured minutes
# apart, not hours: this host's speed drifts by 20-30% between hours. --out: the record
# (markdown, with the command, commit and machine facts); without it the
# table is only printed. --keep: copy the calibrations (their steps) and
# loadgen's reports into DIR (made; it must not exist), for fitting other
# cost models offline. A benchmark of this host, not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" cert="" runs=3 workers="1 2" target=0.3 out="" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --certificate) cert=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --workers) workers=${2//,/ }; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "bench_predict: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "bench_predict: --runs must be a positive integer" >&2; exit 2; }
awk -v t="$target" 'BEGIN { exit !(t > 0 && t < 1) }' || { echo "bench_predict: --target must be in (0, 1)" >&2; exit 2; }
for k in $workers; do [[ "$k" =~ ^[1-9][0-9]*$ ]] || { echo "bench_predict: --workers takes whole numbers" >&2; exit 2; }; done
lg="$build/loadgen/loadgen" sim="$build/simserver/simserver" cal="$build/calibrate/calibrate"
[ -z "$keep" ] || [ ! -e "$keep" ] || { echo "bench_predict: --keep: '$keep' exists" >&2; exit 2; }
for b in "$lg" "$sim" "$cal"; do [ -x "$b" ] || { echo "bench_predict: no $b (build first)" >&2; exit 2; }; done
work=$(mktemp -d "${TMPDIR:-/tmp}/rb-predict.XXXXXX")
source "$here/scripts/lib/sim.sh"
trap '[ -z "${SIM_PID:-}" ] || kill "$SIM_PID" 2>/dev/null || true; [ -z "$keep" ] || cp -r "$work" "$keep"; rm -rf "$work"' EXIT
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
given=$cert
[ -z "$given" ] || [ -f "$given" ] || { echo "bench_predict: no certificate '$given'" >&2; exit 2; }
sim_flags=(--time-to-first-token 20ms --inter-token-latency 4ms --inter-token-latency-std-dev 2ms)
# shellcheck source=scripts/lib/placement.sh
source "$here/scripts/lib/placement.sh"
# place_sim CERT K: simserver (started again) and the workers' flags for k
# workers, as the certificate placed them (worker_flags)
place_sim() {
  placement_for "$1" "$2"
  if [ -n "${SIM_PID:-}" ]; then kill "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null || true; fi
  SIM_WRAP=$PLACE_SIM_WRAP sim_start "$work" sim "$sim" "${sim_flags[@]}"
  worker_flags=(${PLACE_WORKER_FLAGS[@]+"${PLACE_WORKER_FLAGS[@]}"})
  echo "bench_predict: k=$2: $PLACE_WHY" >&2
}
# name|loadgen flags (the prompt in words, as --random-input-len takes it;
# CLOSED: a closed loop, its concurrency from the rate at rho TARGET)
workloads=(
  "out16|--random-input-len 16 --random-output-len 16"
  "out256|--random-input-len 16 --random-output-len 256"
  "prompt4000|--random-input-len 4000 --random-output-len 64"
  "chat128|--endpoint /v1/chat/completions --random-input-len 16 --random-output-len 128"
  "nostream32|--no-stream --random-input-len 16 --random-output-len 32"
  "closed128|CLOSED --random-input-len 16 --random-output-len 128"
)
rows="$work/rows.tsv" models="$work/models.txt" skipped="$work/skipped.txt"
: >"$rows"
: >"$models"
: >"$skipped"
for i in $(seq 1 "$runs"); do
  if [ -z "$given" ]; then
    echo "bench_predict: run $i: certifying this host (calibrate --quick)" >&2
    # exit 1: some k was not certified (the others are; below)
    crc=0
    "$cal" --quick --quiet --no-plot --out-dir "$work/cal-$i" >"$work/cal-$i.txt" 2>&1 || crc=$?
    cert="$work/cal-$i/certificate.json"
    if [ "$crc" -ne 0 ]; then
      echo "bench_predict: run $i: calibrate exited $crc; its levels and verdicts:" >&2
      sed -n '/^measured levels/,/^cost model/p; /^k=[0-9]*: /p; /^the host was not quiet/p' "$work/cal-$i.txt" >&2
      [ -f "$cert" ] || { echo "bench_predict: run $i: no certificate" >&2; exit 1; }
    fi
  fi
  echo "- run $i: $(jq -c '{cost_model: (.cost_model | {per_request_us, per_delivery_us, per_event_us, per_plain_response_us}), cost_scale: [.per_k[] | {workers, cost_scale}]}' "$cert")" >>"$models"
  for k in $workers; do
    if ! jq -e --argjson k "$k" 'any(.per_k[]; .workers == $k and .safe_rho != null)' "$cert" >/dev/null; then
      echo "bench_predict: run $i k=$k: not certified by its calibration: skipped" >&2
      echo "- run $i: k=$k not certified by its calibration (calibrate --quick): its workloads skipped" >>"$skipped"
      continue
    fi
    place_sim "$cert" "$k"
    common=(--base-url "$SIM_URL" --ignore-eos --quiet --no-progress --certificate "$cert" --force
            ${worker_flags[@]+"${worker_flags[@]}"})
    for w in "${workloads[@]}"; do
      name=${w%%|*}
      # shellcheck disable=SC2206 # the flags are words
      flags=(${w#*|})
      open_flags=()
      for f in "${flags[@]}"; do
        [ "$f" = CLOSED ] || open_flags+=("$f")
      done
      # the rate at which the model predicts rho TARGET (rho is linear in the rate)
      p=$("$lg" --dry-run "${common[@]}" "${open_flags[@]}" --num-workers "$k" --request-rate 1000 \
            --num-prompts 1000 2>&1 | sed -n 's/^stage 0: predicted rho per worker \([0-9.]*\).*/\1/p')
      [ -n "$p" ] || { echo "bench_predict: $name: no prediction from --dry-run" >&2; exit 1; }
      rate=$(awk -v p="$p" -v t="$target" 'BEGIN { printf "%.1f", 1000 * t / p }')
      if [ ${#open_flags[@]} -lt ${#flags[@]} ]; then
        out_len=$(printf '%s\n' "${flags[@]}" | awk 'prev == "--random-output-len" { print; exit } { prev = $0 }')
        conc=$(awk -v r="$rate" -v n="$out_len" 'BEGIN { c = int(r * (0.020 + 0.004 * n) + 0.5); print (c < 1 ? 1 : c) }')
        plan=(--max-concurrency "$conc" --num-prompts "$(awk -v r="$rate" 'BEGIN { print int(r * 10) }')")
        flags=("${open_flags[@]}")
      else
        # a first stage of 3 s at the same rate, not compared: the second
        # (10 s) starts with every response length in flight, where the
        # prediction (a steady state) applies; a single stage would count the
        # ramp while the first responses are young (256 tokens at 4 ms: the
        # first second carries half the load, measured rho 5% low over 10 s).
        # Connections per worker for the responses in flight, twice over
        # (loadgen's default cap, 512, held 32-token non-streamed responses
        # at 3,500 requests/s a worker where 4,900 were planned).
        out_len=$(printf '%s\n' "${flags[@]}" | awk 'prev == "--random-output-len" { print; exit } { prev = $0 }')
        conns=$(awk -v r="$rate" -v n="$out_len" -v k="$k" 'BEGIN { c = int(2 * r / k * (0.020 + 0.004 * n)) + 64; print (c < 512 ? 512 : c) }')
        plan=(--stage "$rate:3" --stage "$rate:10" --max-connections-per-worker "$conns")
      fi
      res="$work/$name-$k-$i.json"
      timeout 180 "$lg" "${common[@]}" "${flags[@]}" "${plan[@]}" --num-workers "$k" --seed "$i" \
        --save-result --result-dir "$work" --result-filename "$(basename "$res")" \
        2>"$work/err" || { echo "bench_predict: $name k=$k run $i failed: $(tail -n 3 "$work/err")" >&2; exit 1; }
      # the last stage is compared; an open loop's held its rate when it
      # dispatched 95% of it with a schedule lag p99 under 10 ms (a row that
      # did not measured another rate than the one predicted: shown, not in
      # the median)
      jq -r --arg n "$name" --arg k "$k" --arg i "$i" '
        .certificate_check as $c | ($c.stages | length - 1) as $l | ($c.stages[$l]) as $s
        | (.stages[$l] // {}) as $st
        | (if (($st.request_rate // null) | type) != "number" then 1
           elif ($st.achieved_rate >= 0.95 * $st.request_rate and $st.p99_schedule_lag_ms < 10) then 1
           else 0 end) as $held
        | [$n, $k, $i, ($st.achieved_rate // .request_throughput // .achieved_rate), $s.predicted_rho,
           $s.measured_rho, ($s.measured_rho / $s.predicted_rho - 1), $held] | @tsv' "$res" >>"$rows"
      tail -n 1 "$rows" | awk -F'\t' '{ printf "run %s k=%s %-11s %8.1f req/s  predicted %.3f measured %.3f  (%+.0f%%)%s\n", $3, $2, $1, $4, $5, $6, 100 * $7, $8 ? "" : "  rate not held: not in the median" }'
    done
  done
done
table=$(awk -F'\t' '
  function med(s,   v, n, i, j, t) { n = split(s, v, " "); for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  { key = $1 "\t" $2; if (!(key in runs)) order[++no] = key; runs[key]++
    if ($8) { held[key]++; e[key] = e[key] " " $7; pr[key] = pr[key] " " $5; mr[key] = mr[key] " " $6; r[key] = r[key] " " $4 } }
  END {
    print "| workload | k | achieved req/s (median) | predicted rho | measured rho | measured / predicted - 1 (median) | runs (rate held) |"
    print "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    for (o = 1; o <= no; o++) { key = order[o]; split(key, kk, "\t")
      if (held[key]) printf "| %s | %s | %.1f | %.3f | %.3f | %+.0f%% | %d (%d) |\n", kk[1], kk[2], med(r[key]), med(pr[key]), med(mr[key]), 100 * med(e[key]), runs[key], held[key]
      else printf "| %s | %s | - | - | - | rate never held | %d (0) |\n", kk[1], kk[2], runs[key] }
  }' "$rows")
echo
echo "$table"
if [ -n "$out" ]; then
  tmp="$out.tmp.$$"
  {
    echo "# Predicted against measured rho per worker"
    echo
    echo "- command: \`scripts/bench_predict.sh --runs $runs --workers \"$workers\" --target $target${given:+ --certificate $given}\`"
    echo "- commit $commit; $(date -u +%Y-%m-%dT%H:%M:%SZ); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, Linux $(uname -r); load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
    echo "- the certificates' cost models (per_request_us, per_delivery_us, per_event_us, per_plain_response_us; each k's cost_scale):"
    cat "$models"
    cat "$skipped"
    echo "- placement: for each k with a CPU to spare, simserver alone on the certificate's simulator CPU at nice 10 and the workers on its worker CPUs, unless its entry says it was measured shared; else shared CPUs"
    echo "- measures: loadgen/lg_cert.c loadgen/lg_plan.c calibrate/cal_fit.c calibrate/main.c scripts/bench_predict.sh"
    echo
    echo "$table"
  } >"$tmp"
  mv "$tmp" "$out"
  echo "bench_predict: wrote $out"
fi
