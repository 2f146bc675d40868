#!/usr/bin/env bash
# Does the client's busy time per request depend on the prompt's size or on
# the number of connections open? The certificate's cost model has terms per
# request, per delivery, per event and per non-streamed response, none per
# byte sent or per connection (issue: "per request (including the body's
# bytes sent) ... and per open connection if it matters"). This measures
# both at one rate, one worker, everything else equal:
#   base     16-word prompts, 16 tokens, simserver's time to first token 20 ms
#   p4000    4,000-word prompts
#   p8000    8,000-word prompts
#   p16000   16,000-word prompts
#   conns    as base against a simserver whose first token comes after 500 ms:
#            about 7x the connections open at the same rate
# Each run: --stage RATE:3 --stage RATE:10, the second stage's busiest
# worker's rho compared (its busy time per request = rho / achieved rate).
# Placed as a certificate places k=1: simserver alone on CPU 0 at nice 10,
# the worker on CPU 1. The variants alternate, RUNS rounds; out.tsv has
# one line per run, summary.md the medians and the differences to base.
#   results/loadgen/cost-terms/run.sh BUILD OUT [RUNS] [RATE]
# BUILD: a built tree; OUT: a new directory. A benchmark of this host.
set -euo pipefail
build=${1:?usage: run.sh BUILD OUT [RUNS] [RATE]}
out=${2:?usage: run.sh BUILD OUT [RUNS] [RATE]}
runs=${3:-3}
rate=${4:-600}
here=$(cd "$(dirname "$0")/../../.." && pwd)
lg=$build/loadgen/loadgen sim=$build/simserver/simserver
[ -x "$lg" ] && [ -x "$sim" ] || { echo "run.sh: no loadgen or simserver in $build" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]?$ ]] || { echo "run.sh: RUNS must be 1-99" >&2; exit 2; }
mkdir "$out"
# shellcheck source=scripts/lib/sim.sh
source "$here/scripts/lib/sim.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
flags=(--inter-token-latency 4ms --inter-token-latency-std-dev 2ms)
SIM_WRAP="taskset -c 0 nice -n 10" sim_start "$out" sim "$sim" --time-to-first-token 20ms "${flags[@]}"
pids+=("$SIM_PID"); fast=$SIM_URL
SIM_WRAP="taskset -c 0 nice -n 10" sim_start "$out" sim-slow "$sim" --time-to-first-token 500ms "${flags[@]}"
pids+=("$SIM_PID"); slow=$SIM_URL
start=$(date -u +%Y-%m-%dT%H:%M:%SZ) load0=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$runs"); do
  for v in base p4000 p8000 p16000 conns; do
    url=$fast in=16
    case $v in p4000) in=4000 ;; p8000) in=8000 ;; p16000) in=16000 ;; conns) url=$slow ;; esac
    res=$out/$v-$i.json
    timeout 120 "$lg" --base-url "$url" --ignore-eos --quiet --no-progress --num-workers 1 \
      --worker-cpus 1 --random-input-len "$in" --random-output-len 16 --seed "$i" \
      --stage "$rate:3" --stage "$rate:10" --max-connections-per-worker 4096 \
      --save-result --result-dir "$out" --result-filename "$(basename "$res")" 2>"$out/err"
    jq -r --arg v "$v" --arg i "$i" '.stages[1] as $s
      | [$v, $i, $s.achieved_rate, $s.client_bias.max_rho, $s.p99_schedule_lag_ms,
         ($s.client_bias.max_rho / $s.achieved_rate * 1e6)] | @tsv' "$res" >>"$out/out.tsv"
    tail -n 1 "$out/out.tsv"
  done
done
{
  echo "# Busy time per request against the prompt's size and the connections open"
  echo
  echo "- command: \`results/loadgen/cost-terms/run.sh $build $out $runs $rate\`"
  echo "- commit $(git -C "$here" rev-parse --short HEAD); from $start to $(date -u +%Y-%m-%dT%H:%M:%SZ); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, Linux $(uname -r); load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
  echo "- one worker on CPU 1, simserver alone on CPU 0 at nice 10; $rate requests/s, 16 output tokens; the second stage (10 s) of each run"
  echo
  echo "| variant | runs | achieved req/s (median) | rho (median) | busy us per request (median) | minus base (us) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  awk -F'\t' '
    function med(s,   v, n, i, j, t) { n = split(s, v, " "); for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    { if (!($1 in n)) order[++no] = $1; n[$1]++; a[$1] = a[$1] " " $3; r[$1] = r[$1] " " $4; b[$1] = b[$1] " " $6 }
    END { base = med(b["base"])
      for (o = 1; o <= no; o++) { v = order[o]
        printf "| %s | %d | %.1f | %.3f | %.1f | %+.1f |\n", v, n[v], med(a[v]), med(r[v]), med(b[v]), med(b[v]) - base } }' "$out/out.tsv"
} >"$out/summary.md"
cat "$out/summary.md"
