#!/usr/bin/env bash
# SIGINT mid-run: a partial report with interrupted: true, and exit 130.
source "$(dirname "$0")/lib.sh"
start_sim sim --inter-token-latency 2ms
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --duration 20s \
  --random-input-len 8 --random-output-len 8 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename int.json &
lg=$!
CHILDREN+=("$lg")
wait_sim vllm:request_success_total 30 30 # mid-run: 30 requests done
kill -INT "$lg"
rc=0
wait "$lg" || rc=$?
[ "$rc" -eq 130 ] || fail "exit code $rc, expected 130"
out="$WORK/int.json"
[ "$(jq -r .interrupted "$out")" = true ] || fail "interrupted is not true"
sent_equals_done "$out"
d=$(jnum "$out" .dispatched)
[ "$d" -gt 20 ] && [ "$d" -lt 1000 ] || fail "dispatched $d: the run did not stop early"
pass "SIGINT -> partial report, exit 130"

# Requests still in flight when the drain timeout runs out are counted as
# cancelled, and the run ends within it.
start_sim slow --inter-token-latency 1s
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 50 --duration 20s --drain-timeout 1s \
  --random-input-len 8 --random-output-len 30 --quiet --no-progress --save-result \
  --result-dir "$WORK" --result-filename drain.json &
lg=$!
CHILDREN+=("$lg")
wait_sim vllm:num_requests_running 10 30 # 10 streams in flight (30 s each)
kill -INT "$lg"
t0=$(date +%s%N)
rc=0
wait "$lg" || rc=$?
el_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -eq 130 ] || fail "drain: exit code $rc"
# Without the drain timeout the streams (30 tokens 1 s apart) would take
# 30 s; with it the run ends about 1 s after the signal, plus writing the
# report: 15 s is a bound a slow host does not reach, and a run that waited
# for its streams does.
[ "$el_ms" -lt 15000 ] || fail "drain: took $el_ms ms with --drain-timeout 1s"
out="$WORK/drain.json"
sent_equals_done "$out"
[ "$(jnum "$out" .dispatched)" -ge 10 ] || fail "drain: only $(jnum "$out" .dispatched) dispatched: nothing was in flight"
[ "$(jnum "$out" .failures_by_class.cancelled)" -eq "$(jnum "$out" .dispatched)" ] ||
  fail "drain: $(jq -c .failures_by_class "$out") of $(jnum "$out" .dispatched)"
pass "drain timeout cancels what is left"
