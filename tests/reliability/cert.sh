#!/usr/bin/env bash
# Forged and impossible certificates, and a huge one.
#   forged: every forged figure (safe_rho 1.5, 1e9, 1e999, 0; a negative or
#     infinite cost; both costs 0; budget_us 1e300 or 0; a negative R, E[S^2]
#     or E[S]) is refused by `loadgen --dry-run --certificate` and by a real
#     run with exit 2, naming the key, before any request is sent; the
#     untouched certificate is accepted (so the refusals are the keys').
#   huge: a 100,000-entry certificate (within the 4 MiB file bound) is read
#     in well under 1 s of CPU time (3 s in a sanitizer build), and one entry more is refused naming
#     per_k. A reader that indexes the list entry by entry walks it again
#     each time (quadratic: 30,000 entries took 6 s, 125,000 took 90 s);
#     the bound is on CPU seconds, not wall time, so a busy host does not
#     move it, and a quadratic read misses it by a factor of 50.
source "$(dirname "$0")/lib.sh"
case "${1:-}" in forged|huge) ;; *) fail "usage: cert.sh forged|huge" ;; esac

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
cores=$(nproc)
# cert FILE [JQ_EDIT]: a valid version 2 certificate for this host (2
# workers at safe rho 0.3; 12 us per delivery + 2 us per event), edited.
cert() {
  jq -n --arg cpu "$cpu" --argjson cores "$cores" '{rhobench_certificate: 2,
    host: {cpu_model: $cpu, cores_online: $cores}, budget_us: 100,
    cost_model: {per_delivery_us: 12, per_event_us: 2},
    reference_workload: {random_output_len: 16, events_per_request: 18, rate_unit: "requests/s"},
    per_k: [{workers: 2, safe_rho: 0.3, safe_rate_per_worker: null, safe_total_rate: null,
             transport_us: 20, mean_service_us: 14, second_moment_us2: 400, r_us: 14}]}' |
    jq "${2:-.}" >"$1"
}
plan=(--num-workers 2 --random-output-len 16 --ignore-eos --request-rate 100 --num-prompts 20 --quiet)

if [ "$1" = forged ]; then
  start_sim sim
  served() { curl -s "$SIM_URL/metrics" | awk '/^vllm:request_success_total/ {s += $2} END {print s + 0}'; }
  cert "$WORK/good.json"
  "$LOADGEN" --base-url "$SIM_URL" "${plan[@]}" --certificate "$WORK/good.json" --dry-run >/dev/null 2>"$WORK/good.err" ||
    fail "the untouched certificate was refused: exit $?: $(cat "$WORK/good.err")"
  # edit | the key the message must name
  cases=(
    '.per_k[0].safe_rho = 1.5|per_k[0].safe_rho'
    '.per_k[0].safe_rho = 1e9|per_k[0].safe_rho'
    '.per_k[0].safe_rho = 0|per_k[0].safe_rho'
    '.cost_model.per_event_us = -4|cost_model.per_event_us'
    '.cost_model.per_delivery_us = -1|cost_model.per_delivery_us'
    '.cost_model.per_delivery_us = 0 | .cost_model.per_event_us = 0|cost_model'
    '.budget_us = 1e300|budget_us'
    '.budget_us = 0|budget_us'
    '.per_k[0].r_us = -14|per_k[0].r_us'
    '.per_k[0].second_moment_us2 = -400|per_k[0].second_moment_us2'
    '.per_k[0].mean_service_us = -1|per_k[0].mean_service_us'
    '.per_k[0].safe_total_rate = -5|per_k[0].safe_total_rate'
  )
  n=0
  for c in "${cases[@]}"; do
    edit=${c%|*} key=${c##*|}
    cert "$WORK/bad.json" "$edit"
    for mode in dry-run run; do
      extra=()
      [ "$mode" = run ] || extra=(--dry-run)
      rc=0
      "$LOADGEN" --base-url "$SIM_URL" "${plan[@]}" --certificate "$WORK/bad.json" "${extra[@]}" \
        >/dev/null 2>"$WORK/bad.err" || rc=$?
      [ "$rc" -eq 2 ] || fail "$edit ($mode): exit $rc, expected 2: $(cat "$WORK/bad.err")"
      grep -qF -- "$key" "$WORK/bad.err" || fail "$edit ($mode): the message does not name $key: $(cat "$WORK/bad.err")"
    done
    n=$((n + 1))
  done
  # JSON cannot say infinity; cJSON reads 1e999 as one
  sed 's/"safe_rho": 0.3/"safe_rho": 1e999/' "$WORK/good.json" >"$WORK/inf.json"
  grep -q 1e999 "$WORK/inf.json" || fail "the fixture has no 1e999"
  rc=0
  "$LOADGEN" --base-url "$SIM_URL" "${plan[@]}" --certificate "$WORK/inf.json" --dry-run >/dev/null 2>"$WORK/inf.err" || rc=$?
  [ "$rc" -eq 2 ] && grep -qF "per_k[0].safe_rho" "$WORK/inf.err" || fail "safe_rho 1e999: exit $rc: $(cat "$WORK/inf.err")"
  [ "$(served)" -eq 0 ] || fail "$(served) requests were sent on a forged certificate"
  fig cert_forged_refused "$((n + 1))"
  pass "$((n + 1)) forged certificates refused with exit 2, naming the key; nothing sent"
  exit 0
fi

# huge: N entries (k = 1..N, safe_rho 0.3), as compact JSON
big() { python3 -c 'import json, sys
n = int(sys.argv[1]); c = json.load(open(sys.argv[2]))
c["per_k"] = [{"workers": k, "safe_rho": 0.3} for k in range(1, n + 1)]
json.dump(c, open(sys.argv[3], "w"), separators=(",", ":"))' "$1" "$WORK/one.json" "$2"; }
cert "$WORK/one.json"
big 100000 "$WORK/big.json"
big 100001 "$WORK/over.json"
size=$(stat -c %s "$WORK/big.json")
[ "$size" -le 4194304 ] || fail "the 100,000-entry certificate is $size bytes, past the 4 MiB bound"
# CPU seconds (user + system) of one dry run: bash's `time` of a child
cpu_s() {
  local TIMEFORMAT='%3U %3S' out
  out=$( { time "$LOADGEN" --base-url http://127.0.0.1:1 "${plan[@]}" --certificate "$1" --dry-run \
           >"$WORK/dry.out" 2>"$WORK/dry.err"; } 2>&1 ) || { echo "exit $?"; return; }
  awk '{printf "%.3f", $1 + $2}' <<<"$out"
}
t=$(cpu_s "$WORK/big.json")
[[ "$t" =~ ^[0-9.]+$ ]] || fail "the 100,000-entry certificate: $t: $(cat "$WORK/dry.err")"
grep -q "^certificate: within" "$WORK/dry.out" || fail "the 100,000-entry certificate was not used: $(cat "$WORK/dry.out" "$WORK/dry.err")"
# A sanitizer build runs about 3x slower: its bound is 3 s (a quadratic read
# still takes 50 s or more).
bound=1
[ "${RB_SANITIZE:-OFF}" = ON ] && bound=3
awk -v t="$t" -v b="$bound" 'BEGIN {exit !(t < b)}' || fail "reading 100,000 entries took $t s of CPU (bound $bound s)"
rc=0
"$LOADGEN" --base-url http://127.0.0.1:1 "${plan[@]}" --certificate "$WORK/over.json" --dry-run >/dev/null 2>"$WORK/over.err" || rc=$?
[ "$rc" -eq 2 ] && grep -qF "per_k: more than 100000 entries" "$WORK/over.err" ||
  fail "100,001 entries: exit $rc: $(cat "$WORK/over.err")"
fig cert_read_100k_cpu_s "$t"
pass "a 100,000-entry certificate ($size bytes) read in $t s of CPU; 100,001 entries refused"
