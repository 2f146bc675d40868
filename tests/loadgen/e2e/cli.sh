#!/usr/bin/env bash
# Invalid values exit 2 with exactly one line on stderr, the whole message
# (naming the flag or config key and the value); --help lists every flag at
# the start of its own line (so "--stage" is not satisfied by "--stage-pause").
source "$(dirname "$0")/lib.sh"
# expect2 MESSAGE ARGS...: exit 2, stderr exactly MESSAGE, nothing on stdout.
expect2() {
  local want=$1; shift
  local rc=0
  "$LOADGEN" "$@" >"$WORK/o" 2>"$WORK/e" || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*': exit $rc, expected 2"
  [ "$(cat "$WORK/e")" = "$want" ] || fail "'$*': message
  '$(cat "$WORK/e")', expected exactly
  '$want'"
  [ ! -s "$WORK/o" ] || fail "'$*': wrote to stdout: $(head -c 200 "$WORK/o")"
}
expect2 "loadgen: --request-rate: must be > 0 (or inf), got '-5'" --request-rate -5
expect2 "loadgen: --num-workers: must be a whole number in [0, 1024], got 'lots'" --num-workers lots
expect2 "loadgen: --base-url: is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to target another host, got 'http://10.0.0.1:8000'" \
  --base-url http://10.0.0.1:8000
expect2 "loadgen: --goodput: unknown metric (known: ttft,tpot,itl,e2el,ntpot), got 'speed:5'" --goodput speed:5
expect2 "loadgen: --stage: expected RATE:DURATION (e.g. 100:10s), got '100'" --stage 100
expect2 "loadgen: --worker-cpus: expected a list of CPU numbers, such as 1 or 0,2-3, got '2-1'" --worker-cpus 2-1
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
expect2 "loadgen: --worker-cpus: CPU 1023 is not one loadgen may run on here (it may run on $allowed), got '1023'" \
  --worker-cpus 1023
echo '{"load": {"stages": [{"rate": -5, "duration": 10}]}}' >"$WORK/bad.json"
expect2 "loadgen: config: load.stages[0].rate: must be a number > 0, got -5" --config "$WORK/bad.json"
echo '{"load": {"typo": 1}}' >"$WORK/typo.json"
expect2 "loadgen: config: load.typo: unknown key (known here: type, stages, interval, sweep, num_workers, seed, concurrency, lora_traffic_split), got 1" \
  --config "$WORK/typo.json"
"$LOADGEN" --help >"$WORK/help" || fail "--help exit $?"
for f in --base-url --endpoint --model --header --allow-remote --num-workers --max-connections-per-worker \
         --request-rate --burstiness --num-prompts --duration --stage --stage-pause --sweep --sweep-stages \
         --sweep-max-rate --stage-duration --sweep-until-saturation --saturation-lag-ms --max-concurrency \
         --seed --dataset-name --dataset-path --trace-speedup --random-input-len --random-output-len \
         --random-range-ratio --random-len-dist --prefix-groups --prefix-prompts-per-group \
         --prefix-system-len --prefix-question-len --ignore-eos --no-stream --sim-stamps --client-cost \
         --request-timeout --drain-timeout --metric-percentiles --percentile-metrics --goodput \
         --save-result --result-dir --result-filename --save-detailed --certificate --force --quiet \
         --config; do
  # "  --flag" then a space (its argument or description) or the line's end
  grep -qE -- "^  $f( |\$)" "$WORK/help" || fail "--help has no line for $f"
done
pass "CLI validation and --help"
