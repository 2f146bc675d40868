#!/usr/bin/env bash
# One k=1 worker at low and middle rates, placed as calibrate places k=1
# (simserver alone on CPU 0 at nice 10, the worker on CPU 1) and shared
# (both CPUs, simserver at nice 19), with loadgen's CPU latency QoS off
# (--cpu-latency-us off: idle CPUs halt as the cpuidle driver likes) and
# held at 0 us (the default: idle CPUs poll), alternated round by round: the
# worker's rho, its busy time per event, the client's delay per token, its
# pickup (wake-up) part and the p99 schedule lag (ms) at each rate. Writes
# OUT_DIR/res.txt (tab-separated, in that order after qos, placement, round
# and rate) and each run's result JSON. The device needs root: without it the
# held rounds are refused, and their reports say so.
#   run.sh REPS BUILD_DIR OUT_DIR
set -u
reps=${1:-3} B=${2:?build dir} out=${3:?out dir}
mkdir -p "$out"; res=$out/res.txt
for r in $(seq 1 "$reps"); do
  for qos in off 0; do
    for v in placed shared; do
      port=$((30000 + RANDOM % 20000))
      case $v in
        shared) nice -n 19 "$B/simserver/simserver" --host 127.0.0.1 --port $port --inter-token-latency 4000us --inter-token-latency-std-dev 2000us >"$out/sim.log" 2>&1 & ;;
        *) taskset -c 0 nice -n 10 "$B/simserver/simserver" --host 127.0.0.1 --port $port --inter-token-latency 4000us --inter-token-latency-std-dev 2000us >"$out/sim.log" 2>&1 & ;;
      esac
      sim=$!
      sleep 0.5
      for rate in 20 50 300 1000; do
        f=(); [ $v != shared ] && f=(--worker-cpus 1)
        timeout 60 "$B/loadgen/loadgen" --base-url http://127.0.0.1:$port --endpoint /v1/completions --model sim-model \
          --num-workers 1 --request-rate $rate --duration 4 --seed $((r * 10 + rate)) --random-input-len 16 \
          --random-output-len 16 --cpu-latency-us $qos "${f[@]}" --save-result --result-dir "$out" --result-filename "$qos-$v-$r-$rate.json" \
          --quiet --no-progress >/dev/null 2>"$out/$qos-$v-$r-$rate.err"
        jq -r --arg v $v --arg r $r --arg rate $rate --arg qos $qos '.client_bias as $b | ($b.workers[0]) as $w |
          [$qos, $v, $r, $rate, ($w.rho*1000|round/1000), (if $w.event_rate_per_s > 0 then ($w.rho / $w.event_rate_per_s * 1e6 * 10 | round / 10) else null end),
           (($b.client_delay_us.mean // $b.overhead_per_token_us.mean) * 10 | round / 10), (($b.pickup_delay_us.mean // null) | if . then (. * 10 | round / 10) else . end),
           (.p99_schedule_lag_ms * 1000 | round / 1000)] | @tsv' \
          "$out/$qos-$v-$r-$rate.json" | tee -a "$res"
      done
      kill $sim; wait $sim 2>/dev/null
    done
  done
done
