#!/usr/bin/env bash
# A run bounded by count has a hard deadline too: a worker that stops
# responding (SIGSTOP) is killed by the coordinator's watchdog after the
# deadline (last intended start + ceil(N / connections) request timeouts +
# the drain), and the report is written with the worker marked lost. Before
# count-bounded runs had a deadline, this run never ended.
source "$(dirname "$0")/lib.sh"
start_sim sim --inter-token-latency 1ms
launch_ns=$(date +%s%N)
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 40 --num-prompts 80 \
  --request-timeout 1s --drain-timeout 1s --random-input-len 8 --random-output-len 4 \
  --quiet --no-progress --save-result --result-dir "$WORK" --result-filename w.json 2>"$WORK/err" &
lg=$!
CHILDREN+=("$lg")
# Readiness: both workers forked and the first requests completed.
for _ in $(seq 1 200); do
  [ "$(pgrep -P "$lg" | wc -l)" -ge 2 ] && curl -s "$SIM_URL/metrics" | grep -q '^vllm:request_success_total{[^}]*} [1-9]' && break
  sleep 0.05
done
victim=$(pgrep -P "$lg" | tail -n 1)
[ -n "$victim" ] || fail "no worker process found"
kill -STOP "$victim"
start=$(date +%s)
rc=0
for _ in $(seq 1 300); do kill -0 "$lg" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$lg" 2>/dev/null; then kill -CONT "$victim"; fail "loadgen still running 30 s after a worker stopped"; fi
wait "$lg" || rc=$?
el_ms=$((($(date +%s%N) - launch_ns) / 1000000))
[ "$rc" -eq 1 ] || fail "exit code $rc, expected 1 (a worker was lost)"
# Never before the deadline: the run's start (after launch_ns) plus at least
# one request timeout (1 s) plus the watchdog's 2 s of grace; the last
# intended start (about 2 s in) only adds to it. A slow host only adds too.
[ "$el_ms" -ge 3000 ] || fail "the stopped worker was killed $el_ms ms after launch, before the deadline (>= 3000 ms)"
jq -e '.lost_workers | test("killed by signal 9")' "$WORK/w.json" >/dev/null || fail "lost_workers: $(jq .lost_workers "$WORK/w.json")"
sent_equals_done "$WORK/w.json"
echo "rel_watchdog: the stopped worker was killed after the deadline ($el_ms ms after launch, $(( $(date +%s) - start )) s after SIGSTOP), the report written"
