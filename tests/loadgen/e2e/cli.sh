#!/usr/bin/env bash
# Invalid values exit 2 naming the flag (or config key); --help is complete.
source "$(dirname "$0")/lib.sh"
expect2() {
  local needle=$1; shift
  local rc=0
  "$LOADGEN" "$@" >"$WORK/o" 2>"$WORK/e" || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*': exit $rc, expected 2"
  grep -q -- "$needle" "$WORK/e" || fail "'$*': message '$(cat "$WORK/e")' lacks '$needle'"
}
expect2 --request-rate --request-rate -5
expect2 --num-workers --num-workers lots
expect2 --base-url --base-url http://10.0.0.1:8000
expect2 --goodput --goodput speed:5
expect2 --stage --stage 100
echo '{"load": {"stages": [{"rate": -5, "duration": 10}]}}' >"$WORK/bad.json"
expect2 "load.stages\[0\].rate" --config "$WORK/bad.json"
echo '{"load": {"typo": 1}}' >"$WORK/typo.json"
expect2 "typo" --config "$WORK/typo.json"
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
  grep -q -- "$f" "$WORK/help" || fail "--help does not mention $f"
done
pass "CLI validation and --help"
