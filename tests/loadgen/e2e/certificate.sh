#!/usr/bin/env bash
# A run beyond a certificate is refused (exit 2, before any request) and
# accepted with --force; an unwritable result folder is refused before the run.
source "$(dirname "$0")/lib.sh"
start_sim sim
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cores=$(getconf _NPROCESSORS_ONLN)
jq -n --arg cpu "$cpu" --argjson cores "$cores" '{host: {cpu_model: $cpu, cores_online: $cores},
  budget_us: 100, per_k: [{workers: 2, safe_rho: 0.3, safe_rate_per_worker: 100, safe_total_rate: 200}]}' \
  >"$WORK/cert.json"
args=(--base-url "$SIM_URL" --num-workers 2 --num-prompts 50 --random-input-len 4 --random-output-len 4
      --quiet --no-progress --certificate "$WORK/cert.json")
served() { curl -sf "$SIM_URL/metrics" | awk '/^vllm:request_success_total/ { s += $2 } END { print s + 0 }'; }
rc=0
"$LOADGEN" "${args[@]}" --request-rate 500 2>"$WORK/refused.err" || rc=$?
[ "$rc" -eq 2 ] || fail "beyond the certificate: exit $rc, expected 2"
grep -q "250.0" "$WORK/refused.err" && grep -q "100.0" "$WORK/refused.err" ||
  fail "the refusal does not give the numbers: $(cat "$WORK/refused.err")"
[ "$(served)" -eq 0 ] || fail "requests were sent before the refusal"
"$LOADGEN" "${args[@]}" --request-rate 500 --force 2>/dev/null || fail "--force: exit $?"
"$LOADGEN" "${args[@]}" --request-rate 150 || fail "within the certificate: exit $?"
[ "$(served)" -eq 100 ] || fail "served $(served), expected 100"
# unwritable result folder (its parent is a file): exit 2, nothing sent
touch "$WORK/afile"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --num-prompts 10 --quiet --save-result \
  --result-dir "$WORK/afile/sub" 2>"$WORK/dir.err" || rc=$?
[ "$rc" -eq 2 ] || fail "unwritable result dir: exit $rc, expected 2"
grep -q -- "--result-dir" "$WORK/dir.err" || fail "message does not name --result-dir"
[ "$(served)" -eq 100 ] || fail "requests were sent despite the unwritable folder"
pass "certificate refuse/force, unwritable result folder"
