#!/usr/bin/env bash
# One k=1 worker at low and middle rates against calibrate's simulator
# (4 ms +- 2 ms between tokens, 16 tokens), placed as calibrate places k=1
# (simserver alone on CPU 0 at nice 10, the worker on CPU 1), shared (both
# CPUs, simserver at nice 19), and placed with a nice-19 spinner on the
# worker's CPU (which keeps that vCPU from halting between events):
# the client's delay per token and its busy time per event at each rate.
#   run.sh REPS BUILD_DIR OUT_DIR
set -u
reps=${1:-2} B=${2:?build dir} out=${3:?out dir}
mkdir -p "$out"; res=$out/res.txt
for r in $(seq 1 "$reps"); do
  for v in placed shared spin; do
    port=$((30000 + RANDOM % 20000))
    case $v in
      shared) nice -n 19 "$B/simserver/simserver" --host 127.0.0.1 --port $port --inter-token-latency 4000us --inter-token-latency-std-dev 2000us >"$out/sim.log" 2>&1 & ;;
      *) taskset -c 0 nice -n 10 "$B/simserver/simserver" --host 127.0.0.1 --port $port --inter-token-latency 4000us --inter-token-latency-std-dev 2000us >"$out/sim.log" 2>&1 & ;;
    esac
    sim=$!
    spin=""
    if [ $v = spin ]; then timeout 120 taskset -c 1 nice -n 19 bash -c 'while :; do :; done' & spin=$!; fi
    sleep 0.5
    for rate in 20 50 300 1000; do
      f=(); [ $v != shared ] && f=(--worker-cpus 1)
      "$B/loadgen/loadgen" --base-url http://127.0.0.1:$port --endpoint /v1/completions --model sim-model \
        --num-workers 1 --request-rate $rate --duration 4 --seed $((r * 10 + rate)) --random-input-len 16 \
        --random-output-len 16 "${f[@]}" --save-result --result-dir "$out" --result-filename "$v-$r-$rate.json" \
        --quiet --no-progress >/dev/null 2>"$out/$v-$r-$rate.err"
      jq -r --arg v $v --arg r $r --arg rate $rate '.client_bias as $b | ($b.workers[0]) as $w |
        [$v, $r, $rate, ($w.rho*1000|round/1000), (if $w.event_rate_per_s > 0 then ($w.rho / $w.event_rate_per_s * 1e6 * 10 | round / 10) else null end),
         (($b.client_delay_us.mean // $b.overhead_per_token_us.mean) * 10 | round / 10), (($b.pickup_delay_us.mean // null) | if . then (. * 10 | round / 10) else . end), ($b.host.run_delay_share // null)] | @tsv' \
        "$out/$v-$r-$rate.json" | tee -a "$res"
    done
    [ -n "$spin" ] && kill $spin 2>/dev/null
    kill $sim; wait $sim 2>/dev/null
  done
done
