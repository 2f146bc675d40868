#!/usr/bin/env bash
# vLLM's ramp-up against simserver: --ramp-up-strategy linear from 20 to 200
# requests/s over 600 requests (no jitter on the server: TTFT 0, ITL 0).
#  - the intended times of the records are the ramp's (the schedule is fixed
#    by the seed, so this does not depend on the host): the quarters' mean
#    gaps shrink in order, the first at least 4x the last (the plan: 4.4x),
#    and each is the plan's mean of 1 / r(j) over its quarter within 25%
#    (150 exponential gaps: 3 standard errors);
#  - an exponential ramp at a constant rate (--burstiness inf) puts request
#    j exactly at the sum of 1 / r(i) for i = 1..j (within 1 us);
#  - the report carries vLLM's ramp keys, and all 600 complete;
#  - bad combinations exit 2, naming the flag.
source "$(dirname "$0")/lib.sh"
start_sim sim --time-to-first-token 0 --inter-token-latency 0
common=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 8 --random-output-len 4 --seed 4
  --quiet --no-progress --save-result --save-detailed --result-dir "$WORK")
"$LOADGEN" "${common[@]}" --ramp-up-strategy linear --ramp-up-start-rps 20 --ramp-up-end-rps 200 \
  --num-prompts 600 --result-filename lin.json 2>"$WORK/lin.err" || fail "linear ramp: exit $?: $(cat "$WORK/lin.err")"
sent_equals_done "$WORK/lin.json"
jq -e '.completed == 600 and .failed == 0 and .ramp_up_strategy == "linear"
       and .ramp_up_start_rps == 20 and .ramp_up_end_rps == 200' "$WORK/lin.json" >/dev/null ||
  fail "linear ramp report: $(jq -c '{completed, failed, ramp_up_strategy, ramp_up_start_rps, ramp_up_end_rps}' "$WORK/lin.json")"
# the quarters' mean gaps, from the intended times, against the plan's
quarters=$(jq -s -r 'sort_by(.intended_ns) | [.[].intended_ns] as $t
  | [range(1; length)] | map({q: ((. * 4 / ($t | length)) | floor), g: ($t[.] - $t[. - 1])})
  | group_by(.q) | map((map(.g) | add) / length / 1e6) | @tsv' "$WORK/lin.jsonl")
read -r q0 q1 q2 q3 <<<"$quarters"
echo "linear ramp 20 -> 200/s: mean intended gap per quarter (ms): $q0 $q1 $q2 $q3"
awk -v a="$q0" -v b="$q1" -v c="$q2" -v d="$q3" 'BEGIN { exit !(a > b && b > c && c > d && a / d >= 4) }' ||
  fail "the ramp's gaps do not shrink as planned: $quarters"
# the plan's quarter means of 1 / r(j), in ms: within 25% each (150 gaps)
plan=$(awk 'BEGIN { n = 600; for (j = 1; j < n; j++) { q = int(j * 4 / n); s[q] += 1000 / (20 + 180 * j / (n - 1)); c[q]++ }
  for (q = 0; q < 4; q++) printf "%s%.4f", (q ? " " : ""), s[q] / c[q] }')
read -r p0 p1 p2 p3 <<<"$plan"
for i in 0 1 2 3; do
  eval "m=\$q$i p=\$p$i"
  # shellcheck disable=SC2154 # set by eval
  awk -v m="$m" -v p="$p" 'BEGIN { exit !(m / p > 0.75 && m / p < 1.25) }' ||
    fail "quarter $i: mean gap $m ms, planned $p ms"
done

# exponential at a constant rate: exact times
"$LOADGEN" "${common[@]}" --ramp-up-strategy exponential --ramp-up-start-rps 50 --ramp-up-end-rps 400 \
  --burstiness inf --num-prompts 40 --result-filename exp.json 2>"$WORK/exp.err" ||
  fail "exponential ramp: exit $?: $(cat "$WORK/exp.err")"
jq -e '.completed == 40 and .ramp_up_strategy == "exponential"' "$WORK/exp.json" >/dev/null ||
  fail "exponential ramp report: $(jq -c '{completed, ramp_up_strategy}' "$WORK/exp.json")"
off=$(jq -s -r 'sort_by(.intended_ns) | (.[0].intended_ns) as $t0 | [.[].intended_ns - $t0]
  | to_entries | map(.value - (if .key == 0 then 0 else ([range(1; .key + 1)]
      | map(1e9 / (50 * pow(8; . / 39))) | add) end) | fabs) | max' "$WORK/exp.jsonl")
awk -v o="$off" 'BEGIN { exit !(o <= 1000) }' || fail "exponential ramp: an intended time $off ns off the plan"
echo "exponential ramp 50 -> 400/s, constant: the 40 intended times within $off ns of the plan"

refuse() {
  local what=$1 needle=$2 rc=0
  shift 2
  "$LOADGEN" --base-url "$SIM_URL" --dry-run "$@" >"$WORK/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && grep -q -- "$needle" "$WORK/bad.out" ||
    fail "$what: exit $rc, expected 2 naming '$needle': $(cat "$WORK/bad.out")"
}
refuse "a ramp with --request-rate" "--ramp-up-strategy: cannot be combined with --request-rate" \
  --ramp-up-strategy linear --ramp-up-start-rps 1 --ramp-up-end-rps 2 --request-rate 5 --num-prompts 5
refuse "a ramp without its rates" "--ramp-up-strategy: needs --ramp-up-start-rps and --ramp-up-end-rps" \
  --ramp-up-strategy linear --num-prompts 5
refuse "rates without a strategy" "--ramp-up-end-rps: needs --ramp-up-strategy" --ramp-up-end-rps 3 --num-prompts 5
refuse "a ramp by duration" "--ramp-up-strategy: needs --num-prompts" \
  --ramp-up-strategy linear --ramp-up-start-rps 1 --ramp-up-end-rps 2 --duration 5
refuse "a ramp and a sweep" "--ramp-up-strategy: cannot be combined with --stage, --sweep" \
  --ramp-up-strategy linear --ramp-up-start-rps 1 --ramp-up-end-rps 2 --sweep linear --sweep-stages 2 \
  --sweep-max-rate 10 --stage-duration 1
refuse "a zero start rate" "--ramp-up-start-rps: must be a rate > 0" \
  --ramp-up-strategy exponential --ramp-up-start-rps 0 --ramp-up-end-rps 2 --num-prompts 5
pass "vLLM's ramp-up: the intended times follow the ramp (quarters $quarters ms), exact at a constant rate, refused where it cannot apply"
