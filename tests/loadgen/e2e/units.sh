#!/usr/bin/env bash
# A plain number in a run-length flag is seconds: `--duration 2` sends for
# about 2 s (measured on the schedule's intended times, which do not depend
# on the host's speed), `--help` says so, and a request timeout under 1 ms
# (curl's "no timeout") is refused.
source "$(dirname "$0")/lib.sh"
start_sim sim
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --request-rate 50 --burstiness inf --duration 2 \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --result-dir "$WORK" \
  --result-filename d2.json 2>"$WORK/d2.err" || fail "--duration 2 exited $?: $(cat "$WORK/d2.err")"
# constant gaps of 20 ms from t=0 over 2 s: 100 arrivals spanning 1.98 s
in_range "$(jnum "$WORK/d2.json" .intended_span_s)" 1.9 2.0 "--duration 2: intended span (s)"
in_range "$(jnum "$WORK/d2.json" .dispatched)" 99 101 "--duration 2: dispatched"
jq -e '.duration_s == .duration and .send_window_s == .send_window and .send_window_s >= 2' "$WORK/d2.json" >/dev/null ||
  fail "durations without their unit in the key: $(jq -c '{duration, duration_s, send_window, send_window_s}' "$WORK/d2.json")"
# a stage's plain duration, and a config's, are seconds too
"$LOADGEN" --base-url "$SIM_URL" --num-workers 1 --burstiness inf --stage 40:1 --stage 20:1 \
  --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result --result-dir "$WORK" \
  --result-filename st.json 2>"$WORK/st.err" || fail "--stage 40:1 exited $?: $(cat "$WORK/st.err")"
in_range "$(jnum "$WORK/st.json" '.stages[0].intended_span_s')" 0.9 1.0 "--stage 40:1: span (s)"
in_range "$(jnum "$WORK/st.json" '.stages[1].dispatched')" 19 21 "--stage 20:1: dispatched"
"$LOADGEN" --help >"$WORK/help"
grep -q "a plain number is seconds" "$WORK/help" || fail "--help does not say a plain number is seconds"
for t in 500us 0.0005 999999ns; do
  rc=0
  "$LOADGEN" --base-url "$SIM_URL" --request-timeout "$t" --num-prompts 1 --quiet >"$WORK/o" 2>"$WORK/e" || rc=$?
  [ "$rc" -eq 2 ] || fail "--request-timeout $t: exit $rc, expected 2"
  grep -q -- "--request-timeout: must be at least 1ms" "$WORK/e" || fail "--request-timeout $t: '$(cat "$WORK/e")'"
done
pass "units: plain durations are seconds"
