#!/usr/bin/env bash
# The main job's worker count (scripts/lib/pick_k.sh, as scripts/main.sh
# calls it) on hand-written certificates, with loadgen's real dry run:
#   - with a cost model, each k's capacity is 1000 x safe rho / the dry run's
#     predicted rho at 1,000 req/s; the larger wins, a k above the cores
#     given is never asked;
#   - with none (calibrate's fit found none: the costs are null), the
#     reference workload's safe rates scaled by events per request decide,
#     and the sentence says so; this once ended the main job with "carries
#     none of this workload" although k=1 was certified;
#   - with nothing certified, it fails naming the certificate's figures;
#   - simserver and the workers are placed as the certificate measured k
#     (scripts/lib/placement.sh), and not at all without a placement.
set -euo pipefail
build=${RB_BUILD_DIR:?} src=${RB_SOURCE_DIR:?}
lg="$build/loadgen/loadgen"
work=$(mktemp -d /tmp/rb-pick.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=scripts/lib/pick_k.sh
source "$src/scripts/lib/pick_k.sh"

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cores=$(getconf _NPROCESSORS_ONLN)
# cert FILE COST_MODEL PER_K: a version-2 certificate for this host.
cert() {
  jq -n --arg cpu "$cpu" --argjson cores "$cores" --argjson cm "$2" --argjson pk "$3" '{rhobench_certificate: 2,
    host: {cpu_model: $cpu, cores_online: $cores}, budget_us: 100, cost_model: $cm,
    reference_workload: {random_output_len: 16, events_per_request: 18, rate_unit: "requests/s"},
    per_k: $pk}' >"$1"
}
work_args() { echo --certificate "$1" --random-input-len 256 --random-output-len 32 --seed 11; }

# 1. A cost model of 6 us a delivery and 2 us an event: a 32-token request
# is about 34 events (its tokens and two more), 272 us; at 1,000 req/s k=1
# is rho 0.272 (safe 0.5: 1,838 req/s) and k=2 0.136 each (safe 0.3: 2,205).
# k=4 (safe 0.9) is above the 2 cores given and never asked.
per_k='[{workers: 1, safe_rho: 0.5, safe_rate_per_worker: 1400, safe_total_rate: 1400},
        {workers: 2, safe_rho: 0.3, safe_rate_per_worker: 800, safe_total_rate: 1600},
        {workers: 4, safe_rho: 0.9, safe_rate_per_worker: 5000, safe_total_rate: 20000}]'
cert "$work/c1.json" '{"per_delivery_us": 6, "per_event_us": 2}' "$(jq -n "$per_k")"
# shellcheck disable=SC2046
pick_k "$work/c1.json" "$lg" 32 2 $(work_args "$work/c1.json") 2>"$work/err1" ||
  fail "with a cost model: $(cat "$work/err1")"
[ "$PICK_K" = 2 ] || fail "with a cost model: k=$PICK_K chosen, expected k=2 ($PICK_WHY)"
# the dry run's own prediction for k=2 at 1,000 req/s
# shellcheck disable=SC2046
pred=$("$lg" --base-url http://127.0.0.1:1 --num-workers 2 $(work_args "$work/c1.json") --request-rate 1000 \
  --duration 10 --dry-run 2>/dev/null | sed -n 's/^stage 0: predicted rho per worker \([0-9.]*\) .*/\1/p') || true
[ -n "$pred" ] || fail "the dry run printed no prediction"
jq -en --argjson p "$pred" '$p > 0.136 * 0.9 and $p < 0.136 * 1.1' >/dev/null ||
  fail "predicted rho $pred for k=2, expected about 0.136 (34 events x 8 us x 500/s)"
jq -en --argjson c "$PICK_CAP" --argjson p "$pred" '$c == (1000 * 0.3 / $p | floor)' >/dev/null ||
  fail "capacity $PICK_CAP, expected floor(1000 x 0.3 / $pred)"
grep -q "predicts the most headroom" <<<"$PICK_WHY" && grep -q "k=1 [0-9]* req/s, k=2 $PICK_CAP req/s" <<<"$PICK_WHY" &&
  ! grep -q "k=4" <<<"$PICK_WHY" || fail "the sentence: $PICK_WHY"

# 2. No cost model: k=1 1,400 x 18/34 = 741 req/s, k=2 1,600 x 18/34 = 847.
cert "$work/c2.json" '{"per_delivery_us": null, "per_event_us": null}' "$(jq -n "$per_k")"
# shellcheck disable=SC2046
pick_k "$work/c2.json" "$lg" 32 2 $(work_args "$work/c2.json") 2>"$work/err2" ||
  fail "without a cost model: $(cat "$work/err2")"
[ "$PICK_K" = 2 ] && [ "$PICK_CAP" = 847 ] || fail "without a cost model: k=$PICK_K at $PICK_CAP req/s, expected k=2 at 847"
grep -q "has no cost model" <<<"$PICK_WHY" && grep -q "k=1 741 req/s, k=2 847 req/s" <<<"$PICK_WHY" ||
  fail "the sentence: $PICK_WHY"
# a workload shorter than the reference's is scaled up by its events too
# (8 tokens and the same 2 extra events: 18/10)
# shellcheck disable=SC2046
pick_k "$work/c2.json" "$lg" 8 2 $(work_args "$work/c2.json") 2>/dev/null || fail "8 tokens without a cost model"
[ "$PICK_CAP" = 2880 ] || fail "8 tokens: $PICK_CAP req/s, expected 1,600 x 18/10 = 2,880"

# 3. Nothing certified: no k, and the figures are named.
cert "$work/c3.json" '{"per_delivery_us": 6, "per_event_us": 2}' \
  '[{"workers": 1, "safe_rho": null, "safe_rate_per_worker": null, "safe_total_rate": null}]'
rc=0
# shellcheck disable=SC2046
pick_k "$work/c3.json" "$lg" 32 2 $(work_args "$work/c3.json") 2>"$work/err3" || rc=$?
[ "$rc" -eq 1 ] && grep -q 'carries none of this workload for any k (certified: \[{"workers":1,"safe_rho":null}\])' "$work/err3" ||
  fail "nothing certified: rc $rc, $(cat "$work/err3")"
# 4. Where the main job (and bench_predict) run simserver and the workers for
# the chosen k (scripts/lib/placement.sh): as the certificate placed them.
# shellcheck source=scripts/lib/placement.sh
source "$src/scripts/lib/placement.sh"
jq '.calibration_load = {placement: {simulator_cpu: 0, worker_cpus: "1-3", shared_from_k: 4}}' \
  "$work/c1.json" >"$work/p.json"
placement_for "$work/p.json" 3
[ "$PLACE_SIM_WRAP" = "taskset -c 0 nice -n 10" ] && [ "${PLACE_WORKER_FLAGS[*]}" = "--worker-cpus 1-3" ] &&
  grep -q "simserver alone on CPU 0" <<<"$PLACE_WHY" || fail "k=3 with a spare CPU: '$PLACE_SIM_WRAP' '${PLACE_WORKER_FLAGS[*]}' ($PLACE_WHY)"
for c in "$work/p.json 4" "$work/c1.json 1"; do
  # shellcheck disable=SC2086
  placement_for $c
  [ -z "$PLACE_SIM_WRAP" ] && [ "${#PLACE_WORKER_FLAGS[@]}" = 0 ] && grep -q "share the CPUs" <<<"$PLACE_WHY" ||
    fail "placement_for $c: '$PLACE_SIM_WRAP' '${PLACE_WORKER_FLAGS[*]}' ($PLACE_WHY)"
done
# A k that calibrate measured again shared (placed, it certified nothing)
# runs shared although it has a CPU to spare; one said "apart" runs placed.
# (k=2 < shared_from_k 4 either way: the entry only ever takes a CPU away)
jq '.per_k[0].placement = "shared" | .per_k[1].placement = "apart"' "$work/p.json" >"$work/p2.json"
placement_for "$work/p2.json" 1
[ -z "$PLACE_SIM_WRAP" ] && [ "${#PLACE_WORKER_FLAGS[@]}" = 0 ] && grep -q "share the CPUs, as the certificate measured k=1" <<<"$PLACE_WHY" ||
  fail "k=1 measured shared: '$PLACE_SIM_WRAP' '${PLACE_WORKER_FLAGS[*]}' ($PLACE_WHY)"
placement_for "$work/p2.json" 2
[ "$PLACE_SIM_WRAP" = "taskset -c 0 nice -n 10" ] && [ "${PLACE_WORKER_FLAGS[*]}" = "--worker-cpus 1-3" ] ||
  fail "k=2 measured apart: '$PLACE_SIM_WRAP' '${PLACE_WORKER_FLAGS[*]}' ($PLACE_WHY)"
echo "PASS: the main job's k with and without a cost model, and with none certified; its placement"
