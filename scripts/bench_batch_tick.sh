#!/usr/bin/env bash
# bench_batch_tick.sh: what --batch-tick buys one loadgen worker, against the
# same worker without it, side by side in one run against one simserver
# (zero latency, 16 output tokens, Poisson arrivals, the wire clock where
# this host may capture):
#  1. the highest open-loop rate one worker sustains (scripts/bench_loadgen.sh's
#     search and criteria: achieved/target >= 0.99, schedule lag p99 <= 1 ms,
#     no failure), each --reps times, the two alternated;
#  2. at fixed open-loop rates (--rate, a list; default "4000 8000" req/s) for
#     --duration seconds, alternated --reps times: CPU per request (user +
#     sys of loadgen's whole process tree, GNU time), voluntary context
#     switches per request (the wake-ups), the worker loop's rho, the
#     schedule lag p99, the ticks that overran, the wire share and the
#     median ITL.
# Medians of the repetitions, and the ratio of the medians.
#
#   scripts/bench_batch_tick.sh [--build-dir DIR] [--out FILE] [--tick D]
#        [--reps N] [--rate R] [--duration S] [--no-search]
#        [--loadgen-args "..."]   (extra flags for every loadgen run)
# Writes FILE (default results/loadgen/batch_tick.md) under a temporary name
# first. Loopback only; every run bounded by its duration.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="${RB_BUILD_DIR:-$here/build}"
out="$here/results/loadgen/batch_tick.md"
tick=250us
reps=3
rates="4000 8000"
duration=5
search=1
lg_args=""
cmdline="scripts/bench_batch_tick.sh"
[ $# -eq 0 ] || cmdline+=$(printf ' %q' "$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tick) tick=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rate) rates=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --no-search) search=0; shift ;;
    --loadgen-args) lg_args=$2; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "bench_batch_tick.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$tick" =~ ^[0-9]+(us|ms)$ ]] || { echo "bench_batch_tick.sh: --tick: '$tick' is not a duration such as 250us" >&2; exit 2; }
for v in "$reps" $rates "$duration"; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ] || { echo "bench_batch_tick.sh: '$v' is not a whole number >= 1" >&2; exit 2; }
done
[ "$reps" -le 20 ] && [ "$duration" -le 600 ] || { echo "bench_batch_tick.sh: --reps <= 20, --duration <= 600" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_batch_tick.sh: GNU time is needed (apt-get install time)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench_batch_tick.sh: jq is needed" >&2; exit 2; }
loadgen="$build/loadgen/loadgen"
simserver="$build/simserver/simserver"
[ -x "$loadgen" ] && [ -x "$simserver" ] || { echo "bench_batch_tick.sh: build first: $loadgen" >&2; exit 2; }
source "$here/scripts/lib/sim.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/lg-tick.XXXXXX")
SIM_PID=""
cleanup() {
  [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
read -r -a extra <<<"$lg_args"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "nan" }'; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. The rate searches, alternated.
search_rows=() best_off=() best_on=()
if [ "$search" = 1 ]; then
  for i in $(seq 1 "$reps"); do
    order="off on"
    [ $((i % 2)) -eq 0 ] && order="on off"
    for c in $order; do
      args="$lg_args"
      [ "$c" = on ] && args="$args --batch-tick $tick"
      RB_BUILD_DIR="$build" "$here/scripts/bench_loadgen.sh" --build-dir "$build" \
        --out "$work/search-$c-$i" --workers 1 --servers sim --loadgen-args "$args" \
        >"$work/search.out" 2>"$work/search.err" || true
      best=$(awk -F'|' '$2 ~ /sim/ && $3 + 0 == 1 { sub(/^ +/, "", $4); sub(/ +$/, "", $4); print $4 }' \
        "$work/search-$c-$i/summary.md" 2>/dev/null | head -n 1)
      [[ "$best" =~ ^[0-9]+$ ]] || best=0
      if [ "$c" = on ]; then best_on+=("$best"); else best_off+=("$best"); fi
      search_rows+=("| $i | ${c/on/--batch-tick $tick} | $best |")
      echo "  search $i $c: $best req/s" >&2
    done
  done
fi

# 2. A fixed rate, alternated.
sim_start "$work" sim "$simserver" --workers 1 || { echo "bench_batch_tick.sh: simserver did not start" >&2; exit 1; }
run_fixed() { # run_fixed NAME [FLAGS...]: prints one row's fields
  local name=$1 res="$work/$1.json"
  shift
  rm -f "$res"
  /usr/bin/time -f "%U %S %w" -o "$work/time.txt" "$loadgen" --base-url "$SIM_URL" --num-workers 1 \
    --request-rate "$rate" --duration "${duration}s" --random-input-len 32 --random-output-len 16 \
    --seed 1 --quiet --no-progress --save-result --result-dir "$work" --result-filename "$name.json" \
    --request-timeout 10s --drain-timeout 2s "${extra[@]}" "$@" >>"$work/lg.log" 2>&1 || true
  local u s vcs n
  read -r u s vcs <"$work/time.txt"
  if [ ! -s "$res" ]; then echo "0 nan nan nan nan nan nan nan"; return; fi
  n=$(jq -r .completed "$res")
  awk -v n="$n" -v u="$u" -v s="$s" -v v="$vcs" 'BEGIN { if (n > 0) printf "%d %.2f %.3f ", n, (u + s) * 1e6 / n, v / n; else printf "0 nan nan " }'
  jq -r '[.client_bias.max_rho, (.p99_schedule_lag_ms * 1000), (if .client_bias.batch_tick then
      (.client_bias.batch_tick.ticks_overrun / ([.client_bias.batch_tick.ticks, 1] | max)) else null end),
      .receive_clock_wire_share, .median_itl_ms] | map(if . == null then "-" else tostring end) | join(" ")' "$res" |
    awk '{ printf "%.3f %.0f %s %.3f %.3f\n", $1, $2, ($3 == "-" ? "-" : sprintf("%.3f", $3)), $4, $5 }'
}
fixed_rows=() medians=()
clock=""
for rate in $rates; do
  cpu_off=() cpu_on=() vcs_off=() vcs_on=() rho_off=() rho_on=() lag_off=() lag_on=()
  for i in $(seq 1 "$reps"); do
    order="off on"
    [ $((i % 2)) -eq 0 ] && order="on off"
    for c in $order; do
      if [ "$c" = on ]; then
        read -r n cpu vcs rho lag ovr wire itl < <(run_fixed "on-$rate-$i" --batch-tick "$tick")
        cpu_on+=("$cpu"); vcs_on+=("$vcs"); rho_on+=("$rho"); lag_on+=("$lag")
      else
        read -r n cpu vcs rho lag ovr wire itl < <(run_fixed "off-$rate-$i")
        cpu_off+=("$cpu"); vcs_off+=("$vcs"); rho_off+=("$rho"); lag_off+=("$lag")
        clock=$(jq -r .receive_clock "$work/off-$rate-$i.json" 2>/dev/null || echo "?")
      fi
      fixed_rows+=("| $rate | $i | ${c/on/--batch-tick $tick} | $n | $cpu | $vcs | $rho | $lag | $ovr | $wire | $itl |")
      echo "  $rate req/s, $i $c: $n requests, $cpu us CPU each, $vcs wake-ups each, rho $rho, lag p99 $lag us" >&2
    done
  done
  medians+=("- **$rate req/s, medians, with --batch-tick $tick against without:** CPU per request $(med "${cpu_on[@]}") against $(med "${cpu_off[@]}") us (ratio $(ratio "$(med "${cpu_on[@]}")" "$(med "${cpu_off[@]}")")); voluntary switches per request $(med "${vcs_on[@]}") against $(med "${vcs_off[@]}") (ratio $(ratio "$(med "${vcs_on[@]}")" "$(med "${vcs_off[@]}")")); worker rho $(med "${rho_on[@]}") against $(med "${rho_off[@]}"); schedule lag p99 $(med "${lag_on[@]}") against $(med "${lag_off[@]}") us.")
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$here" diff --quiet HEAD -- loadgen 2>/dev/null || commit="$commit (with uncommitted changes in loadgen/)"
mkdir -p "$(dirname "$out")"
{
  echo "# --batch-tick against the untimed loop, one worker"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $commit"
  echo "- host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores online, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME"); client and server share the cores"
  echo "- load average before: $load_before; after: $load_after"
  echo "- command: $cmdline"
  echo "- measures: loadgen scripts/bench_batch_tick.sh scripts/bench_loadgen.sh"
  echo "- server: simserver --workers 1 (zero latency), 16 tokens per streamed response; receive clock of the runs: $clock"
  echo
  if [ "$search" = 1 ]; then
    echo "## Highest sustained open-loop rate, k=1 (bench_loadgen.sh: achieved >= 0.99, lag p99 <= 1 ms, no failure; --loadgen-args: ${lg_args:-none})"
    echo
    echo "| rep | loadgen | req/s |"
    echo "| --- | --- | --- |"
    printf '%s\n' "${search_rows[@]}"
    echo
    echo "**Median: $(med "${best_on[@]}") req/s with --batch-tick $tick, $(med "${best_off[@]}") req/s without (ratio $(ratio "$(med "${best_on[@]}")" "$(med "${best_off[@]}")")).**"
    echo
  fi
  echo "## At fixed rates for ${duration}s each (open loop, Poisson), alternated"
  echo
  echo "CPU: user + sys of loadgen's process tree (GNU time; start-up, prompt pool and report included); voluntary switches: the tree's, per completed request (each is a wake-up after a sleep)."
  echo
  echo "| req/s | rep | loadgen | completed | CPU per request (us) | voluntary switches per request | worker rho | lag p99 (us) | ticks overrun (share) | wire share | median ITL (ms) |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${fixed_rows[@]}"
  echo
  printf '%s\n' "${medians[@]}"
} >"$work/out.md"
mv "$work/out.md" "$out.tmp" && mv "$out.tmp" "$out"
cat "$out"
