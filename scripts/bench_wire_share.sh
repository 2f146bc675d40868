#!/usr/bin/env bash
# The wire clock's share of tokens timed from the capture, for two builds of
# loadgen run in turn against one simserver (k workers, each with a fresh
# capture handle; TTFT 20 ms, ITL 5 ms, 12 tokens): a comparison of a build
# before a change to the capture with one after it, side by side.
#   scripts/bench_wire_share.sh BUILD_A BUILD_B [RUNS (default 3)] [K (default 2)]
# Prints one line per run and a table of medians (share, fallbacks, packets).
# Needs CAP_NET_RAW (root). Writes nothing outside a temporary folder.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
a=${1:?usage: bench_wire_share.sh BUILD_A BUILD_B [RUNS] [K]} b=${2:?usage: bench_wire_share.sh BUILD_A BUILD_B [RUNS] [K]}
runs=${3:-3} k=${4:-2}
case "$runs$k" in *[!0-9]*) echo "bench_wire_share: RUNS and K must be whole numbers" >&2; exit 2 ;; esac
for d in "$a" "$b"; do
  [ -x "$d/loadgen/loadgen" ] || { echo "bench_wire_share: no $d/loadgen/loadgen" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/rb-wire-share.XXXXXX")
source "$here/scripts/lib/sim.sh"
trap 'kill "${SIM_PID:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
sim_start "$work" sim "$b/simserver/simserver" --time-to-first-token 20ms --inter-token-latency 5ms
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$runs"); do
  for side in A B; do
    d=$a; [ "$side" = B ] && d=$b
    timeout 120 "$d/loadgen/loadgen" --base-url "$SIM_URL" --num-workers "$k" --request-rate 40 \
      --num-prompts 80 --random-input-len 16 --random-output-len 12 --ignore-eos --seed "$i" \
      --receive-clock wire --quiet --no-progress --save-result --result-dir "$work" \
      --result-filename "$side-$i.json" 2>"$work/$side-$i.err" ||
      { echo "bench_wire_share: run $side $i failed: $(cat "$work/$side-$i.err")" >&2; exit 1; }
    jq -r --arg s "$side" --arg i "$i" \
      '"run \($i) \($s): wire share \(.receive_clock_wire_share), fallbacks \(.capture.fallbacks), packets \(.capture.packets), drops \(.capture.drops)"' \
      "$work/$side-$i.json"
  done
done
med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo
echo "| build | runs | median wire share | median fallbacks (of $((80 * 12)) tokens) | median packets |"
echo "| --- | ---: | ---: | ---: | ---: |"
for side in A B; do
  d=$a; [ "$side" = B ] && d=$b
  s=$(for f in "$work/$side"-*.json; do jq .receive_clock_wire_share "$f"; done | med)
  fb=$(for f in "$work/$side"-*.json; do jq .capture.fallbacks "$f"; done | med)
  p=$(for f in "$work/$side"-*.json; do jq .capture.packets "$f"; done | med)
  echo "| $side | $runs | $s | $fb | $p |"
done
