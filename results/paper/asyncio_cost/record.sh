#!/usr/bin/env bash
# Records the CPU per received chunk of scripts/measure_asyncio_cost.py
# against two simservers started side by side (1 ms inter-token latency:
# one chunk per socket read; zero latency: a whole response per read), the
# two measured in turn in each repetition (the order alternates), so that a
# repetition's ratio compares runs made under the same host load. Writes
# raw.jsonl (the script's own JSON line per run, with its repetition, server,
# command and the 1-minute load average before it) and summary.md beside
# this file.
#   results/paper/asyncio_cost/record.sh [--build DIR] [--reps N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build="$root/build" reps=7
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "record.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if ! [[ "$reps" =~ ^[0-9]+$ ]] || [ "$reps" -eq 0 ]; then echo "record.sh: --reps must be a positive integer" >&2; exit 2; fi
sim="$build/simserver/simserver"
[ -x "$sim" ] || { echo "record.sh: no $sim (build first)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/asyncio-cost.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# start NAME FLAGS...: a simserver on a free loopback port; sets PORT.
start() {
  local name=$1
  shift
  "$sim" --port 0 "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 1 100); do
    PORT=$(sed -n 's|^listening http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$work/$name.out" | head -n 1)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  echo "record.sh: simserver $name did not start" >&2; exit 1
}
start paced --inter-token-latency 1ms
port_paced=$PORT
start zero
port_zero=$PORT
commit=$(git -C "$root" rev-parse --short HEAD)
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$work/raw.jsonl"
for i in $(seq 1 "$reps"); do
  if [ $((i % 2)) -eq 1 ]; then order="paced zero"; else order="zero paced"; fi
  for s in $order; do
    if [ "$s" = paced ]; then p=$port_paced flags="--inter-token-latency 1ms"; else p=$port_zero flags=""; fi
    la=$(cut -d' ' -f1 /proc/loadavg)
    line=$(python3 "$root/scripts/measure_asyncio_cost.py" "$p" 2000 64 16)
    jq -c --argjson rep "$i" --arg s "$s" --arg la "$la" --arg flags "$flags" \
      '{rep: $rep, server: $s, simserver: ("simserver --port 0 " + $flags), command: "scripts/measure_asyncio_cost.py PORT 2000 64 16", loadavg_1m: ($la | tonumber)} + .' \
      <<<"$line" >>"$work/raw.jsonl"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "**CPU per received chunk of a minimal asyncio client** (raw: raw.jsonl)"
  echo
  echo "- command: \`results/paper/asyncio_cost/record.sh --reps $reps\` (each run: \`scripts/measure_asyncio_cost.py PORT 2000 64 16\`)"
  echo "- date: $date_start to $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $commit"
  echo "- measures: scripts/measure_asyncio_cost.py"
  echo "- host: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs online, $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME"), Python $(python3 -c 'import sys; print(sys.version.split()[0])'); shared with other work"
  echo "- load average: $load_before before, $load_after after"
  echo
  echo "| rep | 1 ms ITL (µs/chunk) | zero latency (µs/chunk) | ratio (same rep) | load (1 min, before the rep) |"
  echo "| --- | --- | --- | --- | --- |"
  jq -r -s 'group_by(.rep)[] | (map(select(.server == "paced"))[0]) as $a | (map(select(.server == "zero"))[0]) as $b
    | "| \($a.rep) | \($a.cpu_us_per_chunk * 100 | round / 100) | \($b.cpu_us_per_chunk * 100 | round / 100) | \($a.cpu_us_per_chunk / $b.cpu_us_per_chunk * 100 | round / 100) | \($a.loadavg_1m) |"' "$work/raw.jsonl"
  jq -r -s 'def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    (map(select(.server == "paced") | .cpu_us_per_chunk) | med) as $a
    | (map(select(.server == "zero") | .cpu_us_per_chunk) | med) as $b
    | (group_by(.rep) | map((map(select(.server == "paced"))[0].cpu_us_per_chunk) / (map(select(.server == "zero"))[0].cpu_us_per_chunk)) | med) as $r
    | "| **median** | **\($a * 100 | round / 100)** | **\($b * 100 | round / 100)** | **\($r * 100 | round / 100)** (median of the per-rep ratios) | |"' "$work/raw.jsonl"
  echo
  echo "Chunks per run: $(jq -s -r 'map(.chunks) | unique | map(tostring) | join(", ")' "$work/raw.jsonl"); requests per run: $(jq -s -r 'map(.requests) | unique | map(tostring) | join(", ")' "$work/raw.jsonl")."
} >"$work/summary.md"
mv "$work/raw.jsonl" "$here/raw.jsonl.tmp" && mv "$here/raw.jsonl.tmp" "$here/raw.jsonl"
mv "$work/summary.md" "$here/summary.md.tmp" && mv "$here/summary.md.tmp" "$here/summary.md"
cat "$here/summary.md"
