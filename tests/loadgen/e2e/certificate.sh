#!/usr/bin/env bash
# A run beyond a certificate is refused (exit 3, before any request, the
# numbers in the message) and accepted with --force; one within it runs and
# its report carries the certificate's note. Version 2 certificates compare
# the plan's predicted utilisation with safe_rho, version 1 ones the request
# rate per worker; an unknown version is refused. An unwritable result folder
# is refused before the run.
source "$(dirname "$0")/lib.sh"
start_sim sim
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cores=$(getconf _NPROCESSORS_ONLN)
served() { curl -sf "$SIM_URL/metrics" | awk '/^vllm:request_success_total/ { s += $2 } END { print s + 0 }'; }
args=(--base-url "$SIM_URL" --num-workers 2 --num-prompts 50 --random-input-len 4 --random-output-len 4
      --quiet --no-progress)

# version 2: 600 us per delivery + 200 us per event; 4 tokens + 2 = 6 events,
# one per delivery: 4.8 ms a request; safe rho 0.3 for 2 workers.
# 62.5/s over 2 workers: rho 0.15 (50% of it); 187.5/s: rho 0.45 (150%).
jq -n --arg cpu "$cpu" --argjson cores "$cores" '{rhobench_certificate: 2,
  host: {cpu_model: $cpu, cores_online: $cores}, budget_us: 100,
  cost_model: {per_delivery_us: 600, per_event_us: 200},
  reference_workload: {random_output_len: 16, events_per_request: 18, rate_unit: "requests/s"},
  per_k: [{workers: 2, safe_rho: 0.3, safe_rate_per_worker: null, safe_total_rate: null}]}' \
  >"$WORK/cert2.json"
rc=0
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert2.json" --request-rate 187.5 2>"$WORK/refused2.err" || rc=$?
[ "$rc" -eq 3 ] || fail "predicted at 150% of safe_rho: exit $rc, expected 3"
want="loadgen: refused: planned 187.5 requests/s over 2 workers (4 tokens each) is predicted at rho 0.450 per worker (0.00 us per request + 600.00 us per delivery + 200.00 us per event, x1.00 for 2 workers), beyond the certified safe rho 0.300 for 2 workers (pass --force to run anyway)"
grep -qxF "$want" "$WORK/refused2.err" || fail "the refusal does not say it with the numbers: $(cat "$WORK/refused2.err")"
[ "$(served)" -eq 0 ] || fail "requests were sent before the refusal"
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert2.json" --request-rate 62.5 --save-result \
  --result-dir "$WORK/r2" --result-filename ok.json || fail "predicted at 50% of safe_rho: exit $?"
[ "$(served)" -eq 50 ] || fail "served $(served), expected 50"
jq -e '.certificate | test("predicted at rho 0.150 per worker .*within the certified safe rho 0.300")' \
  "$WORK/r2/ok.json" > /dev/null || fail "the report lacks the certificate's note: $(jq -c .certificate "$WORK/r2/ok.json")"
# each stage's predicted rho beside its measured one
jq -e '.certificate_check.stages | length == 1 and (.[0].predicted_rho - 0.15 | fabs) < 1e-9
       and (.[0].measured_rho | type) == "number" and .[0].measured_rho >= 0
       and (.[0].measured_over_predicted - .[0].measured_rho / .[0].predicted_rho | fabs) < 1e-9' \
  "$WORK/r2/ok.json" > /dev/null || fail "certificate_check.stages: $(jq -c .certificate_check "$WORK/r2/ok.json")"
jq -e '.certificate_check.busy_per_request_us == 4800 and .certificate_check.stages[0].predicted_from == "planned rate"' \
  "$WORK/r2/ok.json" > /dev/null || fail "the model's busy time per request: $(jq -c .certificate_check "$WORK/r2/ok.json")"

# version 1: requests/s per worker of calibrate's workload
jq -n --arg cpu "$cpu" --argjson cores "$cores" '{host: {cpu_model: $cpu, cores_online: $cores},
  budget_us: 100, per_k: [{workers: 2, safe_rho: 0.3, safe_rate_per_worker: 100, safe_total_rate: 200}]}' \
  >"$WORK/cert.json"
args1=("${args[@]}" --certificate "$WORK/cert.json")
rc=0
"$LOADGEN" "${args1[@]}" --request-rate 500 2>"$WORK/refused.err" || rc=$?
[ "$rc" -eq 3 ] || fail "beyond the certificate: exit $rc, expected 3"
grep -qF "planned 250.0 requests/s per worker (500.0 over 2 workers) exceeds the certified 100.0 requests/s per worker for 2 workers" \
  "$WORK/refused.err" || fail "the refusal does not give the numbers: $(cat "$WORK/refused.err")"
[ "$(served)" -eq 50 ] || fail "requests were sent before the refusal"
"$LOADGEN" "${args1[@]}" --request-rate 500 --force 2>/dev/null || fail "--force: exit $?"
"$LOADGEN" "${args1[@]}" --request-rate 150 || fail "within the certificate: exit $?"
[ "$(served)" -eq 150 ] || fail "served $(served), expected 150"

# a format version this loadgen does not read: exit 2, naming it
jq '.rhobench_certificate = 7' "$WORK/cert2.json" > "$WORK/cert7.json"
rc=0
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert7.json" --request-rate 10 2>"$WORK/v7.err" || rc=$?
[ "$rc" -eq 2 ] || fail "an unknown certificate version: exit $rc, expected 2"
grep -qF "format version 7 is not one this loadgen reads (1 or 2)" "$WORK/v7.err" \
  || fail "the message does not name the version: $(cat "$WORK/v7.err")"

# unwritable result folder (its parent is a file): exit 2, nothing sent
touch "$WORK/afile"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-prompts 10 --quiet --save-result \
  --result-dir "$WORK/afile/sub" 2>"$WORK/dir.err" || rc=$?
[ "$rc" -eq 2 ] || fail "unwritable result dir: exit $rc, expected 2"
grep -q -- "--result-dir" "$WORK/dir.err" || fail "message does not name --result-dir"
[ "$(served)" -eq 150 ] || fail "requests were sent despite the unwritable folder"
# a closed loop has no planned rate: its stage is predicted from the rate it
# completed per worker over the workers' loop windows: 4.8 ms x completed /
# the windows' sum, each window a worker's callbacks over its callback rate.
# (Not the send window: on a slow host the workers' 50 requests, a few ms
# each, need not overlap, and throughput / 2 is then half a worker's rate.)
"$LOADGEN" "${args[@]}" --certificate "$WORK/cert2.json" --max-concurrency 4 --save-result \
  --result-dir "$WORK/r2" --result-filename closed.json || fail "closed loop with a certificate: exit $?"
jq -e '.certificate_check.stages[0] as $s
       | [.client_bias.workers[] | .callbacks / .callback_rate_per_s] as $w
       | ($w | length) == 2 and ($w | all(. > 0))
       and $s.predicted_from == "completed rate" and .completed == 50
       and ($s.predicted_rho / (0.0048 * .completed / ($w | add)) - 1 | fabs) < 0.001' \
  "$WORK/r2/closed.json" > /dev/null || fail "closed loop's predicted rho: $(jq -c '[.certificate_check, .completed, .client_bias.workers]' "$WORK/r2/closed.json")"
pass "certificate v1/v2 refuse/force, predicted rho, unknown version, unwritable result folder"
