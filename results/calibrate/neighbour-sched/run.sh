#!/usr/bin/env bash
# Which task loadgen's worker waits behind, beside a nice-19 half-core
# neighbour on CPU 0 (scripts/lib/neighbour.sh), or quiet: simserver at nice
# 19 as calibrate starts it (ITL 4 ms +- 2 ms), one worker at 1,800 req/s of
# 16-token streams for 7 s, and `perf sched record -a` over 3 s of it.
#   B=BUILD [OUT=DIR] [SIMCPU=N LGCPU=M] results/calibrate/neighbour-sched/run.sh neighbour|quiet
# SIMCPU / LGCPU pin simserver / loadgen (coordinator and worker) with taskset.
set -u
case "${1:-}" in neighbour|quiet) ;; *) echo "run.sh: say neighbour or quiet" >&2; exit 2 ;; esac
B=${B:-build}   # a build of this commit (the run used a fresh clone of be35ff6, whose code equals e1f5cc5)
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
. "$(dirname "$0")/../../../scripts/lib/neighbour.sh"
${SIMCPU:+taskset -c $SIMCPU} nice -n 19 $B/simserver/simserver --host 127.0.0.1 --port 0 --inter-token-latency 4ms --inter-token-latency-std-dev 2ms > $out/sim.log 2>&1 &
sim=$!
for i in $(seq 50); do grep -q listening $out/sim.log && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' $out/sim.log | head -1)
[ "$1" = neighbour ] && neighbour_start 19 50 60
sleep 1
${LGCPU:+taskset -c $LGCPU} $B/loadgen/loadgen --base-url "$url" --num-workers 1 --request-rate 1800 --num-prompts 12600 --random-input-len 16 --random-output-len 16 --ignore-eos --quiet --no-progress --save-result --result-dir $out --result-filename run.json > $out/lg.out 2>&1 &
lg=$!
sleep 2
perf sched record -a -o $out/ps.data -- sleep 3 > $out/perf.out 2>&1
wait $lg
neighbour_stop
kill $sim; wait $sim 2>/dev/null
jq -c '.client_bias | {max_rho, d: .client_delay_us.mean, p99: .client_delay_us.p99, host}' $out/run.json
