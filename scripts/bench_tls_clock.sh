#!/usr/bin/env bash
# What the receive clocks measure under TLS: one loadgen worker against
# simserver (TTFT 20 ms, tokens 5 ms +/- 1 ms apart, each send stamped),
# over plain HTTP and over TLS (nginx as the terminator in front of the
# same simserver, scripts/lib/nginx_tls.sh), each with the wire clock (under
# TLS, each event timed by the capture of its record: lg_tls_scan) and with
# the kernel's; idle, and with
# the worker slowed by an exponential busy cost per received event (its
# loop's rho is printed). For each: the client's median and p99 ITL against
# simserver's own send-stamp ITL over the same run, the share of tokens the
# kernel stamped exactly, and the loop's rho. Runs alternate, medians of
# --runs. Prints and writes a Markdown record. The wire clock needs
# CAP_NET_RAW (root).
#   scripts/bench_tls_clock.sh [--build DIR] [--runs N] [--cost-us C] [--out FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="" runs=3 cost=15000
out="$here/results/loadgen/tls_clock.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cost-us) cost=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench_tls_clock: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$runs" "$cost"; do
  [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || { echo "bench_tls_clock: '$v' is not a positive integer" >&2; exit 2; }
done
[ -n "$build" ] || build=$("$here/scripts/setup.sh" | tail -n 1)
work=$(mktemp -d "${TMPDIR:-/tmp}/rb-tlsclock.XXXXXX")
sim_pid=""
source "$here/scripts/lib/sim.sh"
source "$here/scripts/lib/nginx_tls.sh"
cleanup() { nginx_tls_stop; [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
sim_start "$work" sim "$build/simserver/simserver" --time-to-first-token 20ms --inter-token-latency 5ms \
  --inter-token-latency-std-dev 1ms --seed 5 || { echo "bench_tls_clock: simserver did not start" >&2; exit 1; }
sim_pid=$SIM_PID
plain=$SIM_URL
nginx_tls_start "$work/nginx" "$SIM_URL" || { echo "bench_tls_clock: nginx did not start" >&2; exit 1; }
tls=$NGINX_URL cert=$NGINX_TLS_CERT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A rows
configs=("http wire" "http kernel" "https wire" "https kernel")
for i in $(seq 1 "$runs"); do
  for load in idle loaded; do
    c=0
    [ "$load" = loaded ] && c=$cost
    for cfg in "${configs[@]}"; do
      read -r scheme clock <<<"$cfg"
      url=$plain extra=()
      [ "$scheme" = https ] && url=$tls extra=(--ca-cert "$cert")
      "$build/loadgen/loadgen" --base-url "$url" "${extra[@]}" --num-workers 1 --request-rate 3 --duration 10s \
        --seed "$i" --random-input-len 16 --random-output-len 16 --client-cost "exp:$c" --receive-clock "$clock" \
        --quiet --no-progress --save-result --result-dir "$work" --result-filename r.json 2>"$work/err" ||
        { echo "bench_tls_clock: loadgen ($cfg, $load) failed: $(cat "$work/err")" >&2; exit 1; }
      line=$(jq -r '[.median_itl_ms, .p99_itl_ms, .server_stamped.median_itl_ms, .server_stamped.p99_itl_ms,
                     .receive_clock_exact_share, (.receive_clock_wire_share // 0), .client_bias.max_rho,
                     .receive_clock] | map(tostring) | join(" ")' "$work/r.json")
      rows["$load/$cfg"]+="$line;"
      echo "run $i $load $cfg: ITL p50 p99, simserver's p50 p99, exact share, wire share, rho, clock: $line" >&2
    done
  done
done
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
col() { # col KEY FIELD: the median over the runs of field FIELD (1-based)
  local vals=() r
  IFS=';' read -r -a rs <<<"${rows[$1]}"
  for r in "${rs[@]}"; do [ -n "$r" ] && vals+=("$(awk -v f="$2" '{ print $f }' <<<"$r")"); done
  med "${vals[@]}"
}
mkdir -p "$(dirname "$out")"
{
  echo "# The receive clocks under TLS"
  echo
  echo "One worker, 3 requests/s of 16 tokens for 10 s, simserver's tokens 5 ms +/- 1 ms apart; over TLS through nginx"
  echo "(a TLS terminator in front of the same simserver). Medians of $runs runs, the configurations in turn;"
  echo "loaded: an exponential busy cost of $cost us per received event."
  echo
  echo "| load | target | clock | ITL p50 (ms) | ITL p99 (ms) | simserver ITL p50 | simserver ITL p99 | p99 - simserver's (ms) | kernel exact share | wire share | loop rho |"
  echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for load in idle loaded; do
    for cfg in "${configs[@]}"; do
      read -r scheme clock <<<"$cfg"
      k="$load/$cfg"
      p50=$(col "$k" 1) p99=$(col "$k" 2) s50=$(col "$k" 3) s99=$(col "$k" 4)
      d=$(awk -v a="$p99" -v b="$s99" 'BEGIN { printf "%.3f", a - b }')
      echo "| $load | $scheme | $clock | $p50 | $p99 | $s50 | $s99 | $d | $(col "$k" 5) | $(col "$k" 6) | $(col "$k" 7) |"
    done
  done
  echo
  echo "- command: \`scripts/bench_tls_clock.sh --runs $runs --cost-us $cost\`"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- measures: loadgen/lg_rxclock.c loadgen/lg_capture.c loadgen/lg_wire.c loadgen/lg_worker.c scripts/lib/nginx_tls.sh scripts/bench_tls_clock.sh"
  echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) online CPUs shared by client, nginx and server; kernel $(uname -r); $(nginx -v 2>&1)"
  echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
