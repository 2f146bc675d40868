# The main job's worker count (sourced, not run): the certified k whose
# certificate carries the most of the job's workload.
#   pick_k CERT LOADGEN OUTPUT_LEN NPROC [workload flags...]
#       For each k of CERT with a certified safe rho and at most NPROC
#       workers, asks LOADGEN's dry run for a 1,000 req/s stage of the
#       workload (the flags, which name CERT too): it prints the predicted
#       utilisation per worker, proportional to the rate, so capacity_k =
#       1000 x safe / predicted. A certificate with no cost model (its fit
#       found none) predicts nothing: then capacity_k is its safe rate for
#       its reference workload scaled by events per request (the reference's
#       against OUTPUT_LEN plus the reference's extra events), which is what
#       the per-event term alone would say. Sets PICK_K, PICK_CAP (req/s) and
#       PICK_WHY (one sentence, for the user); returns 0, or 1 with the
#       reason on stderr when no k carries any of it.
# shellcheck shell=bash
# shellcheck disable=SC2034 # PICK_K, PICK_CAP and PICK_WHY are its results
pick_k() {
  local cert=$1 lg=$2 out_len=$3 nproc=$4
  shift 4
  PICK_K="" PICK_CAP=0 PICK_WHY=""
  local caps="" kk probe c how="predicted"
  for kk in $(jq -r --argjson n "$nproc" '.per_k[] | select(.safe_rho != null and .workers <= $n) | .workers' "$cert"); do
    # A dry run that the certificate refuses exits 3 after printing it: a
    # low certificate on a busy host must not end the job here.
    probe=$("$lg" --base-url http://127.0.0.1:1 --num-workers "$kk" "$@" --request-rate 1000 --duration 10 --dry-run 2>&1) || true
    c=$(sed -n 's/^stage 0: predicted rho per worker \([0-9.e+-]*\) (certified safe \([0-9.e+-]*\)).*/\1 \2/p' <<<"$probe" |
        jq -R 'split(" ") | map(tonumber) | if .[0] > 0 then 1000 * .[1] / .[0] | floor else 0 end')
    [ -n "$c" ] || continue
    caps+="${caps:+, }k=$kk $c req/s"
    if [ "$c" -gt "$PICK_CAP" ]; then PICK_K=$kk PICK_CAP=$c; fi
  done
  if [ -z "$PICK_K" ]; then
    # No cost model: the reference workload's certified rates, scaled.
    how="scaled"
    while read -r kk c; do
      [ "$c" -gt 0 ] || continue
      caps+="${caps:+, }k=$kk $c req/s"
      if [ "$c" -gt "$PICK_CAP" ]; then PICK_K=$kk PICK_CAP=$c; fi
    done < <(jq -r --argjson n "$nproc" --argjson len "$out_len" '
      (.reference_workload.events_per_request // null) as $e |
      (.reference_workload.random_output_len // null) as $l |
      .per_k[] | select(.safe_rho != null and .workers <= $n and (.safe_total_rate | type) == "number"
                        and ($e | type) == "number" and ($l | type) == "number" and $e > 0) |
      "\(.workers) \(.safe_total_rate * $e / ($len + ($e - $l)) | floor)"' "$cert")
  fi
  if [ -z "$PICK_K" ] || [ "$PICK_CAP" -le 0 ]; then
    echo "main: the certificate carries none of this workload for any k (certified: $(jq -c '[.per_k[] | {workers, safe_rho}]' "$cert"))" >&2
    return 1
  fi
  if [ "$how" = predicted ]; then
    PICK_WHY="k=$PICK_K worker processes: the certificate predicts the most headroom for this workload with it ($caps at the certified safe rho)"
  else
    local e l
    e=$(jq -r '.reference_workload.events_per_request | . * 10 | round / 10' "$cert")
    l=$(jq -r '.reference_workload.random_output_len' "$cert")
    PICK_WHY="k=$PICK_K worker processes: the certificate has no cost model (calibrate's fit found none), so its safe rates for its $l-token reference workload, scaled by events per request ($e against this workload's $out_len tokens and the same extra events), give the most with it ($caps)"
  fi
}
