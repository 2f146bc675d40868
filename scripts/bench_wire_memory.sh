#!/usr/bin/env bash
# The wire clock's memory over a long run: loadgen at a high rate for
# minutes with --receive-clock wire (a capture ring and per-connection
# stream maps in every worker), its processes' resident sets sampled every
# --every seconds from /proc (VmRSS of the coordinator and each worker).
# The bound holds when the last third's samples grow by no more than
# --slack-kib over the largest of the middle third: a leak grows all along,
# while a resident set that only fills what was allocated at the start (the
# capture rings, the pools, the stats region's histograms, whose pages are
# touched as new values land in them, or all at once when a block is copied)
# steps or slows down and stays. A leak of 10 bytes per request at 5,000
# req/s over 200 s is 10 MB. Prints and writes a
# Markdown record with the capture's drops and wire share. Needs CAP_NET_RAW
# (root) for the capture.
#   scripts/bench_wire_memory.sh [--build DIR] [--rate R] [--workers K]
#                                [--duration S] [--every S] [--slack-kib N]
#                                [--out FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="" rate=5000 workers=2 duration=600 every=10 slack=4096
out="$here/results/loadgen/wire_memory.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --slack-kib) slack=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench_wire_memory: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$rate" "$workers" "$duration" "$every" "$slack"; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "bench_wire_memory: '$v' is not a positive integer" >&2; exit 2; }
done
[ "$duration" -ge 120 ] || { echo "bench_wire_memory: --duration must be at least 120 s (three thirds of samples)" >&2; exit 2; }
[ -n "$build" ] || build=$("$here/scripts/setup.sh" | tail -n 1)
work=$(mktemp -d "${TMPDIR:-/tmp}/rb-wiremem.XXXXXX")
sim_pid="" lg_pid=""
cleanup() {
  [ -n "$lg_pid" ] && kill "$lg_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
source "$here/scripts/lib/sim.sh"
sim_start "$work" sim "$build/simserver/simserver" || { echo "bench_wire_memory: simserver did not start" >&2; exit 1; }
sim_pid=$SIM_PID
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/loadgen/loadgen" --base-url "$SIM_URL" --num-workers "$workers" --request-rate "$rate" \
  --duration "${duration}s" --random-input-len 16 --random-output-len 16 --seed 1 --quiet --no-progress \
  --receive-clock wire --save-result --result-dir "$work" --result-filename r.json 2>"$work/err" &
lg_pid=$!
# rss PID: VmRSS in KiB (0 once gone)
rss() { awk '/^VmRSS:/ { print $2; f = 1 } END { if (!f) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }
: >"$work/samples"
t0=$(date +%s)
while kill -0 "$lg_pid" 2>/dev/null; do
  sleep "$every"
  kill -0 "$lg_pid" 2>/dev/null || break
  t=$(( $(date +%s) - t0 ))
  [ "$t" -le "$duration" ] || continue
  total=$(rss "$lg_pid") each="coord $(rss "$lg_pid")"
  for c in $(pgrep -P "$lg_pid" || true); do
    r=$(rss "$c")
    total=$((total + r))
    each+=" worker $r"
  done
  echo "$t $total $each" | tee -a "$work/samples" >&2
done
rc=0
wait "$lg_pid" || rc=$?
lg_pid=""
[ "$rc" -eq 0 ] || { echo "bench_wire_memory: loadgen exited $rc: $(tail -n 5 "$work/err")" >&2; exit 1; }
r="$work/r.json"
n=$(wc -l <"$work/samples")
base=$(awk -v n="$n" 'NR > n / 3 && NR <= n * 2 / 3 { if ($2 > m) m = $2 } END { print m + 0 }' "$work/samples")
late_max=$(awk -v n="$n" 'NR > n * 2 / 3 { if ($2 > m) m = $2 } END { print m + 0 }' "$work/samples")
growth=$((late_max - base))
verdict=$([ "$growth" -le "$slack" ] && echo "bounded" || echo "GROWING")
mkdir -p "$(dirname "$out")"
{
  echo "# The wire clock's memory over $duration s at $rate req/s"
  echo
  echo "loadgen --receive-clock wire, $workers workers, zero-latency simserver, 16 output tokens, Poisson;"
  echo "resident set (VmRSS, KiB) of the coordinator and its workers every $every s."
  echo
  echo "| after (s) | total RSS (KiB) | per process (KiB) |"
  echo "| ---: | ---: | --- |"
  awk '{ t = $1; tot = $2; $1 = ""; $2 = ""; sub(/^  /, ""); printf "| %s | %s | %s |\n", t, tot, $0 }' "$work/samples"
  echo
  echo "- completed $(jq .completed "$r") of $(jq .dispatched "$r") sent, failed $(jq .failed "$r") $(jq -c .failures_by_class "$r"), achieved $(jq -r '.request_throughput | . * 10 | round / 10' "$r") req/s"
  echo "- capture: packets $(jq .capture.packets "$r"), drops $(jq .capture.drops "$r"), fallbacks $(jq .capture.fallbacks "$r"); wire share $(jq .receive_clock_wire_share "$r"); schedule lag p99 $(jq -r '.p99_schedule_lag_ms // .schedule_lag_ms.p99 // "n/a"' "$r") ms"
  echo "- growth: the last third's largest total ($late_max KiB) less the middle third's largest ($base KiB) = $growth KiB, against a slack of $slack KiB: **$verdict**"
  echo "- command: \`scripts/bench_wire_memory.sh --rate $rate --workers $workers --duration $duration --every $every\`"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- measures: loadgen/lg_capture.c loadgen/lg_wire.c"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs shared by client and server; kernel $(uname -r)"
  echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
[ "$verdict" = bounded ]
