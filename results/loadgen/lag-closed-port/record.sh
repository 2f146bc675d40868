#!/usr/bin/env bash
# How much of the schedule lag is the host's: loadgen k=1 at 1,000/s for 3 s
# against a closed loopback port (no server work at all; every request a
# connect failure), with normal scheduling and with --realtime-priority 10,
# the two alternating in each repetition so that both meet the same load.
# Writes raw.jsonl (each run's lag figures, rho, preemptions, the 1-minute
# load average before it) and summary.md beside this file.
#   results/loadgen/lag-closed-port/record.sh [--build DIR] [--reps N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build="$root/build" reps=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "record.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if ! [[ "$reps" =~ ^[0-9]+$ ]] || [ "$reps" -eq 0 ]; then echo "record.sh: --reps must be a positive integer" >&2; exit 2; fi
lg="$build/loadgen/loadgen"
[ -x "$lg" ] || { echo "record.sh: no $lg (build first)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/lag-closed.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmd="loadgen --base-url http://127.0.0.1:9 --num-workers 1 --request-rate 1000 --duration 3s --random-input-len 8 --random-output-len 8"
commit=$(git -C "$root" rev-parse --short HEAD)
d0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
la0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$work/raw.jsonl"
for i in $(seq 1 "$reps"); do
  if [ $((i % 2)) -eq 1 ]; then order="normal realtime"; else order="realtime normal"; fi
  for mode in $order; do
    extra=()
    [ "$mode" = realtime ] && extra=(--realtime-priority 10)
    la=$(cut -d' ' -f1 /proc/loadavg)
    rm -f "$work/r.json"
    # shellcheck disable=SC2086
    timeout -s KILL 30 "$build/loadgen/"$cmd ${extra[@]+"${extra[@]}"} --quiet --no-progress \
      --save-result --result-dir "$work" --result-filename r.json 2>>"$work/err" || true
    [ -s "$work/r.json" ] || { cat "$work/err" >&2; echo "record.sh: no report ($mode, rep $i)" >&2; exit 1; }
    jq -c --argjson rep "$i" --arg mode "$mode" --arg la "$la" \
      '{rep: $rep, mode: $mode, loadavg_1m: ($la | tonumber), dispatched, failures_by_class,
        median_schedule_lag_ms, p99_schedule_lag_ms, achieved_ratio,
        rho: [.client_bias.workers[].rho], preemptions: [.client_bias.workers[].preemptions]}' \
      "$work/r.json" >>"$work/raw.jsonl"
  done
done
{
  echo "**Schedule lag against a closed port, normal scheduling and SCHED_FIFO side by side** (raw: raw.jsonl)"
  echo
  echo "- command: \`results/loadgen/lag-closed-port/record.sh --reps $reps\`; each run: \`$cmd\`, with and without \`--realtime-priority 10\`, alternating"
  echo "- date: $d0 to $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $commit; $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs online, $(uname -sr); shared with other work"
  echo "- load average: $la0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
  echo
  echo "| rep | lag p99 normal (ms) | lag p99 realtime (ms) | ratio (same rep) | preemptions normal / realtime | load (1 min) |"
  echo "| --- | ---: | ---: | ---: | --- | --- |"
  jq -r -s 'group_by(.rep)[] | (map(select(.mode == "normal"))[0]) as $a | (map(select(.mode == "realtime"))[0]) as $b
    | "| \($a.rep) | \($a.p99_schedule_lag_ms * 1000 | round / 1000) | \($b.p99_schedule_lag_ms * 1000 | round / 1000) | \($a.p99_schedule_lag_ms / $b.p99_schedule_lag_ms * 10 | round / 10) | \($a.preemptions[0]) / \($b.preemptions[0]) | \($a.loadavg_1m) |"' "$work/raw.jsonl"
  jq -r -s 'def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    (map(select(.mode == "normal") | .p99_schedule_lag_ms) | med) as $a
    | (map(select(.mode == "realtime") | .p99_schedule_lag_ms) | med) as $b
    | (group_by(.rep) | map((map(select(.mode == "normal"))[0].p99_schedule_lag_ms) / (map(select(.mode == "realtime"))[0].p99_schedule_lag_ms)) | med) as $r
    | "| **median** | **\($a * 1000 | round / 1000)** | **\($b * 1000 | round / 1000)** | **\($r * 10 | round / 10)** (median of the per-rep ratios) | | |"' "$work/raw.jsonl"
  echo
  echo "Requests per run (dispatched): $(jq -s -r 'map(.dispatched) | unique | map(tostring) | join(", ")' "$work/raw.jsonl"); worker rho: $(jq -s -r 'map(.rho[0] * 1000 | round / 1000) | min' "$work/raw.jsonl")-$(jq -s -r 'map(.rho[0] * 1000 | round / 1000) | max' "$work/raw.jsonl")."
} >"$work/summary.md"
mv "$work/raw.jsonl" "$here/raw.jsonl.tmp" && mv "$here/raw.jsonl.tmp" "$here/raw.jsonl"
mv "$work/summary.md" "$here/summary.md.tmp" && mv "$here/summary.md.tmp" "$here/summary.md"
cat "$here/summary.md"
