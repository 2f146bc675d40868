#!/usr/bin/env bash
# What the kernel receive clock costs: loadgen's CPU time (user + sys) per
# request with --receive-clock kernel (every read stamped, plus a TCP_INFO
# and a queue-depth call per read) against --receive-clock user, side by
# side on the same zero-latency simulator and arrival stream, alternating
# the two so that host drift hits both. Prints and writes a Markdown record.
#   scripts/bench_receive_clock.sh [--build DIR] [--runs N] [--rate R]
#                                  [--duration S] [--out FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="" runs=3 rate=2000 duration=5 out="$here/results/loadgen/receive_clock.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "bench_receive_clock: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$runs" "$rate" "$duration"; do
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
cmd=("$build/loadgen/loadgen" --base-url "$url" --num-workers 1 --request-rate "$rate"
     --duration "${duration}s" --random-input-len 16 --random-output-len 16 --seed 1 --quiet
     --no-progress --save-result --result-dir "$work" --result-filename r.json)
declare -A per_req
for i in $(seq 1 "$runs"); do
  for clock in kernel user; do
    /usr/bin/time -f "%U %S" -o "$work/time" "${cmd[@]}" --receive-clock "$clock" 2>/dev/null
    read -r u s <"$work/time"
    n=$(jq .completed "$work/r.json")
    us=$(awk -v u="$u" -v s="$s" -v n="$n" 'BEGIN { printf "%.2f", (u + s) * 1e6 / n }')
    per_req[$clock]+="$us "
    echo "run $i $clock: $n requests, user $u s, sys $s s, $us us per request" >&2
  done
done
med() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mk=$(med "${per_req[kernel]}") mu=$(med "${per_req[user]}")
ratio=$(awk -v k="$mk" -v u="$mu" 'BEGIN { printf "%.3f", k / u }')
mkdir -p "$(dirname "$out")"
{
  echo "# The kernel receive clock's CPU cost"
  echo
  echo "loadgen's user + sys CPU per request, one worker, zero-latency simserver, 16 output"
  echo "tokens, Poisson at $rate req/s for $duration s; $runs runs of each clock, alternating."
  echo
  echo "| receive clock | per run (us/request) | median (us/request) |"
  echo "| --- | --- | --- |"
  echo "| kernel | ${per_req[kernel]}| $mk |"
  echo "| user | ${per_req[user]}| $mu |"
  echo
  echo "Median ratio kernel / user: **$ratio**."
  echo
  echo "- command: \`scripts/bench_receive_clock.sh --runs $runs --rate $rate --duration $duration\`"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs shared by client and server; kernel $(uname -r)"
  echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
