#!/usr/bin/env bash
# --dry-run prints the plan and sends nothing: a simserver that counts what it
# serves has served 0 after it, and with no server at all it still exits 0.
# The expected requests per stage are the seeded schedule's: a real run with
# the same flags dispatches exactly those counts. With a certificate, the
# predicted rho per worker of each stage is printed, and a plan beyond it is
# refused (exit 2) as the run would refuse it. Inputs the run would refuse
# (a missing trace) exit 2 naming them.
source "$(dirname "$0")/lib.sh"
start_sim sim
served() { curl -sf "$SIM_URL/metrics" | awk '/^vllm:request_success_total/ { s += $2 } END { print s + 0 }'; }
args=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 4 --random-output-len 4 --seed 11
      --stage 20:1s --stage 62.5:1s --stage-pause 0 --quiet --no-progress)
"$LOADGEN" "${args[@]}" --dry-run >"$WORK/plan.out" 2>"$WORK/plan.err" ||
  fail "dry run: exit $?: $(cat "$WORK/plan.err")"
[ "$(served)" -eq 0 ] || fail "the dry run sent $(served) requests"
grep -q "^dry run: the plan is valid; nothing was sent$" "$WORK/plan.out" || fail "no last line: $(cat "$WORK/plan.out")"
grep -q "^load mode: open, arrivals gamma(shape 1), seed 11$" "$WORK/plan.out" || fail "no load mode: $(cat "$WORK/plan.out")"
grep -q "^workers: 2 processes$" "$WORK/plan.out" || fail "no workers line"
e0=$(sed -n 's/^stage 0: rate 20 req\/s for 1s, expected \([0-9]*\) requests.*/\1/p' "$WORK/plan.out")
e1=$(sed -n 's/^stage 1: rate 62.5 req\/s for 1s, expected \([0-9]*\) requests.*/\1/p' "$WORK/plan.out")
[ -n "$e0" ] && [ -n "$e1" ] || fail "no expected counts: $(cat "$WORK/plan.out")"
tot=$(sed -n 's/^total: expected \([0-9]*\) requests (worker 0: \([0-9]*\), worker 1: \([0-9]*\)).*/\1 \2 \3/p' "$WORK/plan.out")
read -r t w0 w1 <<<"$tot"
[ "$t" -eq $((e0 + e1)) ] && [ "$t" -eq $((w0 + w1)) ] || fail "totals do not add up: $tot, stages $e0 + $e1"
grep -q "scheduled over 2.000s$" "$WORK/plan.out" || fail "no scheduled duration: $(grep ^total "$WORK/plan.out")"

# The same flags, run: the schedule's counts, exactly.
"$LOADGEN" "${args[@]}" --save-result --result-dir "$WORK" --result-filename real.json 2>"$WORK/real.err" ||
  fail "the real run: $(cat "$WORK/real.err")"
jq -e --argjson a "$e0" --argjson b "$e1" '.stages[0].dispatched == $a and .stages[1].dispatched == $b' \
  "$WORK/real.json" >/dev/null ||
  fail "dispatched $(jq -c '[.stages[].dispatched]' "$WORK/real.json"), the dry run expected [$e0,$e1]"
[ "$(served)" -eq $((e0 + e1)) ] || fail "served $(served) after the real run, expected $((e0 + e1))"
before=$(served)

# A certificate (version 2: 600 us per delivery + 200 us per event; 4 tokens
# + 2 events = 4.8 ms a request): 20/s over 2 workers is rho 0.048, 62.5/s
# 0.150 (within safe 0.3); 187.5/s 0.450 (beyond: refused).
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cores=$(getconf _NPROCESSORS_ONLN)
jq -n --arg cpu "$cpu" --argjson cores "$cores" '{rhobench_certificate: 2,
  host: {cpu_model: $cpu, cores_online: $cores}, budget_us: 100,
  cost_model: {per_delivery_us: 600, per_event_us: 200},
  reference_workload: {random_output_len: 16, events_per_request: 18, rate_unit: "requests/s"},
  per_k: [{workers: 2, safe_rho: 0.3, safe_rate_per_worker: null, safe_total_rate: null}]}' \
  >"$WORK/cert2.json"
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert2.json" --dry-run >"$WORK/cert.out" 2>"$WORK/cert.err" ||
  fail "dry run with a certificate: exit $?: $(cat "$WORK/cert.err")"
grep -q "^stage 0: predicted rho per worker 0.0480 (certified safe 0.3000)$" "$WORK/cert.out" &&
  grep -q "^stage 1: predicted rho per worker 0.1500 (certified safe 0.3000)$" "$WORK/cert.out" &&
  grep -q "^certificate: within: " "$WORK/cert.out" || fail "certificate lines: $(cat "$WORK/cert.out")"
rc=0
"$LOADGEN" "${args[@]}" --stage 187.5:1s --certificate "$WORK/cert2.json" --dry-run >"$WORK/beyond.out" \
  2>"$WORK/beyond.err" || rc=$?
[ "$rc" -eq 3 ] && grep -q "^loadgen: refused: planned 187.5 requests/s over 2 workers" "$WORK/beyond.err" &&
  grep -q "^stage 2: predicted rho per worker 0.4500" "$WORK/beyond.out" ||
  fail "beyond the certificate: exit $rc: $(cat "$WORK/beyond.err")"
[ "$(served)" -eq "$before" ] || fail "the dry runs with a certificate sent requests"

# No server at all; a closed loop's split over the workers.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$LOADGEN" --base-url "http://127.0.0.1:$port" --max-concurrency 4 --num-prompts 10 --num-workers 3 \
  --dry-run >"$WORK/closed.out" 2>"$WORK/closed.err" || fail "no server: exit $?: $(cat "$WORK/closed.err")"
grep -q "^load mode: closed$" "$WORK/closed.out" &&
  grep -q "max concurrency 4 (worker 0: 2, worker 1: 1, worker 2: 1)" "$WORK/closed.out" &&
  grep -q "^stage 0: closed loop, 10 requests (worker 0: 4, worker 1: 3, worker 2: 3)$" "$WORK/closed.out" ||
  fail "closed-loop plan: $(cat "$WORK/closed.out")"

# A shared-prefix plan names its pool as the run builds it: groups x prompts
# per group (the run's report says prompt_pool_size 15 for the same flags).
"$LOADGEN" --base-url "$SIM_URL" --dataset-name prefix --prefix-groups 3 --prefix-prompts-per-group 5 \
  --request-rate 10 --duration 1 --dry-run >"$WORK/prefix.out" 2>"$WORK/prefix.err" ||
  fail "prefix plan: exit $?: $(cat "$WORK/prefix.err")"
grep -q "; pool of 15 prompts$" "$WORK/prefix.out" || fail "prefix pool: $(grep ^dataset "$WORK/prefix.out")"

# What the run would refuse, the dry run refuses.
rc=0
"$LOADGEN" --base-url "$SIM_URL" --dataset-name trace --dataset-path "$WORK/none.csv" --dry-run \
  >/dev/null 2>"$WORK/trace.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "none.csv" "$WORK/trace.err" || fail "a missing trace: exit $rc: $(cat "$WORK/trace.err")"
[ "$(served)" -eq "$before" ] || fail "requests were sent"
pass "dry run: the plan, the schedule's counts, predicted rho, nothing sent"
