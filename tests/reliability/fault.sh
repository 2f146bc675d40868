#!/usr/bin/env bash
# Fault matrix, end to end: one simserver fault type (or "mix": all of them
# at 10%) under a bounded loadgen run. loadgen must finish in time, account
# for every request (dispatched = completed + failed), and count each failure
# class exactly as often as the simulator says it injected the fault.
# Usage: fault.sh TYPE|mix [extra loadgen flags...]
# REL_SIM_FLAGS: extra simserver flags (e.g. --workers 2: the counters are
# then the sum of the workers' shared-memory slots).
source "$(dirname "$0")/lib.sh"
what=${1:?usage: fault.sh TYPE|mix [loadgen flags...]}
shift

# simserver type -> loadgen class. connection_reset arrives as an RST before
# any response byte on an established connection: loadgen says "reset" (it
# refuses curl's silent re-send, see loadgen/README.md), never "connect".
declare -A CLASS=([rate_limit]=http_429 [server_error]=http_500 [unavailable]=http_503
  [invalid_request]=http_400 [invalid_api_key]=http_401 [connection_reset]=reset
  [midstream_drop]=midstream [malformed_chunk]=malformed [stall]=timeout)
if [ "$what" = mix ]; then
  types=(rate_limit server_error unavailable invalid_request invalid_api_key connection_reset
    midstream_drop malformed_chunk stall)
  start_sim sim --failure-injection-rate 10 --inter-token-latency 1ms --seed 11 ${REL_SIM_FLAGS:-}
  n=400 rate=400
else
  [ -n "${CLASS[$what]:-}" ] || fail "unknown fault type '$what'"
  types=("$what")
  # Half the requests faulty, so the healthy path runs beside the fault.
  start_sim sim --failure-injection-rate 50 --failure-types "$what" --inter-token-latency 1ms --seed 5 ${REL_SIM_FLAGS:-}
  n=200 rate=300
fi

out="$WORK/r.json"
t0=$(date +%s%N)
rc=0
# 200-400 requests over ~1 s, each bounded by 2 s: 15 s is a hang.
timeout -s KILL 15 "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate "$rate" \
  --num-prompts "$n" --random-input-len 8 --random-output-len 8 --request-timeout 2s \
  --quiet --no-progress --save-result --result-dir "$WORK" --result-filename r.json "$@" \
  2>"$WORK/lg.err" || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -ne 137 ] || fail "loadgen hung (killed after 15 s)"
[ "$rc" -eq 0 ] || { cat "$WORK/lg.err" >&2; fail "loadgen exited $rc"; }
! grep -q 'Sanitizer\|runtime error' "$WORK/lg.err" || { cat "$WORK/lg.err" >&2; fail "sanitizer report"; }
[ -s "$out" ] || fail "no report"
accounted "$out"
d=$(jnum "$out" .dispatched)
[ "$d" -eq "$n" ] || fail "dispatched $d of $n requests"
[ "$(jq -r .interrupted "$out")" = false ] || fail "interrupted is not false"

metrics_to "$WORK/metrics"
total=0 malformed=0 line=""
for t in "${types[@]}"; do
  c=${CLASS[$t]}
  s=$(sim_fault "$WORK/metrics" "$t")
  o=$(jq -r --arg c "$c" '.failures_by_class[$c] // 0' "$out")
  [ "$s" -eq "$o" ] || fail "$t: simserver injected $s, loadgen counted $c = $o ($(jq -c .failures_by_class "$out"))"
  [ "$s" -gt 0 ] || fail "$t: not one fault injected"
  total=$((total + s))
  [ "$t" = malformed_chunk ] && malformed=$s
  line="$line $t=$s"
done
f=$(jnum "$out" .failed)
[ "$f" -eq "$total" ] || fail "loadgen failed $f, simserver injected $total: failures beyond the faults ($(jq -c .failures_by_class "$out"))"
# The server's view: every request either finished (a malformed chunk still
# ends with [DONE], so it counts as finished there) or was cut by a fault.
succ=$(sim_success "$WORK/metrics")
[ $((succ + total - malformed)) -eq "$d" ] ||
  fail "simserver finished $succ and faulted $total (malformed $malformed), loadgen dispatched $d"
[ "$(jnum "$out" .completed)" -eq $((succ - malformed)) ] || fail "completed $(jnum "$out" .completed), simserver finished $succ - $malformed malformed"
# No hang: the 15 s KILL above is the bound (a sanity bound: the schedule is
# ~1 s plus at most the 2 s request timeout); the wall time is a figure.
stop_sim sim
fig "fault=$what requests=$d completed=$(jnum "$out" .completed) failed=$f loadgen=$(jq -c .failures_by_class "$out") simserver:$line wall_ms=$el_ms"
pass "fault $what${*:+ ($*)}: $d requests, $f failed, every class equal to simserver's counter"
