#!/usr/bin/env bash
# What each receive clock costs: loadgen's CPU time (user + sys, coordinator
# and workers) per request with --receive-clock wire (a packet capture per
# worker, drained in the read path, besides the kernel's stamps), kernel
# (every read stamped, plus a TCP_INFO call per read) and user, side by side
# on the same zero-latency simulator and arrival stream, alternating the
# three so that host drift hits each; at each rate and worker count. Also the
# wire runs' capture drops, wire share and the largest resident set, and the
# capture's own cost as the workers time it (capture.cost_us_per_request:
# draining the ring and mapping its segments after each read, timed inside
# the run, so the host's run-to-run spread of whole-process CPU, +-20% here,
# does not blur it; the per-token lookups, a search in those segments, are
# not in it): the wire clock is the kernel clock plus that work, so
# 1 + capture / kernel estimates its ratio to the kernel clock without that
# noise. Prints and writes a Markdown record. The wire clock needs
# CAP_NET_RAW (root).
#   scripts/bench_receive_clock.sh [--build DIR] [--runs N] [--rates "R..."]
#                                  [--workers "K..."] [--duration S] [--out FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="" runs=3 rates="2000 5000" workers="1 2" duration=5
out="$here/results/loadgen/receive_clock.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_receive_clock: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$runs" $rates $workers "$duration"; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "bench_receive_clock: '$v' is not a positive integer" >&2; exit 2; }
done
[ -n "$build" ] || build=$("$here/scripts/setup.sh" | tail -n 1)
work=$(mktemp -d "${TMPDIR:-/tmp}/rb-rxclock.XXXXXX")
sim_pid=""
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# simserver on a free loopback port (scripts/lib/sim.sh)
source "$here/scripts/lib/sim.sh"
rc=0
sim_start "$work" sim "$build/simserver/simserver" || rc=$?
sim_pid=$SIM_PID
[ "$rc" -eq 0 ] || { echo "bench_receive_clock: simserver did not start" >&2; exit 1; }
url=$SIM_URL
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A per_req drops share rss capcost
for rate in $rates; do
  for k in $workers; do
    cmd=("$build/loadgen/loadgen" --base-url "$url" --num-workers "$k" --request-rate "$rate"
         --duration "${duration}s" --random-input-len 16 --random-output-len 16 --seed 1 --quiet
         --no-progress --save-result --result-dir "$work" --result-filename r.json)
    for i in $(seq 1 "$runs"); do
      for clock in wire kernel user; do
        key="$rate/$k/$clock"
        /usr/bin/time -f "%U %S %M" -o "$work/time" "${cmd[@]}" --receive-clock "$clock" 2>"$work/err" \
          || { echo "bench_receive_clock: loadgen ($key) failed: $(cat "$work/err")" >&2; exit 1; }
        read -r u s m <"$work/time"
        n=$(jq .completed "$work/r.json")
        us=$(awk -v u="$u" -v s="$s" -v n="$n" 'BEGIN { printf "%.2f", (u + s) * 1e6 / n }')
        per_req[$key]+="$us "
        rss[$key]+="$m "
        if [ "$clock" = wire ]; then
          drops[$key]+="$(jq .capture.drops "$work/r.json") "
          share[$key]+="$(jq .receive_clock_wire_share "$work/r.json") "
          capcost[$key]+="$(jq '.capture.cost_us_per_request | . * 100 | round / 100' "$work/r.json") "
        fi
        echo "$rate req/s k=$k run $i $clock: $n requests, user $u s, sys $s s, $us us per request, max RSS $m KiB" >&2
      done
    done
  done
done
med() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mkdir -p "$(dirname "$out")"
{
  echo "# The receive clocks' CPU cost"
  echo
  echo "loadgen's user + sys CPU per request (coordinator and workers), zero-latency simserver,"
  echo "16 output tokens, Poisson for $duration s; $runs runs of each clock, alternating"
  echo "wire, kernel, user. The host is shared with other work: the load average is below."
  echo
  echo "| rate (req/s) | workers | wire (us/req, runs) | kernel | user | wire median | kernel median | user median | wire / kernel | capture cost (us/req, wire runs) | 1 + capture / kernel (medians) | wire drops | wire share | max RSS wire (KiB) |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for rate in $rates; do
    for k in $workers; do
      w=$(med "${per_req[$rate/$k/wire]}") kk=$(med "${per_req[$rate/$k/kernel]}")
      uu=$(med "${per_req[$rate/$k/user]}")
      r=$(awk -v a="$w" -v b="$kk" 'BEGIN { printf "%.3f", a / b }')
      cc=$(med "${capcost[$rate/$k/wire]}")
      rc=$(awk -v c="$cc" -v b="$kk" 'BEGIN { printf "%.3f", 1 + c / b }')
      echo "| $rate | $k | ${per_req[$rate/$k/wire]}| ${per_req[$rate/$k/kernel]}| ${per_req[$rate/$k/user]}| $w | $kk | $uu | $r | ${capcost[$rate/$k/wire]}| $rc | ${drops[$rate/$k/wire]}| ${share[$rate/$k/wire]}| ${rss[$rate/$k/wire]}|"
    done
  done
  echo
  echo "- command: \`scripts/bench_receive_clock.sh --runs $runs --rates \"$rates\" --workers \"$workers\" --duration $duration\`"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- measures: loadgen/lg_capture.c loadgen/lg_wire.c loadgen/lg_rxclock.c"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs shared by client and server; kernel $(uname -r)"
  echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
